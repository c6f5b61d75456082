"""The history database file: its identity and schema version, the migrations, opening it, transactions, SQLite's
errors as one line, a busy database tried again, and storing a run (docs/history.md)."""
import contextlib
import json
import os
import random
import sqlite3
import stat
import time
import urllib.parse

from ..files import check_output
from ..text import ResultsError
from .rows import process_p50s

SCHEMA_VERSION = 3  # PRAGMA user_version of the databases this script writes
APPLICATION_ID = 0x646D6268  # PRAGMA application_id, "dmbh": the file is a dmabench history


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


def store_all(conn, runs):
    """Every run stored, in one transaction: [(run, status, run id)]."""
    with transaction(conn):
        return [(run, *store(conn, run)) for run in runs]
