r"""The reliability card: every lens's read-out per model, each with its bootstrap interval, from one sweep.

Each read-out is the one its own notebook computes, called on the card's rows
(:mod:`.inputs`), so a card number equals the notebook's number on the same rows:

=================  ==========================================================  ========================================
column             read-out                                                    computed by
=================  ==========================================================  ========================================
``acc_clean``      clean accuracy (over the RAS pairs)                         seed 000 Table II
``RAS``            mean per-pair RAS, Eq. 11; ``R_c`` / ``R_w`` over           :func:`~vlmrobust.analysis.ras.table_ii`
                   clean-correct / clean-wrong pairs (Eq. 15)                  (notebook 04)
``over_share``     the overconfidence share of RAS's penalties (below)         here, from the same pairs
``mCE``            mean corruption error against ``reference``; ``rel_mCE``    :func:`.readouts.mce`
``RCI_mu``         mean RCI over the ladders' conditions; ``T_mu`` mean T-RCI  seed 001 Table I
                   over the directions (unit: the model)                       (notebook 07's ``run_tables``)
``drift_pct``      mean drift of the ImageNet-C conditions as a % of the mean  seed 002 Table 4 ("any" row)
                   control distance (one regime, cosine)                       (notebook 05)
``W_<signal>_<a>`` blind-spot width of ``internal`` and ``abstain``            seed 003 Table V (notebook 06)
                   on arm ``a``
``ECE``            expected calibration error of the clean answers (10 bins),  :func:`ece_readouts`
                   beside ``ECE_null``; refused below :data:`MIN_ECE_ITEMS`
``circular_acc``   CircularEval accuracy over the rotations of the options     :func:`.readouts.answer_order_flips`
``flip_rate``      answers that change with the option rotation (by content)
``position_rate``  answers that keep the position while its content changed
=================  ==========================================================  ========================================

**Overconfidence share.** RAS (Eq. 11) subtracts two penalties from
:math:`-\Delta\mathcal C`: the overconfidence penalty
:math:`[\Delta\mathcal C]_+[-\Delta\mathcal S]_+` (alignment worsens while the
distribution sharpens) and the hesitation penalty
:math:`[\Delta\mathcal S]_+[-\Delta\mathcal C]_+`. ``over_share`` is the sum of the
first over the sum of both across a model's pairs (NaN when no pair is
penalised): the share of RAS's uncertainty penalty that is overconfidence. The
paper names the two penalties but reports no share; this reading is the card's.

**Pooled W.** Seed 003 computes W per task; the card pools its items into one
task ``"card"`` whose chance is the mean of the items' :math:`1/K` (what a
uniform guess scores on the pool), with the base item as the bootstrap unit.

**ECE beside its null.** On a few dozen items ECE is mostly sampling noise: a
perfectly calibrated model (outcomes drawn ``~ Bernoulli(confidence)``) with the
same confidences has an ECE of about 0.2 on 18 items. The card reports that
calibrated model's mean ECE (``ECE_null``, and its 95th percentile ``ECE_null_hi``)
beside each model's ECE, and refuses the ECE (NaN, ``ECE_note``) below
:data:`MIN_ECE_ITEMS` items (ten a bin on average).

Intervals are percentile intervals (``ci``) over resampled items, by each
read-out's own bootstrap (so they are not paired across read-outs). A read-out
whose value is NaN (refused, or undefined) has no interval.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from ... import repro
from ...schema import CLEAN
from ...stats.bootstrap import percentile_interval, point_interval, replicate_sums
from ...stats.calibration import ece
from .. import ras
from ..drift import representation as drift
from ..escalation import replicates
from ..visibility import blind_spot as vis
from ..visibility import readouts as vread
from .inputs import ARMS, CardInputs, base_rows, is_base
from .readouts import ORDER, _weights, answer_order_flips, mce

__all__ = ["READOUTS", "MIN_ECE_ITEMS", "ece_null", "ras_readouts", "escalation_readouts", "drift_readouts",
           "blind_spot_readouts", "ece_readouts", "card_table", "card_long"]

#: Read-out column -> (label, the side that is better: +1 higher, -1 lower, 0 neither).
READOUTS: dict[str, tuple[str, int]] = {
    "acc_clean": ("clean accuracy", 1), "RAS": ("RAS", 1), "R_c": ("R_c (clean-correct)", 1),
    "R_w": ("R_w (clean-wrong)", 1), "over_share": ("overconfidence share", -1), "mCE": ("mCE", -1),
    "rel_mCE": ("relative mCE", -1), "RCI_mu": ("RCI_mu", -1), "T_mu": ("T-RCI", -1),
    "drift_pct": ("drift, % of control", -1), "W_internal_fog": ("W internal, fog", -1),
    "W_abstain_fog": ("W abstain, fog", -1), "W_internal_water": ("W internal, water", -1),
    "W_abstain_water": ("W abstain, water", -1), "ECE": ("ECE (clean)", -1),
    "circular_acc": ("CircularEval accuracy", 1), "flip_rate": ("answer-order flip rate", -1),
    "position_rate": ("answer-order position rate", -1),
}
#: Fewest clean items for an ECE (ten a bin on average with 10 bins; :func:`ece_readouts`).
MIN_ECE_ITEMS = 100


def _ratio_by_item(df: pd.DataFrame, num: str, den: str | None, items: list[str], W: np.ndarray) -> np.ndarray:
    """``Σ num / Σ den`` (``den`` None: row counts) per weight row, summed per item first."""
    ii = pd.Index(items).get_indexer(df.item_id.astype(str))
    X = np.zeros((len(items), 2))
    np.add.at(X, ii, np.c_[df[num].to_numpy(float), np.ones(len(df)) if den is None else df[den].to_numpy(float)])
    s = replicate_sums(W, X)
    with np.errstate(divide="ignore", invalid="ignore"):
        return s[:, 0] / s[:, 1]


def ras_readouts(pred: pd.DataFrame, perturbations: Sequence[str], *, n_boot: int, seed: int,
                 ci: float) -> pd.DataFrame:
    """Clean accuracy, RAS, R_c, R_w (seed 000 Table II per model, notebook 04's bootstrap stream) and
    ``over_share`` (module docstring) on the pairs of ``perturbations``."""
    pairs = ras.pairs(base_rows(pred, perturbations))
    pairs = pairs[pairs.perturbation.isin(perturbations)]
    t2 = ras.table_ii(pairs, n_boot=n_boot, ci=ci, rng=repro.rng("04_ras_attribution", "bootstrap", seed))
    cols = ["model"] + [f"{c}{s}" for c in ("acc_clean", "RAS", "R_c", "R_w") for s in ("", "_lo", "_hi")]
    out = t2[[c for c in cols if c in t2.columns]].copy()
    out["model"] = out.model.astype(str)
    p = pd.DataFrame({"model": pairs.model.astype(str), "item_id": pairs.item_id.astype(str),
                      "over": np.clip(pairs.dC, 0, None) * np.clip(-pairs.dS, 0, None),
                      "hes": np.clip(pairs.dS, 0, None) * np.clip(-pairs.dC, 0, None)})
    p["pen"] = p.over + p.hes
    items = sorted(p.item_id.unique())
    W = _weights(len(items), n_boot, repro.rng("card.over_share", seed), "")
    rows = []
    for m, g in p.groupby("model", sort=True):
        v, lo, hi = point_interval(_ratio_by_item(g, "over", "pen", items, W), ci)
        rows.append({"model": m, "over_share": v, "over_share_lo": lo, "over_share_hi": hi})
    return out.merge(pd.DataFrame(rows), on="model", how="outer")


def escalation_readouts(pred: pd.DataFrame, ladders: Sequence[str], traversals: dict[str, str], *, n_boot: int,
                        seed: int, ci: float) -> pd.DataFrame:
    """RCI_mu and T-RCI per model (seed 001 Table I, unit the model, notebook 07's defaults), with intervals
    over resampled questions (:func:`~vlmrobust.analysis.escalation.replicates.item_bootstrap`)."""
    rows = base_rows(pred, [*ladders, *traversals.values()])

    def fn(p):
        return replicates.run_tables(p, ladders, traversals, unit=("model",), full=False).table1

    point = fn(rows)
    boot = replicates.item_bootstrap(rows, fn, n_boot, seed, stream="card.escalation")
    out = point[["model", "RCI_mu", "T_mu"]].copy()
    out["model"] = out.model.astype(str)
    for col in ("RCI_mu", "T_mu"):
        reps = np.array([b.set_index(b.model.astype(str))[col].reindex(out.model).to_numpy(float) for b in boot])
        lo, hi = percentile_interval(reps, ci) if len(reps) else (np.full(len(out), np.nan),) * 2
        out[f"{col}_lo"], out[f"{col}_hi"] = lo, hi
    return out


def drift_readouts(probes: pd.DataFrame, perturbations: Sequence[str], *, regime: str, n_boot: int, seed: int,
                   ci: float) -> pd.DataFrame:
    """Drift of ``perturbations`` (pooled, the "any" row of seed 002 Table 4, cosine) as a % of the model's mean
    control distance; the interval resamples the questions (the control mean held fixed)."""
    if probes is None or probes.empty:
        return pd.DataFrame(columns=["model", "drift_pct", "drift_pct_lo", "drift_pct_hi", "drift_d"])
    t4 = drift.drift_vs_control(probes, regime, "cos", by=("model",), union=tuple(perturbations))
    anyrow = t4[t4.perturbation == "any"].set_index("model")
    d = probes[(probes.kind == "drift") & (probes.regime == regime) & probes.perturbation.isin(perturbations)]
    d = d[np.isfinite(d["cos"].to_numpy(float))]
    items = sorted(d.item_id.astype(str).unique())
    W = _weights(len(items), n_boot, repro.rng("card.drift", seed), "")
    rows = []
    for m, g in d.groupby("model", sort=True):
        mu_c = float(anyrow.loc[m, "mu_ctrl"])
        v = 100 * _ratio_by_item(g, "cos", None, items, W) / mu_c
        _, lo, hi = point_interval(v, ci)
        rows.append({"model": str(m), "drift_pct": float(anyrow.loc[m, "pct_mean"]), "drift_pct_lo": lo,
                     "drift_pct_hi": hi, "drift_d": float(anyrow.loc[m, "d"])})
    return pd.DataFrame(rows)


def blind_spot_readouts(pred: pd.DataFrame, items: pd.DataFrame, *, internal: str = "token_prob", n_boot: int,
                        seed: int, ci: float, min_gap: float = 0.1,
                        abstain_mid: str = "fixed") -> tuple[pd.DataFrame, pd.DataFrame]:
    """W of the internal confidence and of the abstain option on each arm (seed 003 Table V, pooled task;
    module docstring). Returns the wide columns and the long
    :func:`~vlmrobust.analysis.visibility.blind_spot.blind_spot_table`."""
    vis_pred = pred[pred.perturbation.isin([CLEAN, *ARMS])]
    base = items[is_base(items)]
    chance = float(np.mean([1.0 / len(o) for o in base.options]))
    long = vread.signals_long(vis_pred.assign(task="card"), items, ARMS, internal=internal)
    long["chance"] = chance
    cube = vis.signal_cube(long)
    spots = vis.blind_spot_table(cube, n_boot, repro.rng("card.blind_spot", seed) if n_boot else None, ci=ci,
                                 min_gap=min_gap, abstain_mid=abstain_mid)
    wide = {}
    for r in spots[spots.signal.isin(["internal", "abstain"])].itertuples(index=False):
        key = f"W_{r.signal}_{r.arm}"
        wide.setdefault(str(r.model), {"model": str(r.model)}).update(
            {key: r.w, f"{key}_lo": r.w_lo, f"{key}_hi": r.w_hi, f"{key}_kind": r.w_kind})
    return pd.DataFrame(list(wide.values())), spots


def ece_null(conf: np.ndarray, n_sims: int, rng: np.random.Generator, n_bins: int = 10) -> np.ndarray:
    """ECE of ``n_sims`` perfectly calibrated models with the confidences ``conf``: outcomes drawn
    ``~ Bernoulli(conf)``, so every gap is sampling noise (the null of :func:`ece_readouts`)."""
    conf = np.asarray(conf, float)
    conf = conf[np.isfinite(conf)]
    return np.array([ece(conf, rng.random(len(conf)) < conf, n_bins) for _ in range(n_sims)])


def ece_readouts(pred: pd.DataFrame, *, n_boot: int, seed: int, ci: float, n_bins: int = 10,
                 min_items: int = MIN_ECE_ITEMS, n_sims: int = 200) -> pd.DataFrame:
    """ECE of the clean answers (confidence = max option probability) with an interval over resampled items,
    beside its null: ``ECE_null`` (mean) and ``ECE_null_hi`` (95th percentile) of :func:`ece_null` over
    ``n_sims`` draws. Refused (NaN, with ``ECE_note``) below ``min_items`` items: with 10 bins and fewer than
    ten items a bin, a perfectly calibrated model's own ECE is about 0.1 to 0.2 (0.21 on 18 items)."""
    clean = base_rows(pred)
    clean = clean[clean.perturbation == CLEAN]
    items = sorted(clean.item_id.astype(str).unique())
    W = _weights(len(items), n_boot, repro.rng("card.ece", seed), "").astype(int)
    rows = []
    for m, g in clean.groupby("model", sort=True):
        g = g.set_index(g.item_id.astype(str)).reindex(items)
        conf, ok = g.confidence.to_numpy(float), g.correct.astype(float).to_numpy()
        null = ece_null(conf, n_sims, repro.rng("card.ece-null", str(m), seed), n_bins)
        row = {"model": str(m), "ECE_null": float(null.mean()), "ECE_null_hi": float(np.quantile(null, 0.95)),
               "ECE_items": len(items), "ECE_note": ""}
        if len(items) < min_items:
            row |= {"ECE": np.nan, "ECE_lo": np.nan, "ECE_hi": np.nan,
                    "ECE_note": f"refused: {len(items)} items; ECE with {n_bins} bins needs at least {min_items} "
                                f"(a calibrated model with these confidences averages {null.mean():.2f})"}
        else:
            v = np.array([ece(np.repeat(conf, w), np.repeat(ok, w), n_bins) for w in W])
            val, lo, hi = point_interval(v, ci)
            row |= {"ECE": val, "ECE_lo": lo, "ECE_hi": hi}
        rows.append(row)
    return pd.DataFrame(rows)


def card_table(inp: CardInputs, *, reference: str, imagenet_c: Sequence[str], traversals: dict[str, str],
               ladders: Sequence[str], drift_regime: str = "ans_mcq_free", internal: str = "token_prob",
               n_boot: int = 1000, seed: int = 0, ci: float = 0.95, min_gap: float = 0.1
               ) -> tuple[pd.DataFrame, dict[str, pd.DataFrame]]:
    """One row per model: every read-out of :data:`READOUTS` with ``_lo`` / ``_hi``; and the lens tables
    behind it (``blind_spots``, ``mce``, ``order``)."""
    pred = inp.pred
    models = sorted(pred.model.astype(str).unique())
    icp = base_rows(pred, imagenet_c)
    parts = [ras_readouts(pred, imagenet_c, n_boot=n_boot, seed=seed, ci=ci)]
    m = mce(icp, reference, n_boot=n_boot, rng=repro.rng("card.mce", seed), ci=ci)
    parts.append(m[["model", *[f"{c}{s}" for c in ("mCE", "rel_mCE") for s in ("", "_lo", "_hi", "_note")]]])
    parts.append(escalation_readouts(pred, ladders, traversals, n_boot=n_boot, seed=seed, ci=ci))
    parts.append(drift_readouts(inp.probes, imagenet_c, regime=drift_regime, n_boot=n_boot, seed=seed, ci=ci))
    w, spots = blind_spot_readouts(pred, inp.items, internal=internal, n_boot=n_boot, seed=seed, ci=ci,
                                   min_gap=min_gap)
    parts.append(w)
    parts.append(ece_readouts(pred, n_boot=n_boot, seed=seed, ci=ci))
    order = pred[(pred.perturbation.isin([CLEAN, ORDER])) & is_base(pred)]
    flips = answer_order_flips(order, inp.orders, n_boot=n_boot, rng=repro.rng("card.order", seed), ci=ci,
                               items=inp.items[is_base(inp.items)]) \
        if (order.perturbation == ORDER).any() else pd.DataFrame(columns=["model"])
    parts.append(flips.drop(columns=[c for c in ("n_items", "n_orders", "n_informative", "full_circle")
                                     if c in flips.columns]))
    out = pd.DataFrame({"model": models})
    for p in parts:
        if len(p.columns) > 1:
            out = out.merge(p.assign(model=p.model.astype(str)), on="model", how="left")
    out.insert(1, "reference", reference)
    for col in READOUTS:  # a read-out without a value has no interval
        if col in out.columns:
            gone = ~np.isfinite(out[col].to_numpy(float))
            for side in ("_lo", "_hi"):
                if col + side in out.columns:
                    out.loc[gone, col + side] = np.nan
    return out, {"blind_spots": spots, "mce": m, "order": flips}


def card_long(card: pd.DataFrame, readouts: Sequence[str] | None = None) -> pd.DataFrame:
    """The card in long form: ``model, readout, label, better, value, lo, hi, kind, null, note`` (read-outs present
    only; ``kind`` is a W's :data:`~vlmrobust.analysis.visibility.blind_spot.W_KINDS` entry, ``=`` for the rest;
    ``null`` the read-out's null where the card has one (ECE's calibrated model); ``note`` why a value is
    refused)."""
    rows = []
    for col in readouts or READOUTS:
        if col not in card.columns:
            continue
        label, better = READOUTS.get(col, (col, 0))
        for r in card.itertuples(index=False):
            d = r._asdict()
            rows.append({"model": d["model"], "readout": col, "label": label, "better": better,
                         "value": d[col], "lo": d.get(f"{col}_lo", np.nan), "hi": d.get(f"{col}_hi", np.nan),
                         "kind": d.get(f"{col}_kind", "=") if isinstance(d.get(f"{col}_kind"), str) else "=",
                         "null": d.get(f"{col}_null", np.nan),
                         "note": d[f"{col}_note"] if isinstance(d.get(f"{col}_note"), str) else ""})
    return pd.DataFrame(rows)
