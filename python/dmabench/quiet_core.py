"""The quiet core's figures on one GPU (issue 50): kv-pool rounds of results/h200x1/run-gate.sh, packed.

usage (a generated block, dmabench.generated): `quiet-core spread|slow|probe KV.tgz`
  KV.tgz holds kv/quiet-K.json (one kv-pool process each, --cpu-choice quiet, the default), kv/off-K.json (the same
  with --cpu-choice off, the first rounds) and kv/probe-K.jsonl (tools/vcpu_probe.cu --cpus quiet after process K).
  spread  per mode and engine, the (case, process) records of paged copies at 4-64 KiB within 1.1x of the case's
          fastest process (issue 50's target for ce-batch: 90%);
  slow    the quiet records beyond 1.1x with their CPU, shared samples and what the choice did;
  probe   the medians over processes against the probe's (1024 x 4 KiB pinned, a 4 GiB pool): ce-batch against its
          cudaMemcpyBatchAsync, ce against its per-page loop (target: within 5%).
"""
import json
import re
import statistics
import tarfile

from .text import ResultsError, table

SMALL = {4096, 16384, 65536}
ENGINES = ("ce-batch", "ce", "sm")


def read_pack(path):
    """{member name: bytes} of the kv/ files in the pack."""
    try:
        with tarfile.open(path, "r:gz") as t:
            return {m.name: t.extractfile(m).read() for m in t.getmembers() if m.isfile() and m.name.startswith("kv/")}
    except (OSError, tarfile.TarError) as e:
        raise ResultsError(f"{path}: not a kv pack ({e})") from None


def processes(pack, mode):
    """Per process (in round order): {name: ok record}."""
    names = sorted((int(m.group(1)), n) for n in pack for m in [re.fullmatch(rf"kv/{mode}-(\d+)\.json", n)] if m)
    return [{r["name"]: r for r in json.loads(pack[n])["results"] if r["status"] == "ok"} for _, n in names]


def paged_small(r, engine):
    lay = r.get("layout") or {}
    return r["engine"] == engine and lay.get("kind") == "blocks" and lay.get("block_bytes") in SMALL


def spread(procs, engine):
    """(records within 1.1x of their case's fastest process, records, [(name, process, ratio, record)] beyond)."""
    within = total = 0
    slow = []
    for n in sorted({n for p in procs for n, r in p.items() if paged_small(r, engine)}):
        have = [(k + 1, p[n]) for k, p in enumerate(procs) if n in p]
        fastest = min(r["latency_us"]["p50"] for _, r in have)
        for k, r in have:
            ratio = r["latency_us"]["p50"] / fastest
            total += 1
            within += ratio <= 1.1
            if ratio > 1.1:
                slow.append((n, k, ratio, r))
    return within, total, slow


def spread_table(pack):
    rows = []
    for mode in ("quiet", "off"):
        procs = processes(pack, mode)
        for engine in ENGINES:
            within, total, _ = spread(procs, engine)
            if total:
                rows.append([f"--cpu-choice {mode}", engine, str(len(procs)), f"{within} of {total}",
                             f"{100 * within / total:.0f}%"])
    return table(["mode", "engine", "processes", "records within 1.1x of the case's fastest", "share"], rows)


def slow_table(pack):
    rows = []
    procs = processes(pack, "quiet")
    for engine in ENGINES:
        for n, k, ratio, r in sorted(spread(procs, engine)[2], key=lambda s: -s[2]):
            c, cs = r.get("cpu_choice") or {}, r.get("core_share") or {}
            rows.append([f"`{n}`", str(k), f"{ratio:.2f}", str(r.get("cpu")), f"{cs.get('shared')}/{cs.get('probed')}",
                         str(c.get("moves")), str(c.get("surveys")), str(c.get("waits"))])
    return table(["case", "process", "x fastest", "cpu", "shared samples", "moves", "surveys", "waits"], rows)


def probe_table(pack):
    procs = processes(pack, "quiet")
    probes = []
    for n in sorted(x for x in pack if re.fullmatch(r"kv/probe-\d+\.jsonl", x)):
        lines = [json.loads(x) for x in pack[n].decode().splitlines() if x.strip()]
        probes += [x for x in lines if x.get("test") == "vcpu" and x.get("valid", True)][:1]
    rows = []
    for pattern in ("d2h", "h2d"):
        for engine, key in (("ce-batch", f"batch_{pattern}_us"), ("ce", f"loop_{pattern}_us")):
            name = f"{pattern}/{engine}/oneshot/dev=0/4MiB/host=pinned,numa=local/blocks=1024x4KiB,random,pool=4GiB"
            mine = [p[name]["latency_us"]["p50"] for p in procs if name in p]
            if mine and probes:
                a, b = statistics.median(mine), statistics.median(x[key] for x in probes)
                rows.append([f"`{name}`", f"`{key}`", f"{a:.1f} ({len(mine)})", f"{b:.1f} ({len(probes)})",
                             f"{a / b:.3f}"])
    return table(["dmabench case", "probe figure", "dmabench median p50 µs (processes)", "probe median µs (processes)",
                  "dmabench / probe"], rows)


def generated_block(args, root):
    """The `quiet-core` command of dmabench.generated."""
    import os
    kinds = {"spread": spread_table, "slow": slow_table, "probe": probe_table}
    if len(args) != 2 or args[0] not in kinds:
        raise ResultsError(f"quiet-core {' '.join(args)}: expected quiet-core spread|slow|probe KV.tgz")
    return kinds[args[0]](read_pack(os.path.join(root, args[1])))
