"""The pictures (--plots DIR; matplotlib, imported only here and only then): per group one heat map of the winners
with its cliffs and model breaks, per group and --versus pair one head-to-head map of the p50 ratio
(dmabench.reports.crossover.cli's docstring, 5 and 6); a note in the group where a map is not drawn."""
import math
import os
import re

from ...extras import missing_module, MissingExtra
from ...files import make_dir, write_file
from ...text import fmt_size
from .fits import ratio_text

MISSING = "#d9d9d9"  # the head-to-head map's colour of a cell without a ratio
VERSUS_CLIP = 3  # log2 of the ratio the head-to-head colours saturate at (1/8, 8)
COLOURS = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#bcbd22", "#17becf",
           "#aec7e8", "#ffbb78", "#98df8a", "#ff9896", "#c5b0d5", "#c49c94", "#f7b6d2", "#dbdb8d", "#9edae5"]


def pyplot():
    """matplotlib.pyplot with the Agg backend; ResultsError (exit 2) where matplotlib is missing."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        from matplotlib.lines import Line2D
        from matplotlib.patches import Patch, Rectangle
    except ImportError as e:
        raise MissingExtra("plot", missing_module(e, "plot") or "matplotlib") from None
    return plt, Line2D, Patch, Rectangle


def draw_cells(ax, g, colours, Rectangle):
    xs, ys = g["block_sizes"], g["blocks_per_op"]
    for row in g["cells"]:
        x, y = xs.index(row["block_bytes"]), ys.index(row["blocks_per_op"])
        face = "#d9d9d9" if row["tie"] else colours[row["winner"]]
        ax.add_patch(Rectangle((x - 0.5, y - 0.5), 1, 1, facecolor=face, edgecolor="white",
                               hatch="//" if row["tie"] else None))
        text = "tie" if row["tie"] else ratio_text(row["margin"]) if row["runner_up"] else "only"
        ax.text(x, y, text, ha="center", va="center", fontsize=8)
    for c in g["cliffs"]:
        x, y = xs.index(c["to_bytes"]) - 0.5, ys.index(c["blocks_per_op"])
        ax.plot([x, x], [y - 0.5, y + 0.5], color="red", linewidth=3)
    for f in g["fits"]:
        if f["break"] and f["break"]["break_after_bytes"] is not None:
            ax.axvline(xs.index(f["break"]["next_bytes"]) - 0.5, color="black", linestyle="--", linewidth=1)


def heat_map(tools, g, colours, path):
    plt, Line2D, Patch, Rectangle = tools
    xs, ys = g["block_sizes"], g["blocks_per_op"]
    fig, ax = plt.subplots(figsize=(max(6.0, 0.6 * len(xs) + 3), max(3.0, 0.45 * len(ys) + 2)))
    draw_cells(ax, g, colours, Rectangle)
    grid_axes(ax, xs, ys, g["title"])
    winners = sorted({r["winner"] for r in g["cells"] if not r["tie"]})
    handles = [Patch(facecolor=colours[m], label=m) for m in winners]
    handles.append(Patch(facecolor="#d9d9d9", hatch="//", label="tie"))
    cliffs = sorted({c["mechanism"] for c in g["cliffs"]})
    if cliffs:
        handles.append(Line2D([], [], color="red", linewidth=3, label=f"cliff: {', '.join(cliffs)}"))
    breaks = [f["mechanism"] for f in g["fits"] if f["break"] and f["break"]["break_after_bytes"] is not None]
    if breaks:
        handles.append(Line2D([], [], color="black", linestyle="--", label=f"model break: {', '.join(breaks)}"))
    ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.01, 1), fontsize=8,
              title="winner (text: runner-up / winner)", title_fontsize=8)
    save_png(plt, fig, path)


def grid_axes(ax, xs, ys, text):
    """Categorical axes: block sizes `xs` across, block counts `ys` up."""
    ax.set_xlim(-0.5, len(xs) - 0.5)
    ax.set_ylim(-0.5, len(ys) - 0.5)
    ax.set_xticks(range(len(xs)))
    ax.set_xticklabels([fmt_size(b, compact=True) for b in xs], rotation=90 if len(xs) > 12 else 0, fontsize=8)
    ax.set_yticks(range(len(ys)))
    ax.set_yticklabels([str(n) for n in ys], fontsize=8)
    ax.set_xlabel("block size")
    ax.set_ylabel("blocks per operation (n)")
    ax.set_title(text, fontsize=9)


def save_png(plt, fig, path):
    from ...plot import png_bytes  # every text in it clipped (text.clipped)
    image = png_bytes(fig, 110, bbox_inches="tight")
    plt.close(fig)
    write_file(path, image)


def sig2(x):
    """`x` > 0 to 2 significant digits without an exponent ('2.3', '0.45', '12', '150'); '–' for None."""
    if x is None or not 0 < x < math.inf:
        return "–"
    x = float(f"{x:.2g}")
    return f"{x:.{max(1 - math.floor(math.log10(x)), 0)}f}"


def versus_cells(ax, cells, xs, ys, Rectangle):
    """The pair's cells: colour log2(B / A) on RdBu clipped at +-VERSUS_CLIP, text the ratio, ties hatched."""
    import matplotlib
    from matplotlib.colors import Normalize
    cmap, norm = matplotlib.colormaps["RdBu"], Normalize(-VERSUS_CLIP, VERSUS_CLIP)
    for c in cells:
        x, y = xs.index(c["block_bytes"]), ys.index(c["blocks_per_op"])
        level = None if c["ratio"] is None or c["ratio"] <= 0 else math.log2(c["ratio"])
        face = MISSING if level is None else cmap(norm(max(-VERSUS_CLIP, min(VERSUS_CLIP, level))))
        ax.add_patch(Rectangle((x - 0.5, y - 0.5), 1, 1, facecolor=face, edgecolor="white"))
        if c["tie"]:
            ax.add_patch(Rectangle((x - 0.5, y - 0.5), 1, 1, fill=False, hatch="//", edgecolor="#404040",
                                   linewidth=0))
        dark = level is not None and abs(level) > 0.7 * VERSUS_CLIP
        box = {"facecolor": face, "edgecolor": "none", "pad": 1} if c["tie"] else None
        ax.text(x, y, sig2(c["ratio"]), ha="center", va="center", fontsize=8, color="white" if dark else "black",
                bbox=box)
    return cmap, norm


def versus_cliffs(ax, g, v, xs, ys, Line2D):
    """The cliffs of A and of B at the pair's block counts, lines at the left edge of the step's larger size (A's a
    little left of it, B's a little right); the legend handles of those drawn."""
    handles = []
    for m, colour, shift, style in ((v["a"], "#1b9e77", -0.05, "-"), (v["b"], "#e7298a", 0.05, "--")):
        drawn = False
        for c in g["cliffs"]:
            if c["mechanism"] == m and c["to_bytes"] in xs and c["blocks_per_op"] in ys:
                x, y = xs.index(c["to_bytes"]) - 0.5 + shift, ys.index(c["blocks_per_op"])
                ax.plot([x, x], [y - 0.5, y + 0.5], color=colour, linestyle=style, linewidth=3)
                drawn = True
        if drawn:
            handles.append(Line2D([], [], color=colour, linestyle=style, linewidth=3, label=f"cliff of {m}"))
    return handles


def versus_map(tools, g, v, path):
    """The head-to-head PNG of one pair in one group (docstring, 6)."""
    plt, Line2D, Patch, Rectangle = tools
    from matplotlib.cm import ScalarMappable
    a, b = v["a"], v["b"]
    common = [c for c in v["cells"] if c["tie"] is not None]
    xs, ys = sorted({c["block_bytes"] for c in common}), sorted({c["blocks_per_op"] for c in common})
    fig, ax = plt.subplots(figsize=(max(6.0, 0.6 * len(xs) + 4), max(3.0, 0.45 * len(ys) + 2)))
    ax.set_facecolor(MISSING)
    cmap, norm = versus_cells(ax, common, xs, ys, Rectangle)
    handles = versus_cliffs(ax, g, v, xs, ys, Line2D)
    grid_axes(ax, xs, ys, f"{a} vs {b} (text: {b} p50 / {a} p50)\n{g['title']}")
    ticks = list(range(-VERSUS_CLIP, VERSUS_CLIP + 1))
    bar = fig.colorbar(ScalarMappable(norm=norm, cmap=cmap), ax=ax, ticks=ticks, pad=0.02)
    bar.set_ticklabels([("≤" if t == ticks[0] else "≥" if t == ticks[-1] else "") +
                        (f"1/{2 ** -t}" if t < 0 else str(2 ** t)) for t in ticks])
    bar.ax.tick_params(labelsize=8)
    bar.set_label(f"{b} p50 / {a} p50 (>1: {a} faster)", fontsize=8)
    handles.append(Patch(facecolor="white", edgecolor="#404040", hatch="//", label="tie (intervals overlap)"))
    handles.append(Patch(facecolor=MISSING, label="not measured by both"))
    ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(0, -0.15 if len(xs) <= 12 else -0.3), fontsize=8,
              ncol=len(handles))
    save_png(plt, fig, path)


def slug(text):
    """`text` kept to letters, digits and '-' (a file name's part)."""
    return re.sub(r"[^A-Za-z0-9]+", "-", text).strip("-") or "x"


def plot_versus(tools, g, directory, stem):
    for v in g["versus"]:
        if v["common_cells"] < 2:
            v["note"] = (f"No {v['a']} vs {v['b']} map: {v['common_cells']} cell(s) measured by both; "
                         "a map needs >= 2.")
            continue
        path = os.path.join(directory, f"{stem}-{slug(v['a'])}-vs-{slug(v['b'])}.png")
        versus_map(tools, g, v, path)
        v["figure"] = path


def plot_all(report, directory):
    tools = pyplot()
    make_dir(directory, "--plots")
    everyone = sorted({m for g in report["groups"] for m in g["mechanisms"]})
    colours = {m: COLOURS[i % len(COLOURS)] for i, m in enumerate(everyone)}
    for i, g in enumerate(report["groups"]):
        stem = f"crossover-{i + 1:02d}-{slug(g['pattern'] + '-' + g['host_kind'])}"
        plot_versus(tools, g, directory, stem)
        if len(g["mechanisms"]) < 2:
            g["notes"].append(f"No heat map: {len(g['mechanisms'])} mechanism ({', '.join(g['mechanisms'])}); "
                              "a map needs >= 2.")
            continue
        g["figure"] = os.path.join(directory, stem + ".png")
        heat_map(tools, g, colours, g["figure"])
