"""Notebook 03's figures (vlmrobust.score.figures), each built from a small hand-made table."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402
from figtools import close_figures  # noqa: F401

from vlmrobust import corrupt, score  # noqa: E402
from vlmrobust.score import figures as SF  # noqa: E402


def _curves(perturbations: dict[str, list[int]], by: str = "perturbation") -> pd.DataFrame:
    """Two models; accuracy 0.8 clean falling by 0.1 per level (model b 0.1 lower), confidence 0.7 flat."""
    rows = []
    for m, off in [("a", 0.0), ("b", 0.1)]:
        for p, levels in perturbations.items():
            for lv in [0, *levels]:
                rows.append({"model": m, by: p, "level": lv, "accuracy": 0.8 - 0.1 * lv - off, "confidence": 0.7})
    return pd.DataFrame(rows)


def test_level_axis_puts_visibility_in_metres_and_other_perturbations_at_their_levels():
    x, label, ticks = SF.level_axis("fog_physical", [1, 2, 8])
    vis = corrupt.VISIBILITY_LEVELS_M
    np.testing.assert_allclose(x, [2 * vis[0], vis[0], vis[1], vis[7]])  # clean drawn beyond the farthest fog
    assert "(m, log)" in label and ticks[0] == "clean" and ticks[1] == f"{vis[0]:.3g}"
    x, label, ticks = SF.level_axis("gaussian_noise", [1, 2, 3])
    np.testing.assert_allclose(x, [0, 1, 2, 3])
    assert ticks is None and "level" in label


def test_shared_levels_names_the_levels_left_out():
    shared, note = SF.shared_levels({"gaussian_noise": [1, 2, 3], "fog_physical": [1, 2, 3, 4, 5]})
    assert shared == [1, 2, 3]
    assert "fog_physical's levels 4–5" in note and f"{corrupt.VISIBILITY_LEVELS_M[3]:.3g}" in note
    assert SF.shared_levels({"gaussian_noise": [1, 2], "contrast": [1, 2]}) == (
        [1, 2], "level ℓ = severity ℓ of each of the 2 perturbations, pooled")


def test_severity_bands_draws_the_model_mean_with_its_range_and_metres_for_fog():
    fig = SF.severity_bands(_curves({"gaussian_noise": [1, 2], "fog_physical": [1, 2, 3]}),
                            ["gaussian_noise", "fog_physical"])
    noise, fog = fig.axes[:2]
    acc = noise.get_lines()[0]
    np.testing.assert_allclose(acc.get_ydata(), [0.75, 0.65, 0.55])  # mean of a and b
    band = noise.collections[0].get_paths()[0].vertices[:, 1]
    assert band.min() == pytest.approx(0.5) and band.max() == pytest.approx(0.8)  # b's last level to a's clean
    assert fog.get_xscale() == "log" and fog.xaxis_inverted()
    assert noise.get_xscale() == "linear"
    assert noise.get_legend() is None and [t.get_text() for t in fig.legends[0].get_texts()] == ["accuracy",
                                                                                                  "confidence"]
    assert fig.get_size_inches()[0] <= 7.5


def test_family_bands_draws_only_shared_levels_with_chance_and_note():
    fam = _curves({"colour": [1, 2, 3], "count": [1, 2, 3]}, by="family")
    fig = SF.family_bands(fam, ["colour", "count"], [1, 2], {"colour": 0.25, "count": 0.5}, "a note")
    colour = fig.axes[0]
    this = [ln for ln in colour.get_lines() if ln.get_label() == "this family (mean over models)"][0]
    np.testing.assert_allclose(this.get_xdata(), [0, 1, 2])  # level 3 is not shared: not drawn
    chance = [ln for ln in colour.get_lines() if ln.get_label() == "chance (1/K)"][0]
    assert chance.get_ydata()[0] == pytest.approx(0.25)
    assert "a note" in [t.get_text() for t in fig.texts]


def test_agreement_heatmap_has_values_and_a_colour_bar():
    agreement = pd.DataFrame({"model": ["a", "a", "b", "b"], "perturbation": ["clean", "fog"] * 2,
                              "pair": ["letter vs loglik"] * 4, "same_argmax": [0.2, 0.4, 0.6, 0.8]})
    fig = SF.agreement_heatmap(agreement)
    ax, cbar = fig.axes
    assert sorted(t.get_text() for t in ax.texts) == ["0.20", "0.40", "0.60", "0.80"]
    assert cbar.get_ylabel() == "same argmax"
    assert score.figures is SF
