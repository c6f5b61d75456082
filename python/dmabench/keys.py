"""A case's identity and labels: case_key (its full identity across runs), its variant, where its bytes lie, its
pattern and placement, how cases that share a label are told apart, and a file's machine and versions caption."""
import json
import os
import re

from .text import INT64, fmt_size, quote


def _builtin_patterns():
    with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "patterns.json"), encoding="utf-8") as f:
        return json.load(f)


# What each pattern is, as the program writes it (context.patterns: patterns/pattern.hpp's pattern_specs_json; name,
# description, bidirectional, host_memory, routed, breakdown, in_place, pairs), in its display order (the registry's).
# patterns.json holds the built-in ones for files written before the field; tests/results_keys_test.py keeps it equal
# to what the program writes. No list of pattern names is kept anywhere else in Python.
PATTERNS = _builtin_patterns()
PATTERN_ORDER = [p["name"] for p in PATTERNS]


def pattern_specs(doc=None):
    """The patterns a results document's program knew (its context.patterns), else the built-in ones."""
    specs = ((doc or {}).get("context") or {}).get("patterns")
    return specs if isinstance(specs, list) and specs else PATTERNS


def pattern_spec(name, doc=None):
    """One pattern's properties ({} for a name the program did not know)."""
    return next((p for p in pattern_specs(doc) if p.get("name") == name), {})


def p50_interval(result):
    """An ok record's 95% interval of its p50 in µs, (low, high), or None where the file has none (written before
    dmabench recorded intervals)."""
    pair = result.get("p50_interval_us")
    return tuple(pair) if isinstance(pair, list) and len(pair) == 2 else None


NOISY_LEGEND = ("p50 ± half its interval (`p50_interval_us`, the larger side: within one process a 95% interval; "
                "a levels file's between its processes, whose coverage is `levels.coverage`: 75% for 3 processes, "
                "93.75% for 5, at least 95% from 6); `noisy`: the interval is wider than the run's `max_noise`, or "
                "fewer than 6 samples: the p50 is not known to that precision")


def p50_text(result, digits=1):
    """An ok record's p50 with its interval, as the markdown summaries and the console show it: '12.3 ±0.4', and
    ' noisy' after it where the record is flagged `noisy`; the bare p50 where the file has no interval."""
    return interval_text(result["latency_us"]["p50"], p50_interval(result), result.get("noisy"),
                         lambda v: f"{v:.{digits}f}")


def interval_text(p50, pair, noisy, fmt):
    """fmt(p50), ' ±' fmt(the larger side of the interval `pair`) where there is one, ' noisy' where `noisy` is True."""
    text = fmt(p50)
    if pair:
        try:
            text += f" ±{fmt(max(p50 - float(pair[0]), float(pair[1]) - p50, 0.0))}"
        except (TypeError, ValueError):
            pass
    return text + (" noisy" if noisy is True else "")


def engine_options_in_name(result):
    """The engine options a case's name lists, as (option, value text) pairs in the name's order.

    dmabench names a case `<pattern>/engine[,option=value...]/timing/dev=.../size[/rotate=N][/beside=...]`,
    listing there exactly the options that differ from their defaults in its engine tables (which newer files
    also record as `context.engines`): the name alone says what was not a default, in every file. (Files written
    before dmabench 87e7502, results/h200x2/default.json, listed every option: 'sm,blocks=auto'.) The engine part
    ends at the record's own `/timing/dev=`, so a value with '/' in it (hsa's map:FILE) is read whole."""
    name, engine, timing = result["name"], result["engine"], result["timing"]
    rest = name.split("/", 1)[1] if "/" in name else ""
    end = rest.rfind(f"/{timing}/dev=")
    segment = rest[:end] if end >= 0 else ""
    if segment != engine and not segment.startswith(engine + ","):
        raise ValueError(f"case name {quote(name)} does not have the form pattern/{quote(engine, 30)}[,option=value...]/"
                         f"{quote(timing, 30)}/dev=...")
    pairs = re.split(r",(?=[A-Za-z_][A-Za-z0-9_]*=)", segment[len(engine) + 1:]) if segment != engine else []
    return [tuple(p.split("=", 1)) for p in pairs]


def software_times(result):
    """Whether the case's times are not hardware times (engine_details.hardware_times false: the sdma engine on the
    host backend's software SDMA engine, whose latencies are CPU-thread times)."""
    details = result.get("engine_details")
    return isinstance(details, dict) and details.get("hardware_times") is False


def variant(result):
    """Engine and its non-default options, as the case's name lists them (sorted): 'ce graph=true,schedule=pcpy';
    rotation over buffer sets is part of what was measured, so it is added ('ce rotate=3'); times that are not
    hardware times say so ('sdma packet=swap [software engine]'), in every table and figure."""
    opts = [f"{k}={v}" for k, v in sorted(engine_options_in_name(result))]
    rotate = result.get("rotate", 1)
    if rotate and rotate > 1:
        opts.append(f"rotate={rotate}")
    return result["engine"] + (" " + ",".join(opts) if opts else "") + (" [software engine]" if software_times(result) else "")


def where(result):
    """Where a case's bytes lie, when that is more than device buffers: its host-memory kind and its block layout,
    e.g. 'pinned, 1024 x 4 KiB random in 4 GiB'; '' for contiguous device buffers."""
    parts = []
    host = result.get("host_memory")
    if isinstance(host, dict) and host.get("kind"):
        parts.append(str(host["kind"]))
    lay = result.get("layout")
    if isinstance(lay, dict) and lay.get("kind") == "blocks":
        count = lay.get("blocks") or lay.get("blocks_per_op")
        block = fmt_size(lay["block_bytes"]) if isinstance(lay.get("block_bytes"), int) else "?"
        pool = f" in {fmt_size(lay['pool_bytes'])}" if isinstance(lay.get("pool_bytes"), int) and lay["pool_bytes"] else ""
        parts.append(f"{count} x {block} {lay.get('order', '')}{pool}".replace("  ", " ").strip())
    moe = result.get("alltoallv")
    if isinstance(moe, dict):
        splits = str(moe.get("splits"))
        if moe.get("skew") is not None:
            splits += f" {moe['skew']}"
        if moe.get("step") is not None:
            splits += f" step {moe['step']}"
        tb = fmt_size(moe["token_bytes"]) if isinstance(moe.get("token_bytes"), int) else "?"
        top = f" top-{moe['topk']}" + (f"/{moe['experts']}" if moe.get("experts") else "") if moe.get("topk") else ""
        parts.append(f"{moe.get('direction')} {moe.get('tokens')} {splits}, {moe.get('tokens_per_rank')} x {tb}{top}, "
                     f"{moe.get('ranks')} ranks")
    return ", ".join(parts)


def pattern_label(pattern, in_place=False):
    """How the scripts show a case's pattern: 'allgather', or 'allgather (in place)' when its `in_place` is true."""
    return f"{pattern} (in place)" if in_place else pattern


def placement(result):
    """A case's pattern and placement, (pattern, in_place): what the scripts group cases by."""
    return result["pattern"], bool(result.get("in_place"))


def placement_order(key):
    """Sort key of (pattern, in_place) pairs: PATTERN_ORDER, out of place before in place."""
    pattern, in_place = key
    return (PATTERN_ORDER.index(pattern) if pattern in PATTERN_ORDER else len(PATTERN_ORDER), pattern, in_place)


def beside(result):
    """The compute workload an overlap case ran beside ('gemm-bf16-8192x8192x8192'), or ''."""
    name = result.get("name", "")
    return name.split("/beside=", 1)[1] if "/beside=" in name else ""


def spread(result):
    """How far an ok case's samples scatter above their median: (p95 - p50) / p50 (its noise, for comparisons)."""
    lat = result["latency_us"]
    return max(0.0, (lat["p95"] - lat["p50"]) / lat["p50"])


LAUNCH_BOUND_BYTES = 1 << 20  # below this many bytes per command, what a command costs makes most of a case's time


def _count(value):
    """Whether `value` is a positive integer of at most 64 bits (a count check_document does not check)."""
    return isinstance(value, int) and not isinstance(value, bool) and 0 < value < INT64


def command_bytes(result):
    """The bytes one command of a case moves: for a block layout S / `layout.blocks_per_op` (S = `bytes`, else
    bytes_per_rank); for alltoallv, with `tokens` packed (one transfer per non-empty pair) S / the number of non-zero
    `pair_tokens` entries, else (one transfer per token copy) `alltoallv.token_bytes`; otherwise `bytes_per_rank`.
    Where those fields are missing or malformed: `bytes_per_rank`."""
    size = result["bytes"] if _count(result.get("bytes")) else result["bytes_per_rank"]
    lay, moe = result.get("layout"), result.get("alltoallv")
    if isinstance(lay, dict) and lay.get("kind") == "blocks" and _count(lay.get("blocks_per_op")):
        return size / lay["blocks_per_op"]
    if isinstance(moe, dict) and moe.get("tokens") == "packed":
        rows = moe.get("pair_tokens") if isinstance(moe.get("pair_tokens"), list) else []
        pairs = sum(1 for row in rows if isinstance(row, list) for t in row
                    if isinstance(t, (int, float)) and not isinstance(t, bool) and t > 0)
        return size / pairs if pairs else result["bytes_per_rank"]
    if isinstance(moe, dict) and _count(moe.get("token_bytes")):
        return moe["token_bytes"]
    return result["bytes_per_rank"]


def case_class(result):
    """"launch-bound" when one command of the case moves less than 1 MiB (command_bytes: a block of a block layout,
    a pair's tokens of a packed alltoallv, one token of a scattered one, else the bytes per rank), so that what a
    command costs the process (the launch and its completion, which move from one process start to the next: SCHEMA.md,
    "Levels across fresh processes") is most of its time; else "bandwidth-bound"."""
    return "launch-bound" if command_bytes(result) < LAUNCH_BOUND_BYTES else "bandwidth-bound"


def _load_key_spec():
    with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "case_key.json"), encoding="utf-8") as f:
        return json.load(f)["parts"]


# The parts of a case's identity and how each is taken from a record: case_key.json, the one definition the C++
# program embeds too (bench/run/case_key.cpp). KEY_PARTS: their names, in order.
KEY_SPEC = _load_key_spec()
KEY_PARTS = tuple(p["part"] for p in KEY_SPEC)
_MISSING = object()


def _key_value(part, result):
    """One part of a record's key as case_key.json's rule takes it (_MISSING: an optional part left out)."""
    value = result.get(part["field"], part.get("absent"))
    rule = part["rule"]
    if rule == "true":
        return value is True
    if rule == "after":
        name = value if isinstance(value, str) else ""
        return name.split(part["marker"], 1)[1] if part["marker"] in name else ""
    if rule == "unless":
        if not isinstance(value, dict) or value.get("kind", part["kind_absent"]) == part["plain"]:
            return None
        return {k: v for k, v in value.items() if k not in part["drop"]}
    if rule in ("pick", "pick_object"):
        if not isinstance(value, dict):
            return _MISSING if part.get("optional") else None
        picked = {k: value.get(k) for k in part["keys"]}
        for k in part.get("basename", ()):
            picked[k] = os.path.basename(picked[k]) if isinstance(picked[k], str) and picked[k] else None
        return picked if rule == "pick_object" else [picked[k] for k in part["keys"]]
    if rule != "value":
        raise ValueError(f"case_key.json: unknown rule {rule!r}")
    return value


def _python_form(part, value):
    form = part["python"]
    if value is None or form == "value":
        return value
    return tuple(value) if form == "tuple" else json.dumps(value, sort_keys=True)


def case_key(result):
    """The full identity of a case across runs, as case_key.json defines it: pattern and placement, engine, options,
    devices, bytes, timing, workload, rotation, block layout (contiguous: None, as in files without `layout`) and host
    memory (kind and NUMA request) and, for alltoallv, the routing, so that pinned and mapped, 1024 x 4 KiB and 64 x
    64 KiB blocks of one size, or two routings of one size, stay apart. A hashable tuple, one entry per part."""
    key = []
    for part in KEY_SPEC:
        value = _key_value(part, result)
        if value is not _MISSING:
            key.append(_python_form(part, value))
    return tuple(key)


# What sets one case apart from another of the same pattern, engine variant, timing and size (case_key has all of
# it): how the scripts' rows and cells keyed by variant and size name a case that would share one with another
CASE_PARTS = (("ranks", lambda r: f"ranks={r.get('ranks')}"), ("devices", lambda r: f"dev={','.join(map(str, r['devices']))}"),
              ("bytes", lambda r: f"S={r.get('bytes')}"), ("where", where), ("beside", beside))


def labels_apart(records, label=variant):
    """{id(r): name} of the records: `label(r)` (the variant), where records of one pattern and placement with that
    label are different cases (case_key) of one timing and size (a 2-rank and a 4-rank all-gather; pinned and mapped
    host memory), with the parts of CASE_PARTS that tell them apart added ('ce [ranks=4]') to all of that label's
    records: a row or cell keyed by (pattern, name, timing, size) then holds one case (or the same case measured
    again in one file)."""
    groups = {}
    for r in records:
        groups.setdefault((placement(r), label(r)), []).append(r)
    out = {}
    for (_, name), rs in groups.items():
        parts = _parts_apart(rs)
        for r in rs:
            extra = ", ".join(p for p in (f(r) for f in parts) if p)
            out[id(r)] = f"{name} [{extra}]" if extra else name
    return out


def _parts_apart(records):
    """The parts of CASE_PARTS, in order, that tell the different cases of one timing and size among `records` apart:
    each taken where it differs within a cell whose cases the parts taken before it do not tell apart."""
    cells = {}
    for r in records:
        cells.setdefault((r["timing"], r["bytes_per_rank"]), {}).setdefault(json.dumps(case_key(r)), r)
    parts = []
    for _, f in CASE_PARTS:
        shared = [c for c in cells.values() if len({tuple(g(r) for g in parts) for r in c.values()}) < len(c)]
        if not shared:
            break
        if any(len({f(r) for r in c.values()}) > 1 for c in shared):
            parts.append(f)
    return parts


def machine_label(doc):
    """Short machine description from a results file's context: '2 x NVIDIA H200' or the host CPU."""
    ctx = doc.get("context", {})
    devices = ctx.get("machine", {}).get("devices", [])
    if devices:
        names = sorted({str(d.get("name", "?")) for d in devices})  # not checked: any JSON value
        return f"{len(devices)} x {'/'.join(names)}"
    return f"host {ctx.get('machine', {}).get('cpu', ctx.get('host', '?'))}"


def versions_caption(doc):
    """One line with the machine, software versions and dmabench revision of a results file."""
    ctx = doc.get("context", {})
    v = ctx.get("machine", {}).get("versions", {})
    parts = [machine_label(doc)]
    if v:
        parts.append(", ".join(f"{k.replace('_', ' ')} {val}" for k, val in v.items() if val))
    parts.append(f"dmabench {ctx.get('dmabench', {}).get('git_revision', '?')}, {ctx.get('date', '?')[:10]}")
    return "; ".join(parts)
