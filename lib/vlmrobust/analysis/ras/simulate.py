"""A synthetic predictions table for exercising the seed-000 metrics without a model.

:func:`simulate_predictions` draws option logits from a small generative story
(per-model ability and corruption sensitivity, per-question difficulty, a
flattening-plus-noise effect that grows with severity, and a per-family
strength) and writes them in the predictions-table contract of the project.
It exists for tests, benchmarks and for developing analyses before real
predictions are available; its numbers say nothing about real models.

Two knobs turn the story into the **no-vision null** of the notebook's claims
(:mod:`vlmrobust.analysis.ras.rules`): ``damage = 0`` removes every corruption
effect, so an item is scored the same way whatever its image (a blind model), and
``scoring_noise > 0`` adds independent logit noise to every condition, clean
included, so that clean and corrupted scorings of an item are exchangeable draws
(a blind model whose scoring is not deterministic). :func:`simulate_probs` returns
the option distributions as arrays (the cheap form the rules' simulations use);
:func:`simulate_predictions` writes them as a predictions table.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

__all__ = ["IMAGENET_C_FAMILIES", "simulate_probs", "simulate_predictions"]

#: The 19 ImageNet-C corruptions of seed 000 and their families, as in ``vlmrobust.corrupt``.
IMAGENET_C_FAMILIES: dict[str, str] = {
    "gaussian_noise": "noise", "shot_noise": "noise", "impulse_noise": "noise", "speckle_noise": "noise",
    "defocus_blur": "blur", "glass_blur": "blur", "motion_blur": "blur", "zoom_blur": "blur",
    "gaussian_blur": "blur",
    "snow": "weather", "frost": "weather", "fog": "weather", "spatter": "weather",
    "brightness": "photometric", "contrast": "photometric", "saturate": "photometric",
    "elastic_transform": "digital", "pixelate": "digital", "jpeg_compression": "digital",
}
_FAMILY_STRENGTH = {"noise": 1.0, "blur": 1.3, "weather": 0.8, "photometric": 0.7, "digital": 0.9}


def simulate_probs(
    n_items: int,
    n_models: int,
    family_strength: np.ndarray,
    levels: list[int],
    *,
    k_choices: tuple[int, ...] = (2, 4, 4, 5, 3),
    damage: float = 1.0,
    scoring_noise: float = 0.0,
    corruption_noise: float | np.ndarray = 0.9,
    flatten: float | np.ndarray = 0.45,
    pull: float | np.ndarray = 0.0,
    rng: np.random.Generator,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The story's option distributions as arrays: ``(P, K, answer)``.

    ``P`` has shape ``(n_models, n_items, 1 + n_perturbations * n_levels, max K)``, conditions clean first,
    then perturbation-major and level-minor (``family_strength`` holds one strength per perturbation);
    padding columns beyond an item's ``K`` hold zeros. ``damage`` scales the corruption effect (0: none, the
    image plays no part); ``scoring_noise`` is the SD of independent logit noise added to every condition;
    ``corruption_noise`` and ``flatten`` weigh the fresh noise of the corruption effect and its shrinking of the
    logits towards flat (0.9 and 0.45 by default; one value, or one per model); ``pull`` (one value, or one
    per model) adds a logit that grows with the corruption effect to one
    fixed wrong option per question, the collapse onto a default answer some models show under heavy
    corruption (0 by default).
    """
    n_m, n_l = n_models, len(levels)
    kmax = max(k_choices)
    items = np.arange(n_items)
    K = np.asarray(k_choices, dtype=np.int64)[items % len(k_choices)]
    ans = (rng.integers(0, 2**31, n_items) % K).astype(np.int64)
    difficulty = rng.normal(0.0, 1.0, n_items)
    ability = np.linspace(2.2, 1.0, n_m) + rng.normal(0, 0.1, n_m)
    sharp = np.linspace(1.6, 0.9, n_m)[::-1].copy()
    sens = rng.uniform(0.5, 1.5, n_m)
    fam_strength = np.asarray(family_strength, dtype=np.float64)

    # conditions: clean first, then perturbation-major, level-minor
    cond_level = np.array([0] + list(levels) * len(fam_strength), dtype=np.int64)
    cond_fam = np.concatenate([[0.0], np.repeat(fam_strength, n_l)])
    n_c = len(cond_level)
    sev = cond_level / max(levels) if levels else cond_level.astype(float)

    # base logits per (model, item): noise plus a boost on the answer
    base = rng.normal(0, 1.0, (n_m, n_items, kmax))
    boost = ability[:, None] - 0.8 * difficulty[None, :]
    base[np.arange(n_m)[:, None], items[None, :], ans[None, :]] += boost
    # corrupted logits: shrink towards flat and add fresh noise, growing with severity
    eff = damage * sens[:, None] * (cond_fam * sev)[None, :]  # (m, c)
    noise = rng.normal(0, 1.0, (n_m, n_items, n_c, kmax))
    per_model = [np.broadcast_to(np.asarray(v, dtype=np.float64), (n_m,)) for v in (corruption_noise, flatten)]
    shrink = np.clip(1.0 - per_model[1][:, None] * eff, 0.05, None)[:, None, :, None]
    logits = sharp[:, None, None, None] * (base[:, :, None, :] * shrink
                                           + (per_model[0][:, None] * eff)[:, None, :, None] * noise)
    pull = np.broadcast_to(np.asarray(pull, dtype=np.float64), (n_m,))
    if pull.any():
        distractor = np.arange(kmax)[None, :] == ((ans + 1) % K)[:, None]  # (items, kmax)
        logits += (pull[:, None] * eff)[:, None, :, None] * distractor[None, :, None, :]
    logits[:, :, 0, :] = sharp[:, None, None] * base  # clean condition has no corruption noise
    if scoring_noise > 0:
        logits += sharp[:, None, None, None] * scoring_noise * rng.normal(0, 1.0, logits.shape)
    mask = np.arange(kmax)[None, :] < K[:, None]  # (items, kmax)
    logits = np.where(mask[None, :, None, :], logits, -np.inf)
    logits -= logits.max(axis=-1, keepdims=True)
    P = np.exp(logits)
    P /= P.sum(axis=-1, keepdims=True)

    return P, K, ans


def simulate_predictions(
    n_items: int = 200,
    models: tuple[str, ...] | list[str] = ("model-a", "model-b", "model-c"),
    perturbations: tuple[str, ...] | list[str] | None = None,
    levels: tuple[int, ...] | list[int] = (1, 2, 3, 4, 5),
    *,
    k_choices: tuple[int, ...] = (2, 4, 4, 5, 3),
    method: str = "letter",
    damage: float = 1.0,
    scoring_noise: float = 0.0,
    rng: np.random.Generator,
) -> pd.DataFrame:
    """A predictions table (one row per model × item × condition, clean rows included).

    ``K`` per item cycles through ``k_choices``; ``rng`` is an explicit
    :class:`numpy.random.Generator` (e.g. ``vlmrobust.repro.rng("simulate", 0)``); ``damage`` and
    ``scoring_noise`` as in :func:`simulate_probs` (``damage = 0``: the no-vision null).
    ``probs`` holds one float64 array per row (as pandas reads parquet).
    """
    if not isinstance(rng, np.random.Generator):
        raise TypeError(f"rng must be a numpy Generator, got {type(rng).__name__}")
    if n_items < 1:
        raise ValueError(f"n_items must be >= 1, got {n_items}")
    perts = list(IMAGENET_C_FAMILIES) if perturbations is None else list(perturbations)
    unknown = [p for p in perts if p not in IMAGENET_C_FAMILIES]
    if unknown:
        raise ValueError(f"perturbations {unknown} unknown; choose from {list(IMAGENET_C_FAMILIES)}")
    models = list(models)
    levels = [int(v) for v in levels]
    n_m, n_p = len(models), len(perts)
    kmax = max(k_choices)
    if not (np.isfinite(damage) and damage >= 0 and np.isfinite(scoring_noise) and scoring_noise >= 0):
        raise ValueError(f"damage and scoring_noise must be finite and >= 0, got {damage!r}, {scoring_noise!r}")

    fam_strength = np.array([_FAMILY_STRENGTH[IMAGENET_C_FAMILIES[p]] for p in perts])
    cond_pert = ["clean"] + [p for p in perts for _ in levels]
    cond_level = np.array([0] + levels * n_p, dtype=np.int64)
    n_c = len(cond_pert)
    items = np.arange(n_items)
    P, K, ans = simulate_probs(n_items, n_m, fam_strength, levels, k_choices=k_choices, damage=damage,
                               scoring_noise=scoring_noise, rng=rng)
    # rows: model-major, item, condition
    n_rows = n_m * n_items * n_c
    Pm = P.reshape(n_rows, kmax)
    Kr = np.broadcast_to(K[None, :, None], (n_m, n_items, n_c)).reshape(-1)
    ansr = np.broadcast_to(ans[None, :, None], (n_m, n_items, n_c)).reshape(-1)
    pred_idx = Pm.argmax(axis=1)
    srt = np.sort(Pm, axis=1)
    flat = Pm[np.arange(kmax)[None, :] < Kr[:, None]]
    probs = np.split(flat, np.cumsum(Kr)[:-1]) if n_rows else []
    col = np.empty(n_rows, dtype=object)
    col[:] = probs
    fam_of_item = np.array(["colour", "shape", "count", "spatial", "text", "size", "chart", "verify", "exist"])
    task_i = fam_of_item[items % len(fam_of_item)]
    df = pd.DataFrame({
        "model": np.repeat(np.array(models, dtype=object), n_items * n_c),
        "item_id": np.tile(np.repeat(np.array([f"sim-{i:06d}" for i in items], dtype=object), n_c), n_m),
        "task": np.tile(np.repeat(task_i, n_c), n_m),
        "category": np.tile(np.repeat(task_i, n_c), n_m),
        "perturbation": np.tile(np.array(cond_pert, dtype=object), n_m * n_items),
        "level": np.tile(cond_level, n_m * n_items),
        "param": np.tile(np.where(cond_level == 0, np.nan, cond_level.astype(float)), n_m * n_items),
        "method": method,
        "template": "vlmrobust",
        "seed": 0,
        "K": Kr.astype(np.int64),
        "answer_idx": ansr.astype(np.int64),
        "probs": col,
        "pred_idx": pred_idx.astype(np.int64),
        "correct": pred_idx == ansr,
        "confidence": srt[:, -1],
        "token_prob": np.nan,
        "margin": srt[:, -1] - srt[:, -2],
        "abstained": False,
        "verbal_conf": np.nan,
        "unparsed_rate": np.nan,
        "logits": None,
    })
    return df
