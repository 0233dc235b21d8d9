"""Starts a real `tessera server` for the driver tests: a fresh data
directory, a free loopback port, bounded waits, stopped by its own pid."""
import base64
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import urllib.error
import urllib.request

import pytest


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class TesseraServer:
    def __init__(self, binary, extra_args=()):
        self.binary = binary
        self.dir = tempfile.mkdtemp(prefix="tessera_drivers_")
        self.port = free_port()
        self.admin_port = free_port()
        self.extra_args = list(extra_args)
        self.proc = None
        self.log = None

    def start(self, attempts=5):
        """Starts the server and waits for its "ready" line. The ports are
        chosen free, then closed, so another process can take one before
        the server binds it (most likely what CI met under CTest -j2: a
        driver's handshake timed out on a port that accepted connections),
        and a port that accepts a connection may be someone else's: a server
        that exits with an address in use starts again on new ports; a
        restart keeps its ports."""
        for attempt in range(attempts):
            if self.log:
                self.log.close()
            self.log = open(os.path.join(self.dir, "server.log"), "ab")
            begin = self.log.tell()
            self.proc = subprocess.Popen([self.binary, "server", "--data-dir", os.path.join(self.dir, "data"),
                                          "--listen", "127.0.0.1:%d" % self.port,
                                          "--admin-listen", "127.0.0.1:%d" % self.admin_port] + self.extra_args,
                                         stdout=self.log, stderr=self.log)
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline:
                with open(os.path.join(self.dir, "server.log"), "rb") as f:
                    f.seek(begin)
                    text = f.read().decode(errors="replace")
                if "tessera server ready" in text:
                    return
                if self.proc.poll() is not None:
                    break
                time.sleep(0.1)
            else:
                raise RuntimeError("tessera server did not start in 30 s:\n" + text[-2000:])
            self.proc = None
            if "in use" not in text or attempt + 1 == attempts:
                raise RuntimeError("tessera server exited:\n" + text[-2000:])
            self.port, self.admin_port = free_port(), free_port()

    def admin(self, method, path, credentials=None):
        """An admin HTTP request, with HTTP Basic (user, password) when given; returns (status, body text)."""
        req = urllib.request.Request("http://127.0.0.1:%d%s" % (self.admin_port, path), method=method)
        if credentials:
            token = base64.b64encode(("%s:%s" % credentials).encode()).decode()
            req.add_header("Authorization", "Basic " + token)
        try:
            with urllib.request.urlopen(req, timeout=30) as r:
                return r.status, r.read().decode()
        except urllib.error.HTTPError as e:
            return e.code, e.read().decode()

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc = None

    def restart(self):
        self.stop()
        self.start(attempts=1)


def own_server(*extra_args):
    """A server of its own for a fixture (a generator): started, yielded, then
    stopped and its directory removed."""
    binary = os.environ.get("TESSERA_BINARY")
    assert binary, "TESSERA_BINARY must point at the tessera executable"
    s = TesseraServer(binary, extra_args)
    s.start()
    try:
        yield s
    finally:  # also when the generator is closed (GeneratorExit) or the start of a test failed
        s.stop()
        shutil.rmtree(s.dir, ignore_errors=True)


def connect(server, keyspace=None):
    """A driver Cluster and its session on `server` (the caller shuts the Cluster down)."""
    from cassandra.cluster import Cluster
    c = Cluster(["127.0.0.1"], port=server.port, connect_timeout=10, control_connection_timeout=10)
    return c, c.connect(keyspace)


@pytest.fixture(scope="session")
def server():
    yield from own_server()


@pytest.fixture
def make_server():
    """Starts servers with extra flags (balancer thresholds, guardrails); stops them after the test."""
    binary = os.environ.get("TESSERA_BINARY")
    assert binary, "TESSERA_BINARY must point at the tessera executable"
    started = []

    def make(*extra_args):
        s = TesseraServer(binary, extra_args)
        s.start()
        started.append(s)
        return s

    yield make
    for s in started:
        s.stop()
        shutil.rmtree(s.dir, ignore_errors=True)
