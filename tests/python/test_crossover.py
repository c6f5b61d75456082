"""Tests of scripts/crossover.py on planted results files: the model fit, cliffs and model breaks, knees, decisions
with ties and SM cost, regions and thresholds, JSON without NaN, heat maps, and bad input (exit 2).

Run by ctest (test `scripts`) with a python3 that has pytest (matplotlib for the heat-map test).
"""
import json
import lzma
import os
import subprocess
import sys

import pytest

from test_blocks_report import block_result
from test_scripts import SCRIPTS, document, result, run

from dmabench.reports import crossover

KIB = 1024
TOOL = "crossover.py"


def rec(engine, block, n, p50, half=0.01, options=None, details=None, host=("pinned", "local"), **extra):
    """A block record with a p50 interval of +-`half` (a fraction of the p50); sm records get engine details."""
    if engine == "sm" and details is None:
        details = {"sm_budget": None, "grid_blocks": 132, "sms_used": 132, "multiprocessors": 132}
    r = block_result(engine, block, n, p50, options=options, host=host, p50_interval_us=[p50 * (1 - half),
                                                                                         p50 * (1 + half)], **extra)
    if details is not None:
        r["engine_details"] = details
    return r


def model(per_call, per_desc, rate_gbps):
    return lambda block, n: per_call + per_desc * n + n * block / (rate_gbps * 1e3)


def report(tmp_path, records, *args, name="run.json"):
    """(process, markdown, JSON report) of crossover.py over one planted file."""
    src = tmp_path / name
    src.write_text(json.dumps(document(records)))
    out = tmp_path / "crossover.json"
    p = run(TOOL, src, "--json", out, *args)
    assert p.returncode == 0, p.stderr
    return p, p.stdout, json.loads(out.read_text(), parse_constant=no_constant)


def no_constant(name):
    raise AssertionError(f"JSON holds {name}")


def only_group(rep):
    assert len(rep["groups"]) == 1, [g["title"] for g in rep["groups"]]
    return rep["groups"][0]


def fit_of(g, mech):
    return next(f for f in g["fits"] if f["mechanism"] == mech)


def test_fit_recovers_planted_costs(tmp_path):
    t = model(8.0, 0.35, 40.0)
    records = [rec("ce-batch", k * KIB, n, t(k * KIB, n)) for k in (4, 8, 16, 32, 64, 128) for n in (1, 8, 64)]
    _, md, rep = report(tmp_path, records)
    f = fit_of(only_group(rep), "ce-batch")
    assert f["fitted"] and f["cells"] == 18
    assert f["per_call_us"] == pytest.approx(8.0, rel=0.01)
    assert f["per_desc_us"] == pytest.approx(0.35, rel=0.01)
    assert f["rate_GBps"] == pytest.approx(40.0, rel=0.01)
    assert f["r2"] == pytest.approx(1.0, abs=1e-9) and f["max_rel_residual"] < 1e-9 and f["break"] is None
    assert only_group(rep)["cliffs"] == []  # a curve on the model has no cliff
    assert "| ce-batch | 18 | 8.00 | 0.350 | 40.0 | 1.0000 |" in md


def test_fit_with_noise_and_the_cells_it_needs():
    t = model(3.0, 1.5, 10.0)
    noisy = [(b, n, t(b, n) * (1 + 0.004 * (-1) ** i)) for i, (b, n) in
             enumerate((b, n) for b in (1024, 4096, 16384, 65536) for n in (2, 16, 128))]
    f = crossover.fit_cells(noisy)
    assert f["per_call_us"] == pytest.approx(3.0, rel=0.05) and f["rate_GBps"] == pytest.approx(10.0, rel=0.01)
    assert f["max_rel_residual"] == pytest.approx(0.004, rel=0.5) and f["r2"] > 0.999
    assert crossover.fit_cells(noisy[:3])["reason"] == "3 cells; needs >= 4"
    assert crossover.fit_cells([(b, 8, 1.0 + b) for b in (1, 2, 3, 4)])["reason"] == "one block count (n=8); needs >= 2"
    assert crossover.fit_cells([(64, n, 1.0 + n) for n in (1, 2, 3, 4)])["reason"].startswith("one block size")
    assert crossover.solve3([[1, 2, 3], [2, 4, 6], [1, 0, 0]], [1, 2, 3]) is None
    assert crossover.solve3([[2, 0, 0], [0, 4, 0], [1, 0, 1]], [2, 8, 4]) == pytest.approx([1, 2, 3])


def cliff_records(everywhere=False):
    """ce on a 4 KiB grid from 4 to 64 KiB at n=8 and n=64; bandwidth jumps 6x between 24 and 28 KiB at n=64 (at
    every n with `everywhere`): below 28 KiB the times are the model's times a constant factor slower."""
    t = model(5.0, 0.2, 20.0)
    records = []
    for n in (8, 64):
        slow = 6 * (24 / 28) * t(28 * KIB, n) / t(24 * KIB, n)
        for k in range(4, 68, 4):
            factor = slow if k <= 24 and (n == 64 or everywhere) else 1.0
            records.append(rec("ce", k * KIB, n, t(k * KIB, n) * factor, half=0.02))
    return records


def test_a_planted_cliff_is_found_at_its_step_only(tmp_path):
    _, md, rep = report(tmp_path, cliff_records())
    g = only_group(rep)
    (c,) = g["cliffs"]
    assert (c["mechanism"], c["blocks_per_op"], c["from_bytes"], c["to_bytes"]) == ("ce", 64, 24 * KIB, 28 * KIB)
    assert c["direction"] == "up" and c["to_GBps"] / c["from_GBps"] == pytest.approx(6.0)
    assert "ce: cliff between 24 KiB and 28 KiB at n=64: bandwidth" in md
    assert fit_of(g, "ce")["max_rel_residual"] > 0.25 and fit_of(g, "ce")["break"] is not None


def test_a_model_break_at_every_n_is_placed_between_the_right_sizes(tmp_path):
    _, md, rep = report(tmp_path, cliff_records(everywhere=True))
    g = only_group(rep)
    assert {(c["blocks_per_op"], c["from_bytes"], c["to_bytes"]) for c in g["cliffs"]} == \
        {(8, 24 * KIB, 28 * KIB), (64, 24 * KIB, 28 * KIB)}
    b = fit_of(g, "ce")["break"]
    assert (b["break_after_bytes"], b["next_bytes"]) == (24 * KIB, 28 * KIB)
    assert b["above"]["per_call_us"] == pytest.approx(5.0, rel=0.01)
    assert b["above"]["rate_GBps"] == pytest.approx(20.0, rel=0.01) and b["above"]["ssr"] < 1e-12
    assert b["ssr"] < 0.01 * fit_of(g, "ce")["ssr"]
    assert "the model breaks between 24 KiB and 28 KiB" in md


def test_cliff_needs_the_jump_outside_the_intervals():
    series = [(k * KIB, p, p * 0.99, p * 1.01) for k, p in ((4, 10.0), (8, 10.5), (12, 11.0), (16, 6.0), (20, 6.5))]
    (c,) = crossover.cliffs_of("x", 4, series, 0.25)
    assert (c["from_bytes"], c["to_bytes"]) == (12 * KIB, 16 * KIB)
    wide = [(b, p, p * 0.5, p * 1.5) for b, p, _, _ in series]  # the same jump within wide intervals: no cliff
    assert crossover.cliffs_of("x", 4, wide, 0.25) == []
    assert crossover.cliffs_of("x", 4, series[:3], 0.25) == []  # fewer than 4 sizes


def test_knee_at_the_right_step(tmp_path):
    curve = {1: 10.0, 2: 10.2, 4: 10.5, 8: 11.5, 16: 12.5, 32: 16.0}
    records = [rec("sm", k * KIB, 16, p, half=0.01) for k, p in curve.items() if k != 8]
    records.append(rec("sm", 8 * KIB, 16, 11.5, half=0.2))  # above the floor by 15%, within its interval
    records += [rec("ce", k * KIB, 16, 20.0) for k in curve]  # flat: bound everywhere
    _, md, rep = report(tmp_path, records)
    knees = {k["mechanism"]: k for k in only_group(rep)["knees"]}
    assert (knees["sm"]["bound_up_to_bytes"], knees["sm"]["knee_bytes"]) == (8 * KIB, 16 * KIB)
    assert knees["sm"]["floor_us"] == 10.0
    assert knees["ce"]["knee_bytes"] is None and knees["ce"]["bound_up_to_bytes"] == 32 * KIB
    assert "sm at n=16: per-descriptor bound up to 8 KiB, not at 16 KiB" in md
    assert "ce at n=16: no knee" in md


def test_decisions_ties_margins_and_sm_cost(tmp_path):
    sm12 = {"sm_budget": 12, "grid_blocks": 48, "sms_used": 12, "multiprocessors": 132}
    records = [rec("ce-batch", 4 * KIB, 8, 10.0, half=0.02), rec("sm", 4 * KIB, 8, 10.1, half=0.02, details=sm12),
               rec("ce-batch", 8 * KIB, 8, 20.0), rec("sm", 8 * KIB, 8, 10.0, details=sm12),
               rec("sm", 8 * KIB, 8, 14.0, options={"blocks": 400},
                   details={"sm_budget": None, "grid_blocks": 400, "multiprocessors": 132}),
               rec("host", 8 * KIB, 8, 30.0)]
    _, md, rep = report(tmp_path, records)
    tie, win = only_group(rep)["cells"]
    assert tie["tie"] and tie["tied"] == ["ce-batch", "sm"] and tie["winner"] == "ce-batch"
    assert tie["margin"] == pytest.approx(1.01)
    assert not win["tie"] and win["tied"] == [] and (win["winner"], win["runner_up"]) == ("sm", "sm blocks=400")
    assert win["margin"] == pytest.approx(1.4)
    m = win["mechanisms"]
    assert m["sm"]["sm_cost_SM_us"] == pytest.approx(120.0) and m["sm"]["sms_held"] == 12
    assert m["sm blocks=400"]["sms_held"] == 132 and m["sm blocks=400"]["sm_cost_SM_us"] == pytest.approx(132 * 14.0)
    assert m["ce-batch"]["sm_cost_SM_us"] == 0
    assert m["host"]["sm_cost_SM_us"] is None and "CPU threads" in m["host"]["sm_note"]
    assert "| 4 KiB | tie (ce-batch, sm): 10.0 [9.80, 10.2] 95% |" in md and "| 8 KiB | sm ×1.4: 10.0 [9.90, 10.1] 95% |" in md
    assert "| 8 KiB | 8 | 20.0 ±0.200 (0) | 30.0 ±0.300 (CPU) | 10.0 ±0.1000 (120) | 14.0 ±0.140 (1848) |" in md  # ±: half the p50 interval (issue 42)


def test_regions_and_thresholds(tmp_path):
    times = {4: (31.0, 10.0), 8: (40.0, 20.0), 12: (45.0, 25.0), 16: (50.0, 50.5), 20: (45.0, 67.5)}
    records = []
    for k, (dma, kernel) in times.items():
        records += [rec("ce-batch", k * KIB, 64, dma), rec("sm", k * KIB, 64, kernel, options={"sms": 12})]
        records.append(rec("ce", k * KIB, 64, 6.25 if k == 4 else 2 * dma))
    _, md, rep = report(tmp_path, records)
    g = only_group(rep)
    (region,) = g["regions"]
    runs = [(r["winner"], r["from_bytes"] // KIB, r["to_bytes"] // KIB) for r in region["runs"]]
    assert runs == [("ce", 4, 4), ("sm sms=12", 8, 12), ("tie", 16, 16), ("ce-batch", 20, 20)]
    assert (region["runs"][1]["margin_min"], region["runs"][1]["margin_max"]) == pytest.approx((1.8, 2.0))
    assert region["runs"][2]["tied"] == ["ce-batch", "sm sms=12"]
    assert region["text"] == ("n=64: ce wins 4 KiB (1.6×), sm sms=12 wins 8–12 KiB (1.8–2.0×), "
                              "tie at 16 KiB (ce-batch, sm sms=12), ce-batch wins 20 KiB (1.5×)")
    th = {t["dma"]: t for t in g["thresholds"]}
    assert set(th) == {"ce", "ce-batch"} and all(t["kernel"] == "sm sms=12" for t in th.values())
    b = th["ce-batch"]
    assert (b["kernel_wins_up_to_bytes"], b["kernel_wins_below_bytes"], b["dma_wins_from_bytes"]) == \
        (12 * KIB, 16 * KIB, 20 * KIB)
    assert b["single_crossover"] and [o for _, o in b["outcomes"]] == ["kernel"] * 3 + ["tie", "dma"]
    c = th["ce"]
    assert c["kernel_wins_up_to_bytes"] is None and c["kernel_wins_below_bytes"] == 4 * KIB
    assert not c["single_crossover"]  # ce wins at 4 KiB, sm from 8 KiB
    assert "n=64: sm sms=12 beats ce-batch up to 12 KiB, not at 16 KiB; ce-batch beats it from 20 KiB" in md


def test_json_has_no_nan_and_replacements_are_noted(tmp_path):
    tiny = rec("ce", 4 * KIB, 8, 5e-324, half=0.0, bytes=None, algbw_GBps=0.0, busbw_GBps=0.0)
    records = [tiny, rec("sm", 4 * KIB, 8, 10.0), rec("sm", 4 * KIB, 8, 12.0)] + \
        [rec("ce", k * KIB, n, 5e-324 * k, half=0.0, bytes=None, algbw_GBps=0.0, busbw_GBps=0.0)
         for k in (8, 16, 32) for n in (8, 16)]
    _, md, rep = report(tmp_path, records)
    g = only_group(rep)
    assert g["cells"][0]["margin"] is None  # 12 / 5e-324 overflows: null, not Infinity
    assert g["cells"][0]["mechanisms"]["sm"]["p50_us"] == 12.0  # the later record is used
    assert "1 block record(s) measured a cell an earlier one did" in md
    assert fit_of(g, "ce")["fitted"] is False


def test_plots_write_png_and_a_single_mechanism_gets_none(tmp_path):
    pytest.importorskip("matplotlib")
    records = cliff_records() + [rec("sm", k * KIB, n, 40.0 + k) for k in range(4, 68, 4) for n in (8, 64)]
    records += [rec("ce", 4 * KIB, 8, 9.0, pattern="d2h"), rec("ce", 8 * KIB, 8, 10.0, pattern="d2h")]
    plots = tmp_path / "maps"
    _, md, rep = report(tmp_path, records, "--plots", plots)
    h2d, d2h = rep["groups"]
    assert d2h["pattern"] == "d2h" and d2h["figure"] is None
    assert "No heat map: 1 mechanism (ce)" in md
    assert h2d["figure"] and os.path.basename(h2d["figure"]) == "crossover-01-h2d-pinned.png"
    assert sorted(os.listdir(plots)) == ["crossover-01-h2d-pinned.png"]
    assert (plots / "crossover-01-h2d-pinned.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def check_exit_2(p, want):
    assert p.returncode == 2, (p.returncode, p.stdout[-500:], p.stderr[-500:])
    lines = p.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"{TOOL}: error: ") and want in lines[0], p.stderr
    assert "Traceback" not in p.stderr and len(lines[0]) <= 300


def test_plots_without_matplotlib_exit_2(tmp_path):
    fake = tmp_path / "fake" / "matplotlib"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text("raise ImportError('no matplotlib here')\n")
    src = tmp_path / "run.json"
    src.write_text(json.dumps(document([rec("ce", 4 * KIB, 8, 10.0)])))
    env = dict(os.environ, PYTHONPATH=str(tmp_path / "fake"))
    p = subprocess.run([sys.executable, os.path.join(SCRIPTS, TOOL), str(src), "--plots", str(tmp_path / "maps")],
                       capture_output=True, text=True, env=env, timeout=120)
    check_exit_2(p, "'plot' extra (matplotlib is not installed): pip install './python[plot]'")
    assert p.stderr.strip() == (f"{TOOL}: error: this needs the 'plot' extra (matplotlib is not installed): "
                                "pip install './python[plot]' or apt install python3-matplotlib python3-pandas")


def bad_record(field, value):
    r = rec("sm", 4 * KIB, 8, 10.0)
    target, key = (r["engine_details"], field.split(".")[1]) if field.startswith("engine_details.") else (r, field)
    target[key] = value
    return r


@pytest.mark.parametrize("field,value,want", [
    ("engine_details.sms_used", "12", "engine_details.sms_used: expected an integer"),
    ("engine_details.grid_blocks", 1.5, "engine_details.grid_blocks"),
    ("engine_details", [1], "engine_details: expected an object"),
    ("validated", "yes", "validated: expected true or false"),
    ("layout", {"kind": "blocks", "block_bytes": "4K", "blocks_per_op": 8}, "layout.block_bytes"),
    ("host_memory", {"kind": 3, "numa": "local"}, "host_memory.kind"),
])
def test_record_fields_of_wrong_types_exit_2(tmp_path, field, value, want):
    src = tmp_path / "bad.json"
    src.write_text(json.dumps(document([bad_record(field, value)])))
    check_exit_2(run(TOOL, src), want)


def test_bad_files_options_and_outputs_exit_2(tmp_path):
    good = tmp_path / "good.json"
    good.write_text(json.dumps(document([rec("ce", 4 * KIB, 8, 10.0)])))
    text = tmp_path / "notes.txt"
    text.write_text("not json at all\n")
    check_exit_2(run(TOOL, text), "cannot read")
    check_exit_2(run(TOOL, tmp_path / "missing.json"), "missing.json")
    for option, value in (("--knee", "0"), ("--knee", "-0.1"), ("--cliff", "abc"), ("--cliff", "nan"),
                          ("--cliff", "inf")):
        check_exit_2(run(TOOL, good, option, value), f"argument {option}: expected a number > 0")
    check_exit_2(run(TOOL, good, "--json", tmp_path / "no" / "such" / "dir.json"), "cannot write")
    check_exit_2(run(TOOL, good, "--markdown", tmp_path), "cannot write")
    check_exit_2(run(TOOL, good, "--json", good), "a file this script read")
    check_exit_2(run(TOOL), "required")


def test_no_block_records_is_not_an_error(tmp_path):
    p, md, rep = report(tmp_path, [result("copy", "ce", 1024, "oneshot", 8.0)])
    assert rep["groups"] == [] and not p.stderr and rep["schema"] == "dmabench-crossover/1"
    assert "No block-layout records" in md
    assert rep["sources"][0]["git_revision"] == "test"


def test_in_process_main_and_device_memory_groups(tmp_path, capsys):
    records = [rec("ce", 4 * KIB, 8, 5.0, pattern="copy", host=None), rec("sm", 4 * KIB, 8, 4.0, pattern="copy",
                                                                          host=None)]
    src = tmp_path / "copy.json"
    src.write_text(json.dumps(document(records)))
    assert crossover.main([str(src)]) == 0
    out = capsys.readouterr().out
    assert "## copy · device memory · blocks sequential, sides both · dev=0" in out and "| 4 KiB | sm ×1.2: 4.00 [3.96, 4.04] 95% |" in out


# ---- head to head (--versus) ----------------------------------------------------------------------

A, B = "sm sms=12", "ce-batch"
SM12 = {"sm_budget": 12, "grid_blocks": 48, "sms_used": 12, "multiprocessors": 132}


def versus_records():
    """sm sms=12 (A: 10 + k µs x n/8) against ce-batch (B: 24 + k/2 µs x n/8) at k = 4..48 KiB, n = 8 and 64: A
    beats B below 28 KiB, ties at 28 KiB (equal p50s) and loses above. At n=64 A's interval at 24 KiB is +-10%
    (a tie at ratio 36/34) and B is not measured at 48 KiB. A d2h group with one common cell, a pageable group with
    A only; a host cell at 64 KiB that neither measured."""
    records = []
    for n in (8, 64):
        for k in range(4, 52, 4):
            scale = n / 8
            half = 0.10 if (n, k) == (64, 24) else 0.01
            records.append(rec("sm", k * KIB, n, (10 + k) * scale, half=half, options={"sms": 12}, details=SM12))
            if (n, k) != (64, 48):
                records.append(rec("ce-batch", k * KIB, n, (24 + k / 2) * scale))
    records += [rec("sm", 4 * KIB, 8, 14.0, options={"sms": 12}, details=SM12, pattern="d2h"),
                rec("ce-batch", 4 * KIB, 8, 26.0, pattern="d2h"), rec("ce-batch", 8 * KIB, 8, 28.0, pattern="d2h")]
    records.append(rec("host", 64 * KIB, 8, 99.0))  # a cell neither A nor B measured: not in the pair's cells
    records += [rec("sm", 4 * KIB, 8, 14.0, options={"sms": 12}, details=SM12, host=("pageable", "local")),
                rec("ce", 4 * KIB, 8, 20.0, host=("pageable", "local"))]
    return records


def versus_of(g):
    (v,) = g["versus"]
    assert (v["a"], v["b"]) == (A, B)
    return v, {(c["block_bytes"] // KIB, c["blocks_per_op"]): c for c in v["cells"]}


def test_versus_markdown_json_and_lines(tmp_path):
    _, md, rep = report(tmp_path, versus_records(), "--versus", f"{A},{B}")
    h2d, pageable, d2h = rep["groups"]
    assert rep["versus"] == [{"a": A, "b": B}]
    v, cells = versus_of(h2d)
    assert cells[(4, 8)]["ratio"] == pytest.approx(26 / 14) and cells[(4, 8)]["tie"] is False
    assert cells[(28, 8)]["ratio"] == pytest.approx(1.0) and cells[(28, 8)]["tie"] is True
    assert cells[(24, 64)]["ratio"] == pytest.approx(36 / 34) and cells[(24, 64)]["tie"] is True
    assert cells[(32, 8)]["ratio"] == pytest.approx(40 / 42) and cells[(32, 8)]["tie"] is False
    assert cells[(48, 64)] == {"block_bytes": 48 * KIB, "blocks_per_op": 64, "ratio": None, "tie": None,
                               "a_p50_us": pytest.approx(58 * 8), "b_p50_us": None}
    assert v["common_cells"] == 23 and len(v["cells"]) == 24 and v["figure"] is None and v["note"] is None
    assert "| 64 KiB | – | – |" not in md
    lines = {line["blocks_per_op"]: line for line in v["lines"]}
    assert (lines[8]["a_wins_up_to_bytes"], lines[8]["a_wins_below_bytes"], lines[8]["b_wins_from_bytes"]) == \
        (24 * KIB, 28 * KIB, 32 * KIB)
    assert (lines[64]["a_wins_up_to_bytes"], lines[64]["b_wins_from_bytes"]) == (20 * KIB, 32 * KIB)
    assert "**sm sms=12 vs ce-batch** (ce-batch p50 / sm sms=12 p50: > 1 where sm sms=12 is faster" in md
    assert "| 4 KiB | 1.86× | 1.86× |" in md
    assert "| 24 KiB | 1.06× | 1.06× (tie) |" in md and "| 28 KiB | 1.00× (tie) | 1.00× (tie) |" in md
    assert "| 48 KiB | 0.83× | – |" in md
    assert "- n=8: sm sms=12 beats ce-batch up to 24 KiB, not at 28 KiB; ce-batch beats it from 32 KiB" in md
    assert "- n=64: sm sms=12 beats ce-batch up to 20 KiB, not at 24 KiB; ce-batch beats it from 32 KiB" in md
    assert pageable["versus"] == [] and "--versus sm sms=12,ce-batch: ce-batch not measured in this group." in md
    assert versus_of(d2h)[0]["common_cells"] == 1


def test_versus_plots(tmp_path):
    pytest.importorskip("matplotlib")
    plots = tmp_path / "maps"
    _, md, rep = report(tmp_path, versus_records(), "--versus", f"{A},{B}", "--plots", plots)
    h2d, _, d2h = rep["groups"]
    name = "crossover-01-h2d-pinned-sm-sms-12-vs-ce-batch.png"
    assert os.path.basename(versus_of(h2d)[0]["figure"]) == name
    assert (plots / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    v, _ = versus_of(d2h)
    assert v["figure"] is None and v["note"] == "No sm sms=12 vs ce-batch map: 1 cell(s) measured by both; a map " \
                                                "needs >= 2."
    assert v["note"] in md
    assert sorted(os.listdir(plots)) == [name, "crossover-01-h2d-pinned.png", "crossover-02-h2d-pageable.png",
                                         "crossover-03-d2h-pinned.png"]


def test_versus_cliff_lines_and_helpers():
    class Ax:
        def __init__(self):
            self.lines = []

        def plot(self, xs, ys, **style):
            self.lines.append((xs[0], ys[0], style["color"]))

    cliffs = [{"mechanism": "x", "blocks_per_op": 8, "to_bytes": 8}, {"mechanism": "y", "blocks_per_op": 64,
                                                                      "to_bytes": 16},
              {"mechanism": "y", "blocks_per_op": 32, "to_bytes": 16}, {"mechanism": "z", "blocks_per_op": 8,
                                                                        "to_bytes": 8}]
    ax = Ax()
    handles = crossover.versus_cliffs(ax, {"cliffs": cliffs}, {"a": "x", "b": "y"}, [4, 8, 16], [8, 64],
                                      lambda *a, **k: k["label"])
    assert handles == ["cliff of x", "cliff of y"]  # n=32 is not on the map, z is neither
    assert [(round(x, 2), y) for x, y, _ in ax.lines] == [(0.45, -0.5), (1.55, 0.5)]
    assert [crossover.sig2(x) for x in (2.31, 0.456, 9.96, 123.4, 0.0996, None)] == \
        ["2.3", "0.46", "10", "120", "0.10", "–"]
    assert crossover.slug("sm sms=12") == "sm-sms-12" and crossover.slug("ce-batch") == "ce-batch"
    known = {"sm blocks=400,sms=12", "ce-batch"}
    assert crossover.split_pair("sm blocks=400,sms=12, ce-batch", known) == ("sm blocks=400,sms=12", "ce-batch")


def test_versus_unknown_label_exit_2(tmp_path):
    src = tmp_path / "run.json"
    src.write_text(json.dumps(document(versus_records())))
    p = run(TOOL, src, "--versus", f"{A},{B}", "--versus", "sm sms=99,ce-batch")
    check_exit_2(p, "--versus: unknown label 'sm sms=99'; known: ce, ce-batch, host, sm sms=12")
    check_exit_2(run(TOOL, src, "--versus", "ce-batch,sdma"),
                 "unknown label 'sdma'; known: ce, ce-batch, host, sm sms=12")
    check_exit_2(run(TOOL, src, "--versus", "ce-batch"), "expected two variant labels A,B")
    check_exit_2(run(TOOL, src, "--versus", "ce,ce"), "A and B are one label")


def test_a_copy_within_one_gpu_is_not_called_sm_free(tmp_path):
    """d2d ce / ce-batch: CUDA runs a same-GPU copy as a kernel, so its SM cost is unknown (null), not 0; through the
    copy engines (local=peer-bounce) or on HIP's no-CU copy kind it is 0."""
    d2d = {"pattern": "d2d", "host": None}
    records = [rec("ce-batch", 4 * KIB, 8, 40.0, **d2d), rec("ce", 4 * KIB, 8, 41.0, options={"local": "peer-bounce"}, **d2d),
               rec("ce", 4 * KIB, 8, 45.0, details={"copy_kind": "hipMemcpyDeviceToDeviceNoCU"}, **d2d),
               rec("sm", 4 * KIB, 8, 10.0, options={"sms": 12},
                   details={"sm_budget": 12, "grid_blocks": 12, "sms_used": 12, "multiprocessors": 132}, **d2d)]
    _, _, rep = report(tmp_path, records)
    m = only_group(rep)["cells"][0]["mechanisms"]
    assert m["ce-batch"]["sm_cost_SM_us"] is None and "kernel" in m["ce-batch"]["sm_note"]
    assert m["ce local=peer-bounce"]["sm_cost_SM_us"] == 0 and m["ce"]["sm_cost_SM_us"] == 0
    assert m["sm sms=12"]["sm_cost_SM_us"] == pytest.approx(120.0)


# ---- interval coverage (issue 50, part 5) ---------------------------------------------------------

@pytest.mark.parametrize("processes, label, what", [(3, "75%", "[min, max] of 3 processes' p50s"),
                                                    (5, "93.75%", "[min, max] of 5 processes' p50s"),
                                                    (10, "97.85%", "ranks 2 and 9 of 10 processes' sorted p50s")])
def test_a_levels_interval_is_labelled_with_its_own_coverage(tmp_path, processes, label, what):
    """A levels file's between-process interval covers the median with levels.median_ranks' probability: 3
    processes' [min, max] is a 75% interval, never a '95%' one; the winner table prints each entry's interval with
    it."""
    levels = {"processes": processes, "p50_us": [4.0] * processes}
    records = [rec("ce", 4 * KIB, 8, 5.0, levels=levels), rec("sm", 4 * KIB, 8, 4.0, levels=levels)]
    _, md, rep = report(tmp_path, records)
    (cell,) = only_group(rep)["cells"]
    assert cell["mechanisms"]["sm"]["interval_coverage"] == pytest.approx(float(label[:-1]) / 100, abs=5e-5)
    assert f"| 4 KiB | sm ×1.2: 4.00 [3.96, 4.04] {label} |" in md
    assert f"Intervals: {what}: holds the median with {label}." in md
    assert "95% interval" not in md and ("95%" not in md or processes >= 6)


def test_the_committed_h200_report_is_what_the_tool_makes_now(monkeypatch, tmp_path):
    """results/h200x1/crossover/crossover.md is crossover.py's output over the committed levels files (the command
    its README names), so its labels and intervals are the tool's, never edited by hand. The levels files are
    committed xz-compressed (crossover.json.xz, crossover-d2d.json.xz) and the command ran on them uncompressed: they
    are decompressed here under their own names, which the report quotes."""
    where = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                         "results", "h200x1", "crossover")
    for name in ("crossover.json", "crossover-d2d.json"):
        with lzma.open(os.path.join(where, name + ".xz")) as f:
            (tmp_path / name).write_bytes(f.read())
    monkeypatch.chdir(tmp_path)  # the report names its sources as given: relative to the folder
    rep = crossover.report_of(["crossover.json", "crossover-d2d.json"], "oneshot", 0.10, 0.25,
                              ["sm sms=12,ce-batch", "sm sms=all,ce-batch"])
    with open(os.path.join(where, "crossover.md"), encoding="utf-8") as f:
        assert crossover.markdown(rep) == f.read(), "run the command in results/h200x1/crossover/README.md, Files"
