"""Issue 29, item 3 (must-show 3): each node decides for itself which peers
are up, from heartbeats over the internode channel (cluster/failure_detector.h);
the etcd lease decides membership, not liveness.

Three nodes in network namespaces of the test's own (netns_cluster.py), RF 3,
the default failure-detector timeout (2 s), leases of 3 s.
- etcd SIGSTOPped for 20 s under QUORUM writes and reads through all three
  nodes: every lease expires while it is stopped, and yet no request gets
  Unavailable and no node sends a DOWN event, during the stall or after it,
  until every node is alive in etcd again under a new lease and has
  coordinated 100 more requests.
- Node 3 cut off from nodes 1 and 2 only (etcd and the clients still reach
  it): nodes 1 and 2 send DOWN for it within 3 s, node 3 sends DOWN for
  both of them, and after the heal every one of them sends UP within 1 s.
Events are read from a REGISTERed raw connection to each node."""
import base64
import json
import os
import signal
import threading
import time
import urllib.request

import pytest
from cassandra import ConsistencyLevel
from cassandra.cluster import EXEC_PROFILE_DEFAULT, Cluster, ExecutionProfile
from cassandra.policies import WhiteListRoundRobinPolicy
from cassandra.query import SimpleStatement

from local_cluster import EventConnection, wait_until
from netns_cluster import ADMIN_PORT, CQL_PORT, NetnsCluster

BINARY = os.environ["TESSERA_BINARY"]
Q = ConsistencyLevel.QUORUM
STALL_SECONDS = 20


@pytest.fixture(scope="module")
def cluster():
    c = NetnsCluster(BINARY, 3, ["--cluster-lease-seconds=3"])
    try:
        c.start()
        yield c
    finally:
        if c.etcd is not None and c.etcd.poll() is None:
            c.etcd.send_signal(signal.SIGCONT)
        c.stop()


def pinned_session(cluster, node):
    addr = cluster.address(node)
    profile = ExecutionProfile(load_balancing_policy=WhiteListRoundRobinPolicy([addr]), request_timeout=10)
    d = Cluster([addr], port=CQL_PORT, protocol_version=4, connect_timeout=10,
                execution_profiles={EXEC_PROFILE_DEFAULT: profile})
    return d, d.connect()


def alive_leases(cluster):
    """The leases of the nodes' liveness keys in etcd (/tessera/alive/...)."""
    prefix = b"/tessera/alive/"
    end = prefix[:-1] + bytes([prefix[-1] + 1])
    body = json.dumps({"key": base64.b64encode(prefix).decode(), "range_end": base64.b64encode(end).decode()})
    request = urllib.request.Request(cluster.etcd_endpoint + "/v3/kv/range", data=body.encode())
    with urllib.request.urlopen(request, timeout=5) as r:
        return [kv.get("lease", "0") for kv in json.load(r).get("kvs", [])]


def states(cluster, node):
    """address -> "up" / "down" as node `node` sees its cluster (admin /cluster/status)."""
    url = "http://%s:%d/cluster/status" % (cluster.address(node), ADMIN_PORT)
    with urllib.request.urlopen(url, timeout=10) as r:
        return {n["address"]: n["state"] for n in json.load(r)["nodes"]}


class Events:
    """Every event each node sends, with its arrival time, read on a thread."""

    def __init__(self, cluster):
        self.lock = threading.Lock()
        self.seen = []  # (time, node, event)
        self.stopping = False
        self.connections = {n: EventConnection(cluster.address(n), CQL_PORT) for n in (1, 2, 3)}
        self.threads = [threading.Thread(target=self._read, args=(n,), daemon=True) for n in (1, 2, 3)]
        for t in self.threads:
            t.start()

    def _read(self, node):
        while not self.stopping:
            try:
                e = self.connections[node].next_event(0.2)
            except OSError:
                return
            if e is not None:
                with self.lock:
                    self.seen.append((time.monotonic(), node, e))

    def since(self, start):
        with self.lock:
            return [(t, n, e) for t, n, e in self.seen if t >= start]

    def wait_for(self, node, event, since, timeout):
        """Seconds after `since` at which `node` sent `event`; fails after timeout."""
        deadline = time.monotonic() + timeout
        while True:
            for t, n, e in self.since(since):
                if n == node and e == event:
                    return t - since
            if time.monotonic() > deadline:
                raise AssertionError("node %d sent no %s within %.1f s; saw %s"
                                     % (node, event, timeout, self.since(since)))
            time.sleep(0.02)

    def close(self):
        self.stopping = True
        for t in self.threads:
            t.join(timeout=5)
        for c in self.connections.values():
            c.close()


@pytest.fixture(scope="module")
def events(cluster):
    d, s = pinned_session(cluster, 1)
    try:
        s.execute("CREATE KEYSPACE fd WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 3}")
        s.execute("CREATE TABLE fd.t (k int PRIMARY KEY, v int)")
    finally:
        d.shutdown()
    e = Events(cluster)
    yield e
    e.close()


def test_an_etcd_stall_marks_nobody_down(cluster, events):
    sessions = {n: pinned_session(cluster, n) for n in (1, 2, 3)}
    outcomes = []  # (node, error name or None)
    lock = threading.Lock()
    stop = threading.Event()

    def load(node, offset):
        session = sessions[node][1]
        write = SimpleStatement("INSERT INTO fd.t (k, v) VALUES (%s, %s)", consistency_level=Q)
        read = SimpleStatement("SELECT v FROM fd.t WHERE k = %s", consistency_level=Q)
        i = 0
        while not stop.is_set():
            k = offset + i % 50
            try:
                session.execute(write, (k, i))
                session.execute(read, (k,))
                error = None
            except Exception as e:  # counted below
                error = type(e).__name__
                if error == "NoHostAvailable" and getattr(e, "errors", None):
                    # A pinned session's retry of an Unavailable finds no next host.
                    error += ":" + ",".join(sorted({type(x).__name__ for x in e.errors.values()}))
            with lock:
                outcomes.append((node, error))
            i += 1

    threads = [threading.Thread(target=load, args=(n, 100 * n)) for n in (1, 2, 3)]
    start = time.monotonic()
    for t in threads:
        t.start()
    def done_by_each(since_count):
        with lock:
            counts = [sum(1 for n, _ in outcomes[since_count:] if n == node) for node in (1, 2, 3)]
        return min(counts)

    try:
        # The stall happens under load: every node has coordinated requests first.
        wait_until(lambda: done_by_each(0) >= 50, 60, "requests through every node before the stall")
        leases_before = alive_leases(cluster)
        assert len(leases_before) == 3, leases_before
        cluster.etcd.send_signal(signal.SIGSTOP)
        stalled = time.monotonic()
        try:
            time.sleep(STALL_SECONDS)  # how long the fault lasts, not a wait for a condition
        finally:
            cluster.etcd.send_signal(signal.SIGCONT)
        # Every lease expired in the stall: each node takes a new one and writes its key again...
        def renewed():
            leases = alive_leases(cluster)
            return len(leases) == 3 and not set(leases) & set(leases_before)
        wait_until(renewed, 60, "every node alive again in etcd under a new lease")
        # ...and the load goes on through every node after that.
        with lock:
            resumed_at = len(outcomes)
        wait_until(lambda: done_by_each(resumed_at) >= 100, 60, "requests through every node after the stall")
    finally:
        stop.set()
        for t in threads:
            t.join(timeout=30)
        for d, _ in sessions.values():
            d.shutdown()
    errors = {}
    for node, error in outcomes:
        if error:
            errors[error] = errors.get(error, 0) + 1
    print("%d requests (2 per round) in %.0f s around a %d s etcd stall; errors: %s"
          % (2 * len(outcomes), time.monotonic() - start, STALL_SECONDS, errors or "none"))
    assert len(outcomes) > 100, "the load did not run"
    assert not [name for name in errors if "Unavailable" in name or name == "NoHostAvailable"], errors
    downs = [(t - stalled, n, e) for t, n, e in events.since(start) if e[1] == "DOWN"]
    assert downs == [], "DOWN events during or after an etcd stall: %s" % downs


def test_a_node_cut_off_from_its_peers_is_down_to_them_and_up_after_the_heal(cluster, events):
    a3 = cluster.address(3)
    cut = time.monotonic()
    cluster.partition(3)
    try:
        down = {n: events.wait_for(n, ("STATUS_CHANGE", "DOWN", a3, CQL_PORT), cut, 10) for n in (1, 2)}
        down3 = {n: events.wait_for(3, ("STATUS_CHANGE", "DOWN", cluster.address(n), CQL_PORT), cut, 10)
                 for n in (1, 2)}
        # nodetool-like status follows what each node sees, etcd's leases notwithstanding.
        assert states(cluster, 1) == {cluster.address(1): "up", cluster.address(2): "up", a3: "down"}
        assert states(cluster, 3) == {cluster.address(1): "down", cluster.address(2): "down", a3: "up"}
    finally:
        healed = time.monotonic()
        cluster.heal(3)
    up = {n: events.wait_for(n, ("STATUS_CHANGE", "UP", a3, CQL_PORT), healed, 10) for n in (1, 2)}
    up3 = {n: events.wait_for(3, ("STATUS_CHANGE", "UP", cluster.address(n), CQL_PORT), healed, 10) for n in (1, 2)}
    print("node 3 DOWN to nodes 1, 2 after %.2f, %.2f s; they to node 3 after %.2f, %.2f s"
          % (down[1], down[2], down3[1], down3[2]))
    print("after the heal: node 3 UP to nodes 1, 2 after %.2f, %.2f s; they to node 3 after %.2f, %.2f s"
          % (up[1], up[2], up3[1], up3[2]))
    # The bounds: down within 3 s of the cut, up within 1 s of the heal.
    assert max(list(down.values()) + list(down3.values())) < 3.0, (down, down3)
    assert max(list(up.values()) + list(up3.values())) < 1.0, (up, up3)
    for n in (1, 2, 3):
        assert set(states(cluster, n).values()) == {"up"}
