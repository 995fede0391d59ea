"""Seed 000's §IV claims checked on a selection run (the observations table of notebook 01).

Each check returns a :class:`~vlmrobust.stats.observations.Check`;
:func:`selection_observations` stacks the four. Differences of means come with
a percentile bootstrap interval over the pool's items (:func:`mean_shift`): the
split is held fixed and the pool resampled, so the interval is about the
items, not about re-running the selection.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy.stats import spearmanr

from ...stats.bootstrap import percentile_interval, replicate_sums, resample_counts
from ...stats.observations import Check, observations_table
from .responsiveness import AnswerPaths

__all__ = ["mean_shift", "obs_split_kappa", "obs_evaluated_gini", "obs_table_i", "obs_not_difficulty",
           "selection_observations"]


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


def obs_split_kappa(kappa: np.ndarray, selected: np.ndarray, eligible: np.ndarray, *, n_boot: int,
                    rng: np.random.Generator, ci: float = 0.95) -> Check:
    """Selection enriches responsive items: the split's mean κ is above the pool's (interval above 0)."""
    m = mean_shift(kappa, selected, n_boot=n_boot, rng=rng, ci=ci)
    n_el = int(np.asarray(eligible).sum())
    ok = None if not m["n_split"] or not np.isfinite(m["lo"]) else bool(m["lo"] > 0)
    return Check(
        "selection enriches corruption-responsive items (split κ above pool κ)",
        "Fig. 3(a): Bench-C leaves the pool's low-κ mass; 4,000 → 1,750 eligible → 849 selected (21.2 %)",
        f"mean κ on the split − on the pool > 0, with its {ci:.0%} bootstrap interval (pool items resampled) "
        "above 0",
        f"κ: {_shift_text(m, ci)}; A⁺ {n_el} of {m['n_pool']}, split {m['n_split']} "
        f"({m['n_split'] / max(m['n_pool'], 1):.1%} of the pool)",
        ok)


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


def obs_table_i(table: pd.DataFrame, overlap: dict) -> Check:
    """Table I: no single selector or criterion drives the split (every variant keeps a majority; 0 < JI < 1)."""
    claim = "the split is not driven by one selector or one criterion (Table I)"
    paper = ("fixed-pool JI ≥ 0.710 (≥ 705/849 kept), recomputed JI ≥ 0.606 (≥ 641/849); semantic-only vs "
             "inconsistency-only JI 0.646")
    check = ("every leave-one-selector-out variant (fixed and recomputed, size-matched) keeps more than half of "
             "the split, and semantic-only and inconsistency-only overlap partly (0 < JI < 1)")
    if not len(table) or not overlap.get("size"):
        return Check(claim, paper, check, "needs two or more selectors and a non-empty split", None)
    fixed, recomp, ji = table["fixed_retention"], table["recomputed_retention"], overlap["ji"]
    measured = (f"fixed: JI {table['fixed_ji'].min():.3f}–{table['fixed_ji'].max():.3f}, retention "
                f"{fixed.min():.2f}–{fixed.max():.2f}; recomputed: JI {table['recomputed_ji'].min():.3f}–"
                f"{table['recomputed_ji'].max():.3f}, retention {recomp.min():.2f}–{recomp.max():.2f}; "
                f"semantic vs inconsistency JI {ji:.3f} (|S| = {overlap['size']})")
    ok = bool((fixed > 0.5).all() and (recomp > 0.5).all() and 0 < ji < 1)
    return Check(claim, paper, check, measured, ok)


def obs_not_difficulty(paths: AnswerPaths, G: np.ndarray, kappa: np.ndarray, selected: np.ndarray) -> Check:
    """κ measures responsiveness, not difficulty: one-answer wrong paths have G = 0; clean-easy items are selected.

    A path wrong at every corrupted severity with one answer must have G = 0
    (a G computed with the clean answer in the path would fail here), and some
    item answered correctly on the clean image by more than half of the
    selectors must be in the split. The rank correlation of κ with the
    selectors' clean error rate is reported beside.
    """
    claim = "κ measures responsiveness, not difficulty"
    paper = ("§IV-C: a sample answered incorrectly at every severity has zero trajectory dispersion, whereas an "
             "initially easy sample can score highly")
    check = ("every path with one wrong answer at all severities has G = 0, and some item answered correctly on the "
             "clean image by most selectors is in the split")
    G = np.asarray(G, dtype=np.float64)
    constant = (paths.pred == paths.pred[..., :1]).all(axis=-1)
    wrong = ~paths.correct.any(axis=-1)
    cw = constant & wrong
    varied_wrong = wrong & ~constant
    has_clean = (paths.clean_pred >= 0).all(axis=1)
    easy = has_clean & (paths.clean_correct.mean(axis=1) > 0.5)
    sel = np.asarray(selected, dtype=bool)
    err = 1.0 - paths.clean_correct.mean(axis=1)
    rho = spearmanr(kappa[has_clean], err[has_clean]).statistic if has_clean.sum() > 2 else np.nan
    if not cw.any() or not has_clean.any():
        return Check(claim, paper, check, "no path is wrong with one answer at every severity, or no clean "
                     "predictions", None)
    max_g = float(G[cw].max())
    measured = (f"{int(cw.sum())} one-answer wrong paths: max G {max_g:.3f}; {int(varied_wrong.sum())} wrong paths "
                f"with several wrong answers: mean G {G[varied_wrong].mean() if varied_wrong.any() else 0:.3f}; "
                f"clean-easy items in the split {int((easy & sel).sum())} of {int(sel.sum())} "
                f"(pool {int(easy.sum())} of {len(easy)}); Spearman ρ(κ, clean error rate) {rho:+.2f}")
    return Check(claim, paper, check, measured, bool(max_g == 0 and (easy & sel).any()))


def selection_observations(paths: AnswerPaths, G: np.ndarray, selection, table: pd.DataFrame, overlap: dict,
                           eval_gini: np.ndarray | None, eval_models: list[str], *, n_boot: int,
                           rng: np.random.Generator, ci: float = 0.95) -> pd.DataFrame:
    """Seed 000's §IV claims on one selection run: the observations table of notebook 01.

    The κ and the Gini intervals resample with the two children of ``rng.spawn(2)``, in that order, so that
    a report of either shift drawn from the same children gives the same interval.
    """
    rng_kappa, rng_gini = rng.spawn(2)
    checks = [obs_split_kappa(selection.kappa, selection.selected, selection.eligible, n_boot=n_boot,
                              rng=rng_kappa, ci=ci)]
    g = np.zeros(len(selection.kappa)) if eval_gini is None else eval_gini
    checks.append(obs_evaluated_gini(g, selection.selected, eval_models if eval_gini is not None else [],
                                     n_boot=n_boot, rng=rng_gini, ci=ci, kappa=selection.kappa))
    checks.append(obs_table_i(table, overlap))
    checks.append(obs_not_difficulty(paths, G, selection.kappa, selection.selected))
    return observations_table(checks)
