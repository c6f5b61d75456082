"""A history of dmabench runs in SQLite, for CI regression gates and notebooks.

usage: history.py add RESULTS.json|DIR ... [--db FILE]
       history.py machines [--db FILE]
       history.py trend [DB] --case REGEX [--figure p50_us|busbw_GBps] [--machine KIND] [--json | --out DIR] [RULE]
                        [--db FILE]
       history.py gate RESULTS.json ... [--record] [--json] [--junit FILE] [RULE] [--db FILE]
       history.py prune (--keep N | --since DATE) [--machine KIND] [--dry-run] [--db FILE]
       history.py vacuum [--db FILE]
RULE:  [--runs 10] [--min-runs 3] [--alpha 0.02] [--min-change CLASS=F] (gate); [--sigmas 3] [--tolerance 0.05]
       [--noisy 0.05] (the band trend draws)

--db is the database, by default results/history.sqlite of this tree; its tables (schema version 2; an older
database is migrated in place by a command that writes): docs/history.md. Writers started at once queue on SQLite's
write lock (a new file is made in the first one's transaction); a reader (machines, trend, gate without --record)
never writes, and where a killed writer left `<db>-journal` it says so and what to run (docs/history.md, "Several
processes and interrupted writes"). Names are printed with their control characters escaped.

add      stores every run: its context (start, host, revision, machine kind, backend, GPUs, driver, the whole
         context) and every record (a levels file's record with its per-process p50s, records.process_p50s: the
         draws of the machine's state its processes made). All files are read and checked first and stored in one
         transaction, so a bad file leaves the database as it was. A DIR is walked for *.json files (and *.json.xz,
         *.json.gz: read decompressed) and journals: a file there that is not a dmabench results file (no `schema`
         "dmabench/..."; a power trace, peer links) is skipped, and a journal whose results file is there too is
         read through that file (dmabench.load).
         A run is the SHA-256 of its start in UTC (context.started_at, else context.date), host, revision and
         its records' names, statuses and p50s: storing it again is a no-op. A file of a stored run (same start,
         host and revision) whose records extend the stored ones (its journal first, its finished file later)
         replaces it; one whose records the stored run already holds is skipped.
machines the machine kinds (`1 x NVIDIA H200`: GPU model x count; `host <cpu>` for the host backend, as
         dmabench.machine_label), with their runs, records and first and last start.
trend    every case whose name matches REGEX (re.search; stopped, exit 2, after 2 s over every name), per machine kind: one row per run that has it ok, with
         its start, revision, figure, 95% interval where recorded, noisy, the band the gate draws from the runs
         before it, and the verdict `gate --record` stored; then the band the next run will be judged against.
         With --out DIR it draws the same series as a figure instead (the `plot` extra: matplotlib), DIR/
         <patterns>-trend.png (dmabench.plot.trend_figure; at most 8 series). The database may also be given as
         the first argument (DB, as `plot.py trend DB` takes it). The one trend command: `dmabench-results trend`,
         `history.py trend` and `plot.py trend` run it.
gate     judges each case of every RESULTS file (matched across runs by dmabench.case_key, which
         includes host-memory kind and block layout) on its p50 latency, against its history, by compare's rule
         (dmabench.verdict; docs/methodology.md, "How often a verdict is wrong"):
  history  the draws of the last --runs (10) runs of the same machine kind that started before this run and have
           the case ok. A process is one draw of the machine's state (results/SCHEMA.md, "Levels across fresh
           processes"): a run of N processes (a levels file: dmabench --processes N, merge_runs.py, ab) contributes
           the p50s of its processes that had the case ok, any other run its p50 (a case measured more than once
           in a run counts once, at the median); the run's own draws likewise
  new      fewer than --min-runs (3) draws in its history
  failed   a case lost: failed or skipped now where an earlier run had it ok (compare's rule, dmabench.verdict.lost),
           or missing from the run where an earlier run of the same machine kind and the same sweep (the expanded
           context.config and the command line's --benchmark_filter: what lists the cases) had it ok; its line gives
           the status and reason
  slower   the change (the Hodges-Lehmann ratio of the run's draws to the history's, minus 1) is above the case's
  faster   class minimum (--min-change: launch-bound 5%, bandwidth-bound 2%) and a two-sided rank-sum test of the
           history's draws against the run's supports it, Benjamini-Hochberg over the run's judged cases at --alpha
           (0.02): where nothing changed, any case of a run is called slower or faster in at most 2% of gates
  ambiguous the change is beyond the minimum without that support: one draw (a one-process run) against 10 earlier
           ones can support nothing below p = 2/11; run the gate on levels files (dmabench --processes N)
  same     the change is within the minimum
  The line of each case says its change, the history's median, spread and draws, the p-value and whether it was
  supported. The band of `trend` (median ± max(--sigmas x 1.4826 x MAD, --tolerance x median)) describes the
  history; it judges nothing since issue 50 (a band over bimodal draws is wide: a 25% slower MoE decode passed it).
  Databases written before keep their FAIL / NOISY / NEW / PASS verdicts. Files are
  judged in the order of their start. Without --record nothing is written; with --record each file is stored (as
  add) with its verdicts, in one transaction, before the next is judged.
  --json prints the verdicts as JSON instead (docs/history.md, "gate --json"): the overall status and exit code, and
  per run its counts and each judged case with its key, baseline band, p50, verdict and line. --junit FILE also
  writes them as JUnit XML (dmabench.junit): a judged case a test case, slower and failed a failure with its line,
  written by the dmabench program (DMABENCH_BINARY, PATH or build/dmabench; none: exit 2 before any work).
  The JUnit file is written inside the gate's transaction: where it cannot be written (exit 2), --record stores
  nothing; it may not name the database or the files SQLite keeps beside it.
prune    removes runs, with all their rows (records, verdicts), in one transaction: --keep N keeps the last N runs
         (by start) of each machine kind, --since DATE the runs started at or after DATE (ISO 8601; UTC where no
         zone is given); --machine KIND prunes that kind only. Prints each run removed; --dry-run only says which
         would be. The file keeps its size until `vacuum`. A --db that is not there is refused (prune and vacuum
         maintain a database; they never make one), and so is a --since in the future (it would remove every run).
vacuum   rebuilds the database file without its free pages (SQLite's VACUUM): prints the sizes before and after.

Exit codes: 0 done (gate: no case slower or failed); 1 gate: a case slower or failed; 2 bad input: a file that is not a dmabench
results file or is malformed (dmabench.schema.check_document), a run without a start time, a bad argument, a
--db that is not a dmabench history database, is of a newer schema version or cannot be written, nothing to
judge or to show; one line `history.py: error: ...` on stderr, and the database as it was.
"""
import contextlib
import os
import sys

from .. import junit
from ..extras import require
from ..files import checkout_root, refuse_inputs
from ..text import json_text, printable, ResultsError, table
from ..tool import arg_parser, run_tool
from . import db
from .db import db_errors, retried
from .judging import FAILING, gate_all, gate_case, gate_json, VERDICTS
from .rows import runs_of, results_files
from .rule import add_rule_arguments, rule_of, rule_text
from .trends import FIGURES, trend, trend_markdown
from .upkeep import cmd_prune, cmd_vacuum

TOOL = "history.py"
DEFAULT_DB = os.path.join(checkout_root(), "results", "history.sqlite")


def cmd_add(a):
    runs = runs_of([f for arg in a.results for f in results_files(arg)])
    with contextlib.closing(db.open_db(a.db, write=True)) as conn, db_errors(a.db):
        outcomes = retried(lambda: db.store_all(conn, runs))
        total = conn.execute("SELECT count(*), (SELECT count(*) FROM records) FROM runs").fetchone()
    words = {"added": "added", "stored": "already stored", "replaced": "added, replacing a part of it",
             "part": "skipped, a part of stored run"}
    for run, status, run_id in outcomes:
        r = run.row
        print(printable(f"{r['source']}: {words[status]} {run_id[:12]} ({r['records']} records, {r['machine']}, "
                        f"{r['started_at']}, {r['revision']})"))
    added = sum(status in ("added", "replaced") for _, status, _ in outcomes)
    print(printable(f"{added} of {len(runs)} runs added; {a.db} holds {total[0]} runs, {total[1]} records"))
    return 0


def cmd_machines(a):
    with contextlib.closing(db.open_db(a.db, write=False)) as conn, db_errors(a.db):
        rows = conn.execute("SELECT machine, count(*), sum(records), min(started_at), max(started_at), "
                            "count(DISTINCT host), count(DISTINCT revision) FROM runs GROUP BY machine "
                            "ORDER BY machine").fetchall()
    print(table(["machine", "runs", "records", "first run (UTC)", "last run (UTC)", "hosts", "revisions"],
                [[m, str(n), str(recs), first, last, str(hosts), str(revs)] for m, n, recs, first, last, hosts, revs in rows])
          if rows else f"{a.db}: no runs")
    return 0


def add_trend_arguments(ap):
    """The trend command's arguments (history.py trend, plot.py trend, dmabench-results trend)."""
    ap.add_argument("db_file", nargs="?", metavar="DB", help="the history database (the same as --db)")
    ap.add_argument("--db", default=DEFAULT_DB, help="the history database (default results/history.sqlite)")
    ap.add_argument("--case", required=True, help="a regular expression for case names")
    ap.add_argument("--figure", choices=list(FIGURES), default="p50_us")
    ap.add_argument("--machine", help="one machine kind (history.py machines lists them)")
    ap.add_argument("--json", action="store_true", help="print JSON instead of markdown")
    ap.add_argument("--out", help="draw the trend figure into this directory instead (needs the plot extra)")
    add_rule_arguments(ap)


def run_trend(argv=None):
    """The trend command on its own (dmabench-results trend, plot.py trend)."""
    ap = arg_parser(__doc__)
    add_trend_arguments(ap)
    return cmd_trend(ap.parse_args(argv))


def main_trend(argv=None, tool="dmabench-results trend"):
    return run_tool(tool, run_trend, argv)


def cmd_trend(a):
    rule = rule_of(a)
    a.db = a.db_file or a.db
    if a.out and a.json:
        raise ResultsError("--json and --out: the trend is printed (markdown or JSON) or drawn (--out), not both")
    plot = require("plot", "dmabench.plot") if a.out else None  # before the work: a missing extra is said at once
    with contextlib.closing(db.open_db(a.db, write=False)) as conn, db_errors(a.db):
        series = trend(conn, a.case, a.machine, a.figure, rule)
    if plot:
        return plot.write_trend(series, a, rule)
    print(json_text({"rule": rule._asdict(), "series": series}) if a.json else
          trend_markdown(series, a.figure, rule))
    return 0


def database_files(db):
    """{path: what} of the history database and the files SQLite keeps beside it: what no output may name."""
    return {db: "the history database", **{f"{db}{suffix}": f"the history database's {what}" for suffix, what in
                                          (("-journal", "journal"), ("-wal", "write-ahead log"), ("-shm", "shared memory"))}}


def cmd_gate(a):
    rule = rule_of(a)
    program = None
    if a.junit:
        program = junit.check_path(a.junit)  # before --record writes anything: the path and the program
        refuse_inputs(a.junit, database_files(a.db))
    runs = sorted(runs_of(a.results), key=lambda run: run.row["started_at"])
    def junit_file(judged):  # written inside the transaction: a JUnit file that cannot be written rolls --record back
        if a.junit:
            junit.write(a.junit, [gate_case(e) for _, _, entries in judged for e in entries],
                        {"command": "history gate", "rule": rule_text(rule), "db": a.db}, program)

    with contextlib.closing(db.open_db(a.db, write=a.record)) as conn, db_errors(a.db):
        judged = retried(lambda: gate_all(conn, runs, rule, a.record, junit_file))
    code = 1 if any(n[v] for _, n, _ in judged for v in FAILING) else 0
    summaries = [printable(f"gate {run.row['source']}: {sum(n.values())} cases on {run.row['machine']} against the "
                           f"runs before {run.row['started_at']}: " + ", ".join(f"{n[v]} {v}" for v in VERDICTS) +
                           (" (recorded)" if a.record else "")) for run, (_, n, _) in zip(runs, judged)]
    if a.json:
        print(json_text(gate_json(runs, judged, summaries, rule, code)))
        return code
    for (lines, _, _), summary in zip(judged, summaries):
        print("\n".join(lines))
        print(summary)
    print(f"Rule: {rule_text(rule)}.")
    return code


def main(argv=None, tool=TOOL):
    return run_tool(tool, run, argv)


def run(argv=None):
    ap = arg_parser(__doc__)
    sub = ap.add_subparsers(dest="command", required=True, metavar="{add,machines,trend,gate,prune,vacuum}")
    commands = {"add": cmd_add, "machines": cmd_machines, "trend": cmd_trend, "gate": cmd_gate, "prune": cmd_prune,
                "vacuum": cmd_vacuum}
    parsers = {name: sub.add_parser(name) for name in commands}
    add_trend_arguments(parsers["trend"])
    parsers["prune"].add_argument("--keep", type=int, metavar="N", help="keep the last N runs of each machine kind")
    parsers["prune"].add_argument("--since", metavar="DATE", help="keep the runs started since DATE (ISO 8601)")
    parsers["prune"].add_argument("--machine", help="prune this machine kind only (history machines lists them)")
    parsers["prune"].add_argument("--dry-run", action="store_true", help="say what would be removed, remove nothing")
    for name in ("add", "machines", "gate", "prune", "vacuum"):
        parsers[name].add_argument("--db", default=DEFAULT_DB, help="the history database (default results/history.sqlite)")
    parsers["add"].add_argument("results", nargs="+", help="results files, journals, or directories of them")
    parsers["gate"].add_argument("results", nargs="+", help="the results files to judge")
    parsers["gate"].add_argument("--record", action="store_true", help="store the runs and their verdicts")
    parsers["gate"].add_argument("--json", action="store_true", help="print the verdicts as JSON instead of text")
    parsers["gate"].add_argument("--junit", metavar="FILE", help="also write the verdicts as JUnit XML (a case a test)")
    add_rule_arguments(parsers["gate"])
    a = ap.parse_args(argv)
    return commands[a.command](a)


if __name__ == "__main__":
    sys.exit(main())
