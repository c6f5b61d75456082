"""Levels across fresh processes: the results documents of N processes of one build and config merged into one
levels document (results/SCHEMA.md, "Levels across fresh processes"; standard library only).

`merge(docs, files)` is the merge, `refuse_unmergeable(docs, files)` what scripts/merge_runs.py (its command line)
refuses before it. dmabench --processes merges the same way (bench/levels/levels.cpp); tests/data/levels/expected.json
binds both. The checks of dmabench.schema.check_document come first: fields it does not check (`cpu`,
`case_index`, `iterations`, `layout`, `context.calibration`) are read only where they have the expected type."""
import copy
import math
import os
from fractions import Fraction

from .keys import case_key
from .text import quote, ResultsError

LATENCY = ("min", "p50", "mean", "p95", "p99", "max", "stddev")
NOT_RUN = {"status": "not run", "reason": "the process ended before this case"}  # a case a process's file lacks


def number(value):
    """Whether `value` is a finite JSON number (not a bool)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    try:
        return math.isfinite(value)
    except OverflowError:
        return False


def integer(value):
    return isinstance(value, int) and not isinstance(value, bool)


def median(values):
    """The median of numbers: for an even count the mean of the two middle ones (taken so that it cannot
    overflow)."""
    v = sorted(values)
    a, b = v[(len(v) - 1) // 2], v[len(v) // 2]
    return a if a == b else a + (b - a) / 2


def median_ranks(m):
    """(j, k, coverage) of the between-process interval of m >= 2 p50s: the sorted p50s of ranks j and k = m + 1 - j
    (1-based) hold the median with probability coverage = 1 - 2 P(B <= j - 1), B ~ binomial(m, 1/2). m >= 6: j is the
    largest rank for which that is at least 0.95 (exact); below, [min, max]: 1 - 2/2^m."""
    if m < 6:
        return 1, m, 1 - 2 / 2 ** m
    j, below, total = 0, 0, 2 ** m  # below = 2^m P(B <= j - 1)
    while 40 * (below + math.comb(m, j)) <= total:  # P(B <= j) <= 0.025
        below += math.comb(m, j)
        j += 1
    return j, m + 1 - j, float(1 - Fraction(2 * below, total))


# ---- one case ----------------------------------------------------------------------------------------------------

def own_noise(r):
    """An ok record's own interval's half-width over its p50: its `noise`, else from its interval, else None."""
    if number(r.get("noise")):
        return r["noise"]
    pair, p50 = r.get("p50_interval_us"), r["latency_us"]["p50"]
    return max(p50 - pair[0], pair[1] - p50) / p50 if isinstance(pair, list) and len(pair) == 2 else None


def operation_bytes(r):
    """S of an ok record: `bytes`, else (null or below 0) what its algbw and p50 imply."""
    size = r.get("bytes")
    return size if integer(size) and size >= 0 else r["algbw_GBps"] * r["latency_us"]["p50"] * 1e3


def gbps(size, us):
    """size / us in GB/s; None where it is unbounded (a 0 µs end) or beyond a float."""
    if us <= 0:
        return None
    value = size / (us * 1e3)
    return value if math.isfinite(value) else None


def sampled(r, ok):
    """`r` (the median process's record) with iterations, sampling.samples and sampling.seconds of all `ok`."""
    r["iterations"] = sum(p["iterations"] for p in ok if integer(p.get("iterations")))
    if isinstance(r.get("sampling"), dict):
        parts = [p["sampling"] for p in ok if isinstance(p.get("sampling"), dict)]
        r["sampling"]["samples"] = sum(s["samples"] for s in parts)
        r["sampling"]["seconds"] = sum(s["seconds"] for s in parts)
    return r


def between_interval(r, p50s):
    """`r` with its interval the between-process interval of `p50s` (m >= 2), and what follows from it; (j, k,
    coverage) of that interval."""
    j, k, coverage = median_ranks(len(p50s))
    low, high = sorted(p50s)[j - 1], sorted(p50s)[k - 1]
    p50, size, factor = r["latency_us"]["p50"], operation_bytes(r), busbw_factor(r)
    r["p50_interval_us"] = [low, high]
    r["noise"] = max(p50 - low, high - p50) / p50
    max_noise = r["sampling"].get("max_noise") if isinstance(r.get("sampling"), dict) else None
    r["noisy"] = r["noise"] > (max_noise if number(max_noise) else 0)
    algbw = [gbps(size, high), gbps(size, low)]
    r["algbw_interval_GBps"] = algbw
    r["busbw_interval_GBps"] = [None if x is None else x * factor for x in algbw]
    return j, k, coverage


def busbw_factor(r):
    """busbw / algbw of a record (the pattern's factor), 1 where algbw is 0."""
    return r["busbw_GBps"] / r["algbw_GBps"] if r["algbw_GBps"] else 1.0


def figures(ok, mid):
    """The median process's record `ok[mid]` with its figures taken across the ok records `ok` (process order)."""
    r = sampled(copy.deepcopy(ok[mid]), ok)
    factor, size = busbw_factor(ok[mid]), operation_bytes(ok[mid])
    r["latency_us"] = {k: median([p["latency_us"][k] for p in ok]) for k in LATENCY}
    p50 = r["latency_us"]["p50"]
    r["algbw_GBps"] = size / (p50 * 1e3)
    r["busbw_GBps"] = r["algbw_GBps"] * factor
    lay = r.get("layout")
    if isinstance(lay, dict) and integer(lay.get("blocks_per_op")) and 0 < lay["blocks_per_op"] < 1 << 63:
        r["per_block_us"] = p50 / lay["blocks_per_op"]
    return r


def process_draws(record):
    """The per-process p50s of a levels file's ok record (`levels.p50_us` without the nulls of the processes that did
    not have the case ok, and without anything that is not a positive number); [] for a one-process record."""
    lv = record.get("levels") if isinstance(record, dict) and record.get("status") == "ok" else None
    values = lv.get("p50_us") if isinstance(lv, dict) else None
    return [x for x in values if number(x) and x > 0] if isinstance(values, list) else []


def shared_fraction(record):
    """A record's core_share.shared over probed (its samples taken on a shared core), or None without one or where
    the two cannot be counts of it (shared below 0 or above probed: compare printed -0.67 and inf as facts)."""
    c = record.get("core_share")
    if not isinstance(c, dict) or not number(c.get("probed")) or c["probed"] <= 0 or not number(c.get("shared")):
        return None
    if not 0 <= c["shared"] <= c["probed"]:
        return None
    return c["shared"] / c["probed"]


def levels_of(places, r, median_process, interval):
    """The record's `levels` (without `missing`): each process's part, and the interval `interval` ((j, k,
    coverage), None for one process)."""
    ok = [p[0] if p and p[0]["status"] == "ok" else None for p in places]
    p50s = [x["latency_us"]["p50"] for x in ok if x]
    noises = [own_noise(x) for x in ok if x]
    p50 = r["latency_us"]["p50"]
    return {"processes": len(p50s), "of": len(places),
            "p50_us": [x["latency_us"]["p50"] if x else None for x in ok],
            "noise": [own_noise(x) if x else None for x in ok], "cpu": [x.get("cpu") if x else None for x in ok],
            "order": [p[1] if x else None for p, x in zip(places, ok)],
            "core_shared": [shared_fraction(x) if x else None for x in ok],
            "interval": "between processes" if interval else "within one process",
            "coverage": interval[2] if interval else None, "ranks": list(interval[:2]) if interval else None,
            "between": r["noise"] if interval else None,
            "within": median([x for x in noises if x is not None]) if any(x is not None for x in noises) else None,
            "spread": (max(p50s) - min(p50s)) / p50, "median_process": median_process + 1}


def missing_of(places):
    """{process, status, reason} of each process that did not have the case ok."""
    return [{"process": k + 1, **({"status": p[0]["status"], "reason": p[0].get("reason", "")} if p else NOT_RUN)}
            for k, p in enumerate(places) if not p or p[0]["status"] != "ok"]


def merge_case(places):
    """The levels record of one case from `places`: per process (in process order) (its record, its place in that
    process's run order), or None where the process's file lacks the case."""
    present = [(k, p[0]) for k, p in enumerate(places) if p]
    ok = [(k, r) for k, r in present if r["status"] == "ok"]
    failed = next(((k, r) for k, r in present if r["status"] == "failed"), None)
    if failed or not ok:  # failed in any process: failed; skipped in every one: skipped; no figures either way
        k, r = failed or present[0]
        out = copy.deepcopy(r)
        if failed:
            out["reason"] = f"process {k + 1} of {len(places)}: {r.get('reason', '')}"
        out["levels"] = {"processes": len(ok), "of": len(places), "missing": missing_of(places)}
        return out
    by_p50 = sorted(range(len(ok)), key=lambda i: ok[i][1]["latency_us"]["p50"])  # stable: ties in process order
    mid = by_p50[(len(ok) - 1) // 2]  # the median process (the lower middle one for an even count)
    out = figures([r for _, r in ok], mid)
    interval = between_interval(out, [r["latency_us"]["p50"] for _, r in ok]) if len(ok) > 1 else None
    out["levels"] = levels_of(places, out, ok[mid][0], interval)
    out["levels"]["missing"] = missing_of(places)
    return out


# ---- the documents -----------------------------------------------------------------------------------------------

def matched(docs):
    """Every case of the documents as its places in each process (merge_case), matched by case_key (a case a file
    holds twice: its n-th record with the others' n-th), in case_index order; where records have no case_index, in
    the order first seen (the first file's order, then what only later files hold)."""
    table, seen_order = {}, []
    for k, doc in enumerate(docs):
        seen = {}
        for i, r in enumerate(doc["results"]):
            key = case_key(r)
            ident = (key, seen.setdefault(key, 0))
            seen[key] += 1
            if ident not in table:
                table[ident] = [None] * len(docs)
                index = r.get("case_index")
                seen_order.append((index if integer(index) else len(seen_order), len(seen_order), ident))
            table[ident][k] = (r, i)
    return [table[ident] for _, _, ident in sorted(seen_order, key=lambda s: s[:2])]


def probe(calibration, name):
    """The probe `name` of a context's calibration, or {}."""
    probes = calibration.get("probes") if isinstance(calibration, dict) else None
    found = probes.get(name) if isinstance(probes, dict) else None
    return found if isinstance(found, dict) else {}


def merged_calibration(docs):
    """context.calibration of a levels file: the first process's, with per probe the median over the processes of
    p50_us and p95_us, the smallest min_us and per_process_p50_us; cpu (and the clock of that CPU) null. None where
    the first process has no probes."""
    cals = [d["context"].get("calibration") for d in docs]
    if not isinstance(cals[0], dict) or not isinstance(cals[0].get("probes"), dict):
        return None
    out = copy.deepcopy(cals[0])
    out.update(cpu=None, cpu_mhz=None, cpu_mhz_source=None)
    for name, p in out["probes"].items():
        if not isinstance(p, dict):
            continue
        each = [probe(c, name) for c in cals]
        for field, pick in (("p50_us", median), ("p95_us", median), ("min_us", min)):
            values = [q.get(field) for q in each if number(q.get(field))]
            p[field] = pick(values) if values else None
        p["per_process_p50_us"] = [q.get("p50_us") if number(q.get("p50_us")) else None for q in each]
    if "core_share" in out:  # every process's own (bench/measure/core_share.hpp)
        out["core_share"] = {"threshold": (out["core_share"] or {}).get("threshold"),
                             "per_process": [c.get("core_share") if isinstance(c, dict) else None for c in cals]}
    return out


def per_process(docs, files):
    """context.levels.per_process: each process's part of its context."""
    out = []
    for k, (doc, path) in enumerate(zip(docs, files)):
        c = doc["context"]
        out.append({"index": k + 1, "file": os.fspath(path), "exit_code": None, "started_at": c.get("started_at"),
                    "wall_s": c.get("wall_s"), "host": c.get("host"),
                    "git_revision": (c.get("dmabench") or {}).get("git_revision"), "order": c.get("order"),
                    "cpu_affinity": c.get("cpu_affinity"), "calibration": c.get("calibration")})
    return out


def merge(docs, files, merged_by="merge_runs.py"):
    """The levels document of the results documents `docs` of N processes (checked by check_document; `files`:
    their paths, in the same process order): one record per case (merge_case) in case_index order; the context is
    the first process's with `levels` (processes, merged, merged_by, order and order_seed null, per_process) and the
    merged calibration (merged_calibration)."""
    if not docs or len(docs) != len(files):
        raise ValueError("merge: one path per document, at least one")
    ctx = copy.deepcopy(docs[0]["context"])
    ctx["levels"] = {"processes": len(docs), "merged": len(docs), "merged_by": merged_by, "order": None,
                     "order_seed": None, "per_process": per_process(docs, files)}
    calibration = merged_calibration(docs)
    if calibration is not None:
        ctx["calibration"] = calibration
    return {"schema": docs[0]["schema"], "context": ctx, "results": [merge_case(places) for places in matched(docs)]}


# ---- what cannot be merged ---------------------------------------------------------------------------------------

def first_difference(a, b, where):
    """The dotted path of the first field where two JSON values differ (objects compared key by key, anything else
    whole), or None. Not recursive: the parser accepted the nesting, this must not fail on it."""
    stack = [(a, b, where)]
    while stack:
        a, b, where = stack.pop()
        if not (isinstance(a, dict) and isinstance(b, dict)):
            if not (type(a) is type(b) and a == b):
                return where
            continue
        keys = list(a) + [k for k in b if k not in a]
        for key in keys:
            if key not in a or key not in b:
                return f"{where}.{_key(key)}"
        stack += [(a[key], b[key], f"{where}.{_key(key)}") for key in reversed(keys)]
    return None


def _key(key):
    """A key of a file's object in a dotted path: as it is where it is a short name, else quoted (dmabench.text.quote:
    a key of a megabyte, or one with a control character in it)."""
    return key if key.isidentifier() and len(key) <= 40 else quote(key, 40)


def refuse_unmergeable(docs, files):
    """ResultsError (one line naming the file and the field) unless `docs` are the results files of 2 or more
    processes of one build and config: no levels file, one context.config, one context.dmabench.git_revision, no
    file given twice."""
    if len(docs) < 2:
        raise ResultsError(f"{files[0] if files else 'no file'}: one results file; a merge takes the results files of "
                           "2 or more processes")
    seen = {}
    for doc, path in zip(docs, files):
        ident = file_identity(path)
        if ident in seen:
            raise ResultsError(f"{path}: given twice (the same file as {seen[ident]}); each process's file once")
        seen[ident] = path
        if "levels" in doc["context"]:
            raise ResultsError(f"{path}: context.levels: already a levels file; merge the results files of the "
                               "processes it was made from")
    first, revision = docs[0]["context"], (docs[0]["context"].get("dmabench") or {}).get("git_revision")
    for doc, path in zip(docs[1:], files[1:]):
        differs = first_difference(first.get("config"), doc["context"].get("config"), "context.config")
        if differs:
            raise ResultsError(f"{path}: {differs} differs from {files[0]}'s: the files of one merge come from one "
                               "config")
        theirs = (doc["context"].get("dmabench") or {}).get("git_revision")
        if theirs != revision:
            raise ResultsError(f"{path}: context.dmabench.git_revision {quote(theirs, 40)} differs from {files[0]}'s "
                               f"{quote(revision, 40)}: the files of one merge come from one build")


def file_identity(path):
    """What makes two paths one file: its device and inode, or its real path where it cannot be stat'ed (a journal
    read in place of a results file that is not there)."""
    try:
        st = os.stat(path)
        return st.st_dev, st.st_ino
    except (OSError, ValueError):
        return os.path.realpath(path)
