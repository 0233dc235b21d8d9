#!/usr/bin/python3
"""What partition buckets cost a read (issue 13): the same rows in a table without
partition buckets and in tables WITH partition_buckets = N, read through the CQL
port with the DataStax Python driver.

    bench/partition_buckets.py --port 9042 [--rows 20000] [--counts 4,16,64]

Needs a running server (`tessera server`); creates keyspace pbbench and drops it
at the end. Prints one line per table and measurement (rows/s, ms per query);
results are written down in bench/RESULTS.md.
"""
import argparse
import time

from cassandra.cluster import Cluster
from cassandra.concurrent import execute_concurrent_with_args
from cassandra.query import SimpleStatement


def timed(fn, repeat):
    best = None
    for _ in range(repeat):
        start = time.perf_counter()
        result = fn()
        elapsed = time.perf_counter() - start
        best = elapsed if best is None else min(best, elapsed)
    return best, result


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, default=9042)
    ap.add_argument("--rows", type=int, default=20000, help="rows of the one wide partition")
    ap.add_argument("--counts", default="4,16,64", help="partition_buckets values to compare with none")
    args = ap.parse_args()
    cluster = Cluster(["127.0.0.1"], port=args.port, protocol_version=4)
    session = cluster.connect()
    session.execute("DROP KEYSPACE IF EXISTS pbbench")
    session.execute("CREATE KEYSPACE pbbench WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}")
    tables = [("plain", "")] + [("pb%s" % n, " WITH partition_buckets = %s" % n) for n in args.counts.split(",")]
    wide = [("wide", i, "x" * 100) for i in range(args.rows)]
    narrow = [("p%d" % p, i, "y" * 100) for p in range(2000) for i in range(5)]
    print("%-6s %14s %16s %18s %16s %14s" % ("table", "insert rows/s", "partition rows/s", "LIMIT 100 DESC ms",
                                             "point read ms", "scan rows/s"))
    for name, options in tables:
        session.execute("CREATE TABLE pbbench.%s (k text, c int, v text, PRIMARY KEY (k, c))%s" % (name, options))
        insert = session.prepare("INSERT INTO pbbench.%s (k, c, v) VALUES (?, ?, ?)" % name)
        start = time.perf_counter()
        execute_concurrent_with_args(session, insert, wide, concurrency=64)
        insert_rate = len(wide) / (time.perf_counter() - start)
        execute_concurrent_with_args(session, insert, narrow, concurrency=64)

        whole = SimpleStatement("SELECT * FROM pbbench.%s WHERE k = 'wide'" % name, fetch_size=5000)
        t_whole, n = timed(lambda: sum(1 for _ in session.execute(whole)), 3)
        assert n == args.rows, n
        newest = session.prepare("SELECT * FROM pbbench.%s WHERE k = 'wide' ORDER BY c DESC LIMIT 100" % name)
        t_desc, _ = timed(lambda: [list(session.execute(newest)) for _ in range(100)], 3)
        point = session.prepare("SELECT v FROM pbbench.%s WHERE k = 'wide' AND c = ?" % name)
        t_point, _ = timed(lambda: [list(session.execute(point, (c,))) for c in range(0, args.rows, args.rows // 500)], 3)
        scan = SimpleStatement("SELECT * FROM pbbench.%s" % name, fetch_size=5000)
        t_scan, scanned = timed(lambda: sum(1 for _ in session.execute(scan)), 3)
        print("%-6s %14.0f %16.0f %18.2f %16.3f %14.0f" % (
            name, insert_rate, n / t_whole, t_desc * 1000 / 100, t_point * 1000 / 500, scanned / t_scan))
    session.execute("DROP KEYSPACE pbbench")
    cluster.shutdown()


if __name__ == "__main__":
    main()
