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
