"""Figures from dmabench results (pandas + matplotlib).

usage: plot.py RESULTS.json [RESULTS.json ...] --out DIR [--timing oneshot|pipelined|both]
               [--baseline VARIANT] [--patterns copy,allgather] [--engines ce,nccl]
               [--max-variants 10]

Per pattern and timing mode: latency_<pattern>_<timing>.png (p50 vs size, log-log, band from min
to p95), busbw_<pattern>_<timing>.png, speedup_<pattern>_<timing>.png (baseline p50 / variant p50);
in-place cases (`in_place`) get figures of their own, <pattern> then reading e.g. allgather-in-place.
When the results have them: breakdown.png (stacked control/schedule/copy/sync per size) and
energy_<pattern>.png (energy per GB with its uncertainty). Several files overlay: line style per
file, one colour per engine variant in every figure. The functions are importable (the notebook
uses them). A case measured more than once in one file (an overlap run measures each case alone again
for every workload it runs beside; runs over several device sets) is drawn at the median of its
measurements; cases of one variant and size that differ in ranks, bytes, layout or host memory are lines of their
own ('ce [ranks=4]', split_variants). A figure with nothing to draw (a speedup over a baseline whose cases were
all skipped, nccl on the host backend) is not written, and one line on stderr says why (exit 0).
A results file may also be given as its run's journal, `<file>.journal`; a results file with a journal beside
it (its run has not finished) is read from the journal when that holds more cases, with a note on stderr
(dmabench.load). (A results file named `trend` is given as ./trend.)

usage: plot.py trend HISTORY.sqlite --case REGEX --out DIR [--figure p50_us|busbw_GBps] [--machine KIND]
               [--runs 10] [--min-runs 3] [--sigmas 3] [--tolerance 0.05] [--noisy 0.05]

The one trend command (`history.py trend`, `dmabench-results trend`; this form stays for the command lines that use
it), drawn where --out is given (without it the trend is printed as history.py trend prints it).
A case over time from a history database (dmabench.history): <patterns>-trend.png, e.g. h2d-bidir-trend.png, one
series per machine kind and case whose name matches REGEX (at most 8), each run at its place in start order with
its 95% interval as an error bar (where recorded), the gate's band drawn from the runs before it (history.py's
rule and options), and a red cross on every run a recorded gate verdict (`history.py gate --record`) failed it (slower or failed; FAIL in databases of earlier
gates).

Exit codes: 0 figures written; 2 bad input: an unreadable or malformed results file or history database, a bad argument, an
--out where the figures cannot be written (each is written whole or not at all), or no ok result to plot (an empty `results` list, none left after --patterns/--engines, or none of the
--timing asked for; no case matching --case, or more than 8), with one line
`plot.py: error: ...` on stderr (never a traceback; dmabench.schema.check_document says what
is checked).
"""
import io
import os
import re
import sys
import zlib
from functools import partial

import matplotlib
import numpy
import pandas as pd

if "ipykernel" not in sys.modules:  # files only; a notebook keeps its inline backend
    matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.ticker import FixedLocator, FuncFormatter, NullLocator  # noqa: E402

from .files import make_dir, write_file
from .frames import columns_apart, keyed, to_frame
from .keys import pattern_label, placement_order, versions_caption
from .reader import escape_surrogates, load
from .text import clipped, fmt_size, printable, quote, ResultsError
from .tool import arg_parser, current_tool, run_tool
from . import history

TOOL = "plot.py"
STYLES = ["-", "--", ":", "-."]
PHASES = [("bd_control", "control"), ("bd_schedule", "schedule"), ("bd_copy", "copy"), ("bd_sync", "sync")]


def size_label(n):
    return fmt_size(int(n), compact=True)


def size_axis(ax, sizes):
    """x axis in bytes per rank, log2, labelled 1K, 64K, 1M, ... at the measured sizes."""
    ax.set_xscale("log", base=2)
    ticks = sorted(set(sizes))
    if len(ticks) > 12:
        ticks = ticks[:: (len(ticks) + 11) // 12]
    ax.xaxis.set_major_locator(FixedLocator(ticks))
    ax.xaxis.set_minor_locator(NullLocator())
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: size_label(int(round(v)))))
    ax.set_xlabel("bytes per rank")


# Engines at their defaults keep one colour everywhere; the other variants of the files loaded
# get distinct colours in name order, the same in every figure of one invocation.
FIXED = {"ce": "tab:blue", "nccl": "tab:orange", "sm": "tab:green", "ce-batch": "tab:cyan", "host": "tab:gray"}
MARKERS = "osD^v<>ph*"


def colours(variants):
    taken = set(FIXED.values())
    pool = [c for c in ["tab:red", "tab:purple", "tab:brown", "tab:pink", "tab:olive", "black"] if c not in taken]
    pool += list(plt.get_cmap("Dark2").colors) + list(plt.get_cmap("tab20b").colors)
    others = sorted(v for v in variants if v not in FIXED)
    out = {v: FIXED[v] for v in variants if v in FIXED}
    out.update({v: pool[i % len(pool)] for i, v in enumerate(others)})
    return out


def _label(text, width=48):
    """Long variant names wrapped after commas."""
    lines, line = [], ""
    for part in text.split(","):
        piece = part if not line else "," + part
        if line and len(line) + len(piece) > width:
            lines.append(line + ",")
            line = part
        else:
            line += piece
    return "\n".join(lines + [line])


def _name(path):
    """A file's name in a figure, a byte that is not UTF-8 escaped ('\\udcff'): no glyph is missing."""
    return escape_surrogates(os.path.basename(os.fspath(path)))


def _marker(v):
    return MARKERS[zlib.crc32(v.encode("utf-8", "backslashreplace")) % len(MARKERS)]



def _figure():
    """A figure with room on the right for a legend of long variant names."""
    fig, ax = plt.subplots(figsize=(11.5, 5.4))
    fig.subplots_adjust(left=0.07, right=0.62, bottom=0.2)
    return fig, ax


def _legend(ax):
    if ax.get_legend_handles_labels()[0]:  # a figure with no line (no variant has the baseline's sizes) has none
        ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)


def pick_variants(df, baseline, max_variants):
    """At most max_variants variants: the baseline, every non-copy-engine engine at its defaults,
    then the fastest others (median p50 over sizes)."""
    ok = df[df.status == "ok"]
    keep = [v for v in sorted(ok.variant.unique()) if v == baseline or (" " not in v and not v.startswith("ce"))]
    rest = ok[~ok.variant.isin(keep)].groupby("variant").p50.median().sort_values()
    for v in rest.index:
        if len(keep) >= max_variants:
            break
        keep.append(v)
    return keep


KEYS = ["file", "pattern", "in_place", "timing", "variant", "bytes_per_rank"]  # one point of a figure's line


# what keeps two cases of one line's point apart; their device sets and the workload an overlap case ran beside do
# not (collapse_repeats draws those at their median: one case on several device sets, or measured alone again)
APART = ["ranks", "bytes", "layout", "block_bytes", "blocks_per_op", "order", "host_kind", "numa"]


def split_variants(df):
    """`df` with the variant of a file's line named apart ('ce [ranks=4]', 'ce [host_kind=mapped]') where two of its
    cases of one pattern, placement, timing and size differ in what APART lists (a 2-rank and a 4-rank all-gather in
    one file), so that collapse_repeats never draws their median: only the lines whose cases differ so."""
    chosen = columns_apart(df[df.status == "ok"], KEYS, APART, unit=("case_key",))
    if not chosen:
        return df
    keys, out = keyed(df, KEYS + chosen), df.copy()
    line = ["file", "pattern", "in_place", "variant"]
    parts = [keys[c].map(lambda v, c=c: f"{c}={v}").where(keys.groupby(line)[c].transform("nunique") > 1, "")
             for c in chosen]
    extra = pd.concat(parts, axis=1).apply(lambda row: ", ".join(p for p in row if p), axis=1)
    out["variant"] = out["variant"].where(extra == "", out["variant"] + " [" + extra + "]")
    return out


def collapse_repeats(df):
    """One row per point of a line (file, pattern, placement, timing, variant, size) among the ok results: the median
    of each metric where a file measured that case more than once. An overlap run measures every case alone again
    for each compute workload it runs beside (results/h200x2/overlap.json: up to 13 workloads per size); unmerged,
    the sizes repeat, a line zigzags between them and the speedup's baseline / variant division misaligns."""
    ok = df[df.status == "ok"]
    if not ok.duplicated(KEYS).any():
        return df
    numeric = [c for c in ok.columns if c not in KEYS and ok[c].dtype.kind in "fiu"]
    agg = {c: ("median" if c in numeric else "first") for c in ok.columns if c not in KEYS}
    merged = ok.groupby(KEYS, as_index=False, sort=False, dropna=False).agg(agg)
    return pd.concat([merged[df.columns], df[df.status != "ok"]], ignore_index=True)


def _caption(fig, captions):
    fig.text(0.01, 0.005, "\n".join(captions), fontsize=6.5, va="bottom", ha="left", color="0.3")


def _cases(df, pattern, in_place):
    """The rows of one pattern, in place or not."""
    return df[(df.pattern == pattern) & (df.in_place == in_place)]


def file_stem(pattern, in_place):
    """A pattern and placement in a file name: 'allgather', 'allgather-in-place'."""
    return re.sub(r"[^A-Za-z0-9]+", "-", pattern_label(pattern, in_place)).strip("-")


def _series(df, pattern, timing, variants, in_place):
    sub = _cases(df, pattern, in_place)
    sub = sub[(sub.timing == timing) & (sub.status == "ok") & sub.variant.isin(variants)]
    for (f, v), g in sub.groupby(["file", "variant"]):
        yield f, v, g.sort_values("bytes_per_rank")


def _figure_lines(df, pattern, timing, variants, palette, files, captions, column, band, ylabel, title, log_y, in_place):
    fig, ax = _figure()
    for f, v, g in _series(df, pattern, timing, variants, in_place):
        label = _label(v if len(files) == 1 else f"{v} [{_name(f)}]")
        ax.plot(g.bytes_per_rank, g[column], STYLES[files.index(f) % len(STYLES)], marker=_marker(v), ms=4,
                color=palette[v], label=label)
        if band:
            ax.fill_between(g.bytes_per_rank, g[band[0]], g[band[1]], color=palette[v], alpha=0.12, lw=0)
    size_axis(ax, _cases(df, pattern, in_place).bytes_per_rank)
    if log_y:
        ax.set_yscale("log")
    ax.set_ylabel(ylabel)
    ax.set_title(f"{pattern_label(pattern, in_place)}, {timing}: {title}")
    ax.grid(True, which="both" if log_y else "major", alpha=0.3)
    _legend(ax)
    _caption(fig, captions)
    return fig


def figure_latency(df, pattern, timing, variants, palette, files, captions, in_place=False):
    return _figure_lines(df, pattern, timing, variants, palette, files, captions, "p50", ("min", "p95"),
                         "latency p50, µs (band: min to p95)", "latency", True, in_place)


def figure_busbw(df, pattern, timing, variants, palette, files, captions, in_place=False):
    return _figure_lines(df, pattern, timing, variants, palette, files, captions, "busbw", None,
                         "busbw, GB/s (nccl-tests definition, from p50)", "bus bandwidth", False, in_place)


def speedup_lines(df, pattern, timing, variants, files, baseline, in_place=False):
    """The lines of a speedup figure: (file, variant, sizes, baseline p50 / variant p50) of every variant (not the
    baseline) with a size the baseline has in the same file; none where the baseline has no ok case here."""
    ok = _cases(df, pattern, in_place)
    ok = ok[(ok.timing == timing) & (ok.status == "ok")]
    for f in files:
        base = ok[(ok.file == f) & (ok.variant == baseline)].set_index("bytes_per_rank").p50
        for v in [] if base.empty else [v for v in variants if v != baseline]:
            g = ok[(ok.file == f) & (ok.variant == v)].set_index("bytes_per_rank").p50
            common = base.index.intersection(g.index)
            if not common.empty:
                yield f, v, common, base[common] / g[common]


def figure_speedup(df, pattern, timing, variants, palette, files, captions, baseline, in_place=False):
    fig, ax = _figure()
    ok = _cases(df, pattern, in_place)
    ok = ok[(ok.timing == timing) & (ok.status == "ok")]
    for f, v, sizes, speedup in speedup_lines(df, pattern, timing, variants, files, baseline, in_place):
        label = _label(v if len(files) == 1 else f"{v} [{_name(f)}]")
        ax.plot(sizes, speedup, STYLES[files.index(f) % len(STYLES)], marker=_marker(v), ms=4, color=palette[v],
                label=label)
    ax.axhline(1.0, color="0.2", lw=1)
    size_axis(ax, ok.bytes_per_rank)
    ax.set_ylabel(f"speedup over {baseline} (its p50 / p50)")
    ax.set_title(f"{pattern_label(pattern, in_place)}, {timing}: speedup over {baseline}")
    ax.grid(True, alpha=0.3)
    _legend(ax)
    _caption(fig, captions)
    return fig


def figure_breakdown(df, captions):
    bd = df[(df.status == "ok") & df.bd_total.notna()]
    variants = sorted(bd.variant.unique())
    fig, axes = plt.subplots(len(variants), 1, figsize=(9, 2.6 * len(variants) + 1), squeeze=False)
    for ax, v in zip(axes[:, 0], variants):
        g = bd[bd.variant == v].sort_values("bytes_per_rank")
        x = range(len(g))
        bottom = [0.0] * len(g)
        for col, name in PHASES:
            share = (g[col].clip(lower=0) / g.bd_total * 100).tolist()
            ax.bar(x, share, bottom=bottom, label=name)
            bottom = [b + s for b, s in zip(bottom, share)]
        ax.set_xticks(list(x), [size_label(s) for s in g.bytes_per_rank])
        ax.set_ylabel("% of latency")
        ax.set_title(f"{v}: where a copy's latency goes", fontsize=9)
        ax.grid(True, axis="y", alpha=0.3)
    axes[0, 0].legend(fontsize=7, ncol=4, loc="upper right")
    axes[-1, 0].set_xlabel("bytes copied")
    fig.tight_layout(rect=(0, 0.06, 1, 1))
    _caption(fig, captions + ["negative phases (CUPTI clock conversion error) drawn as 0; bars can exceed 100%"])
    return fig


def _error_bars(err):
    """Error bars where the uncertainty is known (power.uncertainty may be null), none where no bar has one."""
    return err.fillna(0).tolist() if err.notna().any() else None


def figure_energy(df, pattern, variants, palette, captions, in_place=False):
    ok = _cases(df, pattern, in_place)
    ok = ok[(ok.status == "ok") & ok.energy_per_GB_J.notna()]
    sizes = sorted(ok.bytes_per_rank.unique())
    files = list(dict.fromkeys(ok.file))
    bars = [(f, v) for f in files for v in variants if ((ok.file == f) & (ok.variant == v)).any()]
    fig, ax = _figure()
    width = 0.8 / max(1, len(bars))
    for i, (f, v) in enumerate(bars):
        g = ok[(ok.file == f) & (ok.variant == v)].set_index("bytes_per_rank").reindex(sizes)
        xs = [j + i * width for j in range(len(sizes))]
        label = _label(v if len(files) == 1 else f"{v} [{_name(f)}]")
        ax.bar(xs, g.energy_per_GB_J, width, color=palette[v], label=label, hatch=["", "//", "..", "xx"][files.index(f) % 4],
               yerr=_error_bars(g.energy_per_GB_J * g.power_uncertainty), capsize=2)
    ax.set_xticks([j + 0.4 - width / 2 for j in range(len(sizes))], [size_label(s) for s in sizes])
    ax.set_xlabel("bytes per rank")
    ax.set_ylabel("energy per GB above idle, J/GB (error bar: uncertainty)")
    ax.set_title(f"{pattern_label(pattern, in_place)}: energy per GB")
    ax.grid(True, axis="y", alpha=0.3)
    _legend(ax)
    _caption(fig, captions)
    return fig


DRAWN = ["min", "p50", "p95", "busbw", "energy_per_GB_J", "power_uncertainty"] + [c for c, _ in PHASES] + ["bd_total"]
DRAWABLE = 1e300  # matplotlib's axis range overflows near the float limit (1.7e308): refused, not drawn wrong


def check_drawable(df):
    """ResultsError naming the first case with a number a figure cannot show (check_document accepts any finite)."""
    for col in DRAWN:
        beyond = pd.to_numeric(df[col], errors="coerce").abs() > DRAWABLE  # an all-None column is of objects
        if beyond.any():
            row = df[beyond].iloc[0]
            raise ResultsError(f"{row['file']}: {quote(row['name'])}: {col} {row[col]:g} is beyond what a figure can show "
                               f"(at most {DRAWABLE:g})")


MAX_SERIES = 8  # a trend figure's series (machine kind x case): more would be unreadable


def figure_trend(series, figure, rule, caption):
    """A case's figure over runs: error bars for the runs' intervals, the gate's band from the runs before each
    (shaded, its median dashed), a red cross on every run whose recorded gate verdict failed it (slower, failed; FAIL before issue 50)."""
    fig, ax = _figure()
    starts = sorted({r["started_at"] for s in series for r in s["runs"]})
    place = {t: i for i, t in enumerate(starts)}
    revision = {r["started_at"]: r["revision"] for s in series for r in s["runs"]}
    failed = False
    for i, s in enumerate(series):
        colour = plt.get_cmap("tab10")(i % 10)
        xs = [place[r["started_at"]] for r in s["runs"]]
        ys = [r["value"] for r in s["runs"]]
        err = [[v - r["interval"][0], (r["interval"][1] if r["interval"][1] is not None else v) - v] if r["interval"]
               else [0.0, 0.0] for v, r in zip(ys, s["runs"])]
        ax.errorbar(xs, ys, yerr=numpy.array(err).T, fmt="o", ms=5, capsize=3, color=colour,
                    label=_label(f"{s['case']} ({s['machine']})", 60))
        banded = [(x, r["band"]) for x, r in zip(xs, s["runs"]) if r["band"]]
        if banded:
            bx = [x for x, _ in banded]
            ax.fill_between(bx, [b["low"] for _, b in banded], [b["high"] if b["high"] is not None else numpy.nan
                                                                for _, b in banded],
                            step="mid", color=colour, alpha=0.15, lw=0,
                            label=None if i else "gate band from the runs before (dashed: their median)")
            ax.plot(bx, [b["median"] for _, b in banded], "--", drawstyle="steps-mid", color=colour, lw=0.8)
        fails = [(x, y) for x, y, r in zip(xs, ys, s["runs"]) if r["verdict"] in ("slower", "failed", "FAIL")]
        if fails:
            ax.scatter(*zip(*fails), marker="X", s=110, color="red", zorder=5,
                       label=None if failed else "gate slower / failed (recorded)")
            failed = True
    ax.set_xticks(range(len(starts)), [f"{t[5:16].replace('T', ' ')}\n{str(revision[t])[:12]}" for t in starts],
                  rotation=90, fontsize=6.5)
    ax.set_xlabel("run (start, UTC, and revision)")
    ax.set_ylabel({"p50_us": "p50 latency, µs", "busbw_GBps": "busbw, GB/s"}[figure] + " (bar: 95% interval)")
    ax.set_title(f"{', '.join(sorted({s['case'].split('/')[0] for s in series}))}: {history.FIGURES[figure][3]} over runs")
    ax.grid(True, alpha=0.3)
    handles, labels = ax.get_legend_handles_labels()
    order = sorted(range(len(labels)), key=lambda k: labels[k].startswith("gate"))  # the series first
    ax.legend([handles[k] for k in order], [labels[k] for k in order], fontsize=7, loc="upper left",
              bbox_to_anchor=(1.01, 1.0), frameon=False)
    fig.subplots_adjust(bottom=0.3)
    _caption(fig, [f"band: {history.rule_text(rule)}", caption])
    return fig


def write_trend(series, a, rule):
    """The trend figure of `series` (history.trend) into a.out (history.py trend --out: the one trend command)."""
    if len(series) > MAX_SERIES:
        raise ResultsError(f"--case {quote(a.case)} matches {len(series)} cases; a trend figure draws at most {MAX_SERIES}: "
                           "narrow it (history.py trend lists them)")
    drawn = [v for s in series for r in s["runs"] for v in [r["value"], *(r["interval"] or []),
                                                             *((r["band"] or {}).values())] if v is not None]
    if max(drawn) > DRAWABLE:
        raise ResultsError(f"{a.db}: a {a.figure} of {max(drawn):g} is beyond what a figure can show (at most {DRAWABLE:g})")
    make_dir(a.out)
    fig = figure_trend(series, a.figure, rule, f"{_name(a.db)}: {len(series)} series")
    path = os.path.join(a.out, "-".join(sorted({s["case"].split("/")[0] for s in series})) + "-trend.png")
    image = png_bytes(fig, 130)
    plt.close(fig)
    write_file(path, image)
    print(path)
    return 0


def main(argv=None, tool=TOOL):
    return run_tool(tool, run, argv)


def run(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["trend"]:  # the one trend command (history.py trend), drawn where --out is given
        return history.run_trend(argv[1:])
    ap = arg_parser(__doc__)
    ap.add_argument("results", nargs="+")
    ap.add_argument("--out", required=True)
    ap.add_argument("--timing", default="oneshot", choices=["oneshot", "pipelined", "both"])
    ap.add_argument("--baseline", help="the variant speedups divide by (default nccl)")
    ap.add_argument("--patterns", default="")
    ap.add_argument("--engines", default="")
    ap.add_argument("--max-variants", type=int, default=10)
    a = ap.parse_args(argv)
    a.named_baseline, a.baseline = a.baseline is not None, a.baseline or "nccl"
    df = to_frame(a.results)
    if df.empty:  # no columns either: an empty `results` list in every file
        raise ResultsError(f"nothing to plot: no results in {', '.join(a.results)}")
    if a.patterns:
        df = df[df.pattern.isin(a.patterns.split(","))]
    if a.engines:
        df = df[df.engine.isin(a.engines.split(","))]
    df = collapse_repeats(split_variants(df))
    check_drawable(df[df.status == "ok"])
    if df[df.status == "ok"].empty:
        raise ResultsError(f"nothing to plot: no ok results in {', '.join(a.results)} (after the filters)")
    timings = ["oneshot", "pipelined"] if a.timing == "both" else [a.timing]
    if df[(df.status == "ok") & df.timing.isin(timings)].empty and not df.bd_total.notna().any():
        have = ", ".join(sorted(set(df[df.status == "ok"].timing)))
        raise ResultsError(f"nothing to plot: no ok {a.timing} results in {', '.join(a.results)} (they have {have}: "
                           "use --timing)")
    make_dir(a.out)
    captions = [versions_caption(load(f)) + f"  [{_name(f)}, line style {STYLES[i % 4]!r}]"
                for i, f in enumerate(a.results)]
    written = []
    with numpy.errstate(all="ignore"):  # numbers near the float limit overflow on a log axis: no warning
        for name, draw, lacking in planned(df, a, timings, captions):
            path = os.path.join(a.out, name)
            if write_figure(draw(), path, f"{name}: {lacking}; not written"):
                written.append(path)
    no_speedup(df, a)
    for w in written:
        print(w)
    return 0


def no_speedup(df, a):
    """Where the baseline has no ok case at all, one note that no speedup figure is written: where its cases are all
    skipped or failed (nccl on the host backend) or --baseline named it; silent where the default baseline is simply
    not in the files."""
    mine = df.variant == a.baseline
    if (mine & (df.status == "ok")).any() or not (mine.any() or a.named_baseline):
        return
    files = ", ".join(map(_name, a.results))
    why = f"every {a.baseline} case in {files} is skipped or failed" if mine.any() else f"no {a.baseline} case in {files}"
    note(f"speedup over {a.baseline}: {why}; not written")


def note(line):
    """One line on stderr about what was not drawn (the exit status stays 0)."""
    print(printable(f"{current_tool(TOOL)}: {line}"), file=sys.stderr)


def png_bytes(fig, dpi, **savefig):
    """The PNG of `fig` with every text in it (titles, captions, legend entries, labels) clipped first (text.clipped):
    whatever a results file holds, the image stays the size the figure asks for. Every figure is written through
    this (plot, trend, the HTML report, the crossover map)."""
    from matplotlib.text import Text
    for t in fig.findobj(Text):
        text = t.get_text()
        if text and clipped(text) != text:
            t.set_text(clipped(text))
    image = io.BytesIO()
    fig.savefig(image, format="png", dpi=dpi, **savefig)
    return image.getvalue()


def write_figure(fig, path, why_not):
    """Writes `fig` to `path` (whole or not at all; an unwritable --out is one line and exit 2) where it draws
    something (a line, bar or band with a label); else `why_not` is noted and nothing is written. Whether it was."""
    drawn = any(ax.get_legend_handles_labels()[0] for ax in fig.axes)
    image = png_bytes(fig, 130) if drawn else b""
    plt.close(fig)
    if drawn:
        write_file(path, image)
    else:
        note(why_not)
    return drawn


def planned(df, a, timings, captions):
    """(file name, a function that draws the figure, what it lacks where it draws nothing) of every figure the
    results have ok cases for; the speedup figures only where the baseline has an ok case."""
    variants = pick_variants(df, a.baseline, a.max_variants)
    common = (variants, colours(set(df.variant.unique())), a.results, captions)
    baseline = ((df.variant == a.baseline) & (df.status == "ok")).any()
    none = f"no variant drawn (at most --max-variants {a.max_variants}) has an ok case"
    for p, in_place in sorted(set(zip(df.pattern, df.in_place)), key=placement_order):
        cases, stem, label = _cases(df, p, in_place), file_stem(p, in_place), pattern_label(p, in_place)
        for t in timings:
            if cases[(cases.timing == t) & (cases.status == "ok")].empty:
                continue
            yield f"latency_{stem}_{t}.png", partial(figure_latency, df, p, t, *common, in_place), none
            yield f"busbw_{stem}_{t}.png", partial(figure_busbw, df, p, t, *common, in_place), none
            if baseline:
                yield (f"speedup_{stem}_{t}.png", partial(figure_speedup, df, p, t, *common, a.baseline, in_place),
                       f"speedup over {a.baseline}: no ok {a.baseline} case of {label}, {t} shares a size with another "
                       "variant drawn")
        if cases.energy_per_GB_J.notna().any():
            yield f"energy_{stem}.png", partial(figure_energy, df, p, variants, common[1], captions, in_place), none
    if df.bd_total.notna().any():
        yield "breakdown.png", partial(figure_breakdown, df, captions), "no breakdown"


if __name__ == "__main__":
    sys.exit(main())
