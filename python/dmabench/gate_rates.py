"""How often the verdict is wrong, measured: N A/A comparisons (one binary against itself) and N comparisons against
a slowdown injected outside the timing code, each a whole `dmabench-results ab` run.

usage: dmabench-results gate-rates --bin DMABENCH --out DIR [--aa 30] [--injected 10] [--stretch 10:5 | --inject K=V...]
                                   [--busy-share 0.5] [--processes 6] [--reruns 2] [--budget 300] [--seed S]
                                   -- DMABENCH_ARGS...
       dmabench-results gate-rates --table DIR/rates.json...  (the README table of a finished measurement; several
                                                               rates.json of one setting, each its own seed: merged)

A/A: `ab DMABENCH DMABENCH` (every verdict other than same is wrong: slower and faster are false alarms, ambiguous
is undecided). Every second A/A comparison (--busy-share of them) runs beside a busy loop on the machine's last CPU
(another process spinning; on a 2-vCPU VM the other vCPU), the load a shared CI runner adds. Injected:
`ab DMABENCH DMABENCH --new-env DMABENCH_HOST_FAULT=stretch:L:B` (the host engine's test-only fault: every operation
of NEW made L percent longer in launch-bound cases, B percent in bandwidth-bound ones, by a spin after its
copies; engines/host.cpp), so that NEW is slower by a known amount and the binary is the same. On a GPU, --inject
K=V (repeatable) sets NEW's variables instead, e.g. `--inject LD_PRELOAD=build/libdmabench_slowdown_shim.so --inject
DMABENCH_SHIM_SPIN_NS=2000`: tools/slowdown_shim.cpp spins that long before each runtime copy or launch call, and
DMABENCH_SHIM_SPIN_NS_PER_MIB=M ns more per MiB the call copies (what reaches the bandwidth-bound cases).

Writes DIR/aa-NN/ and DIR/inj-NN/ (each ab run's ab.json; the per-process files are removed after each run unless
--keep), and DIR/rates.json: per comparison its kind, busy or not, exit code, seconds, verdict counts per class and
the median p50 ratio per class; and the rates: A/A comparisons with any slower (and with any slower or faster) case,
the share of A/A cases ambiguous, per class; injected comparisons with a slower case of the class and the share of
the class's cases called slower. Prints the table (--table prints it from a rates.json: the README's table is made
so and checked by tests).
Exit codes: 0 done; 2 bad input; 130 interrupted.
"""
import json
import math
import os
import shutil
import statistics
import subprocess
import sys
import time

from . import ab, verdict
from .files import open_text
from .text import fmt_num, json_text, ResultsError, table
from .tool import arg_parser, run_tool

TOOL = "gate-rates"
CLASSES = ("launch-bound", "bandwidth-bound")


def injected(a):
    """NEW's variables in an injected comparison: --inject's, else the host engine's stretch fault."""
    return ab.env_pairs(a.inject, "--inject") if a.inject else {"DMABENCH_HOST_FAULT": f"stretch:{a.stretch}"}


def busy_loop():
    """A process spinning on the machine's last CPU (None where there is one CPU only)."""
    cpus = sorted(os.sched_getaffinity(0))
    if len(cpus) < 2:
        return None
    code = f"import os; os.sched_setaffinity(0, {{{cpus[-1]}}})\nwhile True: pass"
    return subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.DEVNULL)


def one(a, args, kind, k, busy):
    """One ab run: its summary for rates.json."""
    out = os.path.join(a.out, f"{kind}-{k:02d}")
    argv = [a.bin, a.bin, "--out", out, "--processes", str(a.processes), "--reruns", str(a.reruns),
            "--budget", str(a.budget), "--seed", str(a.seed * 1000 + k + (500 if kind == "inj" else 0)), "--json"]
    if kind == "inj":
        for key, value in injected(a).items():
            argv += ["--new-env", f"{key}={value}"]
    loop = busy_loop() if busy else None
    t0 = time.monotonic()
    try:
        p = subprocess.run([sys.executable, "-m", "dmabench.cli", "ab", *argv, "--", *args], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, check=False,
                           env={**os.environ, "PYTHONPATH": os.path.dirname(os.path.dirname(os.path.abspath(__file__)))})
    finally:
        if loop:
            loop.kill()
            loop.wait()
    if p.returncode == 130:
        raise KeyboardInterrupt
    if p.returncode not in (0, 1):
        raise ResultsError(f"{kind} comparison {k}: ab exited {p.returncode}: "
                           f"{(p.stderr.decode(errors='replace').strip().splitlines() or [''])[-1][:300]}")
    result = json.loads(p.stdout)
    if not a.keep:
        for side in ab.SIDES:
            shutil.rmtree(os.path.join(out, side), ignore_errors=True)
            os.remove(os.path.join(out, f"{side}.json"))
    return summary(result, kind, k, busy, p.returncode, time.monotonic() - t0)


def summary(result, kind, k, busy, code, seconds):
    """A comparison's line of rates.json from its ab.json."""
    per = {}
    for cls in CLASSES:
        rows = [r for r in result["cases"] if r["class"] == cls and "p50_ratio" in r]
        slower = [r["p50_ratio"] for r in rows if r["verdict"] == "slower"]
        rest = [r["p50_ratio"] for r in rows if r["verdict"] != "slower"]
        per[cls] = {"cases": len(rows), **{v: sum(r["verdict"] == v for r in rows) for v in ("slower", "faster",
                                                                                           "ambiguous", "same")},
                    "median_ratio": statistics.median([r["p50_ratio"] for r in rows]) if rows else None,
                    # the smallest change called slower, the largest not called slower (the gate's reach)
                    "smallest_slower_ratio": min(slower) if slower else None,
                    "largest_not_slower_ratio": max(rest) if rest else None}
    return {"kind": kind, "index": k, "busy": busy, "exit_code": code, "seconds": round(seconds, 1),
            "processes": len(result["processes"]), "looks": len(result["looks"]), "classes": per,
            "failed_cases": sum(r["verdict"] == "failed" for r in result["cases"])}


def spread(r):
    """The widest between-process p50 interval of a compared case, high over low, of BASE's and NEW's."""
    return max(hi / lo for lo, hi in (r.get("base_p50_interval_us") or [1, 1], r.get("new_p50_interval_us") or [1, 1])
               if lo and hi)


def cases_markdown(rates_path):
    """The ambiguous launch-bound cases of a gate-rates measurement's A/A comparisons, by pattern and engine, with
    their widest between-process spread, and the injected comparisons' reach, from the ab.json files beside its
    rates.json (the README prose about which cases could not be called quotes this)."""
    with open_text(rates_path) as f:
        doc = json.load(f)
    where = os.path.dirname(rates_path)
    groups, reach = {}, []
    for c in doc["comparisons"]:
        with open(os.path.join(where, f"{c['kind']}-{c['index']:02d}", "ab.json"), encoding="utf-8") as f:
            rows = [r for r in json.load(f)["cases"] if r.get("class") == "launch-bound" and "p50_ratio" in r]
        if c["kind"] == "aa":
            for r in rows:
                if r["verdict"] == "ambiguous":
                    key = ("MoE step" if r["pattern"] == "alltoallv" else r["pattern"], r["engine"])
                    groups.setdefault(key, []).append(spread(r))
        else:
            slow = [r for r in rows if r["verdict"] == "slower"]
            rest = [r for r in rows if r["verdict"] != "slower"]
            top = max(rest, key=lambda r: r["p50_ratio"]) if rest else None
            reach.append([f"{c['kind']}-{c['index']:02d}", str(len(slow)),
                          f"{min(r['p50_ratio'] for r in slow):.3f}" if slow else "–",
                          f"{top['p50_ratio']:.3f} ({top['verdict']}, `{top['case']}`)" if top else "–"])
    total = sum(len(v) for v in groups.values())
    out = table(["A/A ambiguous launch-bound (pattern, engine)", "cases", "widest between-process spread"],
                [[f"{p} `{e}`", str(len(v)), f"{max(v):.2f}x"] for (p, e), v in
                 sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0]))] + [["all", str(total), "–"]])
    out += ("\n\nSpread: a case's between-process p50 interval (`base_p50_interval_us`, `new_p50_interval_us`; "
            "coverage as `levels.coverage`: at least 95% from 6 processes), high over low, the wider of BASE and NEW.\n\n")
    out += table(["injected", "launch-bound cases called slower", "smallest ratio called slower",
                  "largest ratio not called slower (verdict, case)"], reach)
    return out


def spin_markdown(depth, rates_paths):
    """What the shim's spin predicts for the bandwidth-bound (pipelined) cases of each injected comparison, beside
    what they measured. A pipelined sample is `depth` calls; the shim spins S = SPIN_NS + SPIN_NS_PER_MIB x MiB before
    each. The first spin delays the whole sample; the others run while the copies before them move, unless S outlasts
    a copy (c: the case's BASE p50). So a sample takes S + depth*c while S < c and depth*S + c beyond."""
    rows = []
    for path in rates_paths:
        with open_text(path) as f:
            doc = json.load(f)
        env = doc["settings"].get("inject") or {}
        fixed, per_mib = (float(env.get(k, 0)) for k in ("DMABENCH_SHIM_SPIN_NS", "DMABENCH_SHIM_SPIN_NS_PER_MIB"))
        for c in doc["comparisons"]:
            if c["kind"] != "inj":
                continue
            name = f"{c['kind']}-{c['index']:02d}"
            with open(os.path.join(os.path.dirname(path), name, "ab.json"), encoding="utf-8") as f:
                cases = [r for r in json.load(f)["cases"] if r.get("class") == "bandwidth-bound" and "p50_ratio" in r]
            for r in cases:
                spin = (fixed + per_mib * r["bytes_per_rank"] / (1 << 20)) / 1e3  # µs
                copy = r["base_p50_us"]
                model = max(spin + depth * copy, depth * spin + copy) / (depth * copy)
                rows.append([f"{os.path.basename(os.path.dirname(path))}/{name}", f"{per_mib:g}", f"`{r['case']}`",
                             fmt_num(copy), fmt_num(spin), f"{model:.3f}", f"{r['p50_ratio']:.3f}"])
    return table(["comparison", "spin ns a MiB", "case", "c: BASE p50 µs", "S: spin a call µs",
                  f"predicted ratio (depth {depth})", "measured p50 ratio NEW/BASE"], rows)


def rates(comparisons):
    """The rates of rates.json from its comparisons."""
    aa = [c for c in comparisons if c["kind"] == "aa"]
    inj = [c for c in comparisons if c["kind"] == "inj"]
    out = {"aa": len(aa), "injected": len(inj)}

    def any_of(cs, verdicts, classes=CLASSES):
        return sum(any(c["classes"][cls][v] for cls in classes for v in verdicts) for c in cs)

    for label, group in (("all", aa), ("quiet", [c for c in aa if not c["busy"]]), ("busy", [c for c in aa if c["busy"]])):
        cases = sum(c["classes"][cls]["cases"] for c in group for cls in CLASSES)
        out[f"aa_{label}"] = {
            "comparisons": len(group), "with_slower": any_of(group, ("slower",)),
            "with_slower_or_faster": any_of(group, ("slower", "faster")),
            "ambiguous_share": (sum(c["classes"][cls]["ambiguous"] for c in group for cls in CLASSES) / cases)
            if cases else None,
            "per_class_ambiguous": {cls: (sum(c["classes"][cls]["ambiguous"] for c in group) /
                                          max(1, sum(c["classes"][cls]["cases"] for c in group))) for cls in CLASSES}}
    out["injected_per_class"] = {cls: {
        "comparisons_with_slower": sum(c["classes"][cls]["slower"] > 0 for c in inj),
        "share_slower": (sum(c["classes"][cls]["slower"] for c in inj) / max(1, sum(c["classes"][cls]["cases"] for c in inj))),
        "median_ratio": statistics.median([c["classes"][cls]["median_ratio"] for c in inj
                                           if c["classes"][cls]["median_ratio"] is not None]) if inj else None,
        "smallest_slower_ratio": extreme(min, inj, cls, "smallest_slower_ratio"),
        "largest_not_slower_ratio": extreme(max, inj, cls, "largest_not_slower_ratio")}
        for cls in CLASSES}
    return out


def extreme(pick, comparisons, cls, key):
    """min or max of a class's per-comparison figure over comparisons that have it (files before it: None)."""
    values = [c["classes"][cls].get(key) for c in comparisons]
    values = [v for v in values if v is not None]
    return pick(values) if values else None


def ratio(x):
    return "–" if x is None else f"{x:.3f}"


def upper_bound(k, n, confidence=0.95):
    """The one-sided Clopper-Pearson upper bound of a rate seen k times in n: the p at which k or fewer in n has
    probability 1 - confidence (bisection on the binomial distribution)."""
    if n == 0 or k >= n:
        return 1.0
    lo, hi = k / n, 1.0
    for _ in range(60):
        p = (lo + hi) / 2
        below = sum(math.comb(n, i) * p ** i * (1 - p) ** (n - i) for i in range(k + 1))
        lo, hi = (p, hi) if below > 1 - confidence else (lo, p)
    return hi


def pct(x):
    return "–" if x is None else f"{100 * x:.1f}%"


def markdown(doc):
    """The README table of a rates.json."""
    r, s = doc["rates"], doc["settings"]
    inject = s.get("inject") or {"DMABENCH_HOST_FAULT": f"stretch:{s['stretch']}"}
    what = " ".join(f"{k}={v}" for k, v in inject.items())
    lines = [f"Settings: `{s['command']}`, {s['processes']} processes per side and look, up to {s['reruns']} re-run "
             f"look(s), alpha {s['alpha']:g}, minimum change {s['min_change']}; injected in NEW: `{what}`"
             + (" (launch-bound:bandwidth-bound percent)" if "DMABENCH_HOST_FAULT" in inject else "")
             + f". Machine: {s['machine']}."
             + (f" Merged from {len(s['seed'])} parts, seeds {', '.join(map(str, s['seed']))}."
                if isinstance(s.get("seed"), list) else ""), "",
             table(["A/A comparisons", "count", "with a slower case", "with a slower or faster case",
                    "cases ambiguous", "launch-bound ambiguous", "bandwidth-bound ambiguous"],
                   [[label, str(r[f"aa_{label}"]["comparisons"]), str(r[f"aa_{label}"]["with_slower"]),
                     str(r[f"aa_{label}"]["with_slower_or_faster"]), pct(r[f"aa_{label}"]["ambiguous_share"]),
                     pct(r[f"aa_{label}"]["per_class_ambiguous"]["launch-bound"]),
                     pct(r[f"aa_{label}"]["per_class_ambiguous"]["bandwidth-bound"])]
                    for label in ("all", "quiet", "busy")]),
             "", f"What these counts bound (one-sided 95%, Clopper-Pearson over the comparisons): the chance that an "
             f"A/A comparison reports a slower case is at most "
             f"{pct(upper_bound(r['aa_all']['with_slower'], r['aa_all']['comparisons']))} "
             f"({r['aa_all']['with_slower']} of {r['aa_all']['comparisons']}); that an injected comparison reports no "
             f"slower launch-bound case at most "
             f"{pct(upper_bound(r['injected'] - r['injected_per_class']['launch-bound']['comparisons_with_slower'], r['injected']))}"
             f", no slower bandwidth-bound case at most "
             f"{pct(upper_bound(r['injected'] - r['injected_per_class']['bandwidth-bound']['comparisons_with_slower'], r['injected']))}"
             ". The shares of cases are pooled over comparisons, whose cases move together: no interval is given for "
             "them.", "",
             table(["injected (class)", "comparisons", "with a slower case of the class", "cases called slower",
                    "median p50 ratio NEW/BASE", "smallest ratio called slower", "largest ratio not called slower"],
                   [[cls, str(r["injected"]), str(p["comparisons_with_slower"]), pct(p["share_slower"]),
                     ratio(p["median_ratio"]), ratio(p.get("smallest_slower_ratio")),
                     ratio(p.get("largest_not_slower_ratio"))]
                    for cls, p in r["injected_per_class"].items()])]
    return "\n".join(lines)


def load(path):
    """A rates.json, checked for what markdown() reads."""
    try:
        with open_text(path) as f:
            doc = json.load(f)
        if not isinstance(doc["settings"]["command"], str) or not isinstance(doc["rates"]["aa"], int):
            raise ValueError("settings.command or rates.aa of the wrong type")
        return doc
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise ResultsError(f"{path}: not a gate-rates rates.json ({type(e).__name__}: {e})") from None


# Settings two measurements may differ in and still be one measurement's parts: the seed (each part its own, so that
# no two comparisons share a case order).
MERGE_FREE = ("seed",)


def merge(docs):
    """One rates.json from several of one setting (a measurement split over calls, each with its own seed): the
    comparisons of all, numbered in order, the rates over all of them. Settings must agree but for the seed; two
    parts with one seed are refused (their comparisons would repeat one another's case orders)."""
    if len(docs) == 1:
        return docs[0]
    if not all(isinstance(d.get("comparisons"), list) for d in docs):
        raise ResultsError("gate-rates --table: a part without its comparisons cannot be merged")
    first = {k: v for k, v in docs[0]["settings"].items() if k not in MERGE_FREE}
    seeds = [d["settings"].get("seed") for d in docs]
    if len(set(seeds)) != len(seeds):
        raise ResultsError(f"gate-rates --table: parts with one seed ({seeds}): the same case orders twice")
    for d in docs[1:]:
        other = {k: v for k, v in d["settings"].items() if k not in MERGE_FREE}
        if other != first:
            diff = sorted(k for k in set(first) | set(other) if first.get(k) != other.get(k))
            raise ResultsError(f"gate-rates --table: the parts differ in {', '.join(diff)}: not one measurement")
    comparisons, count = [], {}
    for d in docs:
        for c in d["comparisons"]:
            count[c["kind"]] = count.get(c["kind"], 0) + 1
            comparisons.append({**c, "index": count[c["kind"]], "seed": d["settings"].get("seed")})
    settings = {**docs[0]["settings"], "seed": seeds}
    return {"schema": "dmabench-gate-rates/1", "settings": settings, "comparisons": comparisons,
            "rates": rates(comparisons)}


def machine():
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            model = next((line.split(":", 1)[1].strip() for line in f if line.startswith("model name")), "unknown CPU")
    except OSError:
        model = "unknown CPU"
    return f"{model}, {os.cpu_count()} CPUs"


def main(argv=None, tool=TOOL):
    return run_tool(tool, run, argv)


def run(argv=None):
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] == ["--table"]:
        if len(argv) < 2:
            raise ResultsError("--table takes one rates.json or more (several: one setting, merged)")
        print(markdown(merge([load(path) for path in argv[1:]])))
        return 0
    if "--" not in argv:
        raise ResultsError("expected `-- DMABENCH_ARGS...` (e.g. -- --preset gate-host --backend host)")
    cut = argv.index("--")
    ap = arg_parser(__doc__)
    ap.add_argument("--bin", required=True, help="the dmabench binary")
    ap.add_argument("--out", required=True, help="the directory (created; must be empty or absent)")
    ap.add_argument("--aa", type=int, default=30, help="A/A comparisons (default 30)")
    ap.add_argument("--injected", type=int, default=10, help="comparisons against the injected slowdown (default 10)")
    ap.add_argument("--stretch", default="10:5", help="launch-bound:bandwidth-bound percent injected (default 10:5)")
    ap.add_argument("--inject", action="append", metavar="K=V",
                    help="NEW's variables in an injected comparison instead of the host stretch (repeatable)")
    ap.add_argument("--busy-share", type=float, default=0.5, help="share of A/A comparisons beside a busy loop")
    ap.add_argument("--processes", type=int, default=6)
    ap.add_argument("--reruns", type=int, default=2)
    ap.add_argument("--budget", type=float, default=300.0)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--keep", action="store_true", help="keep every process's results file")
    a = ap.parse_args(argv[:cut])
    args = argv[cut + 1:]
    ab.check_binary(a.bin, "--bin")
    ab.check_args(args)
    parts = a.stretch.split(":")
    try:
        if not 1 <= len(parts) <= 2 or not all(0 <= float(x) <= 1000 for x in parts):
            raise ValueError
    except ValueError:
        raise ResultsError(f"--stretch {a.stretch!r}: expected PERCENT or LAUNCH:BANDWIDTH percent, 0 to 1000") from None
    injected(a)  # a bad --inject: before anything is made
    if not (0 <= a.aa <= 1000 and 0 <= a.injected <= 1000 and 0 <= a.busy_share <= 1):
        raise ResultsError("--aa and --injected: 0 to 1000 comparisons; --busy-share: 0 to 1")
    if os.path.exists(a.out) and (not os.path.isdir(a.out) or os.listdir(a.out)):
        raise ResultsError(f"--out {a.out!r}: exists and is not an empty directory")
    os.makedirs(a.out, exist_ok=True)
    settings = {"command": " ".join(args), "processes": a.processes, "reruns": a.reruns, "budget_s": a.budget,
                "alpha": verdict.ALPHA, "min_change": verdict.MIN_CHANGE, "stretch": a.stretch, "inject": injected(a),
                "seed": a.seed,
                "busy_share": a.busy_share, "machine": machine()}
    comparisons = []
    busy_every = round(1 / a.busy_share) if a.busy_share else 0
    plan = [("aa", k, bool(busy_every) and k % busy_every == 0) for k in range(1, a.aa + 1)]
    plan += [("inj", k, False) for k in range(1, a.injected + 1)]
    plan.sort(key=lambda p: (p[1], p[0]))  # interleaved: aa-1, inj-1, aa-2, ...: the machine's drift hits both
    for kind, k, busy in plan:
        comparisons.append(one(a, args, kind, k, busy))
        doc = {"schema": "dmabench-gate-rates/1", "settings": settings, "comparisons": comparisons,
               "rates": rates(comparisons)}
        ab.write_json(os.path.join(a.out, "rates.json"), doc)
        c = comparisons[-1]
        print(f"{kind}-{k:02d}{' busy' if busy else ''}: exit {c['exit_code']}, {c['seconds']:.0f} s, " + "; ".join(
            f"{cls} " + ", ".join(f"{n} {v}" for v, n in p.items() if v not in ("cases", "median_ratio") and n)
            for cls, p in c["classes"].items()), flush=True)
    print(markdown(doc))
    return 0


if __name__ == "__main__":
    sys.exit(main())
