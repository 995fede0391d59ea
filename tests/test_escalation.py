"""RCI, T-RCI, Table I, the weighting ablation, fragility curves and the seed-001 checks on hand-computed cases."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from vlmrobust.analysis.escalation import ablation as AB
from vlmrobust.analysis.escalation import fragility as F
from vlmrobust.analysis.escalation import indices as X
from vlmrobust.stats import calibration

DIRS = {"TD": "traverse_topdown_mean", "BU": "traverse_bottomup_mean", "LR": "traverse_leftright_mean",
        "RL": "traverse_rightleft_mean"}
SHARES = (0.2, 0.4, 0.6, 0.8)


def rows(preds, answers, *, model="m", perturbation="clean", level=0, param=np.nan, K=4, conf=None,
         group="g", method="letter"):
    n = len(preds)
    Ks = [K] * n if np.isscalar(K) else list(K)
    return pd.DataFrame({
        "model": model, "method": method, "item_id": [f"q{i}" for i in range(n)], "group": group,
        "perturbation": perturbation, "level": level, "param": param, "K": Ks, "answer_idx": list(answers),
        "pred_idx": list(preds), "confidence": [np.nan] * n if conf is None else list(conf),
    })


def entropy(counts, k):
    n = sum(counts)
    return -sum(c / n * math.log(c / n) for c in counts if c) / math.log(k)


# --------------------------------------------------------------------------- the hand-computed RCI case
# four items, answer A everywhere; clean predictions A A A B (3/4 right), corrupted A B C B (1/4 right)
ANS = [0, 0, 0, 0]
CLEAN, CORR = [0, 0, 0, 1], [0, 1, 2, 1]
CONF0, CONF1 = [0.9, 0.8, 0.7, 0.6], [0.5, 0.5, 0.5, 0.5]
D_ACC = 1 - (1 / 4) / (3 / 4)
D_ENT = 1 - entropy([1, 2, 1], 4) / entropy([3, 1], 4)  # negative: the predictions spread out
D_FAIL = 2 / 3  # items q1 and q2 were right and turn wrong; q0 stays right, q3 was wrong
ECE0 = (0.1 + 0.2 + 0.3 + 0.6) / 4  # one item per bin: |1 - .9|, |1 - .8|, |1 - .7|, |0 - .6|
ECE1 = abs(1 - 4 * 0.5) / 4  # all in bin 5: one right, mean confidence 0.5


def pred_four_terms(conf=True):
    return pd.concat([rows(CLEAN, ANS, conf=CONF0 if conf else None),
                      rows(CORR, ANS, perturbation="bruce_blur", level=1, param=1.0, conf=CONF1 if conf else None)],
                     ignore_index=True)


def test_four_term_rci_by_hand():
    cells = X.cell_stats(pred_four_terms(), "model")
    r = X.rci(cells).iloc[0]
    assert (r.A, r.A_clean, r.n_cc, r.n_flip) == (0.25, 0.75, 3, 2)
    assert r.H == pytest.approx(0.75) and r.H_clean == pytest.approx(entropy([3, 1], 4))
    assert r.ECE == pytest.approx(ECE1) and r.ECE_clean == pytest.approx(ECE0)
    assert r.D_acc == pytest.approx(D_ACC) and r.D_ent == pytest.approx(D_ENT) and D_ENT < 0
    assert r.D_cal == pytest.approx(abs(ECE1 - ECE0)) and r.D_fail == pytest.approx(D_FAIL)
    assert r.n_terms == 4 and r.RCI == pytest.approx((D_ACC + abs(ECE1 - ECE0) + D_ENT + D_FAIL) / 4)
    # the ECE of every cell is calibration.ece on that cell's rows
    assert r.ECE == pytest.approx(calibration.ece(CONF1, np.array(CORR) == 0), abs=0)


def test_three_term_rci_without_confidences():
    r = X.rci(X.cell_stats(pred_four_terms(conf=False))).iloc[0]
    assert np.isnan(r.D_cal) and r.n_terms == 3
    assert r.RCI == pytest.approx((D_ACC + D_ENT + D_FAIL) / 3)
    # non-uniform lambda is renormalised over the available terms
    lam = (0.4, 0.3, 0.2, 0.1)
    assert X.rci(X.cell_stats(pred_four_terms(conf=False)), lam).RCI.iloc[0] == pytest.approx(
        (0.4 * D_ACC + 0.2 * D_ENT + 0.1 * D_FAIL) / 0.7)


def test_negative_d_acc_is_not_clipped():
    pred = pd.concat([rows([0, 1, 1, 1], ANS), rows([0, 0, 0, 1], ANS, perturbation="bruce_blur", level=1, param=1.0)])
    r = X.rci(X.cell_stats(pred)).iloc[0]
    assert r.D_acc == pytest.approx(1 - 0.75 / 0.25) == -2.0
    assert r.D_fail == 0.0  # the one clean-correct item stays right


def test_d_fail_joint_and_conditional_readings():
    pred = pred_four_terms(conf=False)
    cells = X.cell_stats(pred)
    assert X.rci(cells, fail="joint").D_fail.iloc[0] == pytest.approx(2 / 3)
    assert X.rci(cells, fail="conditional").D_fail.iloc[0] == 1.0  # uniform w_f: 1 whenever a flip exists
    # class weights: q1's failure is OCR (w 1), q2's other (w 0.5)
    classes = ["", "", "", "", "", "OCR", "other", ""]
    wc = X.cell_stats(pred, fail_class=classes, fail_weights={"other": 0.5})
    assert X.rci(wc, fail="joint").D_fail.iloc[0] == pytest.approx((1 + 0.5) / 3)
    assert X.rci(wc, fail="conditional").D_fail.iloc[0] == pytest.approx((1 + 0.5) / 2)
    # no flip: joint 0, conditional 0
    same = pd.concat([rows(CLEAN, ANS), rows(CLEAN, ANS, perturbation="bruce_blur", level=1, param=1.0)])
    c = X.cell_stats(same)
    assert X.rci(c).D_fail.iloc[0] == 0 and X.rci(c, fail="conditional").D_fail.iloc[0] == 0
    with pytest.raises(ValueError, match="fail must be"):
        X.rci(c, fail="marginal")
    with pytest.raises(ValueError, match="fail_class"):
        X.cell_stats(pred, fail_weights={"OCR": 1.0})


def test_a_clean_zero_leaves_d_acc_and_d_fail_out():
    pred = pd.concat([rows([1, 1, 2, 3], ANS, conf=CONF0), rows([0, 1, 2, 1], ANS, perturbation="bruce_blur",
                                                               level=1, param=1.0, conf=CONF1)])
    r = X.rci(X.cell_stats(pred)).iloc[0]
    assert r.A_clean == 0 and np.isnan(r.D_acc) and np.isnan(r.D_fail)
    assert r.n_terms == 2 and r.RCI == pytest.approx((r.D_cal + r.D_ent) / 2)
    assert np.isfinite(r.D_cal) and r.D_ent == pytest.approx(1 - 0.75 / entropy([2, 1, 1], 4))


def test_h_clean_zero_leaves_d_ent_out():
    ans = [0, 0, 1, 1]  # clean always answers A: half right, entropy 0
    pred = pd.concat([rows([0, 0, 0, 0], ans), rows([0, 1, 0, 1], ans, perturbation="bruce_blur", level=1, param=1.0)])
    r = X.rci(X.cell_stats(pred)).iloc[0]
    assert r.H_clean == 0 and np.isnan(r.D_ent) and r.n_terms == 2
    assert r.D_acc == pytest.approx(1 - 0.5 / 0.5) == 0.0 and r.D_fail == pytest.approx(0.5)
    assert r.RCI == pytest.approx(0.25)
    # nothing available at all: A_clean = 0, H_clean = 0, no confidences
    none = pd.concat([rows([1, 1], [0, 0]), rows([0, 1], [0, 0], perturbation="bruce_blur", level=1, param=1.0)])
    r = X.rci(X.cell_stats(none)).iloc[0]
    assert r.n_terms == 0 and np.isnan(r.RCI)
    # and in T-RCI the same rule: D_acc, D_ent undefined, the rest averaged
    st = X.trci_states(X.cell_stats(rows_traversal_same(none_clean=True)), DIRS)
    assert st.D_acc.isna().all() and st.D_fail.isna().all()


def rows_traversal_same(none_clean=False):
    ans = [0, 0, 0, 0]
    clean = [1, 1, 1, 1] if none_clean else [0, 0, 1, 0]
    parts = [rows(clean, ans)]
    for name in DIRS.values():
        for lv, s in enumerate(SHARES, 1):
            parts.append(rows(clean, ans, perturbation=name, level=lv, param=s))
    return pd.concat(parts, ignore_index=True)


def test_mixed_k_entropy_uses_the_largest_k():
    ans = [0, 0, 0, 0]
    pred = pd.concat([rows([0, 1, 0, 1], ans, K=[2, 2, 4, 4]),
                      rows([0, 1, 2, 3], ans, K=[2, 2, 4, 4], perturbation="bruce_blur", level=1, param=1.0)])
    c = X.cell_stats(pred).iloc[0]
    assert c.K_max == 4 and c.H == pytest.approx(1.0) and c.H_clean == pytest.approx(0.5)


def test_perfectly_robust_model_has_trci_equal_to_the_spatial_constant():
    cells = X.cell_stats(rows_traversal_same())
    st = X.trci_states(cells, DIRS)
    assert (st[["D_acc", "D_ent", "D_fail", "D_prog"]].to_numpy() == 0).all()
    res = X.trci(st)
    assert res.directions.T_RCI.to_numpy() == pytest.approx([0.1] * 4)  # alpha_4 * mean(s) = 0.2 * 0.5
    u = res.units.iloc[0]
    assert u.T_mu == pytest.approx(0.1) and u.T_max == pytest.approx(0.8 / 5) and u.W_D == "TD"
    off = X.spatial_offset(st)
    assert off.offset.to_numpy() == pytest.approx([0.1] * 4)
    # without D_spatial the perfectly robust model scores 0
    assert X.trci(st, AB.TRCI_SCHEMES["no-spatial"]).units.T_mu.iloc[0] == pytest.approx(0.0)


def test_d_prog_with_a_zero_previous_accuracy():
    ans = [0, 0, 0, 0]
    parts = [rows([0, 0, 1, 1], ans)]  # clean accuracy 0.5
    accs = {1: [1, 1, 1, 1], 2: [1, 1, 1, 1], 3: [0, 1, 1, 1], 4: [1, 1, 1, 1]}  # 0, 0, 0.25, 0
    for lv, p in accs.items():
        parts.append(rows(p, ans, perturbation=DIRS["TD"], level=lv, param=SHARES[lv - 1]))
    st = X.trci_states(X.cell_stats(pd.concat(parts)), {"TD": DIRS["TD"]})
    eps = X.EPSILON
    assert st.A_prev.tolist() == [0.5, 0.0, 0.0, 0.25]
    assert st.D_prog.to_numpy() == pytest.approx([0.5 / (0.5 + eps), 0.0, 0.0, 0.25 / (0.25 + eps)])
    assert st.D_acc.tolist() == [1.0, 1.0, 0.5, 1.0]  # clipped at 0, relative to the clean 0.5
    with pytest.raises(ValueError, match="eps"):
        X.trci_states(X.cell_stats(pd.concat(parts)), {"TD": DIRS["TD"]}, eps=0.0)


def constructed_states() -> pd.DataFrame:
    """A 4-direction table with chosen per-state terms (only D_acc non-zero besides D_spatial)."""
    acc = {"TD": [0.0, 0.0, 0.0, 0.0], "BU": [0.5, 0.5, 0.5, 0.5], "LR": [0.0, 0.0, 0.0, 2.0],
           "RL": [0.2, 0.2, 0.2, 0.2]}
    recs = []
    for d, vals in acc.items():
        for lv, (v, s) in enumerate(zip(vals, SHARES, strict=True), 1):
            recs.append({"model": "m", "direction": d, "level": lv, "s": s, "A": 0.5, "D_acc": v, "D_ent": 0.0,
                         "D_fail": 0.0, "D_spatial": s, "D_prog": 0.0})
    st = pd.DataFrame(recs)
    st["direction"] = pd.Categorical(st["direction"], categories=list(acc))
    st.attrs["unit"] = ("model",)
    return st


def test_worst_direction_its_score_and_t_max_on_a_constructed_table():
    res = X.trci(constructed_states())
    d = res.directions.set_index("direction").T_RCI
    # per-state term (D_acc + s) / 5; direction means over four states
    assert d["TD"] == pytest.approx(0.5 / 5) and d["BU"] == pytest.approx((0.5 + 0.5) / 5)
    assert d["LR"] == pytest.approx((2.0 / 4 + 0.5) / 5) and d["RL"] == pytest.approx((0.2 + 0.5) / 5)
    u = res.units.iloc[0]
    assert u.W_D == "BU" and u.W_T == pytest.approx(0.2)  # BU and LR tie at 0.2: the first given wins
    assert u.T_max == pytest.approx((2.0 + 0.8) / 5)  # LR's last state: max over direction x state
    assert u.T_mu == pytest.approx(d.mean())
    # betas and gammas: weights renormalised; a mapping or a list in order
    b = X.trci(constructed_states(), betas={"TD": 1, "BU": 0, "LR": 0, "RL": 0}).units.T_mu.iloc[0]
    assert b == pytest.approx(d["TD"])
    g = X.trci(constructed_states(), gammas=[0, 0, 0, 1]).directions.set_index("direction").T_RCI
    assert g["LR"] == pytest.approx((2.0 + 0.8) / 5)
    with pytest.raises(ValueError, match="gammas"):
        X.trci(constructed_states(), gammas=[1, 1])
    with pytest.raises(ValueError, match="weights"):
        X.trci(constructed_states(), alphas=(1, 1))


def test_cell_stats_checks_its_input():
    pred = pred_four_terms()
    with pytest.raises(ValueError, match="no clean row"):
        X.cell_stats(pred[pred.perturbation != "clean"])
    dropped = X.cell_stats(pd.concat([pred, rows([0], [0], perturbation="bruce_blur", level=1, param=1.0,
                                                 model="other")]), missing_clean="drop")
    assert len(dropped) == 1
    with pytest.raises(ValueError, match="duplicate"):
        X.cell_stats(pd.concat([pred, pred[pred.perturbation != "clean"]]))
    bad = pred.copy()
    bad.loc[0, "pred_idx"] = 4
    with pytest.raises(ValueError, match=r"pred_idx must lie in \[0, K\)"):
        X.cell_stats(bad)
    two = pd.concat([pred, pred.assign(method="loglik")])
    with pytest.raises(ValueError, match="several scoring methods"):
        X.cell_stats(two)
    assert len(X.cell_stats(two, ("model", "method"))) == 2
    with pytest.raises(ValueError, match="lacks column"):
        X.cell_stats(pred.drop(columns="pred_idx"))


def test_cells_match_a_per_cell_computation_on_random_data():
    g = np.random.default_rng(3)
    parts = []
    for m in ("a", "b"):
        ans = g.integers(0, 4, 60)
        parts.append(rows(g.integers(0, 4, 60), ans, model=m, conf=g.random(60)))
        for name in ("bruce_blur", DIRS["TD"]):
            for lv in (1, 2):
                parts.append(rows(g.integers(0, 4, 60), ans, model=m, perturbation=name, level=lv, param=0.2 * lv,
                                  conf=g.random(60)))
    pred = pd.concat(parts, ignore_index=True)
    pred.loc[g.random(len(pred)) < 0.1, "confidence"] = np.nan  # unparsed confidences are left out
    cells = X.cell_stats(pred)
    for r in cells.itertuples():
        cur = pred[(pred.model == r.model) & (pred.perturbation == r.perturbation) & (pred.level == r.level)]
        cl = pred[(pred.model == r.model) & (pred.perturbation == "clean")].set_index("item_id").loc[cur.item_id]
        ok1 = (cur.pred_idx == cur.answer_idx).to_numpy()
        ok0 = (cl.pred_idx == cl.answer_idx).to_numpy()
        assert r.A == ok1.mean() and r.A_clean == ok0.mean() and r.n_flip == int((ok0 & ~ok1).sum())
        assert r.ECE == pytest.approx(calibration.ece(cur.confidence, ok1), abs=1e-15)
        assert r.ECE_clean == pytest.approx(calibration.ece(cl.confidence, ok0), abs=1e-15)
        assert r.H == pytest.approx(entropy(np.bincount(cur.pred_idx, minlength=4), 4))


def test_table_i_columns():
    parts = [rows_traversal_same()]
    ans = [0, 0, 0, 0]
    for lv in (1, 2):
        parts.append(rows([0, 1, 1, 0], ans, perturbation="bruce_blur", level=lv, param=float(lv)))
    cells = X.cell_stats(pd.concat(parts, ignore_index=True))
    r = X.rci(cells)
    t = X.table_i(r, X.trci(X.trci_states(cells, DIRS)), ["bruce_blur"]).iloc[0]
    assert t.A_CL == 0.75 and t.A_CR == 0.5 and t.n_ladder == 2
    assert t.RCI_mu == pytest.approx(r[r.perturbation == "bruce_blur"].RCI.mean())
    assert t.A_T == 0.75 and t.T_mu == pytest.approx(0.1) and t.W_D == "TD"
    assert list(X.TABLE_I_COLUMNS) == list(t.index[1:10])
    with pytest.raises(ValueError, match="no RCI cell"):
        X.table_i(r, X.trci(X.trci_states(cells, DIRS)), ["bruce_rotate"])


# --------------------------------------------------------------------------- the weighting ablation


def random_panel(seed=0, n_models=6, n=40):
    g = np.random.default_rng(seed)
    parts = []
    for m in range(n_models):
        ans = g.integers(0, 4, n)
        skill = 0.9 - 0.08 * m
        right = g.random(n) < skill
        parts.append(rows(np.where(right, ans, (ans + 1) % 4), ans, model=f"m{m}", conf=g.random(n)))
        for name in ("bruce_blur", *DIRS.values()):
            for lv in (1, 2, 3, 4):
                r = g.random(n) < skill - (0.05 + 0.03 * m) * lv
                parts.append(rows(np.where(r, ans, (ans + 1 + g.integers(0, 3, n)) % 4), ans, model=f"m{m}",
                                  perturbation=name, level=lv, param=SHARES[lv - 1], conf=g.random(n)))
    return pd.concat(parts, ignore_index=True)


def test_weighting_schemes_and_the_exact_rank_correlation_without_d_spatial():
    assert AB.heavy(4, 0) == (0.5, 1 / 6, 1 / 6, 1 / 6) and AB.heavy(5, None) == (0.2,) * 5
    cells = X.cell_stats(random_panel())
    st = X.trci_states(cells, DIRS)
    scores = AB.ablation_scores(cells, st, ["bruce_blur"])
    assert {"RCI:equal", "RCI:failure-heavy", "T-RCI:no-spatial"} <= set(scores.columns) and len(scores) == 6
    eq = X.trci(st).units.T_mu.to_numpy()
    assert scores["T-RCI:equal"].to_numpy() == pytest.approx(eq)
    rho = AB.rank_correlations(scores, "T-RCI")
    # T_equal = 4/5 T_no-spatial + 0.1 per unit: the residual of the affine map, from two trci calls
    assert np.abs(AB.affine_residual(st).residual).max() < 1e-15
    assert rho.shape == (5, 5) and (np.diag(rho) == 1).all()
    with pytest.raises(ValueError, match="two or more"):
        AB.rank_correlations(scores[["model", "RCI:equal"]], "RCI")


# --------------------------------------------------------------------------- fragility curves and latent instability


def curves_of(accs: dict) -> pd.DataFrame:
    recs = [{"model": "m", "perturbation": p, "level": lv, "param": np.nan, "accuracy": a, "n": 10}
            for p, vals in accs.items() for lv, a in enumerate(vals)]
    c = pd.DataFrame(recs)
    c.attrs["unit"] = ("model",)
    return c


def test_regimes_by_retention_and_non_monotone_curves():
    reg = F.curve_regimes(curves_of({"a": [0.8, 0.8, 0.7, 0.7, 0.66], "b": [0.8, 0.6, 0.65, 0.5, 0.4],
                                     "c": [0.8, 0.5, 0.3, 0.3, 0.2], "d": [0.0, 0.1, 0.0, 0.0, 0.0]}),
                          tol=0.02).set_index("perturbation")
    assert reg.regime.astype(str).tolist() == ["stable", "progressive", "severe", "undefined"]
    assert reg.retention["a"] == pytest.approx(0.66 / 0.8) and reg.retention["b"] == pytest.approx(0.5)
    assert reg.non_monotone.tolist() == [False, True, False, True]
    assert reg.n_rises["b"] == 1 and reg.max_rise["b"] == pytest.approx(0.05)
    assert not F.curve_regimes(curves_of({"b": [0.8, 0.6, 0.65, 0.5, 0.4]}), tol=0.1).non_monotone.iloc[0]
    with pytest.raises(ValueError, match="severe_below"):
        F.curve_regimes(curves_of({"a": [1, 1]}), stable_min=0.4, severe_below=0.6)


def test_fragility_curves_start_at_the_clean_accuracy():
    cur = F.fragility_curves(X.cell_stats(pred_four_terms()))
    assert cur.level.tolist() == [0, 1] and cur.accuracy.tolist() == [0.75, 0.25]


def latent_table():
    """One item, answer A; clean p_A 0.8; TD: 0.7 (right), 0.5 (right, D_conf 0.375), 0.3 (wrong)."""
    recs = [("clean", 0, [0.8, 0.1, 0.05, 0.05])]
    recs += [(DIRS["TD"], 1, [0.7, 0.1, 0.1, 0.1]), (DIRS["TD"], 2, [0.5, 0.4, 0.05, 0.05]),
             (DIRS["TD"], 3, [0.3, 0.6, 0.05, 0.05])]
    recs += [(DIRS["BU"], lv, [0.79, 0.11, 0.05, 0.05]) for lv in (1, 2, 3)]
    return pd.DataFrame([{"model": "m", "method": "letter", "item_id": "q0", "perturbation": p, "level": lv, "K": 4,
                          "answer_idx": 0, "probs": np.array(pr), "pred_idx": int(np.argmax(pr))}
                         for p, lv, pr in recs])


def test_latent_instability_and_early_warnings():
    lat = F.latent_instability(latent_table(), [DIRS["TD"], DIRS["BU"]])
    td = lat[lat.perturbation == DIRS["TD"]]
    assert td.D_conf.to_numpy() == pytest.approx([1 - 0.7 / 0.8, 1 - 0.5 / 0.8, 1 - 0.3 / 0.8])
    assert td.margin.to_numpy() == pytest.approx([0.6, 0.1, -0.3])
    w = F.early_warnings(lat, threshold=0.25).set_index("perturbation")
    assert w.loc[DIRS["TD"], "flip_level"] == 3 and w.loc[DIRS["TD"], "warn_level"] == 2
    assert w.loc[DIRS["TD"], "lead"] == 1 and w.loc[DIRS["TD"], "warned_before_flip"]
    assert w.loc[DIRS["TD"], "margin_before_flip"] == pytest.approx(0.1)
    assert np.isnan(w.loc[DIRS["BU"], "flip_level"]) and not w.loc[DIRS["BU"], "false_alarm"]
    late = F.early_warnings(lat, threshold=0.5).set_index("perturbation")  # D_conf only reaches 0.375 before
    assert not late.loc[DIRS["TD"], "warned_before_flip"]
    s = F.warning_summary(w.reset_index())
    assert s.n_traj.iloc[0] == 2 and s.n_flip.iloc[0] == 1 and s.share_warned.iloc[0] == 1.0


# (the claims' regimes and the ground-truth check: tests/test_escalation_observations.py)


def test_pareto_front_marks_the_undominated_points():
    acc = [0.9, 0.8, 0.8, 0.5, 0.95, np.nan]
    idx = [0.2, 0.1, 0.3, 0.05, 0.4, 0.0]
    assert X.pareto_front(acc, idx).tolist() == [True, True, False, True, True, False]
    assert X.pareto_front([0.5, 0.5], [0.1, 0.1]).tolist() == [True, True]  # equal points do not dominate


def test_many_models_and_items_take_the_dense_key_path():
    n = 300  # 300 models x 300 items span 90,000 keys for 600 rows: the keys are made dense first
    clean = pd.DataFrame({"model": [f"m{i:03d}" for i in range(n)], "method": "letter",
                          "item_id": [f"q{i:03d}" for i in range(n)], "group": "g", "perturbation": "clean",
                          "level": 0, "param": np.nan, "K": 4, "answer_idx": 0, "pred_idx": 0, "confidence": 0.9})
    corr = clean.assign(perturbation="bruce_blur", level=1, param=1.0, pred_idx=np.arange(n) % 2)
    cells = X.cell_stats(pd.concat([clean, corr], ignore_index=True))
    assert len(cells) == n and (cells.A_clean == 1).all()
    assert cells.set_index("model").A.to_numpy() == pytest.approx((np.arange(n) % 2 == 0).astype(float))


def test_rci_notes_report_the_conditional_reading_and_missing_terms():
    cells = X.cell_stats(pred_four_terms(conf=False))
    text = X.rci_notes(cells, X.rci(cells), (0.25,) * 4)
    assert "100% of the 1 cells with a flip give exactly 1; joint reading: 0.67–0.67" in text
    assert "cells with an undefined term: 1 of 1 (no confidences: 1; A_clean = 0: 0; H_clean = 0: 0); " \
           "negative D_acc: 0" in text.splitlines()[1]
    assert "conditional reading: 1.00–1.00" in X.rci_notes(cells, X.rci(cells, fail="conditional"), (0.25,) * 4)
