// The Node.js cassandra-driver (npm) against a real `tessera server`: starts
// the binary on a free loopback port (TESSERA_BINARY), stops it by its pid.
'use strict';
const { test, before, after } = require('node:test');
const assert = require('node:assert');
const cassandra = require('cassandra-driver');
const { startServer } = require('./server_util');

let server, client, port;

before(async () => {
  server = await startServer('tessera_node_');
  port = server.port;
  client = new cassandra.Client({ contactPoints: ['127.0.0.1'], protocolOptions: { port }, localDataCenter: 'datacenter1' });
  await client.connect();
});

after(async () => {
  if (client) await client.shutdown();
  if (server) await server.stop();
});

test('connects on protocol v4 and reads system.local', async () => {
  assert.strictEqual(client.getState().getConnectedHosts().length, 1);
  const rs = await client.execute("SELECT partitioner FROM system.local WHERE key='local'");
  assert.strictEqual(rs.first().partitioner, 'org.apache.cassandra.dht.Murmur3Partitioner');
});

test('a client opens on keyspace system and sees the system keyspaces in its metadata (issue 31)', async () => {
  const sys = new cassandra.Client({ contactPoints: ['127.0.0.1'], protocolOptions: { port },
                                     localDataCenter: 'datacenter1', keyspace: 'system' });
  await sys.connect();
  try {
    const rs = await sys.execute('SELECT key FROM local');
    assert.strictEqual(rs.first().key, 'local');
    const local = await sys.metadata.getTable('system', 'local');
    assert.deepStrictEqual(local.partitionKeys.map((c) => c.name), ['key']);
    assert.ok(local.columns.some((c) => c.name === 'tokens'));
    const keyspaces = Object.keys(sys.metadata.keyspaces);
    for (const ks of ['system', 'system_schema', 'system_auth', 'system_distributed', 'system_traces']) {
      assert.ok(keyspaces.includes(ks), `${ks} in ${keyspaces}`);
    }
  } finally {
    await sys.shutdown();
  }
});

test('DDL, prepared writes and reads, metadata', async () => {
  await client.execute("CREATE KEYSPACE IF NOT EXISTS nd WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}");
  await client.execute('CREATE TABLE IF NOT EXISTS nd.t (k int, c int, v text, PRIMARY KEY (k, c)) WITH CLUSTERING ORDER BY (c DESC)');
  for (let c = 0; c < 30; c++) {
    await client.execute('INSERT INTO nd.t (k, c, v) VALUES (?, ?, ?)', [1, c, `v${c}`], { prepare: true });
  }
  const rs = await client.execute('SELECT c, v FROM nd.t WHERE k = ?', [1], { prepare: true });
  assert.strictEqual(rs.rowLength, 30);
  assert.strictEqual(rs.first().c, 29);  // DESC clustering order
  const table = await client.metadata.getTable('nd', 't');
  assert.deepStrictEqual(table.partitionKeys.map((c) => c.name), ['k']);
  assert.deepStrictEqual(table.clusteringKeys.map((c) => c.name), ['c']);
  assert.deepStrictEqual(table.clusteringOrder, ['DESC']);
});

test('a traced query answers a trace id whose session and events the driver reads (issue 31)', async () => {
  const rs = await client.execute('SELECT c, v FROM nd.t WHERE k = ?', [1], { prepare: true, traceQuery: true });
  assert.strictEqual(rs.rowLength, 30);
  const traceId = rs.info.traceId;
  assert.ok(traceId, 'no trace id in the response');
  const trace = await client.metadata.getTrace(traceId);
  assert.strictEqual(trace.requestType, 'Execute CQL3 prepared query');
  assert.strictEqual(trace.parameters.query, 'SELECT c, v FROM nd.t WHERE k = ?');
  assert.strictEqual(trace.coordinator.toString(), '127.0.0.1');
  assert.ok(trace.duration > 0);
  const activities = trace.events.map((e) => e.activity);
  assert.ok(activities.includes('Executing query on nd.t at LOCAL_ONE'), activities.join(' | '));
  const elapsed = trace.events.map((e) => e.elapsed);
  assert.deepStrictEqual(elapsed, [...elapsed].sort((a, b) => a - b));
  // Untraced: no id.
  const plain = await client.execute('SELECT c FROM nd.t WHERE k = 1 LIMIT 1');
  assert.ok(!plain.info.traceId);
});

test('pages with fetchSize and pageState', async () => {
  const seen = [];
  let pageState;
  do {
    const rs = await client.execute('SELECT c FROM nd.t WHERE k = 1', [], { prepare: true, fetchSize: 7, pageState });
    rs.rows.forEach((r) => seen.push(r.c));
    pageState = rs.pageState;
  } while (pageState);
  assert.strictEqual(seen.length, 30);
  assert.deepStrictEqual(seen, [...Array(30).keys()].reverse());
});

test('batches and errors', async () => {
  await client.batch([
    { query: 'INSERT INTO nd.t (k, c, v) VALUES (?, ?, ?)', params: [2, 1, 'a'] },
    { query: 'INSERT INTO nd.t (k, c, v) VALUES (?, ?, ?)', params: [2, 2, 'b'] },
  ], { prepare: true });
  const rs = await client.execute('SELECT count(*) FROM nd.t WHERE k = 2');
  assert.strictEqual(rs.first().count.toNumber(), 2);
  await assert.rejects(client.execute('SELEKT 1'), (e) => e.code === 0x2000);
  await assert.rejects(client.execute('SELECT * FROM nd.missing'), (e) => e.code === 0x2200);
  await assert.rejects(client.execute('CREATE TABLE nd.t (k int PRIMARY KEY)'), (e) => e.code === 0x2400);
});

test('user-defined types: metadata, prepared values as objects, field updates', async () => {
  await client.execute('CREATE TYPE IF NOT EXISTS nd.address (street text, zip int)');
  await client.execute('CREATE TABLE IF NOT EXISTS nd.people (id int PRIMARY KEY, home frozen<address>, work address)');
  const udt = await client.metadata.getUdt('nd', 'address');
  assert.deepStrictEqual(udt.fields.map((f) => f.name), ['street', 'zip']);
  await client.execute('INSERT INTO nd.people (id, home, work) VALUES (?, ?, ?)',
                       [1, { street: 'Main', zip: 7 }, { street: 'Mill' }], { prepare: true });
  await client.execute('UPDATE nd.people SET work.zip = ? WHERE id = 1', [9], { prepare: true });
  const row = (await client.execute('SELECT home, work, home.zip FROM nd.people WHERE id = 1')).first();
  assert.deepStrictEqual(row.home, { street: 'Main', zip: 7 });
  assert.deepStrictEqual(row.work, { street: 'Mill', zip: 9 });
  assert.strictEqual(row['home.zip'], 7);
});
