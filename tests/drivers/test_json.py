"""JSON (part of issue 12) through the DataStax Python driver: SELECT JSON,
toJson(), INSERT JSON (DEFAULT NULL and DEFAULT UNSET, literal and bound),
fromJson(), with Cassandra's output forms and error messages."""
import datetime
import decimal
import json
import uuid

import pytest
from cassandra import InvalidRequest

from tablet_queries import connect

ROW = {
    "k": 1, "c": "a", "\"Mixed\"": 7, "f": 1.5, "d": 2.25, "ts": "2011-02-03 04:05:00.123Z",
    "u": "550e8400-e29b-41d4-a716-446655440000", "b": "0xcafe", "l": [3, 1, 2], "m": {"1": "one", "2": "two"},
    "s": ["x", "y"], "tu": [5, "five"], "dt": "2020-02-29", "tm": "08:12:54.123456789", "dec": 1.5, "bo": True,
    "i": "10.0.0.1", "du": "1h30m", "big": 12345678901234, "vi": 123456789012345678901234567890,
}


@pytest.fixture(scope="module")
def session(server):
    cluster, s = connect(server, "js")
    s.execute('CREATE TABLE js.t (k int, c text, "Mixed" int, f float, d double, ts timestamp, u uuid, b blob, '
              'l list<int>, m map<int, text>, s set<text>, tu tuple<int, text>, dt date, tm time, dec decimal, '
              'bo boolean, i inet, du duration, big bigint, vi varint, PRIMARY KEY (k, c))')
    yield s
    cluster.shutdown()


def insert_json(session, doc, default=""):
    session.execute("INSERT INTO js.t JSON %s %s" % ("'" + json.dumps(doc).replace("'", "''") + "'", default))


def test_insert_json_then_select_json_round_trips_every_type(session):
    insert_json(session, ROW)
    text = session.execute("SELECT JSON * FROM js.t WHERE k = 1 AND c = 'a'").one()[0]
    # Cassandra's layout: ", " and ": ", partition key, clustering, then the other columns by name.
    assert text.startswith('{"k": 1, "c": "a", "\\"Mixed\\"": 7, "b": "0xcafe", "big": 12345678901234, "bo": true')
    assert json.loads(text) == ROW
    row = session.execute("SELECT * FROM js.t WHERE k = 1 AND c = 'a'").one()
    assert row.Mixed == 7 and row.l == [3, 1, 2] and row.m == {1: "one", 2: "two"} and row.tu == (5, "five")
    assert row.ts == datetime.datetime(2011, 2, 3, 4, 5, 0, 123000)
    assert row.u == uuid.UUID("550e8400-e29b-41d4-a716-446655440000") and row.b == b"\xca\xfe"
    assert row.dec == decimal.Decimal("1.5") and row.bo is True and row.du.nanoseconds == 5400 * 10**9


def test_select_json_names_columns_as_selected(session):
    insert_json(session, {"k": 2, "c": "b", "l": [9]})
    rs = session.execute('SELECT JSON k, c AS "Alias", l, toJson(m) FROM js.t WHERE k = 2')
    assert rs.column_names == ["[json]"]
    assert rs.one()[0] == '{"k": 2, "\\"Alias\\"": "b", "l": [9], "system.tojson(m)": "null"}'
    assert session.execute("SELECT JSON count(*) FROM js.t WHERE k = 2").one()[0] == '{"count": 1}'


def test_prepared_select_json_describes_one_text_column(session):
    prepared = session.prepare("SELECT JSON k, c FROM js.t WHERE k = ?")
    assert [c[2] for c in prepared.result_metadata] == ["[json]"]  # (keyspace, table, name, type)
    assert session.execute(prepared, [2]).one()[0] == '{"k": 2, "c": "b"}'


def test_to_json_of_each_column(session):
    row = session.execute("SELECT toJson(ts), toJson(m), toJson(f), toJson(tu), toJson(c) FROM js.t "
                          "WHERE k = 1 AND c = 'a'").one()
    assert list(row) == ['"2011-02-03 04:05:00.123Z"', '{"1": "one", "2": "two"}', "1.5", '[5, "five"]', '"a"']


def test_default_null_clears_and_default_unset_keeps(session):
    insert_json(session, {"k": 3, "c": "c", "f": 1.0, "l": [1]})
    insert_json(session, {"k": 3, "c": "c", "f": 2.5}, "DEFAULT UNSET")
    assert json.loads(session.execute("SELECT JSON f, l FROM js.t WHERE k = 3").one()[0]) == {"f": 2.5, "l": [1]}
    insert_json(session, {"k": 3, "c": "c", "f": 3.5})  # DEFAULT NULL
    assert json.loads(session.execute("SELECT JSON f, l FROM js.t WHERE k = 3").one()[0]) == {"f": 3.5, "l": None}


def test_bound_json_and_from_json(session):
    prepared = session.prepare("INSERT INTO js.t JSON ?")
    session.execute(prepared, [json.dumps({"k": 4, "c": "d", "m": {"7": "seven"}, "ts": 1296705900000})])
    row = session.execute("SELECT m, ts FROM js.t WHERE k = 4").one()
    assert row.m == {7: "seven"} and row.ts == datetime.datetime(2011, 2, 3, 4, 5)
    session.execute("UPDATE js.t SET l = fromJson('[4, 5]'), \"Mixed\" = fromJson('\"12\"') WHERE k = 4 AND c = 'd'")
    session.execute("INSERT INTO js.t (k, c, s) VALUES (fromJson('5'), fromJson('\"e\"'), fromJson('[\"q\"]'))")
    assert session.execute("SELECT l, \"Mixed\" FROM js.t WHERE k = 4").one() == ([4, 5], 12)
    assert session.execute("SELECT s FROM js.t WHERE k = fromJson('5') AND c = 'e'").one().s == {"q"}
    bound = session.prepare("UPDATE js.t SET d = fromJson(?) WHERE k = 5 AND c = 'e'")
    session.execute(bound, ["6.5"])
    assert session.execute("SELECT d FROM js.t WHERE k = 5").one().d == 6.5


@pytest.mark.parametrize("doc, message", [
    ('{"k": 1, "c": "a", "zz": 1}', "JSON values map contains unrecognized column: zz"),
    ("[1]", "Could not decode JSON string as a map: [1]"),
    ('{"k": "x", "c": "a"}', "Error decoding JSON value for k: Unable to make int from 'x'"),
    ('{"k": 1.5, "c": "a"}', "Error decoding JSON value for k: Unable to make int from '1.5'"),
    ('{"k": 1, "c": 5}', "Error decoding JSON value for c: Expected a UTF-8 string, but got a Integer: 5"),
    ('{"k": 1, "c": "a", "l": 3}', "Error decoding JSON value for l: Expected a list, but got a Integer: 3"),
    ('{"k": 1, "c": "a", "b": "cafe"}', "Error decoding JSON value for b: Value 'cafe' is not a valid blob"),
    ('{"k": 1, "c": "a", "u": "nope"}', 'Error decoding JSON value for u: Invalid UUID constant (nope)'),
    ('{"k": 99999999999, "c": "a"}', "Error decoding JSON value for k: "),
    ('{"c": "a"}', "Some partition key parts are missing: k"),
])
def test_bad_json_is_refused_with_cassandras_message(session, doc, message):
    with pytest.raises(InvalidRequest) as e:
        session.execute("INSERT INTO js.t JSON '%s'" % doc)
    assert message in str(e.value)
    # Nothing was written: the row the first test wrote is as it was.
    assert json.loads(session.execute("SELECT JSON * FROM js.t WHERE k = 1 AND c = 'a'").one()[0]) == ROW
