#!/usr/bin/env python3
"""End-to-end tests of the dmabench program (registered with ctest).

usage: cli_test.py DMABENCH CONFIG_DIR MODE
  quick-host    configs/quick.json on the host backend; every field of the results checked
  bad-input     every kind of bad input exits 2 with a message naming the field, runs nothing
  host-8-ranks  all patterns (and the all-gather in place) on 8 host ranks, validated
  overlap-host  a config with sweeps, cases beside the host's stream workload: every overlap field checked
  adaptive-host a config without iterations: every case sampled adaptively, its interval, noise and sampling
                consistent, the console table's rows (samples, the p50's interval, "noisy"); --benchmark_repetitions keeps a fixed count
  exit-codes    every exit code (0, 1, 2, 3, 4, 130, 143), kill -9 and the journal, cost per case, first-case delay
  empty-run     a run in which no case was ok exits 6 with a line saying nothing was measured and why; --allow-empty: 0
  sdma-host     configs/sdma-host.json: every sdma variant on the software SDMA engine, 2/4/8 ranks, packet dumps
  gpu           every GPU engine on every pattern on the build's GPU backend (cuda or hip) (exit 77 = skip without GPU)
"""
import json
import os
import re
import subprocess
import sys
import shutil
import tempfile

from driver_common import expect

SKIP = 77
LAT = ["min", "p50", "mean", "p95", "p99", "max", "stddev"]
FIELDS = ["name", "pattern", "engine", "options", "devices", "ranks", "bytes", "bytes_per_rank", "timing",
          "pipeline_depth", "warmup", "status", "reason", "validated", "iterations", "latency_us",
          "algbw_GBps", "busbw_GBps"]


def run(exe, *args, check_rc=None):
    p = subprocess.run([exe, *args], capture_output=True, text=True, timeout=540)
    if check_rc is not None and p.returncode != check_rc:
        sys.exit(f"FAIL: {' '.join(args)} exited {p.returncode}, expected {check_rc}\n"
                 f"stdout:\n{p.stdout[-4000:]}\nstderr:\n{p.stderr[-4000:]}")
    return p


def run_config(exe, tmp, name, cfg, backend):
    """Writes `cfg` as a config, runs it (exit 0 expected) and returns the results document."""
    path, out = os.path.join(tmp, f"{name}.json"), os.path.join(tmp, f"{name}-out.json")
    with open(path, "w") as f:
        json.dump(cfg, f)
    run(exe, "--config", path, "--backend", backend, "--out", out, check_rc=0)
    with open(out) as f:
        return json.load(f)


def check_results(doc, expect_backend):
    expect(doc["schema"] == "dmabench/1", f"schema {doc.get('schema')}")
    ctx = doc["context"]
    for k in ("date", "host", "os", "dmabench", "backend", "machine", "config", "command_line"):
        expect(k in ctx, f"context lacks {k}")
    expect(ctx["backend"] == expect_backend, f"backend {ctx['backend']}")
    names = set()
    for r in doc["results"]:
        for f in FIELDS:
            expect(f in r, f"result {r.get('name')} lacks {f}")
        expect(r["name"] not in names, f"duplicate result {r['name']}")
        names.add(r["name"])
        expect(r["status"] in ("ok", "skipped", "failed"), f"status {r['status']}")
        if r["status"] != "ok":
            expect(r["reason"], f"{r['name']}: {r['status']} without a reason")
            expect(r["latency_us"] is None and r["algbw_GBps"] is None, f"{r['name']}: numbers without ok status")
            continue
        expect(r["validated"] is True, f"{r['name']} not validated")
        lat = r["latency_us"]
        expect(all(k in lat for k in LAT), f"{r['name']} latency fields")
        expect(0 < lat["min"] <= lat["p50"] <= lat["p95"] <= lat["p99"] <= lat["max"], f"{r['name']} order {lat}")
        expect(lat["min"] <= lat["mean"] <= lat["max"], f"{r['name']} mean")
        parts = ctx["config"].get("sweeps", [ctx["config"]])
        if r["sampling"]["mode"] == "fixed":
            expect(r["iterations"] in {p["iterations"] for p in parts}, f"{r['name']} iterations {r['iterations']}")
        check_interval(r)
        check_submit(r)
        n = r["ranks"]
        per = r["bytes_per_rank"]
        if r["pattern"] == "alltoallv":  # uneven: S is the bytes the routing moves, busbw the share between ranks
            a = r["alltoallv"]
            expect(n == a["ranks"] == len(a["devices"]), f"{r['name']} ranks")
            expect(per == a["tokens_per_rank"] * a["token_bytes"], f"{r['name']} bytes_per_rank")
            moved = sum(map(sum, a["pair_tokens"])) * a["token_bytes"]
            expect(a["bytes_moved"] == moved, f"{r['name']} bytes_moved {a['bytes_moved']} != {moved} (pair_tokens)")
            want_s, factor = moved, a["peer_bytes"] / moved
        else:
            expect(n == len(r["devices"]), f"{r['name']} ranks")
            want_s = {"copy": per, "bidir": 2 * per, "allgather": n * per, "alltoall": n * per, "h2d": per, "d2h": per,
                      "d2d": per, "h2d-bidir": 2 * per, "host-to-all": n * per, "all-to-host": n * per}[r["pattern"]]
            factor = (n - 1) / n if r["pattern"] in ("allgather", "alltoall") else 1.0
        expect(r["bytes"] == want_s, f"{r['name']} bytes {r['bytes']} != {want_s}")
        alg = want_s / (lat["p50"] * 1e-6) / 1e9
        expect(abs(r["algbw_GBps"] - alg) <= 1e-9 * alg, f"{r['name']} algbw")
        expect(abs(r["busbw_GBps"] - alg * factor) <= 1e-9 * alg, f"{r['name']} busbw")
    return names


def check_submit(r):
    """An ok record's `breakdown` (the submit part, results/SCHEMA.md): inside its own interval, never longer than the
    samples it was taken in (host clock: each sample's submit is part of that sample), per descriptor consistent."""
    b, name = r.get("breakdown"), r["name"]
    expect(isinstance(b, dict), f"{name}: no breakdown")
    low, high = b["submit_interval_us"]
    expect(0 <= low <= b["submit_us"] <= high, f"{name}: submit {b['submit_us']} outside {low}..{high}")
    if r["clock"] == "host":
        expect(b["submit_us"] <= r["latency_us"]["p50"], f"{name}: submit {b['submit_us']} > p50 {r['latency_us']['p50']}")
    n = b["descriptors"]
    expect(n is None or (isinstance(n, int) and n >= 1), f"{name}: descriptors {n}")
    if n is None:
        expect(b["submit_per_descriptor_us"] is None, f"{name}: a per-descriptor figure without descriptors")
    else:
        expect(abs(b["submit_per_descriptor_us"] - b["submit_us"] / n) <= 1e-9 * b["submit_us"] + 1e-12, f"{name}: per descriptor")
    if r["engine"] == "host" and r["pattern"] in ("copy", "h2d", "d2h", "d2d") and r.get("layout", {}).get("blocks_per_op"):
        expect(n == r["layout"]["blocks_per_op"], f"{name}: {n} descriptors for {r['layout']['blocks_per_op']} blocks")


STOPS = {"adaptive": {"noise", "max_time", "max_samples"}, "fixed": {"iterations"}}


def check_interval(r):
    """An ok record's p50 interval, bandwidth intervals, noise, noisy and sampling, consistent with its figures."""
    lat, s, name = r["latency_us"], r["sampling"], r["name"]
    low, high = r["p50_interval_us"]
    expect(lat["min"] <= low <= lat["p50"] <= high <= lat["max"], f"{name}: p50 interval {low}..{high} around {lat}")
    factor = r["busbw_GBps"] / r["algbw_GBps"]
    for key, figure, scale in (("algbw_interval_GBps", "algbw_GBps", 1.0), ("busbw_interval_GBps", "busbw_GBps", factor)):
        lo, hi = r[key]
        expect(lo <= r[figure] and (hi is None or r[figure] <= hi), f"{name}: {key} {lo}..{hi} around {r[figure]}")
        expect(abs(lo - r["bytes"] / high / 1e3 * scale) <= 1e-9 * lo, f"{name}: {key} low end {lo} is not S / {high} us")
        expect(hi is None or abs(hi - r["bytes"] / low / 1e3 * scale) <= 1e-9 * hi, f"{name}: {key} high end {hi}")
    noise = max(lat["p50"] - low, high - lat["p50"]) / lat["p50"]
    expect(abs(r["noise"] - noise) <= 1e-9 * max(1.0, noise), f"{name}: noise {r['noise']}, its interval says {noise}")
    expect(r["noisy"] == (s["samples"] < 6 or r["noise"] > s["max_noise"]), f"{name}: noisy {r['noisy']} with {s}")
    expect(s["samples"] == r["iterations"] and s["mode"] in STOPS and s["stopped"] in STOPS[s["mode"]], f"{name}: {s}")
    if s["mode"] == "fixed":
        expect(s["min_samples"] is None and s["max_time_s"] is None, f"{name}: fixed sampling with adaptive settings {s}")
        return
    expect(s["min_samples"] <= s["samples"] <= s["max_samples"], f"{name}: {s['samples']} samples against {s}")
    expect({"noise": r["noise"] <= s["max_noise"] and s["seconds"] >= s["min_time_s"],
            "max_time": s["seconds"] >= s["max_time_s"],
            "max_samples": s["samples"] == s["max_samples"]}[s["stopped"]], f"{name}: stopped {s['stopped']} with {s}")


def quick_host(exe, configs, tmp):
    out = os.path.join(tmp, "quick.json")
    p = run(exe, "--config", f"{configs}/quick.json", "--backend", "host", "--out", out, check_rc=0)
    doc = json.load(open(out))
    check_results(doc, "host")
    cfg = json.load(open(f"{configs}/quick.json"))
    res = doc["results"]
    # every case of the sweep is recorded: patterns x engines x timings x sizes
    want = len(cfg["patterns"]) * len(cfg["engines"]) * len(cfg["timing"]) * len(cfg["sizes"])
    expect(len(res) == want, f"{len(res)} results, expected {want}")
    ok = [r for r in res if r["status"] == "ok"]
    expect({r["engine"] for r in ok} == {"host"}, "host engine results")
    expect({r["pattern"] for r in ok} == set(cfg["patterns"]), "every pattern ran")
    expect(len(ok) == len(cfg["patterns"]) * len(cfg["timing"]) * len(cfg["sizes"]), f"{len(ok)} ok")
    for r in res:
        if r["engine"] != "host":
            # engines of the build's GPU backend (cuda, or hip in a HIP build) are skipped on the host
            expect(r["status"] == "skipped" and ("cuda backend" in r["reason"] or "hip backend" in r["reason"]),
                   f"{r['name']}: {r['reason']}")
    expect("ok, " in p.stdout and "0 failed" in p.stdout, "summary line")
    # --list prints the same names and runs nothing
    out2 = os.path.join(tmp, "unused.json")
    p = run(exe, "--config", f"{configs}/quick.json", "--backend", "host", "--list", "--out", out2, check_rc=0)
    listed = [l.split()[0] for l in p.stdout.splitlines() if l and not l.startswith("#")]
    expect(sorted(listed) == sorted(r["name"] for r in res), "--list names match the results")
    expect(not os.path.exists(out2), "--list wrote results")
    # Google Benchmark's filter and repetitions still work
    out3 = os.path.join(tmp, "filtered.json")
    run(exe, "--config", f"{configs}/quick.json", "--backend", "host", "--out", out3,
        "--benchmark_filter=allgather/host/oneshot", "--benchmark_repetitions=2", check_rc=0)
    doc3 = json.load(open(out3))
    expect(len(doc3["results"]) == len(cfg["sizes"]), f"filter kept {len(doc3['results'])}")
    expect(all(r["iterations"] == 2 * cfg["iterations"] for r in doc3["results"]), "repetitions pool samples")
    # --benchmark_min_time lets Google Benchmark choose the sample count
    out4 = os.path.join(tmp, "mintime.json")
    run(exe, "--config", f"{configs}/quick.json", "--backend", "host", "--out", out4,
        "--benchmark_filter=copy/host/oneshot/.*/4KiB", "--benchmark_min_time=0.05", check_rc=0)
    r4 = json.load(open(out4))["results"]
    expect(len(r4) == 1 and r4[0]["status"] == "ok" and r4[0]["iterations"] >= 1, "min_time run")
    # --version and --features answer without a config
    expect("dmabench" in run(exe, "--version", check_rc=0).stdout, "--version")
    feats = run(exe, "--features", check_rc=0).stdout
    # the sdma platform block (issue 25): per GPU, PCIe 64-bit atomics (what sync=auto completes with), usable engines
    for word in ("backend host: available", "engines:", "host", "ce", "sm", "nccl", "patterns:", "sdma platform on host",
                 "GPU 0: PCIe 64-bit atomics to system memory: yes", "GPU 0: usable SDMA engines:"):
        expect(word in feats, f"--features lacks {word!r}")
    cpu_choice_host(exe, tmp)


def cpu_choice_host(exe, tmp):
    """--cpu-choice (bench/measure/cpu_choice.hpp): the samples run on an allowed CPU the record names, an affinity
    the user set with taskset is respected (the survey and the record name only that CPU), off records nothing."""
    args = ["-b", "4KiB", "-e", "16KiB", "-f", "4", "--patterns", "copy", "--engines", "host", "--backend", "host"]
    out = os.path.join(tmp, "choice.json")
    run(exe, *args, "--out", out, check_rc=0)
    doc = json.load(open(out))
    ctx = doc["context"]["cpu_choice"]
    allowed = sorted(os.sched_getaffinity(0))
    expect(ctx["mode"] == "quiet" and ctx["allowed"] == allowed, f"cpu_choice context {ctx}")
    expect(sorted(int(c) for c in ctx["first_survey"]) == allowed, f"the first survey {ctx['first_survey']}")
    for r in doc["results"]:
        c = r["cpu_choice"]
        expect(c["cpu"] in allowed and r["cpu"] == c["cpu"], f"{r['name']}: cpu_choice {c}, cpu {r['cpu']}")
        expect(c["samples"] == r["warmup"] + r["iterations"] and c["readings"] >= c["samples"], f"{r['name']}: {c}")
    if shutil.which("taskset") and len(allowed) > 1:
        last = allowed[-1]
        p = subprocess.run(["taskset", "-c", str(last), exe, *args, "--out", out], capture_output=True, text=True,
                           timeout=120)
        expect(p.returncode == 0, f"taskset run: {p.stderr[-2000:]}")
        doc = json.load(open(out))
        ctx = doc["context"]["cpu_choice"]
        expect(ctx["allowed"] == [last] and list(ctx["first_survey"]) == [str(last)], f"under taskset: {ctx}")
        expect(all(r["cpu_choice"]["cpu"] == last == r["cpu"] for r in doc["results"]), "a CPU outside taskset's")
    run(exe, *args, "--out", out, "--cpu-choice", "off", check_rc=0)
    doc = json.load(open(out))
    expect(doc["context"]["cpu_choice"]["mode"] == "off", "--cpu-choice off: context")
    expect(not any("cpu_choice" in r for r in doc["results"]), "--cpu-choice off: a record says cpu_choice")
    p = run(exe, *args, "--out", out, "--cpu-choice", "busy", check_rc=2)
    expect(p.stderr.count("\n") == 1 and "--cpu-choice: unknown mode 'busy'; accepted: quiet, off" in p.stderr, p.stderr)


def bad_input(exe, configs, tmp):
    def bad(config, fragments, *extra):
        path = os.path.join(tmp, "bad.json")
        with open(path, "w") as f:
            f.write(config if isinstance(config, str) else json.dumps(config))
        out = os.path.join(tmp, "never.json")
        p = run(exe, "--config", path, "--backend", "host", "--out", out, *extra, check_rc=2)
        for frag in fragments:
            expect(frag in p.stderr, f"stderr lacks {frag!r}: {p.stderr}")
        expect(len(p.stderr.strip().splitlines()) == 1, f"error is not one line: {p.stderr}")
        expect(not os.path.exists(out), "a results file was written for bad input")

    base = {"sizes": ["4KiB"], "engines": ["host"]}
    bad({**base, "iterationz": 3}, ["'iterationz'", "accepted"])
    bad({**base, "iterations": "3"}, ["iterations", "integer"])
    bad({**base, "sizes": ["4 parsecs"]}, ["sizes[0]", "4 parsecs"])
    bad({**base, "sizes": {"from": "1MiB", "to": "1KiB", "factor": 2}}, ["empty range"])
    bad({**base, "devices": [0, 99]}, ["host rank 99 does not exist"])
    bad({**base, "engines": ["warp"]}, ["'warp'", "accepted", "ce"])
    bad({**base, "patterns": ["broadcast"]}, ["'broadcast'", "allgather"])
    bad({**base, "overlap": {"compute": "fft"}}, ["overlap.compute", "\"gemm\"", "\"stream\""])
    bad({"sweeps": [{"sizes": "1KiB", "engines": ["host"]}, {"engines": ["host"]}]}, ["sizes", "missing", "(sweeps[1])"])
    # sampling: a fixed count and adaptive sampling exclude each other; each key in its range
    bad({**base, "iterations": 10, "max_time": 0.5}, ["iterations, max_time", "give one or the other"])
    bad({**base, "max_noise": 0}, ["max_noise", "a fraction above 0, at most 1"])
    bad({**base, "max_timed_bytes": "1GiB"}, ["max_timed_bytes", "give iterations with it"])
    # host memory and block layouts: a block larger than its pool, a NUMA node the machine lacks, blocks on
    # a pattern that moves parts of buffers, a host kind nobody has
    blocks = {"kind": "blocks", "block_bytes": "64KiB", "order": "random", "pool_bytes": "32KiB"}
    bad({**base, "patterns": ["d2h"], "layout": blocks}, ["layout.pool_bytes", "smaller than one block"])
    bad({**base, "patterns": ["d2h"], "host_memory": {"numa": 1000}}, ["host_memory.numa", "does not exist"])
    bad({**base, "patterns": ["allgather"], "layout": {"kind": "blocks", "block_bytes": "1KiB"}}, ["layout.kind", "allgather"])
    bad({**base, "patterns": ["h2d"], "host_memory": {"kind": "locked"}}, ["host_memory.kind", "pinned", "pageable"])
    bad("{not json", ["not valid JSON"])
    bad(base, ["unknown argument '--fast'"], "--fast")
    bad(base, ["--devices", "'a'"], "--devices", "a")
    bad(base, ["--backend", "accepted"], "--backend", "tpu")
    # hostile files: deep nesting crashed the JSON library; an endless file was read until killed
    deep = 60000
    bad('{"sizes":[' + "[" * deep + "]" * deep + "]}", ["nested more than 32 levels"])
    bad('{"sizes": 1, "sizes": 2}', ["appears twice"])
    bad('{"sizes": 1}\u0000\u0000', ["NUL byte"])
    p = run(exe, "--config", "/dev/zero", "--backend", "host", check_rc=2)
    expect("not a regular file (a device)" in p.stderr, p.stderr)
    bad(base, ["--devices", "''"], "--devices", "0,")
    bad(base, ["--power-window", "'nan'"], "--power-window", "nan")
    # rocm-smi without an AMD GPU (or without the library): one line, none of rsmi_init's own stderr lines
    bad(base, ["--power rocm-smi: not available"], "--power=rocm-smi")
    # Google Benchmark's flags are checked before anything is created: an existing --out survives
    keep = os.path.join(tmp, "keep.json")
    for flag in ("--benchmark_format=csv", "--benchmark_filter=copy(", "--benchmark_repetitions=-3",
                 "--benchmark_repetitions=0"):
        with open(keep, "w") as f:
            f.write('{"kept": true}')
        path = os.path.join(tmp, "ok.json")
        with open(path, "w") as f:
            json.dump(base, f)
        p = run(exe, "--config", path, "--backend", "host", "--out", keep, flag, check_rc=2)
        expect(flag.split("=")[0] in p.stderr, f"{flag}: {p.stderr}")
        with open(keep) as f:
            expect(f.read() == '{"kept": true}', f"{flag}: the existing --out was replaced")
    # the results file: never the config, a directory, a FIFO or a device; a symlink is resolved
    cfg = os.path.join(tmp, "ok.json")
    for target, why in ((cfg, "the --config file itself"), (tmp, "a directory"), ("/dev/null", "a device")):
        p = run(exe, "--config", cfg, "--backend", "host", "--out", target, check_rc=2)
        expect(why in p.stderr and len(p.stderr.strip().splitlines()) == 1, f"--out {target}: {p.stderr}")
    fifo = os.path.join(tmp, "fifo")
    os.mkfifo(fifo)
    p = run(exe, "--config", cfg, "--backend", "host", "--out", fifo, check_rc=2)
    expect("a FIFO" in p.stderr, p.stderr)
    real, link = os.path.join(tmp, "real.json"), os.path.join(tmp, "link.json")
    os.symlink(real, link)
    p = run(exe, "--config", cfg, "--backend", "host", "--out", link, check_rc=0)
    expect("is a symlink: writing its target" in p.stdout, p.stdout[-2000:])
    expect(os.path.islink(link) and os.path.isfile(real), "the symlink was replaced instead of written through")
    with open(real) as f:
        expect(json.load(f)["results"], "the symlink's target holds no results")
    expect(not os.path.exists(real + ".lock"), "the lock file was left behind")
    # a second run on the same --out refuses while the first holds its lock
    import fcntl
    held = os.path.join(tmp, "busy.json")
    with open(held + ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        p = run(exe, "--config", cfg, "--backend", "host", "--out", held, check_rc=2)
        expect("another dmabench run is writing it" in p.stderr, p.stderr)
        expect(not os.path.exists(held), "a results file was written while another run held the lock")
    p = run(exe, "--out", os.path.join(tmp, "x.json"), check_rc=2)
    expect("--config" in p.stderr, "missing --config")
    p = run(exe, "--config", "/nonexistent.json", check_rc=2)
    expect("cannot read" in p.stderr, p.stderr)


def host_8_ranks(exe, configs, tmp):
    cfg = {"sizes": ["1KiB", "1000", "256KiB"], "engines": ["host"], "devices": list(range(8)),
           "patterns": ["copy", "bidir", "allgather", "alltoall"],
           "iterations": 5, "warmup": 1, "pipeline_depth": 4, "in_place": [False, True]}
    doc = run_config(exe, tmp, "eight", cfg, "host")
    check_results(doc, "host")
    exchange = [r for r in doc["results"] if r["name"].startswith("alltoall-inplace/")]
    expect(len(exchange) == 6 and all(r["status"] == "skipped" and "only an engine that swaps" in r["reason"] for r in exchange),
           "the in-place alltoall is skipped by the host engine, with the reason")
    res = [r for r in doc["results"] if r not in exchange]
    # 4 patterns out of place + the all-gather in place, 2 timings, 3 sizes
    expect(len(res) == 5 * 2 * 3 and all(r["status"] == "ok" for r in res), "all 8-rank cases ok")
    in_place = [r for r in res if r["in_place"]]
    expect(len(in_place) == 6 and all(r["pattern"] == "allgather" and r["name"].startswith("allgather-inplace/")
                                      for r in in_place), "in-place all-gathers")
    for r in res:
        want = 2 if r["pattern"] in ("copy", "bidir") else 8
        expect(r["ranks"] == want, f"{r['name']} ranks {r['ranks']}")


OVERLAP_FIELDS = ["compute", "launches", "rounds", "compute_alone_ms", "compute_with_ms", "compute_slowdown_pct",
                  "compute_alone_ms_per_device", "compute_with_ms_per_device", "comm_alone_us", "comm_with_us",
                  "comm_with_p99_us", "comm_with_latency_us", "comm_slowdown_pct", "comm_with_samples",
                  "comm_samples_dropped", "comm_ops_with", "busbw_with_GBps", "overlap_efficiency", "validated", "clock"]


def check_overlap(r):
    o = r.get("overlap")
    expect(isinstance(o, dict) and "error" not in o, f"{r['name']}: overlap {o}")
    for f in OVERLAP_FIELDS:
        expect(f in o, f"{r['name']}: overlap lacks {f}")
    expect(o["validated"] is True, f"{r['name']}: not validated beside the workload")
    expect(o["comm_alone_us"] == r["latency_us"]["p50"], f"{r['name']}: comm_alone_us is not the case's p50")
    slow = (o["compute_with_ms"] / o["compute_alone_ms"] - 1) * 100
    expect(abs(o["compute_slowdown_pct"] - slow) < 1e-6, f"{r['name']}: compute slowdown arithmetic")
    expect(0.0 <= o["overlap_efficiency"] <= 1.0, f"{r['name']}: efficiency {o['overlap_efficiency']}")
    expect(o["comm_with_samples"] >= 1, f"{r['name']}: no sample beside the workload")
    expect(len(o["compute_alone_ms_per_device"]) == len(r["devices"]), f"{r['name']}: per-device times")


def overlap_host(exe, configs, tmp):
    cfg = {"name": "overlap-host", "patterns": ["allgather"], "engines": ["host"], "iterations": 10, "warmup": 1,
           "pipeline_depth": 4,
           "sweeps": [{"sizes": ["16KiB"], "timing": ["oneshot"],
                       "overlap": {"compute": "stream", "bytes": "8MiB", "duration_ms": 30, "rounds": 2}},
                      {"sizes": ["1MiB"], "timing": ["pipelined"],
                       "overlap": {"compute": "stream", "bytes": "8MiB", "duration_ms": 30, "rounds": 2}},
                      {"sizes": ["16KiB"], "timing": ["oneshot"], "overlap": {"compute": "gemm"}}]}
    doc = run_config(exe, tmp, "overlap", cfg, "host")
    check_results(doc, "host")
    expect(len(doc["context"]["config"]["sweeps"]) == 3, "the context records the three sweeps")
    res = {r["name"]: r for r in doc["results"]}
    expect(sorted(res) == ["allgather/host/oneshot/dev=0,1/16KiB/beside=gemm-bf16-8192x8192x8192",
                           "allgather/host/oneshot/dev=0,1/16KiB/beside=stream-8MiB",
                           "allgather/host/pipelined/dev=0,1/1MiB/beside=stream-8MiB"], f"names {sorted(res)}")
    gemm = res["allgather/host/oneshot/dev=0,1/16KiB/beside=gemm-bf16-8192x8192x8192"]
    expect(gemm["status"] == "skipped" and "needs a GPU backend" in gemm["reason"], f"gemm on host: {gemm['reason']}")
    for name, r in res.items():
        if "stream" in name:
            expect(r["status"] == "ok", f"{name}: {r['status']} {r['reason']}")
            check_overlap(r)


# Opcode (DW0 bits 7:0) of each packet name a dump lists; BROADCAST and SWAP are COPY (1) packets.
OPCODES = {"COPY_LINEAR": 1, "BROADCAST": 1, "SWAP": 1, "POLL_REGMEM": 8, "ATOMIC_ADD64": 10, "FENCE": 5, "NOP": 0,
           "TIMESTAMP_GLOBAL": 13, "CONST_FILL": 11, "TRAP": 6}
SIZES = {"COPY_LINEAR": 7, "BROADCAST": 9, "SWAP": 7, "POLL_REGMEM": 6, "ATOMIC_ADD64": 8, "FENCE": 4,
         "TIMESTAMP_GLOBAL": 3, "CONST_FILL": 5, "TRAP": 2}
ALLOWED_SKIPS = ("packet=swap with swap_alignment=64", "packet=swap with swap_alignment=none",
                 "packet=broadcast pairs two copies of one source")


def check_dump(r, dump):
    """A case's packet dump against its options: what the variant must emit, headers that match the names."""
    o = r["options"]
    expect(dump["case"] == r["name"] and dump["hardware_times"] is False, f"{r['name']}: dump header")
    names = []
    for q in dump["queues"]:
        dw = [int(x, 16) for x in q["dwords"]]
        at = 0
        for name in q["packets"]:  # walk the dwords by the packet sizes: every header has its packet's opcode
            expect(dw[at] & 0xFF == OPCODES[name], f"{r['name']}: {name} header 0x{dw[at]:08x} at dword {at}")
            at += SIZES[name] if name != "NOP" else ((dw[at] >> 16) & 0x3FFF) + 1
        expect(at == len(dw), f"{r['name']}: the packets cover {at} of {len(dw)} dwords")
        if o["trigger"] != "enqueue":
            expect(q["packets"][0] == "POLL_REGMEM", f"{r['name']}: pre-launch queue starts with {q['packets'][0]}")
        names += q["packets"]
    want = {"linear": "COPY_LINEAR", "broadcast": "BROADCAST", "swap": "SWAP"}[o["packet"]]
    expect(want in names, f"{r['name']}: no {want} packet")
    sync = r["engine_details"]["sync"]  # sync=auto resolved per GPU: ATOMIC where it has PCIe 64-bit atomics
    expect(sync in ("atomic", "fence") and (o["sync"] == "auto" or o["sync"] == sync), f"{r['name']}: sync {sync}")
    expect(("ATOMIC_ADD64" if sync == "atomic" else "FENCE") in names, f"{r['name']}: no sync packet")
    expect(names.count("POLL_REGMEM") == (0 if o["trigger"] == "enqueue" else r["engine_details"]["commands_per_operation"]),
           f"{r['name']}: one poll per command with pre-launch")


def sdma_host(exe, configs, tmp):
    out, dumps = os.path.join(tmp, "sdma.json"), os.path.join(tmp, "packets")
    p = subprocess.run([exe, "--config", os.path.join(configs, "sdma-host.json"), "--backend", "host", "--out", out,
                        "--packets", dumps], capture_output=True, text=True, timeout=900, cwd=os.path.dirname(configs))
    expect(p.returncode == 0, f"sdma-host exited {p.returncode}\n{p.stdout[-3000:]}\n{p.stderr[-3000:]}")
    with open(out) as f:
        doc = json.load(f)
    check_results(doc, "host")
    res = doc["results"]
    variants = {}
    for r in res:
        expect(r["engine"] == "sdma", r["name"])
        if r["status"] == "skipped":
            expect(r["reason"].startswith(ALLOWED_SKIPS), f"{r['name']}: skipped: {r['reason']}")
            continue
        expect(r["status"] == "ok", f"{r['name']}: {r['status']} {r['reason']}")
        expect(r["engine_details"]["hardware_times"] is False, f"{r['name']}: software times not marked")
        expect(r["engine_details"]["platform"]["platform"] == "software SDMA engine", r["name"])
        o = r["options"]
        key = (r["pattern"] + ("-inplace" if r["in_place"] else ""), o["packet"], o["schedule"], o["trigger"],
               r["engine_details"]["sync"], o["submit"])  # the sync used (sync=auto resolved)
        variants.setdefault(key, set()).add((r["ranks"], r["bytes_per_rank"]))
        name = "".join(ch if ch.isalnum() or ch in "-.=," else "_" for ch in r["name"])
        with open(os.path.join(dumps, name + ".json")) as f:
            check_dump(r, json.load(f))
    for key, seen in variants.items():
        ranks = {n for n, _ in seen}
        if key[0] == "copy":  # the 64 MiB part: 2 ranks, one size
            continue
        need = {4, 8} if key[0:2] == ("allgather-inplace", "broadcast") else {2, 4, 8}  # 2 ranks in place: no pair
        expect(need <= ranks, f"{key}: ranks {sorted(ranks)}")
        if key[1] != "swap":  # swap addresses keep bits 5:0 clear: odd blocks are skipped under both alignments
            expect(any(b % 2 == 1 for _, b in seen), f"{key}: no odd size")
    for want in ("linear", "broadcast", "swap"):
        expect(any(k[1] == want for k in variants), f"no {want} variant ran")
    for want in ("enqueue", "prelaunch", "gpu-flag"):
        expect(any(k[3] == want for k in variants), f"no trigger={want} variant ran")
    expect(any(k[5] == "gpu" for k in variants) and any(k[4] == "fence" for k in variants), "submit=gpu and sync=fence ran")
    expect(any(r["status"] == "ok" and r["bytes"] >= 64 << 20 for r in res), "a 64 MiB operation ran")
    odd_swaps = [r for r in res if r["options"]["packet"] == "swap" and r["bytes_per_rank"] % 2]
    expect(odd_swaps and all(r["status"] == "skipped" for r in odd_swaps), "odd swaps are skipped (SWAP address bits 5:0)")


def leftovers(out):
    """Files a run must not leave next to its results file."""
    d = os.path.dirname(out) or "."
    base = os.path.basename(out)
    return [f for f in os.listdir(d) if f.startswith(base + ".")]


def journal_lines(out):
    """Lines in OUT's journal so far; 0 where there is none (not yet, or the run ended and removed it, even between
    a look for it and its reading)."""
    try:
        with open(out + ".journal") as f:
            return sum(1 for _ in f)
    except FileNotFoundError:
        return 0


def host_sweep(tmp, name, **cfg):
    base = {"patterns": ["copy"], "engines": ["host"], "devices": [[0, 1]], "timing": "oneshot", "warmup": 0}
    base.update(cfg)
    path = os.path.join(tmp, name + ".json")
    with open(path, "w") as f:
        json.dump(base, f)
    return path, os.path.join(tmp, name + "-out.json")


def empty_run(exe, configs, tmp):
    """Issue 52: `--engines ce` without a GPU ran no case and exited 0, so a CI job on a runner whose driver broke went
    green. Now: exit 6 and a closing line with the most common skip reason; --allow-empty lets it pass."""
    out = os.path.join(tmp, "empty.json")
    sweep = ["-b", "4KiB", "-e", "16KiB", "-f", "2", "--patterns", "copy", "-n", "2", "--backend", "host", "--out", out]
    p = run(exe, *sweep, "--engines", "ce", check_rc=6)
    line = next((s for s in p.stdout.splitlines() if "nothing was measured" in s), "")
    expect(line.startswith("dmabench: nothing was measured: no case was ok (3 skipped); most often skipped: ") and
           "backend" in line and "(3 of 3); exit 6 (--allow-empty lets such a run pass)" in line, p.stdout[-2000:])
    with open(out) as f:
        expect([r["status"] for r in json.load(f)["results"]] == ["skipped"] * 3, "the skipped cases are recorded")
    p = run(exe, *sweep, "--engines", "ce", "--allow-empty", check_rc=0)
    expect("nothing was measured" in p.stdout and "--allow-empty: exit 0" in p.stdout, p.stdout[-2000:])
    p = run(exe, *sweep, "--engines", "ce,host", check_rc=0)  # one case ok is a measurement
    expect("nothing was measured" not in p.stdout, p.stdout[-2000:])
    p = run(exe, *sweep, "--engines", "ce", "--processes", "2", check_rc=6)  # the levels run decides as one run does
    expect("nothing was measured: no case was ok (3 skipped)" in p.stdout, p.stdout[-2000:])
    run(exe, *sweep, "--engines", "ce", "--processes", "2", "--allow-empty", check_rc=0)
    p = run(exe, *sweep, "--engines", "ce", "--allow-empty=yes", check_rc=2)
    expect("--allow-empty: takes no value" in p.stderr and len(p.stderr.strip().splitlines()) == 1, p.stderr)
    usage = run(exe, "--help").stdout
    expect("--allow-empty" in usage and "6 no case failed and none was ok" in usage, usage[-1500:])


def interrupted_run(exe, tmp, sig, name):
    """Starts a long sweep, signals it once its journal holds records, checks what it leaves."""
    import signal as signal_mod
    import time
    cfg, out = host_sweep(tmp, name, sizes=list(range(1 << 20, (1 << 20) + 3000)), iterations=3)
    p = subprocess.Popen([exe, "--backend", "host", "--config", cfg, "--out", out], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 60
    while time.time() < deadline:
        if journal_lines(out) > 3:
            break
        time.sleep(0.02)
    p.send_signal(getattr(signal_mod, sig))
    stdout, stderr = p.communicate(timeout=120)
    want = {"SIGINT": 130, "SIGTERM": 143}[sig]
    expect(p.returncode == want, f"{sig}: exit {p.returncode}, expected {want}\n{stdout[-2000:]}\n{stderr[-2000:]}")
    line = [l for l in stdout.splitlines() if "interrupted after" in l]
    expect(line and f"of 3000 cases; results in {out}" in line[0], f"{sig}: summary line {line}")
    n = int(line[0].split("interrupted after ")[1].split()[0])
    with open(out) as f:
        doc = json.load(f)
    expect(len(doc["results"]) == n and 0 < n < 3000, f"{sig}: {len(doc['results'])} records, summary says {n}")
    expect(all(r["status"] == "ok" for r in doc["results"]), f"{sig}: every recorded case finished")
    expect(leftovers(out) == [], f"{sig}: left {leftovers(out)}")


def timed_run(exe, cfg, out):
    """CPU seconds (user + system) of one run: the cost of its cases, less exposed than wall time to
    other work on the machine."""
    import resource
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    run(exe, "--backend", "host", "--config", cfg, "--out", out, check_rc=0)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def exit_codes(exe, configs, tmp):
    import signal as signal_mod
    import time
    cfg, out = host_sweep(tmp, "two", patterns=["allgather"], engines=["sdma", "host"], sizes=[4096], iterations=3)
    run(exe, "--backend", "host", "--config", cfg, "--out", out, check_rc=0)                       # 0
    env = dict(os.environ, DMABENCH_SOFT_SDMA_FAULT="unknown-opcode")
    p = subprocess.run([exe, "--backend", "host", "--config", cfg, "--out", out], capture_output=True, text=True,
                       env=env, timeout=120)
    expect(p.returncode == 1, f"a failed case: exit {p.returncode}")                                 # 1
    with open(out) as f:
        st = {r["engine"]: r for r in json.load(f)["results"]}
    expect(st["sdma"]["status"] == "failed" and "unknown opcode 0x03" in st["sdma"]["reason"] and
           st["host"]["status"] == "ok", f"failed and ok cases recorded: {st}")
    p = run(exe, "--backend", "host", "--config", cfg, "--devices", "0,,1", "--out", out, check_rc=2)  # 2
    expect("--devices" in p.stderr, p.stderr)
    import resource                                                                                 # 3

    def small_files():  # an I/O error once the run goes: no file may grow past 2 KiB (the journal's header is larger)
        signal_mod.signal(signal_mod.SIGXFSZ, signal_mod.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (2048, 2048))
    p = subprocess.run([exe, "--backend", "host", "--config", cfg, "--out", out], capture_output=True, text=True,
                       preexec_fn=small_files, timeout=120)
    expect(p.returncode == 3 and "fatal: cannot" in p.stderr and ".journal" in p.stderr, f"{p.returncode}: {p.stderr}")
    expect(leftovers(out) == [], f"an I/O error left {leftovers(out)}")
    slow, slow_out = host_sweep(tmp, "slow", sizes=["256MiB", "1KiB"], iterations=20)                # 4
    p = run(exe, "--backend", "host", "--config", slow, "--out", slow_out, "--case-timeout", "0.05", check_rc=4)
    expect("still running after 0.05 s" in p.stderr, p.stderr)
    with open(slow_out) as f:
        res = json.load(f)["results"]
    expect(len(res) == 1 and res[0]["status"] == "failed" and res[0]["reason"].startswith("timeout:"), f"timeout record {res}")
    expect(leftovers(slow_out) == [], f"timeout left {leftovers(slow_out)}")
    interrupted_run(exe, tmp, "SIGINT", "int")                                                      # 130
    interrupted_run(exe, tmp, "SIGTERM", "term")                                                    # 143
    # kill -9: no finished case lost: every one is in the journal, which the Python reader reads
    cfg9, out9 = host_sweep(tmp, "kill", sizes=list(range(1 << 20, (1 << 20) + 3000)), iterations=3)
    p = subprocess.Popen([exe, "--backend", "host", "--config", cfg9, "--out", out9], stdout=subprocess.DEVNULL)
    deadline = time.time() + 60
    while time.time() < deadline and journal_lines(out9) <= 20:
        time.sleep(0.02)
    p.send_signal(signal_mod.SIGKILL)
    p.wait()
    lines = open(out9 + ".journal").read().splitlines()
    expect(json.loads(lines[0])["schema"] == "dmabench-journal/1", "journal header")
    with open(out9) as f:
        in_file = len(json.load(f)["results"])
    expect(0 < in_file <= len(lines) - 1, f"results file {in_file} records, journal {len(lines) - 1}")
    # cost per case independent of the cases done; the first case soon after a 16k-case expansion
    # the same 500 cases (125 sizes, 2 patterns, 2 timings) on 1 and on 8 rank pairs
    tiny = dict(patterns=["copy", "allgather"], timing=["oneshot", "pipelined"], pipeline_depth=2, sizes=list(range(1, 126)),
                iterations=1)
    c500, o500 = host_sweep(tmp, "c500", devices=[[0, 1]], **tiny)
    c4k, o4k = host_sweep(tmp, "c4k", devices=[[0, 1], [1, 0], [0, 2], [2, 0], [1, 2], [2, 1], [0, 3], [3, 0]], **tiny)
    t500 = t4k = float("inf")
    for _ in range(4):  # interleaved, so that both see the same machine; the best of each
        t500 = min(t500, timed_run(exe, c500, o500))
        t4k = min(t4k, timed_run(exe, c4k, o4k))
    print(f"500 cases {t500:.3f} CPU s, 4000 cases {t4k:.3f} CPU s: {t4k / t500:.2f}x (linear: 8x)")
    # The cost per case is flat, and start-up is only a few ms, so a linear program sits at 8x; run-to-run
    # noise on this 2-core machine is 10-20%, so the check allows 25% above linear (the quadratic cost this
    # replaced was 38x). The figure itself is printed and reported, not rounded into the target.
    expect(t4k <= 8 * 1.25 * t500, f"4000 cases took {t4k:.2f} CPU s, more than 8 x 1.25 x {t500:.3f} s: not linear")
    c16k, o16k = host_sweep(tmp, "c16k", patterns=["copy", "allgather"], timing=["oneshot", "pipelined"],
                            pipeline_depth=2, sizes=list(range(1, 4001)), iterations=1)
    c4, o4 = host_sweep(tmp, "c4", patterns=["copy", "allgather"], timing=["oneshot", "pipelined"], pipeline_depth=2,
                        sizes=[1], iterations=1)

    def first_recorded(config, out):
        for f in (out, out + ".journal"):
            if os.path.exists(f):
                os.remove(f)
        t0 = time.time()
        p = subprocess.Popen([exe, "--backend", "host", "--config", config, "--out", out], stdout=subprocess.DEVNULL)
        while journal_lines(out) < 2:
            # A short run can end, and remove its journal, between two looks (the 4-case run on a 16-core GPU
            # machine did): its end bounds its first record from above, late by its last 3 cases (1-byte copies).
            if p.poll() is not None:
                expect(p.returncode == 0 and os.path.exists(out), f"the run ended with exit {p.returncode} before "
                       "its journal held a case")
                break
            expect(time.time() - t0 < 30, "no case recorded within 30 s")
            time.sleep(0.005)
        first = time.time() - t0
        p.send_signal(signal_mod.SIGINT)
        p.wait(timeout=120)
        return first

    # What 16000 cases add before the first is recorded, over a run of 4 (the process's own start-up, the CPU survey
    # and the first case are in both): interleaved, the best of 3 each. The CI machine once took 1.09 s for the
    # 16000-case run alone, against an absolute limit of 1.0 s that also held the fixed start-up.
    f4 = f16k = float("inf")
    for _ in range(3):
        f4 = min(f4, first_recorded(c4, o4))
        f16k = min(f16k, first_recorded(c16k, o16k))
    print(f"16000 cases: the first recorded {f16k:.2f} s after start; 4 cases: {f4:.2f} s")
    expect(f16k - f4 < 1.0, f"16000 cases delayed the first record by {f16k - f4:.2f} s over 4 cases ({f16k:.2f} s)")


def gpu_skip_rule(r, ngpu, built):
    """The part of the reason a GPU case must be skipped with, by the engines' own rules, or None (it must run):
    an engine this build lacks; a two-GPU pattern on one GPU; host-memory endpoints for an engine that cannot
    take them (sm loads and stores only mapped host memory; nccl moves device buffers only)."""
    if r["engine"] not in built:  # e.g. nccl in a HIP build without RCCL
        return ""
    if ngpu < 2 and r["pattern"] in ("copy", "bidir"):
        return "cannot run on 1 GPU(s)"
    host = r.get("host_memory")
    if host:
        if r["engine"] == "sm" and host["kind"] != "mapped":
            return "needs host kind mapped"
        if r["engine"] == "nccl":
            return "host-memory endpoints are not a collective"
    return None


def gpu(exe, configs, tmp):
    feats = run(exe, "--features").stdout
    backend = next((b for b in ("cuda", "hip") if f"backend {b}: available" in feats), None)
    if backend is None:
        print("no GPU: skipped")
        sys.exit(SKIP)
    cfg = {"sizes": ["1KiB", "1001", "1MiB", "64MiB"], "engines": ["ce", "sm", "nccl"], "devices": "all",
           "iterations": 10, "warmup": 2, "pipeline_depth": 5}
    doc = run_config(exe, tmp, "gpu", cfg, backend)
    check_results(doc, backend)
    res = doc["results"]
    ngpu = len(doc["context"]["machine"]["devices"])
    built = {e for e in ("ce", "sm", "nccl") if f"  {e:<5} [{backend}] {backend}: not built" not in feats}
    for r in res:
        why = gpu_skip_rule(r, ngpu, built)
        if why is None:
            expect(r["status"] == "ok", f"{r['name']}: {r['status']} {r['reason']}")
        else:
            expect(r["status"] == "skipped" and why in r["reason"], f"{r['name']}: {r['status']} {r['reason']} "
                   f"(expected skipped: ...{why}...)")
    expect({r["engine"] for r in res if r["status"] == "ok"} == built, "every built GPU engine ran")
    # one case beside a GEMM through the program (skipped with the reason where the build has no BLAS)
    cfg = {"sizes": ["1MiB"], "patterns": ["allgather"], "engines": ["ce"], "timing": ["oneshot"], "devices": "all",
           "iterations": 10, "warmup": 2,
           "overlap": {"compute": "gemm", "m": 4096, "n": 4096, "k": 4096, "duration_ms": 20, "rounds": 2}}
    (r,) = run_config(exe, tmp, "gpu-gemm", cfg, backend)["results"]
    if r["status"] == "skipped":
        expect("GEMM" in r["reason"], f"{r['name']}: {r['reason']}")
    else:
        expect(r["status"] == "ok", f"{r['name']}: {r['status']} {r['reason']}")
        check_overlap(r)


def table_rows(stdout):
    """The console table's rows after its header, in the order of the results file (one per case)."""
    lines = stdout.splitlines()
    start = next((i for i, l in enumerate(lines) if "p50" in l and "busbw GB/s" in l), None)
    expect(start is not None, f"no table header:\n{stdout[-2000:]}")
    return [l for l in lines[start + 1:] if re.match(r"^ *[0-9.]+ (B|KiB|MiB|GiB|TiB)  ", l)]


def table_noise(fraction):
    """The table's "+- 1.2%" figure of a record's noise (bench/output/case_table.cpp format_noise)."""
    pct = fraction * 100
    return "inf%" if pct == float("inf") else f"{pct:.1f}%" if pct < 9.95 else f"{pct:.0f}%"


def adaptive_host(exe, configs, tmp):
    """A config without iterations: every case sampled by the adaptive rule, each record consistent (check_interval),
    the console's rows (one per case, in the results' order) with their samples, the p50's interval and "noisy"
    where the record is."""
    base = {"name": "adaptive", "patterns": ["copy", "allgather"], "engines": ["host"], "sizes": ["4KiB", "256KiB"],
            "timing": ["oneshot", "pipelined"], "warmup": 2, "pipeline_depth": 4, "min_samples": 12, "max_time": 0.2,
            "max_samples": 4000}
    out = os.path.join(tmp, "adaptive-out.json")
    for max_noise in (0.5, 1e-6):  # loose: most stop on noise; impossibly tight: cases run out of time or samples
        path = os.path.join(tmp, "adaptive.json")
        with open(path, "w") as f:
            json.dump({**base, "max_noise": max_noise}, f)
        p = run(exe, "--config", path, "--backend", "host", "--out", out, check_rc=0)
        doc = json.load(open(out))
        check_results(doc, "host")
        expect(doc["context"]["config"]["sampling"] == {"mode": "adaptive", "max_noise": max_noise, "min_samples": 12,
                                                        "min_time": 0, "max_time": 0.2, "max_samples": 4000},
               f"context.config.sampling {doc['context']['config']['sampling']}")
        ok = [r for r in doc["results"] if r["status"] == "ok"]
        expect(len(ok) == 8 and all(r["sampling"]["mode"] == "adaptive" for r in ok), f"{len(ok)} ok adaptive cases")
        stops = {r["sampling"]["stopped"] for r in ok}
        # Impossibly tight is still met where a case's interval collapses to noise 0 (one clock tick): allowed, checked.
        expect("noise" in stops if max_noise == 0.5 else bool(stops & {"max_time", "max_samples"}),
               f"max_noise {max_noise}: stopped {stops}")
        expect(all(r["noise"] <= max_noise for r in ok if r["sampling"]["stopped"] == "noise"),
               f"max_noise {max_noise}: a case stopped on noise above it")
        rows = table_rows(p.stdout)
        expect(len(rows) == len(doc["results"]), f"{len(rows)} table rows for {len(doc['results'])} cases:\n{p.stdout[-3000:]}")
        for r, row in zip(doc["results"], rows):
            if r["status"] != "ok":
                continue
            expect(row.rstrip().endswith(" noisy") == r["noisy"], f"{r['name']}: noisy {r['noisy']}, row {row!r}")
            expect(f" {r['iterations']} " in row, f"{r['name']}: {r['iterations']} samples, row {row!r}")
            expect(f"+- {table_noise(r['noise']):>6}" in row, f"{r['name']}: noise {r['noise']}, row {row!r}")
    # Google Benchmark's repetitions keep its own loop: the config's default count per repetition, fixed.
    p = run(exe, "--config", path, "--backend", "host", "--out", out, "--benchmark_filter=copy/host/oneshot",
            "--benchmark_repetitions=2", check_rc=0)
    doc = json.load(open(out))
    expect(len(doc["results"]) == 2, f"{len(doc['results'])} cases")
    for r in doc["results"]:
        check_interval(r)
        expect(r["sampling"]["mode"] == "fixed" and r["iterations"] == 200, f"{r['name']}: {r['sampling']}")
    rows = table_rows(p.stdout)  # the library's fixed count per repetition: 2 x 100 samples per row
    expect(len(rows) == 2 and all(" 200 " in row for row in rows), p.stdout[-2000:])


def shrink_for_ci(cfg):
    """configs/host.json and kv-offload.json as CI runs them on the host backend: the same parts, patterns,
    engines, kinds and orders, with sizes up to 1 MiB, blocks up to 64 KiB and at most 256 of them."""
    small = {"4KiB": 1, "16KiB": 1, "32KiB": 1, "64KiB": 1}
    for part in cfg.get("sweeps", [cfg]):
        if "sizes" in part:
            part["sizes"] = {"from": "4KiB", "to": "1MiB", "factor": 16}
        lay = part.get("layout")
        if isinstance(lay, dict) and lay.get("kind") == "blocks":
            sizes = lay["block_bytes"] if isinstance(lay["block_bytes"], list) else [lay["block_bytes"]]
            lay["block_bytes"] = [b for b in sizes if b in small] or ["4KiB"]
            counts = lay["blocks"] if isinstance(lay["blocks"], list) else [lay["blocks"]]
            lay["blocks"] = sorted({min(n, 256) for n in counts})
            if "stride_bytes" in lay:
                lay["stride_bytes"] = "64KiB"
    cfg["iterations"], cfg["warmup"] = 3, 1
    cfg.pop("max_timed_bytes", None)
    cfg.pop("min_iterations", None)
    return cfg


def host_configs(exe, configs, tmp):
    """configs/host.json and configs/kv-offload.json on the host backend (smaller sizes): every host pattern,
    host kind and block order validated by the engines the host backend runs (host; sdma on the software
    SDMA engine), the GPU engines skipped for their backend, remote NUMA skipped on a one-node machine."""
    for name in ("host", "kv-offload"):
        cfg = shrink_for_ci(json.load(open(os.path.join(configs, f"{name}.json"))))
        doc = run_config(exe, tmp, name, cfg, "host")
        check_results(doc, "host")
        res = doc["results"]
        one_node = len(doc["context"]["machine"].get("numa_nodes", [0])) <= 1
        ran = set()
        for r in res:
            if r["engine"] not in ("host", "sdma"):
                expect(r["status"] == "skipped" and "backend" in r["reason"], f"{r['name']}: {r['status']} {r['reason']}")
                continue
            if r["status"] == "skipped" and one_node and "numa=remote" in r["name"]:
                expect("one NUMA node" in r["reason"], r["reason"])
                continue
            expect(r["status"] == "ok", f"{r['name']}: {r['status']} {r['reason']}")
            h = r["host_memory"]
            expect(h["verified"] is True and all(b["verified"] for b in h["buffers"]), f"{r['name']}: placement {h}")
            if r["layout"]["kind"] == "blocks":
                expect(abs(r["per_block_us"] - r["latency_us"]["p50"] / r["layout"]["blocks_per_op"]) < 1e-9, r["name"])
                ran.add((r["pattern"], r["engine"], r["layout"]["order"], h["kind"]))
            else:
                ran.add((r["pattern"], r["engine"], "contiguous", h["kind"]))
        if name == "host":
            want = {(p, e, "contiguous", k) for p in cfg["patterns"] for e in ("host", "sdma")
                    for k in ("pinned", "mapped", "registered", "pageable")}
        else:
            want = {(p, e, o, k) for p in ("d2h", "h2d") for e in ("host", "sdma") for o in ("random", "strided")
                    for k in ("pinned", "mapped")}
        expect(want <= ran, f"{name}: never ran ok: {sorted(want - ran)}")
        print(f"{name}: {sum(r['status'] == 'ok' for r in res)} ok, {len(res)} cases")


def moe_host(exe, configs, tmp):
    """configs/moe.json scaled down on the host backend (issue 34): every part (DeepSeek-V3 and Mixtral shapes, decode
    and prefill, uniform and Zipf routing, the bundled trace), both directions and layouts, on 8 host ranks with the
    host engine and the software SDMA engine (pcpy, b2b); every token validated, the figures consistent with the
    routing, the GPU engines skipped for their backend. The planted misrouted token is tests/test_alltoallv.cpp."""
    cfg = json.load(open(os.path.join(configs, "moe.json")))
    for part in cfg["sweeps"]:
        a = part["alltoallv"]
        a["tokens_per_rank"] = {(1, 4, 16, 64, 256): [1, 4, 16], (4096, 8192, 16384): [64]}.get(
            tuple(a["tokens_per_rank"]) if isinstance(a["tokens_per_rank"], list) else (), a["tokens_per_rank"])
        if isinstance(a.get("splits"), str) and a["splits"].startswith("file:"):  # read from the config's folder
            a["splits"] = "file:" + os.path.join(configs, a["splits"][len("file:"):])
    cfg["devices"] = list(range(8))
    cfg["iterations"], cfg["warmup"] = 3, 1
    cfg.pop("max_time", None)
    doc = run_config(exe, tmp, "moe", cfg, "host")
    check_results(doc, "host")
    res = doc["results"]
    ran, skew = set(), {}
    for r in res:
        if r["engine"] not in ("host", "sdma"):
            expect(r["status"] == "skipped" and "backend" in r["reason"], f"{r['name']}: {r['status']} {r['reason']}")
            continue
        expect(r["status"] == "ok" and r["validated"] is True, f"{r['name']}: {r['status']} {r['reason']}")
        a = r["alltoallv"]
        sched = r["options"].get("schedule", "")
        ran.add((a["splits"], a["direction"], a["tokens"], r["engine"] + sched))
        h = a["heaviest_pair"]
        expect(h["validated"] is True and h["p50_us"] > 0, f"{r['name']}: heaviest pair {h}")
        expect(abs(h["share"] - h["p50_us"] / r["latency_us"]["p50"]) < 1e-9, f"{r['name']}: share {h}")
        expect(h["bytes"] == max(max(row) for row in a["pair_tokens"]) * a["token_bytes"], f"{r['name']}: heaviest {h}")
        dest = [sum(row[d] for row in a["pair_tokens"]) * a["token_bytes"] for d in range(a["ranks"])]
        expect(dest == a["dest_bytes"], f"{r['name']}: dest_bytes")
        expect(abs(a["imbalance"] - max(dest) / (sum(dest) / len(dest))) < 1e-9, f"{r['name']}: imbalance")
        if a["splits"] != "file" and a["direction"] == "dispatch" and a["tokens_per_rank"] >= 64:
            skew.setdefault((a["experts"], a["tokens_per_rank"]), {})[a["splits"]] = a["imbalance"]
    want = {(s, d, t, e) for s in ("uniform", "zipf", "file") for d in ("dispatch", "combine")
            for t in ("packed", "scattered") for e in ("host", "sdmapcpy", "sdmab2b")}
    expect(want <= ran, f"never ran ok: {sorted(want - ran)}")
    for key, imb in skew.items():  # Zipf 1.2 loads some ranks more than uniform routing does
        expect(imb["zipf"] > imb["uniform"], f"{key}: zipf imbalance {imb['zipf']} <= uniform {imb['uniform']}")
    steps = {r["alltoallv"]["step"] for r in res if r["status"] == "ok" and r["alltoallv"]["splits"] == "file"}
    expect(steps == {0, 1, 2, 3}, f"trace steps {steps}")
    print(f"moe: {sum(r['status'] == 'ok' for r in res)} ok, {len(res)} cases")
    # the config as shipped, listed for 8 GPUs: every part, one rank per GPU
    p = run(exe, "--config", os.path.join(configs, "moe.json"), "--list", "--backend", "host", "--devices", "0,1,2,3,4,5,6,7",
            check_rc=0)
    names = [n for n in p.stdout.splitlines() if n.startswith("alltoallv/")]
    expect(len(names) == 840 and all("/dev=0,1,2,3,4,5,6,7/" in n and ",ranks=" not in n for n in names),
           f"moe.json --list on 8 GPUs: {len(names)} cases, e.g. {names[:2]}")


def crossover_host(exe, configs, tmp):
    """The crossover map (configs/crossover.json) on a small grid on the host backend, in 2 processes: host and the
    software sdma engine run every cell validated, the GPU mechanisms skip with the reason; scripts/crossover.py
    reads the levels file into fits, a decision table with SM costs, and refuses bad input in one line."""
    with open(os.path.join(configs, "crossover.json")) as f:
        cfg = json.load(f)
    cfg["iterations"] = 5
    cfg["sweeps"] = [{"name": "small", "layout": {"kind": "blocks", "block_bytes": ["4KiB", "8KiB", "12KiB", "16KiB"],
                                                  "blocks": [1, 16, 64], "order": "random"}}]
    path, out = os.path.join(tmp, "crossover.json"), os.path.join(tmp, "crossover-out.json")
    with open(path, "w") as f:
        json.dump(cfg, f)
    run(exe, "--config", path, "--backend", "host", "--processes", "2", "--out", out, check_rc=0)
    with open(out) as f:
        res = json.load(f)["results"]
    cells = set()
    for r in res:
        if r["engine"] not in ("host", "sdma"):
            expect(r["status"] == "skipped" and "backend" in r["reason"], f"{r['name']}: {r['status']} {r['reason']}")
            continue
        expect(r["status"] == "ok" and r["validated"] is True, f"{r['name']}: {r['status']} {r['reason']}")
        expect(r["levels"]["processes"] == 2, f"{r['name']}: levels {r['levels']}")
        cells.add((r["pattern"], r["layout"]["block_bytes"], r["layout"]["blocks_per_op"]))
    expect(len(cells) == 3 * 4 * 3, f"cells run: {sorted(cells)}")
    script = os.path.join(configs, "..", "scripts", "crossover.py")
    report = os.path.join(tmp, "crossover-report.json")
    p = run(sys.executable, script, out, "--json", report, check_rc=0)
    expect("Who wins" in p.stdout, f"crossover.py printed no decision table:\n{p.stdout[:2000]}")
    with open(report) as f:
        doc = json.load(f)
    groups = {g["pattern"]: g for g in doc["groups"]}
    expect(set(groups) == {"h2d", "d2h", "d2d"}, f"groups {sorted(groups)}")
    for g in groups.values():
        expect(len(g["mechanisms"]) == 3, f"{g['title']}: mechanisms {g['mechanisms']}")
        expect(len(g["cells"]) == 12 and all(c.get("winner") or c.get("tie") for c in g["cells"]), f"{g['title']}: cells")
        expect(all(f.get("per_desc_us") is not None for f in g["fits"]), f"{g['title']}: fits {g['fits']}")
    for bad in (["--knee", "0"], [path + ".missing"]):
        p = run(sys.executable, script, *([out] if bad[0].startswith("--") else []), *bad)
        lines = p.stderr.strip().splitlines()
        expect(p.returncode == 2 and len(lines) == 1 and "Traceback" not in p.stderr, f"crossover.py {bad}: {p.returncode} {p.stderr}")
    # the preset: the shipped config by name, listed by --presets
    p = run(exe, "crossover", "--list", "--backend", "host", check_rc=0)
    expect(sum(1 for n in p.stdout.splitlines() if "/blocks=" in n) > 5000, "dmabench crossover --list: too few cases")
    p = run(exe, "--presets", check_rc=0)
    expect(any(line.split()[:1] == ["crossover"] for line in p.stdout.splitlines()), f"--presets:\n{p.stdout}")
    print(f"crossover: {len(cells)} cells on host and sdma, {len(res)} cases")


def main():
    exe, configs, mode = sys.argv[1], sys.argv[2], sys.argv[3]
    with tempfile.TemporaryDirectory() as tmp:
        {"quick-host": quick_host, "bad-input": bad_input, "host-8-ranks": host_8_ranks, "overlap-host": overlap_host,
         "sdma-host": sdma_host, "exit-codes": exit_codes, "empty-run": empty_run, "gpu": gpu, "host-configs": host_configs,
         "adaptive-host": adaptive_host, "moe-host": moe_host,
         "crossover-host": crossover_host}[mode](exe, configs, tmp)
    print(f"PASS {mode}")


if __name__ == "__main__":
    main()
