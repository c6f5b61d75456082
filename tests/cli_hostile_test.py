#!/usr/bin/env python3
"""Inputs that broke the program's contract (issue 40), on the host backend (registered with ctest as cli_hostile_host).

usage: cli_hostile_test.py DMABENCH

- a routing trace 100,000 levels deep, one holding a 1 MB string, one naming a key twice: exit 2, one line of at most
  a few hundred characters (the 100,000-deep one crashed with SIGSEGV, `--list` too);
- `zipf:10` with top-64 of 256 experts is generated (it was an internal error, exit 3);
- top-1024 of 65536 experts under zipf 2 (23 s for `--list` at 64 tokens once) is generated in seconds; routings whose
  generation or tables are past the bounds (the same on 8 ranks x 256 tokens; 64 ranks x 2^20 tokens, top-64) are
  skipped at once with the reason, in `--list` and in a run, and never exhaust memory;
- SIGINT while a heavy routing is being generated ends the program within a second (exit 130, nothing written);
- a --check reference whose p50 and algbw were made 10x faster with their intervals left: exit 2 naming the record
  and the field, --out untouched;
- arguments of 100 KB and file contents of a megabyte never make an error line of more than a few hundred characters, and a
  newline in a value cannot start a line of its own;
- on a machine without a GPU driver, --features says so in those words, once.
"""
import json
import os
import signal
import subprocess
import sys
import tempfile
import time

from driver_common import expect

LINE_MAX = 700


def run(exe, *args, rc=None, timeout=120):
    p = subprocess.run([exe, *args], capture_output=True, text=True, timeout=timeout)
    if rc is not None and p.returncode != rc:
        sys.exit(f"FAIL: {' '.join(a[:80] for a in args)} exited {p.returncode}, expected {rc}\n{p.stdout[-2000:]}\n{p.stderr[-2000:]}")
    return p


def one_short_line(p, words, what):
    lines = p.stderr.strip().splitlines()
    expect(len(lines) == 1, f"{what}: one line, got {len(lines)}: {p.stderr[:500]!r}")
    expect(len(lines[0]) <= LINE_MAX, f"{what}: a line of {len(lines[0])} characters")
    for w in words:
        expect(w in lines[0], f"{what}: {w!r} not in {lines[0]!r}")


def write(tmp, name, text):
    path = os.path.join(tmp, name)
    with open(path, "w") as f:
        f.write(text)
    return path


def moe_config(tmp, name, **alltoallv):
    cfg = {"patterns": ["alltoallv"], "engines": ["host"], "devices": [[0, 1]], "iterations": 2, "alltoallv": alltoallv}
    return write(tmp, name + ".json", json.dumps(cfg))


def traces(exe, tmp):
    for name, text, words in (("deep", "[" * 100000 + "]" * 100000, ["nested more than 32 levels deep"]),
                              ("long", '[["' + "x" * (1 << 20) + '", 1], [1, 1]]', ["more bytes)"]),
                              ("twice", '{"steps": [[[1, 1], [1, 1]]], "steps": [[[2, 2], [2, 2]]]}', ["appears twice"])):
        write(tmp, name + "-trace.json", text)
        cfg = moe_config(tmp, name, splits=f"file:{name}-trace.json", tokens_per_rank=4)
        for extra in (["--list"], ["--out", os.path.join(tmp, name + "-out.json")]):
            p = run(exe, "--backend", "host", "--config", cfg, *extra, rc=2)
            one_short_line(p, ["alltoallv.splits"] + words, f"trace {name} {extra[0]}")
        expect(not os.path.exists(os.path.join(tmp, name + "-out.json")), f"trace {name}: --out untouched")


def routings(exe, tmp):
    cfg = moe_config(tmp, "zipf10", splits="zipf:10", topk=64, experts=256, tokens_per_rank=16)
    out = os.path.join(tmp, "zipf10-out.json")
    run(exe, "--backend", "host", "--config", cfg, "--out", out, rc=0)
    r = json.load(open(out))["results"][0]
    expect(r["status"] == "ok" and r["validated"], f"zipf:10 top-64 of 256: {r['status']} {r['reason']}")
    cfg = moe_config(tmp, "wide", splits="zipf:2", topk=1024, experts=65536, tokens_per_rank=64)  # 23 s once: fast now
    t0 = time.time()
    p = run(exe, "--backend", "host", "--config", cfg, "--list", rc=0, timeout=60)
    expect(time.time() - t0 < 10 and "#   will skip:" not in p.stdout, f"top-1024 of 65536: {time.time() - t0:.1f} s, {p.stdout[:300]}")
    for name, a in (("wider", dict(splits="zipf:2", topk=1024, experts=65536, tokens_per_rank=256, ranks=8)),
                    ("huge", dict(splits="uniform", topk=64, experts=64 * 256, tokens_per_rank=1 << 20, ranks=64))):
        cfg = moe_config(tmp, name, **a)
        t0 = time.time()
        p = run(exe, "--backend", "host", "--config", cfg, "--list", rc=0, timeout=60)
        expect(time.time() - t0 < 10, f"{name}: --list took {time.time() - t0:.1f} s")
        expect("#   will skip: " in p.stdout and ("draws" in p.stdout or "GiB of host memory" in p.stdout), f"{name}: {p.stdout[:600]}")
        out = os.path.join(tmp, name + "-out.json")
        run(exe, "--backend", "host", "--config", cfg, "--out", out, "--allow-empty", rc=0, timeout=60)  # all skipped
        r = json.load(open(out))["results"][0]
        expect(r["status"] == "skipped" and "routing" in r["reason"], f"{name}: {r['status']}: {r['reason']}")


def catches_sigint(pid, timeout=20):
    """Waits until the process has its SIGINT handler installed (/proc/PID/status SigCgt)."""
    end = time.time() + timeout
    while time.time() < end:
        try:
            for line in open(f"/proc/{pid}/status"):
                if line.startswith("SigCgt:") and int(line.split()[1], 16) & (1 << (signal.SIGINT - 1)):
                    return
        except FileNotFoundError:
            return  # gone: the caller sees its exit code
        time.sleep(0.02)
    raise AssertionError(f"process {pid} did not install a SIGINT handler within {timeout} s")


def interrupted_generation(exe, tmp):
    # zipf 4 over 4096 experts, top-64: every token runs out of redraws and takes the last pass (a few seconds in all)
    cfg = moe_config(tmp, "slow", splits="zipf:4", topk=64, experts=4096, tokens_per_rank=2048, ranks=8)
    out = os.path.join(tmp, "slow-out.json")
    p = subprocess.Popen([exe, "--backend", "host", "--config", cfg, "--out", out], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    catches_sigint(p.pid)  # the handler is in (a loaded machine may take longer than a fixed sleep to start it)
    time.sleep(0.2)
    t0 = time.time()
    p.send_signal(signal.SIGINT)
    _, err = p.communicate(timeout=30)
    expect(p.returncode == 130, f"SIGINT while generating: exit {p.returncode}: {err[-500:]}")
    expect(time.time() - t0 < 2, f"it took {time.time() - t0:.1f} s to stop")
    expect("interrupted while generating" in err and not os.path.exists(out), err[-500:])


def contradicting_reference(exe, tmp):
    cfg = write(tmp, "copy.json", json.dumps({"patterns": ["copy"], "engines": ["host"], "devices": [[0, 1]],
                                             "sizes": ["64KiB"], "iterations": 12}))
    ref = os.path.join(tmp, "ref.json")
    run(exe, "--backend", "host", "--config", cfg, "--out", ref, rc=0)
    doc = json.load(open(ref))
    r = doc["results"][0]
    r["latency_us"]["p50"] /= 10
    r["algbw_GBps"] *= 10
    r["busbw_GBps"] *= 10
    write(tmp, "ref-bad.json", json.dumps(doc))
    out = os.path.join(tmp, "checked.json")
    p = run(exe, "--backend", "host", "--config", cfg, "--out", out, "--check", os.path.join(tmp, "ref-bad.json"), rc=2)
    one_short_line(p, ["results[0] (copy/host/oneshot/dev=0,1/64KiB)", "lies outside its own p50_interval_us"], "reference")
    expect(not os.path.exists(out), "--out untouched on a refused reference")


def long_values(exe, tmp):
    big = "x" * 100000  # an argument may hold 128 KiB at most (MAX_ARG_STRLEN)
    for args in (["--config", big], ["--config", write(tmp, "ok.json", "{}"), "--devices", big],
                 ["--config", write(tmp, "keys.json", json.dumps({"patterns": [big]}))],
                 ["--config", write(tmp, "name.json", json.dumps({"patterns": ["copy\nFAIL  forged"]}))],
                 ["--order", big], ["--processes", big]):
        p = run(exe, "--backend", "host", *args, rc=2)
        one_short_line(p, ["dmabench: error: "], f"argument {args[0]} of {len(args[-1])} characters")
        expect("\nFAIL  forged" not in p.stderr, "a newline in a value cannot start a line")


def no_driver(exe):
    if os.path.exists("/proc/driver/nvidia/version") or os.path.exists("/dev/kfd"):
        print("cli_hostile_host: a GPU driver is loaded here: the no-driver message is not checked")
        return
    p = run(exe, "--features", rc=0)
    built = next((l for l in p.stdout.splitlines() if l.startswith("backends built: ")), "")
    if "cuda" not in built and "hip" not in built:
        return  # a host-only build: --features lists cuda and hip as not built, with no driver message
    expect("driver is loaded on this machine, so there is no GPU to run on" in p.stdout, p.stdout[:800])
    expect(p.stdout.count("insufficient") <= 1, "the runtime's words once, not per engine")


def main():
    exe = sys.argv[1]
    with tempfile.TemporaryDirectory() as tmp:
        traces(exe, tmp)
        routings(exe, tmp)
        interrupted_generation(exe, tmp)
        contradicting_reference(exe, tmp)
        long_values(exe, tmp)
        no_driver(exe)
    print("PASS hostile-host")


if __name__ == "__main__":
    main()
