"""Notebook 06's figures and table layouts (vlmrobust.analysis.visibility.figures / .tables), on hand-made tables."""

from __future__ import annotations

import math

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402
from figtools import close_figures  # noqa: F401
from matplotlib.container import ErrorbarContainer  # noqa: E402
from matplotlib.patches import Rectangle  # noqa: E402

from vlmrobust import corrupt, data  # noqa: E402
from vlmrobust.analysis.visibility import blind_spot as vis  # noqa: E402
from vlmrobust.analysis.visibility import figures as vfig  # noqa: E402
from vlmrobust.analysis.visibility import tables as vtab  # noqa: E402
from vlmrobust.synth import visibility as sv  # noqa: E402

LEVELS = (100.0, 10.0, 1.0)
MODELS = ["a", "b"]
COLORS = {"a": "#0072B2", "b": "#E69F00"}


def _curve(model: str, signal: str) -> list[float]:
    """Clean value then one value per level: accuracy falls, internal confidence stays, abstain rises."""
    drop = 0.1 if model == "a" else 0.2
    if signal == "accuracy":
        return [0.9, 0.9 - drop, 0.9 - 2 * drop, 0.3]
    if signal == "internal":
        return [0.8, 0.8, 0.75, 0.7]
    if signal == "abstain":
        return [0.0, 0.1, 0.4, 0.9]
    return [0.1, 0.1, 0.2, 0.3]  # abstain2


@pytest.fixture(scope="module")
def cube_means():
    """A cube of two models, two tasks, two arms and two scenes; no verbalized confidence (none parsed)."""
    rows = []
    for m in MODELS:
        for task, chance in (("t2", 0.25), ("t3", 0.5)):
            for arm in ("fog", "water"):
                for sig in ("accuracy", "internal", "abstain", "abstain2"):
                    for v, y in zip((math.inf, *LEVELS), _curve(m, sig), strict=True):
                        for scene in ("s0", "s1"):
                            rows.append({"model": m, "task": task, "arm": arm, "V": v, "scene": scene, "signal": sig,
                                         "value": y, "chance": chance})
    cube = vis.signal_cube(pd.DataFrame(rows))
    return cube, vis.level_means(cube)


# ----------------------------------------------------------------------------- tables


def test_cell_index_finds_the_cell_and_names_a_missing_one(cube_means):
    cube, _ = cube_means
    c = vtab.cell_index(cube, "b", "t3", "water")
    assert tuple(cube.cells.loc[c, ["model", "task", "arm"]]) == ("b", "t3", "water")
    with pytest.raises(KeyError, match="model 'zz'"):
        vtab.cell_index(cube, "zz", "t2", "fog")


def test_signal_tables_one_row_per_cell_and_signal_in_order(cube_means):
    cube, means = cube_means
    t = vtab.signal_tables(cube, means)
    assert list(t.columns) == ["model", "task", "arm", "signal", "clean", "100", "10", "1"]
    assert len(t) == len(cube.cells) * len(vis.SIGNALS)
    first = t.iloc[: len(vis.SIGNALS)]
    assert list(first.signal) == list(vis.SIGNALS) and set(first.task) == {"t2"} and set(first.model) == {"a"}
    acc = t[(t.model == "b") & (t.task == "t3") & (t.arm == "water") & (t.signal == "accuracy")].iloc[0]
    assert [acc.clean, acc["100"], acc["10"], acc["1"]] == pytest.approx(_curve("b", "accuracy"))
    assert t[t.signal == "verbal"][["clean", "1"]].isna().all().all()


def test_murky_table_reads_the_levels_the_sweep_has(cube_means):
    cube, means = cube_means
    t = vtab.murky_table(cube, means, (10.0, 7.8125))  # 7.8125 m is not in this sweep
    assert list(t.columns) == ["model", "task", "arm"] + [f"V=10 m {s}" for s in vtab.SHORT_SIGNALS]
    c = vtab.cell_index(cube, "a", "t2", "fog")
    assert t.loc[c, "V=10 m Acc."] == pytest.approx(0.7) and t.loc[c, "V=10 m Abst."] == pytest.approx(0.4)


def _summary(model, task, pert, level, **vals):
    return {"model": model, "task": task, "perturbation": pert, "level": level, "param": np.nan, **vals}


def test_controls_table_picks_each_control_and_leaves_absent_ones_nan():
    summ = pd.DataFrame([_summary("a", "t2", "clean", 0, accuracy=0.9, internal=0.8, n_questions=4),
                         _summary("a", "t2", "blank+box", 1, accuracy=0.3, internal=0.6, abstain=0.2, abstain2=0.1,
                                  n_questions=4),
                         _summary("a", "t2", "sky_only_fog+box", 1, accuracy=0.5, internal=0.7, n_questions=4)])
    shuf = pd.DataFrame([_summary("a", "t2", "clean", 0, accuracy=0.26)])
    verbal = pd.DataFrame([_summary("a", "t2", "blank+box", 1, verbal=0.77)])
    t = vtab.controls_table(summ, shuf, verbal, ["a"], sky_only=True)
    assert list(t.task) == ["t2", "t3"] and list(t.chance) == [0.25, 0.5]
    r = t.iloc[0]
    assert (r.clean, r.blank_accuracy, r.shuffled_accuracy, r.blank_verbal, r.blank_abstain2, r.n) == (
        0.9, 0.3, 0.26, 0.77, 0.1, 4.0)
    assert r.sky_only_fog_accuracy == 0.5 and math.isnan(r.sky_only_water_accuracy)
    assert t.iloc[1][["clean", "blank_accuracy"]].isna().all()
    assert "sky_only_fog_accuracy" not in vtab.controls_table(summ, shuf, verbal, ["a"], sky_only=False)


def _table7():
    return pd.DataFrame({"severity": [1, 2], "mean_gain": [0.6, 0.4], "analytic_gain": [0.6, 0.4],
                         "median_v_m": [100.0, 10.0], "iqr_lo_m": [80.0, 8.0], "iqr_hi_m": [400.0, 12.0],
                         "p90_over_p10": [2.0, 2.0]})


def _fog_summary():
    return pd.DataFrame([_summary(m, "t2", "fog+box", s, accuracy=acc, n_questions=10)
                         for m in MODELS for s, acc in ((1, 0.8), (2, 0.5))])


def test_fog_severity_table_adds_accuracy_and_curve_at_v_eq(cube_means):
    cube, means = cube_means
    t = vtab.fog_severity_table(_table7(), _fog_summary(), cube, means, MODELS)
    assert list(t["a acc."]) == [0.8, 0.5]
    # the fog curve of t2 at the median V_eq: 100 m and 10 m are levels of the sweep
    assert list(t["b acc. at V_eq"]) == pytest.approx(_curve("b", "accuracy")[1:3])
    assert "p10_m" not in t.columns


# ----------------------------------------------------------------------------- figures


def test_scene_figure_panels_and_titles():
    s = sv.synth_scenes(2, seed=5)
    img, dep = data.load_image(s.clean_ref[0]), data.load_depth(s.depth_ref[0])
    other = data.load_image(s.image_ref[1])
    fig = vfig.scene_figure(img, dep, s.scene_id[0], other, seed=0, levels=[1, 8])
    grid = fig.axes[:30]
    assert len(fig.axes) == 31  # 5 rows of 6 panels and the depth colour bar
    titles = [ax.get_title() for ax in grid]
    assert titles[:4] == ["clean", "depth (m)", "t at V = 62.5 m", "t at V = 7.8125 m"]
    assert titles[6:8] == ["fog 250 m", "fog 1.95312 m"] and titles[12:14] == ["water 250 m", "water 1.95312 m"]
    assert titles[18:23] == [f"severity {s}" for s in range(1, 6)]
    assert titles[24:28] == ["sky_only_fog", "sky_only_water", "blank", "shuffled"]
    assert [ax.axison for ax in grid[6:12]] == [True, True, False, False, False, False]
    np.testing.assert_array_equal(grid[27].images[0].get_array(), other)
    fog = corrupt.apply(img, "fog_physical+box", 8, seed=0, key=s.scene_id[0], depth=dep)
    np.testing.assert_array_equal(grid[7].images[0].get_array(), fog)
    with pytest.raises(ValueError, match="at most 6 levels"):
        vfig.scene_figure(img, dep, s.scene_id[0], other, levels=range(1, 8))


def test_signals_figure_lines_chance_and_na_panels(cube_means):
    cube, means = cube_means
    fig = vfig.signals_figure(cube, means, COLORS, "t3", "Fig. 8: test")
    axes = np.array(fig.axes).reshape(2, len(vis.SIGNALS))
    assert [ax.get_title() for ax in axes[1]] == [f"water: {s}" for s in vis.SIGNALS]
    acc = axes[0, 0]
    assert len(acc.lines) == 2 * 2 + 1  # per model a curve and its clean square, then the chance line
    assert list(acc.lines[-1].get_ydata()) == [0.5, 0.5]  # t3's chance
    np.testing.assert_allclose(acc.lines[2].get_ydata(), _curve("b", "accuracy")[1:])
    assert acc.lines[2].get_color() == COLORS["b"]
    verbal = axes[0, vis.SIGNALS.index("verbal")]
    assert not verbal.lines and [t.get_text() for t in verbal.texts] == ["n/a: not parseable"]
    assert len(axes[0, vis.SIGNALS.index("abstain")].lines) == 4  # no chance line for abstain
    assert [t.get_text() for t in fig.legends[0].get_texts()] == MODELS
    assert fig._suptitle.get_text() == "Fig. 8: test"
    with pytest.raises(ValueError, match="no cell of task 't9'"):
        vfig.signals_figure(cube, means, COLORS, "t9", "x")


def _spots():
    rows = []
    for sig, (w, kind, lo, hi) in zip(vis.AWARE_SIGNALS, [(0.5, "=", 0.3, 0.7), (0.8, "≥", np.nan, np.nan),
                                                          (-0.2, "≤", -0.4, -0.1), (np.nan, "n/a", np.nan, np.nan)],
                                      strict=True):
        rows.append({"model": "a", "task": "t2", "arm": "fog", "signal": sig, "w": w, "w_kind": kind, "w_lo": lo,
                     "w_hi": hi})
    rows += [{"model": "a", "task": "t2", "arm": "water", "signal": sig, "w": np.nan, "w_kind": "n/a",
              "w_lo": np.nan, "w_hi": np.nan} for sig in vis.AWARE_SIGNALS]
    return pd.DataFrame(rows)


def test_blind_spot_figure_bars_bounds_and_na():
    fig = vfig.blind_spot_figure(_spots())
    ax = fig.axes[0]
    bars = [p for p in ax.patches if isinstance(p, Rectangle)]
    assert len(bars) == 3  # the n/a signal has no bar, the all-n/a group none at all
    assert [b.get_hatch() for b in bars] == [None, "///", "..."]
    assert [b.get_height() for b in bars] == pytest.approx([0.5, 0.8, -0.2])
    assert sum(isinstance(c, ErrorbarContainer) for c in ax.containers) == 2  # the lower bound has no interval
    assert [t.get_text() for t in ax.texts] == ["n/a"] and ax.texts[0].get_position()[0] == 1
    assert [t.get_text() for t in ax.get_xticklabels()] == ["a · fog", "a · water"]
    assert len(fig.legends[0].get_texts()) == len(vis.AWARE_SIGNALS) + 2
    with pytest.raises(ValueError, match="empty"):
        vfig.blind_spot_figure(_spots().iloc[:0])


def test_reliability_figure_one_panel_per_model_with_ece_in_legend():
    rel = pd.DataFrame({"model": ["a", "a", "a", "b"], "pool": ["clean", "clean", "murky", "clean"],
                        "n": [5, 0, 3, 4], "confidence": [0.9, 0.5, 0.8, 0.7], "accuracy": [0.8, np.nan, 0.3, 0.7]})
    rel_sum = pd.DataFrame({"model": ["a", "a", "b"], "pool": ["clean", "murky", "clean"], "n": [5, 3, 4],
                            "ece": [0.1, 0.5, 0.0]})
    fig = vfig.reliability_figure(rel, rel_sum, MODELS, 15.625)
    a, b = fig.axes
    assert len(a.lines) == 3 and len(b.lines) == 2  # b has no murky pool; the diagonal in both
    assert list(a.lines[0].get_xdata()) == [0.9]  # the empty bin is left out
    assert [t.get_text() for t in a.get_legend().get_texts()] == ["clean (ECE 0.10, n 5)", "murky (ECE 0.50, n 3)"]
    assert "V <= 15.625 m" in fig._suptitle.get_text()


def test_abstain_figure_three_curves_per_panel(cube_means):
    cube, means = cube_means
    fig = vfig.abstain_figure(cube, means, MODELS)
    assert len(fig.axes) == 4 and fig.axes[1].get_title() == "b · fog"
    ax = fig.axes[3]  # water, model b
    assert [ln.get_label() for ln in ax.lines] == ["accuracy", "abstain", "abstain2"]
    np.testing.assert_allclose(ax.lines[1].get_ydata(), _curve("b", "abstain")[1:])
    with pytest.raises(KeyError):
        vfig.abstain_figure(cube, means, ["zz"])


def test_transmittance_figure_keeps_bins_with_enough_questions():
    acc_t = pd.DataFrame({"model": ["a"] * 4, "task": ["t2", "t2", "t2", "t3"], "arm": ["fog", "fog", "water", "fog"],
                          "t_mean": [0.01, 0.5, 0.2, 0.3], "n": [2, 9, 6, 6], "accuracy": [0.2, 0.8, 0.5, 0.6]})
    fig = vfig.transmittance_figure(acc_t, ["a"], {"a": "#123456"}, min_n=5)
    t2, t3 = fig.axes
    assert list(t2.lines[0].get_xdata()) == [0.5]  # the bin with n 2 is dropped
    assert [ln.get_label() for ln in t2.lines[:2]] == ["a fog", "a water"]
    assert list(t2.lines[-1].get_ydata()) == [0.25, 0.25] and list(t3.lines[-1].get_ydata()) == [0.5, 0.5]
    assert t2.get_ylabel() == "accuracy (bins with n >= 5)"


def test_imagenet_fog_figure_points_annotations_and_range(cube_means):
    cube, means = cube_means
    summ = _fog_summary()
    table7 = vtab.fog_severity_table(_table7(), summ, cube, means, MODELS)
    fig = vfig.imagenet_fog_figure(table7, summ, cube, means, MODELS, COLORS)
    ax = fig.axes[0]
    assert sum(isinstance(c, ErrorbarContainer) for c in ax.containers) == len(MODELS) * len(table7)
    assert [t.get_text() for t in ax.texts] == ["s1", "s2"]
    assert ax.get_xlim()[0] == pytest.approx(2 * 400.0 * 1.3)  # twice the widest IQR, beyond 250 m
    first = ax.containers[0]
    assert first.lines[0].get_ydata()[0] == pytest.approx(0.8)
    half = 1.96 * math.sqrt(0.8 * 0.2 / 10)  # binomial 95 % interval of the accuracy, n 10
    seg = first.lines[2][-1].get_segments()[0]
    assert seg[1][1] - seg[0][1] == pytest.approx(2 * half)
