"""minTimeuuid / maxTimeuuid (part of issue 12) through the DataStax Python driver:
a timeuuid clustering range between two instants returns exactly the rows whose
time falls between them, at millisecond edges too."""
import datetime

import pytest

from cassandra.util import uuid_from_time, unix_time_from_uuid1

from tablet_queries import connect, rows_of


def test_timeuuid_ranges_between_instants(server):
    cluster, session = connect(server, "tu")
    try:
        session.execute("CREATE TABLE tu.events (k int, t timeuuid, v int, PRIMARY KEY (k, t))")
        insert = session.prepare("INSERT INTO tu.events (k, t, v) VALUES (1, ?, ?)")
        base = datetime.datetime(2013, 1, 1, 0, 5, tzinfo=datetime.timezone.utc).timestamp()
        times = [base + i * 0.0005 for i in range(-40, 40)]  # two events per millisecond around the edges
        for i, at in enumerate(times):
            session.execute(insert, (uuid_from_time(at), i))
        lo, hi = "2013-01-01 00:04:59.990+0000", "2013-01-01 00:05:00.010+0000"
        lo_ms, hi_ms = round(base * 1000) - 10, round(base * 1000) + 10

        def millis(u):
            return int(round(unix_time_from_uuid1(u) * 1e7)) // 10_000

        everything = rows_of(session, "SELECT t, v FROM tu.events WHERE k = 1", 5000)
        cases = [
            ("t > maxTimeuuid('%s') AND t < minTimeuuid('%s')" % (lo, hi), lambda m: lo_ms < m < hi_ms),
            ("t >= minTimeuuid('%s') AND t <= maxTimeuuid('%s')" % (lo, hi), lambda m: lo_ms <= m <= hi_ms),
            ("t >= minTimeuuid('%s')" % hi, lambda m: m >= hi_ms),
            ("t < minTimeuuid('%s')" % lo, lambda m: m < lo_ms),
        ]
        for where, keep in cases:
            got = rows_of(session, "SELECT t, v FROM tu.events WHERE k = 1 AND " + where, 7)
            expected = [r for r in everything if keep(millis(r[0]))]
            assert got == expected and expected, (where, len(got), len(expected))
    finally:
        cluster.shutdown()


def test_instants_a_timeuuid_cannot_hold_are_refused(server):
    """The fuzzer found minTimeuuid / maxTimeuuid of year 232013 overflowing
    (a signed 64-bit multiply); a version-1 uuid holds 60 bits of 100 ns
    ticks since 1582, so such instants are refused."""
    from cassandra import InvalidRequest
    cluster, session = connect(server, "tu")
    try:
        session.execute("CREATE TABLE IF NOT EXISTS tu.far (k int, t timeuuid, PRIMARY KEY (k, t))")
        for fn, instant in [("maxTimeuuid", "232013-01-01 00:05+0000"), ("minTimeuuid", "-290000-01-01 00:00+0000"),
                            ("minTimeuuid", "1500-01-01 00:00+0000")]:
            with pytest.raises(InvalidRequest, match="out of the range of a timeuuid"):
                session.execute("SELECT * FROM tu.far WHERE k = 0 AND t > %s('%s')" % (fn, instant))
        # The edges of the range still work.
        session.execute("SELECT * FROM tu.far WHERE k = 0 AND t > maxTimeuuid('5236-03-31 21:21:00+0000') "
                        "AND t < minTimeuuid('1582-10-16 00:00+0000')")
    finally:
        cluster.shutdown()
