#!/usr/bin/env python3
"""Compare two dmabench results files case by case; a CI gate for regressions.

usage: compare.py BASE.json NEW.json [--threshold 0.05] [--json] [--all]

Cases are matched by their full key (pattern, in place or not, engine, options, devices, bytes, timing,
workload, rotation). For every case in both files: the ratio new/base of p50 latency and of busbw,
and a verdict:
  slower  p50 grew by more than --threshold AND by more than the noise
  faster  p50 shrank by more than --threshold AND by more than the noise
  same    otherwise
  failed  ok in BASE but not ok in NEW (counts as a regression); both not ok: not compared
The noise of a case is the larger of the two runs' spreads, spread = (p95 - p50) / p50: a change
smaller than how far a run's own samples scatter above its median is not a change.
Prints a markdown table (only slower/faster/failed cases unless --all) and the cases found in one
file only; --json prints the same as JSON.
A results file may also be given as its run's journal, `<file>.journal`; a results file with a journal beside
it (its run has not finished) is read from the journal when that holds more cases, with a note on stderr
(scripts/dmabench_results.py, load).
Exit codes: 0 no regression, 1 a case regressed,
2 bad input: an unreadable or malformed file (one line `compare.py: error: ...` on stderr, never a traceback;
scripts/dmabench_results.py, check_document, says what is checked), a bad argument, no case in common.
"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from dmabench_results import ResultsError, beside, case_key, fmt_size, load, pattern_label, spread, variant, arg_parser, run_tool  # noqa: E402

TOOL = "compare.py"


def compare(base_doc, new_doc, threshold):
    base = {case_key(r): r for r in base_doc["results"]}
    new = {case_key(r): r for r in new_doc["results"]}
    rows = []
    for key in [k for k in base if k in new]:
        b, n = base[key], new[key]
        row = {"case": n.get("name") or key[0], "pattern": n["pattern"], "in_place": bool(n.get("in_place")),
               "variant": variant(n) + (f" beside {beside(n)}" if beside(n) else ""),
               "bytes_per_rank": n["bytes_per_rank"], "timing": n["timing"], "devices": n.get("devices")}
        if b["status"] != "ok" or n["status"] != "ok":
            row["verdict"] = "failed" if b["status"] == "ok" else "not compared"
            row["reason"] = n.get("reason", "") if b["status"] == "ok" else f"base {b['status']}: {b.get('reason', '')}"
            rows.append(row)
            continue
        ratio = n["latency_us"]["p50"] / b["latency_us"]["p50"]
        noise = max(spread(b), spread(n))
        change = ratio - 1.0
        verdict = "same"
        if abs(change) > threshold and abs(change) > noise:
            verdict = "slower" if change > 0 else "faster"
        row.update({"base_p50_us": b["latency_us"]["p50"], "new_p50_us": n["latency_us"]["p50"], "p50_ratio": ratio,
                    "busbw_ratio": (n["busbw_GBps"] / b["busbw_GBps"]) if b["busbw_GBps"] else None,
                    "noise": noise, "verdict": verdict})
        rows.append(row)
    only_base = sorted(base[k].get("name") or str(k) for k in base if k not in new)
    only_new = sorted(new[k].get("name") or str(k) for k in new if k not in base)
    return rows, only_base, only_new


def markdown(rows, only_base, only_new, threshold, show_all):
    order = {"failed": 0, "slower": 1, "faster": 2, "same": 3, "not compared": 4}
    counts = {v: sum(1 for r in rows if r["verdict"] == v) for v in order}
    out = [f"**dmabench compare**: {len(rows)} cases in both files; " +
           ", ".join(f"{n} {v}" for v, n in counts.items() if n) +
           f" (threshold {100 * threshold:.0f}%, beyond each case's noise)", ""]
    shown = [r for r in rows if show_all or r["verdict"] in ("failed", "slower", "faster")]
    if shown:
        out += ["| verdict | pattern | variant | size/rank | timing | base p50 µs | new p50 µs | p50 ratio | busbw ratio | noise |",
                "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
        for r in sorted(shown, key=lambda r: (order[r["verdict"]], -(r.get("p50_ratio") or 0))):
            if "p50_ratio" not in r:
                out.append(f"| {r['verdict']} | {pattern_label(r['pattern'], r['in_place'])} | {r['variant']} | {fmt_size(r['bytes_per_rank'])} | "
                           f"{r['timing']} | – | – | – | – | {r.get('reason', '')[:60]} |")
                continue
            bus = f"{r['busbw_ratio']:.3f}" if r["busbw_ratio"] is not None else "–"
            out.append(f"| {r['verdict']} | {pattern_label(r['pattern'], r['in_place'])} | {r['variant']} | {fmt_size(r['bytes_per_rank'])} | "
                       f"{r['timing']} | {r['base_p50_us']:.2f} | {r['new_p50_us']:.2f} | {r['p50_ratio']:.3f} | {bus} | "
                       f"{100 * r['noise']:.1f}% |")
    for title, names in (("only in BASE", only_base), ("only in NEW", only_new)):
        if names:
            out += ["", f"{len(names)} case(s) {title}:"] + [f"- {n}" for n in names]
    return "\n".join(out)


def main(argv=None):
    return run_tool(TOOL, run, argv)


def run(argv=None):
    ap = arg_parser(__doc__)
    ap.add_argument("base")
    ap.add_argument("new")
    ap.add_argument("--threshold", type=float, default=0.05, help="relative change that counts (default 0.05)")
    ap.add_argument("--json", action="store_true", help="print JSON instead of markdown")
    ap.add_argument("--all", action="store_true", help="list unchanged cases too")
    a = ap.parse_args(argv)
    if not 0 <= a.threshold < 10:
        raise ResultsError(f"--threshold {a.threshold} is not a fraction such as 0.05")
    docs = [load(path) for path in (a.base, a.new)]
    rows, only_base, only_new = compare(docs[0], docs[1], a.threshold)
    if not rows:
        raise ResultsError(f"{a.base} and {a.new} have no case in common (different patterns, engines, options, "
                           "devices, sizes or timing)")
    regressed = [r for r in rows if r["verdict"] in ("slower", "failed")]
    if a.json:
        print(json.dumps({"threshold": a.threshold, "cases": rows, "only_in_base": only_base, "only_in_new": only_new,
                          "regressed": len(regressed)}, indent=1))
    else:
        print(markdown(rows, only_base, only_new, a.threshold, a.all))
    return 1 if regressed else 0


if __name__ == "__main__":
    sys.exit(main())
