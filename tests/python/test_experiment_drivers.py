"""scripts/experiment.sh, the preamble the experiment drivers (results/<machine>/run-*.sh) share (issue 53): its
functions do what its header says, and no driver writes its own copy of them again."""
import os
import re
import subprocess
import tarfile

from test_scripts import ROOT, tracked

LIBRARY = os.path.join(ROOT, "scripts", "experiment.sh")


def bash(script, env, cwd=None):
    return subprocess.run(["bash", "-c", f'source "{LIBRARY}"\n{script}'], capture_output=True, text=True, timeout=60,
                          env=dict(os.environ, **env), cwd=cwd)


def test_the_preamble_sets_the_run_and_packs_on_exit(tmp_path):
    out, work = tmp_path / "out", tmp_path / "work"
    p = bash('experiment trial "one two" secret\n'
             'want one && echo "one wanted"; want three || echo "three not"; want tw || echo "tw not"\n'
             'log "a step"; echo kept > "$WORK/kept.txt"; echo hidden > "$WORK/secret"\n'
             'echo "rev=$REV b=$B nvls=$NCCL_NVLS_ENABLE steps=$STEPS"',
             {"OUT": str(out), "WORK": str(work), "DMABENCH_GIT_REVISION": "abc123", "STEPS": ""})
    assert p.returncode == 0, p.stderr
    assert "one wanted" in p.stdout and "three not" in p.stdout and "tw not" in p.stdout
    assert "rev=abc123 b=build/dmabench nvls=0 steps=one two" in p.stdout  # STEPS empty: the default
    assert re.search(r"^\[\d\d:\d\d:\d\d\] a step$", (work / "steps.log").read_text(), re.M)
    with tarfile.open(out / "trial.tar.gz") as t:  # packed at exit, the exclude left out
        names = {os.path.normpath(n) for n in t.getnames()}
    assert {"kept.txt", "steps.log"} <= names and "secret" not in names, names


def test_slot_keeps_a_step_within_the_budget(tmp_path):
    env = {"OUT": str(tmp_path), "WORK": str(tmp_path / "w")}
    p = bash('experiment s "x"\necho "$(slot 300 30)"', env)  # no BUDGET: the step's own limit
    assert p.stdout.split() == ["300"], p.stdout + p.stderr
    # the clock held at the start (date is read in experiment and again in slot: a second may tick between them)
    p = bash('BUDGET=100 PACK_S=20\nexperiment s "x"\ndate() { echo "$T0"; }\necho "$(slot 300 30) $(slot 60 90)"', env)
    assert p.stdout.split() == ["80", "0"], p.stdout + p.stderr  # 100 s less the packing; under the minimum: 0
    p = bash('BUDGET=100 PACK_S=20\nexperiment s "x"\ndate() { echo $((T0 + 50)); }\necho "$(slot 300 31) $(slot 60 10)"',
             env)
    assert p.stdout.split() == ["0", "30"], p.stdout + p.stderr  # 50 s gone: 30 left; a step that needs 31 gets none


def test_gpu_check_keeps_each_machines_log_apart(tmp_path):
    """Two machines' logs of one revision (an H200's and an H100's folder, named from nvidia-smi) both reach the
    archive under their machine's name; an older revision's log does not; the script's status is returned."""
    tree = tmp_path / "tree"
    (tree / "scripts").mkdir(parents=True)
    (tree / "scripts" / "gpu-check.sh").write_text(
        'for m in h200x1 h100-80gb-hbm3x1; do mkdir -p "results/$m/gpu-check"\n'
        '  echo "$m log of $DMABENCH_GIT_REVISION" > "results/$m/gpu-check/$DMABENCH_GIT_REVISION.log"; done\n'
        'echo "100% tests passed"; exit "${FAKE_RC:-0}"\n')
    (tree / "results" / "old" / "gpu-check").mkdir(parents=True)
    (tree / "results" / "old" / "gpu-check" / "0ld.log").write_text("another revision")
    work = tmp_path / "work"
    env = {"OUT": str(tmp_path), "WORK": str(work), "DMABENCH_GIT_REVISION": "abc123"}
    p = bash('experiment g "gpucheck"\ngpu_check 30; echo "status $?"', env, cwd=tree)
    assert "100% tests passed" in p.stdout and "status 0" in p.stdout, p.stdout + p.stderr
    assert sorted(f.name for f in work.glob("gpu-check-*.log")) == ["gpu-check-h100-80gb-hbm3x1.log",
                                                                     "gpu-check-h200x1.log"]
    assert (work / "gpu-check-h200x1.log").read_text() == "h200x1 log of abc123\n"
    assert "gpu-check rc=0" in (work / "steps.log").read_text()
    p = bash('experiment g "gpucheck"\ngpu_check 30; echo "status $?"', dict(env, FAKE_RC="3"), cwd=tree)
    assert "status 3" in p.stdout and "gpu-check rc=3" in (work / "steps.log").read_text(), p.stdout + p.stderr


def test_no_driver_writes_the_preamble_again():
    drivers = [f for f in tracked("results") if re.search(r"/run-[^/]+\.sh$", f)]
    assert drivers
    for f in drivers:
        text = open(f, encoding="utf-8").read()
        assert 'scripts/experiment.sh"' in text and re.search(r"^experiment \S+ ", text, re.M), f
        for own in (r"^log\(\)", r"^want\(\)", r"^pack\(\)", r"^slot\(\)", r"^OUT=", r"^WORK=", r"^trap pack",
                    r"bash scripts/gpu-check\.sh"):
            assert not re.search(own, text, re.M), (f, own)
