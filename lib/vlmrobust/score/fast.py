"""The fast scoring path: letter and log-likelihood scores of the zoo's organisms through ONNX Runtime.

:func:`resolve_engine` reads the one parameter that chooses the path, ``engine``:

* ``"hf"`` — today's path, the model's own Hugging Face forward (:mod:`.methods`);
* ``"fast"`` — the lean forward (:mod:`vlmrobust.forward.lean`) exported to ONNX Runtime
  (:mod:`vlmrobust.forward.runtime`), with text inputs built once per item set and pixels read
  from the stored uint8 images (:mod:`vlmrobust.forward.prepared`); a model outside the zoo's
  architecture raises ``ValueError`` saying why;
* ``"auto"`` (the default) — ``"fast"`` for the zoo's organisms scored by their own method (letter
  logits for the letter organisms, log-likelihood for the text ones), ``"hf"`` for everything else
  (hub models, local folders, twins, and an organism scored by the other method: a letter organism's
  log-likelihood of option texts reads positions where both float32 forwards are only good to about
  4e-5 in a logit, so the two paths can differ by slightly more than 1e-5 in a probability there).

Both give the same scores up to float32 rounding: the same argmax, and option probabilities within 1e-5 on all
but a few rows. On every row of a Bench-C-size sweep (``bench/fast_exactness.py``: 7 organisms, 846 items, 96
conditions, 568,512 rows) every answer is the same, the median difference is 2e-7 and 7 rows differ by more than
1e-5 (at most 1.9e-5, five of them tiny-long's chart items, scored by option log-likelihood). The Hugging Face
forward differs from itself by at most 6e-7 on those rows between batch sizes 1 and 32, and ONNX Runtime's graph
optimisation level does not change them: the gap comes from the lean forward's computation itself, not from
batching or from the engine's graph rewrites. The sweep's ``SCHEMA_VERSION`` changed with the fast path, so no
shard cache mixes the two (``tests/test_fast_scoring.py``, ``bench/scoring.py``).

**Fallback:** hidden-state probes (``hidden=True``) and the generating methods (``sample``, ``verbal``) always
run today's path. Errors are today's: :class:`~vlmrobust.forward.ScoringError` naming the item for NaN or infinite
logits, :class:`~vlmrobust.models.LetterTokenError` for a letter that is not one token.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..forward import ScoringError
from ..forward.prepared import Batch, PixelTable, packed_batches, prompt_batches
from ._core import OptionScores, next_token_logprobs
from .methods import _loglik_result, _option_tokens, letter_memo, letter_results

__all__ = ["ENGINES", "FastScorer", "resolve_engine", "fast_letter_scores", "fast_loglik_scores"]

#: The scoring engines (module docstring).
ENGINES = ("auto", "hf", "fast")
_KEEP = 4  # prepared item sets kept per model (a sweep scores one item set at every condition)


def _why_not(lm: Any) -> str | None:
    """Why ``lm`` cannot take the fast path (``None`` when it can)."""
    from ..forward.lean import unsupported  # imports torch: only once a model is there

    why = unsupported(lm.model)
    if why is None and str(getattr(lm.device, "type", lm.device)) != "cpu":
        why = f"it runs on {lm.device} (the fast path is ONNX Runtime on the CPU)"
    if why is None and str(getattr(lm.model, "dtype", "")) != "torch.float32":
        why = f"its dtype is {lm.model.dtype} (the fast path is float32)"
    return why


def resolve_engine(lm: Any, engine: str = "auto", *, hidden: bool = False, method: str | None = None) -> str:
    """``"hf"`` or ``"fast"``: the path that scores ``lm`` with ``method`` (``None``: its own) under ``engine``
    (module docstring)."""
    if engine not in ENGINES:
        raise ValueError(f"engine must be one of {ENGINES}, got {engine!r}")
    if engine == "hf" or hidden:
        return "hf"
    why = _why_not(lm)
    if engine == "fast":
        if why is not None:
            raise ValueError(f"engine='fast' cannot score {lm.name or lm.model_id!r}: {why}; use engine='hf'")
        return "fast"
    own = {"letters": ("letter",), "text": ("loglik", "loglik_norm")}.get(getattr(lm, "answer_format", ""), ())
    if method is not None and method not in own:
        return "hf"
    return "fast" if why is None and getattr(lm, "source", "") == "zoo" else "hf"


class FastScorer:
    """One model's fast path: its ONNX Runtime session (one per thread count), pixel table and the
    text inputs of the last few item sets. :func:`scorer` keeps it in ``lm.extra["fast"]``."""

    def __init__(self, lm: Any, key: str):
        from ..forward.runtime import onnx_path

        self.lm, self.key = lm, key
        self.path = onnx_path(lm.model, key)
        self.pixels = PixelTable(lm)
        self.letters = letter_memo(lm)
        self._sessions: dict[int, Any] = {}
        self._texts: OrderedDict = OrderedDict()

    def session(self) -> Any:
        """The session with as many intra-op threads as torch uses now (``torch.set_num_threads``)."""
        import torch

        from ..forward.runtime import session

        threads = max(1, int(torch.get_num_threads()))
        if threads not in self._sessions:
            self._sessions[threads] = session(self.path, threads)
        return self._sessions[threads]

    def prepared(self, prompts: Sequence[str], conts: Sequence[Sequence[Sequence[int]]] | None,
                 batch_size: int) -> list[Batch]:
        """The text batches of an item set (built on first use, then reused for every condition)."""
        key = (tuple(prompts), None if conts is None else tuple(tuple(map(tuple, c)) for c in conts), batch_size)
        if key in self._texts:
            self._texts.move_to_end(key)
            return self._texts[key]
        if conts is None:
            built = prompt_batches(self.lm, prompts, batch_size)
        else:
            built = packed_batches(self.lm, prompts, conts, batch_size)
        self._texts[key] = built
        while len(self._texts) > _KEEP:
            self._texts.popitem(last=False)
        return built

    def logits(self, batch: Batch, images: Sequence[Any]) -> np.ndarray:
        """Float64 logits ``(B, P, V)`` at the batch's answer positions."""
        from ..forward.runtime import run

        feed = dict(batch.feed, pixel_values=self.pixels(images))
        return run(self.session(), feed).astype(np.float64)


def scorer(lm: Any) -> FastScorer:
    """The :class:`FastScorer` of ``lm`` for the weights it holds now (a changed weight builds a new one)."""
    from ..forward.runtime import digest

    key = digest(lm.model)
    held = lm.extra.get("fast") if isinstance(lm.extra, dict) else None
    if held is None or held.key != key:
        held = FastScorer(lm, key)
        lm.extra["fast"] = held
    return held


def _finite(row: np.ndarray, item_id: str, where: str) -> None:
    if not np.isfinite(row).all():
        raise ScoringError(item_id, f"non-finite (NaN or inf) logits {where}")


def _answer_rows(sc: FastScorer, item_ids, prompts, images, batch_size) -> list[np.ndarray]:
    """The answer position's logits of every prompt (float64, whole vocabulary)."""
    rows: list[np.ndarray | None] = [None] * len(prompts)
    for batch in sc.prepared(prompts, None, batch_size):
        logits = sc.logits(batch, [images[i] for i in batch.rows])
        for j, i in enumerate(batch.rows):
            _finite(logits[j, 0], item_ids[i], "at the answer position")
            rows[i] = logits[j, 0]
    return rows  # type: ignore[return-value]


def fast_letter_scores(lm: Any, item_ids: Sequence[str], prompts: Sequence[str],
                       options: Sequence[Sequence[str]], images: Sequence[Any], *,
                       batch_size: int = 8) -> list[OptionScores]:
    """:func:`~vlmrobust.score.letter_scores` on the fast path (seed 000 §V-A): the same scores and extras."""
    sc = scorer(lm)
    rows = _answer_rows(sc, item_ids, prompts, images, batch_size)
    return letter_results(sc.letters, prompts, options, rows)


def fast_loglik_scores(lm: Any, item_ids: Sequence[str], prompts: Sequence[str],
                       options: Sequence[Sequence[str]], images: Sequence[Any], *,
                       batch_size: int = 8) -> tuple[list[OptionScores], list[OptionScores]]:
    """:func:`~vlmrobust.score.loglik_scores` on the fast path (seed 002 §3.1): ``(loglik, loglik_norm)``.

    Items whose options are all one token are read at the answer position; the others run with
    every option's continuation packed after the prompt in one row (:func:`~vlmrobust.forward.prepared
    .packed_batches`), so the vision tower and the prompt run once per item.
    """
    sc = scorer(lm)
    conts = [_option_tokens(lm, iid, p, o) for iid, p, o in zip(item_ids, prompts, options, strict=True)]
    out_sum: list[OptionScores | None] = [None] * len(prompts)
    out_norm: list[OptionScores | None] = [None] * len(prompts)
    single = [i for i, c in enumerate(conts) if all(len(t) == 1 for t in c)]
    multi = [i for i, c in enumerate(conts) if any(len(t) > 1 for t in c)]
    if single:
        rows = _answer_rows(sc, [item_ids[i] for i in single], [prompts[i] for i in single],
                            [images[i] for i in single], batch_size)
        for i, row in zip(single, rows, strict=True):
            lp = next_token_logprobs(row)
            sums = np.array([lp[t[0]] for t in conts[i]])
            out_sum[i], out_norm[i] = _loglik_result(sums, np.ones(len(sums)))
    if multi:
        for batch in sc.prepared([prompts[i] for i in multi], [conts[i] for i in multi], batch_size):
            logits = sc.logits(batch, [images[multi[n]] for n in batch.rows])
            for j, n in enumerate(batch.rows):
                i = multi[n]
                _finite(logits[j, 0], item_ids[i], "at the answer position")
                lp0 = next_token_logprobs(logits[j, 0])
                sums, at = np.empty(len(conts[i])), 1
                for o, t in enumerate(batch.answers[j]):
                    rest = []
                    for pos in range(1, len(t)):
                        _finite(logits[j, at], item_ids[i], "in an option continuation")
                        rest.append(next_token_logprobs(logits[j, at])[t[pos]])
                        at += 1
                    sums[o] = lp0[t[0]] + sum(rest)  # summed as today's path sums
                out_sum[i], out_norm[i] = _loglik_result(sums, np.array([len(t) for t in conts[i]], dtype=np.float64))
    return out_sum, out_norm  # type: ignore[return-value]
