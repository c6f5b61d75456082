#!/usr/bin/env python3
"""Each boundary the crossover README states, checked by tools/crossover_probe.cu at the cells on either side.

usage: boundaries.py LEVELS.json [more levels files] -- PROBE.jsonl [more] [--markdown OUT.md]
(here: boundaries.py crossover.json.xz crossover-d2d.json.xz -- probe/boundaries-*.jsonl; a levels file whose name
ends in .xz is read decompressed)
Per cell: dmabench's p50 (median of its processes) and its between-process interval, the probe's p50 (median of
its processes, each the median of 30 calls) and its [min, max] over processes; per boundary: the ratio (or the
winner) on each side, by each tool. Standard library only.
"""
import collections
import json
import lzma
import statistics
import sys

K = 1024
CLIFF = [("h2d", "ce-batch", n, 24 * K, 28 * K) for n in (4, 64, 1024, 4096)]
KNEE = [("d2h", "ce-batch", n, 20 * K, 24 * K) for n in (256, 1024)]
CROSS = [("h2d", 16, 32 * K, 36 * K), ("h2d", 64, 112 * K, 116 * K), ("d2h", 16, 36 * K, 40 * K),
         ("d2h", 64, 256 * K, 512 * K), ("h2d", 1, 4 * K, None), ("d2h", 1, 4 * K, None),
         ("h2d", 1024, 4 * K, 28 * K), ("d2h", 1024, 4 * K, 24 * K)]


def mode(r):
    if r["engine"] != "sm":
        return r["engine"]
    s = r["options"].get("sms")
    return "sm132" if s == "all" else f"sm{s}"


def load(levels, probes):
    dm, pr = {}, collections.defaultdict(list)
    for f in levels:
        with (lzma.open(f, "rt") if f.endswith(".xz") else open(f)) as fh:
            results = json.load(fh)["results"]
        for r in results:
            if r["status"] == "ok" and (r.get("host_memory") or {}).get("kind") in ("mapped", None):
                dm[(r["pattern"], mode(r), r["layout"]["block_bytes"], r["layout"]["blocks_per_op"])] = r
    for f in probes:
        for line in open(f):
            j = json.loads(line)
            if "dir" in j and j.get("validated"):
                pr[(j["dir"], j["mode"], j["block_bytes"], j["n"])].append(j["p50_us"])
    return dm, pr


def both(dm, pr, key):
    r, p = dm.get(key), pr.get(key)
    d = (r["latency_us"]["p50"], r["p50_interval_us"]) if r else None
    q = (statistics.median(p), [min(p), max(p)]) if p else None
    return d, q


def fmt(x):
    return "—" if x is None else f"{x[0]:.1f} [{x[1][0]:.1f}, {x[1][1]:.1f}]"


def winner(a, b, na, nb):
    if a is None or b is None:
        return "?"
    if a[1][1] < b[1][0]:
        return f"{na} ×{b[0] / a[0]:.2f}"
    if b[1][1] < a[1][0]:
        return f"{nb} ×{a[0] / b[0]:.2f}"
    return f"tie ({na} ×{b[0] / a[0]:.2f})"


def report(dm, pr):
    out = ["# Boundaries checked by an independent loop (tools/crossover_probe.cu)", "",
           "p50 µs [interval]: dmabench's between-process interval; the probe's [min, max] over its processes.", "",
           "## Where batched DMA leaves its slow small-block mode (h2d) and its per-descriptor floor (d2h)", "",
           "| cell | below: dmabench | below: probe | above: dmabench | above: probe | step ×, dmabench | step ×, probe |",
           "| --- | --- | --- | --- | --- | --- | --- |"]
    for d, m, n, lo, hi in CLIFF + KNEE:
        a, b = both(dm, pr, (d, m, lo, n)), both(dm, pr, (d, m, hi, n))
        ra = f"{a[0][0] / b[0][0]:.2f}" if a[0] and b[0] else "?"
        rb = f"{a[1][0] / b[1][0]:.2f}" if a[1] and b[1] else "?"
        out.append(f"| {d} {m} n={n}, {lo // K}→{hi // K} KiB | {fmt(a[0])} | {fmt(a[1])} | {fmt(b[0])} | {fmt(b[1])} "
                   f"| {ra} | {rb} |")
    out += ["", "(step ×: p50 below over p50 above; > 1: the larger blocks take less time)", "",
            "## sm held to 12 SMs against ce-batch, on either side of each stated crossover", "",
            "| dir, n, block | sm12: dmabench | ce-batch: dmabench | winner, dmabench | sm12: probe | ce-batch: probe "
            "| winner, probe |", "| --- | --- | --- | --- | --- | --- | --- |"]
    for d, n, lo, hi in CROSS:
        for b in (lo, hi):
            if b is None:
                continue
            s, c = both(dm, pr, (d, "sm12", b, n)), both(dm, pr, (d, "ce-batch", b, n))
            out.append(f"| {d}, n={n}, {b // K} KiB | {fmt(s[0])} | {fmt(c[0])} | {winner(s[0], c[0], 'sm12', 'ce-batch')} "
                       f"| {fmt(s[1])} | {fmt(c[1])} | {winner(s[1], c[1], 'sm12', 'ce-batch')} |")
    return "\n".join(out) + "\n"


def main(argv):
    md = None
    if "--markdown" in argv:
        i = argv.index("--markdown")
        md = argv[i + 1]
        argv = argv[:i] + argv[i + 2:]
    if "--" not in argv:
        sys.exit("boundaries.py: error: give LEVELS.json ... -- PROBE.jsonl ...")
    i = argv.index("--")
    text = report(*load(argv[:i], argv[i + 1:]))
    sys.stdout.write(text)
    if md:
        open(md, "w").write(text)


if __name__ == "__main__":
    main(sys.argv[1:])
