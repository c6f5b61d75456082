"""Crossover maps from dmabench block-layout results: who should move small blocks (standard library only).

usage: crossover.py RESULTS.json [more.json ...] [--markdown OUT.md] [--json OUT.json] [--plots DIR]
                    [--knee 0.10] [--cliff 0.25] [--timing oneshot|pipelined] [--versus A,B ...]

Reads the ok and validated records (`validated` not false) whose `layout.kind` is "blocks" (results/SCHEMA.md) at
one timing (default oneshot), groups them by pattern, host memory (`host_memory.kind` and NUMA request, or "device"
for device memory: pattern copy), devices and block arrangement (order, stride, pool, seed, sides), and in each group
compares the mechanisms (the engine with its non-default options, dmabench.`variant`: "ce-batch",
"sm sms=12") cell by cell, a cell being (block size B, blocks per operation n = `layout.blocks_per_op`). When two
records measure one cell of one mechanism, the later one (file order, then record order) is used and a note counts
the replacements. A record without `p50_interval_us` counts as the interval [p50, p50]. Markdown goes to stdout (and
--markdown), the same numbers as JSON to --json (schema "dmabench-crossover/1"; null for any figure that is not a
finite number), one heat map per group to --plots DIR (needs matplotlib, imported only then).

1. Model per mechanism: time_us = per_call_us + per_desc_us x n + n x B / rate, fitted by relative least squares
   (each cell's residual divided by its p50, so µs and ms cells count alike; a 3x3 normal-equation solve) over all
   the mechanism's cells; rate in GB/s = 1e-3 / (µs per byte) where that coefficient is > 0, else null. R^2 is the
   weighted one (weights 1 / p50^2, about the weighted mean); also the largest |residual| / p50 and its cell.
   Needs >= 4 cells with >= 2 block counts and >= 2 block sizes, else "not fitted (why)".
2. Cliffs, where one model does not hold:
   a. Bandwidth steps, per mechanism and n with >= 4 block sizes B_0 < ... < B_k: bandwidth bw_i = n x B_i / p50_i.
      Each step i (B_i -> B_i+1) has a slope s_i = ln(bw_i+1 / bw_i) / ln(B_i+1 / B_i) (0 where bandwidth stays,
      1 where it grows with the block size, as when per-descriptor costs dominate; the model keeps it in [0, 1]).
      The step's expected bandwidth ratio lies between (B_i+1 / B_i)^s of its neighbouring steps' slopes (the two
      steps on each side, those that exist: >= 2; on the model the slope falls smoothly with B, so a smooth curve
      stays within them): the smallest gives lo, the largest hi. It is a cliff up when bw_i+1 / bw_i > hi x (1 +
      --cliff) and its pessimistic ratio (bw_i+1 at its p50 interval's high time over bw_i at its interval's low
      time) is > hi too; a cliff down when bw_i+1 / bw_i < lo / (1 + --cliff) and the optimistic ratio (interval
      low time at B_i+1, high time at B_i) is < lo too. Reported "cliff between B_i and B_i+1 at n=N: X -> Y GB/s".
   b. Model break: where the fit's largest relative residual exceeds --cliff, the cells are split at every measured
      block size B* into B <= B* and B > B*, each piece fitted as in 1 (both fittable), and the B* with the least
      summed squared relative residuals is reported: "the model breaks between B* and the next size".
3. Knee (per-descriptor bound), per mechanism and n with >= 2 block sizes: the floor is the p50 at the smallest
   block size; the knee is the first larger block size whose p50 exceeds the floor by more than --knee (a
   fraction, default 0.10) and whose interval's low end is above the floor's interval's high end: "per-descriptor
   bound up to B_prev, not at B". None where no size does.
4. Decisions, per cell: the winner (lowest p50), the runner-up, margin = runner-up p50 / winner p50; a tie when
   another mechanism's p50 interval overlaps the winner's (all such are listed with the winner); the table prints
   the first-named's p50 with its interval and the interval's coverage (`interval_coverage` in the JSON: a levels
   file's between-process interval holds the median with dmabench.levels.median_ranks' probability, 75% for the
   [min, max] of 3 processes, 93.75% for 5, at least 95% from 6; one process's own interval 95%). Per mechanism its
   p50 and SM cost = SMs held x p50 (SM·µs): SMs held is `engine_details.sms_used` where present, else
   `engine_details.grid_blocks` capped at `multiprocessors`, for engine sm; 0 for the DMA engines (ce, ce-batch,
   sdma, hsa); null for host (CPU threads, not SMs) and other engines. Regions: per n, the maximal runs of
   consecutive block sizes with one winner (ties a run of their own). Thresholds, per n and per pair (sm variant K,
   DMA variant D) at the block sizes both measured: K beats D where its p50 is lower and the intervals are apart (D
   beats K likewise, otherwise a tie); `kernel_wins_up_to_bytes` the largest B such that K beats D at every size
   <= B (null where it does not at the smallest), `kernel_wins_below_bytes` the next measured size (null where K
   beats D at every size), `dma_wins_from_bytes` the smallest B from which D beats K at every size.
5. Heat maps (--plots DIR): per group with >= 2 mechanisms one PNG, x the block sizes, y the block counts, colour the
   winner (one colour per mechanism across the report), text the margin, ties hatched grey, cliffs red lines
   between the two sizes at their n, model breaks dashed lines.
6. Head to head (--versus A,B, repeatable; A and B variant labels as above, e.g. --versus "sm sms=12,ce-batch"; a
   label may hold commas: the split is the one whose both sides are labels some group measured). Per group that
   measured both: a table (rows block size, columns n) of B p50 / A p50 ("2.31×": > 1 where A is faster), " (tie)"
   where their p50 intervals overlap, and per n the line of 4's thresholds with A as the kernel and B as the DMA
   variant ("A beats B up to 24 KiB, not at 28 KiB; B beats it from 32 KiB"). JSON: the group's `versus` list of
   {"a", "b", "cells": [{"block_bytes", "blocks_per_op", "ratio", "tie", "a_p50_us", "b_p50_us"}] (the cells
   either measured; ratio and tie null where the other is missing), "lines", "figure"}. With --plots, per group and
   pair one PNG crossover-NN-<pattern>-<host>-<A>-vs-<B>.png (labels kept to letters, digits and '-'): colour log2
   of the ratio (RdBu, centred at 1, clipped at 1/8 and 8), text the ratio to 2 significant digits, ties hatched,
   the cliffs of A and of B at their n as lines; none where the pair has fewer than 2 cells in common (a line says
   so).

Exit codes: 0 done (also when there is no block record: the output says so); 2 bad input: an unreadable or
malformed results file, a record field of the wrong type (layout, host_memory, validated, engine_details of sm), a
bad argument (--knee or --cliff not a number > 0; --plots without matplotlib; --versus not two labels some group
measured) or an output path that cannot be written, with one line `crossover.py: error: ...` on stderr (never a
traceback).
"""
import argparse
import math
import os
import re
import sys

from ..extras import missing_module, MissingExtra
from ..files import add_emit_arguments, emit, make_dir, write_file
from ..keys import interval_text, PATTERN_ORDER, variant, versions_caption
from ..levels import median_ranks
from ..reader import load
from ..schema import check_kind
from ..text import fmt_num, fmt_size, printable, quote, ResultsError, table
from ..tool import arg_parser, run_tool

TOOL = "crossover.py"
REPORT_SCHEMA = "dmabench-crossover/1"
DMA_ENGINES = ("ce", "ce-batch", "sdma", "hsa")
HOST_KINDS = ["pinned", "mapped", "registered", "pageable"]
MIN_FIT_CELLS = 4
MIN_CLIFF_SIZES = 4
MISSING = "#d9d9d9"  # the head-to-head map's colour of a cell without a ratio
VERSUS_CLIP = 3  # log2 of the ratio the head-to-head colours saturate at (1/8, 8)
COLOURS = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#bcbd22", "#17becf",
           "#aec7e8", "#ffbb78", "#98df8a", "#ff9896", "#c5b0d5", "#c49c94", "#f7b6d2", "#dbdb8d", "#9edae5"]


# ---- reading --------------------------------------------------------------------------------------

def block_of(r, where):
    """(block_bytes, blocks_per_op, arrangement) of a block-layout record; None for another layout."""
    layout = r.get("layout")
    if layout is None:
        return None
    check_kind(layout, dict, f"{where}.layout")
    check_kind(layout.get("kind"), str, f"{where}.layout.kind")
    if layout["kind"] != "blocks":
        return None
    for field in ("block_bytes", "blocks_per_op"):
        check_kind(layout.get(field), int, f"{where}.layout.{field}", field == "blocks_per_op" and r["status"] != "ok")
        if layout.get(field) is not None and layout[field] <= 0:
            raise ResultsError(f"{where}.layout.{field}: expected a positive integer, got {layout[field]}")
    for field in ("stride_bytes", "pool_bytes", "seed"):
        check_kind(layout.get(field), int, f"{where}.layout.{field}", True)
    for field in ("order", "sides"):
        check_kind(layout.get(field), str, f"{where}.layout.{field}", True)
    order = layout.get("order")
    arrangement = (order, layout.get("stride_bytes") if order == "strided" else None,
                   layout.get("pool_bytes") if order == "random" else None,
                   layout.get("seed") if order == "random" else None, layout.get("sides") or "both")
    return layout["block_bytes"], layout.get("blocks_per_op"), arrangement


def host_of(r, where):
    """(kind, numa) of the record's host memory, or None for device memory."""
    h = r.get("host_memory")
    if h is not None:
        check_kind(h, dict, f"{where}.host_memory")
        check_kind(h.get("kind"), str, f"{where}.host_memory.kind")
        numa = h.get("numa", "local")
        if isinstance(numa, bool) or not isinstance(numa, (str, int)):
            raise ResultsError(f"{where}.host_memory.numa: expected a string or a node number, got {quote(numa, 40)}")
        return h["kind"], str(numa)
    m = re.search(r"/host=([^,/]+),numa=([^/]+)", r["name"])
    return (m.group(1), m.group(2)) if m else None


def sms_held(r, where):
    """(SMs the mechanism holds while it moves the blocks, or None; how that is known)."""
    engine = r["engine"]
    details = r.get("engine_details") if isinstance(r.get("engine_details"), dict) else {}
    if (engine in ("ce", "ce-batch") and r["pattern"] == "d2d" and (r.get("options") or {}).get("local") != "peer-bounce"
            and details.get("copy_kind") != "hipMemcpyDeviceToDeviceNoCU"):
        return None, "a copy within one GPU runs as a kernel on CUDA (results/LAB-NOTES.md): SMs held unknown"
    if engine in DMA_ENGINES:
        return 0, "DMA engine: no SM"
    if engine == "host":
        return None, "CPU threads, not SMs"
    if engine != "sm":
        return None, f"unknown for engine {engine}"
    details = r.get("engine_details")
    check_kind(details, dict, f"{where}.engine_details", True)
    details = details or {}
    for field in ("sm_budget", "grid_blocks", "sms_used", "multiprocessors"):
        check_kind(details.get(field), int, f"{where}.engine_details.{field}", True)
        if details.get(field) is not None and details[field] < 0:
            raise ResultsError(f"{where}.engine_details.{field}: expected an integer >= 0, got {details[field]}")
    if details.get("sms_used") is not None:
        return details["sms_used"], "engine_details.sms_used (measured)"
    grid, mps = details.get("grid_blocks"), details.get("multiprocessors")
    if grid is not None:
        return (min(grid, mps) if mps else grid), "engine_details.grid_blocks capped at multiprocessors"
    return None, "no engine_details.sms_used or grid_blocks"


WITHIN_COVERAGE = 0.95  # one process's own p50 interval (results/SCHEMA.md, "The p50's interval")


def coverage_of(r):
    """(coverage, what the interval is) of a record's p50 interval; (None, "no interval") without one. A levels
    file's interval is between its m processes, and what it covers is levels.median_ranks' (3 processes: [min, max],
    75%), not the 95% of one process's own interval: labelling it 95% overstates it."""
    lv = r.get("levels")
    m = lv.get("processes") if isinstance(lv, dict) else None
    if isinstance(m, int) and not isinstance(m, bool) and m >= 2:
        j, k, coverage = median_ranks(m)
        what = f"[min, max] of {m} processes' p50s" if j == 1 else f"ranks {j} and {k} of {m} processes' sorted p50s"
        return coverage, what
    if r.get("p50_interval_us"):
        return WITHIN_COVERAGE, "within one process"
    return None, "no interval"


def entry_of(r, where):
    """What a decision needs of one counted record."""
    p50 = r["latency_us"]["p50"]
    pair = r.get("p50_interval_us")
    held, how = sms_held(r, where)
    coverage, what = coverage_of(r) if pair else (None, "no interval")
    return {"p50_us": p50, "interval": list(pair) if pair else [p50, p50], "interval_recorded": bool(pair),
            "coverage": coverage, "interval_kind": what,
            "noisy": r.get("noisy"), "engine": r["engine"], "sms_held": held, "sm_note": how,
            "record": r}  # the record itself: thresholds.py reads its options and CPU cost from it


def collect(paths, timing):
    """(groups by key, documents, notes) from the files."""
    groups, docs = {}, []
    notes = {"other_timing": 0, "not_counted": 0, "replaced": 0, "not_blocks": 0}
    for path in paths:
        doc = load(path)
        docs.append((path, doc))
        for i, r in enumerate(doc["results"]):
            where = f"{path}: results[{i}]"
            block = block_of(r, where)
            if block is None:
                notes["not_blocks"] += 1
                continue
            check_kind(r.get("validated"), bool, f"{where}.validated", True)
            host = host_of(r, where)
            if r["status"] != "ok" or r.get("validated") is False:
                notes["not_counted"] += 1
                continue
            if r["timing"] != timing:
                notes["other_timing"] += 1
                continue
            size, count, arrangement = block
            key = (r["pattern"], bool(r.get("in_place")), host, tuple(r["devices"]), arrangement)
            group = groups.setdefault(key, {"cells": {}, "replaced": 0})
            cell = (size, count, variant(r))
            group["replaced"] += cell in group["cells"]
            notes["replaced"] += cell in group["cells"]
            group["cells"][cell] = entry_of(r, where)
    return groups, docs, notes


# ---- the model ------------------------------------------------------------------------------------

def solve3(a, b):
    """x with a x = b for a 3x3 `a` (Gaussian elimination, partial pivoting); None when it is singular."""
    m = [list(row) + [v] for row, v in zip(a, b)]
    scale = max(abs(v) for row in a for v in row) or 1.0
    for c in range(3):
        p = max(range(c, 3), key=lambda i: abs(m[i][c]))
        if abs(m[p][c]) <= 1e-12 * scale:
            return None
        m[c], m[p] = m[p], m[c]
        for i in range(c + 1, 3):
            f = m[i][c] / m[c][c]
            for j in range(c, 4):
                m[i][j] -= f * m[c][j]
    x = [0.0, 0.0, 0.0]
    for c in (2, 1, 0):
        x[c] = (m[c][3] - sum(m[c][j] * x[j] for j in range(c + 1, 3))) / m[c][c]
    return x


def fit_obstacle(points):
    """Why `points` [(B, n, p50)] cannot be fitted, or None."""
    sizes, counts = {b for b, _, _ in points}, {n for _, n, _ in points}
    if len(points) < MIN_FIT_CELLS:
        return f"{len(points)} cell{'s' if len(points) != 1 else ''}; needs >= {MIN_FIT_CELLS}"
    if len(counts) < 2:
        return f"one block count (n={next(iter(counts))}); needs >= 2"
    if len(sizes) < 2:
        return f"one block size ({fmt_size(next(iter(sizes)))}); needs >= 2"
    return None


def fit_cells(points):
    """Relative least squares p50 = per_call + per_desc x n + (n x B) x us_per_byte over [(B, n, p50)]."""
    why = fit_obstacle(points)
    if why:
        return {"fitted": False, "cells": len(points), "reason": why}
    try:
        return solve_fit(points)
    except (ZeroDivisionError, OverflowError):  # p50s near the float limits (5e-324 µs)
        return {"fitted": False, "cells": len(points), "reason": "p50s out of the range of a float fit"}


def solve_fit(points):
    """fit_cells on points it can fit: the weighted normal equations, columns scaled to their largest value."""
    rows = [(1.0, float(n), float(n) * b) for b, n, _ in points]
    scale = [max(abs(r[j]) for r in rows) for j in range(3)]
    units = [[r[j] / scale[j] / y for j in range(3)] for r, (_, _, y) in zip(rows, points)]
    a = [[sum(u[i] * u[j] for u in units) for j in range(3)] for i in range(3)]
    x = solve3(a, [sum(u[i] for u in units) for i in range(3)])
    if x is None:
        return {"fitted": False, "cells": len(points),
                "reason": "singular: the cells do not tell the three costs apart"}
    coef = [x[j] / scale[j] for j in range(3)]
    ys = [y for _, _, y in points]
    rel = [(y - sum(c * v for c, v in zip(coef, r))) / y for r, y in zip(rows, ys)]
    ssr = sum(e * e for e in rel)
    mean = sum(1 / y for y in ys) / sum(1 / (y * y) for y in ys)
    sst = sum(((y - mean) / y) ** 2 for y in ys)
    worst = max(range(len(rel)), key=lambda i: abs(rel[i]))
    return {"fitted": True, "cells": len(points), "per_call_us": coef[0], "per_desc_us": coef[1],
            "us_per_byte": coef[2], "rate_GBps": 1e-3 / coef[2] if coef[2] > 0 else None,
            "r2": 1.0 - ssr / sst if sst > 0 else None, "ssr": ssr, "max_rel_residual": abs(rel[worst]),
            "worst_cell": {"block_bytes": points[worst][0], "blocks_per_op": points[worst][1],
                           "rel_residual": rel[worst]}}


def best_split(points):
    """The block size B* where fitting B <= B* and B > B* apart leaves the least summed squared relative residuals."""
    best = None
    sizes = sorted({b for b, _, _ in points})
    for i, cut in enumerate(sizes[:-1]):
        low, high = fit_cells([p for p in points if p[0] <= cut]), fit_cells([p for p in points if p[0] > cut])
        if not (low["fitted"] and high["fitted"]):
            continue
        ssr = low["ssr"] + high["ssr"]
        if best is None or ssr < best["ssr"]:
            best = {"break_after_bytes": cut, "next_bytes": sizes[i + 1], "ssr": ssr, "below": low, "above": high}
    return best or {"break_after_bytes": None, "reason": "too few cells to fit two pieces"}


def fit_mechanism(mech, points, cliff):
    fit = {"mechanism": mech, **fit_cells(points), "break": None}
    if fit["fitted"] and fit["max_rel_residual"] > cliff:
        fit["break"] = best_split(points)
    return fit


# ---- cliffs and knees -----------------------------------------------------------------------------

def ln(x):
    """The natural log of a ratio; NaN (which no comparison passes) where it is 0 or not finite."""
    return math.log(x) if 0 < x < math.inf else math.nan


def grow(x):
    """exp(x), capped (a slope of a huge ratio over a small step, applied to a larger one, would overflow)."""
    return math.exp(min(x, 700.0))


def bandwidths(n, series):
    """Per point of `series` [(B, p50, lo, hi)]: (bandwidth at the p50, at the interval's high time, at its low
    time), GB/s; inf where the interval's low time is 0."""
    return [(n * b / p / 1e3, n * b / hi / 1e3, n * b / lo / 1e3 if lo > 0 else math.inf) for b, p, lo, hi in series]


def cliffs_of(mech, n, series, cliff):
    """The bandwidth steps of one mechanism at one n that its neighbouring steps do not explain (docstring, 2a)."""
    if len(series) < MIN_CLIFF_SIZES:
        return []
    bw = bandwidths(n, series)
    widths = [math.log(series[i + 1][0] / series[i][0]) for i in range(len(series) - 1)]
    slopes = [ln(bw[i + 1][0] / bw[i][0]) / widths[i] for i in range(len(widths))]
    out = []
    for i, width in enumerate(widths):
        near = [slopes[j] for j in (i - 2, i - 1, i + 1, i + 2) if 0 <= j < len(slopes)]
        lo, hi = grow(min(near) * width), grow(max(near) * width)
        ratio = bw[i + 1][0] / bw[i][0]
        up = ratio > hi * (1 + cliff) and bw[i + 1][1] / bw[i][2] > hi
        down = ratio < lo / (1 + cliff) and bw[i + 1][2] / bw[i][1] < lo
        if up or down:
            b0, b1 = series[i][0], series[i + 1][0]
            out.append({"mechanism": mech, "blocks_per_op": n, "from_bytes": b0, "to_bytes": b1,
                        "from_GBps": bw[i][0], "to_GBps": bw[i + 1][0], "ratio": ratio, "expected_ratio": [lo, hi],
                        "direction": "up" if up else "down",
                        "text": f"{mech}: cliff between {fmt_size(b0)} and {fmt_size(b1)} at n={n}: bandwidth "
                                f"{fmt_num(bw[i][0])} → {fmt_num(bw[i + 1][0])} GB/s ({ratio_text(ratio)}×; "
                                f"the neighbouring steps give {ratio_text(lo)}–{ratio_text(hi)}×)"})
    return out


def knee_of(mech, n, series, knee):
    """Where one mechanism at one n stops being per-descriptor bound (docstring, 3); None below 2 block sizes."""
    if len(series) < 2:
        return None
    floor_bytes, floor, _, floor_high = series[0]
    entry = {"mechanism": mech, "blocks_per_op": n, "floor_bytes": floor_bytes, "floor_us": floor}
    for (before, *_), (size, p50, lo, _) in zip(series, series[1:]):
        if p50 > floor * (1 + knee) and lo > floor_high:
            return {**entry, "bound_up_to_bytes": before, "knee_bytes": size, "knee_us": p50,
                    "text": f"{mech} at n={n}: per-descriptor bound up to {fmt_size(before)}, not at {fmt_size(size)} "
                            f"({fmt_num(p50)} µs vs a floor of {fmt_num(floor)} µs at {fmt_size(floor_bytes)})"}
    last = series[-1][0]
    return {**entry, "bound_up_to_bytes": last, "knee_bytes": None, "knee_us": None,
            "text": f"{mech} at n={n}: no knee: within {100 * knee:g}% of its floor ({fmt_num(floor)} µs) or within "
                    f"its interval from {fmt_size(floor_bytes)} to {fmt_size(last)}"}


# ---- decisions ------------------------------------------------------------------------------------

def mechanism_cell(e):
    cost = e["sms_held"] * e["p50_us"] if e["sms_held"] is not None else None
    return {"p50_us": e["p50_us"], "p50_interval_us": e["interval"], "interval_recorded": e["interval_recorded"],
            "interval_coverage": e["coverage"], "interval_kind": e["interval_kind"],
            "noisy": e["noisy"], "sms_held": e["sms_held"], "sm_cost_SM_us": cost, "sm_note": e["sm_note"]}


def decide(size, count, cells):
    """The decision row of one cell from {mechanism: entry}."""
    ranked = sorted(cells, key=lambda m: (cells[m]["p50_us"], m))
    win = ranked[0]
    high = cells[win]["interval"][1]
    tied = [m for m in ranked[1:] if cells[m]["interval"][0] <= high]
    runner = ranked[1] if len(ranked) > 1 else None
    return {"block_bytes": size, "blocks_per_op": count, "bytes": size * count, "winner": win, "runner_up": runner,
            "margin": cells[runner]["p50_us"] / cells[win]["p50_us"] if runner else None, "tie": bool(tied),
            "tied": [win] + tied if tied else [], "mechanisms": {m: mechanism_cell(cells[m]) for m in ranked}}


def decision_rows(cells):
    by_cell = {}
    for (size, count, mech), e in cells.items():
        by_cell.setdefault((size, count), {})[mech] = e
    return [decide(size, count, by_cell[(size, count)]) for size, count in sorted(by_cell)]


def regions_of(rows, counts):
    """Per n, the maximal runs of consecutive block sizes with one winner ("tie" runs of their own)."""
    out = []
    for n in counts:
        runs = []
        for row in (r for r in rows if r["blocks_per_op"] == n):
            label = "tie" if row["tie"] else row["winner"]
            if not runs or runs[-1]["winner"] != label:
                runs.append({"winner": label, "from_bytes": row["block_bytes"], "sizes": 0, "margins": [],
                             "tied": set()})
            run = runs[-1]
            run["to_bytes"], run["sizes"] = row["block_bytes"], run["sizes"] + 1
            run["tied"].update(row["tied"])
            if row["margin"] is not None and not row["tie"]:
                run["margins"].append(row["margin"])
        for run in runs:
            margins = run.pop("margins")
            run.update(tied=sorted(run["tied"]), margin_min=min(margins) if margins else None,
                       margin_max=max(margins) if margins else None)
        out.append({"blocks_per_op": n, "runs": runs, "text": f"n={n}: " + ", ".join(map(run_text, runs))})
    return out


def outcome(k, d):
    """Who beats whom of a kernel entry `k` and a DMA entry `d`: "kernel", "dma" or "tie" (intervals overlap)."""
    if k["p50_us"] < d["p50_us"] and k["interval"][1] < d["interval"][0]:
        return "kernel"
    if d["p50_us"] < k["p50_us"] and d["interval"][1] < k["interval"][0]:
        return "dma"
    return "tie"


def threshold(n, kernel, dma, points):
    """The crossover of one (sm variant, DMA variant) pair at one n over [(B, outcome)] in block-size order."""
    first_loss = next((i for i, (_, o) in enumerate(points) if o != "kernel"), len(points))
    up_to = points[first_loss - 1][0] if first_loss else None
    below = points[first_loss][0] if first_loss < len(points) else None
    last_non_dma = max((i for i, (_, o) in enumerate(points) if o != "dma"), default=-1)
    dma_from = points[last_non_dma + 1][0] if last_non_dma + 1 < len(points) else None
    single = all(o != "kernel" for _, o in points[first_loss:])
    if up_to is None:
        text = f"{kernel} does not beat {dma} at the smallest size ({fmt_size(points[0][0])})"
    elif below is None:
        text = f"{kernel} beats {dma} at every size ({fmt_size(points[0][0])}–{fmt_size(up_to)})"
    else:
        text = f"{kernel} beats {dma} up to {fmt_size(up_to)}, not at {fmt_size(below)}"
    if dma_from is not None:
        text += f"; {dma} beats it from {fmt_size(dma_from)}"
    if not single:
        text += " (it beats it again at a larger size: not one crossover)"
    return {"blocks_per_op": n, "kernel": kernel, "dma": dma, "kernel_wins_up_to_bytes": up_to,
            "kernel_wins_below_bytes": below, "dma_wins_from_bytes": dma_from, "single_crossover": single,
            "outcomes": [[b, o] for b, o in points], "text": f"n={n}: {text}"}


def thresholds_of(cells, mechs, counts):
    engine = {m: e["engine"] for (_, _, m), e in cells.items()}
    kernels = [m for m in mechs if engine[m] == "sm"]
    dmas = [m for m in mechs if engine[m] in DMA_ENGINES]
    out = []
    for n in counts:
        sizes = sorted({b for b, c, _ in cells if c == n})
        for k in kernels:
            for d in dmas:
                points = [(b, outcome(cells[(b, n, k)], cells[(b, n, d)])) for b in sizes
                          if (b, n, k) in cells and (b, n, d) in cells]
                if points:
                    out.append(threshold(n, k, d, points))
    return out


# ---- head to head (--versus) ----------------------------------------------------------------------

def split_pair(text, known):
    """(A, B) of a --versus value "A,B" (a label may hold commas: the split whose both sides are `known`);
    ResultsError (exit 2) naming the unknown label and the known ones otherwise."""
    pairs = [(text[:i].strip(), text[i + 1:].strip()) for i, ch in enumerate(text) if ch == ","]
    if not pairs:
        raise ResultsError(f"--versus {quote(text)}: expected two variant labels A,B")
    both = next((p for p in pairs if p[0] in known and p[1] in known), None)
    if both and both[0] == both[1]:
        raise ResultsError(f"--versus {quote(text)}: A and B are one label")
    if both:
        return both
    a, b = next((p for p in pairs if p[0] in known or p[1] in known), pairs[0])
    listed = ", ".join(sorted(known)) if known else "none (no block records)"
    raise ResultsError(f"--versus: unknown label {quote(b if a in known else a)}; known: {listed}")


def versus_cell(size, count, ea, eb):
    """One cell of a pair from its two entries (None where not measured): ratio = B p50 / A p50."""
    ratio = tie = None
    if ea and eb:
        ratio = eb["p50_us"] / ea["p50_us"] if ea["p50_us"] > 0 else None
        ratio = ratio if ratio is not None and math.isfinite(ratio) else None
        tie = outcome(ea, eb) == "tie"
    return {"block_bytes": size, "blocks_per_op": count, "ratio": ratio, "tie": tie,
            "a_p50_us": ea["p50_us"] if ea else None, "b_p50_us": eb["p50_us"] if eb else None}


def versus_line(n, a, b, points):
    """The thresholds line (4) of A over B at one n, its fields named for A and B."""
    t = threshold(n, a, b, points)
    return {"blocks_per_op": n, "a_wins_up_to_bytes": t["kernel_wins_up_to_bytes"],
            "a_wins_below_bytes": t["kernel_wins_below_bytes"], "b_wins_from_bytes": t["dma_wins_from_bytes"],
            "single_crossover": t["single_crossover"], "text": t["text"]}


def versus_of(cells, rows, counts, a, b):
    """The head-to-head entry of A and B in one group (docstring, 6)."""
    out = [versus_cell(r["block_bytes"], r["blocks_per_op"], cells.get((r["block_bytes"], r["blocks_per_op"], a)),
                       cells.get((r["block_bytes"], r["blocks_per_op"], b))) for r in rows
           if a in r["mechanisms"] or b in r["mechanisms"]]
    lines = []
    for n in counts:
        points = [(c["block_bytes"], outcome(cells[(c["block_bytes"], n, a)], cells[(c["block_bytes"], n, b)]))
                  for c in out if c["blocks_per_op"] == n and c["tie"] is not None]
        if points:
            lines.append(versus_line(n, a, b, points))
    return {"a": a, "b": b, "cells": out, "common_cells": sum(c["tie"] is not None for c in out), "lines": lines,
            "figure": None, "note": None}


def versus_all(g, cells, pairs):
    """The group's `versus` list; a note for each pair it did not measure both of."""
    out = []
    for a, b in pairs:
        missing = [m for m in (a, b) if m not in g["mechanisms"]]
        if missing:
            g["notes"].append(f"--versus {a},{b}: {' and '.join(missing)} not measured in this group.")
        else:
            out.append(versus_of(cells, g["cells"], g["blocks_per_op"], a, b))
    return out


# ---- one group ------------------------------------------------------------------------------------

def series_of(cells, mech, n):
    """[(B, p50, interval low, interval high)] of one mechanism at one n, in block-size order."""
    return sorted((b, e["p50_us"], *e["interval"]) for (b, c, m), e in cells.items() if m == mech and c == n)


def analyse(key, group, knee, cliff, pairs=()):
    pattern, in_place, host, devices, arrangement = key
    cells = group["cells"]
    mechs = sorted({m for _, _, m in cells})
    counts = sorted({n for _, n, _ in cells})
    fits = [fit_mechanism(m, [(b, n, e["p50_us"]) for (b, n, w), e in sorted(cells.items()) if w == m], cliff)
            for m in mechs]
    cliffs, knees = [], []
    for m in mechs:
        for n in counts:
            series = series_of(cells, m, n)
            cliffs += cliffs_of(m, n, series, cliff)
            k = knee_of(m, n, series, knee)
            if k:
                knees.append(k)
    rows = decision_rows(cells)
    notes = [f"{group['replaced']} record(s) measured a cell an earlier one did; the later one is used."] \
        if group["replaced"] else []
    order, stride, pool, seed, sides = arrangement
    g = {"pattern": pattern, "in_place": in_place, "host_kind": host[0] if host else "device",
         "numa": host[1] if host else None, "devices": list(devices),
         "arrangement": {"order": order, "stride_bytes": stride, "pool_bytes": pool, "seed": seed, "sides": sides},
         "mechanisms": mechs, "block_sizes": sorted({b for b, _, _ in cells}), "blocks_per_op": counts,
         "fits": fits, "cliffs": cliffs, "knees": knees, "cells": rows, "regions": regions_of(rows, counts),
         "thresholds": thresholds_of(cells, mechs, counts), "notes": notes, "figure": None}
    g["title"] = title(g)
    g["versus"] = versus_all(g, cells, pairs)
    return g


def group_order(key):
    pattern, in_place, host, devices, arrangement = key
    rank = PATTERN_ORDER.index(pattern) if pattern in PATTERN_ORDER else len(PATTERN_ORDER)
    kind = (HOST_KINDS.index(host[0]) if host[0] in HOST_KINDS else len(HOST_KINDS), *host) if host else (-1,)
    return rank, pattern, in_place, kind, devices, tuple("" if x is None else str(x) for x in arrangement)


# ---- text -----------------------------------------------------------------------------------------

def ratio_text(x):
    return "–" if x is None or not math.isfinite(x) else f"{x:.1f}" if x < 10 else f"{x:.0f}"


def size_range(a, b):
    """'4–24 KiB', '28 KiB–4 MiB', '8 KiB'."""
    if a == b:
        return fmt_size(a)
    sa, sb = fmt_size(a), fmt_size(b)
    if sa.split(" ")[1] == sb.split(" ")[1]:
        return f"{sa.split(' ')[0]}–{sb}"
    return f"{sa}–{sb}"


def run_text(run):
    span = size_range(run["from_bytes"], run["to_bytes"])
    if run["winner"] == "tie":
        return f"tie at {span} ({', '.join(run['tied'])})"
    lo, hi = run["margin_min"], run["margin_max"]
    margin = "alone" if lo is None else f"{ratio_text(lo)}×" if ratio_text(lo) == ratio_text(hi) else \
        f"{ratio_text(lo)}–{ratio_text(hi)}×"
    return f"{run['winner']} wins {span} ({margin})"


def title(g):
    host = f"{g['host_kind']} host memory, numa {g['numa']}" if g["numa"] is not None else "device memory"
    a = g["arrangement"]
    arr = (a["order"] or "?") + (f", stride {fmt_size(a['stride_bytes'])}" if a["stride_bytes"] else "") + \
        (f", pool {fmt_size(a['pool_bytes'])}" if a["pool_bytes"] else "") + \
        (f", seed {a['seed']}" if a["seed"] not in (None, 1) else "") + f", sides {a['sides']}"
    place = " (in place)" if g["in_place"] else ""
    return f"{g['pattern']}{place} · {host} · blocks {arr} · dev={','.join(map(str, g['devices']))}"


def pct(x):
    """A coverage as a percentage: '75%', '93.75%', '95.1%'."""
    return f"{100 * x:.2f}".rstrip("0").rstrip(".") + "%"


def interval_md(c):
    """A mechanism cell's p50 and its interval with the interval's coverage: '95.1 [94.0, 96.2] 75%'; the bare p50
    where no interval was recorded."""
    if not c["interval_recorded"]:
        return f"{fmt_num(c['p50_us'])} (no interval)"
    lo, hi = c["p50_interval_us"]
    cover = pct(c["interval_coverage"]) if c["interval_coverage"] is not None else "coverage unknown"
    return f"{fmt_num(c['p50_us'])} [{fmt_num(lo)}, {fmt_num(hi)}] {cover}"


def decision_text(row):
    """The winner (or the tied mechanisms) and the first-named's p50 with its interval and coverage: a tie or a win
    is only as sure as the intervals it rests on."""
    first = row["mechanisms"][row["winner"]]
    if row["tie"]:
        return f"tie ({', '.join(row['tied'])}): {interval_md(first)}"
    head = f"{row['winner']} ×{ratio_text(row['margin'])}" if row["runner_up"] else f"{row['winner']} only"
    return f"{head}: {interval_md(first)}"


def coverage_sentence(cells):
    """What the shown intervals are and how often each kind holds the median (the coverages in these cells, not a
    blanket 95%); "" where no cell has an interval."""
    kinds = sorted({(c["interval_coverage"], c["interval_kind"]) for c in cells if c["interval_recorded"]},
                   key=lambda k: (k[0] is None, k[0] or 0, k[1]))
    said = "; ".join(f"{what}: holds the median with {pct(cov) if cov is not None else 'unknown probability'}"
                     for cov, what in kinds)
    return f"Intervals: {said}." if said else ""


def decision_md(g):
    by_cell = {(r["block_bytes"], r["blocks_per_op"]): r for r in g["cells"]}
    header = ["block \\ n"] + [f"n={n}" for n in g["blocks_per_op"]]
    body = [[fmt_size(b)] + [decision_text(by_cell[(b, n)]) if (b, n) in by_cell else "–" for n in g["blocks_per_op"]]
            for b in g["block_sizes"]]
    shown = [r["mechanisms"][r["winner"]] for r in g["cells"]]
    return ["", "**Who wins** (lowest p50; ×: runner-up p50 / winner p50; tie: p50 intervals overlap; then the "
                "first-named's p50 µs [its interval] and the interval's coverage)", "",
            table(header, body)] + (["", coverage_sentence(shown)] if coverage_sentence(shown) else [])


def cost_md(g):
    header = ["block", "n"] + [f"{m} p50 µs (SM·µs)" for m in g["mechanisms"]]
    body = []
    for row in g["cells"]:
        cells = []
        for m in g["mechanisms"]:
            c = row["mechanisms"].get(m)
            cost = "–" if c is None else fmt_num(c["sm_cost_SM_us"]) if c["sm_cost_SM_us"] is not None else \
                "CPU" if c["sm_note"].startswith("CPU") else "?"
            cells.append("–" if c is None else f"{cell_p50(c)} ({cost})")
        body.append([fmt_size(row["block_bytes"]), str(row["blocks_per_op"])] + cells)
    shown = [c for row in g["cells"] for c in row["mechanisms"].values() if c]
    legend = ["", f"{COST_LEGEND}. {coverage_sentence(shown)}".rstrip()] \
        if any(c["interval_recorded"] or c["noisy"] is True for c in shown) else []
    return ["", "**p50 and SM cost** (SMs held × p50; 0 for DMA engines; CPU: host threads, not SMs; ?: unknown)",
            "", table(header, body)] + legend


COST_LEGEND = ("p50 ± half its interval (`p50_interval_us`, the larger side; its coverage below); `noisy`: the "
               "interval is wider than the run's `max_noise`, or fewer than 6 samples: the p50 is not known to that "
               "precision")


def cell_p50(c):
    """A mechanism cell's p50 with half its interval (where recorded) and `noisy`."""
    return interval_text(c["p50_us"], c["p50_interval_us"] if c["interval_recorded"] else None, c["noisy"], fmt_num)


def versus_text(c):
    """'2.31×' (B p50 / A p50), ' (tie)' added where the intervals overlap; '–' where either is missing."""
    if c is None or c["tie"] is None:
        return "–"
    return ("–" if c["ratio"] is None else f"{c['ratio']:.2f}×") + (" (tie)" if c["tie"] else "")


def versus_md(g):
    out = []
    for v in g["versus"]:
        a, b = v["a"], v["b"]
        by_cell = {(c["block_bytes"], c["blocks_per_op"]): c for c in v["cells"]}
        sizes, counts = sorted({size for size, _ in by_cell}), sorted({n for _, n in by_cell})
        body = [[fmt_size(size)] + [versus_text(by_cell.get((size, n))) for n in counts] for size in sizes]
        out += ["", printable(f"**{a} vs {b}** ({b} p50 / {a} p50: > 1 where {a} is faster; "
                              "(tie): p50 intervals overlap)"), "",
                table(["block \\ n"] + [f"n={n}" for n in counts], body)]
        out += bullets(printable(f"**{a} vs {b} by n** (beats = lower p50, intervals apart)"),
                       [line["text"] for line in v["lines"]], "no cell in common")
        if v["note"]:
            out.append(f"_{printable(v['note'])}_")
    return out


def fit_row(f):
    if not f["fitted"]:
        return [f["mechanism"], str(f["cells"]), f"not fitted ({f['reason']})"] + ["–"] * 5
    w = f["worst_cell"]
    return [f["mechanism"], str(f["cells"]), fmt_num(f["per_call_us"]), fmt_num(f["per_desc_us"]),
            fmt_num(f["rate_GBps"]), "–" if f["r2"] is None else f"{f['r2']:.4f}",
            f"{100 * f['max_rel_residual']:.2f}%", f"{fmt_size(w['block_bytes'])}, n={w['blocks_per_op']}"]


def fits_md(g):
    header = ["mechanism", "cells", "per_call µs", "per_desc µs", "rate GB/s", "R²", "max rel. residual", "at"]
    return ["", "**Model**: p50_us = per_call_us + per_desc_us × n + n × block / rate (relative least squares)", "",
            table(header, [fit_row(f) for f in g["fits"]])]


def break_text(f):
    b = f["break"]
    head = f"{f['mechanism']}: the fit misses by up to {100 * f['max_rel_residual']:.1f}%"
    if b["break_after_bytes"] is None:
        return f"{head}; {b['reason']}"
    lo, hi = b["below"], b["above"]
    return (f"{head}; the model breaks between {fmt_size(b['break_after_bytes'])} and {fmt_size(b['next_bytes'])} "
            f"(≤: {piece_text(lo)}; >: {piece_text(hi)})")


def piece_text(f):
    return f"{fmt_num(f['per_call_us'])} + {fmt_num(f['per_desc_us'])}·n µs, {fmt_num(f['rate_GBps'])} GB/s"


def bullets(head, lines, empty):
    return ["", head, ""] + ([f"- {printable(x)}" for x in lines] if lines else [f"_{empty}_"])


def group_md(g):
    out = ["", f"## {printable(g['title'])}"]
    out += decision_md(g)
    out += bullets("**Regions** (per n, consecutive block sizes with one winner)", [r["text"] for r in g["regions"]],
                   "none")
    out += bullets("**Thresholds** (sm variant vs DMA variant: beats = lower p50, intervals apart)",
                   [t["text"] for t in g["thresholds"]], "no sm and DMA variants measured together")
    out += versus_md(g)
    out += cost_md(g) + fits_md(g)
    breaks = [break_text(f) for f in g["fits"] if f["break"]]
    out += bullets("**Cliffs**", [c["text"] for c in g["cliffs"]] + breaks, "none found")
    out += bullets("**Knees** (per-descriptor bound)", [k["text"] for k in g["knees"]], "fewer than 2 block sizes")
    return out + [f"_{printable(n)}_" for n in g["notes"]]


def notes_of(notes, timing):
    out = []
    if notes["other_timing"]:
        other = "pipelined" if timing == "oneshot" else "oneshot"
        out.append(f"{notes['other_timing']} block record(s) at timing {other} not used (--timing {other}).")
    if notes["not_counted"]:
        out.append(f"{notes['not_counted']} block record(s) not ok or not validated: not used.")
    if notes["replaced"]:
        out.append(f"{notes['replaced']} block record(s) measured a cell an earlier one did (same mechanism, block "
                   "size and count); the later one is used.")
    return out


def markdown(report):
    out = [f"# Crossover maps: who should move small blocks ({report['timing']})", ""]
    out += [printable(f"- `{s['path']}`: {s['caption']}" + (" (levels file: between-process intervals)"
                                                          if s["levels"] else "")) for s in report["sources"]]
    out += ["", f"_--knee {report['knee']:g}, --cliff {report['cliff']:g}_"]
    out += [f"_{printable(n)}_" for n in report["notes"]]
    if not report["groups"]:
        out += ["", f"No block-layout records (layout.kind \"blocks\") ok and validated at timing {report['timing']} "
                    "in these files."]
    for g in report["groups"]:
        out += group_md(g)
    return "\n".join(out) + "\n"


# ---- heat maps ------------------------------------------------------------------------------------

def pyplot():
    """matplotlib.pyplot with the Agg backend; ResultsError (exit 2) where matplotlib is missing."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        from matplotlib.lines import Line2D
        from matplotlib.patches import Patch, Rectangle
    except ImportError as e:
        raise MissingExtra("plot", missing_module(e, "plot") or "matplotlib") from None
    return plt, Line2D, Patch, Rectangle


def draw_cells(ax, g, colours, Rectangle):
    xs, ys = g["block_sizes"], g["blocks_per_op"]
    for row in g["cells"]:
        x, y = xs.index(row["block_bytes"]), ys.index(row["blocks_per_op"])
        face = "#d9d9d9" if row["tie"] else colours[row["winner"]]
        ax.add_patch(Rectangle((x - 0.5, y - 0.5), 1, 1, facecolor=face, edgecolor="white",
                               hatch="//" if row["tie"] else None))
        text = "tie" if row["tie"] else ratio_text(row["margin"]) if row["runner_up"] else "only"
        ax.text(x, y, text, ha="center", va="center", fontsize=8)
    for c in g["cliffs"]:
        x, y = xs.index(c["to_bytes"]) - 0.5, ys.index(c["blocks_per_op"])
        ax.plot([x, x], [y - 0.5, y + 0.5], color="red", linewidth=3)
    for f in g["fits"]:
        if f["break"] and f["break"]["break_after_bytes"] is not None:
            ax.axvline(xs.index(f["break"]["next_bytes"]) - 0.5, color="black", linestyle="--", linewidth=1)


def heat_map(tools, g, colours, path):
    plt, Line2D, Patch, Rectangle = tools
    xs, ys = g["block_sizes"], g["blocks_per_op"]
    fig, ax = plt.subplots(figsize=(max(6.0, 0.6 * len(xs) + 3), max(3.0, 0.45 * len(ys) + 2)))
    draw_cells(ax, g, colours, Rectangle)
    grid_axes(ax, xs, ys, g["title"])
    winners = sorted({r["winner"] for r in g["cells"] if not r["tie"]})
    handles = [Patch(facecolor=colours[m], label=m) for m in winners]
    handles.append(Patch(facecolor="#d9d9d9", hatch="//", label="tie"))
    cliffs = sorted({c["mechanism"] for c in g["cliffs"]})
    if cliffs:
        handles.append(Line2D([], [], color="red", linewidth=3, label=f"cliff: {', '.join(cliffs)}"))
    breaks = [f["mechanism"] for f in g["fits"] if f["break"] and f["break"]["break_after_bytes"] is not None]
    if breaks:
        handles.append(Line2D([], [], color="black", linestyle="--", label=f"model break: {', '.join(breaks)}"))
    ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.01, 1), fontsize=8,
              title="winner (text: runner-up / winner)", title_fontsize=8)
    save_png(plt, fig, path)


def grid_axes(ax, xs, ys, text):
    """Categorical axes: block sizes `xs` across, block counts `ys` up."""
    ax.set_xlim(-0.5, len(xs) - 0.5)
    ax.set_ylim(-0.5, len(ys) - 0.5)
    ax.set_xticks(range(len(xs)))
    ax.set_xticklabels([fmt_size(b, compact=True) for b in xs], rotation=90 if len(xs) > 12 else 0, fontsize=8)
    ax.set_yticks(range(len(ys)))
    ax.set_yticklabels([str(n) for n in ys], fontsize=8)
    ax.set_xlabel("block size")
    ax.set_ylabel("blocks per operation (n)")
    ax.set_title(text, fontsize=9)


def save_png(plt, fig, path):
    from ..plot import png_bytes  # every text in it clipped (text.clipped)
    image = png_bytes(fig, 110, bbox_inches="tight")
    plt.close(fig)
    write_file(path, image)


def sig2(x):
    """`x` > 0 to 2 significant digits without an exponent ('2.3', '0.45', '12', '150'); '–' for None."""
    if x is None or not 0 < x < math.inf:
        return "–"
    x = float(f"{x:.2g}")
    return f"{x:.{max(1 - math.floor(math.log10(x)), 0)}f}"


def versus_cells(ax, cells, xs, ys, Rectangle):
    """The pair's cells: colour log2(B / A) on RdBu clipped at +-VERSUS_CLIP, text the ratio, ties hatched."""
    import matplotlib
    from matplotlib.colors import Normalize
    cmap, norm = matplotlib.colormaps["RdBu"], Normalize(-VERSUS_CLIP, VERSUS_CLIP)
    for c in cells:
        x, y = xs.index(c["block_bytes"]), ys.index(c["blocks_per_op"])
        level = None if c["ratio"] is None or c["ratio"] <= 0 else math.log2(c["ratio"])
        face = MISSING if level is None else cmap(norm(max(-VERSUS_CLIP, min(VERSUS_CLIP, level))))
        ax.add_patch(Rectangle((x - 0.5, y - 0.5), 1, 1, facecolor=face, edgecolor="white"))
        if c["tie"]:
            ax.add_patch(Rectangle((x - 0.5, y - 0.5), 1, 1, fill=False, hatch="//", edgecolor="#404040",
                                   linewidth=0))
        dark = level is not None and abs(level) > 0.7 * VERSUS_CLIP
        box = {"facecolor": face, "edgecolor": "none", "pad": 1} if c["tie"] else None
        ax.text(x, y, sig2(c["ratio"]), ha="center", va="center", fontsize=8, color="white" if dark else "black",
                bbox=box)
    return cmap, norm


def versus_cliffs(ax, g, v, xs, ys, Line2D):
    """The cliffs of A and of B at the pair's block counts, lines at the left edge of the step's larger size (A's a
    little left of it, B's a little right); the legend handles of those drawn."""
    handles = []
    for m, colour, shift, style in ((v["a"], "#1b9e77", -0.05, "-"), (v["b"], "#e7298a", 0.05, "--")):
        drawn = False
        for c in g["cliffs"]:
            if c["mechanism"] == m and c["to_bytes"] in xs and c["blocks_per_op"] in ys:
                x, y = xs.index(c["to_bytes"]) - 0.5 + shift, ys.index(c["blocks_per_op"])
                ax.plot([x, x], [y - 0.5, y + 0.5], color=colour, linestyle=style, linewidth=3)
                drawn = True
        if drawn:
            handles.append(Line2D([], [], color=colour, linestyle=style, linewidth=3, label=f"cliff of {m}"))
    return handles


def versus_map(tools, g, v, path):
    """The head-to-head PNG of one pair in one group (docstring, 6)."""
    plt, Line2D, Patch, Rectangle = tools
    from matplotlib.cm import ScalarMappable
    a, b = v["a"], v["b"]
    common = [c for c in v["cells"] if c["tie"] is not None]
    xs, ys = sorted({c["block_bytes"] for c in common}), sorted({c["blocks_per_op"] for c in common})
    fig, ax = plt.subplots(figsize=(max(6.0, 0.6 * len(xs) + 4), max(3.0, 0.45 * len(ys) + 2)))
    ax.set_facecolor(MISSING)
    cmap, norm = versus_cells(ax, common, xs, ys, Rectangle)
    handles = versus_cliffs(ax, g, v, xs, ys, Line2D)
    grid_axes(ax, xs, ys, f"{a} vs {b} (text: {b} p50 / {a} p50)\n{g['title']}")
    ticks = list(range(-VERSUS_CLIP, VERSUS_CLIP + 1))
    bar = fig.colorbar(ScalarMappable(norm=norm, cmap=cmap), ax=ax, ticks=ticks, pad=0.02)
    bar.set_ticklabels([("≤" if t == ticks[0] else "≥" if t == ticks[-1] else "") +
                        (f"1/{2 ** -t}" if t < 0 else str(2 ** t)) for t in ticks])
    bar.ax.tick_params(labelsize=8)
    bar.set_label(f"{b} p50 / {a} p50 (>1: {a} faster)", fontsize=8)
    handles.append(Patch(facecolor="white", edgecolor="#404040", hatch="//", label="tie (intervals overlap)"))
    handles.append(Patch(facecolor=MISSING, label="not measured by both"))
    ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(0, -0.15 if len(xs) <= 12 else -0.3), fontsize=8,
              ncol=len(handles))
    save_png(plt, fig, path)


def slug(text):
    """`text` kept to letters, digits and '-' (a file name's part)."""
    return re.sub(r"[^A-Za-z0-9]+", "-", text).strip("-") or "x"


def plot_versus(tools, g, directory, stem):
    for v in g["versus"]:
        if v["common_cells"] < 2:
            v["note"] = (f"No {v['a']} vs {v['b']} map: {v['common_cells']} cell(s) measured by both; "
                         "a map needs >= 2.")
            continue
        path = os.path.join(directory, f"{stem}-{slug(v['a'])}-vs-{slug(v['b'])}.png")
        versus_map(tools, g, v, path)
        v["figure"] = path


def plot_all(report, directory):
    tools = pyplot()
    make_dir(directory, "--plots")
    everyone = sorted({m for g in report["groups"] for m in g["mechanisms"]})
    colours = {m: COLOURS[i % len(COLOURS)] for i, m in enumerate(everyone)}
    for i, g in enumerate(report["groups"]):
        stem = f"crossover-{i + 1:02d}-{slug(g['pattern'] + '-' + g['host_kind'])}"
        plot_versus(tools, g, directory, stem)
        if len(g["mechanisms"]) < 2:
            g["notes"].append(f"No heat map: {len(g['mechanisms'])} mechanism ({', '.join(g['mechanisms'])}); "
                              "a map needs >= 2.")
            continue
        g["figure"] = os.path.join(directory, stem + ".png")
        heat_map(tools, g, colours, g["figure"])


# ---- output ---------------------------------------------------------------------------------------

def source_of(path, doc):
    revision = doc["context"].get("dmabench", {}).get("git_revision")
    return {"path": path, "git_revision": revision if isinstance(revision, str) else None,
            "caption": versions_caption(doc), "levels": isinstance(doc["context"].get("levels"), dict) or
            any(isinstance(r, dict) and isinstance(r.get("levels"), dict) for r in doc["results"])}


def report_of(paths, timing, knee, cliff, versus=()):
    groups, docs, notes = collect(paths, timing)
    known = {m for group in groups.values() for _, _, m in group["cells"]}
    pairs = [split_pair(text, known) for text in versus]
    return {"schema": REPORT_SCHEMA, "timing": timing, "knee": knee, "cliff": cliff,
            "versus": [{"a": a, "b": b} for a, b in pairs],
            "sources": [source_of(p, d) for p, d in docs], "notes": notes_of(notes, timing),
            "groups": [analyse(k, groups[k], knee, cliff, pairs) for k in sorted(groups, key=group_order)]}


def positive(text):
    """A --knee or --cliff value: a finite number > 0."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"expected a number > 0, got {quote(text, 40)}")
    return value


def main(argv=None, tool=TOOL):
    return run_tool(tool, run, argv)


def run(argv=None):
    ap = arg_parser(__doc__)
    ap.add_argument("results", nargs="+")
    add_emit_arguments(ap)
    ap.add_argument("--plots", help="write one heat map (PNG) per group into this directory (needs matplotlib)")
    ap.add_argument("--knee", type=positive, default=0.10, help="knee threshold over the floor (default 0.10)")
    ap.add_argument("--cliff", type=positive, default=0.25, help="cliff threshold (fraction, default 0.25)")
    ap.add_argument("--timing", default="oneshot", choices=["oneshot", "pipelined"])
    ap.add_argument("--versus", action="append", default=[], metavar="A,B",
                    help='head to head of two variants, e.g. "sm sms=12,ce-batch" (repeatable)')
    a = ap.parse_args(argv)
    if a.plots:
        pyplot()  # before the work: a missing matplotlib is said at once
    report = report_of(a.results, a.timing, a.knee, a.cliff, a.versus)
    if a.plots:
        plot_all(report, a.plots)
    emit(markdown(report), report, a.markdown, a.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
