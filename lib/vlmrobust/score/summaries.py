"""Summaries of a predictions table: per-group rates, severity curves, agreement between methods."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from ..schema import CLEAN
from ._core import argmax_low

__all__ = ["summary", "severity_curves", "method_agreement"]


def summary(pred: pd.DataFrame, by: Sequence[str] = ("model", "perturbation", "level", "method")) -> pd.DataFrame:
    """Per-group accuracy, mean confidence, abstain rate, verbal parse rate and mean verbal confidence.

    ``verbal_parse_rate`` is the share of ``verbal`` rows whose confidence parsed
    (NaN for other methods); ``unparsed_rate`` is the mean unparseable share of samples.
    """
    g = pred.groupby(list(by), sort=True, dropna=False)
    out = g.agg(n=("item_id", "size"), accuracy=("correct", "mean"), confidence=("confidence", "mean"),
                abstain_rate=("abstained", "mean"), verbal_conf=("verbal_conf", "mean"),
                unparsed_rate=("unparsed_rate", "mean"))
    parse = g["verbal_conf"].apply(lambda s: float(s.notna().mean()))
    is_verbal = g["method"].first() == "verbal" if "method" in by else None
    out["verbal_parse_rate"] = parse.where(is_verbal, np.nan) if is_verbal is not None else parse
    return out.reset_index()


def severity_curves(pred: pd.DataFrame, perturbations: Sequence[str] | None = None,
                    by: Sequence[str] = ("model",), *, pooled: bool = False) -> pd.DataFrame:
    """:func:`summary` against severity, with the clean rows as level 0 of every curve.

    One curve per ``by`` group and perturbation (``perturbations``: those to draw,
    default every corrupted one in ``pred``, in order of appearance): the clean
    predictions (:data:`~vlmrobust.schema.CLEAN`, level 0) followed by the
    perturbation's levels. ``pooled=True`` pools the perturbations at each level
    instead (one curve per ``by`` group, ``perturbation`` = ``"pooled"``).
    """
    by = list(by)
    names = list(dict.fromkeys(pred.loc[pred["perturbation"] != CLEAN, "perturbation"])) \
        if perturbations is None else list(perturbations)
    clean = pred[pred["perturbation"] == CLEAN]
    keys = [*by, "perturbation", "level"]
    if pooled:
        corrupted = pred[pred["perturbation"].isin(names)]
        sub = pd.concat([clean, corrupted]).assign(perturbation="pooled")
        return summary(sub, by=keys)
    parts = [summary(pd.concat([clean.assign(perturbation=n), pred[pred["perturbation"] == n]]), by=keys)
             for n in names]  # in the order of ``names``, each sorted by ``by`` and level
    return pd.concat(parts, ignore_index=True) if parts else summary(clean, by=keys)


def method_agreement(pred: pd.DataFrame, by: Sequence[str] = ("model", "perturbation", "level"),
                     methods: Sequence[str] | None = None) -> pd.DataFrame:
    """Agreement between scoring methods on the same items: same argmax share and mean TV distance.

    For every ``by`` group and pair of methods present (in the order of
    ``methods``, default their order of appearance), over the items both scored:
    ``same_argmax`` (argmax ties to the lowest index) and ``tv`` = mean of
    ½ Σ_k |p_k − q_k|, with ``n`` items.
    """
    by = list(by)
    rows = []
    for key, g in pred.groupby(by, sort=False):
        have = list(dict.fromkeys(g["method"])) if methods is None else [m for m in methods if m in set(g["method"])]
        wide = g.pivot(index="item_id", columns="method", values="probs")
        for i, a in enumerate(have):
            for b in have[i + 1:]:
                both = wide[[a, b]].dropna()
                pa = [np.asarray(x, dtype=float) for x in both[a]]  # K differs between items
                pb = [np.asarray(x, dtype=float) for x in both[b]]
                same = [argmax_low(x) == argmax_low(y) for x, y in zip(pa, pb, strict=True)]
                tv = [0.5 * float(np.abs(x - y).sum()) for x, y in zip(pa, pb, strict=True)]
                rows.append({**dict(zip(by, key if isinstance(key, tuple) else (key,), strict=True)),
                             "pair": f"{a} vs {b}", "n": len(both),
                             "same_argmax": float(np.mean(same)) if same else np.nan,
                             "tv": float(np.mean(tv)) if tv else np.nan})
    return pd.DataFrame(rows, columns=[*by, "pair", "n", "same_argmax", "tv"])
