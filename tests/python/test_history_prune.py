"""history prune and vacuum: prune keeps exactly the runs it should (per machine kind, by date), removes every row
of the others in one transaction, leaves a database that passes SQLite's checks and that gate and trend still read;
vacuum shrinks the file; bad input is one line, exit 2, and the database untouched."""
import hashlib
import json
import sqlite3

import pytest

from test_history import add_runs, run_at
from test_scripts import run, write

DAYS = [f"2026-01-{d:02d}T00:00:00Z" for d in range(1, 7)]


def digest(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


def starts(db):
    """{machine kind: [run starts, oldest first]} and the run ids the other tables still name."""
    with sqlite3.connect(db) as conn:
        kinds = {}
        for machine, started in conn.execute("SELECT machine, started_at FROM runs ORDER BY machine, started_at"):
            kinds.setdefault(machine, []).append(started[:10])
        ids = {r for (r,) in conn.execute("SELECT run_id FROM runs")}
        named = {r for t in ("records", "verdicts") for (r,) in conn.execute(f"SELECT DISTINCT run_id FROM {t}")}
        assert named <= ids, "rows of a removed run are left"
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        assert conn.execute("PRAGMA foreign_key_check").fetchall() == []
    return kinds


@pytest.fixture
def db(tmp_path):
    """Six runs of GPU X (days 1-6), three of GPU Y (days 1-3), with verdicts recorded for two of GPU X's."""
    docs = [run_at(day, {1024: 100.0 + i, 4096: 50.0}) for i, day in enumerate(DAYS[:4])]
    docs += [run_at(day, {1024: 300.0}, machine="GPU Y") for day in DAYS[:3]]
    path = add_runs(tmp_path, docs)
    for day in DAYS[4:]:
        p = run("history.py", "gate", write(tmp_path, f"g{day[:10]}.json", run_at(day, {1024: 101.0, 4096: 50.0})),
                "--db", path, "--record")
        assert p.returncode == 0, p.stdout + p.stderr
    return path


X, Y = "2 x GPU X", "2 x GPU Y"


def test_prune_keep_per_machine_kind_and_dry_run(db):
    kept = digest(db)
    p = run("history.py", "prune", "--db", db, "--keep", "2", "--dry-run")
    assert p.returncode == 0 and p.stdout.count("would remove ") == 5 and digest(db) == kept, p.stdout + p.stderr
    p = run("history.py", "prune", "--db", db, "--keep", "2")
    assert p.returncode == 0 and p.stdout.count("removed ") == 5, p.stdout + p.stderr
    assert "5 runs removed" in p.stdout
    assert starts(db) == {X: ["2026-01-05", "2026-01-06"], Y: ["2026-01-02", "2026-01-03"]}
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT count(*) FROM verdicts").fetchone()[0] == 4  # the gated runs' verdicts stay
    # a gate and a trend read what is left
    p = run("history.py", "gate", write(db.parent, "later.json", run_at("2026-02-01T00:00:00Z", {1024: 101.0})),
            "--db", db)
    assert p.returncode == 0 and "new    copy" in p.stdout, p.stdout + p.stderr  # 2 runs left, 3 needed
    p = run("history.py", "trend", "--db", db, "--case", "1024", "--json")
    assert p.returncode == 0 and len(json.loads(p.stdout)["series"]) == 2, p.stderr


def test_prune_since_and_one_machine_kind(db):
    p = run("history.py", "prune", "--db", db, "--since", "2026-01-03", "--machine", Y)
    assert p.returncode == 0, p.stderr
    assert starts(db) == {X: [d[:10] for d in DAYS], Y: ["2026-01-03"]}
    p = run("history.py", "prune", "--db", db, "--since", "2026-01-04T12:00:00+12:00")  # 2026-01-04T00:00Z
    assert p.returncode == 0, p.stderr
    assert starts(db) == {X: ["2026-01-04", "2026-01-05", "2026-01-06"]}
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT count(*) FROM verdicts").fetchone()[0] == 4
    p = run("history.py", "prune", "--db", db, "--keep", "1", "--machine", X)
    assert p.returncode == 0 and starts(db) == {X: ["2026-01-06"]}, p.stderr


def test_vacuum_shrinks_the_file(db):
    before = db.stat().st_size
    assert run("history.py", "prune", "--db", db, "--keep", "1").returncode == 0
    assert db.stat().st_size == before  # SQLite keeps the free pages
    p = run("history.py", "vacuum", "--db", db)
    assert p.returncode == 0 and f"{before} -> " in p.stdout, p.stdout + p.stderr
    assert db.stat().st_size < before
    assert starts(db) == {X: ["2026-01-06"], Y: ["2026-01-03"]}


@pytest.mark.parametrize("args", [["--keep", "-1"], ["--keep", "0"], ["--keep", "two"], ["--since", "yesterday"],
                                  ["--since", "2026-13-01"], [], ["--keep", "2", "--since", "2026-01-01"],
                                  ["--keep", "2", "--machine", "GPU Z"]])
def test_bad_prune_input_is_one_line_and_leaves_the_database(db, args):
    kept = digest(db)
    p = run("history.py", "prune", "--db", db, *args)
    assert p.returncode == 2 and p.stdout == "" and p.stderr.count("\n") == 1, p.stderr
    assert p.stderr.startswith("history.py: error: ") and digest(db) == kept


def test_prune_and_vacuum_refuse_a_missing_or_foreign_database(tmp_path):
    other = tmp_path / "other.sqlite"
    with sqlite3.connect(other) as conn:
        conn.execute("CREATE TABLE t (x)")
    kept = digest(other)
    for args in (["prune", "--keep", "1"], ["vacuum"]):
        p = run("history.py", *args, "--db", other)
        assert p.returncode == 2 and "not a dmabench history database" in p.stderr and digest(other) == kept
    p = run("history.py", "prune", "--keep", "1", "--dry-run", "--db", tmp_path / "none.sqlite")
    assert p.returncode == 2 and "no history database there" in p.stderr, p.stderr


def test_maintenance_refuses_a_missing_database_and_a_future_since(tmp_path):
    """Issue 51: prune and vacuum on a mistyped --db made an empty database and exited 0; prune --since a future date
    removed every run without a word. Both are refused (exit 2, one line) and nothing is made or removed."""
    missing = tmp_path / "typo.sqlite"
    for args in (["prune", "--keep", "3"], ["prune", "--since", "2026-01-01"], ["vacuum"]):
        p = run("history.py", *args, "--db", missing)
        assert p.returncode == 2 and p.stderr.count("\n") == 1 and "no history database there" in p.stderr, p.stderr
        assert not missing.exists()
    db = tmp_path / "h.sqlite"
    doc = run_at("2026-01-01T00:00:00Z", {1024: 100.0})
    (tmp_path / "r.json").write_text(json.dumps(doc))
    assert run("history.py", "add", tmp_path / "r.json", "--db", db).returncode == 0
    p = run("history.py", "prune", "--since", "2999-01-01", "--db", db)
    assert p.returncode == 2 and "in the future" in p.stderr and p.stderr.count("\n") == 1, p.stderr
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT count(*) FROM runs").fetchone()[0] == 1
