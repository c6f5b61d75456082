"""`python3 -m dmabench`: the dmabench-results command."""
import sys

from .cli import main

sys.exit(main())
