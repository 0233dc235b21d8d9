"""Online tablet migration through `tessera admin move` (issue 11, first
part) on a local cluster of etcd and three nodes: one replica of a tablet of
an RF 2 table moves to the node that held none, through every stage
(allow_write_both_read_old ... cleanup), while a writer inserts and deletes at
QUORUM and a reader reads back acknowledged rows. Afterwards: every
acknowledged row is there exactly once, no deleted row came back, every node
routes to the new replicas (system.tablets, admin tablets), the replicas'
digests agree before any read could repair them, and the old replica's copy is gone (size 0 after a
compaction) while the new one holds the data. Refused moves leave the
placement as it was. The only replica of an RF 1 tablet moves too, read back
at ONE (no read repair to hide a gap). Decommission moves every replica off a
node under writes, then the node leaves (and one that would leave too few
replicas is refused); removenode rebuilds a killed node's replicas from the
survivors (refused while an RF 1 tablet lived only there)."""
import json
import os
import re
import threading
import time
import urllib.request
import uuid

import pytest
from cassandra import ConsistencyLevel
from cassandra.query import SimpleStatement

from local_cluster import Writes, metric, node_session, paused_failpoints, running_cluster, wait_until

BINARY = os.environ["TESSERA_BINARY"]
Q, ALL = ConsistencyLevel.QUORUM, ConsistencyLevel.ALL


@pytest.fixture(scope="module")
def cluster():
    yield from running_cluster(BINARY, 3, ["--cluster-lease-seconds=3"])


def admin(cluster, node, *args):
    return cluster.admin(node, *args, timeout=600)


def tablets(cluster, node=1):
    code, out, err = admin(cluster, node, "tablets", "--keyspace", "mv", "--table", "t", "--json")
    assert code == 0, err
    return json.loads(out)["tablets"]


def local_sizes(cluster, node):
    """Bytes node `node` stores per tablet of mv.t, after a compaction."""
    url = "http://%s:%d/compact" % (cluster.address(node), cluster.admin_port)
    with urllib.request.urlopen(urllib.request.Request(url, method="POST"), timeout=120) as r:
        assert r.status == 200
    d, s = node_session(cluster, node)
    try:
        return [r.size_bytes for r in s.execute(
            "SELECT size_bytes FROM system.tablets WHERE keyspace_name = 'mv' AND table_name = 't'")]
    finally:
        d.shutdown()


def test_a_replica_moves_online_under_writes_and_reads(cluster):
    d, s = node_session(cluster, 1)
    try:
        s.execute("CREATE KEYSPACE mv WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 2}")
        s.execute("CREATE TABLE mv.t (k int PRIMARY KEY, v text) WITH initial_tablets = 4")
        insert = s.prepare("INSERT INTO mv.t (k, v) VALUES (?, ?)")
        insert.consistency_level = Q
        delete = s.prepare("DELETE FROM mv.t WHERE k = ?")
        delete.consistency_level = Q
        read = s.prepare("SELECT v FROM mv.t WHERE k = ?")
        read.consistency_level = Q
        for k in range(3000):
            s.execute(insert, (k, "v%d" % k))
        for k in range(0, 3000, 7):  # tombstones that must stream too
            s.execute(delete, (k,))
        before = tablets(cluster)
        first = before[0]
        old = [r["address"] for r in first["replicas"]]
        target = next(a for a in ("127.0.0.1", "127.0.0.2", "127.0.0.3") if a not in old)
        leaving = old[0]

        acked, deleted, errors, reads = set(), set(), [], [0]
        stop = threading.Event()

        def writer():
            k = 100000
            while not stop.is_set():
                try:
                    s.execute(insert, (k, "w%d" % k))
                    acked.add(k)
                    if k % 5 == 0:
                        s.execute(delete, (k,))
                        deleted.add(k)
                except Exception as e:  # noqa: BLE001 - every failure is reported below
                    errors.append(repr(e))
                k += 1

        def reader():
            k = 1
            while not stop.is_set():
                k = (k * 7919) % 3000
                try:
                    row = s.execute(read, (k,)).one()
                    if (row is None) != (k % 7 == 0) or (row is not None and row.v != "v%d" % k):
                        errors.append("read %d: %r" % (k, row))
                    reads[0] += 1
                except Exception as e:  # noqa: BLE001
                    errors.append(repr(e))

        threads = [threading.Thread(target=writer), threading.Thread(target=reader)]
        for t in threads:
            t.start()
        time.sleep(1)
        code, out, err = admin(cluster, 2, "move", "--keyspace", "mv", "--table", "t", "--start", first["start"],
                               "--from", leaving, "--to", target, "--json")
        time.sleep(1)
        stop.set()
        for t in threads:
            t.join()
        assert code == 0, (out, err)
        report = json.loads(out)
        print("move: %s; %d writes and %d reads during it" % (
            ", ".join("%s %.0f ms" % (st["stage"], st["barrier_micros"] / 1000) for st in report["stages"]),
            len(acked), reads[0]))
        assert report["completed"] and [st["stage"] for st in report["stages"]] == [
            "allow_write_both_read_old", "write_both_read_old", "streaming", "write_both_read_new", "use_new",
            "cleanup", "end"]
        assert report["streamed_keys"] > 0 and report["streamed_bytes"] > 0
        assert errors == [], errors[:5]
        assert acked and reads[0] > 0

        # Before any read at ALL (whose read repair would hide a gap): the two
        # replicas of every tablet already hold the same data, tombstones
        # included, so the new replica got both the stream and every write
        # made while it ran.
        code, out, err = admin(cluster, 1, "repair", "--keyspace", "mv", "--table", "t", "--json")
        assert code == 0, err
        repair = json.loads(out)
        assert repair["repaired"] == 0 and repair["failed"] == 0, repair
        for t in repair["tablets"]:
            assert len({(r["digest"], r["keys"]) for r in t["replicas"]}) == 1, t

        # The placement: only the first tablet changed, to the new replicas, on every node.
        after = tablets(cluster, 3)
        expected = [target if a == leaving else a for a in old]
        assert [r["address"] for r in after[0]["replicas"]] == expected and after[0]["transition"] is None
        assert [t["replicas"] for t in after[1:]] == [t["replicas"] for t in before[1:]]
        new_ids = {uuid.UUID(r["host_id"]) for r in after[0]["replicas"]}
        for node in (1, 2, 3):
            dn, sn = node_session(cluster, node)
            try:
                row = list(sn.execute("SELECT replicas FROM system.tablets WHERE keyspace_name = 'mv' "
                                      "AND table_name = 't'"))[0]
                assert set(row.replicas) == new_ids, (node, row.replicas)
            finally:
                dn.shutdown()

        # Every acknowledged row once, in token order; no deleted row back.
        rows = list(s.execute(SimpleStatement("SELECT k, v FROM mv.t", consistency_level=ALL, fetch_size=400)))
        keys = [r.k for r in rows]
        assert len(keys) == len(set(keys))
        want = {k for k in range(3000) if k % 7} | (acked - deleted)
        assert set(keys) == want
        assert all(r.v == ("v%d" % r.k if r.k < 100000 else "w%d" % r.k) for r in rows)
    finally:
        d.shutdown()

    # The leaving node dropped its copy; the new replica holds one.
    node_of = {"127.0.0.%d" % n: n for n in (1, 2, 3)}
    assert local_sizes(cluster, node_of[leaving])[0] == 0
    assert local_sizes(cluster, node_of[target])[0] > 0


def test_refused_moves_change_nothing(cluster):
    before = tablets(cluster)
    t = before[1]
    replicas = [r["address"] for r in t["replicas"]]
    outsider = next(a for a in ("127.0.0.1", "127.0.0.2", "127.0.0.3") if a not in replicas)
    cases = [
        (["--from", replicas[0], "--to", replicas[1]], "already holds a replica"),
        (["--from", outsider, "--to", replicas[0]], "holds no replica"),
        (["--from", replicas[0], "--to", "127.0.0.9"], "no member of the cluster is 127.0.0.9"),
    ]
    for args, message in cases:
        code, out, err = admin(cluster, 1, "move", "--keyspace", "mv", "--table", "t", "--start", t["start"], *args)
        assert code == 1 and message in err, (args, code, out, err)
    code, _, err = admin(cluster, 1, "move", "--keyspace", "mv", "--table", "t", "--start", "1234", "--from",
                         replicas[0], "--to", outsider)
    assert code == 1 and "no tablet of the table starts at 1234" in err, err
    assert tablets(cluster) == before


def test_a_split_recorded_after_a_move_was_planned_refuses_the_move(cluster):
    # The move is validated against the whole tablet; a split recorded before
    # its first stage must refuse it. Going on would stream and clean up the
    # whole old range: the source would delete the right piece, whose only
    # replica (RF 1) it still is.
    d, s = node_session(cluster, 1)
    try:
        s.execute("CREATE KEYSPACE mvs WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}")
        s.execute("CREATE TABLE mvs.t (k int PRIMARY KEY, v text) WITH initial_tablets = 1")
        insert = s.prepare("INSERT INTO mvs.t (k, v) VALUES (?, ?)")
        for k in range(600):
            s.execute(insert, (k, str(k)))
        code, out, err = admin(cluster, 1, "tablets", "--keyspace", "mvs", "--table", "t", "--json")
        (only,) = json.loads(out)["tablets"]
        source = only["replicas"][0]["address"]
        source_node = int(source.rsplit(".", 1)[1])
        target = next(a for a in ("127.0.0.1", "127.0.0.2", "127.0.0.3") if a != source)
        driver = next(n for n in (1, 2, 3) if n != source_node)
        status, body = cluster.admin_post(driver, "/failpoints?name=migration.planned&action=pause")
        assert status == 200, body
        move = {}
        mover = threading.Thread(target=lambda: move.setdefault("result", admin(
            cluster, driver, "move", "--keyspace", "mvs", "--table", "t", "--start", only["start"], "--from", source,
            "--to", target)))
        mover.start()
        wait_until(lambda: "migration.planned" in paused_failpoints(cluster, driver), 60, "the move held once planned")
        sd, ss = node_session(cluster, source_node)
        try:
            (tablet_id,) = [r.tablet_id for r in ss.execute(
                "SELECT tablet_id FROM system.tablets WHERE keyspace_name = 'mvs' AND table_name = 't'")]
        finally:
            sd.shutdown()
        status, body = cluster.admin_post(source_node, "/tablets/split?keyspace=mvs&table=t&tablet=%d" % tablet_id)
        assert status == 200, body
        status, body = cluster.admin_post(driver, "/failpoints?name=migration.planned&action=off")
        assert status == 200, body
        mover.join(120)
        code, out, err = move["result"]
        assert code == 1 and "split, merged or moved since the migration was planned" in out + err, (code, out, err)
        code, out, err = admin(cluster, 1, "tablets", "--keyspace", "mvs", "--table", "t", "--json")
        pieces = json.loads(out)["tablets"]
        assert len(pieces) == 2 and all([r["address"] for r in p["replicas"]] == [source] for p in pieces), pieces
        # RF 1 read at ONE: nothing can repair a gap.
        rows = {r.k: r.v for r in s.execute(SimpleStatement("SELECT k, v FROM mvs.t", fetch_size=100))}
        assert rows == {k: str(k) for k in range(600)}
        s.execute("DROP KEYSPACE mvs")
    finally:
        d.shutdown()


def test_the_only_replica_of_a_tablet_moves(cluster):
    # RF 1: nothing can repair a gap, so reading every row back at ONE from
    # the new replica checks the stream and the writes made during it.
    d, s = node_session(cluster, 3)
    try:
        s.execute("CREATE KEYSPACE mv1 WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}")
        s.execute("CREATE TABLE mv1.t (p int, c int, v text, PRIMARY KEY (p, c)) WITH initial_tablets = 2")
        insert = s.prepare("INSERT INTO mv1.t (p, c, v) VALUES (?, ?, ?)")
        for p in range(40):
            for c in range(25):
                s.execute(insert, (p, c, "%d.%d" % (p, c)))
        s.execute("DELETE FROM mv1.t WHERE p = 3")
        s.execute("DELETE FROM mv1.t WHERE p = 4 AND c > 10")
        code, out, err = admin(cluster, 1, "tablets", "--keyspace", "mv1", "--table", "t", "--json")
        first = json.loads(out)["tablets"][0]
        leaving = first["replicas"][0]["address"]
        target = next(a for a in ("127.0.0.1", "127.0.0.2", "127.0.0.3") if a != leaving)
        with Writes(s, insert, 1000, lambda p: (p, 0, "w")) as w:
            code, out, err = admin(cluster, 2, "move", "--keyspace", "mv1", "--table", "t", "--start",
                                   first["start"], "--from", leaving, "--to", target)
        acked, errors = w.acked, w.errors
        assert code == 0, (out, err)
        assert out.strip().endswith("moved") and "streaming" in out, out
        assert errors == [], errors[:5]
        code, out, err = admin(cluster, 1, "tablets", "--keyspace", "mv1", "--table", "t", "--json")
        assert [r["address"] for r in json.loads(out)["tablets"][0]["replicas"]] == [target]
        rows = {(r.p, r.c): r.v for r in s.execute(SimpleStatement("SELECT p, c, v FROM mv1.t", fetch_size=300))}
        want = {(p, c): "%d.%d" % (p, c) for p in range(40) for c in range(25) if p != 3 and not (p == 4 and c > 10)}
        want.update({(p, 0): "w" for p in acked})
        assert rows == want
    finally:
        d.shutdown()


def test_decommission_moves_every_replica_off_then_the_node_leaves(cluster):
    d, s = node_session(cluster, 1)
    try:
        # RF 3 on 3 nodes: no node could take node 3's replicas; refused, nothing moves.
        s.execute("CREATE KEYSPACE rf3 WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 3}")
        s.execute("CREATE TABLE rf3.t (k int PRIMARY KEY)")
        s.execute("INSERT INTO rf3.t (k) VALUES (1)")
        before = tablets(cluster)
        code, out, err = admin(cluster, 1, "decommission", "--node", "127.0.0.3")
        assert code == 1 and "no live node of data center datacenter1 can take the replica" in err, (out, err)
        assert tablets(cluster) == before
        s.execute("DROP KEYSPACE rf3")

        insert = s.prepare("INSERT INTO mv.t (k, v) VALUES (?, ?)")
        insert.consistency_level = Q
        with Writes(s, insert, 200000, lambda k: (k, "d%d" % k)) as w:
            code, out, err = admin(cluster, 1, "decommission", "--node", "127.0.0.3", "--json")
        acked, errors = w.acked, w.errors
        assert code == 0, (out, err)
        report = json.loads(out)
        assert report["left"] and report["moves"] and all(m["report"]["completed"] for m in report["moves"])
        assert errors == [], errors[:5]
        print("decommission: %d tablet replicas moved off 127.0.0.3 under %d writes" % (len(report["moves"]),
                                                                                       len(acked)))
        # No tablet of either table has a replica on node 3; the status lists two nodes.
        for ks, rf in (("mv", 2), ("mv1", 1)):
            code, out, _ = admin(cluster, 2, "tablets", "--keyspace", ks, "--json")
            for tab in json.loads(out)["tablets"]:
                addresses = [r["address"] for r in tab["replicas"]]
                assert "127.0.0.3" not in addresses and len(addresses) == rf, tab
        code, out, _ = admin(cluster, 2, "status", "--json")
        assert [n["address"] for n in json.loads(out)["nodes"]] == ["127.0.0.1", "127.0.0.2"]
        # Nothing lost, before any read could repair a gap.
        code, out, err = admin(cluster, 2, "repair", "--keyspace", "mv", "--json")
        assert code == 0 and json.loads(out)["repaired"] == 0, out
        keys = [r.k for r in s.execute(SimpleStatement("SELECT k FROM mv.t", consistency_level=ALL, fetch_size=500))]
        assert len(keys) == len(set(keys)) and set(acked) <= set(keys)
        assert len(list(s.execute(SimpleStatement("SELECT p FROM mv1.t", fetch_size=500)))) >= 40 * 25 - 25 - 14
    finally:
        d.shutdown()
    cluster.kill(3)


def test_removenode_rebuilds_a_dead_nodes_replicas_from_the_survivors(cluster):
    # Node 3, decommissioned above, starts again on its data and joins
    # holding nothing; then node 2 is killed and removed.
    cluster.start_node(3)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        code, out, _ = admin(cluster, 1, "status", "--json")
        if code == 0 and [(n["address"], n["state"]) for n in json.loads(out)["nodes"]] == [
                ("127.0.0.1", "up"), ("127.0.0.2", "up"), ("127.0.0.3", "up")]:
            break
        time.sleep(0.5)
    # The refusal below needs an RF 1 tablet on node 2; where mv1's two
    # tablets are depends on the nodes' random host ids.
    code, out, err = admin(cluster, 1, "tablets", "--keyspace", "mv1", "--table", "t", "--json")
    holders = [(t["start"], t["replicas"][0]["address"]) for t in json.loads(out)["tablets"]]
    if all(h != "127.0.0.2" for _, h in holders):
        code, out, err = admin(cluster, 1, "move", "--keyspace", "mv1", "--table", "t", "--start", holders[0][0],
                               "--from", holders[0][1], "--to", "127.0.0.2")
        assert code == 0, (out, err)
    cluster.kill(2)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        code, out, _ = admin(cluster, 1, "status", "--json")
        if [n["state"] for n in json.loads(out)["nodes"]] == ["up", "down", "up"]:
            break
        time.sleep(0.5)
    code, out, err = admin(cluster, 1, "decommission", "--node", "127.0.0.2")
    assert code == 1 and "is down: remove it with removenode" in err, err
    # mv1 has RF 1: a tablet whose only copy was on node 2 cannot be rebuilt.
    code, out, err = admin(cluster, 1, "removenode", "--node", "127.0.0.2")
    assert code == 1 and "has no live replica but 127.0.0.2's" in err, err
    d, s = node_session(cluster, 1)
    try:
        s.execute("DROP KEYSPACE mv1")
        insert = s.prepare("INSERT INTO mv.t (k, v) VALUES (?, ?)")
        insert.consistency_level = ConsistencyLevel.ONE  # node 2 is gone: QUORUM of RF 2 is unavailable
        with Writes(s, insert, 300000, lambda k: (k, "r%d" % k)) as w:
            code, out, err = admin(cluster, 1, "removenode", "--node", "127.0.0.2", "--json")
        assert code == 0, (out, err)
        assert w.errors == [], w.errors[:5]
        report = json.loads(out)
        assert report["left"] and all(m["report"]["completed"] and m["to"] == "127.0.0.3" for m in report["moves"])
        # Every tablet has its two replicas again, on the two live nodes.
        code, out, _ = admin(cluster, 3, "tablets", "--keyspace", "mv", "--json")
        for tab in json.loads(out)["tablets"]:
            assert sorted(r["address"] for r in tab["replicas"]) == ["127.0.0.1", "127.0.0.3"], tab
        code, out, _ = admin(cluster, 3, "status", "--json")
        assert [n["address"] for n in json.loads(out)["nodes"]] == ["127.0.0.1", "127.0.0.3"]
        # The hints node 1 kept for node 2 while it was down go with it.
        wait_until(lambda: metric(cluster, 1, "tessera_hints_pending") == 0 and re.search(
            r"dropped [1-9][0-9]* hints for \S+, no longer a member", cluster.log(1)), 15, "node 2's hints dropped")
        code, out, err = admin(cluster, 3, "repair", "--keyspace", "mv", "--json")
        assert code == 0 and json.loads(out)["repaired"] == 0, out
        keys = {r.k for r in s.execute(SimpleStatement("SELECT k FROM mv.t", consistency_level=ALL, fetch_size=500))}
        assert set(w.acked) <= keys and {k for k in range(3000) if k % 7} <= keys
    finally:
        d.shutdown()
