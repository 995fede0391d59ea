"""Notebook 01's figures and table helpers (vlmrobust.analysis.selection.figures, selection.category_shift,
selection.selection_table, simulate.time_selection), each built from a small hand-made table."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import figtools as ft
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402
from figtools import close_figures  # noqa: F401

from vlmrobust import repro, synth  # noqa: E402
from vlmrobust.analysis.selection import figures as SF  # noqa: E402
from vlmrobust.analysis.selection.selection import Selection, category_shift, selection_table  # noqa: E402
from vlmrobust.analysis.selection.simulate import time_selection  # noqa: E402
from vlmrobust.figures import PALETTE  # noqa: E402


def _selection(kappa, eligible, nu, pick, selected, threshold=0.9) -> Selection:
    kappa = np.asarray(kappa, dtype=float)
    e = np.where(eligible, kappa + np.asarray(nu, dtype=float), np.nan)
    return Selection(np.array([f"q{i}" for i in range(len(kappa))], dtype=object), kappa,
                     np.asarray(eligible, dtype=bool), np.asarray(nu, dtype=float), e,
                     np.asarray(pick, dtype=np.int64), np.asarray(selected, dtype=bool), threshold)


# five questions: q0 outside A⁺; A⁺ picked in the order q3, q1, q4, q2; q3 and q4 selected
SEL = _selection(kappa=[0.0, 0.2, 0.1, 0.6, 0.4], eligible=[False, True, True, True, True],
                 nu=[np.nan, 0.5, 0.1, 1.0, 0.3], pick=[-1, 1, 3, 0, 2], selected=[False, False, False, True, True])


# --------------------------------------------------------------------------- table helpers

def test_category_shift_shares_fill_missing_and_sort_by_shift():
    groups = pd.Series(["a", "a", "b", "b", "c", "c"], name="task")
    selected = np.array([True, True, True, False, False, False])
    comp = category_shift(groups, selected)
    assert comp.index.tolist() == ["a", "b", "c"]  # split shares 2/3, 1/3, 0 against 1/3 each
    assert comp.loc["a", "split"] == pytest.approx(2 / 3) and comp.loc["c", "split"] == 0.0
    assert comp.loc["c", "pool"] == pytest.approx(1 / 3)
    assert comp["shift"].tolist() == pytest.approx([1 / 3, 0.0, -1 / 3])
    unsorted = category_shift(pd.Series(["x", "y", "y"]), np.array([False, True, False]), sort=False)
    assert set(unsorted.index) == {"x", "y"} and unsorted.loc["x", "split"] == 0.0


def test_selection_table_adds_categories_selector_gini_and_evaluated_gini():
    items = pd.DataFrame({"task": list("ttuuv"), "source": ["s"] * 5})
    G = np.zeros((5, 2, 3))
    G[:, 0, 0] = [0.0, 0.3, 0.6, 0.9, 0.3]
    G[:, 1, :] = 0.96
    table = selection_table(SEL, items, G, ["s1", "s2"], eval_gini=np.arange(5) / 10)
    assert table.columns.tolist() == ["item_id", "kappa", "eligible", "nu", "e", "pick", "selected", "task",
                                      "source", "G_s1", "G_s2", "gini_evaluated"]
    assert table.G_s1.tolist() == pytest.approx([0.0, 0.1, 0.2, 0.3, 0.1])  # mean over the three corruptions
    assert table.G_s2.tolist() == pytest.approx([0.96] * 5)
    assert table.task.tolist() == list("ttuuv") and table.gini_evaluated[4] == pytest.approx(0.4)
    assert "gini_evaluated" not in selection_table(SEL, items, G, ["s1", "s2"]).columns


def test_time_selection_reports_the_pool_and_its_split():
    row = time_selection(60, repro.rng("test.selection_figures", "time"))
    assert set(row) == {"pool", "eligible", "split", "seconds"}
    assert row["pool"] == 60 and 0 <= row["split"] <= row["eligible"] <= 60 and row["seconds"] >= 0


# --------------------------------------------------------------------------- figures

def test_kappa_and_gini_heatmap_has_one_cell_per_selector_and_corruption():
    G = np.zeros((4, 2, 3))
    G[0, 1, 2] = 0.96
    fig = SF.kappa_and_gini(G.mean(axis=(1, 2)), G, ["s1", "s2"], ["fog", "snow", "blur"])
    hist, heat = fig.axes[:2]
    assert len(fig.axes) == 3  # the colour bar
    assert len(ft.bars(hist)) == 24 and hist.get_title() == "κ over the pool"
    img = heat.get_images()[0].get_array()
    assert img.shape == (2, 3) and img[1, 2] == pytest.approx(0.24) and img[0, 0] == 0
    assert [t.get_text() for t in heat.get_yticklabels()] == ["s1", "s2"]
    assert [t.get_text() for t in heat.get_xticklabels()] == ["fog", "snow", "blur"]
    with pytest.raises(ValueError, match="selectors"):
        SF.kappa_and_gini(G.mean(axis=(1, 2)), G, ["s1"], ["fog", "snow", "blur"])


def test_novelty_traversal_follows_the_greedy_order():
    fig = SF.novelty_traversal(SEL)
    (line,) = fig.axes[0].get_lines()
    assert line.get_ydata().tolist() == [1.0, 0.5, 0.3, 0.1]  # q3, q1, q4, q2
    assert line.get_xdata().tolist() == [0, 1, 2, 3]


def test_kappa_nu_plane_splits_the_points_and_draws_the_cut():
    fig = SF.kappa_nu_plane(SEL)
    ax = fig.axes[0]
    rest, split = ax.collections
    assert rest.get_offsets().tolist() == [[0.2, 0.5], [0.1, 0.1]]
    assert split.get_offsets().tolist() == [[0.6, 1.0], [0.4, 0.3]]
    (cut,) = ax.get_lines()
    assert cut.get_xdata()[-1] + cut.get_ydata()[-1] == pytest.approx(0.9)  # κ + ν = threshold
    assert ft.legend(ax) == ["A⁺, not selected", "split", "κ + ν = mean e"]
    empty = _selection([0.0, 0.0], [False, False], [np.nan] * 2, [-1, -1], [False, False], float("nan"))
    assert SF.kappa_nu_plane(empty).axes[0].get_lines() == []


def test_kappa_pool_vs_split_panels_and_means():
    kappa = np.array([0.0, 0.2, 0.1, 0.6, 0.4])
    fig = SF.kappa_pool_vs_split(kappa, SEL.selected)
    assert len(fig.axes) == 1 and ft.legend(fig.axes[0]) == ["pool (mean 0.260)", "split (mean 0.500)"]
    fig = SF.kappa_pool_vs_split(kappa, SEL.selected, eval_gini=np.array([0.1, 0.1, 0.1, 0.1, 0.6]), n_models=4)
    assert len(fig.axes) == 2 and fig.axes[1].get_title() == "evaluated models' Gini (4)"
    assert ft.legend(fig.axes[1]) == ["pool (mean 0.200)", "split (mean 0.350)"]
    none = SF.kappa_pool_vs_split(kappa, np.zeros(5, dtype=bool))
    assert ft.legend(none.axes[0]) == ["pool (mean 0.260)"] and len(ft.bars(none.axes[0])) == 20
    with pytest.raises(ValueError, match="one entry per item"):
        SF.kappa_pool_vs_split(kappa, SEL.selected[:3])


def test_category_shift_bars_in_table_order_and_sources_panel():
    tasks = pd.DataFrame({"pool": [0.2, 0.5, 0.3], "split": [0.6, 0.4, 0.0]}, index=["b", "a", "c"])
    fig = SF.category_shift(tasks)
    ax = fig.axes[0]
    assert len(fig.axes) == 1 and [t.get_text() for t in ax.get_xticklabels()] == ["b", "a", "c"]
    heights = [b.get_height() for b in ft.bars(ax)]
    assert heights == [0.2, 0.5, 0.3, 0.6, 0.4, 0.0]
    assert matplotlib.colors.to_hex(ft.bars(ax)[3].get_facecolor()).lower() == PALETTE[3].lower()
    sources = pd.DataFrame({"pool": [0.5, 0.5], "split": [1.0, 0.0]}, index=["s1", "s2"])
    fig = SF.category_shift(tasks, sources)
    assert len(fig.axes) == 2 and fig.axes[1].get_title() == "sources, pool → split (Fig. 8a)"
    assert len(ft.bars(fig.axes[1])) == 4 and fig.axes[1].get_legend() is None
    assert fig.axes[0].get_title() == "task families, pool → split"
    assert SF.category_shift(tasks, level="L2 categories").axes[0].get_title() == "L2 categories, pool → split"


def test_kappa_picks_low_median_high_of_the_eligible():
    assert SF.kappa_picks(SEL) == [("low", 2), ("medium", 4), ("high", 3)]  # κ of A⁺: 0.1, 0.2, 0.4, 0.6
    empty = _selection([0.0], [False], [np.nan], [-1], [False])
    assert SF.kappa_picks(empty) == []


def test_kappa_examples_rows_show_the_most_moving_corruption_and_answers():
    items = synth.generate(1, 3, families=["colour", "count"])
    n, levels, perts = len(items), [1, 3], ["gaussian_noise", "fog"]
    G = np.zeros((n, 1, 2))
    G[:, 0, 1] = 0.5  # fog moves the first selector most
    pred = np.zeros((n, 1, 2, 2), dtype=np.int64)
    pred[:, 0, 1, :] = [[items.answer_idx.iloc[i], (items.answer_idx.iloc[i] + 1) % 2] for i in range(n)]
    picks = [("low", 0), ("high", 1)]
    fig = SF.kappa_examples(items, picks, np.array([0.1, 0.7]), G, pred, perts, levels, seed=0)
    assert len(fig.axes) == 2 * (1 + len(levels))
    titles = [ax.get_title() for ax in fig.axes]
    assert titles[0].startswith("low κ = 0.100\n") and titles[3].startswith("high κ = 0.700\n")
    assert titles[1].startswith("fog\n1: ") and titles[1].endswith("✓")
    assert titles[2].startswith("fog\n3: ") and titles[2].endswith("✗")
    assert all(len(ax.get_images()) == 1 for ax in fig.axes)
    with pytest.raises(ValueError, match="picks is empty"):
        SF.kappa_examples(items, [], np.zeros(n), G, pred, perts, levels, seed=0)


def test_selection_time_is_log_log_and_refuses_no_rows():
    fig = SF.selection_time(pd.DataFrame({"pool": [10, 100], "seconds": [0.01, 0.2]}))
    ax = fig.axes[0]
    assert ax.get_xscale() == "log" and ax.get_yscale() == "log"
    assert ax.get_lines()[0].get_ydata().tolist() == [0.01, 0.2]
    with pytest.raises(ValueError, match="no pool size"):
        SF.selection_time(pd.DataFrame({"pool": [], "seconds": []}))


# --------------------------------------------------------------------------- the sentences of finding


def test_findings_read_their_numbers_and_directions_from_the_tables():
    # picks q3 (ν 1.0) first and q2 (ν 0.1) last: ν falls
    assert SF.novelty_finding(SEL) == "Along the 4 greedy picks ν falls from 1.00 at the first to 0.10 at the last."
    text = SF.plane_finding(SEL)  # split q3, q4: κ 0.5 against 0.15 of q1, q2
    assert "keeps 2 of 4" in text and "mean κ is 0.500 (higher than the 0.150" in text
    assert SF.pool_split_finding(SEL.kappa, SEL.selected).startswith("The selectors' mean κ is higher on the split")
    low = SF.pool_split_finding(-SEL.kappa, SEL.selected)
    assert "lower on the split" in low
    shares = pd.DataFrame({"pool": [0.5, 0.5], "split": [1.0, 0.0]}, index=["a", "b"])
    assert SF.shift_finding(shares).startswith("a gains the most share (0.50 of the pool, 1.00 of the split), b loses")
