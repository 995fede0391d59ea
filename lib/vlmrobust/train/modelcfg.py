"""Architecture of the model organisms: a LLaVA built from a small spec.

``LlavaForConditionalGeneration`` = CLIP-style ViT vision tower (patch
embedding + CLS + pre-LN transformer) -> two-layer GELU projector -> Llama-style
decoder (RMSNorm, rotary positions, SwiGLU), with tied input/output embeddings.
The vision features fed to the projector are the last encoder layer's patch
tokens (CLS dropped), as in LLaVA-1.5 with ``vision_feature_select_strategy="default"``.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

__all__ = ["ModelSpec", "llava_config", "build_model", "count_parameters"]


@dataclass(frozen=True)
class ModelSpec:
    """Sizes of one organism. Widths must be divisible by their head counts.

    ``extra_tokens`` are appended to the organisms' shared vocabulary (e.g. the talk
    tokens of :data:`vlmrobust.train.encoding.TALK_TOKENS`); every other token keeps its id,
    so an organism with extra tokens can start from one without them.
    """

    image_size: int = 64
    patch: int = 8
    vision_width: int = 64
    vision_layers: int = 3
    vision_heads: int = 4
    text_width: int = 64
    text_layers: int = 3
    text_heads: int = 4
    mlp_ratio: int = 4
    max_positions: int = 256
    extra_tokens: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if not isinstance(self.extra_tokens, tuple) or not all(isinstance(t, str) and t for t in self.extra_tokens):
            raise ValueError(f"model.extra_tokens must be a tuple of non-empty strings, got {self.extra_tokens!r}")
        if len(set(self.extra_tokens)) != len(self.extra_tokens):
            raise ValueError(f"model.extra_tokens must not repeat, got {self.extra_tokens!r}")
        for name in ("image_size", "patch", "vision_width", "vision_layers", "vision_heads", "text_width",
                     "text_layers", "text_heads", "mlp_ratio", "max_positions"):
            v = getattr(self, name)
            if not isinstance(v, int) or isinstance(v, bool) or v < 1:
                raise ValueError(f"model.{name} must be a positive int, got {v!r}")
        if self.image_size % self.patch:
            raise ValueError(f"model.image_size ({self.image_size}) must be a multiple of model.patch ({self.patch})")
        if self.vision_width % self.vision_heads or self.text_width % self.text_heads:
            raise ValueError("model widths must be divisible by their head counts")

    @classmethod
    def from_dict(cls, d: dict) -> ModelSpec:
        unknown = set(d) - set(cls.__dataclass_fields__)
        if unknown:
            raise ValueError(f"unknown model keys {sorted(unknown)}; allowed: {sorted(cls.__dataclass_fields__)}")
        if isinstance(d.get("extra_tokens"), list):
            d = {**d, "extra_tokens": tuple(d["extra_tokens"])}
        return cls(**d)

    def without_extra_tokens(self) -> ModelSpec:
        """The same sizes over the shared vocabulary alone."""
        from dataclasses import replace

        return replace(self, extra_tokens=())

    def to_dict(self) -> dict:
        d = asdict(self)
        d["extra_tokens"] = list(d["extra_tokens"])
        return d


def llava_config(spec: ModelSpec, tokenizer: Any) -> Any:
    """The ``LlavaConfig`` of ``spec`` for ``tokenizer`` (vocabulary size and special ids)."""
    from transformers import CLIPVisionConfig, LlamaConfig, LlavaConfig

    n_img = (spec.image_size // spec.patch) ** 2
    vision = CLIPVisionConfig(
        hidden_size=spec.vision_width, intermediate_size=spec.mlp_ratio * spec.vision_width,
        num_hidden_layers=spec.vision_layers, num_attention_heads=spec.vision_heads,
        image_size=spec.image_size, patch_size=spec.patch, projection_dim=spec.vision_width,
        hidden_act="quick_gelu",
    )
    text = LlamaConfig(
        vocab_size=len(tokenizer), hidden_size=spec.text_width,
        intermediate_size=spec.mlp_ratio * spec.text_width, num_hidden_layers=spec.text_layers,
        num_attention_heads=spec.text_heads, num_key_value_heads=spec.text_heads,
        max_position_embeddings=spec.max_positions, tie_word_embeddings=True,
        bos_token_id=tokenizer.bos_token_id, eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id, rms_norm_eps=1e-5,
    )
    return LlavaConfig(
        vision_config=vision, text_config=text, image_token_id=tokenizer.convert_tokens_to_ids("<image>"),
        vision_feature_select_strategy="default", vision_feature_layer=-1,
        projector_hidden_act="gelu", image_seq_length=n_img, tie_word_embeddings=True,
    )


def build_model(spec: ModelSpec, tokenizer: Any, seed: int) -> Any:
    """A freshly initialised ``LlavaForConditionalGeneration`` (weights from ``seed``)."""
    import torch
    from transformers import LlavaForConditionalGeneration

    cfg = llava_config(spec, tokenizer)
    gen = torch.random.fork_rng()
    with gen:
        torch.manual_seed(seed)
        model = LlavaForConditionalGeneration(cfg)
    return model


def count_parameters(model: Any) -> int:
    """Distinct parameters (tied weights counted once)."""
    seen: set[int] = set()
    total = 0
    for p in model.parameters():
        if id(p) not in seen:
            seen.add(id(p))
            total += p.numel()
    return total
