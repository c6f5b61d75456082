"""gate-rates' reach figures (python/dmabench/gate_rates.py): per class, the smallest change called slower and the
largest not called slower, from each comparison's cases, and the README table's columns for them."""
import json

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


def part(seed, processes=6):
    inj = gate_rates.summary(ab_result([("launch-bound", 1.2, "slower"), ("bandwidth-bound", 1.0, "same")]),
                             "inj", 1, False, 1, 60.0)
    aa = gate_rates.summary(ab_result([("launch-bound", 1.0, "ambiguous"), ("bandwidth-bound", 1.0, "same")]),
                            "aa", 1, False, 0, 60.0)
    return {"schema": "dmabench-gate-rates/1", "comparisons": [aa, inj], "rates": gate_rates.rates([aa, inj]),
            "settings": {"command": "--config c.json", "processes": processes, "reruns": 0, "alpha": 0.02,
                         "min_change": {}, "stretch": "10:5", "inject": {"LD_PRELOAD": "shim.so"}, "machine": "m",
                         "seed": seed}}


def test_parts_of_one_setting_merge_into_one_measurement(tmp_path):
    paths = []
    for seed in (1, 2):
        paths.append(tmp_path / f"r{seed}.json")
        paths[-1].write_text(json.dumps(part(seed)))
    doc = gate_rates.merge([gate_rates.load(p) for p in paths])
    assert [(c["kind"], c["index"], c["seed"]) for c in doc["comparisons"]] == [
        ("aa", 1, 1), ("inj", 1, 1), ("aa", 2, 2), ("inj", 2, 2)]
    assert doc["rates"]["aa"] == 2 and doc["rates"]["injected"] == 2
    assert doc["rates"]["injected_per_class"]["launch-bound"]["comparisons_with_slower"] == 2
    table = gate_rates.markdown(doc)
    assert "Merged from 2 parts, seeds 1, 2." in table
    assert "| all | 2 | 0 | 0 | 50.0% |" in table
    assert gate_rates.main(["--table", *map(str, paths)]) == 0


def test_parts_that_differ_or_share_a_seed_are_refused(tmp_path, capsys):
    a, b, c = tmp_path / "a.json", tmp_path / "b.json", tmp_path / "c.json"
    a.write_text(json.dumps(part(1)))
    b.write_text(json.dumps(part(2, processes=5)))
    c.write_text(json.dumps(part(1)))
    assert gate_rates.main(["--table", str(a), str(b)]) == 2
    assert "differ in processes" in capsys.readouterr().err
    assert gate_rates.main(["--table", str(a), str(c)]) == 2
    assert "one seed" in capsys.readouterr().err
    (tmp_path / "bad.json").write_text("{}")
    assert gate_rates.main(["--table", str(tmp_path / "bad.json")]) == 2
    assert "not a gate-rates rates.json" in capsys.readouterr().err
