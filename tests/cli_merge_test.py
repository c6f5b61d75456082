#!/usr/bin/env python3
"""dmabench --merge on the host backend (registered with ctest as cli_merge_host): the one writer of levels files.

usage: cli_merge_test.py DMABENCH

- the files of `--processes 3`'s processes merged by --merge: the same levels file --processes wrote (but
  merged_by, which --merged-by names, the settings and the processes' exit codes, which a file made elsewhere lacks);
- a process file given as its journal, and a results file whose journal beside it holds more records (a run that has
  not finished): read from the journal, with one note on stderr;
- every refusal exit 2 with one line `dmabench: error: ...` naming what was wrong, and nothing written: fewer than 2
  files, a levels file, another config, another build, a file given twice (also through a link), an unreadable or
  malformed file, --out one of the inputs, an --out that cannot be written, an unknown argument, no --out.
"""
import json
import os
import shutil
import sys
import tempfile

from driver_common import expect, run, write_json


def load(path):
    with open(path) as f:
        return json.load(f)


def processes(exe, tmp):
    """The levels file of a small sweep in 3 fresh processes, and its processes' files."""
    out = os.path.join(tmp, "levels.json")
    run([exe, "--backend", "host", "-b", "4KiB", "-e", "64KiB", "-f", "4", "--patterns", "copy,allgather", "--engines",
         "host", "-n", "5", "-w", "1", "--processes", "3", "--out", out], rc=0)
    return out, [os.path.join(out + ".processes", f"process-{k}.json") for k in (1, 2, 3)]


def without_settings(doc):
    """`doc` less what only --processes knows (the settings, exit codes) and merged_by."""
    doc = json.loads(json.dumps(doc))
    lv = doc["context"]["levels"]
    for k in ("processes", "order", "order_seed", "merged_by"):
        lv.pop(k)
    for p in lv["per_process"]:
        p.pop("exit_code")
    return doc


def same_as_processes(exe, tmp, levels, files):
    out = os.path.join(tmp, "merged.json")
    p = run([exe, "--merge", *files, "--out", out], rc=0)
    expect(p.stderr == "" and p.stdout == f"dmabench: 3 results files merged into {out}: 6 cases, 6 ok, 0 failed, "
           "0 skipped\n", f"one line on stdout: {p.stdout!r} {p.stderr!r}")
    merged, want = load(out), load(levels)
    lv = merged["context"]["levels"]
    expect((lv["processes"], lv["merged"], lv["merged_by"], lv["order"], lv["order_seed"]) ==
           (3, 3, "dmabench --merge", None, None), f"levels {lv}")
    expect([q["exit_code"] for q in lv["per_process"]] == [None] * 3, "exit codes unknown")
    expect(without_settings(merged) == without_settings(want), "--merge made what --processes made")
    run([exe, "--merge", *files, "--out", out, "--merged-by", "merge_runs.py"], rc=0)
    expect(load(out)["context"]["levels"]["merged_by"] == "merge_runs.py", "--merged-by names the merger")
    p = run([exe, "--merge", "--help"], rc=0)
    expect(p.stdout.startswith("usage: dmabench --merge A.json B.json"), p.stdout)


def journals(exe, tmp, files):
    """A process file given as its journal; a results file behind its journal."""
    d = os.path.join(tmp, "journals")
    os.mkdir(d)
    docs = [load(f) for f in files]
    paths = [os.path.join(d, f"p{k}.json") for k in range(3)]
    for path, doc in zip(paths, docs):
        write_json(path, doc)
    header = {"schema": "dmabench-journal/1", "results_schema": "dmabench/1", "context": docs[2]["context"]}
    lines = [json.dumps(header)] + [json.dumps(r) for r in docs[2]["results"]]
    with open(paths[2] + ".journal", "w") as f:
        f.write("\n".join(lines) + "\n{\"torn")  # killed while writing its last line
    os.remove(paths[2])
    out = os.path.join(tmp, "from-journal.json")
    p = run([exe, "--merge", paths[0], paths[1], paths[2] + ".journal", "--out", out], rc=0)
    expect(p.stderr == f"dmabench: {paths[2]}.journal: line {len(lines) + 1} is torn (the run was killed while writing "
           "it); ignored\n", p.stderr)
    expect(load(out)["context"]["levels"]["per_process"][2]["file"] == paths[2] + ".journal", "the journal's name")
    behind = dict(docs[2], results=docs[2]["results"][:2])  # rewritten every 2 s: behind its journal
    write_json(paths[2], behind)
    p = run([exe, "--merge", *paths, "--out", out], rc=0)
    expect(f"{paths[2]}.journal: the run that writes {paths[2]} has not finished; reading its journal (6 records, 2 in "
           f"{paths[2]}; its torn line {len(lines) + 1} ignored)" in p.stderr, p.stderr)
    expect(all(r["levels"]["processes"] == 3 for r in load(out)["results"]), "every case from the journal")


def refused(exe, args, words, out):
    """exit 2, one line naming `words`, --out not written."""
    p = run([exe, "--merge", *args], rc=2)
    lines = p.stderr.splitlines()
    expect(len(lines) == 1 and lines[0].startswith("dmabench: error: ") and words in lines[0],
           f"{args}: one line naming {words!r}, got {p.stderr!r}")
    expect(out is None or not os.path.exists(out), f"{args}: --out written")


def variants(tmp, files):
    """Files one field away from the process files: {name: path}."""
    docs = {"levels": load(files[0]), "config": load(files[1]), "revision": load(files[2]), "p50": load(files[1]),
            "list": []}
    docs["levels"]["context"]["levels"] = {"processes": 2}
    docs["config"]["context"]["config"]["iterations"] = 6
    docs["revision"]["context"]["dmabench"]["git_revision"] = "0123abc"
    docs["p50"]["results"][0]["latency_us"]["p50"] = 0
    paths = {name: write_json(os.path.join(tmp, f"{name}.json"), doc) for name, doc in docs.items()}
    with open(os.path.join(tmp, "cut.json"), "w") as f:
        f.write(json.dumps(load(files[0]))[:200])
    paths["cut"] = os.path.join(tmp, "cut.json")
    os.symlink(files[0], os.path.join(tmp, "link.json"))
    paths["link"] = os.path.join(tmp, "link.json")
    return paths


def refusals(exe, tmp, files):
    d = os.path.join(tmp, "refused")
    os.mkdir(d)
    v = variants(d, files)
    out = os.path.join(d, "out", "m.json")
    a, b, c = files
    for args, words in (([a], f"{a}: one results file; a merge takes the results files of 2 or more processes"),
                        ([], "--merge: one results file"),
                        ([a, b, v["levels"]], f"{v['levels']}: context.levels: already a levels file"),
                        ([a, v["config"]], f"{v['config']}: context.config.iterations differs from {a}'s"),
                        ([a, b, v["revision"]], f"{v['revision']}: context.dmabench.git_revision '0123abc' differs from"),
                        ([a, b, a], f"{a}: given twice (the same file as {a})"),
                        ([a, b, v["link"]], f"{v['link']}: given twice (the same file as {a})"),
                        ([a, os.path.join(d, "missing.json")], "missing.json: cannot read it"),
                        ([a, d], f"{d}: not a regular file (a directory)"),
                        ([a, v["cut"]], f"{v['cut']}: not valid JSON"),
                        ([a, v["list"]], f"{v['list']}: not a dmabench results file: the top level is array"),
                        ([a, v["p50"]], f"{v['p50']}: results[0].latency_us.p50: expected a positive number, got 0")):
        refused(exe, [*args, "--out", out], words, out)
    copy = os.path.join(d, "copy.json")
    shutil.copy(a, copy)
    refused(exe, [copy, b, "--out", copy], f"--out {copy}: the results file {copy} given to --merge", None)
    expect(load(copy) == load(a), "an input is never written")
    refused(exe, [a, b, "--out", os.path.join(d, "x.json.journal")], "named like a run's own file", None)
    refused(exe, [a, b, "--out", d], f"--out {d}: a directory", None)
    refused(exe, [a, b, "--out", "/dev/full"], "--out /dev/full: a device", None)
    refused(exe, [a, b, "--out", os.path.join(a, "m.json")], "not a directory", None)
    refused(exe, [a, b, "--out", out, "--config", "x.json"], "unknown argument '--config' with --merge", out)
    refused(exe, [a, b], "--merge: --out FILE is missing", None)
    refused(exe, [a, b, "--out", out, "--out", out], "--out: given twice", out)
    expect(not os.path.exists(os.path.dirname(out)), "nothing made for a refused merge")


def main():
    exe = sys.argv[1]
    with tempfile.TemporaryDirectory() as tmp:
        levels, files = processes(exe, tmp)
        same_as_processes(exe, tmp, levels, files)
        journals(exe, tmp, files)
        refusals(exe, tmp, files)
    print("PASS merge-host")


if __name__ == "__main__":
    main()
