"""bit_reverse(bigint [, preserve_sign]) — Spanner's BIT_REVERSE — as a
value in INSERT (literal and bind marker) and as a selector: consecutive
ids become keys far apart, and reversing twice gives the id back."""
from cassandra import InvalidRequest
from cassandra.cluster import Cluster
import pytest


def test_bit_reverse_in_writes_and_selectors(server):
    cluster = Cluster(["127.0.0.1"], port=server.port, protocol_version=4)
    try:
        s = cluster.connect()
        s.execute("CREATE KEYSPACE IF NOT EXISTS br WITH replication = "
                  "{'class': 'SimpleStrategy', 'replication_factor': 1}")
        s.execute("CREATE TABLE br.orders (id bigint PRIMARY KEY, n bigint) WITH distribution = 'range'")
        s.execute("INSERT INTO br.orders (id, n) VALUES (bit_reverse(1, true), 1)")
        insert = s.prepare("INSERT INTO br.orders (id, n) VALUES (bit_reverse(?, true), ?)")
        for n in range(2, 9):
            s.execute(insert, [n, n])
        rows = list(s.execute("SELECT id, n, bit_reverse(id, true) AS back, bit_reverse(n) AS whole FROM br.orders"))
        assert sorted(r.n for r in rows) == list(range(1, 9))
        by_n = {r.n: r for r in rows}
        assert by_n[1].id == 1 << 62 and by_n[2].id == 1 << 61 and by_n[3].id == 3 << 61
        assert by_n[1].whole == -(1 << 63)  # all 64 bits: 1 becomes the sign bit
        assert all(r.back == r.n for r in rows)  # an involution
        # Range order of the keys is not insertion order: 1..8 land all over the key space.
        assert [r.n for r in rows] == [8, 4, 2, 6, 1, 5, 3, 7]
        with pytest.raises(InvalidRequest):
            s.execute("SELECT bit_reverse(id, maybe) FROM br.orders")
        with pytest.raises(InvalidRequest):
            s.execute("INSERT INTO br.orders (id, n) VALUES (bit_reverse('x'), 1)")
    finally:
        cluster.shutdown()
