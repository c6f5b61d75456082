"""One process against one process per GPU: runs a config both ways on the same machine start and tables the two.

usage: launch_compare.py --out DIR [--config configs/mpi.json] [--np 2] [--repeat 2] [--dmabench build/dmabench]
                         [--launcher "mpirun -np {np} --bind-to none"] [--threshold 0.05] [--large 64MiB]
                         [--no-run] [-- DMABENCH_ARGS ...]

What a launcher costs: the same cases run by one process driving every GPU and by one process per GPU
under mpirun / srun (docs/multi-process.md). The runs alternate, one process first:
DIR/one-1.json, DIR/mpi-1.json, DIR/one-2.json, DIR/mpi-2.json, ... (--repeat runs of each), so that a
drift of the machine shows as a difference between the repeats of one side, not between the sides.
Every command, its exit code, its duration and its console output go to DIR/runs.log; a run that fails
is recorded there and the next one still runs. DMABENCH_ARGS go to every run (e.g. --backend host).
--launcher is split like a shell line; {np} is replaced by --np; as root, mpirun also gets
--allow-run-as-root. `--bind-to none`: mpirun binds each process to one core by default, and
issue=thread-per-gpu cases are then skipped (docs/multi-process.md "CPUs"). Slurm: --launcher "srun -n {np} --mpi=pmix".
Results files of an earlier run in DIR are removed first; --no-run tables the files already in DIR.

The table (printed and written to DIR/compare.md): for every case in every file, the p50 of each side (the
median over its repeats), mpi/one, the busbw of each side at that p50, the noise and a verdict. The noise of a
case is the largest of each run's own spread ((p95 - p50) / p50) and each side's spread between its repeats
((max - min) / min of the repeats' p50); a verdict is `mpi slower` or `mpi faster` when mpi/one differs from 1
by more than --threshold and by more than the noise, else `same`. A case not ok in some file is listed with
its status and reason. The summary line gives, for sizes of at least --large bytes per rank, the largest
|mpi/one - 1| and its case.

Exit codes: 0 every run exited 0 and the table was made; 1 a run exited non-zero (see DIR/runs.log; the table is
made from the files there are); 2 bad input: a bad argument (a --launcher that does not split or is no command, a
--dmabench that is not executable), a DIR that cannot be written, an unreadable or malformed results file, no case
present in both sides (one line `launch_compare.py: error: ...` on stderr, before any run where it can be known).
"""
import os
import re
import shlex
import shutil
import statistics
import subprocess
import sys
import time

from .files import checkout_root, make_dir, open_log, write_file
from .keys import case_key, pattern_label, placement_order, spread, variant
from .reader import load
from .text import fmt_size, parse_size, printable, quote, ResultsError, table
from .tool import arg_parser, current_tool, run_tool

TOOL = "launch_compare.py"
ROOT = checkout_root()
SIDES = ("one", "mpi")


def launcher_command(text, np):
    try:
        words = shlex.split(text.replace("{np}", str(np)))
    except ValueError as e:  # an unclosed quote
        raise ResultsError(f"--launcher {quote(text)}: {e}; accepted: a command line such as 'mpirun -np {{np}}'") from None
    if not words:
        raise ResultsError("--launcher is empty")
    if os.path.basename(words[0]) == "mpirun" and os.geteuid() == 0 and "--allow-run-as-root" not in words:
        words.insert(1, "--allow-run-as-root")
    return words


def run_all(a, launcher, extra):
    """Runs every file in turn; returns whether every run exited 0."""
    make_dir(a.out)
    log = open_log(os.path.join(a.out, "runs.log"))  # refused (a link there) before anything is removed or run
    stale = sorted(f for f in os.listdir(a.out) if re.fullmatch(r"(one|mpi)-\d+\.json(\.journal)?", f))
    for f in stale:  # an earlier run's: none of them may be read as this run's
        path = os.path.join(a.out, f)
        try:
            os.remove(path)
        except OSError as e:
            raise ResultsError(f"cannot remove {path} of an earlier run: {e.strerror}") from None
    if stale:
        print(f"{current_tool(TOOL)}: removed {len(stale)} results files of an earlier run from {a.out}", file=sys.stderr)
    clean = True
    with log:
        for k in range(1, a.repeat + 1):
            for side in SIDES:
                out = os.path.join(a.out, f"{side}-{k}.json")
                cmd = ([] if side == "one" else launcher) + [a.dmabench, "--config", a.config, "--out", out, *extra]
                log.write(f"$ {shlex.join(cmd)}\n")
                log.flush()
                t0 = time.monotonic()
                try:
                    code = subprocess.run(cmd, stdout=log, stderr=subprocess.STDOUT).returncode
                except OSError as e:  # it could not be started: recorded as a failed run, the next one still runs
                    log.write(f"cannot start {cmd[0]}: {e.strerror}\n")
                    code = 127
                line = f"{side}-{k}: exit {code} after {time.monotonic() - t0:.1f} s"
                log.write(f"# {line}\n\n")
                log.flush()
                print(line, file=sys.stderr)
                clean = clean and code == 0
    return clean


def read_side(directory, side):
    """The results of one side's repeats, in order, as far as they exist: [results list per repeat]."""
    runs = []
    while True:
        path = os.path.join(directory, f"{side}-{len(runs) + 1}.json")
        if not (os.path.exists(path) or os.path.exists(path + ".journal")):  # the journal: a run killed midway
            return runs
        runs.append(load(path)["results"])


def side_summary(records):
    """A side's repeats of one case: the median p50, the busbw at that p50, the spread between the repeats and the
    largest spread of one repeat's own samples; or the first record that is not ok."""
    bad = next((r for r in records if r["status"] != "ok"), None)
    if bad is not None:
        return bad
    p50s = [r["latency_us"]["p50"] for r in records]
    p50 = statistics.median(p50s)
    # busbw at that p50 (busbw x p50 is the case's bytes times its pattern's factor, the same in every repeat), so
    # that the table's bandwidth is the one its latency implies
    return {"p50": p50, "busbw": records[0]["busbw_GBps"] * records[0]["latency_us"]["p50"] / p50,
            "repeat_spread": (max(p50s) - min(p50s)) / min(p50s), "own_spread": max(spread(r) for r in records)}


def compare(one_runs, mpi_runs, threshold):
    """One row per case present in every file of both sides."""
    maps = [[{case_key(r): r for r in run} for run in runs] for runs in (one_runs, mpi_runs)]
    keys = [k for k in maps[0][0] if all(k in m for side in maps for m in side)]
    rows = []
    for key in keys:
        first = maps[0][0][key]
        row = {"pattern": first["pattern"], "in_place": bool(first.get("in_place")), "variant": variant(first),
               "bytes_per_rank": first["bytes_per_rank"], "timing": first["timing"], "key": key}
        one, mpi = (side_summary([m[key] for m in side]) for side in maps)
        not_ok = [(name, s) for name, s in zip(SIDES, (one, mpi)) if "status" in s]
        if not_ok:
            row["verdict"] = "; ".join(f"{name} {s['status']}: {s.get('reason', '')[:80]}" for name, s in not_ok)
            rows.append(row)
            continue
        ratio = mpi["p50"] / one["p50"]
        noise = max(one["repeat_spread"], mpi["repeat_spread"], one["own_spread"], mpi["own_spread"])
        verdict = "same"
        if abs(ratio - 1) > threshold and abs(ratio - 1) > noise:
            verdict = "mpi slower" if ratio > 1 else "mpi faster"
        row.update(one=one, mpi=mpi, ratio=ratio, noise=noise, verdict=verdict)
        rows.append(row)
    return rows


def markdown(rows, repeats, threshold, large):
    measured = [r for r in rows if "ratio" in r]
    counts = {}
    for r in rows:
        v = r["verdict"] if "ratio" in r else "not compared"
        counts[v] = counts.get(v, 0) + 1
    head = (f"**one process against one process per GPU**: {len(rows)} cases in every file "
            f"({repeats[0]} one-process and {repeats[1]} multi-process runs); "
            + ", ".join(f"{n} {v}" for v, n in sorted(counts.items()))
            + f" (threshold {100 * threshold:.0f}%, beyond each case's noise)")
    big = [r for r in measured if r["bytes_per_rank"] >= large]
    if big:
        worst = max(big, key=lambda r: abs(r["ratio"] - 1))
        head += (f"; at {fmt_size(large)} per rank and above: {len(big)} cases, largest |mpi/one - 1| "
                 f"{100 * abs(worst['ratio'] - 1):.1f}% ({pattern_label(worst['pattern'], worst['in_place'])} "
                 f"{worst['variant']} {fmt_size(worst['bytes_per_rank'])} {worst['timing']})")
    order = lambda r: (placement_order((r["pattern"], r["in_place"])), r["variant"], r["bytes_per_rank"], r["timing"])
    body = []
    for r in sorted(rows, key=order):
        first = [pattern_label(r["pattern"], r["in_place"]), r["variant"], fmt_size(r["bytes_per_rank"]), r["timing"]]
        if "ratio" not in r:
            body.append(first + ["–"] * 6 + [r["verdict"]])
            continue
        body.append(first + [f"{r['one']['p50']:.2f}", f"{r['mpi']['p50']:.2f}", f"{r['ratio']:.3f}",
                             f"{r['one']['busbw']:.2f}", f"{r['mpi']['busbw']:.2f}", f"{100 * r['noise']:.1f}%",
                             r["verdict"]])
    header = ["pattern", "variant", "size/rank", "timing", "one p50 µs", "mpi p50 µs", "mpi/one", "one busbw GB/s",
              "mpi busbw GB/s", "noise", "verdict"]
    return printable(head) + "\n\n" + table(header, body) + "\n"


def main(argv=None, tool=TOOL):
    return run_tool(tool, run, argv)


def run(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    extra = []
    if "--" in argv:
        cut = argv.index("--")
        argv, extra = argv[:cut], argv[cut + 1:]
    if not any(x.startswith("--benchmark_color") for x in extra):
        extra.append("--benchmark_color=false")  # runs.log is read as text
    ap = arg_parser(__doc__)
    ap.add_argument("--out", required=True, help="directory for the results files, runs.log and compare.md")
    ap.add_argument("--config", default=os.path.join(ROOT, "configs", "mpi.json"))
    ap.add_argument("--np", type=int, default=2, help="processes under the launcher (default 2)")
    ap.add_argument("--repeat", type=int, default=2, help="runs of each side (default 2)")
    ap.add_argument("--dmabench", default=os.path.join(ROOT, "build", "dmabench"))
    ap.add_argument("--launcher", default="mpirun -np {np} --bind-to none")
    ap.add_argument("--threshold", type=float, default=0.05)
    ap.add_argument("--large", default="64MiB", help="sizes per rank the summary's largest difference is taken over")
    ap.add_argument("--no-run", action="store_true", help="table the files already in --out")
    a = ap.parse_args(argv)
    if a.np < 1:
        raise ResultsError(f"--np {a.np}: a number of processes, at least 1")
    if not 1 <= a.repeat <= 20:
        raise ResultsError(f"--repeat {a.repeat}: from 1 to 20 runs of each side")
    if not 0 <= a.threshold < 10:
        raise ResultsError(f"--threshold {a.threshold} is not a fraction such as 0.05")
    large = parse_size(a.large)
    launcher = launcher_command(a.launcher, a.np)
    clean = True
    if not a.no_run:
        for what, path in (("--dmabench", a.dmabench), ("--config", a.config)):
            if not os.path.isfile(path):
                raise ResultsError(f"{what} {path}: no such file")
        if not os.access(a.dmabench, os.X_OK):
            raise ResultsError(f"--dmabench {a.dmabench}: not executable")
        if not shutil.which(launcher[0]):
            raise ResultsError(f"--launcher: {launcher[0]}: no such command")
        clean = run_all(a, launcher, extra)
    runs = [read_side(a.out, side) for side in SIDES]
    for side, got in zip(SIDES, runs):
        if not got:
            raise ResultsError(f"{a.out}: no {side}-1.json (see {os.path.join(a.out, 'runs.log')})")
    rows = compare(runs[0], runs[1], a.threshold)
    if not rows:
        raise ResultsError(f"{a.out}: no case is in every file of both sides")
    text = markdown(rows, [len(r) for r in runs], a.threshold, large)
    write_file(os.path.join(a.out, "compare.md"), text)
    print(text, end="")
    return 0 if clean else 1


if __name__ == "__main__":
    sys.exit(main())
