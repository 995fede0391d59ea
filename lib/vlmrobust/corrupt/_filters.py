"""Vectorised building blocks shared by the ImageNet-C implementations.

Each helper reproduces one step of the published ImageNet-C code (Hendrycks &
Dietterich 2019, as maintained in PyPI ``imagecorruptions-imaug``, the protocol
of seed 000 §IV-B) with OpenCV/NumPy primitives instead of per-pixel Python or
float64 SciPy calls. Where the published step is defined by a library call
(scikit-image's ``gaussian``, SciPy's ``zoom``), the helper states the mapping.
"""

from __future__ import annotations

import math
from functools import lru_cache

import cv2
import numpy as np

__all__ = [
    "gaussian", "disk_kernel", "motion_blur", "clipped_zoom", "plasma_fractal", "poisson_uint8",
    "glass_shuffle",
]

_BORDERS = {"nearest": cv2.BORDER_REPLICATE, "reflect": cv2.BORDER_REFLECT, "mirror": cv2.BORDER_REFLECT_101}


def gaussian(x: np.ndarray, sigma: float | tuple[float, float], *, truncate: float = 4.0,
             mode: str = "nearest") -> np.ndarray:
    """``skimage.filters.gaussian`` (SciPy ``gaussian_filter``) on the two image axes.

    SciPy's kernel radius is ``int(truncate * sigma + 0.5)``; its ``nearest``
    mode is OpenCV's replicate border and its ``reflect`` mode (half-sample
    symmetric) is OpenCV's ``BORDER_REFLECT``. ``sigma`` is one value or
    ``(sigma_rows, sigma_cols)``. Works on float32/float64 ``H×W`` or ``H×W×C``.
    """
    sy, sx = (sigma, sigma) if np.isscalar(sigma) else (float(sigma[0]), float(sigma[1]))
    ry, rx = int(truncate * sy + 0.5), int(truncate * sx + 0.5)
    return cv2.GaussianBlur(x, (2 * rx + 1, 2 * ry + 1), sigmaX=sx, sigmaY=sy, borderType=_BORDERS[mode])


@lru_cache(maxsize=16)
def disk_kernel(radius: int, alias_blur: float) -> np.ndarray:
    """The anti-aliased disk of defocus blur (a filled circle, Gaussian-smoothed, sum 1)."""
    if radius <= 8:
        ax, ksize = np.arange(-8, 8 + 1), (3, 3)
    else:
        ax, ksize = np.arange(-radius, radius + 1), (5, 5)
    xx, yy = np.meshgrid(ax, ax)
    disk = np.array((xx**2 + yy**2) <= radius**2, dtype=np.float32)
    disk /= np.sum(disk)
    out = cv2.GaussianBlur(disk, ksize=ksize, sigmaX=alias_blur)
    out.setflags(write=False)
    return out


def _motion_taps(radius: int, sigma: float, angle: float, shape: tuple[int, int]):
    """Offsets ``(dy, dx)`` and weights of the published motion-blur line kernel."""
    width = radius * 2 + 1
    k = np.exp(-(np.arange(width) ** 2) / (2 * sigma**2)) / (np.sqrt(2 * np.pi) * sigma)
    k = k / np.sum(k)
    point = (width * np.sin(np.deg2rad(angle)), width * np.cos(np.deg2rad(angle)))
    hypot = math.hypot(point[0], point[1])
    taps = []
    for i in range(width):
        dy = -math.ceil(((i * point[0]) / hypot) - 0.5)
        dx = -math.ceil(((i * point[1]) / hypot) - 0.5)
        if abs(dy) >= shape[0] or abs(dx) >= shape[1]:
            break  # the published code stops once the motion leaves the image
        taps.append((dy, dx, float(k[i])))
    return taps


def motion_blur(x: np.ndarray, radius: int, sigma: float, angle: float) -> np.ndarray:
    """Directional blur: ``out(y, x) = sum_i k_i * x(clamp(y - dy_i), clamp(x - dx_i))``.

    The published code shifts the image ``2 r + 1`` times with replicated edges
    and accumulates; here the image is padded once (replicated border) and the
    shifted windows are views of the padded array, accumulated in float32 with
    ``cv2.scaleAdd``. Returns float32.
    """
    taps = _motion_taps(radius, sigma, angle, x.shape[:2])
    r = max(max(abs(dy), abs(dx)) for dy, dx, _ in taps)
    h, w = x.shape[:2]
    src = x if x.dtype == np.float32 else x.astype(np.float32)
    padded = cv2.copyMakeBorder(src, r, r, r, r, cv2.BORDER_REPLICATE)
    acc = np.zeros_like(src)
    for dy, dx, weight in taps:
        cv2.scaleAdd(padded[r - dy:r - dy + h, r - dx:r - dx + w], weight, acc, dst=acc)
    return acc


def clipped_zoom(x: np.ndarray, zoom: float, out_shape: tuple[int, int] | None = None) -> np.ndarray:
    """Zoom into the centre by ``zoom`` as ``scipy.ndimage.zoom(order=1)`` of the centre crop.

    The crop is ``ceil(n / zoom)`` pixels centred with ``(n - crop) // 2``; SciPy
    maps output index ``i`` to crop coordinate ``i (crop - 1) / (out - 1)`` with
    ``out = round(crop * zoom)``. That affine map runs through
    ``cv2.warpAffine`` (bilinear). ``out_shape`` limits the rows/cols computed
    (the published code keeps the top-left ``H×W``); default: the full zoom.
    """
    h, w = x.shape[:2]
    ch0 = int(np.ceil(h / float(zoom)))
    top0 = (h - ch0) // 2
    ch1 = int(np.ceil(w / float(zoom)))
    top1 = (w - ch1) // 2
    out0, out1 = int(round(ch0 * zoom)), int(round(ch1 * zoom))
    a0 = (ch0 - 1) / (out0 - 1) if out0 > 1 else 0.0
    a1 = (ch1 - 1) / (out1 - 1) if out1 > 1 else 0.0
    if out_shape is not None:
        out0, out1 = min(out0, out_shape[0]), min(out1, out_shape[1])
    m = np.array([[a1, 0.0, top1], [0.0, a0, top0]], dtype=np.float64)
    return cv2.warpAffine(x, m, (out1, out0), flags=cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP,
                          borderMode=cv2.BORDER_REPLICATE)


def _roll(a: np.ndarray, shift: int, axis: int) -> np.ndarray:
    """``np.roll`` by +-1 along one axis of a small 2-D array, without its generic overhead."""
    if axis == 0:
        return np.concatenate((a[-shift:], a[:-shift])) if shift > 0 else np.concatenate((a[1:], a[:1]))
    return (np.concatenate((a[:, -shift:], a[:, :-shift]), axis=1) if shift > 0
            else np.concatenate((a[:, 1:], a[:, :1]), axis=1))


def plasma_fractal(rng: np.random.Generator, mapsize: int = 256, wibbledecay: float = 3) -> np.ndarray:
    """Diamond-square height map in [0, 1] (the haze of ImageNet-C fog), float32.

    Same recursion as the published code (corner, square and diamond steps with
    wrap-around neighbours and a random 'wibble' that decays by ``wibbledecay``
    per octave). The uniform draws come from ``rng`` in one call, in the order
    the published code draws them.
    """
    if mapsize < 2 or mapsize & (mapsize - 1):
        raise ValueError(f"mapsize must be a power of two >= 2, got {mapsize}")
    a = np.empty((mapsize, mapsize), dtype=np.float32)
    a[0, 0] = 0
    n_octaves = mapsize.bit_length() - 1
    u = rng.random(3 * sum(4**i for i in range(n_octaves)), dtype=np.float32)
    pos = 0
    step = mapsize
    wibble = 100.0

    def wibbled_mean(arr: np.ndarray) -> np.ndarray:
        nonlocal pos
        noise = u[pos:pos + arr.size].reshape(arr.shape)
        pos += arr.size
        arr *= np.float32(0.25)
        arr += noise * np.float32(2 * wibble * wibble) - np.float32(wibble * wibble)
        return arr

    while step >= 2:
        half = step // 2
        corner = a[0:mapsize:step, 0:mapsize:step]
        sq = corner + _roll(corner, -1, 0)
        sq += _roll(sq, -1, 1)
        a[half:mapsize:step, half:mapsize:step] = wibbled_mean(sq)
        dr = a[half:mapsize:step, half:mapsize:step]
        ul = a[0:mapsize:step, 0:mapsize:step]
        lt = dr + _roll(dr, 1, 0)
        lt += ul + _roll(ul, -1, 1)
        a[0:mapsize:step, half:mapsize:step] = wibbled_mean(lt)
        tt = dr + _roll(dr, 1, 1)
        tt += ul + _roll(ul, -1, 0)
        a[half:mapsize:step, 0:mapsize:step] = wibbled_mean(tt)
        step //= 2
        wibble /= wibbledecay
    a -= a.min()
    a /= a.max()
    return a


_N_GUIDE = 1024


@lru_cache(maxsize=16)
def _poisson_tables(scale: float, n_guide: int = _N_GUIDE) -> tuple[np.ndarray, np.ndarray, int]:
    """CDF and guide tables of Poisson(v * scale / 255) for every grey level v."""
    from scipy.special import pdtr

    lam = np.arange(256, dtype=np.float64) / 255.0 * scale
    kmax = int(scale + 12 * math.sqrt(scale) + 30)
    k = np.arange(kmax, dtype=np.float64)
    cdf = pdtr(k[None, :], lam[:, None])
    cdf[:, -1] = 2.0  # tail beyond kmax (< 1e-16) folded into the last bin; ends every search
    u = np.arange(n_guide, dtype=np.float64) / n_guide
    guide = np.empty((256, n_guide), dtype=np.int32)
    for v in range(256):
        guide[v] = np.searchsorted(cdf[v], u, side="right")
    return cdf.ravel(), guide.ravel(), kmax


def poisson_uint8(img: np.ndarray, scale: float, rng: np.random.Generator) -> np.ndarray:
    """Draw ``Poisson(img / 255 * scale)`` for a uint8 array, exactly, by guided inversion.

    The rate takes at most 256 values, so each pixel's count is the inverse CDF
    of a uniform draw, started from a 1024-bin guide table and advanced while the
    CDF is still <= u (usually zero or one step). Returns int32 counts.
    """
    cdf, guide, kmax = _poisson_tables(float(scale), _N_GUIDE)
    n_guide = guide.size // 256
    u = rng.random(img.shape)
    v = img.astype(np.int32)
    base = v * kmax
    k = guide[v * n_guide + (u * n_guide).astype(np.int32)]
    idx = np.flatnonzero(cdf[base + k] <= u)
    while idx.size:
        k.flat[idx] += 1
        keep = cdf[base.flat[idx] + k.flat[idx]] <= u.flat[idx]
        idx = idx[keep]
    return k


_SHUFFLE = None


def _shuffle_kernel():
    global _SHUFFLE
    if _SHUFFLE is None:
        from numba import njit

        @njit(cache=False, nogil=True)
        def shuffle(x, offsets, lo, hi_h, hi_w):  # pragma: no cover - compiled
            n_it = offsets.shape[0]
            for it in range(n_it):
                j = 0
                for h in range(hi_h, lo, -1):
                    for w in range(hi_w, lo, -1):
                        dy = offsets[it, j, 0]
                        dx = offsets[it, j, 1]
                        j += 1
                        hp = h + dy
                        wp = w + dx
                        for c in range(x.shape[2]):
                            x[h, w, c] = x[hp, wp, c]
            return x

        _SHUFFLE = shuffle
    return _SHUFFLE


def glass_shuffle(x: np.ndarray, max_delta: int, iterations: int, rng: np.random.Generator) -> np.ndarray:
    """The local pixel shuffle of glass blur, in place on a uint8 ``H×W×3`` array.

    The published loop visits rows ``H - d .. d + 1`` and columns
    ``W - d .. d + 1`` backwards and, because its tuple 'swap' assigns NumPy
    views, copies the pixel at a random offset ``(dy, dx)`` in ``[-d, d)`` onto
    the visited pixel. The visiting order makes each pass sequential, so the
    loop is compiled (numba) and fed offsets drawn in one call from ``rng``.
    """
    h, w = x.shape[:2]
    d = int(max_delta)
    n_h, n_w = max(h - 2 * d, 0), max(w - 2 * d, 0)
    offsets = rng.integers(-d, d, size=(iterations, n_h * n_w, 2), dtype=np.int64)
    return _shuffle_kernel()(x, offsets, d, h - d, w - d)
