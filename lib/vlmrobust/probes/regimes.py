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
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
import pandas as pd

from ..forward import ScoringError, batches, model_inputs, stop_ids
from ..forward.capture import Growing, Recorder, answer_states, feed, prompt_states
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
    composition); ``keep_grid``: keep the clean grids themselves.
    """

    max_new_tokens: int = 8
    open_template: str = "open"
    free_template: str = "mcq_free"
    grid_layer: int = -1
    n_control: int = 1000
    noise_floor: bool = True
    floor_batch_size: int = 1
    keep_grid: bool = False

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
    import torch

    stops = stop_ids(lm)
    out: list[dict | None] = [None] * len(prompts)
    with Recorder(lm) as rec:
        for idx in batches(lm, prompts, batch_size):
            inputs = model_inputs(lm, [prompts[i] for i in idx], [images[i] for i in idx])
            logits, cache, outs = prompt_states(lm, rec, inputs)
            b = len(idx)
            ctx = [np.stack([o["last"][j] for o in outs]).astype(np.float32) for j in range(b)]
            sums = np.zeros((b,) + ctx[0].shape, dtype=np.float64)
            counts = np.zeros(b, dtype=int)
            tokens: list[list[int]] = [[] for _ in range(b)]
            done = np.zeros(b, dtype=bool)
            seq = Growing.of(inputs)
            last = logits[:, -1, :].float()
            for _ in range(max_new_tokens):
                if not torch.isfinite(last).all():
                    bad = int(torch.flatnonzero(~torch.isfinite(last).all(dim=1))[0])
                    raise ScoringError(item_ids[idx[bad]], "non-finite (NaN or inf) logits while decoding")
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
            for j, i in enumerate(idx):
                ans = (sums[j] / counts[j]).astype(np.float32) if counts[j] else np.full_like(ctx[j], np.nan)
                out[i] = {"ctx": ctx[j], "ans": ans, "n_tokens": int(counts[j]),
                          "text": lm.tokenizer.decode(tokens[j], skip_special_tokens=True)}
    return out  # type: ignore[return-value]


def _prompts(lm: Any, recs: list[dict], template: str | Template) -> list[str]:
    return [build_prompt(lm.processor, r["question"], list(r["options"]), template) for r in recs]


def probe_condition(lm: Any, items: pd.DataFrame, images: Sequence[Any], *, method: str, template: str,
                    spec: ProbeSpec, batch_size: int = 8, **predict_kw: Any) -> tuple[pd.DataFrame, list[dict]]:
    """Predictions and probe states of every item under one condition.

    The predictions come from :func:`vlmrobust.score.predict` with ``hidden=True``
    (the same rows as plain scoring); ``ctx_mcq``, ``ans_mcq`` and the vision
    probes are read off that scoring forward; the open and free-MCQ regimes run
    one greedy decode each. Returns ``(predictions, states)``: per item a dict
    ``regime -> {"state": (L + 2, H) | None, "pred": option index or -1,
    "text", "n_tokens"}`` plus ``"vision_grid" -> {"energy": (L + 2,), "shape"}``.
    """
    spec.validate()
    recs = items.to_dict("records")
    ids = [str(r["item_id"]) for r in recs]
    pred, hidden = predict(lm, items, list(images), methods=[method], template=template, batch_size=batch_size,
                           hidden=True, **predict_kw)
    scored = hidden[method]
    opens = greedy_states(lm, ids, _prompts(lm, recs, PROBE_TEMPLATES[spec.open_template]), images,
                          batch_size=batch_size, max_new_tokens=spec.max_new_tokens)
    frees = greedy_states(lm, ids, _prompts(lm, recs, PROBE_TEMPLATES[spec.free_template]), images,
                          batch_size=batch_size, max_new_tokens=spec.max_new_tokens)
    pred_idx = pred["pred_idx"].to_numpy()
    states = []
    for i, r in enumerate(recs):
        opts = list(r["options"])
        h, o, f = scored[i], opens[i], frees[i]
        po = parse_answer(o["text"], opts, lm.answer_format)
        pf = parse_answer(f["text"], opts, lm.answer_format)
        p = int(pred_idx[i])
        st = {
            "ctx_open": {"state": o["ctx"], "pred": -1 if po is None else po, "text": o["text"], "n_tokens": 0},
            "ctx_mcq": {"state": h["ctx"], "pred": p, "text": "", "n_tokens": 0},
            "ans_open": {"state": o["ans"], "pred": -1 if po is None else po, "text": o["text"],
                         "n_tokens": o["n_tokens"]},
            "ans_mcq": {"state": h["ans"], "pred": p, "text": "", "n_tokens": h["n_tokens"]},
            "ans_mcq_free": {"state": f["ans"], "pred": -1 if pf is None else pf, "text": f["text"],
                             "n_tokens": f["n_tokens"]},
            "vision_mean": {"state": h["vision_mean"], "pred": p, "text": "", "n_tokens": 0},
            "vision_grid": {"state": None, "pred": p, "text": "", "n_tokens": 0, "energy": h["energy"],
                            "shape": tuple(h["grid_shape"]), "grid": h.get("grid")},
        }
        states.append(st)
    return pred, states
