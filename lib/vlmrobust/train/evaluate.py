"""Held-out evaluation of an organism, scored by the notebooks' own engine.

Items come from :func:`vlmrobust.synth.generate` with a seed no training run
uses (:data:`HELDOUT_SEED`); every item is scored by
:func:`vlmrobust.score.predict` in the organism's own answer format (letter
logits for letter organisms, seed 000 §V-A; option log-likelihood for text
organisms, seed 002 §3.1), exactly as the notebooks score it, so the accuracies
in the model cards are the notebooks' accuracies. Corrupted copies (severity 5
by default, :func:`vlmrobust.corrupt.apply`) show the fall under corruption.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

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


def _loaded(model: Any, processor: Any, answer_format: str, name: str) -> Any:
    from ..models import LoadedModel

    if answer_format not in ("letters", "text"):
        raise ValueError(f"answer_format must be 'letters' or 'text', got {answer_format!r}")
    return LoadedModel(model=model, processor=processor, tokenizer=processor.tokenizer,
                       answer_format=answer_format, model_id=name, name=name)


def score_items(model: Any, processor: Any, df: pd.DataFrame, images: list[np.ndarray], answer_format: str,
                batch: int = 64, name: str = "organism") -> pd.DataFrame:
    """Predictions rows (:data:`vlmrobust.schema.PRED_COLUMNS`) of ``score.predict`` in the organism's own format."""
    from .. import score

    model.eval()
    return score.predict(_loaded(model, processor, answer_format, name), df, images, batch_size=batch,
                         model_name=name)


def default_corruptions(level: int = 5) -> list[tuple[str, int]]:
    """Gaussian blur plus every five-level corruption of ``corrupt.default_sweep()``, at ``level``."""
    from .. import corrupt

    out = [("gaussian_blur", level)]
    for name, levels in corrupt.default_sweep().items():
        if list(levels) == [1, 2, 3, 4, 5] and name != "gaussian_blur":
            out.append((name, level))
    return out


def evaluate(model: Any, processor: Any, answer_format: str, n_total: int = 1000, seed: int = HELDOUT_SEED,
             corruptions: Sequence[tuple[str, int]] | None = None,
             families: Sequence[str] | None = None) -> pd.DataFrame:
    """Scores on clean and corrupted held-out items (column ``condition``: "clean" or "name@level").

    Corruptions are :func:`vlmrobust.corrupt.apply` with seed 0 and the item id as key.
    """
    from .. import corrupt

    if corruptions is None:
        corruptions = default_corruptions()
    df, images = heldout_items(n_total, seed, families)
    frames = []
    res = score_items(model, processor, df, images, answer_format)
    res.insert(0, "condition", "clean")
    frames.append(res)
    for name, level in corruptions:
        cim = [corrupt.apply(im, name, level, key=iid) for im, iid in zip(images, df["item_id"], strict=True)]
        r = score_items(model, processor, df, cim, answer_format)
        r.insert(0, "condition", f"{name}@{level}")
        frames.append(r)
    return pd.concat(frames, ignore_index=True)


def summarise(scores: pd.DataFrame, seed: int = HELDOUT_SEED) -> dict:
    """Accuracy per condition and per family, confidence gap (correct - wrong) on clean items."""
    out: dict = {"n": int((scores["condition"] == "clean").sum()), "seed": int(seed), "accuracy": {},
                 "per_family": {}}
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
    ap.add_argument("--refresh-cards", action="store_true",
                    help="rewrite each organism's held-out accuracy in its model card with the new scores")
    args = ap.parse_args(argv)
    import torch

    from ..models import zoo
    from .card import refresh_heldout
    from .config import runs_root

    torch.set_num_threads(1)
    names = args.names or zoo.names()
    all_scores = {}
    for n in names:
        if args.from_runs:
            sc = pd.read_parquet(runs_root() / n / "heldout_scores.parquet")
        else:
            lm = models.load(n)
            sc = evaluate(lm.model, lm.processor, lm.answer_format, n_total=args.n)
        all_scores[n] = sc
        summary = summarise(sc)
        print(n, json.dumps(summary), flush=True)
        if args.refresh_cards:
            refresh_heldout(n, summary, eval_command=f"python -m vlmrobust.train.evaluate {n} --n {args.n}")
    if len(all_scores) > 1:
        print(agreement(all_scores).round(3).to_string())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
