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


def test_the_key_follows_its_one_definition(monkeypatch):
    """case_key.json is the definition, not a description: a part added there parts two records in Python (and the
    C++ program embeds the same file: tests/test_check.cpp, CaseKey.PartsAreTheSpecsParts)."""
    from dmabench import keys
    with open(os.path.join(os.path.dirname(keys.__file__), "case_key.json"), encoding="utf-8") as f:
        spec = json.load(f)
    assert keys.KEY_PARTS == tuple(p["part"] for p in spec["parts"])
    a, b = (dict(pairs()[0]["a"], x=v) for v in (1, 2))
    assert case_key(a) == case_key(b)
    monkeypatch.setattr(keys, "KEY_SPEC", keys.KEY_SPEC + [{"part": "x", "field": "x", "rule": "value",
                                                           "python": "value"}])
    assert case_key(a) != case_key(b)
    monkeypatch.setattr(keys, "KEY_SPEC", [{"part": "x", "field": "x", "rule": "nearly", "python": "value"}])
    with pytest.raises(ValueError, match="unknown rule"):
        case_key(a)
