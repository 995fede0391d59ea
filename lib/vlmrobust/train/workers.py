"""The background process that builds training batches while the trainer computes (:class:`BatchWorker`).

Batches are pure functions of ``(seed, stage, step)`` (:func:`~vlmrobust.train.stream.make_batch`), so the
worker only moves work off the trainer's thread; the stream spec crosses the process boundary as JSON.
"""

from __future__ import annotations

import json
import os
import queue
from typing import Any

from .encoding import Encoder
from .stream import StreamSpec, make_batch

__all__ = ["BatchWorker", "spec_to_json", "spec_from_json"]


def _worker_main(spec_json: str, seed: int, stage: str, start: int, stop: int, tokenizer_json: str,
                 n_image_tokens: int, q: Any) -> None:  # pragma: no cover - runs in a subprocess
    import traceback

    try:
        spec = spec_from_json(spec_json)
        enc = Encoder(tokenizer_json, n_image_tokens)
        parent = os.getppid()
        for s in range(start, stop):
            item = (s, make_batch(spec, seed, stage, s, s / max(1, stop), enc))
            while True:  # give up when the trainer is gone (killed without closing us)
                try:
                    q.put(item, timeout=5.0)
                    break
                except queue.Full:
                    if os.getppid() != parent:
                        return
        q.put(None)
    except BaseException:
        q.put(("error", traceback.format_exc()))


def spec_to_json(spec: StreamSpec) -> str:
    from dataclasses import asdict

    return json.dumps(asdict(spec))


def spec_from_json(text: str) -> StreamSpec:
    d = json.loads(text)
    return StreamSpec(**{k: tuple(v) if isinstance(v, list) else v for k, v in d.items()})


class BatchWorker:
    """Batches ``start..stop-1`` of a stage, built ahead in one worker process."""

    def __init__(self, spec: StreamSpec, seed: int, stage: str, start: int, stop: int, tokenizer_json: str,
                 n_image_tokens: int, prefetch: int = 3, inline: bool = False) -> None:
        self.inline = inline
        self.spec, self.seed, self.stage, self.start, self.stop = spec, seed, stage, start, stop
        self.next_step = start
        if inline:
            self.enc = Encoder(tokenizer_json, n_image_tokens)
            return
        import multiprocessing as mp

        os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
        ctx = mp.get_context("spawn")
        self.q = ctx.Queue(maxsize=prefetch)
        self.proc = ctx.Process(target=_worker_main, daemon=True,
                                args=(spec_to_json(spec), seed, stage, start, stop, tokenizer_json,
                                      n_image_tokens, self.q))
        self.proc.start()

    def get(self) -> tuple[int, dict]:
        if self.inline:
            s = self.next_step
            self.next_step += 1
            return s, make_batch(self.spec, self.seed, self.stage, s, s / max(1, self.stop), self.enc)
        waited = 0.0
        while True:
            try:
                got = self.q.get(timeout=2.0)
                break
            except queue.Empty:
                waited += 2.0
                if not self.proc.is_alive():
                    raise RuntimeError(f"data worker exited with code {self.proc.exitcode} without a batch "
                                       "(a script that starts training needs an "
                                       "`if __name__ == '__main__':` guard)") from None
                if waited > 600:
                    raise RuntimeError("data worker produced nothing for 10 minutes") from None
        if got is None:
            raise RuntimeError("data worker has no more batches")
        if got[0] == "error":
            raise RuntimeError(f"data worker failed:\n{got[1]}")
        return got

    def close(self) -> None:
        if not self.inline and self.proc.is_alive():
            self.proc.terminate()
            self.proc.join(timeout=5)
