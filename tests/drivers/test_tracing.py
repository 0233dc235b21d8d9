"""Issue 31, item 4: query tracing through the Python driver. A statement
sent with the tracing flag (`execute(..., trace=True)`) is answered with a
tracing id, and the driver's get_query_trace() reads its session and steps
from system_traces.sessions and events: the request, its parameters, the
coordinator, the client, a duration, and each step with the time since the
start. Prepared statements, batches and PREPARE are traced too; untraced
requests are not, unless the node's trace probability (POST
/tracing/probability, `tessera admin settraceprobability`) draws them.
`TRACING ON` in `tessera shell` prints the steps as cqlsh does. On a 2-node
cluster, the coordinator's trace shows the messages to the other replica
and their answers, the replica's own steps come back with its answers, and
the other node lists the session too."""
import os
import subprocess
import uuid

import pytest
from cassandra import ConsistencyLevel
from cassandra.query import BatchStatement, SimpleStatement

from conftest import connect, own_server


@pytest.fixture(scope="module")
def server():
    yield from own_server()


@pytest.fixture(scope="module")
def session(server):
    cluster, session = connect(server)
    session.execute("CREATE KEYSPACE tr WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}")
    session.set_keyspace("tr")
    session.execute("CREATE TABLE t (k int, c int, v text, PRIMARY KEY (k, c))")
    yield session
    cluster.shutdown()


def activities(trace):
    return [e.description for e in trace.events]


def test_a_traced_write_and_read_show_their_steps(session):
    rs = session.execute(SimpleStatement("INSERT INTO t (k, c, v) VALUES (1, 1, 'a')",
                                         consistency_level=ConsistencyLevel.ONE), trace=True)
    trace = rs.get_query_trace(max_wait_sec=5)
    assert isinstance(trace.trace_id, uuid.UUID) and trace.trace_id.version == 1  # a timeuuid, as Cassandra's
    assert trace.request_type == "Execute CQL3 query"
    assert trace.parameters["query"] == "INSERT INTO t (k, c, v) VALUES (1, 1, 'a')"
    assert trace.parameters["consistency_level"] == "ONE"
    assert str(trace.coordinator) == "127.0.0.1" and str(trace.client) == "127.0.0.1"
    assert trace.duration.total_seconds() > 0
    steps = activities(trace)
    assert steps[:2] == ["Parsing INSERT INTO t (k, c, v) VALUES (1, 1, 'a')", "Preparing statement"]
    assert "Applying 1 mutation at ONE" in steps
    assert "Applied 1 writes to the local store" in steps
    # Every step has its source and its time since the start, in order.
    assert all(str(e.source) == "127.0.0.1" for e in trace.events)
    elapsed = [e.source_elapsed.total_seconds() for e in trace.events]
    assert elapsed == sorted(elapsed) and elapsed[-1] <= trace.duration.total_seconds()

    rs = session.execute(SimpleStatement("SELECT v FROM t WHERE k = 1 AND c = 1", fetch_size=50,
                                         consistency_level=ConsistencyLevel.QUORUM), trace=True)
    assert rs.one().v == "a"
    trace = rs.get_query_trace(max_wait_sec=5)
    assert trace.parameters["consistency_level"] == "QUORUM" and trace.parameters["page_size"] == "50"
    steps = activities(trace)
    assert "Executing query on tr.t at QUORUM" in steps
    # The partition's header and the row, on one snapshot.
    assert "Read 2 keys from the local store" in steps, steps


def test_prepared_statements_batches_and_prepare_are_traced(session):
    prepared = session.prepare("INSERT INTO t (k, c, v) VALUES (?, ?, ?)")
    rs = session.execute(prepared, (2, 1, "b"), trace=True)
    trace = rs.get_query_trace(max_wait_sec=5)
    assert trace.request_type == "Execute CQL3 prepared query"
    assert trace.parameters["query"] == "INSERT INTO t (k, c, v) VALUES (?, ?, ?)"
    assert "Parsing" not in " ".join(activities(trace))  # nothing to parse: it was prepared
    assert "Applied 1 writes to the local store" in activities(trace)

    batch = BatchStatement(consistency_level=ConsistencyLevel.ONE)
    batch.add(prepared, (3, 1, "c"))
    batch.add(SimpleStatement("INSERT INTO t (k, c, v) VALUES (3, 2, 'd')"))
    rs = session.execute(batch, trace=True)
    trace = rs.get_query_trace(max_wait_sec=5)
    assert trace.request_type == "Execute batch of CQL3 queries"
    assert trace.parameters["consistency_level"] == "ONE"
    assert "Applying 2 mutations at ONE" in activities(trace)

    # An error is traced as well, and the session still completes.
    rs_future = session.execute_async("SELECT * FROM no_such_table", trace=True)
    with pytest.raises(Exception, match="no_such_table"):
        rs_future.result()


def test_untraced_requests_leave_no_session_until_the_probability_draws_them(server, session):
    rs = session.execute("SELECT * FROM t WHERE k = 1")
    assert rs.get_query_trace() is None  # no tracing id in the answer
    before = len(list(session.execute("SELECT session_id FROM system_traces.sessions")))
    for _ in range(5):
        session.execute("SELECT * FROM t WHERE k = 1")
    assert len(list(session.execute("SELECT session_id FROM system_traces.sessions"))) == before

    assert server.admin("POST", "/tracing/probability?value=1")[0] == 200
    try:
        for _ in range(5):
            session.execute("SELECT * FROM t WHERE k = 2 AND c = 1")
        rows = list(session.execute("SELECT session_id, parameters, duration FROM system_traces.sessions"))
        drawn = [r for r in rows if r.parameters.get("query") == "SELECT * FROM t WHERE k = 2 AND c = 1"]
        assert len(drawn) == 5 and all(r.duration is not None for r in drawn)
        # The reads of system_traces themselves were drawn too, as in Cassandra.
        status, body = server.admin("GET", "/tracing/probability")
        assert status == 200 and '"probability":1' in body.replace(" ", "").replace("1.0", "1")
    finally:
        assert server.admin("POST", "/tracing/probability?value=0")[0] == 200
    # nodetool's words: out of range is refused, and the value stays.
    binary = os.environ["TESSERA_BINARY"]
    out = subprocess.run([binary, "admin", "settraceprobability", "1.5", "--admin", "127.0.0.1:%d" % server.admin_port],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 1 and "between 0 and 1" in out.stderr
    out = subprocess.run([binary, "admin", "gettraceprobability", "--admin", "127.0.0.1:%d" % server.admin_port],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0 and out.stdout.strip() == "Current trace probability: 0"


def test_system_traces_tables_are_in_the_schema(session):
    cluster = session.cluster
    cluster.refresh_schema_metadata()
    tables = cluster.metadata.keyspaces["system_traces"].tables
    assert {"sessions", "events"} <= set(tables)
    assert tables["events"].primary_key[0].name == "session_id"
    assert [c.name for c in tables["events"].clustering_key] == ["event_id"]
    assert tables["sessions"].columns["parameters"].cql_type == "map<text, text>"


def test_the_shell_prints_the_steps_with_tracing_on(server, session):
    session.execute("INSERT INTO t (k, c, v) VALUES (9, 9, 'shell')")
    binary = os.environ["TESSERA_BINARY"]
    script = "TRACING ON;\nSELECT v FROM tr.t WHERE k = 9;\nTRACING OFF;\nSELECT v FROM tr.t WHERE k = 9;\n"
    out = subprocess.run([binary, "shell", "127.0.0.1", str(server.port)], input=script, capture_output=True,
                         text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    text = out.stdout
    assert "Now Tracing is enabled" in text and "Disabled Tracing." in text
    assert text.count("Tracing session: ") == 1  # the second SELECT ran untraced
    assert " activity " in text and " source_elapsed " in text
    assert "Execute CQL3 query" in text and "Request complete" in text
    assert "Parsing SELECT v FROM tr.t WHERE k = 9" in text
    assert text.count("shell") >= 2  # both results printed


def test_a_cluster_coordinator_traces_its_messages_to_the_other_replica():
    from local_cluster import node_session, running_cluster

    for cluster in running_cluster(os.environ["TESSERA_BINARY"], 2, []):
        d, s = node_session(cluster, 1)
        try:
            s.execute("CREATE KEYSPACE ctr WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 2}")
            s.execute("CREATE TABLE ctr.t (k int PRIMARY KEY, v int)")
            rs = s.execute(SimpleStatement("INSERT INTO ctr.t (k, v) VALUES (1, 1)",
                                           consistency_level=ConsistencyLevel.ALL), trace=True)
            write_trace = rs.get_query_trace(max_wait_sec=5)
            steps = activities(write_trace)
            assert "Sending MUTATION message to /127.0.0.2" in steps, steps
            # The replica's own steps, with its address as their source and its own elapsed times.
            remote = [(e.description, str(e.source)) for e in write_trace.events if str(e.source) == "127.0.0.2"]
            assert remote == [("MUTATION message received", "127.0.0.2"),
                              ("Applied 1 writes to the replica's store", "127.0.0.2")], remote
            assert any(a.startswith("MUTATION acknowledged by /127.0.0.2 after ") for a in steps), steps
            assert "Mutation applied on this node's replica" in steps, steps

            rs = s.execute(SimpleStatement("SELECT v FROM ctr.t WHERE k = 1", consistency_level=ConsistencyLevel.ALL),
                           trace=True)
            assert rs.one().v == 1
            trace = rs.get_query_trace(max_wait_sec=5)
            steps = activities(trace)
            assert "Sending READ message to /127.0.0.2" in steps, steps
            assert any(a.startswith("READ answered by /127.0.0.2 after ") for a in steps), steps
            assert "Reading on this node's replica" in steps, steps
            remote = [e.description for e in trace.events if str(e.source) == "127.0.0.2"]
            # Node 2 answers digests of the partition's header and the row (the data comes
            # from node 1's own replica).
            assert remote == ["DIGEST message received", "Digests of 2 keys from the replica's store"], remote
            assert str(trace.coordinator) == "127.0.0.1"

            # A slice of a wide partition reads key ranges of the replicas.
            s.execute("CREATE TABLE ctr.wide (k int, c int, v int, PRIMARY KEY (k, c))")
            # At ALL, so both replicas hold every row before the reads below: a write at the
            # driver's default ONE may still be on its way to node 2, and a digest mismatch
            # would add a data read to the traces (CI of 3fa9e0c saw "Digest of 2 keys").
            insert = SimpleStatement("INSERT INTO ctr.wide (k, c, v) VALUES (1, %s, %s)",
                                     consistency_level=ConsistencyLevel.ALL)
            for c in range(5):
                s.execute(insert, (c, c))
            rs = s.execute(SimpleStatement("SELECT c FROM ctr.wide WHERE k = 1 AND c >= 2",
                                           consistency_level=ConsistencyLevel.ALL), trace=True)
            assert [r.c for r in rs] == [2, 3, 4]
            slice_trace = rs.get_query_trace(max_wait_sec=5)
            slice_steps = activities(slice_trace)
            assert "Sending RANGE message to /127.0.0.2" in slice_steps, slice_steps
            assert any(a.startswith("RANGE answered by /127.0.0.2 after ") for a in slice_steps), slice_steps
            assert "Reading a key range on this node's replica" in slice_steps, slice_steps
            # One message to node 2 for the whole slice: the partition header comes with the rows
            # (one snapshot), not in a READ of its own; node 2 answers a digest of what it read
            # (the data comes from node 1's own replica).
            remote = [e.description for e in slice_trace.events if str(e.source) == "127.0.0.2"]
            assert remote == ["RANGE message received",
                              "Digest of 3 keys of a range and 1 point key from the replica's store"], remote
            # A filtered slice reads on the request's thread (Database::ReadSlice), through the same
            # read: one message per replica, not a READ of the header before the rows.
            rs = s.execute(SimpleStatement("SELECT c FROM ctr.wide WHERE k = 1 AND v = 3 ALLOW FILTERING",
                                           consistency_level=ConsistencyLevel.ALL), trace=True)
            assert [r.c for r in rs] == [3]
            remote = [e.description for e in rs.get_query_trace(max_wait_sec=5).events
                      if str(e.source) == "127.0.0.2"]
            assert remote == ["RANGE message received",
                              "Digest of 5 keys of a range and 1 point key from the replica's store"], remote

            # Node 2 lists the session too (its coordinator sent it there), so a
            # driver that reads the trace through another node finds it.
            d2, s2 = node_session(cluster, 2)
            try:
                from cassandra.query import QueryTrace
                seen = QueryTrace(trace.trace_id, s2)
                seen.populate(max_wait=10)
                assert str(seen.coordinator) == "127.0.0.1" and seen.duration == trace.duration
                assert activities(seen) == steps
            finally:
                d2.shutdown()
        finally:
            d.shutdown()
