r"""Seed 003's read-outs per level: the signals of every question, calibration, transmittance, ImageNet-C in metres.

Inputs are the predictions table (:data:`vlmrobust.schema.PRED_COLUMNS`) and
the item table of :func:`vlmrobust.synth.visibility.scene_items`, whose ``meta``
names each question's scene, abstain variant and chance. Each question gives
one **signal** (:data:`vlmrobust.analysis.visibility.blind_spot.SIGNALS`):

* questions **without** an abstain option, scored by the model's own method:
  ``accuracy`` (``correct``) and ``internal`` confidence, the chosen option's
  probability: ``token_prob`` (its answer token's probability over the whole
  vocabulary, seed 003's "internal (token-probability) confidence", abstract;
  the default) or ``confidence`` (renormalised over the options, so chance is
  exactly 1/K);
* the same questions scored with the confidence request (method ``verbal``):
  ``verbal`` = ``verbal_conf`` (unparsed answers have none; the parse rate is
  reported beside it);
* questions with the main abstain wording: ``abstain`` = ``abstained``; with
  "I don't know": ``abstain2``.

An **arm** maps perturbation names to one visibility axis (e.g.
``{"fog_physical+box": "fog", "fog_physical_ext+box": "fog"}``); the clean
condition is level 0 of every arm (``V = inf``).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from ...schema import CLEAN
from ...stats.calibration import ece, error_auroc, reliability

__all__ = ["INTERNAL", "signal_rows", "signals_long", "condition_summary", "verbal_wordings_table",
           "calibration_by_level",
           "pooled_reliability", "object_transmittance", "accuracy_vs_transmittance", "measured_fog_gain",
           "visibility_for_gain", "imagenet_fog_visibility", "interp_log_v"]

#: The two internal confidences of the predictions table (seed 003's is the token probability).
INTERNAL = ("token_prob", "confidence")
_VARIANT_SIGNAL = {"unclear": "abstain", "dont_know": "abstain2"}


def _meta(items: pd.DataFrame) -> pd.DataFrame:
    meta = pd.DataFrame([json.loads(m) for m in items["meta"]], index=items["item_id"].to_numpy())
    missing = [c for c in ("scene", "abstain", "chance") if c not in meta.columns]
    if missing:
        raise ValueError(f"item meta lacks {missing}: items must come from vlmrobust.synth.visibility.scene_items")
    keep = [c for c in ("scene", "abstain", "chance", "question", "target_distance_m") if c in meta.columns]
    return meta[keep]


def signal_rows(pred: pd.DataFrame, items: pd.DataFrame, *, internal: str = "token_prob",
                method: str | None = None) -> pd.DataFrame:
    """One row per (prediction, signal) with ``signal``, ``value``, the condition and the question's scene.

    ``method`` names the non-verbal scoring method to read (default: the only
    one of each model, task and abstain variant; several is an error). Columns: ``model, task,
    perturbation, level, param, item_id, scene, abstain, chance, signal, value,
    correct, target_distance_m``.
    """
    if internal not in INTERNAL:
        raise ValueError(f"internal must be one of {INTERNAL}, got {internal!r}")
    meta = _meta(items)
    p = pred.join(meta, on="item_id", how="inner")
    if len(p) < len(pred):
        raise ValueError(f"{len(pred) - len(p)} predictions name items that are not in the item table")
    verbal = p["method"] == "verbal"
    plain = p[~verbal]
    if method is not None:
        plain = plain[plain["method"] == method]
    else:
        many = plain.groupby(["model", "task", "abstain"])["method"].nunique()
        if (many > 1).any():
            raise ValueError(f"{list(many[many > 1].index)[:3]} have several scoring methods; name one (method=)")
    parts = []
    none = plain[plain["abstain"] == "none"]
    parts.append(none.assign(signal="accuracy", value=none["correct"].astype(np.float64)))
    parts.append(none.assign(signal="internal", value=none[internal].astype(np.float64)))
    for variant, sig in _VARIANT_SIGNAL.items():
        g = plain[plain["abstain"] == variant]
        parts.append(g.assign(signal=sig, value=g["abstained"].astype(np.float64)))
    vb = p[verbal & (p["abstain"] == "none")]
    parts.append(vb.assign(signal="verbal", value=vb["verbal_conf"].astype(np.float64)))
    cols = ["model", "task", "perturbation", "level", "param", "item_id", "scene", "abstain", "chance", "signal",
            "value", "correct"] + (["target_distance_m"] if "target_distance_m" in p.columns else [])
    return pd.concat(parts, ignore_index=True)[cols]


def signals_long(pred: pd.DataFrame, items: pd.DataFrame, arms: Mapping[str, str], **kw) -> pd.DataFrame:
    """The long table of :func:`vlmrobust.analysis.visibility.blind_spot.signal_cube`: signals by (model, task, arm,
    V, scene).

    Rows of perturbations in ``arms`` get their arm and ``V = param`` (metres);
    the clean rows are copied into every arm with ``V = inf``; other conditions
    are left out. ``kw`` goes to :func:`signal_rows`.
    """
    rows = signal_rows(pred, items, **kw)
    parts = []
    for arm in dict.fromkeys(arms.values()):
        names = [n for n, a in arms.items() if a == arm]
        sub = rows[rows["perturbation"].isin(names) | (rows["perturbation"] == CLEAN)]
        v = np.where(sub["perturbation"] == CLEAN, np.inf, sub["param"].to_numpy(np.float64))
        parts.append(sub.assign(arm=arm, V=v))
    out = pd.concat(parts, ignore_index=True) if parts else rows.iloc[:0].assign(arm="", V=np.nan)
    return out[["model", "task", "arm", "V", "scene", "signal", "value", "chance", "correct"]
               + (["target_distance_m"] if "target_distance_m" in out.columns else [])]


def condition_summary(pred: pd.DataFrame, items: pd.DataFrame, **kw) -> pd.DataFrame:
    """Every signal's mean per (model, task, perturbation, level, param), with the verbal parse rate and n.

    ``verbal_parse`` is the share of ``verbal`` rows whose confidence parsed (NaN
    when the condition has none); ``n_questions`` counts the questions without an
    abstain option (scored plainly or with the confidence request). Seed 003
    Tables IV, VIII and IX–X are read from it.
    """
    rows = signal_rows(pred, items, **kw)
    rows["param"] = rows["param"].fillna(-1.0)  # the clean condition's NaN parameter as a key (restored below)
    keys = ["model", "task", "perturbation", "level", "param"]
    means = rows.pivot_table(index=keys, columns="signal", values="value", aggfunc="mean", dropna=False)
    means = means.reindex(columns=["accuracy", "internal", "verbal", "abstain", "abstain2"])
    vb = rows[rows["signal"] == "verbal"]
    parse = vb.assign(ok=vb["value"].notna()).groupby(keys)["ok"].mean().rename("verbal_parse")
    n = rows[rows["abstain"] == "none"].groupby(keys)["item_id"].nunique().rename("n_questions")
    out = means.join(parse).join(n).reset_index()
    out.columns.name = None
    out["param"] = out["param"].where(out["param"] >= 0)
    return out.dropna(subset=["n_questions"]).reset_index(drop=True)


def verbal_wordings_table(by_wording: Mapping[str, pd.DataFrame], accuracy: pd.DataFrame) -> pd.DataFrame:
    """Seed 003 Table VI: mean verbalized confidence per condition under each wording, beside the accuracy.

    ``by_wording`` maps a wording name (``v1``, ``v2``, ...) to the ``verbal``
    predictions on the same items and conditions; ``accuracy`` is
    :func:`condition_summary` of the main run on those items. One row per
    (model, perturbation, level, param) with a mean column per wording, its parse
    rate (``parse_<wording>``) and ``accuracy``.
    """
    keys = ["model", "perturbation", "level", "param"]
    parts = []
    for name, pred in by_wording.items():
        g = pred.assign(parsed=pred["verbal_conf"].notna()).groupby(keys, dropna=False)
        parts.append(g.agg(**{name: ("verbal_conf", "mean"), f"parse_{name}": ("parsed", "mean")}))
    out = pd.concat(parts, axis=1).reset_index()
    acc = accuracy.groupby(keys, dropna=False)["accuracy"].mean().reset_index()
    return out.merge(acc, how="left", on=keys).sort_values(["model", "perturbation", "level"]).reset_index(drop=True)


def calibration_by_level(long: pd.DataFrame, n_bins: int = 10) -> pd.DataFrame:
    """ECE (``n_bins`` equal-width bins) and error-detection AUROC of each confidence at each level.

    ``long`` is :func:`signals_long` (with ``correct``). For ``internal`` the
    correctness is the question's own; for ``verbal`` the correctness of the
    answer scored on the same prompt (the verbal rows'). Returns one row per
    (model, task, arm, V, signal) with ``n``, ``confidence``, ``accuracy``,
    ``ece`` and ``auroc`` (NaN when every answer is right or every one wrong).
    """
    sub = long[long["signal"].isin(["internal", "verbal"])]
    rows = []
    for key, g in sub.groupby(["model", "task", "arm", "V", "signal"], sort=False):
        ok = g["value"].notna()
        conf, corr = g.loc[ok, "value"].to_numpy(np.float64), g.loc[ok, "correct"].astype(bool).to_numpy()
        rows.append({**dict(zip(["model", "task", "arm", "V", "signal"], key, strict=True)), "n": int(ok.sum()),
                     "confidence": float(conf.mean()) if conf.size else np.nan,
                     "accuracy": float(corr.mean()) if corr.size else np.nan,
                     "ece": ece(conf, corr, n_bins) if conf.size else np.nan,
                     "auroc": error_auroc(conf, corr) if conf.size else np.nan})
    return pd.DataFrame(rows)


def pooled_reliability(long: pd.DataFrame, *, task: str = "t2", max_v: float = 15.625, signal: str = "internal",
                       n_bins: int = 10) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Seed 003 Fig. 5: the reliability table of a confidence on ``task``, murky levels pooled against clean.

    ``murky`` pools every arm's levels with ``V <= max_v`` (fog and water);
    ``clean`` is the clean condition (counted once). Returns ``(bins, summary)``:
    the :func:`~vlmrobust.stats.calibration.reliability` rows per (model,
    pool), and per (model, pool) ``n``, ``confidence``, ``accuracy`` and ``ece``.
    """
    sub = long[(long["task"] == task) & (long["signal"] == signal) & long["value"].notna()]
    first_arm = sub["arm"].iloc[0] if len(sub) else None
    pools = {"clean": sub[np.isinf(sub["V"]) & (sub["arm"] == first_arm)], "murky": sub[sub["V"] <= max_v]}
    bins, summ = [], []
    for model in dict.fromkeys(sub["model"]):
        for pool, g in pools.items():
            g = g[g["model"] == model]
            conf, corr = g["value"].to_numpy(np.float64), g["correct"].astype(bool).to_numpy()
            if not conf.size:
                continue
            bins.append(reliability(conf, corr, n_bins).assign(model=model, pool=pool))
            summ.append({"model": model, "pool": pool, "n": int(conf.size), "confidence": float(conf.mean()),
                         "accuracy": float(corr.mean()), "ece": ece(conf, corr, n_bins)})
    return (pd.concat(bins, ignore_index=True) if bins else pd.DataFrame()), pd.DataFrame(summ)


# ----------------------------------------------------------------------------- the boxed object's transmittance


def object_transmittance(name: str, level: int, distances_m: Sequence[float]) -> np.ndarray:
    """The linear transmittance of each distance under perturbation ``name`` at ``level``, **measured**.

    Eq. 1 of seed 003 is affine in the linear radiance with slope ``t``, so a
    white and a black image at one ray distance, passed through
    :func:`vlmrobust.corrupt.apply`, give ``t_c = lin(white') - lin(black')`` per
    channel. The probe runs at 13 distances ``V 2^k`` (``k = -6..6``, ``V`` the
    level's visibility); for each channel the distance where ``t_c`` is nearest
    0.5 gives its extinction ``beta_c = -ln(t_c) / d`` (8-bit rounding matters
    least there), and ``t = mean_c exp(-beta_c d)`` (Beer–Lambert per channel; the
    channel mean is a stated choice). It follows whatever the arm's physical model
    is; fog gives ``exp(-3.912 d / V)``.
    """
    from ... import corrupt
    from ...corrupt.physical import srgb_to_linear

    d = np.asarray(distances_m, dtype=np.float64).reshape(-1)
    v = float(corrupt.info(name).param(level))
    probe = v * 2.0 ** np.arange(-6, 7)
    depth = np.broadcast_to(np.repeat(probe, 3)[None, :], (32, 3 * probe.size)).astype(np.float32).copy()
    lin = []
    for value in (255, 0):
        img = np.full(depth.shape + (3,), value, dtype=np.uint8)
        lin.append(srgb_to_linear(corrupt.apply(img, name, level, depth=depth)[0, ::3] / 255.0))
    t = np.clip(lin[0] - lin[1], 1e-6, 1.0)  # (13 distances, 3 channels)
    best = np.argmin(np.abs(t - 0.5), axis=0)
    beta = -np.log(t[best, np.arange(3)]) / probe[best]
    return np.exp(-d[:, None] * beta[None, :]).mean(axis=1)


def accuracy_vs_transmittance(long: pd.DataFrame, arms: Mapping[str, str], levels: Mapping[str, Mapping],
                              edges: Sequence[float] = (0, 1e-3, 0.01, 0.03, 0.1, 0.2, 0.35, 0.5, 0.7, 0.85,
                                                        1.0001)) -> pd.DataFrame:
    """Accuracy against the boxed object's own transmittance, binned (every arm and level pooled per arm).

    ``long`` is :func:`signals_long` with ``target_distance_m``; ``levels`` maps
    each perturbation of ``arms`` to ``{V: level}``. Rows per (model, task, arm,
    bin): ``t_lo``, ``t_hi``, ``t_mean``, ``n``, ``accuracy``. Clean rows are left
    out (t = 1 by definition).
    """
    acc = long[(long["signal"] == "accuracy") & np.isfinite(long["V"])].copy()
    acc["t"] = np.nan
    for name, arm in arms.items():
        for v, level in levels.get(name, {}).items():
            sel = (acc["arm"] == arm) & np.isclose(acc["V"], v)
            if sel.any():
                dist = acc.loc[sel, "target_distance_m"].to_numpy(np.float64)
                uniq, inv = np.unique(dist, return_inverse=True)
                acc.loc[sel, "t"] = object_transmittance(name, int(level), uniq)[inv]
    acc = acc[acc["t"].notna()]
    e = np.asarray(edges, dtype=np.float64)
    acc["bin"] = np.clip(np.searchsorted(e, acc["t"].to_numpy(), side="right") - 1, 0, len(e) - 2)
    out = acc.groupby(["model", "task", "arm", "bin"], as_index=False).agg(
        t_mean=("t", "mean"), n=("value", "size"), accuracy=("value", "mean"))
    out["t_lo"], out["t_hi"] = e[out["bin"]], e[out["bin"] + 1]
    return out[["model", "task", "arm", "t_lo", "t_hi", "t_mean", "n", "accuracy"]]


# ----------------------------------------------------------------------------- ImageNet-C fog on the metre axis


def measured_fog_gain(image: np.ndarray, depth: np.ndarray, severities: Sequence[int] = (1, 2, 3, 4, 5), *,
                      seed: int = 0, key: str = "") -> np.ndarray:
    """The contrast gain of ImageNet-C fog at each severity, **measured on the image** (seed 003 Table VII).

    Gain = the least-squares slope of corrupted on clean intensity differences
    over the finite-depth pixels (all channels): the image and a reference with
    the same maximum and no contrast (uniform grey at the image's mean, one pixel
    at the image's maximum, left out) get the same haze draw (same ``seed`` and
    ``key``), so the haze cancels in the difference and the slope is the gain
    ``m/(m+c)`` *as realised*, clipping and 8-bit truncation included; the
    analytic value is the same for severities 3 and 4 (same ``c``), the measured
    one is not.
    """
    from ... import corrupt

    x = np.asarray(image, dtype=np.uint8)
    fin = np.isfinite(np.asarray(depth, dtype=np.float64))
    peak = np.unravel_index(int(np.argmax(x.max(axis=-1))), fin.shape)
    fin = fin.copy()
    fin[peak] = False
    if not fin.any():
        return np.full(len(severities), np.nan)
    grey = int(round(float(x[fin].mean())))
    ref = np.full_like(x, grey)
    ref[peak] = x[peak]
    dx = (x.astype(np.float64) - ref)[fin]
    denom = float((dx * dx).sum())
    out = []
    for s in severities:
        dy = (corrupt.apply(x, "fog", int(s), seed=seed, key=key).astype(np.float64)
              - corrupt.apply(ref, "fog", int(s), seed=seed, key=key))[fin]
        out.append(float((dx * dy).sum() / denom) if denom > 0 else np.nan)
    return np.asarray(out)


def visibility_for_gain(depth: np.ndarray, gains, convention: str = "2%") -> np.ndarray:
    """The fog visibility whose retained contrast gain (mean ``t`` over finite depths) equals each gain.

    Solves :math:`\\overline{e^{-K d/V}} = g` by bisection in log V over
    ``[1e-3, 1e7]`` m (the gain grows with V); ``0`` below the range, ``inf``
    above it, NaN without finite depth (the definition of
    :func:`vlmrobust.corrupt.physical.fog_equivalent_visibility`).
    """
    from ...corrupt.physical import KOSCHMIEDER

    k = KOSCHMIEDER[convention]
    d = np.asarray(depth, dtype=np.float64)
    d = d[np.isfinite(d)]
    g = np.asarray(gains, dtype=np.float64)
    if d.size == 0:
        return np.full(g.shape, np.nan)
    kd = k * d

    def mean_t(log_v):
        return np.exp(-kd[None, :] / np.exp(log_v)[:, None]).mean(axis=1)

    lo, hi = np.full(g.size, math.log(1e-3)), np.full(g.size, math.log(1e7))
    flat = g.reshape(-1)
    for _ in range(80):
        mid = (lo + hi) / 2
        up = mean_t(mid) < flat
        lo, hi = np.where(up, mid, lo), np.where(up, hi, mid)
    v = np.exp((lo + hi) / 2)
    g_lo, g_hi = mean_t(np.array([math.log(1e-3)]))[0], mean_t(np.array([math.log(1e7)]))[0]
    v = np.where(flat <= g_lo, 0.0, np.where(flat >= g_hi, np.inf, v))
    return np.where(np.isnan(flat), np.nan, v).reshape(g.shape)


def imagenet_fog_visibility(images: Sequence[np.ndarray], depths: Sequence[np.ndarray], keys: Sequence[str], *,
                            severities: Sequence[int] = (1, 2, 3, 4, 5), seed: int = 0,
                            convention: str = "2%") -> tuple[pd.DataFrame, pd.DataFrame]:
    """Seed 003 Table VII: per image the measured gain and V_eq; per severity their summary over images.

    Returns ``(per_image, summary)``. ``summary`` has ``mean_gain`` (measured),
    ``analytic_gain`` (mean of ``m/(m+c)``), ``median_v_m``, ``iqr_lo_m``,
    ``iqr_hi_m``, ``p10_m``, ``p90_m``, ``p90_over_p10`` and ``n_images``
    (images with a finite, non-zero V_eq).
    """
    from ...corrupt.weather import fog_gain

    if not (len(images) == len(depths) == len(keys)) or not len(images):
        raise ValueError("images, depths and keys must be non-empty and of equal length")
    rows = []
    for i, (img, dep, key) in enumerate(zip(images, depths, keys, strict=True)):
        gains = measured_fog_gain(img, dep, severities, seed=seed, key=str(key))
        veq = visibility_for_gain(dep, gains, convention)
        rows += [{"image": i, "key": str(key), "severity": int(s), "gain": float(g), "analytic_gain":
                  fog_gain(np.asarray(img, np.uint8), int(s)), "v_eq_m": float(v)}
                 for s, g, v in zip(severities, gains, veq, strict=True)]
    per = pd.DataFrame(rows)
    summ = []
    for s, g in per.groupby("severity", sort=True):
        v = g["v_eq_m"].to_numpy()
        v = v[np.isfinite(v) & (v > 0)]
        q = np.quantile(v, [0.1, 0.25, 0.5, 0.75, 0.9]) if v.size else np.full(5, np.nan)
        summ.append({"severity": int(s), "mean_gain": float(g["gain"].mean()),
                     "analytic_gain": float(g["analytic_gain"].mean()), "median_v_m": q[2], "iqr_lo_m": q[1],
                     "iqr_hi_m": q[3], "p10_m": q[0], "p90_m": q[4],
                     "p90_over_p10": q[4] / q[0] if q[0] > 0 else np.nan, "n_images": int(v.size)})
    return per, pd.DataFrame(summ)


def interp_log_v(v_levels, values, v) -> np.ndarray:
    """A curve's value at visibility ``v``, interpolated linearly in log V (clamped at the ends)."""
    x = np.log(np.asarray(v_levels, dtype=np.float64))
    y = np.asarray(values, dtype=np.float64)
    order = np.argsort(x)
    return np.interp(np.log(np.asarray(v, dtype=np.float64)), x[order], y[order])
