"""Frequency perturbations of seed 002 §6 and App. F.

**Band-limited noise** (App. F.1): ``x' = clip(x + eps * eta_band)`` where
``eta_band`` is Gaussian white noise restricted to a band of spatial
frequencies and scaled to unit standard deviation (so ``eps`` is the noise
standard deviation as a fraction of full scale). Bands use the normalised radial
frequency ``rho = |f| / 0.5`` (1 = Nyquist along an axis, cycles per pixel
``f`` from the DFT grid): **low** ``rho <= 0.25``, **high** ``rho > 0.5``,
**all** every non-zero frequency. The DC term (the mean) is removed from every
band, the low band included: a low-band draw is not a global brightness shift,
exactly as the full band is not (implementation version 2 of ``noise_low``;
version 1 kept the low band's DC). Levels: ``eps in {0.02, 0.04, 0.08, 0.16,
0.32}`` (the paper sweeps eps without listing values; its PGD budget 8/255 ~
0.03 lies in this range).

**Frequency ablation** (App. F.2): low-pass keep retains ``rho <= c`` (removes
high frequencies), high-pass keep retains ``rho > c`` (removes low
frequencies) with an ideal mask on each channel's DFT. High-pass keep also
keeps the mean (DC term) so the image stays in range. The paper records, per
image, the smallest cutoff at which the answer flips. Levels are ordered by
severity: low-pass ``c = 0.8, 0.4, 0.2, 0.1, 0.05``; high-pass
``c = 0.05, 0.1, 0.2, 0.4, 0.8``. :func:`band_filter` takes any cutoff for
finer sweeps: :func:`fine_ablation` applies the 24 log-spaced cutoffs
:data:`FINE_CUTOFFS` (``0.02 .. 1.42``; 1.42 is past the corner frequency
``sqrt(2)``, so it keeps everything) as the unregistered conditions
``lowpass_fine`` and ``highpass_fine`` (level 1 the mildest), for sweeps that
pass it as their corruption function.

**Spectra of perturbations** (App. F.3-F.4): :func:`band_mask` and
:func:`band_energy_share` measure how much of a difference image lies in a band,
:func:`radial_profile` its mean power per radial frequency bin (Fig. 20), and
:func:`spectral_drift` the relative change of each band, including phase:
``D_band = sum_band |X' - X|^2 / sum_band |X|^2`` over the channels' DFTs
(:data:`DRIFT_BANDS`: low ``0 < rho <= 0.25``, mid ``0.25 < rho <= 0.5``, high
``rho > 0.5``; DC left out, as in the noise). A cyclic shift keeps every
magnitude and changes only phases, so it shows up here.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from ._core import PerturbationInfo, register, to_uint8_round

__all__ = ["BANDS", "NOISE_EPS", "LOWPASS_CUTOFFS", "HIGHPASS_CUTOFFS", "FINE_CUTOFFS", "DRIFT_BANDS",
           "radial_frequency", "band_filter", "band_noise", "band_mask", "band_energy_share", "radial_profile",
           "spectral_drift", "fine_ablation", "fine_param", "register_all"]

BANDS = {"low": (0.0, 0.25), "high": (0.5, np.inf), "all": (0.0, np.inf)}
NOISE_EPS = (0.02, 0.04, 0.08, 0.16, 0.32)
LOWPASS_CUTOFFS = (0.8, 0.4, 0.2, 0.1, 0.05)
HIGHPASS_CUTOFFS = (0.05, 0.1, 0.2, 0.4, 0.8)
FINE_CUTOFFS = tuple(float(c) for c in np.geomspace(0.02, 1.42, 24))
DRIFT_BANDS = {"low": (0.0, 0.25), "mid": (0.25, 0.5), "high": (0.5, np.inf)}
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
    eta = band_filter(white, lo, hi) if band != "all" else white
    eta = eta - eta.mean(axis=(0, 1), keepdims=True)  # no DC in any band (the low band's like the full band's)
    std = eta.std()
    return eta / std if std > 0 else eta


def band_mask(h: int, w: int, band: str | tuple[float, float]) -> np.ndarray:
    """Boolean ``rfft2`` mask of a band: a name of :data:`BANDS` / :data:`DRIFT_BANDS` or ``(lo, hi)``, i.e.
    ``lo < rho <= hi``; DC (``rho = 0``) is never in it."""
    lo, hi = band if isinstance(band, tuple) else {**BANDS, **DRIFT_BANDS}[band]
    rho = radial_frequency(h, w)
    return (rho > lo) & (rho <= hi)


def _weights(w: int) -> np.ndarray:
    """``rfft2`` column weights so that sums over the half spectrum count every frequency of the full one."""
    wt = np.full(w // 2 + 1, 2.0)
    wt[0] = 1.0
    if w % 2 == 0:
        wt[-1] = 1.0
    return wt


def _power(x: np.ndarray) -> np.ndarray:
    """Power ``|X|^2`` of ``H x W (x C)`` arrays on the ``rfft2`` grid, summed over channels, column-weighted."""
    spec = np.fft.rfft2(np.asarray(x, dtype=np.float64), axes=(0, 1))
    p = np.abs(spec) ** 2
    p = p.sum(axis=tuple(range(2, p.ndim))) if p.ndim > 2 else p
    return p * _weights(x.shape[1])[None, :]


def band_energy_share(delta: np.ndarray, band: str | tuple[float, float]) -> float:
    """Share of a perturbation's energy (DC excluded) that lies in ``band`` (Parseval on the full spectrum)."""
    p = _power(delta)
    rho = radial_frequency(*delta.shape[:2])
    total = p[rho > 0].sum()
    return float(p[band_mask(*delta.shape[:2], band)].sum() / total) if total > 0 else float("nan")


def radial_profile(x: np.ndarray, n_bins: int = 24) -> tuple[np.ndarray, np.ndarray]:
    """Mean power per radial-frequency bin (``rho`` from 0 to sqrt 2, DC excluded): ``(bin centres, power)``."""
    p = _power(x)
    rho = radial_frequency(*x.shape[:2])
    edges = np.linspace(0.0, np.sqrt(2.0), n_bins + 1)
    which = np.clip(np.digitize(rho, edges[1:-1]), 0, n_bins - 1)
    wt = np.broadcast_to(_weights(x.shape[1])[None, :], rho.shape)
    ok = rho > 0
    num = np.bincount(which[ok], weights=p[ok], minlength=n_bins)
    den = np.bincount(which[ok], weights=wt[ok], minlength=n_bins)
    with np.errstate(invalid="ignore", divide="ignore"):
        return 0.5 * (edges[1:] + edges[:-1]), num / den


def spectral_drift(clean: np.ndarray, pert: np.ndarray) -> dict[str, float]:
    """Relative spectral change per band of :data:`DRIFT_BANDS` (see the module docstring), phase included."""
    d = _power(np.asarray(pert, np.float64) - np.asarray(clean, np.float64))
    p = _power(clean)
    out = {}
    for name in DRIFT_BANDS:
        m = band_mask(*clean.shape[:2], name)
        out[name] = float(d[m].sum() / p[m].sum()) if p[m].sum() > 0 else float("nan")
    return out


def _fine_cutoff(name: str, level: int) -> float:
    if name not in ("lowpass_fine", "highpass_fine") or not 1 <= level <= len(FINE_CUTOFFS):
        raise ValueError(f"fine ablation: name must be lowpass_fine or highpass_fine and level in "
                         f"1..{len(FINE_CUTOFFS)}, got {name!r}, {level!r}")
    return FINE_CUTOFFS[-level] if name == "lowpass_fine" else FINE_CUTOFFS[level - 1]


def fine_param(name: str, level: int) -> float:
    """The cutoff of a fine-ablation level (NaN for other perturbations: the sweep then looks them up)."""
    if name in ("lowpass_fine", "highpass_fine") and level > 0:
        return _fine_cutoff(name, level)
    from ._core import info

    return float(info(name).param(level)) if name != "clean" else float("nan")


def fine_ablation(image: np.ndarray, name: str, level: int, *, seed: int = 0, key: str = "", depth=None,
                  backend: str = "native") -> np.ndarray:
    """``lowpass_fine`` / ``highpass_fine`` at the cutoffs :data:`FINE_CUTOFFS` (level 1 mildest), any other
    name through :func:`vlmrobust.corrupt.apply` (a corruption function for the sweep engine)."""
    if name not in ("lowpass_fine", "highpass_fine"):
        from ._core import apply

        return apply(image, name, level, seed=seed, key=key, depth=depth, backend=backend)
    c = _fine_cutoff(name, level)
    x = np.asarray(image, dtype=np.float64)
    y = band_filter(x, 0.0, c) if name == "lowpass_fine" else band_filter(x, c, np.inf, keep_dc=True)
    return to_uint8_round(y)


fine_ablation.version = 1  # enters sweep keys through the corruption function's identity


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
        extra = {"band_rho": BANDS[band], **({"version": 2} if band == "low" else {})}
        register(PerturbationInfo(name=f"noise_{band}", family="frequency", source="002", levels=_LEVELS,
                                  params=NOISE_EPS, param_name="noise std eps", unit="fraction of full scale",
                                  random=True, description=fn.__doc__, extra=extra), fn)
    register(PerturbationInfo(name="lowpass_keep", family="frequency", source="002", levels=_LEVELS,
                              params=LOWPASS_CUTOFFS, param_name="cutoff c", unit="fraction of Nyquist",
                              random=False, description=lowpass_keep.__doc__.splitlines()[0]), lowpass_keep)
    register(PerturbationInfo(name="highpass_keep", family="frequency", source="002", levels=_LEVELS,
                              params=HIGHPASS_CUTOFFS, param_name="cutoff c", unit="fraction of Nyquist",
                              random=False, description=highpass_keep.__doc__.splitlines()[0]), highpass_keep)
