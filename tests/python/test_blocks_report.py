"""Tests of scripts/blocks_report.py on planted results files: winners and ratios, crossovers between measured
block sizes, the fixed-cost fit, the records that do not count, and bad input (exit 2).

Run by ctest (test `scripts`) with a python3 that has pandas, matplotlib and pytest.
"""
import json
import os
import sys

import pytest

from test_scripts import SCRIPTS, document, result, run

from dmabench.reports import blocks as blocks_report

KIB = 1024


def block_result(engine, block, count, p50, pattern="h2d", timing="oneshot", options=None, status="ok", reason="",
                 host=("pinned", "local"), order="sequential", validated=None, **extra):
    """A record as dmabench writes one with a block layout: `count` blocks of `block` bytes, one transfer each."""
    size = block * count
    r = result(pattern, engine, size, timing, p50, options=options, status=status)
    listed = "".join(f",{k}={str(v).lower() if isinstance(v, bool) else v}" for k, v in (options or {}).items())
    host_part = f"/host={host[0]},numa={host[1]}" if host else ""
    r.update(name=f"{pattern}/{engine}{listed}/{timing}/dev=0/{size}{host_part}/blocks={count}x{block},{order}",
             devices=[0], ranks=1, bytes=size, reason=reason,
             layout={"kind": "blocks", "block_bytes": block, "blocks": count, "order": order, "stride_bytes": None,
                     "pool_bytes": None, "seed": 1, "sides": "both", "blocks_per_op": count},
             per_block_us=p50 / count if status == "ok" else None)
    if host:
        r["host_memory"] = {"kind": host[0], "numa": host[1], "numa_node": 0, "verified": True, "alloc_s": 0.001,
                            "register_s": 0.0001, "buffers": []}
    if status == "ok":
        r["algbw_GBps"] = r["busbw_GBps"] = size / p50 / 1e3
    if validated is not None:
        r["validated"] = validated
    r.update(extra)
    return r


def contiguous_result(engine, size, p50, pattern="h2d", host=("pinned", "local")):
    r = result(pattern, engine, size, "oneshot", p50)
    r.update(name=f"{pattern}/{engine}/oneshot/dev=0/{size}/host={host[0]},numa={host[1]}", devices=[0], ranks=1,
             bytes=size, layout={"kind": "contiguous"},
             host_memory={"kind": host[0], "numa": host[1], "numa_node": 0, "verified": True, "buffers": []})
    r["algbw_GBps"] = r["busbw_GBps"] = size / p50 / 1e3
    return r


def report(tmp_path, records, *args):
    """(process, markdown, JSON report) of blocks_report.py over one planted file."""
    src = tmp_path / "run.json"
    src.write_text(json.dumps(document(records)))
    out = tmp_path / "report.json"
    p = run("blocks_report.py", src, "--json", out, *args)
    assert p.returncode == 0, p.stderr
    return p, p.stdout, json.loads(out.read_text())


def only_table(rep):
    assert len(rep["tables"]) == 1, [t["pattern"] for t in rep["tables"]]
    return rep["tables"][0]


def test_winner_and_runner_up_ratio_of_three_variants(tmp_path):
    records = [block_result("ce", 4 * KIB, 16, 10.0), block_result("sm", 4 * KIB, 16, 12.0),
               block_result("ce-batch", 4 * KIB, 16, 15.0),
               block_result("ce", 64 * KIB, 16, 40.0), block_result("sm", 64 * KIB, 16, 50.0),
               block_result("ce-batch", 64 * KIB, 16, 30.0),
               # faster than all, but not validated: it must not win
               block_result("sm", 64 * KIB, 16, 1.0, options={"blocks": 8}, validated=False)]
    p, md, rep = report(tmp_path, records)
    t = only_table(rep)
    assert t["variants"] == ["ce", "ce-batch", "sm"]  # a variant with nothing counted gets no column
    small, large = t["rows"]
    assert (small["block_bytes"], small["blocks_per_op"]) == (4 * KIB, 16)
    assert small["winner"] == "ce" and small["runner_up"] == "sm" and small["ratio"] == pytest.approx(1.2)
    assert large["winner"] == "ce-batch" and large["runner_up"] == "ce" and large["ratio"] == pytest.approx(40 / 30)
    assert "sm blocks=8" not in large["cells"]
    assert small["cells"]["ce"]["per_block_us"] == pytest.approx(10.0 / 16)
    assert small["cells"]["sm"]["algbw_GBps"] == pytest.approx(64 * KIB / 12.0 / 1e3)
    assert "| 4 KiB | 16 | 64 KiB | 10.0 | 6.55 | 0.625 |" in md
    assert "| ce | 1.20 (sm) |" in md and "| ce-batch | 1.33 (ce) |" in md
    assert "- 1 × ok but not validated (sm blocks=8)" in md
    assert "## h2d · pinned host memory, numa local · oneshot · blocks sequential, sides both · dev=0" in md


def test_crossover_between_the_right_two_sizes(tmp_path):
    # sm faster at 4 and 16 KiB, ce from 64 KiB; measured at 4, 16, 64, 256 KiB, 8 blocks each
    times = {4: (9.0, 6.0), 16: (12.0, 10.0), 64: (20.0, 26.0), 256: (60.0, 90.0)}
    records = [block_result(e, k * KIB, 8, t) for k, (ce, sm) in times.items() for e, t in (("ce", ce), ("sm", sm))]
    _, md, rep = report(tmp_path, records)
    (c,) = only_table(rep)["crossovers"]
    assert c["variants"] == ["ce", "sm"] and c["series"] == {"by": "blocks_per_op", "value": 8}
    assert c["changes"] == [{"between_bytes": [16 * KIB, 64 * KIB], "from": "sm", "to": "ce"}]
    assert [r["faster"] for r in c["runs"]] == ["sm", "ce"]
    assert ("- ce vs sm: sm faster from 4 KiB to 16 KiB; ce faster from 64 KiB to 256 KiB; "
            "the faster changes between 16 KiB and 64 KiB") in md


def test_no_crossover_is_said_and_a_missing_point_is_not_guessed(tmp_path):
    # sm has no 16 KiB point: the change is stated between the sizes both measured
    records = [block_result("ce", 4 * KIB, 8, 9.0), block_result("sm", 4 * KIB, 8, 6.0),
               block_result("ce", 16 * KIB, 8, 10.0),
               block_result("ce", 64 * KIB, 8, 20.0), block_result("sm", 64 * KIB, 8, 26.0),
               block_result("ce-batch", 4 * KIB, 8, 30.0), block_result("ce-batch", 64 * KIB, 8, 50.0)]
    _, md, rep = report(tmp_path, records)
    by_pair = {tuple(c["variants"]): c for c in only_table(rep)["crossovers"]}
    assert by_pair[("ce", "sm")]["changes"][0]["between_bytes"] == [4 * KIB, 64 * KIB]
    assert by_pair[("ce", "ce-batch")]["changes"] == []
    assert "- ce vs ce-batch: no crossover: ce faster from 4 KiB to 64 KiB" in md


def test_fit_recovers_planted_fixed_and_per_block_costs(tmp_path):
    records = [block_result("ce", 4 * KIB, n, 5.0 + 0.25 * n) for n in (4, 16, 64)]
    _, md, rep = report(tmp_path, records)
    t = only_table(rep)
    assert t["counts_vary"]
    (fit,) = t["fits"]
    assert fit["fitted"] and fit["points"] == 3 and fit["blocks_per_op"] == [4, 16, 64]
    assert fit["per_call_us"] == pytest.approx(5.0, abs=1e-12)
    assert fit["per_block_us"] == pytest.approx(0.25, abs=1e-12)
    assert fit["r2"] == pytest.approx(1.0, abs=1e-12) and fit["max_rel_residual"] == pytest.approx(0.0, abs=1e-12)
    assert fit["block_stream_GBps"] == pytest.approx(4096 / 0.25 / 1e3)
    assert "| ce | 4 KiB | 3 | 5.00 | 0.250 | 1.0000 | 0.00% | 16.4 |" in md
    assert "GB/s per block stream" in md


def test_two_block_counts_are_not_fitted(tmp_path):
    records = [block_result("ce", 4 * KIB, n, 5.0 + 0.25 * n) for n in (4, 16)]
    _, md, rep = report(tmp_path, records)
    (fit,) = only_table(rep)["fits"]
    assert not fit["fitted"] and fit["points"] == 2 and "per_call_us" not in fit
    assert "not fitted (2 points)" in md


def test_one_count_per_block_size_has_no_fit_table(tmp_path):
    records = [block_result("ce", k * KIB, 8, 10.0 + k) for k in (4, 64)]
    _, md, rep = report(tmp_path, records)
    t = only_table(rep)
    assert not t["counts_vary"] and t["fits"] == []
    assert "Fixed costs" not in md and "GB/s per block stream" not in md


def test_skipped_and_failed_records_are_listed_with_counts(tmp_path):
    why = "sm needs mapped host memory"
    records = [block_result("ce", 4 * KIB, 8, 10.0)] + \
        [block_result("sm", k * KIB, 8, 0, status="skipped", reason=why) for k in (4, 16, 64)] + \
        [block_result("ce-batch", 4 * KIB, 8, 0, status="skipped", reason="no hipMemcpyBatchAsync"),
         block_result("ce", 64 * KIB, 8, 0, status="failed", reason="validation: rank 0: byte 7")]
    _, md, rep = report(tmp_path, records)
    t = only_table(rep)
    assert t["excluded"][0] == {"status": "skipped", "reason": why, "count": 3, "variants": ["sm"]}
    assert len(t["excluded"]) == 3
    assert f"- 3 × skipped: {why} (sm)" in md
    assert "- 1 × skipped: no hipMemcpyBatchAsync (ce-batch)" in md
    assert "- 1 × failed: validation: rank 0: byte 7 (ce)" in md
    assert [row["winner"] for row in t["rows"]] == ["ce"]  # the skipped variants measured nothing


def test_contiguous_reference_rows_and_tables_per_host_kind(tmp_path):
    records = [block_result("ce", 4 * KIB, 16, 12.0), block_result("sm", 4 * KIB, 16, 14.0),
               contiguous_result("ce", 64 * KIB, 8.0), contiguous_result("sm", 64 * KIB, 7.0),
               contiguous_result("ce", 1 << 20, 30.0),  # no block row of that size: no reference row
               block_result("ce", 4 * KIB, 16, 20.0, host=("pageable", "remote"))]
    _, md, rep = report(tmp_path, records)
    pinned, pageable = rep["tables"]
    assert pinned["host"] == {"kind": "pinned", "numa": "local"} and pageable["host"]["kind"] == "pageable"
    (ref,) = pinned["reference_rows"]
    assert ref["bytes_per_rank"] == 64 * KIB and ref["winner"] == "sm" and ref["cells"]["ce"]["p50_us"] == 8.0
    assert "| contiguous | – | 64 KiB | 8.00 |" in md
    assert pageable["reference_rows"] == []  # the contiguous records are pinned ones


def test_software_engine_times_are_labelled(tmp_path):
    records = [block_result("sdma", 4 * KIB, 8, 10.0, engine_details={"hardware_times": False}),
               block_result("host", 4 * KIB, 8, 12.0)]
    _, md, rep = report(tmp_path, records)
    t = only_table(rep)
    assert "sdma [software engine]" in t["variants"] and t["rows"][0]["winner"] == "sdma [software engine]"
    assert "sdma [software engine] p50 µs" in md and "not hardware times" in md


def test_timing_choice_and_output_files(tmp_path):
    records = [block_result("ce", 4 * KIB, 8, 10.0), block_result("ce", 4 * KIB, 8, 3.0, timing="pipelined")]
    md_file = tmp_path / "out.md"
    p, md, rep = report(tmp_path, records, "--markdown", md_file)
    assert md_file.read_text() == md
    assert rep["schema"] == "dmabench-blocks-report/1" and rep["timing"] == "oneshot"
    assert only_table(rep)["rows"][0]["cells"]["ce"]["p50_us"] == 10.0
    assert "1 block record(s) at timing pipelined not shown" in md
    _, _, rep = report(tmp_path, records, "--timing", "pipelined")
    assert only_table(rep)["rows"][0]["cells"]["ce"]["p50_us"] == 3.0


def test_no_block_records_is_not_an_error(tmp_path):
    p, md, rep = report(tmp_path, [result("copy", "ce", 1024, "oneshot", 8.0)])
    assert rep["tables"] == [] and not p.stderr
    assert 'No block-layout records (layout.kind "blocks") at timing oneshot' in md


def check_exit_2(p, want):
    assert p.returncode == 2, (p.returncode, p.stdout[-500:], p.stderr[-500:])
    lines = p.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("blocks_report.py: error: ") and want in lines[0], p.stderr


def test_files_that_are_not_results_exit_2(tmp_path):
    good = tmp_path / "good.json"
    good.write_text(json.dumps(document([block_result("ce", 4 * KIB, 8, 10.0)])))
    other = tmp_path / "other.json"
    other.write_text(json.dumps({"name": "a config", "sizes": "1MiB"}))
    text = tmp_path / "notes.txt"
    text.write_text("not json at all\n")
    check_exit_2(run("blocks_report.py", good, other), "not a dmabench results file")
    check_exit_2(run("blocks_report.py", text), "cannot read")
    check_exit_2(run("blocks_report.py", tmp_path / "missing.json"), "missing.json")
    check_exit_2(run("blocks_report.py", good, "--json", tmp_path / "no" / "such" / "dir.json"), "cannot write")


@pytest.mark.parametrize("field,value,want", [
    ("layout", "blocks", "results[0].layout: expected an object"),
    ("layout", {"kind": "blocks", "order": "random", "sides": "both", "blocks_per_op": 4}, "layout.block_bytes"),
    ("layout", {"kind": "blocks", "block_bytes": 0, "order": "random", "blocks_per_op": 4}, "layout.block_bytes"),
    ("layout", {"kind": "blocks", "block_bytes": 4096, "order": "random"}, "layout.blocks_per_op"),
    ("host_memory", {"kind": "pinned", "numa": None}, "host_memory.numa"),
    ("per_block_us", "fast", "per_block_us"),
])
def test_unreadable_block_fields_exit_2(tmp_path, field, value, want):
    r = block_result("ce", 4 * KIB, 8, 10.0)
    r[field] = value
    src = tmp_path / "bad.json"
    src.write_text(json.dumps(document([r])))
    check_exit_2(run("blocks_report.py", src), want)


def test_every_malformed_results_file_exits_2(tmp_path, capsys):
    from test_hostile_input import CASES
    for i, (name, (content, want)) in enumerate(CASES.items()):
        f = tmp_path / f"case{i}.json"
        if isinstance(content, bytes):
            f.write_bytes(content)
        else:
            f.write_text(content if isinstance(content, str) else json.dumps(content))
        assert blocks_report.main([str(f)]) == 2, name
        err = capsys.readouterr().err.splitlines()
        assert len(err) == 1 and err[0].startswith("blocks_report.py: error: ") and want in err[0], (name, err)


def test_fit_line_and_number_format():
    a, b, r2, worst = blocks_report.fit_line([(1, 3.0), (2, 5.0), (3, 7.5)])
    assert b == pytest.approx(2.25) and a == pytest.approx(0.6666666667) and 0.99 < r2 < 1 and worst > 0
    assert [blocks_report.fmt_num(v) for v in (0.25, 5, 123.4, 12345.6, 0.001234, None)] == \
        ["0.250", "5.00", "123", "12346", "0.00123", "–"]
    assert blocks_report.__name__ == "dmabench.reports.blocks"  # the package's module, not a copy beside a test
