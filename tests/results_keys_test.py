#!/usr/bin/env python3
"""The results JSON keeps its keys: a fresh host-backend sweep against the committed result files.

usage: results_keys_test.py DMABENCH COMMITTED_DIR      (registered with ctest as `results_keys`)

Runs `DMABENCH --backend host` on a small config that makes every kind of record the host backend can
write: ok and skipped records (GPU engines on the host backend), both timing modes, in place,
rotation, a case beside the host's `stream` workload (and one beside a GEMM, skipped on the host), the
breakdown request and a run-wide power setting; once more on one case sampled adaptively (no iterations); and
once more on one case under an address-space limit, whose allocation fails: a failed
record. Then it compares the key structure of the fresh files with that of the committed files
(COMMITTED_DIR/*.json, the 2 x H200 runs): every key path with the class of its value (number,
string, bool, null, object, list), list elements merged, and a sweep part of `context.config` read as
the config itself (results/SCHEMA.md: "each part in the form above").

  1. Every path of the fresh file, with its value class, is in the committed files, unless NEW below
     names it (with the reason): no silent rename, no key that appears unannounced.
  2. Every path of the committed files is in the fresh file, unless HOST_CANNOT below says why the host
     backend cannot write it: no key silently dropped (top-level record and context keys included).

Power: no host power source works on a CPU-only machine here. The host's source is RAPL (power/rapl.cpp,
/sys/class/powercap/intel-rapl:N), which this machine (a VM/container) does not expose; `none` measures
nothing; nvml and rocm-smi need GPUs. So the sweep asks for power source `none` (which records the
config's power settings and `context.power.enabled`) and the measured power keys are in HOST_CANNOT.
"""
import json
import os
import resource
import subprocess
import sys
import tempfile

# Fresh paths the committed files lack, on purpose, with the reason. A path covers its subtree.
NEW = {
    "context.backend_choice": "SCHEMA.md backend_choice: what --backend (or the config's backend) asked and whether auto "
                              "fell back to host ranks (issue 52), added after the committed files",
    "context.patterns": "SCHEMA.md patterns: what each pattern is (issue 53: pattern properties live on the pattern), "
                        "added after the committed files",
    "context.cpu_choice": "SCHEMA.md cpu_choice: the sampling thread's CPU choice (issue 50: figures from a quiet core), "
                          "added after the committed files",
    "results[].cpu_choice": "SCHEMA.md cpu_choice: where a case's samples were taken and what the choice did (issue 50), "
                            "added after the committed files",
    "context.machine.rank_threads": "SCHEMA.md machine (host): whether the host engine pins its rank threads (issue 50: "
                                    "the host engine's own process mode), added after the committed files",
    "results[].samples_us": "SCHEMA.md samples_us: every timed sample of the case (config samples: true or --samples, "
                            "issue 42), added after the committed files",
    "results[].breakdown": "SCHEMA.md breakdown: the CPU time inside the issuing calls per operation and the descriptors "
                           "(issue 54 item 1), added after the committed files",
    "results[].core_share": "SCHEMA.md core_share: whether the sampling thread's core was shared with a busy hardware "
                            "thread, per sample (issue 39: the slow mode's cause), added after the committed files",
    "context.config.samples": "the config's samples setting (issue 42), as above",
    "context.environment": "SCHEMA.md context.environment: the run's NCCL_/CUDA_/HIP_/... variables (issue 42), as "
                           "above",
    "results[].options.event_before": "ce-batch's event_before (issue 54: an event recorded on each lane just before "
                                      "its batch; engines/options/ce.cpp says why), added after the committed files",
    "context.config.engines[].options.event_before": "ce-batch's event_before in the resolved config, as above",
    "results[].options.sms": "sm's SM budget (issue 43: engines/options/sm.cpp; auto when not asked), added after the "
                             "committed files",
    "context.config.engines[].options.sms": "sm's SM budget in the resolved config, as above",
    "context.calibration": "SCHEMA.md context.calibration: what one command costs the process (issue 39: what moved, "
                           "the case or the process), added after the committed files",
    "context.order": "SCHEMA.md context.order: the order the cases ran in and its seed (issue 39, --order), added after "
                     "the committed files",
    "results[].case_index": "SCHEMA.md case_index: the case's place in the config's order (issue 39: the order of a "
                            "levels file), added after the committed files",
    "results[].cpu": "SCHEMA.md cpu: the CPU that took the case's samples (issue 39), added after the committed files",
    "context.config.alltoallv": "SCHEMA.md alltoallv: the routing axis of the alltoallv pattern (issue 34, MoE "
                                "dispatch and combine), added after the committed files",
    "results[].alltoallv": "SCHEMA.md alltoallv: an alltoallv case's routing and what it moves, as above",
    "context.processes": "SCHEMA.md context.processes: the run's processes (one, or one per rank under mpirun / "
                         "srun), added with multi-process runs; the committed files predate it",
    "context.started_at": "SCHEMA.md context.started_at: when the run started, with milliseconds; added after the "
                          "committed files",
    "context.finished_at": "SCHEMA.md context.finished_at: when the run finished its file, as above",
    "context.wall_s": "SCHEMA.md context.wall_s: the run's wall time on a monotonic clock, as above",
    "context.engines": "engine specs in the results context (engine_specs_json(), added with the typed engine options)",
    "context.machine.cpu": "the host backend's machine description (SCHEMA.md, context.machine, host); "
                           "the committed files are from the cuda backend",
    "context.machine.cpu_threads": "host machine description, as above",
    "context.machine.numa_nodes": "the machine's online NUMA nodes (host-memory endpoints), added after the committed files",
    "context.machine.host_ranks": "host machine description, as above",
    "results[].breakdown_us.tracer": "SCHEMA.md breakdown_us.tracer: where the engine times come from (the host engine's "
                                     "own stamps on this backend); the committed breakdown predates the field",
    "results[].overlap.compute.details.workers": "the host stream workload's details (threads); the committed "
                                                 "workloads ran on GPUs",
    "context.config.layout": "SCHEMA.md layout: the block-layout axis (host-endpoint and paged-block cases), added "
                             "after the committed files",
    "context.config.host_memory": "SCHEMA.md host_memory: the host-memory axis (kinds x NUMA requests), as above",
    "context.config.engines[].options.coalesce": "ce / ce-batch / sm option coalesce (block layouts), as above",
    "results[].options.coalesce": "ce / ce-batch / sm option coalesce, as above",
    "results[].layout": "SCHEMA.md layout: every record says how its bytes lie (contiguous or blocks), as above",
    "results[].per_block_us": "SCHEMA.md per_block_us: block layouts' time per block, as above",
    "results[].host_memory": "SCHEMA.md host_memory: host buffers of host-endpoint patterns, as above",
    "results[].setup_s": "SCHEMA.md setup_s: what setting a case up cost (issue 33: buffers kept across cases), added "
                         "after the committed files",
    "results[].setup": "SCHEMA.md setup: its parts and the buffers allocated or reused, as above",
    "results[].p50_interval_us": "SCHEMA.md \"The p50's interval\": the 95% interval of the p50 (issue 33, figures that "
                                 "say how sure they are), added after the committed files",
    "results[].noise": "SCHEMA.md: the p50 interval's half-width over the p50, as above",
    "results[].noisy": "SCHEMA.md: the interval wider than max_noise (or none: fewer than 6 samples), as above",
    "results[].algbw_interval_GBps": "SCHEMA.md: algbw at the p50 interval's ends, as above",
    "results[].busbw_interval_GBps": "SCHEMA.md: busbw at the p50 interval's ends, as above",
    "results[].sampling": "SCHEMA.md: how the samples were taken (fixed or adaptive, why it stopped), as above",
    "context.config.sampling": "SCHEMA.md context.config: the sampling mode and its settings, as above",
}

# Committed paths the host backend cannot write, with the reason. A path covers its subtree.
HOST_CANNOT = {
    "context.machine.devices[]": "GPU descriptions (the host backend's `devices` is an empty list)",
    "context.machine.peer_links": "GPU peer links (cuda / hip backends)",
    "context.machine.versions": "GPU runtime and driver versions (cuda / hip backends)",
    "context.power.source": "measured power: no host power source works here (see the docstring)",
    "context.power.window_s": "measured power, as above",
    "context.power.resolution_J": "measured power, as above",
    "context.power.channels": "measured power, as above",
    "results[].power": "measured power, as above",
    "results[].engine_details": "what GPU engines report about their path (lanes, copies, NCCL's copy-engine "
                                "evidence); the host engine reports nothing",
    "results[].overlap.compute.m": "the gemm workload (a GPU BLAS); the host has only `stream`",
    "results[].overlap.compute.n": "gemm workload, as above",
    "results[].overlap.compute.k": "gemm workload, as above",
    "results[].overlap.compute.dtype": "gemm workload, as above",
    "results[].overlap.compute.details.implementation": "the GPU workload's implementation (cuBLAS, copy kernel)",
}

OVERLAP = {"compute": "stream", "bytes": "8MiB", "duration_ms": 30, "rounds": 2}
CONFIG = {
    "name": "results-keys", "description": "every record feature of the host backend, tiny",
    "engines": ["host", "ce", "ce-batch", "sm", "nccl"], "iterations": 3, "warmup": 1, "pipeline_depth": 2,
    "power": {"source": "none", "window_s": 0.5},
    "sweeps": [
        {"patterns": ["copy", "bidir", "allgather", "alltoall"], "sizes": ["4KiB"], "timing": ["oneshot", "pipelined"],
         "in_place": [False, True], "rotate": [1, 2], "breakdown": True},
        {"patterns": ["allgather"], "sizes": ["16KiB"], "timing": ["oneshot"], "engines": ["host"], "overlap": OVERLAP},
        {"patterns": ["h2d", "d2h"], "sizes": ["64KiB"], "timing": ["oneshot"], "host_memory": {"kind": ["pinned", "pageable"]},
         "layout": ["contiguous", {"kind": "blocks", "block_bytes": "4KiB", "order": ["random", "strided"], "stride_bytes": "8KiB"}]},
        {"patterns": ["allgather"], "sizes": ["16KiB"], "timing": ["oneshot"], "engines": ["host"],
         "overlap": {"compute": "gemm"}},  # skipped on the host; its settings are in the context
        {"patterns": ["alltoallv"], "timing": ["oneshot"], "engines": ["host"],
         "alltoallv": {"tokens_per_rank": 4, "token_bytes": "1KiB", "splits": ["uniform", "zipf:1.2"]}},
    ],
}
# A failed record: a copy of 2 x 768 MiB of buffers, less than half of the free memory (so it is not
# skipped) but more than the address space its run is given (a run of its own: the limit must not
# starve the other cases' threads), so that an allocation fails.
FAILING = {"name": "results-keys-failed", "engines": ["host"], "patterns": ["copy"], "sizes": ["768MiB"],
           "timing": ["oneshot"], "iterations": 1, "warmup": 0}
# Adaptive sampling (a config without iterations): the sampling settings as numbers where fixed counts write null;
# with every sample kept (samples_us).
ADAPTIVE = {"name": "results-keys-adaptive", "engines": ["host"], "patterns": ["copy"], "sizes": ["4KiB"],
            "timing": ["oneshot"], "warmup": 1, "max_time": 0.05, "samples": True}
ADDRESS_SPACE = 1 << 30
FAILING_NEEDS_FREE = 4 << 30


def value_class(v):
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "bool"
    if isinstance(v, (int, float)):
        return "number"
    if isinstance(v, str):
        return "string"
    return "object" if isinstance(v, dict) else "list"


def walk(v, path, out):
    path = path.replace("context.config.sweeps[].", "context.config.", 1)
    out.setdefault(path, set()).add(value_class(v))
    if isinstance(v, dict):
        for k, x in v.items():
            walk(x, f"{path}.{k}" if path else k, out)
    elif isinstance(v, list):
        for x in v:
            walk(x, f"{path}[]", out)


def shape(doc, out):
    """path -> value classes of a results document (`schema`, `context...`, `results[]...`; the root is '')."""
    walk(doc, "", out)
    return out


def free_bytes():
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    return 0


def covered(path, table):
    return next((p for p in table if path == p or path.startswith(p + ".") or path.startswith(p + "[")), None)


def run_fresh(exe, tmp, config, address_space=None):
    """The results of `exe --backend host` on `config` (exit 0, or 1 where a case failed)."""
    cfg, out = os.path.join(tmp, f"{config['name']}.json"), os.path.join(tmp, f"{config['name']}-out.json")
    with open(cfg, "w") as f:
        json.dump(config, f)

    def limit():
        resource.setrlimit(resource.RLIMIT_AS, (address_space, address_space))

    p = subprocess.run([exe, "--backend", "host", "--config", cfg, "--out", out], capture_output=True, text=True,
                       timeout=120, preexec_fn=limit if address_space else None)
    if p.returncode not in (0, 1) or not os.path.exists(out):
        sys.exit(f"FAIL: dmabench exited {p.returncode}\n{p.stdout[-3000:]}\n{p.stderr[-3000:]}")
    with open(out) as f:
        return json.load(f)


def main():
    exe, committed_dir = sys.argv[1], sys.argv[2]
    committed = {}
    files = sorted(f for f in os.listdir(committed_dir) if f.endswith(".json"))
    for name in files:
        with open(os.path.join(committed_dir, name)) as f:
            shape(json.load(f), committed)
    # failed records have the keys of skipped ones (CaseExecution::result writes both before the numbers);
    # without the memory to force one, the comparison goes on without it
    failing = free_bytes() >= FAILING_NEEDS_FREE
    if not failing:
        print(f"note: less than {FAILING_NEEDS_FREE >> 30} GiB free: no failed record is forced")
    with tempfile.TemporaryDirectory() as tmp:
        docs = [run_fresh(exe, tmp, CONFIG), run_fresh(exe, tmp, ADAPTIVE)] + \
            ([run_fresh(exe, tmp, FAILING, ADDRESS_SPACE)] if failing else [])
    fresh = {}
    for doc in docs:
        shape(doc, fresh)
    records = [r for doc in docs for r in doc["results"]]

    problems = []
    # the sweeps made what they were meant to make
    by_status = {s: [r for r in records if r["status"] == s] for s in ("ok", "skipped", "failed")}
    for status, rs in by_status.items():
        if not rs and (status != "failed" or failing):
            problems.append(f"the fresh sweep has no {status} record (the key comparison would miss it)")
    wanted = {"in_place": any(r.get("in_place") for r in by_status["ok"]),  # .get: a missing key is reported below
              "rotate": any(r.get("rotate", 1) > 1 for r in by_status["ok"]),
              "pipelined": any(r.get("timing") == "pipelined" for r in by_status["ok"]),
              "overlap": any("error" not in r.get("overlap", {"error": 1}) for r in by_status["ok"]),
              "breakdown": any("breakdown_us" in r for r in by_status["ok"])}
    problems += [f"the fresh sweep has no ok record with {k}" for k, v in wanted.items() if not v]
    # the Python package's built-in pattern properties are what the program writes (issue 53: one owner, C++)
    packaged = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python", "dmabench", "patterns.json")
    with open(packaged, encoding="utf-8") as f:
        if json.load(f) != docs[0]["context"].get("patterns"):
            problems.append("python/dmabench/patterns.json differs from the program's context.patterns: rewrite it from "
                            "a fresh results file (json.dump(doc['context']['patterns'], f, indent=1))")
    if by_status["failed"] and "bad_alloc" not in by_status["failed"][0]["reason"]:
        problems.append(f"unexpected failure: {by_status['failed'][0]['name']}: {by_status['failed'][0]['reason']}")

    # 1. nothing new or renamed
    for path in sorted(fresh):
        if covered(path, NEW):
            continue
        if path not in committed:
            problems.append(f"new key path {path} ({'/'.join(sorted(fresh[path]))}): in no committed file; a rename? "
                            "(a deliberate new key goes into NEW with its reason)")
        elif not fresh[path] <= committed[path]:
            problems.append(f"{path} is {'/'.join(sorted(fresh[path] - committed[path]))} here, "
                            f"{'/'.join(sorted(committed[path]))} in the committed files")
    # 2. nothing dropped
    for path in sorted(committed):
        if path not in fresh and not covered(path, HOST_CANNOT):
            problems.append(f"committed key path {path} is missing from the fresh file (dropped or renamed?)")
    for table, name in ((NEW, "NEW"), (HOST_CANNOT, "HOST_CANNOT")):  # no stale entries
        source = fresh if table is NEW else committed
        for p in table:
            if not any(covered(q, {p: 1}) for q in source):
                problems.append(f"{name} lists {p}, which the {'fresh' if table is NEW else 'committed'} files lack")

    if problems:
        sys.exit("FAIL: results keys\n  " + "\n  ".join(problems))
    print(f"PASS results keys: {len(fresh)} key paths of fresh host sweeps ({len(records)} records: "
          f"{', '.join(f'{len(v)} {k}' for k, v in by_status.items())}) against the {len(committed)} key "
          f"paths of {len(files)} committed files; {len(NEW)} NEW entries, {len(HOST_CANNOT)} HOST_CANNOT entries "
          "(power among them: no host power source works here)")


if __name__ == "__main__":
    main()
