"""Pattern properties live on the pattern (issue 53 item 6): the C++ registry writes them into every results file's
context.patterns; Python reads them there (or from python/dmabench/patterns.json, the same for older files: ctest's
results_keys holds the two equal) and keeps no list of pattern names of its own."""
import ast
import os

from dmabench import keys
from dmabench.reports import matrix
from test_scripts import ROOT


def test_the_order_and_properties_come_from_the_programs_table():
    assert keys.PATTERN_ORDER == [p["name"] for p in keys.PATTERNS]
    assert keys.PATTERN_ORDER[:3] == ["copy", "d2d", "bidir"]
    assert {p["name"] for p in keys.PATTERNS if p["bidirectional"]} == {"bidir", "h2d-bidir"}
    assert {p["name"] for p in keys.PATTERNS if p["breakdown"]} == {"copy", "d2d", "d2h", "h2d"}
    doc = {"context": {"patterns": [{"name": "toy", "pairs": "two-device", "host_memory": False}]}}
    assert [p["name"] for p in keys.pattern_specs(doc)] == ["toy"]  # a file's own table first
    assert keys.pattern_specs({"context": {}}) is keys.PATTERNS and keys.pattern_spec("nope") == {}


def test_the_matrix_pairs_follow_the_properties():
    rec = {"devices": [0, 1], "pattern": "bidir"}
    assert matrix.pair_of(rec, "GPU") == ("GPU 0", "GPU 1")
    assert matrix.pair_of({"devices": [0], "pattern": "d2h"}, "GPU") == ("GPU 0", "host")
    assert matrix.pair_of({"devices": [0], "pattern": "h2d-bidir"}, "GPU") == ("host", "GPU 0")
    assert matrix.pair_of({"devices": [0], "pattern": "d2d"}, "GPU") is None  # one device, no host side
    assert matrix.pair_of({"devices": [0, 1], "pattern": "allgather"}, "GPU") is None


def test_no_python_module_keeps_a_list_of_pattern_names():
    names = set(keys.PATTERN_ORDER)
    found = []
    for where, _, files in os.walk(os.path.join(ROOT, "python", "dmabench")):
        for f in files:
            if not f.endswith(".py"):
                continue
            path = os.path.join(where, f)
            with open(path, encoding="utf-8") as src:
                tree = ast.parse(src.read())
            for node in ast.walk(tree):
                if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
                    words = [e.value for e in node.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
                    if len([w for w in words if w in names]) >= 3:
                        found.append(f"{os.path.relpath(path, ROOT)}:{node.lineno}: {words}")
    assert not found, "pattern names listed outside the program's table:\n" + "\n".join(found)
