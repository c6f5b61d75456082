"""Tests of scripts/moe_report.py on planted alltoallv results: the slowdown against the uniform case, who wins and by
how much, "within noise" when p50 intervals overlap or a case is noisy, from which size an engine wins, the cases
that were not measured, and bad input (exit 2, one line).

Run by ctest (test `scripts`) with a python3 that has pytest.
"""
import csv
import io
import json
import os
import sys

import pytest

from test_scripts import SCRIPTS, document, result, run

from dmabench.keys import NOISY_LEGEND
from dmabench.reports import moe as moe_report

TOKEN = 8192


def moe_result(engine, tpr, p50, splits="uniform", skew=None, direction="dispatch", tokens="packed", options=None,
               status="ok", reason="", noise=0.01, noisy=False, topk=8, experts=256, ranks=8, devices=tuple(range(8)),
               step=None, trace=None, seed=1, timing="oneshot", imbalance=1.0, share=0.5, **extra):
    """A record as dmabench writes one for the alltoallv pattern: `tpr` tokens of 8 KiB per rank routed by `splits`,
    timed at p50 `p50` µs with a p50 interval of +-`noise`."""
    size = tpr * TOKEN
    r = result("alltoallv", engine, size, timing, p50, options=options, status=status)
    label = {"uniform": "uniform", "zipf": f"zipf{skew}", "hot": f"hot{skew}",
             "file": f"file={os.path.basename(trace or '')}#{step}"}[splits]
    listed = "".join(f",{k}={v}" for k, v in (options or {}).items())
    shape = f",top{topk}of{experts}" if splits != "file" else ""
    moved = tpr * 4  # tokens: each token to 4 ranks on average
    pair = [[moved // ranks] * ranks for _ in range(ranks)]
    dest = [moved * TOKEN] * ranks
    r.update(name=f"alltoallv/{engine}{listed}/{timing}/dev={','.join(map(str, devices))}/{size}/"
                  f"moe={direction},{tokens},{label},{tpr}x8KiB{shape}",
             devices=list(devices), ranks=ranks, bytes=moved * ranks * TOKEN, reason=reason)
    r["alltoallv"] = {
        "direction": direction, "tokens": tokens, "splits": splits, "skew": skew,
        "file": trace if splits == "file" else None, "step": step if splits == "file" else None,
        "token_bytes": TOKEN, "tokens_per_rank": tpr, "topk": topk if splits != "file" else None,
        "experts": experts if splits != "file" else None, "seed": seed if splits != "file" else None,
        "ranks_asked": ranks if len(devices) != ranks else None,
        "ranks": ranks, "devices": [devices[i % len(devices)] for i in range(ranks)],
        "ranks_share_devices": len(set(devices)) < ranks,
        "pair_tokens": pair, "tokens_moved": moved * ranks, "bytes_moved": moved * ranks * TOKEN,
        "peer_bytes": moved * (ranks - 1) * TOKEN, "dest_bytes": dest, "imbalance": imbalance,
        "heaviest_pair": {"src": 0, "dst": 1, "bytes": moved // ranks * TOKEN, "p50_us": p50 * share, "share": share,
                          "samples": 10, "validated": True} if status == "ok" else None}
    if status == "ok":
        r["algbw_GBps"] = r["alltoallv"]["bytes_moved"] / p50 / 1e3
        r["p50_interval_us"] = [p50 * (1 - noise), p50 * (1 + noise)]
        r["noise"] = noise
        r["noisy"] = noisy
    else:
        r["alltoallv"] = None if status == "skipped" else r["alltoallv"]
    for k, v in extra.items():
        (r["alltoallv"] if k == "heaviest_pair" else r)[k] = v
    return r


def report(tmp_path, records, *args, fmt="json"):
    """(process, parsed output) of moe_report.py over one planted file: the JSON report, the markdown or CSV text."""
    src = tmp_path / "run.json"
    src.write_text(json.dumps(document(records)))
    p = run("moe_report.py", src, "--format", fmt, *args)
    assert p.returncode == 0, p.stderr
    return p, json.loads(p.stdout) if fmt == "json" else p.stdout


def rows_by(section):
    return {(r["variant"], r["tokens_per_rank"], r["splits"]): r for r in section["rows"]}


def verdicts_by(section):
    return {(v["tokens_per_rank"], v["splits"]): v for v in section["verdicts"]}


def planted():
    return [moe_result("ce", 256, 100.0), moe_result("ce", 256, 134.0, "zipf", 1.2),
            moe_result("ce", 256, 150.0, "hot", 0.5, imbalance=3.5, share=0.8),
            moe_result("sm", 256, 80.0), moe_result("sm", 256, 200.0, "zipf", 1.2),
            moe_result("ce", 64, 30.0, "zipf", 1.2),  # no uniform case at 64 tokens/rank
            moe_result("ce", 256, 120.0, "file", step=2, trace="configs/traces/moe-synthetic-8x256.json")]


def test_slowdown_against_the_same_variants_uniform_case(tmp_path):
    _, rep = report(tmp_path, planted())
    (s,) = rep["sections"]
    assert (s["direction"], s["tokens"], s["token_bytes"], s["topk"], s["experts"], s["ranks"]) == \
        ("dispatch", "packed", TOKEN, 8, 256, 8)
    rows = rows_by(s)
    assert rows[("ce", 256, "zipf 1.2")]["slowdown_vs_uniform"] == pytest.approx(1.34)
    assert rows[("ce", 256, "hot 0.5")]["slowdown_vs_uniform"] == pytest.approx(1.5)
    assert rows[("sm", 256, "zipf 1.2")]["slowdown_vs_uniform"] == pytest.approx(2.5)  # sm's own uniform, not ce's
    assert rows[("ce", 256, "uniform")]["slowdown_vs_uniform"] == pytest.approx(1.0)
    assert rows[("ce", 64, "zipf 1.2")]["slowdown_vs_uniform"] is None
    assert rows[("ce", 256, "file step 2")]["slowdown_vs_uniform"] == pytest.approx(1.2)  # joined the top-8 of 256 shape
    r = rows[("ce", 256, "hot 0.5")]
    assert r["imbalance"] == 3.5 and r["heaviest_pair_share"] == 0.8
    assert r["algbw_GBps"] == pytest.approx(r["bytes_moved"] / 150.0 / 1e3)
    _, md = report(tmp_path, planted(), fmt="markdown")
    assert "## dispatch, packed · 8 KiB tokens, top-8 of 256 experts · 8 ranks on dev=0,1,2,3,4,5,6,7 · oneshot" in md
    assert "| ce | 256 | zipf 1.2 | 64 MiB | 134 ±1.34 | 501 | 1.00 | 0.500 | x1.34 |" in md
    assert "| ce | 64 | zipf 1.2 | 16 MiB | 30.0 ±0.300 | 559 | 1.00 | 0.500 | – |" in md
    assert "| ce | 256 | hot 0.5 | 64 MiB | 150 ±1.50 | 447 | 3.50 | 0.800 | x1.50 |" in md
    assert NOISY_LEGEND in md  # what ± and noisy mean, where the table shows either
    assert "1 trace case(s) (splits file) record no top-k / experts" in md


def test_the_winner_and_its_margin(tmp_path):
    _, rep = report(tmp_path, planted())
    v = verdicts_by(rep["sections"][0])
    assert v[(256, "uniform")]["winner"] == "sm" and v[(256, "uniform")]["runner_up"] == "ce"
    assert v[(256, "uniform")]["margin"] == pytest.approx(1.25)
    assert v[(256, "zipf 1.2")]["winner"] == "ce" and v[(256, "zipf 1.2")]["margin"] == pytest.approx(200 / 134)
    assert v[(256, "hot 0.5")]["winner"] is None and v[(256, "hot 0.5")]["why"] == "alone"  # nobody to beat
    _, md = report(tmp_path, planted(), fmt="markdown")
    assert "| 256 | uniform | sm | 80.0 | ce | x1.25 | sm wins |" in md
    assert "| 256 | zipf 1.2 | ce | 134 | sm | x1.49 | ce wins |" in md
    assert "| 256 | hot 0.5 | ce | 150 | – | – | only variant measured |" in md


def test_overlapping_intervals_and_noisy_cases_are_within_noise(tmp_path):
    records = [moe_result("ce", 256, 100.0, noise=0.05), moe_result("sm", 256, 104.0, noise=0.05),  # 105 > 98.8
               moe_result("ce", 256, 100.0, "zipf", 1.2, noise=0.01),
               moe_result("sm", 256, 150.0, "zipf", 1.2, noise=0.01, noisy=True),  # far apart, but flagged noisy
               moe_result("ce", 1024, 100.0, noise=0.01), moe_result("sm", 1024, 103.0, noise=0.01)]  # apart
    _, rep = report(tmp_path, records)
    v = verdicts_by(rep["sections"][0])
    assert v[(256, "uniform")]["winner"] is None and v[(256, "uniform")]["leader"] == "ce"
    assert v[(256, "uniform")]["why"] == "p50 intervals overlap"
    assert v[(256, "zipf 1.2")]["winner"] is None and v[(256, "zipf 1.2")]["why"] == "sm noisy"
    assert v[(1024, "uniform")]["winner"] == "ce" and v[(1024, "uniform")]["margin"] == pytest.approx(1.03)
    _, md = report(tmp_path, records, fmt="markdown")
    assert "| 256 | uniform | ce | 100 | sm | x1.04 | within noise (p50 intervals overlap) |" in md
    assert "| 256 | zipf 1.2 | ce | 100 | sm | x1.50 | within noise (sm noisy) |" in md
    assert "| 150 ±1.50 noisy |" in md


def test_from_which_size_each_engine_wins(tmp_path):
    # ce-batch loses at 16 and 64 tokens/rank under zipf 1.2 and wins from 256 on; ce wins the small ones; under
    # uniform ce-batch wins everywhere but at 64, where the two are within noise
    times = {16: (10.0, 20.0), 64: (30.0, 40.0), 256: (120.0, 90.0), 1024: (480.0, 300.0)}
    records = [moe_result(e, t, p, "zipf", 1.2) for t, (ce, batch) in times.items()
               for e, p in (("ce", ce), ("ce-batch", batch))]
    records += [moe_result("ce", t, 100.0) for t in (16, 64, 256)] + \
        [moe_result("ce-batch", 16, 50.0), moe_result("ce-batch", 64, 100.5), moe_result("ce-batch", 256, 50.0)]
    _, rep = report(tmp_path, records)
    s = rep["sections"][0]
    assert s["wins"]["ce-batch"]["zipf 1.2"] == {"from": 256, "also": [], "contested": [16, 64, 256, 1024]}
    assert s["wins"]["ce"]["zipf 1.2"]["from"] is None and s["wins"]["ce"]["zipf 1.2"]["also"] == [16, 64]
    assert s["wins"]["ce-batch"]["uniform"] == {"from": 256, "also": [16], "contested": [16, 64, 256]}
    assert "ce-batch wins from 256 tokens/rank (also at 16) under uniform; from 256 tokens/rank under zipf 1.2" in \
        s["wins_text"]
    assert "ce wins only at 16, 64 tokens/rank under zipf 1.2" in s["wins_text"]
    # nothing is hard-coded: move ce-batch's first win down and the line follows
    records[3] = moe_result("ce-batch", 64, 29.0, "zipf", 1.2)
    _, rep = report(tmp_path, records)
    assert rep["sections"][0]["wins"]["ce-batch"]["zipf 1.2"]["from"] == 64


def test_variants_sections_and_other_patterns(tmp_path):
    records = [moe_result("ce", 256, 100.0), moe_result("ce", 256, 90.0, options={"streams": 4}),
               moe_result("ce", 256, 300.0, direction="combine"), moe_result("ce", 256, 400.0, tokens="scattered"),
               moe_result("ce", 256, 50.0, ranks=8, devices=(0, 1)),  # 8 ranks on 2 GPUs: a setup of its own
               result("copy", "ce", 1024, "oneshot", 8.0)]
    _, rep = report(tmp_path, records)
    keys = [(s["direction"], s["tokens"], s["devices"]) for s in rep["sections"]]
    assert keys == [("dispatch", "packed", [0, 1]), ("dispatch", "packed", list(range(8))),
                    ("dispatch", "scattered", list(range(8))), ("combine", "packed", list(range(8)))]
    assert rep["sections"][0]["ranks_share_devices"] is True
    assert rep["sections"][1]["variants"] == ["ce", "ce streams=4"]
    assert verdicts_by(rep["sections"][1])[(256, "uniform")]["winner"] == "ce streams=4"
    assert "1 record(s) of other patterns not shown." in rep["notes"]
    _, md = report(tmp_path, records, fmt="markdown")
    assert "8 ranks on dev=0,1 (ranks share GPUs)" in md


def test_skipped_failed_and_unvalidated_cases_are_listed(tmp_path):
    why = "sm needs peer access between every pair"
    records = [moe_result("ce", 256, 100.0),
               moe_result("sm", 256, 0, status="skipped", reason=why),
               moe_result("ce-batch", 256, 0, "zipf", 1.2, status="failed", reason="validation: rank 3: byte 7"),
               moe_result("nccl", 256, 10.0, validated=False)]
    records += [moe_result("sdma", t, 0, status="skipped", reason="no SDMA engine here", options={"schedule": s})
                for t in (1, 4, 16) for s in ("pcpy", "b2b")]
    _, rep = report(tmp_path, records)
    ex = {(e["status"], e["reason"]): e for e in rep["excluded"]}
    assert ex[("skipped", why)]["variants"] == ["sm"] and ex[("skipped", why)]["count"] == 1
    assert ex[("failed", "validation: rank 3: byte 7")]["variants"] == ["ce-batch"]
    assert ex[("ok but not validated", "")]["variants"] == ["nccl"]
    sdma = ex[("skipped", "no SDMA engine here")]
    assert sdma["count"] == 6 and sdma["variants"] == ["sdma schedule=b2b", "sdma schedule=pcpy"]
    assert len(sdma["cases"]) == 6 and rep["excluded"][0] == sdma  # the most cases first
    assert rep["sections"][0]["variants"] == ["ce"]
    _, md = report(tmp_path, records, fmt="markdown")
    assert "## Not measured (skipped, failed or not validated)" in md
    assert f"- 1 × skipped: {why} (sm)\n" \
           "  - `alltoallv/sm/oneshot/dev=0,1,2,3,4,5,6,7/2097152/moe=dispatch,packed,uniform,256x8KiB,top8of256`" in md
    assert "- 1 × failed: validation: rank 3: byte 7 (ce-batch)\n" in md
    assert "- 1 × ok but not validated (nccl)\n" in md
    assert "- 6 × skipped: no SDMA engine here (sdma schedule=b2b, sdma schedule=pcpy)\n" in md
    assert "alltoallv/sdma," not in md  # six cases: counted, not named one by one


def test_only_skipped_alltoallv_cases_still_report(tmp_path):
    p, md = report(tmp_path, [moe_result("sm", 256, 0, status="skipped", reason="one GPU")], fmt="markdown")
    assert "No ok and validated alltoallv case." in md and "- 1 × skipped: one GPU (sm)" in md


def test_seeds_and_trace_files_tell_rows_apart(tmp_path):
    records = [moe_result("ce", 256, 100.0, seed=1), moe_result("ce", 256, 110.0, seed=2),
               moe_result("ce", 256, 130.0, "zipf", 1.2, seed=2),
               moe_result("ce", 256, 120.0, "file", step=0, trace="a/one.json"),
               moe_result("ce", 256, 125.0, "file", step=0, trace="b/two.json")]
    _, rep = report(tmp_path, records)
    rows = rows_by(rep["sections"][0])
    assert set(rows) == {("ce", 256, "uniform, seed 1"), ("ce", 256, "uniform, seed 2"), ("ce", 256, "zipf 1.2, seed 2"),
                         ("ce", 256, "file one.json step 0"), ("ce", 256, "file two.json step 0")}
    assert rows[("ce", 256, "zipf 1.2, seed 2")]["slowdown_vs_uniform"] == pytest.approx(130 / 110)  # its own seed
    assert rows[("ce", 256, "file one.json step 0")]["slowdown_vs_uniform"] == pytest.approx(1.2)  # lowest seed


def test_a_trace_case_joins_its_shape_only_where_one_matches(tmp_path):
    trace = "configs/traces/moe-synthetic-8x256.json"
    records = [moe_result("ce", 256, 100.0), moe_result("ce", 256, 60.0, topk=2, experts=8),
               moe_result("ce", 256, 120.0, "file", step=1, trace=trace)]
    _, rep = report(tmp_path, records)  # two generated shapes of 8 KiB tokens on 8 ranks: which one is not guessed
    assert [(s["topk"], s["experts"]) for s in rep["sections"]] == [(2, 8), (8, 256), (None, None)]
    (row,) = rep["sections"][2]["rows"]
    assert row["splits"] == "file step 1" and row["slowdown_vs_uniform"] is None
    _, md = report(tmp_path, records, fmt="markdown")
    assert "8 KiB tokens, top-? of ? experts (from the trace) · 8 ranks" in md


def test_a_generated_routing_without_an_expert_count_has_one_expert_per_rank(tmp_path):
    records = [moe_result("ce", 16, 10.0, topk=2, experts=None, ranks=2, devices=(0, 1)),
               moe_result("ce", 16, 12.0, "zipf", 1.2, topk=2, experts=2, ranks=2, devices=(0, 1))]
    _, rep = report(tmp_path, records)
    (s,) = rep["sections"]
    assert (s["topk"], s["experts"], s["ranks"]) == (2, 2, 2)
    assert rows_by(s)[("ce", 16, "zipf 1.2")]["slowdown_vs_uniform"] == pytest.approx(1.2)


def test_heaviest_pair_errors_are_said(tmp_path):
    why = "not timed alone: ranks 0 and 4 share GPU 0"
    records = [moe_result("ce", 256, 100.0, heaviest_pair={"src": 0, "dst": 4, "bytes": 8192, "error": why}),
               moe_result("sm", 256, 90.0)]
    _, rep = report(tmp_path, records)
    rows = rows_by(rep["sections"][0])
    assert rows[("ce", 256, "uniform")]["heaviest_pair_error"] == why
    assert rows[("ce", 256, "uniform")]["heaviest_pair_share"] is None
    assert f"Heaviest pair not measured in 1 case(s): {why}" in rep["notes"]
    _, md = report(tmp_path, records, fmt="markdown")
    assert "| ce | 256 | uniform | 64 MiB | 100 ±1.00 | 671 | 1.00 | error | x1.00 |" in md


def test_a_later_record_of_the_same_case_replaces_the_earlier(tmp_path):
    _, rep = report(tmp_path, [moe_result("ce", 256, 100.0), moe_result("ce", 256, 90.0)])
    assert rep["sections"][0]["rows"][0]["p50_us"] == 90.0
    assert any("the later one is used" in n for n in rep["notes"])


def test_csv_and_out_file(tmp_path):
    out = tmp_path / "moe.csv"
    p, text = report(tmp_path, planted(), "--out", out, fmt="csv")
    assert text == "" and not p.stderr
    rows = list(csv.DictReader(io.StringIO(out.read_text())))
    assert len(rows) == len(planted())
    zipf = next(r for r in rows if r["variant"] == "ce" and r["splits"] == "zipf 1.2" and r["tokens_per_rank"] == "256")
    assert float(zipf["slowdown_vs_uniform"]) == pytest.approx(1.34) and zipf["winner"] == "ce"
    assert zipf["devices"] == "0 1 2 3 4 5 6 7" and zipf["direction"] == "dispatch" and zipf["p50_low_us"]
    assert zipf["noisy"] == "false" and zipf["ranks_share_devices"] == "false"
    md = tmp_path / "moe.md"
    p = run("moe_report.py", tmp_path / "run.json", "--out", md)
    assert p.returncode == 0 and md.read_text().startswith("# alltoallv: uniform against skewed routings")


def one_line(p, want):
    assert p.returncode == 2, (p.returncode, p.stdout[-500:], p.stderr[-500:])
    lines = p.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("moe_report.py: error: ") and want in lines[0], p.stderr
    assert "Traceback" not in p.stderr


def test_a_file_without_alltoallv_records_exits_2(tmp_path):
    src = tmp_path / "copy.json"
    src.write_text(json.dumps(document([result("copy", "ce", 1024, "oneshot", 8.0)])))
    one_line(run("moe_report.py", src), 'no alltoallv record (pattern "alltoallv")')
    empty = tmp_path / "empty.json"
    empty.write_text(json.dumps(document([])))
    one_line(run("moe_report.py", empty), "no alltoallv record")


@pytest.mark.parametrize("field,value,want", [
    (None, None, "results[0].alltoallv: missing"),
    ("direction", "sideways", "alltoallv.direction: expected one of dispatch, combine"),
    ("splits", "gauss", "alltoallv.splits"),
    ("skew", None, "alltoallv.skew: expected a number >= 0, got null"),  # a zipf case needs its exponent
    ("tokens_per_rank", 0, "alltoallv.tokens_per_rank: expected a positive integer"),
    ("bytes_moved", "lots", "alltoallv.bytes_moved: expected an integer"),
    ("imbalance", "high", "alltoallv.imbalance"),
    ("heaviest_pair", {"error": 3}, "alltoallv.heaviest_pair.error: expected a string"),
    ("heaviest_pair", {"share": "most"}, "alltoallv.heaviest_pair.share"),
])
def test_unreadable_alltoallv_fields_exit_2(tmp_path, field, value, want):
    r = moe_result("ce", 256, 100.0, "zipf", 1.2)
    if field is None:
        del r["alltoallv"]
    else:
        r["alltoallv"][field] = value
    src = tmp_path / "bad.json"
    src.write_text(json.dumps(document([r])))
    one_line(run("moe_report.py", src), want)


def test_command_line_contract(tmp_path):
    good = tmp_path / "good.json"
    good.write_text(json.dumps(document(planted())))
    one_line(run("moe_report.py", tmp_path / "missing.json"), "missing.json")
    one_line(run("moe_report.py", good, "--format", "pdf"), "invalid choice: 'pdf'")
    one_line(run("moe_report.py", good, "--no-such-option"), "--no-such-option")
    one_line(run("moe_report.py"), "the following arguments are required: results")
    one_line(run("moe_report.py", good, "--out", tmp_path / "no" / "dir" / "r.md"), "cannot write")
    one_line(run("moe_report.py", good, "--out", good), "a file this script read")
    one_line(run("moe_report.py", good, "--out", "/dev/full"), "No space left on device")
    one_line(run("moe_report.py", good, "--out", tmp_path / "r.json.journal"), "a dmabench run's own file")
    assert json.loads(good.read_text())["results"]  # the input is untouched


def test_a_reader_that_goes_away_ends_nothing(tmp_path):
    import subprocess
    good = tmp_path / "good.json"
    good.write_text(json.dumps(document(planted() * 50)))
    r, w = os.pipe()
    os.close(r)
    try:
        p = subprocess.run([sys.executable, os.path.join(SCRIPTS, "moe_report.py"), good], stdout=w,
                           stderr=subprocess.PIPE, text=True, timeout=120)
    finally:
        os.close(w)
    assert p.returncode == 0 and p.stderr == "", p.stderr


def test_number_format():
    assert [moe_report.fmt_num(v) for v in (0.25, 5, 123.4, 12345.6, None)] == ["0.250", "5.00", "123", "12346", "–"]
    assert moe_report.times(1.3449) == "x1.34" and moe_report.times(None) == "–"


def test_compare_and_history_keys_tell_routings_apart(tmp_path):
    """dmabench.case_key (compare.py, history.py) keeps two routings of one size apart, matches a trace by
    its file name wherever it lies, and leaves every other pattern's key as it was; where() names the routing."""
    from dmabench import case_key, where
    uni, zipf = moe_result("ce", 16, 100), moe_result("ce", 16, 100, splits="zipf", skew=1.2)
    combine = moe_result("ce", 16, 100, direction="combine")
    assert len({case_key(uni), case_key(zipf), case_key(combine)}) == 3
    here = moe_result("ce", 16, 100, splits="file", step=1, trace="/a/configs/traces/t.json")
    there = moe_result("ce", 16, 100, splits="file", step=1, trace="/b/traces/t.json")
    assert case_key(here) == case_key(there) != case_key(moe_result("ce", 16, 100, splits="file", step=2, trace="/a/t.json"))
    copy = result("copy", "ce", 4096, "oneshot", 10.0)
    assert len(case_key(copy)) == 12 and len(case_key(uni)) == 13
    assert where(zipf) == "dispatch packed zipf 1.2, 16 x 8 KiB top-8/256, 8 ranks"
    # compare.py matches the two routings of one size each with its own
    base, new = tmp_path / "base.json", tmp_path / "new.json"
    base.write_text(json.dumps(document([uni, zipf])))
    new.write_text(json.dumps(document([moe_result("ce", 16, 100), moe_result("ce", 16, 150, splits="zipf", skew=1.2)])))
    p = run("compare.py", str(base), str(new))
    # one process a side: the zipf routing's +50% is ambiguous (one draw each supports nothing), the uniform one same
    assert "2 cases in both files; 1 ambiguous, 1 same" in p.stdout and "zipf 1.2" in p.stdout, p.stdout
