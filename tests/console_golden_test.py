#!/usr/bin/env python3
"""The console's golden output (registered with ctest as cli_console_golden).

usage: console_golden_test.py DMABENCH GOLDEN_FILE

Runs dmabench --backend host on a tiny fixed config (fixed iterations) whose cases end ok, skipped (an engine of
a GPU backend) and FAILED (the software SDMA engine with an injected fault), at the default verbosity, -q and
-v, and its --list; masks what differs from run to run or build to build (timings, bandwidths, `noisy` for `ok`,
paths, the version, the build's GPU backend in a skip reason) and compares the whole console with GOLDEN_FILE: the
header, the column layout, the statuses and the reasons must match
exactly. DMABENCH_UPDATE_GOLDEN=1 writes GOLDEN_FILE instead (review the diff before committing it).
"""
import json
import os
import re
import subprocess
import sys
import tempfile

CONFIG = {"name": "console-golden", "patterns": ["copy"], "engines": ["host", "ce", "sdma"], "devices": [[0, 1]],
          "timing": "oneshot", "sizes": ["4KiB", "64KiB"], "warmup": 1, "iterations": 30, "max_noise": 1}
# the figures' cells: (header label, width of the cell that ends where the label ends, placeholder)
FIGURES = [("p50", 9, "<time>"), ("95%", 6, "<n%>"), ("algbw GB/s", 10, "<GB/s>"), ("busbw GB/s", 10, "<GB/s>")]


def fail(msg):
    sys.exit("FAIL: " + msg)


def mask_row(line, ends):
    """The row with each figure's cell (right-aligned, fixed width) replaced by its placeholder, same width."""
    for end, width, placeholder in ends:
        cell = line[end - width:end]
        if not cell.strip():
            continue
        if line[end - width - 1] != " ":
            fail(f"a figure overflows its column ({width} characters):\n{line}")
        line = line[:end - width] + placeholder.rjust(width) + line[end:]
    return line


def mask(text, tmp):
    out, ends = [], None
    for line in text.replace(tmp, "<tmp>").splitlines():
        if "p50" in line and "busbw GB/s" in line:  # the header: where each figure's cell ends
            ends = [(line.index(label) + len(label), width, ph) for label, width, ph in FIGURES]
        elif ends and re.match(r"^ {0,8}\d", line):  # a row: starts with the right-aligned size
            # `noisy` depends on the figures as they do (a loaded machine: the interval passes max_noise): as `ok`
            line = re.sub(r"(?<=  )noisy(?=  |$)", "ok   ", mask_row(line, ends)).rstrip()
        line = re.sub(r"^dmabench \S+ \(git \S+\)", "dmabench <version>", line)
        line = re.sub(r"runs on the (cuda|hip) backend", "runs on the <gpu> backend", line)  # the build's GPU backend
        line = re.sub(r"in \d+\.\d s;", "in <s> s;", line)
        line = re.sub(r"^(# Avg bus bandwidth    : )\d+\.\d+ GB/s", r"\1<busbw> GB/s", line)
        line = re.sub(r"setup [0-9.]+ (ns|us|ms|s)\b", "setup <time>", line)
        out.append(line)
    return out


def console(exe, tmp, cfg, *extra, rc):
    env = dict(os.environ, DMABENCH_SOFT_SDMA_FAULT="unknown-opcode")
    p = subprocess.run([exe, "--backend", "host", "--config", cfg, "--out", os.path.join(tmp, "out.json"), *extra],
                       capture_output=True, text=True, env=env, timeout=300)
    if p.returncode != rc:
        fail(f"{' '.join(extra)}: exit {p.returncode}, expected {rc}\n{p.stdout[-3000:]}\n{p.stderr[-3000:]}")
    return p.stdout


def main():
    exe, golden = sys.argv[1], sys.argv[2]
    with tempfile.TemporaryDirectory() as tmp:
        cfg = os.path.join(tmp, "golden.json")
        with open(cfg, "w") as f:
            json.dump(CONFIG, f)
        got = []
        for title, extra, rc in (("--list", ["--list"], 0), ("default", [], 1), ("-q", ["-q"], 1), ("-v", ["-v"], 1)):
            got += [f"=== {title}"] + mask(console(exe, tmp, cfg, *extra, rc=rc), tmp)
        with open(os.path.join(tmp, "out.json")) as f:
            statuses = sorted(r["status"] for r in json.load(f)["results"])
    if statuses != ["failed", "failed", "ok", "ok", "skipped", "skipped"]:
        fail(f"the golden config's cases no longer end ok, skipped and failed: {statuses}")
    text = "\n".join(got) + "\n"
    if os.environ.get("DMABENCH_UPDATE_GOLDEN") == "1":
        with open(golden, "w") as f:
            f.write(text)
        print(f"wrote {golden}")
        return
    want = open(golden).read()
    if text != want:
        import difflib
        diff = "".join(difflib.unified_diff(want.splitlines(True), text.splitlines(True), "golden", "got"))
        fail(f"the console differs from {golden} (DMABENCH_UPDATE_GOLDEN=1 rewrites it):\n{diff}")
    print("console golden: ok")


if __name__ == "__main__":
    main()
