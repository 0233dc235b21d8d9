"""Issue 28 item 5: unmodified drivers route to a replica.

Every node reports in system.local and system.peers the tokens of the
cluster's routing ring (cluster/routing_tokens.h): the last token of each
tablet of the largest hash table, owned by its first replica. The DataStax
Python driver's default TokenAwarePolicy then sends every request to the
node holding its partition, which /metrics shows: a coordinator that holds
no replica forwards (tessera_coordinator_forwarded_requests_total).

Three nodes, RF 1 (one replica per partition: a request sent anywhere else
is forwarded), a table of 16 tablets, the placement balancer off so that
the tablets stay where they were placed."""
import os

import pytest
from cassandra import ConsistencyLevel
from cassandra.cluster import EXEC_PROFILE_DEFAULT, Cluster, ExecutionProfile
from cassandra.policies import DCAwareRoundRobinPolicy, RoundRobinPolicy, TokenAwarePolicy

from local_cluster import metric, node_session, running_cluster, wait_until

BINARY = os.environ["TESSERA_BINARY"]
KEYS = 300


@pytest.fixture(scope="module")
def cluster():
    yield from running_cluster(BINARY, 3, [], placement_balancer=False)


def ring_of(cluster, node):
    """{address: sorted tokens} as node `node` reports the ring."""
    driver, session = node_session(cluster, node)
    try:
        ring = {cluster.address(node): sorted(int(t) for t in session.execute("SELECT tokens FROM system.local").one()[0])}
        for row in session.execute("SELECT rpc_address, tokens FROM system.peers"):
            ring[row.rpc_address] = sorted(int(t) for t in row.tokens)
        return ring
    finally:
        driver.shutdown()


def forwarded_and_coordinated(cluster):
    return (sum(metric(cluster, n, "tessera_coordinator_forwarded_requests_total") for n in (1, 2, 3)),
            sum(metric(cluster, n, "tessera_coordinator_requests_total") for n in (1, 2, 3)))


def run_requests(cluster, policy):
    """KEYS prepared writes and reads through a driver with `policy`; the
    forwarded and coordinated tablet requests they caused."""
    driver = Cluster([cluster.address(1)], port=cluster.port, protocol_version=4, connect_timeout=10,
                     execution_profiles={EXEC_PROFILE_DEFAULT: ExecutionProfile(
                         load_balancing_policy=policy, consistency_level=ConsistencyLevel.ONE, request_timeout=30)})
    try:
        session = driver.connect()
        wait_until(lambda: len([h for h in driver.metadata.all_hosts() if h.is_up]) == 3, 20, "3 hosts up")
        insert = session.prepare("INSERT INTO route.kv (k, v) VALUES (?, ?)")
        select = session.prepare("SELECT v FROM route.kv WHERE k = ?")
        before = forwarded_and_coordinated(cluster)
        served = set()
        for k in range(KEYS):
            served.add(session.execute(insert, (k, k)).response_future._current_host.address)
        for k in range(KEYS):
            rows = session.execute(select, (k,))
            assert rows.one().v == k
            served.add(rows.response_future._current_host.address)
        after = forwarded_and_coordinated(cluster)
        return after[0] - before[0], after[1] - before[1], served
    finally:
        driver.shutdown()


def test_tokens_follow_the_placement_and_drivers_route_to_the_replica(cluster):
    driver, session = node_session(cluster, 1)
    try:
        session.execute("CREATE KEYSPACE route WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}")
        session.execute("CREATE TABLE route.kv (k int PRIMARY KEY, v int) WITH initial_tablets = 16")
    finally:
        driver.shutdown()
    # The placement is made at CREATE TABLE; every node learns it through its etcd watch.
    wait_until(lambda: all(sum(len(t) for t in ring_of(cluster, n).values()) == 16 for n in (1, 2, 3)), 20,
               "every node reports the 16 tablets' tokens")
    rings = [ring_of(cluster, n) for n in (1, 2, 3)]
    assert rings[0] == rings[1] == rings[2], rings
    tokens = sorted(t for ts in rings[0].values() for t in ts)
    assert len(set(tokens)) == 16 and tokens[-1] == 2**63 - 1, tokens
    assert sorted(len(t) for t in rings[0].values()) == [5, 5, 6], rings[0]  # 16 tablets round-robin

    forwarded, coordinated, served = run_requests(cluster, TokenAwarePolicy(DCAwareRoundRobinPolicy()))
    print("token-aware: %d of %d tablet requests forwarded; served by %s" % (forwarded, coordinated, sorted(served)))
    assert coordinated >= 2 * KEYS
    assert forwarded == 0
    assert served == {cluster.address(n) for n in (1, 2, 3)}

    # The control: round robin sends two requests in three to a node without the replica.
    forwarded, coordinated, _ = run_requests(cluster, RoundRobinPolicy())
    print("round robin: %d of %d tablet requests forwarded" % (forwarded, coordinated))
    assert coordinated >= 2 * KEYS
    assert forwarded / coordinated > 0.4
