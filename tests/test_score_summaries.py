"""Summaries of a predictions table: severity curves and the agreement between scoring methods."""

from __future__ import annotations

import numpy as np
import pandas as pd

from vlmrobust import schema, score


def _rows(model, item, pert, level, method, probs, answer=0):
    p = np.asarray(probs, dtype=float)
    pred = int(np.argmax(p))
    return {"model": model, "item_id": item, "task": "colour", "perturbation": pert, "level": level,
            "method": method, "probs": list(p), "pred_idx": pred, "correct": pred == answer,
            "confidence": float(p.max()), "abstained": False, "verbal_conf": np.nan, "unparsed_rate": np.nan,
            "answer_idx": answer}


def _table():
    rows = []
    for item, (c0, n1, b1) in {"q1": ([0.9, 0.1], [0.6, 0.4], [0.2, 0.8]),
                               "q2": ([0.3, 0.7], [0.4, 0.6], [0.8, 0.2])}.items():
        rows += [_rows("m", item, schema.CLEAN, 0, "letter", c0), _rows("m", item, "noise", 1, "letter", n1),
                 _rows("m", item, "blur", 1, "letter", b1)]
    return pd.DataFrame(rows)


def test_severity_curves_start_every_perturbation_at_clean():
    curves = score.severity_curves(_table())
    assert curves[["perturbation", "level"]].values.tolist() == [["noise", 0], ["noise", 1], ["blur", 0], ["blur", 1]]
    clean = curves[curves.level == 0]
    assert (clean.accuracy == 0.5).all() and np.allclose(clean.confidence, 0.8) and (clean.n == 2).all()
    assert curves.set_index(["perturbation", "level"]).loc[("noise", 1), "accuracy"] == 0.5
    assert curves.set_index(["perturbation", "level"]).loc[("blur", 1), "accuracy"] == 0.5
    pooled = score.severity_curves(_table(), pooled=True)
    assert pooled.level.tolist() == [0, 1] and pooled.n.tolist() == [2, 4] and (pooled.perturbation == "pooled").all()
    only = score.severity_curves(_table(), ["blur"])
    assert set(only.perturbation) == {"blur"}


def test_method_agreement_counts_argmax_and_total_variation():
    t = _table()
    t = t[t.perturbation == schema.CLEAN]
    other = t.assign(method="loglik", probs=[[0.6, 0.4], [0.9, 0.1]])
    agree = score.method_agreement(pd.concat([t, other]), by=["model"])
    assert agree.pair.tolist() == ["letter vs loglik"] and agree.n.tolist() == [2]
    assert agree.same_argmax.iloc[0] == 0.5  # q1 agrees (0 vs 0), q2 does not (1 vs 0)
    assert np.isclose(agree.tv.iloc[0], (0.3 + 0.6) / 2)
    # ties break to the lowest index in both methods
    tie = t.assign(probs=[[0.5, 0.5], [0.5, 0.5]])
    assert score.method_agreement(pd.concat([tie, tie.assign(method="sample", probs=[[0.6, 0.4]] * 2)]),
                                  by=["model"]).same_argmax.iloc[0] == 1.0
