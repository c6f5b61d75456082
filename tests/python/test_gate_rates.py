"""gate-rates' reach figures (python/dmabench/gate_rates.py): per class, the smallest change called slower and the
largest not called slower, from each comparison's cases, and the README table's columns for them."""
from dmabench import gate_rates


def ab_result(rows):
    return {"cases": [{"class": cls, "p50_ratio": ratio, "verdict": v} for cls, ratio, v in rows],
            "processes": [1] * 10, "looks": [1]}


def test_the_reach_of_a_comparison_and_of_the_injected_ones():
    one = gate_rates.summary(ab_result([("launch-bound", 1.30, "slower"), ("launch-bound", 1.08, "slower"),
                                        ("launch-bound", 1.06, "ambiguous"), ("launch-bound", 1.01, "same"),
                                        ("bandwidth-bound", 1.0002, "same")]), "inj", 1, False, 1, 9.0)
    lb, bb = one["classes"]["launch-bound"], one["classes"]["bandwidth-bound"]
    assert (lb["smallest_slower_ratio"], lb["largest_not_slower_ratio"]) == (1.08, 1.06)
    assert (bb["smallest_slower_ratio"], bb["largest_not_slower_ratio"]) == (None, 1.0002)
    two = gate_rates.summary(ab_result([("launch-bound", 1.07, "slower"), ("launch-bound", 1.09, "same")]),
                             "inj", 2, False, 1, 9.0)
    aa = gate_rates.summary(ab_result([("launch-bound", 1.5, "ambiguous")]), "aa", 1, False, 0, 9.0)
    r = gate_rates.rates([one, two, aa])["injected_per_class"]
    assert r["launch-bound"]["smallest_slower_ratio"] == 1.07  # over the injected comparisons only
    assert r["launch-bound"]["largest_not_slower_ratio"] == 1.09
    assert r["bandwidth-bound"]["smallest_slower_ratio"] is None
    doc = {"rates": gate_rates.rates([one, two, aa]),
           "settings": {"command": "--preset x", "processes": 5, "reruns": 1, "alpha": 0.02, "min_change": {},
                        "stretch": "10:5", "inject": None, "machine": "m"}}
    table = gate_rates.markdown(doc)
    assert "smallest ratio called slower" in table
    assert "| launch-bound | 2 | 2 | 50.0% | 1.075 | 1.070 | 1.090 |" in table
    assert "| bandwidth-bound | 2 | 0 | 0.0% | 1.000 | – | 1.000 |" in table
