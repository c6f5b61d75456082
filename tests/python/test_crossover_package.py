"""dmabench.reports.crossover's import plan (issue 53): its modules in layers, each importing only the ones below it
(no circle, and never the package itself), each well under the size of a hub, and the names the single module
crossover.py had still importable from the package."""
import os
import subprocess
import sys

from package_layers import ROOT, hubs, imports, layer_violations, modules

PACKAGE = os.path.join(ROOT, "python", "dmabench", "reports", "crossover")
LAYERS = ["read", "fits", "decisions", "md", "plots", "cli"]  # the bottom first
MAX_FILE_LINES = 300


def test_every_module_is_in_a_layer():
    assert modules(PACKAGE) == sorted(LAYERS)


def test_each_module_imports_only_the_layers_below_it():
    assert layer_violations(PACKAGE, "dmabench.reports.crossover", LAYERS) == []


def test_the_layer_check_sees_a_module_that_imports_the_package(tmp_path):
    (tmp_path / "low.py").write_text("from .high import x\n")
    (tmp_path / "high.py").write_text("from ..crossover import markdown\n")
    assert imports(str(tmp_path), "dmabench.reports.crossover", "high") == (set(), True)
    assert layer_violations(str(tmp_path), "dmabench.reports.crossover", ["low", "high"]) == [
        ("low", ["high"], ""), ("high", [], "imports the package itself")]


def test_no_module_is_a_hub():
    assert hubs(PACKAGE, MAX_FILE_LINES) == []


def test_help_runs_and_prints_the_usage():
    """`python3 -m dmabench.reports.crossover --help`: exit 0 and argparse's usage with the options the docstring names."""
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"))
    p = subprocess.run([sys.executable, "-m", "dmabench.reports.crossover", "--help"], capture_output=True, text=True,
                       env=env, timeout=60)
    assert p.returncode == 0, p.stderr
    assert p.stdout.startswith("usage: crossover.py") and all(o in p.stdout for o in ("--markdown", "--json", "--plots"))


def test_the_single_module_s_names_are_importable_from_the_package():
    from dmabench.reports import crossover
    for name in ("collect", "outcome", "analyse", "decide", "regions_of", "group_order", "report_of", "markdown",
                 "decision_text", "COST_LEGEND", "fit_cells", "solve3", "cliffs_of", "knee_of", "split_pair", "sig2",
                 "slug", "versus_cliffs", "main", "run", "TOOL", "REPORT_SCHEMA", "DMA_ENGINES", "HOST_KINDS",
                 "COLOURS"):
        assert hasattr(crossover, name), name
    assert callable(crossover.markdown) and callable(crossover.main)  # the functions, not modules
    assert crossover.main.__module__ == "dmabench.reports.crossover.cli"


def test_the_help_is_the_usage_docstring():
    from dmabench.reports.crossover import cli
    assert cli.__doc__.startswith("Crossover maps from dmabench block-layout results") and "Exit codes" in cli.__doc__
