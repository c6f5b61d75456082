#!/usr/bin/env python3
"""dmabench-results ab and gate-rates on the host backend (registered with ctest as cli_ab_host).

usage: cli_ab_test.py DMABENCH

- A/A: one binary twice, 4 processes a side in alternating rounds (BASE first in odd rounds), each process its own
  order seed; two levels files of 4 processes; no case slower, exit 0;
- an injected slowdown (NEW's processes under DMABENCH_HOST_FAULT=stretch:1000, every operation 11x as long) on 4 and
  16 MiB cases: every case slower with 8+8 processes, exit 1, a JUnit file whose failures are those cases (256 KiB
  oneshot cases overlapped at 11x on a loaded machine: the host engine's wake-up modes spread 10-120 us there);
- re-runs: with minimum changes of 0 every unsupported case is ambiguous and runs again, alone (--benchmark_filter),
  in 4 more processes a side; its record then holds 8 draws a side, the others 4;
- gate-rates: 2 A/A and 1 injected comparison (--inject: NEW's variables) give rates.json, and --table prints its
  table;
- bad input (exit 2, one line): no `--`, a binary that is not executable, a non-empty --out, an ab flag among
  DMABENCH_ARGS, a process that refuses its arguments, a bad --min-change or --alpha or --stretch.
"""
import json
import os
import subprocess
import sys
import tempfile

from driver_common import expect

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ENV = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"))


def tool(*args, rc=None):
    p = subprocess.run([sys.executable, "-m", "dmabench.cli", *map(str, args)], capture_output=True, text=True,
                       timeout=600, env=ENV)
    if rc is not None and p.returncode != rc:
        sys.exit(f"FAIL: {' '.join(map(str, args))} exited {p.returncode}, expected {rc}\n{p.stdout[-3000:]}\n"
                 f"{p.stderr[-3000:]}")
    return p


def sweep(tmp, sizes=("256KiB", "1MiB")):
    path = os.path.join(tmp, f"ab-{'-'.join(sizes)}.json")
    with open(path, "w") as f:
        json.dump({"name": "ab", "engines": ["host"], "devices": [[0, 1]], "timing": "oneshot", "warmup": 2,
                   "iterations": 10, "patterns": ["copy", "allgather"], "sizes": list(sizes)}, f)
    return ["--config", path, "--backend", "host"]


def main():
    exe = sys.argv[1]
    with tempfile.TemporaryDirectory() as tmp:
        args = sweep(tmp)
        # A/A
        out = os.path.join(tmp, "aa")
        p = tool("ab", exe, exe, "--out", out, "--processes", 4, "--reruns", 0, "--seed", 7, "--json", "--", *args)
        expect(p.returncode == 0, f"A/A exited {p.returncode}:\n{p.stdout[-2000:]}{p.stderr[-2000:]}")
        doc = json.loads(p.stdout)
        expect(doc["state"] == "done" and len(doc["cases"]) == 4, f"A/A: {doc['state']}, {len(doc['cases'])} cases")
        expect(not any(c["verdict"] in ("slower", "failed") for c in doc["cases"]), f"A/A slower: {doc['cases']}")
        sides = [(q["side"], q["round"]) for q in doc["processes"]]
        expect(sides == [("base", 1), ("new", 1), ("new", 2), ("base", 2), ("base", 3), ("new", 3), ("new", 4),
                         ("base", 4)], f"rounds: {sides}")
        expect(len({q["seed"] for q in doc["processes"]}) == 8, "every process its own order seed")
        with open(os.path.join(out, "base.json")) as f:
            base = json.load(f)
        expect(base["context"]["levels"]["merged_by"] == "ab" and
               all(r["levels"]["processes"] == 4 for r in base["results"]), "base.json: a levels file of 4 processes")
        for q in doc["processes"]:
            with open(q["file"]) as f:
                expect(json.load(f)["context"]["order"]["seed"] == q["seed"], f"{q['file']}: not its recorded seed")
        # injected: NEW 11x slower
        out = os.path.join(tmp, "inj")
        junit = os.path.join(tmp, "inj.xml")
        # 4 and 16 MiB: a copy's own time well above the host engine's oneshot wake-up modes, which a loaded machine
        # spreads from about 10 to 120 us (seen in CI's HIP check beside a build: 256 KiB cases overlapped at 11x)
        p = tool("ab", exe, exe, "--out", out, "--processes", 8, "--reruns", 0, "--json", "--junit", junit,
                 "--new-env", "DMABENCH_HOST_FAULT=stretch:1000", "--", *sweep(tmp, ("4MiB", "16MiB")))
        expect(p.returncode == 1, f"injected exited {p.returncode}: {p.stderr[-2000:]}")
        doc = json.loads(p.stdout)
        with open(os.path.join(out, "base.json")) as f, open(os.path.join(out, "new.json")) as g:
            draws = {r["name"]: (r["levels"]["p50_us"], s["levels"]["p50_us"])
                     for r, s in zip(json.load(f)["results"], json.load(g)["results"])}
        expect([c["verdict"] for c in doc["cases"]] == ["slower"] * 4,
               f"injected: {[c['verdict'] for c in doc['cases']]}; draws (base, new): {draws}")
        expect(all(c["change"] > 1.0 and c["draws"] == "8+8" for c in doc["cases"]), f"injected: {doc['cases']}")
        expect(doc["new_env"] == {"DMABENCH_HOST_FAULT": "stretch:1000"} and doc["base_env"] == {}, "env recorded")
        with open(junit) as f:
            expect(f.read().count("<failure") == 4, "JUnit: 4 failures")
        # re-runs of what is not decided
        out = os.path.join(tmp, "rerun")
        p = tool("ab", exe, exe, "--out", out, "--processes", 4, "--reruns", 1, "--min-change", "launch=0",
                 "--min-change", "bandwidth=0", "--json", "--", *args)
        expect(p.returncode in (0, 1), f"re-run exited {p.returncode}: {p.stderr[-2000:]}")
        doc = json.loads(p.stdout)
        expect(len(doc["looks"]) == 2 and doc["looks"][1]["rerun"], f"looks: {doc['looks']}")
        again = set(doc["looks"][1]["rerun"])
        for q in doc["processes"][8:]:
            expect(q["filter"], "a re-run process runs the open cases alone")
            with open(q["file"]) as f:
                expect({r["name"] for r in json.load(f)["results"]} == again, f"{q['file']}: not the open cases")
        draws = {c["case"]: c["draws"] for c in doc["cases"]}
        expect(all(draws[n] == ("8+8" if n in again else "4+4") for n in draws), f"draws: {draws} again: {again}")
        # gate-rates
        out = os.path.join(tmp, "rates")
        p = tool("gate-rates", "--bin", exe, "--out", out, "--aa", 2, "--injected", 1, "--processes", 3, "--reruns", 0,
                 "--inject", "DMABENCH_HOST_FAULT=stretch:1000", "--", *args, rc=0)
        with open(os.path.join(out, "rates.json")) as f:
            rates = json.load(f)
        expect([c["kind"] for c in rates["comparisons"]] == ["aa", "inj", "aa"], f"{rates['comparisons']}")
        expect([c["busy"] for c in rates["comparisons"]] == [False, False, True], "every second A/A beside a busy loop")
        expect(rates["rates"]["aa_all"]["comparisons"] == 2 and rates["rates"]["injected"] == 1, f"{rates['rates']}")
        expect(rates["settings"]["inject"] == {"DMABENCH_HOST_FAULT": "stretch:1000"}, f"{rates['settings']}")
        with open(os.path.join(out, "inj-01", "ab.json")) as f:
            expect(json.load(f)["new_env"] == {"DMABENCH_HOST_FAULT": "stretch:1000"}, "--inject reaches NEW only")
        table = tool("gate-rates", "--table", os.path.join(out, "rates.json"), rc=0).stdout
        expect(table.strip() in p.stdout and "| A/A comparisons |" in table, f"--table:\n{table}")
        # bad input
        notexe = os.path.join(tmp, "ab.json")
        os.makedirs(os.path.join(tmp, "full"))
        open(os.path.join(tmp, "full", "x"), "w").close()
        for argv, words in (
                (["ab", exe, exe, "--out", os.path.join(tmp, "b1")], "-- DMABENCH_ARGS"),
                (["ab", notexe, exe, "--out", os.path.join(tmp, "b2"), "--", *args], "not an executable"),
                (["ab", exe, exe, "--out", os.path.join(tmp, "full"), "--", *args], "not an empty directory"),
                (["ab", exe, exe, "--out", os.path.join(tmp, "b3"), "--", *args, "--out", "x.json"], "--out in DMABENCH"),
                (["ab", exe, exe, "--out", os.path.join(tmp, "b4"), "--", "--preset", "nosuch"], "refused its arguments"),
                (["ab", exe, exe, "--out", os.path.join(tmp, "b5"), "--min-change", "memory=1", "--", *args],
                 "--min-change"),
                (["ab", exe, exe, "--out", os.path.join(tmp, "b6"), "--alpha", "2", "--", *args], "--alpha"),
                (["gate-rates", "--bin", exe, "--out", os.path.join(tmp, "b7"), "--stretch", "x", "--", *args],
                 "--stretch"),
                (["gate-rates", "--bin", exe, "--out", os.path.join(tmp, "b8"), "--inject", "NOEQUALS", "--", *args],
                 "--inject")):
            p = tool(*argv)
            lines = p.stderr.strip().splitlines()
            expect(p.returncode == 2 and len(lines) == 1 and words in lines[0], f"{argv}: {p.returncode} {p.stderr!r}")
        expect(not os.path.exists(os.path.join(tmp, "b1")) and not os.path.exists(os.path.join(tmp, "b2")),
               "bad input ran nothing")
        # the fault's own bad values: the case fails and says what is accepted
        for bad in ("stretch:10x", "stretch:10:5x", "stretch:-1", "stretch:2000", "stretch:"):
            p = subprocess.run([exe, *args, "--out", os.path.join(tmp, "bad.json")], capture_output=True, text=True,
                               timeout=120, env=dict(ENV, DMABENCH_HOST_FAULT=bad))
            expect(p.returncode == 1 and "stretch:PERCENT or stretch:LAUNCH_PERCENT:BANDWIDTH_PERCENT" in p.stdout + p.stderr,
                   f"DMABENCH_HOST_FAULT={bad}: exit {p.returncode}\n{p.stdout[-500:]}{p.stderr[-500:]}")
    print("ab: A/A, injected, re-runs, gate-rates and bad input ok")


if __name__ == "__main__":
    main()
