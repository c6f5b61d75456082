"""Merge the results files of N processes of one build and config into one levels file (standard library only).

usage: merge_runs.py A.json B.json [C.json ...] --out M.json [--json] [--program PATH]

A process is one draw of the machine's state: a launch-bound case's level moves from one process start to the next by
more than its own p50 interval says. `dmabench --processes N` runs a sweep in N fresh processes and writes a levels
file; this script makes the same file from the results files of processes started otherwise (mpirun / srun jobs, CI
runs of one build and config), exactly as results/SCHEMA.md, "Levels across fresh processes", says. The program
writes it: this script checks every file as every script reads one (dmabench.load), then runs `dmabench --merge`
(bench/levels/merge_files.hpp; the program: --program, else $DMABENCH_BINARY, else dmabench on PATH, else the
checkout's build/dmabench: dmabench.program) with merged_by "merge_runs.py", and prints what the levels file holds.
Cases are matched by their full key (dmabench.case_key). Of the processes that have a case ok (m of them), each
statistic of `latency_us` is the median over them, `iterations` and `sampling.samples` their sum, and
`p50_interval_us` the between-process interval of their p50s (m >= 6: the ranks that hold the median with at least
95%; 2..5: [min, max], which holds it with 1 - 2/2^m; m = 1: the process's own); everything else is the median
process's record; `levels` says what each process had. A case failed in any process is failed; skipped in every
process, skipped. Records are in case_index order (files without it: the first file's order). The context is the
first file's, with `context.levels` (merged_by "merge_runs.py", every process's start, wall time, host, revision,
order, CPUs and calibration) and `context.calibration` merged (each probe's median p50). Refused (by the program):
fewer than 2 files, a file that is already a levels file, files whose context.config or
context.dmabench.git_revision differ (one build, one config), a file given twice, an --out that is an input.

Prints one line per case (processes with it ok, the median p50, the interval and its coverage, the between-process
noise against the median within-process noise, the spread of the p50s), or --json the same as JSON. --out is written
whole (a temporary file renamed into place), never over an input. A results file may also be given as its run's
journal, `<file>.journal`; a results file with a journal beside it is read from the journal when that holds more
cases, with a note on stderr (dmabench.load; the program reads it the same way).

Exit codes: 0 merged (also where cases failed: the levels file says which); 2 bad input: an unreadable or malformed
results file (dmabench.schema.check_document), a merge that is refused (above), a bad argument, an output that
cannot be written, no dmabench program, with one line `merge_runs.py: error: ...` on stderr (never a traceback) and
--out untouched; 3 internal error (also the program's); 130 interrupted (Ctrl-C).
"""
import sys

from .files import read_bytes
from .program import merge_files
from .reader import load, parse_json
from .text import fmt_num, json_text, printable, table
from .tool import arg_parser, run_tool

TOOL = "merge_runs.py"


def summary(doc, out):
    """What the merge made, as JSON: the file, the processes, the calibration and one entry per case."""
    cases = []
    for r in doc["results"]:
        lv = r["levels"]
        case = {"name": r["name"], "status": r["status"], "processes": lv["processes"], "of": lv["of"]}
        if r["status"] == "ok":
            case.update({k: lv[k] for k in ("interval", "coverage", "between", "within", "spread")},
                        p50_us=r["latency_us"]["p50"], p50_interval_us=r.get("p50_interval_us"))
        else:
            case["reason"] = r.get("reason", "")
        cases.append(case)
    cal = doc["context"].get("calibration")
    probes = cal.get("probes") if isinstance(cal, dict) and isinstance(cal.get("probes"), dict) else {}
    return {"out": out, "files": [p["file"] for p in doc["context"]["levels"]["per_process"]],
            "calibration": {name: {"p50_us": p.get("p50_us"), "per_process_p50_us": p.get("per_process_p50_us")}
                            for name, p in probes.items() if isinstance(p, dict)},
            "counts": {s: sum(c["status"] == s for c in cases) for s in ("ok", "failed", "skipped")}, "cases": cases}


def pct(value):
    return "–" if value is None else f"{100 * value:.1f}%"


def row(c):
    """A case's row of the table."""
    if c["status"] != "ok":
        return [c["name"], f"{c['processes']} of {c['of']}", c["status"], c["reason"][:80], "", "", "", ""]
    low, high = c["p50_interval_us"] or (None, None)
    return [c["name"], f"{c['processes']} of {c['of']}", fmt_num(c["p50_us"]), f"[{fmt_num(low)}, {fmt_num(high)}]",
            c["interval"] + ("" if c["coverage"] is None else f", {100 * c['coverage']:.2f}%"), pct(c["between"]),
            pct(c["within"]), pct(c["spread"])]


def markdown(s):
    rows = [row(c) for c in s["cases"]]
    out = [f"**merge_runs**: {len(s['files'])} processes into {s['out']}: {len(s['cases'])} cases, " +
           ", ".join(f"{n} {status}" for status, n in s["counts"].items()), "",
           table(["case", "ok in", "p50 µs", "interval µs", "interval (coverage)", "between", "within", "spread"], rows)]
    for name, p in s["calibration"].items():
        per = ", ".join(fmt_num(x) for x in p["per_process_p50_us"] or [])
        out.append("\n" + printable(f"calibration {name}: median p50 {fmt_num(p['p50_us'])} µs (per process {per})"))
    return "\n".join(out)


def main(argv=None, tool=TOOL):
    return run_tool(tool, run, argv)


def run(argv=None):
    ap = arg_parser(__doc__)
    ap.add_argument("results", nargs="+", help="the results files of the processes, in process order")
    ap.add_argument("--out", required=True, help="the levels file to write")
    ap.add_argument("--json", action="store_true", help="print JSON instead of markdown")
    ap.add_argument("--program", help="the dmabench program that merges (default: $DMABENCH_BINARY, else dmabench on "
                                      "PATH, else the checkout's build/dmabench)")
    a = ap.parse_args(argv)
    if len(a.results) > 1:  # one file: the program says why that is no merge, before any file is read
        for path in a.results:
            load(path)  # every file as every script reads one: a file merged is one they all read
    merge_files(a.results, a.out, TOOL, a.program)
    s = summary(parse_json(read_bytes(a.out, "levels file")), a.out)  # the file the program wrote (no journal)
    print(json_text(s) if a.json else markdown(s))
    return 0


if __name__ == "__main__":
    sys.exit(main())
