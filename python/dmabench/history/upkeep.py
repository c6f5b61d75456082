"""`history prune` and `history vacuum`: runs removed with all their rows in one transaction, and the file rebuilt
without its free pages (docs/history.md, "prune and vacuum")."""
import contextlib
import os

from ..text import printable, quote, ResultsError
from . import db
from .db import db_errors, retried, transaction
from .rows import now, utc

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

    with contextlib.closing(db.open_db(a.db, write=not a.dry_run)) as conn, db_errors(a.db):
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
    with contextlib.closing(db.open_db(a.db, write=True)) as conn, db_errors(a.db):
        before = os.path.getsize(a.db)
        retried(lambda: conn.execute("VACUUM"))
        after = os.path.getsize(a.db)
    print(printable(f"{a.db}: {before} -> {after} bytes"))
    return 0
