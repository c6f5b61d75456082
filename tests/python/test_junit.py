"""JUnit XML: `compare --junit`, `history gate --junit` and `ab --junit` hand their test cases to the dmabench
program (dmabench.junit: `dmabench --junit-from - --junit FILE`), the only writer of the layout; the files validate
against tests/data/junit.xsd (lxml) and a JUnit parser reads them back (junitparser), whatever the case names hold; a
bad CASES.json is one line and exit 2; no program, no file and no work; `history gate --json`.
The program: DMABENCH_BINARY (ctest's scripts_* set it), else build/dmabench; the tests that need it skip without."""
import json
import os
import subprocess
import sys

import pytest

from test_history import add_runs, levels_at, run_at
from test_scripts import PACKAGE, ROOT, document, processes, result, run, with_interval, write
from test_version import binary

from dmabench import junit, program as program_module
from dmabench.text import ResultsError

XSD = os.path.join(ROOT, "tests", "data", "junit.xsd")
HOSTILE_NAME = "copy/ce\x01/<&>\"'/\n\ttab/\x7f/\ud800/\ufffe/é"


@pytest.fixture(autouse=True)
def program(monkeypatch):
    """The dmabench program, as DMABENCH_BINARY for this test and the commands it starts."""
    exe = binary()
    if exe is None:
        pytest.skip("no dmabench program (ctest passes DMABENCH_BINARY; or build/dmabench)")
    monkeypatch.setenv("DMABENCH_BINARY", exe)
    return exe


def schema():
    etree = pytest.importorskip("lxml.etree", reason="lxml is not installed (Debian: apt install python3-lxml): the "
                                                      "JUnit files cannot be validated against their schema")
    return etree, etree.XMLSchema(etree.parse(XSD))


def validate(path):
    """The file checked against the schema, and its counts against its test cases; the root element."""
    etree, xsd = schema()
    tree = etree.parse(str(path))
    xsd.assertValid(tree)
    for suite in tree.getroot().iter("testsuite"):
        cases = suite.findall("testcase")
        assert int(suite.get("tests")) == len(cases)
        for what in ("failures", "errors", "skipped"):
            tag = {"failures": "failure", "errors": "error", "skipped": "skipped"}[what]
            assert int(suite.get(what)) == sum(c.find(tag) is not None for c in cases), what
    return tree.getroot()


def parsed(path):
    """{name: (classname, outcome, message)} as junitparser reads the file (skips the test without junitparser)."""
    jp = pytest.importorskip("junitparser", reason="junitparser is not installed (apt: python3-junitparser)")
    out = {}
    for suite in jp.JUnitXml.fromfile(str(path)):
        for case in suite:
            result = case.result[0] if case.result else None
            out[case.name] = (case.classname, type(result).__name__ if result else "passed",
                              result.message if result else None)
    return out


def times(root):
    """{case name: its time in seconds} of a JUnit file's root."""
    return {c.get("name"): float(c.get("time")) for c in root.iter("testcase")}


def test_a_planted_bad_file_fails_validation(tmp_path):
    etree, xsd = schema()
    bad = [b"<testsuites><testsuite tests='1'><testcase name='x'/></testsuite></testsuites>",  # no suite name
           b"<testsuites><testsuite name='s' tests='1'><testcase/></testsuite></testsuites>",  # no case name
           b"<testsuites><testsuite name='s' tests='1'><testcase name='x' time='-1'/></testsuite></testsuites>",
           b"<testsuites><testsuite name='s' tests='x'/></testsuites>",
           b"<testsuites><testsuite name='s' tests='1'><testcase name='x'><skipped/><failure/></testcase>"
           b"</testsuite></testsuites>",
           b"<testsuites><testsuite name='s' tests='1'><case name='x'/></testsuite></testsuites>"]
    for text in bad:
        assert not xsd.validate(etree.fromstring(text)), text
    junit.write(tmp_path / "good.xml", [junit.Case("a", "copy.ce", 0.5), junit.Case("b", "copy.ce", 1, "skipped", "why")])
    good = (tmp_path / "good.xml").read_bytes()
    assert xsd.validate(etree.fromstring(good))
    broken = tmp_path / "broken.xml"
    broken.write_bytes(good.replace(b'tests="2"', b'tests="3"'))
    with pytest.raises(AssertionError):
        validate(broken)  # the counts must match the test cases
    with pytest.raises(etree.XMLSyntaxError):
        etree.fromstring(b"<testsuites><testsuite name='\x01'/></testsuites>")  # what the program's escape guards against


def test_names_with_control_characters_make_a_well_formed_file(tmp_path):
    path = tmp_path / "hostile.xml"
    junit.write(path, [junit.Case(HOSTILE_NAME, "copy.ce", 1e-5, "failure", "slower:\n\x02 <b>", "slower",
                                  "out \x1b[0m", (("p\x03", "\ud801\n"),)),
                       junit.Case("x" * 5000, "a.b", float("nan"), "skipped", "\x00"),
                       junit.Case("e", "\udcff.\uffff", -1, "error", "no \x1f record")],
                {"command": "compare", "new": "new\x7f\n.json"})
    root = validate(path)
    names = [c.get("name") for c in root.iter("testcase")]
    assert names[0] == "copy/ce\\x01/<&>\"'/\\n\\ttab/\\x7f/\\ud800/\\ufffe/é" and len(names[1]) == 5000
    assert root.find(".//failure").get("type") == "slower" and root.find(".//testcase").get("time") == "0.000010"
    first = root.find(".//testcase")
    assert first.find("system-out").text == "out \\x1b[0m" and first.find("failure").text == "slower:\n\\x02 <b>"
    assert [(p.get("name"), p.get("value")) for p in first.find("properties")] == [("p\\x03", "\\ud801\\n")]
    error = root.findall(".//testcase")[2]
    assert (error.get("classname"), error.get("time"), error.find("error").get("type")) == \
        ("\\udcff.\\uffff", "0.000000", "error")
    assert (root.get("errors"), root.get("failures"), root.get("skipped")) == ("1", "1", "1")
    suite = {p.get("name"): p.get("value") for p in root.find("testsuite").find("properties")}
    assert suite == {"command": "compare", "new": "new\\x7f\\n.json"}
    assert junit.case_seconds({"latency_us": {"p50": 15.0}}) == 1.5e-5 and junit.case_seconds({}) == 0.0
    got = parsed(path)
    assert got[names[0]] == ("copy.ce", "Failure", "slower:\\n\\x02 <b>")


def compare_docs():
    tag = {"tag": "\x01<&>\"'\n\ttab\x7f\ufffe"}  # an option value: in the case's name
    base = document([with_interval(result("copy", "ce", size, "oneshot", p50, options=tag if size == 1024 else None),
                                   0.01) for size, p50 in {1024: 10.0, 4096: 20.0, 8192: 30.0, 65536: 40.0}.items()])
    new = document([with_interval(result("copy", "ce", 1024, "oneshot", 12.0, options=tag), 0.01),  # slower
                    with_interval(result("copy", "ce", 4096, "oneshot", 15.0), 0.01),  # faster
                    with_interval(result("copy", "ce", 8192, "oneshot", 30.1), 0.01),  # same
                    with_interval(result("copy", "sm", 65536, "oneshot", 40.0), 0.01)])  # only in NEW
    new["results"][2]["sampling"]["seconds"] = 0.25
    return processes(base), processes(new)  # 8 processes a side: a change is judged on 8 + 8 draws


def test_compare_junit(tmp_path):
    base, new = compare_docs()
    out = tmp_path / "compare.xml"
    p = run("compare.py", write(tmp_path, "base.json", base), write(tmp_path, "new.json", new), "--junit", out)
    assert p.returncode == 1, p.stderr
    root = validate(out)
    suite = root.find("testsuite")
    assert (suite.get("name"), suite.get("tests"), suite.get("failures"), suite.get("skipped")) == \
        ("dmabench", "5", "1", "2")
    got = parsed(out)
    slower = [v for k, v in got.items() if k.startswith("copy/ce,tag=\\x01<&>\"'\\n\\ttab\\x7f\\ufffe/")]
    assert slower[0][:2] == ("copy.ce", "Failure") and slower[0][2].startswith("slower: p50 10.00 [9.86, 10.14] -> ")
    assert got["copy/ce/oneshot/dev=0,1/4096"] == ("copy.ce", "passed", None)
    assert got["copy/sm/oneshot/dev=0,1/65536"][1:] == ("Skipped", "only in NEW (not in BASE): not compared")
    assert got["copy/ce/oneshot/dev=0,1/65536"][1:] == ("Skipped", "only in BASE (not in NEW): not compared")
    assert times(root)["copy/ce/oneshot/dev=0,1/8192"] == 2  # sampling.seconds summed over the 8 processes
    # the markdown is printed as before; a --junit path that cannot be written is one line and exit 2
    assert "slower" in p.stdout
    p = run("compare.py", tmp_path / "base.json", tmp_path / "new.json", "--junit", tmp_path / "no" / "x.xml")
    assert p.returncode == 2 and p.stderr.count("\n") == 1 and "cannot write" in p.stderr, p.stderr


def gate_setup(tmp_path):
    docs = [run_at(f"2026-01-0{i + 1}T00:00:00Z", {1024: p, 4096: 50.0}) for i, p in enumerate([100, 101, 99, 100, 102, 98])]
    db = add_runs(tmp_path, docs)
    new = levels_at("2026-02-01T00:00:00Z", {1024: 120.0, 4096: 50.0, 16384: 7.0})  # 5 processes
    new["results"][1]["sampling"]["seconds"] = 1.5
    return db, write(tmp_path, "new.json", new)


def test_gate_junit_and_json(tmp_path):
    db, path = gate_setup(tmp_path)
    out = tmp_path / "gate.xml"
    p = run("history.py", "gate", path, "--db", db, "--junit", out)
    assert p.returncode == 1 and "slower  copy/ce/oneshot/dev=0,1/1024" in p.stdout, p.stdout + p.stderr
    root = validate(out)
    assert (root.get("tests"), root.get("failures"), root.get("skipped")) == ("3", "1", "0")
    got = parsed(out)
    assert got["copy/ce/oneshot/dev=0,1/1024"][:2] == ("copy.ce", "Failure")
    assert got["copy/ce/oneshot/dev=0,1/1024"][2].startswith("slower: p50 120.00 µs [117.60, 122.40] (between 5 processes)")
    assert got["copy/ce/oneshot/dev=0,1/4096"] == ("copy.ce", "passed", None)
    assert times(root)["copy/ce/oneshot/dev=0,1/4096"] == 1.5
    p = run("history.py", "gate", path, "--db", db, "--json")
    assert p.returncode == 1, p.stderr
    doc = json.loads(p.stdout)
    assert (doc["status"], doc["exit_code"], doc["rule"]["runs"]) == ("fail", 1, 10)
    (one,) = doc["runs"]
    assert one["counts"] == {"failed": 0, "slower": 1, "ambiguous": 0, "new": 1, "faster": 0, "same": 1}
    assert one["machine"] == "2 x GPU X"
    cases = {c["case"]: c for c in one["cases"]}
    fail = cases["copy/ce/oneshot/dev=0,1/1024"]
    assert (fail["verdict"], fail["p50_us"], fail["baseline"]["median_us"], fail["baseline"]["runs"]) == \
        ("slower", 120.0, 100.0, 6)
    assert fail["p50_interval_us"] == pytest.approx([117.6, 122.4]) and fail["judged_by"] == "between 5 processes"
    assert fail["message"].startswith("p50 120.00 µs") and fail["case_key"][0] == "copy"
    assert cases["copy/ce/oneshot/dev=0,1/16384"]["baseline"] is None
    assert cases["copy/ce/oneshot/dev=0,1/16384"]["verdict"] == "new"
    kept = db.read_bytes()  # a --junit path that cannot be written: refused before --record writes anything
    p = run("history.py", "gate", path, "--db", db, "--record", "--junit", db.parent / "no" / "gate.xml")
    assert p.returncode == 2 and p.stderr.count("\n") == 1 and "no such directory" in p.stderr, p.stderr
    assert db.read_bytes() == kept and p.stdout == ""
    passing = run_at("2026-02-01T00:00:00Z", {1024: 100.0})
    p = run("history.py", "gate", write(tmp_path, "ok.json", passing), "--db", db, "--json")
    assert p.returncode == 0 and json.loads(p.stdout)["status"] == "pass" and json.loads(p.stdout)["exit_code"] == 0


def test_gate_junit_never_names_the_database_or_its_journal(tmp_path):
    """Issue 51: `gate --junit h.sqlite` replaced the whole history with the XML (exit 0); the database, its journal,
    WAL and shared-memory files, and a link to the database are refused before any work, the database unchanged."""
    db, path = gate_setup(tmp_path)
    kept = db.read_bytes()
    link = tmp_path / "link.xml"
    link.symlink_to(db)
    hard = tmp_path / "hard.xml"
    os.link(db, hard)
    for target in (db, f"{db}-journal", f"{db}-wal", f"{db}-shm", link, hard):
        for extra in ([], ["--record"]):
            p = run("history.py", "gate", path, "--db", db, "--junit", target, *extra)
            assert p.returncode == 2 and p.stderr.count("\n") == 1 and "which this command reads" in p.stderr, \
                (target, p.stderr)
            assert db.read_bytes() == kept and p.stdout == ""
    assert not os.path.exists(f"{db}-journal")


def test_gate_record_with_a_junit_file_that_cannot_be_written_stores_nothing(tmp_path):
    """Issue 51: `gate --record --junit /dev/full` exited 2 with the run and its verdicts stored; the JUnit file is
    written inside the gate's transaction, so a write that fails rolls the run back: exit 2, the database unchanged."""
    if not os.path.exists("/dev/full"):
        pytest.skip("no /dev/full here")
    db, path = gate_setup(tmp_path)
    kept = db.read_bytes()
    p = run("history.py", "gate", path, "--db", db, "--record", "--junit", "/dev/full")
    assert p.returncode == 2 and p.stderr.count("\n") == 1 and "cannot write /dev/full" in p.stderr, p.stderr
    assert db.read_bytes() == kept and p.stdout == ""
    p = run("history.py", "gate", path, "--db", db, "--record", "--junit", tmp_path / "ok.xml")
    assert p.returncode == 1 and (tmp_path / "ok.xml").exists() and db.read_bytes() != kept


def test_a_records_figures_are_the_programs(tmp_path):
    """Issue 52 / 53: an ok case's figures as <properties>, from the record by the program's own record_properties
    (bench/output/junit.cpp, the only list of them: tests/test_junit_from.cpp checks they are the run's --junit's);
    the file validates, and Python holds neither the figure list nor any XML."""
    record = {"name": "a", "pattern": "allreduce", "engine": "nccl", "status": "ok", "bytes": 4096,
              "bytes_per_rank": 2048, "latency_us": {"p50": 12.5, "p99": 20.0}, "algbw_GBps": 0.5, "busbw_GBps": 0.75,
              "p50_interval_us": [12.0, 13.0], "busbw_interval_GBps": [0.7, None], "power": {"active_W": float("nan")},
              "sampling": {"samples": 40, "seconds": 0.25}, "noise": 0.01}
    want = [("bytes", "4096"), ("bytes_per_rank", "2048"), ("latency_us.p50", "12.5"), ("latency_us.p99", "20.0"),
            ("algbw_GBps", "0.5"), ("busbw_GBps", "0.75"), ("noise", "0.01"), ("sampling.samples", "40"),
            ("sampling.seconds", "0.25"), ("p50_interval_us.low", "12.0"), ("p50_interval_us.high", "13.0"),
            ("busbw_interval_GBps.low", "0.7")]
    path = tmp_path / "figures.xml"
    junit.write(path, [junit.Case("a", "allreduce.nccl", 0.25, record=record),
                       junit.Case("b", "copy.ce", 0, "skipped", "no GPU", record={**record, "status": "skipped"}),
                       junit.Case("c", "copy.ce", 0, properties=want[:1])])
    root = validate(path)
    a, b, c = root.find("testsuite").findall("testcase")
    assert [(p.get("name"), p.get("value")) for p in a.find("properties")] == want
    assert b.find("properties") is None and b.find("skipped").get("message") == "no GPU"
    assert [(p.get("name"), p.get("value")) for p in c.find("properties")] == want[:1]
    source = open(junit.__file__, encoding="utf-8").read()
    assert not hasattr(junit, "record_properties") and not hasattr(junit, "FIGURES")
    assert "xml.etree" not in source and "latency_us.p50" not in source, "dmabench.junit writes no XML itself"


def cases_file(tmp_path, doc):
    path = tmp_path / "cases.json"
    path.write_text(doc if isinstance(doc, str) else json.dumps(doc))
    return path


def test_a_bad_cases_json_is_one_line_and_exit_2(tmp_path, program):
    out = tmp_path / "out.xml"
    bad = [("{", "not valid JSON"), ([], "the document: [] is not an object"), ({}, "cases: missing or not a list"),
           ({"cases": [{"name": "n"}]}, "cases[0]: no 'classname'"),
           ({"cases": [{"name": "n", "classname": "a.b", "outcome": "slower"}]},
            "cases[0].outcome: 'slower' is not an outcome; accepted: passed, failure, skipped, error"),
           ({"cases": [{"name": "n", "classname": "a.b", "time": -1}]}, "cases[0].time: -1 is not a number"),
           ({"cases": [{"name": "n", "classname": "a.b", "properties": [["x"]], "record": {}}]},
            "cases[0]: both 'properties' and 'record'"),
           ({"cases": [], "suite": "x"}, "unknown key 'suite'"),
           ('{"cases": [], "cases": []}', "appears twice in one object")]
    for doc, want in bad:
        p = subprocess.run([program, "--junit-from", cases_file(tmp_path, doc), "--junit", out], capture_output=True,
                           text=True, timeout=60)
        assert p.returncode == 2 and p.stderr.count("\n") == 1 and want in p.stderr, (doc, p.stderr)
        assert p.stderr.startswith("dmabench: error: --junit-from ") and not out.exists() and not p.stdout, doc
    for args, want in ((["--junit-from", tmp_path / "none.json", "--junit", out], "cannot read it"),
                       (["--junit-from", cases_file(tmp_path, {"cases": []})], "needs --junit FILE"),
                       (["--junit-from", "-", "--junit", out, "--patterns", "copy"], "--junit-from and --patterns")):
        p = subprocess.run([program, *map(str, args)], capture_output=True, text=True, timeout=60, input="")
        assert p.returncode == 2 and p.stderr.count("\n") == 1 and want in p.stderr, (args, p.stderr)
    # through dmabench.junit: the program's line, after the path
    with pytest.raises(ResultsError, match=r"cannot write .*out\.xml: dmabench: error: --junit-from -: "
                                           r"cases\[0\]\.outcome: 'passd' is not an outcome"):
        junit.write(out, [junit.Case("a", "copy.ce", 0, "passd")])
    assert not out.exists()
    p = subprocess.run([program, "--junit-from", "-", "--junit", out], capture_output=True, text=True, timeout=60,
                       input=json.dumps({"cases": [{"name": "a", "classname": "copy.ce"}], "hostname": "h",
                                         "timestamp": "2026-12-04T07:10:00"}))
    assert p.returncode == 0 and not p.stderr, p.stderr
    assert 'timestamp="2026-12-04T07:10:00" hostname="h"' in out.read_text() and validate(out).get("tests") == "1"


def test_without_a_program_nothing_is_written_and_no_work_done(tmp_path, monkeypatch):
    """A --junit needs the dmabench program: none (or one without --junit-from) is one line and exit 2 before anything
    is written (gate --record stores nothing, ab starts no process)."""
    base, new = compare_docs()
    db, path = gate_setup(tmp_path)
    kept = db.read_bytes()
    old = tmp_path / "old-dmabench"
    old.write_text("#!/bin/sh\necho 'usage: dmabench --config FILE'\n")  # a build from before --junit-from
    old.chmod(0o755)
    for exe, want in ((tmp_path / "none", "not an executable file; needs the dmabench program"),
                      (old, "does not write JUnit from test cases (no --junit-from in its --help)")):
        monkeypatch.setenv("DMABENCH_BINARY", str(exe))
        out = tmp_path / "x.xml"
        for argv in (["compare.py", write(tmp_path, "base.json", base), write(tmp_path, "new.json", new)],
                     ["history.py", "gate", path, "--db", db, "--record"]):
            p = run(*argv, "--junit", out)
            assert p.returncode == 2 and p.stderr.count("\n") == 1 and want in p.stderr, (argv, p.stderr)
            assert not out.exists() and p.stdout == "" and db.read_bytes() == kept
    # ab: NEW's binary writes the file; one without the mode is refused before --out is made or a process starts
    p = subprocess.run([sys.executable, "-m", "dmabench", "ab", old, old, "--out", tmp_path / "ab", "--junit", out,
                        "--", "--patterns", "copy"], capture_output=True, text=True, timeout=300,
                       env=dict(os.environ, PYTHONPATH=PACKAGE))
    assert p.returncode == 2 and p.stderr.count("\n") == 1 and "does not write JUnit" in p.stderr, p.stderr
    assert not (tmp_path / "ab").exists() and not out.exists()


def test_find_program(tmp_path, monkeypatch):
    """DMABENCH_BINARY (an executable file), else dmabench on PATH, else the checkout's build/dmabench, else one line
    naming both ways."""
    def executable(path):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("#!/bin/sh\n")
        path.chmod(0o755)
        return path
    given = executable(tmp_path / "opt" / "dmabench")
    monkeypatch.setenv("DMABENCH_BINARY", str(given))
    assert program_module.find_program() == str(given)
    monkeypatch.setenv("DMABENCH_BINARY", str(tmp_path / "nothing"))
    with pytest.raises(ResultsError, match="not an executable file"):
        program_module.find_program()
    monkeypatch.delenv("DMABENCH_BINARY")
    on_path = executable(tmp_path / "bin" / "dmabench")
    monkeypatch.setenv("PATH", str(on_path.parent))
    assert program_module.find_program() == str(on_path)
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    monkeypatch.setattr(program_module, "checkout_root", lambda: str(tmp_path))
    with pytest.raises(ResultsError, match="needs the dmabench program: set DMABENCH_BINARY or put dmabench on PATH"):
        program_module.find_program()
    executable(tmp_path / "build" / "dmabench")
    assert program_module.find_program() == str(tmp_path / "build" / "dmabench")
