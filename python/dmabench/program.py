"""The dmabench program, for the commands that have it do what only it does (docs/design.md, "One owner for each fact
written in two languages"): the levels merge (`dmabench --merge`, bench/levels/merge_files.hpp), which merge_runs.py
and ab run and whose file they read, and JUnit XML (`dmabench --junit-from`, dmabench.junit). Standard library only."""
import os
import shutil
import subprocess

from .files import checkout_root
from .text import ResultsError

NEEDED = "needs the dmabench program: set DMABENCH_BINARY or put dmabench on PATH"


def find_program(given=None):
    """The dmabench program's path: `given` (a command's --program), else $DMABENCH_BINARY, else `dmabench` on PATH,
    else <checkout>/build/dmabench where this package runs from a checkout (files.checkout_root). ResultsError (one
    line) when none is there or the one named is not an executable file."""
    for path, what in ((given, "--program"), (os.environ.get("DMABENCH_BINARY"), "DMABENCH_BINARY")):
        if path:
            if not (os.path.isfile(path) and os.access(path, os.X_OK)):
                raise ResultsError(f"{what} {path}: not an executable file; {NEEDED}")
            return path
    found = shutil.which("dmabench")
    built = os.path.join(checkout_root(), "build", "dmabench")
    if not found and os.path.isfile(built) and os.access(built, os.X_OK):
        found = built
    if not found:
        raise ResultsError(f"this command {NEEDED} (or build it: cmake --build build)")
    return found


def merge_files(paths, out, merged_by, program=None):
    """`dmabench --merge PATHS --out OUT --merged-by MERGED_BY` with `program` (find_program's when None): the levels
    file of the results files `paths` written at `out`. The program's refusals (exit 2) are a ResultsError with its
    one line (less its `dmabench: error: `); another failure (exit 3, a signal) a RuntimeError, an internal error."""
    exe = find_program(program)
    cmd = [exe, "--merge", *map(os.fspath, paths), "--out", os.fspath(out), "--merged-by", merged_by]
    try:
        p = subprocess.run(cmd, stdin=subprocess.DEVNULL, capture_output=True, check=False)
    except OSError as e:
        raise ResultsError(f"{exe}: {e.strerror}") from None
    lines = p.stderr.decode(errors="backslashreplace").strip().splitlines() or ["(nothing on stderr)"]
    if p.returncode == 0:
        return
    last = lines[-1].removeprefix("dmabench: error: ")
    if p.returncode == 2:
        raise ResultsError(last)
    if p.returncode in (130, -2):
        raise KeyboardInterrupt
    raise RuntimeError(f"{exe} --merge exited {p.returncode}: {last[:200]}")
