"""Notebook 04's figures and table helper (vlmrobust.analysis.ras.figures, ras.tables.with_ci), each built from a
small hand-made table."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import figtools as ft
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402
from figtools import close_figures  # noqa: F401
from matplotlib.patches import Ellipse  # noqa: E402

from vlmrobust.analysis import ras  # noqa: E402
from vlmrobust.analysis.ras import figures as RF  # noqa: E402
from vlmrobust.analysis.ras.tables import with_ci  # noqa: E402

COLORS = {"a": "#0072B2", "b": "#E69F00"}


def _pairs(rows) -> pd.DataFrame:
    """A pair table from (model, state, dS, dC) tuples, RAS from Eq. 11."""
    df = pd.DataFrame(rows, columns=["model", "state", "dS", "dC"])
    df["RAS"] = ras.ras(df["dS"].to_numpy(), df["dC"].to_numpy())
    return df


def _tsum(unit_ras: dict[str, float], rows: dict[str, dict[str, tuple]]) -> pd.DataFrame:
    """A trajectory summary: per model and class ``(n, share, RAS, dS_med, dC_med)``; absent classes are empty."""
    out = []
    for m, u in unit_ras.items():
        for k in ras.TRAJECTORY_CLASSES:
            n, share, r, ds, dc = rows[m].get(k, (0, 0.0, np.nan, np.nan, np.nan))
            out.append({"model": m, "klass": k, "n": n, "share": share, "RAS": r, "dS_med": ds, "dC_med": dc,
                        "unit_RAS": u})
    return pd.DataFrame(out)


# --------------------------------------------------------------------------- the display table

def test_with_ci_writes_intervals_and_bare_values():
    t2 = pd.DataFrame({"model": ["a", "b"], "RAS": [-0.12345, 0.5], "RAS_lo": [-0.2, 0.4], "RAS_hi": [-0.05, 0.6],
                       "mixed_pct": [12.345, 0.0]}, index=[3, 1])
    out = with_ci(t2, ["RAS", "mixed_pct"])
    assert out.columns.tolist() == ["model", "RAS", "mixed_pct"] and out.index.tolist() == [3, 1]
    assert out.RAS.tolist() == ["-0.123 [-0.200, -0.050]", "0.500 [0.400, 0.600]"]
    assert out.mixed_pct.tolist() == ["12.3", "0.0"]  # one decimal, no bounds
    assert with_ci(t2.drop(columns="model"), ["RAS"], digits=1).RAS.tolist() == ["-0.1 [-0.2, -0.1]",
                                                                                   "0.5 [0.4, 0.6]"]


# --------------------------------------------------------------------------- figures

def test_regime_distributions_draws_the_example_pairs_and_notes_missing_regimes():
    probs = pd.Series([[0.7, 0.2, 0.1], [0.4, 0.35, 0.25], [0.1, 0.9], [0.5, 0.5]])
    pairs = pd.DataFrame({"row": [1, 3], "row_clean": [0, 2], "perturbation": ["fog", "snow"], "level": [3, 1],
                          "answer_idx": [0, 1], "state": ["cc", "wc"], "dS": [0.3, 0.1], "dC": [0.2, -0.4],
                          "RAS": [-0.2, 0.4]})
    examples = {"worse-flatter": 0, "worse-sharper": None, "better-flatter": 1, "better-sharper": None}
    fig = RF.regime_distributions(pairs, examples, probs)
    axes = fig.axes
    assert [ax.get_title() for ax in axes] == [ras.REGIME_NAMES[r] for r in ras.REGIMES[:4]]
    assert [b.get_height() for b in ft.bars(axes[0])] == [0.7, 0.2, 0.1, 0.4, 0.35, 0.25]  # clean, then corrupted
    assert [t.get_text() for t in axes[0].get_xticklabels()] == ["✓A", "B", "C"]
    assert [t.get_text() for t in axes[2].get_xticklabels()] == ["A", "✓B"]
    assert axes[0].get_xlabel() == "fog s3 · cc\nΔS=+0.30  ΔC=+0.20  RAS=-0.20"
    assert [t.get_text() for t in fig.legends[0].get_texts()] == ["clean", "corrupted"]  # one legend, off the data
    assert all(ax.get_legend() is None for ax in axes)
    assert ft.texts(axes[1]) == ["no pair in this regime"] and ft.bars(axes[1]) == []


def test_state_component_plane_contours_ellipses_and_means_per_state():
    rng = np.random.default_rng(0)
    rows = [(m, "cc", *rng.uniform(-0.5, 0.5, 2)) for m in ("a", "b") for _ in range(6)]  # 12 cc pairs
    rows += [("a", "cw", -0.2, 0.6)] + [("b", "ww", x, y) for x, y in [(0.1, 0.1), (0.2, -0.1), (-0.1, 0.3)]]
    pairs = _pairs(rows)
    fig = RF.state_component_plane(pairs, COLORS)
    cc, cw, wc, ww = fig.axes
    assert cc.get_title() == "cc: correct → correct  (n=12)" and wc.get_title() == "wc: wrong → correct  (n=0)"
    ellipses = [p for p in cc.patches if isinstance(p, Ellipse)]
    assert len(ellipses) == 2 and {matplotlib.colors.to_hex(e.get_edgecolor()) for e in ellipses} == \
        {c.lower() for c in COLORS.values()}
    assert cc.collections and not cw.collections  # density contours only from 10 pairs on
    assert ft.texts(cc) == [f"mean RAS {pairs[pairs.state == 'cc'].RAS.mean():+.3f}"]
    assert ft.texts(wc) == ["empty"]
    assert [p for p in cw.patches if isinstance(p, Ellipse)] == []  # one point: no ellipse
    assert [t.get_text() for t in fig.legends[0].get_texts()] == ["a", "b"]  # every model, off the panels
    assert ww.get_legend() is None
    assert {e.get_linestyle() for e in ellipses} == {"-"}  # model_styles: solid up to the eighth model
    assert cc.get_xlim() == (-1.0, 1.0)


def test_severity_family_heatmaps_mean_per_family_and_level():
    cells = pd.DataFrame({"family": ["blur", "blur", "noise", "noise", "blur", "noise"],
                          "level": [1, 1, 1, 2, 2, 2], "R_c": [-0.1, -0.3, -0.2, -0.4, -0.5, -0.6],
                          "R_w": [0.1, 0.1, 0.0, 0.2, 0.3, 0.2]})
    fig = RF.severity_family_heatmaps(cells, ["noise", "blur"])
    heat_c = fig.axes[0]
    grid = heat_c.get_images()[0].get_array()
    np.testing.assert_allclose(grid, [[-0.2, -0.5], [-0.2, -0.5]])  # rows noise, blur; columns s1, s2
    assert [t.get_text() for t in heat_c.get_yticklabels()] == ["noise", "blur"]
    assert [t.get_text() for t in heat_c.get_xticklabels()] == ["s1", "s2"]
    assert sorted(ft.texts(heat_c)) == sorted(["-0.200", "-0.500", "-0.200", "-0.500"])
    assert heat_c.get_images()[0].get_clim() == pytest.approx((-0.5, 0.5))  # symmetric: the largest |mean|
    insets = [ax for ax in fig.axes if ax.get_xlabel() == "severity"]
    assert [ax.get_ylabel() for ax in insets] == ["R_c", "R_w"]
    median = insets[0].get_lines()[0]
    np.testing.assert_allclose(median.get_ydata(), [-0.2, -0.5])


def test_trajectory_composition_orders_models_and_labels_segments():
    tsum = _tsum({"a": 0.2, "b": -0.1},
                 {"a": {"always correct": (8, 0.8, 0.1, 0, 0), "transient loss": (2, 0.2, -0.3, 0, 0)},
                  "b": {"always correct": (19, 0.95, 0.05, 0, 0), "always wrong": (1, 0.05, 0.2, 0, 0)}})
    fig = RF.trajectory_composition(tsum)
    ax = fig.axes[0]
    assert [t.get_text() for t in ax.get_yticklabels()] == ["b  (-0.100)", "a  (+0.200)"]
    assert len(ft.bars(ax)) == 2 * len(ras.TRAJECTORY_CLASSES)
    assert sorted(ft.texts(ax)) == ["+0.05", "+0.10", "-0.30"]  # b's always wrong (share 0.05) is too thin
    legend = [t.get_text() for t in fig.legends[0].get_texts()]
    assert legend == list(ras.TRAJECTORY_CLASSES)
    widths = [b.get_width() for b in ft.bars(ax)]
    assert sum(widths) == pytest.approx(2.0)


def test_trajectory_signatures_one_point_per_model_and_change_class():
    tsum = _tsum({"a": 0.0, "b": 0.0},
                 {"a": {"transient loss": (3, 0.3, -0.4, -0.1, 0.2), "persistent correction": (1, 0.1, 0.5, 0.3, -0.2)},
                  "b": {"transient loss": (2, 0.2, -0.2, 0.05, 0.1)}})
    fig = RF.trajectory_signatures(tsum, COLORS)
    panels = fig.axes[:4]
    assert [ax.get_title() for ax in panels] == list(RF.CHANGE_CLASSES)
    assert len(fig.axes) == 5  # the shared colour bar
    a, b = panels[0].collections  # one scatter per model, in the order of COLORS
    np.testing.assert_allclose(np.vstack([a.get_offsets(), b.get_offsets()]), [[-0.1, 0.2], [0.05, 0.1]])
    assert [matplotlib.colors.to_hex(c.get_edgecolor()[0]) for c in (a, b)] == [c.lower() for c in COLORS.values()]
    assert len(panels[0].texts) == 0  # models are told apart by the legend (colour + marker), not by overprinted labels
    assert [t.get_text() for t in fig.legends[0].get_texts()] == ["a", "b"]
    assert all(len(c.get_offsets()) == 0 for c in panels[1].collections)  # no persistent loss
    assert panels[0].get_xlim() == pytest.approx((-0.375, 0.375))  # 1.25 × the largest |median|
    np.testing.assert_allclose(np.concatenate([a.get_sizes(), b.get_sizes()]), [20 + 1000 * 0.3, 20 + 1000 * 0.2])
