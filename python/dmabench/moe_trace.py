"""A synthetic mixture-of-experts routing trace for the alltoallv pattern: token counts per (source, destination)
rank pair, one matrix per step (standard library only).

usage: moe_trace.py [--out FILE] [--ranks 8] [--experts 256] [--topk 8] [--tokens-per-rank 256] [--steps 4]
                    [--zipf 1.2] [--drift 0.1] [--seed 7]

The trace is synthetic, not taken from a real model; the defaults write the committed
configs/traces/moe-synthetic-8x256.json (8 ranks, 256 experts), byte for byte. The model:

- Placement: experts lie in contiguous runs, expert e on rank e // (experts / ranks); --experts must be a multiple
  of --ranks.
- Popularity: a seeded permutation of the experts gives their popularity order; the expert of popularity rank k
  (0 = the most popular) has weight 1 / (k + 1)^s, s = --zipf (0: every expert equally likely).
- Drift: before each step after the first, round(drift x experts) random adjacent pairs of the popularity order are
  swapped, so each step's routing differs a little from the one before (--drift 0: every step has the same
  popularity, and differs only by its draws).
- Routing: every token of every source rank picks --topk distinct experts by weighted sampling without replacement
  (a draw from the whole distribution, redrawn when it hits an expert already picked), then goes once to each
  distinct rank that hosts one of its experts (the per-rank deduplication of DeepEP's dispatch).
- steps[k][s][d]: the tokens rank s sends to rank d in the dispatch of step k, in [0, tokens-per-rank]; the diagonal
  counts tokens routed to the rank's own experts. Each row sums to between tokens-per-rank and
  tokens-per-rank x min(topk, ranks).

Determinism: every random number is `random.Random(seed).random()`, whose sequence for an integer seed Python keeps
across versions; the permutation (Fisher-Yates) and the weighted draw (bisect on cumulative weights) are written
here, never random.shuffle / choices / sample, whose algorithms may change. The file is written in a fixed layout
(one matrix row per line), so the same arguments give the same bytes.

Output: JSON {"format": "dmabench-moe-trace/1", "synthetic": true, "description", "generator" (the script and
every parameter), "ranks", "tokens_per_rank", "steps": [R x R matrix per step]}, the form dmabench's alltoallv
splits "file" read (patterns/routing.hpp, trace_steps). Written whole to --out (default: the committed file;
other parameters need an --out of their own). One summary line per step goes to stderr: tokens moved (and of them
between different ranks), and the tokens per destination rank, max / mean.

Exit codes: 0 written; 2 bad input: a bad argument (--experts not a multiple of --ranks, --topk above --experts, a
count that is not positive, --drift outside [0, 1]) or an output that cannot be written, with one line
`moe_trace.py: error: ...` on stderr (never a traceback); 3 internal error; 130 interrupted (Ctrl-C).
"""
import bisect
import json
import math
import os
import random
import sys

from .files import checkout_root, make_dir, write_file
from .text import ResultsError
from .tool import arg_parser, run_tool

TOOL = "moe_trace.py"
FORMAT = "dmabench-moe-trace/1"
ROOT = checkout_root()
COMMITTED = os.path.join("configs", "traces", "moe-synthetic-8x256.json")
DEFAULTS = {"ranks": 8, "experts": 256, "topk": 8, "tokens_per_rank": 256, "steps": 4, "zipf": 1.2, "drift": 0.1,
            "seed": 7}
MAX_COUNT = 1 << 20  # ranks, experts, tokens per rank, steps: a generator of a file, not of a cluster's day
MAX_DRAWS_PER_PICK = 64  # redraws before the first weighted expert not yet picked is taken (a distribution so skewed
#                          that every draw hits the picked ones; as patterns/routing.cpp does)


# ---- the model ----------------------------------------------------------------------------------------------------

def below(rng, n):
    """An integer in [0, n) from one rng.random()."""
    return min(int(rng.random() * n), n - 1)


def permutation(n, rng):
    """A seeded permutation of 0..n-1 (Fisher-Yates, from the last position down)."""
    p = list(range(n))
    for i in range(n - 1, 0, -1):
        j = below(rng, i + 1)
        p[i], p[j] = p[j], p[i]
    return p


def drift(order, fraction, rng):
    """Swaps round(fraction x len(order)) random adjacent pairs of the popularity order, in place."""
    if len(order) < 2:
        return
    for _ in range(round(fraction * len(order))):
        k = below(rng, len(order) - 1)
        order[k], order[k + 1] = order[k + 1], order[k]


def cumulative_weights(order, s):
    """Cumulative weights over experts 0..n-1: the expert of popularity rank k weighs 1 / (k + 1)^s."""
    weight = [0.0] * len(order)
    for k, e in enumerate(order):
        weight[e] = (k + 1) ** -s
    cum, total = [], 0.0
    for w in weight:
        total += w
        cum.append(total)
    return cum


def pick(cum, k, rng):
    """`k` distinct experts drawn from cumulative weights `cum`: draws from the whole distribution and redraws a
    duplicate (sampling without replacement, each later pick renormalised over the rest)."""
    chosen = []
    draws = 0
    while len(chosen) < k:
        draws += 1
        if draws <= MAX_DRAWS_PER_PICK * k:
            e = min(bisect.bisect_right(cum, rng.random() * cum[-1]), len(cum) - 1)
        else:  # the first expert with a weight not picked yet (weights below 1e-308 are 0), else the first not picked
            free = [e for e in range(len(cum)) if e not in chosen]
            e = next((e for e in free if cum[e] > (cum[e - 1] if e else 0.0)), free[0])
        if e not in chosen:
            chosen.append(e)
    return chosen


def step_counts(cum, p, rng):
    """One step's R x R matrix of token counts (per-rank dedup), drawing every token of every source in order."""
    per_rank = p["experts"] // p["ranks"]
    counts = [[0] * p["ranks"] for _ in range(p["ranks"])]
    for s in range(p["ranks"]):
        for _ in range(p["tokens_per_rank"]):
            for d in {e // per_rank for e in pick(cum, p["topk"], rng)}:
                counts[s][d] += 1
    return counts


def generate(p):
    """The trace's steps for parameters `p` (DEFAULTS' keys): one random.Random(seed) drawn in a fixed order (the
    permutation, then per step its drift and its tokens, source by source)."""
    rng = random.Random(p["seed"])
    order = permutation(p["experts"], rng)
    steps = []
    for k in range(p["steps"]):
        if k:
            drift(order, p["drift"], rng)
        steps.append(step_counts(cumulative_weights(order, p["zipf"]), p, rng))
    return steps


# ---- the file -----------------------------------------------------------------------------------------------------

def command_args(p):
    return " ".join(f"--{k.replace('_', '-')} {p[k]}" for k in DEFAULTS)


def description(p):
    return (f"Synthetic MoE routing trace, not from a real model: {p['ranks']} ranks, {p['experts']} experts "
            f"({p['experts'] // p['ranks']} per rank, contiguous), top-{p['topk']} routing, {p['tokens_per_rank']} "
            f"tokens per rank, {p['steps']} steps, Zipf popularity s={p['zipf']} over a seeded permutation of the "
            f"experts, drift {p['drift']} (adjacent swaps of the popularity order between steps), each token sent "
            f"once per destination rank (DeepEP's per-rank dedup); generated by scripts/moe_trace.py {command_args(p)}")


def document_text(p, steps):
    """The trace file's text: the header fields one per line, then every matrix row on a line of its own."""
    generator = {"script": "scripts/moe_trace.py", **{k: p[k] for k in
                 ("seed", "ranks", "experts", "topk", "tokens_per_rank", "zipf", "drift", "steps")}}
    head = [("format", FORMAT), ("synthetic", True), ("description", description(p)), ("generator", generator),
            ("ranks", p["ranks"]), ("tokens_per_rank", p["tokens_per_rank"])]
    lines = ["{" + ",\n ".join(f"{json.dumps(k)}: {json.dumps(v)}" for k, v in head) + ",", ' "steps": [']
    matrices = []
    for m in steps:
        rows = [json.dumps(row) for row in m]
        matrices.append("  [" + ",\n   ".join(rows) + "]")
    lines.append(",\n".join(matrices))
    lines.append(" ]}")
    return "\n".join(lines) + "\n"


def summary(k, m):
    """One line about step k: tokens moved (between ranks), tokens per destination max / mean."""
    ranks = len(m)
    moved = sum(map(sum, m))
    peer = moved - sum(m[i][i] for i in range(ranks))
    per_dest = [sum(m[s][d] for s in range(ranks)) for d in range(ranks)]
    mean = moved / ranks
    return (f"step {k}: {moved} tokens moved ({peer} between ranks), per destination rank max {max(per_dest)} / "
            f"mean {mean:.1f} tokens (imbalance {max(per_dest) / mean:.3f})")


# ---- command line -------------------------------------------------------------------------------------------------

def check(p):
    for k in ("ranks", "experts", "topk", "tokens_per_rank", "steps"):
        if not 1 <= p[k] <= MAX_COUNT:
            raise ResultsError(f"--{k.replace('_', '-')} {p[k]}: expected an integer from 1 to {MAX_COUNT}")
    if p["experts"] % p["ranks"]:
        raise ResultsError(f"--experts {p['experts']} is not a multiple of --ranks {p['ranks']}: experts lie in "
                           "contiguous runs, experts / ranks on each rank")
    if p["topk"] > p["experts"]:
        raise ResultsError(f"--topk {p['topk']} is more than --experts {p['experts']}: a token picks distinct experts")
    if not (math.isfinite(p["zipf"]) and 0 <= p["zipf"] <= 100):
        raise ResultsError(f"--zipf {p['zipf']}: expected an exponent from 0 to 100")
    if not (math.isfinite(p["drift"]) and 0 <= p["drift"] <= 1):
        raise ResultsError(f"--drift {p['drift']}: expected a fraction from 0 to 1")
    if p["ranks"] * p["tokens_per_rank"] * p["steps"] * p["topk"] > 1 << 28:
        raise ResultsError("--ranks x --tokens-per-rank x --steps x --topk: more than 2^28 draws; make the trace smaller")


def main(argv=None, tool=TOOL):
    return run_tool(tool, run, argv)


def run(argv=None):
    ap = arg_parser(__doc__)
    ap.add_argument("--out", help=f"the trace file to write (default: {COMMITTED}, for the default parameters only)")
    for k, v in DEFAULTS.items():
        ap.add_argument(f"--{k.replace('_', '-')}", type=type(v), default=v, dest=k)
    a = ap.parse_args(argv)
    p = {k: getattr(a, k) for k in DEFAULTS}
    check(p)
    out = a.out
    if out is None:
        if p != DEFAULTS:
            raise ResultsError(f"--out: missing; without it the trace goes to the committed {COMMITTED}, which only "
                               "the default parameters write")
        out = os.path.join(ROOT, COMMITTED)
        make_dir(os.path.dirname(out), "the directory of")
    steps = generate(p)
    write_file(out, document_text(p, steps))
    for k, m in enumerate(steps):
        print(summary(k, m), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
