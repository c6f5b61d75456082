"""scripts/export_csv.py: one CSV row per record, the documented columns in order, values as in the file; skipped and
failed records keep their reason; --columns; bad input exit 2 with one line."""
import csv
import io
import json
import os
import sys

from test_scripts import ROOT, SCRIPTS, document, overlap_result, result, run

from dmabench import export_csv

HOST = os.path.join(ROOT, "results", "h200x1", "host.json")  # a committed run with host memory, skipped cases


def write(tmp_path, name, doc):
    path = tmp_path / name
    path.write_text(json.dumps(doc))
    return path


def rows(text):
    reader = csv.reader(io.StringIO(text))
    header = next(reader)
    return header, [dict(zip(header, r)) for r in reader]


def sample():
    powered = result("allgather", "ce", 1 << 30, "pipelined", 3000.0, options={"schedule": "pcpy", "streams": 4})
    powered["power"] = {"active_W": 200.5, "energy_per_op_J": 0.6, "energy_per_GB_J": 0.3, "window_s": 2.0}
    powered["host_memory"] = {"kind": "pinned", "numa": "local"}
    return document([result("copy", "ce", 1024, "oneshot", 8.25),
                     result("copy", "sm", 4096, "oneshot", 0, status="skipped", reason="needs peer access, a \"quoted\", comma"),
                     result("bidir", "nccl", 4096, "oneshot", 0, status="failed", reason="validation: byte 7 is 0x00\nline 2"),
                     powered,
                     overlap_result("ce", 1 << 20, "oneshot", 20.0, 0.5, 30.0)])


def test_rows_columns_and_values(tmp_path):
    doc = sample()
    out = tmp_path / "r.csv"
    p = run("export_csv.py", write(tmp_path, "r.json", doc), "--out", out)
    assert p.returncode == 0 and p.stdout == "" and p.stderr == "", p.stderr
    header, got = rows(out.read_text())
    assert header == export_csv.COLUMNS
    assert header[:6] == ["name", "status", "pattern", "in_place", "engine", "options"] and header[-1] == "reason"
    assert [r["name"] for r in got] == [r["name"] for r in doc["results"]]
    ok, skipped, failed, powered, overlap = got
    assert ok["status"] == "ok" and float(ok["latency_us.p50"]) == 8.25 and ok["reason"] == ""
    src = doc["results"][0]
    for k in ("p99", "mean", "min", "max"):
        assert float(ok[f"latency_us.{k}"]) == src["latency_us"][k]  # exact: the shortest form that reads back
    assert float(ok["busbw_GBps"]) == src["busbw_GBps"] and int(ok["bytes_per_rank"]) == 1024
    assert ok["devices"] == "0 1" and ok["timing"] == "oneshot" and ok["options"] == "" and ok["power.active_W"] == ""
    # skipped and failed records are rows with their reason (commas, quotes, a newline survive) and no numbers
    assert skipped["status"] == "skipped" and skipped["reason"] == "needs peer access, a \"quoted\", comma"
    assert failed["status"] == "failed" and failed["reason"] == "validation: byte 7 is 0x00\nline 2"
    assert skipped["latency_us.p50"] == failed["busbw_GBps"] == ""
    assert powered["options"] == "schedule=pcpy,streams=4" and powered["host_memory.kind"] == "pinned"
    assert float(powered["power.active_W"]) == 200.5 and float(powered["power.energy_per_op_J"]) == 0.6
    assert overlap["beside"] == "gemm-bf16-8192x8192x8192"
    assert float(overlap["overlap.compute_slowdown_pct"]) == 0.5 and float(overlap["overlap.overlap_efficiency"]) == 0.9
    # stdout without --out: the same text
    p = run("export_csv.py", tmp_path / "r.json")
    assert p.returncode == 0 and p.stdout == out.read_text()


def test_columns_pick_order_and_nested_fields(tmp_path):
    src = write(tmp_path, "r.json", sample())
    p = run("export_csv.py", src, "--columns", "latency_us.p95,name,power.window_s,overlap.compute.kind")
    assert p.returncode == 0, p.stderr
    header, got = rows(p.stdout)
    assert header == ["latency_us.p95", "name", "power.window_s", "overlap.compute.kind"]
    assert float(got[0]["latency_us.p95"]) == sample()["results"][0]["latency_us"]["p95"]
    assert got[3]["power.window_s"] == "2.0" and got[4]["overlap.compute.kind"] == "gemm" and got[1]["latency_us.p95"] == ""
    header, _ = rows(run("export_csv.py", src, "--columns", "default,latency_us.stddev,name").stdout)
    assert header == export_csv.COLUMNS + ["latency_us.stddev"]
    header, got = rows(run("export_csv.py", src, "--columns", "overlap.compute").stdout)
    assert json.loads(got[4]["overlap.compute"])["m"] == 8192  # an object: compact JSON


def test_a_real_run_exports_every_record(tmp_path):
    doc = json.load(open(HOST))
    p = run("export_csv.py", HOST)
    assert p.returncode == 0, p.stderr
    header, got = rows(p.stdout)
    assert len(got) == len(doc["results"]) and [r["name"] for r in got] == [r["name"] for r in doc["results"]]
    for r, src in zip(got, doc["results"]):
        assert r["status"] == src["status"] and r["reason"] == src["reason"]
        assert r["host_memory.kind"] == src.get("host_memory", {}).get("kind", "")
        if src["status"] == "ok":
            assert float(r["latency_us.p50"]) == src["latency_us"]["p50"]


def test_journal_of_an_unfinished_run(tmp_path):
    doc = sample()
    journal = tmp_path / "run.json.journal"
    journal.write_text("\n".join([json.dumps({"schema": "dmabench-journal/1", "results_schema": "dmabench/1",
                                              "context": doc["context"]})] +
                                 [json.dumps(r) for r in doc["results"][:2]]) + "\n")
    p = run("export_csv.py", journal)
    assert p.returncode == 0, p.stderr
    assert [r["name"] for r in rows(p.stdout)[1]] == [r["name"] for r in doc["results"][:2]]


def one_line(p, want):
    assert p.returncode == 2, (p.returncode, p.stderr)
    lines = p.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("export_csv.py: error: ") and want in lines[0], p.stderr


def test_bad_input_is_one_line_and_exit_2(tmp_path):
    src = write(tmp_path, "r.json", sample())
    keep = tmp_path / "keep.csv"
    keep.write_text("keep")
    one_line(run("export_csv.py", src, "--columns", "latency_us.p42", "--out", keep), "'latency_us.p42'")
    one_line(run("export_csv.py", tmp_path / "missing.json", "--out", keep), "missing.json")
    bad = write(tmp_path, "bad.json", {"schema": "dmabench/1", "context": {}, "results": [{"name": "x"}]})
    one_line(run("export_csv.py", bad, "--out", keep), "results[0]")
    (tmp_path / "torn.json").write_text(json.dumps(sample())[:200])
    one_line(run("export_csv.py", tmp_path / "torn.json"), "cannot read")
    one_line(run("export_csv.py", src, "--out", tmp_path), "a directory")
    one_line(run("export_csv.py", src, "--out", ""), "--out")
    one_line(run("export_csv.py", src, "--bogus"), "--bogus")
    assert keep.read_text() == "keep"  # nothing written on bad input
    assert not [f for f in os.listdir(tmp_path) if f.endswith(".tmp")]
