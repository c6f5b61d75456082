"""Tests of scripts/moe_trace.py: the committed synthetic trace is what the defaults write, byte for byte; its counts
are what the model allows; the seed matters; bad arguments exit 2 with one line.

Run by ctest (test `scripts`) with a python3 that has pytest.
"""
import json
import os
import sys

import pytest

from test_scripts import ROOT, SCRIPTS, run

from dmabench import moe_trace

COMMITTED = os.path.join(ROOT, "configs", "traces", "moe-synthetic-8x256.json")


def one_line(p, want):
    assert p.returncode == 2, (p.returncode, p.stderr[-500:])
    lines = p.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("moe_trace.py: error: ") and want in lines[0], p.stderr


def test_defaults_reproduce_the_committed_trace(tmp_path):
    out = tmp_path / "trace.json"
    p = run("moe_trace.py", "--out", out)
    assert p.returncode == 0, p.stderr
    assert out.read_bytes() == open(COMMITTED, "rb").read()
    lines = p.stderr.splitlines()
    assert len(lines) == 4 and all(line.startswith(f"step {k}: ") for k, line in enumerate(lines))
    assert "tokens moved" in lines[0] and "per destination rank max" in lines[0]


def test_the_committed_trace_is_what_the_model_allows():
    doc = json.load(open(COMMITTED))
    g = doc["generator"]
    assert doc["format"] == "dmabench-moe-trace/1" and doc["synthetic"] is True
    assert "not from a real model" in doc["description"] and "--seed 7" in doc["description"]
    assert g == {"script": "scripts/moe_trace.py", "seed": 7, "ranks": 8, "experts": 256, "topk": 8,
                 "tokens_per_rank": 256, "zipf": 1.2, "drift": 0.1, "steps": 4}
    assert list(doc)[:4] == ["format", "synthetic", "description", "generator"]
    R, T, k = doc["ranks"], doc["tokens_per_rank"], g["topk"]
    assert (R, T) == (8, 256) and len(doc["steps"]) == g["steps"]
    for m in doc["steps"]:
        assert len(m) == R and all(len(row) == R for row in m)
        for row in m:
            assert all(isinstance(c, int) and not isinstance(c, bool) and 0 <= c <= T for c in row)
            assert T <= sum(row) <= T * min(k, R)
    assert doc["steps"][0] != doc["steps"][1]  # the drift and the draws make each step differ


def test_a_different_seed_changes_the_trace(tmp_path):
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    assert run("moe_trace.py", "--out", a).returncode == 0
    assert run("moe_trace.py", "--out", b, "--seed", "8").returncode == 0
    da, db = json.loads(a.read_text()), json.loads(b.read_text())
    assert da["steps"] != db["steps"] and db["generator"]["seed"] == 8 and "--seed 8" in db["description"]


def test_small_traces_stay_within_bounds(tmp_path):
    # one expert per rank and top-k = ranks: every token goes everywhere; top-1: every token exactly once
    out = tmp_path / "t.json"
    assert run("moe_trace.py", "--out", out, "--ranks", "4", "--experts", "4", "--topk", "4", "--tokens-per-rank", "16",
               "--steps", "2").returncode == 0
    assert json.loads(out.read_text())["steps"] == [[[16] * 4] * 4] * 2
    assert run("moe_trace.py", "--out", out, "--ranks", "4", "--experts", "8", "--topk", "1", "--tokens-per-rank", "16",
               "--zipf", "0").returncode == 0
    assert all(sum(row) == 16 for m in json.loads(out.read_text())["steps"] for row in m)


def test_experts_not_a_multiple_of_ranks_exits_2(tmp_path):
    one_line(run("moe_trace.py", "--out", tmp_path / "t.json", "--experts", "250"), "--experts 250")
    assert not (tmp_path / "t.json").exists()


@pytest.mark.parametrize("args,want", [
    (["--topk", "300"], "--topk 300"), (["--ranks", "0"], "--ranks 0"), (["--drift", "1.5"], "--drift"),
    (["--zipf", "nan"], "--zipf"), (["--steps", "x"], "invalid int value"), (["--bogus"], "--bogus"),
])
def test_bad_arguments_exit_2(tmp_path, args, want):
    one_line(run("moe_trace.py", "--out", tmp_path / "t.json", *args), want)


def test_other_parameters_need_their_own_out_and_outputs_are_checked(tmp_path):
    before = open(COMMITTED, "rb").read()
    one_line(run("moe_trace.py", "--seed", "8"), "--out: missing")
    assert open(COMMITTED, "rb").read() == before
    one_line(run("moe_trace.py", "--out", tmp_path), "a directory")
    one_line(run("moe_trace.py", "--out", "/dev/full"), "No space left on device")


def test_weighted_draws_are_distinct_and_follow_the_weights():
    import random
    rng = random.Random(1)
    cum = moe_trace.cumulative_weights([2, 0, 1], 1.0)  # expert 2 most popular: weights 1, 1/2, 1/3 by rank
    assert cum == pytest.approx([0.5, 0.5 + 1 / 3, 0.5 + 1 / 3 + 1])
    picks = [moe_trace.pick(cum, 2, rng) for _ in range(3000)]
    assert all(len(set(p)) == 2 for p in picks)
    first = [p[0] for p in picks]
    assert first.count(2) > first.count(0) > first.count(1)
    assert sorted(moe_trace.permutation(10, random.Random(3))) == list(range(10))
