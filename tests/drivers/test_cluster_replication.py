"""Replicated tablets through the front door (issue 10, second part): a local
cluster of etcd and three nodes started by `tessera cluster start`; a
keyspace with replication_factor 3 takes writes and reads at QUORUM through
each node (paging, IN, slices, BATCH, DELETE); a replication factor above
the number of nodes is refused; with two nodes killed QUORUM gets
Unavailable (required 2, alive 1) while ONE works; a read at ALL repairs the
replica that missed writes; a stopped (SIGSTOP) replica gives WriteTimeout
and ReadTimeout with Cassandra's fields, and writes waiting for it hold no
thread of their coordinator (those behind them on the same connection are
answered first); counters (counter shards) and conditional statements
(Paxos) run on a replicated keyspace."""
import json
import os
import signal
import struct
import subprocess
import threading
import time

import pytest
from cassandra import ConsistencyLevel, InvalidRequest, ReadTimeout, Unavailable, WriteTimeout
from cassandra.cluster import EXEC_PROFILE_DEFAULT, Cluster, ExecutionProfile
from cassandra.policies import FallthroughRetryPolicy, WhiteListRoundRobinPolicy
from cassandra.query import BatchStatement, SimpleStatement

from raw_protocol import open_ready, query, read_frame
from local_cluster import metric, running_cluster, running_cluster_resumed_at_end, stop_process, wait_until

BINARY = os.environ["TESSERA_BINARY"]
LEASE_SECONDS = 3
Q, ONE, ALL = ConsistencyLevel.QUORUM, ConsistencyLevel.ONE, ConsistencyLevel.ALL


@pytest.fixture(scope="module")
def cluster():
    yield from running_cluster(BINARY, 3, ["--cluster-lease-seconds=%d" % LEASE_SECONDS, "--max-hints-mb=1"])


def node_session(cluster, node):
    """A driver bound to one node (its coordinator), no retries: errors
    arrive as the node sends them."""
    profile = ExecutionProfile(load_balancing_policy=WhiteListRoundRobinPolicy([cluster.address(node)]),
                               retry_policy=FallthroughRetryPolicy(), request_timeout=30)
    driver = Cluster([cluster.address(node)], port=cluster.port, protocol_version=4, connect_timeout=10,
                     execution_profiles={EXEC_PROFILE_DEFAULT: profile})
    return driver, driver.connect()


def run(session, cql, params=None, cl=Q, fetch_size=None):
    return session.execute(SimpleStatement(cql, consistency_level=cl, fetch_size=fetch_size), params)


def unavailable_error(session, cql, cl):
    """The Unavailable the statement raises, or None if it succeeds. A
    killed node is DOWN once its lease expires; until then a request waits
    for it and times out, so callers poll."""
    try:
        run(session, cql, cl=cl)
    except Unavailable as e:
        return e
    except (WriteTimeout, ReadTimeout):
        return None
    return None


def test_rf3_writes_and_reads_at_quorum_through_each_node(cluster):
    d1, s1 = node_session(cluster, 1)
    try:
        s1.execute("CREATE KEYSPACE rep WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 3}")
        s1.execute("CREATE TABLE rep.t (p int, c int, v text, PRIMARY KEY (p, c)) WITH CLUSTERING ORDER BY (c DESC)")
        insert = s1.prepare("INSERT INTO rep.t (p, c, v) VALUES (?, ?, ?)")
        insert.consistency_level = Q
        for p in range(10):
            for c in range(25):
                s1.execute(insert, (p, c, "v%d.%d" % (p, c)))
        batch = BatchStatement(consistency_level=Q)
        for c in range(25, 30):
            batch.add(insert, (3, c, "batched"))
        s1.execute(batch)
    finally:
        d1.shutdown()
    expected = {(p, c) for p in range(10) for c in range(25)} | {(3, c) for c in range(25, 30)}
    for node in (1, 2, 3):
        d, s = node_session(cluster, node)
        try:
            wait_until(lambda: s.cluster.metadata.keyspaces.get("rep") is not None, 10, "schema on node %d" % node)
            rows = list(run(s, "SELECT p, c, v FROM rep.t", fetch_size=17))
            assert len(rows) == len(expected), (node, len(rows))
            assert {(r.p, r.c) for r in rows} == expected
            # Clustering order (DESC) within each partition, partitions whole.
            by_partition = {}
            for r in rows:
                by_partition.setdefault(r.p, []).append(r.c)
            assert all(cs == sorted(cs, reverse=True) for cs in by_partition.values())
            assert len(by_partition) == 10
            assert [r.c for r in run(s, "SELECT c FROM rep.t WHERE p = 3", fetch_size=7)] == list(range(29, -1, -1))
            assert run(s, "SELECT v FROM rep.t WHERE p = 3 AND c = 27").one().v == "batched"
            assert [r.c for r in run(s, "SELECT c FROM rep.t WHERE p = 4 AND c >= 10 AND c < 14")] == [13, 12, 11, 10]
            assert sorted((r.p, r.c) for r in run(s, "SELECT p, c FROM rep.t WHERE p IN (1, 2) AND c IN (0, 24)")) == [
                (1, 0), (1, 24), (2, 0), (2, 24)]
            assert run(s, "SELECT count(*) FROM rep.t WHERE p = 5").one()[0] == 25
        finally:
            d.shutdown()
    # A delete through node 2 is seen at QUORUM through node 3 (read-your-writes).
    d2, s2 = node_session(cluster, 2)
    d3, s3 = node_session(cluster, 3)
    try:
        run(s2, "DELETE FROM rep.t WHERE p = 7")
        run(s2, "DELETE FROM rep.t WHERE p = 8 AND c = 3")
        run(s2, "UPDATE rep.t SET v = 'updated' WHERE p = 9 AND c = 0")
        assert list(run(s3, "SELECT * FROM rep.t WHERE p = 7")) == []
        assert 3 not in [r.c for r in run(s3, "SELECT c FROM rep.t WHERE p = 8")]
        assert run(s3, "SELECT v FROM rep.t WHERE p = 9 AND c = 0").one().v == "updated"
        assert len(list(run(s3, "SELECT p FROM rep.t", fetch_size=50))) == len(expected) - 26
    finally:
        d2.shutdown()
        d3.shutdown()


def test_replication_factor_above_node_count_is_refused(cluster):
    d, s = node_session(cluster, 2)
    try:
        with pytest.raises(InvalidRequest, match="Replication factor 4 exceeds the number of nodes 3"):
            s.execute("CREATE KEYSPACE too_many WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 4}")
        with pytest.raises(InvalidRequest, match="exceeds the number of nodes 3 in data center datacenter1"):
            s.execute("CREATE KEYSPACE too_many WITH replication = "
                      "{'class': 'NetworkTopologyStrategy', 'datacenter1': 5}")
        assert "too_many" not in s.cluster.metadata.keyspaces
    finally:
        d.shutdown()


def test_user_types_reach_every_node_and_their_values_every_replica(cluster):
    """CREATE / ALTER TYPE go through the schema log like tables (issue 12's UDTs on a cluster)."""
    d1, s1 = node_session(cluster, 1)
    try:
        s1.execute("CREATE KEYSPACE udt3 WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 3}")
        s1.execute("CREATE TYPE udt3.addr (street text, zip int)")
        s1.execute("CREATE TABLE udt3.t (k int PRIMARY KEY, a frozen<addr>, h addr)")
        run(s1, "INSERT INTO udt3.t (k, a, h) VALUES (1, {street: 'x', zip: 1}, {zip: 2})")
        s1.execute("ALTER TYPE udt3.addr ADD city text")
        run(s1, "UPDATE udt3.t SET h.city = 'c' WHERE k = 1")
        for node in (1, 2, 3):
            d, s = node_session(cluster, node)
            try:
                row = run(s, "SELECT a, h FROM udt3.t WHERE k = 1", cl=ALL).one()
                assert tuple(row.a) == ("x", 1, None) and tuple(row.h) == (None, 2, "c"), node
                names = run(s, "SELECT field_names FROM system_schema.types WHERE keyspace_name = 'udt3'").one()
                assert names.field_names == ["street", "zip", "city"], node
            finally:
                d.shutdown()
    finally:
        d1.shutdown()


def test_secondary_indexes_on_a_cluster(cluster):
    """CREATE INDEX goes through the schema log; the index's backing table is
    replicated like any other (same uuid on every node), its entries written
    by whichever node coordinates the base write, and read through any node."""
    d1, s1 = node_session(cluster, 1)
    try:
        s1.execute("CREATE KEYSPACE idx3 WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 3}")
        s1.execute("CREATE TABLE idx3.t (k int, c int, g text, PRIMARY KEY (k, c))")
        for k in range(6):  # rows written before the index: the build covers them
            run(s1, "INSERT INTO idx3.t (k, c, g) VALUES (%s, 0, %s)", (k, "g%d" % (k % 2)))
        s1.execute("CREATE INDEX by_g ON idx3.t (g)")
        sessions = [node_session(cluster, n) for n in (2, 3)]
        try:
            for k in range(6, 12):  # writes coordinated by nodes 2 and 3
                run(sessions[k % 2][1], "INSERT INTO idx3.t (k, c, g) VALUES (%s, 1, %s)", (k, "g%d" % (k % 2)))
            run(sessions[0][1], "UPDATE idx3.t SET g = 'g0' WHERE k = 1 AND c = 0")
            expected = sorted([(k, 0) for k in range(6) if k % 2 == 0 or k == 1] +
                              [(k, 1) for k in range(6, 12) if k % 2 == 0])
            for n, s in [(1, s1)] + [(2, sessions[0][1]), (3, sessions[1][1])]:
                wait_until(lambda: sorted((r.k, r.c) for r in run(s, "SELECT k, c FROM idx3.t WHERE g = 'g0'",
                                                                 cl=ALL, fetch_size=4)) == expected,
                           30, "the index read through node %d" % n)
                meta = run(s, "SELECT index_name FROM system_schema.indexes WHERE keyspace_name = 'idx3'").all()
                assert [r.index_name for r in meta] == ["by_g"], n
        finally:
            for d, _ in sessions:
                d.shutdown()
        s1.execute("DROP INDEX idx3.by_g")
        with pytest.raises(InvalidRequest, match="ALLOW FILTERING"):
            run(s1, "SELECT k FROM idx3.t WHERE g = 'g0'")
    finally:
        d1.shutdown()


def test_counters_and_conditional_statements_run_on_replicated_keyspace(cluster):
    d, s = node_session(cluster, 1)
    try:
        s.execute("CREATE TABLE IF NOT EXISTS rep.lwt (k int PRIMARY KEY, v int)")
        # Conditional statements and SERIAL reads run Paxos across the
        # replicas (issue 30; test_cluster_lwt.py has the rest).
        assert s.execute("INSERT INTO rep.lwt (k, v) VALUES (1, 1) IF NOT EXISTS").one()[0] is True
        assert s.execute("UPDATE rep.lwt SET v = 2 WHERE k = 1 IF v = 1").one()[0] is True
        for level in (ConsistencyLevel.SERIAL, ConsistencyLevel.LOCAL_SERIAL):
            assert s.execute(SimpleStatement("SELECT v FROM rep.lwt WHERE k = 1", consistency_level=level)).one().v == 2
        # Counters run across the replicas as counter shards (issue 30;
        # test_cluster_counters.py has the rest).
        s.execute("CREATE TABLE IF NOT EXISTS rep.hits (k int PRIMARY KEY, n counter)")
        s.execute("UPDATE rep.hits SET n = n + 2 WHERE k = 1")
        s.execute("UPDATE rep.hits SET n = n - 5 WHERE k = 1")
        assert s.execute(SimpleStatement("SELECT n FROM rep.hits WHERE k = 1", consistency_level=ALL)).one().n == -3
        # An RF=1 keyspace keeps all three.
        s.execute("CREATE KEYSPACE single WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}")
        s.execute("CREATE TABLE single.lwt (k int PRIMARY KEY, v int)")
        assert s.execute("INSERT INTO single.lwt (k, v) VALUES (1, 1) IF NOT EXISTS").one()[0] is True
        assert s.execute(SimpleStatement("SELECT v FROM single.lwt WHERE k = 1",
                                         consistency_level=ConsistencyLevel.SERIAL)).one().v == 1
        s.execute("CREATE TABLE single.hits (k int PRIMARY KEY, n counter)")
        s.execute("UPDATE single.hits SET n = n + 2 WHERE k = 1")
        assert s.execute("SELECT n FROM single.hits WHERE k = 1").one().n == 2
    finally:
        d.shutdown()


def stop_two_and_wait_unavailable(cluster, session, table):
    cluster.kill(2)
    cluster.kill(3)
    # Polled with a read: a write sent before node 1 sees them down times
    # out but is applied on node 1 (a time-out is not a rollback).
    probe = "SELECT * FROM %s WHERE k = -1" % table
    wait_until(lambda: unavailable_error(session, probe, Q) is not None, 10 * LEASE_SECONDS,
               "node 1 sees nodes 2 and 3 down")
    # Unavailable is decided before anything is sent: this write is nowhere.
    return unavailable_error(session, "INSERT INTO %s (k, v) VALUES (-1, -1)" % table, Q)


def restart_two_and_wait_hints(cluster):
    cluster.start_node(2)
    cluster.start_node(3)
    wait_until(lambda: metric(cluster, 1, "tessera_hints_pending") == 0, 60, "node 1 delivered its hints")


def test_two_nodes_down_quorum_unavailable_one_works_hints_delivered(cluster):
    d1, s1 = node_session(cluster, 1)
    try:
        s1.execute("CREATE TABLE rep.down (k int PRIMARY KEY, v int)")
        # RF 1 over 8 tablets: each node holds some of them alone.
        s1.execute("CREATE KEYSPACE IF NOT EXISTS single "
                   "WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}")
        s1.execute("CREATE TABLE single.anywhere (k int PRIMARY KEY, v int) WITH initial_tablets = 8")
        e = stop_two_and_wait_unavailable(cluster, s1, "rep.down")
        assert (e.consistency, e.required_replicas, e.alive_replicas) == (Q, 2, 1)
        e = unavailable_error(s1, "SELECT * FROM rep.down WHERE k = 1", ALL)
        assert (e.consistency, e.required_replicas, e.alive_replicas) == (ALL, 3, 1)
        delivered = metric(cluster, 1, "tessera_hints_delivered_total")
        for k in range(50):
            run(s1, "INSERT INTO rep.down (k, v) VALUES (%s, %s)", (k, k * k), cl=ONE)
        assert len(list(run(s1, "SELECT k FROM rep.down", cl=ONE))) == 50
        # Two replicas missed each write: 100 hints wait on node 1.
        assert metric(cluster, 1, "tessera_hints_pending") == 100
        # ANY: a write whose only replica is down is acknowledged once its
        # hint is stored (Cassandra's ANY); the others are written on node 1.
        for k in range(50):
            run(s1, "INSERT INTO single.anywhere (k, v) VALUES (%s, %s)", (k, k + 1), cl=ConsistencyLevel.ANY)
        hinted = metric(cluster, 1, "tessera_hints_pending") - 100
        assert 0 < hinted < 50, hinted
    finally:
        d1.shutdown()
    restart_two_and_wait_hints(cluster)
    assert metric(cluster, 1, "tessera_hints_delivered_total") - delivered == 100 + hinted
    d1, s1 = node_session(cluster, 1)
    try:
        rows = list(run(s1, "SELECT k, v FROM single.anywhere", cl=ONE))
        assert sorted((r.k, r.v) for r in rows) == [(k, k + 1) for k in range(50)]
    finally:
        d1.shutdown()
    cluster.kill(1)
    cluster.kill(2)
    d3, s3 = node_session(cluster, 3)
    try:
        # Alone, node 3 answers at ONE from its own replica: the hints
        # brought it every write it missed, with no read repair.
        rows = list(run(s3, "SELECT k, v FROM rep.down", cl=ONE))
        assert sorted((r.k, r.v) for r in rows) == [(k, k * k) for k in range(50)]
    finally:
        d3.shutdown()
    cluster.start_node(1)
    cluster.start_node(2)


def repair(cluster, node, *args):
    out = subprocess.run([BINARY, "repair", "--admin", "%s:%d" % (cluster.address(node), cluster.admin_port), "--json",
                          *args], capture_output=True, text=True, timeout=300)
    assert out.returncode in (0, 1), out.stderr
    return out.returncode, json.loads(out.stdout)


def local_rows(cluster, node, cql):
    """Rows of `cql` as node `node` alone holds them (ONE, local replica)."""
    d, s = node_session(cluster, node)
    try:
        return sorted(tuple(r) for r in run(s, cql, cl=ONE, fetch_size=500))
    finally:
        d.shutdown()


def test_hints_over_their_bound_are_dropped_and_repair_makes_replicas_identical(cluster):
    # Nodes run with --max-hints-mb=1: two nodes down while 1,500 rows of
    # 1 KiB are written at ONE leaves most of their hints dropped; repair
    # then finds the tablets whose digests differ and repairs them.
    d1, s1 = node_session(cluster, 1)
    try:
        wait_until(lambda: run(s1, "SELECT * FROM rep.down WHERE k = 1", cl=ALL) is not None, 30, "every node up")
        s1.execute("CREATE TABLE rep.big (k int PRIMARY KEY, v text) WITH initial_tablets = 4")
        stop_two_and_wait_unavailable(cluster, s1, "rep.down")
        dropped = metric(cluster, 1, "tessera_hints_dropped_total")
        insert = s1.prepare("INSERT INTO rep.big (k, v) VALUES (?, ?)")
        insert.consistency_level = ONE
        for k in range(1500):
            s1.execute(insert, (k, ("%04d" % k) * 256))
        assert metric(cluster, 1, "tessera_hints_dropped_total") - dropped > 1000
        run(s1, "DELETE FROM rep.big WHERE k = 7", cl=ONE)
    finally:
        d1.shutdown()
    restart_two_and_wait_hints(cluster)
    expected = [(k, ("%04d" % k) * 256) for k in range(1500) if k != 7]
    assert local_rows(cluster, 1, "SELECT k, v FROM rep.big") == expected
    held_by_3 = {r[0] for r in local_rows(cluster, 3, "SELECT k FROM rep.big")}
    assert len(held_by_3) < 1000  # node 3 missed most writes
    # A read at ALL through node 3 asks its own replica for data and the
    # others for digests (Cassandra's digest read); they disagree on a key
    # nodes 2 and 3 missed (written at ONE through node 1), so it reads again
    # in full and repairs their copies.
    missed = min(k for k in range(1500) if k not in held_by_3 and k != 7)
    digest_reads = metric(cluster, 3, "tessera_coordinator_digest_reads_total")
    mismatches = metric(cluster, 3, "tessera_coordinator_digest_mismatches_total")
    d3, s3 = node_session(cluster, 3)
    try:
        assert run(s3, "SELECT v FROM rep.big WHERE k = %s", (missed,), cl=ALL).one().v == ("%04d" % missed) * 256
    finally:
        d3.shutdown()
    assert metric(cluster, 3, "tessera_coordinator_digest_reads_total") == digest_reads + 1
    assert metric(cluster, 3, "tessera_coordinator_digest_mismatches_total") == mismatches + 1
    assert (missed,) in local_rows(cluster, 3, "SELECT k FROM rep.big WHERE k = %d" % missed)
    code, report = repair(cluster, 2, "--keyspace", "rep", "--table", "big")
    assert code == 0, report
    tablets = report["tablets"]
    assert tablets and report["failed"] == 0 and report["repaired"] >= 1
    for t in tablets:
        assert t["consistent"], t
        final = t.get("after", t["replicas"])
        assert len(final) == 3 and len({(r["digest"], r["keys"]) for r in final}) == 1, t
    assert sum(t["keys_written"] for t in tablets) > 1000
    # Repaired: every replica alone returns the same rows, the deleted one
    # included as deleted; a second repair finds nothing to do.
    for node in (1, 2, 3):
        assert local_rows(cluster, node, "SELECT k, v FROM rep.big") == expected, node
    code, again = repair(cluster, 3, "--keyspace", "rep")
    assert code == 0 and again["repaired"] == 0 and again["consistent"] == len(again["tablets"]), again


def test_every_node_holds_the_repaired_tables_tombstones_until_the_repair_ends(cluster):
    # A replica that purged a tombstone while a repair ran would let the
    # repair bring the deleted row back from a replica that missed the
    # delete: from before the first digest to the end, no node purges.
    held = "tessera_tombstone_purge_held_ranges"
    assert [metric(cluster, n, held) for n in (1, 2, 3)] == [0, 0, 0]
    status, body = cluster.admin_post(2, "/failpoints?name=repair.held&action=pause")
    assert status == 200, body
    result = {}
    repairing = threading.Thread(target=lambda: result.setdefault("report", repair(cluster, 2, "--keyspace", "rep")))
    repairing.start()
    try:
        tables = len(local_rows(cluster, 1, "SELECT table_name FROM system_schema.tables WHERE keyspace_name = 'rep'"))
        # Every node holds each of rep's tables (one range each) once the repair is past its holds.
        wait_until(lambda: [metric(cluster, n, held) for n in (1, 2, 3)] == [tables] * 3, 30,
                   "every node holding rep's %d tables" % tables)
        assert repairing.is_alive()  # held at the failpoint, before any digest
    finally:
        status, body = cluster.admin_post(2, "/failpoints?name=repair.held&action=off")
    assert status == 200, body
    repairing.join(120)
    code, report = result["report"]
    assert code == 0 and report["failed"] == 0, report
    # Released on every node once the repair is done (its lease revoked).
    wait_until(lambda: [metric(cluster, n, held) for n in (1, 2, 3)] == [0, 0, 0], 30, "the holds released")


@pytest.fixture(scope="module")
def slow_cluster():
    # A long lease and failure-detector timeout: a SIGSTOPped node stays up to
    # its peer, so requests reach it and time out (rather than being refused
    # as Unavailable).
    yield from running_cluster_resumed_at_end(BINARY, 2, ["--cluster-lease-seconds=30",
                                                          "--failure-detector-timeout-ms=30000",
                                                          "--write-request-timeout-ms=1000",
                                                          "--read-request-timeout-ms=1000"])


def test_stopped_replica_gives_write_and_read_timeouts(slow_cluster):
    d, s = node_session(slow_cluster, 1)
    try:
        s.execute("CREATE KEYSPACE slow WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 2}")
        s.execute("CREATE TABLE slow.t (k int PRIMARY KEY, v int)")
        run(s, "INSERT INTO slow.t (k, v) VALUES (1, 1)", cl=ALL)
        pid2 = slow_cluster.manifest()["nodes"][1]["pid"]
        stop_process(pid2)
        try:
            started = time.monotonic()
            with pytest.raises(WriteTimeout) as e:
                run(s, "INSERT INTO slow.t (k, v) VALUES (2, 2)", cl=ALL)
            assert time.monotonic() - started < 10
            assert (e.value.consistency, e.value.received_responses, e.value.required_responses) == (ALL, 1, 2)
            assert e.value.write_type == 0  # SIMPLE
            batch = BatchStatement(consistency_level=ALL)
            batch.add(SimpleStatement("INSERT INTO slow.t (k, v) VALUES (3, 3)"))
            batch.add(SimpleStatement("INSERT INTO slow.t (k, v) VALUES (4, 4)"))
            with pytest.raises(WriteTimeout) as e:
                s.execute(batch)
            assert e.value.write_type == 1  # BATCH (logged)
            with pytest.raises(ReadTimeout) as e:
                run(s, "SELECT * FROM slow.t WHERE k = 1", cl=ALL)
            assert (e.value.received_responses, e.value.required_responses) == (1, 2)
            assert e.value.data_retrieved
            # ONE is answered by node 1 alone.
            run(s, "INSERT INTO slow.t (k, v) VALUES (5, 5)", cl=ONE)
            assert run(s, "SELECT v FROM slow.t WHERE k = 5", cl=ONE).one().v == 5
        finally:
            os.kill(pid2, signal.SIGCONT)
        # Node 2 back: the writes that timed out were applied on node 1 (a
        # time-out is not a rollback) and ALL reads repair node 2.
        wait_until(lambda: run(s, "SELECT v FROM slow.t WHERE k = 2", cl=ALL).one().v == 2, 20, "ALL read after SIGCONT")
    finally:
        d.shutdown()


def slow_keyspace_session(cluster):
    """A driver and session on node 1 of `cluster`, keyspace slow (RF 2) made."""
    d, s = node_session(cluster, 1)
    s.execute("CREATE KEYSPACE IF NOT EXISTS slow WITH replication = "
              "{'class': 'SimpleStrategy', 'replication_factor': 2}")
    return d, s


def answered_behind_a_stopped_replica(cluster, at_all, at_one, timeout_code, what, held_consistency=0x0005):
    # Issue 28, item 1: a coordinator does not wait for replicas on a thread.
    # One raw connection to node 1; node 2 stopped. The statements of `at_all`
    # (40: more than node 1 has request threads) go at ALL and wait for node 2
    # until their 1 s time-out; those of `at_one`, sent behind them on the same
    # connection, are answered first, long before the 40 time out. A
    # coordinator holding a thread per request would answer them only as the
    # ALL requests time out, a few at a time. `held_consistency`: the level of
    # `at_all` (ALL unless given: SERIAL, 0x0008). Returns the ONE answers as
    # (stream, opcode, body, seconds after sending); streams count from 1,
    # `at_all` first.
    pid2 = cluster.manifest()["nodes"][1]["pid"]
    conn = open_ready(cluster.port)
    conn.settimeout(30)
    stop_process(pid2)
    try:
        sent = time.monotonic()
        conn.sendall(b"".join(query(q, i + 1, consistency=held_consistency) for i, q in enumerate(at_all)))
        conn.sendall(b"".join(query(q, len(at_all) + i + 1, consistency=0x0001) for i, q in enumerate(at_one)))
        arrivals = []  # (stream, opcode, body, seconds after sending)
        for _ in range(len(at_all) + len(at_one)):
            stream, opcode, body = read_frame(conn)
            arrivals.append((stream, opcode, body, time.monotonic() - sent))
    finally:
        os.kill(pid2, signal.SIGCONT)
        conn.close()
    one = [a for a in arrivals if a[0] > len(at_all)]
    held = [a for a in arrivals if a[0] <= len(at_all)]
    assert sorted(a[0] for a in arrivals) == list(range(1, len(arrivals) + 1))
    assert all(a[1] == 0x08 for a in one), [a for a in one if a[1] != 0x08][:3]  # RESULT
    assert all(a[1] == 0x00 and struct.unpack(">i", a[2][:4])[0] == timeout_code for a in held), held[:3]
    # Every ONE request was answered before the first ALL request timed out.
    assert max(a[3] for a in one) < min(a[3] for a in held), (max(a[3] for a in one), min(a[3] for a in held))
    # All 40 time out together (each after its own 1 s), not a few at a time.
    assert max(a[3] for a in held) < 10, max(a[3] for a in held)
    print("%d %s at ONE answered within %.0f ms while %d at %s waited for a stopped replica; "
          "those timed out after %.2f-%.2f s" % (len(one), what, max(a[3] for a in one) * 1000, len(held),
                                                 {0x0005: "ALL", 0x0008: "SERIAL"}.get(held_consistency, "?"),
                                                 min(a[3] for a in held), max(a[3] for a in held)))
    return one


def fill_at_all(cluster, ddl, insert, values):
    """Makes a table of keyspace slow through node 1 (`ddl`: a statement or
    a list of them) and writes each tuple of `values` with the prepared
    `insert`, at ALL."""
    d, s = slow_keyspace_session(cluster)
    try:
        for statement in [ddl] if isinstance(ddl, str) else ddl:
            s.execute(statement)
        prepared = s.prepare(insert)
        prepared.consistency_level = ALL
        for v in values:
            s.execute(prepared, v)
    finally:
        d.shutdown()


def test_writes_waiting_for_a_stopped_replica_hold_no_thread_of_their_coordinator(slow_cluster):
    d, s = slow_keyspace_session(slow_cluster)
    try:
        s.execute("CREATE TABLE IF NOT EXISTS slow.held (k int PRIMARY KEY, v int)")
        run(s, "INSERT INTO slow.held (k, v) VALUES (0, 0)", cl=ALL)
    finally:
        d.shutdown()
    answered_behind_a_stopped_replica(
        slow_cluster, ["INSERT INTO slow.held (k, v) VALUES (%d, 1)" % k for k in range(1, 41)],
        ["INSERT INTO slow.held (k, v) VALUES (%d, 2)" % k for k in range(41, 201)], 0x1100, "writes")


def test_index_and_view_writes_waiting_for_a_stopped_replica_hold_no_thread(slow_cluster):
    # A write to a table with a secondary index and a view reads the rows it
    # touches before and after, under its partition's lock, and writes the
    # index entries and view rows (Coordinator, coordinator/derived_writes.cc):
    # all of it without a thread. The 40 at ALL wait for node 2 in their
    # first read and time out; the 160 at ONE, each of its own partition, are
    # answered meanwhile, and their entries and view rows are there.
    fill_at_all(slow_cluster, ["CREATE TABLE IF NOT EXISTS slow.derived_held (k int PRIMARY KEY, tag int, v int)",
                               "CREATE INDEX IF NOT EXISTS derived_held_v ON slow.derived_held (v)",
                               "CREATE MATERIALIZED VIEW IF NOT EXISTS slow.derived_held_by_tag AS "
                               "SELECT * FROM slow.derived_held WHERE tag IS NOT NULL AND k IS NOT NULL "
                               "PRIMARY KEY (tag, k)"],
                "INSERT INTO slow.derived_held (k, tag, v) VALUES (?, ?, ?)", [(0, 0, 0)])
    write = "INSERT INTO slow.derived_held (k, tag, v) VALUES (%d, %d, %d)"
    answered_behind_a_stopped_replica(slow_cluster, [write % (k, 1000 + k, 7 * k) for k in range(1, 41)],
                                      [write % (k, 1000 + k, 7 * k) for k in range(41, 201)], 0x1200,
                                      "writes with an index and a view")
    d, s = slow_keyspace_session(slow_cluster)
    try:
        for k in (41, 120, 200):
            assert [r.k for r in run(s, "SELECT k FROM slow.derived_held WHERE v = %d" % (7 * k), cl=ALL)] == [k]
            assert [(r.k, r.v) for r in run(s, "SELECT k, v FROM slow.derived_held_by_tag WHERE tag = %d" % (1000 + k),
                                            cl=ALL)] == [(k, 7 * k)]
        # The first read of each write at ALL timed out: nothing of them was written.
        assert list(run(s, "SELECT k FROM slow.derived_held WHERE v = 7", cl=ALL)) == []
        assert list(run(s, "SELECT k FROM slow.derived_held_by_tag WHERE tag = 1001", cl=ALL)) == []
    finally:
        d.shutdown()


def test_counter_increments_waiting_for_a_stopped_replica_hold_no_thread(slow_cluster):
    # A counter increment asks its leader (node 1 itself here) for the
    # shards, then sends them to the other replicas (ReplicatedTablet::
    # ApplyCounterWriteAsync): no thread waits. The 40 at ALL wait for node
    # 2's acknowledgement and time out; the 160 at ONE are answered meanwhile
    # and count once each.
    fill_at_all(slow_cluster, "CREATE TABLE IF NOT EXISTS slow.counts_held (k int PRIMARY KEY, c counter)",
                "UPDATE slow.counts_held SET c = c + 1 WHERE k = ?", [(0,)])
    add = "UPDATE slow.counts_held SET c = c + %d WHERE k = %d"
    answered_behind_a_stopped_replica(slow_cluster, [add % (k, k) for k in range(1, 41)],
                                      [add % (k, k) for k in range(41, 201)], 0x1100, "counter increments")
    d, s = slow_keyspace_session(slow_cluster)
    try:
        counts = {r.k: r.c for r in run(s, "SELECT k, c FROM slow.counts_held", cl=ALL)}
        assert all(counts.get(k) == k for k in range(41, 201)), [(k, counts.get(k)) for k in range(41, 201)
                                                                   if counts.get(k) != k][:5]
        # A time-out is not a rollback: node 1, their leader, stored the 40 (each once).
        assert all(counts.get(k) == k for k in range(1, 41)), [(k, counts.get(k)) for k in range(1, 41)
                                                                 if counts.get(k) != k][:5]
    finally:
        d.shutdown()


def test_conditional_writes_waiting_for_a_stopped_replica_hold_no_thread(slow_cluster):
    # A lightweight transaction is a chain (cql/executor/conditional_writes.h):
    # its Paxos prepare, its read, its proposal and commit each continue from
    # the answers of the one before (cluster/paxos_coordinator.h), so no
    # thread waits for them. Here the 40 conditional inserts need node 2's
    # promise (a quorum of 2) and time out in their prepare; the 160 plain
    # writes at ONE sent behind them on the same connection are answered
    # meanwhile. Nothing of the 40 is written; once node 2 runs again, the
    # same statements apply.
    fill_at_all(slow_cluster, "CREATE TABLE IF NOT EXISTS slow.lwt_held (k int PRIMARY KEY, v int)",
                "INSERT INTO slow.lwt_held (k, v) VALUES (?, ?)", [(0, 0)])
    answered_behind_a_stopped_replica(
        slow_cluster, ["INSERT INTO slow.lwt_held (k, v) VALUES (%d, 1) IF NOT EXISTS" % k for k in range(1, 41)],
        ["INSERT INTO slow.lwt_held (k, v) VALUES (%d, 2)" % k for k in range(41, 201)], 0x1100,
        "writes behind conditional inserts")
    d, s = slow_keyspace_session(slow_cluster)
    try:
        rows = {r.k: r.v for r in run(s, "SELECT k, v FROM slow.lwt_held", cl=ALL)}
        assert {k: v for k, v in rows.items() if k > 0} == {k: 2 for k in range(41, 201)}, sorted(rows)[:5]
        for k in (1, 2, 41):
            applied = list(run(s, "INSERT INTO slow.lwt_held (k, v) VALUES (%d, 3) IF NOT EXISTS" % k, cl=Q))[0]
            assert applied[0] is (k != 41), (k, applied)
        assert {r.k: r.v for r in run(s, "SELECT k, v FROM slow.lwt_held WHERE k IN (1, 2, 41)", cl=ALL)} == \
            {1: 3, 2: 3, 41: 2}
    finally:
        d.shutdown()


def test_serial_reads_waiting_for_a_stopped_replica_hold_no_thread(slow_cluster):
    # A read at SERIAL makes a Paxos prepare on its partition before it
    # reads (to finish a conditional write left in progress there); on a
    # cluster node both are steps of one replayed run (DeferredRead::replay,
    # ReplayedRead::Kind::kPaxos), so no thread waits for them. The 40 SERIAL
    # reads need node 2's promise and time out (ReadTimeout); the 160 reads at
    # ONE behind them are answered meanwhile. Once node 2 runs again a SERIAL
    # read returns the row.
    fill_at_all(slow_cluster, "CREATE TABLE IF NOT EXISTS slow.serial_held (k int PRIMARY KEY, v int)",
                "INSERT INTO slow.serial_held (k, v) VALUES (?, ?)", [(k, k) for k in range(1, 201)])
    one = answered_behind_a_stopped_replica(
        slow_cluster, ["SELECT v FROM slow.serial_held WHERE k = %d" % k for k in range(1, 41)],
        ["SELECT v FROM slow.serial_held WHERE k = %d" % k for k in range(41, 201)], 0x1200, "reads behind SERIAL reads",
        held_consistency=0x0008)
    assert all(a[2].endswith(struct.pack(">i", 4) + struct.pack(">i", a[0])) for a in one), one[:2]
    d, s = slow_keyspace_session(slow_cluster)
    try:
        assert [r.v for r in run(s, "SELECT v FROM slow.serial_held WHERE k = 7", cl=ConsistencyLevel.SERIAL)] == [7]
    finally:
        d.shutdown()


def test_slices_read_through_replicas_return_what_a_single_store_would(slow_cluster):
    # Issue 28 item 1 for slices: a SELECT of one partition's slice reads
    # its windows without a thread (Coordinator::ReadSliceAsync). Shapes that
    # take several windows and skip dead rows: bounds both ways, DESC, LIMIT
    # below and above the live rows, pages of 7, deleted rows and a deleted
    # range between live ones, expiring cells; each against the rows
    # computed here, at every level.
    d, s = slow_keyspace_session(slow_cluster)
    try:
        s.execute("CREATE TABLE IF NOT EXISTS slow.slices (k int, c int, v int, PRIMARY KEY (k, c))")
        insert = s.prepare("INSERT INTO slow.slices (k, c, v) VALUES (?, ?, ?)")
        insert.consistency_level = ALL
        for k in (1, 2):
            for c in range(300):
                s.execute(insert, (k, c, 1000 * k + c))
        live = {k: {c: 1000 * k + c for c in range(300)} for k in (1, 2)}
        for c in range(0, 300, 3):  # every third row deleted
            run(s, "DELETE FROM slow.slices WHERE k = 1 AND c = %d" % c, cl=ALL)
            del live[1][c]
        run(s, "DELETE FROM slow.slices WHERE k = 1 AND c >= 100 AND c < 250", cl=ALL)  # a range tombstone
        for c in range(100, 250):
            live[1].pop(c, None)
        shapes = [("", lambda c: True), ("AND c >= 40", lambda c: c >= 40), ("AND c < 120", lambda c: c < 120),
                  ("AND c > 90 AND c <= 260", lambda c: 90 < c <= 260)]
        checked = 0
        for k in (1, 2):
            for where, keep in shapes:
                for order in ("", " ORDER BY c DESC"):
                    for limit in (None, 1, 10, 77, 1000):
                        expected = sorted((c for c in live[k] if keep(c)), reverse=bool(order))
                        if limit is not None:
                            expected = expected[:limit]
                        cql = "SELECT c, v FROM slow.slices WHERE k = %d %s%s%s" % (
                            k, where, order, "" if limit is None else " LIMIT %d" % limit)
                        for cl, fetch in ((ONE, None), (Q, 7), (ALL, None)):
                            got = [(r.c, r.v) for r in run(s, cql, cl=cl, fetch_size=fetch)]
                            assert got == [(c, live[k][c]) for c in expected], (cql, cl, fetch)
                            checked += 1
        # Static columns come with the slice, on every page, and a partition
        # with only its static row shows as one row (Cassandra's rule).
        s.execute("CREATE TABLE IF NOT EXISTS slow.statics (k int, c int, s text static, v int, PRIMARY KEY (k, c))")
        for c in range(40):
            run(s, "INSERT INTO slow.statics (k, c, v) VALUES (1, %d, %d)" % (c, c), cl=ALL)
        run(s, "UPDATE slow.statics SET s = 'one' WHERE k = 1", cl=ALL)
        run(s, "UPDATE slow.statics SET s = 'alone' WHERE k = 2", cl=ALL)
        for cl, fetch in ((ONE, None), (Q, 7), (ALL, 3)):
            got = [(r.c, r.s, r.v) for r in run(s, "SELECT c, s, v FROM slow.statics WHERE k = 1 AND c >= 5 "
                                                   "ORDER BY c DESC LIMIT 30", cl=cl, fetch_size=fetch)]
            assert got == [(c, "one", c) for c in range(39, 9, -1)], (cl, fetch, got[:3])
            got = [(r.c, r.s, r.v) for r in run(s, "SELECT c, s, v FROM slow.statics WHERE k = 2", cl=cl,
                                                fetch_size=fetch)]
            assert got == [(None, "alone", None)], (cl, fetch, got)
            got = [(r.c, r.s) for r in run(s, "SELECT c, s FROM slow.statics WHERE k = 2 AND c > 3", cl=cl)]
            assert got == [], (cl, got)
            checked += 3
        # A cell that expires is gone from the slice (its row too, having no other live cell).
        run(s, "INSERT INTO slow.slices (k, c, v) VALUES (3, 1, 1) USING TTL 1", cl=ALL)
        run(s, "INSERT INTO slow.slices (k, c, v) VALUES (3, 2, 2)", cl=ALL)
        wait_until(lambda: [r.c for r in run(s, "SELECT c FROM slow.slices WHERE k = 3", cl=ALL)] == [2], 30,
                   "the expiring row to go")
        print("%d slice reads through 2 replicas matched" % checked)
    finally:
        d.shutdown()


def test_slices_waiting_for_a_stopped_replica_hold_no_thread_of_their_coordinator(slow_cluster):
    # The same for slices of one partition, with its static row: the ONE
    # slices (newest three of five rows) are answered from node 1's replica
    # while 40 at ALL wait.
    d, s = slow_keyspace_session(slow_cluster)
    try:
        s.execute("CREATE TABLE IF NOT EXISTS slow.slice_held (k int, c int, v int, s int static, "
                  "PRIMARY KEY (k, c))")
        insert = s.prepare("INSERT INTO slow.slice_held (k, c, v, s) VALUES (?, ?, ?, ?)")
        insert.consistency_level = ALL
        for k in range(1, 201):
            for c in range(5):
                s.execute(insert, (k, c, 10 * k + c, k))
    finally:
        d.shutdown()
    one = answered_behind_a_stopped_replica(
        slow_cluster, ["SELECT c, v, s FROM slow.slice_held WHERE k = %d AND c >= 1" % k for k in range(1, 41)],
        ["SELECT c, v, s FROM slow.slice_held WHERE k = %d AND c >= 1 ORDER BY c DESC LIMIT 3" % k
         for k in range(41, 201)], 0x1200, "slices")
    # Each a Rows result (kind 2) of 3 rows ending with c = 2:
    # [int 4][int 2][int 4][int 10k + 2][int 4][int k], the static k on every row.
    for stream, _, body, _ in one:
        assert struct.unpack(">i", body[:4])[0] == 2, stream
        assert body[-24:] == struct.pack(">iiiiii", 4, 2, 4, 10 * stream + 2, 4, stream), stream
        assert body[-48:-44] == struct.pack(">i", 4) and body[-44:-40] == struct.pack(">i", 3), stream
        assert struct.unpack(">i", body[-76:-72])[0] == 3, stream  # the row count, before 3 rows of 24 bytes


def test_reads_waiting_for_a_stopped_replica_hold_no_thread_of_their_coordinator(slow_cluster):
    # For reads: a SELECT of one row answers from the thread of the replica
    # answer that completes it; the ONE reads are answered from node 1's replica.
    d, s = slow_keyspace_session(slow_cluster)
    try:
        s.execute("CREATE TABLE IF NOT EXISTS slow.read_held (k int PRIMARY KEY, v int)")
        insert = s.prepare("INSERT INTO slow.read_held (k, v) VALUES (?, ?)")
        insert.consistency_level = ALL
        for k in range(1, 201):
            s.execute(insert, (k, 7 * k))
    finally:
        d.shutdown()
    one = answered_behind_a_stopped_replica(
        slow_cluster, ["SELECT v FROM slow.read_held WHERE k = %d" % k for k in range(1, 41)],
        ["SELECT v FROM slow.read_held WHERE k = %d" % k for k in range(41, 201)], 0x1200, "reads")
    # Each a Rows result (kind 2) ending with its one row's v: [int 4][int 7k].
    for stream, _, body, _ in one:
        assert struct.unpack(">i", body[:4])[0] == 2 and body[-8:] == struct.pack(">ii", 4, 7 * stream), stream


def int_rows(body):
    """The rows of a Rows RESULT body whose columns are all int (native protocol v4 §4.2.5.2)."""
    kind, flags, columns = struct.unpack(">iii", body[:12])
    assert kind == 2, kind
    at = 12
    if flags & 0x0002:  # has more pages: [bytes] paging state
        n = struct.unpack(">i", body[at:at + 4])[0]
        at += 4 + max(n, 0)

    def string(at):
        n = struct.unpack(">H", body[at:at + 2])[0]
        return at + 2 + n
    if not flags & 0x0004:  # metadata
        if flags & 0x0001:  # global table spec
            at = string(string(at))
        for _ in range(columns):
            at = string(at)
            assert struct.unpack(">H", body[at:at + 2])[0] == 0x0009  # int
            at += 2
    count = struct.unpack(">i", body[at:at + 4])[0]
    at += 4
    rows = []
    for _ in range(count):
        row = []
        for _ in range(columns):
            n = struct.unpack(">i", body[at:at + 4])[0]
            row.append(struct.unpack(">i", body[at + 4:at + 8])[0] if n == 4 else None)
            at += 4 + max(n, 0)
        rows.append(tuple(row))
    assert at == len(body)
    return rows


def test_in_reads_of_several_partitions_return_what_a_single_store_would(slow_cluster):
    # Issue 28 item 1 for IN: whole rows of several partitions (IN on the
    # partition key, and on the clustering key too) are read all at once
    # without a thread, then the statement runs again over them; LIMIT and
    # pages take what they need. Checked against the rows computed here, at
    # every level, with missing keys, deleted rows and an expired one.
    d, s = slow_keyspace_session(slow_cluster)
    try:
        s.execute("CREATE TABLE IF NOT EXISTS slow.in_rows (k int, c int, v int, PRIMARY KEY (k, c))")
        s.execute("CREATE TABLE IF NOT EXISTS slow.in_keys (k int PRIMARY KEY, v int)")
        rows = s.prepare("INSERT INTO slow.in_rows (k, c, v) VALUES (?, ?, ?)")
        keys = s.prepare("INSERT INTO slow.in_keys (k, v) VALUES (?, ?)")
        rows.consistency_level = keys.consistency_level = ALL
        live = {}
        for k in range(30):
            s.execute(keys, (k, 5 * k))
            for c in range(4):
                s.execute(rows, (k, c, 100 * k + c))
                live[(k, c)] = 100 * k + c
        for k, c in ((3, 1), (4, 0), (4, 1), (4, 2), (4, 3)):
            run(s, "DELETE FROM slow.in_rows WHERE k = %d AND c = %d" % (k, c), cl=ALL)
            del live[(k, c)]
        run(s, "DELETE FROM slow.in_keys WHERE k = 7", cl=ALL)
        run(s, "INSERT INTO slow.in_keys (k, v) VALUES (8, 8) USING TTL 1", cl=ALL)
        wait_until(lambda: run(s, "SELECT v FROM slow.in_keys WHERE k = 8", cl=ALL).one() is None, 30,
                   "the expiring row to go")
        key_values = {k: 5 * k for k in range(30) if k not in (7, 8)}
        # Partitions come in token order, as a scan of any table keyed by k returns them.
        token_order = {}
        for r in run(s, "SELECT k FROM slow.in_rows", cl=ALL):
            token_order.setdefault(r.k, len(token_order))
        assert len(token_order) == 29  # all but k = 4, whose rows are all deleted
        scanned_keys = [r.k for r in run(s, "SELECT k FROM slow.in_keys", cl=ALL)]
        assert len(scanned_keys) == 28  # all but k = 7 and 8
        after = scanned_keys[scanned_keys.index(4) - 1]  # k = 4 sits between its scan neighbours
        token_order[4] = token_order[after] + 0.5
        checked = 0
        for ks in ([1, 2, 3], [9, 3, 4, 50, 11], list(range(0, 30, 2)), [7, 8, 40]):
            in_list = ", ".join(map(str, ks))
            expected = sorted(((k, key_values[k]) for k in set(ks) if k in key_values),
                              key=lambda r: token_order[r[0]])
            for limit in (None, 1, 3):
                want = expected if limit is None else expected[:limit]
                cql = "SELECT k, v FROM slow.in_keys WHERE k IN (%s)%s" % (
                    in_list, "" if limit is None else " LIMIT %d" % limit)
                for cl, fetch in ((ONE, None), (Q, 2), (ALL, None)):
                    assert [(r.k, r.v) for r in run(s, cql, cl=cl, fetch_size=fetch)] == want, (cql, cl, fetch)
                    checked += 1
            for cs in ([0, 1], [3, 1, 2]):
                want = sorted(((k, c, live[(k, c)]) for k in set(ks) for c in cs if (k, c) in live),
                              key=lambda r: (token_order[r[0]], r[1]))
                cql = "SELECT k, c, v FROM slow.in_rows WHERE k IN (%s) AND c IN (%s)" % (in_list, ", ".join(map(str, cs)))
                for cl, fetch in ((ONE, 3), (ALL, None)):
                    assert [(r.k, r.c, r.v) for r in run(s, cql, cl=cl, fetch_size=fetch)] == want, (cql, cl)
                    checked += 1
            # Whole partitions and slices of each (a slice per partition, read at once).
            for where, keep, desc, limit in (("", lambda c: True, False, None), ("AND c >= 1", lambda c: c >= 1, True, 5),
                                             ("AND c < 3", lambda c: c < 3, False, 4)):
                want = sorted(((k, c, live[(k, c)]) for k in set(ks) for c in range(4) if (k, c) in live and keep(c)),
                              key=lambda r: (token_order[r[0]], -r[1] if desc else r[1]))
                if limit is not None:
                    want = want[:limit]
                cql = "SELECT k, c, v FROM slow.in_rows WHERE k IN (%s) %s%s%s" % (
                    in_list, where, " ORDER BY c DESC" if desc else "", "" if limit is None else " LIMIT %d" % limit)
                for cl, fetch in ((ONE, None), (Q, 3), (ALL, 2)):
                    assert [(r.k, r.c, r.v) for r in run(s, cql, cl=cl, fetch_size=fetch)] == want, (cql, cl, fetch)
                    checked += 1
        print("%d IN reads through 2 replicas matched" % checked)
    finally:
        d.shutdown()


def test_in_reads_waiting_for_a_stopped_replica_hold_no_thread_of_their_coordinator(slow_cluster):
    # The same for IN over several partitions: the ONE reads (two
    # partitions, two rows or a slice of each) are answered from node 1's
    # replica while 40 at ALL wait.
    d, s = slow_keyspace_session(slow_cluster)
    try:
        s.execute("CREATE TABLE IF NOT EXISTS slow.in_held (k int, c int, v int, PRIMARY KEY (k, c))")
        insert = s.prepare("INSERT INTO slow.in_held (k, c, v) VALUES (?, ?, ?)")
        insert.consistency_level = ALL
        for k in range(1, 401):
            for c in range(3):
                s.execute(insert, (k, c, 10 * k + c))
    finally:
        d.shutdown()
    # Rows (c IN) for half of the ONE reads, slices (c >= 1) for the other half.
    def shape(k):
        return "c IN (0, 2)" if k % 2 else "c >= 1"
    one = answered_behind_a_stopped_replica(
        slow_cluster, ["SELECT k, c, v FROM slow.in_held WHERE k IN (%d, %d) AND %s" % (k, k + 200, shape(k))
                       for k in range(1, 41)],
        ["SELECT k, c, v FROM slow.in_held WHERE k IN (%d, %d) AND %s" % (k, k + 200, shape(k))
         for k in range(41, 201)], 0x1200, "IN reads")
    for stream, _, body, _ in one:
        got = sorted(int_rows(body))
        cs = (0, 2) if stream % 2 else (1, 2)
        assert got == sorted((k, c, 10 * k + c) for k in (stream, stream + 200) for c in cs), (stream, got)


def int_token(k):
    """Murmur3 token of an int partition key (what Cassandra and Tessera place it by)."""
    from cassandra.murmur3 import murmur3
    return murmur3(struct.pack(">i", k))


def test_scans_read_through_replicas_return_what_a_single_store_would(slow_cluster):
    # Issue 28 item 1 for scans: a page of a token-range or whole-table scan
    # is read in windows without a thread (Coordinator::ScanRangeAsync), the
    # partitions' headers coming with their rows. Pages of several sizes,
    # LIMIT, PER PARTITION LIMIT and token bounds over deleted rows, ranges
    # and partitions and an expired row, at every level, against the rows
    # computed here in token order.
    d, s = slow_keyspace_session(slow_cluster)
    try:
        s.execute("CREATE TABLE IF NOT EXISTS slow.scanned (k int, c int, v int, PRIMARY KEY (k, c))")
        insert = s.prepare("INSERT INTO slow.scanned (k, c, v) VALUES (?, ?, ?)")
        insert.consistency_level = ALL
        live = {}
        for k in range(80):
            for c in range(k % 9):
                s.execute(insert, (k, c, 1000 * k + c))
                live[(k, c)] = 1000 * k + c
        for k in range(0, 80, 7):
            run(s, "DELETE FROM slow.scanned WHERE k = %d AND c >= 2 AND c < 5" % k, cl=ALL)
            for c in (2, 3, 4):
                live.pop((k, c), None)
        for k in range(3, 80, 10):
            run(s, "DELETE FROM slow.scanned WHERE k = %d" % k, cl=ALL)
            for c in range(9):
                live.pop((k, c), None)
        run(s, "INSERT INTO slow.scanned (k, c, v) VALUES (500, 0, 1) USING TTL 1", cl=ALL)
        wait_until(lambda: not list(run(s, "SELECT v FROM slow.scanned WHERE k = 500", cl=ALL)), 30,
                   "the expiring row to go")
        ordered = sorted(live, key=lambda kc: (int_token(kc[0]), kc[1]))
        middle = int_token(ordered[len(ordered) // 2][0])
        checked = 0
        for where, keep in (("", lambda k: True), ("WHERE token(k) > %d" % middle, lambda k: int_token(k) > middle),
                            ("WHERE token(k) <= %d" % middle, lambda k: int_token(k) <= middle)):
            for suffix, cut in (("", None), (" LIMIT 23", 23), (" PER PARTITION LIMIT 2", "pp")):
                want = [kc for kc in ordered if keep(kc[0])]
                if cut == "pp":
                    want = [kc for kc in want if kc[1] in sorted(c for k, c in want if k == kc[0])[:2]]
                elif cut is not None:
                    want = want[:cut]
                cql = "SELECT k, c, v FROM slow.scanned %s%s" % (where, suffix)
                for cl, fetch in ((ONE, None), (Q, 7), (ALL, 50)):
                    got = [(r.k, r.c, r.v) for r in run(s, cql, cl=cl, fetch_size=fetch)]
                    assert got == [(k, c, live[(k, c)]) for k, c in want], (cql, cl, fetch, len(got), len(want))
                    checked += 1
        assert [r.count for r in run(s, "SELECT COUNT(*) FROM slow.scanned", cl=Q)] == [len(live)]
        print("%d scans through 2 replicas matched (%d rows)" % (checked, len(live)))
    finally:
        d.shutdown()


def test_scans_waiting_for_a_stopped_replica_hold_no_thread_of_their_coordinator(slow_cluster):
    # The same for scans: the ONE pages (three rows from a token on) are
    # answered from node 1's replica while 40 scans at ALL wait.
    d, s = slow_keyspace_session(slow_cluster)
    try:
        s.execute("CREATE TABLE IF NOT EXISTS slow.scan_held (k int PRIMARY KEY, v int)")
        insert = s.prepare("INSERT INTO slow.scan_held (k, v) VALUES (?, ?)")
        insert.consistency_level = ALL
        for k in range(1, 401):
            s.execute(insert, (k, 3 * k))
    finally:
        d.shutdown()
    by_token = sorted(range(1, 401), key=int_token)
    starts = by_token[:160]  # each ONE scan from one of these, exclusive
    one = answered_behind_a_stopped_replica(
        slow_cluster, ["SELECT k, v FROM slow.scan_held WHERE token(k) > %d LIMIT 3" % int_token(k)
                       for k in by_token[200:240]],
        ["SELECT k, v FROM slow.scan_held WHERE token(k) > %d LIMIT 3" % int_token(k) for k in starts],
        0x1200, "scans")
    for stream, _, body, _ in one:
        i = stream - 41
        assert int_rows(body) == [(k, 3 * k) for k in by_token[i + 1:i + 4]], (stream, int_rows(body))


def test_filtered_scans_read_through_replicas_return_what_a_single_store_would(slow_cluster):
    # Issue 28 item 1 for filtered scans: a filter can leave a page's range
    # read short, so the page is read in steps, each one range read without
    # a thread (DeferredRead::paused, FoldSelectStep). Filters that keep one
    # row in 7 or none, with pages, LIMIT, PER PARTITION LIMIT (counting the
    # rows the filter keeps, as Cassandra), token bounds and a deleted range,
    # at every level, against the rows computed here.
    d, s = slow_keyspace_session(slow_cluster)
    try:
        s.execute("CREATE TABLE IF NOT EXISTS slow.filtered (k int, c int, m int, v int, PRIMARY KEY (k, c))")
        insert = s.prepare("INSERT INTO slow.filtered (k, c, m, v) VALUES (?, ?, ?, ?)")
        insert.consistency_level = ALL
        live = {}
        for k in range(60):
            for c in range(k % 6 + 1):
                m = (k * 6 + c) % 7
                s.execute(insert, (k, c, m, 100 * k + c))
                live[(k, c)] = (m, 100 * k + c)
        for k in range(0, 60, 9):
            run(s, "DELETE FROM slow.filtered WHERE k = %d AND c >= 1 AND c < 4" % k, cl=ALL)
            for c in (1, 2, 3):
                live.pop((k, c), None)
        ordered = sorted(live, key=lambda kc: (int_token(kc[0]), kc[1]))
        middle = int_token(ordered[len(ordered) // 2][0])
        checked = 0
        for where, keep in (("m = 3", lambda k, c, m, v: m == 3),
                            ("m = 3 AND token(k) > %d" % middle, lambda k, c, m, v: m == 3 and int_token(k) > middle),
                            ("v > 2000 AND c < 2", lambda k, c, m, v: v > 2000 and c < 2),
                            ("m = 9", lambda k, c, m, v: False)):
            for suffix, cut in (("", None), (" LIMIT 5", 5), (" PER PARTITION LIMIT 1", "pp")):
                want = [kc for kc in ordered if keep(kc[0], kc[1], *live[kc])]
                if cut == "pp":  # the first row the filter keeps in each partition, as Cassandra counts
                    want = [kc for i, kc in enumerate(want) if i == 0 or want[i - 1][0] != kc[0]]
                elif cut is not None:
                    want = want[:cut]
                cql = "SELECT k, c, v FROM slow.filtered WHERE %s%s ALLOW FILTERING" % (where, suffix)
                for cl, fetch in ((ONE, None), (Q, 4), (ALL, 3), (ONE, 50)):
                    got = [(r.k, r.c, r.v) for r in run(s, cql, cl=cl, fetch_size=fetch)]
                    assert got == [(k, c, live[(k, c)][1]) for k, c in want], (cql, cl, fetch, len(got), len(want))
                    checked += 1
        # An aggregate over filtered rows: one read of every row, folded once.
        for cl in (ONE, Q, ALL):
            got = run(s, "SELECT COUNT(*), MAX(v) FROM slow.filtered WHERE m = 3 ALLOW FILTERING", cl=cl).one()
            kept = [v for m, v in live.values() if m == 3]
            assert (got[0], got[1]) == (len(kept), max(kept)), (cl, tuple(got), len(kept))
        # A page of 4 rows holds 4 rows when that many follow: read in
        # steps, not cut short at the first read's rows.
        result = run(s, "SELECT k, c FROM slow.filtered WHERE m = 3 ALLOW FILTERING", cl=Q, fetch_size=4)
        assert len(result.current_rows) == 4, result.current_rows
        print("%d filtered scans through 2 replicas matched (%d rows)" % (checked, len(live)))
        # One match at the end of 5,000 rows, LIMIT 1: a page of 5,000 steps
        # of one row each, which node 1's own replica answers on the thread
        # that asked; run one after the other, not nested, they must not
        # grow the stack.
        s.execute("CREATE TABLE IF NOT EXISTS slow.sparse (k int PRIMARY KEY, m int)")
        sparse = s.prepare("INSERT INTO slow.sparse (k, m) VALUES (?, ?)")
        sparse.consistency_level = ALL
        by_token = sorted(range(5000), key=int_token)
        for k in by_token:
            s.execute(sparse, (k, 1 if k == by_token[-1] else 0))
        started = time.monotonic()
        got = [(r.k, r.m) for r in run(s, "SELECT k, m FROM slow.sparse WHERE m = 1 LIMIT 1 ALLOW FILTERING", cl=ONE)]
        assert got == [(by_token[-1], 1)], got
        print("a page of 5,000 one-row steps in %.2f s" % (time.monotonic() - started))
    finally:
        d.shutdown()


def test_filtered_scans_waiting_for_a_stopped_replica_hold_no_thread_of_their_coordinator(slow_cluster):
    # The same for filtered scans, whose pages are read in steps: the ONE
    # scans (the first three rows with m = 0 from a token on: one row in ten
    # matches, so each takes several reads) are answered from node 1's
    # replica while 40 filtered scans at ALL wait. A filtered scan holding
    # a thread while its replicas answer would keep them behind the 40.
    fill_at_all(slow_cluster, "CREATE TABLE IF NOT EXISTS slow.filter_held (k int PRIMARY KEY, m int, v int)",
                "INSERT INTO slow.filter_held (k, m, v) VALUES (?, ?, ?)", [(k, k % 10, 3 * k) for k in range(1, 601)])
    by_token = sorted(range(1, 601), key=int_token)
    starts = by_token[:160]
    scan = "SELECT k, v FROM slow.filter_held WHERE token(k) > %d AND m = 0 LIMIT 3 ALLOW FILTERING"
    one = answered_behind_a_stopped_replica(
        slow_cluster, [scan % int_token(k) for k in by_token[300:340]], [scan % int_token(k) for k in starts],
        0x1200, "filtered scans")
    for stream, _, body, _ in one:
        i = stream - 41
        assert int_rows(body) == [(k, 3 * k) for k in by_token[i + 1:] if k % 10 == 0][:3], (stream, int_rows(body))


def test_filtered_slices_read_through_replicas_return_what_a_single_store_would(slow_cluster):
    # Filtered slices of partitions (one partition, or an IN) are read in
    # steps as filtered scans are: a slice a filter leaves short is followed
    # by another read of that partition without a thread. IN, DESC, LIMIT,
    # PER PARTITION LIMIT (counting the rows the filter keeps, as Cassandra)
    # and pages, at every level, against the rows computed here.
    d, s = slow_keyspace_session(slow_cluster)
    try:
        s.execute("CREATE TABLE IF NOT EXISTS slow.slice_filtered (k int, c int, m int, v int, PRIMARY KEY (k, c))")
        insert = s.prepare("INSERT INTO slow.slice_filtered (k, c, m, v) VALUES (?, ?, ?, ?)")
        insert.consistency_level = ALL
        rows = {}
        for k in range(6):
            for c in range(40):
                rows[(k, c)] = ((c * 7 + k) % 9, 100 * k + c)
                s.execute(insert, (k, c, rows[(k, c)][0], rows[(k, c)][1]))
        checked = 0
        for where, keys, keep, desc in (("k = 2 AND m = 4", [2], lambda c, m: m == 4, False),
                                        ("k = 3 AND c >= 10 AND m < 2", [3], lambda c, m: c >= 10 and m < 2, False),
                                        ("k IN (4, 1, 5) AND m = 0", [1, 4, 5], lambda c, m: m == 0, False),
                                        ("k IN (0, 2) AND m > 6", [0, 2], lambda c, m: m > 6, True),
                                        ("k = 1 AND m = 99", [1], lambda c, m: False, False)):
            for suffix, cut in (("", None), (" LIMIT 4", 4), (" PER PARTITION LIMIT 2", "pp")):
                want = []
                for k in sorted(keys, key=int_token):  # an IN's partitions come in token order
                    mine = [(k, c) for c in sorted(range(40), reverse=desc) if keep(c, rows[(k, c)][0])]
                    want += mine[:2] if cut == "pp" else mine
                if isinstance(cut, int):
                    want = want[:cut]
                order = " ORDER BY c DESC" if desc else ""
                cql = "SELECT k, c, v FROM slow.slice_filtered WHERE %s%s%s ALLOW FILTERING" % (where, order, suffix)
                for cl, fetch in ((ONE, None), (Q, 3), (ALL, 5)):
                    got = [(r.k, r.c, r.v) for r in run(s, cql, cl=cl, fetch_size=fetch)]
                    assert got == [(k, c, rows[(k, c)][1]) for k, c in want], (cql, cl, fetch, got[:5], want[:5])
                    checked += 1
        print("%d filtered slices through 2 replicas matched" % checked)
    finally:
        d.shutdown()


def test_filtered_slices_waiting_for_a_stopped_replica_hold_no_thread_of_their_coordinator(slow_cluster):
    # The same for filtered slices: the ONE reads (the first three rows with
    # m = 0 of a partition from a clustering key on: one row in ten matches)
    # are answered from node 1's replica while 40 at ALL wait.
    fill_at_all(slow_cluster,
                "CREATE TABLE IF NOT EXISTS slow.filtered_slice_held (k int, c int, m int, v int, PRIMARY KEY (k, c))",
                "INSERT INTO slow.filtered_slice_held (k, c, m, v) VALUES (?, ?, ?, ?)",
                [(k, c, c % 10, 1000 * k + c) for k in range(4) for c in range(100)])
    read = "SELECT c, v FROM slow.filtered_slice_held WHERE k = %d AND c >= %d AND m = 0 LIMIT 3 ALLOW FILTERING"
    at_one = [(i % 4, i % 60) for i in range(160)]
    one = answered_behind_a_stopped_replica(
        slow_cluster, [read % (i % 4, 40 + i) for i in range(40)], [read % kc for kc in at_one], 0x1200,
        "filtered slices")
    for stream, _, body, _ in one:
        k, start = at_one[stream - 41]
        assert int_rows(body) == [(c, 1000 * k + c) for c in range(start, 100) if c % 10 == 0][:3], (stream, int_rows(body))


def test_scans_of_a_table_with_static_columns_read_through_replicas_return_what_a_single_store_would(slow_cluster):
    # Scans of a table with a static column hold no thread either: each
    # partition's static row comes with its rows in the windows, and a page
    # resumed inside a partition asks for its header and static row with its
    # first window's replica read (db/range_read_async.cc). Pages that end
    # inside partitions, partitions with only a static row, a filter on the
    # static column and token bounds, at every level.
    d, s = slow_keyspace_session(slow_cluster)
    try:
        s.execute("CREATE TABLE IF NOT EXISTS slow.static_scanned (k int, c int, s int static, v int, "
                  "PRIMARY KEY (k, c))")
        insert = s.prepare("INSERT INTO slow.static_scanned (k, c, s, v) VALUES (?, ?, ?, ?)")
        insert.consistency_level = ALL
        statics = s.prepare("INSERT INTO slow.static_scanned (k, s) VALUES (?, ?)")
        statics.consistency_level = ALL
        rows = {}
        for k in range(30):
            if k % 6 == 5:
                s.execute(statics, (k, 7 * k))  # only a static row
                rows[k] = []
                continue
            rows[k] = list(range(k % 5 + 1))
            for c in rows[k]:
                s.execute(insert, (k, c, 7 * k, 100 * k + c))
        ordered = sorted(rows, key=int_token)
        middle = int_token(ordered[len(ordered) // 2])

        def expected(keep):
            out = []
            for k in ordered:
                if keep(k):
                    out += [(k, c, 7 * k, 100 * k + c) for c in rows[k]] or [(k, None, 7 * k, None)]
            return out
        checked = 0
        for where, keep in (("", lambda k: True),
                            (" WHERE token(k) > %d" % middle, lambda k: int_token(k) > middle),
                            (" WHERE s > 100 ALLOW FILTERING", lambda k: 7 * k > 100)):
            cql = "SELECT k, c, s, v FROM slow.static_scanned" + where
            for cl, fetch in ((ONE, None), (Q, 3), (ALL, 4), (Q, 7)):
                got = [(r.k, r.c, r.s, r.v) for r in run(s, cql, cl=cl, fetch_size=fetch)]
                assert got == expected(keep), (cql, cl, fetch, got[:6])
                checked += 1
        print("%d scans of a table with a static column through 2 replicas matched" % checked)
    finally:
        d.shutdown()


def test_scans_of_a_table_with_static_columns_waiting_for_a_stopped_replica_hold_no_thread(slow_cluster):
    # The ONE pages (three partitions' static values from a token on) are
    # answered from node 1's replica while 40 such scans at ALL wait.
    fill_at_all(slow_cluster, "CREATE TABLE IF NOT EXISTS slow.static_held (k int, c int, s int static, PRIMARY KEY (k, c))",
                "INSERT INTO slow.static_held (k, c, s) VALUES (?, 0, ?)", [(k, 3 * k) for k in range(1, 401)])
    by_token = sorted(range(1, 401), key=int_token)
    scan = "SELECT k, s FROM slow.static_held WHERE token(k) > %d LIMIT 3"
    one = answered_behind_a_stopped_replica(
        slow_cluster, [scan % int_token(k) for k in by_token[200:240]], [scan % int_token(k) for k in by_token[:160]],
        0x1200, "scans of a table with a static column")
    for stream, _, body, _ in one:
        i = stream - 41
        assert int_rows(body) == [(k, 3 * k) for k in by_token[i + 1:i + 4]], (stream, int_rows(body))


def test_whole_rows_of_a_table_with_static_columns_read_through_replicas_return_what_a_single_store_would(slow_cluster):
    # A whole row of a table with a static column is read as a slice of that
    # one row, which brings the partition's static row with it (one request
    # per replica, deferred: no thread waits). Rows there and missing, a
    # partition with only its static row, IN over partitions, at every level.
    values = [(k, c, 5 * k, 10 * k + c) for k in range(12) if k % 4 != 3 for c in range(k % 3 + 1)]
    fill_at_all(slow_cluster, "CREATE TABLE IF NOT EXISTS slow.static_rows (k int, c int, s int static, v int, "
                "PRIMARY KEY (k, c))", "INSERT INTO slow.static_rows (k, c, s, v) VALUES (?, ?, ?, ?)", values)
    d, s = slow_keyspace_session(slow_cluster)
    try:
        for k in range(12):
            if k % 4 == 3:
                run(s, "INSERT INTO slow.static_rows (k, s) VALUES (%d, %d)" % (k, 5 * k), cl=ALL)  # only a static row
        stored = {(k, c): (k, c, st, v) for k, c, st, v in values}
        checked = 0
        for cl in (ONE, Q, ALL):
            for k in range(12):
                for c in range(4):
                    got = [tuple(r) for r in run(s, "SELECT k, c, s, v FROM slow.static_rows WHERE k = %d AND c = %d"
                                                 % (k, c), cl=cl)]
                    assert got == ([stored[(k, c)]] if (k, c) in stored else []), (cl, k, c, got)
                    checked += 1
            got = [tuple(r) for r in run(s, "SELECT k, c, s, v FROM slow.static_rows WHERE k IN (5, 3, 40, 0, 2) "
                                         "AND c = 1", cl=cl, fetch_size=2)]
            # Partitions in token order, as a scan returns them.
            assert got == sorted((stored[(k, 1)] for k in (0, 2, 5) if (k, 1) in stored), key=lambda r: int_token(r[0])), (cl, got)
            assert len(got) == 2
            checked += 1
        print("%d whole-row reads of a table with a static column through 2 replicas matched" % checked)
    finally:
        d.shutdown()


def test_whole_rows_of_a_table_with_static_columns_waiting_for_a_stopped_replica_hold_no_thread(slow_cluster):
    fill_at_all(slow_cluster, "CREATE TABLE IF NOT EXISTS slow.static_row_held (k int, c int, s int static, v int, "
                "PRIMARY KEY (k, c))", "INSERT INTO slow.static_row_held (k, c, s, v) VALUES (?, 0, ?, ?)",
                [(k, 3 * k, 7 * k) for k in range(1, 201)])
    read = "SELECT s, v FROM slow.static_row_held WHERE k = %d AND c = 0"
    one = answered_behind_a_stopped_replica(slow_cluster, [read % k for k in range(1, 41)],
                                            [read % k for k in range(41, 201)], 0x1200,
                                            "whole-row reads of a table with a static column")
    for stream, _, body, _ in one:
        assert int_rows(body) == [(3 * stream, 7 * stream)], (stream, int_rows(body))


def test_index_scans_read_through_replicas_return_what_a_single_store_would(slow_cluster):
    # A page read through a secondary index is read whole without a thread
    # (RunIndexScanAsync): the index slice, then the base rows of its entries
    # together, through the replicas at the request's level. Indexes on a
    # regular and on a static column, LIMIT, a filter beside the index, a
    # row whose indexed value changed and a static-only partition, every
    # level and several page sizes, against the rows written here.
    d, s = slow_keyspace_session(slow_cluster)
    try:
        s.execute("CREATE TABLE IF NOT EXISTS slow.indexed (k int, c int, tag int, v int, s int static, "
                  "PRIMARY KEY (k, c))")
        s.execute("CREATE INDEX IF NOT EXISTS indexed_tag ON slow.indexed (tag)")
        s.execute("CREATE INDEX IF NOT EXISTS indexed_s ON slow.indexed (s)")
        insert = s.prepare("INSERT INTO slow.indexed (k, c, tag, v, s) VALUES (?, ?, ?, ?, ?)")
        insert.consistency_level = ALL
        rows = {}  # (k, c) -> (tag, v)
        statics = {}
        for k in range(24):
            statics[k] = k % 3
            if k % 8 == 7:
                run(s, "INSERT INTO slow.indexed (k, s) VALUES (%d, %d)" % (k, k % 3), cl=ALL)
                continue
            for c in range(4):
                s.execute(insert, (k, c, (k + c) % 4, 10 * k + c, k % 3))
                rows[(k, c)] = ((k + c) % 4, 10 * k + c)
        run(s, "UPDATE slow.indexed SET tag = 3 WHERE k = 0 AND c = 0", cl=ALL)
        rows[(0, 0)] = (3, 0)
        checked = 0
        cases = (
            ("SELECT k, c, s, v FROM slow.indexed WHERE tag = 3",
             [(k, c, statics[k], v) for (k, c), (t, v) in rows.items() if t == 3]),
            ("SELECT k, c, s, v FROM slow.indexed WHERE tag = 1 AND v > 100 ALLOW FILTERING",
             [(k, c, statics[k], v) for (k, c), (t, v) in rows.items() if t == 1 and v > 100]),
            ("SELECT k, c, s, v FROM slow.indexed WHERE s = 2",
             [(k, c, 2, v) for (k, c), (t, v) in rows.items() if statics[k] == 2] +
             [(k, None, 2, None) for k in statics if k % 8 == 7 and statics[k] == 2]),
        )
        for cql, want in cases:
            assert want
            for cl, fetch in ((ONE, None), (Q, 3), (ALL, 5), (ONE, 1)):
                got = [tuple(r) for r in run(s, cql, cl=cl, fetch_size=fetch)]
                assert sorted(got, key=repr) == sorted(want, key=repr), (cql, cl, fetch, got[:5])
                checked += 1
            # In the index's order (base partition, then clustering), the same at every level and page size.
            orders = {tuple(tuple(r) for r in run(s, cql, cl=cl, fetch_size=fetch)) for cl, fetch in ((ONE, 2), (ALL, 7))}
            assert len(orders) == 1, cql
        limited = [tuple(r) for r in run(s, "SELECT k, c FROM slow.indexed WHERE tag = 2 LIMIT 5", cl=Q, fetch_size=2)]
        assert len(limited) == 5 and all(rows[r][0] == 2 for r in limited), limited
        print("%d index scans through 2 replicas matched" % (checked + 1))
    finally:
        d.shutdown()


def test_index_scans_waiting_for_a_stopped_replica_hold_no_thread(slow_cluster):
    # The entries are written with the rows (the index made first, on an empty table).
    fill_at_all(slow_cluster, ["CREATE TABLE IF NOT EXISTS slow.index_held (k int PRIMARY KEY, tag int, v int)",
                               "CREATE INDEX IF NOT EXISTS index_held_tag ON slow.index_held (tag)"],
                "INSERT INTO slow.index_held (k, tag, v) VALUES (?, ?, ?)", [(k, 1000 + k, 7 * k) for k in range(1, 201)])
    read = "SELECT k, v FROM slow.index_held WHERE tag = %d"
    one = answered_behind_a_stopped_replica(slow_cluster, [read % (1000 + k) for k in range(1, 41)],
                                            [read % (1000 + k) for k in range(41, 201)], 0x1200, "index scans")
    for stream, _, body, _ in one:
        assert int_rows(body) == [(stream, 7 * stream)], (stream, int_rows(body))


def test_group_by_read_through_replicas_returns_what_a_single_store_would(slow_cluster):
    # GROUP BY reads chunk after chunk, each sized from the rows before it:
    # the coordinator runs it again after each read it makes (DeferredRead::
    # replay), reading from replica answers, holding no thread. Groups of
    # uneven sizes, pages, LIMIT, PER PARTITION LIMIT, one partition, DESC,
    # a filter, every level, against the groups computed here.
    values = [(a, b, c, 100 * a + 10 * b + c) for a in range(8) for b in range(4) for c in range((a * 5 + b * 3) % 7 + 1)]
    fill_at_all(slow_cluster, "CREATE TABLE IF NOT EXISTS slow.grouped (a int, b int, c int, v int, PRIMARY KEY (a, b, c))",
                "INSERT INTO slow.grouped (a, b, c, v) VALUES (?, ?, ?, ?)", values)
    groups = {}
    for a, b, c, v in values:
        groups.setdefault((a, b), []).append(v)
    by_token = sorted({a for a, _, _, _ in values}, key=int_token)
    d, s = slow_keyspace_session(slow_cluster)
    try:
        cases = (
            ("SELECT a, b, count(*), sum(v) FROM slow.grouped GROUP BY a, b",
             [(a, b, len(groups[(a, b)]), sum(groups[(a, b)])) for a in by_token for b in range(4)]),
            ("SELECT a, b, count(*), sum(v) FROM slow.grouped GROUP BY a, b PER PARTITION LIMIT 2 LIMIT 9",
             [(a, b, len(groups[(a, b)]), sum(groups[(a, b)])) for a in by_token for b in range(2)][:9]),
            ("SELECT a, b, count(*), max(v) FROM slow.grouped WHERE a = 5 GROUP BY b ORDER BY b DESC",
             [(5, b, len(groups[(5, b)]), max(groups[(5, b)])) for b in reversed(range(4))]),
            ("SELECT a, b, count(*), min(v) FROM slow.grouped WHERE v > 300 GROUP BY a, b ALLOW FILTERING",
             [(a, b, len([v for v in groups[(a, b)] if v > 300]), min(v for v in groups[(a, b)] if v > 300))
              for a in by_token for b in range(4) if any(v > 300 for v in groups[(a, b)])]),
        )
        checked = 0
        for cql, want in cases:
            for cl, fetch in ((ONE, None), (Q, 1), (ALL, 3), (ONE, 5)):
                got = [tuple(r) for r in run(s, cql, cl=cl, fetch_size=fetch)]
                assert got == want, (cql, cl, fetch, got[:5])
                checked += 1
        print("%d GROUP BY reads through 2 replicas matched" % checked)
    finally:
        d.shutdown()


def test_group_by_waiting_for_a_stopped_replica_holds_no_thread(slow_cluster):
    fill_at_all(slow_cluster, "CREATE TABLE IF NOT EXISTS slow.grouped_held (k int, c int, v int, PRIMARY KEY (k, c))",
                "INSERT INTO slow.grouped_held (k, c, v) VALUES (?, ?, ?)",
                [(k, c, k * c) for k in range(1, 201) for c in range(3)])
    read = "SELECT k, count(*), sum(v) FROM slow.grouped_held WHERE k = %d GROUP BY k"
    one = answered_behind_a_stopped_replica(slow_cluster, [read % k for k in range(1, 41)],
                                            [read % k for k in range(41, 201)], 0x1200, "GROUP BY reads")
    for stream, _, body, _ in one:
        assert body[-28:] == struct.pack(">ii", 4, stream) + struct.pack(">iq", 8, 3) + struct.pack(">ii", 4, 3 * stream), \
            (stream, body[-28:])


def test_reads_a_first_run_cannot_defer_are_replayed_and_return_what_a_single_store_would(slow_cluster):
    # A SELECT whose reads the first run cannot leave to the caller in one go
    # (an IN of more than 64 rows, slices of more than 16 partitions, an IN on
    # the clustering key of a table with static columns) is replayed: each
    # run takes the reads already answered and records the next ones, which
    # the coordinator reads from replica answers, holding no thread.
    values = [(k, c, 3 * k, 100 * k + c) for k in range(20) if k % 7 != 6 for c in range(8)]
    fill_at_all(slow_cluster, "CREATE TABLE IF NOT EXISTS slow.replayed (k int, c int, s int static, v int, "
                "PRIMARY KEY (k, c))", "INSERT INTO slow.replayed (k, c, s, v) VALUES (?, ?, ?, ?)", values)
    stored = {(k, c): (k, c, st, v) for k, c, st, v in values}
    by_token = sorted(range(20), key=int_token)
    d, s = slow_keyspace_session(slow_cluster)
    try:
        ks = list(range(10))
        cases = (
            ("SELECT k, c, s, v FROM slow.replayed WHERE k IN (%s) AND c IN (1, 2, 3, 4, 5, 6, 7)" % ", ".join(map(str, ks)),
             [stored[(k, c)] for k in by_token if k in ks for c in range(1, 8) if (k, c) in stored]),
            ("SELECT k, c, s, v FROM slow.replayed WHERE k IN (%s) AND c > 4" % ", ".join(map(str, range(20))),
             [stored[(k, c)] for k in by_token for c in range(5, 8) if (k, c) in stored]),
            ("SELECT k, c, s, v FROM slow.replayed WHERE k IN (3, 13, 6) AND c IN (7, 0) ORDER BY c DESC",
             [stored[(k, c)] for k in by_token if k in (3, 13, 6) for c in (7, 0) if (k, c) in stored]),
        )
        checked = 0
        for cql, want in cases:
            assert want
            for cl, fetch in ((ONE, None), (Q, 4), (ALL, 9), (ONE, 50)):
                got = [tuple(r) for r in run(s, cql, cl=cl, fetch_size=fetch)]
                assert got == want, (cql, cl, fetch, got[:5], want[:5])
                checked += 1
        limited = [tuple(r) for r in run(s, cases[0][0] + " LIMIT 11", cl=Q, fetch_size=3)]
        assert limited == cases[0][1][:11], limited
        print("%d replayed reads through 2 replicas matched" % (checked + 1))
    finally:
        d.shutdown()


def test_replayed_reads_waiting_for_a_stopped_replica_hold_no_thread(slow_cluster):
    fill_at_all(slow_cluster, "CREATE TABLE IF NOT EXISTS slow.replay_held (k int, c int, s int static, v int, "
                "PRIMARY KEY (k, c))", "INSERT INTO slow.replay_held (k, c, s, v) VALUES (?, ?, ?, ?)",
                [(k, c, 3 * k, 10 * k + c) for k in range(1, 201) for c in range(2)])
    read = "SELECT s, v FROM slow.replay_held WHERE k = %d AND c IN (0, 1)"
    one = answered_behind_a_stopped_replica(slow_cluster, [read % k for k in range(1, 41)],
                                            [read % k for k in range(41, 201)], 0x1200,
                                            "IN reads of a table with a static column (replayed)")
    for stream, _, body, _ in one:
        assert int_rows(body) == [(3 * stream, 10 * stream), (3 * stream, 10 * stream + 1)], (stream, int_rows(body))


def test_reads_of_a_partition_bucketed_table_waiting_for_a_stopped_replica_hold_no_thread(slow_cluster):
    # A partition-bucketed table (partition_buckets = 4) reads a partition's
    # sub-partitions and merges them: its slices and rows are chains too
    # (db/sub_partition_read_async.cc). 20 slices and 20 rows at ALL wait for
    # node 2; 80 slices (newest three rows) and 80 rows at ONE behind them are
    # answered from node 1's replica.
    fill_at_all(slow_cluster, "CREATE TABLE IF NOT EXISTS slow.pb_held (k int, c int, v int, PRIMARY KEY (k, c)) "
                "WITH partition_buckets = 4", "INSERT INTO slow.pb_held (k, c, v) VALUES (?, ?, ?)",
                [(k, c, 10 * k + c) for k in range(1, 201) for c in range(5)])
    slice_read = "SELECT c, v FROM slow.pb_held WHERE k = %d AND c >= 1 ORDER BY c DESC LIMIT 3"
    row_read = "SELECT c, v FROM slow.pb_held WHERE k = %d AND c = 3"
    one = answered_behind_a_stopped_replica(
        slow_cluster, [slice_read % k for k in range(1, 21)] + [row_read % k for k in range(21, 41)],
        [slice_read % k for k in range(41, 121)] + [row_read % k for k in range(121, 201)], 0x1200,
        "slices and rows of a partition-bucketed table")
    for stream, _, body, _ in one:
        if stream <= 120:
            assert int_rows(body) == [(c, 10 * stream + c) for c in (4, 3, 2)], (stream, int_rows(body))
        else:
            assert int_rows(body) == [(3, 10 * stream + 3)], (stream, int_rows(body))


def test_scans_of_a_bucketed_table_waiting_for_a_stopped_replica_hold_no_thread(slow_cluster):
    # A bucketed range table (buckets = 4) scans each bucket and merges them
    # in key order: every bucket's scan is asked at once and the last answer
    # merges the page (ScanBucketsAsync). 40 scans at ALL wait for node 2;
    # 160 at ONE behind them (three rows from a key on) are answered from
    # node 1's replica.
    fill_at_all(slow_cluster, "CREATE TABLE IF NOT EXISTS slow.bt_held (k int PRIMARY KEY, v int) "
                "WITH distribution = 'range' AND buckets = 4", "INSERT INTO slow.bt_held (k, v) VALUES (?, ?)",
                [(k, 3 * k) for k in range(1, 401)])
    scan = "SELECT k, v FROM slow.bt_held WHERE k > %d LIMIT 3"
    one = answered_behind_a_stopped_replica(slow_cluster, [scan % k for k in range(200, 240)],
                                            [scan % k for k in range(1, 161)], 0x1200, "scans of a bucketed table")
    for stream, _, body, _ in one:
        start = stream - 40  # the scan from k > start
        assert int_rows(body) == [(k, 3 * k) for k in range(start + 1, start + 4)], (stream, int_rows(body))


def test_scans_of_a_partition_bucketed_table_waiting_for_a_stopped_replica_hold_no_thread(slow_cluster):
    # A partition-bucketed table's scan finds each next partition with a
    # window of one key and reads it as a merged slice, a chain too
    # (ScanSubPartitionedAsync). 40 scans at ALL wait for node 2; 160 at ONE
    # behind them (three partitions' single rows from a token on) are
    # answered from node 1's replica.
    fill_at_all(slow_cluster, "CREATE TABLE IF NOT EXISTS slow.pb_scan_held (k int, c int, v int, PRIMARY KEY (k, c)) "
                "WITH partition_buckets = 4", "INSERT INTO slow.pb_scan_held (k, c, v) VALUES (?, ?, ?)",
                [(k, 0, 3 * k) for k in range(1, 401)])
    by_token = sorted(range(1, 401), key=int_token)
    scan = "SELECT k, v FROM slow.pb_scan_held WHERE token(k) > %d LIMIT 3"
    one = answered_behind_a_stopped_replica(slow_cluster, [scan % int_token(k) for k in by_token[200:240]],
                                            [scan % int_token(k) for k in by_token[:160]], 0x1200,
                                            "scans of a partition-bucketed table")
    for stream, _, body, _ in one:
        i = stream - 41
        assert int_rows(body) == [(k, 3 * k) for k in by_token[i + 1:i + 4]], (stream, int_rows(body))
