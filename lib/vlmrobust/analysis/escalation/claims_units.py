"""Notebook 07's claims about units and their groups (seed 001: O1/O8, O4, O6, O9), decided per instance with paired
intervals or by permutation (:mod:`.decide`)."""

from __future__ import annotations

from itertools import combinations

import numpy as np
import pandas as pd

from ...stats.claims import (
    NO_SUBJECT,
    Claim,
    interval_text,
    no_subject,
)
from . import decide as D
from .claims_base import (
    DIRECTIONS,
    NAN,
    _arrays,
    _models,
    _n_questions,
    _name,
    _row,
    group_spread,
    rho_rci_trci,
)
from .paper_table import PAPER_TABLE_I, paper_rank_correlation

__all__ = ["obs_similar_different", "obs_clean_not_robust", "obs_corruption_vs_traversal", "obs_dataset_dependence",
           "obs_direction_dependence", "obs_rl_most_fragile"]


# ----------------------------------------------------------------------------- claims about pairs of units


def obs_similar_different(point, reps, acc: str = "A_CR", index: str = "RCI_mu", *, acc_tol: float = 0.05,
                          gap: float = 0.05, ci: float = 0.95, df: int | None = None,
                          claim: str = "6. similar accuracy, different RCI",
                          paper: str = "model–dataset pairs at similar accuracy are separated along RCI (Fig. 3)"
                          ) -> Claim:
    """O6: among pairs of units (model × group) with ``|Δacc| <= acc_tol``, some pair's ``index`` differs
    (:func:`.decide.pairs_differ`)."""
    keys = ["model", "group"]
    idx, P, R = _arrays(point.table1, [r.table1 for r in reps], keys, [acc, index])
    null = f"equal units: every unit has the same {index} (two halves of one model's questions differ by noise alone)"
    test = (f"pairs with |Δ{acc}| <= {acc_tol:g}: some pair's paired {ci:.0%} interval of Δ{index} excludes 0 "
            "(Bonferroni over the pairs); not reproduced when every pair's lies within ±" + f"{gap:g}")
    dec, pr = D.pairs_differ(P[:, 0], P[:, 1], R[:, :, 1], x_tol=acc_tol, gap=gap, ci=ci, df=df)
    if dec.verdict == NO_SUBJECT:
        return no_subject(claim, paper, null, test, f"no pair of units with |Δ{acc}| <= {acc_tol:g}")
    a, b = pr[dec.best]
    measured = (f"|Δ{index}| {interval_text(dec.value, dec.lo, dec.hi, 3)} for {_name(idx[a])} vs {_name(idx[b])} "
                f"(|Δ{acc}| {abs(P[a, 0] - P[b, 0]):.3f}); {dec.n_decided} of {dec.n} close pairs decided different")
    return _row(claim, paper, _models(point), null, test, dec, measured, _n_questions(point))


def _within_group_pairs(t1: pd.DataFrame) -> np.ndarray:
    g = t1["group"].astype(str).to_numpy()
    i, j = np.triu_indices(len(t1), 1)
    keep = g[i] == g[j]
    return np.stack([i[keep], j[keep]], axis=1)


def obs_clean_not_robust(point, reps, ci: float = 0.95, df: int | None = None) -> Claim:
    """O4: clean accuracy does not always translate into corruption robustness: in some pair of models of one
    group, the one with the higher ``A_CL`` has the higher (worse) ``RCI_mu``, both orders decided."""
    keys = ["model", "group"]
    idx, P, R = _arrays(point.table1, [r.table1 for r in reps], keys, ["A_CL", "RCI_mu"])
    claim = "4. clean accuracy does not always translate into corruption robustness"
    paper = "Claude Opus 4.7 competitive clean yet the highest RCI_mu on ScienceQA-Chemistry (Table I)"
    null = ("clean accuracy translates into robustness: the higher A_CL never has the higher RCI_mu (worst case: "
            "equal units)")
    test = (f"model pairs of one group: some pair's paired {ci:.0%} intervals put ΔA_CL > 0 and ΔRCI_mu > 0 "
            "(Bonferroni over the pairs); margin = the smaller difference")
    dec, pr = D.pairs_sign(P[:, 0], P[:, 1], R[:, :, 0], R[:, :, 1], _within_group_pairs(point.table1.reset_index()),
                           same_sign=True, ci=ci, df=df)
    if dec.verdict == NO_SUBJECT:
        return no_subject(claim, paper, null, test, "no group with two models")
    a, b = pr[dec.best]
    measured = (f"margin {interval_text(dec.value, dec.lo, dec.hi, 3)}: {_name(idx[a])} vs {_name(idx[b])}, ΔA_CL "
                f"{P[a, 0] - P[b, 0]:+.3f}, ΔRCI_mu {P[a, 1] - P[b, 1]:+.3f}; {dec.n_decided} of {dec.n} pairs decided")
    return _row(claim, paper, _models(point), null, test, dec, measured, _n_questions(point))


def obs_corruption_vs_traversal(point, reps, ci: float = 0.95, df: int | None = None) -> Claim:
    """O4: corruption robustness and traversal robustness capture distinct mechanisms: some pair of units is
    ordered one way by ``RCI_mu`` and the other way by ``T_mu``, both orders decided (one mechanism would
    order them alike; its null is two noisy copies of one ranking)."""
    keys = ["model", "group"]
    idx, P, R = _arrays(point.table1, [r.table1 for r in reps], keys, ["RCI_mu", "T_mu"])
    claim = "4. corruption robustness and traversal robustness capture distinct mechanisms"
    paper = (f"Claude: highest RCI_mu on ScienceQA yet competitive under traversal; Spearman ρ(RCI_mu, T_mu) over "
             f"Table I's 19 rows {paper_rank_correlation():.3f}")
    null = "one mechanism: RCI_mu and T_mu are two noisy copies of one ranking of the units"
    test = (f"some pair of units with ΔRCI_mu > 0 and ΔT_mu < 0, both paired {ci:.0%} intervals decided "
            "(Bonferroni over the pairs); margin = the smaller difference")
    dec, pr = D.pairs_sign(P[:, 0], P[:, 1], R[:, :, 0], R[:, :, 1], same_sign=False, ci=ci, df=df)
    if dec.verdict == NO_SUBJECT:
        return no_subject(claim, paper, null, test, "fewer than two units")
    rho = rho_rci_trci(point)
    rr = np.array([rho_rci_trci(r) for r in reps])
    rlo, rhi = D.fisher_intervals(rho, rr, ci, df=df) if len(rr) else (NAN, NAN)
    a, b = pr[dec.best]
    measured = (f"margin {interval_text(dec.value, dec.lo, dec.hi, 3)}: {_name(idx[a])} vs {_name(idx[b])}, ΔRCI_mu "
                f"{P[a, 0] - P[b, 0]:+.3f}, ΔT_mu {P[a, 1] - P[b, 1]:+.3f}; {dec.n_decided} of {dec.n} pairs "
                f"decided; ρ(RCI_mu, T_mu) {interval_text(rho, float(rlo), float(rhi), 3)}")
    return _row(claim, paper, _models(point), null, test, dec, measured, _n_questions(point))


def obs_dataset_dependence(point, reps, perms, alpha: float = 0.05, ci: float = 0.95,
                           df: int | None = None) -> Claim:
    """O1/O8: the groups differ in mean RCI_mu and in mean T_mu by more than permuted group labels make them
    (:func:`.decide.permutation_decision`). The row's value is the spread with the larger p."""
    claim = "1/8. robustness depends on the dataset"
    paper = "ScienceQA RCI_mu < 0.12 for the strong models, MMJEE far worse, MathVista between (Table I)"
    null = "group labels exchangeable: the questions' groups permuted"
    test = (f"spread (max − min) of the groups' mean RCI_mu and mean T_mu against {len(perms)} permutations of the "
            f"questions' group labels: both p < {alpha:g}; not reproduced when one spread is at most the null's median")
    cols = ("RCI_mu", "T_mu")
    obs = np.array([group_spread(point, c) for c in cols])
    if not np.isfinite(obs).all():
        return no_subject(claim, paper, null, test, "fewer than two groups")
    null_s = np.array([[group_spread(p, c) for c in cols] for p in perms]).reshape(-1, 2)
    v, p = D.permutation_decision(obs, null_s, alpha)
    w = int(np.nanargmax(p)) if np.isfinite(p).any() else 0
    rep = np.array([group_spread(r, cols[w]) for r in reps])
    lo, hi = D.normal_intervals(obs[w], rep, ci, df=df) if len(rep) else (NAN, NAN)
    q95 = float(np.quantile(null_s[:, w], 1 - alpha)) if len(null_s) else NAN
    parts = []
    for k, c in enumerate(cols):
        order = point.table1.groupby("group", observed=True)[c].mean().sort_values()
        parts.append(f"{c} spread {obs[k]:.3f}, p = {p[k]:.3f} (order {' < '.join(map(str, order.index))})")
    dec = D.Decision(v, float(obs[w]), float(lo), float(hi))
    return _row(claim, paper, _models(point), null, test, dec, "; ".join(parts), _n_questions(point), edge=q95)


# ----------------------------------------------------------------------------- directions, ladders, curves


def _direction_matrix(t) -> tuple[pd.Index, np.ndarray]:
    unit = list(t.directions.attrs.get("unit", ("model", "group")))
    m = t.directions.pivot_table(index=unit, columns="direction", values="T_RCI", observed=False, dropna=False)
    m = m.reindex(columns=[d for d in DIRECTIONS])
    return m.index, m.to_numpy(np.float64)


def _direction_arrays(point, reps):
    idx, M = _direction_matrix(point)
    R = []
    for r in reps:
        i2, m2 = _direction_matrix(r)
        R.append(pd.DataFrame(m2, index=i2).reindex(idx).to_numpy(np.float64))
    return idx, M, (np.stack(R) if R else np.empty((0, *M.shape)))


def obs_direction_dependence(point, reps, gap: float = 0.05, ci: float = 0.95, df: int | None = None) -> Claim:
    """O9/S4: some unit's T-RCI(r) differs between two directions (paired intervals, Bonferroni over every
    unit × pair of directions); not reproduced when every difference lies within ``±gap``."""
    claim = "9. robustness depends on the traversal direction"
    paper = "several models show markedly different T-RCI across directions (Table I, S4)"
    null = "equal directions: every unit's T-RCI(r) the same in all four directions"
    test = (f"some unit's paired {ci:.0%} interval of T-RCI(r) − T-RCI(r') excludes 0 (Bonferroni over units × 6 "
            f"direction pairs); not reproduced when every one lies within ±{gap:g}")
    idx, M, R = _direction_arrays(point, reps)
    pairs = list(combinations(range(len(DIRECTIONS)), 2))
    d = np.concatenate([M[:, a] - M[:, b] for a, b in pairs])
    dr = np.concatenate([R[:, :, a] - R[:, :, b] for a, b in pairs], axis=1)
    ok = np.isfinite(d)
    if not ok.any():
        return no_subject(claim, paper, null, test, "no unit with T-RCI in two directions")
    where = np.flatnonzero(ok)
    dec = D.some_instance(d[ok], dr[:, ok], ci, two_sided=True, null_edge=gap, df=df)
    u, pk = int(where[dec.best]) % len(idx), int(where[dec.best]) // len(idx)
    a, b = pairs[pk]
    measured = (f"|T-RCI({DIRECTIONS[a]}) − T-RCI({DIRECTIONS[b]})| {interval_text(dec.value, dec.lo, dec.hi, 3)} for "
                f"{_name(idx[u])}; {dec.n_decided} of {dec.n} unit × direction pairs decided different")
    return _row(claim, paper, _models(point), null, test, dec, measured, _n_questions(point))


def obs_rl_most_fragile(point, reps, ci: float = 0.95, df: int | None = None) -> Claim:
    """O9: right-to-left is the recurring most fragile direction: the units' mean T-RCI(RL) exceeds their mean
    T-RCI in each other direction (three paired intervals, all above 0)."""
    paper_share = (PAPER_TABLE_I["W_D"] == "RL").mean()
    claim = "9. right-to-left is the recurring most fragile direction"
    paper = (f"W_D = RL in {int((PAPER_TABLE_I['W_D'] == 'RL').sum())} of 19 rows ({paper_share:.2f}); 6 of 7 on "
             "ScienceQA (Table I)")
    null = "exchangeable directions: RL no more fragile on average than TD, BU or LR"
    test = (f"mean over units of T-RCI(RL) − T-RCI(r), paired {ci:.0%} interval above 0 for each r of TD, BU, LR; "
            "not reproduced when one lies at or below 0")
    idx, M, R = _direction_arrays(point, reps)
    rl = DIRECTIONS.index("RL")
    others = [k for k in range(len(DIRECTIONS)) if k != rl]
    if not np.isfinite(M[:, rl]).any():
        return no_subject(claim, paper, null, test, "no T-RCI in the RL direction")
    with np.errstate(invalid="ignore"):
        comp = np.array([np.nanmean(M[:, rl] - M[:, k]) for k in others])
        cr = np.stack([np.nanmean(R[:, :, rl] - R[:, :, k], axis=1) for k in others], axis=1) if len(R) else \
            np.empty((0, 3))
    dec = D.all_instances(comp, cr, ci, df=df)
    w = point.table1["W_D"].dropna().astype(str)
    measured = (f"mean T-RCI(RL) − T-RCI({DIRECTIONS[others[dec.best]]}) {interval_text(dec.value, dec.lo, dec.hi, 3)} "
                f"(the weakest of the three: " + ", ".join(f"{DIRECTIONS[k]} {c:+.3f}" for k, c in
                                                           zip(others, comp, strict=True))
                + f"); W_D = RL in {int((w == 'RL').sum())} of {len(w)} units")
    return _row(claim, paper, _models(point), null, test, dec, measured, _n_questions(point))
