#!/usr/bin/env python3
"""dmabench started by Slurm's srun, on a Slurm cluster of one node that this test runs itself (registered with ctest).

usage: cli_srun_test.py DMABENCH
  The cluster: munged, slurmctld and slurmd as root, with a private configuration, state, munge key and munge
  socket in a temporary directory and ports of their own on the loopback address, so nothing of a Slurm or
  munge already on the machine is used or touched; the daemons are stopped at the end.
  Then, on the host backend: `srun --mpi=pmix -n 2` and `-n 4` (oversubscribed: CI has 2 cores) write one
  results file with every task in `context.processes` (local ranks from SLURM_LOCALID), every case validated
  across the tasks; `srun --mpi=none -n 2` (no process-management interface for MPI) exits 2 on every task,
  naming `srun --mpi=pmix`, and writes no file; scripts/launch_compare.py runs with srun as its launcher.
Exit 77 (skip) without root, Slurm's daemons and client (slurmctld, slurmd, srun), munged, srun's pmix plugin
or MPI in the build, unless DMABENCH_REQUIRE_SLURM=1 (CI: then that is a failure).
"""
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

from driver_common import expect

SKIP = 77


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def skip(why):
    print(f"skipped: {why}")
    sys.exit(1 if os.environ.get("DMABENCH_REQUIRE_SLURM") == "1" else SKIP)


class Cluster:
    """One node on this machine; `env` is what srun and sinfo need to reach it."""

    def __init__(self, d):
        self.d, self.procs = d, []
        node = socket.gethostname().split(".")[0]
        key = os.path.join(d, "munge.key")
        with open(key, "wb") as f:
            f.write(os.urandom(1024))
        os.chmod(key, 0o600)
        sock = os.path.join(d, "munge.sock")
        for sub in ("state", "spool"):
            os.makedirs(os.path.join(d, sub))
        conf = os.path.join(d, "slurm.conf")
        with open(conf, "w") as f:
            f.write(f"""ClusterName=dmabench-test
SlurmctldHost={node}(127.0.0.1)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket={sock}
StateSaveLocation={d}/state
SlurmdSpoolDir={d}/spool
SlurmctldPidFile={d}/slurmctld.pid
SlurmdPidFile={d}/slurmd.pid
SlurmctldLogFile={d}/slurmctld.log
SlurmdLogFile={d}/slurmd.log
SlurmctldPort={free_port()}
SlurmdPort={free_port()}
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
ReturnToService=2
SlurmdParameters=config_overrides
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
NodeName={node} NodeAddr=127.0.0.1 CPUs=4 State=UNKNOWN
PartitionName=test Nodes=ALL Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE:4
""")
        self.env = {k: v for k, v in os.environ.items() if not k.startswith(("SLURM_", "PMIX_", "PMI_", "OMPI_"))}
        self.env["SLURM_CONF"] = conf
        self.start(["munged", "--foreground", "--force", f"--socket={sock}", f"--key-file={key}",
                    f"--pid-file={d}/munged.pid", f"--log-file={d}/munged.log", f"--seed-file={d}/munged.seed"])
        self.wait_for(lambda: os.path.exists(sock), "munged's socket")
        self.start(["slurmctld", "-D", "-i", "-f", conf])
        self.start(["slurmd", "-D", "-f", conf])
        self.wait_for(lambda: self.run(["sinfo", "-h", "-o", "%t"]).stdout.strip() == "idle", "the node to be idle")

    def start(self, cmd):
        log = open(os.path.join(self.d, os.path.basename(cmd[0]) + ".out"), "w")
        self.procs.append(subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=getattr(self, "env", None),
                                           start_new_session=True))

    def wait_for(self, ready, what, seconds=60):
        deadline = time.time() + seconds
        while time.time() < deadline:
            if ready():
                return
            dead = [p.args[0] for p in self.procs if p.poll() is not None]
            if dead:
                break
            time.sleep(0.25)
        logs = ""
        for name in ("munged.log", "slurmctld.log", "slurmd.log", "munged.out", "slurmctld.out", "slurmd.out"):
            path = os.path.join(self.d, name)
            if os.path.exists(path):
                with open(path, errors="replace") as f:
                    logs += f"--- {name}\n{f.read()[-1500:]}\n"
        sys.exit(f"FAIL: the test's Slurm cluster did not start (waiting for {what}; exited: {dead})\n{logs}")

    def run(self, cmd, timeout=180):
        return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=self.env, cwd=self.d)

    def steps(self):
        """This cluster's slurmstepd processes (by their SLURM_CONF): each job step's runs in a session of its own,
        so killing slurmd's process group misses one that outlives its job (a CI rehearsal left one running)."""
        found = []
        for pid in filter(str.isdigit, os.listdir("/proc")):
            try:
                with open(f"/proc/{pid}/cmdline", "rb") as f:
                    if not f.read().startswith(b"slurmstepd"):
                        continue
                with open(f"/proc/{pid}/environ", "rb") as f:
                    if f"SLURM_CONF={self.env['SLURM_CONF']}".encode() in f.read().split(b"\0"):
                        found.append(int(pid))
            except OSError:  # gone, or not ours to read
                continue
        return found

    def stop(self):
        for p in reversed(self.procs):
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGTERM)
        for p in reversed(self.procs):
            try:
                p.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait()
        for pid in self.steps():  # nothing of the test's cluster may outlive the test (issue 52)
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        deadline = time.time() + 10
        while self.steps() and time.time() < deadline:
            time.sleep(0.1)
        left = self.steps()
        if left:
            sys.exit(f"FAIL: slurmstepd {left} of the test's cluster still running after it stopped")


def sweeps(cluster, exe, d):
    cfg = os.path.join(d, "sweep.json")
    with open(cfg, "w") as f:
        json.dump({"patterns": ["copy", "allgather", "alltoall"], "engines": ["host"], "sizes": [1001, "1MiB"],
                   "timing": ["oneshot", "pipelined"], "warmup": 1, "iterations": 5}, f)
    for n in (2, 4):
        out = os.path.join(d, f"srun{n}.json")
        p = cluster.run(["srun", "--mpi=pmix", "-n", str(n), "--oversubscribe", exe, "--config", cfg, "--out", out,
                         "--backend", "host", "--benchmark_color=false"])
        expect(p.returncode == 0, f"srun -n {n}: exit {p.returncode}\n{p.stdout[-2000:]}\n{p.stderr[-3000:]}")
        with open(out) as f:
            doc = json.load(f)
        procs = doc["context"]["processes"]
        expect(procs["count"] == n and procs["launcher"].startswith("MPI: "), f"processes {procs}")
        ranks = procs["ranks"]
        expect([r["rank"] for r in ranks] == list(range(n)) and [r["local_rank"] for r in ranks] == list(range(n))
               and len({r["pid"] for r in ranks}) == n, f"ranks {ranks}")
        res = doc["results"]
        expect(len(res) == 12 and all(r["status"] == "ok" and r["validated"] for r in res),
               f"srun -n {n}: {[(r['name'], r['status'], r['reason']) for r in res]}")
        expect(all(r["ranks"] == (2 if r["pattern"] == "copy" else n) for r in res), "cases on every task")
        print(f"  srun --mpi=pmix -n {n}: {len(res)} cases ok and validated across {n} tasks, one file")


def launch_compare(cluster, exe, d):
    """scripts/launch_compare.py with srun as the launcher, as docs/multi-process.md shows it."""
    script = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "scripts", "launch_compare.py")
    out = os.path.join(d, "lc")
    p = cluster.run([sys.executable, script, "--out", out, "--config", os.path.join(d, "sweep.json"), "--dmabench", exe,
                     "--repeat", "1", "--launcher", "srun --mpi=pmix -n {np} --oversubscribe", "--", "--backend", "host"])
    expect(p.returncode == 0 and "12 cases in every file (1 one-process and 1 multi-process runs)" in p.stdout,
           f"launch_compare under srun: exit {p.returncode}\n{p.stdout[-2000:]}\n{p.stderr[-2000:]}")
    with open(os.path.join(out, "mpi-1.json")) as f:
        expect(json.load(f)["context"]["processes"]["count"] == 2, "the srun side ran 2 tasks")
    print("  launch_compare.py --launcher 'srun --mpi=pmix -n {np}': 12 cases, one process against 2 tasks")


def without_pmi(cluster, exe, d):
    cfg = os.path.join(d, "small.json")
    with open(cfg, "w") as f:
        json.dump({"patterns": ["copy"], "engines": ["host"], "sizes": [64]}, f)
    out = os.path.join(d, "none.json")
    p = cluster.run(["srun", "--mpi=none", "-n", "2", exe, "--config", cfg, "--out", out, "--backend", "host"])
    expect(p.returncode != 0 and p.stderr.count("dmabench: error: started by srun as one of 2 tasks") == 2
           and "srun --mpi=pmix" in p.stderr and not os.path.exists(out),
           f"srun --mpi=none: exit {p.returncode}\n{p.stdout[-2000:]}\n{p.stderr[-3000:]}")
    expect("exited with exit code 2" in p.stderr.lower(), f"every task exits 2:\n{p.stderr[-2000:]}")
    print("  srun --mpi=none -n 2: every task exits 2, naming srun --mpi=pmix; no file")


def main():
    exe = os.path.abspath(sys.argv[1])
    if os.geteuid() != 0:
        skip("not root (the test's Slurm daemons run as root)")
    missing = [c for c in ("munged", "slurmctld", "slurmd", "srun", "sinfo") if not shutil.which(c)]
    if missing:
        skip(f"no {', '.join(missing)} (Debian: munge slurmctld slurmd slurm-client)")
    features = subprocess.run([exe, "--features"], capture_output=True, text=True).stdout
    if "multi-process runs (mpirun, srun: one process per rank): yes" not in features:
        skip("this build has no MPI")
    d = tempfile.mkdtemp(prefix="dmabench-slurm-")
    os.chmod(d, 0o755)  # munged and slurmd check the directories they use
    cluster = None
    try:
        cluster = Cluster(d)
        plugins = cluster.run(["srun", "--mpi=list"])
        if "pmix" not in plugins.stdout + plugins.stderr:
            skip(f"srun has no pmix plugin:\n{plugins.stdout}{plugins.stderr}")
        sweeps(cluster, exe, d)
        launch_compare(cluster, exe, d)
        without_pmi(cluster, exe, d)
    finally:
        if cluster:
            cluster.stop()
        shutil.rmtree(d, ignore_errors=True)
    print("ok")


if __name__ == "__main__":
    main()
