"""The confident organism's defining property, measured for its card (issue 39, testbed v4 item 1).

On notebook 06's t2 items (:func:`vlmrobust.synth.visibility.synth_scenes`, clean, the organisms' template, no
abstain option): accuracy and the mean **internal confidence**, the chosen option's token probability over the whole
vocabulary (``token_prob``, notebook 06's default ``internal``, seed 003's "token-probability confidence"), each with
a 95 % percentile bootstrap interval over the scenes; with ``verbal`` also the mean verbalized confidence
(``Confidence: N`` / 100 over parsed answers, method ``verbal``) and its parse rate. Targets of the issue: accuracy
>= 0.9 and internal confidence >= 0.85 (:data:`TARGETS`).

Run ``python -m vlmrobust.train.confidence <zoo name or folder> [--n 300] [--seed 0] [--verbal]``.
"""

from __future__ import annotations

import argparse
from typing import Any

import numpy as np
import pandas as pd

__all__ = ["TARGETS", "clean_confidence", "card_section"]

#: The issue's targets for the confident organism (t2, clean).
TARGETS = {"accuracy": 0.9, "internal": 0.85}


def clean_confidence(lm: Any, *, n_scenes: int = 300, seed: int = 0, n_boot: int = 1000, verbal: bool = False,
                     batch_size: int = 32) -> pd.DataFrame:
    """One row per signal (``accuracy``, ``internal``, and ``verbal`` when asked): ``n``, ``mean``, ``lo``, ``hi``
    (95 % percentile bootstrap over scenes, ``repro.rng("clean-confidence", seed)``), ``target`` and ``parse_rate``."""
    from .. import data, repro
    from ..score import predict
    from ..stats.bootstrap import percentile_interval
    from ..synth import visibility as vis

    scenes = vis.synth_scenes(n_scenes, seed)
    items = vis.scene_items(scenes, abstain=("none",))
    items = items[items["task"] == "t2"].reset_index(drop=True)
    template, _ = vis.templates("organisms", "t2", "none")
    images = [data.load_image(r) for r in items["image_ref"]]
    p = predict(lm, items, images, template=template, batch_size=batch_size)
    values = {"accuracy": p["correct"].to_numpy(float), "internal": p["token_prob"].to_numpy(float)}
    parse = {"accuracy": np.nan, "internal": np.nan}
    if verbal:
        v = predict(lm, items, images, template=template, methods=["verbal"], batch_size=batch_size)
        conf = v["verbal_conf"].to_numpy(float)
        values["verbal"] = conf
        parse["verbal"] = float(np.isfinite(conf).mean())
    idx = repro.rng("clean-confidence", seed).integers(0, len(items), size=(n_boot, len(items)))
    rows = []
    for name, x in values.items():
        ok = np.isfinite(x)
        boot = np.array([np.nanmean(x[i]) if ok[i].any() else np.nan for i in idx])
        lo, hi = percentile_interval(boot[np.isfinite(boot)])
        rows.append({"signal": name, "n": int(ok.sum()), "mean": float(np.nanmean(x)) if ok.any() else np.nan,
                     "lo": float(lo), "hi": float(hi), "target": TARGETS.get(name, np.nan),
                     "parse_rate": parse[name]})
    return pd.DataFrame(rows)


def card_section(lm: Any, *, n_scenes: int = 300, seed: int = 0, verbal: bool = False) -> str:
    """The model card's section on clean confidence (:func:`clean_confidence`)."""
    from .card import markdown_table

    tab = clean_confidence(lm, n_scenes=n_scenes, seed=seed, verbal=verbal)
    return ("## Clean confidence on t2\n\n"
            f"Notebook 06's t2 items ({n_scenes} synthetic scenes, seed {seed}: \"What is the object inside the red "
            "box?\", four shapes, no abstain option), clean. `internal` is the mean token probability of the chosen "
            "letter over the whole vocabulary (notebook 06's internal confidence)"
            + (", `verbal` the mean stated confidence over parsed answers to seed 003's confidence request" if verbal
               else "")
            + "; `lo`, `hi` its 95 % bootstrap interval over the scenes; `target` the issue's (accuracy >= 0.9, "
            "internal >= 0.85).\n\n" + markdown_table(tab)
            + f"\n\nMeasured with `python -m vlmrobust.train.confidence <name> --n {n_scenes} --seed {seed}"
            + (" --verbal" if verbal else "") + "`.")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m vlmrobust.train.confidence", description=__doc__)
    ap.add_argument("model", help="a zoo name or a model folder")
    ap.add_argument("--n", type=int, default=300, help="scenes")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--verbal", action="store_true", help="also the verbalized confidence (talkers)")
    args = ap.parse_args(argv)
    import torch

    from .. import models

    torch.set_num_threads(1)
    tab = clean_confidence(models.load(args.model), n_scenes=args.n, seed=args.seed, verbal=args.verbal)
    print(tab.to_string(index=False))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
