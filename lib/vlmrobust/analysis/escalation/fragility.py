r"""Fragility curves, their regimes, and latent instability before a flip (seed 001, §IV-C, §V, §VI).

**Curves** (Figs. 5 and 6): accuracy of a unit under one perturbation at the clean level 0 and at each
severity (:func:`fragility_curves`, from :func:`~vlmrobust.analysis.escalation.indices.cell_stats`).

**Regimes** (§IV-C, S1: "stable degradation, progressive degradation, severe traversal sensitivity"). The
paper names them from the curves' shapes without a rule; the rule here looks at the accuracy kept at the
last level, the retention :math:`\rho = A_{last} / A_{clean}`: **stable** when :math:`\rho \ge`
``stable_min`` (0.8 by default: at most a fifth of the clean accuracy lost), **severe** when
:math:`\rho <` ``severe_below`` (0.5: more than half lost), **progressive** in between; a curve with
:math:`A_{clean} = 0` has no retention (``undefined``).

**Non-monotone curves** (S3: "temporary accuracy improvements at intermediate crop severities"): a curve
is non-monotone when accuracy rises from one level to the next (clean to level 1 included) by more than
``tol``.

**Latent instability** (§VI: "robustness degradation can emerge prior to accuracy degradation"). The
paper's per-item T-RCI is not defined by its equations (its terms are dataset-level rates), so the signal
here is the item's own option distribution: :math:`D_{conf}(s_k) = 1 - p_y(s_k) / p_y(s_0)` with
:math:`p_y` the probability of the correct option (unclipped: negative when the model grows surer), and
the probability margin :math:`m = p_y - \max_{j \ne y} p_j` (positive exactly while the answer is right,
ties aside). For a clean-correct item along one perturbation's levels, a **warning** is the first level at
which :math:`D_{conf} \ge` ``threshold`` while the answer is still right; it comes *before the flip* when
the answer later turns wrong (:func:`early_warnings`); :func:`warning_examples` picks the items of Fig. 7.

**Tables behind the figures.** :func:`fill_comparison` is the accuracy on ground-plane scenes clean, under
the sky-only control and under each traversal fill (the fill is left open by §II-D2); :func:`evidence_lost_share`
is the ground-truth curve of Fig. 5, the share of items whose evidence a traversal state removed or cut.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from ...corrupt import escalation as esc
from ...schema import CLEAN
from ...score.probs import probs_matrix
from ...stats.grouped import as_cols

__all__ = ["REGIMES", "fragility_curves", "curve_regimes", "latent_instability", "early_warnings",
           "warning_summary", "warning_examples", "fill_comparison", "evidence_lost_share", "regime_counts"]

REGIMES = ("stable", "progressive", "severe", "undefined")


def fragility_curves(cells: pd.DataFrame, perturbations: Sequence[str] | None = None) -> pd.DataFrame:
    """Accuracy per unit × perturbation × level, level 0 being the clean accuracy of the same items.

    Columns: the unit's, ``perturbation``, ``level``, ``param`` (NaN at level 0), ``accuracy``, ``n``.
    """
    unit = list(cells.attrs.get("unit", ()))
    c = cells if perturbations is None else cells[cells["perturbation"].astype(str).isin(list(perturbations))]
    c = c.sort_values([*unit, "perturbation", "level"], kind="stable")
    cur = c[[*unit, "perturbation", "level", "param", "A", "n"]].rename(columns={"A": "accuracy"})
    first = c.drop_duplicates([*unit, "perturbation"])  # lowest level: its clean partners give level 0
    zero = first[[*unit, "perturbation"]].assign(level=0, param=np.nan, accuracy=first["A_clean"].to_numpy(),
                                                  n=first["n"].to_numpy())
    out = pd.concat([zero, cur], ignore_index=True).sort_values([*unit, "perturbation", "level"], kind="stable")
    out["perturbation"] = out["perturbation"].astype(str)
    out = out.reset_index(drop=True)
    out.attrs["unit"] = tuple(unit)
    return out


def curve_regimes(curves: pd.DataFrame, *, stable_min: float = 0.8, severe_below: float = 0.5,
                  tol: float = 0.0) -> pd.DataFrame:
    """The regime and monotonicity of every curve of :func:`fragility_curves` (rules in the module docstring).

    Columns: the unit's, ``perturbation``, ``A_clean``, ``A_last``, ``retention``, ``regime`` (categorical
    over :data:`REGIMES`), ``n_rises`` (level-to-level rises above ``tol``), ``max_rise``, ``non_monotone``.
    """
    if not 0 <= severe_below <= stable_min:
        raise ValueError(f"need 0 <= severe_below <= stable_min, got {severe_below} and {stable_min}")
    if tol < 0:
        raise ValueError(f"tol must be >= 0, got {tol}")
    unit = list(curves.attrs.get("unit", ()))
    c = curves.sort_values([*unit, "perturbation", "level"], kind="stable")
    keys = [*unit, "perturbation"]
    g = c.groupby(keys, observed=True, sort=True)
    rise = g["accuracy"].diff()
    c = c.assign(rise=rise.fillna(-np.inf))
    g = c.groupby(keys, observed=True, sort=True)
    out = pd.DataFrame({"A_clean": g["accuracy"].first(), "A_last": g["accuracy"].last(),
                        "n_rises": g["rise"].agg(lambda r: int((r > tol).sum())),
                        "max_rise": g["rise"].max()}).reset_index()
    a0 = out["A_clean"].to_numpy()
    ret = np.where(a0 > 0, out["A_last"].to_numpy() / np.where(a0 > 0, a0, 1.0), np.nan)
    out["retention"] = ret
    reg = np.where(np.isnan(ret), "undefined", np.where(ret >= stable_min, "stable",
                                                       np.where(ret < severe_below, "severe", "progressive")))
    out["regime"] = pd.Categorical(reg, categories=list(REGIMES))
    out["max_rise"] = out["max_rise"].where(np.isfinite(out["max_rise"]), np.nan)
    out["non_monotone"] = out["n_rises"] > 0
    out = out[[*keys, "A_clean", "A_last", "retention", "regime", "n_rises", "max_rise", "non_monotone"]]
    out.attrs.update(unit=tuple(unit), stable_min=stable_min, severe_below=severe_below, tol=tol)
    return out


def latent_instability(pred: pd.DataFrame, perturbations: Sequence[str], *,
                       keys: Sequence[str] = ("model", "method", "item_id")) -> pd.DataFrame:
    """Per row of ``perturbations`` (and its clean row): ``p_correct``, ``p_correct_clean``, ``D_conf``,
    ``margin`` and ``correct`` (module docstring); clean rows come first per item with level 0."""
    keys = [k for k in as_cols(keys, "keys") if k in pred.columns]
    pert = pred["perturbation"].astype(str)
    sub = pred[pert.isin([CLEAN, *perturbations])].reset_index(drop=True)
    if sub.empty:
        raise ValueError(f"pred holds no rows of {CLEAN!r} or {list(perturbations)}")
    K = sub["K"].to_numpy(dtype=np.int64)
    y = sub["answer_idx"].to_numpy(dtype=np.int64)
    P = probs_matrix(sub["probs"], K)
    i = np.arange(len(sub))
    py = P[i, y]
    other = P.copy()
    other[i, y] = -np.inf
    other[np.arange(P.shape[1])[None, :] >= K[:, None]] = -np.inf
    out = sub[[*keys, *[c for c in ("task", "category") if c in sub.columns], "perturbation", "level"]].copy()
    out["perturbation"] = out["perturbation"].astype(str)
    out["correct"] = sub["pred_idx"].to_numpy() == y
    out["p_correct"] = py
    out["margin"] = py - other.max(axis=1)
    clean = out[out["perturbation"] == CLEAN].set_index(keys)["p_correct"]
    if clean.index.has_duplicates:
        raise ValueError(f"pred has several clean rows for some {keys}")
    p0 = clean.reindex(pd.MultiIndex.from_frame(out[keys]) if len(keys) > 1 else out[keys[0]]).to_numpy()
    out["p_correct_clean"] = p0
    with np.errstate(divide="ignore", invalid="ignore"):
        out["D_conf"] = np.where(p0 > 0, 1.0 - py / p0, np.nan)
    return out


def early_warnings(latent: pd.DataFrame, *, threshold: float = 0.25,
                   keys: Sequence[str] = ("model", "method", "item_id")) -> pd.DataFrame:
    """One row per clean-correct item × perturbation: ``flip_level`` (first level answered wrong; NaN
    when none), ``warn_level`` (first level with ``D_conf >= threshold`` while still right), ``lead``
    (``flip_level - warn_level``), ``warned_before_flip``, ``margin_before_flip`` (the margin at the level
    before the flip) and ``false_alarm`` (warned, never flipped)."""
    if not threshold > 0:
        raise ValueError(f"threshold must be > 0, got {threshold}")
    keys = [k for k in as_cols(keys, "keys") if k in latent.columns]
    traj = [*keys, "perturbation"]
    cols = [*traj, "level", "correct", "D_conf", "margin"]
    clean = latent.loc[(latent["perturbation"] == CLEAN) & latent["correct"], cols]
    lv = latent.loc[latent["perturbation"] != CLEAN, cols].merge(clean[keys], on=keys)
    perts = pd.DataFrame({"perturbation": lv["perturbation"].unique()})
    lv = pd.concat([clean.drop(columns="perturbation").merge(perts, how="cross")[cols], lv], ignore_index=True)
    lv = lv.sort_values([*traj, "level"], kind="stable")
    g = lv.groupby(traj, observed=True, sort=True)
    res = pd.DataFrame({"n_levels": g.size() - 1,
                        "flip_level": lv["level"].where(~lv["correct"]).groupby([lv[k] for k in traj],
                                                                                 observed=True).min()})
    res = res[res["n_levels"] > 0].reset_index()
    lv = lv.merge(res[[*traj, "flip_level"]], on=traj)
    before = lv[lv["level"] < lv["flip_level"].fillna(np.inf)]  # every level before the flip is answered right
    warn = before[before["D_conf"] >= threshold].groupby(traj, observed=True)["level"].min().rename("warn_level")
    mbf = lv[lv["level"] < lv["flip_level"]].groupby(traj, observed=True)["margin"].last()
    res = res.merge(warn.reset_index(), on=traj, how="left").merge(
        mbf.rename("margin_before_flip").reset_index(), on=traj, how="left")
    res["lead"] = res["flip_level"] - res["warn_level"]
    res["warned_before_flip"] = res["flip_level"].notna() & res["warn_level"].notna()
    res["false_alarm"] = res["flip_level"].isna() & res["warn_level"].notna()
    res.attrs["threshold"] = threshold
    return res


def warning_summary(warnings: pd.DataFrame, by: str | Sequence[str] = ("model",)) -> pd.DataFrame:
    """Per ``by``: trajectories, flips, flips warned before (count and share), mean lead, false-alarm share."""
    by = list(as_cols(by, "by"))
    g = warnings.groupby(by, observed=True, sort=True)
    out = pd.DataFrame({
        "n_traj": g.size(),
        "n_flip": g["flip_level"].count(),
        "n_warned_before_flip": g["warned_before_flip"].sum(),
        "mean_lead": g["lead"].mean(),
        "n_false_alarm": g["false_alarm"].sum(),
    }).reset_index()
    out["share_warned"] = np.where(out["n_flip"] > 0, out["n_warned_before_flip"] / out["n_flip"].where(
        out["n_flip"] > 0, 1), np.nan)
    never = out["n_traj"] - out["n_flip"]
    out["false_alarm_share"] = np.where(never > 0, out["n_false_alarm"] / never.where(never > 0, 1), np.nan)
    return out


def warning_examples(warnings: pd.DataFrame, items: pd.DataFrame, n: int = 6) -> pd.DataFrame:
    """Up to ``n`` rows of :func:`early_warnings` that warned before the flip, for Fig. 7: longest lead
    first (ties by model, then item), at most one per task family and one per model."""
    warned = warnings[warnings.warned_before_flip].merge(items[["item_id", "task"]], on="item_id")
    picked, seen_tasks = [], set()
    for _, w in warned.sort_values(["lead", "model", "item_id"], ascending=[False, True, True]).iterrows():
        if w.task not in seen_tasks and w.model not in {p.model for p in picked}:
            picked.append(w)
            seen_tasks.add(w.task)
    return pd.DataFrame(picked).head(n)


def fill_comparison(pred: pd.DataFrame, fills: Sequence[str], models: Sequence[str], *,
                    control: bool = True) -> pd.DataFrame:
    """Accuracy per model of the rows of ``pred`` (the notebook passes the ground-plane scenes) clean and,
    per fill of ``fills``, under the sky-only control (when ``control``) and under each traversal direction,
    one row per condition at each level present, named ``"<label> <share>"`` (``"sky band 0.25"``,
    ``"TD 0.2"``). Columns ``fill``, ``condition``, one per model and their ``mean``; the ``clean`` row
    comes first (fill ``"—"``). No row at all: an empty frame."""
    fill_rows = []
    for f in fills:
        names = {"sky band": esc.control_name(f)} if control else {}
        names.update({f"{esc.DIRECTION_LABELS[d]}": esc.traversal_name(d, f) for d in esc.DIRECTIONS})
        for label, name in names.items():
            sub = pred[pred.perturbation == name]
            for lv, g in sub.groupby("level"):
                share = esc.SKY_BAND_SHARES[lv - 1] if label == "sky band" else esc.TRAVERSAL_SHARES[lv - 1]
                fill_rows.append({"fill": f, "condition": f"{label} {share:g}", **g.groupby("model").correct.mean()})
    fill_table = pd.DataFrame(fill_rows)
    if len(fill_table):
        clean_acc = pred[pred.perturbation == "clean"].groupby("model").correct.mean()
        fill_table = pd.concat([pd.DataFrame([{"fill": "—", "condition": "clean", **clean_acc}]), fill_table],
                               ignore_index=True)
        fill_table["mean"] = fill_table[list(models)].mean(axis=1)
    return fill_table


def evidence_lost_share(evidence: pd.DataFrame, perturbations: Sequence[str]) -> pd.Series:
    """Per (perturbation, level) of ``perturbations``: the share of the items with synthetic geometry
    (evidence not ``n/a``; :func:`vlmrobust.corrupt.evidence.evidence_table`) whose evidence was removed or
    cut (Fig. 5's ground-truth curve)."""
    ev_known = evidence[evidence.perturbation.isin(perturbations) & (evidence.evidence != "n/a")]
    return (ev_known.assign(hit=lambda e: e.evidence.isin(["removed", "partial"]))
            .groupby(["perturbation", "level"]).hit.mean())


def regime_counts(regimes: pd.DataFrame) -> pd.DataFrame:
    """Per ``kind`` (a column the caller adds: ladder or traversal) × perturbation of :func:`curve_regimes`:
    how many curves fall in each regime, and how many are ``non_monotone``."""
    return pd.crosstab([regimes.kind, regimes.perturbation], regimes.regime).assign(
        non_monotone=regimes.groupby(["kind", "perturbation"]).non_monotone.sum())
