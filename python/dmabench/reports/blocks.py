"""Block-layout tables from dmabench results: winners, crossovers and fixed costs (standard library only).

usage: blocks_report.py RESULTS.json [more.json ...] [--markdown OUT.md] [--json OUT.json]
                        [--timing oneshot|pipelined]

Reads the records whose `layout.kind` is "blocks" (results/SCHEMA.md) at one timing (default oneshot) and prints
markdown (also to --markdown OUT.md; --json OUT.json gets the same numbers), one section per pattern, host memory
(kind and NUMA request, or device memory), timing, block arrangement (order, stride, pool, seed, sides) and device set:

1. A table, one row per block size and blocks per operation (`layout.blocks_per_op`), per engine variant (the
   engine with its non-default options, dmabench.`variant`) the p50 time per operation (µs),
   algbw (GB/s) and µs per block (`per_block_us`); the winner (lowest p50) and the runner-up's p50 over the
   winner's. Only ok and validated records count; the others are listed under the table, one line per distinct
   status and reason with a count. Contiguous records (layout "contiguous", or no layout: older files) of the same
   pattern, host memory, timing, devices, variant and bytes per rank follow as reference rows, "contiguous".
2. Crossovers: per pair of variants, along block size at a fixed blocks per operation (and at a fixed bytes per
   rank where block counts vary), the measured block sizes between which the faster of the two changes; never
   an interpolated size.
3. Fixed costs, where block counts vary: per variant and block size with >= 3 block counts a least-squares fit
   p50_us = per_call_us + per_block_us x blocks_per_op, with R^2, the largest |residual| / p50 and the implied
   "GB/s per block stream" (block_bytes / fitted per_block_us); fewer points say "not fitted (N points)".
When several records measure one cell (the same case in two files, or a case repeated beside a workload), the
later one (file order, then record order) is used, and a note says how many were replaced.
Variants with `engine_details.hardware_times` false keep the " [software engine]" suffix: CPU-thread times.
A results file may also be given as its run's journal, `<file>.journal` (dmabench.load).

Exit codes: 0 done (also when there is no block record: the output says so); 2 bad input: an unreadable or
malformed results file, a record whose layout or host_memory fields cannot be read, or a bad argument or output
path, with one line `blocks_report.py: error: ...` on stderr (never a traceback).
"""
import re
import sys

from ..files import add_emit_arguments, emit
from ..keys import (interval_text, NOISY_LEGEND, p50_interval, PATTERN_ORDER, pattern_label, software_times, variant,
                    versions_caption)
from ..reader import load
from ..schema import check_kind, check_number
from ..text import fmt_num, fmt_size, printable, quote, ResultsError, table
from ..tool import arg_parser, run_tool

TOOL = "blocks_report.py"
REPORT_SCHEMA = "dmabench-blocks-report/1"
HOST_KINDS = ["pinned", "mapped", "registered", "pageable"]
MIN_FIT_POINTS = 3


# ---- reading --------------------------------------------------------------------------------------

def block_layout(r, where):
    """The record's layout when it is a block layout ({"block_bytes", "blocks_per_op" (None without a plan),
    "arrangement": (order, stride_bytes, pool_bytes, seed, sides)}), "contiguous", or None for another kind."""
    layout = r.get("layout")
    if layout is None:
        return "contiguous"  # files written before layouts existed: every case was contiguous
    check_kind(layout, dict, f"{where}.layout")
    check_kind(layout.get("kind"), str, f"{where}.layout.kind")
    if layout["kind"] == "contiguous":
        return "contiguous"
    if layout["kind"] != "blocks":
        return None
    for field, nullable in (("block_bytes", False), ("blocks_per_op", r["status"] != "ok"), ("stride_bytes", True),
                            ("pool_bytes", True), ("seed", True)):
        check_kind(layout.get(field), int, f"{where}.layout.{field}", nullable)
    for field in ("block_bytes", "blocks_per_op"):
        if layout.get(field) is not None and layout[field] <= 0:
            raise ResultsError(f"{where}.layout.{field}: expected a positive integer, got {layout[field]}")
    for field in ("order", "sides"):
        check_kind(layout.get(field, "both" if field == "sides" else None), str, f"{where}.layout.{field}")
    order = layout["order"]
    arrangement = (order, layout.get("stride_bytes") if order == "strided" else None,
                   layout.get("pool_bytes") if order == "random" else None,
                   layout.get("seed") if order == "random" else None, layout.get("sides", "both"))
    if r["status"] == "ok":
        check_number(r.get("per_block_us"), f"{where}.per_block_us", nullable=True)
    return {"block_bytes": layout["block_bytes"], "blocks_per_op": layout.get("blocks_per_op"),
            "arrangement": arrangement}


def host_of(r, where):
    """(kind, numa) of the record's host memory; from its name when it has no `host_memory` (a case that could not
    be planned); None when it moves device memory only."""
    h = r.get("host_memory")
    if h is not None:
        check_kind(h, dict, f"{where}.host_memory")
        check_kind(h.get("kind"), str, f"{where}.host_memory.kind")
        numa = h.get("numa")
        if isinstance(numa, bool) or not isinstance(numa, (str, int)):
            raise ResultsError(f"{where}.host_memory.numa: expected a string or a node number, got {quote(numa, 40)}")
        return h["kind"], str(numa)
    m = re.search(r"/host=([^,/]+),numa=([^/]+)", r["name"])
    return (m.group(1), m.group(2)) if m else None


def counted(r):
    """Whether the record's numbers count: ok and validated."""
    return r["status"] == "ok" and r.get("validated") is not False


def collect(paths, timing):
    """(sections by key, contiguous references, documents, notes) from the files."""
    sections, refs, docs = {}, {}, []
    notes = {"other_timing": 0, "other_kind": set(), "replaced": 0}
    for path in paths:
        doc = load(path)
        docs.append((path, doc))
        for i, r in enumerate(doc["results"]):
            where = f"{path}: results[{i}]"
            layout = block_layout(r, where)
            host = host_of(r, where)
            if layout is None:
                notes["other_kind"].add(r["layout"]["kind"])
                continue
            if r["timing"] != timing:
                notes["other_timing"] += layout != "contiguous"
                continue
            base = (r["pattern"], bool(r.get("in_place")), host, r["timing"], tuple(r["devices"]))
            if layout == "contiguous":
                if counted(r):
                    refs[base + (variant(r), r["bytes_per_rank"])] = r
                continue
            add_block_record(sections.setdefault(base + (layout["arrangement"],), new_section()), r, layout, notes)
    return sections, refs, docs, notes


def new_section():
    return {"cells": {}, "excluded": [], "variants": set()}


def add_block_record(section, r, layout, notes):
    v = variant(r)
    if not counted(r):  # listed under the table; a variant gets a column only where it measured something
        section["excluded"].append(r)
        return
    section["variants"].add(v)
    key = (layout["block_bytes"], layout["blocks_per_op"], v)
    notes["replaced"] += key in section["cells"]
    p50 = r["latency_us"]["p50"]
    per_block = r.get("per_block_us")
    section["cells"][key] = {"p50_us": p50, "algbw_GBps": r["algbw_GBps"], "bytes_per_rank": r["bytes_per_rank"],
                             "per_block_us": per_block if per_block is not None else p50 / layout["blocks_per_op"],
                             "name": r["name"], "software_times": software_times(r), "p50_interval_us": p50_interval(r),
                             "noisy": r.get("noisy")}


# ---- analysis -------------------------------------------------------------------------------------

def winner_of(cells):
    """(winner, runner-up, runner-up p50 / winner p50) among {variant: cell}; Nones where there are too few."""
    ranked = sorted(cells, key=lambda v: (cells[v]["p50_us"], v))
    if not ranked:
        return None, None, None
    if len(ranked) == 1:
        return ranked[0], None, None
    return ranked[0], ranked[1], cells[ranked[1]]["p50_us"] / cells[ranked[0]]["p50_us"]


def make_row(block_bytes, blocks_per_op, cells):
    win, second, ratio = winner_of(cells)
    size = next(iter(cells.values()))["bytes_per_rank"] if cells else None
    return {"block_bytes": block_bytes, "blocks_per_op": blocks_per_op, "bytes_per_rank": size, "cells": cells,
            "winner": win, "runner_up": second, "ratio": ratio}


def block_rows(section, variants):
    keys = sorted({(b, n) for b, n, _ in section["cells"]})
    return [make_row(b, n, {v: section["cells"][(b, n, v)] for v in variants if (b, n, v) in section["cells"]})
            for b, n in keys]


def reference_rows(base, rows, variants, refs):
    """One "contiguous" row per bytes per rank of the block rows that has contiguous records of these variants."""
    out = []
    for size in sorted({row["bytes_per_rank"] for row in rows}):
        cells = {}
        for v in variants:
            r = refs.get(base + (v, size))
            if r:
                cells[v] = {"p50_us": r["latency_us"]["p50"], "algbw_GBps": r["algbw_GBps"], "bytes_per_rank": size,
                            "per_block_us": None, "name": r["name"], "software_times": software_times(r),
                            "p50_interval_us": p50_interval(r), "noisy": r.get("noisy")}
        if cells:
            out.append(make_row(None, None, cells))
    return out


def excluded_lines(records):
    """One entry per distinct (status, reason): its count and the variants it hit."""
    groups = {}
    for r in records:
        status = r["status"] if r["status"] != "ok" else "ok but not validated"
        key = (status, r.get("reason") or "")
        groups.setdefault(key, []).append(variant(r))
    return [{"status": s, "reason": reason, "count": len(vs), "variants": sorted(set(vs))}
            for (s, reason), vs in sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0]))]


def series_of(rows):
    """The rows along which block size varies: at a fixed blocks per operation, and at a fixed bytes per rank;
    only series of >= 2 block sizes."""
    out = []
    for kind, field in (("blocks_per_op", "blocks_per_op"), ("bytes_per_rank", "bytes_per_rank")):
        for value in sorted({row[field] for row in rows}):
            points = sorted((row for row in rows if row[field] == value), key=lambda row: row["block_bytes"])
            if len(points) >= 2:
                out.append(({"by": kind, "value": value}, points))
    return out


def runs_of(points, a, b):
    """Consecutive measured points grouped by which of a and b is faster ("tie" for equal p50)."""
    runs = []
    for row in points:
        pa, pb = row["cells"][a]["p50_us"], row["cells"][b]["p50_us"]
        who = a if pa < pb else b if pb < pa else "tie"
        point = {"block_bytes": row["block_bytes"], "faster_by": max(pa, pb) / min(pa, pb)}
        if runs and runs[-1]["faster"] == who:
            runs[-1]["points"].append(point)
        else:
            runs.append({"faster": who, "points": [point]})
    return runs


def crossover(series, points, a, b):
    common = [row for row in points if a in row["cells"] and b in row["cells"]]
    if len(common) < 2:
        return None
    runs = runs_of(common, a, b)
    changes = [{"between_bytes": [x["points"][-1]["block_bytes"], y["points"][0]["block_bytes"]],
                "from": x["faster"], "to": y["faster"]} for x, y in zip(runs, runs[1:])]
    return {"variants": [a, b], "series": series, "runs": runs, "changes": changes}


def crossovers(rows, variants):
    out = []
    for series, points in series_of(rows):
        for i, a in enumerate(variants):
            for b in variants[i + 1:]:
                c = crossover(series, points, a, b)
                if c:
                    out.append(c)
    return out


def fit_line(points):
    """Least squares y = a + b x over (x, y) points with >= 2 distinct x: (a, b, R^2, max |residual| / y)."""
    n = len(points)
    mx = sum(x for x, _ in points) / n
    my = sum(y for _, y in points) / n
    sxx = sum((x - mx) ** 2 for x, _ in points)
    sxy = sum((x - mx) * (y - my) for x, y in points)
    slope = sxy / sxx
    intercept = my - slope * mx
    residuals = [y - (intercept + slope * x) for x, y in points]
    ss_res = sum(e * e for e in residuals)
    ss_tot = sum((y - my) ** 2 for _, y in points)
    r2 = 1.0 - ss_res / ss_tot if ss_tot > 0 else 1.0
    return intercept, slope, r2, max(abs(e) / y for e, (_, y) in zip(residuals, points))


def fits(section, variants):
    """Per variant and block size: the fit over block counts (or why none)."""
    out = []
    for v in variants:
        for block in sorted({b for b, _, w in section["cells"] if w == v}):
            points = sorted((n, c["p50_us"]) for (b, n, w), c in section["cells"].items() if w == v and b == block)
            fit = {"variant": v, "block_bytes": block, "points": len(points), "blocks_per_op": [n for n, _ in points],
                   "fitted": len(points) >= MIN_FIT_POINTS}
            if fit["fitted"]:
                a, b, r2, worst = fit_line(points)
                fit.update(per_call_us=a, per_block_us=b, r2=r2, max_rel_residual=worst,
                           block_stream_GBps=block / b / 1e3 if b > 0 else None)
            out.append(fit)
    return out


def analyse(key, section, refs):
    pattern, in_place, host, timing, devices, arrangement = key
    variants = sorted(section["variants"])
    rows = block_rows(section, variants)
    counts_vary = any(len({n for b2, n, w in section["cells"] if b2 == b and w == v}) > 1
                      for b, _, v in section["cells"])
    order, stride, pool, seed, sides = arrangement
    t = {"pattern": pattern, "in_place": in_place,
            "host": {"kind": host[0], "numa": host[1]} if host else None, "timing": timing, "devices": list(devices),
            "arrangement": {"order": order, "stride_bytes": stride, "pool_bytes": pool, "seed": seed, "sides": sides},
            "variants": variants, "rows": rows,
            "reference_rows": reference_rows(key[:5], rows, variants, refs),
            "excluded": excluded_lines(section["excluded"]), "crossovers": crossovers(rows, variants),
            "counts_vary": counts_vary, "fits": fits(section, variants) if counts_vary else []}
    with_series = len({row["blocks_per_op"] for row in rows}) > 1
    for c in t["crossovers"]:
        c["text"] = crossover_text(c, with_series)
    return t


def section_order(key):
    pattern, in_place, host, timing, devices, arrangement = key
    rank = PATTERN_ORDER.index(pattern) if pattern in PATTERN_ORDER else len(PATTERN_ORDER)
    kind = (HOST_KINDS.index(host[0]) if host[0] in HOST_KINDS else len(HOST_KINDS), *host) if host else (-1,)
    return rank, pattern, in_place, kind, devices, tuple("" if x is None else str(x) for x in arrangement)


# ---- markdown -------------------------------------------------------------------------------------

def title(t):
    host = f"{t['host']['kind']} host memory, numa {t['host']['numa']}" if t["host"] else "device memory"
    a = t["arrangement"]
    arr = a["order"] + (f", stride {fmt_size(a['stride_bytes'])}" if a["stride_bytes"] else "") + \
        (f", pool {fmt_size(a['pool_bytes'])}" if a["pool_bytes"] else "") + \
        (f", seed {a['seed']}" if a["seed"] not in (None, 1) else "") + f", sides {a['sides']}"
    return (f"{pattern_label(t['pattern'], t['in_place'])} · {host} · {t['timing']} · blocks {arr} · "
            f"dev={','.join(map(str, t['devices']))}")


def row_cells(row, variants, reference):
    cells = [("contiguous" if reference else fmt_size(row["block_bytes"])),
             ("–" if reference else str(row["blocks_per_op"])), fmt_size(row["bytes_per_rank"])]
    for v in variants:
        c = row["cells"].get(v)
        cells += [interval_text(c["p50_us"], c.get("p50_interval_us"), c.get("noisy"), fmt_num), fmt_num(c["algbw_GBps"]), fmt_num(c["per_block_us"])] if c else ["–"] * 3
    ratio = f"{row['ratio']:.2f} ({row['runner_up']})" if row["ratio"] is not None else "–"
    return cells + [row["winner"] or "–", ratio]


def main_table(t):
    header = ["block", "blocks/op", "bytes/rank"]
    for v in t["variants"]:
        header += [f"{v} p50 µs", f"{v} GB/s", f"{v} µs/block"]
    header += ["winner", "runner-up / winner"]
    body = [row_cells(row, t["variants"], False) for row in t["rows"]]
    body += [row_cells(row, t["variants"], True) for row in t["reference_rows"]]
    return table(header, body)


def excluded_md(t):
    if not t["excluded"]:
        return []
    out = ["", "Not counted (only ok and validated records are):", ""]
    for e in t["excluded"]:
        reason = f": {e['reason']}" if e["reason"] else ""
        out.append(printable(f"- {e['count']} × {e['status']}{reason} ({', '.join(e['variants'])})"))
    return out


def series_text(series):
    if series["by"] == "blocks_per_op":
        return f"at {series['value']} blocks/op"
    return f"at {fmt_size(series['value'])} per rank"


def run_text(run):
    first, last = run["points"][0]["block_bytes"], run["points"][-1]["block_bytes"]
    span = f"at {fmt_size(first)}" if first == last else f"from {fmt_size(first)} to {fmt_size(last)}"
    return f"tie {span}" if run["faster"] == "tie" else f"{run['faster']} faster {span}"


def crossover_text(c, with_series):
    a, b = c["variants"]
    head = f"{a} vs {b}" + (f" ({series_text(c['series'])})" if with_series else "")
    runs = "; ".join(run_text(r) for r in c["runs"])
    if not c["changes"]:
        return f"{head}: no crossover: {runs}"
    changes = ", ".join(f"between {fmt_size(x['between_bytes'][0])} and {fmt_size(x['between_bytes'][1])}"
                        for x in c["changes"])
    return f"{head}: {runs}; the faster changes {changes}"


def crossovers_md(t):
    if not t["crossovers"]:
        return []
    return ["", "**Crossovers** (measured block sizes only)", ""] + \
        [f"- {printable(c['text'])}" for c in t["crossovers"]]


def fit_cells(f):
    head = [f["variant"], fmt_size(f["block_bytes"]), str(f["points"])]
    if not f["fitted"]:
        return head + [f"not fitted ({f['points']} point{'s' if f['points'] != 1 else ''})"] + ["–"] * 5
    return head + [fmt_num(f["per_call_us"]), fmt_num(f["per_block_us"]), f"{f['r2']:.4f}",
                   f"{100 * f['max_rel_residual']:.2f}%", fmt_num(f["block_stream_GBps"])]


def fits_md(t):
    if not t["counts_vary"]:
        return []
    header = ["variant", "block", "points", "per_call µs", "per_block µs", "R²", "max rel. residual",
              "GB/s per block stream"]
    rows = [fit_cells(f) for f in t["fits"]]
    return ["", f"**Fixed costs**: p50_us = per_call_us + per_block_us × blocks/op (least squares, "
                f">= {MIN_FIT_POINTS} block counts; GB/s per block stream = block bytes / per_block_us)", "",
            table(header, rows)]


def section_md(t):
    out = ["", f"## {printable(title(t))}", ""]
    out.append(main_table(t) if t["rows"] or t["reference_rows"] else "No ok and validated block record.")
    shown = [c for row in t["rows"] + t["reference_rows"] for c in row["cells"].values()]
    if any(c.get("p50_interval_us") or c.get("noisy") is True for c in shown):
        out += ["", NOISY_LEGEND]
    if any(v.endswith("[software engine]") for v in t["variants"]):
        out += ["", "_[software engine]: CPU-thread times of the software SDMA engine "
                    "(engine_details.hardware_times false), not hardware times._"]
    return out + excluded_md(t) + crossovers_md(t) + fits_md(t)


def notes_of(notes, timing):
    out = []
    if notes["other_timing"]:
        other = "pipelined" if timing == "oneshot" else "oneshot"
        out.append(f"{notes['other_timing']} block record(s) at timing {other} not shown (--timing {other}).")
    if notes["other_kind"]:
        out.append(printable(f"Records with layout kind(s) {', '.join(sorted(notes['other_kind']))} not shown."))
    if notes["replaced"]:
        out.append(f"{notes['replaced']} block record(s) measured a cell an earlier one did (same variant, "
                   f"arrangement, block size and count); the later one is used.")
    return out


def markdown(report):
    out = [f"# Block layouts, {report['timing']}", ""]
    out += [printable(f"- `{f['path']}`: {f['caption']}") for f in report["files"]]
    out += [""] + [f"_{n}_" for n in report["notes"]] if report["notes"] else []
    if not report["tables"]:
        out += ["", f"No block-layout records (layout.kind \"blocks\") at timing {report['timing']} in these files."]
    for t in report["tables"]:
        out += section_md(t)
    return "\n".join(out) + "\n"


# ---- output ---------------------------------------------------------------------------------------

def report_of(paths, timing):
    sections, refs, docs, notes = collect(paths, timing)
    tables = [analyse(k, sections[k], refs) for k in sorted(sections, key=section_order)]
    return {"schema": REPORT_SCHEMA, "timing": timing,
            "files": [{"path": p, "caption": versions_caption(d)} for p, d in docs],
            "notes": notes_of(notes, timing), "tables": tables}


def main(argv=None, tool=TOOL):
    return run_tool(tool, run, argv)


def run(argv=None):
    ap = arg_parser(__doc__)
    ap.add_argument("results", nargs="+")
    add_emit_arguments(ap)
    ap.add_argument("--timing", default="oneshot", choices=["oneshot", "pipelined"])
    a = ap.parse_args(argv)
    report = report_of(a.results, a.timing)
    emit(markdown(report), report, a.markdown, a.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
