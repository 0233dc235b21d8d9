"""The README's main job, run the way `scripts/run.sh` runs it but with the
exit flag: `tessera demo` loads the shipped real datasets through the loader,
reports, and exits. The report is checked against the data files, and its
HTML is rendered in headless Chromium (no console errors; a screenshot)."""
import gzip
import json
import os
import subprocess

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DATASETS = os.path.join(ROOT, "demo", "datasets")
RENDER = os.path.join(ROOT, "tests", "report", "run.sh")


def data_rows(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        return sum(1 for line in f if line.strip()) - 1  # minus the header


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    work = tmp_path_factory.mktemp("demo")
    out = subprocess.run([os.environ["TESSERA_BINARY"], "demo", "--data-dir", str(work / "data"),
                          "--datasets", DATASETS, "--report-dir", str(work / "report"), "--port", "0",
                          "--admin-port", "-1", "--exit-after-report"],
                         cwd=str(work), capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    with open(work / "report" / "report.json") as f:
        report = json.load(f)
    return work, out.stdout, report


def test_the_report_matches_the_data(demo):
    _, stdout, report = demo
    tables = {t["name"]: t for t in report["tables"]}
    assert set(tables) == {"demo.access_by_time", "demo.access_by_host", "demo.access_by_time_auto", "demo.metrics"}
    nasa = data_rows(os.path.join(DATASETS, "nasa_http", "nasa_19950801.tsv"))
    nab = data_rows(os.path.join(DATASETS, "nab", "nab_real_long.csv.gz"))
    assert nasa == 30969 and nab == 321206  # PROVENANCE.md
    for name, rows in [("demo.access_by_time", nasa), ("demo.access_by_host", nasa),
                       ("demo.access_by_time_auto", nasa), ("demo.metrics", nab)]:
        t = tables[name]
        assert t["file_rows"] == rows
        assert t["loaded"] + t["rejected"] == rows
        assert t["counted"] == rows - t["rejected"], t  # SELECT count(*) after the load
    assert "Tessera demo report" in stdout and "Key advice:" in stdout


def test_timestamp_first_writes_pile_on_the_last_tablet_and_the_fix_spreads_them(demo):
    _, _, report = demo
    tables = {t["name"]: t for t in report["tables"]}
    by_time, by_host = tables["demo.access_by_time"], tables["demo.access_by_host"]
    assert by_time["max_tablets"] >= 3 and by_host["max_tablets"] >= 3  # both tables were split by size
    assert by_time["last_tablet_write_share"] > 0.95, by_time["last_tablet_write_share"]
    assert by_host["last_tablet_write_share"] < 0.5, by_host["last_tablet_write_share"]
    assert by_host["busiest_tablet_write_share"] < 0.6, by_host["busiest_tablet_write_share"]
    advice = [a for a in report["key_advice"] if a["kind"] == "monotonic_leading_key"]
    assert [a["table"] for a in advice] == ["demo.access_by_time"], advice
    assert advice[0]["subject"] == "ts" and "ts order" in advice[0]["evidence"]
    # Whether the tail tablet is also held (hot above 2,500 rows/s for 2 s) depends on how fast this
    # machine loads; tests/drivers/test_self_managing_tablets.py shows the hold with fixed thresholds.


def test_buckets_auto_spreads_the_timestamp_first_table_and_reads_stay_in_time_order(demo):
    """Issue 13's third design: the timestamp-first table WITH buckets = 'auto'."""
    _, stdout, report = demo
    tables = {t["name"]: t for t in report["tables"]}
    by_time, by_host, auto = (tables["demo.access_by_time"], tables["demo.access_by_host"],
                              tables["demo.access_by_time_auto"])
    raise_ = auto["bucket_raise"]
    assert raise_["reason"].startswith("buckets 1 -> 16: buckets = 'auto' under a tail hotspot"), raise_
    print("buckets = 'auto': raised %.1f s into the load; busiest tablet per interval %.1f%% overall, %.1f%% after "
          "the raise (host first %.1f%%, timestamp first %.1f%%)" % (
              raise_["seconds"], 100 * auto["busiest_tablet_write_share"],
              100 * raise_["busiest_tablet_write_share_after"], 100 * by_host["busiest_tablet_write_share"],
              100 * by_time["busiest_tablet_write_share"]))
    assert raise_["busiest_tablet_write_share_after"] < 0.5 * by_time["busiest_tablet_write_share"]
    assert raise_["busiest_tablet_write_share_after"] <= by_host["busiest_tablet_write_share"] + 0.1
    q = {x["title"]: x for x in report["queries"]}
    plain = next(v for k, v in q.items() if k.startswith("One minute"))
    bucketed = next(v for k, v in q.items() if k.startswith("The same minute"))
    assert bucketed["rows"] == plain["rows"] and len(plain["rows"]) > 0
    assert "the same rows in the same order" in report["time_order"] and "timestamps ascending" in report["time_order"]
    assert "buckets raised" in stdout
    assert any(a["kind"] == "buckets" and a["table"] == "demo.access_by_time_auto" for a in report["key_advice"])


def test_the_seeds_queries_answer_from_the_data(demo):
    _, _, report = demo
    q = {x["title"]: x for x in report["queries"]}
    latest = next(v for k, v in q.items() if k.startswith("The latest 10 requests"))
    assert len(latest["rows"]) == 10
    times = [r[0] for r in latest["rows"]]
    assert times == sorted(times, reverse=True)  # newest first
    minute = next(v for k, v in q.items() if k.startswith("One minute"))
    # The file's requests in [12:00:00, 12:01:00) UTC, counted here independently.
    start, end = 807278400, 807278460
    with open(os.path.join(DATASETS, "nasa_http", "nasa_19950801.tsv")) as f:
        next(f)
        expected = sum(1 for line in f if start <= int(line.split("\t")[2]) < end)
    assert len(minute["rows"]) == expected and expected > 0
    series = next(v for k, v in q.items() if k.startswith("The latest point of every series"))
    assert len(series["rows"]) == 47


def test_the_html_report_renders_without_console_errors(demo):
    work, _, _ = demo
    shot = work / "report.png"
    r = subprocess.run([RENDER, str(work / "report" / "report.html"), str(shot)], capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr[-2000:]
    summary = json.loads(r.stdout.strip().splitlines()[-1])
    assert summary["problems"] == []
    assert summary["title"] == "Tessera demo report"
    assert summary["svgs"] == 4 and summary["cells"] > 50
    assert shot.stat().st_size > 20000  # a real screenshot, not an empty page
    print("screenshot: %s (%d bytes), %d heatmap cells" % (shot, shot.stat().st_size, summary["cells"]))


def test_the_renderer_does_catch_console_errors(tmp_path):
    bad = tmp_path / "bad.html"
    bad.write_text("<!DOCTYPE html><html><head><title>x</title></head><body>"
                   "<script>console.error('boom'); undefinedFunction();</script></body></html>")
    r = subprocess.run([RENDER, str(bad), str(tmp_path / "bad.png")], capture_output=True, text=True, timeout=300)
    assert r.returncode == 1
    problems = json.loads(r.stdout.strip().splitlines()[-1])["problems"]
    assert any("boom" in p for p in problems) and any("undefinedFunction" in p for p in problems)
