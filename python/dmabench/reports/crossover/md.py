"""The Markdown report: per group the winner table with each first-named p50's interval and coverage, the regions,
thresholds and head-to-head tables, the p50 and SM cost table, the fits, cliffs, model breaks and knees, the notes;
and the page with its sources (markdown). Text only: every figure in it is made by the modules below."""
from ...keys import interval_text
from ...text import fmt_num, fmt_size, printable, table
from .fits import ratio_text


def pct(x):
    """A coverage as a percentage: '75%', '93.75%', '95.1%'."""
    return f"{100 * x:.2f}".rstrip("0").rstrip(".") + "%"


def interval_md(c):
    """A mechanism cell's p50 and its interval with the interval's coverage: '95.1 [94.0, 96.2] 75%'; the bare p50
    where no interval was recorded."""
    if not c["interval_recorded"]:
        return f"{fmt_num(c['p50_us'])} (no interval)"
    lo, hi = c["p50_interval_us"]
    cover = pct(c["interval_coverage"]) if c["interval_coverage"] is not None else "coverage unknown"
    return f"{fmt_num(c['p50_us'])} [{fmt_num(lo)}, {fmt_num(hi)}] {cover}"


def decision_text(row):
    """The winner (or the tied mechanisms) and the first-named's p50 with its interval and coverage: a tie or a win
    is only as sure as the intervals it rests on."""
    first = row["mechanisms"][row["winner"]]
    if row["tie"]:
        return f"tie ({', '.join(row['tied'])}): {interval_md(first)}"
    head = f"{row['winner']} ×{ratio_text(row['margin'])}" if row["runner_up"] else f"{row['winner']} only"
    return f"{head}: {interval_md(first)}"


def coverage_sentence(cells):
    """What the shown intervals are and how often each kind holds the median (the coverages in these cells, not a
    blanket 95%); "" where no cell has an interval."""
    kinds = sorted({(c["interval_coverage"], c["interval_kind"]) for c in cells if c["interval_recorded"]},
                   key=lambda k: (k[0] is None, k[0] or 0, k[1]))
    said = "; ".join(f"{what}: holds the median with {pct(cov) if cov is not None else 'unknown probability'}"
                     for cov, what in kinds)
    return f"Intervals: {said}." if said else ""


def decision_md(g):
    by_cell = {(r["block_bytes"], r["blocks_per_op"]): r for r in g["cells"]}
    header = ["block \\ n"] + [f"n={n}" for n in g["blocks_per_op"]]
    body = [[fmt_size(b)] + [decision_text(by_cell[(b, n)]) if (b, n) in by_cell else "–" for n in g["blocks_per_op"]]
            for b in g["block_sizes"]]
    shown = [r["mechanisms"][r["winner"]] for r in g["cells"]]
    return ["", "**Who wins** (lowest p50; ×: runner-up p50 / winner p50; tie: p50 intervals overlap; then the "
                "first-named's p50 µs [its interval] and the interval's coverage)", "",
            table(header, body)] + (["", coverage_sentence(shown)] if coverage_sentence(shown) else [])


def cost_md(g):
    header = ["block", "n"] + [f"{m} p50 µs (SM·µs)" for m in g["mechanisms"]]
    body = []
    for row in g["cells"]:
        cells = []
        for m in g["mechanisms"]:
            c = row["mechanisms"].get(m)
            cost = "–" if c is None else fmt_num(c["sm_cost_SM_us"]) if c["sm_cost_SM_us"] is not None else \
                "CPU" if c["sm_note"].startswith("CPU") else "?"
            cells.append("–" if c is None else f"{cell_p50(c)} ({cost})")
        body.append([fmt_size(row["block_bytes"]), str(row["blocks_per_op"])] + cells)
    shown = [c for row in g["cells"] for c in row["mechanisms"].values() if c]
    legend = ["", f"{COST_LEGEND}. {coverage_sentence(shown)}".rstrip()] \
        if any(c["interval_recorded"] or c["noisy"] is True for c in shown) else []
    return ["", "**p50 and SM cost** (SMs held × p50; 0 for DMA engines; CPU: host threads, not SMs; ?: unknown)",
            "", table(header, body)] + legend


COST_LEGEND = ("p50 ± half its interval (`p50_interval_us`, the larger side; its coverage below); `noisy`: the "
               "interval is wider than the run's `max_noise`, or fewer than 6 samples: the p50 is not known to that "
               "precision")


def cell_p50(c):
    """A mechanism cell's p50 with half its interval (where recorded) and `noisy`."""
    return interval_text(c["p50_us"], c["p50_interval_us"] if c["interval_recorded"] else None, c["noisy"], fmt_num)


def versus_text(c):
    """'2.31×' (B p50 / A p50), ' (tie)' added where the intervals overlap; '–' where either is missing."""
    if c is None or c["tie"] is None:
        return "–"
    return ("–" if c["ratio"] is None else f"{c['ratio']:.2f}×") + (" (tie)" if c["tie"] else "")


def versus_md(g):
    out = []
    for v in g["versus"]:
        a, b = v["a"], v["b"]
        by_cell = {(c["block_bytes"], c["blocks_per_op"]): c for c in v["cells"]}
        sizes, counts = sorted({size for size, _ in by_cell}), sorted({n for _, n in by_cell})
        body = [[fmt_size(size)] + [versus_text(by_cell.get((size, n))) for n in counts] for size in sizes]
        out += ["", printable(f"**{a} vs {b}** ({b} p50 / {a} p50: > 1 where {a} is faster; "
                              "(tie): p50 intervals overlap)"), "",
                table(["block \\ n"] + [f"n={n}" for n in counts], body)]
        out += bullets(printable(f"**{a} vs {b} by n** (beats = lower p50, intervals apart)"),
                       [line["text"] for line in v["lines"]], "no cell in common")
        if v["note"]:
            out.append(f"_{printable(v['note'])}_")
    return out


def fit_row(f):
    if not f["fitted"]:
        return [f["mechanism"], str(f["cells"]), f"not fitted ({f['reason']})"] + ["–"] * 5
    w = f["worst_cell"]
    return [f["mechanism"], str(f["cells"]), fmt_num(f["per_call_us"]), fmt_num(f["per_desc_us"]),
            fmt_num(f["rate_GBps"]), "–" if f["r2"] is None else f"{f['r2']:.4f}",
            f"{100 * f['max_rel_residual']:.2f}%", f"{fmt_size(w['block_bytes'])}, n={w['blocks_per_op']}"]


def fits_md(g):
    header = ["mechanism", "cells", "per_call µs", "per_desc µs", "rate GB/s", "R²", "max rel. residual", "at"]
    return ["", "**Model**: p50_us = per_call_us + per_desc_us × n + n × block / rate (relative least squares)", "",
            table(header, [fit_row(f) for f in g["fits"]])]


def break_text(f):
    b = f["break"]
    head = f"{f['mechanism']}: the fit misses by up to {100 * f['max_rel_residual']:.1f}%"
    if b["break_after_bytes"] is None:
        return f"{head}; {b['reason']}"
    lo, hi = b["below"], b["above"]
    return (f"{head}; the model breaks between {fmt_size(b['break_after_bytes'])} and {fmt_size(b['next_bytes'])} "
            f"(≤: {piece_text(lo)}; >: {piece_text(hi)})")


def piece_text(f):
    return f"{fmt_num(f['per_call_us'])} + {fmt_num(f['per_desc_us'])}·n µs, {fmt_num(f['rate_GBps'])} GB/s"


def bullets(head, lines, empty):
    return ["", head, ""] + ([f"- {printable(x)}" for x in lines] if lines else [f"_{empty}_"])


def group_md(g):
    out = ["", f"## {printable(g['title'])}"]
    out += decision_md(g)
    out += bullets("**Regions** (per n, consecutive block sizes with one winner)", [r["text"] for r in g["regions"]],
                   "none")
    out += bullets("**Thresholds** (sm variant vs DMA variant: beats = lower p50, intervals apart)",
                   [t["text"] for t in g["thresholds"]], "no sm and DMA variants measured together")
    out += versus_md(g)
    out += cost_md(g) + fits_md(g)
    breaks = [break_text(f) for f in g["fits"] if f["break"]]
    out += bullets("**Cliffs**", [c["text"] for c in g["cliffs"]] + breaks, "none found")
    out += bullets("**Knees** (per-descriptor bound)", [k["text"] for k in g["knees"]], "fewer than 2 block sizes")
    return out + [f"_{printable(n)}_" for n in g["notes"]]


def notes_of(notes, timing):
    out = []
    if notes["other_timing"]:
        other = "pipelined" if timing == "oneshot" else "oneshot"
        out.append(f"{notes['other_timing']} block record(s) at timing {other} not used (--timing {other}).")
    if notes["not_counted"]:
        out.append(f"{notes['not_counted']} block record(s) not ok or not validated: not used.")
    if notes["replaced"]:
        out.append(f"{notes['replaced']} block record(s) measured a cell an earlier one did (same mechanism, block "
                   "size and count); the later one is used.")
    return out


def markdown(report):
    out = [f"# Crossover maps: who should move small blocks ({report['timing']})", ""]
    out += [printable(f"- `{s['path']}`: {s['caption']}" + (" (levels file: between-process intervals)"
                                                          if s["levels"] else "")) for s in report["sources"]]
    out += ["", f"_--knee {report['knee']:g}, --cliff {report['cliff']:g}_"]
    out += [f"_{printable(n)}_" for n in report["notes"]]
    if not report["groups"]:
        out += ["", f"No block-layout records (layout.kind \"blocks\") ok and validated at timing {report['timing']} "
                    "in these files."]
    for g in report["groups"]:
        out += group_md(g)
    return "\n".join(out) + "\n"
