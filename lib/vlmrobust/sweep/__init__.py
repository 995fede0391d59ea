"""Resumable sweeps: models x items x conditions, split into cached shards (model x perturbation).

Notebooks get their predictions through :func:`predictions` (with
:func:`resolve_models` and :func:`item_source` for their parameters), which runs
the sweep into the shard cache every notebook shares; see :mod:`vlmrobust.sweep.handoff`.

>>> spec = SweepSpec(models=["organism-a"], items=items, conditions=corrupt.default_sweep())
>>> result = run_sweep(spec, results_dir("03_scoring") / "sweep")          # in-process
>>> result = run_sweep(spec, out, executor="dask", client=Client(cluster))   # any Dask cluster
>>> result.table        # the predictions table (vlmrobust.score.table documents the columns)
>>> result.summary()    # shards done / cached / failed, rows, seconds, items/s
>>> result.timing()     # where the shards' time went: model loading, I/O, corruption, scoring

Each shard is written as ``<model>__<perturbation>__<key>.parquet`` with a
temporary file and ``os.replace``, so an interrupted run leaves either a whole
shard or none; rerunning skips finished shards and resumes the rest. A shard
that raises writes ``<...>.error.json`` and does not stop the others.
Corrupted images are computed once per (perturbation, level) and read by every
model's shard (:mod:`vlmrobust.sweep.images`).
"""

from .handoff import (
    SweepFailed,
    check_executor,
    check_scheduler,
    item_source,
    item_source_kind,
    local_cluster,
    notebook_client,
    predictions,
    resolve_models,
)
from .parameters import SWEEP_PARAMETERS, sweep_rules
from .run import (
                  TIME_PARTS,
                  SweepResult,
                  default_corrupt,
                  default_depth,
                  default_image,
                  default_param,
                  read_table,
                  run_shard,
                  run_sweep,
)
from .spec import SCHEMA_VERSION, Shard, SweepSpec, plan

__all__ = ["SCHEMA_VERSION", "SWEEP_PARAMETERS", "TIME_PARTS", "Shard", "SweepFailed", "SweepResult", "SweepSpec",
           "check_executor", "check_scheduler", "item_source", "item_source_kind", "local_cluster", "notebook_client",
           "predictions", "resolve_models", "default_corrupt", "default_depth",
           "default_image", "default_param", "plan", "read_table", "run_shard", "run_sweep", "sweep_rules"]
