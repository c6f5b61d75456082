"""`history trend`: every case whose name matches, per machine kind, as a series of its runs with the band drawn from
the runs before each, as markdown or JSON (the figure: dmabench.plot.write_trend)."""
import re
import statistics

from ..text import printable, quote, ResultsError, table
from ..tool import time_limit
from .rule import band, band_text, draws, history, sources

FIGURES = {"p50_us": ("p50_us", "p50_low_us", "p50_high_us", "p50 µs"),
           "busbw_GBps": ("busbw_GBps", "busbw_low_GBps", "busbw_high_GBps", "busbw GB/s")}


def in_figure(b, factor, figure):
    """A band (µs) in the figure's unit: busbw = factor / p50, so its edges swap."""
    if b is None:
        return None
    if figure == "p50_us":
        return {"median": b.median, "low": b.low, "high": b.high, "spread": b.spread, "runs": b.runs, "draws": b.draws}
    return {"median": factor / b.median, "low": factor / b.high, "high": factor / b.low if b.low else None,
            "spread": b.spread, "runs": b.runs, "draws": b.draws}


def trend(conn, pattern, machine, figure, rule):
    """Every (machine kind, case) whose case name matches `pattern`, as a series of its runs (oldest first), each
    with the figure, its interval, noisy, the recorded verdict and the band drawn from the runs before it; and the
    band for the next run. ResultsError when nothing matches."""
    kinds = [m for (m,) in conn.execute("SELECT DISTINCT machine FROM runs ORDER BY machine")]
    if machine is not None and machine not in kinds:
        raise ResultsError(f"--machine {quote(machine)}: no run of that machine kind; the database has "
                           f"{', '.join(map(quote, kinds)) or 'no run'}")
    value, low, high, _ = FIGURES[figure]
    cases = history(conn, machine)
    chosen = matching(pattern, {p["name"] for points in cases.values() for p in points})
    out = []
    for (kind, key), points in cases.items():
        if not any(p["name"] in chosen for p in points):
            continue
        factor = statistics.median(p["busbw_GBps"] * p["p50_us"] for p in points)  # S x busbw factor, in GB/s x µs
        runs = []
        for p in points:
            b = band([draws(q) for q in points if q["started_at"] < p["started_at"]], rule)
            interval = [p[low], p[high]] if p[low] is not None else None
            runs.append({"run_id": p["run_id"], "started_at": p["started_at"], "revision": p["revision"],
                         "source": p["source"], "value": p[value], "interval": interval,
                         "noisy": None if p["noisy"] is None else bool(p["noisy"]), "verdict": p["verdict"],
                         "band": in_figure(b, factor, figure)})
        out.append({"machine": kind, "case": points[-1]["name"], "case_key": key, "figure": figure, "runs": runs,
                    "next_band": in_figure(band([draws(p) for p in points], rule), factor, figure)})
    if not out:
        raise ResultsError(f"no ok case whose name matches --case {quote(pattern)}"
                           f"{f' on {machine}' if machine else ''} in the database")
    return out


REGEX_SECONDS = 2.0  # what --case may take over every case name of a database


def matching(pattern, names):
    """The names (a set) that `pattern` matches (re.search). ResultsError for a pattern that is no regular expression,
    or that takes more than REGEX_SECONDS over them all: nested quantifiers such as `(a+)+$` backtrack for ever on
    some names, and the search is stopped (dmabench.tool.time_limit) rather than left to hang."""
    try:
        regex = re.compile(pattern)
    except (re.error, RecursionError, OverflowError) as e:
        raise ResultsError(f"--case {quote(pattern)}: not a regular expression ({e})") from None
    with time_limit(REGEX_SECONDS, f"--case {quote(pattern)}: matching the case names took more than "
                                   f"{REGEX_SECONDS:g} s (nested quantifiers such as (a+)+ backtrack without end); "
                                   "accepted: a simpler regular expression"):
        return {name for name in names if regex.search(name)}


def _cell(value):
    return "–" if value is None else f"{value:.2f}"


def _band_cell(b):
    return "–" if b is None else \
        f"{_cell(b['low'])}..{_cell(b['high'])} (median {_cell(b['median'])}, {sources(b['runs'], b['draws'])})"


def trend_markdown(series, figure, rule):
    unit = FIGURES[figure][3]
    out = []
    for s in series:
        rows = [[r["started_at"][:19].replace("T", " "), str(r["revision"]), _cell(r["value"]),
                 "–" if r["interval"] is None else f"[{_cell(r['interval'][0])}, {_cell(r['interval'][1])}]",
                 {None: "–", True: "noisy", False: ""}[r["noisy"]], _band_cell(r["band"]), r["verdict"] or "–",
                 r["source"]] for r in s["runs"]]
        nb = s["next_band"]
        out += [printable(f"**{s['case']}** on {s['machine']}: {unit}, {len(rows)} runs"), "",
                table(["run start (UTC)", "revision", unit, "95% interval", "noisy", "band from the runs before",
                       "gate", "file"], rows), "",
                "The next run's band: " + (_band_cell(nb) + f", spread {nb['spread']:.1%}" if nb else
                                           f"none yet (NEW: fewer than {rule.min_runs} runs)"), ""]
    return "\n".join(out + [f"Band: {band_text(rule)}."])
