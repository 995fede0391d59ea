"""The scoring methods: letter logits, option log-likelihood, sampling, verbalized confidence.

Each returns one :class:`~vlmrobust.score._core.OptionScores` per item, holding the
full option distribution. Inputs are parallel lists (item ids, prompt strings
from :func:`vlmrobust.models.build_prompt`, option lists, images).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..models import continuation_ids, letter_token_ids
from ..schema import LETTERS
from ._core import (
    OptionScores,
    ScoringError,
    argmax_low,
    forward,
    last_logits,
    margin_of,
    model_inputs,
    next_token_logprobs,
    softmax,
)

__all__ = ["letter_scores", "loglik_scores", "loglik_full_forward", "sample_scores", "greedy_texts",
           "verbal_scores", "parse_answer", "parse_confidence", "token_lengths"]


def token_lengths(lm: Any, prompts: Sequence[str]) -> list[int]:
    """Text-token length of each prompt (before image-token expansion), for length-sorted batches."""
    enc = lm.tokenizer(list(prompts), add_special_tokens=False)["input_ids"]
    return [len(e) for e in enc]


def _batches(lm: Any, prompts: Sequence[str], batch_size: int) -> list[list[int]]:
    """Indices grouped into batches of similar length (sorted by token length, stable)."""
    if not isinstance(batch_size, int) or batch_size < 1:
        raise ValueError(f"batch_size must be a positive int, got {batch_size!r}")
    order = np.argsort(np.asarray(token_lengths(lm, prompts)), kind="stable")
    return [order[i:i + batch_size].tolist() for i in range(0, len(order), batch_size)]


def _last_position(lm, item_ids, prompts, images, batch_size, choose=None, grid_layer=None):
    """Log-softmax-free last-position logits for every prompt: batched, left-padded, length-sorted.

    With ``choose`` (``choose(i, logits_row) -> answer token ids`` for prompt ``i``)
    the hidden states are read off the same forwards (:func:`vlmrobust.probes.capture.probed_prompt`)
    and ``(rows, states)`` is returned.
    """
    out: list[np.ndarray | None] = [None] * len(prompts)
    states: list[dict | None] = [None] * len(prompts)
    rec = None
    if choose is not None:
        from ..probes.capture import Recorder

        rec = Recorder(lm).__enter__()
    try:
        for idx in _batches(lm, prompts, batch_size):
            ids = [item_ids[i] for i in idx]
            try:
                inputs = model_inputs(lm, [prompts[i] for i in idx], [images[i] for i in idx])
            except ScoringError:
                raise
            except Exception as exc:  # processor failure: find the item by processing one by one
                for i in idx:
                    try:
                        model_inputs(lm, [prompts[i]], [images[i]])
                    except Exception as exc1:
                        raise ScoringError(item_ids[i], f"processor failed: {exc1}") from exc1
                raise ScoringError(ids[0], f"processor failed on the batch: {exc}") from exc
            if rec is None:
                logits, _ = forward(lm, inputs, logits_to_keep=1)
                arr = last_logits(logits, ids)
            else:
                from ..probes.capture import probed_prompt

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
    probability over the whole vocabulary (seed 003's token-probability confidence). Raises :class:`~vlmrobust.models.LetterTokenError`
    when a letter is not one token.

    ``hidden=True`` (opt-in; plain scoring is unchanged) also reads the hidden
    states off the same forward and puts them in ``extra["hidden"]``: the last
    prompt token, the vision-token mean and grid energy, and the chosen letter
    teacher-forced through one cached continuation (:mod:`vlmrobust.probes`);
    ``grid_layer`` keeps that layer's vision-token grid too.
    """
    memo: dict[tuple[str, int], list[int]] = {}  # letters depend on the prompt's end only

    def letters(prompt: str, k: int) -> list[int]:
        key = (prompt[-64:], k)
        if key not in memo:
            memo[key] = letter_token_ids(lm.tokenizer, prompt, k)
        return memo[key]

    states = None
    if hidden:
        def choose(i: int, row: np.ndarray) -> list[int]:
            ids = letters(prompts[i], len(options[i]))
            return [ids[argmax_low(row[ids])]]

        rows, states = _last_position(lm, item_ids, prompts, images, batch_size, choose, grid_layer)
    else:
        rows = _last_position(lm, item_ids, prompts, images, batch_size)
    out = []
    for n, (prompt, opts, row) in enumerate(zip(prompts, options, rows, strict=True)):
        ids = letters(prompt, len(opts))
        z = row[ids]
        vocab = np.exp(next_token_logprobs(row)[ids])  # each letter's probability over the whole vocabulary
        extra = {"token_probs": vocab} if states is None else {"token_probs": vocab, "hidden": states[n]}
        out.append(OptionScores(probs=softmax(z), scores=z, margin=margin_of(z), extra=extra))
    return out


def _option_tokens(lm: Any, item_id: str, prompt: str, opts: Sequence[str]) -> list[list[int]]:
    # After a prompt ending in a non-space character ("ASSISTANT:") the answer starts with a space.
    lead = "" if prompt[-1:].isspace() else " "
    cont = [continuation_ids(lm.tokenizer, prompt, lead + o) for o in opts]
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

    One shared-prefix forward per item: the prompt (with the image) is run once,
    its KV cache is repeated K times, and the K continuations run in a single
    batched forward. When every option of every item is a single token, the
    prompt forward alone gives all scores, and prompts are batched (left
    padding, last-position logits only).

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
        from ..probes.capture import Recorder

        with Recorder(lm) as rec:
            for i in multi:
                out_sum[i], out_norm[i] = _loglik_shared_prefix(lm, item_ids[i], prompts[i], images[i], conts[i],
                                                                rec=rec, grid_layer=grid_layer)
    else:
        for i in multi:
            out_sum[i], out_norm[i] = _loglik_shared_prefix(lm, item_ids[i], prompts[i], images[i], conts[i])
    return out_sum, out_norm  # type: ignore[return-value]


def _loglik_shared_prefix(lm, item_id, prompt, image, conts, rec=None, grid_layer=None
                          ) -> tuple[OptionScores, OptionScores]:
    import torch

    inputs = model_inputs(lm, [prompt], [image])
    if rec is None:
        logits, cache = forward(lm, inputs, use_cache=True, logits_to_keep=1)
    else:
        from ..probes.capture import prompt_states, prompt_summary

        logits, cache, outs = prompt_states(lm, rec, inputs, keep_grid=grid_layer)
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
            from ..probes.capture import answer_states

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


# ------------------------------------------------------------------------------ sampling and text

_LETTER_RE = re.compile(r"^\(?([A-Z])\)?(?=$|[\s.:,)\]])")
_CONF_RE = re.compile(r"confidence\s*[:=]?\s*(\d+(?:\.\d+)?|\.\d+)\s*(%?)", re.I)


def parse_answer(text: str, options: Sequence[str], answer_format: str = "letters") -> int | None:
    """Map a generated answer to an option index by its letter or its option text; ``None`` if neither.

    The first non-empty line is used, with a leading ``Answer:`` removed. A
    letter must be one of the K letters; option text matches case-insensitively
    and without a closing ``.`` or ``!`` on either side (so an option that ends
    with a full stop, like seed 003's abstain wording, matches itself), exactly
    or as the line's start followed by a non-alphanumeric character (longest
    option first). ``answer_format="letters"`` tries the letter first, ``"text"``
    the option text first.
    """
    line = next((ln.strip() for ln in str(text).splitlines() if ln.strip()), "")
    line = re.sub(r"^(answer|the answer is)\s*[:\-]?\s*", "", line, flags=re.I).strip()

    def by_letter() -> int | None:
        m = _LETTER_RE.match(line)
        if m and LETTERS.index(m.group(1)) < len(options):
            return LETTERS.index(m.group(1))
        return None

    def by_text() -> int | None:
        def norm(t: str) -> str:  # case and a closing full stop or exclamation mark do not count
            return t.lower().strip().rstrip(".!")

        low = norm(line)
        for i, opt in enumerate(options):
            if low == norm(opt):
                return i
        for i in sorted(range(len(options)), key=lambda j: -len(options[j])):
            o = norm(options[i])
            if low.startswith(o) and (len(low) == len(o) or not low[len(o)].isalnum()):
                return i
        return None

    order = (by_letter, by_text) if answer_format == "letters" else (by_text, by_letter)
    for f in order:
        hit = f()
        if hit is not None:
            return hit
    return None


def parse_confidence(text: str) -> float:
    """Verbalized confidence ``Confidence: N`` (seed 003, Table II) as a probability in [0, 1]; NaN if absent.

    Seed 003 asks for "a number from 0 to 100", so ``N`` is read as a
    percentage, with one exception for answers that give a probability
    instead. The rule, applied to the first ``confidence`` followed by a number
    (``:`` or ``=`` optional, case-insensitive):

    * a number written **with a decimal point and a value in [0, 1]**
      (``0.9``, ``.9``, ``1.0``, ``0.0``) is a probability: 0.9 is 0.9;
    * every other number is a percentage: integers (``Confidence: 85`` is
      0.85, ``Confidence: 1`` is 0.01, ``Confidence: 0`` is 0), decimals above 1
      (``85.5`` is 0.855), and any number followed by ``%`` (``0.9%`` is
      0.009);
    * the result is clipped to [0, 1] (``120%`` is 1).
    """
    m = _CONF_RE.search(str(text))
    if not m:
        return float("nan")
    number, percent = m.group(1), m.group(2)
    value = float(number)
    if not ("." in number and value <= 1.0 and not percent):
        value /= 100.0
    return float(min(max(value, 0.0), 1.0))


_END_OF_TURN = ("<|end|>", "<|im_end|>", "<end_of_turn>", "<end_of_utterance>", "<|eot_id|>", "<|endoftext|>")


def _stop_ids(lm: Any) -> set[int]:
    """End-of-sequence ids of the tokenizer and generation config, and the usual end-of-turn tokens."""
    ids = set()
    vocab = lm.tokenizer.get_vocab()
    ids.update(vocab[t] for t in _END_OF_TURN if t in vocab)
    for src in (getattr(lm.tokenizer, "eos_token_id", None),
                getattr(getattr(lm.model, "generation_config", None), "eos_token_id", None)):
        if isinstance(src, int):
            ids.add(src)
        elif isinstance(src, (list, tuple)):
            ids.update(int(s) for s in src)
    return ids


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
    stops = _stop_ids(lm) if stops is None else stops
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
    stops = _stop_ids(lm)
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
    stops = _stop_ids(lm)
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
