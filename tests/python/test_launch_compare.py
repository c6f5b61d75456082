"""scripts/launch_compare.py: the table of one process against one process per GPU, from planted files
(--no-run); the runs themselves go through mpirun in tests/cli_mpi_test.py."""
import copy
import json
import os
import subprocess
import sys

from test_scripts import SCRIPTS, document, result, run


def side(p50s, spread=0.02):
    """A results document with the cases of the test, at the given p50 per case."""
    cases = [("copy", "ce", 1024, "oneshot"), ("allgather", "ce", 1 << 20, "pipelined"), ("alltoall", "nccl", 1 << 26, "oneshot"),
             ("allgather", "sm", 1 << 30, "oneshot")]
    return document([result(p, e, s, t, v, spread=spread) for (p, e, s, t), v in zip(cases, p50s)])


def plant(tmp_path, docs):
    for name, doc in docs.items():
        (tmp_path / f"{name}.json").write_text(doc if isinstance(doc, str) else json.dumps(doc))
    return run("launch_compare.py", "--out", tmp_path, "--no-run")


def rows(stdout):
    """The table's rows as {(pattern, variant, size, timing): [cells]}."""
    out = {}
    for line in stdout.splitlines():
        cells = [c.strip() for c in line.strip("|").split("|")]
        if line.startswith("| ") and cells[0] != "pattern" and not cells[0].startswith("---"):
            out[tuple(cells[:4])] = cells[4:]
    return out


def test_verdicts_noise_and_the_large_size_summary(tmp_path):
    # copy 1 KiB: mpi 30% slower with 2% spreads and steady repeats -> mpi slower
    # allgather 1 MiB: mpi 20% slower, but the one-process repeats differ by 40% -> same (run-to-run noise)
    # alltoall 64 MiB: 3% slower (inside the 5% threshold) -> same
    # allgather 1 GiB: 10% faster -> mpi faster; the largest difference at >= 64 MiB
    p = plant(tmp_path, {"one-1": side([10.0, 100.0, 1000.0, 3000.0]), "one-2": side([10.1, 140.0, 1000.0, 3000.0]),
                         "mpi-1": side([13.0, 144.0, 1030.0, 2700.0]), "mpi-2": side([13.1, 144.0, 1030.0, 2700.0])})
    assert p.returncode == 0, p.stderr
    got = rows(p.stdout)
    slow = got[("copy", "ce", "1 KiB", "oneshot")]
    assert slow[0] == "10.05" and slow[1] == "13.05" and slow[2] == "1.299" and slow[-1] == "mpi slower", slow
    noisy = got[("allgather", "ce", "1 MiB", "pipelined")]
    assert noisy[-2] == "40.0%" and noisy[-1] == "same", noisy  # (140 - 100) / 100 between the repeats
    assert got[("alltoall", "nccl", "64 MiB", "oneshot")][-1] == "same"
    fast = got[("allgather", "sm", "1 GiB", "oneshot")]
    assert fast[2] == "0.900" and fast[-1] == "mpi faster", fast
    # busbw from the files: allgather 1 GiB per rank on 2 ranks moves 2 GiB, busbw = algbw / 2
    assert abs(float(fast[3]) - (2 << 30) / 3000.0 / 1e3 / 2) < 0.01 and abs(float(fast[4]) - (2 << 30) / 2700.0 / 1e3 / 2) < 0.01
    head = p.stdout.splitlines()[0]
    assert "4 cases in every file (2 one-process and 2 multi-process runs)" in head
    assert "1 mpi faster, 1 mpi slower, 2 same" in head
    assert "at 64 MiB per rank and above: 2 cases, largest |mpi/one - 1| 10.0% (allgather sm 1 GiB oneshot)" in head
    assert (tmp_path / "compare.md").read_text() == p.stdout


def test_a_case_not_ok_on_one_side_and_files_that_are_missing_or_malformed(tmp_path):
    one = side([10.0, 100.0, 1000.0, 3000.0])
    mpi = copy.deepcopy(one)
    mpi["results"][2] = result("alltoall", "nccl", 1 << 26, "oneshot", 0, status="failed", reason="rank 1: out of memory")
    p = plant(tmp_path, {"one-1": one, "mpi-1": mpi})
    assert p.returncode == 0, p.stderr
    row = rows(p.stdout)[("alltoall", "nccl", "64 MiB", "oneshot")]
    assert row[-1] == "mpi failed: rank 1: out of memory" and row[0] == "–", row
    assert "1 not compared" in p.stdout.splitlines()[0]
    # no multi-process file: exit 2, one line naming what is missing
    os.remove(tmp_path / "mpi-1.json")
    p = run("launch_compare.py", "--out", tmp_path, "--no-run")
    assert p.returncode == 2 and p.stderr.startswith("launch_compare.py: error: ") and "no mpi-1.json" in p.stderr
    assert len(p.stderr.splitlines()) == 1
    # a malformed file: the reader's one line
    p = plant(tmp_path, {"mpi-1": '{"schema": "dmabench/1", "results": ['})
    assert p.returncode == 2 and "cannot read" in p.stderr and "mpi-1.json" in p.stderr and "Traceback" not in p.stderr
    # nothing in common
    p = plant(tmp_path, {"mpi-1": document([result("bidir", "host", 8, "pipelined", 1.0)])})
    assert p.returncode == 2 and "no case is in every file of both sides" in p.stderr


def test_bad_arguments(tmp_path):
    real = tmp_path / "file"
    real.write_text("{}")
    for args, words in ((["--np", "0"], "--np 0"), (["--repeat", "0"], "--repeat 0"), (["--threshold", "-1"], "--threshold"),
                        (["--large", "lots"], "not a size"), (["--dmabench", str(tmp_path / "nope")], "no such file"),
                        (["--launcher", ""], "--launcher is empty")):
        p = run("launch_compare.py", "--out", tmp_path / "o", "--config", real, "--dmabench", real, *args)
        assert p.returncode == 2 and words in p.stderr and len(p.stderr.splitlines()) == 1, (args, p.stderr)


def test_runs_alternate_pass_their_arguments_and_replace_an_earlier_run(tmp_path):
    # a stand-in for dmabench writes a planted document to its --out and logs its arguments; the launcher is
    # `env SIDE=mpi`, so each run says which side started it
    doc = tmp_path / "doc.json"
    doc.write_text(json.dumps(side([10.0, 100.0, 1000.0, 3000.0])))
    fake = tmp_path / "fake-dmabench"
    fake.write_text(f"""#!/bin/sh
echo "${{SIDE:-one}} $*" >> {tmp_path / 'calls'}
while [ $# -gt 0 ]; do [ "$1" = --out ] && cp {doc} "$2"; shift; done
[ "${{SIDE:-one}}" = mpi ] && [ -n "$FAIL_MPI" ] && exit 3
exit 0
""")
    fake.chmod(0o755)
    out = tmp_path / "out"
    out.mkdir()
    (out / "mpi-3.json").write_text("left by an earlier run with --repeat 3")
    args = ["--out", out, "--config", doc, "--dmabench", fake, "--launcher", "env SIDE=mpi", "--", "--backend", "host"]
    p = run("launch_compare.py", *args)
    assert p.returncode == 0, p.stderr
    assert "removed 1 results files of an earlier run" in p.stderr and not (out / "mpi-3.json").exists()
    calls = (tmp_path / "calls").read_text().splitlines()
    assert [c.split()[0] for c in calls] == ["one", "mpi", "one", "mpi"]
    assert all(c.endswith("--backend host --benchmark_color=false") and f"--out {out}/" in c for c in calls), calls
    assert [c.split("--out ")[1].split()[0].rsplit("/", 1)[1] for c in calls] == ["one-1.json", "mpi-1.json", "one-2.json",
                                                                                   "mpi-2.json"]
    assert "4 cases in every file (2 one-process and 2 multi-process runs); 4 same" in p.stdout
    log = (out / "runs.log").read_text()
    assert log.count("$ ") == 4 and "# mpi-2: exit 0 after" in log
    # a side that fails: every run still runs, exit 1, the table from the files there are
    p = subprocess.run([sys.executable, os.path.join(SCRIPTS, "launch_compare.py"), *map(str, args)],
                       capture_output=True, text=True, timeout=120, env=dict(os.environ, FAIL_MPI="1"))
    assert p.returncode == 1 and "mpi-1: exit 3 after" in p.stderr and "mpi-2: exit 3 after" in p.stderr, p.stderr
    assert "4 same" in p.stdout
    # a link planted at runs.log (a fixed name, in a directory that may be shared): refused, its target untouched
    (out / "runs.log").unlink()
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n")
    os.symlink(victim, out / "runs.log")
    p = run("launch_compare.py", *args)
    assert p.returncode == 2 and p.stderr.count("\n") == 1 and "runs.log: a symlink" in p.stderr, p.stderr
    assert victim.read_text() == "precious\n" and os.path.islink(out / "runs.log")
    assert (out / "mpi-2.json").exists(), "files removed though the run was refused"

