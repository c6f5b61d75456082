"""Thresholds a serving engine can load: `dmabench-results crossover export` (issue 54, item 5; standard library only).

usage: dmabench-results crossover export [--out FILE] [--timing oneshot|pipelined] RESULTS.json [more.json ...]

Writes one small versioned JSON ("schema": "dmabench-thresholds", "version": 1; the JSON Schema is the package's
thresholds.schema.json, the fields are described in docs/thresholds.md) that says, per platform (backend, device
name, driver and runtime versions from each file's context.machine: files of different platforms are never mixed),
per table (direction = the records' pattern, host kind, NUMA request, devices, block arrangement), which mechanism
(the engine with its non-default options, as the crossover report labels it; with its coalescing and SM budget where
the records say so) is fastest where, by how much, and at what SM and CPU cost:

- `regions`: per blocks per call n, the runs of consecutive block sizes with one winner (ties a run of their own),
  each with its cells. The decisions are the crossover report's own (reports.crossover: collect, analyse; the rule
  is not written twice here): winner = lowest p50; a tie where another mechanism's p50 interval overlaps the
  winner's; margin = runner-up p50 / winner p50, with `margin_interval` = [runner-up interval low / winner interval
  high, runner-up high / winner low] from the same p50 intervals (levels files: between-process intervals, their
  coverage in `interval_coverage`).
- per cell the winner's SM cost (SMs held x p50, SM·µs; 0 for DMA engines, null where unknown) and its CPU µs per
  call: the record's `breakdown.submit_us` (CPU time inside the issuing calls per operation, issue 54 item 1) or
  else `breakdown_us.control` (host time inside launch(), the oneshot copy breakdown); null where the record carries
  neither.
- `crossovers`: per n and (sm variant, DMA variant) pair, the report's thresholds (kernel wins up to / below, DMA
  wins from).

Lookup (pick): n is taken down to the largest measured n <= n (the smallest measured where n is below all), then the
block size down to the largest measured size <= B among that n's cells (the smallest where B is below all): a step
lookup, never an interpolation, so a point between grid points gets the decision of the grid point below it.

Exit codes: 0 written; 2 bad input: an unreadable or malformed results file, no block-layout records ok and
validated at the timing, or an output path that cannot be written, with one line `<tool>: error: ...` on stderr.
"""
import os
import sys

from ..files import write_file
from ..reader import load
from ..text import json_text, ResultsError
from ..tool import arg_parser, fail, run_tool
from . import crossover

TOOL = "dmabench-results crossover"
SCHEMA = "dmabench-thresholds"
VERSION = 1
SCHEMA_FILE = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "thresholds.schema.json")


# ---- reading --------------------------------------------------------------------------------------

def platform_of(doc):
    """(backend, device, driver, runtime) of a results document's machine; device names joined with '+' where a
    machine holds several kinds; null where the context does not say."""
    ctx = doc["context"]
    machine = ctx.get("machine") if isinstance(ctx.get("machine"), dict) else {}
    versions = machine.get("versions") if isinstance(machine.get("versions"), dict) else {}
    devices = machine.get("devices") if isinstance(machine.get("devices"), list) else []
    names = sorted({d["name"] for d in devices if isinstance(d, dict) and isinstance(d.get("name"), str)})
    device = "+".join(names) or (machine.get("cpu") if isinstance(machine.get("cpu"), str) else None)
    driver = next((versions[k] for k in ("nvidia_driver", "amdgpu_driver", "hip_driver")
                   if isinstance(versions.get(k), str)), None)
    runtime = next((versions[k] for k in ("cuda_runtime", "hip_runtime") if isinstance(versions.get(k), str)), None)
    backend = ctx.get("backend") if isinstance(ctx.get("backend"), str) else None
    return backend, device, driver, runtime


def number(x):
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def cpu_per_call(r):
    """(CPU µs per call, the field it came from) of a record; (None, None) where it carries none."""
    b = r.get("breakdown")
    if isinstance(b, dict) and number(b.get("submit_us")):
        return b["submit_us"], "breakdown.submit_us"
    b = r.get("breakdown_us")
    if isinstance(b, dict) and number(b.get("control")):
        return b["control"], "breakdown_us.control"
    return None, None


def mechanism_of(r, held):
    """What a serving engine needs to know of a mechanism, from one of its records."""
    options = r.get("options") if isinstance(r.get("options"), dict) else {}
    budget = None
    if r["engine"] == "sm":
        details = r.get("engine_details") if isinstance(r.get("engine_details"), dict) else {}
        budget = details.get("sm_budget") if number(details.get("sm_budget")) else options.get("sms")
        budget = budget if number(budget) or budget == "all" else None
    coalesce = options.get("coalesce") if isinstance(options.get("coalesce"), bool) else None
    holds = None if held is None else held > 0
    return {"engine": r["engine"], "coalesce": coalesce, "sm_budget": budget, "holds_sms": holds, "options": options}


# ---- one table ------------------------------------------------------------------------------------

def margin_interval(row):
    """[runner-up low / winner high, runner-up high / winner low] of a decision row; None without a runner-up."""
    if row["runner_up"] is None:
        return None
    (wl, wh), (rl, rh) = (row["mechanisms"][m]["p50_interval_us"] for m in (row["winner"], row["runner_up"]))
    return [rl / wh if wh > 0 else None, rh / wl if wl > 0 else None]


def cell_of(row, cells):
    """The exported cell of one decision row (crossover.decide) and the group's entries `cells`."""
    win = row["mechanisms"][row["winner"]]
    entry = cells[(row["block_bytes"], row["blocks_per_op"], row["winner"])]
    cpu, source = cpu_per_call(entry["record"])
    return {"block_bytes": row["block_bytes"], "mechanism": row["winner"], "tie": row["tie"], "tied": row["tied"],
            "runner_up": row["runner_up"], "margin": row["margin"], "margin_interval": margin_interval(row),
            "p50_us": win["p50_us"], "p50_interval_us": win["p50_interval_us"],
            "interval_coverage": win["interval_coverage"], "sms_held": win["sms_held"],
            "sm_cost_SM_us": win["sm_cost_SM_us"], "cpu_us_per_call": cpu, "cpu_source": source}


def regions_of(g, cells):
    """The table's regions: crossover.regions_of's runs, each with its cells."""
    by_n = {}
    for row in g["cells"]:
        by_n.setdefault(row["blocks_per_op"], []).append(row)
    out = []
    for per_n in g["regions"]:
        n, rows = per_n["blocks_per_op"], by_n[per_n["blocks_per_op"]]
        for run in per_n["runs"]:
            inside = [cell_of(r, cells) for r in rows if run["from_bytes"] <= r["block_bytes"] <= run["to_bytes"]]
            out.append({"blocks_per_op": n, "from_bytes": run["from_bytes"], "to_bytes": run["to_bytes"],
                        "winner": None if run["winner"] == "tie" else run["winner"], "tied": run["tied"],
                        "margin_min": run["margin_min"], "margin_max": run["margin_max"], "cells": inside})
    return out


def table_of(key, group):
    """The exported table of one crossover group."""
    g = crossover.analyse(key, group, 0.10, 0.25)
    cells = group["cells"]
    mechanisms = {}
    for (_, _, m), e in sorted(cells.items(), key=lambda kv: kv[0]):
        mechanisms.setdefault(m, mechanism_of(e["record"], e["sms_held"]))
    keep = ("blocks_per_op", "kernel", "dma", "kernel_wins_up_to_bytes", "kernel_wins_below_bytes",
            "dma_wins_from_bytes", "single_crossover")
    return {"direction": g["pattern"], "in_place": g["in_place"], "host_kind": g["host_kind"], "numa": g["numa"],
            "devices": g["devices"], "arrangement": g["arrangement"], "title": g["title"],
            "mechanisms": mechanisms, "block_sizes": g["block_sizes"], "blocks_per_op": g["blocks_per_op"],
            "regions": regions_of(g, cells), "crossovers": [{k: t[k] for k in keep} for t in g["thresholds"]]}


# ---- the document ---------------------------------------------------------------------------------

def export(paths, timing="oneshot"):
    """The thresholds document of the results files `paths`; ResultsError where none holds a block record."""
    platforms, sources = {}, []
    for path in paths:
        doc = load(path)
        platforms.setdefault(platform_of(doc), []).append(path)
        revision = doc["context"].get("dmabench", {}).get("git_revision")
        sources.append({"path": path, "git_revision": revision if isinstance(revision, str) else None})
    out = []
    for (backend, device, driver, runtime), files in platforms.items():
        groups, _, _ = crossover.collect(files, timing)
        if groups:
            tables = [table_of(k, groups[k]) for k in sorted(groups, key=crossover.group_order)]
            out.append({"backend": backend, "device": device, "driver": driver, "runtime": runtime,
                        "sources": files, "tables": tables})
    if not out:
        raise ResultsError(f"no block-layout records (layout.kind \"blocks\") ok and validated at timing {timing} in "
                           f"{', '.join(paths)}; accepted: results of a crossover sweep (configs/crossover.json)")
    return {"schema": SCHEMA, "version": VERSION, "timing": timing, "sources": sources, "platforms": out}


def check_version(doc):
    """`doc` if it is a thresholds document of this version; ValueError naming what it is otherwise."""
    if not isinstance(doc, dict) or doc.get("schema") != SCHEMA:
        raise ValueError(f"not a {SCHEMA} document")
    if doc.get("version") != VERSION:
        raise ValueError(f"{SCHEMA} version {doc.get('version')!r}; this reader knows version {VERSION}")
    return doc


def tables_for(doc, direction, host_kind=None, device=None, driver=None):
    """The tables of `doc` for `direction` (and host kind, device, driver where given)."""
    return [t for p in check_version(doc)["platforms"] if device in (None, p["device"]) and driver in (None, p["driver"])
            for t in p["tables"] if t["direction"] == direction and host_kind in (None, t["host_kind"])]


def step(values, x):
    """The largest of the sorted `values` <= x, or the smallest where x is below all."""
    below = [v for v in values if v <= x]
    return below[-1] if below else values[0]


def pick(doc, direction, block_bytes, n, host_kind=None, device=None, driver=None):
    """The exported cell (winner "mechanism", "tie", "tied", "margin", costs) for a call of `n` blocks of
    `block_bytes` (the step lookup of the module's docstring); ValueError where no table or more than one fits."""
    tables = tables_for(doc, direction, host_kind, device, driver)
    if len(tables) != 1:
        said = ", ".join(f"{t['direction']}/{t['host_kind']}" for t in tables) or "none"
        raise ValueError(f"{len(tables)} tables fit direction {direction!r} host kind {host_kind!r} device "
                         f"{device!r} driver {driver!r} (found: {said}); name the host kind, device or driver")
    t = tables[0]
    count = step(t["blocks_per_op"], n)
    cells = [c for r in t["regions"] if r["blocks_per_op"] == count for c in r["cells"]]
    size = step(sorted(c["block_bytes"] for c in cells), block_bytes)
    return next(c for c in cells if c["block_bytes"] == size)


# ---- command line ---------------------------------------------------------------------------------

def run_export(argv=None):
    ap = arg_parser(__doc__)
    ap.add_argument("results", nargs="+")
    ap.add_argument("--out", help="write the JSON here (default: stdout)")
    ap.add_argument("--timing", default="oneshot", choices=["oneshot", "pipelined"])
    a = ap.parse_args(argv)
    text = json_text(export(a.results, a.timing), indent=None) + "\n"
    if a.out:
        write_file(a.out, text)
    else:
        sys.stdout.write(text)
    return 0


def main(argv=None, tool=TOOL):
    """`dmabench-results crossover ACTION ...`: the one action is `export`."""
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] in (["-h"], ["--help"]):
        sys.stdout.write(f"usage: {tool} export [--out FILE] [--timing oneshot|pipelined] RESULTS...\n\n"
                         "export: the thresholds a serving engine can load (JSON, docs/thresholds.md); the maps "
                         "themselves: dmabench-results report crossover\n")
        return 0
    if argv[:1] != ["export"]:
        got = repr(argv[0][:80]) if argv else "nothing"
        return fail(tool, f"expected an action, export; got {got} (the maps: dmabench-results report crossover)")
    return run_tool(f"{tool} export", run_export, argv[1:])


if __name__ == "__main__":
    sys.exit(main())
