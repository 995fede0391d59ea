"""Named sweep manifests: which perturbations, at which levels, a sweep runs.

A manifest is a plain ``dict`` mapping a perturbation name to its list of
levels (the clean level 0 is implicit and never listed). :func:`default_sweep`
is the manifest that the default runs of notebooks 03-07 score: five
ImageNet-C types, one per family (noise, blur, weather, photometric, digital)
at all five severities, plus the eight physical fog levels of seed 003 -
33 corrupted conditions, small enough to score the model organisms on a few
hundred items on a CPU in minutes. The full sets are named manifests.

``"natural"`` is seed 002's perturbation set (App. A.6, Tables 1-2): translation
at 8 offsets, pad/crop at 8, scale at one level (alpha = 0.9), scale+pad at two
instances (alpha = 0.9 and 0.75, each centred on the black background: the paper
counts two Scale+Pad instances per image without naming them), rotation by -30
and +30 degrees, and the three overlays. The overlays list the candidate letters
A-E; the sweep engine scores each item only at the letters other than the
model's clean prediction that exist among the item's K options, at most three
(``SweepSpec.overlay_rule = "not_base"``), so no item sees more than three
overlays. ``"natural_extra"`` keeps the other scale levels (scale alpha = 0.75
and 0.5, scale+pad alpha = 0.5) as a named extra.
"""

from __future__ import annotations

from ._core import info, names

__all__ = ["MANIFESTS", "LEVEL_MANIFESTS", "DEFAULT_SWEEP", "NATURAL", "NATURAL_EXTRA", "manifest", "manifest_names",
           "default_sweep"]

DEFAULT_SWEEP: dict[str, tuple[int, ...]] = {
    "gaussian_noise": (1, 2, 3, 4, 5),
    "defocus_blur": (1, 2, 3, 4, 5),
    "fog": (1, 2, 3, 4, 5),
    "contrast": (1, 2, 3, 4, 5),
    "jpeg_compression": (1, 2, 3, 4, 5),
    "fog_physical": (1, 2, 3, 4, 5, 6, 7, 8),
}

_LETTERS = (1, 2, 3, 4, 5)
#: Seed 002's natural perturbations and overlays (see the module docstring).
NATURAL: dict[str, tuple[int, ...]] = {
    "translate": (1, 2, 3, 4, 5, 6, 7, 8),
    "pad_crop": (1, 2, 3, 4, 5, 6, 7, 8),
    "scale": (1,),
    "scale_pad": (1, 2),
    "rotate": (1, 2),
    "text_overlay": _LETTERS,
    "random_text": _LETTERS,
    "box_overlay": _LETTERS,
}
#: The scale levels the paper's set leaves out.
NATURAL_EXTRA: dict[str, tuple[int, ...]] = {"scale": (2, 3), "scale_pad": (3,)}

#: Manifest name -> the registry families it covers (every registered level).
MANIFESTS: dict[str, tuple[str, ...]] = {
    "imagenet_c": ("noise", "blur", "weather", "photometric", "digital"),
    "bruce": ("escalation", "traversal"),
    "frequency": ("frequency",),
    "visibility": ("visibility",),
}
#: Manifest name -> explicit levels.
LEVEL_MANIFESTS: dict[str, dict[str, tuple[int, ...]]] = {"natural": NATURAL, "natural_extra": NATURAL_EXTRA}


def manifest_names() -> list[str]:
    """Names accepted by :func:`manifest`."""
    return ["default", *MANIFESTS, *LEVEL_MANIFESTS, "all"]


def manifest(name: str = "default") -> dict[str, list[int]]:
    """A named manifest as ``{perturbation: [levels]}`` (a fresh dict each call).

    ``"imagenet_c"``: the 19 types x 5 severities (seed 000); ``"bruce"``: the
    four escalation ladders and four traversals (seed 001); ``"natural"``: the
    geometric perturbations and the three overlays at seed 002's levels (§A.6, see
    the module docstring); ``"natural_extra"``: the other scale levels;
    ``"frequency"``: band-limited noise and ablations (seed 002 App. F);
    ``"visibility"``: physical fog and underwater levels (seed 003);
    ``"all"``: everything registered; ``"default"``: :func:`default_sweep`.
    """
    if name == "default":
        return {k: list(v) for k, v in DEFAULT_SWEEP.items()}
    if name == "all":
        return {n: list(info(n).levels) for n in names()}
    if name in LEVEL_MANIFESTS:
        return {k: list(v) for k, v in LEVEL_MANIFESTS[name].items()}
    if name not in MANIFESTS:
        raise ValueError(f"manifest name must be one of {manifest_names()}, got {name!r}")
    fams = MANIFESTS[name]
    return {n: list(info(n).levels) for n in names() if info(n).family in fams}


def default_sweep() -> dict[str, list[int]]:
    """The default sweep of notebooks 03-07 (see the module docstring)."""
    return manifest("default")
