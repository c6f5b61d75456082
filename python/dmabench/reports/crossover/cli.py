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
import sys

from ...files import add_emit_arguments, emit
from ...keys import versions_caption
from ...text import quote
from ...tool import arg_parser, run_tool
from .read import collect
from .decisions import analyse, group_order, split_pair
from .md import markdown, notes_of
from .plots import plot_all, pyplot

TOOL = "crossover.py"
REPORT_SCHEMA = "dmabench-crossover/1"


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
