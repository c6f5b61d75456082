"""Shared helpers for the scripts that read dmabench results files (standard library only)."""
import json
import re

SCHEMA_PREFIX = "dmabench/"
PATTERN_ORDER = ["copy", "bidir", "allgather", "alltoall"]
UNITS = {"": 1, "b": 1, "k": 1024, "kib": 1024, "kb": 1000, "m": 1 << 20, "mib": 1 << 20, "mb": 10**6,
         "g": 1 << 30, "gib": 1 << 30, "gb": 10**9, "t": 1 << 40, "tib": 1 << 40, "tb": 10**12}


def load(path, tool):
    """The results document at `path`, of the schema major version these scripts read; exits with a
    one-line message naming `tool` when it is not one."""
    try:
        with open(path) as f:
            doc = json.load(f)
    except (OSError, ValueError) as e:
        raise SystemExit(f"{tool}: cannot read {path}: {e}")
    if not isinstance(doc, dict) or not str(doc.get("schema", "")).startswith(SCHEMA_PREFIX):
        raise SystemExit(f"{tool}: {path} is not a dmabench results file (no 'schema': 'dmabench/...')")
    check_schema(doc, path, tool)  # every script reads one major version
    return doc


def engine_options_in_name(result):
    """The engine options a case's name lists, as (option, value text) pairs in the name's order.

    dmabench names a case `<pattern>/engine[,option=value...]/timing/dev=.../size[/rotate=N][/beside=...]`,
    listing there exactly the options that differ from their defaults in its engine tables (which newer files
    also record as `context.engines`): the name alone says what was not a default, in every file. (Files written
    before dmabench 87e7502, results/h200x2/default.json, listed every option: 'sm,blocks=auto'.) The engine part
    ends at the record's own `/timing/dev=`, so a value with '/' in it (hsa's map:FILE) is read whole."""
    name, engine, timing = result["name"], result["engine"], result["timing"]
    rest = name.split("/", 1)[1] if "/" in name else ""
    end = rest.rfind(f"/{timing}/dev=")
    segment = rest[:end] if end >= 0 else ""
    if segment != engine and not segment.startswith(engine + ","):
        raise ValueError(f"case name {name!r} does not have the form pattern/{engine}[,option=value...]/{timing}/dev=...")
    pairs = re.split(r",(?=[A-Za-z_][A-Za-z0-9_]*=)", segment[len(engine) + 1:]) if segment != engine else []
    return [tuple(p.split("=", 1)) for p in pairs]


def variant(result):
    """Engine and its non-default options, as the case's name lists them (sorted): 'ce graph=true,schedule=pcpy';
    rotation over buffer sets is part of what was measured, so it is added ('ce rotate=3')."""
    opts = [f"{k}={v}" for k, v in sorted(engine_options_in_name(result))]
    rotate = result.get("rotate", 1)
    if rotate and rotate > 1:
        opts.append(f"rotate={rotate}")
    return result["engine"] + (" " + ",".join(opts) if opts else "")


def pattern_label(pattern, in_place=False):
    """How the scripts show a case's pattern: 'allgather', or 'allgather (in place)' when its `in_place` is true."""
    return f"{pattern} (in place)" if in_place else pattern


def placement(result):
    """A case's pattern and placement, (pattern, in_place): what the scripts group cases by."""
    return result["pattern"], bool(result.get("in_place"))


def placement_order(key):
    """Sort key of (pattern, in_place) pairs: PATTERN_ORDER, out of place before in place."""
    pattern, in_place = key
    return (PATTERN_ORDER.index(pattern) if pattern in PATTERN_ORDER else len(PATTERN_ORDER), pattern, in_place)


def fmt_size(n, compact=False):
    """'64 KiB' (or '64K' with compact=True, for axis ticks)."""
    for unit, f in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= f and n % f == 0:
            return f"{n // f}{unit[0]}" if compact else f"{n // f} {unit}"
    return f"{n}" if compact else f"{n} B"


def parse_size(text, tool):
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([a-zA-Z]*)\s*", text)
    if not m or m.group(2).lower() not in UNITS:
        raise SystemExit(f"{tool}: '{text}' is not a size such as 64KiB")
    return int(float(m.group(1)) * UNITS[m.group(2).lower()])


def table(header, rows):
    out = ["| " + " | ".join(header) + " |", "|" + " --- |" * len(header)]
    out += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(out)


SCHEMA_MAJOR = "dmabench/1"


def check_schema(doc, path, tool):
    """Exits with a clear message when the file's schema major version is not the one these scripts read."""
    if doc.get("schema") != SCHEMA_MAJOR:
        raise SystemExit(f"{tool}: {path} has schema {doc.get('schema')!r}; this script reads {SCHEMA_MAJOR!r}")


def beside(result):
    """The compute workload an overlap case ran beside ('gemm-bf16-8192x8192x8192'), or ''."""
    name = result.get("name", "")
    return name.split("/beside=", 1)[1] if "/beside=" in name else ""


def case_key(result):
    """The full identity of a case across runs: pattern and placement, engine, options, devices, bytes, timing,
    workload, rotation."""
    return (result["pattern"], bool(result.get("in_place")), result["engine"],
            json.dumps(result.get("options", {}), sort_keys=True), tuple(result.get("devices", [])), result.get("bytes"),
            result["bytes_per_rank"], result["timing"], beside(result), result.get("rotate", 1))


def machine_label(doc):
    """Short machine description from a results file's context: '2 x NVIDIA H200' or the host CPU."""
    ctx = doc.get("context", {})
    devices = ctx.get("machine", {}).get("devices", [])
    if devices:
        names = sorted({d.get("name", "?") for d in devices})
        return f"{len(devices)} x {'/'.join(names)}"
    return f"host {ctx.get('machine', {}).get('cpu', ctx.get('host', '?'))}"


def versions_caption(doc):
    """One line with the machine, software versions and dmabench revision of a results file."""
    ctx = doc.get("context", {})
    v = ctx.get("machine", {}).get("versions", {})
    parts = [machine_label(doc)]
    if v:
        parts.append(", ".join(f"{k.replace('_', ' ')} {val}" for k, val in v.items() if val))
    parts.append(f"dmabench {ctx.get('dmabench', {}).get('git_revision', '?')}, {ctx.get('date', '?')[:10]}")
    return "; ".join(parts)


def to_frame(paths, tool="dmabench_results"):
    """A tidy pandas DataFrame: one row per result of every file, with flat metric columns.

    Columns: file, machine, name, pattern, in_place, rotate, engine, variant, options (JSON text), devices (text), ranks,
    bytes, bytes_per_rank, timing, status, reason, validated, clock, iterations, min/p50/mean/p95/p99/
    max/stddev (µs), algbw, busbw (GB/s), energy_per_GB_J, active_W, power_uncertainty, and
    bd_control / bd_schedule / bd_copy / bd_sync / bd_total (µs) where a breakdown exists, and for
    overlap cases beside (the workload), compute_slowdown_pct, comm_with_us, comm_with_p99_us,
    comm_slowdown_pct, busbw_with, overlap_efficiency.
    """
    import pandas as pd  # only the DataFrame users need pandas

    rows = []
    for path in paths:
        doc = load(path, tool)
        machine = machine_label(doc)
        for r in doc.get("results", []):
            lat = r.get("latency_us") or {}
            power = r.get("power") or {}
            bd = r.get("breakdown_us") or {}
            row = {"file": path, "machine": machine, "name": r.get("name"), "pattern": r["pattern"],
                   "in_place": bool(r.get("in_place")), "rotate": r.get("rotate", 1),
                   "engine": r["engine"], "variant": variant(r), "options": json.dumps(r.get("options", {}), sort_keys=True),
                   "devices": ",".join(str(d) for d in r.get("devices", [])), "ranks": r.get("ranks"),
                   "bytes": r.get("bytes"), "bytes_per_rank": r["bytes_per_rank"], "timing": r["timing"],
                   "status": r["status"], "reason": r.get("reason", ""), "validated": r.get("validated"),
                   "clock": r.get("clock", "host"), "iterations": r.get("iterations"),
                   "algbw": r.get("algbw_GBps"), "busbw": r.get("busbw_GBps"),
                   "energy_per_GB_J": power.get("energy_per_GB_J"), "active_W": power.get("active_W"),
                   "power_uncertainty": power.get("uncertainty")}
            for k in ("min", "p50", "mean", "p95", "p99", "max", "stddev"):
                row[k] = lat.get(k)
            for k in ("control", "schedule", "copy", "sync", "total"):
                row[f"bd_{k}"] = bd.get(k) if "error" not in bd else None
            ov = r.get("overlap") or {}
            row["beside"] = beside(r)
            for k, col in (("compute_slowdown_pct", "compute_slowdown_pct"), ("comm_with_us", "comm_with_us"),
                           ("comm_with_p99_us", "comm_with_p99_us"), ("comm_slowdown_pct", "comm_slowdown_pct"),
                           ("busbw_with_GBps", "busbw_with"), ("overlap_efficiency", "overlap_efficiency")):
                row[col] = ov.get(k) if "error" not in ov else None
            rows.append(row)
    return pd.DataFrame(rows)
