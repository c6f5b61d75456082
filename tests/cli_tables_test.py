#!/usr/bin/env python3
"""The binary's own tables (issue 52, item 5), on the host backend (registered with ctest as cli_tables_host).

usage: cli_tables_test.py DMABENCH

  --csv FILE     the same text as `dmabench-results export` of the run's results file (python/dmabench/export_csv.py:
                 columns, cells, quoting), also with --processes N (the levels file's, written once by the parent)
  --md FILE      a markdown table of those columns less the empty ones, a row per case
  --junit FILE   an ok case's figures as <properties> (latency_us.p50, busbw_GBps ... as the record has them)
  closing line   nccl-tests' `# Avg bus bandwidth    : X GB/s` over the ok cases with a busbw figure (their count
                 named), `n/a` where none has one
  bad paths      --csv / --md as --out, as each other, as the config (an input) or a directory: exit 2, one line naming
                 the flag, nothing run
"""
import json
import os
import sys
import tempfile
import xml.etree.ElementTree as ET

import driver_common
from driver_common import ROOT, expect, write_json as write

ENV = {"PYTHONPATH": os.path.join(ROOT, "python")}


def run(cmd, rc):
    return driver_common.run(cmd, rc, env=ENV)


def exported(results):
    """`dmabench-results export RESULTS`'s CSV text."""
    return run([sys.executable, "-m", "dmabench.cli", "export", results], 0).stdout


def avg_line(text, processes=1):
    """The run's closing average line (under --processes N each process prints its own, then the parent its own)."""
    lines = [l for l in text.splitlines() if l.startswith("# Avg bus bandwidth")]
    expect(len(lines) == (1 if processes == 1 else processes + 1), f"{len(lines)} closing average lines in\n{text[-2000:]}")
    return lines[-1]


def check_tables(exe, tmp, cfg):
    out, csv, md, xml = (os.path.join(tmp, n) for n in ("out.json", "out.csv", "out.md", "out.xml"))
    p = run([exe, "--backend", "host", "--config", cfg, "--out", out, "--csv", csv, "--md", md, "--junit", xml], 0)
    records = json.load(open(out))["results"]
    ok = [r for r in records if r["status"] == "ok"]
    expect(len(ok) == 4 and len(records) == 8, f"{len(ok)} ok of {len(records)} records, expected 4 of 8")
    text = open(csv).read()
    want = exported(out)
    expect(text == want, f"--csv differs from dmabench-results export:\n{text}\n---\n{want}")
    rows = open(md).read().splitlines()
    expect(len(rows) == 2 + len(records) and rows[0].startswith("| name | status | pattern |")
           and "busbw_GBps" in rows[0] and rows[1].startswith("| --- |"), f"--md:\n{rows[:3]}")
    line = avg_line(p.stdout + p.stderr)
    mean = sum(r["busbw_GBps"] for r in ok) / len(ok)
    expect(line == f"# Avg bus bandwidth    : {mean:.3f} GB/s (the mean over 4 ok cases with a busbw figure, of 8)",
           f"closing line {line!r}, mean of the records {mean}")
    cases = {c.get("name"): c for c in ET.parse(xml).getroot().iter("testcase")}
    for r in records:
        props = {e.get("name"): e.get("value") for e in cases[r["name"]].iter("property")}
        if r["status"] == "ok":
            expect(float(props.get("latency_us.p50", "nan")) == r["latency_us"]["p50"]
                   and float(props.get("busbw_GBps", "nan")) == r["busbw_GBps"]
                   and int(props.get("bytes_per_rank", -1)) == r["bytes_per_rank"]
                   and int(props.get("sampling.samples", -1)) == r["sampling"]["samples"], f"{r['name']}: {props}")
        else:
            expect(props == {}, f"{r['name']} ({r['status']}) carries properties {props}")
    return out


def main():
    exe = sys.argv[1]
    with tempfile.TemporaryDirectory() as tmp:
        cfg = write(os.path.join(tmp, "tables.json"), {
            "name": "tables", "patterns": ["copy"], "engines": ["host", "ce"], "devices": [[0, 1]],
            "sizes": [4096, 65536], "timing": ["oneshot", "pipelined"], "pipeline_depth": 4, "iterations": 5,
            "warmup": 1})
        out = check_tables(exe, tmp, cfg)

        # --processes 2: written once, from the levels file
        levels, csv, md = (os.path.join(tmp, n) for n in ("levels.json", "levels.csv", "levels.md"))
        p = run([exe, "--backend", "host", "--config", cfg, "--out", levels, "--csv", csv, "--md", md,
                 "--processes", "2"], 0)
        expect(open(csv).read() == exported(levels), "--processes: --csv differs from the levels file's export")
        expect(len(open(md).read().splitlines()) == 10, "--processes: --md rows")
        merged = [r for r in json.load(open(levels))["results"] if r["status"] == "ok"]
        mean = sum(r["busbw_GBps"] for r in merged) / len(merged)
        expect(avg_line(p.stdout + p.stderr, 2).startswith(f"# Avg bus bandwidth    : {mean:.3f} GB/s (the mean over 4"),
               "--processes: the last average line is the levels file's")
        for k in (1, 2):
            args = json.load(open(os.path.join(levels + ".processes", f"process-{k}.json")))["context"]["command_line"]
            expect("--csv" not in args and "--md" not in args, f"process {k} was given --csv/--md: {args}")

        # no ok case has a busbw figure: the line says so
        skips = write(os.path.join(tmp, "skips.json"), {"name": "skips", "patterns": ["copy"], "engines": ["ce"],
                                                        "devices": [[0, 1]], "sizes": [4096]})
        p = run([exe, "--backend", "host", "--config", skips, "--out", os.path.join(tmp, "s.json"), "--allow-empty"], 0)
        expect(avg_line(p.stdout + p.stderr) == "# Avg bus bandwidth    : n/a (no ok case has a busbw figure)",
               "the line without a busbw figure")

        # bad paths: refused before anything runs
        fresh = os.path.join(tmp, "fresh.json")
        for flags, flag in ((["--csv", fresh], "--csv"), (["--md", cfg], "--md"), (["--csv", tmp], "--csv"),
                            (["--csv", csv, "--md", csv], "--md"), (["--md", ""], "--md"), (["--csv"], "--csv")):
            p = run([exe, "--backend", "host", "--config", cfg, "--out", fresh, *flags], 2)
            expect(p.stderr.count("\n") == 1 and flag in p.stderr, f"{flags}: {p.stderr!r}")
            expect(not os.path.exists(fresh), f"{flags}: the run went ahead")
    print("PASS cli tables: --csv as dmabench-results export (one process and --processes), --md, JUnit figures, "
          "the average busbw line, bad paths")


if __name__ == "__main__":
    main()
