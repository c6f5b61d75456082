"""alltoallv (mixture-of-experts dispatch / combine) tables from dmabench results: uniform against skewed routings,
per engine (standard library only).

usage: moe_report.py RESULTS.json [more.json ...] [--out FILE] [--format markdown|csv|json]

Reads the records of pattern "alltoallv" (their `alltoallv` field, results/SCHEMA.md; records of other patterns are
left out, with a note) and reports one section per model shape (token bytes, top-k, experts, ranks), device set
(ranks may share GPUs), timing, direction (dispatch, combine) and token layout (packed, scattered):

(a) a row per engine variant (the engine with its non-default options, dmabench.`variant`),
    tokens per rank and splits ("uniform", "zipf 1.2": Zipf exponent, "hot 0.5": share of tokens picking the hot
    expert, "file step 2": a trace's step; the seed or the trace's name is added where a section has several):
    bytes moved, the p50 step time (µs; in markdown with half its 95% interval and `noisy`, as summarize shows it),
    algbw on the bytes moved (bytes_moved / p50, GB/s), the imbalance (max / mean
    bytes received per rank), the heaviest pair's share, and the slowdown against the same variant's uniform case of
    the section at the same tokens per rank ("x1.34" = p50 / uniform p50; "–" where there is none);
(b) who wins: per tokens per rank and splits, the fastest variant by p50 and its margin over the runner-up
    (runner-up p50 / winner p50), or "within noise" when either is flagged `noisy` or their p50 intervals
    (`p50_interval_us`) overlap (or their p50s are equal); a variant measured alone wins nothing;
(c) per variant, the smallest tokens per rank from which it wins (at that size and every larger one measured),
    per splits: "ce-batch wins from 256 tokens/rank under zipf 1.2"; "only at ..." where its wins are not a run
    up to the largest size, and "wins no case" where it has none.

Only ok and validated records are measured; skipped, failed and unvalidated alltoallv cases are listed at the end,
one line per status and reason with their count and variants, and their case names where there are at most 4. A generated routing whose `experts` is null has one expert per rank (dmabench's
default). Trace-driven cases (splits "file") whose `topk` and `experts` are null join the section of the one
generated shape with their token bytes, ranks, devices, timing, direction and layout, with a note (else a section
of their own). When several records measure one cell (the same case in two files), the later one (file order, then
record order) is used, and a note says how many were replaced.
--format csv writes the rows of (a), one per line, with the section's fields; --format json the whole report. A
figure beyond a float (algbw or a ratio over a p50 of 5e-324 µs) is null (empty in CSV, "–" in markdown), never
Infinity; names are printed with their control characters escaped.
Writes to stdout, or to --out FILE whole (a temporary file renamed into place). A results file may also be given as
its run's journal, `<file>.journal` (dmabench.load).

Exit codes: 0 done; 2 bad input: an unreadable or malformed results file, no alltoallv record in the files, an
alltoallv record whose `alltoallv` field cannot be read, a bad argument or an output that cannot be written, with
one line `moe_report.py: error: ...` on stderr (never a traceback); 3 internal error; 130 interrupted (Ctrl-C).
"""
import csv
import io
import os
import sys

from ..files import write_or_print
from ..keys import interval_text, NOISY_LEGEND, p50_interval, software_times, variant, versions_caption
from ..reader import load
from ..schema import check_kind, check_number
from ..text import finite, fmt_num, fmt_size, json_text, printable, quote, ResultsError, table
from ..tool import arg_parser, run_tool

TOOL = "moe_report.py"
REPORT_SCHEMA = "dmabench-moe-report/1"
PATTERN = "alltoallv"
DIRECTIONS = ("dispatch", "combine")
TOKENS = ("packed", "scattered")
SPLITS = ("uniform", "zipf", "hot", "file")
LISTED_CASES = 4  # cases not measured for one reason named one by one up to this many (all in --format json)


# ---- reading ------------------------------------------------------------------------------------------------------

def _int(m, field, where, nullable=False, positive=True):
    check_kind(m.get(field), int, f"{where}.{field}", nullable)
    if m.get(field) is not None and m[field] < (1 if positive else 0):
        raise ResultsError(f"{where}.{field}: expected {'a positive integer' if positive else 'an integer >= 0'}, "
                           f"got {m[field]}")
    return m.get(field)


def _choice(m, field, allowed, where):
    if m.get(field) not in allowed:
        raise ResultsError(f"{where}.{field}: expected one of {', '.join(allowed)}, got {quote(m.get(field), 40)}")
    return m[field]


def routing_of(r, where):
    """The fields of an ok record's `alltoallv` the report uses, checked: ResultsError naming the first wrong one."""
    where = f"{where}.alltoallv"
    if "alltoallv" not in r:
        raise ResultsError(f"{where}: missing (an ok alltoallv record carries its routing)")
    m = r["alltoallv"]
    check_kind(m, dict, where)
    splits = _choice(m, "splits", SPLITS, where)
    out = {"direction": _choice(m, "direction", DIRECTIONS, where), "tokens": _choice(m, "tokens", TOKENS, where),
           "splits": splits}
    check_number(m.get("skew"), f"{where}.skew", nullable=splits not in ("zipf", "hot"))
    out["skew"] = m.get("skew") if splits in ("zipf", "hot") else None
    check_kind(m.get("file"), str, f"{where}.file", nullable=splits != "file")
    out["file"] = m.get("file") if splits == "file" else None
    out["step"] = _int(m, "step", where, nullable=splits != "file", positive=False) if splits == "file" else None
    for field in ("token_bytes", "tokens_per_rank", "ranks"):
        out[field] = _int(m, field, where)
    for field in ("topk", "experts"):
        out[field] = _int(m, field, where, nullable=True)
    if out["experts"] is None and splits != "file":  # a generated routing without an expert count: one per rank
        out["experts"] = out["ranks"]
    out["seed"] = _int(m, "seed", where, nullable=True, positive=False) if splits != "file" else None
    out["bytes_moved"] = _int(m, "bytes_moved", where, positive=False)
    check_number(m.get("imbalance"), f"{where}.imbalance", nullable=True)
    out["imbalance"] = m.get("imbalance")
    check_kind(m.get("ranks_share_devices", False), bool, f"{where}.ranks_share_devices")
    out["ranks_share_devices"] = m.get("ranks_share_devices", False)
    out["heaviest_share"], out["heaviest_error"] = heaviest_of(m.get("heaviest_pair"), f"{where}.heaviest_pair")
    return out


def heaviest_of(h, where):
    """(share or None, error text or None) of a `heaviest_pair` field."""
    if h is None:
        return None, None
    check_kind(h, dict, where)
    if "error" in h:
        check_kind(h["error"], str, f"{where}.error")
        return None, h["error"]
    check_number(h.get("share"), f"{where}.share", nullable=True)
    return h.get("share"), None


def counted(r):
    """Whether the record's numbers count: ok and validated."""
    return r["status"] == "ok" and r.get("validated") is not False


def section_key(r, m):
    return (m["token_bytes"], m["topk"], m["experts"], m["ranks"], tuple(r["devices"]), m["ranks_share_devices"],
            r["timing"], m["direction"], m["tokens"])


def collect(paths):
    """(sections {key: {cell key: entry}}, excluded records, documents, notes) from the files."""
    sections, excluded, docs = {}, [], []
    notes = {"other_patterns": 0, "replaced": 0, "heaviest_errors": {}, "attached": 0}
    for path in paths:
        doc = load(path)
        docs.append((path, doc))
        for i, r in enumerate(doc["results"]):
            if r["pattern"] != PATTERN:
                notes["other_patterns"] += 1
                continue
            if not counted(r):
                excluded.append(r)
                continue
            m = routing_of(r, f"{path}: results[{i}]")
            if m["heaviest_error"]:
                notes["heaviest_errors"][m["heaviest_error"]] = notes["heaviest_errors"].get(m["heaviest_error"], 0) + 1
            entry = entry_of(r, m)
            cells = sections.setdefault(section_key(r, m), {})
            notes["replaced"] += entry["cell"] in cells
            cells[entry["cell"]] = entry
    if not sections and not excluded:
        raise ResultsError(f"no alltoallv record (pattern \"{PATTERN}\") in {', '.join(paths)}; this report reads only "
                           "those (a config with patterns [\"alltoallv\"] and an \"alltoallv\" routing axis makes them)")
    attach_trace_cases(sections, notes)
    return sections, excluded, docs, notes


def entry_of(r, m):
    p50 = r["latency_us"]["p50"]
    splits_key = (SPLITS.index(m["splits"]), m["skew"] if m["skew"] is not None else -1.0, m["file"] or "",
                  m["step"] if m["step"] is not None else -1, m["seed"] if m["seed"] is not None else -1)
    return {"variant": variant(r), "tokens_per_rank": m["tokens_per_rank"], "splits_key": splits_key,
            "cell": (variant(r), m["tokens_per_rank"], splits_key), "routing": m, "p50_us": p50,
            "interval": p50_interval(r), "noisy": r.get("noisy") is True, "algbw_GBps": finite(m["bytes_moved"] / p50 / 1e3),
            "name": r["name"], "software_times": software_times(r)}


def attach_trace_cases(sections, notes):
    """Moves a section of file-split cases without top-k / experts into the one generated section that matches the
    rest of its key, where exactly one does."""
    for key in [k for k in sections if k[1] is None or k[2] is None]:
        rest = key[:1] + key[3:]
        homes = [k for k in sections if k != key and k[:1] + k[3:] == rest and k[1] is not None and k[2] is not None
                 and (key[1] is None or key[1] == k[1]) and (key[2] is None or key[2] == k[2])]
        movable = all(e["routing"]["splits"] == "file" for e in sections[key].values())
        if len(homes) == 1 and movable:
            for cell, e in sections.pop(key).items():
                e["attached"] = True
                notes["replaced"] += cell in sections[homes[0]]
                sections[homes[0]][cell] = e
                notes["attached"] += 1


# ---- analysis -----------------------------------------------------------------------------------------------------

def splits_label(m, with_file=False, with_seed=False):
    """'uniform', 'zipf 1.2', 'hot 0.5', 'file step 2' (with the trace's name or the seed where asked)."""
    if m["splits"] == "file":
        name = f" {os.path.basename(m['file'])}" if with_file else ""
        return f"file{name} step {m['step']}"
    label = m["splits"] + (f" {m['skew']:g}" if m["skew"] is not None else "")
    return label + (f", seed {m['seed']}" if with_seed and m["seed"] is not None else "")


def uniform_of(entries, e):
    """The uniform entry the slowdown of `e` is measured against: same variant and tokens per rank, the same seed
    where one was measured, else the lowest seed; None where there is none."""
    same = [u for u in entries if u["routing"]["splits"] == "uniform" and u["variant"] == e["variant"]
            and u["tokens_per_rank"] == e["tokens_per_rank"]]
    if not same:
        return None
    seeded = [u for u in same if u["routing"]["seed"] == e["routing"]["seed"]]
    return (seeded or sorted(same, key=lambda u: u["splits_key"]))[0]


def overlap(a, b):
    """Whether the p50 intervals of two entries overlap (False where either has none)."""
    return a["interval"] is not None and b["interval"] is not None and \
        a["interval"][0] <= b["interval"][1] and b["interval"][0] <= a["interval"][1]


def verdict(cells):
    """Who wins among the entries of one (tokens per rank, splits): winner (None when none is declared), leader,
    runner-up, margin (runner-up p50 / leader p50) and why no winner is declared."""
    ranked = sorted(cells, key=lambda e: (e["p50_us"], e["variant"]))
    lead = ranked[0]
    if len(ranked) == 1:
        return {"winner": None, "leader": lead["variant"], "runner_up": None, "margin": None, "why": "alone"}
    second = ranked[1]
    why = [f"{e['variant']} noisy" for e in (lead, second) if e["noisy"]]
    if overlap(lead, second):
        why.append("p50 intervals overlap")
    if lead["p50_us"] == second["p50_us"] and not why:
        why.append("equal p50")
    return {"winner": None if why else lead["variant"], "leader": lead["variant"], "runner_up": second["variant"],
            "margin": finite(second["p50_us"] / lead["p50_us"]), "why": "; ".join(why) or None}


def wins_from(variant_name, verdicts, labels):
    """Per splits label (`labels`, in order), where `variant_name` wins: {"from": T or None (the smallest tokens per
    rank from which it wins at every larger one), "also": [T...] (its other wins), "contested": [T...]}, over the
    tokens per rank whose cases were contested (two variants or more)."""
    out = {}
    for label in labels:
        contested = sorted((v for v in verdicts if v["splits"] == label and v["runner_up"] is not None),
                           key=lambda v: v["tokens_per_rank"])
        wins = [v["tokens_per_rank"] for v in contested if v["winner"] == variant_name]
        suffix = []
        for v in reversed(contested):
            if v["winner"] != variant_name:
                break
            suffix.insert(0, v["tokens_per_rank"])
        out[label] = {"from": suffix[0] if suffix else None, "also": [t for t in wins if t not in suffix],
                      "contested": [v["tokens_per_rank"] for v in contested]}
    return out


def wins_text(variant_name, wins):
    parts = []
    for label, w in wins.items():
        if w["from"] is not None:
            also = f" (also at {', '.join(map(str, w['also']))})" if w["also"] else ""
            parts.append(f"from {w['from']} tokens/rank{also} under {label}")
        elif w["also"]:
            parts.append(f"only at {', '.join(map(str, w['also']))} tokens/rank under {label}")
    if not parts:
        return f"{variant_name} wins no case here"
    return f"{variant_name} wins " + "; ".join(parts)


def analyse(key, cells):
    token_bytes, topk, experts, ranks, devices, share, timing, direction, tokens = key
    entries = sorted(cells.values(), key=lambda e: (e["variant"], e["tokens_per_rank"], e["splits_key"]))
    files = {e["routing"]["file"] for e in entries if e["routing"]["file"]}
    seeds = {e["routing"]["seed"] for e in entries if e["routing"]["seed"] is not None}
    for e in entries:
        e["splits"] = splits_label(e["routing"], with_file=len(files) > 1, with_seed=len(seeds) > 1)
        base = uniform_of(entries, e)
        e["slowdown"] = finite(e["p50_us"] / base["p50_us"]) if base else None
    points = sorted({(e["tokens_per_rank"], e["splits_key"]) for e in entries})
    verdicts = []
    for tpr, sk in points:
        here = [e for e in entries if e["tokens_per_rank"] == tpr and e["splits_key"] == sk]
        verdicts.append({"tokens_per_rank": tpr, "splits": here[0]["splits"], **verdict(here),
                         "p50_us": {e["variant"]: e["p50_us"] for e in here}})
        for e in here:
            e["winner"] = verdicts[-1]["winner"]
    variants = sorted({e["variant"] for e in entries})
    labels = list(dict.fromkeys(e["splits"] for e in sorted(entries, key=lambda e: e["splits_key"])))
    wins = {v: wins_from(v, verdicts, labels) for v in variants}
    return {"token_bytes": token_bytes, "topk": topk, "experts": experts, "ranks": ranks, "devices": list(devices),
            "ranks_share_devices": share, "timing": timing, "direction": direction, "tokens": tokens,
            "variants": variants, "rows": [row_of(e) for e in entries], "verdicts": verdicts, "wins": wins,
            "wins_text": [wins_text(v, wins[v]) for v in variants],
            "attached_trace_cases": sum(1 for e in entries if e.get("attached"))}


def row_of(e):
    m = e["routing"]
    return {"variant": e["variant"], "tokens_per_rank": e["tokens_per_rank"], "splits": e["splits"],
            "splits_kind": m["splits"], "skew": m["skew"], "file": m["file"], "step": m["step"], "seed": m["seed"],
            "bytes_moved": m["bytes_moved"], "p50_us": e["p50_us"],
            "p50_interval_us": list(e["interval"]) if e["interval"] else None, "noisy": e["noisy"],
            "algbw_GBps": e["algbw_GBps"], "imbalance": m["imbalance"], "heaviest_pair_share": m["heaviest_share"],
            "heaviest_pair_error": m["heaviest_error"], "slowdown_vs_uniform": e["slowdown"], "winner": e["winner"],
            "name": e["name"],
            "software_times": e["software_times"]}


def section_order(key):
    def k(x):
        return (x is None, x if x is not None else 0)
    token_bytes, topk, experts, ranks, devices, share, timing, direction, tokens = key
    return (k(token_bytes), k(topk), k(experts), k(ranks), devices, share, timing, DIRECTIONS.index(direction),
            TOKENS.index(tokens))


def excluded_entries(records):
    """One entry per distinct (status, reason): how many cases, their variants and names (in file order)."""
    groups = {}
    for r in records:
        status = r["status"] if r["status"] != "ok" else "ok but not validated"
        groups.setdefault((status, r.get("reason") or ""), []).append(r)
    return [{"status": status, "reason": reason, "count": len(rs), "variants": sorted({variant(r) for r in rs}),
             "cases": [r["name"] for r in rs]}
            for (status, reason), rs in sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0]))]


# ---- output -------------------------------------------------------------------------------------------------------

def times(v):
    return "–" if v is None else f"x{v:.2f}"


def title(t):
    shape = f"{fmt_size(t['token_bytes'])} tokens, " + \
        (f"top-{t['topk']} of {t['experts']} experts" if t["topk"] is not None and t["experts"] is not None else
         f"top-{t['topk'] if t['topk'] is not None else '?'} of {t['experts'] if t['experts'] is not None else '?'} "
         "experts (from the trace)")
    share = " (ranks share GPUs)" if t["ranks_share_devices"] else ""
    return (f"{t['direction']}, {t['tokens']} · {shape} · {t['ranks']} ranks on dev={','.join(map(str, t['devices']))}"
            f"{share} · {t['timing']}")


def cases_table(t):
    header = ["engine", "tokens/rank", "splits", "bytes moved", "p50 µs", "algbw GB/s", "imbalance",
              "heaviest pair share", "vs uniform"]
    rows = []
    for r in t["rows"]:
        share = "error" if r["heaviest_pair_error"] else fmt_num(r["heaviest_pair_share"])
        rows.append([r["variant"], str(r["tokens_per_rank"]), r["splits"], fmt_size(r["bytes_moved"]),
                     interval_text(r["p50_us"], r["p50_interval_us"], r["noisy"], fmt_num), fmt_num(r["algbw_GBps"]),
                     fmt_num(r["imbalance"]), share, times(r["slowdown_vs_uniform"])])
    return table(header, rows)


def verdict_cells(v):
    if v["runner_up"] is None:
        return [v["leader"], fmt_num(v["p50_us"][v["leader"]]), "–", "–", "only variant measured"]
    said = f"{v['winner']} wins" if v["winner"] else f"within noise ({v['why']})"
    return [v["leader"], fmt_num(v["p50_us"][v["leader"]]), v["runner_up"], times(v["margin"]), said]


def section_md(t):
    out = ["", f"## {printable(title(t))}", "", cases_table(t)]
    if any(r["software_times"] for r in t["rows"]):
        out += ["", "_[software engine]: CPU-thread times of the software SDMA engine, not hardware times._"]
    if t["attached_trace_cases"]:
        out += ["", f"_{t['attached_trace_cases']} trace case(s) (splits file) record no top-k / experts; shown "
                    f"with this shape, the one generated shape of their token size and ranks._"]
    if any(r["p50_interval_us"] or r["noisy"] for r in t["rows"]):
        out += ["", NOISY_LEGEND]
    header = ["tokens/rank", "splits", "fastest", "p50 µs", "runner-up", "margin", "verdict"]
    rows = [[str(v["tokens_per_rank"]), v["splits"]] + verdict_cells(v) for v in t["verdicts"]]
    out += ["", "**Who wins** (lowest p50; margin = runner-up p50 / fastest p50)", "", table(header, rows)]
    out += ["", "**From where each engine wins** (at that size and every larger one measured)", ""]
    return out + [f"- {printable(line)}" for line in t["wins_text"]]


def notes_of(notes):
    out = []
    if notes["other_patterns"]:
        out.append(f"{notes['other_patterns']} record(s) of other patterns not shown.")
    if notes["replaced"]:
        out.append(f"{notes['replaced']} alltoallv record(s) measured a case an earlier one did; the later one is used.")
    for error, n in sorted(notes["heaviest_errors"].items()):
        out.append(f"Heaviest pair not measured in {n} case(s): {printable(error)}")
    return out


def markdown(report):
    out = ["# alltoallv: uniform against skewed routings", ""]
    out += [printable(f"- `{f['path']}`: {f['caption']}") for f in report["files"]]
    out += [""] + [f"_{n}_" for n in report["notes"]] if report["notes"] else []
    out += ["", "p50 is the step time; algbw = bytes moved / p50; imbalance = max / mean bytes received per rank; "
                "heaviest pair share = the p50 of the pair that moves the most bytes, timed alone, / the step's p50; "
                "vs uniform = p50 / p50 of the same engine variant's uniform case at the same tokens per rank."]
    if not report["sections"]:
        out += ["", "No ok and validated alltoallv case."]
    for t in report["sections"]:
        out += section_md(t)
    if report["excluded"]:
        out += ["", "## Not measured (skipped, failed or not validated)", ""]
        for e in report["excluded"]:
            reason = f": {e['reason']}" if e["reason"] else ""
            out.append(printable(f"- {e['count']} × {e['status']}{reason} ({', '.join(e['variants'])})"))
            if e["count"] <= LISTED_CASES:
                out += [f"  - `{printable(name)}`" for name in e["cases"]]
    return "\n".join(out) + "\n"


CSV_SECTION = ["direction", "tokens", "token_bytes", "topk", "experts", "ranks", "devices", "ranks_share_devices",
               "timing"]
CSV_ROW = ["variant", "tokens_per_rank", "splits", "splits_kind", "skew", "file", "step", "seed", "bytes_moved",
           "p50_us", "p50_low_us", "p50_high_us", "noisy", "algbw_GBps", "imbalance", "heaviest_pair_share",
           "slowdown_vs_uniform", "winner", "name"]


def csv_text(report):
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(CSV_SECTION + CSV_ROW)
    for t in report["sections"]:
        for r in t["rows"]:
            interval = r["p50_interval_us"] or [None, None]
            cells = {**r, "p50_low_us": interval[0], "p50_high_us": interval[1]}
            section = [" ".join(map(str, t[k])) if k == "devices" else t[k] for k in CSV_SECTION]
            w.writerow(["" if x is None else str(x).lower() if isinstance(x, bool) else x
                        for x in section + [cells[k] for k in CSV_ROW]])
    return buf.getvalue()


def report_of(paths):
    sections, excluded, docs, notes = collect(paths)
    return {"schema": REPORT_SCHEMA, "files": [{"path": p, "caption": versions_caption(d)} for p, d in docs],
            "notes": notes_of(notes),
            "sections": [analyse(k, sections[k]) for k in sorted(sections, key=section_order)],
            "excluded": excluded_entries(excluded)}


def main(argv=None, tool=TOOL):
    return run_tool(tool, run, argv)


def run(argv=None):
    ap = arg_parser(__doc__)
    ap.add_argument("results", nargs="+")
    ap.add_argument("--out", help="write the report here (whole) instead of to stdout")
    ap.add_argument("--format", default="markdown", choices=["markdown", "csv", "json"])
    a = ap.parse_args(argv)
    report = report_of(a.results)
    text = {"markdown": markdown, "csv": csv_text, "json": lambda r: json_text(r) + "\n"}[a.format](report)
    write_or_print(a.out, text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
