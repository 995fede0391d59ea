"""Generated answers: greedy texts, the sampling estimate and verbalized confidence (decoding with a KV cache)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ..forward import ScoringError, forward, model_inputs, stop_ids
from ._core import OptionScores, margin_of
from .methods import letter_scores, loglik_scores
from .parsing import parse_answer, parse_confidence

__all__ = ["greedy_texts", "sample_scores", "verbal_scores"]


def _decode(lm, item_id, prompt, image, *, n: int, temperature: float, max_new_tokens: int,
            generator: Any = None, stops: set[int] | None = None) -> list[str]:
    """Decode ``n`` continuations from one shared prompt forward (KV cache repeated n times).

    ``temperature == 0`` is greedy; otherwise tokens are drawn from
    ``softmax(z / T)`` with the explicit ``torch.Generator``.
    """
    import torch

    inputs = model_inputs(lm, [prompt], [image])
    logits, cache = forward(lm, inputs, use_cache=True, logits_to_keep=1)
    last = logits[:, -1, :].float()
    if n > 1:
        cache.batch_repeat_interleave(n)
        last = last.repeat(n, 1)
    stops = stop_ids(lm) if stops is None else stops
    done = torch.zeros(n, dtype=torch.bool)
    tokens: list[list[int]] = [[] for _ in range(n)]
    for step in range(max_new_tokens):
        if not torch.isfinite(last).all():
            raise ScoringError(item_id, "non-finite (NaN or inf) logits while decoding")
        if temperature == 0:
            nxt = last.argmax(dim=-1)
        else:
            probs = torch.softmax(last.double() / temperature, dim=-1)
            nxt = torch.multinomial(probs.cpu(), 1, generator=generator).squeeze(1)
        for j in range(n):
            if not done[j]:
                t = int(nxt[j])
                if t in stops:
                    done[j] = True
                else:
                    tokens[j].append(t)
        if bool(done.all()) or step == max_new_tokens - 1:
            break
        logits, cache = forward(lm, {"input_ids": nxt.view(n, 1).to(lm.device)}, cache=cache)
        last = logits[:, -1, :].float()
    return [lm.tokenizer.decode(t, skip_special_tokens=True) for t in tokens]


def greedy_texts(lm: Any, item_ids: Sequence[str], prompts: Sequence[str], images: Sequence[Any], *,
                 max_new_tokens: int = 16) -> list[str]:
    """Greedy answers, one per item (generate-then-parse)."""
    stops = stop_ids(lm)
    return [_decode(lm, i, p, im, n=1, temperature=0.0, max_new_tokens=max_new_tokens, stops=stops)[0]
            for i, p, im in zip(item_ids, prompts, images, strict=True)]


def sample_scores(lm: Any, item_ids: Sequence[str], prompts: Sequence[str], options: Sequence[Sequence[str]],
                  images: Sequence[Any], generators: Sequence[Any], *, n: int = 20, temperature: float = 1.0,
                  max_new_tokens: int = 8) -> list[OptionScores]:
    """Sampling estimate of the option distribution (seed 000, suppl. III-B).

    ``n`` answers at temperature ``T`` per item (one ``torch.Generator`` per
    item, seeded by the caller from repro keys), each mapped to an option by
    :func:`parse_answer`; ``probs`` are the empirical frequencies among parsed
    answers (uniform when none parses), ``unparsed_rate`` the unparseable share,
    ``scores`` the counts, the margin in frequency units.
    """
    if not isinstance(n, int) or n < 1:
        raise ValueError(f"n must be a positive int, got {n!r}")
    if not temperature > 0:
        raise ValueError(f"temperature must be > 0 for sampling, got {temperature!r}")
    out = []
    stops = stop_ids(lm)
    for iid, p, opts, im, g in zip(item_ids, prompts, options, images, generators, strict=True):
        texts = _decode(lm, iid, p, im, n=n, temperature=float(temperature), max_new_tokens=max_new_tokens,
                        generator=g, stops=stops)
        counts = np.zeros(len(opts))
        for t in texts:
            k = parse_answer(t, opts, lm.answer_format)
            if k is not None:
                counts[k] += 1
        parsed = counts.sum()
        probs = counts / parsed if parsed else np.full(len(opts), 1.0 / len(opts))
        out.append(OptionScores(probs=probs, scores=counts, margin=margin_of(probs),
                                unparsed_rate=float(1 - parsed / n), extra={"texts": texts}))
    return out


def verbal_scores(lm: Any, item_ids: Sequence[str], prompts: Sequence[str], options: Sequence[Sequence[str]],
                  images: Sequence[Any], *, base: str = "letter", batch_size: int = 8,
                  max_new_tokens: int = 24) -> list[OptionScores]:
    """Verbalized confidence (seed 003, Table II): the prompts carry the confidence request.

    The option distribution is the ``base`` method's on the same prompts; the
    greedy answer is parsed for ``Confidence: N`` (``verbal_conf``, read by
    :func:`parse_confidence`; NaN when absent) and for the chosen option
    (``extra['parsed_idx']``).
    """
    if base == "letter":
        dist = letter_scores(lm, item_ids, prompts, options, images, batch_size=batch_size)
    elif base == "loglik":
        dist = loglik_scores(lm, item_ids, prompts, options, images, batch_size=batch_size)[0]
    else:
        raise ValueError(f"base must be 'letter' or 'loglik', got {base!r}")
    texts = greedy_texts(lm, item_ids, prompts, images, max_new_tokens=max_new_tokens)
    for d, t, opts in zip(dist, texts, options, strict=True):
        d.verbal_conf = parse_confidence(t)
        d.extra = {**d.extra, "text": t, "parsed_idx": parse_answer(t, opts, lm.answer_format)}
    return dist
