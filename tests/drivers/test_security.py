"""Security through the front door (issue: security and limits).

Password authentication and Cassandra's roles and permissions with the
DataStax Python driver; TLS with certificates this test makes with openssl;
the admin port's credentials; the failed-login rate limit; connection and
in-flight bounds with raw native-protocol sockets. Every server is a real
`tessera server` on 127.0.0.1, stopped by its own pid."""
import os
import socket
import ssl
import struct
import subprocess
import time

import pytest
from cassandra import AuthenticationFailed, Unauthorized
from cassandra.auth import PlainTextAuthProvider
from cassandra.cluster import Cluster, NoHostAvailable
from raw_protocol import frame, open_ready, query, read_frame, startup

AUTH = ("--authenticator", "PasswordAuthenticator", "--authorizer", "CassandraAuthorizer")


def connect(server, user=None, password=None, **kwargs):
    provider = PlainTextAuthProvider(user, password) if user is not None else None
    cluster = Cluster(["127.0.0.1"], port=server.port, protocol_version=4, auth_provider=provider,
                      connect_timeout=10, **kwargs)
    try:
        return cluster, cluster.connect()
    except Exception:
        cluster.shutdown()
        raise


def bad_credentials(exc):
    """The AuthenticationFailed inside a NoHostAvailable, with the server's message."""
    errors = list(exc.errors.values())
    assert len(errors) == 1 and isinstance(errors[0], AuthenticationFailed), exc.errors
    return str(errors[0])


# --- authentication and authorization ---

def test_login_permissions_grant_and_revoke(make_server):
    server = make_server(*AUTH, "--permissions-validity-ms", "1500")
    admin, session = connect(server, "cassandra", "cassandra")
    try:
        session.execute("CREATE KEYSPACE shop WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}")
        session.execute("CREATE TABLE shop.orders (id int PRIMARY KEY, item text)")
        session.execute("CREATE MATERIALIZED VIEW shop.orders_by_item AS SELECT * FROM shop.orders "
                        "WHERE item IS NOT NULL AND id IS NOT NULL PRIMARY KEY (item, id)")
        session.execute("INSERT INTO shop.orders (id, item) VALUES (1, 'tea')")
        session.execute("CREATE ROLE clerk WITH PASSWORD = 'clerk-pw' AND LOGIN = true")
        roles = {r.role: r for r in session.execute("LIST ROLES")}
        assert roles["cassandra"].super and roles["cassandra"].login
        assert not roles["clerk"].super and roles["clerk"].login

        # Wrong password and unknown role: BadCredentials with Cassandra's message.
        with pytest.raises(NoHostAvailable) as e:
            connect(server, "clerk", "wrong")
        assert "code=0100" in bad_credentials(e.value)
        assert "Provided username clerk and/or password are incorrect" in bad_credentials(e.value)
        with pytest.raises(NoHostAvailable) as e:
            connect(server, "nobody", "x")
        assert "Provided username nobody and/or password are incorrect" in bad_credentials(e.value)
        # No credentials at all: the driver cannot answer AUTHENTICATE.
        with pytest.raises(NoHostAvailable):
            connect(server)

        clerk, clerk_session = connect(server, "clerk", "clerk-pw")
        try:
            with pytest.raises(Unauthorized) as e:
                clerk_session.execute("SELECT * FROM shop.orders")
            assert "User clerk has no SELECT permission on <table shop.orders> or any of its parents" in str(e.value)
            assert "code=2100" in str(e.value)
            with pytest.raises(Unauthorized):
                clerk_session.execute("INSERT INTO shop.orders (id, item) VALUES (2, 'cake')")
            with pytest.raises(Unauthorized):
                clerk_session.execute("CREATE ROLE intruder WITH SUPERUSER = true")

            with pytest.raises(Unauthorized) as e:  # a view's rows take SELECT on its base table, as in Cassandra
                clerk_session.execute("SELECT * FROM shop.orders_by_item")
            assert "no SELECT permission on <table shop.orders>" in str(e.value)
            session.execute("GRANT SELECT ON TABLE shop.orders TO clerk")
            assert [(r.id, r.item) for r in clerk_session.execute("SELECT * FROM shop.orders")] == [(1, "tea")]
            assert [(r.item, r.id) for r in clerk_session.execute("SELECT * FROM shop.orders_by_item")] == [("tea", 1)]
            with pytest.raises(Unauthorized):  # SELECT does not give MODIFY
                clerk_session.execute("INSERT INTO shop.orders (id, item) VALUES (2, 'cake')")
            perms = {(p.role, p.resource, p.permission) for p in session.execute("LIST ALL PERMISSIONS OF clerk")}
            assert perms == {("clerk", "<table shop.orders>", "SELECT")}

            # Permissions granted on the keyspace hold on its tables; through a granted role too.
            session.execute("CREATE ROLE writers")
            session.execute("GRANT MODIFY ON KEYSPACE shop TO writers")
            session.execute("GRANT writers TO clerk")
            members = {(r.role, r.member) for r in session.execute("SELECT role, member FROM system_auth.role_members")}
            assert members == {("writers", "clerk")}
            assert session.execute("SELECT member_of FROM system_auth.roles WHERE role = 'clerk'").one().member_of == {"writers"}
            clerk_session.execute("INSERT INTO shop.orders (id, item) VALUES (2, 'cake')")

            session.execute("REVOKE SELECT ON TABLE shop.orders FROM clerk")
            revoked_at = time.monotonic()
            while True:
                try:
                    clerk_session.execute("SELECT * FROM shop.orders")
                except Unauthorized:
                    break
                assert time.monotonic() - revoked_at < 1.5 + 1.0, "REVOKE not in effect within the cache validity"
                time.sleep(0.1)
            print("REVOKE took effect after %.3f s (validity 1.5 s)" % (time.monotonic() - revoked_at))

            # system_auth is readable only with the permission, and never writable by a client.
            with pytest.raises(Unauthorized):
                clerk_session.execute("SELECT role FROM system_auth.roles")
            with pytest.raises(Unauthorized) as e:
                session.execute("INSERT INTO system_auth.roles (role, is_superuser) VALUES ('clerk', true)")
            assert "system_auth keyspace is not user-modifiable" in str(e.value)
            # system tables stay readable by every role (drivers need them).
            assert clerk_session.execute("SELECT release_version FROM system.local").one() is not None
        finally:
            clerk.shutdown()
    finally:
        admin.shutdown()

    # Roles, passwords and grants survive a restart.
    server.restart()
    clerk, clerk_session = connect(server, "clerk", "clerk-pw")
    try:
        clerk_session.execute("INSERT INTO shop.orders (id, item) VALUES (3, 'jam')")
        with pytest.raises(Unauthorized):
            clerk_session.execute("SELECT * FROM shop.orders")
    finally:
        clerk.shutdown()


def test_passwords_are_stored_only_as_argon2id_hashes(make_server):
    server = make_server(*AUTH)
    secret = "Sup3r-Secret-Passw0rd"
    admin, session = connect(server, "cassandra", "cassandra")
    try:
        session.execute("CREATE ROLE keeper WITH PASSWORD = '%s' AND LOGIN = true" % secret)
        stored = {r.role: r.salted_hash for r in session.execute("SELECT role, salted_hash FROM system_auth.roles")}
        for role in ("cassandra", "keeper"):
            assert stored[role].startswith("$argon2id$v=19$m=19456,t=2,p=1$"), stored[role]
        assert secret not in stored["keeper"]
    finally:
        admin.shutdown()
    server.stop()  # everything flushed and closed
    # No file of the data directory holds the password in clear.
    data = os.path.join(server.dir, "data")
    for root, _, files in os.walk(data):
        for name in files:
            with open(os.path.join(root, name), "rb") as f:
                assert secret.encode() not in f.read(), os.path.join(root, name)
    server.start()
    cluster, _ = connect(server, "keeper", secret)
    cluster.shutdown()


def test_failed_login_costs_the_same_whether_the_role_exists(make_server):
    server = make_server(*AUTH, "--max-failed-logins", "0")
    admin, session = connect(server, "cassandra", "cassandra")
    admin.shutdown()

    def failed_login_seconds(user):
        s = socket.create_connection(("127.0.0.1", server.port), timeout=10)
        try:
            s.sendall(startup())
            assert read_frame(s)[1] == 0x03  # AUTHENTICATE
            token = b"\0" + user.encode() + b"\0wrong-password"
            start = time.perf_counter()
            s.sendall(frame(0x0F, struct.pack(">i", len(token)) + token))
            reply = read_frame(s)
            elapsed = time.perf_counter() - start
            assert reply[1] == 0x00 and struct.unpack(">i", reply[2][:4])[0] == 0x0100
            return elapsed
        finally:
            s.close()

    existing = sorted(failed_login_seconds("cassandra") for _ in range(7))[3]
    missing = sorted(failed_login_seconds("no_such_role") for _ in range(7))[3]
    print("median failed login: existing role %.1f ms, missing role %.1f ms" % (existing * 1e3, missing * 1e3))
    assert 0.5 < existing / missing < 2.0, (existing, missing)


def test_failed_logins_are_rate_limited_per_address(make_server):
    server = make_server(*AUTH, "--max-failed-logins", "3", "--failed-login-window-seconds", "60")
    for _ in range(3):
        with pytest.raises(NoHostAvailable) as e:
            connect(server, "cassandra", "wrong")
        assert "incorrect" in bad_credentials(e.value)
    # Even the right password is refused from this address until the window passes.
    with pytest.raises(NoHostAvailable) as e:
        connect(server, "cassandra", "cassandra")
    assert "Too many failed login attempts from 127.0.0.1" in bad_credentials(e.value)


def test_admin_port_requires_a_superuser_except_for_metrics(make_server):
    server = make_server(*AUTH)
    admin, session = connect(server, "cassandra", "cassandra")
    try:
        session.execute("CREATE KEYSPACE ops WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}")
        session.execute("CREATE TABLE ops.t (k int PRIMARY KEY, v int)")
        for k in range(200):
            session.execute("INSERT INTO ops.t (k, v) VALUES (%d, %d)" % (k, k))
        session.execute("CREATE ROLE viewer WITH PASSWORD = 'v' AND LOGIN = true")
        tablet = session.execute("SELECT tablet_id FROM system.tablets WHERE keyspace_name = 'ops' "
                                 "AND table_name = 't'").one().tablet_id
    finally:
        admin.shutdown()
    split = "/tablets/split?keyspace=ops&table=t&tablet=%d" % tablet
    status, body = server.admin("POST", split)
    assert status == 401, (status, body)
    assert server.admin("POST", split, ("cassandra", "wrong"))[0] == 401
    assert server.admin("POST", split, ("viewer", "v"))[0] == 403
    assert server.admin("GET", "/keyvisualizer/data.json")[0] == 401
    status, body = server.admin("POST", split, ("cassandra", "cassandra"))
    assert status == 200 and '"split"' in body, (status, body)
    status, body = server.admin("GET", "/metrics")
    assert status == 200 and "tessera_" in body


# --- TLS ---

@pytest.fixture(scope="module")
def certificates(tmp_path_factory):
    """A test CA, a server certificate for IP 127.0.0.1 and a client certificate, made with openssl."""
    d = tmp_path_factory.mktemp("tls")

    def run(*args):
        subprocess.run(["openssl"] + list(args), cwd=d, check=True, capture_output=True, timeout=60)

    run("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key", "-out", "ca.pem", "-days", "2",
        "-subj", "/CN=Tessera Test CA")
    (d / "san.ext").write_text("subjectAltName=IP:127.0.0.1\n")
    for name in ("server", "client"):
        run("req", "-newkey", "rsa:2048", "-nodes", "-keyout", name + ".key", "-out", name + ".csr",
            "-subj", "/CN=" + ("127.0.0.1" if name == "server" else "tessera-client"))
        extra = ["-extfile", "san.ext"] if name == "server" else []
        run("x509", "-req", "-in", name + ".csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial",
            "-out", name + ".pem", "-days", "2", *extra)
    return d


def tls_flags(d, *extra):
    return ("--client-encryption", "--tls-certificate", str(d / "server.pem"), "--tls-private-key",
            str(d / "server.key")) + extra


def client_context(d, with_certificate=False):
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.load_verify_locations(str(d / "ca.pem"))  # verifies the server's chain and its IP address
    if with_certificate:
        ctx.load_cert_chain(str(d / "client.pem"), str(d / "client.key"))
    return ctx


def plaintext_refused(port):
    """A plaintext STARTUP gets no READY: the server closes the connection."""
    s = socket.create_connection(("127.0.0.1", port), timeout=10)
    try:
        s.sendall(startup())
        try:
            reply = s.recv(9)
        except ConnectionResetError:
            reply = b""
        return reply == b""
    finally:
        s.close()


def test_tls_verified_by_a_test_ca_and_plaintext_refused(make_server, certificates):
    server = make_server(*tls_flags(certificates))
    cluster, session = connect(server, ssl_context=client_context(certificates))
    try:
        assert session.execute("SELECT release_version FROM system.local").one() is not None
        session.execute("CREATE KEYSPACE sec WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}")
        session.execute("CREATE TABLE sec.t (k int PRIMARY KEY, v text)")
        session.execute("INSERT INTO sec.t (k, v) VALUES (1, %s)", ["x" * 100000])  # many TLS records
        assert len(session.execute("SELECT v FROM sec.t WHERE k = 1").one().v) == 100000
    finally:
        cluster.shutdown()
    assert plaintext_refused(server.port)
    with pytest.raises(NoHostAvailable):
        connect(server)
    # A client that does not trust the server's CA refuses it.
    untrusting = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    untrusting.load_default_certs()
    with pytest.raises(NoHostAvailable):
        connect(server, ssl_context=untrusting)


def test_tls_require_client_auth(make_server, certificates):
    server = make_server(*tls_flags(certificates, "--tls-truststore", str(certificates / "ca.pem"),
                                    "--require-client-auth"))
    with pytest.raises(NoHostAvailable):
        connect(server, ssl_context=client_context(certificates))
    cluster, session = connect(server, ssl_context=client_context(certificates, with_certificate=True))
    try:
        assert session.execute("SELECT release_version FROM system.local").one() is not None
    finally:
        cluster.shutdown()


def test_tls_optional_takes_both_and_with_authentication(make_server, certificates):
    server = make_server(*tls_flags(certificates, "--client-encryption-optional"), *AUTH)
    for ctx in (None, client_context(certificates)):
        kwargs = {"ssl_context": ctx} if ctx else {}
        cluster, session = connect(server, "cassandra", "cassandra", **kwargs)
        try:
            assert session.execute("LIST ROLES").one().role == "cassandra"
        finally:
            cluster.shutdown()


def test_tessera_tools_take_tls_and_credentials(make_server, certificates, tmp_path):
    server = make_server(*tls_flags(certificates), *AUTH)
    binary = os.environ["TESSERA_BINARY"]
    common = ["-u", "cassandra", "-p", "cassandra", "--ssl-ca", str(certificates / "ca.pem")]
    shell = [binary, "shell", "127.0.0.1", str(server.port)] + common
    out = subprocess.run(shell + ["-e", "CREATE KEYSPACE tools WITH replication = "
                                        "{'class': 'SimpleStrategy', 'replication_factor': 1}"],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    subprocess.run(shell + ["-e", "CREATE TABLE tools.t (k int PRIMARY KEY, v text)"], check=True, timeout=60)
    csv = tmp_path / "rows.csv"
    csv.write_text("k,v\n" + "".join("%d,value %d\n" % (i, i) for i in range(500)))
    load = subprocess.run([binary, "load", str(csv), "--table", "tools.t", "--host", "127.0.0.1",
                           "--port", str(server.port)] + common, capture_output=True, text=True, timeout=120)
    assert load.returncode == 0, load.stderr
    out = subprocess.run(shell + ["-e", "SELECT count(*) FROM tools.t"], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0 and "500" in out.stdout, out.stdout + out.stderr
    wrong = subprocess.run([binary, "shell", "127.0.0.1", str(server.port), "-u", "cassandra", "-p", "nope",
                            "--ssl-ca", str(certificates / "ca.pem"), "-e", "LIST ROLES"],
                           capture_output=True, text=True, timeout=60)
    assert wrong.returncode != 0 and "Bad credentials" in wrong.stderr


# --- limits ---

def test_connection_limit_refuses_the_101st_and_keeps_the_first_100(make_server):
    server = make_server("--native-transport-max-concurrent-connections", "100")
    socks = [open_ready(server.port) for _ in range(100)]
    try:
        extra = socket.create_connection(("127.0.0.1", server.port), timeout=10)
        extra.sendall(startup())
        try:
            closed = extra.recv(9) == b""
        except ConnectionResetError:
            closed = True
        extra.close()
        assert closed, "the 101st connection was served"
        for i, s in enumerate(socks):
            s.sendall(query("SELECT release_version FROM system.local", i + 1))
        for i, s in enumerate(socks):
            stream, opcode, _ = read_frame(s)
            assert (stream, opcode) == (i + 1, 0x08)  # RESULT
    finally:
        for s in socks[1:]:
            s.close()
    time.sleep(0.5)
    # With room again, new connections are served.
    cluster, session = connect(server)
    try:
        assert session.execute("SELECT release_version FROM system.local").one() is not None
    finally:
        cluster.shutdown()
        socks[0].close()


def test_requests_past_the_in_flight_bound_get_overloaded(make_server):
    server = make_server("--native-transport-max-requests-per-connection", "50")
    s = open_ready(server.port)
    try:
        total = 600
        s.sendall(b"".join(query("SELECT release_version FROM system.local", i + 1) for i in range(total)))
        answered, overloaded = {}, 0
        for _ in range(total):
            stream, opcode, body = read_frame(s)
            answered[stream] = opcode
            if opcode == 0x00:
                code = struct.unpack(">i", body[:4])[0]
                assert code == 0x1001, hex(code)
                overloaded += 1
        assert sorted(answered) == list(range(1, total + 1))  # every request answered once
        print("%d requests pipelined: %d answered, %d Overloaded" % (total, total - overloaded, overloaded))
        assert overloaded > 0 and total - overloaded >= 50
        # The connection carries on.
        s.sendall(query("SELECT release_version FROM system.local", 9999))
        assert read_frame(s)[:2] == (9999, 0x08)
    finally:
        s.close()
