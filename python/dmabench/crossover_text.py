"""What results/h200x1/crossover/README.md quotes from its committed data: the `crossover-claims` generated blocks
(dmabench.generated). Every figure is read with crossover.py's own reading (reports.crossover.collect, outcome), so
the text and the report cannot disagree.

  crossover-claims step FILE DIR:HOST MECH SMALL LARGE MIN_N
      MECH at block sizes SMALL and LARGE, per n: both p50s with their intervals, the time ratio (SMALL's p50 over
      LARGE's), both rates (n x B / p50) and the rate ratio (LARGE's rate over SMALL's); then one line for n >= MIN_N.
      A time ratio and a rate ratio differ by LARGE / SMALL: a sentence quotes one or the other, named.
  crossover-claims versus FILE DIR:HOST KERNEL DMA N FROM
      KERNEL against DMA at n = N from block size FROM up: the ratio DMA p50 / KERNEL p50 over those sizes, and the
      sizes where either wins (intervals apart) or they tie.
  crossover-claims pool DIR
      DIR/pool.json (dmabench, a levels file: pool of exactly the blocks against `pool_bytes` 1 GiB) and
      DIR/pool-probe-SIZE-K.jsonl (tools/crossover_probe, one process each: a pool of SIZE): per tool and block size
      both pools' p50s with their intervals, the ratio and whether the intervals are apart.
  crossover-claims probe FILE DIR:HOST MECH PROBE_DIR
      MECH's cells of FILE at DIR:HOST beside tools/crossover_probe's processes (PROBE_DIR/probe-*.jsonl, their cells
      of that direction and mode): both p50s with their intervals, dmabench / probe, and whether within ±10%.
"""
import glob
import json
import os
import re
import statistics

from .levels import median_ranks
from .reports import crossover
from .text import fmt_num, fmt_size, parse_size, ResultsError, table


def group_cells(path, where, root):
    """The cells {(B, n, mechanism): entry} of the group of FILE at DIR:HOST (host kind, or "device")."""
    pattern, _, host = where.partition(":")
    try:
        groups, _, _ = crossover.collect([os.path.join(root, path)], "oneshot")
    except ResultsError as e:
        raise ResultsError(f"{path}: {e}") from None
    for (p, in_place, h, _, _), g in groups.items():
        if p == pattern and not in_place and (h[0] if h else "device") == host:
            return g["cells"]
    raise ResultsError(f"{path}: no block group {where}")


def size_of(text):
    try:
        return parse_size(text)
    except (ValueError, ResultsError):
        raise ResultsError(f"crossover-claims: {text!r} is not a size (e.g. 36KiB)") from None


def span(xs, fmt="{:.2f}"):
    lo, hi = min(xs), max(xs)
    return fmt.format(lo) if fmt.format(lo) == fmt.format(hi) else f"{fmt.format(lo)}–{fmt.format(hi)}"


def interval(e):
    return f"{fmt_num(e['p50_us'])} [{fmt_num(e['interval'][0])}, {fmt_num(e['interval'][1])}]"


def coverage_note(entries):
    said = sorted({f"{e['interval_kind']}: {100 * e['coverage']:g}%" for e in entries if e["coverage"] is not None})
    return f"Intervals (µs) hold the median with: {'; '.join(said)}." if said else "No intervals recorded."


def step(args, root):
    path, where, mech, small, large, min_n = args
    a, b, min_n = size_of(small), size_of(large), int(min_n)
    cells = group_cells(path, where, root)
    rows, shown, chosen = [], [], []
    for n in sorted({n for _, n, m in cells if m == mech}):
        s, l = cells.get((a, n, mech)), cells.get((b, n, mech))
        if not (s and l):
            continue
        time, rate_s, rate_l = s["p50_us"] / l["p50_us"], n * a / s["p50_us"] / 1e3, n * b / l["p50_us"] / 1e3
        apart = "yes" if crossover.outcome(l, s) == "kernel" else "no"  # LARGE's interval wholly below SMALL's
        rows.append([str(n), interval(s), interval(l), f"{time:.2f}×", f"{rate_s:.1f}", f"{rate_l:.1f}",
                     f"{rate_l / rate_s:.2f}×", apart])
        shown += [s, l]
        if n >= min_n:
            chosen.append((time, rate_s, rate_l, rate_l / rate_s))
    if not chosen:
        raise ResultsError(f"crossover-claims step: no n >= {min_n} with both sizes")
    sa, sb = fmt_size(a), fmt_size(b)
    head = ["n", f"p50 µs at {sa}", f"at {sb}", f"time ratio ({sa} p50 / {sb} p50)", f"GB/s at {sa}",
            f"GB/s at {sb}", f"rate ratio ({sb} GB/s / {sa} GB/s)", "intervals apart"]
    line = (f"For n ≥ {min_n}: a {sb} block call takes {span([1 / c[0] for c in chosen])}× the time of a {sa} one "
            f"and moves {span([c[3] for c in chosen])}× the bytes per second ({span([c[1] for c in chosen], '{:.1f}')}"
            f" → {span([c[2] for c in chosen], '{:.1f}')} GB/s).")
    return "\n".join([table(head, rows), "", f"{mech}, {where}. {coverage_note(shown)}", "", line])


def versus(args, root):
    path, where, kernel, dma, n, start = args
    n, start = int(n), size_of(start)
    cells = group_cells(path, where, root)
    sizes = sorted(b for b, c, m in cells if c == n and m == kernel and b >= start and (b, n, dma) in cells)
    if not sizes:
        raise ResultsError(f"crossover-claims versus: no size from {fmt_size(start)} at n={n} with both")
    by = {"kernel": [], "tie": [], "dma": []}
    ratios = []
    for b in sizes:
        k, d = cells[(b, n, kernel)], cells[(b, n, dma)]
        by[crossover.outcome(k, d)].append(b)
        ratios.append(d["p50_us"] / k["p50_us"])
    said = {key: f"{len(v)} ({', '.join(fmt_size(b) for b in v)})" if v else "0" for key, v in by.items()}
    return (f"{where}, n={n}, {len(sizes)} block sizes from {fmt_size(start)} to {fmt_size(sizes[-1])}: {dma} p50 / "
            f"{kernel} p50 {min(ratios):.2f}–{max(ratios):.2f}× (> 1: the kernel faster); {kernel} wins (intervals "
            f"apart) at {said['kernel']}; ties at {said['tie']}; {dma} wins at {said['dma']}. "
            f"{coverage_note([cells[(b, n, m)] for b in sizes for m in (kernel, dma)])}")


def probe_levels(files, key):
    """{key: entry} over tools/crossover_probe's JSON lines in `files`: key(file, record) names a record's cell (None:
    left out); an entry is the median process p50 and levels' between-process interval of those processes."""
    per = {}
    for f in files:
        with open(f, encoding="utf-8") as fh:
            for line in fh:
                r = json.loads(line)
                k = key(f, r) if "p50_us" in r and r.get("validated", True) else None
                if k is not None:
                    per.setdefault(k, []).append(r["p50_us"])
    out = {}
    for k, xs in per.items():
        xs = sorted(xs)
        j, m, coverage = median_ranks(len(xs)) if len(xs) > 1 else (1, 1, None)
        out[k] = {"p50_us": statistics.median(xs), "interval": [xs[j - 1], xs[m - 1]], "coverage": coverage,
                  "interval_kind": f"[min, max] of {len(xs)} processes' p50s" if j == 1 else
                  f"ranks {j} and {m} of {len(xs)} processes' sorted p50s"}
    return out


def probe_entries(directory, root):
    """{(pool label, B, n): entry} of the pool step's probe files (pool-probe-SIZE-K.jsonl)."""
    def key(f, r):
        return (re.match(r"pool-probe-(.+)-\d+\.jsonl$", os.path.basename(f)).group(1), r["block_bytes"], r["n"])
    return probe_levels(sorted(glob.glob(os.path.join(root, directory, "pool-probe-*-*.jsonl"))), key)


def against_probe(args, root):
    """MECH's cells of FILE at DIR:HOST beside the probe's (PROBE_DIR/probe-*.jsonl, its cells of that direction and
    mode): both p50s with their intervals, the ratio dmabench / probe, and whether it is within ±10%."""
    path, where, mech, probe_dir = args
    cells = group_cells(path, where, root)
    direction = where.partition(":")[0]
    files = sorted(glob.glob(os.path.join(root, probe_dir, "probe-*.jsonl")))
    probe = probe_levels(files, lambda f, r: (r["block_bytes"], r["n"]) if (r.get("dir"), r.get("mode")) ==
                         (direction, mech) else None)
    rows, shown, outside = [], [], []
    for (b, n) in sorted(probe):
        d = cells.get((b, n, mech))
        if d is None:
            continue
        ratio = d["p50_us"] / probe[(b, n)]["p50_us"]
        rows.append([f"{fmt_size(b)} × {n}", interval(d), interval(probe[(b, n)]), f"{ratio:.3f}",
                     "yes" if abs(ratio - 1) <= 0.10 else "no"])
        shown += [d, probe[(b, n)]]
        if abs(ratio - 1) > 0.10:
            outside.append(f"{fmt_size(b)} × {n} ({ratio:.2f})")
    if not rows:
        raise ResultsError(f"crossover-claims probe: no cell of {mech} at {where} in both {path} and {probe_dir}")
    head = ["block × n", "dmabench p50 µs [interval]", "probe p50 µs [interval]", "dmabench / probe", "within ±10%"]
    return "\n".join([table(head, rows), "", coverage_note(shown), "",
                      f"{len(rows) - len(outside)} of {len(rows)} cells within ±10% of the probe" +
                      (f"; outside: {', '.join(outside)}." if outside else ".")])


def pool_rows(small, big, rows, tool, smalls_label, bigs_label, shown):
    for key in sorted(small):
        if key not in big:
            continue
        s, g = small[key], big[key]
        apart = crossover.outcome(s, g) != "tie"
        rows.append([tool, f"{fmt_size(key[0])} × {key[1]}", f"{smalls_label}: {interval(s)}",
                     f"{bigs_label}: {interval(g)}", f"{g['p50_us'] / s['p50_us']:.3f}×", "yes" if apart else "no"])
        shown += [s, g]


def pool(args, root):
    (directory,) = args
    groups, _, _ = crossover.collect([os.path.join(root, directory, "pool.json")], "oneshot")
    by_pool = {k[4][2]: g["cells"] for k, g in groups.items()}  # a group per arrangement: per pool size
    if None not in by_pool or len(by_pool) != 2:
        raise ResultsError(f"{directory}/pool.json: expected two pools, one of exactly the blocks")
    big = max(p for p in by_pool if p is not None)
    exact = {(b, n): e for (b, n, _), e in by_pool[None].items()}
    large = {(b, n): e for (b, n, _), e in by_pool[big].items()}
    rows, shown = [], []
    pool_rows(exact, large, rows, "dmabench", "exact", fmt_size(big), shown)
    probe = probe_entries(directory, root)
    labels = sorted({label for label, _, _ in probe}, key=size_of)
    if len(labels) == 2:
        lo, hi = labels
        pool_rows({k[1:]: e for k, e in probe.items() if k[0] == lo}, {k[1:]: e for k, e in probe.items()
                                                                       if k[0] == hi}, rows, "probe", lo, hi, shown)
    head = ["tool", "block × n", "smaller pool p50 µs [interval]", "larger pool", "larger / smaller", "intervals apart"]
    return "\n".join([table(head, rows), "", coverage_note(shown), ""] + pool_summary(rows))


def pool_summary(rows):
    """Per tool one line: at how many cells the larger pool was slower, by how much, and how many apart."""
    out = []
    for tool in dict.fromkeys(r[0] for r in rows):
        mine = [r for r in rows if r[0] == tool]
        ratios = [float(r[4].rstrip("×")) for r in mine]
        slower = [x for x in ratios if x > 1]
        out.append(f"- {tool}: the larger pool slower at {len(slower)} of {len(mine)} cells"
                   + (f" ({span(slower, '{:.3f}')}×)" if slower else "")
                   + f"; intervals apart at {sum(r[5] == 'yes' for r in mine)} of {len(mine)}.")
    return out


def generated_block(args, root):
    kinds = {"step": (step, 6), "versus": (versus, 6), "pool": (pool, 1), "probe": (against_probe, 4)}
    if not args or args[0] not in kinds or len(args) - 1 != kinds[args[0]][1]:
        raise ResultsError("crossover-claims: expected step FILE DIR:HOST MECH SMALL LARGE MIN_N, "
                           "versus FILE DIR:HOST KERNEL DMA N FROM, pool DIR, or probe FILE DIR:HOST MECH PROBE_DIR")
    return kinds[args[0]][0](args[1:], root)
