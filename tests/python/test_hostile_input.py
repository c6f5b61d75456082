"""Malformed results files through every script's command line: exit 2 with one line `<script>: error: ...` on
stderr, never a traceback; and every script still exits 0 on the committed files it is meant for."""
import copy
import json
import os

import pytest

from test_scripts import H200, SCRIPTS, document, overlap_result, result, run

import sys
sys.path.insert(0, SCRIPTS)
from dmabench_results import ResultsError, load  # noqa: E402


def good():
    return document([result("copy", "ce", 1024, "oneshot", 8.0), result("copy", "nccl", 1024, "oneshot", 9.0),
                     overlap_result("ce", 1 << 20, "oneshot", 20.0, 0.5, 30.0)])


def broken(change):
    doc = good()
    change(doc)
    return doc


def setitem(path, value):
    def change(doc):
        *head, last = path
        target = doc
        for k in head:
            target = target[k]
        target[last] = value
    return change


def delitem(path):
    def change(doc):
        *head, last = path
        target = doc
        for k in head:
            target = target[k]
        del target[last]
    return change


# name -> (file content: a str written as is or bytes, or a document to dump; what stderr must name)
CASES = {
    "no results": (broken(delitem(["results"])), "results: missing"),
    "results not a list": (broken(setitem(["results"], {"a": 1})), "results: expected a list"),
    "empty record": (broken(setitem(["results"], [{}])), "results[0].name: missing"),
    "record not an object": (broken(setitem(["results", 1], 7)), "results[1]: expected an object"),
    "p50 zero": (broken(setitem(["results", 1, "latency_us", "p50"], 0)),
                 "results[1].latency_us.p50: expected a positive number, got 0"),
    "latency null on ok": (broken(setitem(["results", 0, "latency_us"], None)), "results[0].latency_us: expected an object"),
    "options null": (broken(setitem(["results", 0, "options"], None)), "results[0].options: expected an object"),
    "deep nesting": ('{"schema": "dmabench/1", "context": {}, "results": ' + "[" * 100000 + "]" * 100000 + "}",
                     "nests too deeply"),
    "truncated": (json.dumps(good())[:300], "cannot read"),
    "binary garbage": (bytes(range(256)) * 4, "cannot read"),
    "top-level list": ([good()], "top level is list"),
    "schema 2": (broken(setitem(["schema"], "dmabench/2")), "'dmabench/2'; these scripts read 'dmabench/1'"),
    "no schema": (broken(delitem(["schema"])), "not a dmabench results file"),
    "NaN p95": ('{"schema": "dmabench/1", "context": {}, "results": [' + json.dumps(result("copy", "ce", 1024, "oneshot", 8.0))
                .replace('"p95": 8.4', '"p95": NaN') + "]}", "results[0].latency_us.p95: expected a number >= 0, got nan"),
    "string busbw": (broken(setitem(["results", 0, "busbw_GBps"], "fast")), "results[0].busbw_GBps"),
    "string bytes_per_rank": (broken(setitem(["results", 0, "bytes_per_rank"], "1KiB")), "results[0].bytes_per_rank"),
    "Infinity overlap": ('{"schema": "dmabench/1", "context": {}, "results": [' +
                         json.dumps(overlap_result("ce", 1 << 20, "oneshot", 20.0, 0.5, 30.0))
                         .replace('"overlap_efficiency": 0.9', '"overlap_efficiency": Infinity') + "]}",
                         "results[0].overlap.overlap_efficiency"),
    "missing context": (broken(delitem(["context"])), "context: missing"),
    "context null": (broken(setitem(["context"], None)), "context: expected an object"),
    "machine a string": (broken(setitem(["context", "machine"], "h200")), "context.machine: expected an object"),
    "unknown status": (broken(setitem(["results", 0, "status"], "great")), "results[0].status"),
    "name without engine": (broken(setitem(["results", 0, "name"], "copy")), "results[0].name"),
    "power numbers strings": (broken(setitem(["results", 0, "power"], {"active_W": "a lot", "window_s": 2.0})),
                              "results[0].power.active_W"),
    "devices not ints": (broken(setitem(["results", 0, "devices"], ["a"])), "results[0].devices[0]"),
}


def invocations(path, other, out):
    """Every script with the file in each place it reads one."""
    return [("compare.py", [path, other]), ("compare.py", [other, path]), ("summarize.py", [path]),
            ("plot.py", [path, "--out", out]), ("dma_latte_report.py", [path]),
            ("dma_latte_report.py", [other, "--breakdown", path]), ("overlap_report.py", [path])]


def check_one_line(p, script, want=None):
    assert p.returncode == 2, (script, p.returncode, p.stderr[-500:])
    assert "Traceback" not in p.stderr, (script, p.stderr[-2000:])
    lines = p.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"{script}: error: "), (script, p.stderr[-2000:])
    assert want is None or want in lines[0], (script, want, lines[0])


@pytest.fixture(scope="module")
def hostile_dir(tmp_path_factory):
    d = tmp_path_factory.mktemp("hostile")
    for i, (name, (content, _)) in enumerate(CASES.items()):
        f = d / f"case{i}.json"
        if isinstance(content, bytes):
            f.write_bytes(content)
        else:
            f.write_text(content if isinstance(content, str) else json.dumps(content))
    (d / "good.json").write_text(json.dumps(good()))
    return d


@pytest.mark.parametrize("name", list(CASES))
def test_reader_names_the_first_problem(hostile_dir, name):
    path = str(hostile_dir / f"case{list(CASES).index(name)}.json")
    with pytest.raises(ResultsError) as e:
        load(path)
    msg = str(e.value)
    assert "\n" not in msg and path in msg and CASES[name][1] in msg, msg


def test_every_script_refuses_every_malformed_file(hostile_dir):
    # one process per script: all the files go through a small driver that calls each script's main() the way its
    # command line does (argv, exit status, stderr); a few go through real subprocesses below
    driver = hostile_dir / "driver.py"
    driver.write_text(f"""
import contextlib, io, json, sys, traceback
sys.path.insert(0, {SCRIPTS!r})
script, cases = sys.argv[1], json.loads(sys.argv[2])
mod = __import__(script[:-3])
out = []
for argv in cases:
    err = io.StringIO()
    try:
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            rc = mod.main(argv)
    except BaseException:
        rc, err = -1, io.StringIO(traceback.format_exc())
    out.append([rc, err.getvalue()])
print(json.dumps(out))
""")
    other, out = str(hostile_dir / "good.json"), str(hostile_dir / "figs")
    files = [str(hostile_dir / f"case{i}.json") for i in range(len(CASES))]
    by_script = {}
    for i, f in enumerate(files):
        for script, argv in invocations(f, other, out):
            by_script.setdefault(script, []).append((list(CASES)[i], list(map(str, argv))))
    for script, cases in by_script.items():
        p = run_python(driver, script, json.dumps([argv for _, argv in cases]))
        assert p.returncode == 0, p.stderr[-3000:]
        for (name, argv), (rc, err) in zip(cases, json.loads(p.stdout)):
            assert rc == 2, (script, name, rc, err[-2000:])
            lines = err.splitlines()
            assert len(lines) == 1 and lines[0].startswith(f"{script}: error: ") and "Traceback" not in err, \
                (script, name, err[-2000:])
            assert CASES[name][1] in lines[0], (script, name, lines[0])


def run_python(*args):
    import subprocess
    return subprocess.run([sys.executable, *map(str, args)], capture_output=True, text=True, timeout=600)


@pytest.mark.parametrize("script", ["compare.py", "summarize.py", "plot.py", "dma_latte_report.py", "overlap_report.py"])
def test_command_line_error_is_one_line_and_exit_2(hostile_dir, script, tmp_path):
    # through the real command line: the deepest nesting, and a file that does not exist
    for name in ("deep nesting", "p50 zero"):
        path = hostile_dir / f"case{list(CASES).index(name)}.json"
        args = dict(invocations(path, hostile_dir / "good.json", tmp_path / "o"))[script]
        check_one_line(run(script, *args), script, CASES[name][1])
    args = dict(invocations(tmp_path / "missing.json", hostile_dir / "good.json", tmp_path / "o"))[script]
    check_one_line(run(script, *args), script, "missing.json")


def test_bad_arguments_exit_2(hostile_dir, tmp_path):
    g = hostile_dir / "good.json"
    check_one_line(run("summarize.py", g, "--sizes", "lots"), "summarize.py", "not a size")
    check_one_line(run("summarize.py", g, "--devices", "0,x"), "summarize.py", "--devices")
    check_one_line(run("compare.py", g, g, "--threshold", "-1"), "compare.py", "--threshold")
    assert run("plot.py", g).returncode == 2  # argparse: --out is required


def test_empty_results(tmp_path):
    empty = tmp_path / "empty.json"
    empty.write_text(json.dumps(document([])))
    check_one_line(run("plot.py", empty, "--out", tmp_path / "o"), "plot.py", "nothing to plot")
    check_one_line(run("overlap_report.py", empty), "overlap_report.py", "no measured overlap case")
    check_one_line(run("compare.py", empty, empty), "compare.py", "no case in common")
    check_one_line(run("plot.py", os.path.join(H200, "rotate.json"), "--out", tmp_path / "o"), "plot.py",
                   "no ok oneshot results")  # rotate.json has only pipelined cases
    for script in ("summarize.py", "dma_latte_report.py"):  # empty tables: nothing wrong with the file
        p = run(script, empty)
        assert p.returncode == 0 and not p.stderr, (script, p.stderr)


# every committed results file through the scripts meant for it (README: "Reading results", "Plotting results")
COMMITTED = sorted(f for f in os.listdir(H200) if f.endswith(".json"))
OVERLAP = {"overlap.json", "overlap-inplace.json", "local-copy-overlap.json"}


def test_committed_files_load():
    for f in COMMITTED:
        load(os.path.join(H200, f))


@pytest.mark.parametrize("name", COMMITTED)
def test_scripts_read_every_committed_file(name):
    path = os.path.join(H200, name)
    for script, args in [("summarize.py", [path]), ("dma_latte_report.py", [path]), ("compare.py", [path, path])] + \
            ([("overlap_report.py", [path, "--targets"])] if name in OVERLAP else []):
        p = run(script, *args)
        assert p.returncode == 0, (script, name, p.stderr[-2000:])


@pytest.mark.parametrize("name", sorted(OVERLAP | {"rotate.json", "quick-case-pipeline.json", "default-budget.json"}))
def test_plot_committed_files_not_covered_elsewhere(tmp_path, name):
    # test_scripts.py plots default, power, breakdown and dma-latte; overlap.json repeats each case alone once per
    # workload it ran beside, which broke the speedup figure ("x and y must have same first dimension")
    out = tmp_path / "figs"
    p = run("plot.py", os.path.join(H200, name), "--out", out, *(["--timing", "both"] if name == "rotate.json" else []))
    assert p.returncode == 0, p.stderr[-2000:]
    assert any(f.startswith("latency_") for f in os.listdir(out))
    if name == "overlap.json":
        assert {"speedup_allgather_oneshot.png", "speedup_alltoall_oneshot.png"} <= set(os.listdir(out))
