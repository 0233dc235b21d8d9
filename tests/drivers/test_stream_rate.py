"""A tablet migration's streaming is rate limited and shown (issue 11): on a
local cluster whose nodes stream at most 1 MiB/s (--stream-mib-per-second),
moving the only replica of a 3 MiB tablet streams no faster than that, as
its report says (stream_bytes_per_second), and the driving node's /metrics
count the bytes and keys streamed and show the limit. Every row reads back
at ONE from the new replica."""
import json
import os

import pytest
from cassandra import ConsistencyLevel
from cassandra.query import SimpleStatement

from local_cluster import metric, node_session, running_cluster

BINARY = os.environ["TESSERA_BINARY"]
MIB = 1 << 20


@pytest.fixture
def cluster():
    yield from running_cluster(BINARY, 2, ["--cluster-lease-seconds=3", "--stream-mib-per-second=1"])


def test_streaming_keeps_to_the_nodes_limit_and_is_counted(cluster):
    d, s = node_session(cluster, 1)
    try:
        s.execute("CREATE KEYSPACE sr WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}")
        s.execute("CREATE TABLE sr.t (k int PRIMARY KEY, v text) WITH initial_tablets = 1")
        insert = s.prepare("INSERT INTO sr.t (k, v) VALUES (?, ?)")
        insert.consistency_level = ConsistencyLevel.ONE
        values = {k: os.urandom(512).hex() for k in range(3000)}  # 1 KiB each: 3 MiB
        for k, v in values.items():
            s.execute(insert, (k, v))
        tablet = cluster.admin_json(1, "tablets", "--keyspace", "sr", "--table", "t")["tablets"][0]
        source = tablet["replicas"][0]["address"]
        target = cluster.address(2) if source == cluster.address(1) else cluster.address(1)
        assert metric(cluster, 1, "tessera_migration_stream_limit_bytes_per_second") == MIB
        before = metric(cluster, 1, "tessera_migration_streamed_bytes_total")
        code, out, err = cluster.admin(1, "move", "--keyspace", "sr", "--table", "t", "--start", tablet["start"],
                                       "--from", source, "--to", target, "--json", timeout=120)
        assert code == 0, (out, err)
        report = json.loads(out)
        print("streamed %d keys, %.2f MiB in %.1f s: %.2f MiB/s" % (
            report["streamed_keys"], report["streamed_bytes"] / MIB, report["streaming_micros"] / 1e6,
            report["stream_bytes_per_second"] / MIB))
        assert report["completed"], report
        assert report["streamed_keys"] == 3000 and report["streamed_bytes"] > 3 * MIB, report
        # At most the limit (RocksDB's limiter hands out a 100 ms burst ahead: 1.02 MiB/s measured).
        assert report["stream_bytes_per_second"] <= 1.1 * MIB, report
        # The node that drove the move counts what it streamed.
        assert metric(cluster, 1, "tessera_migration_streamed_bytes_total") - before == report["streamed_bytes"]
        assert metric(cluster, 1, "tessera_migration_streamed_keys_total") >= 3000
        moved = cluster.admin_json(1, "tablets", "--keyspace", "sr", "--table", "t")["tablets"][0]
        assert [r["address"] for r in moved["replicas"]] == [target]
        rows = {r.k: r.v for r in s.execute(SimpleStatement("SELECT k, v FROM sr.t", fetch_size=500,
                                                            consistency_level=ConsistencyLevel.ONE))}
        assert rows == values
    finally:
        d.shutdown()
