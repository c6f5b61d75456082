"""Tests of `dmabench-results crossover export` (dmabench.reports.thresholds; issue 54, item 5) and of the
per-descriptor fit (dmabench.reports.descriptor_fit; issue 54, item 1's fit): the export of the committed 1 × H200
crossover map validates against the package's JSON Schema; loading it and picking for (direction, bytes, n) gives
the winner table the crossover report prints, at every measured cell, and docs/thresholds.md's serving-engine example
agrees; planted records carry their CPU cost, coalescing and SM budget through; bad input is exit 2 and one line;
the fit recovers a planted slope within its interval and refuses fewer than 3 distinct n.

Run by ctest (test `scripts`) with a python3 that has pytest; the schema checks need jsonschema and the fit's numpy
(python3-jsonschema, python3-numpy: scripts/test.sh installs them); each skips with the reason where its module is
missing (the GPU machine has no jsonschema).
"""
import json
import os
import re
import subprocess
import sys

import pytest

from test_blocks_report import block_result
from test_scripts import document, PACKAGE_ENV, ROOT

from dmabench.reports import crossover, descriptor_fit, thresholds

XO = os.path.join(ROOT, "results", "h200x1", "crossover")
FILES = [os.path.join(XO, "crossover.json.xz"), os.path.join(XO, "crossover-d2d.json.xz")]  # committed xz-compressed
KIB = 1024


def np_or_skip():
    return pytest.importorskip("numpy", reason="python3-numpy (the descriptor fit's `frames` extra)")


def validator():
    return pytest.importorskip("jsonschema", reason="python3-jsonschema (scripts/test.sh installs it)")


def export(*argv):
    return subprocess.run([sys.executable, "-m", "dmabench", "crossover", "export", *map(os.fspath, argv)],
                          capture_output=True, text=True, timeout=300, env=PACKAGE_ENV)


def schema():
    with open(thresholds.SCHEMA_FILE, encoding="utf-8") as f:
        return json.load(f)


@pytest.fixture(scope="module")
def h200(tmp_path_factory):
    """The export of the committed H200 map (the command docs/thresholds.md names), loaded."""
    out = tmp_path_factory.mktemp("export") / "h200.json"
    p = export("--out", out, *FILES)
    assert p.returncode == 0 and p.stdout == "" and p.stderr == "", p.stderr
    return out, json.loads(out.read_text())


@pytest.fixture(scope="module")
def report():
    return crossover.report_of(FILES, "oneshot", 0.10, 0.25)


def test_the_h200_export_validates_against_the_shipped_schema(h200):
    _, doc = h200
    jsonschema = validator()
    jsonschema.Draft7Validator.check_schema(schema())
    jsonschema.validate(doc, schema())
    assert (doc["schema"], doc["version"], doc["timing"]) == ("dmabench-thresholds", 1, "oneshot")
    (platform,) = doc["platforms"]
    assert (platform["backend"], platform["device"], platform["driver"], platform["runtime"]) == \
        ("cuda", "NVIDIA H200", "580.159.04", "13.0")
    assert {(t["direction"], t["host_kind"]) for t in platform["tables"]} == \
        {("d2d", "device"), ("h2d", "pinned"), ("h2d", "mapped"), ("d2h", "pinned"), ("d2h", "mapped")}
    h2d = next(t for t in platform["tables"] if (t["direction"], t["host_kind"]) == ("h2d", "mapped"))
    assert h2d["mechanisms"]["sm sms=12"]["sm_budget"] == 12 and h2d["mechanisms"]["sm sms=12"]["holds_sms"] is True
    assert h2d["mechanisms"]["ce-batch"]["holds_sms"] is False and h2d["mechanisms"]["ce-batch"]["coalesce"] is False
    cells = [c for r in h2d["regions"] for c in r["cells"]]
    assert len(cells) == 220  # every measured cell once
    assert all(c["cpu_us_per_call"] is None and c["cpu_source"] is None for c in cells)  # no breakdown in these records
    for c in cells:
        held = c["sms_held"]
        assert c["sm_cost_SM_us"] == (None if held is None else pytest.approx(held * c["p50_us"]))
        if c["runner_up"] and not c["tie"]:  # an untied winner: its margin interval lies above 1 at its low end or not
            lo, hi = c["margin_interval"]
            assert lo <= c["margin"] <= hi
    d2d = next(t for t in platform["tables"] if t["direction"] == "d2d")
    assert d2d["mechanisms"]["ce"]["holds_sms"] is None  # a copy within one GPU runs as a kernel: unknown, not 0
    assert any(x["kernel"] == "sm sms=12" and x["dma"] == "ce-batch" for x in h2d["crossovers"])


def printed(row):
    """The winner table's cell as the crossover report prints it (crossover.decision_text), up to the p50."""
    return crossover.decision_text(row).split(":")[0]


def test_round_trip_pick_equals_the_reports_winner_table_at_every_cell(h200, report):
    _, doc = h200
    checked = 0
    for g in report["groups"]:
        for row in g["cells"]:
            cell = thresholds.pick(doc, g["pattern"], row["block_bytes"], row["blocks_per_op"], host_kind=g["host_kind"])
            assert (cell["mechanism"], cell["tie"], cell["tied"], cell["runner_up"]) == \
                (row["winner"], row["tie"], row["tied"], row["runner_up"])
            assert cell["margin"] == row["margin"]
            head = f"tie ({', '.join(cell['tied'])})" if cell["tie"] else f"{cell['mechanism']} ×" \
                if cell["runner_up"] else f"{cell['mechanism']} only"
            assert printed(row).startswith(head), (printed(row), head)
            checked += 1
    assert checked == 690


@pytest.mark.parametrize("direction, host, size, n, at", [
    ("h2d", "mapped", 26 * KIB, 100, (24 * KIB, 64)),  # between grid points: the point below
    ("h2d", "mapped", 1, 1, (4 * KIB, 1)),  # below the grid: its smallest point
    ("d2h", "mapped", 64 << 20, 100000, (32 * KIB, 4096)),  # above: its largest (n=4096 measured to 32 KiB)
    ("d2h", "pinned", 20 * KIB, 300, (16 * KIB, 256))])
def test_pick_between_and_beyond_the_grid_is_the_step_below(h200, report, direction, host, size, n, at):
    _, doc = h200
    g = next(g for g in report["groups"] if (g["pattern"], g["host_kind"]) == (direction, host))
    row = next(r for r in g["cells"] if (r["block_bytes"], r["blocks_per_op"]) == at)
    cell = thresholds.pick(doc, direction, size, n, host_kind=host)
    assert cell["block_bytes"] == at[0] and (cell["mechanism"], cell["tied"]) == (row["winner"], row["tied"])


def docs_policy(path):
    """docs/thresholds.md's serving-engine example, run on `path`: its pick over the file's tables."""
    with open(os.path.join(ROOT, "docs", "thresholds.md"), encoding="utf-8") as f:
        text = f.read()
    code = re.search(r"## A serving engine reading it.*?```python\n(.*?)```", text, re.S).group(1)
    assert code.count("\n") <= 25  # a short example
    code = code.replace('"h200.json"', repr(os.fspath(path)))
    space = {}
    exec(compile(code, "docs/thresholds.md", "exec"), space)  # noqa: S102 - our own documentation's example
    return lambda *args, **kw: space["pick"](space["tables"], *args, **kw)


def test_the_docs_example_picks_the_reports_winner(h200, report):
    path, _ = h200
    policy = docs_policy(path)
    for g in report["groups"]:
        for row in g["cells"][::7]:
            got = policy(g["pattern"], row["block_bytes"], row["blocks_per_op"], host_kind=g["host_kind"])
            assert got == row["winner"] if not row["tie"] else got in row["tied"]  # a tie: the fewest SMs of them
            if row["tie"] and g["pattern"] != "d2d" and {"ce", "ce-batch"} & set(row["tied"]):
                assert got in ("ce", "ce-batch")  # a DMA engine holds no SM
    assert policy("h2d", 16 * KIB, 1024, host_kind="mapped") == "sm sms=12"  # the docs' comment


def test_pick_refuses_what_it_cannot_decide(h200):
    _, doc = h200
    with pytest.raises(ValueError, match="2 tables fit direction 'h2d'"):
        thresholds.pick(doc, "h2d", 4096, 16)  # pinned and mapped: the host kind must be named
    with pytest.raises(ValueError, match="0 tables"):
        thresholds.pick(doc, "h2d", 4096, 16, host_kind="mapped", device="NVIDIA B200")
    with pytest.raises(ValueError, match="version 2; this reader knows version 1"):
        thresholds.pick({**doc, "version": 2}, "h2d", 4096, 16, host_kind="mapped")


def planted(tmp_path):
    """A small crossover file: ce-batch (coalesced, with a submit breakdown), ce (with the copy breakdown's control)
    and sm sms=4 at 2 sizes x 2 counts, the kernel faster at 4 KiB, the DMA at 64 KiB."""
    records = []
    for block, n in ((4 * KIB, 16), (4 * KIB, 256), (64 * KIB, 16), (64 * KIB, 256)):
        dma = 5 + 0.5 * n + n * block / 40e3
        kernel = dma / 3 if block == 4 * KIB else dma * 2
        records.append(block_result("ce-batch", block, n, dma, options={"coalesce": True},
                                    p50_interval_us=[dma * 0.99, dma * 1.01],
                                    breakdown={"submit_us": 0.4 * n, "gpu_us": dma - 1}))
        records.append(block_result("ce", block, n, dma * 1.5, p50_interval_us=[dma * 1.49, dma * 1.51],
                                    breakdown_us={"control": 0.9 * n, "schedule": 1.0, "copy": 2.0, "sync": 1.0,
                                                  "total": dma * 1.5, "aligned_fraction": 1.0}))
        records.append(block_result("sm", block, n, kernel, options={"sms": 4},
                                    p50_interval_us=[kernel * 0.99, kernel * 1.01],
                                    engine_details={"sm_budget": 4, "grid_blocks": 4, "sms_used": 4}))
    path = tmp_path / "planted.json"
    path.write_text(json.dumps(document(records)))
    return path


def test_planted_cpu_cost_coalescing_and_sm_budget(tmp_path):
    p = export(planted(tmp_path), "--out", tmp_path / "t.json")
    assert p.returncode == 0, p.stderr
    doc = json.loads((tmp_path / "t.json").read_text())
    validator().validate(doc, schema())
    (t,) = doc["platforms"][0]["tables"]
    assert doc["platforms"][0]["device"] == "GPU X" and doc["platforms"][0]["driver"] is None
    assert t["mechanisms"]["ce-batch coalesce=true"]["coalesce"] is True
    assert t["mechanisms"]["sm sms=4"]["sm_budget"] == 4
    small, large = (thresholds.pick(doc, "h2d", b, 256) for b in (4 * KIB, 64 * KIB))
    assert small["mechanism"] == "sm sms=4" and small["sm_cost_SM_us"] == pytest.approx(4 * small["p50_us"])
    assert small["cpu_us_per_call"] is None and small["margin"] == pytest.approx(3.0)
    assert small["margin_interval"] == pytest.approx([3 * 0.99 / 1.01, 3 * 1.01 / 0.99])
    assert large["mechanism"] == "ce-batch coalesce=true" and large["sm_cost_SM_us"] == 0
    assert (large["cpu_us_per_call"], large["cpu_source"]) == (pytest.approx(0.4 * 256), "breakdown.submit_us")
    (cross,) = [x for x in t["crossovers"] if x["blocks_per_op"] == 256 and x["dma"] == "ce-batch coalesce=true"]
    assert (cross["kernel_wins_up_to_bytes"], cross["dma_wins_from_bytes"]) == (4 * KIB, 64 * KIB)


def test_cpu_cost_fields_in_order():
    both = {"breakdown": {"submit_us": 2.0}, "breakdown_us": {"control": 3.0}}
    assert thresholds.cpu_per_call(both) == (2.0, "breakdown.submit_us")
    assert thresholds.cpu_per_call({"breakdown_us": {"control": 3.0}}) == (3.0, "breakdown_us.control")
    assert thresholds.cpu_per_call({"breakdown_us": {"error": "no tracer"}}) == (None, None)


def test_stdout_without_out(tmp_path):
    p = export(planted(tmp_path))
    assert p.returncode == 0 and json.loads(p.stdout)["schema"] == "dmabench-thresholds"


@pytest.mark.parametrize("what", ["no-block-records", "missing", "not-json", "no-action", "other-action",
                                  "bad-timing", "unwritable"])
def test_bad_input_is_exit_2_and_one_line(tmp_path, what):
    other = tmp_path / "other.json"
    other.write_text(json.dumps(document([block_result("ce", 4096, 1, 5.0, layout={"kind": "contiguous"})])))
    junk = tmp_path / "junk.json"
    junk.write_text("{not json")
    cmd = [sys.executable, "-m", "dmabench", "crossover"]
    argv = {"no-block-records": ["export", other], "missing": ["export", tmp_path / "nope.json"],
            "not-json": ["export", junk], "no-action": [], "other-action": ["maps", other],
            "bad-timing": ["export", "--timing", "sometimes", other],
            "unwritable": ["export", planted(tmp_path), "--out", tmp_path / "no" / "dir" / "t.json"]}[what]
    p = subprocess.run([*cmd, *map(os.fspath, argv)], capture_output=True, text=True, timeout=300, env=PACKAGE_ENV)
    lines = p.stderr.splitlines()
    assert p.returncode == 2 and len(lines) == 1 and "error:" in lines[0] and p.stdout == "", (what, p.stderr)
    assert "Traceback" not in p.stderr
    want = {"no-block-records": "no block-layout records", "missing": "nope.json", "not-json": "junk.json",
            "no-action": "expected an action, export", "other-action": "'maps'", "bad-timing": "sometimes",
            "unwritable": "cannot write"}[what]
    assert want in lines[0], lines[0]


# ---- the per-descriptor fit -----------------------------------------------------------------------

def synthetic(seed, a=6.4, b=0.49, sd=2.0, counts=(1, 4, 16, 64, 256, 1024), repeats=5):
    numpy = np_or_skip()
    rng = numpy.random.default_rng(seed)
    ns = numpy.repeat(counts, repeats)
    return ns, a + b * ns + rng.normal(0, sd, ns.size)


def test_the_fit_recovers_a_planted_slope_within_its_interval():
    ns, ys = synthetic(7)
    f = descriptor_fit.fit_line(ns, ys)
    lo, hi = f["per_desc_interval_us"]
    assert lo < 0.49 < hi and hi - lo < 0.01 and f["per_desc_us"] == pytest.approx(0.49, abs=0.005)
    assert f["per_call_us"] == pytest.approx(6.4, abs=1.5) and f["points"] == 30 and f["distinct_n"] == 6
    assert f["residual_sd_us"] == pytest.approx(2.0, rel=0.35) and f["confidence"] == 0.95


def test_the_interval_covers_the_slope_about_95_percent_of_the_time():
    hits = 0
    for seed in range(400):
        ns, ys = synthetic(seed, sd=5.0, counts=(1, 2, 4, 8), repeats=2)  # few points: t with 6 degrees of freedom
        lo, hi = descriptor_fit.fit_line(ns, ys)["per_desc_interval_us"]
        hits += lo <= 0.49 <= hi
    assert 0.91 <= hits / 400 <= 0.99, hits


def test_t_quantiles():
    assert descriptor_fit.t975(1) == 12.706 and descriptor_fit.t975(30) == 2.042
    assert descriptor_fit.t975(35) == pytest.approx(2.030, abs=2e-3)
    assert descriptor_fit.t975(1000) == pytest.approx(1.962, abs=2e-3)


@pytest.mark.parametrize("ns", [[16, 16, 16], [1, 1, 4, 4, 4], []])
def test_fewer_than_3_distinct_n_is_refused(ns):
    with pytest.raises(ValueError, match=r"distinct descriptor counts? .*the fit needs >= 3"):
        descriptor_fit.fit_line(ns, [1.0 * i for i in range(len(ns))], "submit_us")


def breakdown_record(n, submit, gpu, engine="ce-batch", block=4 * KIB, **extra):
    return block_result(engine, block, n, gpu + 5, breakdown={"submit_us": submit, "gpu_us": gpu}, **extra)


def test_fit_records_reads_the_breakdown_fields():
    rng = np_or_skip().random.default_rng(3)
    records = [breakdown_record(n, 2 + 0.37 * n + rng.normal(0, 0.5), 10 + 0.12 * n + rng.normal(0, 0.5))
               for n in (1, 16, 64, 256, 1024) for _ in range(3)]
    records.append(breakdown_record(4096, 1e9, 1e9, status="failed", reason="x"))  # not counted
    f = descriptor_fit.fit_records(records)
    assert (f["mechanism"], f["block_bytes"]) == ("ce-batch", 4 * KIB)
    for name, slope in (("submit", 0.37), ("gpu", 0.12)):
        lo, hi = f[name]["per_desc_interval_us"]
        assert lo < slope < hi and f[name]["points"] == 15
    coalesced = [breakdown_record(n, 1 + 0.5 * d, 3 + 0.1 * d) for n, d in ((64, 4), (256, 16), (1024, 64))]
    for r, d in zip(coalesced, (4, 16, 64)):
        r["breakdown"]["descriptors"] = d  # coalescing: fewer descriptors than blocks
    assert descriptor_fit.fit_records(coalesced)["submit"]["per_desc_us"] == pytest.approx(0.5)


def test_fit_records_refuses_mixed_or_bare_records():
    mixed = [breakdown_record(n, n, n) for n in (1, 4, 16)] + [breakdown_record(64, 1, 1, engine="ce")]
    with pytest.raises(ValueError, match="fit one mechanism at one block size"):
        descriptor_fit.fit_records(mixed)
    bare = [block_result("ce-batch", 4 * KIB, n, 10.0) for n in (1, 4, 16)]
    with pytest.raises(ValueError, match="none with breakdown.submit_us or breakdown.gpu_us"):
        descriptor_fit.fit_records(bare)
    only_gpu = [block_result("ce-batch", 4 * KIB, n, 10.0, breakdown={"gpu_us": 1.0 + n}) for n in (1, 4, 16)]
    f = descriptor_fit.fit_records(only_gpu)
    assert f["submit"] is None and f["gpu"]["per_desc_us"] == pytest.approx(1.0)
