"""Benchmark: time per call of the native ImageNet-C corruptions and the reference, side by side.

For each of the 19 ImageNet-C types and each image size (default 224x224 and
640x480), calls ``vlmrobust.corrupt.apply`` with ``backend="native"`` and
``backend="reference"`` (PyPI imagecorruptions-imaug) alternately on the same
synthetic scene, cycling through severities 1-5 and different keys, until the
reference side has run for ``--budget`` seconds; prints milliseconds per call
of each, their ratio, the geometric-mean speedup per size, the slowest ratio,
and the load average before and after. Both backends run with one OpenCV
thread. Twelve calls of each are a warm-up (numba compiles glass blur's
shuffle loop there, frost photographs are decoded, Poisson tables built).

    .venv/bin/python bench/corruptions.py
    .venv/bin/python bench/corruptions.py --sizes 224x224 --budget 0.5
    .venv/bin/python bench/corruptions.py --sizes 224x224 --parity   # and the parity table (20 images)
"""

from __future__ import annotations

import argparse
import os
import time

import cv2
import numpy as np

from vlmrobust import corrupt, synth
from vlmrobust.corrupt.parity import LegacyDraws, replayable

_PAIRED = replayable()  # random types whose draws can be replayed from the reference stream


def scene(h: int, w: int) -> np.ndarray:
    size = max(h, w)
    img = synth.make_item("count", np.random.default_rng(0), size=size).image
    y0, x0 = (size - h) // 2, (size - w) // 2
    return np.ascontiguousarray(img[y0:y0 + h, x0:x0 + w])


def time_pair(img: np.ndarray, name: str, budget: float) -> tuple[float, float]:
    for k in range(12):  # warm caches (frost photographs, numba, Poisson tables) on both sides
        corrupt.apply(img, name, k % 5 + 1, key=f"warm{k}")
        corrupt.apply(img, name, k % 5 + 1, key=f"warm{k}", backend="reference")
    t_nat = t_ref = 0.0
    n = 0
    while t_ref < budget or n < 10:
        s = n % 5 + 1
        key = f"k{n}"
        t0 = time.perf_counter()
        corrupt.apply(img, name, s, key=key)
        t1 = time.perf_counter()
        corrupt.apply(img, name, s, key=key, backend="reference")
        t2 = time.perf_counter()
        t_nat += t1 - t0
        t_ref += t2 - t1
        n += 1
    return 1e3 * t_nat / n, 1e3 * t_ref / n






def parity_table(n_images: int = 20, seeds: int = 4) -> None:
    import imagecorruptions

    from vlmrobust.corrupt.reference import seeded_global_state

    imgs = [synth.make_item(synth.FAMILIES[i % 9], np.random.default_rng(100 + i), size=64 if i % 5 else 224).image
            for i in range(n_images)]

    def psnr(a, b):
        return 10 * np.log10(255.0**2 / max(np.mean((a.astype(float) - b) ** 2), 1e-12))

    def mad(a, b):
        return float(np.abs(a.astype(int) - b).mean())

    print(f"\nparity with the reference over {n_images} synthetic scenes (64 and 224 px), severities 1..5")
    print("deterministic: mean |native - reference| in grey levels")
    print(f"random: mean PSNR to the clean image, native minus reference, in dB over {n_images} images x {seeds} "
          "seeds (reference PSNR in brackets);")
    print("        [same draws: mean |native - reference| when the native code is fed the reference's own random "
          "draws]")
    for name in corrupt.IMAGENET_C:
        cells, same = [], []
        for s in range(1, 6):
            if not corrupt.info(name).random:
                mean_mad = np.mean([mad(corrupt.apply(im, name, s), corrupt.apply(im, name, s, backend='reference'))
                                    for im in imgs])
                cells.append(f"{mean_mad:6.3f}")
                continue
            pn, pr = [], []
            for j, im in enumerate(imgs):
                for sd in range(seeds):
                    pn.append(psnr(im, corrupt.apply(im, name, s, seed=sd, key=f"i{j}")))
                    pr.append(psnr(im, corrupt.apply(im, name, s, seed=sd, key=f"i{j}", backend="reference")))
            cells.append(f"{np.mean(pn) - np.mean(pr):+5.2f} ({np.mean(pr):4.1f})")
            if name in _PAIRED:
                d = []
                for sd, im in enumerate(imgs):
                    with seeded_global_state(sd):
                        ref = imagecorruptions.corrupt(im, severity=s, corruption_name=name)
                    d.append(mad(_PAIRED[name](im, s, LegacyDraws(sd)), ref))
                same.append(f"{np.mean(d):.3f}")
        kind = "random" if corrupt.info(name).random else "determ"
        tail = f"   [same draws: {' '.join(same)}]" if same else ""
        print(f"{name:18s} {kind}  " + "  ".join(cells) + tail)
    print("frost's PSNR moves by ~4 dB with the frost photograph drawn (one of six), so its plain PSNR difference "
          "is noisy; tests/test_corrupt_parity.py compares it per (image, photograph).")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", nargs="+", default=["224x224", "640x480"], help="WxH sizes")
    ap.add_argument("--budget", type=float, default=0.25, help="seconds of reference time per corruption and size")
    ap.add_argument("--parity", action="store_true", help="also print the parity table")
    args = ap.parse_args()
    cv2.setNumThreads(1)
    print(f"load average before: {' '.join(f'{v:.2f}' for v in os.getloadavg())}; cpus: {os.cpu_count()}; "
          "OpenCV threads: 1")
    for size in args.sizes:
        w, h = (int(v) for v in size.split("x"))
        img = scene(h, w)
        print(f"\n{w}x{h}: ms per call (mean over severities 1-5)")
        print(f"{'corruption':18s} {'native':>9s} {'reference':>10s} {'speedup':>8s}")
        ratios = []
        for name in corrupt.IMAGENET_C:
            nat, ref = time_pair(img, name, args.budget)
            ratios.append(ref / nat)
            flag = "  <-- slower" if ref < nat else ""
            print(f"{name:18s} {nat:9.3f} {ref:10.3f} {ref / nat:7.2f}x{flag}")
        gm = float(np.exp(np.mean(np.log(ratios))))
        worst = int(np.argmin(ratios))
        print(f"{w}x{h}: geometric-mean speedup {gm:.2f}x; slowest ratio {ratios[worst]:.2f}x "
              f"({corrupt.IMAGENET_C[worst]})")
    if args.parity:
        parity_table()
    print(f"\nload average after: {' '.join(f'{v:.2f}' for v in os.getloadavg())}")


if __name__ == "__main__":
    main()
