"""One version (issues 52 and 53): python/dmabench/VERSION is the only place it is written; CMake's project version
(so `dmabench --version`, every results file's context.dmabench.version and the .deb), the package's metadata
(setuptools' dynamic version), dmabench.__version__ and `dmabench-results --version` all read it, and the .deb's
version adds the git revision it was packed from."""
import os
import re
import subprocess
import sys

import pytest

import dmabench
from test_scripts import PACKAGE_ENV, ROOT

VERSION_FILE = os.path.join(ROOT, "python", "dmabench", "VERSION")


def version():
    with open(VERSION_FILE, encoding="utf-8") as f:
        text = f.read()
    assert re.fullmatch(r"\d+\.\d+\.\d+\n", text), text
    return text.strip()


def binary():
    """The dmabench program: DMABENCH_BINARY (ctest's `scripts` test sets it), else build/dmabench; None if neither."""
    path = os.environ.get("DMABENCH_BINARY") or os.path.join(ROOT, "build", "dmabench")
    return path if os.access(path, os.X_OK) else None


def test_the_version_is_written_once():
    v = version()
    cmake = open(os.path.join(ROOT, "CMakeLists.txt"), encoding="utf-8").read()
    assert re.search(r"^project\(dmabench VERSION \$\{DMABENCH_VERSION\}", cmake, re.M), "CMake reads VERSION"
    assert 'python/dmabench/VERSION" DMABENCH_VERSION' in cmake
    pyproject = open(os.path.join(ROOT, "python", "pyproject.toml"), encoding="utf-8").read()
    assert 'dynamic = ["version"]' in pyproject and 'version = {file = "dmabench/VERSION"}' in pyproject
    assert not re.search(r'^version\s*=\s*"', pyproject, re.M), "no literal version in pyproject.toml"
    assert dmabench.__version__ == v
    # no other file of the tree's build or package spells a version literally
    for rel in ("CMakeLists.txt", "cmake/install.cmake", "python/dmabench/__init__.py", "bench/version.hpp.in"):
        text = open(os.path.join(ROOT, rel), encoding="utf-8").read()
        assert not re.search(r"\b(0\.1\.0|1\.0)\b", text.replace("cmake_minimum_required", "")), rel


def test_dmabench_results_version():
    p = subprocess.run([sys.executable, "-m", "dmabench", "--version"], capture_output=True, text=True,
                       env=PACKAGE_ENV, timeout=60)
    assert p.returncode == 0 and p.stdout == f"dmabench-results {version()}\n" and not p.stderr, (p.stdout, p.stderr)


def test_the_program_says_the_same_version():
    exe = binary()
    if exe is None:
        pytest.skip("no dmabench program (ctest passes DMABENCH_BINARY; or build/dmabench)")
    p = subprocess.run([exe, "--version"], capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    assert re.match(rf"dmabench {re.escape(version())} \(git [^)]+\)\n", p.stdout), p.stdout


def test_the_deb_version_carries_the_revision(tmp_path):
    """The CPack project file the build made (cpack runs it) gives <version>+g<revision>, the revision found then."""
    exe = binary()
    config = exe and os.path.join(os.path.dirname(exe), "generated", "cpack_version.cmake")
    if not config or not os.path.exists(config):
        pytest.skip("no configured build beside the program")
    probe = tmp_path / "probe.cmake"
    probe.write_text(f'include("{config}")\nmessage("${{CPACK_PACKAGE_VERSION}}|${{CPACK_DEBIAN_PACKAGE_VERSION}}")\n')
    p = subprocess.run(["cmake", "-P", probe], capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    package, debian = p.stderr.strip().split("|")
    assert package == debian, p.stderr
    assert re.fullmatch(rf"{re.escape(version())}\+g[0-9a-f]{{12}}(\.dirty)?", package) or \
        package.startswith(version() + "+"), package
    assert "-" not in package, "a Debian upstream version with '-' needs a Debian revision"
    # the build's -DDMABENCH_GIT_REVISION wins over the tree's .git where given (cmake/revision.cmake): the GPU
    # machine gets a copy of the tree whose .git is stale and is told the revision
    cache = os.path.join(os.path.dirname(exe), "CMakeCache.txt")
    given = re.search(r"^DMABENCH_GIT_REVISION:\w+=(.*)$", open(cache).read(), re.M) if os.path.exists(cache) else None
    if given and given.group(1).strip() not in ("", "unknown"):
        if re.fullmatch(r"[0-9a-f]{12}(-dirty)?", given.group(1).strip()):  # a bare hash, as the scripts pass it
            assert package == f"{version()}+g{given.group(1).strip().replace('-dirty', '.dirty')}", package
        return
    described = subprocess.run(["git", "-C", ROOT, "describe", "--always", "--dirty", "--abbrev=12"],
                               capture_output=True, text=True)
    if described.returncode == 0 and re.fullmatch(r"[0-9a-f]{12}(-dirty)?", described.stdout.strip()):
        assert package == f"{version()}+g{described.stdout.strip().replace('-dirty', '.dirty')}", package
