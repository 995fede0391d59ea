"""Frequency-constrained PGD on the pixels (seed 002 §6, App. F.3, Table 29, Fig. 20).

``delta_{t+1} = Pi_eps( Proj_band( delta_t + alpha * sign(grad_delta L(x + delta_t)) ) )``

* **Loss**: untargeted on the base prediction: ``L = -log p(base | x + delta)``,
  ``p`` the option distribution of the scoring method (softmax over the K letter
  logits for ``letter``, over the K summed option log-likelihoods for ``loglik``);
  ascending L pushes the model off its clean answer.
* **Proj_band** (:func:`project_band`): an ideal mask on each channel's 2-D DFT
  (``rfft2``), ``pixel`` = identity, ``low`` keeps ``0 < rho <= 0.25``, ``high``
  keeps ``rho > 0.5`` (the bands of :mod:`vlmrobust.corrupt.frequency`; DC is in
  neither band). It is an orthogonal projection, hence idempotent.
* **Pi_eps**: clip to ``|delta| <= eps`` per pixel and channel, then to the valid
  image ``0 <= x + delta <= 1``. The clip puts energy back outside the band;
  :func:`pgd` reports the in-band energy share that is left.
* Fixed here: ``eps = 8/255`` (the paper's), ``alpha = 2/255``, 20 steps,
  ``delta_0 = 0``; the final ``x + delta`` is quantised to ``uint8`` and rescored
  through :func:`vlmrobust.score.predict`, the normal scoring path.

**Where the gradient enters.** Gradients are taken with respect to the ``uint8``
image's pixels (scaled to ``[0, 1]``) *before* the processor: the processor's
rescale and normalisation are rebuilt in torch (:func:`pixel_path`) and checked
against the processor's own output on the clean image, so for the organisms (a
CLIP image processor at the image's own size) the gradient is exact. A real model
whose processor resizes is attacked on the image resized once to the
processor's input size (outside the gradient); processors that tile or flatten
patches (Qwen2-VL, Idefics3 splitting, LLaVA-OneVision AnyRes) are refused with
:class:`NotImplementedError`: there the gradient would enter at ``pixel_values``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

__all__ = ["EPS", "ALPHA", "STEPS", "MODES", "project_band", "pixel_path", "pgd", "pgd_table"]

EPS = 8 / 255
ALPHA = 2 / 255
STEPS = 20
MODES = ("pixel", "low", "high")
_BAND = {"low": (0.0, 0.25), "high": (0.5, np.inf)}


def _mask(h: int, w: int, mode: str) -> Any:
    import torch

    from .corrupt.frequency import band_mask

    return torch.as_tensor(band_mask(h, w, _BAND[mode]))


def project_band(delta: Any, mode: str) -> Any:
    """``Proj_band`` of ``(..., H, W, C)`` perturbations (torch or NumPy; the same type back)."""
    import torch

    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}, got {mode!r}")
    if mode == "pixel":
        return delta
    as_np = isinstance(delta, np.ndarray)
    d = torch.as_tensor(delta)
    h, w = d.shape[-3], d.shape[-2]
    spec = torch.fft.rfft2(d, dim=(-3, -2))
    spec = spec * _mask(h, w, mode).to(spec.device)[..., None]
    out = torch.fft.irfft2(spec, s=(h, w), dim=(-3, -2)).to(d.dtype)
    return out.numpy() if as_np else out


def pixel_path(lm: Any, image: np.ndarray) -> Any:
    """A torch function ``x in [0, 1], (B, H, W, 3) -> pixel_values`` equal to the processor's on ``image``.

    Raises :class:`NotImplementedError` for processors whose pixel values are not a
    ``(B, 3, H, W)`` rescale-and-normalise of the image (see the module docstring).
    """
    import torch

    ip = getattr(lm.processor, "image_processor", None)
    out = lm.processor.image_processor(images=[image], return_tensors="pt") if ip is not None else None
    pv = None if out is None else out.get("pixel_values")
    if pv is None or pv.ndim != 4 or tuple(pv.shape[-2:]) != tuple(image.shape[:2]):
        raise NotImplementedError(
            f"{type(lm.processor).__name__}: PGD needs pixel values that are the image itself rescaled and "
            "normalised (B, 3, H, W) at the image's size; this processor resizes, tiles or flattens patches, "
            "so the gradient would enter at its pixel_values")
    scale = float(getattr(ip, "rescale_factor", 1 / 255)) * 255 if getattr(ip, "do_rescale", True) else 255.0
    mean = torch.as_tensor(ip.image_mean if getattr(ip, "do_normalize", False) else (0.0, 0.0, 0.0))
    std = torch.as_tensor(ip.image_std if getattr(ip, "do_normalize", False) else (1.0, 1.0, 1.0))

    def f(x):
        y = (x * scale - mean.to(x.dtype)) / std.to(x.dtype)
        return y.permute(0, 3, 1, 2)

    got = f(torch.as_tensor(np.array(image), dtype=torch.float32)[None] / 255)
    err = float((got - pv.float()).abs().max())
    if err > 1e-5:
        raise NotImplementedError(f"{type(ip).__name__}: the rebuilt processor path is off by {err:.2e}; "
                                  "PGD would not attack what the model sees")
    return f


def _option_log_probs(lm: Any, method: str, inputs: dict, pv: Any, conts: list) -> list:
    """Log option distribution of each item (a list of ``(K,)`` tensors) for pixel values ``pv`` (differentiable).

    ``letter``: the K letter logits at the answer position of one batched forward.
    ``loglik``: every item's K sequences prompt + option in one right-padded
    forward (teacher forcing), the summed log-probability of each option's tokens.
    """
    import torch

    kw = {k: v for k, v in inputs.items() if k not in ("pixel_values", "rows", "starts")}
    if method == "letter":
        logits = lm.model(**kw, pixel_values=pv.to(lm.model.dtype), logits_to_keep=1).logits[:, -1].float()
        return [torch.log_softmax(logits[j, ids], dim=-1) for j, ids in enumerate(conts)]
    rows, starts = inputs["rows"], inputs["starts"]
    logits = lm.model(**kw, pixel_values=pv[torch.as_tensor(rows)].to(lm.model.dtype)).logits.float()
    lp = torch.log_softmax(logits, dim=-1)
    out, r = [], 0
    for opt in conts:
        sums = []
        for t in opt:
            pos = starts[r] - 1 + torch.arange(len(t))
            sums.append(lp[r, pos, torch.as_tensor(t)].sum())
            r += 1
        out.append(torch.log_softmax(torch.stack(sums), dim=-1))
    return out


def _loglik_inputs(lm: Any, prompts: list[str], images: list, options: list) -> tuple[dict, list]:
    """Right-padded sequences prompt + option for every option of every item (one image per item)."""
    import torch

    from .forward import model_inputs
    from .score.methods import _option_tokens

    seqs, rows, starts, conts = [], [], [], []
    for j, (prompt, image, opts) in enumerate(zip(prompts, images, options, strict=True)):
        c = _option_tokens(lm, "pgd", prompt, opts)
        head = model_inputs(lm, [prompt], [image])["input_ids"][0].tolist()
        for t in c:
            seqs.append(head + list(t))
            rows.append(j)
            starts.append(len(head))
        conts.append(c)
    width = max(len(q) for q in seqs)
    pad = lm.tokenizer.pad_token_id or 0
    ids = torch.full((len(seqs), width), pad, dtype=torch.long)
    mask = torch.zeros_like(ids)
    for r, q in enumerate(seqs):
        ids[r, : len(q)] = torch.as_tensor(q)
        mask[r, : len(q)] = 1
    return {"input_ids": ids, "attention_mask": mask, "rows": rows, "starts": starts}, conts


def pgd(lm: Any, items: pd.DataFrame, images: Sequence[np.ndarray], base_pred: Sequence[int], *, mode: str,
        method: str, template: str = "vlmrobust", eps: float = EPS, alpha: float = ALPHA, steps: int = STEPS,
        batch_size: int = 8, progress: bool | None = None) -> dict:
    """Run PGD (see the module docstring) on each item; return ``{"adv": uint8 images, "delta": float arrays
    (quantised, in [0, 1] units), "in_band": in-band energy share of each delta}``."""
    import torch

    from .corrupt.frequency import band_energy_share
    from .forward import model_inputs
    from .models import build_prompt, letter_token_ids
    from .progress import bar

    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}, got {mode!r}")
    if method not in ("letter", "loglik", "loglik_norm"):
        raise ValueError(f"method must be letter or loglik, got {method!r}")
    if not (eps > 0 and alpha > 0 and isinstance(steps, int) and steps >= 1):
        raise ValueError(f"need eps > 0, alpha > 0 and steps >= 1, got {eps}, {alpha}, {steps}")
    recs = items.to_dict("records")
    adv, deltas, shares = [None] * len(recs), [None] * len(recs), [np.nan] * len(recs)
    prompts_all = [build_prompt(lm.processor, r["question"], list(r["options"]), template) for r in recs]
    # items whose options are all one token need only the prompt forward: s(o) = log P(o_1 | prompt), and the
    # softmax over the K options of those log-probabilities is the softmax over the K next-token logits
    if method == "letter":
        firsts = [letter_token_ids(lm.tokenizer, p, len(r["options"])) for p, r in zip(prompts_all, recs, strict=True)]
    else:
        from .score.methods import _option_tokens

        toks = [_option_tokens(lm, str(r["item_id"]), p, list(r["options"])) for p, r in zip(prompts_all, recs,
                                                                                             strict=True)]
        firsts = [[t[0] for t in c] if all(len(t) == 1 for t in c) else None for c in toks]
    groups = [[i for i in range(len(recs)) if firsts[i] is not None], [i for i in range(len(recs)) if firsts[i] is None]]
    batches = [g[i:i + batch_size] for g in groups for i in range(0, len(g), batch_size)]
    for idx in bar(batches, desc=f"PGD {mode}", progress=progress, leave=False):
        prompts = [prompts_all[i] for i in idx]
        opts = [list(recs[i]["options"]) for i in idx]
        f = pixel_path(lm, images[idx[0]])
        x0 = torch.stack([torch.as_tensor(np.array(images[i]), dtype=torch.float32) / 255 for i in idx])
        kind = "letter" if firsts[idx[0]] is not None else "loglik"
        if kind == "letter":
            inputs = model_inputs(lm, prompts, [images[i] for i in idx])
            conts = [firsts[i] for i in idx]
        else:
            inputs, conts = _loglik_inputs(lm, prompts, [images[i] for i in idx], opts)
        target = torch.as_tensor([int(base_pred[i]) for i in idx])
        delta = torch.zeros_like(x0)
        for _ in range(steps):
            delta.requires_grad_(True)
            logp = _option_log_probs(lm, kind, inputs, f(x0 + delta), conts)
            loss = -sum(lp[t] for lp, t in zip(logp, target.tolist(), strict=True))
            (grad,) = torch.autograd.grad(loss, delta)
            with torch.no_grad():
                delta = project_band(delta + alpha * grad.sign(), mode)
                delta = delta.clamp(-eps, eps)
                delta = (x0 + delta).clamp(0, 1) - x0
        x_adv = torch.round((x0 + delta.detach()) * 255).clamp(0, 255).to(torch.uint8).numpy()
        for j, i in enumerate(idx):
            adv[i] = x_adv[j]
            deltas[i] = (x_adv[j].astype(np.float64) - images[i].astype(np.float64)) / 255
            shares[i] = band_energy_share(deltas[i], _BAND[mode]) if mode != "pixel" else 1.0
    return {"adv": adv, "delta": deltas, "in_band": np.asarray(shares)}


def pgd_table(clean_pred: pd.DataFrame, adv_preds: dict[str, pd.DataFrame], by: Sequence[str] = ("model",)
              ) -> pd.DataFrame:
    """Table 29: per group and mode, attack success ``ASR = 1 - adversarial accuracy``, the prediction flip
    rate ``PFR`` (adversarial prediction != clean prediction), the clean accuracy, and the mean in-band energy
    share of the deltas (``adv_preds[mode]`` carries it as column ``in_band``)."""
    key = list(by) + ["item_id"]
    rows = []
    for mode, adv in adv_preds.items():
        j = adv.merge(clean_pred[key + ["pred_idx", "correct"]], on=key, suffixes=("", "_clean"))
        for k, g in j.groupby(list(by), sort=False):
            k = k if isinstance(k, tuple) else (k,)
            rows.append({**dict(zip(by, k, strict=True)), "mode": mode, "ASR": 1 - float(g["correct"].mean()),
                         "PFR": float((g["pred_idx"] != g["pred_idx_clean"]).mean()),
                         "clean_acc": float(g["correct_clean"].mean()), "in_band_share": float(g["in_band"].mean()),
                         "n": len(g)})
    return pd.DataFrame(rows)
