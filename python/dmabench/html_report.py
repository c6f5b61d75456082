"""One self-contained HTML report of a dmabench results file, or of a comparison, for a person to open from a CI
artifact.

usage: dmabench-results report html RESULTS.json [--against REF.json] [--threshold F] --out REPORT.html
                                    [--max-figures 24]

The file holds everything it shows: no network, no external style sheet, script, font or image (a
Content-Security-Policy in it forbids them); figures are PNG images inline as data: URIs. In order:
  machine and versions  the results file's context: host, OS, date, backend, the resolved config's name and
                        file, the dmabench version and revision, the GPUs, the driver and library versions, the
                        command line;
  summary               cases ok / skipped / failed, and how many ok cases are noisy (their p50's interval is
                        wider than the run's max_noise, or they have too few samples for one);
  comparison            with --against REF.json: the verdicts of `dmabench-results compare REF.json RESULTS.json`
                        (slower / faster / ambiguous / same / failed, the same rule, dmabench.verdict, and
                        --threshold), each p50 with its interval, the draws (processes) of each side and the
                        rank-sum p-value; noisy cases marked; the cases found in one file only;
  figures               p50 latency and busbw against size per pattern and timing (dmabench.plot's figures,
                        both files overlaid with --against), the breakdown where the file has one; at most
                        --max-figures. They need the `plot` extra (matplotlib, pandas): without it the report is
                        written without figures and says so where they would be (exit 0);
  cases                 every case: name, pattern, engine variant, size per rank, timing, p50 with its 95%
                        interval, algbw, busbw, noise, status and the skip or failure reason; noisy cases marked.
All text from the files is HTML-escaped, its control characters written as escapes (`\\n`). The output is the
same for the same inputs apart from the figures' bytes. A small inline script records script errors, blocked
loads and images that did not load into the page's `data-errors` attribute (`data-images`: loaded / total), for a
headless browser to check (tests/python/test_html_report.py).

Exit codes: 0 written; 1 never; 2 bad input: an unreadable or malformed results file (dmabench.load), a bad
argument, an --out that cannot be written (written whole or not at all; never one of the inputs), with one line
`dmabench-results report html: error: ...` on stderr.
"""
import base64
import hashlib
import html
import os
import sys

from . import compare as cmp
from . import verdict
from .extras import MissingExtra, require
from .files import write_file
from .keys import case_key, labels_apart, machine_label, p50_interval, pattern_label
from .reader import load
from .text import clipped, fmt_num, fmt_size, printable, ResultsError
from .tool import arg_parser, run_tool

TOOL = "dmabench-results report html"
VERDICT_ORDER = list(cmp.ORDER)

STYLE = """
body { font-family: sans-serif; margin: 1.5em; color: #222; max-width: 1400px; }
h1 { font-size: 1.5em; } h2 { font-size: 1.2em; border-bottom: 1px solid #ccc; margin-top: 1.6em; }
table { border-collapse: collapse; font-size: 0.85em; margin: 0.5em 0; }
th, td { border: 1px solid #ccc; padding: 2px 6px; text-align: left; vertical-align: top; }
th { background: #eef; } td.num { text-align: right; font-variant-numeric: tabular-nums; }
tr.noisy td { background: #fff6d6; } tr.failed td { background: #fde0e0; } tr.skipped td { color: #777; }
tr.slower td { background: #fde0e0; } tr.faster td { background: #e0f5e0; } tr.ambiguous td { background: #fff6d6; }
.badge { font-size: 0.8em; padding: 0 4px; border-radius: 3px; background: #f0c040; color: #222; }
.note { background: #fff6d6; border: 1px solid #e0c060; padding: 0.5em; }
figure { margin: 0.8em 0; } figure img { max-width: 100%; border: 1px solid #ddd; }
.cards span { display: inline-block; margin-right: 1.2em; font-size: 1.1em; }
"""

# Records script errors, loads the policy blocked and images that did not load, for a headless browser's check.
PROBE = """
(function () {
  var errors = [];
  function note(text) { errors.push(text); document.documentElement.setAttribute('data-errors', errors.join(' | ')); }
  window.addEventListener('error', function (e) {
    var t = e.target;
    if (t && t !== window && t.tagName) { note('load failed: ' + t.tagName.toLowerCase()); }
    else { note('script error: ' + e.message); }
  }, true);
  var error = console.error;
  console.error = function () { note('console error: ' + Array.prototype.join.call(arguments, ' ')); error.apply(console, arguments); };
  document.addEventListener('securitypolicyviolation', function (e) { note('blocked: ' + e.violatedDirective); });
  window.addEventListener('load', function () {
    var imgs = document.images, ok = 0;
    for (var i = 0; i < imgs.length; i++) {
      if (imgs[i].complete && imgs[i].naturalWidth > 0) { ok++; } else { note('image not loaded: ' + (imgs[i].alt || i)); }
    }
    document.documentElement.setAttribute('data-images', ok + '/' + imgs.length);
    document.documentElement.setAttribute('data-loaded', 'yes');
    if (!errors.length) { document.documentElement.setAttribute('data-errors', ''); }
  });
})();
"""



def source_hash(text):
    """A CSP source naming one inline element's exact text by its SHA-256 ('sha256-BASE64')."""
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode("ascii") + "'"


# Only the report's own style and script run, named by their hashes: no 'unsafe-inline', so text from a file that an
# escaping slip let through as markup still could not run a script or restyle the page (issue 51).
POLICY = f"default-src 'none'; img-src data:; style-src {source_hash(STYLE)}; script-src {source_hash(PROBE)}"


HTML_TEXT = 2000  # characters of one value from a file shown in the page (a case name, a revision, a command line)


def esc(value):
    """Text from a file as HTML: control characters as escapes (printable), cut to HTML_TEXT characters with how much
    was left out (a 2 MB context string made the page as large), then <, >, &, and quotes escaped."""
    return html.escape(clipped(printable("" if value is None else value), HTML_TEXT, 1), quote=True)


def num(value, digits=None):
    if value is None:
        return "–"
    return f"{value:.{digits}f}" if digits is not None else fmt_num(value)


def p50_text(p50, interval):
    """'12.0 [11.9, 12.1]' (µs), or the p50 alone where the record has no interval."""
    return num(p50) + (f" [{num(interval[0])}, {num(interval[1])}]" if interval else "")


def html_table(header, rows, classes=None):
    """A table; `rows` are lists of (already escaped) cell HTML; a cell that is a tuple (html, True) is numeric."""
    out = ["<table>", "<tr>" + "".join(f"<th>{esc(h)}</th>" for h in header) + "</tr>"]
    for i, row in enumerate(rows):
        cls = f' class="{classes[i]}"' if classes and classes[i] else ""
        cells = "".join(f'<td class="num">{c[0]}</td>' if isinstance(c, tuple) else f"<td>{c}</td>" for c in row)
        out.append(f"<tr{cls}>{cells}</tr>")
    return "\n".join(out + ["</table>"])


def context_rows(doc, path):
    """(field, value) of what a results file says about its machine, versions and run."""
    ctx = doc.get("context", {})
    if not isinstance(ctx, dict):
        ctx = {}
    config = ctx.get("config") if isinstance(ctx.get("config"), dict) else {}
    machine = ctx.get("machine") if isinstance(ctx.get("machine"), dict) else {}
    tool = ctx.get("dmabench") if isinstance(ctx.get("dmabench"), dict) else {}
    rows = [("file", os.path.basename(path)), ("host", ctx.get("host")), ("os", ctx.get("os")),
            ("date", ctx.get("date")), ("backend", ctx.get("backend")), ("config", config.get("name")),
            ("config file", ctx.get("config_file")), ("dmabench version", tool.get("version")),
            ("dmabench revision", tool.get("git_revision")), ("machine", machine_label(doc))]
    devices = machine.get("devices") if isinstance(machine.get("devices"), list) else []
    for d in devices:
        if isinstance(d, dict):
            rows.append((f"GPU {d.get('id', '?')}", f"{d.get('name', '?')} (bus {d.get('bus_id', '?')}, "
                                                    f"cc {d.get('compute_capability', '?')})"))
    versions = machine.get("versions") if isinstance(machine.get("versions"), dict) else {}
    rows += [(k.replace("_", " "), v) for k, v in versions.items()]
    line = ctx.get("command_line")
    if isinstance(line, list):
        rows.append(("command line", " ".join(map(str, line))))
    return [(k, v) for k, v in rows if v not in (None, "")]


def machine_section(doc, path, title):
    rows = [[esc(k), esc(v)] for k, v in context_rows(doc, path)]
    return f"<h2>{esc(title)}</h2>\n" + html_table(["field", "value"], rows)


def counts(doc):
    """{ok, skipped, failed, noisy, cases} of a results file (noisy: ok cases marked noisy)."""
    rs = doc["results"]
    out = {s: sum(r["status"] == s for r in rs) for s in ("ok", "skipped", "failed")}
    out["noisy"] = sum(r["status"] == "ok" and r.get("noisy") is True for r in rs)
    out["cases"] = len(rs)
    return out


def summary_section(doc):
    c = counts(doc)
    cards = "".join(f'<span id="count-{k}"><b>{c[k]}</b> {k}</span>' for k in ("cases", "ok", "skipped", "failed", "noisy"))
    note = ("<p>noisy: ok cases whose p50 interval is wider than the run's max_noise, or with too few samples for a "
            "95% interval (results/SCHEMA.md); their p50 is less certain than the others'.</p>")
    return f'<h2>Summary</h2>\n<div class="cards">{cards}</div>\n{note}'


def case_rows(doc):
    """(cells, class) of every case of a results file, in the file's order."""
    names = labels_apart(doc["results"])
    out = []
    for r in doc["results"]:
        ok = r["status"] == "ok"
        lat = r.get("latency_us") or {}
        noisy = ok and r.get("noisy") is True
        status = esc(r["status"]) + (' <span class="badge">noisy</span>' if noisy else "")
        cells = [esc(r.get("name")), esc(pattern_label(r["pattern"], bool(r.get("in_place")))), esc(names[id(r)]),
                 (esc(fmt_size(r["bytes_per_rank"])),), esc(r["timing"]),
                 (esc(p50_text(lat.get("p50"), p50_interval(r))) if ok else "–",),
                 (num(r.get("algbw_GBps"), 2) if ok else "–",), (num(r.get("busbw_GBps"), 2) if ok else "–",),
                 (f"{100 * r['noise']:.1f}%" if ok and isinstance(r.get("noise"), (int, float)) else "–",),
                 status, esc(r.get("reason", ""))]
        out.append((cells, "noisy" if noisy else "" if ok else r["status"]))
    return out


def cases_section(doc):
    rows = case_rows(doc)
    header = ["case", "pattern", "engine variant", "size/rank", "timing", "p50 µs [95% interval]", "algbw GB/s",
              "busbw GB/s", "noise", "status", "reason"]
    return ("<h2>Cases</h2>\n<p>Every case of the file, in its order; sizes per rank; algbw and busbw from the p50 "
            "(nccl-tests' definitions).</p>\n" + f'<div id="cases">{html_table(header, [c for c, _ in rows], [k for _, k in rows])}</div>')


def compared_keys(ref_doc, new_doc):
    """The case key of each of compare's rows, in its order (REF's cases that NEW has), and NEW's records by key."""
    base = {case_key(r): r for r in ref_doc["results"]}
    new = {case_key(r): r for r in new_doc["results"]}
    return [k for k in base if k in new], new


def comparison_rows(rows, ref_doc, new_doc):
    """(cells, class) of compare's rows, in verdict order then by p50 ratio, noisy cases (in RESULTS) marked."""
    keys, new = compared_keys(ref_doc, new_doc)
    noisy = {id(r) for r, k in zip(rows, keys) if new[k]["status"] == "ok" and new[k].get("noisy") is True}
    out = []
    for r in sorted(rows, key=lambda r: (VERDICT_ORDER.index(r["verdict"]), -(r.get("p50_ratio") or 0))):
        mark = ' <span class="badge">noisy</span>' if id(r) in noisy else ""
        head = [esc(r["verdict"]) + mark, esc(r["case"]), esc(pattern_label(r["pattern"], r["in_place"])),
                esc(r["variant"]), (esc(fmt_size(r["bytes_per_rank"])),), esc(r["timing"])]
        if "p50_ratio" not in r:
            cells = head + ["–", "–", "–", "–", "–", esc(r.get("reason", ""))]
        else:
            bus = num(r["busbw_ratio"], 3) if r["busbw_ratio"] is not None else "–"
            cells = head + [(esc(p50_text(r["base_p50_us"], r["base_p50_interval_us"])),),
                            (esc(p50_text(r["new_p50_us"], r["new_p50_interval_us"])),), (num(r["p50_ratio"], 3),),
                            (bus,), (esc(r["draws"]),), (f"{r['p']:.2g}",)]
        out.append((cells, r["verdict"].replace(" ", "-") + (" noisy" if id(r) in noisy else "")))
    return out


def comparison_section(ref_doc, new_doc, ref_path, new_path, threshold):
    mins = cmp.minima(threshold)
    rows, only_ref, only_new = cmp.compare(ref_doc, new_doc, min_change=mins)
    if not rows:
        raise ResultsError(f"{new_path} and {ref_path} have no case in common (different patterns, engines, options, "
                           "devices, sizes or timing); accepted: two runs of the same config")
    tally = {v: sum(r["verdict"] == v for r in rows) for v in VERDICT_ORDER}
    cards = "".join(f'<span><b>{n}</b> {esc(v)}</span>' for v, n in tally.items() if n)
    together = cmp.moved_together(rows, cmp.calibration(ref_doc, new_doc), mins["launch-bound"])
    table_rows = comparison_rows(rows, ref_doc, new_doc)
    header = ["verdict", "case", "pattern", "engine variant", "size/rank", "timing", "reference p50 µs [interval]",
              "p50 µs [interval]", "p50 ratio", "busbw ratio", "draws", "p"]
    out = [f"<h2>Comparison against {esc(os.path.basename(ref_path))}</h2>",
           f'<div class="cards" id="verdicts">{cards}</div>',
           f"<p>{len(rows)} cases in both files; {esc(verdict.rule_line(verdict.ALPHA, mins))}. <i>draws</i>: the "
           "processes of the reference + this file (one process per side supports nothing: <i>ambiguous</i>). The same "
           "verdicts as <code>dmabench-results compare</code>; slower and failed are regressions.</p>"]
    if together:
        out.append(f'<p class="note">{esc(cmp.together_line(together, mins["launch-bound"]).replace("**", ""))}</p>')
    out.append(f'<div id="comparison">{html_table(header, [c for c, _ in table_rows], [k for _, k in table_rows])}</div>')
    apart = cmp.settings_apart(ref_doc, new_doc, only_ref, only_new)
    if apart:
        out.append(f"<p>{len(apart)} case(s) with one name in both files but other settings (their case keys differ), "
                   "not compared (BASE: the reference):</p><ul>" +
                   "".join(f"<li>{esc(cmp.apart_line(a))}</li>" for a in apart) + "</ul>")
    paired = {a["case"] for a in apart}
    for title, names in ((f"only in {os.path.basename(ref_path)}", only_ref), (f"only in {os.path.basename(new_path)}", only_new)):
        names = [n for n in names if n not in paired]
        if names:
            out.append(f"<p>{len(names)} case(s) {esc(title)}:</p><ul>" + "".join(f"<li>{esc(n)}</li>" for n in names) + "</ul>")
    return "\n".join(out)


def png_uri(fig, plot):
    image = plot.png_bytes(fig, 80)  # every text in it clipped (text.clipped)
    plot.plt.close(fig)
    return "data:image/png;base64," + base64.b64encode(image).decode("ascii")


def figure_plan(plot, df, paths, captions):
    """(title, a function that draws the figure) of the figures of the report, as dmabench.plot plans them."""
    variants = plot.pick_variants(df, "nccl", 10)
    common = (variants, plot.colours(set(df.variant.unique())), paths, captions)
    for p, in_place in sorted(set(zip(df.pattern, df.in_place)), key=plot.placement_order):
        cases = plot._cases(df, p, in_place)
        for t in ("oneshot", "pipelined"):
            if cases[(cases.timing == t) & (cases.status == "ok")].empty:
                continue
            label = f"{pattern_label(p, in_place)}, {t}"
            yield f"{label}: p50 latency", lambda p=p, t=t, i=in_place: plot.figure_latency(df, p, t, *common, i)
            yield f"{label}: busbw", lambda p=p, t=t, i=in_place: plot.figure_busbw(df, p, t, *common, i)
    if df.bd_total.notna().any():
        yield "latency breakdown", lambda: plot.figure_breakdown(df, captions)


def figures_section(paths, docs, max_figures):
    """The figures as inline PNG images, or a visible note where the plot extra is missing."""
    try:
        plot = require("plot", "dmabench.plot")
        frames = require("plot", "dmabench.frames")
    except MissingExtra as e:
        return f'<h2>Figures</h2>\n<p class="note" id="no-figures">No figures in this report: {esc(e)}</p>'
    df = frames.to_frame(paths)
    if df.empty or df[df.status == "ok"].empty:  # no results at all: a frame without columns
        return '<h2>Figures</h2>\n<p class="note" id="no-figures">No figures: the file has no ok case.</p>'
    df = plot.collapse_repeats(plot.split_variants(df))
    plot.check_drawable(df[df.status == "ok"])
    captions = [plot.versions_caption(d) + f"  [{plot._name(f)}, line style {plot.STYLES[i % 4]!r}]"
                for i, (f, d) in enumerate(zip(paths, docs))]
    plan = list(figure_plan(plot, df, paths, captions))
    out = ["<h2>Figures</h2>"]
    if len(paths) > 1:
        out.append(f"<p>Both files overlaid: {esc(os.path.basename(paths[0]))} solid, "
                   f"{esc(os.path.basename(paths[1]))} dashed.</p>")
    import numpy
    with numpy.errstate(all="ignore"):
        for title, draw in plan[:max_figures]:
            fig = draw()
            if not any(ax.get_legend_handles_labels()[0] for ax in fig.axes):  # nothing drawn (as plot skips it)
                plot.plt.close(fig)
                continue
            out.append(f'<figure><img alt="{esc(title)}" src="{png_uri(fig, plot)}">'
                       f"<figcaption>{esc(title)}</figcaption></figure>")
    if len(plan) > max_figures:
        out.append(f'<p class="note">{len(plan) - max_figures} more figure(s) left out (--max-figures {max_figures}).</p>')
    return "\n".join(out)


def page(title, sections):
    return "\n".join(["<!DOCTYPE html>", '<html lang="en">', "<head>", '<meta charset="utf-8">',
                      f'<meta http-equiv="Content-Security-Policy" content="{POLICY}">',
                      f"<title>{esc(title)}</title>", f"<style>{STYLE}</style>", f"<script>{PROBE}</script>",
                      "</head>", "<body>", f"<h1>{esc(title)}</h1>", *sections, "</body>", "</html>", ""])


def report(path, against=None, threshold=None, max_figures=24):
    """The HTML text of the report of the results file `path` (compared with `against` where given)."""
    doc = load(path)
    ref = load(against) if against else None
    name = os.path.basename(path)
    title = f"dmabench report: {name}" + (f" against {os.path.basename(against)}" if against else "")
    sections = [machine_section(doc, path, f"Machine and versions: {name}")]
    if ref is not None:
        sections.append(machine_section(ref, against, f"Reference: {os.path.basename(against)}"))
    sections.append(summary_section(doc))
    if ref is not None:
        sections.append(comparison_section(ref, doc, against, path, threshold))
    paths, docs = ([against, path], [ref, doc]) if ref is not None else ([path], [doc])
    sections += [figures_section(paths, docs, max_figures), cases_section(doc)]
    return page(title, sections)


def main(argv=None, tool=TOOL):
    return run_tool(tool, run, argv)


def run(argv=None):
    ap = arg_parser(__doc__)
    ap.add_argument("results")
    ap.add_argument("--against", help="a reference results file: the comparison's verdicts (as compare)")
    ap.add_argument("--threshold", type=float, help="the least change that counts for every class (default: "
                    "compare's class minima)")
    ap.add_argument("--out", required=True, help="the HTML file to write")
    ap.add_argument("--max-figures", type=int, default=24, help="at most this many figures (default 24)")
    a = ap.parse_args(argv)
    if a.threshold is not None and not 0 <= a.threshold < 10:
        raise ResultsError(f"--threshold {a.threshold} is not a fraction such as 0.05")
    if a.max_figures < 0:
        raise ResultsError(f"--max-figures {a.max_figures}: accepted: 0 or more")
    write_file(a.out, report(a.results, a.against, a.threshold, a.max_figures))
    print(a.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
