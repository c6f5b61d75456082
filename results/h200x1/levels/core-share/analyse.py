#!/usr/bin/env python3
"""Issue 39: dmabench's core_share against the figures it goes with (run.sh's files). usage: analyse.py DIR > analysis.md

1. Per round (a fresh dmabench process of configs/kv-pool.json, then a fresh vcpu_probe process): the 1024 x 4 KiB
   pinned d2h ce-batch case's p50 and its share of shared readings, the calibration's, and the probe's p50 and share.
2. Per engine and block size, every record's p50 over the fastest of the rounds' p50s for its case, split by the
   record's share of shared readings (below 0.2, 0.2-0.5, 0.5 and above): does the share say which mode a case landed in?
3. Within cases with at least 5 samples on each side: the median of the samples after a shared reading over that of
   the samples after an unshared one: does a reading say which sample was slow?
4. Every record's core_share against its own ratios (count of readings above the threshold, ratio_p50)."""
import json
import statistics as st
import sys
from collections import defaultdict
from pathlib import Path


def kind(r):
    h = r.get("host_memory")
    return h[0]["kind"] if isinstance(h, list) else (h or {}).get("kind")


def main(d):
    d = Path(d)
    rounds = sorted(int(p.stem.split("-")[1]) for p in d.glob("kv-*.json"))
    by_case, within, bad, checked = defaultdict(list), [], 0, 0
    print("| round | calibration: shared readings | ce-batch d2h pinned 1024 x 4 KiB: p50 µs | its shared readings | "
          "vcpu_probe batch p50 µs | probe's shared readings |")
    print("| --- | --- | --- | --- | --- | --- |")
    for k in rounds:
        doc = json.load(open(d / f"kv-{k}.json"))
        cal = doc["context"]["calibration"]["core_share"]
        row = None
        for r in doc["results"]:
            if r["status"] != "ok":
                continue
            c, lay = r["core_share"], r["layout"]
            t = c["threshold"]
            checked += 1
            near = any(abs(x - t) < 6e-4 for x in c["ratios"])
            bad += not near and (c["shared"] != sum(x > t for x in c["ratios"]) or c["probed"] != len(r["samples_us"])
                                 or abs(c["ratio_p50"] - st.median(c["ratios"])) > 1e-3)
            case = (r["engine"], r["pattern"], kind(r), lay["block_bytes"], lay["blocks"])
            by_case[case].append((r["latency_us"]["p50"], c["shared"] / c["probed"]))
            sh = [u for u, x in zip(r["samples_us"], c["ratios"]) if x > t]
            un = [u for u, x in zip(r["samples_us"], c["ratios"]) if x <= t]
            if len(sh) >= 5 and len(un) >= 5:
                within.append((r["engine"], st.median(sh) / st.median(un)))
            if case == ("ce-batch", "d2h", "pinned", 4096, 1024):
                row = (r["latency_us"]["p50"], c["shared"], c["probed"])
        probe = [json.loads(line) for line in open(d / f"probe-{k}.jsonl") if '"paired"' in line]
        pshared = sum(p["tput_ns"] / p["lat_ns"] > 0.75 for p in probe)
        print(f"| {k} | {cal['shared']}/{cal['readings']} | {row[0]:.0f} | {row[1]}/{row[2]} | "
              f"{st.median(p['total_us'] for p in probe):.0f} | {pshared}/{len(probe)} |")
    print()
    print("| engine | block | records < 0.2 shared: p50 / fastest (median) | 0.2-0.5 | >= 0.5 |")
    print("| --- | --- | --- | --- | --- |")
    for eng in ("ce-batch", "ce", "sm"):
        for block in (4096, 16384, 65536, 524288):
            bins = ([], [], [])
            for case, v in by_case.items():
                if case[0] != eng or case[3] != block:
                    continue
                fastest = min(p for p, _ in v)
                for p, f in v:
                    bins[0 if f < 0.2 else 2 if f >= 0.5 else 1].append(p / fastest)
            cells = [f"{st.median(b):.3f} ({len(b)})" if b else "-" for b in bins]
            print(f"| {eng} | {block // 1024} KiB | " + " | ".join(cells) + " |")
    print()
    for eng in ("ce-batch", "ce", "sm"):
        w = [x for e, x in within if e == eng]
        if w:
            print(f"- {eng}: {len(w)} records with >= 5 samples after shared and after unshared readings: median of "
                  f"(shared samples' median / unshared samples' median) {st.median(w):.3f}, range {min(w):.3f}-{max(w):.3f}")
    print(f"- records checked against their own ratios and samples_us: {checked}, inconsistent: {bad}")


if __name__ == "__main__":
    main(sys.argv[1])
