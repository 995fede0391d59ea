"""Seed 001's observations that apply to the model organisms, checked on a run's tables (notebook 07).

Each function returns a :class:`~vlmrobust.stats.observations.Check`; ``reproduced`` is ``None`` when
the run holds no data to decide or the row holds by construction. The thresholds are stated in each
check's ``check`` text and are arguments, so a reader can tighten them. The checks with intervals (shares
of instances, rank correlations, the permutation null of the dataset dependence) are in :mod:`.checks`.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ...stats.observations import Check
from . import checks
from .ablation import rank_correlations
from .replicates import interval

__all__ = ["obs_three_regimes", "obs_weighting_insensitive", "check_bottomup_hurts_more", "accuracy_by_evidence",
           "min_rank_correlation", "checks_of_run"]


def obs_three_regimes(regimes: pd.DataFrame) -> Check:
    """S1: the traversal curves fall into all three regimes (stable, progressive, severe)."""
    counts = regimes["regime"].astype(str).value_counts()
    rule = (f"each of stable (retention >= {regimes.attrs.get('stable_min', 0.8):g}), progressive and severe "
            f"(retention < {regimes.attrs.get('severe_below', 0.5):g}) holds at least one traversal curve")
    ok = None if regimes.empty else bool(all(counts.get(k, 0) > 0 for k in ("stable", "progressive", "severe")))
    return Check("S1. three traversal regimes: stable, progressive, severe",
                 "Qwen2.5-VL stable, GPT-4.1 progressive, Gemini 3.5 Flash severe (Fig. 5)", rule,
                 ", ".join(f"{k} {counts.get(k, 0)}" for k in ("stable", "progressive", "severe", "undefined"))
                 + f" of {len(regimes)} curves", ok)


def _offdiag(rho: pd.DataFrame, drop: tuple[str, ...] = ()) -> np.ndarray:
    r = rho.drop(index=list(drop), columns=list(drop), errors="ignore").to_numpy()
    return r[~np.eye(len(r), dtype=bool)]


def min_rank_correlation(t) -> float:
    """§II-F: the smallest pairwise Spearman ρ between the four weighting schemes, over RCI_mu and T_mu
    (the ``ablation`` scores of :class:`~vlmrobust.analysis.escalation.replicates.RunTables`)."""
    vals = [_offdiag(rank_correlations(t.ablation, "RCI")),
            _offdiag(rank_correlations(t.ablation, "T-RCI"), ("no-spatial",))]
    v = np.concatenate(vals)
    v = v[np.isfinite(v)]
    return float(v.min()) if v.size else float("nan")


def obs_weighting_insensitive(point, reps, *, lo: float = 0.9, ci: float = 0.95) -> Check:
    """§II-F: the weighting schemes rank the units alike: the smallest pairwise ρ, its interval above ``lo``."""
    v, a, b = interval(min_rank_correlation, point, reps, ci)
    if not np.isfinite(v):
        return Check("II-F. rankings are insensitive to the weighting", "", "", "too few units to rank", None)
    return Check("II-F. rankings are insensitive to the weighting",
                 "accuracy-, entropy-, failure-heavy and equal weights: pairwise correlations ≈ 0.95–0.99",
                 f"smallest pairwise Spearman ρ between the four schemes (RCI_mu and T_mu), {ci:.0%} bootstrap "
                 f"interval above {lo:g}", f"min ρ {v:.3f} [{a:.3f}, {b:.3f}]", bool(np.isfinite(a) and a >= lo))


def check_bottomup_hurts_more(states: pd.DataFrame, evidence: pd.DataFrame, model: str = "model",
                              td: str = "TD", bu: str = "BU") -> Check:
    """Ground truth: in ground-plane scenes (sky on top), bottom-up removes more evidence than top-down,
    so it should hurt more: per model, the mean accuracy over the states is lower under bottom-up.

    ``states``: :func:`~vlmrobust.analysis.escalation.indices.trci_states` on ground scenes only; ``evidence``:
    the evidence table of the two traversals on the same items, with a ``direction`` column.
    """
    ev = evidence[evidence["direction"].isin([td, bu])]
    rem = ev.groupby("direction")["target_removed"].mean()
    acc = states[states["direction"].isin([td, bu])].groupby([model, "direction"], observed=True)["A"].mean()
    acc = acc.unstack("direction")
    if acc.empty or td not in acc or bu not in acc or td not in rem or bu not in rem:
        return Check("ground truth: bottom-up hurts more than top-down in ground scenes", "", "",
                     "no top-down and bottom-up states on ground scenes", None)
    worse = acc[bu] < acc[td]
    ev_ok = bool(rem[bu] > rem[td])
    return Check(
        "ground truth: bottom-up hurts more than top-down in ground scenes",
        "not a claim of the paper: the synthetic world has its sky on top and its objects on the ground",
        "bottom-up removes a larger mean share of the target's box than top-down (evidence record), and every "
        "model's mean accuracy over the four states is lower under bottom-up",
        f"target share removed: BU {rem[bu]:.3f} vs TD {rem[td]:.3f}; accuracy lower under BU for "
        f"{int(worse.sum())} of {len(worse)} models (mean BU {acc[bu].mean():.3f} vs TD {acc[td].mean():.3f})",
        bool(ev_ok and worse.all()))



def accuracy_by_evidence(pred: pd.DataFrame, evidence: pd.DataFrame) -> pd.DataFrame:
    """Accuracy per traversal ``direction`` (rows) and evidence state (columns: ``intact``, ``partial``,
    ``removed``, ...), with ``n`` rows per direction: the rows of ``pred`` joined to the ``evidence`` table of
    the same items and conditions (with a ``direction`` column), as the ground-truth check reads them.
    Accuracy with the evidence intact is what the fill costs by itself."""
    by_ev = pred.merge(evidence[["item_id", "perturbation", "level", "evidence", "direction"]],
                       on=["item_id", "perturbation", "level"])
    return (by_ev.pivot_table(index="direction", columns="evidence", values="correct", aggfunc="mean")
            .join(by_ev.groupby("direction").size().rename("n")))


def checks_of_run(point, boot, perms, regimes: pd.DataFrame, warnings: pd.DataFrame, rho_model: float,
                  max_resid: float, *, acc_tol: float = 0.05, index_gap: float = 0.05, direction_gap: float = 0.05,
                  monotone_tol: float = 0.02, latent_rng: np.random.Generator, ci: float = 0.95) -> list[Check]:
    """Notebook 07's observations in order: O6 (twice), O4 (two rows), O1/O8, O9 (two rows), §V, S1, S3, the
    weighting ablation, D_spatial at the model level (by construction) and per state, §VI.

    ``point``/``boot``/``perms``: :class:`~.replicates.RunTables` of the run, of question resamples and of
    group permutations; ``regimes``: the traversal curves' regimes (S1); ``warnings``:
    :func:`~.fragility.early_warnings`; ``rho_model``, ``max_resid``: the model-level ablation ρ and affine
    residual; the thresholds as in the notebook's parameters.
    """
    share = dict(point=point, reps=boot, ci=ci)
    return [
        checks.obs_shares("6. similar accuracy, different RCI",
                          "model–dataset pairs at similar accuracy are separated along RCI (Fig. 3)",
                          lambda t: checks.share_similar_different(t, "A_CR", "RCI_mu", acc_tol, index_gap),
                          what=f"pairs with |ΔA_CR| <= {acc_tol:g} whose RCI_mu differ by >= {index_gap:g}", **share),
        checks.obs_shares("6. similar traversal accuracy, different T-RCI", "the same along T-RCI (Fig. 3)",
                          lambda t: checks.share_similar_different(t, "A_T", "T_mu", acc_tol, index_gap),
                          what=f"pairs with |ΔA_T| <= {acc_tol:g} whose T_mu differ by >= {index_gap:g}", **share),
        checks.obs_shares("4. clean accuracy does not always translate into corruption robustness",
                          "Claude Opus 4.7 competitive clean yet the highest RCI_mu on ScienceQA-Chemistry (Table I)",
                          checks.share_clean_not_robust,
                          what="model pairs of a group in which the higher A_CL has the higher RCI_mu", **share),
        checks.obs_corruption_vs_traversal(point, boot, ci=ci),
        checks.obs_dataset_dependence(point, perms),
        checks.obs_shares("9. robustness depends on the traversal direction",
                          "several models show markedly different T-RCI across directions (Table I, S4)",
                          lambda t: checks.share_direction_spread(t, direction_gap),
                          what=f"units whose T-RCI(r) spans >= {direction_gap:g} over the directions", **share),
        checks.obs_rl_most_fragile(point, boot, ci),
        checks.obs_crop_not_blur(point, boot, ci=ci),
        obs_three_regimes(regimes),
        checks.obs_shares("S3. degradation is not strictly monotonic",
                          "several models gain accuracy at intermediate crop severities before declining (Fig. 5)",
                          checks.share_non_monotone,
                          what=f"traversal curves rising by > {monotone_tol:g} between levels", **share),
        obs_weighting_insensitive(point, boot, ci=ci),
        checks.obs_no_spatial_model_level(rho_model, max_resid),
        checks.obs_no_spatial_per_state(point, boot, ci=ci),
        checks.obs_latent_share(warnings, len(boot), latent_rng, ci),
    ]
