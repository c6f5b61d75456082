"""Communication-beside-compute tables from a dmabench overlap run (standard library only).

usage: overlap_report.py OVERLAP.json [--targets]

Prints markdown, one table per group of cases that share pattern and placement (in place or not),
size, timing and compute workload: per engine variant the compute slowdown, the communication time and bus bandwidth alone
and beside the workload, p50/p99 latency idle and under load, and the overlap efficiency. With
--targets it adds the checks of the overlap issue's targets (2-GPU H200): GEMM slowdown <= 2% with
>= 95% of the bandwidth kept at 64 and 256 MiB, <= 1/4 of NCCL's slowdown, and small-transfer p99
under load <= 0.5x NCCL's. Only ok (validated) results with an overlap record are used; a file without any is
bad input.
A results file may also be given as its run's journal, `<file>.journal`; a results file with a journal beside
it (its run has not finished) is read from the journal when that holds more cases, with a note on stderr
(dmabench.load).
Exit codes: 0 done; 2 bad input: an unreadable or malformed results file or a bad argument, with one line
`overlap_report.py: error: ...` on stderr (never a traceback; dmabench.schema.check_document says what
is checked).
"""
import sys

from ..keys import (beside, interval_text, labels_apart, NOISY_LEGEND, p50_interval, pattern_label, placement, variant,
                   versions_caption)
from ..reader import load
from ..text import fmt_size, printable, ResultsError, table
from ..tool import arg_parser, run_tool

TOOL = "overlap_report.py"
DMA = ("ce", "ce-batch", "hsa")
NOISE_PCT = 2.0  # GEMM slowdowns seen between -2.3% and +2% where nothing should slow the GEMM
# the tables' caption: what the intervals beside the p50s cover (issue 53)
CAPTION = (NOISY_LEGEND + ". Idle: the case's own p50 (`latency_us.p50`) with its interval (the p50 alone in files "
           "written before intervals were recorded); under load: the p50 and p99 of the samples taken beside the "
           "workload (`overlap.comm_with_us`, `comm_with_p99_us`), for which no interval is recorded.")


def measured(doc):
    return [r for r in doc["results"]
            if r["status"] == "ok" and isinstance(r.get("overlap"), dict) and "error" not in r["overlap"]]


def groups(results):
    out = {}
    for r in results:
        out.setdefault((placement(r), r["bytes_per_rank"], r["timing"], beside(r)), []).append(r)
    return out


def kept(r):
    """Share of the bus bandwidth kept beside the workload (1.0 = unchanged)."""
    return r["overlap"]["busbw_with_GBps"] / r["busbw_GBps"] if r["busbw_GBps"] else 0.0


def group_table(rows, name=variant):
    """The table of one group; `name(r)` a row's variant (labels_apart: two cases of one variant named apart)."""
    body = []
    for r in sorted(rows, key=lambda r: (r["engine"] not in DMA, name(r))):
        o = r["overlap"]
        body.append([f"`{name(r)}`", f"{o['compute_slowdown_pct']:+.1f}%",
                     f"{r['busbw_GBps']:.1f} → {o['busbw_with_GBps']:.1f} ({100 * kept(r):.0f}%)",
                     f"{idle_p50(r)} / {r['latency_us']['p99']:.1f}",
                     f"{o['comm_with_us']:.1f} / {o['comm_with_p99_us']:.1f}", f"{o['overlap_efficiency']:.2f}"])
    return table(["variant", "compute slowdown", "busbw GB/s alone → beside (kept)", "p50 / p99 µs idle",
                  "p50 / p99 µs under load", "overlap eff."], body)


def idle_p50(r):
    """The case's p50 alone with its interval (`12.3 ±0.4`, ` noisy` where flagged; the bare p50 where the file has
    no interval)."""
    return interval_text(r["latency_us"]["p50"], p50_interval(r), r.get("noisy"), lambda v: f"{v:.1f}")


def targets(results):
    out = ["\n### Targets\n"]
    by = groups(results)
    for group, size in [(g, s) for g in (("allgather", False), ("allgather", True)) for s in (64 << 20, 256 << 20)]:
        rows = [r for (p, s, t, b), rs in by.items() if p == group and s == size and b.startswith("gemm-")
                and b.endswith("8192x8192x8192") for r in rs]
        if not rows:
            continue
        dma = [r for r in rows if r["engine"] in DMA]
        # NCCL's own kernels (its copy-engine mode, cta_policy=zero, is a DMA path itself)
        nccl = [r for r in rows if r["engine"] == "nccl" and r["options"].get("cta_policy", "default") != "zero"]
        keep = [r for r in dma if kept(r) >= 0.95]
        best = min(keep, key=lambda r: r["overlap"]["compute_slowdown_pct"]) if keep else None
        least = min(dma, key=lambda r: r["overlap"]["compute_slowdown_pct"]) if dma else None
        n = min(nccl, key=lambda r: r["overlap"]["compute_slowdown_pct"]) if nccl else None
        line = f"- {pattern_label(*group)} {fmt_size(size)} per rank beside 8192³ GEMMs: "
        if best:
            s = best["overlap"]["compute_slowdown_pct"]
            line += (f"best DMA variant keeping ≥ 95% of its bandwidth: `{variant(best)}` {s:+.1f}% "
                     f"({'meets' if s <= 2.0 else 'misses'} ≤ 2%; keeps {100 * kept(best):.0f}%)")
        else:
            line += "no DMA variant keeps ≥ 95% of its bandwidth beside the GEMM (target missed)"
        if least and least is not best:
            line += (f"; lowest DMA slowdown overall `{variant(least)}` {least['overlap']['compute_slowdown_pct']:+.1f}% "
                     f"keeping {100 * kept(least):.0f}%")
        if n and best:
            ns = n["overlap"]["compute_slowdown_pct"]
            s = best["overlap"]["compute_slowdown_pct"]
            line += f"; least NCCL (kernel) slowdown `{variant(n)}` {ns:+.1f}%: "
            if ns < NOISE_PCT:  # slowdowns of a few tenths move between runs both ways
                line += f"within the ±{NOISE_PCT:.0f}% run-to-run noise, so DMA ≤ 1/4 of NCCL cannot be judged"
            else:
                line += f"DMA ≤ 1/4 of NCCL {'met' if s <= ns / 4 else 'missed'} ({s:+.1f}% vs {ns / 4:+.1f}%)"
        out.append(line)
    small = [r for (p, s, t, b), rs in by.items() if t == "oneshot" and s <= (1 << 20) and b.endswith("8192x8192x8192")
             for r in rs]
    for size in sorted({r["bytes_per_rank"] for r in small}):
        rs = [r for r in small if r["bytes_per_rank"] == size]
        dma = [r for r in rs if r["engine"] in DMA]
        nccl = [r for r in rs if r["engine"] == "nccl"]
        if not dma or not nccl:
            continue
        d = min(dma, key=lambda r: r["overlap"]["comm_with_p99_us"])
        n = min(nccl, key=lambda r: r["overlap"]["comm_with_p99_us"])
        d99, n99 = d["overlap"]["comm_with_p99_us"], n["overlap"]["comm_with_p99_us"]
        verdict = (f"{d99 / n99:.2f}x ({'meets' if d99 / n99 <= 0.5 else 'misses'} ≤ 0.5x)" if n99 > 0 else
                   "no ratio: the NCCL p99 is 0")
        out.append(f"- {pattern_label(*placement(rs[0]))} {fmt_size(size)} oneshot under load: best DMA p99 `{variant(d)}` "
                   f"{d99:.1f} µs vs best NCCL p99 `{variant(n)}` {n99:.1f} µs = {verdict}")
    return out


def main(argv=None, tool=TOOL):
    return run_tool(tool, run, argv)


def run(argv=None):
    ap = arg_parser(__doc__)
    ap.add_argument("results")
    ap.add_argument("--targets", action="store_true", help="add the target checks of the overlap issue")
    a = ap.parse_args(argv)
    doc = load(a.results)
    res = measured(doc)
    if not res:
        raise ResultsError(f"{a.results} has no measured overlap case")
    out = [printable(f"_{versions_caption(doc)}_")]
    for (group, size, timing, workload), rows in groups(res).items():
        out.append("\n" + printable(f"**{pattern_label(*group)} {fmt_size(size)} per rank, {timing}, beside {workload}**") + "\n")
        names = labels_apart(rows)
        out.append(group_table(rows, lambda r: names[id(r)]))
    out.append("\n" + CAPTION)
    if a.targets:
        out += [printable(line) if line.startswith("- ") else line for line in targets(res)]
    print("\n".join(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
