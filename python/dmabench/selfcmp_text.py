"""What results/h200x1/levels/ says about two runs of one build (A and B), computed from both runs' levels files:
the `levels-selfcmp` generated block (dmabench.generated) and results/h200x1/levels/selfcmp.py's tables.

Per config and class of case (dmabench.case_class), over the cases ok in both runs:
- the between-process half-width (each record's `noise`: its interval's larger side over its p50) of A's records
  and of B's together, median (max), and the case and run of the widest: a statement read from one run alone
  misses what the other showed;
- the median within-process half-width (`levels.within`) of both runs;
- the smallest change two such intervals can show apart: per case max(5%, A's half-width + B's), median (max);
- one-process pairs: within each run, every pair of its processes' p50s of one case, counted when the slower is more
  than PAIR_LIMIT (5%) above the faster, what a 5% threshold on one process per run would call slower or faster;
- processes per run for a 10% change: from the case's per-process spread sigma (1.4826 x MAD over the median of
  both runs' p50s), the N with 10% > 2 x 1.96 x 1.2533 sigma / sqrt(N) (two median intervals apart), median (max).
"""
import json
import os
import statistics

from .files import open_text
from .keys import case_class, case_key
from .text import ResultsError, table

PAIR_LIMIT = 0.05  # the old compare threshold selfcmp.md's tables were judged by
FLOOR = 0.05  # compare's threshold then: no change below it was called


def load_levels(path, root):
    try:
        with open_text(os.path.join(root, path)) as f:
            doc = json.load(f)
    except (OSError, ValueError) as e:
        raise ResultsError(f"{path}: {e}") from None
    if not isinstance(doc.get("results"), list):
        raise ResultsError(f"{path}: no results list")
    return {case_key(r): r for r in doc["results"] if r.get("status") == "ok" and isinstance(r.get("levels"), dict)}


def draws(r):
    return [x for x in r["levels"]["p50_us"] if x]


def pairs_over(xs, limit=PAIR_LIMIT):
    """(pairs, ratios above 1 + limit) of one run's per-process p50s of one case."""
    ratios = [max(a, b) / min(a, b) for i, a in enumerate(xs) for b in xs[i + 1:]]
    return len(ratios), [x for x in ratios if x > 1 + limit]


def processes_for_ten_percent(xs):
    """Processes per run for two median intervals to sit apart at a 10% change, from the spread of `xs`."""
    m = statistics.median(xs)
    sigma = 1.4826 * statistics.median(abs(x - m) for x in xs) / m
    return max(1.0, (2 * 1.96 * 1.2533 * sigma / 0.10) ** 2)


def case_rows(label, a, b):
    """Per (config, class): the per-case figures of the cases both runs have ok."""
    out = {}
    for key in sorted(set(a) & set(b), key=str):
        ra, rb = a[key], b[key]
        row = out.setdefault((label, case_class(rb)), {"cases": 0, "widths": [], "within": [], "detect": [],
                                                       "pairs": 0, "over": [], "over_cases": set(), "need": [],
                                                       "processes": set()})
        row["cases"] += 1
        row["widths"] += [(ra["noise"], ra["name"], "A"), (rb["noise"], rb["name"], "B")]
        row["within"] += [ra["levels"]["within"], rb["levels"]["within"]]
        row["detect"].append(max(FLOOR, ra["noise"] + rb["noise"]))
        for r in (ra, rb):
            n, over = pairs_over(draws(r))
            row["pairs"] += n
            row["over"] += over
            if over:
                row["over_cases"].add(r["name"])
            row["processes"].add(r["levels"]["processes"])
        row["need"].append(processes_for_ten_percent(draws(ra) + draws(rb)))
    return out


def pct(x, digits=1):
    return f"{100 * x:.{digits}f}%"


def row_text(key, row):
    widths = [w for w, _, _ in row["widths"]]
    wide, name, run = max(row["widths"])
    over = row["over"]
    pairs = f"{len(over)} of {row['pairs']}" + (
        f" ({min(over):.2f}–{max(over):.2f}×, in {len(row['over_cases'])} case{'s' * (len(row['over_cases']) > 1)})"
        if over else "")
    return [key[0], key[1], str(row["cases"]), "/".join(map(str, sorted(row["processes"]))),
            f"{pct(statistics.median(widths))} ({pct(max(widths))})", f"{pct(wide)}: `{name}`, run {run}",
            pct(statistics.median(row["within"]), 2),
            f"{statistics.median(row['detect']) * 100:.0f}% ({max(row['detect']) * 100:.0f}%)", pairs,
            f"{statistics.median(row['need']):.0f} ({max(row['need']):.0f})"]


def markdown(runs, root):
    """The table from [(label, A path, B path)]."""
    rows = {}
    for label, a, b in runs:
        rows.update(case_rows(label, load_levels(a, root), load_levels(b, root)))
    if not rows:
        raise ResultsError("levels-selfcmp: no case ok in both runs")
    header = ["config", "class", "cases", "processes per run",
              "between-process half-width over A and B, median (max)", "widest", "within one process, median",
              "smallest change two intervals show apart (≥ 5%), median (max)",
              f"one-process pairs of a run more than {PAIR_LIMIT:.0%} apart",
              "processes per run for a 10% change, median (max)"]
    return table(header, [row_text(k, rows[k]) for k in sorted(rows)])


def generated_block(args, root):
    """`levels-selfcmp LABEL=A.json,B.json...` (paths from the checkout's root)."""
    runs = []
    for arg in args:
        label, eq, paths = arg.partition("=")
        files = paths.split(",")
        if not eq or len(files) != 2 or not all(files):
            raise ResultsError(f"levels-selfcmp {arg}: expected LABEL=A.json,B.json")
        runs.append((label, *files))
    if not runs:
        raise ResultsError("levels-selfcmp: expected LABEL=A.json,B.json...")
    return markdown(runs, root)
