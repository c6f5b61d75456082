"""JUnit XML of dmabench's verdicts, the file CI systems show per test (`compare --junit FILE`, `history gate --junit
FILE`; the dmabench binary's `--junit FILE` writes the same layout).

The layout (docs/user-guide.md, "JUnit XML"; tests/data/junit.xsd is its schema):

  <?xml version='1.0' encoding='utf-8'?>
  <testsuites name="dmabench" tests="T" failures="F" errors="0" skipped="S" time="SECONDS">
    <testsuite name="dmabench" tests="T" failures="F" errors="0" skipped="S" time="SECONDS" timestamp="ISO UTC"
               hostname="HOST">
      <properties><property name="command" value="compare"/>...</properties>
      <testcase name="CASE NAME" classname="PATTERN.ENGINE" time="SECONDS">
        <properties><property name="latency_us.p50" value="12.5"/>...</properties>        (optional: figures)
        <failure message="ONE LINE" type="slower">the same line, or more</failure>    (a failed case)
        <skipped message="WHY"/>                                                   (a skipped case)
        <system-out>the case's line</system-out>                                   (optional)
      </testcase>
    </testsuite>
  </testsuites>

Every text and attribute is written by xml.etree (which escapes &, <, >, quotes); the characters XML 1.0 does not
allow at all (control characters but tab, newline and carriage return; lone surrogates; U+FFFE, U+FFFF) are written
as `\\xNN` / `\\uNNNN` text, and newlines in names and messages (attributes) as `\\n`, so that any case name makes a
well-formed file.
"""
import datetime
import os
import re
import socket
import xml.etree.ElementTree as ET
from collections import namedtuple

from .files import write_file
from .text import ResultsError

SUITE = "dmabench"
# outcome: "passed", "failure", "skipped" or "error"; message: one line; kind: the failure's type (a verdict);
# output: the system-out text (optional); properties: (name, value) pairs, the case's figures (record_properties)
Case = namedtuple("Case", "name classname time outcome message kind output properties",
                  defaults=(0.0, "passed", "", "", "", ()))

# The figures of an ok record a test case carries, by their dotted paths in the record (bench/output/junit.cpp's
# record_properties: the same names, order and values).
FIGURES = ("bytes", "bytes_per_rank", "latency_us.p50", "latency_us.p99", "latency_us.mean", "latency_us.min",
           "latency_us.max", "algbw_GBps", "busbw_GBps", "noise", "sampling.samples", "sampling.seconds",
           "power.active_W", "power.energy_per_GB_J")


def record_properties(record):
    """An ok record's figures as (name, value) pairs, as the dmabench binary's --junit writes them: FIGURES where the
    record has them, then the ends of p50_interval_us and busbw_interval_GBps (`.low`, `.high`); values as
    export_csv writes cells. A record that is not ok: none."""
    from .export_csv import cell, text  # (here: export_csv's imports reach the reader)
    if not isinstance(record, dict) or record.get("status") != "ok":
        return ()
    out = [(p, cell(record, p)) for p in FIGURES]
    for interval in ("p50_interval_us", "busbw_interval_GBps"):
        ends = record.get(interval)
        if isinstance(ends, list) and len(ends) == 2:
            out += [(f"{interval}.low", text(ends[0])), (f"{interval}.high", text(ends[1]))]
    return tuple((name, value) for name, value in out if value != "")

_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\ud800-\udfff\ufffe\uffff]")


def _escape(match):
    c = ord(match.group())
    return f"\\x{c:02x}" if c < 0x100 else f"\\u{c:04x}"


def xml_text(value, attribute=False):
    """`value` as text XML 1.0 can hold; in an attribute (`attribute`) a line break is written `\\n`, `\\r`."""
    text = _NOT_XML.sub(_escape, str(value))
    return text.replace("\r", "\\r").replace("\n", "\\n").replace("\t", "\\t") if attribute else text


def seconds(value):
    """A time attribute: seconds as a decimal number (never negative, never inf or nan)."""
    try:
        value = float(value)
    except (TypeError, ValueError):
        return "0"
    return f"{value:.9f}".rstrip("0").rstrip(".") if value == value and 0 < value < 1e12 else "0"


def document(cases, properties=None, timestamp=None):
    """The ElementTree of `cases` (a list of Case) in one testsuite."""
    counts = {k: str(sum(c.outcome == o for c in cases)) for k, o in
              (("failures", "failure"), ("errors", "error"), ("skipped", "skipped"))}
    total = seconds(sum(float(seconds(c.time)) for c in cases))
    stamp = timestamp or datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S")
    root = ET.Element("testsuites", {"name": SUITE, "tests": str(len(cases)), **counts, "time": total})
    suite = ET.SubElement(root, "testsuite", {"name": SUITE, "tests": str(len(cases)), **counts, "time": total,
                                              "timestamp": stamp, "hostname": xml_text(socket.gethostname(), True)})
    if properties:
        props = ET.SubElement(suite, "properties")
        for name, value in properties.items():
            ET.SubElement(props, "property", {"name": xml_text(name, True), "value": xml_text(value, True)})
    for c in cases:
        case = ET.SubElement(suite, "testcase", {"name": xml_text(c.name, True),
                                                 "classname": xml_text(c.classname, True), "time": seconds(c.time)})
        if c.properties:
            props = ET.SubElement(case, "properties")
            for name, value in c.properties:
                ET.SubElement(props, "property", {"name": xml_text(name, True), "value": xml_text(value, True)})
        if c.outcome in ("failure", "error"):
            el = ET.SubElement(case, c.outcome, {"message": xml_text(c.message, True),
                                                 "type": xml_text(c.kind or c.outcome, True)})
            el.text = xml_text(c.message)
        elif c.outcome == "skipped":
            ET.SubElement(case, "skipped", {"message": xml_text(c.message, True)})
        if c.output:
            ET.SubElement(case, "system-out").text = xml_text(c.output)
    return ET.ElementTree(root)


def xml_bytes(cases, properties=None, timestamp=None):
    """The JUnit file's bytes (UTF-8, with its XML declaration)."""
    tree = document(cases, properties, timestamp)
    ET.indent(tree, space=" ")
    return ET.tostring(tree.getroot(), encoding="utf-8", xml_declaration=True) + b"\n"


def write(path, cases, properties=None):
    """Writes the JUnit file whole or not at all (dmabench.files.write_file: ResultsError, exit 2, where it cannot)."""
    write_file(path, xml_bytes(cases, properties))


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


def check_path(path):
    """ResultsError before any work where the JUnit file cannot be written: its directory is not there, or it is a
    directory (write_file says the rest when it writes)."""
    directory = os.path.dirname(os.fspath(path)) or "."
    if not os.path.isdir(directory) or os.path.isdir(path):
        raise ResultsError(f"cannot write {path}: {'a directory' if os.path.isdir(path) else 'no such directory'}; "
                           "accepted: a file in an existing directory")
