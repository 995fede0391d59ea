"""Seed 003's claims checked on a run (notebook 06's observations table).

Each check returns a :class:`~vlmrobust.stats.observations.Check`; the rule
applied and its thresholds are in the check's ``check`` text and docstring.
Inputs are the run's tables: the blind-spot table
(:func:`vlmrobust.analysis.visibility.blind_spot.blind_spot_table`), the signal cube
(:func:`vlmrobust.analysis.visibility.blind_spot.signal_cube`), Table VII
(:func:`vlmrobust.analysis.visibility.readouts.imagenet_fog_visibility`) and the
controls (one row per model and task with ``chance``, ``blank_accuracy``,
``shuffled_accuracy``, ``blank_internal``, ``n``).
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd

from ...stats.observations import Check, observations_table
from .blind_spot import (
    AT_FIRST,
    CROSSED,
    NEVER,
    SignalCube,
    crossing_interval,
    first_crossing,
    format_v,
    level_means,
)

__all__ = ["obs_fall_within_decade", "obs_water_harsher", "obs_confident_stay_confident", "obs_abstain_tracks",
           "obs_imagenet_tens_of_metres", "obs_controls_at_chance", "obs_aware_control", "visibility_observations"]


def _fmt(x: float) -> str:
    return "n/a" if not np.isfinite(x) else f"{x:.3g}"


def obs_fall_within_decade(cube: SignalCube, ratio: float = 10.0, min_gap: float = 0.1) -> Check:
    """Accuracy goes from near its clean value to chance within a factor ``ratio`` in V (Fig. 3, abstract).

    Per cell whose clean accuracy is at least ``min_gap`` above chance:
    ``V_90`` and ``V_10``, the first crossings of chance + 90 % and + 10 % of the
    way to the clean accuracy (linear in log V, as V_acc), each an interval as in
    :func:`~vlmrobust.analysis.visibility.blind_spot.crossing_interval`; the ratio
    ``V_90 / V_10`` is then an interval too. Holds when every decided cell's ratio
    is at most ``ratio``; a cell whose ratio interval lies above ``ratio`` fails it;
    a cell whose fall lies wholly before the first level (both crossings there) or
    is otherwise undecided is left out.
    """
    means = level_means(cube)
    acc, clean, ch = means[:, 0, 1:], means[:, 0, 0], cube.chance
    ok = clean - ch >= min_gap
    v90, s90 = first_crossing(acc, cube.levels_m, ch + 0.9 * (clean - ch))
    v10, s10 = first_crossing(acc, cube.levels_m, ch + 0.1 * (clean - ch))
    lo90, hi90 = crossing_interval(v90, s90)
    lo10, hi10 = crossing_interval(v10, s10)
    parts, verdict = [], []
    for c, cell in enumerate(cube.cells.itertuples(index=False)):
        if not ok[c]:
            continue
        with np.errstate(divide="ignore", invalid="ignore"):
            r_lo = lo90[c] / hi10[c]  # the smallest ratio the two intervals allow
        name = f"{cell.model} {cell.task} {cell.arm}"
        if s90[c] == CROSSED and s10[c] == CROSSED:
            parts.append(f"{name}: {r_lo:.1f}x")
            verdict.append(bool(r_lo <= ratio))
        elif np.isfinite(r_lo) and r_lo > ratio:
            parts.append(f"{name}: > {r_lo:.1f}x" + (" (never within 10 % of chance)" if s10[c] == NEVER else ""))
            verdict.append(False)
        else:
            parts.append(f"{name}: undecided (" + ("the fall lies before the first level" if s10[c] == AT_FIRST
                                                   else f"{r_lo:.1f}x or more") + ")")
    return Check(
        "accuracy falls from near its clean value to chance within about a factor of 10 in V",
        "t2 accuracy falls to chance within a factor of about ten in V; V_acc 12.1-15.9 m in fog, 20.5-38.6 m "
        "under water (Fig. 3, Table V)",
        f"V_90 / V_10 <= {ratio:g} in every decided cell whose clean accuracy is >= {min_gap} above chance (V_90, "
        "V_10: first crossings of chance + 90 % / 10 % of the way to clean)",
        "; ".join(parts) or "no cell with clean accuracy above chance", all(verdict) if verdict else None)


def _interval(v: float, kind: str) -> tuple[float, float]:
    return {"=": (v, v), "≥": (v, np.inf), "<": (0.0, v)}.get(kind, (np.nan, np.nan))


def obs_water_harsher(spots: pd.DataFrame) -> Check:
    """V_acc under water is above V_acc in fog for every model and task where the order is decided (Table V).

    Each V_acc is an interval (a value, ``>= V_1``, ``< V_L``); water is harsher
    when its interval lies above fog's, milder when below; overlapping bounds
    leave the pair undecided.
    """
    first = spots.drop_duplicates(["model", "task", "arm"]).set_index(["model", "task", "arm"])
    parts, verdict = [], []
    for (model, task), _ in first.groupby(level=[0, 1], sort=False):
        if (model, task, "fog") not in first.index or (model, task, "water") not in first.index:
            continue
        f, w = first.loc[(model, task, "fog")], first.loc[(model, task, "water")]
        (f_lo, f_hi), (w_lo, w_hi) = _interval(f.v_acc, f.v_acc_kind), _interval(w.v_acc, w.v_acc_kind)
        if np.isnan(f_lo) or np.isnan(w_lo):
            continue
        parts.append(f"{model} {task}: water {format_v(w.v_acc, w.v_acc_kind)} vs fog {format_v(f.v_acc, f.v_acc_kind)} m")
        verdict.append(True if w_lo > f_hi else False if w_hi < f_lo else None)
    decided = [v for v in verdict if v is not None]
    return Check(
        "water is harsher than fog at equal V (V_acc larger under water)",
        "V_acc 20.5-38.6 m under water vs 12.1-15.9 m in fog (abstract, Table V)",
        "V_acc(water) > V_acc(fog) for every model and task where both are defined and ordered",
        "; ".join(parts) or "no model with V_acc defined in both arms", all(decided) if decided else None)


def obs_confident_stay_confident(cube: SignalCube, spots: pd.DataFrame, *, task: str = "t2", arm: str = "fog",
                                 confident: float = 0.8, w_min: float = 0.79) -> Check:
    """Models confident on clean images keep their confidence at the murkiest level: W_internal >= 0.79.

    Confident: clean mean internal confidence >= ``confident`` (stated). Holds
    when each confident model's W of the internal confidence (``task``, ``arm``)
    is at least ``w_min`` (a value or a lower bound).
    """
    means = level_means(cube)
    cells = cube.cells.reset_index(drop=True)
    sel = cells[(cells["task"] == task) & (cells["arm"] == arm)]
    parts, verdict = [], []
    for c, cell in sel.iterrows():
        if means[c, 1, 0] < confident:
            continue
        r = spots[(spots.model == cell.model) & (spots.task == task) & (spots.arm == arm)
                  & (spots.signal == "internal")].iloc[0]
        parts.append(f"{cell.model}: at {cube.levels_m[-1]:.3g} m accuracy {means[c, 0, -1]:.2f}, internal "
                     f"{means[c, 1, -1]:.2f}, W_internal {r.w_kind if r.w_kind != '=' else ''} {_fmt(r.w)}")
        if r.w_kind in ("=", "≥"):
            verdict.append(bool(r.w >= w_min))
    return Check(
        "confident models keep their confidence high where accuracy is at chance",
        "at V = 1.95 m in fog accuracy is at chance but internal confidence 0.68-0.84, verbalized 0.61-1.00; "
        "W >= 0.79 (abstract, Tables IV, V)",
        f"every model with clean internal confidence >= {confident} has W_internal >= {w_min} on {task} {arm}",
        "; ".join(parts) or "no confident model", all(verdict) if verdict else None)


def obs_abstain_tracks(spots: pd.DataFrame, *, task: str = "t2", arm: str = "fog", w_max: float = 0.25) -> Check:
    """Abstaining with a reason follows accuracy (|W| <= 0.25), "I don't know" lags (larger W) for some model.

    Over the models whose main-wording abstain W is interpretable: holds when
    each has a value with ``|W| <= w_max`` and at least one has a larger W with
    "I don't know" (value or lower bound).
    """
    sub = spots[(spots.task == task) & (spots.arm == arm)]
    main = sub[(sub.signal == "abstain") & (sub.w_kind != "n/a")].set_index("model")
    alt = sub[sub.signal == "abstain2"].set_index("model")
    if main.empty:
        return Check("abstaining with a reason tracks accuracy, 'I don't know' lags",
                     "W_abstain -0.21 to -0.06 in fog; W_abstain2 up to 0.18 for one model (Table V)",
                     f"|W_abstain| <= {w_max} for every model; W_abstain2 > W_abstain for one", "no interpretable "
                     "abstain signal", None)
    parts, tracks, lags = [], [], []
    for model, r in main.iterrows():
        a = alt.loc[model] if model in alt.index else None
        parts.append(f"{model}: W_abstain {r.w_kind if r.w_kind != '=' else ''} {_fmt(r.w)}, W_abstain2 "
                     + (f"{a.w_kind if a.w_kind != '=' else ''} {_fmt(a.w)}" if a is not None else "n/a"))
        tracks.append(r.w_kind == "=" and abs(r.w) <= w_max)
        lags.append(a is not None and a.w_kind in ("=", "≥") and np.isfinite(a.w) and a.w > r.w)
    return Check(
        "abstaining with a reason tracks accuracy, 'I don't know' lags",
        "W_abstain -0.21 to -0.06 in fog (main wording); with 'I don't know' W up to 0.18 for one model (Table V)",
        f"|W_abstain| <= {w_max} (a value) for every model with an interpretable abstain signal on {task} {arm}, "
        "and W_abstain2 > W_abstain for at least one",
        "; ".join(parts), bool(all(tracks) and any(lags)))


def obs_imagenet_tens_of_metres(table7: pd.DataFrame, lo: float = 10.0, hi: float = 200.0) -> Check:
    """Every ImageNet-C fog severity's median equivalent visibility lies in [lo, hi] m ("tens of metres")."""
    med = table7.set_index("severity")["median_v_m"]
    ok = bool(np.all(np.isfinite(med)) and med.between(lo, hi).all()) if len(med) else None
    return Check(
        "ImageNet-C fog severities correspond to tens of metres of visibility",
        "severities 1-5: 110, 82, 67, 65, 55 m median V_eq (Table VII)",
        f"median V_eq of every severity within [{lo:g}, {hi:g}] m",
        ", ".join(f"s{s}: {_fmt(v)} m" for s, v in med.items()) or "no severity measured", ok)


def obs_controls_at_chance(controls: pd.DataFrame, tol: float = 0.1) -> Check:
    """Blank and shuffled images give chance accuracy; the blank image still gets high internal confidence.

    At chance: ``|accuracy - chance| <= max(tol, 2 SE)`` with ``SE =
    sqrt(chance (1 - chance) / n)``. High: blank internal confidence >=
    ``(1 + chance) / 2``, for at least half of the (model, task) rows (seed 003:
    5 of 6 rows).
    """
    if controls.empty:
        return Check("blank and shuffled images give chance accuracy with high blank-image confidence",
                     "blank 0.24-0.26 and shuffled 0.25-0.29 on t2 (chance 0.25); blank int. conf. 0.38-1.00 "
                     "(Table VIII)", "", "no controls in the run", None)
    c = controls.assign(tol=np.maximum(tol, 2 * np.sqrt(controls["chance"] * (1 - controls["chance"])
                                                        / controls["n"].clip(lower=1))))
    at_chance = ((c["blank_accuracy"] - c["chance"]).abs() <= c["tol"]) & \
        ((c["shuffled_accuracy"] - c["chance"]).abs() <= c["tol"])
    high = c["blank_internal"] >= (1 + c["chance"]) / 2
    parts = [f"{r.model} {r.task}: blank {r.blank_accuracy:.2f}, shuffled {r.shuffled_accuracy:.2f} (chance "
             f"{r.chance:.2f}), blank int. conf. {r.blank_internal:.2f}" for r in c.itertuples()]
    return Check(
        "blank and shuffled images give chance accuracy with high blank-image confidence",
        "blank 0.24-0.26, shuffled 0.25-0.29 on t2 (0.50-0.52 on t3); blank internal confidence 0.69-1.00 for "
        "the confident models (Table VIII)",
        f"blank and shuffled accuracy within max({tol}, 2 SE) of chance in every row; blank internal confidence "
        ">= (1 + chance)/2 in at least half of the rows",
        "; ".join(parts), bool(at_chance.all() and high.mean() >= 0.5))


def obs_aware_control(spots: pd.DataFrame, behaviours: Mapping[str, str], *, task: str = "t2", arm: str = "fog",
                      w_max: float = 0.25) -> Check:
    """The positive control: an organism trained to abstain where the object is invisible has |W_abstain| small."""
    aware = [m for m, b in behaviours.items() if b == "aware" and m in set(spots.model)]
    if not aware:
        return Check("an organism aware by construction shows a small blind spot (positive control)",
                     "no such model in the paper; the issue's positive control", f"|W_abstain| <= {w_max} on "
                     f"{task} {arm} for every aware organism", "no aware organism in this run (zoo role 'control', "
                     "behaviour 'aware')", None)
    parts, verdict = [], []
    for m in aware:
        r = spots[(spots.model == m) & (spots.task == task) & (spots.arm == arm) & (spots.signal == "abstain")]
        r = r.iloc[0]
        parts.append(f"{m}: W_abstain {r.w_kind if r.w_kind != '=' else ''} {_fmt(r.w)}")
        verdict.append(r.w_kind == "=" and abs(r.w) <= w_max)
    return Check("an organism aware by construction shows a small blind spot (positive control)",
                 "no such model in the paper; the issue's positive control",
                 f"|W_abstain| <= {w_max} (a value) on {task} {arm} for every aware organism", "; ".join(parts),
                 bool(all(verdict)))


def visibility_observations(cube: SignalCube, spots: pd.DataFrame, table7: pd.DataFrame, controls: pd.DataFrame,
                            behaviours: Mapping[str, str]) -> pd.DataFrame:
    """Seed 003's claims checked on a run (the observations table of notebook 06)."""
    return observations_table([
        obs_fall_within_decade(cube),
        obs_water_harsher(spots),
        obs_confident_stay_confident(cube, spots),
        obs_abstain_tracks(spots),
        obs_imagenet_tens_of_metres(table7),
        obs_controls_at_chance(controls),
        obs_aware_control(spots, behaviours),
    ])
