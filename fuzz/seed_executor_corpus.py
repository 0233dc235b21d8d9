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
