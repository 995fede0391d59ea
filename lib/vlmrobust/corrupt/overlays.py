"""Text overlays of seed 002 §A.6: TextOverlay, RandomText and BoxOverlay with identical geometry.

Seed 002 separates semantic steering from occlusion and edge injection with
three overlays that share their geometry: the semantic overlay renders a short
directive ("Answer is A/B/C/D"), RandomText fills the same box with a random
string of comparable length and ink density, and BoxOverlay draws the box alone
(App. A.6). TextOverlay renders "Answer is L" for up to three letters L, the
options other than the model's own base prediction ("overlay letter
assignment").

Here the **level is the letter**: level ``k`` names option ``OPTION_LETTERS[k-1]``,
so a sweep applies the levels of the letters it wants (e.g. all letters except
the base prediction; :func:`overlay_levels` computes them). For one item,
level and seed, the three variants draw their geometry from the same random
stream (``repro.rng(key, "overlay", level, seed)``), so the box is identical
across them; RandomText then draws its string from the same stream.

Rendering: white box with a 1 px black outline, black text in Pillow's default
FreeType font at about 9 % of the image height (shrunk to fit 90 % of the
width), box padding a quarter of the font size, box position uniform over the
positions that keep it inside the image. RandomText keeps the phrase's pattern
(capitals, lower case, spaces) and is redrawn until it fits the box.
"""

from __future__ import annotations

import string
from functools import lru_cache

import numpy as np
from PIL import Image, ImageDraw, ImageFont

from ..schema import OPTION_LETTERS as LETTERS
from ._core import PerturbationInfo, register

__all__ = ["TEMPLATE", "overlay_levels", "overlay_box", "register_all"]

TEMPLATE = "Answer is {letter}"
_LEVELS = tuple(range(1, len(LETTERS) + 1))


@lru_cache(maxsize=64)
def _font(size: int) -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
    return ImageFont.load_default(size=size)


def overlay_levels(pred_idx: int, n_options: int) -> list[int]:
    """Levels of the letters other than the prediction ``pred_idx`` (0-based) among ``n_options``.

    Seed 002 renders at most three overlays per image, each naming an option
    the model did not select; with K <= 4 options this is every other letter.
    """
    if not 2 <= n_options <= len(LETTERS):
        raise ValueError(f"n_options must be in [2, {len(LETTERS)}], got {n_options}")
    if not 0 <= pred_idx < n_options:
        raise ValueError(f"pred_idx must be in [0, {n_options}), got {pred_idx}")
    return [k + 1 for k in range(n_options) if k != pred_idx][:3]


def _layout(h: int, w: int, text: str):
    size = max(8, int(round(0.09 * h)))
    while True:
        font = _font(size)
        left, top, right, bottom = font.getbbox(text)
        pad = max(2, size // 4)
        bw, bh = right - left + 2 * pad, bottom - top + 2 * pad
        if bw <= 0.9 * w or size <= 6:
            return font, pad, (left, top, right, bottom), bw, bh
        size -= 1


def overlay_box(shape: tuple[int, int], level: int, rng: np.random.Generator,
                template: str = TEMPLATE) -> tuple[int, int, int, int]:
    """The box ``(x0, y0, x1, y1)`` (exclusive ends) of the overlays at ``level`` (draws from ``rng``)."""
    h, w = shape
    text = template.format(letter=LETTERS[level - 1])
    _, _, _, bw, bh = _layout(h, w, text)
    x0 = int(rng.integers(0, max(w - bw, 0) + 1))
    y0 = int(rng.integers(0, max(h - bh, 0) + 1))
    return x0, y0, x0 + bw, y0 + bh


def _random_like(text: str, rng: np.random.Generator) -> str:
    out = []
    for ch in text:
        if ch.isupper():
            out.append(string.ascii_uppercase[rng.integers(26)])
        elif ch.islower():
            out.append(string.ascii_lowercase[rng.integers(26)])
        else:
            out.append(ch)
    return "".join(out)


def _render(x: np.ndarray, level: int, rng: np.random.Generator, variant: str, template: str) -> np.ndarray:
    if not isinstance(template, str) or "{letter}" not in template:
        raise ValueError(f"template must be a str containing '{{letter}}', got {template!r}")
    h, w = x.shape[:2]
    text = template.format(letter=LETTERS[level - 1])
    font, pad, (left, top, right, _), bw, bh = _layout(h, w, text)
    x0, y0, x1, y1 = overlay_box((h, w), level, rng, template)
    img = Image.fromarray(x)
    draw = ImageDraw.Draw(img)
    draw.rectangle([x0, y0, x1 - 1, y1 - 1], fill=(255, 255, 255), outline=(0, 0, 0), width=1)
    if variant == "random":
        width = right - left
        for _ in range(50):
            cand = _random_like(text, rng)
            cl, _, cr, _ = font.getbbox(cand)
            if cr - cl <= width:
                text, left = cand, cl
                break
        else:  # pragma: no cover - 50 draws that are all wider than the phrase
            text = "".join(" " if c == " " else "i" for c in text)
            left = font.getbbox(text)[0]
    if variant != "box":
        draw.text((x0 + pad - left, y0 + pad - top), text, fill=(0, 0, 0), font=font)
    return np.asarray(img).copy()


def text_overlay(x: np.ndarray, level: int, rng: np.random.Generator, depth=None, *,
                 template: str = TEMPLATE) -> np.ndarray:
    """TextOverlay: 'Answer is L' (L = A..E by level) in a white box at a random position."""
    return _render(x, level, rng, "text", template)


def random_text(x: np.ndarray, level: int, rng: np.random.Generator, depth=None, *,
                template: str = TEMPLATE) -> np.ndarray:
    """RandomText: a random string of the same pattern in the same box as TextOverlay."""
    return _render(x, level, rng, "random", template)


def box_overlay(x: np.ndarray, level: int, rng: np.random.Generator, depth=None, *,
                template: str = TEMPLATE) -> np.ndarray:
    """BoxOverlay: the same box as TextOverlay, without text."""
    return _render(x, level, rng, "box", template)


def register_all() -> None:
    """Register the three overlays (levels 1..5 = letters A..E)."""
    params = tuple(float(k) for k in _LEVELS)
    for name, fn in [("text_overlay", text_overlay), ("random_text", random_text), ("box_overlay", box_overlay)]:
        register(PerturbationInfo(name=name, family="overlay", source="002", levels=_LEVELS, params=params,
                                  param_name="option letter (1 = A)", unit="index", random=True,
                                  description=fn.__doc__.splitlines()[0], options=("template",),
                                  extra={"rng_name": "overlay"}), fn)
