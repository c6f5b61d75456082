#!/usr/bin/env python3
"""Writes tests/data/verdict-fixture.json: one family of cases (bimodal, tied, one-draw, planted changes, exact and
normal-approximation sizes) judged by python/dmabench/verdict.py. Both implementations of the rule are held to it:
tests/python/test_verdict.py (verdict.py still gives these) and tests/test_verdict.cpp (bench/verdict.cpp, --check's).
usage: python3 tests/data/make_verdict_fixture.py   (from the repository root; seeded: the same file every time)"""
import json, random, sys
sys.path.insert(0, "python")
from dmabench import verdict
rng = random.Random(7)
def bimodal(n, base, slow=1.5, share=0.3, scale=1.0):
    return [round(base * scale * (slow if rng.random() < share else 1.0) * rng.uniform(0.98, 1.02), 3) for _ in range(n)]
cases = []
cases.append({"base": bimodal(6, 10), "new": bimodal(6, 10), "cls": "launch-bound"})
cases.append({"base": bimodal(6, 10, share=0), "new": bimodal(6, 10, share=0, scale=1.3), "cls": "launch-bound"})
cases.append({"base": bimodal(6, 100, share=0), "new": bimodal(6, 100, share=0, scale=0.9), "cls": "bandwidth-bound"})
cases.append({"base": [5.0, 5.0, 5.0, 6.0], "new": [5.0, 6.0, 6.0, 6.0, 6.0], "cls": "launch-bound"})  # ties
cases.append({"base": [12.0], "new": [20.0], "cls": "launch-bound"})  # one draw a side
cases.append({"base": bimodal(21, 50, share=0.2), "new": bimodal(21, 50, share=0.2, scale=1.1), "cls": "launch-bound"})
cases.append({"base": bimodal(25, 1000, share=0), "new": bimodal(22, 1000, share=0, scale=1.01), "cls": "bandwidth-bound"})
cases.append({"base": bimodal(8, 30), "new": bimodal(5, 30, scale=1.2), "cls": "launch-bound"})
cases.append({"base": bimodal(10, 7, share=0.5), "new": bimodal(10, 7, share=0.5), "cls": "launch-bound"})
cases.append({"base": bimodal(13, 200, share=0), "new": bimodal(30, 200, share=0, scale=1.04), "cls": "bandwidth-bound"})
judged = verdict.judge_all(cases)
doc = {"about": "One family of cases judged by python/dmabench/verdict.py (tests/python/test_verdict.py checks it still "
                "gives these; tests/test_check.cpp checks bench/verdict.cpp gives the same). Made by "
                "tests/data/make_verdict_fixture.py; remake it where the rule changes on purpose.",
       "alpha": verdict.ALPHA,
       "cases": [{**c, **{k: j[k] for k in ("verdict", "change", "p", "supported")}} for c, j in zip(cases, judged)]}
with open("tests/data/verdict-fixture.json", "w") as f:
    json.dump(doc, f, indent=1)
for c in doc["cases"]:
    print(c["cls"], len(c["base"]), len(c["new"]), c["verdict"], round(c["change"], 4), c["p"], c["supported"])
