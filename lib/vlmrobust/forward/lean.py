"""A lean forward of the zoo's architecture that reads the answer positions only (the fast path's model).

The organisms are LLaVA models (:mod:`vlmrobust.train.modelcfg`): a CLIP vision tower, a two-layer
GELU projector and a Llama decoder with tied embeddings. Letter and log-likelihood scoring read the
logits of a few positions per row (the answer position, and for options of several tokens the
positions inside each option), so :class:`LeanLlava` computes the same function as
``LlavaForConditionalGeneration`` at those positions and skips the rest:

* RoPE's rotation folded into the weights (a second copy of the Q and K projections, rows permuted
  and negated, gives ``rotate_half(q)`` directly), and no slicing of fused outputs; the vision
  tower's linear maps on 2-D activations, so each is one GEMM with its bias;
* every decoder layer but the last on all positions; the last one computes its keys and values on
  all positions and its queries, attention output and MLP at the ``gather`` positions only; the
  final norm and the LM head run there only;
* the decoder's attention exports as ONNX Runtime's fused ``com.microsoft.MultiHeadAttention`` (heads
  split inside the kernel; :class:`_Attention` computes the same in torch);
* the image features are copied into the embedded sequence by an index per position
  (``image_index``: the feature's row, or -1 for a text token) instead of a scatter over a mask;
* attention takes a boolean mask ``(B, T, T)`` (``True`` = may attend), so one row can hold a
  prompt and the continuations of all its options side by side, each option seeing the prompt and
  its own earlier tokens only (the same sums as a KV-cache continuation per option).

Positions enter through RoPE only, whose attention scores depend on position differences: the
fast path numbers each row's first real token 0, where the Hugging Face forward numbers the left
padding too; the sums agree to float rounding. :func:`unsupported` says why a model is not of this
architecture (``None`` when it is).
"""

from __future__ import annotations

from typing import Any

import torch
from torch import nn

__all__ = ["LeanLlava", "unsupported", "LEAN_VERSION"]

#: Bumped whenever the lean module computes anything differently (it enters the exported files' names).
LEAN_VERSION = 1
_NEG = -1e9  # additive bias of a masked score (finite: a row with nothing to attend stays finite)


def unsupported(model: Any) -> str | None:
    """Why ``model`` is not a LLaVA of the zoo's architecture (CLIP tower, GELU projector, Llama decoder),
    or ``None`` when :class:`LeanLlava` computes its forward."""
    cfg = getattr(model, "config", None)
    if cfg is None or getattr(cfg, "model_type", None) != "llava":
        return f"{type(model).__name__} is not a LLaVA model"
    vc, tc = cfg.vision_config, cfg.text_config
    checks = [
        (vc.model_type == "clip_vision_model", f"vision tower {vc.model_type!r} is not CLIP"),
        (tc.model_type == "llama", f"decoder {tc.model_type!r} is not Llama"),
        (cfg.vision_feature_layer == -1, f"vision_feature_layer {cfg.vision_feature_layer!r} is not -1"),
        (cfg.vision_feature_select_strategy == "default",
         f"vision_feature_select_strategy {cfg.vision_feature_select_strategy!r} is not 'default'"),
        (cfg.projector_hidden_act == "gelu", f"projector activation {cfg.projector_hidden_act!r} is not gelu"),
        (vc.hidden_act == "quick_gelu", f"vision activation {vc.hidden_act!r} is not quick_gelu"),
        (tc.hidden_act == "silu", f"decoder activation {tc.hidden_act!r} is not silu"),
        ((getattr(tc, "rope_parameters", None) or {}).get("rope_type", "default") == "default",
         "the decoder's RoPE is not the default type"),
        (not getattr(tc, "attention_bias", False) and not getattr(tc, "mlp_bias", False),
         "the decoder has biases"),
        (getattr(tc, "num_hidden_layers", 0) >= 1, "the decoder has no layers"),
    ]
    for ok, why in checks:
        if not ok:
            return why
    return None


class _Linear(nn.Module):
    """A linear map without bias of a given weight."""

    def __init__(self, weight: torch.Tensor):
        super().__init__()
        self.weight = nn.Parameter(weight.detach().clone(), requires_grad=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return nn.functional.linear(x, self.weight)


def _rotated(weight: torch.Tensor, head_dim: int) -> torch.Tensor:
    """The weight whose output is ``rotate_half`` of the output of ``weight`` in every head (exactly: the
    same rows, permuted, half of them negated)."""
    w = weight.detach().view(-1, head_dim, weight.shape[-1])
    half = head_dim // 2
    return torch.cat([-w[:, half:], w[:, :half]], 1).reshape(weight.shape)


def _rms(x: torch.Tensor, weight: torch.Tensor, eps: float) -> torch.Tensor:
    var = x.pow(2).mean(-1, keepdim=True)
    return weight * (x * torch.rsqrt(var + eps))


def _heads(x: torch.Tensor, n: int) -> torch.Tensor:
    b, t, _ = x.shape
    return x.view(b, t, n, -1).transpose(1, 2)




def _attend(q, k, v, bias, scale):
    w = torch.softmax(torch.matmul(q, k.transpose(-1, -2)) * scale + bias, dim=-1)
    o = torch.matmul(w, v)
    return o.transpose(1, 2).reshape(o.shape[0], o.shape[2], -1)


class _Attention(torch.autograd.Function):
    """Attention of ``(B, S, H*d)`` queries over ``(B, T, H*d)`` keys and values with an additive bias
    ``(B, 1, S, T)``; exported as ``com.microsoft.MultiHeadAttention``."""

    @staticmethod
    def forward(ctx, q, k, v, bias, heads: int, scale: float):  # noqa: ARG004
        return _attend(_heads(q, heads), _heads(k, heads), _heads(v, heads), bias, scale)

    @staticmethod
    def symbolic(g, q, k, v, bias, heads, scale):
        from torch.onnx._internal.torchscript_exporter.symbolic_helper import _optional_input_placeholder_tensor

        none = _optional_input_placeholder_tensor
        out = g.op("com.microsoft::MultiHeadAttention", q, k, v, none(g), none(g), bias, num_heads_i=heads,
                   scale_f=scale)
        out.setType(q.type())  # the output has the queries' shape and type
        return out


class _Vision(nn.Module):
    """CLIP vision tower up to its last layer's output, CLS dropped, then the projector."""

    def __init__(self, llava: Any):
        super().__init__()
        tower = llava.model.vision_tower
        tower = getattr(tower, "vision_model", tower)
        emb = tower.embeddings
        self.patch = emb.patch_embedding
        self.cls = nn.Parameter(emb.class_embedding.detach().clone(), requires_grad=False)
        self.pos = nn.Parameter(emb.position_embedding.weight.detach().clone(), requires_grad=False)
        self.pre = tower.pre_layrnorm
        cfg = llava.config.vision_config
        self.n_heads = int(cfg.num_attention_heads)
        self.scale = float((cfg.hidden_size // self.n_heads) ** -0.5)
        self.layers = nn.ModuleList()
        for layer in tower.encoder.layers:
            a = layer.self_attn
            mod = nn.Module()
            mod.ln1, mod.ln2, mod.out, mod.fc1, mod.fc2 = layer.layer_norm1, layer.layer_norm2, a.out_proj, \
                layer.mlp.fc1, layer.mlp.fc2
            mod.q, mod.k, mod.v = a.q_proj, a.k_proj, a.v_proj
            self.layers.append(mod)
        proj = llava.model.multi_modal_projector
        self.lin1, self.lin2 = proj.linear_1, proj.linear_2

    def forward(self, pixel_values: torch.Tensor) -> torch.Tensor:
        x = self.patch(pixel_values).flatten(2).transpose(1, 2)
        x = torch.cat([self.cls.expand(x.shape[0], 1, -1), x], 1) + self.pos
        b, n, d = x.shape
        x = self.pre(x).reshape(b * n, d)  # 2-D: every linear map is one GEMM with its bias

        def heads(y):
            return _heads(y.view(b, n, d), self.n_heads)

        for m in self.layers:
            h = m.ln1(x)
            x = x + m.out(_attend(heads(m.q(h)), heads(m.k(h)), heads(m.v(h)), 0.0, self.scale).reshape(b * n, d))
            h = m.fc1(m.ln2(x))
            x = x + m.fc2(h * torch.sigmoid(1.702 * h))
        x = x.view(b, n, d)[:, 1:].reshape(b * (n - 1), d)
        return self.lin2(nn.functional.gelu(self.lin1(x))).view(b, n - 1, -1)


class LeanLlava(nn.Module):
    """The logits of a LLaVA organism at chosen positions (module docstring).

    ``forward(input_ids, pixel_values, position_ids, image_index, mask, gather)`` with
    ``input_ids``, ``position_ids``, ``image_index`` ``(B, T)`` int64, ``pixel_values`` ``(B, 3, H, W)``
    float32, ``mask`` ``(B, T, T)`` bool and ``gather`` ``(B, P)`` int64 returns logits ``(B, P, V)``.
    """

    def __init__(self, llava: Any):
        super().__init__()
        why = unsupported(llava)
        if why is not None:
            raise ValueError(f"LeanLlava: {why}")
        tc = llava.config.text_config
        self.vision = _Vision(llava)
        dec = llava.model.language_model
        self.embed = nn.Parameter(dec.embed_tokens.weight.detach().clone(), requires_grad=False)
        head = llava.get_output_embeddings().weight.detach()
        self.head = self.embed if head.data_ptr() == dec.embed_tokens.weight.data_ptr() else \
            nn.Parameter(head.clone(), requires_grad=False)
        self.n_heads, self.n_kv = int(tc.num_attention_heads), int(tc.num_key_value_heads)
        self.head_dim = int(getattr(tc, "head_dim", None) or tc.hidden_size // self.n_heads)
        self.scale = float(self.head_dim ** -0.5)
        self.eps = float(tc.rms_norm_eps)
        theta = float((getattr(tc, "rope_parameters", None) or {}).get("rope_theta", 10000.0))
        inv = 1.0 / (theta ** (torch.arange(0, self.head_dim, 2, dtype=torch.float) / self.head_dim))
        self.register_buffer("inv_freq", inv, persistent=False)
        self.layers = nn.ModuleList()
        for layer in dec.layers:
            a, mlp = layer.self_attn, layer.mlp
            mod = nn.Module()
            mod.n1 = nn.Parameter(layer.input_layernorm.weight.detach().clone(), requires_grad=False)
            mod.n2 = nn.Parameter(layer.post_attention_layernorm.weight.detach().clone(), requires_grad=False)
            mod.q, mod.k, mod.v, mod.o = a.q_proj, a.k_proj, a.v_proj, a.o_proj
            mod.q_rot = _Linear(_rotated(a.q_proj.weight, self.head_dim))
            mod.k_rot = _Linear(_rotated(a.k_proj.weight, self.head_dim))
            mod.gate, mod.up, mod.down = mlp.gate_proj, mlp.up_proj, mlp.down_proj
            self.layers.append(mod)
        self.norm = nn.Parameter(dec.norm.weight.detach().clone(), requires_grad=False)

    def _rope(self, x, x_rot, n, cos, sin):
        """RoPE on ``(B, T, n*d)`` with ``cos``, ``sin`` of shape ``(B, T, 1, d)``, back to ``(B, T, n*d)``."""
        b, t, _ = x.shape
        return (x.view(b, t, n, -1) * cos + x_rot.view(b, t, n, -1) * sin).view(b, t, -1)

    def _q(self, m, h, cos, sin):
        return self._rope(m.q(h), m.q_rot(h), self.n_heads, cos, sin)

    def _kv(self, m, h, cos, sin):
        k, v = self._rope(m.k(h), m.k_rot(h), self.n_kv, cos, sin), m.v(h)
        if self.n_kv != self.n_heads:
            b, t, _ = k.shape
            k = k.view(b, t, self.n_kv, -1).repeat_interleave(self.n_heads // self.n_kv, 2).view(b, t, -1)
            v = v.view(b, t, self.n_kv, -1).repeat_interleave(self.n_heads // self.n_kv, 2).view(b, t, -1)
        return k, v

    def _attn(self, q, k, v, bias):
        return _Attention.apply(q, k, v, bias, self.n_heads, self.scale)

    def _mlp(self, m, x):
        h = _rms(x, m.n2, self.eps)
        return x + m.down(nn.functional.silu(m.gate(h)) * m.up(h))

    def forward(self, input_ids: torch.Tensor, pixel_values: torch.Tensor, position_ids: torch.Tensor,
                image_index: torch.Tensor, mask: torch.Tensor, gather: torch.Tensor) -> torch.Tensor:
        feats = self.vision(pixel_values)  # (B, N, D)
        x = self.embed[input_ids]
        idx = image_index.clamp(min=0).unsqueeze(-1).expand(-1, -1, feats.shape[-1])
        x = torch.where((image_index >= 0).unsqueeze(-1), torch.gather(feats, 1, idx), x)
        freqs = position_ids.unsqueeze(-1).float() * self.inv_freq
        emb = torch.cat((freqs, freqs), -1)
        cos, sin = emb.cos().unsqueeze(2), emb.sin().unsqueeze(2)  # (B, T, 1, d)
        bias = torch.where(mask, 0.0, _NEG).unsqueeze(1)  # (B, 1, T, T)
        *body, last = self.layers
        for m in body:
            h = _rms(x, m.n1, self.eps)
            k, v = self._kv(m, h, cos, sin)
            x = x + m.o(self._attn(self._q(m, h, cos, sin), k, v, bias))
            x = self._mlp(m, x)
        h = _rms(x, last.n1, self.eps)
        k, v = self._kv(last, h, cos, sin)
        gx = gather.unsqueeze(-1)
        xg = torch.gather(x, 1, gx.expand(-1, -1, x.shape[-1]))
        hg = torch.gather(h, 1, gx.expand(-1, -1, h.shape[-1]))
        cg = torch.gather(cos, 1, gx.unsqueeze(-1).expand(-1, -1, 1, cos.shape[-1]))
        sg = torch.gather(sin, 1, gx.unsqueeze(-1).expand(-1, -1, 1, sin.shape[-1]))
        bg = torch.gather(bias, 2, gx.unsqueeze(1).expand(-1, 1, -1, bias.shape[-1]))
        xg = xg + last.o(self._attn(self._q(last, hg, cg, sg), k, v, bg))
        xg = self._mlp(last, xg)
        return torch.matmul(_rms(xg, self.norm, self.eps), self.head.t())
