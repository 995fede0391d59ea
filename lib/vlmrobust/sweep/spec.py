"""Sweep specifications, shards and their cache keys.

A sweep is models x items x conditions. It is split into **shards**, one per
``(model, perturbation)`` (the clean condition is its own shard,
``("clean", [0])``). A shard's **key** is a stable hash of everything that
determines its rows: the model's fingerprint (id, revision or content hash of
its folder, which covers processor settings and chat template), dtype, prompt
template, scoring methods and their options, the items (ids and contents),
the perturbation with its levels and parameters, the seed and the corruption
backend. Changing any of them gives a new key, so a stale shard is never reused.

**Shard kinds.** A plain sweep writes prediction shards. A probe sweep
(``SweepSpec.probes``, a :class:`vlmrobust.probes.ProbeSpec`) writes probe
shards (:mod:`vlmrobust.probes.shard`): the kind and the probe settings enter the
key, and the file is named ``<model>__<perturbation>__probes__<key>.parquet``
(its predictions beside it as ``...pred.parquet``).

**Dependencies.** A shard may need its model's clean shard: every perturbed
probe shard (distances to the clean states) and, under ``overlay_rule =
"not_base"``, every overlay shard (TextOverlay, RandomText and BoxOverlay show
the letters other than the model's clean prediction, at most three, seed 002
App. A.6). Such a shard records the clean shard (``Shard.clean``), whose key
enters its own key; the engine runs clean shards first.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from ..data.items import items_digest
from ..models import TEMPLATES, fingerprint
from ..repro import stable_hash
from ..schema import METHODS

__all__ = ["SCHEMA_VERSION", "OVERLAY_RULES", "SweepSpec", "Shard", "plan", "overlay_family"]

#: Bumped when the predictions table or the shard layout changes meaning, or when scoring changes its
#: floats (3: option log-likelihood batched across items; 4: the fast path of the zoo's organisms,
#: :mod:`vlmrobust.score.fast`), so that no cache mixes the two.
SCHEMA_VERSION = 4
OVERLAY_RULES = ("not_base", "all")
PROBE_METHODS = ("letter", "loglik", "loglik_norm")


def overlay_family(name: str) -> bool:
    """Whether ``name`` is a registered overlay (its levels are letters); unknown names are not."""
    from .. import corrupt

    try:
        return corrupt.info(name).family == "overlay"
    except (ValueError, TypeError):
        return False


def _impl_version(name: str) -> Any:
    """A registered perturbation's implementation version (``info.extra["version"]``), if it declares one."""
    from .. import corrupt

    try:
        return corrupt.info(name).extra.get("version")
    except (ValueError, TypeError):
        return None


@dataclass
class SweepSpec:
    """What to run.

    ``models``: zoo names, model folders or hub ids. ``conditions``: perturbation
    name -> levels (level 0 is dropped: the clean shard covers it when
    ``include_clean``). ``methods``: scoring methods (``None`` = each model's
    default). ``revisions``: hub revision per model. ``torch_threads`` caps the
    threads a shard uses (1 on shared machines and on Dask workers with one
    thread each). ``probes``: a :class:`vlmrobust.probes.ProbeSpec` makes this a
    probe sweep (one scoring method). ``overlay_rule``: ``"not_base"`` (default,
    seed 002 App. A.6) scores each item of an overlay perturbation only at the
    letters other than its clean prediction that exist among its K options, at
    most three; ``"all"`` scores every listed level. ``corrupt_id`` names a
    corruption function other than ``corrupt.apply`` (it enters the keys).
    ``share_images``: corrupt each (perturbation, level) once and let every
    model's shard read it (:mod:`vlmrobust.sweep.images`); it changes no row, so
    it is not part of the keys. ``engine``: the forward that scores (:mod:`vlmrobust.score.fast`):
    ``"auto"`` (the fast path for the zoo's organisms, the Hugging Face forward for other models),
    ``"hf"`` or ``"fast"``; it enters the keys.
    """

    models: Sequence[str]
    items: pd.DataFrame
    conditions: Mapping[str, Sequence[int]]
    methods: Sequence[str] | None = None
    template: str = "vlmrobust"
    seed: int = 0
    include_clean: bool = True
    batch_size: int = 8
    n_samples: int = 20
    temperature: float = 1.0
    max_new_tokens: int = 8
    dtype: str | None = None
    device: str = "cpu"
    backend: str = "native"
    revisions: Mapping[str, str | None] = field(default_factory=dict)
    torch_threads: int | None = None
    probes: Any = None
    overlay_rule: str = "not_base"
    corrupt_id: str | None = None
    share_images: bool = True
    engine: str = "auto"

    def validate(self) -> None:
        """Raise ``ValueError``/``TypeError`` naming the bad field and what is allowed."""
        if isinstance(self.models, str) or not self.models or not all(isinstance(m, str) for m in self.models):
            raise ValueError(f"models must be a non-empty list of model names, got {self.models!r}")
        if len(set(self.models)) != len(self.models):
            raise ValueError(f"models has repeated entries: {list(self.models)}")
        if not isinstance(self.items, pd.DataFrame) or self.items.empty:
            raise ValueError("items must be a non-empty item table (pandas DataFrame)")
        for col in ("item_id", "question", "options", "answer_idx", "image_ref"):
            if col not in self.items.columns:
                raise ValueError(f"items is missing column {col!r}")
        if self.items["item_id"].duplicated().any():
            raise ValueError("items has duplicated item_id values")
        if not isinstance(self.conditions, Mapping):
            raise TypeError(f"conditions must map perturbation -> levels, got {type(self.conditions).__name__}")
        for name, levels in self.conditions.items():
            if not isinstance(name, str) or not name or name == "clean":
                raise ValueError(f"conditions keys must be perturbation names (not 'clean'), got {name!r}")
            if isinstance(levels, (str, bytes)) or not all(isinstance(lv, int) and lv >= 0 for lv in levels):
                raise ValueError(f"conditions[{name!r}] must be a list of non-negative int levels, got {levels!r}")
        if not self.conditions and not self.include_clean:
            raise ValueError("nothing to run: conditions is empty and include_clean is False")
        if self.methods is not None and (not self.methods or any(m not in METHODS for m in self.methods)):
            raise ValueError(f"methods must be None or a non-empty subset of {list(METHODS)}, got {self.methods!r}")
        if self.template not in TEMPLATES:
            raise ValueError(f"template must be one of {sorted(TEMPLATES)}, got {self.template!r}")
        if not isinstance(self.seed, int) or isinstance(self.seed, bool):
            raise TypeError(f"seed must be an int, got {self.seed!r}")
        if not isinstance(self.share_images, bool):
            raise TypeError(f"share_images must be True or False, got {self.share_images!r}")
        from ..score import ENGINES

        if self.engine not in ENGINES:
            raise ValueError(f"engine must be one of {ENGINES}, got {self.engine!r}")
        if self.overlay_rule not in OVERLAY_RULES:
            raise ValueError(f"overlay_rule must be one of {OVERLAY_RULES}, got {self.overlay_rule!r}")
        if self.probes is not None:
            from ..probes import ProbeSpec

            if not isinstance(self.probes, ProbeSpec):
                raise TypeError("probes must be a vlmrobust.probes.ProbeSpec or None, "
                                f"got {type(self.probes).__name__}")
            self.probes.validate()
            if self.methods is not None and (len(self.methods) != 1 or self.methods[0] not in PROBE_METHODS):
                raise ValueError(f"a probe sweep scores one method of {PROBE_METHODS} (or None: each model's "
                                 f"default), got {self.methods!r}")
            if not self.include_clean:
                raise ValueError("a probe sweep needs the clean shard (include_clean=True)")


@dataclass(frozen=True)
class Shard:
    """One unit of work: a model under one perturbation at its levels."""

    model: str
    perturbation: str
    levels: tuple[int, ...]
    params: tuple[float, ...]
    key: str
    key_fields: dict = field(compare=False, repr=False)
    kind: str = "predictions"
    clean: str | None = None  # the filename of the clean shard this shard needs, if any

    @property
    def filename(self) -> str:
        tag = "__probes" if self.kind == "probes" else ""
        return f"{_slug(self.model)}__{_slug(self.perturbation)}{tag}__{self.key}.parquet"

    @property
    def pred_filename(self) -> str:
        """Where this shard's predictions are: the shard itself, or beside a probe shard."""
        return self.filename if self.kind == "predictions" else self.filename[: -len(".parquet")] + ".pred.parquet"


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", Path(str(text)).name or str(text)).strip("-")[:60] or "x"


def _param(param_fn: Any, name: str, level: int) -> float:
    if name == "clean" or level == 0:
        return math.nan
    try:
        val = param_fn(name, level) if param_fn is not None else math.nan
    except (KeyError, ValueError, IndexError):
        val = math.nan
    return float(val) if val is not None else math.nan


def plan(spec: SweepSpec, param_fn: Any = None) -> list[Shard]:
    """The shards of a sweep, model-major, clean first, then perturbations in the order given.

    ``param_fn(name, level)`` gives a level's physical parameter (NaN if unknown).
    """
    spec.validate()
    digest = items_digest(spec.items)
    shards = []
    conds: list[tuple[str, tuple[int, ...]]] = [("clean", (0,))] if spec.include_clean else []
    conds += [(n, tuple(sorted({int(lv) for lv in lvls if int(lv) > 0}))) for n, lvls in spec.conditions.items()]
    kind = "probes" if spec.probes is not None else "predictions"
    for model in spec.models:
        fp = fingerprint(model, spec.revisions.get(model))
        clean: Shard | None = None
        for name, levels in conds:
            if not levels:
                continue
            params = tuple(_param(param_fn, name, lv) for lv in levels)
            fields = {
                "schema": SCHEMA_VERSION, "model": fp, "dtype": spec.dtype, "template": spec.template,
                "methods": list(spec.methods) if spec.methods is not None else None,
                "sampling": [spec.n_samples, spec.temperature, spec.max_new_tokens],
                "items": digest, "perturbation": name, "levels": list(levels),
                "params": [None if math.isnan(p) else p for p in params],
                "seed": spec.seed, "backend": spec.backend, "engine": spec.engine,
            }
            if kind == "probes":
                from ..probes.shard import SHARD_VERSION

                fields.update(kind=kind, probes=spec.probes.fields(), probe_shard=SHARD_VERSION)
            if spec.corrupt_id is not None and name != "clean":
                fields["corrupt"] = spec.corrupt_id
            version = _impl_version(name) if name != "clean" else None
            if version is not None:
                fields["version"] = version
            needs_clean = name != "clean" and (kind == "probes" or (
                spec.overlay_rule == "not_base" and overlay_family(name)))
            if needs_clean:
                if clean is None:
                    raise ValueError(f"shard {model}/{name} needs the clean shard of {model} (include_clean=True)")
                fields["clean"] = clean.key
                if overlay_family(name):
                    fields["overlay_rule"] = spec.overlay_rule
            shard = Shard(model, name, levels, params, stable_hash(fields, 16), fields, kind,
                          clean.filename if needs_clean else None)
            if name == "clean":
                clean = shard
            shards.append(shard)
    return shards
