"""What every claims module of notebook 05 builds its rows from: the row builder and the item bootstrap's inputs.

:func:`claim_row` turns a row's :class:`~vlmrobust.analysis.drift.itemboot.Part` s into a
:class:`~vlmrobust.stats.claims.Claim`; :func:`boot_of` and :func:`per_item` give a row its paired item
bootstrap and its per-item sums; :func:`role_of` and :func:`zoo_name` say which section of the table a model
belongs to (the rows themselves are in :mod:`.claims`, :mod:`.claims_scale` and :mod:`.claims_patterns`).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ...models.loading import BLIND_PREFIX
from ...stats.claims import UNDECIDED, Claim, no_subject
from .itemboot import ItemBoot, Part, decided, lead

__all__ = ["claim_row", "boot_of", "per_item", "as_bool", "zoo_name", "role_of"]


def boot_of(n_boot: int, rng: np.random.Generator, *cols: pd.Series | None) -> ItemBoot:
    """An :class:`ItemBoot` over the items named in ``cols`` (item-id columns of the row's frames)."""
    given = [c.astype(str) for c in cols if c is not None]
    return ItemBoot(pd.concat(given) if given else [], n_boot, rng)


def as_bool(s: pd.Series) -> np.ndarray:
    """A boolean column as an array, missing values read as ``False``."""
    return s.fillna(False).to_numpy(dtype=bool)


def per_item(boot: ItemBoot, df: pd.DataFrame, by: list[str], value=None, how: str = "sum") -> dict:
    """:meth:`ItemBoot.sums` of ``df``, or no groups when ``df`` is empty."""
    return boot.sums(df, by, value, how=how) if len(df) else {}


def claim_row(claim: str, paper: str, null: str, test: str, parts: list[Part], subject: list[str], *,
              empty: str, note: str = "") -> Claim:
    """A :class:`~vlmrobust.stats.claims.Claim` from a row's parts: the verdict combines them; value, interval and
    (when undecided) what would decide it come from the part that decides the row; ``measured`` lists every
    part. No part at all: a ``no subject`` row whose ``measured`` is ``empty``."""
    if not parts:
        return no_subject(claim, paper, null, test, empty + note)
    v, k = decided(parts), lead(parts)
    lo, hi = k.ci()
    measured = "; ".join(p.text() for p in parts) + f" | decided by: {k.name}{note}"
    return Claim(claim, paper, ", ".join(subject), null, test, k.est.point, lo, hi, measured, v,
                 decide=k.decide() if v == UNDECIDED else "")


def zoo_name(name: str) -> str:
    """The name to look a model up by in the zoo: the organism a blind twin (``blind:NAME``) wraps, else itself."""
    return name[len(BLIND_PREFIX):] if name.startswith(BLIND_PREFIX) else name


def role_of(name: str) -> str:
    """The zoo role of a model (of the organism a blind twin wraps); ``evaluated`` for models outside the zoo."""
    from ...models import zoo

    base = zoo_name(name)
    return str((zoo.meta(base) or {}).get("role") or "evaluated") if base in zoo.names() else "evaluated"
