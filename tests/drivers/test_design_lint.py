"""The design lint through the front door: CREATE TABLE answers the seeds' bad
designs with client warnings naming the rule and a DDL fix, and
system.key_advice shows them as rows of kind 'schema'; their recommended
designs get no warning. ALTER TABLE answers the same way."""
from cassandra.cluster import Cluster

BAD = {
    "user_access_log": ("CREATE TABLE lint.user_access_log (last_access timestamp, user_id text, action text, "
                        "PRIMARY KEY (last_access, user_id)) WITH distribution = 'range'",
                        "monotonic_leading_key: last_access"),
    "requests_by_status": ("CREATE TABLE lint.requests_by_status (status int, host text, path text, "
                           "PRIMARY KEY (status, host, path))", "low_cardinality_partition_key: status"),
    "sensor_readings": ("CREATE TABLE lint.sensor_readings (sensor_id uuid, ts timestamp, value double, "
                        "PRIMARY KEY (sensor_id, ts))", "unbounded_time_series: ts"),
}
GOOD = [
    "CREATE TABLE lint.user_access_log_swapped (user_id text, last_access timestamp, action text, "
    "PRIMARY KEY ((user_id, last_access))) WITH distribution = 'range'",
    "CREATE TABLE lint.user_access_log_sharded (shard_id int, last_access timestamp, user_id text, "
    "PRIMARY KEY ((shard_id, last_access, user_id))) WITH distribution = 'range'",
    "CREATE TABLE lint.requests_by_status_and_host (status int, host text, path text, "
    "PRIMARY KEY ((status, host), path))",
    "CREATE TABLE lint.sensor_readings_by_day (sensor_id uuid, day date, ts timestamp, value double, "
    "PRIMARY KEY ((sensor_id, day), ts))",
]


def test_lint_warns_on_bad_designs_and_is_silent_on_good_ones(server):
    cluster = Cluster(["127.0.0.1"], port=server.port, protocol_version=4)
    try:
        session = cluster.connect()
        session.execute("CREATE KEYSPACE IF NOT EXISTS lint WITH replication = "
                        "{'class': 'SimpleStrategy', 'replication_factor': 1}")
        for table, (ddl, rule) in BAD.items():
            warnings = session.execute(ddl).response_future.warnings or []
            assert len(warnings) == 1, (table, warnings)
            assert warnings[0].startswith("Design lint (%s)" % rule), warnings
            assert "DDL: CREATE TABLE lint.%s (" % table in warnings[0], warnings
        for ddl in GOOD:
            assert not session.execute(ddl).response_future.warnings, ddl
        rows = [r for r in session.execute("SELECT * FROM system.key_advice") if r.keyspace_name == "lint"]
        assert sorted((r.table_name, r.subject) for r in rows if r.kind == "schema") == \
            sorted((t, rule) for t, (_, rule) in BAD.items())
        # ALTER TABLE answers with the lint of the table as it now is.
        warnings = session.execute("ALTER TABLE lint.sensor_readings ADD unit text").response_future.warnings
        assert warnings and "unbounded_time_series: ts" in warnings[0] and "N_r (4 - 2 - 0)" in warnings[0]
        assert not session.execute("ALTER TABLE lint.sensor_readings_by_day ADD unit text").response_future.warnings
    finally:
        cluster.shutdown()
