#!/usr/bin/env python3
"""The self-comparison of issue 39 from the files of run-levels.sh: how results/h200x1/levels/README.md's tables were made.

usage: selfcmp.py DIR OUT
DIR holds, for each config C of noise-repeat and moe-decode, C-A.json and C-B.json (two runs of one build, each
`dmabench --processes 5`), and kvpool-1.json .. kvpool-8.json (eight fresh one-process runs of configs/kv-pool.json),
which scripts/merge_runs.py merges into OUT/kvpool-A.json (processes 1-4) and OUT/kvpool-B.json (5-8). For each
config: scripts/compare.py A B (its verdict counts and exit code), scripts/history.py gate of B against a fresh history
holding A (OUT/history.sqlite), and the same two for two planted copies of B: every p50 25% slower (every latency
statistic, interval end and per-process p50 times 1.25, bandwidths / 1.25), and only the bandwidth-bound cases 10%
slower (dmabench.case_class). Then, per class of case, how wide the between-process intervals are (their
half-width over the p50, `noise`) and the smallest change compare.py can call in a case (its threshold, or the two
half-widths together where that is more). Prints markdown. Needs the dmabench package: `pip install ./python`, or
run with PYTHONPATH=python.
"""
import copy
import json
import os
import re
import statistics
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
SCRIPTS = os.path.join(ROOT, "scripts")

from dmabench import case_class, case_key  # the package installed (pip install ./python) or PYTHONPATH=python


def tool(name, *args):
    p = subprocess.run([sys.executable, os.path.join(SCRIPTS, name), *args], capture_output=True, text=True)
    return p.returncode, p.stdout, p.stderr


def slowed(doc, factor, only=None):
    """A copy of a levels file with the p50s of the chosen cases (`only`: a class) `factor` times slower."""
    out = copy.deepcopy(doc)
    out["context"]["started_at"] = out["context"]["started_at"][:-1] + "9Z"  # another run, after B
    for r in out["results"]:
        if r["status"] != "ok" or (only and case_class(r) != only):
            continue
        r["latency_us"] = {k: v * factor for k, v in r["latency_us"].items()}
        for k in ("p50_interval_us",):
            r[k] = [v * factor for v in r[k]]
        for k in ("algbw_GBps", "busbw_GBps"):
            r[k] = r[k] / factor
        for k in ("algbw_interval_GBps", "busbw_interval_GBps"):
            r[k] = [None if v is None else v / factor for v in r[k]]
        r["levels"]["p50_us"] = [None if v is None else v * factor for v in r["levels"]["p50_us"]]
    return out


def counts(markdown):
    head = markdown.splitlines()[0]
    found = dict((v, int(n)) for n, v in re.findall(r"(\d+) (failed|slower|faster|within noise|same)", head))
    return found


def gate_counts(text):
    m = re.findall(r"(\d+) (PASS|FAIL|NEW|NOISY)", text.strip().splitlines()[-2] if text.strip() else "")
    return {v: int(n) for n, v in m}


def main():
    src, out = sys.argv[1], sys.argv[2]
    os.makedirs(out, exist_ok=True)
    for part, ks in (("A", range(1, 5)), ("B", range(5, 9))):
        rc, _, err = tool("merge_runs.py", *[os.path.join(src, f"kvpool-{k}.json") for k in ks], "--out",
                          os.path.join(out, f"kvpool-{part}.json"))
        assert rc == 0, err
    files = {c: [os.path.join(src if c != "kvpool" else out, f"{c}-{p}.json") for p in "AB"]
             for c in ("noise-repeat", "moe-decode", "kvpool")}
    db = os.path.join(out, "history.sqlite")
    if os.path.exists(db):
        os.remove(db)
    rc, _, err = tool("history.py", "add", *[f[0] for f in files.values()], "--db", db)
    assert rc == 0, err
    print("| config | comparison | compare.py verdicts | compare exit | history gate of the new side | gate exit |")
    print("| --- | --- | --- | --- | --- | --- |")
    widths = {}
    for c, (a, b) in files.items():
        B = json.load(open(b))
        variants = {"B (unchanged)": b}
        for label, factor, only in (("B, every p50 25% slower", 1.25, None),
                                    ("B, bandwidth-bound cases 10% slower", 1.10, "bandwidth-bound")):
            path = os.path.join(out, f"{c}-{'slow25' if only is None else 'bw10'}.json")
            json.dump(slowed(B, factor, only), open(path, "w"))
            variants[label] = path
        for label, path in variants.items():
            rc, text, err = tool("compare.py", a, path)
            grc, gtext, gerr = tool("history.py", "gate", path, "--db", db)
            print(f"| {c} | A against {label} | {counts(text)} | {rc} | {gate_counts(gtext)} | {grc} |")
        A = {case_key(r): r for r in json.load(open(a))["results"] if r["status"] == "ok"}
        for r in B["results"]:
            if r["status"] == "ok" and case_key(r) in A:
                widths.setdefault((c, case_class(r)), []).append((r["noise"], A[case_key(r)]["noise"], r["levels"]["within"]))
    print("\n| config | class | cases | between-process half-width, median (max) | within-process, median | "
          "smallest change compare can call, median (max) |")
    print("| --- | --- | --- | --- | --- | --- |")
    for (c, cls), w in sorted(widths.items()):
        between = [x for x, _, _ in w]
        detect = [max(0.05, x + y) for x, y, _ in w]
        print(f"| {c} | {cls} | {len(w)} | {100 * statistics.median(between):.1f}% ({100 * max(between):.1f}%) | "
              f"{100 * statistics.median([z for _, _, z in w]):.2f}% | {100 * statistics.median(detect):.0f}% "
              f"({100 * max(detect):.0f}%) |")
    processes_needed(src, out)


def processes_needed(src, out):
    """Per class: the spread of one case's per-process p50s (sigma, from both runs' processes pooled: 10 draws, 8 for
    kv-pool; 1.4826 x MAD over the median) and the processes each run needs for compare.py to call a 10% change in a
    case of that spread (two order-statistic intervals of the median, each about 1.96 x 1.2533 sigma / sqrt(N) wide
    on either side, apart: 10% > 2 x 1.96 x 1.2533 sigma / sqrt(N))."""
    rows = {}
    for c in ("noise-repeat", "moe-decode", "kvpool"):
        docs = [json.load(open(os.path.join(src if c != "kvpool" else out, f"{c}-{p}.json"))) for p in "AB"]
        draws = {}
        for d in docs:
            for r in d["results"]:
                if r["status"] == "ok":
                    draws.setdefault((case_key(r), case_class(r)), []).extend(x for x in r["levels"]["p50_us"] if x)
        for (key, cls), xs in draws.items():
            m = statistics.median(xs)
            sigma = 1.4826 * statistics.median(abs(x - m) for x in xs) / m
            rows.setdefault((c, cls), []).append(sigma)
    print("\n| config | class | cases | per-process sigma, median (max) | processes per run to call a 10% change, median (max) |")
    print("| --- | --- | --- | --- | --- |")
    for (c, cls), sig in sorted(rows.items()):
        need = [max(1, (2 * 1.96 * 1.2533 * s / 0.10) ** 2) for s in sig]
        print(f"| {c} | {cls} | {len(sig)} | {100 * statistics.median(sig):.1f}% ({100 * max(sig):.1f}%) | "
              f"{statistics.median(need):.0f} ({max(need):.0f}) |")


if __name__ == "__main__":
    main()
