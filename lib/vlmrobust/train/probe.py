"""Question-conditioned attention-pooling head for pre-training the vision tower alone.

Stage 1 of the organisms' staged training (model-organism issue, feasibility
experiment 2): the vision tower learns to see before any language model is
attached. The head reads the same patch features that LLaVA feeds its
projector (last encoder layer, CLS dropped), pools them with attention whose
queries come from a bag-of-words embedding of the question (two rounds, so a
relation "left of the red star" can first find the anchor), and scores each
option by a dot product with the option's bag-of-words embedding:

.. math::  s_k = \\langle g([\\mathrm{pool}(F; q), q]),\\ e(o_k) \\rangle, \\qquad
           p(k) = \\mathrm{softmax}_k(s_k)

trained with cross-entropy on the correct option. The head is discarded after
the stage; only the tower's weights carry on.
"""

from __future__ import annotations

import torch
from torch import nn

__all__ = ["VisionProbe"]


class VisionProbe(nn.Module):
    """Option-scoring head over patch features (see module docstring)."""

    def __init__(self, vocab_size: int, vision_width: int, width: int = 128, heads: int = 4, rounds: int = 2) -> None:
        super().__init__()
        if width % heads:
            raise ValueError(f"width ({width}) must be divisible by heads ({heads})")
        self.heads, self.rounds, self.width = heads, rounds, width
        self.emb = nn.Embedding(vocab_size, width, padding_idx=0)
        self.feat = nn.Sequential(nn.LayerNorm(vision_width), nn.Linear(vision_width, width))
        self.key = nn.Linear(width, width)
        self.val = nn.Linear(width, width)
        self.query = nn.ModuleList([nn.Linear(width, width) for _ in range(rounds)])
        self.mix = nn.ModuleList([nn.Sequential(nn.LayerNorm(2 * width), nn.Linear(2 * width, width), nn.GELU())
                                  for _ in range(rounds)])
        self.out = nn.Sequential(nn.Linear(width, width), nn.GELU(), nn.Linear(width, width))
        self.opt = nn.Linear(width, width)

    def _bag(self, ids: torch.Tensor) -> torch.Tensor:
        mask = (ids != 0).float().unsqueeze(-1)
        return (self.emb(ids) * mask).sum(-2) / mask.sum(-2).clamp(min=1.0)

    def forward(self, patches: torch.Tensor, question_ids: torch.Tensor, option_ids: torch.Tensor) -> torch.Tensor:
        """Option logits (B, 5); missing options (all-pad rows) get -inf."""
        b, p, _ = patches.shape
        h, d = self.heads, self.width // self.heads
        f = self.feat(patches)
        k = self.key(f).view(b, p, h, d)
        v = self.val(f).view(b, p, h, d)
        q = self._bag(question_ids)
        state = q
        for r in range(self.rounds):
            qq = self.query[r](state).view(b, 1, h, d)
            att = torch.softmax((k * qq).sum(-1) / d**0.5, dim=1)  # (B, P, H)
            pooled = (att.unsqueeze(-1) * v).sum(1).reshape(b, h * d)
            state = state + self.mix[r](torch.cat([pooled, q], dim=-1))
        z = self.out(state)
        o = self.opt(self._bag(option_ids))  # (B, 5, W)
        logits = torch.einsum("bw,bkw->bk", z, o)
        present = (option_ids != 0).any(-1)
        return logits.masked_fill(~present, float("-inf"))
