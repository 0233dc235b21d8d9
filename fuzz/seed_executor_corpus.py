#!/usr/bin/env python3
"""Seeds the executor fuzzer's corpus (fuzz/executor_fuzzer.cc): one file per
statement of the test suite — the parser's declarative cases and every CQL
string the driver tests send — and one per line of fuzz/executor_seeds.cql,
plus a few multi-statement files and the inputs that once crashed the server
(fuzz/regressions/executor). Usage: seed_executor_corpus.py ROOT DIR"""
import hashlib
import os
import re
import sys

root, out = sys.argv[1], sys.argv[2]
os.makedirs(out, exist_ok=True)
statements = []
with open(os.path.join(root, "tests", "cql", "parser_cases.test")) as f:
    for line in f:
        line = line.strip()
        if line.startswith("ok:"):
            statements.append(line[3:].strip())
        elif line.startswith("error") and ":" in line:
            statements.append(line.split(":", 1)[1].strip())
keyword = re.compile(r"^(SELECT|INSERT|UPDATE|DELETE|CREATE|ALTER|DROP|TRUNCATE|BEGIN|USE)\b", re.I)
drivers = os.path.join(root, "tests", "drivers")
for name in sorted(os.listdir(drivers)):
    if name.endswith(".py"):
        with open(os.path.join(drivers, name)) as f:
            for s in re.findall(r'"((?:[^"\\\n]|\\.)*)"', f.read()):
                if keyword.match(s.strip()) and "%" not in s:
                    statements.append(s.strip())
with open(os.path.join(root, "fuzz", "executor_seeds.cql")) as f:
    seeds = [line.rstrip("\n") for line in f if line.strip()]
statements += seeds
# Every comparison operator on every type (issue 28: a slice on a duration once
# ended the process): a filter and an IF condition per column of every_type,
# and the collection operators on fz.coll.
every_type = {"k": "1", "c": "'a'", "a": "'x'", "b": "9223372036854775807", "bl": "0xff", "bo": "true",
              "d": "'2020-02-29'", "de": "1.5e-300", "db": "1e308", "du": "1h2m3s", "f": "3.4e38", "i": "'::1'",
              "n": "-2147483648", "s": "32767", "t": "'text'", "tm": "'23:59:59.999999999'",
              "ts": "'1970-01-01 00:00:00+0000'", "tu": "now()", "ti": "-128", "u": "uuid()", "vc": "'v'",
              "vi": "-123456789012345678901234567890"}
for col, literal in sorted(every_type.items()):
    for op in ("=", "!=", "<", "<=", ">", ">="):
        statements.append("SELECT * FROM every_type WHERE %s %s %s ALLOW FILTERING" % (col, op, literal))
        if col not in ("k", "c"):
            statements.append("UPDATE every_type SET n = 1 WHERE k = 1 AND c = 'a' IF %s %s %s" % (col, op, literal))
    statements.append("SELECT * FROM every_type WHERE %s IN (%s, %s) ALLOW FILTERING" % (col, literal, literal))
    statements.append("SELECT * FROM every_type WHERE %s IS NOT NULL ALLOW FILTERING" % col)
for col, element in (("l", "1"), ("s", "'a'"), ("m", "1"), ("fl", "1"), ("fm", "'a'"), ("nested", "{'q'}")):
    statements.append("SELECT * FROM coll WHERE %s CONTAINS %s ALLOW FILTERING" % (col, element))
for col, key in (("m", "'x'"), ("fm", "1"), ("nested", "1")):
    statements.append("SELECT * FROM coll WHERE %s CONTAINS KEY %s ALLOW FILTERING" % (col, key))
    for op in ("=", "<", ">="):
        statements.append("SELECT * FROM coll WHERE %s[%s] %s %s ALLOW FILTERING" % (col, key, op, "1"))
for s in statements:
    name = hashlib.sha1(s.encode()).hexdigest()[:16]
    with open(os.path.join(out, name), "w") as f:
        f.write(s)
# Sequences that build state first, then use it.
for i in range(0, len(seeds), 6):
    chunk = "\n".join(seeds[i:i + 6])
    with open(os.path.join(out, "seq_%03d" % i), "w") as f:
        f.write(chunk)
# Inputs that once crashed the server (fuzz/regressions/executor), byte for byte.
regressions = os.path.join(root, "fuzz", "regressions", "executor")
for name in sorted(os.listdir(regressions)):
    with open(os.path.join(regressions, name), "rb") as src, open(os.path.join(out, "regression_" + name), "wb") as dst:
        dst.write(src.read())
print("seeded %d statements into %s" % (len(statements), out))
