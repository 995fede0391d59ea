"""Notebook 06's parameters, checked in one call: :class:`Params` (``P = visibility.Params.resolve(globals())``).

The shared sweep parameters come from :func:`vlmrobust.sweep.sweep_rules` (``models`` defaulting to the evaluated
and control organisms); the rest are the scenes' source (``synth`` or ``coco``, the COCO files), the questions'
wording, the signals' readings (internal confidence, abstain mid-level), the visibility range, the depth of the
arms and its provider, the verbal sweep and the sizes of Table VI, the bootstrap and Table VII. The cross-checks
of the source and the depth provider sit with the later parameter of each pair: ``coco_images`` (the COCO files
that ``items_source = "coco"`` needs), ``depth_provider`` (real images have no exact depth) and ``depth_model``
(the ``pipeline`` provider needs one). A bad value raises :class:`~vlmrobust.params.ParameterError` naming it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ... import depth, params, sweep
from ...params import ParameterError, one
from ...synth import visibility as scenes
from .blind_spot import ABSTAIN_MIDS
from .readouts import INTERNAL

__all__ = ["Params"]


def _coco_annotations(name: str, value: Any, checked: Mapping[str, Any]) -> Any:
    return value  # checked with coco_images, below


def _coco_images(name: str, value: Any, checked: Mapping[str, Any]) -> Any:
    if checked["items_source"] == "coco" and not (checked["coco_annotations"] and value):
        raise ParameterError("items_source 'coco' needs parameters 'coco_annotations' (instances JSON) and "
                             f"{name!r} (the image folder)")
    return value


def _depth_provider(name: str, value: Any, checked: Mapping[str, Any]) -> str:
    value = params.check(name, value, str, choices=list(depth.PROVIDERS))
    if checked["items_source"] == "coco" and value == "exact":
        raise ParameterError(f"real images have no exact depth: set {name} to 'pipeline' or 'plane'")
    return value


def _depth_model(name: str, value: Any, checked: Mapping[str, Any]) -> Any:
    if checked["depth_provider"] == "pipeline" and not value:
        raise ParameterError(f"depth_provider 'pipeline' needs parameter {name!r} (a metric depth model)")
    return value


class Params(params.Params):
    """Notebook 06's parameters (its parameters cell documents each one)."""

    RULES = {
        **sweep.sweep_rules("models", models_default=("evaluated", "control")),
        "items_source": one(str, choices=["synth", "coco"]),
        "coco_annotations": _coco_annotations,
        "coco_images": _coco_images,
        "n_scenes": one(int, lo=2, hi=100_000),
        **sweep.sweep_rules("image_size"),
        "t2_question": one(str, choices=list(scenes.QUESTIONS)),
        **sweep.sweep_rules("seed"),
        "wording": one(str, choices=list(scenes.WORDINGS)),
        "internal": one(str, choices=list(INTERNAL)),
        "abstain_mid": one(str, choices=list(ABSTAIN_MIDS)),
        "visibility_range": one(str, choices=["paper", "extended"]),
        "sky_depth_m": one(float, lo=0.0),
        "sky_only": one(bool),
        "depth_provider": _depth_provider,
        "depth_model": _depth_model,
        "depth_fov_deg": one(float, lo=1.0, hi=179.0),
        "plane_m": one(float, lo=0.0, lo_open=True),
        "verbal": one(str, choices=["auto", "all", "none"]),
        "table6_scenes": one(int, lo=0),
        "n_boot": one(int, lo=0, hi=100_000),
        "min_gap": one(float, lo=0.0, hi=1.0),
        "murky_m": one(float, lo=0.0, lo_open=True),
        "n_fog_scenes": one(int, lo=0),
        **sweep.sweep_rules("batch_size", "torch_threads", "executor", "dask_workers", "dask_scheduler"),
        "progress": one(bool),
    }
