"""The command-line contract every dmabench-results command (and scripts/*.py shim) keeps: bad input is one line
`<tool>: error: ...` and exit 2, never a traceback (run_tool)."""
import contextlib
import io
import os
import signal
import sys
import threading
import warnings

from . import files
from .text import printable, ResultsError


# ---- the scripts' command-line contract --------------------------------------------------------------------------
# Every script's entry point is `run_tool`: bad input (a malformed or unreadable file, a bad argument, an output path
# that cannot be written) is one line `<script>: error: ...` on stderr and exit 2; a reader that goes away (`| head`)
# ends nothing early and prints nothing; Ctrl-C is one line and exit 130; a bug is one line and exit 3. Never a
# traceback: exit 1 stays what each script documents (compare.py: a regression), which a CI gate reads.

INTERNAL_ERROR = 3  # a bug in a script, never bad input


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


_running = []  # the tool names of the run_tool calls under way, innermost last (arg_parser's program name)


def _show_warning(message, category, filename, lineno, file=None, line=None):
    """A library's warning (matplotlib's "Glyph 27 (\\x1b) missing from font"), quoting text from a file: one line on
    stderr, its control characters written as escapes (text.printable), never raw."""
    print(printable(f"{current_tool('dmabench-results')}: warning: "
                    f"{category.__name__}: {message}"), file=file or sys.stderr)


def run_tool(tool, run, argv=None):
    """A command's entry point: `run(argv)`'s exit code; bad input one line and exit 2 (the contract above). `tool`
    names it in every message: the script (`compare.py`) or the subcommand (`dmabench-results compare`)."""
    _guard_console()
    _running.append(tool)
    files.clear_inputs()  # this run's inputs (a test may call several tools in one process)
    try:
        try:
            with warnings.catch_warnings():  # the previous way of showing them is back after the run
                warnings.showwarning = _show_warning
                return run(argv)
        finally:
            _running.pop()
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


def arg_parser(doc):
    """The command-line parser of a script whose docstring ends with its "Exit codes" section; a bad argument raises
    ResultsError (one line and exit 2 through run_tool, not argparse's usage and error)."""
    import argparse

    class Parser(argparse.ArgumentParser):
        def error(self, message):
            raise ResultsError(message)

    return Parser(prog=_running[-1] if _running else None, description=doc.splitlines()[0], epilog=doc[doc.index("Exit codes"):],
                  formatter_class=argparse.RawDescriptionHelpFormatter)


def current_tool(default):
    """The name of the command run_tool runs now (`plot.py`, `dmabench-results plot`), for notes on stderr that name
    it as its errors do; `default` outside run_tool."""
    return _running[-1] if _running else default
