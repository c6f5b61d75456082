"""Shared helpers for the scripts that read dmabench results files (standard library only)."""
import json
import re

SCHEMA_PREFIX = "dmabench/"
PATTERN_ORDER = ["copy", "bidir", "allgather", "alltoall"]
# Engine options at their default value; variant names leave them out.
OPTION_DEFAULTS = {"schedule": "b2b", "streams": "auto", "trigger": "enqueue", "completion": "event", "graph": False,
                   "gate": "wait-value", "issue": "caller", "cta_policy": "default", "blocks": "auto"}
UNITS = {"": 1, "b": 1, "k": 1024, "kib": 1024, "kb": 1000, "m": 1 << 20, "mib": 1 << 20, "mb": 10**6,
         "g": 1 << 30, "gib": 1 << 30, "gb": 10**9, "t": 1 << 40, "tib": 1 << 40, "tb": 10**12}


def load(path, tool):
    """The results document at `path`; exits with a one-line message naming `tool` when it is not one."""
    try:
        with open(path) as f:
            doc = json.load(f)
    except (OSError, ValueError) as e:
        raise SystemExit(f"{tool}: cannot read {path}: {e}")
    if not isinstance(doc, dict) or not str(doc.get("schema", "")).startswith(SCHEMA_PREFIX):
        raise SystemExit(f"{tool}: {path} is not a dmabench results file (no 'schema': 'dmabench/...')")
    return doc


def variant(result):
    """Engine and its non-default options: 'ce schedule=pcpy,graph=true'."""
    opts = []
    for k, v in sorted(result.get("options", {}).items()):
        if OPTION_DEFAULTS.get(k) == v:
            continue
        opts.append(f"{k}={str(v).lower() if isinstance(v, bool) else v}")
    return result["engine"] + (" " + ",".join(opts) if opts else "")


def fmt_size(n):
    for unit, f in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= f and n % f == 0:
            return f"{n // f} {unit}"
    return f"{n} B"


def parse_size(text, tool):
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([a-zA-Z]*)\s*", text)
    if not m or m.group(2).lower() not in UNITS:
        raise SystemExit(f"{tool}: '{text}' is not a size such as 64KiB")
    return int(float(m.group(1)) * UNITS[m.group(2).lower()])


def table(header, rows):
    out = ["| " + " | ".join(header) + " |", "|" + " --- |" * len(header)]
    out += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(out)
