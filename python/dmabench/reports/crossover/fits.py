"""The fits and statistics of one mechanism's cells: the model time_us = per_call_us + per_desc_us x n + n x B / rate
by relative least squares and where it breaks (dmabench.reports.crossover.cli's docstring, 1 and 2b), the bandwidth
cliffs (2a) and the knees (3); and ratio_text, the ratio's text every layer above quotes."""
import math

from ...text import fmt_num, fmt_size

MIN_FIT_CELLS = 4
MIN_CLIFF_SIZES = 4


def solve3(a, b):
    """x with a x = b for a 3x3 `a` (Gaussian elimination, partial pivoting); None when it is singular."""
    m = [list(row) + [v] for row, v in zip(a, b)]
    scale = max(abs(v) for row in a for v in row) or 1.0
    for c in range(3):
        p = max(range(c, 3), key=lambda i: abs(m[i][c]))
        if abs(m[p][c]) <= 1e-12 * scale:
            return None
        m[c], m[p] = m[p], m[c]
        for i in range(c + 1, 3):
            f = m[i][c] / m[c][c]
            for j in range(c, 4):
                m[i][j] -= f * m[c][j]
    x = [0.0, 0.0, 0.0]
    for c in (2, 1, 0):
        x[c] = (m[c][3] - sum(m[c][j] * x[j] for j in range(c + 1, 3))) / m[c][c]
    return x


def fit_obstacle(points):
    """Why `points` [(B, n, p50)] cannot be fitted, or None."""
    sizes, counts = {b for b, _, _ in points}, {n for _, n, _ in points}
    if len(points) < MIN_FIT_CELLS:
        return f"{len(points)} cell{'s' if len(points) != 1 else ''}; needs >= {MIN_FIT_CELLS}"
    if len(counts) < 2:
        return f"one block count (n={next(iter(counts))}); needs >= 2"
    if len(sizes) < 2:
        return f"one block size ({fmt_size(next(iter(sizes)))}); needs >= 2"
    return None


def fit_cells(points):
    """Relative least squares p50 = per_call + per_desc x n + (n x B) x us_per_byte over [(B, n, p50)]."""
    why = fit_obstacle(points)
    if why:
        return {"fitted": False, "cells": len(points), "reason": why}
    try:
        return solve_fit(points)
    except (ZeroDivisionError, OverflowError):  # p50s near the float limits (5e-324 µs)
        return {"fitted": False, "cells": len(points), "reason": "p50s out of the range of a float fit"}


def solve_fit(points):
    """fit_cells on points it can fit: the weighted normal equations, columns scaled to their largest value."""
    rows = [(1.0, float(n), float(n) * b) for b, n, _ in points]
    scale = [max(abs(r[j]) for r in rows) for j in range(3)]
    units = [[r[j] / scale[j] / y for j in range(3)] for r, (_, _, y) in zip(rows, points)]
    a = [[sum(u[i] * u[j] for u in units) for j in range(3)] for i in range(3)]
    x = solve3(a, [sum(u[i] for u in units) for i in range(3)])
    if x is None:
        return {"fitted": False, "cells": len(points),
                "reason": "singular: the cells do not tell the three costs apart"}
    coef = [x[j] / scale[j] for j in range(3)]
    ys = [y for _, _, y in points]
    rel = [(y - sum(c * v for c, v in zip(coef, r))) / y for r, y in zip(rows, ys)]
    ssr = sum(e * e for e in rel)
    mean = sum(1 / y for y in ys) / sum(1 / (y * y) for y in ys)
    sst = sum(((y - mean) / y) ** 2 for y in ys)
    worst = max(range(len(rel)), key=lambda i: abs(rel[i]))
    return {"fitted": True, "cells": len(points), "per_call_us": coef[0], "per_desc_us": coef[1],
            "us_per_byte": coef[2], "rate_GBps": 1e-3 / coef[2] if coef[2] > 0 else None,
            "r2": 1.0 - ssr / sst if sst > 0 else None, "ssr": ssr, "max_rel_residual": abs(rel[worst]),
            "worst_cell": {"block_bytes": points[worst][0], "blocks_per_op": points[worst][1],
                           "rel_residual": rel[worst]}}


def best_split(points):
    """The block size B* where fitting B <= B* and B > B* apart leaves the least summed squared relative residuals."""
    best = None
    sizes = sorted({b for b, _, _ in points})
    for i, cut in enumerate(sizes[:-1]):
        low, high = fit_cells([p for p in points if p[0] <= cut]), fit_cells([p for p in points if p[0] > cut])
        if not (low["fitted"] and high["fitted"]):
            continue
        ssr = low["ssr"] + high["ssr"]
        if best is None or ssr < best["ssr"]:
            best = {"break_after_bytes": cut, "next_bytes": sizes[i + 1], "ssr": ssr, "below": low, "above": high}
    return best or {"break_after_bytes": None, "reason": "too few cells to fit two pieces"}


def fit_mechanism(mech, points, cliff):
    fit = {"mechanism": mech, **fit_cells(points), "break": None}
    if fit["fitted"] and fit["max_rel_residual"] > cliff:
        fit["break"] = best_split(points)
    return fit


def ratio_text(x):
    return "–" if x is None or not math.isfinite(x) else f"{x:.1f}" if x < 10 else f"{x:.0f}"


def ln(x):
    """The natural log of a ratio; NaN (which no comparison passes) where it is 0 or not finite."""
    return math.log(x) if 0 < x < math.inf else math.nan


def grow(x):
    """exp(x), capped (a slope of a huge ratio over a small step, applied to a larger one, would overflow)."""
    return math.exp(min(x, 700.0))


def bandwidths(n, series):
    """Per point of `series` [(B, p50, lo, hi)]: (bandwidth at the p50, at the interval's high time, at its low
    time), GB/s; inf where the interval's low time is 0."""
    return [(n * b / p / 1e3, n * b / hi / 1e3, n * b / lo / 1e3 if lo > 0 else math.inf) for b, p, lo, hi in series]


def cliffs_of(mech, n, series, cliff):
    """The bandwidth steps of one mechanism at one n that its neighbouring steps do not explain (docstring, 2a)."""
    if len(series) < MIN_CLIFF_SIZES:
        return []
    bw = bandwidths(n, series)
    widths = [math.log(series[i + 1][0] / series[i][0]) for i in range(len(series) - 1)]
    slopes = [ln(bw[i + 1][0] / bw[i][0]) / widths[i] for i in range(len(widths))]
    out = []
    for i, width in enumerate(widths):
        near = [slopes[j] for j in (i - 2, i - 1, i + 1, i + 2) if 0 <= j < len(slopes)]
        lo, hi = grow(min(near) * width), grow(max(near) * width)
        ratio = bw[i + 1][0] / bw[i][0]
        up = ratio > hi * (1 + cliff) and bw[i + 1][1] / bw[i][2] > hi
        down = ratio < lo / (1 + cliff) and bw[i + 1][2] / bw[i][1] < lo
        if up or down:
            b0, b1 = series[i][0], series[i + 1][0]
            out.append({"mechanism": mech, "blocks_per_op": n, "from_bytes": b0, "to_bytes": b1,
                        "from_GBps": bw[i][0], "to_GBps": bw[i + 1][0], "ratio": ratio, "expected_ratio": [lo, hi],
                        "direction": "up" if up else "down",
                        "text": f"{mech}: cliff between {fmt_size(b0)} and {fmt_size(b1)} at n={n}: bandwidth "
                                f"{fmt_num(bw[i][0])} → {fmt_num(bw[i + 1][0])} GB/s ({ratio_text(ratio)}×; "
                                f"the neighbouring steps give {ratio_text(lo)}–{ratio_text(hi)}×)"})
    return out


def knee_of(mech, n, series, knee):
    """Where one mechanism at one n stops being per-descriptor bound (docstring, 3); None below 2 block sizes."""
    if len(series) < 2:
        return None
    floor_bytes, floor, _, floor_high = series[0]
    entry = {"mechanism": mech, "blocks_per_op": n, "floor_bytes": floor_bytes, "floor_us": floor}
    for (before, *_), (size, p50, lo, _) in zip(series, series[1:]):
        if p50 > floor * (1 + knee) and lo > floor_high:
            return {**entry, "bound_up_to_bytes": before, "knee_bytes": size, "knee_us": p50,
                    "text": f"{mech} at n={n}: per-descriptor bound up to {fmt_size(before)}, not at {fmt_size(size)} "
                            f"({fmt_num(p50)} µs vs a floor of {fmt_num(floor)} µs at {fmt_size(floor_bytes)})"}
    last = series[-1][0]
    return {**entry, "bound_up_to_bytes": last, "knee_bytes": None, "knee_us": None,
            "text": f"{mech} at n={n}: no knee: within {100 * knee:g}% of its floor ({fmt_num(floor)} µs) or within "
                    f"its interval from {fmt_size(floor_bytes)} to {fmt_size(last)}"}
