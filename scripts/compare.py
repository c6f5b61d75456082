#!/usr/bin/env python3
"""Compare two dmabench results files case by case; a CI gate for regressions.

usage: compare.py BASE.json NEW.json [--threshold 0.05] [--json] [--all]

Cases are matched by their full key (pattern, in place or not, engine, options, devices, bytes, timing,
workload, rotation, block layout, host-memory kind and NUMA request: dmabench_results.case_key). For every case in both files: the ratio new/base of p50 latency and of busbw,
and a verdict:
  slower        p50 grew by more than --threshold AND the change is real (below)
  faster        p50 shrank by more than --threshold AND the change is real
  within noise  p50 moved by more than --threshold, but the two p50 intervals overlap: not a change
  same          otherwise
  failed        ok in BASE but not ok in NEW (counts as a regression); both not ok: not compared
Whether a change is real (the `rule` of each row):
  intervals  both records carry the 95% interval of their p50 (`p50_interval_us`, dmabench records it since
             issue 33): real when the two intervals do not overlap;
  spread     a file without intervals (written before them): real when the change exceeds the noise, the
             larger of the two runs' spreads, spread = (p95 - p50) / p50 (a change smaller than how far a run's
             own samples scatter above its median is not a change; such a case is `same`).
`noise` is the larger of the two records' noise, max(p50 - low, high - p50) / p50 (rule intervals), or the larger spread (rule spread).
Prints a markdown table (only slower/faster/within noise/failed cases unless --all; p50 cells carry their intervals)
and the cases found in one file only; --json prints the same as JSON.
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
from dmabench_results import (ResultsError, arg_parser, beside, case_key, fmt_size, load, p50_interval, pattern_label, where,  # noqa: E402
                               run_tool, spread, variant)

TOOL = "compare.py"


def compare(base_doc, new_doc, threshold):
    base = {case_key(r): r for r in base_doc["results"]}
    new = {case_key(r): r for r in new_doc["results"]}
    rows = []
    for key in [k for k in base if k in new]:
        b, n = base[key], new[key]
        row = {"case": n.get("name") or key[0], "pattern": n["pattern"], "in_place": bool(n.get("in_place")),
               "variant": variant(n) + (f" ({where(n)})" if where(n) else "") + (f" beside {beside(n)}" if beside(n) else ""),
               "bytes_per_rank": n["bytes_per_rank"], "timing": n["timing"], "devices": n.get("devices")}
        if b["status"] != "ok" or n["status"] != "ok":
            row["verdict"] = "failed" if b["status"] == "ok" else "not compared"
            row["reason"] = n.get("reason", "") if b["status"] == "ok" else f"base {b['status']}: {b.get('reason', '')}"
            rows.append(row)
            continue
        ratio = n["latency_us"]["p50"] / b["latency_us"]["p50"]
        row.update({"base_p50_us": b["latency_us"]["p50"], "new_p50_us": n["latency_us"]["p50"], "p50_ratio": ratio,
                    "busbw_ratio": (n["busbw_GBps"] / b["busbw_GBps"]) if b["busbw_GBps"] else None,
                    "base_p50_interval_us": p50_interval(b), "new_p50_interval_us": p50_interval(n)})
        row.update(judge(b, n, ratio - 1.0, threshold))
        rows.append(row)
    only_base = sorted(base[k].get("name") or str(k) for k in base if k not in new)
    only_new = sorted(new[k].get("name") or str(k) for k in new if k not in base)
    return rows, only_base, only_new


def judge(b, n, change, threshold):
    """The verdict on a p50 that moved by `change` (a fraction), with the rule that judged it and the noise."""
    bi, ni = p50_interval(b), p50_interval(n)
    if bi and ni:
        noise = max(max(p50 - lo, hi - p50) / p50 for p50, (lo, hi) in ((b["latency_us"]["p50"], bi),
                                                                         (n["latency_us"]["p50"], ni)))
        apart = bi[1] < ni[0] or ni[1] < bi[0]
        beyond = abs(change) > threshold
        verdict = ("slower" if change > 0 else "faster") if beyond and apart else "within noise" if beyond else "same"
        return {"verdict": verdict, "rule": "intervals", "noise": noise}
    noise = max(spread(b), spread(n))
    verdict = ("slower" if change > 0 else "faster") if abs(change) > threshold and abs(change) > noise else "same"
    return {"verdict": verdict, "rule": "spread", "noise": noise}


def p50_cell(p50, interval):
    """'12.00' or, with its interval, '12.00 [11.90, 12.10]'."""
    return f"{p50:.2f}" + (f" [{interval[0]:.2f}, {interval[1]:.2f}]" if interval else "")


def markdown(rows, only_base, only_new, threshold, show_all):
    order = {"failed": 0, "slower": 1, "faster": 2, "within noise": 3, "same": 4, "not compared": 5}
    counts = {v: sum(1 for r in rows if r["verdict"] == v) for v in order}
    out = [f"**dmabench compare**: {len(rows)} cases in both files; " +
           ", ".join(f"{n} {v}" for v, n in counts.items() if n) +
           f" (threshold {100 * threshold:.0f}%; a change is real where the two p50 intervals do not overlap, or, in "
           "files without intervals, beyond each case's spread)", ""]
    shown = [r for r in rows if show_all or r["verdict"] in ("failed", "slower", "faster", "within noise")]
    if shown:
        out += ["| verdict | pattern | variant | size/rank | timing | base p50 µs | new p50 µs | p50 ratio | busbw ratio | noise | rule |",
                "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
        for r in sorted(shown, key=lambda r: (order[r["verdict"]], -(r.get("p50_ratio") or 0))):
            if "p50_ratio" not in r:
                out.append(f"| {r['verdict']} | {pattern_label(r['pattern'], r['in_place'])} | {r['variant']} | {fmt_size(r['bytes_per_rank'])} | "
                           f"{r['timing']} | – | – | – | – | {r.get('reason', '')[:60]} | – |")
                continue
            bus = f"{r['busbw_ratio']:.3f}" if r["busbw_ratio"] is not None else "–"
            out.append(f"| {r['verdict']} | {pattern_label(r['pattern'], r['in_place'])} | {r['variant']} | {fmt_size(r['bytes_per_rank'])} | "
                       f"{r['timing']} | {p50_cell(r['base_p50_us'], r['base_p50_interval_us'])} | "
                       f"{p50_cell(r['new_p50_us'], r['new_p50_interval_us'])} | {r['p50_ratio']:.3f} | {bus} | "
                       f"{100 * r['noise']:.1f}% | {r['rule']} |")
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
