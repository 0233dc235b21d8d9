// The Node.js cassandra-driver (npm) against a local Tessera cluster started
// with `tessera cluster start --nodes 3` (etcd and nodes on 127.0.0.1-3,
// free ports), stopped with `tessera cluster stop` and, as a last resort,
// by the pids in cluster.json. Issue 10: discovery from one contact point,
// schema changes through any node with agreement, node events. Issue 28
// item 5: the default token-aware policy sends requests to their replica.
'use strict';
const { test, before, after } = require('node:test');
const assert = require('node:assert');
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const http = require('node:http');
const os = require('node:os');
const path = require('node:path');
const cassandra = require('cassandra-driver');
const { freePort } = require('./server_util');

let dir, port, adminPort, client;

function cluster(...args) {
  return execFileSync(process.env.TESSERA_BINARY, ['cluster', ...args, '--dir', dir], { timeout: 120000, encoding: 'utf8' });
}

before(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tessera_node_cluster_'));
  port = await freePort();
  const etcdPort = await freePort();
  const etcdPeerPort = await freePort();
  adminPort = await freePort();
  const internodePort = await freePort();
  cluster('start', '--nodes', '3', '--port', String(port), '--etcd-port', String(etcdPort),
          '--etcd-peer-port', String(etcdPeerPort), '--admin-port', String(adminPort),
          '--internode-port', String(internodePort),
          '--server-arg=--cluster-lease-seconds=3',
          // Tablets stay where placement put them: the routing test counts forwarded requests.
          '--server-arg=--no-placement-balancer');
  client = new cassandra.Client({ contactPoints: ['127.0.0.2'], protocolOptions: { port }, localDataCenter: 'datacenter1' });
  await client.connect();
});

after(async () => {
  if (client) await client.shutdown();
  try {
    cluster('stop');
  } finally {
    const manifest = JSON.parse(fs.readFileSync(path.join(dir, 'cluster.json'), 'utf8'));
    for (const p of [manifest.etcd, ...manifest.nodes]) {
      try { process.kill(p.pid, 'SIGKILL'); } catch (e) { /* already gone */ }
    }
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('discovers the three nodes from one contact point and connects to each', async () => {
  const hosts = client.hosts.values().map((h) => h.address.split(':')[0]).sort();
  assert.deepStrictEqual(hosts, ['127.0.0.1', '127.0.0.2', '127.0.0.3']);
  const deadline = Date.now() + 20000;
  while (client.getState().getConnectedHosts().length < 3 && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 100));
  }
  assert.strictEqual(client.getState().getConnectedHosts().length, 3);
  const ids = new Set();
  for (const host of client.hosts.values()) {
    assert.strictEqual(host.datacenter, 'datacenter1');
    ids.add(host.hostId.toString());
  }
  assert.strictEqual(ids.size, 3);
});

test('schema changes through any node reach every node, with agreement', async () => {
  const created = await client.execute(
    "CREATE KEYSPACE node_shared WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}");
  assert.strictEqual(created.info.isSchemaInAgreement, true);
  const table = await client.execute('CREATE TABLE node_shared.items (id int PRIMARY KEY, name text)');
  assert.strictEqual(table.info.isSchemaInAgreement, true);
  // checkSchemaAgreement was seen answering false once right after agreed
  // DDL (it answers false on any error of its two queries), so it is asked
  // until true.
  let agreed = false;
  for (const deadline = Date.now() + 10000; !agreed && Date.now() < deadline;) {
    agreed = await client.metadata.checkSchemaAgreement();
    if (!agreed) await new Promise((r) => setTimeout(r, 200));
  }
  assert.strictEqual(agreed, true);
  for (const host of client.hosts.values()) {
    const rs = await client.execute(
      "SELECT column_name FROM system_schema.columns WHERE keyspace_name = 'node_shared' AND table_name = 'items'",
      [], { host });
    assert.deepStrictEqual(rs.rows.map((r) => r.column_name).sort(), ['id', 'name'], host.address);
  }
  const metadata = await client.metadata.getTable('node_shared', 'items');
  assert.deepStrictEqual(metadata.columns.map((c) => c.name).sort(), ['id', 'name']);
});

test('replication_factor 3: writes and paged reads at QUORUM through each node', async () => {
  await client.execute(
    "CREATE KEYSPACE node_rep WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 3}");
  await client.execute('CREATE TABLE node_rep.events (p int, c int, v text, PRIMARY KEY (p, c))');
  const quorum = { prepare: true, consistency: cassandra.types.consistencies.quorum };
  const hosts = client.hosts.values();
  // Each write through a different coordinator.
  for (let i = 0; i < 60; i++) {
    await client.execute('INSERT INTO node_rep.events (p, c, v) VALUES (?, ?, ?)', [i % 4, i, 'v' + i],
                         { ...quorum, host: hosts[i % hosts.length] });
  }
  for (const host of hosts) {
    const seen = [];
    for await (const row of client.stream('SELECT p, c, v FROM node_rep.events', [],
                                          { ...quorum, host, fetchSize: 11, autoPage: true })) {
      seen.push([row.p, row.c, row.v]);
    }
    assert.strictEqual(seen.length, 60, host.address);
    assert.deepStrictEqual(seen.map((r) => r[1]).sort((a, b) => a - b), [...Array(60).keys()]);
    const part = await client.execute('SELECT c FROM node_rep.events WHERE p = 2', [], { ...quorum, host });
    assert.deepStrictEqual(part.rows.map((r) => r.c), [...Array(15).keys()].map((k) => 4 * k + 2));
  }
  // A replication factor above the node count is refused.
  await assert.rejects(
    client.execute("CREATE KEYSPACE node_rep4 WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 4}"),
    /Replication factor 4 exceeds the number of nodes 3/);
});

// The sum over the three nodes of a /metrics counter.
async function clusterMetric(name) {
  let total = 0;
  for (const n of [1, 2, 3]) {
    const text = await new Promise((resolve, reject) => {
      http.get(`http://127.0.0.${n}:${adminPort}/metrics`, (res) => {
        let body = '';
        res.on('data', (d) => { body += d; });
        res.on('end', () => resolve(body));
      }).on('error', reject);
    });
    const line = text.split('\n').find((l) => l.startsWith(name + ' '));
    assert.ok(line, name);
    total += Number(line.split(' ')[1]);
  }
  return total;
}

test('the default token-aware policy sends each request to the replica of its partition', async () => {
  await client.execute(
    "CREATE KEYSPACE node_route WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}");
  await client.execute('CREATE TABLE node_route.kv (k int PRIMARY KEY, v int) WITH initial_tablets = 16');
  // Every node learns the new placement through its etcd watch: wait until node 1 reports the
  // 16 tablets' tokens. Drivers read tokens when they connect: an application connects after its
  // tables exist.
  const node1 = client.hosts.values().find((h) => h.address.startsWith('127.0.0.1'));
  for (const deadline = Date.now() + 20000; ;) {
    const local = await client.execute('SELECT tokens FROM system.local', [], { host: node1 });
    const peers = await client.execute('SELECT tokens FROM system.peers', [], { host: node1 });
    const count = local.first().tokens.length + peers.rows.reduce((n, r) => n + r.tokens.length, 0);
    if (count === 16) break;
    assert.ok(Date.now() < deadline, `node 1 reports ${count} tokens, not 16`);
    await new Promise((r) => setTimeout(r, 100));
  }
  const routed = new cassandra.Client({ contactPoints: ['127.0.0.1'], protocolOptions: { port },
                                        localDataCenter: 'datacenter1' });
  await routed.connect();
  try {
    assert.strictEqual(routed.metadata.tokenizer.constructor.name, 'Murmur3Tokenizer');
    const before = [await clusterMetric('tessera_coordinator_forwarded_requests_total'),
                    await clusterMetric('tessera_coordinator_requests_total')];
    const served = new Set();
    for (let k = 0; k < 200; k++) {
      const rs = await routed.execute('INSERT INTO node_route.kv (k, v) VALUES (?, ?)', [k, k], { prepare: true });
      served.add(rs.info.queriedHost.split(':')[0]);
    }
    for (let k = 0; k < 200; k++) {
      const rs = await routed.execute('SELECT v FROM node_route.kv WHERE k = ?', [k], { prepare: true });
      assert.strictEqual(rs.first().v, k);
    }
    const forwarded = await clusterMetric('tessera_coordinator_forwarded_requests_total') - before[0];
    const coordinated = await clusterMetric('tessera_coordinator_requests_total') - before[1];
    assert.ok(coordinated >= 400, String(coordinated));
    assert.strictEqual(forwarded, 0);
    assert.deepStrictEqual([...served].sort(), ['127.0.0.1', '127.0.0.2', '127.0.0.3']);
  } finally {
    await routed.shutdown();
  }
});

test('a killed node is marked down and comes back up', async () => {
  const host3 = client.hosts.values().find((h) => h.address.startsWith('127.0.0.3'));
  cluster('kill', '--node', '3');
  let deadline = Date.now() + 20000;
  while (host3.isUp() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
  assert.strictEqual(host3.isUp(), false);
  cluster('start-node', '--node', '3');
  deadline = Date.now() + 60000;
  while (!host3.isUp() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200));
  assert.strictEqual(host3.isUp(), true);
});
