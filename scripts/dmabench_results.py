"""Shared helpers for the scripts that read dmabench results files (standard library only).

A run that has not finished (crashed, killed -9, or still running) leaves its journal `<out>.journal` next to its
results file `<out>`; `load` reads either, and reads the journal in place of a results file that lags behind it."""
import contextlib
import errno
import fcntl
import io
import json
import math
import os
import re
import reprlib
import signal
import stat
import sys
import tempfile
import threading

SCHEMA_PREFIX = "dmabench/"
SCHEMA_MAJOR = "dmabench/1"  # the major version every script reads
JOURNAL_SCHEMA = "dmabench-journal/1"  # the header of a results file's journal, `<out>.journal`
JOURNAL_SUFFIX = ".journal"
OWN_SUFFIXES = (JOURNAL_SUFFIX, ".lock")  # beside a dmabench run's results file: never an output of a script
PATTERN_ORDER = ["copy", "d2d", "bidir", "allgather", "alltoall", "alltoallv", "h2d", "d2h", "h2d-bidir", "host-to-all", "all-to-host"]
UNITS = {"": 1, "b": 1, "k": 1024, "kib": 1024, "kb": 1000, "m": 1 << 20, "mib": 1 << 20, "mb": 10**6,
         "g": 1 << 30, "gib": 1 << 30, "gb": 10**9, "t": 1 << 40, "tib": 1 << 40, "tb": 10**12}


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


def cell(text):
    """`text` as a markdown table cell: printable, and a `|` escaped (`\\|`), so that it stays one cell."""
    return printable(text).replace("|", "\\|")


# ---- the scripts' command-line contract --------------------------------------------------------------------------
# Every script's entry point is `run_tool`: bad input (a malformed or unreadable file, a bad argument, an output path
# that cannot be written) is one line `<script>: error: ...` on stderr and exit 2; a reader that goes away (`| head`)
# ends nothing early and prints nothing; Ctrl-C is one line and exit 130; a bug is one line and exit 3. Never a
# traceback: exit 1 stays what each script documents (compare.py: a regression), which a CI gate reads.

INTERNAL_ERROR = 3  # a bug in a script, never bad input
MAX_INPUT_BYTES = 1 << 30  # a results file or journal: dmabench's 200000-case limit is about 300 MB of JSON


def fail(tool, error):
    """The scripts' one way out on bad input: one line on stderr, exit status 2."""
    print(f"{tool}: error: {error}", file=sys.stderr)
    return 2


class _Console:
    """sys.stdout / sys.stderr of a script: text that cannot be encoded is written escaped (a lone surrogate from a
    non-UTF-8 path argument: '\\udcff'), and a reader that has gone away (`compare.py ... | head`) makes the rest
    of the output go to /dev/null, so the script still finishes its work and exits with its own status, silently."""

    def __init__(self, stream):
        self.stream = stream
        stream.reconfigure(errors="backslashreplace")

    def _gone(self):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, self.stream.fileno())  # the buffered rest goes there too, also at interpreter exit
        os.close(devnull)

    def write(self, text):
        try:
            return self.stream.write(text)
        except BrokenPipeError:
            self._gone()
            return len(text)

    def flush(self):
        try:
            self.stream.flush()
        except BrokenPipeError:
            self._gone()

    def __getattr__(self, name):  # fileno, isatty, encoding, buffer, ...
        return getattr(self.stream, name)


def _guard_console():
    for name in ("stdout", "stderr"):
        stream = getattr(sys, name)
        if stream is None:  # started with the descriptor closed (`script >&-`): a reader that is gone from the start
            stream = open(os.devnull, "w")
        if isinstance(stream, io.TextIOWrapper):  # a real console; not a test's StringIO, not already guarded
            setattr(sys, name, _Console(stream))


def run_tool(tool, run, argv=None):
    """A script's entry point: `run(argv)`'s exit code; bad input one line and exit 2 (the contract above)."""
    _guard_console()
    _inputs.clear()  # this run's inputs (a test may call several tools in one process)
    try:
        try:
            return run(argv)
        finally:
            sys.stdout.flush()
    except ResultsError as e:
        return fail(tool, e)
    except KeyboardInterrupt:
        print(f"{tool}: interrupted", file=sys.stderr)
        return 130
    except Exception as e:  # noqa: BLE001 - a bug: still one line, never a traceback, never exit 1
        import traceback
        where = traceback.extract_tb(e.__traceback__)[-1]
        print(f"{tool}: internal error: {type(e).__name__}: {' '.join(str(e).split())[:200]} "
              f"(at {os.path.basename(where.filename)}:{where.lineno}; please report it)", file=sys.stderr)
        return INTERNAL_ERROR


class _Expired(Exception):
    pass


@contextlib.contextmanager
def time_limit(seconds, message):
    """ResultsError(message) where the block runs longer than `seconds` (SIGALRM, which stops a regular expression's
    backtracking too). Only the main thread can be sent the signal: elsewhere (a notebook's worker thread) the block
    runs without a limit. The process's own interval timer and SIGALRM handler are restored after it."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def expire(signum, frame):
        raise _Expired

    previous = signal.signal(signal.SIGALRM, expire)
    try:
        try:
            signal.setitimer(signal.ITIMER_REAL, seconds)
            yield
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
    except _Expired:
        raise ResultsError(message) from None
    finally:
        signal.signal(signal.SIGALRM, previous)


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


def arg_parser(doc):
    """The command-line parser of a script whose docstring ends with its "Exit codes" section; a bad argument raises
    ResultsError (one line and exit 2 through run_tool, not argparse's usage and error)."""
    import argparse

    class Parser(argparse.ArgumentParser):
        def error(self, message):
            raise ResultsError(message)

    return Parser(description=doc.splitlines()[0], epilog=doc[doc.index("Exit codes"):],
                  formatter_class=argparse.RawDescriptionHelpFormatter)


_KINDS = ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"),
          (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"))


def _kind(mode):
    return next((name for test, name in _KINDS if test(mode)), "not a regular file")


_inputs = {}  # (device, inode) -> path of every file read_bytes read: write_file never replaces one


def read_bytes(path, what="results file", limit=MAX_INPUT_BYTES):
    """The bytes of the regular file at `path`; FileNotFoundError when there is none; ResultsError (one line) when it
    is anything else (a FIFO, a device, a directory: their type is checked before they are opened, so a FIFO with no
    writer never blocks), larger than `limit`, or unreadable."""
    try:
        st = os.stat(path)
        if not stat.S_ISREG(st.st_mode):
            raise ResultsError(f"cannot read {path}: {_kind(st.st_mode)}; a {what} is a regular file")
        if st.st_size > limit:
            raise ResultsError(f"cannot read {path}: {st.st_size} bytes; a {what} is at most {limit >> 20} MiB")
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)  # replaced by a FIFO since the stat: no hang
        with os.fdopen(fd, "rb") as f:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode):
                raise ResultsError(f"cannot read {path}: replaced by {_kind(st.st_mode)} while read")
            _inputs[(st.st_dev, st.st_ino)] = path
            data = f.read(limit + 1)
    except FileNotFoundError:
        raise
    except (OSError, ValueError) as e:  # ValueError: a path with a NUL byte
        raise ResultsError(f"cannot read {path}: {e}") from None
    if len(data) > limit:
        raise ResultsError(f"cannot read {path}: more than {limit >> 20} MiB; a {what} is at most {limit >> 20} MiB")
    return data


def _open_output(path, follow=True):
    """A file object writing to `path`, which is not a directory; a FIFO without a reader is an error, not a hang.
    `follow=False`: a symlink at `path` is refused, never followed (its target would be truncated)."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NONBLOCK | os.O_CLOEXEC |
                     (0 if follow else os.O_NOFOLLOW), 0o666)
    except OSError as e:
        if e.errno == errno.ENXIO:
            raise ResultsError(f"cannot write {path}: a FIFO that nothing reads") from None
        if e.errno == errno.ELOOP and not follow:
            raise ResultsError(f"cannot write {path}: a symlink (never followed here); accepted: a regular file or "
                               "a new path") from None
        raise ResultsError(f"cannot write {path}: {e.strerror}") from None
    fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) & ~os.O_NONBLOCK)
    return os.fdopen(fd, "wb")


def open_log(path):
    """A text file to write console output to as it comes (launch_compare.py's runs.log, a fixed name in a directory
    that may be shared): checked like write_file, and a link there is refused, not followed."""
    return io.TextIOWrapper(_open_output(path, follow=False), encoding="utf-8", errors="backslashreplace", line_buffering=True)


def check_output(path, st):
    """ResultsError when the output `path` (`st`: its os.stat, None when there is no file) is a file this script read
    (an output never replaces an input, also through a link or another name) or is named like a dmabench run's own
    file (another run's journal or lock)."""
    if st is not None and (st.st_dev, st.st_ino) in _inputs:
        raise ResultsError(f"cannot write {path}: it is {_inputs[(st.st_dev, st.st_ino)]}, a file this script read; "
                           "accepted: a file of its own")
    if os.path.basename(path).endswith(OWN_SUFFIXES):
        raise ResultsError(f"cannot write {path}: named like a dmabench run's own file (a name ending in "
                           f"{' or '.join(OWN_SUFFIXES)}: another run's journal or lock); accepted: another name")


def write_file(path, data):
    """Writes `data` (str: UTF-8, anything not encodable escaped; or bytes) to `path` whole or not at all: a regular
    file (or a new one) is replaced by a complete temporary file beside it (an unpredictable name, created
    exclusively), so a full disk or an error leaves an existing file as it was; a device or a FIFO with a reader is
    written directly. Any failure is a ResultsError `cannot write PATH: why` (exit 2)."""
    if isinstance(data, str):
        data = data.encode("utf-8", "backslashreplace")
    path = os.fspath(path)
    try:
        st = os.stat(path)
    except FileNotFoundError:
        st = None
    except OSError as e:
        raise ResultsError(f"cannot write {path}: {e.strerror}") from None
    if st is not None and stat.S_ISDIR(st.st_mode):
        raise ResultsError(f"cannot write {path}: a directory")
    check_output(path, st)
    if st is not None and not stat.S_ISREG(st.st_mode):
        try:
            with _open_output(path) as f:
                f.write(data)
        except OSError as e:
            raise ResultsError(f"cannot write {path}: {e.strerror}") from None
        return
    directory, name = os.path.split(path)
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{name}.", suffix=".tmp", dir=directory or ".")
    except OSError as e:
        raise ResultsError(f"cannot write {path}: {e.strerror}") from None
    try:
        with os.fdopen(fd, "wb") as f:
            umask = os.umask(0)
            os.umask(umask)
            os.fchmod(f.fileno(), 0o666 & ~umask)
            f.write(data)
        os.replace(tmp, path)
    except OSError as e:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise ResultsError(f"cannot write {path}: {e.strerror}") from None


def make_dir(path, what="--out"):
    """The output directory `path`, created if missing; ResultsError naming it when it cannot be."""
    try:
        os.makedirs(path, exist_ok=True)
    except OSError as e:
        raise ResultsError(f"{what} {path}: {'not a directory' if isinstance(e, FileExistsError) else e.strerror}; "
                           "accepted: a directory or a path where one can be made") from None
    if not os.access(path, os.W_OK | os.X_OK):
        raise ResultsError(f"{what} {path}: a directory this user cannot write to")
    return path


def load(path, tool=None):
    """The results document at `path`, checked by `check_document`; raises ResultsError (one line: the file and the
    first problem) when the file cannot be read, is not JSON (or nests too deeply to parse), or is not a
    `dmabench/1` document the scripts can use. `tool` is unused (kept for callers that pass it).

    Journals (`read_journal` says what one is): `path` may be a journal itself (`run.json.journal`), read as the
    document its header and records make. A results file whose journal exists beside it belongs to a run that has
    not finished, and is rewritten only every 2 s while it runs: when the journal holds more records (or the
    results file is missing or unusable), the journal is read instead, with one note on stderr that says so;
    otherwise the results file is, silently. A journal that is malformed is a ResultsError as any file is."""
    path = os.fspath(path)
    if path.endswith(JOURNAL_SUFFIX):
        try:
            doc, torn = read_journal(path)
        except FileNotFoundError as e:
            raise ResultsError(f"cannot read {path}: {e} (a journal exists only until its run ends)") from None
        if doc is None:
            raise ResultsError(f"{path}: line 1: no complete header line (the run was killed before it wrote one)")
        if torn:
            _note(f"{path}: line {torn} is torn (the run was killed while writing it); ignored")
        return doc
    journal = path + JOURNAL_SUFFIX
    try:  # the journal first: when the run ends between the two reads, the results file read second is complete
        jdoc, torn = read_journal(journal)
    except FileNotFoundError:
        return _load_results(path)
    try:
        doc = _load_results(path)
    except ResultsError:
        if jdoc is None:
            raise
        doc = None
    if jdoc is None or (doc is not None and len(doc["results"]) >= len(jdoc["results"])):
        return doc
    _note(f"{journal}: the run that writes {path} has not finished; reading its journal "
          f"({len(jdoc['results'])} records, {0 if doc is None else len(doc['results'])} in {path}"
          f"{f'; its torn line {torn} ignored' if torn else ''})")
    return jdoc


def _load_results(path):
    try:
        doc = parse_json(read_bytes(path))
    except FileNotFoundError as e:
        raise ResultsError(f"cannot read {path}: {e}") from None
    except (ValueError, RecursionError) as e:  # UnicodeDecodeError is a ValueError
        kind = "nests too deeply to parse" if isinstance(e, RecursionError) else str(e)
        raise ResultsError(f"cannot read {path}: {kind}") from None
    try:
        check_document(doc)
    except ResultsError as e:
        raise ResultsError(f"{path}: {e}") from None
    return doc


def parse_json(data):
    """The JSON value of UTF-8 `data`, its lone surrogates escaped (escape_surrogates); ValueError, RecursionError."""
    value = json.loads(data.decode("utf-8"))
    return escape_surrogates(value) if re.search(rb"\\u[dD][89a-fA-F]", data) else value


def escape_surrogates(value):
    """`value` (parsed JSON) with every string that holds a lone surrogate (JSON's `\\ud800` escape, which is no
    character) replaced by its escaped text (the six characters `\\ud800`), keys too, so that every script can print,
    write and draw it. Anything else is returned as it is."""
    def clean(text):
        try:
            text.encode("utf-8")
            return text
        except UnicodeEncodeError:
            return text.encode("utf-8", "backslashreplace").decode("utf-8")

    if isinstance(value, str):
        return clean(value)
    stack = [value]
    while stack:  # not recursive: the parser already accepted the nesting, this must not fail on it
        node = stack.pop()
        items = list(node.items()) if isinstance(node, dict) else list(enumerate(node)) if isinstance(node, list) else []
        for k, v in items:
            if isinstance(v, str):
                node[k] = clean(v)
            elif isinstance(v, (dict, list)):
                stack.append(v)
            if isinstance(k, str) and clean(k) is not k:
                node[clean(k)] = node.pop(k)
    return value


def _unreadable(e):
    """Why a journal line cannot be read, without json's own 'line 1' (every line is parsed alone)."""
    if isinstance(e, RecursionError):
        return "nests too deeply to parse"
    if isinstance(e, json.JSONDecodeError):
        return f"not valid JSON ({e.msg} at column {e.colno})"
    return f"not UTF-8 ({e.reason} at byte {e.start + 1})" if isinstance(e, UnicodeDecodeError) else str(e)


_noted = set()


def _note(line):
    """A note on stderr, once per process (plot.py loads each file twice)."""
    if line not in _noted:
        _noted.add(line)
        print(line, file=sys.stderr)


def read_journal(path):
    """(document, torn) from the journal at `path`; raises FileNotFoundError when there is none and ResultsError
    (naming the file and the line) when it is malformed.

    A journal is JSON Lines in UTF-8: line 1 a header object {"schema": "dmabench-journal/1", "results_schema":
    "dmabench/1", "context": {...}}, each further line one record of the results file's `results` list, appended
    as its case finishes. A run killed while appending leaves a torn last line (not JSON, or no newline at its
    end): it is left out and `torn` is its line number (else None). A bad line before the last is an error. The
    document is {"schema": results_schema, "context": context, "results": records}, checked by `check_document`
    with each record named by its line. `document` is None when not even the header line is complete (an empty
    journal: the run was killed before it wrote one)."""
    data = read_bytes(path, "journal")  # FileNotFoundError: none
    lines = data.split(b"\n")  # the last element is b"" when the file ends with a newline, else the unfinished line
    values, torn = [], None
    for i, line in enumerate(lines[:-1]):
        try:
            values.append(parse_json(line))
        except (ValueError, RecursionError) as e:  # UnicodeDecodeError is a ValueError
            if i == len(lines) - 2 and not lines[-1]:  # the last line: torn
                torn = i + 1
                break
            raise ResultsError(f"{path}: line {i + 1}: {_unreadable(e)}") from None
    if lines[-1]:  # no newline at its end
        torn = len(lines)
    if not values:
        return None, torn
    header = values[0]
    if not isinstance(header, dict):
        raise ResultsError(f"{path}: line 1: the header is {_show(header)}, not an object")
    if header.get("schema") != JOURNAL_SCHEMA:
        raise ResultsError(f"{path}: line 1: not a dmabench journal (header 'schema' is {_show(header.get('schema'))}, "
                           f"expected {JOURNAL_SCHEMA!r})")
    for field, kind in (("results_schema", str), ("context", dict)):
        if field not in header:
            raise ResultsError(f"{path}: line 1: header.{field}: missing")
        try:
            _of(header[field], kind, f"header.{field}")
        except ResultsError as e:
            raise ResultsError(f"{path}: line 1: {e}") from None
    if header["results_schema"] != SCHEMA_MAJOR:
        raise ResultsError(f"{path}: line 1: header.results_schema is {_show(header['results_schema'])}; these scripts "
                           f"read {SCHEMA_MAJOR!r}")
    doc = {"schema": header["results_schema"], "context": header["context"], "results": values[1:]}
    try:
        check_document(doc, lambda i: f"line {i + 2}: results[{i}]")
    except ResultsError as e:
        raise ResultsError(f"{path}: {e}") from None
    return doc, torn


def _finite(value):
    """Whether a JSON number is a finite float; an integer too large for one is not (10**400)."""
    try:
        return math.isfinite(value)
    except OverflowError:
        return False


def _number(value, where, positive=False, nullable=False):
    if value is None and nullable:
        return
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not _finite(value) or \
            (positive and value <= 0) or (not positive and value < 0 and where.rsplit(".", 1)[-1] not in SIGNED):
        want = "a positive number" if positive else "a finite number" if where.rsplit(".", 1)[-1] in SIGNED \
            else "a number >= 0"
        raise ResultsError(f"{where}: expected {want}{' or null' if nullable else ''}, got {_show(value)}")


def _of(value, kind, where, nullable=False):
    names = {dict: "an object", list: "a list", str: "a string", bool: "true or false", int: "an integer"}
    if value is None and nullable:
        return
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise ResultsError(f"{where}: expected {names[kind]}{' or null' if nullable else ''}, got {_show(value)}")
    if kind is int and not -INT64 <= value < INT64:  # what dmabench writes and pandas holds: 64-bit integers
        raise ResultsError(f"{where}: expected an integer of at most 64 bits, got {_show(value)}")


INT64 = 1 << 63


def _show(value):
    return quote(value, 40)


SIGNED = {"compute_slowdown_pct", "comm_slowdown_pct", "control", "schedule", "copy", "sync"}  # may be < 0
STATUSES = ("ok", "skipped", "failed")
LATENCY = ("min", "p50", "mean", "p95", "p99", "max", "stddev")
POWER_NUMBERS = {"active_W": False, "window_s": False, "energy_per_GB_J": True, "uncertainty": True,
                 "busy_fraction": True}  # field: may be null or absent
OVERLAP_NUMBERS = ("compute_slowdown_pct", "comm_with_us", "comm_with_p99_us", "busbw_with_GBps", "overlap_efficiency")
BREAKDOWN_NUMBERS = ("control", "schedule", "copy", "sync", "total", "aligned_fraction")


def check_document(doc, where=lambda i: f"results[{i}]"):
    """Raises ResultsError naming the first problem (`results[3].latency_us.p50: expected a positive number, got 0`)
    unless `doc` is a results document the scripts can use. What is checked (SCHEMA.md has the meanings):

    - top level: an object with `schema` exactly "dmabench/1", `context` an object, `results` a list of objects;
    - `context`: `date`, `host` strings and `dmabench`, `machine`, `machine.versions` objects, `machine.devices` a list
      of objects, each where present;
    - every record: `name`, `pattern`, `engine`, `timing` non-empty strings, `name` of the form
      `pattern/engine[,option=value...]/timing/dev=...`; `status` one of ok, skipped, failed; `bytes_per_rank` a
      positive integer; `options` an object; `devices` a list of integers; `bytes` an integer or null; `reason` a
      string; `in_place` true or false; `rotate` a positive integer (these four where present);
    - an `ok` record: `latency_us` an object whose min, p50, mean, p95, p99, max, stddev are finite numbers >= 0,
      p50 > 0; `algbw_GBps` and `busbw_GBps` finite numbers >= 0; where present (files written before them lack
      them): `p50_interval_us` two numbers >= 0 around the p50 (low <= p50 <= high), `algbw_interval_GBps` and
      `busbw_interval_GBps` two numbers >= 0 (the second may be null: unbounded), `noise` a number >= 0, `noisy`
      true or false, `sampling` an object with `mode` adaptive or fixed, `samples` a positive integer, `seconds` and
      `max_noise` numbers >= 0, `stopped` one of noise, max_time, max_samples, iterations, and `min_samples`,
      `min_time_s`, `max_time_s`, `max_samples` numbers >= 0 or null; and its figures agree with each other
      (check_consistent: algbw is bytes / p50, busbw / algbw the ratio of their intervals): a record that contradicts
      itself is refused, never taken as a reference;
    - `power`, `overlap`, `breakdown_us` where present: null or an object; unless it has `error`, its numbers the
      scripts read are finite (power: active_W, window_s, and energy_per_GB_J, uncertainty, busy_fraction or null;
      overlap: compute_slowdown_pct, comm_with_us, comm_with_p99_us, busbw_with_GBps, overlap_efficiency;
      breakdown_us: control, schedule, copy, sync, total > 0, and aligned_fraction or null). Slowdowns and breakdown phases may
      be negative; every other number must be >= 0.
    Records the scripts cannot use are an error, never dropped. `where(i)` names record i in the messages."""
    if not isinstance(doc, dict):
        raise ResultsError(f"not a dmabench results file: the top level is {type(doc).__name__}, not an object")
    if "schema" not in doc or not isinstance(doc["schema"], str) or not doc["schema"].startswith(SCHEMA_PREFIX):
        raise ResultsError(f"not a dmabench results file (no 'schema': '{SCHEMA_MAJOR}'; got {_show(doc.get('schema'))})")
    if doc["schema"] != SCHEMA_MAJOR:
        raise ResultsError(f"has schema {quote(doc['schema'])}; these scripts read {SCHEMA_MAJOR!r}")
    for field, kind in (("context", dict), ("results", list)):
        if field not in doc:
            raise ResultsError(f"{field}: missing")
        _of(doc[field], kind, field)
    ctx = doc["context"]
    for field, kind in (("date", str), ("host", str), ("dmabench", dict), ("machine", dict)):
        if field in ctx:
            _of(ctx[field], kind, f"context.{field}")
    machine = ctx.get("machine", {})
    if "versions" in machine:
        _of(machine["versions"], dict, "context.machine.versions")
    if "devices" in machine:
        _of(machine["devices"], list, "context.machine.devices")
        for i, d in enumerate(machine["devices"]):
            _of(d, dict, f"context.machine.devices[{i}]")
    for i, r in enumerate(doc["results"]):
        check_record(r, where(i))


def check_record(r, where):
    """One record of `results` (check_document says what is checked)."""
    _of(r, dict, where)
    for field in ("name", "pattern", "engine", "timing", "status", "bytes_per_rank", "options", "devices"):
        if field not in r:
            raise ResultsError(f"{where}.{field}: missing")
    for field in ("name", "pattern", "engine", "timing", "status"):
        _of(r[field], str, f"{where}.{field}")
        if not r[field]:
            raise ResultsError(f"{where}.{field}: expected a non-empty string, got \"\"")
    if r["status"] not in STATUSES:
        raise ResultsError(f"{where}.status: expected one of {', '.join(STATUSES)}, got {_show(r['status'])}")
    _of(r["bytes_per_rank"], int, f"{where}.bytes_per_rank")
    if r["bytes_per_rank"] <= 0:
        raise ResultsError(f"{where}.bytes_per_rank: expected a positive integer, got {r['bytes_per_rank']}")
    _of(r["options"], dict, f"{where}.options")
    _of(r["devices"], list, f"{where}.devices")
    for j, d in enumerate(r["devices"]):
        _of(d, int, f"{where}.devices[{j}]")
    for field, kind, nullable in (("bytes", int, True), ("reason", str, False), ("in_place", bool, False),
                                  ("rotate", int, False)):
        if field in r:
            _of(r[field], kind, f"{where}.{field}", nullable)
    if r.get("rotate", 1) < 1:
        raise ResultsError(f"{where}.rotate: expected a positive integer, got {r['rotate']}")
    try:
        engine_options_in_name(r)
    except ValueError as e:
        raise ResultsError(f"{where}.name: {e}") from None
    if r["status"] == "ok":
        lat = r.get("latency_us")
        _of(lat, dict, f"{where}.latency_us")
        for k in LATENCY:
            _number(lat.get(k), f"{where}.latency_us.{k}", positive=(k == "p50"))
        for k in ("algbw_GBps", "busbw_GBps"):
            _number(r.get(k), f"{where}.{k}")
        check_interval(r, where)
        check_consistent(r, where)
    for part, fields in (("power", POWER_NUMBERS), ("overlap", dict.fromkeys(OVERLAP_NUMBERS, False)),
                         ("breakdown_us", {**dict.fromkeys(BREAKDOWN_NUMBERS, False), "aligned_fraction": True})):
        if part not in r or r[part] is None:
            continue
        _of(r[part], dict, f"{where}.{part}")
        if "error" in r[part]:
            _of(r[part]["error"], str, f"{where}.{part}.error")
            continue
        for k, nullable in fields.items():
            _number(r[part].get(k), f"{where}.{part}.{k}", positive=(k == "total"), nullable=nullable)


SAMPLING_MODES = ("adaptive", "fixed")
STOPS = ("noise", "max_time", "max_samples", "iterations")


def _pair(value, where, open_high=False):
    """Two numbers >= 0 (`open_high`: the second may be null); ResultsError otherwise."""
    if not isinstance(value, list) or len(value) != 2:
        raise ResultsError(f"{where}: expected a list of two numbers, got {_show(value)}")
    _number(value[0], f"{where}[0]")
    _number(value[1], f"{where}[1]", nullable=open_high)


def check_interval(r, where):
    """An ok record's p50 interval, bandwidth intervals, noise and sampling, where present (check_document)."""
    if "p50_interval_us" in r:
        _pair(r["p50_interval_us"], f"{where}.p50_interval_us")
        low, high = r["p50_interval_us"]
        if not low <= r["latency_us"]["p50"] <= high:
            _contradiction(r, where, "p50_interval_us", f"[{low:g}, {high:g}] does not hold the p50 "
                                                        f"{r['latency_us']['p50']:g}")
    for k in ("algbw_interval_GBps", "busbw_interval_GBps"):
        if k in r:
            _pair(r[k], f"{where}.{k}", open_high=True)
    if "noise" in r:
        _number(r["noise"], f"{where}.noise")
    if "noisy" in r:
        _of(r["noisy"], bool, f"{where}.noisy")
    if "sampling" not in r:
        return
    s = r["sampling"]
    _of(s, dict, f"{where}.sampling")
    for field, allowed in (("mode", SAMPLING_MODES), ("stopped", STOPS)):
        if s.get(field) not in allowed:
            raise ResultsError(f"{where}.sampling.{field}: expected one of {', '.join(allowed)}, got {_show(s.get(field))}")
    _of(s.get("samples"), int, f"{where}.sampling.samples")
    if s["samples"] < 1:
        raise ResultsError(f"{where}.sampling.samples: expected a positive integer, got {s['samples']}")
    for k, nullable in (("seconds", False), ("max_noise", False), ("min_samples", True), ("min_time_s", True),
                        ("max_time_s", True), ("max_samples", True)):
        _number(s.get(k), f"{where}.sampling.{k}", nullable=nullable)


FIGURES_REL_TOL = 1e-6  # how far an ok record's figures may stray from what they follow from (check_consistent)


def _contradiction(r, where, field, why):
    raise ResultsError(f"{where}.{field}: {why}: record {quote(r['name'], 60)} contradicts itself (edited?)")


def check_consistent(r, where):
    """An ok record whose figures contradict each other (check_interval has checked the p50 against its interval):
    `algbw_GBps` not bytes / (p50 x 1e3) within FIGURES_REL_TOL (unchecked where `bytes` is null or absent), or
    busbw / algbw (the pattern's factor) not the ratio of the busbw interval to the algbw interval where both are
    there: a p50 and algbw made 10x faster with their intervals left, say. ResultsError naming the record."""
    p50, size, algbw = r["latency_us"]["p50"], r.get("bytes"), r["algbw_GBps"]
    if size is not None and not math.isclose(algbw, size / (p50 * 1e3), rel_tol=FIGURES_REL_TOL):
        _contradiction(r, where, "algbw_GBps", f"{algbw:g} is not bytes / (p50 x 1e3) = {size / (p50 * 1e3):g}")
    algbw_pair, busbw_pair = r.get("algbw_interval_GBps"), r.get("busbw_interval_GBps")
    if not (algbw and algbw_pair and busbw_pair):
        return
    factor = r["busbw_GBps"] / algbw
    for a, b in zip(algbw_pair, busbw_pair):
        if a and b is not None and not math.isclose(factor, b / a, rel_tol=FIGURES_REL_TOL):
            _contradiction(r, where, "busbw_GBps", f"busbw / algbw is {factor:g}, its intervals' ratio {b / a:g}")


def p50_interval(result):
    """An ok record's 95% interval of its p50 in µs, (low, high), or None where the file has none (written before
    dmabench recorded intervals)."""
    pair = result.get("p50_interval_us")
    return tuple(pair) if isinstance(pair, list) and len(pair) == 2 else None


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


def routing_key(result):
    """An alltoallv case's routing as part of its identity (the trace by file name: its folder differs between
    machines), or None for the other patterns."""
    moe = result.get("alltoallv")
    if not isinstance(moe, dict):
        return None
    ident = {k: moe.get(k) for k in ("direction", "tokens", "splits", "skew", "step", "token_bytes", "tokens_per_rank", "topk",
                                     "experts", "seed", "ranks_asked")}
    ident["file"] = os.path.basename(str(moe["file"])) if moe.get("file") else None
    return json.dumps(ident, sort_keys=True)


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


def case_key(result):
    """The full identity of a case across runs: pattern and placement, engine, options, devices, bytes, timing,
    workload, rotation, block layout (contiguous: None, as in files without `layout`) and host memory (kind and NUMA
    request) and, for alltoallv, the routing, so that pinned and mapped, 1024 x 4 KiB and 64 x 64 KiB blocks of one
    size, or two routings of one size, stay apart."""
    lay = result.get("layout")
    layout = None
    if isinstance(lay, dict) and lay.get("kind", "contiguous") != "contiguous":
        layout = json.dumps({k: v for k, v in lay.items() if k != "blocks_per_op"}, sort_keys=True)
    host = result.get("host_memory")
    host = json.dumps([host.get("kind"), host.get("numa")], sort_keys=True) if isinstance(host, dict) else None
    key = (result["pattern"], bool(result.get("in_place")), result["engine"],
           json.dumps(result.get("options", {}), sort_keys=True), tuple(result.get("devices", [])), result.get("bytes"),
           result["bytes_per_rank"], result["timing"], beside(result), result.get("rotate", 1), layout, host)
    routing = routing_key(result)  # alltoallv only: every other case keeps the key it had (history databases)
    return key if routing is None else key + (routing,)


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


# to_frame's columns that make a case's identity beside its variant, in the order case_table adds them to a table's
# columns (those the table is keyed by already never differ within its cells); `case_key` (all of it, JSON) last
CASE_COLUMNS = ["pattern", "in_place", "timing", "bytes_per_rank", "ranks", "devices", "bytes", "rotate", "beside", "layout", "block_bytes", "blocks_per_op", "order",
                "host_kind", "numa", "file", "options", "case_key"]


def columns_apart(df, by, candidates=CASE_COLUMNS, unit=("file", "case_key")):
    """The columns of `candidates`, in order, that `by` needs so that no group of rows holds two cases (distinct
    `unit`: a case of one file, measured once or again): each taken where it differs within a group that still
    holds more than one. [] where every group of `by` holds one case already."""
    if df.empty:
        return []
    ident = df[list(unit)].astype(str).agg("\x1f".join, axis=1)
    keys, chosen = keyed(df, by), []
    for c in candidates:
        mixed = ident.groupby([keys[k] for k in by + chosen]).transform("nunique") > 1
        if not mixed.any():
            break
        if keys.loc[mixed].groupby([keys.loc[mixed, k] for k in by + chosen])[c].transform("nunique").gt(1).any():
            chosen.append(c)
    return chosen


def keyed(df, by):
    """`df` with missing values of every column a table may key on written "–" (pandas groups drop missing keys)."""
    frame = df.copy()
    for c in set(by) | set(CASE_COLUMNS) & set(df.columns):
        frame[c] = frame[c].astype(object).where(frame[c].notna(), "–")
    return frame


def case_table(df, values, index="bytes_per_rank", columns=("pattern", "in_place", "variant")):
    """A pivot of a to_frame frame (`values` per `index` and `columns`) whose every cell is one case: `columns` are
    extended by the identity columns (columns_apart) that differ among the cases that would share a cell (a 2-rank
    and a 4-rank all-gather: `ranks`; two files measuring one case: `file`), never averaged; a case measured more
    than once in one file (an overlap run measures it alone again per workload) is its median."""
    extra = columns_apart(df, [index, *columns])
    frame = keyed(df, [index, *columns, *extra])
    return frame.pivot_table(index=index, columns=[*columns, *extra], values=values, aggfunc="median")


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


def to_frame(paths, tool="dmabench_results"):
    """A tidy pandas DataFrame: one row per result of every file, with flat metric columns.

    Columns: file, machine, name, case_key (JSON text of case_key: the case's full identity), pattern, in_place,
    rotate, engine, variant, options (JSON text), devices (text), ranks,
    hardware_times (False for the software SDMA engine's CPU-thread times),
    bytes, bytes_per_rank, timing, status, reason, validated, clock, iterations, min/p50/mean/p95/p99/
    max/stddev (µs), algbw, busbw (GB/s), energy_per_GB_J, active_W, power_uncertainty, and
    p50_low / p50_high (µs: the p50's 95% interval), noise (its half-width over the p50), noisy, sampling (adaptive or
    fixed), stopped (noise, max_time, max_samples, iterations) and sampling_s (None in files without them),
    bd_control / bd_schedule / bd_copy / bd_sync / bd_total (µs) where a breakdown exists, and for
    overlap cases beside (the workload), compute_slowdown_pct, comm_with_us, comm_with_p99_us,
    comm_slowdown_pct, busbw_with, overlap_efficiency; and how the bytes lie and where the host buffers are:
    layout ("contiguous" or "blocks"), block_bytes, blocks_per_op, order, per_block_us, host_kind, numa,
    numa_node, host_verified (None where a record has no block layout or no host memory).
    """
    import pandas as pd  # only the DataFrame users need pandas

    def number(value):  # a number check_document checked: a float column, also for 10**30 written as an integer
        return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else value

    rows = []
    for path in paths:
        doc = load(path, tool)
        machine = machine_label(doc)
        for r in doc.get("results", []):
            lat = r.get("latency_us") or {}
            power = r.get("power") or {}
            bd = r.get("breakdown_us") or {}
            row = {"file": path, "machine": machine, "name": r.get("name"), "case_key": json.dumps(case_key(r)),
                   "pattern": r["pattern"],
                   "in_place": bool(r.get("in_place")), "rotate": r.get("rotate", 1),
                   "engine": r["engine"], "variant": variant(r), "options": json.dumps(r.get("options", {}), sort_keys=True),
                   "devices": ",".join(str(d) for d in r.get("devices", [])), "ranks": r.get("ranks"),
                   "bytes": r.get("bytes"), "bytes_per_rank": r["bytes_per_rank"], "timing": r["timing"],
                   "status": r["status"], "reason": r.get("reason", ""), "validated": r.get("validated"),
                   "clock": r.get("clock", "host"), "iterations": r.get("iterations"),
                   "algbw": number(r.get("algbw_GBps")), "busbw": number(r.get("busbw_GBps")),
                   "energy_per_GB_J": number(power.get("energy_per_GB_J")), "active_W": number(power.get("active_W")),
                   "power_uncertainty": number(power.get("uncertainty")), "hardware_times": not software_times(r)}
            for k in ("min", "p50", "mean", "p95", "p99", "max", "stddev"):
                row[k] = number(lat.get(k))
            interval = p50_interval(r) or (None, None)
            sampling = r.get("sampling") or {}
            row.update({"p50_low": number(interval[0]), "p50_high": number(interval[1]), "noise": number(r.get("noise")),
                        "noisy": r.get("noisy"), "sampling": sampling.get("mode"), "stopped": sampling.get("stopped"),
                        "sampling_s": number(sampling.get("seconds"))})
            for k in ("control", "schedule", "copy", "sync", "total"):
                row[f"bd_{k}"] = number(bd.get(k)) if "error" not in bd else None
            ov = r.get("overlap") or {}
            row["beside"] = beside(r)
            for k, col in (("compute_slowdown_pct", "compute_slowdown_pct"), ("comm_with_us", "comm_with_us"),
                           ("comm_with_p99_us", "comm_with_p99_us"), ("comm_slowdown_pct", "comm_slowdown_pct"),
                           ("busbw_with_GBps", "busbw_with"), ("overlap_efficiency", "overlap_efficiency")):
                row[col] = number(ov.get(k)) if "error" not in ov else None
            lay = r.get("layout") or {"kind": "contiguous"}
            host = r.get("host_memory") or {}
            row.update({"layout": lay.get("kind"), "block_bytes": lay.get("block_bytes"),
                        "blocks_per_op": lay.get("blocks_per_op"), "order": lay.get("order"),
                        "per_block_us": r.get("per_block_us"), "host_kind": host.get("kind"), "numa": host.get("numa"),
                        "numa_node": host.get("numa_node"), "host_verified": host.get("verified")})
            rows.append(row)
    return pd.DataFrame(rows)


def history_frame(db_path):
    """A pandas DataFrame of a history database (scripts/history.py; docs/history.md has its tables): one row per
    (run, record), oldest run first. The run's context: run_id, started_at (a UTC datetime: context.started_at, else
    context.date), finished_at, host, revision, version, machine (the machine kind, as machine_label), backend, gpus,
    driver, config, source (the file it was imported from), imported_at; the record's idx (its place in the file),
    name, case_key (JSON text of case_key), pattern, engine, variant, place (where), bytes_per_rank, bytes, timing,
    status, reason, p50_us, p50_low_us, p50_high_us, noise, noisy (True / False / <NA> where not recorded),
    busbw_GBps, busbw_low_GBps, busbw_high_GBps, algbw_GBps, sampling, samples, setup_s, process_p50s (JSON text of
    the per-process p50s of a levels file's record, else None); and verdict, the gate's
    verdict on the case where `history.py gate --record` stored one (else None). The database is only read;
    ResultsError for one that is missing, not a dmabench history or of a newer schema version."""
    import pandas as pd
    import history
    with contextlib.closing(history.open_db(db_path, write=False)) as conn, history.db_errors(db_path):
        df = pd.read_sql_query(history.FRAME_QUERY, conn)
    df["started_at"] = pd.to_datetime(df["started_at"], utc=True)
    df["noisy"] = df["noisy"].astype("boolean")
    return df
