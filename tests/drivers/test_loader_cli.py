"""`tessera load` from the command line against a real server: malformed
rows go to the reject file with their line numbers and reasons, the rest
load, and the summary says so."""
import os
import subprocess

from cassandra.cluster import Cluster


def test_malformed_rows_are_rejected_with_line_and_reason(server, tmp_path):
    c = Cluster(["127.0.0.1"], port=server.port, connect_timeout=10, control_connection_timeout=10)
    s = c.connect()
    s.execute("CREATE KEYSPACE IF NOT EXISTS loadcli WITH replication = "
              "{'class': 'SimpleStrategy', 'replication_factor': 1}")
    s.execute("CREATE TABLE IF NOT EXISTS loadcli.hits (host text, ts timestamp, bytes int, PRIMARY KEY (host, ts))")
    lines = ["host,ts,bytes"]
    lines += ["h%d,2024-05-01 10:%02d:00,%d" % (i % 7, i % 60, i * 10) for i in range(300)]
    lines[41] = "h1,2024-05-01 11:00:00,lots"      # line 42: not an int
    lines[99] = "h2,yesterday,5"                    # line 100: not a timestamp
    lines[150] = "h3,2024-05-01 11:00:00"           # line 151: a field missing
    lines.append(",2024-05-01 12:00:00,1")          # line 302: empty partition key, refused by the server
    data = tmp_path / "hits.csv"
    data.write_text("\n".join(lines) + "\n")
    rejects = tmp_path / "bad.tsv"
    r = subprocess.run([os.environ["TESSERA_BINARY"], "load", str(data), "--table", "loadcli.hits",
                        "--port", str(server.port), "--reject-file", str(rejects)],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert "loaded 297 of 301 records into loadcli.hits" in r.stdout, r.stdout
    assert "4 rejected (see %s)" % rejects in r.stdout
    assert "progress:" in r.stderr or r.stderr == ""  # plain progress lines when not on a terminal
    got = rejects.read_text().splitlines()
    assert got[0] == "# line\treason\trecord"
    by_line = {int(l.split("\t")[0]): l.split("\t")[1] for l in got[1:]}
    assert sorted(by_line) == [42, 100, 151, 302]
    assert "lots" in by_line[42] and "yesterday" in by_line[100]
    assert "expected 3 fields, found 2" in by_line[151]
    assert "0x2200" in by_line[302]
    # 300 data rows, 3 rejected locally; (host, ts) repeats every 420 rows, so each loaded row is its own.
    assert s.execute("SELECT count(*) FROM loadcli.hits").one()[0] == 297
    c.shutdown()
