"""Notebook 05's figures and table helpers (vlmrobust.analysis.drift.figures, .frequency_figures and the added
table functions), each built from a small hand-made table."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import figtools as ft
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402
from figtools import close_figures  # noqa: F401

from vlmrobust import attack  # noqa: E402
from vlmrobust.analysis.drift import figures as DF  # noqa: E402
from vlmrobust.analysis.drift import frequency as spectral  # noqa: E402
from vlmrobust.analysis.drift import frequency_figures as FF  # noqa: E402
from vlmrobust.analysis.drift import instability, prior  # noqa: E402
from vlmrobust.analysis.drift import representation as drift  # noqa: E402
from vlmrobust.corrupt import frequency  # noqa: E402
from vlmrobust.figures import PALETTE  # noqa: E402

MODELS = ["a", "b"]


# --------------------------------------------------------------------------- labels and table helpers

def test_label_maps_perturbations_and_the_union():
    assert instability.label("translate") == "Translation"
    assert instability.label("any") == "Any (union)"
    assert instability.label("noise_low") == "noise_low"


def test_invariance_cells_format_and_order_regimes_per_model():
    t3 = pd.DataFrame({"model": ["b", "b", "a"], "perturbation": ["translate", "any", "translate"],
                       "regime": ["ans_mcq", "ans_mcq", "ctx_mcq"], "cos_sim": [0.91234, 0.8, 0.5],
                       "l2": [1.234, 2.0, 3.0], "n": [1, 1, 1]})
    cells = drift.invariance_cells(t3, ["ctx_mcq", "ans_mcq", "vision_mean"])
    assert list(cells) == ["b", "a"]  # t3's model order
    assert list(cells["b"].columns) == ["ans_mcq"] and list(cells["a"].columns) == ["ctx_mcq"]
    assert cells["b"].loc["Translation", "ans_mcq"] == "0.912 / 1.23"
    assert cells["b"].loc["Any (union)", "ans_mcq"] == "0.800 / 2.00"


def test_table_columns_exist_in_the_tables():
    probes = pd.DataFrame({"kind": ["drift", "drift", "control", "control"], "regime": ["r"] * 4,
                           "model": ["a"] * 4, "perturbation": ["translate", "translate", "", ""],
                           "item_id": ["i1", "i2", "i1", "i2"], "cos": [0.1, 0.2, 0.5, 0.7], "l2": [1.0, 2, 5, 7]})
    t4 = drift.drift_vs_control(probes, "r", "cos").assign(lo=0.0, hi=1.0)
    assert t4[drift.TABLE4_COLUMNS].shape[1] == len(drift.TABLE4_COLUMNS)
    assert set(drift.TABLE7_COLUMNS) <= set(drift.drift_vs_control(probes, "r", "l2").columns)


def test_yes_no_subset_keeps_only_yes_no_items_in_order():
    options = [["Yes", "No"], ["red", "blue", "green", "cyan"], ["no", "yes"], ["Yes", "Maybe"]]
    items = pd.DataFrame({"item_id": ["q1", "q2", "q3", "q4"], "options": options}, index=[7, 8, 9, 10])
    sub = prior.yes_no_subset(items)
    assert sub.item_id.tolist() == ["q1", "q3"] and sub.index.tolist() == [0, 1]


def test_drift_by_perturbation_joins_transitions_drift_and_energy():
    pope = pd.DataFrame({"model": ["a", "a"], "perturbation": ["translate", "rotate"], "flip_rate": [0.1, 0.3],
                         "n": [4, 4]})
    probes = pd.DataFrame({
        "kind": ["drift"] * 5 + ["control"], "model": ["a"] * 6,
        "perturbation": ["translate", "translate", "translate", "rotate", "rotate", ""],
        "regime": ["ans_mcq", "ans_mcq", "vision_grid", "ans_mcq", "vision_grid", "vision_grid"],
        "cos": [0.2, 0.4, np.nan, 0.5, np.nan, np.nan], "l2": [1.0, 3.0, np.nan, 2.0, np.nan, np.nan],
        "d_energy": [np.nan, np.nan, -2.0, np.nan, 4.0, 100.0]})
    p11 = prior.drift_by_perturbation(pope, probes, "ans_mcq").set_index("perturbation")
    assert p11.loc["translate", "cos_sim"] == pytest.approx(0.7) and p11.loc["translate", "dE"] == -2.0
    assert p11.loc["rotate", "dE"] == 4.0  # the control row's energy is not drift
    assert "any" not in p11.index  # inner join on pope's perturbations


def test_threshold_table_and_summary():
    pairs = pd.DataFrame({"model": "a", "perturbation": "lowpass_fine", "item_id": ["i1"] * 3 + ["i2"] * 3,
                          "level": [1, 2, 3] * 2, "param": [1.0, 0.5, 0.1] * 2,
                          "flip": [False, True, True, False, False, False]})
    thr = spectral.threshold_table(pairs).set_index("item_id")
    assert thr.loc["i1", "threshold"] == 0.1 and thr.loc["i1", "first_flip"] == 0.5
    assert np.isnan(thr.loc["i2", "threshold"]) and np.isnan(thr.loc["i2", "first_flip"])
    summ = spectral.threshold_summary(thr.reset_index())
    row = summ.loc[("a", "lowpass_fine")]
    assert row.flipped == 0.5 and row.median_smallest == 0.1 and row.median_first == 0.5


def test_spread_and_example_items():
    items = pd.DataFrame({"item_id": [f"i{k}" for k in range(6)], "task": ["x", "x", "x", "y", "y", "z"],
                          "options": [["a", "b"], ["a", "b", "c"], ["a", "b"], ["Yes", "No"], ["a", "b", "c", "d"],
                                      ["a", "b"]]})
    spread = spectral.spread_items(items, 4)  # at most ceil(4 / 3) = 2 per family
    assert spread.item_id.tolist() == ["i0", "i1", "i3", "i4"]
    assert spectral.example_items(items, 2).item_id.tolist() == ["i1", "i4"]
    two = items[items.options.map(len) == 2]
    assert spectral.example_items(two, 1).item_id.tolist() == ["i0"]  # none has more than two: all items


def test_instance_spectral_drift_rebuilds_each_instance_once(tmp_path):
    from PIL import Image

    img = (np.random.default_rng(0).random((32, 32, 3)) * 255).astype(np.uint8)
    ref = str(tmp_path / "x.png")
    Image.fromarray(img).save(ref)
    items = pd.DataFrame({"item_id": ["i1"], "image_ref": [ref]})
    pairs = pd.DataFrame({"model": ["a", "b"], "item_id": ["i1", "i1"], "perturbation": ["translate"] * 2,
                          "level": [3, 3], "flip": [True, False], "extra": [0, 0]})
    sd = spectral.instance_spectral_drift(pairs, items, seed=0)
    assert len(sd) == 2 and set(frequency.DRIFT_BANDS) <= set(sd.columns) and "extra" not in sd.columns
    assert sd.iloc[0]["low"] == sd.iloc[1]["low"] > 0  # one rebuilt instance shared by both models


def test_pgd_attacks_skips_models_without_a_pixel_path(monkeypatch):
    from vlmrobust import models as vlm_models

    monkeypatch.setattr(vlm_models, "load", lambda name, **kw: name)

    def refuse(lm, image):
        raise NotImplementedError(f"{lm} tiles its images")

    monkeypatch.setattr(attack, "pixel_path", refuse)
    items = pd.DataFrame({"item_id": ["i1"]})
    clean = pd.DataFrame({"model": MODELS, "item_id": ["i1", "i1"], "pred_idx": [0, 1]})
    runs = spectral.pgd_attacks(MODELS, items, [np.zeros((8, 8, 3), np.uint8)], clean, lambda m: "letter",
                                template="vlmrobust", seed=0, batch_size=1)
    assert runs.preds == {} and runs.deltas == {} and runs.attacked == []
    assert runs.skipped == {"a": "a tiles its images", "b": "b tiles its images"}


# --------------------------------------------------------------------------- figures of labels, drift, POPE, scale

def test_perturbation_examples_one_panel_per_instance():
    img = (np.random.default_rng(1).random((64, 64, 3)) * 255).astype(np.uint8)
    fig = DF.perturbation_examples(img, [("clean", 0), ("translate", 8), ("rotate", 1)], seed=0, key="i1")
    assert len(fig.axes) == 3
    titles = [ax.get_title() for ax in fig.axes]
    assert titles[0] == "clean" and titles[1].startswith("Translation\n") and titles[2].startswith("Rotation\n")
    assert not np.array_equal(fig.axes[1].images[0].get_array(), img)  # the perturbed image, not the clean one
    full = DF.perturbation_examples(img, seed=0, key="i1")  # wrapped into rows of six, the spare panels hidden
    assert sum(ax.axison for ax in full.axes) == len(DF.EXAMPLES) and len(full.axes) == 12
    assert full.get_size_inches()[0] <= 7.5
    with pytest.raises(ValueError, match="at least one"):
        DF.perturbation_examples(img, [], seed=0, key="i1")


def _drift_probes():
    rows = []
    for m in MODELS:
        for k, c in enumerate([0.1, 0.2, 0.3]):
            rows.append({"kind": "drift", "regime": "ans_mcq_free", "model": m, "perturbation": "translate",
                         "cos": c, "item_id": f"i{k}"})
        rows.append({"kind": "drift", "regime": "ans_mcq_free", "model": m, "perturbation": "text_overlay",
                     "cos": 0.6, "item_id": "i0"})
        rows += [{"kind": "control", "regime": "ans_mcq_free", "model": m, "perturbation": "", "cos": c,
                  "item_id": "i0"} for c in (0.7, 0.9)]
    return pd.DataFrame(rows)


def test_drift_vs_control_grid_titles_and_legend():
    probes = _drift_probes()
    t4 = pd.DataFrame({"model": ["a", "a", "b"], "perturbation": ["translate", "text_overlay", "translate"],
                       "d": [-1.5, -0.25, -2.0]})
    fig = DF.drift_vs_control(probes, probes, t4, MODELS, "ans_mcq_free")
    assert len(fig.axes) == 4
    titles = [ax.get_title() for ax in fig.axes]
    assert titles == ["a · Translation (d = -1.50)", "a · TextOverlay (d = -0.25)", "b · Translation (d = -2.00)",
                      "b · TextOverlay (d = +nan)"]
    assert [t.get_text() for t in fig.legends[0].get_texts()] == ["control drift", "perturbation drift"]
    assert ft.legend(fig.axes[0]) == []  # one legend below the panels, off the data
    assert len(ft.bars(fig.axes[0])) == 39 and len(fig.axes[0].patches) == 39 + 1  # control bars, drift outline
    assert fig.axes[0].get_xlabel() == "cosine distance 1 − cos (ans_mcq_free)"
    with pytest.raises(ValueError, match="at least one model"):
        DF.drift_vs_control(probes, probes, t4, [], "ans_mcq_free")


def test_layer_drift_curves_plot_each_regime_and_the_final_square():
    curves = pd.DataFrame({"model": "a", "perturbation": "any", "regime": ["r1"] * 3 + ["r2"] * 3,
                           "layer": [0, 1, 2] * 2, "ratio": [0.0, 0.2, 0.4, 0.1, 0.3, 0.5]})
    final = pd.DataFrame({"model": ["a", "a", "a"], "perturbation": ["any", "any", "translate"],
                          "regime": ["r1", "r2", "r1"], "cos_sim": [0.8, 0.9, 0.0]})
    probes = pd.DataFrame({"kind": "control", "model": "a", "regime": ["r1", "r1", "r2"], "cos": [0.3, 0.5, 0.2]})
    fig = DF.layer_drift_curves(curves, final, probes, ["a"], ["r2", "r1", "absent"])
    ax = fig.axes[0]
    assert len(ax.lines) == 4  # two regimes: a curve and a final square each
    assert [ln.get_label() for ln in ax.lines if not ln.get_label().startswith("_")] == ["r2", "r1"]
    square_r1 = ax.lines[3]
    assert square_r1.get_xdata()[0] == 3 and square_r1.get_ydata()[0] == pytest.approx(0.2 / 0.4)
    assert ft.ticks(ax) == ["0", "1", "2", "final"]


def test_dirichlet_histograms_split_all_and_flipping_instances():
    grid = pd.DataFrame({"regime": ["vision_grid"] * 5 + ["ans_mcq"], "perturbation": ["translate"] * 6,
                         "model": ["a", "a", "b", "b", "a", "a"], "d_energy": [1.0, -2.0, 0.5, 3.0, 2.0, 9.0],
                         "flip": [True, False, np.nan, False, True, True]})
    fig = DF.dirichlet_histograms(grid, "translate")
    left, right = fig.axes
    assert left.get_title() == "Translation: all instances" and right.get_title() == "Translation: flip-inducing"
    assert len(left.patches) == 2 and len(right.patches) == 1  # one outline per model; only model a flips
    assert [t.get_text() for t in fig.legends[0].get_texts()] == ["a", "b"] and left.get_legend() is None


def _pope():
    return pd.DataFrame({"model": ["a", "a", "b"], "perturbation": ["rotate", "translate", "translate"],
                         "flip_rate": [0.2, 0.1, 0.4], "acc": [0.7, 0.8, 0.6], "base_acc": [0.9, 0.9, 0.5],
                         "TP→FN rate": [0.1, 0.2, 0.3], "TN→FP rate": [0.0, 0.1, 0.2],
                         "FP→TN rate": [0.5, 0.4, 0.3], "FN→TP rate": [0.2, 0.2, 0.1],
                         "cos_sim": [0.9, 0.8, 0.7], "dE": [1.0, -1.0, 2.0]})


def test_pope_rates_bars_follow_the_manifest_order():
    order = ["translate", "pad_crop", "rotate"]
    fig = DF.pope_rates(_pope(), MODELS, order)
    flips, accs = fig.axes
    assert ft.ticks(flips) == ["Translation", "Rotation"]  # pad_crop absent from the table
    heights = [b.get_height() for b in ft.bars(flips)]
    assert heights[:2] == [0.1, 0.2] and heights[2] == 0.4 and np.isnan(heights[3])  # b has no rotate row
    assert [ln.get_ydata()[0] for ln in accs.lines] == [0.9, 0.5]  # dashed clean accuracy per model
    assert accs.get_ylim() == (0, 1)


def test_pope_transition_rates_four_moves_per_perturbation():
    fig = DF.pope_transition_rates(_pope(), MODELS, ["translate", "rotate"])
    assert len(fig.axes) == 2 and [ax.get_title() for ax in fig.axes] == MODELS
    assert len(ft.bars(fig.axes[0])) == 4 * 2
    assert [t.get_text() for t in fig.legends[0].get_texts()] == ["TP→FN", "TN→FP", "FP→TN", "FN→TP"]
    with pytest.raises(ValueError, match="at least one model"):
        DF.pope_transition_rates(_pope(), [], ["translate"])


def test_pope_drift_energy_scatters_and_labels_points():
    fig = DF.pope_drift_energy(_pope(), MODELS, "ans_mcq_free")
    left, right = fig.axes
    assert len(left.collections) == 3 and len(right.collections) == 3  # one point per model and perturbation
    assert len(left.texts) == 0  # a marker per perturbation instead of overprinted labels
    assert [c.get_offsets()[0, 1] for c in left.collections[:2]] == pytest.approx([0.1, 0.2])  # 1 - cos_sim
    assert [t.get_text() for t in fig.legends[0].get_texts()] == [*MODELS, "Rotation", "Translation"]
    assert left.get_ylabel() == "mean cosine drift (ans_mcq_free)"


def test_scale_panels_bars_per_model_and_transition_lines():
    t1 = pd.DataFrame({"model": ["s", "s", "l", "l"], "perturbation": ["translate", "any", "translate", "any"],
                       "IFR": [0.1, 0.2, 0.3, 0.4]})
    t5 = pd.DataFrame({"model": ["s", "l"], "size": [1.5e6, 3e6], "R→W share": [0.1, 0.2], "W→R share": [0.3, 0.1]})
    fig = DF.scale_panels(t1, t5, {"s": 1.5e6, "l": 3e6}, ["rotate", "translate"])
    bars, lines = fig.axes
    assert ft.ticks(bars) == ["Translation", "Any (union)"]
    assert [b.get_height() for b in ft.bars(bars)] == [0.1, 0.2, 0.3, 0.4]
    assert ft.legend(bars) == ["s (1.50 M)", "l (3.00 M)"]
    assert lines.lines[0].get_xdata().tolist() == [1.5, 3.0] and lines.lines[1].get_ydata().tolist() == [0.3, 0.1]


# --------------------------------------------------------------------------- frequency figures

def _noise_curve():
    rows = []
    for m in MODELS:
        for band in FF.NOISE_BANDS:
            for k, e in enumerate(frequency.NOISE_EPS):
                rows.append({"model": m, "item_id": "i1", "perturbation": f"noise_{band}", "param": e,
                             "flip_rate": 0.1 * k, "signed_margin": 1.0 - 0.2 * k})
    return pd.DataFrame(rows)


def test_noise_flip_rate_one_line_per_band_and_model():
    fig = FF.noise_flip_rate(_noise_curve(), MODELS)
    left, right = fig.axes
    assert len(left.lines) == len(right.lines) == 6
    assert ft.legend(left)[:2] == ["low · a", "high · a"]
    assert [ln.get_linestyle() for ln in left.lines[::3]] == ["-", "--"]  # line style per model
    assert left.get_xscale() == "log" and left.get_title() == "Fig. 17 — flip rate by band"
    assert [float(t) for t in left.get_xticks()] == list(frequency.NOISE_EPS)


def test_per_sample_noise_one_row_per_sample():
    fig = FF.per_sample_noise(_noise_curve()[lambda d: d.model == "a"], ["i1", "i2"], "a", 6)
    assert len(fig.axes) == 4
    assert fig.axes[0].get_title() == "a · i1" and fig.axes[0].get_ylabel() == "flip rate (6 draws)"
    assert [len(ln.get_xdata()) for ln in fig.axes[0].lines] == [5, 5, 5]
    assert [len(ln.get_xdata()) for ln in fig.axes[2].lines] == [0, 0, 0]  # i2 has no rows: empty lines
    assert fig.axes[2].get_xlabel() == "noise std ε" and fig.axes[0].get_xlabel() == ""
    with pytest.raises(ValueError, match="at least one sample"):
        FF.per_sample_noise(_noise_curve(), [], "a", 6)


def test_ablation_thresholds_histograms_leave_out_items_that_never_flip():
    thr = pd.DataFrame({"model": "a", "perturbation": ["lowpass_fine", "lowpass_fine", "highpass_fine"],
                        "item_id": ["i1", "i2", "i1"], "threshold": [0.1, np.nan, 0.5],
                        "first_flip": [0.2, np.nan, 0.5]})
    fig = FF.ablation_thresholds(thr)
    left, right = fig.axes
    assert left.get_title() == "smallest flipping cutoff" and right.get_title() == "first flip (mild → harsh)"
    assert sum(b.get_height() for b in ft.bars(left)) == 2  # the NaN item is not counted
    assert ft.legend(left) == ["low-pass keep", "high-pass keep"]
    assert ft.bars(left)[0].get_facecolor()[:3] == pytest.approx(matplotlib.colors.to_rgb(PALETTE[2]))


def test_ablation_margins_sorted_by_cutoff_per_sample():
    acurve = pd.DataFrame({"item_id": ["i1"] * 4 + ["i2"], "perturbation": ["lowpass_fine"] * 3 + ["highpass_fine"] * 2,
                           "param": [0.5, 0.1, 1.0, 0.3, 0.3], "signed_margin": [2.0, -1.0, 3.0, 0.5, 1.0]})
    fig = FF.ablation_margins(acurve, ["i1", "i2"], "a")
    assert len(fig.axes) == 2 and fig.axes[0].get_title() == "a · i1"
    low = fig.axes[0].lines[0]
    assert low.get_xdata().tolist() == [0.1, 0.5, 1.0] and low.get_ydata().tolist() == [-1.0, 2.0, 3.0]
    assert fig.axes[0].lines[1].get_color() == PALETTE[3] and list(fig.axes[0].lines[2].get_ydata()) == [0, 0]
    with pytest.raises(ValueError, match="at least one sample"):
        FF.ablation_margins(acurve, [], "a")


def test_spectral_drift_by_band_bars_per_band_and_perturbation():
    sd = pd.DataFrame({"perturbation": ["translate", "translate", "rotate"], "flip": [True, False, False],
                       "low": [0.1, 0.3, 0.2], "mid": [0.2, 0.2, 0.2], "high": [0.4, 0.6, 0.1]})
    fig = FF.spectral_drift_by_band(sd, ["rotate", "scale", "translate"])
    left, right = fig.axes
    assert ft.ticks(left) == ["Rotation", "Translation"] and left.get_yscale() == "log"
    heights = [b.get_height() for b in ft.bars(left)]
    assert len(heights) == 6 and heights[1] == pytest.approx(0.2)  # low band, translate: mean of 0.1 and 0.3
    assert right.get_title() == "flip-inducing" and ft.bars(right)[1].get_height() == pytest.approx(0.1)


def test_pgd_radial_energy_profiles_and_delta_images():
    rng = np.random.default_rng(2)
    deltas = {"pixel": [rng.uniform(-attack.EPS, attack.EPS, (64, 64, 3)) for _ in range(2)],
              "high": [rng.uniform(-attack.EPS, attack.EPS, (64, 64, 3))]}
    fig = FF.pgd_radial_energy(deltas, "i1", ["a", "b"])
    assert len(fig.axes) == 1 + len(attack.MODES)
    assert [t.get_text() for t in fig.legends[0].get_texts()] == ["pixel PGD", "high PGD"]  # MODES order, below
    assert len(fig.axes[1].images) == 1 and len(fig.axes[2].images) == 1 and len(fig.axes[3].images) == 0
    assert fig._suptitle.get_text() == "δ of i1, a"
    assert fig.get_size_inches()[0] <= 7.5  # a page's width
    empty = FF.pgd_radial_energy({}, "i1", [])  # no model attacked: no legend
    assert empty._suptitle.get_text() == "δ of i1, no model" and len(empty.axes[0].lines) == 0 and not empty.legends


def test_findings_choose_their_direction_words_from_the_tables():
    t5 = pd.DataFrame({"model": ["s", "l"], "size": [1e5, 1e6], "R→W share": [0.2, 0.1], "W→R share": [0.05, 0.07]})
    assert DF.scale_finding(t5) == ("From s to l the R→W share falls from 0.200 to 0.100 and the W→R share rises "
                                    "from 0.050 to 0.070.")
    assert DF.scale_finding(t5.iloc[:1]).startswith("Fewer than two sizes")
    t4 = pd.DataFrame({"model": ["a", "a", "b"], "perturbation": ["translate", "text_overlay", "translate"],
                       "d": [-1.5, 0.25, -2.0]})
    text = DF.drift_control_finding(t4, MODELS)
    assert text.startswith("In 2 of 3 drawn panels") and "mean d -1.08, below zero" in text
    moves = pd.DataFrame({"TP→FN": [1, 0], "TN→FP": [3, 2], "FP→TN": [0, 0], "FN→TP": [1, 0]})
    assert DF.pope_moves_finding(moves).startswith("Over models and perturbations the commonest move is TN→FP (5 of 7")
    assert DF.pope_moves_finding(moves * 0) == "No yes/no answer moved under any perturbation."
