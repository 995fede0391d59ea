"""Named sweep manifests: which perturbations, at which levels, a sweep runs.

A manifest is a plain ``dict`` mapping a perturbation name to its list of
levels (the clean level 0 is implicit and never listed). :func:`default_sweep`
is the manifest that the default runs of notebooks 03-07 score: five
ImageNet-C types, one per family (noise, blur, weather, photometric, digital)
at all five severities, plus the eight-level physical fog ladder of seed 003 -
33 corrupted conditions, small enough to score the model organisms on a few
hundred items on a CPU in minutes. The full sets are named manifests.
"""

from __future__ import annotations

from ._core import info, names

__all__ = ["MANIFESTS", "DEFAULT_SWEEP", "manifest", "manifest_names", "default_sweep"]

DEFAULT_SWEEP: dict[str, tuple[int, ...]] = {
    "gaussian_noise": (1, 2, 3, 4, 5),
    "defocus_blur": (1, 2, 3, 4, 5),
    "fog": (1, 2, 3, 4, 5),
    "contrast": (1, 2, 3, 4, 5),
    "jpeg_compression": (1, 2, 3, 4, 5),
    "fog_physical": (1, 2, 3, 4, 5, 6, 7, 8),
}

#: Manifest name -> the registry families (or explicit names) it covers.
MANIFESTS: dict[str, tuple[str, ...]] = {
    "imagenet_c": ("noise", "blur", "weather", "photometric", "digital"),
    "bruce": ("escalation", "traversal"),
    "natural": ("natural", "overlay"),
    "frequency": ("frequency",),
    "visibility": ("visibility",),
}


def manifest_names() -> list[str]:
    """Names accepted by :func:`manifest`."""
    return ["default", *MANIFESTS, "all"]


def manifest(name: str = "default") -> dict[str, list[int]]:
    """A named manifest as ``{perturbation: [levels]}`` (a fresh dict each call).

    ``"imagenet_c"``: the 19 types x 5 severities (seed 000); ``"bruce"``: the
    four escalation ladders and four traversals (seed 001); ``"natural"``: the
    geometric perturbations and the three overlays (seed 002 §A.6);
    ``"frequency"``: band-limited noise and ablations (seed 002 App. F);
    ``"visibility"``: physical fog and underwater ladders (seed 003);
    ``"all"``: everything registered; ``"default"``: :func:`default_sweep`.
    """
    if name == "default":
        return {k: list(v) for k, v in DEFAULT_SWEEP.items()}
    if name == "all":
        return {n: list(info(n).levels) for n in names()}
    if name not in MANIFESTS:
        raise ValueError(f"manifest name must be one of {manifest_names()}, got {name!r}")
    fams = MANIFESTS[name]
    return {n: list(info(n).levels) for n in names() if info(n).family in fams}


def default_sweep() -> dict[str, list[int]]:
    """The default sweep of notebooks 03-07 (see the module docstring)."""
    return manifest("default")
