r"""The decision rules of notebook 07's claims: pure functions of arrays, the same code on a run and on a simulation.

Each rule turns point estimates and their replicates (question resamples, :mod:`.replicates`) into a
:class:`Decision`: a verdict of :mod:`vlmrobust.stats.claims`, the statistic reported, its interval and
the instance it belongs to. :mod:`.claims` calls them on the run's tables; :mod:`.rules` calls them on
data drawn from each claim's null and at the paper's effect size (the false-pass rate and power).

**Intervals.** A statistic's interval is the normal interval :math:`\hat\theta \pm z\,\widehat{se}` with
:math:`\widehat{se}` the standard deviation of its replicates (:func:`normal_intervals`). It always contains
its estimate: a percentile interval of a thresholded share (the share of pairs whose difference exceeds a
gap, the share of units whose worst direction is RL) does not, because resampling the questions shifts the
whole distribution of such a share away from its estimate. Correlations use Fisher's
:math:`z = \operatorname{atanh} \rho` scale (:func:`fisher_intervals`).

**"Some instance" claims** (seed 001's O4, O6, O9, S3, §V: "pairs at similar accuracy are separated",
"several models show markedly different T-RCI across directions") are decided per instance with a paired
interval: the replicates recompute both sides of a difference on the same resampled questions, so the
interval of a difference is paired. An instance supports the claim when its margin (a difference, or the
smallest of several differences that must all be positive) has an interval wholly above 0. With ``k``
instances each interval is Bonferroni-adjusted (level :math:`1 - \alpha/k`), so at most a share
:math:`\alpha` of runs in which no instance has the property shows one (:func:`some_instance`). The claim
is ``reproduced`` when some instance is decided, ``not reproduced`` when every instance's interval lies at
or below ``null_edge`` (none can have the property, or all are equal within a stated gap), ``undecided``
otherwise. Its null is **equal units**: what noise alone gives when the instances do not differ.

**"Every instance" claims** (RL the most fragile direction against each other direction, every
weighting pair ranks alike) need every component above its edge; each interval at level :math:`1-\alpha`
suffices (an intersection-union test, :func:`all_instances`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import stats as sps

from ...stats.claims import NO_SUBJECT, NOT_REPRODUCED, REPRODUCED, UNDECIDED

__all__ = ["Decision", "z_crit", "normal_intervals", "bias_corrected", "corrected_correlation", "fisher_intervals",
           "side_verdict",
           "some_instance", "all_instances", "permutation_p", "permutation_decision", "pairs_differ", "pairs_sign",
           "cluster_bootstrap"]


@dataclass(frozen=True)
class Decision:
    """A rule's outcome: ``verdict``; the reported statistic ``value`` with its interval ``[lo, hi]``;
    ``best``: the instance reported (-1 for none); ``n_decided`` of ``n`` instances decided for the claim."""

    verdict: str
    value: float
    lo: float
    hi: float
    best: int = -1
    n_decided: int = 0
    n: int = 0


NAN_DECISION = Decision(NO_SUBJECT, float("nan"), float("nan"), float("nan"))


def z_crit(ci: float = 0.95, m: int = 1, df: int | None = None) -> float:
    """The quantile of a two-sided interval of coverage ``ci``, Bonferroni-adjusted over ``m`` intervals: the
    normal one, or Student's t with ``df`` degrees of freedom when the standard error is itself estimated (its
    own noise widens the tails that a Bonferroni adjustment reaches into)."""
    if not 0 < ci < 1 or m < 1:
        raise ValueError(f"need 0 < ci < 1 and m >= 1, got ci={ci}, m={m}")
    q = 1.0 - (1.0 - ci) / (2.0 * m)
    return float(sps.norm.ppf(q) if df is None else sps.t.ppf(q, max(int(df), 1)))


def _se(reps: np.ndarray) -> np.ndarray:
    reps = np.asarray(reps, dtype=np.float64)
    ok = np.isfinite(reps).sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.nanmean(np.where(np.isfinite(reps), reps, np.nan), axis=0) if reps.size else reps.sum(axis=0)
        dev = np.where(np.isfinite(reps), reps - mean, 0.0)
        var = (dev ** 2).sum(axis=0) / np.maximum(ok - 1, 1)
    return np.where(ok >= 2, np.sqrt(var), np.nan)


def normal_intervals(point, reps, ci: float = 0.95, m: int = 1,
                     df: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """``point ± t se`` elementwise, ``se`` the standard deviation of the finite replicates along axis 0
    (``reps`` shaped ``(B, *point.shape)``); NaN where fewer than two replicates are finite. ``t`` is Student's
    quantile with ``df`` degrees of freedom: the fewest questions behind a statistic, less one (a standard
    error estimated from 20 questions has their noise, whatever the number of resamples); default one fewer
    than the resamples."""
    point = np.asarray(point, dtype=np.float64)
    reps = np.asarray(reps, dtype=np.float64).reshape((-1, *point.shape))
    df = reps.shape[0] - 1 if df is None else min(int(df), reps.shape[0] - 1)
    half = z_crit(ci, m, df=max(df, 1)) * _se(reps)
    return point - half, point + half


def bias_corrected(rho, reps) -> np.ndarray:
    """Correlations corrected for the bias of their replicates on Fisher's scale: ``tanh(2 atanh ρ − mean atanh ρ*)``.

    Question noise that enters two scores alike (two weightings of the same terms; T-RCI with and without a
    term) pushes their correlation towards 1, and the replicates, noisier still, further: the shift of the
    replicates' mean estimates the shift of ρ itself (the bootstrap's bias correction)."""
    rho = np.asarray(rho, dtype=np.float64)
    clip = 1.0 - 1e-9
    zr = np.arctanh(np.clip(np.asarray(reps, dtype=np.float64).reshape((-1, *rho.shape)), -clip, clip))
    zp = np.arctanh(np.clip(rho, -clip, clip))
    with np.errstate(invalid="ignore"):
        shift = np.nanmean(zr, axis=0) - zp if len(zr) else np.zeros_like(zp)
    return np.where(np.isfinite(shift), np.tanh(zp - shift), rho)


def corrected_correlation(a, b, a_reps, b_reps) -> tuple[float, np.ndarray]:
    """Pearson's r between two scores over units, corrected for the question noise they share, and its replicates.

    Two scores computed on the same questions (two weightings of the same terms; T-RCI with and without a term)
    carry correlated noise that pushes their correlation towards 1. The noise covariance of each unit's pair is
    the covariance of its replicates; its mean over the units is subtracted from the observed covariance matrix
    (the classical correction for measurement error). Each replicate is corrected by twice that (a replicate
    carries the run's noise and its own). The corrected replicates' spread around their mean measures the
    error that the replicate's own noise adds, one of the two equal parts of the estimate's error (the run's
    noise in the observed covariances and in the noise estimate): the returned replicates are spread √2 times
    as wide on Fisher's scale, centred on the estimate (the simulations of :mod:`.rules` check the coverage).
    NaN (undecided) where the correction fails: a corrected variance not positive, or a corrected correlation
    beyond ±1, in the estimate or in more than 5 % of the replicates (noise as large as the differences)."""
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    ar, br = np.asarray(a_reps, dtype=np.float64), np.asarray(b_reps, dtype=np.float64)
    ok = np.isfinite(a) & np.isfinite(b) & np.isfinite(ar).all(0) & np.isfinite(br).all(0)
    a, b, ar, br = a[ok], b[ok], ar[:, ok], br[:, ok]
    if a.size < 3 or len(ar) < 2:
        return float("nan"), np.full(len(ar), np.nan)
    da, db = ar - ar.mean(0), br - br.mean(0)
    noise = np.array([(da ** 2).sum(0), (da * db).sum(0), (db ** 2).sum(0)]).mean(1) / (len(ar) - 1)

    def r(x, y, k):
        xc, yc = x - x.mean(-1, keepdims=True), y - y.mean(-1, keepdims=True)
        n = x.shape[-1] - 1
        vx, cxy, vy = (xc ** 2).sum(-1) / n - k * noise[0], (xc * yc).sum(-1) / n - k * noise[1], \
            (yc ** 2).sum(-1) / n - k * noise[2]
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where((vx > 0) & (vy > 0), cxy / np.sqrt(np.abs(vx * vy)), np.nan)

    est, reps = float(r(a, b, 1.0)), r(ar, br, 2.0)
    bad = ~np.isfinite(reps) | (np.abs(reps) > 1)
    if not abs(est) <= 1 or bad.mean() > 0.05:  # the noise is as large as the signal: no correction holds
        return float("nan"), np.full(len(ar), np.nan)
    reps = np.where(bad, np.nan, reps)
    clip = 1.0 - 1e-9
    with np.errstate(invalid="ignore"):
        z, zr = np.arctanh(np.clip(est, -clip, clip)), np.arctanh(np.clip(reps, -clip, clip))
        spread = np.sqrt(2.0) * (zr - np.nanmean(zr))
    return est, np.tanh(z + spread)


def fisher_intervals(rho, reps, ci: float = 0.95, m: int = 1, df: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Intervals of correlations on Fisher's scale: ``tanh(atanh ρ ± z se(atanh ρ*))``; they contain ρ
    (values at ±1 are kept inside their interval)."""
    rho = np.asarray(rho, dtype=np.float64)
    clip = 1.0 - 1e-9
    zp = np.arctanh(np.clip(rho, -clip, clip))
    zr = np.arctanh(np.clip(np.asarray(reps, dtype=np.float64), -clip, clip))
    lo, hi = normal_intervals(zp, zr, ci, m, df)
    lo, hi = np.tanh(lo), np.tanh(hi)
    return np.fmin(lo, rho), np.fmax(hi, rho)


def side_verdict(lo: float, hi: float, claim_edge: float = 0.0, null_edge: float | None = None) -> str:
    """``reproduced`` when ``lo > claim_edge``; ``not reproduced`` when ``hi <= null_edge`` (default
    ``claim_edge``: an interval at or below the edge, a degenerate ``[0, 0]`` included); else ``undecided``."""
    null_edge = claim_edge if null_edge is None else null_edge
    if not (np.isfinite(lo) and np.isfinite(hi)):
        return UNDECIDED
    if lo > claim_edge:
        return REPRODUCED
    if hi <= null_edge:
        return NOT_REPRODUCED
    return UNDECIDED


def _margins(comp, reps, ci: float, m: int, two_sided: bool, df: int | None):
    comp = np.asarray(comp, dtype=np.float64)
    if comp.ndim == 1:
        comp = comp[:, None]
    reps = np.asarray(reps, dtype=np.float64).reshape((-1, *comp.shape))
    lo, hi = normal_intervals(comp, reps, ci, m, df)
    if two_sided:
        if comp.shape[1] != 1:
            raise ValueError("a two-sided margin has one component")
        a, h = np.abs(comp[:, 0]), (hi - lo)[:, 0] / 2
        return a, a - h, a + h
    return comp.min(axis=1), lo.min(axis=1), hi.min(axis=1)


def some_instance(comp, reps, ci: float = 0.95, *, two_sided: bool = False, null_edge: float = 0.0,
                  df: int | None = None) -> Decision:
    """Does some instance have the property? ``comp``: ``(k,)`` or ``(k, c)`` point components per instance
    (each must be > 0 for the instance to have it; ``two_sided``: one component whose absolute value must
    be > 0), ``reps``: their replicates ``(B, k[, c])``. Intervals Bonferroni-adjusted over the ``k``
    instances; the margin of an instance is its smallest component (its interval: the smallest ends).
    The reported instance is the one whose margin's lower end is highest."""
    comp = np.asarray(comp, dtype=np.float64)
    k = comp.shape[0] if comp.ndim else 0
    if k == 0:
        return NAN_DECISION
    mar, lo, hi = _margins(comp, reps, ci, k, two_sided, df)
    finite = np.isfinite(lo)
    if not finite.any():
        b = int(np.nanargmax(np.where(np.isfinite(mar), mar, -np.inf))) if np.isfinite(mar).any() else 0
        return Decision(UNDECIDED, float(mar[b]), float("nan"), float("nan"), b, 0, k)
    b = int(np.argmax(np.where(finite, lo, -np.inf)))
    decided = int((lo > 0).sum())
    if lo[b] > 0:
        v = REPRODUCED
    elif np.all(np.where(np.isfinite(hi), hi, np.inf) <= null_edge):
        v = NOT_REPRODUCED
    else:
        v = UNDECIDED
    return Decision(v, float(mar[b]), float(lo[b]), float(hi[b]), b, decided, k)


def all_instances(comp, reps, ci: float = 0.95, *, edge: float = 0.0, fisher: bool = False,
                  debias: bool = False, df: int | None = None) -> Decision:
    """Does every component exceed ``edge``? (An intersection-union test: each interval at level ``ci``.)
    ``reproduced`` when every lower end is above ``edge``, ``not reproduced`` when some upper end is at or
    below it; the reported component is the one with the lowest lower end. ``fisher``: the components are
    correlations (:func:`fisher_intervals`); ``debias``: each first corrected for its replicates' bias
    (:func:`bias_corrected`; the interval is then centred on the corrected value)."""
    comp = np.atleast_1d(np.asarray(comp, dtype=np.float64))
    k = comp.shape[0]
    if debias and k:
        comp = bias_corrected(comp, reps)
    if k == 0 or not np.isfinite(comp).any():
        return NAN_DECISION if k == 0 else Decision(UNDECIDED, float("nan"), float("nan"), float("nan"), 0, 0, k)
    lo, hi = (fisher_intervals if fisher else normal_intervals)(comp, np.asarray(reps).reshape((-1, k)), ci, 1, df)
    if not np.isfinite(lo).all() or not np.isfinite(hi).all():
        b = int(np.nanargmin(comp)) if np.isfinite(comp).any() else 0
        return Decision(UNDECIDED, float(comp[b]), float(lo[b]), float(hi[b]), b, int(np.sum(lo > edge)), k)
    b = int(np.argmin(lo))
    if lo[b] > edge:
        v = REPRODUCED
    elif (hi <= edge).any():
        v = NOT_REPRODUCED
        b = int(np.argmin(hi))
    else:
        v = UNDECIDED
    return Decision(v, float(comp[b]), float(lo[b]), float(hi[b]), b, int(np.sum(lo > edge)), k)


def permutation_p(observed, null) -> np.ndarray:
    """``(1 + #{null >= observed}) / (1 + n)`` per column (``null``: ``(n, c)``); NaN without permutations."""
    obs = np.atleast_1d(np.asarray(observed, dtype=np.float64))
    null = np.asarray(null, dtype=np.float64).reshape((-1, obs.size))
    if not len(null):
        return np.full(obs.size, np.nan)
    return (1.0 + np.sum(null >= obs - 1e-12, axis=0)) / (1.0 + len(null))


def permutation_decision(observed, null, alpha: float = 0.05) -> tuple[str, np.ndarray]:
    """Every column's permutation p below ``alpha`` → ``reproduced``; some column at or below its null's
    median (p >= 0.5: shuffled labels make as large a difference) → ``not reproduced``; else ``undecided``.
    Returns the verdict and the p-values."""
    p = permutation_p(observed, null)
    if not np.isfinite(p).all():
        return UNDECIDED, p
    if (p < alpha).all():
        return REPRODUCED, p
    if (p >= 0.5).any():
        return NOT_REPRODUCED, p
    return UNDECIDED, p


def _pairs(n: int, pairs=None) -> np.ndarray:
    if pairs is None:
        i, j = np.triu_indices(n, 1)
        return np.stack([i, j], axis=1)
    return np.asarray(pairs, dtype=np.int64).reshape(-1, 2)


def pairs_differ(x, y, y_reps, *, x_tol: float, gap: float, ci: float = 0.95,
                 df: int | None = None) -> tuple[Decision, np.ndarray]:
    """O6: among pairs of units with ``|Δx| <= x_tol`` (point estimates), is some pair's ``y`` different?
    Per pair the paired difference ``Δy`` with its Bonferroni-adjusted interval; ``reproduced`` when some
    ``|Δy|``'s interval lies above 0, ``not reproduced`` when every pair's lies within ``±gap``.
    Returns the decision and the close pairs (``(k, 2)`` unit indices)."""
    x, y = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    yr = np.asarray(y_reps, dtype=np.float64)
    pr = _pairs(len(x))
    ok = np.isfinite(x[pr]).all(axis=1) & np.isfinite(y[pr]).all(axis=1)
    pr = pr[ok & (np.abs(x[pr[:, 0]] - x[pr[:, 1]]) <= x_tol + 1e-12)]
    if not len(pr):
        return NAN_DECISION, pr
    d = y[pr[:, 0]] - y[pr[:, 1]]
    dr = yr[:, pr[:, 0]] - yr[:, pr[:, 1]]
    return some_instance(d, dr, ci, two_sided=True, null_edge=gap, df=df), pr


def pairs_sign(x, y, x_reps, y_reps, pairs=None, *, same_sign: bool, ci: float = 0.95,
               df: int | None = None) -> tuple[Decision, np.ndarray]:
    """O4: is some pair of units ordered by ``y`` as ``same_sign`` says relative to ``x``? Each pair is
    oriented so that its point ``Δx >= 0``; its margin is ``min(Δx, ±Δy)`` (``+`` when ``same_sign``), both
    intervals Bonferroni-adjusted over the pairs. ``reproduced``: some pair's margin interval above 0 (both
    orders decided); ``not reproduced``: every pair's at or below 0. Returns the decision and the oriented
    pairs."""
    x, y = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    xr, yr = np.asarray(x_reps, dtype=np.float64), np.asarray(y_reps, dtype=np.float64)
    pr = _pairs(len(x), pairs)
    if not len(pr):
        return NAN_DECISION, pr
    pr = pr[np.isfinite(x[pr]).all(axis=1) & np.isfinite(y[pr]).all(axis=1)]
    if not len(pr):
        return NAN_DECISION, pr
    flip = x[pr[:, 0]] < x[pr[:, 1]]
    pr = np.where(flip[:, None], pr[:, ::-1], pr)
    s = 1.0 if same_sign else -1.0
    comp = np.stack([x[pr[:, 0]] - x[pr[:, 1]], s * (y[pr[:, 0]] - y[pr[:, 1]])], axis=1)
    reps = np.stack([xr[:, pr[:, 0]] - xr[:, pr[:, 1]], s * (yr[:, pr[:, 0]] - yr[:, pr[:, 1]])], axis=2)
    return some_instance(comp, reps, ci, df=df), pr


def cluster_bootstrap(stat, clusters, n_boot: int, rng: np.random.Generator) -> np.ndarray:
    """``stat(rows)`` on ``n_boot`` resamples of the clusters (whole clusters drawn with replacement; ``rows``:
    the row indices of the drawn clusters, duplicates included)."""
    codes = np.unique(np.asarray(clusters), return_inverse=True)[1].ravel()
    n_c = int(codes.max()) + 1 if len(codes) else 0
    order = np.argsort(codes, kind="stable")
    counts = np.bincount(codes, minlength=n_c)
    starts = np.r_[0, np.cumsum(counts)[:-1]]
    out = np.empty(n_boot)
    for b in range(n_boot):
        pick = rng.integers(0, n_c, n_c)
        n = counts[pick]
        rows = order[np.repeat(starts[pick] - np.r_[0, np.cumsum(n)[:-1]], n) + np.arange(n.sum())]
        out[b] = stat(rows)
    return out
