#!/usr/bin/env python3
"""The revision stamp and the install (issue 41), on a clone of the source tree.

usage: install_revision_test.py SOURCE_DIR CMAKE CPACK GENERATOR

The source tree is cloned into a temporary directory (this test commits, and never into the user's tree; the
clone holds the committed files only: it checks the mechanism at HEAD). In the clone: a small host-only build of
the dmabench target (-O0, no tests, no MPI), then
  - `dmabench --version` names `git describe --always --abbrev=12` of the clone;
  - a second build of the unchanged tree (an untracked file beside it) compiles and links nothing;
  - a commit: the rebuild compiles the revision file alone and --version names the new commit;
  - a tracked file changed, not committed: the same, and --version says <commit>-dirty;
  - `cmake --install` into a prefix: the installed bin/dmabench --version names that exact revision,
    --presets lists the presets from <prefix>/share/dmabench/configs, `dmabench quick --list` expands;
  - where cpack and dpkg-deb are: `cpack -G DEB` makes dmabench_<version>_*.deb holding ./usr/bin/dmabench
    and the configs, and the packaged program names the same revision.
Exit 0 pass, 1 fail, 77 skipped (not a git checkout, or no git).
"""
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time

SKIP = 77
START = time.monotonic()


def say(msg):
    print(f"[{time.monotonic() - START:6.1f}s] {msg}", flush=True)


def fail(msg):
    print(f"FAIL: {msg}", flush=True)
    sys.exit(1)


def run(cmd, cwd=None, check=True, env=None):
    p = subprocess.run(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
    if check and p.returncode != 0:
        fail(f"{' '.join(map(str, cmd))} exited {p.returncode}:\n{p.stdout[-4000:]}")
    return p.stdout


def git(clone, *args):
    return run(["git", "-C", clone, *args]).strip()


def build(cmake, build_dir):
    """Builds the dmabench target; returns the objects compiled and the binaries linked. Where the build compiles
    through ccache (CMakeLists.txt: DMABENCH_CCACHE), the clone's directory, new at every run, is made relative
    (CCACHE_BASEDIR) and left out of the hash (CCACHE_NOHASHDIR), so that the next run compiles from the cache:
    the clone's -O0 build was 331 s of a 2-CPU CI machine's ctest at every run."""
    work = os.path.dirname(os.path.abspath(build_dir))
    env = dict(os.environ, CCACHE_BASEDIR=work, CCACHE_NOHASHDIR="true")
    out = run([cmake, "--build", build_dir, "--target", "dmabench", "--parallel", str(os.cpu_count() or 2)], env=env)
    compiled = re.findall(r"Building CXX object (\S+)", out)
    linked = re.findall(r"Linking CXX (?:executable|static library) (\S+)", out)
    return compiled, linked


def version_of(binary):
    out = run([binary, "--version"])
    m = re.search(r"\(git (\S+)\)", out)
    if not m:
        fail(f"{binary} --version names no revision: {out!r}")
    return m.group(1)


def expect_revision(binary, want, when):
    got = version_of(binary)
    if got != want:
        fail(f"{when}: {binary} --version says git {got}, expected {want}")
    say(f"{when}: --version names {got}")


def expect_only_revision_rebuilt(compiled, linked, when):
    if len(compiled) != 1 or not compiled[0].endswith("revision.cpp.o"):
        fail(f"{when}: the rebuild compiled {compiled}, expected the revision file alone")
    if not any(l.endswith("dmabench") for l in linked):
        fail(f"{when}: the rebuild did not relink dmabench (linked {linked})")
    say(f"{when}: compiled {compiled[0]} alone, linked {', '.join(linked)}")


def check_installed(cmake, build_dir, prefix, want):
    run([cmake, "--install", build_dir, "--prefix", prefix])
    binary = os.path.join(prefix, "bin", "dmabench")
    expect_revision(binary, want, "installed")
    configs = os.path.join(prefix, "share", "dmabench", "configs")
    out = run([binary, "--presets"])
    if f"presets ({configs})" not in out or not re.search(r"^\s*quick\b", out, re.M):
        fail(f"installed --presets does not list the presets of {configs}:\n{out}")
    run([binary, "quick", "--list"])
    for doc in ("README.md", "LICENSE", "docs/user-guide.md"):
        if not os.path.isfile(os.path.join(prefix, "share", "doc", "dmabench", doc)):
            fail(f"not installed: share/doc/dmabench/{doc}")
    say(f"installed into {prefix}: --presets lists {configs}, `dmabench quick --list` expands, docs there")
    check_first_steps(binary, prefix)


def check_first_steps(binary, prefix):
    """Issue 52: the installed program's no-argument screen names what is installed, and its steps run: the first
    sweep's config in <prefix>/share/dmabench/configs, the summary by <prefix>/bin/dmabench-results, the docs in
    <prefix>/share/doc/dmabench (it named configs/quick.json, scripts/summarize.py and the source tree before)."""
    with tempfile.TemporaryDirectory() as away:  # not the source tree: nothing there to find by a relative path
        lines = run([binary], cwd=away).splitlines()
        sweep = next((i for i, l in enumerate(lines) if l.startswith("a first sweep")), None)
        then = next((l for l in lines if l.startswith("then: ")), "")
        docs = next((l for l in lines if l.startswith("docs: ")), "")
        if sweep is None or not then or not docs:
            fail("installed, no arguments: no first sweep, then or docs line:\n" + "\n".join(lines))
        argv = shlex.split(lines[sweep + 1])
        quick = os.path.join(prefix, "share", "dmabench", "configs", "quick.json")
        if argv[:2] != [binary, "--config"] or not os.path.samefile(argv[2], quick):
            fail(f"installed: the first sweep {argv} does not name {quick}")
        run(argv + ["--backend", "host", "--benchmark_filter=copy/host/oneshot/.*/4KiB", "-q"], cwd=away)
        summary = shlex.split(then[len("then: "):].split("   (")[0])
        if not os.path.samefile(summary[0], os.path.join(prefix, "bin", "dmabench-results")):
            fail(f"installed: the summary step {summary} is not {prefix}/bin/dmabench-results")
        if "| copy" not in run(summary, cwd=away):
            fail(f"installed: {summary} printed no table of the first sweep")
        named = docs[len("docs: "):].split(", ")
        docs_dir = os.path.realpath(os.path.join(prefix, "share", "doc", "dmabench"))
        if not all(os.path.isfile(d) and os.path.realpath(d).startswith(docs_dir + os.sep) for d in named):
            fail(f"installed: the docs line names {named}, not the installed docs")
    say("installed, no arguments: the first sweep, its summary and the docs are the installed ones, and run")


def check_deb(cpack, build_dir, work, want):
    if not shutil.which(cpack) or not shutil.which("dpkg-deb"):
        say("no cpack or dpkg-deb: the .deb is not checked")
        return
    run([cpack, "-G", "DEB", "-B", os.path.join(work, "deb")], cwd=build_dir)
    debs = [f for f in os.listdir(os.path.join(work, "deb")) if f.endswith(".deb")]
    if len(debs) != 1 or not debs[0].startswith("dmabench_"):
        fail(f"cpack -G DEB made {debs}, expected one dmabench_<version>_<arch>.deb")
    deb = os.path.join(work, "deb", debs[0])
    listing = run(["dpkg-deb", "-c", deb])
    for path in ("./usr/bin/dmabench", "./usr/share/dmabench/configs/quick.json", "./usr/share/doc/dmabench/README.md"):
        if not re.search(rf"\s{re.escape(path)}$", listing, re.M):
            fail(f"{debs[0]} does not hold {path}:\n{listing}")
    if run(["dpkg-deb", "-f", deb, "Package"]).strip() != "dmabench":
        fail(f"{debs[0]}: Package is not dmabench")
    root = os.path.join(work, "deb-root")
    run(["dpkg-deb", "-x", deb, root])
    expect_revision(os.path.join(root, "usr", "bin", "dmabench"), want, f"packaged ({debs[0]})")
    check_deb_libraries(deb, os.path.join(root, "usr", "bin", "dmabench"), build_dir)


def deb_libraries(binary):
    """The shared libraries `ldd` resolves for the binary: {soname: path}; fails on any it does not find."""
    out = run(["ldd", binary])
    missing = [l.strip() for l in out.splitlines() if "not found" in l]
    if missing:
        fail(f"ldd {binary}: not found: {missing}")
    return {m.group(1): m.group(2) for m in re.finditer(r"^\s*(\S+) => (/\S+) \(0x", out, re.M)}


def check_deb_libraries(deb, binary, build_dir):
    """Issue 52: the .deb unpacked into a clean root (dpkg -x) starts: ldd resolves every library, the Debian package
    of each library the binary needs itself (NEEDED; the rest come with those packages) is named in Depends
    (dpkg-shlibdeps' names: libfmt9, libstdc++6, ...) or, for one that no package owns (a CUDA toolkit from NVIDIA's
    runfile), its directory in the binary's RUNPATH; and the RUNPATH names no directory of the build tree."""
    libraries = deb_libraries(binary)
    dynamic = run(["readelf", "-d", binary]) if shutil.which("readelf") else ""
    needed = set(re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", dynamic))
    if needed:
        libraries = {k: v for k, v in libraries.items() if k in needed}
    runpath = re.findall(r"\((?:RUNPATH|RPATH)\)\s+Library (?:runpath|rpath): \[([^\]]*)\]", dynamic)
    runpath = [os.path.realpath(d) for r in runpath for d in r.split(":") if d]
    leaked = [d for d in runpath if d.startswith(os.path.realpath(build_dir))]
    if leaked:
        fail(f"the packaged binary's RUNPATH names the build tree: {leaked}")
    if not shutil.which("dpkg-shlibdeps") or not shutil.which("dpkg-query"):
        say(f"packaged binary: ldd resolves its {len(libraries)} libraries; no dpkg-shlibdeps: Depends not checked")
        return
    depends = run(["dpkg-deb", "-f", deb, "Depends"])
    named = {alt.strip().split(" ")[0].split(":")[0] for part in depends.split(",") for alt in part.split("|") if alt.strip()}
    unnamed = []
    for soname, path in sorted(libraries.items()):
        owner = subprocess.run(["dpkg-query", "-S", os.path.realpath(path)], stdout=subprocess.PIPE,
                               stderr=subprocess.DEVNULL, text=True)
        for alias in (path, re.sub(r"^/usr/lib/", "/lib/", os.path.realpath(path)),
                      re.sub(r"^/lib/", "/usr/lib/", os.path.realpath(path))):  # merged /usr: dpkg knows one of them
            if owner.returncode == 0:
                break
            owner = subprocess.run(["dpkg-query", "-S", alias], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                   text=True)
        package = owner.stdout.split(":")[0].strip() if owner.returncode == 0 else ""
        if package and package not in named:
            unnamed.append(f"{soname} ({package})")
        elif not package and os.path.dirname(os.path.realpath(path)) not in runpath:
            unnamed.append(f"{soname} (no package owns {path} and the RUNPATH {runpath} does not name its directory)")
    if unnamed:
        fail(f"{os.path.basename(deb)}: Depends ({depends.strip()!r}) names no package for {', '.join(unnamed)}")
    say(f"packaged binary: ldd resolves its {len(libraries)} libraries, each one's package in Depends: {depends.strip()}")


def main():
    if len(sys.argv) != 5:
        print(__doc__, file=sys.stderr)
        return 2
    source, cmake, cpack, generator = sys.argv[1:]
    if not shutil.which("git"):
        print("SKIP: no git on PATH")
        return SKIP
    top = subprocess.run(["git", "-C", source, "rev-parse", "--show-toplevel"], stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL, text=True)
    if top.returncode != 0 or os.path.realpath(top.stdout.strip()) != os.path.realpath(source):
        print(f"SKIP: {source} is not a git checkout (a copy without .git: its builds are stamped with "
              "-DDMABENCH_GIT_REVISION)")
        return SKIP
    work = tempfile.mkdtemp(prefix="dmabench-install-")
    try:
        clone, build_dir = os.path.join(work, "src"), os.path.join(work, "build")
        run(["git", "clone", "-q", source, clone])
        git(clone, "config", "user.name", "dmabench test")
        git(clone, "config", "user.email", "test@dmabench.invalid")
        git(clone, "config", "commit.gpgsign", "false")
        say(f"cloned {source} at {git(clone, 'rev-parse', '--short=12', 'HEAD')} (its committed files)")
        run([cmake, "-S", clone, "-B", build_dir, "-G", generator, "-DDMABENCH_CUDA=OFF", "-DDMABENCH_HIP=OFF",
             "-DDMABENCH_TESTS=OFF", "-DDMABENCH_MPI=OFF", "-DCMAKE_BUILD_TYPE=Debug", "-DCMAKE_CXX_FLAGS_DEBUG=-O0"])
        binary = os.path.join(build_dir, "dmabench")
        compiled, _ = build(cmake, build_dir)
        say(f"built dmabench ({len(compiled)} objects, -O0, {generator})")
        expect_revision(binary, git(clone, "describe", "--always", "--abbrev=12"), "first build")

        with open(os.path.join(clone, "untracked.txt"), "w") as f:  # untracked: not dirty (git describe --dirty)
            f.write("not part of the tree\n")
        compiled, linked = build(cmake, build_dir)
        if compiled or linked:
            fail(f"unchanged tree: the rebuild compiled {compiled} and linked {linked}, expected nothing")
        say("unchanged tree (an untracked file beside it): the rebuild compiled and linked nothing")

        with open(os.path.join(clone, "README.md"), "a") as f:
            f.write("\nA line committed by tests/install_revision_test.py.\n")
        git(clone, "commit", "-q", "-am", "install_revision test: a commit")
        committed = git(clone, "describe", "--always", "--abbrev=12")
        expect_only_revision_rebuilt(*build(cmake, build_dir), "after a commit")
        expect_revision(binary, committed, "after a commit")

        with open(os.path.join(clone, "README.md"), "a") as f:
            f.write("\nA line not committed.\n")
        dirty = committed + "-dirty"
        expect_only_revision_rebuilt(*build(cmake, build_dir), "dirty tree")
        expect_revision(binary, dirty, "dirty tree")

        check_installed(cmake, build_dir, os.path.join(work, "prefix"), dirty)
        check_deb(cpack, build_dir, work, dirty)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    say("PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
