"""Seed 000's §IV claims checked on a selection run (the observations table of notebook 01).

:func:`selection_observations` stacks one :class:`~vlmrobust.stats.observations.Check` per claim, in the
paper's order: the split's κ (Fig. 3(a)), its responsiveness for the evaluated models (supplement Fig. 9(a)),
κ and difficulty (§IV-C, three rows), Eq. 3 against a pooled-κ threshold (§IV-D), the novelty term and
concentration (§IV-D), Table I (three rows), sources and families kept (supplement II-A). The checks and the
nulls they are compared with are in :mod:`.checks` and :mod:`.nulls`; here are the shift of a mean between
pool and split with its bootstrap interval (:func:`mean_shift`, the split held fixed and the pool's items
resampled) and the evaluated-model row built on it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd
from scipy.stats import spearmanr

from ...stats.bootstrap import percentile_interval, replicate_sums, resample_counts
from ...stats.observations import Check, observations_table
from . import checks as C
from .responsiveness import AnswerPaths

__all__ = ["mean_shift", "obs_evaluated_gini", "selection_observations", "OBSERVATION_STREAMS"]

#: The names of the child generators :func:`selection_observations` spawns from its ``rng``, in order.
OBSERVATION_STREAMS = ("kappa", "gini", "easy", "difficulty", "eq3", "novelty", "criteria", "table_i",
                       "fixed_vs_recomputed", "sources", "families")


def mean_shift(values: np.ndarray, in_split: np.ndarray, *, n_boot: int, rng: np.random.Generator,
               ci: float = 0.95) -> dict:
    """Mean of ``values`` on the split minus on the whole pool, with a bootstrap interval.

    Returns ``pool``, ``split``, ``diff``, ``lo``, ``hi``, ``n_pool``, ``n_split``.
    Each resample draws the pool's items with replacement (counts, so one
    matrix product gives every replicate); the split's mean in a resample is
    over the drawn split items. ``n_boot = 0`` gives NaN bounds.
    """
    x = np.asarray(values, dtype=np.float64)
    s = np.asarray(in_split, dtype=bool)
    if x.shape != s.shape or x.ndim != 1:
        raise ValueError(f"values and in_split must be 1-D of one length, got {x.shape} and {s.shape}")
    out = {"n_pool": int(len(x)), "n_split": int(s.sum()), "pool": float(x.mean()) if len(x) else np.nan,
           "split": float(x[s].mean()) if s.any() else np.nan}
    out["diff"] = out["split"] - out["pool"]
    out["lo"] = out["hi"] = np.nan
    if n_boot and s.any():
        W = resample_counts(len(x), n_boot, rng)
        sums = replicate_sums(W, np.column_stack([x, np.where(s, x, 0.0), s.astype(np.float64),
                                                  np.ones(len(x))]))
        with np.errstate(invalid="ignore", divide="ignore"):
            diff = sums[:, 1] / sums[:, 2] - sums[:, 0] / sums[:, 3]
        lo, hi = percentile_interval(diff[:, None], ci)
        out["lo"], out["hi"] = float(lo[0]), float(hi[0])
    return out


def _shift_text(m: dict, ci: float) -> str:
    return (f"pool {m['pool']:.3f} (n = {m['n_pool']}), split {m['split']:.3f} (n = {m['n_split']}): "
            f"difference {m['diff']:+.3f}, {ci:.0%} interval [{m['lo']:+.3f}, {m['hi']:+.3f}]")


def obs_evaluated_gini(gini: np.ndarray, selected: np.ndarray, models: list[str], *, n_boot: int,
                       rng: np.random.Generator, ci: float = 0.95, kappa: np.ndarray | None = None) -> Check:
    """The split stays responsive for the evaluated models: their mean top-1 Gini is higher on the split.

    With ``kappa`` the measured text adds the rank correlation of the selectors' κ with the evaluated
    models' Gini over the pool (how far the selectors' responsiveness carries over).
    """
    if not len(models):
        return Check("the split stays responsive beyond the selectors (evaluated models' Gini higher on it)",
                     "Fig. 9(a): the 13 tested models' top-1 Gini on Bench-C occupies the high-κ region",
                     "mean Gini of the evaluated models on the split − on the pool > 0, interval above 0",
                     "no evaluated model in this run", None)
    m = mean_shift(gini, selected, n_boot=n_boot, rng=rng, ci=ci)
    ok = None if not m["n_split"] or not np.isfinite(m["lo"]) else bool(m["lo"] > 0)
    rho = ""
    if kappa is not None and len(kappa) > 2:
        rho = f"; Spearman ρ(selectors' κ, evaluated Gini) over the pool {spearmanr(kappa, gini).statistic:+.2f}"
    return Check(
        "the split stays responsive beyond the selectors (evaluated models' Gini higher on it)",
        "Fig. 9(a): the 13 tested models' top-1 Gini on Bench-C occupies the high-κ region, not the pool's "
        "low-κ mass",
        f"mean Gini (Eq. 2 over the evaluated models) on the split − on the pool > 0, with its {ci:.0%} bootstrap "
        "interval above 0",
        f"{len(models)} evaluated model(s): {_shift_text(m, ci)}{rho}",
        ok)


def selection_observations(paths: AnswerPaths, G: np.ndarray, selection, table: pd.DataFrame, overlap: dict,
                           eval_gini: np.ndarray | None, eval_models: Sequence[str], *, families: Sequence[str],
                           sources: Sequence[str], variants: Mapping[str, Mapping[str, np.ndarray]],
                           n_boot: int, rng: np.random.Generator, ci: float = 0.95,
                           rho_max: float = 0.5) -> pd.DataFrame:
    """Seed 000's §IV claims on one selection run: the observations table of notebook 01.

    ``families`` and ``sources``: one per pool item (``items.task``, ``items.source``); ``variants``:
    :func:`~vlmrobust.analysis.selection.leave_one_out`; ``table``: Table I of those variants. Each check
    draws from its own child of ``rng.spawn(len(OBSERVATION_STREAMS))`` (names in that order); ``n_boot`` is
    both the bootstrap resamples and the draws of each null; ``rho_max``: :func:`.checks.obs_difficulty_rank`.
    """
    r = dict(zip(OBSERVATION_STREAMS, rng.spawn(len(OBSERVATION_STREAMS)), strict=True))
    k, s, el, ids = selection.kappa, selection.selected, selection.eligible, selection.item_ids
    g = np.zeros(len(k)) if eval_gini is None else eval_gini
    rows = [
        C.obs_split_kappa_null(k, s, el, n_draws=n_boot, rng=r["kappa"], ci=ci),
        obs_evaluated_gini(g, s, list(eval_models) if eval_gini is not None else [], n_boot=n_boot,
                           rng=r["gini"], ci=ci, kappa=k),
        C.obs_zero_dispersion(paths, G),
        C.obs_easy_can_score_high(paths, k, n_boot=n_boot, rng=r["easy"], ci=ci),
        C.obs_difficulty_rank(paths, k, n_boot=n_boot, rng=r["difficulty"], ci=ci, rho_max=rho_max),
        C.obs_eq3_stricter(G, k, el, ids, paths.models, n_boot=n_boot, rng=r["eq3"], ci=ci),
        C.obs_novelty_concentration(families, s, overlap.get("inconsistency", np.zeros(len(k), bool)), el,
                                    n_boot=n_boot, rng=r["novelty"], ci=ci),
        C.obs_criteria_ji(overlap, el, n_draws=n_boot, rng=r["criteria"], ci=ci),
        C.obs_table_i_null(table, int(el.sum()), n_draws=n_boot, rng=r["table_i"], ci=ci),
        C.obs_fixed_vs_recomputed({m: (v["fixed"], v["recomputed"]) for m, v in variants.items()}, s,
                                  n_boot=n_boot, rng=r["fixed_vs_recomputed"], ci=ci),
        C.obs_sources_kept(sources, s, n_draws=n_boot, rng=r["sources"], ci=ci),
        C.obs_families_kept(families, el, s, n_draws=n_boot, rng=r["families"], ci=ci),
    ]
    return observations_table(rows)
