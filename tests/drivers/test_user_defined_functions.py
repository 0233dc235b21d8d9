"""Issue 31, item 5: user-defined functions and aggregates in Lua, on a node
started with --enable-user-defined-functions, through the Python driver:
CREATE [OR REPLACE] FUNCTION / AGGREGATE, calls in selections (qualified,
unqualified, with literals, prepared), aggregates with a tuple state,
INITCOND and a final function, RETURNS NULL / CALLED ON NULL INPUT,
system_schema.functions and aggregates as the driver's metadata reads them,
FunctionFailure for errors, the sandbox's time and memory limits, Cassandra's
refusals, and functions surviving a restart. The refusal while disabled is
test_python_driver.py's."""
import pytest
from cassandra import AlreadyExists, FunctionFailure, InvalidRequest

from conftest import connect, own_server


@pytest.fixture(scope="module")
def server():
    yield from own_server("--enable-user-defined-functions")


@pytest.fixture(scope="module")
def session(server):
    cluster, session = connect(server)
    session.execute("CREATE KEYSPACE udf WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}")
    session.set_keyspace("udf")
    session.execute("CREATE TABLE t (k int, c int, v int, s text, PRIMARY KEY (k, c))")
    for c in range(10):
        session.execute("INSERT INTO t (k, c, v, s) VALUES (1, %s, %s, %s)", (c, c * c, "x" * c))
    session.execute("INSERT INTO t (k, c) VALUES (1, 10)")  # v and s null
    yield session
    cluster.shutdown()


def test_scalar_functions_in_selections(session):
    session.execute("CREATE FUNCTION udf.plus (a int, b int) RETURNS NULL ON NULL INPUT RETURNS int "
                    "LANGUAGE lua AS 'return a + b'")
    result = session.execute("SELECT c, udf.plus(v, c) FROM t WHERE k = 1")
    assert result.column_names == ["c", "udf.plus(v, c)"]  # Cassandra's name for the column
    rows = list(result)
    assert [r[1] for r in rows] == [c * c + c for c in range(10)] + [None]  # null in, null out
    # Unqualified in the session's keyspace, with a literal argument and an alias.
    rows = list(session.execute("SELECT plus(c, 100) AS p FROM t WHERE k = 1 AND c < 3"))
    assert [r.p for r in rows] == [100, 101, 102]
    # CALLED ON NULL INPUT runs on null; text in and out.
    session.execute("CREATE FUNCTION shout (s text) CALLED ON NULL INPUT RETURNS text LANGUAGE lua AS "
                    "'if s == nil then return \"(none)\" end return string.upper(s) .. \"!\"'")
    rows = list(session.execute("SELECT shout(s) FROM t WHERE k = 1 AND c IN (2, 10)"))
    assert [r[0] for r in rows] == ["XX!", "(none)"]
    # Prepared: the result metadata has the function's return type.
    prepared = session.prepare("SELECT udf.plus(v, c) AS p FROM t WHERE k = ? AND c = ?")
    assert session.execute(prepared, (1, 4)).one().p == 20
    # Overloads are told apart by their argument types.
    session.execute("CREATE FUNCTION plus (a text, b text) RETURNS NULL ON NULL INPUT RETURNS text "
                    "LANGUAGE lua AS 'return a .. b'")
    assert session.execute("SELECT plus(s, 'y') FROM t WHERE k = 1 AND c = 2").one()[0] == "xxy"
    assert session.execute("SELECT plus(v, 1) FROM t WHERE k = 1 AND c = 2").one()[0] == 5
    with pytest.raises(InvalidRequest, match="none of its type signatures match"):
        session.execute("SELECT plus(v, s) FROM t WHERE k = 1")


def test_or_replace_is_seen_by_the_next_statement(session):
    session.execute("CREATE FUNCTION twice (a int) RETURNS NULL ON NULL INPUT RETURNS int LANGUAGE lua AS 'return 2 * a'")
    assert session.execute("SELECT twice(c) FROM t WHERE k = 1 AND c = 3").one()[0] == 6
    with pytest.raises(AlreadyExists):
        session.execute("CREATE FUNCTION twice (a int) RETURNS NULL ON NULL INPUT RETURNS int LANGUAGE lua AS 'return a'")
    session.execute("CREATE FUNCTION IF NOT EXISTS twice (a int) RETURNS NULL ON NULL INPUT RETURNS int "
                    "LANGUAGE lua AS 'return a'")  # nothing happens
    assert session.execute("SELECT twice(c) FROM t WHERE k = 1 AND c = 3").one()[0] == 6
    session.execute("CREATE OR REPLACE FUNCTION twice (a int) RETURNS NULL ON NULL INPUT RETURNS int "
                    "LANGUAGE lua AS 'return 3 * a'")
    assert session.execute("SELECT twice(c) FROM t WHERE k = 1 AND c = 3").one()[0] == 9


def test_aggregates_with_a_tuple_state_initcond_and_final_function(session):
    session.execute("CREATE FUNCTION avg_state (state tuple<int, bigint>, val int) CALLED ON NULL INPUT "
                    "RETURNS tuple<int, bigint> LANGUAGE lua AS "
                    "'if val == nil then return state end return {state[1] + 1, state[2] + val}'")
    session.execute("CREATE FUNCTION avg_final (state tuple<int, bigint>) CALLED ON NULL INPUT RETURNS double "
                    "LANGUAGE lua AS 'if state[1] == 0 then return nil end return state[2] / state[1]'")
    session.execute("CREATE AGGREGATE average (int) SFUNC avg_state STYPE tuple<int, bigint> "
                    "FINALFUNC avg_final INITCOND (0, 0)")
    squares = [c * c for c in range(10)]
    assert session.execute("SELECT average(v) FROM t WHERE k = 1").one()[0] == pytest.approx(sum(squares) / 10)
    assert session.execute("SELECT average(v) FROM t WHERE k = 1 AND c < 4").one()[0] == pytest.approx(14 / 4)
    assert session.execute("SELECT average(v) FROM t WHERE k = 2").one()[0] is None  # no rows: final of INITCOND
    # Without a final function the state is the result; a RETURNS NULL ON
    # NULL INPUT state function skips null values.
    session.execute("CREATE FUNCTION add_to (state bigint, val int) RETURNS NULL ON NULL INPUT RETURNS bigint "
                    "LANGUAGE lua AS 'return state + val'")
    session.execute("CREATE AGGREGATE total (int) SFUNC add_to STYPE bigint INITCOND 1000")
    assert session.execute("SELECT total(v), count(*) FROM t WHERE k = 1").one() == (1000 + sum(squares), 11)
    # GROUP BY folds each group.
    session.execute("INSERT INTO t (k, c, v) VALUES (2, 0, 7)")
    rows = list(session.execute("SELECT k, total(v) FROM t WHERE k IN (1, 2) GROUP BY k"))
    assert [(r[0], r[1]) for r in rows] == [(1, 1000 + sum(squares)), (2, 1007)]
    session.execute("DELETE FROM t WHERE k = 2")


def test_schema_tables_and_driver_metadata(server, session):
    session.execute("CREATE FUNCTION IF NOT EXISTS meta_f (x bigint) CALLED ON NULL INPUT RETURNS bigint "
                    "LANGUAGE lua AS 'return x'")
    session.execute("CREATE FUNCTION IF NOT EXISTS meta_state (s int, x bigint) CALLED ON NULL INPUT RETURNS int "
                    "LANGUAGE lua AS 'return s + 1'")
    session.execute("CREATE AGGREGATE IF NOT EXISTS meta_count (bigint) SFUNC meta_state STYPE int INITCOND 0")
    row = session.execute("SELECT * FROM system_schema.functions WHERE keyspace_name = 'udf' AND function_name = 'meta_f'").one()
    assert row.argument_names == ["x"] and row.argument_types == ["bigint"]
    assert row.body == "return x" and row.language == "lua" and row.called_on_null_input is True
    assert row.return_type == "bigint"
    row = session.execute("SELECT * FROM system_schema.aggregates WHERE keyspace_name = 'udf' "
                          "AND aggregate_name = 'meta_count'").one()
    assert (row.state_func, row.state_type, row.initcond, row.return_type, row.final_func) == \
        ("meta_state", "int", "0", "int", None)
    # DESCRIBE (Cassandra 4's server-side form): statements that replay.
    described = session.execute("DESCRIBE FUNCTION meta_f").one()
    assert (described.keyspace_name, described.type, described.name) == ("udf", "function", "meta_f(bigint)")
    assert described.create_statement == ("CREATE FUNCTION udf.meta_f(x bigint)\n    CALLED ON NULL INPUT\n"
                                          "    RETURNS bigint\n    LANGUAGE lua\n    AS $$return x$$;")
    session.execute("DROP FUNCTION meta_f")
    session.execute(described.create_statement)
    assert session.execute("SELECT meta_f(9) FROM t WHERE k = 1 AND c = 3").one()[0] == 9
    aggregate = session.execute("DESCRIBE AGGREGATE meta_count").one().create_statement
    assert aggregate == "CREATE AGGREGATE udf.meta_count(bigint)\n    SFUNC meta_state\n    STYPE int\n    INITCOND 0;"
    kinds = [(r.type, r.name) for r in session.execute("DESCRIBE KEYSPACE udf")]
    assert kinds.index(("function", "meta_state(int, bigint)")) < kinds.index(("aggregate", "meta_count(bigint)")) \
        < kinds.index(("table", "t"))
    assert ("udf", "function", "plus(int, int)") in [tuple(r) for r in session.execute("DESCRIBE FUNCTIONS")]
    # The driver's metadata (refreshed on the SCHEMA_CHANGE events) holds them.
    cluster, _ = connect(server)
    try:
        ks = cluster.metadata.keyspaces["udf"]
        assert "meta_f(bigint)" in ks.functions and "plus(int,int)" in ks.functions
        assert ks.functions["meta_f(bigint)"].body == "return x"
        assert "meta_count(bigint)" in ks.aggregates
        assert ks.aggregates["meta_count(bigint)"].state_func == "meta_state"
        assert "CREATE FUNCTION udf.meta_f" in ks.export_as_string()
    finally:
        cluster.shutdown()


def test_failures_are_function_failures_and_the_sandbox_holds(session):
    session.execute("CREATE FUNCTION boom (a int) RETURNS NULL ON NULL INPUT RETURNS int LANGUAGE lua AS "
                    "'if a > 5 then error(\"too big: \" .. a) end return a'")
    with pytest.raises(FunctionFailure, match=r"execution of 'udf.boom\[int\]' failed: .*too big: 6") as e:
        list(session.execute("SELECT boom(c) FROM t WHERE k = 1"))
    assert (e.value.keyspace, e.value.function, e.value.arg_types) == ("udf", "boom", ["int"])
    with pytest.raises(FunctionFailure, match="too big: 6"):  # also per group
        list(session.execute("SELECT c, boom(c) FROM t WHERE k = 1 GROUP BY k, c"))
    session.execute("CREATE FUNCTION escape (a int) RETURNS NULL ON NULL INPUT RETURNS int LANGUAGE lua AS "
                    "'os.execute(\"touch /tmp/tessera_udf_escaped\") return a'")
    with pytest.raises(FunctionFailure, match="global 'os'"):
        session.execute("SELECT escape(c) FROM t WHERE k = 1 AND c = 1")
    session.execute("CREATE FUNCTION spin (a int) RETURNS NULL ON NULL INPUT RETURNS int LANGUAGE lua AS "
                    "'while true do end return a'")
    with pytest.raises(FunctionFailure, match="ran longer than 1000 ms"):
        session.execute("SELECT spin(c) FROM t WHERE k = 1 AND c = 1")
    session.execute("CREATE FUNCTION hog (a int) RETURNS NULL ON NULL INPUT RETURNS int LANGUAGE lua AS "
                    "'local t = {} for i = 1, 100000000 do t[i] = i end return a'")
    with pytest.raises(FunctionFailure, match="used more than"):
        session.execute("SELECT hog(c) FROM t WHERE k = 1 AND c = 1")
    session.execute("CREATE FUNCTION wrong (a int) RETURNS NULL ON NULL INPUT RETURNS int LANGUAGE lua AS 'return \"x\"'")
    with pytest.raises(FunctionFailure, match="returned a Lua string where a int is expected"):
        session.execute("SELECT wrong(c) FROM t WHERE k = 1 AND c = 1")
    # The node goes on serving.
    assert session.execute("SELECT plus(c, 1) FROM t WHERE k = 1 AND c = 1").one()[0] == 2


def test_cassandras_refusals(session):
    with pytest.raises(InvalidRequest, match="Invalid language 'java' for function 'udf.j'"):
        session.execute("CREATE FUNCTION j (a int) RETURNS NULL ON NULL INPUT RETURNS int LANGUAGE java AS 'return a;'")
    with pytest.raises(InvalidRequest, match="Could not compile function 'udf.broken' from Lua source"):
        session.execute("CREATE FUNCTION broken (a int) RETURNS NULL ON NULL INPUT RETURNS int LANGUAGE lua AS 'return a +'")
    with pytest.raises(InvalidRequest, match="Duplicate argument names"):
        session.execute("CREATE FUNCTION dup (a int, a int) RETURNS NULL ON NULL INPUT RETURNS int LANGUAGE lua AS 'return a'")
    with pytest.raises(InvalidRequest, match=r"State function udf.nothing\(int, int\) doesn't exist"):
        session.execute("CREATE AGGREGATE agg_missing (int) SFUNC nothing STYPE int")
    session.execute("CREATE FUNCTION IF NOT EXISTS one_more (s int, x int) CALLED ON NULL INPUT RETURNS bigint "
                    "LANGUAGE lua AS 'return 1'")
    with pytest.raises(InvalidRequest, match="return type must be the same as the first argument type"):
        session.execute("CREATE AGGREGATE agg_bad (int) SFUNC one_more STYPE int")
    # A function an aggregate uses cannot go first; overloads need a signature.
    with pytest.raises(InvalidRequest, match="is still referenced by aggregate udf.total"):
        session.execute("DROP FUNCTION add_to")
    with pytest.raises(InvalidRequest, match="matches multiple function definitions"):
        session.execute("DROP FUNCTION plus")
    session.execute("DROP FUNCTION plus (text, text)")
    session.execute("CREATE AGGREGATE gone (int) SFUNC add_to STYPE bigint INITCOND 0")
    session.execute("DROP AGGREGATE gone")
    session.execute("DROP AGGREGATE IF EXISTS gone")
    with pytest.raises(InvalidRequest, match="Aggregate 'udf.gone' doesn't exist"):
        session.execute("DROP AGGREGATE gone")


def test_functions_survive_a_restart(server, session):
    session.execute("CREATE FUNCTION IF NOT EXISTS kept (a int) RETURNS NULL ON NULL INPUT RETURNS int "
                    "LANGUAGE lua AS 'return a * 10'")
    server.restart()
    cluster, again = connect(server, "udf")
    try:
        assert again.execute("SELECT kept(c), total(v) FROM t WHERE k = 1 AND c < 3").one() == (0, 1005)
    finally:
        cluster.shutdown()


def test_functions_reach_every_node_of_a_cluster():
    """On 2 nodes (RF 2): a function and an aggregate created through node 1
    reach node 2 through the schema log, and node 2 folds the rows it reads
    at QUORUM with them."""
    import os
    import time
    from cassandra import ConsistencyLevel
    from cassandra.cluster import EXEC_PROFILE_DEFAULT, Cluster, ExecutionProfile
    from cassandra.policies import WhiteListRoundRobinPolicy
    from local_cluster import running_cluster

    def node_session(cluster, node):
        profile = ExecutionProfile(load_balancing_policy=WhiteListRoundRobinPolicy([cluster.address(node)]),
                                   request_timeout=20, consistency_level=ConsistencyLevel.QUORUM)
        driver = Cluster([cluster.address(node)], port=cluster.port, protocol_version=4, connect_timeout=10,
                         execution_profiles={EXEC_PROFILE_DEFAULT: profile})
        return driver, driver.connect()

    for cluster in running_cluster(os.environ["TESSERA_BINARY"], 2, ["--enable-user-defined-functions"]):
        d1, s1 = node_session(cluster, 1)
        d2, s2 = node_session(cluster, 2)
        try:
            s1.execute("CREATE KEYSPACE cudf WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 2}")
            s1.execute("CREATE TABLE cudf.t (k int, c int, v int, PRIMARY KEY (k, c))")
            for c in range(20):
                s1.execute("INSERT INTO cudf.t (k, c, v) VALUES (7, %s, %s)", (c, c))
            s1.execute("CREATE FUNCTION cudf.sq (a int) RETURNS NULL ON NULL INPUT RETURNS bigint "
                       "LANGUAGE lua AS 'return a * a'")
            s1.execute("CREATE FUNCTION cudf.acc (s bigint, a int) RETURNS NULL ON NULL INPUT RETURNS bigint "
                       "LANGUAGE lua AS 'return s + a * a'")
            s1.execute("CREATE AGGREGATE cudf.sum_sq (int) SFUNC acc STYPE bigint INITCOND 0")
            deadline = time.monotonic() + 30
            while True:  # node 2 applies the schema log's entries as its watch sees them
                names = {r.aggregate_name for r in s2.execute(
                    "SELECT aggregate_name FROM system_schema.aggregates WHERE keyspace_name = 'cudf'")}
                if "sum_sq" in names:
                    break
                assert time.monotonic() < deadline, "node 2 never saw the aggregate"
                time.sleep(0.1)
            assert s2.execute("SELECT cudf.sq(v) FROM cudf.t WHERE k = 7 AND c = 9").one()[0] == 81
            assert s2.execute("SELECT cudf.sum_sq(v) FROM cudf.t WHERE k = 7").one()[0] == sum(c * c for c in range(20))
        finally:
            d1.shutdown()
            d2.shutdown()
