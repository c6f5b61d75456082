#!/usr/bin/env python3
"""Issue 39: dmabench's core_share against vcpu_probe's paired samples (run.sh's files). usage: analyse.py DIR > README part

Per round (a fresh dmabench process and then a fresh vcpu_probe process): the 1024 x 4 KiB pinned d2h ce-batch case's
p50 and p50 of the unshared samples (core_share.p50_us_unshared), and the probe's p50 of all its batches and of those
whose reading was at or below the threshold; then per kv-pool case the spread over the rounds ((max - min) / median)
of p50 and of p50_us_unshared; and checks every record's core_share against its own samples_us and ratios."""
import json
import statistics as st
import sys
from pathlib import Path

THRESHOLD = 0.75



def host_kind(r):
    h = r.get("host_memory")
    if isinstance(h, dict):
        return h.get("kind")
    if isinstance(h, list) and h:
        return h[0].get("kind")
    return None


def main(d):
    d = Path(d)
    rounds = sorted(int(p.stem.split("-")[1]) for p in d.glob("kv-*.json"))
    per_case = {}
    checked = bad = 0
    print("| round | dmabench CPU share (calibration) | ce-batch d2h 1024 x 4 KiB: p50 | shared samples | p50 unshared | probe p50 | probe shared | probe p50 unshared | unshared: dmabench / probe |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for k in rounds:
        doc = json.load(open(d / f"kv-{k}.json"))
        cal = doc["context"].get("calibration", {}).get("core_share", {})
        target = None
        for r in doc["results"]:
            if r["status"] != "ok":
                continue
            lay = r.get("layout") or {}
            name = (r["engine"], r["pattern"], host_kind(r), lay.get("block_bytes"), lay.get("blocks"))
            cs = r["core_share"]
            # the record against its own samples and readings
            ratios, us = cs["ratios"], r["samples_us"]
            unshared = [u for u, x in zip(us, ratios) if x <= THRESHOLD]
            ok = (cs["probed"] == len(us) == len(ratios) == r["sampling"]["samples"]
                  and cs["shared"] == sum(x > THRESHOLD for x in ratios)
                  and (cs["p50_us_unshared"] is None if not unshared
                       else abs(cs["p50_us_unshared"] - st.median(unshared)) <= 1e-3 * max(1, st.median(unshared))))
            near = any(abs(x - THRESHOLD) < 6e-4 for x in ratios)  # rounded to 3 decimals in the record
            checked += 1
            bad += (not ok and not near)
            per_case.setdefault(name, []).append((r["latency_us"]["p50"], cs["p50_us_unshared"], cs["shared"] / cs["probed"]))
            if name == ("ce-batch", "d2h", "pinned", 4096, 1024):
                target = (r["latency_us"]["p50"], cs["shared"], cs["probed"], cs["p50_us_unshared"])
        probe = [json.loads(line) for line in open(d / f"probe-{k}.jsonl") if '"paired"' in line]
        allp = [p["total_us"] for p in probe]
        unp = [p["total_us"] for p in probe if p["tput_ns"] / p["lat_ns"] <= THRESHOLD]
        pu = st.median(unp) if unp else None
        p50, sh, n, u = target
        print(f"| {k} | {cal.get('shared')}/{cal.get('readings')} | {p50:.0f} | {sh}/{n} | {u:.0f} | {st.median(allp):.0f} | "
              f"{len(allp) - len(unp)}/{len(allp)} | {pu:.0f} | {u / pu:.3f} |" if u and pu else f"| {k} | - |")
    print()
    print(f"records checked against their own samples_us and ratios: {checked}, inconsistent: {bad}")
    print()
    print("| case (engine, direction, host, block, blocks) | spread of p50 over rounds | spread of p50 unshared | median shared fraction |")
    print("| --- | --- | --- | --- |")
    for name, v in sorted(per_case.items(), key=lambda kv: str(kv[0])):
        p = [a for a, _, _ in v]
        u = [b for _, b, _ in v if b is not None]
        sp = (max(p) - min(p)) / st.median(p)
        su = (max(u) - min(u)) / st.median(u) if len(u) == len(p) else None
        print(f"| {' '.join(map(str, name))} | {sp:.1%} | {'-' if su is None else f'{su:.1%}'} | {st.median(f for _, _, f in v):.2f} |")


if __name__ == "__main__":
    main(sys.argv[1])
