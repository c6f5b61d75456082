#!/usr/bin/env python3
"""The input, signal and console contract of the dmabench program (registered with ctest; issue 26).

usage: cli_contract_test.py DMABENCH MODE
  flags    Google Benchmark's flags and edge values: every bad one exit 2 with one line naming it, nothing
           run, an existing --out untouched; --benchmark_format=json keeps stdout pure JSON; the case limit
           is per run (all sweeps together), checked before the cases are made
  signals  a console that is gone (`| head`) does not stop the run; a signal anywhere in a run never leaves
           its lock or journal nor ends it by the signal; a process stopped (SIGSTOP) longer than
           --case-timeout goes on when resumed
"""
import json
import os
import signal
import subprocess
import sys
import tempfile
import time

from cli_test import host_sweep, leftovers, run  # noqa: E402
from driver_common import expect


def bad(exe, args, fragments, keep):
    """`args` must exit 2 with one line on stderr holding every fragment, and leave `keep` as it was."""
    with open(keep, "w") as f:
        f.write('{"kept": true}')
    p = run(exe, *args)
    expect(p.returncode == 2, f"{args}: exit {p.returncode}, expected 2\n{p.stdout[-2000:]}\n{p.stderr[-2000:]}")
    lines = p.stderr.strip().splitlines()
    expect(len(lines) == 1 and lines[0].startswith("dmabench: error: "), f"{args}: not one error line: {p.stderr!r}")
    for frag in fragments:
        expect(frag in lines[0], f"{args}: stderr lacks {frag!r}: {lines[0]}")
    expect(p.stdout == "", f"{args}: printed on stdout: {p.stdout[:500]!r}")
    with open(keep) as f:
        expect(f.read() == '{"kept": true}', f"{args}: the existing --out was touched")
    expect(leftovers(keep) == [], f"{args}: left {leftovers(keep)}")


def flags(exe, tmp):
    cfg, out = host_sweep(tmp, "flags", sizes=[4096], iterations=3)
    base = ["--backend", "host", "--config", cfg, "--out", out]
    # Google Benchmark's flags: values it would reject with its usage and exit 0, values it takes that make no
    # sense, values it fails to parse (three lines of its own), flags it does not know
    for flag, words in (("--benchmark_format=xml", ["--benchmark_format: 'xml'", "console, json"]),
                        ("--benchmark_min_time=-1", ["--benchmark_min_time: '-1'", "above 0"]),
                        ("--benchmark_min_time=0", ["--benchmark_min_time: '0'"]),
                        ("--benchmark_min_time=0x10", ["--benchmark_min_time: '0x10'"]),
                        ("--benchmark_min_warmup_time=nan", ["--benchmark_min_warmup_time: 'nan'"]),
                        ("--benchmark_repetitions=abc", ["--benchmark_repetitions: 'abc'"]),
                        ("--benchmark_repetitions=99999999999", ["--benchmark_repetitions: '99999999999'"]),
                        ("--benchmark_out_format=xml", ["--benchmark_out_format: 'xml'", "csv"]),
                        ("--benchmark_color=maybe", ["--benchmark_color: 'maybe'", "auto"]),
                        ("--benchmark_counters_tabular=perhaps", ["--benchmark_counters_tabular: 'perhaps'"]),
                        ("--benchmark_context=novalue", ["--benchmark_context: 'novalue'", "key=value"]),
                        ("--benchmark_report_aggregates_only=true", ["--benchmark_report_aggregates_only"]),
                        ("--benchmark_display_aggregates_only=yes", ["--benchmark_display_aggregates_only"]),
                        ("--benchmark_time_unit=ms", ["--benchmark_time_unit", "microseconds"]),
                        ("--benchmark_frobnicate=1", ["'--benchmark_frobnicate'", "--benchmark_filter"]),
                        ("--benchmark_filter", ["--benchmark_filter: needs a value"]),
                        ("--benchmark_out=", ["--benchmark_out: ''"])):
        bad(exe, base + [flag], words, out)
    bad(exe, base + ["--list", "--benchmark_min_time=86400"], ["--benchmark_min_time: '86400'", "at most 60"], out)
    bad(exe, base + ["--benchmark_filter=copy", "--benchmark_filter=allgather"], ["--benchmark_filter: given twice"], out)
    bad(exe, ["--benchmark_format=xml", "--version"], ["--benchmark_format: 'xml'"], out)
    # edge values: an exponent past double, duplicate device sets, hex, 0.0, flags given twice, modes together
    # (one file for two outputs: check_distinct_outputs, with the other path checks)
    huge = os.path.join(tmp, "huge.json")
    with open(huge, "w") as f:
        f.write('{"patterns": ["copy"], "engines": ["host"], "devices": [[0, 1]], "sizes": [1e400]}')
    bad(exe, ["--backend", "host", "--config", huge, "--out", out], ["number overflow parsing '1e400'", "64-bit float"], out)
    dup, _ = host_sweep(tmp, "dup", sizes=[4096], devices=[[0, 1], [1, 0], [0, 1]])
    bad(exe, ["--backend", "host", "--config", dup, "--out", out], ["devices", "listed twice", "devices[0]", "devices[2]"], out)
    for flag, value in (("--case-timeout", "0x10"), ("--case-timeout", "1e1"), ("--case-timeout", "-0"),
                        ("--case-timeout", "0x0"), ("--power-window", "0x10")):
        bad(exe, base + [flag, value], [f"{flag}: '{value}'", "decimal"], out)
    bad(exe, base + ["--config", cfg], ["--config: given twice"], out)
    bad(exe, base + ["--out", out + "2"], ["--out: given twice"], out)
    bad(exe, ["--list", "--features"], ["--list and --features"], out)
    many, _ = host_sweep(tmp, "many", sizes=[4096], iterations=1000000)  # main would keep 10^12 samples (8 TB) of the case
    bad(exe, ["--backend", "host", "--config", many, "--out", out, "--list", "--benchmark_repetitions=999999"],
        ["--benchmark_repetitions=999999", "at most 10000000 samples"], out)
    for flag in ("--packets", "--power-trace"):  # main took an empty name as "none"
        bad(exe, base + [f"{flag}="], [f"{flag}: empty file name"], out)
    bad(exe, ["--features", "--version"], ["--features and --version"], out)
    # 0 in any decimal spelling means no limit
    for zero in ("0.0", "00", "0.000"):
        p = run(exe, *base, "--case-timeout", zero, check_rc=0)
        expect(len(json.load(open(out))["results"]) == 1, f"--case-timeout {zero}: {p.stdout}")
    print("flags: every bad Google Benchmark flag and edge value exit 2, one line, --out untouched")
    json_stdout(exe, tmp, base, out)
    case_limit(exe, tmp)


def json_stdout(exe, tmp, base, out):
    """--benchmark_format=json: stdout is Google Benchmark's JSON alone; dmabench's own lines go to stderr."""
    cfg, out = host_sweep(tmp, "json", sizes=[4096, 8192], iterations=3)
    p = run(exe, "--backend", "host", "--config", cfg, "--out", out, "--benchmark_format=json", check_rc=0)
    try:
        doc = json.loads(p.stdout)
    except ValueError as e:
        sys.exit(f"FAIL: --benchmark_format=json: stdout is not JSON ({e}):\n{p.stdout[:2000]}")
    expect(len(doc["benchmarks"]) == 2, f"{len(doc['benchmarks'])} benchmarks in the JSON")
    expect("cases from" in p.stderr and "2 ok, 0 skipped, 0 failed" in p.stderr, f"banner and summary: {p.stderr}")
    print("json: stdout is pure JSON, the banner and summary on stderr")


def case_limit(exe, tmp):
    """200000 cases per run, all sweeps together, refused before they are made (main made every sweep's cases)."""
    part = {"patterns": ["copy"], "engines": ["host"], "devices": [[0, 1]], "timing": ["oneshot", "pipelined"],
            "rotate": [1, 2, 3, 4]}
    path = os.path.join(tmp, "huge-sweeps.json")
    with open(path, "w") as f:  # 7 x 32768 distinct cases from a 1 KB config
        json.dump({"iterations": 1, "sweeps": [dict(part, sizes={"from": 4096 * k + 1, "to": 4096 * (k + 1), "step": 1})
                                               for k in range(7)]}, f)
    out = os.path.join(tmp, "never.json")
    t0 = time.time()
    bad(exe, ["--backend", "host", "--config", path, "--out", out, "--list"], ["more than 200000 cases", "all its sweeps"], out)
    expect(time.time() - t0 < 20, f"the limit took {time.time() - t0:.1f} s")
    # "pairs": every ordered pair of 8 devices is 56 placements of each case (56 x 230 x 2 x 8 = 206080 cases)
    with open(path, "w") as f:
        json.dump({"iterations": 1, "patterns": ["copy"], "engines": ["host"], "timing": ["oneshot", "pipelined"],
                   "rotate": [1, 2, 3, 4, 5, 6, 7, 8], "devices": {"pairs": list(range(8))},
                   "sizes": {"from": 1, "to": 230, "step": 1}}, f)
    bad(exe, ["--backend", "host", "--config", path, "--out", out, "--list"], ["more than 200000 cases"], out)
    print(f"case limit: 229376 cases in 7 sweeps refused in {time.time() - t0:.2f} s")


def closed_console(exe, tmp):
    """`dmabench ... | head -1`: the reader goes after the first line; the run goes on to the end, its file whole."""
    cfg, out = host_sweep(tmp, "head", sizes=list(range(4096, 4096 + 300)), iterations=2)
    for name, stderr in (("stdout", subprocess.DEVNULL), ("stdout and stderr", subprocess.STDOUT)):
        p = subprocess.Popen([exe, "--backend", "host", "--config", cfg, "--out", out, "--benchmark_color=false"],
                             stdout=subprocess.PIPE, stderr=stderr)
        p.stdout.readline()
        p.stdout.close()
        rc = p.wait(timeout=300)
        expect(rc == 0, f"{name} closed: exit {rc}, expected 0 (-13: killed by SIGPIPE)")
        with open(out) as f:
            n = len(json.load(f)["results"])
        expect(n == 300, f"{name} closed: {n} of 300 cases recorded")
        expect(leftovers(out) == [], f"{name} closed: left {leftovers(out)}")
    closed_descriptors(exe, tmp)
    # a closed terminal: SIGHUP mid-run (main was killed by it, its lock and journal left)
    p = subprocess.Popen([exe, "--backend", "host", "--config", cfg, "--out", out], stdout=subprocess.DEVNULL)
    deadline = time.time() + 60
    while time.time() < deadline and not (os.path.exists(out + ".journal") and sum(1 for _ in open(out + ".journal")) >= 3):
        time.sleep(0.01)
    p.send_signal(signal.SIGHUP)
    rc = p.wait(timeout=300)
    expect(rc == 0 and len(json.load(open(out))["results"]) == 300 and leftovers(out) == [],
           f"SIGHUP: exit {rc}, left {leftovers(out)}")
    print("closed console: 300 of 300 cases, exit 0, nothing left, with stdout (and stderr) gone after one line, "
          "or after SIGHUP")


def closed_descriptors(exe, tmp):
    """`dmabench ... >&- 2>&-`: started with stdout and stderr closed, the run's first files (its lock, its journal)
    took their numbers and the progress line was written into the journal, which no script could read after a
    kill -9 (finished cases lost). Every journal line is a record, whatever the console is."""
    cfg, out = host_sweep(tmp, "closed", sizes=[4096 * k for k in range(1, 9)], iterations=3)
    env = dict(os.environ, DMABENCH_HOST_FAULT="delay:0:400")  # 1.2 s per case: the progress line after 3 s
    p = subprocess.Popen([exe, "--backend", "host", "--config", cfg, "--out", out], env=env, stdin=subprocess.DEVNULL,
                         preexec_fn=lambda: (os.close(1), os.close(2)))
    t0, lines = time.time(), []
    while time.time() - t0 < 120 and p.poll() is None and not (time.time() - t0 > 5 and len(lines) >= 4):
        time.sleep(0.05)
        if os.path.exists(out + ".journal"):
            with open(out + ".journal", "rb") as f:
                lines = f.read().splitlines()
    expect(p.poll() is None, f"the run ended (exit {p.returncode}) before it could be killed midway")
    p.kill()
    p.wait(timeout=60)
    with open(out + ".journal", "rb") as f:
        lines = f.read().splitlines()
    for i, line in enumerate(lines):
        try:
            json.loads(line)
        except ValueError:
            sys.exit(f"FAIL: stdout and stderr closed: journal line {i + 1} is not a record: {line[:200]!r}")
    expect(len(lines) >= 4, f"{len(lines)} journal lines")
    for f in leftovers(out):
        os.unlink(os.path.join(os.path.dirname(out), f))
    print(f"closed stdout and stderr: the journal holds records only ({len(lines) - 1} after a kill -9)")


def signal_anywhere(exe, tmp):
    """SIGTERM at every moment of short runs: before the first case, between lock and handler, after the last
    case. The run either had not begun (killed before main: nothing written), was interrupted (143, the
    message) or ended as usual (0); never killed while it holds its lock, never a lock or journal left."""
    cfg, out = host_sweep(tmp, "anywhere", sizes=[4096, 8192], iterations=2)
    seen = {}
    for i in range(120):
        with open(out, "w") as f:
            f.write('{"kept": true}')
        p = subprocess.Popen([exe, "--backend", "host", "--config", cfg, "--out", out], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
        time.sleep(0.0015 * (i % 60))
        p.send_signal(signal.SIGTERM)
        stdout, stderr = p.communicate(timeout=60)
        rc = p.returncode
        seen[rc] = seen.get(rc, 0) + 1
        expect(leftovers(out) == [], f"SIGTERM after {i % 60 * 1.5} ms: exit {rc}, left {leftovers(out)}")
        if rc == -signal.SIGTERM:
            with open(out) as f:
                expect(f.read() == '{"kept": true}', f"killed by SIGTERM after writing its file:\n{stdout}\n{stderr}")
        elif rc == 143:
            expect("interrupted after" in stdout, f"exit 143 without the message:\n{stdout}\n{stderr}")
        else:
            expect(rc == 0 and len(json.load(open(out))["results"]) == 2, f"exit {rc}:\n{stdout[-1000:]}\n{stderr[-1000:]}")
    print(f"SIGTERM anywhere: outcomes {seen}, never a lock or journal left")


def stopped_longer_than_timeout(exe, tmp):
    """SIGSTOP for 3 s in the middle of a case under --case-timeout 2: resumed, the case goes on and the run ends
    as usual (main failed the case as a timeout)."""
    cfg, out = host_sweep(tmp, "stopped", sizes=[4096, 8192, 16384], iterations=10)
    env = dict(os.environ, DMABENCH_HOST_FAULT="delay:0:50")  # 0.5 s per case
    p = subprocess.Popen([exe, "--backend", "host", "--config", cfg, "--out", out, "--case-timeout", "2"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    deadline = time.time() + 60
    while time.time() < deadline and not (os.path.exists(out + ".journal") and sum(1 for _ in open(out + ".journal")) >= 2):
        time.sleep(0.01)
    p.send_signal(signal.SIGSTOP)
    time.sleep(3)
    p.send_signal(signal.SIGCONT)
    stdout, stderr = p.communicate(timeout=120)
    expect(p.returncode == 0, f"stopped 3 s: exit {p.returncode}, expected 0\n{stdout[-1500:]}\n{stderr[-1500:]}")
    res = json.load(open(out))["results"]
    expect(len(res) == 3 and all(r["status"] == "ok" for r in res), f"{[(r['status'], r['reason']) for r in res]}")
    print("SIGSTOP 3 s under --case-timeout 2: resumed, every case ok")


def main():
    exe, mode = sys.argv[1], sys.argv[2]
    with tempfile.TemporaryDirectory() as tmp:
        if mode == "flags":
            flags(exe, tmp)
        elif mode == "signals":
            closed_console(exe, tmp)
            signal_anywhere(exe, tmp)
            stopped_longer_than_timeout(exe, tmp)
        else:
            sys.exit(f"unknown mode {mode}")
    print(f"PASS {mode}")


if __name__ == "__main__":
    main()
