"""The levels files the tests need, made the one way levels files are made: by the dmabench program (`dmabench
--merge`, bench/levels/merge_files.hpp), as merge_runs.py and ab make them. The program is DMABENCH_BINARY (ctest's
scripts_* entries pass it; conftest.py sets it to build/dmabench where that is built and it is unset); a test that
needs it fails without one, never skips: the merge has no other implementation to test instead."""
import json
import os
import subprocess
import tempfile

import pytest


def program():
    """The dmabench program's path; the test fails, naming what is missing, where there is none."""
    path = os.environ.get("DMABENCH_BINARY", "")
    if not (path and os.path.isfile(path) and os.access(path, os.X_OK)):
        pytest.fail(f"no dmabench program (DMABENCH_BINARY={path!r}): the levels merge is the program's; build it "
                    "(cmake --build build) or set DMABENCH_BINARY", pytrace=False)
    return path


def merged(docs, names=None, merged_by="merge_runs.py"):
    """The levels document of the results documents `docs` (in process order) merged by the program, each written as
    names[k] (default process-K.json) in a temporary folder the program runs in: per_process[k].file is names[k]."""
    names = names or [f"process-{k + 1}.json" for k in range(len(docs))]
    with tempfile.TemporaryDirectory(prefix="dmabench-levels-") as tmp:
        for doc, name in zip(docs, names):
            with open(os.path.join(tmp, name), "w", encoding="utf-8") as f:
                json.dump(doc, f)
        p = subprocess.run([program(), "--merge", *names, "--out", "levels.json", "--merged-by", merged_by], cwd=tmp,
                           capture_output=True, text=True, timeout=120)
        assert p.returncode == 0, p.stderr
        with open(os.path.join(tmp, "levels.json"), encoding="utf-8") as f:
            return json.load(f)
