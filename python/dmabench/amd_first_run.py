"""Helper of scripts/amd-first-run.sh (standard library only): the KFD interface version, the sweep's groups
what is left of a sweep after a hang, merged results, a config at other sizes, and the summary table.

usage: amd_first_run.py kfd-version DEV                     # "1.17" from /dev/kfd (or a fake: a text file)
       amd_first_run.py remaining CASES.txt DONE.txt         # --benchmark_filter for the cases not in DONE
       amd_first_run.py recorded RESULTS.json                # "name<TAB>status<TAB>reason" per recorded case
       amd_first_run.py merge OUT.json RESULTS.json...       # one results file from several runs' files
       amd_first_run.py sizes CONFIG.json SIZES OUT.json     # the config with every `sizes` replaced by SIZES
       amd_first_run.py latte-baseline RESULTS.json          # the variant name of sdma pcpy (dma_latte_report --baseline)
       amd_first_run.py summary WORKDIR                      # WORKDIR/summary.md (the kit's table); prints the
                                                             # number of cases failed, hung or not run

Exit codes: 0 done; 1 kfd-version could not read the version (the reason on stdout); 2 bad input (an unreadable
or malformed file, a bad argument), with one line `amd_first_run.py: error: ...` on stderr.
"""
import csv
import fcntl
import json
import os
import re
import stat
import struct
import sys

from .keys import variant
from .reader import load
from .text import fmt_size, parse_size, printable, quote, ResultsError
from .tool import run_tool
from .text import table as md_table

TOOL = "amd_first_run.py"
HERE = os.path.dirname(os.path.abspath(__file__))
PUBLISHED = os.path.join(HERE, "dma_latte_published.json")
STEPS = [("sweep-2", "first-run sweep, 2 GPUs"), ("sweep-all", "first-run sweep, all GPUs"),
         ("dma-latte", "configs/mi300x-dma-latte.json at the kit's sizes")]


def table(header, rows):
    """A markdown table whose cells may hold '|' (reasons, option values)."""
    return md_table(header, [[str(c).replace("|", "\\|") for c in r] for r in rows])


# ---- the KFD interface version ----------------------------------------------------------------------------
def kfd_version(dev):
    """'major.minor' of the KFD ioctl interface. A character device is asked with AMDKFD_IOC_GET_VERSION:
    _IOR('K', 0x01, struct kfd_ioctl_get_version_args {__u32 major_version; __u32 minor_version;}) (Linux uapi
    include/uapi/linux/kfd_ioctl.h; Debian's linux-libc-dev /usr/include/linux/kfd_ioctl.h). A regular file
    (a fake root's dev/kfd) holds the version as text."""
    st = os.stat(dev)
    if stat.S_ISREG(st.st_mode):
        with open(dev) as f:
            text = f.read().strip()
        if not re.fullmatch(r"\d+\.\d+", text):
            raise ValueError(f"{dev}: expected 'major.minor', got {text[:40]!r}")
        return text
    size = struct.calcsize("II")
    request = (2 << 30) | (size << 16) | (ord("K") << 8) | 0x01  # _IOC(_IOC_READ, 'K', 0x01, 8) on Linux
    fd = os.open(dev, os.O_RDWR | os.O_CLOEXEC)
    try:
        major, minor = struct.unpack("II", fcntl.ioctl(fd, request, bytes(size)))
    finally:
        os.close(fd)
    return f"{major}.{minor}"


def cmd_kfd_version(args):
    if len(args) != 1:
        raise ResultsError("kfd-version takes one path (/dev/kfd)")
    try:
        print(kfd_version(args[0]))
        return 0
    except (OSError, ValueError) as e:
        print(str(e) if isinstance(e, ValueError) else f"{args[0]}: {e.strerror}")
        return 1


# ---- what is left of a sweep after a hang ----------------------------------------------------------------
def case_names(list_file):
    """Case names from `dmabench --list` (its '#' lines are comments)."""
    with open(list_file) as f:
        return [line.strip() for line in f if line.strip() and not line.startswith("#")]


def variant_key(name):
    """A case name without its timing and size: pattern/engine[,options]/dev=... (one variant's cases)."""
    parts = name.split("/")
    dev = next((i for i, p in enumerate(parts) if p.startswith("dev=")), None)
    if dev is None or dev < 2:
        raise ResultsError(f"case name {quote(name)} has no /dev=... part")
    return "/".join(parts[:dev - 1] + [parts[dev]])


def ere_literal(text):
    """`text` as a POSIX extended regular expression (dmabench's --benchmark_filter is std::regex::extended):
    every character that is not a letter or a digit in brackets."""
    return "".join(c if c.isalnum() else f"[{c}]" for c in text)


def cmd_remaining(args):
    """The --benchmark_filter that selects exactly the listed cases not yet recorded: nothing printed when none
    is left, '.' when none is recorded yet (the whole sweep)."""
    if len(args) != 2:
        raise ResultsError("remaining takes CASES.txt DONE.txt")
    names = case_names(args[0])
    done = set()
    if os.path.exists(args[1]):
        with open(args[1]) as f:
            done = {line.rstrip("\n") for line in f}
    left = [n for n in names if n not in done]
    if len(left) == len(names):
        print(".")
    elif left:  # the benchmark name is the case name, then /iterations:N (fixed samples), then /manual_time
        print("^(" + "|".join(ere_literal(n) for n in left) + ")/(iterations:[0-9]+/)?manual_time$")
    return 0


# ---- results ----------------------------------------------------------------------------------------------
def hung(record):
    return record["status"] == "failed" and str(record.get("reason", "")).startswith("timeout")


def cmd_recorded(args):
    if len(args) != 1:
        raise ResultsError("recorded takes one results file")
    for r in load(args[0])["results"]:
        fields = (r["name"], "hung" if hung(r) else r["status"], " ".join(str(r.get("reason", "")).split()))
        print("\t".join(map(printable, fields)))
    return 0


def merge(paths):
    docs = [load(p) for p in paths]
    if not docs:
        return None
    out = dict(docs[0])
    latest = {}
    for d in docs:  # a case recorded twice (a retry after a hang) keeps its last record
        for r in d["results"]:
            latest[r["name"]] = r
    out["results"] = list(latest.values())
    return out


def cmd_merge(args):
    if len(args) < 2:
        raise ResultsError("merge takes OUT.json and at least one results file")
    doc = merge(args[1:])
    tmp = args[0] + ".tmp"
    with open(tmp, "w") as f:
        json.dump(doc, f, indent=1)
    os.replace(tmp, args[0])
    return 0


def cmd_latte_baseline(args):
    """The variant name (dmabench.variant) of the sdma case DMA-Latte's speedups divide by: pcpy, linear,
    enqueue, recommended engines, atomic (or auto) completion, host submission; nothing when the file has none."""
    if len(args) != 1:
        raise ResultsError("latte-baseline takes one results file")
    with open(PUBLISHED) as f:
        pub = json.load(f)
    base = pub["speedup_over_pcpy"]["allgather"]["dmabench"]["pcpy"]["options"]
    for r in load(args[0])["results"]:
        if r["engine"] == "sdma" and r["status"] == "ok" and matches(r, base, pub["common_dmabench_options"]):
            print(variant(r))
            break
    return 0


def cmd_sizes(args):
    if len(args) != 3:
        raise ResultsError("sizes takes CONFIG.json SIZES OUT.json")
    sizes = [parse_size(s.strip(), TOOL) for s in args[1].split(",") if s.strip()]
    if not sizes:
        raise ResultsError(f"sizes: {quote(args[1])} names no size; accepted: a comma list such as 1KiB,64KiB,1MiB")
    try:
        with open(args[0]) as f:
            config = json.load(f)
    except (OSError, ValueError) as e:
        raise ResultsError(f"cannot read {args[0]}: {e}") from None
    config["sizes"] = sizes
    for part in config.get("sweeps", []):
        if "sizes" in part:
            part["sizes"] = sizes
    config["description"] = f"{config.get('description', '')} [amd-first-run: sizes {args[1]}]".strip()
    with open(args[2], "w") as f:
        json.dump(config, f, indent=1)
    return 0


# ---- the summary ------------------------------------------------------------------------------------------
def read_tsv(path, fields):
    if not os.path.exists(path):
        return []
    with open(path, newline="") as f:
        return [dict(zip(fields, row)) for row in csv.reader(f, delimiter="\t") if row]


def step_state(work, step):
    """(names listed, {name: record}, runs) of one step: every case the config lists, the last record of each
    case from the step's results files, and its dmabench runs (try, exit code, results file, note)."""
    names = case_names(os.path.join(work, "runs", step, "cases.txt")) if os.path.exists(os.path.join(work, "runs", step, "cases.txt")) else []
    runs = read_tsv(os.path.join(work, "runs", step, "runs.tsv"), ["try", "rc", "results", "note"])
    records = {}
    for run in runs:
        path = os.path.join(work, run.get("results") or "-")
        if run.get("results") and (os.path.isfile(path) or os.path.exists(path + ".journal")):
            for r in load(path)["results"]:
                records[r["name"]] = r
    return names, records, runs


def verdict_of(name, records):
    r = records.get(name)
    if r is None:
        return "not run"
    return "hung" if hung(r) else r["status"]


def runs_section(work, states, asked):
    out = ["\n## What ran\n"]
    rows = []
    for step, label in STEPS:
        names, records, runs = states[step]
        if not runs and not names:
            rows.append([label, "–", "–", "–", "–", "–", "–", "not run (see log.txt)" if step in asked else "not asked (--steps)"])
            continue
        v = [verdict_of(n, records) for n in names]
        rcs = sorted({r["rc"] for r in runs}, key=lambda x: int(x) if x.lstrip("-").isdigit() else 999)
        rows.append([label, str(len(names))] + [str(v.count(k)) for k in ("ok", "skipped", "failed", "hung", "not run")]
                    + [", ".join(rcs) or "–"])
    out.append(table(["step", "cases", "ok", "skipped", "failed", "hung", "not run", "dmabench exit codes"], rows))
    out.append("\nExit codes: 0 all ok or skipped, 1 a case failed, 2 bad input, 3 I/O or internal error, 4 a case hung "
               "(--case-timeout: the watchdog recorded it and stopped that run; the kit then ran the cases not yet "
               "recorded in a new process), anything else: dmabench crashed (its cases not recorded are `not run`).\n")
    return out


def problems_section(states):
    out = []
    hung_rows, failed_rows, skipped = [], [], {}
    for step, _ in STEPS:
        names, records, _ = states[step]
        for n in names:
            r = records.get(n)
            if r is None:
                continue
            reason = " ".join(str(r.get("reason", "")).split())
            if hung(r):
                hung_rows.append([step, f"`{n}`", reason[:160]])
            elif r["status"] == "failed":
                failed_rows.append([step, f"`{n}`", reason[:160]])
            elif r["status"] == "skipped":
                skipped.setdefault(reason[:200], []).append(n)
    out.append("\n## Hung cases (the watchdog's case)\n")
    out.append(table(["step", "case", "reason"], hung_rows) if hung_rows else "none\n")
    out.append("\n## Failed cases\n")
    out.append(table(["step", "case", "reason"], failed_rows[:60]) if failed_rows else "none\n")
    if len(failed_rows) > 60:
        out.append(f"\n... and {len(failed_rows) - 60} more (results/*.json)\n")
    out.append("\n## Skipped: the reasons\n")
    rows = [[str(len(v)), reason or "–", f"`{v[0]}`"] for reason, v in sorted(skipped.items(), key=lambda kv: -len(kv[1]))]
    out.append(table(["cases", "reason", "for example"], rows) if rows else "none\n")
    return out


def variants_section(states):
    out = ["\n## Per variant\n"]
    rows = []
    for step, _ in STEPS:
        names, records, _ = states[step]
        per = {}
        for n in names:
            r = records.get(n)
            label = variant(r) if r else variant_key(n).split("/")[1]
            key = (variant_key(n).split("/")[0], label, variant_key(n).split("/")[-1])
            per.setdefault(key, []).append(verdict_of(n, records))
        for (pattern, label, dev), v in per.items():
            rows.append([step, pattern, label, dev] + [str(v.count(k)) if v.count(k) else "" for k in ("ok", "skipped", "failed", "hung", "not run")])
    out.append(table(["step", "pattern", "variant", "devices", "ok", "skipped", "failed", "hung", "not run"], rows) if rows else "none\n")
    return out


def effective_sync(r):
    """The completion packet a sdma record's commands ended with: engine_details.sync where dmabench records it
    (sync=auto resolves per GPU), else the option."""
    details = r.get("engine_details") if isinstance(r.get("engine_details"), dict) else {}
    return details.get("sync") or r["options"].get("sync")


def matches(r, options, common):
    """A sdma record with these options; the paper's completion (ATOMIC) is sync=atomic or sync=auto."""
    want = {**common, **options}
    sync = want.pop("sync", None)
    return all(r["options"].get(k) == v for k, v in want.items()) and (sync is None or r["options"].get("sync") in (sync, "auto"))


def sdma_record(records, pattern, in_place, options, common, ranks, size):
    """The oneshot sdma record of (pattern, placement, options, ranks, S), or None; several (other options
    that the paper does not fix, e.g. max_packet_bytes) -> the lowest p50."""
    found = [r for r in records if r["engine"] == "sdma" and r["status"] == "ok" and r["timing"] == "oneshot"
             and r["pattern"] == pattern and bool(r.get("in_place")) == in_place and len(r["devices"]) == ranks
             and r["bytes"] == size and matches(r, options, common)]
    return min(found, key=lambda r: r["latency_us"]["p50"]) if found else None


def published_section(states):
    with open(PUBLISHED) as f:
        pub = json.load(f)
    src = pub["source"]
    out = [f"\n## Against DMA-Latte's published speedups\n\nSource: {src['repository']} `{src['file']}` @ "
           f"{src['commit'][:7]} ({', '.join(src['sections'])}); {pub['conditions']}. {pub['size_meaning']} "
           "dmabench's speedup is the p50 of the matching `sdma` pcpy case of the same step over the variant's p50 "
           f"(oneshot, validated cases only; options {json.dumps(pub['common_dmabench_options'])}, sync=auto "
           "counting as atomic, with a note where it completed with a fence).\n"]
    rows = []
    for step, _ in STEPS:
        records = list(states[step][1].values())
        for pattern, spec in pub["speedup_over_pcpy"].items():
            for row in spec["rows"]:
                rows += published_rows(pub, step, records, pattern, spec, row)
    out.append(table(["step", "pattern", "size (S)", "GPUs", "variant", "paper ×", "dmabench ×", "dmabench / paper", "note"], rows)
               if rows else "No `sdma` allgather / alltoall case at one of the paper's sizes (S = bytes per rank × GPUs) was recorded.\n")
    out += breakdown_rows(pub, [r for step, _ in STEPS for r in states[step][1].values()])
    return out


def published_rows(pub, step, records, pattern, spec, row):
    """Rows of one published size: every variant the paper measured, for every GPU count the step ran it on."""
    size, rows = row[0], []
    common = pub["common_dmabench_options"]
    for ranks in sorted({len(r["devices"]) for r in records if r["engine"] == "sdma" and r["bytes"] == size and r["pattern"] == pattern}):
        base_spec = spec["dmabench"]["pcpy"]
        base = sdma_record(records, pattern, base_spec["in_place"], base_spec["options"], common, ranks, size)
        for col, paper in zip(spec["columns"], row[1:]):
            if col == "pcpy" or col not in spec["dmabench"]:
                continue
            s = spec["dmabench"][col]
            r = sdma_record(records, pattern, s["in_place"], s["options"], common, ranks, size)
            notes = [f"{ranks} GPUs, the paper's are 8"] if ranks != 8 else []
            notes += [f"completion {effective_sync(x)} (the paper's: atomic)" for x in (base, r)[:1 if r is None else 2]
                      if x is not None and effective_sync(x) != "atomic"][:1]
            if any(x is not None and x.get("engine_details", {}).get("hardware_times") is False for x in (r, base)):
                notes.append("software engine: CPU-thread times, not comparable")
            if base is None or r is None:
                rows.append([step, pattern, fmt_size(size), str(ranks), col, f"{paper:.2f}", "–", "–",
                             "; ".join(notes + ["no validated case" + ("" if base else " for pcpy")])])
                continue
            mine = base["latency_us"]["p50"] / r["latency_us"]["p50"]
            rows.append([step, pattern, fmt_size(size), str(ranks), col, f"{paper:.2f}", f"{mine:.3g}", f"{mine / paper:.3g}",
                         "; ".join(notes)])
    return rows


def breakdown_rows(pub, records):
    spec = pub["breakdown_percent"]
    rows = []
    for row in spec["rows"]:
        size, paper_non_copy = row[0], row[-1]
        for r in records:
            b = r.get("breakdown_us")
            if r["engine"] != "sdma" or r["pattern"] != "copy" or r["bytes"] != size or r["status"] != "ok" or not isinstance(b, dict) or "error" in b:
                continue
            total = b.get("total") or 0
            mine = 100 * (total - b["copy"]) / total if total else None
            note = "software engine: CPU-thread times" if r.get("engine_details", {}).get("hardware_times") is False else ""
            rows.append([fmt_size(size), variant(r), f"{paper_non_copy}%", f"{mine:.0f}%" if mine is not None else "–", note])
    if not rows:
        return ["\nBreakdown (paper: share of a copy's latency that is not the copy): no `sdma` copy with a breakdown at one of the paper's sizes.\n"]
    return ["\n**Breakdown of one copy: share that is not the copy** (paper: control + schedule + sync)\n",
            table(["size", "variant", "paper", "dmabench", "note"], rows)]


def checks_section(work):
    checks = read_tsv(os.path.join(work, "checks.tsv"), ["check", "verdict", "value", "meaning"])
    rows = [[c["check"], f"**{c['verdict']}**", c["value"], c["meaning"]] for c in checks]
    return ["\n## Checks\n", table(["check", "verdict", "value", "what it means"], rows) if rows else "no checks recorded\n"]


def features_section(work):
    """The lines of `dmabench --features` about AMD completion and engines (atomics, usable engines), if any."""
    path = os.path.join(work, "features-amd.txt")
    lines = open(path).read().strip() if os.path.exists(path) else ""
    return ["\n**dmabench --features on atomics and usable SDMA engines** (all of it: features.txt)\n",
            "```\n" + lines + "\n```" if lines else "no such line in this build's --features"]


def cmd_summary(args):
    if len(args) != 1:
        raise ResultsError("summary takes the work directory")
    work = args[0]
    meta = {}
    if os.path.exists(os.path.join(work, "meta.tsv")):
        meta = {r["k"]: r["v"] for r in read_tsv(os.path.join(work, "meta.tsv"), ["k", "v"])}
    states = {step: step_state(work, step) for step, _ in STEPS}
    out = ["# dmabench first run on AMD: summary\n",
           "\n".join(f"- {k}: {v}" for k, v in meta.items()) + "\n"]
    if meta.get("backend") == "host":
        out.append("**Host backend: the software SDMA engine stood in for the GPUs. No number here is a hardware "
                   "measurement; the checks read the topology under the root given.**\n")
    asked = meta.get("steps", ",".join(step for step, _ in STEPS)).split(",")
    out += checks_section(work) + features_section(work) + runs_section(work, states, asked) + problems_section(states)
    out += published_section(states) + variants_section(states)
    with open(os.path.join(work, "summary.md"), "w") as f:
        f.write("\n".join(out).rstrip("\n") + "\n")
    print(sum(verdict_of(n, states[step][1]) in ("failed", "hung", "not run") for step, _ in STEPS for n in states[step][0]))
    return 0


COMMANDS = {"kfd-version": cmd_kfd_version, "remaining": cmd_remaining, "recorded": cmd_recorded,
            "merge": cmd_merge, "sizes": cmd_sizes, "latte-baseline": cmd_latte_baseline, "summary": cmd_summary}


def run(argv):
    if not argv or argv[0] not in COMMANDS:
        raise ResultsError(f"expected a command: {', '.join(COMMANDS)}")
    try:
        return COMMANDS[argv[0]](argv[1:])
    except (OSError, ValueError, KeyError, IndexError) as e:
        raise ResultsError(f"{argv[0]}: {e}") from None


def main(argv=None, tool=TOOL):
    return run_tool(tool, run, sys.argv[1:] if argv is None else argv)


if __name__ == "__main__":
    sys.exit(main())
