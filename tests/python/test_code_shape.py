"""The shape docs/design.md's layout section promises, checked so that it stays true.

- No function defined in bench/ is longer than MAX_LINES lines (the upper half of the program stays
  made of small units; a longer one is a sign that a unit is missing).
"""
import glob
import os
import re

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MAX_LINES = 80

# A definition starts at column 0 (clang-format style of this tree) with a name and '(' and its
# body ends at the first '}' in column 0.
START = re.compile(r"^(?!namespace|#|//|\s)[A-Za-z_].*\(")


def long_functions(path, limit):
    lines = open(path, encoding="utf-8").read().split("\n")
    found, i = [], 0
    while i < len(lines):
        if START.match(lines[i]) and not lines[i].rstrip().endswith(";"):
            j = i
            while j < len(lines) and not lines[j].rstrip().endswith("{") and not lines[j].rstrip().endswith(";"):
                j += 1
            if j < len(lines) and lines[j].rstrip().endswith("{"):
                k = j + 1
                while k < len(lines) and not lines[k].startswith("}"):
                    k += 1
                if k - i + 1 > limit:
                    found.append(f"{os.path.relpath(path, ROOT)}:{i + 1}: {k - i + 1} lines: {lines[i].strip()[:70]}")
                i = k
        i += 1
    return found


def test_no_long_function_in_bench():
    files = sorted(glob.glob(os.path.join(ROOT, "bench", "**", "*.cpp"), recursive=True))
    assert len(files) > 10
    too_long = [f for path in files for f in long_functions(path, MAX_LINES)]
    assert not too_long, "functions in bench/ longer than %d lines:\n%s" % (MAX_LINES, "\n".join(too_long))


def test_the_check_finds_a_long_function(tmp_path):
    body = "\n".join(f"  x += {i};" for i in range(MAX_LINES))
    src = tmp_path / "long.cpp"
    src.write_text("int f(int x) {\n" + body + "\n  return x;\n}\n\nint g() { return 1; }\n")
    assert len(long_functions(str(src), MAX_LINES)) == 1
    assert long_functions(str(src), MAX_LINES + 10) == []
