"""What the scripts take as a reference and what their outputs claim (issue 40): a results file whose records
contradict themselves is refused by every script that would compare against it; no JSON output holds Infinity or NaN;
a --case regular expression that backtracks without end is stopped; no table or figure averages two different cases
(a 2-rank and a 4-rank all-gather) into one; no figure with nothing on it is written."""
import json
import math
import os
import subprocess
import sys
import time

import pytest

from test_hostile_input import MAX_LINE, inproc, one_line
from test_scripts import SCRIPTS, document, execute_notebook, result, with_interval

from dmabench import case_table, labels_apart, load, to_frame
from dmabench import plot


def write(tmp_path, name, doc):
    path = tmp_path / name
    path.write_text(json.dumps(doc))
    return path


# ---- a reference that contradicts itself -------------------------------------------------------------------------

def reference(change=None, start="2026-01-01T00:00:00Z"):
    """A run of two copy cases with their intervals (as dmabench writes them); `change` edits its second record."""
    doc = document([with_interval(result("copy", "ce", size, "oneshot", p50), 0.01)
                    for size, p50 in ((1024, 8.0), (1 << 20, 30.0))])
    doc["context"]["started_at"] = start
    if change:
        change(doc["results"][1])
    return doc


def faster_10x(r):
    """The p50 and algbw (busbw too) made 10x faster, the intervals left: the forgery of issue 40."""
    r["latency_us"] = {k: v / 10 for k, v in r["latency_us"].items()}
    r["algbw_GBps"] *= 10
    r["busbw_GBps"] *= 10


@pytest.mark.parametrize("change,field", [
    (faster_10x, "p50_interval_us"), (lambda r: r.update(algbw_GBps=r["algbw_GBps"] * 10), "algbw_GBps"),
    (lambda r: r.update(busbw_GBps=r["busbw_GBps"] * 10), "busbw_GBps")], ids=["p50 and algbw", "algbw", "busbw"])
def test_a_reference_that_contradicts_itself_is_refused(tmp_path, change, field):
    good, bad = write(tmp_path, "good.json", reference()), write(tmp_path, "bad.json", reference(change))
    new = write(tmp_path, "new.json", reference(start="2026-01-02T00:00:00Z"))
    want = f"results[1].{field}: "
    name = "'copy/ce/oneshot/dev=0,1/1048576' contradicts itself"
    for script, args in (("compare.py", [bad, new]), ("compare.py", [new, bad]), ("summarize.py", [bad]),
                         ("history.py", ["add", bad, "--db", tmp_path / "h.sqlite"]),
                         ("history.py", ["gate", bad, "--db", tmp_path / "h.sqlite"]),
                         ("merge_runs.py", [bad, good, "--out", tmp_path / "m.json"])):
        p = inproc(script, *args)
        one_line(p, script, want)
        assert name in p.stderr, p.stderr
    assert not os.path.exists(tmp_path / "h.sqlite") and not os.path.exists(tmp_path / "m.json")
    assert inproc("compare.py", good, new).returncode == 0


def test_a_record_without_bytes_is_not_checked_against_them(tmp_path):
    doc = reference(lambda r: r.update(bytes=None, algbw_GBps=r["algbw_GBps"] * 10, busbw_GBps=r["busbw_GBps"] * 10))
    assert len(load(write(tmp_path, "r.json", doc))["results"]) == 2  # S unknown: algbw cannot be checked


# ---- JSON outputs ------------------------------------------------------------------------------------------------

def assert_strict_json(text):
    def refuse(constant):
        raise AssertionError(f"{constant} in a JSON output")
    return json.loads(text, parse_constant=refuse)


def unbounded(r):
    """`r` as a file that does not record its bytes has it: then a p50 of 5e-324 µs (the smallest float) is accepted,
    and what a script divides by it is beyond a float."""
    r.update(bytes=None, algbw_GBps=1.0, busbw_GBps=1.0)
    return r


def test_no_json_output_holds_infinity_or_nan(tmp_path):
    from test_blocks_report import block_result
    from test_moe_report import moe_result
    records = [unbounded(moe_result("ce", 256, 5e-324)), moe_result("ce-batch", 256, 90.0),
               unbounded(result("copy", "ce", 1024, "oneshot", 5e-324)),
               unbounded(block_result("ce", 4096, 16, 5e-324)), block_result("ce-batch", 4096, 16, 10.0)]
    src = write(tmp_path, "t.json", document(records))
    base = write(tmp_path, "b.json", document([unbounded(result("copy", "ce", 1024, "oneshot", 8.0))]))
    p = inproc("moe_report.py", src, "--format", "json")
    report = strict_json(p.stdout)
    [row] = [r for s in report["sections"] for r in s["rows"] if r["variant"] == "ce"]
    assert p.returncode == 0 and row["p50_us"] == 5e-324 and row["algbw_GBps"] is None, p.stderr
    [verdict] = report["sections"][0]["verdicts"]
    assert verdict["leader"] == "ce" and verdict["margin"] is None  # 90 / 5e-324: beyond a float
    assert "| ce | 256 | uniform | 64 MiB | 0.000000 ±0 | – |" in inproc("moe_report.py", src).stdout  # algbw: "–"
    p = inproc("compare.py", src, base, "--json")  # 8 / 5e-324: a ratio beyond a float (one process a side: ambiguous)
    case = strict_json(p.stdout)["cases"][0]
    assert p.returncode == 0 and case["p50_ratio"] is None and case["change"] is None, p.stdout
    assert case["verdict"] == "ambiguous"
    p = inproc("blocks_report.py", src, "--json", tmp_path / "blocks.json")
    assert p.returncode == 0 and strict_json((tmp_path / "blocks.json").read_text())["tables"][0]["rows"][0]["ratio"] is None


def strict_json(text):
    """The JSON value of `text`, which must hold no Infinity, -Infinity or NaN (no JSON, though Python writes them)."""
    def refuse(constant):
        raise AssertionError(f"{constant} in a JSON output")
    return json.loads(text, parse_constant=refuse)


# ---- a regular expression that backtracks for ever ---------------------------------------------------------------

def test_a_pathological_case_regex_is_stopped(tmp_path):
    from test_history import add_runs, run_at
    doc = run_at("2026-01-01T00:00:00Z", {1024: 100.0})
    doc["results"].append(with_interval(result("copy", "ce", 4096, "oneshot", 110.0, options={"tag": "a" * 40 + "b"}), 0.01))
    db = add_runs(tmp_path, [doc])
    for argv in (["history.py", "trend", "--case", "(a+)+$", "--db", db],
                 ["plot.py", "trend", db, "--case", "(a|aa)+$", "--out", tmp_path / "figs"]):
        t0 = time.monotonic()
        p = subprocess.run([sys.executable, os.path.join(SCRIPTS, argv[0]), *map(str, argv[1:])], capture_output=True,
                           text=True, timeout=120)
        one_line(p, argv[0], "matching the case names took more than 2 s")
        assert time.monotonic() - t0 < 30
    p = inproc("history.py", "trend", "--case", "a+b/", "--db", db)  # a regex that is only slow on nothing: found
    assert p.returncode == 0 and "tag=" in p.stdout, p.stderr


# ---- two cases never averaged into one ---------------------------------------------------------------------------

def allgather(ranks, p50, engine="ce"):
    """An all-gather of 1 MiB per rank on `ranks` GPUs (its bytes and bandwidths as dmabench writes them)."""
    r = result("allgather", engine, 1 << 20, "oneshot", p50)
    r.update(devices=list(range(ranks)), ranks=ranks, bytes=ranks << 20,
             name=r["name"].replace("dev=0,1", "dev=" + ",".join(map(str, range(ranks)))))
    r["algbw_GBps"] = r["bytes"] / p50 / 1e3
    r["busbw_GBps"] = r["algbw_GBps"] * (ranks - 1) / ranks
    return r


def test_the_case_table_keeps_a_2_and_a_4_rank_all_gather_apart(tmp_path):
    two, four = write(tmp_path, "two.json", document([allgather(2, 100.0)])), \
        write(tmp_path, "four.json", document([allgather(4, 300.0)]))
    df = to_frame([two, four])
    averaged = df.pivot_table(index="bytes_per_rank", columns=["pattern", "in_place", "variant"], values="p50")
    assert averaged.values.tolist() == [[200.0]]  # what the notebook showed: neither case
    table = case_table(df, "p50")
    assert table.columns.names == ["pattern", "in_place", "variant", "ranks"]
    assert table.loc[1 << 20].to_dict() == {("allgather", False, "ce", 2): 100.0, ("allgather", False, "ce", 4): 300.0}
    # one case in two files: the files apart; one case measured twice in one file: its median
    again = write(tmp_path, "again.json", document([allgather(2, 110.0), allgather(2, 130.0)]))
    table = case_table(to_frame([two, again]), "p50")
    assert table.columns.names[-1] == "file" and sorted(table.loc[1 << 20].tolist()) == [100.0, 120.0]


def test_the_notebook_keeps_a_2_and_a_4_rank_all_gather_apart(tmp_path):
    two, four = write(tmp_path, "two.json", document([allgather(2, 100.0), allgather(2, 150.0, "nccl")])), \
        write(tmp_path, "four.json", document([allgather(4, 300.0), allgather(4, 350.0, "nccl")]))
    outputs = execute_notebook(tmp_path, [two, four])
    tables = [o["data"]["text/plain"] for o in outputs if "ranks" in "".join(o.get("data", {}).get("text/plain", ""))]
    text = "".join(tables[0]) if tables else ""
    assert "100.0" in text and "300.0" in text and "200.0" not in text, outputs


def test_reports_keep_two_rank_counts_of_one_variant_apart(tmp_path):
    src = write(tmp_path, "r.json", document([allgather(2, 100.0), allgather(4, 300.0), allgather(2, 150.0, "nccl")]))
    names = labels_apart(load(src)["results"])
    assert sorted(names.values()) == ["ce [ranks=2]", "ce [ranks=4]", "nccl"]
    out = inproc("summarize.py", src).stdout
    assert "| ce [ranks=2] | – / – | 100.0 / – |" in out or "| ce [ranks=2] | 100.0 / – |" in out, out
    assert "| ce [ranks=4] | 300.0 / – |" in out, out
    df = plot.collapse_repeats(plot.split_variants(to_frame([src])))
    assert sorted(zip(df.variant, df.p50)) == [("ce [ranks=2]", 100.0), ("ce [ranks=4]", 300.0), ("nccl", 150.0)]
    p = inproc("plot.py", src, "--out", tmp_path / "figs")
    assert p.returncode == 0 and p.stderr == "", p.stderr


# ---- a figure with nothing to show -------------------------------------------------------------------------------

def host_run():
    """A host-backend run: ce and sm measured, nccl skipped (no NCCL there)."""
    rs = [result(p, e, size, "oneshot", 10.0 * (1 + size / 1e6)) for p in ("copy", "allgather") for e in ("ce", "sm")
          for size in (1024, 1 << 20)]
    rs += [result(p, "nccl", size, "oneshot", 0, status="skipped") for p in ("copy", "allgather") for size in (1024, 1 << 20)]
    doc = document(rs)
    doc["context"]["backend"] = "host"
    return doc


def test_plot_writes_no_empty_speedup_figure_and_says_why(tmp_path):
    src = write(tmp_path, "host.json", host_run())
    out = tmp_path / "figs"
    p = inproc("plot.py", src, "--out", out, "--timing", "both")
    assert p.returncode == 0 and sorted(os.listdir(out)) == sorted(
        f"{kind}_{pattern}_oneshot.png" for kind in ("latency", "busbw") for pattern in ("copy", "allgather")), p.stderr
    assert p.stderr == "plot.py: speedup over nccl: every nccl case in host.json is skipped or failed; not written\n"
    assert len(p.stderr) <= MAX_LINE
    p = inproc("plot.py", src, "--out", tmp_path / "figs2", "--baseline", "sm")  # a baseline that is there: drawn
    assert p.returncode == 0 and p.stderr == "" and "speedup_copy_oneshot.png" in os.listdir(tmp_path / "figs2")
    p = inproc("plot.py", src, "--out", tmp_path / "figs3", "--baseline", "hsa")
    assert p.stderr == "plot.py: speedup over hsa: no hsa case in host.json; not written\n", p.stderr
    # the baseline on one pattern only: the other pattern's speedup figure is not written, and a line says so
    doc = host_run()
    doc["results"] = [r for r in doc["results"] if r["engine"] != "nccl"] + \
        [result("copy", "nccl", size, "oneshot", 30.0) for size in (1024, 1 << 20)]
    p = inproc("plot.py", write(tmp_path, "part.json", doc), "--out", tmp_path / "figs4")
    assert p.stderr == ("plot.py: speedup_allgather_oneshot.png: speedup over nccl: no ok nccl case of allgather, "
                        "oneshot shares a size with another variant drawn; not written\n"), p.stderr
    assert "speedup_copy_oneshot.png" in os.listdir(tmp_path / "figs4")
    assert "speedup_allgather_oneshot.png" not in os.listdir(tmp_path / "figs4")
