"""User-defined types (part of issue 12) through the DataStax Python driver:
CREATE / ALTER / DROP TYPE with Cassandra 4.1's messages, frozen and
non-frozen UDT columns, UDTs in collections and in a clustering key, field
selection, field updates and deletions, the driver's type metadata
(system_schema.types) and registered classes, JSON, and a restart."""
import json

import pytest
from cassandra import AlreadyExists, InvalidRequest

from conftest import connect, own_server


@pytest.fixture(scope="module")
def server():
    yield from own_server()


@pytest.fixture(scope="module")
def session(server):
    c, s = connect(server)
    s.execute("CREATE KEYSPACE ut WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}")
    s.execute("CREATE TYPE ut.address (street text, city text, zip int)")
    s.execute("CREATE TYPE ut.person (name text, home frozen<address>, phones list<text>)")
    s.execute("CREATE TABLE ut.users (id int PRIMARY KEY, addr frozen<address>, home address, "
              "others list<frozen<address>>, byname map<text, frozen<address>>, owner frozen<person>)")
    s.execute("CREATE TABLE ut.visits (k int, place frozen<address>, n int, PRIMARY KEY (k, place))")
    yield s
    c.shutdown()


def error_of(session, statement, exc=InvalidRequest):
    with pytest.raises(exc) as e:
        session.execute(statement)
    return str(e.value)


def test_the_driver_sees_the_types_in_its_schema_metadata(session):
    session.cluster.refresh_schema_metadata()
    types = session.cluster.metadata.keyspaces["ut"].user_types
    assert types["address"].field_names == ["street", "city", "zip"]
    assert types["address"].field_types == ["text", "text", "int"]
    # Fields hold collections and other types frozen.
    assert types["person"].field_types == ["text", "frozen<address>", "frozen<list<text>>"]
    columns = session.cluster.metadata.keyspaces["ut"].tables["users"].columns
    assert columns["addr"].cql_type == "frozen<address>" and columns["home"].cql_type == "address"
    rows = list(session.execute("SELECT type_name, field_names FROM system_schema.types WHERE keyspace_name = 'ut'"))
    assert [(r.type_name, r.field_names) for r in rows] == [("address", ["street", "city", "zip"]),
                                                           ("person", ["name", "home", "phones"])]


def test_literals_fill_frozen_and_non_frozen_columns_and_nested_ones(session):
    session.execute("INSERT INTO ut.users (id, addr, home, others, byname, owner) VALUES (1, "
                    "{street: '1 Main', city: 'Springfield', zip: 12345}, {street: 'a', city: 'b'}, "
                    "[{street: 'x', city: 'y', zip: 1}, {city: 'z'}], {'w': {zip: 7}}, "
                    "{name: 'Ann', home: {street: 's', city: 'c', zip: 2}, phones: ['1', '2']})")
    row = session.execute("SELECT * FROM ut.users WHERE id = 1").one()
    assert (row.addr.street, row.addr.city, row.addr.zip) == ("1 Main", "Springfield", 12345)
    assert (row.home.street, row.home.city, row.home.zip) == ("a", "b", None)
    assert [(o.street, o.city, o.zip) for o in row.others] == [("x", "y", 1), (None, "z", None)]
    assert row.byname["w"].zip == 7 and row.byname["w"].street is None
    assert row.owner.name == "Ann" and row.owner.home.city == "c" and row.owner.phones == ["1", "2"]


def test_field_selection_names_the_columns_as_cassandra(session):
    session.execute("INSERT INTO ut.users (id, addr, owner) VALUES (2, {street: 'Elm', zip: 5}, "
                    "{name: 'Bo', home: {city: 'Oslo'}})")
    rs = session.execute("SELECT addr.street, addr.zip, addr.city, owner.home.city AS hc FROM ut.users WHERE id = 2")
    assert rs.column_names == ["addr.street", "addr.zip", "addr.city", "hc"]
    assert tuple(rs.one()) == ("Elm", 5, None, "Oslo")
    assert "has no field nope" in error_of(session, "SELECT addr.nope FROM ut.users WHERE id = 2")
    assert "is not a user type" in error_of(session, "SELECT id.x FROM ut.users WHERE id = 2")


def test_fields_of_a_non_frozen_type_are_updated_and_deleted_one_by_one(session):
    session.execute("INSERT INTO ut.users (id, home) VALUES (3, {street: 's3', city: 'c3', zip: 3})")
    session.execute("UPDATE ut.users SET home.zip = 33 WHERE id = 3")
    prepared = session.prepare("UPDATE ut.users SET home.city = ? WHERE id = ?")
    session.execute(prepared, ("C3", 3))
    assert tuple(session.execute("SELECT home FROM ut.users WHERE id = 3").one().home) == ("s3", "C3", 33)
    session.execute("DELETE home.street FROM ut.users WHERE id = 3")
    assert tuple(session.execute("SELECT home FROM ut.users WHERE id = 3").one().home) == (None, "C3", 33)
    # A whole value replaces every field.
    session.execute("UPDATE ut.users SET home = {city: 'only'} WHERE id = 3")
    assert tuple(session.execute("SELECT home FROM ut.users WHERE id = 3").one().home) == (None, "only", None)
    # A field update on a row that has none creates it.
    session.execute("UPDATE ut.users SET home.zip = 4 WHERE id = 4")
    assert tuple(session.execute("SELECT home FROM ut.users WHERE id = 4").one().home) == (None, None, 4)


def test_conditions_on_fields_of_a_user_type(session):
    session.execute("INSERT INTO ut.users (id, home) VALUES (5, {street: 's5', city: 'c5', zip: 5})")
    applied = session.execute("UPDATE ut.users SET home.zip = 55 WHERE id = 5 IF home.city = 'c5'").one()
    assert applied[0] is True
    refused = session.execute("UPDATE ut.users SET home.zip = 0 WHERE id = 5 IF home.zip > 100").one()
    assert refused[0] is False and tuple(refused.home) == ("s5", "c5", 55)
    assert session.execute("DELETE home.street FROM ut.users WHERE id = 5 IF home.zip IN (1, 55)").one()[0] is True
    assert tuple(session.execute("SELECT home FROM ut.users WHERE id = 5").one().home) == (None, "c5", 55)
    assert "has no field nope" in error_of(session, "UPDATE ut.users SET home.zip = 1 WHERE id = 5 IF home.nope = 1")
    assert "Restrictions on fields of user type column home are not supported" in error_of(
        session, "SELECT * FROM ut.users WHERE home.city = 'c5' ALLOW FILTERING")


def test_what_cassandra_refuses_is_refused_with_its_message(session):
    assert "for frozen UDT column addr" in error_of(session, "UPDATE ut.users SET addr.zip = 1 WHERE id = 1")
    assert "UDT column home does not have a field named nope" in error_of(
        session, "UPDATE ut.users SET home.nope = 1 WHERE id = 1")
    assert "for non-UDT column others" in error_of(session, "UPDATE ut.users SET others.zip = 1 WHERE id = 1")
    assert "Unknown field 'country' in value of user defined type address" in error_of(
        session, "INSERT INTO ut.users (id, addr) VALUES (9, {country: 'NO'})")
    assert "Invalid STRING constant" in error_of(session, "INSERT INTO ut.users (id, addr) VALUES (9, {zip: 'x'})")
    with pytest.raises(AlreadyExists) as exists:  # Cassandra names the type in the error's table field
        session.execute("CREATE TYPE ut.address (a int)")
    assert (exists.value.keyspace, exists.value.table) == ("ut", "address")
    session.execute("CREATE TYPE IF NOT EXISTS ut.address (a int)")
    assert "Duplicate field name a in type d" in error_of(session, "CREATE TYPE ut.d (a int, a text)")
    assert "A user type cannot contain counters" in error_of(session, "CREATE TYPE ut.c (a counter)")
    assert "Unknown type ut.nope" in error_of(session, "CREATE TABLE ut.bad (k int PRIMARY KEY, v frozen<nope>)")
    assert "Unknown type ut.nope" in error_of(session, "CREATE TYPE ut.bad (v nope)")
    assert 'Invalid non-frozen user-defined type "address" for PRIMARY KEY component k' in error_of(
        session, "CREATE TABLE ut.bad (k address PRIMARY KEY)")
    assert "non-frozen user types are not allowed inside collections" in error_of(
        session, "CREATE TABLE ut.bad (k int PRIMARY KEY, v list<address>)")
    assert "Altering field types is no longer supported" in error_of(session, "ALTER TYPE ut.address ALTER zip TYPE text")
    assert "Unkown field nope in user type ut.address" in error_of(session, "ALTER TYPE ut.address RENAME nope TO x")
    assert "a field with name zip already exists" in error_of(session, "ALTER TYPE ut.address ADD zip int")
    assert "Type 'ut.nope' doesn't exist" in error_of(session, "DROP TYPE ut.nope")
    session.execute("DROP TYPE IF EXISTS ut.nope")


def test_prepared_statements_bind_tuples_and_registered_classes(server, session):
    class Address:
        def __init__(self, street=None, city=None, zip=None):
            self.street, self.city, self.zip = street, city, zip

    insert = session.prepare("INSERT INTO ut.users (id, addr, home) VALUES (?, ?, ?)")
    session.execute(insert, (10, ("Tuple St", "T", 10), ("h", None, 11)))
    row = session.execute("SELECT addr, home FROM ut.users WHERE id = 10").one()
    assert tuple(row.addr) == ("Tuple St", "T", 10) and tuple(row.home) == ("h", None, 11)
    # A registered class (a driver of its own, so the other tests keep named tuples).
    c, s = connect(server)
    try:
        c.register_user_type("ut", "address", Address)
        insert = s.prepare("INSERT INTO ut.users (id, addr, home) VALUES (?, ?, ?)")
        s.execute(insert, (11, Address("Class St", "K", 11), Address(city="kc")))
        # A simple statement: the driver writes the object as a {field: value} literal.
        s.execute("INSERT INTO ut.users (id, addr) VALUES (%s, %s)", (12, Address("Lit", "L", 12)))
        row = s.execute("SELECT addr, home FROM ut.users WHERE id = 11").one()
        assert isinstance(row.addr, Address) and (row.addr.street, row.addr.zip) == ("Class St", 11)
        assert row.home.city == "kc" and row.home.street is None
        lit = s.execute("SELECT addr FROM ut.users WHERE id = 12").one().addr
        assert (lit.street, lit.city, lit.zip) == ("Lit", "L", 12)
    finally:
        c.shutdown()


def test_a_frozen_type_orders_a_clustering_key_field_by_field(session):
    places = [("b", "x", 1), ("a", "z", 9), ("a", "y", 2), ("a", "y", 1), ("b", None, 0)]
    insert = session.prepare("INSERT INTO ut.visits (k, place, n) VALUES (1, ?, ?)")
    for i, p in enumerate(places):
        session.execute(insert, (p, i))
    got = [tuple(r.place) for r in session.execute("SELECT place FROM ut.visits WHERE k = 1")]
    # Field by field; a null field sorts first (Cassandra compares the serialized components).
    assert got == [("a", "y", 1), ("a", "y", 2), ("a", "z", 9), ("b", None, 0), ("b", "x", 1)]
    row = session.execute("SELECT n FROM ut.visits WHERE k = 1 AND place = {street: 'a', city: 'z', zip: 9}").one()
    assert row.n == 1
    sliced = session.execute("SELECT n FROM ut.visits WHERE k = 1 AND place > {street: 'a', city: 'z', zip: 9}")
    assert sorted(r.n for r in sliced) == [0, 4]


def test_json_of_user_types(session):
    session.execute("INSERT INTO ut.users JSON '{\"id\": 20, \"addr\": {\"street\": \"J\", \"zip\": 20}, "
                    "\"home\": {\"city\": \"HC\"}}'")
    row = session.execute("SELECT addr, home FROM ut.users WHERE id = 20").one()
    assert tuple(row.addr) == ("J", None, 20) and tuple(row.home) == (None, "HC", None)
    doc = json.loads(session.execute("SELECT JSON id, addr FROM ut.users WHERE id = 20").one()[0])
    assert doc == {"id": 20, "addr": {"street": "J", "city": None, "zip": 20}}
    assert session.execute("SELECT toJson(home) FROM ut.users WHERE id = 20").one()[0] == \
        '{"street": null, "city": "HC", "zip": null}'
    assert "Unknown field 'nope' in value of user defined type address" in error_of(
        session, "INSERT INTO ut.users JSON '{\"id\": 21, \"addr\": {\"nope\": 1}}'")


def test_alter_type_adds_and_renames_fields_of_stored_values(session):
    session.execute("INSERT INTO ut.users (id, addr, home) VALUES (30, {street: 'old', zip: 30}, {city: 'hold'})")
    session.execute("ALTER TYPE ut.address ADD country text")
    row = session.execute("SELECT addr, home FROM ut.users WHERE id = 30").one()
    assert (row.addr.street, row.addr.zip, row.addr.country) == ("old", 30, None)
    session.execute("UPDATE ut.users SET home.country = 'NO' WHERE id = 30")
    assert session.execute("SELECT home.country, home.city FROM ut.users WHERE id = 30").one() == ("NO", "hold")
    session.execute("ALTER TYPE ut.address RENAME zip TO postcode AND city TO town")
    assert tuple(session.execute("SELECT addr.postcode, home.town FROM ut.users WHERE id = 30").one()) == (30, "hold")
    session.cluster.refresh_schema_metadata()
    assert session.cluster.metadata.keyspaces["ut"].user_types["address"].field_names == \
        ["street", "town", "postcode", "country"]
    # The type nested in person changed too.
    assert session.execute("SELECT owner.home.town FROM ut.users WHERE id = 1").one()[0] == "c"


def test_types_survive_a_restart_and_drop_only_when_unused(server, session):
    server.restart()
    c, s = connect(server)
    try:
        row = s.execute("SELECT addr, home, owner FROM ut.users WHERE id = 30").one()
        assert (row.addr.street, row.addr.postcode, row.home.country) == ("old", 30, "NO")
        assert "Cannot drop user type ut.address as it is still used by table ut." in error_of(s, "DROP TYPE ut.address")
        s.execute("DROP TABLE ut.users")
        s.execute("DROP TABLE ut.visits")
        assert "Cannot drop user type ut.address as it is still used by user type person" in error_of(
            s, "DROP TYPE ut.address")
        s.execute("DROP TYPE ut.person")
        s.execute("DROP TYPE ut.address")
        assert list(s.execute("SELECT type_name FROM system_schema.types WHERE keyspace_name = 'ut'")) == []
    finally:
        c.shutdown()
