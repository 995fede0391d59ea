r"""The two abstaining controls besides ``aware``: what they do, measured through the one scoring engine.

* **aware-err** (abstains exactly where its own answer would be wrong). Each held-out
  item is asked twice on the same image: without the abstain option (its answer is
  right or wrong) and with it (it abstains or not). :func:`own_error_predictions`
  pairs the two answers on clean items of every family and on the boxed families
  under fog and water over a range of visibilities; :func:`own_error_summary` gives
  ``P(abstain | wrong)``, ``P(abstain | right)`` and the share of items where
  "abstained" equals "wrong" (1 for a perfect error-aware control; for an organism
  that abstains at random with rate ``a`` and errs with rate ``e`` it is
  ``a e + (1 - a)(1 - e)``, printed beside it as ``agreement_if_independent``).
* **abstainer** (the abstain option its answer in training only on images without content). On images
  without content, a uniform grey 128 (notebook 06's blank control) and pure noise
  (every channel uniform in 0-255), both with the red box where the item has one,
  :func:`null_abstain_rates` gives its abstain rate; its abstain rate under fog and
  water, which it never saw with the option offered, is
  :func:`abstain_curve` of :func:`vlmrobust.train.behaviours.aware_predictions`
  (there the visibility rule only labels the rows; the organism was not trained on it).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from .card import markdown_table
from .degrade import ARMS, BOXED_FAMILIES, EXTENDED_LEVELS_M, boxed_condition

__all__ = ["own_error_predictions", "own_error_summary", "own_error_by_level", "null_images", "null_abstain_rates",
           "abstain_curve", "card_sections", "NULL_KINDS"]

NULL_KINDS = ("blank", "noise")
_WORDINGS = ("unclear", "dont_know")


def _seed(seed: int | None) -> int:
    from .evaluate import HELDOUT_SEED

    return HELDOUT_SEED if seed is None else int(seed)


def own_error_predictions(lm: Any, *, n_per_family: int = 60, seed: int | None = None,
                          levels: Sequence[float] = EXTENDED_LEVELS_M, arms: Sequence[str] = ARMS,
                          wordings: Sequence[str] = _WORDINGS, batch_size: int = 32) -> pd.DataFrame:
    """One row per item, condition and wording: ``wrong`` (its answer without the abstain option) and
    ``abstained`` (with the option, on the same image). Columns: ``item_id``, ``category``, ``wording``,
    ``arm`` ("clean", "fog", "water"), ``visibility_m``, ``wrong``, ``abstained``."""
    from .. import data, synth
    from ..score import predict

    seed = _seed(seed)
    frames = []

    def pair(plain: pd.DataFrame, offered: pd.DataFrame, images: list, **where: Any) -> None:
        if [list(o)[:-1] for o in offered["options"]] != [list(o) for o in plain["options"]]:
            raise ValueError("the items with the abstain option are not the items without it plus that option")
        a = predict(lm, plain, images, batch_size=batch_size)
        b = predict(lm, offered, images, batch_size=batch_size)
        frames.append(pd.DataFrame({"item_id": plain["item_id"].to_numpy(), "category": plain["category"].to_numpy(),
                                    "wrong": ~a["correct"].to_numpy(bool), "abstained": b["abstained"].to_numpy(bool),
                                    **where}))

    for wording in wordings:
        plain = synth.generate(n_per_family, seed, families=list(synth.FAMILIES), box=True)
        offered = synth.generate(n_per_family, seed, families=list(synth.FAMILIES), abstain=wording, box=True)
        pair(plain, offered, [data.load_image(r) for r in plain["image_ref"]], wording=wording, arm="clean",
             visibility_m=math.inf)
        plain = synth.generate(n_per_family, seed, families=list(BOXED_FAMILIES), box=False)
        offered = synth.generate(n_per_family, seed, families=list(BOXED_FAMILIES), abstain=wording, box=False)
        base = [synth.item_from_ref(r) for r in plain["image_ref"]]
        for arm in arms:
            for v in levels:
                pair(plain, offered, [boxed_condition(it, arm, v)[0] for it in base], wording=wording, arm=arm,
                     visibility_m=float(v))
    return pd.concat(frames, ignore_index=True)


def _agreement(g: pd.DataFrame) -> dict:
    w, a = g["wrong"].to_numpy(bool), g["abstained"].to_numpy(bool)
    e, r = float(w.mean()), float(a.mean())
    return {"n": len(g), "error_rate": e, "abstain_rate": r,
            "abstain_if_wrong": float(a[w].mean()) if w.any() else math.nan,
            "abstain_if_right": float(a[~w].mean()) if (~w).any() else math.nan,
            "agreement": float((a == w).mean()), "agreement_if_independent": r * e + (1 - r) * (1 - e)}


def own_error_summary(pred: pd.DataFrame) -> pd.DataFrame:
    """Per wording, over every row (clean and degraded): error and abstain rates, ``P(abstain | wrong)``,
    ``P(abstain | right)``, the agreement of "abstained" with "wrong" and its value if they were independent."""
    return pd.DataFrame([{"wording": wd, **_agreement(g)} for wd, g in pred.groupby("wording", sort=False)])


def own_error_by_level(pred: pd.DataFrame) -> pd.DataFrame:
    """:func:`own_error_summary` per arm and visibility, both wordings pooled (clean first)."""
    rows = [{"arm": arm, "visibility_m": v, **_agreement(g)}
            for (arm, v), g in pred.groupby(["arm", "visibility_m"], sort=False)]
    return pd.DataFrame(rows)


def null_images(items: pd.DataFrame, kind: str, seed: int) -> list[np.ndarray]:
    """Images without content for ``items``: ``blank`` (uniform grey 128) or ``noise`` (every channel of
    every pixel uniform in 0-255, a generator per item from ``seed``), the red box drawn where the item
    has one."""
    from .. import data, repro, synth

    if kind not in NULL_KINDS:
        raise ValueError(f"kind must be one of {NULL_KINDS}, got {kind!r}")
    out = []
    for ref, iid in zip(items["image_ref"], items["item_id"], strict=True):
        shape = np.asarray(data.load_image(ref)).shape
        img = (np.full(shape, 128, np.uint8) if kind == "blank"
               else repro.rng("null-image", seed, iid).integers(0, 256, size=shape, dtype=np.uint8))
        box = synth.item_from_ref(ref).meta.get("box")
        out.append(synth.draw_box(img, box) if box is not None else img)
    return out


def null_abstain_rates(lm: Any, *, n_per_family: int = 60, seed: int | None = None,
                       wordings: Sequence[str] = _WORDINGS, batch_size: int = 32) -> pd.DataFrame:
    """Abstain rate on images without content (:func:`null_images`) per kind and wording, every family."""
    from .. import synth
    from ..score import predict

    seed = _seed(seed)
    rows = []
    for wording in wordings:
        items = synth.generate(n_per_family, seed, families=list(synth.FAMILIES), abstain=wording, box=True)
        for kind in NULL_KINDS:
            p = predict(lm, items, null_images(items, kind, seed), perturbation=f"null_{kind}", batch_size=batch_size)
            rows.append({"kind": kind, "wording": wording, "n": len(p), "abstain_rate": float(p["abstained"].mean())})
    return pd.DataFrame(rows)


def abstain_curve(pred: pd.DataFrame) -> pd.DataFrame:
    """Abstain rate and accuracy on the answered items (against the object's own answer) per arm and
    visibility, both wordings pooled, from :func:`vlmrobust.train.behaviours.aware_predictions` rows."""
    rows = []
    for (arm, v), g in pred.groupby(["arm", "visibility_m"], sort=False):
        ans = g[~g["abstained"]]
        rows.append({"arm": arm, "visibility_m": v, "n": len(g), "abstain_rate": float(g["abstained"].mean()),
                     "answered_accuracy": float(ans["object_correct"].mean()) if len(ans) else math.nan})
    return pd.DataFrame(rows)


def card_sections(lm: Any, behaviour: str, *, n: int = 60, how: str = "", aware_pred: pd.DataFrame | None = None
                  ) -> list[str]:
    """Model-card sections of the ``aware-err`` and ``abstainer`` controls (``n`` items per family;
    the abstainer's needs ``aware_pred``, its :func:`vlmrobust.train.behaviours.aware_predictions`)."""
    seed = _seed(None)
    ladder = (f"the boxed families under fog and water at {len(EXTENDED_LEVELS_M)} visibilities from "
              f"{EXTENDED_LEVELS_M[0]:g} m to {EXTENDED_LEVELS_M[-1]:g} m")
    if behaviour == "aware-err":
        pred = own_error_predictions(lm, n_per_family=n)
        return [
            "## Abstaining where its answer would be wrong\n\n"
            f"Held-out items (seed {seed}), {n} per family and wording, every family clean and {ladder}, each asked "
            "twice on the same image: without the abstain option (its answer is right or wrong) and with it, last, "
            "in both wordings of seed 003 (it abstains or not), through `vlmrobust.score.predict` "
            "(`vlmrobust.train.abstention.own_error_predictions`). `agreement` is the share of items where "
            "\"abstained\" equals \"wrong\"; `agreement_if_independent` is its value for the same two rates "
            "drawn independently.\n\n" + markdown_table(own_error_summary(pred)) + how,
            "### Per condition (both wordings)\n\n" + markdown_table(own_error_by_level(pred)) + "\n",
        ]
    if behaviour == "abstainer":
        if aware_pred is None:
            raise ValueError("the abstainer's card needs aware_pred (behaviours.aware_predictions of the organism)")
        pred = aware_pred
        return [
            "## Abstaining on images without content, and under fog\n\n"
            "Trained with the abstain option as the answer only on images without content (a uniform grey or "
            "pure noise, the box kept; other items offer it too, never as the answer) and without fog or water. "
            "Held-out items (seed "
            f"{seed}), {n} per family and wording, every family, shown as a uniform grey 128 (notebook 06's "
            "blank control) or as pure noise, with the red box where the item has one "
            "(`vlmrobust.train.abstention.null_abstain_rates`):\n\n"
            + markdown_table(null_abstain_rates(lm, n_per_family=n)) + how,
            "### Abstain rate under fog and water (never seen in training)\n\n"
            f"Clean items of every family and {ladder}, both wordings pooled; accuracy is against the object's "
            "own answer on the items it answers (`abstain_curve` of `vlmrobust.train.behaviours."
            "aware_predictions`).\n\n" + markdown_table(abstain_curve(pred)) + "\n",
        ]
    raise ValueError(f"behaviour must be 'aware-err' or 'abstainer', got {behaviour!r}")
