r"""Physical visibility: Koschmieder fog and underwater attenuation on metric depth (seed 003).

Seed 003 degrades an image with its metric depth by the image-formation model
(its Eq. 1), applied in **linear RGB** on the **ray distance** ``d`` of every
pixel:

.. math::  I(x) = J(x)\,t(x) + A\,(1 - t(x)),\qquad t(x) = e^{-\beta d(x)},\qquad \beta = K / V,

where ``J`` is the clean linear radiance, ``A`` the veiling light and ``V`` the
visibility range. Koschmieder's law ties ``K`` to the contrast threshold ``eps``
at which an object is no longer seen: ``K = ln(1/eps)``; the default is the 2 %
threshold, ``K = ln 50 = 3.912`` (so ``t(V) = 0.02`` exactly), and the 5 %
meteorological-optical-range convention ``K = ln 20 = 2.996`` is an option
(``convention="5%"``). Fog uses a grey veiling light ``A = 0.8`` (linear RGB,
seed 003 Table III). Depth 0 leaves a pixel unchanged (``t = 1``); the sky
(``d = inf``) becomes the veiling light (``t = 0``).

**Underwater arm.** "Scales the absorption spectrum of pure water": the
attenuation of channel ``c`` (R, G, B at 620, 540, 460 nm) is proportional to
pure-water absorption ``a_w = (0.2755, 0.0474, 0.00979) m^-1`` (seed 003
Table III). Seed 003 does not print how ``V`` is defined for water; the choice
made here keeps fog's definition: **V is the range at which the most
transparent channel still keeps the contrast threshold** (2 %, or 5 % with
``convention="5%"``), exactly as ``V = K / beta`` for fog. Blue is the most
transparent channel, so

.. math::  \beta_c = \frac{K}{V}\,\frac{a_w(c)}{\min_c a_w(c)},\qquad
           \beta_B = \frac{K}{V},\quad \beta_G = 4.84\,\frac{K}{V},\quad \beta_R = 28.1\,\frac{K}{V}

(:func:`water_extinction`). At equal ``V`` the water arm attenuates every
channel at least as fast as fog: blue as fast, green, which carries most of
the luminance, 4.84 times faster, so water is the harsher arm, as seed 003
reports (its half-way visibility ``V_acc`` is larger under water than in fog:
22.1 vs 12.4 m on identification, 33.5 vs 16.8 m on verification, Table V).
Normalising by the channel mean instead would make green attenuate 0.43 times
as fast as fog and water the milder arm, against that ordering.
:func:`luminance_transmittance` gives the share of a grey linear-luminance
difference that survives at a distance (BT.709 weights), and
:func:`water_vs_fog` compares the two arms on a scene. The veiling light is
blue-green, ``B = (0.05, 0.40, 0.45)`` in linear RGB (sRGB about
(63, 170, 179)), an option (``veiling_light``).

**Levels.** Eight visibility levels from 250 m down to 1.953125 m by factors
of two (seed 003 Table III): level ``k`` has ``V = 250 / 2^(k-1)`` m.

**ImageNet-C fog in metres** (seed 003 Table VII, Fig. 7). ImageNet-C fog
multiplies every intensity difference by the gain ``g = m / (m + c)``
(:func:`.weather.fog_gain`). Physical fog multiplies the linear contrast of a
pixel at distance ``d`` by ``t(d)``; the **retained contrast gain** of an image
at visibility ``V`` is the mean of ``t`` over its pixels with finite depth (sky
pixels carry no scene contrast under either model and are left out). The
equivalent visibility ``V_eq`` of a severity solves ``mean t = g`` for that
image; :func:`fog_visibility_table` summarises it over images by the median,
IQR and P90/P10 ratio.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from ._core import PerturbationInfo, check_depth, check_image, register

__all__ = [
    "KOSCHMIEDER", "FOG_AIRLIGHT", "WATER_ABSORPTION", "WATER_VEILING", "LUMINANCE", "VISIBILITY_LEVELS_M",
    "srgb_to_linear", "linear_to_srgb", "extinction", "water_extinction", "transmittance",
    "luminance_transmittance", "physical_fog", "underwater", "water_vs_fog", "retained_contrast_gain",
    "fog_equivalent_visibility", "fog_visibility_table", "register_all",
]

#: Koschmieder constant K = ln(1 / contrast threshold) per convention.
KOSCHMIEDER = {"2%": math.log(50.0), "5%": math.log(20.0)}
FOG_AIRLIGHT = 0.8
#: Pure-water absorption a_w in m^-1 at (620, 540, 460) nm for the (R, G, B) channels.
WATER_ABSORPTION = (0.2755, 0.0474, 0.00979)
WATER_VEILING = (0.05, 0.40, 0.45)
#: Linear-RGB luminance weights of the sRGB primaries (ITU-R BT.709): Y = 0.2126 R + 0.7152 G + 0.0722 B.
LUMINANCE = (0.2126, 0.7152, 0.0722)
VISIBILITY_LEVELS_M = tuple(250.0 / 2**k for k in range(8))
_LEVELS = tuple(range(1, 9))


def srgb_to_linear(v: np.ndarray) -> np.ndarray:
    """IEC 61966-2-1 sRGB decoding of values in [0, 1]."""
    v = np.asarray(v, dtype=np.float64)
    return np.where(v <= 0.04045, v / 12.92, ((v + 0.055) / 1.055) ** 2.4)


def linear_to_srgb(x: np.ndarray) -> np.ndarray:
    """IEC 61966-2-1 sRGB encoding of linear values (clipped to [0, 1])."""
    x = np.clip(x, 0.0, 1.0)
    return np.where(x <= 0.0031308, 12.92 * x, 1.055 * np.power(x, 1 / 2.4) - 0.055)


_DECODE = srgb_to_linear(np.arange(256) / 255.0).astype(np.float32)


def _k(convention: str) -> float:
    if convention not in KOSCHMIEDER:
        raise ValueError(f"convention must be one of {list(KOSCHMIEDER)}, got {convention!r}")
    return KOSCHMIEDER[convention]


def _check_visibility(visibility: float) -> float:
    if isinstance(visibility, bool) or not isinstance(visibility, (int, float, np.floating, np.integer)):
        raise TypeError(f"visibility must be a number of metres, got {type(visibility).__name__}")
    v = float(visibility)
    if not (v > 0) or math.isnan(v):
        raise ValueError(f"visibility must be > 0 metres (inf = clear air), got {visibility}")
    return v


def extinction(visibility: float, convention: str = "2%") -> float:
    """Extinction coefficient ``beta = K / V`` in m^-1 (Koschmieder)."""
    return _k(convention) / _check_visibility(visibility)


def water_extinction(visibility: float, convention: str = "2%") -> np.ndarray:
    """Per-channel extinction of the water arm, ``beta_c = (K / V) a_w(c) / min_c a_w(c)`` in m^-1 (R, G, B).

    ``V`` is the visibility of the most transparent channel (blue): ``beta_B = K / V``.
    """
    a = np.asarray(WATER_ABSORPTION, dtype=np.float64)
    return extinction(visibility, convention) * a / a.min()


def transmittance(depth: np.ndarray, visibility: float, convention: str = "2%") -> np.ndarray:
    """``t = exp(-K d / V)`` for ray distances ``depth`` in metres (``inf`` gives 0, 0 gives 1)."""
    beta = extinction(visibility, convention)
    d = np.asarray(depth, dtype=np.float64)
    if beta == 0.0:  # infinite visibility: clear air, nothing is attenuated
        return np.ones_like(d)
    return np.exp(-beta * d)


def _channel_transmittance(depth: np.ndarray, visibility: float, medium: str, convention: str) -> np.ndarray:
    """``t_c = exp(-beta_c d)`` with a trailing channel axis (fog: one beta for the three channels)."""
    if medium == "fog":
        beta = np.full(3, extinction(visibility, convention))
    elif medium == "water":
        beta = water_extinction(visibility, convention)
    else:
        raise ValueError(f"medium must be 'fog' or 'water', got {medium!r}")
    d = np.asarray(depth, dtype=np.float64)[..., None]
    if beta.max() == 0.0:  # infinite visibility: clear air or clear water (and no 0 * inf at the sky)
        return np.ones(d.shape[:-1] + (3,))
    return np.exp(-d * beta)


def luminance_transmittance(depth: np.ndarray, visibility: float, medium: str = "fog",
                            convention: str = "2%") -> np.ndarray:
    """Share of a grey linear-luminance difference that survives at ray distance ``depth`` metres.

    Eq. (1) maps a difference ``dJ`` between two grey radiances at the same
    distance to ``sum_c Y_c t_c dJ`` in luminance (the veiling light cancels),
    so the luminance transmission is ``sum_c Y_c exp(-beta_c d)`` with the
    BT.709 weights :data:`LUMINANCE`. For fog it equals :func:`transmittance`;
    for water ``beta_c`` is :func:`water_extinction`. ``medium`` is ``"fog"``
    or ``"water"``.
    """
    t = _channel_transmittance(depth, visibility, medium, convention)
    return t @ np.asarray(LUMINANCE, dtype=np.float64)


def _colour(value, argname: str) -> np.ndarray:
    arr = np.broadcast_to(np.asarray(value, dtype=np.float64), (3,))
    if not np.all(np.isfinite(arr)) or (arr < 0).any() or (arr > 1).any():
        raise ValueError(f"{argname} must be in [0, 1] (linear RGB, one value or three), got {value!r}")
    return arr.astype(np.float32)


def _form(image: np.ndarray, t: np.ndarray, veil: np.ndarray) -> np.ndarray:
    """Eq. (1) of seed 003 in linear RGB, re-encoded to sRGB uint8 (rounded)."""
    j = _DECODE[image]
    out = j * t + veil * (np.float32(1) - t)
    return np.rint(linear_to_srgb(out) * 255.0).astype(np.uint8)


def physical_fog(image: np.ndarray, depth: np.ndarray, visibility: float, *, airlight: float = FOG_AIRLIGHT,
                 convention: str = "2%") -> np.ndarray:
    """Koschmieder fog at visibility ``visibility`` metres (seed 003, Eq. 1)."""
    x = check_image(image)
    d = check_depth(depth, x.shape[:2])
    t = transmittance(d, visibility, convention).astype(np.float32)[..., None]
    return _form(x, t, _colour(airlight, "airlight"))


def underwater(image: np.ndarray, depth: np.ndarray, visibility: float, *,
               veiling_light: Sequence[float] = WATER_VEILING, convention: str = "2%") -> np.ndarray:
    """Pure-water attenuation at visibility ``visibility`` metres of the clearest channel (seed 003, Eq. 1).

    ``beta_c`` is :func:`water_extinction`: proportional to ``a_w(c)``, with
    ``beta_B = K / visibility`` for blue, the most transparent channel.
    """
    x = check_image(image)
    d = check_depth(depth, x.shape[:2])
    t = _channel_transmittance(d, visibility, "water", convention).astype(np.float32)
    return _form(x, t, _colour(veiling_light, "veiling_light"))


def water_vs_fog(depth: np.ndarray, visibilities: Sequence[float] = VISIBILITY_LEVELS_M, convention: str = "2%"):
    """The two arms at equal visibility on one scene: mean luminance transmission and its fog equivalent.

    One row per visibility ``V`` (metres): ``fog`` and ``water``, the means of
    :func:`luminance_transmittance` over the pixels of finite depth; their
    ratio ``water_over_fog`` (below 1: water is the harsher arm); and
    ``fog_equivalent_m``, the fog visibility whose mean luminance transmission
    on the same pixels equals the water arm's at ``V``. Raises when every pixel
    is sky (nothing to compare). Returns a DataFrame.
    """
    import pandas as pd

    d = np.asarray(depth, dtype=np.float64)
    d = d[np.isfinite(d)]
    if d.size == 0:
        raise ValueError("depth has no finite pixel (all sky): the two arms cannot be compared")
    rows = []
    for v in visibilities:
        fog = float(np.mean(luminance_transmittance(d, v, "fog", convention)))
        water = float(np.mean(luminance_transmittance(d, v, "water", convention)))
        v_eq = float(_solve_visibility(_k(convention) * d, np.array([water]))[0])
        rows.append({"visibility_m": float(v), "fog": fog, "water": water, "water_over_fog": water / fog,
                     "fog_equivalent_m": v_eq})
    return pd.DataFrame(rows)


def retained_contrast_gain(depth: np.ndarray, visibility: float, convention: str = "2%") -> float:
    """Mean transmittance over the finite-depth pixels (NaN if every pixel is sky)."""
    d = np.asarray(depth, dtype=np.float64)
    d = d[np.isfinite(d)]
    if d.size == 0:
        return float("nan")
    return float(np.mean(np.exp(-extinction(visibility, convention) * d)))


def _solve_visibility(kd: np.ndarray, targets: np.ndarray) -> np.ndarray:
    """The ``V`` solving ``mean exp(-kd / V) = target`` for each target (``kd = K d`` over finite pixels).

    0 when a target is at most the share of zero-depth pixels, ``inf`` when it
    is at least the transmission of the clearest air considered (``V = 1e8`` m).
    """
    from scipy.optimize import brentq

    def g(log_v: float) -> float:
        return float(np.mean(np.exp(-kd / math.exp(log_v))))

    lo, hi = math.log(1e-4), math.log(1e8)
    g_lo, g_hi = g(lo), g(hi)
    out = np.full(len(targets), np.nan)
    for i, target in enumerate(targets):
        if target <= g_lo:
            out[i] = 0.0
        elif target >= g_hi:
            out[i] = math.inf
        else:
            out[i] = math.exp(brentq(lambda lv, t=target: g(lv) - t, lo, hi, xtol=1e-6))
    return out


def fog_equivalent_visibility(image: np.ndarray, depth: np.ndarray, severities: Sequence[int] = (1, 2, 3, 4, 5),
                              convention: str = "2%") -> tuple[np.ndarray, np.ndarray]:
    """ImageNet-C fog gain per severity and the visibility with the same retained contrast gain.

    Returns ``(gain, v_eq)``, arrays over ``severities``; ``v_eq`` in metres
    solves ``mean_{finite d} exp(-K d / V) = gain`` (seed 003 Table VII). NaN
    when the image has no finite depth; 0 when the gain is below the share of
    zero-depth pixels.
    """
    from .weather import fog_gain

    x = check_image(image)
    d = check_depth(depth, x.shape[:2]).astype(np.float64)
    d = d[np.isfinite(d)]
    k = _k(convention)
    gains = np.array([fog_gain(x, int(s)) for s in severities])
    if d.size == 0:
        return gains, np.full(len(gains), np.nan)
    return gains, _solve_visibility(k * d, gains)


def fog_visibility_table(images: Sequence[np.ndarray], depths: Sequence[np.ndarray],
                         severities: Sequence[int] = (1, 2, 3, 4, 5), convention: str = "2%"):
    """Seed 003 Table VII: per severity the mean gain and the median, IQR and P90/P10 of ``V_eq``.

    Returns ``(per_image, summary)`` DataFrames; ``per_image`` has one row per
    (image, severity) with ``gain`` and ``v_eq_m``.
    """
    import pandas as pd

    if len(images) != len(depths) or len(images) == 0:
        raise ValueError(f"images and depths must be non-empty and of equal length, got {len(images)} and "
                         f"{len(depths)}")
    rows = []
    for i, (img, dep) in enumerate(zip(images, depths, strict=True)):
        gains, veq = fog_equivalent_visibility(img, dep, severities, convention)
        rows += [{"image": i, "severity": int(s), "gain": float(gv), "v_eq_m": float(v)}
                 for s, gv, v in zip(severities, gains, veq, strict=True)]
    per_image = pd.DataFrame(rows)
    summary = []
    for s, grp in per_image.groupby("severity", sort=True):
        v = grp["v_eq_m"].to_numpy()
        v = v[np.isfinite(v)]
        q = np.quantile(v, [0.1, 0.25, 0.5, 0.75, 0.9]) if v.size else np.full(5, np.nan)
        summary.append({"severity": int(s), "mean_gain": float(grp["gain"].mean()), "median_v_m": q[2],
                        "iqr_lo_m": q[1], "iqr_hi_m": q[3], "p10_m": q[0], "p90_m": q[4],
                        "p90_over_p10": q[4] / q[0] if q[0] > 0 else np.nan, "n_images": int(len(grp)),
                        "n_without_solution": int(len(grp) - v.size)})
    return per_image, pd.DataFrame(summary)


def _fog_level(x: np.ndarray, level: int, rng, depth: np.ndarray, *, airlight: float = FOG_AIRLIGHT,
               convention: str = "2%") -> np.ndarray:
    return physical_fog(x, depth, VISIBILITY_LEVELS_M[level - 1], airlight=airlight, convention=convention)


def _water_level(x: np.ndarray, level: int, rng, depth: np.ndarray, *, veiling_light=WATER_VEILING,
                 convention: str = "2%") -> np.ndarray:
    return underwater(x, depth, VISIBILITY_LEVELS_M[level - 1], veiling_light=veiling_light,
                      convention=convention)


#: Implementation version of the underwater arm (enters sweep shard keys): 2 = V of the clearest channel
#: (version 1 scaled the absorption by its channel mean, which made water milder than fog).
WATER_VERSION = 2


def register_all() -> None:
    """Register the fog and underwater visibility levels (levels 1..8 = 250 m .. 1.95 m)."""
    register(PerturbationInfo(
        name="fog_physical", family="visibility", source="003", levels=_LEVELS, params=VISIBILITY_LEVELS_M,
        param_name="visibility V", unit="m", random=False, needs_depth=True,
        description="Koschmieder fog on metric ray distance in linear RGB (veiling light 0.8)",
        options=("airlight", "convention")), _fog_level)
    register(PerturbationInfo(
        name="underwater", family="visibility", source="003", levels=_LEVELS, params=VISIBILITY_LEVELS_M,
        param_name="visibility V (clearest channel, blue)", unit="m", random=False, needs_depth=True,
        description="Pure-water absorption per channel on metric ray distance, V of the clearest channel, "
                    "blue-green veiling light",
        options=("veiling_light", "convention"),
        extra={"version": WATER_VERSION}), _water_level)
