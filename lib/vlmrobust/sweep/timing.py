"""Where a shard's time goes: model loading, I/O, corruption, scoring.

:func:`~vlmrobust.sweep.run_shard` times each part with a :class:`Clock` and
records ``seconds_<part>`` per shard; :func:`summarize` is
:meth:`vlmrobust.sweep.SweepResult.timing`.
"""

from __future__ import annotations

import time

import pandas as pd

__all__ = ["TIME_PARTS", "Clock", "summarize"]

#: The parts of a shard's time that :meth:`SweepResult.timing` reports (``seconds_<part>`` per shard).
TIME_PARTS = ("model", "io", "corrupt", "score")


class Clock:
    """Seconds spent per part of a shard (:data:`TIME_PARTS`): ``with clock("io"): ...`` adds the block's time to
    its part, less the time of the parts nested inside it (each second counts once, in the innermost part)."""

    def __init__(self):
        self.seconds = dict.fromkeys(TIME_PARTS, 0.0)
        self._open: list[list] = []  # [part, start, seconds of nested parts]
        self._next: str | None = None

    def add(self, part: str, seconds: float) -> None:
        self.seconds[part] += seconds

    def __call__(self, part: str) -> Clock:
        self._next = part
        return self

    def __enter__(self) -> None:
        self._open.append([self._next, time.perf_counter(), 0.0])

    def __exit__(self, *exc) -> None:
        part, start, nested = self._open.pop()
        dt = time.perf_counter() - start
        self.seconds[part] += dt - nested
        if self._open:
            self._open[-1][2] += dt

    def record(self) -> dict:
        return {f"seconds_{p}": round(v, 6) for p, v in self.seconds.items()}


def summarize(shards: pd.DataFrame, wall_seconds: float) -> dict:
    """Seconds and share per part of the finished shards (summed over shards: on several workers the sum
    exceeds the wall time), their rows, and rows per second of wall time."""
    done = shards[shards.status == "done"]
    totals = {p: float(done[f"seconds_{p}"].sum()) if f"seconds_{p}" in done else 0.0 for p in TIME_PARTS}
    busy = sum(totals.values())
    out = {f"seconds_{p}": round(v, 3) for p, v in totals.items()}
    out.update({f"share_{p}": round(v / busy, 4) if busy else 0.0 for p, v in totals.items()})
    out["rows"] = int(done.rows.sum()) if len(done) else 0
    out["wall_seconds"] = round(wall_seconds, 3)
    out["rows_per_s"] = round(out["rows"] / wall_seconds, 2) if wall_seconds > 0 else 0.0
    return out
