"""What the ctest drivers of the program (tests/*_test.py) share: an expectation that ends the test with its message,
a command run with its exit status checked, a JSON file written. A driver imports it by name (python puts the
driver's own folder, tests/, first on the path)."""
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def expect(cond, msg):
    """Ends the test (exit status 1, "FAIL: msg" on stderr) unless `cond` holds."""
    if not cond:
        sys.exit("FAIL: " + msg)


def run(cmd, rc=None, env=None, timeout=300):
    """Runs `cmd` (a list) with `env` over this process's environment, output captured as text. Where `rc` is given,
    another exit status ends the test with the command and the tails of its stdout and stderr."""
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env={**os.environ, **(env or {})})
    expect(rc is None or p.returncode == rc,
           f"{' '.join(cmd)} exited {p.returncode}, expected {rc}\nstdout:\n{p.stdout[-3000:]}\nstderr:\n{p.stderr[-3000:]}")
    return p


def write_json(path, doc):
    """Writes `doc` as JSON to `path`; the path."""
    with open(path, "w") as f:
        json.dump(doc, f)
    return path
