"""The optional parts of the package: `plot` (matplotlib, with pandas) draws figures, `frames` (pandas) makes
DataFrames. Everything else (load, the schema checks, compare, summarize, history) needs only the standard library.

A command that needs a missing extra says so in one line and exits 2 (require raises MissingExtra, a ResultsError),
never a traceback."""
import importlib

from .text import ResultsError

# extra -> (the modules it brings, the Debian packages that hold them)
EXTRAS = {"plot": (("matplotlib", "numpy", "pandas"), "python3-matplotlib python3-pandas"),
          "frames": (("pandas", "numpy"), "python3-pandas")}


class MissingExtra(ResultsError):
    """A module of an optional extra is not installed: the message names the extra and how to install it."""

    def __init__(self, extra, module):
        super().__init__(f"this needs the '{extra}' extra ({module} is not installed): pip install './python[{extra}]' "
                         f"or apt install {EXTRAS[extra][1]}")
        self.extra, self.module = extra, module


def missing_module(error, extra):
    """The module of `extra` whose absence an ImportError `error` reports (the extra's main module where the error
    names none), or None where it names a module no extra brings."""
    name = getattr(error, "name", None)
    if name is None:  # raised by hand (a broken install): the extra's first module
        return EXTRAS[extra][0][0]
    return name.split(".")[0] if name.split(".")[0] in EXTRAS[extra][0] else None


def require(extra, module):
    """`module` (e.g. "pandas", or "dmabench.plot", which imports matplotlib) imported; MissingExtra where it or a
    module it needs that `extra` brings is not installed."""
    try:
        return importlib.import_module(module)
    except ImportError as e:
        name = missing_module(e, extra)
        if name is None:
            raise
        raise MissingExtra(extra, name) from None
