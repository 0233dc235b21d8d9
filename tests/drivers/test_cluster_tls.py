"""Issue 29, item 2 (must-show 2): internode encryption and authentication,
and etcd over TLS, on a cluster started by `tessera cluster start --tls` (a CA
of the cluster's own and node certificates made by the launcher in DIR/tls).
- QUORUM writes and reads through every node work with every internode
  message over TLS;
- the internode port refuses a plain TCP client, and a TLS client whose
  certificate is not from the cluster's CA (a TLS client with a certificate
  from the cluster's CA, the control, gets gRPC's HTTP/2 SETTINGS);
- etcd refuses a client without a certificate (the control with the
  launcher's certificate reads the cluster's keys)."""
import http.client
import json
import os
import socket
import ssl
import subprocess
import urllib.error
import urllib.request

import pytest
from cassandra import ConsistencyLevel
from cassandra.query import SimpleStatement

from local_cluster import metric, node_session, running_cluster

BINARY = os.environ["TESSERA_BINARY"]
Q = ConsistencyLevel.QUORUM
HTTP2_PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + b"\x00\x00\x00\x04\x00\x00\x00\x00\x00"  # + empty SETTINGS


@pytest.fixture(scope="module")
def cluster():
    yield from running_cluster(BINARY, 3, [], launcher_args=["--tls"])


@pytest.fixture(scope="module")
def intruder(tmp_path_factory):
    """A certificate and key from a CA that is not the cluster's (self-signed)."""
    d = tmp_path_factory.mktemp("intruder")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                    "-keyout", "key.pem", "-out", "cert.pem", "-days", "2", "-subj", "/CN=intruder",
                    "-addext", "subjectAltName=IP:127.0.0.1"], cwd=d, check=True, capture_output=True, timeout=60)
    return d


def test_the_launcher_turns_tls_on_everywhere_but_cql(cluster):
    m = cluster.manifest()
    assert m["etcd"]["endpoint"].startswith("https://")
    for n in m["nodes"]:
        args = n["args"]
        assert args[args.index("--internode-encryption") + 1] == "all"
        assert "--internode-require-client-auth" in args
        assert args[args.index("--etcd") + 1].startswith("https://")
    assert os.path.exists(m["tls"]["ca"])


def test_quorum_writes_and_reads_over_internode_tls(cluster):
    d, s = node_session(cluster, 1)
    try:
        s.execute("CREATE KEYSPACE sealed WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 3}")
        s.execute("CREATE TABLE sealed.t (k int PRIMARY KEY, v int)")
    finally:
        d.shutdown()
    for node in (1, 2, 3):
        d, s = node_session(cluster, node)
        try:
            write = SimpleStatement("INSERT INTO sealed.t (k, v) VALUES (%s, %s)", consistency_level=Q)
            read = SimpleStatement("SELECT v FROM sealed.t WHERE k = %s", consistency_level=Q)
            for k in range(node * 100, node * 100 + 50):
                s.execute(write, (k, k * 3))
            for k in range(100, 100 + 50):
                assert s.execute(read, (k,)).one().v == k * 3
        finally:
            d.shutdown()
    sent = sum(metric(cluster, n, "tessera_internode_messages_sent_total") for n in (1, 2, 3))
    assert sent > 300, sent  # the replicas were reached, over TLS (plaintext is refused below)


def internode_answer(cluster, context=None):
    """What node 1's internode port sends back to an HTTP/2 preface: gRPC's
    SETTINGS frame (type 4) when the connection is accepted, b"" when it is
    closed or refused."""
    raw = socket.create_connection(("127.0.0.1", cluster.internode_port), timeout=10)
    try:
        s = context.wrap_socket(raw, server_hostname="127.0.0.1") if context else raw
        s.sendall(HTTP2_PREFACE)
        return s.recv(9)
    except (ConnectionResetError, ssl.SSLError, BrokenPipeError):
        return b""
    finally:
        raw.close()


def test_the_internode_port_refuses_plaintext_and_foreign_certificates(cluster, intruder):
    ca = cluster.manifest()["tls"]["ca"]
    tls_dir = cluster.manifest()["tls"]["dir"]
    assert internode_answer(cluster) == b"", "a plaintext client was answered"
    foreign = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    foreign.load_verify_locations(ca)  # it trusts the node; the node must not trust it
    foreign.set_alpn_protocols(["h2"])
    foreign.load_cert_chain(str(intruder / "cert.pem"), str(intruder / "key.pem"))
    assert internode_answer(cluster, foreign) == b"", "a certificate from another CA was accepted"
    anonymous = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    anonymous.load_verify_locations(ca)
    anonymous.set_alpn_protocols(["h2"])
    assert internode_answer(cluster, anonymous) == b"", "a client without a certificate was accepted"
    # The control: a certificate from the cluster's CA gets gRPC's SETTINGS frame.
    member = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    member.load_verify_locations(ca)
    member.set_alpn_protocols(["h2"])
    member.load_cert_chain(os.path.join(tls_dir, "node2.pem"), os.path.join(tls_dir, "node2-key.pem"))
    answer = internode_answer(cluster, member)
    assert len(answer) == 9 and answer[3] == 4, answer


def test_etcd_refuses_a_client_without_a_certificate(cluster):
    m = cluster.manifest()
    url = m["etcd"]["endpoint"] + "/v3/kv/range"
    body = json.dumps({"key": "L3Rlc3NlcmEv", "range_end": "L3Rlc3NlcmEw"}).encode()  # /tessera/ .. /tessera0
    plain = ssl.create_default_context(cafile=m["etcd"]["tls"]["ca"])
    with pytest.raises((urllib.error.URLError, ssl.SSLError, ConnectionResetError)):
        urllib.request.urlopen(urllib.request.Request(url, data=body), timeout=10, context=plain).read()
    with pytest.raises((urllib.error.URLError, http.client.HTTPException, ConnectionResetError)):
        urllib.request.urlopen(url.replace("https://", "http://"), data=body, timeout=10).read()
    control = ssl.create_default_context(cafile=m["etcd"]["tls"]["ca"])
    control.load_cert_chain(m["etcd"]["tls"]["client_cert"], m["etcd"]["tls"]["client_key"])
    with urllib.request.urlopen(urllib.request.Request(url, data=body), timeout=10, context=control) as r:
        assert int(json.load(r).get("count", 0)) > 0
