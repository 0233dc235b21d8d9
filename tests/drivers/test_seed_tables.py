"""The seeds' example tables, created and queried through the DataStax Python
driver against a real `tessera server`, including seed 002's compound-key
queries: those served as prefix scans or single-row reads, and those refused
without ALLOW FILTERING."""
import datetime
import decimal

import pytest
from cassandra import InvalidRequest
from cassandra.cluster import Cluster

T0 = datetime.datetime(2026, 11, 21, 8, 0, 0)


@pytest.fixture(scope="module")
def session(server):
    c = Cluster(["127.0.0.1"], port=server.port, connect_timeout=10, control_connection_timeout=10)
    s = c.connect()
    s.execute("CREATE KEYSPACE IF NOT EXISTS seeds WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}")
    s.set_keyspace("seeds")
    yield s
    c.shutdown()


def test_access_log_latest_requests_of_a_host(session):
    # Seeds 000/003: an access log; per host, newest first, on a range-distributed table.
    session.execute("CREATE TABLE access_log (host text, ts timestamp, path text, status int, "
                    "PRIMARY KEY (host, ts)) WITH CLUSTERING ORDER BY (ts DESC) AND distribution = 'range'")
    insert = session.prepare("INSERT INTO access_log (host, ts, path, status) VALUES (?, ?, ?, ?)")
    for i in range(60):
        session.execute(insert, ("host-%d" % (i % 3), T0 + datetime.timedelta(seconds=i), "/p%d" % i, 200))
    latest = list(session.execute("SELECT ts, path FROM access_log WHERE host = 'host-1' LIMIT 5"))
    assert [r.path for r in latest] == ["/p58", "/p55", "/p52", "/p49", "/p46"]
    window = list(session.execute("SELECT path FROM access_log WHERE host = 'host-0' AND ts >= %s AND ts < %s",
                                  (T0 + datetime.timedelta(seconds=10), T0 + datetime.timedelta(seconds=20))))
    assert sorted(r.path for r in window) == ["/p12", "/p15", "/p18"]
    # Range tables: a key range over partitions is a scan, not a filter.
    hosts = {r.host for r in session.execute("SELECT host FROM access_log WHERE host >= 'host-1'")}
    assert hosts == {"host-1", "host-2"}


def test_logistics_order_events_latest_n(session):
    # Seed 002, scenario 1: one partition per order, events newest first ("tall" table).
    session.execute("CREATE TABLE order_events (order_id text, gmt_created timestamp, detail text, "
                    "PRIMARY KEY (order_id, gmt_created)) WITH CLUSTERING ORDER BY (gmt_created DESC)")
    insert = session.prepare("INSERT INTO order_events (order_id, gmt_created, detail) VALUES (?, ?, ?)")
    steps = ["collected", "loaded", "arrived hub", "out for delivery", "signed"]
    for order in ("o-1", "o-2"):
        for i, step in enumerate(steps):
            session.execute(insert, (order, T0 + datetime.timedelta(hours=i), step))
    top3 = [r.detail for r in session.execute("SELECT detail FROM order_events WHERE order_id = 'o-1' LIMIT 3")]
    assert top3 == ["signed", "out for delivery", "arrived hub"]
    assert len(list(session.execute("SELECT * FROM order_events WHERE order_id = 'o-2'"))) == 5


def test_machine_metrics_time_slice_of_one_series(session):
    # Seed 002, scenario 2: monitoring; (metric, host) partitions, time clustering.
    session.execute("CREATE TABLE metrics (metric text, host text, ts timestamp, value double, "
                    "PRIMARY KEY ((metric, host), ts))")
    insert = session.prepare("INSERT INTO metrics (metric, host, ts, value) VALUES (?, ?, ?, ?)")
    assert insert.routing_key_indexes == [0, 1]
    for host in ("192.168.1.1", "192.168.1.2"):
        for m in range(30):
            session.execute(insert, ("cpu.user", host, T0 + datetime.timedelta(minutes=m), float(m)))
    rows = list(session.execute("SELECT value FROM metrics WHERE metric = 'cpu.user' AND host = '192.168.1.2' "
                                "AND ts >= %s AND ts <= %s",
                                (T0 + datetime.timedelta(minutes=5), T0 + datetime.timedelta(minutes=9))))
    assert [r.value for r in rows] == [5.0, 6.0, 7.0, 8.0, 9.0]
    assert session.execute("SELECT max(value) FROM metrics WHERE metric = 'cpu.user' AND host = '192.168.1.1'").one()[0] == 29.0


def test_campus_card_payments_by_device(session):
    # Seed 003: student-card payments; the device id spreads writes, order numbers grow per device.
    session.execute("CREATE TABLE card_payments (device_id text, order_number bigint, card_id text, seller_id text, "
                    "amount decimal, PRIMARY KEY (device_id, order_number)) WITH CLUSTERING ORDER BY (order_number DESC)")
    insert = session.prepare("INSERT INTO card_payments (device_id, order_number, card_id, seller_id, amount) "
                             "VALUES (?, ?, ?, ?, ?)")
    for n in range(1, 11):
        session.execute(insert, ("dev-7", n, "card-%d" % (n % 4), "canteen", decimal.Decimal("%d.50" % n)))
    last = session.execute("SELECT order_number, amount FROM card_payments WHERE device_id = 'dev-7' LIMIT 1").one()
    assert (last.order_number, last.amount) == (10, decimal.Decimal("10.50"))
    by_card = list(session.execute("SELECT order_number FROM card_payments WHERE device_id = 'dev-7' AND card_id = 'card-1' "
                                   "ALLOW FILTERING"))
    assert [r.order_number for r in by_card] == [9, 5, 1]


def test_seed_002_compound_key_queries(session):
    # city partitions; last_name, first_name clustering: prefix matching from the left.
    session.execute("CREATE TABLE people (city text, last_name text, first_name text, location text, "
                    "PRIMARY KEY (city, last_name, first_name))")
    for city, last, first in [("hangzhou", "Potter", "Harry"), ("hangzhou", "Potter", "James"),
                              ("hangzhou", "Weasley", "Ron"), ("hangzhou", "Weasley", "Ginny"),
                              ("shanghai", "Potter", "Lily")]:
        session.execute("INSERT INTO people (city, last_name, first_name, location) VALUES (%s, %s, %s, 'x')",
                        (city, last, first))
    # 1. prefix scan and 2. single-row read: served directly.
    q1 = list(session.execute("SELECT first_name FROM people WHERE city = 'hangzhou' AND last_name = 'Potter'"))
    assert [r.first_name for r in q1] == ["Harry", "James"]
    q2 = list(session.execute("SELECT first_name FROM people WHERE city = 'hangzhou' AND last_name = 'Potter' "
                              "AND first_name = 'James'"))
    assert [r.first_name for r in q2] == ["James"]
    # 3, 4, 5, 6: skip a clustering column, range over the partition key, filter after a range: refused...
    refused = ["SELECT * FROM people WHERE city = 'hangzhou' AND first_name = 'Harry'",
               "SELECT * FROM people WHERE city >= 'hangzhou'",
               "SELECT * FROM people WHERE city = 'hangzhou' AND last_name >= 'P' AND first_name = 'James'",
               "SELECT * FROM people WHERE city = 'hangzhou' AND last_name >= 'P' AND first_name = 'Ron'"]
    for q in refused:
        with pytest.raises(InvalidRequest):
            session.execute(q)
    # ...and answered (by filtering the scan) with ALLOW FILTERING.
    q3 = list(session.execute(refused[0] + " ALLOW FILTERING"))
    assert [(r.last_name, r.first_name) for r in q3] == [("Potter", "Harry")]
    q5 = list(session.execute(refused[2] + " ALLOW FILTERING"))
    assert [(r.last_name, r.first_name) for r in q5] == [("Potter", "James")]
    q6 = list(session.execute(refused[3] + " ALLOW FILTERING"))
    assert [(r.last_name, r.first_name) for r in q6] == [("Weasley", "Ron")]
    assert {r.city for r in session.execute(refused[1] + " ALLOW FILTERING")} == {"hangzhou", "shanghai"}
