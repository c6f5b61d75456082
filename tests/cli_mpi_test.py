#!/usr/bin/env python3
"""Multi-process runs of the dmabench program under mpirun, on the host backend (registered with ctest).

usage: cli_mpi_test.py DMABENCH CONFIG_DIR [gpu]
  Every pattern under `mpirun -np 2` and `-np 4` (oversubscribed: CI has 2 cores) with one results
  file; the sample time is the slowest rank's; a corrupted byte from one process fails the case in
  every process; a mismatched config and bad flags exit 2 in every process; a rank killed with -9
  mid-run leaves rank 0's file whole with every finished case; engines that cannot run across
  processes are skipped with the reason, and so are rank pairs on different hosts for engines that
  stay within a node; Ctrl-C to mpirun stops every process after the case in flight; SIGTERM / SIGINT to
  mpirun mid-case (Open MPI kills the processes a second later): rank 0's file whole at once; scripts/launch_compare.py
  runs a config both ways and tables the two.
  gpu: `mpirun -np 2` on the build's GPU backend: ce, ce-batch, sm and nccl on copy, allgather and
  alltoall, validated (two GPUs; with one GPU both processes share it and nccl is skipped with the reason);
  then the two processes as if on two hosts: nccl through its network transport, validated, ce skipped.
Exit 77 (skip) where there is no mpirun or the build has no MPI, unless DMABENCH_REQUIRE_MPI=1 (CI);
gpu: also without a GPU.
"""
import glob
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET

from driver_common import expect

SKIP = 77
ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
           OMPI_MCA_rmaps_base_oversubscribe="1")
for k in ("DMABENCH_HOST_FAULT", "DMABENCH_SOFT_SDMA_FAULT"):
    ENV.pop(k, None)


def mpirun(np, *args, env=None, timeout=300, cwd=None):
    cmd = ["mpirun", "--oversubscribe", "-np", str(np), *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env or ENV, cwd=cwd)


def write(path, cfg):
    with open(path, "w") as f:
        json.dump(cfg, f)
    return path


def load(path):
    with open(path) as f:
        return json.load(f)


def shm_left():
    return sorted(glob.glob("/dev/shm/dmabench-*"))


def check_file(doc, np, out):
    ctx = doc["context"]
    procs = ctx["processes"]
    expect(procs["count"] == np, f"context.processes.count {procs['count']}, expected {np}")
    expect(procs["launcher"].startswith("MPI: "), f"launcher {procs['launcher']!r}")
    ranks = procs["ranks"]
    expect([r["rank"] for r in ranks] == list(range(np)), f"ranks {ranks}")
    expect(len({r["pid"] for r in ranks}) == np, "every rank has its own process")
    expect([r["device"] for r in ranks] == list(range(np)), "host rank = world rank")
    expect(sum(len(n["ranks"]) for n in procs["nodes"]) == np, f"nodes {procs['nodes']}")
    expect(not os.path.exists(out + ".journal") and not os.path.exists(out + ".lock"), "journal or lock left")


def sweeps(exe, tmp):
    cfg = {"patterns": ["copy", "bidir", "allgather", "alltoall"], "engines": ["host"], "in_place": [False, True],
           "sizes": [1, 1001, "64KiB", "1MiB"], "timing": ["oneshot", "pipelined"], "warmup": 2, "iterations": 10,
           "rotate": [1, 2]}
    path = write(os.path.join(tmp, "sweep.json"), cfg)
    for np in (2, 4):
        out = os.path.join(tmp, f"np{np}.json")
        p = mpirun(np, exe, "--config", path, "--out", out, "--backend", "host", "--benchmark_color=false")
        expect(p.returncode == 0, f"-np {np} exited {p.returncode}\n{p.stdout[-3000:]}\n{p.stderr[-3000:]}")
        expect(p.stdout.count("dmabench: ") >= 1 and p.stdout.count(" ok, ") == 1,
               f"-np {np}: one summary line (rank 0 only) expected:\n{p.stdout[-2000:]}")
        doc = load(out)
        check_file(doc, np, out)
        res = doc["results"]
        ok = [r for r in res if r["status"] == "ok"]
        expect(len(ok) == 80, f"-np {np}: {len(ok)} ok cases, expected 80 (5 pattern forms x 4 sizes x 2 timings x 2 rotations)")
        expect(all(r["validated"] for r in ok), "every ok case validated")
        for r in ok:
            want = 2 if r["pattern"] in ("copy", "bidir") else np
            expect(r["ranks"] == want and r["devices"] == list(range(want)), f"{r['name']}: ranks {r['ranks']}")
        bad = [r for r in res if r["status"] != "ok" and "in-place alltoall" not in r["reason"]]
        expect(not bad, f"-np {np}: unexpected skips or failures: {[(r['name'], r['reason']) for r in bad][:5]}")
        print(f"  -np {np}: {len(ok)} ok, every case validated across {np} processes, one file")
    expect(not shm_left(), f"shared memory left behind: {shm_left()}")


def alltoallv(exe, tmp):
    """The uneven all-to-all (MoE dispatch and combine) with one process per rank: every routing validated across 4
    processes; its heaviest pair is not timed there (said in the record); ranks on a shared GPU are one process's."""
    cfg = {"patterns": ["alltoallv"], "engines": ["host"], "timing": ["oneshot"], "warmup": 1, "iterations": 5,
           "alltoallv": {"tokens_per_rank": [4, 32], "splits": ["uniform", "zipf:1.2"], "direction": ["dispatch", "combine"],
                         "tokens": ["packed", "scattered"], "ranks": ["devices", 8]}}
    path = write(os.path.join(tmp, "alltoallv.json"), cfg)
    out = os.path.join(tmp, "alltoallv-np4.json")
    p = mpirun(4, exe, "--config", path, "--out", out, "--backend", "host", "--benchmark_color=false")
    expect(p.returncode == 0, f"alltoallv -np 4 exited {p.returncode}\n{p.stdout[-3000:]}\n{p.stderr[-3000:]}")
    doc = load(out)
    check_file(doc, 4, out)
    res = doc["results"]
    ok = [r for r in res if r["status"] == "ok"]
    expect(len(ok) == 16 and all(r["validated"] and r["ranks"] == 4 for r in ok), f"alltoallv: {len(ok)} ok of {len(res)}")
    for r in ok:
        a = r["alltoallv"]
        expect(a["bytes_moved"] == r["bytes"] == sum(map(sum, a["pair_tokens"])) * a["token_bytes"], f"{r['name']}: bytes")
        expect("multi-process" in a["heaviest_pair"]["error"], f"{r['name']}: heaviest pair {a['heaviest_pair']}")
    shared = [r for r in res if r["alltoallv"]["ranks_asked"] == 8]
    expect(len(shared) == 16 and all(r["status"] == "skipped" and "alltoallv.ranks 8" in r["reason"] for r in shared),
           f"ranks sharing a GPU: {[(r['status'], r['reason']) for r in shared][:2]}")
    print(f"  alltoallv -np 4: {len(ok)} routings validated across 4 processes")


def slowest_rank(exe, tmp):
    """The sample is the slowest process's time: rank 1's operations take 30 ms longer."""
    path = write(os.path.join(tmp, "slow.json"),
                 {"patterns": ["allgather"], "engines": ["host"], "sizes": ["4KiB"], "warmup": 1, "iterations": 5})
    out = os.path.join(tmp, "slow-out.json")
    p = mpirun(2, exe, "--config", path, "--out", out, "--backend", "host", env=dict(ENV, DMABENCH_HOST_FAULT="delay:1:30"))
    expect(p.returncode == 0, f"delay run exited {p.returncode}\n{p.stderr[-2000:]}")
    lat = load(out)["results"][0]["latency_us"]
    expect(lat["min"] >= 30000, f"sample min {lat['min']} us: not the slowest rank's (rank 1 takes >= 30 ms)")
    expect(lat["p50"] < 200000, f"p50 {lat['p50']} us")
    print(f"  slowest rank: p50 {lat['p50']:.0f} us with rank 1 delayed 30 ms per operation")


def adaptive(exe, tmp):
    """Adaptive sampling (no iterations) across processes: every process stops after the same sample, whether the
    noise stops it (loose max_noise) or the time and sample caps do (an impossible max_noise: the processes' clocks
    reach max_time at slightly different samples, unless a case's interval collapses to noise 0), and no run hangs."""
    for np in (2, 4):
        for max_noise in (0.5, 1e-6):
            path = write(os.path.join(tmp, "adaptive.json"),
                         {"patterns": ["allgather", "copy"], "engines": ["host"], "sizes": ["4KiB", "64KiB"],
                          "timing": ["oneshot", "pipelined"], "warmup": 1, "max_noise": max_noise, "max_time": 0.1,
                          "max_samples": 2000})
            out = os.path.join(tmp, "adaptive-out.json")
            p = mpirun(np, exe, "--config", path, "--out", out, "--backend", "host", timeout=120)
            expect(p.returncode == 0, f"-np {np} max_noise {max_noise} exited {p.returncode}\n{p.stderr[-2000:]}")
            doc = load(out)
            check_file(doc, np, out)
            res = doc["results"]
            expect(len(res) == 8 and all(r["status"] == "ok" for r in res), f"{[(r['name'], r['reason']) for r in res]}")
            for r in res:
                s = r["sampling"]
                expect(s["mode"] == "adaptive" and s["samples"] == r["iterations"] >= 10, f"{r['name']}: {s}")
                expect(s["stopped"] != "noise" or (r["noise"] <= max_noise and not r["noisy"]),
                       f"{r['name']}: stopped on noise with noise {r['noise']}")
            stops = {r["sampling"]["stopped"] for r in res}
            # A near-impossible max_noise is still met where the median's interval collapses (its two order
            # statistics read the same clock tick: noise 0, seen once in CI); such a stop is checked above.
            expect(("noise" in stops) if max_noise == 0.5 else bool(stops & {"max_time", "max_samples"}),
                   f"-np {np} max_noise {max_noise}: stopped {stops}")
        print(f"  adaptive -np {np}: every case stopped together (noise, and time or samples)")


def corrupt(exe, tmp):
    """A byte rank 1 writes into rank 0's buffer is wrong: rank 0's check fails the case in both processes."""
    path = write(os.path.join(tmp, "corrupt.json"),
                 {"patterns": ["allgather", "copy"], "engines": ["host"], "sizes": ["4KiB"], "iterations": 3})
    out = os.path.join(tmp, "corrupt-out.json")
    p = mpirun(2, exe, "--config", path, "--out", out, "--backend", "host", env=dict(ENV, DMABENCH_HOST_FAULT="corrupt:1"))
    expect(p.returncode == 1, f"corrupted run exited {p.returncode}, expected 1\n{p.stderr[-2000:]}")
    res = {r["pattern"]: r for r in load(out)["results"]}
    ag = res["allgather"]
    expect(ag["status"] == "failed" and ag["reason"].startswith("validation: rank 0 (device 0) destination byte"),
           f"allgather: {ag['status']} {ag['reason']}")
    expect(res["copy"]["status"] == "ok", "copy (rank 0 issues, rank 1 issues nothing) is unaffected")
    print(f"  corrupt: {ag['reason']}")


def bad_input(exe, tmp):
    a = write(os.path.join(tmp, "a.json"), {"patterns": ["copy"], "engines": ["host"], "sizes": [64]})
    b = write(os.path.join(tmp, "b.json"), {"patterns": ["copy"], "engines": ["host"], "sizes": [128]})
    out = os.path.join(tmp, "mismatch.json")
    p = mpirun(1, exe, "--config", a, "--out", out, "--backend", "host", ":", "-np", "1", exe, "--config", b, "--out", out, "--backend", "host")
    expect(p.returncode == 2, f"mismatched configs exited {p.returncode}, expected 2\n{p.stderr[-2000:]}")
    expect("rank 1 loaded another config than rank 0" in p.stderr, f"message:\n{p.stderr[-2000:]}")
    expect(p.stderr.count("dmabench: error:") == 1, "rank 0 alone says it")
    expect(not os.path.exists(out), "no results file for a mismatched config")
    p = mpirun(1, exe, "--config", a, "--out", out, "--backend", "host", ":", "-np", "1", exe, "--config", a, "--out", out, "--backend", "host", "--case-timeout", "30")
    expect(p.returncode == 2 and "rank 1 was given other flags than rank 0" in p.stderr, f"flags:\n{p.stderr[-2000:]}")
    for flags, words in ((["--devices", "0,1"], "--devices: on the host backend"),
                         (["--benchmark_min_time=0.1"], "--benchmark_min_time: not supported in a multi-process run")):
        p = mpirun(2, exe, "--config", a, "--out", out, "--backend", "host", *flags)
        expect(p.returncode == 2 and words in p.stderr, f"{flags}: exit {p.returncode}\n{p.stderr[-2000:]}")
    # a launcher MPI cannot reach (torchrun; srun with an MPI without Slurm's PMI): each process would be
    # a one-process MPI world running the whole sweep into the same file
    for launcher, words in (({"WORLD_SIZE": "2", "RANK": "0", "LOCAL_RANK": "0"}, ("started as one of 2 processes", "sees one")),
                            ({"SLURM_STEP_NUM_TASKS": "2", "SLURM_LOCALID": "0"},
                             ("started by srun as one of 2 tasks", "srun --mpi=pmix"))):
        clean = {k: v for k, v in ENV.items() if not k.startswith(("PMIX_", "PMI_", "OMPI_COMM_WORLD"))}
        p = subprocess.run([exe, "--config", a, "--out", out, "--backend", "host"], capture_output=True, text=True,
                           timeout=120, env=dict(clean, **launcher))
        expect(p.returncode == 2 and all(w in p.stderr for w in words) and not os.path.exists(out),
               f"{launcher}: exit {p.returncode}\n{p.stderr[-2000:]}")
    print("  bad input: mismatched config, other flags, --devices, --benchmark_min_time, a launcher MPI cannot "
          "reach: exit 2 on every process")


def other_engines(exe, configs, tmp):
    out = os.path.join(tmp, "sdma.json")
    p = mpirun(2, exe, "--config", os.path.join(configs, "sdma-host.json"), "--out", out, "--backend", "host",
               "--benchmark_filter=allgather/sdma/", "--allow-empty", timeout=300,  # every case skipped: exit 6 without it
               cwd=os.path.dirname(configs))
    expect(p.returncode == 0, f"sdma under mpirun exited {p.returncode}\n{p.stderr[-2000:]}")
    res = load(out)["results"]
    expect(res and all(r["status"] == "skipped" and r["reason"].startswith("multi-process run: ") for r in res),
           f"sdma cases: {[(r['status'], r['reason']) for r in res][:3]}")
    print(f"  sdma: {len(res)} cases skipped: {res[0]['reason']}")


def long_run(exe, tmp, name):
    """Starts a sweep of 64 short cases (~0.1 s each) under mpirun -np 2; returns the process and its
    results path. Short cases: the launcher kills what is still running a moment after a signal."""
    path = write(os.path.join(tmp, f"{name}.json"),
                 {"patterns": ["allgather", "alltoall"], "engines": ["host"],
                  "sizes": ["1MiB", "2MiB", "3MiB", "4MiB", "5MiB", "6MiB", "7MiB", "8MiB"],
                  "timing": ["oneshot", "pipelined"], "rotate": [1, 2], "warmup": 2, "iterations": 30})
    out = os.path.join(tmp, f"{name}-out.json")
    proc = subprocess.Popen(["mpirun", "--oversubscribe", "-np", "2", exe, "--config", path, "--out", out, "--backend", "host"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=ENV)
    return proc, out


def two_hosts(exe, tmp):
    """Ranks on different hosts (DMABENCH_FAKE_HOST; tests only): the host engine, which shares memory within
    a node, skips every pair across hosts with the reason; the context has two nodes."""
    path = write(os.path.join(tmp, "hosts.json"), {"patterns": ["copy", "allgather"], "engines": ["host"], "sizes": [64]})
    out = os.path.join(tmp, "hosts-out.json")
    flags = ["--config", path, "--out", out, "--backend", "host", "--allow-empty"]  # every case skipped: 6 without it
    p = mpirun(1, "-x", "DMABENCH_FAKE_HOST=node-a", exe, *flags, ":", "-np", "1", "-x", "DMABENCH_FAKE_HOST=node-b", exe,
               *flags)
    expect(p.returncode == 0, f"two hosts: exit {p.returncode}\n{p.stderr[-2000:]}")
    doc = load(out)
    nodes = doc["context"]["processes"]["nodes"]
    expect([n["host"] for n in nodes] == ["node-a", "node-b"], f"nodes {nodes}")
    for r in doc["results"]:
        expect(r["status"] == "skipped" and "run on different hosts (node-a, node-b)" in r["reason"],
               f"{r['name']}: {r['status']} {r['reason']}")
    print(f"  two hosts: {doc['results'][0]['reason']}")


def killed_rank(exe, tmp):
    """kill -9 of rank 1 mid-run: rank 0 notices, fails the case in flight with the reason, writes its file
    whole with every finished case, and stops."""
    proc, out = long_run(exe, tmp, "killed")
    deadline = time.time() + 120
    while time.time() < deadline:
        try:
            with open(out + ".journal") as f:
                if sum(1 for _ in f) >= 3:  # a header and two cases
                    break
        except FileNotFoundError:
            pass
        time.sleep(0.05)
    rank1 = None
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/environ", "rb") as f:
                env = f.read().split(b"\0")
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                cmd = f.read()
        except OSError:
            continue
        if b"OMPI_COMM_WORLD_RANK=1" in env and exe.encode() in cmd and out.encode() in cmd:
            rank1 = int(pid)
    expect(rank1 is not None, "rank 1's process not found")
    os.kill(rank1, signal.SIGKILL)
    stdout, stderr = proc.communicate(timeout=120)
    expect(proc.returncode != 0, "mpirun reports the killed rank")
    doc = load(out)
    res = doc["results"]
    done = [r for r in res if r["status"] == "ok"]
    failed = [r for r in res if r["status"] == "failed"]
    expect(len(done) >= 2, f"{len(done)} finished cases in the file")
    expect(len(failed) == 1 and "ended while rank 0 waited for it" in failed[0]["reason"],
           f"the case in flight: {[(r['name'], r['reason']) for r in failed]}; {len(done)} ok; "
           f"stderr:\n{stderr[-3000:]}")
    expect(not os.path.exists(out + ".journal") and not os.path.exists(out + ".lock"),
           "rank 0 finished its file (no journal, no lock left)")
    expect("dmabench: the run stopped after" in stderr, f"rank 0's message:\n{stderr[-2000:]}")
    expect(not shm_left(), f"shared memory of the killed rank left behind: {shm_left()}")
    print(f"  killed rank 1: {len(done)} finished cases kept, in flight: {failed[0]['reason']}")


def died_between_cases(exe, tmp):
    """Rank 1 dies after the first case is recorded (DMABENCH_HOST_FAULT=die:1; tests only): rank 0 notices
    while no case is in flight, so the next case fails with the reason and the run stops there."""
    path = write(os.path.join(tmp, "between.json"), {"patterns": ["copy"], "engines": ["host"],
                                                     "sizes": [64, 128, 256, 512], "iterations": 5})
    out = os.path.join(tmp, "between-out.json")
    p = mpirun(2, exe, "--config", path, "--out", out, "--backend", "host", env=dict(ENV, DMABENCH_HOST_FAULT="die:1"))
    expect(p.returncode != 0, "mpirun reports the dead rank")
    res = load(out)["results"]
    got = [(r["name"], r["status"], r["reason"]) for r in res]
    expect(len(res) == 2 and res[0]["status"] == "ok" and res[1]["status"] == "failed"
           and "ended while rank 0 waited for it" in res[1]["reason"], f"cases: {got}\nstderr:\n{p.stderr[-2000:]}")
    expect("dmabench: the run stopped after 2 cases" in p.stderr, f"rank 0's message:\n{p.stderr[-2000:]}")
    expect(not os.path.exists(out + ".journal") and not os.path.exists(out + ".lock"), "journal or lock left")
    print(f"  died between cases: 1 case kept, the next fails with: {res[1]['reason']}")


def interrupted(exe, tmp):
    """Ctrl-C to mpirun: it signals every process; they stop together after the case in flight and rank 0
    writes its file whole."""
    proc, out = long_run(exe, tmp, "interrupted")
    deadline = time.time() + 120
    while time.time() < deadline and not os.path.exists(out + ".journal"):
        time.sleep(0.05)
    time.sleep(0.5)
    proc.send_signal(signal.SIGINT)
    stdout, stderr = proc.communicate(timeout=120)
    res = load(out)["results"]
    expect("dmabench: interrupted after" in stdout, f"rank 0's summary:\n{stdout[-1500:]}\n{stderr[-1500:]}")
    expect(0 < len(res) < 64 and all(r["status"] == "ok" for r in res), f"{len(res)} cases: {[r['status'] for r in res]}")
    expect(not os.path.exists(out + ".journal") and not os.path.exists(out + ".lock"), "journal or lock left")
    print(f"  Ctrl-C to mpirun: {len(res)} of 64 cases, all ok, file whole")


def launcher_signal(exe, tmp):
    """SIGTERM or SIGINT to mpirun (what timeout, kill and batch systems send) mid-case, with cases too long
    to finish before Open MPI kills the processes (about a second after it passes SIGTERM to them): rank 0
    finishes its file at once with every finished case, says so, and leaves no journal or lock (main left
    both, and no message); its --junit file is written at once too, with the finished case and the 7 that did not run
    (before, rank 0 was killed before it wrote one)."""
    path = write(os.path.join(tmp, "term.json"), {"patterns": ["allgather"], "engines": ["host"],
                                                  "sizes": [4096, 8192, 16384, 32768], "iterations": 10, "warmup": 0})  # 8 cases
    for sig in (signal.SIGTERM, signal.SIGINT):
        out = os.path.join(tmp, f"term-{sig.name}.json")
        junit = out + ".xml"
        proc = subprocess.Popen(["mpirun", "--oversubscribe", "-np", "2", exe, "--config", path, "--out", out, "--backend",
                                 "host", "--junit", junit], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                env=dict(ENV, DMABENCH_HOST_FAULT="delay:1:300"))  # 3 s per case
        deadline = time.time() + 120
        while time.time() < deadline:
            if os.path.exists(out + ".journal") and sum(1 for _ in open(out + ".journal")) >= 2:  # one case done
                break
            time.sleep(0.05)
        time.sleep(0.3)
        proc.send_signal(sig)
        stdout, stderr = proc.communicate(timeout=120)
        expect("dmabench: interrupted after 1 of 8 cases" in stdout, f"{sig.name}: rank 0's message:\n{stdout[-1500:]}\n"
               f"{stderr[-1500:]}")
        res = load(out)["results"]
        expect(len(res) == 1 and res[0]["status"] == "ok", f"{sig.name}: {[(r['status'], r['reason']) for r in res]}")
        expect(not os.path.exists(out + ".journal") and not os.path.exists(out + ".lock"), f"{sig.name}: journal or lock left")
        expect(os.path.exists(junit), f"{sig.name}: no --junit file")
        cases = ET.parse(junit).getroot().iter("testcase")
        skipped = [c for c in cases if c.find("skipped") is not None]
        tests = len(list(ET.parse(junit).getroot().iter("testcase")))
        expect(tests == 8 and len(skipped) == 7 and all("not run: the run was interrupted" in c.find("skipped").get("message", "")
                                                       for c in skipped), f"{sig.name}: {tests} tests, {len(skipped)} skipped")
        print(f"  {sig.name} to mpirun mid-case: the finished case kept, the file whole at once, mpirun exit {proc.returncode}")


def launch_compare(exe, tmp):
    """scripts/launch_compare.py: the same config as one process and under mpirun -np 2, alternating, one table;
    a run that fails is recorded and the script exits 1 with the table of what there is."""
    script = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "scripts", "launch_compare.py")
    path = write(os.path.join(tmp, "lc.json"), {"patterns": ["copy", "allgather"], "engines": ["host"],
                                                "sizes": ["4KiB", "1MiB"], "warmup": 1, "iterations": 5})
    out = os.path.join(tmp, "lc")
    cmd = [sys.executable, script, "--out", out, "--config", path, "--dmabench", exe, "--launcher",
           "mpirun --oversubscribe -np {np}", "--", "--backend", "host"]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=300, env=ENV)
    expect(p.returncode == 0, f"launch_compare exited {p.returncode}\n{p.stdout[-2000:]}\n{p.stderr[-2000:]}")
    for k in (1, 2):
        expect(load(os.path.join(out, f"one-{k}.json"))["context"]["processes"]["count"] == 1, f"one-{k}: one process")
        expect(load(os.path.join(out, f"mpi-{k}.json"))["context"]["processes"]["count"] == 2, f"mpi-{k}: two processes")
    rows = [l for l in p.stdout.splitlines() if l.startswith("| copy") or l.startswith("| allgather")]
    expect(len(rows) == 8 and p.stdout.startswith("**one process against one process per GPU**: 8 cases in every file "
                                                  "(2 one-process and 2 multi-process runs)"), p.stdout)
    with open(os.path.join(out, "runs.log")) as f:
        log = f.read()
    expect(all(f"# {s}-{k}: exit 0 after" in log for s in ("one", "mpi") for k in (1, 2)), log[-2000:])
    p = subprocess.run(cmd[:3] + [out + "-fail", "--repeat", "1"] + cmd[4:], capture_output=True, text=True, timeout=300,
                       env=dict(ENV, DMABENCH_HOST_FAULT="corrupt:1"))
    failed = [l for l in p.stdout.splitlines() if "mpi failed: validation: rank 0" in l]
    expect(p.returncode == 1 and len(failed) == 4 and "mpi-1: exit 1 after" in p.stderr,
           f"a failing run: exit {p.returncode}\n{p.stdout[-2000:]}\n{p.stderr[-2000:]}")
    print(f"  launch_compare.py: {len(rows)} cases in one table from 2 + 2 runs; a failing run: exit 1, its cases listed")


def gpu(exe, tmp):
    feats = subprocess.run([exe, "--features"], capture_output=True, text=True).stdout
    backend = next((b for b in ("cuda", "hip") if f"backend {b}: available" in feats), None)
    if backend is None:
        print("no GPU: skipped")
        sys.exit(SKIP)
    # "backend cuda: available, N device(s)" (the GPU lines below it appear twice in --features)
    ngpu = int(re.search(rf"backend {backend}: available, (\d+) device", feats).group(1))
    path = write(os.path.join(tmp, "gpu.json"),
                 {"patterns": ["copy", "allgather", "alltoall"], "sizes": ["1KiB", "1001", "1MiB", "64MiB"],
                  "engines": ["ce", "ce-batch", "sm", "nccl",
                              {"name": "ce", "options": {"trigger": "host-flag", "completion": "flag-spin"}},
                              {"name": "nccl", "options": {"graph": True}}],
                  "timing": ["oneshot", "pipelined"], "iterations": 10, "warmup": 2, "pipeline_depth": 5})
    out = os.path.join(tmp, "gpu-out.json")
    devices = [] if ngpu >= 2 else ["--devices", "0,0"]
    p = mpirun(2, exe, "--config", path, "--out", out, "--backend", backend, *devices)
    expect(p.returncode == 0, f"exit {p.returncode}\n{p.stdout[-3000:]}\n{p.stderr[-3000:]}")
    doc = load(out)
    expect(doc["context"]["processes"]["count"] == 2, "two processes")
    built = {e for e in ("ce", "ce-batch", "sm", "nccl") if f"  {e:<5} [{backend}] {backend}: not built" not in feats}
    for r in doc["results"]:
        shared = ngpu < 2 and r["engine"] == "nccl"
        if r["engine"] not in built or shared:
            expect(r["status"] == "skipped", f"{r['name']}: {r['status']}")
        elif r["status"] != "ok":
            expect(r["status"] == "skipped" and r["engine"] == "ce-batch", f"{r['name']}: {r['status']} {r['reason']}")
        else:
            expect(r["validated"], r["name"])
    ok = [r for r in doc["results"] if r["status"] == "ok"]
    print(f"  {backend}, {ngpu} GPU(s): {len(ok)} of {len(doc['results'])} cases ok and validated across 2 processes")
    if "nccl" in built:
        gpu_two_hosts(exe, tmp, backend, devices)


def gpu_two_hosts(exe, tmp, backend, devices):
    """The two processes as if on two hosts (DMABENCH_FAKE_HOST for dmabench, NCCL_HOSTID for NCCL): NCCL's
    communicator spans them through its network transport (sockets on the loopback: NCCL_SOCKET_IFNAME=lo),
    which also takes two ranks on one GPU; every nccl case is validated, and the engines that move bytes
    within a node skip the pair with the reason."""
    path = write(os.path.join(tmp, "hosts.json"),
                 {"patterns": ["copy", "allgather", "alltoall"], "sizes": ["1KiB", "1MiB"], "timing": ["oneshot"],
                  "engines": ["nccl", {"name": "nccl", "options": {"graph": True}}, "ce"], "iterations": 5, "warmup": 1})
    out = os.path.join(tmp, "hosts-out.json")
    net = ["-x", "NCCL_SOCKET_IFNAME=lo", "-x", "NCCL_IB_DISABLE=1", "-x", "NCCL_NVLS_ENABLE=0"]
    args = [exe, "--config", path, "--out", out, "--backend", backend, *devices]
    p = mpirun(1, *net, "-x", "DMABENCH_FAKE_HOST=node-a", "-x", "NCCL_HOSTID=node-a", *args, ":",
               "-np", "1", *net, "-x", "DMABENCH_FAKE_HOST=node-b", "-x", "NCCL_HOSTID=node-b", *args)
    expect(p.returncode == 0, f"two hosts: exit {p.returncode}\n{p.stdout[-3000:]}\n{p.stderr[-3000:]}")
    doc = load(out)
    expect([n["host"] for n in doc["context"]["processes"]["nodes"]] == ["node-a", "node-b"], "two nodes")
    for r in doc["results"]:
        if r["engine"] == "nccl":
            expect(r["status"] == "ok" and r["validated"], f"{r['name']}: {r['status']} {r['reason']}")
        else:
            expect(r["status"] == "skipped" and "run on different hosts (node-a, node-b)" in r["reason"],
                   f"{r['name']}: {r['status']} {r['reason']}")
    n = sum(r["status"] == "ok" for r in doc["results"])
    print(f"  two hosts: {n} nccl cases ok and validated through NCCL's network transport; ce skipped: different hosts")


def main():
    exe = os.path.abspath(sys.argv[1])
    configs = os.path.abspath(sys.argv[2])
    if len(sys.argv) > 3 and sys.argv[3] == "gpu":
        if not shutil.which("mpirun"):
            print("skipped: no mpirun")
            sys.exit(SKIP)
        with tempfile.TemporaryDirectory() as tmp:
            gpu(exe, tmp)
        print("ok")
        return
    required = os.environ.get("DMABENCH_REQUIRE_MPI") == "1"
    features = subprocess.run([exe, "--features"], capture_output=True, text=True).stdout
    why = None
    if not shutil.which("mpirun"):
        why = "no mpirun"
    elif "multi-process runs (mpirun, srun: one process per rank): yes" not in features:
        why = "this build has no MPI"
    if why:
        print(f"skipped: {why}")
        sys.exit(1 if required else SKIP)
    for stale in shm_left():  # left by an older build's killed process: not this run's to judge
        print(f"  removing {stale} (left before this test)")
        os.remove(stale)
    with tempfile.TemporaryDirectory() as tmp:
        for test in (sweeps, alltoallv, slowest_rank, adaptive, corrupt, bad_input, two_hosts, killed_rank, died_between_cases, interrupted,
                     launcher_signal, launch_compare):
            test(exe, tmp)
        other_engines(exe, configs, tmp)
    print("ok")


if __name__ == "__main__":
    main()
