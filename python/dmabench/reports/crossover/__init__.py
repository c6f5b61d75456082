"""Crossover maps from dmabench block-layout results: who should move small blocks (`dmabench-results report
crossover`, scripts/crossover.py; the method, the command line and its options: dmabench.reports.crossover.cli).

One module per seam, each importing only those above it in this list (no circle):
  read       the results files' block records as cells, grouped (block size, count, arrangement, host memory, SMs
             held, the p50 interval's coverage)
  fits       the model per mechanism and where it breaks, the bandwidth cliffs, the knees
  decisions  per cell the winner, ties and SM cost; regions, thresholds, --versus pairs; analyse (one group)
  md         the Markdown report
  plots      the heat maps and head-to-head maps (--plots; matplotlib)
  cli        the report (report_of), the command line and its --help
The names below are those the single module crossover.py had; they stay importable from dmabench.reports.crossover.
"""
from .read import block_of, collect, coverage_of, DMA_ENGINES, entry_of, host_of, sms_held, WITHIN_COVERAGE
from .fits import (bandwidths, best_split, cliffs_of, fit_cells, fit_mechanism, fit_obstacle, grow, knee_of, ln,
                   MIN_CLIFF_SIZES, MIN_FIT_CELLS, ratio_text, solve3, solve_fit)
from .decisions import (analyse, decide, decision_rows, group_order, HOST_KINDS, mechanism_cell, outcome,
                        regions_of, run_text, series_of, size_range, split_pair, threshold, thresholds_of, title,
                        versus_all, versus_cell, versus_line, versus_of)
from .md import (break_text, bullets, cell_p50, COST_LEGEND, cost_md, coverage_sentence, decision_md, decision_text,
                 fit_row, fits_md, group_md, interval_md, markdown, notes_of, pct, piece_text, versus_md, versus_text)
from .plots import (COLOURS, draw_cells, grid_axes, heat_map, MISSING, plot_all, plot_versus, pyplot, save_png, sig2,
                    slug, versus_cells, versus_cliffs, VERSUS_CLIP, versus_map)
from .cli import main, positive, report_of, REPORT_SCHEMA, run, source_of, TOOL
