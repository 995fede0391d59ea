"""Notebook 01's parameters, checked in one call: :class:`Params` (``P = selection.Params.resolve(globals())``).

The shared sweep parameters come from :func:`vlmrobust.sweep.sweep_rules`; the rest are the selectors, the pool,
the corruptions of the answer paths, the encoders of the novelty term, the saved split and the checks'
intervals (seed 000, §IV). An empty ``selectors``, ``models``, ``perturbations``, ``eval_perturbations`` or
``image_encoder`` is read as its default (the parameters cell says which; the default image encoder of a blind
twin ``blind:NAME`` is ``NAME``'s vision tower on the real images). A bad value raises
:class:`~vlmrobust.params.ParameterError` naming it.

Two rules come later than their parameter in the cell, because they read a parameter listed below it:
``items_source`` (checked only when ``pool_sources`` is empty) and ``levels`` (every corruption of
``perturbations`` and ``eval_perturbations`` must have its levels).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from ... import corrupt, params, sweep
from ...data import splits as store
from ...models.loading import BLIND_PREFIX
from ...params import ParameterError, Rule, many, one
from .embed import IMAGE_POOLING

__all__ = ["METHODS", "Params"]

#: The scoring methods a run may ask for (``default``: each model's own).
METHODS = ["default", "letter", "loglik", "loglik_norm"]

_SWEEP = sweep.sweep_rules("models", "items_source", models_default="evaluated")


def _imagenet_c() -> list[str]:
    return list(corrupt.manifest("imagenet_c"))


def _or(rule: Rule, default: Callable[[Mapping[str, Any]], Any]) -> Rule:
    """``rule``'s value, or ``default(checked)`` when that is empty."""
    return lambda name, value, checked: rule(name, value, checked) or default(checked)


def _selectors(name: str, value: Any, checked: Mapping[str, Any]) -> list[str]:
    return sweep.resolve_models(value, default="selector", param=name)


def _models(name: str, value: Any, checked: Mapping[str, Any]) -> list[str]:
    """The evaluated models; none (the evaluated-model Gini skipped) when empty and the zoo has no evaluated one."""
    from ...models import zoo

    if value or zoo.names("evaluated"):
        return _SWEEP["models"](name, value, checked)
    return []


def _pool_sources(name: str, value: Any, checked: Mapping[str, Any]) -> list[str]:
    value = params.check_list(name, value, str, min_len=0)
    for i, s in enumerate(value):
        sweep.item_source_kind(s, param=f"{name}[{i}]")
    return value


def _items_source(name: str, value: Any, checked: Mapping[str, Any]) -> Any:
    """Checked only when it is the pool (``pool_sources`` empty); else unused and left as given."""
    return value if checked["pool_sources"] else _SWEEP["items_source"](name, value, checked)


def _levels(name: str, value: Any, checked: Mapping[str, Any]) -> list[int]:
    value = params.check_list(name, value, int, lo=1, hi=5, min_len=2)
    if sorted(value) != value:
        raise ParameterError(f"parameter {name!r} must be increasing, got {value}")
    for p in checked["perturbations"] + checked["eval_perturbations"]:
        if not set(value) <= set(corrupt.info(p).levels):
            raise ParameterError(f"parameter {name!r} = {value}: {p!r} has levels {list(corrupt.info(p).levels)}")
    return value


def _split_name(name: str, value: Any, checked: Mapping[str, Any]) -> str:
    try:
        return store.check_name(value)
    except ValueError as exc:
        raise ParameterError(f"parameter {name!r}: {exc}") from None


class Params(params.Params):
    """Notebook 01's parameters (its parameters cell documents each one)."""

    RULES = {
        "selectors": _selectors,
        "models": _models,
        "pool_sources": _pool_sources,
        "items_source": _items_source,  # after pool_sources, which it reads
        "pool_size": one(int, lo=0),
        **sweep.sweep_rules("n_per_family", "image_size", "max_items"),
        "perturbations": _or(many(str, choices=lambda p: corrupt.names(), min_len=0), lambda p: _imagenet_c()),
        "eval_perturbations": _or(many(str, choices=lambda p: corrupt.names(), min_len=0),
                                  lambda p: [x for x in corrupt.default_sweep() if x in _imagenet_c()]),
        "levels": _levels,  # after eval_perturbations, which it reads
        "image_encoder": _or(one(str), lambda p: p["selectors"][0].removeprefix(BLIND_PREFIX)),
        "image_pooling": one(str, choices=list(IMAGE_POOLING)),
        "text_encoder": one(str),
        "split_name": _split_name,
        "method": one(str, choices=METHODS),
        **sweep.sweep_rules("seed", "batch_size", "torch_threads", "executor", "dask_workers", "dask_scheduler"),
        "n_boot": one(int, lo=0, hi=100_000),
        "ci": one(float, lo=0.0, hi=1.0, lo_open=True, hi_open=True),
        "difficulty_rho_max": one(float, lo=-1.0, hi=1.0),
        "scaling_sizes": many(int, lo=10, hi=1_000_000, min_len=0),
    }
