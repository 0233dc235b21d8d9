"""CAST(col AS type) selectors (part of issue 12) through the DataStax Python
driver: Cassandra 4.1's conversions between numeric types (Java's narrowing
and truncation), to text, and between timestamps, dates and timeuuids; the
refusal of the others."""
import datetime
import decimal

import pytest
from cassandra import InvalidRequest
from cassandra.util import Date

from tablet_queries import connect


@pytest.fixture(scope="module")
def session(server):
    cluster, s = connect(server, "cst")
    s.execute("CREATE TABLE cst.t (k int PRIMARY KEY, i int, b bigint, f float, d double, de decimal, vi varint, "
              "ts timestamp, dt date, tu timeuuid, bo boolean, bl blob, tx text, u uuid)")
    s.execute("INSERT INTO cst.t (k, i, b, f, d, de, vi, ts, dt, tu, bo, bl, tx, u) VALUES (1, 300, 4294967297, "
              "2.75, -1e20, 12.345, 123456789012345678901234567890, '2011-02-03 04:05:06.789+0000', '2020-02-29', "
              "50554d6e-29bb-11e5-b345-feff819cdc9f, true, 0xcafe, 'x', 5132b130-ae79-11e4-ab27-0800200c9a66)")
    s.execute("INSERT INTO cst.t (k) VALUES (2)")
    yield s
    cluster.shutdown()


@pytest.mark.parametrize("expr, expected", [
    ("CAST(i AS tinyint)", 44),                  # 300 keeps its low 8 bits, as Java's (byte)
    ("CAST(b AS int)", 1),                       # 2^32 + 1 keeps its low 32 bits
    ("CAST(f AS int)", 2),                       # truncation toward zero
    ("CAST(d AS bigint)", -9223372036854775808),  # saturation
    ("CAST(de AS double)", 12.345),
    ("CAST(vi AS double)", 1.2345678901234568e+29),
    ("CAST(i AS decimal)", decimal.Decimal("300")),
    ("CAST(f AS decimal)", decimal.Decimal("2.75")),
    ("CAST(d AS varint)", -100000000000000000000),
    ("CAST(de AS int)", 12),
    ("CAST(i AS text)", "300"),
    ("CAST(ts AS text)", "2011-02-03T04:05:06.789Z"),
    ("CAST(bo AS text)", "true"),
    ("CAST(bl AS ascii)", "cafe"),
    ("CAST(u AS text)", "5132b130-ae79-11e4-ab27-0800200c9a66"),
    ("CAST(dt AS text)", "2020-02-29"),
    ("CAST(ts AS date)", Date(datetime.date(2011, 2, 3))),
    ("CAST(dt AS timestamp)", datetime.datetime(2020, 2, 29)),
    ("CAST(tu AS timestamp)", datetime.datetime(2015, 7, 14, 0, 0, 18, 805000)),
    ("CAST(tu AS date)", Date(datetime.date(2015, 7, 14))),
    ("CAST(i AS int)", 300),
])
def test_cast_converts_as_cassandra_does(session, expr, expected):
    rs = session.execute("SELECT %s FROM cst.t WHERE k = 1" % expr)
    assert rs.one()[0] == expected
    assert rs.column_names[0] == expr.lower()
    # A null casts to null.
    assert session.execute("SELECT %s FROM cst.t WHERE k = 2" % expr).one()[0] is None


def test_cast_with_alias_and_json(session):
    assert session.execute("SELECT CAST(i AS text) AS s FROM cst.t WHERE k = 1").one().s == "300"
    assert session.execute("SELECT JSON CAST(f AS int) FROM cst.t WHERE k = 1").one()[0] == '{"cast(f as int)": 2}'


@pytest.mark.parametrize("expr, message", [
    ("CAST(i AS boolean)", "Cannot cast column i of type int to type boolean"),
    ("CAST(tx AS int)", "Cannot cast column tx of type text to type int"),
    ("CAST(i AS counter)", "Cannot cast column i of type int to type counter"),
    ("CAST(i AS nosuch)", "Unknown type nosuch"),
])
def test_casts_cassandra_has_not_are_refused(session, expr, message):
    with pytest.raises(InvalidRequest, match=message):
        session.execute("SELECT %s FROM cst.t" % expr)
