"""The results text quotes figures its generated blocks remake from committed data (issue 50, part 5): the
levels-selfcmp table reads both runs A and B, and the crossover-claims blocks say what the H200 crossover data says
(a time ratio and a rate ratio kept apart, the pool sizes, the n=16 kernel wins). The test of generated tables
(test_generated_tables.py) checks that every block in the tree is what these make now."""
import json

import pytest

from test_scripts import ROOT

from dmabench import crossover_text, generated, selfcmp_text
from dmabench.text import ResultsError

LEVELS = "results/h200x1/levels/start2"
XO = "results/h200x1/crossover"


def selfcmp_rows(args, root=ROOT):
    text = selfcmp_text.generated_block(args, root)
    return {tuple(c.strip() for c in line.split("|")[1:3]): line for line in text.splitlines()[2:]}


def test_selfcmp_half_widths_come_from_both_runs():
    rows = selfcmp_rows([f"noise-repeat={LEVELS}/noise-repeat-A.json,{LEVELS}/noise-repeat-B.json"])
    bw = rows[("noise-repeat", "bandwidth-bound")]
    # A's h2d-bidir 256 MiB (6.25%) is the widest; B alone read 0.2% (1.9%)
    assert "| 0.3% (6.3%) | 6.3%: `h2d-bidir/ce/pipelined/dev=0/256MiB/host=pinned,numa=local`, run A |" in bw
    assert "| 5 of 60 (1.05–1.08×, in 1 case) |" in bw  # 5 of A's 10 process pairs, none of B's
    readme = open(f"{ROOT}/results/h200x1/levels/README.md", encoding="utf-8").read()
    assert bw in readme and "0.2% (1.9%)" not in readme and "Bandwidth-bound figures need one" not in readme


def test_selfcmp_reads_a_wide_case_in_either_run(tmp_path):
    for side, other in (("A", "B"), ("B", "A")):
        docs = {p: json.load(open(f"{ROOT}/{LEVELS}/noise-repeat-{p}.json")) for p in "AB"}
        for r in docs[side]["results"]:
            if r["status"] == "ok" and r["name"].startswith("d2h/ce/pipelined"):
                r["noise"] = 0.5
        for p, d in docs.items():
            (tmp_path / f"{p}.json").write_text(json.dumps(d))
        bw = selfcmp_rows([f"x={tmp_path}/A.json,{tmp_path}/B.json"], root="/")[("x", "bandwidth-bound")]
        assert f"(50.0%) | 50.0%: `d2h/ce/pipelined/dev=0/256MiB/host=pinned,numa=local`, run {side} |" in bw


def test_selfcmp_processes_for_ten_percent_and_pairs():
    assert selfcmp_text.pairs_over([100, 104, 106]) == (3, [pytest.approx(1.06)])
    assert selfcmp_text.processes_for_ten_percent([100.0] * 5) == 1.0
    with pytest.raises(ResultsError, match="expected LABEL=A.json,B.json"):
        selfcmp_text.generated_block(["x=a.json"], ROOT)


def claim(*args):
    return crossover_text.generated_block(list(args), ROOT)


def test_the_step_keeps_time_and_rate_ratios_apart():
    text = claim("step", f"{XO}/crossover.json.xz", "h2d:mapped", "ce-batch", "24KiB", "28KiB", "256")
    assert "| 64 | 262 [220, 262] | 91.7 [70.3, 93.3] | 2.86× | 6.0 | 20.0 | 3.33× | yes |" in text
    assert ("For n ≥ 256: a 28 KiB block call takes 0.22–0.32× the time of a 24 KiB one and moves 3.59–5.26× the "
            "bytes per second (5.6–7.5 → 26.9–29.5 GB/s).") in text
    assert "[min, max] of 3 processes' p50s: 75%" in text


def test_the_n16_kernel_wins_from_36_kib():
    text = claim("versus", f"{XO}/crossover.json.xz", "h2d:mapped", "sm sms=12", "ce-batch", "16", "36KiB")
    assert "ce-batch p50 / sm sms=12 p50 0.93–1.17×" in text
    assert "sm sms=12 wins (intervals apart) at 10 (64 KiB, 76 KiB" in text
    assert "ce-batch wins at 4 (512 KiB, 1 MiB, 2 MiB, 4 MiB)" in text


def test_the_pool_size_moves_the_level():
    text = claim("pool", f"{XO}/pool")
    assert "| dmabench | 20 KiB × 1024 | exact: 1216 [1094, 1228] | 1 GiB: 1369 [1355, 1412] | 1.126× | yes |" in text
    assert "- dmabench: the larger pool slower at 3 of 3 cells (1.040–1.126×); intervals apart at 3 of 3." in text
    assert "- probe: the larger pool slower at 3 of 3 cells (1.033–1.057×); intervals apart at 1 of 3." in text
    readme = open(f"{ROOT}/{XO}/README.md", encoding="utf-8").read()
    assert "Neither tool's level depended on the pool size" not in readme and "within ±10%, mostly ties" not in readme
    assert "3.3–5.3×" not in readme


def test_the_4gib_map_against_the_probe_over_the_same_pool():
    """Issue 54's check on the H100's 4 GiB map: h2d ce-batch at 20-36 KiB within ±10% of tools/crossover_probe."""
    h100 = "results/h100x1/crossover"
    text = claim("probe", f"{h100}/crossover.json.xz", "h2d:mapped", "ce-batch", f"{h100}/probe")
    assert "| 20 KiB × 4096 | 3862 [3772, 3953] | 3781 [3774, 3867] | 1.021 | yes |" in text
    assert "33 of 34 cells within ±10% of the probe; outside: 20 KiB × 16 (1.16)." in text
    with pytest.raises(ResultsError, match="no cell of sm"):
        claim("probe", f"{h100}/crossover.json.xz", "h2d:mapped", "sm", f"{h100}/probe")


def test_bad_claims_are_one_line_errors():
    with pytest.raises(ResultsError, match="expected step"):
        claim("step", "x")
    with pytest.raises(ResultsError, match="no block group"):
        claim("versus", f"{XO}/crossover.json.xz", "h2d:nowhere", "sm sms=12", "ce-batch", "16", "36KiB")
    with pytest.raises(ResultsError, match="not a size"):
        claim("versus", f"{XO}/crossover.json.xz", "h2d:mapped", "sm sms=12", "ce-batch", "16", "big")
    with pytest.raises(ResultsError, match="No closing quotation"):
        generated.render('crossover-claims versus "sm', ROOT)


def test_sizes_take_binary_units_and_refuse_the_ambiguous_decimal_ones():
    """K/M/G/T and KiB/MiB/GiB/TiB are powers of 1024 (nccl-tests' M); KB/MB/GB/TB are refused naming both readings,
    as the binary refuses them (issue 52): '1MB' was 10^6 here while '1M' was 2^20, silently."""
    from dmabench.text import ResultsError, parse_size
    assert parse_size("1M") == parse_size("1MiB") == 1 << 20
    assert parse_size("64KiB") == 65536 and parse_size("4096") == 4096
    for text, binary, decimal in (("1MB", "1MiB", "1000000"), ("4kb", "4KiB", "4000"), ("2GB", "2GiB", "2000000000")):
        try:
            parse_size(text)
        except ResultsError as e:
            assert "ambiguous" in str(e) and binary in str(e) and decimal in str(e), str(e)
        else:
            raise AssertionError(f"{text} accepted")


def test_the_spin_model_predicts_the_pipelined_slowdown():
    """The H100 gate README's model of the shim's spin on a pipelined sample of 4 copies, against what it measured."""
    g = "results/h100x1/gate"
    text = generated.render(f"gate-spin 4 {g}/mib4000/rates.json {g}/r4/rates.json", ROOT)
    assert "| mib4000/inj-01 | 4000 | `d2h/ce/pipelined/dev=0/256MiB/host=pinned,numa=local` | 4869 | 1026 | 1.053 | 1.053 |" in text
    assert text.count("| r4/inj-") == 6  # three injected comparisons, two pipelined cases each; A/A ones left out
    with pytest.raises(ResultsError, match="expected gate-spin DEPTH"):
        generated.render(f"gate-spin four {g}/r4/rates.json", ROOT)
    with pytest.raises(ResultsError, match="gate-spin: FileNotFoundError"):
        generated.render("gate-spin 4 results/nowhere/rates.json", ROOT)
