"""The pair table as dense arrays, and the question bootstrap the claims of notebook 04 are decided with.

A :class:`PairCube` holds the per-pair quantities of seed 000 (Eqs. 8–12) on the axes
``(model, question, perturbation, severity)``, missing pairs as NaN. The claims of
:mod:`vlmrobust.analysis.ras.claims` are pure functions of a cube and a seed, so that the same code decides
a run (:func:`from_pairs`, the notebook's pair table) and the simulated data sets of the rules' checks
(:func:`from_probs`, :mod:`vlmrobust.analysis.ras.rules`).

**Intervals.** Every statistic is a ratio of sums over pairs; its interval resamples the *questions* with
replacement (all pairs of a question move together: its models, corruptions and severities, so comparisons
of models or severities on the same questions are paired), :func:`boot_ratio`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ...stats.bootstrap import resample_counts
from .components import alignment, normalised_entropy, ras, top1

__all__ = ["PairCube", "from_pairs", "from_probs", "boot_weights", "boot_ratio"]


@dataclass(frozen=True)
class PairCube:
    """Per-pair arrays on axes ``(model, question, perturbation, severity)``.

    ``correct_clean`` is ``(M, N)``; ``present``, ``correct``, ``dS``, ``dC``, ``RAS`` are ``(M, N, J, L)``
    (``present`` False, values NaN or False, where the pair is missing).
    """

    models: tuple[str, ...]
    levels: tuple[int, ...]
    correct_clean: np.ndarray
    present: np.ndarray
    correct: np.ndarray
    dS: np.ndarray
    dC: np.ndarray
    RAS: np.ndarray

    @property
    def n_items(self) -> int:
        return int(self.correct_clean.shape[1])

    def state_masks(self) -> dict[str, np.ndarray]:
        """The correctness states of Eq. 12 as ``(M, N, J, L)`` masks (present pairs only)."""
        c0 = np.broadcast_to(self.correct_clean[:, :, None, None], self.present.shape)
        c1 = self.correct
        p = self.present
        return {"cc": p & c0 & c1, "cw": p & c0 & ~c1, "wc": p & ~c0 & c1, "ww": p & ~c0 & ~c1}


def from_pairs(pairs: pd.DataFrame, levels: Sequence[int] | None = None) -> PairCube:
    """A cube from :func:`~vlmrobust.analysis.ras.pairs` (one method per model; ``levels`` default: the
    table's)."""
    lv = np.asarray(pairs["level"].to_numpy(), dtype=np.int64)
    levels = tuple(sorted(set(lv.tolist()))) if levels is None else tuple(int(v) for v in levels)
    keep = np.isin(lv, levels)
    sub = pairs.loc[keep]
    m_codes, m_u = pd.factorize(sub["model"].astype(str), sort=True)
    i_codes, i_u = pd.factorize(sub["item_id"].astype(str), sort=True)
    p_codes, p_u = pd.factorize(sub["perturbation"].astype(str), sort=True)
    l_codes = np.searchsorted(levels, lv[keep])
    shape = (len(m_u), len(i_u), len(p_u), len(levels))
    flat = np.ravel_multi_index((m_codes, i_codes, p_codes, l_codes), shape) if len(sub) else np.zeros(0, int)
    if len(np.unique(flat)) != len(flat):
        raise ValueError("the pair table has more than one pair per model, question, corruption and severity "
                         "(several methods per model?)")

    def cube(col: str, fill, dtype) -> np.ndarray:
        out = np.full(int(np.prod(shape)), fill, dtype=dtype)
        out[flat] = sub[col].to_numpy().astype(dtype)
        return out.reshape(shape)

    c0 = np.zeros(shape[:2], dtype=bool)
    c0[m_codes, i_codes] = sub["correct_clean"].to_numpy().astype(bool)
    present = np.zeros(int(np.prod(shape)), dtype=bool)
    present[flat] = True
    return PairCube(tuple(m_u), levels, c0, present.reshape(shape), cube("correct", False, bool),
                    cube("dS", np.nan, np.float64), cube("dC", np.nan, np.float64), cube("RAS", np.nan, np.float64))


def from_probs(P: np.ndarray, K: np.ndarray, answer: np.ndarray, n_perturbations: int, levels: Sequence[int],
               models: Sequence[str] | None = None) -> PairCube:
    """A cube from option distributions ``P`` of shape ``(M, N, 1 + J·L, K_max)``: the clean condition first,
    then perturbation-major, severity-minor (the layout of
    :func:`~vlmrobust.analysis.ras.simulate.simulate_probs`); Eqs. 7–12 as in
    :func:`~vlmrobust.analysis.ras.pairs`."""
    M, N, C, kmax = P.shape
    J, L = n_perturbations, len(levels)
    if C != 1 + J * L:
        raise ValueError(f"P has {C} conditions; expected 1 + {J} x {L}")
    rows = P.reshape(-1, kmax)
    Kr = np.broadcast_to(K[None, :, None], (M, N, C)).reshape(-1)
    yr = np.broadcast_to(answer[None, :, None], (M, N, C)).reshape(-1)
    S = normalised_entropy(rows, Kr).reshape(M, N, C)
    Cres = alignment(rows, Kr, yr).reshape(M, N, C)
    ok = (top1(rows)[0] == yr).reshape(M, N, C)
    dS = (S[:, :, 1:] - S[:, :, :1]).reshape(M, N, J, L)
    dC = (Cres[:, :, 1:] - Cres[:, :, :1]).reshape(M, N, J, L)
    names = tuple(models) if models is not None else tuple(f"m{i}" for i in range(M))
    return PairCube(names, tuple(int(v) for v in levels), ok[:, :, 0], np.ones((M, N, J, L), dtype=bool),
                    ok[:, :, 1:].reshape(M, N, J, L), dS, dC, ras(dS, dC))


def boot_weights(n_items: int, n_boot: int, rng: np.random.Generator) -> np.ndarray:
    """``(1 + n_boot, n_items)`` question weights: row 0 every question once (the estimate), then
    ``n_boot`` resamples with replacement."""
    return np.vstack([np.ones((1, n_items)), resample_counts(n_items, n_boot, rng)])


def boot_ratio(W: np.ndarray, num: np.ndarray, den: np.ndarray) -> np.ndarray:
    """``Σ w·num / Σ w·den`` for every weight row of ``W``: ``num`` and ``den`` are per-question sums of shape
    ``(N, ...)``; the result is ``(1 + n_boot, ...)``, row 0 the estimate (NaN where the denominator is 0)."""
    n, d = np.tensordot(W, num, axes=(1, 0)), np.tensordot(W, den, axes=(1, 0))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(d > 0, n / np.where(d > 0, d, 1.0), np.nan)
