"""Compare two dmabench results files case by case; a CI gate for regressions.

usage: compare.py BASE.json NEW.json [--min-change launch=0.05 --min-change bandwidth=0.02] [--alpha 0.02]
                  [--threshold F] [--fail-ambiguous] [--json] [--all] [--junit FILE]

Cases are matched by their full key (pattern, in place or not, engine, options, devices, bytes, timing,
workload, rotation, block layout, host-memory kind and NUMA request: dmabench.case_key). For every case in both
files: the ratio new/base of p50 latency and of busbw, and a verdict by the rule of dmabench.verdict (one rule for
compare, history gate and ab; docs/methodology.md, "How often a verdict is wrong"):
  slower / faster  the p50 moved by more than the case's class minimum (--min-change: launch-bound 5%,
                   bandwidth-bound 2%; --threshold F sets both) AND the per-process p50s of the two files support it:
                   a two-sided rank-sum test of BASE's processes against NEW's, Benjamini-Hochberg over every
                   compared case at --alpha (0.02): where nothing changed, any case is called slower or faster
                   in at most 2% of comparisons
  ambiguous        the p50 moved by more than the minimum, but the processes do not support it: more processes
                   would decide (`dmabench-results ab` re-runs such cases). A one-process record is one draw, and
                   one draw per side supports nothing: two one-process files give `ambiguous`, never `slower`
  same             the p50 moved by no more than the minimum
  failed           ok in BASE but not ok in NEW (counts as a regression); both not ok: not compared
The draws of a record are its levels file's per-process p50s (`levels.p50_us`: `dmabench --processes N`,
merge_runs.py, ab), else its p50. Each row carries `change`, `p` (the rank-sum p-value), `supported`, `min_change`
and `draws` ("m+n", BASE's and NEW's); `change` is the Hodges-Lehmann ratio of the draws minus 1 (what the verdict
weighs; dmabench.verdict), `p50_ratio` the ratio of the two records' p50s.
Prints a markdown table (only slower/faster/ambiguous/failed cases unless --all) and the cases found in one file
only; --json prints the same as JSON. Where both contexts carry
`calibration.probes` (what one command costs the process, timed before its first case; a levels file: the median
over its processes), a table of each probe's p50 in both and their ratio (--json: `calibration`). And where at
least 75% of the compared ok launch-bound cases (dmabench.case_class: under 1 MiB per command) moved the
same way beyond the launch-bound minimum, their median p50 ratio too, and the `launch_sync` probe (else the first
probe both have) moved beyond it the same way, one line says that the launch-bound cases moved together with the
process's calibration: the machine or the process shifted, not one case (--json: `moved_together`, else null).
The note informs and changes no verdict and no exit code: a slower launch path is a real regression.
Where both records carry `core_share` (the share of their samples taken on a core shared with another busy hardware
thread), the row has `base_core_shared` and `new_core_shared`, and a line names each slower or faster case whose
share differs by 0.3 or more between the files (ambiguous ones too; --json: `core_shared_apart`): the platform moved;
no verdict changes.
A results file may also be given as its run's journal, `<file>.journal`; a results file with a journal beside
it (its run has not finished) is read from the journal when that holds more cases, with a note on stderr
(dmabench.load).
--junit FILE also writes the verdicts as JUnit XML (dmabench.junit; docs/user-guide.md, "JUnit XML"): each compared
case a test case, `slower` and `failed` a failure with the verdict's line (`ambiguous` too with --fail-ambiguous),
`not compared` and a case of one file only skipped with the reason, the rest passed; the dmabench program writes
it (dmabench.program.find_program: DMABENCH_BINARY, PATH, build/dmabench; none: exit 2 before any work).
Exit codes: 0 no regression, 1 a case regressed (slower or failed; ambiguous too with --fail-ambiguous),
2 bad input: an unreadable or malformed file (one line `compare.py: error: ...` on stderr, never a traceback;
dmabench.schema.check_document says what is checked), among them a record that contradicts itself (its
p50 outside its interval, its algbw not bytes / p50: check_consistent), a bad argument, no case in common.
Names are printed with their control characters escaped and `|` in a table cell as `\\|`; --json writes a ratio
beyond a float as null.
"""
import math
import statistics
import sys

from . import junit, verdict
from .levels import process_draws, shared_fraction
from .keys import KEY_PARTS, beside, case_class, case_key, p50_interval, pattern_label, variant, where
from .reader import load
from .text import fmt_num, fmt_size, json_text, printable, ResultsError, table
from .tool import arg_parser, run_tool

TOOL = "compare.py"


def draws(record):
    """The draws of the machine's state an ok record holds: its levels file's per-process p50s, else its p50."""
    return process_draws(record) or [record["latency_us"]["p50"]]


def minima(threshold=None, min_change=None):
    """{class: least change that counts}: dmabench.verdict.MIN_CHANGE, both set to `threshold` where given, then
    `min_change` ({class: fraction}) over them."""
    mins = dict(verdict.MIN_CHANGE) if threshold is None else {c: threshold for c in verdict.MIN_CHANGE}
    return {**mins, **(min_change or {})}


def compare(base_doc, new_doc, threshold=None, alpha=verdict.ALPHA, min_change=None):
    """(rows, only in BASE, only in NEW): a row per case in both, with its verdict (dmabench.verdict, one family of
    every ok pair); `threshold` sets both class minima, `min_change` ({class: fraction}) one."""
    mins = minima(threshold, min_change)
    base = {case_key(r): r for r in base_doc["results"]}
    new = {case_key(r): r for r in new_doc["results"]}
    rows, judged = [], []
    for key in [k for k in base if k in new]:
        b, n = base[key], new[key]
        row = {"case": n.get("name") or key[0], "pattern": n["pattern"], "engine": n.get("engine"),
               "in_place": bool(n.get("in_place")),
               "variant": variant(n) + (f" ({where(n)})" if where(n) else "") + (f" beside {beside(n)}" if beside(n) else ""),
               "bytes_per_rank": n["bytes_per_rank"], "timing": n["timing"], "devices": n.get("devices"),
               "class": case_class(n)}
        if b["status"] != "ok" or n["status"] != "ok":
            row["verdict"] = verdict.lost(b["status"] == "ok", n["status"]) or "not compared"
            row["reason"] = n.get("reason", "") if b["status"] == "ok" else f"base {b['status']}: {b.get('reason', '')}"
            rows.append(row)
            continue
        ratio = n["latency_us"]["p50"] / b["latency_us"]["p50"]
        row.update({"base_p50_us": b["latency_us"]["p50"], "new_p50_us": n["latency_us"]["p50"], "p50_ratio": ratio,
                    "busbw_ratio": (n["busbw_GBps"] / b["busbw_GBps"]) if b["busbw_GBps"] else None,
                    "base_p50_interval_us": p50_interval(b), "new_p50_interval_us": p50_interval(n)})
        shared = [shared_fraction(x) for x in (b, n)]
        if None not in shared:
            row.update(base_core_shared=shared[0], new_core_shared=shared[1])
        rows.append(row)
        judged.append((row, {"base": draws(b), "new": draws(n), "cls": row["class"]}))
    for (row, _), v in zip(judged, verdict.judge_all([c for _, c in judged], alpha, mins)):
        row.update(verdict=v["verdict"], change=v["change"], p=v["p"], supported=v["supported"],
                   min_change=v["min_change"], draws=f"{v['base_draws']}+{v['new_draws']}")
    only_base = sorted(base[k].get("name") or str(k) for k in base if k not in new)
    only_new = sorted(new[k].get("name") or str(k) for k in new if k not in base)
    return rows, only_base, only_new


def settings_apart(base_doc, new_doc, only_base, only_new):
    """The cases of one name on both sides that are not one case (their case keys differ: an option added since BASE,
    another layout...): [{"case", "differ": [{"part", "base", "new"}]}], in name order; what compare could not pair."""
    named = [{r.get("name"): r for r in doc["results"]} for doc in (base_doc, new_doc)]
    out = []
    for name in sorted(set(only_base) & set(only_new)):
        b, n = case_key(named[0][name]), case_key(named[1][name])
        differ = [{"part": part, "base": x, "new": y} for part, x, y in zip(KEY_PARTS, b, n) if x != y]
        if len(b) != len(n):
            differ.append({"part": "routing", "base": b[len(KEY_PARTS) - 1:] or None, "new": n[len(KEY_PARTS) - 1:] or None})
        out.append({"case": name, "differ": differ})
    return out


def apart_line(a):
    """One line: the name and what differs ('options {} in BASE, {"sms": "auto"} in NEW')."""
    return printable(f"{a['case']}: " + "; ".join(f"{d['part']} {d['base']} in BASE, {d['new']} in NEW" for d in a["differ"]))


def positive(value):
    """Whether `value` is a finite JSON number above 0 (context.calibration is not checked by check_document)."""
    try:
        return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value) and value > 0
    except OverflowError:
        return False


def probes(doc):
    """{probe: p50 µs} of a results file's `context.calibration.probes` (those with a p50), or None without them."""
    cal = doc["context"].get("calibration")
    found = cal.get("probes") if isinstance(cal, dict) else None
    if not isinstance(found, dict):
        return None
    return {name: p["p50_us"] for name, p in found.items() if isinstance(p, dict) and positive(p.get("p50_us"))}


def calibration(base_doc, new_doc):
    """{probe: {base_p50_us, new_p50_us, ratio}} of the probes both contexts carry (in BASE's order), or None where
    either context has no calibration probes."""
    base, new = probes(base_doc), probes(new_doc)
    if base is None or new is None:
        return None
    return {name: {"base_p50_us": p50, "new_p50_us": new[name], "ratio": new[name] / p50}
            for name, p50 in base.items() if name in new}


def moved_together(rows, cal, threshold):
    """{launch_bound_cases, moved, median_ratio, calibration_probe, calibration_ratio} where at least 75% of the
    compared ok launch-bound cases moved the same way beyond `threshold`, their median p50 ratio did too, and so did
    the launch_sync probe (else the first probe both files have); else None."""
    ratios = [r["p50_ratio"] for r in rows if r["class"] == "launch-bound" and "p50_ratio" in r]
    if not ratios or not cal:
        return None
    probe = "launch_sync" if "launch_sync" in cal else next(iter(cal))
    up, down = (sum((x - 1) * way > threshold for x in ratios) for way in (1, -1))
    way, moved = (1, up) if up >= down else (-1, down)
    median = statistics.median(ratios)
    if moved < 0.75 * len(ratios) or (median - 1) * way <= threshold or (cal[probe]["ratio"] - 1) * way <= threshold:
        return None
    return {"launch_bound_cases": len(ratios), "moved": moved, "median_ratio": median, "calibration_probe": probe,
            "calibration_ratio": cal[probe]["ratio"]}


def core_shared_apart(rows, apart=0.3):
    """The slower, faster and ambiguous cases whose share of samples on a shared core (record core_share) differs by
    `apart` or more between the two files: [{case, verdict, base_core_shared, new_core_shared}]."""
    return [{"case": r["case"], "verdict": r["verdict"], "base_core_shared": r["base_core_shared"],
             "new_core_shared": r["new_core_shared"]} for r in rows
            if r["verdict"] in ("slower", "faster", "ambiguous") and "new_core_shared" in r
            and abs(r["new_core_shared"] - r["base_core_shared"]) >= apart]


def core_shared_line(moved):
    """The note on moved cases whose core was shared for another share of their samples, one line."""
    cases = "; ".join(f"{printable(m['case'])} ({m['verdict']}: {m['base_core_shared']:.2f} -> {m['new_core_shared']:.2f})"
                      for m in moved[:10])
    return (f"**core shared**: {len(moved)} slower, faster or ambiguous case(s) ran with a share of their samples on a shared core "
            f"(another busy hardware thread on it: results/SCHEMA.md core_share) 0.3 or more apart from the other "
            f"file's: {cases}{' ...' if len(moved) > 10 else ''}. On the 1 x H200 VM a share of 0.5 or more made ce-batch "
            "on 4 KiB pages 1.5x slower: the platform moved, not only the case. The verdicts stand.")


def together_line(t, threshold):
    """The moved-together note, one line."""
    return (f"**moved together**: the launch-bound cases moved together with the process's calibration: {t['moved']} "
            f"of {t['launch_bound_cases']} launch-bound cases moved beyond {100 * threshold:.0f}% the same way (median "
            f"p50 ratio {t['median_ratio']:.3f}), and so did the calibration's {t['calibration_probe']} (ratio "
            f"{t['calibration_ratio']:.3f}): the machine or the process shifted, not one case. The verdicts stand (a "
            "slower launch path is a real regression).")


def calibration_markdown(cal):
    rows = [[name, fmt_num(p["base_p50_us"]), fmt_num(p["new_p50_us"]), f"{p['ratio']:.3f}"] for name, p in cal.items()]
    return ["", "**calibration** (what one command costs the process, timed before its first case; a levels file: the "
            "median over its processes):", "", table(["probe", "base p50 µs", "new p50 µs", "ratio"], rows)]


def p50_cell(p50, interval):
    """'12.00' or, with its interval, '12.00 [11.90, 12.10]'."""
    return f"{p50:.2f}" + (f" [{interval[0]:.2f}, {interval[1]:.2f}]" if interval else "")


ROW_HEADER = ["verdict", "pattern", "variant", "size/rank", "timing", "base p50 µs", "new p50 µs", "p50 ratio",
              "change", "busbw ratio", "draws", "p"]
ORDER = ("failed", "slower", "faster", "ambiguous", "same", "not compared")


def row_cells(r):
    """A case's row of the table (dmabench.text.table escapes what the file's names hold)."""
    head = [r["verdict"], pattern_label(r["pattern"], r["in_place"]), r["variant"], fmt_size(r["bytes_per_rank"]),
            r["timing"]]
    if "p50_ratio" not in r:
        return head + ["–", "–", "–", "–", "–", r.get("reason", "")[:60], "–"]
    bus = f"{r['busbw_ratio']:.3f}" if r["busbw_ratio"] is not None else "–"
    return head + [p50_cell(r["base_p50_us"], r["base_p50_interval_us"]), p50_cell(r["new_p50_us"], r["new_p50_interval_us"]),
                   f"{r['p50_ratio']:.3f}", f"{100 * r['change']:+.1f}%", bus, r["draws"], f"{r['p']:.2g}"]


def summary_line(rows, mins, alpha):
    """The table's first line: the counts by verdict and the rule."""
    counts = {v: sum(1 for r in rows if r["verdict"] == v) for v in ORDER}
    return (f"**dmabench compare**: {len(rows)} cases in both files; " + ", ".join(f"{n} {v}" for v, n in counts.items() if n)
            + f" ({verdict.rule_line(alpha, mins)}; `draws`: the processes of BASE+NEW)")


def markdown(rows, only_base, only_new, mins, alpha, show_all, cal=None, together=None, apart=(), shared_apart=()):
    out = [summary_line(rows, mins, alpha), ""]
    if any(r["verdict"] == "ambiguous" for r in rows):
        out += [AMBIGUOUS_NOTE, ""]
    out += [printable(together_line(together, mins["launch-bound"])), ""] if together else []
    out += [core_shared_line(shared_apart), ""] if shared_apart else []
    shown = [r for r in rows if show_all or r["verdict"] in ("failed", "slower", "faster", "ambiguous")]
    if shown:
        out.append(table(ROW_HEADER, [row_cells(r) for r in sorted(shown, key=lambda r: (ORDER.index(r["verdict"]),
                                                                                         -(r.get("p50_ratio") or 0)))]))
    if cal:
        out += calibration_markdown(cal)
    if apart:
        out += ["", f"{len(apart)} case(s) with one name in both files but other settings (their case keys differ), "
                "not compared:"] + [f"- {apart_line(a)}" for a in apart]
    paired = {a["case"] for a in apart}
    for title, names in (("only in BASE", only_base), ("only in NEW", only_new)):
        names = [n for n in names if n not in paired]
        if names:
            out += ["", f"{len(names)} case(s) {title}:"] + [f"- {printable(n)}" for n in names]
    return "\n".join(out)


AMBIGUOUS_NOTE = ("**ambiguous**: a change beyond the minimum that the processes do not support (one process per side "
                  "supports nothing): run more fresh processes of each side (`dmabench --processes N`, or "
                  "`dmabench-results ab BASE_BIN NEW_BIN`, which re-runs such cases)")


def verdict_line(r):
    """A compared case's verdict as the one line its JUnit test case carries."""
    if "p50_ratio" not in r:
        return printable(f"{r['verdict']}: {r.get('reason') or 'no reason given'}")
    return printable(f"{r['verdict']}: p50 {p50_cell(r['base_p50_us'], r['base_p50_interval_us'])} -> "
                     f"{p50_cell(r['new_p50_us'], r['new_p50_interval_us'])} µs (ratio {r['p50_ratio']:.3f}, change "
                     f"{100 * r['change']:+.1f}%, minimum {100 * r['min_change']:g}%, {r['draws']} draws, rank-sum p {r['p']:.2g}"
                     f"{', supported' if r['supported'] else ''})")


def junit_cases(rows, docs, fail_ambiguous=False):
    """The JUnit test cases of a comparison: a compared case a test (slower or failed, and ambiguous with
    `fail_ambiguous`: a failure; not compared: skipped; else passed), a case of one file only skipped with the
    reason."""
    news = {case_key(rec): rec for rec in docs[1]["results"]}
    bases = {case_key(rec): rec for rec in docs[0]["results"]}
    failing = regressions(fail_ambiguous)
    cases = []
    for r, rec in zip(rows, [news[k] for k in bases if k in news]):  # compare's order: BASE's cases that NEW has
        outcome = "failure" if r["verdict"] in failing else "skipped" if r["verdict"] == "not compared" else "passed"
        line = verdict_line(r)
        cases.append(junit.Case(r["case"], f"{r['pattern']}.{r.get('engine') or 'none'}", junit.case_seconds(rec), outcome,
                                line if outcome != "passed" else "", r["verdict"], line))
    for recs, other, why in ((bases, news, "only in BASE (not in NEW)"), (news, bases, "only in NEW (not in BASE)")):
        for key, rec in recs.items():
            if key not in other:
                cases.append(junit.Case(rec.get("name") or str(key), junit.classname(rec), 0.0, "skipped",
                                        f"{why}: not compared"))
    return cases


def regressions(fail_ambiguous=False):
    """The verdicts that fail a comparison."""
    return ("slower", "failed", "ambiguous") if fail_ambiguous else ("slower", "failed")


def add_rule_arguments(ap):
    """--alpha, --min-change and --threshold (compare, ab)."""
    ap.add_argument("--alpha", type=float, default=verdict.ALPHA,
                    help=f"family-wise false-alarm rate over the compared cases (default {verdict.ALPHA:g})")
    ap.add_argument("--min-change", action="append", metavar="CLASS=F",
                    help="the least change that counts for a class: launch=F, bandwidth=F (defaults "
                         + ", ".join(f"{c} {f:g}" for c, f in verdict.MIN_CHANGE.items()) + ")")
    ap.add_argument("--threshold", type=float, help="the least change that counts for every class (a fraction)")


def rule_of(a):
    """(alpha, {class: minimum}) from add_rule_arguments's arguments; ResultsError on a bad one."""
    if a.threshold is not None and not 0 <= a.threshold < 10:
        raise ResultsError(f"--threshold {a.threshold} is not a fraction such as 0.05")
    if not 0 < a.alpha < 1:
        raise ResultsError(f"--alpha {a.alpha}: expected a probability between 0 and 1, such as 0.02")
    try:
        return a.alpha, minima(a.threshold, verdict.parse_min_change(a.min_change))
    except ValueError as e:
        raise ResultsError(str(e)) from None


def main(argv=None, tool=TOOL):
    return run_tool(tool, run, argv)


def run(argv=None):
    ap = arg_parser(__doc__)
    ap.add_argument("base")
    ap.add_argument("new")
    add_rule_arguments(ap)
    ap.add_argument("--fail-ambiguous", action="store_true", help="an ambiguous case fails the comparison too")
    ap.add_argument("--json", action="store_true", help="print JSON instead of markdown")
    ap.add_argument("--all", action="store_true", help="list unchanged cases too")
    ap.add_argument("--junit", metavar="FILE", help="also write the verdicts as JUnit XML (a case a test)")
    a = ap.parse_args(argv)
    alpha, mins = rule_of(a)
    program = junit.check_path(a.junit) if a.junit else None  # before any work: the path and the program
    docs = [load(path) for path in (a.base, a.new)]
    rows, only_base, only_new = compare(docs[0], docs[1], alpha=alpha, min_change=mins)
    if not rows:
        raise ResultsError(f"{a.base} and {a.new} have no case in common (different patterns, engines, options, "
                           "devices, sizes or timing)")
    regressed = [r for r in rows if r["verdict"] in regressions(a.fail_ambiguous)]
    cal = calibration(docs[0], docs[1])
    together = moved_together(rows, cal, mins["launch-bound"])
    if a.junit:
        junit.write(a.junit, junit_cases(rows, docs, a.fail_ambiguous),
                    {"command": "compare", "base": a.base, "new": a.new, "alpha": alpha, **{
                        f"min_change_{c}": f for c, f in mins.items()}}, program)
    apart = settings_apart(docs[0], docs[1], only_base, only_new)
    shared_apart = core_shared_apart(rows)
    if a.json:
        print(json_text({"alpha": alpha, "min_change": mins, "cases": rows, "only_in_base": only_base,
                         "only_in_new": only_new, "settings_apart": apart, "regressed": len(regressed),
                         "ambiguous": sum(r["verdict"] == "ambiguous" for r in rows), "calibration": cal,
                         "moved_together": together, "core_shared_apart": shared_apart}))
    else:
        print(markdown(rows, only_base, only_new, mins, alpha, a.all, cal, together, apart, shared_apart))
    return 1 if regressed else 0


if __name__ == "__main__":
    sys.exit(main())
