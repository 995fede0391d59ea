"""Image processor and ``LlavaProcessor`` of the model organisms.

The image processor is CLIP's (resize, rescale to [0, 1], normalise) at the
model's input size; the ``LlavaProcessor`` expands the one ``<image>``
placeholder of the chat template into one token per vision patch
(``(size / patch)^2`` tokens: the CLS token is dropped by the ``"default"``
feature-selection strategy). :func:`pixel_values` is the training fast path and
is tested to give exactly the processor's tensors.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["IMAGE_MEAN", "IMAGE_STD", "build_image_processor", "build_processor", "pixel_values",
           "num_image_tokens"]

IMAGE_MEAN = (0.5, 0.5, 0.5)
IMAGE_STD = (0.5, 0.5, 0.5)


def _image_processor_class() -> Any:
    """CLIP's PIL-backed image processor (same numbers with or without torchvision installed)."""
    try:
        from transformers import CLIPImageProcessorPil as cls
    except ImportError:  # pragma: no cover - older transformers
        from transformers import CLIPImageProcessor as cls
    return cls


def build_image_processor(size: int = 64) -> Any:
    """A CLIP image processor producing ``size`` x ``size`` pixel values normalised to [-1, 1]."""
    if not isinstance(size, int) or size < 8:
        raise ValueError(f"size must be an int >= 8, got {size!r}")
    cls = _image_processor_class()
    return cls(
        size={"height": size, "width": size}, crop_size={"height": size, "width": size},
        do_resize=True, do_center_crop=False, do_rescale=True, do_normalize=True, do_convert_rgb=True,
        resample=3, image_mean=list(IMAGE_MEAN), image_std=list(IMAGE_STD),
    )


def num_image_tokens(size: int, patch: int) -> int:
    """Image tokens per image: one per patch (CLS dropped)."""
    if size % patch:
        raise ValueError(f"size {size} must be a multiple of patch {patch}")
    return (size // patch) ** 2


def build_processor(tokenizer: Any, size: int = 64, patch: int = 8) -> Any:
    """A ``LlavaProcessor`` (image processor + tokenizer + chat template)."""
    from transformers import LlavaProcessor

    from .tokenizer import CHAT_TEMPLATE

    num_image_tokens(size, patch)
    return LlavaProcessor(
        image_processor=build_image_processor(size), tokenizer=tokenizer, patch_size=patch,
        vision_feature_select_strategy="default", chat_template=CHAT_TEMPLATE,
        num_additional_image_tokens=1,
    )


def pixel_values(images: np.ndarray) -> Any:
    """Normalised pixel tensor (N, 3, H, W) float32 from uint8 images (N, H, W, 3).

    Equals the image processor's output for images already at the model's size.
    """
    import torch

    if not isinstance(images, np.ndarray) or images.dtype != np.uint8 or images.ndim != 4 or images.shape[-1] != 3:
        raise ValueError("images must be a uint8 array of shape (N, H, W, 3)")
    x = torch.from_numpy(np.ascontiguousarray(images)).permute(0, 3, 1, 2).float().div_(255.0)
    mean = torch.tensor(IMAGE_MEAN).view(1, 3, 1, 1)
    std = torch.tensor(IMAGE_STD).view(1, 3, 1, 1)
    return (x - mean) / std
