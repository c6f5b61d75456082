"""`history gate`: each case of a run judged against its history (dmabench.history.rule), the lines, counts and
`--json` entries of the verdicts, the cases a run lost, and the verdicts as JUnit test cases."""
import json
import sqlite3

from .. import junit, verdict
from ..text import printable, ResultsError
from .db import store, transaction
from .rows import now
from .rule import band, draws, history, judge_family, merge, rule_text, sources

VERDICTS = ("failed", "slower", "ambiguous", "new", "faster", "same")  # the order gate prints them in
FAILING = ("failed", "slower")  # the verdicts that make gate exit 1


def candidate_cases(run):
    """{case_key: merged row} of every case of a run (ok, failed or skipped: a skip loses a case that was ok before),
    in record order."""
    cases = {}
    for r in run.records:
        cases.setdefault(r["case_key"], []).append(r)
    return {k: merge(rows) for k, rows in cases.items()}


EARLIER_RUNS = "SELECT run_id, started_at, source, context FROM runs WHERE machine = ? AND started_at < ? " \
               "ORDER BY started_at DESC, run_id DESC"


def sweep_of(context):
    """What decides the cases a run lists: its expanded config and the --benchmark_filter of its command line (a
    filtered run lists fewer cases and loses none); None without a config in the context."""
    config, line = context.get("config"), context.get("command_line")
    if not isinstance(config, dict):
        return None
    return [config, [a for a in line if isinstance(a, str) and a.startswith("--benchmark_filter")]
            if isinstance(line, list) else []]


def missing_cases(conn, run, cases):
    """[(case_key, row, line)] of the cases an earlier run of the same machine kind and the same sweep (sweep_of: the
    expanded config and filter, which list the cases) had ok that this run lacks: `failed` (dmabench.verdict.lost),
    as a skip is. Runs of another sweep list other cases and say nothing; a run without a config in its context
    neither."""
    mine = sweep_of(json.loads(run.row["context"]))
    if mine is None:
        return []
    same = [r for r in conn.execute(EARLIER_RUNS, (run.row["machine"], run.row["started_at"]))
            if sweep_of(json.loads(r[3])) == mine]  # newest first
    found = {}
    cursor = conn.cursor()
    cursor.row_factory = sqlite3.Row
    for run_id, started, source, _ in same:
        for rec in cursor.execute("SELECT * FROM records WHERE run_id = ? AND status = 'ok' ORDER BY idx", (run_id,)):
            if rec["case_key"] not in cases:
                entry = found.setdefault(rec["case_key"], [dict(rec), started, source, set()])
                entry[3].add(run_id)
    out = []
    for key, (rec, started, source, runs) in found.items():
        reason = (f"not in this run, whose config lists it (ok in {len(runs)} earlier run{'' if len(runs) == 1 else 's'}"
                  f" of this config, the last started {started}: {source})")
        case = dict(rec, status="missing", reason=reason, p50_us=None, p50_low_us=None, p50_high_us=None,
                    process_p50s=None, record="{}")
        out.append((key, case, f"missing: {reason}"))
    return out


def judged_by(case):
    """Which interval judged a run's p50: between its processes (a levels file), within one process, or none."""
    if case["p50_low_us"] is None:
        return "no interval: the p50 itself"
    n = len(draws(case)) if case["process_p50s"] else 1
    return f"between {n} processes" if n > 1 else "within one process"


def describe(case, b, earlier, rule, v):
    """The figures behind a verdict, for its line (`v`: the case's dmabench.verdict entry, None where not judged by
    the rule)."""
    if case["status"] != "ok":
        return f"{case['status']}: {case['reason'] or 'no reason given'} (ok in {len(earlier)} earlier runs)"
    low, high = case["p50_low_us"], case["p50_high_us"]
    p50 = f"p50 {case['p50_us']:.2f} µs" + (f" [{low:.2f}, {high:.2f}]" if low is not None else "") + \
        f" ({judged_by(case)})"
    if v is None:
        return f"{p50}; {sum(len(draws(p)) for p in earlier)} draws from {len(earlier)} earlier runs, {rule.min_runs} needed"
    return (f"{p50}: change {v['change']:+.1%} against {sources(b.runs, b.draws)} (median {b.median:.2f} µs, spread "
            f"{b.spread:.1%}), minimum {v['min_change']:.0%}, rank-sum p {v['p']:.2g} over {v['base_draws']}+"
            f"{v['new_draws']} draws{', supported' if v['supported'] else ''}")


def gate(conn, run, rule, record):
    """The verdict lines of one run and how many of each verdict; with `record` the run and its verdicts stored."""
    cases = candidate_cases(run)
    earlier = history(conn, run.row["machine"], run.row["started_at"])
    befores = [earlier.get((run.row["machine"], key), []) for key in cases]
    judged = []
    for (key, case), before, (word, v) in zip(cases.items(), befores, judge_family(list(zip(cases.values(), befores)),
                                                                                    rule)):
        if word:
            b = band([draws(p) for p in before], rule)
            judged.append((word, key, case, b, describe(case, b, before, rule, v)))
    judged += [(verdict.lost(True, None), key, case, None, line) for key, case, line in missing_cases(conn, run, cases)]
    if not judged and all(c["status"] == "skipped" for c in cases.values()):
        raise ResultsError(f"{run.row['source']}: nothing to judge (no ok or failed case, and no case an earlier run "
                           "had ok)")
    if record:
        _, run_id = store(conn, run)
        conn.executemany("INSERT OR REPLACE INTO verdicts VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                         [(run_id, key, case["name"], verdict, case["p50_us"], *(b[:4] if b else (None,) * 4),
                           b.runs if b else 0, rule_text(rule), now()) for verdict, key, case, b, _ in judged])
    judged.sort(key=lambda j: VERDICTS.index(j[0]))
    return [printable(f"{v:<5}  {case['name']}  {text}") for v, _, case, _, text in judged], \
        {v: sum(j[0] == v for j in judged) for v in VERDICTS}, [verdict_entry(*j) for j in judged]


def verdict_entry(verdict, key, case, b, text):
    """One judged case as `gate --json` writes it (docs/history.md, "gate --json")."""
    low, high = case["p50_low_us"], case["p50_high_us"]
    return {"case": case["name"], "case_key": json.loads(key), "pattern": case["pattern"], "engine": case["engine"],
            "status": case["status"], "verdict": verdict, "message": printable(text), "p50_us": case["p50_us"],
            "p50_interval_us": None if low is None else [low, high],
            "judged_by": judged_by(case) if case["status"] == "ok" else None,
            "baseline": None if b is None else {"median_us": b.median, "low_us": b.low, "high_us": b.high,
                                                "spread": b.spread, "runs": b.runs, "draws": b.draws},
            "seconds": junit.case_seconds(json.loads(case["record"]))}


def gate_all(conn, runs, rule, record, before_commit=lambda judged: None):
    """Every run judged in order, in one transaction (with `record` each run stored with its verdicts before the next
    is judged; else one snapshot read): [(lines, counts)], printed once the transaction is over. `before_commit(judged)`
    runs inside it (gate's JUnit file: where it cannot be written, nothing is stored; issue 51)."""
    with transaction(conn, write=record):
        judged = [gate(conn, run, rule, record) for run in runs]
        before_commit(judged)
        return judged


def gate_case(e):
    """A judged case as a JUnit test case: slower and failed a failure with its line, the other verdicts passed (their
    line in system-out)."""
    line = f"{e['verdict']}: {e['message']}"
    failing = e["verdict"] in FAILING
    return junit.Case(e["case"], f"{e['pattern']}.{e['engine']}", e["seconds"], "failure" if failing else "passed",
                      line if failing else "", e["verdict"], line)


def gate_json(runs, judged, summaries, rule, code):
    """`gate --json`: the overall status and exit code, the rule, and per run its counts and judged cases."""
    return {"status": "fail" if code else "pass", "exit_code": code, "rule": rule._asdict(),
            "rule_text": rule_text(rule),
            "runs": [{"source": run.row["source"], "machine": run.row["machine"], "started_at": run.row["started_at"],
                      "revision": run.row["revision"], "counts": n, "summary": summary, "cases": entries}
                     for run, (_, n, entries), summary in zip(runs, judged, summaries)]}
