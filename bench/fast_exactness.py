"""The fast scoring path against the Hugging Face forward on every row of a Bench-C-size sweep.

The evaluated organisms score notebook 03's ``benchc`` items (94 per task family, 846 items) clean and
under the 19 ImageNet-C corruptions at five severities, each by its own method, once with
``engine="hf"`` and once with ``engine="fast"`` (:mod:`vlmrobust.score.fast`), through the sweep and its
shard cache (both engines' shards under ``--out``, keyed by engine, so an interrupted run resumes). It
prints, per organism, the rows compared, the largest difference of an option probability and the share of
rows with the same argmax, then one line::

    fast path vs HF on N rows: max |dp| Z (tolerance 1e-5), argmax agreement A

and exits non-zero when a probability differs by more than the tolerance or an answer changes.

Usage::

    .venv/bin/python bench/fast_exactness.py                      # Bench-C's size, one process
    .venv/bin/python bench/fast_exactness.py --workers 2          # a two-worker local Dask cluster
    .venv/bin/python bench/fast_exactness.py --n-per-family 4     # a quick look
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

REPO = Path(__file__).resolve().parents[1]
KEYS = ["model", "item_id", "perturbation", "level", "method"]
TOL = 1e-5


def _table(engine: str, args, models, items, conditions) -> pd.DataFrame:
    from vlmrobust import sweep

    t = time.perf_counter()
    res = sweep.predictions(models, items, conditions, out_dir=Path(args.out) / "shards", engine=engine,
                            executor="dask" if args.workers > 1 else "local", dask_workers=args.workers,
                            batch_size=args.batch_size, torch_threads=1, progress=True)
    print(f"{engine}: {len(res.table):,} rows in {time.perf_counter() - t:.0f} s (cached shards count as 0 s)")
    return res.table


def compare(hf: pd.DataFrame, fast: pd.DataFrame) -> pd.DataFrame:
    """Per model: rows, max |Δp| over every option of every row, and the share of rows with the same argmax.
    Raises ``ValueError`` when the two tables do not hold the same rows."""
    both = hf[KEYS + ["probs", "pred_idx"]].merge(fast[KEYS + ["probs", "pred_idx"]], on=KEYS, how="outer",
                                                   suffixes=("_hf", "_fast"), indicator=True)
    if (both["_merge"] != "both").any():
        raise ValueError(f"{int((both['_merge'] != 'both').sum())} rows are scored by one engine only")
    dp = [float(np.max(np.abs(np.asarray(a, float) - np.asarray(b, float))))
          for a, b in zip(both["probs_hf"], both["probs_fast"], strict=True)]
    both = both.assign(dp=dp, same=both["pred_idx_hf"].to_numpy() == both["pred_idx_fast"].to_numpy())
    return both.groupby("model").agg(rows=("dp", "size"), max_dp=("dp", "max"), argmax_agreement=("same", "mean"))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n-per-family", type=int, default=94, help="synthetic items per task family (Bench-C: 94)")
    ap.add_argument("--workers", type=int, default=1, help="processes (a local Dask cluster when above 1)")
    ap.add_argument("--batch-size", type=int, default=32, help="items per forward pass")
    ap.add_argument("--out", default=str(REPO / ".cache" / "exactness"), help="shard cache of both engines")
    args = ap.parse_args(argv)

    from vlmrobust import corrupt, sweep

    models = sweep.resolve_models([])
    items = sweep.item_source("synth", n_per_family=args.n_per_family, seed=0, image_size=64, max_items=0)
    conditions = corrupt.manifest("imagenet_c")
    print(f"{len(models)} organisms x {len(items)} items x {1 + sum(map(len, conditions.values()))} conditions; "
          f"load average {os.getloadavg()[0]:.2f}")
    per_model = compare(_table("hf", args, models, items, conditions),
                        _table("fast", args, models, items, conditions))
    print(per_model.to_string(float_format=lambda v: f"{v:.3g}"))
    z, a, n = per_model.max_dp.max(), float(np.average(per_model.argmax_agreement, weights=per_model.rows)), \
        int(per_model.rows.sum())
    print(f"fast path vs HF on {n:,} rows: max |dp| {z:.1e} (tolerance {TOL:g}), argmax agreement {a:.6f}")
    return 0 if z <= TOL and a == 1.0 else 1


if __name__ == "__main__":
    sys.exit(main())
