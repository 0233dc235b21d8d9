"""Vector search on a cluster (issue 31, item 3): three nodes and etcd, a
vector index on an RF 2 table, so that each node stores only some of its
tablets. ANN OF through every coordinator answers the same rows as an exact
search, whether the candidates come from the coordinator's own index (the
tablets it stores) or from a replica's index (the others, over the internode
VectorSearch call); a replica killed -9
and restarted rebuilds its index from its rows and takes in the writes it
missed through repair, a tablet split by hand changes nothing, and writes through
one node reach every replica's index."""
import json
import math
import os
import random
import struct
import subprocess

import pytest
from cassandra import ConsistencyLevel
from cassandra.query import SimpleStatement

from local_cluster import metric, node_session, running_cluster

BINARY = os.environ["TESSERA_BINARY"]
DIM = 12


@pytest.fixture(scope="module")
def cluster():
    yield from running_cluster(BINARY, 3, ["--cluster-lease-seconds=3"])


def literal(v):
    return "[" + ", ".join(repr(float(x)) for x in v) + "]"


def cosine(a, b):
    dot = sum(x * y for x, y in zip(a, b))
    return (1 + dot / math.sqrt(sum(x * x for x in a) * sum(y * y for y in b))) / 2


def f32(v):
    return list(struct.unpack(f">{len(v)}f", struct.pack(f">{len(v)}f", *v)))


def ann(session, q, k=10, level=ConsistencyLevel.QUORUM):
    statement = SimpleStatement(f"SELECT id FROM vc.items ORDER BY v ANN OF {literal(q)} LIMIT {k}",
                                consistency_level=level)
    return [r.id for r in session.execute(statement)]


def exact(stored, q, k=10):
    return sorted(stored, key=lambda i: -cosine(q, stored[i]))[:k]


def recall(sessions, stored, rng, queries=10):
    hits = total = 0
    for _ in range(queries):
        q = [rng.gauss(0, 1) for _ in range(DIM)]
        want = set(exact(stored, q))
        for s in sessions:
            got = ann(s, q)
            assert len(got) == 10
            hits += len(set(got) & want)
            total += 10
    return hits / total


def test_ann_through_every_coordinator_matches_an_exact_search(cluster):
    drivers = [node_session(cluster, n) for n in (1, 2, 3)]
    sessions = [s for _, s in drivers]
    try:
        s = sessions[0]
        s.execute("CREATE KEYSPACE vc WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 2}")
        s.execute(f"CREATE TABLE vc.items (id int PRIMARY KEY, v vector<float, {DIM}>) WITH initial_tablets = 8")
        s.execute("CREATE CUSTOM INDEX items_v ON vc.items (v) USING 'StorageAttachedIndex'")
        rng = random.Random(3)
        stored = {}
        for i in range(600):
            stored[i] = f32([rng.gauss(0, 1) for _ in range(DIM)])
            sessions[i % 3].execute(SimpleStatement(f"INSERT INTO vc.items (id, v) VALUES ({i}, {literal(stored[i])})",
                                                    consistency_level=ConsistencyLevel.QUORUM))
        # RF 2 on 3 nodes: every coordinator stores some tablets and not others.
        holders = [r.replicas for r in s.execute("SELECT replicas FROM system.tablets WHERE keyspace_name = 'vc' "
                                                 "AND table_name = 'items'")]
        assert holders and all(len(h) == 2 for h in holders)

        def searches_served():
            return sum(metric(cluster, n, "tessera_vector_searches_served_total") for n in (1, 2, 3))
        before = searches_served()
        assert recall(sessions, stored, rng) >= 0.95
        # The tablets a coordinator does not store were searched in a replica's index (not read whole).
        assert searches_served() > before

        # Node 3 is killed -9 while writes go on at ONE (RF 2: a quorum is
        # both replicas), then restarted: its index is rebuilt from its rows,
        # and the writes it missed reach it through repair (which writes them
        # into its store, and so into its index).
        cluster.kill(3)
        for i in range(600, 700):
            stored[i] = f32([rng.gauss(0, 1) for _ in range(DIM)])
            sessions[0].execute(SimpleStatement(f"INSERT INTO vc.items (id, v) VALUES ({i}, {literal(stored[i])})",
                                                consistency_level=ConsistencyLevel.ONE))
        target = stored[650]
        assert ann(sessions[1], target, 1, ConsistencyLevel.ONE) == [650]
        cluster.start_node(3)
        out = subprocess.run([BINARY, "repair", "--admin", "127.0.0.3:%d" % cluster.admin_port, "--keyspace", "vc",
                              "--json"], capture_output=True, text=True, timeout=300)
        report = json.loads(out.stdout)
        assert out.returncode == 0 and report["failed"] == 0, report
        drivers[2][0].shutdown()
        drivers[2] = node_session(cluster, 3)
        sessions[2] = drivers[2][1]
        assert ann(sessions[2], target, 1) == [650]
        assert recall(sessions, stored, rng) >= 0.95

        # A tablet split by hand: the candidates follow the new bounds.
        ids = sorted(r.tablet_id for r in s.execute("SELECT tablet_id FROM system.tablets WHERE keyspace_name = 'vc' "
                                                    "AND table_name = 'items'"))
        status, body = cluster.admin_post(1, "/tablets/split?keyspace=vc&table=items&tablet=%d" % ids[0])
        assert status == 200, body
        assert recall(sessions, stored, rng) >= 0.95
    finally:
        for d, _ in drivers:
            d.shutdown()
