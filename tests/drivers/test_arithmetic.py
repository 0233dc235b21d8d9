"""Arithmetic operators (issue 12; Cassandra 4.0's OperationFcts) through the
DataStax Python driver: + - * / % and unary - in selections and in values,
the result types Cassandra gives mixed number types, Java's wrapping of
fixed-size integers, exact varint and decimal arithmetic (decimal division
to 34 digits), timestamps and dates moved by durations (months clamped to
the month's end), nulls, and Cassandra's messages for what fails."""
from datetime import datetime
from decimal import Decimal

import pytest
from cassandra import InvalidRequest

from conftest import connect, own_server


@pytest.fixture(scope="module")
def session():
    server_run = own_server()
    server = next(server_run)
    cluster, s = connect(server)
    s.execute("CREATE KEYSPACE ar WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}")
    s.set_keyspace("ar")
    s.execute("CREATE TABLE nums (k int PRIMARY KEY, ti tinyint, si smallint, i int, b bigint, f float, d double, "
              "vi varint, de decimal, ts timestamp, dt date, du duration)")
    s.execute("INSERT INTO nums (k, ti, si, i, b, f, d, vi, de, ts, dt) VALUES (1, 127, 32767, 2147483647, 10, 1.5, "
              "2.25, 1180591620717411303424, 1.0, '2024-01-31 10:00:00+0000', '2024-01-31')")
    s.execute("INSERT INTO nums (k, i, b) VALUES (2, 7, -3)")
    yield s
    cluster.shutdown()
    server_run.close()  # stops the server, removes its directory


def one(session, query):
    return session.execute(query).one()


def test_integer_operators_and_javas_wrapping(session):
    r = one(session, "SELECT i + b, i - b, i * b, i / b, i % b, -i, -b FROM nums WHERE k = 2")
    assert tuple(r) == (4, 10, -21, -2, 1, -7, 3)  # truncating division, remainder of the dividend's sign
    assert session.execute("SELECT i + b FROM nums WHERE k = 2").column_names == ["i + b"]
    r = one(session, "SELECT ti + ti, si + si, i + 1, b * 2 FROM nums WHERE k = 1")
    assert tuple(r) == (-2, -2, -2147483648, 20)  # tinyint, smallint and int wrap as Java's
    r = session.execute("SELECT ti + ti, si + 1, i + b, i + 1 FROM nums WHERE k = 1")
    types = [ct.typename for ct in r.column_types]
    assert types == ["tinyint", "smallint", "bigint", "int"]


def test_mixed_number_types_follow_cassandras_rules(session):
    r = session.execute("SELECT i + f, b + f, b + d, vi + f, vi + i, de + i, f * f FROM nums WHERE k = 1")
    assert [ct.typename for ct in r.column_types] == ["float", "double", "double", "decimal", "varint",
                                                      "decimal", "float"]
    row = r.one()
    assert row[1] == 11.5 and row[2] == 12.25
    assert row[3] == Decimal("1180591620717411303425.5")
    assert row[4] == 1180591620717411303424 + 2147483647  # varint: exact
    assert row[5] == Decimal("2147483648.0")
    assert row[6] == 2.25


def test_decimal_and_varint_division(session):
    r = one(session, "SELECT de / 3, vi / 3, vi % 1000, de * de, de - 0.75 FROM nums WHERE k = 1")
    assert r[0] == Decimal("0.3333333333333333333333333333333333")  # 34 digits, as DECIMAL128
    assert r[1] == 1180591620717411303424 // 3
    assert r[2] == 1180591620717411303424 % 1000
    assert r[3] == Decimal("1.00") and r[4] == Decimal("0.25")


def test_division_by_zero(session):
    with pytest.raises(InvalidRequest, match=r"the operation 'int / int' failed: / by zero"):
        session.execute("SELECT i / 0 FROM nums WHERE k = 1")
    with pytest.raises(InvalidRequest, match=r"the operation 'bigint % bigint' failed: / by zero"):
        session.execute("SELECT b % 0 FROM nums WHERE k = 1")
    assert one(session, "SELECT d / 0 FROM nums WHERE k = 1")[0] == float("inf")


def test_timestamps_and_dates_moved_by_durations(session):
    r = one(session, "SELECT ts + 1mo, ts - 1d, ts + 2h30m, dt + 1mo, dt - 31d, dt + 1y FROM nums WHERE k = 1")
    assert r[0] == datetime(2024, 2, 29, 10, 0)  # January 31st + 1 month: the end of February (leap year)
    assert r[1] == datetime(2024, 1, 30, 10, 0)
    assert r[2] == datetime(2024, 1, 31, 12, 30)
    assert str(r[3]) == "2024-02-29"
    assert str(r[4]) == "2023-12-31" and str(r[5]) == "2025-01-31"
    with pytest.raises(InvalidRequest, match="The duration must have a day precision. Was: 1h"):
        session.execute("SELECT dt + 1h FROM nums WHERE k = 1")
    with pytest.raises(InvalidRequest, match="the '\\+' operation is not supported between"):
        session.execute("SELECT ts + i FROM nums WHERE k = 1")


def test_nulls_give_null(session):
    r = one(session, "SELECT f + 1, vi * 2, -d FROM nums WHERE k = 2")
    assert tuple(r) == (None, None, None)


def test_arithmetic_in_values_and_restrictions(session):
    session.execute("INSERT INTO nums (k, i, b, ts, dt) VALUES (1 + 2, 6 * 7, -(10 - 3), "
                    "'2024-03-31 00:00:00+0000' - 1mo, '2024-02-28' + 2d)")
    r = one(session, "SELECT i, b, ts, dt FROM nums WHERE k = 9 / 3")
    assert (r.i, r.b) == (42, -7)
    assert r.ts == datetime(2024, 2, 29, 0, 0)
    assert str(r.dt) == "2024-03-01"
    update = session.prepare("UPDATE nums SET b = ? * 2 + 1 WHERE k = ?")
    session.execute(update, (20, 3))
    assert one(session, "SELECT b FROM nums WHERE k = 3").b == 41
    with pytest.raises(InvalidRequest, match="failed: / by zero"):
        session.execute("UPDATE nums SET i = 1 / 0 WHERE k = 3")
    assert one(session, "SELECT i FROM nums WHERE k = 3").i == 42  # nothing written
    # A list prepend is still a prepend, not arithmetic.
    session.execute("CREATE TABLE IF NOT EXISTS lists (k int PRIMARY KEY, l list<int>)")
    session.execute("INSERT INTO lists (k, l) VALUES (1, [3])")
    session.execute("UPDATE lists SET l = [1 + 1] + l WHERE k = 1")
    assert one(session, "SELECT l FROM lists WHERE k = 1").l == [2, 3]
