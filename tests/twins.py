"""Tiny random-weight twins of VLM architectures for offline tests, and stand-ins for images and corruptions.

The twins live in the library (:mod:`vlmrobust.dry.twins`, where every builder
is documented); this module re-exports them under the names the tests use, and
keeps the test stand-ins :func:`fake_image`, :func:`fake_corrupt` and
:func:`fake_param`.
"""

from __future__ import annotations

from vlmrobust.dry.twins import (  # noqa: F401  (re-exported for the tests)
    BUILDERS,
    GEMMA3_TEMPLATE,
    GEMMA4_TEMPLATE,
    IDEFICS3_TEMPLATE,
    INTERNVL_TEMPLATE,
    MISTRAL_INST_TEMPLATE,
    QWEN_TEMPLATE,
    SIMPLE_TEMPLATE,
    llama_text,
    save_twin,
    tiny_depth_anything_metric,
    tiny_dinov2,
    tiny_gemma3,
    tiny_gemma4,
    tiny_idefics3,
    tiny_internvl,
    tiny_llava,
    tiny_llava_next,
    tiny_llava_onevision,
    tiny_ovis2,
    tiny_qwen2_5_vl,
    tiny_qwen2_vl,
    tiny_qwen3_vl,
    tiny_smolvlm2,
    word_tokenizer,
)

_llama_text = llama_text


# ------------------------------------------------------------------ stand-ins for images and corruptions


def fake_image(ref: str):
    """A deterministic uint8 image for any ref (stands in for ``data.load_image`` in sweep tests)."""
    import numpy as np

    from vlmrobust.repro import rng

    return rng("fake-image", ref).integers(0, 256, (40, 48, 3), dtype=np.uint8)


def fake_corrupt(image, name: str, level: int, *, seed: int = 0, key: str = "", depth=None, backend="native"):
    """Deterministic noise of strength ``level`` (stands in for ``corrupt.apply``); ``name="broken"`` raises."""
    import numpy as np

    from vlmrobust.repro import rng

    if name == "broken":
        raise RuntimeError("this corruption always fails")
    noise = rng(key, name, level, seed).normal(0, 20 * level, image.shape)
    return np.clip(image.astype(np.float64) + noise, 0, 255).astype(np.uint8)


def fake_param(name: str, level: int) -> float:
    """The parameter of corruption ``name`` at ``level`` (stands in for ``corrupt.param``)."""
    return 0.5 * level
