#!/usr/bin/python3
"""Decodes Tessera's response bodies (printed by the response_vectors binary)
with the DataStax Python driver (Debian python3-cassandra) and checks what the
driver sees. Usage: check_responses_with_driver.py PATH_TO_response_vectors"""
import subprocess
import sys

from cassandra import AlreadyExists
from cassandra.policies import WriteType
from cassandra.protocol import ProtocolHandler, ResultMessage

out = subprocess.run([sys.argv[1]], check=True, capture_output=True, text=True).stdout
messages = {}
for line in out.splitlines():
    name, opcode, body = line.split("\t")
    messages[name] = ProtocolHandler.decode_message(4, {}, 0, 0, int(opcode), bytes.fromhex(body), None, None)

failures = []


def check(cond, what):
    if not cond:
        failures.append(what)


check(messages["supported"].options["COMPRESSION"] == ["lz4", "snappy"], "supported")
check(messages["supported"].cql_versions == ["3.4.5"], "cql version")
exists = messages["already_exists"]
check(exists.code == 0x2400 and exists.info == {"keyspace": "ks", "table": "t"}, "already exists: %r" % exists.info)
check(isinstance(exists.to_exception(), AlreadyExists), "AlreadyExists exception")
check(messages["unprepared"].info == b"\xab\xcd", "unprepared id: %r" % messages["unprepared"].info)
check(messages["syntax"].code == 0x2000 and "no viable" in messages["syntax"].message, "syntax")
wt = messages["write_timeout"].info
check(wt["write_type"] == WriteType.BATCH_LOG and wt["required_responses"] == 2, "write timeout: %r" % wt)
check(messages["void"].kind == ResultMessage.__dict__.get("KIND_VOID", 1), "void")
check(messages["set_keyspace"].new_keyspace == "ks", "set keyspace")

rows = messages["rows"]
check(rows.column_names == ["k", "v", "tags", "pair"], "rows columns %r" % rows.column_names)
check(rows.paging_state == b"\x01\x02", "paging state %r" % rows.paging_state)
check(len(rows.parsed_rows) == 2, "row count")
first = rows.parsed_rows[0]
check(first[0] == 1 and first[1] == "one", "row 1 scalars %r" % (first,))
check(dict(first[2]) == {"a": [7]}, "row 1 map %r" % (first[2],))
check(tuple(first[3]) == (42, True), "row 1 tuple %r" % (first[3],))
check(rows.parsed_rows[1][1] is None, "row 2 null")
check(rows.column_types[2].cql_parameterized_type() == "frozen<map<text, frozen<list<int>>>>"
      or "map" in rows.column_types[2].cql_parameterized_type(), "map type")
check(messages["rows_mixed_tables"].parsed_rows == [("local", "x")] or
      [tuple(r) for r in messages["rows_mixed_tables"].parsed_rows] == [("local", "x")], "mixed tables")

prepared = messages["prepared"]
check(prepared.query_id == b"\x11\x22\x33", "prepared id")
check(prepared.bind_metadata[0][2] == "k" and prepared.pk_indexes == [0], "prepared bind metadata %r" % (prepared.bind_metadata,))
check([c[2] for c in prepared.column_metadata] == ["k", "v", "tags", "pair"], "prepared result metadata")
sc = messages["schema_change_table"].schema_change_event
check(sc == {"change_type": "CREATED", "target_type": "TABLE", "keyspace": "ks", "table": "t"}, "schema change %r" % sc)
sk = messages["schema_change_keyspace"].schema_change_event
check(sk["target_type"] == "KEYSPACE" and sk["keyspace"] == "ks", "keyspace change %r" % sk)
ev = messages["schema_event"]
check(ev.event_type == "SCHEMA_CHANGE" and ev.event_args["table"] == "t", "event %r" % ev.event_args)
check(messages["authenticate"].authenticator == "org.apache.cassandra.auth.PasswordAuthenticator", "authenticate")

if failures:
    print("FAILED:", *failures, sep="\n  ")
    sys.exit(1)
print("%d response messages decoded by the Python driver as expected" % len(messages))
