"""Seed 003's claims about accuracy, confidence and abstaining on the visibility axis, checked on a run.

Each check returns a :class:`~vlmrobust.stats.claims.Claim` decided by
:func:`~vlmrobust.stats.claims.verdict` (an interval against a
region taken from the paper; the region is in the check's text). Inputs: the
signal cube (:func:`~vlmrobust.analysis.visibility.blind_spot.signal_cube`), its
bootstrap means (:func:`~vlmrobust.analysis.visibility.blind_spot.bootstrap_means`,
drawn with the same resample counts as the blind-spot table, so that every
interval moves with the same scenes), the blind-spot table and its replicates.

A W that is a bound decides only one way: ``W >= b`` holds a region
``[low, inf)`` when ``b``'s interval lies at or above ``low``, and fails a region
``[low, high]`` only when ``b``'s interval lies above ``high`` (an upper bound
likewise, mirrored); otherwise it is undecided.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ...stats.bootstrap import percentile_interval
from ...stats.calibration import ece
from ...stats.claims import Claim, combine, interval_text, verdict
from .blind_spot import CROSSED, SignalCube, first_crossing, level_means

__all__ = ["w_verdict", "confident_models", "equal_transmittance_ratio", "obs_fall_within_decade", "obs_water_harsher",
           "obs_confident_stay_confident", "obs_underconfident_follows", "obs_abstain_signed", "obs_idk_lags",
           "obs_t3_no_signal", "obs_calibration_fog"]

#: Seed 003 Table V: V_acc under water over V_acc in fog (Qwen3-VL-2B t2 22.1/12.4, t3 33.5/16.8;
#: InternVL3.5-2B t2 29.5/14.1).
PAPER_WATER_FOG = (22.1 / 12.4, 33.5 / 16.8, 29.5 / 14.1)


def w_verdict(kind: str, lo: float, hi: float, low: float = -np.inf, high: float = np.inf) -> bool | None:
    """:func:`verdict` for a W of kind ``=``, ``≥`` (lower bound) or ``≤`` (upper bound); n/a is None."""
    if kind == "=":
        return verdict(lo, hi, low, high)
    if kind == "≥":
        return True if (lo >= low and np.isinf(high)) else False if lo > high else None
    if kind == "≤":
        return True if (hi <= high and np.isinf(low)) else False if hi < low else None
    return None


def _cells(cube: SignalCube, task: str, arm: str | None = None) -> list[int]:
    sel = cube.cells.task == task
    if arm is not None:
        sel &= cube.cells.arm == arm
    return list(np.flatnonzero(sel.to_numpy()))


def _w_row(spots: pd.DataFrame, model: str, task: str, arm: str, signal: str):
    r = spots[(spots.model == model) & (spots.task == task) & (spots.arm == arm) & (spots.signal == signal)]
    return r.iloc[0] if len(r) else None


def _w_text(r) -> str:
    if r is None or r.w_kind == "n/a":
        return "n/a" + (f" ({r.flag})" if r is not None and r.flag else "")
    head = "" if r.w_kind == "=" else f"{r.w_kind} "
    return head + interval_text(r.w, r.w_lo, r.w_hi)


def obs_fall_within_decade(cube: SignalCube, means_reps: np.ndarray, *, task: str = "t2", ratio: float = 10.0,
                           min_gap: float = 0.1) -> Claim:
    """t2 accuracy goes from near its clean value to chance within a factor ``ratio`` in V (abstract, Fig. 3).

    Per t2 cell (both arms) whose clean accuracy is at least ``min_gap`` above
    chance: ``V_90 / V_10``, the first crossings of chance + 90 % and + 10 % of the
    way to the clean accuracy (linear in log V, as V_acc), with its interval over
    the resamples in which both cross; region ``[1, ratio]``. A cell whose fall is
    not inside the sweep (either crossing missing) is undecided and says so.
    """
    def ratios(means):
        acc, clean, ch = means[..., 0, 1:], means[..., 0, 0], cube.chance
        v90, s90 = first_crossing(acc, cube.levels_m, ch + 0.9 * (clean - ch))
        v10, s10 = first_crossing(acc, cube.levels_m, ch + 0.1 * (clean - ch))
        ok = (s90 == CROSSED) & (s10 == CROSSED)
        return np.where(ok, v90 / np.where(ok, v10, 1.0), np.nan), s90, s10

    point, s90, s10 = ratios(level_means(cube))
    reps = ratios(means_reps)[0] if len(means_reps) else np.empty((0, len(cube.cells)))
    lo, hi = percentile_interval(reps) if len(reps) else (np.full(len(cube.cells), np.nan),) * 2
    clean_gap = level_means(cube)[:, 0, 0] - cube.chance
    parts, verdicts = [], []
    for c in _cells(cube, task):
        cell = cube.cells.iloc[c]
        if clean_gap[c] < min_gap:
            parts.append(f"{cell.model} {cell.arm}: n/a (clean accuracy within {min_gap} of chance)")
            continue
        if not np.isfinite(point[c]):
            where = "the fall lies before the first level" if s90[c] != CROSSED else "no fall to chance in the sweep"
            parts.append(f"{cell.model} {cell.arm}: undecided ({where})")
            verdicts.append(None)
            continue
        parts.append(f"{cell.model} {cell.arm}: {interval_text(point[c], lo[c], hi[c], 1)}x")
        verdicts.append(verdict(lo[c], hi[c], 1.0, ratio))
    return Claim(
        "t2 accuracy falls from near its clean value to chance within a factor of about ten in V",
        "t2 accuracy falls to chance within a factor of about ten in V (abstract, Fig. 3)",
        f"V_90 / V_10 of t2 accuracy (first crossings of chance + 90 % / 10 % of the way to clean) with its 95 % "
        f"interval inside [1, {ratio:g}] in every t2 cell whose clean accuracy is >= {min_gap} above chance",
        "; ".join(parts) or "no t2 cell", combine(verdicts))


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


def obs_water_harsher(cube: SignalCube, means_reps: np.ndarray, *, min_gap: float = 0.1) -> Claim:
    """V_acc under water is above V_acc in fog (Table V), reported as a ratio beside the paper's and physics'.

    Per (model, task) with both cells interpretable: ``V_acc(water) / V_acc(fog)``
    from the first crossings, with its interval over the resamples in which both
    cross; region ``(1, inf)``. The paper's ratios are 1.78-2.09; the ratio that
    gives the boxed object the same luminance transmittance is
    :func:`equal_transmittance_ratio` (2.9 at t = 0.02, 6.4 at t = 0.5, 9.0 at t = 0.9): a model that
    followed the object's own luminance contrast would show that one.
    """
    def v_acc(means):
        acc, clean = means[..., 0, 1:], means[..., 0, 0]
        v, s = first_crossing(acc, cube.levels_m, (clean + cube.chance) / 2)
        return np.where(s == CROSSED, v, np.nan)

    point, reps = v_acc(level_means(cube)), (v_acc(means_reps) if len(means_reps) else None)
    gap = level_means(cube)[:, 0, 0] - cube.chance
    cells = cube.cells.reset_index(drop=True)
    parts, verdicts = [], []
    for (model, task), g in cells.groupby(["model", "task"], sort=False):
        arms = dict(zip(g.arm, g.index, strict=True))
        if "fog" not in arms or "water" not in arms:
            continue
        f, w = arms["fog"], arms["water"]
        if min(gap[f], gap[w]) < min_gap:
            continue
        r = point[w] / point[f]
        lo, hi = percentile_interval(reps[:, w] / reps[:, f]) if reps is not None else (np.nan, np.nan)
        parts.append(f"{model} {task}: " + (interval_text(r, lo, hi) + "x" if np.isfinite(r) else
                                            "undecided (a V_acc is a bound)"))
        verdicts.append(verdict(lo, hi, 1.0 + 1e-12) if np.isfinite(r) else None)
    phys = equal_transmittance_ratio()
    return Claim(
        "water is harsher than fog at equal V (V_acc larger under water)",
        f"V_acc 20.5-38.6 m under water vs 12.1-15.9 m in fog; water/fog {min(PAPER_WATER_FOG):.2f}-"
        f"{max(PAPER_WATER_FOG):.2f} (abstract, Table V)",
        "V_acc(water) / V_acc(fog) with its 95 % interval above 1 for every model and task with both interpretable "
        f"(equal object transmittance needs {phys.min():.1f}-{phys.max():.1f}x: V is set by the clearest channel, "
        "blue, while the luminance lives in green and red, which water removes 4.8x and 28x faster)",
        "; ".join(parts) or "no model with V_acc in both arms", combine(verdicts))


def confident_models(cube: SignalCube, task: str = "t2", arm: str = "fog", confident: float = 0.8) -> dict[str, bool]:
    """Per model: clean mean internal confidence on ``task`` ``arm`` at or above ``confident`` (stated: 0.8)."""
    means = level_means(cube)
    return {cube.cells.model.iloc[c]: bool(means[c, 1, 0] >= confident) for c in _cells(cube, task, arm)}


def obs_confident_stay_confident(cube: SignalCube, spots: pd.DataFrame, *, signal: str = "internal",
                                 task: str = "t2", arm: str = "fog", confident: float = 0.8,
                                 w_min: float = 0.79) -> Claim:
    """Confident models keep their ``signal`` confidence where accuracy is at chance: W >= 0.79 (abstract).

    Confident: clean mean internal confidence >= ``confident`` (stated). Per such
    model, its W of ``signal`` on ``task`` ``arm`` with its interval against
    ``[w_min, inf)`` (:func:`w_verdict`); models without a parseable verbalized
    confidence are n/a.
    """
    means = level_means(cube)
    conf = confident_models(cube, task, arm, confident)
    parts, verdicts = [], []
    for c in _cells(cube, task, arm):
        model = cube.cells.model.iloc[c]
        if not conf[model]:
            continue
        r = _w_row(spots, model, task, arm, signal)
        parts.append(f"{model}: at {cube.levels_m[-1]:.3g} m acc. {means[c, 0, -1]:.2f}, {signal} "
                     f"{means[c, 1 if signal == 'internal' else 2, -1]:.2f}; W {_w_text(r)}")
        verdicts.append(None if r is None else w_verdict(r.w_kind, r.w_lo, r.w_hi, w_min))
    label = "internal" if signal == "internal" else "verbalized"
    return Claim(
        f"confident models keep their {label} confidence high where accuracy is at chance",
        "at V = 1.95 m in fog accuracy is at chance but internal confidence 0.68-0.84, verbalized 0.61-1.00; "
        "W >= 0.79 (abstract, Tables IV, V)",
        f"every model with clean internal confidence >= {confident} has W_{signal} on {task} {arm} with its 95 % "
        f"interval in [{w_min}, inf)", "; ".join(parts) or "no confident model", combine(verdicts))


def obs_underconfident_follows(cube: SignalCube, spots: pd.DataFrame, *, task: str = "t2", arm: str = "fog",
                               confident: float = 0.8, w_follow: float = 0.21) -> Claim:
    """The under-confident model's internal confidence follows accuracy (abstract): |W_internal| <= 0.21.

    Under-confident: clean internal confidence below ``confident``. "Follows" is
    the paper's own range for a signal that follows accuracy (abstain, W -0.21 to
    -0.06): the W interval inside ``[-w_follow, w_follow]``.
    """
    conf = confident_models(cube, task, arm, confident)
    under = [m for m, ok in conf.items() if not ok]
    parts, verdicts = [], []
    for model in under:
        r = _w_row(spots, model, task, arm, "internal")
        parts.append(f"{model}: W_internal {_w_text(r)}")
        verdicts.append(None if r is None else w_verdict(r.w_kind, r.w_lo, r.w_hi, -w_follow, w_follow))
    return Claim(
        "the under-confident model's internal confidence follows accuracy",
        "the remaining model is under-confident throughout and its internal confidence follows accuracy (abstract)",
        f"every model with clean internal confidence < {confident} has W_internal on {task} {arm} with its 95 % "
        f"interval in [-{w_follow}, {w_follow}]",
        "; ".join(parts) or f"no under-confident organism (every clean internal confidence >= {confident})",
        combine(verdicts) if under else None)


def obs_abstain_signed(spots: pd.DataFrame, *, task: str = "t2", arm: str = "fog", w_lead: float = -0.21) -> Claim:
    """Abstaining with a reason follows accuracy, ahead of it: W_abstain in [-0.21, 0] (abstract, Table V).

    Over the models whose main-wording abstain signal crosses its mid-level (a
    value, not a bound or n/a): the W interval inside ``[w_lead, 0]``, the sign
    included (the paper's W are -0.21 to -0.06: the abstain rate rises at a
    clearer V than accuracy falls). Models whose abstain W is a bound are listed.
    """
    sub = spots[(spots.task == task) & (spots.arm == arm) & (spots.signal == "abstain")]
    parts, verdicts = [], []
    for r in sub.itertuples():
        parts.append(f"{r.model}: {_w_text(r)}")
        if r.w_kind == "=":
            verdicts.append(verdict(r.w_lo, r.w_hi, w_lead, 0.0))
    return Claim(
        "abstaining with a reason follows accuracy, slightly ahead of it",
        "W_abstain from -0.21 to -0.06 in fog with the main wording (abstract, Table V)",
        f"W_abstain on {task} {arm} with its 95 % interval in [{w_lead}, 0] for every model whose abstain rate "
        "crosses its mid-level", "; ".join(parts) or "no model", combine(verdicts) if verdicts else None)


def obs_idk_lags(cube: SignalCube, spots: pd.DataFrame, reps: dict, *, task: str = "t2", arm: str = "fog") -> Claim:
    """With "I don't know" the abstain option lags for some model: a share with its interval (Table V).

    Among the models whose main-wording abstain W is a value: the share whose W
    with "I don't know" (a value or a lower bound) is larger; per resample the
    same share (``reps``: :func:`~vlmrobust.analysis.visibility.blind_spot.bootstrap`
    arrays). Some instance: the share's interval at or above ``1 / n`` (one model).
    """
    cells = [c for c in _cells(cube, task, arm)]
    main = [c for c in cells if (r := _w_row(spots, cube.cells.model.iloc[c], task, arm, "abstain")) is not None
            and r.w_kind == "="]
    if not main:
        return Claim("with 'I don't know' the abstain option lags for some model",
                     "W_abstain2 up to 0.18 against W_abstain -0.06 (Qwen3-VL-2B, Table V)",
                     "share of models with W_abstain2 > W_abstain", "no model whose abstain rate crosses", None)
    rows = [(_w_row(spots, cube.cells.model.iloc[c], task, arm, "abstain"),
             _w_row(spots, cube.cells.model.iloc[c], task, arm, "abstain2")) for c in main]
    point = np.mean([b is not None and b.w_kind in ("=", "≥") and b.w > a.w for a, b in rows])
    if len(reps.get("w", [])):
        w = reps["w"][:, main]
        share = np.mean(np.isfinite(w[..., 3]) & (w[..., 3] > np.nan_to_num(w[..., 2], nan=np.inf)), axis=1)
        lo, hi = percentile_interval(share)
    else:
        lo = hi = np.nan
    parts = [f"{a.model}: W_abstain {_w_text(a)}, W_abstain2 {_w_text(b)}" for a, b in rows]
    return Claim(
        "with 'I don't know' the abstain option lags for some model",
        "W_abstain2 up to 0.18 against W_abstain -0.06 (Qwen3-VL-2B, Table V)",
        f"share of models (abstain W a value) with W_abstain2 > W_abstain, 95 % interval at or above 1/{len(main)}",
        f"share {interval_text(point, lo, hi)}; " + "; ".join(parts), verdict(lo, hi, 1.0 / len(main) - 1e-12))


def obs_t3_no_signal(spots: pd.DataFrame, reps: dict, cube: SignalCube, *, task: str = "t3") -> Claim:
    """On t3 no awareness signal reaches its mid-level inside the sweep (Table V: every t3 W is "≥").

    The share of interpretable (model, arm, signal) cells of ``task`` whose W is a
    lower bound, per resample too; region ``[1, 1]`` (all of them).
    """
    sub = spots[(spots.task == task) & (spots.w_kind != "n/a")]
    if sub.empty:
        return Claim("on t3 no awareness signal reaches its mid-level", "every t3 W is a lower bound (Table V)",
                     "", "no interpretable t3 cell", None)
    point = float((sub.w_kind == "≥").mean())
    cells = _cells(cube, task)
    if len(reps.get("w_kind", [])):
        kinds = reps["w_kind"][:, cells]
        ok = kinds != 3
        share = (ok & (kinds == 1)).sum(axis=(1, 2)) / np.maximum(ok.sum(axis=(1, 2)), 1)
        lo, hi = percentile_interval(share)
    else:
        lo = hi = np.nan
    crossing = sorted({f"{r.model} {r.arm} {r.signal}" for r in sub.itertuples() if r.w_kind != "≥"})
    return Claim(
        "on t3 no awareness signal reaches its mid-level",
        "every t3 W of Table V is a lower bound (>= 0.94 fog, >= 1.23 water)",
        f"share of interpretable {task} cells whose W is a lower bound, 95 % interval at 1",
        f"share {interval_text(point, lo, hi)}" + (f"; crossing: {', '.join(crossing[:8])}" if crossing else ""),
        verdict(lo, hi, 1.0))


def obs_calibration_fog(long: pd.DataFrame, confident: dict[str, bool], n_boot: int, rng: np.random.Generator, *,
                        task: str = "t2", max_v: float = 15.625, n_bins: int = 10) -> Claim:
    """Under fog the internal confidence is worse calibrated than on clean images (Fig. 5), per confident model.

    ECE (``n_bins`` equal-width bins) of the internal confidence on ``task`` over
    the fog levels ``V <= max_v`` minus its clean ECE, with a 95 % interval over
    ``n_boot`` resamples of the scenes (``rng``); region ``(0, inf)``.
    """
    sub = long[(long.task == task) & (long.signal == "internal") & (long.arm == "fog") & long.value.notna()]
    sub = sub[np.isinf(sub.V) | (sub.V <= max_v)]
    scenes = np.array(sorted(set(sub.scene)), dtype=object)
    idx = rng.integers(0, len(scenes), size=(n_boot, len(scenes))) if len(scenes) else np.empty((0, 0), int)
    parts, verdicts = [], []
    for model, ok in confident.items():
        if not ok:
            continue
        g = sub[sub.model == model]
        by = {s: (x.value.to_numpy(np.float64), x.correct.astype(bool).to_numpy(), np.isinf(x.V.to_numpy()))
              for s, x in g.groupby("scene")}

        def gap(draw, by=by):
            parts_ = [by[scenes[i]] for i in draw if scenes[i] in by]
            if not parts_:
                return np.nan
            v, c, clean = (np.concatenate(p) for p in zip(*parts_, strict=True))
            if clean.all() or not clean.any():
                return np.nan
            return ece(v[~clean], c[~clean], n_bins) - ece(v[clean], c[clean], n_bins)

        d = gap(np.arange(len(scenes)))
        lo, hi = percentile_interval(np.array([gap(row) for row in idx])) if len(idx) else (np.nan, np.nan)
        parts.append(f"{model}: ECE murky - clean {interval_text(d, lo, hi)}")
        verdicts.append(verdict(lo, hi, 1e-12))
    return Claim(
        "under fog the internal confidence is far worse calibrated than on clean images",
        f"Fig. 5: pooled over V <= {max_v:g} m the confident models' internal confidence lies far above their "
        "accuracy; on clean images near the diagonal",
        f"ECE (fog, V <= {max_v:g} m) - ECE (clean) of the internal confidence on {task}, 95 % interval above 0, "
        "for every confident model", "; ".join(parts) or "no confident model", combine(verdicts))
