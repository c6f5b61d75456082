"""Messages and text: the one-line ResultsError, how a value is quoted, printable text and markdown cells,
numbers and sizes as the tables show them, JSON output (standard library only)."""
import json
import math
import re
import reprlib


INT64 = 1 << 63  # what dmabench writes and pandas holds: 64-bit integers
# K, M, G, T are powers of 1024 as in nccl-tests; KB, MB, GB, TB are refused as ambiguous, as the binary does
UNITS = {"": 1, "b": 1, "k": 1024, "kib": 1024, "m": 1 << 20, "mib": 1 << 20, "g": 1 << 30, "gib": 1 << 30,
         "t": 1 << 40, "tib": 1 << 40}
AMBIGUOUS_UNITS = {"kb": ("KiB", 10**3), "mb": ("MiB", 10**6), "gb": ("GiB", 10**9), "tb": ("TiB", 10**12)}


MAX_MESSAGE = 270  # characters of a ResultsError: with `<script>: error: ` before it, a line of at most 300
QUOTE_LIMIT = 80  # characters of a value a message quotes (quote)


class ResultsError(Exception):
    """A results file (or an argument) the scripts cannot use; the message is one line naming the file and its
    first problem. Every script prints `<script>: error: <message>` for it and exits 2. The message is made one
    printable line (whitespace runs one space, control characters escaped) of at most MAX_MESSAGE characters (its
    longest words cut with `…(N more characters)`: a path of thousands); the values in it are quoted with `quote`."""

    def __init__(self, message):
        super().__init__(_fit(printable(" ".join(str(message).split())), MAX_MESSAGE))


def _fit(text, limit):
    """A message within `limit` characters: its longest words (a path of 5000 characters, given twice) cut first, each
    once, keeping their start, so that what the message says after them is kept; then its end (_capped)."""
    words = text.split(" ")
    for _ in range(len(words)):
        excess = sum(map(len, words)) + len(words) - 1 - limit
        i = max(range(len(words)), key=lambda k: len(words[k]))
        if excess <= 0 or len(words[i]) <= 60:
            break
        keep = max(30, len(words[i]) - excess - 30)
        words[i] = f"{words[i][:keep]}…({len(words[i]) - keep} more characters)"
    return _capped(" ".join(words), limit)


def _capped(text, limit):
    """`text` cut to `limit` characters, the cut said: `…(N more characters)` (counted in the limit)."""
    if len(text) <= limit:
        return text
    keep = max(0, limit - len(f"…({len(text)} more characters)"))
    return f"{text[:keep]}…({len(text) - keep} more characters)"


def quote(value, limit=QUOTE_LIMIT):
    """`value` (from a file or an argument) as every message shows it, in at most `limit` characters: a string as
    Python's repr (a control character escaped: it cannot break or forge a line), any other value as JSON (a float
    that is not finite as nan / inf; a structure too deep to write as `[[[...]]]`), cut with `…(N more characters)`
    where it is longer. The one way the scripts put a value into a message."""
    if isinstance(value, str):
        text = repr(value)
    elif isinstance(value, float) and not math.isfinite(value):
        text = str(value)
    else:
        try:
            text = json.dumps(value)
        except (RecursionError, ValueError, TypeError):  # 20000 lists deep; an integer beyond str()'s limit
            text = reprlib.repr(value) if not isinstance(value, int) else f"an integer of {value.bit_length()} bits"
    return _capped(text, limit)


# C0 and C1 control characters, DEL and the Unicode line and paragraph separators: what can end, break or rewrite a
# line on a terminal or in a line-oriented output
_CONTROLS = {**{c: f"\\x{c:02x}" for c in (*range(0x20), 0x7F, *range(0x80, 0xA0))},
             0x09: "\\t", 0x0A: "\\n", 0x0D: "\\r", 0x2028: "\\u2028", 0x2029: "\\u2029"}


def printable(text):
    """`text` (a case name, a reason, a machine name from a file) with every control character written as its
    escape (`\\n`, `\\x1b`): printed, it stays on one line and forges none."""
    return str(text).translate(_CONTROLS)


FIGURE_LINE = 160  # characters of a line of text in a figure: a title, a caption line, a legend entry
FIGURE_LINES = 12  # lines of one text in a figure


def clipped(text, limit=FIGURE_LINE, lines=FIGURE_LINES):
    """`text` as a figure draws it: every line printable and cut to `limit` characters (`…(N more characters)`), at
    most `lines` of them (`…(N more lines)`). A figure is a raster as large as its text: a 20,000-character git
    revision in a caption made one matplotlib cannot allocate (issue 51)."""
    parts = str(text).split("\n")
    out = [_capped(printable(p), limit) for p in parts[:lines]]
    if len(parts) > lines:
        out.append(f"…({len(parts) - lines} more lines)")
    return "\n".join(out)


def cell(text):
    """`text` as a markdown table cell: printable, and a `|` escaped (`\\|`), so that it stays one cell."""
    return printable(text).replace("|", "\\|")


def finite(value):
    """`value` (a report: objects, lists, numbers, text) with every float that is not finite (a ratio of figures that
    overflowed: a p50 of 5e-324) made None, so that it is written as null: JSON has no Infinity or NaN."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [finite(v) for v in value]
    return value


def json_text(value, indent=1):
    """A script's JSON output: `value` with its non-finite figures null (finite), never `Infinity` or `NaN`."""
    return json.dumps(finite(value), indent=indent, allow_nan=False)


def fmt_num(v):
    """About 3 significant digits, never an exponent: 0.250, 5.00, 123; "–" for None or a non-finite value."""
    if v is None or not math.isfinite(v):
        return "–"
    if v == 0:
        return "0"
    digits = min(6, max(0, 2 - math.floor(math.log10(abs(v)))))
    return f"{v:.{digits}f}"


def fmt_size(n, compact=False):
    """'64 KiB' (or '64K' with compact=True, for axis ticks)."""
    for unit, f in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= f and n % f == 0:
            return f"{n // f}{unit[0]}" if compact else f"{n // f} {unit}"
    return f"{n}" if compact else f"{n} B"


def parse_size(text, tool=None):
    """Bytes of '64KiB', '1M', '4096', '1.5GiB' (below 2^63); ResultsError (a bad argument: exit 2 too) for
    anything else."""
    from fractions import Fraction
    m = re.fullmatch(r"\s*(\d{1,30}(?:\.\d{1,30})?)\s*([a-zA-Z]*)\s*", text)
    if m and m.group(2).lower() in AMBIGUOUS_UNITS:
        binary, decimal = AMBIGUOUS_UNITS[m.group(2).lower()]
        raise ResultsError(f"{quote(text)} is ambiguous ({m.group(2)}: powers of 1000 or of 1024?); accepted: "
                           f"{m.group(1)}{binary} (powers of 1024) or the bytes {int(Fraction(m.group(1)) * decimal)}")
    if not m or m.group(2).lower() not in UNITS:
        raise ResultsError(f"{quote(text)} is not a size such as 64KiB")
    size = int(Fraction(m.group(1)) * UNITS[m.group(2).lower()])
    if size >= INT64:
        raise ResultsError(f"{quote(text)} is not a size such as 64KiB: 2^63 bytes or more")
    return size


def table(header, rows):
    """A markdown table; every cell made one cell (`cell`: control characters and `|` escaped)."""
    out = ["| " + " | ".join(map(cell, header)) + " |", "|" + " --- |" * len(header)]
    out += ["| " + " | ".join(map(cell, r)) + " |" for r in rows]
    return "\n".join(out)
