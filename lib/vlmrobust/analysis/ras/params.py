"""Notebook 04's parameters, checked in one call: :class:`Params` (``P = ras.Params.resolve(globals())``).

The shared sweep parameters come from :func:`vlmrobust.sweep.sweep_rules`; the rest are where the predictions
come from, the corruptions and severities, the scoring method, the intervals, the tolerances of Tables II and
IV, and the simulation's size (seed 000, §V–VII). An empty ``perturbations`` is read as its default (the
ImageNet-C part of :func:`vlmrobust.corrupt.default_sweep`). A bad value raises
:class:`~vlmrobust.params.ParameterError` naming it.

``models`` and ``items_source`` are checked last, as before: with ``predictions_from = "simulate"`` the models
are ``sim_models`` simulated ones (``sim-a``, ``sim-b``, ...) and the item source is not read, so it is left
as given; ``models`` reads ``sim_models``, which the cell lists below it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ... import corrupt, params, sweep
from ...params import ParameterError, one

__all__ = ["METHODS", "Params"]

#: The scoring methods a run may ask for (``default``: each model's own).
METHODS = ["default", "letter", "loglik", "loglik_norm"]

_SWEEP = sweep.sweep_rules("models", "items_source", models_default="evaluated")


def _imagenet_c() -> list[str]:
    return list(corrupt.manifest("imagenet_c"))


def _perturbations(name: str, value: Any, checked: Mapping[str, Any]) -> list[str]:
    value = params.check_list(name, value, str, choices=_imagenet_c(), min_len=0)
    return value or [p for p in corrupt.default_sweep() if p in _imagenet_c()]


def _levels(name: str, value: Any, checked: Mapping[str, Any]) -> list[int]:
    value = params.check_list(name, value, int, lo=1, hi=5)
    if sorted(value) != value:
        raise ParameterError(f"parameter {name!r} must be increasing, got {value}")
    return value


def _models(name: str, value: Any, checked: Mapping[str, Any]) -> list[str]:
    if checked["predictions_from"] == "sweep":
        return _SWEEP["models"](name, value, checked)
    return [f"sim-{chr(ord('a') + i)}" for i in range(checked["sim_models"])]


def _items_source(name: str, value: Any, checked: Mapping[str, Any]) -> Any:
    """Checked before any work when the models score the items; unused (left as given) when simulating."""
    return _SWEEP["items_source"](name, value, checked) if checked["predictions_from"] == "sweep" else value


class Params(params.Params):
    """Notebook 04's parameters (its parameters cell documents each one)."""

    RULES = {
        "predictions_from": one(str, choices=["sweep", "simulate"]),
        **sweep.sweep_rules("n_per_family", "image_size", "max_items"),
        "perturbations": _perturbations,
        "levels": _levels,
        "method": one(str, choices=METHODS),
        **sweep.sweep_rules("seed", "torch_threads"),
        "n_boot": one(int, lo=0, hi=100_000),
        "ci": one(float, lo=0.0, hi=1.0, lo_open=True, hi_open=True),
        "boundary_tol": one(float, lo=0.0, hi=0.5),
        "mixed_tol": one(float, lo=0.0, hi=1.0),
        "sim_models": one(int, lo=1, hi=26),
        "sim_damage": one(float, lo=0.0, hi=10.0),
        "sim_items": one(int, lo=2, hi=1_000_000),
        "models": _models,  # after sim_models, which it reads
        "items_source": _items_source,  # after models, as before (a variant stops at the models first)
    }
