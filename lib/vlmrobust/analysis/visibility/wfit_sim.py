"""Simulated runs with a known W: the curves that validate :mod:`.wfit` (``tests/test_wfit.py``).

:func:`simulate_cube` draws a :class:`.blind_spot.SignalCube` from known logistic
curves (:class:`TrueCurve`), each scene with its own difficulty, and
:func:`true_crossings` gives the crossings and W that a fit of such a run should
recover; the results of that validation are in :mod:`.wfit`'s docstring.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .blind_spot import SIGNALS, SignalCube, mid_level
from .wfit_curve import log_levels, sigmoid

__all__ = ["TrueCurve", "simulate_cube", "true_crossings"]


@dataclass(frozen=True)
class TrueCurve:
    r"""A signal's true curve :math:`a + (b - a)\,\sigma(k(\log_{10} V - c))` for a scene of median difficulty."""

    floor: float
    clean: float
    centre: float
    slope: float = 4.0


def _population(curve: TrueCurve, x, scene_sd: float, nodes: int = 41):
    """The mean curve over scenes whose centres vary by ``N(0, scene_sd)`` (Gauss–Hermite quadrature)."""
    z, wts = np.polynomial.hermite_e.hermegauss(nodes)
    wts = wts / wts.sum()
    g = sigmoid(curve.slope * (np.asarray(x, np.float64)[..., None] - curve.centre - scene_sd * z))
    return curve.floor + (curve.clean - curve.floor) * (g * wts).sum(-1)


def true_crossings(curves: Mapping[str, TrueCurve], chance: float, scene_sd: float = 0.2,
                   abstain_mid: str = "fixed") -> dict[str, float]:
    """The true log10 crossing of each signal's population curve, and ``W_<signal>`` for each awareness signal.

    The mid-level is seed 003's (:func:`.blind_spot.mid_level`) from the true
    clean level; the crossing of the mean curve over scenes is found by
    bisection. A signal whose curve never reaches its mid-level is ``nan``.
    """
    out = {}
    for sig, cv in curves.items():
        m = float(mid_level(cv.clean, chance, sig, abstain_mid))
        lo, hi = cv.centre - 6.0, cv.centre + 6.0
        f_lo, f_hi = _population(cv, lo, scene_sd) - m, _population(cv, hi, scene_sd) - m
        if f_lo * f_hi > 0:
            out[sig] = np.nan
            continue
        for _ in range(80):
            mid_x = 0.5 * (lo + hi)
            f = _population(cv, mid_x, scene_sd) - m
            lo, hi, f_lo = (mid_x, hi, f) if f * f_lo > 0 else (lo, mid_x, f_lo)
        out[sig] = 0.5 * (lo + hi)
    if "accuracy" in out:
        for sig in curves:
            if sig != "accuracy":
                out[f"W_{sig}"] = out["accuracy"] - out[sig]
    return out


def simulate_cube(curves: Mapping[str, TrueCurve], n_scenes: int, levels_m, rng: np.random.Generator, *,
                  n_cells: int = 1, chance: float = 0.25, questions: int = 1, scene_sd: float = 0.2,
                  concentration: float = 20.0, task: str = "t2", arm: str = "fog") -> SignalCube:
    """A :class:`.blind_spot.SignalCube` drawn from known curves: ``n_cells`` independent cells of ``n_scenes`` scenes.

    Each scene has its own difficulty, a shift of every curve's centre by
    ``N(0, scene_sd)`` decades (a scene that is hard to see loses accuracy and
    awareness together), shared by its ``questions`` questions. Accuracy and the
    abstain rates are Bernoulli draws; the confidences are Beta draws with the
    curve as mean and ``concentration`` as ``alpha + beta``. A signal absent from
    ``curves`` has no data. Cells are named ``sim0``, ``sim1``, ... (model).
    """
    x = log_levels(levels_m)
    xs = np.concatenate([[np.inf], x])
    shape = (n_scenes, n_cells, len(SIGNALS), 1 + x.size)
    sums, counts = np.zeros(shape), np.zeros(shape)
    shift = rng.normal(0.0, scene_sd, (n_scenes, n_cells, 1, 1))
    for j, sig in enumerate(SIGNALS):
        cv = curves.get(sig)
        if cv is None:
            continue
        g = np.where(np.isinf(xs), 1.0, sigmoid(cv.slope * (np.where(np.isinf(xs), 0.0, xs) - cv.centre - shift)))
        p = np.clip(cv.floor + (cv.clean - cv.floor) * g[:, :, 0, :], 1e-6, 1 - 1e-6)  # (scenes, cells, 1 + L)
        p = np.broadcast_to(p[..., None], (*p.shape, questions))
        if sig.startswith("abstain") or sig == "accuracy":
            draws = rng.random(p.shape) < p
        else:
            draws = rng.beta(p * concentration, (1 - p) * concentration)
        sums[:, :, j, :] = draws.sum(-1)
        counts[:, :, j, :] = questions
    cells = pd.DataFrame({"model": [f"sim{i}" for i in range(n_cells)], "task": task, "arm": arm, "chance": chance})
    return SignalCube(cells, 10**x, np.arange(n_scenes, dtype=object), sums, counts)
