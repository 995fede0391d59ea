"""The forward-pass scoring methods: letter logits and option log-likelihood.

Each returns one :class:`~vlmrobust.score._core.OptionScores` per item, holding the
full option distribution. Inputs are parallel lists (item ids, prompt strings
from :func:`vlmrobust.models.build_prompt`, option lists, images). The methods that
generate text (sampling, verbalized confidence) are in :mod:`.generate`; reading
generated answers is :mod:`.parsing`.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from ..forward import ScoringError, batches, forward, last_logits, model_inputs
from ..forward.capture import (
    Growing,
    Recorder,
    answer_states,
    can_continue,
    crop_rows,
    feed,
    hand_on,
    probed_prompt,
    prompt_states,
    prompt_summary,
    rope_deltas,
)
from ..models import continuation_ids, letter_token_ids
from ._core import OptionScores, argmax_low, margin_of, next_token_logprobs, softmax

__all__ = ["letter_scores", "loglik_scores", "loglik_full_forward", "letter_memo", "letter_results"]


def _batch_inputs(lm, item_ids, prompts, images, idx):
    """Processor inputs of the items ``idx``; a processor failure names the item that causes it."""
    try:
        return model_inputs(lm, [prompts[i] for i in idx], [images[i] for i in idx])
    except ScoringError:
        raise
    except Exception as exc:  # processor failure: find the item by processing one by one
        for i in idx:
            try:
                model_inputs(lm, [prompts[i]], [images[i]])
            except Exception as exc1:
                raise ScoringError(item_ids[i], f"processor failed: {exc1}") from exc1
        raise ScoringError(item_ids[idx[0]], f"processor failed on the batch: {exc}") from exc


def _last_position(lm, item_ids, prompts, images, batch_size, choose=None, grid_layer=None):
    """Log-softmax-free last-position logits for every prompt: batched, left-padded, length-sorted.

    With ``choose`` (``choose(i, logits_row) -> answer token ids`` for prompt ``i``)
    the hidden states are read off the same forwards (:func:`vlmrobust.forward.capture.probed_prompt`)
    and ``(rows, states)`` is returned.
    """
    out: list[np.ndarray | None] = [None] * len(prompts)
    states: list[dict | None] = [None] * len(prompts)
    rec = None
    if choose is not None:

        rec = Recorder(lm).__enter__()
    try:
        for idx in batches(lm, prompts, batch_size):
            ids = [item_ids[i] for i in idx]
            inputs = _batch_inputs(lm, item_ids, prompts, images, idx)
            if rec is None:
                logits, _ = forward(lm, inputs, logits_to_keep=1)
                arr = last_logits(logits, ids)
            else:

                arr, st = probed_prompt(lm, rec, inputs, ids, lambda j, row, idx=idx: choose(idx[j], row),
                                        keep_grid=grid_layer)
                for j, i in enumerate(idx):
                    states[i] = st[j]
            for j, i in enumerate(idx):
                out[i] = arr[j]
    finally:
        if rec is not None:
            rec.__exit__(None, None, None)
    return out if choose is None else (out, states)  # type: ignore[return-value]


def letter_scores(lm: Any, item_ids: Sequence[str], prompts: Sequence[str], options: Sequence[Sequence[str]],
                  images: Sequence[Any], *, batch_size: int = 8, hidden: bool = False,
                  grid_layer: int | None = None) -> list[OptionScores]:
    """Letter-logit scoring (seed 000 §V-A): one forward, logits of the K letters at the answer position.

    Batched with left padding over length-sorted batches; the LM head runs on the
    last position only (``logits_to_keep=1``). ``p = softmax(z[letter_1..K])``;
    the margin is in logit units; ``extra["token_probs"]`` holds each letter's
    probability over the whole vocabulary (seed 003's token-probability confidence). Raises
    :class:`~vlmrobust.models.LetterTokenError` when a letter is not one token.

    ``hidden=True`` (opt-in; plain scoring is unchanged) also reads the hidden
    states off the same forward and puts them in ``extra["hidden"]``: the last
    prompt token, the vision-token mean and grid energy, and the chosen letter
    teacher-forced through one cached continuation (:mod:`vlmrobust.probes`);
    ``grid_layer`` keeps that layer's vision-token grid too.
    """
    letters = letter_memo(lm)
    states = None
    if hidden:
        def choose(i: int, row: np.ndarray) -> list[int]:
            ids = letters(prompts[i], len(options[i]))
            return [ids[argmax_low(row[ids])]]

        rows, states = _last_position(lm, item_ids, prompts, images, batch_size, choose, grid_layer)
    else:
        rows = _last_position(lm, item_ids, prompts, images, batch_size)
    return letter_results(letters, prompts, options, rows, states)


def letter_memo(lm: Any) -> Callable[[str, int], list[int]]:
    """``letters(prompt, k)``: the token ids of the first ``k`` letters after ``prompt``, remembered by the
    prompt's end (what they depend on); :class:`~vlmrobust.models.LetterTokenError` when one is not a token."""
    memo: dict[tuple[str, int], list[int]] = {}

    def letters(prompt: str, k: int) -> list[int]:
        key = (prompt[-64:], k)
        if key not in memo:
            memo[key] = letter_token_ids(lm.tokenizer, prompt, k)
        return memo[key]

    return letters


def letter_results(letters: Callable[[str, int], list[int]], prompts: Sequence[str],
                   options: Sequence[Sequence[str]], rows: Sequence[np.ndarray],
                   states: Sequence[dict] | None = None) -> list[OptionScores]:
    """Letter scores from each prompt's answer-position logits (float64, whole vocabulary)."""
    out = []
    for n, (prompt, opts, row) in enumerate(zip(prompts, options, rows, strict=True)):
        ids = letters(prompt, len(opts))
        z = row[ids]
        vocab = np.exp(next_token_logprobs(row)[ids])  # each letter's probability over the whole vocabulary
        extra = {"token_probs": vocab} if states is None else {"token_probs": vocab, "hidden": states[n]}
        out.append(OptionScores(probs=softmax(z), scores=z, margin=margin_of(z), extra=extra))
    return out


_OPTION_MEMO: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # tokenizer -> {(prompt, option): ids}


def _option_tokens(lm: Any, item_id: str, prompt: str, opts: Sequence[str]) -> list[list[int]]:
    """Each option's tokens after ``prompt``, remembered per tokenizer (a sweep asks again at every level)."""
    # After a prompt ending in a non-space character ("ASSISTANT:") the answer starts with a space.
    lead = "" if prompt[-1:].isspace() else " "
    try:
        memo = _OPTION_MEMO.setdefault(lm.tokenizer, {})
    except TypeError:  # a tokenizer that cannot be weakly referenced: no memo
        memo = {}
    if len(memo) > 200_000:
        memo.clear()
    cont = []
    for o in opts:
        if (prompt, o) not in memo:
            memo[(prompt, o)] = continuation_ids(lm.tokenizer, prompt, lead + o)
        cont.append(list(memo[(prompt, o)]))
    for i, c in enumerate(cont):
        if not c:
            raise ScoringError(item_id, f"option {i} ({opts[i]!r}) tokenizes to nothing")
    return cont


def _loglik_result(sums: np.ndarray, lengths: np.ndarray) -> tuple[OptionScores, OptionScores]:
    """Both log-likelihood results; ``token_probs`` is each option's probability over the whole vocabulary:
    ``exp(s)``, the probability of its token sequence (summed form), or the geometric mean per token (normalised)."""
    norm = sums / lengths
    return (OptionScores(probs=softmax(sums), scores=sums, margin=margin_of(sums),
                         extra={"n_tokens": lengths, "token_probs": np.exp(sums)}),
            OptionScores(probs=softmax(norm), scores=norm, margin=margin_of(norm),
                         extra={"n_tokens": lengths, "token_probs": np.exp(norm)}))


def loglik_scores(lm: Any, item_ids: Sequence[str], prompts: Sequence[str], options: Sequence[Sequence[str]],
                  images: Sequence[Any], *, batch_size: int = 8, hidden: bool = False,
                  grid_layer: int | None = None) -> tuple[list[OptionScores], list[OptionScores]]:
    """Option log-likelihood (seed 002 §3.1): ``s(o|x) = log P(o | x, p(q, A))`` and its length-normalised form.

    Returns ``(loglik, loglik_norm)``: the summed log-probability of each option's
    tokens, and the per-token mean (our choice of length normalisation: divide by
    the option's token count). ``probs`` are ``softmax(s)`` over the K options;
    the margin is top minus runner-up (Eq. 2) in the score's units.

    Shared prefixes, batched: each length-sorted batch of prompts (with their
    images) runs once with a KV cache, the cache is cut to one row per option,
    and the options of every item of the batch run in one continuation forward.
    Items whose options are all single tokens need the prompt forward alone
    (last-position logits only).

    ``hidden=True`` (opt-in) puts the hidden states of the same forwards in
    ``extra["hidden"]`` of both results: the last prompt token, the vision-token
    mean and grid energy, and the mean over the tokens of the option of highest
    summed log-likelihood, teacher-forced (the continuations feed every option
    token; single-token options get one cached continuation).
    """
    conts = [_option_tokens(lm, iid, p, o) for iid, p, o in zip(item_ids, prompts, options, strict=True)]
    out_sum: list[OptionScores | None] = [None] * len(prompts)
    out_norm: list[OptionScores | None] = [None] * len(prompts)
    single = [i for i, c in enumerate(conts) if all(len(t) == 1 for t in c)]
    multi = [i for i, c in enumerate(conts) if i not in set(single)]
    if single:
        sub = [item_ids[i] for i in single], [prompts[i] for i in single], [images[i] for i in single]
        states = None
        if hidden:
            def choose(n: int, row: np.ndarray) -> list[int]:
                toks = [t[0] for t in conts[single[n]]]
                return [toks[argmax_low(next_token_logprobs(row)[toks])]]

            rows, states = _last_position(lm, *sub, batch_size, choose, grid_layer)
        else:
            rows = _last_position(lm, *sub, batch_size)
        for n, (i, row) in enumerate(zip(single, rows, strict=True)):
            lp = next_token_logprobs(row)
            sums = np.array([lp[t[0]] for t in conts[i]])
            out_sum[i], out_norm[i] = _loglik_result(sums, np.ones(len(sums)))
            if states is not None:
                out_sum[i].extra["hidden"] = out_norm[i].extra["hidden"] = states[n]
    if multi and hidden:

        with Recorder(lm) as rec:
            for i in multi:
                out_sum[i], out_norm[i] = _loglik_shared_prefix(lm, item_ids[i], prompts[i], images[i], conts[i],
                                                                rec=rec, grid_layer=grid_layer)
    elif multi:
        sub = [item_ids[i] for i in multi], [prompts[i] for i in multi], [images[i] for i in multi]
        for n, res in enumerate(_loglik_batched(lm, *sub, [conts[i] for i in multi], batch_size)):
            out_sum[multi[n]], out_norm[multi[n]] = res
    return out_sum, out_norm  # type: ignore[return-value]


def _loglik_batched(lm, item_ids, prompts, images, conts, batch_size) -> list[tuple[OptionScores, OptionScores]]:
    """Log-likelihood of options of several tokens, a batch of prompts at a time.

    Each length-sorted batch of prompts runs once with a KV cache (left padding);
    its cache is cut to one row per option (:func:`vlmrobust.forward.capture.crop_rows`),
    and every option of every item of the batch runs in one continuation forward
    (:func:`~vlmrobust.forward.capture.feed`, positions over attended tokens,
    options right-padded and masked). Where the cache cannot be continued
    exactly (a short sliding window), the batch falls back to one prefix per item.
    """
    import torch

    out: list = [None] * len(prompts)
    pad = lm.tokenizer.pad_token_id or 0
    for idx in batches(lm, prompts, batch_size):
        inputs = _batch_inputs(lm, item_ids, prompts, images, idx)
        logits, cache = forward(lm, inputs, use_cache=True, logits_to_keep=1)
        lp0 = [next_token_logprobs(r) for r in last_logits(logits, [item_ids[i] for i in idx])]
        width = max(len(t) for i in idx for t in conts[i]) - 1
        seq = Growing.of(inputs)
        if not can_continue(cache, seq.ids.shape[1] + width):
            for i in idx:
                out[i] = _loglik_shared_prefix(lm, item_ids[i], prompts[i], images[i], conts[i])
            continue
        seq = replace(seq, pos0=(seq.mask.cumsum(-1) == 0).sum(-1), deltas=rope_deltas(lm))
        rows = [j for j, i in enumerate(idx) for _ in conts[i]]
        lengths = seq.mask.sum(-1).tolist()
        cache, seq = crop_rows(cache, seq, rows, [lengths[j] for j in rows])
        toks = [t for i in idx for t in conts[i]]
        new = torch.full((len(toks), width), pad, dtype=torch.long)
        mask = torch.zeros((len(toks), width), dtype=torch.long)
        for r, t in enumerate(toks):
            new[r, : len(t) - 1] = torch.tensor(t[:-1])
            mask[r, : len(t) - 1] = 1
        logits2, _, _ = feed(lm, seq, cache, new.to(lm.device), new_mask=mask)
        lp = torch.log_softmax(logits2.double(), dim=-1).cpu().numpy()
        r = 0
        for j, i in enumerate(idx):
            sums = np.empty(len(conts[i]))
            for o, t in enumerate(conts[i]):
                if not np.isfinite(lp[r, : len(t) - 1]).all():
                    raise ScoringError(item_ids[i], "non-finite (NaN or inf) logits in an option continuation")
                sums[o] = lp0[j][t[0]] + sum(lp[r, pos - 1, t[pos]] for pos in range(1, len(t)))
                r += 1
            out[i] = _loglik_result(sums, np.array([len(t) for t in conts[i]], dtype=np.float64))
    return out


def _loglik_shared_prefix(lm, item_id, prompt, image, conts, rec=None, grid_layer=None
                          ) -> tuple[OptionScores, OptionScores]:
    import torch

    inputs = model_inputs(lm, [prompt], [image])
    if rec is None:
        logits, cache = forward(lm, inputs, use_cache=True, logits_to_keep=1)
    else:

        logits, cache, outs = prompt_states(lm, rec, inputs, keep_grid=grid_layer)
        deltas = rope_deltas(lm)
    lp0 = next_token_logprobs(last_logits(logits, [item_id])[0])
    k = len(conts)
    lengths = np.array([len(t) for t in conts], dtype=np.float64)
    sums = np.array([lp0[t[0]] for t in conts])
    longest = max(len(t) for t in conts)
    # with probes every option token is fed (its state is read); otherwise the last one need not be
    width = longest if rec is not None else longest - 1
    if width > 0:
        pad = lm.tokenizer.pad_token_id or 0
        feed = torch.full((k, width), pad, dtype=torch.long)
        for j, t in enumerate(conts):
            seq = t if rec is not None else t[:-1]
            feed[j, : len(seq)] = torch.tensor(seq)
        cache.batch_repeat_interleave(k)
        if rec is None:
            logits2, _ = forward(lm, {"input_ids": feed.to(lm.device)}, cache=cache)
        else:

            (logits2, _), outs2 = answer_states(rec, lambda: forward(lm, {"input_ids": feed.to(lm.device)},
                                                                     cache=cache))
        lp = torch.log_softmax(logits2.double(), dim=-1).cpu().numpy()
        if not np.isfinite(lp[:, : max(longest - 1, 0)]).all():
            raise ScoringError(item_id, "non-finite (NaN or inf) logits in an option continuation")
        for j, t in enumerate(conts):
            sums[j] += sum(lp[j, pos - 1, t[pos]] for pos in range(1, len(t)))
    res = _loglik_result(sums, lengths)
    if rec is not None:
        best = argmax_low(sums)
        n_best = len(conts[best])
        state = prompt_summary(outs, 0)
        state["ans"] = np.stack([o[best, :n_best].mean(0) for o in outs2]).astype(np.float32)
        state["n_tokens"] = n_best
        for r in res:
            r.extra["hidden"] = state
        hand_on(lm, rec, inputs, cache, [item_id], deltas, row=0)  # to a prompt continuing this one, if any
    return res


def loglik_full_forward(lm: Any, item_id: str, prompt: str, options: Sequence[str], image: Any) -> np.ndarray:
    """Reference option log-likelihood: one full forward of prompt + option per option (as lmms-eval does).

    Same tokens as :func:`loglik_scores`; used by tests and the benchmark.
    """
    import torch

    conts = _option_tokens(lm, item_id, prompt, options)
    base = model_inputs(lm, [prompt], [image])
    sums = []
    for t in conts:
        ext = {}
        for key, val in base.items():
            if key == "input_ids":
                ext[key] = torch.cat([val, torch.tensor([t], device=val.device)], dim=1)
            elif key == "attention_mask":
                ext[key] = torch.cat([val, torch.ones((1, len(t)), dtype=val.dtype, device=val.device)], dim=1)
            elif key in {"token_type_ids", "mm_token_type_ids"}:
                ext[key] = torch.cat([val, torch.zeros((1, len(t)), dtype=val.dtype, device=val.device)], dim=1)
            else:
                ext[key] = val
        logits, _ = forward(lm, ext)
        n = base["input_ids"].shape[1]
        lp = torch.log_softmax(logits[0, n - 1: n - 1 + len(t)].double(), dim=-1).cpu().numpy()
        sums.append(sum(lp[j, tok] for j, tok in enumerate(t)))
    return np.asarray(sums)
