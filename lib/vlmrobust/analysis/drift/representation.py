"""Representation drift against control drift (seed 002 §3.3, §4.3-4.4, App. A.9).

Computed from the probe rows of a probe sweep (:data:`vlmrobust.probes.shard.PROBE_COLUMNS`):
``drift`` rows hold the distance of a perturbed state to the same item's clean
state, ``control`` rows the distance between the clean states of two unrelated
items, ``floor`` rows the distance of a clean state to itself computed in another
batch composition. Distances are the cosine distance ``1 - cos`` (``metric="cos"``)
and the L2 distance (``"l2"``) of the final post-norm state (the paper's read-out),
or per pre-norm layer (``cos_layers``, ``l2_layers``).

* :func:`invariance_table` - Table 3: mean cosine similarity and L2 to the base per
  perturbation and regime;
* :func:`drift_vs_control` - Tables 4 and 7: drift as a percentage of the mean
  control distance (mean +- std) and **Cohen's d**
  ``d = (mu_pert - mu_ctrl) / sqrt((sigma_pert^2 + sigma_ctrl^2) / 2)``, the
  unweighted pooled SD that the paper's Table 7 implies (its six d values follow
  from its moments with this formula; :func:`cohens_d_moments`); sample standard
  deviations (``ddof = 1``);
* :func:`layer_curves` - drift and control per pre-norm layer (the paper reads
  only the last layer);
* :func:`noise_floor` - the floor beside the smallest mean drift of each regime;
* :func:`bootstrap_means` - item-level bootstrap intervals of mean drift (:func:`with_interval` adds
  them to Table 4);
* :func:`invariance_cells` - Table 3 as the notebook shows it: per model, ``cos / L2`` cells;
* :func:`with_similarity` - Table 5's similarity columns: each model's Table 3 union per regime.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from ...stats.bootstrap import percentile_interval, replicate_sums, resample_counts
from .instability import UNION_SIX, label

__all__ = ["cohens_d", "cohens_d_moments", "invariance_table", "control_values", "drift_vs_control",
           "layer_curves", "noise_floor", "bootstrap_means", "with_flips", "invariance_cells", "with_similarity",
           "with_interval", "TABLE4_COLUMNS", "TABLE7_COLUMNS"]

#: The columns the notebook shows of Table 4 (drift as % of control, Cohen's d, interval) and Table 7 (L2).
TABLE4_COLUMNS = ["model", "perturbation", "pct_mean", "pct_sd", "d", "mu_pert", "lo", "hi", "mu_ctrl", "n_pert",
                  "n_ctrl"]
TABLE7_COLUMNS = ["model", "perturbation", "mu_pert", "sd_pert", "mu_ctrl", "sd_ctrl", "d"]

_METRICS = ("cos", "l2")


def _check_metric(metric: str) -> None:
    if metric not in _METRICS:
        raise ValueError(f"metric must be one of {_METRICS}, got {metric!r}")


def cohens_d_moments(mu_p: float, sd_p: float, mu_c: float, sd_c: float) -> float:
    """Cohen's d with the unweighted pooled SD: ``(mu_p - mu_c) / sqrt((sd_p^2 + sd_c^2) / 2)``."""
    pooled = np.sqrt((sd_p ** 2 + sd_c ** 2) / 2.0)
    return float((mu_p - mu_c) / pooled) if pooled > 0 else float("nan")


def cohens_d(pert: Sequence[float], ctrl: Sequence[float], ddof: int = 1) -> float:
    """Cohen's d of a perturbation-drift sample against a control sample (unweighted pooled SD, ``ddof``)."""
    p = np.asarray(pert, dtype=np.float64)
    c = np.asarray(ctrl, dtype=np.float64)
    p, c = p[np.isfinite(p)], c[np.isfinite(c)]
    if p.size <= ddof or c.size <= ddof:
        return float("nan")
    return cohens_d_moments(p.mean(), p.std(ddof=ddof), c.mean(), c.std(ddof=ddof))


def _groups(df: pd.DataFrame, by: Sequence[str]):
    by = list(by)
    if not by:
        yield {}, df
        return
    for key, g in df.groupby(by, sort=False):
        key = key if isinstance(key, tuple) else (key,)
        yield dict(zip(by, key, strict=True)), g


def _with_union(df: pd.DataFrame, union: Sequence[str]):
    yield from df.groupby("perturbation", sort=False)
    gu = df[df["perturbation"].isin(list(union))]
    if len(gu):
        yield "any", gu


def invariance_table(probes: pd.DataFrame, regimes: Sequence[str], by: Sequence[str] = ("model",),
                     union: Sequence[str] = UNION_SIX) -> pd.DataFrame:
    """Table 3: per group, perturbation (and ``"any"``) and regime, the mean cosine similarity ``1 - cos``
    distance and the mean L2 distance of the perturbed state to the base state, and the instance count."""
    d = probes[(probes["kind"] == "drift") & probes["regime"].isin(list(regimes))]
    rows = []
    for base, g in _groups(d, by):
        for pert, gp in _with_union(g, union):
            for regime, gr in gp.groupby("regime", sort=False):
                rows.append({**base, "perturbation": pert, "regime": regime, "cos_sim": 1 - float(gr["cos"].mean()),
                             "l2": float(gr["l2"].mean()), "n": int(gr["cos"].notna().sum())})
    return pd.DataFrame(rows, columns=list(by) + ["perturbation", "regime", "cos_sim", "l2", "n"])


def with_similarity(table: pd.DataFrame, probes: pd.DataFrame, regimes: Sequence[str]) -> pd.DataFrame:
    """``table`` (one row per ``model``, e.g. Table 5) with each model's mean cosine similarity to the clean state
    over Table 3's union, one column ``cos <regime>`` per regime of ``regimes`` (NaN where a model has none)."""
    inv = invariance_table(probes, regimes).query("perturbation == 'any'")
    cos = inv.pivot_table(index="model", columns="regime", values="cos_sim").rename(columns=lambda r: f"cos {r}")
    return table.merge(cos.reset_index(), on="model", how="left")


def control_values(probes: pd.DataFrame, regime: str, metric: str = "cos", **where) -> np.ndarray:
    """The control distribution of one regime: distances between unrelated clean items (``where``: e.g. model)."""
    _check_metric(metric)
    c = probes[(probes["kind"] == "control") & (probes["regime"] == regime)]
    for k, v in where.items():
        c = c[c[k] == v]
    x = c[metric].to_numpy(dtype=np.float64)
    return x[np.isfinite(x)]


def drift_vs_control(probes: pd.DataFrame, regime: str = "ans_mcq_free", metric: str = "cos",
                     by: Sequence[str] = ("model",), union: Sequence[str] = UNION_SIX) -> pd.DataFrame:
    """Tables 4 (``metric="cos"``) and 7 (``"l2"``): perturbation drift against control drift for one regime.

    Per group and perturbation (and ``"any"``): ``mu_pert``, ``sd_pert``,
    ``mu_ctrl``, ``sd_ctrl``, drift as a percentage of the mean control distance
    (``pct_mean`` +- ``pct_sd``, i.e. ``100 * d / mu_ctrl`` per instance), Cohen's
    ``d`` (unweighted pooled SD) and the sample sizes. The control distribution is
    the group's (model's) own.
    """
    _check_metric(metric)
    sel = probes[probes["regime"] == regime]
    rows = []
    for base, g in _groups(sel[sel["kind"] == "drift"], by):
        ctrl = control_values(sel, regime, metric, **base)
        mu_c = float(ctrl.mean()) if ctrl.size else float("nan")
        sd_c = float(ctrl.std(ddof=1)) if ctrl.size > 1 else float("nan")
        for pert, gp in _with_union(g, union):
            x = gp[metric].to_numpy(dtype=np.float64)
            x = x[np.isfinite(x)]
            mu_p = float(x.mean()) if x.size else float("nan")
            sd_p = float(x.std(ddof=1)) if x.size > 1 else float("nan")
            rows.append({**base, "perturbation": pert, "mu_pert": mu_p, "sd_pert": sd_p, "mu_ctrl": mu_c,
                         "sd_ctrl": sd_c, "pct_mean": 100 * mu_p / mu_c if mu_c else np.nan,
                         "pct_sd": 100 * sd_p / mu_c if mu_c else np.nan, "d": cohens_d(x, ctrl),
                         "n_pert": int(x.size), "n_ctrl": int(ctrl.size)})
    cols = list(by) + ["perturbation", "mu_pert", "sd_pert", "mu_ctrl", "sd_ctrl", "pct_mean", "pct_sd", "d",
                       "n_pert", "n_ctrl"]
    return pd.DataFrame(rows, columns=cols)


def layer_curves(probes: pd.DataFrame, metric: str = "cos", by: Sequence[str] = ("model", "regime"),
                 union: Sequence[str] = UNION_SIX) -> pd.DataFrame:
    """Per-layer drift on the pre-norm residual stream: mean distance per layer ``0..L`` for each perturbation
    (and ``"any"``), the mean control distance per layer, and their ratio (long format: one row per layer)."""
    _check_metric(metric)
    col = f"{metric}_layers"
    sel = probes[probes["kind"].isin(["drift", "control"]) & probes[col].notna()]
    rows = []
    for base, g in _groups(sel, by):
        ctrl = g[g["kind"] == "control"]
        c = np.nanmean(np.vstack(ctrl[col].to_numpy()), axis=0) if len(ctrl) else None
        for pert, gp in _with_union(g[g["kind"] == "drift"], union):
            m = np.nanmean(np.vstack(gp[col].to_numpy()), axis=0)
            for layer, v in enumerate(m):
                cv = float(c[layer]) if c is not None else float("nan")
                rows.append({**base, "perturbation": pert, "layer": layer, "drift": float(v), "control": cv,
                             "ratio": float(v) / cv if cv else float("nan")})
    return pd.DataFrame(rows, columns=list(by) + ["perturbation", "layer", "drift", "control", "ratio"])


def noise_floor(probes: pd.DataFrame, metric: str = "cos", by: Sequence[str] = ("model", "regime")) -> pd.DataFrame:
    """The noise floor (the same clean inputs in another batch composition) beside the drift of each regime:
    the floor's mean and max, the smallest mean drift over the perturbations, and smallest drift / floor max."""
    _check_metric(metric)
    rows = []
    vec = probes[probes["regime"] != "vision_grid"]
    for base, g in _groups(vec, by):
        fl = g.loc[g["kind"] == "floor", metric].to_numpy(dtype=np.float64)
        dr = g[g["kind"] == "drift"].groupby("perturbation")[metric].mean()
        smallest = float(dr.min()) if len(dr) else float("nan")
        fmax = float(np.nanmax(fl)) if fl.size else float("nan")
        rows.append({**base, "floor_mean": float(np.nanmean(fl)) if fl.size else float("nan"), "floor_max": fmax,
                     "smallest_drift": smallest, "smallest_perturbation": str(dr.idxmin()) if len(dr) else "",
                     "ratio": smallest / fmax if fmax > 0 else float("inf")})
    return pd.DataFrame(rows)


def bootstrap_means(df: pd.DataFrame, value: str, by: Sequence[str], rng: np.random.Generator, *,
                    n_boot: int = 1000, ci: float = 0.95, unit: str = "item_id") -> pd.DataFrame:
    """Mean of ``value`` per group with a percentile interval from resampling ``unit`` (items) with replacement."""
    rows = []
    for base, g in _groups(df[np.isfinite(df[value].to_numpy(dtype=np.float64))], by):
        per = g.groupby(unit)[value].agg(["sum", "count"])
        W = resample_counts(len(per), n_boot, rng)
        reps = replicate_sums(W, per.to_numpy(dtype=np.float64))
        with np.errstate(invalid="ignore", divide="ignore"):
            means = reps[:, 0] / reps[:, 1]
        lo, hi = percentile_interval(means[:, None], ci)
        rows.append({**base, "mean": float(per["sum"].sum() / per["count"].sum()), "lo": float(lo[0]),
                     "hi": float(hi[0]), "n": int(per["count"].sum())})
    return pd.DataFrame(rows, columns=list(by) + ["mean", "lo", "hi", "n"])


def with_interval(table: pd.DataFrame, probes: pd.DataFrame, regime: str, rng: np.random.Generator, *,
                  n_boot: int = 1000, metric: str = "cos") -> pd.DataFrame:
    """``table`` (Table 4: one row per model and perturbation) with ``lo``, ``hi``: the :func:`bootstrap_means`
    interval of the mean ``metric`` drift of ``regime`` (``"any"`` rows, which pool perturbations, get NaN)."""
    d = probes[(probes["kind"] == "drift") & (probes["regime"] == regime)]
    boot = bootstrap_means(d, metric, ["model", "perturbation"], rng, n_boot=n_boot)
    return table.merge(boot[["model", "perturbation", "lo", "hi"]], on=["model", "perturbation"], how="left")


def with_flips(probes: pd.DataFrame, pairs: pd.DataFrame) -> pd.DataFrame:
    """Drift rows with the instance's ``flip`` (scoring prediction changed) from
    :func:`~vlmrobust.analysis.drift.instability.flip_pairs`."""
    key = ["model", "item_id", "perturbation", "level"]
    d = probes[probes["kind"] == "drift"]
    return d.merge(pairs[key + ["flip", "base_correct", "correct"]].drop_duplicates(key), on=key, how="left")


def invariance_cells(t3: pd.DataFrame, regimes: Sequence[str]) -> dict[str, pd.DataFrame]:
    """Table 3 for reading: per model (in ``t3``'s order), a perturbation-label x regime table of
    ``"cos_sim / l2"`` strings (3 and 2 decimals), the columns the regimes of ``regimes`` present for it.

    ``t3``: :func:`invariance_table`.
    """
    out = {}
    for m, g in t3.groupby("model", sort=False):
        cell = g.assign(v=[f"{c:.3f} / {v:.2f}" for c, v in zip(g.cos_sim, g.l2, strict=True)],
                        perturbation=g.perturbation.map(label))
        out[m] = cell.pivot_table(index="perturbation", columns="regime", values="v", aggfunc="first",
                                  sort=False)[[r for r in regimes if r in set(g.regime)]]
    return out
