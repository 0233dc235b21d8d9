"""Issue 13's partition buckets through the real front door (DataStax Python
driver, real `tessera server` processes):

1. WITH partition_buckets = 8 (and after ALTER to 16): every read form over
   partitions with statics, updates, row, range and partition deletions returns
   exactly what the same table without partition buckets returns, row by row, in
   the same order, with page sizes 1, 7 and 5000, also after a restart;
2. partition_buckets = 'auto': a hammered partition of a hash table gets its own
   count raised by the balancer and then spreads over at least 4 tablets;
   slices, DESC order, LIMIT and paging over it return exactly what the
   unbucketed table returns.
"""
import threading
import time

from cassandra.concurrent import execute_concurrent_with_args

import tablet_queries
from tablet_queries import rows_of


KEYSPACE = tablet_queries.Keyspace("pb")
connect, tablets, events = KEYSPACE.connect, KEYSPACE.tablets, KEYSPACE.events


def create_series(session, name, options):
    session.execute("CREATE TABLE pb.%s (sensor text, ts int, seq int, v text, meta text static, "
                    "PRIMARY KEY ((sensor), ts, seq)) WITH CLUSTERING ORDER BY (ts DESC, seq ASC)%s"
                    % (name, " AND " + options if options else ""))


def run_on_both(session, names, cql, params=()):
    for name in names:
        session.execute(cql.format(name), params)


def assert_same_reads(session, plain, bucketed, queries, page_sizes=(1, 7, 5000)):
    """Row by row; page size 1 only for results of up to 2,000 rows (one round trip per row)."""
    checked = 0
    for q in queries:
        expected = rows_of(session, q.format(plain), 5000)
        for page_size in page_sizes:
            if page_size == 1 and len(expected) > 2000:
                continue
            got = rows_of(session, q.format(bucketed), page_size)
            assert got == expected, (q, page_size, len(got), len(expected))
        checked += len(expected)
    return checked


SERIES_QUERIES = [
    "SELECT * FROM pb.{} WHERE sensor = 's0'",
    "SELECT * FROM pb.{} WHERE sensor = 's1' ORDER BY ts ASC, seq DESC",
    "SELECT * FROM pb.{} WHERE sensor = 's1' AND ts > 20 AND ts <= 70",
    "SELECT * FROM pb.{} WHERE sensor = 's1' AND ts >= 30 ORDER BY ts ASC, seq DESC LIMIT 25",
    "SELECT * FROM pb.{} WHERE sensor = 's2' AND ts = 40 AND seq > 1",
    "SELECT * FROM pb.{} WHERE sensor = 's2' LIMIT 13",
    "SELECT sensor, meta FROM pb.{} WHERE sensor = 's3'",
    "SELECT * FROM pb.{} WHERE sensor IN ('s0', 's2', 's4')",
    "SELECT * FROM pb.{}",
    "SELECT * FROM pb.{} PER PARTITION LIMIT 3",
    "SELECT * FROM pb.{} LIMIT 101",
    "SELECT sensor, ts, seq, v FROM pb.{} WHERE token(sensor) > 0",
    "SELECT * FROM pb.{} WHERE sensor = 's1' AND ts = 55 AND seq = 2",
    "SELECT count(*) FROM pb.{} WHERE sensor = 's1'",
]


def write_series_round(session, names, round_no):
    """Rows, statics, updates and every kind of deletion, the same on every table."""
    for name in names:
        insert = session.prepare("INSERT INTO pb.%s (sensor, ts, seq, v) VALUES (?, ?, ?, ?)" % name)
        rows = [("s%d" % p, ts, seq, "r%d-%d-%d" % (round_no, ts, seq))
                for p in range(5) for ts in range(0, 100, 5 if p != 1 else 1) for seq in range(3)]
        execute_concurrent_with_args(session, insert, rows, concurrency=32)
    run_on_both(session, names, "UPDATE pb.{} SET meta = %s WHERE sensor = 's3'", ("meta-%d" % round_no,))
    run_on_both(session, names, "INSERT INTO pb.{} (sensor, meta) VALUES ('s1', %s)", ("m1-%d" % round_no,))
    run_on_both(session, names, "UPDATE pb.{} SET v = %s WHERE sensor = 's1' AND ts IN (10, 11, 12) AND seq = 1",
                ("updated-%d" % round_no,))
    run_on_both(session, names, "DELETE FROM pb.{} WHERE sensor = 's1' AND ts = 13 AND seq = 0")
    run_on_both(session, names, "DELETE v FROM pb.{} WHERE sensor = 's1' AND ts = 14 AND seq = 2")
    run_on_both(session, names, "DELETE FROM pb.{} WHERE sensor = 's2' AND ts > 60 AND ts < 80")
    run_on_both(session, names, "DELETE FROM pb.{} WHERE sensor = 's4'")
    run_on_both(session, names, "INSERT INTO pb.{} (sensor, ts, seq, v) VALUES ('s4', 7, 7, 'after-delete')")


def test_fixed_partition_buckets_read_like_the_unbucketed_table(make_server):
    server = make_server()
    cluster, session = connect(server)
    names = ("series_plain", "series_pb")
    try:
        create_series(session, names[0], "")
        create_series(session, names[1], "partition_buckets = 8")
        write_series_round(session, names, 1)
        checked = assert_same_reads(session, *names, SERIES_QUERIES)
        print("partition_buckets = 8: %d rows compared per page size" % checked)
        assert checked > 1000

        # A new count applies to new writes; rows written under 8 stay where they are and are
        # still updated and deleted (a deletion goes to the row's sub-partition under each count).
        session.execute("ALTER TABLE pb.series_pb WITH partition_buckets = 16")
        write_series_round(session, names, 2)
        run_on_both(session, names, "DELETE FROM pb.{} WHERE sensor = 's0' AND ts = 50 AND seq = 1")
        checked = assert_same_reads(session, *names, SERIES_QUERIES)
        print("after ALTER to 16: %d rows compared per page size" % checked)
        ext = session.execute("SELECT extensions FROM system_schema.tables WHERE keyspace_name = 'pb' "
                              "AND table_name = 'series_pb'").one().extensions
        assert ext["tessera.partition_buckets"] == b"16", ext  # what DESCRIBE recreates

        cluster.shutdown()
        server.restart()
        cluster, session = connect(server)
        assert_same_reads(session, *names, SERIES_QUERIES, page_sizes=(7, 5000))
        # Point reads of every row of s1 (one lookup per count of its history).
        lookup = {n: session.prepare("SELECT v FROM pb.%s WHERE sensor = 's1' AND ts = ? AND seq = ?" % n)
                  for n in names}
        for ts in range(0, 100, 3):
            for seq in range(3):
                got = [list(session.execute(lookup[n], (ts, seq))) for n in names]
                assert got[0] == got[1], (ts, seq, got)
    finally:
        cluster.shutdown()


def test_partition_buckets_refused_where_they_cannot_apply(server):
    cluster, session = connect(server)
    try:
        for ddl, message in [
            ("CREATE TABLE pb.bad1 (k int PRIMARY KEY, v int) WITH partition_buckets = 4", "no clustering columns"),
            ("CREATE TABLE pb.bad2 (k int, c int, PRIMARY KEY (k, c)) WITH partition_buckets = 0", "between 1 and 256"),
            ("CREATE TABLE pb.bad3 (k int, c int, PRIMARY KEY (k, c)) WITH partition_buckets = 'x'", "'auto'"),
            ("CREATE TABLE pb.bad4 (k int, c int, PRIMARY KEY (k, c)) WITH distribution = 'range' AND buckets = 4 "
             "AND partition_buckets = 4", "cannot be combined"),
        ]:
            try:
                session.execute(ddl)
                raise AssertionError("accepted: " + ddl)
            except Exception as e:  # noqa: BLE001 - the driver's InvalidRequest
                assert "code=2200" in str(e) and message in str(e), str(e)
        session.execute("CREATE TABLE pb.plain (k int, c int, PRIMARY KEY (k, c))")
        try:
            session.execute("ALTER TABLE pb.plain WITH partition_buckets = 8")
            raise AssertionError("ALTER added partition buckets to a table without them")
        except Exception as e:  # noqa: BLE001
            assert "created WITH partition_buckets" in str(e), str(e)
    finally:
        cluster.shutdown()


HOT_QUERIES = [
    "SELECT * FROM pb.{} WHERE device = 'hot'",
    "SELECT * FROM pb.{} WHERE device = 'hot' ORDER BY at DESC",
    "SELECT * FROM pb.{} WHERE device = 'hot' AND at >= 1000 AND at < 4000",
    "SELECT * FROM pb.{} WHERE device = 'hot' AND at > 2000 ORDER BY at DESC LIMIT 77",
    "SELECT * FROM pb.{} WHERE device = 'hot' LIMIT 10",
    "SELECT at, reading FROM pb.{} WHERE device = 'hot' AND at <= 500 ORDER BY at DESC",
    "SELECT * FROM pb.{} WHERE device = 'hot' AND at >= 2500 AND at < 3500 ORDER BY at DESC",
    "SELECT * FROM pb.{} WHERE device = 'hot' AND at = 4321",
    "SELECT * FROM pb.{} WHERE device = 'cold'",
    "SELECT * FROM pb.{} PER PARTITION LIMIT 50",
]


def test_auto_partition_buckets_spread_a_hammered_partition_over_tablets(make_server):
    server = make_server("--tablet-split-rows-per-second", "100", "--tablet-split-sustain-seconds", "2")
    cluster, session = connect(server)
    names = ("hot_plain", "hot_auto")
    try:
        for name, options in zip(names, ("initial_tablets = 1", "initial_tablets = 1 AND partition_buckets = 'auto'")):
            session.execute("CREATE TABLE pb.%s (device text, at int, reading text, PRIMARY KEY ((device), at)) "
                            "WITH %s" % (name, options))
        inserts = [session.prepare("INSERT INTO pb.%s (device, at, reading) VALUES (?, ?, ?)" % n) for n in names]
        for insert in inserts:
            session.execute(insert, ("cold", 1, "c"))
        written = [0]
        stop = threading.Event()

        def hammer():  # about 800 rows/s on each table: 8 times the split threshold
            at = 0
            while not stop.is_set() and at < 200000:
                began = time.monotonic()
                batch = [("hot", at + i, "v%d" % (at + i)) for i in range(100)]
                for insert in inserts:
                    execute_concurrent_with_args(session, insert, batch, concurrency=16)
                at += 100
                written[0] = at
                time.sleep(max(0.0, 0.125 - (time.monotonic() - began)))

        writer = threading.Thread(target=hammer)
        writer.start()
        started = time.monotonic()
        raised_at = spread_at = None
        try:
            while time.monotonic() - started < 120:
                time.sleep(1)
                if raised_at is None and any(e.kind == "partition_buckets" for e in events(session, "hot_auto")):
                    raised_at = time.monotonic() - started
                if raised_at is not None and len(tablets(session, "hot_auto")) >= 4:
                    spread_at = time.monotonic() - started
                    break
            # Keep hammering until a 3 s window without a split shows every tablet's share of the writes.
            for _ in range(10):
                before = {t.tablet_id: t.writes for t in tablets(session, "hot_auto")}
                time.sleep(3)
                after = {t.tablet_id: t.writes for t in tablets(session, "hot_auto")}
                if set(before) == set(after) and sum(after[t] > before[t] for t in after) >= 4:
                    break
        finally:
            stop.set()
            writer.join()
        raise_events = [e.reason for e in events(session, "hot_auto") if e.kind == "partition_buckets"]
        print("raise after %s s: %s" % (raised_at, raise_events[:1]))
        shares = [after[t] - before.get(t, 0) for t in sorted(after)]
        print("4 tablets after %s s, %d at the end; writes per tablet over 3 s: %s, max/mean %.2f" % (
            spread_at, len(after), shares, max(shares) * len(shares) / max(1, sum(shares))))
        assert raised_at is not None and "partition 'hot' 1 -> 16" in raise_events[0], raise_events
        assert spread_at is not None, "the hot partition stayed on %d tablets" % len(tablets(session, "hot_auto"))
        busy = [t for t in after if after[t] - before.get(t, 0) > 0]
        assert len(busy) >= 4, (before, after)
        advice = {a.table_name: a for a in session.execute(
            "SELECT * FROM system.key_advice WHERE keyspace_name = 'pb'") if a.subject == "'hot'"}
        print("advice: %s" % advice["hot_auto"].advice)
        assert advice["hot_auto"].kind == "partition_buckets" and "16 sub-partitions" in advice["hot_auto"].advice
        assert advice["hot_plain"].kind == "hot_partition" and "partition_buckets = 'auto'" in advice["hot_plain"].advice
        plain = tablets(session, "hot_plain")
        print("without partition buckets: %d tablet(s), holds %s" % (len(plain), [t.state for t in plain]))
        assert len(plain) == 1  # a partition is never split

        # Updates and deletions of rows written before the raise (under count 1) and after it.
        for name in names:
            session.execute("UPDATE pb.%s SET reading = 'updated' WHERE device = 'hot' AND at IN (3, 5, 5003)" % name)
            session.execute("DELETE FROM pb.%s WHERE device = 'hot' AND at IN (4, 5004)" % name)
            session.execute("DELETE FROM pb.%s WHERE device = 'hot' AND at > 100 AND at < 120" % name)
        checked = assert_same_reads(session, *names, HOT_QUERIES)
        print("%d rows of the hammered partition written; %d rows compared per page size" % (written[0], checked))
        assert written[0] >= 4000
    finally:
        cluster.shutdown()
