"""Cluster membership through the front door (issue 10, first part): a local
cluster of etcd and three nodes started by `tessera cluster start`; the
Python driver, given one contact point, discovers every node; system.peers,
peers_v2 and system.local agree on host ids; node events (STATUS_CHANGE,
TOPOLOGY_CHANGE) reach a REGISTERed connection when a node is killed with
-9, restarted, joins and leaves."""
import json
import os
import subprocess
import time

import pytest
from cassandra.cluster import EXEC_PROFILE_DEFAULT, Cluster, ExecutionProfile
from cassandra.policies import RoundRobinPolicy, WhiteListRoundRobinPolicy

from local_cluster import EventConnection, running_cluster

BINARY = os.environ["TESSERA_BINARY"]
LEASE_SECONDS = 3


@pytest.fixture(scope="module")
def cluster():
    yield from running_cluster(BINARY, 3, ["--cluster-lease-seconds=%d" % LEASE_SECONDS])


def connect(cluster, contact=1, policy=None):
    profile = ExecutionProfile(load_balancing_policy=policy or RoundRobinPolicy(), request_timeout=20)
    driver = Cluster([cluster.address(contact)], port=cluster.port, protocol_version=4, connect_timeout=10,
                     execution_profiles={EXEC_PROFILE_DEFAULT: profile})
    return driver, driver.connect()


def node_session(cluster, node):
    """A driver that talks to one node only."""
    return connect(cluster, node, WhiteListRoundRobinPolicy([cluster.address(node)]))


def wait_until(predicate, timeout, what):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return time.monotonic()
        time.sleep(0.1)
    raise AssertionError("not within %.0f s: %s" % (timeout, what))


def test_launcher_writes_every_process_to_cluster_json(cluster):
    m = cluster.manifest()
    assert m["etcd"]["endpoint"] == "http://127.0.0.1:%d" % cluster.etcd_port
    assert [n["address"] for n in m["nodes"]] == ["127.0.0.1", "127.0.0.2", "127.0.0.3"]
    for p in [m["etcd"]] + m["nodes"]:
        os.kill(p["pid"], 0)  # alive, under the recorded pid
    assert all(n["cql_port"] == cluster.port for n in m["nodes"])


def test_driver_discovers_the_cluster_from_one_contact_point(cluster):
    driver, session = connect(cluster)
    try:
        # Node 1 learns of the others through its etcd watch; the driver
        # through system.peers or the NEW_NODE events that follow.
        wait_until(lambda: len(driver.metadata.all_hosts()) == 3, 10, "the driver knows 3 hosts")
        hosts = sorted(driver.metadata.all_hosts(), key=lambda h: h.address)
        assert [h.address for h in hosts] == ["127.0.0.1", "127.0.0.2", "127.0.0.3"]
        wait_until(lambda: all(h.is_up for h in hosts), 20, "every host up in the driver")
        assert {h.datacenter for h in hosts} == {"datacenter1"}
        # One pool per node: requests spread over the three.
        served = set()
        for _ in range(30):
            served.add(session.execute("SELECT release_version FROM system.local").response_future._current_host.address)
        assert served == {"127.0.0.1", "127.0.0.2", "127.0.0.3"}
        # Every node holds the same (empty) schema, so the versions agree.
        assert driver.control_connection.wait_for_schema_agreement(wait_time=10)
        # Distinct tokens, one per node, in the driver's token map.
        assert len(driver.metadata.token_map.ring) == 3
    finally:
        driver.shutdown()


def test_peers_and_local_agree_on_host_ids(cluster):
    local = {}
    peers = {}
    for n in (1, 2, 3):
        driver, session = node_session(cluster, n)
        try:
            row = session.execute("SELECT host_id, rpc_address, data_center, rack, tokens FROM system.local").one()
            local[n] = row
            assert row.rpc_address == cluster.address(n)
            v1 = {r.peer: r for r in session.execute("SELECT peer, host_id, rpc_address, data_center, rack FROM system.peers")}
            v2 = {r.peer: r for r in session.execute(
                "SELECT peer, host_id, native_address, native_port FROM system.peers_v2")}
            assert sorted(v1) == sorted(cluster.address(o) for o in (1, 2, 3) if o != n)
            assert sorted(v2) == sorted(v1)
            for address, r in v2.items():
                assert r.native_port == cluster.port and r.native_address == address
                assert r.host_id == v1[address].host_id
            peers[n] = {a: r.host_id for a, r in v1.items()}
        finally:
            driver.shutdown()
    ids = {cluster.address(n): local[n].host_id for n in (1, 2, 3)}
    assert len(set(ids.values())) == 3
    for n in (1, 2, 3):
        for address, host_id in peers[n].items():
            assert ids[address] == host_id, (n, address)
    assert len({tuple(local[n].tokens) for n in (1, 2, 3)}) == 3


def test_kill_and_restart_send_status_events_and_keep_the_host_id(cluster):
    driver, session = node_session(cluster, 3)
    host_id = session.execute("SELECT host_id FROM system.local").one().host_id
    driver.shutdown()
    events = EventConnection(cluster.address(1), cluster.port)
    watcher, _ = connect(cluster)
    try:
        t0 = time.monotonic()
        cluster.kill(3)
        seen = events.wait_for(("STATUS_CHANGE", "DOWN", "127.0.0.3", cluster.port), LEASE_SECONDS + 5)
        print("DOWN after %.1f s (lease %d s); events %s" % (time.monotonic() - t0, LEASE_SECONDS, seen))
        host3 = next(h for h in watcher.metadata.all_hosts() if h.address == "127.0.0.3")
        wait_until(lambda: not host3.is_up, 20, "the driver marks 127.0.0.3 down")
        # A down node stays a member: system.peers still lists it.
        driver, session = node_session(cluster, 1)
        assert "127.0.0.3" in {r.peer for r in session.execute("SELECT peer FROM system.peers")}
        driver.shutdown()

        t0 = time.monotonic()
        cluster.start_node(3)
        events.wait_for(("STATUS_CHANGE", "UP", "127.0.0.3", cluster.port), 15)
        print("UP %.1f s after start-node" % (time.monotonic() - t0))
        wait_until(lambda: host3.is_up, 60, "the driver marks 127.0.0.3 up again")
        driver, session = node_session(cluster, 3)
        assert session.execute("SELECT host_id FROM system.local").one().host_id == host_id
        driver.shutdown()
    finally:
        events.close()
        watcher.shutdown()


def test_a_new_node_joins_and_a_stopped_one_goes_down_at_once(cluster):
    events = EventConnection(cluster.address(2), cluster.port)
    watcher, _ = connect(cluster)
    data = os.path.join(cluster.dir, "node4")
    log = open(os.path.join(cluster.dir, "node4.log"), "ab")
    proc = subprocess.Popen([BINARY, "server", "--data-dir", data, "--listen", "127.0.0.4:%d" % cluster.port,
                             "--admin-listen", "off", "--etcd", "http://127.0.0.1:%d" % cluster.etcd_port,
                             "--node-address", "127.0.0.4", "--dc", "datacenter1", "--rack", "rack2",
                             "--internode-port", str(cluster.internode_port),
                             "--cluster-lease-seconds=%d" % LEASE_SECONDS], stdout=log, stderr=log)
    try:
        events.wait_for(("TOPOLOGY_CHANGE", "NEW_NODE", "127.0.0.4", cluster.port), 30)
        wait_until(lambda: any(h.address == "127.0.0.4" and h.is_up for h in watcher.metadata.all_hosts()), 60,
                   "the driver adds 127.0.0.4")
        driver, session = node_session(cluster, 2)
        rack = {r.peer: r.rack for r in session.execute("SELECT peer, rack FROM system.peers")}
        driver.shutdown()
        assert rack["127.0.0.4"] == "rack2"
        t0 = time.monotonic()
        proc.terminate()
        proc.wait(timeout=30)
        # A clean stop revokes the lease: DOWN without waiting for the TTL.
        events.wait_for(("STATUS_CHANGE", "DOWN", "127.0.0.4", cluster.port), LEASE_SECONDS + 5)
        print("DOWN %.2f s after SIGTERM" % (time.monotonic() - t0))
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        events.close()
        watcher.shutdown()


def test_a_second_node_on_a_live_nodes_address_is_refused(cluster):
    out = subprocess.run([BINARY, "server", "--data-dir", os.path.join(cluster.dir, "intruder"),
                          "--listen", "127.0.0.1:%d" % (cluster.port + 1), "--admin-listen", "off",
                          "--etcd", "http://127.0.0.1:%d" % cluster.etcd_port, "--exit-after-start"],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode != 0
    assert "is alive at address 127.0.0.1" in out.stderr + out.stdout


def columns_on(cluster, node, keyspace):
    driver, session = node_session(cluster, node)
    try:
        rows = session.execute("SELECT table_name, column_name, type FROM system_schema.columns WHERE keyspace_name = %s",
                               (keyspace,))
        return sorted((r.table_name, r.column_name, r.type) for r in rows)
    finally:
        driver.shutdown()


def test_schema_changes_reach_every_node_and_drivers_see_agreement(cluster):
    driver, session = connect(cluster)
    try:
        rs = session.execute("CREATE KEYSPACE shared WITH replication = {'class': 'SimpleStrategy', "
                             "'replication_factor': 1}")
        assert rs.response_future.is_schema_agreed
        for n in (1, 2, 3):
            d, s = node_session(cluster, n)
            s.execute("CREATE TABLE shared.t%d (pk int, ck int, v text, PRIMARY KEY (pk, ck))" % n)
            d.shutdown()
        d, s = node_session(cluster, 2)
        assert s.execute("ALTER TABLE shared.t1 ADD extra int").response_future.is_schema_agreed
        d.shutdown()
        expected = columns_on(cluster, 1, "shared")
        assert ("t1", "extra", "int") in expected and {t for t, _, _ in expected} == {"t1", "t2", "t3"}
        for n in (2, 3):
            assert columns_on(cluster, n, "shared") == expected
        assert driver.control_connection.wait_for_schema_agreement(wait_time=10)
        # The driver's metadata follows the SCHEMA_CHANGE events of its control connection.
        def has_column():
            ks = driver.metadata.keyspaces.get("shared")
            return ks is not None and "t1" in ks.tables and "extra" in ks.tables["t1"].columns
        wait_until(has_column, 10,
                   "the driver's metadata shows the new column")
    finally:
        driver.shutdown()


def test_one_of_two_concurrent_creates_wins(cluster):
    import threading
    results = {}

    def create(n):
        d, s = node_session(cluster, n)
        try:
            s.execute("CREATE TABLE shared.raced (pk int PRIMARY KEY, v%d int)" % n)
            results[n] = "created"
        except Exception as e:  # AlreadyExists
            results[n] = type(e).__name__
        finally:
            d.shutdown()

    threads = [threading.Thread(target=create, args=(n,)) for n in (1, 3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert sorted(results.values()) == ["AlreadyExists", "created"], results
    winner = next(n for n, r in results.items() if r == "created")
    for n in (1, 2, 3):
        cols = [c for t, c, _ in columns_on(cluster, n, "shared") if t == "raced"]
        assert sorted(cols) == sorted(["pk", "v%d" % winner]), (n, cols)


def test_a_node_that_was_down_catches_up_on_schema(cluster):
    cluster.kill(2)
    d, s = node_session(cluster, 1)
    s.execute("CREATE TABLE shared.while_down (pk int PRIMARY KEY, v int)")
    s.execute("DROP TABLE shared.t3")
    d.shutdown()
    cluster.start_node(2)
    assert columns_on(cluster, 2, "shared") == columns_on(cluster, 1, "shared")
    assert "node 2" not in cluster.log(2) or "applied entry" in cluster.log(2)


def test_membership_survives_an_etcd_restart(cluster):
    """etcd is killed with -9 and restarted on its data: the nodes' watches
    reconnect from the revision they had reached and their leases are
    renewed again, so a node killed afterwards still goes DOWN, and a DDL
    still reaches every node."""
    import signal
    m = cluster.manifest()
    etcd = m["etcd"]
    os.kill(etcd["pid"], signal.SIGKILL)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            os.kill(etcd["pid"], 0)
            with open("/proc/%d/stat" % etcd["pid"]) as f:
                if f.read().split(")")[-1].split()[0] == "Z":
                    break
        except (ProcessLookupError, FileNotFoundError):
            break
        time.sleep(0.05)
    time.sleep(1)  # the nodes see etcd gone
    peer = "http://127.0.0.1:%d" % etcd["peer_port"]
    client = "http://127.0.0.1:%d" % etcd["client_port"]
    log = open(etcd["log"], "ab")
    proc = subprocess.Popen([etcd["binary"], "--name", "tessera-etcd", "--data-dir", etcd["data_dir"],
                             "--listen-client-urls", client, "--advertise-client-urls", client,
                             "--listen-peer-urls", peer, "--initial-advertise-peer-urls", peer,
                             "--initial-cluster", "tessera-etcd=" + peer], stdout=log, stderr=log,
                            start_new_session=True)
    m["etcd"]["pid"] = proc.pid  # so that `tessera cluster stop` stops this one
    with open(os.path.join(cluster.dir, "cluster.json"), "w") as f:
        json.dump(m, f)
    events = EventConnection(cluster.address(1), cluster.port)
    try:
        d, s = node_session(cluster, 3)
        wait_until(lambda: _try(lambda: s.execute("CREATE TABLE shared.after_etcd (k int PRIMARY KEY)")), 30,
                   "DDL works again once etcd is back")
        d.shutdown()
        wait_until(lambda: any(t == "after_etcd" for t, _, _ in columns_on(cluster, 1, "shared")), 15,
                   "node 1 applies the DDL made on node 3")
        cluster.kill(2)
        events.wait_for(("STATUS_CHANGE", "DOWN", "127.0.0.2", cluster.port), LEASE_SECONDS + 10)
        cluster.start_node(2)
        events.wait_for(("STATUS_CHANGE", "UP", "127.0.0.2", cluster.port), 20)
    finally:
        events.close()


def _try(action):
    try:
        action()
        return True
    except Exception:
        return False
