"""The checks of a results document (`dmabench/1`): what every record must hold, so that the commands never fail on
a malformed file with a traceback. check_number / check_kind / show are the checks' building blocks, also for
reports that check fields of their own."""
import json
import math
import os

from .keys import engine_options_in_name
from .text import INT64, ResultsError, quote


SCHEMA_PREFIX = "dmabench/"
SCHEMA_MAJOR = "dmabench/1"  # the major version every script reads
JOURNAL_SCHEMA = "dmabench-journal/1"  # the header of a results file's journal, `<out>.journal`


def _finite(value):
    """Whether a JSON number is a finite float; an integer too large for one is not (10**400)."""
    try:
        return math.isfinite(value)
    except OverflowError:
        return False


def check_number(value, where, positive=False, nullable=False):
    if value is None and nullable:
        return
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not _finite(value) or \
            (positive and value <= 0) or (not positive and value < 0 and where.rsplit(".", 1)[-1] not in SIGNED):
        want = "a positive number" if positive else "a finite number" if where.rsplit(".", 1)[-1] in SIGNED \
            else "a number >= 0"
        raise ResultsError(f"{where}: expected {want}{' or null' if nullable else ''}, got {show(value)}")


def check_kind(value, kind, where, nullable=False):
    names = {dict: "an object", list: "a list", str: "a string", bool: "true or false", int: "an integer"}
    if value is None and nullable:
        return
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise ResultsError(f"{where}: expected {names[kind]}{' or null' if nullable else ''}, got {show(value)}")
    if kind is int and not -INT64 <= value < INT64:  # what dmabench writes and pandas holds: 64-bit integers
        raise ResultsError(f"{where}: expected an integer of at most 64 bits, got {show(value)}")




def show(value):
    return quote(value, 40)


SIGNED = {"compute_slowdown_pct", "comm_slowdown_pct", "control", "schedule", "copy", "sync"}  # may be < 0
STATUSES = ("ok", "skipped", "failed")
LATENCY = ("min", "p50", "mean", "p95", "p99", "max", "stddev")
POWER_NUMBERS = {"active_W": False, "window_s": False, "energy_per_GB_J": True, "uncertainty": True,
                 "busy_fraction": True}  # field: may be null or absent
OVERLAP_NUMBERS = ("compute_slowdown_pct", "comm_with_us", "comm_with_p99_us", "busbw_with_GBps", "overlap_efficiency")
BREAKDOWN_NUMBERS = ("control", "schedule", "copy", "sync", "total", "aligned_fraction")


def check_document(doc, where=lambda i: f"results[{i}]"):
    """Raises ResultsError naming the first problem (`results[3].latency_us.p50: expected a positive number, got 0`)
    unless `doc` is a results document the scripts can use. What is checked (SCHEMA.md has the meanings):

    - top level: an object with `schema` exactly "dmabench/1", `context` an object, `results` a list of objects;
    - `context`: `date`, `host` strings and `dmabench`, `machine`, `machine.versions` objects, `machine.devices` a list
      of objects, each where present;
    - every record: `name`, `pattern`, `engine`, `timing` non-empty strings, `name` of the form
      `pattern/engine[,option=value...]/timing/dev=...`; `status` one of ok, skipped, failed; `bytes_per_rank` a
      positive integer; `options` an object; `devices` a list of integers; `bytes` an integer or null; `reason` a
      string; `in_place` true or false; `rotate` a positive integer (these four where present);
    - an `ok` record: `latency_us` an object whose min, p50, mean, p95, p99, max, stddev are finite numbers >= 0,
      p50 > 0; `algbw_GBps` and `busbw_GBps` finite numbers >= 0; where present (files written before them lack
      them): `p50_interval_us` two numbers >= 0 around the p50 (low <= p50 <= high), `algbw_interval_GBps` and
      `busbw_interval_GBps` two numbers >= 0 (the second may be null: unbounded), `noise` a number >= 0, `noisy`
      true or false, `sampling` an object with `mode` adaptive or fixed, `samples` a positive integer, `seconds` and
      `max_noise` numbers >= 0, `stopped` one of noise, max_time, max_samples, iterations, and `min_samples`,
      `min_time_s`, `max_time_s`, `max_samples` numbers >= 0 or null; and its figures agree with each other
      (check_consistent: algbw is bytes / p50, busbw / algbw the ratio of their intervals): a record that contradicts
      itself is refused, never taken as a reference;
    - `power`, `overlap`, `breakdown_us` where present: null or an object; unless it has `error`, its numbers the
      scripts read are finite (power: active_W, window_s, and energy_per_GB_J, uncertainty, busy_fraction or null;
      overlap: compute_slowdown_pct, comm_with_us, comm_with_p99_us, busbw_with_GBps, overlap_efficiency;
      breakdown_us: control, schedule, copy, sync, total > 0, and aligned_fraction or null). Slowdowns and breakdown phases may
      be negative; every other number must be >= 0.
    Records the scripts cannot use are an error, never dropped. `where(i)` names record i in the messages."""
    if not isinstance(doc, dict):
        raise ResultsError(f"not a dmabench results file: the top level is {type(doc).__name__}, not an object")
    if "schema" not in doc or not isinstance(doc["schema"], str) or not doc["schema"].startswith(SCHEMA_PREFIX):
        raise ResultsError(f"not a dmabench results file (no 'schema': '{SCHEMA_MAJOR}'; got {show(doc.get('schema'))})")
    if doc["schema"] != SCHEMA_MAJOR:
        raise ResultsError(f"has schema {quote(doc['schema'])}; these scripts read {SCHEMA_MAJOR!r}")
    for field, kind in (("context", dict), ("results", list)):
        if field not in doc:
            raise ResultsError(f"{field}: missing")
        check_kind(doc[field], kind, field)
    ctx = doc["context"]
    for field, kind in (("date", str), ("host", str), ("dmabench", dict), ("machine", dict)):
        if field in ctx:
            check_kind(ctx[field], kind, f"context.{field}")
    machine = ctx.get("machine", {})
    if "versions" in machine:
        check_kind(machine["versions"], dict, "context.machine.versions")
    if "devices" in machine:
        check_kind(machine["devices"], list, "context.machine.devices")
        for i, d in enumerate(machine["devices"]):
            check_kind(d, dict, f"context.machine.devices[{i}]")
    for i, r in enumerate(doc["results"]):
        check_record(r, where(i))
    validate_with_schema(doc, where)


SCHEMA_FILE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results.schema.json")
_validator = []  # the compiled validator, made once: [] not yet, [None] jsonschema missing, [validator]


def results_schema():
    """The machine-readable JSON Schema (draft 2020-12) of a results file, shipped in the package:
    dmabench/results.schema.json (results/SCHEMA.md has the meanings)."""
    with open(SCHEMA_FILE, encoding="utf-8") as f:
        return json.load(f)


def schema_validator():
    """A jsonschema validator of results_schema(), or None where the jsonschema package is missing (Debian:
    python3-jsonschema); check_document's own checks, which hold everything the schema holds, then stand alone."""
    if not _validator:
        try:
            import jsonschema
        except ImportError:
            _validator.append(None)
        else:
            _validator.append(jsonschema.Draft202012Validator(results_schema()))
    return _validator[0]


def schema_path(path, where=lambda i: f"results[{i}]"):
    """A jsonschema error's path (deque of keys and indices) as check_document names fields: results[3].latency_us.p50."""
    path, out = list(path), ""
    if len(path) >= 2 and path[0] == "results" and isinstance(path[1], int):
        out, path = where(path[1]), path[2:]
    for p in path:
        out += f"[{p}]" if isinstance(p, int) else f".{p}" if out else str(p)
    return out or "(top level)"


def validate_with_schema(doc, where=lambda i: f"results[{i}]"):
    """ResultsError naming the path of the first place `doc` breaks results.schema.json (in document order), where
    jsonschema is installed; nothing otherwise (check_document's own checks have run)."""
    validator = schema_validator()
    if validator is None:
        return
    errors = sorted(validator.iter_errors(doc), key=lambda e: [(isinstance(p, str), p) for p in e.absolute_path])
    if errors:
        e = errors[0]
        raise ResultsError(f"{schema_path(e.absolute_path, where)}: {quote(e.message, 200)} "
                           f"(results.schema.json: {'/'.join(map(str, e.absolute_schema_path))})")


def check_record(r, where):
    """One record of `results` (check_document says what is checked)."""
    check_kind(r, dict, where)
    for field in ("name", "pattern", "engine", "timing", "status", "bytes_per_rank", "options", "devices"):
        if field not in r:
            raise ResultsError(f"{where}.{field}: missing")
    for field in ("name", "pattern", "engine", "timing", "status"):
        check_kind(r[field], str, f"{where}.{field}")
        if not r[field]:
            raise ResultsError(f"{where}.{field}: expected a non-empty string, got \"\"")
    if r["status"] not in STATUSES:
        raise ResultsError(f"{where}.status: expected one of {', '.join(STATUSES)}, got {show(r['status'])}")
    check_kind(r["bytes_per_rank"], int, f"{where}.bytes_per_rank")
    if r["bytes_per_rank"] <= 0:
        raise ResultsError(f"{where}.bytes_per_rank: expected a positive integer, got {r['bytes_per_rank']}")
    check_kind(r["options"], dict, f"{where}.options")
    check_kind(r["devices"], list, f"{where}.devices")
    for j, d in enumerate(r["devices"]):
        check_kind(d, int, f"{where}.devices[{j}]")
    for field, kind, nullable in (("bytes", int, True), ("reason", str, False), ("in_place", bool, False),
                                  ("rotate", int, False)):
        if field in r:
            check_kind(r[field], kind, f"{where}.{field}", nullable)
    if r.get("rotate", 1) < 1:
        raise ResultsError(f"{where}.rotate: expected a positive integer, got {r['rotate']}")
    try:
        engine_options_in_name(r)
    except ValueError as e:
        raise ResultsError(f"{where}.name: {e}") from None
    if r["status"] == "ok":
        lat = r.get("latency_us")
        check_kind(lat, dict, f"{where}.latency_us")
        for k in LATENCY:
            check_number(lat.get(k), f"{where}.latency_us.{k}", positive=(k == "p50"))
        for k in ("algbw_GBps", "busbw_GBps"):
            check_number(r.get(k), f"{where}.{k}")
        check_interval(r, where)
        check_consistent(r, where)
    for part, fields in (("power", POWER_NUMBERS), ("overlap", dict.fromkeys(OVERLAP_NUMBERS, False)),
                         ("breakdown_us", {**dict.fromkeys(BREAKDOWN_NUMBERS, False), "aligned_fraction": True})):
        if part not in r or r[part] is None:
            continue
        check_kind(r[part], dict, f"{where}.{part}")
        if "error" in r[part]:
            check_kind(r[part]["error"], str, f"{where}.{part}.error")
            continue
        for k, nullable in fields.items():
            check_number(r[part].get(k), f"{where}.{part}.{k}", positive=(k == "total"), nullable=nullable)


SAMPLING_MODES = ("adaptive", "fixed")
STOPS = ("noise", "max_time", "max_samples", "iterations")


def _pair(value, where, open_high=False):
    """Two numbers >= 0 (`open_high`: the second may be null); ResultsError otherwise."""
    if not isinstance(value, list) or len(value) != 2:
        raise ResultsError(f"{where}: expected a list of two numbers, got {show(value)}")
    check_number(value[0], f"{where}[0]")
    check_number(value[1], f"{where}[1]", nullable=open_high)


def check_interval(r, where):
    """An ok record's p50 interval, bandwidth intervals, noise and sampling, where present (check_document)."""
    if "p50_interval_us" in r:
        _pair(r["p50_interval_us"], f"{where}.p50_interval_us")
        low, high = r["p50_interval_us"]
        if not low <= r["latency_us"]["p50"] <= high:
            _contradiction(r, where, "p50_interval_us", f"[{low:g}, {high:g}] does not hold the p50 "
                                                        f"{r['latency_us']['p50']:g}")
    for k in ("algbw_interval_GBps", "busbw_interval_GBps"):
        if k in r:
            _pair(r[k], f"{where}.{k}", open_high=True)
    if "noise" in r:
        check_number(r["noise"], f"{where}.noise")
    if "noisy" in r:
        check_kind(r["noisy"], bool, f"{where}.noisy")
    if "sampling" not in r:
        return
    s = r["sampling"]
    check_kind(s, dict, f"{where}.sampling")
    for field, allowed in (("mode", SAMPLING_MODES), ("stopped", STOPS)):
        if s.get(field) not in allowed:
            raise ResultsError(f"{where}.sampling.{field}: expected one of {', '.join(allowed)}, got {show(s.get(field))}")
    check_kind(s.get("samples"), int, f"{where}.sampling.samples")
    if s["samples"] < 1:
        raise ResultsError(f"{where}.sampling.samples: expected a positive integer, got {s['samples']}")
    for k, nullable in (("seconds", False), ("max_noise", False), ("min_samples", True), ("min_time_s", True),
                        ("max_time_s", True), ("max_samples", True)):
        check_number(s.get(k), f"{where}.sampling.{k}", nullable=nullable)


FIGURES_REL_TOL = 1e-6  # how far an ok record's figures may stray from what they follow from (check_consistent)


def _contradiction(r, where, field, why):
    raise ResultsError(f"{where}.{field}: {why}: record {quote(r['name'], 60)} contradicts itself (edited?)")


def check_consistent(r, where):
    """An ok record whose figures contradict each other (check_interval has checked the p50 against its interval):
    `algbw_GBps` not bytes / (p50 x 1e3) within FIGURES_REL_TOL (unchecked where `bytes` is null or absent), or
    busbw / algbw (the pattern's factor) not the ratio of the busbw interval to the algbw interval where both are
    there: a p50 and algbw made 10x faster with their intervals left, say. ResultsError naming the record."""
    p50, size, algbw = r["latency_us"]["p50"], r.get("bytes"), r["algbw_GBps"]
    if size is not None and not math.isclose(algbw, size / (p50 * 1e3), rel_tol=FIGURES_REL_TOL):
        _contradiction(r, where, "algbw_GBps", f"{algbw:g} is not bytes / (p50 x 1e3) = {size / (p50 * 1e3):g}")
    algbw_pair, busbw_pair = r.get("algbw_interval_GBps"), r.get("busbw_interval_GBps")
    if not (algbw and algbw_pair and busbw_pair):
        return
    factor = r["busbw_GBps"] / algbw
    for a, b in zip(algbw_pair, busbw_pair):
        if a and b is not None and not math.isclose(factor, b / a, rel_tol=FIGURES_REL_TOL):
            _contradiction(r, where, "busbw_GBps", f"busbw / algbw is {factor:g}, its intervals' ratio {b / a:g}")
