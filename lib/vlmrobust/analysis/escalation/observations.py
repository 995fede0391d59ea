"""Seed 001's observations that apply to the model organisms, checked on a run's tables (notebook 07).

Each function returns a :class:`~vlmrobust.stats.observations.Check`; ``reproduced`` is ``None`` when
the run holds no data to decide. The thresholds are stated in each check's ``check`` text and are
arguments, so a reader can tighten them.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ...stats.observations import Check

__all__ = ["obs_similar_accuracy_different_index", "obs_clean_not_robust", "obs_direction_dependence",
           "obs_three_regimes", "obs_non_monotone", "obs_weighting_insensitive", "obs_no_spatial_rho",
           "obs_latent_before_flip", "check_bottomup_hurts_more", "accuracy_by_evidence"]


def _label(row: pd.Series, unit: list[str]) -> str:
    return " / ".join(str(row[u]) for u in unit)


def obs_similar_accuracy_different_index(table: pd.DataFrame, unit: list[str], *, acc: str = "A_CR",
                                         index: str = "RCI_mu", acc_tol: float = 0.05,
                                         gap: float = 0.05) -> Check:
    """O6: units with similar accuracy (``|ΔA| <= acc_tol``) can differ in robustness index by ``>= gap``."""
    t = table[[*unit, acc, index]].dropna().reset_index(drop=True)
    a, r = t[acc].to_numpy(), t[index].to_numpy()
    i, j = np.triu_indices(len(t), 1)
    close = np.abs(a[i] - a[j]) <= acc_tol
    diff = np.abs(r[i] - r[j])
    hits = close & (diff >= gap)
    claim = f"6. similar {'traversal ' if acc == 'A_T' else ''}accuracy, different robustness index"
    rule = f"some pair of units with |Δ{acc}| <= {acc_tol:g} has |Δ{index}| >= {gap:g}"
    if not close.any():
        return Check(claim, "model–dataset pairs at similar accuracy are separated along RCI or T-RCI (Fig. 3)",
                     rule, f"no pair of the {len(t)} units has |Δ{acc}| <= {acc_tol:g}", None)
    k = int(np.argmax(np.where(close, diff, -1)))
    measured = (f"{int(hits.sum())} of {int(close.sum())} close pairs; widest: {_label(t.iloc[i[k]], unit)} "
                f"({acc} {a[i[k]]:.3f}, {index} {r[i[k]]:.3f}) vs {_label(t.iloc[j[k]], unit)} "
                f"({acc} {a[j[k]]:.3f}, {index} {r[j[k]]:.3f})")
    return Check(claim, "model–dataset pairs at similar accuracy are separated along RCI or T-RCI (Fig. 3)",
                 rule, measured, bool(hits.any()))


def obs_clean_not_robust(table: pd.DataFrame, model: str = "model", group: str | None = "group") -> Check:
    """O4: within some group, the model with the highest clean accuracy is not the one with the lowest RCI_mu."""
    t = table.dropna(subset=["A_CL", "RCI_mu"])
    groups = [(None, t)] if group is None or group not in t.columns else list(t.groupby(group, observed=True))
    lines, hits = [], 0
    for g, sub in groups:
        if len(sub) < 2:
            continue
        best = sub.loc[sub["A_CL"].idxmax(), model]
        robust = sub.loc[sub["RCI_mu"].idxmin(), model]
        hits += best != robust
        lines.append(f"{g if g is not None else 'all'}: best clean {best}, lowest RCI_mu {robust}")
    return Check("4. clean accuracy does not always translate into corruption robustness",
                 "Claude Opus 4.7 competitive clean yet the highest RCI_mu on ScienceQA-Chemistry (Table I)",
                 "in some group the model with the highest A_CL is not the one with the lowest RCI_mu",
                 "; ".join(lines) or "fewer than two models per group", bool(hits) if lines else None)


def obs_direction_dependence(directions: pd.DataFrame, unit: list[str], *, gap: float = 0.05) -> Check:
    """O9/S4: T-RCI differs across directions: for some unit, max − min over directions >= ``gap``."""
    d = directions.dropna(subset=["T_RCI"])
    g = d.groupby(unit, observed=True)["T_RCI"]
    spread = (g.max() - g.min()).dropna()
    if spread.empty:
        return Check("9. robustness depends on the traversal direction", "", "", "no T-RCI per direction", None)
    worst = d.loc[g.idxmax(), "direction"]
    top = worst.astype(str).value_counts()
    return Check(
        "9. robustness depends on the traversal direction",
        "several models show markedly different T-RCI across directions; RL most fragile on ScienceQA (Table I)",
        f"for some unit, max − min of T-RCI(r) over the four directions >= {gap:g}",
        f"spread {spread.min():.3f}–{spread.max():.3f} (median {spread.median():.3f}); {int((spread >= gap).sum())} "
        f"of {len(spread)} units >= {gap:g}; worst direction counts: "
        + ", ".join(f"{k} {v}" for k, v in top.items()),
        bool((spread >= gap).any()))


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


def obs_non_monotone(regimes: pd.DataFrame) -> Check:
    """S3: some curves are not monotone (accuracy rises at an intermediate level)."""
    n = int(regimes["non_monotone"].sum())
    tol = regimes.attrs.get("tol", 0.0)
    return Check("S3. degradation is not strictly monotonic",
                 "several models gain accuracy at intermediate crop severities before declining (Fig. 5)",
                 f"some curve rises by more than {tol:g} from one level to the next",
                 f"{n} of {len(regimes)} curves non-monotone; largest rise {regimes['max_rise'].max():+.3f}",
                 None if regimes.empty else n > 0)


def _offdiag(rho: pd.DataFrame, drop: tuple[str, ...] = ()) -> np.ndarray:
    r = rho.drop(index=list(drop), columns=list(drop), errors="ignore").to_numpy()
    return r[~np.eye(len(r), dtype=bool)]


def obs_weighting_insensitive(rho_rci: pd.DataFrame, rho_trci: pd.DataFrame, *, lo: float = 0.9) -> Check:
    """§II-F: the weighting schemes rank the units alike (min pairwise Spearman ρ >= ``lo``)."""
    vals = np.concatenate([_offdiag(rho_rci), _offdiag(rho_trci, ("no-spatial",))])
    vals = vals[np.isfinite(vals)]
    if not vals.size:
        return Check("II-F. rankings are insensitive to the weighting", "", "", "too few units to rank", None)
    return Check("II-F. rankings are insensitive to the weighting",
                 "accuracy-, entropy-, failure-heavy and equal weights: pairwise correlations ≈ 0.95–0.99",
                 f"every pairwise Spearman ρ between the four schemes (RCI_mu and T_mu) >= {lo:g}",
                 f"ρ {vals.min():.3f}–{vals.max():.3f} (RCI {_offdiag(rho_rci).min():.3f}, "
                 f"T-RCI {_offdiag(rho_trci, ('no-spatial',)).min():.3f} at the lowest)", bool(vals.min() >= lo))


def obs_no_spatial_rho(rho_trci: pd.DataFrame, residual: float, *, paper: float = 0.95, tol: float = 0.02) -> Check:
    """§II-F: "removing D_spatial ... ρ ∼ 0.95": by the definition the correlation is exactly 1 (affine map)."""
    rho = float(rho_trci.loc["equal", "no-spatial"]) if "no-spatial" in rho_trci.index else float("nan")
    ok = None if not np.isfinite(rho) else bool(abs(rho - paper) <= tol)
    return Check("II-F. removing D_spatial leaves nearly identical trends (ρ ∼ 0.95)",
                 "ρ ∼ 0.95 between T-RCI with and without D_spatial",
                 f"Spearman ρ(T_mu equal, T_mu no-spatial) within {tol:g} of {paper:g}; the definition makes "
                 "it an affine map (T = 4/5 T' + α4 Σγ s), so ρ must be exactly 1",
                 f"ρ = {rho:.6f}; largest affine residual {residual:.1e}: the paper's ≈ 0.95 cannot come from "
                 "its own definition", ok)


def obs_latent_before_flip(summary: pd.DataFrame, threshold: float) -> Check:
    """§VI: instability can show before the prediction flips (a D_conf warning precedes some flips)."""
    n_flip, n_warn = int(summary["n_flip"].sum()), int(summary["n_warned_before_flip"].sum())
    return Check("VI. latent instability precedes the flip",
                 "T-RCI rises 0.00 → 0.15 while the answer is still right, before it flips at RL-0.8 (Fig. 7)",
                 f"some clean-correct item has D_conf >= {threshold:g} at a level before its first wrong answer",
                 f"{n_warn} of {n_flip} flips warned before ({n_warn / n_flip:.0%}); false alarms "
                 f"{int(summary['n_false_alarm'].sum())} of {int((summary['n_traj'] - summary['n_flip']).sum())} "
                 "trajectories that never flip" if n_flip else "no flip", None if not n_flip else n_warn > 0)


def check_bottomup_hurts_more(states: pd.DataFrame, evidence: pd.DataFrame, model: str = "model",
                              td: str = "TD", bu: str = "BU") -> Check:
    """Ground truth: in ground-plane scenes (sky on top), bottom-up removes more evidence than top-down,
    so it should hurt more: per model, the mean accuracy over the states is lower under bottom-up.

    ``states``: :func:`~vlmrobust.analysis.escalation.rci.trci_states` on ground scenes only; ``evidence``:
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
