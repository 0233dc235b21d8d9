"""Starts a real `tessera server` for the driver tests: a fresh data
directory, a free loopback port, bounded waits, stopped by its own pid."""
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time

import pytest


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class TesseraServer:
    def __init__(self, binary):
        self.binary = binary
        self.dir = tempfile.mkdtemp(prefix="tessera_drivers_")
        self.port = free_port()
        self.proc = None

    def start(self):
        self.log = open(os.path.join(self.dir, "server.log"), "ab")
        self.proc = subprocess.Popen([self.binary, "server", "--data-dir", os.path.join(self.dir, "data"),
                                      "--listen", "127.0.0.1:%d" % self.port], stdout=self.log, stderr=self.log)
        deadline = time.time() + 30
        while time.time() < deadline:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                return
            except OSError:
                time.sleep(0.1)
        raise RuntimeError("tessera server did not start")

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
        self.start()


@pytest.fixture(scope="session")
def server():
    binary = os.environ.get("TESSERA_BINARY")
    assert binary, "TESSERA_BINARY must point at the tessera executable"
    s = TesseraServer(binary)
    s.start()
    yield s
    s.stop()
    shutil.rmtree(s.dir, ignore_errors=True)
