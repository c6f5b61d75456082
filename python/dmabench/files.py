"""Reading input files and writing outputs safely: regular files only, bounded sizes, an output never replaces an
input, written whole or not at all."""
import errno
import fcntl
import gzip
import io
import lzma
import os
import sys
import stat
import tempfile
import zlib

from .text import ResultsError, json_text


JOURNAL_SUFFIX = ".journal"
OWN_SUFFIXES = (JOURNAL_SUFFIX, ".lock")  # beside a dmabench run's results file: never an output of a script
MAX_INPUT_BYTES = 1 << 30  # a results file or journal: dmabench's 200000-case limit is about 300 MB of JSON


_KINDS = ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"),
          (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"))


def _kind(mode):
    return next((name for test, name in _KINDS if test(mode)), "not a regular file")


_inputs = {}  # (device, inode) -> path of every file read_bytes read: write_file never replaces one


def read_bytes(path, what="results file", limit=MAX_INPUT_BYTES):
    """The bytes of the regular file at `path`, decompressed where its name ends in .xz or .gz (decompress);
    FileNotFoundError when there is none; ResultsError (one line) when it is anything else (a FIFO, a device, a
    directory: their type is checked before they are opened, so a FIFO with no writer never blocks), larger than
    `limit` (compressed or decompressed), unreadable, or not valid xz / gzip data."""
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
    kind = compression(path)
    if kind:  # a name ending in .xz or .gz: read decompressed, within the same limit
        try:
            data = decompress(data, kind, limit)
        except ValueError as e:
            raise ResultsError(f"cannot read {path}: {e}") from None
        if len(data) > limit:
            raise ResultsError(f"cannot read {path}: more than {limit >> 20} MiB decompressed; a {what} is at most "
                               f"{limit >> 20} MiB")
    return data


COMPRESSED = {".xz": "xz", ".gz": "gzip"}  # how a name ends -> the compression its file is read through
JSON_SUFFIXES = (".json", ".json.xz", ".json.gz")  # a JSON file found in a directory, plain or compressed


def compression(path):
    """"xz" or "gzip" where the name `path` (str, bytes or a path object) ends in .xz or .gz (a committed results file
    stored compressed: results/h200x1/crossover/crossover.json.xz), else None."""
    name = os.fsdecode(os.fspath(path))
    return next((kind for suffix, kind in COMPRESSED.items() if name.endswith(suffix)), None)


def decompress(data, kind, limit=None):
    """The bytes `data` decompressed from `kind` ("xz": lzma, every stream of it; "gzip": every member), at most
    `limit` + 1 of them (a caller sees that more were there); ValueError `not valid xz data (why)` when they are not
    valid (corrupt, truncated, or another format)."""
    try:
        with (lzma.LZMAFile(io.BytesIO(data)) if kind == "xz" else gzip.GzipFile(fileobj=io.BytesIO(data))) as f:
            return f.read(-1 if limit is None else limit + 1)
    except (lzma.LZMAError, EOFError, OSError, zlib.error) as e:  # gzip.BadGzipFile is an OSError
        raise ValueError(f"not valid {kind} data ({e})") from None


def open_text(path, encoding="utf-8"):
    """A text file object reading the file at `path`, as `open(path, encoding=encoding)` is; a name that ends in .xz or
    .gz is read decompressed (decompress). Raises what open raises (OSError: FileNotFoundError where there is no file);
    a compressed file that is not valid xz / gzip data is a ValueError, as text that is not JSON is to json.load, so
    that a caller that reports (OSError, ValueError) as one line of a bad file says one line for it too."""
    kind = compression(path)
    if kind is None:
        return open(path, encoding=encoding)
    with open(path, "rb") as f:
        data = f.read()
    return io.TextIOWrapper(io.BytesIO(decompress(data, kind)), encoding=encoding)


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


def refuse_inputs(path, inputs):
    """ResultsError before any work where the output `path` is one of `inputs` ({path: what it is}): the same real path
    (through links) or the same file (another name, a hard link). For inputs that are not files read through
    read_bytes: a database and the journal, WAL and shared-memory files SQLite keeps beside it (issue 51: a JUnit
    path naming the history database replaced the whole history)."""
    try:
        st = os.stat(path)
    except OSError:
        st = None
    real = os.path.realpath(path)
    for other, what in inputs.items():
        try:
            ost = os.stat(other)
        except OSError:
            ost = None
        if os.path.realpath(other) == real or (st and ost and (st.st_dev, st.st_ino) == (ost.st_dev, ost.st_ino)):
            raise ResultsError(f"cannot write {path}: it is {what} ({other}), which this command reads; accepted: a "
                               "file of its own")


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


def clear_inputs():
    """Forgets the files read so far (run_tool: each run's outputs are checked against its own inputs)."""
    _inputs.clear()


def checkout_root():
    """The dmabench checkout this package belongs to (`<root>/python/dmabench`: run from a clone, or installed with
    `pip install -e`), whose configs/, build/ and results/ the commands' defaults name; else the working directory
    (an installed copy: the defaults then name ./configs, ./build, ./results)."""
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    marks = ("CMakeLists.txt", "configs", "results")
    return root if all(os.path.exists(os.path.join(root, m)) for m in marks) else os.getcwd()


def emit(text, report=None, markdown=None, json_path=None):
    """A report's output: its markdown `text` written to the file `markdown` (where given), `report` as JSON to
    `json_path` (where given), and `text` on stdout. The files are written before anything is printed, so a path that
    cannot be written is one line and exit 2 with nothing on stdout."""
    if markdown:
        write_file(markdown, text)
    if json_path:
        write_file(json_path, json_text(report) + "\n")
    sys.stdout.write(text)


def add_emit_arguments(ap):
    """emit's two files on a report's command line: --markdown and --json."""
    ap.add_argument("--markdown", help="also write the markdown here")
    ap.add_argument("--json", help="write the report's numbers here as JSON")


def write_or_print(path, text):
    """`text` written to the file `path` (whole or not at all), or to stdout where `path` is None or empty."""
    if path:
        write_file(path, text)
    else:
        sys.stdout.write(text)
