"""`tessera admin status` and `tessera admin tablets` on a local cluster of
etcd and three nodes (part of issue 11): every node with its state, its
reported load and the tablet replicas placed on it, agreeing with the
tablet listing and with system.tablets; a node killed with -9 shows as
down (DN) with its last load; an unknown keyspace is an error."""
import json
import os
import subprocess
import time
import uuid

import pytest
from cassandra import ConsistencyLevel
from cassandra.cluster import Cluster

from local_cluster import running_cluster, wait_until

BINARY = os.environ["TESSERA_BINARY"]
LEASE_SECONDS = 3
ROWS, VALUE_BYTES, RF, TABLETS = 3000, 200, 2, 8


@pytest.fixture(scope="module")
def cluster():
    yield from running_cluster(BINARY, 3, ["--cluster-lease-seconds=%d" % LEASE_SECONDS, "--load-report-seconds=1"])


def admin(cluster, node, *args, expect=0):
    out = subprocess.run([BINARY, "admin", *args, "--admin", "%s:%d" % (cluster.address(node), cluster.admin_port)],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == expect, (out.returncode, out.stdout, out.stderr)
    return out


def status(cluster, node=1):
    return json.loads(admin(cluster, node, "status", "--json").stdout)


@pytest.fixture(scope="module")
def loaded(cluster):
    before = {n["address"]: n["load_bytes"] for n in status(cluster)["nodes"]}
    driver = Cluster([cluster.address(1)], port=cluster.port, protocol_version=4, connect_timeout=10)
    s = driver.connect()
    s.execute("CREATE KEYSPACE ad WITH replication = {'class': 'SimpleStrategy', 'replication_factor': %d}" % RF)
    s.execute("CREATE TABLE ad.t (k int PRIMARY KEY, v text) WITH initial_tablets = %d" % TABLETS)
    insert = s.prepare("INSERT INTO ad.t (k, v) VALUES (?, ?)")
    insert.consistency_level = ConsistencyLevel.ALL
    for k in range(ROWS):
        s.execute(insert, (k, "x" * VALUE_BYTES))
    replicas = [r.replicas for r in s.execute(
        "SELECT replicas FROM system.tablets WHERE keyspace_name = 'ad' AND table_name = 't'")]
    yield before, replicas
    driver.shutdown()


def test_status_lists_every_node_with_its_load_and_tablets(cluster, loaded):
    before, _ = loaded
    # Each node reports its load every second; the rows written at RF 2
    # (3,000 x 200 bytes of values, twice) must show in the sum.
    written = ROWS * VALUE_BYTES * RF

    def grown():
        now = status(cluster, 2)["nodes"]
        return sum(n["load_bytes"] for n in now) - sum(v or 0 for v in before.values()) >= written // 2
    wait_until(grown, 30, "the written rows counted in the nodes' loads")
    s = status(cluster, 2)
    nodes = s["nodes"]
    assert [n["address"] for n in nodes] == ["127.0.0.1", "127.0.0.2", "127.0.0.3"]
    assert all(n["state"] == "up" and n["data_center"] == "datacenter1" and n["rack"] == "rack1" for n in nodes)
    assert all(n["load_bytes"] > 0 and n["load_at_micros"] > 0 for n in nodes)
    assert s["tablet_replicas"] == TABLETS * RF
    assert sum(n["tablets"] for n in nodes) == TABLETS * RF
    assert all(n["tablets"] >= 1 for n in nodes)
    assert abs(sum(n["owns"] for n in nodes) - 1) < 1e-9
    text = admin(cluster, 3, "status").stdout
    assert "Datacenter: datacenter1" in text
    for n in nodes:
        assert any(line.startswith("UN  " + n["address"]) and n["host_id"] in line for line in text.splitlines())


def test_tablets_agree_with_status_and_system_tablets(cluster, loaded):
    _, system_replicas = loaded
    tablets = json.loads(admin(cluster, 1, "tablets", "--keyspace", "ad", "--table", "t", "--json").stdout)["tablets"]
    assert len(tablets) == TABLETS
    assert tablets[0]["start"] == "" and tablets[-1]["end"] == ""
    assert all(a["end"] == b["start"] for a, b in zip(tablets, tablets[1:]))
    per_node = {}
    for t in tablets:
        assert (t["keyspace"], t["table"]) == ("ad", "t")
        hosts = [r["host_id"] for r in t["replicas"]]
        assert len(set(hosts)) == RF
        for r in t["replicas"]:
            per_node[r["address"]] = per_node.get(r["address"], 0) + 1
    assert per_node == {n["address"]: n["tablets"] for n in status(cluster)["nodes"]}
    # system.tablets (through the driver) names the same replicas, tablet by tablet.
    assert [set(r) for r in system_replicas] == [{uuid.UUID(r["host_id"]) for r in t["replicas"]} for t in tablets]
    text = admin(cluster, 2, "tablets", "--keyspace", "ad").stdout
    assert text.rstrip().endswith("%d tablets" % TABLETS)
    err = admin(cluster, 1, "tablets", "--keyspace", "nope", expect=1)
    assert "keyspace nope does not exist" in err.stderr


def test_a_killed_node_shows_down_with_its_last_load(cluster, loaded):
    cluster.kill(3)
    wait_until(lambda: [n["state"] for n in status(cluster)["nodes"]] == ["up", "up", "down"], LEASE_SECONDS + 20,
               "node 3 down in admin status")
    down = status(cluster)["nodes"][2]
    assert down["load_bytes"] > 0 and down["tablets"] >= 1
    # Its last report stays, unchanged: nobody measures a dead node.
    time.sleep(2)
    again = status(cluster, 2)["nodes"][2]
    assert (again["load_bytes"], again["load_at_micros"]) == (down["load_bytes"], down["load_at_micros"])
    lines = admin(cluster, 1, "status").stdout.splitlines()
    assert any(line.startswith("DN  127.0.0.3") for line in lines)
    assert sum(line.startswith("UN  ") for line in lines) == 2
    cluster.start_node(3)
