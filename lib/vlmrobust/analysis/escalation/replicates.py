r"""Intervals and nulls for notebook 07's observations: the run's tables recomputed on resampled questions.

Every observation of seed 001 is read on tables (Table I, T-RCI per direction and per state, fragility
curves) that are functions of the questions asked. :func:`run_tables` computes them once from the
predictions; :func:`item_bootstrap` recomputes them on ``n_boot`` resamples of the questions (drawn with
replacement, the same questions for every model and condition, each drawn copy a question of its own;
one :func:`vlmrobust.repro.rng` stream, never global state); :func:`group_permutations` recomputes them
with the questions' group labels permuted (the null of "robustness depends on the dataset").
:func:`interval` gives the percentile interval of a statistic's replicates, for display; the claims table
uses the intervals of :mod:`.decide` (``estimate ± t·se``), which contain their estimates where a percentile
interval of a thresholded share does not.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import NamedTuple

import numpy as np
import pandas as pd

from ... import repro
from ...stats.bootstrap import interval_of
from .ablation import TRCI_SCHEMES, ablation_scores
from .cells import cell_stats
from .fragility import curve_regimes, fragility_curves
from .indices import rci, table_i, trci, trci_states

__all__ = ["RunTables", "run_tables", "item_bootstrap", "group_permutations", "interval", "state_terms"]


class RunTables(NamedTuple):
    """Table I per unit, T-RCI per unit × direction, the per-state terms under the equal and no-spatial α,
    the per-model fragility curves and regimes of every ladder and traversal, and the weighting ablation's
    scores per unit (:func:`~vlmrobust.analysis.escalation.ablation.ablation_scores`)."""

    table1: pd.DataFrame
    directions: pd.DataFrame
    states: pd.DataFrame
    curves: pd.DataFrame
    regimes: pd.DataFrame
    ablation: pd.DataFrame


def state_terms(states: pd.DataFrame, alphas: Sequence[float] = TRCI_SCHEMES["equal"]) -> pd.DataFrame:
    """Per unit × direction × state: the per-state T-RCI term τ under ``alphas`` (``T_equal``) and under the
    no-spatial scheme (``T_no_spatial``) — the pairs the per-state ablation ρ ranks (§II-F)."""
    unit = list(states.attrs.get("unit", ()))
    eq = trci(states, alphas).states
    ns = trci(states, TRCI_SCHEMES["no-spatial"]).states
    out = eq[[*unit, "direction", "level", "term"]].rename(columns={"term": "T_equal"})
    out["T_no_spatial"] = ns["term"].to_numpy()
    return out


def run_tables(pred: pd.DataFrame, ladders: Sequence[str], traversals: Mapping[str, str], *,
               unit: Sequence[str] = ("model", "group"), rci_weights=(0.25, 0.25, 0.25, 0.25),
               trci_weights=(0.2, 0.2, 0.2, 0.2, 0.2), fail: str = "joint", eps: float = 1e-6,
               stable_min: float = 0.8, severe_below: float = 0.5, tol: float = 0.0, full: bool = True,
               **cell_kw) -> RunTables:
    """The tables the observations read, from the predictions (two passes of :func:`cell_stats`).
    ``full=False`` leaves the curves, regimes and ablation out (``None``: what a permutation null needs)."""
    perts = [*ladders, *traversals.values()]
    cells = cell_stats(pred, tuple(unit), perturbations=perts, **cell_kw)
    states = trci_states(cells, traversals, fail=fail, eps=eps)
    tres = trci(states, trci_weights)
    t1 = table_i(rci(cells, rci_weights, fail=fail), tres, ladders)
    if not full:
        return RunTables(t1, tres.directions, None, None, None, None)
    curves = fragility_curves(cell_stats(pred, ("model",), perturbations=perts, **cell_kw), perts)
    regimes = curve_regimes(curves, stable_min=stable_min, severe_below=severe_below, tol=tol)
    abl = ablation_scores(cells, states, ladders, fail=fail)
    return RunTables(t1, tres.directions, state_terms(states, trci_weights), curves, regimes, abl)


def _by_item(pred: pd.DataFrame) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    codes, items = pd.factorize(pred["item_id"], sort=True)
    order = np.argsort(codes, kind="stable")
    counts = np.bincount(codes, minlength=len(items))
    starts = np.r_[0, np.cumsum(counts)[:-1]]
    return order, counts, starts, np.asarray(items)


def item_bootstrap(pred: pd.DataFrame, fn: Callable[[pd.DataFrame], object], n_boot: int, seed: int,
                   stream: str = "07.bootstrap") -> list:
    """``fn`` of ``n_boot`` resamples of ``pred``'s questions (with replacement; the j-th drawn question
    becomes ``item_id`` j, so a question drawn twice counts twice). Draws from ``repro.rng(stream, seed)``."""
    if n_boot < 0:
        raise ValueError(f"n_boot must be >= 0, got {n_boot}")
    order, counts, starts, items = _by_item(pred)
    g = repro.rng(stream, seed)
    out = []
    for _ in range(n_boot):
        pick = g.integers(0, len(items), len(items))
        n = counts[pick]
        rows = order[np.repeat(starts[pick] - np.r_[0, np.cumsum(n)[:-1]], n) + np.arange(n.sum())]
        rep = pred.iloc[rows].reset_index(drop=True)
        rep["item_id"] = np.repeat(np.arange(len(pick)), n)
        out.append(fn(rep))
    return out


def group_permutations(pred: pd.DataFrame, fn: Callable[[pd.DataFrame], object], n_perm: int, seed: int,
                       column: str = "group", stream: str = "07.permutation") -> list:
    """``fn`` of ``n_perm`` copies of ``pred`` whose questions' ``column`` labels are permuted (the same
    permutation for every model and condition; group sizes kept). Draws from ``repro.rng(stream, seed)``."""
    labels = pred.drop_duplicates("item_id").set_index("item_id")[column]
    if labels.index.size != pred.groupby("item_id")[column].nunique().size or (
            pred.groupby("item_id")[column].nunique() > 1).any():
        raise ValueError(f"every question needs one {column!r} label")
    g = repro.rng(stream, seed)
    ids = pred["item_id"].to_numpy()
    out = []
    for _ in range(n_perm):
        perm = pd.Series(g.permutation(labels.to_numpy()), index=labels.index)
        out.append(fn(pred.assign(**{column: perm.reindex(ids).to_numpy()})))
    return out


def interval(stat: Callable[[object], float], point: object, reps: Sequence,
             ci: float = 0.95) -> tuple[float, float, float]:
    """``(value, lo, hi)``: ``stat`` of the point tables and the percentile interval of its replicates."""
    vals = np.array([stat(r) for r in reps], dtype=np.float64)
    lo, hi = interval_of(vals, ci) if len(vals) else (np.nan, np.nan)
    return float(stat(point)), lo, hi
