"""Counters (part of issue 12) through the DataStax Python driver against a real
`tessera server`: concurrent increments from several connections add up exactly,
decrements and several counters in one UPDATE, counter batches, reads after a
restart and a full compaction, deletion, and Cassandra 4.1's refusals with its
messages.
"""
import threading

import pytest
from cassandra import InvalidRequest
from cassandra.query import BatchStatement, BatchType

from tablet_queries import connect


def test_concurrent_increments_add_up_and_survive_restart_and_compaction(make_server):
    server = make_server()
    cluster, session = connect(server, "ct")
    try:
        session.execute("CREATE TABLE ct.views (video text, day int, views counter, likes counter, "
                        "PRIMARY KEY (video, day))")
        bump = session.prepare("UPDATE ct.views SET views = views + ?, likes = likes + 1 WHERE video = ? AND day = ?")
        errors = []

        def writer(n):
            c, s = connect(server, "ct")  # a connection of its own
            try:
                stmt = s.prepare("UPDATE ct.views SET views = views + ?, likes = likes + 1 WHERE video = ? AND day = ?")
                for i in range(240):  # 30 times each of 4 videos x 2 days
                    s.execute(stmt, (n + 1, "v%d" % (i % 4), (i // 4) % 2))
            except Exception as e:  # noqa: BLE001 - reported below
                errors.append(e)
            finally:
                c.shutdown()

        threads = [threading.Thread(target=writer, args=(n,)) for n in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert not errors, errors
        # Each writer adds n + 1 to each counter's views 30 times, and 1 to its likes.
        expected_views = sum((n + 1) * 30 for n in range(4))
        rows = list(session.execute("SELECT video, day, views, likes FROM ct.views"))
        assert len(rows) == 8 and all(r.views == expected_views and r.likes == 120 for r in rows), rows
        session.execute(bump, (-5, "v0", 0))
        session.execute("UPDATE ct.views SET views = views - 20, likes -= 2 WHERE video = 'v0' AND day = 0")
        session.execute("UPDATE ct.views SET views = views + -1 WHERE video = 'v9' AND day = 1")  # a new counter
        expected = {("v0", 0): (expected_views - 25, 119), ("v9", 1): (-1, None)}
        batch = BatchStatement(batch_type=BatchType.COUNTER)
        for _ in range(3):
            batch.add(bump, (10, "v1", 1))
        session.execute(batch)
        expected[("v1", 1)] = (expected_views + 30, 123)
        session.execute("DELETE likes FROM ct.views WHERE video = 'v2' AND day = 0")
        expected[("v2", 0)] = (expected_views, None)
        session.execute("DELETE FROM ct.views WHERE video = 'v3' AND day = 1")
        expected[("v3", 1)] = None

        def check(session):
            got = {(r.video, r.day): (r.views, r.likes) for r in session.execute("SELECT * FROM ct.views")}
            for key, value in expected.items():
                assert got.get(key) == value, (key, got.get(key), value)
            assert got[("v3", 0)] == (expected_views, 120)
            total = session.execute("SELECT sum(views) FROM ct.views WHERE video = 'v0'").one()[0]
            assert total == got[("v0", 0)][0] + got[("v0", 1)][0]

        check(session)
        cluster.shutdown()
        server.restart()
        cluster, session = connect(server, "ct")
        check(session)
        status, body = server.admin("POST", "/compact")
        assert status == 200, body
        check(session)
        # A deleted counter stays deleted (Cassandra: deleting a counter is final).
        session.execute("UPDATE ct.views SET likes = likes + 1 WHERE video = 'v2' AND day = 0")
        assert session.execute("SELECT likes FROM ct.views WHERE video = 'v2' AND day = 0").one().likes is None
    finally:
        cluster.shutdown()


@pytest.mark.parametrize("cql, message", [
    ("INSERT INTO ct.c (k, n) VALUES (1, 2)", "INSERT statements are not allowed on counter tables, use UPDATE instead"),
    ("UPDATE ct.c SET n = 5 WHERE k = 1",
     "Cannot set the value of counter column n (counters can only be incremented/decremented, not set)"),
    ("UPDATE ct.c USING TIMESTAMP 5 SET n = n + 1 WHERE k = 1", "Cannot provide custom timestamp for counter updates"),
    ("UPDATE ct.c USING TTL 5 SET n = n + 1 WHERE k = 1", "Cannot provide custom TTL for counter updates"),
    ("UPDATE ct.c SET n = n + null WHERE k = 1", "Invalid null value for counter increment"),
    ("UPDATE ct.plain SET v = v + 1 WHERE k = 1", "Invalid operation (v = v + ?) for non counter column v"),
    ("CREATE TABLE ct.mixed (k int PRIMARY KEY, n counter, v int)", "counter and non-counter columns cannot be mixed"),
    ("CREATE TABLE ct.ttl (k int PRIMARY KEY, n counter) WITH default_time_to_live = 10",
     "Cannot set default_time_to_live on a table with counters"),
    ("BEGIN BATCH UPDATE ct.c SET n = n + 1 WHERE k = 1; APPLY BATCH",
     "Cannot include a counter statement in a logged batch"),
    ("BEGIN COUNTER BATCH UPDATE ct.plain SET v = 1 WHERE k = 1; APPLY BATCH",
     "Cannot include non-counter statement in a counter batch"),
    ("BEGIN UNLOGGED BATCH UPDATE ct.plain SET v = 1 WHERE k = 1; UPDATE ct.c SET n = n + 1 WHERE k = 1; APPLY BATCH",
     "Counter and non-counter mutations cannot exist in the same batch"),
])
def test_counter_refusals_are_cassandras(server, cql, message):
    cluster, session = connect(server, "ct")
    try:
        session.execute("CREATE TABLE IF NOT EXISTS ct.c (k int PRIMARY KEY, n counter)")
        session.execute("CREATE TABLE IF NOT EXISTS ct.plain (k int PRIMARY KEY, v int)")
        with pytest.raises(InvalidRequest) as e:
            session.execute(cql)
        assert message in str(e.value) and "code=2200" in str(e.value), str(e.value)
        session.execute("BEGIN UNLOGGED BATCH UPDATE ct.c SET n = n + 2 WHERE k = 7; APPLY BATCH")  # allowed
    finally:
        cluster.shutdown()
