"""The journal of a run that has not finished (`<out>.journal`, JSON Lines: a header with the context, then one
record per line) through scripts/dmabench.load and the scripts' command lines.

The header's context and the records are the real ones of results/h200x2/quick-case-pipeline.json (configs/quick.json
on 2 x H200), so the journals here have the shape dmabench writes.
"""
import json
import os
import sys

import pytest

from test_scripts import H200, SCRIPTS, run

import dmabench
from dmabench import ResultsError, load, read_journal

SOURCE = os.path.join(H200, "quick-case-pipeline.json")


@pytest.fixture(scope="module")
def real():
    with open(SOURCE, encoding="utf-8") as f:
        doc = json.load(f)
    ok = [r for r in doc["results"] if r["status"] == "ok" and r["engine"] == "ce" and r["pattern"] == "copy"]
    assert len(ok) >= 3
    return doc["context"], ok[:3]


@pytest.fixture(autouse=True)
def fresh_notes():
    """load notes each journal once per process; every test starts with none noted."""
    dmabench.reader._noted.clear()


def header(ctx, **change):
    return {"schema": "dmabench-journal/1", "results_schema": "dmabench/1", "context": ctx, **change}


def lines(*values):
    """JSON Lines text, each value on its own line, as dmabench appends them."""
    return "".join(json.dumps(v) + "\n" for v in values)


def write_journal(path, text):
    path.write_bytes(text if isinstance(text, bytes) else text.encode("utf-8"))
    return path


def write_results(path, context, records):
    path.write_text(json.dumps({"schema": "dmabench/1", "context": context, "results": records}, indent=1))
    return path


def test_a_journal_path_loads(tmp_path, real, capsys):
    context, records = real
    j = write_journal(tmp_path / "run.json.journal", lines(header(context), *records))
    doc = load(str(j))
    assert doc == {"schema": "dmabench/1", "context": context, "results": records}
    assert load(j) == doc  # a pathlib.Path too
    assert capsys.readouterr().err == ""


def test_a_header_only_journal_is_an_empty_run(tmp_path, real):
    context, _ = real
    j = write_journal(tmp_path / "run.json.journal", lines(header(context)))
    assert load(str(j))["results"] == []


def test_a_longer_journal_is_read_in_place_of_its_results_file(tmp_path, real, capsys):
    context, records = real
    out = write_results(tmp_path / "run.json", context, records[:1])
    write_journal(tmp_path / "run.json.journal", lines(header(context), *records))
    doc = load(str(out))
    assert doc["results"] == records
    err = capsys.readouterr().err
    assert err == (f"{out}.journal: the run that writes {out} has not finished; reading its journal "
                   f"(3 records, 1 in {out})\n")


def test_a_results_file_as_long_as_its_journal_is_read_silently(tmp_path, real, capsys):
    context, records = real
    for in_file, in_journal in ((3, 3), (3, 2), (2, 0)):
        out = write_results(tmp_path / "run.json", context, records[:in_file])
        write_journal(tmp_path / "run.json.journal", lines(header(context), *records[:in_journal]))
        assert load(str(out))["results"] == records[:in_file]
    assert capsys.readouterr().err == ""


def test_a_missing_or_unreadable_results_file_is_replaced_by_its_journal(tmp_path, real, capsys):
    context, records = real
    out = tmp_path / "run.json"
    write_journal(tmp_path / "run.json.journal", lines(header(context), *records))
    assert load(str(out))["results"] == records  # missing: the run died before its first rewrite
    out.write_text('{"schema": "dmabench/1", "context": {}, "resu')  # torn (never by dmabench: it renames)
    assert load(str(out))["results"] == records
    err = capsys.readouterr().err.splitlines()
    assert err == [f"{out}.journal: the run that writes {out} has not finished; reading its journal "
                   f"(3 records, 0 in {out})"]  # the same note, once


def test_a_missing_results_file_without_a_journal_is_the_usual_error(tmp_path):
    with pytest.raises(ResultsError, match=r"cannot read .*run\.json: \[Errno 2\]"):
        load(str(tmp_path / "run.json"))
    with pytest.raises(ResultsError, match=r"cannot read .*run\.json\.journal: \[Errno 2\]"):
        load(str(tmp_path / "run.json.journal"))  # the run ended: its journal is gone


def test_an_empty_journal_leaves_the_results_file(tmp_path, real, capsys):
    context, records = real
    out = write_results(tmp_path / "run.json", context, records[:2])
    j = write_journal(tmp_path / "run.json.journal", "")  # killed between creating the journal and its header
    assert load(str(out))["results"] == records[:2]
    assert capsys.readouterr().err == ""
    with pytest.raises(ResultsError, match=r"run\.json\.journal: line 1: no complete header line"):
        load(str(j))
    out.unlink()
    with pytest.raises(ResultsError, match=r"cannot read .*run\.json:"):  # nothing to read at all
        load(str(out))


TORN = {
    "not JSON, newline": lambda rec: json.dumps(rec)[:60] + "\n",
    "not JSON, no newline": lambda rec: json.dumps(rec)[:60],
    "JSON, no newline": lambda rec: json.dumps(rec),  # the newline is what completes a record
    "cut inside a UTF-8 character": lambda rec: json.dumps({**rec, "reason": "é"}, ensure_ascii=False)
    .encode("utf-8")[:-3],
}


@pytest.mark.parametrize("tear", TORN.values(), ids=TORN.keys())
def test_a_torn_last_line_is_ignored_and_reported(tmp_path, real, capsys, tear):
    context, records = real
    torn = tear(records[2])
    text = lines(header(context), *records[:2]).encode("utf-8") + (torn if isinstance(torn, bytes) else torn.encode())
    j = write_journal(tmp_path / "run.json.journal", text)
    assert load(str(j))["results"] == records[:2]
    assert capsys.readouterr().err == f"{j}: line 4 is torn (the run was killed while writing it); ignored\n"
    assert read_journal(str(j))[1] == 4

    out = write_results(tmp_path / "run.json", context, records[:1])
    assert load(str(out))["results"] == records[:2]
    assert capsys.readouterr().err == (f"{j}: the run that writes {out} has not finished; reading its journal "
                                       f"(2 records, 1 in {out}; its torn line 4 ignored)\n")


def test_a_torn_header_is_no_header(tmp_path, real):
    context, _ = real
    j = write_journal(tmp_path / "run.json.journal", json.dumps(header(context))[:50])
    assert read_journal(str(j)) == (None, 1)
    with pytest.raises(ResultsError, match=r"line 1: no complete header line"):
        load(str(j))


@pytest.mark.parametrize("bad", ["{\"name\": \"copy/ce/one", "", "not json", b"\xff\xfe"],
                         ids=["torn", "blank", "text", "not UTF-8"])
def test_a_bad_line_before_the_last_is_an_error_naming_it(tmp_path, real, bad):
    context, records = real
    text = (lines(header(context), records[0]).encode() + (bad if isinstance(bad, bytes) else bad.encode()) + b"\n" +
            lines(*records[1:]).encode())
    j = write_journal(tmp_path / "run.json.journal", text)
    with pytest.raises(ResultsError, match=r"run\.json\.journal: line 3: not (valid JSON|UTF-8)") as e:
        load(str(j))
    assert "\n" not in str(e.value) and "line 1" not in str(e.value)
    out = write_results(tmp_path / "run.json", context, records)  # beside a complete results file: still an error
    with pytest.raises(ResultsError, match=r"run\.json\.journal: line 3:"):
        load(str(out))


HEADERS = {
    "wrong schema": (lambda ctx: header(ctx, schema="dmabench/1"),
                     r"line 1: not a dmabench journal \(header 'schema' is 'dmabench/1', expected 'dmabench-journal/1'\)"),
    "no schema": (lambda ctx: {"results_schema": "dmabench/1", "context": ctx}, r"line 1: not a dmabench journal"),
    "newer journal": (lambda ctx: header(ctx, schema="dmabench-journal/2"), r"line 1: not a dmabench journal"),
    "not an object": (lambda ctx: [header(ctx)], r"line 1: the header is \[.*, not an object"),
    "no context": (lambda ctx: {"schema": "dmabench-journal/1", "results_schema": "dmabench/1"},
                   r"line 1: header\.context: missing"),
    "context not an object": (lambda ctx: header(ctx, context="x"), r"line 1: header\.context: expected an object"),
    "no results_schema": (lambda ctx: {"schema": "dmabench-journal/1", "context": ctx},
                          r"line 1: header\.results_schema: missing"),
    "newer results": (lambda ctx: header(ctx, results_schema="dmabench/2"),
                      r"line 1: header\.results_schema is 'dmabench/2'; these scripts read 'dmabench/1'"),
}


@pytest.mark.parametrize("make, message", HEADERS.values(), ids=HEADERS.keys())
def test_a_bad_header_is_an_error(tmp_path, real, make, message):
    context, records = real
    j = write_journal(tmp_path / "run.json.journal", lines(make(context), *records))
    with pytest.raises(ResultsError, match=r"run\.json\.journal: " + message):
        load(str(j))


def test_records_are_checked_as_in_a_results_file_and_named_by_line(tmp_path, real):
    context, records = real
    bad = json.loads(json.dumps(records[2]))
    bad["latency_us"]["p50"] = 0
    j = write_journal(tmp_path / "run.json.journal", lines(header(context), *records[:2], bad))
    with pytest.raises(ResultsError, match=r"run\.json\.journal: line 4: results\[2\]\.latency_us\.p50: expected a "
                                           r"positive number, got 0"):
        load(str(j))
    j.write_text(lines(header(context), records[0], 7, records[1]))
    with pytest.raises(ResultsError, match=r"line 3: results\[1\]: expected an object, got 7"):
        load(str(j))
    j.write_text(lines(header({**context, "date": 5}), *records))
    with pytest.raises(ResultsError, match=r"context\.date: expected a string"):
        load(str(j))


# ---- the scripts' command lines -------------------------------------------------------------------


def good_journal(tmp_path, real, name="run.json.journal"):
    context, records = real
    return write_journal(tmp_path / name, lines(header(context), *records) + json.dumps(records[0])[:40])


def test_summarize_and_compare_read_a_journal(tmp_path, real):
    j = good_journal(tmp_path, real)
    p = run("summarize.py", j)
    assert p.returncode == 0, p.stderr
    assert "| ce |" in p.stdout and "8.2" in p.stdout  # copy/ce/oneshot/4KiB: p50 8.2485 µs
    assert p.stderr == f"{j}: line 5 is torn (the run was killed while writing it); ignored\n"
    p = run("compare.py", j, j)
    assert p.returncode == 0, p.stderr
    assert "3 cases in both files; 3 same" in p.stdout


def test_the_scripts_read_a_results_file_through_its_longer_journal(tmp_path, real):
    context, records = real
    out = write_results(tmp_path / "run.json", context, records[:1])
    write_journal(tmp_path / "run.json.journal", lines(header(context), *records))
    note = (f"{out}.journal: the run that writes {out} has not finished; reading its journal "
            f"(3 records, 1 in {out})\n")
    p = run("summarize.py", out)
    assert p.returncode == 0, p.stderr
    assert p.stderr == note
    assert "64 KiB" in p.stdout  # the second record: in the journal only
    p = run("plot.py", out, "--out", tmp_path / "figs")  # loads each file twice: still one note
    assert p.returncode == 0, p.stderr
    assert p.stderr == note


BAD = {
    "bad middle line": lambda ctx, recs: lines(header(ctx), recs[0]) + "{oops\n" + lines(recs[1]),
    "wrong header schema": lambda ctx, recs: lines(header(ctx, schema="dmabench/1"), *recs),
    "header not an object": lambda ctx, recs: lines("dmabench-journal/1", *recs),
    "empty": lambda ctx, recs: "",
    "missing": None,
}


@pytest.mark.parametrize("make", BAD.values(), ids=BAD.keys())
@pytest.mark.parametrize("script", ["summarize.py", "compare.py"])
def test_a_bad_journal_is_one_line_and_exit_2(tmp_path, real, script, make):
    context, records = real
    j = tmp_path / "run.json.journal"
    if make:
        write_journal(j, make(context, records))
    p = run(script, *([j] if script == "summarize.py" else [j, j]))
    assert p.returncode == 2, p.stdout + p.stderr
    assert p.stdout == ""
    assert len(p.stderr.splitlines()) == 1
    assert p.stderr.startswith(f"{script}: error: {j}: line " if make else f"{script}: error: cannot read {j}: ")
    assert "Traceback" not in p.stderr
