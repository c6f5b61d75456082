"""The decisions of one group: per cell the winner, runner-up, margin and ties with each mechanism's p50 and SM cost;
the regions (runs of one winner); the thresholds of each sm variant against each DMA variant (outcome: who beats
whom); the head-to-head pairs of --versus; and analyse, which makes one group's whole entry of the report from its
cells, with its title and its place in the report's order (dmabench.reports.crossover.cli's docstring, 4 and 6)."""
import math

from ...keys import PATTERN_ORDER
from ...text import fmt_size, quote, ResultsError
from .read import DMA_ENGINES
from .fits import cliffs_of, fit_mechanism, knee_of, ratio_text

HOST_KINDS = ["pinned", "mapped", "registered", "pageable"]


def mechanism_cell(e):
    cost = e["sms_held"] * e["p50_us"] if e["sms_held"] is not None else None
    return {"p50_us": e["p50_us"], "p50_interval_us": e["interval"], "interval_recorded": e["interval_recorded"],
            "interval_coverage": e["coverage"], "interval_kind": e["interval_kind"],
            "noisy": e["noisy"], "sms_held": e["sms_held"], "sm_cost_SM_us": cost, "sm_note": e["sm_note"]}


def decide(size, count, cells):
    """The decision row of one cell from {mechanism: entry}."""
    ranked = sorted(cells, key=lambda m: (cells[m]["p50_us"], m))
    win = ranked[0]
    high = cells[win]["interval"][1]
    tied = [m for m in ranked[1:] if cells[m]["interval"][0] <= high]
    runner = ranked[1] if len(ranked) > 1 else None
    return {"block_bytes": size, "blocks_per_op": count, "bytes": size * count, "winner": win, "runner_up": runner,
            "margin": cells[runner]["p50_us"] / cells[win]["p50_us"] if runner else None, "tie": bool(tied),
            "tied": [win] + tied if tied else [], "mechanisms": {m: mechanism_cell(cells[m]) for m in ranked}}


def decision_rows(cells):
    by_cell = {}
    for (size, count, mech), e in cells.items():
        by_cell.setdefault((size, count), {})[mech] = e
    return [decide(size, count, by_cell[(size, count)]) for size, count in sorted(by_cell)]


def size_range(a, b):
    """'4–24 KiB', '28 KiB–4 MiB', '8 KiB'."""
    if a == b:
        return fmt_size(a)
    sa, sb = fmt_size(a), fmt_size(b)
    if sa.split(" ")[1] == sb.split(" ")[1]:
        return f"{sa.split(' ')[0]}–{sb}"
    return f"{sa}–{sb}"


def run_text(run):
    span = size_range(run["from_bytes"], run["to_bytes"])
    if run["winner"] == "tie":
        return f"tie at {span} ({', '.join(run['tied'])})"
    lo, hi = run["margin_min"], run["margin_max"]
    margin = "alone" if lo is None else f"{ratio_text(lo)}×" if ratio_text(lo) == ratio_text(hi) else \
        f"{ratio_text(lo)}–{ratio_text(hi)}×"
    return f"{run['winner']} wins {span} ({margin})"


def regions_of(rows, counts):
    """Per n, the maximal runs of consecutive block sizes with one winner ("tie" runs of their own)."""
    out = []
    for n in counts:
        runs = []
        for row in (r for r in rows if r["blocks_per_op"] == n):
            label = "tie" if row["tie"] else row["winner"]
            if not runs or runs[-1]["winner"] != label:
                runs.append({"winner": label, "from_bytes": row["block_bytes"], "sizes": 0, "margins": [],
                             "tied": set()})
            run = runs[-1]
            run["to_bytes"], run["sizes"] = row["block_bytes"], run["sizes"] + 1
            run["tied"].update(row["tied"])
            if row["margin"] is not None and not row["tie"]:
                run["margins"].append(row["margin"])
        for run in runs:
            margins = run.pop("margins")
            run.update(tied=sorted(run["tied"]), margin_min=min(margins) if margins else None,
                       margin_max=max(margins) if margins else None)
        out.append({"blocks_per_op": n, "runs": runs, "text": f"n={n}: " + ", ".join(map(run_text, runs))})
    return out


def outcome(k, d):
    """Who beats whom of a kernel entry `k` and a DMA entry `d`: "kernel", "dma" or "tie" (intervals overlap)."""
    if k["p50_us"] < d["p50_us"] and k["interval"][1] < d["interval"][0]:
        return "kernel"
    if d["p50_us"] < k["p50_us"] and d["interval"][1] < k["interval"][0]:
        return "dma"
    return "tie"


def threshold(n, kernel, dma, points):
    """The crossover of one (sm variant, DMA variant) pair at one n over [(B, outcome)] in block-size order."""
    first_loss = next((i for i, (_, o) in enumerate(points) if o != "kernel"), len(points))
    up_to = points[first_loss - 1][0] if first_loss else None
    below = points[first_loss][0] if first_loss < len(points) else None
    last_non_dma = max((i for i, (_, o) in enumerate(points) if o != "dma"), default=-1)
    dma_from = points[last_non_dma + 1][0] if last_non_dma + 1 < len(points) else None
    single = all(o != "kernel" for _, o in points[first_loss:])
    if up_to is None:
        text = f"{kernel} does not beat {dma} at the smallest size ({fmt_size(points[0][0])})"
    elif below is None:
        text = f"{kernel} beats {dma} at every size ({fmt_size(points[0][0])}–{fmt_size(up_to)})"
    else:
        text = f"{kernel} beats {dma} up to {fmt_size(up_to)}, not at {fmt_size(below)}"
    if dma_from is not None:
        text += f"; {dma} beats it from {fmt_size(dma_from)}"
    if not single:
        text += " (it beats it again at a larger size: not one crossover)"
    return {"blocks_per_op": n, "kernel": kernel, "dma": dma, "kernel_wins_up_to_bytes": up_to,
            "kernel_wins_below_bytes": below, "dma_wins_from_bytes": dma_from, "single_crossover": single,
            "outcomes": [[b, o] for b, o in points], "text": f"n={n}: {text}"}


def thresholds_of(cells, mechs, counts):
    engine = {m: e["engine"] for (_, _, m), e in cells.items()}
    kernels = [m for m in mechs if engine[m] == "sm"]
    dmas = [m for m in mechs if engine[m] in DMA_ENGINES]
    out = []
    for n in counts:
        sizes = sorted({b for b, c, _ in cells if c == n})
        for k in kernels:
            for d in dmas:
                points = [(b, outcome(cells[(b, n, k)], cells[(b, n, d)])) for b in sizes
                          if (b, n, k) in cells and (b, n, d) in cells]
                if points:
                    out.append(threshold(n, k, d, points))
    return out


def split_pair(text, known):
    """(A, B) of a --versus value "A,B" (a label may hold commas: the split whose both sides are `known`);
    ResultsError (exit 2) naming the unknown label and the known ones otherwise."""
    pairs = [(text[:i].strip(), text[i + 1:].strip()) for i, ch in enumerate(text) if ch == ","]
    if not pairs:
        raise ResultsError(f"--versus {quote(text)}: expected two variant labels A,B")
    both = next((p for p in pairs if p[0] in known and p[1] in known), None)
    if both and both[0] == both[1]:
        raise ResultsError(f"--versus {quote(text)}: A and B are one label")
    if both:
        return both
    a, b = next((p for p in pairs if p[0] in known or p[1] in known), pairs[0])
    listed = ", ".join(sorted(known)) if known else "none (no block records)"
    raise ResultsError(f"--versus: unknown label {quote(b if a in known else a)}; known: {listed}")


def versus_cell(size, count, ea, eb):
    """One cell of a pair from its two entries (None where not measured): ratio = B p50 / A p50."""
    ratio = tie = None
    if ea and eb:
        ratio = eb["p50_us"] / ea["p50_us"] if ea["p50_us"] > 0 else None
        ratio = ratio if ratio is not None and math.isfinite(ratio) else None
        tie = outcome(ea, eb) == "tie"
    return {"block_bytes": size, "blocks_per_op": count, "ratio": ratio, "tie": tie,
            "a_p50_us": ea["p50_us"] if ea else None, "b_p50_us": eb["p50_us"] if eb else None}


def versus_line(n, a, b, points):
    """The thresholds line (4) of A over B at one n, its fields named for A and B."""
    t = threshold(n, a, b, points)
    return {"blocks_per_op": n, "a_wins_up_to_bytes": t["kernel_wins_up_to_bytes"],
            "a_wins_below_bytes": t["kernel_wins_below_bytes"], "b_wins_from_bytes": t["dma_wins_from_bytes"],
            "single_crossover": t["single_crossover"], "text": t["text"]}


def versus_of(cells, rows, counts, a, b):
    """The head-to-head entry of A and B in one group (docstring, 6)."""
    out = [versus_cell(r["block_bytes"], r["blocks_per_op"], cells.get((r["block_bytes"], r["blocks_per_op"], a)),
                       cells.get((r["block_bytes"], r["blocks_per_op"], b))) for r in rows
           if a in r["mechanisms"] or b in r["mechanisms"]]
    lines = []
    for n in counts:
        points = [(c["block_bytes"], outcome(cells[(c["block_bytes"], n, a)], cells[(c["block_bytes"], n, b)]))
                  for c in out if c["blocks_per_op"] == n and c["tie"] is not None]
        if points:
            lines.append(versus_line(n, a, b, points))
    return {"a": a, "b": b, "cells": out, "common_cells": sum(c["tie"] is not None for c in out), "lines": lines,
            "figure": None, "note": None}


def versus_all(g, cells, pairs):
    """The group's `versus` list; a note for each pair it did not measure both of."""
    out = []
    for a, b in pairs:
        missing = [m for m in (a, b) if m not in g["mechanisms"]]
        if missing:
            g["notes"].append(f"--versus {a},{b}: {' and '.join(missing)} not measured in this group.")
        else:
            out.append(versus_of(cells, g["cells"], g["blocks_per_op"], a, b))
    return out


def series_of(cells, mech, n):
    """[(B, p50, interval low, interval high)] of one mechanism at one n, in block-size order."""
    return sorted((b, e["p50_us"], *e["interval"]) for (b, c, m), e in cells.items() if m == mech and c == n)


def title(g):
    host = f"{g['host_kind']} host memory, numa {g['numa']}" if g["numa"] is not None else "device memory"
    a = g["arrangement"]
    arr = (a["order"] or "?") + (f", stride {fmt_size(a['stride_bytes'])}" if a["stride_bytes"] else "") + \
        (f", pool {fmt_size(a['pool_bytes'])}" if a["pool_bytes"] else "") + \
        (f", seed {a['seed']}" if a["seed"] not in (None, 1) else "") + f", sides {a['sides']}"
    place = " (in place)" if g["in_place"] else ""
    return f"{g['pattern']}{place} · {host} · blocks {arr} · dev={','.join(map(str, g['devices']))}"


def analyse(key, group, knee, cliff, pairs=()):
    pattern, in_place, host, devices, arrangement = key
    cells = group["cells"]
    mechs = sorted({m for _, _, m in cells})
    counts = sorted({n for _, n, _ in cells})
    fits = [fit_mechanism(m, [(b, n, e["p50_us"]) for (b, n, w), e in sorted(cells.items()) if w == m], cliff)
            for m in mechs]
    cliffs, knees = [], []
    for m in mechs:
        for n in counts:
            series = series_of(cells, m, n)
            cliffs += cliffs_of(m, n, series, cliff)
            k = knee_of(m, n, series, knee)
            if k:
                knees.append(k)
    rows = decision_rows(cells)
    notes = [f"{group['replaced']} record(s) measured a cell an earlier one did; the later one is used."] \
        if group["replaced"] else []
    order, stride, pool, seed, sides = arrangement
    g = {"pattern": pattern, "in_place": in_place, "host_kind": host[0] if host else "device",
         "numa": host[1] if host else None, "devices": list(devices),
         "arrangement": {"order": order, "stride_bytes": stride, "pool_bytes": pool, "seed": seed, "sides": sides},
         "mechanisms": mechs, "block_sizes": sorted({b for b, _, _ in cells}), "blocks_per_op": counts,
         "fits": fits, "cliffs": cliffs, "knees": knees, "cells": rows, "regions": regions_of(rows, counts),
         "thresholds": thresholds_of(cells, mechs, counts), "notes": notes, "figure": None}
    g["title"] = title(g)
    g["versus"] = versus_all(g, cells, pairs)
    return g


def group_order(key):
    pattern, in_place, host, devices, arrangement = key
    rank = PATTERN_ORDER.index(pattern) if pattern in PATTERN_ORDER else len(PATTERN_ORDER)
    kind = (HOST_KINDS.index(host[0]) if host[0] in HOST_KINDS else len(HOST_KINDS), *host) if host else (-1,)
    return rank, pattern, in_place, kind, devices, tuple("" if x is None else str(x) for x in arrangement)
