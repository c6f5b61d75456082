"""A history of dmabench runs in SQLite, for CI regression gates and notebooks (docs/history.md; the command line and
its options: dmabench.history.cli, `dmabench-results history --help`).

One module per seam, each importing only those above it in this list (no circle):
  rows     runs and records as the rows stored, the results files `add` reads
  db       the database file: identity, schema version and migrations, opening, transactions, storing a run
  rule     the gate's rule (its parameters; the verdicts themselves: dmabench.verdict), draws, bands, the history read
  judging  `gate`: a run's cases judged against their history; its lines, JSON and JUnit test cases
  trends   `trend`: a case's runs over time with the band before each
  upkeep   `prune` and `vacuum`
  cli      the command line (history.py, dmabench-results history / trend)
The names below are those the single module history.py had; they stay importable from dmabench.history.
"""
from .rows import (is_results, now, number, prepare, process_p50s, record_row, results_files, Run, runs_of,
                   utc)
from .db import (APPLICATION_ID, backfill_process_p50s, BUSY_TIMEOUT_S, BUSY_TRIES, busy, db_errors, FRAME_QUERY,
                 hot_journal, identify, JOURNAL_SUFFIX_DB, MIGRATIONS, open_db, RECORD_COLUMNS, retried, RUN_COLUMNS,
                 SCHEMA_VERSION, store, store_all, transaction)
from .rule import (add_rule_arguments, Band, band, band_text, DEFAULT_RULE, draws, history, HISTORY_QUERY,
                   history_draws, judge_family, merge, Rule, rule_of, rule_text, sources)
from .judging import (candidate_cases, describe, EARLIER_RUNS, FAILING, gate, gate_all, gate_case, gate_json,
                      judged_by, missing_cases, sweep_of, verdict_entry, VERDICTS)
from .trends import FIGURES, in_figure, matching, REGEX_SECONDS, trend, trend_markdown
from .upkeep import cmd_prune, cmd_vacuum, doomed_runs, existing_db, prune_args, remove_runs
from .cli import (add_trend_arguments, cmd_add, cmd_gate, cmd_machines, cmd_trend, database_files, DEFAULT_DB,
                  main, main_trend, run, run_trend, TOOL)
