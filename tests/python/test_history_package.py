"""dmabench.history's import plan (issue 53): its modules in layers, each importing only the ones below it (no circle),
each well under the size of a hub, and the names the single module history.py had still importable from the package."""
import os

from package_layers import ROOT, hubs, layer_violations, modules

PACKAGE = os.path.join(ROOT, "python", "dmabench", "history")
LAYERS = ["rows", "db", "rule", "judging", "trends", "upkeep", "cli"]  # the bottom first
MAX_FILE_LINES = 400


def test_every_module_is_in_a_layer():
    assert modules(PACKAGE) == sorted(LAYERS)


def test_each_module_imports_only_the_layers_below_it():
    assert layer_violations(PACKAGE, "dmabench.history", LAYERS) == []


def test_no_module_is_a_hub():
    assert hubs(PACKAGE, MAX_FILE_LINES) == []


def test_the_single_module_s_names_are_importable_from_the_package():
    from dmabench import history
    for name in ("open_db", "db_errors", "retried", "transaction", "store", "prepare", "FRAME_QUERY", "MIGRATIONS",
                 "RUN_COLUMNS", "RECORD_COLUMNS", "SCHEMA_VERSION", "APPLICATION_ID", "BUSY_TRIES", "DEFAULT_RULE",
                 "VERDICTS", "FIGURES", "rule_text", "trend", "gate", "history", "main", "main_trend", "run_trend",
                 "add_rule_arguments", "DEFAULT_DB", "TOOL"):
        assert hasattr(history, name), name
    assert callable(history.trend) and callable(history.gate)  # the functions, not modules of the same name
