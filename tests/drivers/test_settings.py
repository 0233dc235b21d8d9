"""Issue 32, items 2 and 4: the settings a node runs with are shown in
system_views.settings (Cassandra 4.0's virtual table) and on the admin port
(GET /settings), and they are the ones given on the command line or derived
from the machine: the commit-log mode with its window or period, the block
cache sized from memory, the bloom filters and where index and filter blocks
live. Read through the Python driver."""
import json

from conftest import connect, own_server


def settings_of(server):
    cluster, session = connect(server)
    try:
        rows = list(session.execute("SELECT name, value FROM system_views.settings"))
        one = session.execute("SELECT value FROM system_views.settings WHERE name = 'commitlog_sync'").one()
    finally:
        cluster.shutdown()
    status, body = server.admin("GET", "/settings")
    assert status == 200, body
    return rows, one, json.loads(body)


def test_group_mode_and_its_window_are_shown_as_given():
    for server in own_server("--commitlog-sync", "group", "--commitlog-sync-group-window-ms", "2.5"):
        rows, one, admin = settings_of(server)
        names = [r.name for r in rows]
        assert names == sorted(names)
        table = {r.name: r.value for r in rows}
        assert table == admin  # the same settings on both doors
        assert one.value == "group"
        assert table["commitlog_sync"] == "group"
        assert table["commitlog_sync_group_window"] == "2.5ms"
        assert table["commitlog_sync_period"] == "null"
        assert table["request_threads"] == "64"  # a synced mode's default
        assert table["native_transport_port"] == str(server.port)


def test_periodic_default_and_storage_settings_derived_from_the_machine():
    for server in own_server():
        rows, one, admin = settings_of(server)
        table = {r.name: r.value for r in rows}
        assert table == admin
        assert one.value == "periodic"
        assert table["commitlog_sync_period"] == "10000ms"  # Cassandra's default
        assert table["commitlog_sync_group_window"] == "null"
        # A quarter of the memory this process may use, at least 64 MiB.
        with open("/proc/meminfo") as f:
            total = int(next(line for line in f if line.startswith("MemTotal:")).split()[1]) * 1024
        cache = int(table["block_cache_bytes"])
        assert 64 << 20 <= cache <= max(total // 4, 64 << 20)
        assert table["bloom_filter_bits_per_key"] == "10"
        assert table["bloom_filter_prefix_bytes"] == "12"
        assert table["index_and_filter_blocks"] == "pinned in table readers"
        assert table["max_successive_merges"] == "16"
        # The block cache on /metrics is the one in the settings.
        status, metrics = server.admin("GET", "/metrics")
        assert status == 200
        capacity = next(line for line in metrics.splitlines()
                        if line.startswith("tessera_storage_block_cache_capacity_bytes "))
        assert int(float(capacity.split()[1])) == cache
