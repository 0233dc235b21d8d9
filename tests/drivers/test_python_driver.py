"""The DataStax Python driver (Debian python3-cassandra) against a real
`tessera server`, with default settings: no protocol version pinned."""
import time
import uuid

import pytest
from cassandra import AlreadyExists, InvalidRequest
from cassandra.protocol import SyntaxException
from cassandra.cluster import Cluster, ExecutionProfile, EXEC_PROFILE_DEFAULT
from cassandra.concurrent import execute_concurrent_with_args
from cassandra.policies import TokenAwarePolicy, RoundRobinPolicy
from cassandra.query import BatchStatement, SimpleStatement


@pytest.fixture(scope="module")
def cluster(server):
    profile = ExecutionProfile(load_balancing_policy=TokenAwarePolicy(RoundRobinPolicy()))
    c = Cluster(["127.0.0.1"], port=server.port, execution_profiles={EXEC_PROFILE_DEFAULT: profile},
                connect_timeout=10, control_connection_timeout=10)
    yield c
    c.shutdown()


@pytest.fixture(scope="module")
def session(cluster):
    s = cluster.connect()
    s.execute("CREATE KEYSPACE IF NOT EXISTS drv WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}")
    s.set_keyspace("drv")
    return s


def test_connects_with_default_settings_and_negotiates_v5(cluster, session):
    # The driver asks for DSE v2, DSE v1, then v5, which it gets (test_protocol_v5.py).
    assert cluster.protocol_version == 5
    row = session.execute("SELECT release_version, partitioner FROM system.local WHERE key='local'").one()
    assert row.partitioner == "org.apache.cassandra.dht.Murmur3Partitioner"


def test_schema_metadata_shows_tables_columns_and_clustering_order(cluster, session):
    session.execute("CREATE TABLE IF NOT EXISTS events (host text, ts timestamp, seq int, path text, tags set<text>, "
                    "PRIMARY KEY (host, ts, seq)) WITH CLUSTERING ORDER BY (ts DESC, seq ASC)")
    cluster.refresh_schema_metadata()
    t = cluster.metadata.keyspaces["drv"].tables["events"]
    assert [c.name for c in t.partition_key] == ["host"]
    assert [c.name for c in t.clustering_key] == ["ts", "seq"]
    assert t.clustering_key[0].is_reversed and not t.clustering_key[1].is_reversed
    assert t.columns["tags"].cql_type == "set<text>"
    assert "CLUSTERING ORDER BY (ts DESC, seq ASC)" in t.export_as_string()


def test_prepared_statements_route_by_token(cluster, session):
    session.execute("CREATE TABLE IF NOT EXISTS kv (k int PRIMARY KEY, v text)")
    insert = session.prepare("INSERT INTO kv (k, v) VALUES (?, ?)")
    assert insert.routing_key_indexes == [0]
    select = session.prepare("SELECT v FROM kv WHERE k = ?")
    for k in range(50):
        session.execute(insert, (k, "value-%d" % k))
    bound = select.bind((7,))
    assert bound.routing_key == (7).to_bytes(4, "big")
    replicas = cluster.metadata.get_replicas("drv", bound.routing_key)
    assert len(replicas) == 1
    assert session.execute(bound).one().v == "value-7"


def test_pages_through_100000_rows(session):
    session.execute("CREATE TABLE IF NOT EXISTS big (p int, c int, v text, PRIMARY KEY (p, c))")
    insert = session.prepare("INSERT INTO big (p, c, v) VALUES (?, ?, ?)")
    args = [(i % 100, i, "x") for i in range(100000)]
    results = execute_concurrent_with_args(session, insert, args, concurrency=64)
    assert all(ok for ok, _ in results)
    statement = SimpleStatement("SELECT p, c FROM big", fetch_size=5000)
    result = session.execute(statement)
    seen, pages = set(), 0
    for row in result:
        seen.add((row.p, row.c))
    assert len(seen) == 100000
    one = list(session.execute(SimpleStatement("SELECT c FROM big WHERE p = 3", fetch_size=77)))
    assert [r.c for r in one] == sorted(i for i in range(100000) if i % 100 == 3)


def test_batches_and_ttl_expiry(session):
    session.execute("CREATE TABLE IF NOT EXISTS b (k int, c int, v text, PRIMARY KEY (k, c))")
    insert = session.prepare("INSERT INTO b (k, c, v) VALUES (?, ?, ?)")
    batch = BatchStatement()
    for c in range(10):
        batch.add(insert, (1, c, "in batch"))
    batch.add(SimpleStatement("DELETE FROM b WHERE k = 1 AND c = 0"))
    session.execute(batch)
    assert len(list(session.execute("SELECT * FROM b WHERE k = 1"))) == 9
    session.execute("INSERT INTO b (k, c, v) VALUES (2, 1, 'short') USING TTL 1")
    assert session.execute("SELECT ttl(v) FROM b WHERE k = 2 AND c = 1").one()[0] in (0, 1)
    time.sleep(2.1)
    assert session.execute("SELECT * FROM b WHERE k = 2").one() is None


def test_error_codes(session, server):
    with pytest.raises(SyntaxException):  # 0x2000
        session.execute("SELEKT * FROM kv")
    with pytest.raises(InvalidRequest):  # 0x2200
        session.execute("SELECT * FROM no_such_table")
    with pytest.raises(InvalidRequest, match="ALLOW FILTERING"):
        session.execute("SELECT * FROM kv WHERE v = 'x'")
    with pytest.raises(AlreadyExists):  # 0x2400
        session.execute("CREATE TABLE kv (k int PRIMARY KEY)")


def test_duration_columns_refuse_order_and_keep_the_server_up(session):
    # Once a std::bad_variant_access that ended the process (issue 28): durations
    # have no order in Cassandra, so slices on them are refused; = still filters.
    session.execute("CREATE TABLE durations (k int PRIMARY KEY, d duration, m map<text, duration>, n int)")
    session.execute("INSERT INTO durations (k, d, m, n) VALUES (1, 1h, {'a': 2d}, 1)")
    session.execute("INSERT INTO durations (k, d, m, n) VALUES (2, 2s, {'a': 1s}, 2)")
    for op in (">", ">=", "<", "<="):
        with pytest.raises(InvalidRequest, match="Slice restrictions are not supported on duration columns"):
            session.execute("SELECT * FROM durations WHERE d %s 1s ALLOW FILTERING" % op)
        with pytest.raises(InvalidRequest, match="Slice restrictions are not supported on duration columns"):
            session.execute("SELECT * FROM durations WHERE m['a'] %s 1s ALLOW FILTERING" % op)
        with pytest.raises(InvalidRequest, match=r"Slice conditions \( %s \) are not supported on durations" % op):
            session.execute("UPDATE durations SET n = 3 WHERE k = 1 IF d %s 1s" % op)
    assert [r.k for r in session.execute("SELECT k FROM durations WHERE d = 2s ALLOW FILTERING")] == [2]
    assert sorted(r.k for r in session.execute("SELECT k FROM durations WHERE d IN (1h, 2s) ALLOW FILTERING")) == [1, 2]
    assert [r.k for r in session.execute("SELECT k FROM durations WHERE m CONTAINS 2d ALLOW FILTERING")] == [1]
    assert session.execute("UPDATE durations SET n = 4 WHERE k = 2 IF d = 2s").one()[0] is True
    assert session.execute("SELECT n FROM durations WHERE k = 2").one().n == 4


def test_unprepared_is_reprepared_after_a_restart(server, cluster, session):
    select = session.prepare("SELECT v FROM kv WHERE k = ?")
    server.restart()  # the prepared cache is gone: the server answers Unprepared (0x2500)
    deadline = time.monotonic() + 30
    while True:
        try:
            assert session.execute(select, (7,)).one().v == "value-7"
            break
        except Exception:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.5)


def test_token_of_a_bind_marker_pages_through_token_order(session):
    # YCSB's scan: SELECT ... WHERE token(y_id) >= token(?) LIMIT ?
    session.execute("CREATE TABLE IF NOT EXISTS ring (k int PRIMARY KEY, v text)")
    insert = session.prepare("INSERT INTO ring (k, v) VALUES (?, ?)")
    for k in range(100):
        session.execute(insert, (k, "v%d" % k))
    scan = session.prepare("SELECT k, token(k) FROM ring WHERE token(k) >= token(?) LIMIT ?")
    # The bind variables (the driver calls them column_metadata): the marker inside token() is k itself.
    assert [(c.name, c.type.typename) for c in scan.column_metadata] == [("k", "int"), ("[limit]", "int")]
    rows = list(session.execute(scan, (42, 5)))
    assert rows[0].k == 42
    tokens = [r[1] for r in rows]
    assert tokens == sorted(tokens) and len(rows) == 5
    everything = sorted((r[1], r.k) for r in session.execute("SELECT k, token(k) FROM ring"))
    start = [k for _, k in everything].index(42)
    assert [r.k for r in rows] == [k for _, k in everything[start:start + 5]]


def test_a_session_opens_on_keyspace_system(server, session):
    """Issue 31: a client may open its session on a system keyspace (one
    driver's own integration harness does); USE of a missing one still fails;
    system_schema lists the system keyspaces, their tables and columns."""
    c = Cluster(["127.0.0.1"], port=server.port, connect_timeout=10, control_connection_timeout=10)
    try:
        s = c.connect("system")
        assert s.execute("SELECT key FROM local").one().key == "local"
        s.execute("USE system_views")
        assert s.execute("SELECT value FROM settings WHERE name = 'commitlog_sync'").one().value == "periodic"
        with pytest.raises(InvalidRequest, match="Keyspace 'nope' does not exist"):
            s.execute("USE nope")
        # system_schema lists the system keyspaces with Cassandra's replication, and the tables
        # and columns of system and system_schema: the driver's metadata has them.
        replication = {r.keyspace_name: r.replication for r in s.execute(
            "SELECT keyspace_name, replication FROM system_schema.keyspaces")}
        for ks in ("system", "system_schema", "system_auth", "system_distributed", "system_traces", "drv"):
            assert ks in replication, sorted(replication)
        assert replication["system"]["class"] == "org.apache.cassandra.locator.LocalStrategy"
        assert replication["system_traces"] == {"class": "org.apache.cassandra.locator.SimpleStrategy",
                                                "replication_factor": "2"}
        local = c.metadata.keyspaces["system"].tables["local"]
        assert [col.name for col in local.partition_key] == ["key"]
        assert local.columns["tokens"].cql_type == "set<text>"
        assert local.columns["truncated_at"].cql_type == "map<uuid, blob>"
        schema_tables = c.metadata.keyspaces["system_schema"].tables
        assert {"keyspaces", "tables", "columns", "types", "functions", "aggregates", "indexes", "views"} <= \
            set(schema_tables)
        assert [col.name for col in schema_tables["columns"].clustering_key] == ["table_name", "column_name"]
        assert c.metadata.keyspaces["system"].tables["peers"].columns["tokens"].cql_type == "set<text>"
    finally:
        c.shutdown()


def test_percentile_columns_and_a_trailing_comma(session):
    """Issue 31: p50, p99, p2 and pt are column names (Cassandra lexes a
    duration only as P with a complete designator), and a trailing comma in
    the column list is Cassandra's grammar; a schema exported by the driver
    replays."""
    session.execute("CREATE TABLE IF NOT EXISTS lat (k int PRIMARY KEY, p50 double, p99 double, p2 int, pt text,)")
    session.execute("INSERT INTO lat (k, p50, p99, p2, pt) VALUES (1, 0.5, 9.9, 2, 'x')")
    row = session.execute("SELECT p50, p99, p2, pt FROM lat WHERE k = 1").one()
    assert (row.p50, row.p99, row.p2, row.pt) == (0.5, 9.9, 2, "x")
    exported = session.cluster.metadata.keyspaces["drv"].tables["lat"].export_as_string()
    session.execute("DROP TABLE lat")
    session.execute(exported)
    columns = session.execute("SELECT column_name FROM system_schema.columns "
                              "WHERE keyspace_name = 'drv' AND table_name = 'lat'")
    assert {r.column_name for r in columns} == {"k", "p50", "p99", "p2", "pt"}
    assert session.execute("SELECT count(*) FROM lat").one()[0] == 0


def test_prepared_condition_and_batch_markers_are_typed_by_their_columns(session):
    """Issue 31: the marker of an IF condition is its column (name and type),
    and a prepared BATCH string describes each marker by the statement that
    holds it, as Cassandra does; the driver then serializes by those types."""
    import datetime
    session.execute("CREATE TABLE IF NOT EXISTS docs (id int PRIMARY KEY, body text, last_modified timestamp)")
    delete = session.prepare("DELETE FROM docs WHERE id = ? IF last_modified = ?")
    assert [(c.name, c.type.typename) for c in delete.column_metadata] == [("id", "int"), ("last_modified", "timestamp")]
    batch = session.prepare("BEGIN BATCH INSERT INTO docs (id, body) VALUES (?, ?); "
                            "UPDATE docs SET last_modified = ? WHERE id = ?; APPLY BATCH")
    assert [(c.name, c.type.typename) for c in batch.column_metadata] == [
        ("id", "int"), ("body", "varchar"), ("last_modified", "timestamp"), ("id", "int")]
    when = datetime.datetime(2026, 11, 26, 12, 0, 0)
    session.execute(batch, (7, "seven", when, 7))
    row = session.execute("SELECT body, last_modified FROM docs WHERE id = 7").one()
    assert (row.body, row.last_modified) == ("seven", when)
    assert session.execute(delete, (7, when)).one()[0] is True
    assert session.execute("SELECT * FROM docs WHERE id = 7").one() is None


def test_prepared_collection_element_markers_are_typed_as_cassandra_types_them(session):
    """A list element by index (`l[?] = ?`, `DELETE l[?]`) and a map element
    (`m[?] = ?`) are described as Cassandra's receivers: idx(l) int and
    value(l) the element type, key(m) and value(m); before, `l[0] = ?` was
    described as the whole list and the driver refused an int for it."""
    session.execute("CREATE TABLE IF NOT EXISTS elems (id int PRIMARY KEY, l list<text>, m map<int, text>)")
    session.execute("INSERT INTO elems (id, l, m) VALUES (1, ['a', 'b'], {1: 'x'})")
    set_at = session.prepare("UPDATE elems SET l[?] = ?, m[?] = ? WHERE id = ?")
    assert [(c.name, c.type.typename) for c in set_at.column_metadata] == [
        ("idx(l)", "int"), ("value(l)", "varchar"), ("key(m)", "int"), ("value(m)", "varchar"), ("id", "int")]
    set_first = session.prepare("UPDATE elems SET l[0] = ? WHERE id = ?")
    assert [(c.name, c.type.typename) for c in set_first.column_metadata] == [("value(l)", "varchar"), ("id", "int")]
    delete_at = session.prepare("DELETE l[?] FROM elems WHERE id = ?")
    assert [(c.name, c.type.typename) for c in delete_at.column_metadata] == [("idx(l)", "int"), ("id", "int")]
    session.execute(set_at, (1, "B", 2, "y", 1))
    session.execute(set_first, ("A", 1))
    row = session.execute("SELECT l, m FROM elems WHERE id = 1").one()
    assert (row.l, row.m) == (["A", "B"], {1: "x", 2: "y"})
    session.execute(delete_at, (0, 1))
    assert session.execute("SELECT l FROM elems WHERE id = 1").one().l == ["B"]


def test_a_prepared_select_star_sees_a_column_added_after_it(session):
    """Issue 31 (CASSANDRA-7910): ALTER TABLE ADD evicts the table's prepared
    statements, so EXECUTE answers Unprepared, the driver prepares again and
    decodes rows with the new column list instead of the old one."""
    session.execute("CREATE TABLE IF NOT EXISTS grows (k int PRIMARY KEY, a text)")
    session.execute("INSERT INTO grows (k, a) VALUES (1, 'one')")
    select = session.prepare("SELECT * FROM grows WHERE k = ?")
    assert session.execute(select, (1,)).one()._asdict() == {"k": 1, "a": "one"}
    session.execute("ALTER TABLE grows ADD b int")
    session.execute("UPDATE grows SET b = 2 WHERE k = 1")
    assert session.execute(select, (1,)).one()._asdict() == {"k": 1, "a": "one", "b": 2}


def test_limit_bounds_an_aggregates_output_not_the_rows_it_folds(session):
    """Issue 31: as Cassandra, LIMIT on an aggregate without GROUP BY limits
    the rows returned (one), not the rows aggregated."""
    session.execute("CREATE TABLE IF NOT EXISTS agg (k int, c int, v int, PRIMARY KEY (k, c))")
    for c in range(10):
        session.execute("INSERT INTO agg (k, c, v) VALUES (1, %d, %d)" % (c, c))
    assert session.execute("SELECT count(*) FROM agg WHERE k = 1 LIMIT 3").one()[0] == 10
    assert session.execute("SELECT sum(v), max(c) FROM agg WHERE k = 1 LIMIT 1").one() == (45, 9)
    assert len(list(session.execute("SELECT c FROM agg WHERE k = 1 LIMIT 3"))) == 3


def test_user_defined_functions_parse_and_are_refused_while_disabled(session):
    """Issue 31: CREATE FUNCTION and CREATE AGGREGATE parse with Cassandra's
    grammar and are refused as Cassandra refuses them by default; DROP of
    one that does not exist says so, or does nothing with IF EXISTS."""
    disabled = "User-defined functions are disabled in cassandra.yaml - set enable_user_defined_functions=true to enable"
    with pytest.raises(InvalidRequest, match=disabled):
        session.execute("CREATE FUNCTION plus (a int, b int) RETURNS NULL ON NULL INPUT RETURNS int "
                        "LANGUAGE java AS 'return a + b;'")
    with pytest.raises(InvalidRequest, match=disabled):
        session.execute("CREATE OR REPLACE AGGREGATE total (int) SFUNC plus STYPE int INITCOND 0")
    with pytest.raises(InvalidRequest, match="Function 'drv.plus' doesn't exist"):
        session.execute("DROP FUNCTION plus")
    session.execute("DROP AGGREGATE IF EXISTS total")
    with pytest.raises(SyntaxException):
        session.execute("CREATE FUNCTION plus (a int) RETURNS int LANGUAGE java AS 'x'")
