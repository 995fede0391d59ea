"""Checkpoints of a training run, and the states a stage starts from (a parent organism, the shipped zoo).

A checkpoint is written every ``ckpt_every`` steps and after each stage (:func:`save_ckpt`,
:func:`stage_ckpt`), so an interrupted run resumes on the very batch it stopped at.
:func:`load_grown` loads a state into a model whose vocabulary grew; :func:`zoo_state` reads a
shipped organism's weights.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .config import TrainConfig, config_digest

__all__ = ["save_ckpt", "stage_ckpt", "load_grown", "load_vision", "zoo_state"]


def save_ckpt(path: Path, **state: Any) -> None:
    import torch

    tmp = path.with_suffix(".tmp")
    torch.save(state, tmp)
    tmp.replace(path)


def stage_ckpt(run_dir: Path, stage: str) -> Path:
    return run_dir / f"stage-{stage}.pt"


def load_grown(model: Any, state: dict, tok: Any) -> None:
    """Load a parent's weights whose vocabulary is a prefix of ``tok``'s: the appended tokens' embeddings
    start as copies (``##d`` from the digit ``d``, any other from ``<|end|>``)."""
    import torch

    own = model.state_dict()
    st = dict(state)
    for k, v in state.items():
        if k in own and own[k].shape != v.shape:
            n = v.shape[0]
            if own[k].shape[1:] != v.shape[1:] or own[k].shape[0] < n:
                raise ValueError(f"parent weight {k} of shape {tuple(v.shape)} does not fit {tuple(own[k].shape)}")
            grown = torch.empty_like(own[k])
            grown[:n] = v
            inv = {i: t for t, i in tok.get_vocab().items()}
            for i in range(n, grown.shape[0]):
                t = inv[i]
                src = t[2:] if t.startswith("##") and t[2:] in tok.get_vocab() else "<|end|>"
                grown[i] = v[tok.convert_tokens_to_ids(src)]
            st[k] = grown
    model.load_state_dict(st)


def load_vision(model: Any, state: dict) -> None:
    pre = "model.vision_tower."
    model.model.vision_tower.load_state_dict({k[len(pre):]: v for k, v in state["model"].items() if k.startswith(pre)})


def zoo_state(cfg: TrainConfig, folder: str | Path | None = None) -> dict | None:
    """The final training state of ``cfg`` rebuilt from exported weights, or None.

    Looks in ``folder`` or else in the zoo (the folder named after the config
    first, then every other one) for a ``vlmrobust.json`` that records the digest
    of this very config (:func:`config_digest`, which ignores names): those
    weights are then the run's final weights, so a child config trains on them
    exactly as on the run's own checkpoint (the vision probe, unused after the
    vision stages, is not kept).
    """
    import pandas as pd
    from transformers import AutoModelForImageTextToText

    from ..models import zoo

    digest = config_digest(cfg)
    if folder is not None:
        ok = (Path(folder) / "model.safetensors").is_file() and zoo.meta(folder).get("config_digest") == digest
        folder = Path(folder) if ok else None
    else:
        folder = zoo.find_digest(digest, prefer=cfg.name)
    if folder is None:
        return None
    meta = zoo.meta(folder)
    model = AutoModelForImageTextToText.from_pretrained(folder)
    log = [{k: v for k, v in r.items() if pd.notna(v)} for r in zoo.train_log(folder).to_dict("records")]
    seconds = float(meta.get("train_seconds", 0.0))
    return dict(model={k: v.clone() for k, v in model.state_dict().items()}, probe={}, seconds=seconds,
                total_seconds=seconds, log=log)
