"""Lightweight transactions on one node (part of issue 12) through the
DataStax Python driver: INSERT ... IF NOT EXISTS, UPDATE / DELETE ... IF
EXISTS and IF conditions on columns, map entries and list elements, the
[applied] row as Cassandra 4.1 returns it, Cassandra's errors, and
linearizability under concurrent compare-and-set from several threads."""
import threading

import pytest
from cassandra import ConsistencyLevel, InvalidRequest
from cassandra.query import SimpleStatement

from tablet_queries import connect


@pytest.fixture(scope="module")
def sessions(server):
    """One driver per thread: each has its own connection, so the server
    runs their statements at the same time (one connection's requests run
    in order)."""
    made = [connect(server, "lwt") for _ in range(4)]
    yield [s for _, s in made]
    for c, _ in made:
        c.shutdown()


@pytest.fixture(scope="module")
def session(server):
    cluster, s = connect(server, "lwt")
    s.execute("CREATE TABLE lwt.users (id text PRIMARY KEY, email text, n int, m map<text, int>, l list<int>)")
    s.execute("CREATE TABLE lwt.events (p int, c int, s int STATIC, v text, PRIMARY KEY (p, c))")
    s.execute("CREATE TABLE lwt.counts (k int PRIMARY KEY, n counter)")
    yield s
    cluster.shutdown()


def test_insert_if_not_exists_applies_once_and_returns_the_existing_row(session):
    rs = session.execute("INSERT INTO lwt.users (id, email, n) VALUES ('ann', 'ann@x', 1) IF NOT EXISTS")
    assert rs.was_applied and rs.column_names == ["[applied]"]
    rs = session.execute("INSERT INTO lwt.users (id, email, n) VALUES ('ann', 'other@x', 2) IF NOT EXISTS")
    assert not rs.was_applied
    assert rs.column_names == ["[applied]", "id", "email", "l", "m", "n"]
    assert tuple(rs.one()) == (False, "ann", "ann@x", None, None, 1)
    assert session.execute("SELECT email, n FROM lwt.users WHERE id = 'ann'").one() == ("ann@x", 1)


def test_update_and_delete_conditions(session):
    session.execute("INSERT INTO lwt.users (id, email, n) VALUES ('bob', 'bob@x', 1)")
    rs = session.execute("UPDATE lwt.users SET n = 5 WHERE id = 'bob' IF n = 1")
    assert rs.was_applied
    rs = session.execute("UPDATE lwt.users SET n = 6 WHERE id = 'bob' IF n = 1")
    assert not rs.was_applied and rs.column_names == ["[applied]", "n"] and rs.one().n == 5
    assert session.execute("UPDATE lwt.users SET m = {'k': 1}, l = [7] WHERE id = 'bob' "
                           "IF n IN (4, 5) AND email != null").was_applied
    assert session.execute("UPDATE lwt.users SET n = 7 WHERE id = 'bob' IF m['k'] = 1 AND l[0] > 6").was_applied
    rs = session.execute("UPDATE lwt.users SET n = 8 WHERE id = 'bob' IF m['k'] = 2 AND email = 'bob@x'")
    assert not rs.was_applied and rs.column_names == ["[applied]", "email", "m"]
    for cond, applied in [("n >= 7", True), ("n > 7", False), ("n <= 7", True), ("n < 7", False), ("n != 7", False),
                          ("email = null", False), ("n IN (1, 2)", False)]:
        assert session.execute("UPDATE lwt.users SET email = 'bob@x' WHERE id = 'bob' IF %s" % cond).was_applied == applied, cond
    rs = session.execute("DELETE FROM lwt.users WHERE id = 'bob' IF n < 3")
    assert not rs.was_applied and rs.one().n == 7
    assert session.execute("DELETE email FROM lwt.users WHERE id = 'bob' IF EXISTS").was_applied
    assert session.execute("SELECT email FROM lwt.users WHERE id = 'bob'").one().email is None
    assert session.execute("DELETE FROM lwt.users WHERE id = 'bob' IF EXISTS").was_applied
    rs = session.execute("DELETE FROM lwt.users WHERE id = 'bob' IF EXISTS")
    assert not rs.was_applied and rs.column_names == ["[applied]"]


def test_missing_rows_and_null_conditions(session):
    rs = session.execute("UPDATE lwt.users SET n = 1 WHERE id = 'nobody' IF EXISTS")
    assert not rs.was_applied and rs.column_names == ["[applied]"]
    assert session.execute("SELECT * FROM lwt.users WHERE id = 'nobody'").one() is None
    rs = session.execute("UPDATE lwt.users SET n = 1 WHERE id = 'nobody' IF n = 3")
    assert not rs.was_applied and rs.column_names == ["[applied]"]
    assert session.execute("UPDATE lwt.users SET n = 1 WHERE id = 'carl' IF n = null").was_applied
    assert session.execute("SELECT n FROM lwt.users WHERE id = 'carl'").one().n == 1


def test_static_and_clustered_rows(session):
    assert session.execute("INSERT INTO lwt.events (p, c, v) VALUES (1, 1, 'a') IF NOT EXISTS").was_applied
    assert session.execute("INSERT INTO lwt.events (p, c, v) VALUES (1, 2, 'b') IF NOT EXISTS").was_applied
    assert not session.execute("INSERT INTO lwt.events (p, c, v) VALUES (1, 2, 'c') IF NOT EXISTS").was_applied
    assert session.execute("UPDATE lwt.events SET s = 10 WHERE p = 1 IF s = null").was_applied
    assert session.execute("UPDATE lwt.events SET v = 'z' WHERE p = 1 AND c = 1 IF s = 10 AND v = 'a'").was_applied
    assert [tuple(r) for r in session.execute("SELECT c, s, v FROM lwt.events WHERE p = 1")] == [(1, 10, "z"), (2, 10, "b")]


@pytest.mark.parametrize("statement, message", [
    ("UPDATE lwt.users SET n = 1 WHERE id IN ('a', 'b') IF n = 1", "IN on the partition key is not supported with conditional updates"),
    ("UPDATE lwt.users SET n = 1 WHERE id = 'a' IF id = 'a'", "PRIMARY KEY column 'id' cannot have IF conditions"),
    ("UPDATE lwt.users SET n = 1 WHERE id = 'a' IF n > null", 'Invalid comparison with null for operator ">"'),
    ("UPDATE lwt.counts SET n = n + 1 WHERE k = 1 IF EXISTS", "Conditional updates are not supported on counter tables"),
    ("DELETE FROM lwt.events WHERE p = 1 AND c > 0 IF EXISTS", "DELETE statements must restrict all PRIMARY KEY columns"),
    ("UPDATE lwt.events SET v = 'x' WHERE p = 1 AND c IN (1, 2) IF v = 'a'", "IN on the clustering key columns is not supported"),
    ("UPDATE lwt.users SET n = 1 WHERE id = 'a' IF nope = 1", "Undefined column name nope"),
])
def test_refused_as_cassandra_refuses(session, statement, message):
    with pytest.raises(InvalidRequest, match=message.replace("(", r"\(").replace(")", r"\)")):
        session.execute(statement)


def test_concurrent_compare_and_set_loses_no_increment(session, sessions):
    """Four threads add 1 to the same column 60 times each through
    read + UPDATE ... IF n = <read>, retrying when not applied: if the checks
    and writes were not linearizable, two threads would both apply on the
    same value and increments would be lost."""
    session.execute("INSERT INTO lwt.users (id, n) VALUES ('cas', 0)")
    read = SimpleStatement("SELECT n FROM lwt.users WHERE id = 'cas'", consistency_level=ConsistencyLevel.SERIAL)
    applied_counts, conflicts = [], []

    def worker(session):
        prepared = session.prepare("UPDATE lwt.users SET n = ? WHERE id = 'cas' IF n = ?")
        applied = conflict = 0
        while applied < 60:
            current = session.execute(read).one().n
            if session.execute(prepared, [current + 1, current]).was_applied:
                applied += 1
            else:
                conflict += 1
        applied_counts.append(applied)
        conflicts.append(conflict)

    threads = [threading.Thread(target=worker, args=(s,)) for s in sessions]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert sum(applied_counts) == 240
    assert session.execute("SELECT n FROM lwt.users WHERE id = 'cas'").one().n == 240
    print("240 increments applied, %d compare-and-set conflicts retried" % sum(conflicts))


def test_racing_inserts_if_not_exists_apply_exactly_once(session, sessions):
    winners = []

    def racer(i):
        prepared = sessions[i].prepare("INSERT INTO lwt.users (id, email) VALUES (?, ?) IF NOT EXISTS")
        for k in range(50):
            if sessions[i].execute(prepared, ["race%d" % k, "thread%d" % i]).was_applied:
                winners.append((k, i))

    threads = [threading.Thread(target=racer, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert sorted(k for k, _ in winners) == list(range(50))
    for k, i in winners:
        assert session.execute("SELECT email FROM lwt.users WHERE id = %s", ["race%d" % k]).one().email == "thread%d" % i


def test_conditional_batch_on_one_partition(session):
    session.execute("INSERT INTO lwt.events (p, c, s, v) VALUES (5, 1, 100, 'a')")
    rs = session.execute("BEGIN BATCH "
                         "UPDATE lwt.events SET s = 90 WHERE p = 5 IF s = 100; "
                         "INSERT INTO lwt.events (p, c, v) VALUES (5, 2, 'b') IF NOT EXISTS; "
                         "UPDATE lwt.events SET v = 'a2' WHERE p = 5 AND c = 1; "
                         "APPLY BATCH")
    assert rs.was_applied
    assert [tuple(r) for r in session.execute("SELECT c, s, v FROM lwt.events WHERE p = 5")] == [(1, 90, "a2"), (2, 90, "b")]
    # One condition fails: nothing of the batch is written, and the current values come back.
    rs = session.execute("BEGIN BATCH "
                         "UPDATE lwt.events SET s = 80 WHERE p = 5 IF s = 90; "
                         "UPDATE lwt.events SET v = 'x' WHERE p = 5 AND c = 2 IF v = 'nope'; "
                         "APPLY BATCH")
    rows = list(rs)  # a batch sent as text: was_applied wants one row, so the rows are read directly
    assert all(r[0] is False for r in rows) and len(rows) == 2
    assert rs.column_names[0] == "[applied]" and "v" in rs.column_names and "s" in rs.column_names
    assert any(r.v == "b" for r in rows)
    assert [tuple(r) for r in session.execute("SELECT c, s, v FROM lwt.events WHERE p = 5")] == [(1, 90, "a2"), (2, 90, "b")]


@pytest.mark.parametrize("statement, message", [
    ("BEGIN BATCH UPDATE lwt.events SET v = 'x' WHERE p = 1 AND c = 1 IF v = 'a'; "
     "UPDATE lwt.events SET v = 'y' WHERE p = 2 AND c = 1; APPLY BATCH", "Batch with conditions cannot span multiple partitions"),
    ("BEGIN BATCH UPDATE lwt.events SET v = 'x' WHERE p = 1 AND c = 1 IF v = 'a'; "
     "UPDATE lwt.users SET n = 1 WHERE id = 'q'; APPLY BATCH", "Batch with conditions cannot span multiple tables"),
    ("BEGIN BATCH USING TIMESTAMP 5 UPDATE lwt.events SET v = 'x' WHERE p = 1 AND c = 1 IF v = 'a'; APPLY BATCH",
     "Cannot provide custom timestamp for conditional BATCH"),
    ("UPDATE lwt.users USING TIMESTAMP 5 SET n = 1 WHERE id = 'a' IF n = 1", "Cannot provide custom timestamp for conditional updates"),
])
def test_conditional_batch_refusals(session, statement, message):
    with pytest.raises(InvalidRequest, match=message):
        session.execute(statement)


def test_conditional_batch_of_prepared_statements(session):
    from cassandra.query import BatchStatement
    batch = BatchStatement()
    batch.add(session.prepare("UPDATE lwt.events SET s = ? WHERE p = ? IF s = ?"), [70, 5, 90])
    batch.add(session.prepare("INSERT INTO lwt.events (p, c, v) VALUES (?, ?, ?) IF NOT EXISTS"), [5, 3, "c"])
    assert session.execute(batch).was_applied
    again = BatchStatement()
    again.add(session.prepare("INSERT INTO lwt.events (p, c, v) VALUES (?, ?, ?) IF NOT EXISTS"), [5, 3, "d"])
    rs = session.execute(again)
    assert not rs.was_applied and rs.one().v == "c"
    assert session.execute("SELECT s FROM lwt.events WHERE p = 5 LIMIT 1").one().s == 70
