#!/usr/bin/env python3
"""dmabench's host-memory cases against tools/host_probe.cu, the independent reference loop, from one machine start.

usage: host_reference.py PROBE.jsonl RESULTS.json [more.json ...] [--markdown OUT.md]

Pairs every probe line with the dmabench record that measures the same thing, and prints measured,
reference and difference:
  contiguous h2d / d2h / h2d-bidir at >= 64 MiB, `ce`, pinned host memory on the local node:
    oneshot p50 against the probe's oneshot p50 (issue + stream synchronize) and pipelined p50 against
    its back-to-back time per copy (events); the target is within 3%.
  paged h2d / d2h (4096 random pages, pinned; sm on mapped memory), oneshot p50 against the probe's:
    `ce` (one copy per block) = probe "loop", `ce-batch` = "batch", `sm` = "kernel"; the target is within 5%.
A pair beyond its target is flagged; nothing is averaged or dropped. Exit codes: 0 every pair within its
target, 1 some pair beyond it (or no pair at all), 2 unreadable input.
"""
import json
import sys

import dmabench_results as dr

CONTIGUOUS_TOL, PAGED_TOL = 3.0, 5.0
MECHANISM = {"loop": ("ce", "pinned"), "batch": ("ce-batch", "pinned"), "kernel": ("sm", "mapped")}


def read_probe(path):
    try:
        with open(path) as f:
            return [json.loads(line) for line in f if line.strip()]
    except (OSError, ValueError) as e:
        raise dr.ResultsError(f"{path}: not the probe's JSON lines ({e})")


def plain(r, engine, kind):
    """A validated ok record of `engine` with default options on `kind` host memory on the local node."""
    h = r.get("host_memory") or {}
    return (r["status"] == "ok" and r["validated"] and r["engine"] == engine and not dr.engine_options_in_name(r)
            and h.get("kind") == kind and h.get("numa") == "local")


def find(records, **want):
    for r in records:
        lay = r.get("layout") or {"kind": "contiguous"}
        if all((lay if k in ("order", "block_bytes", "blocks_per_op", "kind") else r).get(k) == v for k, v in want.items()):
            return r
    return None


def pairs(probe, records):
    out = []
    for p in probe:
        test = p.get("test", "")
        if test in ("h2d", "d2h", "h2d-bidir") and p["bytes"] >= 64 << 20:
            ce = [r for r in records if plain(r, "ce", "pinned")]
            for timing, ref in (("oneshot", p["oneshot_us_p50"]), ("pipelined", p["b2b_per_op_us_median"])):
                r = find(ce, pattern=test, bytes_per_rank=p["bytes"], timing=timing, kind="contiguous")
                out.append((f"{test} {dr.fmt_size(p['bytes'])} ce {timing}", r, ref, CONTIGUOUS_TOL))
        elif test.startswith("paged-") and p.get("mechanism") in MECHANISM:
            engine, kind = MECHANISM[p["mechanism"]]
            recs = [r for r in records if plain(r, engine, kind)]
            r = find(recs, pattern=test[len("paged-"):], timing="oneshot", kind="blocks", order="random",
                     block_bytes=p["block_bytes"], blocks_per_op=p["blocks"])
            out.append((f"{test[6:]} {p['blocks']} x {dr.fmt_size(p['block_bytes'])} {engine} ({p['mechanism']})", r,
                        p["oneshot_us_p50"], PAGED_TOL))
    return out


def run(argv):
    ap = dr.arg_parser(__doc__)
    ap.add_argument("probe")
    ap.add_argument("results", nargs="+")
    ap.add_argument("--markdown")
    a = ap.parse_args(argv)
    probe = read_probe(a.probe)
    records = [r for path in a.results for r in dr.load(path)["results"]]
    rows, beyond = [], 0
    for label, r, ref, tol in pairs(probe, records):
        if r is None:
            rows.append([label, "not measured", f"{ref:.1f}", "", f"±{tol:.0f}%", "no record"])
            beyond += 1
            continue
        got = r["latency_us"]["p50"]
        diff = 100.0 * (got - ref) / ref
        ok = abs(diff) <= tol
        beyond += not ok
        rows.append([label, f"{got:.1f}", f"{ref:.1f}", f"{diff:+.1f}%", f"±{tol:.0f}%", "within" if ok else "BEYOND"])
    text = dr.table(["case", "dmabench p50 µs", "reference µs", "difference", "target", "verdict"], rows)
    text += f"\n\n{len(rows) - beyond} of {len(rows)} pairs within their target.\n"
    print(text)
    if a.markdown:
        with open(a.markdown, "w") as f:
            f.write(text)
    return 0 if rows and beyond == 0 else 1


if __name__ == "__main__":
    sys.exit(dr.run_tool("host_reference.py", run))
