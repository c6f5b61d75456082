"""The gate's rule and the history it reads: the rule's parameters (Rule, its command-line arguments and words), a
run's draws, the band that describes a case's history, the verdicts of a run's cases as one family (by
dmabench.verdict, whose rule this is), and the earlier runs of each case, read from the database."""
import json
import sqlite3
import statistics
from collections import namedtuple

from .. import verdict
from ..keys import case_class
from ..text import ResultsError
from .rows import number

Rule = namedtuple("Rule", "runs min_runs sigmas tolerance noisy alpha min_change")
Band = namedtuple("Band", "median low high spread runs draws")  # µs, µs, µs, s / median, runs and draws it came from
DEFAULT_RULE = Rule(runs=10, min_runs=3, sigmas=3.0, tolerance=0.05, noisy=0.05, alpha=verdict.ALPHA,
                    min_change=verdict.MIN_CHANGE)


def add_rule_arguments(ap):
    """The gate's parameters, on every command that draws its band (history.py trend and gate, plot.py trend)."""
    d = DEFAULT_RULE
    ap.add_argument("--runs", type=int, default=d.runs, help=f"earlier runs a band comes from (default {d.runs})")
    ap.add_argument("--min-runs", type=int, default=d.min_runs,
                    help=f"earlier runs needed, else NEW (default {d.min_runs})")
    ap.add_argument("--sigmas", type=float, default=d.sigmas,
                    help=f"band half-width in robust sigmas (default {d.sigmas:g})")
    ap.add_argument("--tolerance", type=float, default=d.tolerance,
                    help=f"narrowest band half-width, a fraction of the median (default {d.tolerance:g})")
    ap.add_argument("--noisy", type=float, default=d.noisy,
                    help=f"spread over median above which trend calls a band noisy (default {d.noisy:g})")
    ap.add_argument("--alpha", type=float, default=d.alpha,
                    help=f"gate: family-wise false-alarm rate over a run's cases (default {d.alpha:g})")
    ap.add_argument("--min-change", action="append", metavar="CLASS=F",
                    help="gate: the least change that counts for a class, launch=F or bandwidth=F (defaults "
                         + ", ".join(f"{c} {f:g}" for c, f in d.min_change.items()) + ")")


def rule_of(a):
    if not 0 < a.alpha < 1:
        raise ResultsError(f"--alpha {a.alpha}: expected a probability between 0 and 1, such as 0.02")
    try:
        mins = {**verdict.MIN_CHANGE, **verdict.parse_min_change(a.min_change)}
    except ValueError as e:
        raise ResultsError(str(e)) from None
    rule = Rule(a.runs, a.min_runs, a.sigmas, a.tolerance, a.noisy, a.alpha, mins)
    if not 1 <= rule.min_runs <= rule.runs:
        raise ResultsError(f"--min-runs {rule.min_runs} and --runs {rule.runs}: expected 1 <= --min-runs <= --runs")
    for name in ("sigmas", "tolerance", "noisy"):
        if not 0 <= getattr(rule, name) < 1000:
            raise ResultsError(f"--{name} {getattr(rule, name)}: expected a number from 0 to 1000")
    return rule


def rule_text(rule):
    return (f"the draws of the last {rule.runs} earlier runs (a run's per-process p50s, else its p50; at least "
            f"{rule.min_runs} draws) against the run's: {verdict.rule_line(rule.alpha, rule.min_change)}")


def band_text(rule):
    return (f"median ± max({rule.sigmas:g} × 1.4826 × MAD, {rule.tolerance * 100:g}%) of the draws of the last "
            f"{rule.runs} earlier runs (a run's per-process p50s, else its p50; at least {rule.min_runs} draws); noisy "
            f"above a spread of {rule.noisy * 100:g}%")


def draws(row):
    """The draws of the machine's state a run's (merged) ok row holds: its per-process p50s (a levels file), else its
    p50."""
    try:
        found = [x for x in map(number, json.loads(row["process_p50s"])) if x is not None]
    except (TypeError, ValueError):  # NULL: a one-process record
        found = []
    return found or [row["p50_us"]]


def band(runs, rule):
    """The band of a case from the draws of its earlier runs (one list per run, oldest first; the module's docstring),
    or None (NEW)."""
    last = runs[-rule.runs:]
    values = [x for run in last for x in run]
    if len(values) < rule.min_runs:
        return None
    m = statistics.median(values)
    s = 1.4826 * statistics.median([abs(x - m) for x in values])
    w = max(rule.sigmas * s, rule.tolerance * m)
    return Band(m, max(0.0, m - w), m + w, s / m, len(last), len(values))


def sources(runs, n):
    """'4 runs', or '10 draws from 2 runs' where runs held more than one draw each."""
    plural = f"{runs} run{'' if runs == 1 else 's'}"
    return plural if n == runs else f"{n} draws from {plural}"


def history_draws(earlier, rule):
    """The draws of a case's last --runs earlier runs (each run's per-process p50s, else its p50), oldest first."""
    return [x for p in earlier[-rule.runs:] for x in draws(p)]


def judge_family(cases, rule):
    """The verdicts of a run's cases, one family (dmabench.verdict): `cases` [(case row, earlier rows)]. A case not ok
    (failed or skipped) is `failed` where its history had it ok (dmabench.verdict.lost; else not judged: None);
    fewer than --min-runs draws in its history is `new`; the rest are judged together: the rank-sum test of the
    history's draws against the run's, Benjamini-Hochberg over the run's cases at --alpha, slower / faster beyond the
    class minimum, else ambiguous or same.
    Returns [(verdict or None, judged by the rule: its dmabench.verdict entry or None)]."""
    out, family = [], []
    for case, earlier in cases:
        if case["status"] != "ok":
            out.append((verdict.lost(bool(earlier), case["status"]), None))
        elif len(history_draws(earlier, rule)) < rule.min_runs:
            out.append(("new", None))
        else:
            out.append(None)
            family.append({"base": history_draws(earlier, rule), "new": draws(case),
                           "cls": case_class(json.loads(case["record"]))})
    judged = iter(verdict.judge_all(family, rule.alpha, rule.min_change))
    result = []
    for x in out:
        if x is None:
            v = next(judged)
            x = (v["verdict"], v)
        result.append(x)
    return result


def merge(rows):
    """One row for a case measured more than once in a run: the medians of its figures (ok rows only, where any)."""
    ok = [r for r in rows if r["status"] == "ok"] or rows
    if len(ok) == 1:
        return dict(ok[0])
    out = dict(ok[0])
    for k in ("p50_us", "p50_low_us", "p50_high_us", "busbw_GBps", "busbw_low_GBps", "busbw_high_GBps"):
        values = [r[k] for r in ok]
        out[k] = statistics.median(values) if None not in values else None
    known = [r["noisy"] for r in ok if r["noisy"] is not None]
    out["noisy"] = any(known) if known else None
    if any(r["process_p50s"] for r in ok):  # levels records: every draw of every one
        out["process_p50s"] = json.dumps([x for r in ok for x in draws(r)])
    return out


HISTORY_QUERY = ("SELECT runs.machine, runs.run_id, runs.started_at, runs.revision, runs.source, rec.name, rec.case_key, "
                 "rec.status, rec.p50_us, rec.p50_low_us, rec.p50_high_us, rec.noisy, rec.busbw_GBps, rec.busbw_low_GBps, "
                 "rec.busbw_high_GBps, rec.process_p50s, v.verdict FROM records rec JOIN runs ON runs.run_id = rec.run_id "
                 "LEFT JOIN verdicts v ON v.run_id = rec.run_id AND v.case_key = rec.case_key "
                 "WHERE rec.status = 'ok' AND (? IS NULL OR runs.machine = ?) AND (? IS NULL OR runs.started_at < ?) "
                 "ORDER BY runs.started_at, runs.run_id, rec.idx")


def history(conn, machine=None, before=None):
    """{(machine, case_key): [one merged row per run, oldest first]} of the ok records of runs started before
    `before` (on `machine` only; None: any)."""
    cursor = conn.cursor()
    cursor.row_factory = sqlite3.Row
    grouped = {}
    for row in cursor.execute(HISTORY_QUERY, (machine, machine, before, before)):
        grouped.setdefault((row["machine"], row["case_key"]), {}).setdefault(row["run_id"], []).append(dict(row))
    return {key: [merge(rows) for rows in runs.values()] for key, runs in grouped.items()}
