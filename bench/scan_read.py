"""A benchmark, not a test (issue 28 item 1, scans without a waiting thread):
3 local nodes (tests/drivers/local_cluster.py: etcd and nodes on
127.0.0.1-3), RF 3, 20,000 partitions of 2 rows of 100 bytes; then full
paged scans (fetch size 1,000) at QUORUM through node 1, alternating two
forms that return the same 40,000 rows: `SELECT p, c, v FROM sc.t`, whose
pages the query processor reads without holding its thread
(Database::ScanRangeAsync: windows that bring the partitions' headers
along), and the same with `WHERE c >= 0 ALLOW FILTERING`, which the
executor still reads on its thread (Database::ScanRange; before this
change through tablet iterators, a header key read per partition).
Prints the time per scan and the internode bytes served per scan
(tessera_internode_bytes_served_total over the three nodes) of each.
Usage: /usr/bin/python3 bench/scan_read.py TESSERA_BINARY"""
import os
import sys
import time
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tests", "drivers"))
from local_cluster import LocalCluster, node_session
from cassandra import ConsistencyLevel
from cassandra.concurrent import execute_concurrent_with_args
from cassandra.query import SimpleStatement

binary = sys.argv[1]
c = LocalCluster(binary, nodes=3, server_args=[], placement_balancer=False)
c.start()


def served():
    total = 0
    for n in (1, 2, 3):
        with urllib.request.urlopen("http://%s:%d/metrics" % (c.address(n), c.admin_port), timeout=10) as r:
            for line in r.read().decode().splitlines():
                if line.startswith("tessera_internode_bytes_served_total "):
                    total += float(line.split()[1])
    return total


try:
    d, s = node_session(c, 1)
    s.execute("CREATE KEYSPACE sc WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 3}")
    s.execute("CREATE TABLE sc.t (p int, c int, v text, PRIMARY KEY (p, c))")
    ins = s.prepare("INSERT INTO sc.t (p, c, v) VALUES (?, ?, ?)")
    ins.consistency_level = ConsistencyLevel.ALL
    execute_concurrent_with_args(s, ins, [(p, c_, "x" * 100) for p in range(20000) for c_ in range(2)],
                                 concurrency=64)
    forms = {"deferred (no thread held)": "SELECT p, c, v FROM sc.t",
             "on the thread (ALLOW FILTERING)": "SELECT p, c, v FROM sc.t WHERE c >= 0 ALLOW FILTERING"}
    times = {name: [] for name in forms}
    bytes_ = {name: [] for name in forms}
    for _ in range(5):
        for name, cql in forms.items():
            b0 = served()
            t0 = time.monotonic()
            rows = sum(1 for _ in s.execute(SimpleStatement(cql, fetch_size=1000,
                                                            consistency_level=ConsistencyLevel.QUORUM)))
            t1 = time.monotonic()
            assert rows == 40000, rows
            times[name].append(t1 - t0)
            bytes_[name].append(served() - b0)
    for name in forms:
        ts = sorted(times[name])
        print("%-32s scan of 40,000 rows: median %.2f s (min %.2f, max %.2f), %.1f MB served per scan" % (
            name, ts[len(ts) // 2], ts[0], ts[-1], sorted(bytes_[name])[2] / 1e6))
    d.shutdown()
finally:
    c.stop()
    c.cleanup()
