"""DESCRIBE as a server-side statement (issue 12; Cassandra 4.0's rows)
through the DataStax Python driver: the listing forms, KEYSPACE / TABLE /
TYPE / INDEX / SCHEMA with create statements, a keyspace recreated from its
own DESCRIBE output (types, static and DESC-clustered tables, collections,
UDT columns, counters, Tessera's layout options, indexes) describing the
same, and Cassandra's messages for what does not exist."""

import pytest
from cassandra import InvalidRequest

from conftest import connect, own_server

SCHEMA = [
    "CREATE KEYSPACE shop WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}",
    "CREATE TYPE shop.address (street text, \"Zip\" int)",
    "CREATE TYPE shop.customer (name text, home frozen<address>, phones list<text>)",
    "CREATE TABLE shop.orders (customer text, placed timestamp, id uuid, total decimal, lines map<text, int>, "
    "ship_to frozen<address>, who customer, note text static, PRIMARY KEY (customer, placed, id)) "
    "WITH CLUSTERING ORDER BY (placed DESC, id ASC) AND comment = 'it''s orders' AND default_time_to_live = 86400",
    "CREATE TABLE shop.visits (day date, at timestamp, page text, PRIMARY KEY ((day), at)) "
    "WITH distribution = 'range' AND buckets = 8",
    "CREATE TABLE shop.stock (sku text PRIMARY KEY, n counter) WITH initial_tablets = 16",
    "CREATE TABLE shop.tagged (k int, c int, tags set<text>, v int, PRIMARY KEY ((k), c)) WITH partition_buckets = 4",
    "CREATE INDEX orders_by_total ON shop.orders (total)",
    "CREATE INDEX ON shop.orders (KEYS(lines))",
    "CREATE INDEX ON shop.tagged (tags)",
]


@pytest.fixture(scope="module")
def server():
    yield from own_server()


@pytest.fixture(scope="module")
def session(server):
    cluster, s = connect(server)
    for stmt in SCHEMA:
        s.execute(stmt)
    yield s
    cluster.shutdown()


def describe(session, what):
    return [tuple(r) for r in session.execute("DESCRIBE " + what)]


def test_listing_forms(server, session):
    keyspaces = describe(session, "KEYSPACES")
    assert ("shop", "keyspace", "shop") in keyspaces
    assert session.execute("DESCRIBE KEYSPACES").column_names == ["keyspace_name", "type", "name"]
    c, s = connect(server, "shop")
    try:
        assert describe(s, "TABLES") == [("shop", "table", t) for t in ("orders", "stock", "tagged", "visits")]
        assert describe(s, "TYPES") == [("shop", "type", "address"), ("shop", "type", "customer")]
    finally:
        c.shutdown()


def test_table_and_its_indexes(session):
    rows = session.execute("DESC TABLE shop.orders")
    assert rows.column_names == ["keyspace_name", "type", "name", "create_statement"]
    rows = [tuple(r) for r in rows]
    assert [(r[1], r[2]) for r in rows] == [("table", "orders"), ("index", "orders_by_total"),
                                            ("index", "orders_lines_idx")]
    table = rows[0][3]
    assert table.startswith("CREATE TABLE shop.orders (\n    customer text,\n")
    assert "    note text static,\n" in table and "    who customer,\n" in table
    assert "    ship_to frozen<address>,\n" in table
    assert "    PRIMARY KEY (customer, placed, id)\n) WITH CLUSTERING ORDER BY (placed DESC, id ASC)" in table
    assert "AND comment = 'it''s orders'" in table and "AND default_time_to_live = 86400" in table
    assert rows[2][3] == "CREATE INDEX orders_lines_idx ON shop.orders (keys(lines));"
    assert describe(session, "INDEX shop.orders_by_total") == [
        ("shop", "index", "orders_by_total", "CREATE INDEX orders_by_total ON shop.orders (total);")]
    assert describe(session, "TYPE shop.address") == [
        ("shop", "type", "address", 'CREATE TYPE shop.address (\n    street text,\n    "Zip" int\n);')]
    # A bare name is whatever it names.
    assert describe(session, "shop.stock")[0][1:3] == ("table", "stock")
    assert describe(session, "shop")[0][1:3] == ("keyspace", "shop")


def test_a_keyspace_recreated_from_its_description_describes_the_same(session):
    before = describe(session, "KEYSPACE shop")
    kinds = [(r[1], r[2]) for r in before]
    assert kinds[:3] == [("keyspace", "shop"), ("type", "address"), ("type", "customer")]
    assert ("table", "visits") in kinds and ("index", "tagged_tags_idx") in kinds
    # The internal tables of the indexes are not part of the schema.
    assert not any(name.endswith("_idx_index") or name.endswith("_total_index") for _, name in kinds)
    visits = next(r[3] for r in before if r[2] == "visits")
    assert "distribution = 'range'" in visits and "buckets = 8" in visits
    assert "initial_tablets = 16" in next(r[3] for r in before if r[2] == "stock")
    assert "partition_buckets = 4" in next(r[3] for r in before if r[2] == "tagged")
    session.execute("DROP KEYSPACE shop")
    for row in before:
        session.execute(row[3])
    assert describe(session, "KEYSPACE shop") == before
    assert describe(session, "ONLY KEYSPACE shop") == before[:1]
    schema = describe(session, "SCHEMA")
    assert [r for r in schema if r[0] == "shop"] == before
    assert not any(r[0].startswith("system") for r in schema)


def test_cassandras_messages(session):
    cases = [
        ("DESCRIBE KEYSPACE nowhere", "'nowhere' not found in keyspaces"),
        ("DESCRIBE TABLE shop.nothing", "'nothing' not found in keyspace 'shop'"),
        ("DESCRIBE TYPE shop.nothing", "User defined type 'nothing' not found in 'shop'"),
        ("DESCRIBE INDEX shop.nothing", "Index 'nothing' not found in 'shop'"),
        ("DESCRIBE shop.nothing", "'nothing' not found in keyspace 'shop'"),
        ("DESCRIBE TABLE orders", "No keyspace specified and no current keyspace"),
    ]
    for stmt, message in cases:
        with pytest.raises(InvalidRequest) as e:
            session.execute(stmt)
        assert message in str(e.value), (stmt, str(e.value))
