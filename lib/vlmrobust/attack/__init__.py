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

**Where the gradient enters.** Gradients are taken with respect to the ``uint8`` image's own pixels (scaled to
``[0, 1]``, shape ``(B, H, W, 3)``) *before* the processor, so the budget, the band projection and the clip
all act in the original image's pixel space, as in the paper. The processor is rebuilt in torch
(:mod:`.pixels`, with Pillow's resampling in :mod:`.resample`, through :func:`pixel_path`) and the image goes
through it inside the gradient: resized to the processor's input size (as many times as the processor resizes
it: once for most, two or three times for Idefics3/SmolVLM), with Pillow's antialiased filters written as
matrices (bilinear, bicubic, Lanczos) and the ``uint8`` rounding after each pass passed straight through; then
cropped, padded, rescaled, normalised and laid out as the processor lays them out: ``(B, 3, h, w)`` for
CLIP/SigLIP-style processors (the organisms, LLaVA at another size, Gemma 3), Qwen2-VL's flattened
merge-window patches (``image_grid_thw``), Idefics3/SmolVLM's tiles plus global image
(``pixel_attention_mask``), LLaVA-OneVision's base image plus AnyRes tiles (``image_sizes``). Each batch's
path is checked on its clean images against the processor's own inputs for those prompts and images: ``max
|diff| <= 1e-5`` in normalised units (the twins of every architecture above reproduce the Pillow backend to
``2.4e-7``, resampling included); a torchvision backend that resamples may put rounding ties one ``uint8``
level apart, accepted on at most 1% of the values; where the path resamples, the clean option distributions
through the two paths must also agree within :data:`AGREE_TOL`. A processor that is not rebuilt (Gemma 3
pan-and-scan, nearest-neighbour resampling, any other class), or a check that fails, raises
:class:`NotImplementedError` instead of attacking something the model does not see. Items are batched by
scoring kind and image size (a resizing processor gives each size its own layout and token count). """

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
AGREE_TOL = 1e-3  # max |p_rebuilt - p_processor| of the clean option distribution where the path resamples


def _mask(h: int, w: int, mode: str) -> Any:
    import torch

    from ..corrupt.frequency import band_mask

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
    """The processor's pixel path rebuilt in torch for images of ``image``'s size, checked on ``image``.

    Returns a :class:`vlmrobust.attack.pixels.PixelPath`: a function ``x in [0, 1], (B, H, W, 3) -> pixel_values``
    laid out as the processor lays them out (with ``err``, the measured ``max |diff|``). The check runs the
    processor as scoring does (:func:`vlmrobust.forward.model_inputs`, a two-option prompt): the pixel values
    must agree within the path's tolerance (:mod:`vlmrobust.attack.pixels`: ``1e-5``; one ``uint8`` level of the
    resized image at a few values for a torchvision backend that resamples) and, where the path resamples, the letter
    distribution through the rebuilt path must agree with the processor path's within :data:`AGREE_TOL`. Raises
    :class:`NotImplementedError` (:class:`vlmrobust.attack.pixels.PathMismatch` when a check fails) otherwise.
    """
    from ..forward import model_inputs
    from ..models import build_prompt, letter_token_ids
    from . import pixels

    pixels.build(lm.processor, image.shape[:2])  # refuses a processor that is not rebuilt, before any forward
    prompt = build_prompt(lm.processor, "Which option?", ["yes", "no"])
    inputs = model_inputs(lm, [prompt], [image])
    return _checked(lm, [image], inputs, "letter", [letter_token_ids(lm.tokenizer, prompt, 2)])


def _checked(lm: Any, images: Sequence[np.ndarray], inputs: dict, kind: str, conts: list, rows: Any = None):
    """The pixel path for ``images`` (one size) checked against ``inputs`` (the processor's, for those
    images, or for ``images[rows]``): pixel values, then the option distribution of ``kind``."""
    import torch

    from . import pixels

    path = pixels.build(lm.processor, images[0].shape[:2])
    x0 = _stack(lm, images)
    with torch.no_grad():
        pv = path(x0 if rows is None else x0[rows])
        path.check(pv, inputs)
        if not path.exact:
            a = _option_log_probs(lm, kind, inputs, pv, conts)
            b = _option_log_probs(lm, kind, inputs, inputs["pixel_values"], conts)
            gap = max(float((p.exp() - q.exp()).abs().max()) for p, q in zip(a, b, strict=True))
            path.prob_gap = gap
            if gap > AGREE_TOL:
                raise pixels.PathMismatch(
                    f"{path.processor}: the option distribution through the rebuilt pixel path differs from the "
                    f"processor path's by {gap:.2e} (tolerance {AGREE_TOL}); PGD would not attack what the model sees")
    return path


def _stack(lm: Any, images: Sequence[np.ndarray]) -> Any:
    import torch

    return torch.stack([torch.as_tensor(np.array(im), dtype=torch.float32) / 255 for im in images]).to(lm.device)


_TOKEN_KEYS = ("input_ids", "attention_mask", "token_type_ids", "mm_token_type_ids")


def _model_kwargs(inputs: dict) -> dict:
    return {k: v for k, v in inputs.items() if k not in ("pixel_values", "starts")}


def _option_log_probs(lm: Any, method: str, inputs: dict, pv: Any, conts: list) -> list:
    """Log option distribution of each item (a list of ``(K,)`` tensors) for pixel values ``pv`` (differentiable).

    ``letter``: the K letter logits at the answer position of one batched forward.
    ``loglik``: every item's K sequences prompt + option in one right-padded
    forward (teacher forcing), the summed log-probability of each option's tokens.
    """
    import torch

    kw = _model_kwargs(inputs)
    pv = pv.to(device=lm.device, dtype=lm.model.dtype)
    if method == "letter":
        logits = lm.model(**kw, pixel_values=pv, logits_to_keep=1).logits[:, -1].float()
        return [torch.log_softmax(logits[j, ids], dim=-1) for j, ids in enumerate(conts)]
    starts = inputs["starts"]
    lp = torch.log_softmax(lm.model(**kw, pixel_values=pv).logits.float(), dim=-1)
    out, r = [], 0
    for opt in conts:
        sums = []
        for t in opt:
            pos = starts[r] - 1 + torch.arange(len(t), device=lp.device)
            sums.append(lp[r, pos, torch.as_tensor(t, device=lp.device)].sum())
            r += 1
        out.append(torch.log_softmax(torch.stack(sums), dim=-1))
    return out


def _loglik_inputs(lm: Any, prompts: list[str], images: list, options: list) -> tuple[dict, list, list, list]:
    """Right-padded sequences prompt + option for every option of every item (one image per item): the model
    inputs (each row with its item's image inputs), the option tokens, each row's item and prompt length."""
    import torch

    from ..forward import model_inputs
    from ..score.methods import _option_tokens

    toks: dict[str, list] = {}
    extra: dict[str, list] = {}
    rows, starts, conts = [], [], []
    for j, (prompt, image, opts) in enumerate(zip(prompts, images, options, strict=True)):
        c = _option_tokens(lm, "pgd", prompt, opts)
        head = model_inputs(lm, [prompt], [image])
        for t in c:
            for k, v in head.items():
                if k in _TOKEN_KEYS:
                    tail = list(t) if k == "input_ids" else [1 if k == "attention_mask" else 0] * len(t)
                    toks.setdefault(k, []).append(v[0].tolist() + tail)
                else:
                    extra.setdefault(k, []).append(v)
            rows.append(j)
            starts.append(head["input_ids"].shape[1])
        conts.append(c)
    width = max(len(q) for q in toks["input_ids"])
    out = {}
    for k, seqs in toks.items():
        fill = (lm.tokenizer.pad_token_id or 0) if k == "input_ids" else 0
        t = torch.full((len(seqs), width), fill, dtype=torch.long)
        for r, q in enumerate(seqs):
            t[r, : len(q)] = torch.as_tensor(q)
        out[k] = t.to(lm.device)
    for k, parts in extra.items():
        out[k] = torch.cat(parts) if isinstance(parts[0], torch.Tensor) else sum((list(p) for p in parts), [])
    return out, conts, rows, starts


def _batches(recs: list, images: Sequence[np.ndarray], firsts: list, batch_size: int) -> list[list[int]]:
    """Batches of items with the same scoring kind (one-token options or not) and the same image size: a
    resizing processor gives images of different sizes different layouts and token counts."""
    groups: dict[tuple, list[int]] = {}
    for i in range(len(recs)):
        groups.setdefault((firsts[i] is None, tuple(np.shape(images[i]))), []).append(i)
    return [g[i:i + batch_size] for _, g in sorted(groups.items(), key=lambda kv: kv[1][0])
            for i in range(0, len(g), batch_size)]


def pgd(lm: Any, items: pd.DataFrame, images: Sequence[np.ndarray], base_pred: Sequence[int], *, mode: str,
        method: str, template: str = "vlmrobust", eps: float = EPS, alpha: float = ALPHA, steps: int = STEPS,
        batch_size: int = 8, progress: bool | None = None) -> dict:
    """Run PGD (see the module docstring) on each item; return ``{"adv": uint8 images, "delta": float arrays
    (quantised, in [0, 1] units), "in_band": in-band energy share of each delta, "path_err": max |rebuilt -
    processor| pixel values of each item's batch}``.

    Items are batched by scoring kind and image size; each batch's pixel path is checked on its clean images
    against the processor's inputs for exactly those prompts and images (:func:`pixel_path`'s checks, with
    the attack's own method), so a mismatch raises instead of attacking something the model does not see."""
    import torch

    from ..corrupt.frequency import band_energy_share
    from ..forward import model_inputs
    from ..models import build_prompt, letter_token_ids
    from ..progress import bar

    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}, got {mode!r}")
    if method not in ("letter", "loglik", "loglik_norm"):
        raise ValueError(f"method must be letter or loglik, got {method!r}")
    if not (eps > 0 and alpha > 0 and isinstance(steps, int) and steps >= 1):
        raise ValueError(f"need eps > 0, alpha > 0 and steps >= 1, got {eps}, {alpha}, {steps}")
    recs = items.to_dict("records")
    adv, deltas, shares = [None] * len(recs), [None] * len(recs), [np.nan] * len(recs)
    errs = [np.nan] * len(recs)
    prompts_all = [build_prompt(lm.processor, r["question"], list(r["options"]), template) for r in recs]
    # items whose options are all one token need only the prompt forward: s(o) = log P(o_1 | prompt), and the
    # softmax over the K options of those log-probabilities is the softmax over the K next-token logits
    if method == "letter":
        firsts = [letter_token_ids(lm.tokenizer, p, len(r["options"])) for p, r in zip(prompts_all, recs, strict=True)]
    else:
        from ..score.methods import _option_tokens

        toks = [_option_tokens(lm, str(r["item_id"]), p, list(r["options"])) for p, r in zip(prompts_all, recs,
                                                                                             strict=True)]
        firsts = [[t[0] for t in c] if all(len(t) == 1 for t in c) else None for c in toks]
    for idx in bar(_batches(recs, images, firsts, batch_size), desc=f"PGD {mode}", progress=progress, leave=False):
        prompts = [prompts_all[i] for i in idx]
        imgs = [images[i] for i in idx]
        kind = "letter" if firsts[idx[0]] is not None else "loglik"
        rows = None
        if kind == "letter":
            inputs, conts = model_inputs(lm, prompts, imgs), [firsts[i] for i in idx]
        else:
            inputs, conts, rows, starts = _loglik_inputs(lm, prompts, imgs, [list(recs[i]["options"]) for i in idx])
            inputs["starts"] = starts
        f = _checked(lm, imgs, inputs, kind, conts, rows)
        x0 = _stack(lm, imgs)
        target = [int(base_pred[i]) for i in idx]
        delta = torch.zeros_like(x0)
        for _ in range(steps):
            delta.requires_grad_(True)
            x = x0 + delta
            logp = _option_log_probs(lm, kind, inputs, f(x if rows is None else x[rows]), conts)
            loss = -sum(lp[t] for lp, t in zip(logp, target, strict=True))
            (grad,) = torch.autograd.grad(loss, delta)
            with torch.no_grad():
                delta = project_band(delta + alpha * grad.sign(), mode)
                delta = delta.clamp(-eps, eps)
                delta = (x0 + delta).clamp(0, 1) - x0
        x_adv = torch.round((x0 + delta.detach()) * 255).clamp(0, 255).to(torch.uint8).cpu().numpy()
        for j, i in enumerate(idx):
            adv[i] = x_adv[j]
            deltas[i] = (x_adv[j].astype(np.float64) - images[i].astype(np.float64)) / 255
            shares[i] = band_energy_share(deltas[i], _BAND[mode]) if mode != "pixel" else 1.0
            errs[i] = f.err
    return {"adv": adv, "delta": deltas, "in_band": np.asarray(shares), "path_err": np.asarray(errs)}


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
