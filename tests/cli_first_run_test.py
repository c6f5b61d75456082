#!/usr/bin/env python3
"""A first run that explains itself, and the run's times in the results context (registered with ctest).

usage: cli_first_run_test.py DMABENCH MODE
  first-run  `dmabench` with no arguments: exit 0, quickly, nothing on stderr; every backend of the build listed
             as available or with its reason (as --features says), the host backend's ranks, every engine either
             running here or with its reason; the printed first-sweep command runs (on the host backend, one case);
             `--out X` without `--config` is still bad input
  times      context.started_at, finished_at and wall_s: a finished run (the times agree with each other and with
             the test's own clock), a run interrupted by SIGINT, a run killed with SIGKILL (started_at only)
  progress   a sweep longer than 3 s prints `[k/N] <elapsed> elapsed, ~<left> left; running <next case> (<s>)` on
             stderr (one line per case, not a terminal), the last `[N/N] ... done: <case>`; a short sweep prints none; the table never shows Google
             Benchmark's raw "built as DEBUG" warning (explained by a note where the library is a debug build)
"""
import calendar
import json
import os
import re
import shlex
import signal
import subprocess
import sys
import tempfile
import time

from cli_test import host_sweep  # noqa: E402
from driver_common import expect

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ISO_MS = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")


def bare(exe, cwd):
    t0 = time.monotonic()
    p = subprocess.run([exe], capture_output=True, text=True, timeout=120, cwd=cwd)
    return p, time.monotonic() - t0


def section(lines, title):
    """The lines after the one starting with `title`, up to the next line that does not start with a space."""
    i = next(i for i, l in enumerate(lines) if l.startswith(title))
    out = []
    for l in lines[i + 1:]:
        if not l.startswith(" "):
            break
        out.append(l)
    return lines[i], out


def first_run(exe, tmp):
    p, took = bare(exe, tmp)
    expect(p.returncode == 0, f"bare dmabench: exit {p.returncode}\n{p.stdout[-2000:]}\n{p.stderr[-2000:]}")
    expect(p.stderr == "", f"bare dmabench wrote on stderr: {p.stderr[-2000:]}")
    expect(took < 20, f"bare dmabench took {took:.1f} s")
    lines = p.stdout.splitlines()
    version = subprocess.run([exe, "--version"], capture_output=True, text=True, timeout=60).stdout.strip()
    expect(lines[0].startswith(version + ":"), f"first line {lines[0]!r} does not start with {version!r}")
    # every backend of the build: available (as --features says) or why not
    head, rows = section(lines, "backends of this build: ")
    built = head.split(": ", 1)[1].split(", ")
    expect("host" in built, f"the host backend is not listed: {head}")
    features = subprocess.run([exe, "--features"], capture_output=True, text=True, timeout=120).stdout
    for b in built:
        row = next((r for r in rows if r.startswith(f"  {b}: ")), None)
        expect(row is not None, f"backend {b} has no line:\n{p.stdout}")
        available = row.startswith(f"  {b}: available")
        expect(available == (f"backend {b}: available" in features), f"{row!r} disagrees with --features")
        expect(available or re.match(rf"  {b}: unavailable: \S", row), f"no reason: {row!r}")
    expect(any(r.startswith("  host: available: host ranks 0..") for r in rows), f"host ranks:\n{p.stdout}")
    # every engine runs here or says why not; the host engine runs on the host backend
    _, runs = section(lines, "engines that run here:")
    here = {e for r in runs for e in r.split(": ", 1)[1].split(", ")}
    expect("host" in next(r for r in runs if r.startswith("  on host: ")), f"engines on host: {runs}")
    not_here = next((l for l in lines if l.startswith("not here: ")), "not here: ")
    missing = {m.split(" (", 1)[0] for m in not_here[len("not here: "):].split("; ") if m}
    engines = set(re.findall(r"^  (\S+) +\[", features, re.M))
    expect(engines and engines == here | missing and not here & missing,
           f"engines {sorted(engines)}: here {sorted(here)}, not here {sorted(missing)}")
    expect(all(re.search(rf"(^|; ){re.escape(e)} \(.+\)", not_here[10:]) for e in missing), f"reasons: {not_here}")
    expect(any(l.startswith("docs: ") and "README.md" in l for l in lines), "no docs line")
    # the first sweep's command runs: from elsewhere than the source tree its config is found by absolute path
    _, cmd = section(lines, "a first sweep")
    argv = shlex.split(cmd[0])
    expect(argv[0] == exe and argv[1:2] == ["--config"] and argv[3:] == ["--out", "results/first.json"], f"command {argv}")
    expect(os.path.isabs(argv[2]) and os.path.samefile(argv[2], os.path.join(ROOT, "configs", "quick.json")), argv[2])
    one = "--benchmark_filter=copy/host/oneshot/.*/4KiB"
    r = subprocess.run(argv + ["--backend", "host", one], capture_output=True, text=True, timeout=300, cwd=tmp)
    expect(r.returncode == 0, f"{argv}: exit {r.returncode}\n{r.stdout[-2000:]}\n{r.stderr[-2000:]}")
    with open(os.path.join(tmp, "results", "first.json")) as f:
        res = json.load(f)["results"]
    expect(len(res) == 1 and res[0]["status"] == "ok" and res[0]["engine"] == "host", f"first sweep: {res}")
    # from the source tree the command names the config as the user sees it there
    p, _ = bare(exe, ROOT)
    _, cmd = section(p.stdout.splitlines(), "a first sweep")
    expect(shlex.split(cmd[0])[1:3] == ["--config", "configs/quick.json"], f"from the source tree: {cmd[0]}")
    # configs/quick.json in the working directory is read as a --config is (core/read_file): over 1 MiB it is not
    # read (main parsed any size), a FIFO there is never opened
    odd = os.path.join(tmp, "odd")
    os.makedirs(os.path.join(odd, "configs"))
    with open(os.path.join(odd, "configs", "quick.json"), "w") as f:
        json.dump({"description": "BIG-QUICK", "pad": "x" * (2 << 20)}, f)
    p, _ = bare(exe, odd)
    expect(p.returncode == 0 and "BIG-QUICK" not in p.stdout, f"a 2 MiB configs/quick.json was read:\n{p.stdout[-2000:]}")
    os.unlink(os.path.join(odd, "configs", "quick.json"))
    os.mkfifo(os.path.join(odd, "configs", "quick.json"))
    p, _ = bare(exe, odd)
    expect(p.returncode == 0 and "a first sweep" in p.stdout, f"a FIFO at configs/quick.json: exit {p.returncode}")
    # only a bare `dmabench` changed: --out without --config is still bad input, one line, nothing written
    out = os.path.join(tmp, "never.json")
    p = subprocess.run([exe, "--out", out], capture_output=True, text=True, timeout=60, cwd=tmp)
    expect(p.returncode == 2 and p.stdout == "" and len(p.stderr.splitlines()) == 1 and "--config" in p.stderr,
           f"--out alone: exit {p.returncode}: {p.stderr!r}")
    expect(not os.path.exists(out), "--out alone wrote a file")


def seconds(iso):
    """Seconds since the epoch of an ISO 8601 UTC time with milliseconds."""
    expect(isinstance(iso, str) and ISO_MS.match(iso), f"not ISO 8601 with milliseconds: {iso!r}")
    return calendar.timegm(time.strptime(iso[:19], "%Y-%m-%dT%H:%M:%S")) + int(iso[20:23]) / 1000


def check_finished(ctx, what, longest_s):
    started, finished, wall = seconds(ctx.get("started_at")), seconds(ctx.get("finished_at")), ctx.get("wall_s")
    expect(isinstance(wall, float) and 0 < wall <= longest_s, f"{what}: wall_s {wall}, the run took {longest_s:.2f} s")
    expect(started <= finished, f"{what}: started {ctx['started_at']} after finished {ctx['finished_at']}")
    expect(abs((finished - started) - wall) < 0.1, f"{what}: {finished - started:.3f} s between the times, wall_s {wall}")
    expect(ctx["started_at"][:19] <= ctx["date"][:19], f"{what}: started_at {ctx['started_at']} after date {ctx['date']}")


def journal_header(out):
    with open(out + ".journal") as f:
        return json.loads(f.readline())["context"]


def long_run(exe, tmp, name):
    """A 3000-case sweep started; returns the process once its journal holds a few records."""
    cfg, out = host_sweep(tmp, name, sizes=list(range(1 << 20, (1 << 20) + 3000)), iterations=3)
    p = subprocess.Popen([exe, "--backend", "host", "--config", cfg, "--out", out], stdout=subprocess.DEVNULL,
                         stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 60
    while time.time() < deadline and not (os.path.exists(out + ".journal") and sum(1 for _ in open(out + ".journal")) > 3):
        time.sleep(0.02)
    return p, out


def times(exe, tmp):
    cfg, out = host_sweep(tmp, "done", sizes=["4KiB", "64KiB"], iterations=5)
    t0 = time.monotonic()
    subprocess.run([exe, "--backend", "host", "--config", cfg, "--out", out], check=True, capture_output=True, timeout=300)
    took = time.monotonic() - t0
    with open(out) as f:
        check_finished(json.load(f)["context"], "finished run", took)
    # SIGINT: the run finishes its file, with its times
    p, out = long_run(exe, tmp, "int")
    header = journal_header(out)
    expect(ISO_MS.match(header.get("started_at", "")) and "finished_at" not in header, f"journal header {header}")
    p.send_signal(signal.SIGINT)
    _, err = p.communicate(timeout=120)
    expect(p.returncode == 130, f"SIGINT: exit {p.returncode}: {err[-2000:]}")
    with open(out) as f:
        ctx = json.load(f)["context"]
    expect(ctx["started_at"] == header["started_at"], "the journal and the file disagree on started_at")
    check_finished(ctx, "interrupted run", 300)
    # SIGKILL: the run did not end: started_at in the journal and the file written so far, no finish
    p, out = long_run(exe, tmp, "kill")
    p.kill()
    p.wait()
    header = journal_header(out)
    with open(out) as f:
        ctx = json.load(f)["context"]
    expect(ISO_MS.match(header.get("started_at", "")) and ctx.get("started_at") == header["started_at"], f"{header} {ctx}")
    expect("finished_at" not in ctx and "wall_s" not in ctx, f"a killed run has finish times: {ctx}")


# `; running <the next case> (<its time>)` (issue 52), `: <case>` on the last line (done)
PROGRESS = re.compile(r"^\[(\d+)/(\d+)\] (\S+) elapsed, (?:~(\S+) left; running (.+) \((\S+)\)|done: (.+))$")


def progress(exe, tmp):
    # 8 cases on host rank 1, each operation held 150 ms (DMABENCH_HOST_FAULT): about 1 s a case
    cfg, out = host_sweep(tmp, "progress", sizes=[4096 * (k + 1) for k in range(8)], iterations=5)
    env = dict(os.environ, DMABENCH_HOST_FAULT="slow-device:1:150")
    t0 = time.monotonic()
    p = subprocess.run([exe, "--backend", "host", "--config", cfg, "--out", out], capture_output=True, text=True,
                       timeout=300, env=env)
    took = time.monotonic() - t0
    expect(p.returncode == 0, f"exit {p.returncode}\n{p.stdout[-2000:]}\n{p.stderr[-2000:]}")
    expect(took > 4, f"the sweep took {took:.1f} s: too short to test the progress line")
    with open(out) as f:
        names = [r["name"] for r in json.load(f)["results"]]
    lines = [l for l in p.stderr.splitlines() if l.startswith("[")]
    expect(lines, f"no progress line on stderr:\n{p.stderr[-2000:]}")
    seen = []
    for l in lines:
        m = PROGRESS.match(l)
        expect(m, f"progress line {l!r} is not `[k/N] <elapsed> elapsed, ~<left> left; running <case> (<s>)`")
        k, n = int(m.group(1)), int(m.group(2))
        named = m.group(7) if k == 8 else m.group(5)  # the last case, or the one running after case k
        expect(n == 8 and 1 <= k <= 8 and named == names[min(k, 7)], f"{l!r}: not case {k} of 8 ({names})")
        expect((m.group(4) is None) == (k == 8), f"{l!r}: only the last case says done")
        seen.append(k)
    expect(seen == sorted(set(seen)) and seen[-1] == 8, f"cases {seen}: in order, the last one always")
    expect(seen[0] > 1, f"case 1 already had a progress line (quiet for the first 3 s): {lines[0]!r}")
    expect("\x1b[K" not in p.stderr and "\r" not in p.stderr, "terminal redraws in a non-terminal's output")
    # a short sweep is quiet
    cfg, out = host_sweep(tmp, "short", sizes=[4096], iterations=3)
    q = subprocess.run([exe, "--backend", "host", "--config", cfg, "--out", out], capture_output=True, text=True,
                       timeout=120)
    expect(q.returncode == 0 and not any(PROGRESS.match(l) for l in q.stderr.splitlines()),
           f"a short sweep printed progress:\n{q.stderr}")
    for text in (p.stdout + p.stderr, q.stdout + q.stderr):
        expect("***WARNING*** Library was built as DEBUG" not in text, "Google Benchmark's DEBUG warning, unexplained")
    note = "built as DEBUG\" warning is about the distribution's library"
    expect((note in p.stdout) == (note in q.stdout), "the DEBUG note in one run and not the other")


def main():
    exe, mode = os.path.abspath(sys.argv[1]), sys.argv[2]
    with tempfile.TemporaryDirectory() as tmp:
        {"first-run": first_run, "times": times, "progress": progress}[mode](exe, tmp)
    print(f"PASS {mode}")


if __name__ == "__main__":
    main()
