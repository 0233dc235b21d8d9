"""Tessera's tablet tables, queried with the DataStax Python driver against a
real `tessera server`: system.tablets, system.hot_partitions and
system.tablet_events."""
import pytest
from cassandra import InvalidRequest
from cassandra.cluster import Cluster


@pytest.fixture(scope="module")
def session(server):
    c = Cluster(["127.0.0.1"], port=server.port, connect_timeout=10, control_connection_timeout=10)
    s = c.connect()
    s.execute("CREATE KEYSPACE IF NOT EXISTS load WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}")
    s.execute("CREATE TABLE IF NOT EXISTS load.events (user_id text, seq int, v text, PRIMARY KEY (user_id, seq)) "
              "WITH initial_tablets = 4")
    yield s
    c.shutdown()


def test_tablets_show_ranges_and_load(session):
    insert = session.prepare("INSERT INTO load.events (user_id, seq, v) VALUES (?, ?, ?)")
    for i in range(400):
        session.execute(insert, ("user-%d" % (i % 40), i, "x" * 100))
    rows = list(session.execute("SELECT * FROM system.tablets WHERE keyspace_name = 'load' AND table_name = 'events'"))
    assert len(rows) == 4  # initial_tablets
    assert sum(r.writes for r in rows) == 400
    assert all(r.writes > 0 for r in rows)  # hash distribution spreads 40 partitions over all four
    assert all(r.state in ("normal", "hot") and r.start_key < r.end_key for r in rows)
    assert [r.start_key for r in rows][1:] == [r.end_key for r in rows][:-1]  # contiguous, no gaps


def test_a_hammered_partition_tops_hot_partitions(session):
    insert = session.prepare("INSERT INTO load.events (user_id, seq, v) VALUES (?, ?, ?)")
    for i in range(2000):
        session.execute(insert, ("celebrity", i, "y"))
    select = session.prepare("SELECT v FROM load.events WHERE user_id = ? LIMIT 1")
    for _ in range(300):
        session.execute(select, ("celebrity",))
    hot = list(session.execute("SELECT kind, rank, partition_key, count, share FROM system.hot_partitions "
                               "WHERE keyspace_name = 'load' AND table_name = 'events'"))
    top_writes = [r for r in hot if r.kind == "writes" and r.rank == 1][0]
    assert top_writes.partition_key == "'celebrity'"
    assert top_writes.count >= 2000 and top_writes.share > 0.8
    top_reads = [r for r in hot if r.kind == "reads" and r.rank == 1][0]
    assert top_reads.partition_key == "'celebrity'" and top_reads.count >= 300


def test_tablet_events_table_is_queryable(session):
    rows = list(session.execute("SELECT * FROM system.tablet_events"))
    assert all(r.kind in ("split", "merge", "hold", "buckets") for r in rows)


def test_tombstone_heavy_reads_warn_the_client(session):
    session.execute("CREATE TABLE IF NOT EXISTS load.queue (q text, seq int, v text, PRIMARY KEY (q, seq))")
    insert = session.prepare("INSERT INTO load.queue (q, seq, v) VALUES (?, ?, ?)")
    delete = session.prepare("DELETE FROM load.queue WHERE q = ? AND seq = ?")
    for i in range(1200):  # the queue anti-pattern: write, consume, delete
        session.execute(insert, ("jobs", i, "x"))
        session.execute(delete, ("jobs", i))
    session.execute(insert, ("jobs", 5000, "live"))
    result = session.execute("SELECT * FROM load.queue WHERE q = 'jobs'")
    assert [r.seq for r in result] == [5000]
    warnings = result.response_future.warnings or []
    assert any("1200 tombstone cells" in w for w in warnings), warnings


def test_size_guardrails_warn_and_refuse(session):
    session.execute("CREATE TABLE IF NOT EXISTS load.blobs (k text PRIMARY KEY, v blob)")
    insert = session.prepare("INSERT INTO load.blobs (k, v) VALUES (?, ?)")
    big_key = session.execute(insert, ("k" * 2000, b"x"))
    assert any("Primary key column k of load.blobs is 2 KB" in w for w in big_key.response_future.warnings or [])
    big_cell = session.execute(insert, ("cell", b"x" * (3 << 20)))
    assert any("Cell v of load.blobs is 3072 KB" in w for w in big_cell.response_future.warnings or [])
    with pytest.raises(InvalidRequest, match="Key length of 70000"):
        session.execute(insert, ("k" * 70000, b"x"))
    assert session.execute("SELECT k FROM load.blobs WHERE k = %s", ("k" * 70000,)).one() is None
