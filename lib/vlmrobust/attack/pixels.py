"""The processors' pixel paths rebuilt in torch, so that PGD's gradient reaches the image's own pixels.

Seed 002 §6 and App. F.3 bound the attack (``|delta| <= eps``, a frequency band) in the image's own pixel
space; the model sees what its processor makes of the image (resized, cropped, tiled, normalised, patched).
:func:`build` rebuilds that pipeline from differentiable torch ops for images of one size;
:meth:`PixelPath.check` refuses it (:class:`PathMismatch`) where it differs from the processor's own.

* **Resampling** is Pillow's separable antialiased filter (``Image.resize``; bilinear, bicubic with
  ``a = -0.5``, Lanczos-3, box, Hamming; the support widened by the downscaling factor), written as one
  ``(out, in)`` matrix per axis with Pillow's coefficients (normalised per output pixel, quantised to 22
  fractional bits as in its 8-bit kernels): for bilinear and bicubic, ``F.interpolate(antialias=True)``
  up to that quantisation; torch has no Lanczos mode (Idefics3, SmolVLM). Both backends resize ``uint8``
  images and round to ``uint8`` after the horizontal and after the vertical pass (Pillow; torchvision's
  CPU kernel); so does the path, passing the rounding straight through backwards (BPDA, the identity).
* **Crop, pad, rescale, normalise** as the processor's ``_preprocess`` does them.
* **Layouts**: ``plain`` ``(B, 3, h, w)`` (CLIP, SigLIP, LLaVA with or without pad-to-square, Gemma 3
  without pan-and-scan); ``qwen2_vl`` flattened patches ``(B * gh * gw, 3 * T * p * p)`` in merge-window
  order, each patch repeated ``temporal_patch_size`` times (Qwen2-VL, Qwen2.5-VL, Qwen3-VL;
  ``image_grid_thw``); ``idefics3`` the tiles of the image resized to multiples of ``max_image_size``, row
  by row, then the global image (Idefics3, SmolVLM; ``pixel_attention_mask``); ``anyres`` the base image,
  then the tiles of the image resized into the best grid pinpoint and zero-padded (LLaVA-OneVision;
  ``image_sizes``). Anything else raises :class:`NotImplementedError` naming the processor.

**Tolerances** (normalised units, the units of ``pixel_values``). Against Pillow-backend processors the
path is exact, resampling included (measured ``max |diff| <= 2.4e-7`` on the twins of ``tests/twins.py``):
``max |diff| <= 1e-5`` (:data:`EXACT_TOL`). A torchvision-backend processor that resamples rounds with its
own fixed-point weights (and without the intermediate rounding on a GPU or a CPU without AVX), so values
on a rounding tie may land one level apart: accepted when ``max |diff|`` is at most one ``uint8`` level
of the resized image (``rescale_factor / min(std)``, 0.0146 for CLIP's std, 0.0078 for 0.5) and at most
:data:`MAX_OFF_SHARE` of the values differ at all.
"""

from __future__ import annotations

import functools
import inspect
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .resample import BY_NAME, FILTERS, resample_matrix, u8

__all__ = ["EXACT_TOL", "MAX_OFF_SHARE", "PathMismatch", "PixelPath", "build", "resample_matrix"]

EXACT_TOL = 1e-5
MAX_OFF_SHARE = 0.01  # share of pixel values allowed one uint8 level off when the path resamples


class PathMismatch(NotImplementedError):
    """The rebuilt pixel path does not reproduce what the processor gives the model."""


@dataclass
class _Settings:
    ip: Any
    kw: dict
    resample: int = 3

    def get(self, name: str, default: Any = None) -> Any:
        v = self.kw.get(name)
        v = getattr(self.ip, name, None) if v is None else v
        return default if v is None else v

    def size(self, name: str) -> dict:
        v = self.get(name)
        return {} if v is None else {k: x for k, x in dict(v).items() if x is not None}

    def resize(self, u, hw: tuple[int, int]):
        """Resize ``(N, C, h, w)`` in uint8 units to ``hw``, horizontal pass first, each pass rounded to uint8."""
        import torch

        h, w = u.shape[-2:]
        if w != hw[1]:
            u = u8(u @ torch.as_tensor(resample_matrix(w, hw[1], self.resample), device=u.device).T)
        if h != hw[0]:
            u = u8(torch.as_tensor(resample_matrix(h, hw[0], self.resample), device=u.device) @ u)
        return u

    def normalise(self, u):
        import torch

        y = u * float(self.get("rescale_factor", 1 / 255)) if self.get("do_rescale", True) else u
        if self.get("do_normalize", False):
            mean = torch.as_tensor(self.get("image_mean"), dtype=y.dtype, device=y.device).reshape(-1, 1, 1)
            std = torch.as_tensor(self.get("image_std"), dtype=y.dtype, device=y.device).reshape(-1, 1, 1)
            y = (y - mean) / std
        return y.float()

    def level(self) -> float:
        """One uint8 level in normalised units (the tolerance of a resampling path)."""
        r = float(self.get("rescale_factor", 1 / 255)) if self.get("do_rescale", True) else 1.0
        return r / float(np.min(self.get("image_std"))) if self.get("do_normalize", False) else r


@dataclass
class PixelPath:
    """``x in [0, 1], (B, H, W, 3)`` -> the processor's ``pixel_values`` for B images of size ``shape``."""

    processor: str  #: image processor class
    layout: str  #: plain, qwen2_vl, idefics3 or anyres (see the module docstring)
    shape: tuple[int, int]  #: (H, W) of the images it takes
    resamples: int  #: size-changing resamples per image
    tol: float  #: accepted max |rebuilt - processor|, normalised units
    fn: Callable = field(repr=False)
    meta: dict = field(default_factory=dict)  #: per image: the processor outputs the layout implies
    err: float = float("nan")  #: max |rebuilt - processor| measured by :meth:`check`
    off_share: float = float("nan")  #: share of values that differ by more than EXACT_TOL
    prob_gap: float = float("nan")  #: max |p_rebuilt - p_processor| of the clean option distribution

    @property
    def exact(self) -> bool:
        """No resampling: the path is rescale and normalise, and layout."""
        return self.resamples == 0

    def __call__(self, x):
        import torch

        if tuple(x.shape[1:3]) != tuple(self.shape):
            raise ValueError(f"this pixel path takes images of size {self.shape}, got {tuple(x.shape[1:3])}")
        u = x.permute(0, 3, 1, 2).double() * 255
        r = torch.round(u) - u  # float error off a uint8 level would break Pillow's exact rounding ties
        return self.fn(u + torch.where(r.abs() < 1e-3, r, 0.0).detach())

    def check(self, rebuilt, inputs: dict) -> float:
        """Compare ``rebuilt`` (this path on the clean images) with the processor's outputs ``inputs``."""
        import torch

        name = f"{self.processor} ({self.layout}, images {self.shape[0]}x{self.shape[1]})"
        want = inputs["pixel_values"]
        if tuple(rebuilt.shape) != tuple(want.shape):
            raise PathMismatch(f"{name}: the rebuilt pixel values have shape {tuple(rebuilt.shape)}, the "
                               f"processor's {tuple(want.shape)}; PGD would not attack what the model sees")
        n = len(rebuilt) if self.layout != "qwen2_vl" else len(inputs["image_grid_thw"])
        for key, val in self.meta.items():
            one = torch.as_tensor(np.asarray(val)).long()
            if key in inputs and not torch.equal(torch.as_tensor(inputs[key]).cpu().long(), one.expand(n, *one.shape)):
                raise PathMismatch(f"{name}: {key} differs from the processor's; the layout is not rebuilt")
        diff = (rebuilt.detach().float() - want.to(rebuilt.device).float()).abs()
        self.err = float(diff.max()) if diff.numel() else 0.0
        self.off_share = float((diff > EXACT_TOL).float().mean()) if diff.numel() else 0.0
        if self.err > self.tol or (self.tol > EXACT_TOL and self.off_share > MAX_OFF_SHARE):
            raise PathMismatch(f"{name}: the rebuilt pixel values are off by {self.err:.2e} (tolerance "
                               f"{self.tol:.2e}) at {100 * self.off_share:.2f}% of the values; PGD would not "
                               "attack what the model sees")
        return self.err


def _images_kwargs(processor: Any) -> dict:
    """The image-processor keyword arguments the processor passes when called (its defaults merged)."""
    merge, tok = getattr(processor, "_merge_kwargs", None), getattr(processor, "tokenizer", None)
    if merge is None:
        return {}
    return dict(merge(tokenizer_init_kwargs=getattr(tok, "init_kwargs", None))["images_kwargs"])


def _resample_code(st: _Settings) -> int:
    r = st.get("resample", 2)
    code = BY_NAME.get(str(r.value).lower(), -1) if hasattr(r, "value") and isinstance(r.value, str) else int(r)
    if code == 1 and getattr(st.ip, "backend", "pil") == "torchvision":
        from transformers.utils.import_utils import is_torchvision_greater_or_equal

        code = 1 if is_torchvision_greater_or_equal("0.27") else 3  # the backend's own fallback to bicubic
    return code


def _target(h: int, w: int, size: dict) -> tuple[int, int]:
    """The output size of the backends' ``resize`` for a size dict."""
    from transformers import image_transforms as tt
    from transformers import image_utils as tu

    if size.get("shortest_edge") and size.get("longest_edge"):
        return tuple(tt.get_size_with_aspect_ratio((h, w), size["shortest_edge"], size["longest_edge"]))
    if size.get("shortest_edge"):
        return tuple(tt.get_resize_output_image_size(np.empty((3, h, w), np.uint8), size=size["shortest_edge"],
                                                     default_to_square=False, input_data_format="channels_first"))
    if size.get("max_height") and size.get("max_width"):
        return tuple(tu.get_image_size_for_max_height_width((h, w), size["max_height"], size["max_width"]))
    if size.get("height") and size.get("width"):
        return size["height"], size["width"]
    raise NotImplementedError(f"size {size} has no rebuilt resize")


def _plain_steps(st: _Settings, h: int, w: int, pad_square: bool) -> tuple[list, tuple[int, int], int]:
    """Pad to square (LLaVA), resize, centre crop: the steps, the output size and the resample count."""
    import torch

    steps, n = [], 0
    if pad_square and h != w:
        bg = [int(m * 255) for m in st.get("image_mean")] if st.get("image_mean") is not None else [0, 0, 0]
        s, top, left = max(h, w), (max(h, w) - h) // 2, (max(h, w) - w) // 2

        def square(u, s=s, top=top, left=left, h=h, w=w, bg=bg):  # pad u - bg with zeros: bg around u
            c = torch.as_tensor(bg, dtype=u.dtype, device=u.device).reshape(1, -1, 1, 1)
            return torch.nn.functional.pad(u - c, (left, s - w - left, top, s - h - top)) + c
        steps.append(square)
        h = w = s
    if st.get("do_resize", True) and st.size("size"):
        hw = _target(h, w, st.size("size"))
        if hw != (h, w):
            steps.append(lambda u, hw=hw: st.resize(u, hw))
            n += 1
            h, w = hw
    if st.get("do_center_crop", False):
        c = st.size("crop_size")
        ch, cw = c["height"], c["width"]
        if ch > h or cw > w:
            raise NotImplementedError(f"{type(st.ip).__name__}: a centre crop larger than the resized image")
        top, left = (h - ch) // 2, (w - cw) // 2
        steps.append(lambda u, t=top, lf=left, ch=ch, cw=cw: u[..., t:t + ch, lf:lf + cw])
        h, w = ch, cw
    return steps, (h, w), n


def _run(steps: Sequence[Callable], u):
    return functools.reduce(lambda v, step: step(v), steps, u)


def _plain(st: _Settings, h: int, w: int, kind: str) -> tuple[Callable, dict, int]:
    import torch

    if kind == "Gemma3ImageProcessor" and st.get("do_pan_and_scan", False):
        raise NotImplementedError(f"{type(st.ip).__name__} with do_pan_and_scan: its crops are not rebuilt")
    steps, (oh, ow), n = _plain_steps(st, h, w, kind == "LlavaImageProcessor" and st.get("do_pad", False))
    pad = st.size("pad_size") if kind == "plain" and st.get("do_pad", False) else {}
    ph, pw = (pad["height"] - oh, pad["width"] - ow) if pad else (0, 0)

    def fn(u):
        y = st.normalise(_run(steps, u))
        return torch.nn.functional.pad(y, (0, pw, 0, ph)) if ph or pw else y
    return fn, {}, n


def _qwen2_vl(st: _Settings, h: int, w: int) -> tuple[Callable, dict, int]:
    p, m, t = int(st.get("patch_size")), int(st.get("merge_size")), int(st.get("temporal_patch_size"))
    hh, ww, n = h, w, 0
    if st.get("do_resize", True):
        size = st.size("size")
        smart_resize = inspect.getmodule(type(st.ip)._preprocess).smart_resize
        hh, ww = smart_resize(h, w, factor=p * m, min_pixels=size["shortest_edge"], max_pixels=size["longest_edge"])
        n = int((hh, ww) != (h, w))
    gh, gw = hh // p, ww // p

    def fn(u):
        y = st.normalise(st.resize(u, (hh, ww)))
        b, c = y.shape[:2]
        y = y.reshape(b, c, gh // m, m, p, gw // m, m, p).permute(0, 2, 5, 3, 6, 1, 4, 7)
        y = y.unsqueeze(6).expand(-1, -1, -1, -1, -1, -1, t, -1, -1)
        return y.reshape(b * gh * gw, c * t * p * p)
    return fn, {"image_grid_thw": [1, gh, gw]}, n


def _idefics3(st: _Settings, h: int, w: int) -> tuple[Callable, dict, int]:
    import torch

    mod = inspect.getmodule(type(st.ip)._preprocess)
    big = int(st.size("max_image_size")["longest_edge"])
    sizes, size = [(h, w)], st.size("size")
    if st.get("do_resize", True):
        hw = (mod.get_resize_output_image_size(np.empty((3, h, w), np.uint8), resolution_max_side=size["longest_edge"])
              if size.get("longest_edge") else (size["height"], size["width"]))
        sizes.append(tuple(hw))
    split = bool(st.get("do_image_splitting", False))
    a, b = sizes[-1]
    if split:  # resize_for_vision_encoder: each side a multiple of max_image_size
        if b >= a:
            b = math.ceil(b / big) * big
            a = math.ceil(int(b / (sizes[-1][1] / sizes[-1][0])) / big) * big
        else:
            a = math.ceil(a / big) * big
            b = math.ceil(int(a * (sizes[-1][1] / sizes[-1][0])) / big) * big
        sizes.append((a, b))
    else:
        a, b = big, big
        sizes.append((a, b))
    tiled = split and (a > big or b > big)
    n = sum(x != y for x, y in zip(sizes, sizes[1:], strict=False)) + int(tiled and (a, b) != (big, big))

    def fn(u):
        for hw in sizes[1:]:
            u = st.resize(u, hw)
        frames = [u[..., r:r + big, c:c + big] for r in range(0, a, big) for c in range(0, b, big)] if tiled else []
        frames.append(st.resize(u, (big, big)) if tiled else u)
        return torch.stack([st.normalise(f) for f in frames], dim=1)
    n_frames = (a // big) * (b // big) + 1 if tiled else 1
    fh, fw = (big, big) if tiled else (a, b)
    meta = {"pixel_attention_mask": np.ones((n_frames, fh, fw), np.int64)} if st.get("do_pad", True) else {}
    return fn, meta, n


def _anyres(st: _Settings, h: int, w: int) -> tuple[Callable, dict, int]:
    import torch
    from transformers.image_processing_utils import get_patch_output_size, select_best_resolution

    size, crop = st.size("size"), st.size("crop_size")
    base = (size["height"], size["width"]) if size.get("height") else (size["shortest_edge"],) * 2
    patch = crop.get("height") or size.get("height") or size["shortest_edge"]
    best = select_best_resolution((h, w), st.get("image_grid_pinpoints"))
    nh, nw = get_patch_output_size(np.empty((3, h, w), np.uint8), best, input_data_format="channels_first")
    (py, ry), (px, rx) = divmod(best[0] - nh, 2), divmod(best[1] - nw, 2)
    per_patch, _, k = _plain_steps(st, patch, patch, False)
    base_steps, _, kb = _plain_steps(st, *base, False)
    n = int((nh, nw) != (h, w)) + int(base != (h, w)) + k + kb

    def fn(u):
        grid = torch.nn.functional.pad(st.resize(u, (nh, nw)), (px, px + rx, py, py + ry))
        tiles = [grid[..., r:r + patch, c:c + patch] for r in range(0, best[0], patch)
                 for c in range(0, best[1], patch)]
        out = [st.normalise(_run(base_steps, st.resize(u, base)))]
        out += [st.normalise(_run(per_patch, t)) for t in tiles]
        return torch.stack(out, dim=1)
    return fn, {"image_sizes": [h, w]}, n


_LAYOUTS = {"Qwen2VLImageProcessor": "qwen2_vl", "Idefics3ImageProcessor": "idefics3",
            "SmolVLMImageProcessor": "idefics3", "LlavaOnevisionImageProcessor": "anyres",
            "Gemma3ImageProcessor": "plain", "LlavaImageProcessor": "plain"}


def _kind(ip: Any) -> str:
    from transformers.image_processing_backends import PilBackend, TorchvisionBackend

    for c in type(ip).__mro__:
        name = c.__name__.removesuffix("Pil").removesuffix("Fast")
        if name in _LAYOUTS:
            return name
    cls = type(ip)
    for backend in (PilBackend, TorchvisionBackend):
        if isinstance(ip, backend) and all(getattr(cls, f) is getattr(backend, f) for f in
                                           ("_preprocess", "resize", "center_crop", "rescale", "normalize", "pad")):
            return "plain"
    raise NotImplementedError(f"{cls.__name__}: PGD has no rebuilt pixel path for this image processor (rebuilt: "
                              "CLIP/SigLIP-style, LLaVA, Gemma 3, Qwen2-VL, Idefics3/SmolVLM, LLaVA-OneVision)")


def build(processor: Any, shape: tuple[int, int]) -> PixelPath:
    """The rebuilt pixel path of ``processor`` for images of size ``shape = (H, W)`` (see the module docstring).

    Settings are the image processor's attributes overridden by what the processor passes when it is called.
    """
    ip = getattr(processor, "image_processor", None)
    if ip is None:
        raise NotImplementedError(f"{type(processor).__name__}: no image processor")
    kind = _kind(ip)
    st = _Settings(ip, _images_kwargs(processor))
    st.resample = _resample_code(st)
    h, w = int(shape[0]), int(shape[1])
    layout = _LAYOUTS.get(kind, "plain")
    fn, meta, n = {"plain": lambda: _plain(st, h, w, kind), "qwen2_vl": lambda: _qwen2_vl(st, h, w),
                   "idefics3": lambda: _idefics3(st, h, w), "anyres": lambda: _anyres(st, h, w)}[layout]()
    if n and st.resample not in FILTERS:
        raise NotImplementedError(f"{type(ip).__name__}: resampling filter {st.get('resample')!r} is not rebuilt")
    tol = EXACT_TOL if n == 0 or getattr(ip, "backend", "pil") == "pil" else st.level() + EXACT_TOL
    return PixelPath(type(ip).__name__, layout, (h, w), n, tol, fn, meta)
