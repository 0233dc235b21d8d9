"""ALTER KEYSPACE changing the replication factor on a local cluster of etcd
and three nodes (issue 11, node lifecycle): every tablet gets one replica
added (RF 1 -> 2) or dropped (RF 2 -> 1) through the migration stages, and
the statement answers once they all have, as ScyllaDB's does for a tablets
keyspace. Rows written at ONE before and during the change are all there
afterwards: after the raise, with a node killed (so that tablets it held
alone before are read from the replica the raise added, at ONE: no read
repair can hide a gap); after the drop, read at ONE with that node still
down (its replicas are the ones dropped first, and the others' data was
streamed before theirs went). A change of more than 1 at a time is refused
with Invalid, and nothing changes. When the node running the ALTER dies
with the change half done (held at the streaming stage by a failpoint, then
kill -9), its move is reverted by the migration resumer and the placement
balancer's leader completes every tablet to the new factor."""
import json
import os
import time
import urllib.request

import pytest
from cassandra import ConsistencyLevel, InvalidRequest
from cassandra.query import SimpleStatement

from local_cluster import Writes, node_session, paused_failpoints, running_cluster, wait_until

BINARY = os.environ["TESSERA_BINARY"]
ONE = ConsistencyLevel.ONE
ROWS = 3000


@pytest.fixture
def cluster():
    yield from running_cluster(BINARY, 3, ["--cluster-lease-seconds=3"])


@pytest.fixture
def balanced_cluster():
    yield from running_cluster(BINARY, 3, ["--cluster-lease-seconds=3", "--placement-balancer",
                                           "--placement-balancer-interval-ms=1000"])


def placement(cluster, node=1):
    """[(start, [replica addresses], transition)] of rf.t's tablets."""
    code, out, err = cluster.admin(node, "tablets", "--keyspace", "rf", "--table", "t", "--json", timeout=60)
    assert code == 0, err
    return [(t["start"], [r["address"] for r in t["replicas"]], t["transition"]) for t in json.loads(out)["tablets"]]


def all_rows(session):
    rows = session.execute(SimpleStatement("SELECT k, v FROM rf.t", consistency_level=ONE, fetch_size=500))
    return {r.k: r.v for r in rows}


def value(k):
    return "v%06d" % k


def create_and_load(session):
    """rf.t at RF 1 in 8 tablets, rows 0 .. ROWS-1 written at ONE; returns the prepared insert."""
    session.execute("CREATE KEYSPACE rf WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}")
    session.execute("CREATE TABLE rf.t (k int PRIMARY KEY, v text) WITH initial_tablets = 8")
    insert = session.prepare("INSERT INTO rf.t (k, v) VALUES (?, ?)")
    insert.consistency_level = ONE
    for k in range(ROWS):
        session.execute(insert, (k, value(k)))
    return insert


def test_raising_and_lowering_the_replication_factor(cluster):
    d, s = node_session(cluster, 1)
    try:
        create_and_load(s)
        before = placement(cluster)
        assert len(before) == 8 and all(len(t[1]) == 1 for t in before), before
        assert len({t[1][0] for t in before}) == 3, "the 8 tablets start on all three nodes"

        # More than 1 at a time: refused, nothing changes.
        with pytest.raises(InvalidRequest, match="at most 1 at a time"):
            s.execute("ALTER KEYSPACE rf WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 3}")
        assert placement(cluster) == before

        # RF 1 -> 2 under writes at ONE (through node 2, on connections of
        # their own): answered once every tablet has 2 replicas.
        wd, ws = node_session(cluster, 2)
        writer_insert = ws.prepare("INSERT INTO rf.t (k, v) VALUES (?, ?)")
        writer_insert.consistency_level = ONE
        started = time.monotonic()
        with Writes(ws, writer_insert, ROWS, lambda k: (k, value(k))) as during:
            s.execute("ALTER KEYSPACE rf WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 2}",
                      timeout=300)
            took = time.monotonic() - started
        wd.shutdown()
        print("RF 1 -> 2: %.1f s, %d writes acknowledged meanwhile, %d failed" %
              (took, len(during.acked), len(during.errors)))
        assert during.acked, "the writer made no progress during the change"
        after = placement(cluster)
        assert [t[0] for t in after] == [t[0] for t in before]
        for old, new in zip(before, after):
            assert len(new[1]) == 2 and len(set(new[1])) == 2, new
            assert old[1][0] in new[1], (old, new)
            assert new[2] is None, new
        per_node = {}
        for t in after:
            for r in t[1]:
                per_node[r] = per_node.get(r, 0) + 1
        assert sorted(per_node.values()) == [5, 5, 6], per_node
        events = list(s.execute("SELECT kind, reason FROM system.tablet_events"))
        added = [e for e in events if e.kind == "migration" and "replica added on" in e.reason]
        assert len(added) == 8, [e.reason for e in events]
        written = set(range(ROWS)) | set(during.acked)
    finally:
        d.shutdown()

    # Node 3 dies: the tablets it held alone are read from the added replicas.
    victim, survivor = 3, 1
    assert any(t[1] == [cluster.address(victim)] for t in before)
    cluster.kill(victim)
    wait_until(lambda: [n["state"] for n in cluster.admin_json(survivor, "status")["nodes"]] == ["up", "up", "down"],
               30, "node 3 seen down")
    d, s = node_session(cluster, survivor)
    try:
        rows = all_rows(s)
        missing = written - set(rows)
        assert not missing, "%d acknowledged rows missing after the raise, e.g. %s" % (
            len(missing), sorted(missing)[:5])
        assert all(rows[k] == value(k) for k in written)

        # RF 2 -> 1 with the node still down: its replicas go first.
        s.execute("ALTER KEYSPACE rf WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}",
                  timeout=300)
        lowered = placement(cluster, survivor)
        assert all(len(t[1]) == 1 and t[2] is None for t in lowered), lowered
        assert all(cluster.address(victim) not in t[1] for t in lowered), lowered
        rows = all_rows(s)
        missing = written - set(rows)
        assert not missing, "%d acknowledged rows missing after the drop, e.g. %s" % (
            len(missing), sorted(missing)[:5])
        assert len(rows) == len(written)
    finally:
        d.shutdown()


def test_the_balancer_completes_a_change_whose_node_died(balanced_cluster):
    cluster = balanced_cluster
    d, s = node_session(cluster, 1)
    try:
        create_and_load(s)
        status, body = cluster.admin_post(1, "/failpoints?name=migration.streaming&action=pause")
        assert status == 200, body
        pending = s.execute_async(
            "ALTER KEYSPACE rf WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 2}", timeout=300)
        wait_until(lambda: "migration.streaming" in paused_failpoints(cluster, 1), 60,
                   "the first added replica held at streaming")
        # (The balancer's leader may be adding a replica of another tablet
        # meanwhile: its rule 0 sees the new factor too.)
        held = [t for t in placement(cluster, 2) if t[2]]
        assert any(t[2]["stage"] == "streaming" for t in held), held
        assert all(t[2]["leaving"] == "" and t[2]["pending"] for t in held), held
    finally:
        cluster.kill(1)
        d.shutdown()
    del pending
    # Node 1's tablets have their only copy there: it comes back (without
    # the failpoint), and the others finish the change without it.
    cluster.start_node(1)

    def complete():
        tablets = placement(cluster, 2)
        return all(len(t[1]) == 2 and t[2] is None for t in tablets)

    wait_until(complete, 120, "every tablet at RF 2, completed by the balancer")
    d, s = node_session(cluster, 2)
    try:
        events = []
        for node in (1, 2, 3):
            nd, ns = node_session(cluster, node)
            try:
                events += [e.reason for e in ns.execute("SELECT reason FROM system.tablet_events")]
            finally:
                nd.shutdown()
        completed = [e for e in events if "completed by the placement balancer" in e and "replica added on" in e]
        reverted = [e for e in events if "taken over" in e or "reverted" in e]
        print("balancer added %d replicas; %d take-over events" % (len(completed), len(reverted)))
        assert completed, events
        rows = all_rows(s)
        assert set(rows) == set(range(ROWS)) and all(rows[k] == value(k) for k in rows)
    finally:
        d.shutdown()
