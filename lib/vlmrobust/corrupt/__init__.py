"""The perturbation registry: every image corruption the notebooks use, exact, seeded and fast.

One entry point, :func:`apply`, for every perturbation of the four papers:

============  =====================================================================  ==========
family        perturbations                                                          seed
============  =====================================================================  ==========
noise         gaussian_noise, shot_noise, impulse_noise, speckle_noise               000
blur          defocus_blur, glass_blur, motion_blur, zoom_blur, gaussian_blur         000
weather       snow, frost, fog, spatter                                              000
photometric   brightness, contrast, saturate                                         000
digital       elastic_transform, pixelate, jpeg_compression                          000
escalation    bruce_blur, bruce_contrast, bruce_rotate, bruce_center_crop            001
traversal     traverse_topdown, traverse_bottomup, traverse_leftright, ..._rightleft 001
natural       translate, pad_crop, scale, scale_pad, rotate                          002 §A.6
overlay       text_overlay, random_text, box_overlay                                 002 §A.6
frequency     noise_low, noise_high, noise_all, lowpass_keep, highpass_keep          002 App. F
visibility    fog_physical, underwater                                               003
boxed         <base>+box: fog and water (paper and extended ladders), ImageNet-C fog, 003
              the sky-only and blank controls; the red box drawn after the degradation
============  =====================================================================  ==========

Two more families of seed 001 hold the traversal fills: ``fill`` (the four traversals
filled with the dataset mean colour, ``traverse_<direction>_mean``, or cut off and
resized, ``traverse_<direction>_crop``) and ``control`` (the evidence-free control
``sky_band_<fill>``, which removes only sky rows); see :mod:`.escalation`, and
:mod:`.evidence` for what each removes from a synthetic item.

``apply(image, name, level, *, seed=0, key="", depth=None, backend="native")``
returns a new ``uint8`` ``H×W×3`` image of the same size; level 0 is the
identity; random perturbations draw from ``repro.rng(key, name, level, seed)``.
:func:`info` gives a perturbation's metadata (family, levels, the physical
parameter of each level, randomness), :func:`names` lists them,
:func:`manifest` returns the named sweep manifests and :func:`default_sweep`
the one notebooks 03-07 use by default. :func:`overlay_levels` gives the
TextOverlay levels (letters) that avoid a model's base prediction (seed 002).
"""

from __future__ import annotations

from . import boxed, escalation, frequency, imagenet_c, natural, overlays, physical, weather
from ._core import (
    MIN_SIDE,
    PerturbationInfo,
    apply,
    families,
    info,
    names,
    register,
    registry_table,
)
from .exercises import exercise_02_1, exercise_02_2, exercise_02_3
from .manifests import MANIFESTS, default_sweep, manifest, manifest_names
from .overlays import overlay_levels
from .physical import (
    KOSCHMIEDER,
    VISIBILITY_LEVELS_M,
    WATER_ABSORPTION,
    fog_equivalent_visibility,
    fog_visibility_table,
    physical_fog,
    transmittance,
    underwater,
)

__all__ = [
    "MIN_SIDE", "PerturbationInfo", "apply", "info", "names", "families", "registry_table", "manifest",
    "manifest_names", "default_sweep", "MANIFESTS", "physical_fog", "underwater", "transmittance", "KOSCHMIEDER",
    "WATER_ABSORPTION", "VISIBILITY_LEVELS_M", "fog_equivalent_visibility", "fog_visibility_table",
    "IMAGENET_C", "overlay_levels",
    "exercise_02_1",
    "exercise_02_2",
    "exercise_02_3",
]

#: The 19 ImageNet-C types in the published order.
IMAGENET_C = imagenet_c.NAMES


def _register_all() -> None:
    specs = {s[0]: s[1:] for s in imagenet_c._SPECS}
    for name in imagenet_c.NAMES:
        if name in specs:
            family, pname, unit, params, random = specs[name]
            fn = getattr(imagenet_c, name)
        else:
            family, pname, unit, params, random = weather.SPECS[name]
            fn = getattr(weather, name)
        doc = (fn.__doc__ or "").strip().splitlines()[0]
        register(imagenet_c.spec_info(name, family, pname, unit, params, random, doc), fn)
    for module in (escalation, natural, overlays, frequency, physical, boxed):
        module.register_all()


if not names():
    _register_all()
