"""Progress bars for long work, one switch to choose how they show.

Every loop of the library that can run for more than a few seconds (sweeps,
training, selection, probes, attacks) shows a bar. ``VLMROBUST_PROGRESS`` chooses
how, for every bar at once:

* unset or ``1``: ``tqdm.auto`` — one widget bar in JupyterLab (``ipywidgets``), a
  bar redrawn in place in a terminal;
* ``line``: nothing while the loop runs and **one line** when it ends
  (``sweep shards: 12/12 [00:41, 3.4s/shard]``): what ``make run``, ``make smoke``
  and ``make figures`` set for papermill, so that an executed notebook keeps one
  line per loop instead of every redraw;
* ``0`` (or ``false``, ``no``, ``off``): silent.

Pass ``progress=False`` to a function to silence its bar alone.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable
from typing import Any

__all__ = ["bar", "enabled", "mode"]

_OFF = {"0", "false", "no", "off"}


def mode() -> str:
    """``"bar"``, ``"line"`` or ``"off"``, from ``VLMROBUST_PROGRESS``."""
    value = os.environ.get("VLMROBUST_PROGRESS", "1").strip().lower()
    return "off" if value in _OFF else "line" if value == "line" else "bar"


def enabled(progress: bool | None = None) -> bool:
    """Whether to show a bar: ``progress`` when given, else unless ``VLMROBUST_PROGRESS`` is 0/false/no/off."""
    if progress is not None:
        return bool(progress)
    return mode() != "off"


def _line_bar() -> type:
    from tqdm.std import tqdm

    class LineBar(tqdm):
        """A tqdm bar that draws nothing while it runs and its final state as one line when closed."""

        def __init__(self, *args: Any, **kw: Any) -> None:
            kw.setdefault("file", sys.stderr)
            super().__init__(*args, delay=float("inf"), **kw)

        def display(self, msg: str | None = None, pos: int | None = None) -> bool:
            return True  # nothing while running (a postfix or refresh would draw otherwise)

        def close(self) -> None:
            if getattr(self, "disable", True):
                return
            line = self.format_meter(**self.format_dict)
            fp = self.fp
            super().close()
            fp.write(line + "\n")
            fp.flush()

    return LineBar


def bar(iterable: Iterable | None = None, *, progress: bool | None = None, **kw: Any) -> Any:
    """A progress bar over ``iterable`` (or a manual one with ``total=``), shown as :func:`mode` says."""
    show = enabled(progress)
    if show and mode() == "line":
        return _line_bar()(iterable, **kw)
    from tqdm.auto import tqdm

    return tqdm(iterable, disable=not show, **kw)
