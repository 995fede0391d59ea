"""``python -m vlmrobust.dry.gpu``: the twins and one paper variant on a GPU, timed (``make gpu-check``).

For a machine with a CUDA device; nothing else in the project needs one. Two parts, each printing its timings:

1. **Twins on the device.** Every VLM twin of :mod:`vlmrobust.dry.twins` scores
   the same synthetic items (methods ``letter`` and ``loglik``) on the CPU and
   on the device in float32; the table gives both times (the device's twice:
   the first call includes its warm-up) and the largest difference of the
   option probabilities between the two (it should be at rounding level).
2. **Notebook 05's paper variant with a full-size twin.** The dry run of
   :mod:`vlmrobust.dry.run` for ``05_representation_drift`` (Qwen3-VL and
   LLaVA-OneVision, SEEDBench / MMMU / POPE shaped data), at the mapping's small
   scale but on the device at the variant's own dtype (float16), with
   ``Qwen/Qwen3-VL-2B-Instruct`` stood in by a random-weight twin at that
   model's sizes (:func:`vlmrobust.dry.twins.full_size_qwen3_vl`) and the other
   models by the small twins. Every cell runs; the executed notebook and its
   results go to ``--out``.

``--device cpu --layers 1`` runs the same code on a CPU (the full-size twin cut
to one layer per tower, float32), which is how the tests check this module.
Target: under 10 minutes on one GPU, both parts (the full-size twin is built on
the device, about 1.7 billion parameters, and saved once to ``--out``).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

from .run import build_twins, execute, fabricate, plan, read_mapping, twin_folder_name

__all__ = ["twin_timings", "paper_variant", "FULL_SIZE_ID", "main"]

#: The hub id of notebook 05's paper variant that the full-size twin stands for.
FULL_SIZE_ID = "Qwen/Qwen3-VL-2B-Instruct"


def _sync(device: str) -> None:
    import torch

    if device.startswith("cuda"):
        torch.cuda.synchronize(device)


def twin_timings(device: str, names: list[str] | None = None, n_items: int = 4) -> list[dict]:
    """Score ``n_items`` synthetic items with every VLM twin (or ``names``) on the CPU and on ``device``; a row each."""
    import numpy as np

    from .. import models, score, synth
    from . import twins

    names = names or [n for n, k in twins.KINDS.items() if k == "vlm"]
    items = synth.generate(n_items, 0, size=64)
    images = [synth.render(r)[0] for r in items.image_ref]
    rows = []
    for name in names:
        model, proc = twins.BUILDERS[name](twins.default_texts(), seed=0)
        twins.unblind(model, 0)
        lm = models.LoadedModel(model, proc, proc.tokenizer, "letters", name, None, name=name)
        times, tables = {}, {}
        for where, run in (("cpu", "cpu"), (device, "device_first"), (device, "device")):
            model.to(where)
            _sync(where)
            t0 = time.perf_counter()
            tables[run] = score.predict(lm, items, images, methods=["letter", "loglik"], batch_size=n_items)
            _sync(where)
            times[run] = time.perf_counter() - t0
        a, b = (tables[k].sort_values(["method", "item_id"]) for k in ("cpu", "device"))
        dp = max(float(np.abs(np.asarray(x, float) - np.asarray(y, float)).max())
                 for x, y in zip(a.probs, b.probs, strict=True))
        rows.append({"twin": name, "architecture": type(model).__name__, "cpu_s": round(times["cpu"], 3),
                     "device_first_s": round(times["device_first"], 3), "device_s": round(times["device"], 3),
                     "max_abs_dprob": dp})
        del model, lm
    return rows


def _full_size_twin(folder: Path, device: str, dtype: str, n_layers: int | None) -> dict:
    """Build the full-size Qwen3-VL twin on ``device`` and save it in ``dtype`` (kept when already there)."""
    import torch

    from . import twins

    meta_file = folder / "vlmrobust.json"
    want = {"twin": "full_size_qwen3_vl", "n_layers": n_layers, "dtype": dtype}
    if meta_file.is_file() and all(json.loads(meta_file.read_text()).get(k) == v for k, v in want.items()):
        return {"built_s": 0.0, "kept": True}
    t0 = time.perf_counter()
    with torch.device(device):
        model, proc = twins.full_size_qwen3_vl(twins.default_texts(), seed=0, n_layers=n_layers)
    twins.unblind(model, 0)
    model.to(getattr(torch, dtype))
    n_params = sum(p.numel() for p in model.parameters())
    twins.save_twin(model, proc, folder, answer_format="letters",
                    meta={**want, "architecture": type(model).__name__, "seed": 0, "parameters": n_params})
    del model
    return {"built_s": round(time.perf_counter() - t0, 1), "kept": False, "parameters": n_params}


def paper_variant(out: str | os.PathLike, device: str, *, dtype: str | None = None,
                  n_layers: int | None = None, kernel: str = "vlmrobust") -> dict:
    """Notebook 05's paper variant on ``device`` with the full-size twin (module docstring); its summary row."""
    out = Path(out).resolve()
    mapping = read_mapping()
    variant_dtype = dtype or ("float16" if device.startswith("cuda") else "float32")
    mapping["common"] = {**mapping["common"], "device": device, "dtype": variant_dtype}
    plans = plan(out, fabricate(out), ["05_representation_drift"], mapping)
    built = _full_size_twin(out / "twins" / twin_folder_name(FULL_SIZE_ID), device, variant_dtype, n_layers)
    archs = build_twins(out, plans)
    row = execute(out, plans, archs, kernel=kernel)[0]
    return {**row, "full_size_twin": built, "device": device, "dtype": variant_dtype}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m vlmrobust.dry.gpu", description=__doc__.splitlines()[0])
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--dtype", default=None, help="notebook 05's dtype (default: float16 on CUDA, else float32)")
    ap.add_argument("--layers", type=int, default=None, help="cut the full-size twin to this many layers per tower")
    ap.add_argument("--twins", nargs="*", default=None, help="twins of part 1 (default: every VLM twin)")
    ap.add_argument("--skip-twins", action="store_true")
    ap.add_argument("--out", default="build/gpu-check")
    args = ap.parse_args(argv)
    import torch

    if args.device.startswith("cuda") and not torch.cuda.is_available():
        print(f"no CUDA device here (torch {torch.__version__}); run with --device cpu --layers 1 to check the code",
              file=sys.stderr)
        return 2
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    report: dict = {"device": args.device, "torch": torch.__version__,
                    "gpu": torch.cuda.get_device_name(args.device) if args.device.startswith("cuda") else None}
    t0 = time.perf_counter()
    if not args.skip_twins:
        report["twins"] = twin_timings(args.device, args.twins)
        print(f"\n{'twin':<20} {'architecture':<40} {'cpu s':>7} {'dev 1st':>8} {'dev s':>7} {'cpu/dev':>8} "
              f"{'max |dp|':>9}")
        for r in report["twins"]:
            print(f"{r['twin']:<20} {r['architecture']:<40} {r['cpu_s']:>7.2f} {r['device_first_s']:>8.2f} "
                  f"{r['device_s']:>7.2f} {r['cpu_s'] / max(r['device_s'], 1e-9):>8.2f} {r['max_abs_dprob']:>9.1e}")
    t1 = time.perf_counter()
    report["paper_variant"] = row = paper_variant(out, args.device, dtype=args.dtype, n_layers=args.layers)
    twin = row["full_size_twin"]
    how = "kept" if twin["kept"] else f"built in {twin['built_s']:.0f} s"
    print(f"\n05_representation_drift paper variant on {args.device} ({row['dtype']}): "
          f"{'ok' if row['ok'] else 'FAILED'} in {row['seconds']:.0f} s; full-size twin {how}; "
          f"architectures {', '.join(row['architectures'])}")
    report["seconds"] = {"twins": round(t1 - t0, 1), "paper_variant": round(time.perf_counter() - t1, 1)}
    print(f"total {time.perf_counter() - t0:.0f} s (twins {report['seconds']['twins']:.0f} s, paper variant "
          f"{report['seconds']['paper_variant']:.0f} s); report: {out / 'gpu_check.json'}")
    (out / "gpu_check.json").write_text(json.dumps(report, indent=1) + "\n")
    return 0 if row["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
