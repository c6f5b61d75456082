"""CSV export of a dmabench results file: one row per record (case), for spreadsheets (standard library only).

usage: export_csv.py RESULTS.json [--out FILE.csv] [--columns COL,COL,...]

Columns, in this order (results/SCHEMA.md has the meanings; a field a record lacks is an empty cell):
  name, status, pattern, in_place, engine, options, timing, pipeline_depth, devices, ranks, bytes, bytes_per_rank,
  host_memory.kind, host_memory.numa, layout.kind, rotate, beside, iterations, latency_us.p50, latency_us.p99,
  latency_us.mean, latency_us.min, latency_us.max, algbw_GBps, busbw_GBps, power.active_W, power.energy_per_op_J,
  power.energy_per_GB_J, overlap.comm_with_us, overlap.comm_slowdown_pct, overlap.compute_slowdown_pct,
  overlap.busbw_with_GBps, overlap.overlap_efficiency, reason
Latencies are microseconds, bandwidths 1e9 bytes per second (GB/s), power watts, energies joules. `options` is the
engine's options as option=value pairs joined by ',' (every option, defaults too); `devices` the devices of the
ranks separated by spaces (0 1: not 0,1, which some spreadsheets read as a decimal number); `beside` the workload
an overlap case ran beside. Skipped and failed records are rows too, their numbers empty and `reason` saying why.
--columns picks the columns and their order: the names above and any field of a record as its dotted path
(latency_us.p95, layout.block_bytes, engine_details.lanes_per_gpu); `default` stands for the list above, so
`--columns default,latency_us.p95` adds a column. An object or list in a cell is its compact JSON.
Writes to stdout, or to --out FILE whole (a temporary file renamed into place: an existing file is replaced only by
a complete one). A results file may also be given as its run's journal, `<file>.journal`; a results file with a
journal beside it (its run has not finished) is read from the journal when that holds more cases, with a note on
stderr (dmabench.load).

Exit codes: 0 written; 2 bad input: an unreadable or malformed results file, a bad argument (a column that is
neither above nor a field of any record), an output that cannot be written, with one line `export_csv.py: error: ...`
on stderr (never a traceback); 3 internal error; 130 interrupted (Ctrl-C).
"""
import csv
import io
import json
import sys

from .files import write_or_print
from .keys import beside
from .reader import load
from .text import quote, ResultsError
from .tool import arg_parser, run_tool

TOOL = "export_csv.py"
COLUMNS = ["name", "status", "pattern", "in_place", "engine", "options", "timing", "pipeline_depth", "devices", "ranks",
           "bytes", "bytes_per_rank", "host_memory.kind", "host_memory.numa", "layout.kind", "rotate", "beside",
           "iterations", "latency_us.p50", "latency_us.p99", "latency_us.mean", "latency_us.min", "latency_us.max",
           "algbw_GBps", "busbw_GBps", "power.active_W", "power.energy_per_op_J", "power.energy_per_GB_J",
           "overlap.comm_with_us", "overlap.comm_slowdown_pct", "overlap.compute_slowdown_pct",
           "overlap.busbw_with_GBps", "overlap.overlap_efficiency", "reason"]
MISSING = object()


def field(record, path):
    """The value at a dotted path of a record (`latency_us.p50`), or MISSING where any step is absent."""
    value = record
    for key in path.split("."):
        if not isinstance(value, dict) or key not in value:
            return MISSING
        value = value[key]
    return value


def text(value):
    """A cell: empty for absent or null, true/false, numbers as Python writes them (shortest exact form), strings as
    they are, objects and lists as compact JSON."""
    if value is MISSING or value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float, str)):
        return str(value) if not isinstance(value, float) else repr(value)
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def cell(record, column):
    if column == "options":
        options = record.get("options") or {}
        return ",".join(f"{k}={text(v)}" for k, v in options.items())
    if column == "devices":
        return " ".join(text(d) for d in record.get("devices") or [])
    if column == "beside":
        return beside(record)
    return text(field(record, column))


def columns(spec, records):
    """The columns --columns names (COLUMNS when none); ResultsError for a column no record has."""
    if spec is None:
        return list(COLUMNS)
    chosen = []
    for name in (c.strip() for c in spec.split(",")):
        for c in COLUMNS if name == "default" else [name]:
            if not c or (c not in COLUMNS and all(field(r, c) is MISSING for r in records)):
                raise ResultsError(f"--columns: {quote(c)} is neither a column of the export nor a field of any record; "
                                   "accepted: default, the columns --help lists, or a record field's dotted path "
                                   "(e.g. latency_us.p95)")
            if c not in chosen:
                chosen.append(c)
    return chosen


def export(doc, column_spec=None):
    """The CSV text of a results document: a header row, then one row per record in the file's order."""
    records = doc["results"]
    cols = columns(column_spec, records)
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    w.writerow(cols)
    for r in records:
        w.writerow([cell(r, c) for c in cols])
    return out.getvalue()


def main(argv=None, tool=TOOL):
    return run_tool(tool, run, argv)


def run(argv=None):
    ap = arg_parser(__doc__)
    ap.add_argument("results", help="a results file (or its journal)")
    ap.add_argument("--out", help="write the CSV to this file (default: stdout)")
    ap.add_argument("--columns", help="comma-separated columns (default: the list above; 'default' stands for it)")
    a = ap.parse_args(argv)
    if a.out is not None and not a.out:
        raise ResultsError("--out: empty file name; accepted: a file path")
    data = export(load(a.results), a.columns)
    write_or_print(a.out, data)
    return 0


if __name__ == "__main__":
    sys.exit(main())
