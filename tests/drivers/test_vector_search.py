"""Vector search (issue 31, item 3) through the DataStax Python driver:
Cassandra 5.0's vector<float, n> type (3.25 has no VectorType, so values come
back as their bytes and bind as bytes), CREATE CUSTOM INDEX ... USING
'StorageAttachedIndex' / ScyllaDB's 'vector_index', ORDER BY ... ANN OF with
a literal and a bound vector against an exact search, the similarity
functions, a schema exported by the driver replayed, and Cassandra's
messages for what it refuses."""

import math
import random
import struct

import pytest
from cassandra import InvalidRequest

from conftest import connect, own_server

DIM = 16


@pytest.fixture(scope="module")
def server():
    yield from own_server()


@pytest.fixture(scope="module")
def session(server):
    cluster, s = connect(server)
    s.execute("CREATE KEYSPACE vs WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}")
    s.execute(f"CREATE TABLE vs.docs (id int PRIMARY KEY, title text, embedding vector<float, {DIM}>)")
    s.execute("CREATE CUSTOM INDEX docs_ann ON vs.docs (embedding) USING 'StorageAttachedIndex' "
              "WITH OPTIONS = {'similarity_function': 'cosine'}")
    yield s
    cluster.shutdown()


def literal(v):
    return "[" + ", ".join(repr(float(x)) for x in v) + "]"


def packed(v):
    return struct.pack(f">{len(v)}f", *v)


def cosine(a, b):
    dot = sum(x * y for x, y in zip(a, b))
    return (1 + dot / math.sqrt(sum(x * x for x in a) * sum(y * y for y in b))) / 2


def test_ann_of_agrees_with_an_exact_search(session):
    rng = random.Random(5)
    stored = {}
    insert = session.prepare("INSERT INTO vs.docs (id, title, embedding) VALUES (?, ?, ?)")
    for i in range(2000):
        v = [rng.gauss(0, 1) for _ in range(DIM)]
        stored[i] = list(struct.unpack(f">{DIM}f", packed(v)))
        session.execute(insert, (i, f"doc {i}", packed(v)))
    hits = 0
    prepared = session.prepare("SELECT id FROM vs.docs ORDER BY embedding ANN OF ? LIMIT 10")
    for n in range(30):
        q = [rng.gauss(0, 1) for _ in range(DIM)]
        exact = sorted(stored, key=lambda i: -cosine(q, stored[i]))[:10]
        if n % 2:  # a bound vector (its bytes: the driver has no vector type)
            rows = list(session.execute(prepared, (packed(q),)))
        else:
            rows = list(session.execute(f"SELECT id FROM vs.docs ORDER BY embedding ANN OF {literal(q)} LIMIT 10"))
        assert len(rows) == 10
        hits += len({r.id for r in rows} & set(exact))
    assert hits / 300 >= 0.95, f"recall@10 {hits / 300}"
    # A bound query vector, and the similarity the rows were ranked by.
    q = stored[42]
    ranked = session.prepare("SELECT id, similarity_cosine(embedding, " + literal(q) + ") AS s FROM vs.docs "
                             "ORDER BY embedding ANN OF ? LIMIT 3")
    rows = list(session.execute(ranked, (packed(q),)))
    assert rows[0].id == 42 and abs(rows[0].s - 1.0) < 1e-6
    assert rows[0].s >= rows[1].s >= rows[2].s
    assert session.execute("SELECT embedding FROM vs.docs WHERE id = 42").one().embedding == packed(q)


def test_writes_move_rows_in_and_out_of_the_answers(session):
    q = [1.0] + [0.0] * (DIM - 1)
    ann = f"SELECT id FROM vs.docs ORDER BY embedding ANN OF {literal(q)} LIMIT 1"
    session.execute(f"INSERT INTO vs.docs (id, embedding) VALUES (-1, {literal(q)})")
    assert session.execute(ann).one().id == -1
    session.execute("DELETE embedding FROM vs.docs WHERE id = -1")
    assert session.execute(ann).one().id != -1
    session.execute(f"UPDATE vs.docs SET embedding = {literal(q)} WHERE id = -2")
    assert session.execute(ann).one().id == -2
    session.execute("DELETE FROM vs.docs WHERE id = -2")
    assert session.execute(ann).one().id not in (-1, -2)


def test_refusals_in_cassandras_words(session):
    cases = [
        (f"SELECT id FROM vs.docs ORDER BY embedding ANN OF {literal([1] * DIM)}",
         "Use of ANN OF in an ORDER BY clause requires a LIMIT that is not greater than 1000. LIMIT was NO LIMIT"),
        (f"SELECT id FROM vs.docs ORDER BY embedding ANN OF {literal([1] * DIM)} LIMIT 5000",
         "Use of ANN OF in an ORDER BY clause requires a LIMIT that is not greater than 1000. LIMIT was 5000"),
        (f"SELECT id FROM vs.docs WHERE title = 'x' ORDER BY embedding ANN OF {literal([1] * DIM)} LIMIT 1 ALLOW FILTERING",
         "ANN ordering by vector requires all restricted column(s) to be indexed"),
        ("SELECT id FROM vs.docs ORDER BY embedding ANN OF [1, 2] LIMIT 1",
         f"expected {DIM} elements, but given 2"),
        ("CREATE TABLE vs.bad (k int PRIMARY KEY, v vector<float, 0>)", "vectors may only have positive dimensions; given 0"),
        ("CREATE CUSTOM INDEX ON vs.docs (title) USING 'StorageAttachedIndex'", "vector<float, n>"),
    ]
    for statement, message in cases:
        with pytest.raises(InvalidRequest, match=message.replace("(", r"\(").replace(")", r"\)")):
            session.execute(statement)


def test_a_schema_exported_by_the_driver_replays(server, session):
    session.execute("CREATE TABLE vs.notes (owner text, at int, body text, e vector<float, 3>, PRIMARY KEY (owner, at))")
    session.execute("CREATE CUSTOM INDEX notes_e ON vs.notes (e) USING 'vector_index' "
                    "WITH OPTIONS = {'similarity_function': 'euclidean'}")
    cluster, s = connect(server)
    try:
        cluster.refresh_schema_metadata()
        exported = cluster.metadata.keyspaces["vs"].tables["notes"].export_as_string()
        assert "e vector<float, 3>" in exported
        assert "CREATE CUSTOM INDEX notes_e ON vs.notes (e) USING 'vector_index'" in exported
        s.execute("CREATE KEYSPACE vs2 WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}")
        for statement in exported.replace("vs.", "vs2.").split(";"):
            if statement.strip():
                s.execute(statement)
        for owner, at, e in [("a", 1, [0, 0, 0]), ("a", 2, [5, 5, 5]), ("b", 1, [1, 1, 1])]:
            s.execute(f"INSERT INTO vs2.notes (owner, at, e) VALUES ('{owner}', {at}, {literal(e)})")
        rows = list(s.execute("SELECT owner, at FROM vs2.notes ORDER BY e ANN OF [1, 1, 0.9] LIMIT 2"))
        assert [(r.owner, r.at) for r in rows] == [("b", 1), ("a", 1)]
        rows = list(s.execute("SELECT at FROM vs2.notes WHERE owner = 'a' ORDER BY e ANN OF [4, 4, 4] LIMIT 1"))
        assert [r.at for r in rows] == [2]
    finally:
        cluster.shutdown()
