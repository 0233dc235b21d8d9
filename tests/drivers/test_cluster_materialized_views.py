"""Materialized views on a cluster (issue 31, must-show 2): three nodes and
etcd, a base table at RF 3 with two views (a third built afterwards over the
rows already there), random inserts, updates that move
rows in a view, deletions of cells, rows, ranges and partitions, and writes
with TTLs, all at QUORUM through nodes 1 and 2. Node 3 is killed -9 a third
of the way through and restarted at two thirds; after repair, every view
read at ALL agrees with the view rows the base (read at ALL) implies, row
for row, and each view is read through every coordinator. Conditional
writes (Paxos) keep the views as well.

TESSERA_MV_OPS sets the number of base writes (CI runs 3,000;
bench/view_consistency.sh runs 100,000 and bench/RESULTS.md has its result).
Writes go in rounds of distinct partitions, so that no two writes of one
partition are in flight together: views are maintained by the coordinator of
each base write (db/view_maintenance.cc), which orders the writes of one
partition on one node only."""
import json
import os
import random
import subprocess
import time

import pytest
from cassandra import ConsistencyLevel
from cassandra.concurrent import execute_concurrent
from cassandra.query import SimpleStatement

from local_cluster import node_session, running_cluster, wait_until

BINARY = os.environ["TESSERA_BINARY"]
OPS = int(os.environ.get("TESSERA_MV_OPS", "3000"))
PARTITIONS = max(50, OPS // 20)
ROUND = 48
KINDS = ["red", "green", "blue", "cyan", "gold"]


@pytest.fixture(scope="module")
def cluster():
    yield from running_cluster(BINARY, 3, ["--cluster-lease-seconds=3"])


def random_write(rng, p):
    """One random base write to partition p: (CQL, description)."""
    c = rng.randrange(8)
    kind = rng.choice(KINDS)
    v = rng.randrange(1000)
    r = rng.random()
    if r < 0.30:
        return f"INSERT INTO mvc.base (p, c, kind, v, tags) VALUES ({p}, {c}, '{kind}', {v}, {{{v % 7}}})"
    if r < 0.45:
        return f"UPDATE mvc.base SET kind = '{kind}' WHERE p = {p} AND c = {c}"
    if r < 0.55:
        return f"UPDATE mvc.base SET v = {v}, tags = tags + {{{v % 5}}} WHERE p = {p} AND c = {c}"
    if r < 0.63:
        ttl = rng.choice([1, 2, 3])
        return f"INSERT INTO mvc.base (p, c, kind, v) VALUES ({p}, {c}, '{kind}', {v}) USING TTL {ttl}"
    if r < 0.68:
        return f"UPDATE mvc.base USING TTL {rng.choice([1, 2])} SET kind = '{kind}' WHERE p = {p} AND c = {c}"
    if r < 0.78:
        return f"DELETE FROM mvc.base WHERE p = {p} AND c = {c}"
    if r < 0.86:
        return f"DELETE kind FROM mvc.base WHERE p = {p} AND c = {c}"
    if r < 0.93:
        return f"DELETE FROM mvc.base WHERE p = {p} AND c >= {c}"
    if r < 0.96:
        return f"DELETE FROM mvc.base WHERE p = {p}"
    return f"UPDATE mvc.base SET v = null WHERE p = {p} AND c = {c}"


def run_rounds(sessions, statements, failures):
    """Runs `statements` (one per distinct partition) at QUORUM, round-robin
    over the coordinators; a failed write is retried until it is acknowledged."""
    session = sessions[run_rounds.turn % len(sessions)]
    run_rounds.turn += 1
    pending = [SimpleStatement(s, consistency_level=ConsistencyLevel.QUORUM) for s in statements]
    for attempt in range(20):
        results = execute_concurrent(session, [(s, ()) for s in pending], concurrency=ROUND, raise_on_first_error=False)
        retry = [s for s, (ok, _) in zip(pending, results) if not ok]
        failures[0] += len(retry)
        if not retry:
            return
        pending = retry
        time.sleep(0.2)
    raise AssertionError("%d writes never acknowledged" % len(pending))


run_rounds.turn = 0


def read_all(session, query):
    return [tuple(r) for r in session.execute(SimpleStatement(query, consistency_level=ConsistencyLevel.ALL,
                                                              fetch_size=1000))]


def expected_views(base_rows):
    by_kind, by_c = set(), set()
    for p, c, kind, tags, v in base_rows:
        if kind is not None:
            by_kind.add((kind, p, c, tags and frozenset(tags), v))
        by_c.add((c, p, v))
    return by_kind, by_c


def test_views_agree_with_the_base_after_random_writes_a_killed_node_and_repair(cluster):
    drivers = [node_session(cluster, n) for n in (1, 2)]
    try:
        s = drivers[0][1]
        s.execute("CREATE KEYSPACE mvc WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 3}")
        s.execute("CREATE TABLE mvc.base (p int, c int, kind text, v int, tags set<int>, PRIMARY KEY (p, c)) "
                  "WITH initial_tablets = 4")
        s.execute("CREATE MATERIALIZED VIEW mvc.by_kind AS SELECT * FROM mvc.base "
                  "WHERE kind IS NOT NULL AND p IS NOT NULL AND c IS NOT NULL PRIMARY KEY (kind, p, c)")
        s.execute("CREATE MATERIALIZED VIEW mvc.by_c AS SELECT p, c, v FROM mvc.base "
                  "WHERE p IS NOT NULL AND c IS NOT NULL PRIMARY KEY (c, p) WITH CLUSTERING ORDER BY (p DESC)")
        sessions = [drivers[0][1], drivers[1][1]]
        rng = random.Random(31)
        failures = [0]
        done = 0
        started = time.monotonic()
        killed = restarted = False
        while done < OPS:
            if not killed and done >= OPS // 3:
                cluster.kill(3)
                killed = True
            if killed and not restarted and done >= 2 * OPS // 3:
                cluster.start_node(3)
                restarted = True
            n = min(ROUND, OPS - done)
            partitions = rng.sample(range(PARTITIONS), n)
            run_rounds(sessions, [random_write(rng, p) for p in partitions], failures)
            done += n
        elapsed = time.monotonic() - started
        # Every TTL written (at most 3 s) has run out: expired rows are gone from base and views alike.
        wait_until(lambda: all(k is None and v is None for k, v in
                               read_all(s, "SELECT TTL(kind), TTL(v) FROM mvc.base")), 60, "every TTL'd cell expired")
        out = subprocess.run([BINARY, "repair", "--admin", "127.0.0.1:%d" % cluster.admin_port, "--keyspace", "mvc",
                              "--json"], capture_output=True, text=True, timeout=600)
        report = json.loads(out.stdout)
        assert out.returncode == 0 and report["failed"] == 0, report

        wait_until(lambda: drivers.append(node_session(cluster, 3)) or True, 60, "a driver session with node 3")
        base = read_all(s, "SELECT p, c, kind, tags, v FROM mvc.base")
        want_kind, want_c = expected_views(base)
        for coordinator in (0, 1, 2):
            session = drivers[coordinator][1]
            got_kind = {(kind, p, c, tags and frozenset(tags), v)
                        for kind, p, c, tags, v in read_all(session, "SELECT kind, p, c, tags, v FROM mvc.by_kind")}
            got_c = set(read_all(session, "SELECT c, p, v FROM mvc.by_c"))
            assert got_kind == want_kind, (coordinator, sorted(got_kind ^ want_kind)[:10])
            assert got_c == want_c, (coordinator, sorted(got_c ^ want_c)[:10])
        assert len(base) > 0 and len(want_kind) > 0
        # The rows of one partition, read through a view's partition key, come back in the view's order.
        some_c = base[0][1]
        ps = [r[0] for r in read_all(s, f"SELECT p FROM mvc.by_c WHERE c = {some_c}")]
        assert ps == sorted(ps, reverse=True)
        # Conditional writes (Paxos across the replicas) keep the views too.
        assert s.execute("INSERT INTO mvc.base (p, c, kind, v) VALUES (-1, 0, 'lwt', 1) IF NOT EXISTS").one().applied
        assert drivers[1][1].execute("UPDATE mvc.base SET kind = 'lwt2' WHERE p = -1 AND c = 0 IF v = 1").one().applied
        assert read_all(s, "SELECT p, c FROM mvc.by_kind WHERE kind = 'lwt'") == []
        assert read_all(s, "SELECT p, c, v FROM mvc.by_kind WHERE kind = 'lwt2'") == [(-1, 0, 1)]
        assert drivers[2][1].execute("DELETE FROM mvc.base WHERE p = -1 AND c = 0 IF EXISTS").one().applied
        assert read_all(s, "SELECT p FROM mvc.by_kind WHERE kind = 'lwt2'") == []
        assert read_all(s, "SELECT p FROM mvc.by_c WHERE c = 0 AND p = -1") == []

        # A view created over the rows already there is built by the node that ran the CREATE,
        # reading the base through the replicas of its tablets.
        s.execute("CREATE MATERIALIZED VIEW mvc.by_v AS SELECT p, c, v FROM mvc.base "
                  "WHERE v IS NOT NULL AND p IS NOT NULL AND c IS NOT NULL PRIMARY KEY (v, p, c)")
        wait_until(lambda: list(s.execute("SELECT view_name FROM system.built_views WHERE keyspace_name = 'mvc' "
                                          "AND view_name = 'by_v'")), 120, "view by_v built")
        want_v = {(v, p, c) for p, c, kind, tags, v in base if v is not None}
        assert set(read_all(drivers[2][1], "SELECT v, p, c FROM mvc.by_v")) == want_v
        print("MV_RESULT ops=%d base_rows=%d by_kind_rows=%d by_c_rows=%d retried=%d elapsed_s=%.1f ops_per_s=%.0f"
              % (OPS, len(base), len(want_kind), len(want_c), failures[0], elapsed, OPS / elapsed))
    finally:
        for d, _ in drivers:
            d.shutdown()
