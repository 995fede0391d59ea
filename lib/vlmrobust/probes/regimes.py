"""The five probe regimes of seed 002 (§3.3, App. A.8) and the vision-token probes, for one condition.

============  ========================================================================================
regime        state (every decoder layer, see :mod:`vlmrobust.forward.capture`)
============  ========================================================================================
ctx_open      last context token of the **open** prompt (no options shown)
ctx_mcq       last context token of the **scoring** prompt (options shown) - from the scoring forward
ans_open      mean over the greedy answer tokens of the open prompt
ans_mcq       mean over the chosen option's tokens, teacher-forced after the scoring prompt (the
              option of highest log-likelihood, or the chosen letter under letter scoring) - from the
              scoring forward and one cached continuation
ans_mcq_free  mean over the greedy answer tokens of the **free MCQ** prompt (options shown, a free
              answer asked), parsed back to an option; the regime of seed 002's Tables 4, 7 and Fig. 1
vision_mean   (our addition) mean over the prompt's image tokens - from the scoring forward
vision_grid   (our addition) the image tokens of one view as a ``rows x cols`` grid; kept as its
              Dirichlet energy per layer (App. E) - from the scoring forward
============  ========================================================================================

**Prompts** (the seed prints only the MCQ one). The open and free-MCQ prompts
are chosen here and stated: ``open`` is the organisms' open-answer prompt
``"{question}\\nAnswer with a word."`` and ``mcq_free`` shows the lettered
options and asks the same ``"Answer with a word."`` (every word is in the
organisms' vocabulary). For real models ``open_phrase`` / ``mcq_free_phrase``
ask ``"Answer the question using a single word or phrase."`` (the short-answer
instruction of LLaVA and VQAv2). Decoding is greedy, at most ``max_new_tokens``
tokens, stopping at the end-of-turn tokens; the mean is over the generated
tokens without the stop token (an empty answer has no state: NaN).

**One prefill.** The open and free-MCQ prompts share a long prefix with the
scoring prompt (chat template, image tokens, question; the free one also the
options). By default (``share_cache=True``) both continue from the scoring
forward's KV cache: per item the token ids of the prompts are compared, the
cache is cut to the common prefix and only the differing suffix is fed, with
explicit positions (left padding and per-row suffix lengths become masked slots;
M-RoPE deltas of Qwen-VL models carried along), then both are decoded greedily
in one batch. An item falls back to its own prefill (``cached_prefix = 0``) when
its prompts share no prefix past the image, when the scoring row's tokens do not
end as the tokenizer says, or when its cache cannot be cut exactly (a
sliding-window layer whose window the prompt fills, as in the Gemma 3 twin).
``share_cache=False`` runs the reference path: a fresh prefill per prompt.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
import pandas as pd

from ..forward import ScoringError, batches, capture, model_inputs, stop_ids
from ..forward.capture import Growing, Recorder, answer_states, feed, prompt_states
from ..forward.layout import image_token_id
from ..models import TEMPLATES, Template, build_prompt
from ..score import parse_answer, predict

__all__ = ["REGIMES", "SCORING_REGIMES", "VISION_PROBES", "PROBE_TEMPLATES", "ProbeSpec", "greedy_states",
           "probe_condition"]

REGIMES = ("ctx_open", "ctx_mcq", "ans_open", "ans_mcq", "ans_mcq_free")
#: The regimes read off the scoring forward itself.
SCORING_REGIMES = ("ctx_mcq", "ans_mcq")
VISION_PROBES = ("vision_mean", "vision_grid")

_WORD = "Answer with a word."
_PHRASE = "Answer the question using a single word or phrase."
PROBE_TEMPLATES: dict[str, Template] = {
    "open": TEMPLATES["open"],
    "mcq_free": Template("mcq_free", "{question}", "{letter}. {text}", "\n", _WORD,
                         source="free answer with the options shown (ans_mcq_free, seed 002 App. A.3)"),
    "open_phrase": Template("open_phrase", "{question}", "", "\n", _PHRASE, shows_options=False,
                            source="open short answer (LLaVA / VQAv2 instruction)"),
    "mcq_free_phrase": Template("mcq_free_phrase", "Question: {question}\nOptions:", "{letter}. {text}", "\n",
                                _PHRASE, source="free answer with the options shown, seed 002 layout"),
}


@dataclass(frozen=True)
class ProbeSpec:
    """What a probe sweep reads (every field enters the probe shards' keys).

    ``open_template`` / ``free_template``: names in :data:`PROBE_TEMPLATES`;
    ``grid_layer``: the layer whose grid energy is *the* ΔE of the tables (-1:
    final post-norm, 0: decoder input, i.e. the projected vision tokens);
    ``n_control``: random pairs of distinct items for the control distribution
    (computed in the clean shard); ``floor_batch_size``: the batch size of the
    noise-floor rerun of the clean condition (the same inputs in another batch
    composition).
    """

    max_new_tokens: int = 8
    open_template: str = "open"
    free_template: str = "mcq_free"
    grid_layer: int = -1
    n_control: int = 1000
    noise_floor: bool = True
    floor_batch_size: int = 1

    def validate(self) -> None:
        for name in ("open_template", "free_template"):
            if getattr(self, name) not in PROBE_TEMPLATES:
                raise ValueError(f"ProbeSpec.{name} must be one of {sorted(PROBE_TEMPLATES)}, "
                                 f"got {getattr(self, name)!r}")
        for name, lo in (("max_new_tokens", 1), ("n_control", 0), ("floor_batch_size", 1)):
            val = getattr(self, name)
            if not isinstance(val, int) or isinstance(val, bool) or val < lo:
                raise ValueError(f"ProbeSpec.{name} must be an int >= {lo}, got {val!r}")
        if not isinstance(self.grid_layer, int):
            raise ValueError(f"ProbeSpec.grid_layer must be an int (-1 = final), got {self.grid_layer!r}")

    def fields(self) -> dict:
        return asdict(self)


def greedy_states(lm: Any, item_ids: Sequence[str], prompts: Sequence[str], images: Sequence[Any], *,
                  batch_size: int = 8, max_new_tokens: int = 8) -> list[dict]:
    """Greedy answers with their states: per item ``ctx`` (last prompt token) and ``ans`` (mean over the answer).

    Batched (left padding, length-sorted batches) with a KV cache; each decoded
    token is fed once, and its states are read as it is fed. Returns per item
    ``{"ctx", "ans"}`` arrays ``(L + 2, H)`` (``ans`` NaN for an empty answer),
    ``"text"`` and ``"n_tokens"``.
    """
    stops = stop_ids(lm)
    out: list[dict | None] = [None] * len(prompts)
    with Recorder(lm) as rec:
        for idx in batches(lm, prompts, batch_size):
            inputs = model_inputs(lm, [prompts[i] for i in idx], [images[i] for i in idx])
            logits, cache, outs = prompt_states(lm, rec, inputs)
            ctx = [np.stack([o["last"][j] for o in outs]).astype(np.float32) for j in range(len(idx))]
            got = _decode(lm, rec, [item_ids[i] for i in idx], logits, cache, Growing.of(inputs), ctx,
                          max_new_tokens, stops)
            for j, i in enumerate(idx):
                out[i] = got[j]
    return out  # type: ignore[return-value]


def _decode(lm: Any, rec: Recorder, item_ids: Sequence[str], logits: Any, cache: Any, seq: Growing,
            ctx: list[np.ndarray], max_new_tokens: int, stops: set[int]) -> list[dict]:
    """Greedy decoding of a batch whose prompts are in ``cache`` (``logits``: their last position's)."""
    import torch

    b = len(item_ids)
    sums = np.zeros((b,) + ctx[0].shape, dtype=np.float64)
    counts = np.zeros(b, dtype=int)
    tokens: list[list[int]] = [[] for _ in range(b)]
    done = np.zeros(b, dtype=bool)
    last = logits[:, -1, :].float()
    for _ in range(max_new_tokens):
        if not torch.isfinite(last).all():
            bad = int(torch.flatnonzero(~torch.isfinite(last).all(dim=1))[0])
            raise ScoringError(item_ids[bad], "non-finite (NaN or inf) logits while decoding")
        nxt = last.argmax(dim=-1)
        fed = []
        for j in range(b):
            if done[j]:
                continue
            t = int(nxt[j])
            if t in stops:
                done[j] = True
            else:
                tokens[j].append(t)
                fed.append(j)
        if not fed:
            break
        (logits, cache, seq), st = answer_states(
            rec, lambda nxt=nxt, seq=seq, cache=cache: feed(lm, seq, cache, nxt.view(-1, 1), logits_to_keep=1))
        step = np.stack([o[:, 0] for o in st], axis=1)  # (b, L + 2, H)
        sums[fed] += step[fed]
        counts[fed] += 1
        last = logits[:, -1, :].float()
    return [{"ctx": ctx[j], "ans": (sums[j] / counts[j]).astype(np.float32) if counts[j] else
             np.full_like(ctx[j], np.nan), "n_tokens": int(counts[j]),
             "text": lm.tokenizer.decode(tokens[j], skip_special_tokens=True)} for j in range(b)]


@dataclass
class _Entry:
    """One prompt continued from a scoring row: the row without its last tokens ``dropped``, then ``tail``."""

    row: int
    key: tuple[int, str]  # (item index, "open" | "free")
    item_id: str
    dropped: list[int]
    tail: list[int]


@dataclass
class _Part:
    """A scoring batch's cache cut, row by row, to the prefix each continuation shares with its scoring
    prompt (``reused`` tokens), and the tokens each continuation feeds after it."""

    cache: Any
    seq: Growing
    entries: list[_Entry]
    fed: list[list[int]]
    reused: list[int]


def _suffixes(lm: Any, scoring: Sequence[str], targets: dict[str, list[str]]) -> dict[str, list]:
    """Per target prompt, the token ids of the scoring and the target prompt after their common prefix
    (``None``: nothing shared)."""
    n = len(scoring)
    enc = lm.tokenizer(list(scoring) + [t for texts in targets.values() for t in texts],
                       add_special_tokens=False)["input_ids"]
    out: dict[str, list] = {}
    for r, regime in enumerate(targets):
        out[regime] = []
        for a, b in zip(enc[:n], enc[n * (r + 1): n * (r + 2)], strict=True):
            k, m = 0, min(len(a), len(b))
            while k < m and a[k] == b[k]:
                k += 1
            k = min(k, len(b) - 1)  # feed at least one token: the last prompt token's state and logits
            out[regime].append((list(a[k:]), list(b[k:])) if k > 0 else None)
    return out


def _cut(cache: Any, seq: Growing, entries: list[_Entry], image_id: int, max_new_tokens: int) -> _Part | None:
    """Cut a scoring batch's cache to the prefix each continuing entry shares with its row.

    An entry continues when the row's tokens end with its ``dropped`` tokens and
    its tail holds no image token; the others are left out (``None``: none continues).
    """
    width = seq.ids.shape[1]
    real = (seq.mask.cumsum(-1) > 0).sum(-1).tolist()
    ids = seq.ids.tolist()
    ok = [e for e in entries if len(e.dropped) < real[e.row] and ids[e.row][width - len(e.dropped):] == e.dropped
          and image_id not in e.tail]
    keep = [real[e.row] - len(e.dropped) for e in ok]
    if not ok or not capture.can_continue(cache, max(keep) + max(len(e.tail) for e in ok) + max_new_tokens):
        return None
    cache, cut = capture.crop_rows(cache, seq, [e.row for e in ok], keep)
    return _Part(cache, cut, ok, [e.tail for e in ok], keep)


class _Continuations:
    """Takes the scoring forwards' caches (:func:`vlmrobust.forward.capture.handing_on`) and decodes the open
    and free-MCQ prompts from them, batching up to ``2 x batch_size`` continuations."""

    def __init__(self, lm: Any, ids: list[str], plans: dict[str, list], max_new_tokens: int, batch_size: int):
        self.lm, self.plans, self.max_new, self.batch = lm, plans, max_new_tokens, 2 * batch_size
        self.index = {iid: i for i, iid in enumerate(ids)}
        self.image_id, self.stops = image_token_id(lm), stop_ids(lm)
        self.pending: list[_Part] = []
        self.results: dict[tuple[int, str], dict] = {}

    def __call__(self, rec: Recorder, cache: Any, seq: Growing, item_ids: list[str]) -> None:
        entries = []
        for j, iid in enumerate(item_ids):
            i = self.index.get(iid)
            for regime, plan in self.plans.items():
                if i is not None and plan[i] is not None and (i, regime) not in self.results:
                    entries.append(_Entry(j, (i, regime), iid, *plan[i]))
        part = _cut(cache, seq, entries, self.image_id, self.max_new) if entries else None
        if part is not None:
            self.pending.append(part)
            if sum(len(p.entries) for p in self.pending) >= self.batch:
                self.flush(rec)

    def flush(self, rec: Recorder) -> None:
        parts, self.pending = self.pending, []
        n = max(p.seq.ids.shape[1] for p in parts) + max(len(f) for p in parts for f in p.fed) + self.max_new
        if len(parts) > 1 and all(capture.can_continue(p.cache, n) for p in parts):
            joined = capture.merge_cached([(p.cache, p.seq) for p in parts])
            parts = [_Part(*joined, [e for p in parts for e in p.entries], [f for p in parts for f in p.fed],
                           [r for p in parts for r in p.reused])]
        for p in parts:
            self._run(rec, p)

    def _run(self, rec: Recorder, part: _Part) -> None:
        import torch

        width = max(len(f) for f in part.fed)
        new = torch.full((len(part.fed), width), self.lm.tokenizer.pad_token_id or 0, dtype=torch.long)
        mask = torch.zeros((len(part.fed), width), dtype=torch.long)
        for r, f in enumerate(part.fed):
            new[r, width - len(f):] = torch.as_tensor(f)
            mask[r, width - len(f):] = 1
        (logits, cache, seq), outs = rec.run(capture.last_states, lambda: feed(
            self.lm, part.seq, part.cache, new.to(part.seq.ids.device), new_mask=mask, logits_to_keep=1))
        ctx = [np.stack([o[r] for o in outs]).astype(np.float32) for r in range(len(part.fed))]
        got = _decode(self.lm, rec, [e.item_id for e in part.entries], logits, cache, seq, ctx, self.max_new,
                      self.stops)
        for e, g, n in zip(part.entries, got, part.reused, strict=True):
            self.results[e.key] = {**g, "cached_prefix": n}


def _prompts(lm: Any, recs: list[dict], template: str | Template) -> list[str]:
    return [build_prompt(lm.processor, r["question"], list(r["options"]), template) for r in recs]


def _decodes(lm: Any, ids: list[str], images: Sequence[Any], scoring: list[str] | None,
             prompts: dict[str, list[str]], spec: ProbeSpec, batch_size: int, score: Any) -> dict[str, list[dict]]:
    """The open and free-MCQ decodes, continued from the scoring forwards' caches where they can be (``scoring``:
    the scoring prompts; ``score()`` runs the scoring); the rest, or all when ``scoring`` is None, from their own
    prefill."""
    take = None
    if scoring is not None and len(set(ids)) == len(ids):
        plans = _suffixes(lm, scoring, prompts)
        take = _Continuations(lm, ids, plans, spec.max_new_tokens, batch_size)
        with capture.handing_on(take):
            score()
        if take.pending:
            with Recorder(lm) as rec:
                take.flush(rec)
    else:
        score()
    results = {} if take is None else take.results
    out = {}
    for regime, texts in prompts.items():
        res = [results.get((i, regime)) for i in range(len(ids))]
        rest = [i for i, r in enumerate(res) if r is None]
        if rest:
            fresh = greedy_states(lm, [ids[i] for i in rest], [texts[i] for i in rest], [images[i] for i in rest],
                                  batch_size=batch_size, max_new_tokens=spec.max_new_tokens)
            for i, r in zip(rest, fresh, strict=True):
                res[i] = {**r, "cached_prefix": 0}
        out[regime] = res
    return out


def probe_condition(lm: Any, items: pd.DataFrame, images: Sequence[Any], *, method: str, template: str,
                    spec: ProbeSpec, batch_size: int = 8, share_cache: bool = True,
                    **predict_kw: Any) -> tuple[pd.DataFrame, list[dict]]:
    """Predictions and probe states of every item under one condition.

    The predictions come from :func:`vlmrobust.score.predict` with ``hidden=True``
    (the same rows as plain scoring); ``ctx_mcq``, ``ans_mcq`` and the vision
    probes are read off that scoring forward; the open and free-MCQ regimes run
    one greedy decode each, continued from the scoring forward's cache
    (``share_cache=True``, see the module docstring) or each from its own prefill
    (``share_cache=False``: the reference path; the same texts and predictions,
    states equal to float rounding). Returns ``(predictions, states)``: per item a
    dict ``regime -> {"state": (L + 2, H) | None, "pred": option index or -1,
    "text", "n_tokens"}`` plus ``"vision_grid" -> {"energy": (L + 2,), "shape"}``;
    the open and free-MCQ regimes also hold ``cached_prefix``, the number of the
    prompt's tokens read from the scoring cache (0: own prefill).
    """
    spec.validate()
    recs = items.to_dict("records")
    ids = [str(r["item_id"]) for r in recs]
    images = list(images)
    got: dict = {}

    def score() -> None:
        got["pred"], got["hidden"] = predict(lm, items, images, methods=[method], template=template,
                                             batch_size=batch_size, hidden=True, **predict_kw)

    try:
        prompts = {"open": _prompts(lm, recs, PROBE_TEMPLATES[spec.open_template]),
                   "free": _prompts(lm, recs, PROBE_TEMPLATES[spec.free_template])}
        scoring = _prompts(lm, recs, template) if share_cache else None
    except (ValueError, TypeError, KeyError):  # a bad item: scoring names it first
        score()
        raise
    dec = _decodes(lm, ids, images, scoring, prompts, spec, batch_size, score)
    opens, frees = dec["open"], dec["free"]
    pred, scored = got["pred"], got["hidden"][method]
    pred_idx = pred["pred_idx"].to_numpy()
    states = []
    for i, r in enumerate(recs):
        opts = list(r["options"])
        h, o, f = scored[i], opens[i], frees[i]
        po = parse_answer(o["text"], opts, lm.answer_format)
        pf = parse_answer(f["text"], opts, lm.answer_format)
        p = int(pred_idx[i])
        st = {
            "ctx_open": {"state": o["ctx"], "pred": -1 if po is None else po, "text": o["text"], "n_tokens": 0,
                         "cached_prefix": o["cached_prefix"]},
            "ctx_mcq": {"state": h["ctx"], "pred": p, "text": "", "n_tokens": 0},
            "ans_open": {"state": o["ans"], "pred": -1 if po is None else po, "text": o["text"],
                         "n_tokens": o["n_tokens"], "cached_prefix": o["cached_prefix"]},
            "ans_mcq": {"state": h["ans"], "pred": p, "text": "", "n_tokens": h["n_tokens"]},
            "ans_mcq_free": {"state": f["ans"], "pred": -1 if pf is None else pf, "text": f["text"],
                             "n_tokens": f["n_tokens"], "cached_prefix": f["cached_prefix"]},
            "vision_mean": {"state": h["vision_mean"], "pred": p, "text": "", "n_tokens": 0},
            "vision_grid": {"state": None, "pred": p, "text": "", "n_tokens": 0, "energy": h["energy"],
                            "shape": tuple(h["grid_shape"]), "grid": h.get("grid")},
        }
        states.append(st)
    return pred, states
