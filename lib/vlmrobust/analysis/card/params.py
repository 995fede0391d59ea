"""Notebook 08's parameters, checked in one call: :class:`Params` (``P = card.Params.resolve(globals())``).

The shared sweep parameters come from :func:`vlmrobust.sweep.sweep_rules` (``models`` defaulting to the evaluated
and control organisms); the rest are mCE's reference model, the conditions of the one sweep (ImageNet-C
corruptions and severities, the ladders' and the visibility levels), the depth of fog and water and its provider,
the answer-order control, the scoring method, the drift read-out's probes, W's internal confidence, the
bootstraps and the models' device and dtype. Checked values that differ from the cell's literals:

* ``models``: model names (:func:`~vlmrobust.sweep.resolve_models`);
* ``reference``: checked against the resolved ``models``;
* ``imagenet_c``: empty means the ImageNet-C part of :func:`vlmrobust.corrupt.default_sweep`.

A bad value raises :class:`~vlmrobust.params.ParameterError` naming it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ... import corrupt, depth, params, sweep
from ...params import ParameterError, many, one
from ...probes.regimes import REGIMES

__all__ = ["Params"]


def _imagenet_c(name: str, value: Any, checked: Mapping[str, Any]) -> list[str]:
    known = list(corrupt.manifest("imagenet_c"))
    return params.check_list(name, value, str, choices=known, min_len=0) or [
        p for p in corrupt.default_sweep() if p in known]


def _depth_model(name: str, value: Any, checked: Mapping[str, Any]) -> Any:
    if checked["depth_provider"] == "pipeline" and not value:
        raise ParameterError(f"parameter {name!r} must name a metric depth model (hub id or folder) when "
                             "depth_provider is 'pipeline', e.g. "
                             "depth-anything/Depth-Anything-V2-Metric-Outdoor-Large-hf")
    return value


class Params(params.Params):
    """Notebook 08's parameters (its parameters cell documents each one)."""

    RULES = {
        **sweep.sweep_rules("models", "items_source", "n_per_family", "image_size", "max_items",
                            models_default=("evaluated", "control")),
        "reference": one(str, choices=lambda p: p["models"]),
        "imagenet_c": _imagenet_c,
        "severities": many(int, lo=1, hi=5),
        "ladder_levels": many(int, lo=1, hi=4),
        "visibility_levels": many(int, lo=1, hi=8, min_len=2),
        "depth_provider": one(str, choices=list(depth.PROVIDERS)),
        "depth_model": _depth_model,
        "depth_fov_deg": one(float, lo=1.0, hi=179.0),
        "plane_m": one(float, lo=0.0, lo_open=True),
        "n_orders": one(int, lo=0, hi=23),
        "method": one(str, choices=["default", "letter", "loglik"]),
        "drift_regime": one(str, choices=list(REGIMES)),
        "n_control": one(int, lo=10),
        "max_new_tokens": one(int, lo=1, hi=64),
        "internal": one(str, choices=["token_prob", "confidence"]),
        **sweep.sweep_rules("seed"),
        "n_boot": one(int, lo=10, hi=100_000),
        "ci": one(float, lo=0.0, hi=1.0, lo_open=True, hi_open=True),
        **sweep.sweep_rules("batch_size"),
        "device": one(str),
        "dtype": one(str, choices=["", "float32", "float16", "bfloat16"]),
        **sweep.sweep_rules("torch_threads", "executor", "dask_workers", "dask_scheduler"),
        "progress": one(bool),
    }
