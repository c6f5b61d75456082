"""scripts/setup_report.py: setup per case against pool size, from records with setup_s (results/SCHEMA.md)."""
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPT = os.path.join(ROOT, "scripts", "setup_report.py")
MiB = 1 << 20


def run(*args):
    return subprocess.run([sys.executable, SCRIPT, *map(str, args)], capture_output=True, text=True, timeout=120)


def record(pool, blocks, setup_s, allocated, status="ok"):
    size = blocks * 64 * 1024
    return {"name": f"h2d/ce/oneshot/dev=0/{size}/blocks={blocks}x64KiB,random,pool={pool}", "pattern": "h2d", "engine": "ce",
            "options": {}, "devices": [0], "ranks": 1, "bytes": size, "bytes_per_rank": size, "timing": "oneshot",
            "pipeline_depth": 1, "warmup": 1, "rotate": 1, "status": status, "reason": "", "validated": status == "ok",
            "iterations": 10, "clock": "host",
            "latency_us": {"min": 90, "p50": 100, "mean": 100, "p95": 110, "p99": 120, "max": 130, "stddev": 5},
            "algbw_GBps": size / 100e3, "busbw_GBps": size / 100e3,
            "layout": {"kind": "blocks", "block_bytes": 65536, "blocks": blocks, "order": "random", "pool_bytes": pool},
            "host_memory": {"kind": "pinned", "numa": "local"},
            "setup_s": setup_s, "setup": {"prepare_s": setup_s / 4, "validate_s": setup_s / 2,
                                          "buffers_allocated": 2 if allocated else 0, "buffers_reused": 0 if allocated else 2,
                                          "bytes_allocated": 2 * pool if allocated else 0}}


def doc(results):
    return {"schema": "dmabench/1", "context": {"date": "2026-12-03T00:00:00Z", "host": "t", "backend": "cuda",
                                                 "dmabench": {"version": "0", "git_revision": "t"},
                                                 "machine": {"devices": []}}, "results": results}


def test_setup_per_pool_size_and_the_fit(tmp_path):
    # later cases: 0.01 s + 0.5 s per GiB touched + 0.02 s per GiB of pool, exactly
    rs = []
    for pool in (256 * MiB, 1024 * MiB, 4096 * MiB):
        rs.append(record(pool, 1024, 2.0 * pool / (1 << 30) + 0.5, True))
        for blocks in (64, 1024, 64, 1024):
            touched = blocks * 64 * 1024 / (1 << 30)
            rs.append(record(pool, blocks, 0.01 + 0.5 * touched + 0.02 * pool / (1 << 30), False))
    path = tmp_path / "r.json"
    path.write_text(json.dumps(doc(rs)))
    p = run(path, "--json")
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)
    assert [r["pool_bytes"] for r in out["rows"]] == [256 * MiB, 1024 * MiB, 4096 * MiB]
    first = out["rows"][2]
    assert first["allocating_cases"] == 1 and first["cases"] == 5
    assert abs(first["first_setup_s"] - 8.5) < 1e-9
    assert abs(out["fit"]["intercept_s"] - 0.01) < 1e-6
    assert abs(out["fit"]["per_touched_GiB_s"] - 0.5) < 1e-6
    assert abs(out["fit"]["per_pool_GiB_s"] - 0.02) < 1e-6
    md = run(path)
    assert md.returncode == 0 and "| 4 GiB | pinned | 5 |" in md.stdout and "per GiB of pool" in md.stdout


def test_a_file_without_setup_is_bad_input(tmp_path):
    r = record(MiB, 64, 0.1, True)
    del r["setup"], r["setup_s"]
    path = tmp_path / "old.json"
    path.write_text(json.dumps(doc([r])))
    p = run(path)
    assert p.returncode == 2 and p.stderr.startswith("setup_report.py: error:") and "setup_s" in p.stderr
    assert run(tmp_path / "missing.json").returncode == 2
