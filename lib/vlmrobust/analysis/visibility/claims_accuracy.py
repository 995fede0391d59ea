"""Seed 003's claims about accuracy on the visibility axis, and who is a subject of any claim: the models that see.

**Who sees.** A claim about how a signal follows the loss of visibility is only a claim about a model whose
accuracy falls with it: :func:`seeing_models` keeps the models whose t2 fog accuracy at the murkiest level lies
below their clean accuracy (paired interval over scenes wholly above 0) and whose clean accuracy is at least
``min_gap`` above chance. A model that cannot see (a blind twin, ``blind:NAME``) answers every level as the clean
image, so its difference is exactly 0 and it is no subject.

The rows: accuracy falls to chance within about a decade of V (:func:`obs_fall_within_decade`) and water is
harsher than fog at equal V (:func:`obs_water_harsher`, beside the ratio that physics predicts,
:func:`equal_transmittance_ratio`). How the rows decide, and the inputs they take, is in :mod:`.claims_base`.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ...stats.bootstrap import percentile_interval
from ...stats.claims import (
    NOT_REPRODUCED,
    UNDECIDED,
    Claim,
    decide_text,
    interval_text,
    verdict,
)
from .blind_spot import CROSSED, SignalCube, first_crossing, level_means
from .claims_base import _cells, _row, bounded_interval

__all__ = ["PAPER_WATER_FOG", "seeing_models", "fall_ratios", "obs_fall_within_decade", "equal_transmittance_ratio",
           "obs_water_harsher"]

#: Seed 003 Table V: V_acc under water over V_acc in fog (Qwen3-VL-2B t2 22.1/12.4, t3 33.5/16.8;
#: InternVL3.5-2B t2 29.5/14.1).
PAPER_WATER_FOG = (22.1 / 12.4, 33.5 / 16.8, 29.5 / 14.1)


def seeing_models(cube: SignalCube, means_reps: np.ndarray, models: Sequence[str], *, task: str = "t2",
                  arm: str = "fog", min_gap: float = 0.1) -> dict[str, str]:
    """The models of ``models`` that see: model -> why not ('' when it sees).

    Sees: the clean accuracy on ``task`` at least ``min_gap`` above chance and the accuracy at the murkiest
    level below it, the paired difference's 95 % interval over resampled scenes wholly above 0.
    """
    means = level_means(cube)
    out = {}
    for m in models:
        cs = _cells(cube, task, arm, [m])
        if not cs:
            out[m] = f"no {task} {arm} data"
            continue
        c = cs[0]
        gap = means[c, 0, 0] - cube.chance[c]
        drop = means_reps[:, c, 0, 0] - means_reps[:, c, 0, -1] if len(means_reps) else np.array([])
        lo = percentile_interval(drop.reshape(-1, 1))[0][0] if drop.size else np.nan
        if not gap >= min_gap:
            out[m] = f"clean accuracy {means[c, 0, 0]:.2f}, less than {min_gap} above chance"
        elif not lo > 0:
            out[m] = f"accuracy does not fall with V (clean - murkiest {means[c, 0, 0] - means[c, 0, -1]:.2f}, " \
                     f"interval from {lo:.2f})"
        else:
            out[m] = ""
    return out


def fall_ratios(means: np.ndarray, levels_m, chance) -> np.ndarray:
    """V_90 / V_10 of accuracy (signal 0) per curve: the first crossings of chance + 90 % and + 10 % of the way to
    clean (linear in log V); ``+inf`` where the fall is not inside the sweep (either crossing missing)."""
    acc, clean = means[..., 0, 1:], means[..., 0, 0]
    v90, s90 = first_crossing(acc, levels_m, chance + 0.9 * (clean - chance))
    v10, s10 = first_crossing(acc, levels_m, chance + 0.1 * (clean - chance))
    ok = (s90 == CROSSED) & (s10 == CROSSED)
    return np.where(ok, v90 / np.where(ok, v10, 1.0), np.inf)


def obs_fall_within_decade(cube: SignalCube, means_reps: np.ndarray, models: Sequence[str], *, task: str = "t2",
                           ratio: float = 10.0, section: str = "paper") -> Claim:
    """t2 accuracy goes from near its clean value to chance within a factor ``ratio`` in V (abstract, Fig. 3).

    Per t2 cell (both arms) of a model of ``models``: ``V_90 / V_10`` (:func:`fall_ratios`) with its interval
    over the resampled scenes, a resample whose fall leaves the sweep counting as unbounded; region
    ``[1, ratio]``. Null: a fall spread over more than a decade (``V_90 / V_10 = ratio``).
    """
    point = fall_ratios(level_means(cube), cube.levels_m, cube.chance)
    reps = fall_ratios(means_reps, cube.levels_m, cube.chance) if len(means_reps) else None
    parts, texts = [], []
    for c in _cells(cube, task, None, models):
        cell = cube.cells.iloc[c]
        lo, hi = bounded_interval(reps[:, c]) if reps is not None else (np.nan, np.nan)
        v = verdict(lo, hi, 1.0, ratio) if np.isfinite(point[c]) else (UNDECIDED if not np.isfinite(lo) or lo <= ratio
                                                                       else NOT_REPRODUCED)
        texts.append(f"{cell.model} {cell.arm}: " + (f"{interval_text(point[c], lo, hi, 1)}x" if np.isfinite(point[c])
                                                     else "the fall is not inside the sweep"))
        dec = ("a sweep that holds the whole fall" if not np.isfinite(point[c]) else
               decide_text(len(cube.scenes), point[c], lo, hi, 1.0, ratio, unit="scenes") if np.isfinite(hi) else
               f"more scenes: in over 2.5 % of the resamples of {len(cube.scenes)} scenes the fall leaves the sweep")
        parts.append((v, point[c], lo, hi, dec))
    return _row("t2 accuracy falls from near its clean value to chance within a factor of about ten in V",
                "t2 accuracy falls to chance within a factor of about ten in V (abstract, Fig. 3)",
                f"a slow fall: V_90 / V_10 = {ratio:g} (accuracy drawn per scene, thresholds spread in log V)",
                f"V_90 / V_10 of t2 accuracy (first crossings of chance + 90 % / 10 % of the way to clean), 95 % "
                f"interval over scenes inside [1, {ratio:g}] for every cell", models, parts, texts,
                "no evaluated organism whose accuracy falls with V (see the first row's subject rule)", section)


def equal_transmittance_ratio(t=(0.02, 0.05, 0.1, 0.25, 0.5, 0.75, 0.9)) -> np.ndarray:
    """The water V over the fog V that leave an object the same luminance transmittance ``t`` (any distance).

    Both arms put V where the clearest channel keeps 2 % contrast
    (:mod:`vlmrobust.corrupt.physical`); fog's ``t`` is ``exp(-3.912 d / V)``, the
    water's the luminance-weighted mean of three channels of which green and red
    fade 4.8x and 28x faster than blue, so an object at the same ``t`` needs a
    clearer (larger) water V. Both are functions of ``d / V`` only.
    """
    from ...corrupt.physical import luminance_transmittance

    out = []
    for target in np.asarray(t, dtype=np.float64):
        lo, hi = np.log(1e-3), np.log(1e4)  # water V at d = 1 m, by bisection (t rises with V)
        for _ in range(80):
            mid = (lo + hi) / 2
            if luminance_transmittance(np.array([1.0]), float(np.exp(mid)), "water")[0] < target:
                lo = mid
            else:
                hi = mid
        v_fog = 3.912 / -np.log(target)
        out.append(np.exp((lo + hi) / 2) / v_fog)
    return np.asarray(out)


def _v_acc(means: np.ndarray, levels_m, chance) -> np.ndarray:
    acc, clean = means[..., 0, 1:], means[..., 0, 0]
    v, s = first_crossing(acc, levels_m, (clean + chance) / 2)
    return np.where(s == CROSSED, v, np.nan)


def obs_water_harsher(cube: SignalCube, means_reps: np.ndarray, models: Sequence[str], *,
                      section: str = "paper") -> Claim:
    """V_acc under water is above V_acc in fog (Table V), reported as a ratio beside the paper's and physics'.

    Per (model, task) of ``models`` with both arms: ``V_acc(water) / V_acc(fog)`` from the first crossings, with
    its interval over the resamples in which both cross; region ``(1, inf)``; null: equal V_acc (ratio 1). The
    paper's ratios are 1.78-2.09; the ratio that gives the boxed object the same luminance transmittance is
    :func:`equal_transmittance_ratio` (2.9 at t = 0.02, 6.4 at t = 0.5, 9.0 at t = 0.9).
    """
    point = _v_acc(level_means(cube), cube.levels_m, cube.chance)
    reps = _v_acc(means_reps, cube.levels_m, cube.chance) if len(means_reps) else None
    cells = cube.cells.reset_index(drop=True)
    parts, texts = [], []
    for (model, task), g in cells[cells.model.isin(list(models))].groupby(["model", "task"], sort=False):
        arms = dict(zip(g.arm, g.index, strict=True))
        if "fog" not in arms or "water" not in arms:
            continue
        f, w = arms["fog"], arms["water"]
        r = point[w] / point[f]
        lo, hi = percentile_interval((reps[:, w] / reps[:, f]).reshape(-1, 1)) if reps is not None else ([np.nan],) * 2
        lo, hi = float(lo[0]), float(hi[0])
        if not np.isfinite(r):
            texts.append(f"{model} {task}: a V_acc is not inside the sweep")
            parts.append((UNDECIDED, np.nan, np.nan, np.nan, "a sweep in which both arms' accuracy crosses"))
            continue
        texts.append(f"{model} {task}: {interval_text(r, lo, hi)}x")
        parts.append((verdict(lo, hi, 1.0 + 1e-12), r, lo, hi,
                      decide_text(len(cube.scenes), r, lo, hi, 1.0, unit="scenes")))
    phys = equal_transmittance_ratio()
    return _row("water is harsher than fog at equal V (V_acc larger under water)",
                f"V_acc 20.5-38.6 m under water vs 12.1-15.9 m in fog; water/fog {min(PAPER_WATER_FOG):.2f}-"
                f"{max(PAPER_WATER_FOG):.2f} (abstract, Table V)",
                "equal harm: V_acc the same in both arms (ratio 1)",
                "V_acc(water) / V_acc(fog), 95 % interval over scenes above 1, every model and task (equal object "
                f"transmittance needs {phys.min():.1f}-{phys.max():.1f}x: V is set by the clearest channel, blue, "
                "while the luminance lives in green and red, which water removes 4.8x and 28x faster)",
                models, parts, texts, "no evaluated organism whose accuracy falls with V in both arms", section)
