"""Label instability under natural perturbations (seed 002 §3.2, §4.1-4.2, §5, App. A.7).

From the predictions table (one scoring method per model):

* :func:`flip_pairs` - every perturbed row beside its clean row: the base and
  perturbed predictions, their correctness and ``flip = pred != base`` (any label
  change, W -> W' included);
* :func:`ifr_iv` - Table 1: the **instance flip rate** (Eq. 3)
  ``IFR = mean over instances of 1{y(x') != y(x)}`` and the **image
  vulnerability** (Eq. 4) ``IV = mean over images of 1{exists x' : y(x') != y(x)}``,
  per perturbation and for their union;
* :func:`transitions` - Table 2: R->W, W->R, R->R, W->W (W->W' counted apart
  too) and the **compliance rates** R->W / (R->W + R->R) and W->R / (W->R + W->W);
* :func:`overlay_decomposition` - semantic vs random text vs empty box (§4.1);
* :func:`scale_table` - Table 5 per model: base accuracy, TextOverlay IFR, union IV.

**The union, per table.** Seed 002's "Any" rows do not pool the same set in every
table, and each table here follows its own (:data:`TABLE_UNIONS`):

* Table 1 (IFR, IV) and Table 5's union IV pool **all eight** rows, the three
  overlays included (:data:`UNION_ALL`): its "Any" IFR 0.079 is the
  instance-weighted mean of all eight rows with Table 2's instance counts
  (0.0798; the six of Table 2 give 0.0864), as the Gemma Tables 8-9 do too;
* Tables 2 (transitions) and 3 (embedding invariance) pool **six**: translation,
  pad/crop, scale, scale+pad, rotation, TextOverlay (:data:`UNION_SIX`; Table 2's
  "Any" counts are the sum of those six rows).

**Ground-truth changes.** A perturbation can change the true answer of some
families: a cyclic shift moves the leftmost object to the right edge and can
split an object across the seam (spatial, count), an in-plane rotation changes
left/right and near/far in the image (spatial). :data:`GT_CHANGING` lists these
pairs for the synthetic families; :func:`split_ground_truth` separates them so
that the tables are computed without them and they are reported apart.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from ...schema import CLEAN

__all__ = ["LABELS", "UNION_ALL", "UNION_SIX", "TABLE_UNIONS", "GT_CHANGING", "label", "flip_pairs",
           "split_ground_truth", "ifr_iv", "transitions", "compliance_rates", "overlay_decomposition", "scale_table"]

#: Table labels of the natural perturbations (seed 002, Table 1).
LABELS: dict[str, str] = {
    "translate": "Translation", "pad_crop": "Pad/Crop", "scale": "Scale", "scale_pad": "Scale+Pad",
    "rotate": "Rotation", "text_overlay": "TextOverlay", "random_text": "RandomText", "box_overlay": "BoxOverlay",
}
#: The union of seed 002's Table 1 (and Table 5's union IV): every natural perturbation and overlay.
UNION_ALL = tuple(LABELS)
#: The union of seed 002's Tables 2 and 3: RandomText and BoxOverlay left out.
UNION_SIX = ("translate", "pad_crop", "scale", "scale_pad", "rotate", "text_overlay")
#: Which union each of seed 002's tables pools (see the module docstring).
TABLE_UNIONS = {"table1": UNION_ALL, "table2": UNION_SIX, "table3": UNION_SIX, "table4": UNION_SIX,
                "table5": UNION_ALL}
#: perturbation -> task families whose ground truth it can change (synthetic benchmark).
GT_CHANGING: dict[str, tuple[str, ...]] = {"translate": ("spatial", "count"), "rotate": ("spatial",)}

_PAIR_KEY = ["model", "item_id", "method"]


def label(perturbation: str) -> str:
    """The table label of a perturbation (:data:`LABELS`); ``"any"`` is ``"Any (union)"``, others pass through."""
    return "Any (union)" if perturbation == "any" else LABELS.get(perturbation, perturbation)


def flip_pairs(pred: pd.DataFrame, perturbations: Sequence[str] | None = None) -> pd.DataFrame:
    """Perturbed rows joined to their clean rows (``base_pred``, ``base_correct``, ``flip``).

    One row per perturbation instance ``(model, item, perturbation, level,
    method)``; ``flip`` is any change of the predicted option.
    """
    need = {"model", "item_id", "method", "perturbation", "level", "pred_idx", "correct", "answer_idx"}
    missing = need - set(pred.columns)
    if missing:
        raise ValueError(f"predictions table is missing columns {sorted(missing)}")
    clean = pred[pred["perturbation"] == CLEAN]
    if clean.duplicated(_PAIR_KEY).any():
        raise ValueError("the clean rows repeat a (model, item_id, method): one clean prediction per item")
    base = clean[_PAIR_KEY + ["pred_idx", "correct"]].rename(columns={"pred_idx": "base_pred",
                                                                     "correct": "base_correct"})
    pert = pred[pred["perturbation"] != CLEAN]
    if perturbations is not None:
        pert = pert[pert["perturbation"].isin(list(perturbations))]
    out = pert.merge(base, on=_PAIR_KEY, how="inner", validate="many_to_one")
    out["flip"] = out["pred_idx"].to_numpy() != out["base_pred"].to_numpy()
    return out.reset_index(drop=True)


def split_ground_truth(pairs: pd.DataFrame, changing: Mapping[str, Sequence[str]] = GT_CHANGING
                       ) -> tuple[pd.DataFrame, pd.DataFrame]:
    """``(kept, excluded)``: instances whose perturbation can change the task's ground truth go to ``excluded``."""
    bad = np.zeros(len(pairs), dtype=bool)
    for pert, tasks in changing.items():
        bad |= (pairs["perturbation"] == pert).to_numpy() & pairs["task"].isin(list(tasks)).to_numpy()
    return pairs[~bad].reset_index(drop=True), pairs[bad].reset_index(drop=True)


def _rates(g: pd.DataFrame) -> dict:
    per_image = g.groupby("item_id")["flip"].any()
    return {"IFR": float(g["flip"].mean()), "IV": float(per_image.mean()), "instances": len(g),
            "images": int(per_image.size)}


def ifr_iv(pairs: pd.DataFrame, by: Sequence[str] = ("model",), union: Sequence[str] = UNION_ALL) -> pd.DataFrame:
    """Table 1: IFR and IV per perturbation and for the union of ``union`` (row ``"any"``).

    IV of one perturbation is over the images that have at least one of its
    instances; the union's IV is over every image with an instance of a union
    perturbation.
    """
    by = list(by)
    rows = []
    for key, g in pairs.groupby(by, sort=False) if by else [((), pairs)]:
        key = key if isinstance(key, tuple) else (key,)
        base = dict(zip(by, key, strict=True))
        for pert, gp in g.groupby("perturbation", sort=False):
            rows.append({**base, "perturbation": pert, **_rates(gp)})
        gu = g[g["perturbation"].isin(list(union))]
        if len(gu):
            rows.append({**base, "perturbation": "any", **_rates(gu)})
    return pd.DataFrame(rows, columns=by + ["perturbation", "IFR", "IV", "instances", "images"])


def compliance_rates(rw: float, wr: float, rr: float, ww: float) -> tuple[float, float]:
    """``(R->W / (R->W + R->R), W->R / (W->R + W->W))``: how often base-correct answers break and wrong ones
    are fixed (seed 002 §4.2, App. A.6; NaN when a denominator is 0)."""
    a = rw / (rw + rr) if rw + rr else float("nan")
    b = wr / (wr + ww) if wr + ww else float("nan")
    return float(a), float(b)


def transitions(pairs: pd.DataFrame, by: Sequence[str] = ("model",), union: Sequence[str] = UNION_SIX
                ) -> pd.DataFrame:
    """Table 2: instance counts R->W, W->R, R->R, W->W (W->W' = stays wrong with another option), and the
    compliance rates, per perturbation and for the union (``"any"``)."""
    by = list(by)
    p = pairs.assign(
        RW=pairs["base_correct"] & ~pairs["correct"], WR=~pairs["base_correct"] & pairs["correct"],
        RR=pairs["base_correct"] & pairs["correct"], WW=~pairs["base_correct"] & ~pairs["correct"])
    p["WWp"] = p["WW"] & p["flip"]
    rows = []
    for key, g in p.groupby(by, sort=False) if by else [((), p)]:
        key = key if isinstance(key, tuple) else (key,)
        base = dict(zip(by, key, strict=True))
        groups = list(g.groupby("perturbation", sort=False)) + [("any", g[g["perturbation"].isin(list(union))])]
        for pert, gp in groups:
            if not len(gp):
                continue
            c = {k: int(gp[k].sum()) for k in ("RW", "WR", "RR", "WW", "WWp")}
            broke, fixed = compliance_rates(c["RW"], c["WR"], c["RR"], c["WW"])
            rows.append({**base, "perturbation": pert, "R→W": c["RW"], "W→R": c["WR"], "R→R": c["RR"],
                         "W→W": c["WW"], "W→W′": c["WWp"], "instances": len(gp), "R→W rate": broke,
                         "W→R rate": fixed})
    cols = by + ["perturbation", "R→W", "W→R", "R→R", "W→W", "W→W′", "instances", "R→W rate", "W→R rate"]
    return pd.DataFrame(rows, columns=cols)


def overlay_decomposition(pairs: pd.DataFrame, by: Sequence[str] = ("model",)) -> pd.DataFrame:
    """TextOverlay vs RandomText vs BoxOverlay (identical boxes): IFR, IV and the two gaps of §4.1 per group.

    ``semantic_gap`` = IFR(TextOverlay) - IFR(RandomText) (the instruction),
    ``edge_gap`` = IFR(RandomText) - IFR(BoxOverlay) (edges beyond occlusion).
    """
    names = ["text_overlay", "random_text", "box_overlay"]
    t = ifr_iv(pairs[pairs["perturbation"].isin(names)], by=by, union=())
    wide = t.pivot_table(index=list(by), columns="perturbation", values=["IFR", "IV"])
    out = pd.DataFrame(index=wide.index)
    for n in names:
        for m in ("IFR", "IV"):
            out[f"{m} {LABELS[n]}"] = wide[(m, n)] if (m, n) in wide.columns else np.nan
    out["semantic_gap"] = out["IFR TextOverlay"] - out["IFR RandomText"]
    out["edge_gap"] = out["IFR RandomText"] - out["IFR BoxOverlay"]
    return out.reset_index()


def scale_table(pred: pd.DataFrame, pairs: pd.DataFrame, sizes: Mapping[str, float]) -> pd.DataFrame:
    """Table 5 (§5): per model, its size, base accuracy (%), TextOverlay IFR, union IV (Table 1's union of
    all eight), and the instance rates of error injection R->W and correction W->R over Table 2's union of
    six (Fig. 5); ordered by size."""
    clean = pred[pred["perturbation"] == CLEAN].groupby("model")["correct"].mean()
    iv = ifr_iv(pairs, by=["model"], union=TABLE_UNIONS["table5"]).set_index(["model", "perturbation"])
    tr = transitions(pairs, by=["model"], union=TABLE_UNIONS["table2"]).set_index(["model", "perturbation"])
    rows = []
    for m in sorted(set(pred["model"]), key=lambda n: (sizes.get(n, np.inf), n)):
        def get(t, pert, col, m=m):
            return float(t.loc[(m, pert), col]) if (m, pert) in t.index else float("nan")

        n = get(tr, "any", "instances")
        rows.append({"model": m, "size": sizes.get(m, np.nan), "base_acc": 100 * float(clean.get(m, np.nan)),
                     "TextOverlay IFR": get(iv, "text_overlay", "IFR"), "union IV": get(iv, "any", "IV"),
                     "R→W share": get(tr, "any", "R→W") / n if n else np.nan,
                     "W→R share": get(tr, "any", "W→R") / n if n else np.nan})
    return pd.DataFrame(rows)
