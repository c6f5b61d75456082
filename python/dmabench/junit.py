"""JUnit XML of dmabench's verdicts, the file CI systems show per test (`compare --junit FILE`, `history gate --junit
FILE`, `ab --junit FILE`): the test cases are made here, the file is written by the dmabench program.

The program is the only writer of the layout (docs/user-guide.md, "JUnit XML"; tests/data/junit.xsd is its schema):
its `--junit FILE` writes a run's cases, and `dmabench --junit-from CASES.json --junit FILE` (bench/output/
junit_from.hpp) the cases `write` sends it as JSON on its standard input — one escape of the text XML 1.0 cannot hold,
one element layout, one list of the figures an ok record's test case carries (its `record_properties`). This module
holds no XML: a Case is what a verdict says (name, classname, time, outcome, message, kind, output) and, optionally,
its figures, as (name, value) pairs or as the results record the program takes them from.

The program is the one `dmabench.program.find_program` finds (ab: its NEW binary); `check_path` refuses, before any
work, a JUnit path that cannot be written and a program that cannot write it.
"""
import json
import math
import os
import re
import subprocess
from collections import namedtuple

from .files import check_output
from .program import find_program
from .text import ResultsError

# outcome: "passed", "failure", "skipped" or "error"; message: one line; kind: the failure's type (a verdict);
# output: the system-out text (optional); properties: (name, value) pairs, the case's figures; record: or the results
# record the program takes them from (its ok figures; not with properties)
Case = namedtuple("Case", "name classname time outcome message kind output properties record",
                  defaults=(0.0, "passed", "", "", "", (), None))

PROGRAM_SECONDS = 300  # the program writes a file of thousands of cases in well under a second

# JSON text carries Unicode scalar values only: a lone surrogate (a results file's "\ud800") goes as its six
# characters, which is what the program writes of it
_SURROGATE = re.compile("[\ud800-\udfff]")


def _text(value):
    return _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", str(value))


def _seconds(value):
    """A time as the program takes it: seconds, a finite number >= 0 (0 for anything else)."""
    try:
        value = float(value)
    except (TypeError, ValueError):
        return 0.0
    return value if math.isfinite(value) and value >= 0 else 0.0


def _plain(value):
    """A record as JSON can carry it: its text sendable (_text), a number that is not finite null (as the results
    file holds it)."""
    if isinstance(value, dict):
        return {_text(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return _text(value) if isinstance(value, str) else value


def cases_json(cases, properties=None):
    """The program's CASES.json of `cases` (a list of Case) and the suite's `properties` ({name: value}), as bytes."""
    out = []
    for c in cases:
        case = {"name": _text(c.name), "classname": _text(c.classname), "time": _seconds(c.time), "outcome": c.outcome}
        case.update({k: _text(v) for k, v in (("message", c.message), ("kind", c.kind), ("output", c.output)) if v})
        if c.properties:
            case["properties"] = [[_text(name), _text(value)] for name, value in c.properties]
        if c.record is not None:
            case["record"] = _plain(c.record)
        out.append(case)
    doc = {"properties": [[_text(k), _text(v)] for k, v in (properties or {}).items()], "cases": out}
    return json.dumps(doc, allow_nan=False).encode("ascii")


def _last_line(data):
    lines = data.decode("utf-8", "backslashreplace").strip().splitlines()
    return lines[-1] if lines else "no message"


def check_program(program):
    """ResultsError where `program` cannot write JUnit from test cases: it does not run, or it is a dmabench without
    --junit-from (a build older than the mode)."""
    try:
        p = subprocess.run([program, "--help"], capture_output=True, timeout=PROGRAM_SECONDS)
    except (OSError, subprocess.SubprocessError) as e:
        raise ResultsError(f"--junit: cannot run the dmabench program {program}: {getattr(e, 'strerror', None) or e}; "
                           "set DMABENCH_BINARY to a dmabench of this version") from None
    if p.returncode != 0 or b"--junit-from" not in p.stdout:
        raise ResultsError(f"--junit: {program} does not write JUnit from test cases (no --junit-from in its --help): "
                           "set DMABENCH_BINARY to a dmabench of this version")


def write(path, cases, properties=None, program=None):
    """Writes the JUnit file of `cases` (a list of Case) whole or not at all, through the dmabench program (`program`,
    else find_program()): `dmabench --junit-from - --junit PATH`. The suite's `properties`: {name: value}, in order.
    Any failure is a ResultsError `cannot write PATH: why` (exit 2)."""
    path = os.fspath(path)
    try:
        st = os.stat(path)
    except OSError:
        st = None
    check_output(path, st)  # never a file this command read (the program knows its own inputs only)
    program = program or find_program()
    data = cases_json(cases, properties)
    try:
        p = subprocess.run([program, "--junit-from", "-", "--junit", path], input=data, capture_output=True,
                           timeout=PROGRAM_SECONDS)
    except (OSError, subprocess.SubprocessError) as e:
        raise ResultsError(f"cannot write {path}: cannot run {program}: {getattr(e, 'strerror', None) or e}") from None
    if p.returncode != 0:
        raise ResultsError(f"cannot write {path}: {_last_line(p.stderr)}")


def classname(record):
    """A case's classname: `pattern.engine` of its record (engine `none` where it has none)."""
    return f"{record.get('pattern') or 'unknown'}.{record.get('engine') or 'none'}"


def _positive(value):
    return isinstance(value, (int, float)) and not isinstance(value, bool) and 0 < value < 1e12


def case_seconds(record):
    """A test case's time: the record's sampling wall time (`sampling.seconds`), else its p50 in seconds, else 0."""
    sampling = record.get("sampling") if isinstance(record, dict) else None
    t = sampling.get("seconds") if isinstance(sampling, dict) else None
    if _positive(t):
        return t
    latency = record.get("latency_us") if isinstance(record, dict) else None
    p50 = latency.get("p50") if isinstance(latency, dict) else None
    return p50 / 1e6 if _positive(p50) else 0.0


def check_path(path, program=None):
    """ResultsError before any work where the JUnit file cannot be written: its directory is not there, it is a
    directory, or there is no dmabench program that writes it (`program`, else find_program(); check_program). Returns
    the program (write's `program`); write says the rest when it writes."""
    directory = os.path.dirname(os.fspath(path)) or "."
    if not os.path.isdir(directory) or os.path.isdir(path):
        raise ResultsError(f"cannot write {path}: {'a directory' if os.path.isdir(path) else 'no such directory'}; "
                           "accepted: a file in an existing directory")
    program = program or find_program()
    check_program(program)
    return program
