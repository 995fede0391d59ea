"""Notebook 01's claims (seed 000 §IV, supplement II): the nulls, the coverage helpers, every claim row with a case
where it is reproduced and one where it is not, on small hand-made tables, and every rule against its null."""

from __future__ import annotations

from math import comb

import numpy as np
import pandas as pd
import pytest

from vlmrobust import repro
from vlmrobust.analysis.selection import claims, coverage, decisions, nulls, rules
from vlmrobust.analysis.selection.responsiveness import AnswerPaths, gini
from vlmrobust.stats.claims import BY_CONSTRUCTION, NO_SUBJECT, NOT_REPRODUCED, REPRODUCED, UNDECIDED
from vlmrobust.stats.nullsim import run_check


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


# ----------------------------------------------------------------------------- decisions


def test_open_edges_an_interval_on_zero_is_not_above_it():
    assert decisions.above(0.0, 0.0, 0.0) == NOT_REPRODUCED
    assert decisions.above(1e-9, 0.2, 0.0) == REPRODUCED
    assert decisions.above(-0.1, 0.2, 0.0) == UNDECIDED
    assert decisions.below(0.2, 0.5, 0.5) == UNDECIDED and decisions.below(0.1, 0.4, 0.5) == REPRODUCED


def test_shift_within_strata_removes_a_k_effect():
    K = np.r_[np.full(20, 2), np.full(20, 4)]
    x = np.where(K == 2, 0.8, 0.2) + np.tile(np.linspace(-0.01, 0.01, 20), 2)
    split = np.r_[np.ones(15, bool), np.zeros(5, bool), np.ones(3, bool), np.zeros(17, bool)]  # rich in K = 2
    rng = _rng("strata")
    assert decisions.shift_above_zero(x, split, n_boot=500, rng=rng).verdict == REPRODUCED  # pooled: K alone
    within = decisions.shift_above_zero(x, split, n_boot=500, rng=rng, strata=K)
    assert within.verdict != REPRODUCED and abs(within.value) < 0.01


def test_chance_easy_is_the_binomial_majority():
    assert decisions.chance_easy(np.array([2]), 3)[0] == pytest.approx(0.5)
    assert decisions.chance_easy(np.array([4]), 3)[0] == pytest.approx(3 * (1 / 16) * (3 / 4) + 1 / 64)


def test_wilson_and_retention_against_the_hypergeometric_null():
    lo, hi = decisions.wilson(9, 10)
    assert 0.55 < lo < 0.6 and 0.98 < hi <= 1.0
    assert decisions.retention_above_chance(18, 18, 60).verdict == REPRODUCED
    assert decisions.retention_above_chance(3, 18, 60).verdict == NOT_REPRODUCED   # far under a majority
    # 17 of 18 kept, but a random 18 of 19 keeps at least 17 always: not above chance
    assert decisions.retention_above_chance(17, 18, 19).verdict == UNDECIDED


def test_novelty_against_permuted_nu():
    fam = np.repeat(np.arange(6), 10)
    k = np.where(fam == 0, 0.9, 0.1)                       # κ alone would take family 0
    nu = np.zeros(60)
    nu[[f * 10 + j for f in range(1, 6) for j in (0, 1)]] = 2.0  # ν lifts two items of every other family
    d = decisions.novelty_vs_permuted(fam, k, nu, np.ones(60, bool), n_perm=500, rng=_rng("nov"))
    assert d.verdict == REPRODUCED and d.lo > 0
    flat = decisions.novelty_vs_permuted(fam, k, np.zeros(60), np.ones(60, bool), n_perm=200, rng=_rng("nov"))
    assert flat.verdict == NOT_REPRODUCED  # a constant ν: every permutation cuts the same split


# ----------------------------------------------------------------------------- claim rows


def _G_from(kappa_items, n_sel=3, n_corr=4):
    return np.repeat(np.asarray(kappa_items, dtype=float)[:, None, None], n_sel, 1).repeat(n_corr, 2)


def test_heldout_kappa_tests_the_cut_on_corruptions_it_never_saw():
    rng = np.random.default_rng(0)
    n, K = 60, np.full(60, 4)
    fragile = np.arange(n) < 20
    p = np.where(fragile, 0.9, 0.05)[:, None, None] * np.ones((1, 3, 6))
    G = gini(rules.draw_paths(rng, p, K), K)
    emb = rng.standard_normal((n, 8))
    ids = [f"q{i:02d}" for i in range(n)]
    row = claims.obs_heldout_kappa(G, emb, emb, ids, ["a", "b", "c"], fragile, n_boot=500, rng=_rng("h"), K=K)
    assert row.verdict == REPRODUCED and "held out" in row.measured and "by construction" in row.measured
    flat = gini(rules.draw_paths(rng, np.full((1, 3, 6), 0.4), K), K)  # every item alike
    assert claims.obs_heldout_kappa(flat, emb, emb, ids, ["a", "b", "c"], fragile, n_boot=500, rng=_rng("h"),
                                    K=K).verdict != REPRODUCED
    silent = np.zeros((n, 3, 6))
    assert claims.obs_heldout_kappa(silent, emb, emb, ids, ["a", "b", "c"], fragile, n_boot=50,
                                    rng=_rng("h")).verdict == NO_SUBJECT


def test_evaluated_gini_says_undecided_not_false_and_blind_models_fail():
    x = np.r_[np.zeros(60), np.linspace(0.1, 1, 40)]
    noisy = np.random.default_rng(1).random(100)
    assert claims.obs_evaluated_gini(x, x > 0.5, ["m"], n_boot=300, rng=_rng("g")).verdict == REPRODUCED
    und = claims.obs_evaluated_gini(noisy, np.arange(100) < 20, ["m"], n_boot=300, rng=_rng("g"))
    assert und.verdict == UNDECIDED and und.decide
    blind = claims.obs_evaluated_gini(np.zeros(100), x > 0.5, ["blind:m"], n_boot=300, rng=_rng("g"))
    assert blind.verdict == NOT_REPRODUCED and blind.subject == "evaluated: blind:m"
    assert claims.obs_evaluated_gini(x, x > 0.5, [], n_boot=30, rng=_rng("g")).verdict == NO_SUBJECT


def test_paper_models_leave_controls_out_and_read_blind_twins():
    assert claims.paper_models(["tiny-base", "aware", "blind:talker-90", "blind:tiny-long", "org/hub-model"]) == [
        "tiny-base", "blind:tiny-long", "org/hub-model"]


def test_criteria_ji_must_beat_random_subsets_and_stay_below_one():
    el = np.ones(40, bool)
    related = {"size": 10, "ji": 0.6, "both": 8, "semantic": np.arange(40) < 10,
               "inconsistency": (np.arange(40) >= 2) & (np.arange(40) < 12)}
    assert claims.obs_criteria_ji(related, el, ["a"], n_draws=500, rng=_rng("j")).verdict == REPRODUCED
    apart = dict(related, inconsistency=(np.arange(40) >= 9) & (np.arange(40) < 19), both=1)
    assert claims.obs_criteria_ji(apart, el, ["a"], n_draws=500, rng=_rng("j")).verdict == NOT_REPRODUCED
    same = dict(related, inconsistency=related["semantic"], both=10)
    assert claims.obs_criteria_ji(same, el, ["a"], n_draws=500, rng=_rng("j")).verdict != REPRODUCED
    assert claims.obs_criteria_ji({"size": 40, "ji": 1.0}, el, ["a"], n_draws=50,
                                  rng=_rng("j")).verdict == BY_CONSTRUCTION


def _table_i(fixed_kept, recomputed_kept, recomputed_eligible, size=10):
    return pd.DataFrame({"removed": ["a"], "fixed_kept": [fixed_kept], "recomputed_kept": [recomputed_kept],
                         "recomputed_eligible": [recomputed_eligible], "split_size": [size]})


def test_table_i_retention_beats_the_random_null_and_the_majority():
    assert claims.obs_table_i_null(_table_i(10, 10, 45), 40, ["a"]).verdict == REPRODUCED
    assert claims.obs_table_i_null(_table_i(1, 8, 45), 40, ["a"]).verdict == NOT_REPRODUCED
    # retention 0.9 > 0.5, but a random 10 of 12 keeps 9 or more in ~30 % of draws: not above chance
    row = claims.obs_table_i_null(_table_i(9, 9, 12), 12, ["a"])
    assert row.verdict == UNDECIDED and row.decide
    assert claims.obs_table_i_null(_table_i(9, 8, 45).iloc[:0], 40, ["a"]).verdict == NO_SUBJECT


def test_fixed_more_than_recomputed_per_selector_and_equal_variants_fail():
    s = np.r_[np.ones(20, bool), np.zeros(10, bool)]
    fixed = np.r_[np.ones(19, bool), np.zeros(11, bool)]
    recomputed = np.r_[np.ones(8, bool), np.zeros(22, bool)]
    good = claims.obs_fixed_vs_recomputed({"a": (fixed, recomputed)}, s, n_boot=500, rng=_rng("f"))
    assert good.verdict == REPRODUCED and "+0.550" in good.measured
    same = claims.obs_fixed_vs_recomputed({"a": (fixed, recomputed), "b": (fixed, fixed)}, s, n_boot=500,
                                          rng=_rng("f"))
    assert same.verdict == NOT_REPRODUCED  # identical variants: a difference of 0 is not above 0
    assert claims.obs_fixed_vs_recomputed({}, s, n_boot=5, rng=_rng("f")).verdict == NO_SUBJECT


def _paths(pred, answer, clean_pred, K=4):
    """AnswerPaths of hand-made arrays: pred (items, selectors, corruptions, levels), clean_pred (items, selectors)."""
    pred, answer, clean_pred = np.asarray(pred), np.asarray(answer), np.asarray(clean_pred)
    n, s = clean_pred.shape
    return AnswerPaths(np.array([f"q{i:03d}" for i in range(n)], dtype=object), tuple(f"m{j}" for j in range(s)),
                       tuple(f"d{j}" for j in range(pred.shape[2])), tuple(range(1, pred.shape[3] + 1)), pred,
                       pred == answer[:, None, None, None], np.full(n, K), answer, clean_pred,
                       clean_pred == answer[:, None])


def test_zero_dispersion_is_by_construction_and_catches_a_wrong_g():
    pred = np.array([[[[1, 1, 1, 1, 1]]], [[[2, 3, 2, 3, 2]]], [[[0, 0, 1, 0, 0]]]])
    paths = _paths(pred, np.zeros(3, int), np.zeros((3, 1), int))
    G = np.array([[[0.0]], [[0.64]], [[0.32]]])
    row = claims.obs_zero_dispersion(paths, G)
    assert row.verdict == BY_CONSTRUCTION and "1 of 2" in row.measured
    assert claims.obs_zero_dispersion(paths, G + 0.1).verdict == NOT_REPRODUCED  # a G that is not Eq. 1


def test_an_easy_item_can_score_high_beyond_guessing():
    n = 80
    k = np.linspace(0.0, 0.9, n)
    pred = np.zeros((n, 3, 1, 5), int)
    top = np.arange(n) >= 60
    easy = np.where(top[:, None], 0, 1) * np.ones((1, 3), int)      # clean answer 0 is right: easy at high κ
    good = claims.obs_easy_can_score_high(_paths(pred, np.zeros(n, int), easy), k, n_boot=500, rng=_rng("e"))
    assert good.verdict == REPRODUCED and "20 of 20" in good.measured
    bad = claims.obs_easy_can_score_high(_paths(pred, np.zeros(n, int), 1 - easy), k, n_boot=500, rng=_rng("e"))
    assert bad.verdict == NOT_REPRODUCED and "0 of 20" in bad.measured   # only low-κ items are clean-easy
    # yes/no items, right by guessing about half the time: an easy share of 0.5 is chance, not easiness
    guess = np.where(np.arange(n)[:, None] % 2 == 0, 0, 1) * np.ones((1, 3), int)
    row = claims.obs_easy_can_score_high(_paths(pred, np.zeros(n, int), guess, K=2), k, n_boot=500, rng=_rng("e"))
    assert row.verdict != REPRODUCED


def test_difficulty_rank_correlation_below_its_ceiling():
    rng = np.random.default_rng(3)
    n = 300
    clean_pred = rng.integers(0, 2, (n, 3))                      # err in {0, 1/3, 2/3, 1}
    err = 1 - (clean_pred == 0).mean(axis=1)
    paths = _paths(np.zeros((n, 3, 1, 5), int), np.zeros(n, int), clean_pred)
    assert claims.obs_difficulty_rank(paths, rng.random(n), n_boot=300, rng=_rng("d")).verdict == REPRODUCED
    tracked = claims.obs_difficulty_rank(paths, err + 0.01 * rng.random(n), n_boot=300, rng=_rng("d"))
    assert tracked.verdict == NOT_REPRODUCED and tracked.value > 0.9
    assert claims.obs_difficulty_rank(paths, np.zeros(n), n_boot=30, rng=_rng("d")).verdict == NO_SUBJECT


def test_sources_kept():
    src = np.array(["a"] * 5 + ["b"] * 5)
    both, one = np.r_[1, 0, 0, 0, 0, 1, 0, 0, 0, 0].astype(bool), np.r_[1, 1, 0, 0, 0, 0, 0, 0, 0, 0].astype(bool)
    assert claims.obs_sources_kept(src, both, ["s"]).verdict == REPRODUCED
    lost = claims.obs_sources_kept(src, one, ["s"])
    assert lost.verdict == NOT_REPRODUCED and "lost: b" in lost.measured
    assert claims.obs_sources_kept(np.array(["a"] * 10), one, ["s"]).verdict == BY_CONSTRUCTION


def test_families_kept_and_families_without_a_response_have_no_subject():
    fam = np.array(["x", "x", "y", "y", "z", "z"])
    el = np.array([1, 1, 1, 1, 0, 0], bool)
    assert claims.obs_families_kept(fam, el, np.array([1, 0, 1, 0, 0, 0], bool), ["s"]).verdict == REPRODUCED
    row = claims.obs_families_kept(fam, el, np.array([1, 0, 0, 0, 0, 0], bool), ["s"])
    assert row.verdict == NOT_REPRODUCED and "1 of 2 families with eligible items lost: y" in row.measured
    G = np.full((6, 2, 1), 0.4)
    G[4:, 1] = 0.0                                         # selector b never answers differently on family z
    none = claims.obs_families_no_response(G, fam, ["a", "b"])
    assert none.verdict == NO_SUBJECT and "z: silent b" in none.measured
    assert claims.obs_families_no_response(np.full((6, 2, 1), 0.4), fam, ["a", "b"]) is None


def test_eq3_is_stricter_than_a_pooled_kappa_threshold():
    G = np.zeros((20, 3, 1))
    G[:10] = 0.4                       # A⁺: every selector responds, κ = 0.4
    G[10:15, :2] = 0.96                # selector 3 silent: κ = 0.64, above A⁺'s
    el = (G.mean(axis=2) > 0).all(axis=1)
    k = G.mean(axis=(1, 2))
    ids = [f"q{i:02d}" for i in range(20)]
    row = claims.obs_eq3_stricter(G, k, el, ids, ["a", "b", "c"], n_boot=500, rng=_rng("q"))
    assert row.verdict == REPRODUCED and "5 of 10" in row.measured and "silent: c on 5" in row.measured
    G[10:15, :2] = 0.1                 # now their pooled κ is below A⁺'s: a pooled threshold keeps A⁺
    k = G.mean(axis=(1, 2))
    assert claims.obs_eq3_stricter(G, k, el, ids, ["a", "b", "c"], n_boot=500, rng=_rng("q")).verdict == NOT_REPRODUCED


# ----------------------------------------------------------------------------- rules against their nulls


@pytest.mark.parametrize("rule", rules.RULES, ids=[r.name for r in rules.RULES])
def test_rule_passes_a_clear_positive_and_not_its_null(rule):
    assert rule.name.startswith("01.")
    res = run_check(rule, draws=60, seed=7, power_draws=0)
    assert res.false_passes <= 6, f"{rule.name}: {res.false_passes} of 60 null draws reproduced"


_CLEAR = {  # each rule's decision on a positive far stronger than the paper's, where every rule should pass
    "held-out": lambda r: rules._heldout(r, np.where(r.random(rules.N_POOL) < 0.5, 2.0, 0.05)),
    "gini": lambda r: rules._eval_gini(r, 0.5),
    "easy": lambda r: rules._easy(r, 1.0),
    "difficulty": lambda r: rules._difficulty(r, -0.5),
    "eq3": lambda r: rules._eq3(r, 0.6),
    "ji": lambda r: rules._ji(r, 0.9),
    "table_i": lambda r: "reproduced" if decisions.retention_above_chance(18, 18, 42).verdict == REPRODUCED else "",
}


@pytest.mark.parametrize("name", sorted(_CLEAR))
def test_rule_reproduces_a_clear_positive(name):
    verdicts = [_CLEAR[name](np.random.default_rng(s)) for s in range(5)]
    assert verdicts.count(REPRODUCED) >= 4, (name, verdicts)
