#!/usr/bin/env python3
"""One screen from results/h200x1/run-submission.sh's WORK directory (issue 54): the probe's fitted submit cost per
descriptor in each fresh process (with its CPU and core-share mode), the coalescing probe, dmabench's fragmentation
GB/s at k = 1, 16, 64 with and without coalesce, and the descriptor curve's fitted µs per block beside the probe's.

    results/h200x1/submission/summarize.py WORK        (WORK: probe/*.jsonl, mark.json, frag.json, desc.json; any may be missing)

Every figure printed comes from those files; a missing file or cell prints as "-" or "not run"."""
import glob
import json
import os
import statistics
import sys


def jsonl(path):
    out = []
    with open(path) as f:
        for line in f:
            line = line.strip()
            if line.startswith("{"):
                try:
                    out.append(json.loads(line))
                except ValueError:
                    pass
    return out


def ols(xs, ys):
    """slope and intercept of the least-squares line (None when under 2 distinct x)"""
    if len(set(xs)) < 2:
        return None, None
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    sxx = sum((x - mx) ** 2 for x in xs)
    slope = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sxx
    return slope, my - slope * mx


def fmt(v, spec=".3f"):
    return "-" if v is None else format(v, spec)


def kib(b):
    return f"{b // 1024}K"


def probe_section(work):
    files = sorted(glob.glob(os.path.join(work, "probe", "probe-*.jsonl")))
    print(f"== probe (tools/batch_submit_probe.cu): {len(files)} process(es)")
    if not files:
        print("   not run")
        return {}
    fits = {}  # (dir, block, mech) -> [(process, call slope, total slope)]
    for path in files:
        rows = jsonl(path)
        tag = os.path.basename(path)[len("probe-"):-len(".jsonl")]
        choice = next((r for r in rows if r.get("test") == "choice"), {})
        subs = [r for r in rows if r.get("test") == "submit" and "call_us" in r]
        modes = [r.get("core_mode") for r in subs]
        shared = sum(m == "shared" for m in modes)
        valid = all(r.get("valid") for r in subs)
        end = next((r for r in rows if r.get("test") == "end"), None)
        print(f"   process {tag}: cpu {choice.get('cpu', '-')} core_share {fmt(choice.get('core_share'))} "
              f"({choice.get('mode', '-')}); {len(subs)} cells, {shared} read shared; valid {valid}; "
              f"{'finished' if end else 'CUT SHORT'}")
        by = {}
        for r in subs:
            by.setdefault((r["dir"], r["block"], r["mech"]), []).append(r)
        for key, rs in by.items():
            xs = [r["descriptors"] for r in rs]
            call, _ = ols(xs, [r["call_us"] for r in rs])
            total, _ = ols(xs, [r["total_us"] for r in rs])
            fits.setdefault(key, []).append((tag, call, total))
    print("   us per descriptor (OLS slope over n of each process's p50), median over processes [min, max]:")
    print(f"   {'dir':4} {'block':5} {'mech':5} {'call (submit)':>26} {'total (issue+sync)':>26}")
    for key in sorted(fits):
        c = [f[1] for f in fits[key] if f[1] is not None]
        t = [f[2] for f in fits[key] if f[2] is not None]
        cs = f"{statistics.median(c):.4f} [{min(c):.4f}, {max(c):.4f}]" if c else "-"
        ts = f"{statistics.median(t):.4f} [{min(t):.4f}, {max(t):.4f}]" if t else "-"
        print(f"   {key[0]:4} {kib(key[1]):5} {key[2]:5} {cs:>26} {ts:>26}")
    coal = sorted(glob.glob(os.path.join(work, "probe", "coal-*.jsonl")))
    if coal:
        print("   coalescing probe, 8 KiB (GB/s from total_us p50; descriptors per call):")
        for path in coal:
            for r in jsonl(path):
                if r.get("test") == "submit" and "gbps" in r:
                    print(f"     run={r['run']:<3} coalesce={str(r['coalesce']).lower():5} {r['dir']} {r['mech']:5} "
                          f"n={r['n']:<5} desc={r['descriptors']:<5} {r['gbps']:8.2f} GB/s  call {r['call_us']:9.1f} us  "
                          f"{r['core_mode']}  valid {r['valid']}")
    return fits


def records(path):
    if not os.path.exists(path):
        return None
    try:
        with open(path) as f:
            return json.load(f).get("results", [])
    except ValueError as e:
        print(f"   {path}: unreadable ({e})")
        return []


def ok_records(path, title):
    """The ok records of a results file, after its heading and counts; None (and "not run") where it is missing."""
    res = records(path)
    print(f"== {title}")
    if res is None:
        print("   not run")
        return None
    ok = [r for r in res if r.get("status") == "ok"]
    print(f"   {len(res)} records, {len(ok)} ok, {sum(r.get('status') == 'failed' for r in res)} failed")
    return ok


def frag_section(work):
    ok = ok_records(os.path.join(work, "frag.json"), "frag (configs/fragmentation.json): GB/s (p50), coalesce off/on")
    if ok is None:
        return
    cell = {}
    for r in ok:
        lay = r.get("layout", {})
        cell[(r["pattern"], lay.get("block_bytes"), r["engine"], bool(r.get("options", {}).get("coalesce")),
              lay.get("run_blocks", 1))] = r.get("algbw_GBps")
    ks = (1, 16, 64)
    seen = {key[2] for key in cell}
    engines = [e for e in ("ce", "ce-batch", "sm") if e in seen] + sorted(seen - {"ce", "ce-batch", "sm"})
    print(f"   {'dir':4} {'block':5} {'engine':9}" + "".join(f" {'k=' + str(k) + ' off/on':>17}" for k in ks))
    for d in ("h2d", "d2h"):
        for b in (4096, 8192, 16384):
            for e in engines:
                cols = "".join(f" {fmt(cell.get((d, b, e, False, k)), '.1f'):>8}/{fmt(cell.get((d, b, e, True, k)), '.1f'):<8}"
                               for k in ks)
                print(f"   {d:4} {kib(b):5} {e:9}{cols}")


def desc_section(work, fits):
    ok = ok_records(os.path.join(work, "desc.json"),
                    "desc (configs/descriptors.json): us per block, OLS slope of dmabench's p50 over n, beside the probe's")
    if ok is None:
        return
    by = {}
    for r in ok:
        lay = r.get("layout", {})
        b = r.get("breakdown") or {}
        by.setdefault((r["pattern"], lay.get("block_bytes"), r["engine"]), []).append(
            (b.get("descriptors") or lay.get("blocks_per_op"), r["latency_us"]["p50"], b.get("submit_us")))
    mech = {"ce": "loop", "ce-batch": "batch"}
    print(f"   {'dir':4} {'block':5} {'engine':9} {'dmabench':>9} {'probe total':>12} {'ratio':>6} {'submit':>8} "
          f"{'probe call':>11} {'ratio':>6} {'n=16384 p50 us':>15}")
    for key in sorted(by):
        pts = sorted(p for p in by[key] if p[0])
        slope, _ = ols([p[0] for p in pts], [p[1] for p in pts])
        sub = [p for p in pts if p[2] is not None]
        sub_slope = ols([p[0] for p in sub], [p[2] for p in sub])[0] if len(sub) >= 3 else None
        f = fits.get((key[0], key[1], mech.get(key[2], "")), [])
        pt = [x[2] for x in f if x[2] is not None]
        pc = [x[1] for x in f if x[1] is not None]
        pt_m = statistics.median(pt) if pt else None
        pc_m = statistics.median(pc) if pc else None
        ratio = slope / pt_m if slope is not None and pt_m else None
        sub_ratio = sub_slope / pc_m if sub_slope is not None and pc_m else None
        last = next((p[1] for p in pts if p[0] == 16384), None)
        print(f"   {key[0]:4} {kib(key[1]):5} {key[2]:9} {fmt(slope, '.4f'):>9} {fmt(pt_m, '.4f'):>12} {fmt(ratio, '.3f'):>6} "
              f"{fmt(sub_slope, '.4f'):>8} {fmt(pc_m, '.4f'):>11} {fmt(sub_ratio, '.3f'):>6} {fmt(last, '.1f'):>15}")
    print("   (us per descriptor: dmabench's p50 is issue to completion, beside the probe's total; dmabench's submit"
          " (breakdown.submit_us, the CPU time inside the issuing calls) beside the probe's call, the same calls timed"
          " by the probe's own code)")


def mark_section(work):
    ok = ok_records(os.path.join(work, "mark.json"),
                    "mark (configs/h2d-batch-cause.json): ce-batch 1024 blocks, event_before true/false")
    if ok is None:
        return
    cell = {}
    for r in ok:
        b = r.get("breakdown") or {}
        cell[(r["pattern"], (r.get("host_memory") or {}).get("kind"), r["layout"]["block_bytes"],
              r.get("options", {}).get("event_before", True))] = (b.get("submit_us"), r["latency_us"]["p50"])
    print(f"   {'dir':4} {'host':10} {'block':5} {'submit us true/false':>22} {'ratio':>6} {'p50 us true/false':>20}")
    for d, k, blk in sorted({key[:3] for key in cell}):
        t, f = cell.get((d, k, blk, True), (None, None)), cell.get((d, k, blk, False), (None, None))
        ratio = f[0] / t[0] if t[0] and f[0] else None
        print(f"   {d:4} {k or '?':10} {kib(blk):5} {fmt(t[0], '.1f'):>10}/{fmt(f[0], '.1f'):<11} {fmt(ratio, '.2f'):>6} "
              f"{fmt(t[1], '.1f'):>9}/{fmt(f[1], '.1f'):<10}")
    print("   (submit: breakdown.submit_us, the CPU time inside the batch call per operation; with --processes, the"
          " merged file's figures)")


def per_n_section(work):
    """ce-batch per call: dmabench's submit (merged p50 of breakdown.submit_us) beside the probe's call_us (median over
    its processes of each process's p50), at every n: where a fit over all n hides a change with n."""
    res = records(os.path.join(work, "desc.json"))
    files = sorted(glob.glob(os.path.join(work, "probe", "probe-*.jsonl")))
    if not res or not files:
        return
    probe = {}
    for path in files:
        for r in jsonl(path):
            if r.get("test") == "submit" and r.get("mech") == "batch" and "call_us" in r:
                probe.setdefault((r["dir"], r["block"], r["n"]), []).append(r["call_us"])
    print("== ce-batch per call, µs: dmabench submit / probe call (median of its processes) at each n")
    rows = {}
    for r in res:
        if r.get("status") == "ok" and r["engine"] == "ce-batch":
            lay = r["layout"]
            rows[(r["pattern"], lay["block_bytes"], lay["blocks_per_op"])] = (r.get("breakdown") or {}).get("submit_us")
    ns = sorted({k[2] for k in rows})
    print(f"   {'dir':4} {'block':5}" + "".join(f" {'n=' + str(n):>15}" for n in ns))
    for d, b in sorted({k[:2] for k in rows}):
        cols = ""
        for n in ns:
            mine, theirs = rows.get((d, b, n)), probe.get((d, b, n))
            ratio = mine / statistics.median(theirs) if mine and theirs else None
            cols += f" {fmt(mine, '.1f'):>8} {fmt(ratio, '.2f'):>5}x"
        print(f"   {d:4} {kib(b):5}{cols}")
    print("   (each cell: dmabench's submit µs, then its ratio to the probe's call µs)")


def bign_section(work):
    """The bign step: dmabench's h2d ce-batch at 4096 x 4 KiB in different company, beside the probe's at n = 4096."""
    d = os.path.join(work, "bign")
    if not os.path.isdir(d):
        return
    print("== bign: h2d ce-batch 4 KiB, submit µs a call (dmabench: breakdown.submit_us; probe: call_us)")
    for path in sorted(glob.glob(os.path.join(d, "dmabench-*.json"))):
        res = records(path) or []
        cells = ", ".join(f"n={r['layout']['blocks']}: {fmt((r.get('breakdown') or {}).get('submit_us'), '.1f')}"
                          for r in res if r.get("status") == "ok")
        print(f"   {os.path.basename(path):28} {cells or 'no ok record'}")
    for path in sorted(glob.glob(os.path.join(d, "probe-*.jsonl"))):
        cells = ", ".join(f"n={r['n']}: {r['call_us']:.1f}" for r in jsonl(path)
                          if r.get("test") == "submit" and "call_us" in r)
        print(f"   {os.path.basename(path):28} {cells or 'no submit line'}")


def order_section(work):
    """The order step: the probe's h2d batch call µs by source access order, with and without the event before."""
    files = sorted(glob.glob(os.path.join(work, "order", "probe-*.jsonl")))
    if not files:
        return
    print("== order: probe h2d batch call µs by srcAccessOrder and the event just before (mark)")
    for path in files:
        cells = ", ".join(f"{kib(r['block'])} n={r['n']}: {r['call_us']:.1f}" for r in jsonl(path)
                          if r.get("test") == "submit" and "call_us" in r)
        print(f"   {os.path.basename(path)[len('probe-'):-len('.jsonl')]:20} {cells or 'no submit line'}")


def main():
    if len(sys.argv) != 2 or not os.path.isdir(sys.argv[1]):
        print("usage: summarize.py WORK (a directory run-submission.sh wrote)", file=sys.stderr)
        return 2
    work = sys.argv[1]
    fits = probe_section(work)
    mark_section(work)
    frag_section(work)
    desc_section(work, fits)
    per_n_section(work)
    bign_section(work)
    order_section(work)
    return 0


if __name__ == "__main__":
    sys.exit(main())
