"""Escalation ladders and directional traversals of BRUCE (seed 001 §II-B, §III).

Seed 001 escalates four single perturbations over four levels ("Gaussian blur
severity was controlled using kernel standard deviations sigma in {1,2,3,4},
low-contrast perturbations employed contrast factors c in {0.30,...,0.90},
rotation angles theta in {5,...,20} degrees, and center-crop perturbations
removed increasing fractions of image content using crop ratios p in
{0.2,...,0.8}") and traverses the image in four directions
(R = {topdown, bottomup, leftright, rightleft}, Eq. of §II-B) removing a
growing share of it. The paper leaves the exact operators open; the choices
made here are:

* **blur**: Gaussian with sigma in pixels of the image as given, kernel
  truncated at 4 sigma, replicated border.
* **contrast** (``reading="kept"``, the default): ``c`` is the *contrast factor*, the share of contrast
  **kept**, as in Pillow's ``ImageEnhance.Contrast`` and torchvision's ``adjust_contrast``:
  ``x' = mu + c (x - mu)`` with ``mu`` the mean luma (ITU-R BT.601 weights), the ladder escalating
  0.9, 0.7, 0.5, 0.3 (:data:`CONTRAST_KEPT`). ``reading="removed"`` reads ``c`` as the share removed
  (keeps ``1 - c``: 0.7, 0.5, 0.3, 0.1; :data:`CONTRAST_REMOVED`), the library's earlier reading.
* **rotation**: counter-clockwise by ``theta`` about the image centre, same
  size, bilinear, corners filled with :data:`FILL`.
* **center crop** (``reading="area"``, the default): ``p`` is the *share of the area removed* ("removed
  increasing fractions of image content"): the central ``sqrt(1 - p) H x sqrt(1 - p) W`` region is
  kept and resized back to ``H x W`` (bilinear), as a VLM processor would resize a cropped image.
  ``reading="side"`` reads ``p`` as the share of each side removed (``1 - (1 - p)^2`` of the area:
  36 %, 64 %, 84 %, 96 %), the library's earlier reading. :data:`CROP_REMOVED` holds the share of each
  side removed under the default reading (what :mod:`.evidence` reads).
* **traversals**: the first ``s`` share of the rows (top-down, bottom-up) or
  columns (left-to-right, right-to-left), counted from the starting side, is
  replaced by :data:`FILL` (black); the image keeps its size.
* **traversal fills** (below :func:`register_all`): the same bands filled with the
  dataset mean colour (``traverse_<direction>_mean``) or cut off with the rest
  resized back (``traverse_<direction>_crop``), the mean colour being the
  default fill (:data:`DEFAULT_TRAVERSAL_FILL`), and the evidence-free control
  ``sky_band_<fill>`` that removes only sky rows. The mean colour is an option (``rgb``): the registry's
  default is the synthetic benchmark's (:data:`SYNTH_MEAN_RGB`);
  :func:`vlmrobust.analysis.escalation.ladders.ladder_corrupt` makes the corruption function a sweep uses
  with the colour computed from its items' own images (:func:`dataset_mean_colour`) and the readings.

Both readings of each ladder stay available as the ``reading`` option of :func:`vlmrobust.corrupt.apply`.
"""

from __future__ import annotations

import cv2
import numpy as np

from ._core import PerturbationInfo, register, to_uint8_round

__all__ = ["FILL", "BLUR_SIGMAS", "CONTRAST_KEPT", "CONTRAST_REMOVED", "CONTRAST_READINGS", "ROTATION_DEG",
           "CROP_AREA_REMOVED", "CROP_REMOVED", "CROP_READINGS", "TRAVERSAL_SHARES", "contrast_factor",
           "crop_side_removed", "center_crop_extent", "check_reading",
           "rotate", "register_all", "DIRECTIONS", "DIRECTION_LABELS", "FILLS", "DEFAULT_TRAVERSAL_FILL",
           "SYNTH_MEAN_RGB", "SKY_BAND_SHARES", "band_extent", "remove_band", "sky_rows", "sky_band_extent",
           "sky_band", "dataset_mean_colour", "traversal_name", "traversal_names", "control_name",
           "register_fills"]

#: Fill colour of removed or uncovered pixels (rotation corners, traversals): black.
FILL = (0, 0, 0)
BLUR_SIGMAS = (1.0, 2.0, 3.0, 4.0)
#: The paper's contrast factors in escalation order, read as the share of contrast kept (default reading).
CONTRAST_KEPT = (0.9, 0.7, 0.5, 0.3)
#: The same factors read as the share removed (``reading="removed"``): levels keep 0.7, 0.5, 0.3, 0.1.
CONTRAST_REMOVED = (0.3, 0.5, 0.7, 0.9)
CONTRAST_READINGS = ("kept", "removed")
ROTATION_DEG = (5.0, 10.0, 15.0, 20.0)
#: The paper's crop ratios p, read as the share of the area removed (default reading).
CROP_AREA_REMOVED = (0.2, 0.4, 0.6, 0.8)
CROP_READINGS = ("area", "side")
TRAVERSAL_SHARES = (0.2, 0.4, 0.6, 0.8)
_LEVELS = (1, 2, 3, 4)


def rotate(x: np.ndarray, degrees: float, fill: tuple[int, int, int] = FILL) -> np.ndarray:
    """Rotate counter-clockwise by ``degrees`` about the centre; same size, bilinear, ``fill`` corners."""
    h, w = x.shape[:2]
    m = cv2.getRotationMatrix2D(((w - 1) / 2.0, (h - 1) / 2.0), float(degrees), 1.0)
    return cv2.warpAffine(x, m, (w, h), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_CONSTANT,
                          borderValue=tuple(int(v) for v in fill))


def bruce_blur(x: np.ndarray, level: int, rng=None, depth=None) -> np.ndarray:
    """Gaussian blur with sigma = 1, 2, 3, 4 px (truncated at 4 sigma, replicated border)."""
    sigma = BLUR_SIGMAS[level - 1]
    r = int(4 * sigma + 0.5)
    out = cv2.GaussianBlur(x.astype(np.float32), (2 * r + 1, 2 * r + 1), sigmaX=sigma, sigmaY=sigma,
                           borderType=cv2.BORDER_REPLICATE)
    return to_uint8_round(out)


def check_reading(reading: str, allowed: tuple[str, ...], what: str) -> str:
    """``reading`` if it is one of ``allowed``, else a ``ValueError`` naming the ladder (``what``)."""
    if reading not in allowed:
        raise ValueError(f"the {what} reading must be one of {allowed}, got {reading!r}")
    return reading


def contrast_factor(level: int, reading: str = "kept") -> float:
    """The share of contrast level ``level`` keeps: 0.9 .. 0.3 (``"kept"``) or 0.7 .. 0.1 (``"removed"``)."""
    if check_reading(reading, CONTRAST_READINGS, "contrast") == "kept":
        return CONTRAST_KEPT[level - 1]
    return 1.0 - CONTRAST_REMOVED[level - 1]


def bruce_contrast(x: np.ndarray, level: int, rng=None, depth=None, reading: str = "kept") -> np.ndarray:
    """Contrast factor c = 0.9 .. 0.3 (the share kept) around the mean luma."""
    k = contrast_factor(level, reading)
    mu = float(cv2.mean(cv2.cvtColor(x, cv2.COLOR_RGB2GRAY))[0])
    lut = np.clip(np.rint(mu + k * (np.arange(256) - mu)), 0, 255).astype(np.uint8)
    return cv2.LUT(x, lut)


def bruce_rotate(x: np.ndarray, level: int, rng=None, depth=None) -> np.ndarray:
    """Rotation by 5, 10, 15, 20 degrees counter-clockwise, black corners."""
    return rotate(x, ROTATION_DEG[level - 1])


def crop_side_removed(p: float, reading: str = "area") -> float:
    """The share of each side a crop ratio ``p`` removes: ``1 - sqrt(1 - p)`` (``"area"``) or ``p`` (``"side"``)."""
    if check_reading(reading, CROP_READINGS, "crop") == "side":
        return float(p)
    return 1.0 - float(np.sqrt(1.0 - p))


#: Share of each side removed by the four crop levels under the default (area) reading: 0.106 .. 0.553.
CROP_REMOVED = tuple(crop_side_removed(p) for p in CROP_AREA_REMOVED)


def center_crop_extent(shape: tuple[int, ...], removed: float) -> tuple[int, int, int, int]:
    """The central region ``(x0, y0, x1, y1)`` (ends exclusive) that a crop removing ``removed`` of each side keeps."""
    h, w = shape[:2]
    kh, kw = max(1, int(round((1 - removed) * h))), max(1, int(round((1 - removed) * w)))
    y0, x0 = (h - kh) // 2, (w - kw) // 2
    return x0, y0, x0 + kw, y0 + kh


def center_crop(x: np.ndarray, removed: float) -> np.ndarray:
    """Keep the central ``1 - removed`` of each side and resize back to the full size (bilinear)."""
    h, w = x.shape[:2]
    x0, y0, x1, y1 = center_crop_extent(x.shape, removed)
    return cv2.resize(x[y0:y1, x0:x1], (w, h), interpolation=cv2.INTER_LINEAR)


def bruce_center_crop(x: np.ndarray, level: int, rng=None, depth=None, reading: str = "area") -> np.ndarray:
    """Center crop removing p = 0.2 .. 0.8 of the area (the central sqrt(1 - p) of each side), resized back."""
    return center_crop(x, crop_side_removed(CROP_AREA_REMOVED[level - 1], reading))


def traverse(x: np.ndarray, direction: str, share: float, fill: tuple[int, int, int] = FILL) -> np.ndarray:
    """Replace the first ``share`` of the image, seen from ``direction``'s starting side, by ``fill``."""
    h, w = x.shape[:2]
    out = x.copy()
    n_rows, n_cols = int(round(share * h)), int(round(share * w))
    if direction == "topdown":
        out[:n_rows] = fill
    elif direction == "bottomup":
        out[h - n_rows:] = fill
    elif direction == "leftright":
        out[:, :n_cols] = fill
    elif direction == "rightleft":
        out[:, w - n_cols:] = fill
    else:
        raise ValueError(f"direction must be one of topdown, bottomup, leftright, rightleft; got {direction!r}")
    return out


def _traversal(direction: str):
    def fn(x: np.ndarray, level: int, rng=None, depth=None) -> np.ndarray:
        return traverse(x, direction, TRAVERSAL_SHARES[level - 1])

    fn.__name__ = f"traverse_{direction}"
    return fn


def register_all() -> None:
    """Register the BRUCE ladders and traversals."""
    common = dict(source="001", levels=_LEVELS, random=False)
    register(PerturbationInfo(name="bruce_blur", family="escalation", params=BLUR_SIGMAS, param_name="sigma",
                              unit="px", description=bruce_blur.__doc__.splitlines()[0], **common), bruce_blur)
    register(PerturbationInfo(name="bruce_contrast", family="escalation", params=CONTRAST_KEPT,
                              param_name="contrast factor c (share kept)", unit="fraction",
                              description=bruce_contrast.__doc__.splitlines()[0], options=("reading",),
                              **common), bruce_contrast)
    register(PerturbationInfo(name="bruce_rotate", family="escalation", params=ROTATION_DEG,
                              param_name="rotation angle", unit="deg",
                              description=bruce_rotate.__doc__.splitlines()[0], **common), bruce_rotate)
    register(PerturbationInfo(name="bruce_center_crop", family="escalation", params=CROP_AREA_REMOVED,
                              param_name="area fraction removed p", unit="fraction",
                              description=bruce_center_crop.__doc__.splitlines()[0], options=("reading",),
                              **common), bruce_center_crop)
    for direction, label in [("topdown", "top-down"), ("bottomup", "bottom-up"),
                             ("leftright", "left-to-right"), ("rightleft", "right-to-left")]:
        register(PerturbationInfo(name=f"traverse_{direction}", family="traversal", params=TRAVERSAL_SHARES,
                                  param_name="share removed", unit="fraction",
                                  description=f"Directional traversal {label}: the first share of the image "
                                              "from that side is filled with black", **common),
                 _traversal(direction))
    register_fills()


# ----------------------------------------------------------------------------- traversal fills, sky-only control
#
# Seed 001 draws its traversals with a black band (its Figs. 5 and 7) but never says what the removed region
# becomes. Black is far outside what the model organisms saw in training: on the synthetic benchmark, top-down
# 0.2 removes only sky and already costs them most of their accuracy, so a black band measures the reaction to
# a new cue (a large black region and a hard edge) as much as the loss of evidence. The fill is therefore a
# choice, made part of the perturbation's name so that every fill has its own sweep shards:
#
# * ``"black"``: the paper's figures (``traverse_<direction>``, the registry's original traversals);
# * ``"mean"``: the dataset's mean colour, the option ``rgb`` (:data:`SYNTH_MEAN_RGB`, the synthetic
#   benchmark's, when not given; :func:`dataset_mean_colour` computes it from the items' own images and
#   ``analysis.escalation.ladders.ladder_corrupt`` passes it to every mean-filled condition of a sweep);
# * ``"crop"``: crop-and-resize: the removed band is cut off and the rest is resized back to the full size
#   (bilinear, as a VLM processor resizes a cropped image), so no pixel that is not scene content is added.
#
# :data:`DEFAULT_TRAVERSAL_FILL` is ``"mean"``: of the three it removes the band's evidence while adding the
# least new cue. A flat band of the dataset's mean colour brings no colour outside the images' own range and
# no edge stronger than theirs; black brings a large dark region and a hard edge the organisms never saw;
# crop-and-resize paints nothing but stretches what remains by 1 / (1 - s) along the traversal axis, which
# moves the horizon and changes the apparent sizes and positions that spatial and size questions rest on.
# The evidence-free control ``sky_band_<fill>`` (a band that covers only sky) measures what each fill costs
# when it removes no evidence at all; on the model organisms that cost is smallest for the mean colour
# (notebook 07 shows it).

#: The traversal directions of seed 001 (§II-B, the set R) and the labels of its Table I (W_D column).
DIRECTIONS = ("topdown", "bottomup", "leftright", "rightleft")
DIRECTION_LABELS = {"topdown": "TD", "bottomup": "BU", "leftright": "LR", "rightleft": "RL"}
#: Fills of the removed region: black (seed 001's figures), the dataset mean colour, crop-and-resize.
FILLS = ("black", "mean", "crop")
#: The default fill: the dataset mean colour removes evidence while adding the least new cue (see above).
DEFAULT_TRAVERSAL_FILL = "mean"
#: Mean RGB of the synthetic benchmark's clean images (all nine families at 64 px; 166.3, 168.7, 170.6 over
#: ``synth.generate(50, seed=0)``, within one grey level for other seeds and sizes), rounded.
SYNTH_MEAN_RGB = (166, 169, 171)
#: Levels of the sky-only control: the share of the image's sky-only top rows that is removed.
SKY_BAND_SHARES = (0.25, 0.5, 0.75, 1.0)
_BOX_RGB = (255, 0, 0)  # the red box of vlmrobust.synth (synth.BOX_RGB): a box line is not sky


def _check_fill(fill) -> str | tuple[int, int, int]:
    if isinstance(fill, str):
        if fill not in FILLS:
            raise ValueError(f"fill must be one of {FILLS} or an RGB triple, got {fill!r}")
        return fill
    try:
        rgb = tuple(int(v) for v in fill)
    except (TypeError, ValueError):
        raise ValueError(f"fill must be one of {FILLS} or an RGB triple, got {fill!r}") from None
    if len(rgb) != 3 or not all(0 <= v <= 255 for v in rgb):
        raise ValueError(f"an RGB fill needs three values in 0..255, got {fill!r}")
    return rgb


def _check_direction(direction: str) -> str:
    if direction not in DIRECTIONS:
        raise ValueError(f"direction must be one of {', '.join(DIRECTIONS)}; got {direction!r}")
    return direction


def band_extent(shape: tuple[int, ...], direction: str, share: float) -> tuple[int, int, int, int]:
    """The part of an image of ``shape`` that survives a traversal: ``(x0, y0, x1, y1)``, ends exclusive.

    The removed band is the first ``round(share * H)`` rows (top-down, bottom-up) or ``round(share * W)``
    columns (left-right, right-left) from the starting side, as :func:`traverse` removes them.
    """
    _check_direction(direction)
    if not 0.0 <= float(share) <= 1.0:
        raise ValueError(f"share must lie in [0, 1], got {share!r}")
    h, w = shape[:2]
    n_rows, n_cols = int(round(share * h)), int(round(share * w))
    return {"topdown": (0, n_rows, w, h), "bottomup": (0, 0, w, h - n_rows),
            "leftright": (n_cols, 0, w, h), "rightleft": (0, 0, w - n_cols, h)}[direction]


def remove_band(x: np.ndarray, direction: str, share: float, fill="black",
                mean_rgb: tuple[int, int, int] = SYNTH_MEAN_RGB) -> np.ndarray:
    """Remove the first ``share`` of the image seen from ``direction``'s side, replaced as ``fill`` says.

    ``fill``: ``"black"`` (identical to :func:`traverse`), ``"mean"`` (``mean_rgb``), an RGB
    triple, or ``"crop"`` (cut the band off and resize the rest back to ``H x W``, bilinear). A band that
    would leave nothing (share 1) keeps one row or column for ``"crop"``.
    """
    fill = _check_fill(fill)
    x0, y0, x1, y1 = band_extent(x.shape, direction, share)
    if fill == "crop":
        h, w = x.shape[:2]
        if y1 <= y0:  # nothing left: keep the last row on the far side
            y0, y1 = (h - 1, h) if y0 >= h else (0, 1)
        if x1 <= x0:
            x0, x1 = (w - 1, w) if x0 >= w else (0, 1)
        kept = x[y0:y1, x0:x1]
        if kept.shape[:2] == (h, w):
            return x.copy()
        return cv2.resize(kept, (w, h), interpolation=cv2.INTER_LINEAR)
    rgb = (0, 0, 0) if fill == "black" else _check_fill(mean_rgb) if fill == "mean" else fill
    out = np.empty_like(x)
    out[:] = rgb
    out[y0:y1, x0:x1] = x[y0:y1, x0:x1]
    return out


def sky_rows(image: np.ndarray, depth: np.ndarray) -> int:
    """How many top rows hold only sky: every pixel at infinite ray distance and none of them the red box.

    Ground-plane scenes of :mod:`vlmrobust.synth` have their sky on top (about the top 37 % of the rows,
    less where an object or the box reaches above the horizon); charts and real images without depth have 0.
    """
    sky = np.isinf(depth).all(axis=1) & ~(image == np.array(_BOX_RGB, np.uint8)).all(axis=2).any(axis=1)
    return int(np.argmin(sky)) if not sky.all() else int(sky.size)


def sky_band_extent(image: np.ndarray, depth: np.ndarray, share: float) -> tuple[int, int, int, int]:
    """What survives the sky-only control at ``share`` of the sky rows: ``(x0, y0, x1, y1)``, ends exclusive."""
    h, w = image.shape[:2]
    return 0, int(round(share * sky_rows(image, depth))), w, h


def sky_band(x: np.ndarray, depth: np.ndarray, share: float, fill="black",
             mean_rgb: tuple[int, int, int] = SYNTH_MEAN_RGB) -> np.ndarray:
    """The evidence-free control: remove ``share`` of the sky-only top rows (:func:`sky_rows`) with ``fill``."""
    fill = _check_fill(fill)
    n = sky_band_extent(x, depth, share)[1]
    if n == 0:
        return x.copy()
    return remove_band(x, "topdown", n / x.shape[0], fill, mean_rgb)


def dataset_mean_colour(images) -> tuple[int, int, int]:
    """The mean RGB over every pixel of ``images`` (an iterable of ``uint8`` ``H x W x 3``), rounded."""
    total, count = np.zeros(3), 0
    for im in images:
        im = np.asarray(im)
        total += im.reshape(-1, 3).sum(axis=0, dtype=np.float64)
        count += im.shape[0] * im.shape[1]
    if not count:
        raise ValueError("images is empty: the mean colour needs at least one image")
    return tuple(int(v) for v in np.rint(total / count))


def traversal_name(direction: str, fill: str = DEFAULT_TRAVERSAL_FILL) -> str:
    """The registered perturbation of one direction and fill (``traverse_topdown``, ``traverse_topdown_crop``, ...)."""
    _check_direction(direction)
    if _check_fill(fill) not in FILLS:
        raise ValueError(f"registered traversals exist for the fills {FILLS}, got {fill!r}")
    return f"traverse_{direction}" if fill == "black" else f"traverse_{direction}_{fill}"


def traversal_names(fill: str = DEFAULT_TRAVERSAL_FILL) -> dict[str, str]:
    """Direction -> registered perturbation name, for one fill, in :data:`DIRECTIONS` order."""
    return {d: traversal_name(d, fill) for d in DIRECTIONS}


def control_name(fill: str = DEFAULT_TRAVERSAL_FILL) -> str:
    """The registered sky-only control of one fill (``sky_band_black``, ``sky_band_mean``, ``sky_band_crop``)."""
    if _check_fill(fill) not in FILLS:
        raise ValueError(f"the sky-only control exists for the fills {FILLS}, got {fill!r}")
    return f"sky_band_{fill}"


def register_fills() -> None:
    """Register the mean-colour and crop-and-resize traversals and the sky-only control of every fill."""
    common = dict(source="001", levels=_LEVELS, random=False)
    how = {"mean": "filled with the dataset mean colour", "crop": "cut off and the rest resized back"}
    for fill in ("mean", "crop"):
        for direction in DIRECTIONS:
            def fn(x, level, rng=None, depth=None, rgb=SYNTH_MEAN_RGB, _d=direction, _f=fill):
                return remove_band(x, _d, TRAVERSAL_SHARES[level - 1], _f, rgb)

            fn.__name__ = traversal_name(direction, fill)
            register(PerturbationInfo(name=fn.__name__, family="fill", params=TRAVERSAL_SHARES,
                                      param_name="share removed", unit="fraction",
                                      description=f"Directional traversal {direction}: the first share of the "
                                                  f"image from that side is {how[fill]}",
                                      options=("rgb",) if fill == "mean" else (), **common), fn)
    for fill in FILLS:
        def ctrl(x, level, rng=None, depth=None, rgb=SYNTH_MEAN_RGB, _f=fill):
            return sky_band(x, depth, SKY_BAND_SHARES[level - 1], _f, rgb)

        ctrl.__name__ = control_name(fill)
        register(PerturbationInfo(name=ctrl.__name__, family="control", params=SKY_BAND_SHARES,
                                  param_name="share of the sky-only rows removed", unit="fraction",
                                  description=f"Evidence-free control: the top sky-only rows removed with the "
                                              f"{fill} fill", needs_depth=True,
                                  options=("rgb",) if fill == "mean" else (), **common), ctrl)

