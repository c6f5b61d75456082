"""`python3 -m dmabench.reports.crossover`: the crossover report's command line (dmabench.reports.crossover.cli), as
the single module crossover.py ran under -m."""
import sys

from .cli import main

sys.exit(main())
