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
         transaction, so a bad file leaves the database as it was. A DIR is walked for *.json files and journals:
         a file there that is not a dmabench results file (no `schema` "dmabench/..."; a power trace, peer links)
         is skipped, and a journal whose results file is there too is read through that file
         (dmabench.load).
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
  writes them as JUnit XML (dmabench.junit): a judged case a test case, slower and failed a failure with its line.
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
import datetime
import hashlib
import json
import math
import os
import random
import re
import sqlite3
import stat
import statistics
import sys
import time
import urllib.parse
from collections import namedtuple

from . import junit, verdict
from .extras import require
from .files import check_output, checkout_root, JOURNAL_SUFFIX, read_bytes, refuse_inputs
from .levels import process_draws
from .keys import case_class, case_key, machine_label, p50_interval, variant, where
from .reader import escape_surrogates, load, parse_json
from .schema import SCHEMA_PREFIX
from .text import json_text, printable, quote, ResultsError, table
from .tool import arg_parser, run_tool, time_limit

TOOL = "history.py"
DEFAULT_DB = os.path.join(checkout_root(), "results", "history.sqlite")
SCHEMA_VERSION = 3  # PRAGMA user_version of the databases this script writes
APPLICATION_ID = 0x646D6268  # PRAGMA application_id, "dmbh": the file is a dmabench history
VERDICTS = ("failed", "slower", "ambiguous", "new", "faster", "same")  # the order gate prints them in
FAILING = ("failed", "slower")  # the verdicts that make gate exit 1


def number(value):
    """A finite number as a float, else None (a field check_document does not check, such as setup_s)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    try:
        return float(value) if math.isfinite(value) else None
    except OverflowError:
        return None


def process_p50s(r):
    """JSON text of the per-process p50s of a levels file's ok record (`levels.p50_us` without the nulls of the
    processes that did not have the case ok), or None (a one-process record)."""
    draws = [float(x) for x in process_draws(r)]
    return json.dumps(draws) if draws else None


def backfill_process_p50s(conn):
    """Version 1 -> 2: the per-process p50s of the levels records a version-1 database already holds."""
    rows = conn.execute("SELECT run_id, idx, record FROM records WHERE status = 'ok' AND record LIKE '%\"levels\"%'")
    conn.executemany("UPDATE records SET process_p50s = ? WHERE run_id = ? AND idx = ?",
                     [(process_p50s(json.loads(record)), run_id, idx) for run_id, idx, record in rows.fetchall()])


# MIGRATIONS[v] takes a database from schema version v to v + 1 (version 0: a new, empty file): SQL statements, or
# functions of the connection, run in order in one transaction.
MIGRATIONS = [[
    """CREATE TABLE runs (
        run_id TEXT PRIMARY KEY, started_at TEXT NOT NULL, finished_at TEXT, host TEXT, revision TEXT, version TEXT,
        machine TEXT NOT NULL, backend TEXT, gpus TEXT, driver TEXT, config TEXT, source TEXT NOT NULL,
        imported_at TEXT NOT NULL, records INTEGER NOT NULL, context TEXT NOT NULL)""",
    "CREATE INDEX runs_machine ON runs (machine, started_at)",
    """CREATE TABLE records (
        run_id TEXT NOT NULL REFERENCES runs ON DELETE CASCADE, idx INTEGER NOT NULL, name TEXT NOT NULL,
        case_key TEXT NOT NULL, pattern TEXT NOT NULL, engine TEXT NOT NULL, variant TEXT NOT NULL,
        place TEXT NOT NULL, bytes_per_rank INTEGER NOT NULL, bytes INTEGER, timing TEXT NOT NULL,
        status TEXT NOT NULL, reason TEXT, p50_us REAL, p50_low_us REAL, p50_high_us REAL, noise REAL, noisy INTEGER,
        busbw_GBps REAL, busbw_low_GBps REAL, busbw_high_GBps REAL, algbw_GBps REAL, sampling TEXT, samples INTEGER,
        setup_s REAL, record TEXT NOT NULL, PRIMARY KEY (run_id, idx))""",
    "CREATE INDEX records_case ON records (case_key)",
    """CREATE TABLE verdicts (
        run_id TEXT NOT NULL REFERENCES runs ON DELETE CASCADE, case_key TEXT NOT NULL, name TEXT NOT NULL,
        verdict TEXT NOT NULL CHECK (verdict IN ('FAIL', 'NOISY', 'NEW', 'PASS')), p50_us REAL, median_us REAL,
        low_us REAL, high_us REAL, spread REAL, runs INTEGER NOT NULL, rule TEXT NOT NULL, judged_at TEXT NOT NULL,
        PRIMARY KEY (run_id, case_key))""",
], [
    "ALTER TABLE records ADD COLUMN process_p50s TEXT",  # version 2: the draws of a multi-process run
    backfill_process_p50s,
], [  # version 3: the gate's verdicts of dmabench.verdict (failed, slower, ambiguous, new, faster, same); the
    # FAIL / NOISY / NEW / PASS of earlier gates are kept as they were recorded
    """CREATE TABLE verdicts_3 (
        run_id TEXT NOT NULL REFERENCES runs ON DELETE CASCADE, case_key TEXT NOT NULL, name TEXT NOT NULL,
        verdict TEXT NOT NULL CHECK (verdict IN ('failed', 'slower', 'ambiguous', 'new', 'faster', 'same', 'FAIL',
                                                 'NOISY', 'NEW', 'PASS')),
        p50_us REAL, median_us REAL, low_us REAL, high_us REAL, spread REAL, runs INTEGER NOT NULL, rule TEXT NOT NULL,
        judged_at TEXT NOT NULL, PRIMARY KEY (run_id, case_key))""",
    "INSERT INTO verdicts_3 SELECT * FROM verdicts",
    "DROP TABLE verdicts",
    "ALTER TABLE verdicts_3 RENAME TO verdicts",
]]
RUN_COLUMNS = ["run_id", "started_at", "finished_at", "host", "revision", "version", "machine", "backend", "gpus",
               "driver", "config", "source", "imported_at", "records", "context"]
RECORD_COLUMNS = ["run_id", "idx", "name", "case_key", "pattern", "engine", "variant", "place", "bytes_per_rank",
                  "bytes", "timing", "status", "reason", "p50_us", "p50_low_us", "p50_high_us", "noise", "noisy",
                  "busbw_GBps", "busbw_low_GBps", "busbw_high_GBps", "algbw_GBps", "sampling", "samples", "setup_s",
                  "record", "process_p50s"]
# dmabench.history_frame: one row per (run, record), the run's context beside it, the recorded verdict
FRAME_QUERY = (f"SELECT {', '.join(f'runs.{c}' for c in RUN_COLUMNS if c not in ('records', 'context'))}, "
               f"{', '.join(f'rec.{c}' for c in RECORD_COLUMNS if c not in ('run_id', 'record'))}, v.verdict "
               "FROM records rec JOIN runs ON runs.run_id = rec.run_id "
               "LEFT JOIN verdicts v ON v.run_id = rec.run_id AND v.case_key = rec.case_key "
               "ORDER BY runs.started_at, runs.run_id, rec.idx")


# ---- the database ------------------------------------------------------------------------------------------------

BUSY_TIMEOUT_S = 30  # how long SQLite waits for another process's lock before it reports the database busy
BUSY_TRIES = 3  # a transaction still busy after that wait is tried again, this many times in all
JOURNAL_SUFFIX_DB = "-journal"  # SQLite's rollback journal beside the database: left non-empty by an interrupted write


def hot_journal(path):
    """The rollback journal beside the database at `path` when it is there and not empty (an interrupted write's,
    or a running one's), else None."""
    journal = os.fspath(path) + JOURNAL_SUFFIX_DB
    try:
        return journal if os.path.getsize(journal) > 0 else None
    except (OSError, ValueError):
        return None


def _read_only(e):
    """Whether SQLite refused to write: a read-only connection that met a hot journal (SQLITE_READONLY_ROLLBACK)."""
    return getattr(e, "sqlite_errorname", "").startswith("SQLITE_READONLY") or "readonly database" in str(e)


@contextlib.contextmanager
def db_errors(path):
    """What SQLite says about the file (not a database, corrupt, locked, read-only, a full disk) as one line. A
    reader that meets the journal of an interrupted write (SQLite must roll it back before anything is read, and a
    read-only connection cannot) says that, and what to run."""
    try:
        yield
    except sqlite3.DatabaseError as e:
        if type(e) not in (sqlite3.DatabaseError, sqlite3.OperationalError):  # a misuse of SQL: a bug, exit 3
            raise
        journal = hot_journal(path) if _read_only(e) else None
        if journal:
            raise ResultsError(f"{journal}: an interrupted write left it; a writer rolls it back: run `history.py "
                               "add` (any results file: one already stored adds nothing) on this --db with write "
                               "access") from None
        raise ResultsError(f"{path}: {e}") from None


@contextlib.contextmanager
def transaction(conn, write=True):
    """All of the block's writes or none: BEGIN IMMEDIATE (`write`: the write lock first, so that writers queue and
    never deadlock), else BEGIN (one consistent snapshot to read). A failure inside is raised as it is: SQLite may
    have rolled the transaction back itself (a full disk), and then no ROLLBACK is said again."""
    conn.execute("BEGIN IMMEDIATE" if write else "BEGIN")
    try:
        yield
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            with contextlib.suppress(sqlite3.Error):
                conn.execute("ROLLBACK")
        raise


def busy(e):
    """Whether an OperationalError says the database is busy or locked (SQLITE_BUSY, SQLITE_LOCKED)."""
    code = getattr(e, "sqlite_errorcode", None)
    return code & 0xFF in (5, 6) if code is not None else "locked" in str(e) or "busy" in str(e)


def retried(step):
    """`step()` (one whole transaction), tried again after a short random pause while SQLite still reports the
    database busy or locked after its BUSY_TIMEOUT_S wait (another process's long write): BUSY_TRIES times in all."""
    for attempt in range(1, BUSY_TRIES + 1):
        try:
            return step()
        except sqlite3.OperationalError as e:
            if not busy(e) or attempt == BUSY_TRIES:
                raise
        time.sleep(random.uniform(0.1, 0.5) * attempt)


def open_db(path, write):
    """A connection to the history database at `path` (read-only unless `write`). With `write`, a missing or empty
    file becomes a new database and one of an older schema version is migrated. ResultsError (and the file
    untouched) for anything else: a missing file when reading, a file that is not a dmabench history (another SQLite
    database, a results file), one of a newer schema version, one that is not a regular file or is a file this
    script read, one an interrupted write left a journal beside (reading: db_errors)."""
    path = os.fspath(path)
    st = _db_stat(path, write)
    if write:
        check_output(path, st)
    uri = f"file:{urllib.parse.quote(os.fsencode(os.path.abspath(path)))}?mode={'rwc' if write else 'ro'}"
    with db_errors(path):
        conn = sqlite3.connect(uri, uri=True, isolation_level=None, timeout=BUSY_TIMEOUT_S)
        try:
            conn.execute("PRAGMA foreign_keys = ON")
            retried(lambda: identify(conn, path, write))
        except BaseException:
            conn.close()
            raise
    return conn


def _db_stat(path, write):
    """os.stat of the database file, None where there is none yet (writing); ResultsError where it cannot be one."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        if not write:
            raise ResultsError(f"{path}: no history database there (`history.py add` makes one)") from None
        return None
    except (OSError, ValueError) as e:
        raise ResultsError(f"cannot open {path}: {e}") from None
    if not stat.S_ISREG(st.st_mode):
        raise ResultsError(f"cannot open {path}: not a regular file; a history database is one")
    return st


def identify(conn, path, write):
    """The file's identity and schema version, checked in one transaction; a writer's (the write lock taken first)
    makes a new or older database current in it. Two writers that find one empty file both: the first creates the
    tables, the second waits for the lock and then finds them (checking outside the writer's transaction lost a run,
    `table runs already exists`, one time in ten)."""
    with transaction(conn, write):
        app, version = (conn.execute(f"PRAGMA {p}").fetchone()[0] for p in ("application_id", "user_version"))
        empty = (app, version) == (0, 0) and not conn.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]
        if app != APPLICATION_ID and not empty:
            raise ResultsError(f"{path}: not a dmabench history database (another SQLite database)")
        if version > SCHEMA_VERSION:
            raise ResultsError(f"{path}: a history database of schema version {version}, newer than this "
                               f"script's {SCHEMA_VERSION}: use the dmabench that wrote it (the file is untouched)")
        if version < SCHEMA_VERSION:
            if not write:
                raise ResultsError(f"{path}: {'an empty file' if empty else f'schema version {version}'}, not a "
                                   f"history database of version {SCHEMA_VERSION} (`history.py add` makes one)")
            for statement in (s for step in MIGRATIONS[version:] for s in step):
                statement(conn) if callable(statement) else conn.execute(statement)
            conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")
            conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")


# ---- runs and records as rows ------------------------------------------------------------------------------------

def utc(text, where_):
    """An ISO 8601 time as UTC to the millisecond, 'YYYY-MM-DDTHH:MM:SS.mmmZ' (sortable as text)."""
    try:
        t = datetime.datetime.fromisoformat(text)
        t = (t if t.tzinfo else t.replace(tzinfo=datetime.timezone.utc)).astimezone(datetime.timezone.utc)
        return t.isoformat(timespec="milliseconds").replace("+00:00", "Z")
    except (TypeError, ValueError, OverflowError):
        raise ResultsError(f"{where_}: {quote(text, 40)} is not an ISO 8601 time") from None


def _text(value):
    """A context value as text: a string as it is, anything else (unchecked by check_document) as JSON; None stays."""
    return value if value is None or isinstance(value, str) else json.dumps(value, sort_keys=True)


def record_row(r):
    """The columns of one record (RECORD_COLUMNS but run_id and idx); the figures of ok records only."""
    ok = r["status"] == "ok"
    low, high = (p50_interval(r) if ok else None) or (None, None)
    bus = r.get("busbw_interval_GBps") if ok else None
    sampling = r.get("sampling") if ok and isinstance(r.get("sampling"), dict) else {}
    return {"name": r["name"], "case_key": json.dumps(case_key(r)), "pattern": r["pattern"], "engine": r["engine"],
            "variant": variant(r), "place": where(r), "bytes_per_rank": r["bytes_per_rank"], "bytes": r.get("bytes"),
            "timing": r["timing"], "status": r["status"], "reason": _text(r.get("reason")),
            "p50_us": float(r["latency_us"]["p50"]) if ok else None, "p50_low_us": number(low),
            "p50_high_us": number(high), "noise": number(r.get("noise")) if ok else None,
            "noisy": r.get("noisy") if ok else None, "busbw_GBps": number(r.get("busbw_GBps")) if ok else None,
            "busbw_low_GBps": number(bus[0]) if bus else None, "busbw_high_GBps": number(bus[1]) if bus else None,
            "algbw_GBps": number(r.get("algbw_GBps")) if ok else None, "sampling": sampling.get("mode"),
            "samples": sampling.get("samples"), "setup_s": number(r.get("setup_s")), "record": json.dumps(r),
            "process_p50s": process_p50s(r)}


Run = namedtuple("Run", "row records")  # the runs row (RUN_COLUMNS) and the record rows of one results document


def prepare(doc, source):
    """A results document as the rows `store` writes; ResultsError (naming `source`) for a run without a start."""
    ctx = doc["context"]
    field = "started_at" if "started_at" in ctx else "date"
    if field not in ctx:
        raise ResultsError(f"{source}: context has neither started_at nor date: a run in a history needs its start")
    start = utc(ctx[field], f"{source}: context.{field}")
    machine = ctx.get("machine", {})
    versions = machine.get("versions") or {}
    dmabench = ctx.get("dmabench") or {}
    records = [record_row(r) for r in doc["results"]]
    host, revision = _text(ctx.get("host")), _text(dmabench.get("git_revision"))
    identity = [start, host, revision, [[r["name"], r["status"], r["p50_us"]] for r in records]]
    config = ctx.get("config")
    row = {"run_id": hashlib.sha256(json.dumps(identity, separators=(",", ":")).encode()).hexdigest(),
           "started_at": start, "finished_at": _text(ctx.get("finished_at")), "host": host, "revision": revision,
           "version": _text(dmabench.get("version")), "machine": machine_label(doc),
           "backend": _text(ctx.get("backend")),
           "gpus": ", ".join(str(d.get("name", "?")) for d in machine.get("devices", [])) or None,
           "driver": _text(versions.get("nvidia_driver") or versions.get("amdgpu_driver")),
           "config": _text(config.get("name")) if isinstance(config, dict) else None,
           "source": escape_surrogates(os.fspath(source)), "imported_at": now(), "records": len(records),
           "context": json.dumps(ctx)}
    return Run(row, records)


def store(conn, run):
    """Stores `run` unless it is there: ('added' | 'stored' | 'replaced' | 'part', the run id its records are under).
    'replaced': a stored part of the same run (same start, host, revision; its records a prefix of these) made way;
    'part': these records are a prefix of a stored run's."""
    row = run.row
    if conn.execute("SELECT 1 FROM runs WHERE run_id = ?", (row["run_id"],)).fetchone():
        return "stored", row["run_id"]
    mine = [(r["name"], r["status"], r["p50_us"]) for r in run.records]
    status = "added"
    same = conn.execute("SELECT run_id FROM runs WHERE started_at = ? AND host IS ? AND revision IS ?",
                        (row["started_at"], row["host"], row["revision"])).fetchall()
    for (other,) in same:
        theirs = conn.execute("SELECT name, status, p50_us FROM records WHERE run_id = ? ORDER BY idx",
                              (other,)).fetchall()
        if mine[:len(theirs)] == theirs:
            conn.execute("DELETE FROM runs WHERE run_id = ?", (other,))
            status = "replaced"
        elif theirs[:len(mine)] == mine:
            return "part", other
    conn.execute(f"INSERT INTO runs VALUES ({', '.join('?' * len(RUN_COLUMNS))})", [row[c] for c in RUN_COLUMNS])
    conn.executemany(f"INSERT INTO records VALUES ({', '.join('?' * len(RECORD_COLUMNS))})",
                     [[dict(r, run_id=row["run_id"], idx=i)[c] for c in RECORD_COLUMNS]
                      for i, r in enumerate(run.records)])
    return status, row["run_id"]


def now():
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


# ---- the gate's rule ---------------------------------------------------------------------------------------------

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


# ---- gate --------------------------------------------------------------------------------------------------------

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


def sources(runs, n):
    """'4 runs', or '10 draws from 2 runs' where runs held more than one draw each."""
    plural = f"{runs} run{'' if runs == 1 else 's'}"
    return plural if n == runs else f"{n} draws from {plural}"


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


# ---- trend -------------------------------------------------------------------------------------------------------

FIGURES = {"p50_us": ("p50_us", "p50_low_us", "p50_high_us", "p50 µs"),
           "busbw_GBps": ("busbw_GBps", "busbw_low_GBps", "busbw_high_GBps", "busbw GB/s")}


def in_figure(b, factor, figure):
    """A band (µs) in the figure's unit: busbw = factor / p50, so its edges swap."""
    if b is None:
        return None
    if figure == "p50_us":
        return {"median": b.median, "low": b.low, "high": b.high, "spread": b.spread, "runs": b.runs, "draws": b.draws}
    return {"median": factor / b.median, "low": factor / b.high, "high": factor / b.low if b.low else None,
            "spread": b.spread, "runs": b.runs, "draws": b.draws}


def trend(conn, pattern, machine, figure, rule):
    """Every (machine kind, case) whose case name matches `pattern`, as a series of its runs (oldest first), each
    with the figure, its interval, noisy, the recorded verdict and the band drawn from the runs before it; and the
    band for the next run. ResultsError when nothing matches."""
    kinds = [m for (m,) in conn.execute("SELECT DISTINCT machine FROM runs ORDER BY machine")]
    if machine is not None and machine not in kinds:
        raise ResultsError(f"--machine {quote(machine)}: no run of that machine kind; the database has "
                           f"{', '.join(map(quote, kinds)) or 'no run'}")
    value, low, high, _ = FIGURES[figure]
    cases = history(conn, machine)
    chosen = matching(pattern, {p["name"] for points in cases.values() for p in points})
    out = []
    for (kind, key), points in cases.items():
        if not any(p["name"] in chosen for p in points):
            continue
        factor = statistics.median(p["busbw_GBps"] * p["p50_us"] for p in points)  # S x busbw factor, in GB/s x µs
        runs = []
        for p in points:
            b = band([draws(q) for q in points if q["started_at"] < p["started_at"]], rule)
            interval = [p[low], p[high]] if p[low] is not None else None
            runs.append({"run_id": p["run_id"], "started_at": p["started_at"], "revision": p["revision"],
                         "source": p["source"], "value": p[value], "interval": interval,
                         "noisy": None if p["noisy"] is None else bool(p["noisy"]), "verdict": p["verdict"],
                         "band": in_figure(b, factor, figure)})
        out.append({"machine": kind, "case": points[-1]["name"], "case_key": key, "figure": figure, "runs": runs,
                    "next_band": in_figure(band([draws(p) for p in points], rule), factor, figure)})
    if not out:
        raise ResultsError(f"no ok case whose name matches --case {quote(pattern)}"
                           f"{f' on {machine}' if machine else ''} in the database")
    return out


REGEX_SECONDS = 2.0  # what --case may take over every case name of a database


def matching(pattern, names):
    """The names (a set) that `pattern` matches (re.search). ResultsError for a pattern that is no regular expression,
    or that takes more than REGEX_SECONDS over them all: nested quantifiers such as `(a+)+$` backtrack for ever on
    some names, and the search is stopped (dmabench.tool.time_limit) rather than left to hang."""
    try:
        regex = re.compile(pattern)
    except (re.error, RecursionError, OverflowError) as e:
        raise ResultsError(f"--case {quote(pattern)}: not a regular expression ({e})") from None
    with time_limit(REGEX_SECONDS, f"--case {quote(pattern)}: matching the case names took more than "
                                   f"{REGEX_SECONDS:g} s (nested quantifiers such as (a+)+ backtrack without end); "
                                   "accepted: a simpler regular expression"):
        return {name for name in names if regex.search(name)}


def _cell(value):
    return "–" if value is None else f"{value:.2f}"


def _band_cell(b):
    return "–" if b is None else \
        f"{_cell(b['low'])}..{_cell(b['high'])} (median {_cell(b['median'])}, {sources(b['runs'], b['draws'])})"


def trend_markdown(series, figure, rule):
    unit = FIGURES[figure][3]
    out = []
    for s in series:
        rows = [[r["started_at"][:19].replace("T", " "), str(r["revision"]), _cell(r["value"]),
                 "–" if r["interval"] is None else f"[{_cell(r['interval'][0])}, {_cell(r['interval'][1])}]",
                 {None: "–", True: "noisy", False: ""}[r["noisy"]], _band_cell(r["band"]), r["verdict"] or "–",
                 r["source"]] for r in s["runs"]]
        nb = s["next_band"]
        out += [printable(f"**{s['case']}** on {s['machine']}: {unit}, {len(rows)} runs"), "",
                table(["run start (UTC)", "revision", unit, "95% interval", "noisy", "band from the runs before",
                       "gate", "file"], rows), "",
                "The next run's band: " + (_band_cell(nb) + f", spread {nb['spread']:.1%}" if nb else
                                           f"none yet (NEW: fewer than {rule.min_runs} runs)"), ""]
    return "\n".join(out + [f"Band: {band_text(rule)}."])


# ---- the command line --------------------------------------------------------------------------------------------

def results_files(arg):
    """The results files an `add` argument names: itself, or the results files and journals under a directory."""
    if not os.path.isdir(arg):
        return [arg]

    def refuse(e):
        raise ResultsError(f"cannot read {e.filename}: {e.strerror}")

    found = []
    for d, dirs, files in os.walk(arg, onerror=refuse):
        dirs.sort()
        for name in sorted(files):
            path = os.path.join(d, name)
            if name.endswith(JOURNAL_SUFFIX) and not os.path.exists(path[:-len(JOURNAL_SUFFIX)]) or \
                    name.endswith(".json") and is_results(path):
                found.append(path)
    if not found:
        raise ResultsError(f"{arg}: no dmabench results file under it")
    return found


def is_results(path):
    """Whether a .json file found in a directory is a dmabench results file: any file that claims so, and any that is
    not JSON (a truncated one: load says what is wrong); not a JSON document of another kind."""
    try:
        doc = parse_json(read_bytes(path))
    except (ValueError, RecursionError):
        return True
    return isinstance(doc, dict) and isinstance(doc.get("schema"), str) and doc["schema"].startswith(SCHEMA_PREFIX)


def runs_of(paths):
    """Every file read, checked and prepared before the database is opened: a bad one changes nothing."""
    return [prepare(load(p), p) for p in paths]


def store_all(conn, runs):
    """Every run stored, in one transaction: [(run, status, run id)]."""
    with transaction(conn):
        return [(run, *store(conn, run)) for run in runs]


def cmd_add(a):
    runs = runs_of([f for arg in a.results for f in results_files(arg)])
    with contextlib.closing(open_db(a.db, write=True)) as conn, db_errors(a.db):
        outcomes = retried(lambda: store_all(conn, runs))
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
    with contextlib.closing(open_db(a.db, write=False)) as conn, db_errors(a.db):
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
    with contextlib.closing(open_db(a.db, write=False)) as conn, db_errors(a.db):
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
    if a.junit:
        junit.check_path(a.junit)  # before --record writes anything
        refuse_inputs(a.junit, database_files(a.db))
    runs = sorted(runs_of(a.results), key=lambda run: run.row["started_at"])
    def junit_file(judged):  # written inside the transaction: a JUnit file that cannot be written rolls --record back
        if a.junit:
            junit.write(a.junit, [gate_case(e) for _, _, entries in judged for e in entries],
                        {"command": "history gate", "rule": rule_text(rule), "db": a.db})

    with contextlib.closing(open_db(a.db, write=a.record)) as conn, db_errors(a.db):
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


def prune_args(a):
    """--keep N or --since DATE (exactly one), checked before the database is opened: (keep, since)."""
    if (a.keep is None) == (a.since is None):
        raise ResultsError("prune needs exactly one of --keep N (the last N runs per machine kind) and --since DATE "
                           "(the runs started since an ISO 8601 date)")
    if a.keep is not None and a.keep < 1:
        raise ResultsError(f"--keep {a.keep}: expected a whole number of runs, 1 or more")
    since = None if a.since is None else utc(a.since, "--since")
    if since is not None and since > now():
        raise ResultsError(f"--since {a.since}: in the future, it would remove every run; accepted: a date up to now "
                           "(the runs started before it are removed)")
    return a.keep, since


def doomed_runs(conn, keep, since, machine):
    """The runs prune removes (oldest first): beyond the last `keep` of their machine kind, or started before
    `since`; of `machine` only where given."""
    kinds = [m for (m,) in conn.execute("SELECT DISTINCT machine FROM runs ORDER BY machine")]
    if machine is not None and machine not in kinds:
        raise ResultsError(f"--machine {quote(machine)}: no run of that machine kind; the database has "
                           f"{', '.join(map(quote, kinds)) or 'no run'}")
    rows = conn.execute("SELECT run_id, machine, started_at, revision, records, source FROM runs "
                        "WHERE ? IS NULL OR machine = ? ORDER BY machine, started_at DESC, run_id DESC",
                        (machine, machine)).fetchall()
    seen, doomed = {}, []
    for row in rows:
        seen[row[1]] = seen.get(row[1], 0) + 1
        if (keep is not None and seen[row[1]] > keep) or (since is not None and row[2] < since):
            doomed.append(row)
    return sorted(doomed, key=lambda r: (r[2], r[0]))


def remove_runs(conn, run_ids):
    """Every row of the runs from every table, in the caller's transaction."""
    for table_name in ("verdicts", "records", "runs"):
        conn.executemany(f"DELETE FROM {table_name} WHERE run_id = ?", [(r,) for r in run_ids])


def existing_db(path):
    """ResultsError where the database a maintenance command (prune, vacuum) is given is not there: a mistyped --db
    made an empty database and exited 0 (issue 51)."""
    if not os.path.exists(path):
        raise ResultsError(f"{path}: no history database there; prune and vacuum maintain one (`history.py add` makes "
                           "one)")


def cmd_prune(a):
    keep, since = prune_args(a)
    existing_db(a.db)

    def step():
        with transaction(conn, write=not a.dry_run):
            doomed = doomed_runs(conn, keep, since, a.machine)
            if not a.dry_run:
                remove_runs(conn, [r[0] for r in doomed])
            return doomed, conn.execute("SELECT count(*) FROM runs").fetchone()[0]

    with contextlib.closing(open_db(a.db, write=not a.dry_run)) as conn, db_errors(a.db):
        doomed, left = retried(step)
    verb = "would remove" if a.dry_run else "removed"
    for run_id, machine, started_at, revision, records, source in doomed:
        print(printable(f"{verb} {run_id[:12]} ({machine}, {started_at}, {revision}, {records} records, {source})"))
    print(printable(f"{len(doomed)} runs {verb}; {a.db} {'would hold' if a.dry_run else 'holds'} "
                    f"{left - len(doomed) if a.dry_run else left} runs" +
                    ("" if a.dry_run or not doomed else " (`history vacuum` gives the space back to the disk)")))
    return 0


def cmd_vacuum(a):
    existing_db(a.db)
    with contextlib.closing(open_db(a.db, write=True)) as conn, db_errors(a.db):
        before = os.path.getsize(a.db)
        retried(lambda: conn.execute("VACUUM"))
        after = os.path.getsize(a.db)
    print(printable(f"{a.db}: {before} -> {after} bytes"))
    return 0


def gate_all(conn, runs, rule, record, before_commit=lambda judged: None):
    """Every run judged in order, in one transaction (with `record` each run stored with its verdicts before the next
    is judged; else one snapshot read): [(lines, counts)], printed once the transaction is over. `before_commit(judged)`
    runs inside it (gate's JUnit file: where it cannot be written, nothing is stored; issue 51)."""
    with transaction(conn, write=record):
        judged = [gate(conn, run, rule, record) for run in runs]
        before_commit(judged)
        return judged


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
