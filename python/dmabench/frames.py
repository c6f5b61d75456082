"""pandas DataFrames of results files and history databases (the `frames` extra: pandas)."""
import contextlib
import json

from . import history
from .extras import require
from .keys import beside, case_key, machine_label, p50_interval, software_times, variant
from .reader import load


# to_frame's columns that make a case's identity beside its variant, in the order case_table adds them to a table's
# columns (those the table is keyed by already never differ within its cells); `case_key` (all of it, JSON) last
CASE_COLUMNS = ["pattern", "in_place", "timing", "bytes_per_rank", "ranks", "devices", "bytes", "rotate", "beside", "layout", "block_bytes", "blocks_per_op", "order",
                "host_kind", "numa", "file", "options", "case_key"]


def columns_apart(df, by, candidates=CASE_COLUMNS, unit=("file", "case_key")):
    """The columns of `candidates`, in order, that `by` needs so that no group of rows holds two cases (distinct
    `unit`: a case of one file, measured once or again): each taken where it differs within a group that still
    holds more than one. [] where every group of `by` holds one case already."""
    if df.empty:
        return []
    ident = df[list(unit)].astype(str).agg("\x1f".join, axis=1)
    keys, chosen = keyed(df, by), []
    for c in candidates:
        mixed = ident.groupby([keys[k] for k in by + chosen]).transform("nunique") > 1
        if not mixed.any():
            break
        if keys.loc[mixed].groupby([keys.loc[mixed, k] for k in by + chosen])[c].transform("nunique").gt(1).any():
            chosen.append(c)
    return chosen


def keyed(df, by):
    """`df` with missing values of every column a table may key on written "–" (pandas groups drop missing keys)."""
    frame = df.copy()
    for c in set(by) | set(CASE_COLUMNS) & set(df.columns):
        frame[c] = frame[c].astype(object).where(frame[c].notna(), "–")
    return frame


def case_table(df, values, index="bytes_per_rank", columns=("pattern", "in_place", "variant")):
    """A pivot of a to_frame frame (`values` per `index` and `columns`) whose every cell is one case: `columns` are
    extended by the identity columns (columns_apart) that differ among the cases that would share a cell (a 2-rank
    and a 4-rank all-gather: `ranks`; two files measuring one case: `file`), never averaged; a case measured more
    than once in one file (an overlap run measures it alone again per workload) is its median."""
    extra = columns_apart(df, [index, *columns])
    frame = keyed(df, [index, *columns, *extra])
    return frame.pivot_table(index=index, columns=[*columns, *extra], values=values, aggfunc="median")


def to_frame(paths, tool="dmabench"):
    """A tidy pandas DataFrame: one row per result of every file, with flat metric columns.

    Columns: file, machine, name, case_key (JSON text of case_key: the case's full identity), pattern, in_place,
    rotate, engine, variant, options (JSON text), devices (text), ranks,
    hardware_times (False for the software SDMA engine's CPU-thread times),
    bytes, bytes_per_rank, timing, status, reason, validated, clock, iterations, min/p50/mean/p95/p99/
    max/stddev (µs), algbw, busbw (GB/s), energy_per_GB_J, active_W, power_uncertainty, and
    p50_low / p50_high (µs: the p50's 95% interval), noise (its half-width over the p50), noisy, sampling (adaptive or
    fixed), stopped (noise, max_time, max_samples, iterations) and sampling_s (None in files without them),
    bd_control / bd_schedule / bd_copy / bd_sync / bd_total (µs) where a breakdown exists, and for
    overlap cases beside (the workload), compute_slowdown_pct, comm_with_us, comm_with_p99_us,
    comm_slowdown_pct, busbw_with, overlap_efficiency; and how the bytes lie and where the host buffers are:
    layout ("contiguous" or "blocks"), block_bytes, blocks_per_op, order, per_block_us, host_kind, numa,
    numa_node, host_verified (None where a record has no block layout or no host memory).
    """
    pd = require("frames", "pandas")  # only the DataFrame users need pandas

    def number(value):  # a number check_document checked: a float column, also for 10**30 written as an integer
        return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else value

    rows = []
    for path in paths:
        doc = load(path, tool)
        machine = machine_label(doc)
        for r in doc.get("results", []):
            lat = r.get("latency_us") or {}
            power = r.get("power") or {}
            bd = r.get("breakdown_us") or {}
            row = {"file": path, "machine": machine, "name": r.get("name"), "case_key": json.dumps(case_key(r)),
                   "pattern": r["pattern"],
                   "in_place": bool(r.get("in_place")), "rotate": r.get("rotate", 1),
                   "engine": r["engine"], "variant": variant(r), "options": json.dumps(r.get("options", {}), sort_keys=True),
                   "devices": ",".join(str(d) for d in r.get("devices", [])), "ranks": r.get("ranks"),
                   "bytes": r.get("bytes"), "bytes_per_rank": r["bytes_per_rank"], "timing": r["timing"],
                   "status": r["status"], "reason": r.get("reason", ""), "validated": r.get("validated"),
                   "clock": r.get("clock", "host"), "iterations": r.get("iterations"),
                   "algbw": number(r.get("algbw_GBps")), "busbw": number(r.get("busbw_GBps")),
                   "energy_per_GB_J": number(power.get("energy_per_GB_J")), "active_W": number(power.get("active_W")),
                   "power_uncertainty": number(power.get("uncertainty")), "hardware_times": not software_times(r)}
            for k in ("min", "p50", "mean", "p95", "p99", "max", "stddev"):
                row[k] = number(lat.get(k))
            interval = p50_interval(r) or (None, None)
            sampling = r.get("sampling") or {}
            row.update({"p50_low": number(interval[0]), "p50_high": number(interval[1]), "noise": number(r.get("noise")),
                        "noisy": r.get("noisy"), "sampling": sampling.get("mode"), "stopped": sampling.get("stopped"),
                        "sampling_s": number(sampling.get("seconds"))})
            for k in ("control", "schedule", "copy", "sync", "total"):
                row[f"bd_{k}"] = number(bd.get(k)) if "error" not in bd else None
            ov = r.get("overlap") or {}
            row["beside"] = beside(r)
            for k, col in (("compute_slowdown_pct", "compute_slowdown_pct"), ("comm_with_us", "comm_with_us"),
                           ("comm_with_p99_us", "comm_with_p99_us"), ("comm_slowdown_pct", "comm_slowdown_pct"),
                           ("busbw_with_GBps", "busbw_with"), ("overlap_efficiency", "overlap_efficiency")):
                row[col] = number(ov.get(k)) if "error" not in ov else None
            lay = r.get("layout") or {"kind": "contiguous"}
            host = r.get("host_memory") or {}
            row.update({"layout": lay.get("kind"), "block_bytes": lay.get("block_bytes"),
                        "blocks_per_op": lay.get("blocks_per_op"), "order": lay.get("order"),
                        "per_block_us": r.get("per_block_us"), "host_kind": host.get("kind"), "numa": host.get("numa"),
                        "numa_node": host.get("numa_node"), "host_verified": host.get("verified")})
            rows.append(row)
    return pd.DataFrame(rows)


def history_frame(db_path):
    """A pandas DataFrame of a history database (dmabench.history; docs/history.md has its tables): one row per
    (run, record), oldest run first. The run's context: run_id, started_at (a UTC datetime: context.started_at, else
    context.date), finished_at, host, revision, version, machine (the machine kind, as machine_label), backend, gpus,
    driver, config, source (the file it was imported from), imported_at; the record's idx (its place in the file),
    name, case_key (JSON text of case_key), pattern, engine, variant, place (where), bytes_per_rank, bytes, timing,
    status, reason, p50_us, p50_low_us, p50_high_us, noise, noisy (True / False / <NA> where not recorded),
    busbw_GBps, busbw_low_GBps, busbw_high_GBps, algbw_GBps, sampling, samples, setup_s, process_p50s (JSON text of
    the per-process p50s of a levels file's record, else None); and verdict, the gate's
    verdict on the case where `history.py gate --record` stored one (else None). The database is only read;
    ResultsError for one that is missing, not a dmabench history or of a newer schema version."""
    pd = require("frames", "pandas")
    with contextlib.closing(history.open_db(db_path, write=False)) as conn, history.db_errors(db_path):
        df = pd.read_sql_query(history.FRAME_QUERY, conn)
    df["started_at"] = pd.to_datetime(df["started_at"], utc=True)
    df["noisy"] = df["noisy"].astype("boolean")
    return df
