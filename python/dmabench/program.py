"""The dmabench program, for the commands of this package that run it (dmabench.junit: the program writes JUnit XML)."""
import os
import shutil

from .text import ResultsError

# the checkout this package sits in (python/dmabench/ two levels down); an installed package's has no build/
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def find_program():
    """The dmabench program: $DMABENCH_BINARY where set, else `dmabench` on PATH, else the checkout's build/dmabench
    where it exists; ResultsError (one line) where there is none."""
    given = os.environ.get("DMABENCH_BINARY")
    if given:
        return given
    on_path = shutil.which("dmabench")
    if on_path:
        return on_path
    built = os.path.join(ROOT, "build", "dmabench")
    if os.path.exists(built):
        return built
    raise ResultsError("this command needs the dmabench program: set DMABENCH_BINARY or put dmabench on PATH")
