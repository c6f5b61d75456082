"""Puts this checkout's python/ on sys.path where the dmabench package is not installed, so that the scripts/*.py
shims run from a clone as they always have (`pip install ./python` makes this a no-op). The one sys.path line of
the tree: the package, its tests and the notebook have none."""
import importlib.util
import os
import sys

if importlib.util.find_spec("dmabench") is None:
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "python"))
