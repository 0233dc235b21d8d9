"""Idle connections cost the server little memory, and closing them gives it back.

10,000 connections each complete STARTUP (native protocol v4) and stay idle;
the server's resident memory is read from /proc before, while they are open
and after they closed. Before the read buffer moved out of the connection,
each held 64 KiB: 16 MB became 658 MB and stayed there. The server must still
answer through the Python driver afterwards."""
import os
import resource
import socket
import struct
import time

from cassandra.cluster import Cluster

CONNECTIONS = 10000


def rss_mb(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024.0
    raise AssertionError("no VmRSS")


def startup_frame():
    body = struct.pack(">H", 1) + struct.pack(">H", 11) + b"CQL_VERSION" + struct.pack(">H", 5) + b"3.0.0"
    return struct.pack(">BBhBI", 4, 0, 0, 0x01, len(body)) + body


def test_ten_thousand_idle_connections_hold_little_memory_and_give_it_back(make_server):
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    need = CONNECTIONS + 500
    assert hard >= need, "this test needs %d file descriptors; the hard limit is %d" % (need, hard)
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, need), hard))  # the server inherits it
    server = make_server()
    pid = server.proc.pid
    before = rss_mb(pid)
    frame = startup_frame()
    socks = []
    try:
        deadline = time.monotonic() + 120
        for _ in range(CONNECTIONS):
            s = socket.create_connection(("127.0.0.1", server.port), timeout=30)
            s.sendall(frame)
            socks.append(s)
        for s in socks:
            header = s.recv(9)
            assert len(header) == 9 and header[4] == 0x02, header  # READY
            assert time.monotonic() < deadline
        time.sleep(1)
        during = rss_mb(pid)
    finally:
        for s in socks:
            s.close()
    time.sleep(3)
    after = rss_mb(pid)
    print("RSS before %.0f MB, with %d idle connections %.0f MB, after they closed %.0f MB"
          % (before, CONNECTIONS, during, after))
    assert during - before < 50, (before, during)
    assert after - before < 50, (before, after)
    cluster = Cluster(["127.0.0.1"], port=server.port, protocol_version=4)
    try:
        session = cluster.connect()
        assert session.execute("SELECT release_version FROM system.local").one() is not None
    finally:
        cluster.shutdown()
    assert server.proc.poll() is None
