"""Seed 003's printed tables laid out from the run's signal means and summaries (notebook 06).

Presentation only: every number here is computed elsewhere —
:func:`~vlmrobust.analysis.visibility.blind_spot.level_means` (the means of a
:class:`~vlmrobust.analysis.visibility.blind_spot.SignalCube`),
:func:`~vlmrobust.analysis.visibility.readouts.condition_summary`,
:func:`~vlmrobust.analysis.visibility.readouts.calibration_by_level` and
:func:`~vlmrobust.analysis.visibility.readouts.imagenet_fog_visibility` — and these
functions only select, join and name it the way seed 003 prints it:

* :func:`table_v`, :func:`format_w`, :func:`format_v` — Table V's text cells;
* :func:`signal_tables` — Tables IX–X (every signal at every level);
* :func:`murky_table` — Table IV (two murky levels);
* :func:`fog_severity_table` — Table VII (ImageNet-C severities in metres, with each model's accuracy);
* :func:`controls_table` — Table VIII (blank, shuffled and sky-only images);
* :func:`parse_rate_table`, :func:`calibration_wide` — the notebook's wide views of the parse rate and of
  calibration per level (Fig. 5's section).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from ...schema import CLEAN
from .blind_spot import AWARE_SIGNALS, SIGNALS, SignalCube
from .readouts import interp_log_v

__all__ = ["format_w", "format_v", "table_v", "SHORT_SIGNALS", "cell_index", "level_columns", "signal_tables",
           "murky_table", "parse_rate_table", "calibration_wide", "fog_severity_table", "controls_table"]

#: Table IV's short names of :data:`~vlmrobust.analysis.visibility.blind_spot.SIGNALS`, in that order.
SHORT_SIGNALS = ("Acc.", "Int.", "Verb.", "Abst.", "Abst. 2")


def cell_index(cube: SignalCube, model: str, task: str, arm: str) -> int:
    """The row of ``cube.cells`` for ``(model, task, arm)``; a clear error when the cube has no such cell."""
    hit = np.flatnonzero((cube.cells.model == model) & (cube.cells.task == task) & (cube.cells.arm == arm))
    if not hit.size:
        raise KeyError(f"the signal cube has no cell (model {model!r}, task {task!r}, arm {arm!r})")
    return int(hit[0])


def level_columns(cube: SignalCube) -> list[str]:
    """Column names of the levels: ``clean`` then each visibility in metres (``%g``), clearest first."""
    return ["clean"] + [f"{v:g}" for v in cube.levels_m]


def signal_tables(cube: SignalCube, means: np.ndarray) -> pd.DataFrame:
    """Seed 003 Tables IX (t2) and X (t3) in one frame: one row per (model, task, arm, signal), one column a level.

    ``means`` is :func:`~vlmrobust.analysis.visibility.blind_spot.level_means` of ``cube``
    (cells × signals × (1 + levels)). Rows are sorted by task, model, arm and
    signal (in :data:`SIGNALS` order); NaN where a signal has no data (no
    parseable verbalized confidence).
    """
    cols = level_columns(cube)
    out = pd.concat([
        pd.DataFrame(means[:, k, :], columns=cols).assign(signal=sig, **cube.cells[["model", "task", "arm"]])
        for k, sig in enumerate(SIGNALS)], ignore_index=True)
    out = out[["model", "task", "arm", "signal", *cols]]
    out["signal"] = pd.Categorical(out["signal"], SIGNALS)
    return out.sort_values(["task", "model", "arm", "signal"], kind="stable").reset_index(drop=True)


def murky_table(cube: SignalCube, means: np.ndarray, levels_m: Sequence[float] = (7.8125, 1.953125)) -> pd.DataFrame:
    """Seed 003 Table IV: every signal's mean at the murky levels ``levels_m`` (those the sweep has), per cell.

    Columns ``model, task, arm`` and then ``V=<v> m <signal>`` for each level
    and each of :data:`SHORT_SIGNALS`; a level the sweep lacks is left out.
    """
    murky = [v for v in levels_m if v in set(cube.levels_m)]
    parts = []
    for v in murky:
        li = 1 + int(np.flatnonzero(cube.levels_m == v)[0])
        part = pd.DataFrame(means[:, :, li], columns=list(SHORT_SIGNALS))
        part.columns = pd.MultiIndex.from_product([[f"V={v:g} m"], part.columns])
        parts.append(part)
    return pd.concat([cube.cells[["model", "task", "arm"]]] + [p.set_axis(
        [f"{a} {b}" for a, b in p.columns], axis=1) for p in parts], axis=1)


def parse_rate_table(summary: pd.DataFrame, arms: Mapping[str, str]) -> pd.DataFrame:
    """The verbalized confidence's parse rate per (model, task) and level (``clean`` or V in metres).

    ``summary`` is :func:`~vlmrobust.analysis.visibility.readouts.condition_summary`
    of the ``verbal`` predictions; only the clean condition and the perturbations
    of ``arms`` are kept.
    """
    sub = summary[summary.perturbation.isin([*arms, CLEAN])].assign(
        V=lambda d: np.where(d.perturbation == CLEAN, "clean", d.param.map(lambda v: f"{v:g}")))
    return sub.pivot_table(index=["model", "task"], columns="V", values="verbal_parse", sort=False)


def calibration_wide(cal: pd.DataFrame) -> pd.DataFrame:
    """:func:`~vlmrobust.analysis.visibility.readouts.calibration_by_level` with one column per (metric, level).

    Rows (model, task, arm, signal); columns ``ece`` and ``auroc`` at ``clean``
    and at each V in metres (``%g``).
    """
    return cal.assign(level=np.where(np.isinf(cal.V), "clean", cal.V.map(lambda v: f"{v:g}"))).pivot_table(
        index=["model", "task", "arm", "signal"], columns="level", values=["ece", "auroc"], sort=False)


def fog_severity_table(table7: pd.DataFrame, summary: pd.DataFrame, cube: SignalCube, means: np.ndarray,
                       models: Sequence[str], *, perturbation: str = "fog+box", arm: str = "fog") -> pd.DataFrame:
    """Seed 003 Table VII: each ImageNet-C fog severity's gain and V_eq, with each model's t2 accuracy.

    ``table7`` is the summary of
    :func:`~vlmrobust.analysis.visibility.readouts.imagenet_fog_visibility`;
    ``summary`` is :func:`~vlmrobust.analysis.visibility.readouts.condition_summary`
    of the main predictions. Per model two columns: ``<m> acc.`` (t2 accuracy
    under ``perturbation`` at that severity) and ``<m> acc. at V_eq`` (the
    physical ``arm`` curve of t2 interpolated in log V at the median V_eq).
    """
    t2 = summary[summary.task == "t2"]
    out = table7[["severity", "mean_gain", "analytic_gain", "median_v_m", "iqr_lo_m", "iqr_hi_m",
                  "p90_over_p10"]].copy()
    for m in models:
        acc_sev = t2[(t2.model == m) & (t2.perturbation == perturbation)].set_index("level")["accuracy"]
        out[f"{m} acc."] = out.severity.map(acc_sev)
        c = cell_index(cube, m, "t2", arm)
        out[f"{m} acc. at V_eq"] = interp_log_v(cube.levels_m, means[c, 0, 1:], out.median_v_m)
    return out


def controls_table(summary: pd.DataFrame, shuffled: pd.DataFrame, verbal: pd.DataFrame, models: Sequence[str],
                   *, sky_only: bool = True) -> pd.DataFrame:
    """Seed 003 Table VIII: accuracy and awareness on the image controls, one row per (model, task).

    ``summary``, ``shuffled`` and ``verbal`` are
    :func:`~vlmrobust.analysis.visibility.readouts.condition_summary` of the main,
    the shuffled-image and the verbalized-confidence predictions. Columns:
    ``chance`` (1/4 for t2, 1/2 for t3), ``clean``, ``blank_accuracy``,
    ``shuffled_accuracy``, ``blank_internal``, ``blank_verbal``, ``blank_abstain``,
    ``blank_abstain2``, ``n`` (questions on the blank image) and, with
    ``sky_only``, ``sky_only_fog_accuracy``, ``sky_only_water_accuracy``,
    ``sky_only_fog_internal``. NaN where a condition or signal is absent.
    """
    rows = []
    for m in models:
        for task in ("t2", "t3"):
            def pick(frame, pert, col, m=m, task=task):
                g = frame[(frame.model == m) & (frame.task == task) & (frame.perturbation == pert)]
                return float(g[col].iloc[0]) if len(g) and col in g else np.nan
            row = {"model": m, "task": task, "chance": 0.25 if task == "t2" else 0.5,
                   "clean": pick(summary, "clean", "accuracy"),
                   "blank_accuracy": pick(summary, "blank+box", "accuracy"),
                   "shuffled_accuracy": pick(shuffled, "clean", "accuracy"),
                   "blank_internal": pick(summary, "blank+box", "internal"),
                   "blank_verbal": pick(verbal, "blank+box", "verbal"),
                   "blank_abstain": pick(summary, "blank+box", "abstain"),
                   "blank_abstain2": pick(summary, "blank+box", "abstain2"),
                   "n": pick(summary, "blank+box", "n_questions")}
            if sky_only:
                row["sky_only_fog_accuracy"] = pick(summary, "sky_only_fog+box", "accuracy")
                row["sky_only_water_accuracy"] = pick(summary, "sky_only_water+box", "accuracy")
                row["sky_only_fog_internal"] = pick(summary, "sky_only_fog+box", "internal")
            rows.append(row)
    return pd.DataFrame(rows)


def format_w(w: float, kind: str, lo: float = np.nan, hi: float = np.nan) -> str:
    """Seed 003's cell format: ``-0.06 [-0.08, -0.04]``, ``≥ 0.80 [0.78, 0.82]``, ``n/a``."""
    if kind == "n/a" or not np.isfinite(w):
        return "n/a"
    head = f"{w:.2f}" if kind == "=" else f"{kind} {w:.2f}"
    return head + (f" [{lo:.2f}, {hi:.2f}]" if np.isfinite(lo) and np.isfinite(hi) else "")


def format_v(v: float, kind: str) -> str:
    """V_acc as printed: ``12.4``, ``707``, ``≥ 250``, ``< 1.95``, ``n/a`` (three digits, no exponent)."""
    if kind == "n/a" or not np.isfinite(v):
        return "n/a"
    text = f"{v:.0f}" if v >= 100 else f"{v:.3g}"
    return text if kind == "=" else f"{kind} {text}"


def table_v(spots: pd.DataFrame) -> pd.DataFrame:
    """Table V as printed: one row per (model, task, arm) with ``V_acc (m)`` and ``W <signal>`` text cells."""
    rows = []
    for (model, task, arm), g in spots.groupby(["model", "task", "arm"], sort=False):
        g = g.set_index("signal")
        first = g.iloc[0]
        row = {"model": model, "task": task, "arm": arm, "V_acc (m)": format_v(first.v_acc, first.v_acc_kind)}
        for sig in AWARE_SIGNALS:
            r = g.loc[sig]
            row[f"W {sig}"] = format_w(r.w, r.w_kind, r.w_lo, r.w_hi)
        rows.append(row)
    return pd.DataFrame(rows)
