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

:class:`DenseHead` adds per-patch supervision (stages with ``dense: true``): from
each patch feature it predicts the colour, shape and sign character of the
object covering the patch, whether the patch holds an object's centre, the
object's apparent height and the patch's log distance
(:func:`vlmrobust.train.dense.dense_labels`). Sixty-four targets per image
instead of one answer teach the tower to see objects far faster per image.
"""

from __future__ import annotations

import torch
from torch import nn

__all__ = ["VisionProbe", "DenseHead", "dense_loss"]


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
        from .dense import DENSE_CLASSES

        self.dense = DenseHead(vision_width, DENSE_CLASSES)  # built last: older probes' initialisation unchanged

    def load_compatible(self, state: dict) -> None:
        """Load a state saved before the dense head existed (its weights then keep their initialisation).

        An empty state (a parent rebuilt from exported weights, which do not hold
        the probe) leaves the probe as it is. A parent with a smaller vocabulary (an
        organism that appends tokens, ``model.extra_tokens``) fills the first rows of
        the word embedding; the appended rows keep their initialisation.
        """
        if not state:
            return
        state = dict(state)
        own = self.emb.weight
        old = state.get("emb.weight")
        if (old is not None and old.shape != own.shape and old.shape[1:] == own.shape[1:]
                and old.shape[0] < own.shape[0]):
            grown = own.detach().clone()
            grown[: old.shape[0]] = old
            state["emb.weight"] = grown
        missing, unexpected = self.load_state_dict(state, strict=False)
        bad = [k for k in missing if not k.startswith("dense.")] + list(unexpected)
        if bad:
            raise RuntimeError(f"probe state does not fit: {bad[:5]}")

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


class DenseHead(nn.Module):
    """Per-patch predictions of the :func:`~vlmrobust.train.dense.dense_labels` targets."""

    def __init__(self, vision_width: int, classes: dict[str, int], width: int = 96) -> None:
        super().__init__()
        self.classes = dict(classes)
        self.body = nn.Sequential(nn.LayerNorm(vision_width), nn.Linear(vision_width, width), nn.GELU())
        self.out = nn.Linear(width, sum(self.classes.values()) + 3)  # + centre logit, extent, log depth

    def forward(self, patches: torch.Tensor) -> dict[str, torch.Tensor]:
        z = self.out(self.body(patches))
        out, i = {}, 0
        for name, n in self.classes.items():
            out[name] = z[..., i: i + n]
            i += n
        out["centre"], out["extent"], out["logdepth"] = z[..., i], z[..., i + 1], z[..., i + 2]
        return out


def dense_loss(pred: dict[str, torch.Tensor], target: dict[str, torch.Tensor]) -> tuple[torch.Tensor, dict]:
    """Sum of the per-patch losses (cross-entropy, logistic, squared error on object patches and depth).

    Returns the loss and the patch accuracy of the categorical targets on object patches.
    """
    import torch.nn.functional as F

    obj = target["shape"] > 0
    loss = pred["centre"].new_zeros(())
    stats = {}
    for name in ("colour", "shape", "char"):
        logits = pred[name].reshape(-1, pred[name].shape[-1])
        loss = loss + F.cross_entropy(logits, target[name].reshape(-1))
        keep = (target[name] > 0) if name == "char" else obj
        if keep.any():
            ok = (pred[name].argmax(-1) == target[name])[keep].float()
            stats[f"dense_{name}"] = (float(ok.sum()), int(ok.numel()))
    loss = loss + F.binary_cross_entropy_with_logits(pred["centre"], target["centre"].float())
    if obj.any():
        loss = loss + 10.0 * F.mse_loss(pred["extent"][obj], target["extent"][obj])
    loss = loss + 0.25 * F.mse_loss(pred["logdepth"], target["logdepth"])
    return loss, stats
