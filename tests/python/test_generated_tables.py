"""Tables that markdown files quote from committed data (`<!-- generated: ... -->` blocks, dmabench.generated) are
what their commands make from that data now: a test regenerates every block of every tracked markdown file."""
import json
import subprocess

import pytest

from test_scripts import ROOT

from dmabench import generated
from dmabench.text import ResultsError


def tracked_markdown():
    out = subprocess.run(["git", "ls-files", "*.md"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    return [f"{ROOT}/{p}" for p in out.split()]


def test_every_generated_block_is_what_its_command_makes():
    files = [f for f in tracked_markdown() if "<!-- generated: " in open(f, encoding="utf-8").read()]
    assert any(f.endswith("results/ci-vm-2cpu/README.md") for f in files), files
    for f in files:
        with open(f, encoding="utf-8") as fh:
            text = fh.read()
        assert generated.regenerate(text, ROOT) == text, f"{f}: run `dmabench-results tables {f}`"


def test_tables_rewrites_and_checks(tmp_path):
    rates = tmp_path / "rates.json"
    rates.write_text(json.dumps({"settings": {"command": "--preset x", "processes": 6, "reruns": 2, "alpha": 0.02,
                                              "min_change": {"launch-bound": 0.05, "bandwidth-bound": 0.02},
                                              "stretch": "10:5", "machine": "a CPU"},
                                 "rates": {"aa": 1, "injected": 1, **{f"aa_{k}": {
                                     "comparisons": 1, "with_slower": 0, "with_slower_or_faster": 0,
                                     "ambiguous_share": 0.5, "per_class_ambiguous": {"launch-bound": 0.25,
                                                                                     "bandwidth-bound": 1.0}}
                                     for k in ("all", "quiet", "busy")},
                                     "injected_per_class": {c: {"comparisons_with_slower": 1, "share_slower": 0.9,
                                                                "median_ratio": 1.1}
                                                            for c in ("launch-bound", "bandwidth-bound")}}}))
    md = tmp_path / "README.md"
    md.write_text(f"# x\n<!-- generated: gate-rates --table {rates} -->\nstale\n<!-- end generated -->\nafter\n")
    from dmabench import cli
    assert cli.main(["tables", str(md), "--check"]) == 1
    assert cli.main(["tables", str(md)]) == 0
    text = md.read_text()
    assert "stale" not in text and "| A/A comparisons |" in text and text.endswith("<!-- end generated -->\nafter\n")
    assert cli.main(["tables", str(md), "--check"]) == 0
    md.write_text("<!-- generated: gate-rates --table nowhere.json -->\n")
    assert cli.main(["tables", str(md)]) == 2
    with pytest.raises(ResultsError, match="unknown command"):
        generated.regenerate("<!-- generated: ls -->\n<!-- end generated -->", ROOT)


def test_the_rates_table_states_what_its_counts_bound():
    from dmabench.gate_rates import upper_bound
    assert upper_bound(0, 30) == pytest.approx(1 - 0.05 ** (1 / 30), abs=1e-9)  # 0 of n: 1 - 0.05^(1/n)
    assert upper_bound(0, 10) == pytest.approx(1 - 0.05 ** (1 / 10), abs=1e-9)
    assert 0.1 < upper_bound(1, 30) < 0.2 and upper_bound(5, 5) == 1.0 and upper_bound(0, 0) == 1.0
    text = open(f"{ROOT}/results/ci-vm-2cpu/README.md", encoding="utf-8").read()
    assert "is at most 9.5% (0 of 30)" in text


def test_gate_cases_counts_the_ambiguous_cases_of_planted_comparisons(tmp_path):
    """`gate-cases` reads each comparison's ab.json beside rates.json: the A/A ambiguous launch-bound cases by pattern
    and engine with their widest between-process spread; per injected comparison its reach. Bad input: one error."""
    def case(pattern, engine, verdict, ratio, lo=100.0, hi=110.0):
        return {"case": f"{pattern}/{engine}", "pattern": pattern, "engine": engine, "class": "launch-bound",
                "verdict": verdict, "p50_ratio": ratio, "base_p50_interval_us": [lo, hi],
                "new_p50_interval_us": [100.0, 105.0]}
    plan = {"aa-01": [case("h2d", "ce-batch", "ambiguous", 1.1, 100, 300), case("alltoallv", "ce", "ambiguous", 1.0),
                      case("d2h", "ce", "same", 1.0, 100, 900)],
            "inj-01": [case("h2d", "ce", "slower", 1.3), case("h2d", "ce", "slower", 1.2),
                       case("d2h", "sm", "ambiguous", 1.25)]}
    for name, rows in plan.items():
        (tmp_path / name).mkdir()
        (tmp_path / name / "ab.json").write_text(json.dumps({"cases": rows}))
    comparisons = [{"kind": "aa", "index": 1}, {"kind": "inj", "index": 1}]
    (tmp_path / "rates.json").write_text(json.dumps({"comparisons": comparisons}))
    text = generated.render(f"gate-cases {tmp_path}/rates.json", "/")
    assert "| h2d `ce-batch` | 1 | 3.00x |" in text and "| MoE step `ce` | 1 | 1.10x |" in text, text
    assert "| all | 2 | – |" in text and "d2h `ce`" not in text.split("Spread:")[0], text  # `same` is not listed
    assert "| inj-01 | 2 | 1.200 | 1.250 (ambiguous, `d2h/sm`) |" in text, text
    with pytest.raises(ResultsError, match="expected gate-cases RATES.json"):
        generated.render("gate-cases", "/")
    with pytest.raises(ResultsError, match="FileNotFoundError"):
        generated.render(f"gate-cases {tmp_path}/none.json", "/")


def test_the_ab_table_is_compares_over_an_ab_json(tmp_path):
    """`ab AB.json`: every case of a paired A/B run, as compare prints them; not an ab.json: one clear error."""
    text = generated.regenerate("<!-- generated: ab results/h100x1/sm-kernel/ab.json -->\n<!-- end generated -->", ROOT)
    assert "**dmabench compare**: 30 cases in both files" in text and text.count("| same |") >= 20
    bad = tmp_path / "x.json"
    bad.write_text("{}")
    with pytest.raises(ResultsError, match="not an ab.json"):
        generated.regenerate(f"<!-- generated: ab {bad} -->\n<!-- end generated -->", ROOT)
    with pytest.raises(ResultsError, match="expected ab AB.json"):
        generated.regenerate("<!-- generated: ab -->\n<!-- end generated -->", ROOT)
