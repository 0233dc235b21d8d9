"""The main job on a cluster (issue 11): `tessera demo --nodes 3` starts etcd
and three nodes on 127.0.0.1-3 running both balancers, loads the shipped
access log through CQL into three key designs at replication factor 1,
reads each back, reports per node the writes and reads served and the
tablets held, and stops every process it started. The timestamp-first
table's hot tail is written on one node at a time and read on the one or
two holding its last hour; the seeds' fixes (the key-order swap, the hash
prefix) are served by all three."""
import json
import os
import socket
import subprocess

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DATASETS = os.path.join(ROOT, "demo", "datasets")
NASA_ROWS = 30969  # demo/datasets/nasa_http/PROVENANCE.md


def free_ports(n):
    """n distinct free ports on 127.0.0.1, all bound at once before any is released."""
    sockets = []
    try:
        for _ in range(n):
            s = socket.socket()
            s.bind(("127.0.0.1", 0))
            sockets.append(s)
        return [s.getsockname()[1] for s in sockets]
    finally:
        for s in sockets:
            s.close()


def alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with open("/proc/%d/stat" % pid) as f:
        return f.read().split(") ")[-1][0] != "Z"


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    work = tmp_path_factory.mktemp("demo_cluster")
    cql, admin, internode, etcd, etcd_peer = free_ports(5)
    cmd = [os.environ["TESSERA_BINARY"], "demo", "--nodes", "3", "--data-dir", str(work / "data"),
           "--datasets", DATASETS, "--report-dir", str(work / "report"), "--port", str(cql),
           "--admin-port", str(admin), "--internode-port", str(internode), "--etcd-port", str(etcd),
           "--etcd-peer-port", str(etcd_peer), "--exit-after-report"]
    try:
        out = subprocess.run(cmd, cwd=str(work), capture_output=True, text=True, timeout=600)
    finally:
        manifest_path = work / "data" / "cluster" / "cluster.json"
        pids = []
        if manifest_path.exists():
            with open(manifest_path) as f:
                m = json.load(f)
            pids = [p["pid"] for p in [m["etcd"]] + m["nodes"] if p.get("pid")]
        left = [p for p in pids if alive(p)]
        for p in left:  # a failed run's processes go by their own pid
            os.kill(p, 9)
    assert out.returncode == 0, out.stderr[-4000:]
    with open(work / "report" / "report.json") as f:
        report = json.load(f)
    print(out.stdout)
    return out, report, pids, left


def test_the_cluster_is_started_and_stopped(demo):
    _, report, pids, left = demo
    assert report["nodes"] == 3 and report["replication_factor"] == 1
    assert len(pids) == 4  # etcd and three nodes
    assert left == [], "processes still running after the demo exited: %s" % left


def test_every_row_is_loaded_and_counted(demo):
    _, report, _, _ = demo
    tables = {t["name"]: t for t in report["tables"]}
    assert set(tables) == {"demo.access_by_time", "demo.access_by_host", "demo.access_by_time_bucketed"}
    for t in tables.values():
        assert t["loaded"] + t["rejected"] == NASA_ROWS, t["name"]
        assert t["counted"] == t["loaded"], t["name"]
        assert [n["node"] for n in t["nodes"]] == [1, 2, 3]
        # Replication factor 1: each write served once, each tablet held once.
        assert sum(n["writes_served"] for n in t["nodes"]) >= t["loaded"], t["name"]
        assert sum(n["tablets"] for n in t["nodes"]) == t["tablets"], t["name"]
        assert t["read_queries"] == 200


def test_the_summary_figures_follow_from_the_timeline(demo):
    _, report, _, _ = demo
    for t in report["tables"]:
        samples = [s["writes"] for s in t["timeline"] if sum(s["writes"])]
        assert samples and all(len(s) == 3 for s in samples)
        busiest = sum(max(s) for s in samples) / sum(sum(s) for s in samples)
        one_node = sum(1 for s in samples if max(s) >= 0.9 * sum(s)) / len(samples)
        assert abs(t["busiest_node_write_share"] - busiest) < 1e-9, t["name"]
        assert abs(t["one_node_sample_share"] - one_node) < 1e-9, t["name"]
        # The samples add up to the totals served during the load.
        assert [sum(col) for col in zip(*[s["writes"] for s in t["timeline"]])] == [
            n["writes_served"] for n in t["nodes"]], t["name"]


def test_the_balancers_decisions_are_reported(demo):
    _, report, _, _ = demo
    kinds = {e["kind"] for e in report["tablet_events"]}
    assert {"split", "migration"} <= kinds, kinds
    assert all(e["node"] in ("node 1", "node 2", "node 3") for e in report["tablet_events"])
    assert not any("recorded in etcd by another node" in e["detail"] for e in report["tablet_events"])


def test_the_hot_tail_is_served_by_one_node_at_a_time(demo):
    _, report, _, _ = demo
    t = {t["name"]: t for t in report["tables"]}["demo.access_by_time"]
    assert t["tablets"] >= 2, t["tablets"]  # split by size while loading
    # One node at a time: the tail may move with its tablet (the balancer
    # splits and places the hot tablet; writes go to both nodes for the 3-4 s
    # it moves), but between moves one node serves all of it. Since the
    # node storing the tail splits it by size (it once waited for RocksDB's
    # memtable estimate, often in vain), the tail splits every half MiB and
    # moves up to twice in the 12 s load: runs measured busiest shares of
    # 1.00 (no move), 0.77 and 0.70 with another cluster test beside it, and
    # one-node shares of 1.00, 0.64 and 0.52. The fixes stay at 0.36-0.46
    # and 0.0-0.04, below the bounds asserted here.
    assert t["busiest_node_write_share"] > 0.6, t["busiest_node_write_share"]
    assert t["one_node_sample_share"] >= 0.4, t["one_node_sample_share"]
    # The newest minutes are read where the tail is. The log's last hour is
    # 2,669 rows, about 200 KB of text: less than the tail's piece after a
    # size split (half of 512 KiB), so it lies in one tablet or across one
    # split. Read on one node (runs saw 316 of 316 reads served there) or on
    # the two holding the split's sides, when they differ (CI of 08ad173:
    # [166, 150, 0]); a move in the read phase can add a little on a third.
    # The fixes below are read on all three.
    reads = [n["reads_served"] for n in t["nodes"]]
    assert max(reads) >= 0.6 * sum(reads) or min(reads) <= 0.05 * sum(reads), reads


@pytest.mark.parametrize("name", ["demo.access_by_host", "demo.access_by_time_bucketed"])
def test_the_seeds_fixes_are_served_by_every_node(demo, name):
    _, report, _, _ = demo
    t = {t["name"]: t for t in report["tables"]}[name]
    assert t["nodes_serving_writes"] == 3, [n["writes_served"] for n in t["nodes"]]
    assert t["busiest_node_write_share"] < 0.6, t["busiest_node_write_share"]
    assert t["one_node_sample_share"] < 0.2, t["one_node_sample_share"]
    reads = [n["reads_served"] for n in t["nodes"]]
    assert min(reads) > 0.05 * sum(reads), reads
    assert all(n["tablets"] >= 1 for n in t["nodes"]), t["nodes"]


def test_the_queries_answer_and_the_text_report_shows_each_node(demo):
    out, report, _, _ = demo
    queries = report["queries"]
    assert len(queries) == 3 and all(q["rows"] for q in queries)
    # The bucketed table's minute is the unbucketed table's, in the same time order.
    assert queries[1]["rows"] == queries[2]["rows"]
    assert "writes served:" in out.stdout and "tablets held:" in out.stdout
    assert "node 3 |" in out.stdout


def test_the_html_report_renders_without_console_errors(demo, tmp_path):
    out, report, _, _ = demo
    page = next(line for line in out.stdout.splitlines() if line.startswith("Report: ")).split(" ")[1]
    shot = tmp_path / "cluster_report.png"
    r = subprocess.run([os.path.join(ROOT, "tests", "report", "run.sh"), page, str(shot)], capture_output=True,
                       text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr[-2000:]
    summary = json.loads(r.stdout.strip().splitlines()[-1])
    assert summary["problems"] == []
    assert summary["title"] == "Tessera demo report: a cluster"
    assert shot.stat().st_size > 20000  # a real screenshot, not an empty page
    print("screenshot: %s (%d bytes)" % (shot, shot.stat().st_size))
