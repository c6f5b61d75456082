"""What setting cases up cost beside what measuring them took, by pool size (a benchmark of the harness itself).

usage: setup_report.py RESULTS.json [RESULTS.json ...] [--json]

For the records that were set up (results/SCHEMA.md `setup_s`, `setup`): per pool size (a block layout's
`pool_bytes`; the buffer size for contiguous cases) and host kind, the setup of the first case that set the pool
up (it allocates and poisons the whole pool) and of the cases after it (they reuse the buffers: they fill, poison
and check what they touch and read the rest of the pool once), against the bytes each case touches (its
transfers' bytes, every buffer set) and the time it measured (its samples: iterations x p50 x operations per
sample; ± half the range between its medians at the ends of the cases' p50 intervals). The last table fits the
later cases' setup as a + b x touched GiB + c x pool GiB (least squares over every later case of the files): how
setup grows with the bytes a case touches and with the pool. configs/pool-setup.json is the sweep it was made for.
A results file may also be given as its run's journal, `<file>.journal` (dmabench.load).

Exit codes: 0 done; 2 bad input: an unreadable or malformed results file, a file with no record that was set up,
or a bad argument, with one line `setup_report.py: error: ...` on stderr.
"""
import statistics
import sys

from ..keys import interval_text, p50_interval
from ..reader import load
from ..text import fmt_size, json_text, ResultsError, table
from ..tool import arg_parser, run_tool

TOOL = "setup_report.py"
GiB = float(1 << 30)
# the table's caption: what each column's median covers and which carries an interval (issue 53)
CAPTION = ("setup s: one measurement per case (no interval); medians and max over the later cases of the row. "
           "measured s: samples × p50 × operations per sample, the median over the later cases ± half the range "
           "between the medians of that figure taken at the ends of each case's p50 interval (`p50_interval_us`: "
           "within one process a 95% interval); the median alone where a case has no interval.")


def pool_bytes(r):
    """The pool a case's buffers come from: its layout's pool, else one rank's share of the operation."""
    lay = r.get("layout") or {}
    return lay.get("pool_bytes") or r["bytes_per_rank"]


def touched_bytes(r):
    """Bytes a case's validation writes and checks exactly: the operation's bytes in every buffer set."""
    return (r.get("bytes") or r["bytes_per_rank"]) * max(1, r.get("rotate", 1))


def measured_s(r, p50=None):
    """Seconds of timed samples: samples x p50 x operations per sample (`p50`: another figure in its place, µs)."""
    if r["status"] != "ok" or not r.get("latency_us"):
        return None
    ops = r.get("pipeline_depth", 1) if r["timing"] == "pipelined" else 1
    return r.get("iterations", 0) * (r["latency_us"]["p50"] if p50 is None else p50) * 1e-6 * ops


def measured_interval(records):
    """[low, high]: the medians over the measured `records` (measured_s) of their measured seconds at the ends of each
    one's p50 interval (`p50_interval_us`), or None where one of them has no interval."""
    ends = []
    for r in (r for r in records if measured_s(r) is not None):
        pair = p50_interval(r)
        if pair is None or not all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in pair):
            return None
        ends.append([measured_s(r, pair[0]), measured_s(r, pair[1])])
    return [statistics.median(e[i] for e in ends) for i in (0, 1)] if ends else None


def kind(r):
    h = r.get("host_memory")
    return h["kind"] if isinstance(h, dict) and "kind" in h else "device"


def rows_of(records):
    """One row per (pool size, host kind): the first case that allocated, the later ones."""
    groups = {}
    for r in records:
        groups.setdefault((pool_bytes(r), kind(r)), []).append(r)
    rows = []
    for (pool, k), rs in sorted(groups.items()):
        first = [r for r in rs if r["setup"]["buffers_allocated"] > 0]
        later = [r for r in rs if r["setup"]["buffers_allocated"] == 0]
        meas = [m for m in (measured_s(r) for r in later) if m is not None]
        rows.append({
            "pool_bytes": pool, "host_kind": k, "cases": len(rs), "allocating_cases": len(first),
            "first_setup_s": max((r["setup_s"] for r in first), default=None),
            "later_setup_s_median": statistics.median([r["setup_s"] for r in later]) if later else None,
            "later_setup_s_max": max((r["setup_s"] for r in later), default=None),
            "later_touched_bytes_median": statistics.median([touched_bytes(r) for r in later]) if later else None,
            "later_measured_s_median": statistics.median(meas) if meas else None,
            "later_measured_s_interval": measured_interval(later),
            "failed": sum(r["status"] == "failed" for r in rs),
        })
    return rows


def fit(records):
    """Least squares of setup_s = a + b * touched GiB + c * pool GiB over the cases that reused their buffers."""
    pts = [(touched_bytes(r) / GiB, pool_bytes(r) / GiB, r["setup_s"]) for r in records if r["setup"]["buffers_allocated"] == 0]
    if len(pts) < 3:
        return None
    try:
        import numpy as np
    except ImportError:
        return None
    a = np.array([[1.0, t, p] for t, p, _ in pts])
    y = np.array([s for _, _, s in pts])
    coef, *_ = np.linalg.lstsq(a, y, rcond=None)
    return {"cases": len(pts), "intercept_s": float(coef[0]), "per_touched_GiB_s": float(coef[1]),
            "per_pool_GiB_s": float(coef[2])}


def fmt_s(v):
    return "–" if v is None else f"{v:.3f}"


def measured_text(row):
    """The later cases' median measured seconds ± half the range between the medians at their p50 intervals' ends."""
    if row["later_measured_s_median"] is None:
        return "–"
    return interval_text(row["later_measured_s_median"], row["later_measured_s_interval"], None, fmt_s)


def run(argv=None):
    ap = arg_parser(__doc__)
    ap.add_argument("results", nargs="+")
    ap.add_argument("--json", action="store_true", help="print JSON instead of markdown")
    a = ap.parse_args(argv)
    records = []
    for path in a.results:
        records += [r for r in load(path)["results"] if isinstance(r.get("setup"), dict) and r.get("setup_s") is not None]
    if not records:
        raise ResultsError("no record that was set up (results/SCHEMA.md setup_s): a file written before setup_s, or "
                           "every case skipped")
    rows, f = rows_of(records), fit(records)
    if a.json:
        print(json_text({"rows": rows, "fit": f}))
        return 0
    print(table(["pool", "host kind", "cases", "first case setup s", "later setup s (median)", "later setup s (max)",
                 "touched (median)", "measured s (median)", "failed"],
                [[fmt_size(r["pool_bytes"]), r["host_kind"], str(r["cases"]), fmt_s(r["first_setup_s"]),
                  fmt_s(r["later_setup_s_median"]), fmt_s(r["later_setup_s_max"]),
                  fmt_size(int(r["later_touched_bytes_median"])) if r["later_touched_bytes_median"] else "–",
                  measured_text(r), str(r["failed"])] for r in rows]))
    print(f"\n{CAPTION}")
    if f:
        print(f"\nlater cases' setup ≈ {f['intercept_s']:.4f} s + {f['per_touched_GiB_s']:.4f} s per GiB touched + "
              f"{f['per_pool_GiB_s']:.4f} s per GiB of pool (least squares over {f['cases']} cases)")
    return 0


def main(argv=None, tool=TOOL):
    return run_tool(tool, run, argv)


if __name__ == "__main__":
    sys.exit(main())
