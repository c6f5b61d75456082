"""conftest.py's parts of the suite: together the whole suite, each test once, in order; bad specs refused."""
import os
import subprocess
import sys

import pytest

from conftest import part, shard_of

HERE = os.path.dirname(os.path.abspath(__file__))


@pytest.mark.parametrize("count", [0, 1, 2, 3, 7, 568])
@pytest.mark.parametrize("n", [1, 2, 3, 5])
def test_the_parts_are_the_whole_in_order(count, n):
    items = list(range(count))
    parts = [part(items, k, n) for k in range(1, n + 1)]
    assert sum(parts, []) == items
    assert max(map(len, parts)) - min(map(len, parts)) <= 1


@pytest.mark.parametrize("spec", ["0/3", "4/3", "1", "a/b", "1/0", "-1/2", "2/3/4"])
def test_a_bad_spec_is_refused(spec):
    with pytest.raises(pytest.UsageError, match="expected k/n"):
        shard_of(spec)


def test_three_parts_collect_the_suite_once():
    """pytest --collect-only in each part of three: the union is the whole collection, no test in two parts."""
    def collected(shard):
        env = dict(os.environ)
        env.pop("DMABENCH_PYTEST_SHARD", None)
        if shard:
            env["DMABENCH_PYTEST_SHARD"] = shard
        p = subprocess.run([sys.executable, "-m", "pytest", "-q", "--collect-only", "-p", "no:cacheprovider", HERE],
                           capture_output=True, text=True, env=env, timeout=300)
        assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-2000:]
        return [line for line in p.stdout.splitlines() if "::" in line]

    whole = collected(None)
    parts = [collected(f"{k}/3") for k in (1, 2, 3)]
    assert len(whole) > 100 and sum(parts, []) == whole
    bad = subprocess.run([sys.executable, "-m", "pytest", "-q", "--collect-only", "-p", "no:cacheprovider", HERE],
                         capture_output=True, text=True, env=dict(os.environ, DMABENCH_PYTEST_SHARD="4/3"), timeout=300)
    assert bad.returncode != 0 and "expected k/n" in bad.stderr + bad.stdout
