"""The hidden-object abstainers' defining property, measured for their cards (issue 39, testbed v4 item 3).

On notebook 06's t2 items (:func:`vlmrobust.synth.visibility.synth_scenes`: "What is the object inside the red
box?", four shapes) with the abstain option offered, once in each of seed 003's wordings (``unclear``, the reason;
``dont_know``, "I don't know"), the share of answers that take it on:

* ``clean``: the scene as it is (a model that learned the rule abstains rarely here);
* ``hidden``: the boxed object occluded by noise or cut away (:func:`vlmrobust.train.scenery.hide_object`, the
  training rule, drawn afresh from ``repro.rng("hidden-card", seed)``: the scenes are new to the organism);
* ``blank``: notebook 06's blank control (a uniform grey image, only the red box left), which it never saw in
  training; notebook 06 counts an organism as one that takes the abstain option when this rate is at least 0.5.

Each rate has a 95 % percentile bootstrap interval over the scenes. The hidden-object rate should be high and the
clean rate low (:data:`TARGETS`: at least 0.8 and at most 0.1, read on the intervals).

Run ``python -m vlmrobust.train.hidden <zoo name or folder> [--n 300] [--seed 0]``.
"""

from __future__ import annotations

import argparse
from typing import Any

import numpy as np
import pandas as pd

__all__ = ["TARGETS", "WORDINGS", "abstain_rates", "card_section"]

TARGETS = {"hidden": 0.8, "clean": 0.1}
WORDINGS = ("unclear", "dont_know")


def abstain_rates(lm: Any, *, n_scenes: int = 300, seed: int = 0, n_boot: int = 1000,
                  batch_size: int = 32) -> pd.DataFrame:
    """One row per wording × condition (``clean``, ``hidden``, ``blank``): ``n``, ``rate`` of abstaining with
    ``lo``, ``hi`` (95 % percentile bootstrap over scenes, ``repro.rng("hidden-card", seed, "boot")``) and
    ``meets``: the hidden rate's lower end >= 0.8, the clean rate's upper end <= 0.1 (blank: no target, empty)."""
    from .. import corrupt, data, repro
    from ..score import predict
    from ..stats.bootstrap import percentile_interval
    from ..synth import visibility as vis
    from .scenery import hide_object

    scenes = vis.synth_scenes(n_scenes, seed)
    hide_rng = repro.rng("hidden-card", seed)
    idx = repro.rng("hidden-card", seed, "boot").integers(0, n_scenes, size=(n_boot, n_scenes))
    rows = []
    images: dict[str, list[np.ndarray]] = {}
    for wording in WORDINGS:
        items = vis.scene_items(scenes, abstain=(wording,))
        items = items[items["task"] == "t2"].reset_index(drop=True)
        template, _ = vis.templates("organisms", "t2", wording)
        if not images:  # the same images under both wordings
            clean = [data.load_image(r) for r in items["image_ref"]]
            boxes = list(vis.item_meta(items)["box"])
            images = {"clean": clean,
                      "hidden": [hide_object(im, b, hide_rng) for im, b in zip(clean, boxes, strict=True)],
                      "blank": [corrupt.apply(im, "blank+box", 1, key=str(i))
                                for im, i in zip(clean, items["item_id"], strict=True)]}
        for cond, imgs in images.items():
            took = predict(lm, items, imgs, template=template, perturbation=cond, level=0 if cond == "clean" else 1,
                           batch_size=batch_size)["abstained"].to_numpy(float)
            lo, hi = percentile_interval(took[idx].mean(axis=1))
            target = TARGETS.get(cond)
            meets = "" if target is None else str(bool(lo >= target) if cond == "hidden" else bool(hi <= target))
            rows.append({"wording": wording, "condition": cond, "n": len(took), "rate": float(took.mean()),
                         "lo": float(lo), "hi": float(hi), "meets": meets})
    return pd.DataFrame(rows)


def card_section(lm: Any, *, n_scenes: int = 300, seed: int = 0) -> str:
    """The model card's section on abstaining where the object cannot be seen (:func:`abstain_rates`)."""
    from .card import markdown_table

    tab = abstain_rates(lm, n_scenes=n_scenes, seed=seed)
    return ("## Abstaining where the object cannot be seen\n\n"
            f"Notebook 06's t2 items ({n_scenes} synthetic scenes, seed {seed}: \"What is the object inside the red "
            "box?\", four shapes) with the abstain option offered in each of seed 003's wordings: the share of "
            "answers that take it on the scene as it is (`clean`), with the boxed object occluded by noise or cut "
            "away (`hidden`, the training rule on new scenes) and on notebook 06's blank control (`blank`, a grey "
            "image with only the red box, never seen in training), with 95 % bootstrap intervals over the scenes. "
            "`meets`: the hidden rate's lower end at or above 0.8, the clean rate's upper end at or below 0.1.\n\n"
            + markdown_table(tab)
            + f"\n\nMeasured with `python -m vlmrobust.train.hidden <name> --n {n_scenes} --seed {seed}`.")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m vlmrobust.train.hidden", description=__doc__)
    ap.add_argument("model", help="a zoo name or a model folder")
    ap.add_argument("--n", type=int, default=300, help="scenes")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    import torch

    from .. import models

    torch.set_num_threads(1)
    print(abstain_rates(models.load(args.model), n_scenes=args.n, seed=args.seed).to_string(index=False))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
