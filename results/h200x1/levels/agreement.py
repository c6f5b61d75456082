#!/usr/bin/env python3
"""dmabench against tools/host_probe.cu, round by round (issue 39): how results/h200x1/levels/README.md's tables
were made from the files of `run-levels.sh` (STEPS kvpool, alternate).

usage: agreement.py DIR [--rounds N] [--dmabench PREFIX,...] [--probe PREFIX,...]
Round k pairs DIR/<dmabench prefix>-k.json (one fresh dmabench process) with DIR/<probe prefix>-k.jsonl (one fresh
host_probe process started right after it); a shape is (direction, host kind, mechanism, blocks, block size, pool).
Per shape: every round's ratio dmabench p50 / probe p50, how many rounds are within +-5% and +-10%, and each tool's
spread over rounds ((max - min) / median of its per-round p50s). Nothing is averaged away: the per-round ratios are
printed. Prints markdown.
"""
import argparse
import glob
import json
import os
import statistics

MECH = {"loop": "ce", "batch": "ce-batch", "kernel": "sm"}


def dmabench_shapes(path):
    out = {}
    for r in json.load(open(path))["results"]:
        if r["status"] != "ok" or r.get("layout", {}).get("kind") != "blocks":
            continue
        lay = r["layout"]
        out[(r["pattern"], r["host_memory"]["kind"], r["engine"], lay["blocks_per_op"], lay["block_bytes"],
             lay.get("pool_bytes"))] = r["latency_us"]["p50"]
    return out


def probe_shapes(path):
    out = {}
    for line in open(path):
        p = json.loads(line)
        if p.get("test", "").startswith("paged-") and p.get("valid"):
            out[(p["test"][6:], p["kind"], MECH[p["mechanism"]], p["blocks"], p["block_bytes"], p["pool_bytes"])] = p["oneshot_us_p50"]
    return out


def spread(values):
    return (max(values) - min(values)) / statistics.median(values)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dir")
    ap.add_argument("--dmabench", default="kvpool,odd")
    ap.add_argument("--probe", default="probe-kv,probe-odd")
    a = ap.parse_args()
    rounds = {}
    for dm, pr in zip(a.dmabench.split(","), a.probe.split(",")):
        for path in sorted(glob.glob(os.path.join(a.dir, f"{dm}-*.json"))):
            k = int(path.rsplit("-", 1)[1].split(".")[0])
            probe = os.path.join(a.dir, f"{pr}-{k}.jsonl")
            if not os.path.exists(probe):
                continue
            d, p = dmabench_shapes(path), probe_shapes(probe)
            for shape in d.keys() & p.keys():
                rounds.setdefault(shape, []).append((k, d[shape], p[shape]))
    rows, all_within5, all_within10, n = [], 0, 0, 0
    for shape in sorted(rounds, key=lambda s: (s[2], s[0], s[1], s[4], s[3], s[5] or 0)):
        rs = sorted(rounds[shape])
        ratios = [d / p for _, d, p in rs]
        w5 = sum(abs(x - 1) <= 0.05 for x in ratios)
        w10 = sum(abs(x - 1) <= 0.10 for x in ratios)
        n += 1
        all_within5 += w5 == len(ratios)
        all_within10 += w10 == len(ratios)
        dm, pr = [d for _, d, _ in rs], [p for _, _, p in rs]
        direction, kind, engine, blocks, block, pool = shape
        rows.append(f"| {direction} | {kind} | {engine} | {blocks} x {block // 1024} KiB | {(pool or 0) >> 30} GiB | "
                    f"{statistics.median(dm):.1f} | {statistics.median(pr):.1f} | {statistics.median(dm) / statistics.median(pr):.3f} | "
                    f"{min(ratios):.3f}..{max(ratios):.3f} | {w5}/{len(ratios)} | {w10}/{len(ratios)} | "
                    f"{100 * spread(dm):.0f}% | {100 * spread(pr):.0f}% |")
    print("| dir | host | mechanism | blocks | pool | dmabench p50 µs (median of rounds) | probe p50 µs | ratio of medians | "
          "per-round ratios | rounds within ±5% | within ±10% | dmabench spread | probe spread |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    print("\n".join(rows))
    print(f"\n{n} shapes; every round within ±5%: {all_within5}; every round within ±10%: {all_within10}")


if __name__ == "__main__":
    main()
