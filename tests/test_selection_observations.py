"""Notebook 01's observations (seed 000 §IV, supplement II): the nulls, the coverage helpers and every check,
each with a case where it holds and one where it fails, on small hand-made tables."""

from __future__ import annotations

from math import comb

import numpy as np
import pandas as pd
import pytest

from vlmrobust import repro
from vlmrobust.analysis.selection import claims, coverage, nulls
from vlmrobust.analysis.selection.responsiveness import AnswerPaths


def _rng(*key):
    return repro.rng("test.selection.observations", *key)


# ----------------------------------------------------------------------------- nulls


def test_random_subsets_draw_k_items_of_the_mask_reproducibly():
    mask = np.r_[np.ones(6, bool), np.zeros(4, bool)]
    a = nulls.random_subsets(mask, 3, 50, _rng("s"))
    assert a.shape == (50, 10) and (a.sum(axis=1) == 3).all() and not a[:, 6:].any()
    assert (a == nulls.random_subsets(mask, 3, 50, _rng("s"))).all()
    assert len({tuple(r) for r in a}) > 5  # not one subset repeated
    assert (nulls.random_subsets(mask, 99, 2, _rng("s")).sum(axis=1) == 6).all()  # clipped to the pool


def test_random_pair_jaccard_matches_the_exact_hypergeometric_expectation():
    N, k = 12, 5
    # two independent k-subsets of N share j items with probability C(k, j) C(N-k, k-j) / C(N, k)
    exact = sum(comb(k, j) * comb(N - k, k - j) / comb(N, k) * j / (2 * k - j) for j in range(k + 1))
    draws = nulls.random_pair_jaccard(np.ones(N, bool), k, 20000, _rng("ji"))
    assert draws.mean() == pytest.approx(exact, abs=0.01)


def test_retention_null_is_hypergeometric_and_groups_lost_counts_missing_groups():
    d = nulls.retention_null(12, 10, 10, 20000, _rng("ret"))
    assert set(np.unique(d)) <= {8.0, 9.0, 10.0}
    assert (d == 10).mean() == pytest.approx(1 / 66, abs=0.005)  # C(10,10) C(2,0) / C(12,10)
    with pytest.raises(ValueError, match="inside the eligible pool"):
        nulls.retention_null(5, 6, 5, 1, _rng("ret"))
    groups = np.array(["a"] * 9 + ["b"])
    lost = nulls.groups_lost_null(groups, np.ones(10, bool), 1, 5000, _rng("lost"))
    assert set(np.unique(lost)) == {1.0} and len(lost) == 5000  # one item never covers both groups
    lost3 = nulls.groups_lost_null(groups, np.ones(10, bool), 3, 20000, _rng("lost"))
    assert lost3.mean() == pytest.approx(comb(9, 3) / comb(10, 3), abs=0.01)  # P(b missed)


def test_null_summary_interval_and_one_sided_p():
    n = nulls.null_summary(np.arange(100.0), 98.5, ci=0.9)
    assert n["lo"] == pytest.approx(4.95) and n["hi"] == pytest.approx(94.05)
    assert n["p_upper"] == pytest.approx(2 / 101)  # one draw (99) at or above 98.5, add-one
    assert np.isnan(nulls.null_summary(np.array([np.nan]), 1.0)["hi"])


# ----------------------------------------------------------------------------- coverage helpers


def test_composition_groups_read_l2_for_real_items_and_the_family_for_synthetic_ones():
    items = pd.DataFrame({"source": ["synth", "MMBench", "MMBench"], "task": ["colour", "coarse_perception", "ocr"],
                          "category": ["attribute", "image_scene", "ocr_l2"]})
    assert coverage.composition_groups(items).tolist() == ["colour", "image_scene", "ocr_l2"]
    assert coverage.composition_level(items.iloc[1:]) == "L2 categories"
    assert coverage.composition_level(items.iloc[:1]) == "task families"


def test_silent_families_name_the_selector_that_alone_excludes_a_family():
    fam = np.array(["yn", "yn", "mc", "mc"])
    G = np.zeros((4, 2, 1))
    G[:, 0, 0] = [0.3, 0.3, 0.5, 0.5]          # selector a responds everywhere
    G[:, 1, 0] = [0.0, 0.0, 0.5, 0.0]          # b never on "yn", once on "mc"
    t = coverage.silent_families(G, fam, ["a", "b"])
    assert t[["selector", "family", "items", "eligible", "eligible_without"]].values.tolist() == [["b", "yn", 2, 0, 2]]
    G[0, 1, 0] = 0.4  # b now responds on one "yn" item: no family is silent
    assert coverage.silent_families(G, fam, ["a", "b"]).empty


def test_coverage_table_says_where_a_group_was_lost():
    fam = ["x", "x", "y", "y", "z"]
    t = coverage.coverage_table(fam, np.array([1, 1, 1, 0, 0], bool), np.array([1, 0, 0, 0, 0], bool))
    assert t.lost_at.to_dict() == {"x": "", "y": "Eq. 6", "z": "Eq. 3"}
    assert t.loc["y"].tolist()[:3] == [2, 1, 0]


def test_largest_share_and_pooled_threshold():
    assert coverage.largest_share(["a", "b", "b", "c"], np.array([1, 1, 1, 0], bool)) == ("b", pytest.approx(2 / 3))
    assert coverage.largest_share(["a", "b"], np.array([1, 1], bool), np.array([3.0, 1.0])) == ("a", 0.75)
    T = coverage.pooled_threshold(np.array([0.1, 0.5, 0.5, 0.2]), 2, ["q3", "q2", "q1", "q0"])
    assert T.tolist() == [False, True, True, False]
    T1 = coverage.pooled_threshold(np.array([0.1, 0.5, 0.5, 0.2]), 1, ["q3", "q2", "q1", "q0"])
    assert T1.tolist() == [False, False, True, False]  # the tie at 0.5 goes to the lowest id


# ----------------------------------------------------------------------------- checks


def test_split_kappa_against_random_subsets_of_a_plus():
    k = np.linspace(0.05, 1.0, 20)
    el = np.ones(20, bool)
    top, bottom = k > 0.75, k < 0.3
    assert claims.obs_split_kappa_null(k, top, el, n_draws=500, rng=_rng("k")).reproduced is True
    assert claims.obs_split_kappa_null(k, bottom, el, n_draws=500, rng=_rng("k")).reproduced is False
    whole = claims.obs_split_kappa_null(k, el, el, n_draws=500, rng=_rng("k"))
    assert whole.reproduced is None and "by construction" in whole.measured


def test_criteria_ji_must_beat_random_subsets_and_stay_below_one():
    el = np.ones(40, bool)
    assert claims.obs_criteria_ji({"size": 10, "ji": 0.6, "both": 7}, el, n_draws=500, rng=_rng("j")).reproduced
    assert claims.obs_criteria_ji({"size": 10, "ji": 0.1, "both": 2}, el, n_draws=500,
                                  rng=_rng("j")).reproduced is False  # below chance (≈ 0.14)
    assert claims.obs_criteria_ji({"size": 10, "ji": 1.0, "both": 10}, el, n_draws=500,
                                  rng=_rng("j")).reproduced is False
    assert claims.obs_criteria_ji({"size": 40, "ji": 1.0}, el, n_draws=50, rng=_rng("j")).reproduced is None


def _table_i(fixed_kept, recomputed_kept, recomputed_eligible, size=10):
    return pd.DataFrame({"removed": ["a"], "fixed_kept": [fixed_kept], "recomputed_kept": [recomputed_kept],
                         "recomputed_eligible": [recomputed_eligible], "split_size": [size]})


def test_table_i_retention_beats_the_random_null_and_the_majority():
    assert claims.obs_table_i_null(_table_i(9, 8, 45), 40, n_draws=500, rng=_rng("t")).reproduced is True
    assert claims.obs_table_i_null(_table_i(4, 8, 45), 40, n_draws=500, rng=_rng("t")).reproduced is False
    # retention 0.9 > 0.5, but a random 10 of 12 keeps 9 or more in ~30 % of draws: not above chance
    assert claims.obs_table_i_null(_table_i(9, 9, 12), 12, n_draws=2000, rng=_rng("t")).reproduced is False
    assert claims.obs_table_i_null(_table_i(9, 8, 45).iloc[:0], 40, n_draws=5, rng=_rng("t")).reproduced is None


def test_fixed_at_least_recomputed_per_selector():
    s = np.r_[np.ones(10, bool), np.zeros(10, bool)]
    fixed = np.r_[np.ones(9, bool), np.zeros(11, bool)]
    recomputed = np.r_[np.ones(6, bool), np.zeros(14, bool)]
    good = claims.obs_fixed_vs_recomputed({"a": (fixed, recomputed)}, s, n_boot=500, rng=_rng("f"))
    assert good.reproduced is True and "+0.300" in good.measured
    bad = claims.obs_fixed_vs_recomputed({"a": (fixed, recomputed), "b": (recomputed, fixed)}, s, n_boot=500,
                                         rng=_rng("f"))
    assert bad.reproduced is False
    assert claims.obs_fixed_vs_recomputed({}, s, n_boot=5, rng=_rng("f")).reproduced is None


def _paths(pred, answer, clean_pred):
    """AnswerPaths of hand-made arrays: pred (items, selectors, corruptions, levels), clean_pred (items, selectors)."""
    pred, answer, clean_pred = np.asarray(pred), np.asarray(answer), np.asarray(clean_pred)
    n, s = clean_pred.shape
    return AnswerPaths(np.array([f"q{i:03d}" for i in range(n)], dtype=object), tuple(f"m{j}" for j in range(s)),
                       tuple(f"d{j}" for j in range(pred.shape[2])), tuple(range(1, pred.shape[3] + 1)), pred,
                       pred == answer[:, None, None, None], np.full(n, 4), answer, clean_pred,
                       clean_pred == answer[:, None])


def test_zero_dispersion_is_reported_by_construction_and_catches_a_wrong_g():
    pred = np.array([[[[1, 1, 1, 1, 1]]], [[[2, 3, 2, 3, 2]]], [[[0, 0, 1, 0, 0]]]])
    paths = _paths(pred, np.zeros(3, int), np.zeros((3, 1), int))
    G = np.array([[[0.0]], [[0.64]], [[0.32]]])
    row = claims.obs_zero_dispersion(paths, G)
    assert row.reproduced is None and "by construction" in row.measured and "1 of 2" in row.measured
    assert claims.obs_zero_dispersion(paths, G + 0.1).reproduced is False  # a G that is not Eq. 1


def test_an_easy_item_can_score_high():
    n = 40
    k = np.linspace(0.0, 0.9, n)
    pred = np.zeros((n, 1, 1, 5), int)
    easy_high = np.where(np.arange(n) >= 20, 0, 1)[:, None]    # clean answer 0 is correct: easy at high κ
    good = claims.obs_easy_can_score_high(_paths(pred, np.zeros(n, int), easy_high), k, n_boot=500, rng=_rng("e"))
    assert good.reproduced is True and "10 of 10" in good.measured
    bad = claims.obs_easy_can_score_high(_paths(pred, np.zeros(n, int), 1 - easy_high), k, n_boot=500,
                                         rng=_rng("e"))
    assert bad.reproduced is False and "0 of 10" in bad.measured   # only low-κ items are clean-easy


def test_difficulty_rank_correlation_below_its_threshold():
    rng = np.random.default_rng(3)
    n = 300
    clean_pred = rng.integers(0, 2, (n, 3))                      # err in {0, 1/3, 2/3, 1}
    err = 1 - (clean_pred == 0).mean(axis=1)
    paths = _paths(np.zeros((n, 3, 1, 5), int), np.zeros(n, int), clean_pred)
    indep = claims.obs_difficulty_rank(paths, rng.random(n), n_boot=300, rng=_rng("d"))
    assert indep.reproduced is True
    tracked = claims.obs_difficulty_rank(paths, err + 0.01 * rng.random(n), n_boot=300, rng=_rng("d"))
    assert tracked.reproduced is False and "ρ +0.9" in tracked.measured


def test_sources_kept():
    src = np.array(["a"] * 5 + ["b"] * 5)
    both, one = np.r_[1, 0, 0, 0, 0, 1, 0, 0, 0, 0].astype(bool), np.r_[1, 1, 0, 0, 0, 0, 0, 0, 0, 0].astype(bool)
    assert claims.obs_sources_kept(src, both, n_draws=200, rng=_rng("s")).reproduced is True
    lost = claims.obs_sources_kept(src, one, n_draws=200, rng=_rng("s"))
    assert lost.reproduced is False and "lost: b" in lost.measured
    single = claims.obs_sources_kept(np.array(["a"] * 10), one, n_draws=20, rng=_rng("s"))
    assert single.reproduced is None and "by construction" in single.measured


def test_families_kept_names_the_lost_family_and_where():
    fam = np.array(["x", "x", "y", "y", "z", "z"])
    el = np.array([1, 1, 1, 1, 0, 0], bool)
    assert claims.obs_families_kept(fam[:4], el[:4], np.array([1, 0, 1, 0], bool), n_draws=100,
                                    rng=_rng("f")).reproduced is True
    row = claims.obs_families_kept(fam, el, np.array([1, 0, 1, 0, 0, 0], bool), n_draws=100, rng=_rng("f"))
    assert row.reproduced is False and "1 of 3 families lost: z (at Eq. 3)" in row.measured


def test_eq3_is_stricter_than_a_pooled_kappa_threshold():
    G = np.zeros((20, 3, 1))
    G[:10] = 0.4                       # A⁺: every selector responds, κ = 0.4
    G[10:15, :2] = 0.96                # selector 3 silent: κ = 0.64, above A⁺'s
    el = (G.mean(axis=2) > 0).all(axis=1)
    k = G.mean(axis=(1, 2))
    ids = [f"q{i:02d}" for i in range(20)]
    row = claims.obs_eq3_stricter(G, k, el, ids, ["a", "b", "c"], n_boot=500, rng=_rng("q"))
    assert row.reproduced is True and "5 of 10" in row.measured and "silent: c on 5" in row.measured
    G[10:15, :2] = 0.1                 # now their pooled κ is below A⁺'s: a pooled threshold keeps A⁺
    k = G.mean(axis=(1, 2))
    assert claims.obs_eq3_stricter(G, k, el, ids, ["a", "b", "c"], n_boot=500, rng=_rng("q")).reproduced is False


def test_novelty_term_limits_concentration():
    fam = np.repeat(["a", "b", "c", "d"], 10)
    el = np.ones(40, bool)
    spread = np.zeros(40, bool)
    spread[[0, 1, 10, 11, 20, 21, 30, 31]] = True
    concentrated = np.zeros(40, bool)
    concentrated[:8] = True
    good = claims.obs_novelty_concentration(fam, spread, concentrated, el, n_boot=500, rng=_rng("c"))
    assert good.reproduced is True and "difference +0.750" in good.measured
    bad = claims.obs_novelty_concentration(fam, concentrated, spread, el, n_boot=500, rng=_rng("c"))
    assert bad.reproduced is False
