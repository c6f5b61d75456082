"""Runs and records as the rows the history stores (docs/history.md, "Tables"): a results document made into a
`runs` row and its `records` rows, checked before any database is opened; the files `add` reads."""
import datetime
import hashlib
import json
import math
import os
from collections import namedtuple

from ..files import JOURNAL_SUFFIX, JSON_SUFFIXES, read_bytes
from ..keys import case_key, machine_label, p50_interval, variant, where
from ..levels import process_draws
from ..reader import escape_surrogates, load, parse_json
from ..schema import SCHEMA_PREFIX
from ..text import quote, ResultsError

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


def now():
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


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
                    name.endswith(JSON_SUFFIXES) and is_results(path):
                found.append(path)
    if not found:
        raise ResultsError(f"{arg}: no dmabench results file under it")
    return found


def is_results(path):
    """Whether a .json file (or .json.xz, .json.gz: read decompressed) found in a directory is a dmabench results
    file: any file that claims so, and any that is not JSON (a truncated one: load says what is wrong); not a JSON
    document of another kind."""
    try:
        doc = parse_json(read_bytes(path))
    except (ValueError, RecursionError):
        return True
    return isinstance(doc, dict) and isinstance(doc.get("schema"), str) and doc["schema"].startswith(SCHEMA_PREFIX)


def runs_of(paths):
    """Every file read, checked and prepared before the database is opened: a bad one changes nothing."""
    return [prepare(load(p), p) for p in paths]
