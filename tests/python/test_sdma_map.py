"""scripts/sdma_map.py on a fake kernel-driver topology."""
import os
import subprocess
import sys

SCRIPT = os.path.join(os.path.dirname(__file__), "..", "..", "scripts", "sdma_map.py")


def write(path, **props):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.writelines(f"{k} {v}\n" for k, v in props.items())


def test_map_from_recommended_masks(tmp_path):
    root = tmp_path / "nodes"
    write(str(root / "0" / "properties"), simd_count=0)  # the CPU
    for node in (1, 2):
        write(str(root / str(node) / "properties"), simd_count=1216, num_sdma_engines=2, num_sdma_xgmi_engines=14)
    write(str(root / "1" / "io_links" / "0" / "properties"), node_to=0, recommended_sdma_engine_id_mask=1)
    write(str(root / "1" / "io_links" / "1" / "properties"), node_to=2, recommended_sdma_engine_id_mask=0b1100)
    write(str(root / "2" / "io_links" / "0" / "properties"), node_to=1)  # an older kernel: no mask
    p = subprocess.run([sys.executable, SCRIPT, "--root", str(root)], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    assert [l for l in p.stdout.splitlines() if not l.startswith("#")] == ["0,2,1"]
    assert "GPU 1 -> GPU 0" in p.stderr


def test_no_driver(tmp_path):
    p = subprocess.run([sys.executable, SCRIPT, "--root", str(tmp_path / "absent")], capture_output=True, text=True)
    assert p.returncode == 1 and "does not exist" in p.stderr
