"""scripts/history.py (the SQLite history of runs: add, machines, trend, gate), dmabench.history_frame and
plot.py trend, on every committed results file and on planted runs."""
import contextlib
import copy
import hashlib
import json
import lzma
import re
import os
import shutil
import sqlite3
import subprocess
import sys
from xml.etree import ElementTree

import pytest

from merging import merged
from test_hostile_input import HOSTILE, inproc, one_line
from test_scripts import ROOT, SCRIPTS, document, result, run, tracked, with_interval
from test_version import binary

from dmabench import history
from dmabench import ResultsError, history_frame

RESULTS = os.path.join(ROOT, "results")
REPEAT = os.path.join(RESULTS, "h200x1", "pools", "start2", "repeat-pinned-2.json")  # the latest noise-repeat run


def committed():
    """Every committed results file under results/ ({path: records}), found without history.py: the tracked .json
    files (and .json.xz: committed xz-compressed, results/h200x1/crossover/) whose top-level `schema` is dmabench/1,
    and journals (none is committed today). Tracked only: scripts/run.sh leaves an untracked results/latest.json,
    which is no committed run (issue 52)."""
    found = {}
    for path in tracked("results"):
        if path.endswith(".journal"):
            found[path] = None
        elif path.endswith((".json", ".json.xz")):
            with (lzma.open(path, "rt", encoding="utf-8") if path.endswith(".xz") else open(path, encoding="utf-8")) as f:
                doc = json.load(f)
            if isinstance(doc, dict) and doc.get("schema") == "dmabench/1":
                found[path] = len(doc["results"])
    return found


def counts(db):
    with sqlite3.connect(db) as conn:
        return conn.execute("SELECT (SELECT count(*) FROM runs), (SELECT count(*) FROM records), "
                            "(SELECT count(*) FROM verdicts)").fetchone()


def digest(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


@pytest.fixture(scope="module")
def committed_db(tmp_path_factory):
    """A database of every committed results file, made once by `history.py add` of each (not of results/, which may
    hold untracked files)."""
    db = tmp_path_factory.mktemp("history") / "committed.sqlite"
    p = run("history.py", "add", *committed(), "--db", db)
    assert p.returncode == 0, p.stderr
    return db, p.stdout


@pytest.fixture
def db_copy(committed_db, tmp_path):
    """A copy of the committed database that a test may write to."""
    copy_path = tmp_path / "h.sqlite"
    shutil.copy(committed_db[0], copy_path)
    return copy_path


def test_every_committed_results_file_imports(committed_db):
    db, out = committed_db
    files = committed()
    assert len(files) >= 50 and None not in files.values()  # no journal is committed: each file is a whole run
    assert sum(f.endswith(".json.xz") for f in files) >= 2  # the compressed crossover levels files are imported too
    runs, records, verdicts = counts(db)
    assert (runs, records, verdicts) == (len(files), sum(files.values()), 0)
    assert f"{len(files)} of {len(files)} runs added; {db} holds {runs} runs, {records} records" in out
    assert sum(line.split(": ", 1)[1].startswith("added ") for line in out.splitlines()[:-1]) == len(files)
    # a run from before context.started_at (the oldest schema revision) starts at its date; a newer one at started_at
    with sqlite3.connect(db) as conn:
        start = dict(conn.execute("SELECT source, started_at FROM runs"))
        machines = dict(conn.execute("SELECT machine, count(*) FROM runs GROUP BY machine"))
    assert start[os.path.join(RESULTS, "h200x2", "default.json")] == "2026-11-29T22:50:21.000Z"
    assert start[REPEAT] == "2026-12-03T08:01:44.548Z"
    assert {k: n for k, n in machines.items() if not k.startswith("host ")} == {
        "1 x NVIDIA H200": sum("h200x1" in f for f in files), "2 x NVIDIA H200": sum("h200x2" in f for f in files),
        "1 x NVIDIA H100 80GB HBM3": sum("h100x1" in f for f in files)}
    assert sum(n for k, n in machines.items() if k.startswith("host ")) == sum("ci-vm-2cpu" in f for f in files)
    p = run("history.py", "machines", "--db", db)
    assert p.returncode == 0 and f"| 2 x NVIDIA H200 | {machines['2 x NVIDIA H200']} | " in p.stdout, p.stdout


def test_importing_again_is_a_no_op(db_copy):
    before = counts(db_copy)
    # the committed files again (not results/ itself: scripts/run.sh leaves an untracked results/latest.json there,
    # which would be a new run; issue 52), and one of them twice
    p = run("history.py", "add", *committed(), REPEAT, "--db", db_copy)
    assert p.returncode == 0, p.stderr
    assert f"0 of {before[0] + 1} runs added" in p.stdout and "already stored" in p.stdout.splitlines()[-2]
    assert counts(db_copy) == before


def test_a_journal_is_replaced_by_its_finished_file(tmp_path):
    with open(REPEAT, encoding="utf-8") as f:
        doc = json.load(f)
    header = {"schema": "dmabench-journal/1", "results_schema": "dmabench/1", "context": doc["context"]}
    journal = tmp_path / "run.json.journal"
    journal.write_text("".join(json.dumps(v) + "\n" for v in [header, *doc["results"][:4]]))
    db = tmp_path / "h.sqlite"
    p = run("history.py", "add", journal, "--db", db)
    assert p.returncode == 0 and counts(db) == (1, 4, 0), p.stdout + p.stderr
    finished = tmp_path / "done" / "run.json"
    finished.parent.mkdir()
    finished.write_text(json.dumps(doc))
    p = run("history.py", "add", finished, "--db", db)  # the same run, finished: it replaces its part
    assert p.returncode == 0 and "added, replacing a part of it" in p.stdout and counts(db) == (1, 11, 0), p.stdout
    p = run("history.py", "add", journal, "--db", db)  # the part again: the run already holds it
    assert p.returncode == 0 and "skipped, a part of stored run" in p.stdout and counts(db) == (1, 11, 0), p.stdout


def slowed_copy(path, factor, started_at):
    """The run at `path` as a later run (`started_at`) whose every ok case is `factor` times slower."""
    with open(path, encoding="utf-8") as f:
        doc = json.load(f)
    doc["context"]["started_at"] = started_at
    for r in doc["results"]:
        if r["status"] != "ok":
            continue
        for k in r["latency_us"]:
            r["latency_us"][k] *= factor
        r["p50_interval_us"] = [x * factor for x in r["p50_interval_us"]]
        for k in ("algbw", "busbw"):
            r[f"{k}_GBps"] /= factor
            r[f"{k}_interval_GBps"] = [None if x is None else x / factor for x in r[f"{k}_interval_GBps"]][::-1]
    return doc


def verdict_lines(stdout):
    return {line.split()[1]: line.split()[0] for line in stdout.splitlines() if line.split()[:1] and
            line.split()[0] in history.VERDICTS}


def levels_copy(path, factor, start, k=6, scatter=0.002):
    """A levels file of `path` re-run in k fresh processes at `start` (slowed_copy), process j x (1 + scatter j)."""
    docs = [slowed_copy(path, factor * (1 + scatter * j), start) for j in range(k)]
    return merged(docs, [f"process-{j + 1}.json" for j in range(k)])


def test_gate_finds_a_planted_20_percent_slower_run_and_not_an_unchanged_one(committed_db, tmp_path):
    db = committed_db[0]
    kept = digest(db)
    slow = tmp_path / "slow.json"
    slow.write_text(json.dumps(levels_copy(REPEAT, 1.2, "2026-12-04T10:00:00.000Z")))
    p = run("history.py", "gate", slow, "--db", db)
    assert p.returncode == 1, p.stdout + p.stderr
    verdicts = verdict_lines(p.stdout)
    assert len(verdicts) == 11
    # the steady cases (the bandwidth-bound 256 MiB copies: their earlier runs scatter by 1-6%) are slower, judged on
    # 6 draws against the history's; cases whose runs scatter by 20% and more (ce-batch on 4 KiB and 64 KiB pages)
    # may be ambiguous. The committed results grow with every run: only what holds for any history is asserted
    for name in ("h2d/ce/pipelined/dev=0/256MiB/host=pinned,numa=local", "d2h/ce/pipelined/dev=0/256MiB/host=pinned,numa=local",
                 "h2d-bidir/ce/pipelined/dev=0/256MiB/host=pinned,numa=local"):
        assert verdicts[name] == "slower", (name, p.stdout)
    [fail] = [line for line in p.stdout.splitlines() if line.startswith("slower  d2h/ce/pipelined/dev=0/256MiB")]
    assert re.search(r"\(between 6 processes\): change \+[12]\d\.\d% against (\d+ draws from )?(\d+) runs \(median [\d.]+ µs, "
                     r"spread \d+\.\d%\), minimum 2%, rank-sum p [\d.e-]+ over \d+\+6 draws, supported", fail), fail
    # (the run unchanged is no A/A test here: its 6 "processes" are copies of one process, whose level is one draw
    # of the machine, and the rank test assumes 6 independent draws; gate-rates measures A/A with real processes)
    # one process at 1.2x: one draw against the history's supports nothing: ambiguous, never slower
    one = tmp_path / "one.json"
    one.write_text(json.dumps(slowed_copy(REPEAT, 1.2, "2026-12-04T12:00:00.000Z")))
    p = run("history.py", "gate", one, "--db", db)
    assert p.returncode == 0 and verdict_lines(p.stdout)["d2h/ce/pipelined/dev=0/256MiB/host=pinned,numa=local"] == \
        "ambiguous", p.stdout
    assert digest(db) == kept  # without --record the gate only reads


def run_at(start, cases, machine="GPU X"):
    """A run started at `start` with ok copy cases {bytes: p50 µs} (+-1% intervals) on two GPUs named `machine`."""
    doc = document([with_interval(result("copy", "ce", size, "oneshot", p50), 0.01) for size, p50 in cases.items()])
    doc["context"]["started_at"] = start
    for d in doc["context"]["machine"]["devices"]:
        d["name"] = machine
    return doc


def add_runs(tmp_path, docs):
    db = tmp_path / "h.sqlite"
    paths = []
    for i, doc in enumerate(docs):
        paths.append(tmp_path / f"run{i}.json")
        paths[-1].write_text(json.dumps(doc))
    p = run("history.py", "add", *paths, "--db", db)
    assert p.returncode == 0, p.stderr
    return db


def levels_at(start, cases, machine="GPU X", k=5, scatter=0.01):
    """run_at's run in k fresh processes merged (a levels file): process j's p50s x (1 + scatter (j - (k - 1) / 2))."""
    docs = [run_at(start, {b: p * (1 + scatter * (j - (k - 1) / 2)) for b, p in cases.items()}, machine) for j in range(k)]
    return merged(docs, [f"process-{j + 1}.json" for j in range(k)])


def test_gate_verdicts_new_failed_and_machine_kinds(tmp_path):
    # 4 earlier runs of 5 processes each: 1 KiB steady (100 +- 1 µs), 4 KiB spread (+-20%), 16 KiB in two runs only;
    # the other machine kind 3x slower
    steady, spread, two = [100, 101, 99, 100], [100, 130, 80, 115], [50, 51]
    docs = [levels_at(f"2026-01-0{i + 1}T00:00:00Z", {1024: steady[i], 4096: spread[i], **({16384: two[i]} if i < 2 else {})})
            for i in range(4)]
    docs += [levels_at(f"2026-01-0{i + 1}T12:00:00Z", {1024: 300.0}, machine="GPU Y") for i in range(4)]
    db = add_runs(tmp_path, docs)
    new = levels_at("2026-02-01T00:00:00Z", {1024: 101.0, 4096: 105.0, 16384: 50.0, 65536: 10.0})
    path = tmp_path / "new.json"
    path.write_text(json.dumps(new))
    p = run("history.py", "gate", path, "--db", db, "--runs", "20", "--min-runs", "11")  # 16 KiB: 10 draws, new
    assert p.returncode == 0, p.stdout + p.stderr
    assert verdict_lines(p.stdout) == {"copy/ce/oneshot/dev=0,1/1024": "same", "copy/ce/oneshot/dev=0,1/4096": "same",
                                       "copy/ce/oneshot/dev=0,1/16384": "new", "copy/ce/oneshot/dev=0,1/65536": "new"}
    assert "10 draws from 2 earlier runs, 11 needed" in p.stdout, p.stdout
    assert "p50 101.00 µs [98.98, 103.02] (between 5 processes): change +" in p.stdout, p.stdout
    # 1 KiB 8% slower: every one of its 5 draws above the history's 20: slower; a 10% minimum takes it back
    new = levels_at("2026-02-01T00:00:00Z", {1024: 108.0, 4096: 105.0})
    path.write_text(json.dumps(new))
    p = run("history.py", "gate", path, "--db", db)
    assert p.returncode == 1 and verdict_lines(p.stdout)["copy/ce/oneshot/dev=0,1/1024"] == "slower", p.stdout
    assert "change +8.0% against 20 draws from 4 runs (median 100.00 µs, spread 1.5%), minimum 5%, rank-sum p " \
        "3.8e-05 over 20+5 draws, supported" in p.stdout, p.stdout  # 2 / C(25, 5)
    assert run("history.py", "gate", path, "--db", db, "--min-change", "launch=0.1").returncode == 0
    # the same 8% in one process: one draw against 20 supports nothing (p >= 2/21): ambiguous, exit 0
    path.write_text(json.dumps(run_at("2026-02-01T00:00:00Z", {1024: 108.0})))
    p = run("history.py", "gate", path, "--db", db)
    assert p.returncode == 0 and verdict_lines(p.stdout)["copy/ce/oneshot/dev=0,1/1024"] == "ambiguous", p.stdout
    # GPU Y's runs never count for GPU X: against GPU Y's 300 µs a 108 µs run is faster, not a regression
    path.write_text(json.dumps(levels_at("2026-02-01T00:00:00Z", {1024: 108.0}, machine="GPU Y")))
    p = run("history.py", "gate", path, "--db", db)
    assert p.returncode == 0 and verdict_lines(p.stdout) == {"copy/ce/oneshot/dev=0,1/1024": "faster"}, p.stdout
    assert "2 x GPU Y" in p.stdout
    # a case that failed where earlier runs had it ok is failed
    new = run_at("2026-02-01T00:00:00Z", {4096: 105.0})
    new["results"].insert(0, result("copy", "ce", 1024, "oneshot", 0, status="failed", reason="validation: byte 3"))
    path.write_text(json.dumps(new))
    p = run("history.py", "gate", path, "--db", db)
    assert p.returncode == 1 and "failed  copy/ce/oneshot/dev=0,1/1024  failed: validation: byte 3 (ok in 4 earlier " \
        "runs)" in p.stdout, p.stdout


def configured(doc, config):
    doc["context"]["config"] = config
    return doc


def test_gate_fails_a_case_ok_before_and_skipped_or_missing_now(tmp_path, monkeypatch):
    # issue 52: a broken peer path skips its cases, and the gate dropped them (compare called them failed)
    config = {"name": "gate", "sizes": [1024, 4096, 16384]}
    sizes = {1024: 100.0, 4096: 200.0, 16384: 300.0}
    db = add_runs(tmp_path, [configured(run_at(f"2026-01-0{i + 1}T00:00:00Z", sizes), config) for i in range(3)])
    new = configured(run_at("2026-02-01T00:00:00Z", {1024: 100.0}), config)
    new["results"].append(result("copy", "ce", 4096, "oneshot", 0, status="skipped", reason="peer access unavailable"))
    path = tmp_path / "new.json"
    path.write_text(json.dumps(new))
    junit_path = tmp_path / "gate.xml"
    exe = binary()  # the program writes the JUnit file: its part is left out without one
    if exe:
        monkeypatch.setenv("DMABENCH_BINARY", exe)
    p = run("history.py", "gate", path, "--db", db, *(["--junit", junit_path] if exe else []))
    assert p.returncode == 1, p.stdout + p.stderr
    assert verdict_lines(p.stdout) == {"copy/ce/oneshot/dev=0,1/1024": "same", "copy/ce/oneshot/dev=0,1/4096": "failed",
                                       "copy/ce/oneshot/dev=0,1/16384": "failed"}, p.stdout
    assert "copy/ce/oneshot/dev=0,1/4096  skipped: peer access unavailable (ok in 3 earlier runs)" in p.stdout
    assert "copy/ce/oneshot/dev=0,1/16384  missing: not in this run, whose config lists it (ok in 3 earlier runs of " \
        "this config, the last started 2026-01-03T00:00:00.000Z: " in p.stdout, p.stdout
    failures = {c.get("name"): c.find("failure").get("message") for c in ElementTree.parse(junit_path).iter("testcase")
                if c.find("failure") is not None} if exe else {}
    assert not exe or set(failures) == {"copy/ce/oneshot/dev=0,1/4096", "copy/ce/oneshot/dev=0,1/16384"}, failures
    assert not exe or failures["copy/ce/oneshot/dev=0,1/4096"].startswith("failed: skipped: peer access unavailable")
    as_json = json.loads(run("history.py", "gate", path, "--db", db, "--json").stdout)
    statuses = {c["case"]: (c["status"], c["verdict"]) for c in as_json["runs"][0]["cases"]}
    assert statuses["copy/ce/oneshot/dev=0,1/16384"] == ("missing", "failed") and as_json["exit_code"] == 1
    # compare says the same of the skipped case: one rule (dmabench.verdict.lost)
    base = tmp_path / "base.json"
    base.write_text(json.dumps(configured(run_at("2026-01-01T00:00:00Z", sizes), config)))
    p = run("compare.py", base, path, "--json")
    assert p.returncode == 1 and {r["case"]: r["verdict"] for r in json.loads(p.stdout)["cases"]}[
        "copy/ce/oneshot/dev=0,1/4096"] == "failed", p.stdout
    # a run of another config lists other cases: what it lacks is not missing; every case skipped is still failed
    other = configured(run_at("2026-02-01T00:00:00Z", {1024: 100.0}), {"name": "quick", "sizes": [1024]})
    path.write_text(json.dumps(other))
    p = run("history.py", "gate", path, "--db", db)
    assert p.returncode == 0 and verdict_lines(p.stdout) == {"copy/ce/oneshot/dev=0,1/1024": "same"}, p.stdout
    filtered = configured(run_at("2026-02-01T00:00:00Z", {1024: 100.0}), config)  # a --benchmark_filter lists fewer
    filtered["context"]["command_line"] = ["dmabench", "--config", "gate.json", "--benchmark_filter=/1024$"]
    path.write_text(json.dumps(filtered))
    p = run("history.py", "gate", path, "--db", db)
    assert p.returncode == 0 and verdict_lines(p.stdout) == {"copy/ce/oneshot/dev=0,1/1024": "same"}, p.stdout
    skipped = configured(document([result("copy", "ce", n, "oneshot", 0, status="skipped", reason="no GPU")
                                   for n in sizes]), config)
    skipped["context"]["started_at"] = "2026-02-01T00:00:00Z"
    path.write_text(json.dumps(skipped))
    p = run("history.py", "gate", path, "--db", db)
    assert p.returncode == 1 and set(verdict_lines(p.stdout).values()) == {"failed"} and \
        p.stdout.count("skipped: no GPU") == 3, p.stdout


def test_gate_record_trend_and_history_frame(tmp_path):
    docs = [run_at(f"2026-01-0{i + 1}T00:00:00Z", {1024: p50}) for i, p50 in enumerate([100, 101, 99, 100])]
    docs.append(levels_at("2026-01-05T00:00:00Z", {1024: 130}, scatter=0.0))  # 5 processes at 130: 4 + 5 draws apart
    db = add_runs(tmp_path, docs[:4])
    last = tmp_path / "last.json"
    last.write_text(json.dumps(docs[4]))
    p = run("history.py", "gate", last, "--db", db, "--record")
    assert p.returncode == 1 and "(recorded)" in p.stdout and counts(db) == (5, 5, 1), p.stdout
    p = run("history.py", "gate", last, "--db", db, "--record")  # again: the run is stored, its verdict replaced
    assert p.returncode == 1 and counts(db) == (5, 5, 1)
    p = run("history.py", "trend", "--db", db, "--case", "^copy/ce/.*/1024$")
    assert p.returncode == 0, p.stderr
    rows = [line for line in p.stdout.splitlines() if line.startswith("| 2026-")]
    assert len(rows) == 5 and rows[0].startswith("| 2026-01-01 00:00:00 | test | 100.00 | [99.00, 101.00] |  | – | – |")
    assert "| 130.00 | [130.00, 130.00] |  | 95.00..105.00 (median 100.00, 4 runs) | slower |" in rows[4], rows[4]
    assert "The next run's band: " in p.stdout
    p = run("history.py", "trend", "--db", db, "--case", "1024", "--figure", "busbw_GBps", "--json")
    [series] = json.loads(p.stdout)["series"]
    assert series["machine"] == "2 x GPU X" and [r["verdict"] for r in series["runs"]] == [None] * 4 + ["slower"]
    last_run = series["runs"][-1]
    assert abs(last_run["value"] - 1024 / 130 / 1e3) < 1e-12 and last_run["band"]["runs"] == 4
    assert abs(last_run["band"]["low"] - 1024 / 105 / 1e3) < 1e-9  # the busbw band is S / (the p50 band's edges)
    for args, want in ((["--case", "("], "not a regular expression"), (["--case", "allgather"], "no ok case"),
                       (["--case", "copy", "--machine", "GPU Z"], "the database has '2 x GPU X'"),
                       (["--case", "copy", "--runs", "2"], "expected 1 <= --min-runs <= --runs")):
        one_line(inproc("history.py", "trend", "--db", db, *args), "history.py", want)
    df = history_frame(db)
    assert list(df.columns) == ["run_id", "started_at", "finished_at", "host", "revision", "version", "machine", "backend",
                                "gpus", "driver", "config", "source", "imported_at", "idx", "name", "case_key", "pattern",
                                "engine", "variant", "place", "bytes_per_rank", "bytes", "timing", "status", "reason",
                                "p50_us", "p50_low_us", "p50_high_us", "noise", "noisy", "busbw_GBps", "busbw_low_GBps",
                                "busbw_high_GBps", "algbw_GBps", "sampling", "samples", "setup_s", "process_p50s", "verdict"]
    assert len(df) == 5 and list(df.p50_us) == [100, 101, 99, 100, 130]
    assert str(df.started_at.dtype) in ("datetime64[ns, UTC]", "datetime64[us, UTC]")  # the resolution is pandas's
    assert list(df.verdict.fillna("")) == [""] * 4 + ["slower"] and df.machine.unique().tolist() == ["2 x GPU X"]
    assert df.noisy.tolist() == [False] * 5 and df.gpus[0] == "GPU X, GPU X"


def test_plot_trend(tmp_path):
    docs = [run_at(f"2026-01-0{i + 1}T00:00:00Z", {size: p50 * size / 1024 for size in (1024, 2048, 4096)})
            for i, p50 in enumerate([100, 101, 99, 100])]
    docs.append(levels_at("2026-01-05T00:00:00Z", {size: 130 * size / 1024 for size in (1024, 2048, 4096)}, scatter=0.0))
    db = add_runs(tmp_path, docs[:4])
    (tmp_path / "last.json").write_text(json.dumps(docs[4]))
    assert run("history.py", "gate", tmp_path / "last.json", "--db", db, "--record").returncode == 1
    out = tmp_path / "figs"
    p = inproc("plot.py", "trend", db, "--case", "/1024$", "--out", out, "--figure", "busbw_GBps")
    assert p.returncode == 0 and p.stdout.strip() == str(out / "copy-trend.png"), p.stderr
    assert (out / "copy-trend.png").stat().st_size > 10_000
    from dmabench import plot
    conn = history.open_db(db, write=False)
    series = history.trend(conn, "/1024$", None, "busbw_GBps", history.DEFAULT_RULE)
    conn.close()
    ax = plot.figure_trend(series, "busbw_GBps", history.DEFAULT_RULE, "test").axes[0]
    [cross] = [c for c in ax.collections if c.get_label() == "gate slower / failed (recorded)"]
    assert cross.get_offsets().tolist() == [[4, 1024 / 130 / 1e3]]  # the fifth run, the one the gate failed
    assert "gate band from the runs before (dashed: their median)" in ax.get_legend_handles_labels()[1]
    one_line(inproc("plot.py", "trend", db, "--case", "copy", "--out", out, "--runs", "2"), "plot.py",
             "expected 1 <= --min-runs <= --runs")
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(plot, "MAX_SERIES", 2)
        one_line(inproc("plot.py", "trend", db, "--case", "copy", "--out", out), "plot.py",
                 "--case 'copy' matches 3 cases; a trend figure draws at most 2")
    one_line(inproc("plot.py", "trend", db, "--case", "alltoall", "--out", out), "plot.py", "no ok case")
    assert os.listdir(out) == ["copy-trend.png"]


def test_a_database_of_a_newer_schema_is_refused_untouched(tmp_path):
    db = add_runs(tmp_path, [run_at("2026-01-01T00:00:00Z", {1024: 100.0})])
    with sqlite3.connect(db) as conn:
        conn.execute(f"PRAGMA user_version = {history.SCHEMA_VERSION + 1}")
    kept = digest(db)
    src = tmp_path / "run0.json"
    for args in (["add", src], ["gate", src, "--record"], ["gate", src], ["trend", "--case", "."], ["machines"]):
        one_line(inproc("history.py", *args, "--db", db), "history.py", f"schema version {history.SCHEMA_VERSION + 1}, "
                 f"newer than this script's {history.SCHEMA_VERSION}")
    with pytest.raises(ResultsError, match="newer than"):
        history_frame(db)
    one_line(inproc("plot.py", "trend", db, "--case", ".", "--out", tmp_path / "o"), "plot.py", "newer than")
    assert digest(db) == kept and sorted(os.listdir(tmp_path)) == ["h.sqlite", "run0.json"]


def test_bad_input_is_one_line_and_leaves_the_database_as_it_was(tmp_path):
    db = add_runs(tmp_path, [run_at("2026-01-01T00:00:00Z", {1024: 100.0})])
    kept = digest(db)
    good = tmp_path / "good.json"
    good.write_text(json.dumps(run_at("2026-01-02T00:00:00Z", {1024: 100.0})))
    trace = os.path.join(RESULTS, "h200x1", "traffic", "final-check", "power-trace.json")
    truncated = tmp_path / "truncated.json"
    with open(REPEAT, "rb") as f:
        truncated.write_bytes(f.read()[:5000])
    undated = run_at("2026-01-03T00:00:00Z", {1024: 100.0})
    del undated["context"]["started_at"], undated["context"]["date"]
    (tmp_path / "undated.json").write_text(json.dumps(undated))
    bad_date = run_at("yesterday", {1024: 100.0})
    (tmp_path / "bad-date.json").write_text(json.dumps(bad_date))
    for path, want in ((trace, "not a dmabench results file"), (truncated, "cannot read"),
                       (tmp_path / "undated.json", "context has neither started_at nor date"),
                       (tmp_path / "bad-date.json", "context.started_at: 'yesterday' is not an ISO 8601 time")):
        for command in (["add", good, path], ["gate", good, path, "--record"]):  # the good file is not stored either
            p = run("history.py", *command, "--db", db)
            one_line(p, "history.py", want)
            assert p.stdout == "" and "Traceback" not in p.stderr
    assert digest(db) == kept
    # a --db that is not a dmabench history: a results file (an input here too), another SQLite database, a journal's name
    other = tmp_path / "other.sqlite"
    with sqlite3.connect(other) as conn:
        conn.execute("CREATE TABLE t (x)")
    kept_files = {p: digest(p) for p in (good, other)}
    one_line(inproc("history.py", "add", good, "--db", good), "history.py", "a file this script read")
    one_line(inproc("history.py", "trend", "--case", ".", "--db", good), "history.py", "file is not a database")
    one_line(inproc("history.py", "add", good, "--db", other), "history.py", "not a dmabench history database")
    one_line(inproc("history.py", "add", good, "--db", tmp_path / "x.json.journal"), "history.py", "a dmabench run's own file")
    one_line(inproc("history.py", "machines", "--db", tmp_path / "missing.sqlite"), "history.py", "no history database there")
    one_line(inproc("history.py", "gate", good, "--db", tmp_path), "history.py", "not a regular file")
    empty = document([result("copy", "ce", 2048, "oneshot", 1.0, status="skipped")])  # a case no earlier run had ok
    (tmp_path / "empty.json").write_text(json.dumps(empty))
    one_line(inproc("history.py", "gate", tmp_path / "empty.json", "--db", db), "history.py", "nothing to judge")
    assert {p: digest(p) for p in kept_files} == kept_files and digest(db) == kept
    assert not os.path.exists(tmp_path / "missing.sqlite") and not os.path.exists(tmp_path / "x.json.journal")


def test_a_failed_import_leaves_the_database_as_it_was(tmp_path, monkeypatch):
    db = add_runs(tmp_path, [run_at("2026-01-01T00:00:00Z", {1024: 100.0})])
    kept = digest(db)
    paths = []
    for i in range(3):
        paths.append(tmp_path / f"new{i}.json")
        paths[-1].write_text(json.dumps(run_at(f"2026-01-1{i}T00:00:00Z", {1024: 100.0 + i})))
    real, calls = history.db.store, []

    def store(conn, run_):  # the disk fills up at the third run: the two before it are rolled back too
        calls.append(run_)
        if len(calls) == 3:
            raise sqlite3.OperationalError("database or disk is full")
        return real(conn, run_)

    monkeypatch.setattr(history.db, "store", store)
    one_line(inproc("history.py", "add", *paths, "--db", db), "history.py", "database or disk is full")
    assert len(calls) == 3 and digest(db) == kept and counts(db) == (1, 1, 0)


def test_fields_check_document_does_not_check(tmp_path):
    # history.py stores context fields and a record's setup_s, which check_document leaves as any JSON value: each is
    # stored (as JSON text, or None for a number that is not one) and judged, or, for a start that is no time, refused
    f = tmp_path / "m.json"
    places = {"started_at": lambda d, v: d["context"].update(started_at=v),
              "finished_at": lambda d, v: d["context"].update(finished_at=v),
              "config": lambda d, v: d["context"].update(config=v),
              "config name": lambda d, v: d["context"].update(config={"name": v}),
              "backend": lambda d, v: d["context"].update(backend=v),
              "git_revision": lambda d, v: d["context"]["dmabench"].update(git_revision=v),
              "driver": lambda d, v: d["context"]["machine"]["versions"].update(nvidia_driver=v),
              "setup_s": lambda d, v: d["results"][0].update(setup_s=v)}
    setups = []
    for place, change in places.items():
        for i, value in enumerate(HOSTILE):
            db = tmp_path / f"{place}-{i}.sqlite"  # each stored afresh (a field outside a run's identity is stored once)
            doc = run_at("2026-01-01T00:00:00Z", {1024: 100.0, 4096: 150.0})
            change(doc, value)
            f.write_text(json.dumps(doc))
            for command in ("add", "gate"):
                p = inproc("history.py", command, f, "--db", db)
                if place == "started_at":
                    one_line(p, "history.py", "context.started_at: ")
                    assert "is not an ISO 8601 time" in p.stderr
                else:
                    assert p.returncode == 0 and p.stderr == "", (place, value, command, p.stderr)
            if place == "setup_s":
                setups.append(history_frame(db).setup_s[0])
    assert [None if v != v else v for v in setups] == [0, -1, 5e-324, 1.7e308, 1e30, None, 2.0 ** 64] + [None] * 6


# ---- runs of several processes (schema version 2: records.process_p50s) ------------------------------------------

BASE_P50 = {1024: 100.0, 4096: 200.0}


def levels_run(tmp_path, name, start, factors, slower=1.0):
    """A levels file (merged as merge_runs.py merges) of len(factors) processes started at `start`: process k has
    every case at BASE_P50 x factors[k] x `slower` (+-1% intervals within it)."""
    docs = [run_at(f"{start[:-1]}{k}Z", {size: p50 * f * slower for size, p50 in BASE_P50.items()})
            for k, f in enumerate(factors)]
    path = tmp_path / name
    path.write_text(json.dumps(merged(docs, [f"{name}.process-{k + 1}.json" for k in range(len(docs))])))
    return path


def test_a_levels_run_is_judged_against_the_draws_of_an_earlier_levels_run(tmp_path):
    earlier = levels_run(tmp_path, "earlier.json", "2026-01-01T00:00:00.00Z", [1.00, 1.03, 0.98, 1.02, 0.97])
    db = tmp_path / "h.sqlite"
    assert run("history.py", "add", earlier, "--db", db).returncode == 0
    with sqlite3.connect(db) as conn:
        stored = [json.loads(x) for (x,) in conn.execute("SELECT process_p50s FROM records ORDER BY idx")]
    assert stored == [[100.0, 103.0, 98.0, 102.0, 97.0], [200.0, 206.0, 196.0, 204.0, 194.0]]
    # one earlier run of 5 processes is 5 draws: enough (not new); the new run's draws interleave with them: same
    new = levels_run(tmp_path, "new.json", "2026-02-01T00:00:00.00Z", [1.01, 0.99, 1.04, 0.96, 1.00])
    p = run("history.py", "gate", new, "--db", db)
    assert p.returncode == 0, p.stdout + p.stderr
    assert set(verdict_lines(p.stdout).values()) == {"same"} and len(verdict_lines(p.stdout)) == 2, p.stdout
    assert "p50 100.00 µs [96.00, 104.00] (between 5 processes): change +0.0% against 5 draws from 1 run (median " \
           "100.00 µs, spread 3.0%), minimum 5%" in p.stdout, p.stdout  # 1.4826 x MAD 2 / 100
    # every p50 25% slower: all 5 draws above the history's 5 (p = 2/252 for each of the 2 cases): slower
    slow = levels_run(tmp_path, "slow.json", "2026-02-01T00:00:00.00Z", [1.01, 0.99, 1.04, 0.96, 1.00], slower=1.25)
    p = run("history.py", "gate", slow, "--db", db)
    assert p.returncode == 1 and set(verdict_lines(p.stdout).values()) == {"slower"}, p.stdout
    assert "p50 125.00 µs [120.00, 130.00] (between 5 processes): change +25.0% against 5 draws" in p.stdout
    assert "rank-sum p 0.0079 over 5+5 draws, supported" in p.stdout
    # a one-process run against the same history: one draw, and it says so
    one = tmp_path / "one.json"
    one.write_text(json.dumps(run_at("2026-02-02T00:00:00Z", {1024: 101.0})))
    p = run("history.py", "gate", one, "--db", db)
    assert p.returncode == 0 and "p50 101.00 µs [99.99, 102.01] (within one process): change +" in p.stdout, p.stdout


def test_trend_bands_count_draws(tmp_path):
    db = tmp_path / "h.sqlite"
    paths = [levels_run(tmp_path, f"l{i}.json", f"2026-01-0{i + 1}T00:00:00.00Z", [1.00, 1.02, 0.98]) for i in range(2)]
    assert run("history.py", "add", *paths, "--db", db).returncode == 0
    p = run("history.py", "trend", "--db", db, "--case", "/1024$", "--json")
    [series] = json.loads(p.stdout)["series"]
    assert series["runs"][1]["band"]["draws"] == 3 and series["next_band"] == {**series["next_band"], "runs": 2, "draws": 6}
    p = run("history.py", "trend", "--db", db, "--case", "/1024$")
    assert "(median 100.00, 6 draws from 2 runs)" in p.stdout, p.stdout
    assert history_frame(db).process_p50s.map(json.loads).tolist()[0] == [100.0, 102.0, 98.0]


def version_1_database(path, files):
    """A database as history.py of schema version 1 made it: its tables (MIGRATIONS[0]) and rows without
    process_p50s."""
    assert history.RECORD_COLUMNS[-1] == "process_p50s"
    columns = history.RECORD_COLUMNS[:-1]
    with contextlib.closing(sqlite3.connect(path)) as conn, conn:
        for statement in history.MIGRATIONS[0]:
            conn.execute(statement)
        conn.execute(f"PRAGMA application_id = {history.APPLICATION_ID}")
        conn.execute("PRAGMA user_version = 1")
        for f in files:
            r = history.prepare(json.loads(f.read_text()), f)
            conn.execute(f"INSERT INTO runs VALUES ({', '.join('?' * len(history.RUN_COLUMNS))})",
                         [r.row[c] for c in history.RUN_COLUMNS])
            conn.executemany(f"INSERT INTO records VALUES ({', '.join('?' * len(columns))})",
                             [[dict(rec, run_id=r.row["run_id"], idx=i)[c] for c in columns] for i, rec in enumerate(r.records)])


def test_a_version_1_database_migrates_in_place(tmp_path):
    old = tmp_path / "old.json"
    old.write_text(json.dumps(run_at("2026-01-01T00:00:00Z", {1024: 100.0, 4096: 200.0})))
    lv = levels_run(tmp_path, "lv.json", "2026-01-02T00:00:00.00Z", [1.00, 1.02, 0.98])
    db = tmp_path / "h.sqlite"
    version_1_database(db, [old, lv])
    kept = digest(db)
    for args in (["trend", "--case", "."], ["machines"], ["gate", old]):  # reading commands refuse it, untouched
        one_line(inproc("history.py", *args, "--db", db), "history.py", "schema version 1, not a history database of "
                 f"version {history.SCHEMA_VERSION}")
    assert digest(db) == kept
    new = tmp_path / "new.json"
    new.write_text(json.dumps(run_at("2026-01-03T00:00:00Z", {1024: 101.0})))
    p = run("history.py", "add", new, "--db", db)  # a command that writes migrates it, in place
    assert p.returncode == 0 and "1 of 1 runs added" in p.stdout, p.stderr
    with sqlite3.connect(db) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == history.SCHEMA_VERSION
        rows = conn.execute("SELECT runs.source, rec.name, rec.p50_us, rec.process_p50s FROM records rec JOIN runs "
                            "USING (run_id) ORDER BY runs.started_at, rec.idx").fetchall()
    assert [(os.path.basename(s), p50, None if x is None else json.loads(x)) for s, _, p50, x in rows] == [
        ("old.json", 100.0, None), ("old.json", 200.0, None), ("lv.json", 100.0, [100.0, 102.0, 98.0]),
        ("lv.json", 200.0, [200.0, 204.0, 196.0]), ("new.json", 101.0, None)]
    p = run("history.py", "gate", new, "--db", db)  # the old runs' draws: 1 + 3
    assert p.returncode == 0 and "against 4 draws from 2 runs (median 100.00 µs" in p.stdout, p.stdout
    assert run("history.py", "add", old, lv, "--db", db).stdout.count("already stored") == 2


def test_a_version_2_database_keeps_its_verdicts_on_migrating_to_3(tmp_path):
    """Version 2 -> 3 lifts the CHECK on verdicts to the words of issue 50's rule; FAIL / PASS already recorded stay."""
    docs = [run_at(f"2026-01-0{i + 1}T00:00:00Z", {1024: p50}) for i, p50 in enumerate([100, 101, 99, 100])]
    db = add_runs(tmp_path, docs)
    with contextlib.closing(sqlite3.connect(db)) as conn, conn:
        conn.execute("DROP TABLE verdicts")
        for statement in history.MIGRATIONS[0][4:]:  # version 2's verdicts table, with its CHECK
            conn.execute(statement)
        run_id = conn.execute("SELECT run_id FROM runs ORDER BY started_at DESC").fetchone()[0]
        conn.execute("INSERT INTO verdicts VALUES (?, '[]', 'x', 'FAIL', 1, 1, 1, 1, 0, 1, 'band', 'now')", (run_id,))
        conn.execute("PRAGMA user_version = 2")
    new = tmp_path / "new.json"
    new.write_text(json.dumps(levels_at("2026-02-01T00:00:00Z", {1024: 130.0})))
    p = run("history.py", "gate", new, "--db", db, "--record")
    assert p.returncode == 1 and "slower  copy/ce/oneshot/dev=0,1/1024" in p.stdout, p.stdout + p.stderr
    with sqlite3.connect(db) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == 3
        assert sorted(v for (v,) in conn.execute("SELECT verdict FROM verdicts")) == ["FAIL", "slower"]


def test_tests_of_the_committed_tree_read_tracked_files_only(tmp_path):
    # issue 52: scripts/run.sh writes an untracked results/latest.json; the tests of committed results must not read it
    repo = tmp_path / "clone"
    (repo / "results" / "m").mkdir(parents=True)
    (repo / "results" / "m" / "run.json").write_text("{}")
    git = ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t"]
    for args in (["init", "-q"], ["add", "results"], ["commit", "-q", "-m", "a run"]):
        assert subprocess.run(git + args, capture_output=True).returncode == 0, args
    (repo / "results" / "latest.json").write_text("{}")  # what scripts/run.sh leaves
    assert tracked("results", root=repo) == [os.path.join(repo, "results", "m", "run.json")]
    shutil.rmtree(repo / ".git")  # an unpacked copy: every file on disk
    assert tracked("results", root=repo) == [os.path.join(repo, "results", "latest.json"),
                                             os.path.join(repo, "results", "m", "run.json")]
    assert all(os.path.join("results", "latest.json") not in p for p in committed())
