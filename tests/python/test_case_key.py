"""One case identity in both languages: the pairs of records in tests/data/case_key/pairs.json are one case or two
as dmabench's C++ case_key (bench/run/record.hpp: --check and the --processes merge; tests/test_check.cpp reads the
same file) says, and the Python case_key (compare, history, merge) must say the same of every pair."""
import json
import os

import pytest

from dmabench.keys import case_key

PAIRS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "data", "case_key", "pairs.json")


def pairs():
    with open(PAIRS, encoding="utf-8") as f:
        return json.load(f)["pairs"]


def test_the_shared_file_holds_both_verdicts():
    same = [p["same"] for p in pairs()]
    assert len(same) >= 10 and any(same) and not all(same)


@pytest.mark.parametrize("pair", pairs(), ids=lambda p: p["why"][:60])
def test_python_agrees_with_the_shared_verdict(pair):
    assert (case_key(pair["a"]) == case_key(pair["b"])) == pair["same"], pair["why"]
