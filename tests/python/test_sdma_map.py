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


def test_a_gpu_whose_render_node_cannot_be_opened_gets_no_id(tmp_path):
    """libhsakmt (and so HIP) numbers only the GPUs whose render node it can open: in a container exposing GPUs 1 and 3
    of sysfs nodes 1..3, HIP's GPU 1 is sysfs node 3, so the map must say 0,<engine of 1->3>,1, not 1->2's engine."""
    root, dri = tmp_path / "nodes", tmp_path / "dri"
    write(str(root / "0" / "properties"), simd_count=0)
    for node in (1, 2, 3):
        write(str(root / str(node) / "properties"), simd_count=1216, drm_render_minor=127 + node)
        for other in (1, 2, 3):
            if other != node:
                write(str(root / str(node) / "io_links" / str(other) / "properties"), node_to=other,
                      recommended_sdma_engine_id_mask=1 << (2 * node + other))
    os.makedirs(dri)
    for minor in (128, 130):  # node 2's renderD129 is not here
        open(dri / f"renderD{minor}", "w").close()
    p = subprocess.run([sys.executable, SCRIPT, "--root", str(root), "--dri", str(dri)], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    assert sorted(l for l in p.stdout.splitlines() if not l.startswith("#")) == ["0,5,1", "1,7,0"]
    assert "node 2:" in p.stderr and "renderD129" in p.stderr
