"""Held-out evaluation of an organism through the real processor path.

Items come from :func:`vlmrobust.synth.generate` with a seed no training run
uses (:data:`HELDOUT_SEED`); prompts are built by
:func:`vlmrobust.models.build_prompt` through the processor's chat template and
encoded by the processor itself, exactly as the scoring engine does. Letter
organisms are read from the last position's logits restricted to the K letter
tokens (seed 000, Bench-C, Sec. 3.2: the option distribution is the softmax
over the letter logits); text organisms by the mean log-likelihood of each
option's tokens after the prompt. Corrupted copies (severity 5 by default)
show the accuracy drop the issue's acceptance asks for.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from .stream import augment_image

__all__ = ["HELDOUT_SEED", "heldout_items", "score_items", "evaluate", "summarise", "default_corruptions",
           "agreement", "main"]

#: Seed of the held-out set (no training config uses it).
HELDOUT_SEED = 424242


def heldout_items(n_total: int = 1000, seed: int = HELDOUT_SEED, families: Sequence[str] | None = None,
                  size: int = 64) -> tuple[pd.DataFrame, list[np.ndarray]]:
    """``n_total`` items spread evenly over ``families`` (all by default) and their clean images."""
    from .. import data, synth

    fams = list(families or synth.FAMILIES)
    per = int(np.ceil(n_total / len(fams)))
    df = synth.generate(per, seed, families=fams, size=size)
    df = df.groupby("task", sort=False).head(per).reset_index(drop=True)
    if len(df) > n_total:
        df = df.iloc[np.linspace(0, len(df) - 1, n_total).round().astype(int)].reset_index(drop=True)
    images = [data.load_image(ref) for ref in df["image_ref"]]
    return df, images


def _letter_probs(model: Any, processor: Any, prompts: list[str], images: list[np.ndarray], ks: list[int]) -> np.ndarray:
    import torch

    from ..models import letter_token_ids

    enc = processor(images=images, text=prompts, return_tensors="pt", padding=True)
    with torch.no_grad():
        out = model(**enc)
    last = enc["attention_mask"].sum(1) - 1
    logits = out.logits[torch.arange(len(prompts)), last]
    kmax = max(ks)
    ids = letter_token_ids(processor.tokenizer, prompts[0], kmax)
    lg = logits[:, ids].clone()
    lg = lg.masked_fill(torch.arange(kmax)[None, :] >= torch.tensor(ks)[:, None], float("-inf"))
    return torch.softmax(lg.float(), -1).numpy()


def _text_probs(model: Any, processor: Any, prompts: list[str], images: list[np.ndarray],
                options: list[list[str]]) -> np.ndarray:
    """Mean per-token log-likelihood of each option's words (+ end of turn) after the prompt, softmaxed."""
    import torch

    tok = processor.tokenizer
    end = tok.eos_token
    rows, ims, owner = [], [], []
    for i, (p, opts) in enumerate(zip(prompts, options, strict=False)):
        for k, o in enumerate(opts):
            rows.append((p, o + end))
            ims.append(images[i])
            owner.append((i, k))
    enc = processor(images=ims, text=[p + c for p, c in rows], return_tensors="pt", padding=True)
    n_img = int((enc["input_ids"][0] == processor.image_token_id).sum())
    expanded = [p.replace(processor.image_token, processor.image_token * n_img) for p, _ in rows]
    n_prompt = [len(x) for x in tok(expanded, add_special_tokens=False)["input_ids"]]
    with torch.no_grad():
        logp = torch.log_softmax(model(**enc).logits.float(), -1)
    total = enc["attention_mask"].sum(1)
    kmax = max(len(o) for o in options)
    scores = np.full((len(prompts), kmax), -np.inf)
    for j, (i, k) in enumerate(owner):
        pos = torch.arange(n_prompt[j], int(total[j]))
        tgt = enc["input_ids"][j, pos]
        scores[i, k] = float(logp[j, pos - 1, tgt].mean())
    scores = scores - scores.max(1, keepdims=True)
    p = np.exp(scores)
    return p / p.sum(1, keepdims=True)


def score_items(model: Any, processor: Any, df: pd.DataFrame, images: list[np.ndarray], answer_format: str,
                batch: int = 64) -> pd.DataFrame:
    """One row per item: probs over its options, prediction, correctness, confidence."""
    from ..models import build_prompt

    if answer_format not in ("letters", "text"):
        raise ValueError(f"answer_format must be 'letters' or 'text', got {answer_format!r}")
    model.eval()
    prompts = [build_prompt(processor, q, list(o)) for q, o in zip(df["question"], df["options"], strict=False)]
    probs: list[np.ndarray] = []
    for s in range(0, len(df), batch):
        sl = slice(s, s + batch)
        opts = [list(o) for o in df["options"].iloc[sl]]
        if answer_format == "letters":
            p = _letter_probs(model, processor, prompts[sl], images[sl], [len(o) for o in opts])
        else:
            p = _text_probs(model, processor, prompts[sl], images[sl], opts)
        probs += [row[: len(o)] for row, o in zip(p, opts, strict=False)]
    pred = np.array([int(np.argmax(p)) for p in probs])
    out = pd.DataFrame({"item_id": df["item_id"].values, "task": df["task"].values,
                        "answer_idx": df["answer_idx"].values, "K": [len(o) for o in df["options"]],
                        "pred_idx": pred, "confidence": [float(np.max(p)) for p in probs]})
    out["probs"] = [list(map(float, p)) for p in probs]
    out["correct"] = out["pred_idx"] == out["answer_idx"]
    return out


def default_corruptions(level: int = 5) -> list[tuple[str, int]]:
    """Gaussian blur plus every five-level corruption of ``corrupt.default_sweep()``, at ``level``."""
    out = [("gaussian_blur", level)]
    try:
        from .. import corrupt

        for name, levels in corrupt.default_sweep().items():
            if list(levels) == [1, 2, 3, 4, 5] and name != "gaussian_blur":
                out.append((name, level))
    except ImportError:  # pragma: no cover - the corruption engine is part of the package
        out.append(("gaussian_noise", level))
    return out


def evaluate(model: Any, processor: Any, answer_format: str, n_total: int = 1000, seed: int = HELDOUT_SEED,
             corruptions: Sequence[tuple[str, int]] | None = None,
             families: Sequence[str] | None = None) -> pd.DataFrame:
    """Scores on clean and corrupted held-out items (column ``condition``: "clean" or "name@level")."""
    if corruptions is None:
        corruptions = default_corruptions()
    df, images = heldout_items(n_total, seed, families)
    frames = []
    res = score_items(model, processor, df, images, answer_format)
    res.insert(0, "condition", "clean")
    frames.append(res)
    for name, level in corruptions:
        cim = [augment_image(im, name, level, key=iid) for im, iid in zip(images, df["item_id"], strict=False)]
        r = score_items(model, processor, df, cim, answer_format)
        r.insert(0, "condition", f"{name}@{level}")
        frames.append(r)
    return pd.concat(frames, ignore_index=True)


def summarise(scores: pd.DataFrame) -> dict:
    """Accuracy per condition and per family, confidence gap (correct - wrong) on clean items."""
    out: dict = {"n": int((scores["condition"] == "clean").sum()), "accuracy": {}, "per_family": {}}
    for cond, g in scores.groupby("condition", sort=False):
        out["accuracy"][cond] = round(float(g["correct"].mean()), 4)
        out["per_family"][cond] = {t: round(float(x["correct"].mean()), 4) for t, x in g.groupby("task", sort=False)}
    clean = scores[scores["condition"] == "clean"]
    if clean["correct"].any() and (~clean["correct"]).any():
        out["confidence_gap"] = round(float(clean.loc[clean["correct"], "confidence"].mean()
                                            - clean.loc[~clean["correct"], "confidence"].mean()), 4)
    corr = [c for c in out["accuracy"] if c != "clean"]
    if corr:
        out["drop_mean"] = round(out["accuracy"]["clean"] - float(np.mean([out["accuracy"][c] for c in corr])), 4)
    return out


def agreement(scores: dict[str, pd.DataFrame], corrupted_only: bool = True) -> pd.DataFrame:
    """Pairwise top-1 agreement between organisms (same items and conditions), a square table."""
    names = list(scores)
    keyed = {}
    for n, sc in scores.items():
        x = sc if not corrupted_only else sc[sc["condition"] != "clean"]
        keyed[n] = x.set_index(["condition", "item_id"])["pred_idx"]
    out = pd.DataFrame(index=names, columns=names, dtype=float)
    for a in names:
        for b in names:
            j = keyed[a].to_frame("a").join(keyed[b].to_frame("b"), how="inner")
            out.loc[a, b] = float((j["a"] == j["b"]).mean())
    return out


def main(argv: list[str] | None = None) -> int:
    """``python -m vlmrobust.train.evaluate NAME [NAME ...]``: held-out scores of zoo organisms and their
    pairwise agreement on corrupted items (prints JSON and tables)."""
    import argparse
    import json

    from .. import models

    ap = argparse.ArgumentParser(prog="python -m vlmrobust.train.evaluate")
    ap.add_argument("names", nargs="*", help="zoo names (default: all)")
    ap.add_argument("--n", type=int, default=1000)
    ap.add_argument("--from-runs", action="store_true",
                    help="read the scores saved by training (runs/<name>/heldout_scores.parquet) instead of scoring")
    args = ap.parse_args(argv)
    import torch

    from .trainer import runs_root

    torch.set_num_threads(1)
    names = args.names or models.zoo_names()
    all_scores = {}
    for n in names:
        if args.from_runs:
            sc = pd.read_parquet(runs_root() / n / "heldout_scores.parquet")
        else:
            lm = models.load(n)
            sc = evaluate(lm.model, lm.processor, lm.answer_format, n_total=args.n)
        all_scores[n] = sc
        print(n, json.dumps(summarise(sc)), flush=True)
    if len(all_scores) > 1:
        print(agreement(all_scores).round(3).to_string())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
