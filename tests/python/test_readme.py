"""The README stays an entry page (issue 52): under 250 lines, its detail in docs/, the two setup commands, the
sections a new user needs, and its links into docs/ pointing at headings that exist."""
import os
import re

from test_scripts import ROOT


def anchors(path):
    text = open(path, encoding="utf-8").read()
    heads = re.findall(r"^#+ (.+)$", text, re.M)
    return {re.sub(r"[^\w\- ]", "", h.strip().lower()).replace(" ", "-") for h in heads}


def test_the_readme_is_short_and_keeps_its_sections():
    text = open(os.path.join(ROOT, "README.md"), encoding="utf-8").read()
    assert len(text.splitlines()) < 250, len(text.splitlines())
    for must in ("scripts/run.sh", "scripts/test.sh", "## A first sweep", "## Reading results",
                 "## Comparing runs / CI regression", "## Backends and engines", "cpack -G DEB", "## Exit codes"):
        assert must in text, must
    for doc, anchor in re.findall(r"\]\((docs/[\w\-]+\.md)#([\w\-]+)\)", text):
        assert anchor in anchors(os.path.join(ROOT, doc)), (doc, anchor)
