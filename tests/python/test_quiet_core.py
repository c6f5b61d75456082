"""dmabench.quiet_core, the quiet core's H200 tables, on a small synthetic pack: the 1.1x share per mode and engine,
the slow records, the probe's medians, and bad input."""
import io
import json
import tarfile

import pytest

from dmabench import quiet_core
from dmabench.text import ResultsError


def record(engine, p50, pattern="d2h", blocks=1024, block=4096, kind="pinned"):
    name = f"{pattern}/{engine}/oneshot/dev=0/4MiB/host={kind},numa=local/blocks={blocks}x4KiB,random,pool=4GiB"
    return {"name": name, "status": "ok", "engine": engine, "latency_us": {"p50": p50},
            "layout": {"kind": "blocks", "block_bytes": block}, "cpu": 3,
            "core_share": {"shared": 0, "probed": 30}, "cpu_choice": {"moves": 1, "surveys": 1, "waits": 2}}


def pack(tmp_path, files):
    path = tmp_path / "kv.tgz"
    with tarfile.open(path, "w:gz") as t:
        for name, text in files.items():
            data = text.encode()
            info = tarfile.TarInfo(name)
            info.size = len(data)
            t.addfile(info, io.BytesIO(data))
    return path


def test_tables_from_a_pack(tmp_path):
    runs = {1: [100, 50], 2: [105, 80], 3: [130, 51]}  # ce-batch d2h and ce d2h p50 per process
    files = {f"kv/quiet-{k}.json": json.dumps({"results": [record("ce-batch", a), record("ce", b)]})
             for k, (a, b) in runs.items()}
    files["kv/off-1.json"] = json.dumps({"results": [record("ce-batch", 100)]})
    files["kv/probe-1.jsonl"] = json.dumps({"test": "vcpu", "batch_d2h_us": 100.0, "loop_d2h_us": 40.0,
                                            "batch_h2d_us": 1.0, "loop_h2d_us": 1.0, "valid": True}) + "\n"
    p = pack(tmp_path, files)
    spread = quiet_core.generated_block(["spread", str(p)], "/")
    assert "| --cpu-choice quiet | ce-batch | 3 | 2 of 3 | 67% |" in spread  # 130 is 1.3x the fastest 100
    assert "| --cpu-choice quiet | ce | 3 | 2 of 3 | 67% |" in spread  # 80 is 1.6x 50
    assert "| --cpu-choice off | ce-batch | 1 | 1 of 1 | 100% |" in spread
    slow = quiet_core.generated_block(["slow", str(p)], "/")
    assert "| 3 | 1.30 | 3 | 0/30 | 1 | 1 | 2 |" in slow and "| 2 | 1.60 |" in slow
    probe = quiet_core.generated_block(["probe", str(p)], "/")
    assert "| `batch_d2h_us` | 105.0 (3) | 100.0 (1) | 1.050 |" in probe
    assert "| `loop_d2h_us` | 51.0 (3) | 40.0 (1) | 1.275 |" in probe


def test_bad_input(tmp_path):
    with pytest.raises(ResultsError, match="expected quiet-core spread"):
        quiet_core.generated_block(["nope", "x.tgz"], "/")
    (tmp_path / "x.tgz").write_text("not a tar")
    with pytest.raises(ResultsError, match="not a kv pack"):
        quiet_core.generated_block(["spread", str(tmp_path / "x.tgz")], "/")
