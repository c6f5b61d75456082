#!/usr/bin/env python3
"""Flags over configs (issue 42), end to end on the host backend (registered with ctest, label cpu).

usage: cli_flags_test.py DMABENCH

A sweep from flags alone (nccl-tests' -b/-e/-f, --patterns, --engines, -n, -w), its results file's context config and
records; --config - through standard input with --set and --axis; --config /dev/fd/N (process substitution); a flag over
a preset; the flags reaching the processes of --processes; and bad input: one line naming the flag, exit 2, nothing
written.
"""
import json
import os
import subprocess
import sys
import tempfile

from driver_common import expect


def run(exe, args, rc, stdin=None, pass_fds=()):
    p = subprocess.run([exe, *args], capture_output=True, text=True, timeout=300, input=stdin, pass_fds=pass_fds)
    expect(p.returncode == rc, f"{' '.join(args)} exited {p.returncode}, expected {rc}\n"
                               f"stdout:\n{p.stdout[-3000:]}\nstderr:\n{p.stderr[-3000:]}")
    return p


def results(path):
    with open(path) as f:
        return json.load(f)


def check_sweep(doc, sizes, patterns, engines, iterations, name):
    cfg = doc["context"]["config"]
    expect(cfg["sizes"] == sizes, f"config sizes {cfg['sizes']}, expected {sizes}")
    expect(cfg["patterns"] == patterns, f"config patterns {cfg['patterns']}")
    expect([e["name"] for e in cfg["engines"]] == engines, f"config engines {cfg['engines']}")
    expect(cfg["iterations"] == iterations, f"config iterations {cfg['iterations']}")
    expect(cfg["name"] == name, f"config name {cfg['name']}")
    recs = doc["results"]
    expect(recs, "no records")
    expect({r["bytes_per_rank"] for r in recs} == set(sizes), f"record sizes {sorted({r['bytes_per_rank'] for r in recs})}")
    expect({r["pattern"] for r in recs} == set(patterns), f"record patterns {[r['pattern'] for r in recs]}")
    expect({r["engine"] for r in recs} == set(engines), f"record engines {[r['engine'] for r in recs]}")
    ok = [r for r in recs if r["status"] == "ok"]
    expect(ok, f"no ok case: {[(r['name'], r['status'], r['reason']) for r in recs]}")
    expect(all(r["iterations"] == iterations for r in ok), f"iterations {[r['iterations'] for r in ok]}")


def flags_alone(exe, tmp):
    out = os.path.join(tmp, "alone.json")
    args = ["-b", "4KiB", "-e", "64KiB", "-f", "4", "--engines", "host", "--patterns", "copy", "-n", "3", "-w", "1",
            "--backend", "host", "--out", out]
    run(exe, args, 0)
    doc = results(out)
    check_sweep(doc, [4096, 16384, 65536], ["copy"], ["host"], 3, "flags")
    cfg = doc["context"]["config"]
    expect(cfg["timing"] == ["oneshot"] and cfg["warmup"] == 1, f"timing {cfg['timing']}, warmup {cfg['warmup']}")
    expect(doc["context"]["command_line"][1:] == args, f"command line {doc['context']['command_line']}")
    expect({r["warmup"] for r in doc["results"]} == {1}, "record warmup")
    # --list from flags alone; --sizes the same sweep as -b/-e/-f
    p = run(exe, ["--sizes", "4KiB:64KiB:x4", "--engines", "host", "--patterns", "copy", "--backend", "host", "--list"], 0)
    expect(p.stdout.count("\n") >= 4 and "copy" in p.stdout, f"--list: {p.stdout}")
    # --list lists what --benchmark_filter selects, as a run would run it; a filter that selects nothing: exit 2
    flags = ["--sizes", "4KiB:64KiB:x4", "--engines", "host", "--patterns", "copy", "--backend", "host", "--list"]
    p = run(exe, flags + ["--benchmark_filter=/16KiB"], 0)
    names = [line for line in p.stdout.splitlines() if line and not line.startswith("#")]
    expect(len(names) == 1 and "/16KiB" in names[0] and "1 of the 3 cases" in p.stdout, f"--list filtered: {p.stdout}")
    p = run(exe, flags + ["--benchmark_filter=nothing-like-this"], 2)
    expect("selects no case" in p.stderr and p.stderr.count("\n") == 1, f"--list, empty filter: {p.stderr}")


def config_from_stdin(exe, tmp):
    cfg = {"name": "piped", "sizes": "4KiB", "patterns": ["copy"], "engines": ["host"], "timing": "oneshot"}
    out = os.path.join(tmp, "stdin.json")
    run(exe, ["--config", "-", "--set", "iterations=2", "--axis", "sizes=4KiB,8KiB", "--backend", "host", "--out", out], 0,
        stdin=json.dumps(cfg))
    doc = results(out)
    check_sweep(doc, [4096, 8192], ["copy"], ["host"], 2, "piped")
    expect(doc["context"]["config_file"] == "-", f"config_file {doc['context']['config_file']}")
    # process substitution: a pipe as /dev/fd/N
    r, w = os.pipe()
    os.write(w, json.dumps(dict(cfg, iterations=4)).encode())
    os.close(w)
    out = os.path.join(tmp, "fd.json")
    run(exe, ["--config", f"/dev/fd/{r}", "--set", "name=fd", "--backend", "host", "--out", out], 0, pass_fds=(r,))
    os.close(r)
    check_sweep(results(out), [4096], ["copy"], ["host"], 4, "fd")
    # a config bigger than the cap through the pipe: refused, bounded
    p = run(exe, ["--config", "-", "--backend", "host", "--out", os.path.join(tmp, "big.json")], 2,
            stdin=" " * (2 << 20))
    expect("larger than 1024 KiB" in p.stderr, p.stderr)


def over_preset(exe, tmp):
    out = os.path.join(tmp, "preset.json")
    run(exe, ["quick", "--engines", "host", "-b", "4KiB", "-e", "4KiB", "--patterns", "copy", "--backend", "host",
              "--out", out], 0)
    doc = results(out)
    check_sweep(doc, [4096], ["copy"], ["host"], 20, "quick")  # iterations: the preset's
    expect(doc["context"]["config"]["timing"] == ["oneshot", "pipelined"], "the preset's timing kept")
    expect(doc["context"]["config_file"].endswith("quick.json"), doc["context"]["config_file"])


def processes(exe, tmp):
    out = os.path.join(tmp, "procs.json")
    run(exe, ["-b", "8KiB", "--engines", "host", "--patterns", "copy", "-n", "2", "--processes", "2", "--backend", "host",
              "--out", out], 0)
    for k in (1, 2):  # each process got the flags
        check_sweep(results(f"{out}.processes/process-{k}.json"), [8192], ["copy"], ["host"], 2, "flags")
    expect({r["bytes_per_rank"] for r in results(out)["results"]} == {8192}, "merged sizes")


def habits(exe, tmp):
    """Issue 52: nccl-tests' long names and nvbench's axis forms run the sweep the short names do; the console's size
    column says per rank."""
    out = os.path.join(tmp, "habits.json")
    args = ["--minbytes", "4KiB", "--maxbytes", "16KiB", "--stepfactor", "4", "--engines", "host", "--patterns", "copy",
            "--iters", "3", "--warmup_iters", "1", "-a", "rotate=[1:2]", "--backend", "host", "--out", out]
    p = run(exe, args, 0)
    doc = results(out)
    check_sweep(doc, [4096, 16384], ["copy"], ["host"], 3, "flags")
    cfg = doc["context"]["config"]
    expect(cfg["warmup"] == 1 and cfg["rotate"] == [1, 2], f"warmup {cfg['warmup']}, rotate {cfg.get('rotate')}")
    header = [line for line in p.stdout.splitlines() if "busbw GB/s" in line]
    expect(header and header[0].startswith("size/rank"), f"console header: {header}")


def bad_input(exe, tmp):
    out = os.path.join(tmp, "bad.json")
    cases = [
        (["-b", "4KiB", "-n", "0"], "-n (the config's iterations): expected an integer from 1"),
        (["-b", "4KiB", "--patterns", "copy,warp"], "--patterns (the config's patterns[1]): unknown value 'warp'"),
        (["-b", "4KiB", "-e", "1KiB"], "-b/-e/-f (the config's sizes): empty range"),
        (["-e", "1MiB"], "-e: needs -b"),
        (["-n", "5"], "no sizes to sweep: give -b SIZE"),
        (["--backend", "host"], "no config: give --config FILE"),
        (["-b", "4KiB", "--set", "sizes=8KiB"], "-b and --set sizes: both set the config's sizes"),
        (["quick", "--set", "nosuch=1"], "--set nosuch: config: key 'nosuch' is unknown"),
        (["--config", "-", "--processes", "2"], "a pipe is read once"),
        # issue 52: near misses suggest, nccl-tests' flags without an equivalent say what instead, nvbench's bad forms
        (["-b", "4KiB", "--iteration", "5"], "unknown argument '--iteration' (did you mean --iterations?); accepted:"),
        (["-b", "4KiB", "--warmup-iters", "1"], "(did you mean --warmup_iters?)"),
        (["-b", "4KiB", "--engines", "hots"], "unknown engine 'hots' (did you mean host?); accepted:"),
        (["-b", "4KiB", "--patterns", "cpoy"], "unknown value 'cpoy' (did you mean copy?); accepted:"),
        (["-b", "4KiB", "--ngpus", "2"], "--ngpus: nccl-tests' --ngpus has no dmabench equivalent; instead: "),
        (["-b", "4KiB", "-g", "2"], "instead: no GPUs-per-thread count here: --devices LIST"),
        (["-b", "4KiB", "-a", "rotate=[4:1]"], "--axis: 'rotate=[4:1]': STOP is below START; accepted: KEY=V1,V2,"),
        (["-b", "4KiB", "-a", "rotate=[1,2"], "--axis: 'rotate=[1,2' is not an axis; accepted:"),
        (["-b", "1MB"], "'1MB' is ambiguous (MB: powers of 1000 or of 1024?); accepted: 1MiB"),
        (["--sizes", "4KB,8KB"], "'4KB' is ambiguous"),
        (["quik"], "unknown preset 'quik' (did you mean quick?); the presets ("),
    ]
    for args, fragment in cases:
        p = run(exe, [*args, "--backend", "host", "--out", out] if "--backend" not in args else [*args, "--out", out], 2,
                stdin="{}")
        lines = p.stderr.strip().split("\n")
        expect(len(lines) == 1 and lines[0].startswith("dmabench: error: ") and fragment in lines[0],
               f"{args}: {p.stderr!r}, expected one line with {fragment!r}")
        expect(not os.path.exists(out), f"{args}: wrote {out}")
    p = run(exe, [], 0)  # no flags at all: the first-run text, as before
    expect("dmabench" in p.stdout + p.stderr, "first-run text")


def backend_choice(exe, tmp):
    """Issue 52: --backend auto says on stderr and in context.backend_choice when it ran on host ranks; gpu (the flag
    or a config's "backend") never does: exit 2, one line; the flag wins over the config. Where a GPU backend opens
    (the H200), auto takes it and says nothing, and gpu runs."""
    out = os.path.join(tmp, "choice.json")
    # --allow-empty: on one GPU every copy case is skipped (copy needs two devices); the choice is what is checked
    p = run(exe, ["-b", "4KiB", "--patterns", "copy", "-n", "3", "-w", "0", "--out", out, "-q", "--allow-empty"], 0)
    choice = results(out)["context"]["backend_choice"]
    ran = results(out)["context"]["backend"]
    expect(choice["asked"] == "auto" and choice["ran"] == ran, f"backend_choice {choice}")
    warned = [l for l in p.stderr.splitlines() if "backend auto ran on the host backend" in l]
    if ran == "host":
        expect(choice["fell_back"] and choice["why"] and len(warned) == 1 and choice["why"] in warned[0]
               and "--backend gpu" in warned[0], f"auto on host: {choice}, stderr {p.stderr!r}")
    else:
        expect(not choice["fell_back"] and choice["why"] is None and not warned, f"auto on {ran}: {choice} {p.stderr!r}")
    # --processes: said once for the run, recorded by every process
    many = os.path.join(tmp, "choice-processes.json")
    p = run(exe, ["-b", "4KiB", "--patterns", "copy", "-n", "3", "-w", "0", "--processes", "3", "--out", many, "-q",
                  "--allow-empty"], 0)
    warned = [l for l in p.stderr.splitlines() if "backend auto ran on the host backend" in l]
    expect(len(warned) == (1 if ran == "host" else 0), f"--processes 3: {len(warned)} fallback lines: {p.stderr!r}")
    expect(all(x["backend_choice"]["fell_back"] == (ran == "host") for x in
               [results(os.path.join(many + ".processes", f"process-{k}.json"))["context"] for k in (1, 2, 3)]),
           "every process records the fallback")
    cfg = os.path.join(tmp, "gpu-config.json")
    with open(cfg, "w") as f:
        json.dump({"backend": "gpu", "sizes": "4KiB", "patterns": ["copy"], "iterations": 3, "warmup": 0}, f)
    for args, words in ((["-b", "4KiB", "--patterns", "copy", "-n", "3", "--backend", "gpu"], "--backend gpu: no GPU"),
                        (["--config", cfg], "the config's \"backend\": \"gpu\": no GPU")):
        os.path.exists(out) and os.remove(out)
        p = run(exe, [*args, "--out", out, "-q", "--allow-empty"], 2 if ran == "host" else 0)
        if ran == "host":
            lines = p.stderr.strip().splitlines()
            expect(len(lines) == 1 and words in lines[0] and "give --backend host" in lines[0], f"{args}: {p.stderr!r}")
            expect(not os.path.exists(out), f"{args}: wrote {out}")
        else:
            expect(results(out)["context"]["backend_choice"]["asked"] == "gpu", f"{args}: asked gpu")
    run(exe, ["--config", cfg, "--backend", "host", "--out", out, "-q"], 0)  # the flag wins over the config
    # the warning comes once the input is agreed: bad input after the backend's choice is still one line
    p = run(exe, ["-b", "4KiB", "--patterns", "copy", "--devices", "0,99", "--out", out], 2)
    expect(len(p.stderr.strip().splitlines()) == 1 and p.stderr.startswith("dmabench: error: "), repr(p.stderr))
    doc = results(out)["context"]
    expect(doc["backend_choice"] == {"asked": "host", "ran": "host", "fell_back": False, "why": None}
           and doc["config"]["backend"] == "gpu", f"the flag over the config: {doc['backend_choice']}")


def main():
    exe = sys.argv[1]
    with tempfile.TemporaryDirectory() as tmp:
        for test in (flags_alone, habits, config_from_stdin, over_preset, processes, bad_input, backend_choice):
            test(exe, tmp)
            print(f"ok {test.__name__}")


if __name__ == "__main__":
    main()
