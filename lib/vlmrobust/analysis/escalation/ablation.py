r"""The weighting ablation of seed 001 (§II-F): RCI and T-RCI under other weights, and rank correlations.

The paper reports that accuracy-heavy, entropy-heavy, failure-heavy and equal weights, and T-RCI without
:math:`\mathcal D_{spatial}`, rank models and datasets alike ("pairwise correlations of approximately
0.95–0.99"; without :math:`\mathcal D_{spatial}` "ρ ∼ 0.95"). A *heavy* scheme puts 0.5 on the named term
and shares the other 0.5 equally among the rest; *no-spatial* sets :math:`\alpha_4 = 0` and shares its
weight equally among the other four terms.

**Removing** :math:`\mathcal D_{spatial}` **is an affine map at the model level.** When every term is
available, :math:`\mathrm{TRCI}_{equal} = \tfrac45 \mathrm{TRCI}_{no\text{-}spatial} + \alpha_4 \sum_k \gamma_k
s_k`, and the offset is the same for every model on the same states, so the Spearman correlation between
the two rankings of the units is exactly 1: an identity, true by construction on complete data. (A unit
whose :math:`\mathcal D_{acc}`, :math:`\mathcal D_{ent}` or :math:`\mathcal D_{fail}` is undefined
renormalises α over fewer terms and falls off the affine line; :func:`affine_residual` shows by how much.)
**Per state it is not**: :math:`\mathcal D_{spatial} = s_k` varies along a trajectory, so the per-state terms
:math:`\tau_{r,k}` with and without it, pooled over unit × direction × state, rank differently; that
correlation (:func:`vlmrobust.analysis.escalation.claims.rho_per_state`) is what comes out near the paper's
0.95.

Scores are the unit-level means of Table I (``RCI_mu`` over the ladder conditions, ``T_mu`` over the
directions). Before ranking they are rounded to 12 decimals, so that floating-point noise between two
schemes that are equal in exact arithmetic cannot swap a tie; Spearman's ρ uses average ranks for ties.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from .indices import TRCIResult, rci, spatial_offset, trci

__all__ = ["heavy", "RCI_SCHEMES", "TRCI_SCHEMES", "ablation_scores", "rank_correlations", "affine_residual",
           "spatial_table"]


def heavy(n_terms: int, index: int | None) -> tuple[float, ...]:
    """0.5 on term ``index`` and the other 0.5 shared by the remaining ``n_terms - 1``; ``None``: equal."""
    if index is None:
        return tuple(1.0 / n_terms for _ in range(n_terms))
    rest = 0.5 / (n_terms - 1)
    return tuple(0.5 if i == index else rest for i in range(n_terms))


#: λ schemes of the ablation, in :data:`~vlmrobust.analysis.escalation.indices.RCI_TERMS` order.
RCI_SCHEMES: dict[str, tuple[float, ...]] = {
    "equal": heavy(4, None), "accuracy-heavy": heavy(4, 0), "entropy-heavy": heavy(4, 2),
    "failure-heavy": heavy(4, 3),
}
#: α schemes of the ablation, in :data:`~vlmrobust.analysis.escalation.indices.TRCI_TERMS` order.
TRCI_SCHEMES: dict[str, tuple[float, ...]] = {
    "equal": heavy(5, None), "accuracy-heavy": heavy(5, 0), "entropy-heavy": heavy(5, 1),
    "failure-heavy": heavy(5, 2), "no-spatial": (0.25, 0.25, 0.25, 0.0, 0.25),
}

def ablation_scores(cells: pd.DataFrame, states: pd.DataFrame, ladders: Sequence[str], *,
                    rci_schemes: Mapping[str, Sequence[float]] = RCI_SCHEMES,
                    trci_schemes: Mapping[str, Sequence[float]] = TRCI_SCHEMES, fail: str = "joint",
                    gammas=None, betas=None) -> pd.DataFrame:
    """One row per unit: ``RCI_mu`` under each λ scheme (``RCI:<scheme>``) and ``T_mu`` under each α scheme
    (``T-RCI:<scheme>``). ``cells``: :func:`~vlmrobust.analysis.escalation.indices.cell_stats`; ``states``:
    :func:`~vlmrobust.analysis.escalation.indices.trci_states`; ``ladders`` the perturbations RCI_mu averages."""
    unit = list(cells.attrs.get("unit", ()))
    lad = cells[cells["perturbation"].astype(str).isin(list(ladders))]
    out = None
    for name, lam in rci_schemes.items():
        r = rci(lad, lam, fail=fail).groupby(unit, observed=True, sort=True)["RCI"].mean().rename(f"RCI:{name}")
        out = r.to_frame() if out is None else out.join(r, how="outer")
    for name, alpha in trci_schemes.items():
        t = trci(states, alpha, gammas, betas).units.set_index(unit)["T_mu"].rename(f"T-RCI:{name}")
        out = t.to_frame() if out is None else out.join(t, how="outer")
    return out.reset_index()


def rank_correlations(scores: pd.DataFrame, prefix: str) -> pd.DataFrame:
    """Spearman ρ between every pair of the ``<prefix>:<scheme>`` columns of :func:`ablation_scores`.

    Units with a missing score are left out; scores are rounded to 12 decimals before ranking.
    """
    from scipy.stats import spearmanr

    cols = [c for c in scores.columns if c.startswith(f"{prefix}:")]
    if len(cols) < 2:
        raise ValueError(f"need two or more {prefix}:<scheme> columns, found {cols}")
    x = scores[cols].dropna().round(12)
    names = [c.split(":", 1)[1] for c in cols]
    if len(x) < 3:
        return pd.DataFrame(np.nan, index=names, columns=names)
    rho = spearmanr(x.to_numpy()).statistic
    if np.ndim(rho) == 0:  # two schemes, or a constant column: scipy returns one coefficient; pair by pair
        v = x.to_numpy()
        rho = np.array([[1.0 if i == j else spearmanr(v[:, i], v[:, j]).statistic for j in range(len(cols))]
                        for i in range(len(cols))])
    return pd.DataFrame(rho, index=names, columns=names)


def affine_residual(states: pd.DataFrame, gammas=None) -> pd.DataFrame:
    """Per unit × direction: T-RCI equal, T-RCI no-spatial, the D_spatial offset, and the residual of
    ``T_equal - (4/5 T_no-spatial + offset)`` (0 up to rounding wherever every term is available)."""
    unit = list(states.attrs.get("unit", ()))
    eq = trci(states, TRCI_SCHEMES["equal"], gammas).directions
    ns = trci(states, TRCI_SCHEMES["no-spatial"], gammas).directions
    off = spatial_offset(states, TRCI_SCHEMES["equal"], gammas)
    keys = [*unit, "direction"]
    out = eq[[*keys, "T_RCI"]].rename(columns={"T_RCI": "T_equal"}).merge(
        ns[[*keys, "T_RCI"]].rename(columns={"T_RCI": "T_no_spatial"}), on=keys).merge(off, on=keys)
    out["residual"] = out["T_equal"] - (0.8 * out["T_no_spatial"] + out["offset"])
    return out


def spatial_table(states: pd.DataFrame, result: TRCIResult,
                  alphas: Sequence[float] = (0.2, 0.2, 0.2, 0.2, 0.2)) -> pd.DataFrame:
    """Per unit: ``T_mu`` of ``result`` (:func:`~vlmrobust.analysis.escalation.indices.trci` of ``states`` with
    ``alphas``), the mean over directions of the :math:`\\mathcal D_{spatial}` ``offset``
    (:func:`~vlmrobust.analysis.escalation.indices.spatial_offset`), ``T_mu_no_spatial`` (the *no-spatial*
    scheme) and ``T_mu_minus_offset``: what the model-independent term adds to every T-RCI (§II-F)."""
    unit = list(states.attrs.get("unit", ()))
    offset = spatial_offset(states, alphas)
    no_spatial = trci(states, TRCI_SCHEMES["no-spatial"]).units
    out = result.units[[*unit, "T_mu"]].merge(
        offset.groupby(unit, observed=True)["offset"].mean().reset_index(), on=unit).merge(
        no_spatial[[*unit, "T_mu"]].rename(columns={"T_mu": "T_mu_no_spatial"}), on=unit)
    out["T_mu_minus_offset"] = out["T_mu"] - out["offset"]
    return out
