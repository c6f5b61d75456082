#!/usr/bin/env python3
"""Issue 51's breaks of the binary, on the host backend (registered with ctest as cli_issue51_outputs,
cli_issue51_signals and cli_issue51_console).

usage: cli_issue51_test.py DMABENCH outputs|signals|console

outputs:  every output flag (--out, --junit, --benchmark_out, --out's journal) naming every file a run reads (the
          config, the --check reference, an alltoallv trace), as given, through a symlink and through a hard link:
          exit 2, one line naming what it is, the input unchanged; the same with --processes (and its process
          files); a --junit FILE that is writable in a directory that is not: exit 2 before any work (the file is
          written through a temporary beside it); a byte count or another number of 309+ digits (-b, config sizes,
          token_bytes, overlap.bytes, --order-seed, --case-timeout, --benchmark_*): exit 2 naming the field;
signals:  --config - with a socket, a silent pipe and a trickling pipe on stdin: one SIGINT ends it at once (exit
          130); a run stopped by SIGINT or SIGTERM, one process or --processes, or a child killed with -9, writes its
          --junit file: every finished case, the rest marked as not run; SIGINT while --processes starts a child is
          never lost (tried many times at the moment of the start);
console:  a trace file whose name holds a newline, ESC and other control characters: the console table, the
          progress and the summary show them escaped (no line starts with the forged text).
"""
import json
import os
import random
import signal
import socket
import subprocess
import sys
import tempfile
import time

from driver_common import expect


def run(exe, *args, rc=None, cwd=None, user=None, timeout=120):
    p = subprocess.run([exe, *args], capture_output=True, text=True, cwd=cwd, timeout=timeout, user=user,
                       errors="backslashreplace")
    if rc is not None and p.returncode != rc:
        sys.exit(f"FAIL: {' '.join(a[:80] for a in args)} exited {p.returncode}, expected {rc}\n{p.stdout[-2000:]}\n"
                 f"{p.stderr[-2000:]}")
    return p


def one_line(p, *words):
    lines = p.stderr.strip().splitlines()
    expect(len(lines) == 1, f"one line, got {p.stderr[:800]!r}")
    for w in words:
        expect(w in lines[0], f"{w!r} not in {lines[0]!r}")


def write(path, text):
    with open(path, "w") as f:
        f.write(text)
    return path


def read(path):
    with open(path, "rb") as f:
        return f.read()


def moe_config(d, trace="trace.json", name="moe.json"):
    write(os.path.join(d, trace), "[[0, 4], [4, 0]]\n")
    return write(os.path.join(d, name), json.dumps({"patterns": ["alltoallv"], "engines": ["host"], "devices": [[0, 1]],
                                                    "iterations": 2, "alltoallv": {"splits": f"file:{trace}",
                                                                                   "tokens_per_rank": 4}}))


# ---- outputs ---------------------------------------------------------------------------------------------------
def outputs_never_inputs(exe, tmp):
    d = os.path.join(tmp, "io")
    os.mkdir(d)
    cfg = moe_config(d)
    ref = os.path.join(d, "ref.json")
    run(exe, "--backend", "host", "--config", cfg, "--out", ref, "-q", rc=0)
    inputs = {"config": (cfg, "the --config file itself"), "check": (ref, "reference file of --check itself"),
              "trace": (os.path.join(d, "trace.json"), "the alltoallv trace of alltoallv.splits itself")}
    tried = 0
    for kind, (path, says) in inputs.items():
        for link in ("as given", "symlink", "hard link"):
            target = path
            if link != "as given":
                target = os.path.join(d, f"{kind}-{link.replace(' ', '')}.json")
                if os.path.lexists(target):
                    os.unlink(target)
                (os.symlink if link == "symlink" else os.link)(path, target)
            for flags in (["--out", target], ["--out", os.path.join(d, "o.json"), "--junit", target],
                          ["--out", os.path.join(d, "o.json"), f"--benchmark_out={target}"],
                          ["--out", os.path.join(d, "o.json"), "--junit", target, "--processes", "2"]):
                before = {p: read(p) for p, _ in inputs.values()}
                p = run(exe, "--backend", "host", "--config", cfg, "--check", ref, *flags, rc=2)
                one_line(p, says, "which the run reads")
                expect(all(read(q) == b for q, b in before.items()), f"{kind} {link} {flags}: an input changed")
                expect(not os.path.exists(os.path.join(d, "o.json")), f"{flags}: --out written")
                tried += 1
    # the names the run writes beside --out: its journal, and --processes' process files
    moe_config(d, trace="t.journal", name="moe-j.json")
    p = run(exe, "--backend", "host", "--config", os.path.join(d, "moe-j.json"), "--out", os.path.join(d, "t"), rc=2)
    one_line(p, "t.journal is the alltoallv trace")
    os.makedirs(os.path.join(d, "lv.json.processes"))
    os.link(os.path.join(d, "trace.json"), os.path.join(d, "lv.json.processes", "process-7.json"))
    p = run(exe, "--backend", "host", "--config", cfg, "--out", os.path.join(d, "lv.json"), "--processes", "2", rc=2)
    one_line(p, "process-7.json is the alltoallv trace")
    print(f"outputs: {tried + 2} output x input x link cases refused")


def unwritable_directory(exe, tmp):
    """--junit ro/j.xml where j.xml is writable and ro/ is not: refused before any work (as root: run as nobody)."""
    d = os.path.join(tmp, "perm")
    os.mkdir(d)
    os.chmod(d, 0o777)
    cfg = moe_config(d)
    ro = os.path.join(d, "ro")
    os.mkdir(ro)
    junit = write(os.path.join(ro, "j.xml"), "kept")
    os.chmod(junit, 0o666)
    os.chmod(ro, 0o555)
    user = 65534 if os.geteuid() == 0 else None
    out = os.path.join(d, "r.json")
    for flag in ("--junit", "--benchmark_out"):
        args = [flag, junit] if flag == "--junit" else [f"{flag}={junit}"]
        p = run(exe, "--backend", "host", "--config", cfg, "--out", out, *args, rc=2, user=user)
        one_line(p, flag, "written through a temporary beside it", "does not let this user create one")
        expect(not os.path.exists(out) and read(junit) == b"kept", f"{flag}: something was written")
    os.chmod(ro, 0o755)
    print("outputs: a writable file in a directory that is not: refused before any work")


def huge_numbers(exe, tmp):
    big = "9" * 309
    cfg = {"patterns": ["copy"], "engines": ["host"], "devices": [[0, 1]], "iterations": 2}
    cases = [(["-b", big, "--patterns", "copy", "--engines", "host"], "-b"),
             (["-b", "4KiB", "-e", big + "KiB", "-f", "2", "--patterns", "copy", "--engines", "host"], "sizes.to"),
             (["--config", write(os.path.join(tmp, "s.json"), json.dumps({**cfg, "sizes": [big]}))], "sizes[0]"),
             (["--config", write(os.path.join(tmp, "t.json"), json.dumps(
                 {"patterns": ["alltoallv"], "engines": ["host"], "devices": [[0, 1]], "iterations": 2,
                  "alltoallv": {"token_bytes": big}}))], "alltoallv.token_bytes"),
             (["--config", write(os.path.join(tmp, "o.json"), json.dumps(
                 {**cfg, "sizes": ["4KiB"], "overlap": {"compute": "stream", "bytes": big}}))], "overlap.bytes"),
             (["-b", "4KiB", "--patterns", "copy", "--engines", "host", "--order-seed", big], "--order-seed"),
             (["-b", "4KiB", "--patterns", "copy", "--engines", "host", "--case-timeout", big], "--case-timeout"),
             (["-b", "4KiB", "--patterns", "copy", "--engines", "host", "--processes", big], "--processes"),
             (["-b", "4KiB", "--patterns", "copy", "--engines", "host", f"--benchmark_min_time={big}"], "min_time"),
             (["-b", "4KiB", "--patterns", "copy", "--engines", "host", f"--benchmark_repetitions={big}"], "repetitions"),
             (["-b", "4KiB", "--patterns", "copy", "--engines", "host", "--set", f"sizes={big}"], "sizes")]
    for args, field in cases:
        p = run(exe, "--backend", "host", *args, "--list", rc=2)
        one_line(p, "dmabench: error: ", field)
        expect("fatal" not in p.stderr, p.stderr)
    print(f"outputs: {len(cases)} numbers of 309+ digits refused naming their field")


# ---- signals ---------------------------------------------------------------------------------------------------
def stdin_waits(exe, tmp):
    out = os.path.join(tmp, "stdin.json")

    def interrupted(stdin, label, feed=None):
        p = subprocess.Popen([exe, "--backend", "host", "--config", "-", "--out", out], stdin=stdin,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for _ in range(4):
            time.sleep(0.4)
            if feed:
                feed()
        t0 = time.time()
        p.send_signal(signal.SIGINT)
        _, err = p.communicate(timeout=30)
        expect(p.returncode == 130, f"{label}: exit {p.returncode}: {err[-500:]}")
        expect(time.time() - t0 < 2, f"{label}: {time.time() - t0:.1f} s from SIGINT to exit")
        expect("interrupted while reading the config" in err and not os.path.exists(out), f"{label}: {err[-500:]}")

    a, b = socket.socketpair()
    interrupted(a, "a socket on stdin")
    a.close(), b.close()
    r, w = os.pipe()
    interrupted(r, "a silent pipe")
    os.close(r), os.close(w)
    r, w = os.pipe()
    interrupted(r, "a trickling pipe", lambda: os.write(w, b" "))
    os.close(r), os.close(w)
    print("signals: --config - on a socket, a silent and a trickling pipe: one SIGINT, exit 130 at once")


def slow_config(d):
    return write(os.path.join(d, "slow.json"), json.dumps(
        {"patterns": ["copy"], "engines": ["host"], "devices": [[0, 1]], "sizes": [f"{m}MiB" for m in range(8, 20)],
         "iterations": 150, "timing": ["oneshot"]}))


def junit_on_interrupt(exe, tmp):
    d = os.path.join(tmp, "ji")
    os.mkdir(d)
    cfg = slow_config(d)
    out, junit = os.path.join(d, "r.json"), os.path.join(d, "j.xml")
    for extra, how, code in (([], signal.SIGINT, 130), ([], signal.SIGTERM, 143), (["--processes", "3"], signal.SIGINT, 130),
                             (["--processes", "3"], signal.SIGTERM, 143), (["--processes", "3"], "kill -9", 137)):
        for f in (out, junit):
            if os.path.exists(f):
                os.unlink(f)
        p = subprocess.Popen([exe, "--backend", "host", "--config", cfg, "--out", out, "--junit", junit, *extra],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        time.sleep(1.2)
        if how == "kill -9":
            kids = subprocess.run(["pgrep", "-P", str(p.pid)], capture_output=True, text=True).stdout.split()
            expect(kids, "no child process to kill")
            os.kill(int(kids[0]), signal.SIGKILL)
        else:
            p.send_signal(how)
        _, err = p.communicate(timeout=60)
        label = f"{' '.join(extra) or 'one process'} {how}"
        expect(p.returncode == code, f"{label}: exit {p.returncode}, expected {code}: {err[-800:]}")
        expect(os.path.exists(junit), f"{label}: no JUnit file")
        xml = read(junit).decode()
        finished = json.load(open(out))["results"] if os.path.exists(out) else []
        names = {r["name"] for r in finished}
        expect(all(f'name="{n}"' in xml for n in names), f"{label}: a finished case is not in the JUnit file")
        if extra:
            expect("the run stopped" in xml and f"exit {code}" in xml, f"{label}: the stop is not marked: {xml[-600:]}")
        else:
            expect(xml.count("<testcase") == 12, f"{label}: {xml.count('<testcase')} tests, expected every case")
            expect(xml.count("not run: the run was interrupted") == 12 - len(names), f"{label}: {xml[-600:]}")
    print("signals: a stopped run (SIGINT, SIGTERM, one process or --processes, a child killed) writes its JUnit file")


def signal_while_starting(exe, tmp, tries=40):
    """SIGINT the moment --processes says it starts process 1 (between its fork and exec, now and then): the run
    always stops before process 1 runs its sweep to the end."""
    d = os.path.join(tmp, "spawn")
    os.mkdir(d)
    cfg = slow_config(d)
    rnd = random.Random(51)
    for k in range(tries):
        p = subprocess.Popen([exe, "--backend", "host", "--config", cfg, "--out", os.path.join(d, f"r{k}.json"),
                              "--processes", "2"], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        line = p.stdout.readline()
        expect(b"process 1 of 2" in line, f"{line!r}")
        time.sleep(rnd.random() * 0.004)
        t0 = time.time()
        p.send_signal(signal.SIGINT)
        p.communicate(timeout=60)
        first = os.path.join(d, f"r{k}.json.processes", "process-1.json")
        ran = len(json.load(open(first))["results"]) if os.path.exists(first) else 0
        # a lost signal lets process 1 run all 12 cases (8.4-13.8 s here); a signal the child holds through exec
        # stops it before its first case, after its start-up (up to 2.5 s on the 2-CPU CI machine: a time limit of
        # 1.5 s failed there once in 40 tries with no signal lost, so the test asks what ran, not how long it took)
        expect(p.returncode == 130 and ran == 0, f"try {k}: exit {p.returncode}, process 1 recorded {ran} cases "
               f"({time.time() - t0:.1f} s from SIGINT to exit): the signal was lost")
    print(f"signals: SIGINT while a process starts: stopped before any case of process 1 in {tries} of {tries} tries")


def signal_in_the_window(exe, tmp, tries=3):
    """The same window held open: DMABENCH_TEST_SPAWN_PAUSE_MS makes the child pause 300 ms between fork and exec,
    and SIGINT comes 100 ms into it, every time. The parent passes it on once; the child holds it blocked through
    exec until its own handlers are in place, so process 1 stops before its first case: exit 130 and no case of it
    recorded. Without the blocking (spawn() as before 836a3af) the child's inherited handler took the signal and exec
    forgot it: process 1 ran its whole sweep (measured on the 2-CPU CI machine: 12 of 12 cases recorded, exit after
    8.4-13.8 s, 3 of 3 tries; with the blocking 0 cases, exit after 1.7-2.5 s)."""
    d = os.path.join(tmp, "window")
    os.mkdir(d)
    cfg = slow_config(d)
    for k in range(tries):
        out = os.path.join(d, f"w{k}.json")
        p = subprocess.Popen([exe, "--backend", "host", "--config", cfg, "--out", out, "--processes", "2"],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             env=dict(os.environ, DMABENCH_TEST_SPAWN_PAUSE_MS="300"))
        line = p.stdout.readline()
        expect(b"process 1 of 2" in line, f"{line!r}")
        time.sleep(0.1)
        p.send_signal(signal.SIGINT)
        stdout, stderr = p.communicate(timeout=120)
        first = os.path.join(out + ".processes", "process-1.json")
        ran = len(json.load(open(first))["results"]) if os.path.exists(first) else 0
        expect(p.returncode == 130 and ran == 0, f"try {k}: exit {p.returncode}, process 1 recorded {ran} cases: the "
               f"signal was lost\n{stdout.decode()[-800:]}\n{stderr.decode()[-800:]}")
    print(f"signals: SIGINT inside a held-open fork-exec window: process 1 stopped before its first case {tries} of "
          f"{tries} times")


# ---- console ---------------------------------------------------------------------------------------------------
def console_escapes(exe, tmp):
    d = os.path.join(tmp, "console")
    os.mkdir(d)
    name = "t\nFAIL.json\x1b[31mred\x07.json\u009b2J"  # U+009B: CSI where a terminal reads C1 controls
    cfg = moe_config(d, trace=name)
    for extra in ([], ["-v"], ["--list"]):
        p = run(exe, "--backend", "host", "--config", cfg, "--out", os.path.join(d, "r.json"), *extra, rc=0)
        text = p.stdout + p.stderr
        expect("\x1b" not in text and "\x07" not in text and "\u009b" not in text,
               f"{extra}: a control character reached the console")
        expect(not any(line.startswith("FAIL.json") for line in text.splitlines()), f"{extra}: a forged line: {text}")
        expect("t\\nFAIL.json\\x1b[31mred\\x07.json\\x9b2J" in text, f"{extra}: the name is not shown escaped: {text}")
    print("console: a trace name's newline, ESC, BEL and C1 CSI shown escaped")


def main():
    exe, mode = sys.argv[1], sys.argv[2]
    with tempfile.TemporaryDirectory() as tmp:
        os.chmod(tmp, 0o755)
        if mode == "outputs":
            outputs_never_inputs(exe, tmp)
            unwritable_directory(exe, tmp)
            huge_numbers(exe, tmp)
        elif mode == "signals":
            stdin_waits(exe, tmp)
            junit_on_interrupt(exe, tmp)
            signal_while_starting(exe, tmp)
            signal_in_the_window(exe, tmp)
        elif mode == "console":
            console_escapes(exe, tmp)
        else:
            sys.exit(f"unknown mode {mode}")
    print(f"PASS issue51 {mode}")


if __name__ == "__main__":
    main()
