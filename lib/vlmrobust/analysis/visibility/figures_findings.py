"""The sentence of finding printed after each of notebook 06's figures, computed from the tables it draws.

Every number and every direction word ("falls", "rises", "above", "below") is
read from the run's tables, the word chosen from the sign; the notebook prints
the returned string right after the figure. Re-exported by :mod:`.figures`.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from ... import corrupt
from .blind_spot import AWARE_SIGNALS, SIGNALS, SignalCube

__all__ = ["trend", "change", "scene_finding", "signals_finding", "blind_spot_finding", "reliability_finding",
           "abstain_finding", "transmittance_finding", "imagenet_fog_finding"]


def trend(before: float, after: float, *, down: str = "falls", up: str = "rises", same: str = "stays",
          tol: float = 0.005) -> str:
    """The direction word for a change from ``before`` to ``after``: ``down``, ``up`` or ``same`` (within ``tol``)."""
    d = float(after) - float(before)
    return same if abs(d) <= tol or not np.isfinite(d) else (up if d > 0 else down)


def change(before: float, after: float, fmt: str = ".2f", **kw) -> str:
    """``falls from A to B``, ``rises from A to B`` or ``stays at about A (B at the end)``, as :func:`trend` says."""
    word = trend(before, after, **kw)
    if word == kw.get("same", "stays"):
        return f"{word} at about {before:{fmt}} ({after:{fmt}} at the end)"
    return f"{word} from {before:{fmt}} to {after:{fmt}}"


def _names(names: Sequence[str]) -> str:
    return ", ".join(names) if len(names) else "none"


def scene_finding(depth: np.ndarray, t_levels_m: Sequence[float] = (62.5, 7.8125)) -> str:
    """Fig. 2: the mean transmittance of the scene's finite-depth pixels at each of ``t_levels_m``."""
    finite = np.isfinite(depth)
    t = [float(corrupt.transmittance(depth, v)[finite].mean()) for v in t_levels_m]
    steps = " to ".join(f"{x:.3g} at V = {v:.3g} m" for x, v in zip(t, t_levels_m, strict=True))
    ratio = t[0] / t[-1] if t[-1] > 0 else float("inf")
    return (f"In this scene the mean transmittance of the finite-depth pixels {trend(t[0], t[-1], tol=0)} from "
            f"{steps} (a factor {ratio:.3g}): that is the share of the scene's own light left in the fog panels.")


def signals_finding(cube: SignalCube, means: np.ndarray, models: Sequence[str], task: str,
                    abstain_at: float = 0.5) -> str:
    """Figs. 3 and 8: per arm, the models' median accuracy and internal confidence, clean against the murkiest
    level, and the models whose abstain rate reaches ``abstain_at`` there."""
    models = list(models)
    v_min = float(cube.levels_m[-1])
    parts = []
    for arm in dict.fromkeys(cube.cells.arm):
        sel = [c for c in range(len(cube.cells)) if cube.cells.task.iloc[c] == task and cube.cells.arm.iloc[c] == arm
               and cube.cells.model.iloc[c] in models]
        if not sel:
            continue
        chance = float(cube.chance[sel[0]])
        a0, a1 = np.nanmedian(means[sel, 0, 0]), np.nanmedian(means[sel, 0, -1])
        i0, i1 = np.nanmedian(means[sel, 1, 0]), np.nanmedian(means[sel, 1, -1])
        ab = means[sel, SIGNALS.index("abstain"), -1]
        who = [str(cube.cells.model.iloc[c]) for c, x in zip(sel, ab, strict=True) if x >= abstain_at]
        parts.append(f"{task}, {arm}: from clean to V = {v_min:.3g} m the median accuracy of the {len(sel)} models "
                     f"{change(a0, a1)} (chance {chance:.2f}) and their median internal confidence "
                     f"{change(i0, i1)}; the abstain rate reaches "
                     f"{abstain_at:g} there for {len(who)} of {len(sel)} ({_names(who)})")
    return ". ".join(parts) + "."


def blind_spot_finding(spots: pd.DataFrame) -> str:
    """Fig. 4: per task, how many Ws (values and bounds) lie above 0, how many are bounds, and their median."""
    parts = []
    for task in dict.fromkeys(spots.task):
        s = spots[(spots.task == task) & spots.w_kind.isin(["=", "≥", "≤"]) & np.isfinite(spots.w)]
        if s.empty:
            parts.append(f"{task}: no W is defined")
            continue
        pos, bounds = int((s.w > 0).sum()), int((s.w_kind != "=").sum())
        med = float(s.w.median())
        internal = s[s.signal == AWARE_SIGNALS[0]]
        parts.append(f"{task}: {pos} of {len(s)} Ws lie above 0 (the signal reacts only in murkier air than "
                     f"accuracy), {bounds} of them bounds, median {med:.2f} decades "
                     f"({'above' if med > 0 else 'below'} 0); internal confidence: {int((internal.w > 0).sum())} "
                     f"of {len(internal)} above 0")
    return "; ".join(parts) + "."


def reliability_finding(rel_sum: pd.DataFrame, models: Sequence[str], murky_m: float) -> str:
    """Fig. 5: for how many models the ECE rises from clean to murky, the median ECEs, and over-confidence."""
    w = rel_sum[rel_sum.model.isin(list(models))].pivot(index="model", columns="pool")
    if "murky" not in w["ece"] or "clean" not in w["ece"]:
        return "Fig. 5 has no murky or no clean pool to compare."
    w = w.dropna(subset=[("ece", "clean"), ("ece", "murky")])
    up = int((w["ece"]["murky"] > w["ece"]["clean"]).sum())
    c, m = float(w["ece"]["clean"].median()), float(w["ece"]["murky"].median())
    over = int((w["confidence"]["murky"] > w["accuracy"]["murky"]).sum())
    return (f"Pooling V <= {murky_m:g} m, the internal confidence's ECE rises above its clean value for {up} of "
            f"{len(w)} models (median ECE {change(c, m)}, clean to murky); in the murky pool the "
            f"mean confidence lies above the accuracy (over-confident) for {over} of {len(w)}.")


def abstain_finding(cube: SignalCube, means: np.ndarray, models: Sequence[str], abstain_at: float = 0.5) -> str:
    """Fig. 6: per arm, the models whose main-wording abstain rate on t2 reaches ``abstain_at`` at the murkiest
    level, the others' highest rate, and how far the two wordings differ anywhere."""
    models = list(models)
    v_min = float(cube.levels_m[-1])
    ka, kb = SIGNALS.index("abstain"), SIGNALS.index("abstain2")
    parts, gap = [], 0.0
    for arm in dict.fromkeys(cube.cells.arm):
        sel = [c for c in range(len(cube.cells)) if cube.cells.task.iloc[c] == "t2" and cube.cells.arm.iloc[c] == arm
               and cube.cells.model.iloc[c] in models]
        ab = means[sel, ka, -1]
        who = [str(cube.cells.model.iloc[c]) for c, x in zip(sel, ab, strict=True) if x >= abstain_at]
        rest = ab[ab < abstain_at]
        parts.append(f"{arm}: {_names(who)} ({len(who)} of {len(sel)})" +
                     (f", the others at most {float(np.nanmax(rest)):.2f}" if rest.size else ""))
        gap = max(gap, float(np.nanmax(np.abs(means[sel, ka, 1:] - means[sel, kb, 1:]))))
    return (f"At V = {v_min:.3g} m on t2 the main-wording abstain rate reaches {abstain_at:g} for " + "; ".join(parts)
            + f". The 'I don't know' wording differs from the main one by at most {gap:.2f} at any level.")


def transmittance_finding(acc_t: pd.DataFrame, models: Sequence[str], min_n: int = 5) -> str:
    """Accuracy against t: per task, in how many (model, arm) curves the lowest-t bin lies below the highest-t
    bin, and the median accuracy at both ends against chance."""
    parts = []
    for task, chance in (("t2", 0.25), ("t3", 0.5)):
        lows, highs = [], []
        for (m, _arm), g in acc_t[(acc_t.task == task) & (acc_t.n >= min_n)].groupby(["model", "arm"], sort=False):
            if m in models and len(g) >= 2:
                g = g.sort_values("t_mean")
                lows.append(float(g.accuracy.iloc[0]))
                highs.append(float(g.accuracy.iloc[-1]))
        if not lows:
            continue
        lo, hi = np.array(lows), np.array(highs)
        parts.append(f"{task}: in the lowest-t bin accuracy lies below the t ≈ 1 bin for {int((lo < hi).sum())} of "
                     f"{len(lo)} (model, arm) curves; the median {change(np.median(hi), np.median(lo))}, "
                     f"{'above' if np.median(lo) > chance else 'at or below'}"
                     f" chance {chance:g}")
    return "; ".join(parts) + "."


def imagenet_fog_finding(table7: pd.DataFrame, models: Sequence[str]) -> str:
    """Fig. 7: where the severities sit in metres, and how often a severity's accuracy lies below the physical
    fog curve read at its median V_eq."""
    d = np.array([float(r[f"{m} acc."]) - float(r[f"{m} acc. at V_eq"]) for _, r in table7.iterrows()
                  for m in models])
    d = d[np.isfinite(d)]
    v = table7.median_v_m.to_numpy(np.float64)
    med = float(np.median(d)) if d.size else float("nan")
    where = "below" if med < 0 else "above" if med > 0 else "on"
    return (f"ImageNet-C severities {int(table7.severity.iloc[0])}–{int(table7.severity.iloc[-1])} sit at median "
            f"V_eq from {v[0]:.0f} m to {v[-1]:.0f} m; a severity's t2 accuracy lies below the physical fog curve "
            f"at its V_eq in {int((d < 0).sum())} of {d.size} (model, severity) pairs, above it in "
            f"{int((d > 0).sum())}, median difference {med:+.2f} ({where} the curve).")
