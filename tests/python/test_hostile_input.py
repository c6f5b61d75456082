"""Malformed results files through every script's command line: exit 2 with one line `<script>: error: ...` on
stderr, never a traceback; and every script still exits 0 on the committed files it is meant for."""
import copy
import json
import math
import os
import sqlite3

import pytest

from test_scripts import H200, PACKAGE_ENV, ROOT, SCRIPTS, document, execute_notebook, overlap_result, result, run, \
    tracked, with_interval

import sys
from dmabench import ResultsError, load


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


MB = 1 << 20
MAX_LINE = 300  # characters of an error line (issue 40: a value quoted back is capped, dmabench.quote)


def nested(depth):
    """A JSON list `depth` lists deep: more than any parser here reads."""
    return "[" * depth + "]" * depth


def with_intervals(change):
    """good() with the fields dmabench writes around its first record's p50 (its intervals), then `change`d: a record
    that contradicts itself (check_consistent)."""
    doc = good()
    r = with_interval(doc["results"][0], 0.01)
    change(r)
    return doc


def ten_times_faster(r):
    """p50 and bandwidths 10x faster, the intervals left as they were."""
    r["latency_us"] = {k: v / 10 for k, v in r["latency_us"].items()}
    r["algbw_GBps"] *= 10
    r["busbw_GBps"] *= 10


TRACE = {"format": "dmabench-moe-trace/1", "synthetic": True, "description": "x" * MB, "ranks": 2, "tokens_per_rank": 1,
         "steps": [[[1, 0], [0, 1]]]}

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
    # numbers Python reads as integers of any size: one beyond a float, one beyond 64 bits (pandas, dmabench)
    "huge integer p50": (json.dumps(good()).replace('"p50": 8.0', '"p50": 1' + "0" * 400, 1),
                         "results[0].latency_us.p50: expected a positive number, got 1000"),
    "huge integer busbw": (json.dumps(good()).replace('"busbw_GBps": ', '"busbw_GBps": 9' + "9" * 320 + ", \"x\": ", 1),
                           "results[0].busbw_GBps: expected a number >= 0"),
    "bytes_per_rank beyond 64 bits": (broken(setitem(["results", 1, "bytes_per_rank"], 1 << 64)),
                                      "results[1].bytes_per_rank: expected an integer of at most 64 bits"),
    # issue 40: values of a megabyte and nesting deeper than any parser reads, each quoted back in a short line
    "1 MB schema": (broken(setitem(["schema"], "dmabench/" + "x" * MB)), "has schema 'dmabench/xxxx"),
    "1 MB name": (broken(setitem(["results", 0, "name"], "copy/" + "c" * MB)), "results[0].name: case name 'copy/ccc"),
    "1 MB status": (broken(setitem(["results", 0, "status"], "s" * MB)), "results[0].status: expected one of"),
    "1 MB option name": (broken(setitem(["results", 0, "name"], "copy/ce,tag=" + "t" * MB + "/x/dev=0,1/1024")),
                         "results[0].name: case name 'copy/ce,tag=ttt"),
    "20000-deep list in a results file": (json.dumps(good()).replace('"options": {}', '"options": ' + nested(20000), 1),
                                          "nests too deeply"),
    "trace-like file": (TRACE, "not a dmabench results file"),
    "trace-like file 20000 deep": (json.dumps({**TRACE, "steps": None}).replace("null", nested(20000)), "nests too deeply"),
    # issue 40: a reference that contradicts itself (its p50 and bandwidth edited, its intervals left)
    "p50 and algbw 10x faster": (with_intervals(ten_times_faster),
                                 "results[0].p50_interval_us: [7.92, 8.08] does not hold the p50 0.8: record "
                                 "'copy/ce/oneshot/dev=0,1/1024' contradicts itself"),
    "algbw 10x": (with_intervals(lambda r: r.update(algbw_GBps=r["algbw_GBps"] * 10)),
                  "results[0].algbw_GBps: 1.28 is not bytes / (p50 x 1e3) = 0.128: record 'copy/ce/oneshot/dev=0,1/1024'"),
    "busbw 10x": (with_intervals(lambda r: r.update(busbw_GBps=r["busbw_GBps"] * 10)),
                  "results[0].busbw_GBps: busbw / algbw is 10, its intervals' ratio 1: record 'copy/ce/oneshot"),
}


def invocations(path, other, out):
    """Every script with the file in each place it reads one."""
    probe = os.path.join(os.path.dirname(os.fspath(other)), "probe.jsonl")  # an empty probe: host_reference reads on
    return [("compare.py", [path, other]), ("compare.py", [other, path]), ("summarize.py", [path]),
            ("plot.py", [path, "--out", out]), ("dma_latte_report.py", [path]),
            ("dma_latte_report.py", [other, "--breakdown", path]), ("overlap_report.py", [path]),
            ("blocks_report.py", [path]), ("blocks_report.py", [other, path]), ("host_reference.py", [probe, path]),
            ("matrix.py", [path]), ("export_csv.py", [path, "--out", os.path.join(out, "r.csv")]),
            ("setup_report.py", [path]), ("setup_report.py", [other, path]), ("moe_report.py", [path]),
            ("history.py", ["add", path, "--db", os.path.join(out, "h.sqlite")]),
            ("history.py", ["gate", path, "--db", os.path.join(out, "h.sqlite")]),
            ("history.py", ["gate", path, "--record", "--db", os.path.join(out, "h.sqlite")]),
            ("merge_runs.py", [other, path, "--out", os.path.join(out, "m.json")]),
            ("merge_runs.py", [path, other, "--out", os.path.join(out, "m.json")])]


def check_one_line(p, script, want=None):
    assert p.returncode == 2, (script, p.returncode, p.stderr[-500:])
    assert "Traceback" not in p.stderr, (script, p.stderr[-2000:])
    lines = p.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"{script}: error: "), (script, p.stderr[-2000:])
    assert want is None or want in lines[0], (script, want, lines[0])
    assert len(lines[0]) <= MAX_LINE, (script, len(lines[0]), lines[0][:1000])


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
    (d / "probe.jsonl").write_text("")
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
from dmabench.cli import script as run_script
script, cases = sys.argv[1], json.loads(sys.argv[2])
out = []
for argv in cases:
    err = io.StringIO()
    try:
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            rc = run_script(script, argv)
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
            assert CASES[name][1] in lines[0] and len(lines[0]) <= MAX_LINE, (script, name, lines[0][:1000])


def run_python(*args):
    import subprocess
    return subprocess.run([sys.executable, *map(str, args)], capture_output=True, text=True, timeout=600, env=PACKAGE_ENV)


@pytest.mark.parametrize("script", ["compare.py", "summarize.py", "plot.py", "dma_latte_report.py", "overlap_report.py",
                                    "blocks_report.py", "host_reference.py", "matrix.py", "export_csv.py", "setup_report.py",
                                    "history.py", "merge_runs.py"])
def test_command_line_error_is_one_line_and_exit_2(hostile_dir, script, tmp_path):
    # through the real command line: the deepest nesting, and a file that does not exist
    for name in ("deep nesting", "p50 zero", "1 MB name", "algbw 10x"):
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


# every committed results file through the scripts meant for it (docs/user-guide.md: "Reading results", "Plotting results")
COMMITTED = [os.path.basename(f) for f in tracked(os.path.relpath(H200, ROOT))
             if os.path.dirname(f) == H200 and f.endswith(".json")]
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


# ---- the rest of the command-line contract (issue 26, items 14, 17, 18): files that are not files, output paths
# that cannot be written, a reader that goes away, argument errors, names that are not text, a bug ----------------

import re  # noqa: E402
import subprocess  # noqa: E402

from test_blocks_report import block_result  # noqa: E402

ALL = ["compare.py", "summarize.py", "plot.py", "dma_latte_report.py", "overlap_report.py", "blocks_report.py",
       "host_reference.py", "launch_compare.py", "sdma_map.py", "matrix.py", "export_csv.py", "setup_report.py",
       "history.py", "merge_runs.py", "moe_report.py", "moe_trace.py"]
HANG_S = 60  # a script that blocks on a FIFO is killed here and the test fails


def one_line(p, script, want=None, rc=2):
    """Exit `rc` with exactly one line `<script>: error: ...` (naming `want`) on stderr, never a traceback."""
    assert p.returncode == rc, (script, p.returncode, p.stderr[-2000:])
    lines = p.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"{script}: error: "), (script, p.stderr[-2000:])
    assert want is None or want in lines[0], (script, want, lines[0])
    assert len(lines[0]) <= MAX_LINE, (script, len(lines[0]), lines[0][:1000])


def script(name, *args, timeout=HANG_S, **kw):
    return subprocess.run([sys.executable, os.path.join(SCRIPTS, name), *map(os.fspath, args)], capture_output=True,
                          text=True, timeout=timeout, **kw)


def inproc(name, *args):
    """`name`'s main() in this process, as a CompletedProcess, warnings printed to its stderr as they would be: for
    what cannot hang (plot.py's interpreter start, pandas and matplotlib, takes seconds on a busy machine)."""
    import contextlib
    import io
    import warnings
    from dmabench.cli import script as run_script
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err), warnings.catch_warnings():
        warnings.simplefilter("always")
        warnings.showwarning = lambda message, category, filename, lineno, file=None, line=None: \
            sys.stderr.write(warnings.formatwarning(message, category, filename, lineno, line))
        try:
            rc = run_script(name, [os.fspath(a) for a in args])
        except SystemExit as e:
            rc = e.code
    return subprocess.CompletedProcess([name, *args], rc, out.getvalue(), err.getvalue())


@pytest.mark.parametrize("name", ALL)
def test_argument_errors_are_one_line_without_usage(name):
    p = inproc(name, "--no-such-option")
    one_line(p, name)  # argparse printed its usage and then the error: two lines
    assert "usage:" not in p.stderr and ("--no-such-option" in p.stderr or "required" in p.stderr), p.stderr


def test_missing_required_argument_is_one_line(tmp_path):
    one_line(inproc("plot.py", os.path.join(H200, "default.json")), "plot.py", "the following arguments are required: --out")
    one_line(inproc("launch_compare.py", "--no-run"), "launch_compare.py", "required: --out")
    one_line(inproc("compare.py", "--threshold", "x", "a", "b"), "compare.py", "invalid float value: 'x'")


def results_places(tmp_path, planted):
    """Every script with `planted` in each place it reads a results file or its journal from: (script, args, rc)."""
    good_path = tmp_path / "good.json"
    good_path.write_text(json.dumps(good()))
    probe = tmp_path / "probe.jsonl"
    probe.write_text("")
    out = tmp_path / "figs"
    return [("compare.py", [planted, good_path]), ("compare.py", [good_path, planted]), ("summarize.py", [planted]),
            ("plot.py", [planted, "--out", out]), ("dma_latte_report.py", [good_path, "--breakdown", planted]),
            ("overlap_report.py", [planted]), ("blocks_report.py", [good_path, planted]),
            ("host_reference.py", [planted, good_path]), ("host_reference.py", [probe, planted]), ("matrix.py", [planted]),
            ("export_csv.py", [planted]), ("setup_report.py", [good_path, planted]),
            ("history.py", ["gate", planted, "--db", tmp_path / "h.sqlite"]),
            ("merge_runs.py", [good_path, planted, "--out", tmp_path / "m.json"]),
            ("merge_runs.py", [planted, good_path, "--out", tmp_path / "m.json"])]


def test_fifo_devices_and_directories_are_refused_not_read(tmp_path):
    # a FIFO with no writer would block open() for ever; /dev/null and a directory are not results files either
    fifo = tmp_path / "run.json"
    os.mkfifo(fifo)
    for planted, kind in ((fifo, "a FIFO"), ("/dev/null", "a character device"), (tmp_path, "a directory")):
        for name, args in results_places(tmp_path, planted):
            # a process that can be killed where a FIFO blocks; plot.py (seconds to start) only there
            one_line(script(name, *args) if planted == fifo or name != "plot.py" else inproc(name, *args), name, kind)


def test_fifo_at_the_journal_beside_a_results_file(tmp_path):
    # load() looks for <results>.journal (a run that has not finished) before it reads the results file
    res = tmp_path / "run.json"
    res.write_text(json.dumps(good()))
    os.mkfifo(str(res) + ".journal")
    for name, args in results_places(tmp_path, res):
        if args[0] != res or name != "host_reference.py":  # there it is the probe file: no journal
            one_line(script(name, *args), name, "run.json.journal: a FIFO")


def test_results_file_over_the_size_limit(tmp_path):
    big = tmp_path / "big.json"
    with open(big, "wb") as f:
        f.truncate((1 << 30) + 1)  # sparse: nothing is written
    one_line(script("summarize.py", big), "summarize.py", "a results file is at most 1024 MiB")
    (tmp_path / "j.json").write_text(json.dumps(good()))
    os.rename(big, tmp_path / "j.json.journal")
    one_line(script("compare.py", tmp_path / "j.json", tmp_path / "j.json"), "compare.py", "a journal is at most")


def test_launch_compare_fifos_and_unwritable_outputs(tmp_path):
    d = tmp_path / "lc"
    d.mkdir()
    doc = json.dumps(good())
    for f in ("one-1.json", "mpi-1.json"):
        (d / f).write_text(doc)
    os.mkfifo(d / "mpi-2.json")
    one_line(script("launch_compare.py", "--out", d, "--no-run"), "launch_compare.py", "mpi-2.json: a FIFO")
    os.remove(d / "mpi-2.json")
    os.symlink("/dev/full", d / "compare.md")  # a full disk
    one_line(script("launch_compare.py", "--out", d, "--no-run"), "launch_compare.py",
             "cannot write " + str(d / "compare.md") + ": No space left on device")
    os.remove(d / "compare.md")
    os.mkfifo(d / "compare.md")  # nothing reads it
    one_line(script("launch_compare.py", "--out", d, "--no-run"), "launch_compare.py", "a FIFO that nothing reads")


def test_launch_compare_bad_arguments_before_anything_runs(tmp_path):
    cfg = tmp_path / "c.json"
    cfg.write_text("{}")
    exe = tmp_path / "dmabench"
    exe.write_text("#!/bin/sh\nexit 0\n")
    os.chmod(exe, 0o755)
    base = ["--config", cfg, "--dmabench", exe]
    afile = tmp_path / "afile"
    afile.write_text("")
    for args, want in (([*base, "--out", tmp_path / "o", "--launcher", "mpirun '-np"], "No closing quotation"),
                       ([*base, "--out", tmp_path / "o", "--large", "9" * 40], "is not a size"),
                       ([*base, "--out", tmp_path / "o", "--large", "99999999TiB"], "2^63 bytes or more"),
                       ([*base, "--out", afile], "not a directory"),
                       ([*base, "--out", tmp_path / "o", "--launcher", "no-such-launcher -n {np}"],
                        "no-such-launcher: no such command"),
                       (["--config", cfg, "--dmabench", cfg, "--out", tmp_path / "o"], "not executable")):
        one_line(script("launch_compare.py", *args), "launch_compare.py", want)
    assert not (tmp_path / "o" / "runs.log").exists()
    os.mkdir(tmp_path / "o2")
    os.mkfifo(tmp_path / "o2" / "runs.log")
    one_line(script("launch_compare.py", *base, "--out", tmp_path / "o2"), "launch_compare.py",
             "runs.log: a FIFO that nothing reads")


def read_only_dir(tmp_path):
    """A directory this process cannot create files in: mode 0555, or for root (who may write there anyway) sysfs."""
    if os.geteuid() == 0:
        if not os.path.isdir("/sys/kernel"):
            pytest.skip("root without /sys/kernel: no directory root cannot write to")
        return "/sys/kernel"
    d = tmp_path / "ro"
    d.mkdir(mode=0o555)
    return d


def test_plot_output_that_cannot_be_written(tmp_path):
    src = tmp_path / "g.json"
    src.write_text(json.dumps(good()))
    afile = tmp_path / "afile"
    afile.write_text("keep")
    one_line(inproc("plot.py", src, "--out", afile), "plot.py", f"--out {afile}: not a directory")
    assert afile.read_text() == "keep"
    one_line(inproc("plot.py", src, "--out", read_only_dir(tmp_path)), "plot.py", "Permission denied")
    full = tmp_path / "full"
    full.mkdir()
    os.symlink("/dev/full", full / "latency_copy_oneshot.png")
    one_line(inproc("plot.py", src, "--out", full), "plot.py", "No space left on device")
    one_line(inproc("plot.py", src, "--out", "/dev/full"), "plot.py", "not a directory")


def test_report_outputs_that_cannot_be_written(tmp_path):
    src = tmp_path / "g.json"
    src.write_text(json.dumps(document([block_result("ce", 4096, 16, 10.0)])))
    probe = tmp_path / "probe.jsonl"
    probe.write_text("")
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    ro = read_only_dir(tmp_path)
    for name, args in (("blocks_report.py", [src, "--markdown"]), ("blocks_report.py", [src, "--json"]),
                       ("host_reference.py", [probe, src, "--markdown"])):
        one_line(script(name, *args, "/dev/full"), name, "No space left on device")
        one_line(script(name, *args, tmp_path), name, "a directory")
        one_line(script(name, *args, fifo), name, "a FIFO that nothing reads")
        one_line(script(name, *args, os.path.join(ro, "out.md")), name, "Permission denied")
    # a report that cannot be written whole leaves the file that was there as it was
    md = tmp_path / "keep.md"
    md.write_text("keep")
    p = script("blocks_report.py", src, "--markdown", md)
    assert p.returncode == 0 and md.read_text().startswith("# Block layouts"), p.stderr
    assert not [f for f in os.listdir(tmp_path) if f.endswith(".tmp")]


def test_an_output_never_replaces_an_input_or_a_runs_own_file(tmp_path):
    # `export_csv.py run.json --out run.json` replaced the results with their CSV; `--out run.json.journal` took the
    # name of a running dmabench's journal (which that run removes at its end, or which a killed run's results are in)
    src = tmp_path / "g.json"
    src.write_text(json.dumps(document([block_result("ce", 4096, 16, 10.0)])))
    src2 = tmp_path / "g2.json"
    src2.write_text(src.read_text())
    probe = tmp_path / "probe.jsonl"
    probe.write_text("")
    os.symlink(src, tmp_path / "link.csv")
    os.link(src, tmp_path / "hard.csv")  # another name of the same file (issue 51)
    kept = {p: p.read_bytes() for p in (src, src2, probe)}
    for name, args in (("export_csv.py", [src, "--out"]), ("blocks_report.py", [src, "--markdown"]),
                       ("blocks_report.py", [src, "--json"]), ("host_reference.py", [probe, src, "--markdown"]),
                       ("history.py", ["add", src, "--db"]), ("merge_runs.py", [src2, src, "--out"])):
        for out, want in ((src, "a file this script read"), (tmp_path / "link.csv", "a file this script read"),
                          (tmp_path / "hard.csv", "a file this script read"),
                          (tmp_path / "other.json.journal", "a dmabench run's own file"),
                          (tmp_path / "other.json.lock", "a dmabench run's own file")):
            if name == "merge_runs.py":  # the program writes the levels file, and says so in its words
                want = {"a file this script read": "given to --merge, which it reads",
                        "a dmabench run's own file": "named like a run's own file"}[want]
            one_line(inproc(name, *args, out), name, want)
        assert {p: p.read_bytes() for p in kept} == kept, name
    assert os.path.islink(tmp_path / "link.csv")
    assert sorted(os.listdir(tmp_path)) == ["g.json", "g2.json", "hard.csv", "link.csv", "probe.jsonl"]


@pytest.mark.parametrize("name,args", [("export_csv.py", ["{src}"]), ("summarize.py", ["{src}"]),
                                       ("export_csv.py", ["{src}", "--out", "{csv}"])])
def test_a_closed_stdout_is_a_reader_gone_from_the_start(tmp_path, name, args):
    # `script >&-`: Python starts with sys.stdout None, and the scripts ended in an internal error (exit 3)
    src = os.path.join(H200, "default.json")
    argv = [{"{src}": src, "{csv}": os.fspath(tmp_path / "r.csv")}.get(a, a) for a in args]
    p = subprocess.run([sys.executable, os.path.join(SCRIPTS, name), *argv], stderr=subprocess.PIPE, text=True,
                       timeout=HANG_S, preexec_fn=lambda: os.close(1))
    assert p.returncode == 0 and p.stderr == "", (name, p.returncode, p.stderr[-2000:])
    if "--out" in args:
        assert (tmp_path / "r.csv").read_text().startswith("name,status,")


@pytest.mark.parametrize("name,args,rc", [
    ("compare.py", ["{big}", "{big}", "--all"], 0), ("summarize.py", ["{big}"], 0), ("dma_latte_report.py", ["{big}"], 0),
    ("blocks_report.py", ["{host}"], 0), ("plot.py", ["{small}", "--out", "{out}"], 0),
    ("export_csv.py", ["{big}"], 0), ("matrix.py", ["{big}"], 0), ("compare.py", ["{big}", "{missing}"], 2)])
def test_a_reader_that_goes_away_ends_nothing_and_prints_nothing(tmp_path, name, args, rc):
    # `script | head`: the pipe's reader is gone before the script writes; the script finishes its work silently
    # with its own exit status (compare.py's 1 still means a regression) instead of a BrokenPipeError traceback
    values = {"big": os.path.join(ROOT, "results", "h200x2", "dma-latte.json"),
              "host": os.path.join(ROOT, "results", "h200x1", "host.json"), "small": os.path.join(H200, "default.json"),
              "out": tmp_path / "figs", "missing": tmp_path / "missing.json"}
    argv = [os.fspath(values[a[1:-1]]) if a.startswith("{") else a for a in args]
    r, w = os.pipe()
    os.close(r)  # the reader has gone: every write to w fails with EPIPE
    try:
        p = subprocess.run([sys.executable, os.path.join(SCRIPTS, name), *argv], stdout=w, stderr=subprocess.PIPE,
                           text=True, timeout=600)
    finally:
        os.close(w)
    if rc == 2:  # bad input still says so on stderr
        one_line(p, name)
    else:
        assert p.returncode == rc and p.stderr == "", (name, p.returncode, p.stderr[-2000:])
    if name == "plot.py":
        assert any(f.startswith("latency_") for f in os.listdir(tmp_path / "figs"))


def surrogate_doc():
    """A run whose case names, reason and host carry JSON's lone-surrogate escapes (no character: not encodable)."""
    rs = [result("copy", "ce", 1024, "oneshot", 8.0, options={"tag": "a\ud800b"}),
          result("copy", "nccl", 1024, "oneshot", 9.0), result("copy", "ce", 4096, "oneshot", 9.0, options={"tag": "a\ud800b"}),
          result("copy", "sm", 1024, "oneshot", 9.0, status="failed", reason="bad \udcff byte"),
          overlap_result("ce", 1 << 20, "oneshot", 20.0, 0.5, 30.0, options={"tag": "\udfff"}),
          block_result("ce", 4096, 16, 10.0, options={"tag": "\ud800"})]
    doc = document(rs)
    doc["context"]["host"] = "h\ud800st"
    return doc


def test_lone_surrogates_in_names_are_printed_escaped(tmp_path):
    src = tmp_path / "s.json"
    text = json.dumps(surrogate_doc())
    assert "\\ud800" in text  # json.dumps writes the escape, as a file from elsewhere would
    src.write_text(text)
    lc = tmp_path / "lc"
    lc.mkdir()
    for f in ("one-1.json", "mpi-1.json"):
        (lc / f).write_text(text)
    probe = tmp_path / "probe.jsonl"
    probe.write_text('{"test": "info", "host": "\\ud800"}\n')
    for name, args in (("compare.py", [src, src, "--all"]), ("compare.py", [src, src, "--json"]), ("summarize.py", [src]),
                       ("dma_latte_report.py", [src]), ("overlap_report.py", [src]), ("blocks_report.py", [src]),
                       ("plot.py", [src, "--out", tmp_path / "figs"]), ("launch_compare.py", ["--out", lc, "--no-run"]),
                       ("blocks_report.py", [src, "--markdown", tmp_path / "b.md", "--json", tmp_path / "b.json"]),
                       ("merge_runs.py", [lc / "one-1.json", lc / "mpi-1.json", "--out", tmp_path / "m.json"])):
        p = (inproc if name == "plot.py" else script)(name, *args)
        # no "Glyph missing" either; plot.py says which speedup figures have no nccl case to draw (allgather, h2d)
        notes = [line for line in p.stderr.splitlines() if name == "plot.py" and line.startswith("plot.py: speedup_")
                 and line.endswith("; not written")]
        assert p.returncode == 0 and p.stderr.splitlines() == notes, (name, p.returncode, p.stderr[-2000:])
    for name, args in (("compare.py", [src, src, "--all"]), ("summarize.py", [src]), ("blocks_report.py", [src])):
        assert "\\ud800" in script(name, *args).stdout, name
    assert "\\ud800" in (tmp_path / "b.md").read_text()
    p = script("host_reference.py", probe, src)
    assert p.returncode == 1 and p.stderr == "" and "0 of 0 pairs" in p.stdout, p.stderr  # no pair: exit 1 as documented


def test_non_utf8_path_is_named_escaped(tmp_path):
    bad = os.path.join(os.fsencode(tmp_path), b"r\xff.json")
    with open(bad, "w") as f:
        f.write("{")
    p = subprocess.run([sys.executable, os.path.join(SCRIPTS, "summarize.py"), bad], capture_output=True, timeout=HANG_S)
    assert p.returncode == 2 and p.stderr.count(b"\n") == 1 and b"r\\udcff.json" in p.stderr, p.stderr


def refigured(r):
    """`r` with its algbw and busbw what its (edited) p50 makes them (check_consistent); where that bandwidth is beyond
    a float (a p50 of 5e-324), its `bytes` null instead, as in a file that does not record S."""
    factor, algbw = r["busbw_GBps"] / r["algbw_GBps"], r["bytes"] / (r["latency_us"]["p50"] * 1e3)
    if math.isfinite(algbw):
        r["algbw_GBps"], r["busbw_GBps"] = algbw, algbw * factor
    else:
        r["bytes"] = None
    return r


# documents every script must read (exit 0) though their numbers are at the edges of what check_document accepts
EDGES = {
    "energy without uncertainty": lambda d: [r["power"].update(uncertainty=None) for r in d["results"] if r.get("power")],
    "NCCL p99 under load 0": lambda d: [r["overlap"].update(comm_with_p99_us=0) for r in d["results"]
                                         if r.get("overlap") and r["engine"] == "nccl"],
    "latencies near the float limit": lambda d: [refigured(r) for r in d["results"][:2] if not r["latency_us"].update(
        p50=1e308, p95=1.7e308, p99=1.7e308, max=1.7e308)],
    "smallest latencies": lambda d: [refigured(r) for r in d["results"][:2] if not r["latency_us"].update(
        min=0, p50=5e-324, mean=5e-324, p95=5e-324)],
    "integer latencies": lambda d: [refigured(r) for r in d["results"][:1] if not r["latency_us"].update(
        {k: 10 ** 30 for k in r["latency_us"]})],
}


def edge_doc():
    rs = [result("copy", "ce", 1024, "oneshot", 8.0), result("copy", "nccl", 1024, "oneshot", 9.0)]
    for engine in ("ce", "sm", "nccl"):
        r = result("allgather", engine, 1 << 30, "oneshot", 3000.0)
        r["power"] = {"energy_per_GB_J": 1.5, "active_W": 200.0, "uncertainty": 0.01, "window_s": 2.0}
        rs.append(r)
    rs += [overlap_result(e, 1 << 20, "oneshot", 20.0, 0.5, 30.0) for e in ("ce", "nccl")]
    return document(rs)


@pytest.mark.parametrize("edge", list(EDGES))
def test_edge_values_are_read(tmp_path, edge):
    doc = edge_doc()
    EDGES[edge](doc)
    src = tmp_path / "e.json"
    src.write_text(json.dumps(doc))
    for name, args in (("summarize.py", [src]), ("overlap_report.py", [src, "--targets"]), ("compare.py", [src, src]),
                       ("dma_latte_report.py", [src]), ("blocks_report.py", [src]),
                       ("plot.py", [src, "--out", tmp_path / "figs"])):
        p = (inproc if name == "plot.py" else script)(name, *args)
        if name == "plot.py" and edge == "latencies near the float limit":  # read, but no axis can span them
            one_line(p, name, "p50 1e+308 is beyond what a figure can show (at most 1e+300)")
            continue
        assert p.returncode == 0 and p.stderr == "", (name, p.stderr[-2000:])


def test_host_reference_probe_lines_it_cannot_use(tmp_path):
    res = tmp_path / "r.json"
    res.write_text(json.dumps(document([])))
    probe = tmp_path / "probe.jsonl"
    for text, want in (("[1]\n", "line 1: expected an object"),
                       ('{"test": "h2d"}\n', "line 1: bytes: expected an integer, got null"),
                       ('{"test": "h2d", "bytes": 67108864, "oneshot_us_p50": "fast", "b2b_per_op_us_median": 1}\n',
                        "line 1: oneshot_us_p50: expected a positive number"),
                       ('\n{"test": "paged-h2d", "mechanism": "loop", "block_bytes": 4096, "blocks": 4096, '
                        '"oneshot_us_p50": 0}\n', "line 2: oneshot_us_p50: expected a positive number, got 0"),
                       ('{"test": 7}\n', "line 1: test: expected a string")):
        probe.write_text(text)
        one_line(script("host_reference.py", probe, res), "host_reference.py", want)


def test_host_reference_record_without_validated_is_no_pair(tmp_path):
    rec = block_result("ce", 4096, 4096, 1000.0, order="random", host=("pinned", "local"))
    del rec["validated"]
    res = tmp_path / "r.json"
    res.write_text(json.dumps(document([rec])))
    probe = tmp_path / "probe.jsonl"
    probe.write_text('{"test": "paged-h2d", "mechanism": "loop", "block_bytes": 4096, "blocks": 4096, "bytes": 16777216, '
                     '"oneshot_us_p50": 1000.0}\n')
    p = script("host_reference.py", probe, res)
    assert p.returncode == 1 and p.stderr == "" and "no record" in p.stdout, (p.returncode, p.stderr[-2000:])


def test_sdma_map_topology_files_it_cannot_use(tmp_path):
    root = tmp_path / "nodes"
    (root / "1" / "io_links" / "0").mkdir(parents=True)
    (root / "1" / "properties").write_text("simd_count 1216\n")
    (root / "1" / "io_links" / "0" / "properties").write_text("node_to " + "9" * 5000 + "\n")  # beyond int()'s limit
    p = script("sdma_map.py", "--root", root)
    assert p.returncode == 1 and "Traceback" not in p.stderr, p.stderr  # no pair: exit 1 as documented
    os.remove(root / "1" / "io_links" / "0" / "properties")
    os.mkfifo(root / "1" / "io_links" / "0" / "properties")
    one_line(script("sdma_map.py", "--root", root), "sdma_map.py", "properties: a FIFO")


def test_a_bug_is_one_line_and_exit_3_and_ctrl_c_is_130(capsys):
    from dmabench.tool import run_tool

    def broken(argv):
        return {}["missing"]

    def interrupted(argv):
        raise KeyboardInterrupt

    assert run_tool("x.py", broken, []) == 3
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and err[0].startswith("x.py: internal error: KeyError: 'missing' (at test_hostile_input.py:"), err
    assert run_tool("x.py", interrupted, []) == 130
    assert capsys.readouterr().err == "x.py: interrupted\n"


def test_notebook_cells_have_ids():
    with open(os.path.join(ROOT, "notebooks", "explore.ipynb"), encoding="utf-8") as f:
        nb = json.load(f)
    assert (nb["nbformat"], nb["nbformat_minor"]) >= (4, 5)
    ids = [c.get("id") for c in nb["cells"]]
    assert all(isinstance(i, str) and re.fullmatch(r"[A-Za-z0-9_-]{1,64}", i) for i in ids), ids  # nbformat 4.5
    assert len(set(ids)) == len(ids), ids


def test_notebook_runs_on_names_that_are_not_text(tmp_path):
    src = tmp_path / "s.json"
    src.write_text(json.dumps(surrogate_doc()))
    odd = os.path.join(os.fsencode(tmp_path), b"r\xff.json")  # a path that is not UTF-8, too
    with open(odd, "w") as f:
        f.write(json.dumps(surrogate_doc()))
    outputs = execute_notebook(tmp_path, [src, odd])  # no error output
    assert not [o for o in outputs if o.get("name") == "stderr"], [o for o in outputs if o.get("name") == "stderr"]
    assert sum("image/png" in o.get("data", {}) for o in outputs) >= 3


# ---- a fuzz: every field of every kind of record set to each hostile value, through every script -----------------

HOSTILE = [0, -1, 5e-324, 1.7e308, 10 ** 30, 10 ** 400, 1 << 64, None, "x", "\ud800", True, [], {}]


def fuzz_doc():
    rs = [result("copy", "ce", 1024, "oneshot", 8.0), result("copy", "nccl", 1024, "oneshot", 9.0),
          overlap_result("ce", 1 << 20, "oneshot", 20.0, 0.5, 30.0), overlap_result("nccl", 1 << 20, "oneshot", 20.0, 0.5, 30.0),
          result("copy", "ce", 1024, "oneshot", 8.0, options={"schedule": "pcpy"},
                 breakdown_us={"control": 3, "schedule": 1, "copy": 1.5, "sync": 2.5, "total": 8, "aligned_fraction": 1.0}),
          block_result("ce", 4096, 16, 10.0), block_result("ce", 4096, 32, 18.0)]
    for engine in ("ce", "nccl"):
        r = result("allgather", engine, 1 << 30, "oneshot", 3000.0)
        r["power"] = {"energy_per_GB_J": 1.5, "active_W": 200.0, "uncertainty": 0.01, "window_s": 2.0, "busy_fraction": 1.0}
        rs.append(r)
    return document(rs)


def leaf_paths(value, path=()):
    if isinstance(value, dict):
        for k, v in value.items():
            yield from leaf_paths(v, path + (k,))
    elif isinstance(value, list) and value:
        for i, v in enumerate(value):
            yield from leaf_paths(v, path + (i,))
    else:
        yield path


def test_fuzz_every_field_of_every_record_kind(tmp_path):
    # in this process (nothing here can block): each script's exit status and stderr, for every mutation
    base = fuzz_doc()
    good_path = tmp_path / "good.json"
    good_path.write_text(json.dumps(base))
    f = tmp_path / "m.json"
    db = tmp_path / "fuzz.sqlite"
    assert inproc("history.py", "add", good_path, "--db", db).returncode == 0
    calls = [("summarize.py", [f]), ("compare.py", [f, good_path]), ("compare.py", [good_path, f]),
             ("dma_latte_report.py", [good_path, "--breakdown", f]), ("overlap_report.py", [f, "--targets"]),
             ("blocks_report.py", [f]), ("history.py", ["add", f, "--db", db]), ("history.py", ["gate", f, "--db", db]),
             ("merge_runs.py", [f, good_path, "--out", tmp_path / "fm.json"])]
    seen, bad = 0, []
    # every field of a plain record and of the context, and the parts the other kinds add (not their common fields
    # again: the test stays under a minute)
    paths = [*leaf_paths(base["context"], ("context",)), *leaf_paths(base["results"][0], ("results", 0)),
             *leaf_paths(base["results"][2]["overlap"], ("results", 2, "overlap")),
             *leaf_paths(base["results"][4]["breakdown_us"], ("results", 4, "breakdown_us")),
             *[q for q in leaf_paths(base["results"][5], ("results", 5)) if q[2] in ("layout", "host_memory",
                                                                                    "per_block_us", "name")],
             *leaf_paths(base["results"][7]["power"], ("results", 7, "power"))]
    for path in paths:
        for value in HOSTILE:
            doc = copy.deepcopy(base)
            target = doc
            for k in path[:-1]:
                target = target[k]
            target[path[-1]] = value
            f.write_text(json.dumps(doc))
            for name, args in calls:
                p = inproc(name, *args)
                seen += 1
                lines = p.stderr.splitlines()
                fine = (p.returncode == 0 and not lines) or (p.returncode == 1 and name in ("compare.py", "history.py")
                                                              and not lines) or \
                    (p.returncode == 2 and len(lines) == 1 and lines[0].startswith(f"{name}: error: "))
                if not fine:
                    bad.append((name, path, repr(value)[:20], p.returncode, p.stderr[-300:]))
    assert seen > 5000 and not bad, (len(bad), sorted({(b[0], b[1][-1], b[4][-160:]) for b in bad}))


@pytest.mark.parametrize("value", [5e-324, 1.7e308, 10 ** 30, 10 ** 400, 0, None, "\ud800"],
                         ids=["smallest", "largest", "int-1e30", "int-1e400", "zero", "null", "surrogate"])
def test_fuzz_plot_latencies_and_names(tmp_path, value):
    # plot.py draws what check_document accepts; the rest is one line and exit 2
    for path in (("latency_us", "p50"), ("latency_us", "p95"), ("busbw_GBps",), ("name",)):
        doc = fuzz_doc()
        target = doc["results"][0]
        for k in path[:-1]:
            target = target[k]
        target[path[-1]] = value if path != ("name",) else f"copy/ce,x={value}/oneshot/dev=0,1/1024"
        src = tmp_path / "p.json"
        src.write_text(json.dumps(doc))
        p = inproc("plot.py", src, "--out", tmp_path / "figs")
        lines = [line for line in p.stderr.splitlines() if not line.endswith("; not written")]  # the h2d speedup
        assert (p.returncode == 0 and not lines) or (p.returncode == 2 and len(lines) == 1 and
                                                     lines[0].startswith("plot.py: error: ")), (path, value, p.stderr)


# ---- issue 40: the surfaces added since (history.py's subcommands on hostile databases and arguments, plot.py trend,
# moe_trace.py's arguments), values of a megabyte quoted back short, and names that would forge output lines --------

def hostile_databases(tmp_path):
    """{name: (a --db, what a reader's one line names)}: every kind of file a history database can be instead."""
    from test_history import add_runs, run_at
    from test_history_writers import interrupted_write
    d = tmp_path / "dbs"
    d.mkdir()
    db = add_runs(d, [run_at(f"2026-01-0{k + 1}T00:00:00Z", {1024 * (j + 1): 100.0 for j in range(300)}) for k in range(3)])
    data = db.read_bytes()
    files = {"empty": b"", "garbage": bytes(range(256)) * 16, "truncated": data[:len(data) // 2],
             "results file": json.dumps(good()).encode()}
    for name, content in files.items():
        (d / name).write_bytes(content)
    with sqlite3.connect(d / "other") as conn:
        conn.execute("CREATE TABLE t (x)")
    newer = d / "newer"
    newer.write_bytes(data)
    with sqlite3.connect(newer) as conn:
        conn.execute("PRAGMA user_version = 99")
    os.mkfifo(d / "fifo")
    (tmp_path / "hot").mkdir()
    hot, journal, _ = interrupted_write(tmp_path / "hot")
    return {"missing": (d / "missing", "no history database there"), "directory": (d, "not a regular file"),
            "FIFO": (d / "fifo", "not a regular file"), "empty": (d / "empty", "an empty file, not a history database"),
            "garbage": (d / "garbage", "file is not a database"), "truncated": (d / "truncated", "malformed"),
            "results file": (d / "results file", "file is not a database"),
            "another SQLite database": (d / "other", "not a dmabench history database"),
            "newer schema": (newer, "schema version 99, newer than"), "hot journal": (hot, f"{journal}: an interrupted write")}


def db_readers(db, tmp_path):
    """Every command that only reads a history database: (script, argv)."""
    return [("history.py", ["machines", "--db", db]), ("history.py", ["trend", "--case", "1024", "--db", db]),
            ("history.py", ["trend", "--case", ".", "--json", "--figure", "busbw_GBps", "--db", db]),
            ("history.py", ["gate", tmp_path / "good.json", "--db", db]),
            ("plot.py", ["trend", db, "--case", "1024", "--out", tmp_path / "figs"])]


def test_every_database_reader_refuses_every_hostile_database_in_one_line(tmp_path):
    from dmabench import history_frame
    (tmp_path / "good.json").write_text(json.dumps(good()))
    for name, (db, want) in hostile_databases(tmp_path).items():
        kept = sorted(os.listdir(os.path.dirname(db)))
        for script, argv in db_readers(db, tmp_path):
            one_line(inproc(script, *argv), script, want)
        with pytest.raises(ResultsError) as e:
            history_frame(db)
        assert want in str(e.value) and len(str(e.value)) <= MAX_LINE, (name, str(e.value))
        assert sorted(os.listdir(os.path.dirname(db))) == kept, name  # a reader creates nothing
    assert not os.path.exists(tmp_path / "figs")


def test_every_database_writer_refuses_what_is_no_history(tmp_path):
    src = tmp_path / "good.json"
    src.write_text(json.dumps(good()))
    dbs = hostile_databases(tmp_path)
    for name in ("directory", "FIFO", "garbage", "truncated", "results file", "another SQLite database", "newer schema"):
        db, want = dbs[name]
        for argv in (["add", src], ["gate", src, "--record"]):
            one_line(inproc("history.py", *argv, "--db", db), "history.py", "malformed" if name == "truncated" and
                     argv[0] == "gate" else want)


def test_hostile_arguments_of_the_database_commands(tmp_path):
    from test_history import add_runs, run_at
    doc = run_at("2026-01-01T00:00:00Z", {1024: 100.0})
    doc["results"].append(with_interval(result("copy", "ce", 4096, "oneshot", 110.0, options={"tag": "a" * 40 + "b"}), 0.01))
    db = add_runs(tmp_path, [doc])
    huge = "x" * MB
    for script, head in (("history.py", ["trend", "--db", db]), ("plot.py", ["trend", db, "--out", tmp_path / "o"])):
        for args, want in ((["--case", huge], "no ok case whose name matches --case 'xxxx"),
                           (["--case", "(a+)+$"], "matching the case names took more than 2 s"),
                           (["--case", "(" + huge], "not a regular expression"),
                           (["--case", ".", "--machine", huge], "--machine 'xxxx"),
                           (["--case", ".", "--figure", huge], "invalid choice"),
                           (["--case", ".", "--runs", huge], "invalid int value"),
                           (["--case", ".", "--sigmas", "nan"], "--sigmas nan")):
            one_line(inproc(script, *head, *args), script, want)
    one_line(inproc("history.py", "machines", "--db", tmp_path / ("y" * 5000)), "history.py", "File name too long")
    (tmp_path / "r.json").write_text(json.dumps(good()))
    one_line(inproc("summarize.py", tmp_path / "r.json", "--sizes", huge), "summarize.py", "'xxxx")
    one_line(inproc("compare.py", "--threshold", huge, "a", "b"), "compare.py", "invalid float value")


@pytest.mark.parametrize("args,want", [
    (["--ranks", "0", "--out", "{out}"], "--ranks 0: expected an integer from 1"),
    (["--experts", "7", "--ranks", "2", "--out", "{out}"], "not a multiple of --ranks 2"),
    (["--topk", "9", "--experts", "8", "--out", "{out}"], "--topk 9 is more than --experts 8"),
    (["--zipf", "nan", "--out", "{out}"], "--zipf nan"), (["--drift", "2", "--out", "{out}"], "--drift 2"),
    (["--seed", "x" * MB, "--out", "{out}"], "invalid int value"), (["--ranks", "4"], "--out: missing"),
    (["--out", "{dir}"], "a directory"), (["--out", "/dev/full"], "No space left on device"),
    (["--out", "{dir}/" + "n" * 5000], "File name too long")])
def test_moe_trace_arguments_it_cannot_use(tmp_path, args, want):
    argv = [a.replace("{out}", str(tmp_path / "t.json")).replace("{dir}", str(tmp_path)) for a in args]
    one_line(inproc("moe_trace.py", *argv), "moe_trace.py", want)
    assert not os.path.exists(tmp_path / "t.json")


FORGED = "a\nFAIL  x|y\x1b[2J"  # an option value in a case name: a line break, a verdict, a table's bar, a terminal code
CLEAN = "a_FAIL__x_y_[2J"  # the same length of harmless text


def forged_doc(tag, start="2026-01-02T00:00:00Z"):
    """A run whose case names (and GPU name, reason) carry `tag`: copy, alltoallv and block-layout cases."""
    from test_moe_report import moe_result
    rs = [with_interval(result("copy", "ce", 1024, "oneshot", 8.0, options={"tag": tag}), 0.01),
          with_interval(result("copy", "nccl", 1024, "oneshot", 9.0), 0.01),
          result("copy", "sm", 1024, "oneshot", 1.0, status="failed", reason=f"bad {tag}", options={"tag": tag}),
          moe_result("ce", 256, 100.0, options={"tag": tag}), moe_result("ce-batch", 256, 90.0),
          block_result("ce", 4096, 16, 10.0, options={"tag": tag}), block_result("ce-batch", 4096, 16, 12.0),
          result("allgather", "ce", 1024, "oneshot", 8.0, options={"tag": tag}), result("allgather", "nccl", 1024, "oneshot", 9.0)]
    doc = document(rs)
    doc["context"].update(started_at=start, host=f"h{tag}")
    doc["context"]["machine"]["devices"][0]["name"] = f"GPU {tag}"
    return doc


def line_outputs(tmp_path, tag):
    """stdout of every line-oriented output over the run of forged_doc(tag): {what: text}."""
    d = tmp_path / ("forged" if tag == FORGED else "clean")
    d.mkdir()
    src, base, db = d / "r.json", d / "base.json", d / "h.sqlite"
    src.write_text(json.dumps(forged_doc(tag)))
    base.write_text(json.dumps(forged_doc(tag, "2026-01-01T00:00:00Z")))
    out = {}
    calls = {"compare": ("compare.py", base, src, "--all"), "summarize": ("summarize.py", src),
             "moe_report": ("moe_report.py", src), "blocks_report": ("blocks_report.py", src),
             "merge_runs": ("merge_runs.py", base, src, "--out", d / "m.json"), "dma_latte": ("dma_latte_report.py", src),
             "matrix": ("matrix.py", src), "history add": ("history.py", "add", base, "--db", db),
             "gate": ("history.py", "gate", src, "--record", "--db", db), "machines": ("history.py", "machines", "--db", db),
             "trend": ("history.py", "trend", "--case", "copy", "--db", db), "recorded": ("amd_first_run.py", "recorded", src)}
    for what, (name, *args) in calls.items():
        p = inproc(name, *args)
        assert p.returncode in (0, 1) and "error" not in p.stderr, (what, p.stderr)
        out[what] = p.stdout
    return out


def test_names_cannot_forge_output_lines(tmp_path):
    forged, clean = line_outputs(tmp_path, FORGED), line_outputs(tmp_path, CLEAN)
    bars = re.compile(r"(?<!\\)\|")
    for what, text in forged.items():
        lines = text.splitlines()
        assert len(lines) == len(clean[what].splitlines()), (what, text)  # no line added
        assert not [line for line in lines if line.startswith("FAIL  x") or "\x1b" in line], (what, text)
        cells = [len(bars.findall(line)) for line in lines if line.startswith("|")]  # a table's cells
        assert cells == [len(bars.findall(line)) for line in clean[what].splitlines() if line.startswith("|")], what
        assert "FAIL  x\\|y\\x1b[2J" in text or "FAIL  x|y\\x1b[2J" in text, (what, text)  # shown, escaped
