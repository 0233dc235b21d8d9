"""A benchmark, not a test (issue 28 item 2, LIMIT on slice reads): 3 local
nodes (tests/drivers/local_cluster.py: etcd and nodes on 127.0.0.1-3), RF 3,
one partition of 2,000 rows of 100 bytes, then 300 prepared
`SELECT c, v FROM sl.t WHERE p = 1 LIMIT 10` at QUORUM through node 1:
prints the internode bytes the replicas served per read
(tessera_internode_bytes_served_total over the three nodes) and the mean
time per read. Usage: /usr/bin/python3 bench/slice_read_bytes.py TESSERA_BINARY"""
import os
import sys
import time
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tests", "drivers"))
from local_cluster import LocalCluster, node_session
from cassandra import ConsistencyLevel
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
    s.execute("CREATE KEYSPACE sl WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 3}")
    s.execute("CREATE TABLE sl.t (p int, c int, v text, PRIMARY KEY (p, c))")
    ins = s.prepare("INSERT INTO sl.t (p, c, v) VALUES (?, ?, ?)")
    ins.consistency_level = ConsistencyLevel.ALL
    from cassandra.concurrent import execute_concurrent_with_args
    execute_concurrent_with_args(s, ins, [(1, i, "x" * 100) for i in range(2000)], concurrency=32)
    q = s.prepare("SELECT c, v FROM sl.t WHERE p = 1 LIMIT 10")
    q.consistency_level = ConsistencyLevel.QUORUM
    for _ in range(20):
        s.execute(q)
    b0 = served(); t0 = time.monotonic()
    for _ in range(300):
        assert len(list(s.execute(q))) == 10
    t1 = time.monotonic(); b1 = served()
    print("300 QUORUM slices LIMIT 10: %.0f bytes served per read, %.2f ms per read" % ((b1 - b0) / 300, (t1 - t0) / 300 * 1000))
    d.shutdown()
finally:
    c.stop(); c.cleanup()
