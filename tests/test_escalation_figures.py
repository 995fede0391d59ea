"""Notebook 07's figures and table helpers (vlmrobust.analysis.escalation.figures and the added table functions),
each built from a small hand-made table."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import figtools as ft
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402
from figtools import close_figures  # noqa: F401
from matplotlib.patches import Rectangle  # noqa: E402

from vlmrobust.analysis.escalation import ablation as AB  # noqa: E402
from vlmrobust.analysis.escalation import claims as CH  # noqa: E402
from vlmrobust.analysis.escalation import figures as EF  # noqa: E402
from vlmrobust.analysis.escalation import fragility as F  # noqa: E402
from vlmrobust.analysis.escalation import indices as X  # noqa: E402
from vlmrobust.corrupt import escalation as esc  # noqa: E402

MODELS = ["a", "b"]
COLORS = {"a": "#0072B2", "b": "#E69F00"}
TRAV = {"TD": "traverse_topdown_mean", "BU": "traverse_bottomup_mean"}
SHARE = {1: 0.2, 2: 0.4}


# --------------------------------------------------------------------------- the traversal fill


def test_fill_examples_one_row_per_fill_and_the_sky_column_only_with_depth():
    rng = np.random.default_rng(0)
    img = rng.integers(0, 255, (32, 32, 3), dtype=np.uint8)
    depth = np.full((32, 32), 5.0)
    depth[:12] = np.inf  # the top 12 rows are sky
    fig = EF.fill_examples(img, depth, ["black", "mean"], "a title")
    assert len(fig.axes) == 2 * 5
    assert [ax.get_title() for ax in fig.axes[:5]] == ["clean", "sky band 100 %", "topdown 0.4", "bottomup 0.4",
                                                      "leftright 0.4"]
    assert [fig.axes[0].get_ylabel(), fig.axes[5].get_ylabel()] == ["black", "mean"]
    assert fig.axes[5].get_title() == ""  # titles on the first row only
    assert fig.get_suptitle() == "a title"
    clean, sky, top = (np.asarray(fig.axes[i].images[0].get_array()) for i in (0, 1, 2))
    assert (clean == img).all()
    assert (sky[:12] == 0).all() and (sky[12:] == img[12:]).all()  # black over the sky rows only
    assert (top[:12] == 0).all() and (top[14:] == img[14:]).all()  # 0.4 of 32 rows from the top, black
    no_depth = EF.fill_examples(img, None, ["crop"], "t")
    assert len(no_depth.axes) == 4 and "sky band 100 %" not in [ax.get_title() for ax in no_depth.axes]
    with pytest.raises(ValueError, match="no fill"):
        EF.fill_examples(img, depth, [], "t")


def _ground_pred() -> pd.DataFrame:
    rows = []
    for m, (clean, sky, td) in {"a": ([1, 1, 1, 0], [1, 1, 0, 0], [1, 0, 0, 0]),
                                "b": ([1, 1, 0, 0], [1, 1, 0, 0], [0, 0, 0, 0])}.items():
        for pert, lv, vals in (("clean", 0, clean), (esc.control_name("black"), 4, sky),
                               (esc.traversal_name("topdown", "black"), 1, td)):
            rows += [{"model": m, "item_id": f"q{i}", "perturbation": pert, "level": lv, "correct": bool(v)}
                     for i, v in enumerate(vals)]
    return pd.DataFrame(rows)


def test_fill_comparison_clean_row_first_then_each_condition_with_its_share():
    t = F.fill_comparison(_ground_pred(), ["black"], MODELS)
    assert t.condition.tolist() == ["clean", "sky band 1", "TD 0.2"]
    assert t.fill.tolist() == ["—", "black", "black"]
    assert t.a.tolist() == [0.75, 0.5, 0.25] and t.b.tolist() == [0.5, 0.5, 0.0]
    assert t["mean"].tolist() == pytest.approx([0.625, 0.5, 0.125])
    assert F.fill_comparison(_ground_pred(), ["black"], MODELS, control=False).condition.tolist() == ["clean",
                                                                                                    "TD 0.2"]
    assert F.fill_comparison(_ground_pred(), ["crop"], MODELS).empty  # no row of the crop fill


def test_sky_control_cost_draws_clean_minus_control_per_model():
    fig = EF.sky_control_cost(F.fill_comparison(_ground_pred(), ["black"], MODELS), MODELS, COLORS)
    ax = fig.axes[0]
    bars = [p for p in ax.patches if isinstance(p, Rectangle)]
    assert [b.get_height() for b in bars] == pytest.approx([0.25, 0.0])  # a: 0.75 - 0.5, b: 0.5 - 0.5
    assert [t.get_text() for t in ax.get_xticklabels()] == ["black\nsky band 1"]
    assert ax.get_ylabel() == "clean − control accuracy"
    no_sky = F.fill_comparison(_ground_pred(), ["black"], MODELS, control=False)
    with pytest.raises(ValueError, match="sky-band"):
        EF.sky_control_cost(no_sky, MODELS, COLORS)


# --------------------------------------------------------------------------- Table I and Fig. 3


def test_pareto_maps_outline_the_frontier_points():
    t1 = pd.DataFrame({"model": ["a", "b", "a"], "group": ["g1", "g1", "g2"], "A_CR": [0.9, 0.5, 0.6],
                       "RCI_mu": [0.1, 0.3, 0.05], "A_T": [0.4, 0.8, np.nan], "T_mu": [0.2, 0.1, 0.3]})
    fig = EF.pareto_maps(t1, MODELS, COLORS)
    ax_c, ax_t = fig.axes
    assert ax_c.get_ylabel() == "RCI μ" and ax_t.get_ylabel() == "T μ"
    assert ax_c.get_title() == "corruption (ladders)"
    assert fig.get_size_inches()[0] <= 7.5
    assert len(ax_c.collections) == 3 + 1 and len(ax_t.collections) == 2 + 1  # the NaN row is left out
    # corruption: (90, 0.1) and (60, 0.05) are on the frontier, (50, 0.3) is dominated
    assert sorted(map(tuple, ax_c.collections[-1].get_offsets().tolist())) == [(60.0, 0.05), (90.0, 0.1)]
    assert ax_t.collections[-1].get_offsets().tolist() == [[80.0, 0.1]]  # b dominates a
    labels = [t.get_text() for t in fig.legends[0].get_texts()]
    assert labels == ["a", "b", "g1", "g2", "Pareto frontier"]
    with pytest.raises(ValueError):
        EF.pareto_maps(t1.iloc[:0], MODELS, COLORS)


# --------------------------------------------------------------------------- Fig. 5 and Fig. 6


def _curves() -> pd.DataFrame:
    acc = {("a", TRAV["TD"]): [0.9, 0.8, 0.6], ("b", TRAV["TD"]): [0.7, 0.7, 0.2],
           ("a", TRAV["BU"]): [0.9, 0.5, 0.4], ("b", TRAV["BU"]): [0.7, 0.3, 0.1]}
    return pd.DataFrame([{"model": m, "perturbation": p, "level": lv, "accuracy": a}
                         for (m, p), vals in acc.items() for lv, a in enumerate(vals)])


def test_accuracy_vs_share_one_panel_per_direction_and_the_evidence_axis_where_known():
    ev = pd.Series([0.25, 0.5], index=pd.MultiIndex.from_tuples([(TRAV["TD"], 1), (TRAV["TD"], 2)],
                                                                names=["perturbation", "level"]))
    fig = EF.accuracy_vs_share(_curves(), ev, TRAV, SHARE, MODELS, COLORS)
    assert len(fig.axes) == 2  # two panels; the evidence share is an area on the same 0-1 axis
    td, bu = fig.axes
    assert td.get_title() == "TD · topdown" and bu.get_title() == "BU · bottomup"
    assert [line.get_xdata().tolist() for line in td.lines] == [[0.0, 0.2, 0.4]] * 2
    assert td.lines[1].get_ydata().tolist() == [0.7, 0.7, 0.2]
    assert len(td.collections) == 1 and len(bu.collections) == 0  # only TD has an evidence record
    assert td.collections[0].get_paths()[0].vertices[:, 1].max() == 0.5
    assert td.get_ylabel() == "accuracy / share"
    assert [line.get_marker() for line in td.lines] == ["o", "s"]  # model_styles: colour and marker
    assert [t.get_text() for t in fig.legends[0].get_texts()][0].startswith("items with evidence removed")
    assert fig.legends[0].get_bbox_to_anchor() is not None and fig.get_size_inches()[0] <= 7.5
    with pytest.raises(ValueError, match="no traversal"):
        EF.accuracy_vs_share(_curves(), ev, {}, SHARE, MODELS, COLORS)


def test_evidence_lost_share_counts_removed_and_cut_among_known_items():
    ev = pd.DataFrame({"perturbation": ["p"] * 5 + ["q"], "level": [1, 1, 1, 1, 2, 1],
                       "evidence": ["removed", "partial", "intact", "n/a", "intact", "removed"]})
    s = F.evidence_lost_share(ev, ["p"])
    assert s.to_dict() == {("p", 1): pytest.approx(2 / 3), ("p", 2): 0.0}


def test_fragility_panels_mark_regimes_dash_non_monotone_curves_and_hide_spare_axes():
    perts = ["l1", "l2", "l3", "l4", "l5"]
    curves = pd.DataFrame([{"model": m, "perturbation": p, "level": lv, "accuracy": a}
                           for m in MODELS for p in perts
                           for lv, a in enumerate([0.8, 0.7, 0.75] if m == "a" else [0.8, 0.4, 0.2])])
    curves.attrs["unit"] = ("model",)
    regimes = F.curve_regimes(curves, tol=0.02)
    fig = EF.fragility_panels(curves, regimes, perts, [1, 2], MODELS, COLORS)
    assert len(fig.axes) == 8 and sum(ax.axison for ax in fig.axes) == 5
    ax = fig.axes[0]
    curve_a, end_a, curve_b, end_b = ax.lines
    assert curve_a.get_linestyle() == "--" and curve_b.get_linestyle() == "-"  # a rises 0.7 -> 0.75
    assert end_a.get_marker() == "o" and end_b.get_marker() == "X"  # retention 0.94 stable, 0.25 severe
    assert ax.get_title() == "l1\nst 1 · pr 0 · sv 1 · nm 1"  # the regime counts in the title, off the data
    assert ft.texts(ax) == []
    assert list(ax.get_xticks()) == [0, 1, 2]
    with pytest.raises(ValueError):
        EF.fragility_panels(curves, regimes, [], [1, 2], MODELS, COLORS)


def test_regime_counts_per_kind_and_perturbation():
    regimes = pd.DataFrame({"kind": ["ladder", "ladder", "traversal"], "perturbation": ["l", "l", "t"],
                            "regime": pd.Categorical(["stable", "severe", "stable"], categories=F.REGIMES),
                            "non_monotone": [True, False, False]})
    t = F.regime_counts(regimes)
    assert t.loc[("ladder", "l"), "stable"] == 1 and t.loc[("ladder", "l"), "severe"] == 1
    assert t.loc[("traversal", "t"), "stable"] == 1 and t.non_monotone.tolist() == [1, 0]


def test_directional_heatmap_outlines_the_worst_direction_of_each_row():
    d = pd.DataFrame({"model": ["a", "a", "b", "b"] * 2, "direction": ["TD", "BU"] * 4,
                      "T_RCI": [0.1, 0.3, 0.25, 0.2, 0.2, 0.1, np.nan, np.nan],
                      "group": ["g"] * 4 + ["all items"] * 4})
    fig = EF.directional_heatmap(d, ["g", "all items"], ["TD", "BU"], MODELS)
    assert len(fig.axes) == 3  # two panels and the colour bar
    g, all_items = fig.axes[:2]
    assert [r.get_xy() for r in g.patches] == [(0.5, -0.5), (-0.5, 0.5)]  # a: BU, b: TD
    assert [r.get_xy() for r in all_items.patches] == [(-0.5, -0.5)]  # b has no value: no outline
    assert ft.texts(all_items) == ["0.20", "0.10"]
    assert [t.get_text() for t in g.get_yticklabels()] == MODELS
    assert [t.get_text() for t in all_items.get_yticklabels()] == ["", ""]
    assert g.images[0].get_clim() == (0.1, 0.3)  # one scale over all panels


# --------------------------------------------------------------------------- the taxonomy, Figs. 4 and 8


def test_failure_class_heatmap_rows_in_model_order_and_columns_in_class_order():
    counts = pd.DataFrame({"model": ["a", "a", "b"], "class": pd.Categorical(["OCR", "spatial", "semantic"]),
                           "n": [3, 1, 2], "share": [0.75, 0.25, 1.0]})
    fig = EF.failure_class_heatmap(counts, ["b", "a", "c"], 6)
    ax = fig.axes[0]
    arr = np.asarray(ax.images[0].get_array())
    assert arr.shape == (2, 5)  # models without failures are left out
    assert arr.tolist() == [[0, 0, 0, 1.0, 0], [0.75, 0.25, 0, 0, 0]]
    assert [t.get_text() for t in ax.get_xticklabels()] == ["OCR", "spatial", "symbolic", "semantic", "other"]
    assert ax.get_title() == "Fig. 4 · traversal failures by class (6)"
    assert any(a.get_label() == "<colorbar>" for a in fig.axes)
    assert len(ax.texts) == 10
    with pytest.raises(ValueError):
        EF.failure_class_heatmap(counts.iloc[:0], MODELS, 0)


def test_failure_subtypes_drops_zero_counts_and_colours_by_class():
    sub = pd.DataFrame({"class": ["OCR", "OCR", "spatial"], "subtype": ["glyph removed", "glyph cut", "bar cut"],
                        "n": [5, 0, 2], "share": [5 / 7, 0, 2 / 7]})
    fig = EF.failure_subtypes(sub)
    ax = fig.axes[0]
    bars = ax.patches
    assert [b.get_width() for b in bars] == [2, 5]  # reversed: the first subtype at the top
    assert [t.get_text() for t in ax.get_yticklabels()] == ["bar cut", "glyph removed"]
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["OCR", "spatial"]
    assert matplotlib.colors.to_hex(bars[1].get_facecolor()) == "#0072b2"  # OCR: the palette's first colour
    with pytest.raises(ValueError, match="subtype"):
        EF.failure_subtypes(sub[sub.n == 0])


# --------------------------------------------------------------------------- the weighting ablation


def test_rank_correlation_heatmaps_scale_from_the_smallest_rho():
    names = ["equal", "no-spatial"]
    r1 = pd.DataFrame([[1.0, 0.3], [0.3, 1.0]], index=names, columns=names)
    r2 = pd.DataFrame([[1.0, np.nan], [np.nan, 1.0]], index=names, columns=names)
    fig = EF.rank_correlation_heatmaps(r1, r2)
    assert len(fig.axes) == 3 and fig.axes[2].get_label() == "<colorbar>"  # two heatmaps, one colourbar
    assert fig.axes[2].get_ylabel() == "Spearman ρ"
    assert fig.axes[0].images[0].get_clim() == (0.3, 1)
    assert ft.texts(fig.axes[1]) == ["1.00", "nan", "nan", "1.00"]
    assert fig.axes[1].get_title() == "weightings ranked by T_mu"
    ones = pd.DataFrame(1.0, index=names, columns=names)
    assert EF.rank_correlation_heatmaps(ones, ones).axes[0].images[0].get_clim() == (0.5, 1)


def test_spatial_table_is_the_affine_offset_of_every_unit():
    ans = [0, 0, 0, 0]
    rows = [{"model": "m", "item_id": f"q{i}", "perturbation": "clean", "level": 0, "param": np.nan, "K": 4,
             "answer_idx": 0, "pred_idx": p, "confidence": np.nan} for i, p in enumerate([0, 0, 0, 1])]
    for d in ("topdown", "bottomup", "leftright", "rightleft"):
        for lv, s in enumerate(esc.TRAVERSAL_SHARES, start=1):
            preds = [0, 0, 1, 2] if lv > 2 else [0, 0, 0, 3]
            rows += [{"model": "m", "item_id": f"q{i}", "perturbation": f"traverse_{d}", "level": lv, "param": s,
                      "K": 4, "answer_idx": a, "pred_idx": p, "confidence": np.nan}
                     for i, (a, p) in enumerate(zip(ans, preds, strict=True))]
    st = X.trci_states(X.cell_stats(pd.DataFrame(rows)), {"TD": "traverse_topdown", "BU": "traverse_bottomup",
                                                          "LR": "traverse_leftright", "RL": "traverse_rightleft"})
    res = X.trci(st)
    t = AB.spatial_table(st, res)
    assert t.columns.tolist() == ["model", "T_mu", "offset", "T_mu_no_spatial", "T_mu_minus_offset"]
    r = t.iloc[0]
    assert r.offset == pytest.approx(0.1)  # alpha_4 * mean(s) = 0.2 * 0.5
    assert r.T_mu > r.offset
    assert r.T_mu == pytest.approx(0.8 * r.T_mu_no_spatial + r.offset)  # every term is available
    assert r.T_mu_minus_offset == pytest.approx(r.T_mu - 0.1)


# --------------------------------------------------------------------------- ground truth and Fig. 7


def test_accuracy_by_evidence_per_direction_and_state():
    pred = pd.DataFrame({"item_id": ["q0", "q1", "q2", "q0"], "perturbation": ["t", "t", "t", "u"],
                         "level": [1, 1, 1, 1], "correct": [True, False, True, False]})
    ev = pd.DataFrame({"item_id": ["q0", "q1", "q2", "q0"], "perturbation": ["t", "t", "t", "u"],
                       "level": [1, 1, 1, 1], "evidence": ["intact", "removed", "intact", "removed"],
                       "direction": ["TD", "TD", "TD", "BU"]})
    t = CH.accuracy_by_evidence(pred, ev)
    assert t.loc["TD", "intact"] == 1.0 and t.loc["TD", "removed"] == 0.0 and np.isnan(t.loc["BU", "intact"])
    assert t.n.to_dict() == {"BU": 1, "TD": 3}


def _warnings() -> pd.DataFrame:
    return pd.DataFrame({"model": ["a", "a", "b", "b"], "item_id": ["x-1-c0", "x-1-t0", "x-1-t1", "x-1-c1"],
                         "perturbation": [TRAV["TD"], TRAV["BU"], TRAV["TD"], TRAV["BU"]],
                         "warn_level": [1.0, 1.0, 1.0, np.nan], "flip_level": [2.0, 2.0, 2.0, 2.0],
                         "lead": [1.0, 1.0, 1.0, np.nan], "warned_before_flip": [True, True, True, False]})


def test_warning_examples_one_per_model_and_task_longest_lead_first():
    items = pd.DataFrame({"item_id": ["x-1-c0", "x-1-t0", "x-1-t1", "x-1-c1"], "task": ["count", "text", "text",
                                                                                          "count"]})
    ex = F.warning_examples(_warnings(), items)
    assert list(zip(ex.model, ex.item_id, strict=True)) == [("a", "x-1-c0"), ("b", "x-1-t1")]
    assert len(F.warning_examples(_warnings(), items, n=1)) == 1
    assert F.warning_examples(_warnings().assign(warned_before_flip=False), items).empty


def test_latent_instability_examples_mark_the_warning_and_the_flip():
    lat = pd.DataFrame([{"model": "a", "item_id": "x-1-c0", "perturbation": p, "level": lv, "p_correct": pc,
                         "margin": mg}
                        for p, lv, pc, mg in (("clean", 0, 0.9, 0.8), (TRAV["TD"], 1, 0.5, 0.2),
                                              (TRAV["TD"], 2, 0.2, -0.4), (TRAV["BU"], 1, 0.1, -0.8))])
    ex = _warnings().iloc[:1]
    fig = EF.latent_instability_examples(lat, ex, TRAV, SHARE, COLORS)
    assert len(fig.axes) == 1
    ax = fig.axes[0]
    p_line, m_line = ax.lines[:2]
    assert p_line.get_xdata().tolist() == [0.0, 0.2, 0.4]  # the BU row is not this example's
    assert m_line.get_ydata().tolist() == [0.8, 0.2, -0.4]
    assert [line.get_xdata()[0] for line in ax.lines[3:]] == [0.2, 0.4]  # warning at level 1, flip at 2
    assert ax.get_title() == "a\nc0 · TD"
    assert ax.get_legend() is None and len(fig.legends) == 1  # the legend below the panels, off the data
    four = pd.concat([ex] * 4, ignore_index=True)
    fig = EF.latent_instability_examples(lat, four, TRAV, SHARE, COLORS)
    assert len(fig.axes) == 6 and sum(a.axison for a in fig.axes) == 4
    with pytest.raises(ValueError):
        EF.latent_instability_examples(lat, ex.iloc[:0], TRAV, SHARE, COLORS)


def test_ladder_rungs_one_row_per_ladder_clean_first():
    img = np.zeros((64, 64, 3), np.uint8)
    fig = EF.ladder_rungs(img, {"contrast": [("0.9", img), ("0.3", img)], "crop": [("0.2", img)]}, "t")
    axes = np.array(fig.axes).reshape(2, 3)
    assert axes[0, 0].get_title() == "clean" and axes[0, 2].get_title() == "0.3"
    assert not axes[1, 2].axison  # the crop row has one rung fewer
    with pytest.raises(ValueError, match="no ladder"):
        EF.ladder_rungs(img, {}, "t")
    plt.close("all")


def test_table_i_fit_draws_the_papers_rows_and_the_bound():
    from vlmrobust.analysis.escalation import paper_table as PT

    run = pd.DataFrame({"reading": ["joint", "table-i"], "A_CR": [0.5, 0.5], "RCI_mu": [0.0, 0.15]})
    fig = EF.table_i_fit(PT.PAPER_TABLE_I, 0.3, run)
    ax = fig.axes[0]
    assert len(ax.collections) == 3 and len(ax.collections[0].get_offsets()) == 19
    assert ax.lines[0].get_ydata()[-1] == pytest.approx(0.3)
    plt.close("all")


def test_fill_examples_paint_the_given_mean_colour():
    img = np.full((64, 64, 3), 200, np.uint8)
    fig = EF.fill_examples(img, None, ["mean"], "t", mean_rgb=(1, 2, 3))
    shown = fig.axes[1].get_images()[0].get_array()  # top-down 0.4
    assert tuple(shown[0, 0]) == (1, 2, 3)
    plt.close("all")


def test_findings_choose_their_direction_words_from_the_tables():
    text = EF.accuracy_share_finding(_curves(), TRAV)  # mean clean 0.8 in both; last 0.4 (TD), 0.25 (BU)
    assert text == ("Mean accuracy over models falls most under BU, from 0.80 clean to 0.25 at the last state, and "
                    "least under TD (0.80 to 0.40).")
    names = ["equal", "no-spatial"]
    r = pd.DataFrame([[1.0, 0.97], [0.97, 1.0]], index=names, columns=names)
    assert "ρ 0.97 (equal vs no-spatial, at or above the paper's 0.95)" in EF.rank_correlation_finding(r, r * 0.9)
    assert "below the paper's 0.95" in EF.rank_correlation_finding(r, r * 0.9)


def test_rank_correlation_finding_says_so_when_no_rho_exists():
    names = ["equal", "no-spatial"]
    nan = pd.DataFrame([[np.nan, np.nan], [np.nan, np.nan]], index=names, columns=names)  # a blind twin's
    assert EF.rank_correlation_finding(nan, nan).startswith("No pair of weightings has a rank correlation")
    r = pd.DataFrame([[1.0, 0.9], [0.9, 1.0]], index=names, columns=names)
    assert "T_mu" not in EF.rank_correlation_finding(r, nan)
