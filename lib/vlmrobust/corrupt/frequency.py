"""Frequency perturbations of seed 002 §6 and App. F.

**Band-limited noise** (App. F.1): ``x' = clip(x + eps * eta_band)`` where
``eta_band`` is Gaussian white noise restricted to a band of spatial
frequencies and scaled to unit standard deviation (so ``eps`` is the noise
standard deviation as a fraction of full scale). Bands use the normalised radial
frequency ``rho = |f| / 0.5`` (1 = Nyquist along an axis, cycles per pixel
``f`` from the DFT grid): **low** ``rho <= 0.25``, **high** ``rho > 0.5``,
**all** every non-zero frequency. Levels: ``eps in {0.02, 0.04, 0.08, 0.16,
0.32}`` (the paper sweeps eps without listing values; its PGD budget 8/255 ~
0.03 lies in this range).

**Frequency ablation** (App. F.2): low-pass keep retains ``rho <= c`` (removes
high frequencies), high-pass keep retains ``rho > c`` (removes low
frequencies) with an ideal mask on each channel's DFT. High-pass keep also
keeps the mean (DC term) so the image stays in range. The paper records, per
image, the smallest cutoff at which the answer flips. Levels are ordered by
severity: low-pass ``c = 0.8, 0.4, 0.2, 0.1, 0.05``; high-pass
``c = 0.05, 0.1, 0.2, 0.4, 0.8``. :func:`band_filter` takes any cutoff for
finer sweeps.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from ._core import PerturbationInfo, register, to_uint8_round

__all__ = ["BANDS", "NOISE_EPS", "LOWPASS_CUTOFFS", "HIGHPASS_CUTOFFS", "radial_frequency", "band_filter",
           "band_noise", "register_all"]

BANDS = {"low": (0.0, 0.25), "high": (0.5, np.inf), "all": (0.0, np.inf)}
NOISE_EPS = (0.02, 0.04, 0.08, 0.16, 0.32)
LOWPASS_CUTOFFS = (0.8, 0.4, 0.2, 0.1, 0.05)
HIGHPASS_CUTOFFS = (0.05, 0.1, 0.2, 0.4, 0.8)
_LEVELS = (1, 2, 3, 4, 5)


@lru_cache(maxsize=32)
def radial_frequency(h: int, w: int) -> np.ndarray:
    """``rho = |f| / 0.5`` on the ``rfft2`` grid of an ``h x w`` image (read-only)."""
    fy = np.fft.fftfreq(h)[:, None]
    fx = np.fft.rfftfreq(w)[None, :]
    rho = np.sqrt(fx**2 + fy**2) / 0.5
    rho.setflags(write=False)
    return rho


def band_filter(x: np.ndarray, lo: float, hi: float, keep_dc: bool = False) -> np.ndarray:
    """Keep the frequencies with ``lo < rho <= hi`` (``lo = 0`` includes DC) of a float ``H x W x C`` array."""
    h, w = x.shape[:2]
    rho = radial_frequency(h, w)
    mask = (rho <= hi) & ((rho > lo) if lo > 0 else True)
    if keep_dc:
        mask = mask | (rho == 0)
    spec = np.fft.rfft2(x, axes=(0, 1))
    spec *= mask[..., None] if x.ndim == 3 else mask
    return np.fft.irfft2(spec, s=(h, w), axes=(0, 1))


def band_noise(shape: tuple[int, ...], band: str, rng: np.random.Generator) -> np.ndarray:
    """Gaussian noise restricted to ``band`` ("low", "high", "all"), unit standard deviation."""
    if band not in BANDS:
        raise ValueError(f"band must be one of {list(BANDS)}, got {band!r}")
    lo, hi = BANDS[band]
    white = rng.standard_normal(shape)
    eta = band_filter(white, lo, hi) if band != "all" else white - white.mean(axis=(0, 1), keepdims=True)
    std = eta.std()
    return eta / std if std > 0 else eta


def _noise(band: str):
    def fn(x: np.ndarray, level: int, rng: np.random.Generator, depth=None) -> np.ndarray:
        eta = band_noise(x.shape, band, rng)
        return to_uint8_round(x + (255.0 * NOISE_EPS[level - 1]) * eta)

    fn.__name__ = f"noise_{band}"
    fn.__doc__ = f"Band-limited Gaussian noise ({band} band), std eps = 0.02 .. 0.32 of full scale."
    return fn


def lowpass_keep(x: np.ndarray, level: int, rng=None, depth=None) -> np.ndarray:
    """Low-pass keep: retain rho <= c (c = 0.8 .. 0.05), an ideal mask per channel."""
    return to_uint8_round(band_filter(x.astype(np.float64), 0.0, LOWPASS_CUTOFFS[level - 1]))


def highpass_keep(x: np.ndarray, level: int, rng=None, depth=None) -> np.ndarray:
    """High-pass keep: retain rho > c (c = 0.05 .. 0.8) and the mean, an ideal mask per channel."""
    return to_uint8_round(band_filter(x.astype(np.float64), HIGHPASS_CUTOFFS[level - 1], np.inf, keep_dc=True))


def register_all() -> None:
    """Register band-limited noise and the two frequency ablations."""
    for band in ("low", "high", "all"):
        fn = _noise(band)
        register(PerturbationInfo(name=f"noise_{band}", family="frequency", source="002", levels=_LEVELS,
                                  params=NOISE_EPS, param_name="noise std eps", unit="fraction of full scale",
                                  random=True, description=fn.__doc__,
                                  extra={"band_rho": BANDS[band]}), fn)
    register(PerturbationInfo(name="lowpass_keep", family="frequency", source="002", levels=_LEVELS,
                              params=LOWPASS_CUTOFFS, param_name="cutoff c", unit="fraction of Nyquist",
                              random=False, description=lowpass_keep.__doc__.splitlines()[0]), lowpass_keep)
    register(PerturbationInfo(name="highpass_keep", family="frequency", source="002", levels=_LEVELS,
                              params=HIGHPASS_CUTOFFS, param_name="cutoff c", unit="fraction of Nyquist",
                              random=False, description=highpass_keep.__doc__.splitlines()[0]), highpass_keep)
