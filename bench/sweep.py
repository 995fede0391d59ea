"""Benchmark of the sweep engine: rows per second on one and two Dask workers, for letters and text organisms.

For each organism (a letters one and a text one by default), the same sweep
(90 synthetic items, the 19 ImageNet-C perturbations at five levels, clean included: 20 shards) runs
three times, each into a fresh shard folder:

* **in process** — ``executor="local"``, the reference rows;
* **1 worker** and **2 workers** — ``executor="dask"`` on a ``LocalCluster`` of
  single-thread worker processes, started the way notebooks start theirs
  (:func:`vlmrobust.sweep.local_cluster`).

It prints rows/s of wall time for each, the **scaling efficiency** (two-worker
rows/s over one-worker rows/s; 2.0 is perfect on two cores), whether the Dask
rows are identical to the in-process rows, and where the shards' time went
(model loading, I/O, corruption, scoring; :meth:`vlmrobust.sweep.SweepResult.timing`).
``--trim`` also runs the workers with Dask's nanny default ``MALLOC_TRIM_THRESHOLD_=65536``, which
:func:`~vlmrobust.sweep.local_cluster` leaves unset (glibc's adaptive defaults). The load
average is printed before and after: the machine may be shared, and the
two-worker figure needs two idle cores.

Usage::

    .venv/bin/python bench/sweep.py           # tiny-letters-long and tiny-long, 90 items, all 19 corruptions
    .venv/bin/python bench/sweep.py --models tiny-letters-long --n-per-family 10 --perturbations 3
    .venv/bin/python bench/sweep.py --trim    # also one and two workers at Dask's default threshold
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time


def _warm(name: str) -> None:
    """Import torch and the model's classes in this process (what every process pays once, not per sweep)."""
    import vlmrobust.score  # noqa: F401
    from vlmrobust import models

    models.load(name)


def _run(models, items, conds, executor, workers, trim=None):
    """``(result, seconds)``: the sweep's wall time, after the workers have started and imported torch."""
    from vlmrobust import sweep

    out = tempfile.mkdtemp(prefix="bench-sweep-")
    if executor == "local":
        _warm(models[0])
        t = time.perf_counter()
        res = sweep.predictions(models, items, conds, out_dir=out, torch_threads=1, progress=False)
        return res, time.perf_counter() - t
    cluster = sweep.local_cluster(workers, trim_threshold=trim)
    try:
        from dask.distributed import Client

        with Client(cluster) as client:
            client.run(_warm, models[0])
            t = time.perf_counter()
            res = sweep.predictions(models, items, conds, out_dir=out, executor="dask", client=client,
                                    torch_threads=1, progress=False)
            return res, time.perf_counter() - t
    finally:
        cluster.close()


def _same(a, b) -> bool:
    import pandas as pd

    key = ["model", "perturbation", "level", "method", "item_id"]
    a, b = a.sort_values(key).reset_index(drop=True), b.sort_values(key).reset_index(drop=True)
    try:
        pd.testing.assert_frame_equal(a, b, check_exact=True)
        return True
    except AssertionError:
        return False


def main(argv: list[str] | None = None) -> None:
    from vlmrobust import corrupt, sweep
    from vlmrobust.models import zoo

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--models", nargs="+", default=None, help="organisms, each benchmarked alone "
                    "(default: tiny-letters-long and tiny-long)")
    ap.add_argument("--n-per-family", type=int, default=10, help="synthetic items per task family")
    ap.add_argument("--perturbations", type=int, default=19, help="the first N ImageNet-C perturbations")
    ap.add_argument("--trim", action="store_true", help="also run the workers at Dask's default trim threshold")
    args = ap.parse_args(argv)
    models = args.models or [m for m in ("tiny-letters-long", "tiny-long") if m in zoo.names()]
    items = sweep.item_source("synth", n_per_family=args.n_per_family, seed=0, image_size=64)
    conds = dict(list(corrupt.manifest("imagenet_c").items())[: args.perturbations])
    print(f"load average before: {os.getloadavg()}")
    print(f"{len(items)} items x ({sum(map(len, conds.values()))} corrupted conditions + clean); "
          f"perturbations {list(conds)}")
    for name in models:
        print(f"\n== {name} ({zoo.answer_format(name)})")
        runs = [("in process", "local", 0, None), ("1 worker", "dask", 1, None), ("2 workers", "dask", 2, None)]
        if args.trim:
            runs += [("1 worker, Dask trim", "dask", 1, 65536), ("2 workers, Dask trim", "dask", 2, 65536)]
        res = {}
        for label, executor, workers, trim in runs:
            r, wall = _run([name], items, conds, executor, workers, trim)
            res[label] = r
            tm = r.timing()
            shares = ", ".join(f"{p} {tm[f'share_{p}']:.1%}" for p in sweep.TIME_PARTS)
            same = ("" if executor == "local"
                    else f"; rows identical to in process: {_same(r.table, res['in process'].table)}")
            print(f"  {label:22s} {tm['rows']:6d} rows in {wall:6.1f} s = {tm['rows'] / wall:6.1f} rows/s "
                  f"(time in shards: {shares}){same}")
            res[label + " wall"] = wall
        eff = res["1 worker wall"] / res["2 workers wall"]
        print(f"  two-worker efficiency: {eff:.2f}x one worker (target >= 1.7)")
        if args.trim:
            print(f"  at Dask's default trim threshold: 1 worker {res['1 worker, Dask trim wall']:.1f} s, "
                  f"2 workers {res['2 workers, Dask trim wall']:.1f} s")
    print(f"\nload average after: {os.getloadavg()}")


if __name__ == "__main__":
    main()
