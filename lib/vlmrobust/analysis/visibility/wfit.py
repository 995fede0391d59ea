r"""The blind-spot width W from a sigmoid fitted in log V: the project's reading, beside seed 003's literal crossing.

Seed 003 defines the blind-spot width of an awareness signal as

.. math:: W = \log_{10}\frac{V_{\mathrm{acc}}}{V_{\mathrm{aware}}}

(its Fig. 1(b), Fig. 4 and Table V), where :math:`V_{\mathrm{acc}}` and
:math:`V_{\mathrm{aware}}` are the visibilities at which accuracy and the signal
"reach their mid-way level". :mod:`.blind_spot` reads this literally: the first
crossing of the per-level means, interpolated linearly in log V. It reads two
levels of each curve, so with few scenes its W follows the noise of those
levels, and the bootstrap interval of W spans well over a decade at the
notebook's 12 scenes (measured below).

This module reads the same definition through a curve: a monotone logistic in
log V with a free floor :math:`a` and clean level :math:`b`, fitted to every
signal of every (model, task, arm) cell (:mod:`.wfit_curve`, where the fit and
its weak prior are described), and W from where the fitted curves cross their
mid-levels (:func:`estimate`, :func:`wfit_table`).

* **Mid-level.** Seed 003's (:func:`.blind_spot.mid_level`), with the clean value
  read from the fit: accuracy and confidence half-way between the clean level
  :math:`b` and chance, :math:`m = (b + 1/K)/2`; abstain a fixed 0.5, or
  :math:`(b + 1)/2` with ``abstain_mid = "clean"``. When the floor is at chance
  (:math:`a = 1/K`) the accuracy crossing is the centre of the curve itself.
* **Crossing.** :func:`.wfit_curve.crossings`, trusted inside the sweep only: a
  crossing outside it is a bound, exactly as in :mod:`.blind_spot`, and W takes
  the same intervals (:func:`.blind_spot.width`): "≥" when the signal never
  reaches its mid-level inside the sweep.
* **Not interpretable.** The flags of :mod:`.blind_spot` (clean value within
  ``min_gap`` of chance, a clean abstain rate above 0.5, read from the clean
  means), and a signal with no clean data or data at fewer than
  :data:`MIN_LEVELS` levels (a partly parsed verbalized confidence is fitted on
  the levels it has).
* **Intervals.** Percentile intervals over ``n_boot`` resamples of the scenes
  (every level, signal and cell of a scene move together; seeded numpy
  Generator; the resamples of :func:`.blind_spot.bootstrap`), each resample
  refitted; a resample whose crossing is a bound contributes its bound, and
  ``bound_share`` says how often. With few scenes the percentile interval is
  widened to the expanded percentile interval (:func:`expanded_ci`).

Validation (:func:`.wfit_sim.simulate_cube`, ``tests/test_wfit.py``): curves with a known
W drawn at the notebook's default size (12 scenes with one t2 question each, the
extended 14 levels from 16,000 m to 1.95 m, scene difficulty varying by 0.2
decades between scenes; accuracy falling at 20 m, internal confidence at
W = 0.66, abstain at W = -0.08). Over 1,200 simulated runs with 400 resamples
each: the fitted W has a bias of -0.02 decades (-0.021 and -0.019; its spread is
0.15 and 0.17, the literal crossing's 0.23 and 0.26); the 95 % percentile
interval covers the true W in 94.9 % and 94.7 % of runs (the expanded one in
96.6 % and 96.8 %); its median width is 0.58 and 0.67 decades against 1.31 and
1.46 for the literal crossing's interval. At 100 scenes (200 runs) the widths
are 0.20 and 0.23 against 0.27 and 0.33, with coverage 0.93 and 0.96.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ...stats.bootstrap import percentile_interval, replicate_sums, resample_counts
from .blind_spot import (
    AT_FIRST,
    CROSSED,
    FLAGS,
    NEVER,
    SIGNALS,
    UNDEFINED,
    W_KINDS,
    SignalCube,
    crossing_interval,
    mid_level,
    width,
)
from .wfit_curve import crossings, fit_curves

__all__ = ["MIN_LEVELS", "FIT_COLUMNS", "estimate", "expanded_ci", "resampled_totals", "wfit_table"]

#: Fewest visibility levels with data for a curve to be fitted.
MIN_LEVELS = 4
#: The columns of :func:`wfit_table`.
FIT_COLUMNS = ("model", "task", "arm", "signal", "n_scenes", "clean", "floor", "mid", "V", "V_kind", "V_lo", "V_hi",
               "W", "W_kind", "W_lo", "W_hi", "bound_share", "flag")
_RISING = np.array([s.startswith("abstain") for s in SIGNALS])
_V_KINDS = {CROSSED: "=", AT_FIRST: "≥", NEVER: "<", UNDEFINED: "n/a"}


def estimate(S, N, levels_m, chance, min_gap: float = 0.1, abstain_mid: str = "fixed",
             n_iter: int = 40) -> dict[str, np.ndarray]:
    """Fitted crossings and W of every cell at once, from per-level totals (the module docstring's reading).

    ``S``, ``N`` are ``(..., 5, 1 + L)``: per signal of :data:`.blind_spot.SIGNALS`
    the sum and the number of questions at the clean condition (index 0) and at
    each level of ``levels_m``; ``chance`` broadcasts to ``(...)``. Returns
    ``theta`` ``(..., 5, 4)``, ``clean`` (clean means) and ``mid`` ``(..., 5)``,
    ``v``, ``v_status`` and ``signal_flag`` (each signal's own flag, indexing
    :data:`.blind_spot.FLAGS`) ``(..., 5)``, and ``w``, ``w_kind`` (indexes
    :data:`.blind_spot.W_KINDS`) and ``flag`` (the signal's or, before it,
    accuracy's flag) ``(..., 4)`` for the awareness signals.
    """
    S, N = np.asarray(S, np.float64), np.asarray(N, np.float64)
    if S.shape != N.shape or S.shape[-2] != len(SIGNALS):
        raise ValueError(f"S and N must both be (..., {len(SIGNALS)}, 1 + L), got {S.shape} and {N.shape}")
    shape = S.shape[:-2]
    chance = np.broadcast_to(np.asarray(chance, np.float64), shape)
    no_data = (N[..., 0] <= 0) | ((N[..., 1:] > 0).sum(-1) < MIN_LEVELS)
    theta = np.full((*S.shape[:-1], 4), np.nan)
    fit = ~no_data
    theta[fit] = fit_curves(S[fit][:, 1:], N[fit][:, 1:], S[fit][:, 0], N[fit][:, 0], levels_m, n_iter)
    with np.errstate(invalid="ignore", divide="ignore"):
        clean = S[..., 0] / N[..., 0]
    b = theta[..., 1]
    mids = np.stack([mid_level(b[..., j], chance, s, abstain_mid) for j, s in enumerate(SIGNALS)], axis=-1)
    v, st = crossings(theta, mids, levels_m, _RISING)
    gap = clean - chance[..., None]
    flag = np.zeros(clean.shape, dtype=np.int64)
    flag[..., 0] = np.where(gap[..., 0] < min_gap, 1, 0)
    flag[..., 1:3] = np.where(gap[..., 1:3] < min_gap, 2, 0)
    flag[..., 3:] = np.where(clean[..., 3:] > 0.5, 3, 0)
    flag = np.where(no_data, 4, flag)
    v = np.where(flag > 0, np.nan, v)
    st = np.where(flag > 0, UNDEFINED, st)
    lo, hi = crossing_interval(v, st)
    w, kind = width(lo[..., :1], hi[..., :1], lo[..., 1:], hi[..., 1:])
    out_flag = np.where(flag[..., :1] > 0, flag[..., :1], flag[..., 1:])
    return {"theta": theta, "clean": clean, "mid": mids, "v": v, "v_status": st, "signal_flag": flag,
            "w": np.where(out_flag > 0, np.nan, w), "w_kind": np.where(out_flag > 0, 3, kind), "flag": out_flag}


def expanded_ci(ci: float, n: int) -> float:
    r"""The percentile level of the expanded percentile interval for ``n`` resampled units (nominal ``ci``).

    The percentile bootstrap is too narrow with few units (its spread is that of
    a mean with divisor ``n`` and a normal tail); the expanded percentile interval
    (Hesterberg, "What teachers should know about the bootstrap", The American
    Statistician 69, 2015, Sec. 6.2) takes the quantiles at
    :math:`\Phi(\pm\sqrt{n/(n-1)}\,t_{n-1,(1+ci)/2})` instead; 0.978 for 12 scenes,
    0.951 for 1000.
    """
    from scipy import stats as sps

    if not 0 < ci < 1 or n < 2:
        raise ValueError(f"need ci in (0, 1) and n >= 2 units, got ci={ci!r}, n={n!r}")
    z = np.sqrt(n / (n - 1)) * sps.t.ppf((1 + ci) / 2, n - 1)
    return float(2 * sps.norm.cdf(z) - 1)


def resampled_totals(cube: SignalCube, n_boot: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Per-level totals ``(S, N)`` of ``n_boot`` resamples of the scenes: ``(n_boot, cells, 5, 1 + L)`` each.

    The resamples are :func:`vlmrobust.stats.bootstrap.resample_counts` of the
    cube's scenes (``rng`` consumed as there), so :func:`.blind_spot.bootstrap`
    with an equally seeded generator draws the same ones.
    """
    n = len(cube.scenes)
    counts_w = resample_counts(n, n_boot, rng)
    flat = cube.sums.shape[1:]
    S = replicate_sums(counts_w, cube.sums.reshape(n, -1)).reshape((n_boot, *flat))
    N = replicate_sums(counts_w, cube.counts.reshape(n, -1)).reshape((n_boot, *flat))
    return S, N


def _boot(cube, n_boot, rng, min_gap, abstain_mid, chunk):
    S, N = resampled_totals(cube, n_boot, rng)
    parts = [estimate(S[i:i + chunk], N[i:i + chunk], cube.levels_m, cube.chance, min_gap, abstain_mid)
             for i in range(0, n_boot, chunk)]
    return {k: np.concatenate([p[k] for p in parts]) for k in ("v", "w", "w_kind")}


def wfit_table(cube: SignalCube, n_boot: int = 1000, rng: np.random.Generator | None = None, ci: float = 0.95,
               min_gap: float = 0.1, abstain_mid: str = "fixed", expand: bool = False,
               chunk: int = 250) -> pd.DataFrame:
    """The fitted crossings and W (the project's reading of seed 003's Table V): one row per (cell, signal).

    ``cube`` is :func:`.blind_spot.signal_cube` of the run's long table. Columns
    (:data:`FIT_COLUMNS`): the cell, ``signal`` (accuracy first, then the
    awareness signals), ``n_scenes``, ``clean`` (clean mean), ``floor`` (the fitted
    murky level ``a``), ``mid`` (the mid-level), ``V`` with ``V_kind`` (``=``,
    ``≥`` reached at the first level, ``<`` never reached, ``n/a``) and its
    interval ``V_lo``, ``V_hi`` (metres); ``W``, ``W_kind``
    (:data:`.blind_spot.W_KINDS`), ``W_lo``, ``W_hi`` (NaN on the accuracy rows);
    ``bound_share`` (share of resamples in which W is a bound) and ``flag`` (why
    "n/a"). ``rng=None`` or ``n_boot=0`` skips the intervals; resamples are
    refitted ``chunk`` at a time. ``expand`` widens the percentile interval for
    the number of scenes (:func:`expanded_ci`), a conservative option: at the
    notebook's 12 scenes the plain interval already covers a known W in about 95 %
    of simulated runs and the expanded one in about 97.5 % (module docstring).
    """
    S, N = cube.sums.sum(0), cube.counts.sum(0)
    point = estimate(S, N, cube.levels_m, cube.chance, min_gap, abstain_mid)
    n_cells = len(cube.cells)
    nan5, nan4 = np.full((n_cells, len(SIGNALS)), np.nan), np.full((n_cells, len(SIGNALS) - 1), np.nan)
    v_lo, v_hi, w_lo, w_hi, share = nan5, nan5, nan4, nan4, nan4
    if n_boot and rng is not None:
        reps = _boot(cube, n_boot, rng, min_gap, abstain_mid, chunk)
        ci = expanded_ci(ci, len(cube.scenes)) if expand else ci
        v_lo, v_hi = (10**q for q in percentile_interval(np.log10(reps["v"]), ci))
        w_lo, w_hi = percentile_interval(reps["w"], ci)
        finite = np.isfinite(reps["w"])
        with np.errstate(invalid="ignore", divide="ignore"):
            share = (finite & np.isin(reps["w_kind"], (1, 2))).sum(0) / finite.sum(0)
    rows = []
    for c, cell in enumerate(cube.cells.itertuples(index=False)):
        for j, sig in enumerate(SIGNALS):
            aware = j > 0
            flag = int(point["flag"][c, j - 1] if aware else point["signal_flag"][c, 0])
            rows.append({
                "model": cell.model, "task": cell.task, "arm": cell.arm, "signal": sig,
                "n_scenes": int((cube.counts[:, c, j, :].sum(-1) > 0).sum()),
                "clean": point["clean"][c, j], "floor": point["theta"][c, j, 0], "mid": point["mid"][c, j],
                "V": point["v"][c, j], "V_kind": _V_KINDS[int(point["v_status"][c, j])],
                "V_lo": v_lo[c, j], "V_hi": v_hi[c, j],
                "W": point["w"][c, j - 1] if aware else np.nan,
                "W_kind": W_KINDS[int(point["w_kind"][c, j - 1])] if aware else "n/a",
                "W_lo": w_lo[c, j - 1] if aware else np.nan, "W_hi": w_hi[c, j - 1] if aware else np.nan,
                "bound_share": share[c, j - 1] if aware else np.nan, "flag": FLAGS[flag],
            })
    return pd.DataFrame(rows, columns=list(FIT_COLUMNS))
