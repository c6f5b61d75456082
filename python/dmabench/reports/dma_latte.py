"""DMA-Latte tables from a dmabench run (standard library only).

usage: dma_latte_report.py DMA_LATTE.json [--breakdown BREAKDOWN.json] [--timing oneshot] [--baseline VARIANT]

Prints markdown: (1) speedup of every copy-engine variant over plain `ce` pcpy/enqueue/event for
allgather and alltoall per size (DMA-Latte's table layout; `--baseline` names another variant as the tables
print it, e.g. `sdma [software engine]`, and then its engine's variants are listed too), (2) the best DMA variant against the
best NCCL mode per size, in latency and busbw, (3) the four-phase breakdown of one copy per size
(when a breakdown file is given). Only ok (validated) results are used. A p50 is shown with half its 95% interval
(`12.3 ±0.4`) and `noisy` after a noisy case, as summarize.py shows it.
A results file may also be given as its run's journal, `<file>.journal`; a results file with a journal beside
it (its run has not finished) is read from the journal when that holds more cases, with a note on stderr
(dmabench.load).

Exit codes: 0 done; 2 bad input: an unreadable or malformed results file or a bad argument, with one line
`dma_latte_report.py: error: ...` on stderr (never a traceback; dmabench.schema.check_document says what
is checked).
"""
import sys

from ..keys import labels_apart, NOISY_LEGEND, p50_interval, p50_text, pattern_label, placement, placement_order
from ..reader import load
from ..text import fmt_size, printable, table
from ..tool import arg_parser, run_tool

TOOL = "dma_latte_report.py"
DMA = ("ce", "ce-batch")


def main(argv=None, tool=TOOL):
    return run_tool(tool, run, argv)


def run(argv=None):
    ap = arg_parser(__doc__)
    ap.add_argument("results")
    ap.add_argument("--breakdown")
    ap.add_argument("--timing", default="oneshot", choices=["oneshot", "pipelined"])
    ap.add_argument("--baseline", default="ce schedule=pcpy", help="the variant the speedups divide by (default: %(default)s)")
    a = ap.parse_args(argv)
    res = [r for r in load(a.results)["results"] if r["status"] == "ok"]
    bres = [r for r in load(a.breakdown)["results"] if r["status"] == "ok" and isinstance(r.get("breakdown_us"), dict)] \
        if a.breakdown else []
    names = {**labels_apart(res), **labels_apart(bres)}  # the variant; what tells two cases of one cell apart

    def variant(r):
        return names[id(r)]

    sizes = sorted({r["bytes_per_rank"] for r in res})
    rec = {(placement(r), variant(r), r["timing"], r["bytes_per_rank"]): r for r in res}
    p50 = {k: r["latency_us"]["p50"] for k, r in rec.items()}
    bus = {(placement(r), variant(r), r["timing"], r["bytes_per_rank"]): r["busbw_GBps"] for r in res}
    # allgather and alltoall, each in place too where the file has such cases
    groups = sorted({placement(r) for r in res if r["pattern"] in ("allgather", "alltoall")} |
                    {("allgather", False), ("alltoall", False)}, key=placement_order)
    base = a.baseline
    engines = DMA + (base.split(" ")[0],)
    out = []
    for pattern in groups:
        variants = sorted({variant(r) for r in res if placement(r) == pattern and r["engine"] in engines})
        out.append("\n" + printable(f"**{pattern_label(*pattern)}, {a.timing}: speedup over plain `{base}`"
                                    f"{' (enqueue, event)' if base == 'ce schedule=pcpy' else ''} = its p50 / variant p50**") + "\n")
        rows = [[base] + [f"{p50_text(rec[(pattern, base, a.timing, s)])} µs" if (pattern, base, a.timing, s) in p50 else "–" for s in sizes]]
        for v in variants:
            if v == base:
                continue
            cells = []
            for s in sizes:
                b, x = p50.get((pattern, base, a.timing, s)), p50.get((pattern, v, a.timing, s))
                cells.append(f"{b / x:.2f}" if b and x else "–")
            rows.append([v] + cells)
        out.append(table(["variant"] + [fmt_size(s) for s in sizes], rows))
    for timing in ("oneshot", "pipelined"):
        out.append(f"\n**Best DMA variant vs best NCCL mode, {timing}** (p50 µs; ratio = DMA / NCCL; "
                   "busbw GB/s of each at that size; NCCL CE = `nccl cta_policy=zero`)\n")
        out.append(table(["pattern", "size/rank", "best DMA", "p50", "best NCCL", "p50", "DMA/NCCL",
                          "NCCL CE / DMA", "DMA busbw", "NCCL busbw", "NCCL CE busbw"],
                         _best_dma_vs_nccl_rows(groups, sizes, timing, rec, p50, bus)))
    if any(p50_interval(r) or r.get("noisy") is True for r in res):
        out.append("\n" + NOISY_LEGEND)
    if a.breakdown:
        out.append("\n**Latency breakdown of one copy, GPU 0 → GPU 1, oneshot** (µs, medians; shares of the untraced total)\n")
        out.append(table(["variant", "size", "total", "control", "schedule", "copy", "sync", "not copy",
                          "control / copy share", "aligned"], _breakdown_rows(bres, variant)))
    print("\n".join(out).lstrip("\n"))
    return 0


def _best_dma_vs_nccl_rows(groups, sizes, timing, rec, p50, bus):
    """The rows of the best DMA variant vs best NCCL mode table at `timing`: one per pattern and size that has both."""
    rows = []
    for pattern in groups:
        for s in sizes:
            dma = [(p50[k], k[1]) for k in p50 if k[0] == pattern and k[2] == timing and k[3] == s and k[1].split(" ")[0] in DMA]
            nccl = [(p50[k], k[1]) for k in p50 if k[0] == pattern and k[2] == timing and k[3] == s and k[1].startswith("nccl")]
            ce_coll = [(p50[k], k[1]) for k in p50 if k[0] == pattern and k[2] == timing and k[3] == s and "cta_policy=zero" in k[1]]
            if not dma or not nccl:
                continue
            (td, vd), (tn, vn) = min(dma), min(nccl)
            tce = min(ce_coll)[0] if ce_coll else None
            rows.append([pattern_label(*pattern), fmt_size(s), f"{vd}", p50_text(rec[(pattern, vd, timing, s)]), f"{vn}",
                         p50_text(rec[(pattern, vn, timing, s)]), f"{td / tn:.2f}",
                         f"{tce / td:.2f}" if tce else "–",
                         f"{bus[(pattern, vd, timing, s)]:.1f}", f"{bus[(pattern, vn, timing, s)]:.1f}",
                         f"{max(bus[(pattern, v, timing, s)] for _, v in ce_coll):.1f}" if ce_coll else "–"])
    return rows


def _breakdown_rows(bres, variant):
    """The rows of the latency breakdown table: one per case of the breakdown file, by variant and size."""
    rows = []
    for r in sorted(bres, key=lambda r: (variant(r), r["bytes_per_rank"])):
        b = r["breakdown_us"]
        if "error" in b:
            rows.append([variant(r), fmt_size(r["bytes_per_rank"]), "error: " + b["error"][:60]] + [""] * 7)
            continue
        t = b["total"]
        rows.append([variant(r), fmt_size(r["bytes_per_rank"]), f"{t:.1f}", f"{b['control']:.2f}", f"{b['schedule']:.2f}",
                     f"{b['copy']:.2f}", f"{b['sync']:.2f}", f"{100 * (t - b['copy']) / t:.0f}%",
                     f"{100 * b['control'] / t:.0f}% / {100 * b['copy'] / t:.0f}%", f"{b['aligned_fraction']:.2f}" if b.get("aligned_fraction") is not None else "–"])
    return rows


if __name__ == "__main__":
    sys.exit(main())
