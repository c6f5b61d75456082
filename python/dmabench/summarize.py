"""Markdown tables from a dmabench results file (standard library only).

usage: summarize.py RESULTS.json [--patterns copy,allgather] [--engines ce,sm,nccl]
                                 [--sizes 1KiB,64KiB,1MiB] [--devices 0,1]

Prints, per pattern (in-place cases apart, as "allgather (in place)"), p50 latency in microseconds for
each engine (rows, with its options) and size (columns) as "oneshot / pipelined", each p50 with half its 95%
interval (`12.3 ±0.4`; files without intervals: the p50 alone) and `noisy` after a case flagged noisy (a legend
line says so), then the peak busbw
of each engine per pattern with the size and timing mode where it was reached. Only `ok` (validated)
results are used; a cell with no ok result shows its status instead.
A results file may also be given as its run's journal, `<file>.journal`; a results file with a journal beside
it (its run has not finished) is read from the journal when that holds more cases, with a note on stderr
(dmabench.load).

Exit codes: 0 done; 2 bad input: an unreadable or malformed results file or a bad argument, with one line
`summarize.py: error: ...` on stderr (never a traceback; dmabench.schema.check_document says what
is checked).
"""
import re
import sys

from .keys import labels_apart, NOISY_LEGEND, p50_interval, p50_text, pattern_label, placement, placement_order
from .reader import load
from .text import cell as c, fmt_size, parse_size, printable, quote, ResultsError
from .tool import arg_parser, run_tool

TOOL = "summarize.py"


def main(argv=None, tool=TOOL):
    return run_tool(tool, run, argv)


def run(argv=None):
    ap = arg_parser(__doc__)
    ap.add_argument("results")
    ap.add_argument("--patterns", default="")
    ap.add_argument("--engines", default="")
    ap.add_argument("--sizes", default="")
    ap.add_argument("--devices", default="")
    a = ap.parse_args(argv)
    doc = load(a.results)
    res = doc["results"]
    if a.devices:
        if not re.fullmatch(r"\d+(,\d+)*", a.devices):
            raise ResultsError(f"--devices {quote(a.devices)} is not a list of device ids such as 0,1")
        want = [int(x) for x in a.devices.split(",")]
        res = [r for r in res if r["devices"] == want[: len(r["devices"])]]
    names = labels_apart(res)  # the engine variant, and what tells two cases of one cell apart where that is needed

    def variant(r):
        return names[id(r)]

    want_pats = [p for p in a.patterns.split(",") if p]
    # (pattern, in_place) groups, in the order asked for, else in PATTERN_ORDER
    pats = sorted({placement(r) for r in res if not want_pats or r["pattern"] in want_pats} | {(p, False) for p in want_pats},
                  key=lambda k: (want_pats.index(k[0]), k[1]) if want_pats else placement_order(k))
    engs = [e for e in a.engines.split(",") if e]
    sizes = [parse_size(s) for s in a.sizes.split(",") if s] or sorted({r["bytes_per_rank"] for r in res})
    out = latency_tables(res, pats, engs, sizes, variant) + busbw_table(res, pats, engs, variant)
    powered = [r for r in res if r["status"] == "ok" and isinstance(r.get("power"), dict)]
    if powered:
        out += power_table(powered, pats, engs, variant) + saving_table(powered, pats, variant)
    print("\n".join(out).lstrip("\n"))
    return 0


def engine_order(engs):
    """Sort key of variants: the engines of --engines in its order first, then by name."""
    return lambda v: (engs.index(v.split(" ")[0]) if v.split(" ")[0] in engs else 99, v)


def latency_tables(res, pats, engs, sizes, variant):
    """Per pattern and placement, the p50 latency of each variant (rows) and size (columns), "oneshot / pipelined"."""
    cell = {}
    for r in res:
        cell[(placement(r), variant(r), r["timing"], r["bytes_per_rank"])] = r
    out = []
    for p in pats:
        variants = sorted({variant(r) for r in res if placement(r) == p and (not engs or r["engine"] in engs)},
                          key=engine_order(engs))
        if not variants:
            continue
        out.append(f"\n**{printable(pattern_label(*p))}**: p50 latency, µs, oneshot / pipelined (bytes per rank)\n")
        out.append("| engine | " + " | ".join(fmt_size(s) for s in sizes) + " |")
        out.append("| --- |" + " --- |" * len(sizes))
        for v in variants:
            cells = []
            for s in sizes:
                parts = []
                for t in ("oneshot", "pipelined"):
                    r = cell.get((p, v, t, s))
                    if r is None:
                        parts.append("–")
                    elif r["status"] != "ok":
                        parts.append(r["status"])
                    else:
                        parts.append(p50_text(r))
                cells.append(" / ".join(parts))
            out.append(f"| {c(v)} | " + " | ".join(cells) + " |")
    shown = [r for r in res if r["status"] == "ok" and (p50_interval(r) or r.get("noisy") is True)]
    return out + ["", NOISY_LEGEND] if out and shown else out


def busbw_table(res, pats, engs, variant):
    """The peak busbw of each variant per pattern, with the size and timing where it was reached."""
    out = ["\n**Peak busbw** (GB/s, from p50; size per rank and timing where reached)\n",
           "| engine | " + " | ".join(c(pattern_label(*p)) for p in pats) + " |",
           "| --- |" + " --- |" * len(pats)]
    for v in sorted({variant(r) for r in res if not engs or r["engine"] in engs}, key=engine_order(engs)):
        row = []
        for p in pats:
            ok = [r for r in res if placement(r) == p and variant(r) == v and r["status"] == "ok"]
            if not ok:
                row.append("–")
                continue
            best = max(ok, key=lambda r: r["busbw_GBps"])
            row.append(f"{best['busbw_GBps']:.1f} ({fmt_size(best['bytes_per_rank'])}, {best['timing']})")
        out.append(f"| {c(v)} | " + " | ".join(row) + " |")
    return out


def power_table(powered, pats, engs, variant):
    """Per pattern and size, each ok case's power window: active W, energy per GB with its uncertainty, busy."""
    out = ["\n**Power** (per pattern and size: active W above idle summed over GPUs, energy per GB of S "
           "± its uncertainty; busy: share of the window with operations in flight, `low` under 95%; "
           "`error` when the window failed)\n",
           "| pattern | size/rank | engine | active W | J/GB | ± | busy | window s |",
           "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    for r in sorted(powered, key=lambda r: (pats.index(placement(r)) if placement(r) in pats else 9,
                                            r["bytes_per_rank"], variant(r))):
        if placement(r) not in pats or (engs and r["engine"] not in engs):
            continue
        p = r["power"]
        label = c(pattern_label(*placement(r)))
        if "error" in p:
            out.append(f"| {label} | {fmt_size(r['bytes_per_rank'])} | {c(variant(r))} | error: {c(p['error'][:50])} | | | | |")
            continue
        unc = p.get("uncertainty")
        jgb = p.get("energy_per_GB_J")
        busy = p.get("busy_fraction")  # absent in files older than the full-duty window
        busy_s = "–" if busy is None else f"{100 * busy:.2f}%{' low' if p.get('low_duty') else ''}"
        out.append(f"| {label} | {fmt_size(r['bytes_per_rank'])} | {c(variant(r))} | {p['active_W']:.1f} | "
                   f"{jgb:.3f} | {100 * unc:.1f}% | {busy_s} | {p['window_s']:.2f}{' (short)' if p.get('window_too_short') else ''} |"
                   if jgb is not None and unc is not None else
                   f"| {label} | {fmt_size(r['bytes_per_rank'])} | {c(variant(r))} | {p['active_W']:.1f} | – | – | {busy_s} | {p['window_s']:.2f} |")
    return out


def saving(dma, other):
    """What the DMA case saves per GB against `other`: 1 − E_DMA / E_other, ± the two relative uncertainties."""
    if not other:
        return "–"
    e_d, e_o = dma["power"]["energy_per_GB_J"], other["power"]["energy_per_GB_J"]
    u_d, u_o = dma["power"].get("uncertainty"), other["power"].get("uncertainty")
    u = f" ± {100 * (u_d + u_o) * e_d / e_o:.1f}%" if u_d is not None and u_o is not None else ""
    return f"{100 * (1 - e_d / e_o):+.1f}%{u}"


def saving_table(powered, pats, variant):
    """Per pattern and size, the best copy-engine variant's energy per GB against sm and the best NCCL mode."""
    out = ["\n**DMA energy saving** per GB: best copy-engine variant (`ce`, `ce-batch`) against `sm` and "
           "against the best NCCL mode; saving = 1 − E_DMA / E_other, ± the two relative uncertainties added\n",
           "| pattern | size/rank | best DMA J/GB | sm J/GB | saving vs sm | best NCCL J/GB | saving vs NCCL |",
           "| --- | --- | --- | --- | --- | --- | --- |"]
    ok = [r for r in powered if "error" not in r["power"] and r["power"].get("energy_per_GB_J")]

    def pick(rs):
        return min(rs, key=lambda r: r["power"]["energy_per_GB_J"]) if rs else None

    for p in pats:
        for size in sorted({r["bytes_per_rank"] for r in ok if placement(r) == p}):
            group = [r for r in ok if placement(r) == p and r["bytes_per_rank"] == size]
            dma = pick([r for r in group if r["engine"] in ("ce", "ce-batch")])
            sm = pick([r for r in group if r["engine"] == "sm"])
            nccl = pick([r for r in group if r["engine"] == "nccl"])
            if not dma:
                continue
            out.append(f"| {c(pattern_label(*p))} | {fmt_size(size)} | {dma['power']['energy_per_GB_J']:.3f} ({c(variant(dma))}) | "
                       f"{sm['power']['energy_per_GB_J']:.3f} | {saving(dma, sm)} | "
                       f"{nccl['power']['energy_per_GB_J']:.3f} ({c(variant(nccl))}) | {saving(dma, nccl)} |"
                       if sm and nccl else f"| {c(pattern_label(*p))} | {fmt_size(size)} | {dma['power']['energy_per_GB_J']:.3f} | – | – | – | – |")
    return out


if __name__ == "__main__":
    sys.exit(main())
