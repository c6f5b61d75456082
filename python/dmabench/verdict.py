"""The verdict rule of `compare`, `history gate` and `ab`: per case `same`, `slower`, `faster` or `ambiguous`, with a
false-alarm rate that is stated, simulated in CI and measured on machines (docs/methodology.md, "How often a verdict
is wrong"; results/<machine>/gate/).

A case's draws are the p50s of the fresh processes that measured it (a levels file's `levels.p50_us`; a one-process
record is one draw; a history's earlier runs contribute theirs). A process is one draw of the machine's state: on a
cloud VM a process lands in a fast or a slow mode (a shared physical core under the submitting vCPU, a host thread's
placement), so the draws are bimodal and a test on means or a [min, max] overlap is wrong as often as the modes
differ. The rule:

1. change   the Hodges-Lehmann estimate of the ratio NEW/BASE, minus 1: the median over every pair (a NEW draw, a
            BASE draw) of their ratio (on a log scale). It is the shift the rank-sum test measures, and it holds
            still where the ratio of the two medians (compare's p50_ratio) jumps: with draws split between two
            modes the median of 6 falls in either, and two medians of one machine differed by 30% in A/A runs on the
            2-vCPU VM where this estimate moved 1-3%;
2. support  the two-sided Mann-Whitney (Wilcoxon rank-sum) p-value of BASE's draws against NEW's: exact (ties at
            mid-ranks) where one side has at most 12 draws or both at most 40 in all, else the normal approximation
            with the tie correction. Rank-based: it assumes only that, without a change, every draw of either side is
            as likely to be the largest (the processes are exchangeable: fresh processes of one machine, the two
            sides interleaved in time, each process's cases in its own random order: what `ab` runs);
3. family   Benjamini-Hochberg over every case compared at once, at `alpha` (default 0.02): where no case changed,
            the chance that any case is called slower or faster is at most alpha (BH controls the family-wise rate
            under the complete null); where some cases did change, the share of wrong calls among the calls is at
            most alpha on average (the false discovery rate: an unchanged case beside many changed ones can be
            called). The cases of one process move together, a positive dependence under which BH holds;
4. verdict  `failed` (lost): ok before, failed or skipped now (`history gate`: or missing from a run where the
            previous run of its config had it ok); `slower` / `faster`: supported (BH) and the change beyond the
            case's class minimum (launch-bound 5%, bandwidth-bound 2%: MIN_CHANGE); `ambiguous`: the change beyond
            the minimum without support (more processes would decide: `ab` re-runs such cases); `same`: a change
            within the minimum.

With one draw per side no p-value is below 1: a change beyond the minimum between two one-process files is
`ambiguous`, never `slower` (one process cannot tell a change from the process's mode). The smallest p-value of
m + n draws is 2 / C(m + n, m): with BH over K cases a lone changed case needs 2 / C(m + n, m) <= alpha / K.
"""
import functools
import math
from fractions import Fraction

ALPHA = 0.02
MIN_CHANGE = {"launch-bound": 0.05, "bandwidth-bound": 0.02}
VERDICTS = ("slower", "faster", "ambiguous", "same")
EXACT_SMALL_SIDE = 12  # exact p-values where one side has at most this many draws ...
EXACT_TOTAL = 40  # ... or both sides together at most this many


def ranks(values):
    """Mid-ranks (1-based, ties averaged) of `values`, in their order, doubled so that they are integers."""
    order = sorted(range(len(values)), key=lambda i: values[i])
    out = [0] * len(values)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        for k in range(i, j + 1):
            out[order[k]] = i + j + 2  # 2 x the mean of the 1-based ranks i+1 .. j+1
        i = j + 1
    return out


@functools.lru_cache(maxsize=512)
def _distribution(scores, m):
    """{sum: subsets} of the sums of m of `scores` (a sorted tuple of doubled mid-ranks) drawn without replacement,
    and the number of subsets: counted subset by subset sum (a dynamic program over the scores). Cached: without
    ties the scores are 2, 4, ..., 2N for every comparison of N draws."""
    counts = [dict() for _ in range(m + 1)]  # counts[k][s]: subsets of k of the scores seen so far summing to s
    counts[0][0] = 1
    for s in scores:
        for k in range(m, 0, -1):
            here = counts[k]
            for total, n in counts[k - 1].items():
                here[total + s] = here.get(total + s, 0) + n
    return counts[m], math.comb(len(scores), m)


def _exact_tails(scores, m, w):
    """(P(W <= w), P(W >= w)) for W the sum of m of `scores`, every subset equally likely."""
    dist, total = _distribution(tuple(sorted(scores)), m)
    low = sum(n for s, n in dist.items() if s <= w)
    high = sum(n for s, n in dist.items() if s >= w)
    return float(Fraction(low, total)), float(Fraction(high, total))


def rank_sum_test(base, new):
    """(p, direction) of the two-sided Mann-Whitney test of `new`'s draws against `base`'s: p in (0, 1]; direction
    +1 where NEW's draws rank above BASE's (slower), -1 below, 0 level. p is 1 where either side is empty."""
    m, n = len(new), len(base)
    if not m or not n:
        return 1.0, 0
    r = ranks(list(new) + list(base))
    w = sum(r[:m])  # doubled rank sum of NEW
    mean2 = m * (m + n + 1)  # doubled mean of the rank sum
    direction = (w > mean2) - (w < mean2)
    if min(m, n) <= EXACT_SMALL_SIDE or m + n <= EXACT_TOTAL:
        low, high = _exact_tails(r, m, w)
        return min(1.0, 2 * min(low, high)), direction
    # the normal approximation with the tie correction and a continuity correction (on the doubled scale: 1)
    big = m + n
    ties = {}
    for x in r:
        ties[x] = ties.get(x, 0) + 1
    var = m * n / 12 * ((big + 1) - sum(t ** 3 - t for t in ties.values()) / (big * (big - 1)))
    if var <= 0:
        return 1.0, 0
    z = max(0.0, abs(w - mean2) - 1) / 2 / math.sqrt(var)
    return min(1.0, math.erfc(z / math.sqrt(2))), direction


def smallest_p(m, n):
    """The smallest two-sided p-value that m and n distinct draws can give: 2 / C(m + n, m) (1 where a side is
    empty)."""
    return 1.0 if not m or not n else min(1.0, 2 / math.comb(m + n, m))


def benjamini_hochberg(pvalues, alpha):
    """Which of `pvalues` Benjamini-Hochberg rejects at `alpha` (a list of bools in their order)."""
    order = sorted(range(len(pvalues)), key=lambda i: pvalues[i])
    k = len(pvalues)
    last = 0
    for rank, i in enumerate(order, 1):
        if pvalues[i] <= alpha * rank / k:
            last = rank
    out = [False] * k
    for i in order[:last]:
        out[i] = True
    return out


def median(values):
    v = sorted(values)
    a, b = v[(len(v) - 1) // 2], v[len(v) // 2]
    return a if a == b else a + (b - a) / 2


def shift(base, new):
    """The Hodges-Lehmann estimate of NEW / BASE - 1: exp of the median of log(n / b) over every pair."""
    return math.exp(median([math.log(n / b) for n in new for b in base])) - 1


def judge_all(cases, alpha=ALPHA, min_change=None):
    """Verdicts for `cases`, one family: each an object with `base` and `new` (lists of draws: p50s, µs, each > 0)
    and `cls` (launch-bound or bandwidth-bound). Returns per case {verdict, change, p, supported, min_change,
    base_draws, new_draws} in the order given."""
    mins = {**MIN_CHANGE, **(min_change or {})}
    tests = [rank_sum_test(c["base"], c["new"]) for c in cases]
    supported = benjamini_hochberg([p for p, _ in tests], alpha)
    out = []
    for c, (p, direction), sup in zip(cases, tests, supported):
        change = shift(c["base"], c["new"])
        least = mins[c["cls"]]
        if abs(change) <= least:
            verdict = "same"
        elif sup and direction == (1 if change > 0 else -1):
            verdict = "slower" if change > 0 else "faster"
        else:
            verdict = "ambiguous"
        out.append({"verdict": verdict, "change": change, "p": p, "supported": sup, "min_change": least,
                    "base_draws": len(c["base"]), "new_draws": len(c["new"])})
    return out


def lost(was_ok, now):
    """The verdict of a case that is not ok now (`now`: its status, failed or skipped, or None where the run lacks
    it): `failed` where it was ok before (compare's BASE, an earlier run of `history gate`), else None (not judged).
    A skip counts as a loss: a broken NCCL, peer path or driver makes its cases skip, and a gate that dropped them
    would pass the run that lost them (issue 52)."""
    return "failed" if was_ok and now != "ok" else None


def parse_min_change(specs):
    """{class: fraction} from `--min-change CLASS=F` arguments (launch=, bandwidth= accepted as short names);
    ValueError naming what is accepted."""
    names = {"launch": "launch-bound", "launch-bound": "launch-bound", "bandwidth": "bandwidth-bound",
             "bandwidth-bound": "bandwidth-bound"}
    out = {}
    for spec in specs or ():
        name, eq, value = spec.partition("=")
        if not eq or name not in names:
            raise ValueError(f"--min-change {spec!r}: expected launch=F or bandwidth=F (a fraction such as 0.05)")
        try:
            f = float(value)
        except ValueError:
            f = float("nan")
        if not 0 <= f < 10:
            raise ValueError(f"--min-change {spec!r}: {value!r} is not a fraction from 0 to 10, such as 0.05")
        out[names[name]] = f
    return out


def rule_line(alpha, mins):
    """One line naming the rule and its parameters, for reports."""
    return (f"rank-sum test of the per-process p50s, Benjamini-Hochberg over the compared cases at {alpha:g}; slower/"
            f"faster beyond {100 * mins['launch-bound']:g}% (launch-bound) / {100 * mins['bandwidth-bound']:g}% "
            "(bandwidth-bound), else ambiguous; same within those")
