"""compare.py on levels files (results/SCHEMA.md, "Levels across fresh processes"): the draws that judged each row,
the calibration table, the moved-together note; and dmabench.case_class."""
import copy
import json
import re
import sys

from merging import merged
from test_scripts import SCRIPTS, document, result, run, with_interval, write

from dmabench import compare
from dmabench import case_class, command_bytes

SIZES = {1024: 10.0, 4096: 11.0, 65536: 14.0, 512 << 10: 40.0, 64 << 20: 2000.0}  # bytes per rank: p50 µs
LAUNCH_BOUND = [1024, 4096, 65536, 512 << 10]


def one_process(scale=1.0, launch=1.0, cases=SIZES, moved=LAUNCH_BOUND):
    """A one-process run of copy/ce cases ({bytes: p50}) x `scale`, the cases in `moved` x `launch` too, with a
    calibration whose launch_sync is x `launch`."""
    rs = [with_interval(result("copy", "ce", size, "oneshot", p50 * scale * (launch if size in moved else 1.0)), 0.01)
          for size, p50 in cases.items()]
    doc = document(rs)
    doc["context"]["calibration"] = {"device": 0, "samples": 200, "cpu": 3, "probes": {
        "launch_sync": {"p50_us": 5.0 * launch, "min_us": 4.0, "p95_us": 6.0, "what": "an empty kernel"},
        "copy_4B_d2d": {"p50_us": 8.0, "min_us": 7.0, "p95_us": 9.0, "what": "a 4-byte copy"}}}
    return doc


def levels_doc(factors, **kw):
    """The levels file of len(factors) processes, process k at one_process(factors[k]); one factor: a levels file of
    two processes of which the second ended before its first case (one draw: a merge takes 2 or more files)."""
    docs = [one_process(f, **kw) for f in factors]
    if len(docs) == 1:
        docs.append(dict(one_process(factors[0], **kw), results=[]))
    return merged(docs)


def compare_json(tmp_path, base, new, *args):
    p = run("compare.py", write(tmp_path, "base.json", base), write(tmp_path, "new.json", new), "--json", *args)
    assert p.returncode in (0, 1), p.stderr
    return p.returncode, json.loads(p.stdout)


def test_each_row_names_the_draws_that_judged_it():
    lv, one = levels_doc([1.0, 1.02, 0.98]), one_process()
    single = levels_doc([1.0])  # a levels file with one process that had the case: one draw
    plain = document([result("copy", "ce", size, "oneshot", p50) for size, p50 in SIZES.items()])
    for base, new, draws in ((lv, lv, "3+3"), (one, one, "1+1"), (lv, one, "3+1"), (one, lv, "1+3"),
                             (single, lv, "1+3"), (plain, plain, "1+1"), (plain, lv, "1+3")):
        rows, _, _ = compare.compare(base, new, 0.05)
        assert {r["draws"] for r in rows} == {draws}, (draws, rows[0]["draws"])
    assert compare.draws(lv["results"][0]) == [10.0, 10.2, 9.8]
    assert [r["class"] for r in compare.compare(lv, lv, 0.05)[0]] == ["launch-bound"] * 4 + ["bandwidth-bound"]


def test_overlapping_processes_are_ambiguous(tmp_path):
    base = levels_doc([1.00, 1.02, 1.04, 1.06, 1.08])  # medians 1.04 and 1.10: 5.8% apart, the draws interleave
    new = levels_doc([1.06, 1.08, 1.10, 1.12, 1.14])
    rc, doc = compare_json(tmp_path, base, new)
    assert rc == 0 and doc["regressed"] == 0 and doc["ambiguous"] == len(SIZES)
    for case in doc["cases"]:
        assert case["verdict"] == "ambiguous" and case["draws"] == "5+5" and not case["supported"], case
        assert abs(case["p50_ratio"] - 1.10 / 1.04) < 1e-9 and case["p"] > 0.02
    p = run("compare.py", write(tmp_path, "b.json", base), write(tmp_path, "n.json", new))
    assert p.returncode == 0 and "5 ambiguous" in p.stdout and "| 5+5 |" in p.stdout, p.stdout
    assert not re.search(r"\d+ (slower|faster)", p.stdout.split("\n", 1)[0]), p.stdout


def slower_copy(doc, factor):
    """`doc` (a levels file) with every p50, per-process p50 and interval end `factor` times slower."""
    new = copy.deepcopy(doc)
    for r in new["results"]:
        r["latency_us"] = {k: v * factor for k, v in r["latency_us"].items()}
        r["levels"]["p50_us"] = [None if x is None else x * factor for x in r["levels"]["p50_us"]]
        r["p50_interval_us"] = [x * factor for x in r["p50_interval_us"]]
        for k in ("algbw", "busbw"):
            r[f"{k}_GBps"] /= factor
            r[f"{k}_interval_GBps"] = [x / factor for x in r[f"{k}_interval_GBps"]]
    return new


def test_a_levels_file_25_percent_slower_is_slower(tmp_path):
    base = levels_doc([1.00, 1.02, 1.04, 1.06, 1.08])
    rc, doc = compare_json(tmp_path, base, slower_copy(base, 1.25))
    assert rc == 1 and doc["regressed"] == len(SIZES)
    assert {(c["verdict"], c["draws"]) for c in doc["cases"]} == {("slower", "5+5")}
    assert doc["moved_together"] is None  # the calibration did not move
    assert doc["calibration"]["launch_sync"] == {"base_p50_us": 5.0, "new_p50_us": 5.0, "ratio": 1.0}


def test_calibration_table_and_the_moved_together_note(tmp_path):
    base, new = one_process(), one_process(launch=1.2)  # every launch-bound case and launch_sync 20% slower
    rc, doc = compare_json(tmp_path, base, new)
    assert rc == 0 and doc["ambiguous"] == 4  # the note changes no verdict and no exit code (one process: ambiguous)
    assert doc["moved_together"]["calibration_probe"] == "launch_sync"
    assert abs(doc["moved_together"]["median_ratio"] - 1.2) < 1e-9 and abs(doc["moved_together"]["calibration_ratio"] - 1.2) < 1e-9
    assert (doc["moved_together"]["launch_bound_cases"], doc["moved_together"]["moved"]) == (4, 4)
    assert set(doc["calibration"]) == {"launch_sync", "copy_4B_d2d"} and doc["calibration"]["copy_4B_d2d"]["ratio"] == 1.0
    p = run("compare.py", write(tmp_path, "b.json", base), write(tmp_path, "n.json", new))
    assert p.returncode == 0
    [note] = [line for line in p.stdout.splitlines() if "moved together with the process's calibration" in line]
    assert "4 of 4 launch-bound cases" in note and "median p50 ratio 1.200" in note and "launch_sync (ratio 1.200)" in note
    assert "| launch_sync | 5.00 | 6.00 | 1.200 |" in p.stdout and "| copy_4B_d2d | 8.00 | 8.00 | 1.000 |" in p.stdout
    # only one launch-bound case moved (1 of 4): no note, and the calibration table still
    rc, doc = compare_json(tmp_path, base, one_process(launch=1.2, moved=[4096]))
    assert rc == 0 and doc["ambiguous"] == 1 and doc["moved_together"] is None and doc["calibration"]
    p = run("compare.py", write(tmp_path, "b.json", base), write(tmp_path, "n.json", one_process(launch=1.2, moved=[4096])))
    assert "moved together" not in p.stdout and "| launch_sync | 5.00 | 6.00 | 1.200 |" in p.stdout
    # the cases moved but the calibration did not: no note
    moved_only = one_process(launch=1.2)
    moved_only["context"]["calibration"]["probes"]["launch_sync"]["p50_us"] = 5.0
    assert compare_json(tmp_path, base, moved_only)[1]["moved_together"] is None


def test_the_note_takes_the_first_probe_both_have_and_needs_calibrations(tmp_path):
    base, new = one_process(), one_process(launch=0.8)  # faster together
    for doc in (base, new):
        del doc["context"]["calibration"]["probes"]["copy_4B_d2d"]
        doc["context"]["calibration"]["probes"]["memcpy_4B"] = doc["context"]["calibration"]["probes"].pop("launch_sync")
    rc, doc = compare_json(tmp_path, base, new)
    assert rc == 0 and doc["moved_together"]["calibration_probe"] == "memcpy_4B"
    assert abs(doc["moved_together"]["median_ratio"] - 0.8) < 1e-9
    del new["context"]["calibration"]
    rc, doc = compare_json(tmp_path, base, new)
    assert doc["calibration"] is None and doc["moved_together"] is None
    base["context"]["calibration"] = {"probes": "not an object"}  # context.calibration is not checked: never an error
    assert compare_json(tmp_path, base, base)[1]["calibration"] is None


def blocks(total, per_op):
    lay = {"kind": "blocks", "block_bytes": total // per_op, "blocks": per_op, "order": "random", "stride_bytes": None,
           "pool_bytes": None, "seed": 1, "sides": "both", "blocks_per_op": per_op}
    return result("h2d", "ce", total, "oneshot", 100.0, devices=[0], bytes=total, layout=lay,
                  host_memory={"kind": "pinned", "numa": "local"})


def moe(tokens, pair_tokens, size, token_bytes=8192):
    r = result("alltoallv", "ce", size, "oneshot", 100.0)  # S = 2 x size (two ranks)
    r["alltoallv"] = {"direction": "dispatch", "tokens": tokens, "token_bytes": token_bytes, "pair_tokens": pair_tokens}
    return r


def test_case_class_counts_the_bytes_of_one_command():
    assert case_class(result("copy", "ce", 512 << 10, "oneshot", 1.0)) == "launch-bound"
    assert case_class(result("copy", "ce", 1 << 20, "oneshot", 1.0)) == "bandwidth-bound"  # 1 MiB is not below 1 MiB
    assert case_class(result("allgather", "ce", 768 << 10, "oneshot", 1.0)) == "launch-bound"  # per rank, not S
    assert command_bytes(blocks(4 << 20, 1024)) == 4096 and case_class(blocks(4 << 20, 1024)) == "launch-bound"
    assert case_class(blocks(64 << 20, 16)) == "bandwidth-bound"  # 4 MiB blocks
    # alltoallv packed: S over the non-empty pairs; scattered: one token per command
    assert command_bytes(moe("packed", [[1, 3], [0, 4]], 4 << 20)) == (8 << 20) / 3
    assert case_class(moe("packed", [[1, 3], [0, 4]], 4 << 20)) == "bandwidth-bound"
    assert case_class(moe("packed", [[1, 3], [5, 4]], 1 << 20)) == "launch-bound"  # 2 MiB over 4 pairs
    assert case_class(moe("scattered", [[1, 3], [0, 4]], 64 << 20)) == "launch-bound"  # 8 KiB tokens
    assert case_class(moe("scattered", [[1]], 1 << 10, token_bytes=2 << 20)) == "bandwidth-bound"
    # fields check_document does not check, malformed: the bytes per rank
    bad = blocks(4 << 20, 1024)
    bad["layout"]["blocks_per_op"] = "many"
    assert command_bytes(bad) == 4 << 20 and command_bytes(moe("packed", "x", 64 << 10)) == 64 << 10


def test_a_moved_case_whose_core_was_shared_for_another_share_is_named(tmp_path):
    """Rows carry each side's share of samples on a shared core (record core_share) where both records have one; a
    slower or faster case whose share moved by 0.3 or more is named in a line (and --json core_shared_apart); the
    verdicts do not change."""
    base, new = one_process(), one_process(launch=1.5)
    for doc, shared in ((base, 0), (new, 24)):
        for r in doc["results"]:
            r["core_share"] = {"probed": 30, "shared": shared, "ratio_p50": 0.5, "threshold": 0.75}
    new["results"][-1]["core_share"]["shared"] = 0  # the bandwidth-bound case: not moved, not shared
    rows, _, _ = compare.compare(base, new, 0.05)
    assert [(r["base_core_shared"], r["new_core_shared"]) for r in rows] == [(0.0, 0.8)] * 4 + [(0.0, 0.0)]
    moved = compare.core_shared_apart(rows)
    assert [m["verdict"] for m in moved] == ["ambiguous"] * 4 and all(m["new_core_shared"] == 0.8 for m in moved)
    rc, doc = compare_json(tmp_path, base, new)
    assert rc == 0 and len(doc["core_shared_apart"]) == 4
    p = run("compare.py", write(tmp_path, "b.json", base), write(tmp_path, "n.json", new))
    assert "**core shared**: 4 slower, faster or ambiguous case(s)" in p.stdout, p.stdout
    assert "(ambiguous: 0.00 -> 0.80)" in p.stdout
    plain_rows, _, _ = compare.compare(one_process(), one_process(launch=1.5), 0.05)  # no core_share: no fields
    assert not any("new_core_shared" in r for r in plain_rows) and compare.core_shared_apart(plain_rows) == []


def test_a_core_share_that_cannot_be_a_share_is_not_printed_as_one():
    """Issue 51: compare printed a core_share of -0.67 or inf as a fact; shared below 0 or above probed is no share."""
    base, new = one_process(), one_process(launch=1.5)
    for doc, shared in ((base, -20), (new, 45)):
        for r in doc["results"]:
            r["core_share"] = {"probed": 30, "shared": shared, "ratio_p50": 0.5, "threshold": 0.75}
    rows, _, _ = compare.compare(base, new, 0.05)
    assert not any("new_core_shared" in r for r in rows) and compare.core_shared_apart(rows) == []
