"""The notebooks' one hand-off: models × item source × conditions × methods → the predictions table.

Every notebook asks for predictions the same way::

    MODELS = sweep.resolve_models(models)                  # the parameter ``models`` ([] = the default set)
    items = sweep.item_source(items_source, n_per_family=..., seed=...)
    result = sweep.predictions(MODELS, items, conditions, methods=..., seed=...)
    pred = result.table

:func:`predictions` runs the sweep engine into the shard cache shared by every
notebook (:func:`vlmrobust.paths.shards_dir`): shards are content-keyed, so a
notebook whose shards another notebook already computed reads them, and nothing
is written into another notebook's results folder. A shard that fails stops the
notebook with :class:`SweepFailed`, naming each failed shard and its error file;
the finished shards stay cached, so the next run computes only what failed.

Parameter conventions, the same in every notebook:

* ``models`` (list): zoo names, ``role:<role>`` (every organism of a role of
  :data:`vlmrobust.schema.ROLES`), model folders or hub ids ``org/name``, and
  ``blind:<zoo name>`` or ``blind:role:<role>``: the blind twin of an organism, shown
  one grey image whatever the condition (a null model that cannot see,
  :data:`vlmrobust.models.loading.BLIND_PREFIX`); the
  empty list means the notebook's default set (the ``evaluated`` organisms unless
  the notebook asks for another role).
* ``items_source`` (str): ``"synth"`` (the synthetic benchmark), a VLMEvalKit
  TSV file (``*.tsv``), a parquet file (``*.parquet``: an item table saved by
  :func:`vlmrobust.data.save_items`, or any multiple-choice table with columns
  ``question``, ``options``, ``answer`` and ``image``, read by :func:`vlmrobust.data.load_parquet`),
  ``split:<name>`` (a split saved by notebook 01, read from
  ``<results root>/splits/<name>.parquet``; see :mod:`vlmrobust.data.splits`), or
  ``hf:<dataset>[:<split>]`` (a Hugging Face dataset with the default column
  names of :func:`vlmrobust.data.load_hf_dataset`). Relative paths are read
  from the repository root.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from .. import params, paths
from ..params import ParameterError
from ..schema import ITEM_COLUMNS, ROLES
from .run import SweepResult, run_sweep
from .spec import SweepSpec

__all__ = ["SweepFailed", "check_scheduler", "item_source", "item_source_kind", "local_cluster", "check_executor",
           "notebook_client", "predictions", "resolve_models"]


class SweepFailed(RuntimeError):
    """Some shards of a sweep failed (their errors are in ``<shard>.error.json``); the rest are cached."""

    def __init__(self, result: SweepResult):
        self.result = result
        lines = [f"  {r.model} / {r.perturbation}: {r.error} ({result.out_dir / Path(r.file).stem}.error.json)"
                 for r in result.failed.itertuples()]
        super().__init__(f"{len(lines)} of {len(result.shards)} sweep shard(s) failed; the others are cached and "
                         "a rerun computes only the failed ones:\n" + "\n".join(lines))


def _is_hub_id(name: str) -> bool:
    parts = name.split("/")
    return len(parts) == 2 and all(parts) and not name.startswith((".", "~"))


def resolve_models(models: Sequence[str], default: str | Iterable[str] = "evaluated",
                   param: str = "models") -> list[str]:
    """A notebook's model parameter as model names (see the module docstring).

    Empty: the zoo's organisms of role(s) ``default``. ``role:<role>`` expands to
    that role's organisms. A hub id must be in the local Hugging Face cache when
    ``HF_HUB_OFFLINE`` is set or the hub's host does not resolve (so a notebook
    stops here, not minutes later while loading). Raises :class:`~vlmrobust.params.ParameterError`
    naming ``param`` for a wrong type, an unknown name or role, a repeat, or a
    selection that is empty.
    """
    from ..models import REMOTE_CODE, hub_cached, hub_reachable, offline, zoo

    if isinstance(models, (str, bytes)) or not isinstance(models, Sequence):
        raise ParameterError(f"parameter {param!r} must be a list of model names, got {models!r}")
    zoo_names = zoo.names()
    if not models:
        out = zoo.names(default)
        if not out:
            raise ParameterError(f"parameter {param!r} is empty and the zoo has no organism of role {default!r}; "
                                 f"name zoo organisms {zoo_names}, model folders or hub ids")
        return out
    out: list[str] = []
    for i, m in enumerate(models):
        if not isinstance(m, str) or not m.strip():
            raise ParameterError(f"parameter '{param}[{i}]' must be a non-empty string, got {m!r}")
        if m.startswith("blind:"):
            what = m.split(":", 1)[1]
            if what.startswith("role:") and what.split(":", 1)[1] in ROLES:
                out += ["blind:" + n for n in zoo.names(what.split(":", 1)[1])]
            elif what in zoo_names:
                out.append(m)
            else:
                raise ParameterError(f"parameter '{param}[{i}]' = {m!r}: a blind twin needs a zoo organism "
                                     f"{zoo_names} or 'blind:role:<role>' with a role of {list(ROLES)}")
        elif m.startswith("role:"):
            role = m.split(":", 1)[1]
            if role not in ROLES:
                raise ParameterError(f"parameter '{param}[{i}]' = {m!r}: unknown role; roles are {list(ROLES)}")
            out += zoo.names(role)
        elif m in zoo_names or Path(m).expanduser().is_dir():
            out.append(m)
        elif (paths.REPO_ROOT / m).is_dir():  # a folder relative to the repository root
            out.append(str(paths.REPO_ROOT / m))
        elif m in REMOTE_CODE:
            raise ParameterError(f"parameter '{param}[{i}]' = {m!r} needs the hub repository's own code "
                                 f"(trust_remote_code), which the notebooks do not run; use {REMOTE_CODE[m]!r}, "
                                 "which transformers implements natively")
        elif _is_hub_id(m):
            if not hub_cached(m) and (offline() or not hub_reachable()):
                why = "HF_HUB_OFFLINE is set" if offline() else "the hub cannot be reached from here"
                raise ParameterError(f"parameter '{param}[{i}]' = {m!r} is a hub model that is not in the local "
                                     f"Hugging Face cache, and {why}: download it first (hf download {m}) on a "
                                     "machine with hub access, or name a zoo organism or a model folder")
            out.append(m)
        else:
            raise ParameterError(f"parameter '{param}[{i}]' = {m!r} is neither a zoo organism {zoo_names}, "
                                 "'role:<role>', a model folder nor a hub id 'org/name'")
    if len(set(out)) != len(out):
        raise ParameterError(f"parameter {param!r} names a model twice: {out}")
    if not out:
        raise ParameterError(f"parameter {param!r} = {list(models)} selects no model")
    return out


def item_source_kind(source: str, param: str = "items_source") -> tuple[str, str]:
    """``(kind, where)`` of an item source: ``synth``, ``tsv``, ``parquet``, ``split`` or ``hf`` (checked, not
    loaded)."""
    if not isinstance(source, str) or not source.strip():
        raise ParameterError(f"parameter {param!r} must be 'synth', a .tsv or .parquet file, 'split:<name>' or "
                             f"'hf:<dataset>', got {source!r}")
    if source == "synth":
        return "synth", ""
    if source.startswith("split:"):
        from ..data import splits as store

        name = source[len("split:"):]
        try:
            path = store.split_path(name)
        except ValueError as exc:
            raise ParameterError(f"parameter {param!r} = {source!r}: {exc}") from None
        if not path.is_file():
            raise ParameterError(f"parameter {param!r} = {source!r}: no saved split at {path}; saved splits: "
                                 f"{store.list_splits() or 'none'} (notebook 01_dataset_selection writes them)")
        return "split", name
    if source.startswith("hf:"):
        if not source[3:].strip():
            raise ParameterError(f"parameter {param!r} = {source!r} names no dataset ('hf:<dataset>[:<split>]')")
        import importlib.util

        if importlib.util.find_spec("datasets") is None:
            raise ParameterError(f"parameter {param!r} = {source!r} needs the 'datasets' package: "
                                 "pip install -e .[paper] (or make install PAPER=1)")
        return "hf", source[3:]
    suffix = Path(source).suffix.lower()
    if suffix not in (".tsv", ".parquet"):
        raise ParameterError(f"parameter {param!r} = {source!r}: use 'synth', a .tsv (VLMEvalKit) or .parquet "
                             "(item table) file, 'split:<name>' or 'hf:<dataset>[:<split>]'")
    path = Path(source).expanduser()
    path = path if path.is_absolute() or path.is_file() else paths.REPO_ROOT / source
    if not path.is_file():
        raise ParameterError(f"parameter {param!r}: no file {source!r} (relative paths are read from the "
                             f"repository root {paths.REPO_ROOT})")
    return suffix[1:], str(path)


def item_source(source: str, *, n_per_family: int = 10, seed: int = 0, image_size: int = 64,
                families: Sequence[str] | None = None, max_items: int = 0, param: str = "items_source",
                **synth_kw: Any) -> pd.DataFrame:
    """The item table of an item source (see the module docstring), validated against the schema.

    ``n_per_family``, ``seed``, ``image_size``, ``families`` and ``synth_kw`` shape
    the synthetic benchmark; ``max_items`` (0: all) caps a file or dataset.
    """
    from .. import data, synth

    kind, where = item_source_kind(source, param)
    if kind == "synth":
        items = synth.generate(n_per_family, seed, size=image_size, families=families, **synth_kw)
    elif kind == "tsv":
        items = data.load_tsv(where, max_items=max_items or None)
    elif kind in ("parquet", "split"):
        if kind == "split":
            from ..data import splits as store

            items = store.read_split(where)[list(ITEM_COLUMNS)]
        else:
            items = pd.read_parquet(where)
            if set(ITEM_COLUMNS) <= set(items.columns):  # an item table (data.save_items)
                items["options"] = items["options"].map(list)
            else:  # any multiple-choice table: question, options, answer, image (data.load_parquet)
                items = data.load_parquet(where)
        items = items.head(max_items) if max_items else items
    else:
        name, _, split = where.partition(":")
        items = data.load_hf_dataset(name, split or "test", max_items=max_items or None)
    return data.validate_items(items.reset_index(drop=True))


def local_cluster(n_workers: int, *, trim_threshold: int | None = None) -> Any:
    """A ``LocalCluster`` of ``n_workers`` single-thread worker processes on 127.0.0.1, no dashboard.

    Each worker runs with one torch/BLAS thread (Dask's nanny default) and with
    glibc's own malloc defaults: Dask's nanny sets ``MALLOC_TRIM_THRESHOLD_=65536``
    before it starts a worker, and any fixed trim threshold turns off glibc's
    adaptive mmap threshold, so every activation tensor above 128 KiB is mapped
    afresh at each forward and scoring runs up to twice as slowly as in a plain
    process (``bench/sweep.py --trim``). Here the variable is left unset
    (``trim_threshold=None``), as in any Python process; the cost is that a worker
    returns freed memory to the system later. An int sets it. A cluster of your
    own (dask-jobqueue, dask-cuda, a lab scheduler) keeps its settings: pass its
    address or client instead.
    """
    import dask
    from dask.distributed import LocalCluster

    if not isinstance(n_workers, int) or isinstance(n_workers, bool) or n_workers < 1:
        raise ValueError(f"n_workers must be a positive int, got {n_workers!r}")
    env = {k: v for k, v in dict(dask.config.get("distributed.nanny.pre-spawn-environ", {})).items()
           if k != "MALLOC_TRIM_THRESHOLD_"}
    if trim_threshold is not None:
        env["MALLOC_TRIM_THRESHOLD_"] = int(trim_threshold)
    with dask.config.set({"distributed.nanny.pre-spawn-environ": env}):  # read as each nanny is made, here
        return LocalCluster(n_workers=n_workers, threads_per_worker=1, host="127.0.0.1", dashboard_address=None)


def check_executor(executor: str, dask_workers: int, dask_scheduler: str) -> tuple[str, int, str]:
    """A notebook's ``executor``, ``dask_workers`` and ``dask_scheduler`` parameters, checked (a
    :class:`~vlmrobust.params.ParameterError` names the one that is wrong); the scheduler as
    :func:`check_scheduler` returns it."""
    executor = params.check("executor", executor, str, choices=["local", "dask"])
    dask_workers = params.check("dask_workers", dask_workers, int, lo=1, hi=256)
    return executor, dask_workers, check_scheduler(dask_scheduler, executor)


def notebook_client(executor: str, scheduler: str = "", n_workers: int = 2) -> Any:
    """The Dask client that a notebook's many sweeps share: ``None`` for ``executor="local"``; a client of
    ``scheduler`` (an address checked by :func:`check_scheduler`) when one is given; else a client of a
    :func:`local_cluster` of ``n_workers`` processes, started once here (its workers stop with the kernel).
    Pass it as ``client=`` with ``executor="dask"`` to :func:`predictions`: no sweep starts a cluster of its own."""
    if executor != "dask":
        return None
    from dask.distributed import Client

    return Client(scheduler) if scheduler else Client(local_cluster(n_workers))


def check_scheduler(address: str, executor: str = "dask", param: str = "dask_scheduler",
                    timeout: float = 10.0) -> str:
    """A Dask scheduler address, checked by connecting to it (``""`` means none: a local cluster is used).

    Raises :class:`~vlmrobust.params.ParameterError` naming ``param`` for a value
    that is not an address (``tcp://host:port``, ``tls://...``, ``host:port``), an
    address given while ``executor`` is not ``"dask"``, or a scheduler that does
    not answer within ``timeout`` seconds.
    """
    if not isinstance(address, str):
        raise ParameterError(f"parameter {param!r} must be a scheduler address string or '', got {address!r}")
    address = address.strip()
    if not address:
        return ""
    if executor != "dask":
        raise ParameterError(f"parameter {param!r} = {address!r} names a Dask scheduler, but executor is "
                             f"{executor!r}: set executor: dask to run the shards there")
    import re

    if not re.fullmatch(r"((tcp|tls|ucx|inproc)://)?[\w.\-\[\]:]+:\d+(/.*)?", address):
        raise ParameterError(f"parameter {param!r} = {address!r} is not a scheduler address; use "
                             "'tcp://host:port' (what a dask-jobqueue or dask-cuda cluster's scheduler_address shows)")
    from dask.distributed import Client

    try:
        with Client(address, timeout=timeout) as client:
            n = len(client.scheduler_info().get("workers", {}))
    except OSError as exc:
        raise ParameterError(f"parameter {param!r}: no Dask scheduler answers at {address!r} within {timeout:g} s "
                             f"({exc}); start it first, or leave the parameter empty for a local cluster") from None
    if n == 0:
        print(f"the Dask scheduler at {address} has no workers yet; shards wait until workers join")
    return address


def predictions(models: Sequence[str], items: pd.DataFrame, conditions: Mapping[str, Sequence[int]], *,
                methods: Sequence[str] | None = None, out_dir: str | os.PathLike | None = None,
                executor: str = "local", client: Any = None, dask_workers: int = 0, progress: bool | None = None,
                allow_failed: bool = False, corrupt_fn: Any = None, param_fn: Any = None,
                **spec_kw: Any) -> SweepResult:
    """Score ``models`` on ``items`` clean and under ``conditions`` through the shared shard cache.

    ``conditions`` maps perturbation names to levels (``{}`` scores clean only);
    ``methods`` ``None`` takes each model's default method. Other keywords go to
    :class:`~vlmrobust.sweep.SweepSpec` (``template``, ``seed``, ``batch_size``,
    ``torch_threads``, ``n_samples``, ...). ``executor="dask"`` runs the shards on
    ``client`` (a ``Client`` or a scheduler address, e.g. a notebook's
    ``dask_scheduler`` parameter), or on a local cluster of ``dask_workers``
    processes (:func:`local_cluster`) started and stopped here. Raises :class:`SweepFailed` when a shard fails, unless
    ``allow_failed`` (then ``result.failed`` lists them).

    ``probes=ProbeSpec(...)`` (:class:`vlmrobust.probes.ProbeSpec`) makes it a
    probe sweep: probe shards of their own keys hold, beside the predictions of
    the same forwards (``result.table``), the hidden-state rows of
    :mod:`vlmrobust.probes.shard` (``result.probes``). Overlay perturbations show
    each item only the letters other than its clean prediction (``overlay_rule``).

    ``corrupt_fn`` (with ``param_fn``) replaces ``corrupt.apply`` for conditions
    that are not registered perturbations (e.g.
    :func:`vlmrobust.corrupt.frequency.fine_ablation`); its module, name and
    ``version`` attribute enter the shard keys.
    """
    if corrupt_fn is not None:
        spec_kw.setdefault("corrupt_id", f"{corrupt_fn.__module__}.{corrupt_fn.__qualname__}"
                                         f"@{getattr(corrupt_fn, 'version', 0)}")
    spec = SweepSpec(models=list(models), items=items, conditions=dict(conditions), methods=methods, **spec_kw)
    out = Path(out_dir) if out_dir is not None else paths.shards_dir()
    cluster = None
    if executor == "dask" and client is None and dask_workers:
        from dask.distributed import Client

        cluster = local_cluster(dask_workers)
        client = Client(cluster)
    try:
        result = run_sweep(spec, out, executor=executor, client=client, progress=progress, corrupt_fn=corrupt_fn,
                           param_fn=param_fn)
    finally:
        if cluster is not None:
            client.close()
            cluster.close()
    if len(result.failed) and not allow_failed:
        raise SweepFailed(result)
    return result
