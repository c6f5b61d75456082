"""Reading levels files (results/SCHEMA.md, "Levels across fresh processes"; standard library only): the per-process
p50s of a record, each process's share of samples on a shared core, and the ranks of the between-process interval.

The merge that writes a levels file is the program's alone (`dmabench --processes N`, `dmabench --merge`:
bench/levels/levels.cpp); scripts/merge_runs.py and ab run it (dmabench.program). What is here only reads."""
import math
from fractions import Fraction


def number(value):
    """Whether `value` is a finite JSON number (not a bool)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    try:
        return math.isfinite(value)
    except OverflowError:
        return False


def median_ranks(m):
    """(j, k, coverage) of the between-process interval of m >= 2 p50s: the sorted p50s of ranks j and k = m + 1 - j
    (1-based) hold the median with probability coverage = 1 - 2 P(B <= j - 1), B ~ binomial(m, 1/2). m >= 6: j is the
    largest rank for which that is at least 0.95 (exact); below, [min, max]: 1 - 2/2^m. The program's rule
    (bench/levels/levels.cpp), for the reports that say what a levels file's interval covers."""
    if m < 6:
        return 1, m, 1 - 2 / 2 ** m
    j, below, total = 0, 0, 2 ** m  # below = 2^m P(B <= j - 1)
    while 40 * (below + math.comb(m, j)) <= total:  # P(B <= j) <= 0.025
        below += math.comb(m, j)
        j += 1
    return j, m + 1 - j, float(1 - Fraction(2 * below, total))


def process_draws(record):
    """The per-process p50s of a levels file's ok record (`levels.p50_us` without the nulls of the processes that did
    not have the case ok, and without anything that is not a positive number); [] for a one-process record."""
    lv = record.get("levels") if isinstance(record, dict) and record.get("status") == "ok" else None
    values = lv.get("p50_us") if isinstance(lv, dict) else None
    return [x for x in values if number(x) and x > 0] if isinstance(values, list) else []


def shared_fraction(record):
    """A record's core_share.shared over probed (its samples taken on a shared core), or None without one or where
    the two cannot be counts of it (shared below 0 or above probed: compare printed -0.67 and inf as facts)."""
    c = record.get("core_share")
    if not isinstance(c, dict) or not number(c.get("probed")) or c["probed"] <= 0 or not number(c.get("shared")):
        return None
    if not 0 <= c["shared"] <= c["probed"]:
        return None
    return c["shared"] / c["probed"]
