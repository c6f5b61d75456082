"""scripts/merge_runs.py: the results files of N processes merged into one levels file (results/SCHEMA.md, "Levels
across fresh processes") by the program it runs (`dmabench --merge`, the one writer of levels files), against the
hand-computed tests/data/levels/expected.json (tests/test_levels.cpp binds the merge to it too); what dmabench.levels
keeps for the readers (median_ranks, shared_fraction)."""
import copy
import json
import math
import os
import shutil
import subprocess
import sys

import pytest

from merging import merged as merged_levels, program
from test_hostile_input import inproc, one_line
from test_scripts import ROOT, SCRIPTS

from dmabench import levels
from dmabench import check_document, load

DATA = os.path.join(ROOT, "tests", "data", "levels")
PROCESSES = [os.path.join(DATA, f"process-{k}.json") for k in (1, 2, 3)]
REL = 1e-9


def read(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


EXPECTED = read(os.path.join(DATA, "expected.json"))


def close(got, want, where):
    """`got` equals `want` (numbers to a relative 1e-9, lists and objects element by element)."""
    if isinstance(want, dict):
        assert isinstance(got, dict) and set(got) >= set(want), (where, got)
        for k, v in want.items():
            close(got[k], v, f"{where}.{k}")
    elif isinstance(want, list):
        assert isinstance(got, list) and len(got) == len(want), (where, got, want)
        for i, (g, w) in enumerate(zip(got, want)):
            close(g, w, f"{where}[{i}]")
    elif isinstance(want, (int, float)) and not isinstance(want, bool):
        assert isinstance(got, (int, float)) and not isinstance(got, bool), (where, got)
        assert math.isclose(got, want, rel_tol=REL, abs_tol=0), (where, got, want)
    else:
        assert got == want, (where, got, want)


@pytest.fixture(scope="module")
def merged(tmp_path_factory):
    out = tmp_path_factory.mktemp("merged") / "levels.json"
    p = inproc("merge_runs.py", *PROCESSES, "--out", out, "--json")
    assert p.returncode == 0 and p.stderr == "", p.stderr
    return read(out), json.loads(p.stdout), out


def test_every_field_of_the_fixture_is_the_hand_computed_one(merged):
    doc = merged[0]
    assert [r["case_index"] for r in doc["results"]] == [c["case_index"] for c in EXPECTED["cases"]] == [0, 1, 2, 3]
    for got, want in zip(doc["results"], EXPECTED["cases"]):
        name = want["name"]
        for field in ("name", "status", "latency_us", "levels") + (("reason",) if "reason" in want else ()):
            close(got[field], want[field], f"{name}.{field}")
        if want["status"] != "ok":
            assert got["algbw_GBps"] is None and got["iterations"] == 0 and "p50_interval_us" not in got, name
            assert set(got["levels"]) == {"processes", "of", "missing"}, name
            continue
        close(got["sampling"]["samples"], want["samples"], name)
        close(got["sampling"]["seconds"], want["seconds"], name)
        for field in ("iterations", "algbw_GBps", "busbw_GBps", "p50_interval_us", "noise", "noisy", "algbw_interval_GBps",
                      "cpu"):
            close(got[field], want[field], f"{name}.{field}")
        close(got["busbw_interval_GBps"], want["algbw_interval_GBps"], name)  # copy: busbw = algbw


def test_the_context_is_the_first_files_with_levels_and_the_merged_calibration(merged):
    doc, first = merged[0], read(PROCESSES[0])
    ctx = doc["context"]
    for field in ("config", "started_at", "order", "host", "dmabench", "machine"):
        assert ctx[field] == first["context"][field], field
    cal, want = ctx["calibration"], EXPECTED["calibration"]
    assert cal["cpu"] is None and cal["samples"] == 200
    close(cal["probes"][want["probe"]], {k: v for k, v in want.items() if k != "probe"}, "calibration")
    lv = ctx["levels"]
    assert (lv["processes"], lv["merged"], lv["merged_by"], lv["order"], lv["order_seed"]) == (3, 3, "merge_runs.py", None, None)
    for k, (part, path) in enumerate(zip(lv["per_process"], PROCESSES)):
        c = read(path)["context"]
        assert part == {"index": k + 1, "file": path, "exit_code": None, "started_at": c["started_at"],
                        "wall_s": c["wall_s"], "host": c["host"], "git_revision": c["dmabench"]["git_revision"],
                        "order": c["order"], "cpu_affinity": c["cpu_affinity"], "calibration": c["calibration"]}


def test_the_merged_file_loads_and_passes_the_checks(merged):
    doc, summary, out = merged
    check_document(doc)
    assert load(str(out)) == doc
    assert summary["counts"] == {"ok": 2, "failed": 1, "skipped": 1} and summary["out"] == str(out)
    assert [c["name"] for c in summary["cases"]] == [c["name"] for c in EXPECTED["cases"]]
    assert summary["cases"][0]["coverage"] == 0.75 and summary["cases"][0]["interval"] == "between processes"
    p = inproc("merge_runs.py", *PROCESSES, "--out", out)  # markdown; the file replaced by the same merge
    assert p.returncode == 0 and "3 processes into" in p.stdout and "| copy/host/oneshot/dev=0,1/4KiB | 3 of 3 | 110 |" \
        in p.stdout and "calibration memcpy_4B: median p50 0.0600 µs" in p.stdout, p.stdout
    assert read(out) == doc


def process_docs(p50s):
    """One results document per p50 (process order), each holding process-1.json's case 0 with that p50."""
    base = read(PROCESSES[0])
    [case] = [r for r in base["results"] if r["case_index"] == 0]
    docs = []
    for k, p50 in enumerate(p50s):
        doc = copy.deepcopy(base)
        r = copy.deepcopy(case)
        r["latency_us"] = {s: p50 for s in r["latency_us"]}
        r["latency_us"]["stddev"] = 0
        r["p50_interval_us"] = [0.99 * p50, 1.01 * p50]
        r["cpu"] = k
        doc["results"], doc["context"]["order"]["seed"] = [r], 2000 + k
        docs.append(doc)
    return docs


def test_nine_processes_take_ranks_2_and_8():
    want = EXPECTED["nine_processes"]
    docs = process_docs(want["p50_us"])
    [r] = merged_levels(docs, [f"p{k}.json" for k in range(9)])["results"]
    close(r["latency_us"]["p50"], want["p50"], "p50")
    close(r["p50_interval_us"], want["p50_interval_us"], "interval")
    lv = r["levels"]
    close([lv["coverage"], lv["ranks"], lv["median_process"]], [want["coverage"], want["ranks"], want["median_process"]],
          "levels")
    assert lv["p50_us"] == want["p50_us"] and r["cpu"] == 8 and r["iterations"] == 90 and lv["missing"] == []
    assert levels.median_ranks(10)[:2] == (2, 9) and levels.median_ranks(20)[:2] == (6, 15)  # the process's own rule
    assert levels.median_ranks(50)[:2] == (18, 33) and levels.median_ranks(100)[:2] == (40, 61)
    assert levels.median_ranks(5) == (1, 5, 0.9375) and levels.median_ranks(6)[2] >= 0.95


def test_one_process_keeps_its_own_interval_and_an_absent_case_is_missing():
    docs = process_docs([100, 120])
    docs[1]["results"] = []  # the second process ended before the case
    [r] = merged_levels(docs, ["a.json", "b.json"])["results"]
    assert r["status"] == "ok" and r["p50_interval_us"] == [99.0, 101.0] and r["noisy"] is False
    lv = r["levels"]
    assert (lv["interval"], lv["coverage"], lv["ranks"], lv["between"], lv["spread"]) == ("within one process", None, None,
                                                                                         None, 0)
    assert lv["missing"] == [{"process": 2, "status": "not run", "reason": "the process ended before this case"}]


def test_records_follow_case_index_or_the_first_files_order():
    docs = [read(p) for p in PROCESSES]
    assert [r["case_index"] for r in docs[0]["results"]] == [2, 0, 3, 1]  # the process ran them shuffled
    names = [os.path.basename(p) for p in PROCESSES]
    merged = merged_levels(docs, names)
    assert [r["case_index"] for r in merged["results"]] == [0, 1, 2, 3]
    assert [r["levels"].get("order") for r in merged["results"][:2]] == [[1, 0, 2], [3, 1, None]]
    for doc in docs:
        for r in doc["results"]:
            del r["case_index"]
    merged = merged_levels(docs, names)
    assert [r["name"] for r in merged["results"]] == [r["name"] for r in docs[0]["results"]]


def test_a_failure_planted_in_one_process_fails_the_merged_case(tmp_path):
    planted = read(PROCESSES[2])
    [r] = [r for r in planted["results"] if r["case_index"] == 0]
    for k in ("latency_us", "algbw_GBps", "busbw_GBps"):
        r[k] = None
    for k in ("p50_interval_us", "algbw_interval_GBps", "busbw_interval_GBps", "noise", "noisy", "sampling"):
        del r[k]
    r.update(status="failed", reason="cudaMemcpyAsync: an illegal memory access", iterations=0, cpu=None)
    path = tmp_path / "process-3.json"
    path.write_text(json.dumps(planted))
    out = tmp_path / "m.json"
    p = inproc("merge_runs.py", *PROCESSES[:2], path, "--out", out)
    assert p.returncode == 0, p.stderr
    case = read(out)["results"][0]
    assert case["status"] == "failed" and case["reason"] == "process 3 of 3: cudaMemcpyAsync: an illegal memory access"
    assert case["latency_us"] is None and case["levels"] == {
        "processes": 2, "of": 3, "missing": [{"process": 3, "status": "failed", "reason": r["reason"]}]}
    check_document(read(out))


def refusals(tmp_path):
    """(arguments, what the one line names) of every merge merge_runs.py refuses."""
    docs = {name: read(PROCESSES[i]) for i, name in enumerate(("a", "b", "c"))}
    docs["levels"] = read(PROCESSES[0])
    docs["levels"]["context"]["levels"] = {"processes": 2}
    docs["config"] = read(PROCESSES[1])
    docs["config"]["context"]["config"]["sizes"] = [4096]
    docs["revision"] = read(PROCESSES[2])
    docs["revision"]["context"]["dmabench"]["git_revision"] = "0123abc"
    f = {}
    for name, doc in docs.items():
        f[name] = tmp_path / f"{name}.json"
        f[name].write_text(json.dumps(doc))
    os.symlink(f["a"], tmp_path / "link.json")
    return [([f["a"]], "a.json: one results file; a merge takes the results files of 2 or more processes"),
            ([f["a"], f["b"], f["levels"]], "levels.json: context.levels: already a levels file"),
            ([f["a"], f["b"], f["config"], f["revision"]], f"config.json: context.config.sizes differs from {f['a']}'s"),
            ([f["a"], f["revision"], f["b"]], f"revision.json: context.dmabench.git_revision '0123abc' differs from {f['a']}'s "
             "'2977ece8b929-dirty'"),
            ([f["a"], f["b"], f["a"]], f"a.json: given twice (the same file as {f['a']})"),
            ([f["a"], f["b"], tmp_path / "link.json"], f"link.json: given twice (the same file as {f['a']})"),
            ([f["a"], tmp_path / "missing.json"], "missing.json"),
            ([], "the following arguments are required: results")]


def test_every_refusal_is_one_line_and_writes_nothing(tmp_path):
    out = tmp_path / "out" / "m.json"
    out.parent.mkdir()
    for args, want in refusals(tmp_path):
        one_line(inproc("merge_runs.py", *args, "--out", out), "merge_runs.py", want)
        assert os.listdir(out.parent) == [], args
    one_line(inproc("merge_runs.py", *PROCESSES[:2]), "merge_runs.py", "required: --out")
    copy_of = tmp_path / "p1.json"
    shutil.copy(PROCESSES[0], copy_of)
    one_line(inproc("merge_runs.py", copy_of, PROCESSES[1], "--out", copy_of), "merge_runs.py",
             f"--out {copy_of}: the results file {copy_of} given to --merge, which it reads")
    assert read(copy_of) == read(PROCESSES[0])


def test_the_script_has_its_run_bit_and_usage():
    path = os.path.join(SCRIPTS, "merge_runs.py")
    assert os.access(path, os.X_OK)
    with open(path, encoding="utf-8") as f:
        assert f.read().startswith("#!/usr/bin/env python3\n")
    p = subprocess.run([sys.executable, path, "--help"], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0 and p.stdout.startswith("usage: merge_runs.py "), p.stderr
    from dmabench import merge_runs  # the documented usage, in the module the shim runs
    assert "usage: merge_runs.py A.json B.json [C.json ...] --out M.json" in merge_runs.__doc__


def test_each_process_core_share_is_kept():
    """levels.core_shared: each process's share of samples on a shared core (core_share.shared / probed), as the
    program's merge writes it; the calibration's core_share becomes every process's own."""
    assert levels.shared_fraction({"core_share": {"probed": 30, "shared": 6}}) == 0.2
    assert levels.shared_fraction({"core_share": {"probed": 0, "shared": 0}}) is None
    assert levels.shared_fraction({}) is None
    own = [{"readings": 50, "shared": k, "ratio_p50": 0.5, "threshold": 0.75} for k in (1, 40)]
    docs = process_docs([100, 110])
    for doc, c in zip(docs, own):
        doc["context"]["calibration"] = {"probes": {}, "core_share": c}
    assert merged_levels(docs)["context"]["calibration"]["core_share"] == {"threshold": 0.75, "per_process": own}


def test_merge_runs_says_where_the_program_is_missing(tmp_path, monkeypatch):
    """The merge is the program's: without one (DMABENCH_BINARY not executable, none on PATH, none built) merge_runs.py
    says so in one line; --program names it."""
    exe = program()
    monkeypatch.setenv("DMABENCH_BINARY", str(tmp_path / "no-dmabench"))
    out = tmp_path / "m.json"
    one_line(inproc("merge_runs.py", *PROCESSES, "--out", out), "merge_runs.py",
             f"DMABENCH_BINARY {tmp_path / 'no-dmabench'}: not an executable file; needs the dmabench program: set "
             "DMABENCH_BINARY or put dmabench on PATH")
    p = inproc("merge_runs.py", *PROCESSES, "--out", out, "--program", exe)
    assert p.returncode == 0 and read(out)["context"]["levels"]["merged_by"] == "merge_runs.py", p.stderr
