"""`tessera shell` driven through a pseudo-terminal, as a person would use it:
connect, DESCRIBE, a multi-line statement, a SELECT that pages (---MORE---),
an error with its position, history across sessions, EXIT."""
import os
import pty
import re
import select
import subprocess
import time

import pytest
from cassandra.cluster import Cluster


class Pty:
    """A child process on a pseudo-terminal with bounded reads."""

    def __init__(self, argv, env):
        self.master, slave = pty.openpty()
        self.proc = subprocess.Popen(argv, stdin=slave, stdout=slave, stderr=slave, env=env, close_fds=True)
        os.close(slave)
        self.buffer = ""

    def expect(self, pattern, timeout=15):
        """Reads until `pattern` (a regex) appears; returns the text up to and including it."""
        deadline = time.monotonic() + timeout
        regex = re.compile(pattern)
        while True:
            m = regex.search(self.buffer)
            if m:
                out, self.buffer = self.buffer[:m.end()], self.buffer[m.end():]
                return out
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError("timed out waiting for %r; got:\n%s" % (pattern, self.buffer))
            ready, _, _ = select.select([self.master], [], [], left)
            if ready:
                try:
                    data = os.read(self.master, 65536)
                except OSError:
                    data = b""
                if not data:
                    raise AssertionError("shell exited waiting for %r; got:\n%s" % (pattern, self.buffer))
                self.buffer += data.decode(errors="replace").replace("\r\n", "\n")

    def send(self, line):
        os.write(self.master, (line + "\r").encode())

    def close(self):
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(timeout=10)
        os.close(self.master)


@pytest.fixture
def shell_env(server, tmp_path):
    c = Cluster(["127.0.0.1"], port=server.port, connect_timeout=10, control_connection_timeout=10)
    s = c.connect()
    s.execute("CREATE KEYSPACE IF NOT EXISTS shelltest WITH replication = "
              "{'class': 'SimpleStrategy', 'replication_factor': 1}")
    s.execute("CREATE TABLE IF NOT EXISTS shelltest.readings (sensor text, ts int, value double, "
              "PRIMARY KEY (sensor, ts)) WITH CLUSTERING ORDER BY (ts DESC)")
    insert = s.prepare("INSERT INTO shelltest.readings (sensor, ts, value) VALUES (?, ?, ?)")
    for i in range(250):
        s.execute(insert, ("s1", i, i / 2))
    c.shutdown()
    env = dict(os.environ, HOME=str(tmp_path), TERM="xterm")
    yield env


def test_a_basic_session_through_a_pseudo_terminal(server, shell_env):
    argv = [os.environ["TESSERA_BINARY"], "shell", "127.0.0.1", str(server.port)]
    sh = Pty(argv, shell_env)
    try:
        sh.expect(r"Connected to Tessera at 127\.0\.0\.1:%d" % server.port)
        sh.expect(r"tessera> ")

        sh.send("DESCRIBE KEYSPACES")
        assert "shelltest" in sh.expect(r"tessera> ")

        sh.send("USE shelltest;")
        sh.expect(r"tessera:shelltest> ")
        sh.send("DESCRIBE TABLE readings")
        out = sh.expect(r"tessera:shelltest> ")
        assert "CREATE TABLE shelltest.readings (" in out
        assert "PRIMARY KEY (sensor, ts)" in out and "CLUSTERING ORDER BY (ts DESC)" in out

        # A statement over two lines: the continuation prompt, then the aligned result.
        sh.send("SELECT sensor, ts, value FROM readings")
        sh.expect(r"\.\.\. ")
        sh.send("WHERE sensor = 's1' LIMIT 3;")
        out = sh.expect(r"tessera:shelltest> ")
        assert re.search(r" sensor \| +ts \| +value\n-+\+-+\+-+\n s1 +\| +249 \| +124\.5\n", out), out
        assert "(3 rows)" in out

        # 250 rows at the default page size of 100: two ---MORE--- prompts.
        sh.send("SELECT ts FROM readings WHERE sensor = 's1';")
        first = sh.expect(r"---MORE---")
        assert re.search(r"\n +249\n", first) and "\n 150\n" in first and "\n 149\n" not in first
        sh.send("")
        second = sh.expect(r"---MORE---")
        assert "\n 149\n" in second and "\n  50\n" in second
        sh.send("")
        rest = sh.expect(r"tessera:shelltest> ")
        assert "\n  0\n" in rest and "(250 rows)" in rest  # each page is its own table, as in cqlsh

        # An error names its position.
        sh.send("SELECT * FROM readings WHERE;")
        out = sh.expect(r"tessera:shelltest> ")
        assert re.search(r"SyntaxException: line 1:\d+ ", out), out
        sh.send("SELECT * FROM nosuchtable;")
        assert "InvalidRequest: Error from server: code=2200" in sh.expect(r"tessera:shelltest> ")

        sh.send("EXIT")
        sh.proc.wait(timeout=10)
        assert sh.proc.returncode == 0
    finally:
        sh.close()
    # History was written for the next session (libedit).
    history = open(os.path.join(shell_env["HOME"], ".tessera_history")).read().replace("\\040", " ")
    assert "DESCRIBE TABLE readings" in history  # libedit's format escapes spaces as \040


def test_execute_flag_runs_one_statement_and_reports_errors(server, shell_env):
    binary = os.environ["TESSERA_BINARY"]
    ok = subprocess.run([binary, "shell", "127.0.0.1", str(server.port), "-e",
                         "SELECT count(*) FROM shelltest.readings"], capture_output=True, text=True, timeout=30)
    assert ok.returncode == 0, ok.stderr
    assert re.search(r"count\n-+\n +250\n", ok.stdout), ok.stdout
    bad = subprocess.run([binary, "shell", "127.0.0.1", str(server.port), "-e", "SELEC 1"],
                         capture_output=True, text=True, timeout=30)
    assert bad.returncode == 1
    assert "SyntaxException: line 1:1" in bad.stderr
