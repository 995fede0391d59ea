"""The predictions table: one tidy row per (model, item_id, perturbation, level, method).

Its columns are :data:`vlmrobust.schema.PRED_COLUMNS`, documented in :mod:`vlmrobust.schema`; every
later notebook reads them.
"""

from __future__ import annotations

import math
import weakref
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pandas as pd

from ..forward import ScoringError
from ..models import build_prompt, default_method
from ..repro import key_to_int
from ..schema import METHODS, PRED_COLUMNS
from ._core import argmax_low, check_item
from .fast import fast_letter_scores, fast_loglik_scores, resolve_engine
from .generate import sample_scores, verbal_scores
from .methods import letter_scores, loglik_scores

__all__ = ["METHODS", "predict"]

_REQUIRED = ("item_id", "question", "options", "answer_idx")


def _generator(*keys: Any) -> Any:
    import torch

    return torch.Generator().manual_seed(key_to_int(*keys) % (2**63 - 1))


_PROMPTS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # processor -> {(question, ...): prompt}


def _prompt_memo(processor: Any) -> dict:
    """The prompts already built with ``processor`` (a sweep builds the same ones at every condition)."""
    try:
        memo = _PROMPTS.setdefault(processor, {})
    except TypeError:  # a processor that cannot be weakly referenced: no memo
        return {}
    if len(memo) > 200_000:
        memo.clear()
    return memo


def _token_prob(res: Any, pred: int) -> float:
    vocab = res.extra.get("token_probs") if isinstance(res.extra, dict) else None
    return float(vocab[pred]) if vocab is not None else math.nan


def predict(lm: Any, items: pd.DataFrame, images: Sequence[Any] | Callable[[dict], Any], *,
            methods: Sequence[str] | None = None, template: str = "vlmrobust", seed: int = 0,
            perturbation: str = "clean", level: int = 0, param: float = math.nan, batch_size: int = 8,
            n_samples: int = 20, temperature: float = 1.0, max_new_tokens: int = 8,
            model_name: str | None = None, hidden: bool = False, grid_layer: int | None = None,
            engine: str = "auto") -> pd.DataFrame | tuple[pd.DataFrame, dict[str, list[dict]]]:
    """Score every item with each method and return predictions rows (see the module docstring).

    ``images`` is a list parallel to ``items`` or a function of an item row.
    ``methods`` defaults to the model's default method (letters -> ``letter``,
    text -> ``loglik``). Errors name the item (:class:`ScoringError`). Sampling
    draws from one ``torch.Generator`` per item seeded by
    ``repro.key_to_int(model_id, item_id, perturbation, level, seed, "sample")``.

    ``hidden=True`` (opt-in, for ``letter``, ``loglik`` and ``loglik_norm``) also
    returns the hidden states read off the scoring forwards:
    ``(table, {method: [per-item dict]})`` with the keys of
    :func:`vlmrobust.forward.capture.probed_prompt` (``ctx``, ``ans``,
    ``vision_mean``, ``energy``, ...); the table is the same as without it.

    ``engine`` chooses the forward of ``letter``, ``loglik`` and ``loglik_norm``
    (:mod:`vlmrobust.score.fast`): ``"auto"`` (default) takes the fast path for the
    zoo's organisms under their own method and today's Hugging Face forward
    (``"hf"``) otherwise; ``"fast"`` asks for the fast path. Probes (``hidden=True``) always read
    today's forward.
    """
    if not isinstance(items, pd.DataFrame):
        raise TypeError(f"items must be a pandas DataFrame (item table), got {type(items).__name__}")
    missing = [c for c in _REQUIRED if c not in items.columns]
    if missing:
        raise ValueError(f"items is missing columns {missing}; the item table needs {list(_REQUIRED)}")
    methods = list(methods) if methods is not None else [default_method(lm.answer_format)]
    bad = [m for m in methods if m not in METHODS]
    if bad or not methods:
        raise ValueError(f"methods must be a non-empty subset of {list(METHODS)}, got {methods!r}")
    if hidden and any(m not in ("letter", "loglik", "loglik_norm") for m in methods):
        raise ValueError(f"hidden=True reads states off the letter and log-likelihood forwards only; got {methods!r}")
    recs = items.to_dict("records")
    imgs = [images(r) for r in recs] if callable(images) else list(images)
    if len(imgs) != len(recs):
        raise ValueError(f"images has {len(imgs)} entries for {len(recs)} items")
    ids = [str(r["item_id"]) for r in recs]
    opts = [list(r["options"]) if r["options"] is not None else [] for r in recs]
    for r, iid, o, im in zip(recs, ids, opts, imgs, strict=True):
        check_item(iid, o, im)
        if not 0 <= int(r["answer_idx"]) < len(o):
            raise ScoringError(iid, f"answer_idx {r['answer_idx']} is outside [0, {len(o)})")
    name = model_name or lm.name or lm.model_id
    base_method = default_method(lm.answer_format)
    fast = {m: resolve_engine(lm, engine, hidden=hidden, method=m) == "fast" for m in methods}
    memo = _prompt_memo(lm.processor)

    def prompts(confidence: bool = False) -> list[str]:
        out = []
        for r, o in zip(recs, opts, strict=True):
            key = (r["question"], tuple(o), template, confidence)
            if key not in memo:
                memo[key] = build_prompt(lm.processor, r["question"], o, template, confidence=confidence)
            out.append(memo[key])
        return out

    plain = prompts()
    results: dict[str, list] = {}
    for m in methods:
        if m == "letter" and fast[m]:
            results[m] = fast_letter_scores(lm, ids, plain, opts, imgs, batch_size=batch_size)
        elif m == "letter":
            results[m] = letter_scores(lm, ids, plain, opts, imgs, batch_size=batch_size, hidden=hidden,
                                       grid_layer=grid_layer)
        elif m in ("loglik", "loglik_norm") and m not in results and fast[m]:
            results["loglik"], results["loglik_norm"] = fast_loglik_scores(lm, ids, plain, opts, imgs,
                                                                           batch_size=batch_size)
        elif m in ("loglik", "loglik_norm") and m not in results:
            results["loglik"], results["loglik_norm"] = loglik_scores(lm, ids, plain, opts, imgs,
                                                                      batch_size=batch_size, hidden=hidden,
                                                                      grid_layer=grid_layer)
        elif m == "sample":
            gens = [_generator(lm.model_id, i, perturbation, int(level), int(seed), "sample") for i in ids]
            results[m] = sample_scores(lm, ids, plain, opts, imgs, gens, n=n_samples, temperature=temperature,
                                       max_new_tokens=max_new_tokens)
        elif m == "verbal":
            results[m] = verbal_scores(lm, ids, prompts(confidence=True), opts, imgs, base=base_method,
                                       batch_size=batch_size)
    rows = []
    for m in methods:
        for r, res in zip(recs, results[m], strict=True):
            probs = np.asarray(res.probs, dtype=np.float64)
            pred = argmax_low(probs)
            abstain_idx = int(r.get("abstain_idx", -1) if r.get("abstain_idx") is not None else -1)
            rows.append({
                "model": name, "item_id": str(r["item_id"]), "task": str(r.get("task", "")),
                "category": str(r.get("category", "")), "perturbation": perturbation, "level": int(level),
                "param": float(param), "method": m, "template": template if isinstance(template, str) else
                template.name, "seed": int(seed), "K": len(probs), "answer_idx": int(r["answer_idx"]),
                "probs": probs.tolist(), "pred_idx": pred, "correct": pred == int(r["answer_idx"]),
                "confidence": float(probs.max()), "token_prob": _token_prob(res, pred), "margin": float(res.margin),
                "abstained": abstain_idx >= 0 and pred == abstain_idx, "verbal_conf": float(res.verbal_conf),
                "unparsed_rate": float(res.unparsed_rate),
                "logits": None if res.scores is None else np.asarray(res.scores, dtype=np.float64).tolist(),
            })
    table = pd.DataFrame(rows, columns=list(PRED_COLUMNS))
    if hidden:
        return table, {m: [res.extra["hidden"] for res in results[m]] for m in methods}
    return table
