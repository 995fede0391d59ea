"""The sentence of finding notebook 07 prints under each figure, computed from the tables the figure draws: every
number and every direction word comes from the run."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from ... import corrupt
from ...corrupt import escalation as esc
from .indices import pareto_front

__all__ = ["rungs_finding", "fills_finding", "sky_cost_finding", "table_i_finding", "pareto_finding",
           "accuracy_share_finding", "fragility_finding", "directional_finding", "failure_class_finding",
           "failure_subtypes_finding", "rank_correlation_finding", "latent_finding"]


def _change(image: np.ndarray, other: np.ndarray) -> float:
    """Mean absolute pixel change as a share of the 0-255 range (images of different sizes: NaN)."""
    a, b = np.asarray(image, float), np.asarray(other, float)
    return float(np.abs(a - b).mean() / 255) if a.shape == b.shape else float("nan")


def rungs_finding(image: np.ndarray, rows: Mapping[str, Sequence[tuple[str, np.ndarray]]]) -> str:
    """Which ladder's last rung changes the image most and least (mean |Δ pixel|)."""
    last = pd.Series({k.split("\n")[0]: _change(image, v[-1][1]) for k, v in rows.items() if len(v)}).dropna()
    if not len(last):
        return "No rung has the clean image's size, so no change is measured."
    return (f"At its last rung, {last.idxmax()} changes the pixels most (mean |Δ| {last.max():.0%} of the range) "
            f"and {last.idxmin()} least ({last.min():.0%}).")


def fills_finding(image: np.ndarray, fills: Sequence[str], mean_rgb: Sequence[int] = esc.SYNTH_MEAN_RGB) -> str:
    """How much the top-down traversal at share 0.4 (level 2, as drawn) changes the scene under each fill."""
    def apply(f: str) -> np.ndarray:
        return corrupt.apply(image, esc.traversal_name("topdown", f), 2, **({"rgb": tuple(mean_rgb)} if f == "mean"
                                                                             else {}))

    ch = pd.Series({f: _change(image, apply(f)) for f in fills}).dropna()
    if not len(ch):
        return "No fill keeps the image's size, so no change is measured."
    return (f"At share 0.4 top-down, the {ch.idxmin()} fill changes the pixels least (mean |Δ| "
            f"{ch.min():.0%} of the range) and {ch.idxmax()} most ({ch.max():.0%}).")


def sky_cost_finding(fill_table: pd.DataFrame, models: Sequence[str]) -> str:
    """The mean cost (clean minus control accuracy over models) of each fill's sky band, cheapest and dearest."""
    ctrl = fill_table[fill_table.condition.str.startswith("sky band")]
    clean = fill_table.loc[fill_table.condition == "clean", list(models)].iloc[0]
    cost = (clean - ctrl[list(models)]).mean(axis=1).groupby(ctrl.fill.to_numpy()).mean()
    word = "costs" if cost.min() >= 0 else "gains"
    return (f"Removing only sky, the {cost.idxmin()} fill {word} {abs(cost.min()):.3f} accuracy on average over "
            f"models and band sizes, {cost.idxmax()} costs the most ({cost.max():.3f}): that much is the fill's own "
            "cost, not lost evidence.")


def table_i_finding(paper: pd.DataFrame, c: float, run: pd.DataFrame | None) -> str:
    """How many paper rows and run units lie below the bound c (1 − A_CR)."""
    below_p = int((paper["RCI_mu"] < c * (1 - paper["A_CR"] / 100) - 1e-9).sum())
    text = f"{below_p} of the paper's {len(paper)} rows lie below the bound"
    if run is not None and len(run):
        parts = [f"{int((g.RCI_mu < c * (1 - g.A_CR)).sum())} of {len(g)} units under D_fail {r}"
                 for r, g in run.groupby("reading", sort=False)]
        text += "; of this run's, " + " and ".join(parts)
    return text + "."


def pareto_finding(table1: pd.DataFrame) -> str:
    """The Pareto frontier's points in each panel."""
    parts = []
    for acc, idx, name in [("A_CR", "RCI_mu", "ladders"), ("A_T", "T_mu", "traversals")]:
        t = table1.dropna(subset=[acc, idx])
        f = t[pareto_front(t[acc], t[idx])].sort_values(acc, ascending=False)
        pts = ", ".join(f"{r.model}/{r.group}" for r in f.itertuples())
        parts.append(f"{name}: {len(f)} of {len(t)} points ({pts})")
    return "On the Pareto frontier, " + "; ".join(parts) + "."


def accuracy_share_finding(curves: pd.DataFrame, traversals: Mapping[str, str]) -> str:
    """Mean accuracy over models, clean and at the last state, per direction: the steepest and the mildest."""
    drop = {}
    for d, name in traversals.items():
        c = curves[curves.perturbation == name]
        first, last = c[c.level == c.level.min()].accuracy.mean(), c[c.level == c.level.max()].accuracy.mean()
        drop[d] = (first, last)
    s = pd.Series({d: a - b for d, (a, b) in drop.items()})
    hi, lo = s.idxmax(), s.idxmin()
    word = "falls" if s[hi] > 0 else "rises"
    return (f"Mean accuracy over models {word} most under {hi}, from {drop[hi][0]:.2f} clean to {drop[hi][1]:.2f} at "
            f"the last state, and least under {lo} ({drop[lo][0]:.2f} to {drop[lo][1]:.2f}).")


def fragility_finding(regimes: pd.DataFrame, traversals: Sequence[str]) -> str:
    """Severe curves among ladders and traversals."""
    trav = regimes.perturbation.isin(list(traversals))
    sev_t, sev_l = int((regimes[trav].regime.astype(str) == "severe").sum()), int(
        (regimes[~trav].regime.astype(str) == "severe").sum())
    n_nm = int(regimes.non_monotone.sum())
    more = "more" if sev_t > sev_l else "fewer" if sev_t < sev_l else "as many"
    return (f"{sev_t} of {int(trav.sum())} traversal curves end severe against {sev_l} of {int((~trav).sum())} ladder "
            f"curves ({more} among traversals); {n_nm} curves are non-monotone.")


def directional_finding(directions: pd.DataFrame, panel: str = "all items") -> str:
    """The direction most often worst per model, over all items."""
    d = directions[directions.group == panel].dropna(subset=["T_RCI"])
    if not len(d):
        return f"No direction row in the '{panel}' panel."
    worst = d.loc[d.groupby("model", observed=True).T_RCI.idxmax()]
    top = worst.direction.astype(str).value_counts()
    spread = d.groupby("model", observed=True).T_RCI.agg(lambda x: x.max() - x.min())
    return (f"Over all items, {top.index[0]} is the worst direction for {int(top.iloc[0])} of {len(worst)} models; "
            f"a model's directions differ by at most {spread.max():.3f} in T-RCI(r) (median {spread.median():.3f}).")


def failure_class_finding(class_counts: pd.DataFrame) -> str:
    """The class with the most failures over models, and its share range across models."""
    tot = class_counts.groupby("class", observed=True).n.sum()
    top = str(tot.idxmax())
    sh = class_counts[class_counts["class"].astype(str) == top].share
    return (f"{top} holds the most traversal failures ({tot.max() / tot.sum():.0%} of all), between {sh.min():.0%} "
            f"and {sh.max():.0%} of a model's own.")


def failure_subtypes_finding(subtype_counts: pd.DataFrame) -> str:
    """The commonest subtype, and the share of failures whose evidence was removed or cut rather than misread."""
    s = subtype_counts[subtype_counts.n > 0]
    top = s.loc[s.n.idxmax()]
    gone = s.subtype.astype(str).str.contains("removed|cut|changed")
    return (f"The commonest subtype is '{top.subtype}' ({int(top.n)} failures, {top.n / s.n.sum():.0%}); subtypes "
            f"of removed, cut or changed evidence hold {s[gone].n.sum() / s.n.sum():.0%} of all failures.")


def rank_correlation_finding(rho_rci: pd.DataFrame, rho_trci: pd.DataFrame) -> str:
    """The lowest off-diagonal ρ of each index, and its pair."""
    parts, lows = [], []
    for rho, name in [(rho_rci, "RCI_mu"), (rho_trci, "T_mu")]:
        r = rho.where(~np.eye(len(rho), dtype=bool)).stack().dropna()  # NaN: an index constant over the units
        if len(r):
            (a, b), v = r.idxmin(), float(r.min())
            parts.append(f"{name} at ρ {v:.2f} ({a} vs {b}, {'below' if v < 0.95 else 'at or above'} the paper's 0.95)")
            lows.append(v)
    if not parts:
        return "No pair of weightings has a rank correlation (an index is constant over the units, or too few units)."
    return "The weightings rank the units least alike for " + ", and for ".join(parts) + "."


def latent_finding(examples: pd.DataFrame, shares: Mapping[int, float]) -> str:
    """How far (share removed) the drawn examples' warnings come before their flips."""
    lead = pd.Series([shares[int(w.flip_level)] - shares[int(w.warn_level)] for w in examples.itertuples()])
    return (f"In the {len(examples)} examples the warning comes {lead.min():.1f} to {lead.max():.1f} of the image "
            f"(share removed) before the flip, {lead.mean():.2f} on average.")
