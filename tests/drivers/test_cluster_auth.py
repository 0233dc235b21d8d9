"""Issue 29, item 1: one security domain across the cluster. Three nodes
started by `tessera cluster start --authenticator PasswordAuthenticator
--authorizer CassandraAuthorizer` keep roles and permissions in etcd, so that
what is done through one node holds through every other:
- a role created through node 1 logs in through node 2 alone and node 3
  alone, on the first try;
- GRANT and REVOKE through node 1 take effect through nodes 2 and 3 once the
  permission cache's validity (1 s here) has passed;
- after ALTER ROLE cassandra through node 1 the old password is refused by
  every node at once;
- DDL reaches schema agreement within the driver's 2 s wait (node-local
  tables do not enter the schema version);
- every role and grant survives a restart of the whole cluster.
The tests run in file order on one cluster."""
import os
import time

import pytest
from cassandra import Unauthorized
from cassandra.auth import PlainTextAuthProvider
from cassandra.cluster import EXEC_PROFILE_DEFAULT, Cluster, ExecutionProfile, NoHostAvailable
from cassandra.policies import WhiteListRoundRobinPolicy

from local_cluster import running_cluster

BINARY = os.environ["TESSERA_BINARY"]
VALIDITY_SECONDS = 1.0


@pytest.fixture(scope="module")
def cluster():
    yield from running_cluster(
        BINARY, 3, ["--permissions-validity-ms=%d" % (VALIDITY_SECONDS * 1000)],
        launcher_args=["--authenticator", "PasswordAuthenticator", "--authorizer", "CassandraAuthorizer"])


def node_session(cluster, node, user, password, schema_wait=2):
    """(driver, session) talking to node `node` alone, logged in as `user`."""
    addr = cluster.address(node)
    profile = ExecutionProfile(load_balancing_policy=WhiteListRoundRobinPolicy([addr]), request_timeout=20)
    driver = Cluster([addr], port=cluster.port, protocol_version=4, connect_timeout=10,
                     auth_provider=PlainTextAuthProvider(user, password), max_schema_agreement_wait=schema_wait,
                     execution_profiles={EXEC_PROFILE_DEFAULT: profile})
    try:
        return driver, driver.connect()
    except Exception:
        driver.shutdown()
        raise


def logs_in(cluster, node, user, password):
    try:
        driver, session = node_session(cluster, node, user, password)
    except NoHostAvailable as e:
        assert "AuthenticationFailed" in str(e) or "incorrect" in str(e), e
        return False
    driver.shutdown()
    return True


def within(seconds, predicate, what):
    """Seconds until `predicate` held; fails after `seconds`."""
    start = time.monotonic()
    while not predicate():
        assert time.monotonic() - start < seconds, "not within %.1f s: %s" % (seconds, what)
        time.sleep(0.05)
    return time.monotonic() - start


PASSWORD = {"cassandra": "cassandra"}  # the superuser's current password, as the tests change it


def superuser(cluster, node=1):
    return node_session(cluster, node, "cassandra", PASSWORD["cassandra"])


def as_superuser(cluster, statement, node=1):
    driver, session = superuser(cluster, node)
    try:
        return list(session.execute(statement))
    finally:
        driver.shutdown()


def test_the_launcher_records_the_default_superusers_credentials(cluster):
    m = cluster.manifest()
    assert m["credentials"] == {"username": "cassandra", "password": "cassandra"}
    for node in (1, 2, 3):
        assert any("--authenticator" == a for a in m["nodes"][node - 1]["args"])
    # The default superuser was made once for the cluster: one cassandra role,
    # the same through every node.
    for node in (1, 2, 3):
        rows = as_superuser(cluster, "LIST ROLES", node)
        assert [r.role for r in rows] == ["cassandra"], rows
        assert rows[0].super and rows[0].login


def test_ddl_reaches_schema_agreement_with_authentication_on(cluster):
    driver, session = superuser(cluster)
    try:
        start = time.monotonic()
        rs = session.execute("CREATE KEYSPACE secured WITH replication = "
                             "{'class': 'SimpleStrategy', 'replication_factor': 3}")
        assert rs.response_future.is_schema_agreed, "no agreement within the driver's 2 s wait"
        rs = session.execute("CREATE TABLE secured.t (k int PRIMARY KEY, v text)")
        assert rs.response_future.is_schema_agreed
        print("two DDL statements with schema agreement in %.2f s" % (time.monotonic() - start))
        versions = set()
        for node in (1, 2, 3):
            versions.add(as_superuser(cluster, "SELECT schema_version FROM system.local", node)[0].schema_version)
        assert len(versions) == 1, versions
        session.execute("INSERT INTO secured.t (k, v) VALUES (1, 'one')")
    finally:
        driver.shutdown()


def test_a_role_created_through_node_1_logs_in_through_nodes_2_and_3(cluster):
    as_superuser(cluster, "CREATE ROLE bob WITH PASSWORD = 'bobs secret' AND LOGIN = true")
    # On the first try: the role is read from etcd, not from a node's copy.
    assert logs_in(cluster, 2, "bob", "bobs secret")
    assert logs_in(cluster, 3, "bob", "bobs secret")
    assert not logs_in(cluster, 3, "bob", "wrong")


def test_grant_and_revoke_through_node_1_hold_on_the_others_within_the_cache_validity(cluster):
    sessions = {n: node_session(cluster, n, "bob", "bobs secret") for n in (2, 3)}
    admin, admin_session = superuser(cluster)
    try:
        for _, s in sessions.values():
            with pytest.raises(Unauthorized):
                s.execute("SELECT v FROM secured.t WHERE k = 1")
        admin_session.execute("GRANT SELECT ON KEYSPACE secured TO bob")

        def can_select(node):
            try:
                return sessions[node][1].execute("SELECT v FROM secured.t WHERE k = 1").one().v == "one"
            except Unauthorized:
                return False

        margin = VALIDITY_SECONDS + 3  # the cache's validity, and room for a loaded machine
        took = [within(margin, lambda n=n: can_select(n), "GRANT through node 1 seen on node %d" % n) for n in (2, 3)]
        # Still no MODIFY: only what was granted.
        with pytest.raises(Unauthorized):
            sessions[2][1].execute("INSERT INTO secured.t (k, v) VALUES (2, 'two')")
        admin_session.execute("REVOKE SELECT ON KEYSPACE secured FROM bob")
        took += [within(margin, lambda n=n: not can_select(n), "REVOKE through node 1 seen on node %d" % n)
                 for n in (2, 3)]
        print("GRANT/REVOKE seen through the other nodes after %s s (validity %.1f s)"
              % (", ".join("%.2f" % t for t in took), VALIDITY_SECONDS))
        admin_session.execute("GRANT MODIFY ON TABLE secured.t TO bob")  # kept for the restart test
    finally:
        admin.shutdown()
        for d, _ in sessions.values():
            d.shutdown()


def test_a_password_changed_through_node_1_is_refused_by_every_node(cluster):
    as_superuser(cluster, "ALTER ROLE cassandra WITH PASSWORD = 'a new one'")
    for node in (1, 2, 3):
        assert not logs_in(cluster, node, "cassandra", "cassandra"), "node %d took the old password" % node
        assert logs_in(cluster, node, "cassandra", "a new one")
    PASSWORD["cassandra"] = "a new one"


def test_every_role_and_grant_survives_a_restart_of_the_whole_cluster(cluster):
    cluster.stop()
    out = cluster.start()  # cluster.json's credentials are refused now: the launcher says so and goes on
    print(out)
    for node in (1, 2, 3):
        assert logs_in(cluster, node, "bob", "bobs secret")
        assert not logs_in(cluster, node, "cassandra", "cassandra")
    driver, session = node_session(cluster, 2, "bob", "bobs secret")
    try:
        session.execute("INSERT INTO secured.t (k, v) VALUES (3, 'three')")  # MODIFY, granted before the restart
        with pytest.raises(Unauthorized):
            session.execute("SELECT v FROM secured.t WHERE k = 3")
    finally:
        driver.shutdown()
    driver, session = superuser(cluster, 3)
    try:
        assert sorted(r.role for r in session.execute("LIST ROLES")) == ["bob", "cassandra"]
        assert session.execute("SELECT v FROM secured.t WHERE k = 3").one().v == "three"
    finally:
        driver.shutdown()
