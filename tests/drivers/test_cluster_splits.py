"""Automatic splits of a replicated tablet (issue 10, must-show 5): a local
cluster of etcd and three nodes whose balancers split a range table's tablets
above 64 KiB; every split goes through the table's placement in etcd and every
node applies it. Under QUORUM writes and paged QUORUM scans through every
node, nothing is lost, duplicated or reordered, checked row by row; the nodes
end with the same tablet boundaries and the replicas of every tablet with
identical digests (repair)."""
import json
import os
import subprocess
import threading
import time

import pytest
from cassandra import ConsistencyLevel
from cassandra.cluster import EXEC_PROFILE_DEFAULT, Cluster, ExecutionProfile
from cassandra.concurrent import execute_concurrent_with_args
from cassandra.policies import RoundRobinPolicy, WhiteListRoundRobinPolicy
from cassandra.query import SimpleStatement

from local_cluster import running_cluster

BINARY = os.environ["TESSERA_BINARY"]
Q, ALL = ConsistencyLevel.QUORUM, ConsistencyLevel.ALL


@pytest.fixture(scope="module")
def cluster():
    yield from running_cluster(BINARY, 3, ["--cluster-lease-seconds=3", "--tablet-split-size-bytes=65536",
                                           "--tablet-balance-interval-seconds=0.2"])


def session_for(cluster, node=None):
    policy = WhiteListRoundRobinPolicy([cluster.address(node)]) if node else RoundRobinPolicy()
    profile = ExecutionProfile(load_balancing_policy=policy, request_timeout=30, consistency_level=Q)
    d = Cluster([cluster.address(node or 1)], port=cluster.port, protocol_version=4, connect_timeout=10,
                execution_profiles={EXEC_PROFILE_DEFAULT: profile})
    return d, d.connect()


def value(p, c):
    return "%d:%d:%s" % (p, c, "z" * (c % 60))


def boundaries(session):
    rows = session.execute("SELECT start_key, end_key FROM system.tablets WHERE keyspace_name = 'sp' "
                           "AND table_name = 'ledger'")
    return sorted((r.start_key, r.end_key) for r in rows)


def test_automatic_splits_of_a_replicated_range_table_lose_duplicate_and_reorder_nothing(cluster):
    d, s = session_for(cluster)
    readers = [session_for(cluster, node) for node in (1, 2, 3)]
    try:
        s.execute("CREATE KEYSPACE sp WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 3}")
        s.execute("CREATE TABLE sp.ledger (p int, c int, v text, PRIMARY KEY (p, c)) WITH distribution = 'range'")
        insert = s.prepare("INSERT INTO sp.ledger (p, c, v) VALUES (?, ?, ?)")
        stop = threading.Event()
        acked = [set(), set()]
        failures, scans = [], [0, 0, 0]
        lock = threading.Lock()

        def writer(w):
            n = 0
            while not stop.is_set():
                keys = [((n + i) * 7919 % 300, w * 1_000_000 + n + i) for i in range(50)]
                n += 50
                results = execute_concurrent_with_args(s, insert, [(p, c, value(p, c)) for p, c in keys],
                                                       concurrency=20, raise_on_first_error=False)
                for (ok, _), key in zip(results, keys):
                    if ok:
                        with lock:
                            acked[w].add(key)

        def reader(i):
            _, rs = readers[i]
            while not stop.is_set():
                with lock:
                    before = acked[0] | acked[1]
                rows = list(rs.execute(SimpleStatement("SELECT p, c, v FROM sp.ledger", fetch_size=97)))
                seen = [(r.p, r.c) for r in rows]
                if seen != sorted(seen) or len(set(seen)) != len(seen):
                    failures.append("node %d: %d rows out of order or duplicated" % (i + 1, len(seen)))
                bad = [(r.p, r.c) for r in rows if r.v != value(r.p, r.c)]
                if bad:
                    failures.append("node %d: wrong values at %s" % (i + 1, bad[:5]))
                missing = before - set(seen)
                if missing:
                    failures.append("node %d: %d rows acknowledged before the scan missing: %s" % (
                        i + 1, len(missing), sorted(missing)[:5]))
                scans[i] += 1

        threads = [threading.Thread(target=writer, args=(w,)) for w in range(2)]
        threads += [threading.Thread(target=reader, args=(i,)) for i in range(3)]
        for t in threads:
            t.start()
        try:
            time.sleep(20)
        finally:
            stop.set()
            for t in threads:
                t.join(timeout=120)
        total = acked[0] | acked[1]
        print("%d rows acknowledged, scans per node %s" % (len(total), scans))
        assert failures == [], failures[:10]
        assert len(total) > 2000 and min(scans) >= 2

        # Every node has applied every split recorded in etcd: the same boundaries everywhere.
        def agreed():
            views = [boundaries(rs) for _, rs in readers]
            return views if all(v == views[0] for v in views) else None
        deadline = time.time() + 20
        while time.time() < deadline and not agreed():
            time.sleep(0.2)
        views = agreed()
        assert views, [len(boundaries(rs)) for _, rs in readers]
        assert len(views[0]) >= 4, "the balancers split the table into %d tablets" % len(views[0])
        print("%d tablets, the same boundaries on the 3 nodes" % len(views[0]))
        # system.tablets names each tablet's replicas: RF 3 of 3 nodes, all three.
        one = readers[0][1]
        host_ids = {r.host_id for r in one.execute("SELECT host_id FROM system.local")}
        host_ids |= {r.host_id for r in one.execute("SELECT host_id FROM system.peers")}
        assert len(host_ids) == 3
        for _, rs in readers:
            replicas = [r.replicas for r in rs.execute(
                "SELECT replicas FROM system.tablets WHERE keyspace_name = 'sp' AND table_name = 'ledger'")]
            assert replicas and all(r is not None and set(r) == host_ids for r in replicas), replicas[:3]

        # Row by row at ALL: exactly the acknowledged rows (no write failed
        # outright here), in order, with their values.
        rows = list(s.execute(SimpleStatement("SELECT p, c, v FROM sp.ledger", consistency_level=ALL,
                                              fetch_size=500)))
        seen = [(r.p, r.c) for r in rows]
        assert seen == sorted(seen) and len(set(seen)) == len(seen)
        assert set(seen) >= total
        assert all(r.v == value(r.p, r.c) for r in rows)

        # The replicas of every tablet (the placement's, one per split) are identical.
        out = subprocess.run([BINARY, "repair", "--admin", "127.0.0.2:%d" % cluster.admin_port, "--keyspace", "sp",
                              "--json"], capture_output=True, text=True, timeout=300)
        report = json.loads(out.stdout)
        assert out.returncode == 0 and report["failed"] == 0, report
        assert len(report["tablets"]) == len(views[0])
        for t in report["tablets"]:
            final = t.get("after", t["replicas"])
            assert len({(r["digest"], r["keys"]) for r in final}) == 1, t
        assert sum(t["replicas"][0]["keys"] for t in report["tablets"]) >= len(total)
    finally:
        d.shutdown()
        for rd, _ in readers:
            rd.shutdown()
