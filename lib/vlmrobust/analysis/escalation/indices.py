r"""BRUCE's robustness indices: RCI, T-RCI, the worst direction and the Table I analogue (seed 001, §II-D–F, §IV-A).

Seed 001's equations are unnumbered; the sections named here hold them. Every case the paper leaves open is
fixed as follows.

**Cells and pairing.** A *cell* is ``unit`` × perturbation × level, the unit being the model (with the
scoring method when a model has several) and optional group columns (a dataset, a group of task families).
Each corrupted row is joined to the clean row (perturbation ``"clean"``, level 0) of the same ``(model,
method, item_id)``, and a cell's clean quantities (``A_clean``, ``H_clean``, ``ECE_clean``, the
clean-correct items) are computed on the clean rows *of its own items*, so every term compares the same
questions. Correctness is ``pred_idx == answer_idx``.

**Terms of RCI** (§II-D1), per cell, **not clipped** (seed 001's Table I has corrupted accuracy above clean
in six rows, so :math:`\mathcal D_{acc}` can be negative):

* :math:`\mathcal D_{acc} = 1 - A_p / A_{clean}`;
* :math:`\mathcal D_{ent} = 1 - H_p / H_{clean}` with :math:`H` the normalised entropy of the empirical
  distribution of the *predicted option index* over the cell's items (the paper parses one letter per
  answer; no model probability enters), :math:`H = -\sum_k q_k \log q_k / \log K_{max}`, where
  :math:`K_{max}` is the largest ``K`` among the cell's items (with mixed ``K``, e.g. yes/no items beside
  four-option items, the letters range over :math:`K_{max}` values; with one ``K`` it is the usual
  :math:`\log K`);
* :math:`\mathcal D_{cal} = |\mathrm{ECE}_p - \mathrm{ECE}_{clean}|`, ECE with 10 equal-width bins on the
  ``confidence`` column as :func:`vlmrobust.stats.calibration.ece` (same bins, NaN confidences left
  out); available only when both sides have a confidence;
* :math:`\mathcal D_{fail}` in the **joint** reading (default):
  :math:`\sum_f w_f\,\#(\text{clean-correct} \wedge \text{perturbed-wrong} \wedge f) / \#\text{clean-correct}`,
  the share of clean-correct items that turn wrong, weighted by failure class :math:`f`
  (:mod:`vlmrobust.analysis.escalation.taxonomy`); with :math:`w_f = 1` it is the flip rate. The **conditional**
  reading :math:`\sum_f w_f P(f \mid \text{flip})` is an option: with uniform :math:`w_f = 1` it equals 1
  whenever any flip exists (0 when none), which is why it is not the default. The **table-i** reading
  (:data:`TABLE_I_FAIL_SCALE`) is the one that reproduces the paper's Table I: in all 19 rows
  :math:`\mathrm{RCI}_\mu \ge c\,(1 - A_{CR})` with :math:`c = 0.300` and three rows on the bound (both
  LLaVA rows, whose accuracy does not change, and a row with clean accuracy 0;
  :mod:`vlmrobust.analysis.escalation.paper_table` fits it), while under both literal readings a model
  whose predictions do not change scores RCI = 0. A term proportional to the *perturbed error rate*
  does it: :math:`\mathcal D_{fail} = \kappa \sum_f w_f\,\#(\text{perturbed-wrong} \wedge f) / n`
  with :math:`\kappa = 4c = 1.2`, so that an unchanged model with its four terms available and uniform
  λ scores exactly :math:`c\,(1 - A_p)`. The paper's text says none of this; it stays an option, the
  literal joint reading the default. The fit uses RCI's rows only, so T-RCI reads ``"table-i"`` as
  ``"joint"``.

**Undefined terms.** :math:`A_{clean} = 0` (equivalently, no clean-correct item) leaves
:math:`\mathcal D_{acc}` and :math:`\mathcal D_{fail}` undefined; :math:`H_{clean} = 0` (one option
predicted for every clean item) leaves :math:`\mathcal D_{ent}` undefined. An undefined term is treated as
the paper treats a missing calibration signal: it is *not* counted as zero degradation; the index is the
weighted mean over the available terms, :math:`\sum_{i \in av} \lambda_i \mathcal D_i / \sum_{i \in av}
\lambda_i` (uniform :math:`\lambda`: the mean of the available terms; three without confidences). A cell
with no available term has index NaN.

**T-RCI** (§II-D2, §II-F), per direction :math:`r` and state :math:`s_k` (the level's ``param``: the share
removed), :math:`s_0` = clean, terms **clipped at 0** as the paper writes them:
:math:`\mathcal D_{acc} = \max(0, (A_0 - A_k)/A_0)`, :math:`\mathcal D_{ent} = \max(0, (H_0 - H_k)/H_0)`,
:math:`\mathcal D_{fail}` as above, :math:`\mathcal D_{spatial} = s_k`,
:math:`\mathcal D_{prog} = \max(0, (A_{k-1} - A_k)/(A_{k-1} + \epsilon))` with :math:`A_{k-1}` the
accuracy of the next lower level present (the clean accuracy at :math:`k = 1`) and :math:`\epsilon =`
:data:`EPSILON` (a zero previous accuracy gives 0). The per-state term
:math:`\tau_{r,k} = \sum_i \alpha_i \mathcal D_i` uses the available-terms rule; then
:math:`\mathrm{TRCI}(r) = \sum_k \gamma_k \tau_{r,k}` and :math:`\mathrm{TRCI} = \sum_r \beta_r
\mathrm{TRCI}(r)`, each renormalised over the states and directions present. Uniform weights by default
(:math:`\alpha_i = 1/5`, :math:`\gamma_k = 1/K`, :math:`\beta_r = 1/|R|`). :math:`\mathcal D_{spatial}` is
model-independent: when every term is available it adds exactly :math:`\alpha_4 \sum_k \gamma_k s_k` (0.1
with uniform weights and :math:`s_k = 0.2 \ldots 0.8`) to every T-RCI (:func:`spatial_offset`).

**Table I** (§IV-A, :func:`table_i`): ``A_CL`` clean accuracy, ``A_CR`` and ``RCI_mu`` the means over the
ladder conditions, ``RCI_max`` their maximum, ``A_T`` the mean accuracy over direction × state, ``T_mu``
the combined T-RCI, ``T_max`` the **maximum of the per-state term** :math:`\tau_{r,k}` over direction ×
state (the paper's rows satisfy :math:`T_{max} \ge W_T \ge T_\mu` only under that reading), ``W_D`` the
worst direction (largest :math:`\mathrm{TRCI}(r)`, ties to the first direction given) and ``W_T`` its
T-RCI. :func:`pareto_front` marks the frontier of Fig. 3.

The one pass over the predictions rows is :func:`cell_stats` (module ``cells``: factorisations
and ``bincount``s); everything here works on its cells. The weighting ablation of §II-F is
:mod:`vlmrobust.analysis.escalation.ablation`, the fragility regimes and the latent instability of §VI are
:mod:`vlmrobust.analysis.escalation.fragility`, the failure taxonomy of §II-H is
:mod:`vlmrobust.analysis.escalation.taxonomy`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import NamedTuple

import numpy as np
import pandas as pd

from ...stats.grouped import group_codes, safe_div
from .cells import CELL_COLUMNS, cell_stats

__all__ = ["RCI_TERMS", "TRCI_TERMS", "EPSILON", "FAIL_READINGS", "CELL_COLUMNS", "cell_stats", "rci",
           "rci_notes", "trci_states", "trci", "TRCIResult", "weighted_terms", "spatial_offset", "table_i",
           "TABLE_I_COLUMNS", "pareto_front", "TABLE_I_BOUND", "TABLE_I_FAIL_SCALE"]

RCI_TERMS = ("D_acc", "D_cal", "D_ent", "D_fail")
TRCI_TERMS = ("D_acc", "D_ent", "D_fail", "D_spatial", "D_prog")
#: The stabilising constant of D_prog (seed 001 only asks for epsilon > 0).
EPSILON = 1e-6
FAIL_READINGS = ("joint", "conditional", "table-i")
#: c of Table I's bound RCI_mu >= c (1 - A_CR) (:mod:`.paper_table`), times the four RCI terms: kappa.
TABLE_I_BOUND = 0.3
TABLE_I_FAIL_SCALE = 4 * TABLE_I_BOUND
TABLE_I_COLUMNS = ("A_CL", "A_CR", "RCI_mu", "RCI_max", "A_T", "T_mu", "T_max", "W_D", "W_T")


# ----------------------------------------------------------------------------- RCI


def weighted_terms(D: np.ndarray, weights: Sequence[float]) -> np.ndarray:
    """Row-wise :math:`\\sum_i w_i D_i / \\sum_{i\\,available} w_i` over the finite entries (NaN when none)."""
    w = np.asarray(weights, dtype=np.float64)
    if w.ndim != 1 or w.size != D.shape[1] or not np.isfinite(w).all() or (w < 0).any() or w.sum() <= 0:
        raise ValueError(f"weights must be {D.shape[1]} finite values >= 0 with a positive sum, got {list(weights)}")
    ok = np.isfinite(D)
    num = np.where(ok, D, 0.0) @ w
    den = ok.astype(np.float64) @ w
    return safe_div(num, den)


def _fail(c: pd.DataFrame, fail: str) -> np.ndarray:
    if fail not in FAIL_READINGS:
        raise ValueError(f"fail must be one of {FAIL_READINGS}, got {fail!r}")
    n_cc, n_flip, w_flip = (c[k].to_numpy(dtype=np.float64) for k in ("n_cc", "n_flip", "w_flip"))
    if fail == "table-i":
        return TABLE_I_FAIL_SCALE * safe_div(c["w_wrong"].to_numpy(dtype=np.float64), c["n"].to_numpy(dtype=np.float64))
    if fail == "joint":
        return safe_div(w_flip, n_cc)
    return np.where(n_cc > 0, np.where(n_flip > 0, safe_div(w_flip, n_flip), 0.0), np.nan)


def rci(cells: pd.DataFrame, weights: Sequence[float] = (0.25, 0.25, 0.25, 0.25), *,
        fail: str = "joint") -> pd.DataFrame:
    """RCI of every cell of :func:`cell_stats`: the cells with ``D_acc``, ``D_cal``, ``D_ent``, ``D_fail``,
    ``n_terms`` (available terms) and ``RCI`` (λ = ``weights`` in :data:`RCI_TERMS` order; terms unclipped)."""
    out = cells.copy()
    A, A0 = out["A"].to_numpy(), out["A_clean"].to_numpy()
    H, H0 = out["H"].to_numpy(), out["H_clean"].to_numpy()
    out["D_acc"] = 1.0 - safe_div(A, np.where(A0 > 0, A0, 0.0))
    out["D_cal"] = np.abs(out["ECE"].to_numpy() - out["ECE_clean"].to_numpy())
    out["D_ent"] = 1.0 - safe_div(H, np.where(H0 > 0, H0, 0.0))
    out["D_fail"] = _fail(out, fail)
    D = out[list(RCI_TERMS)].to_numpy(dtype=np.float64)
    out["n_terms"] = np.isfinite(D).sum(axis=1)
    out["RCI"] = weighted_terms(D, weights)
    out.attrs.update(weights=tuple(weights), fail=fail)
    return out


def rci_notes(cells: pd.DataFrame, rci_cells: pd.DataFrame, weights: Sequence[float]) -> str:
    """Two lines on a run's RCI cells: what the conditional reading of D_fail gives where a flip occurred (1
    with uniform w_f) against the range of ``rci_cells``' own reading, and how many cells miss a term."""
    cond = rci(cells, weights, fail="conditional")
    flipped = cond.n_flip > 0
    r = rci_cells
    return (f"D_fail, conditional reading with uniform w_f: {cond.loc[flipped, 'D_fail'].eq(1).mean():.0%} of the "
            f"{int(flipped.sum())} cells with a flip give exactly 1; {r.attrs.get('fail', 'joint')} reading: "
            f"{r.loc[flipped, 'D_fail'].min():.2f}–{r.loc[flipped, 'D_fail'].max():.2f}\n"
            f"cells with an undefined term: {int((r.n_terms < 4).sum())} of {len(r)} "
            f"(no confidences: {int(r.D_cal.isna().sum())}; A_clean = 0: {int(r.D_acc.isna().sum())}; "
            f"H_clean = 0: {int(r.D_ent.isna().sum())}); negative D_acc: {int((r.D_acc < 0).sum())}")


# ----------------------------------------------------------------------------- T-RCI


class TRCIResult(NamedTuple):
    """T-RCI at three levels: per state (``term``), per direction (``T_RCI``), per unit (Table I columns)."""

    states: pd.DataFrame
    directions: pd.DataFrame
    units: pd.DataFrame


def trci_states(cells: pd.DataFrame, traversals: Mapping[str, str], *, fail: str = "joint",
                eps: float = EPSILON) -> pd.DataFrame:
    """The five T-RCI terms of every traversal state (§II-D2), clipped at 0 as the paper writes them.

    ``traversals`` maps a direction label (``"TD"``, ``"topdown"``, ...) to its perturbation name; the
    order given is the order of directions (ties of :func:`trci`'s worst direction go to the first). Columns:
    the unit's, ``direction`` (categorical), ``level``, ``s`` (the share removed: ``param``), ``A``,
    ``A_clean``, ``A_prev``, ``H``, ``H_clean``, and :data:`TRCI_TERMS`.
    """
    if not traversals:
        raise ValueError("traversals must map at least one direction to a perturbation name")
    if not (isinstance(eps, float | int) and eps > 0):
        raise ValueError(f"eps must be > 0 (seed 001: a numerical stabilisation constant), got {eps!r}")
    unit = tuple(cells.attrs.get("unit", ()))
    names = list(traversals.values())
    if len(set(names)) != len(names):
        raise ValueError(f"traversals names a perturbation twice: {dict(traversals)}")
    by_name = {v: k for k, v in traversals.items()}
    c = cells[cells["perturbation"].astype(str).isin(names)].copy()
    c["direction"] = pd.Categorical(c["perturbation"].astype(str).map(by_name), categories=list(traversals))
    c = c.sort_values([*unit, "direction", "level"], kind="stable").reset_index(drop=True)
    s = c["param"].to_numpy(dtype=np.float64)
    if len(s) and (~np.isfinite(s) | (s < 0) | (s > 1)).any():
        raise ValueError("traversal rows need their share removed in [0, 1] in the param column (D_spatial = s_k)")
    g, _ = group_codes(c, (*unit, "direction"))
    A, A0 = c["A"].to_numpy(), c["A_clean"].to_numpy()
    H, H0 = c["H"].to_numpy(), c["H_clean"].to_numpy()
    first = np.r_[True, g[1:] != g[:-1]] if len(g) else np.zeros(0, bool)
    A_prev = np.where(first, A0, np.r_[np.nan, A[:-1]])
    with np.errstate(invalid="ignore"):
        c["D_acc"] = np.maximum(0.0, safe_div(A0 - A, np.where(A0 > 0, A0, 0.0)))
        c["D_ent"] = np.maximum(0.0, safe_div(H0 - H, np.where(H0 > 0, H0, 0.0)))
        c["D_fail"] = _fail(c, "joint" if fail == "table-i" else fail)
        c["D_spatial"] = s
        c["D_prog"] = np.maximum(0.0, (A_prev - A) / (A_prev + eps))
    c["s"], c["A_prev"] = s, A_prev
    cols = [*unit, "direction", "perturbation", "level", "s", "n", "A", "A_clean", "A_prev", "H", "H_clean",
            "n_cc", "n_flip", *TRCI_TERMS]
    out = c[cols]
    out.attrs.update(unit=unit, fail=fail, eps=eps, traversals=dict(traversals))
    return out


def _weights_by(keys: pd.Series, weights, what: str) -> np.ndarray:
    """Per-row weights from ``None`` (uniform), a mapping key -> weight, or a list in sorted-key order."""
    if weights is None:
        return np.ones(len(keys))
    uniq = list(keys.cat.categories) if isinstance(keys.dtype, pd.CategoricalDtype) else sorted(keys.unique())
    mapping = dict(weights) if isinstance(weights, Mapping) else dict(zip(uniq, weights, strict=False))
    if not isinstance(weights, Mapping) and len(weights) != len(uniq):
        raise ValueError(f"{what} needs one weight per {what[:-1]} {uniq}, got {list(weights)}")
    vals = np.array([float(mapping.get(k, np.nan)) for k in keys])
    if not np.isfinite(vals).all() or (vals < 0).any():
        raise ValueError(f"{what} must give a finite weight >= 0 to every one of {uniq}, got {weights!r}")
    return vals


def trci(states: pd.DataFrame, alphas: Sequence[float] = (0.2, 0.2, 0.2, 0.2, 0.2), gammas=None,
         betas=None) -> TRCIResult:
    """T-RCI per state, direction and unit (§II-F) from :func:`trci_states`.

    ``alphas`` weigh :data:`TRCI_TERMS`; ``gammas`` the states (``None`` uniform, a mapping level -> γ or a
    list in level order), ``betas`` the directions (``None`` uniform, a mapping direction -> β or a list in
    direction order); each is renormalised over what is present. ``units`` holds ``A_T``, ``T_mu``,
    ``T_max`` (largest per-state term), ``W_D`` and ``W_T``.
    """
    unit = tuple(states.attrs.get("unit", ()))
    st = states.copy()
    st["term"] = weighted_terms(st[list(TRCI_TERMS)].to_numpy(dtype=np.float64), alphas)
    gam = _weights_by(st["level"], gammas, "gammas")
    ok = np.isfinite(st["term"].to_numpy())
    g, dirs = group_codes(st, (*unit, "direction"))
    num = np.bincount(g, weights=np.where(ok, st["term"].to_numpy(), 0.0) * gam, minlength=len(dirs))
    den = np.bincount(g, weights=ok * gam, minlength=len(dirs))
    dirs["T_RCI"] = safe_div(num, den)
    dirs["n_states"] = np.bincount(g, weights=ok, minlength=len(dirs)).astype(np.int64)
    u, units = group_codes(dirs, unit)
    bet = _weights_by(dirs["direction"], betas, "betas")
    T = dirs["T_RCI"].to_numpy()
    okd = np.isfinite(T)
    units["T_mu"] = safe_div(np.bincount(u, weights=np.where(okd, T, 0.0) * bet, minlength=len(units)),
                             np.bincount(u, weights=okd * bet, minlength=len(units)))
    worst = (pd.DataFrame({"u": u, "T": np.where(okd, T, -np.inf), "i": np.arange(len(T))})
             .sort_values(["u", "T", "i"], ascending=[True, False, True], kind="stable").drop_duplicates("u"))
    units["W_D"] = pd.Categorical(dirs["direction"].to_numpy()[worst["i"].to_numpy()],
                                  categories=dirs["direction"].cat.categories)
    units["W_T"] = np.where(np.isfinite(worst["T"].to_numpy()), worst["T"].to_numpy(), np.nan)
    su, _ = group_codes(st, unit)
    tmax = np.full(len(units), -np.inf)
    np.maximum.at(tmax, su, np.where(ok, st["term"].to_numpy(), -np.inf))
    units["T_max"] = np.where(np.isfinite(tmax), tmax, np.nan)
    units["A_T"] = safe_div(np.bincount(su, weights=st["A"].to_numpy(), minlength=len(units)),
                            np.bincount(su, minlength=len(units)))
    for f in (st, dirs, units):
        f.attrs.update(unit=unit, alphas=tuple(alphas))
    return TRCIResult(st, dirs, units)


def spatial_offset(states: pd.DataFrame, alphas: Sequence[float] = (0.2, 0.2, 0.2, 0.2, 0.2),
                   gammas=None) -> pd.DataFrame:
    """What :math:`\\mathcal D_{spatial}` adds to each direction's T-RCI: :math:`\\alpha_4 \\sum_k \\gamma_k s_k`
    (renormalised α and γ, as :func:`trci` weighs them when every term is available), per unit × direction."""
    unit = tuple(states.attrs.get("unit", ()))
    a = np.asarray(alphas, dtype=np.float64)
    st = states[[*unit, "direction", "level", "s"]].copy()
    st["gamma"] = _weights_by(st["level"], gammas, "gammas")
    st["gs"] = st["gamma"] * st["s"]
    out = st.groupby([*unit, "direction"], observed=True, sort=True)[["gs", "gamma"]].sum().reset_index()
    out["offset"] = a[3] / a.sum() * out["gs"] / out["gamma"]
    return out[[*unit, "direction", "offset"]]


# ----------------------------------------------------------------------------- Table I


def table_i(rci_cells: pd.DataFrame, trci_result: TRCIResult, ladders: Sequence[str]) -> pd.DataFrame:
    """Seed 001's Table I per unit: :data:`TABLE_I_COLUMNS` (see the module docstring), with ``n_ladder``.

    ``rci_cells`` is :func:`rci`'s frame; ``ladders`` the escalation perturbations whose conditions
    ``A_CR``, ``RCI_mu`` and ``RCI_max`` average (the paper's 16: four ladders × four levels).
    """
    unit = tuple(rci_cells.attrs.get("unit", ()))
    lad = rci_cells[rci_cells["perturbation"].astype(str).isin(list(ladders))]
    if lad.empty:
        raise ValueError(f"no RCI cell of the ladders {list(ladders)}")
    g = lad.groupby(list(unit), observed=True, sort=True)
    t = pd.DataFrame({"A_CL": g["n_cc"].sum() / g["n"].sum(), "A_CR": g["A"].mean(), "RCI_mu": g["RCI"].mean(),
                      "RCI_max": g["RCI"].max(), "n_ladder": g.size()}).reset_index()
    tr = trci_result.units[[*unit, "A_T", "T_mu", "T_max", "W_D", "W_T"]]
    out = t.merge(tr, on=list(unit), how="outer") if unit else pd.concat([t, tr.reset_index(drop=True)], axis=1)
    out = out[[*unit, *TABLE_I_COLUMNS, "n_ladder"]]
    out.attrs["unit"] = unit
    return out


def pareto_front(accuracy, index) -> np.ndarray:
    """Which points are on the Pareto frontier of Fig. 3: no other point has accuracy ``>=`` and index
    ``<=`` with one of them strict (high accuracy and low RCI or T-RCI are both better). NaN points never are."""
    a, r = np.asarray(accuracy, dtype=np.float64), np.asarray(index, dtype=np.float64)
    ok = np.isfinite(a) & np.isfinite(r)
    ge, le = a[None, :] >= a[:, None], r[None, :] <= r[:, None]
    strict = (a[None, :] > a[:, None]) | (r[None, :] < r[:, None])
    dominated = (ge & le & strict & ok[None, :]).any(axis=1)
    return ok & ~dominated
