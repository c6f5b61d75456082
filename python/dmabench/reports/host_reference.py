"""dmabench's host-memory cases against tools/host_probe.cu, the independent reference loop, from one machine start.

usage: host_reference.py PROBE.jsonl RESULTS.json [more.json ...] [--markdown OUT.md]

Pairs every probe line with the dmabench record that measures the same thing, and prints measured (its p50 ± half
its interval), reference and difference:
  contiguous h2d / d2h / h2d-bidir at >= 64 MiB, `ce`, pinned host memory on the local node:
    oneshot p50 against the probe's oneshot p50 (issue + stream synchronize) and pipelined p50 against
    its back-to-back time per copy (events); the target is within 3%.
  paged h2d / d2h (random pages; on the line's host "kind" where it names one, else pinned, and sm on mapped
    memory; in a pool of the line's "pool_bytes" where it names one), oneshot p50 against the probe's:
    `ce` (one copy per block) = probe "loop", `ce-batch` = "batch", `sm` = "kernel"; the target is within 5%.
A pair beyond its target is flagged; nothing is averaged or dropped. Exit codes: 0 every pair within its
target, 1 some pair beyond it (or no pair at all), 2 bad input: an unreadable or malformed probe or results file
(a probe line whose fields are not numbers > 0), a bad argument or an unwritable --markdown, one line
`host_reference.py: error: ...` on stderr (dmabench.run_tool).
"""
import sys

from ..files import read_bytes, write_file
from ..keys import engine_options_in_name, interval_text, NOISY_LEGEND, p50_interval, pattern_spec
from ..reader import load, parse_json
from ..schema import check_kind, check_number
from ..text import fmt_size, ResultsError, table
from ..tool import arg_parser, run_tool

CONTIGUOUS_TOL, PAGED_TOL = 3.0, 5.0
# the table's caption: what the interval beside dmabench's p50 covers, and what the difference is taken from (issue 53)
CAPTION = (f"dmabench: {NOISY_LEGEND} (the p50 alone in files written before intervals were recorded). The "
           "difference is the p50's from the probe's figure; the probe's figure is "
           "its own median and carries no interval.")
MECHANISM = {"loop": ("ce", "pinned"), "batch": ("ce-batch", "pinned"), "kernel": ("sm", "mapped")}


PROBE_FIELDS = {"bytes": int, "block_bytes": int, "blocks": int, "oneshot_us_p50": float, "b2b_per_op_us_median": float}


def read_probe(path):
    """The probe's lines (JSON objects), each field this script reads checked: ResultsError naming the line."""
    try:
        data = read_bytes(path, "probe file", 64 << 20)
    except FileNotFoundError as e:
        raise ResultsError(f"cannot read {path}: {e}") from None
    lines = []
    for i, line in enumerate(data.split(b"\n")):
        if not line.strip():
            continue
        try:
            p = parse_json(line)
        except (ValueError, RecursionError) as e:
            raise ResultsError(f"{path}: line {i + 1}: not the probe's JSON lines ({e})") from None
        where = f"{path}: line {i + 1}"
        check_kind(p, dict, where)
        for field in ("test", "mechanism"):
            if field in p:
                check_kind(p[field], str, f"{where}: {field}")
        lines.append((where, p))
    return lines


def field(p, name, where):
    """A numeric field of a probe line, checked when it is used: an integer > 0, or a time > 0."""
    value = p.get(name)
    if PROBE_FIELDS[name] is int:
        check_kind(value, int, f"{where}: {name}")
    check_number(value, f"{where}: {name}", positive=True)
    return value


def plain(r, engine, kind):
    """A validated ok record of `engine` with default options on `kind` host memory on the local node."""
    h = r.get("host_memory") if isinstance(r.get("host_memory"), dict) else {}
    return (r["status"] == "ok" and r.get("validated") is True and r["engine"] == engine and not engine_options_in_name(r)
            and h.get("kind") == kind and h.get("numa") == "local")


def find(records, **want):
    for r in records:
        lay = r.get("layout") if isinstance(r.get("layout"), dict) else {"kind": "contiguous"}
        if all((lay if k in ("order", "block_bytes", "blocks_per_op", "kind", "pool_bytes") else r).get(k) == v
               for k, v in want.items()):
            return r
    return None


def pairs(probe, records):
    out = []
    for where, p in probe:
        test = p.get("test", "")
        spec = pattern_spec(test)  # the probe's contiguous tests are named after the one-GPU host patterns
        if spec.get("pairs") == "one-device" and spec.get("host_memory") and field(p, "bytes", where) >= 64 << 20:
            ce = [r for r in records if plain(r, "ce", "pinned")]
            for timing, name in (("oneshot", "oneshot_us_p50"), ("pipelined", "b2b_per_op_us_median")):
                r = find(ce, pattern=test, bytes_per_rank=p["bytes"], timing=timing, kind="contiguous")
                out.append((f"{test} {fmt_size(p['bytes'])} ce {timing}", r, field(p, name, where), CONTIGUOUS_TOL))
        elif test.startswith("paged-") and p.get("mechanism") in MECHANISM:
            engine, kind = MECHANISM[p["mechanism"]]
            kind = p.get("kind") if p.get("kind") in ("pinned", "mapped") else kind
            recs = [r for r in records if plain(r, engine, kind)]
            block, blocks = field(p, "block_bytes", where), field(p, "blocks", where)
            want = {"pool_bytes": p["pool_bytes"]} if isinstance(p.get("pool_bytes"), int) and p["pool_bytes"] > block * blocks else {}
            r = find(recs, pattern=test[len("paged-"):], timing="oneshot", kind="blocks", order="random",
                     block_bytes=block, blocks_per_op=blocks, **want)
            out.append((f"{test[6:]} {blocks} x {fmt_size(block)} {engine} {kind} ({p['mechanism']})", r,
                        field(p, "oneshot_us_p50", where), PAGED_TOL))
    return out


def run(argv=None):
    ap = arg_parser(__doc__)
    ap.add_argument("probe")
    ap.add_argument("results", nargs="+")
    ap.add_argument("--markdown")
    a = ap.parse_args(argv)
    probe = read_probe(a.probe)
    records = [r for path in a.results for r in load(path)["results"]]
    rows, beyond = [], 0
    for label, r, ref, tol in pairs(probe, records):
        if r is None:
            rows.append([label, "not measured", f"{ref:.1f}", "", f"±{tol:.0f}%", "no record"])
            beyond += 1
            continue
        got = r["latency_us"]["p50"]
        diff = 100.0 * (got - ref) / ref
        ok = abs(diff) <= tol
        beyond += not ok
        rows.append([label, interval_text(got, p50_interval(r), r.get("noisy"), lambda v: f"{v:.1f}"), f"{ref:.1f}",
                     f"{diff:+.1f}%", f"±{tol:.0f}%", "within" if ok else "BEYOND"])
    text = table(["case", "dmabench p50 µs", "reference µs", "difference", "target", "verdict"], rows)
    text += f"\n\n{len(rows) - beyond} of {len(rows)} pairs within their target.\n\n{CAPTION}\n"
    if a.markdown:
        write_file(a.markdown, text)
    print(text)
    return 0 if rows and beyond == 0 else 1


def main(argv=None, tool="host_reference.py"):
    return run_tool(tool, run, argv)


if __name__ == "__main__":
    sys.exit(main())
