"""Issue 28, must-show 2: the requests of one connection run concurrently and
are answered by stream id as they complete (native protocol v4 §2.3).

One connection, 200 requests in flight: the first is a read that the failpoint
replica.read.ks.slow holds in the node's store for 2 s; the other 199 (reads
of another table) complete meanwhile (37-44 ms for the slowest here; the test
bounds it far below the hold, not at a timed target), and their replies
overtake the held one's. Timed on a raw protocol connection (the driver's own
event loop would be measured too); then the same through the Python driver's
one connection, by reply order."""
import struct
import threading
import time

import pytest

from conftest import connect, own_server
from raw_protocol import open_ready, query, read_frame


@pytest.fixture(scope="module")
def server():
    yield from own_server()


def paused(server):
    status, body = server.admin("GET", "/failpoints")
    assert status == 200, body
    return body


def set_failpoint(server, action):
    status, body = server.admin("POST", "/failpoints?name=replica.read.ks.slow&action=" + action)
    assert status == 200, body


def wait_until_held(server):
    deadline = time.monotonic() + 10
    while True:
        status, body = server.admin("GET", "/failpoints")
        assert status == 200, body
        if "replica.read.ks.slow" in body:
            return
        assert time.monotonic() < deadline, "the held read never reached its failpoint"
        time.sleep(0.01)


@pytest.fixture(scope="module")
def tables(server):
    cluster, session = connect(server)
    try:
        session.execute("CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}")
        session.execute("CREATE TABLE ks.slow (k int PRIMARY KEY, v int)")
        session.execute("CREATE TABLE ks.fast (k int PRIMARY KEY, v int)")
        session.execute("INSERT INTO ks.slow (k, v) VALUES (0, 0)")
        insert = session.prepare("INSERT INTO ks.fast (k, v) VALUES (?, ?)")
        for k in range(199):
            session.execute(insert, (k, k * 7))
    finally:
        cluster.shutdown()


def test_199_requests_answered_while_one_is_held_on_their_connection(server, tables):
    s = open_ready(server.port)
    try:
        set_failpoint(server, "pause")
        s.sendall(query("SELECT v FROM ks.slow WHERE k = 0", 1))
        held_at = time.monotonic()
        wait_until_held(server)
        sent = time.monotonic()
        s.sendall(b"".join(query("SELECT v FROM ks.fast WHERE k = %d" % k, 2 + k) for k in range(199)))
        arrivals = []  # (stream, seconds after the 199 were sent)
        for _ in range(199):
            stream, opcode, body = read_frame(s)
            arrivals.append((stream, time.monotonic() - sent))
            assert opcode == 0x08, (stream, opcode, body[:200])  # RESULT
            k = stream - 2
            assert body.endswith(struct.pack(">i", 4) + struct.pack(">i", k * 7)), (stream, body)
        assert sorted(stream for stream, _ in arrivals) == list(range(2, 201))  # the held one is not among them
        slowest = max(seconds for _, seconds in arrivals)
        # They were answered while stream 1 was still held: that is the property. How fast is
        # the machine's (37-44 ms measured for issue 28's "under 100 ms", bench/RESULTS.md);
        # a loaded CI machine gets a bound far below the 2 s hold instead of a timed target.
        assert slowest < 1.0, "the slowest of the 199 took %.3f s while one request was held" % slowest
        time.sleep(max(0.0, held_at + 2 - time.monotonic()))  # hold the first request 2 s in all
        set_failpoint(server, "off")
        stream, opcode, body = read_frame(s)
        held = time.monotonic() - held_at
        assert (stream, opcode) == (1, 0x08) and held >= 2
        assert body.endswith(struct.pack(">i", 4) + struct.pack(">i", 0))
        print("one connection: 199 answered in at most %.1f ms while stream 1 was held; stream 1 after %.2f s"
              % (slowest * 1000, held))
    finally:
        set_failpoint(server, "off")
        s.close()


def test_the_python_drivers_connection_is_not_held_either(server, tables):
    cluster, session = connect(server)
    try:
        # The Python driver speaks v4 over one connection per node: every request below shares it.
        state = session.get_pool_state()
        assert [p["open_count"] for p in state.values()] == [1], state
        select = session.prepare("SELECT v FROM ks.fast WHERE k = ?")
        order = []
        lock = threading.Lock()
        all_done = threading.Event()

        def track(name, future):
            def finished(result):
                with lock:
                    order.append((name, result))
                    if len(order) == 200:
                        all_done.set()
            future.add_callbacks(lambda rows: finished(list(rows)), lambda exc: finished(exc))

        set_failpoint(server, "pause")
        track("slow", session.execute_async("SELECT v FROM ks.slow WHERE k = 0", timeout=30))
        wait_until_held(server)
        for k in range(199):
            track(k, session.execute_async(select, (k,), timeout=30))
        deadline = time.monotonic() + 20
        while True:
            with lock:
                if len(order) >= 199:
                    break
            assert time.monotonic() < deadline, "the 199 did not complete while one was held"
            time.sleep(0.01)
        set_failpoint(server, "off")
        assert all_done.wait(20)
        assert order[-1][0] == "slow" and [r.v for r in order[-1][1]] == [0]
        for k, rows in order[:-1]:
            assert [r.v for r in rows] == [k * 7], (k, rows)
    finally:
        set_failpoint(server, "off")
        cluster.shutdown()
