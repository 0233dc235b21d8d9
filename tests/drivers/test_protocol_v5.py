"""Issue 31, item 6: CQL native protocol v5 (native_protocol_v5.spec) through
the Python driver, which asks for v5 first: the checksummed framing after
STARTUP (envelopes larger than one frame included, both ways), the Prepared
result's metadata id, keyspace per query and per PREPARE, Read_failure's
reason map, events, tracing and the duration type over v5, keyspace system
at connect, and v4 still served beside it. Raw sockets check what a driver
cannot show: a corrupted frame ends the connection with a protocol error,
and a v4 envelope on a v5 connection is refused."""
import socket
import struct
import time
import zlib

import pytest
from cassandra import ReadFailure
from cassandra.cluster import Cluster
from cassandra.query import SimpleStatement
from cassandra.util import Duration

from conftest import own_server
import raw_protocol


@pytest.fixture(scope="module")
def server():
    # A low tombstone failure threshold, to see Read_failure's reason map.
    yield from own_server("--guardrail-tombstone-fail", "50")


def cluster_of(server, **options):
    return Cluster(["127.0.0.1"], port=server.port, connect_timeout=10, control_connection_timeout=10, **options)


@pytest.fixture(scope="module")
def session(server):
    cluster = cluster_of(server)
    session = cluster.connect()
    session.execute("CREATE KEYSPACE v5 WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}")
    session.execute("CREATE TABLE v5.t (k int, c int, v text, PRIMARY KEY (k, c))")
    yield session
    cluster.shutdown()


def test_the_driver_negotiates_v5_by_default_and_v4_still_works(server, session):
    assert session.cluster.protocol_version == 5
    for version in (4, 5):
        cluster = cluster_of(server, protocol_version=version)
        s = cluster.connect("v5")
        s.execute("INSERT INTO t (k, c, v) VALUES (%s, 0, 'x')", (version,))
        assert s.execute("SELECT v FROM t WHERE k = %s", (version,)).one().v == "x"
        assert cluster.protocol_version == version
        cluster.shutdown()


def test_envelopes_larger_than_a_frame_travel_both_ways(session):
    # 300,000 bytes: three frames of at most 131,071 bytes each way.
    big = "".join(chr(ord("a") + i % 26) for i in range(300000))
    insert = session.prepare("INSERT INTO v5.t (k, c, v) VALUES (?, ?, ?)")
    session.execute(insert, (10, 0, big))
    assert session.execute("SELECT v FROM v5.t WHERE k = 10 AND c = 0").one().v == big
    # Many small replies in flight at once share the connection's frames.
    futures = [session.execute_async(insert, (11, i, "r%d" % i)) for i in range(300)]
    for f in futures:
        f.result()
    rows = list(session.execute(SimpleStatement("SELECT c, v FROM v5.t WHERE k = 11", fetch_size=50)))
    assert [(r.c, r.v) for r in rows] == [(i, "r%d" % i) for i in range(300)]


def test_prepared_results_carry_a_metadata_id_that_follows_the_columns(session):
    session.execute("CREATE TABLE v5.m (k int PRIMARY KEY, a int)")
    session.execute("INSERT INTO v5.m (k, a) VALUES (1, 2)")
    select = session.prepare("SELECT * FROM v5.m WHERE k = ?")
    first_id = select.result_metadata_id
    assert first_id and len(first_id) == 16
    assert list(session.execute(select, (1,)).one()) == [1, 2]
    # A column added: the statement answers the new columns (the driver
    # prepares it again), under another metadata id.
    session.execute("ALTER TABLE v5.m ADD b text")
    session.execute("INSERT INTO v5.m (k, a, b) VALUES (1, 2, 'three')")
    row = session.execute(select, (1,)).one()
    assert row._fields == ("k", "a", "b") and list(row) == [1, 2, "three"]
    again = session.prepare("SELECT * FROM v5.m WHERE k = ?")
    assert again.result_metadata_id != first_id and len(again.result_metadata_id) == 16


def test_a_query_or_prepare_may_name_its_keyspace(session):
    session.execute("INSERT INTO v5.t (k, c, v) VALUES (20, 1, 'ks')")
    assert session.keyspace is None
    stmt = SimpleStatement("SELECT v FROM t WHERE k = 20", keyspace="v5")
    assert session.execute(stmt).one().v == "ks"
    prepared = session.prepare("SELECT v FROM t WHERE k = ?", keyspace="v5")
    assert session.execute(prepared, (20,)).one().v == "ks"
    # Without it, the table is not found in no keyspace, as before.
    with pytest.raises(Exception, match="[Kk]eyspace"):
        session.execute("SELECT v FROM t WHERE k = 20")


def test_read_failure_names_the_failed_replica_in_its_reason_map(server, session):
    session.execute("CREATE TABLE v5.tomb (k int, c int, v int, PRIMARY KEY (k, c))")
    delete = session.prepare("DELETE FROM v5.tomb WHERE k = 1 AND c = ?")
    for c in range(80):
        session.execute(delete, (c,))
    with pytest.raises(ReadFailure) as failure:
        session.execute("SELECT * FROM v5.tomb WHERE k = 1")
    assert failure.value.error_code_map == {"127.0.0.1": 0x0001}  # READ_TOO_MANY_TOMBSTONES
    assert failure.value.failures == 1


def test_events_tracing_and_durations_over_v5(server, session):
    # The control connection's SCHEMA_CHANGE event travels framed too.
    other = cluster_of(server)
    other_session = other.connect()
    other_session.execute("CREATE TABLE v5.d (k int PRIMARY KEY, d duration)")
    deadline = time.monotonic() + 20
    while "d" not in session.cluster.metadata.keyspaces["v5"].tables and time.monotonic() < deadline:
        time.sleep(0.05)  # the event, then the driver's refresh: no refresh asked here
    assert "d" in session.cluster.metadata.keyspaces["v5"].tables
    other.shutdown()
    d = Duration(months=14, days=3, nanoseconds=3_600_000_000_123)
    session.execute("INSERT INTO v5.d (k, d) VALUES (1, %s)", (d,))
    result = session.execute("SELECT d FROM v5.d WHERE k = 1", trace=True)
    assert result.one().d == d
    trace = result.get_query_trace(max_wait_sec=10)
    assert trace.coordinator == "127.0.0.1" and trace.events


def test_keyspace_system_at_connect(server):
    cluster = cluster_of(server)
    s = cluster.connect("system")
    assert cluster.protocol_version == 5
    assert s.execute("SELECT key FROM local").one().key == "local"
    cluster.shutdown()


# --- the wire itself -------------------------------------------------------

def v5_frame(payload, corrupt_payload=False):
    """An uncompressed v5 frame (§2.1), built here from the spec, as the test's own oracle."""
    header = len(payload) | (1 << 17)  # self-contained
    crc = 0x875060
    h = header
    for _ in range(3):
        crc ^= (h & 0xFF) << 16
        h >>= 8
        for _ in range(8):
            crc <<= 1
            if crc & 0x1000000:
                crc ^= 0x1974F0B
    body_crc = zlib.crc32(payload, zlib.crc32(b"\xfa\x2d\x55\xca"))
    if corrupt_payload:
        body_crc ^= 1
    return header.to_bytes(3, "little") + (crc & 0xFFFFFF).to_bytes(3, "little") + payload + \
        body_crc.to_bytes(4, "little")


def envelope(version, opcode, body, stream):
    return struct.pack(">BBhBI", version, 0, stream, opcode, len(body)) + body


def read_v5_frame(sock):
    def exactly(n):
        data = b""
        while len(data) < n:
            chunk = sock.recv(n - len(data))
            if not chunk:
                return None
            data += chunk
        return data
    head = exactly(6)
    if head is None:
        return None
    length = int.from_bytes(head[:3], "little") & 0x1FFFF
    payload = exactly(length + 4)
    return payload[:length]


def open_v5(server):
    s = socket.create_connection(("127.0.0.1", server.port), timeout=10)
    startup = struct.pack(">H", 1) + struct.pack(">H", 11) + b"CQL_VERSION" + struct.pack(">H", 5) + b"3.0.0"
    s.sendall(envelope(5, 0x01, startup, 0))  # unframed, as §2.3.1 says
    reply = raw_protocol.read_frame(s)
    assert reply is not None and reply[1] == 0x02  # READY, unframed
    return s


def query_body(text):
    q = text.encode()
    return struct.pack(">I", len(q)) + q + struct.pack(">HI", 0x0001, 0)  # ONE, [int] flags 0


def test_a_framed_query_by_hand_is_answered_in_a_frame(server, session):
    s = open_v5(server)
    s.sendall(v5_frame(envelope(5, 0x07, query_body("SELECT key FROM system.local"), 3)))
    payload = read_v5_frame(s)
    version, _, stream, opcode, length = struct.unpack(">BBhBI", payload[:9])
    assert (version, stream, opcode, length) == (0x85, 3, 0x08, len(payload) - 9)
    s.close()


def test_a_corrupted_frame_ends_the_connection_with_a_protocol_error(server, session):
    s = open_v5(server)
    s.sendall(v5_frame(envelope(5, 0x07, query_body("SELECT key FROM system.local"), 1), corrupt_payload=True))
    payload = read_v5_frame(s)
    _, _, _, opcode, _ = struct.unpack(">BBhBI", payload[:9])
    code = struct.unpack(">i", payload[9:13])[0]
    assert opcode == 0x00 and code == 0x000A and b"CRC mismatch" in payload
    assert read_v5_frame(s) is None  # closed
    s.close()
    # The server serves on.
    assert session.execute("SELECT key FROM system.local").one().key == "local"


def test_a_v4_envelope_on_a_v5_connection_is_refused(server):
    s = open_v5(server)
    s.sendall(v5_frame(envelope(4, 0x07, query_body("SELECT key FROM system.local")[:-4] + b"\x00", 2)))
    payload = read_v5_frame(s)
    _, _, stream, opcode, _ = struct.unpack(">BBhBI", payload[:9])
    assert opcode == 0x00 and stream == 2
    assert b"Invalid message version. Got 4" in payload
    s.close()


def test_a_cluster_over_v5_routes_by_token_and_signals_a_node_going_down():
    """Two nodes at RF 2 through a token-aware v5 driver that knows both:
    system.peers, QUORUM writes and reads through either coordinator, and a
    STATUS_CHANGE DOWN event (framed) when the other node is paused: its
    connections stay open, so only node 1's event can tell the driver."""
    import os
    from cassandra import ConsistencyLevel
    from cassandra.cluster import EXEC_PROFILE_DEFAULT, ExecutionProfile
    from cassandra.policies import TokenAwarePolicy, WhiteListRoundRobinPolicy
    from local_cluster import running_cluster_resumed_at_end, stop_process

    for cluster in running_cluster_resumed_at_end(os.environ["TESSERA_BINARY"], 2, []):
        # The control connection on node 1; requests to either node.
        policy = TokenAwarePolicy(WhiteListRoundRobinPolicy([cluster.address(1), cluster.address(2)]))
        profile = ExecutionProfile(load_balancing_policy=policy, request_timeout=30,
                                   consistency_level=ConsistencyLevel.QUORUM)
        # No heartbeats: the driver's own probe cannot find the paused node.
        driver = Cluster([cluster.address(1)], port=cluster.port, connect_timeout=10, idle_heartbeat_interval=0,
                         execution_profiles={EXEC_PROFILE_DEFAULT: profile})
        # The driver ignores a DOWN event for a host it still holds open
        # connections to (a guard for an isolated control connection); here
        # those connections stay open by design, so the guard is turned off.
        driver._discount_down_events = False
        s = driver.connect()
        try:
            assert driver.protocol_version == 5
            assert {h.address for h in driver.metadata.all_hosts()} == {cluster.address(1), cluster.address(2)}
            s.execute("CREATE KEYSPACE c5 WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 2}")
            s.execute("CREATE TABLE c5.t (k int PRIMARY KEY, v text)")
            insert = s.prepare("INSERT INTO c5.t (k, v) VALUES (?, ?)")
            for k in range(200):
                s.execute(insert, (k, "v%d" % k))
            select = s.prepare("SELECT v FROM c5.t WHERE k = ?")
            assert all(s.execute(select, (k,)).one().v == "v%d" % k for k in range(200))
            # Node 2 pauses: node 1's failure detector sees it, and node 1
            # tells the control connection, over v5 frames.
            stop_process(cluster.pid(2))
            host2 = next(h for h in driver.metadata.all_hosts() if h.address == cluster.address(2))
            deadline = time.monotonic() + 30
            while host2.is_up and time.monotonic() < deadline:
                time.sleep(0.05)
            assert not host2.is_up
            one = SimpleStatement("SELECT v FROM c5.t WHERE k = 7", consistency_level=ConsistencyLevel.ONE)
            assert s.execute(one).one().v == "v7"
        finally:
            driver.shutdown()
