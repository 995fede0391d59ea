"""The sky-only check every evaluated and control organism's card reports.

An organism trained on one blue sky reads a grey or white sky as a cue: with only the
sky veiled (notebook 06's sky-only control, every other pixel unchanged) its
identification accuracy falls to chance, so its visibility curves measure the sky
and not the object; training varies the sky against it
(:func:`vlmrobust.train.scenery.vary_sky`). :func:`sky_only_accuracy` measures what the
done-when of the testbed asks: accuracy
on notebook 06's t2 items (:func:`vlmrobust.synth.visibility.synth_scenes`, the
organisms' template, no abstain option) clean and under the two sky-only controls
(``sky_only_fog+box``, ``sky_only_water+box``), with the paired difference and its
95 % bootstrap interval over the scenes.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

__all__ = ["sky_only_accuracy", "t2_correct", "paired_drops", "SKY_CONDITIONS", "card_section"]

SKY_CONDITIONS = ("sky_only_fog+box", "sky_only_water+box")


def t2_correct(lm: Any, conditions: Sequence[tuple[str, int]], *, n_scenes: int = 300, seed: int = 0,
               batch_size: int = 32) -> tuple[pd.DataFrame, dict[tuple[str, int], np.ndarray]]:
    """Notebook 06's t2 items (:func:`vlmrobust.synth.visibility.synth_scenes`, the organisms' template, no abstain
    option) and the 0/1 correctness of ``lm`` on them clean (key ``("clean", 0)``) and under each ``(perturbation,
    level)`` of ``conditions`` (the red box redrawn after the degradation for ``+box`` names)."""
    from .. import corrupt, data
    from ..score import predict
    from ..synth import visibility as vis

    scenes = vis.synth_scenes(n_scenes, seed)
    items = vis.scene_items(scenes, abstain=("none",))
    items = items[items["task"] == "t2"].reset_index(drop=True)
    template, _ = vis.templates("organisms", "t2", "none")
    clean = [data.load_image(r) for r in items["image_ref"]]
    depths = [data.load_depth(r) for r in items["depth_ref"]]
    right = {("clean", 0): predict(lm, items, clean, template=template, batch_size=batch_size)["correct"]
             .to_numpy(float)}
    for name, level in conditions:
        imgs = [corrupt.apply(im, name, level, key=str(i), depth=d)
                for im, i, d in zip(clean, items["item_id"], depths, strict=True)]
        right[(name, level)] = predict(lm, items, imgs, template=template, perturbation=name, level=level,
                                       batch_size=batch_size)["correct"].to_numpy(float)
    return items, right


def paired_drops(right: dict[tuple[str, int], np.ndarray], rng: np.random.Generator, n_boot: int = 1000
                 ) -> pd.DataFrame:
    """Accuracy per condition of :func:`t2_correct` and ``diff``, its paired difference from clean, with a 95 %
    percentile bootstrap interval over the scenes (``diff_lo``, ``diff_hi``; ``n_boot`` resamples from ``rng``)."""
    from ..stats.bootstrap import percentile_interval

    base = right[("clean", 0)]
    idx = rng.integers(0, len(base), size=(n_boot, len(base)))
    rows = []
    for (name, level), r in right.items():
        d = r - base
        lo, hi = percentile_interval(d[idx].mean(axis=1)) if name != "clean" else (0.0, 0.0)
        rows.append({"condition": name.removesuffix("+box"), "level": level, "n": len(r),
                     "accuracy": float(r.mean()), "diff": float(d.mean()), "diff_lo": float(lo), "diff_hi": float(hi)})
    return pd.DataFrame(rows)


def sky_only_accuracy(lm: Any, *, n_scenes: int = 300, seed: int = 0, n_boot: int = 1000,
                      batch_size: int = 32) -> pd.DataFrame:
    """Accuracy on notebook 06's t2 items clean and under each sky-only control; ``diff`` is the paired
    difference from clean with its 95 % interval (``diff_lo``, ``diff_hi``: percentile bootstrap over
    scenes, ``n_boot`` resamples from ``repro.rng("sky-only", seed)``)."""
    from .. import repro

    _, right = t2_correct(lm, [(name, 1) for name in SKY_CONDITIONS], n_scenes=n_scenes, seed=seed,
                          batch_size=batch_size)
    return paired_drops(right, repro.rng("sky-only", seed), n_boot).drop(columns="level")


def card_section(lm: Any, *, n_scenes: int = 300, seed: int = 0) -> str:
    """The model card's sky-only section (:func:`sky_only_accuracy`)."""
    from .card import markdown_table

    tab = sky_only_accuracy(lm, n_scenes=n_scenes, seed=seed)
    return ("## The sky-only check\n\n"
            f"Notebook 06's t2 items ({n_scenes} synthetic scenes, seed {seed}: \"What is the object inside the red "
            "box?\", four shapes), clean and with only the sky (infinite depth) replaced by the fog's or the water's "
            "veiling light, every other pixel unchanged (`sky_only_fog+box`, `sky_only_water+box`). `diff` is the "
            "paired difference from clean with its 95 % bootstrap interval over the scenes; a model that reads the "
            "object, not the sky, keeps it near 0.\n\n" + markdown_table(tab)
            + f"\n\nMeasured with `python -m vlmrobust.train.behaviours sky <name> --n {n_scenes} --seed {seed}`.")
