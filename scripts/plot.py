#!/usr/bin/env python3
"""`dmabench-results plot` under its script name (its options and exit codes: `plot.py --help`); the package is
python/dmabench (`pip install ./python`), this shim runs it from a clone too."""
import sys

import _dmabench_path  # noqa: F401 - this checkout's python/ where the package is not installed
from dmabench.cli import script

if __name__ == "__main__":
    sys.exit(script("plot.py"))
