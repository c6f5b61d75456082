"""Per-descriptor cost: submit and GPU time of one mechanism fitted over the descriptors per call, a + b·n (issue 54,
item 1's fit; numpy, through the `frames` extra).

A batched copy's CPU time inside the issuing calls (submit) and its GPU span grow with the descriptors n one call
carries; fitting each as a + b·n over one mechanism's points at one block size gives b, the µs per descriptor, and
a, the per-call cost.

Input: (n, submit_us, gpu_us) points (`fit_points`; either time may be None: not measured), or results records
(`fit_records`), from which the points are read:
  - n: `breakdown.descriptors` (the descriptors one operation submitted, which coalescing makes fewer than its
    blocks) where the record carries it, else `layout.blocks_per_op`;
  - submit_us: `breakdown.submit_us`, the CPU µs inside the issuing calls per operation (the batch call, the loop of
    per-block calls, the kernel launch);
  - gpu_us: `breakdown.gpu_us`, first engine start to last end per operation, µs.
Records that are not ok, not validated (`validated` false) or not of a block layout give no point; the records must
be of one mechanism (dmabench.keys.variant) and one block size (`layout.block_bytes`).

Fit: ordinary least squares of y on n; the interval of b is b ± t(0.975, m − 2) · se(b), se(b) = sqrt(s² / Σ(n −
n̄)²), s² = Σ residual² / (m − 2), over m points: a 95% interval under independent, equal-variance normal errors
(a launch-bound time's errors are neither: read it as the fit's own precision, and measure several fresh processes
for a level). Needs >= 3 distinct n (two define a line exactly and leave no residual to judge it by): fewer is
refused with a ValueError that says so.
"""
import math

from ..extras import require
from ..keys import variant

CONFIDENCE = 0.95
MIN_DISTINCT_N = 3
# t quantiles at 0.975 (two-sided 95%) by degrees of freedom; between entries interpolated in 1 / df.
T975 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306, 9: 2.262, 10: 2.228,
        11: 2.201, 12: 2.179, 13: 2.160, 14: 2.145, 15: 2.131, 16: 2.120, 17: 2.110, 18: 2.101, 19: 2.093, 20: 2.086,
        21: 2.080, 22: 2.074, 23: 2.069, 24: 2.064, 25: 2.060, 26: 2.056, 27: 2.052, 28: 2.048, 29: 2.045, 30: 2.042,
        40: 2.021, 60: 2.000, 120: 1.980}
Z975 = 1.959964


def t975(df):
    """The 0.975 quantile of Student's t with `df` >= 1 degrees of freedom (the table, interpolated in 1 / df)."""
    if df in T975:
        return T975[df]
    keys = sorted(T975)
    if df > keys[-1]:
        lo, hi, tlo, thi = keys[-1], math.inf, T975[keys[-1]], Z975
    else:
        lo = max(k for k in keys if k < df)
        hi = min(k for k in keys if k > df)
        tlo, thi = T975[lo], T975[hi]
    w = (1 / lo - 1 / df) / (1 / lo - (0 if hi == math.inf else 1 / hi))
    return tlo + w * (thi - tlo)


def fit_line(ns, ys, what="y"):
    """OLS y = a + b·n with b's 95% t interval: {"per_call_us", "per_desc_us", "per_desc_interval_us", "points",
    "distinct_n", "residual_sd_us", "r2"}; ValueError with fewer than MIN_DISTINCT_N distinct n."""
    np = require("frames", "numpy")
    n, y = np.asarray(ns, dtype=float), np.asarray(ys, dtype=float)
    if n.shape != y.shape or n.ndim != 1:
        raise ValueError(f"{what}: n and times differ in length ({n.size} and {y.size})")
    if not (np.all(np.isfinite(n)) and np.all(np.isfinite(y))):
        raise ValueError(f"{what}: n and times must be finite numbers")
    distinct = np.unique(n).size
    if distinct < MIN_DISTINCT_N:
        raise ValueError(f"{what}: {distinct} distinct descriptor count{'s' if distinct != 1 else ''} "
                         f"(n = {', '.join(f'{v:g}' for v in np.unique(n))}); the fit needs >= {MIN_DISTINCT_N}")
    m = n.size
    sxx = float(np.sum((n - n.mean()) ** 2))
    b = float(np.sum((n - n.mean()) * (y - y.mean())) / sxx)
    a = float(y.mean() - b * n.mean())
    resid = y - (a + b * n)
    ssr, sst = float(np.sum(resid ** 2)), float(np.sum((y - y.mean()) ** 2))
    s2 = ssr / (m - 2)
    half = t975(m - 2) * math.sqrt(s2 / sxx)
    return {"per_call_us": a, "per_desc_us": b, "per_desc_interval_us": [b - half, b + half],
            "confidence": CONFIDENCE, "points": m, "distinct_n": distinct, "residual_sd_us": math.sqrt(s2),
            "r2": 1 - ssr / sst if sst > 0 else None}


def fit_points(points):
    """{"submit": fit or None, "gpu": fit or None} over [(n, submit_us, gpu_us)]; a figure that no point carries
    is None; one that some carry is fitted over those (ValueError where they have too few distinct n)."""
    out = {}
    for name, i in (("submit", 1), ("gpu", 2)):
        have = [(p[0], p[i]) for p in points if p[i] is not None]
        out[name] = fit_line([x for x, _ in have], [v for _, v in have], f"{name}_us") if have else None
    return out


def number(x):
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


def point_of(r):
    """(n, submit_us, gpu_us) of one counted record, or None where it is not one (not ok, not blocks)."""
    layout = r.get("layout") if isinstance(r.get("layout"), dict) else {}
    if r.get("status") != "ok" or r.get("validated") is False or layout.get("kind") != "blocks":
        return None
    b = r.get("breakdown") if isinstance(r.get("breakdown"), dict) else {}
    n = b.get("descriptors") if number(b.get("descriptors")) else layout.get("blocks_per_op")
    if not number(n):
        return None
    return (n, b["submit_us"] if number(b.get("submit_us")) else None, b["gpu_us"] if number(b.get("gpu_us")) else None)


def fit_records(records):
    """fit_points over results records of one mechanism and block size (the module's docstring), with the mechanism
    and block size named; ValueError where they mix mechanisms or sizes, or carry no breakdown."""
    used = [r for r in records if point_of(r) is not None]
    mechs = sorted({variant(r) for r in used})
    sizes = sorted({r["layout"].get("block_bytes") for r in used}, key=str)
    if len(mechs) > 1 or len(sizes) > 1:
        raise ValueError(f"records of {len(mechs)} mechanisms ({', '.join(mechs)}) and {len(sizes)} block sizes: "
                         "fit one mechanism at one block size at a time")
    points = [point_of(r) for r in used]
    if not any(p[1] is not None or p[2] is not None for p in points):
        raise ValueError(f"{len(used)} block record(s), none with breakdown.submit_us or breakdown.gpu_us")
    return {"mechanism": mechs[0], "block_bytes": sizes[0], **fit_points(points)}
