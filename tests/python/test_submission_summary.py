"""The committed one-screen summaries of issue 54's runs (results/<machine>/submission/summary-REV.txt) are what
results/h200x1/submission/summarize.py makes now from the committed archive of the same run (submission-REV.tar.gz,
or desc-REV.tar.gz for summary-desc-REV.txt): a summary quoted in notes and READMEs cannot drift from its data."""
import glob
import os
import subprocess
import sys
import tarfile

import pytest

from test_scripts import ROOT

SUMMARIZE = os.path.join(ROOT, "results", "h200x1", "submission", "summarize.py")


def pairs():
    out = []
    for summary in sorted(glob.glob(os.path.join(ROOT, "results", "*", "submission", "summary-*.txt"))):
        name = os.path.basename(summary)[len("summary-"):-len(".txt")]
        folder = os.path.dirname(summary)
        archive = os.path.join(folder, f"{name}.tar.gz" if name.startswith("desc-") else f"submission-{name}.tar.gz")
        out.append((summary, archive))
    return out


def test_there_are_summaries_with_archives():
    found = pairs()
    assert found, "no results/*/submission/summary-*.txt"
    for summary, archive in found:
        assert os.path.isfile(archive), f"{summary}: its archive {archive} is not committed"


@pytest.mark.parametrize("summary,archive", pairs(), ids=lambda p: os.path.basename(p))
def test_each_summary_is_what_summarize_makes_of_its_archive(tmp_path, summary, archive):
    with tarfile.open(archive) as t:  # committed data, still checked: plain files and folders inside tmp_path only
        members = t.getmembers()
        for m in members:
            assert (m.isfile() or m.isdir()) and not os.path.isabs(m.name) and ".." not in m.name.split("/"), m.name
        t.extractall(tmp_path, members=members)  # Debian 12's Python 3.11.2 has no filter= yet
    made = subprocess.run([sys.executable, SUMMARIZE, str(tmp_path)], capture_output=True, text=True, timeout=120)
    assert made.returncode == 0, made.stderr
    with open(summary, encoding="utf-8") as f:
        committed = f.read()
    assert made.stdout == committed, (f"{summary} differs from what summarize.py makes of {archive}: run "
                                      f"`python3 {os.path.relpath(SUMMARIZE, ROOT)} DIR > {os.path.relpath(summary, ROOT)}` "
                                      "over the archive unpacked in DIR")
