// Vector search through the Node.js cassandra-driver (4.10 knows Cassandra
// 5.0's vector type): vector<float, n> bound and read back as types.Vector,
// a StorageAttachedIndex, ORDER BY ... ANN OF with a bound vector, the
// similarity functions and the driver's table metadata (issue 31, item 3).
'use strict';
const { test, before, after } = require('node:test');
const assert = require('node:assert');
const cassandra = require('cassandra-driver');
const { startServer } = require('./server_util');

let server, client;

before(async () => {
  server = await startServer('tessera_node_vector_');
  client = new cassandra.Client({ contactPoints: ['127.0.0.1'], protocolOptions: { port: server.port },
                                  localDataCenter: 'datacenter1' });
  await client.connect();
  await client.execute("CREATE KEYSPACE vs WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}");
  await client.execute('CREATE TABLE vs.products (id int PRIMARY KEY, name text, embedding vector<float, 3>)');
  await client.execute("CREATE CUSTOM INDEX products_ann ON vs.products (embedding) USING 'StorageAttachedIndex' " +
                       "WITH OPTIONS = {'similarity_function': 'dot_product'}");
});

after(async () => {
  if (client) await client.shutdown();
  if (server) await server.stop();
});

const unit = (x, y, z) => { const n = Math.hypot(x, y, z); return [x / n, y / n, z / n]; };

test('vectors bind and read back as types.Vector, and ANN OF ranks by a bound vector', async () => {
  const insert = 'INSERT INTO vs.products (id, name, embedding) VALUES (?, ?, ?)';
  const rows = [[1, 'red', unit(1, 0, 0)], [2, 'orange', unit(1, 0.5, 0)], [3, 'yellow', unit(1, 1, 0)],
                [4, 'green', unit(0, 1, 0)], [5, 'blue', unit(0, 0, 1)]];
  for (const [id, name, v] of rows) {
    await client.execute(insert, [id, name, new cassandra.types.Vector(new Float32Array(v), 'float')], { prepare: true });
  }
  const one = await client.execute('SELECT embedding FROM vs.products WHERE id = ?', [2], { prepare: true });
  const back = one.first().embedding;
  assert.strictEqual(back.length, 3);
  assert.ok(Math.abs(back[0] - unit(1, 0.5, 0)[0]) < 1e-6);

  const query = new cassandra.types.Vector(new Float32Array(unit(1, 0.2, 0)), 'float');
  const rs = await client.execute('SELECT id, similarity_dot_product(embedding, [1, 0, 0]) AS s FROM vs.products ' +
                                  'ORDER BY embedding ANN OF ? LIMIT 3', [query], { prepare: true });
  assert.deepStrictEqual(rs.rows.map((r) => r.id), [1, 2, 3]);
  assert.ok(Math.abs(rs.rows[0].s - 1.0) < 1e-6);  // (1 + 1) / 2

  const literal = await client.execute('SELECT name FROM vs.products ORDER BY embedding ANN OF [0, 0.1, 1] LIMIT 1');
  assert.strictEqual(literal.first().name, 'blue');
});

test('the driver reads the vector column and its index from system_schema', async () => {
  const table = await client.metadata.getTable('vs', 'products');
  const column = table.columns.find((c) => c.name === 'embedding');
  assert.strictEqual(column.type.code, cassandra.types.dataTypes.custom);
  assert.strictEqual(column.type.customTypeName, 'vector');
  assert.strictEqual(column.type.info[0].code, cassandra.types.dataTypes.float);
  assert.strictEqual(column.type.info[1], 3);
  const index = table.indexes.find((i) => i.name === 'products_ann');
  assert.ok(index && index.isCustomKind(), 'a CUSTOM index');
  assert.strictEqual(index.options.similarity_function, 'dot_product');
});

test('a vector of the wrong size is refused with Cassandra\'s message', async () => {
  await assert.rejects(client.execute('INSERT INTO vs.products (id, embedding) VALUES (9, [1, 2])'),
                       /expected 3 elements, but given 2/);
  await assert.rejects(client.execute('SELECT id FROM vs.products ORDER BY embedding ANN OF [1, 0, 0]'),
                       /requires a LIMIT that is not greater than 1000/);
});
