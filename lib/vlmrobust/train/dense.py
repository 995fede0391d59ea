"""Dense supervision of the vision tower: per-cell labels from the renderer's exact ground truth.

:func:`dense_labels` gives, for an item on a ``grid × grid`` cell layout, what each cell
shows (colour, shape, sign character, log distance, ...), with the vocabularies of
:data:`DENSE_VOCAB`; :class:`~vlmrobust.train.probe.VisionProbe` is trained on them
so the tower learns to see before the language model is attached.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["DENSE_VOCAB", "DENSE_CLASSES", "dense_labels"]


def _dense_vocab() -> dict[str, tuple[str, ...]]:
    from ..synth import COLOURS, SHAPES, SIGN_CHARS

    return {"colour": ("none", *COLOURS, "sign"), "shape": ("none", *SHAPES, "sign", "bar"),
            "char": ("none", *SIGN_CHARS)}


DENSE_VOCAB: dict[str, tuple[str, ...]] = _dense_vocab()
"""Class names of each categorical per-patch target of :func:`dense_labels` (index 0 = no object)."""
DENSE_CLASSES: dict[str, int] = {k: len(v) for k, v in DENSE_VOCAB.items()}


def dense_labels(item: Any, grid: int) -> dict[str, np.ndarray]:
    """Per-patch targets of one synthetic item for dense vision pre-training.

    The image is cut into ``grid x grid`` patches (the tower's patches, row-major
    like its tokens). Each object of ``item.meta["objects"]`` owns the pixels of
    its bounding box that carry its own flat colour (shapes and bars: the palette
    colour; signs: board or ink), so the masks are exact and occlusion is
    respected. A patch is labelled with the object owning most of its pixels when
    that is at least a quarter of the patch, else "none". Targets per patch:

    * ``colour`` (none, 6 palette colours, sign), ``shape`` (none, 5 shapes, sign,
      bar) and ``char`` (none, the sign characters);
    * ``centre`` - 1 where the patch holds the centre of an object's box (one
      patch per visible object: counting);
    * ``extent`` - the owning object's box height as a fraction of the image
      (apparent size, bar height), 0 on "none" patches;
    * ``logdepth`` - the mean of log ray distance (metres, capped at 100) over the patch.
    """
    from ..synth import COLOURS
    from ..synth.raster import SIGN_BOARD_RGB, SIGN_INK_RGB

    voc = DENSE_VOCAB
    img = np.asarray(item.image)
    size = img.shape[0]
    ps = size // grid
    owner = np.full((size, size), -1, np.int64)
    objs = item.meta["objects"]
    order = sorted(range(len(objs)), key=lambda k: -float(objs[k].get("z_m", 0.0)))
    for k in order:
        o = objs[k]
        if not o.get("bbox"):
            continue
        x0, y0, x1, y1 = o["bbox"]
        sub = img[y0:y1, x0:x1]
        if o["kind"] == "sign":
            m = np.all(sub == SIGN_BOARD_RGB, -1) | np.all(sub == SIGN_INK_RGB, -1)
        else:
            m = np.all(sub == COLOURS[o["colour"]], -1)
        owner[y0:y1, x0:x1][m] = k
    cells = owner.reshape(grid, ps, grid, ps).transpose(0, 2, 1, 3).reshape(grid * grid, ps * ps)
    n = grid * grid
    out = {name: np.zeros(n, np.int64) for name in ("colour", "shape", "char", "centre")}
    out["extent"] = np.zeros(n, np.float32)
    for c in range(n):
        ks, counts = np.unique(cells[c][cells[c] >= 0], return_counts=True)
        if len(ks) == 0 or counts.max() * 4 < ps * ps:
            continue
        o = objs[int(ks[np.argmax(counts)])]
        if o["kind"] == "sign":
            out["colour"][c], out["shape"][c] = voc["colour"].index("sign"), voc["shape"].index("sign")
            out["char"][c] = voc["char"].index(o["char"])
        else:
            out["colour"][c] = voc["colour"].index(o["colour"])
            out["shape"][c] = voc["shape"].index("bar" if o["kind"] == "bar" else o["shape"])
        out["extent"][c] = (o["bbox"][3] - o["bbox"][1]) / size
    for o in objs:
        if o.get("bbox"):
            x0, y0, x1, y1 = o["bbox"]
            cy, cx = min(int((y0 + y1) / 2) // ps, grid - 1), min(int((x0 + x1) / 2) // ps, grid - 1)
            out["centre"][cy * grid + cx] = 1
    d = np.log(np.clip(np.asarray(item.depth, np.float64), 1e-3, 100.0))  # the sky (infinite) counts as 100 m
    out["logdepth"] = d.reshape(grid, ps, grid, ps).mean(axis=(1, 3)).reshape(n).astype(np.float32)
    return out
