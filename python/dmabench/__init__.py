"""dmabench: read, check, compare and report dmabench results files (`pip install ./python`; the command is
`dmabench-results`).

The core needs only the standard library; `to_frame` / `history_frame` need pandas (the `frames` extra) and
dmabench.plot needs matplotlib (the `plot` extra). Modules, one job each:

  text     ResultsError, quoting, printable text, numbers and sizes, markdown tables, JSON output
  files    reading inputs and writing outputs safely (write_file, emit)
  schema   the checks of a results document (check_document, check_number, check_kind)
  reader   load: results files and journals
  keys     a case's identity and labels (case_key, variant, where, labels_apart, machine_label)
  frames   pandas DataFrames (to_frame, case_table, history_frame)
  tool     the command-line contract (run_tool: one line and exit 2 on bad input)
  extras   the optional extras (require, MissingExtra)
  program  the dmabench program, for what only it does (find_program; merge_files: the levels merge)
  cli      the dmabench-results command; summarize, compare, export_csv, plot, history, merge_runs, levels,
           launch_compare, moe_trace, sdma_map, amd_first_run and reports.* are its subcommands
"""
from .extras import MissingExtra
from .frames import case_table, columns_apart, history_frame, keyed, to_frame
from .keys import (PATTERN_ORDER, beside, case_class, case_key, command_bytes, engine_options_in_name, labels_apart,
                   machine_label, p50_interval, pattern_label, placement, placement_order, software_times, variant,
                   versions_caption, where)
from .reader import load, read_journal
from .schema import check_document
from .text import ResultsError, fmt_num, fmt_size, parse_size, quote, table



def _version():
    """The one version of dmabench: dmabench/VERSION, shipped in the package (CMake and setuptools read it too)."""
    import os
    with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "VERSION"), encoding="utf-8") as f:
        return f.read().strip()


__version__ = _version()
__all__ = ["MissingExtra", "PATTERN_ORDER", "ResultsError", "beside", "case_class", "case_key", "case_table",
           "check_document", "columns_apart", "command_bytes", "engine_options_in_name", "fmt_num", "fmt_size",
           "history_frame", "keyed", "labels_apart", "load", "machine_label", "p50_interval", "parse_size",
           "pattern_label", "placement", "placement_order", "quote", "read_journal", "software_times", "table",
           "to_frame", "variant", "versions_caption", "where"]
