"""The failure taxonomy of seed 001 (§II-H, §VII), fixed and total, with subtypes from the synthetic truth.

Seed 001 assigns every clean-correct → perturbed-wrong failure to its dominant class, OCR, spatial,
symbolic (reasoning) or semantic, with a residual *other*, from cues read in reasoning traces. The model
organisms leave no traces, but the synthetic benchmark knows what each question needs and (for the
region-removing perturbations) whether that evidence survived (:mod:`vlmrobust.corrupt.evidence`). So the
mapping here is a fixed table:

* the **class** follows what the task family asks (:data:`FAMILY_TAXONOMY`): reading a sign's glyph is OCR;
  bar charts, left/right/near/far relations and size comparisons are spatial (geometric and diagrammatic
  relations, §II-H); counting and verifying a colour-and-shape conjunction against the question are
  symbolic (numerical and logical); naming a colour or a shape and judging existence are semantic
  (the object is seen, its meaning is mistaken). A family the table does not know (a real dataset's
  category) is *other* with subtype ``unattributed``; so is any failure that picked the abstain option;
* the **subtype** follows the evidence record of the item under the failing condition: evidence
  *removed* by the perturbation (``glyph removed``, ``count changed``, ``relation object removed``, ...),
  *cut* (partly removed), or *intact and misread* (``glyph misread``, ``miscount``, ...). Perturbations that
  degrade the image in place (blur, contrast, rotation; evidence ``n/a``) leave the evidence in the image,
  so their failures are misreadings. Two subtypes use more ground truth: a count that changed is split by
  whether the model answered the count of what remains visible (``count changed, remainder counted``),
  and an existence question whose queried object is absent can only fail by hallucination
  (``object hallucinated``).

Every failure gets exactly one class and one subtype (:func:`classify`). The paper's most frequent OCR
subtype, "option label" (a traversal crops the printed answer letters), cannot occur here: the synthetic
options are part of the prompt, not of the image.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from ...schema import CLEAN
from ...stats.grouped import as_cols

__all__ = ["CLASSES", "FAMILY_TAXONOMY", "SUBTYPES", "subtype_of", "failures", "classify", "taxonomy_counts"]

CLASSES = ("OCR", "spatial", "symbolic", "semantic", "other")

#: family -> (class, name of its evidence, subtype of a misreading with the evidence intact).
FAMILY_TAXONOMY: dict[str, tuple[str, str, str]] = {
    "text": ("OCR", "glyph", "glyph misread"),
    "chart": ("spatial", "bar", "bar comparison misread"),
    "spatial": ("spatial", "relation object", "positional grounding error"),
    "size": ("spatial", "compared object", "size comparison misread"),
    "count": ("symbolic", "counted object", "miscount"),
    "verify": ("symbolic", "verified object", "verification misjudged"),
    "colour": ("semantic", "target object", "colour misread"),
    "shape": ("semantic", "target object", "shape misread"),
    "exist": ("semantic", "queried object", "object missed"),
}
_COUNT_REMAINDER, _COUNT_OTHER = "count changed, remainder counted", "count changed, miscounted"
_HALLUCINATED, _UNATTRIBUTED, _ABSTAINED = "object hallucinated", "unattributed", "abstained"


def _subtypes() -> tuple[tuple[str, str], ...]:
    out = []
    for cls in CLASSES[:-1]:
        for fam, (c, noun, misread) in FAMILY_TAXONOMY.items():
            if c != cls:
                continue
            removed = [_COUNT_REMAINDER, _COUNT_OTHER] if fam == "count" else [f"{noun} removed"]
            extra = [_HALLUCINATED] if fam == "exist" else []
            for s in [*removed, f"{noun} cut", misread, *extra]:
                if (cls, s) not in out:
                    out.append((cls, s))
    return tuple(out) + (("other", _UNATTRIBUTED), ("other", _ABSTAINED))


#: Every (class, subtype) the taxonomy can assign, in a fixed order (classes in :data:`CLASSES` order).
SUBTYPES: tuple[tuple[str, str], ...] = _subtypes()


def subtype_of(family: str, evidence: str, *, abstained: bool = False,
               counted_remainder: bool = False) -> tuple[str, str]:
    """The (class, subtype) of one failure: its family, its evidence state, and the two special cases."""
    if abstained:
        return "other", _ABSTAINED
    if family not in FAMILY_TAXONOMY:
        return "other", _UNATTRIBUTED
    cls, noun, misread = FAMILY_TAXONOMY[family]
    if evidence == "removed":
        if family == "count":
            return cls, _COUNT_REMAINDER if counted_remainder else _COUNT_OTHER
        return cls, f"{noun} removed"
    if evidence == "partial":
        return cls, f"{noun} cut"
    if evidence == "none" and family == "exist":
        return cls, _HALLUCINATED
    return cls, misread


def failures(pred: pd.DataFrame, perturbations: Sequence[str] | None = None,
             keys: Sequence[str] = ("model", "method", "item_id")) -> pd.DataFrame:
    """The corrupted rows of ``pred`` that turned a clean-correct item wrong (one row per failure)."""
    keys = [k for k in as_cols(keys, "keys") if k in pred.columns]
    pert = pred["perturbation"].astype(str)
    clean = pred.loc[pert == CLEAN, keys + ["pred_idx", "answer_idx"]]
    ok = clean.loc[clean["pred_idx"].to_numpy() == clean["answer_idx"].to_numpy(), keys]
    corr = pred[(pert != CLEAN) & (pred["level"] > 0)]
    if perturbations is not None:
        corr = corr[corr["perturbation"].astype(str).isin(list(perturbations))]
    wrong = corr[corr["pred_idx"].to_numpy() != corr["answer_idx"].to_numpy()]
    return wrong.merge(ok, on=keys).reset_index(drop=True)


def classify(fails: pd.DataFrame, items: pd.DataFrame, evidence: pd.DataFrame | None = None) -> pd.DataFrame:
    """Class and subtype of every failure of :func:`failures` (exactly one each).

    ``items``: the item table (options, meta); ``evidence``: :func:`vlmrobust.corrupt.evidence.evidence_table`
    for the failing conditions (``None``: every evidence state is ``n/a``). Adds ``evidence``, ``class``
    and ``subtype`` (categoricals over :data:`CLASSES` and the subtypes of :data:`SUBTYPES`).
    """
    out = fails.copy()
    if "task" not in out.columns:
        out = out.merge(items[["item_id", "task"]], on="item_id", how="left")
    ev_cols = ["item_id", "perturbation", "level", "evidence", "visible_count"]
    if evidence is not None and len(out):
        ev = evidence[ev_cols].copy()
        ev["perturbation"] = ev["perturbation"].astype(str)
        out["perturbation"] = out["perturbation"].astype(str)
        out = out.merge(ev, on=["item_id", "perturbation", "level"], how="left")
    else:
        out["evidence"], out["visible_count"] = "n/a", np.nan
    out["evidence"] = out["evidence"].fillna("n/a")
    opts = items.set_index("item_id")["options"]
    pred_text = [list(opts.loc[i])[k] if i in opts.index else "" for i, k in zip(out["item_id"], out["pred_idx"],
                                                                                 strict=True)]
    vis = out["visible_count"].to_numpy(dtype=np.float64)
    remainder = [np.isfinite(v) and t == str(int(v)) for t, v in zip(pred_text, vis, strict=True)]
    abst = out["abstained"].to_numpy(dtype=bool) if "abstained" in out.columns else np.zeros(len(out), bool)
    pairs = [subtype_of(str(f), str(e), abstained=bool(a), counted_remainder=bool(r))
             for f, e, a, r in zip(out["task"], out["evidence"], abst, remainder, strict=True)]
    out["class"] = pd.Categorical([p[0] for p in pairs], categories=list(CLASSES))
    out["subtype"] = pd.Categorical([p[1] for p in pairs], categories=list(dict.fromkeys(s for _, s in SUBTYPES)))
    return out


def taxonomy_counts(classified: pd.DataFrame, by: str | Sequence[str] = ("model",),
                    level: str = "class") -> pd.DataFrame:
    """Counts and within-``by`` shares of each class (``level="class"``) or (class, subtype)."""
    by = list(as_cols(by, "by"))
    if level not in ("class", "subtype"):
        raise ValueError(f"level must be 'class' or 'subtype', got {level!r}")
    cols = [*by, "class"] + (["subtype"] if level == "subtype" else [])
    out = classified.groupby(cols, observed=True, sort=True).size().rename("n").reset_index()
    tot = out.groupby(by, observed=True)["n"].transform("sum") if by else out["n"].sum()
    out["share"] = out["n"] / tot
    return out

