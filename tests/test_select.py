"""Selection (seed 000 §IV): Eq. 1 on hand-computed paths, κ, Eq. 3, the greedy novelty, Eq. 6, Table I, splits."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from vlmrobust import data, repro, schema, sweep, synth
from vlmrobust.analysis import selection as select
from vlmrobust.analysis.selection import claims as checks
from vlmrobust.analysis.selection import novelty, responsiveness, selection
from vlmrobust.data import splits
from vlmrobust.params import ParameterError

A, B, C, D, E = range(5)


# ----------------------------------------------------------------------------- Eq. 1


@pytest.mark.parametrize("path,K,expected", [
    ([A, A, A, A, A], 4, 0.0),
    ([A, A, A, A, B], 4, 0.42667),
    ([A, A, B, B, C], 4, 0.85333),
    ([A, A, B, C, D], 4, 0.96),
    ([A, A, A, B, B], 2, 0.96),
    ([A, B, C, D, E], 5, 1.0),
    ([C, C, C, C, C], 5, 0.0),
])
def test_gini_on_hand_computed_paths(path, K, expected):
    G = select.gini(np.array([path]), np.array([K]))
    assert G.shape == (1,) and G[0] == pytest.approx(expected, abs=5e-6)
    # order of the answers along the path does not matter
    assert select.gini(np.array([path[::-1]]), np.array([K]))[0] == G[0]


def test_gini_is_vectorised_and_checks_its_input():
    paths = np.array([[[A, A, A, A, B], [A, B, C, D, A]], [[B, B, B, B, B], [A, B, A, B, A]]])
    G = select.gini(paths, np.array([4, 2]))
    assert G == pytest.approx(np.array([[0.42667, 0.96], [0.0, 0.96]]), abs=5e-6)
    with pytest.raises(ValueError, match="K = 1"):
        select.gini(np.array([[A, A, A, A, A]]), np.array([1]))
    with pytest.raises(ValueError, match="outside"):
        select.gini(np.array([[A, A, A, A, D]]), np.array([3]))


# ----------------------------------------------------------------------------- paths from a predictions table


def _pred_table(paths: dict, clean: dict | None = None, K: int = 4, answer: int = 0) -> pd.DataFrame:
    """paths: {(model, item, perturbation): [five answers]} -> a predictions table (letter method)."""
    rows = []
    for (m, i, p), answers in paths.items():
        for lv, a in enumerate(answers, start=1):
            rows.append({"model": m, "item_id": i, "perturbation": p, "level": lv, "method": "letter", "K": K,
                         "answer_idx": answer, "pred_idx": a})
    for (m, i), a in (clean or {}).items():
        rows.append({"model": m, "item_id": i, "perturbation": schema.CLEAN, "level": 0, "method": "letter",
                     "K": K, "answer_idx": answer, "pred_idx": a})
    return pd.DataFrame(rows)


def test_paths_exclude_the_clean_answer_and_use_the_items_own_k():
    table = _pred_table({("m1", "q1", "fog"): [B, B, B, B, B], ("m1", "q1", "blur"): [A, A, A, A, B]},
                        clean={("m1", "q1"): A})
    paths = select.answer_paths(table)
    assert paths.pred.shape == (1, 1, 2, 5) and paths.perturbations == ("fog", "blur")
    G = select.gini(paths.pred, paths.K)
    # clean answer A differs from the fog path's B, yet the fog path (five B) has G = 0: clean is excluded
    assert G[0, 0].tolist() == pytest.approx([0.0, 0.42667], abs=5e-6)
    assert paths.clean_correct.tolist() == [[True]] and not paths.correct[0, 0, 0].any()


def test_path_subsets_and_integer_counts():
    table = _pred_table({("m1", "q1", "fog"): [A, A, B, B, C], ("m2", "q1", "fog"): [A, A, A, A, A]})
    paths = select.answer_paths(table)
    assert paths.models == ("m1", "m2")
    assert select.path_counts(paths.pred, paths.K).tolist() == [[[9], [25]]]  # 2² + 2² + 1², 5²
    only = paths.subset(["m2"])
    assert only.models == ("m2",) and only.pred.shape == (1, 1, 1, 5) and (only.pred == A).all()


def test_paths_refuse_missing_levels_and_mixed_methods():
    table = _pred_table({("m1", "q1", "fog"): [A, A, A, A, B], ("m1", "q2", "fog"): [A, A, A, A, A]})
    with pytest.raises(ValueError, match=r"1 prediction\(s\) missing.*'q2'.*level 5"):
        select.answer_paths(table.drop(index=9))
    mixed = table.copy()
    mixed.loc[0, "method"] = "loglik"
    with pytest.raises(ValueError, match="several methods"):
        select.answer_paths(mixed)


# ----------------------------------------------------------------------------- Eq. 2 and Eq. 3


def _G(rows):
    return np.asarray(rows, dtype=np.float64)


def test_kappa_is_the_mean_over_corruptions_and_selectors():
    G = _G([[[0.0, 0.96], [0.42667, 0.0]], [[0.0, 0.0], [0.0, 0.0]]])  # (items, selectors, corruptions)
    assert select.kappa(G) == pytest.approx([(0.96 + 0.42667) / 4, 0.0])


def test_one_silent_selector_excludes_an_item():
    G = _G([
        [[0.96, 0.85], [0.43, 0.0], [0.0, 0.0]],  # selector 3 never responds: out, whatever κ says
        [[0.43, 0.0], [0.0, 0.43], [0.43, 0.0]],  # every selector responds somewhere: in
        [[0.0, 0.0], [0.0, 0.0], [0.0, 0.0]],
    ])
    assert select.eligible(G).tolist() == [False, True, False]
    assert select.kappa(G)[0] > select.kappa(G)[1]  # pooled κ alone would have kept item 1 first
    shares = select.responsive_shares(G, ["s1", "s2", "s3"])
    assert shares.responsive.tolist() == [2, 2, 1] and shares.only_silent.tolist() == [0, 0, 1]


# ----------------------------------------------------------------------------- Eqs. 4-5: the greedy


def test_orthogonal_items_and_a_duplicate():
    eye = np.eye(3)
    img = np.vstack([eye, eye[0]])  # item d duplicates item a in both modalities
    txt = img.copy()
    ids = ["a", "b", "c", "d"]
    nov = select.greedy_novelty(img * 3.0, txt, np.array([0.9, 0.5, 0.5, 0.1]), ids)  # scale is normalised away
    assert nov.order.tolist() == [0, 1, 2, 3]  # a by κ; b before c by id; the duplicate last
    assert nov.nu.tolist() == pytest.approx([1.0, 1.0, 1.0, 1 - 1 / np.sqrt(3)])
    # twins alone: the one picked second has novelty 0
    twin = select.greedy_novelty(img[[0, 3]], txt[[0, 3]], np.array([0.1, 0.9]), ["a", "d"])
    assert twin.order.tolist() == [1, 0] and twin.nu[0] == pytest.approx(0.0, abs=1e-12)
    # same image, orthogonal question: half novel
    half = select.greedy_novelty(img[[0, 3]], np.eye(2), np.array([0.9, 0.1]), ["a", "d"])
    assert half.nu.tolist() == pytest.approx([1.0, 0.5])


def test_tie_rule_highest_kappa_then_lowest_id():
    eye = np.eye(3)
    # all start at ν = 1: the highest κ goes first; b and c tie at every step on ν (symmetric to a)
    nov = select.greedy_novelty(eye, eye, np.array([0.2, 0.4, 0.4]), ["z", "y", "x"])
    assert nov.order.tolist() == [2, 1, 0]  # κ 0.4 twice: lowest id "x" first, then "y", then "z"
    nov = select.greedy_novelty(eye, eye, np.array([0.9, 0.3, 0.4]), ["a", "b", "c"])
    assert nov.order.tolist() == [0, 2, 1]  # b and c tie on ν at step 2: higher κ (c) wins
    # ties are decided at 9 decimals: float noise in κ does not beat the id rule
    nov = select.greedy_novelty(eye, eye, np.array([0.1 + 0.2, 0.3, 0.0]), ["b", "a", "c"])
    assert nov.order[0] == 1


def test_a_zero_centroid_has_cosine_zero():
    v = np.array([[1.0, 0.0], [-1.0, 0.0], [0.0, 1.0]])
    nov = select.greedy_novelty(v, v, np.array([0.5, 0.4, 0.3]), ["a", "b", "c"])
    # b is opposite a: ν = 1 - (-1 - 1)/2 = 2; then the centroid a + b is 0, so c has ν = 1
    assert nov.order.tolist() == [0, 1, 2] and nov.nu.tolist() == pytest.approx([1.0, 2.0, 1.0])


def _naive_greedy(VI, VT, kappa, ids):
    VI = VI / np.linalg.norm(VI, axis=1, keepdims=True)
    VT = VT / np.linalg.norm(VT, axis=1, keepdims=True)
    rank = select.preference(kappa, ids)
    rem, order, nu = list(range(len(VI))), [], np.zeros(len(VI))
    for step in range(len(VI)):
        vals = []
        for q in rem:
            if step == 0:
                vals.append(1.0)
                continue
            mI, mT = VI[order].mean(0), VT[order].mean(0)
            cI = VI[q] @ mI / np.linalg.norm(mI) if np.linalg.norm(mI) > 1e-12 else 0.0
            cT = VT[q] @ mT / np.linalg.norm(mT) if np.linalg.norm(mT) > 1e-12 else 0.0
            vals.append(1 - (cI + cT) / 2)
        r = np.round(vals, select.TIE_DECIMALS)
        tied = np.flatnonzero(r == r.max())
        j = tied[np.argmin(rank[np.asarray(rem)[tied]])]
        nu[rem[j]] = vals[j]
        order.append(rem.pop(j))
    return np.asarray(order), nu


@pytest.mark.parametrize("candidates", [2, 7, None])
def test_greedy_matches_the_plain_definition(candidates):
    pool = select.simulate_pool(300, repro.rng("test.select", "greedy"), dim=16, fragile=1.0)
    kap = select.kappa(select.gini(pool.pred, pool.K))
    n = 90
    VI, VT = pool.image_emb[:n].astype(float), pool.text_emb[:n].astype(float)
    VI[5] = VI[2]  # an exact duplicate
    VT[5] = VT[2]
    order, nu = _naive_greedy(VI, VT, kap[:n], pool.item_ids[:n])
    nov = select.greedy_novelty(VI, VT, kap[:n], pool.item_ids[:n], candidates=candidates)
    assert nov.order.tolist() == order.tolist()
    assert np.abs(nov.nu - nu).max() < 1e-12
    if candidates == 2:
        assert nov.full_passes > 1  # the bound and the full passes were exercised


def test_greedy_refuses_zero_rows():
    with pytest.raises(ValueError, match="image embeddings: row 1"):
        select.greedy_novelty(np.array([[1.0, 0], [0, 0]]), np.eye(2), np.zeros(2), ["a", "b"])


# ----------------------------------------------------------------------------- Eq. 6 and Table I


def test_split_is_strictly_above_the_mean():
    el = np.array([True, True, True, False])
    sel, mean = select.split_mask(np.array([1.0, 2.0, 3.0, 9.0]), el)
    assert mean == 2.0 and sel.tolist() == [False, False, True, False]  # e = mean is out; 9 is not eligible
    sel, _ = select.split_mask(np.array([0.1 + 0.2, 0.3, 0.3, np.nan]), el)  # equal up to float noise
    assert not sel.any()


def test_top_k_ties_and_jaccard():
    score = np.array([0.5, 0.7, 0.5, 0.5, 0.1])
    kap = np.array([0.1, 0.0, 0.3, 0.3, 0.0])
    got = select.top_k(score, 3, kap, ["e", "d", "c", "b", "a"])
    assert got.tolist() == [False, True, True, True, False]  # 0.5 ties: κ 0.3 (b, c) before κ 0.1
    assert select.jaccard(np.array([1, 1, 0], bool), np.array([0, 1, 1], bool)) == pytest.approx(1 / 3)


def _toy_problem(n=400):
    pool = select.simulate_pool(n, repro.rng("test.select", "toy"), dim=12, fragile=0.6, noise=0.01)
    return pool, select.gini(pool.pred, pool.K)


def test_select_and_size_matched_table_i():
    pool, G = _toy_problem()
    sel = select.select(G, pool.image_emb, pool.text_emb, pool.item_ids)
    el = select.eligible(G)
    assert sel.eligible.tolist() == el.tolist() and 0 < sel.size < el.sum()
    assert np.isnan(sel.nu[~el]).all() and np.isfinite(sel.nu[el]).all()
    assert sorted(sel.pick[el].tolist()) == list(range(el.sum()))
    frame = sel.table()
    assert list(frame.columns) == ["item_id", "kappa", "eligible", "nu", "e", "pick", "selected"]
    assert frame.selected.sum() == sel.size and len(frame) == len(pool.item_ids)
    assert (sel.e[sel.selected] > sel.threshold).all() and sel.threshold == pytest.approx(sel.e[el].mean())
    t = select.table_i(G, pool.image_emb, pool.text_emb, sel, ["s1", "s2", "s3"])
    assert list(t.columns) == list(select.TABLE_I_COLUMNS) and len(t) == 3
    size = sel.size
    for variant in ("fixed", "recomputed"):
        kept = t[f"{variant}_kept"]
        # size-matched: |S'| = |S|, so JI = kept / (2|S| - kept) and retention = kept / |S|
        assert t[f"{variant}_ji"].to_numpy() == pytest.approx((kept / (2 * size - kept)).to_numpy())
        assert t[f"{variant}_retention"].to_numpy() == pytest.approx((kept / size).to_numpy())
    assert (t.recomputed_eligible >= el.sum()).all()  # dropping a selector can only widen A+
    ov = select.criteria_overlap(sel)
    assert ov["semantic"].sum() == ov["inconsistency"].sum() == size and 0 <= ov["ji"] <= 1
    assert select.table_i(G[:, :1], pool.image_emb, pool.text_emb,
                          select.select(G[:, :1], pool.image_emb, pool.text_emb, pool.item_ids), ["s1"]).empty


def test_fixed_variant_keeps_nu_and_recomputes_kappa():
    pool, G = _toy_problem(200)
    sel = select.select(G, pool.image_emb, pool.text_emb, pool.item_ids)
    k = select.kappa(G[:, 1:])
    expect = select.top_k(k + sel.nu, sel.size, k, sel.item_ids, sel.eligible)
    t = select.table_i(G, pool.image_emb, pool.text_emb, sel, ["s1", "s2", "s3"])
    assert t.fixed_kept[0] == int((expect & sel.selected).sum())


# ----------------------------------------------------------------------------- the saved split as an item source


def test_saved_split_is_an_item_source(out_roots):
    items = synth.generate(2, 5, families=["colour", "count", "text"])
    rng = repro.rng("test.select", "split")
    n = len(items)
    G = rng.choice([0.0, 0.42667, 0.96], size=(n, 2, 3), p=[0.3, 0.4, 0.3])
    sel = select.select(G, rng.standard_normal((n, 8)), rng.standard_normal((n, 8)), items.item_id)
    path = splits.save_split("toy", items, sel, selector_gini=select.selector_gini(G), selectors=["s1", "s2"],
                             meta={"perturbations": ["fog"]})
    assert path == out_roots[0] / "splits" / "toy.parquet" and splits.list_splits() == ["toy"]
    back = splits.read_split("toy")
    assert back.item_id.tolist() == items.item_id[sel.selected].tolist()
    assert back.kappa.to_numpy() == pytest.approx(sel.kappa[sel.selected])
    assert {"G_s1", "G_s2", "pool_digest"} <= set(back.columns)
    assert back.pool_digest.unique().tolist() == [data.items_digest(items)]
    meta = back.attrs["vlmrobust_split"]
    assert meta["pool_size"] == n and meta["size"] == sel.size and meta["perturbations"] == ["fog"]
    assert sweep.item_source_kind("split:toy") == ("split", "toy")
    got = sweep.item_source("split:toy")
    assert list(got.columns) == list(schema.ITEM_COLUMNS) and got.item_id.tolist() == back.item_id.tolist()
    assert len(sweep.item_source("split:toy", max_items=1)) == 1
    with pytest.raises(ParameterError, match="no saved split.*'toy'"):
        sweep.item_source_kind("split:other")
    with pytest.raises(ParameterError, match="split name must match"):
        sweep.item_source_kind("split:../x")
    with pytest.raises(ValueError, match="differ from the pool"):
        splits.save_split("bad", items.iloc[::-1].reset_index(drop=True), sel)


# ----------------------------------------------------------------------------- pool balancing


def test_allocate_and_balanced_pool():
    assert select.allocate(10, [2, 8, 8]).tolist() == [2, 4, 4]
    assert select.allocate(7, [5, 5, 5]).tolist() == [3, 2, 2]
    assert select.allocate(50, [3, 4]).tolist() == [3, 4]
    items = pd.DataFrame({"source": ["a"] * 6 + ["b"] * 20, "task": ["x", "y"] * 3 + ["x"] * 10 + ["y"] * 10,
                          "item_id": [f"i{i}" for i in range(26)]})
    pool = select.balanced_pool(items, 10, seed=1)
    assert pool.groupby(["source", "task"]).size().to_dict() == {("a", "x"): 3, ("a", "y"): 2, ("b", "x"): 3,
                                                                 ("b", "y"): 2}
    assert pool.item_id.tolist() == select.balanced_pool(items, 10, seed=1).item_id.tolist()
    assert len(select.balanced_pool(items, 0)) == 26


# ----------------------------------------------------------------------------- claim rows


def test_mean_shift_and_the_evaluated_gini_claim():
    from vlmrobust.stats.claims import NO_SUBJECT, NOT_REPRODUCED, REPRODUCED

    rng = repro.rng("test.select", "boot")
    x = np.r_[np.zeros(80), np.ones(20)]
    up = select.mean_shift(x, x > 0.5, n_boot=200, rng=rng)
    assert up["diff"] == pytest.approx(0.8) and up["lo"] > 0
    assert checks.obs_evaluated_gini(x, x > 0.5, ["m"], n_boot=200, rng=rng).verdict == REPRODUCED
    assert checks.obs_evaluated_gini(x, x < 0.5, ["m"], n_boot=200, rng=rng).verdict == NOT_REPRODUCED
    assert checks.obs_evaluated_gini(x, x > 0.5, [], n_boot=200, rng=rng).verdict == NO_SUBJECT


def test_selection_claims_stack_every_claim_with_its_own_stream():
    from vlmrobust.stats.claims import BY_CONSTRUCTION, CLAIM_COLUMNS, VERDICTS

    pool = select.simulate_pool(200, repro.rng("test.select", "obs"), dim=8, fragile=0.5)
    G = select.gini(pool.pred, pool.K)
    sel = select.select(G, pool.image_emb, pool.text_emb, pool.item_ids)
    loo = select.leave_one_out(G, pool.image_emb, pool.text_emb, sel, ["a", "b", "c"])
    t1 = select.table_i(G, pool.image_emb, pool.text_emb, sel, ["a", "b", "c"], variants=loo)
    n = len(pool.item_ids)
    paths = responsiveness.AnswerPaths(pool.item_ids, ("a", "b", "c"), tuple(f"d{i}" for i in range(19)),
                                       (1, 2, 3, 4, 5), pool.pred, pool.pred == 0, pool.K, np.zeros(n, int),
                                       pool.pred[:, :, 0, 0], pool.pred[:, :, 0, 0] == 0)
    kw = dict(families=np.arange(n) % 4, sources=["s"] * n, variants=loo, n_boot=100, image_emb=pool.image_emb,
              text_emb=pool.text_emb)
    obs = checks.claims_table(paths, G, sel, t1, select.criteria_overlap(sel), None, [], **kw,
                              rng=repro.rng("test.select", "obs", 1))
    assert list(obs.columns) == list(CLAIM_COLUMNS) and len(obs) >= 12 and obs.claim.is_unique
    assert set(obs.verdict) <= set(VERDICTS)
    again = checks.claims_table(paths, G, sel, t1, select.criteria_overlap(sel), None, [], **kw,
                                rng=repro.rng("test.select", "obs", 1))
    assert obs.equals(again)  # seeded: the same table twice
    assert len(obs[obs.verdict == BY_CONSTRUCTION]) == 2  # zero dispersion, one source
    assert obs.loc[obs.claim.str.contains("evaluated"), "verdict"].tolist() == ["no subject"]


def test_simulated_pool_is_reproducible():
    a = select.simulate_pool(50, repro.rng("s", 1), dim=8)
    b = select.simulate_pool(50, repro.rng("s", 1), dim=8)
    assert a.pred.shape == (50, 3, 19, 5) and a.image_emb.shape == (50, 8)
    assert (a.pred == b.pred).all() and (a.image_emb == b.image_emb).all()
    assert ((a.pred >= 0) & (a.pred < a.K[:, None, None, None])).all()


def test_responsiveness_module_exports_are_public():
    assert {"gini", "kappa", "eligible", "answer_paths"} <= set(responsiveness.__all__)
    assert novelty.TIE_DECIMALS == select.TIE_DECIMALS and selection.TABLE_I_COLUMNS == select.TABLE_I_COLUMNS


def test_leave_one_out_masks_are_what_table_i_counts():
    pool = select.simulate_pool(300, repro.rng("test.select", "loo"), dim=8, fragile=0.5)
    G = select.gini(pool.pred, pool.K)
    sel = select.select(G, pool.image_emb, pool.text_emb, pool.item_ids)
    loo = select.leave_one_out(G, pool.image_emb, pool.text_emb, sel, ["a", "b", "c"])
    t = select.table_i(G, pool.image_emb, pool.text_emb, sel, ["a", "b", "c"])
    assert list(loo) == ["a", "b", "c"] and sel.size > 5
    for r in t.itertuples():
        v = loo[r.removed]
        assert (v["fixed"] & sel.selected).sum() == r.fixed_kept and v["fixed"].sum() == sel.size
        assert (v["recomputed"] & sel.selected).sum() == r.recomputed_kept
        assert v["eligible"].sum() == r.recomputed_eligible and (v["eligible"] >= sel.eligible).all()
    assert select.table_i(G, pool.image_emb, pool.text_emb, sel, ["a", "b", "c"], variants=loo).equals(t)


def test_tsv_multi_image_rows_are_counted_on_the_item_table(tmp_path):
    import base64
    import io

    from PIL import Image

    buf = io.BytesIO()
    Image.new("RGB", (8, 8), (200, 30, 30)).save(buf, format="PNG")
    img = base64.b64encode(buf.getvalue()).decode()
    rows = [{"index": i, "question": f"Q{i}?", "A": "x", "B": "y", "answer": "A",
             "image": str([img, img]) if i in (1, 3) else img} for i in range(5)]
    path = tmp_path / "multi.tsv"
    pd.DataFrame(rows).to_csv(path, sep="\t", index=False)
    with pytest.warns(UserWarning, match="skipped 2 multi-image"):
        items = sweep.item_source(str(path))
    assert len(items) == 3 and items.attrs["multi_image_skipped"] == 2
    rows = [dict(r, image=img) for r in rows]
    pd.DataFrame(rows).to_csv(path, sep="\t", index=False)
    assert sweep.item_source(str(path)).attrs["multi_image_skipped"] == 0
