"""Notebook 06's figures, their sentences of finding and table layouts (visibility.figures / .tables), on hand-made
tables."""

from __future__ import annotations

import math

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402
from figtools import close_figures  # noqa: F401
from matplotlib.container import ErrorbarContainer  # noqa: E402

from vlmrobust import corrupt, data  # noqa: E402
from vlmrobust import figures as vfigs  # noqa: E402
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
    assert len(fig.axes) == 32  # 5 rows of 6 panels, the depth and the transmittance colour bars
    titles = [ax.get_title() for ax in grid]
    assert titles[:4] == ["clean", "depth (m)", "t at V = 62.5 m", "t at V = 7.81 m"]
    assert titles[6:8] == ["fog 250 m", "fog 1.95 m"] and titles[12:14] == ["water 250 m", "water 1.95 m"]
    assert titles[18:23] == [f"ImageNet-C s{s}" for s in range(1, 6)]
    assert titles[24:28] == ["sky only fog", "sky only water", "blank", "shuffled"]
    assert [ax.axison for ax in grid[6:12]] == [True, True, False, False, False, False]
    np.testing.assert_array_equal(grid[27].images[0].get_array(), other)
    fog = corrupt.apply(img, "fog_physical+box", 8, seed=0, key=s.scene_id[0], depth=dep)
    np.testing.assert_array_equal(grid[7].images[0].get_array(), fog)
    assert fig.get_size_inches()[0] <= 7.5  # a page's width
    with pytest.raises(ValueError, match="at most 6 levels"):
        vfig.scene_figure(img, dep, s.scene_id[0], other, levels=range(1, 8))


def _model_lines(ax):
    return [ln for ln in ax.lines if not ln.get_label().startswith("_")]


def test_signals_figure_rows_of_signals_columns_of_arms(cube_means):
    cube, means = cube_means
    fig = vfig.signals_figure(cube, means, MODELS, "t3", "Fig. 8: test")
    axes = np.array(fig.axes).reshape(len(vis.SIGNALS), 2)
    assert [ax.get_title() for ax in axes[0]] == ["fog", "water"]
    assert [ax.get_ylabel() for ax in axes[:, 0]] == list(vis.SIGNALS)
    acc = axes[0, 1]  # water, accuracy
    curves = _model_lines(acc)
    assert [ln.get_label() for ln in curves] == MODELS  # the curves; the clean points carry no label
    np.testing.assert_allclose(curves[1].get_xdata(), LEVELS)
    np.testing.assert_allclose(curves[1].get_ydata(), _curve("b", "accuracy")[1:])
    styles = vfigs.model_styles(MODELS)
    assert [(ln.get_color(), ln.get_marker()) for ln in curves] == [(styles[m]["color"], styles[m]["marker"])
                                                                    for m in MODELS]
    assert curves[0].get_marker() != curves[1].get_marker()  # told apart by more than colour
    clean_b = [ln for ln in acc.lines if ln.get_label().startswith("_child") and ln.get_color() == styles["b"]["color"]]
    assert [float(clean_b[0].get_ydata()[0])] == [_curve("b", "accuracy")[0]]
    chance = [ln for ln in acc.lines if ln.get_label() == "_chance"]
    assert len(chance) == 1 and list(chance[0].get_ydata()) == [0.5, 0.5]  # t3's chance
    verbal = axes[vis.SIGNALS.index("verbal"), 0]
    assert not _model_lines(verbal) and [t.get_text() for t in verbal.texts] == ["n/a: not parseable"]
    assert not [ln for ln in axes[vis.SIGNALS.index("abstain"), 0].lines if ln.get_label() == "_chance"]
    assert acc.get_xlim()[0] > acc.get_xlim()[1]  # murkier to the right, on a log axis
    assert acc.get_xscale() == "log" and "clean" in [t.get_text() for t in axes[-1, 0].get_xticklabels()]
    assert [t.get_text() for t in fig.legends[0].get_texts()] == MODELS
    assert fig._suptitle.get_text() == "Fig. 8: test"
    assert fig.get_size_inches()[0] <= 7.5
    with pytest.raises(ValueError, match="no cell of task 't9'"):
        vfig.signals_figure(cube, means, MODELS, "t9", "x")


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


def test_blind_spot_figure_marks_values_bounds_intervals_and_na():
    fig = vfig.blind_spot_figure(_spots())
    fog, water = fig.axes
    assert [fog.get_title(), water.get_title()] == ["t2 · fog", "t2 · water"]
    marks = [ln for ln in fog.lines if ln.get_linestyle() == "None"]
    assert [float(ln.get_xdata()[0]) for ln in marks] == pytest.approx([0.5, 0.8, -0.2])  # the n/a signal: none
    assert [ln.get_markerfacecolor() == "white" for ln in marks] == [False, True, True]  # bounds hollow
    assert [ln.get_marker() for ln in marks] == [vfig.SIGNAL_STYLES[s]["marker"] for s in vis.AWARE_SIGNALS[:3]]
    intervals = [sorted(ln.get_xdata()) for ln in fog.lines if ln.get_label() == "_interval"]
    assert intervals == [pytest.approx([0.3, 0.7]), pytest.approx([-0.4, -0.1])]  # the lower bound has none
    arrows = [(a.xyann[0], a.xy[0]) for a in fog.texts]
    assert arrows[0][1] > arrows[0][0] == pytest.approx(0.8) and arrows[1][1] < arrows[1][0] == pytest.approx(-0.2)
    assert [t.get_text() for t in water.texts] == ["n/a"] and not [ln for ln in water.lines if ln.get_xdata()[0] != 0]
    assert [t.get_text() for t in fog.get_yticklabels()] == ["a"]
    assert len(fig.legends[0].get_texts()) == len(vis.AWARE_SIGNALS) + 2
    with pytest.raises(ValueError, match="empty"):
        vfig.blind_spot_figure(_spots().iloc[:0])


def _rel():
    rel = pd.DataFrame({"model": ["a", "a", "a", "b"], "pool": ["clean", "clean", "murky", "clean"],
                        "n": [5, 0, 3, 4], "confidence": [0.9, 0.5, 0.8, 0.7], "accuracy": [0.8, np.nan, 0.3, 0.7]})
    rel_sum = pd.DataFrame({"model": ["a", "a", "b"], "pool": ["clean", "murky", "clean"], "n": [5, 3, 4],
                            "ece": [0.1, 0.5, 0.0], "confidence": [0.9, 0.8, 0.7], "accuracy": [0.8, 0.3, 0.7]})
    return rel, rel_sum


def test_reliability_figure_one_panel_per_model_with_ece_and_intervals():
    rel, rel_sum = _rel()
    fig = vfig.reliability_figure(rel, rel_sum, MODELS, 15.625)
    a, b = fig.axes
    assert [a.get_title(loc="left"), b.get_title(loc="left")] == MODELS
    assert len(a.lines) == 3 and len(b.lines) == 2  # b has no murky pool; the diagonal in both
    assert list(a.lines[0].get_xdata()) == [0.9]  # the empty bin is left out
    assert [t.get_text() for t in a.texts] == ["ECE 0.10, n 5", "ECE 0.50"]  # n differs by model for clean only
    murky = [c for c in a.containers if isinstance(c, ErrorbarContainer)][1]
    seg = murky.lines[2][0].get_segments()[0]
    assert (seg[0][1], seg[1][1]) == pytest.approx((0.0, 0.3 + 1.96 * math.sqrt(0.3 * 0.7 / 3)))  # clipped at 0
    assert [t.get_text() for t in fig.legends[0].get_texts()] == ["clean",
                                                                  "murky (n 3 per model, V <= 15.625 m, fog + water)"]


def test_abstain_figure_two_panels_per_model_three_curves_each(cube_means):
    cube, means = cube_means
    fig = vfig.abstain_figure(cube, means, MODELS)
    assert [ax.get_title() for ax in fig.axes] == ["a · fog", "a · water", "b · fog", "b · water"]
    ax = fig.axes[3]  # water, model b
    assert [ln.get_label() for ln in ax.lines] == ["accuracy", "abstain", "abstain2 (I don't know)",
                                                   "chance (accuracy)"]
    assert [ln.get_linestyle() for ln in ax.lines[:3]] == ["-", "--", ":"]
    np.testing.assert_allclose(ax.lines[1].get_ydata(), _curve("b", "abstain")[1:])
    assert list(ax.lines[3].get_ydata()) == [0.25, 0.25]
    assert fig.get_size_inches()[0] <= 7.5
    with pytest.raises(KeyError):
        vfig.abstain_figure(cube, means, ["zz"])


def _acc_t():
    return pd.DataFrame({"model": ["a"] * 5, "task": ["t2", "t2", "t2", "t3", "t2"],
                         "arm": ["fog", "fog", "water", "fog", "fog"], "t_mean": [0.01, 0.5, 0.2, 0.3, 0.9],
                         "n": [2, 9, 6, 6, 20], "accuracy": [0.2, 0.4, 0.5, 0.6, 0.8]})


def test_transmittance_figure_keeps_bins_with_enough_questions_and_draws_bands():
    fig = vfig.transmittance_figure(_acc_t(), ["a"], min_n=5)
    t2, t3 = fig.axes
    assert [t2.get_title(), t3.get_title()] == ["a · t2", "a · t3"]
    assert list(t2.lines[0].get_xdata()) == [0.5, 0.9]  # the bin with n 2 is dropped
    assert [ln.get_label() for ln in t2.lines[:2]] == ["fog (band: 95 % interval)", "water (band: 95 % interval)"]
    assert list(t2.lines[-1].get_ydata()) == [0.25, 0.25] and list(t3.lines[-1].get_ydata()) == [0.5, 0.5]
    band = t2.collections[0].get_paths()[0].vertices[:, 1]
    half = 1.96 * math.sqrt(0.4 * 0.6 / 9)
    assert band.min() == pytest.approx(0.4 - half) and band.max() == pytest.approx(0.8 + 1.96 * math.sqrt(.16 / 20))
    assert t2.get_ylabel() == "accuracy (n >= 5)"


def test_imagenet_fog_figure_one_panel_per_model_points_and_range(cube_means):
    cube, means = cube_means
    summ = _fog_summary()
    table7 = vtab.fog_severity_table(_table7(), summ, cube, means, MODELS)
    fig = vfig.imagenet_fog_figure(table7, summ, cube, means, MODELS)
    assert [ax.get_title() for ax in fig.axes] == MODELS
    ax = fig.axes[0]
    bars = [c for c in ax.containers if isinstance(c, ErrorbarContainer)]
    assert len(bars) == len(table7)
    assert ax.get_xlim()[0] == pytest.approx(2 * 400.0 * 1.3)  # twice the widest IQR, beyond 250 m
    first = bars[0]
    assert first.lines[0].get_xdata()[0] == pytest.approx(100.0 / 1.06 ** 0.5)  # set a hair apart along V
    assert first.lines[0].get_ydata()[0] == pytest.approx(0.8)
    assert bars[0].lines[0].get_marker() != bars[1].lines[0].get_marker()
    half = 1.96 * math.sqrt(0.8 * 0.2 / 10)  # binomial 95 % interval of the accuracy, n 10
    seg = first.lines[2][-1].get_segments()[0]
    assert seg[1][1] - seg[0][1] == pytest.approx(2 * half)
    assert [t.get_text() for t in fig.legends[0].get_texts()] == ["physical fog", "ImageNet-C s1", "ImageNet-C s2"]


# ----------------------------------------------------------------------------- sentences of finding


def test_trend_and_change_choose_the_word_from_the_sign():
    assert vfig.trend(0.9, 0.3) == "falls" and vfig.trend(0.3, 0.9) == "rises"
    assert vfig.trend(0.5, 0.503) == "stays"
    assert vfig.change(0.2, 0.6) == "rises from 0.20 to 0.60"
    assert vfig.change(0.61, 0.612) == "stays at about 0.61 (0.61 at the end)"


def test_scene_finding_reads_the_transmittance_of_the_depth():
    dep = np.full((4, 4), 10.0)
    dep[0, 0] = np.inf  # the sky does not count
    text = vfig.scene_finding(dep, (62.5, 7.8125))
    a, b = math.exp(-3.912 * 10 / 62.5), math.exp(-3.912 * 10 / 7.8125)
    assert f"falls from {a:.3g} at V = 62.5 m to {b:.3g} at V = 7.81 m" in text


def test_signals_finding_medians_direction_and_abstainers(cube_means):
    cube, means = cube_means
    text = vfig.signals_finding(cube, means, MODELS, "t2")
    assert "t2, fog: from clean to V = 1 m the median accuracy of the 2 models falls from 0.90 to 0.30 " \
           "(chance 0.25)" in text
    assert "internal confidence falls from 0.80 to 0.70; the abstain rate reaches 0.5 there for 2 of 2 (a, b)" in text
    assert "t2, water:" in text
    rising = means.copy()
    rising[:, 0, -1] = 0.95  # accuracy ends above its clean 0.9
    assert "accuracy of the 2 models rises from 0.90 to 0.95" in vfig.signals_finding(cube, rising, MODELS, "t2")


def test_blind_spot_finding_counts_signs_and_bounds():
    text = vfig.blind_spot_finding(_spots())
    assert text.startswith("t2: 2 of 3 Ws lie above 0") and "2 of them bounds, median 0.50 decades (above 0)" in text
    assert "internal confidence: 1 of 1 above 0" in text


def test_reliability_finding_compares_the_pools():
    _, rel_sum = _rel()
    text = vfig.reliability_finding(rel_sum, MODELS, 15.625)
    assert "ECE rises above its clean value for 1 of 1 models (median ECE rises from 0.10 to 0.50" in text
    assert "over-confident) for 1 of 1" in text


def test_abstain_finding_names_the_abstainers_and_the_wording_gap(cube_means):
    cube, means = cube_means
    text = vfig.abstain_finding(cube, means, MODELS)
    assert "fog: a, b (2 of 2)" in text and "at most 0.60 at any level" in text  # 0.9 against 0.3 at 1 m


def test_transmittance_finding_compares_the_ends_of_each_curve():
    text = vfig.transmittance_finding(_acc_t(), ["a"], min_n=5)
    assert text == ("t2: in the lowest-t bin accuracy lies below the t ≈ 1 bin for 1 of 1 (model, arm) curves; the "
                    "median falls from 0.80 to 0.40, above chance 0.25.")


def test_imagenet_fog_finding_against_the_curve(cube_means):
    cube, means = cube_means
    table7 = vtab.fog_severity_table(_table7(), _fog_summary(), cube, means, MODELS)
    text = vfig.imagenet_fog_finding(table7, MODELS)
    # a: 0.8 - 0.8 and 0.5 - 0.7; b: 0.8 - 0.7 and 0.5 - 0.5
    assert "median V_eq from 100 m to 10 m" in text and "in 1 of 4 (model, severity) pairs, above it in 1" in text
    assert "median difference +0.00 (on the curve)" in text
