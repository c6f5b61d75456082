"""The shape docs/design.md's layout section promises, checked so that it stays true.

- No function defined in the tree's C++ sources (every directory of SOURCE_DIRS; .cpp, .cu, .hpp) is
  longer than MAX_FUNCTION_LINES lines (the program stays made of small units; a longer one is a sign that a
  unit is missing).
- No class or struct body is longer than MAX_CLASS_LINES lines (a longer one holds more than one job; its
  member functions can be defined after it, or parts of it become classes of their own).
- The same two rules over the Python of PYTHON_DIRS (the dmabench package and the scripts/ shims): no function
  (a method or a nested function too) longer than MAX_FUNCTION_LINES lines and no class longer than
  MAX_CLASS_LINES lines, from its `def` / `class` line to its last line.
- No code file (SOURCE_DIRS' .cpp, .cu and .hpp but tools/, PYTHON_DIRS' .py) is longer than MAX_FILE_LINES
  lines, but the files of LONG_FILES, each with the reason it is kept longer today.
"""
import ast
import glob
import os
import re

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MAX_FUNCTION_LINES = 70
MAX_CLASS_LINES = 80
MAX_FILE_LINES = 500
SOURCE_DIRS = ["bench", "engines", "patterns", "gpu", "amd", "core", "power", "team", "tools"]
EXTENSIONS = ["cpp", "cu", "hpp"]
PYTHON_DIRS = ["python/dmabench", "scripts"]

# Definitions allowed to be longer, each (path, how the definition's first line starts).
# An entry that is no longer needed fails test_every_allowed_entry_is_still_needed.
ALLOWED = set()

# Code files kept longer than MAX_FILE_LINES today, each {path: why, one line}. An entry whose file is no longer
# that long fails test_every_long_file_is_still_long.
LONG_FILES = {
    "gpu/kfd.cpp": "the KFD layer through libhsakmt (session, devices and memory, SDMA queues, the platform, host memory "
                   "endpoints) in one anonymous namespace whose sections share its types; not split yet",
    "engines/sdma.cpp": "the sdma engine: SdmaOperation (buffers, trigger and completion words, packets, queues, posting, "
                        "stamps) and SdmaEngine; not split yet",
    "bench/cli.cpp": "the command line: the usage text and the parsing of every flag into CliOptions; not split yet",
    "engines/ce.cpp": "the ce / ce-batch engine: CeOperation (items, graph capture, issue, signals and gates, completion) "
                      "and CeEngine; not split yet",
    "engines/host.cpp": "the host backend and its engine (CPU worker threads, POSIX shared memory across processes, "
                        "fault injection, the breakdown's copy stamps); not split yet",
    "python/dmabench/plot.py": "every figure of plot.py (latency, busbw, speedup, breakdown, energy, trend) and its command "
                               "line; not split yet",
}

# A definition starts at column 0 (clang-format style of this tree) with a name and '(' and its
# body ends at the first '}' in column 0.
START = re.compile(r"^(?!namespace|#|//|\s)[A-Za-z_].*\(")
# A class or struct definition starts at column 0 (also inside a namespace: this tree does not indent
# namespaces), possibly after a template head, and its body ends at the first '}' in column 0 ('};').
CLASS = re.compile(r"^(?:template\s*<.*>\s*)?(?:class|struct)\s+[A-Za-z_]")


def _read(path):
    return open(path, encoding="utf-8").read().split("\n")


def _spans(lines, start):
    """(first line, last line) of every definition whose head matches `start`: the head runs to a line
    ending in '{' (a line ending in ';' or '}' first: a declaration or a one-line body, skipped), the
    body to the next '}' in column 0."""
    i = 0
    while i < len(lines):
        if start(lines[i]):
            j = i
            while j < len(lines) and not lines[j].rstrip().endswith(("{", ";", "}")):
                j += 1
            if j < len(lines) and lines[j].rstrip().endswith("{"):
                k = j + 1
                while k < len(lines) and not lines[k].startswith("}"):
                    k += 1
                yield i, k
                i = k
        i += 1


def _report(path, lines, spans, limit):
    return [f"{os.path.relpath(path, ROOT)}:{i + 1}: {k - i + 1} lines: {lines[i].strip()[:70]}"
            for i, k in spans if k - i + 1 > limit]


def long_functions(path, limit):
    lines = _read(path)
    return _report(path, lines, _spans(lines, lambda s: START.match(s) and not CLASS.match(s) and not s.rstrip().endswith(";")), limit)


def long_classes(path, limit):
    lines = _read(path)
    return _report(path, lines, _spans(lines, lambda s: CLASS.match(s)), limit)


def source_files():
    files = []
    for d in SOURCE_DIRS:
        for ext in EXTENSIONS:
            files += glob.glob(os.path.join(ROOT, d, "**", "*." + ext), recursive=True)
    return sorted(files)


def python_files():
    return sorted(f for d in PYTHON_DIRS for f in glob.glob(os.path.join(ROOT, d, "**", "*.py"), recursive=True))


def long_python(path, function_limit, class_limit):
    """The functions (methods and nested ones too) longer than `function_limit` lines and the classes longer than
    `class_limit` lines of the Python file at `path`, in the order of their first lines, each as
    `path:line: N lines: head`."""
    lines = _read(path)
    nodes = [n for n in ast.walk(ast.parse("\n".join(lines), path))
             if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))]
    spans = sorted((n.lineno - 1, n.end_lineno - 1, class_limit if isinstance(n, ast.ClassDef) else function_limit)
                   for n in nodes)
    return [f for i, k, limit in spans for f in _report(path, lines, [(i, k)], limit)]


def code_files():
    """The files whose length test_no_long_file bounds: the C++ of SOURCE_DIRS but tools/ (stand-alone probes and a
    shim), and the Python of PYTHON_DIRS."""
    tools = os.path.join(ROOT, "tools") + os.sep
    return [f for f in source_files() if not f.startswith(tools)] + python_files()


def long_files(files, limit):
    """{path relative to ROOT: its line count} of the files longer than `limit` lines."""
    counts = {os.path.relpath(f, ROOT): len(open(f, encoding="utf-8").read().splitlines()) for f in files}
    return {path: n for path, n in counts.items() if n > limit}


def _allowed(finding, allowed=None):
    path, head = finding.split(":", 1)[0], finding.split(" lines: ", 1)[1]
    return any(path == a_path and head.startswith(a_head) for a_path, a_head in (ALLOWED if allowed is None else allowed))


def test_every_source_dir_is_searched():
    files = source_files()
    for d in SOURCE_DIRS:
        assert any(f.startswith(os.path.join(ROOT, d) + os.sep) for f in files), d
    assert len(files) > 100


def test_no_long_function():
    too_long = [f for path in source_files() for f in long_functions(path, MAX_FUNCTION_LINES) if not _allowed(f)]
    assert not too_long, "functions longer than %d lines:\n%s" % (MAX_FUNCTION_LINES, "\n".join(too_long))


def test_no_long_class():
    too_long = [f for path in source_files() for f in long_classes(path, MAX_CLASS_LINES) if not _allowed(f)]
    assert not too_long, "class or struct bodies longer than %d lines:\n%s" % (MAX_CLASS_LINES, "\n".join(too_long))


def test_no_long_python_function_or_class():
    files = python_files()
    assert any(f.endswith(os.path.join("dmabench", "cli.py")) for f in files) and len(files) > 20
    too_long = [f for path in files for f in long_python(path, MAX_FUNCTION_LINES, MAX_CLASS_LINES) if not _allowed(f)]
    assert not too_long, "Python functions longer than %d lines or classes longer than %d lines:\n%s" % (
        MAX_FUNCTION_LINES, MAX_CLASS_LINES, "\n".join(too_long))


def test_the_check_finds_a_long_python_function(tmp_path):
    body = "\n".join(f"        x += {i}" for i in range(MAX_CLASS_LINES))
    src = tmp_path / "long.py"
    src.write_text("class C:\n    def f(self, x):\n" + body + "\n        return x\n\n\ndef g():\n    return 1\n")
    found = long_python(str(src), MAX_FUNCTION_LINES, MAX_CLASS_LINES)
    assert len(found) == 2 and "def f" in found[1] and "class C" in found[0], found
    assert long_python(str(src), MAX_CLASS_LINES + 10, MAX_CLASS_LINES + 10) == []


def test_the_python_limits_are_the_function_and_the_class_limit(tmp_path):
    # f: MAX_FUNCTION_LINES + 1 lines (too long); C: MAX_CLASS_LINES lines of short methods (not too long)
    body = "\n".join(f"    x += {i}" for i in range(MAX_FUNCTION_LINES - 1))
    methods = "\n".join(f"    def m{i}(self):\n        return {i}" for i in range((MAX_CLASS_LINES - 1) // 2))
    src = tmp_path / "limits.py"
    src.write_text("def f(x):\n" + body + "\n    return x\n\n\nclass C:\n    x = 0\n" + methods + "\n")
    found = long_python(str(src), MAX_FUNCTION_LINES, MAX_CLASS_LINES)
    assert len(found) == 1 and f"{MAX_FUNCTION_LINES + 1} lines: def f" in found[0], found
    assert long_python(str(src), MAX_FUNCTION_LINES + 1, MAX_CLASS_LINES) == []
    assert len(long_python(str(src), MAX_FUNCTION_LINES + 1, MAX_CLASS_LINES - 1)) == 1


def test_every_allowed_entry_is_still_needed():
    found = [f for path in source_files()
             for f in long_functions(path, MAX_FUNCTION_LINES) + long_classes(path, MAX_CLASS_LINES)]
    found += [f for path in python_files() for f in long_python(path, MAX_FUNCTION_LINES, MAX_CLASS_LINES)]
    for entry in ALLOWED:
        assert any(_allowed(f, {entry}) for f in found), "%s is no longer too long: remove it from ALLOWED" % (entry,)


def test_the_check_finds_a_long_function(tmp_path):
    body = "\n".join(f"  x += {i};" for i in range(MAX_FUNCTION_LINES))
    src = tmp_path / "long.cpp"
    src.write_text("int f(int x) {\n" + body + "\n  return x;\n}\n\nint g() { return 1; }\n")
    assert len(long_functions(str(src), MAX_FUNCTION_LINES)) == 1
    assert long_functions(str(src), MAX_FUNCTION_LINES + 10) == []


def test_a_one_line_function_does_not_hide_what_follows(tmp_path):
    body = "\n".join(f"  int x{i} = {i};" for i in range(MAX_CLASS_LINES))
    src = tmp_path / "one_line.cpp"
    src.write_text("int g() { return 1; }\n\nstruct S {\n" + body + "\n};\n")
    assert long_functions(str(src), MAX_FUNCTION_LINES) == []
    assert len(long_classes(str(src), MAX_CLASS_LINES)) == 1


def test_the_check_finds_a_long_class(tmp_path):
    members = "\n".join(f"  int f{i}() const {{ return {i}; }}" for i in range(MAX_CLASS_LINES))
    src = tmp_path / "long.hpp"
    src.write_text("namespace n {\n\ntemplate <class T>\nclass Big final : public T {\n public:\n" + members +
                   "\n};\n\nstruct Small {\n  int a;\n};\n\nstruct Fwd;\n\n}  // namespace n\n")
    found = long_classes(str(src), MAX_CLASS_LINES)
    assert len(found) == 1 and "class Big" in found[0], found
    assert long_classes(str(src), MAX_CLASS_LINES + 10) == []
    assert long_functions(str(src), MAX_FUNCTION_LINES) == []  # a class is not a function


def test_no_long_file():
    files = code_files()
    assert any(f.endswith(os.path.join("bench", "cli.cpp")) for f in files)
    assert any(f.endswith(os.path.join("dmabench", "cli.py")) for f in files)
    assert not any(os.path.relpath(f, ROOT).startswith("tools" + os.sep) for f in files)
    too_long = {path: n for path, n in long_files(files, MAX_FILE_LINES).items() if path not in LONG_FILES}
    assert not too_long, "code files longer than %d lines (split them, or say in LONG_FILES why not):\n%s" % (
        MAX_FILE_LINES, "\n".join(f"{path}: {n} lines" for path, n in sorted(too_long.items())))


def test_every_long_file_is_still_long():
    long = long_files(code_files(), MAX_FILE_LINES)
    for path, why in LONG_FILES.items():
        assert why.strip() and "\n" not in why, "%s: its reason is one line" % path
        assert path in long, "%s is no longer over %d lines (or is gone): remove it from LONG_FILES" % (path, MAX_FILE_LINES)


def test_the_check_finds_a_long_file(tmp_path):
    at, over = tmp_path / "at.cpp", tmp_path / "over.py"
    at.write_text("".join(f"int x{i};\n" for i in range(MAX_FILE_LINES)))
    over.write_text("".join(f"x{i} = {i}\n" for i in range(MAX_FILE_LINES + 1)))
    found = long_files([str(at), str(over)], MAX_FILE_LINES)
    assert list(found.values()) == [MAX_FILE_LINES + 1] and list(found)[0].endswith("over.py"), found
