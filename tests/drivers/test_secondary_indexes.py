"""Secondary indexes (part of issue 12) through the DataStax Python driver:
CREATE INDEX on regular, static, clustering and partition-key columns and on
KEYS / VALUES / ENTRIES / FULL of collections; queries by =, CONTAINS,
CONTAINS KEY and m[k] = v, alone and with other restrictions, paged; the
index kept right on updates, deletes (row, range, partition), TTL expiry and
TRUNCATE; the build for rows already there; system_schema.indexes and the
driver's index metadata; Cassandra 4.1's messages; a restart."""
import time

import pytest
from cassandra import InvalidRequest
from cassandra.query import SimpleStatement

from conftest import connect, own_server

FILTERING = ("Cannot execute this query as it might involve data filtering and thus may have unpredictable "
             "performance. If you want to execute this query despite the performance unpredictability, use "
             "ALLOW FILTERING")


@pytest.fixture(scope="module")
def server():
    yield from own_server()


@pytest.fixture(scope="module")
def session(server):
    c, s = connect(server)
    s.execute("CREATE KEYSPACE si WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}")
    s.set_keyspace("si")
    yield s
    c.shutdown()


def rows(session, query, *args, fetch_size=None):
    st = SimpleStatement(query, fetch_size=fetch_size)
    return list(session.execute(st, args if args else None))


def wait_for(predicate, timeout=30.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.1)
    return predicate()


def test_regular_column_index_follows_updates_and_deletes(session):
    session.execute("CREATE TABLE users (id int PRIMARY KEY, email text, country text)")
    session.execute("CREATE INDEX ON users (country)")
    for i in range(40):
        session.execute("INSERT INTO users (id, email, country) VALUES (%s, %s, %s)",
                        (i, f"u{i}@x", ["fr", "de", "jp", "br"][i % 4]))
    fr = rows(session, "SELECT id FROM users WHERE country = 'fr'")
    assert sorted(r.id for r in fr) == list(range(0, 40, 4))
    # An update moves the row from one entry to another.
    session.execute("UPDATE users SET country = 'de' WHERE id = 0")
    assert 0 not in {r.id for r in rows(session, "SELECT id FROM users WHERE country = 'fr'")}
    assert 0 in {r.id for r in rows(session, "SELECT id FROM users WHERE country = 'de'")}
    # Deleting the cell, then the row, removes the entry.
    session.execute("DELETE country FROM users WHERE id = 4")
    session.execute("DELETE FROM users WHERE id = 8")
    left = sorted(r.id for r in rows(session, "SELECT id FROM users WHERE country = 'fr'"))
    assert left == [i for i in range(0, 40, 4) if i not in (0, 4, 8)]
    # The index partition holds no stale entry (read it directly).
    entries = rows(session, "SELECT id FROM users_country_idx_index WHERE \"$value\" = 'fr'")
    assert sorted(r.id for r in entries) == left
    # Unknown values give nothing; the index name is Cassandra's default.
    assert rows(session, "SELECT id FROM users WHERE country = 'zz'") == []
    names = [r.index_name for r in rows(session, "SELECT index_name FROM system_schema.indexes WHERE "
                                                  "keyspace_name = 'si' AND table_name = 'users'")]
    assert names == ["users_country_idx"]


def test_paging_through_an_index_returns_each_row_once(session):
    session.execute("CREATE TABLE events (day text, seq int, kind text, PRIMARY KEY (day, seq))")
    session.execute("CREATE INDEX by_kind ON events (kind)")
    expected = set()
    for d in range(5):
        for seq in range(60):
            kind = "click" if seq % 3 == 0 else "view"
            session.execute("INSERT INTO events (day, seq, kind) VALUES (%s, %s, %s)", (f"d{d}", seq, kind))
            if kind == "click":
                expected.add((f"d{d}", seq))
    got = [(r.day, r.seq) for r in rows(session, "SELECT day, seq FROM events WHERE kind = 'click'", fetch_size=7)]
    assert len(got) == len(expected) == 100
    assert set(got) == expected
    # Within one partition, rows come in clustering order.
    d0 = [seq for day, seq in got if day == "d0"]
    assert d0 == sorted(d0)
    # LIMIT and PER PARTITION LIMIT hold across pages.
    assert len(rows(session, "SELECT * FROM events WHERE kind = 'click' LIMIT 13", fetch_size=5)) == 13
    per = rows(session, "SELECT day FROM events WHERE kind = 'click' PER PARTITION LIMIT 2", fetch_size=3)
    assert sorted(r.day for r in per) == sorted([f"d{d}" for d in range(5)] * 2)
    # count(*) through the index.
    assert rows(session, "SELECT count(*) FROM events WHERE kind = 'view'")[0].count == 200


def test_restrictions_beside_the_index_follow_cassandras_rules(session):
    session.execute("CREATE TABLE posts (author text, at int, tag text, score int, PRIMARY KEY (author, at))")
    session.execute("CREATE INDEX ON posts (tag)")
    for a in ("ann", "bob"):
        for at in range(10):
            session.execute("INSERT INTO posts (author, at, tag, score) VALUES (%s, %s, %s, %s)",
                            (a, at, "db" if at % 2 else "os", at))
    # With the partition key: no ALLOW FILTERING needed.
    r = rows(session, "SELECT at FROM posts WHERE author = 'ann' AND tag = 'db'")
    assert [x.at for x in r] == [1, 3, 5, 7, 9]
    # Another regular column needs ALLOW FILTERING, as in Cassandra.
    with pytest.raises(InvalidRequest, match="ALLOW FILTERING"):
        session.execute("SELECT at FROM posts WHERE tag = 'db' AND score > 4")
    r = rows(session, "SELECT author, at FROM posts WHERE tag = 'db' AND score > 4 ALLOW FILTERING")
    assert sorted((x.author, x.at) for x in r) == [(a, at) for a in ("ann", "bob") for at in (5, 7, 9)]
    # An unindexed column alone still needs ALLOW FILTERING.
    with pytest.raises(InvalidRequest) as e:
        session.execute("SELECT * FROM posts WHERE score = 3")
    assert FILTERING in str(e.value)
    with pytest.raises(InvalidRequest, match="ORDER BY with 2ndary indexes is not supported"):
        session.execute("SELECT * FROM posts WHERE tag = 'db' ORDER BY at DESC")


def test_key_and_static_column_indexes(session):
    session.execute("CREATE TABLE readings (site text, region text, sensor int, at int, owner text static, v double, "
                    "PRIMARY KEY ((site, region), sensor, at))")
    session.execute("CREATE INDEX ON readings (region)")   # a partition-key component
    session.execute("CREATE INDEX ON readings (sensor)")   # a clustering column
    session.execute("CREATE INDEX ON readings (owner)")    # a static column
    for s in range(4):
        session.execute("UPDATE readings SET owner = %s WHERE site = %s AND region = %s",
                        ("alice" if s < 2 else "bob", f"s{s}", "eu" if s % 2 else "us"))
        for sensor in range(3):
            for at in range(2):
                session.execute("INSERT INTO readings (site, region, sensor, at, v) VALUES (%s, %s, %s, %s, %s)",
                                (f"s{s}", "eu" if s % 2 else "us", sensor, at, float(at)))
    eu = rows(session, "SELECT site, sensor, at FROM readings WHERE region = 'eu'")
    assert sorted({r.site for r in eu}) == ["s1", "s3"] and len(eu) == 12
    by_sensor = rows(session, "SELECT site, at FROM readings WHERE sensor = 2")
    assert len(by_sensor) == 8
    alice = rows(session, "SELECT site, sensor, at, owner FROM readings WHERE owner = 'alice'")
    assert sorted({r.site for r in alice}) == ["s0", "s1"] and len(alice) == 12
    # A static change moves the whole partition.
    session.execute("UPDATE readings SET owner = 'bob' WHERE site = 's0' AND region = 'us'")
    assert sorted({r.site for r in rows(session, "SELECT site FROM readings WHERE owner = 'alice'")}) == ["s1"]
    # A range deletion takes its rows' clustering entries with it.
    session.execute("DELETE FROM readings WHERE site = 's1' AND region = 'eu' AND sensor >= 1")
    assert len(rows(session, "SELECT * FROM readings WHERE sensor = 2")) == 6
    # A partition deletion takes all of them.
    session.execute("DELETE FROM readings WHERE site = 's3' AND region = 'eu'")
    assert {r.site for r in rows(session, "SELECT site FROM readings WHERE region = 'eu'")} == {"s1"}


def test_collection_indexes(session):
    session.execute("CREATE TABLE items (id int PRIMARY KEY, tags set<text>, attrs map<text, text>, "
                    "sizes list<int>, dims frozen<list<int>>)")
    session.execute("CREATE INDEX ON items (tags)")              # values(tags)
    session.execute("CREATE INDEX ON items (KEYS(attrs))")
    session.execute("CREATE INDEX attr_values ON items (VALUES(attrs))")
    session.execute("CREATE INDEX ON items (ENTRIES(attrs))")
    session.execute("CREATE INDEX ON items (sizes)")
    session.execute("CREATE INDEX ON items (FULL(dims))")
    for i in range(12):
        session.execute("INSERT INTO items (id, tags, attrs, sizes, dims) VALUES (%s, %s, %s, %s, %s)",
                        (i, {f"t{i % 3}", "all"}, {"color": ["red", "blue"][i % 2], f"k{i}": "x"},
                         [i, i + 1], [i % 2, 7]))
    assert sorted(r.id for r in rows(session, "SELECT id FROM items WHERE tags CONTAINS 't1'")) == [1, 4, 7, 10]
    assert len(rows(session, "SELECT id FROM items WHERE tags CONTAINS 'all'")) == 12
    assert [r.id for r in rows(session, "SELECT id FROM items WHERE attrs CONTAINS KEY 'k5'")] == [5]
    assert len(rows(session, "SELECT id FROM items WHERE attrs CONTAINS 'red'")) == 6
    assert sorted(r.id for r in rows(session, "SELECT id FROM items WHERE attrs['color'] = 'blue'")) == \
        [1, 3, 5, 7, 9, 11]
    assert sorted(r.id for r in rows(session, "SELECT id FROM items WHERE sizes CONTAINS 5")) == [4, 5]
    assert len(rows(session, "SELECT id FROM items WHERE dims = [1, 7]")) == 6
    # Element updates keep the index right.
    session.execute("UPDATE items SET tags = tags - {'t1'} WHERE id = 1")
    session.execute("UPDATE items SET attrs['color'] = 'red' WHERE id = 3")
    session.execute("DELETE attrs['k5'] FROM items WHERE id = 5")
    assert sorted(r.id for r in rows(session, "SELECT id FROM items WHERE tags CONTAINS 't1'")) == [4, 7, 10]
    assert 3 not in {r.id for r in rows(session, "SELECT id FROM items WHERE attrs['color'] = 'blue'")}
    assert rows(session, "SELECT id FROM items WHERE attrs CONTAINS KEY 'k5'") == []
    # The driver reads the index metadata from system_schema.indexes.
    meta = session.cluster.metadata
    session.cluster.refresh_table_metadata("si", "items")
    indexes = meta.keyspaces["si"].tables["items"].indexes
    assert {name: idx.index_options["target"] for name, idx in indexes.items()} == {
        "items_tags_idx": "values(tags)", "items_attrs_idx": "keys(attrs)", "attr_values": "values(attrs)",
        "items_attrs_idx_1": "entries(attrs)", "items_sizes_idx": "values(sizes)", "items_dims_idx": "full(dims)"}
    assert "CREATE INDEX items_dims_idx ON si.items (full(dims))" in indexes["items_dims_idx"].as_cql_query()


def test_ttl_expiry_and_truncate_empty_the_index(session):
    session.execute("CREATE TABLE sessions (id int PRIMARY KEY, user text)")
    session.execute("CREATE INDEX ON sessions (user)")
    session.execute("INSERT INTO sessions (id, user) VALUES (1, 'ann') USING TTL 2")
    session.execute("INSERT INTO sessions (id, user) VALUES (2, 'ann')")
    assert len(rows(session, "SELECT id FROM sessions WHERE user = 'ann'")) == 2
    entries = rows(session, "SELECT id FROM sessions_user_idx_index WHERE \"$value\" = 'ann'")
    assert [r.id for r in entries] == [1, 2]
    assert wait_for(lambda: [r.id for r in rows(session, "SELECT id FROM sessions WHERE user = 'ann'")] == [2], 10)
    entries = rows(session, "SELECT id FROM sessions_user_idx_index WHERE \"$value\" = 'ann'")
    assert [r.id for r in entries] == [2]  # the expired entry is gone from the index itself
    session.execute("TRUNCATE sessions")
    assert rows(session, "SELECT id FROM sessions WHERE user = 'ann'") == []
    assert rows(session, "SELECT id FROM sessions_user_idx_index WHERE \"$value\" = 'ann'") == []


def test_an_index_is_built_for_existing_rows(session):
    session.execute("CREATE TABLE logs (host text, at int, level text, PRIMARY KEY (host, at))")
    for h in range(10):
        for at in range(100):
            session.execute("INSERT INTO logs (host, at, level) VALUES (%s, %s, %s)",
                            (f"h{h}", at, "error" if at % 10 == 0 else "info"))
    session.execute("CREATE INDEX ON logs (level)")
    assert wait_for(lambda: len(rows(session, "SELECT host FROM logs WHERE level = 'error'", fetch_size=50)) == 100)
    assert len(rows(session, "SELECT host FROM logs WHERE level = 'info'", fetch_size=200)) == 900


def test_ddl_messages_and_drop(session):
    session.execute("CREATE TABLE t (a int, b int, c int, v int, m map<int, int>, f frozen<set<int>>, d duration, "
                    "u frozen<list<int>>, PRIMARY KEY ((a), b, c))")
    session.execute("CREATE TABLE single (k int PRIMARY KEY, v int)")
    cases = [
        ("CREATE INDEX ON single (k)", "Cannot create secondary index on the only partition key column k"),
        ("CREATE INDEX ON t (d)", "Secondary indexes are not supported on duration columns"),
        ("CREATE INDEX ON t (KEYS(v))", "Cannot create keys() index on v. Non-collection columns only support "
                                        "simple indexes"),
        ("CREATE INDEX ON t (VALUES(f))", "Cannot create values() index on frozen column f. Frozen collections are "
                                          "immutable and must be fully indexed by using the 'full(f)' modifier"),
        ("CREATE INDEX ON t (FULL(m))", "full() indexes can only be created on frozen collections"),
        ("CREATE INDEX ON t (nope)", "Undefined column name nope"),
        ("CREATE INDEX ON nothere (v)", "Table 'si.nothere' doesn't exist"),
        ("CREATE CUSTOM INDEX ON t (v) USING 'org.apache.cassandra.index.sasi.SASIIndex'",
         "Custom index class 'org.apache.cassandra.index.sasi.SASIIndex' is not supported"),
        ("DROP INDEX nothere", "Index 'nothere' could not be found in any of the tables of keyspace 'si'"),
    ]
    for stmt, message in cases:
        with pytest.raises(InvalidRequest) as e:
            session.execute(stmt)
        assert message in str(e.value), (stmt, str(e.value))
    session.execute("CREATE INDEX iv ON t (v)")
    with pytest.raises(InvalidRequest, match="Index 'iv' already exists"):
        session.execute("CREATE INDEX iv ON t (c)")
    with pytest.raises(InvalidRequest, match="Index other is a duplicate of existing index iv"):
        session.execute("CREATE INDEX other ON t (v)")
    session.execute("CREATE INDEX IF NOT EXISTS iv ON t (v)")
    with pytest.raises(InvalidRequest, match=r"Cannot drop column v because it has dependent secondary indexes \(iv\)"):
        session.execute("ALTER TABLE t DROP v")
    session.execute("INSERT INTO t (a, b, c, v) VALUES (1, 1, 1, 5)")
    assert len(rows(session, "SELECT * FROM t WHERE v = 5")) == 1
    session.execute("DROP INDEX iv")
    session.execute("DROP INDEX IF EXISTS iv")
    with pytest.raises(InvalidRequest, match="ALLOW FILTERING"):
        session.execute("SELECT * FROM t WHERE v = 5")
    session.execute("ALTER TABLE t DROP v")
    # The backing table is internal: not in system_schema.tables, not droppable as a table.
    tables = {r.table_name for r in rows(session, "SELECT table_name FROM system_schema.tables WHERE keyspace_name = 'si'")}
    assert "users_country_idx_index" not in tables and "users" in tables
    with pytest.raises(InvalidRequest, match="use DROP INDEX"):
        session.execute("DROP TABLE users_country_idx_index")


def test_indexes_survive_a_restart(server, session):
    session.execute("CREATE TABLE kept (id int PRIMARY KEY, g text)")
    session.execute("CREATE INDEX ON kept (g)")
    for i in range(20):
        session.execute("INSERT INTO kept (id, g) VALUES (%s, %s)", (i, f"g{i % 2}"))
    server.stop()
    server.start()
    c, s = connect(server)
    try:
        s.set_keyspace("si")
        assert sorted(r.id for r in rows(s, "SELECT id FROM kept WHERE g = 'g1'")) == list(range(1, 20, 2))
        s.execute("UPDATE kept SET g = 'g0' WHERE id = 1")
        assert len(rows(s, "SELECT id FROM kept WHERE g = 'g1'")) == 9
    finally:
        c.shutdown()
