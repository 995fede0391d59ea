"""Notebook 07's parameters, checked in one call: :class:`Params` (``P = escalation.Params.resolve(globals())``).

The shared sweep parameters come from :func:`vlmrobust.sweep.sweep_rules`; the rest are the ladders, the
traversal fill, RCI's and T-RCI's weights and readings (seed 001, §II-D–F), the fragility regimes (§IV-C)
and the observations' tolerances. A bad value raises :class:`~vlmrobust.params.ParameterError` naming it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ... import corrupt, params, sweep
from ...corrupt import escalation as esc
from ...params import ParameterError, many, one
from .indices import FAIL_READINGS
from .taxonomy import CLASSES

__all__ = ["Params"]

RUNGS = [1, 2, 3, 4]


def _groups(name: str, value: Any, checked: Mapping[str, Any]) -> dict:
    params.check(name, value, dict)
    for g_name, g_tasks in value.items():
        params.check(f"{name} key {g_name!r}", g_name, str)
        params.check_list(f"{name}[{g_name!r}]", g_tasks, str)
    return value


def _levels(name: str, value: Any, checked: Mapping[str, Any]) -> list[int]:
    value = params.check_list(name, value, int, choices=RUNGS)
    if sorted(value) != value:
        raise ParameterError(f"parameter {name!r} must be increasing, got {value}")
    return value


def _weights(n: int):
    def rule(name: str, value: Any, checked: Mapping[str, Any]) -> list[float]:
        value = params.check_list(name, value, float, lo=0.0, unique=False)
        if len(value) != n or sum(value) <= 0:
            raise ParameterError(f"parameter {name!r} needs {n} weights >= 0 with a positive sum, got {value}")
        return value

    return rule


def _failure_weights(name: str, value: Any, checked: Mapping[str, Any]) -> dict:
    params.check(name, value, dict)
    for cls, w in value.items():
        params.check(f"{name} key", cls, str, choices=list(CLASSES))
        params.check(f"{name}[{cls!r}]", w, float, lo=0.0)
    return value


class Params(params.Params):
    """Notebook 07's parameters (its parameters cell documents each one)."""

    RULES = {
        **sweep.sweep_rules(),
        "groups": _groups,
        "ladders": many(str, choices=lambda p: corrupt.names("escalation")),
        "levels": _levels,
        "contrast_reading": one(str, choices=list(esc.CONTRAST_READINGS)),
        "crop_reading": one(str, choices=list(esc.CROP_READINGS)),
        "fill": one(str, choices=list(esc.FILLS)),
        "mean_fill": one(str, choices=["items", "synthetic"]),
        "compare_fills": many(str, choices=list(esc.FILLS), min_len=0),
        "control_levels": many(int, choices=RUNGS, min_len=0),
        "compare_levels": many(int, choices=lambda p: p["levels"], min_len=0),
        "rci_weights": _weights(4),
        "trci_weights": _weights(5),
        "fail_reading": one(str, choices=list(FAIL_READINGS)),
        "failure_weights": _failure_weights,
        "epsilon": one(float, lo=0.0, lo_open=True, hi=0.1),
        "stable_min": one(float, lo=0.0, hi=1.0),
        "severe_below": one(float, lo=0.0, hi=lambda p: p["stable_min"]),
        "monotone_tol": one(float, lo=0.0, hi=1.0),
        "warn_threshold": one(float, lo=0.0, lo_open=True, hi=1.0),
        "acc_tol": one(float, lo=0.0, hi=1.0),
        "index_gap": one(float, lo=0.0),
        "direction_gap": one(float, lo=0.0),
        "n_boot": one(int, lo=0, hi=100_000),
        "ci": one(float, lo=0.5, hi=1.0, hi_open=True),
    }
