#!/usr/bin/env python3
"""Issue 50's H200 figures for the quiet-core CPU choice, from results/h200x1/run-gate.sh's kv-pool rounds.

usage: analyse.py WORK      (WORK/kv/{quiet,off}-K.json: one kv-pool process each; WORK/kv/probe-K.jsonl: the
                             independent probe, tools/vcpu_probe.cu --cpus quiet, run after process K)

Prints markdown:
  1. per mode (quiet: --cpu-choice quiet, the default; off), the share of (case, process) records of paged ce-batch
     at 4-64 KiB within 1.1x of the case's fastest process (issue 50's target: 90%; 46% before, levels/core-share/),
     and the same for ce and sm;
  2. the records beyond 1.1x: their CPU, shared samples and what the choice did (to find what else moves them);
  3. the medians over processes against the probe's, for the probe's four operations (1024 x 4 KiB pinned, a 4 GiB
     pool): ce-batch against its cudaMemcpyBatchAsync (batch_*_us), ce against its per-page loop (loop_*_us).
"""
import glob
import json
import os
import re
import statistics
import sys

SMALL = {4096, 16384, 65536}


def load(work, mode):
    files = sorted(glob.glob(os.path.join(work, "kv", f"{mode}-*.json")),
                   key=lambda f: int(re.search(r"-(\d+)\.json$", f).group(1)))
    procs = []
    for f in files:
        with open(f) as fh:
            procs.append({r["name"]: r for r in json.load(fh)["results"] if r["status"] == "ok"})
    return procs


def paged_small(r, engine):
    lay = r.get("layout") or {}
    return r["engine"] == engine and lay.get("kind") == "blocks" and lay.get("block_bytes") in SMALL


def spread(procs, engine):
    """(within, total, slow records) over the paged cases of `engine` at 4-64 KiB."""
    within = total = 0
    slow = []
    names = sorted({n for p in procs for n, r in p.items() if paged_small(r, engine)})
    for n in names:
        p50s = [(k + 1, p[n]) for k, p in enumerate(procs) if n in p]
        fastest = min(r["latency_us"]["p50"] for _, r in p50s)
        for k, r in p50s:
            ratio = r["latency_us"]["p50"] / fastest
            total += 1
            if ratio <= 1.1:
                within += 1
            else:
                slow.append((n, k, ratio, r))
    return within, total, slow


def share(r):
    cs = r.get("core_share") or {}
    return f"{cs.get('shared', '?')}/{cs.get('probed', '?')}"


def section_spread(work):
    print("## Paged copies of 4-64 KiB blocks: records within 1.1x of the case's fastest process\n")
    print("| mode | engine | processes | within 1.1x | share |")
    print("| --- | --- | --- | --- | --- |")
    slow_all = {}
    for mode in ("quiet", "off"):
        procs = load(work, mode)
        if not procs:
            continue
        for engine in ("ce-batch", "ce", "sm"):
            within, total, slow = spread(procs, engine)
            if total:
                print(f"| {mode} | {engine} | {len(procs)} | {within} of {total} | {within / total:.0%} |")
                slow_all[(mode, engine)] = slow
    return slow_all


def section_slow(slow_all):
    print("\n## The records beyond 1.1x (quiet mode)\n")
    print("| case | process | x fastest | cpu | shared samples | moves | surveys | waits |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for engine in ("ce-batch", "ce", "sm"):
        for n, k, ratio, r in sorted(slow_all.get(("quiet", engine), []), key=lambda s: -s[2]):
            c = r.get("cpu_choice") or {}
            print(f"| {n} | {k} | {ratio:.2f} | {r.get('cpu')} | {share(r)} | {c.get('moves', '-')} | "
                  f"{c.get('surveys', '-')} | {c.get('waits', '-')} |")


def probe_lines(work):
    out = []
    for f in sorted(glob.glob(os.path.join(work, "kv", "probe-*.jsonl"))):
        with open(f) as fh:
            lines = [json.loads(x) for x in fh if x.strip()]
        vcpu = [x for x in lines if x.get("test") == "vcpu" and x.get("valid", True)]
        choice = [x for x in lines if x.get("test") == "choice"]
        if vcpu:
            out.append((vcpu[0], choice[0] if choice else {}))
    return out


def section_probe(work):
    procs = load(work, "quiet")
    probes = probe_lines(work)
    print(f"\n## Against the independent probe (tools/vcpu_probe.cu --cpus quiet; {len(probes)} probe processes, "
          f"{len(procs)} dmabench processes)\n")
    if not probes or not procs:
        print("no data")
        return
    print("| dmabench case | probe | dmabench median p50 (µs) | probe median (µs) | dmabench / probe |")
    print("| --- | --- | --- | --- | --- |")
    for pattern in ("d2h", "h2d"):
        for engine, key in (("ce-batch", f"batch_{pattern}_us"), ("ce", f"loop_{pattern}_us")):
            name = (f"{pattern}/{engine}/oneshot/dev=0/4MiB/host=pinned,numa=local/blocks=1024x4KiB,random,"
                    f"pool=4GiB")
            mine = [p[name]["latency_us"]["p50"] for p in procs if name in p]
            theirs = [v[key] for v, _ in probes]
            if not mine:
                continue
            a, b = statistics.median(mine), statistics.median(theirs)
            print(f"| {name} | {key} | {a:.1f} | {b:.1f} | {a / b:.3f} |")
    cpus = [c.get("cpu") for _, c in probes]
    print(f"\nThe probe's chosen CPUs: {cpus}; dmabench's first surveys chose "
          f"{[first_choice(work, k + 1) for k in range(len(procs))]}.")


def first_choice(work, k):
    with open(os.path.join(work, "kv", f"quiet-{k}.json")) as fh:
        ctx = json.load(fh)["context"].get("cpu_choice") or {}
    survey = ctx.get("first_survey") or {}
    return min(survey, key=survey.get) if survey else None


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    work = sys.argv[1]
    slow = section_spread(work)
    section_slow(slow)
    section_probe(work)


if __name__ == "__main__":
    main()
