"""dmabench.history's import plan (issue 53): its modules in layers, each importing only the ones below it (no circle),
each well under the size of a hub, and the names the single module history.py had still importable from the package."""
import ast
import os

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

PACKAGE = os.path.join(ROOT, "python", "dmabench", "history")
LAYERS = ["rows", "db", "rule", "judging", "trends", "upkeep", "cli"]  # the bottom first
MAX_FILE_LINES = 400


def sibling_imports(name):
    """The modules of the package that module `name` imports (from .x import ..., from . import x)."""
    tree = ast.parse(open(os.path.join(PACKAGE, name + ".py"), encoding="utf-8").read())
    found = set()
    for n in ast.walk(tree):
        if isinstance(n, ast.ImportFrom) and n.level == 1:
            found |= {n.module} if n.module else {a.name for a in n.names}
    return found


def test_every_module_is_in_a_layer():
    assert sorted(f[:-3] for f in os.listdir(PACKAGE) if f.endswith(".py") and f != "__init__.py") == sorted(LAYERS)


def test_each_module_imports_only_the_layers_below_it():
    for i, name in enumerate(LAYERS):
        assert sibling_imports(name) <= set(LAYERS[:i]), (name, sibling_imports(name) - set(LAYERS[:i]))


def test_no_module_is_a_hub():
    for f in os.listdir(PACKAGE):
        if f.endswith(".py"):
            n = len(open(os.path.join(PACKAGE, f), encoding="utf-8").read().split("\n"))
            assert n <= MAX_FILE_LINES, (f, n)


def test_the_single_module_s_names_are_importable_from_the_package():
    from dmabench import history
    for name in ("open_db", "db_errors", "retried", "transaction", "store", "prepare", "FRAME_QUERY", "MIGRATIONS",
                 "RUN_COLUMNS", "RECORD_COLUMNS", "SCHEMA_VERSION", "APPLICATION_ID", "BUSY_TRIES", "DEFAULT_RULE",
                 "VERDICTS", "FIGURES", "rule_text", "trend", "gate", "history", "main", "main_trend", "run_trend",
                 "add_rule_arguments", "DEFAULT_DB", "TOOL"):
        assert hasattr(history, name), name
    assert callable(history.trend) and callable(history.gate)  # the functions, not modules of the same name
