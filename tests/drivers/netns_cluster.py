"""A cluster whose nodes live in network namespaces the test makes itself, so
that a test can cut one node off from its peers while etcd and the driver
still reach it (a network partition on the internode path).

Layout: a bridge in this namespace holds 10.213.S.1 (etcd and the driver
speak from there); node N runs inside namespace `tsnT-N` with 10.213.S.(10+N)
on a veth leg of the bridge. Every node uses the same ports (each namespace has
its own). `kill(n)` kill -9s a node (`start_node(n)` restarts it on its data);
`partition(n)` adds blackhole routes inside node n's namespace to
the other nodes' addresses: nothing passes between n and its peers, either
way (their packets reach n, its answers are dropped), while its route to
10.213.S.1 stays. `heal(n)` removes them.

Requires root (CAP_NET_ADMIN) and iproute2; `stop()` kills every process by
its pid and removes the namespaces, the veths and the bridge."""
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import urllib.request

from local_cluster import wait_until

CQL_PORT = 9042
ADMIN_PORT = 7199
INTERNODE_PORT = 7000


def _ip(*args, check=True):
    out = subprocess.run(["ip", *args], capture_output=True, text=True, timeout=30)
    if check and out.returncode != 0:
        raise RuntimeError("ip %s failed: %s" % (" ".join(args), out.stderr.strip()))
    return out


class NetnsCluster:
    def __init__(self, binary, nodes=3, server_args=()):
        self.binary, self.nodes, self.server_args = binary, nodes, list(server_args)
        tag = os.getpid() % 100000
        self.subnet = "10.213.%d" % (tag % 250 + 1)
        self.bridge = "tsb%d" % tag
        self.namespaces = ["tsn%d-%d" % (tag, n) for n in range(1, nodes + 1)]
        self.veths = ["tsv%d-%d" % (tag, n) for n in range(1, nodes + 1)]
        self.dir = tempfile.mkdtemp(prefix="tessera_netns_")
        self.etcd = None
        self.procs = {}
        self.partitioned = set()

    def address(self, node):
        return "%s.%d" % (self.subnet, 10 + node)

    @property
    def host(self):
        return self.subnet + ".1"

    def _network(self):
        _ip("link", "add", self.bridge, "type", "bridge")
        _ip("addr", "add", self.host + "/24", "dev", self.bridge)
        _ip("link", "set", self.bridge, "up")
        for n, (ns, veth) in enumerate(zip(self.namespaces, self.veths), start=1):
            _ip("netns", "add", ns)
            _ip("link", "add", veth, "type", "veth", "peer", "name", "eth0", "netns", ns)
            _ip("link", "set", veth, "master", self.bridge, "up")
            _ip("-n", ns, "addr", "add", self.address(n) + "/24", "dev", "eth0")
            _ip("-n", ns, "link", "set", "eth0", "up")
            _ip("-n", ns, "link", "set", "lo", "up")

    def _free_port(self):
        with socket.socket() as s:
            s.bind((self.host, 0))
            return s.getsockname()[1]

    def start(self):
        self._network()
        client, peer = self._free_port(), self._free_port()
        client_url, peer_url = "http://%s:%d" % (self.host, client), "http://%s:%d" % (self.host, peer)
        self.etcd_endpoint = client_url
        self.etcd = subprocess.Popen(
            ["etcd", "--name", "tessera-etcd", "--data-dir", os.path.join(self.dir, "etcd"), "--listen-client-urls",
             client_url, "--advertise-client-urls", client_url, "--listen-peer-urls", peer_url,
             "--initial-advertise-peer-urls", peer_url, "--initial-cluster", "tessera-etcd=" + peer_url],
            stdout=open(os.path.join(self.dir, "etcd.log"), "ab"), stderr=subprocess.STDOUT)
        wait_until(lambda: urllib.request.urlopen(client_url + "/health", timeout=2).status == 200, 30, "etcd")
        for n in range(1, self.nodes + 1):
            self.start_node(n)

    def start_node(self, n):
        addr = self.address(n)
        log_path = os.path.join(self.dir, "node%d.log" % n)
        args = ["ip", "netns", "exec", self.namespaces[n - 1], self.binary, "server", "--data-dir",
                os.path.join(self.dir, "node%d" % n), "--listen", "%s:%d" % (addr, CQL_PORT), "--admin-listen",
                "%s:%d" % (addr, ADMIN_PORT), "--etcd", self.etcd_endpoint, "--node-address", addr,
                "--internode-port", str(INTERNODE_PORT)] + self.server_args
        # `ip netns exec` execs the server: the pid is the server's.
        self.procs[n] = subprocess.Popen(args, stdout=open(log_path, "ab"), stderr=subprocess.STDOUT)

        def serving():
            with socket.create_connection((addr, CQL_PORT), timeout=1):
                pass
            with open(log_path, errors="replace") as f:
                return "serving until" in f.read()
        wait_until(serving, 60, "node %d serving" % n)

    def kill(self, node):
        """kill -9 of node `node`, waited for."""
        self.procs[node].kill()
        self.procs[node].wait(timeout=20)

    def pid(self, node):
        return self.procs[node].pid

    def partition(self, node):
        for other in range(1, self.nodes + 1):
            if other != node:
                _ip("-n", self.namespaces[node - 1], "route", "add", "blackhole", self.address(other) + "/32")
        self.partitioned.add(node)

    def heal(self, node):
        for other in range(1, self.nodes + 1):
            if other != node:
                _ip("-n", self.namespaces[node - 1], "route", "del", "blackhole", self.address(other) + "/32",
                    check=False)
        self.partitioned.discard(node)

    def metric(self, node, name):
        url = "http://%s:%d/metrics" % (self.address(node), ADMIN_PORT)
        with urllib.request.urlopen(url, timeout=10) as r:
            for line in r.read().decode().splitlines():
                if line.startswith(name + " "):
                    return float(line.split()[1])
        raise AssertionError("no metric " + name)

    def stop(self):
        for node in list(self.partitioned):
            self.heal(node)
        for p in list(self.procs.values()) + ([self.etcd] if self.etcd else []):
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
        for p in list(self.procs.values()) + ([self.etcd] if self.etcd else []):
            try:
                p.wait(timeout=20)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait(timeout=10)
        for ns in self.namespaces:
            _ip("netns", "del", ns, check=False)
        _ip("link", "del", self.bridge, check=False)
        if not os.environ.get("TESSERA_KEEP_CLUSTER"):
            shutil.rmtree(self.dir, ignore_errors=True)
        else:
            print("cluster kept in", self.dir)
