#!/usr/bin/env python3
"""The self-comparison of issue 39 from the files of run-levels.sh: how results/h200x1/levels/README.md's tables were made.

usage: selfcmp.py DIR OUT
DIR holds, for each config C of noise-repeat and moe-decode, C-A.json and C-B.json (two runs of one build, each
`dmabench --processes 5`), and kvpool-1.json .. kvpool-8.json (eight fresh one-process runs of configs/kv-pool.json),
which scripts/merge_runs.py merges into OUT/kvpool-A.json (processes 1-4) and OUT/kvpool-B.json (5-8). For each
config: scripts/compare.py A B (its verdict counts and exit code), scripts/history.py gate of B against a fresh history
holding A (OUT/history.sqlite), and the same two for two planted copies of B: every p50 25% slower (every latency
statistic, interval end and per-process p50 times 1.25, bandwidths / 1.25), and only the bandwidth-bound cases 10%
slower (dmabench.case_class). Then, per class of case, the `levels-selfcmp` table of dmabench.selfcmp_text over
both runs A and B (an earlier version read the half-widths of B alone and missed A's 6.3% on h2d-bidir 256 MiB):
how wide the between-process intervals are, the smallest change two of them show apart, the one-process pairs more
than 5% apart and the processes per run a 10% change needs. Prints markdown. Needs the dmabench package: `pip install ./python`, or
run with PYTHONPATH=python.
"""
import copy
import json
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
SCRIPTS = os.path.join(ROOT, "scripts")

from dmabench import case_class, selfcmp_text  # the package installed (pip install ./python) or PYTHONPATH=python


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
    print()
    print(widths_block([(c, a, b) for c, (a, b) in files.items()]))


def widths_block(runs):
    """Per class of case, from both runs A and B (dmabench.selfcmp_text: half-widths, one-process pairs, processes
    for a 10% change), as the `levels-selfcmp` generated block selfcmp.md holds, so that `dmabench-results tables`
    and the test of generated tables remake it from the files."""
    args = " ".join(f"{c}={os.path.relpath(a, ROOT)},{os.path.relpath(b, ROOT)}" for c, a, b in runs)
    return (f"<!-- generated: levels-selfcmp {args} -->\n"
            f"{selfcmp_text.markdown([(c, a, b) for c, a, b in runs], ROOT)}\n<!-- end generated -->")


if __name__ == "__main__":
    main()
