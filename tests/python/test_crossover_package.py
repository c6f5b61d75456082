"""dmabench.reports.crossover's import plan (issue 53): its modules in layers, each importing only the ones below it
(no circle, and never the package itself), each well under the size of a hub, and the names the single module
crossover.py had still importable from the package."""
import ast
import os

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

PACKAGE = os.path.join(ROOT, "python", "dmabench", "reports", "crossover")
LAYERS = ["read", "fits", "decisions", "md", "plots", "cli"]  # the bottom first
MAX_FILE_LINES = 300


def imports(name):
    """(the modules of the package that module `name` imports: from .x import ..., from . import x; whether it imports
    the package itself: from .. import crossover, from ..crossover import ..., dmabench.reports.crossover)."""
    tree = ast.parse(open(os.path.join(PACKAGE, name + ".py"), encoding="utf-8").read())
    siblings, package = set(), False
    for n in ast.walk(tree):
        if isinstance(n, ast.ImportFrom) and n.level == 1:
            siblings |= {n.module} if n.module else {a.name for a in n.names}
        elif isinstance(n, ast.ImportFrom):
            module = n.module or ""
            package |= (n.level == 2 and (module == "crossover" or any(a.name == "crossover" for a in n.names))) or \
                module.startswith("dmabench.reports.crossover")
        elif isinstance(n, ast.Import):
            package |= any(a.name.startswith("dmabench.reports.crossover") for a in n.names)
    return siblings, package


def test_every_module_is_in_a_layer():
    found = sorted(f[:-3] for f in os.listdir(PACKAGE) if f.endswith(".py") and f not in ("__init__.py", "__main__.py"))
    assert found == sorted(LAYERS)


def test_each_module_imports_only_the_layers_below_it():
    for i, name in enumerate(LAYERS):
        siblings, package = imports(name)
        assert siblings <= set(LAYERS[:i]), (name, siblings - set(LAYERS[:i]))
        assert not package, name


def test_no_module_is_a_hub():
    for f in os.listdir(PACKAGE):
        if f.endswith(".py"):
            n = len(open(os.path.join(PACKAGE, f), encoding="utf-8").read().split("\n"))
            assert n <= MAX_FILE_LINES, (f, n)


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
