#!/usr/bin/env python3
"""The file contract of the dmabench program (docs/user-guide.md, "Exit codes", "Input limits" and "Files the run writes"), end to end on the host
backend: no file other than the run's own is ever written or removed, finished cases are never lost, and every
path the run reads or writes is checked before anything runs (bad input: exit 2, one line, nothing run, an
existing --out untouched).

usage: cli_files_test.py DMABENCH CONFIG_DIR MODE
  contract  one check per class of issue 26, items 1-7, 13, 14
  fuzz      links, directories and FIFOs planted at every path a run reads or writes, one at a time: no hang,
            exit 0 or 2 (one line), and nothing outside the run's own files changed
"""
import fcntl
import json
import os
import shutil
import signal
import stat
import sys
import tempfile
import time

TIMEOUT_S = 60


def fail(msg):
    sys.exit("FAIL: " + msg)


def expect(cond, msg):
    if not cond:
        fail(msg)


class Run:
    def __init__(self, rc, stdout, stderr, pid):
        self.rc, self.stdout, self.stderr, self.pid = rc, stdout, stderr, pid

    def __repr__(self):
        return f"exit {self.rc}\nstdout:\n{self.stdout[-2000:]}\nstderr:\n{self.stderr[-2000:]}"


def run(exe, args, tmp, plant=None, env=None, timeout=TIMEOUT_S):
    """Runs dmabench with `args` (str or bytes each). `plant(pid)`, when given, is called after the fork and
    before the exec, so that it can plant files at names that carry the run's process id. A run that does not
    end within `timeout` fails the test (a hang)."""
    out_path, err_path = os.path.join(tmp, ".stdout"), os.path.join(tmp, ".stderr")
    go_r, go_w = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: wait for the plants, then become dmabench
        try:
            os.close(go_w)
            os.read(go_r, 1)
            fd_out = os.open(out_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
            fd_err = os.open(err_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
            os.dup2(fd_out, 1)
            os.dup2(fd_err, 2)
            devnull = os.open(os.devnull, os.O_RDONLY)
            os.dup2(devnull, 0)
            argv = [exe] + list(args)
            if env is None:
                os.execv(exe, argv)
            else:
                os.execve(exe, argv, env)
        finally:
            os._exit(127)
    os.close(go_r)
    try:
        if plant:
            plant(pid)
    finally:
        os.write(go_w, b"x")
        os.close(go_w)
    deadline = time.time() + timeout
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        if time.time() > deadline:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            fail(f"dmabench {args!r} did not end within {timeout} s (a hang)")
        time.sleep(0.01)
    rc = os.waitstatus_to_exitcode(status)
    with open(out_path, errors="replace") as f:
        stdout = f.read()
    with open(err_path, errors="replace") as f:
        stderr = f.read()
    os.unlink(out_path)
    os.unlink(err_path)
    return Run(rc, stdout, stderr, pid)


def refused(r, *fragments):
    """Bad input: exit 2, one line naming what was wrong."""
    expect(r.rc == 2, f"expected exit 2: {r}")
    lines = r.stderr.strip().splitlines()
    expect(len(lines) == 1 and lines[0].startswith("dmabench: error: "), f"not one error line: {r}")
    for frag in fragments:
        expect(frag in lines[0], f"the error lacks {frag!r}: {lines[0]}")


def write(path, text):
    with open(path, "wb") as f:
        f.write(text if isinstance(text, bytes) else text.encode())


def read(path):
    with open(path, "rb") as f:
        return f.read()


def config(tmp, name="cfg.json", **change):
    """Two small host copies (2 cases)."""
    cfg = {"patterns": ["copy"], "engines": ["host"], "devices": [[0, 1]], "timing": "oneshot", "warmup": 0,
           "iterations": 3, "sizes": [4096, 8192]}
    cfg.update(change)
    path = os.path.join(tmp, name)
    write(path, json.dumps(cfg))
    return path


def sdma_config(tmp, map_path, name="sdma.json"):
    """One sdma case on the software SDMA engine with an engine map: it writes a packet dump."""
    cfg = {"patterns": ["copy"], "devices": [[0, 1]], "timing": "oneshot", "warmup": 0, "iterations": 2,
           "sizes": [4096], "engines": [{"name": "sdma", "options": {"engines": f"map:{map_path}"}}]}
    path = os.path.join(tmp, name)
    write(path, json.dumps(cfg))
    return path


def dump_name(pk, map_path):
    """The packet dump of sdma_config's case: DIR/<case name, characters other than [A-Za-z0-9-.=,] as '_'>.json."""
    name = f"copy/sdma,engines=map:{map_path}/oneshot/dev=0,1/4KiB"
    return os.path.join(pk, "".join(c if c.isalnum() or c in "-.=," else "_" for c in name) + ".json")


def results(path):
    with open(path) as f:
        return json.load(f)["results"]


def fresh(tmp, name):
    d = os.path.join(tmp, name)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    return d


# ---- 1: links at the run's own names --------------------------------------------------------------------------
def links_at_own_names(exe, tmp):
    d = fresh(tmp, "links")
    cfg = config(d)
    victim = os.path.join(d, "victim.txt")
    out = os.path.join(d, "out.json")

    def reset():
        write(victim, "precious\n")
        for f in os.listdir(d):
            if f.startswith("out.json"):
                os.unlink(os.path.join(d, f))

    # a link at <out>.journal: refused, its target untouched
    reset()
    os.symlink(victim, out + ".journal")
    r = run(exe, ["--backend", "host", "--config", cfg, "--out", out], d)
    refused(r, "out.json.journal")
    expect(read(victim) == b"precious\n", "a link at <out>.journal: its target was written")
    expect(not os.path.exists(out), "--out written though the run was refused")
    # a link at <out>.lock (to a new path, which open(O_CREAT) would create): refused, nothing created
    reset()
    os.symlink(os.path.join(d, "created-by-lock"), out + ".lock")
    r = run(exe, ["--backend", "host", "--config", cfg, "--out", out], d)
    refused(r, "out.json.lock")
    expect(not os.path.lexists(os.path.join(d, "created-by-lock")), "a link at <out>.lock: its target was created")
    # links at the temporary names a run used to write (<out>.tmp.<pid>, <out>.journal.tmp.<pid>): never followed
    reset()

    def plant(pid):
        for name in (f"out.json.tmp.{pid}", f"out.json.journal.tmp.{pid}"):
            os.symlink(victim, os.path.join(d, name))
    r = run(exe, ["--backend", "host", "--config", cfg, "--out", out], d, plant=plant)
    expect(r.rc == 0, f"links at the old temporary names: {r}")
    expect(read(victim) == b"precious\n", "a link at <out>.tmp.<pid>: its target was written")
    expect(os.path.isfile(out) and not os.path.islink(out) and len(results(out)) == 2, "--out is not the results")
    expect(os.path.islink(os.path.join(d, f"out.json.tmp.{r.pid}")), "the planted link was removed or replaced")
    # the packet dumps and the power trace go through the same writer
    reset()
    mp = os.path.join(d, "m.map")
    write(mp, "0,2,1\n1,2,0\n")
    scfg = sdma_config(d, mp)
    pk = os.path.join(d, "pk")
    os.makedirs(pk)
    dump = dump_name(pk, mp)
    r = run(exe, ["--backend", "host", "--config", scfg, "--out", out, "--packets", pk], d,
            plant=lambda pid: os.symlink(victim, f"{dump}.tmp.{pid}"))
    expect(r.rc == 0, f"a link at a packet dump's old temporary name: {r}")
    expect(read(victim) == b"precious\n", "a link at <dump>.tmp.<pid>: its target was written")
    expect(os.path.isfile(dump), f"no packet dump {dump}: {os.listdir(pk)}")
    print("1 links at the run's own names: never followed")


# ---- 2: --out naming another run's lock, journal or temporary file ---------------------------------------------
def out_names_of_another_run(exe, tmp):
    d = fresh(tmp, "names")
    cfg = config(d)
    job = os.path.join(d, "job.json")
    write(job + ".journal", '{"schema": "dmabench-journal/1"}\n{"name": "a finished case"}\n')
    with open(job + ".lock", "w") as lock:  # another run is writing job.json
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        for name in ("job.json.lock", "job.json.journal", "job.json.tmp.12345", "job.json.journal.tmp.a1B2c3"):
            before = {f: read(os.path.join(d, f)) for f in os.listdir(d)}
            r = run(exe, ["--backend", "host", "--config", cfg, "--out", os.path.join(d, name)], d)
            refused(r, "--out", name)
            expect({f: read(os.path.join(d, f)) for f in os.listdir(d)} == before, f"--out {name}: files changed")
        # a link whose target has such a name
        os.symlink(job + ".journal", os.path.join(d, "innocent.json"))
        r = run(exe, ["--backend", "host", "--config", cfg, "--out", os.path.join(d, "innocent.json")], d)
        refused(r, "--out", "job.json.journal")
        # the other outputs too
        for flag in ("--benchmark_out=", "--power-trace="):
            r = run(exe, ["--backend", "host", "--config", cfg, "--out", os.path.join(d, "fine.json"),
                          flag + job + ".lock"], d)
            refused(r, flag[:-1], ".lock")
    expect(read(job + ".journal").count(b"\n") == 2, "the other run's journal changed")
    print("2 --out and the other outputs never name a run's lock, journal or temporary file")


# ---- 3: a run that records no case ----------------------------------------------------------------------------
def no_case_recorded(exe, tmp):
    d = fresh(tmp, "nocase")
    cfg = config(d, sizes=[4096], engines=["host", "ce"])  # ce is skipped on the host backend: recorded at once
    out = os.path.join(d, "out.json")
    kept = b'{"schema": "dmabench/1", "context": {}, "results": [{"name": "kept"}]}'
    journal = b'{"schema": "dmabench-journal/1"}\n' + b"".join(b'{"name": "case %d"}\n' % i for i in range(40))

    def reset():
        write(out, kept)
        write(out + ".journal", journal)

    reset()
    r = run(exe, ["--backend", "host", "--config", cfg, "--out", out, "--benchmark_filter=nothing-matches-this"], d)
    refused(r, "--benchmark_filter", "nothing-matches-this", "no case")
    expect(read(out) == kept and read(out + ".journal") == journal, "a filter matching nothing replaced the files")
    reset()
    r = run(exe, ["--backend", "host", "--config", cfg, "--out", out, "--benchmark_list_tests=true"], d)
    expect(r.rc == 0, f"--benchmark_list_tests: {r}")
    expect(read(out) == kept and read(out + ".journal") == journal, "--benchmark_list_tests replaced the files")
    expect(not os.path.exists(out + ".lock"), "--benchmark_list_tests left the lock")
    print("3 no case recorded: --out and the journal untouched; a filter matching nothing is exit 2")


# ---- 4: --benchmark_out checked like --out ---------------------------------------------------------------------
def benchmark_out_checked(exe, tmp):
    d = fresh(tmp, "bout")
    cfg = config(d)
    cfg_text = read(cfg)
    out = os.path.join(d, "out.json")
    write(out, "kept")
    fifo = os.path.join(d, "fifo")
    os.mkfifo(fifo)
    for target, frag in ((cfg, "the --config file"), (fifo, "a FIFO"), (d, "a directory"),
                         (os.path.join(d, "no", "such", "dir.json"), "does not exist"), (out, "--out")):
        r = run(exe, ["--backend", "host", "--config", cfg, "--out", out, f"--benchmark_out={target}"], d)
        refused(r, "--benchmark_out", frag)
        expect(read(cfg) == cfg_text and read(out) == b"kept", f"--benchmark_out={target}: a file changed")
        expect(sorted(os.listdir(d)) == ["cfg.json", "fifo", "out.json"], f"left {sorted(os.listdir(d))}")
    for target, frag in ((cfg, "the --config file"), (fifo, "a FIFO"), (out, "--out")):  # --power-trace too
        r = run(exe, ["--backend", "host", "--config", cfg, "--out", out, "--power-trace", target], d)
        refused(r, "--power-trace", frag)
    bout = os.path.join(d, "gb.json")
    r = run(exe, ["--backend", "host", "--config", cfg, "--out", os.path.join(d, "r.json"), f"--benchmark_out={bout}"], d)
    expect(r.rc == 0 and len(json.load(open(bout))["benchmarks"]) == 2, f"a good --benchmark_out: {r}")
    expect(sorted(os.listdir(d)) == ["cfg.json", "fifo", "gb.json", "out.json", "r.json"], f"left {sorted(os.listdir(d))}")
    # dmabench writes --benchmark_out itself (issue 27): whole, once a case was reported to it; a run that reports
    # none (every case skipped before it runs) leaves it as it was (it was truncated at the start and left "]}")
    skipped = config(d, name="skipped.json", engines=["ce"])  # ce: not on the host backend
    write(bout, "kept")
    r = run(exe, ["--backend", "host", "--config", skipped, "--out", os.path.join(d, "r.json"), f"--benchmark_out={bout}",
                  "--allow-empty"], d)  # every case skipped: exit 6 without it
    expect(r.rc == 0 and read(bout) == b"kept", f"no case reported: --benchmark_out {read(bout)[:200]!r}: {r}")
    os.unlink(skipped)
    # --check's file is read, never written: the reference replaced by the run it judges
    ref = os.path.join(d, "r.json")
    ref_text = read(ref)
    for args in (["--out", ref], ["--out", os.path.join(d, "x.json"), f"--benchmark_out={ref}"]):
        r = run(exe, ["--backend", "host", "--config", cfg, "--check", ref, *args], d)
        refused(r, "reference file of --check itself")
        expect(read(ref) == ref_text and not os.path.exists(os.path.join(d, "x.json")), f"{args}: a file changed")
    print("4 --benchmark_out and --power-trace checked like --out")


# ---- 5: every written path checked before anything runs --------------------------------------------------------
def written_paths_checked_first(exe, tmp):
    d = fresh(tmp, "first")
    mp = os.path.join(d, "m.map")
    write(mp, "0,2,1\n1,2,0\n")
    cfg = sdma_config(d, mp)
    out = os.path.join(d, "out.json")
    write(out, "kept")

    def check(args, *frags):
        r = run(exe, ["--backend", "host", "--config", cfg, "--out", out, *args], d)
        refused(r, *frags)
        expect(read(out) == b"kept", f"{args}: --out replaced")
        expect(not os.path.exists(out + ".lock"), f"{args}: lock left")

    os.makedirs(out + ".journal")
    check([], "out.json.journal", "a directory")
    os.rmdir(out + ".journal")
    write(os.path.join(d, "afile"), "x")
    check(["--packets", os.path.join(d, "afile")], "--packets", "not a directory")
    os.mkfifo(os.path.join(d, "pfifo"))
    check(["--packets", os.path.join(d, "pfifo")], "--packets", "not a directory")
    check(["--packets", os.path.join(d, "a" * 300)], "--packets", "longer than")
    check(["--packets", os.path.join(d, "afile", "sub")], "--packets")
    if os.geteuid() != 0:  # root may write a read-only directory
        ro = os.path.join(d, "ro")
        os.makedirs(ro)
        os.chmod(ro, 0o555)
        check(["--packets", ro], "--packets", "not writable")
    # an --out that names no file (it wrote "DIR/.journal", then failed with exit 3 after the first case)
    r = run(exe, ["--backend", "host", "--config", cfg, "--out", os.path.join(d, "newdir") + "/"], d)
    refused(r, "--out", "no file name")
    expect(not os.path.exists(os.path.join(d, "newdir")), "a directory was made for an --out that names none")
    # an --out whose journal name would be too long for the file system
    long_out = os.path.join(d, "b" * 240 + ".json")
    r = run(exe, ["--backend", "host", "--config", cfg, "--out", long_out], d)
    refused(r, "--out", "longer than")
    expect([f for f in os.listdir(d) if f.startswith("bbbb")] == [], "files left for a long --out")
    print("5 every written path checked before anything runs")


# ---- 6: paths are bytes --------------------------------------------------------------------------------------------
def non_utf8_paths(exe, tmp):
    d = fresh(tmp, "bytes").encode()
    mp = os.path.join(d, b"m.map")
    write(mp, "0,2,1\n1,2,0\n")
    cfg = os.path.join(d, b"cfg-\xff\xfe.json")
    made = sdma_config(d.decode(), mp.decode())
    write(cfg, read(made))
    os.unlink(made)
    out = os.path.join(d, b"out-\xe9.json")
    pk = os.path.join(d, b"pk-\xc3")
    r = run(exe, [b"--backend", b"host", b"--config", cfg, b"--out", out, b"--packets", pk, b"--benchmark_filter=\xff|"],
            d.decode())
    expect(r.rc == 0, f"non-UTF-8 paths: {r}")
    doc = json.loads(read(out).decode("utf-8"))
    expect(len(doc["results"]) == 1 and doc["results"][0]["status"] == "ok", f"results {doc['results']}")
    expect(doc["context"]["config_file"].endswith("cfg-\\xff\\xfe.json"), doc["context"]["config_file"])
    expect(any(a.endswith("out-\\xe9.json") for a in doc["context"]["command_line"]), doc["context"]["command_line"])
    expect(len(os.listdir(pk)) == 1, "no packet dump in the non-UTF-8 --packets directory")
    expect(sorted(os.listdir(d)) == sorted([b"m.map", os.path.basename(cfg), os.path.basename(out), b"pk-\xc3"]),
           f"left {os.listdir(d)}")
    print("6 non-UTF-8 paths: recorded escaped, nothing lost")


# ---- 7: the lock ---------------------------------------------------------------------------------------------------
def lock_is_never_an_unlinked_file(exe, tmp):
    """The mutual exclusion itself is tested in the unit tests (OutLock under many threads); here: the lock of a
    run that ends is gone, and a lock file left by a killed run does not stop the next one."""
    d = fresh(tmp, "lock")
    cfg = config(d)
    out = os.path.join(d, "out.json")
    write(out + ".lock", "")  # left by a run killed with -9: nobody holds it
    r = run(exe, ["--backend", "host", "--config", cfg, "--out", out], d)
    expect(r.rc == 0 and not os.path.exists(out + ".lock"), f"a stale lock file: {r}")
    print("7 a stale lock file is taken over and removed")


# ---- 13, 14: files read: limits, types, FIFOs ----------------------------------------------------------------------
def files_read(exe, tmp):
    d = fresh(tmp, "read")
    out = os.path.join(d, "out.json")
    write(out, "kept")
    fifo = os.path.join(d, "fifo")
    os.mkfifo(fifo)
    r = run(exe, ["--backend", "host", "--config", fifo, "--out", out], d, timeout=20)  # nobody writes it
    refused(r, "--config", "a FIFO")
    r = run(exe, ["--backend", "host", "--config", "/dev/zero", "--out", out], d, timeout=20)
    refused(r, "--config", "not a regular file")
    for mp, frag in ((fifo, "a FIFO"), ("/dev/zero", "not a regular file"), (d, "a directory")):
        r = run(exe, ["--backend", "host", "--config", sdma_config(d, mp), "--out", out], d, timeout=20)
        refused(r, "engine map", frag)
    big = os.path.join(d, "big.map")
    with open(big, "w") as f:
        f.write("# padding\n" * 110000)
        f.write("0,2,1\n")
    r = run(exe, ["--backend", "host", "--config", sdma_config(d, big), "--out", out], d, timeout=20)
    refused(r, "engine map", "larger than")
    # a FIFO where the journal goes: refused before the first case (it used to hang on open)
    os.mkfifo(out + ".journal")
    r = run(exe, ["--backend", "host", "--config", config(d), "--out", out], d, timeout=20)
    refused(r, "out.json.journal", "a FIFO")
    expect(read(out) == b"kept", "--out replaced")
    print("13/14 files read: regular files within their limits; FIFOs refused, never waited on")


def contract(exe, configs, tmp):
    links_at_own_names(exe, tmp)
    out_names_of_another_run(exe, tmp)
    no_case_recorded(exe, tmp)
    benchmark_out_checked(exe, tmp)
    written_paths_checked_first(exe, tmp)
    non_utf8_paths(exe, tmp)
    lock_is_never_an_unlinked_file(exe, tmp)
    files_read(exe, tmp)


# ---- fuzz ----------------------------------------------------------------------------------------------------------
def snapshot(root):
    """Every entry under root: type, content or link target, mode (a FIFO is never opened)."""
    snap = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            p = os.path.join(dirpath, name)
            st = os.lstat(p)
            if stat.S_ISLNK(st.st_mode):
                snap[p] = ("link", os.readlink(p))
            elif stat.S_ISREG(st.st_mode):
                snap[p] = ("file", read(p), stat.S_IMODE(st.st_mode))
            elif stat.S_ISDIR(st.st_mode):
                snap[p] = ("dir", stat.S_IMODE(st.st_mode))
            else:
                snap[p] = ("other", stat.S_IFMT(st.st_mode))
    return snap


def plant(kind, path, sentinel, i):
    """Plants `kind` at path; links point into `sentinel` (outside the run's files)."""
    if kind == "link-to-file":
        target = os.path.join(sentinel, f"file-{i}")
        write(target, f"sentinel {i}\n")
        os.symlink(target, path)
    elif kind == "link-to-nothing":
        os.symlink(os.path.join(sentinel, f"new-{i}"), path)
    elif kind == "link-to-dir":
        target = os.path.join(sentinel, f"dir-{i}")
        os.makedirs(target)
        os.symlink(target, path)
    elif kind == "dir":
        os.makedirs(path)
        write(os.path.join(path, "inside"), "kept\n")
    elif kind == "fifo":
        os.mkfifo(path)


FUZZ_PATHS = ["config", "map", "out", "out.journal", "out.lock", "out.tmp.{pid}", "out.journal.tmp.{pid}", "packets",
              "packets/dump", "packets/dump.tmp.{pid}", "trace", "gbout"]
FUZZ_KINDS = ["link-to-file", "link-to-nothing", "link-to-dir", "dir", "fifo"]


def fuzz_one(exe, tmp, where, kind, i):
    """One run of an sdma case (it reads a config and an engine map; writes --out, its journal, lock and temporary
    files, a packet dump, and checks --power-trace and --benchmark_out) with `kind` planted at `where`."""
    root = fresh(tmp, "fuzz")
    run_dir, sentinel = os.path.join(root, "run"), os.path.join(root, "sentinel")
    os.makedirs(run_dir)
    os.makedirs(sentinel)
    write(os.path.join(sentinel, "untouched"), "sentinel\n")
    mp, cfg, out = (os.path.join(run_dir, f) for f in ("m.map", "cfg.json", "out.json"))
    pk, trace, gbout = (os.path.join(run_dir, f) for f in ("pk", "trace.json", "gb.json"))
    dump = dump_name(pk, mp)
    paths = {"config": cfg, "map": mp, "out": out, "out.journal": out + ".journal", "out.lock": out + ".lock",
             "out.tmp.{pid}": out + ".tmp.{pid}", "out.journal.tmp.{pid}": out + ".journal.tmp.{pid}", "packets": pk,
             "packets/dump": dump, "packets/dump.tmp.{pid}": dump + ".tmp.{pid}", "trace": trace, "gbout": gbout}
    if where != "map":  # the files the run reads are there unless planted over
        write(mp, "0,2,1\n1,2,0\n")
    if where != "config":
        made = sdma_config(sentinel, mp, name="made.json")
        write(cfg, read(made))
        os.unlink(made)
    if where.startswith("packets/"):
        os.makedirs(pk)
    before = {}

    def do_plant(pid):
        plant(kind, paths[where].format(pid=pid), sentinel, i)
        before.update(snapshot(sentinel))
    label = f"{kind} at {where}"
    r = run(exe, ["--backend", "host", "--config", cfg, "--out", out, "--packets", pk, "--power-trace", trace,
                  f"--benchmark_out={gbout}"], root, plant=do_plant, timeout=30)
    expect(r.rc in (0, 2), f"{label}: {r}")
    if r.rc == 2:
        refused(r)
        expect(not os.path.lexists(out) or where == "out", f"{label}: refused, yet --out was written")
    else:
        res = results(out)
        expect(len(res) == 1 and res[0]["status"] == "ok", f"{label}: results {res}")
    # a link at --out, --power-trace or --benchmark_out is followed on purpose (the console says so): its target is
    # the run's own file; so is the dump in a --packets link to a directory; nothing else outside the run may change
    own = set()
    if r.rc == 0 and where in ("out", "trace", "gbout"):
        own = {os.path.join(sentinel, f"file-{i}"), os.path.join(sentinel, f"new-{i}")}
    if r.rc == 0 and where == "packets" and kind == "link-to-dir":
        own = {dump_name(os.path.join(sentinel, f"dir-{i}"), mp)}
    after = snapshot(sentinel)
    for p in sorted((set(before) | set(after)) - own):
        expect(before.get(p) == after.get(p), f"{label}: {p} changed: {before.get(p)!r:.200} -> {after.get(p)!r:.200}")
    # the planted thing is still there as planted: a link is never replaced or removed, a directory keeps its
    # content, a FIFO stays
    p = paths[where].format(pid=r.pid)
    want = {"link-to-file": stat.S_ISLNK, "link-to-nothing": stat.S_ISLNK, "link-to-dir": stat.S_ISLNK,
            "dir": stat.S_ISDIR, "fifo": stat.S_ISFIFO}[kind]
    expect(os.path.lexists(p) and want(os.lstat(p).st_mode), f"{label}: the planted {kind} was replaced or removed")
    if kind == "dir" and where != "packets":
        expect(os.listdir(p) == ["inside"], f"{label}: the directory's content changed: {os.listdir(p)}")
    left = [f for f in os.listdir(run_dir) if f.startswith("out.json.") and f != os.path.basename(p)]
    expect(not left, f"{label}: left {left}")  # no temporary, journal or lock file


def fuzz(exe, configs, tmp):
    started, failures = time.time(), []
    for where in FUZZ_PATHS:
        for i, kind in enumerate(FUZZ_KINDS):
            try:
                fuzz_one(exe, tmp, where, kind, i)
            except SystemExit as e:  # every failure is reported, not only the first
                failures.append(str(e))
    runs = len(FUZZ_PATHS) * len(FUZZ_KINDS)
    print(f"fuzz: {len(FUZZ_KINDS)} kinds planted at {len(FUZZ_PATHS)} paths, {runs} runs, {time.time() - started:.1f} s")
    expect(not failures, f"{len(failures)} of {runs} runs:\n" + "\n".join(f[:1500] for f in failures))


def main():
    exe, configs, mode = sys.argv[1], sys.argv[2], sys.argv[3]
    with tempfile.TemporaryDirectory() as tmp:
        {"contract": contract, "fuzz": fuzz}[mode](os.path.abspath(exe), configs, tmp)
    print(f"PASS {mode}")


if __name__ == "__main__":
    main()
