"""Seed 002's protocol for notebook 05, each choice stated (§3, §4.1, App. A.3, A.6, Limitations).

* **Shifts** (:func:`natural_predictions`): translation and pad/crop move by the
  paper's fixed pixel offsets at the image's native resolution (``shift="fixed"``,
  its Limitations speak of a fixed +-16 px shift), or by offsets scaled from
  224 px (``"scaled"``, :func:`vlmrobust.corrupt.natural.shift_corrupt`); the
  reading enters the shard keys.
* **Subsets** (:func:`disjoint_subsets`, :func:`across_subsets`): "four
  independent runs, each using a disjoint random subset of 3,500 images ... all
  reported statistics are averaged across runs" (§4.1). The subsets are drawn
  once with a seeded generator; every item is scored once (an item's predictions
  and states do not depend on the subset it falls in), and each table is computed
  per subset and given as the mean over subsets with the SD across them. Control
  pairs are kept only when both items lie in the subset.
* **Set-apart instances** (:func:`table_pairs`): the paper keeps every instance in
  its tables, those whose ground truth a perturbation may change included
  (``set_apart="kept"``); they are also shown apart. ``"excluded"`` leaves them
  out of the tables.
* **POPE prompt**: :data:`POPE_TEMPLATE`, "Question: <q> Answer with exactly one
  word: Yes or No." (App. A.3), scored on the options ``Yes`` / ``No``: with
  option log-likelihood that is the one-token log-probability wherever ``Yes``
  and ``No`` are single tokens (:func:`one_token_options` says where not).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from ... import sweep
from ...corrupt import natural
from .instability import split_ground_truth

__all__ = ["SET_APART", "POPE_TEMPLATE", "natural_predictions", "check_gt_changing", "table_pairs", "disjoint_subsets",
           "restrict", "across_subsets", "one_token_options", "model_sizes"]

SET_APART = ("kept", "excluded")
#: Seed 002 App. A.3, POPE: "[IMAGE] Question: <question> Answer with exactly one word: Yes or No."
POPE_TEMPLATE = "seed002_pope"


def natural_predictions(models: Sequence[str], items: pd.DataFrame, conditions: Mapping[str, Sequence[int]], *,
                        shift: str = "fixed", **sweep_kw: Any) -> sweep.SweepResult:
    """:func:`vlmrobust.sweep.predictions` with translation and pad/crop under the ``shift`` reading."""
    if shift not in natural.SHIFT_READINGS:
        raise ValueError(f"shift must be one of {', '.join(natural.SHIFT_READINGS)}; got {shift!r}")
    if shift == "fixed":  # the registry's own definition
        return sweep.predictions(models, items, conditions, **sweep_kw)
    fn = natural.shift_corrupt(shift)
    return sweep.predictions(models, items, conditions, corrupt_fn=fn, param_fn=fn.param, **sweep_kw)


def check_gt_changing(value: Any, param: str = "gt_changing") -> dict[str, tuple[str, ...]]:
    """A ``{natural perturbation: [task families]}`` parameter as a dict of tuples, or a clear error."""
    from ... import corrupt, params

    if not isinstance(value, Mapping):
        raise params.ParameterError(f"parameter {param!r} must map perturbations to family lists, got {value!r}")
    for name, fams in value.items():
        params.check(f"{param} key {name!r}", name, str, choices=list(corrupt.manifest("natural")))
        params.check_list(f"{param}[{name!r}]", fams, str, min_len=0)
    return {k: tuple(v) for k, v in value.items()}


def table_pairs(pairs: pd.DataFrame, changing: Mapping[str, Sequence[str]], set_apart: str = "kept"
                ) -> tuple[pd.DataFrame, pd.DataFrame]:
    """``(in_tables, apart)``: the rows the tables use under ``set_apart``, and the set-apart rows alone."""
    if set_apart not in SET_APART:
        raise ValueError(f"set_apart must be one of {', '.join(SET_APART)}; got {set_apart!r}")
    kept, apart = split_ground_truth(pairs, changing)
    return (pairs.reset_index(drop=True) if set_apart == "kept" else kept), apart


def disjoint_subsets(item_ids: Sequence[str], n_subsets: int, size: int, rng: np.random.Generator
                     ) -> list[np.ndarray]:
    """``n_subsets`` disjoint random subsets of ``size`` items each (``size = 0``: as large as they can be).

    One subset of size 0 is every item in its order (no draw). Each subset keeps
    the items' order. Raises ``ValueError`` when the items cannot fill them.
    """
    ids = np.asarray([str(i) for i in item_ids], dtype=object)
    if len(set(ids)) != len(ids):
        raise ValueError("item ids repeat: subsets need distinct items")
    if n_subsets < 1 or size < 0:
        raise ValueError(f"need n_subsets >= 1 and size >= 0, got {n_subsets}, {size}")
    if n_subsets == 1 and size in (0, len(ids)):
        return [ids]
    size = size or len(ids) // n_subsets
    if size < 1 or n_subsets * size > len(ids):
        raise ValueError(f"{n_subsets} disjoint subsets of {size} items need {n_subsets * size} items; "
                         f"the source has {len(ids)} (lower subset_size or n_subsets, or raise max_items)")
    perm = rng.permutation(len(ids))
    return [ids[np.sort(perm[k * size:(k + 1) * size])] for k in range(n_subsets)]


def restrict(frame: pd.DataFrame, ids: Sequence[str]) -> pd.DataFrame:
    """The rows of ``frame`` whose items lie in ``ids`` (and, for control pairs, whose partner does too)."""
    keep = frame["item_id"].astype(str).isin(set(ids))
    if "other_id" in frame.columns:
        other = frame["other_id"]
        keep &= other.isna() | (other.astype(str) == "") | other.astype(str).isin(set(ids))
    return frame[keep.to_numpy()].reset_index(drop=True)


def across_subsets(fn: Callable[..., pd.DataFrame], subsets: Sequence[Sequence[str]], keys: Sequence[str],
                   **frames: pd.DataFrame) -> pd.DataFrame:
    """``fn(**frames)`` on every subset's rows, as the mean over subsets of each numeric column, with the SD
    across subsets beside it (``<column> run SD``, ``ddof = 1``) and ``runs`` (the subsets that have the row).

    ``keys``: the columns that identify a row of ``fn``'s table (e.g. ``model``, ``perturbation``).
    With one subset it is ``fn``'s own table on that subset's rows.
    """
    if len(subsets) == 1:
        return fn(**{k: restrict(v, subsets[0]) for k, v in frames.items()})
    parts = [fn(**{k: restrict(v, ids) for k, v in frames.items()}).assign(_run=i) for i, ids in enumerate(subsets)]
    t = pd.concat(parts, ignore_index=True)
    keys = list(keys)
    values = [c for c in t.columns if c not in keys and c != "_run" and pd.api.types.is_numeric_dtype(t[c])
              and not pd.api.types.is_bool_dtype(t[c])]
    g = t.groupby(keys, sort=False, dropna=False)
    out = g[values].mean()
    sd = g[values].std(ddof=1)
    out = out.join(sd.add_suffix(" run SD")).join(g["_run"].nunique().rename("runs")).reset_index()
    return out[keys + [c for v in values for c in (v, f"{v} run SD")] + ["runs"]]


def one_token_options(tokenizer: Any, options: Sequence[str] = ("Yes", "No")) -> dict[str, int]:
    """The number of tokens of each option after a space, as scoring appends it: 1 means one-token scoring."""
    return {o: len(tokenizer(" " + o, add_special_tokens=False)["input_ids"]) for o in options}


def model_sizes(names: Sequence[str], load: Callable[[str], Any], meta: Callable[[str], Mapping] | None = None
                ) -> dict[str, float]:
    """Model sizes for the scale section: the zoo's ``lm_parameters`` where ``meta(name)`` gives one, else the
    parameter count of ``load(name).model``."""
    out = {}
    for n in names:
        m = meta(n) if meta is not None else None
        out[n] = float(m["lm_parameters"]) if m and m.get("lm_parameters") else float(
            sum(p.numel() for p in load(n).model.parameters()))
    return out
