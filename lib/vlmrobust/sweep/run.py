"""Running shards: atomic parquet writes, resume, in-process and Dask executors, summaries."""

from __future__ import annotations

import json
import os
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..data.items import items_digest, write_parquet_atomic
from .images import image_store, level_images, level_key
from .spec import Shard, SweepSpec, overlay_family, plan
from .timing import TIME_PARTS, Clock, summarize

__all__ = ["TIME_PARTS", "run_sweep", "run_shard", "read_table", "read_probes", "SweepResult", "default_corrupt",
           "default_image", "default_depth", "default_param", "level_items"]

_MODEL_CACHE: dict[tuple, Any] = {}
#: A temporary shard or image file older than this is a killed run's leftover (younger: a write in progress).
STALE_SECONDS = 3600.0


def default_corrupt(image: np.ndarray, name: str, level: int, *, seed: int, key: str, depth: Any = None,
                    backend: str = "native") -> np.ndarray:
    """``vlmrobust.corrupt.apply`` (imported when first used)."""
    from .. import corrupt

    return corrupt.apply(image, name, level, seed=seed, key=key, depth=depth, backend=backend)


def default_image(ref: str) -> np.ndarray:
    """``vlmrobust.data.load_image`` (imported when first used)."""
    from .. import data

    return data.load_image(ref)


def default_depth(ref: str | None) -> Any:
    from .. import data

    return data.load_depth(ref) if ref else None


def default_param(name: str, level: int) -> float:
    """The physical parameter of a level, ``vlmrobust.corrupt.info(name).param(level)`` (NaN for clean)."""
    from .. import corrupt

    return float(corrupt.info(name).param(level))


def _load_model(spec: SweepSpec, name: str) -> Any:
    from .. import models

    key = (name, spec.revisions.get(name), spec.dtype, spec.device)
    if key not in _MODEL_CACHE:
        _MODEL_CACHE.clear()  # one model at a time per process: shards come model-major
        _MODEL_CACHE[key] = models.load(name, revision=spec.revisions.get(name), dtype=spec.dtype,
                                        device=spec.device)
    return _MODEL_CACHE[key]


def _named(fn: Callable, rec: dict, column: str) -> Any:
    """``fn(rec[column])``, with a failure reported as a :class:`~vlmrobust.score.ScoringError` naming the item."""
    from ..score import ScoringError

    try:
        return fn(rec.get(column))
    except Exception as exc:
        raise ScoringError(str(rec["item_id"]), f"{column} {str(rec.get(column))[:48]!r}: {exc}") from exc


def level_items(spec: SweepSpec, shard: Shard, base: dict[str, int] | None) -> dict[int, list[int]]:
    """Item indices scored at each level of ``shard``: all, or for overlays under ``overlay_rule="not_base"``
    the items whose letters other than their clean prediction (``base``: item id -> pred_idx) include the level."""
    n = len(spec.items)
    if base is None or not (spec.overlay_rule == "not_base" and overlay_family(shard.perturbation)):
        return {lv: list(range(n)) for lv in shard.levels}
    from ..corrupt import overlay_levels

    allowed = [set(overlay_levels(int(base[str(r.item_id)]), len(r.options))) for r in spec.items.itertuples()]
    return {lv: [i for i in range(n) if lv in allowed[i]] for lv in shard.levels}


def _clean_inputs(spec: SweepSpec, shard: Shard, out_dir: Path, method: str) -> tuple[dict | None, Any]:
    """The clean predictions (item id -> pred_idx under ``method``) and, for probe shards, the clean states."""
    if shard.clean is None:
        return None, None
    clean_path = out_dir / shard.clean
    if not clean_path.exists():
        raise FileNotFoundError(f"shard {shard.model}/{shard.perturbation} needs the clean shard {shard.clean}, "
                                "which is not there (it failed or has not run)")
    pred_path = clean_path.with_name(clean_path.name[: -len(".parquet")] + ".pred.parquet") \
        if shard.kind == "probes" else clean_path
    pred = pd.read_parquet(pred_path, columns=["item_id", "method", "pred_idx"])
    pred = pred[pred.method == method]
    base = dict(zip(pred.item_id.astype(str), pred.pred_idx.astype(int), strict=True))
    states = None
    if shard.kind == "probes":
        from ..probes.shard import clean_states

        states = clean_states(pd.read_parquet(clean_path))
    return base, states


def run_shard(spec: SweepSpec, shard: Shard, out_dir: str | os.PathLike, *, corrupt_fn: Callable | None = None,
              image_fn: Callable | None = None, depth_fn: Callable | None = None,
              needs_depth: Callable[[str], bool] | None = None) -> dict:
    """Score one shard and write it atomically; return its record (status, rows, seconds, error).

    Exceptions are recorded in ``<shard>.error.json`` and returned as status
    ``"failed"``; ``KeyboardInterrupt`` and other non-``Exception`` errors propagate.
    A probe shard writes its predictions (``.pred.parquet``) first and its probe
    rows last, so the probe file marks a finished shard.
    """
    from .. import models, score

    out_dir = Path(out_dir)
    path = out_dir / shard.filename
    err_path = path.with_suffix(".error.json")
    rec = {"model": shard.model, "perturbation": shard.perturbation, "key": shard.key, "file": shard.filename,
           "n_items": len(spec.items), "n_levels": len(shard.levels)}
    if path.exists():
        return {**rec, "status": "cached", "rows": int(pd.read_parquet(path, columns=["item_id"]).shape[0]),
                "seconds": 0.0, "error": None}
    t0 = time.perf_counter()
    clock = Clock()
    try:
        if spec.torch_threads:
            import torch

            torch.set_num_threads(int(spec.torch_threads))
        store = image_store(spec, out_dir, corrupt_fn, image_fn, depth_fn)
        digest = items_digest(spec.items) if store is not None else ""
        corrupt_fn = corrupt_fn or default_corrupt
        image_fn = image_fn or default_image
        depth_fn = depth_fn or default_depth
        with clock("model"):
            lm = _load_model(spec, shard.model)
        method0 = spec.methods[0] if spec.methods else models.default_method(lm.answer_format)
        with clock("io"):
            base, clean = _clean_inputs(spec, shard, out_dir, method0)
        recs = spec.items.to_dict("records")
        use_depth = shard.perturbation != "clean" and (needs_depth(shard.perturbation) if needs_depth else False)
        loaded: dict[str, list] = {}

        def inputs() -> tuple[list, list]:  # clean images and depth maps, read when first needed
            if not loaded:
                with clock("io"):
                    loaded["img"] = [_named(image_fn, r, "image_ref") for r in recs]
                    loaded["depth"] = ([_named(depth_fn, r, "depth_ref") for r in recs] if use_depth
                                       else [None] * len(recs))
            return loaded["img"], loaded["depth"]

        def corrupted(level: int, sub: list[int]) -> list:
            clean_imgs, depths = inputs()
            with clock("corrupt"):
                return [corrupt_fn(clean_imgs[i], shard.perturbation, level, seed=spec.seed,
                                   key=str(recs[i]["item_id"]), depth=depths[i], backend=spec.backend) for i in sub]

        subsets = level_items(spec, shard, base)
        parts, probe_parts = [], []
        for level, param in zip(shard.levels, shard.params, strict=True):
            sub = subsets[level]
            if not sub:
                continue
            items = spec.items.iloc[sub].reset_index(drop=True)
            if getattr(lm, "blind", False):  # a blind twin sees one grey image whatever the condition
                from ..models.loading import blind_image

                images = [blind_image(inputs()[0][i]) for i in sub]
            elif shard.perturbation == "clean":
                images = [inputs()[0][i] for i in sub]
            elif store is not None and len(sub) == len(recs):
                with clock("io"):  # a stored level's read (a level corrupted here is timed as corruption)
                    images, _ = level_images(store, level_key(spec, digest, shard.perturbation, level),
                                             shard.perturbation, level, len(recs),
                                             lambda level=level: corrupted(level, list(range(len(recs)))))
            else:
                images = corrupted(level, sub)
            t_score = time.perf_counter()
            if shard.kind == "probes":
                from ..probes.shard import score_condition

                meta = {"model": shard.model, "perturbation": shard.perturbation, "level": int(level),
                        "param": float(param), "method": method0, "template": spec.template, "seed": spec.seed}
                pred, rows, _ = score_condition(lm, items, images, spec=spec.probes, method=method0,
                                                template=spec.template, batch_size=spec.batch_size, meta=meta,
                                                clean=clean, seed_keys=(shard.key,))
                parts.append(pred)
                probe_parts.append(rows)
            else:
                parts.append(score.predict(
                    lm, items, images, methods=spec.methods, template=spec.template, seed=spec.seed,
                    perturbation=shard.perturbation, level=level, param=param, batch_size=spec.batch_size,
                    n_samples=spec.n_samples, temperature=spec.temperature, max_new_tokens=spec.max_new_tokens,
                    model_name=shard.model, engine=spec.engine))
            clock.add("score", time.perf_counter() - t_score)
        from ..schema import PRED_COLUMNS

        t_write = time.perf_counter()

        table = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=list(PRED_COLUMNS))
        if shard.kind == "probes":
            from ..probes.shard import PROBE_COLUMNS

            write_parquet_atomic(table, out_dir / shard.pred_filename)
            probe_table = pd.concat(probe_parts, ignore_index=True) if probe_parts else pd.DataFrame(
                columns=list(PROBE_COLUMNS))
            write_parquet_atomic(probe_table, path)
            n_rows = len(probe_table)
        else:
            write_parquet_atomic(table, path)
            n_rows = len(table)
        if err_path.exists():
            err_path.unlink()
        clock.add("io", time.perf_counter() - t_write)
        return {**rec, "status": "done", "rows": n_rows, "seconds": time.perf_counter() - t0, "error": None,
                **clock.record()}
    except Exception as exc:  # recorded; other shards go on
        msg = f"{type(exc).__name__}: {exc}"
        err_path.write_text(json.dumps({**rec, "error": msg, "traceback": traceback.format_exc()}, indent=1))
        return {**rec, "status": "failed", "rows": 0, "seconds": time.perf_counter() - t0, "error": msg,
                **clock.record()}


@dataclass
class SweepResult:
    """The outcome of :func:`run_sweep`: per-shard records, the predictions of finished shards, totals; for a
    probe sweep also ``probes``, the probe rows (:data:`vlmrobust.probes.shard.PROBE_COLUMNS`)."""

    shards: pd.DataFrame
    table: pd.DataFrame
    seconds: float
    out_dir: Path
    probes: pd.DataFrame | None = None

    @property
    def failed(self) -> pd.DataFrame:
        return self.shards[self.shards.status == "failed"]

    def summary(self) -> dict:
        """Rows, time and items/s of the work done in this run (cached shards excluded from the rate)."""
        done = self.shards[self.shards.status == "done"]
        scored = float((done.n_items * done.n_levels).sum())
        return {"shards": len(self.shards), "done": len(done), "cached": int((self.shards.status == "cached").sum()),
                "failed": len(self.failed), "rows": len(self.table), "seconds": round(self.seconds, 3),
                "items_per_s": round(scored / self.seconds, 3) if self.seconds > 0 and scored else 0.0}

    def timing(self) -> dict:
        """Where the time of this run's finished shards went (:func:`vlmrobust.sweep.timing.summarize`): model
        loading, I/O (clean images, stored levels, shard files), corruption, scoring; rows per second."""
        return summarize(self.shards, self.seconds)


def read_table(out_dir: str | os.PathLike, shards: list[Shard]) -> pd.DataFrame:
    """Concatenate the finished shards of a plan, in plan order."""
    out_dir = Path(out_dir)
    parts = [pd.read_parquet(out_dir / s.pred_filename) for s in shards if (out_dir / s.filename).exists()]
    parts = [p for p in parts if len(p)]
    if not parts:
        from ..schema import PRED_COLUMNS

        return pd.DataFrame(columns=list(PRED_COLUMNS))
    return pd.concat(parts, ignore_index=True)


def read_probes(out_dir: str | os.PathLike, shards: list[Shard]) -> pd.DataFrame:
    """Concatenate the probe rows of the finished probe shards of a plan, in plan order."""
    from ..probes.shard import PROBE_COLUMNS

    out_dir = Path(out_dir)
    parts = [pd.read_parquet(out_dir / s.filename) for s in shards
             if s.kind == "probes" and (out_dir / s.filename).exists()]
    parts = [p for p in parts if len(p)]
    if not parts:
        return pd.DataFrame(columns=list(PROBE_COLUMNS))
    return pd.concat(parts, ignore_index=True)


def run_sweep(spec: SweepSpec, out_dir: str | os.PathLike, *, executor: str = "local", client: Any = None,
              corrupt_fn: Callable | None = None, image_fn: Callable | None = None,
              depth_fn: Callable | None = None, param_fn: Callable | None = None,
              needs_depth: Callable[[str], bool] | None = None, progress: bool | None = None) -> SweepResult:
    """Run (or resume) a sweep into ``out_dir``; finished shards are skipped.

    ``executor="local"`` runs shards in this process; ``"dask"`` submits them to
    a ``dask.distributed`` ``client`` (a ``Client`` or a scheduler address;
    ``LocalCluster``, dask-jobqueue and dask-cuda clusters all work). The
    injectable functions replace ``corrupt.apply``, ``data.load_image``,
    ``data.load_depth`` and the level-parameter lookup (defaults import them
    lazily). Shards that raise are recorded (``<shard>.error.json``) and the
    others run on; a rerun retries them.
    """
    from ..progress import bar as progress_bar

    if executor not in ("local", "dask"):
        raise ValueError(f"executor must be 'local' or 'dask', got {executor!r}")
    if param_fn is None and corrupt_fn is None:
        param_fn = default_param
    if needs_depth is None and corrupt_fn is None:
        needs_depth = _default_needs_depth
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    now = time.time()
    for stale in [*out.glob(".*.parquet.tmp-*"), *out.glob("images/.*.npz.tmp-*")]:
        try:  # left by a killed run; a younger one may be another sweep's write in progress on the same cache
            if now - stale.stat().st_mtime > STALE_SECONDS:
                stale.unlink(missing_ok=True)
        except FileNotFoundError:
            pass
    shards = plan(spec, param_fn)
    kw = dict(corrupt_fn=corrupt_fn, image_fn=image_fn, depth_fn=depth_fn, needs_depth=needs_depth)
    t0 = time.perf_counter()
    records = []
    bar = progress_bar(total=len(shards), desc="sweep shards", progress=progress, unit="shard")
    # shards that need a clean shard run after every clean shard (a second wave on Dask)
    waves = [[s for s in shards if s.clean is None], [s for s in shards if s.clean is not None]]
    try:
        if executor == "local":
            for s in waves[0] + waves[1]:
                bar.set_postfix_str(f"{s.model}/{s.perturbation}")
                records.append(run_shard(spec, s, out, **kw))
                bar.update()
        else:
            own = None
            if client is None or isinstance(client, str):
                from dask.distributed import Client

                own = client = Client(client) if isinstance(client, str) else Client(processes=False)
            try:
                records = _run_dask(spec, waves[0], out, client, kw, bar)
                if waves[1]:
                    records += _run_dask(spec, waves[1], out, client, kw, bar)
            finally:
                if own is not None:
                    own.close()
    finally:
        bar.close()
    seconds = time.perf_counter() - t0
    by_file = {r["file"]: r for r in records}
    frame = pd.DataFrame([by_file[s.filename] for s in shards if s.filename in by_file])
    for part in TIME_PARTS:  # cached shards, and shards whose worker died, spent no time on a part
        frame[f"seconds_{part}"] = frame[f"seconds_{part}"].fillna(0.0) if f"seconds_{part}" in frame else 0.0
    frame["items_per_s"] = np.where(frame.seconds > 0, frame.n_items * frame.n_levels / frame.seconds.where(
        frame.seconds > 0, 1.0), np.nan)
    probe_table = read_probes(out, shards) if spec.probes is not None else None
    return SweepResult(shards=frame, table=read_table(out, shards), seconds=seconds, out_dir=out, probes=probe_table)


def _default_needs_depth(name: str) -> bool:
    """Whether ``vlmrobust.corrupt`` needs a depth map for ``name`` (physical fog, underwater)."""
    from .. import corrupt

    return bool(corrupt.info(name).needs_depth)


def _run_dask(spec, shards, out, client, kw, bar) -> list[dict]:
    from dask.distributed import Client, as_completed

    own = None
    if client is None or isinstance(client, str):
        own = client = Client(client) if isinstance(client, str) else Client(processes=False)
    try:
        futures = {client.submit(run_shard, spec, s, str(out), **kw, key=f"shard-{s.key}-{s.filename}", pure=False): s
                   for s in shards}
        records = []
        for fut in as_completed(futures):
            s = futures[fut]
            try:
                records.append(fut.result())
            except Exception as exc:  # worker died or the task could not run
                records.append({"model": s.model, "perturbation": s.perturbation, "key": s.key, "file": s.filename,
                                "n_items": len(spec.items), "n_levels": len(s.levels), "status": "failed",
                                "rows": 0, "seconds": 0.0, "error": f"{type(exc).__name__}: {exc}"})
            bar.set_postfix_str(f"{s.model}/{s.perturbation}")
            bar.update()
        return records
    finally:
        if own is not None:
            own.close()
