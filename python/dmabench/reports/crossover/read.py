"""Reading the crossover map: the ok and validated block-layout records of the results files as cells. Owns what one
record says (its block size, block count and arrangement; its host memory; the SMs its mechanism holds; its p50
interval and that interval's coverage) and the grouping of the records by pattern, host memory, devices and
arrangement into cells (block size, block count, mechanism), a later record of a cell replacing an earlier one
(dmabench.reports.crossover.cli's docstring: the first paragraph, and 4 for SMs held and coverage)."""
import re

from ...keys import variant
from ...levels import median_ranks
from ...reader import load
from ...schema import check_kind
from ...text import quote, ResultsError

DMA_ENGINES = ("ce", "ce-batch", "sdma", "hsa")


def block_of(r, where):
    """(block_bytes, blocks_per_op, arrangement) of a block-layout record; None for another layout."""
    layout = r.get("layout")
    if layout is None:
        return None
    check_kind(layout, dict, f"{where}.layout")
    check_kind(layout.get("kind"), str, f"{where}.layout.kind")
    if layout["kind"] != "blocks":
        return None
    for field in ("block_bytes", "blocks_per_op"):
        check_kind(layout.get(field), int, f"{where}.layout.{field}", field == "blocks_per_op" and r["status"] != "ok")
        if layout.get(field) is not None and layout[field] <= 0:
            raise ResultsError(f"{where}.layout.{field}: expected a positive integer, got {layout[field]}")
    for field in ("stride_bytes", "pool_bytes", "seed"):
        check_kind(layout.get(field), int, f"{where}.layout.{field}", True)
    for field in ("order", "sides"):
        check_kind(layout.get(field), str, f"{where}.layout.{field}", True)
    order = layout.get("order")
    arrangement = (order, layout.get("stride_bytes") if order == "strided" else None,
                   layout.get("pool_bytes") if order == "random" else None,
                   layout.get("seed") if order == "random" else None, layout.get("sides") or "both")
    return layout["block_bytes"], layout.get("blocks_per_op"), arrangement


def host_of(r, where):
    """(kind, numa) of the record's host memory, or None for device memory."""
    h = r.get("host_memory")
    if h is not None:
        check_kind(h, dict, f"{where}.host_memory")
        check_kind(h.get("kind"), str, f"{where}.host_memory.kind")
        numa = h.get("numa", "local")
        if isinstance(numa, bool) or not isinstance(numa, (str, int)):
            raise ResultsError(f"{where}.host_memory.numa: expected a string or a node number, got {quote(numa, 40)}")
        return h["kind"], str(numa)
    m = re.search(r"/host=([^,/]+),numa=([^/]+)", r["name"])
    return (m.group(1), m.group(2)) if m else None


def sms_held(r, where):
    """(SMs the mechanism holds while it moves the blocks, or None; how that is known)."""
    engine = r["engine"]
    details = r.get("engine_details") if isinstance(r.get("engine_details"), dict) else {}
    if (engine in ("ce", "ce-batch") and r["pattern"] == "d2d" and (r.get("options") or {}).get("local") != "peer-bounce"
            and details.get("copy_kind") != "hipMemcpyDeviceToDeviceNoCU"):
        return None, "a copy within one GPU runs as a kernel on CUDA (results/LAB-NOTES.md): SMs held unknown"
    if engine in DMA_ENGINES:
        return 0, "DMA engine: no SM"
    if engine == "host":
        return None, "CPU threads, not SMs"
    if engine != "sm":
        return None, f"unknown for engine {engine}"
    details = r.get("engine_details")
    check_kind(details, dict, f"{where}.engine_details", True)
    details = details or {}
    for field in ("sm_budget", "grid_blocks", "sms_used", "multiprocessors"):
        check_kind(details.get(field), int, f"{where}.engine_details.{field}", True)
        if details.get(field) is not None and details[field] < 0:
            raise ResultsError(f"{where}.engine_details.{field}: expected an integer >= 0, got {details[field]}")
    if details.get("sms_used") is not None:
        return details["sms_used"], "engine_details.sms_used (measured)"
    grid, mps = details.get("grid_blocks"), details.get("multiprocessors")
    if grid is not None:
        return (min(grid, mps) if mps else grid), "engine_details.grid_blocks capped at multiprocessors"
    return None, "no engine_details.sms_used or grid_blocks"


WITHIN_COVERAGE = 0.95  # one process's own p50 interval (results/SCHEMA.md, "The p50's interval")


def coverage_of(r):
    """(coverage, what the interval is) of a record's p50 interval; (None, "no interval") without one. A levels
    file's interval is between its m processes, and what it covers is levels.median_ranks' (3 processes: [min, max],
    75%), not the 95% of one process's own interval: labelling it 95% overstates it."""
    lv = r.get("levels")
    m = lv.get("processes") if isinstance(lv, dict) else None
    if isinstance(m, int) and not isinstance(m, bool) and m >= 2:
        j, k, coverage = median_ranks(m)
        what = f"[min, max] of {m} processes' p50s" if j == 1 else f"ranks {j} and {k} of {m} processes' sorted p50s"
        return coverage, what
    if r.get("p50_interval_us"):
        return WITHIN_COVERAGE, "within one process"
    return None, "no interval"


def entry_of(r, where):
    """What a decision needs of one counted record."""
    p50 = r["latency_us"]["p50"]
    pair = r.get("p50_interval_us")
    held, how = sms_held(r, where)
    coverage, what = coverage_of(r) if pair else (None, "no interval")
    return {"p50_us": p50, "interval": list(pair) if pair else [p50, p50], "interval_recorded": bool(pair),
            "coverage": coverage, "interval_kind": what,
            "noisy": r.get("noisy"), "engine": r["engine"], "sms_held": held, "sm_note": how,
            "record": r}  # the record itself: thresholds.py reads its options and CPU cost from it


def collect(paths, timing):
    """(groups by key, documents, notes) from the files."""
    groups, docs = {}, []
    notes = {"other_timing": 0, "not_counted": 0, "replaced": 0, "not_blocks": 0}
    for path in paths:
        doc = load(path)
        docs.append((path, doc))
        for i, r in enumerate(doc["results"]):
            where = f"{path}: results[{i}]"
            block = block_of(r, where)
            if block is None:
                notes["not_blocks"] += 1
                continue
            check_kind(r.get("validated"), bool, f"{where}.validated", True)
            host = host_of(r, where)
            if r["status"] != "ok" or r.get("validated") is False:
                notes["not_counted"] += 1
                continue
            if r["timing"] != timing:
                notes["other_timing"] += 1
                continue
            size, count, arrangement = block
            key = (r["pattern"], bool(r.get("in_place")), host, tuple(r["devices"]), arrangement)
            group = groups.setdefault(key, {"cells": {}, "replaced": 0})
            cell = (size, count, variant(r))
            group["replaced"] += cell in group["cells"]
            notes["replaced"] += cell in group["cells"]
            group["cells"][cell] = entry_of(r, where)
    return groups, docs, notes
