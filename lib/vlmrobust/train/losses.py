"""What the trainer optimises: the answer-token loss, letter probabilities, the targets made from the organism's
own answers.

* :func:`lm_loss` — next-token cross-entropy on the answer tokens only, with shifted labels;
* :func:`letter_probs` — the organism's letter distribution at the answer position;
* :func:`calibration_table` and :func:`fill_talk` — the talker's stated confidence from its own binned
  accuracy (see :mod:`vlmrobust.train.trainer`);
* :func:`fill_own_errors` — the error-aware control's target: abstain exactly where its own answer is wrong;
* the dense probe loss of the vision stage.
"""

from __future__ import annotations

from typing import Any

from .encoding import TALK_LETTER, TALK_TENS, TALK_UNITS, Encoder
from .processor import pixel_values
from .stream import MODES, make_batch

__all__ = ["lm_loss", "letter_probs", "calibration_table", "fill_talk", "fill_own_errors", "probe_loss"]


def lm_loss(model: Any, batch: dict, letter_ids: list[int]) -> tuple[Any, dict]:
    """Shifted next-token loss on answer tokens, and per-mode accuracy of the first answer token.

    Letter modes count as correct when the argmax over the item's K letter
    logits is its answer letter; open modes when the argmax over the whole
    vocabulary is the answer's first token.
    """
    import torch
    import torch.nn.functional as F

    ids = torch.from_numpy(batch["input_ids"])
    labels = torch.from_numpy(batch["labels"])
    pix = pixel_values(batch["images"]) if batch.get("images") is not None else None
    out = model.model(input_ids=ids, pixel_values=pix,
                      attention_mask=torch.from_numpy(batch["attention_mask"]))
    h = out.last_hidden_state
    tgt = labels[:, 1:]
    sel = tgt != -100
    logits = model.lm_head(h[:, :-1][sel])
    loss = F.cross_entropy(logits, tgt[sel])
    if "prompt_labels" in batch:
        ptgt = torch.from_numpy(batch["prompt_labels"])[:, 1:]
        psel = ptgt != -100
        loss = loss + batch["prompt_weight"] * F.cross_entropy(model.lm_head(h[:, :-1][psel]), ptgt[psel])
    with torch.no_grad():
        first = torch.from_numpy(batch["first"])
        b = torch.arange(ids.shape[0])
        lf = model.lm_head(h[b, first])
        k = torch.from_numpy(batch["k"])
        mode = torch.from_numpy(batch["mode"])
        let = lf[:, letter_ids]
        let = let.masked_fill(torch.arange(len(letter_ids))[None, :] >= k[:, None], float("-inf"))
        letter_ok = let.argmax(-1) == torch.from_numpy(batch["answer"])
        open_ok = lf.argmax(-1) == labels[b, first + 1]
        is_letter = torch.tensor([MODES[m] in ("mcq", "hint", "lookup", "talk") for m in mode.tolist()])
        ok = torch.where(is_letter, letter_ok, open_ok)
        stats = {}
        for mi, mname in enumerate(MODES):
            msk = mode == mi
            if msk.any():
                stats[mname] = (float(ok[msk].float().sum()), int(msk.sum()))
    return loss, stats


def letter_probs(model: Any, batch: dict, letter_ids: list[int], rows: Any = None) -> Any:
    """Softmax over each row's K letters at its answer position, without gradients (``rows``: a subset)."""
    import torch

    rows = torch.arange(batch["input_ids"].shape[0]) if rows is None else torch.as_tensor(rows)
    ids = torch.from_numpy(batch["input_ids"])[rows]
    pix = pixel_values(batch["images"][rows.numpy()]) if batch.get("images") is not None else None
    with torch.no_grad():
        h = model.model(input_ids=ids, pixel_values=pix,
                        attention_mask=torch.from_numpy(batch["attention_mask"])[rows]).last_hidden_state
        first = torch.from_numpy(batch["first"])[rows]
        let = model.lm_head(h[torch.arange(len(rows)), first])[:, letter_ids]
        k = torch.from_numpy(batch["k"])[rows]
        let = let.masked_fill(torch.arange(len(letter_ids))[None, :] >= k[:, None], float("-inf"))
        return torch.softmax(let.float(), -1)


def calibration_table(model: Any, spec: Any, seed: int, key: str, enc: Encoder, letter_ids: list[int],
                      items: int, bins: int, make_item: Any = None, chunk: int = 128) -> list[int]:
    """Confidence targets per bin of the letter probability, from the organism's own answers.

    ``items`` fresh talk examples (the stage's stream, batches keyed ``key``) are
    answered without gradients; over ``bins`` equal-width bins of the top letter
    probability ``p``, bin ``b``'s target is ``100 * (hits_b + 2 m_b) / (n_b + 2)``
    rounded and clipped to [0, 99] (``m_b`` the bin's centre: two pseudo-answers
    at the bin's own probability keep sparse bins near it).
    """
    from dataclasses import replace

    import numpy as np
    import torch

    spec = replace(spec, mix={"talk": 1.0}, batch=chunk)
    was_training = model.training
    model.eval()
    hits, counts = np.zeros(bins), np.zeros(bins)
    for j in range(-(-items // chunk)):
        b = make_batch(spec, seed, key, j, 0.0, enc, make_item=make_item)
        p = letter_probs(model, b, letter_ids)
        n = min(chunk, items - j * chunk)
        top, pred = p[:n].max(-1)
        right = (pred == torch.from_numpy(b["answer"][:n])).numpy()
        idx = np.minimum((top.numpy() * bins).astype(int), bins - 1)
        np.add.at(hits, idx, right)
        np.add.at(counts, idx, 1)
    model.train(was_training)
    mid = (np.arange(bins) + 0.5) / bins
    return [int(v) for v in np.clip(np.rint(100 * (hits + 2 * mid) / (counts + 2)), 0, 99)]


def fill_talk(model: Any, batch: dict, letter_ids: list[int], table: list[int], enc: Encoder) -> None:
    """Write the organism's own letter and its confidence target into the talk rows of ``batch`` (in place)."""
    import numpy as np

    rows = batch["talk_rows"]
    p = letter_probs(model, batch, letter_ids, rows)
    top, pred = (x.numpy() for x in p.max(-1))
    bins = len(table)
    conf = np.asarray(table)[np.minimum((top * bins).astype(int), bins - 1)]
    at = batch["first"][rows] + 1
    ids, labels = batch["input_ids"], batch["labels"]
    ids[rows, at + TALK_LETTER] = np.asarray(letter_ids)[pred]  # fed back as generated; the label keeps the truth
    digits = np.asarray([enc.tok.token_to_id(str(d)) for d in range(10)])
    cont = np.asarray(enc.talk_ids[1:])
    ids[rows, at + TALK_TENS] = labels[rows, at + TALK_TENS] = digits[conf // 10]
    ids[rows, at + TALK_UNITS] = labels[rows, at + TALK_UNITS] = cont[conf % 10]


def fill_own_errors(model: Any, batch: dict, letter_ids: list[int]) -> Any:
    """The error-aware target (``own_errors``): in each ``own_error_rows`` row, whose last option is the
    abstain option, the organism answers among the other options without gradients; where that answer is
    wrong the abstain letter becomes the row's target (label, fed-back input and ``answer``, in place).

    Returns the rows' wrong flags (a bool array)."""
    import numpy as np

    rows = batch["own_error_rows"]
    if len(rows) == 0:
        return np.zeros(0, bool)
    k = batch["k"][rows]
    p = letter_probs(model, batch, letter_ids, rows).numpy()
    p[np.arange(len(rows)), k - 1] = -1.0  # the abstain option is no answer
    wrong = p.argmax(-1) != batch["answer"][rows]
    w_rows, at = rows[wrong], batch["first"][rows[wrong]] + 1
    abst = np.asarray(letter_ids)[k[wrong] - 1]
    batch["input_ids"][w_rows, at] = batch["labels"][w_rows, at] = abst
    batch["answer"][w_rows] = k[wrong] - 1
    return wrong


def probe_loss(model: Any, probe: Any, batch: dict) -> tuple[Any, dict]:
    import torch
    import torch.nn.functional as F

    from .probe import dense_loss

    vt = model.model.vision_tower
    feats = vt(pixel_values(batch["images"])).last_hidden_state[:, 1:]
    logits = probe(feats, torch.from_numpy(batch["question_ids"]), torch.from_numpy(batch["option_ids"]))
    ans = torch.from_numpy(batch["answer"])
    loss = F.cross_entropy(logits, ans)
    ok = (logits.argmax(-1) == ans).float()
    stats = {"probe": (float(ok.sum()), int(ok.numel()))}
    if "dense" in batch:
        dl, ds = dense_loss(probe.dense(feats), {k: torch.from_numpy(v) for k, v in batch["dense"].items()})
        loss = loss + dl
        stats.update(ds)
    return loss, stats
