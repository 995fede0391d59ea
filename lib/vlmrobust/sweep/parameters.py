"""The sweep parameters that notebooks share, declared once as rules for :class:`vlmrobust.params.Params`.

Every notebook that scores models names some of ``models``, ``items_source``, ``n_per_family``,
``image_size``, ``max_items``, ``seed``, ``torch_threads``, ``batch_size``, ``executor``,
``dask_workers`` and ``dask_scheduler`` (and, when named, ``engine``: the scoring forward,
:data:`vlmrobust.score.ENGINES`); its ``Params`` takes their rules from :func:`sweep_rules`
instead of typing the checks again. Checked values:

* ``models``: the model names (:func:`~vlmrobust.sweep.resolve_models`: empty means the zoo's
  organisms of the roles ``models_default``);
* ``items_source``: the source unchanged, once :func:`~vlmrobust.sweep.item_source_kind` accepts it;
* ``dask_scheduler``: the address :func:`~vlmrobust.sweep.check_scheduler` returns (it reads
  ``executor``, so it is checked after it).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from .. import synth
from ..params import Rule, one
from ..score import ENGINES
from .handoff import check_scheduler, item_source_kind, resolve_models

__all__ = ["SWEEP_PARAMETERS", "sweep_rules"]

#: The shared sweep parameters, in the order a notebook's parameters cell lists them.
SWEEP_PARAMETERS = ("models", "items_source", "n_per_family", "image_size", "max_items", "seed", "torch_threads",
                    "batch_size", "executor", "dask_workers", "dask_scheduler")


def _items_source(name: str, value: Any, checked: Mapping[str, Any]) -> str:
    item_source_kind(value, param=name)
    return value


def sweep_rules(*names: str, models_default: str | Iterable[str] = "evaluated") -> dict[str, Rule]:
    """The rules of the shared sweep parameters ``names`` (default: all of them), in the order given."""
    rules: dict[str, Rule] = {
        "models": lambda name, value, checked: resolve_models(value, default=models_default, param=name),
        "items_source": _items_source,
        "n_per_family": one(int, lo=1, hi=100_000),
        "image_size": one(int, lo=synth.MIN_SIZE, hi=1024),
        "max_items": one(int, lo=0),
        "seed": one(int, lo=0),
        "torch_threads": one(int, lo=1, hi=1024),
        "batch_size": one(int, lo=1, hi=4096),
        "executor": one(str, choices=["local", "dask"]),
        "dask_workers": one(int, lo=1, hi=256),
        "engine": one(str, choices=list(ENGINES)),
        "dask_scheduler": lambda name, value, checked: check_scheduler(value, checked.get("executor", "dask"),
                                                                       param=name),
    }
    unknown = [n for n in names if n not in rules]
    if unknown:
        raise ValueError(f"no shared sweep parameter {unknown}; the shared ones are {SWEEP_PARAMETERS}")
    return {n: rules[n] for n in (names or SWEEP_PARAMETERS)}
