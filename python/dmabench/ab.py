"""Paired A/B runs of two dmabench builds on one machine, with verdicts whose false-alarm rate is known.

usage: dmabench-results ab BASE_BIN NEW_BIN --out DIR [--processes 6] [--reruns 2] [--budget 900] [--seed S]
                           [--base-env K=V] [--new-env K=V] [--alpha 0.02] [--min-change CLASS=F] [--threshold F]
                           [--fail-ambiguous] [--json] [--junit FILE] -- DMABENCH_ARGS...

Runs BASE_BIN and NEW_BIN (two dmabench binaries: main and a change; the same binary twice is an A/A run) with the
same DMABENCH_ARGS (a config, a preset or flags; --out, --order, --order-seed, --processes, --benchmark_filter,
--junit and -q are ab's) in
alternating fresh processes: round k runs one process of each side, BASE first in odd rounds and NEW first in even
ones, each process with the cases in its own random order (`--order random --order-seed`, the seeds drawn from
--seed and recorded). Each side's processes are merged into a levels file by NEW_BIN (`NEW_BIN --merge`, merged_by
"ab": the program is the one writer of levels files, and NEW is the build whose merge is under test; both sides
merged by one program: DIR/base.json and DIR/new.json, every process's file under DIR/base/ and DIR/new/), and the
cases are judged by
compare's rule (dmabench.verdict: a rank-sum test of the per-process p50s, Benjamini-Hochberg over every case at
--alpha, slower/faster only beyond the class minimum). Then, while --budget seconds (counted from the start) allow
and at most --reruns times, the cases that are not decided `same` (ambiguous, slower, faster) run again in
--processes more fresh processes per side (--benchmark_filter on their names), and each is judged again on all of
its processes, Benjamini-Hochberg over the whole family still (a confirmation: a case called slower at the first
look and not at the second is not slower). Interleaving in time, a random order in every process and fresh
processes make the two sides' draws exchangeable where nothing changed: the assumption of the rank test.

--base-env / --new-env K=V set a variable for one side's processes only (e.g. LD_PRELOAD of the slowdown shim
tools/slowdown_shim.c, to measure what the gate catches: scripts/gate_rates.py).

Writes DIR/ab.json: the command lines, seeds, each process's exit code and seconds, the rounds, the rule, and the
verdicts (compare's rows); prints compare's table (or, with --json, ab.json). --junit FILE: compare's JUnit, written
by NEW_BIN (dmabench --junit-from; a NEW_BIN without that mode: exit 2 before any work).
Exit codes: 0 no case slower or failed; 1 a case slower or failed (ambiguous too with --fail-ambiguous); 2 bad
input (a binary that is not executable, a bad argument, a process that refused its arguments: its stderr's last
line is quoted; one line, nothing run after it); 3 a process ended otherwise than 0 (every case ok or skipped) or
1 (a case failed) and its side could not be merged; 130 interrupted (what finished is in DIR).
"""
import json
import os
import random
import shlex
import subprocess
import sys
import tempfile
import time

from . import compare, junit
from .program import merge_files
from .reader import load
from .text import json_text, ResultsError
from .tool import arg_parser, run_tool

TOOL = "ab"
SIDES = ("base", "new")
OWN_FLAGS = ("--out", "--order", "--order-seed", "--processes", "--benchmark_filter", "--junit", "-q", "--quiet")


class Interrupted(Exception):
    pass


def env_pairs(specs, flag):
    """{K: V} of `--base-env` / `--new-env` arguments; ResultsError on one without '='."""
    out = {}
    for spec in specs or ():
        key, eq, value = spec.partition("=")
        if not eq or not key or "\0" in spec:
            raise ResultsError(f"{flag} {spec!r}: expected NAME=VALUE")
        out[key] = value
    return out


def check_binary(path, side):
    if not os.path.isfile(path) or not os.access(path, os.X_OK):
        raise ResultsError(f"{side} binary {path!r}: not an executable file")


def check_args(args):
    for arg in args:
        name = arg.split("=", 1)[0]
        if name in OWN_FLAGS:
            raise ResultsError(f"{name} in DMABENCH_ARGS: ab sets it for each process (--out DIR is ab's own)")


ERE_SPECIAL = set(".[]{}()\\*+?^$|")


def name_filter(names):
    """A --benchmark_filter expression (POSIX extended, on the name Google Benchmark gives a case: its name, then
    `/iterations:N` for a fixed count, then `/manual_time`) that selects exactly the cases `names`."""
    escaped = ("".join("\\" + ch if ch in ERE_SPECIAL else ch for ch in n) for n in sorted(names))
    return "^(" + "|".join(escaped) + ")(/iterations:[0-9]+)?/manual_time$"


class Runner:
    """Runs the processes of one ab run and keeps their record."""

    def __init__(self, a, args, out_dir):
        self.a, self.args, self.dir = a, args, out_dir
        self.bins = {"base": a.base_bin, "new": a.new_bin}
        self.env = {"base": env_pairs(a.base_env, "--base-env"), "new": env_pairs(a.new_env, "--new-env")}
        self.rng = random.Random(a.seed)
        self.processes = []  # {side, round, index, seed, file, exit_code, seconds, filter}
        self.start = time.monotonic()

    def elapsed(self):
        return time.monotonic() - self.start

    def one(self, side, rnd, names=None):
        index = sum(p["side"] == side for p in self.processes) + 1
        path = os.path.join(self.dir, side, f"p{index:03d}.json")
        seed = self.rng.getrandbits(63)
        cmd = [self.bins[side], *self.args, "--out", path, "--order", "random", "--order-seed", str(seed), "-q"]
        if names is not None:
            cmd.append(f"--benchmark_filter={name_filter(names)}")
        env = {**os.environ, **self.env[side]}
        t0 = time.monotonic()
        try:
            p = subprocess.run(cmd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE, check=False)
        except KeyboardInterrupt:
            raise Interrupted() from None
        except OSError as e:
            raise ResultsError(f"{side} binary {self.bins[side]!r}: {e.strerror}") from None
        record = {"side": side, "round": rnd, "index": index, "seed": seed, "file": path, "exit_code": p.returncode,
                  "seconds": round(time.monotonic() - t0, 3), "filter": names is not None}
        self.processes.append(record)
        if p.returncode in (130, 143, -2, -15):
            raise Interrupted()
        if p.returncode == 2:
            last = (p.stderr.decode(errors="replace").strip().splitlines() or ["(nothing on stderr)"])[-1]
            raise ResultsError(f"{side} process refused its arguments (exit 2): {last[:300]}")
        if p.returncode not in (0, 1):
            sys.stderr.write(f"ab: {side} process {index} exited {p.returncode}; its file is merged where it was written\n")
        return record

    def round(self, rnd, names=None):
        order = SIDES if rnd % 2 else SIDES[::-1]
        for side in order:
            self.one(side, rnd, names)

    def files(self, side, rounds=()):
        """The results files of a side's processes: the first look's and those of the re-run `rounds`."""
        return [p["file"] for p in self.processes if p["side"] == side and os.path.exists(p["file"])
                and (not p["filter"] or p["round"] in rounds)]


def merge(runner, files):
    """The levels document of the results files `files` (2 or more), merged by NEW's program (`--merge`)."""
    with tempfile.TemporaryDirectory(prefix="dmabench-ab-") as tmp:
        out = os.path.join(tmp, "levels.json")
        merge_files(files, out, "ab", runner.bins["new"])
        return load(out)


def merged(runner, side, looks):
    """The levels document of a side: every case from the first look's processes, and a case re-run in looks 2..j
    (`looks`: per re-run look, (its rounds, its cases)) from the processes of looks 1..j (a case's draws are every
    process that measured it)."""
    first = runner.files(side)
    if len(first) < 2:
        raise ResultsError(f"{len(first) or 'no'} {side} process{'' if len(first) == 1 else 'es'} wrote a results "
                           "file; a side's merge takes 2 or more")
    doc = merge(runner, first)
    last = {}
    for j, (_, cases) in enumerate(looks):
        for name in cases:
            last[name] = j
    records = {}
    for j in sorted(set(last.values())):
        every = runner.files(side, rounds=[r for more, _ in looks[:j + 1] for r in more])
        again = merge(runner, every)
        records.update({r.get("name"): r for r in again["results"] if last.get(r.get("name")) == j})
    doc["results"] = [records.get(r.get("name"), r) for r in doc["results"]]
    if looks:
        doc["context"]["levels"]["reruns"] = [{"rounds": more, "cases": sorted(cases)} for more, cases in looks]
    return doc


def judge(runner, reruns, alpha, mins):
    docs = {side: merged(runner, side, reruns) for side in SIDES}
    rows, only_base, only_new = compare.compare(docs["base"], docs["new"], alpha=alpha, min_change=mins)
    return docs, rows, only_base, only_new


def write_json(path, value):
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(json_text(value) + "\n")
    os.replace(tmp, path)


def main(argv=None, tool=TOOL):
    return run_tool(tool, run, argv)


def parse(argv):
    argv = sys.argv[1:] if argv is None else list(argv)
    if "--" not in argv:
        raise ResultsError("expected `-- DMABENCH_ARGS...` after ab's own arguments (e.g. -- --preset quick)")
    cut = argv.index("--")
    ap = arg_parser(__doc__)
    ap.add_argument("base_bin")
    ap.add_argument("new_bin")
    ap.add_argument("--out", required=True, help="the directory of the run (created; must be empty or absent)")
    ap.add_argument("--processes", type=int, default=6, help="fresh processes per side in each look (default 6)")
    ap.add_argument("--reruns", type=int, default=2, help="looks after the first at undecided cases (default 2)")
    ap.add_argument("--budget", type=float, default=900.0, help="seconds after which no re-run starts (default 900)")
    ap.add_argument("--seed", type=int, help="the seed of every process's order (drawn and recorded when absent)")
    ap.add_argument("--base-env", action="append", metavar="K=V", help="a variable for BASE's processes only")
    ap.add_argument("--new-env", action="append", metavar="K=V", help="a variable for NEW's processes only")
    compare.add_rule_arguments(ap)
    ap.add_argument("--fail-ambiguous", action="store_true", help="an ambiguous case fails the comparison too")
    ap.add_argument("--json", action="store_true", help="print ab.json instead of the table")
    ap.add_argument("--junit", metavar="FILE", help="also write the verdicts as JUnit XML")
    a = ap.parse_args(argv[:cut])
    args = argv[cut + 1:]
    if not 2 <= a.processes <= 1000:
        raise ResultsError(f"--processes {a.processes}: expected 2 to 1000 fresh processes per side")
    if not 0 <= a.reruns <= 10:
        raise ResultsError(f"--reruns {a.reruns}: expected 0 to 10")
    if not 0 <= a.budget <= 7 * 86400:
        raise ResultsError(f"--budget {a.budget}: expected 0 to 604800 seconds")
    if a.seed is None:
        a.seed = random.SystemRandom().getrandbits(63)
    return a, args


def run(argv=None):
    a, args = parse(argv)
    alpha, mins = compare.rule_of(a)
    check_args(args)
    for side in SIDES:
        check_binary(getattr(a, f"{side}_bin"), side.upper())
    for flag, specs in (("--base-env", a.base_env), ("--new-env", a.new_env)):
        env_pairs(specs, flag)  # before anything is made
    program = junit.check_path(a.junit, os.path.abspath(a.new_bin)) if a.junit else None  # NEW writes the JUnit file
    if os.path.exists(a.out) and (not os.path.isdir(a.out) or os.listdir(a.out)):
        raise ResultsError(f"--out {a.out!r}: exists and is not an empty directory; ab writes a new one")
    for side in SIDES:
        os.makedirs(os.path.join(a.out, side), exist_ok=True)
    runner = Runner(a, args, a.out)
    looks, reruns = [], []  # reruns: per re-run look, (its rounds, its cases)
    try:
        for rnd in range(1, a.processes + 1):
            runner.round(rnd)
        docs, rows, only_base, only_new = judge(runner, reruns, alpha, mins)
        looks.append(look_summary(rows, runner))
        for _ in range(a.reruns):
            open_cases = [r["case"] for r in rows if r["verdict"] in ("ambiguous", "slower", "faster")]
            if not open_cases or runner.elapsed() >= a.budget:
                break
            first = len(runner.processes) // 2 + 1
            for rnd in range(first, first + a.processes):
                runner.round(rnd, open_cases)
            reruns.append((list(range(first, first + a.processes)), open_cases))
            docs, rows, only_base, only_new = judge(runner, reruns, alpha, mins)
            looks.append(look_summary(rows, runner, open_cases))
    except Interrupted:
        write_json(os.path.join(a.out, "ab.json"), record(a, args, alpha, mins, runner, looks, None, "interrupted"))
        sys.stderr.write(f"ab: interrupted; the finished processes' files are in {a.out}\n")
        return 130
    for side in SIDES:
        write_json(os.path.join(a.out, f"{side}.json"), docs[side])
    regressed = [r for r in rows if r["verdict"] in compare.regressions(a.fail_ambiguous)]
    result = record(a, args, alpha, mins, runner, looks, rows, "done")
    result.update(only_in_base=only_base, only_in_new=only_new, regressed=len(regressed))
    write_json(os.path.join(a.out, "ab.json"), result)
    if a.junit:
        junit.write(a.junit, compare.junit_cases(rows, [docs["base"], docs["new"]], a.fail_ambiguous),
                    {"command": "ab", "base": a.base_bin, "new": a.new_bin, "alpha": alpha}, program)
    if a.json:
        print(json_text(result))
    else:
        print(compare.markdown(rows, only_base, only_new, mins, alpha, False))
        print(f"\n{len(runner.processes)} processes in {runner.elapsed():.0f} s; looks: " +
              "; ".join(f"{lk['cases']} cases, " + ", ".join(f"{n} {v}" for v, n in lk["verdicts"].items() if n)
                        for lk in looks) + f"; files in {a.out}")
    return 1 if regressed else 0


def look_summary(rows, runner, cases=None):
    """One look: which cases it judged anew, the verdict counts, the processes so far and the seconds."""
    return {"cases": len(cases) if cases is not None else len(rows), "rerun": cases,
            "verdicts": {v: sum(r["verdict"] == v for r in rows) for v in compare.ORDER},
            "processes": len(runner.processes), "seconds": round(runner.elapsed(), 3)}


def record(a, args, alpha, mins, runner, looks, rows, state):
    return {"schema": "dmabench-ab/1", "state": state, "base_bin": os.path.abspath(a.base_bin),
            "new_bin": os.path.abspath(a.new_bin), "args": args, "command": shlex.join(args),
            "base_env": runner.env["base"], "new_env": runner.env["new"], "seed": a.seed,
            "processes_per_look": a.processes, "reruns": a.reruns, "budget_s": a.budget, "alpha": alpha,
            "min_change": mins, "processes": runner.processes, "looks": looks, "seconds": round(runner.elapsed(), 3),
            "cases": rows}


if __name__ == "__main__":
    sys.exit(main())
