"""The live Key Visualizer on the admin port, while the README's main job runs.

`tessera demo` (serving, with an admin port) loads the shipped datasets. While
it loads, the /keyvisualizer page is rendered in headless Chromium: no console
errors, page errors, failed requests or HTTP errors, and a screenshot. After the
load, the named patterns are read from the page's JSON: a monotonic tail
(diagonal) for the timestamp-first table with a bucketed design as its DDL fix,
and an even spread for the host-first design. The hot band of a hammered
partition is checked in test_self_managing_tablets.py. The demo is stopped
by its pid with SIGTERM and must exit cleanly."""
import json
import os
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DATASETS = os.path.join(ROOT, "demo", "datasets")
RENDER = os.path.join(ROOT, "tests", "report", "run.sh")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def get(port, path):
    try:
        with urllib.request.urlopen("http://127.0.0.1:%d%s" % (port, path), timeout=30) as r:
            return r.status, r.headers.get("Content-Type", ""), r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.headers.get("Content-Type", ""), e.read().decode()


def render(target, png):
    r = subprocess.run([RENDER, target, str(png), "--wait-ready", "60"], capture_output=True, text=True, timeout=300)
    summary = json.loads(r.stdout.strip().splitlines()[-1]) if r.stdout.strip() else {}
    return r.returncode, summary, r.stderr


def tables_of(port):
    status, _, body = get(port, "/keyvisualizer/data.json")
    assert status == 200, body
    data = json.loads(body)
    return data, {t["name"]: t for t in data["tables"]}


def writes_in(table):
    return sum(r["writes"] * (c["end_micros"] - c["start_micros"]) / 1e6 for c in table["columns"] for r in c["rows"])


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    work = tmp_path_factory.mktemp("keyviz_demo")
    admin = free_port()
    log = open(work / "demo.log", "wb")
    proc = subprocess.Popen([os.environ["TESSERA_BINARY"], "demo", "--data-dir", str(work / "data"),
                             "--datasets", DATASETS, "--report-dir", str(work / "report"), "--port", "0",
                             "--admin-port", str(admin)], cwd=str(work), stdout=log, stderr=subprocess.STDOUT)
    try:
        yield work, admin, proc
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        log.close()


def test_the_page_renders_while_the_demo_loads_and_names_the_patterns(demo):
    work, admin, proc = demo
    report = work / "report" / "report.json"
    # The admin port answers once the node is up; the page then shows the load as it happens.
    deadline = time.monotonic() + 120
    loading = False
    while time.monotonic() < deadline and not loading:
        assert proc.poll() is None, (work / "demo.log").read_text()[-3000:]
        try:
            _, tables = tables_of(admin)
            loading = any(writes_in(t) > 0 for t in tables.values())
        except (urllib.error.URLError, ConnectionError):
            pass
        if not loading:
            time.sleep(0.2)
    assert loading, "no writes seen by the Key Visualizer within 120 s"
    assert not report.exists()

    during = work / "keyviz_during_load.png"
    code, summary, err = render("http://127.0.0.1:%d/keyvisualizer" % admin, during)
    loaded_before_render_ended = report.exists()
    assert code == 0, (summary, err[-2000:])
    assert summary["problems"] == [] and summary["title"] == "Tessera Key Visualizer"
    assert summary["canvases"] >= 1 and summary["keyviz"], summary
    assert during.stat().st_size > 20000
    print("rendered during the load: %s (%d bytes), sections %s; report written before the render ended: %s"
          % (during, during.stat().st_size, [(s["table"], s["pattern"]) for s in summary["keyviz"]],
             loaded_before_render_ended))

    deadline = time.monotonic() + 600
    while time.monotonic() < deadline and not report.exists():
        assert proc.poll() is None, (work / "demo.log").read_text()[-3000:]
        time.sleep(0.5)
    time.sleep(1)  # report.json is written before report.html
    data, tables = tables_of(admin)
    assert data["memory_bytes"] <= data["memory_bound_bytes"]
    by_time, by_host = tables["demo.access_by_time"], tables["demo.access_by_host"]
    tail = next(p for p in by_time["patterns"] if p["metric"] == "writes")
    assert tail["kind"] == "monotonic_tail" and tail["shape"] == "diagonal", tail
    assert tail["share"] >= 0.8 and "on ts" in tail["title"], tail  # kTailShare; a split just before a sample shares its parent's last writes evenly
    assert "PRIMARY KEY ((bucket, ts), seq)" in tail["ddl"] and tail["ddl"].startswith("CREATE TABLE demo."), tail
    assert by_time["pattern"]["kind"] == "monotonic_tail"  # the headline names the problem, not the reads after it
    # Splits between samples lose nothing: a replaced tablet's last writes go to its successors.
    for t in (by_time, by_host):
        assert writes_in(t) >= 0.99 * 30969, (t["name"], writes_in(t))
    spread = next(p for p in by_host["patterns"] if p["metric"] == "writes")
    assert spread["kind"] == "even" and spread["ddl"] == "", spread
    # Rows are tablets in key order, each ending at or before the next one's start, labelled with
    # partition keys; rows without load are not sent.
    for column in by_time["columns"]:
        rows = column["rows"]
        assert rows and [r["key"] for r in rows] == sorted(r["key"] for r in rows)
        for a, b in zip(rows, rows[1:]):
            assert a["end"] and a["end"] <= b["key"], (a, b)
        assert all(r["writes"] > 0 or r["reads"] > 0 or r["bytes"] > 0 for r in rows)
    assert any(r["label"].startswith("'1995-08-01") for c in by_time["columns"] for r in c["rows"])
    assert {e["kind"] for e in by_time["events"]} >= {"split"}
    print("patterns: %s" % {n: (t["pattern"]["kind"], round(t["pattern"]["share"], 2)) for n, t in tables.items()})

    with open(work / "report" / "report.html") as f:
        assert 'href="http://127.0.0.1:%d/keyvisualizer"' % admin in f.read()

    after = work / "keyviz_after_load.png"
    code, summary, err = render("http://127.0.0.1:%d/keyvisualizer" % admin, after)
    assert code == 0 and summary["problems"] == [], (summary, err[-2000:])
    shown = {s["table"]: s for s in summary["keyviz"]}
    assert shown["demo.access_by_time"]["pattern"] == "monotonic_tail"
    assert "bucket smallint" in shown["demo.access_by_time"]["ddl"]
    assert shown["demo.access_by_host"]["pattern"] == "even"
    assert summary["canvases"] == len(shown) == 4


def test_the_data_endpoint_filters_and_refuses_bad_parameters(demo):
    _, admin, _ = demo
    status, kind, body = get(admin, "/keyvisualizer/data.json?table=demo.access_by_host&columns=3")
    assert status == 200 and kind.startswith("application/json")
    data = json.loads(body)
    assert [t["name"] for t in data["tables"]] == ["demo.access_by_host"]
    assert len(data["tables"][0]["columns"]) <= 3
    status, _, body = get(admin, "/keyvisualizer/data.json?columns=many")
    assert status == 400 and "columns" in body
    status, kind, body = get(admin, "/keyvisualizer")
    assert status == 200 and kind.startswith("text/html") and "Key Visualizer" in body
