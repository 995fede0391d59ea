"""Notebook 07's readings and checks: the ladders' readings and mean fill, the Table I bound and its RCI
reading, the replicate machinery, and every interval check with a case that holds and one that fails."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from vlmrobust import corrupt, synth
from vlmrobust.analysis.escalation import claims as O
from vlmrobust.analysis.escalation import indices as X
from vlmrobust.analysis.escalation import ladders as L
from vlmrobust.analysis.escalation import paper_table as PT
from vlmrobust.analysis.escalation import replicates as R
from vlmrobust.corrupt import escalation as esc
from vlmrobust.repro import rng

SHARES = (0.2, 0.4, 0.6, 0.8)
DIRS = {"TD": "traverse_topdown_mean", "BU": "traverse_bottomup_mean", "LR": "traverse_leftright_mean",
        "RL": "traverse_rightleft_mean"}


def rows(preds, answers, *, model="m", perturbation="clean", level=0, param=np.nan, group="g", ids=None):
    n = len(preds)
    return pd.DataFrame({"model": model, "method": "letter", "item_id": ids or [f"q{i}" for i in range(n)],
                         "group": group, "perturbation": perturbation, "level": level, "param": param, "K": 4,
                         "answer_idx": list(answers), "pred_idx": list(preds), "confidence": 0.7})


# --------------------------------------------------------------------------- ladders as written


def test_ladder_param_and_the_corrupt_function_follow_the_readings():
    img = np.random.default_rng(0).integers(0, 256, (64, 64, 3), dtype=np.uint8)
    assert [L.ladder_param("bruce_contrast", lv) for lv in (1, 4)] == [0.9, 0.3]
    assert [L.ladder_param("bruce_contrast", lv, contrast="removed") for lv in (1, 4)] == [0.3, 0.9]
    assert L.ladder_param("bruce_center_crop", 2, crop="side") == 0.4 and math.isnan(L.ladder_param("clean", 0))
    fn = L.ladder_corrupt("removed", "side", (1, 2, 3))
    np.testing.assert_array_equal(fn(img, "bruce_contrast", 2), corrupt.apply(img, "bruce_contrast", 2,
                                                                              reading="removed"))
    np.testing.assert_array_equal(fn(img, "bruce_center_crop", 3),
                                  corrupt.apply(img, "bruce_center_crop", 3, reading="side"))
    assert (fn(img, "traverse_topdown_mean", 1)[:13] == (1, 2, 3)).all()
    assert fn.version == "contrast=removed;crop=side;mean=1,2,3"
    assert L.ladder_corrupt().version != fn.version  # the readings enter the shard keys
    with pytest.raises(ValueError, match="contrast reading"):
        L.ladder_corrupt("halved")
    with pytest.raises(ValueError, match="mean_rgb"):
        L.ladder_corrupt(mean_rgb=(1, 2))


def test_the_corrupt_function_loads_depth_for_the_sky_control():
    item = synth.make_item("colour", np.random.default_rng(1), size=64)
    fn = L.ladder_corrupt(mean_rgb=(5, 6, 7), depth_of=lambda key: item.depth)
    out = fn(item.image, "sky_band_mean", 4, key="x")
    n = esc.sky_rows(item.image, item.depth)
    assert n > 0 and (out[:n] == (5, 6, 7)).all() and np.array_equal(out[n:], item.image[n:])


def test_only_conditions_that_differ_from_the_registry_take_the_option_path():
    assert not L.needs_options("bruce_contrast") and L.needs_options("bruce_contrast", contrast="removed")
    assert not L.needs_options("bruce_center_crop") and L.needs_options("bruce_center_crop", crop="side")
    assert not L.needs_options("traverse_topdown_mean") and L.needs_options("traverse_topdown_mean",
                                                                            mean_rgb=(1, 1, 1))
    assert not L.needs_options("traverse_topdown_crop", mean_rgb=(1, 1, 1))


def test_the_mean_fill_is_the_mean_of_the_items_own_images():
    from vlmrobust import data

    items = synth.generate(2, 3, size=64)
    imgs = [data.load_image(r) for r in items.image_ref]
    want = tuple(int(v) for v in np.rint(np.concatenate([i.reshape(-1, 3) for i in imgs]).mean(axis=0)))
    assert L.items_mean_colour(items) == want
    dark = items.iloc[:1].copy()
    assert L.items_mean_colour(dark) != L.items_mean_colour(items)  # another item set, another colour


def test_rung_images_label_each_rung_with_its_parameter():
    img = np.zeros((64, 64, 3), np.uint8)
    out = L.rung_images(img, ["bruce_contrast", "bruce_center_crop"], [1, 4])
    (c_lab, c_rungs), (p_lab, p_rungs) = out.items()
    assert "kept" in c_lab and [t for t, _ in c_rungs] == ["0.9", "0.3"] and [t for t, _ in p_rungs] == ["0.2", "0.8"]


# --------------------------------------------------------------------------- Table I and the table-i reading


def test_table_i_bound_fit_from_the_papers_rows():
    fit = PT.bound_fit()
    assert fit["n"] == 19 and len(PT.PAPER_TABLE_I) == 19
    # the three rows on the bound: Claude on MMJEE (A_CL 0) and both LLaVA rows (A_CL = A_CR)
    on = PT.PAPER_TABLE_I.iloc[fit["on_bound"]]
    assert sorted(on.model) == ["Claude Opus 4.7", "LLaVA-NeXT-Mistral-7B", "LLaVA-NeXT-Mistral-7B"]
    assert fit["c_lo"] <= X.TABLE_I_BOUND <= fit["c_hi"] and fit["c_star"] == pytest.approx(0.182 / (1 - 0.3936))
    res = PT.bound_residuals(c=X.TABLE_I_BOUND)
    assert (res.residual >= 0).all() and (res.residual.iloc[fit["on_bound"]] < 1e-3).all()
    # a row below the bound moves c* down
    low = PT.PAPER_TABLE_I.copy()
    low.loc[0, "RCI_mu"] = 0.1
    assert PT.bound_fit(low)["c_star"] == pytest.approx(0.1 / (1 - 0.1875))
    assert PT.paper_rank_correlation() == pytest.approx(0.3456, abs=1e-4)


def unchanged_model(acc_right=(1, 1, 0, 0, 1)):
    ans = [0] * len(acc_right)
    preds = [0 if r else 1 for r in acc_right]
    return pd.concat([rows(preds, ans), rows(preds, ans, perturbation="bruce_blur", level=1, param=1.0)],
                     ignore_index=True)


def test_only_the_table_i_reading_puts_an_unchanged_model_on_the_bound():
    cells = X.cell_stats(unchanged_model())
    err = 1 - 3 / 5
    lit = X.rci(cells, fail="joint").iloc[0]
    assert lit.RCI == 0.0  # the literal readings miss the bound 0.3 (1 - A) = 0.12
    assert X.rci(cells, fail="conditional").RCI.iloc[0] == 0.0
    t1 = X.rci(cells, fail="table-i").iloc[0]
    assert t1.D_fail == pytest.approx(4 * 0.3 * err) and t1.RCI == pytest.approx(0.3 * err)
    assert cells.w_wrong.iloc[0] == 2


def test_table_i_reading_counts_every_perturbed_wrong_row_with_its_class_weight():
    ans = [0, 0, 0, 0]
    pred = pd.concat([rows([0, 0, 1, 1], ans), rows([1, 0, 1, 0], ans, perturbation="bruce_blur", level=1,
                                                    param=1.0)], ignore_index=True)
    classes = [""] * 4 + ["OCR", "", "", ""]
    c = X.cell_stats(pred, fail_class=classes, fail_weights={"OCR": 0.5})
    assert c.w_wrong.iloc[0] == pytest.approx(0.5 + 1.0)  # q0 (OCR, 0.5) and q2 (clean-wrong, weight 1)
    assert X.rci(c, fail="table-i").D_fail.iloc[0] == pytest.approx(1.2 * 1.5 / 4)


# --------------------------------------------------------------------------- replicates


def test_item_bootstrap_resamples_questions_with_their_rows_and_is_seeded():
    pred = pd.concat([rows([0, 1, 2], [0, 0, 0]), rows([0, 0, 2], [0, 0, 0], perturbation="bruce_blur", level=1,
                                                       param=1.0)], ignore_index=True)
    a = R.item_bootstrap(pred, lambda p: p, 3, seed=4)
    b = R.item_bootstrap(pred, lambda p: p, 3, seed=4)
    assert all(x.equals(y) for x, y in zip(a, b, strict=True))
    for rep in a:
        assert len(rep) == len(pred) and rep.groupby("item_id").size().eq(2).all()
        assert set(rep.item_id) <= {0, 1, 2}
        # each drawn copy keeps its own clean and corrupted answer
        for _, g in rep.groupby("item_id"):
            orig = g.pred_idx.tolist()
            assert orig in ([0, 0], [1, 0], [2, 2])
    draw = rng("07.bootstrap", 4).integers(0, 3, 3)
    assert sorted(a[0].groupby("item_id").pred_idx.first()) == sorted([0, 1, 2][i] for i in draw)


def test_group_permutations_keep_group_sizes_and_move_labels():
    pred = pd.concat([rows([0] * 6, [0] * 6, group=["a"] * 3 + ["b"] * 3),
                      rows([0] * 6, [0] * 6, group=["a"] * 3 + ["b"] * 3, perturbation="bruce_blur", level=1)],
                     ignore_index=True)
    perms = R.group_permutations(pred, lambda p: p.drop_duplicates("item_id").set_index("item_id").group, 20, 0)
    assert all((p == "a").sum() == 3 for p in perms) and any(p.loc["q0"] == "b" for p in perms)
    bad = pred.copy()
    bad.loc[len(pred) - 1, "group"] = "a"
    with pytest.raises(ValueError, match="one 'group' label"):
        R.group_permutations(bad, len, 1, 0)


# --------------------------------------------------------------------------- the interval checks


def tables(t1=None, directions=None, states=None, curves=None, regimes=None, ablation=None):
    return R.RunTables(t1, directions, states, curves, regimes, ablation)


def jitter(t: R.RunTables, cols, n=30, scale=0.01, seed=0):
    g = np.random.default_rng(seed)
    out = []
    for _ in range(n):
        t1 = t.table1.copy()
        for c in cols:
            t1[c] = t1[c] + g.normal(0, scale, len(t1))
        out.append(t._replace(table1=t1))
    return out


def test_share_of_similar_accuracy_pairs_with_different_index():
    t1 = pd.DataFrame({"A_CR": [0.5, 0.52, 0.9, 0.91], "RCI_mu": [0.1, 0.3, 0.1, 0.35]})
    t = tables(t1)
    assert O.share_similar_different(t) == 1.0
    hold = O.obs_shares("6", "", O.share_similar_different, t, jitter(t, ["RCI_mu"]), "pairs")
    assert hold.reproduced is True and "share 1.000" in hold.measured
    same = tables(t1.assign(RCI_mu=[0.1, 0.11, 0.2, 0.21]))
    fail = O.obs_shares("6", "", O.share_similar_different, same, jitter(same, ["RCI_mu"]), "pairs")
    assert O.share_similar_different(same) == 0.0 and fail.reproduced is False
    assert O.obs_shares("6", "", O.share_similar_different, tables(t1.assign(A_CR=[0.1, 0.4, 0.7, 1.0])),
                        [], "pairs").reproduced is None


def test_share_clean_not_robust_counts_discordant_pairs_within_groups():
    t1 = pd.DataFrame({"group": ["g", "g", "g", "h", "h"], "model": list("abcab"),
                       "A_CL": [0.9, 0.5, 0.7, 0.8, 0.6], "RCI_mu": [0.3, 0.1, 0.2, 0.1, 0.2]})
    assert O.share_clean_not_robust(tables(t1)) == pytest.approx(3 / 4)  # all of g's pairs, none of h's
    aligned = t1.assign(RCI_mu=[0.1, 0.3, 0.2, 0.1, 0.2])
    assert O.share_clean_not_robust(tables(aligned)) == 0.0
    t = tables(t1)
    assert O.obs_shares("4", "", O.share_clean_not_robust, t, jitter(t, ["RCI_mu"], scale=0.001),
                        "pairs").reproduced is True
    a = tables(aligned)
    assert O.obs_shares("4", "", O.share_clean_not_robust, a, jitter(a, ["RCI_mu"], scale=0.001),
                        "pairs").reproduced is False


def directions_of(spreads):
    recs = [{"model": f"m{i}", "group": "g", "direction": d, "T_RCI": 0.2 + s * k / 3}
            for i, s in enumerate(spreads) for k, d in enumerate(DIRS)]
    d = pd.DataFrame(recs)
    d.attrs["unit"] = ("model", "group")
    return d


def test_share_direction_spread_and_worst_direction():
    assert O.share_direction_spread(tables(directions=directions_of([0.1, 0.2, 0.0]))) == pytest.approx(2 / 3)
    assert O.share_direction_spread(tables(directions=directions_of([0.0, 0.01]))) == 0.0
    wide = [tables(directions=directions_of(v)) for v in ([0.1, 0.2, 0.0], [0.2, 0.1, 0.3], [0.1, 0.1, 0.2])]
    assert O.obs_shares("9", "", O.share_direction_spread, wide[0], wide, "units").reproduced is True
    flat = [tables(directions=directions_of(v)) for v in ([0.0, 0.01, 0.02], [0.01, 0.0, 0.03])]
    assert O.obs_shares("9", "", O.share_direction_spread, flat[0], flat, "units").reproduced is False
    rl = pd.DataFrame({"W_D": ["RL", "RL", "RL", "TD"], "RCI_mu": 0.1})
    t = tables(rl)
    reps = [tables(rl.sample(4, replace=True, random_state=i)) for i in range(40)]
    assert O.share_worst_is(t) == 0.75
    assert O.obs_rl_most_fragile(t, [tables(rl.assign(W_D=["RL"] * 3 + ["RL"]))] * 5).reproduced is True
    spread = O.obs_rl_most_fragile(t, reps)  # four units: the interval reaches down to the null 1/4
    assert spread.reproduced is False and "share 0.750 [0.250" in spread.measured
    none = tables(rl.assign(W_D=["TD", "BU", "LR", "TD"]))
    assert O.obs_rl_most_fragile(none, [none] * 5).reproduced is False


def curves_of(models: dict) -> pd.DataFrame:
    recs = [{"model": m, "perturbation": p, "level": lv, "accuracy": a}
            for m, per in models.items() for p, accs in per.items() for lv, a in enumerate(accs)]
    return pd.DataFrame(recs)


def test_share_crop_worse_than_blur_and_contrast():
    c = curves_of({"a": {"bruce_center_crop": [0.8, 0.4], "bruce_blur": [0.8, 0.7], "bruce_contrast": [0.8, 0.75]},
                   "b": {"bruce_center_crop": [0.8, 0.7], "bruce_blur": [0.8, 0.5], "bruce_contrast": [0.8, 0.8]}})
    assert O.share_crop_worse(tables(curves=c)) == 0.5
    hold = O.obs_crop_not_blur(tables(curves=c), [tables(curves=c)] * 10)
    assert hold.reproduced is True
    flipped = c.assign(accuracy=np.where(c.perturbation.eq("bruce_center_crop") & c.level.eq(1), 0.79, c.accuracy))
    assert O.share_crop_worse(tables(curves=flipped)) == 0.0
    assert O.obs_crop_not_blur(tables(curves=flipped), [tables(curves=flipped)] * 10).reproduced is False
    assert math.isnan(O.share_crop_worse(tables(curves=c[c.perturbation != "bruce_blur"].query(
        "perturbation != 'bruce_contrast'"))))


def test_share_non_monotone_counts_traversal_curves():
    reg = pd.DataFrame({"perturbation": ["traverse_topdown_mean", "traverse_bottomup_mean", "bruce_blur"],
                        "non_monotone": [True, False, True]})
    assert O.share_non_monotone(tables(regimes=reg)) == 0.5
    assert O.share_non_monotone(tables(regimes=reg), kind=None) == pytest.approx(2 / 3)
    mono = reg.assign(non_monotone=[False, False, True])
    assert O.obs_shares("S3", "", O.share_non_monotone, tables(regimes=mono), [tables(regimes=mono)] * 5,
                        "curves").reproduced is False
    assert O.obs_shares("S3", "", O.share_non_monotone, tables(regimes=reg), [tables(regimes=reg)] * 5,
                        "curves").reproduced is True


def test_dataset_dependence_against_permuted_group_labels():
    t1 = pd.DataFrame({"group": ["a", "a", "b", "b"], "RCI_mu": [0.1, 0.12, 0.4, 0.42], "T_mu": [0.2, 0.2, 0.5, 0.5]})
    perms = [tables(t1.assign(group=list(g))) for g in ("abab", "baba", "abba", "baab") * 5]
    hold = O.obs_dataset_dependence(tables(t1), perms)
    assert hold.reproduced is True and "p = 0.048" in hold.measured  # (1 + 0) / (1 + 20)
    flat = t1.assign(RCI_mu=[0.1, 0.4, 0.12, 0.42])
    perms = [tables(flat.assign(group=list(g))) for g in ("aabb", "abab", "baba", "abba", "baab") * 4]
    assert O.obs_dataset_dependence(tables(flat), perms).reproduced is False
    assert O.obs_dataset_dependence(tables(t1), []).reproduced is None


def test_corruption_and_traversal_robustness_correlation():
    t1 = pd.DataFrame({"RCI_mu": [0.1, 0.2, 0.3, 0.4, 0.5], "T_mu": [0.3, 0.1, 0.5, 0.2, 0.4]})
    t = tables(t1)
    assert O.rho_rci_trci(t) == pytest.approx(0.3)
    assert O.obs_corruption_vs_traversal(t, jitter(t, ["T_mu"], scale=0.001)).reproduced is True
    same = tables(t1.assign(T_mu=t1.RCI_mu * 2))
    assert O.rho_rci_trci(same) == pytest.approx(1.0)
    assert O.obs_corruption_vs_traversal(same, jitter(same, ["T_mu"], scale=0.001)).reproduced is False


def test_d_spatial_per_state_rho_is_not_an_identity():
    # per-state terms (D_acc + D_spatial) / 5 against D_acc / 4: with D_spatial = s varying, ranks change
    st = pd.DataFrame({"model": "m", "direction": pd.Categorical(["TD"] * 4 + ["BU"] * 4, ["TD", "BU"]),
                       "level": [1, 2, 3, 4] * 2, "s": list(SHARES) * 2,
                       "D_acc": [0.5, 0.4, 0.3, 0.2, 0.0, 0.1, 0.2, 0.3], "D_ent": 0.0, "D_fail": 0.0,
                       "D_spatial": list(SHARES) * 2, "D_prog": 0.0, "A": 0.5})
    st.attrs["unit"] = ("model",)
    terms = R.state_terms(st)
    assert terms.T_equal.to_numpy() == pytest.approx((st.D_acc + st.D_spatial) / 5)
    assert terms.T_no_spatial.to_numpy() == pytest.approx(st.D_acc / 4)
    t = tables(states=terms)
    rho = O.rho_per_state(t)
    assert rho < 0.5  # the spatial term reverses the TD trajectory's order
    assert O.obs_no_spatial_per_state(t, [t] * 5).reproduced is False
    near = terms.assign(T_no_spatial=terms.T_equal + np.r_[0, 0, 0.05, -0.05, 0, 0, 0, 0] * 0.1)
    r = O.rho_per_state(tables(states=near))
    reps = [tables(states=near.sample(8, replace=True, random_state=i)) for i in range(60)]
    chk = O.obs_no_spatial_per_state(tables(states=near), reps, paper=r)
    assert chk.reproduced is True and "n = 8" in chk.measured
    model = O.obs_no_spatial_model_level(1.0, 0.0)
    assert model.reproduced is None and "by construction" in model.check


def test_weighting_insensitivity_with_an_interval():
    scores = pd.DataFrame({"model": list("abcd"), "RCI:equal": [0.1, 0.2, 0.3, 0.4],
                           "RCI:accuracy-heavy": [0.1, 0.2, 0.3, 0.4], "T-RCI:equal": [0.4, 0.3, 0.2, 0.1],
                           "T-RCI:failure-heavy": [0.4, 0.3, 0.2, 0.1], "T-RCI:no-spatial": [0.1, 0.2, 0.3, 0.4]})
    t = tables(ablation=scores)
    assert O.min_rank_correlation(t) == 1.0  # the no-spatial column is left out
    assert O.obs_weighting_insensitive(t, [t] * 5).reproduced is True
    swapped = tables(ablation=scores.assign(**{"RCI:accuracy-heavy": [0.4, 0.3, 0.2, 0.1]}))
    assert O.min_rank_correlation(swapped) == -1.0
    assert O.obs_weighting_insensitive(swapped, [swapped] * 5).reproduced is False


def test_latent_share_against_the_false_alarm_rate():
    # 30 flips, 24 warned before; 30 trajectories that never flip, 3 warned (false alarms)
    w = pd.DataFrame({"flip_level": [3.0] * 30 + [np.nan] * 30,
                      "warn_level": [2.0] * 24 + [np.nan] * 6 + [1.0] * 3 + [np.nan] * 27})
    hold = O.obs_latent_share(w, 200, rng("t", 0))
    assert hold.reproduced is True and "0.800 warned − 0.100 false alarms = 0.700" in hold.measured
    alarm = w.assign(warn_level=[2.0] * 6 + [np.nan] * 24 + [1.0] * 9 + [np.nan] * 21)  # 0.2 warned, 0.3 alarms
    assert O.obs_latent_share(alarm, 200, rng("t", 0)).reproduced is False
    assert O.obs_latent_share(w.assign(flip_level=np.nan), 10, rng("t", 0)).reproduced is None


def test_claims_table_on_a_small_panel():
    g = np.random.default_rng(1)
    parts = []
    for m in range(4):
        ans = g.integers(0, 4, 24)
        grp = np.where(np.arange(24) < 12, "a", "b")
        parts.append(rows(np.where(g.random(24) < 0.8, ans, (ans + 1) % 4), ans, model=f"m{m}", group=grp))
        for name in ("bruce_blur", "bruce_contrast", "bruce_center_crop", *DIRS.values()):
            for lv in (1, 2):
                ok = g.random(24) < 0.8 - 0.1 * lv * (m + 1) / 2
                parts.append(rows(np.where(ok, ans, (ans + 2) % 4), ans, model=f"m{m}", group=grp,
                                  perturbation=name, level=lv, param=SHARES[lv - 1]))
    pred = pd.concat(parts, ignore_index=True)
    lad = ["bruce_blur", "bruce_contrast", "bruce_center_crop"]
    fn = lambda p: R.run_tables(p, lad, DIRS, tol=0.02)  # noqa: E731
    point, boot = fn(pred), R.item_bootstrap(pred, fn, 5, 0)
    perms = R.group_permutations(pred, lambda p: R.run_tables(p, lad, DIRS, full=False), 5, 0)
    warn = pd.DataFrame({"flip_level": [2, np.nan], "warn_level": [1, np.nan]})
    out = O.claims_table(point, boot, perms, point.regimes, warn, 1.0, 0.0, latent_rng=rng("t", 1))
    assert len(out) == 14 and all(v in (True, False, None) for v in out.reproduced)
    assert out.reproduced[11] is None  # the model-level identity is never counted
