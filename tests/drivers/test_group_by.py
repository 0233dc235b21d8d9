"""GROUP BY (part of issue 12) through the DataStax Python driver against a real
`tessera server`: groups of the partition key and clustering prefixes with
aggregates, first-row selections, LIMIT, PER PARTITION LIMIT and ORDER BY counted
in groups, paging by groups at several page sizes, and Cassandra 4.1's error
messages. Each expected result is computed here from the rows the same server
returns without GROUP BY, in the same order.
"""
import pytest
from cassandra import InvalidRequest
from cassandra.query import SimpleStatement

from tablet_queries import connect, rows_of


@pytest.fixture(scope="module")
def session(server):
    cluster, s = connect(server, "gb")
    s.execute("CREATE TABLE gb.g (a int, b int, c int, d int, e int, s text static, PRIMARY KEY (a, b, c, d))")
    s.execute("CREATE TABLE gb.two (a int, b int, c int, v int, PRIMARY KEY ((a, b), c))")
    insert = s.prepare("INSERT INTO gb.g (a, b, c, d, e) VALUES (?, ?, ?, ?, ?)")
    for a in range(1, 6):
        for b in range(1, 5):
            for c in range(1, 4 if b % 2 else 2):
                for d in range(1, 3):
                    s.execute(insert, (a, b, c, d, (a * 31 + b * 7 + c * 3 + d) % 17))
        s.execute("INSERT INTO gb.g (a, s) VALUES (%s, %s)", (a, "s%d" % a))
    s.execute("INSERT INTO gb.g (a, s) VALUES (9, 'static only')")
    yield s
    cluster.shutdown()


def groups(rows, key):
    """Consecutive runs of rows with equal key(row), as lists."""
    out = []
    for r in rows:
        if out and key(out[-1][0]) == key(r):
            out[-1].append(r)
        else:
            out.append([r])
    return out


def limited(gs, limit=None, per_partition=None):
    out, seen = [], {}
    for g in gs:
        a = g[0][0]
        seen[a] = seen.get(a, 0) + 1
        if per_partition is not None and seen[a] > per_partition:
            continue
        out.append(g)
    return out[:limit] if limit is not None else out


def check(session, cql, expected):
    for page_size in (1, 2, 7, 5000):
        got = rows_of(session, cql, page_size)
        assert got == expected, (cql, page_size, got[:5], expected[:5])
    return len(expected)


def test_groups_with_aggregates_limits_and_paging(session):
    raw = rows_of(session, "SELECT a, b, c, d, e FROM gb.g", 5000)  # the server's order, static-only row included
    checked = 0
    by_ab = groups(raw, lambda r: (r[0], r[1]))
    checked += check(session, "SELECT a, b, count(*), max(e), sum(e) FROM gb.g GROUP BY a, b",
                     [(g[0][0], g[0][1], len(g) if g[0][1] is not None else 1, max_e(g), sum_e(g)) for g in by_ab])
    by_a = groups(raw, lambda r: r[0])
    checked += check(session, "SELECT a, count(e), min(d) FROM gb.g GROUP BY a",
                     [(g[0][0], sum(r[4] is not None for r in g), min_d(g)) for g in by_a])
    checked += check(session, "SELECT a, b, count(*) FROM gb.g GROUP BY a, b LIMIT 5",
                     [(g[0][0], g[0][1], count_rows(g)) for g in limited(by_ab, limit=5)])
    checked += check(session, "SELECT a, b, count(*) FROM gb.g GROUP BY a, b PER PARTITION LIMIT 2",
                     [(g[0][0], g[0][1], count_rows(g)) for g in limited(by_ab, per_partition=2)])
    checked += check(session, "SELECT a, b, count(*) FROM gb.g GROUP BY a, b PER PARTITION LIMIT 2 LIMIT 3",
                     [(g[0][0], g[0][1], count_rows(g)) for g in limited(by_ab, per_partition=2, limit=3)])

    one = rows_of(session, "SELECT a, b, c, d, e FROM gb.g WHERE a = 3", 5000)
    # `a` is restricted by =: GROUP BY may start at b.
    checked += check(session, "SELECT b, c, count(*), max(e) FROM gb.g WHERE a = 3 GROUP BY b, c",
                     [(g[0][1], g[0][2], len(g), max_e(g)) for g in groups(one, lambda r: (r[1], r[2]))])
    desc = rows_of(session, "SELECT a, b, c, d, e FROM gb.g WHERE a = 3 ORDER BY b DESC", 5000)
    checked += check(session, "SELECT b, sum(e) FROM gb.g WHERE a = 3 GROUP BY b ORDER BY b DESC",
                     [(g[0][1], sum_e(g)) for g in groups(desc, lambda r: r[1])])
    # No aggregate: the first row of each group.
    checked += check(session, "SELECT a, b, c, d, e FROM gb.g WHERE a = 2 GROUP BY b, c",
                     [tuple(g[0]) for g in groups(rows_of(session, "SELECT a, b, c, d, e FROM gb.g WHERE a = 2", 5000),
                                                  lambda r: (r[1], r[2]))])
    two = rows_of(session, "SELECT a, b, c, d, e FROM gb.g WHERE a IN (1, 4) AND b >= 2", 5000)
    checked += check(session, "SELECT a, b, avg(e) FROM gb.g WHERE a IN (1, 4) AND b >= 2 GROUP BY a, b",
                     [(g[0][0], g[0][1], sum_e(g) // len(g)) for g in groups(two, lambda r: (r[0], r[1]))])
    statics = rows_of(session, "SELECT a, s FROM gb.g", 5000)
    checked += check(session, "SELECT DISTINCT a, s FROM gb.g GROUP BY a",
                     [tuple(g[0]) for g in groups(statics, lambda r: r[0])])
    print("GROUP BY: %d groups compared at page sizes 1, 2, 7 and 5000" % checked)
    assert checked > 50
    # A plain column beside an aggregate, without GROUP BY: the first row's value (Cassandra 2.2+).
    assert rows_of(session, "SELECT a, count(*) FROM gb.g WHERE a = 5", 5000) == [(5, len(
        rows_of(session, "SELECT * FROM gb.g WHERE a = 5", 5000)))]
    # A page holds groups: a 2-group page of a 3-group result has a paging state.
    first = session.execute(SimpleStatement("SELECT b, count(*) FROM gb.g WHERE a = 1 GROUP BY b", fetch_size=2))
    assert len(first.current_rows) == 2 and first.has_more_pages


def count_rows(g):
    return len(g) if g[0][1] is not None else 1


def max_e(g):
    values = [r[4] for r in g if r[4] is not None]
    return max(values) if values else None


def sum_e(g):
    return sum(r[4] for r in g if r[4] is not None)


def min_d(g):
    values = [r[3] for r in g if r[3] is not None]
    return min(values) if values else None


@pytest.mark.parametrize("cql, message", [
    ("SELECT a, count(*) FROM gb.g GROUP BY a, e",
     "Group by is currently only supported on the columns of the PRIMARY KEY, got e"),
    ("SELECT count(*) FROM gb.g WHERE a = 1 GROUP BY c",
     "Group by currently only support groups of columns following their declared order in the PRIMARY KEY"),
    ("SELECT count(*) FROM gb.g GROUP BY a, c, b",
     "Group by currently only support groups of columns following their declared order in the PRIMARY KEY"),
    ("SELECT count(*) FROM gb.g WHERE a = 1 AND b > 1 GROUP BY c",
     "Group by currently only support groups of columns following their declared order in the PRIMARY KEY"),
    ("SELECT count(*) FROM gb.g GROUP BY a, b, c, d, e",
     "Group by is currently only supported on the columns of the PRIMARY KEY, got e"),
    ("SELECT count(*) FROM gb.two GROUP BY a", "Group by is not supported on only a part of the partition key"),
    ("SELECT DISTINCT a FROM gb.g GROUP BY a, b",
     "Grouping on clustering columns is not allowed for SELECT DISTINCT queries"),
    ("SELECT count(*) FROM gb.g GROUP BY zz", "Undefined column name zz"),
    ("SELECT count(*) FROM system.local GROUP BY key", "GROUP BY is not supported on system tables"),
])
def test_group_by_errors_are_cassandras(session, cql, message):
    with pytest.raises(InvalidRequest) as e:
        session.execute(cql)
    assert message in str(e.value) and "code=2200" in str(e.value), str(e.value)
