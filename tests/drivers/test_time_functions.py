"""Cassandra's time functions through the DataStax Python driver (issue 12):
currentTimestamp / currentDate / currentTime / currentTimeUUID with their
types and values near the server's clock, toDate / toTimestamp /
toUnixTimestamp on every type they accept (timeuuid, timestamp, date), a
type they refuse; the deprecated dateOf / unixTimestampOf; and lightweight transactions at LOCAL_SERIAL."""
import time
from datetime import datetime, timezone

import pytest
from cassandra import ConsistencyLevel, InvalidRequest
from cassandra.query import SimpleStatement
from cassandra.util import datetime_from_uuid1, uuid_from_time

from conftest import connect, own_server


@pytest.fixture(scope="module")
def session():
    run = own_server()
    server = next(run)
    cluster, s = connect(server)
    s.execute("CREATE KEYSPACE tf WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}")
    s.execute("CREATE TABLE tf.t (k int PRIMARY KEY, tu timeuuid, ts timestamp, d date, i int)")
    midnight = uuid_from_time(datetime(2024, 5, 6, tzinfo=timezone.utc), node=0x0102, clock_seq=7)
    s.execute("INSERT INTO tf.t (k, tu, ts, d, i) VALUES (1, %s, '2024-05-06 07:08:09.123+0000', '2024-05-06', 3)",
              (midnight,))
    yield s
    cluster.shutdown()
    run.close()


def test_current_functions(session):
    before = time.time()
    r = session.execute("SELECT currentTimestamp(), currentDate(), currentTime(), currentTimeUUID() "
                        "FROM tf.t WHERE k = 1")
    after = time.time()
    assert [ct.typename for ct in r.column_types] == ["timestamp", "date", "time", "timeuuid"]
    ts, d, t, tu = r.one()
    assert before - 1 <= ts.replace(tzinfo=timezone.utc).timestamp() <= after + 1
    assert str(d) == datetime.fromtimestamp(ts.replace(tzinfo=timezone.utc).timestamp(), timezone.utc).date().isoformat()
    assert abs(t.nanosecond_time / 1e9 - (ts.hour * 3600 + ts.minute * 60 + ts.second + ts.microsecond / 1e6)) < 2
    assert tu.version == 1 and before - 1 <= datetime_from_uuid1(tu).replace(tzinfo=timezone.utc).timestamp() <= after + 1


def test_conversions_on_every_type_they_take(session):
    r = session.execute("SELECT toDate(tu), toDate(ts), toDate(d), toTimestamp(tu), toTimestamp(ts), toTimestamp(d), "
                        "toUnixTimestamp(tu), toUnixTimestamp(ts), toUnixTimestamp(d) FROM tf.t WHERE k = 1")
    assert [ct.typename for ct in r.column_types] == ["date"] * 3 + ["timestamp"] * 3 + ["bigint"] * 3
    row = r.one()
    # The timeuuid's instant is 2024-05-06 00:00:00 UTC.
    assert [str(v) for v in row[:3]] == ["2024-05-06"] * 3
    assert row[3] == datetime(2024, 5, 6, 0, 0)
    assert row[4] == datetime(2024, 5, 6, 7, 8, 9, 123000)
    assert row[5] == datetime(2024, 5, 6, 0, 0)
    assert list(row[6:]) == [1714953600000, 1714979289123, 1714953600000]
    with pytest.raises(InvalidRequest, match="todate"):
        session.execute("SELECT toDate(i) FROM tf.t WHERE k = 1")


def test_years_beyond_a_timestamp_are_refused(session):
    # Found by the executor fuzzer: a 21-digit year overflowed the day and
    # millisecond arithmetic (UBSan). Refused now, as values no type holds.
    for text in ("000020020000000000000-01-01", "20020000000000000-01-01", "300000001-01-01"):
        with pytest.raises(InvalidRequest, match="Unable to parse a date/time"):
            session.execute("INSERT INTO tf.t (k, ts) VALUES (9, '%s')" % text)
    with pytest.raises(InvalidRequest, match="out of the range of a timestamp"):
        session.execute("INSERT INTO tf.t (k, ts) VALUES (9, '299999999-01-01')")
    session.execute("INSERT INTO tf.t (k, ts) VALUES (9, '200000000-01-01')")  # 6.3e18 ms: fits
    assert session.execute("SELECT toUnixTimestamp(ts) FROM tf.t WHERE k = 9").one()[0] > 6 * 10**18


def test_deprecated_timeuuid_forms(session):
    # Cassandra 4.1 still has dateOf and unixTimestampOf, for a timeuuid only.
    r = session.execute("SELECT dateOf(tu), unixTimestampOf(tu) FROM tf.t WHERE k = 1")
    assert [ct.typename for ct in r.column_types] == ["timestamp", "bigint"]
    assert list(r.one()) == [datetime(2024, 5, 6, 0, 0), 1714953600000]
    with pytest.raises(InvalidRequest, match="ts cannot be passed as argument 0 of function system.dateof of type timeuuid"):
        session.execute("SELECT dateOf(ts) FROM tf.t WHERE k = 1")


def test_lightweight_transactions_at_local_serial(session):
    session.execute("CREATE TABLE tf.accounts (id text PRIMARY KEY, balance int)")
    insert = SimpleStatement("INSERT INTO tf.accounts (id, balance) VALUES ('a', 10) IF NOT EXISTS",
                             serial_consistency_level=ConsistencyLevel.LOCAL_SERIAL)
    assert session.execute(insert).one().applied
    assert not session.execute(insert).one().applied
    update = SimpleStatement("UPDATE tf.accounts SET balance = 5 WHERE id = 'a' IF balance = 10",
                             serial_consistency_level=ConsistencyLevel.LOCAL_SERIAL)
    assert session.execute(update).one().applied
    read = SimpleStatement("SELECT balance FROM tf.accounts WHERE id = 'a'", consistency_level=ConsistencyLevel.LOCAL_SERIAL)
    assert session.execute(read).one().balance == 5
