"""Element and slice selection of sets and maps (part of issue 12; Cassandra
4.0's CASSANDRA-7396): m['k'], s['e'], m['a'..'c'], s[..x], s[x..] in
selections, on frozen and non-frozen collections, with Cassandra's names and
refusals."""
import pytest
from cassandra import InvalidRequest

from tablet_queries import connect


@pytest.fixture(scope="module")
def session(server):
    cluster, s = connect(server, "cs")
    s.execute("CREATE TABLE cs.t (k int PRIMARY KEY, m map<text, int>, s set<int>, fm frozen<map<int, text>>, "
              "l list<int>, v int)")
    s.execute("INSERT INTO cs.t (k, m, s, fm, l, v) VALUES (1, {'a': 1, 'b': 2, 'c': 3, 'd': 4}, {1, 5, 10, 20}, "
              "{1: 'one', 2: 'two', 3: 'three'}, [7, 8], 0)")
    yield s
    cluster.shutdown()


def test_elements_of_maps_and_sets(session):
    rs = session.execute("SELECT m['b'], m['zz'], s[5], s[6], fm[3] FROM cs.t WHERE k = 1")
    assert rs.column_names == ["m['b']", "m['zz']", "s[5]", "s[6]", "fm[3]"]
    assert tuple(rs.one()) == (2, None, 5, None, "three")


def test_slices_are_inclusive_and_may_be_open(session):
    row = session.execute("SELECT m['b'..'c'], m[..'b'], m['c'..], s[2..10], s[..1], s[21..], fm[2..] AS tail "
                          "FROM cs.t WHERE k = 1").one()
    assert row[0] == {"b": 2, "c": 3} and row[1] == {"a": 1, "b": 2} and row[2] == {"c": 3, "d": 4}
    assert row[3] == {5, 10} and row[4] == {1} and row[5] is None
    assert row.tail == {2: "two", 3: "three"}


def test_selections_of_a_missing_collection_are_null(session):
    session.execute("INSERT INTO cs.t (k, v) VALUES (2, 1)")
    assert tuple(session.execute("SELECT m['a'], s[1..2] FROM cs.t WHERE k = 2").one()) == (None, None)


def test_what_cassandra_refuses(session):
    def error(cql):
        with pytest.raises(InvalidRequest) as e:
            session.execute(cql)
        return str(e.value)

    assert "Element selection is only allowed on sets and maps, but l is a list" in error("SELECT l[0] FROM cs.t")
    assert "v is of type int is not a collection" in error("SELECT v[0] FROM cs.t")
    assert "Invalid STRING constant (a) for \"s\" of type int" in error("SELECT s['a'] FROM cs.t")
