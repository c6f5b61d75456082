"""docs/ci.md's GitHub Actions recipe, executed (issue 52): its `run:` steps, taken from the page's YAML, run in order,
each in a fresh `bash --noprofile --norc -eo pipefail` shell (as GitHub runs a `run:` step) in a copy of the tree
with the job's `env:`, on the host backend. Steps that are GitHub actions (`uses:`: checkout, cache, upload, the
JUnit report) are skipped with their reason; the build step is stood in for by the program the test suite built
(DMABENCH_BINARY, as ctest's `scripts` test passes it, else build/dmabench) placed at build/dmabench. A failing step
fails the test."""
import os
import re
import shutil
import subprocess
import sys

import pytest

from test_scripts import ROOT, tracked

yaml = pytest.importorskip("yaml", reason="PyYAML (Debian: python3-yaml)")
CI_MD = os.path.join(ROOT, "docs", "ci.md")


def github_workflow():
    text = open(CI_MD, encoding="utf-8").read()
    block = re.search(r"^## GitHub Actions\n```yaml\n(.*?)^```", text, re.S | re.M)
    assert block, "docs/ci.md: no ```yaml block under '## GitHub Actions'"
    return yaml.safe_load(block.group(1))


def plan(workflow):
    """[(name, script or None, why skipped)] of the workflow's one job's steps, in order."""
    (job,) = workflow["jobs"].values()
    steps = []
    for step in job["steps"]:
        name = step.get("name") or step.get("uses") or step["run"].splitlines()[0]
        if "uses" in step:
            steps.append((name, None, f"a GitHub action ({step['uses']}): needs GitHub"))
        elif re.match(r"cmake -B build\b", step["run"]):
            steps.append((name, None, "the build: the test stands in the program the test suite built"))
        else:
            steps.append((name, step["run"], None))
    return job, steps


def binary():
    path = os.environ.get("DMABENCH_BINARY") or os.path.join(ROOT, "build", "dmabench")
    return path if os.access(path, os.X_OK) else None


def run_steps(steps, workdir, env):
    """Runs the scripts of `steps` in order, each in a fresh shell; the (name, exit code, output) of each that ran.
    Stops at the first that fails, as a job does."""
    ran = []
    for i, (name, script, _) in enumerate(steps):
        if script is None:
            continue
        path = os.path.join(workdir, f".step-{i}.sh")
        with open(path, "w", encoding="utf-8") as f:
            f.write(script)
        p = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", path], cwd=workdir, env=env,
                           capture_output=True, text=True, timeout=900)
        os.unlink(path)
        ran.append((name, p.returncode, p.stdout[-3000:] + p.stderr[-3000:]))
        if p.returncode:
            break
    return ran


def test_the_recipe_is_github_shaped():
    workflow = github_workflow()
    job, steps = plan(workflow)
    assert job["permissions"]["checks"] == "write"  # the JUnit report action writes a check run
    runs = [s for _, s, _ in steps if s]
    assert len(runs) >= 2
    assert not [s for s in runs if re.search(r"(^|\n|&& )\s*(cd |export |source |\. )", s)], \
        "a run: step is a fresh shell: nothing it sets carries over"
    assert not [s for s in runs if re.search(r"(^|\s)pip install", s)], "pip into the system's Python: PEP 668"


def test_the_recipe_runs_on_the_host_backend(tmp_path):
    exe = binary()
    if exe is None:
        pytest.skip("no dmabench program (ctest passes DMABENCH_BINARY; or build/dmabench)")
    workflow = github_workflow()
    job, steps = plan(workflow)
    work = tmp_path / "checkout"  # what actions/checkout gives: the tracked tree (python/ and configs/ suffice)
    for top in ("python", "configs"):
        for f in tracked(top):
            dest = work / os.path.relpath(f, ROOT)
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(f, dest)
    (work / "build").mkdir()
    os.symlink(exe, work / "build" / "dmabench")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME") and
           not k.startswith(("DMABENCH_", "CUDA_", "NCCL_"))}
    env.update({k: str(v) for k, v in {**workflow.get("env", {}), **job.get("env", {})}.items()})
    env["CI"] = "true"
    # the recipe asks for the GPU backend (never host ranks: exit 2 without a GPU); here it runs on host ranks
    assert job["env"].get("BACKEND") == "gpu", job["env"]
    env["BACKEND"] = "host"
    # `python3` is the one the tests run with (Debian's /usr/bin/python3 with python3-setuptools, as a runner has)
    env["PATH"] = os.pathsep.join([os.path.dirname(os.path.realpath(sys.executable)), env.get("PATH", "")])
    # the recipe says its pip step downloads nothing: held to it (the GPU machine has no network, and pip's index
    # lookups failed the step there), as pip's own --no-index would
    env["PIP_NO_INDEX"] = "1"
    ran = run_steps(steps, work, env)
    skipped = [(name, why) for name, script, why in steps if script is None]
    print("skipped:", *(f"{n}: {w}" for n, w in skipped), sep="\n  ")
    failed = [(name, rc, out) for name, rc, out in ran if rc]
    # the failing step's whole output tail, not pytest's shortened repr of it (a GPU machine's run failed in the
    # venv step with only "...site-packages/dmabench/patterns.json'" to show)
    assert not failed, f"step {failed[0][0]!r} exited {failed[0][1]}:\n{failed[0][2]}"
    assert [name for name, _, _ in ran] == [name for name, script, _ in steps if script], ran
    for f in ("results/ci.json", "dmabench.xml", "gate.xml", "gate.json", "report.html", "history.sqlite"):
        assert (work / f).is_file() and (work / f).stat().st_size > 0, f  # what the artifact and cache steps keep


def test_a_failing_step_fails(tmp_path):
    steps = [("one", "true\n", None), ("two", "false\necho never\n", None), ("three", "true\n", None)]
    ran = run_steps(steps, tmp_path, dict(os.environ))
    assert [(n, rc) for n, rc, _ in ran] == [("one", 0), ("two", 1)]
    ran = run_steps([("pipe", "false | true\n", None)], tmp_path, dict(os.environ))
    assert ran[0][1] == 1  # -o pipefail, as GitHub's bash
