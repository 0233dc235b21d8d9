"""Acknowledged writes survive kill -9 (issue 10, must-show 2 and 4): a local
cluster of etcd and three nodes (`tessera cluster start`), a keyspace with
replication_factor 3.

- Under a QUORUM write load (2 client threads, every acknowledged key
  recorded), each round kills -9 one replica, restarts it, then kills -9 the
  node the driver's control connection uses and restarts it; the load goes
  on through the others; afterwards, with every node back and the hints
  delivered, every acknowledged write reads back at ALL.
- A per-key history check: one writer per key writes increasing values at
  QUORUM while readers read at QUORUM through every node, and a node is
  killed and restarted; every read returns the latest value acknowledged
  before it started, or a later one, and never goes back.

The round length is TESSERA_FAULT_ROUND_SECONDS (CI: 10 s; the long run, 30 s,
is `scripts/cluster-fault-rounds.sh`, its results in tests/drivers/CLUSTER_FAULTS.md).
"""
import os
import random
import threading
import time

import pytest
from cassandra import ConsistencyLevel, OperationTimedOut
from cassandra.cluster import EXEC_PROFILE_DEFAULT, Cluster, ExecutionProfile, NoHostAvailable
from cassandra.policies import ConstantReconnectionPolicy, RoundRobinPolicy, WhiteListRoundRobinPolicy
from cassandra.query import SimpleStatement

from local_cluster import metric, running_cluster, wait_until

BINARY = os.environ["TESSERA_BINARY"]
LEASE_SECONDS = 3
ROUND_SECONDS = float(os.environ.get("TESSERA_FAULT_ROUND_SECONDS", "10"))
ROUNDS = int(os.environ.get("TESSERA_FAULT_ROUNDS", "3"))
Q, ALL = ConsistencyLevel.QUORUM, ConsistencyLevel.ALL


@pytest.fixture(scope="module")
def cluster():
    yield from running_cluster(BINARY, 3, ["--cluster-lease-seconds=%d" % LEASE_SECONDS])


def driver(cluster, contact=1):
    profile = ExecutionProfile(load_balancing_policy=RoundRobinPolicy(), request_timeout=15,
                               consistency_level=Q)
    d = Cluster([cluster.address(contact)], port=cluster.port, protocol_version=4, connect_timeout=10,
                execution_profiles={EXEC_PROFILE_DEFAULT: profile},
                reconnection_policy=ConstantReconnectionPolicy(1.0))
    return d, d.connect()


def wait_all_back_and_hints_delivered(cluster, session):
    wait_until(lambda: all(h.is_up for h in session.cluster.metadata.all_hosts()), 60,
               "the driver sees every node up")
    probe = SimpleStatement("SELECT k FROM faults.acked WHERE k = -1", consistency_level=ALL)
    wait_until(lambda: session.execute(probe) is not None, 60, "a read at ALL succeeds (every node up)")
    for node in (1, 2, 3):
        wait_until(lambda: metric(cluster, node, "tessera_hints_pending") == 0, 60,
                   "node %d delivered its hints" % node)


class Load:
    """`threads` writers inserting distinct keys at QUORUM; acknowledged keys
    and the times of their acknowledgements are recorded."""

    def __init__(self, session, threads=2):
        self.session = session
        self.insert = session.prepare("INSERT INTO faults.acked (k, writer, v) VALUES (?, ?, ?)")
        self.insert.consistency_level = Q
        self.acked = {}
        self.ack_times = []
        self.failures = 0
        self.lock = threading.Lock()
        self.stop = threading.Event()
        self.threads = [threading.Thread(target=self.run, args=(w,)) for w in range(threads)]
        self.next_key = [w * 10_000_000 for w in range(threads)]

    def run(self, writer):
        while not self.stop.is_set():
            k = self.next_key[writer]
            self.next_key[writer] += 1
            try:
                self.session.execute(self.insert, (k, writer, k * 7))
            except Exception:
                with self.lock:
                    self.failures += 1
                continue
            with self.lock:
                self.acked[k] = k * 7
                self.ack_times.append(time.monotonic())

    def acked_between(self, start, end):
        with self.lock:
            return sum(1 for t in self.ack_times if start <= t < end)

    def __enter__(self):
        for t in self.threads:
            t.start()
        return self

    def __exit__(self, *exc):
        self.stop.set()
        for t in self.threads:
            t.join(timeout=60)


def pinned(cluster, node, statement):
    """The rows of `statement` run with node `node` as coordinator, through a
    driver of its own that talks to that node only. A node restarted moments
    ago may refuse or drop the first connections (the driver's pools to it are
    still being rebuilt), so connecting and running are retried, for 60 s at
    most; a retry reruns the whole statement, so no page is counted twice."""
    profile = ExecutionProfile(load_balancing_policy=WhiteListRoundRobinPolicy([cluster.address(node)]),
                               request_timeout=60, consistency_level=ALL)
    deadline, attempts = time.monotonic() + 60, 0
    while True:
        attempts += 1
        d = Cluster([cluster.address(node)], port=cluster.port, protocol_version=4, connect_timeout=10,
                    execution_profiles={EXEC_PROFILE_DEFAULT: profile})
        try:
            rows = list(d.connect().execute(statement))
            print("node %d coordinated the read (attempt %d)" % (node, attempts))
            return rows
        except (NoHostAvailable, OperationTimedOut):
            if time.monotonic() > deadline:
                raise
            time.sleep(1)
        finally:
            d.shutdown()


def control_node(d):
    address = d.control_connection._connection.endpoint.address
    return int(address.rsplit(".", 1)[1])


def test_quorum_writes_survive_kill_9_of_a_replica_and_of_the_control_node(cluster):
    d, s = driver(cluster)
    try:
        s.execute("CREATE KEYSPACE faults WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 3}")
        s.execute("CREATE TABLE faults.acked (k bigint PRIMARY KEY, writer int, v bigint) WITH initial_tablets = 8")
        phase = ROUND_SECONDS / 4
        run_started = time.monotonic()
        with Load(s) as load:
            for round_number in range(ROUNDS):
                control = control_node(d)
                replica = 2 if control != 2 else 3
                steps = [("kill", replica), ("start", replica), ("kill", control), ("start", control)]
                for action, node in steps:
                    time.sleep(phase)
                    started = time.monotonic()
                    if action == "kill":
                        cluster.kill(node)
                    else:
                        cluster.start_node(node)
                    print("round %d: %s node %d" % (round_number + 1, action, node))
                    # The load goes on: writes are acknowledged in the second
                    # half of the phase that follows (through the others).
                    time.sleep(phase)
                    assert load.acked_between(started + phase / 2, time.monotonic()) > 0, (round_number, action, node)
                wait_all_back_and_hints_delivered(cluster, s)
        print("%d writes acknowledged, %d failed, %d rounds of %.0f s, %.0f s with restarts and hint delivery" % (
            len(load.acked), load.failures, ROUNDS, ROUND_SECONDS, time.monotonic() - run_started))
        assert len(load.acked) > 100
        # Every acknowledged write reads back at ALL (every replica asked and
        # compared): the whole table, paged, and a sample key by key.
        started = time.monotonic()
        scan = SimpleStatement("SELECT k, v FROM faults.acked", consistency_level=ALL, fetch_size=5000)
        stored = {r.k: r.v for r in pinned(cluster, 3, scan)}
        lost = [k for k, v in load.acked.items() if stored.get(k) != v]
        assert lost == [], "%d acknowledged writes lost: %s" % (len(lost), sorted(lost)[:20])
        print("read back %d rows at ALL in %.1f s: 0 lost" % (len(stored), time.monotonic() - started))
        lookup = s.prepare("SELECT k, v FROM faults.acked WHERE k = ?")
        lookup.consistency_level = ALL
        for k in random.Random(7).sample(sorted(load.acked), min(500, len(load.acked))):
            row = s.execute(lookup, (k,)).one()
            assert row is not None and row.v == load.acked[k], k
    finally:
        d.shutdown()


def test_quorum_reads_return_the_latest_acknowledged_write_or_later(cluster):
    keys = list(range(8))
    d, s = driver(cluster)
    readers_driver, rs = driver(cluster, contact=2)
    try:
        s.execute("CREATE TABLE IF NOT EXISTS faults.history (k int PRIMARY KEY, v bigint)")
        update = s.prepare("UPDATE faults.history SET v = ? WHERE k = ?")
        update.consistency_level = Q
        read = rs.prepare("SELECT v FROM faults.history WHERE k = ?")
        read.consistency_level = Q
        acked = {k: 0 for k in keys}      # last value acknowledged to its writer
        attempted = {k: 0 for k in keys}  # last value sent
        lock = threading.Lock()
        stop = threading.Event()
        violations, reads = [], [0]

        def writer(my_keys):
            value = 0
            while not stop.is_set():
                value += 1
                for k in my_keys:
                    with lock:
                        attempted[k] = value
                    try:
                        s.execute(update, (value, k))
                    except Exception:
                        continue
                    with lock:
                        acked[k] = max(acked[k], value)

        def reader():
            seen = {k: 0 for k in keys}
            while not stop.is_set():
                for k in keys:
                    with lock:
                        floor = acked[k]
                    try:
                        row = rs.execute(read, (k,)).one()
                    except Exception:
                        continue
                    with lock:
                        ceiling = attempted[k]
                    got = row.v if row else 0
                    reads[0] += 1
                    if got < floor or got > ceiling or got < seen[k]:
                        violations.append((k, floor, got, ceiling, seen[k]))
                    seen[k] = max(seen[k], got)

        threads = [threading.Thread(target=writer, args=(keys[:4],)), threading.Thread(target=writer, args=(keys[4:],)),
                   threading.Thread(target=reader), threading.Thread(target=reader)]
        for t in threads:
            t.start()
        try:
            time.sleep(ROUND_SECONDS / 3)
            cluster.kill(3)
            time.sleep(ROUND_SECONDS / 3)
            cluster.start_node(3)
            time.sleep(ROUND_SECONDS / 3)
        finally:
            stop.set()
            for t in threads:
                t.join(timeout=60)
        print("%d reads checked, latest acknowledged values %s" % (reads[0], acked))
        assert reads[0] > 100
        assert min(acked.values()) > 10
        assert violations == [], violations[:20]
    finally:
        d.shutdown()
        readers_driver.shutdown()
