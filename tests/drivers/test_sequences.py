"""Issue 13's bit-reversed sequences through the DataStax Python driver
against a real `tessera server`:

- a sequence used by 4 writers (4 connections) across 2 server restarts
  yields no duplicate, and its values spread over the tablets of a range table
  (max/mean writes per tablet below 1.5);
- the skip range, nextval in UPDATE, DROP SEQUENCE and the errors.
"""
import threading

import pytest
from cassandra import InvalidRequest
from cassandra.cluster import Cluster

WRITERS = 4
PER_WRITER = 400


def connect(server):
    c = Cluster(["127.0.0.1"], port=server.port, connect_timeout=10, control_connection_timeout=10)
    return c, c.connect()


def tablets(session, table):
    return list(session.execute("SELECT * FROM system.tablets WHERE keyspace_name = 'sq' AND table_name = %s",
                                (table,)))


def write_phase(server, phase):
    """4 writers, each on its own connection, insert PER_WRITER rows keyed by nextval."""
    errors = []

    def writer(w):
        cluster, session = connect(server)
        try:
            insert = session.prepare("INSERT INTO sq.orders (id, writer, n) VALUES (nextval(sq.order_id), ?, ?)")
            for n in range(PER_WRITER):
                session.execute(insert, (w, phase * PER_WRITER + n))
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)
        finally:
            cluster.shutdown()

    threads = [threading.Thread(target=writer, args=(w,)) for w in range(WRITERS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert not errors, errors


def admin_split(server, tablet_id):
    status, body = server.admin("POST", "/tablets/split?keyspace=sq&table=orders&tablet=%d" % tablet_id)
    assert status == 200, body


def test_sequence_is_unique_across_writers_and_restarts_and_spreads_over_tablets(make_server):
    server = make_server()
    cluster, session = connect(server)
    session.execute("CREATE KEYSPACE sq WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}")
    session.execute("CREATE TABLE sq.orders (id bigint PRIMARY KEY, writer int, n int) WITH distribution = 'range'")
    session.execute("CREATE SEQUENCE sq.order_id WITH kind = 'bit_reversed_positive'")
    cluster.shutdown()

    write_phase(server, 0)
    # Four tablets, split at the medians of what the sequence wrote so far.
    cluster, session = connect(server)
    admin_split(server, tablets(session, "orders")[0].tablet_id)
    for t in tablets(session, "orders"):
        admin_split(server, t.tablet_id)
    assert len(tablets(session, "orders")) == 4
    cluster.shutdown()

    server.restart()
    write_phase(server, 1)
    server.restart()
    cluster, session = connect(server)
    before = {t.tablet_id: t.writes for t in tablets(session, "orders")}
    write_phase(server, 2)
    writes = [t.writes - before.get(t.tablet_id, 0) for t in tablets(session, "orders")]
    mean = sum(writes) / len(writes)
    print("sequence: writes per tablet after the second restart %s, max/mean %.2f" % (writes, max(writes) / mean))
    assert sum(writes) == WRITERS * PER_WRITER
    assert max(writes) / mean < 1.5, writes

    rows = list(session.execute("SELECT id, writer, n FROM sq.orders"))
    ids = [r.id for r in rows]
    total = 3 * WRITERS * PER_WRITER
    assert len(ids) == total and len(set(ids)) == total  # a duplicate id would have overwritten a row
    assert all(i > 0 for i in ids)
    assert sorted((r.writer, r.n) for r in rows) == sorted(
        (w, p * PER_WRITER + n) for p in range(3) for w in range(WRITERS) for n in range(PER_WRITER))
    cluster.shutdown()


def test_sequence_options_update_drop_and_errors(server):
    cluster, session = connect(server)
    try:
        session.execute("CREATE KEYSPACE IF NOT EXISTS sq2 WITH replication = "
                        "{'class': 'SimpleStrategy', 'replication_factor': 1}")
        session.execute("CREATE TABLE sq2.t (k int PRIMARY KEY, v bigint)")
        # Skip the lower half of the positive values: every value is then at least 2^62.
        session.execute("CREATE SEQUENCE sq2.high WITH kind = 'bit_reversed_positive' "
                        "AND skip_range_min = 0 AND skip_range_max = 4611686018427387903")
        session.execute("CREATE SEQUENCE IF NOT EXISTS sq2.high")
        for k in range(50):
            session.execute("INSERT INTO sq2.t (k, v) VALUES (%s, nextval(sq2.high))", (k,))
        session.execute("UPDATE sq2.t SET v = nextval(sq2.high) WHERE k = 50")
        session.execute("USE sq2")
        session.execute("INSERT INTO t (k, v) VALUES (51, nextval(high))")
        values = [r.v for r in session.execute("SELECT v FROM sq2.t")]
        assert len(values) == 52 and len(set(values)) == 52
        assert all(v >= 1 << 62 for v in values), values

        with pytest.raises(InvalidRequest, match="already exists"):
            session.execute("CREATE SEQUENCE sq2.high")
        with pytest.raises(InvalidRequest, match="Unsupported sequence kind 'bit_reversed'"):
            session.execute("CREATE SEQUENCE sq2.bad WITH kind = 'bit_reversed'")
        with pytest.raises(InvalidRequest, match="cannot assign result of function nextval"):
            session.execute("INSERT INTO sq2.t (k, v) VALUES (nextval(sq2.high), 1)")
        session.execute("DROP SEQUENCE sq2.high")
        with pytest.raises(InvalidRequest, match="Sequence sq2.high doesn't exist"):
            session.execute("INSERT INTO sq2.t (k, v) VALUES (1, nextval(sq2.high))")
        session.execute("DROP SEQUENCE IF EXISTS sq2.high")
    finally:
        cluster.shutdown()
