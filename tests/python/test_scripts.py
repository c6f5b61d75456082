"""Tests of scripts/plot.py, compare.py, summarize.py, dma_latte_report.py and the notebook.

Run by ctest (test `scripts`) with a python3 that has pandas, matplotlib and pytest.
"""
import copy
import json
import os
import re
import shutil
import subprocess
import sys

import pytest

from dmabench import compare, plot
from merging import merged

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPTS = os.path.join(ROOT, "scripts")
PACKAGE = os.path.join(ROOT, "python")  # the dmabench package (pytest.ini puts it on this process's path)
# the environment of a python3 this test starts that imports dmabench itself (not through a scripts/ shim)
PACKAGE_ENV = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [PACKAGE, os.environ.get("PYTHONPATH")])))
H200 = os.path.join(ROOT, "results", "h200x2")


def stale_git(root):
    """Whether `root`'s .git is not the tree's: DMABENCH_GIT_REVISION names the revision of a copy of the tree (the
    GPU machine's, whose .git can be an older one) and HEAD is another (its ls-files would miss the newer files)."""
    rev = os.environ.get("DMABENCH_GIT_REVISION", "")
    if os.path.realpath(root) != os.path.realpath(ROOT):  # the variable names this tree's revision, no other repository's
        return False
    if not re.fullmatch(r"[0-9a-f]{7,40}", rev):
        return False
    head = subprocess.run(["git", "-C", root, "rev-parse", "HEAD"], capture_output=True, text=True)
    return head.returncode == 0 and not head.stdout.strip().startswith(rev)


def tracked(top, root=ROOT):
    """The files under `root`/`top` that the checkout tracks (git ls-files), absolute and sorted: what a test of the
    committed tree reads, never an untracked file beside it (scripts/run.sh writes results/latest.json). Outside a git
    checkout of `root` (an unpacked copy, no git), or where that checkout's .git is not the tree's (stale_git), every
    file on disk there."""
    try:
        top_level = subprocess.run(["git", "-C", root, "rev-parse", "--show-toplevel"], capture_output=True, text=True)
        listed = subprocess.run(["git", "-C", root, "ls-files", "-z", "--", top], capture_output=True, text=True)
    except OSError:  # no git
        top_level = listed = None
    if top_level and top_level.returncode == 0 and os.path.realpath(top_level.stdout.strip()) == os.path.realpath(root) and \
            listed.returncode == 0 and not stale_git(root):
        files = [os.path.join(root, f) for f in listed.stdout.split("\0") if f]
        return sorted(f for f in files if os.path.isfile(f))  # a tracked file deleted in the work tree is gone
    # what a build or an install leaves beside the tree is never tracked (a copy without git has them on disk)
    generated = ("build", "__pycache__", ".pytest_cache")
    out = []
    for d, dirs, names in os.walk(os.path.join(root, top)):
        dirs[:] = [x for x in dirs if x not in generated and not x.endswith(".egg-info")]
        out += [os.path.join(d, f) for f in names]
    return sorted(out)



def run(script, *args):
    return subprocess.run([sys.executable, os.path.join(SCRIPTS, script), *map(str, args)], capture_output=True,
                          text=True, timeout=600)


def result(pattern, engine, size, timing, p50, spread=0.05, options=None, status="ok", **extra):
    n = 2
    s = {"copy": size, "bidir": 2 * size}.get(pattern, n * size)
    factor = (n - 1) / n if pattern in ("allgather", "alltoall") else 1.0
    # as dmabench names cases: the engine with the options that differ from their defaults
    listed = "".join(f",{k}={str(v).lower() if isinstance(v, bool) else v}" for k, v in (options or {}).items())
    r = {"name": f"{pattern}{'-inplace' if extra.get('in_place') else ''}/{engine}{listed}/{timing}/dev=0,1/{size}",
         "pattern": pattern, "engine": engine,
         "options": options or {}, "devices": [0, 1], "ranks": n, "bytes": s, "bytes_per_rank": size,
         "timing": timing, "pipeline_depth": 1, "warmup": 1, "status": status, "reason": "" if status == "ok" else "x",
         "validated": status == "ok", "iterations": 10 if status == "ok" else 0, "clock": "host",
         "latency_us": None, "algbw_GBps": None, "busbw_GBps": None}
    if status == "ok":
        r["latency_us"] = {"min": p50 * 0.9, "p50": p50, "mean": p50, "p95": p50 * (1 + spread),
                           "p99": p50 * (1 + 2 * spread), "max": p50 * (1 + 3 * spread), "stddev": p50 * spread / 2}
        r["algbw_GBps"] = s / p50 / 1e3
        r["busbw_GBps"] = r["algbw_GBps"] * factor
    r.update(extra)
    return r


def document(results):
    return {"schema": "dmabench/1",
            "context": {"date": "2026-11-29T00:00:00Z", "host": "test", "backend": "cuda",
                        "dmabench": {"version": "0.1.0", "git_revision": "test"},
                        "machine": {"devices": [{"id": 0, "name": "GPU X", "bus_id": "0000:01:00.0"},
                                                {"id": 1, "name": "GPU X", "bus_id": "0000:02:00.0"}],
                                    "versions": {"cuda_runtime": "13.0", "nccl": "2.28.3"}}},
            "results": results}


def small_run():
    rs = []
    for pattern in ("copy", "allgather"):
        for engine, scale in (("ce", 1.0), ("nccl", 2.0), ("sm", 1.3)):
            for size in (1024, 65536, 1 << 20):
                rs.append(result(pattern, engine, size, "oneshot", scale * (8 + size / 3e5)))
    rs.append(result("copy", "ce", 1024, "oneshot", 8.0, options={"schedule": "pcpy"},
                     breakdown_us={"control": 3, "schedule": 1, "copy": 1.5, "sync": 2.5, "total": 8}))
    for engine, e in (("ce", 1.7), ("sm", 1.9), ("nccl", 2.1)):
        r = result("allgather", engine, 1 << 30, "oneshot", 3000.0)
        r["power"] = {"source": "fake", "energy_per_GB_J": e, "active_W": 200.0, "uncertainty": 0.01, "window_s": 2.0}
        rs.append(r)
    return document(rs)


def write(tmp_path, name, doc):
    path = tmp_path / name
    path.write_text(json.dumps(doc) if not isinstance(doc, str) else doc)
    return path


# ---- plot.py ----------------------------------------------------------------------------------

def test_plot_writes_every_expected_figure(tmp_path):
    src = write(tmp_path, "run.json", small_run())
    out = tmp_path / "figs"
    p = run("plot.py", src, "--out", out)
    assert p.returncode == 0, p.stderr
    expected = {f"{kind}_{pat}_oneshot.png" for kind in ("latency", "busbw", "speedup") for pat in ("copy", "allgather")}
    expected |= {"energy_allgather.png", "breakdown.png"}
    assert set(os.listdir(out)) == expected
    for f in expected:
        assert (out / f).stat().st_size > 10_000, f


def test_plot_overlays_several_files(tmp_path):
    a = write(tmp_path, "a.json", small_run())
    b_doc = small_run()
    b_doc["context"]["machine"]["devices"][0]["name"] = "GPU Y"
    b = write(tmp_path, "b.json", b_doc)
    out = tmp_path / "figs"
    p = run("plot.py", a, b, "--out", out, "--patterns", "allgather")
    assert p.returncode == 0, p.stderr
    assert "latency_allgather_oneshot.png" in os.listdir(out)


def test_plot_helpers():
    assert plot.size_label(1024) == "1K" and plot.size_label(64 << 10) == "64K" and plot.size_label(1 << 30) == "1G"
    pal = plot.colours({"ce", "nccl", "ce schedule=pcpy", "ce graph=true"})
    assert pal["ce"] == "tab:blue" and pal["nccl"] == "tab:orange"
    assert pal["ce schedule=pcpy"] != pal["ce graph=true"]
    assert "\n" in plot._label("ce completion=flag-spin,gate=spin-kernel,graph=true,schedule=pcpy,trigger=host-flag")


@pytest.mark.parametrize("name,expect", [
    ("default.json", {"latency_allgather_oneshot.png", "busbw_copy_oneshot.png", "speedup_alltoall_oneshot.png"}),
    ("power.json", {"energy_copy.png", "energy_allgather.png", "energy_alltoall.png"}),
    ("breakdown.json", {"breakdown.png", "latency_copy_oneshot.png"}),
    ("dma-latte.json", {"latency_alltoall_oneshot.png", "busbw_allgather_oneshot.png"}),
])
def test_plot_committed_h200_results(tmp_path, name, expect):
    out = tmp_path / "figs"
    p = run("plot.py", os.path.join(H200, name), "--out", out)
    assert p.returncode == 0, p.stderr
    assert expect <= set(os.listdir(out))


def test_plot_bad_input(tmp_path):
    bad = write(tmp_path, "bad.json", "{not json")
    p = run("plot.py", bad, "--out", tmp_path / "o")
    assert p.returncode != 0 and "cannot read" in p.stderr
    wrong = small_run()
    wrong["schema"] = "dmabench/99"
    p = run("plot.py", write(tmp_path, "wrong.json", wrong), "--out", tmp_path / "o")
    assert p.returncode != 0 and "dmabench/99" in p.stderr
    p = run("plot.py", write(tmp_path, "run.json", small_run()), "--out", tmp_path / "o", "--patterns", "bidir")
    assert p.returncode != 0 and "no ok results" in p.stderr


# ---- compare.py -------------------------------------------------------------------------------

def processes(doc, k=8, scatter=0.004):
    """The levels file of `doc` run in `k` fresh processes (merged by the program: merging.py), process j's figures
    x (1 + scatter x (j - (k - 1) / 2)): per-process p50s that a rank test can weigh, their median the run's own."""
    docs = []
    for j in range(k):
        d = copy.deepcopy(doc)
        for r in d["results"]:
            if r["status"] == "ok":
                scale(r, 1 + scatter * (j - (k - 1) / 2))
        docs.append(d)
    return merged(docs, [f"p{j}.json" for j in range(k)])


def test_compare_finds_a_planted_regression(tmp_path):
    one = small_run()
    new = copy.deepcopy(one)
    scale(new["results"][4], 1.2)  # copy/nccl/64KiB
    base, new = processes(one), processes(new)
    p = run("compare.py", write(tmp_path, "b.json", base), write(tmp_path, "n.json", new))
    assert p.returncode == 1, p.stdout + p.stderr
    assert "1 slower" in p.stdout
    slow = [l for l in p.stdout.splitlines() if l.startswith("| slower")]
    assert len(slow) == 1 and "nccl" in slow[0] and "64 KiB" in slow[0] and "1.200" in slow[0]


def test_compare_keeps_host_kinds_and_block_layouts_apart(tmp_path):
    # four cases of one size that differ only in host kind and block layout (the H200's noise-repeat run matched
    # them on one key and compared 6 of its 11 cases): each is compared with its own, and only the slowed one is slower
    def paged(kind, blocks, block):
        lay = {"kind": "blocks", "block_bytes": block, "blocks": blocks, "order": "random", "stride_bytes": 0,
               "pool_bytes": 4 << 30, "seed": 1, "sides": "both", "blocks_per_op": blocks}
        return result("h2d", "ce-batch", 4 << 20, "oneshot", 100.0, host_memory={"kind": kind, "numa": "local"}, layout=lay,
                      devices=[0])
    base = document([paged(k, n, b) for k in ("pinned", "mapped") for n, b in ((1024, 4096), (64, 65536))])
    new = copy.deepcopy(base)
    scale(new["results"][2], 1.2)  # mapped, 1024 x 4 KiB
    base, new = processes(base), processes(new)
    p = run("compare.py", write(tmp_path, "b.json", base), write(tmp_path, "n.json", new))
    assert p.returncode == 1, p.stdout + p.stderr
    assert "4 cases in both files" in p.stdout and "1 slower" in p.stdout
    slow = [l for l in p.stdout.splitlines() if l.startswith("| slower")]
    assert len(slow) == 1 and "mapped, 1024 x 4 KiB random in 4 GiB" in slow[0]


def test_compare_one_process_a_side_is_ambiguous(tmp_path):
    # one process per side is one draw of the machine each: a 20% change between them may be the process's mode
    # (issue 50: single-process files failed every pair of unchanged H200 runs), so it is ambiguous, never slower
    base = small_run()
    new = copy.deepcopy(base)
    scale(new["results"][0], 1.2)
    b, n = write(tmp_path, "b.json", base), write(tmp_path, "n.json", new)
    p = run("compare.py", b, n, "--json")
    assert p.returncode == 0, p.stdout
    doc = json.loads(p.stdout)
    first = [c for c in doc["cases"] if c["case"] == base["results"][0]["name"]][0]
    assert first["verdict"] == "ambiguous" and abs(first["p50_ratio"] - 1.2) < 1e-9 and first["p"] == 1.0
    assert first["draws"] == "1+1" and abs(first["change"] - 0.2) < 1e-9 and not first["supported"]
    assert doc["regressed"] == 0 and doc["ambiguous"] == 1
    p = run("compare.py", b, n)
    assert "1 ambiguous" in p.stdout and "**ambiguous**: a change beyond the minimum" in p.stdout, p.stdout
    assert run("compare.py", b, n, "--fail-ambiguous").returncode == 1


def test_compare_reports_faster_added_removed_and_failed(tmp_path):
    base = small_run()
    new = copy.deepcopy(base)
    scale(new["results"][1], 0.5)
    removed = new["results"].pop(2)
    added = result("copy", "host", 4096, "oneshot", 30.0)
    new["results"].append(added)
    rows, only_base, only_new = compare.compare(processes(base), processes(new), 0.05)
    verdicts = {r["case"]: r["verdict"] for r in rows}
    assert verdicts[base["results"][1]["name"]] == "faster"
    assert {r["case"]: r["verdict"] for r in compare.compare(base, new, 0.05)[0]}[base["results"][1]["name"]] == "ambiguous"
    assert only_base == [removed["name"]] and only_new == [added["name"]]
    p = run("compare.py", write(tmp_path, "b.json", base), write(tmp_path, "n.json", new))
    assert p.returncode == 0 and "only in BASE" in p.stdout and "only in NEW" in p.stdout
    failed = copy.deepcopy(base)
    failed["results"][3] = result(failed["results"][3]["pattern"], failed["results"][3]["engine"],
                                  failed["results"][3]["bytes_per_rank"], "oneshot", 0, status="failed")
    p = run("compare.py", write(tmp_path, "b.json", base), write(tmp_path, "f.json", failed))
    assert p.returncode == 1 and "| failed" in p.stdout


def test_compare_names_the_settings_of_one_name_that_differ(tmp_path):
    # a case of one name on both sides that is not one case (an option added since BASE, as sm's sms in issue 43):
    # listed once, with what differs, not as one case only in BASE and another only in NEW
    base = small_run()
    new = copy.deepcopy(base)
    new["results"][0]["options"] = {"sms": "auto"}
    p = run("compare.py", write(tmp_path, "b.json", base), write(tmp_path, "n.json", new))
    assert p.returncode == 0, p.stdout
    name = base["results"][0]["name"]
    assert ("1 case(s) with one name in both files but other settings (their case keys differ), not compared:\n"
            f'- {name}: options {{}} in BASE, {{"sms": "auto"}} in NEW') in p.stdout, p.stdout
    assert "only in BASE" not in p.stdout and "only in NEW" not in p.stdout
    doc = json.loads(run("compare.py", write(tmp_path, "b.json", base), write(tmp_path, "n.json", new), "--json").stdout)
    assert doc["settings_apart"] == [{"case": name, "differ": [{"part": "options", "base": "{}",
                                                               "new": '{"sms": "auto"}'}]}]
    assert doc["only_in_base"] == doc["only_in_new"] == [name]


def test_compare_threshold_and_identity(tmp_path):
    base = small_run()
    new = copy.deepcopy(base)
    scale(new["results"][0], 1.08)  # beyond the 5% launch-bound minimum, not beyond 10%
    b, n = write(tmp_path, "b.json", processes(base)), write(tmp_path, "n.json", processes(new))
    assert run("compare.py", b, n).returncode == 1
    assert run("compare.py", b, n, "--threshold", "0.10").returncode == 0
    assert run("compare.py", b, n, "--min-change", "launch=0.10").returncode == 0
    assert run("compare.py", b, n, "--min-change", "bandwidth=0.10").returncode == 1
    # alpha: 8+8 processes apart give p = 2/12870, which Benjamini-Hochberg over the 22 cases keeps at 0.02, not at
    # 0.001 (0.001/22 = 4.5e-5)
    assert run("compare.py", b, n, "--alpha", "0.001").returncode == 0
    committed = os.path.join(H200, "dma-latte.json")
    p = run("compare.py", committed, committed)
    assert p.returncode == 0 and not re.search(r"[1-9]\d* slower", p.stdout.split("\n", 1)[0]), p.stdout


def with_interval(r, half, stopped="noise"):
    """`r` with the fields dmabench writes around its p50: an interval of +-`half` (a fraction) and the rest."""
    lat = r["latency_us"]
    low, high = lat["p50"] * (1 - half), lat["p50"] * (1 + half)
    lat["min"], lat["max"] = min(lat["min"], low), max(lat["max"], high)
    r["p50_interval_us"] = [low, high]
    r["algbw_interval_GBps"] = [r["algbw_GBps"] * lat["p50"] / high, r["algbw_GBps"] * lat["p50"] / low]
    r["busbw_interval_GBps"] = [r["busbw_GBps"] * lat["p50"] / high, r["busbw_GBps"] * lat["p50"] / low]
    r["noise"], r["noisy"] = half, half > 0.01
    r["sampling"] = {"mode": "adaptive", "samples": 500, "seconds": 0.4, "stopped": stopped, "max_noise": 0.01,
                     "min_samples": 10, "min_time_s": 0.0, "max_time_s": 1.0, "max_samples": 100000}
    return r


def scale(r, factor):
    """`r` (an ok record) `factor` times slower as dmabench would write it: its latencies and interval times `factor`,
    its bandwidths and their intervals over it (a record whose figures contradict each other is refused)."""
    for k in r["latency_us"]:
        r["latency_us"][k] *= factor
    if "p50_interval_us" in r:
        r["p50_interval_us"] = [x * factor for x in r["p50_interval_us"]]
    for k in ("algbw_GBps", "busbw_GBps"):
        r[k] /= factor
        pair = k.replace("_GBps", "_interval_GBps")
        if pair in r:
            r[pair] = [None if x is None else x / factor for x in r[pair]]
    return r


def slowed(doc, index, factor):
    """`doc` with record `index` `factor` times slower, its interval too."""
    new = copy.deepcopy(doc)
    scale(new["results"][index], factor)
    return new


def test_compare_a_one_process_change_is_ambiguous_whatever_its_interval(tmp_path):
    base = small_run()
    for r in base["results"]:
        with_interval(r, 0.01)  # tight: +-1% within the process, which says nothing of the next process
    new = slowed(base, 4, 1.2)
    p = run("compare.py", write(tmp_path, "b.json", base), write(tmp_path, "n.json", new))
    assert p.returncode == 0, p.stdout + p.stderr
    assert "1 ambiguous" in p.stdout and " slower" not in p.stdout.split("\n", 1)[0].split(" (")[0]
    [row] = [l for l in p.stdout.splitlines() if l.startswith("| ambiguous")]
    p50 = base["results"][4]["latency_us"]["p50"]
    assert f"{p50:.2f} [{0.99 * p50:.2f}, {1.01 * p50:.2f}]" in row, row
    assert row.rstrip().endswith("| +20.0% | 0.833 | 1+1 | 1 |"), row


def test_compare_a_planted_regression_across_processes_fails(tmp_path):
    one = small_run()
    base, new = processes(one), processes(slowed(one, 4, 1.2))
    p = run("compare.py", write(tmp_path, "b.json", base), write(tmp_path, "n.json", new), "--json")
    assert p.returncode == 1, p.stdout + p.stderr
    doc = json.loads(p.stdout)
    [case] = [c for c in doc["cases"] if c["verdict"] != "same"]
    # one changed case among 22: Benjamini-Hochberg needs p <= 0.02 / 22, which 8+8 processes apart reach (2/12870)
    assert case["verdict"] == "slower" and case["draws"] == "8+8" and doc["regressed"] == 1 and case["supported"]
    assert case["p"] == pytest.approx(2 / 12870) and case["change"] == pytest.approx(0.2)
    # faster is real too; a change inside the minimum is the same whatever the support
    assert compare.compare(base, processes(slowed(one, 4, 0.5)), 0.05)[0][4]["verdict"] == "faster"
    assert compare.compare(base, processes(slowed(one, 4, 1.03)), 0.05)[0][4]["verdict"] == "same"
    # the same files at fewer processes: 6+6 (smallest p 2/924) cannot support one case among 22 at alpha 0.02
    assert compare.compare(processes(one, 6), processes(slowed(one, 4, 1.2), 6), 0.05)[0][4]["verdict"] == "ambiguous"


def test_results_with_intervals_are_checked_and_framed(tmp_path):
    from dmabench import to_frame
    good = small_run()
    with_interval(good["results"][0], 0.02, stopped="max_time")
    df = to_frame([str(write(tmp_path, "g.json", good))])
    first = df.iloc[0]
    assert first.sampling == "adaptive" and first.stopped == "max_time" and bool(first.noisy)
    assert abs(first.p50_low - 0.98 * first.p50) < 1e-9 and abs(first.noise - 0.02) < 1e-12
    assert df.iloc[1].p50_low is None or df.iloc[1].p50_low != df.iloc[1].p50_low  # no interval: None / NaN
    for field, value, message in (("p50_interval_us", [1e9, 2e9], "does not hold the p50"),
                                  ("busbw_interval_GBps", [1.0], "a list of two numbers"),
                                  ("noisy", "yes", "true or false"),
                                  ("sampling", {"mode": "guess"}, "sampling.mode")):
        bad = copy.deepcopy(good)
        bad["results"][0][field] = value
        p = run("compare.py", write(tmp_path, "bad.json", bad), write(tmp_path, "g.json", good))
        assert p.returncode == 2 and message in p.stderr, (field, p.stderr)


def test_compare_bad_input(tmp_path):
    good = write(tmp_path, "g.json", small_run())
    p = run("compare.py", write(tmp_path, "x.json", "[1, 2"), good)
    assert p.returncode == 2 and "cannot read" in p.stderr
    wrong = small_run()
    wrong["schema"] = "dmabench/2"
    p = run("compare.py", good, write(tmp_path, "w.json", wrong))
    assert p.returncode == 2 and "dmabench/2" in p.stderr
    other = document([result("bidir", "host", 8, "pipelined", 1.0)])
    p = run("compare.py", good, write(tmp_path, "o.json", other))
    assert p.returncode == 2 and "no case in common" in p.stderr
    p = run("compare.py", good, tmp_path / "missing.json")
    assert p.returncode == 2


# ---- summaries and the notebook ---------------------------------------------------------------

def test_summaries_of_committed_results():
    p = run("summarize.py", os.path.join(H200, "power.json"))
    assert p.returncode == 0 and "DMA energy saving" in p.stdout and "Peak busbw" in p.stdout
    p = run("dma_latte_report.py", os.path.join(H200, "dma-latte.json"), "--breakdown", os.path.join(H200, "breakdown.json"))
    assert p.returncode == 0 and "Best DMA variant vs best NCCL mode" in p.stdout and "Latency breakdown" in p.stdout


def test_dma_latte_report_baseline(tmp_path):
    """--baseline: the speedups divide by the variant named (an sdma one), whose engine's variants are listed."""
    rs = [result("allgather", "sdma", 1024, "oneshot", 40.0), result("allgather", "sdma", 1024, "oneshot", 10.0, options={"schedule": "b2b"}),
          result("allgather", "ce", 1024, "oneshot", 20.0, options={"schedule": "pcpy"})]
    path = write(tmp_path, "sdma.json", document(rs))
    p = run("dma_latte_report.py", path, "--baseline", "sdma")
    assert p.returncode == 0, p.stderr
    assert "speedup over plain `sdma` = its p50" in p.stdout and "| sdma schedule=b2b | 4.00 |" in p.stdout, p.stdout
    assert "| ce schedule=pcpy | 2.00 |" in p.stdout, p.stdout
    p = run("dma_latte_report.py", path)  # the default baseline: ce pcpy; sdma is not listed
    assert "speedup over plain `ce schedule=pcpy` (enqueue, event)" in p.stdout and "| sdma schedule=b2b |" not in p.stdout


# The notebook's documented setup (docs/user-guide.md, "The notebook"), step by step, once per test process: a venv
# that sees the system's packages, the package installed into it offline, its kernel installed under the name
# `dmabench` for the user (HOME is a directory of the test's own), then nbconvert with that kernel; no PYTHONPATH.
NOTEBOOK_SETUP = [
    ["python3", "-m", "venv", "--system-site-packages", "{venv}"],
    ["{venv}/bin/pip", "install", "--no-build-isolation", "--no-index", "--quiet", "{src}"],
    ["{venv}/bin/python", "-m", "ipykernel", "install", "--user", "--name", "dmabench"],
]
_NOTEBOOK_KERNEL = []  # [HOME] of the kernel set up by the steps above, made once


def notebook_kernel_home():
    """A HOME whose user kernel `dmabench` is the venv of NOTEBOOK_SETUP; skips where a step cannot run here."""
    if _NOTEBOOK_KERNEL:
        return _NOTEBOOK_KERNEL[0]
    import atexit
    import tempfile
    if subprocess.run([sys.executable, "-c", "import ipykernel"], capture_output=True).returncode:
        pytest.skip("ipykernel is not installed (Debian: apt install python3-ipykernel)")
    home = tempfile.mkdtemp(prefix="dmabench-notebook-")
    atexit.register(shutil.rmtree, home, True)
    src = os.path.join(home, "python")  # a copy: pip writes build/ and *.egg-info beside the sources
    shutil.copytree(PACKAGE, src, ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__"))
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "JUPYTER_DATA_DIR",
                                                            "JUPYTER_PATH")}
    env["HOME"] = home
    for step in NOTEBOOK_SETUP:
        argv = [a.format(venv=os.path.join(home, "venv"), src=src) for a in step]
        if argv[0] == "python3":
            argv[0] = sys.executable
        p = subprocess.run(argv, capture_output=True, text=True, env=env, cwd=home, timeout=600)
        if p.returncode and step is NOTEBOOK_SETUP[0]:
            pytest.skip(f"python3 -m venv failed (Debian: apt install python3-venv): {p.stderr[-300:]}")
        assert p.returncode == 0, (argv, p.stderr[-3000:])
    _NOTEBOOK_KERNEL.append(home)
    return home


def execute_notebook(tmp_path, results):
    """The code cells' outputs of notebooks/explore.ipynb run headless on `results` (DMABENCH_RESULTS: paths, as
    bytes where they are not UTF-8) with the kernel of the documented setup (notebook_kernel_home), the package
    imported from the venv as installed, never from the checkout; skips where jupyter-nbconvert is not installed."""
    nbconvert = shutil.which("jupyter-nbconvert") or shutil.which("jupyter")
    if not nbconvert:
        pytest.skip("jupyter-nbconvert is not installed (scripts/test.sh installs it on Debian)")
    home = notebook_kernel_home()
    nb_dir = tmp_path / "notebooks"
    nb_dir.mkdir()
    shutil.copy(os.path.join(ROOT, "notebooks", "explore.ipynb"), nb_dir)
    env = {k: v for k, v in os.environb.items() if k not in (b"PYTHONPATH", b"PYTHONHOME", b"JUPYTER_DATA_DIR",
                                                              b"JUPYTER_PATH")}
    env[b"HOME"] = os.fsencode(home)
    env[b"DMABENCH_RESULTS"] = b",".join(os.fsencode(p) for p in results)
    cmd = ([nbconvert] if nbconvert.endswith("nbconvert") else [nbconvert, "nbconvert"]) + [
        "--to", "notebook", "--execute", "--ExecutePreprocessor.kernel_name=dmabench",
        "--ExecutePreprocessor.timeout=300", "--output", "out.ipynb", str(nb_dir / "explore.ipynb")]
    p = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=nb_dir, timeout=600)
    assert p.returncode == 0, p.stderr[-3000:]
    out = json.loads((nb_dir / "out.ipynb").read_text())
    outputs = [o for c in out["cells"] if c["cell_type"] == "code" for o in c.get("outputs", [])]
    assert not [o for o in outputs if o.get("output_type") == "error"]
    return outputs


def test_the_notebook_imports_the_installed_package(tmp_path):
    """The kernel of the documented setup imports dmabench from its venv, not from the checkout."""
    home = notebook_kernel_home()
    nb = {"cells": [{"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [],
                     "source": "import dmabench; print(dmabench.__file__)"}],
          "metadata": {"kernelspec": {"name": "dmabench", "display_name": "dmabench", "language": "python"}},
          "nbformat": 4, "nbformat_minor": 5}
    (tmp_path / "where.ipynb").write_text(json.dumps(nb))
    nbconvert = shutil.which("jupyter-nbconvert") or pytest.skip("jupyter-nbconvert is not installed")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    env["HOME"] = home
    p = subprocess.run([nbconvert, "--to", "notebook", "--execute", "--ExecutePreprocessor.kernel_name=dmabench",
                        "--output", "out.ipynb", str(tmp_path / "where.ipynb")], capture_output=True, text=True,
                       env=env, cwd=tmp_path, timeout=600)
    assert p.returncode == 0, p.stderr[-3000:]
    outputs = json.loads((tmp_path / "out.ipynb").read_text())["cells"][0]["outputs"]
    text = "".join("".join(o.get("text", "")) for o in outputs)  # a stream's text: a string or a list of lines
    assert text.startswith(os.path.join(home, "venv")), text


def test_the_documented_notebook_setup_is_the_tested_one():
    guide = open(os.path.join(ROOT, "docs", "user-guide.md"), encoding="utf-8").read()
    for step in NOTEBOOK_SETUP:
        line = " ".join(a.replace("{venv}", "~/dmabench-venv").replace("{src}", "./python") for a in step
                        if a != "--quiet")
        assert line in guide, line
    assert "jupyter nbconvert --to notebook --execute --ExecutePreprocessor.kernel_name=dmabench" in guide


def test_notebook_executes_headless(tmp_path):
    outputs = execute_notebook(tmp_path, [os.path.join(H200, f) for f in ("default.json", "power.json", "breakdown.json",
                                                                           "overlap.json")])
    assert sum("image/png" in o.get("data", {}) for o in outputs) >= 5  # 4 of alone cases + the overlap scatter


# ---- overlap_report.py --------------------------------------------------------------------------

def overlap_result(engine, size, timing, p50, slowdown, p99_load, kept=1.0, options=None, gemm="gemm-bf16-8192x8192x8192",
                   in_place=False):
    r = result("allgather", engine, size, timing, p50, options=options, in_place=in_place)
    r["name"] += f"/beside={gemm}"
    with_us = p50 / kept
    r["overlap"] = {"compute": {"kind": "gemm", "m": 8192, "n": 8192, "k": 8192, "dtype": "bf16"},
                    "compute_alone_ms": 50.0, "compute_with_ms": 50.0 * (1 + slowdown / 100),
                    "compute_slowdown_pct": slowdown, "comm_alone_us": p50, "comm_with_us": with_us,
                    "comm_with_p99_us": p99_load, "comm_slowdown_pct": (with_us / p50 - 1) * 100,
                    "busbw_with_GBps": r["busbw_GBps"] * kept, "overlap_efficiency": 0.9, "validated": True}
    return r


def test_overlap_report_tables_and_targets(tmp_path):
    rs = [overlap_result("ce", 64 << 20, "pipelined", 200.0, 1.5, 210.0, kept=0.97, options={"local": "peer-bounce"}),
          overlap_result("ce", 64 << 20, "pipelined", 180.0, 0.2, 700.0, kept=0.3),
          overlap_result("nccl", 64 << 20, "pipelined", 300.0, 8.0, 900.0, kept=0.5),
          overlap_result("nccl", 64 << 20, "pipelined", 250.0, 0.5, 600.0, kept=0.5, options={"cta_policy": "zero"}),
          overlap_result("ce", 1024, "oneshot", 20.0, 0.1, 40.0, options={"local": "peer-bounce"}),
          overlap_result("nccl", 1024, "oneshot", 25.0, 0.1, 1500.0),
          result("allgather", "ce", 1024, "oneshot", 20.0)]  # no overlap record: ignored
    p = run("overlap_report.py", write(tmp_path, "ov.json", document(rs)), "--targets")
    assert p.returncode == 0, p.stderr
    assert "**allgather 64 MiB per rank, pipelined, beside gemm-bf16-8192x8192x8192**" in p.stdout
    # the best DMA variant that keeps >= 95% is the bounce one: +1.5% meets <= 2% and <= 1/4 of NCCL's 8%
    # kernel slowdown (NCCL's copy-engine mode, +0.5%, is not the NCCL kernel baseline)
    assert "- allgather 64 MiB per rank beside 8192³ GEMMs: best DMA variant keeping ≥ 95% of its bandwidth: " \
           "`ce local=peer-bounce` +1.5% (meets ≤ 2%; keeps 97%)" in p.stdout
    assert "DMA ≤ 1/4 of NCCL met (+1.5% vs +2.0%)" in p.stdout
    assert "lowest DMA slowdown overall `ce` +0.2% keeping 30%" in p.stdout
    assert "40.0 µs vs best NCCL p99 `nccl` 1500.0 µs = 0.03x (meets ≤ 0.5x)" in p.stdout
    p = run("overlap_report.py", write(tmp_path, "plain.json", small_run()))
    assert p.returncode != 0 and "no measured overlap case" in p.stderr


def test_overlap_report_of_committed_results():
    p = run("overlap_report.py", os.path.join(H200, "overlap.json"), "--targets")
    assert p.returncode == 0 and "### Targets" in p.stdout and "oneshot under load" in p.stdout


def test_in_place_cases_stay_apart_by_their_in_place_field(tmp_path):
    out_of_place = result("allgather", "ce", 1 << 20, "oneshot", 20.0, in_place=False)
    in_place = result("allgather", "ce", 1 << 20, "oneshot", 10.0, in_place=True)
    path = write(tmp_path, "ip.json", document([out_of_place, in_place]))
    from dmabench import case_key, load, pattern_label, placement, to_frame
    doc = load(str(path), "test")
    # the records are read as written: one spelling, the pattern plus `in_place`
    assert [r["pattern"] for r in doc["results"]] == ["allgather", "allgather"]
    assert [placement(r) for r in doc["results"]] == [("allgather", False), ("allgather", True)]
    assert pattern_label("allgather", True) == "allgather (in place)" and pattern_label("allgather") == "allgather"
    assert case_key(doc["results"][0]) != case_key(doc["results"][1])
    df = to_frame([str(path)])
    assert list(df.pattern) == ["allgather", "allgather"] and list(df.in_place) == [False, True]
    p = run("compare.py", path, path, "--all")
    assert p.returncode == 0 and "2 cases in both files" in p.stdout, p.stdout
    assert "| same | allgather (in place) | ce | 1 MiB |" in p.stdout and "| same | allgather | ce | 1 MiB |" in p.stdout
    p = run("summarize.py", path)
    assert p.returncode == 0, p.stderr
    assert "**allgather**: p50 latency" in p.stdout and "**allgather (in place)**: p50 latency" in p.stdout
    assert "| engine | allgather | allgather (in place) |" in p.stdout
    assert "| ce | 20.0 / – |" in p.stdout and "| ce | 10.0 / – |" in p.stdout
    p = run("dma_latte_report.py", path)
    assert p.returncode == 0, p.stderr
    assert "**allgather, oneshot: speedup" in p.stdout and "**allgather (in place), oneshot: speedup" in p.stdout
    out = tmp_path / "figs"
    p = run("plot.py", path, "--out", out, "--baseline", "ce")
    assert p.returncode == 0, p.stderr
    assert {"latency_allgather_oneshot.png", "latency_allgather-in-place_oneshot.png"} <= set(os.listdir(out))
    ov = [overlap_result("ce", 64 << 20, "pipelined", 200.0, 1.5, 210.0, in_place=ip) for ip in (False, True)]
    ov[1]["overlap"]["compute_slowdown_pct"] = 0.5
    p = run("overlap_report.py", write(tmp_path, "ov.json", document(ov)), "--targets")
    assert p.returncode == 0, p.stderr
    assert "**allgather 64 MiB per rank, pipelined, beside gemm-bf16-8192x8192x8192**" in p.stdout
    assert "**allgather (in place) 64 MiB per rank, pipelined, beside gemm-bf16-8192x8192x8192**" in p.stdout
    assert "- allgather 64 MiB per rank beside 8192³ GEMMs: best DMA variant keeping ≥ 95% of its bandwidth: `ce` +1.5%" \
        in p.stdout
    assert "- allgather (in place) 64 MiB per rank beside 8192³ GEMMs: best DMA variant keeping ≥ 95% of its " \
           "bandwidth: `ce` +0.5%" in p.stdout


def test_variant_comes_from_the_case_name():
    from dmabench import engine_options_in_name, variant
    # the name lists the non-default options in the engine's table order; the label sorts them
    r = result("allgather", "ce", 1024, "oneshot", 1.0, options={"schedule": "pcpy", "graph": True, "streams": 4})
    assert r["name"].startswith("allgather/ce,schedule=pcpy,graph=true,streams=4/oneshot/")
    assert variant(r) == "ce graph=true,schedule=pcpy,streams=4"
    r["options"] = {"schedule": "pcpy", "graph": True, "streams": 4, "trigger": "enqueue", "gate": "wait-value"}
    assert variant(r) == "ce graph=true,schedule=pcpy,streams=4"  # options at their defaults are not in the name
    assert variant(result("copy", "nccl", 1024, "oneshot", 1.0, rotate=3)) == "nccl rotate=3"
    assert variant(result("copy", "ce-batch", 1024, "pipelined", 1.0, options={"overlap_hint": False})) == \
        "ce-batch overlap_hint=false"
    # a value with '/' and '=' in it (hsa's map:FILE), an overlap case's workload after the size
    h = result("alltoall", "hsa", 1024, "oneshot", 1.0, options={"engines": "map:configs/a=b/oneshot/dev=x.map"})
    h["name"] += "/rotate=2/beside=stream-8MiB"
    assert engine_options_in_name(h) == [("engines", "map:configs/a=b/oneshot/dev=x.map")]
    assert variant(h) == "hsa engines=map:configs/a=b/oneshot/dev=x.map"
    with pytest.raises(ValueError, match="does not have the form"):
        variant({**r, "name": "allgather/sm/oneshot/dev=0,1/1KiB"})


def test_every_script_refuses_another_schema_major(tmp_path):
    # one reader (dmabench.load) checks the major version for every script
    wrong = small_run()
    wrong["schema"] = "dmabench/2"
    path = write(tmp_path, "wrong.json", wrong)
    ok = write(tmp_path, "ok.json", small_run())
    for script, args in [("summarize.py", [path]), ("dma_latte_report.py", [path]), ("overlap_report.py", [path]),
                         ("plot.py", [path, "--out", tmp_path / "o"]), ("compare.py", [ok, path])]:
        p = run(script, *args)
        assert p.returncode != 0 and "dmabench/2" in p.stderr and "dmabench/1" in p.stderr, (script, p.stderr)
