"""Issue 28, item 1: on a cluster node, requests that still wait for replicas
on their thread (here: reads the failpoint replica.read.held.t pauses in the
coordinator's store) hold threads of their own (--waiting-request-threads),
never the ones that read connections and run the requests answered from
replica answers.

Two nodes, RF 2, one connection of the Python driver to node 1, which runs
with 2 request threads and 4 waiting ones. 24 unprepared reads of held.t are
sent first and paused, more than all the node's threads together; then 100
prepared QUORUM writes and reads of another table, already run once (so the
node knows they answer from replica answers), go through the same connection.
Every one of them completes while the 24 are still held; then the hold is
released and the 24 complete too. Before this change the 24 held every one of
the node's 8 request threads and the others queued behind them.

Among the held requests are 4 EXECUTEs of a prepared `SET l[0] = ?`, which
writes from replica answers but reads the list first on its thread: they too
wait on the waiting threads (classified as answering later, they held both
request threads before, and the prepared pairs timed out)."""
import os
import time
import urllib.request

import pytest
from cassandra import ConsistencyLevel
from cassandra.query import SimpleStatement

from local_cluster import node_session, running_cluster, wait_until

BINARY = os.environ["TESSERA_BINARY"]
Q = ConsistencyLevel.QUORUM
FAILPOINT = "replica.read.held.t"


@pytest.fixture(scope="module")
def cluster():
    yield from running_cluster(BINARY, 2, ["--request-threads=2", "--waiting-request-threads=4"])


def test_requests_that_answer_from_replicas_pass_requests_held_on_their_threads(cluster):
    driver, session = node_session(cluster, 1, request_timeout=60)
    held = []
    try:
        session.execute("CREATE KEYSPACE held WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 2}")
        session.execute("CREATE TABLE held.t (k int PRIMARY KEY, v int, l list<int>)")
        session.execute("CREATE TABLE held.fast (k int PRIMARY KEY, v int)")
        session.execute("INSERT INTO held.t (k, v, l) VALUES (0, 0, [0])")
        set_element = session.prepare("UPDATE held.t SET l[0] = ? WHERE k = 0")
        set_element.consistency_level = Q
        session.execute(set_element, (1,))  # its first run: it reads before it writes
        insert = session.prepare("INSERT INTO held.fast (k, v) VALUES (?, ?)")
        insert.consistency_level = Q
        select = session.prepare("SELECT v FROM held.fast WHERE k = ?")
        select.consistency_level = Q
        for k in range(3):  # their first runs: the node learns they answer from replica answers
            session.execute(insert, (k, k))
            assert session.execute(select, (k,)).one().v == k

        status, body = cluster.admin_post(1, "/failpoints?name=%s&action=pause" % FAILPOINT)
        assert status == 200, body
        try:
            read_held = SimpleStatement("SELECT v FROM held.t WHERE k = 0", consistency_level=Q)
            answered = []  # appended to by the driver's thread as held reads complete
            held = [session.execute_async(read_held) for _ in range(24)]
            held += [session.execute_async(set_element, (2,)) for _ in range(4)]
            for f in held:
                f.add_callbacks(lambda rows: answered.append(True), lambda e: answered.append(e))

            wait_until(lambda: FAILPOINT in admin_get(cluster, "/failpoints"), 30, "a read held at " + FAILPOINT)

            latencies = []
            for k in range(100, 150):
                began = time.monotonic()
                session.execute(insert, (k, k * 3), timeout=20)
                assert session.execute(select, (k,), timeout=20).one().v == k * 3
                latencies.append(time.monotonic() - began)
            still_held = len(held) - len(answered)
            latencies.sort()
            print("while %d reads were held: 50 prepared write+read pairs, median %.1f ms, slowest %.1f ms"
                  % (still_held, latencies[len(latencies) // 2] * 1000, latencies[-1] * 1000))
            assert still_held == len(held), "the held reads were let go before the others ran"
        finally:
            status, body = cluster.admin_post(1, "/failpoints?name=%s&action=off" % FAILPOINT)
            assert status == 200, body
        for f in held[:24]:
            assert f.result().one().v == 0
        for f in held[24:]:
            f.result()
        assert session.execute(SimpleStatement("SELECT l FROM held.t WHERE k = 0", consistency_level=Q)).one().l == [2]
    finally:
        driver.shutdown()


def admin_get(cluster, path):
    """The text of a GET of `path` from node 1's admin port."""
    url = "http://%s:%d%s" % (cluster.address(1), cluster.admin_port, path)
    with urllib.request.urlopen(url, timeout=10) as r:
        return r.read().decode()
