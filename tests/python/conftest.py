"""The suite in parts (tests/CMakeLists.txt: ctest's scripts_1 ... scripts_N): DMABENCH_PYTEST_SHARD=k/N keeps the
k-th of N contiguous runs of the collected tests, so the parts together are the whole suite, each test once, in
collection order (a module's tests stay together but at a part's edge, so its module fixtures run at most twice).
Unset, the whole suite runs."""
import os

import pytest


def shard_of(spec):
    """(k, n) from "k/n", 1 <= k <= n; a UsageError naming what is accepted otherwise."""
    try:
        k, n = (int(v) for v in spec.split("/"))
    except ValueError:
        k = n = 0
    if not 1 <= k <= n:
        raise pytest.UsageError(f"DMABENCH_PYTEST_SHARD={spec!r}: expected k/n with 1 <= k <= n, e.g. 2/3")
    return k, n


def bounds(count, k, n):
    """[start, end) of the k-th of n contiguous runs of `count` items, the sizes differing by one at most."""
    q, r = divmod(count, n)
    start = (k - 1) * q + min(k - 1, r)
    return start, start + q + (1 if k <= r else 0)


def part(items, k, n):
    """The k-th of n contiguous runs of `items`."""
    start, end = bounds(len(items), k, n)
    return items[start:end]


def pytest_collection_modifyitems(config, items):
    spec = os.environ.get("DMABENCH_PYTEST_SHARD", "")
    if not spec:
        return
    start, end = bounds(len(items), *shard_of(spec))
    config.hook.pytest_deselected(items=items[:start] + items[end:])
    items[:] = items[start:end]


# The dmabench program the tests run (merging.py; merge_runs.py and ab through dmabench.program): DMABENCH_BINARY as
# ctest passes it, else this checkout's build/dmabench where that is built, so that no other dmabench on PATH is taken.
_BUILT = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "build", "dmabench")
if not os.environ.get("DMABENCH_BINARY") and os.access(_BUILT, os.X_OK):
    os.environ["DMABENCH_BINARY"] = _BUILT
