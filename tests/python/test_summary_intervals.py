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
    p = run("crossover.py", os.path.join(ROOT, "results", "h200x1", "crossover", "crossover-d2d.json.xz"))
    assert p.returncode == 0, p.stderr
    assert "| 4 KiB | 1 | 9.19 ±0.885 noisy (?) | 9.75 ±0.0660 (?) |" in p.stdout, p.stdout[:3000]
    # the legend names the coverage these intervals have (3 processes: [min, max], 75%), not the generic one
    assert crossover.COST_LEGEND in p.stdout and "holds the median with 75%." in p.stdout


# ---- issue 53: the reports that printed bare p50s (overlap, setup, matrix, host-reference) ----

def test_overlap_report_shows_the_idle_p50_with_its_interval(tmp_path):
    from test_scripts import overlap_result
    from dmabench.reports import overlap
    r = with_interval(overlap_result("ce", 64 << 20, "pipelined", 200.0, 1.5, 210.0, kept=0.97), 0.05)
    p = run("overlap_report.py", write(tmp_path, "ov.json", document([r])))
    assert p.returncode == 0, p.stderr
    assert "| 200.0 ±10.0 noisy / 220.0 | 206.2 / 210.0 |" in p.stdout, p.stdout  # under load: no interval recorded
    assert overlap.CAPTION in p.stdout and NOISY_LEGEND in overlap.CAPTION


def test_matrix_cells_show_their_interval(tmp_path):
    from dmabench.reports import matrix
    path = write(tmp_path, "m.json", document([with_interval(result("copy", "ce", 1 << 20, "oneshot", 20.0), 0.05)]))
    p = run("matrix.py", path, "--metric", "p50_us")
    assert p.returncode == 0, p.stderr
    assert "| GPU 0 | 20.0 ±1.0 noisy | 20.0 |" in p.stdout and matrix.CAPTION in p.stdout, p.stdout
    p = run("matrix.py", path)  # busbw at the p50's interval's ends: [S / high, S / low]
    assert "| GPU 0 | 52.4 ±2.8 noisy | 52.4 |" in p.stdout, p.stdout
    p = run("matrix.py", write(tmp_path, "old.json", document([result("copy", "ce", 1 << 20, "oneshot", 20.0)])))
    assert "| GPU 0 | 52.4 | 52.4 |" in p.stdout, p.stdout  # a file without intervals: the figure alone


def test_host_reference_shows_the_p50_with_its_interval(tmp_path):
    from test_host_reference import files, paged
    from test_blocks_report import KIB, block_result
    from dmabench.reports import host_reference
    rec = with_interval(block_result("sm", 4 * KIB, 4096, 101.0, pattern="d2h", order="random",
                                     host=("mapped", "local")), 0.01)
    p = run("host_reference.py", *files(tmp_path, [paged("kernel", 4 * KIB, 100.0, test="paged-d2h")], [rec]))
    assert p.returncode == 0, p.stderr
    assert "| 101.0 ±1.0 | 100.0 | +1.0% | ±5% | within |" in p.stdout, p.stdout
    assert host_reference.CAPTION in p.stdout


def test_setup_report_shows_the_measured_time_with_its_interval(tmp_path):
    import json
    from test_setup_report import doc, record, run as setup_run
    from dmabench.reports import setup
    rs = [record(256 << 20, 1024, 1.0, True)] + [record(256 << 20, 64, 0.1, False) for _ in range(3)]
    for r in rs:
        r["p50_interval_us"] = [95.0, 110.0]  # 10 samples x 1 op: 0.001 s, its ends 0.00095 and 0.0011 s
    path = tmp_path / "s.json"
    path.write_text(json.dumps(doc(rs)))
    p = setup_run(path)
    assert p.returncode == 0, p.stderr
    assert "| 0.001 ±0.000 | 0 |" in p.stdout and setup.CAPTION in p.stdout, p.stdout
    out = json.loads(setup_run(path, "--json").stdout)
    assert [round(x, 6) for x in out["rows"][0]["later_measured_s_interval"]] == [0.00095, 0.0011]
