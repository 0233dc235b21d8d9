"""Issue 13's buckets through the real front door (DataStax Python driver,
real `tessera server` processes):

1. a range table keyed by timestamp first, WITH buckets = 16, under monotonic
   inserts: the busiest tablet takes at most 2x the mean share of writes
   (the same table without buckets: all of them on its last tablet); time-range
   and full SELECTs return exactly the unbucketed table's rows in the same order
   with page sizes 1, 7 and 5000, row by row; a LIMIT 10 query reads at most 10
   rows from each bucket;
2. buckets = 'auto' raises the count under a tail hotspot within 60 s, and every
   row written before and after reads back in order, also after a restart.
"""
import datetime
import threading
import time

from cassandra.concurrent import execute_concurrent_with_args
from cassandra.query import SimpleStatement

import tablet_queries
from tablet_queries import rows_of

BASE_MS = 807235200000  # 1995-08-01, the NASA log's day


def millis(dt):
    return round((dt - datetime.datetime(1970, 1, 1)).total_seconds() * 1000)


KEYSPACE = tablet_queries.Keyspace("kd")
connect, tablets, events = KEYSPACE.connect, KEYSPACE.tablets, KEYSPACE.events


def create_log(session, name, with_buckets):
    extra = " AND buckets = %s" % with_buckets if with_buckets else ""
    session.execute("CREATE TABLE kd.%s (ts timestamp, host text, bytes int, PRIMARY KEY ((ts), host)) "
                    "WITH distribution = 'range'%s" % (name, extra))


def test_buckets_spread_monotonic_inserts_and_reads_merge_in_key_order(server):
    cluster, session = connect(server)
    try:
        create_log(session, "log_plain", None)
        create_log(session, "log_b16", "16")
        assert len(tablets(session, "log_b16")) == 16  # one tablet per bucket from the start
        # Monotonic inserts: 3,000 rows, three hosts per timestamp, in time order.
        records = [(BASE_MS + (i // 3) * 250, "h%d" % (i % 3), i) for i in range(3000)]
        for name in ("log_plain", "log_b16"):
            insert = session.prepare("INSERT INTO kd.%s (ts, host, bytes) VALUES (?, ?, ?)" % name)
            for start in range(0, len(records), 100):  # in order, 100 at a time
                execute_concurrent_with_args(session, insert, records[start:start + 100], concurrency=16)

        plain = tablets(session, "log_plain")
        assert len(plain) == 1 and plain[0].writes == 3000  # every write on the (last) tablet
        writes = [t.writes for t in tablets(session, "log_b16")]
        mean = sum(writes) / len(writes)
        print("buckets=16: writes per tablet %s, max/mean %.2f" % (writes, max(writes) / mean))
        assert sum(writes) == 3000
        assert max(writes) <= 2 * mean, writes

        lo, hi = BASE_MS + 100 * 250, BASE_MS + 700 * 250
        queries = [
            "SELECT * FROM kd.%s WHERE ts >= %d AND ts < %d" % ("{}", lo, hi),
            "SELECT * FROM kd.%s WHERE ts > %d AND ts <= %d" % ("{}", lo, hi),
            "SELECT ts, host FROM kd.{} WHERE ts >= %d" % (BASE_MS + 900 * 250),
            "SELECT * FROM kd.{}",
            "SELECT * FROM kd.{} WHERE ts < %d PER PARTITION LIMIT 2" % hi,
            "SELECT * FROM kd.{} WHERE ts >= %d LIMIT 37" % lo,
            "SELECT * FROM kd.{} WHERE ts IN (%d, %d, %d)" % (BASE_MS + 999 * 250, BASE_MS, BASE_MS + 500 * 250),
        ]
        for q in queries:
            expected = rows_of(session, q.format("log_plain"), 5000)
            assert expected, q
            assert expected == sorted(expected, key=lambda r: (r[0], r[1]))
            for page_size in (1, 7, 5000):
                got = rows_of(session, q.format("log_b16"), page_size)
                assert got == expected, (q, page_size, len(got), len(expected))

        # LIMIT 10 is pushed into every bucket's stream: no tablet (bucket) reads more than 10 rows.
        before = {t.tablet_id: t.reads for t in tablets(session, "log_b16")}
        got = rows_of(session, "SELECT * FROM kd.log_b16 WHERE ts >= %d LIMIT 10" % lo, 5000)
        assert got == rows_of(session, "SELECT * FROM kd.log_plain WHERE ts >= %d LIMIT 10" % lo, 5000)
        read = {t.tablet_id: t.reads - before[t.tablet_id] for t in tablets(session, "log_b16")}
        print("LIMIT 10: rows read per bucket %s" % sorted(read.values()))
        assert max(read.values()) <= 10 and sum(read.values()) >= 10, read
    finally:
        cluster.shutdown()


def test_buckets_refused_where_they_cannot_apply(server):
    cluster, session = connect(server)
    try:
        for ddl, message in [
            ("CREATE TABLE kd.bad1 (k int PRIMARY KEY) WITH buckets = 4", "distribution = 'range'"),
            ("CREATE TABLE kd.bad2 (k int PRIMARY KEY) WITH distribution = 'range' AND buckets = 0", "between 1 and 1024"),
            ("CREATE TABLE kd.bad3 (k int PRIMARY KEY) WITH distribution = 'range' AND buckets = 'many'", "'auto'"),
        ]:
            try:
                session.execute(ddl)
                raise AssertionError("accepted: " + ddl)
            except Exception as e:  # noqa: BLE001 - the driver's InvalidRequest
                assert "code=2200" in str(e) and message in str(e), str(e)
        session.execute("CREATE TABLE kd.plain (k int PRIMARY KEY) WITH distribution = 'range'")
        try:
            session.execute("ALTER TABLE kd.plain WITH buckets = 8")
            raise AssertionError("ALTER added buckets to a table without them")
        except Exception as e:  # noqa: BLE001
            assert "created WITH buckets" in str(e), str(e)
    finally:
        cluster.shutdown()


def test_auto_buckets_rise_under_a_tail_hotspot_and_rows_read_back_in_order(make_server):
    server = make_server("--tablet-split-rows-per-second", "100", "--tablet-split-sustain-seconds", "2")
    cluster, session = connect(server)
    try:
        create_log(session, "log_auto", "'auto'")
        create_log(session, "log_ref", None)
        assert len(tablets(session, "log_auto")) == 1
        inserts = [session.prepare("INSERT INTO kd.%s (ts, host, bytes) VALUES (?, ?, ?)" % n)
                   for n in ("log_auto", "log_ref")]
        written = []
        stop = threading.Event()

        def write():
            i = 0
            while not stop.is_set():
                batch = [(BASE_MS + (i + j) * 10, "h%d" % ((i + j) % 4), i + j) for j in range(20)]
                for ins in inserts:
                    for f in [session.execute_async(ins, r) for r in batch]:
                        f.result()
                written.extend(batch)
                i += 20
                time.sleep(0.02)

        writer = threading.Thread(target=write, daemon=True)
        started = time.monotonic()
        writer.start()
        raised = None
        while time.monotonic() - started < 60 and raised is None:
            time.sleep(0.5)
            raised = next((e for e in events(session, "log_auto") if e.kind == "buckets"), None)
        raised_after = time.monotonic() - started
        assert raised is not None, "no bucket raise within 60 s"
        print("buckets = 'auto': raised after %.1f s: %s" % (raised_after, raised.reason))
        assert raised.reason.startswith("buckets 1 -> 16: buckets = 'auto' under a tail hotspot"), raised.reason
        rows_at_raise = len(written)
        time.sleep(3)  # writes go on under the new count
        stop.set()
        writer.join(timeout=30)
        assert len(written) > rows_at_raise
        assert len(tablets(session, "log_auto")) >= 16
        # The writes after the raise spread over the buckets' tablets.
        recent = [t.writes_per_second for t in tablets(session, "log_auto")]
        print("writes per second per tablet after the raise: %s" % [round(w) for w in recent])
        assert sum(1 for w in recent if w > 0) >= 8, recent

        expected = sorted(written)
        for restarted in (False, True):
            if restarted:
                cluster.shutdown()
                server.restart()
                cluster, session = connect(server)
            for page_size in (1, 7, 5000):
                got = [(millis(r.ts), r.host, r.bytes)
                       for r in session.execute(SimpleStatement("SELECT * FROM kd.log_auto", fetch_size=page_size))]
                assert got == expected, (restarted, page_size, len(got), len(expected))
            # A time range across the raise, against the unbucketed twin.
            mid = written[rows_at_raise][0]
            q = "SELECT * FROM kd.{} WHERE ts >= %d AND ts < %d" % (mid - 2000, mid + 2000)
            assert rows_of(session, q.format("log_auto"), 7) == rows_of(session, q.format("log_ref"), 5000)
            # Point reads reach the one bucket of each partition, before and after the raise.
            for ts, host, b in (written[0], written[rows_at_raise - 1], written[-1]):
                row = session.execute("SELECT bytes FROM kd.log_auto WHERE ts = %s AND host = %s", (ts, host)).one()
                assert row.bytes == b
    finally:
        cluster.shutdown()
