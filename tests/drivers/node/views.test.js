// Materialized views through the Node.js cassandra-driver (issue 31, item 2):
// a view kept by the base's writes, read through the driver, and the
// driver's view metadata (client.metadata.getMaterializedView reads
// system_schema.views and the view's columns).
'use strict';
const { test, before, after } = require('node:test');
const assert = require('node:assert');
const cassandra = require('cassandra-driver');
const { startServer } = require('./server_util');

let server, client;

before(async () => {
  server = await startServer('tessera_node_views_');
  client = new cassandra.Client({ contactPoints: ['127.0.0.1'], protocolOptions: { port: server.port },
                                  localDataCenter: 'datacenter1' });
  await client.connect();
  await client.execute("CREATE KEYSPACE mvn WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}");
  await client.execute('CREATE TABLE mvn.scores (game text, player text, score int, PRIMARY KEY (game, player))');
  await client.execute('CREATE MATERIALIZED VIEW mvn.by_score AS SELECT * FROM mvn.scores WHERE game IS NOT NULL ' +
                       'AND score IS NOT NULL AND player IS NOT NULL PRIMARY KEY (game, score, player) ' +
                       'WITH CLUSTERING ORDER BY (score DESC, player ASC)');
});

after(async () => {
  if (client) await client.shutdown();
  if (server) await server.stop();
});

test('a leaderboard view follows score updates', async () => {
  const put = 'INSERT INTO mvn.scores (game, player, score) VALUES (?, ?, ?)';
  for (const [player, score] of [['ann', 10], ['bob', 30], ['cyd', 20]]) {
    await client.execute(put, ['chess', player, score], { prepare: true });
  }
  await client.execute('UPDATE mvn.scores SET score = ? WHERE game = ? AND player = ?', [40, 'chess', 'ann'],
                       { prepare: true });
  const top = await client.execute('SELECT player, score FROM mvn.by_score WHERE game = ? LIMIT 2', ['chess'],
                                   { prepare: true });
  assert.deepStrictEqual(top.rows.map((r) => [r.player, r.score]), [['ann', 40], ['bob', 30]]);
  await assert.rejects(client.execute("INSERT INTO mvn.by_score (game, score, player) VALUES ('chess', 1, 'x')"),
                       /Cannot directly modify a materialized view/);
});

test('the driver reads the view from system_schema.views', async () => {
  const view = await client.metadata.getMaterializedView('mvn', 'by_score');
  assert.ok(view, 'view metadata');
  assert.strictEqual(view.tableName, 'scores');
  assert.strictEqual(view.includeAllColumns, true);
  assert.strictEqual(view.whereClause, 'game IS NOT NULL AND score IS NOT NULL AND player IS NOT NULL');
  assert.deepStrictEqual(view.partitionKeys.map((c) => c.name), ['game']);
  assert.deepStrictEqual(view.clusteringKeys.map((c) => c.name), ['score', 'player']);
  assert.deepStrictEqual(view.clusteringOrder, ['DESC', 'ASC']);
});
