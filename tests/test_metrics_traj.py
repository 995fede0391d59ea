"""Seed 000 §VII-D: severity trajectories, their classes and class-conditioned structure."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from vlmrobust.analysis import ras as M
from vlmrobust.analysis.ras.simulate import simulate_predictions
from vlmrobust.repro import rng

PATHS = [
    # clean correct, path over severities 1..5, expected class
    (True, "11111", "always correct"),
    (True, "11110", "persistent loss"),    # first failure at severity 5 stays to the end
    (True, "00000", "persistent loss"),
    (True, "11000", "persistent loss"),
    (True, "01111", "transient loss"),     # lost at 1, recovered
    (True, "01000", "transient loss"),     # lost, recovered, lost again: not persistent after the first failure
    (True, "10101", "transient loss"),
    (False, "00000", "always wrong"),
    (False, "00001", "persistent correction"),  # corrected at 5, correct through 5
    (False, "11111", "persistent correction"),
    (False, "00111", "persistent correction"),
    (False, "10000", "transient correction"),
    (False, "10111", "transient correction"),
    (False, "01010", "transient correction"),
]


def test_classify_paths_rules():
    c0 = np.array([p[0] for p in PATHS])
    corr = np.array([[ch == "1" for ch in p[1]] for p in PATHS])
    got = [M.TRAJECTORY_CLASSES[k] for k in M.classify_paths(c0, corr)]
    assert got == [p[2] for p in PATHS]


def test_classify_paths_exhaustive_against_a_loop():
    L = 5
    for c0 in (True, False):
        for bits in range(1 << L):
            path = [(bits >> (L - 1 - j)) & 1 == 1 for j in range(L)]
            changed = [c != c0 for c in path]
            if not any(changed):
                want = "always correct" if c0 else "always wrong"
            else:
                f = changed.index(True)
                stays = all(changed[f:])
                if c0:
                    want = "persistent loss" if stays else "transient loss"
                else:
                    want = "persistent correction" if stays else "transient correction"
            got = M.TRAJECTORY_CLASSES[M.classify_paths(np.array([c0]), np.array([path]))[0]]
            assert got == want, (c0, path)


def traj_pairs(paths, ras_rows=None):
    rows = []
    for t, (c0, path, _) in enumerate(paths):
        for lv, ch in enumerate(path, start=1):
            rows.append({
                "model": "m", "method": "letter", "item_id": f"q{t}", "perturbation": "fog", "level": lv,
                "correct_clean": c0, "correct": ch == "1",
                "RAS": 0.1 * lv if ras_rows is None else ras_rows[t][lv - 1],
                "dS": [0.5, -0.2, 0.1, 0.3, 0.0][lv - 1], "dC": [0.0, 0.4, -0.1, 0.2, 0.9][lv - 1],
            })
    df = pd.DataFrame(rows)
    for c in ("model", "method", "item_id", "perturbation"):
        df[c] = df[c].astype("category")
    return df


def test_trajectories_table_classes_mean_and_medians():
    tr = M.trajectories(traj_pairs(PATHS))
    assert len(tr) == len(PATHS) and tr.attrs["n_incomplete"] == 0
    got = dict(zip(tr["item_id"].astype(str), tr["klass"].astype(str), strict=True))
    assert [got[f"q{t}"] for t in range(len(PATHS))] == [p[2] for p in PATHS]
    assert tr["path"].tolist() == [p[1] for p in sorted(PATHS, key=lambda p: f"q{PATHS.index(p)}")]
    np.testing.assert_allclose(tr["RAS"], 0.3)                 # mean of 0.1 .. 0.5
    np.testing.assert_allclose(tr["dS_med"], 0.1)              # median of (0.5, -0.2, 0.1, 0.3, 0.0)
    np.testing.assert_allclose(tr["dC_med"], 0.2)              # median of (0.0, 0.4, -0.1, 0.2, 0.9)


def test_incomplete_trajectories_dropped_and_counted():
    df = traj_pairs(PATHS[:3])
    df = df[~((df["item_id"] == "q1") & (df["level"] == 3))]
    tr = M.trajectories(df)
    assert len(tr) == 2 and tr.attrs["n_incomplete"] == 1
    assert "q1" not in set(tr["item_id"].astype(str))
    # levels outside the requested ones are ignored; a subset of levels gives shorter paths
    tr3 = M.trajectories(traj_pairs(PATHS[:3]), levels=(1, 2, 3))
    assert tr3["path"].tolist() == ["111", "111", "000"]
    with pytest.raises(ValueError, match="increasing"):
        M.trajectories(df, levels=(3, 1))


def test_trajectory_summary_shares_and_class_means():
    ras_rows = [[float(t)] * 5 for t in range(len(PATHS))]
    tr = M.trajectories(traj_pairs(PATHS, ras_rows))
    s = M.trajectory_summary(tr).set_index("klass")
    n_correct = sum(p[0] for p in PATHS)
    assert s.loc["transient loss", "n"] == 3
    assert s.loc["transient loss", "share"] == pytest.approx(3 / len(PATHS))
    assert s.loc["transient loss", "source_share"] == pytest.approx(3 / n_correct)
    assert s.loc["persistent correction", "source_share"] == pytest.approx(3 / (len(PATHS) - n_correct))
    # class RAS = mean of the member trajectories' RAS (trajectory t has RAS t)
    assert s.loc["persistent loss", "RAS"] == pytest.approx((1 + 2 + 3) / 3)
    assert s.loc["always wrong", "RAS"] == pytest.approx(7.0)
    assert s["unit_RAS"].iloc[0] == pytest.approx(np.mean(range(len(PATHS))))
    assert s["share"].sum() == pytest.approx(1.0)


def test_trajectories_on_simulated_predictions_agree_with_groupby():
    pred = simulate_predictions(30, models=("a", "b"), perturbations=("fog", "glass_blur"), rng=rng("traj", 0))
    pr = M.pairs(pred)
    tr = M.trajectories(pr)
    assert len(tr) == 2 * 30 * 2
    ref = pr.astype({"model": str, "item_id": str, "perturbation": str}).sort_values("level") \
        .groupby(["model", "item_id", "perturbation"])
    mean = ref["RAS"].mean()
    med = ref["dC"].median()
    key = pd.MultiIndex.from_frame(tr[["model", "item_id", "perturbation"]].astype(str))
    np.testing.assert_allclose(tr["RAS"], mean.reindex(key).to_numpy(), atol=1e-12)
    np.testing.assert_allclose(tr["dC_med"], med.reindex(key).to_numpy(), atol=1e-12)
    paths = ref["correct"].apply(lambda s: "".join("1" if v else "0" for v in s))
    assert tr["path"].tolist() == paths.reindex(key).tolist()
