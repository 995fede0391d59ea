"""Twins of the paper variants' non-VLM models: a DINOv2 image encoder and a metric Depth Anything V2.

* **DINOv2** (``facebook/dinov2-base``) — a ViT with a class token, layer scale
  and learned position embeddings interpolated to the input; the real
  checkpoint's ``BitImageProcessor`` recipe (shortest edge, centre crop,
  ImageNet mean and std). Saved so ``AutoModel`` and ``AutoImageProcessor``
  load it, as :func:`vlmrobust.analysis.selection.embed.image_embeddings` does;
  its ``last_hidden_state`` holds the class token and ``(32 / 8)^2`` patch tokens.
* **Depth Anything V2, metric** (``Depth-Anything-V2-Metric-Outdoor-Large-hf``) —
  a DINOv2 backbone read at four layers (``reshape_hidden_states`` off), the DPT
  neck (reassemble at factors 4, 2, 1, 0.5, then fusion) and a head whose
  sigmoid output is scaled by ``max_depth`` (80 m for the outdoor model), so
  every predicted depth lies in ``(0, 80)`` metres; a ``DPTImageProcessor``
  keeping the aspect ratio at a multiple of the patch size. Saved so
  ``transformers.pipeline("depth-estimation", model=folder)`` loads it, as
  :class:`vlmrobust.depth.PipelineDepth` does.

Builders return ``(model, image_processor)``, like the VLM builders' ``(model, processor)``.
"""

from __future__ import annotations

from collections.abc import Iterable

from ._common import seeded

__all__ = ["tiny_dinov2", "tiny_depth_anything_metric"]

_IMAGENET_MEAN = [0.485, 0.456, 0.406]
_IMAGENET_STD = [0.229, 0.224, 0.225]


def tiny_dinov2(extra_texts: Iterable[str] = (), seed: int = 0, image_size: int = 32):
    """A DINOv2 twin: 2 layers of width 32, patches of 8 px on a ``image_size`` centre crop.

    ``extra_texts`` is ignored (no tokenizer); it keeps the builders' common signature.
    """
    from transformers import Dinov2Config, Dinov2Model
    from transformers.models.bit.image_processing_pil_bit import BitImageProcessorPil

    ip = BitImageProcessorPil(size={"shortest_edge": image_size + image_size // 8},
                              crop_size={"height": image_size, "width": image_size}, do_center_crop=True,
                              image_mean=_IMAGENET_MEAN, image_std=_IMAGENET_STD, resample=3)
    cfg = Dinov2Config(hidden_size=32, num_hidden_layers=2, num_attention_heads=4, mlp_ratio=2,
                       image_size=image_size, patch_size=8)
    with seeded(seed):
        return Dinov2Model(cfg).eval(), ip


def tiny_depth_anything_metric(extra_texts: Iterable[str] = (), seed: int = 0, max_depth: int = 80):
    """A metric Depth Anything V2 twin: DINOv2 backbone read at layers 1-4, DPT neck, depth in ``(0, max_depth)`` m.

    ``extra_texts`` is ignored (no tokenizer); it keeps the builders' common signature.
    """
    from transformers import DepthAnythingConfig, DepthAnythingForDepthEstimation, Dinov2Config
    from transformers.models.dpt.image_processing_pil_dpt import DPTImageProcessorPil

    backbone = Dinov2Config(hidden_size=32, num_hidden_layers=4, num_attention_heads=4, mlp_ratio=2, image_size=32,
                            patch_size=8, out_indices=[1, 2, 3, 4], reshape_hidden_states=False,
                            apply_layernorm=True)
    cfg = DepthAnythingConfig(backbone_config=backbone, patch_size=8, reassemble_hidden_size=32,
                              reassemble_factors=[4, 2, 1, 0.5], neck_hidden_sizes=[8, 16, 32, 32],
                              fusion_hidden_size=16, head_hidden_size=8, depth_estimation_type="metric",
                              max_depth=int(max_depth))
    ip = DPTImageProcessorPil(size={"height": 32, "width": 32}, keep_aspect_ratio=True, ensure_multiple_of=8,
                              resample=3, image_mean=_IMAGENET_MEAN, image_std=_IMAGENET_STD)
    with seeded(seed):
        return DepthAnythingForDepthEstimation(cfg).eval(), ip
