"""Items per second of the synthetic world generator (one core, default 64 x 64).

Run:  .venv/bin/python bench/synth.py [--n 300] [--size 64]

Prints, per family and overall, the rate of ``synth.make_item`` (the training
fast path) and of ``synth.generate`` (item table, which also writes refs and
meta JSON), beside the load average of the machine so that a reader can judge
how busy it was. The goal of the project is >= 500 items/s overall at 64 x 64.
"""

from __future__ import annotations

import argparse
import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import time  # noqa: E402

from vlmrobust import repro, synth  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=300, help="items per family")
    ap.add_argument("--size", type=int, default=64, help="image side in pixels")
    args = ap.parse_args()
    n, size = args.n, args.size

    for fam in synth.FAMILIES:  # warm-up: ray grids, glyph bitmaps, imports
        synth.make_item(fam, repro.rng("bench-warm", fam), size=size)

    print(f"vlmrobust.synth bench: {n} items per family, size {size}x{size}, pid {os.getpid()}")
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print(f"{'family':<10}{'make_item/s':>14}")
    total_t = 0.0
    for fam in synth.FAMILIES:
        t0 = time.perf_counter()
        for i in range(n):
            synth.make_item(fam, repro.rng("bench", fam, i), size=size)
        dt = time.perf_counter() - t0
        total_t += dt
        print(f"{fam:<10}{n / dt:>14.0f}")
    overall = n * len(synth.FAMILIES) / total_t
    print(f"{'overall':<10}{overall:>14.0f}   (make_item, all families)")
    t0 = time.perf_counter()
    synth.generate(n, seed=0, size=size)
    gen = n * len(synth.FAMILIES) / (time.perf_counter() - t0)
    print(f"{'generate':<10}{gen:>14.0f}   (item table incl. refs and meta JSON)")
    print(f"load average after:  {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print(f"goal 500 items/s at 64x64: make_item {overall / 500:.2f}x of goal")


if __name__ == "__main__":
    main()
