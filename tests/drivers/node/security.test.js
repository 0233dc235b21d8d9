// The Node.js cassandra-driver against a `tessera server` with
// PasswordAuthenticator, CassandraAuthorizer and TLS: PlainTextAuthProvider
// logs in over TLS verified by a test CA (made here with openssl), a wrong
// password is refused, a missing permission is Unauthorized (0x2100).
'use strict';
const { test, before, after } = require('node:test');
const assert = require('node:assert');
const { spawn, execFileSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const cassandra = require('cassandra-driver');
const { freePort, waitForPort } = require('./server_util');

let server, dir, port;

function makeCertificates() {
  const run = (...args) => execFileSync('openssl', args, { cwd: dir, stdio: 'ignore', timeout: 60000 });
  run('req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'ca.key', '-out', 'ca.pem', '-days', '2',
      '-subj', '/CN=Tessera Test CA');
  fs.writeFileSync(path.join(dir, 'san.ext'), 'subjectAltName=IP:127.0.0.1\n');
  run('req', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'server.key', '-out', 'server.csr', '-subj', '/CN=127.0.0.1');
  run('x509', '-req', '-in', 'server.csr', '-CA', 'ca.pem', '-CAkey', 'ca.key', '-CAcreateserial', '-out',
      'server.pem', '-days', '2', '-extfile', 'san.ext');
}

function client(user, password) {
  return new cassandra.Client({
    contactPoints: ['127.0.0.1'], protocolOptions: { port }, localDataCenter: 'datacenter1',
    authProvider: new cassandra.auth.PlainTextAuthProvider(user, password),
    sslOptions: { ca: [fs.readFileSync(path.join(dir, 'ca.pem'))], host: '127.0.0.1' },
  });
}

before(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tessera_node_security_'));
  makeCertificates();
  port = await freePort();
  server = spawn(process.env.TESSERA_BINARY, ['server', '--data-dir', path.join(dir, 'data'),
    '--listen', `127.0.0.1:${port}`, '--admin-listen', 'off',
    '--authenticator', 'PasswordAuthenticator', '--authorizer', 'CassandraAuthorizer',
    '--client-encryption', '--tls-certificate', path.join(dir, 'server.pem'),
    '--tls-private-key', path.join(dir, 'server.key')], { stdio: 'ignore' });
  await waitForPort(port, 30000);
});

after(async () => {
  if (server) {
    server.kill('SIGTERM');
    await new Promise((resolve) => server.on('exit', resolve));
  }
  fs.rmSync(dir, { recursive: true, force: true });
});

test('PlainTextAuthProvider over TLS: login, permissions, bad credentials', async () => {
  const admin = client('cassandra', 'cassandra');
  await admin.connect();
  try {
    await admin.execute("CREATE KEYSPACE n WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}");
    await admin.execute('CREATE TABLE n.t (k int PRIMARY KEY, v text)');
    await admin.execute("INSERT INTO n.t (k, v) VALUES (1, 'one')");
    await admin.execute("CREATE ROLE app WITH PASSWORD = 'app-pw' AND LOGIN = true");
    const app = client('app', 'app-pw');
    await app.connect();
    try {
      await assert.rejects(app.execute('SELECT * FROM n.t'), (err) => {
        assert.strictEqual(err.code, cassandra.types.responseErrorCodes.unauthorized);
        assert.match(err.message, /User app has no SELECT permission on <table n.t>/);
        return true;
      });
      await admin.execute('GRANT SELECT ON KEYSPACE n TO app');
      const rs = await app.execute('SELECT v FROM n.t WHERE k = 1');
      assert.strictEqual(rs.first().v, 'one');
    } finally {
      await app.shutdown();
    }
  } finally {
    await admin.shutdown();
  }
  const wrong = client('app', 'nope');
  await assert.rejects(wrong.connect(), (err) => {
    const inner = Object.values(err.innerErrors || {})[0];
    assert.ok(inner instanceof cassandra.errors.AuthenticationError, String(inner));
    assert.match(inner.message, /Provided username app and\/or password are incorrect/);
    return true;
  });
  await wrong.shutdown();
});
