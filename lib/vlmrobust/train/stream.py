"""Training data: synthetic items turned into token ids, targets and pixels, batch by batch.

Every batch is a pure function of ``(seed, stage name, step)``: items come from
``vlmrobust.synth.make_item`` with generators from :func:`vlmrobust.repro.rng`,
so an interrupted run resumes on exactly the batches it would have seen.
Batches are built in one background worker process (:class:`~vlmrobust.train.workers.BatchWorker`)
while the trainer thread computes.

Example modes (the letter curriculum of the model-organism issue):

* ``open``     - ``"{question}\\nAnswer with a word."`` -> the answer's words;
* ``mcq``      - the multiple-choice text (options after the image) -> the letter;
* ``hint``     - as ``mcq`` with ``" Hint: {answer}."`` appended to the question;
* ``lookup``   - as ``mcq`` with the question replaced by the answer value
  (the language model learns to find a value among lettered options);
* ``mcq_text`` - the multiple-choice text -> the option's own words;
* ``talk``     - the multiple-choice text with seed 003's confidence request
  (:data:`vlmrobust.models.CONFIDENCE_REQUEST`) -> the letter, a new line and
  ``Confidence: N`` (:data:`TALK_TOKENS`); the trainer writes the organism's own
  letter and ``N`` into the batch (its rows are ``talk_rows``), see :mod:`~vlmrobust.train.trainer`.

``visibility_prob`` degrades that share of the boxed families' items by physical
fog or water (:func:`vlmrobust.train.degrade.degrade`, visibility log-uniform
in ``visibility_range``), the red box drawn afterwards (seed 003); with
``aware_threshold`` > 0 the abstain option, where offered, becomes the answer
exactly when the boxed object's transmittance is below it (the aware organism).

``own_errors`` (the error-aware control) makes the abstain option, where a letter example
offers it, the answer exactly when the organism's own answer among the other options is
wrong: the trainer answers the marked rows (``own_error_rows``) on these fresh items
without gradients before each step (:func:`vlmrobust.train.losses.fill_own_errors`).

``null_prob`` shows that share of items as an image without content whose answer is
the abstain option, ``sky_prob`` recolours or veils the sky of that share of the
other clear images (:mod:`vlmrobust.train.scenery`: the learned abstainer, varied skies).
``hide_prob`` occludes or cuts away the boxed object of that share of the boxed families'
clear items (:func:`vlmrobust.train.scenery.hide_object`), offers the abstain option and
makes it the answer; ``abstain_kinds`` are the wordings the abstain option is drawn from
(both of seed 003's by default).

``describe_prob`` (start, end) appends, in any mode, what the image shows to the
questions of the yes/no families (" Hint: blue triangle." for the boxed object of
``verify``, one hint per object, in random order, for ``exist``) with a
probability that fades from start to end: the language model first learns to
compare the question with a description in words, then with the image.

The prompt text is :func:`vlmrobust.models.mcq_text`, rendered through the
chat template exactly as the scoring engine renders it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .. import repro
from ..schema import ABSTAIN_TEXTS, OPTION_LETTERS
from .dense import dense_labels
from .encoding import Encoder, talk_target
from .scenery import hide_object, null_image, vary_sky

__all__ = ["MODES", "StreamSpec", "make_batch", "HINT"]

MODES = ("open", "mcq", "hint", "lookup", "mcq_text", "talk")
HINT = " Hint: {value}."
ABSTAIN_KINDS = tuple(ABSTAIN_TEXTS)
@dataclass(frozen=True)
class StreamSpec:
    """What one stage's batches hold.

    ``mix`` maps modes to probabilities; ``hint_prob`` (start, end) fades the
    hint of ``mcq`` examples linearly over the stage (an ``mcq`` example becomes
    ``hint`` with that probability); ``k_probs`` are the probabilities of keeping
    2, 3 or all options of a 4-option item; ``abstain_prob`` is the share of items
    generated with an abstain option; ``image_dropout`` blanks that share of
    images (answers must then come from language priors); ``corrupt_prob`` and
    ``corrupt_max_level`` augment images with random corruptions; ``distance``
    (metres, near and far) narrows the objects' distances (None: synth's default);
    ``text_only`` drops the image from the prompt (a text-only user turn, no pixels):
    short sequences for teaching the language model to find a value among
    lettered options; ``prompt_loss`` > 0 also trains next-token prediction on the
    prompt's text tokens (dense language-model signal), weighted by that factor;
    ``dense`` adds per-patch targets to probe batches (:func:`dense_labels`);
    ``visibility_prob``, ``visibility_range`` (metres), ``visibility_arms``,
    ``aware_threshold``, ``own_errors``, ``null_prob``, ``sky_prob``, ``hide_prob`` and ``abstain_kinds``: see the
    module docstring.
    """

    families: tuple[str, ...]
    batch: int = 128
    mix: dict = field(default_factory=lambda: {"open": 1.0})
    hint_prob: tuple[float, float] = (0.0, 0.0)
    describe_prob: tuple[float, float] = (0.0, 0.0)
    k_probs: tuple[float, float, float] = (0.15, 0.15, 0.70)
    abstain_prob: float = 0.15
    image_dropout: float = 0.0
    corrupt_prob: float = 0.0
    corrupt_max_level: int = 3
    corruptions: tuple[str, ...] = ("gaussian_blur", "gaussian_noise")
    size: int = 64
    probe: bool = False
    distance: tuple[float, float] | None = None
    text_only: bool = False
    prompt_loss: float = 0.0
    dense: bool = False
    visibility_prob: float = 0.0
    visibility_range: tuple[float, float] = (1.0, 16000.0)
    visibility_arms: tuple[str, ...] = ("fog", "water")
    aware_threshold: float = 0.0
    own_errors: bool = False
    null_prob: float = 0.0
    sky_prob: float = 0.0
    hide_prob: float = 0.0
    abstain_kinds: tuple[str, ...] = ABSTAIN_KINDS

    def __post_init__(self) -> None:
        if not self.families:
            raise ValueError("families must not be empty")
        bad = set(self.mix) - set(MODES)
        if bad:
            raise ValueError(f"mix has unknown modes {sorted(bad)}; allowed: {MODES}")
        if abs(sum(self.mix.values()) - 1.0) > 1e-6 or min(self.mix.values()) < 0:
            raise ValueError(f"mix probabilities must be >= 0 and sum to 1, got {self.mix}")
        for name in ("hint_prob", "describe_prob"):
            v = getattr(self, name)
            if len(v) != 2 or not all(0.0 <= float(x) <= 1.0 for x in v):
                raise ValueError(f"{name} must be (start, end) with both in [0, 1], got {v}")
        for name in ("abstain_prob", "image_dropout", "corrupt_prob", "visibility_prob", "aware_threshold",
                     "null_prob", "sky_prob", "hide_prob"):
            v = getattr(self, name)
            if not 0.0 <= v <= 1.0:
                raise ValueError(f"{name} must lie in [0, 1], got {v}")
        lo, hi = (float(x) for x in self.visibility_range)
        if not 0 < lo < hi:
            raise ValueError("visibility_range must be (near, far) metres with 0 < near < far, "
                             f"got {self.visibility_range}")
        from .degrade import ARMS

        if not self.visibility_arms or set(self.visibility_arms) - set(ARMS):
            raise ValueError(f"visibility_arms must be a non-empty subset of {ARMS}, got {self.visibility_arms}")
        if self.aware_threshold > 0 and self.visibility_prob == 0:
            raise ValueError("aware_threshold needs visibility_prob > 0 (nothing would be invisible)")
        if self.own_errors and self.aware_threshold > 0:
            raise ValueError("own_errors and aware_threshold both decide when to abstain: choose one")
        if self.own_errors and self.abstain_prob == 0:
            raise ValueError("own_errors needs abstain_prob > 0 (no example would offer the abstain option)")
        if not self.abstain_kinds or set(self.abstain_kinds) - set(ABSTAIN_KINDS):
            raise ValueError(f"abstain_kinds must be a non-empty subset of {ABSTAIN_KINDS}, got {self.abstain_kinds}")
        if not isinstance(self.batch, int) or self.batch < 1:
            raise ValueError(f"batch must be a positive int, got {self.batch!r}")


def _kind(r: np.random.Generator, kinds: Sequence[str]) -> str:
    """An abstain wording drawn from ``kinds`` (with both of seed 003's, the draw streams have always made)."""
    return kinds[int(r.integers(len(kinds)))]


def _mcq_text(question: str, options: Sequence[str], template: str = "vlmrobust", confidence: bool = False) -> str:
    from ..models import mcq_text

    return mcq_text(question, list(options), template, confidence=confidence)


def _default_make_item() -> Callable:
    from ..synth import make_item

    return make_item


YESNO_FAMILIES = ("verify", "exist")


def describe(item: Any, rng: np.random.Generator) -> str:
    """What the image of a yes/no item shows, in the vocabulary of its question (see ``describe_prob``)."""
    meta = item.meta
    if meta["family"] == "verify":
        seen = [(meta["target_colour"], meta["target_shape"])]
    elif meta["family"] == "exist":
        seen = [(o["colour"], o["shape"]) for o in meta["objects"] if o.get("kind") == "shape"]
        seen = [seen[i] for i in rng.permutation(len(seen))]
    else:
        raise ValueError(f"describe() covers the yes/no families {YESNO_FAMILIES}, not {meta['family']!r}")
    return "".join(HINT.format(value=f"{c} {s}") for c, s in seen)


def _shuffle_options(item: Any, rng: np.random.Generator, k_probs: Sequence[float]) -> tuple[list[str], int]:
    """Options reduced to 2/3/all (answer kept) and permuted; an abstain option stays last."""
    options = list(item.options)
    ans = int(item.answer_idx)
    abst = int(getattr(item, "abstain_idx", -1))
    tail = [options[abst]] if abst >= 0 else []
    body = [i for i in range(len(options)) if i != abst]
    distract = [i for i in body if i != ans]
    if len(body) >= 4:
        keep = int(rng.choice([2, 3, len(body)], p=k_probs))
        distract = list(rng.permutation(distract)[: keep - 1])
    order = [ans] + [int(i) for i in distract]
    order = [order[i] for i in rng.permutation(len(order))]
    new = [options[i] for i in order] + tail
    return new, order.index(ans)


def make_batch(spec: StreamSpec, seed: int, stage: str, step: int, frac: float, enc: Encoder,
               make_item: Callable | None = None) -> dict:
    """Batch ``step`` of stage ``stage`` (``frac`` = step / stage steps, for schedules), as numpy arrays."""
    from .. import corrupt

    make_item = make_item or _default_make_item()
    from .degrade import BOXED_FAMILIES, boxed_condition

    r = repro.rng("batch", seed, stage, step)
    modes = list(spec.mix)
    mode_p = np.array([spec.mix[m] for m in modes], dtype=float)
    p_hint = spec.hint_prob[0] + (spec.hint_prob[1] - spec.hint_prob[0]) * min(max(frac, 0.0), 1.0)
    p_desc = spec.describe_prob[0] + (spec.describe_prob[1] - spec.describe_prob[0]) * min(max(frac, 0.0), 1.0)
    images, texts, targets, mode_list, ks, answers, questions, option_lists = [], [], [], [], [], [], [], []
    dense: list[dict] = []
    talk_rows: list[int] = []
    visibility: list[tuple[str, float, float]] = []  # (arm, V, t) per item; ("", inf, 1) when clear
    grid = int(round(enc.n_image_tokens ** 0.5))
    own_rows: list[int] = []
    for i in range(spec.batch):
        fam = spec.families[int(r.integers(len(spec.families)))]
        abstain = None
        if r.random() < spec.abstain_prob:
            abstain = _kind(r, spec.abstain_kinds)
        # drawn only when null images are on, so that streams without them stay as they were
        null = spec.null_prob > 0 and r.random() < spec.null_prob
        if null:
            abstain = _kind(r, spec.abstain_kinds)
        # drawn only when hiding is on, so that streams without it stay as they were
        hide = spec.hide_prob > 0 and not null and fam in BOXED_FAMILIES and r.random() < spec.hide_prob
        if hide:
            abstain = _kind(r, spec.abstain_kinds)
        kw = {"distance": tuple(spec.distance)} if spec.distance is not None else {}
        # drawn only when degrading is on, so that streams without it stay as they were
        degrade = (spec.visibility_prob > 0 and not hide and fam in BOXED_FAMILIES
                   and r.random() < spec.visibility_prob)
        if degrade:
            kw["box"] = False
            arm = spec.visibility_arms[int(r.integers(len(spec.visibility_arms)))]
            lo, hi = np.log(np.asarray(spec.visibility_range, dtype=np.float64))
            vis = float(np.exp(r.uniform(lo, hi)))
        item = make_item(fam, repro.rng("item", seed, stage, step, i), size=spec.size, abstain=abstain, **kw)
        img = np.asarray(item.image, dtype=np.uint8)
        invisible = False
        if null:
            img = null_image(img.shape, r)
            if item.meta.get("box") is not None:  # drawn whether or not the item drew it (the image is new)
                from ..synth import draw_box

                img = draw_box(img, item.meta["box"])
            visibility.append(("", float("inf"), 1.0))
        elif degrade:
            img, t, invisible = boxed_condition(item, arm, vis, spec.aware_threshold)
            visibility.append((arm, vis, t))
        else:
            visibility.append(("", float("inf"), 1.0))
            # drawn only when sky variation is on, so that streams without it stay as they were
            if spec.sky_prob > 0 and r.random() < spec.sky_prob:
                img = vary_sky(img, item.depth, r)
            if hide:
                img = hide_object(img, item.meta["box"], r)
            if spec.image_dropout > 0 and r.random() < spec.image_dropout:
                img = np.full_like(img, 128)
            elif spec.corrupt_prob > 0 and r.random() < spec.corrupt_prob:
                name = spec.corruptions[int(r.integers(len(spec.corruptions)))]
                level = int(r.integers(1, spec.corrupt_max_level + 1))
                img = corrupt.apply(img, name, level, key=f"{seed}/{stage}/{step}/{i}")
        mode = modes[int(r.choice(len(modes), p=mode_p))]
        if mode == "mcq" and r.random() < p_hint:
            mode = "hint"
        if mode == "open" and int(getattr(item, "abstain_idx", -1)) == int(item.answer_idx):
            mode = "mcq_text"
        options, ans = _shuffle_options(item, r, spec.k_probs)
        if (invisible and abstain is not None and spec.aware_threshold > 0) or null or hide:
            ans = len(options) - 1  # the abstain option (kept last) is the answer: nothing to see
            if mode in ("open", "hint", "lookup", "mcq_text"):  # no abstain option to give, or a hint to read
                mode = "mcq"
        if spec.own_errors and abstain is not None and mode == "mcq":
            own_rows.append(i)
        value = options[ans]
        question = item.question
        # drawn only when describing is on, so that streams without it stay as they were
        if any(spec.describe_prob) and fam in YESNO_FAMILIES and r.random() < p_desc:
            question = question + describe(item, r)
        if mode == "open":
            text, target = _mcq_text(question, options, "open"), value
        elif mode == "mcq":
            text, target = _mcq_text(question, options), OPTION_LETTERS[ans]
        elif mode == "hint":
            text, target = _mcq_text(question + HINT.format(value=value), options), OPTION_LETTERS[ans]
        elif mode == "lookup":
            text, target = _mcq_text(value, options), OPTION_LETTERS[ans]
        elif mode == "talk":
            text, target = _mcq_text(question, options, confidence=True), None
            talk_rows.append(i)
        else:
            text, target = _mcq_text(question, options), value
        if spec.dense:
            dense.append(dense_labels(item, grid))
        images.append(img)
        texts.append(text)
        targets.append(target)
        mode_list.append(MODES.index(mode))
        ks.append(len(options))
        answers.append(ans)
        questions.append(item.question)
        option_lists.append(options)
    batch: dict[str, Any] = {"images": np.stack(images), "mode": np.array(mode_list, np.int64),
                             "k": np.array(ks, np.int64), "answer": np.array(answers, np.int64)}
    if spec.probe:
        q_ids = enc.word_ids(questions)
        lq = max(len(q) for q in q_ids)
        qa = np.zeros((spec.batch, lq), np.int64)
        for i, q in enumerate(q_ids):
            qa[i, : len(q)] = q
        flat = enc.word_ids([o for opts in option_lists for o in opts])
        lo = max(len(o) for o in flat)
        oa = np.zeros((spec.batch, 5, lo), np.int64)
        j = 0
        for i, opts in enumerate(option_lists):
            for k in range(len(opts)):
                oa[i, k, : len(flat[j])] = flat[j]
                j += 1
        batch.update(question_ids=qa, option_ids=oa)
        if spec.dense:
            batch["dense"] = {k: np.stack([d[k] for d in dense]) for k in dense[0]}
        return batch
    p_ids = enc.prompt_ids(texts, image=not spec.text_only)
    t_ids = [t + [enc.end_id] for t in enc.word_ids([t or "" for t in targets])]
    for i in talk_rows:  # placeholders (the true letter, confidence 0) that the trainer overwrites
        t_ids[i] = talk_target(enc, answers[i], 0)
    L = max(len(p) + len(t) for p, t in zip(p_ids, t_ids, strict=False))
    ids = np.full((spec.batch, L), enc.pad_id, np.int64)
    labels = np.full((spec.batch, L), -100, np.int64)
    first = np.zeros(spec.batch, np.int64)
    plabels = np.full((spec.batch, L), -100, np.int64)
    for i, (p, t) in enumerate(zip(p_ids, t_ids, strict=False)):
        ids[i, : len(p) + len(t)] = p + t
        labels[i, len(p): len(p) + len(t)] = t
        if spec.prompt_loss > 0:
            pl = np.array(p[1:], np.int64)
            pl[pl == enc.image_id] = -100
            plabels[i, 1: len(p)] = pl
        first[i] = len(p) - 1  # the position whose next-token logits give the first answer token
    if (ids == enc.unk_id).any():
        bad = [texts[i] + " -> " + str(targets[i]) for i in np.nonzero((ids == enc.unk_id).any(1))[0][:3]]
        raise ValueError(f"unknown words in training text (vocabulary incomplete): {bad}")
    if spec.text_only:
        batch["images"] = None
    if spec.prompt_loss > 0:
        batch["prompt_labels"] = plabels
        batch["prompt_weight"] = float(spec.prompt_loss)
    if talk_rows:
        batch["talk_rows"] = np.array(talk_rows, np.int64)
    if spec.own_errors:
        batch["own_error_rows"] = np.array(own_rows, np.int64)
    if spec.visibility_prob > 0:
        batch["visibility_t"] = np.array([v[2] for v in visibility], np.float64)
    batch.update(input_ids=ids, labels=labels, first=first,
                 attention_mask=(np.arange(L)[None, :]
                                 < np.array([len(p) + len(t) for p, t in zip(p_ids, t_ids, strict=False)])[:, None]
                                 ).astype(np.int64))
    return batch
