"""The shape docs/design.md's layout section promises, checked so that it stays true.

- No function defined in the tree's C++ sources (every directory of SOURCE_DIRS; .cpp, .cu, .hpp) is
  longer than MAX_LINES lines (the program stays made of small units; a longer one is a sign that a unit
  is missing).
- No class or struct body is longer than MAX_LINES lines (a longer one holds more than one job; its
  member functions can be defined after it, or parts of it become classes of their own).
- The same two rules over the Python of PYTHON_DIRS (the dmabench package and the scripts/ shims): no function
  (a method or a nested function too) and no class longer than MAX_LINES lines, from its `def` / `class` line to
  its last line.
"""
import ast
import glob
import os
import re

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MAX_LINES = 80
SOURCE_DIRS = ["bench", "engines", "patterns", "gpu", "amd", "core", "power", "team", "tools"]
EXTENSIONS = ["cpp", "cu", "hpp"]
PYTHON_DIRS = ["python/dmabench", "scripts"]

# Definitions allowed to be longer, each (path, how the definition's first line starts); none today.
# An entry that is no longer needed fails test_every_allowed_entry_is_still_needed.
ALLOWED = set()

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


def long_python(path, limit):
    """The functions (methods and nested ones too) and classes of the Python file at `path` longer than `limit`
    lines, each as `path:line: N lines: head`."""
    lines = _read(path)
    nodes = [n for n in ast.walk(ast.parse("\n".join(lines), path))
             if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))]
    return _report(path, lines, sorted((n.lineno - 1, n.end_lineno - 1) for n in nodes), limit)


def _allowed(finding, allowed=None):
    path, head = finding.split(":", 1)[0], finding.split(" lines: ", 1)[1]
    return any(path == a_path and head.startswith(a_head) for a_path, a_head in (ALLOWED if allowed is None else allowed))


def test_every_source_dir_is_searched():
    files = source_files()
    for d in SOURCE_DIRS:
        assert any(f.startswith(os.path.join(ROOT, d) + os.sep) for f in files), d
    assert len(files) > 100


def test_no_long_function():
    too_long = [f for path in source_files() for f in long_functions(path, MAX_LINES) if not _allowed(f)]
    assert not too_long, "functions longer than %d lines:\n%s" % (MAX_LINES, "\n".join(too_long))


def test_no_long_class():
    too_long = [f for path in source_files() for f in long_classes(path, MAX_LINES) if not _allowed(f)]
    assert not too_long, "class or struct bodies longer than %d lines:\n%s" % (MAX_LINES, "\n".join(too_long))


def test_no_long_python_function_or_class():
    files = python_files()
    assert any(f.endswith(os.path.join("dmabench", "cli.py")) for f in files) and len(files) > 20
    too_long = [f for path in files for f in long_python(path, MAX_LINES) if not _allowed(f)]
    assert not too_long, "Python functions or classes longer than %d lines:\n%s" % (MAX_LINES, "\n".join(too_long))


def test_the_check_finds_a_long_python_function(tmp_path):
    body = "\n".join(f"        x += {i}" for i in range(MAX_LINES))
    src = tmp_path / "long.py"
    src.write_text("class C:\n    def f(self, x):\n" + body + "\n        return x\n\n\ndef g():\n    return 1\n")
    found = long_python(str(src), MAX_LINES)
    assert len(found) == 2 and "def f" in found[1] and "class C" in found[0], found
    assert long_python(str(src), MAX_LINES + 10) == []


def test_every_allowed_entry_is_still_needed():
    found = [f for path in source_files() for f in long_functions(path, MAX_LINES) + long_classes(path, MAX_LINES)]
    found += [f for path in python_files() for f in long_python(path, MAX_LINES)]
    for entry in ALLOWED:
        assert any(_allowed(f, {entry}) for f in found), "%s is no longer too long: remove it from ALLOWED" % (entry,)


def test_the_check_finds_a_long_function(tmp_path):
    body = "\n".join(f"  x += {i};" for i in range(MAX_LINES))
    src = tmp_path / "long.cpp"
    src.write_text("int f(int x) {\n" + body + "\n  return x;\n}\n\nint g() { return 1; }\n")
    assert len(long_functions(str(src), MAX_LINES)) == 1
    assert long_functions(str(src), MAX_LINES + 10) == []


def test_a_one_line_function_does_not_hide_what_follows(tmp_path):
    body = "\n".join(f"  int x{i} = {i};" for i in range(MAX_LINES))
    src = tmp_path / "one_line.cpp"
    src.write_text("int g() { return 1; }\n\nstruct S {\n" + body + "\n};\n")
    assert long_functions(str(src), MAX_LINES) == []
    assert len(long_classes(str(src), MAX_LINES)) == 1


def test_the_check_finds_a_long_class(tmp_path):
    members = "\n".join(f"  int f{i}() const {{ return {i}; }}" for i in range(MAX_LINES))
    src = tmp_path / "long.hpp"
    src.write_text("namespace n {\n\ntemplate <class T>\nclass Big final : public T {\n public:\n" + members +
                   "\n};\n\nstruct Small {\n  int a;\n};\n\nstruct Fwd;\n\n}  // namespace n\n")
    found = long_classes(str(src), MAX_LINES)
    assert len(found) == 1 and "class Big" in found[0], found
    assert long_classes(str(src), MAX_LINES + 10) == []
    assert long_functions(str(src), MAX_LINES) == []  # a class is not a function
