"""Materialized views through the DataStax Python driver (issue 31, item 2):
CREATE / ALTER / DROP MATERIALIZED VIEW with Cassandra 4.1's refusals, view
rows kept right by inserts, updates that move a row in the view, deletions
of rows, partitions and ranges, TTLs and collections; the build of a view
over existing rows with its progress in system tables; system_schema.views,
the driver's metadata and export, and DESCRIBE."""
import time
import uuid

import pytest
from cassandra import InvalidRequest

from conftest import connect, own_server


@pytest.fixture(scope="module")
def server():
    run = own_server()
    yield next(run)
    run.close()


@pytest.fixture
def session(server):
    cluster, s = connect(server)
    ks = "mv_" + uuid.uuid4().hex[:8]
    s.execute("CREATE KEYSPACE %s WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}" % ks)
    s.set_keyspace(ks)
    yield s
    s.execute("DROP KEYSPACE %s" % ks)
    cluster.shutdown()


def rows(s, q, *args):
    return [tuple(r) for r in s.execute(q, args)]


def create_users(s):
    s.execute("CREATE TABLE users (id int PRIMARY KEY, email text, age int, tags set<text>)")
    s.execute("CREATE MATERIALIZED VIEW users_by_email AS SELECT * FROM users "
              "WHERE email IS NOT NULL AND id IS NOT NULL PRIMARY KEY (email, id)")


def wait_built(s, view, deadline_s=30):
    deadline = time.monotonic() + deadline_s
    while time.monotonic() < deadline:
        if rows(s, "SELECT view_name FROM system.built_views WHERE keyspace_name = %s AND view_name = %s",
                s.keyspace, view):
            return
        time.sleep(0.05)
    raise AssertionError("view %s was not built in %ss" % (view, deadline_s))


def test_view_rows_follow_inserts_updates_and_deletes(session):
    s = session
    create_users(s)
    s.execute("INSERT INTO users (id, email, age, tags) VALUES (1, 'ada@x', 36, {'math'})")
    s.execute("INSERT INTO users (id, email, age) VALUES (2, 'alan@x', 41)")
    s.execute("INSERT INTO users (id, age) VALUES (3, 20)")  # a null view key: no view row
    assert rows(s, "SELECT email, id, age FROM users_by_email WHERE email = 'ada@x'") == [("ada@x", 1, 36)]
    assert rows(s, "SELECT tags FROM users_by_email WHERE email = 'ada@x'") == [({"math"},)]
    assert len(rows(s, "SELECT * FROM users_by_email")) == 2
    # An update of the view's key column moves the row: the old view row goes.
    s.execute("UPDATE users SET email = 'ada@y' WHERE id = 1")
    assert rows(s, "SELECT id FROM users_by_email WHERE email = 'ada@x'") == []
    assert rows(s, "SELECT id, age, tags FROM users_by_email WHERE email = 'ada@y'") == [(1, 36, {"math"})]
    # Other columns follow, collections too.
    s.execute("UPDATE users SET age = 37, tags = tags + {'engines'} WHERE id = 1")
    assert rows(s, "SELECT age, tags FROM users_by_email WHERE email = 'ada@y'") == [(37, {"math", "engines"})]
    s.execute("UPDATE users SET age = null WHERE id = 1")
    assert rows(s, "SELECT age FROM users_by_email WHERE email = 'ada@y'") == [(None,)]
    # A row gaining its view key appears; losing it disappears.
    s.execute("UPDATE users SET email = 'c@x' WHERE id = 3")
    assert rows(s, "SELECT id, age FROM users_by_email WHERE email = 'c@x'") == [(3, 20)]
    s.execute("DELETE email FROM users WHERE id = 3")
    assert rows(s, "SELECT id FROM users_by_email WHERE email = 'c@x'") == []
    s.execute("DELETE FROM users WHERE id = 2")
    assert rows(s, "SELECT id FROM users_by_email WHERE email = 'alan@x'") == []
    assert rows(s, "SELECT email, id FROM users_by_email") == [("ada@y", 1)]
    # A logged batch, and a write back to an earlier value.
    s.execute("BEGIN BATCH UPDATE users SET email = 'ada@x' WHERE id = 1; "
              "INSERT INTO users (id, email) VALUES (4, 'ada@x'); APPLY BATCH")
    assert rows(s, "SELECT id FROM users_by_email WHERE email = 'ada@x'") == [(1,), (4,)]
    assert rows(s, "SELECT id FROM users_by_email WHERE email = 'ada@y'") == []


def test_clustering_views_follow_range_and_partition_deletions(session):
    s = session
    s.execute("CREATE TABLE events (day int, seq int, kind text, body text, PRIMARY KEY (day, seq))")
    s.execute("CREATE MATERIALIZED VIEW events_by_kind AS SELECT day, seq, kind, body FROM events "
              "WHERE kind IS NOT NULL AND day IS NOT NULL AND seq IS NOT NULL "
              "PRIMARY KEY (kind, day, seq) WITH CLUSTERING ORDER BY (day DESC, seq ASC)")
    insert = s.prepare("INSERT INTO events (day, seq, kind, body) VALUES (?, ?, ?, ?)")
    for day in range(3):
        for seq in range(5):
            s.execute(insert, (day, seq, "even" if seq % 2 == 0 else "odd", "d%d s%d" % (day, seq)))
    assert rows(s, "SELECT day, seq FROM events_by_kind WHERE kind = 'odd'") == [
        (2, 1), (2, 3), (1, 1), (1, 3), (0, 1), (0, 3)]
    s.execute("DELETE FROM events WHERE day = 1 AND seq >= 2")
    assert rows(s, "SELECT day, seq FROM events_by_kind WHERE kind = 'odd' AND day = 1") == [(1, 1)]
    assert rows(s, "SELECT day, seq FROM events_by_kind WHERE kind = 'even' AND day = 1") == [(1, 0)]
    s.execute("DELETE FROM events WHERE day = 2")
    assert rows(s, "SELECT day, seq FROM events_by_kind WHERE kind = 'odd'") == [(1, 1), (0, 1), (0, 3)]
    assert rows(s, "SELECT body FROM events_by_kind WHERE kind = 'even' AND day = 0 AND seq = 4") == [("d0 s4",)]


def test_ttl_expires_view_rows_with_their_base(session):
    s = session
    create_users(s)
    s.execute("INSERT INTO users (id, email, age) VALUES (1, 'short@x', 1) USING TTL 1")
    s.execute("INSERT INTO users (id, email, age) VALUES (2, 'long@x', 2)")
    ttl = rows(s, "SELECT TTL(age) FROM users_by_email WHERE email = 'short@x'")
    assert len(ttl) == 1 and ttl[0][0] is not None and ttl[0][0] <= 1
    deadline = time.monotonic() + 10
    while rows(s, "SELECT id FROM users_by_email WHERE email = 'short@x'") and time.monotonic() < deadline:
        time.sleep(0.1)
    assert rows(s, "SELECT id FROM users_by_email WHERE email = 'short@x'") == []
    assert rows(s, "SELECT id FROM users_by_email WHERE email = 'long@x'") == [(2,)]
    # A TTL on the view's key column alone bounds the view row too.
    s.execute("UPDATE users USING TTL 1 SET email = 'brief@x' WHERE id = 2")
    assert rows(s, "SELECT id FROM users_by_email WHERE email = 'brief@x'") == [(2,)]
    deadline = time.monotonic() + 10
    while rows(s, "SELECT id FROM users_by_email WHERE email = 'brief@x'") and time.monotonic() < deadline:
        time.sleep(0.1)
    assert rows(s, "SELECT id FROM users_by_email WHERE email = 'brief@x'") == []
    assert rows(s, "SELECT id, email, age FROM users WHERE id = 2") == [(2, None, 2)]


def test_build_over_existing_rows_and_its_progress(session):
    s = session
    s.execute("CREATE TABLE readings (sensor int, at int, value double, site text, PRIMARY KEY (sensor, at))")
    insert = s.prepare("INSERT INTO readings (sensor, at, value, site) VALUES (?, ?, ?, ?)")
    for sensor in range(40):
        for at in range(10):
            s.execute(insert, (sensor, at, sensor + at / 10, "site%d" % (sensor % 4)))
    s.execute("CREATE MATERIALIZED VIEW readings_by_site AS SELECT * FROM readings "
              "WHERE site IS NOT NULL AND sensor IS NOT NULL AND at IS NOT NULL PRIMARY KEY (site, sensor, at)")
    wait_built(s, "readings_by_site")
    assert rows(s, "SELECT * FROM system.view_builds_in_progress WHERE keyspace_name = %s", s.keyspace) == []
    assert len(rows(s, "SELECT sensor FROM readings_by_site WHERE site = 'site1'")) == 100
    assert rows(s, "SELECT value FROM readings_by_site WHERE site = 'site3' AND sensor = 7 AND at = 2") == [(7.2,)]


def test_refusals_in_cassandras_words(session):
    s = session
    s.execute("CREATE TABLE users (id int PRIMARY KEY, email text, age int, tags set<text>)")
    created = s.execute("CREATE MATERIALIZED VIEW users_by_email AS SELECT * FROM users "
                        "WHERE email IS NOT NULL AND id IS NOT NULL PRIMARY KEY (email, id)")
    assert created.response_future.warnings == [
        "Materialized views are experimental and are not recommended for production use."]
    s.execute("CREATE TABLE counts (id int PRIMARY KEY, n counter)")
    s.execute("CREATE TABLE st (p int, c int, s int static, v int, PRIMARY KEY (p, c))")
    cases = [
        ("CREATE MATERIALIZED VIEW v AS SELECT * FROM users WHERE email IS NOT NULL AND age IS NOT NULL "
         "AND id IS NOT NULL PRIMARY KEY (email, age, id)",
         "Cannot include more than one non-primary key column in materialized view primary key (got email, age)"),
        ("CREATE MATERIALIZED VIEW v AS SELECT * FROM users WHERE email IS NOT NULL PRIMARY KEY (email)",
         "Cannot create materialized view 'v' without primary key columns id from base table 'users'"),
        ("CREATE MATERIALIZED VIEW v AS SELECT * FROM users WHERE email IS NOT NULL PRIMARY KEY (email, id)",
         "Primary key columns id must be restricted with 'IS NOT NULL' or otherwise"),
        ("CREATE MATERIALIZED VIEW v AS SELECT id, email FROM users WHERE email IS NOT NULL AND id IS NOT NULL "
         "PRIMARY KEY (email, id, age)", "Unknown column 'age' referenced in PRIMARY KEY for materialized view 'v'"),
        ("CREATE MATERIALIZED VIEW v AS SELECT * FROM counts WHERE id IS NOT NULL PRIMARY KEY (id)",
         "Materialized views are not supported on counter tables"),
        ("CREATE MATERIALIZED VIEW v AS SELECT * FROM st WHERE p IS NOT NULL AND c IS NOT NULL PRIMARY KEY (c, p)",
         "Cannot include static column 's' in materialized view 'v'"),
        ("CREATE MATERIALIZED VIEW v AS SELECT * FROM users WHERE tags IS NOT NULL AND id IS NOT NULL "
         "PRIMARY KEY (tags, id)", "Invalid non-frozen collection type 'set<text>' for PRIMARY KEY column 'tags'"),
        ("CREATE MATERIALIZED VIEW v AS SELECT * FROM users WHERE email IS NOT NULL AND id IS NOT NULL "
         "PRIMARY KEY (email, id) WITH default_time_to_live = 10", "Cannot set default_time_to_live for a materialized view"),
        ("CREATE MATERIALIZED VIEW users AS SELECT * FROM users WHERE email IS NOT NULL AND id IS NOT NULL "
         "PRIMARY KEY (email, id)", "a table with the same name already exists"),
        ("CREATE MATERIALIZED VIEW v2 AS SELECT * FROM users_by_email WHERE email IS NOT NULL AND id IS NOT NULL "
         "PRIMARY KEY (id, email)", "Materialized views cannot be created against other materialized views"),
        ("INSERT INTO users_by_email (email, id) VALUES ('x', 1)", "Cannot directly modify a materialized view"),
        ("DELETE FROM users_by_email WHERE email = 'x'", "Cannot directly modify a materialized view"),
        ("DROP TABLE users_by_email", "Cannot use DROP TABLE on a materialized view"),
        ("DROP TABLE users", "Cannot drop table when materialized views still depend on it"),
        ("ALTER TABLE users DROP age", "with materialized views"),
        ("ALTER TABLE users_by_email WITH comment = 'x'", "Cannot use ALTER TABLE on a materialized view"),
        ("ALTER MATERIALIZED VIEW users_by_email WITH default_time_to_live = 5", "default_time_to_live"),
        ("CREATE INDEX ON users_by_email (age)", "Secondary indexes are not supported on materialized views"),
        ("DROP MATERIALIZED VIEW nope", "Materialized view 'nope' doesn't exist"),
    ]
    for statement, message in cases:
        with pytest.raises(InvalidRequest) as e:
            s.execute(statement)
        assert message in str(e.value), (statement, str(e.value))
    with pytest.raises(InvalidRequest) as e:  # refused at PREPARE already
        s.prepare("UPDATE users_by_email SET age = ? WHERE email = ? AND id = ?")
    assert "Cannot directly modify a materialized view" in str(e.value)
    s.execute("DROP MATERIALIZED VIEW IF EXISTS nope")
    s.execute("CREATE MATERIALIZED VIEW IF NOT EXISTS users_by_email AS SELECT * FROM users "
              "WHERE email IS NOT NULL AND id IS NOT NULL PRIMARY KEY (email, id)")


def test_schema_tables_metadata_describe_and_drop(session, server):
    s = session
    ks = s.keyspace
    create_users(s)
    s.execute("ALTER MATERIALIZED VIEW users_by_email WITH comment = 'by email'")
    view = rows(s, "SELECT base_table_name, include_all_columns, where_clause, comment FROM system_schema.views "
                   "WHERE keyspace_name = %s AND view_name = 'users_by_email'", ks)
    assert view == [("users", True, "email IS NOT NULL AND id IS NOT NULL", "by email")]
    base_id = rows(s, "SELECT id FROM system_schema.tables WHERE keyspace_name = %s AND table_name = 'users'", ks)[0][0]
    assert rows(s, "SELECT base_table_id FROM system_schema.views WHERE keyspace_name = %s", ks) == [(base_id,)]
    assert rows(s, "SELECT table_name FROM system_schema.tables WHERE keyspace_name = %s", ks) == [("users",)]
    cols = rows(s, "SELECT column_name, kind, position FROM system_schema.columns "
                   "WHERE keyspace_name = %s AND table_name = 'users_by_email'", ks)
    assert sorted(cols) == [("age", "regular", -1), ("email", "partition_key", 0), ("id", "clustering", 0),
                            ("tags", "regular", -1)]
    # A column added to the base joins a SELECT * view.
    s.execute("ALTER TABLE users ADD nick text")
    s.execute("INSERT INTO users (id, email, nick) VALUES (9, 'n@x', 'nn')")
    assert rows(s, "SELECT nick FROM users_by_email WHERE email = 'n@x'") == [("nn",)]
    # The driver's metadata, and its export replayed in another keyspace.
    cluster = s.cluster
    cluster.refresh_schema_metadata()
    meta = cluster.metadata.keyspaces[ks]
    assert "users_by_email" in meta.views
    assert "users_by_email" in meta.tables["users"].views
    mv = meta.views["users_by_email"]
    assert mv.base_table_name == "users" and mv.include_all_columns
    assert [c.name for c in mv.partition_key] == ["email"]
    exported = meta.export_as_string()
    assert "CREATE MATERIALIZED VIEW %s.users_by_email AS" % ks in exported
    other = ks + "_copy"
    replay = exported.replace(ks + ".", other + ".").replace("KEYSPACE %s " % ks, "KEYSPACE %s " % other)
    for statement in [x.strip() for x in replay.split(";") if x.strip()]:
        s.execute(statement)
    s.execute("INSERT INTO %s.users (id, email) VALUES (1, 'copy@x')" % other)
    assert rows(s, "SELECT id FROM %s.users_by_email WHERE email = 'copy@x'" % other) == [(1,)]
    s.execute("DROP KEYSPACE %s" % other)
    described = rows(s, "DESCRIBE MATERIALIZED VIEW users_by_email")
    assert described[0][1] == "materialized_view"
    assert described[0][3].startswith("CREATE MATERIALIZED VIEW %s.users_by_email AS\n    SELECT *\n    FROM %s.users" % (ks, ks))
    kinds = [r[1] for r in rows(s, "DESCRIBE KEYSPACE %s" % ks)]
    assert kinds == ["keyspace", "table", "materialized_view"]
    # DROP: the view goes, the base stays and is writable and droppable.
    s.execute("DROP MATERIALIZED VIEW users_by_email")
    assert rows(s, "SELECT view_name FROM system_schema.views WHERE keyspace_name = %s", ks) == []
    with pytest.raises(InvalidRequest):
        s.execute("SELECT * FROM users_by_email")
    s.execute("INSERT INTO users (id, email) VALUES (5, 'e@x')")
    s.execute("DROP TABLE users")


def test_views_survive_a_restart(server):
    cluster, s = connect(server)
    s.execute("CREATE KEYSPACE mv_restart WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}")
    s.set_keyspace("mv_restart")
    create_users(s)
    s.execute("INSERT INTO users (id, email) VALUES (1, 'a@x')")
    cluster.shutdown()
    server.restart()
    cluster, s = connect(server)
    s.set_keyspace("mv_restart")
    s.execute("UPDATE users SET email = 'b@x' WHERE id = 1")
    assert rows(s, "SELECT email, id FROM users_by_email") == [("b@x", 1)]
    s.execute("DROP KEYSPACE mv_restart")
    cluster.shutdown()
