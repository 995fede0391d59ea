r"""The BRUCE ladders as a sweep runs them: their readings and the mean fill of the items' own images (seed 001, §III).

Seed 001 §III: "low-contrast perturbations employed contrast factors :math:`c \in \{0.30,0.50,0.70,0.90\}`
[...] and center-crop perturbations removed increasing fractions of image content using crop ratios
:math:`p \in \{0.2,0.4,0.6,0.8\}`". Two words are open and read here as written:

* a **contrast factor** is the share of contrast kept (Pillow's ``ImageEnhance.Contrast`` and
  torchvision's ``adjust_contrast`` call it so): the ladder keeps 0.9, 0.7, 0.5, 0.3 (``contrast="kept"``,
  the default); ``"removed"`` keeps 0.7, 0.5, 0.3, 0.1;
* "fractions of image **content**" is a share of the area: the crop keeps the central :math:`\sqrt{1-p}`
  of each side (``crop="area"``, the default); ``"side"`` removes :math:`p` of each side (36–96 % of the
  area).

The traversals' **mean fill** is the mean colour of the items' own clean images
(:func:`items_mean_colour`), not a constant: a real dataset's mean is not the synthetic benchmark's.
:func:`ladder_corrupt` is the corruption function a sweep uses for the conditions that differ from the
registry's defaults; :func:`escalation_predictions` routes each condition to the registry path or to it.
The operators themselves are :mod:`vlmrobust.corrupt.escalation`'s.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pandas as pd

from ... import corrupt, data, sweep
from ...corrupt import escalation as esc

__all__ = ["ladder_param", "ladder_corrupt", "items_mean_colour", "escalation_predictions", "needs_options",
           "rung_images"]


def ladder_param(name: str, level: int, contrast: str = "kept", crop: str = "area") -> float:
    """The physical parameter of a condition under the readings: the contrast factor kept (0.9 .. 0.3) or
    removed (0.3 .. 0.9), the crop ratio p (the same numbers under both crop readings), else the registry's
    (NaN for clean)."""
    esc.check_reading(crop, esc.CROP_READINGS, "crop")
    if name == "bruce_contrast" and level > 0:
        kept = esc.check_reading(contrast, esc.CONTRAST_READINGS, "contrast") == "kept"
        return (esc.CONTRAST_KEPT if kept else esc.CONTRAST_REMOVED)[level - 1]
    return float("nan") if name == "clean" else float(corrupt.info(name).param(level))


def ladder_corrupt(contrast: str = "kept", crop: str = "area", mean_rgb=esc.SYNTH_MEAN_RGB, depth_of=None):
    """A ``corrupt_fn`` for :func:`vlmrobust.sweep.predictions`: the ladders under the given readings, every
    ``"mean"`` band filled with ``mean_rgb``; other names go through :func:`vlmrobust.corrupt.apply`.

    ``depth_of(item_id)`` gives a depth map where a condition needs one (a sweep with a ``corrupt_fn``
    loads none). The readings and the colour form its ``version``, so they enter the shard keys; its
    ``param(name, level)`` is :func:`ladder_param` under the same readings.
    """
    esc.check_reading(contrast, esc.CONTRAST_READINGS, "contrast")
    esc.check_reading(crop, esc.CROP_READINGS, "crop")
    rgb = tuple(int(v) for v in mean_rgb)
    if len(rgb) != 3 or not all(0 <= v <= 255 for v in rgb):
        raise ValueError(f"mean_rgb must be three values in 0..255, got {mean_rgb!r}")

    def fn(image, name, level, *, seed=0, key="", depth=None, backend="native"):
        meta = corrupt.info(name)
        opts = {"bruce_contrast": {"reading": contrast}, "bruce_center_crop": {"reading": crop}}.get(name, {})
        if "rgb" in meta.options:
            opts = {"rgb": rgb}
        if depth is None and depth_of is not None and level and meta.needs_depth:
            depth = depth_of(key)
        return corrupt.apply(image, name, level, seed=seed, key=key, depth=depth, backend=backend, **opts)

    fn.__qualname__ = fn.__name__ = "ladder_corrupt"
    fn.version = f"contrast={contrast};crop={crop};mean={rgb[0]},{rgb[1]},{rgb[2]}"
    fn.param = lambda name, level: ladder_param(name, level, contrast, crop)
    return fn


def items_mean_colour(items: pd.DataFrame) -> tuple[int, int, int]:
    """The mean RGB over every pixel of the items' clean images (``image_ref``), rounded."""
    return esc.dataset_mean_colour(data.load_image(r) for r in items["image_ref"])


def needs_options(name: str, contrast: str = "kept", crop: str = "area", mean_rgb=esc.SYNTH_MEAN_RGB) -> bool:
    """Whether a condition differs from the registry's default (a non-default reading, or a mean fill of
    another colour than :data:`~vlmrobust.corrupt.escalation.SYNTH_MEAN_RGB`)."""
    if name == "bruce_contrast":
        return contrast != "kept"
    if name == "bruce_center_crop":
        return crop != "area"
    return "rgb" in corrupt.info(name).options and tuple(mean_rgb) != tuple(esc.SYNTH_MEAN_RGB)


def escalation_predictions(models: Sequence[str], items: pd.DataFrame, conditions: Mapping[str, Sequence[int]], *,
                           contrast: str = "kept", crop: str = "area", mean_rgb=esc.SYNTH_MEAN_RGB,
                           **sweep_kw) -> sweep.SweepResult:
    """:func:`vlmrobust.sweep.predictions` for notebook 07: the conditions the registry runs as they are go
    through it; the others (:func:`needs_options`) through :func:`ladder_corrupt` in a second sweep (its
    shard keys carry the readings and the colour). One result: both sweeps' shards and rows."""
    opt = {k: v for k, v in conditions.items() if needs_options(k, contrast, crop, mean_rgb)}
    plain = {k: v for k, v in conditions.items() if k not in opt}
    first = sweep.predictions(models, items, plain, **sweep_kw)
    if not opt:
        return first
    depths = dict(zip(items["item_id"].astype(str), items.get("depth_ref", pd.Series([None] * len(items))),
                      strict=True))
    fn = ladder_corrupt(contrast, crop, mean_rgb, depth_of=lambda key: data.load_depth(depths.get(key)))
    second = sweep.predictions(models, items, opt, corrupt_fn=fn, param_fn=fn.param, include_clean=False,
                               **sweep_kw)
    return sweep.SweepResult(shards=pd.concat([first.shards, second.shards], ignore_index=True),
                             table=pd.concat([first.table, second.table], ignore_index=True),
                             seconds=first.seconds + second.seconds, out_dir=first.out_dir)


def rung_images(image, ladders: Sequence[str], levels: Sequence[int], contrast: str = "kept",
                crop: str = "area") -> dict[str, list]:
    """``{ladder label: [(rung label, image), ...]}``: ``image`` at every level of each ladder under the
    readings, each rung labelled with its parameter (what :func:`~.figures.ladder_rungs` draws)."""
    fn = ladder_corrupt(contrast, crop)
    unit = {"bruce_contrast": f"c {contrast}", "bruce_center_crop": f"p ({crop})"}
    out = {}
    for name in ladders:
        lab = unit.get(name, corrupt.info(name).param_name)
        out[f"{name.removeprefix('bruce_')}\n{lab}"] = [(f"{fn.param(name, lv):g}", fn(image, name, lv))
                                                        for lv in levels]
    return out
