"""Progress bars for long work, one switch to silence them all.

Every loop of the library that can run for more than a few seconds (sweeps,
training, selection, probes, attacks) shows a ``tqdm.auto`` bar: a widget in
JupyterLab, a text bar in papermill's log and in a terminal. Pass
``progress=False`` to a function to silence its bar, or set the environment
variable ``VLMROBUST_PROGRESS=0`` to silence every bar (CI logs, batch jobs).
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import Any

__all__ = ["bar", "enabled"]


def enabled(progress: bool | None = None) -> bool:
    """Whether to show a bar: ``progress`` when given, else unless ``VLMROBUST_PROGRESS`` is 0/false/no/off."""
    if progress is not None:
        return bool(progress)
    return os.environ.get("VLMROBUST_PROGRESS", "1").strip().lower() not in {"0", "false", "no", "off"}


def bar(iterable: Iterable | None = None, *, progress: bool | None = None, **kw: Any) -> Any:
    """A ``tqdm.auto.tqdm`` bar over ``iterable`` (or a manual one with ``total=``), silenced per :func:`enabled`."""
    from tqdm.auto import tqdm

    return tqdm(iterable, disable=not enabled(progress), **kw)
