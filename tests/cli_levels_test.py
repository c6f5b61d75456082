#!/usr/bin/env python3
"""dmabench --processes N on the host backend (registered with ctest as cli_levels_host).

usage: cli_levels_test.py DMABENCH

- a sweep in 3 fresh processes: one levels file whose ok records carry every process's p50, the median of them as
  their p50 and [min, max] of them as their interval (3 processes: 75%), in config order; each process's file kept;
- each process ran the cases in its own order, and a process started alone with a recorded seed runs them in that
  process's order again; the same --order-seed gives the same seeds and orders again;
- a misplaced block (DMABENCH_HOST_FAULT=misplace:0) still fails its case, in every process and in the levels file;
- bad input stops before any process (exit 2, --out not written); SIGINT ends the run after the process in flight
  (exit 130) with a levels file of what finished.
"""
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time

from driver_common import expect


def run(exe, *args, env=None, rc=None):
    p = subprocess.run([exe, *args], capture_output=True, text=True, timeout=300, env=env)
    if rc is not None and p.returncode != rc:
        sys.exit(f"FAIL: {' '.join(args)} exited {p.returncode}, expected {rc}\n{p.stdout[-3000:]}\n{p.stderr[-3000:]}")
    return p


def config(tmp, name, **extra):
    cfg = {"name": name, "engines": ["host"], "devices": [[0, 1]], "timing": "oneshot", "warmup": 1, "iterations": 8,
           "sweeps": [{"patterns": ["copy", "allgather"], "sizes": ["4KiB", "64KiB", "1MiB"]},
                      {"patterns": ["d2h", "h2d"], "devices": [[0]], "host_memory": {"kind": "pinned"},
                       "layout": {"kind": "blocks", "block_bytes": "4KiB", "blocks": 64, "order": "random",
                                  "pool_bytes": "1MiB"}}]}
    cfg.update(extra)
    path = os.path.join(tmp, name + ".json")
    with open(path, "w") as f:
        json.dump(cfg, f)
    return path


def load(path):
    with open(path) as f:
        return json.load(f)


def names(doc):
    return [r["name"] for r in doc["results"]]


def check_levels_file(doc, n):
    lv = doc["context"]["levels"]
    expect(lv["processes"] == n and lv["merged"] == n and lv["merged_by"] == "dmabench --processes", f"levels {lv}")
    seeds = [p["order"]["seed"] for p in lv["per_process"]]
    expect(len(set(seeds)) == n and all(p["order"]["mode"] == "random" for p in lv["per_process"]), f"seeds {seeds}")
    expect(all(p["exit_code"] == 0 and p["calibration"]["probes"] for p in lv["per_process"]), "exit codes, calibration")
    idx = [r["case_index"] for r in doc["results"]]
    expect(idx == sorted(idx) and idx == list(range(len(idx))), f"records in config order: {idx}")
    ok = [r for r in doc["results"] if r["status"] == "ok"]
    expect(len(ok) == len(doc["results"]) and ok, "every case ok")
    for r in ok:
        p50s = r["levels"]["p50_us"]
        expect(len(p50s) == n and None not in p50s, f"{r['name']}: per-process p50s {p50s}")
        expect(abs(r["latency_us"]["p50"] - statistics.median(p50s)) <= 1e-9 * r["latency_us"]["p50"], f"{r['name']}: median")
        expect(r["p50_interval_us"] == [min(p50s), max(p50s)], f"{r['name']}: interval {r['p50_interval_us']} of {p50s}")
        expect(r["levels"]["coverage"] == 1 - 2 / 2 ** n and r["levels"]["interval"] == "between processes", r["name"])
        expect(abs(r["algbw_GBps"] - r["bytes"] / (r["latency_us"]["p50"] * 1e3)) < 1e-9 * r["algbw_GBps"], "algbw")
        expect(r["iterations"] == 8 * n and r["validated"] is True, f"{r['name']}: samples of all processes")
        if r["layout"]["kind"] == "blocks":
            expect(abs(r["per_block_us"] - r["latency_us"]["p50"] / r["layout"]["blocks_per_op"]) < 1e-9 * r["per_block_us"],
                   f"{r['name']}: per_block_us of the median p50")
    return seeds


def processes_and_orders(exe, tmp):
    cfg = config(tmp, "levels")
    out = os.path.join(tmp, "levels-out.json")
    run(exe, "--backend", "host", "--config", cfg, "--processes", "3", "--order-seed", "42", "--out", out, rc=0)
    doc = load(out)
    seeds = check_levels_file(doc, 3)
    per = [load(os.path.join(out + ".processes", f"process-{k}.json")) for k in (1, 2, 3)]
    expect(len({tuple(names(d)) for d in per}) == 3, "each process ran the cases in its own order")
    expect([d["context"]["order"]["seed"] for d in per] == seeds, "the levels file names each process's seed")
    for r in doc["results"]:  # the case's place in each process's run order
        expect(r["levels"]["order"] == [names(d).index(r["name"]) for d in per], f"{r['name']}: order")
        # each process's fraction of samples on a shared core, from its own record's core_share
        own = [next(x["core_share"] for x in d["results"] if x["name"] == r["name"]) for d in per]
        expect(r["levels"]["core_shared"] == [c["shared"] / c["probed"] for c in own], f"{r['name']}: core_shared")
    cal = doc["context"]["calibration"]["core_share"]
    expect(cal["per_process"] == [d["context"]["calibration"]["core_share"] for d in per] and cal["threshold"] == 0.75,
           f"calibration.core_share {cal}")
    alone = os.path.join(tmp, "alone.json")
    run(exe, "--backend", "host", "--config", cfg, "--order-seed", str(seeds[1]), "--out", alone, rc=0)
    expect(names(load(alone)) == names(per[1]), "a recorded seed reproduces its process's order")
    again = os.path.join(tmp, "again.json")
    run(exe, "--backend", "host", "--config", cfg, "--processes", "3", "--order-seed", "42", "--out", again, rc=0)
    expect([p["order"]["seed"] for p in load(again)["context"]["levels"]["per_process"]] == seeds, "same seed, same seeds")
    expect(names(load(os.path.join(again + ".processes", "process-3.json"))) == names(per[2]), "same seed, same orders")


def misplaced_block(exe, tmp):
    cfg = config(tmp, "misplaced")
    out = os.path.join(tmp, "misplaced-out.json")
    p = run(exe, "--backend", "host", "--config", cfg, "--processes", "2", "--out", out,
            env=dict(os.environ, DMABENCH_HOST_FAULT="misplace:0"), rc=1)
    doc = load(out)
    blocks = [r for r in doc["results"] if r["layout"]["kind"] == "blocks"]
    expect(blocks and all(r["status"] == "failed" for r in blocks), f"block cases fail: {[r['status'] for r in blocks]}")
    for r in blocks:
        expect(r["reason"].startswith("process 1 of 2: validation: "), f"reason {r['reason']}")
        expect(r["latency_us"] is None and "p50_us" not in r["levels"], "a failed case has no figures")
        expect([m["status"] for m in r["levels"]["missing"]] == ["failed", "failed"], f"missing {r['levels']}")
    expect("2 processes:" in p.stdout and "failed" in p.stdout, "the summary line")


def bad_input(exe, tmp):
    cfg = config(tmp, "bad")
    out = os.path.join(tmp, "bad-out.json")
    for args, words in ((["--processes", "0"], "--processes: '0'"), (["--processes", "x"], "--processes: 'x'"),
                        (["--processes", "2", "--benchmark_out=" + os.path.join(tmp, "b.json")], "--benchmark_out"),
                        (["--processes", "2", "--order", "config", "--order-seed", "3"], "--order-seed"),
                        (["--processes", "2", "--order", "sideways"], "--order: unknown order 'sideways'")):
        p = run(exe, "--backend", "host", "--config", cfg, "--out", out, *args, rc=2)
        lines = p.stderr.strip().splitlines()
        expect(len(lines) == 1 and words in lines[0], f"{args}: one line naming it, got {p.stderr!r}")
    with open(os.path.join(tmp, "broken.json"), "w") as f:
        f.write("{\"engines\": [\"host\"], \"sizes\": \"lots\"}")
    run(exe, "--backend", "host", "--config", os.path.join(tmp, "broken.json"), "--processes", "2", "--out", out, rc=2)
    p = run(exe, "--backend", "host", "--config", cfg, "--processes", "2", "--out", out,
            "--benchmark_filter=nothing-matches-this", rc=2)
    expect("selects no case" in p.stderr, p.stderr)
    expect(not os.path.exists(out), "--out untouched on bad input")


def interrupted(exe, tmp):
    cfg = config(tmp, "long", sweeps=[{"patterns": ["copy"], "sizes": list(range(1 << 16, (1 << 16) + 300))}])
    out = os.path.join(tmp, "long-out.json")
    p = subprocess.Popen([exe, "--backend", "host", "--config", cfg, "--processes", "3", "--out", out],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    journal = os.path.join(out + ".processes", "process-2.json.journal")
    deadline = time.time() + 120
    while time.time() < deadline and not (os.path.exists(journal) and sum(1 for _ in open(journal)) > 3):
        time.sleep(0.05)
    p.send_signal(signal.SIGINT)
    stdout, stderr = p.communicate(timeout=120)
    expect(p.returncode == 130, f"SIGINT: exit {p.returncode}\n{stdout[-2000:]}\n{stderr[-2000:]}")
    doc = load(out)
    lv = doc["context"]["levels"]
    expect(lv["merged"] == 2 and [q["exit_code"] for q in lv["per_process"]] == [0, 130], f"levels {lv}")
    expect(not os.path.exists(os.path.join(out + ".processes", "process-3.json")), "no process after the signal")
    done = [r for r in doc["results"] if r["levels"]["processes"] == 2]
    expect(done and len(done) < 300, f"cases both processes finished: {len(done)}")


def check_by_the_rule(exe, tmp):
    """--check against a reference levels file judges by compare's rule (bench/verdict.cpp): 6 + 6 processes of the
    same binary pass; the same run with every operation made 5x longer (the host engine's test-only stretch fault)
    fails as `slower` (exit 5) with the rule's line. 16 and 64 MiB, not 1 and 4: on the 2-vCPU CI VM a host-engine
    process is either "fast" or ~200 us slower per operation (the workers' wake-up, whatever the size: 64 KiB ran at
    8-29 us in some processes and 196-268 us in others of one run), so at 1 MiB the reference's process p50s spanned
    36-312 us, a 5x stretch of the fast ones landed among the slow ones, and the 1 MiB case came out `ambiguous`
    (p 0.31 on CI, 0.026 here). At 16 MiB the copy is ~1 ms and the processes stay within ~2.5x of each other:
    3 of 3 stretched checks gave p 0.00216 (6 x 6's smallest) on both cases."""
    args = ["-b", "16MiB", "-e", "64MiB", "-f", "4", "--patterns", "copy", "--engines", "host", "--backend", "host",
            "-w", "1", "-n", "30", "--processes", "6"]
    ref, out = os.path.join(tmp, "rule-ref.json"), os.path.join(tmp, "rule-new.json")
    # The A/A half compares two batches recorded one after the other, which no rank-sum can guard against the machine
    # drifting between them: on the CI VM (stop 58) the second batch's 64 MiB copies ran +43.9% slower in all 6 of
    # its processes (p 0.00216, the smallest 6 x 6 gives), the same binary. `dmabench ab` interleaves the sides for
    # that reason; `--check` against a file recorded earlier cannot. So a fresh reference and run are recorded up to
    # three times, and the half fails only when every pair fails: a rule that fails identical builds fails all three.
    failures = []
    for attempt in range(3):
        run(exe, *args, "--out", ref, rc=0)
        p = run(exe, *args, "--out", out, "--check", ref)
        expect(p.stdout.count("Hodges-Lehmann over 6 x 6 process p50s") == 2, p.stdout[-2000:])
        if p.returncode == 0 and "check: 2 PASS, 0 FAIL" in p.stdout:
            break
        failures.append(f"attempt {attempt + 1}: exit {p.returncode}\n" +
                        "\n".join(l for l in p.stdout.splitlines() if l.startswith(("PASS  ", "FAIL  ", "check: "))))
    expect(len(failures) < 3, "A/A check failed in 3 of 3 fresh pairs:\n" + "\n".join(failures))
    if failures:
        print("A/A check: passed after", len(failures), "failed pair(s) (drift between batches):\n" + "\n".join(failures))
    env = dict(os.environ, DMABENCH_HOST_FAULT="stretch:400:400")
    p = run(exe, *args, "--out", out, "--check", ref, env=env)
    lines = [l for l in p.stdout.splitlines() if l.startswith("FAIL  copy/host/")]
    expect(p.returncode == 5 and len(lines) == 2 and all("  slower: p50 +" in l for l in lines),
           f"stretched check: {p.returncode}\n{p.stdout[-2000:]}")


def main():
    exe = sys.argv[1]
    with tempfile.TemporaryDirectory() as tmp:
        processes_and_orders(exe, tmp)
        misplaced_block(exe, tmp)
        bad_input(exe, tmp)
        interrupted(exe, tmp)
        check_by_the_rule(exe, tmp)
    print("PASS levels-host")


if __name__ == "__main__":
    main()
