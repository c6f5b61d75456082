"""Results files stored compressed (results/h200x1/crossover/crossover.json.xz, `xz -9e`): every reader takes a
`.json.xz` (or `.json.gz`) as its `.json`, and a corrupt one is one line and exit 2 like any bad file."""
import gzip
import json
import lzma
import os
import subprocess
import sys

import pytest

from test_hostile_input import one_line
from test_scripts import H200, PACKAGE_ENV, run

from dmabench import ResultsError, load
from dmabench.files import open_text, read_bytes
from dmabench.generated import levels_spread_table

SOURCE = os.path.join(H200, "power.json")  # a small committed results file


@pytest.fixture
def copies(tmp_path):
    """{"json": plain, "xz": xz -9e, "gz": gzip}: the same results file three ways."""
    data = open(SOURCE, "rb").read()
    paths = {"json": tmp_path / "r.json", "xz": tmp_path / "r.json.xz", "gz": tmp_path / "r.json.gz"}
    paths["json"].write_bytes(data)
    paths["xz"].write_bytes(lzma.compress(data, preset=9 | lzma.PRESET_EXTREME))
    paths["gz"].write_bytes(gzip.compress(data))
    return paths


def test_a_compressed_results_file_loads_as_its_json(copies):
    plain = load(copies["json"])
    assert load(copies["xz"]) == plain and load(os.fspath(copies["gz"])) == plain
    assert read_bytes(copies["xz"]) == copies["json"].read_bytes()
    with open_text(copies["xz"]) as f:
        assert json.load(f) == json.loads(copies["json"].read_text(encoding="utf-8"))


def test_summarize_reads_a_json_xz(copies):
    plain = run("summarize.py", copies["json"])
    assert plain.returncode == 0 and plain.stdout, plain.stderr
    for kind in ("xz", "gz"):
        p = run("summarize.py", copies[kind])
        assert (p.returncode, p.stdout, p.stderr) == (0, plain.stdout, plain.stderr), (kind, p.stderr)
    p = subprocess.run([sys.executable, "-m", "dmabench", "summarize", os.fspath(copies["xz"])], capture_output=True,
                       text=True, env=PACKAGE_ENV, timeout=600)
    assert (p.returncode, p.stdout) == (0, plain.stdout), p.stderr


def test_a_corrupt_or_truncated_xz_is_one_line(tmp_path, copies):
    xz = copies["xz"].read_bytes()
    bad = {"garbage.json.xz": b"not xz at all", "truncated.json.xz": xz[:len(xz) // 2],
           "flipped.json.xz": xz[:40] + bytes([xz[40] ^ 0xff]) + xz[41:], "empty.json.xz": b"",
           "garbage.json.gz": b"not gzip"}
    for name, data in bad.items():
        path = tmp_path / name
        path.write_bytes(data)
        kind = "xz" if name.endswith(".xz") else "gzip"
        one_line(run("summarize.py", path), "summarize.py", f"cannot read {path}: not valid {kind} data (")
        with pytest.raises(ResultsError, match=f"not valid {kind} data"):
            load(path)
        with pytest.raises(ResultsError, match=f"^{path}: not valid {kind} data"):  # a reader through open_text
            levels_spread_table([f"x={path}"], "/")


def test_the_size_limit_holds_decompressed(tmp_path):
    path = tmp_path / "big.json.xz"
    path.write_bytes(lzma.compress(b" " * (3 << 20)))  # a few KiB that decompress to 3 MiB
    with pytest.raises(ResultsError, match=r"more than 1 MiB decompressed; a results file is at most 1 MiB"):
        read_bytes(path, limit=1 << 20)
    assert len(read_bytes(path, limit=4 << 20)) == 3 << 20


def test_history_add_of_a_directory_finds_a_json_xz(tmp_path, copies):
    os.remove(copies["json"])
    os.remove(copies["gz"])
    p = run("history.py", "add", tmp_path, "--db", tmp_path / "h.sqlite")
    assert p.returncode == 0 and "1 of 1 runs added" in p.stdout and "r.json.xz" in p.stdout, (p.stdout, p.stderr)
