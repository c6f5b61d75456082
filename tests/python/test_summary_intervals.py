"""The markdown summaries show each p50 with its interval and mark `noisy` cases, as the console does (issue 42)."""
import os

from test_scripts import ROOT, document, result, run, with_interval, write

from dmabench.keys import NOISY_LEGEND, p50_text
from dmabench.reports import crossover


def test_p50_text():
    r = with_interval(result("copy", "ce", 1024, "oneshot", 12.3), 0.03)  # noise 3% > 1%: noisy
    assert p50_text(r) == "12.3 ±0.4 noisy" and p50_text(r, 2) == "12.30 ±0.37 noisy"
    r = with_interval(result("copy", "ce", 1024, "oneshot", 12.3), 0.01)
    r["p50_interval_us"] = [12.0, 12.4]  # the larger side
    assert p50_text(r) == "12.3 ±0.3"
    assert p50_text(result("copy", "ce", 1024, "oneshot", 12.3)) == "12.3"  # a file without intervals


def test_summarize_shows_intervals_and_noisy(tmp_path):
    rs = [with_interval(result("copy", "ce", 1024, "oneshot", 10.0), 0.01),
          with_interval(result("copy", "ce", 4096, "oneshot", 20.0), 0.05),
          with_interval(result("copy", "ce", 1024, "pipelined", 8.0), 0.005)]
    p = run("summarize.py", write(tmp_path, "r.json", document(rs)))
    assert p.returncode == 0, p.stderr
    assert "| ce | 10.0 ±0.1 / 8.0 ±0.0 | 20.0 ±1.0 noisy / – |" in p.stdout, p.stdout
    assert NOISY_LEGEND in p.stdout
    p = run("summarize.py", write(tmp_path, "old.json", document([result("copy", "ce", 1024, "oneshot", 10.0)])))
    assert p.returncode == 0 and "| ce | 10.0 / – |" in p.stdout and NOISY_LEGEND not in p.stdout, p.stdout


def test_dma_latte_report_shows_intervals_and_noisy(tmp_path):
    rs = [with_interval(result("allgather", "ce", 1024, "oneshot", 20.0, options={"schedule": "pcpy"}), 0.05),
          with_interval(result("allgather", "ce", 1024, "oneshot", 10.0), 0.01),
          with_interval(result("allgather", "nccl", 1024, "oneshot", 30.0), 0.005)]
    p = run("dma_latte_report.py", write(tmp_path, "r.json", document(rs)))
    assert p.returncode == 0, p.stderr
    assert "| ce schedule=pcpy | 20.0 ±1.0 noisy µs |" in p.stdout, p.stdout
    assert "| allgather | 1 KiB | ce | 10.0 ±0.1 | nccl | 30.0 ±0.1 |" in p.stdout, p.stdout
    assert NOISY_LEGEND in p.stdout


def test_blocks_report_shows_intervals_and_noisy():
    p = run("blocks_report.py", os.path.join(ROOT, "results", "h200x1", "pools", "start1", "kv-pool.json"))
    assert p.returncode == 0, p.stderr
    assert "| 4 KiB | 64 | 256 KiB | 202 ±1.98 | 1.30 | 3.16 | 130 ±15.4 noisy |" in p.stdout, p.stdout[:3000]
    assert NOISY_LEGEND in p.stdout


def test_crossover_report_shows_intervals_and_noisy():
    p = run("crossover.py", os.path.join(ROOT, "results", "h200x1", "crossover", "crossover-d2d.json"))
    assert p.returncode == 0, p.stderr
    assert "| 4 KiB | 1 | 9.19 ±0.885 noisy (?) | 9.75 ±0.0660 (?) |" in p.stdout, p.stdout[:3000]
    # the legend names the coverage these intervals have (3 processes: [min, max], 75%), not the generic one
    assert crossover.COST_LEGEND in p.stdout and "holds the median with 75%." in p.stdout
