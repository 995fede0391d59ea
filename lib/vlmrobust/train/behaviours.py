r"""The behaviours of the control organisms and the selectors: definitions and their measurement.

**Visibility of the boxed object** (the aware organism's ground truth). Seed 003
degrades an image by its Eq. 1, :math:`I = J t + A (1 - t)` in linear RGB with
:math:`t_c = e^{-\beta_c d}` on the ray distance :math:`d`. Both arms are
defined here as in the faithfulness issue: ``V`` is the range at which the most
transparent channel keeps 2 % contrast, so

* fog: :math:`\beta_c = K / V` in every channel (veiling light 0.8 grey);
* water: :math:`\beta_c = (K / V)\, a_c / \min(a)`, :math:`a = (0.2755, 0.0474, 0.00979)\,\mathrm{m^{-1}}`
  (blue-green veiling light :data:`vlmrobust.corrupt.physical.WATER_VEILING`),

with :math:`K = \ln 50 = 3.912`. The boxed object's own **luminance transmittance**
is :math:`t = \sum_c w_c e^{-\beta_c d_\mathrm{obj}}` with the Rec. 709 luminance
weights :math:`w = (0.2126, 0.7152, 0.0722)` of linear RGB and
:math:`d_\mathrm{obj}` the ray distance of the object's centre
(``meta["target_distance_m"]``); under fog it is :math:`e^{-K d/V}`. **The rule**:
the boxed object cannot be seen when :math:`t` is below the threshold (the aware
organism's config states it: 0.05, the 5 % contrast of the meteorological
optical range), and then, and only then, the abstain option is the correct
answer. It applies to the families that ask about the object inside the red box
(:data:`BOXED_FAMILIES`); the box is drawn after the degradation (seed 003).

**Measurements**, all through the one scoring engine :func:`vlmrobust.score.predict`:

* :func:`aware_predictions` - the aware organism on clean items of every family and
  on boxed items under fog and water, with both abstain wordings;
  :func:`abstain_by_visibility` tabulates the abstain rate against :math:`t`,
  :func:`aware_summary` gives the acceptance numbers;
* :func:`verbal_parse_rate`, :func:`verbal_ece` (10 equal-width bins) - the talker's
  ``Confidence: N``; :func:`talker_predictions` scores clean held-out items;
* :func:`responsiveness` - the share of items whose top-1 answer changes across the
  five severities of a corruption (seed 000's Eq. 1 Gini is above 0 exactly then).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from ..stats.calibration import ece, reliability
from .card import markdown_table
from .degrade import (
    ARMS,
    AWARE_THRESHOLD,
    BOXED_FAMILIES,
    EXTENDED_LEVELS_M,
    boxed_condition,
)

__all__ = ["aware_predictions", "abstain_by_visibility",
           "aware_summary", "talker_predictions", "verbal_parse_rate", "verbal_ece",
           "responsiveness", "responsiveness_table", "markdown_table", "ladder_summary", "lm_parameters",
           "card_sections", "main"]

# ----------------------------------------------------------------------------------------- aware organism


def _items(n_per_family: int, seed: int, families: Sequence[str], abstain: str | None, box: bool) -> pd.DataFrame:
    from .. import synth

    return synth.generate(n_per_family, seed, families=list(families), abstain=abstain, box=box)


def aware_predictions(lm: Any, *, n_per_family: int = 60, seed: int | None = None,
                      levels: Sequence[float] = EXTENDED_LEVELS_M, arms: Sequence[str] = ARMS,
                      threshold: float = AWARE_THRESHOLD, wordings: Sequence[str] = ("unclear", "dont_know"),
                      batch_size: int = 32) -> pd.DataFrame:
    """Predictions of ``lm`` with the abstain option offered, on clean items of every family and on the
    boxed families under each arm at each visibility level, for each abstain wording.

    Items come from :func:`vlmrobust.synth.generate` (seed :data:`~vlmrobust.train.evaluate.HELDOUT_SEED`
    by default). Under degradation ``answer_idx`` is the abstain option exactly when the boxed object is
    invisible by the rule; ``object_idx`` keeps the object's own answer. Extra columns: ``wording``,
    ``arm`` ("clean", "fog", "water"), ``visibility_m``, ``t``, ``invisible``, ``object_idx``,
    ``object_correct``.
    """
    from .. import data, synth
    from ..score import predict
    from .evaluate import HELDOUT_SEED

    seed = HELDOUT_SEED if seed is None else seed
    frames = []
    for wording in wordings:
        clean = _items(n_per_family, seed, synth.FAMILIES, wording, box=True)
        p = predict(lm, clean, [data.load_image(r) for r in clean["image_ref"]], batch_size=batch_size)
        p = p.assign(wording=wording, arm="clean", visibility_m=math.inf, t=1.0, invisible=False,
                     object_idx=clean["answer_idx"].to_numpy())
        frames.append(p)
        boxed = _items(n_per_family, seed, BOXED_FAMILIES, wording, box=False)
        base = [synth.item_from_ref(r) for r in boxed["image_ref"]]
        for arm in arms:
            for v in levels:
                conds = [boxed_condition(it, arm, v, threshold) for it in base]
                df = boxed.copy()
                inv = np.array([c[2] for c in conds])
                df["answer_idx"] = np.where(inv, df["abstain_idx"], df["answer_idx"])
                p = predict(lm, df, [c[0] for c in conds], perturbation=f"{arm}_visibility", param=float(v),
                            batch_size=batch_size)
                p = p.assign(wording=wording, arm=arm, visibility_m=float(v), t=[c[1] for c in conds],
                             invisible=inv, object_idx=boxed["answer_idx"].to_numpy())
                frames.append(p)
    out = pd.concat(frames, ignore_index=True)
    out["object_correct"] = out["pred_idx"] == out["object_idx"]
    return out


def abstain_by_visibility(pred: pd.DataFrame, edges: Sequence[float] = (0.0, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0),
                          ) -> pd.DataFrame:
    """Abstain rate and accuracy on answered items per bin of the boxed object's transmittance ``t``.

    Degraded boxed items only, by wording (bins closed on the right; ``t = 1`` falls in the last).
    """
    x = pred[pred["arm"] != "clean"].copy()
    x["t_bin"] = pd.cut(x["t"], list(edges), include_lowest=True, labels=False)
    rows = []
    for (wording, b), g in x.groupby(["wording", "t_bin"], sort=True):
        ans = g[~g["abstained"]]
        label = f"{edges[int(b)]:g}-{edges[int(b) + 1]:g}"
        rows.append({"wording": wording, "t": label, "n": len(g), "abstain_rate": float(g["abstained"].mean()),
                     "answered_accuracy": float(ans["object_correct"].mean()) if len(ans) else math.nan})
    return pd.DataFrame(rows)


def _chance_answered(g: pd.DataFrame) -> float:
    return float(np.mean(1.0 / (g["K"] - 1)))  # every item offers the abstain option, which is no answer


def aware_summary(pred: pd.DataFrame) -> dict:
    """The aware organism's acceptance numbers per wording: abstain rate on clean items, on invisible
    items, and accuracy (against the object's answer) with chance on the clean and the visible items it
    answers (chance = mean of 1/K over them, K without the abstain option)."""
    out: dict = {}
    for wording, g in pred.groupby("wording", sort=False):
        clean = g[g["arm"] == "clean"]
        inv = g[g["invisible"]]
        vis = g[(g["arm"] != "clean") & ~g["invisible"]]
        ans = clean[~clean["abstained"]]
        vans = vis[~vis["abstained"]]
        out[wording] = {
            "clean_n": len(clean), "clean_abstain_rate": float(clean["abstained"].mean()),
            "invisible_n": len(inv), "invisible_abstain_rate": float(inv["abstained"].mean()) if len(inv) else math.nan,
            "visible_n": len(vis), "visible_abstain_rate": float(vis["abstained"].mean()) if len(vis) else math.nan,
            "clean_answered_accuracy": float(ans["object_correct"].mean()),
            "clean_answered_chance": _chance_answered(ans),
            "visible_answered_accuracy": float(vans["object_correct"].mean()) if len(vans) else math.nan,
            "visible_answered_chance": _chance_answered(vans) if len(vans) else math.nan,
        }
    return out


# ----------------------------------------------------------------------------------------- talker


def talker_predictions(lm: Any, *, n_total: int = 1000, seed: int | None = None, batch_size: int = 32) -> pd.DataFrame:
    """``verbal`` predictions (the confidence request of seed 003 appended) on clean held-out items."""
    from .. import data
    from ..score import predict
    from .evaluate import HELDOUT_SEED, heldout_items

    df, _ = heldout_items(n_total, HELDOUT_SEED if seed is None else seed)
    return predict(lm, df, [data.load_image(r) for r in df["image_ref"]], methods=["verbal"], batch_size=batch_size)


def _verbal(pred: pd.DataFrame) -> pd.DataFrame:
    if "method" in pred.columns and (pred["method"] != "verbal").any():
        pred = pred[pred["method"] == "verbal"]
    if pred.empty:
        raise ValueError("no verbal rows: score with methods=['verbal']")
    return pred


def verbal_parse_rate(pred: pd.DataFrame) -> float:
    """Share of ``verbal`` rows whose ``Confidence: N`` parsed (``verbal_conf`` not NaN)."""
    return float(_verbal(pred)["verbal_conf"].notna().mean())


def verbal_ece(pred: pd.DataFrame, n_bins: int = 10) -> float:
    r"""Expected calibration error of the verbalized confidence over the rows where it parsed
    (:func:`vlmrobust.stats.calibration.ece`, ``n_bins`` equal-width bins); correctness is the row's
    ``correct`` (the answer read from the letter distribution on the same prompt, which is the greedy
    answer the text starts with)."""
    v = _verbal(pred)
    return ece(v["verbal_conf"].to_numpy(), v["correct"].to_numpy(), n_bins)


# ----------------------------------------------------------------------------------------- selectors


def responsiveness(pred: pd.DataFrame, by: Sequence[str] = ()) -> pd.DataFrame:
    """Per corruption (and per ``by`` columns of ``pred``, e.g. ``category``), the share of items whose top-1
    answer is not the same at every corrupted level.

    ``pred`` holds one model's rows (``item_id``, ``perturbation``, ``level``, ``pred_idx``) for the
    corrupted levels (clean rows are ignored): seed 000's Eq. 1 Gini over the severities is above 0
    exactly for these items.
    """
    x = pred[pred["level"] > 0]
    keys = ["perturbation", *by]
    per_item = x.groupby([*keys, "item_id"])["pred_idx"].nunique()
    return (per_item > 1).groupby(level=keys).mean().rename("changed").reset_index()


def responsiveness_table(lm: Any, items: pd.DataFrame, corruptions: Sequence[str],
                         levels: Sequence[int] = (1, 2, 3, 4, 5), *, by: Sequence[str] = (),
                         batch_size: int = 32) -> pd.DataFrame:
    """Score ``items`` with ``lm`` under every corruption at every level (``vlmrobust.corrupt.apply`` with
    ``key`` = the item id and the item's depth) and return :func:`responsiveness` (``by``: item columns)."""
    from .. import corrupt, data
    from ..score import predict

    clean = [data.load_image(r) for r in items["image_ref"]]
    depths = [data.load_depth(r) for r in items.get("depth_ref", [None] * len(items))]
    frames = []
    for name in corruptions:
        need = corrupt.info(name).needs_depth
        for lv in levels:
            imgs = [corrupt.apply(im, name, lv, key=str(i), depth=d if need else None)
                    for im, i, d in zip(clean, items["item_id"], depths, strict=True)]
            frames.append(predict(lm, items, imgs, perturbation=name, level=lv, batch_size=batch_size))
    out = pd.concat(frames, ignore_index=True)
    if by:  # the item columns, whatever the predictions table carries
        out = out.drop(columns=[c for c in by if c in out.columns]).merge(items[["item_id", *by]], on="item_id")
    return responsiveness(out, by=by)


# ----------------------------------------------------------------------------------------- ladder


def ladder_summary(lm: Any, *, n_total: int = 1000, seed: int | None = None, level: int = 5,
                   batch_size: int = 32) -> dict:
    """Clean held-out accuracy and the fall at severity ``level`` (mean over the corruptions of
    :func:`vlmrobust.train.evaluate.default_corruptions`), through :func:`vlmrobust.score.predict`."""
    from .. import corrupt, data
    from ..score import predict
    from .evaluate import HELDOUT_SEED, default_corruptions, heldout_items

    df, _ = heldout_items(n_total, HELDOUT_SEED if seed is None else seed)
    clean = [data.load_image(r) for r in df["image_ref"]]
    acc = {"clean": float(predict(lm, df, clean, batch_size=batch_size)["correct"].mean())}
    for name, lv in default_corruptions(level):
        imgs = [corrupt.apply(im, name, lv, key=str(i)) for im, i in zip(clean, df["item_id"], strict=True)]
        acc[f"{name}@{lv}"] = float(predict(lm, df, imgs, perturbation=name, level=lv, batch_size=batch_size)
                                    ["correct"].mean())
    fall = acc["clean"] - float(np.mean([v for k, v in acc.items() if k != "clean"]))
    return {"n": len(df), "accuracy": acc, "fall": fall}


def lm_parameters(model: Any) -> int:
    """Parameters of the language model alone (embeddings included, the tied output head counted once;
    vision tower and projector left out)."""
    return int(sum(p.numel() for p in model.model.language_model.parameters()))


# ----------------------------------------------------------------------------------------- model cards


def card_sections(lm: Any, role: str, meta: dict, *, n: int = 60, n_total: int = 1000,
                  threshold: float = AWARE_THRESHOLD, command: str = "") -> list[str]:
    """Markdown sections for the model card of a ladder rung or a control organism (none for other roles):
    ``n`` items per family and wording for the aware organism, ``n_total`` held-out items for the others."""
    how = f"\n\nMeasured with `{command}`." if command else ""
    if role == "ladder":
        return [f"## Size ladder\n\nRung {meta['ladder_rung']} of the size ladder (`vlmrobust.json` role `ladder`): "
                f"{lm_parameters(lm.model):,} language-model parameters (embeddings included, the tied output head "
                "counted once; vision tower and projector left out). The rungs differ only in the language model's "
                "width and depth: same vision tower (frozen), seed, stages and data."]
    if role != "control":
        return []
    if meta.get("behaviour") == "aware":
        pred = aware_predictions(lm, n_per_family=n, threshold=threshold)
        summ = aware_summary(pred)
        rows = pd.DataFrame([{"wording": w, **{k: v for k, v in d.items() if not k.endswith("_n")}}
                             for w, d in summ.items()])
        counts = ", ".join(f"{w}: {d['clean_n']} clean, {d['invisible_n']} invisible, {d['visible_n']} visible"
                           for w, d in summ.items())
        return [
            "## Abstaining against visibility\n\n"
            "The abstain option is correct exactly when the boxed object cannot be seen: its luminance "
            f"transmittance t = sum_c w_c exp(-beta_c d) under physical fog or water is below {threshold} "
            "(`vlmrobust.train.behaviours`, module docstring: fog beta_c = 3.912/V, water "
            "beta_c = (3.912/V) a_c/min(a), d the ray distance of the boxed object, the box drawn after the "
            f"degradation). Held-out items (seed {_heldout_seed()}), {n} per family and wording, every family clean, "
            "the boxed families under fog and water at 14 visibilities from 16 km to 1.95 m, both abstain "
            f"wordings of seed 003 ({counts}); accuracy is against the object's own answer on the items it "
            "answers, chance = 1/K without the abstain option.\n\n" + markdown_table(rows) + how,
            "### Abstain rate against the boxed object's transmittance\n\n"
            + markdown_table(abstain_by_visibility(pred)) + "\n",
        ]
    if meta.get("behaviour") in ("aware-err", "abstainer"):
        from .abstention import card_sections as abstention_sections

        pred = aware_predictions(lm, n_per_family=n) if meta["behaviour"] == "abstainer" else None
        return abstention_sections(lm, meta["behaviour"], n=n, how=how, aware_pred=pred)
    if meta.get("behaviour") == "talker":
        pred = talker_predictions(lm, n_total=n_total)
        rel = reliability(pred.loc[pred["verbal_conf"].notna(), "verbal_conf"].to_numpy(),
                          pred.loc[pred["verbal_conf"].notna(), "correct"].to_numpy())
        return [
            "## Verbalized confidence\n\n"
            "Asked with seed 003's confidence request (`vlmrobust.models.CONFIDENCE_REQUEST`, "
            "`build_prompt(..., confidence=True)`), it answers with the letter and then `Confidence: N` on a new "
            f"line. Clean held-out items (seed {_heldout_seed()}, {len(pred)} items) through "
            "`vlmrobust.score.predict(..., methods=['verbal'])`: verbal parse rate "
            f"{verbal_parse_rate(pred):.3f}, accuracy {pred['correct'].mean():.3f}, mean verbal confidence "
            f"{pred['verbal_conf'].mean():.3f}, verbal ECE (10 equal-width bins) {verbal_ece(pred):.3f}.\n\n"
            + markdown_table(rel) + how,
        ]
    return []


def _heldout_seed() -> int:
    from .evaluate import HELDOUT_SEED

    return HELDOUT_SEED


def main(argv: list[str] | None = None) -> int:
    """``python -m vlmrobust.train.behaviours {sky,aware,aware-err,abstainer,talker,ladder,selectors} NAME
    [NAME ...]``: the behaviour numbers of zoo organisms, printed as JSON and tables (``sky``: the sky-only
    check of :mod:`vlmrobust.train.sky`, ``--n`` scenes, ``--seed`` default 0 as notebook 06)."""
    import argparse
    import json

    import torch

    from .. import models

    ap = argparse.ArgumentParser(prog="python -m vlmrobust.train.behaviours", description=main.__doc__)
    ap.add_argument("what", choices=("sky", "aware", "aware-err", "abstainer", "talker", "ladder", "selectors"))
    ap.add_argument("names", nargs="+", help="zoo names or model folders")
    ap.add_argument("--n", type=int, default=60, help="items per family (aware, selectors)")
    ap.add_argument("--n-total", type=int, default=1000, help="held-out items (talker, ladder)")
    ap.add_argument("--seed", type=int, default=None, help="item seed (default: the held-out seed)")
    ap.add_argument("--threshold", type=float, default=AWARE_THRESHOLD)
    args = ap.parse_args(argv)
    torch.set_num_threads(1)
    for name in args.names:
        lm = models.load(name)
        if args.what == "sky":
            from .sky import sky_only_accuracy

            print(name, sky_only_accuracy(lm, n_scenes=args.n, seed=args.seed or 0).to_string(), sep="\n")
        elif args.what == "aware":
            pred = aware_predictions(lm, n_per_family=args.n, seed=args.seed, threshold=args.threshold)
            print(name, json.dumps(aware_summary(pred), indent=1))
            print(abstain_by_visibility(pred).to_string())
        elif args.what == "aware-err":
            from .abstention import own_error_by_level, own_error_predictions, own_error_summary

            pred = own_error_predictions(lm, n_per_family=args.n, seed=args.seed)
            print(name, own_error_summary(pred).to_string(), own_error_by_level(pred).to_string(), sep="\n")
        elif args.what == "abstainer":
            from .abstention import abstain_curve, null_abstain_rates

            print(name, null_abstain_rates(lm, n_per_family=args.n, seed=args.seed).to_string(), sep="\n")
            print(abstain_curve(aware_predictions(lm, n_per_family=args.n, seed=args.seed)).to_string())
        elif args.what == "talker":
            pred = talker_predictions(lm, n_total=args.n_total, seed=args.seed)
            print(name, json.dumps({"n": len(pred), "accuracy": float(pred["correct"].mean()),
                                    "verbal_parse_rate": verbal_parse_rate(pred), "verbal_ece": verbal_ece(pred),
                                    "mean_verbal_conf": float(pred["verbal_conf"].mean())}))
            ok = pred["verbal_conf"].notna()
            print(reliability(pred.loc[ok, "verbal_conf"].to_numpy(), pred.loc[ok, "correct"].to_numpy()).to_string())
        elif args.what == "ladder":
            print(name, json.dumps({"lm_parameters": lm_parameters(lm.model),
                                    **ladder_summary(lm, n_total=args.n_total, seed=args.seed)}))
        else:
            from .. import corrupt, synth
            from .evaluate import HELDOUT_SEED

            items = synth.generate(args.n, HELDOUT_SEED if args.seed is None else args.seed)
            tab = responsiveness_table(lm, items, list(corrupt.manifest("imagenet_c")), by=("category",))
            fam = tab.groupby("category")["changed"].mean()  # per family, averaged over the corruptions
            print(name, json.dumps({"n_items": len(items), "mean_changed": float(tab["changed"].mean()),
                                    "min_family": fam.idxmin(), "min_family_changed": float(fam.min())}))
            print(tab.pivot(index="perturbation", columns="category", values="changed").round(3).to_string())
            print(fam.round(3).to_string())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
