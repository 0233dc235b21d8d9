"""minTimeuuid / maxTimeuuid (part of issue 12) through the DataStax Python driver:
a timeuuid clustering range between two instants returns exactly the rows whose
time falls between them, at millisecond edges too."""
import datetime

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
