"""Tables in markdown files made from committed data: a block between

    <!-- generated: COMMAND ARGS -->
    <!-- end generated -->

is the output of COMMAND over ARGS (paths relative to the checkout's root), never typed by hand.

usage: dmabench-results tables FILE.md... [--check]

Rewrites each block of each FILE with what its command prints now; --check writes nothing and exits 1 naming the
first block whose text differs (tests/python/test_generated_tables.py runs it over every markdown file of the tree).
The commands (arguments split as a shell would: quote one that holds a space): `gate-rates --table RATES.json...`
(dmabench.gate_rates.markdown; several: merged); `gate-cases RATES.json` (the cases it could not call, from the ab.json files
beside it: dmabench.gate_rates.cases_markdown); `gate-spin DEPTH RATES.json...` (the shim spin's predicted slowdown
of pipelined cases beside the measured: dmabench.gate_rates.spin_markdown); `levels-spread LABEL=LEVELS.json...` (per levels file: how far its processes' p50s
spread, max/min per case); `levels-selfcmp LABEL=A.json,B.json...` (two runs of one build: half-widths from both runs,
one-process pairs, processes needed: dmabench.selfcmp_text); `crossover-claims step|versus|pool|probe ...` (the figures
results/h200x1/crossover/README.md quotes: dmabench.crossover_text); `quiet-core spread|slow|probe KV.tgz` (the quiet
core's kv-pool rounds on one GPU: dmabench.quiet_core); `ab AB.json` (a paired A/B run's verdicts, every case: compare's
table over the ab.json of `dmabench-results ab`).
Exit codes: 0 done (or --check: every block as made), 1 --check: a block differs, 2 bad input (an unknown command, a
missing data file, a block without its end).
"""
import json
import os
import re
import shlex
import sys

from . import compare, crossover_text, gate_rates, quiet_core, selfcmp_text
from .files import checkout_root, open_text, write_file
from .text import ResultsError, table
from .tool import arg_parser, run_tool

TOOL = "tables"
BLOCK = re.compile(r"(<!-- generated: (?P<command>[^>]*?) -->\n)(?P<body>.*?)(<!-- end generated -->)", re.S)


def gate_rates_table(args, root):
    if len(args) < 2 or args[0] != "--table":
        raise ResultsError(f"gate-rates {' '.join(args)}: expected gate-rates --table RATES.json...")
    return gate_rates.markdown(gate_rates.merge([gate_rates.load(os.path.join(root, a)) for a in args[1:]]))


def ab_table(args, root):
    """`ab AB.json`: a paired A/B run's verdicts, every case (compare's table over the ab.json `dmabench-results ab`
    wrote)."""
    if len(args) != 1:
        raise ResultsError(f"ab {' '.join(args)}: expected ab AB.json")
    try:
        with open_text(os.path.join(root, args[0])) as f:
            doc = json.load(f)
        return compare.markdown(doc["cases"], doc["only_in_base"], doc["only_in_new"], doc["min_change"], doc["alpha"],
                                show_all=True)
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise ResultsError(f"{args[0]}: not an ab.json ({type(e).__name__}: {e})") from None


def levels_spread_table(args, root):
    """`levels-spread LEVELS.json...`: per levels file (a label=PATH each), the median over its ok cases of the
    processes' max/min p50 and the share of cases above 1.1x."""
    rows = []
    for arg in args:
        label, eq, path = arg.partition("=")
        if not eq:
            raise ResultsError(f"levels-spread {arg}: expected LABEL=LEVELS.json")
        try:
            with open_text(os.path.join(root, path)) as f:
                doc = json.load(f)
        except (OSError, ValueError) as e:
            raise ResultsError(f"{path}: {e}") from None
        ratios = sorted(max(x) / min(x) for r in doc["results"] if r.get("status") == "ok"
                        for x in [[v for v in r["levels"]["p50_us"] if v]] if x)
        if not ratios:
            raise ResultsError(f"{path}: no ok levels record")
        median = ratios[(len(ratios) - 1) // 2] if len(ratios) % 2 else (ratios[len(ratios) // 2 - 1] + ratios[len(ratios) // 2]) / 2
        processes = doc["context"]["levels"]["processes"]
        rows.append([label, str(processes), str(len(ratios)), f"{median:.2f}x",
                     f"{100 * sum(x > 1.1 for x in ratios) / len(ratios):.0f}%", f"{ratios[-1]:.2f}x"])
    return table(["run", "processes", "ok cases", "median max/min p50", "cases above 1.1x", "worst"], rows)


def gate_cases_table(args, root):
    """`gate-cases RATES.json`: which cases a gate-rates measurement could not call, from its ab.json files."""
    if len(args) != 1:
        raise ResultsError(f"gate-cases {' '.join(args)}: expected gate-cases RATES.json")
    try:
        return gate_rates.cases_markdown(os.path.join(root, args[0]))
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise ResultsError(f"{args[0]}: {type(e).__name__}: {e}") from None


def gate_spin_table(args, root):
    """`gate-spin DEPTH RATES.json...`: the shim spin's predicted slowdown of the pipelined cases beside the measured."""
    if len(args) < 2 or not args[0].isdigit() or int(args[0]) < 1:
        raise ResultsError(f"gate-spin {' '.join(args)}: expected gate-spin DEPTH RATES.json... (DEPTH: calls a sample)")
    try:
        return gate_rates.spin_markdown(int(args[0]), [os.path.join(root, a) for a in args[1:]])
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise ResultsError(f"gate-spin: {type(e).__name__}: {e}") from None


COMMANDS = {"gate-rates": gate_rates_table, "gate-cases": gate_cases_table, "gate-spin": gate_spin_table, "levels-spread": levels_spread_table,
            "levels-selfcmp": selfcmp_text.generated_block, "crossover-claims": crossover_text.generated_block,
            "quiet-core": quiet_core.generated_block, "ab": ab_table}


def render(command, root):
    """What the block's command prints now."""
    try:
        name, *args = shlex.split(command)
    except ValueError as e:
        raise ResultsError(f"generated block `{command}`: {e}") from None
    if name not in COMMANDS:
        raise ResultsError(f"generated block `{command}`: unknown command; known: {', '.join(COMMANDS)}")
    return COMMANDS[name](args, root).rstrip("\n") + "\n"


def regenerate(text, root):
    """`text` with every generated block made anew; ResultsError for a block that opens and does not end."""
    if text.count("<!-- generated: ") != text.count("<!-- end generated -->"):
        raise ResultsError("a `<!-- generated: ... -->` block without its `<!-- end generated -->` (or the reverse)")
    return BLOCK.sub(lambda m: m.group(1) + render(m.group("command"), root) + m.group(4), text)


def main(argv=None, tool=TOOL):
    return run_tool(tool, run, argv)


def run(argv=None):
    ap = arg_parser(__doc__)
    ap.add_argument("files", nargs="+", help="markdown files with generated blocks")
    ap.add_argument("--check", action="store_true", help="write nothing; exit 1 where a block differs")
    a = ap.parse_args(argv)
    root = checkout_root()
    stale = []
    for path in a.files:
        try:
            with open(path, encoding="utf-8") as f:
                text = f.read()
        except OSError as e:
            raise ResultsError(f"{path}: {e.strerror}") from None
        new = regenerate(text, root)
        if new != text:
            stale.append(path)
            if not a.check:
                write_file(path, new)
    for path in stale:
        print(f"{path}: {'differs from what its commands make now' if a.check else 'rewritten'}")
    return 1 if a.check and stale else 0


if __name__ == "__main__":
    sys.exit(main())
