"""A local cluster for the driver tests: `tessera cluster start` (etcd and N
nodes on 127.0.0.1..N, free ports), with stop/kill/start-node by pid, and a
raw native-protocol connection that REGISTERs for node events."""
import json
import os
import shutil
import signal
import socket
import struct
import subprocess
import tempfile
import threading
import time
import urllib.error
import urllib.request


def _free_ports(n):
    """n distinct free ports: every socket stays bound until all are chosen,
    so the kernel cannot hand the same port out twice."""
    sockets = [socket.socket() for _ in range(n)]
    try:
        for s in sockets:
            s.bind(("127.0.0.1", 0))
        return [s.getsockname()[1] for s in sockets]
    finally:
        for s in sockets:
            s.close()


class LocalCluster:
    """`placement_balancer`: None leaves the nodes' default (on), False adds
    --no-placement-balancer (tests whose tablets are moved by hand or must
    stay where placement put them), True adds --placement-balancer."""

    def __init__(self, binary, nodes=3, server_args=(), placement_balancer=False, launcher_args=()):
        self.binary = binary
        self.nodes = nodes
        self.dir = tempfile.mkdtemp(prefix="tessera_cluster_")
        (self.port, self.admin_port, self.etcd_port, self.etcd_peer_port,
         self.internode_port) = _free_ports(5)
        self.server_args = list(server_args)
        self.launcher_args = list(launcher_args)  # `tessera cluster start`'s own, e.g. --authenticator
        if placement_balancer is not None and not any(
                a in ("--placement-balancer", "--no-placement-balancer") for a in self.server_args):
            self.server_args.append("--placement-balancer" if placement_balancer else "--no-placement-balancer")

    def run(self, *args, timeout=120):
        out = subprocess.run([self.binary, "cluster", *args, "--dir", self.dir], capture_output=True, text=True,
                             timeout=timeout)
        assert out.returncode == 0, "tessera cluster %s failed (%d):\n%s%s" % (args, out.returncode, out.stdout,
                                                                                 out.stderr)
        return out.stdout

    def start(self):
        extra = []
        for a in self.server_args:
            extra += ["--server-arg=" + a]
        return self.run("start", "--nodes", str(self.nodes), "--port", str(self.port), "--admin-port",
                        str(self.admin_port), "--etcd-port", str(self.etcd_port), "--etcd-peer-port",
                        str(self.etcd_peer_port), "--internode-port", str(self.internode_port), *self.launcher_args,
                        *extra)

    def manifest(self):
        with open(os.path.join(self.dir, "cluster.json")) as f:
            return json.load(f)

    def address(self, node):
        return "127.0.0.%d" % node

    def kill(self, node):
        return self.run("kill", "--node", str(node))

    def start_node(self, node):
        return self.run("start-node", "--node", str(node))

    def pid(self, node):
        return next(n["pid"] for n in self.manifest()["nodes"] if n["node"] == node)

    def stop(self):
        try:
            self.run("stop")
        finally:
            # Whatever the launcher could not stop is killed by its own pid.
            try:
                m = self.manifest()
                for p in [m["etcd"]] + m["nodes"]:
                    if p.get("pid"):
                        try:
                            os.kill(p["pid"], 9)
                        except ProcessLookupError:
                            pass
            except FileNotFoundError:
                pass

    def admin(self, node, *args, timeout=300):
        """(exit code, stdout, stderr) of `tessera admin ARGS` against node `node`'s admin port."""
        out = subprocess.run([self.binary, "admin", *args, "--admin", "%s:%d" % (self.address(node), self.admin_port)],
                             capture_output=True, text=True, timeout=timeout)
        return out.returncode, out.stdout, out.stderr

    def admin_json(self, node, *args):
        """The JSON answer of `tessera admin ARGS --json` against node `node` (which must succeed)."""
        code, out, err = self.admin(node, *args, "--json", timeout=60)
        assert code == 0, err
        return json.loads(out)

    def admin_post(self, node, path):
        """(status, body text) of an HTTP POST of `path` to node `node`'s admin port."""
        url = "http://%s:%d%s" % (self.address(node), self.admin_port, path)
        try:
            with urllib.request.urlopen(urllib.request.Request(url, method="POST"), timeout=30) as r:
                return r.status, r.read().decode()
        except urllib.error.HTTPError as e:
            return e.code, e.read().decode()

    def log(self, node):
        with open(os.path.join(self.dir, "node%d.log" % node), errors="replace") as f:
            return f.read()

    def cleanup(self):
        shutil.rmtree(self.dir, ignore_errors=True)


class EventConnection:
    """A native protocol v4 connection that REGISTERs for TOPOLOGY_CHANGE and
    STATUS_CHANGE and collects the EVENT frames the server pushes."""

    def __init__(self, address, port):
        self.sock = socket.create_connection((address, port), timeout=10)
        self._request(0x01, self._string_map({"CQL_VERSION": "3.0.0"}))
        self._expect(0x02)  # READY
        self._request(0x0B, self._string_list(["TOPOLOGY_CHANGE", "STATUS_CHANGE"]))
        self._expect(0x02)

    @staticmethod
    def _string(s):
        b = s.encode()
        return struct.pack(">H", len(b)) + b

    def _string_map(self, m):
        return struct.pack(">H", len(m)) + b"".join(self._string(k) + self._string(v) for k, v in m.items())

    def _string_list(self, items):
        return struct.pack(">H", len(items)) + b"".join(self._string(i) for i in items)

    def _request(self, opcode, body):
        self.sock.sendall(struct.pack(">BBhBI", 0x04, 0, 1, opcode, len(body)) + body)

    def _read_exact(self, n):
        data = b""
        while len(data) < n:
            chunk = self.sock.recv(n - len(data))
            if not chunk:
                raise ConnectionError("connection closed")
            data += chunk
        return data

    def _frame(self):
        header = self._read_exact(9)
        _, _, stream, opcode, length = struct.unpack(">BBhBI", header)
        return stream, opcode, self._read_exact(length)

    def _expect(self, opcode):
        _, op, body = self._frame()
        assert op == opcode, "expected opcode %d, got %d: %r" % (opcode, op, body[:200])

    def next_event(self, timeout):
        """(event_type, change, address, port) of the next EVENT, or None after timeout seconds."""
        self.sock.settimeout(timeout)
        try:
            stream, opcode, body = self._frame()
        except socket.timeout:
            return None
        assert stream == -1 and opcode == 0x0C, (stream, opcode)
        pos = 0

        def string():
            nonlocal pos
            (n,) = struct.unpack(">H", body[pos:pos + 2])
            pos += 2 + n
            return body[pos - n:pos].decode()

        event_type, change = string(), string()
        size = body[pos]
        address = socket.inet_ntop(socket.AF_INET if size == 4 else socket.AF_INET6, body[pos + 1:pos + 1 + size])
        (port,) = struct.unpack(">i", body[pos + 1 + size:pos + 5 + size])
        return event_type, change, address, port

    def wait_for(self, wanted, timeout):
        """Reads events until one equals `wanted` (a tuple); returns the events seen, or fails."""
        seen = []
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            e = self.next_event(max(0.1, deadline - time.monotonic()))
            if e is None:
                break
            seen.append(e)
            if e == wanted:
                return seen
        raise AssertionError("no %s within %.0f s; saw %s" % (wanted, timeout, seen))

    def close(self):
        self.sock.close()


def running_cluster(binary, nodes, server_args, placement_balancer=False, launcher_args=()):
    """A pytest fixture body: a started LocalCluster, stopped (and its
    directory removed unless TESSERA_KEEP_CLUSTER is set) afterwards."""
    c = LocalCluster(binary, nodes=nodes, server_args=server_args, placement_balancer=placement_balancer,
                     launcher_args=launcher_args)
    c.start()
    try:
        yield c
    finally:
        c.stop()
        if not os.environ.get("TESSERA_KEEP_CLUSTER"):
            c.cleanup()
        else:
            print("cluster kept in", c.dir)


def running_cluster_resumed_at_end(binary, nodes, server_args):
    """running_cluster for tests that SIGSTOP nodes: every node gets SIGCONT
    before the cluster stops, so that a failed test leaves none stopped."""
    clusters = running_cluster(binary, nodes, server_args)
    c = next(clusters)
    try:
        yield c
    finally:
        for n in c.manifest()["nodes"]:
            try:
                os.kill(n["pid"], signal.SIGCONT)
            except ProcessLookupError:
                pass
        next(clusters, None)


def node_session(cluster, node, request_timeout=30):
    """(driver, session) of a DataStax driver that talks to node `node` only
    (its coordinator), with `request_timeout` seconds per request."""
    from cassandra.cluster import EXEC_PROFILE_DEFAULT, Cluster, ExecutionProfile
    from cassandra.policies import WhiteListRoundRobinPolicy
    addr = cluster.address(node)
    profile = ExecutionProfile(load_balancing_policy=WhiteListRoundRobinPolicy([addr]),
                               request_timeout=request_timeout)
    driver = Cluster([addr], port=cluster.port, protocol_version=4, connect_timeout=10,
                     execution_profiles={EXEC_PROFILE_DEFAULT: profile})
    return driver, driver.connect()


def stop_process(pid, timeout=10):
    """SIGSTOPs process `pid` and returns once every thread of it is stopped.
    kill() only queues the signal: the group stop begins when one of the
    process's threads next runs, and on a loaded machine its other threads
    (a node's request handlers among them) can still answer for a while."""
    os.kill(pid, signal.SIGSTOP)

    def stopped():
        for task in os.listdir("/proc/%d/task" % pid):
            try:
                with open("/proc/%d/task/%s/stat" % (pid, task)) as f:
                    state = f.read().rsplit(")", 1)[1].split()[0]
            except FileNotFoundError:  # a thread that ended
                continue
            if state not in ("T", "t"):
                return False
        return True
    wait_until(stopped, timeout, "every thread of process %d stopped" % pid)


def wait_until(predicate, timeout, what):
    """Polls `predicate` every 0.2 s (an exception counts as not yet: a node
    may be starting) until it is true, or fails after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if predicate():
                return
        except Exception:
            pass
        time.sleep(0.2)
    raise AssertionError("not within %.0f s: %s" % (timeout, what))


def metric(cluster, node, name):
    """A counter or gauge of node `node`'s /metrics."""
    url = "http://%s:%d/metrics" % (cluster.address(node), cluster.admin_port)
    with urllib.request.urlopen(url, timeout=10) as r:
        for line in r.read().decode().splitlines():
            if line.startswith(name + " "):
                return float(line.split()[1])
    raise AssertionError("no metric " + name)


def paused_failpoints(cluster, node):
    """The failpoints node `node` holds a thread at (GET /failpoints "paused")."""
    url = "http://%s:%d/failpoints" % (cluster.address(node), cluster.admin_port)
    with urllib.request.urlopen(url, timeout=10) as r:
        return json.loads(r.read())["paused"]


class Writes:
    """Inserts keys first, first + 1, ... through `statement` on a thread for
    as long as the `with` block runs; `acked` and `errors` after it."""

    def __init__(self, session, statement, first, values):
        self.session, self.statement, self.first, self.values = session, statement, first, values
        self.acked, self.errors, self.stop = [], [], threading.Event()
        self.thread = threading.Thread(target=self.run)

    def run(self):
        k = self.first
        while not self.stop.is_set():
            try:
                self.session.execute(self.statement, self.values(k))
                self.acked.append(k)
            except Exception as e:  # noqa: BLE001 - every failure is reported
                self.errors.append(repr(e))
            k += 1

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.stop.set()
        self.thread.join()
