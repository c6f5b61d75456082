"""`dmabench-results report html`: one self-contained HTML file, checked as text and in a real headless browser
(Debian's chromium; skipped with the reason where it is not installed): it renders (the tables are in the DOM), no
script error, console error or blocked load, every figure loads (complete, naturalWidth > 0), and a screenshot is
not blank. Each browser check is also shown to fail on a page planted to break it."""
import copy
import json
import os
import re
import shutil
import subprocess
import sys

import pytest

from dmabench import html_report
from test_scripts import PACKAGE_ENV, ROOT

H1, H2 = os.path.join(ROOT, "results", "h200x1"), os.path.join(ROOT, "results", "h200x2")
CHROMIUM = shutil.which("chromium")
needs_chromium = pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (Debian: apt install chromium; "
                                                             "scripts/test.sh installs it)")
HOSTILE = '<script>alert("x")</script> & \'quoted\' "too"\nsecond line <img src=x onerror=alert(1)>'


def report(tmp_path, *argv, name="report.html"):
    out = tmp_path / name
    p = subprocess.run([sys.executable, "-m", "dmabench", "report", "html", *map(os.fspath, argv), "--out", out],
                       capture_output=True, text=True, timeout=300, env=PACKAGE_ENV)
    assert p.returncode == 0, p.stderr
    assert "Traceback" not in p.stderr
    return out


def chromium(tmp_path, page, *flags):
    """(stdout, the browser console's lines) of headless chromium on the file `page`, in a fresh profile."""
    profile = tmp_path / f"profile-{len(list(tmp_path.glob('profile-*')))}"
    p = subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", f"--user-data-dir={profile}",
                        "--enable-logging=stderr", "--v=1", "--virtual-time-budget=10000", *flags, page.as_uri()],
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr[-2000:]
    return p.stdout, [line for line in p.stderr.splitlines() if ":CONSOLE" in line]


def dom(tmp_path, page):
    """The DOM after load, and the probe's attributes on <html> (data-loaded, data-errors, data-images)."""
    text, console = chromium(tmp_path, page, "--dump-dom")
    head = re.search(r"<html[^>]*>", text)
    assert head, text[:500]
    attrs = dict(re.findall(r'(data-[a-z]+)="([^"]*)"', head.group(0)))
    return text, attrs, console


def screenshot(tmp_path, page):
    shot = tmp_path / f"{page.stem}.png"
    chromium(tmp_path, page, f"--screenshot={shot}", "--window-size=1280,2000")
    return shot


def distinct_colours(png):
    from PIL import Image  # python3-pil
    with Image.open(png) as image:
        return len(image.convert("RGB").getcolors(maxcolors=1 << 20) or [])


def assert_clean(attrs, console, images):
    assert attrs.get("data-loaded") == "yes", attrs
    assert attrs.get("data-errors") == "", attrs
    assert not console, console
    loaded, total = map(int, attrs["data-images"].split("/"))
    assert loaded == total == images, attrs


@needs_chromium
def test_one_results_file_in_chromium(tmp_path):
    page = report(tmp_path, f"{H2}/breakdown.json")
    text = page.read_text()
    images = text.count("<img ")
    assert images >= 3 and text.count('src="data:image/png;base64,') == images
    assert not re.search(r'(src|href)="(?!data:)', text)  # nothing to load from anywhere
    rendered, attrs, console = dom(tmp_path, page)
    assert_clean(attrs, console, images)
    cases = re.search(r'<div id="cases">(.*?)</div>', rendered, re.S).group(1)
    assert cases.count("<tr") == 1 + len(json.load(open(f"{H2}/breakdown.json"))["results"])
    assert "NVIDIA H200" in rendered and "580.159.04" in rendered and "breakdown" in rendered
    assert distinct_colours(screenshot(tmp_path, page)) > 50


@needs_chromium
def test_a_comparison_in_chromium(tmp_path):
    page = report(tmp_path, f"{H2}/rotate-run2.json", "--against", f"{H2}/rotate.json")
    rendered, attrs, console = dom(tmp_path, page)
    assert_clean(attrs, console, page.read_text().count("<img "))
    table = re.search(r'<div id="comparison">(.*?)</div>', rendered, re.S).group(1)
    p = subprocess.run([sys.executable, "-m", "dmabench", "compare", f"{H2}/rotate.json", f"{H2}/rotate-run2.json",
                        "--json"], capture_output=True, text=True, env=PACKAGE_ENV)
    verdicts = [c["verdict"] for c in json.loads(p.stdout)["cases"]]
    assert table.count("<tr") == 1 + len(verdicts)
    for v in set(verdicts):  # the same verdicts as compare, each counted
        assert f"<b>{verdicts.count(v)}</b> {v}" in rendered
    assert "Reference: rotate.json" in rendered


@needs_chromium
def test_a_host_backend_run_in_chromium(tmp_path):
    """tests/data/html/host-quick.json: `build/dmabench --backend host --config configs/quick.json` (24 ok, every
    one noisy: 20 samples; 96 skipped with their reasons)."""
    path = os.path.join(ROOT, "tests", "data", "html", "host-quick.json")
    page = report(tmp_path, path)
    rendered, attrs, console = dom(tmp_path, page)
    assert_clean(attrs, console, page.read_text().count("<img "))
    assert re.search(r'<span id="count-skipped"><b>96</b>', rendered) and re.search(r'<span id="count-noisy"><b>24</b>', rendered)
    assert rendered.count('<tr class="skipped">') == 96 and rendered.count('<tr class="noisy">') == 24
    assert "runs on the cuda backend" in rendered and "<td>host</td>" in rendered


def planted(tmp_path):
    """rotate-run2.json with names and reasons that hold HTML, quotes and a newline, a noisy case with its interval,
    a skipped and a failed case."""
    doc = json.load(open(f"{H2}/rotate-run2.json"))
    rs = doc["results"]
    rs[0]["name"] += HOSTILE
    rs[1].update({"p50_interval_us": [rs[1]["latency_us"]["p50"] * 0.8, rs[1]["latency_us"]["p50"] * 1.3],
                  "noise": 0.3, "noisy": True})
    for r, status in ((rs[2], "skipped"), (rs[3], "failed")):
        r.update({"status": status, "reason": HOSTILE, "latency_us": None, "algbw_GBps": None, "busbw_GBps": None,
                  "iterations": 0, "validated": False})
    doc["context"]["host"] = HOSTILE
    path = tmp_path / "planted.json"
    path.write_text(json.dumps(doc))
    return path


@needs_chromium
def test_names_are_escaped_and_noisy_cases_marked(tmp_path):
    path = planted(tmp_path)
    page = report(tmp_path, path, "--against", f"{H2}/rotate.json")
    text = page.read_text()
    assert "<script>alert" not in text and "<img src=x" not in text and "\nsecond line" not in text
    assert "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &#x27;quoted&#x27;" in text
    assert "\\nsecond line" in text  # the newline as an escape, on one line
    rendered, attrs, console = dom(tmp_path, page)
    assert_clean(attrs, console, text.count("<img "))  # no planted script ran, no planted image was loaded
    assert '<tr class="noisy">' in rendered and '<span class="badge">noisy</span>' in rendered
    assert '<tr class="failed">' in rendered and '<tr class="skipped">' in rendered
    assert re.search(r'<span id="count-noisy"><b>1</b>', rendered) and re.search(r'<span id="count-failed"><b>1</b>', rendered)
    assert re.search(r'<tr class="[^"]*noisy">', rendered.split('<div id="comparison">')[1].split("</div>")[0])


@needs_chromium
def test_the_browser_checks_fail_on_a_broken_page(tmp_path):
    """The probe and the console check catch a script error, a console error, a blocked load and images that do not
    load; the screenshot check catches a blank page."""
    bad = tmp_path / "bad.html"
    bad.write_text(html_report.page("broken", ['<img alt="broken" src="data:image/png;base64,AAAA">',
                                               '<img alt="remote" src="https://example.invalid/x.png">',
                                               "<script>no_such_function();</script>",
                                               '<script>console.error("planted");</script>']))
    _, attrs, console = dom(tmp_path, bad)
    errors = attrs["data-errors"]
    # a planted inline script never runs: the policy allows only the report's own (issue 51); its refusal is noted
    for what in ("blocked: script-src", "blocked: img-src", "image not loaded: broken", "image not loaded: remote"):
        assert what in errors, errors
    assert "no_such_function" not in errors and "console error: planted" not in errors, errors
    assert attrs["data-images"] == "0/2"
    assert any("Content Security Policy" in line for line in console), console
    with pytest.raises(AssertionError):
        assert_clean(attrs, console, 2)
    blank = tmp_path / "blank.html"
    blank.write_text("<!DOCTYPE html><html><body></body></html>")
    assert distinct_colours(screenshot(tmp_path, blank)) <= 2


def test_without_the_plot_extra_a_report_without_figures_and_a_note(tmp_path):
    out = tmp_path / "r.html"
    code = ("import sys; sys.modules.update({m: None for m in ('matplotlib', 'numpy', 'pandas')}); "
            "from dmabench.cli import main; sys.exit(main(sys.argv[1:]))")
    p = subprocess.run([sys.executable, "-c", code, "report", "html", f"{H2}/breakdown.json", "--out", out],
                       capture_output=True, text=True, timeout=300, env=PACKAGE_ENV)
    assert p.returncode == 0 and not p.stderr, p.stderr
    text = out.read_text()
    assert "<img " not in text and 'id="no-figures"' in text
    assert "this needs the &#x27;plot&#x27; extra" in text and "python3-matplotlib" in text
    assert 'id="cases"' in text


def test_a_file_without_ok_cases_is_a_report_without_figures(tmp_path):
    doc = json.load(open(f"{H2}/breakdown.json"))
    for results, says in (([], "<b>0</b> cases"), (doc["results"][:1], "<b>1</b> failed")):
        doc["results"] = copy.deepcopy(results)
        for r in doc["results"]:
            r.update({"status": "failed", "reason": "planted", "latency_us": None, "algbw_GBps": None,
                      "busbw_GBps": None, "iterations": 0, "validated": False})
            r.pop("breakdown_us", None)
        path = tmp_path / "none.json"
        path.write_text(json.dumps(doc))
        text = report(tmp_path, path).read_text()
        assert 'id="no-figures"' in text and "no ok case" in text and says in text


def test_the_same_inputs_give_the_same_text(tmp_path):
    argv = [f"{H2}/rotate-run2.json", "--against", f"{H2}/rotate.json", "--max-figures", "0"]
    first, second = report(tmp_path, *argv, name="a.html"), report(tmp_path, *argv, name="b.html")
    assert first.read_bytes() == second.read_bytes()
    with_figures = [re.sub(r"base64,[A-Za-z0-9+/=]+", "", report(tmp_path, f"{H2}/breakdown.json", name=n).read_text())
                    for n in ("c.html", "d.html")]
    assert with_figures[0] == with_figures[1]


@pytest.mark.parametrize("argv, says", [
    (["missing.json"], "cannot read"),
    (["NOTRESULTS"], "NOTRESULTS"),
    ([f"{H2}/breakdown.json", "--against", f"{H2}/rotate.json"], "no case in common"),
    ([f"{H2}/breakdown.json", "--threshold", "-1"], "--threshold"),
    ([f"{H2}/breakdown.json", "--out", f"{H2}/breakdown.json"], "a file this script read"),
], ids=["missing", "not-results", "nothing-common", "threshold", "out-is-input"])
def test_bad_input_is_one_line_and_exit_2(tmp_path, argv, says):
    (tmp_path / "not.json").write_text('{"hello": 1}')
    argv = [os.fspath(tmp_path / "not.json") if a == "NOTRESULTS" else a for a in argv]
    argv = argv if "--out" in argv else [*argv, "--out", os.fspath(tmp_path / "r.html")]
    p = subprocess.run([sys.executable, "-m", "dmabench", "report", "html", *argv], capture_output=True, text=True,
                       timeout=300, env=PACKAGE_ENV, cwd=tmp_path)
    assert p.returncode == 2, (p.returncode, p.stderr)
    lines = p.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("dmabench-results report html: error: "), p.stderr
    assert says in lines[0] or (says == "NOTRESULTS" and "not.json" in lines[0]), lines
    assert not (tmp_path / "r.html").exists()
