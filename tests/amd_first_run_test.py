#!/usr/bin/env python3
"""ctest amd_first_run: scripts/amd-first-run.sh on the host backend (the software SDMA engine stands in) against
fake topologies under --root: an MI300X-like one (8 GPUs, SPX / NPS1, 16 SDMA engines, atomics, one recommended
xGMI engine per link, KFD 1.17, a libhsakmt header with BY_ENG_ID) must give OK checks, a full archive and exit 0;
a broken one (CPX / NPS4 partitions, 4 engines, no 64-bit atomics, a recommended engine the GPU lacks and, the GPUs
being MI308X, an odd recommended engine that is fused off, a hidden
GPU, KFD 1.14, no libhsakmt) must change the verdicts and exit 1; a case that outlives --case-timeout must be a
recorded hang naming the case, the cases not yet recorded then run in a new process; bad input exits 2 and writes nothing.

usage: amd_first_run_test.py DMABENCH SOURCE_DIR
"""
import json
import os
import subprocess
import sys
import tarfile
import tempfile
import time

DMABENCH, SRC = sys.argv[1], sys.argv[2]
SCRIPT = os.path.join(SRC, "scripts", "amd-first-run.sh")
BUILD = os.path.dirname(os.path.abspath(DMABENCH))
failures = []


def expect(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)


def props(d):
    return "".join(f"{k} {v}\n" for k, v in d.items())


def fake_root(root, broken):
    """A tree that mimics sys/class/kfd/kfd/topology, sys/bus/pci/devices, dev/kfd, dev/dri and the headers."""
    nodes = os.path.join(root, "sys/class/kfd/kfd/topology/nodes")
    cpus = [0, 1]
    gpus = list(range(2, 6)) if broken else list(range(2, 10))
    for c in cpus:
        write(f"{nodes}/{c}/properties", props({"cpu_cores_count": 96, "simd_count": 0, "mem_banks_count": 1}))
    for i, g in enumerate(gpus):
        # broken: CPX partitions, two KFD nodes per PCI device (one location_id for both)
        bus = 0x10 + (i // 2 if broken else i) * 0x10
        engines, xgmi = (2, 2) if broken else (2, 14)
        write(f"{nodes}/{g}/properties", props({
            "cpu_cores_count": 0, "simd_count": 304 if broken else 1216, "gfx_target_version": 90402,
            "domain": 0, "location_id": bus << 8, "drm_render_minor": 128 + i, "device_id": 0x74a2 if broken else 0x74a1,
            "num_sdma_engines": engines, "num_sdma_xgmi_engines": xgmi, "num_sdma_queues_per_engine": 8}))
        links = [(g, cpus[i * 2 // len(gpus)], 2, 0xd if broken else 0x1, 0)]
        for j, h in enumerate(gpus):
            if h != g:
                engine = 2 + 2 * ((j - i - 1) % 7)
                if broken:
                    engine = 15 if (i, j) == (0, 1) else 2 + (j % 2)
                links.append((g, h, 11, 0x1, 1 << engine))
        for k, (src, dst, kind, flags, mask) in enumerate(links):
            write(f"{nodes}/{g}/io_links/{k}/properties", props({
                "type": kind, "node_from": src, "node_to": dst, "weight": 20 if kind == 2 else 15,
                "recommended_sdma_engine_id_mask": mask, "flags": flags}))
        bdf = f"0000:{bus:02x}:00.0"
        write(f"{root}/sys/bus/pci/devices/{bdf}/current_compute_partition", "CPX\n" if broken else "SPX\n")
        write(f"{root}/sys/bus/pci/devices/{bdf}/current_memory_partition", "NPS4\n" if broken else "NPS1\n")
        if not (broken and i == 1):  # broken: the second GPU's render node is not in this "container"
            write(f"{root}/dev/dri/renderD{128 + i}", "")
    write(f"{root}/sys/class/kfd/kfd/topology/generation_id", "1\n")
    write(f"{root}/dev/kfd", "1.14\n" if broken else "1.17\n")
    if not broken:
        write(f"{root}/opt/rocm/include/hsakmt/hsakmt.h", "HSAKMT_STATUS HSAKMTAPI hsaKmtCreateQueueExt(void);\n")
        write(f"{root}/opt/rocm/include/hsakmt/hsakmttypes.h", "typedef enum { HSA_QUEUE_SDMA_BY_ENG_ID = 6 } HSA_QUEUE_TYPE;\n")


def run_kit(args, timeout=600):
    t0 = time.monotonic()
    p = subprocess.run(["bash", SCRIPT, "--backend", "host", "--build-dir", BUILD] + args, capture_output=True,
                       text=True, timeout=timeout, env=dict(os.environ, ROCM_PATH="/opt/rocm"))
    print(f"$ amd-first-run.sh {' '.join(args)}  -> exit {p.returncode} in {time.monotonic() - t0:.1f} s")
    return p


def archive(path):
    """(the archive's files below its one top directory, a reader of one of them)."""
    with tarfile.open(path) as t:
        tops = {n.split("/")[0] for n in t.getnames()}
        expect(len(tops) == 1, f"{path}: one top directory, got {tops}")
        top = tops.pop()
        content = {m.name[len(top) + 1:]: t.extractfile(m).read() for m in t.getmembers() if m.isfile()}
    return set(content), lambda rel: content[rel].decode()


def verdicts(read):
    return {line.split("\t")[0]: line.split("\t")[1:] for line in read("checks.tsv").splitlines()}


def check_good(tmp):
    root = os.path.join(tmp, "good")
    fake_root(root, broken=False)
    out = os.path.join(tmp, "good.tar.gz")
    p = run_kit(["--root", root, "--out", out, "--sizes", "4KiB", "--latte-sizes", "128", "--case-timeout", "120"])
    expect(p.returncode == 0, f"MI300X-like topology: exit 0, got {p.returncode}: {p.stderr[-2000:]}")
    expect(os.path.exists(out), "MI300X-like topology: the archive is written")
    if not os.path.exists(out):
        return
    files, read = archive(out)
    for f in ["summary.md", "checks.tsv", "checks.txt", "log.txt", "features.txt", "meta.tsv", "system/kfd-topology.txt",
              "system/partitions.txt", "system/recommended-engines.txt", "system/hsakmt.txt", "system/rocm-smi.txt",
              "results/sweep-2.json", "results/sweep-all.json", "results/dma-latte.json", "dma-latte-report.md",
              "configs/amd-first-run.json", "configs/mi300x-dma-latte-sizes.json"]:
        expect(f in files, f"archive holds {f}")
    for step in ("sweep-2", "sweep-all", "dma-latte"):
        expect(any(f.startswith(f"packets/{step}/") and f.endswith(".json") for f in files), f"packet dumps of {step}")
    v = verdicts(read)
    want = {"kfd-topology": "OK", "gfx-target": "OK", "render-nodes": "OK", "kfd-version": "OK", "compute-partition": "OK",
            "memory-partition": "OK", "sdma-engines": "OK", "pcie-atomics": "OK", "recommended-engines": "OK",
            "libhsakmt-by-eng-id": "WARN", "dmabench-backend": "WARN"}
    for k, w in want.items():
        expect(v.get(k, ["missing"])[0] == w, f"MI300X-like: check {k} is {w}, got {v.get(k)}")
    expect("hsakmt.h" in v.get("libhsakmt-by-eng-id", ["", ""])[1] and "with BY_ENG_ID: /" in v["libhsakmt-by-eng-id"][1],
           f"the fake root's BY_ENG_ID header is found: {v.get('libhsakmt-by-eng-id')}")
    expect("8 GPU(s) 2+14/8" in v.get("sdma-engines", ["", ""])[1], f"engine counts in the value: {v.get('sdma-engines')}")
    table = read("system/recommended-engines.txt").splitlines()
    expect(len(table) == 10 and table[2].split()[1:] == [".", "2", "4", "6", "8", "10", "12", "14"],
           f"recommended-engine table row of node 2: {table[:3]}")
    sweep = json.loads(read("results/sweep-2.json"))
    ok = [r for r in sweep["results"] if r["status"] == "ok"]
    expect(ok and all(r["engine"] == "sdma" and r["validated"] for r in ok), "sweep-2: validated sdma cases")
    expect({r["options"]["trigger"] for r in ok} == {"enqueue", "prelaunch", "gpu-flag"}, "sweep-2: every trigger ran")
    expect(any(isinstance(r.get("breakdown_us"), dict) for r in ok if r["pattern"] == "copy"), "sweep-2: copy breakdown")
    skipped = {r["engine"] for r in sweep["results"] if r["status"] == "skipped"}
    expect({"hsa", "ce", "nccl"} <= skipped, f"non-sdma AMD engines skipped on host: {skipped}")
    every = json.loads(read("results/sweep-all.json"))
    expect(any(len(r["devices"]) == 8 and r["status"] == "ok" for r in every["results"]), "sweep-all ran on 8 ranks")
    expect({r["options"]["packet"] for r in every["results"] if r["status"] == "ok"} == {"linear", "broadcast", "swap"},
           "sweep-all: every sdma packet kind ran (broadcast needs 3 or more ranks)")
    s = read("summary.md")
    expect("| first-run sweep, 2 GPUs |" in s and "## Hung cases" in s and "\nnone\n" in s, "summary: runs and no hang")
    expect("| dma-latte | allgather | 1 KiB | 8 | pcpy+PL | 2.87 |" in s, "summary: the paper's allgather 1 KiB pcpy+PL figure set against dmabench")
    expect("| dma-latte | alltoall | 1 KiB | 8 | swap | 1.81 |" in s, "summary: the paper's alltoall 1 KiB swap figure set against dmabench")
    expect("software engine: CPU-thread times, not comparable" in s, "summary: software-engine rows are marked")
    expect("893db06" in s, "summary names the published figures' source commit")
    expect("**Host backend" in s, "summary says the host backend ran")
    expect("sync=auto (the default) completes with ATOMIC" in s and "usable SDMA engines: 0,1,2" in s,
           "summary: --features' sdma platform block (atomics, usable engines)")
    expect("speedup over plain `sdma" in read("dma-latte-report.md"), "dma_latte_report.py with an sdma baseline")


def check_broken(tmp):
    root = os.path.join(tmp, "broken")
    fake_root(root, broken=True)
    out = os.path.join(tmp, "broken.tar.gz")
    small = os.path.join(tmp, "small.json")
    with open(small, "w") as f:
        json.dump({"name": "small", "timing": "oneshot", "warmup": 1, "iterations": 2, "sizes": [4096],
                   "patterns": ["copy"], "engines": [{"name": "sdma", "options": {"sync": ["atomic", "fence"]}}]}, f)
    victim = os.path.join(tmp, "victim.txt")  # a link at the archive's old temporary name: never followed
    write(victim, "precious\n")
    os.symlink(victim, out + ".tmp")
    p = run_kit(["--root", root, "--out", out, "--config", small, "--steps", "sweep-2"])
    expect(p.returncode == 1, f"broken topology: exit 1 (a check FAILs), got {p.returncode}: {p.stderr[-1500:]}")
    with open(victim) as f:
        expect(f.read() == "precious\n" and os.path.islink(out + ".tmp"), "a link at <out>.tmp: its target was written")
    expect(sorted(f for f in os.listdir(tmp) if f.startswith("broken.tar.gz")) == ["broken.tar.gz", "broken.tar.gz.tmp"],
           f"left {os.listdir(tmp)}")
    if not os.path.exists(out):
        failures.append("broken topology: no archive")
        return
    files, read = archive(out)
    v = verdicts(read)
    want = {"kfd-topology": "OK", "render-nodes": "WARN", "kfd-version": "WARN", "compute-partition": "WARN",
            "memory-partition": "WARN", "sdma-engines": "WARN", "pcie-atomics": "WARN", "recommended-engines": "FAIL",
            "libhsakmt-by-eng-id": "WARN"}
    for k, w in want.items():
        expect(v.get(k, ["missing"])[0] == w, f"broken: check {k} is {w}, got {v.get(k)}")
    expect("renderD129" in v["render-nodes"][1] and "node 3" in v["render-nodes"][1], f"the hidden GPU is named: {v['render-nodes']}")
    expect("engine 15 of 4" in v["recommended-engines"][1], f"the absent engine is named: {v['recommended-engines']}")
    # broken GPUs are MI308X (0x74a2): an odd engine the driver counts and recommends is fused off (ROCm/mori #693)
    expect("engine 3, fused off on MI308X" in v["recommended-engines"][1], f"the fused-off engine is named: {v['recommended-engines']}")
    expect("flags 0xd" in v["pcie-atomics"][1], f"the no-atomics flags are shown: {v['pcie-atomics']}")
    expect(v["compute-partition"][1].count("=CPX") == 2, f"one verdict per PCI device (2), not per KFD node: {v['compute-partition']}")
    expect(v["kfd-version"][1] == "1.14", f"KFD version read from the fake dev/kfd: {v['kfd-version']}")
    s = read("summary.md")
    expect("not asked (--steps)" in s and "| **FAIL** |" in s, "summary: the FAIL and the steps not asked")


def check_hang(tmp):
    root = os.path.join(tmp, "good")
    out = os.path.join(tmp, "hang.tar.gz")
    cfg = os.path.join(tmp, "hang.json")
    with open(cfg, "w") as f:  # two cases of one variant that outlive 10 ms (64 and 128 MiB, validated)
        json.dump({"name": "hang", "timing": "oneshot", "warmup": 1, "iterations": 2, "sizes": ["64MiB", "128MiB"],
                   "patterns": ["copy"], "engines": ["sdma"]}, f)
    p = run_kit(["--root", root, "--out", out, "--config", cfg, "--steps", "sweep-2", "--case-timeout", "0.01"])
    expect(p.returncode == 1, f"hang: exit 1, got {p.returncode}: {p.stderr[-1500:]}")
    if not os.path.exists(out):
        failures.append("hang: no archive")
        return
    files, read = archive(out)
    runs = [line.split("\t") for line in read("runs/sweep-2/runs.tsv").splitlines()]
    expect([r[:2] for r in runs] == [["1", "4"], ["2", "4"]],
           f"each hang stopped its process (exit 4) and the case not yet recorded ran in a new one: {[r[:2] for r in runs]}")
    s = read("summary.md")
    for size in ("64MiB", "128MiB"):
        expect(f"`copy/sdma/oneshot/dev=0,1/{size}` | timeout: still running" in s, f"summary names the hung case at {size}")
    merged = json.loads(read("results/sweep-2.json"))
    expect(sorted(r["reason"][:8] for r in merged["results"]) == ["timeout:"] * 2, "both cases recorded as timeouts")
    # --max-hangs 1: the step stops at its first hang; the other case is `not run`
    out = os.path.join(tmp, "hang1.tar.gz")
    p = run_kit(["--root", root, "--out", out, "--config", cfg, "--steps", "sweep-2", "--case-timeout", "0.01", "--max-hangs", "1"])
    expect(p.returncode == 1 and os.path.exists(out), f"--max-hangs 1: exit 1 and an archive, got {p.returncode}")
    if os.path.exists(out):
        files, read = archive(out)
        expect(len(read("runs/sweep-2/runs.tsv").splitlines()) == 1, "--max-hangs 1: one dmabench run")
        expect("| first-run sweep, 2 GPUs | 2 | 0 | 0 | 0 | 1 | 1 |" in read("summary.md"), "--max-hangs 1: 1 hung, 1 not run")


def check_bad_input(tmp):
    existing = os.path.join(tmp, "exists.tar.gz")
    write(existing, "keep")
    for args, what in [(["--backend", "cuda"], "--backend"), (["--out", existing], "exists"), (["--root", "/nonexistent"], "--root"),
                       (["--sizes", "lots"], "sizes"), (["--steps", "sweep-3"], "--steps"), (["--max-hangs", "0"], "--max-hangs"), (["--case-timeout", "0"], "--case-timeout"),
                       (["--bogus"], "unknown argument")]:
        out = os.path.join(tmp, "bad.tar.gz")
        p = run_kit(args if "--out" in args else args + ["--out", out], timeout=60)
        expect(p.returncode == 2 and what in p.stderr and len(p.stderr.strip().splitlines()) == 1,
               f"bad input {args}: exit 2 with one line naming {what}, got {p.returncode}: {p.stderr!r}")
        expect(not os.path.exists(out), f"bad input {args}: nothing written")
    with open(existing) as f:
        expect(f.read() == "keep", "an existing archive is left untouched")


def main():
    with tempfile.TemporaryDirectory() as tmp:
        check_bad_input(tmp)
        check_good(tmp)
        check_broken(tmp)
        check_hang(tmp)
    if failures:
        print(f"{len(failures)} failure(s)")
        return 1
    print("all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
