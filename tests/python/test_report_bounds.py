"""Issue 51's breaks of the Python tools: a report's Content-Security-Policy names the report's own script and style
by their hashes (no 'unsafe-inline'), checked as text and in headless chromium; a 20,000-character context string
(git_revision) is clipped in every figure's text and bounded in the HTML, so `report html` and `plot` still work;
a library's warning reaches stderr as one line with its control characters escaped."""
import base64
import hashlib
import json
import os
import re
import subprocess
import sys
import warnings

from dmabench import html_report, tool
from dmabench.text import clipped
from test_html_report import H2, dom, needs_chromium, report
from test_scripts import PACKAGE_ENV

LONG = "r" * 20000


def policy(text):
    meta = re.search(r'<meta http-equiv="Content-Security-Policy" content="([^"]*)">', text)
    assert meta, text[:800]
    return dict((part.split()[0], part.split()[1:]) for part in meta.group(1).split(";") if part.strip())


def digest(body):
    return "'sha256-" + base64.b64encode(hashlib.sha256(body.encode("utf-8")).digest()).decode() + "'"


def test_the_policy_names_the_reports_own_script_and_style_by_their_hashes(tmp_path):
    text = report(tmp_path, f"{H2}/rotate.json", "--max-figures", "0").read_text()
    rules = policy(text)
    scripts = re.findall(r"<script>(.*?)</script>", text, re.S)
    styles = re.findall(r"<style>(.*?)</style>", text, re.S)
    assert len(scripts) == 1 and len(styles) == 1
    assert "'unsafe-inline'" not in rules["script-src"] and "'unsafe-inline'" not in rules["style-src"], rules
    assert rules["script-src"] == [digest(scripts[0])] and rules["style-src"] == [digest(styles[0])], rules
    assert rules["default-src"] == ["'none'"]


@needs_chromium
def test_the_strict_policy_lets_the_reports_script_run_and_no_other(tmp_path):
    page = tmp_path / "planted.html"
    page.write_text(html_report.page("planted", ["<p>text</p>", "<script>document.title = 'ran';</script>"]))
    rendered, attrs, _ = dom(tmp_path, page)
    assert attrs.get("data-loaded") == "yes", attrs  # the report's own script ran (its hash matches)
    assert "blocked: script-src" in attrs.get("data-errors", ""), attrs
    assert "<title>ran</title>" not in rendered


def long_context(tmp_path):
    doc = json.load(open(f"{H2}/rotate.json"))
    doc["context"].setdefault("dmabench", {})["git_revision"] = LONG
    doc["context"]["host"] = "h\x1b[31m" + LONG
    path = tmp_path / "long.json"
    path.write_text(json.dumps(doc))
    return path


def test_a_20000_character_context_string_is_clipped_in_figures_and_the_page(tmp_path):
    path = long_context(tmp_path)
    text = report(tmp_path, path, "--max-figures", "2").read_text()
    assert text.count("<img ") == 2
    assert LONG not in text and "more characters)" in text and "\x1b" not in text
    p = subprocess.run([sys.executable, "-m", "dmabench", "plot", os.fspath(path), "--timing", "both",
                        "--out", os.fspath(tmp_path / "fig")],
                       capture_output=True, text=True, timeout=300, env=PACKAGE_ENV)
    assert p.returncode == 0 and "Traceback" not in p.stderr, p.stderr[-2000:]
    assert any(name.endswith(".png") for name in os.listdir(tmp_path / "fig"))


def test_clipped_bounds_every_line_and_the_number_of_lines():
    text = clipped("a" * 5000 + "\n" + "b\x1b" + "\nc" * 100)
    lines = text.split("\n")
    assert len(lines) == 13 and all(len(line) <= 160 for line in lines)
    assert lines[1] == "b\\x1b" and lines[-1] == "…(90 more lines)"


def test_a_warning_is_one_line_with_control_characters_escaped(capsys):
    def run(argv):
        warnings.warn("Glyph 27 (\x1b) missing from font\nforged line")
        return 0
    assert tool.run_tool("plot.py", run, []) == 0
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "\x1b" not in err and "\\x1b" in err and "\\nforged line" in err, err
