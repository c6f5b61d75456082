"""All-pairs matrices from a dmabench results file (standard library only).

usage: matrix.py RESULTS.json [--metric busbw_GBps|algbw_GBps|p50_us] [--beside]

For every case that measures one pair — copy and bidir on two devices, h2d, d2h and h2d-bidir on one device
(a `devices: "pairs"` sweep makes them all) — one markdown table per case with its devices left out: rows are
the sources (a GPU, or host memory on its NUMA node), columns the destinations, each cell the metric of that
pair (busbw at the p50 by default), with row sums and the total, as nvbandwidth and TransferBench print theirs.
Only `ok` (validated) results count; a pair that was not measured shows "–", one that failed or was skipped its
status. --beside: cases measured beside a workload show what they kept beside it (overlap.busbw_with_GBps,
overlap.comm_with_us) instead of their figures alone.

Exit codes: 0 done; 2 bad input: an unreadable or malformed results file, a bad argument, or no case that
measures one pair, with one line `matrix.py: error: ...` on stderr (never a traceback).
"""
import re
import sys

from ..reader import load
from ..keys import interval_text, NOISY_LEGEND, pattern_spec
from ..text import cell, printable, ResultsError
from ..tool import arg_parser, run_tool

TOOL = "matrix.py"
DEV = re.compile(r"/dev=[0-9,]+/")
WITH = {"busbw_GBps": "busbw_with_GBps", "algbw_GBps": "algbw_with_GBps", "p50_us": "comm_with_us"}
# the record's interval of each metric: the p50's 95% interval, and busbw and algbw at its ends
INTERVAL = {"busbw_GBps": "busbw_interval_GBps", "algbw_GBps": "algbw_interval_GBps", "p50_us": "p50_interval_us"}
# the tables' caption: what the interval beside each cell covers (issue 53)
CAPTION = (f"Each cell: {NOISY_LEGEND}; busbw and algbw ± half the range they span at that interval's ends "
           "(`busbw_interval_GBps`, `algbw_interval_GBps`); the figure alone in files written before intervals were "
           "recorded. Row sums and the total add the figures alone. --beside: "
           "what a case kept beside its workload (`overlap`) has no recorded interval and is shown alone.")


def main(argv=None, tool=TOOL):
    return run_tool(tool, run, argv)


def pair_of(r, word):
    """(source, destination) labels of a record that measures one pair, else None."""
    devs, pattern = r["devices"], r["pattern"]
    spec = pattern_spec(pattern)
    if spec.get("pairs") == "two-device" and len(devs) == 2:
        return f"{word} {devs[0]}", f"{word} {devs[1]}"
    if spec.get("pairs") == "one-device" and spec.get("host_memory") and len(devs) == 1:
        node = (r.get("host_memory") or {}).get("numa_node")
        host = f"host node {node}" if isinstance(node, int) else "host"
        gpu = f"{word} {devs[0]}"
        return (gpu, host) if pattern == "d2h" else (host, gpu)
    return None


def figure(r, metric, beside):
    ov = r.get("overlap") or {}
    if beside and WITH[metric] in ov:
        return ov[WITH[metric]]
    if metric == "p50_us":
        return (r.get("latency_us") or {}).get("p50")
    return r.get(metric)


def interval(r, metric, beside):
    """(the record's interval of the metric or None, noisy): none for a figure kept beside a workload."""
    if beside and WITH[metric] in (r.get("overlap") or {}):
        return None, None
    pair = r.get(INTERVAL[metric])
    return (pair if isinstance(pair, list) and len(pair) == 2 else None), r.get("noisy")


def tables(doc, metric, beside):
    word = "host rank" if doc["context"].get("backend") == "host" else "GPU"
    out = {}
    for r in doc["results"]:
        pair = pair_of(r, word)
        if pair is None:
            continue
        t = out.setdefault(DEV.sub("/dev=*/", r["name"]), {"rows": set(), "cols": set(), "cells": {}, "intervals": {}})
        t["rows"].add(pair[0])
        t["cols"].add(pair[1])
        value = figure(r, metric, beside) if r["status"] == "ok" else r["status"]
        t["cells"][pair] = value
        t["intervals"][pair] = interval(r, metric, beside) if r["status"] == "ok" else (None, None)
    return out


def label_key(label):
    m = re.search(r"(\d+)$", label)
    return (label.split(" ")[0] != "host", int(m.group(1)) if m else -1, label)


def cell_text(v, pair=None, noisy=None):
    """A cell: the figure with half its interval (`12.3 ±0.4`, ` noisy` where flagged), '–' where not measured, or the
    case's status."""
    if v is None:
        return "–"
    if isinstance(v, (int, float)):
        return interval_text(v, pair, noisy, lambda x: f"{x:.1f}")
    return cell(v)


def render(key, t, metric):
    rows, cols = sorted(t["rows"], key=label_key), sorted(t["cols"], key=label_key)
    out = ["\n" + printable(f"**{key}**: {metric}, rows = source, columns = destination") + "\n",
           "| from \\ to | " + " | ".join(cols) + " | row sum |", "| --- |" + " --- |" * (len(cols) + 1)]
    total, counted = 0.0, 0
    for row in rows:
        values = [t["cells"].get((row, c)) for c in cols]
        numbers = [v for v in values if isinstance(v, (int, float)) and not isinstance(v, bool)]
        total += sum(numbers)
        counted += len(numbers)
        cells = [cell_text(v, *t["intervals"].get((row, c), (None, None))) for v, c in zip(values, cols)]
        out.append(f"| {row} | " + " | ".join(cells) + f" | {sum(numbers):.1f} |")
    out.append(f"\n{counted} pairs measured, sum {total:.1f}")
    return "\n".join(out)


def run(argv=None):
    ap = arg_parser(__doc__)
    ap.add_argument("results")
    ap.add_argument("--metric", default="busbw_GBps", choices=sorted(WITH))
    ap.add_argument("--beside", action="store_true")
    a = ap.parse_args(argv)
    doc = load(a.results)
    found = tables(doc, a.metric, a.beside)
    if not found:
        raise ResultsError(f"{a.results}: no case measures one pair (copy or bidir on two devices, h2d, d2h or "
                           "h2d-bidir on one); a sweep with devices \"pairs\" makes them")
    print("\n".join(render(k, found[k], a.metric) for k in sorted(found)) + "\n\n" + CAPTION)
    return 0


if __name__ == "__main__":
    sys.exit(main())
