"""dmabench-results: the one command of the dmabench package, a subcommand per job.

usage: dmabench-results COMMAND [ARGS...]      (dmabench-results COMMAND --help: that command's options)
       dmabench-results report KIND [ARGS...]
       dmabench-results --version                (the package's version, dmabench's: python/dmabench/VERSION)

Each subcommand is the command line of a script that scripts/ still carries as a thin shim (`scripts/compare.py
A B` runs `dmabench-results compare A B`), with the same options, output and exit codes; messages name the
subcommand (`dmabench-results compare: error: ...`). Bad input is one line on stderr and exit 2, never a
traceback; a command that needs a missing extra (plot: matplotlib and pandas) says which and how to install it in
one line, exit 2.
"""
import importlib
import sys
from collections import namedtuple

from .extras import MissingExtra, require
from .tool import fail

PROG = "dmabench-results"
# target: "module:function" (function(argv, tool=...) -> exit code); extra: what it imports beyond the standard
# library; script: the scripts/ shim that runs it
Command = namedtuple("Command", "target extra script help")

COMMANDS = {
    "summarize": Command("dmabench.summarize:main", None, "summarize.py", "markdown tables of a results file"),
    "compare": Command("dmabench.compare:main", None, "compare.py",
                       "two results files case by case; exit 1 on a regression (a CI gate)"),
    "export": Command("dmabench.export_csv:main", None, "export_csv.py", "CSV of a results file, a row per case"),
    "plot": Command("dmabench.plot:main", "plot", "plot.py", "figures of results files (the plot extra)"),
    "trend": Command("dmabench.history:main_trend", None, None,
                     "a case over time from a history database: text, JSON, or a figure with --out (plot extra)"),
    "history": Command("dmabench.history:main", None, "history.py",
                       "the SQLite history of runs: add, machines, trend, gate (a CI gate), prune, vacuum"),
    "ab": Command("dmabench.ab:main", None, None,
                  "paired A/B runs of two dmabench builds in alternating fresh processes, with verdicts (a CI gate)"),
    "gate-rates": Command("dmabench.gate_rates:main", None, None,
                          "how often ab's verdict is wrong: A/A and injected-slowdown comparisons, measured"),
    "tables": Command("dmabench.generated:main", None, None,
                      "the tables in markdown files made from committed data, made anew (--check: unchanged?)"),
    "crossover": Command("dmabench.reports.thresholds:main", None, None,
                         "crossover export: the thresholds a serving engine can load (JSON; the maps: report "
                         "crossover)"),
    "merge": Command("dmabench.merge_runs:main", None, "merge_runs.py",
                     "the results files of N processes into one levels file"),
    "launch-compare": Command("dmabench.launch_compare:main", None, "launch_compare.py",
                              "one process against one process per GPU, tabled side by side"),
    "moe-trace": Command("dmabench.moe_trace:main", None, "moe_trace.py",
                         "a synthetic mixture-of-experts routing trace"),
    "sdma-map": Command("dmabench.sdma_map:main", None, "sdma_map.py", "an SDMA engine map from the AMD kernel driver"),
    "amd-first-run": Command("dmabench.amd_first_run:main", None, "amd_first_run.py",
                             "the helper of scripts/amd-first-run.sh"),
}
REPORTS = {
    "blocks": Command("dmabench.reports.blocks:main", None, "blocks_report.py",
                      "block-layout tables: winners, crossovers, fixed costs"),
    "crossover": Command("dmabench.reports.crossover:main", None, "crossover.py",
                         "crossover maps: who should move small blocks (--plots: plot extra)"),
    "moe": Command("dmabench.reports.moe:main", None, "moe_report.py", "alltoallv (MoE dispatch / combine) tables"),
    "overlap": Command("dmabench.reports.overlap:main", None, "overlap_report.py",
                       "communication beside compute tables"),
    "setup": Command("dmabench.reports.setup:main", None, "setup_report.py", "what setting cases up cost"),
    "dma-latte": Command("dmabench.reports.dma_latte:main", None, "dma_latte_report.py", "DMA-Latte tables"),
    "host-reference": Command("dmabench.reports.host_reference:main", None, "host_reference.py",
                              "host-memory cases against tools/host_probe.cu"),
    "matrix": Command("dmabench.reports.matrix:main", None, "matrix.py", "all-pairs matrices"),
    "html": Command("dmabench.html_report:main", None, None,
                    "one self-contained HTML file: machine, summary, verdicts (--against), figures, every case"),
}
SCRIPTS = {c.script: c for c in (*COMMANDS.values(), *REPORTS.values()) if c.script}


def run(command, argv, tool):
    """`command`'s exit code on `argv` (None: sys.argv[1:]), its messages naming `tool`."""
    module, function = command.target.split(":")
    try:
        mod = require(command.extra, module) if command.extra else importlib.import_module(module)
    except MissingExtra as e:
        return fail(tool, e)
    return getattr(mod, function)(argv, tool=tool)


def script(name, argv=None):
    """The scripts/ shim `name` (e.g. "compare.py"): its command, its messages naming the script as before."""
    return run(SCRIPTS[name], argv, name)


def usage(table, head):
    width = max(map(len, table))
    lines = [head, "", "commands:"] + [f"  {name:<{width}}  {c.help}" for name, c in table.items()]
    return "\n".join(lines) + "\n"


def main(argv=None):
    """The console entry point `dmabench-results`: the exit code of the subcommand argv[0] names."""
    argv = sys.argv[1:] if argv is None else list(argv)
    head = __doc__.split("\n\n", 1)[1].rstrip()
    if argv[:1] in (["-h"], ["--help"]):
        sys.stdout.write(usage({**COMMANDS, "report": Command(None, None, None, "a report: " + ", ".join(REPORTS))},
                               head))
        return 0
    if argv[:1] == ["--version"]:
        from . import __version__
        sys.stdout.write(f"{PROG} {__version__}\n")
        return 0
    if not argv:
        return fail(PROG, f"a command is needed: {', '.join([*COMMANDS, 'report'])} (--help says what each does)")
    name, rest = argv[0], argv[1:]
    if name == "report":
        if rest[:1] in (["-h"], ["--help"]):
            sys.stdout.write(usage(REPORTS, f"usage: {PROG} report KIND [ARGS...]"))
            return 0
        kind = rest[0] if rest else None
        if kind not in REPORTS:
            return fail(f"{PROG} report", f"a report kind is needed, one of {', '.join(REPORTS)}; got {kind!r}")
        return run(REPORTS[kind], rest[1:], f"{PROG} report {kind}")
    if name not in COMMANDS:
        return fail(PROG, f"no command {name[:80]!r}; the commands: {', '.join([*COMMANDS, 'report'])}")
    return run(COMMANDS[name], rest, f"{PROG} {name}")


if __name__ == "__main__":
    sys.exit(main())
