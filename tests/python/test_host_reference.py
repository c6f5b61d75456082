"""scripts/host_reference.py: probe lines paired with the records that measure the same thing, the targets
applied as stated (3% contiguous, 5% paged), a missing record and a pair beyond its target making exit 1."""
import json

from test_blocks_report import KIB, block_result, contiguous_result
from test_scripts import document, run

MIB = 1 << 20


def files(tmp_path, probe, records):
    p, r = tmp_path / "probe.jsonl", tmp_path / "run.json"
    p.write_text("".join(json.dumps(x) + "\n" for x in probe))
    r.write_text(json.dumps(document(records)))
    return p, r


def paged(mech, block, p50, test="paged-h2d"):
    return {"test": test, "mechanism": mech, "block_bytes": block, "blocks": 4096, "bytes": 4096 * block,
            "oneshot_us_p50": p50}


def random_blocks(engine, block, p50, host):
    return block_result(engine, block, 4096, p50, order="random", host=host)


def test_pairs_within_and_beyond_their_targets(tmp_path):
    probe = [{"test": "info"},
             {"test": "h2d", "bytes": 64 * MIB, "oneshot_us_p50": 1000.0, "b2b_per_op_us_median": 990.0},
             paged("loop", 4 * KIB, 1000.0), paged("kernel", 4 * KIB, 100.0), paged("batch", 4 * KIB, 500.0)]
    one = contiguous_result("ce", 64 * MIB, 1020.0)        # +2.0%: within 3%
    piped = contiguous_result("ce", 64 * MIB, 1030.0)       # +4.0% against 990: beyond 3%
    piped["timing"], piped["name"] = "pipelined", piped["name"].replace("/oneshot/", "/pipelined/")
    recs = [one, piped, random_blocks("ce", 4 * KIB, 1049.0, ("pinned", "local")),      # +4.9%: within 5%
            random_blocks("sm", 4 * KIB, 100.0, ("mapped", "local")),
            random_blocks("sm", 4 * KIB, 1.0, ("pinned", "local")),                     # sm on pinned: not the pair
            random_blocks("ce-batch", 4 * KIB, 600.0, ("pinned", "local"))]            # +20%: beyond 5%
    p = run("host_reference.py", *files(tmp_path, probe, recs))
    assert p.returncode == 1, p.stderr
    rows = {line.split(" | ")[0].lstrip("| "): line for line in p.stdout.splitlines() if line.startswith("| ")}
    assert "+2.0% | ±3% | within" in rows["h2d 64 MiB ce oneshot"]
    assert "+4.0% | ±3% | BEYOND" in rows["h2d 64 MiB ce pipelined"]
    assert "+4.9% | ±5% | within" in rows["h2d 4096 x 4 KiB ce pinned (loop)"]
    assert "+0.0% | ±5% | within" in rows["h2d 4096 x 4 KiB sm mapped (kernel)"]
    assert "+20.0% | ±5% | BEYOND" in rows["h2d 4096 x 4 KiB ce-batch pinned (batch)"]
    assert "3 of 5 pairs within their target." in p.stdout


def test_all_within_is_exit_0_and_a_missing_record_is_exit_1(tmp_path):
    probe = [paged("kernel", 4 * KIB, 100.0, test="paged-d2h")]
    rec = block_result("sm", 4 * KIB, 4096, 101.0, pattern="d2h", order="random", host=("mapped", "local"))
    assert run("host_reference.py", *files(tmp_path, probe, [rec])).returncode == 0
    p = run("host_reference.py", *files(tmp_path, probe + [paged("loop", 4 * KIB, 900.0, test="paged-d2h")], [rec]))
    assert p.returncode == 1 and "no record" in p.stdout


def test_unreadable_input_is_exit_2(tmp_path):
    bad = tmp_path / "probe.jsonl"
    bad.write_text("{not json\n")
    r = tmp_path / "run.json"
    r.write_text(json.dumps(document([])))
    p = run("host_reference.py", bad, r)
    assert p.returncode == 2 and "host_reference.py: error:" in p.stderr


def test_a_line_names_its_host_kind_and_pool(tmp_path):
    """host_probe's lines from --pool-bytes and --kinds: each pairs with the record of that kind and pool."""
    line = dict(paged("batch", 4 * KIB, 500.0), kind="mapped", pool_bytes=4096 * 4 * KIB * 4)
    mapped = random_blocks("ce-batch", 4 * KIB, 510.0, ("mapped", "local"))
    mapped["layout"]["pool_bytes"] = 4096 * 4 * KIB * 4
    pinned = random_blocks("ce-batch", 4 * KIB, 999.0, ("pinned", "local"))
    p = run("host_reference.py", *files(tmp_path, [line], [pinned, mapped]))
    assert p.returncode == 0, p.stdout
    assert "+2.0% | ±5% | within" in p.stdout and "ce-batch mapped (batch)" in p.stdout
    other_pool = dict(line, pool_bytes=4096 * 4 * KIB * 8)
    assert "no record" in run("host_reference.py", *files(tmp_path, [other_pool], [pinned, mapped])).stdout
