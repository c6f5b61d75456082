"""dmabench.verdict, the rule of compare, history gate and ab: exact rank-sum p-values, Benjamini-Hochberg, and the
stated rates on simulated per-process data (bimodal processes, planted changes)."""
import math
import random

import pytest

from dmabench import verdict


def test_exact_p_values():
    assert verdict.rank_sum_test([1, 2, 3, 4, 5], [6, 7, 8, 9, 10]) == (pytest.approx(2 / 252), 1)
    assert verdict.rank_sum_test([6, 7, 8, 9, 10], [1, 2, 3, 4, 5]) == (pytest.approx(2 / 252), -1)
    assert verdict.rank_sum_test([1, 2, 3, 4, 6], [5, 7, 8, 9, 10])[0] == pytest.approx(4 / 252)  # one swap: 2 ways
    assert verdict.rank_sum_test([3, 3, 3], [3, 3, 3]) == (1.0, 0)
    assert verdict.rank_sum_test([], [1.0]) == (1.0, 0)
    assert verdict.rank_sum_test([1.0], [2.0])[0] == 1.0  # one draw a side supports nothing
    assert verdict.smallest_p(5, 5) == pytest.approx(2 / 252) and verdict.smallest_p(1, 1) == 1.0
    # ties at mid-ranks: the exact distribution counts subsets of the tied scores; [1,2,2,3] v [2,3,4,4,5]: of the
    # 126 ways to pick NEW's 5 scores, 7 have a rank sum at least NEW's
    assert verdict.rank_sum_test([1, 2, 2, 3], [2, 3, 4, 4, 5])[0] == pytest.approx(2 * 7 / 126)


def test_the_normal_approximation_agrees_with_the_exact_test_where_both_apply():
    rng = random.Random(3)
    for _ in range(20):
        base = [rng.gauss(0, 1) for _ in range(20)]
        new = [rng.gauss(0.5, 1) for _ in range(22)]
        exact = verdict.rank_sum_test(base, new)[0]  # 42 draws: above EXACT_TOTAL, normal
        old = verdict.EXACT_TOTAL
        try:
            verdict.EXACT_TOTAL = 1000
            verdict.EXACT_SMALL_SIDE = 1000
            assert abs(verdict.rank_sum_test(base, new)[0] - exact) < 0.01 + 0.1 * exact
        finally:
            verdict.EXACT_TOTAL, verdict.EXACT_SMALL_SIDE = old, 12


def test_benjamini_hochberg():
    assert verdict.benjamini_hochberg([0.01, 0.04, 0.03, 0.005], 0.05) == [True, True, True, True]  # 0.04 <= 0.05
    assert verdict.benjamini_hochberg([0.01, 0.2, 0.03, 0.005], 0.05) == [True, False, True, True]
    assert verdict.benjamini_hochberg([0.02, 0.2, 0.9], 0.05) == [False, False, False]  # 0.02 > 0.05/3
    assert verdict.benjamini_hochberg([], 0.05) == []


def process_draws(rng, cases, processes, slow_share, factor=1.0, changed=()):
    """Per case the p50s of `processes` fresh processes: each process lands in a fast mode (1 +- 2%) or, with
    probability slow_share, a slow one (1.5-2.5x, the host engine's bimodality on a 2-vCPU VM), one mode for all of
    its cases (processes move their cases together); cases in `changed` x factor."""
    modes = [rng.uniform(1.5, 2.5) if rng.random() < slow_share else 1.0 for _ in range(processes)]
    return [[mode * rng.gauss(1, 0.02) * (factor if c in changed else 1.0) for mode in modes] for c in range(cases)]


def simulate(rng, cases=48, processes=6, slow_share=0.3, factor=1.0, changed=()):
    base = process_draws(rng, cases, processes, slow_share)
    new = process_draws(rng, cases, processes, slow_share, factor, changed)
    return verdict.judge_all([{"base": b, "new": n, "cls": "launch-bound" if c < 32 else "bandwidth-bound"}
                              for c, (b, n) in enumerate(zip(base, new))])


def test_simulated_a_a_false_alarms_stay_within_alpha():
    """800 simulated A/A comparisons of 48 cases, 6+6 processes, 30% of processes in a 1.5-2.5x slow mode: any case
    slower or faster in at most alpha of them (plus the binomial error of 800 draws), and slower alone in about half
    of that."""
    rng = random.Random(50)
    runs = [simulate(rng) for _ in range(800)]
    any_change = sum(any(v["verdict"] in ("slower", "faster") for v in r) for r in runs) / len(runs)
    slower = sum(any(v["verdict"] == "slower" for v in r) for r in runs) / len(runs)
    sd = math.sqrt(verdict.ALPHA * (1 - verdict.ALPHA) / len(runs))
    assert any_change <= verdict.ALPHA + 3 * sd, any_change
    assert slower <= verdict.ALPHA / 2 + 3 * sd, slower


def test_simulated_a_a_with_unimodal_processes_is_same():
    rng = random.Random(7)
    runs = [simulate(rng, slow_share=0.0) for _ in range(200)]
    verdicts = [v["verdict"] for r in runs for v in r]
    assert verdicts.count("slower") + verdicts.count("faster") <= 0.001 * len(verdicts)
    # a 2% scatter never moves a median of 6 by 5% (launch-bound), and moves it by 2% (bandwidth-bound's minimum)
    # in some comparisons: ambiguous there, never slower
    assert not any(v["verdict"] == "ambiguous" for r in runs for v in r[:32])
    assert 0 < sum(v["verdict"] == "ambiguous" for r in runs for v in r[32:]) < 0.3 * 16 * len(runs)


def test_planted_changes_are_found():
    rng = random.Random(11)
    changed = range(32)  # every launch-bound case 10% slower, the bandwidth-bound ones not
    runs = [simulate(rng, slow_share=0.0, factor=1.10, changed=changed) for _ in range(50)]
    found = [sum(v["verdict"] == "slower" for v in r[:32]) for r in runs]
    assert sum(f >= 30 for f in found) >= 48, found  # all but a few cases in (almost) every comparison
    # where cases changed, Benjamini-Hochberg holds the share of wrong calls among the calls (false discovery rate)
    assert false_discovery_rate(runs, range(32, 48)) <= verdict.ALPHA
    # bimodal processes: 6+6 catch less, 12+12 (ab's re-run look) more; both say so without a false slower
    bimodal6 = [simulate(rng, processes=6, factor=1.10, changed=changed) for _ in range(50)]
    bimodal12 = [simulate(rng, processes=12, factor=1.10, changed=changed) for _ in range(50)]
    share = [sum(v["verdict"] == "slower" for r in runs for v in r[:32]) / (32 * len(runs)) for runs in (bimodal6, bimodal12)]
    assert share[1] > share[0], share
    assert max(false_discovery_rate(runs, range(32, 48)) for runs in (bimodal6, bimodal12)) <= verdict.ALPHA


def false_discovery_rate(runs, unchanged):
    """The mean over comparisons of (calls of unchanged cases) / (calls), a comparison without calls 0."""
    fdp = []
    for r in runs:
        calls = [c for c, v in enumerate(r) if v["verdict"] in ("slower", "faster")]
        fdp.append(sum(c in unchanged for c in calls) / len(calls) if calls else 0.0)
    return sum(fdp) / len(fdp)


def test_one_process_a_side_is_never_slower():
    out = verdict.judge_all([{"base": [10.0], "new": [20.0], "cls": "launch-bound"},
                             {"base": [10.0], "new": [10.1], "cls": "launch-bound"}])
    assert [v["verdict"] for v in out] == ["ambiguous", "same"]
    assert out[0]["change"] == pytest.approx(1.0) and out[0]["p"] == 1.0


def test_the_class_minimum():
    base, new = [10.0 + 0.01 * k for k in range(8)], [10.4 + 0.01 * k for k in range(8)]  # +4%, every draw above
    lb, bb = verdict.judge_all([{"base": base, "new": new, "cls": "launch-bound"},
                                {"base": base, "new": new, "cls": "bandwidth-bound"}])
    assert lb["verdict"] == "same" and bb["verdict"] == "slower", (lb, bb)
    assert verdict.judge_all([{"base": base, "new": new, "cls": "launch-bound"}],
                             min_change={"launch-bound": 0.03})[0]["verdict"] == "slower"


def test_min_change_arguments():
    assert verdict.parse_min_change(["launch=0.1", "bandwidth-bound=0.03"]) == {"launch-bound": 0.1,
                                                                                 "bandwidth-bound": 0.03}
    for bad in ("launch", "memory=0.1", "launch=x", "launch=-1", "bandwidth=nan"):
        with pytest.raises(ValueError, match="--min-change"):
            verdict.parse_min_change([bad])


def test_the_shared_fixture_is_what_the_rule_gives():
    """tests/data/verdict-fixture.json, which bench/verdict.cpp (--check) is held to as well (tests/test_verdict.cpp):
    the rule here still gives every verdict, support, change and p-value in it."""
    import json
    import pathlib
    doc = json.loads((pathlib.Path(__file__).parents[1] / "data" / "verdict-fixture.json").read_text())
    judged = verdict.judge_all([{k: c[k] for k in ("base", "new", "cls")} for c in doc["cases"]], alpha=doc["alpha"])
    for c, j in zip(doc["cases"], judged):
        assert (j["verdict"], j["supported"]) == (c["verdict"], c["supported"])
        assert j["change"] == pytest.approx(c["change"], rel=1e-12, abs=1e-15)
        assert j["p"] == pytest.approx(c["p"], rel=1e-12)
    assert {c["verdict"] for c in doc["cases"]} == set(verdict.VERDICTS)
