"""The dmabench package (python/): `pip install ./python` (and `-e`) into a fresh venv with nothing downloaded, then
`dmabench-results --help` and every subcommand on committed results; a missing extra is one line and exit 2; the
core commands need neither pandas nor matplotlib; and no sys.path lines outside scripts/_dmabench_path.py."""
import glob
import json
import os
import shutil
import subprocess
import sys

import pytest

from test_scripts import PACKAGE, PACKAGE_ENV, ROOT
from test_version import binary

H1, H2 = os.path.join(ROOT, "results", "h200x1"), os.path.join(ROOT, "results", "h200x2")
CASE = "^allgather/ce/pipelined/dev=0,1/1KiB$"  # a case of rotate.json
# The dmabench program writes the JUnit files of compare and history gate (DMABENCH_BINARY, else build/dmabench); where
# there is none, their --junit is one line and exit 2
PROGRAM = binary()


def subcommands(tmp, plots=True):
    """(argv, accepted exit codes) of every subcommand on small committed results files; without the plot extra
    (`plots` False) the figure commands must refuse with exit 2."""
    db, figs = tmp / "h.sqlite", tmp / "figs"
    fig = {0} if plots else {2}
    junit = {0, 1} if PROGRAM else {2}
    return [
        (["--help"], {0}),
        (["summarize", f"{H2}/breakdown.json"], {0}),
        (["compare", f"{H2}/rotate.json", f"{H2}/rotate-run2.json"], {0, 1}),  # 1: a regression between the two
        (["compare", f"{H2}/rotate.json", f"{H2}/rotate-run2.json", "--junit", tmp / "compare.xml"], junit),
        (["export", f"{H2}/breakdown.json"], {0}),
        (["plot", f"{H2}/breakdown.json", "--out", figs], fig),
        (["history", "add", f"{H2}/rotate.json", "--db", db], {0}),
        (["history", "machines", "--db", db], {0}),
        (["trend", "--db", db, "--case", CASE], {0}),
        (["trend", db, "--case", CASE, "--out", figs], fig),
        (["history", "gate", f"{H2}/rotate-run2.json", "--db", db], {0, 1}),
        (["history", "gate", f"{H2}/rotate-run2.json", "--db", db, "--json", "--junit", tmp / "gate.xml"], junit),
        (["history", "prune", "--db", db, "--keep", "5", "--dry-run"], {0}),
        (["history", "prune", "--db", db, "--since", "2000-01-01"], {0}),
        (["history", "vacuum", "--db", db], {0}),
        (["merge", *sorted(glob.glob(f"{H1}/levels/start1/dmabench-*.json"))[:2], "--out", tmp / "levels.json"], {0}),
        (["moe-trace", "--out", tmp / "moe"], {0}),
        (["report", "blocks", f"{H1}/pools/start1/kv-pool.json"], {0}),
        (["report", "crossover", f"{H1}/pools/start1/kv-pool.json"], {0}),
        (["crossover", "export", f"{H1}/pools/start1/kv-pool.json", "--out", tmp / "thresholds.json"], {0}),
        (["report", "setup", f"{H1}/pools/start1/pool-setup.json", f"{H1}/pools/start1/kv-pool.json"], {0}),
        (["report", "moe", f"{H1}/moe/d157efa/moe-1gpu.json"], {0}),
        (["report", "overlap", f"{H2}/local-copy-overlap.json"], {0}),
        (["report", "dma-latte", f"{H1}/mpi-one-gpu-dma-latte.json"], {0}),
        (["report", "matrix", f"{H2}/breakdown.json"], {0}),
        (["report", "html", f"{H2}/rotate-run2.json", "--against", f"{H2}/rotate.json", "--out", tmp / "r.html"], {0}),
        (["report", "host-reference", "--help"], {0}),  # its inputs are a fresh run and host_probe's output
        (["launch-compare", "--help"], {0}),  # runs dmabench
        (["sdma-map", "--help"], {0}),  # reads the AMD kernel driver
        (["amd-first-run", "kfd-version", tmp / "no-such-kfd"], {0, 1}),  # scripts/amd-first-run.sh's helper
    ]


def has_plot_extra(python, env=None):
    """Whether `python` imports the plot extra (a venv does not see a user site, so it may lack what pytest has)."""
    return subprocess.run([python, "-c", "import matplotlib, pandas"], capture_output=True, env=env).returncode == 0


def check_every_subcommand(command, tmp, env=None, python=sys.executable):
    plots = has_plot_extra(python, env)
    # an installed package finds no build/ beside it: the program by name (a path that is none where there is none)
    env = dict(env or os.environ, DMABENCH_BINARY=PROGRAM or os.fspath(tmp / "no-dmabench"))
    for argv, codes in subcommands(tmp, plots):
        p = subprocess.run([*command, *map(os.fspath, argv)], capture_output=True, text=True, timeout=300, env=env)
        assert p.returncode in codes, (argv, p.returncode, p.stderr[-2000:])
        assert "Traceback" not in p.stderr, (argv, p.stderr[-2000:])
        if codes == {2} and "--junit" in argv:
            assert "needs the dmabench program" in p.stderr and len(p.stderr.splitlines()) == 1, (argv, p.stderr)
        elif codes == {2}:
            assert "'plot' extra" in p.stderr and len(p.stderr.splitlines()) == 1, (argv, p.stderr)
    if plots:
        assert os.listdir(tmp / "figs")  # the figures and the trend figure were written
    else:
        assert not (tmp / "figs").exists()


def venv(tmp_path):
    """A fresh venv that sees the system's packages (setuptools, pandas, matplotlib: Debian's python3-*)."""
    if shutil.which("pip3") is None and subprocess.run([sys.executable, "-c", "import ensurepip"]).returncode:
        pytest.skip("neither pip nor ensurepip here (Debian: apt install python3-venv python3-pip)")
    env_dir = tmp_path / "venv"
    p = subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", env_dir], capture_output=True, text=True)
    if p.returncode:
        pytest.skip(f"python3 -m venv failed (Debian: apt install python3-venv): {p.stderr[-300:]}")
    return env_dir


@pytest.mark.parametrize("editable", [False, True], ids=["install", "editable"])
def test_pip_install_offline_then_every_subcommand(tmp_path, editable):
    env_dir = venv(tmp_path)
    src = tmp_path / "python"  # a copy: a build writes build/ and *.egg-info beside the sources
    shutil.copytree(PACKAGE, src, ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__"))
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    pip = [env_dir / "bin" / "python", "-m", "pip", "install", "--no-build-isolation", "--no-index", "--quiet",
           *(["-e"] if editable else []), src]
    p = subprocess.run(pip, capture_output=True, text=True, timeout=600, env=env, cwd=tmp_path)
    assert p.returncode == 0, p.stderr[-3000:]
    exe = env_dir / "bin" / "dmabench-results"
    assert exe.exists()
    # the one version (python/dmabench/VERSION): the installed command, the module and the package's metadata
    with open(os.path.join(PACKAGE, "dmabench", "VERSION"), encoding="utf-8") as f:
        version = f.read().strip()
    p = subprocess.run([exe, "--version"], capture_output=True, text=True, env=env, cwd=tmp_path)
    assert p.returncode == 0 and p.stdout == f"dmabench-results {version}\n", (p.stdout, p.stderr)
    p = subprocess.run([env_dir / "bin" / "python", "-c", "import dmabench, importlib.metadata as m; "
                        "print(dmabench.__version__, m.version('dmabench'))"], capture_output=True, text=True, env=env,
                       cwd=tmp_path)
    assert p.stdout.split() == [version, version], (p.stdout, p.stderr)
    where = subprocess.run([env_dir / "bin" / "python", "-c", "import dmabench; print(dmabench.__file__)"],
                           capture_output=True, text=True, env=env, cwd=tmp_path)
    assert where.stdout.startswith(os.fspath(src)) if editable else os.fspath(env_dir) in where.stdout, where
    schema = subprocess.run([env_dir / "bin" / "python", "-c", "import json; from dmabench.reports import thresholds; "
                             "print(json.load(open(thresholds.SCHEMA_FILE))['title'])"],
                            capture_output=True, text=True, env=env, cwd=tmp_path)
    assert schema.stdout.strip() == "dmabench-thresholds version 1", schema.stderr  # the JSON Schema is installed
    (tmp_path / "work").mkdir()
    check_every_subcommand([exe], tmp_path / "work", env, env_dir / "bin" / "python")


def test_every_subcommand_from_the_checkout(tmp_path):
    check_every_subcommand([sys.executable, "-m", "dmabench"], tmp_path, PACKAGE_ENV)


BLOCK = "import sys; sys.modules.update({{m: None for m in {mods!r}}}); from dmabench.cli import main; sys.exit(main({argv!r}))"


def without(mods, argv):
    """dmabench-results ARGV in a python3 where the modules `mods` cannot be imported (as if not installed)."""
    code = BLOCK.format(mods=list(mods), argv=[os.fspath(a) for a in argv])
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, env=PACKAGE_ENV)


@pytest.mark.parametrize("argv", [["plot", f"{H2}/breakdown.json", "--out", "FIGS"],
                                  ["trend", "--db", "DB", "--case", CASE, "--out", "FIGS"],
                                  ["report", "crossover", f"{H1}/pools/start1/kv-pool.json", "--plots", "FIGS"]],
                         ids=["plot", "trend", "crossover"])
def test_a_missing_plot_extra_is_one_line_and_exit_2(tmp_path, argv):
    subprocess.run([sys.executable, "-m", "dmabench", "history", "add", f"{H2}/rotate.json", "--db", tmp_path / "h.sqlite"],
                   check=True, capture_output=True, env=PACKAGE_ENV)
    argv = [{"FIGS": tmp_path / "figs", "DB": tmp_path / "h.sqlite"}.get(a, a) for a in argv]
    p = without(["matplotlib", "numpy", "pandas"], argv)
    assert p.returncode == 2, p.stderr
    lines = p.stderr.splitlines()
    assert len(lines) == 1 and "'plot' extra" in lines[0] and "pip install './python[plot]'" in lines[0], p.stderr
    assert "apt install python3-matplotlib" in lines[0]
    assert not (tmp_path / "figs").exists()


def test_to_frame_without_pandas_names_the_frames_extra():
    code = ("import sys; sys.modules['pandas'] = None\nimport dmabench\ntry:\n    dmabench.to_frame([sys.argv[1]])\n"
            "except dmabench.MissingExtra as e:\n    print(e)\n")
    p = subprocess.run([sys.executable, "-c", code, f"{H2}/breakdown.json"], capture_output=True, text=True,
                       env=PACKAGE_ENV)
    assert p.returncode == 0 and "'frames' extra" in p.stdout and "python[frames]" in p.stdout, (p.stdout, p.stderr)


def test_the_core_needs_no_extra(tmp_path):
    db = tmp_path / "h.sqlite"
    for argv in (["summarize", f"{H2}/breakdown.json"], ["compare", f"{H2}/rotate.json", f"{H2}/rotate.json"],
                 ["export", f"{H2}/breakdown.json"], ["history", "add", f"{H2}/rotate.json", "--db", db],
                 ["trend", "--db", db, "--case", CASE, "--json"], ["report", "blocks", f"{H1}/pools/start1/kv-pool.json"]):
        p = without(["matplotlib", "numpy", "pandas"], argv)
        assert p.returncode == 0, (argv, p.stderr[-2000:])
    assert json.loads(without(["pandas"], ["trend", "--db", db, "--case", CASE, "--json"]).stdout)["series"]


def test_script_shims_and_subcommands_agree(tmp_path):
    for script, argv in (("summarize.py", ["summarize"]), ("blocks_report.py", ["report", "blocks"])):
        f = f"{H1}/pools/start1/kv-pool.json"
        a = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", script), f], capture_output=True, text=True)
        b = subprocess.run([sys.executable, "-m", "dmabench", *argv, f], capture_output=True, text=True, env=PACKAGE_ENV)
        assert a.returncode == b.returncode == 0 and a.stdout == b.stdout, (script, a.stderr, b.stderr)
    p = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "summarize.py"), tmp_path / "none.json"],
                       capture_output=True, text=True)
    assert p.returncode == 2 and p.stderr.startswith("summarize.py: error: "), p.stderr


def test_every_script_has_its_run_bit():
    shims = [f for f in glob.glob(os.path.join(ROOT, "scripts", "*.py")) if not os.path.basename(f).startswith("_")]
    assert len(shims) >= 18
    assert [f for f in shims if not os.access(f, os.X_OK)] == []


def test_no_sys_path_lines_but_the_one_helper():
    files = [f for pattern in ("python/**/*.py", "scripts/*.py", "tests/python/*.py", "notebooks/*.ipynb")
             for f in glob.glob(os.path.join(ROOT, pattern), recursive=True)]
    needle = "sys.path." + "insert"  # spelled apart so that this file does not match itself
    found = [os.path.relpath(f, ROOT) for f in files if needle in open(f, encoding="utf-8").read()]
    assert found == [os.path.join("scripts", "_dmabench_path.py")], found
