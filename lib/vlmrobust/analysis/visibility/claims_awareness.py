"""Seed 003's claims about the awareness signals on the visibility axis: confidence and abstaining, checked on a run.

Which models a row is about: the confident ones (:func:`confident_models`), the under-confident ones
(:func:`underconfident_models`) and those that take the abstain option at all (:func:`abstaining_models`), each
among the models that see (:func:`~.claims_accuracy.seeing_models`). The rows: confident models stay confident
where accuracy is at chance, the under-confident model's confidence follows accuracy, abstaining leads accuracy
and lags with "I don't know", no t3 signal reaches its mid-level, and the confidence is worse calibrated in fog.
Most read the blind-spot width W, often a bound; how the rows decide is in :mod:`.claims_base`.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from ...stats.bootstrap import percentile_interval
from ...stats.calibration import bin_index
from ...stats.claims import (
    REPRODUCED,
    UNDECIDED,
    Claim,
    combine,
    decide_text,
    interval_text,
    no_subject,
    verdict,
)
from .blind_spot import SignalCube, level_means
from .claims_base import _cells, _row, _w_row, _w_text, w_decide, w_verdict

__all__ = ["confident_models", "underconfident_models", "abstaining_models", "obs_confident_stay_confident",
           "obs_underconfident_follows", "obs_abstain_signed", "obs_idk_lags", "obs_t3_no_signal", "ece_gap_reps",
           "calibration_verdict", "obs_calibration_fog"]

def confident_models(cube: SignalCube, models: Sequence[str] | None = None, task: str = "t2", arm: str = "fog",
                     confident: float = 0.8) -> dict[str, bool]:
    """Per model: clean mean internal confidence on ``task`` ``arm`` at or above ``confident`` (stated: 0.8, the
    paper's confident models hold 0.68-0.84 even at chance)."""
    means = level_means(cube)
    return {cube.cells.model.iloc[c]: bool(means[c, 1, 0] >= confident) for c in _cells(cube, task, arm, models)}


def underconfident_models(cube: SignalCube, means_reps: np.ndarray, models: Sequence[str], task: str = "t2",
                          arm: str = "fog") -> dict[str, tuple[float, float, float]]:
    """The under-confident models of ``models``: not confident (:func:`confident_models`, seed 003's "remaining
    model") and with a clean mean internal confidence below clean accuracy (confidence under the share answered
    right), the difference's 95 % interval over scenes wholly below 0. Returns model -> (difference, lo, hi) for
    those models."""
    means = level_means(cube)
    conf = confident_models(cube, models, task, arm)
    out = {}
    for c in _cells(cube, task, arm, [m for m in models if not conf.get(m, False)]):
        d = means[c, 1, 0] - means[c, 0, 0]
        reps = means_reps[:, c, 1, 0] - means_reps[:, c, 0, 0] if len(means_reps) else np.array([])
        lo, hi = percentile_interval(reps.reshape(-1, 1)) if reps.size else ([np.nan], [np.nan])
        if hi[0] < 0:
            out[cube.cells.model.iloc[c]] = (float(d), float(lo[0]), float(hi[0]))
    return out


def obs_confident_stay_confident(cube: SignalCube, spots: pd.DataFrame, models: Sequence[str], *,
                                 signal: str = "internal", task: str = "t2", arm: str = "fog",
                                 confident: float = 0.8, w_min: float = 0.79, section: str = "paper") -> Claim:
    """Confident models keep their ``signal`` confidence where accuracy is at chance: W >= 0.79 (abstract).

    Subject: the models of ``models`` with clean internal confidence >= ``confident``
    (:func:`confident_models`). Per such model its W of ``signal`` on ``task`` ``arm`` with its interval against
    ``[w_min, inf)`` (:func:`w_verdict`; a bound at or above 0.79 is the paper's own "at least 0.79"). Null: the
    confidence falls to its mid-level ``w_min`` decades after accuracy (``W = 0.79``, the edge).
    """
    means = level_means(cube)
    conf = confident_models(cube, models, task, arm, confident)
    subject = [m for m, ok in conf.items() if ok]
    parts, texts = [], []
    for c in _cells(cube, task, arm, subject):
        model = cube.cells.model.iloc[c]
        r = _w_row(spots, model, task, arm, signal)
        texts.append(f"{model}: at {cube.levels_m[-1]:.3g} m acc. {means[c, 0, -1]:.2f}, {signal} "
                     f"{means[c, 1 if signal == 'internal' else 2, -1]:.2f}; W {_w_text(r)}")
        if r is None or r.w_kind == "n/a":
            continue
        parts.append((w_verdict(r.w_kind, r.w_lo, r.w_hi, w_min), r.w, r.w_lo, r.w_hi,
                      w_decide(r, len(cube.scenes), w_min)))
    label = "internal" if signal == "internal" else "verbalized"
    empty = (f"no confident evaluated organism (clean mean internal confidence >= {confident}) that sees"
             if not subject else f"no confident organism with a readable {label} confidence: " + "; ".join(texts))
    return _row(f"confident models keep their {label} confidence high where accuracy is at chance",
                "at V = 1.95 m in fog accuracy is at chance but internal confidence 0.68-0.84, verbalized 0.61-1.00; "
                "W >= 0.79 (abstract, Tables IV, V)",
                f"the {label} confidence falls {w_min} decades after accuracy (W = {w_min}, the edge)",
                f"every model with clean internal confidence >= {confident}: W_{signal} on {task} {arm}, 95 % "
                f"interval over scenes in [{w_min}, inf) (a lower bound counts)", subject, parts, texts, empty,
                section)


def obs_underconfident_follows(cube: SignalCube, means_reps: np.ndarray, spots: pd.DataFrame,
                               models: Sequence[str], *, task: str = "t2", arm: str = "fog",
                               w_follow: float = 0.21, section: str = "paper") -> Claim:
    """The under-confident model's internal confidence follows accuracy (abstract): |W_internal| <= 0.21.

    Under-confident (:func:`underconfident_models`): clean internal confidence below clean accuracy, as the
    paper's SmolVLM2 (clean accuracy 0.85, blank-image confidence 0.38), not merely below the 0.8 that makes a
    model "confident". "Follows" is the paper's own range for a signal that follows accuracy (abstain, W -0.21
    to -0.06): the W interval inside ``[-w_follow, w_follow]``. Null: a confidence lagging by ``w_follow``.
    """
    under = underconfident_models(cube, means_reps, models, task, arm)
    parts, texts = [], []
    for model, (d, lo, hi) in under.items():
        r = _w_row(spots, model, task, arm, "internal")
        texts.append(f"{model}: clean confidence - accuracy {interval_text(d, lo, hi)}, W_internal {_w_text(r)}")
        if r is None or r.w_kind == "n/a":
            continue
        parts.append((w_verdict(r.w_kind, r.w_lo, r.w_hi, -w_follow, w_follow), r.w, r.w_lo, r.w_hi,
                      w_decide(r, len(cube.scenes), -w_follow, w_follow)))
    empty = ("no under-confident evaluated organism that sees (clean mean internal confidence below clean "
             "accuracy, 95 % interval)" if not under else "no readable W_internal: " + "; ".join(texts))
    return _row("the under-confident model's internal confidence follows accuracy",
                "the remaining model is under-confident throughout and its internal confidence follows accuracy "
                "(abstract)", f"the confidence lags accuracy by {w_follow} decades (|W| = {w_follow}, the edge)",
                f"every model whose clean internal confidence lies below its clean accuracy (95 % interval): "
                f"W_internal on {task} {arm}, 95 % interval in [-{w_follow}, {w_follow}]", list(under), parts,
                texts, empty, section)


def abstaining_models(cond, models: Sequence[str], task: str = "t2", low: float = 0.5) -> list[str]:
    """The models of ``models`` that take the abstain option at all: main-wording abstain rate on the blank
    image (nothing to see) at least ``low`` (point estimate; stated)."""
    out = []
    for m in models:
        a = cond.value(m, task, "blank+box", "abstain")[0] if cond is not None else np.nan
        if np.isfinite(a) and a >= low:
            out.append(m)
    return out


def obs_abstain_signed(spots: pd.DataFrame, models: Sequence[str], n_scenes: int, *, task: str = "t2",
                       arm: str = "fog", w_lead: float = -0.21, section: str = "paper") -> Claim:
    """Abstaining with a reason follows accuracy, ahead of it: W_abstain in [-0.21, 0] (abstract, Table V).

    Subject: ``models``, the models that take the abstain option at all (:func:`abstaining_models`). Per such
    model the W interval inside ``[w_lead, 0]``, the sign included (the paper's W are -0.21 to -0.06: the
    abstain rate rises at a clearer V than accuracy falls); a lower bound above 0 (the option is never taken in
    the sweep) fails. Null: the abstain rate rises together with the loss of accuracy, not ahead (W = 0).
    """
    sub = spots[(spots.task == task) & (spots.arm == arm) & (spots.signal == "abstain") & spots.model.isin(models)]
    parts, texts = [], []
    for r in sub.itertuples():
        texts.append(f"{r.model}: {_w_text(r)}")
        if r.w_kind == "n/a":
            continue
        parts.append((w_verdict(r.w_kind, r.w_lo, r.w_hi, w_lead, 0.0), r.w, r.w_lo, r.w_hi,
                      w_decide(r, n_scenes, w_lead, 0.0)))
    empty = ("no evaluated organism takes the abstain option (blank-image abstain rate >= 0.5) and sees"
             if not len(sub) else "no readable W_abstain: " + "; ".join(texts))
    return _row("abstaining with a reason follows accuracy, slightly ahead of it",
                "W_abstain from -0.21 to -0.06 in fog with the main wording (abstract, Table V)",
                "the abstain rate rises with the loss of accuracy, not ahead of it (W = 0, the edge)",
                f"W_abstain on {task} {arm}, 95 % interval over scenes in [{w_lead}, 0], every model that takes the "
                "abstain option", list(models), parts, texts, empty, section)


def obs_idk_lags(cube: SignalCube, reps: dict, models: Sequence[str], *, task: str = "t2", arm: str = "fog",
                 section: str = "paper") -> Claim:
    """With "I don't know" the abstain option lags for some model (Table V: W_abstain2 0.18 against -0.06).

    Per model of ``models`` (those that take the abstain option) whose main-wording W is a value:
    ``W_abstain2 - W_abstain`` paired over the resampled scenes (``reps``: the arrays of
    :func:`~vlmrobust.analysis.visibility.blind_spot.bootstrap`, a bound counting at its value, which
    understates a lag), interval wholly above 0; some model: any part reproduced. Null: the two wordings give
    the same abstain curve.
    """
    cells = _cells(cube, task, arm, models)
    parts, texts = [], []
    w = reps.get("w") if reps else None
    pt = reps.get("point") if reps else None
    for c in cells:
        model = cube.cells.model.iloc[c]
        if w is None or pt is None or not np.isfinite(pt["w"][c, 2]):
            texts.append(f"{model}: W_abstain n/a")
            continue
        d = float(pt["w"][c, 3] - pt["w"][c, 2])
        lo, hi = percentile_interval((w[:, c, 3] - w[:, c, 2]).reshape(-1, 1))
        lo, hi = float(lo[0]), float(hi[0])
        texts.append(f"{model}: W_abstain2 - W_abstain {interval_text(d, lo, hi)}")
        parts.append((verdict(lo, hi, 1e-12), d, lo, hi, decide_text(len(cube.scenes), d, lo, hi, 0.0,
                                                                     unit="scenes")))
    claim = "with 'I don't know' the abstain option lags for some model"
    paper = "W_abstain2 up to 0.18 against W_abstain -0.06 (Qwen3-VL-2B, Table V)"
    null = "the two wordings give the same abstain curve (difference 0)"
    test = (f"W_abstain2 - W_abstain on {task} {arm}, paired over resampled scenes, 95 % interval above 0 for some "
            "model that takes the abstain option")
    if not parts:
        return no_subject(claim, paper, null, test, "no evaluated organism takes the abstain option (blank-image "
                          "abstain rate >= 0.5) with a W_abstain inside the sweep" + (": " + "; ".join(texts)
                                                                                      if texts else ""),
                          section=section)
    verdicts = [p[0] for p in parts]
    v = REPRODUCED if REPRODUCED in verdicts else combine(verdicts)
    pick = next(p for p in parts if p[0] == v) if v in verdicts else parts[0]
    return Claim(claim, paper, ", ".join(models), null, test, pick[1], pick[2], pick[3], "; ".join(texts), v,
                 pick[4] if v == UNDECIDED else "", section)


def obs_t3_no_signal(spots: pd.DataFrame, reps: dict, cube: SignalCube, models: Sequence[str], *,
                     task: str = "t3", ci: float = 0.99, section: str = "paper") -> Claim:
    """On t3 no awareness signal reaches its mid-level inside the sweep (Table V: every t3 W is "≥").

    Over the interpretable (model, arm, signal) cells of ``task`` for ``models``: the share of cells whose W is
    a lower bound, per resample too; region ``[1, 1]``: all of them in all but ``(1 - ci)/2`` of the resamples.
    Null: a signal that reaches its mid-level at the murkiest level. ``ci`` is 0.99, not 0.95: with 12 scenes the
    percentile interval of this share undercovers, and at 0.95 the rule passed about 10 % of null draws
    (:mod:`.rules`).
    """
    sub = spots[(spots.task == task) & (spots.w_kind != "n/a") & spots.model.isin(models)]
    claim, paper = "on t3 no awareness signal reaches its mid-level", "every t3 W of Table V is a lower bound " \
        "(>= 0.94 fog, >= 1.23 water)"
    null = "a signal that reaches its mid-level at the murkiest level (W a value in about half the resamples)"
    test = f"share of interpretable {task} cells whose W is a lower bound, {ci:.0%} interval over scenes at 1"
    if sub.empty:
        return no_subject(claim, paper, null, test, "no interpretable t3 cell of an evaluated organism that sees",
                          section=section)
    point = float((sub.w_kind == "≥").mean())
    cells = _cells(cube, task, None, models)
    if len(reps.get("w_kind", [])):
        kinds = reps["w_kind"][:, cells]
        ok = kinds != 3
        with np.errstate(invalid="ignore", divide="ignore"):  # a resample with no interpretable cell says nothing
            share = (ok & (kinds == 1)).sum(axis=(1, 2)) / ok.sum(axis=(1, 2))
        lo, hi = (float(x[0]) for x in percentile_interval(share.reshape(-1, 1), ci))
    else:
        lo = hi = np.nan
    crossing = sorted({f"{r.model} {r.arm} {r.signal}" for r in sub.itertuples() if r.w_kind != "≥"})
    v = verdict(lo, hi, 1.0)
    return Claim(claim, paper, ", ".join(sorted(set(sub.model))), null, test, point, lo, hi,
                 f"share {interval_text(point, lo, hi)}" + (f"; crossing: {', '.join(crossing[:8])}"
                                                            if crossing else ""), v,
                 "a sweep reaching murkier air, or more scenes (the share is 1 only if no resample crosses)"
                 if v == UNDECIDED else "", section)


def ece_gap_reps(conf: np.ndarray, correct: np.ndarray, murky: np.ndarray, scene_idx: np.ndarray, n_scenes: int,
                 counts_w: np.ndarray, n_bins: int = 10) -> tuple[float, np.ndarray]:
    """ECE(murky) - ECE(clean) of one model's confidences, and its replicates over resampled scenes.

    ``conf``, ``correct``, ``murky`` (bool: a murky level, else clean) and ``scene_idx`` per question;
    ``counts_w`` ``(n_boot, n_scenes)``: how often each scene is drawn. ECE with ``n_bins`` equal-width bins
    (:func:`vlmrobust.stats.calibration.ece`), all resamples at once.
    """
    b = bin_index(conf, n_bins) + n_bins * murky.astype(int)
    gap = np.zeros((n_scenes, 2 * n_bins))
    cnt = np.zeros((n_scenes, 2 * n_bins))
    np.add.at(gap, (scene_idx, b), correct.astype(np.float64) - conf)
    np.add.at(cnt, (scene_idx, b), 1.0)

    def stat(w):
        g, n = w @ gap, w @ cnt
        with np.errstate(invalid="ignore", divide="ignore"):
            clean = np.abs(g[..., :n_bins]).sum(-1) / n[..., :n_bins].sum(-1)
            dark = np.abs(g[..., n_bins:]).sum(-1) / n[..., n_bins:].sum(-1)
        return dark - clean

    return float(stat(np.ones(n_scenes))), stat(counts_w.astype(np.float64)) if len(counts_w) else np.array([])


def calibration_verdict(conf, correct, murky, scene_idx, n_scenes: int, counts_w: np.ndarray,
                        n_bins: int = 10) -> tuple[float, float, float, str]:
    """``(gap, lo, hi, verdict)``: :func:`ece_gap_reps` and its 95 % interval against ``(0, inf)``."""
    d, reps = ece_gap_reps(np.asarray(conf, np.float64), np.asarray(correct, bool), np.asarray(murky, bool),
                           np.asarray(scene_idx), n_scenes, counts_w, n_bins)
    lo, hi = (float(x[0]) for x in percentile_interval(reps.reshape(-1, 1))) if reps.size else (np.nan, np.nan)
    return d, lo, hi, verdict(lo, hi, 1e-12)


def obs_calibration_fog(long: pd.DataFrame, models: Sequence[str], counts_w: np.ndarray, scenes: np.ndarray, *,
                        task: str = "t2", max_v: float = 15.625, n_bins: int = 10, section: str = "paper") -> Claim:
    """Under fog the internal confidence is worse calibrated than on clean images (Fig. 5), per confident model.

    Subject: ``models`` (the confident models that see). ECE (``n_bins`` equal-width bins) of the internal
    confidence on ``task`` over the fog levels ``V <= max_v`` minus its clean ECE (:func:`ece_gap_reps`), with a
    95 % interval over the resampled scenes (``counts_w`` over ``scenes``, those of the blind-spot table); region
    ``(0, inf)``. Null: a confidence as calibrated under fog as on clean images (right with the probability it
    states, in both).
    """
    sub = long[(long.task == task) & (long.signal == "internal") & (long.arm == "fog") & long.value.notna()
               & long.model.isin(list(models))]
    sub = sub[np.isinf(sub.V) | (sub.V <= max_v)]
    pos = pd.Index(scenes)
    parts, texts = [], []
    for model in models:
        g = sub[sub.model == model]
        if g.empty:
            continue
        d, lo, hi, v = calibration_verdict(g.value.to_numpy(np.float64), g.correct.astype(bool).to_numpy(),
                                           np.isfinite(g.V.to_numpy()), pos.get_indexer(g.scene), len(scenes),
                                           counts_w, n_bins)
        texts.append(f"{model}: ECE murky - clean {interval_text(d, lo, hi)}")
        parts.append((v, d, lo, hi, decide_text(len(scenes), d, lo, hi, 0.0, unit="scenes")))
    return _row("under fog the internal confidence is far worse calibrated than on clean images",
                f"Fig. 5: pooled over V <= {max_v:g} m the confident models' internal confidence lies far above their "
                "accuracy; on clean images near the diagonal",
                "a confidence as calibrated under fog as on clean images (right as often as it says, in both)",
                f"ECE (fog, V <= {max_v:g} m) - ECE (clean) of the internal confidence on {task}, 95 % interval over "
                "scenes above 0, every confident model", list(models), parts, texts,
                "no confident evaluated organism (clean mean internal confidence >= 0.8) that sees", section)
