"""Label instability, drift against control drift, and Dirichlet energy (seed 002 §3-4, App. A.9, E)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from vlmrobust import repro
from vlmrobust.analysis.drift import dirichlet as structure
from vlmrobust.analysis.drift import instability
from vlmrobust.analysis.drift import representation as drift
from vlmrobust.probes.shard import PROBE_COLUMNS

# seed 002, Table 7: ans_mcq_free, L2; mu_pert, sigma_pert and the reported Cohen's d; mu_ctrl = 584.19
TABLE7 = {"Translation": (64.42, 78.78, -6.3522), "Pad/Crop": (70.98, 84.18, -6.0757),
          "Scale": (77.47, 104.29, -5.3325), "Scale+Pad": (91.12, 103.06, -5.2256),
          "Rotation": (140.57, 98.37, -4.8316), "TextOverlay": (483.77, 266.40, -0.5080)}
MU_CTRL, SD_CTRL = 584.19, 84.76


def _with_moments(rng, n, mu, sd):
    x = rng.standard_normal(n)
    return mu + sd * (x - x.mean()) / x.std(ddof=1)


def test_cohens_d_from_samples_reproduces_table_7():
    rng = np.random.default_rng(0)
    ctrl = _with_moments(rng, 1000, MU_CTRL, SD_CTRL)
    for name, (mu, sd, want) in TABLE7.items():
        pert = _with_moments(rng, 3500, mu, sd)
        assert drift.cohens_d(pert, ctrl) == pytest.approx(want, abs=0.003), name
        assert drift.cohens_d_moments(mu, sd, MU_CTRL, SD_CTRL) == pytest.approx(want, abs=0.003), name
    # the weighted (n-1) pooled SD would not reproduce the TextOverlay value
    pert = _with_moments(rng, 3500, 483.77, 266.40)
    pooled = np.sqrt(((3499) * 266.40 ** 2 + 999 * SD_CTRL ** 2) / (3500 + 1000 - 2))
    weighted = (483.77 - MU_CTRL) / pooled
    assert drift.cohens_d(pert, ctrl) == pytest.approx(-0.5080, abs=0.003)
    assert abs(drift.cohens_d(pert, ctrl) - weighted) > 0.05
    assert drift.cohens_d(pert, ctrl) < 0 and np.isnan(drift.cohens_d([1.0], ctrl))


def _pred(rows):
    base = {"method": "loglik", "task": "colour", "K": 4, "param": np.nan}
    return pd.DataFrame([{**base, **r} for r in rows])


def _row(model, item, pert, level, pred, ans, task="colour"):
    return {"model": model, "item_id": item, "perturbation": pert, "level": level, "pred_idx": pred,
            "answer_idx": ans, "correct": pred == ans, "task": task}


def test_ifr_and_iv_count_a_wrong_to_other_wrong_change():
    # item a: correct (0), flips at one of two translation instances (R->W); item b: wrong (1), changes to
    # another wrong option (W->W'), which is a flip; item c: never flips.
    rows = [_row("m", "a", "clean", 0, 0, 0), _row("m", "b", "clean", 0, 1, 0), _row("m", "c", "clean", 0, 2, 2)]
    rows += [_row("m", "a", "translate", 1, 0, 0), _row("m", "a", "translate", 2, 3, 0),
             _row("m", "b", "translate", 1, 2, 0), _row("m", "b", "translate", 2, 1, 0),
             _row("m", "c", "translate", 1, 2, 2), _row("m", "c", "translate", 2, 2, 2),
             _row("m", "a", "text_overlay", 2, 0, 0), _row("m", "c", "text_overlay", 1, 0, 2)]
    pairs = instability.flip_pairs(_pred(rows))
    t = instability.ifr_iv(pairs).set_index("perturbation")
    assert t.loc["translate", "IFR"] == pytest.approx(2 / 6) and t.loc["translate", "IV"] == pytest.approx(2 / 3)
    assert t.loc["text_overlay", "IFR"] == pytest.approx(1 / 2) and t.loc["text_overlay", "IV"] == pytest.approx(1 / 2)
    assert t.loc["any", "IFR"] == pytest.approx(3 / 8) and t.loc["any", "IV"] == pytest.approx(1.0)
    tr = instability.transitions(pairs).set_index("perturbation")
    assert tr.loc["translate", ["R→W", "W→R", "R→R", "W→W", "W→W′"]].tolist() == [1, 0, 3, 2, 1]
    # without the W -> W' change the flip rate would miss a flip
    assert t.loc["translate", "IFR"] > (tr.loc["translate", "R→W"] + tr.loc["translate", "W→R"]) / 6


def test_each_table_pools_its_own_union():
    # Table 1's "Any" pools all eight perturbations (its IFR 0.079 is the instance-weighted mean of all eight
    # rows; six would give 0.086); Tables 2 and 3 pool six (RandomText and BoxOverlay apart)
    counts = {"translate": 27944, "pad_crop": 27944, "scale": 3493, "scale_pad": 6986, "rotate": 6986,
              "text_overlay": 10430, "random_text": 10430, "box_overlay": 10430}
    ifr = {"translate": 0.062, "pad_crop": 0.065, "scale": 0.079, "scale_pad": 0.080, "rotate": 0.122,
           "text_overlay": 0.192, "random_text": 0.064, "box_overlay": 0.043}
    def pooled(names):
        return sum(counts[n] * ifr[n] for n in names) / sum(counts[n] for n in names)
    assert round(pooled(instability.TABLE_UNIONS["table1"]), 3) == 0.080  # the paper prints 0.079
    assert round(pooled(instability.TABLE_UNIONS["table2"]), 3) == 0.086
    assert set(instability.TABLE_UNIONS["table1"]) == set(instability.LABELS)
    rows = [_row("m", "a", "clean", 0, 0, 0), _row("m", "b", "clean", 0, 1, 1)]
    rows += [_row("m", "a", "translate", 1, 0, 0), _row("m", "b", "translate", 1, 1, 1),
             _row("m", "a", "random_text", 2, 3, 0), _row("m", "b", "box_overlay", 1, 0, 1)]
    pairs = instability.flip_pairs(_pred(rows))
    t1 = instability.ifr_iv(pairs).set_index("perturbation")
    assert t1.loc["any", "IFR"] == pytest.approx(2 / 4) and t1.loc["any", "instances"] == 4
    t2 = instability.transitions(pairs).set_index("perturbation")
    assert t2.loc["any", "instances"] == 2 and t2.loc["any", "R→W"] == 0
    probes = pd.DataFrame([_probe("drift", "ctx_mcq", pert, item, cos=c) for pert, item, c in
                           (("translate", "a", 0.1), ("random_text", "a", 0.9))], columns=list(PROBE_COLUMNS))
    t3 = drift.invariance_table(probes, ["ctx_mcq"]).set_index("perturbation")
    assert t3.loc["any", "cos_sim"] == pytest.approx(0.9) and t3.loc["any", "n"] == 1


def test_compliance_rates_from_table_2():
    broke, fixed = instability.compliance_rates(685, 881, 5738, 3126)
    assert round(broke, 3) == 0.107 and round(fixed, 3) == 0.220
    rows = [_row("m", f"r{i}", "clean", 0, 0, 0) for i in range(20)] + \
        [_row("m", f"w{i}", "clean", 0, 1, 0) for i in range(10)]
    rows += [_row("m", f"r{i}", "text_overlay", 2, 1 if i < 4 else 0, 0) for i in range(20)]
    rows += [_row("m", f"w{i}", "text_overlay", 1, 0 if i < 3 else 1, 0) for i in range(10)]
    tr = instability.transitions(instability.flip_pairs(_pred(rows))).set_index("perturbation")
    assert tr.loc["text_overlay", "R→W rate"] == pytest.approx(4 / 20)
    assert tr.loc["text_overlay", "W→R rate"] == pytest.approx(3 / 10)
    assert np.isnan(instability.compliance_rates(0, 0, 0, 0)[0])


def test_ground_truth_changing_pairs_are_split_off_and_overlays_decomposed():
    rows = [_row("m", "s", "clean", 0, 0, 0, "spatial"), _row("m", "k", "clean", 0, 1, 1, "colour")]
    rows += [_row("m", "s", "translate", 1, 1, 0, "spatial"), _row("m", "s", "scale", 1, 0, 0, "spatial"),
             _row("m", "k", "translate", 1, 1, 1, "colour")]
    for name, flips in (("text_overlay", 2), ("random_text", 1), ("box_overlay", 0)):
        rows += [_row("m", it, name, 1, (1 - p) if i < flips else p, p)
                 for i, (it, p) in enumerate((("s", 0), ("k", 1)))]
    pairs = instability.flip_pairs(_pred(rows))
    kept, out = instability.split_ground_truth(pairs)
    assert set(zip(out.perturbation, out.task, strict=True)) == {("translate", "spatial")}
    assert len(kept) + len(out) == len(pairs)
    dec = instability.overlay_decomposition(kept).iloc[0]
    assert dec["IFR TextOverlay"] == 1.0 and dec["IFR RandomText"] == 0.5 and dec["IFR BoxOverlay"] == 0.0
    assert dec["semantic_gap"] == 0.5 and dec["edge_gap"] == 0.5


def test_scale_table_orders_models_by_size():
    rows = []
    for m, acc in (("big", 1), ("small", 0)):
        rows += [_row(m, "a", "clean", 0, 0 if acc else 1, 0), _row(m, "a", "text_overlay", 2, 1, 0)]
    pred = _pred(rows)
    t = instability.scale_table(pred, instability.flip_pairs(pred), {"small": 1.0, "big": 2.0})
    assert list(t.model) == ["small", "big"] and list(t.base_acc) == [0.0, 100.0]
    assert list(t["TextOverlay IFR"]) == [0.0, 1.0]


def _probe(kind, regime, pert="translate", item="a", cos=0.1, l2=1.0, layers=(0.0, 0.1), **kw):
    r = {c: None for c in PROBE_COLUMNS}
    r.update(model="m", item_id=item, perturbation=pert, level=1, regime=regime, kind=kind, cos=cos, l2=l2,
             cos_layers=list(layers), l2_layers=[10 * x for x in layers], d_energy=np.nan, **kw)
    return r


def test_drift_tables_control_and_per_layer_curves():
    rng = np.random.default_rng(1)
    rows = [_probe("control", "ans_mcq_free", "clean", f"c{i}", cos=c, l2=100 * c, layers=(c, 2 * c))
            for i, c in enumerate(rng.uniform(0.2, 0.4, 200))]
    rows += [_probe("drift", "ans_mcq_free", "translate", f"i{i}", cos=c, l2=100 * c, layers=(0.0, c))
             for i, c in enumerate(rng.uniform(0.0, 0.02, 50))]
    rows += [_probe("drift", "ans_mcq_free", "text_overlay", f"i{i}", cos=c, l2=100 * c, layers=(0.0, c))
             for i, c in enumerate(rng.uniform(0.2, 0.4, 50))]
    rows += [_probe("floor", "ans_mcq_free", "clean", f"i{i}", cos=1e-9, l2=1e-7) for i in range(5)]
    p = pd.DataFrame(rows, columns=list(PROBE_COLUMNS))
    t = drift.drift_vs_control(p).set_index("perturbation")
    ctrl = drift.control_values(p, "ans_mcq_free")
    assert t.loc["translate", "mu_ctrl"] == pytest.approx(ctrl.mean())
    assert t.loc["translate", "d"] < -3 and abs(t.loc["text_overlay", "d"]) < 0.5
    assert t.loc["translate", "pct_mean"] == pytest.approx(100 * t.loc["translate", "mu_pert"] / ctrl.mean())
    assert t.loc["any", "n_pert"] == 100
    inv = drift.invariance_table(p, ["ans_mcq_free"]).set_index("perturbation")
    assert inv.loc["translate", "cos_sim"] == pytest.approx(1 - t.loc["translate", "mu_pert"])
    curves = drift.layer_curves(p, by=["model", "regime"])
    last = curves[(curves.perturbation == "translate") & (curves.layer == 1)].iloc[0]
    assert last.control == pytest.approx(2 * ctrl.mean()) and last.ratio == pytest.approx(last.drift / last.control)
    floor = drift.noise_floor(p).iloc[0]
    assert floor.smallest_perturbation == "translate" and floor.ratio > 1e5
    boot = drift.bootstrap_means(p[p.kind == "drift"], "cos", ["perturbation"], repro.rng("test"), n_boot=200)
    for r in boot.itertuples():
        assert r.lo <= r.mean <= r.hi
    with pytest.raises(ValueError, match="metric"):
        drift.drift_vs_control(p, metric="cosine")


def test_dirichlet_energy_of_constant_and_checkerboard_grids():
    rng = np.random.default_rng(3)
    for rows, cols, h in ((8, 8, 64), (3, 5, 7), (1, 4, 2)):
        v = rng.standard_normal(h)
        const = np.broadcast_to(v, (rows, cols, h))
        assert structure.dirichlet_energy(const) == 0.0
        sign = np.where((np.arange(rows)[:, None] + np.arange(cols)[None]) % 2 == 0, 1.0, -1.0)
        board = sign[..., None] * v
        want = structure.n_edges(rows, cols) * 4 * float(v @ v)
        assert structure.dirichlet_energy(board) == pytest.approx(want, rel=1e-12)
    assert structure.n_edges(8, 8) == 112
    batch = rng.standard_normal((2, 3, 4, 5))
    np.testing.assert_allclose(structure.dirichlet_energy(batch), [structure.dirichlet_energy(b) for b in batch])
    with pytest.raises(ValueError, match="grid"):
        structure.dirichlet_energy(np.zeros((3, 3)))


def test_the_probes_grid_energy_is_the_library_energy():
    import torch

    from vlmrobust.forward.capture import grid_energy_torch

    g = np.random.default_rng(4).standard_normal((4, 6, 8))
    assert float(grid_energy_torch(torch.as_tensor(g))) == pytest.approx(structure.dirichlet_energy(g), rel=1e-12)


def test_energy_table_and_correlation_with_drift():
    rows = []
    for i in range(20):
        de = float(i)
        rows.append(_probe("drift", "vision_grid", "rotate", f"i{i}", cos=np.nan, l2=np.nan) | {"d_energy": de})
        rows.append(_probe("drift", "ans_mcq_free", "rotate", f"i{i}", cos=0.01 * i))
    p = pd.DataFrame(rows, columns=list(PROBE_COLUMNS))
    p["flip"] = p.item_id.isin([f"i{i}" for i in range(15, 20)])
    t = structure.energy_table(p).iloc[0]
    assert t.dE_all == pytest.approx(9.5) and t.dE_flips == pytest.approx(17.0) and t.n_flips == 5
    c = structure.energy_drift_correlation(p).iloc[0]
    assert c["corr"] == pytest.approx(1.0) and c["n"] == 20


def test_table_5_similarity_and_table_4_interval_columns():
    rng = np.random.default_rng(7)
    rows = [_probe("drift", regime, pert, f"i{i}", cos=c)
            for regime, base in (("ans_mcq", 0.01), ("ctx_open", 0.2)) for pert in ("translate", "rotate")
            for i, c in enumerate(base + rng.uniform(0, 0.01, 30))]
    p = pd.DataFrame(rows, columns=list(PROBE_COLUMNS))
    t5 = pd.DataFrame({"model": ["m", "other"], "base_acc": [50.0, 60.0]})
    out = drift.with_similarity(t5, p, ["ans_mcq", "ctx_open"])
    inv = drift.invariance_table(p, ["ans_mcq", "ctx_open"]).query("perturbation == 'any'").set_index("regime")
    assert list(out.columns) == ["model", "base_acc", "cos ans_mcq", "cos ctx_open"]
    assert out["cos ans_mcq"].iloc[0] == pytest.approx(inv.loc["ans_mcq", "cos_sim"])
    assert out["cos ctx_open"].iloc[0] < out["cos ans_mcq"].iloc[0] and out.iloc[1, 2:].isna().all()
    t4 = pd.DataFrame({"model": "m", "perturbation": ["translate", "rotate", "any"], "d": [-1.0, -0.5, -0.8]})
    got = drift.with_interval(t4, p, "ctx_open", repro.rng("test", "t4"), n_boot=200)
    boot = drift.bootstrap_means(p[(p.kind == "drift") & (p.regime == "ctx_open")], "cos", ["model", "perturbation"],
                                 repro.rng("test", "t4"), n_boot=200).set_index("perturbation")
    assert got.loc[0, "lo"] == boot.loc["translate", "lo"] and got.loc[1, "hi"] == boot.loc["rotate", "hi"]
    assert got.loc[0, "lo"] <= 0.2 + p[p.perturbation == "translate"].cos.mean() and np.isnan(got.loc[2, "lo"])
