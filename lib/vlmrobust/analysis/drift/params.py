"""Notebook 05's parameters, checked in one call: :class:`Params` (``P = drift.Params.resolve(globals())``).

The shared sweep parameters come from :func:`vlmrobust.sweep.sweep_rules`; the rest are the further item
sources, the protocol's choices (shift reading, subsets, set-apart instances, ``gt_changing``), the prompts of
the probe regimes, the sizes of the control, bootstrap, frequency, PGD and photometric experiments, the size
ladder and the model's device and dtype. Checked values that differ from the cell's literals:

* ``models``, ``size_ladder``: model names (``size_ladder`` empty: the zoo's organisms of role ``ladder``);
* ``gt_changing``: ``{perturbation: (families, ...)}`` (:func:`~.protocol.check_gt_changing`).

A bad value raises :class:`~vlmrobust.params.ParameterError` naming it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ... import corrupt, params, sweep
from ... import models as vlm_models
from ...corrupt import natural
from ...params import many, one
from ...probes.regimes import PROBE_TEMPLATES, REGIMES
from .protocol import SET_APART, check_gt_changing

__all__ = ["Params"]


def _cross_sources(name: str, value: Any, checked: Mapping[str, Any]) -> list[str]:
    value = params.check_list(name, value, str, min_len=0)
    for i, src in enumerate(value):
        sweep.item_source_kind(src, param=f"{name}[{i}]")
    return value


def _pope_source(name: str, value: Any, checked: Mapping[str, Any]) -> str:
    value = params.check(name, value, str)
    if value:
        sweep.item_source_kind(value, param=name)
    return value


def _gt_changing(name: str, value: Any, checked: Mapping[str, Any]) -> dict[str, tuple[str, ...]]:
    return check_gt_changing(value, param=name)


def _size_ladder(name: str, value: Any, checked: Mapping[str, Any]) -> list[str]:
    return sweep.resolve_models(value, param=name) if value else vlm_models.zoo.names("ladder")


class Params(params.Params):
    """Notebook 05's parameters (its parameters cell documents each one)."""

    RULES = {
        **sweep.sweep_rules("models", "items_source"),
        "cross_sources": _cross_sources,
        "pope_source": _pope_source,
        "pope_template": one(str, choices=lambda p: [""] + sorted(vlm_models.TEMPLATES)),
        **sweep.sweep_rules("n_per_family", "image_size", "max_items"),
        "n_subsets": one(int, lo=1, hi=1000),
        "subset_size": one(int, lo=0),
        "shift_reading": one(str, choices=list(natural.SHIFT_READINGS)),
        "set_apart": one(str, choices=list(SET_APART)),
        **sweep.sweep_rules("seed"),
        "method": one(str, choices=["default", "letter", "loglik", "loglik_norm"]),
        "template": one(str, choices=lambda p: sorted(vlm_models.TEMPLATES)),
        "open_template": one(str, choices=lambda p: sorted(PROBE_TEMPLATES)),
        "free_template": one(str, choices=lambda p: sorted(PROBE_TEMPLATES)),
        "max_new_tokens": one(int, lo=1, hi=256),
        "grid_layer": one(int, lo=-1),
        "n_control": one(int, lo=2, hi=10_000_000),
        "drift_regime": one(str, choices=list(REGIMES) + ["vision_mean"]),
        "gt_changing": _gt_changing,
        "n_boot": one(int, lo=10, hi=100_000),
        "freq_items": one(int, lo=1, hi=100_000),
        "noise_draws": one(int, lo=1, hi=1000),
        "example_samples": one(int, lo=1, hi=8),
        "pgd_items": one(int, lo=1, hi=100_000),
        "photometric": many(str, choices=corrupt.IMAGENET_C),
        "photometric_level": one(int, lo=1, hi=5),
        "size_ladder": _size_ladder,
        **sweep.sweep_rules("batch_size"),
        "device": one(str),
        "dtype": one(str, choices=["", "float32", "float16", "bfloat16"]),
        **sweep.sweep_rules("torch_threads", "executor", "dask_workers", "dask_scheduler"),
        "progress": one(bool),
    }
