"""Benchmark of the scoring engine against the common ways of scoring multiple choice.

One run, one model, the same items:

* **letter** — ``vlmrobust.score.letter_scores``: batched (left padding,
  length-sorted), one forward per item, LM head on the last position only;
* **(a) generate-then-parse** — ``model.generate`` per item (greedy), answer
  parsed to an option, as VLMEvalKit scores multiple choice;
* **(b) one full forward per option** — prompt + continuation per option, batch
  size 1, as lmms-eval's log-likelihood tasks do; once with the letters as
  continuations (compared with letter scoring) and once with the option texts
  (compared with shared-prefix log-likelihood);
* **loglik** — ``vlmrobust.score.loglik_scores``: one shared-prefix forward per
  item whose KV cache is reused for the K continuations.

It prints seconds, items/s and speed-up ratios measured side by side, argmax
agreement, the largest per-option log-likelihood difference, and items/s as a
fraction of the FLOP bound (measured matmul GFLOP/s divided by the model's
FLOPs per item, counted with ``torch.utils.flop_counter``). The load average is
printed before and after: the machine may be shared.

It ends with the **fast path** (:mod:`vlmrobust.score.fast`) measured side by side with
the HF eager forward (``score.predict(engine="hf")`` vs ``engine="fast"``, the same
items clean and under one corruption, runs interleaved, best of three, after one
warm-up of each that builds the ONNX export and the text inputs), for a letters
organism (letter scoring) and a text organism (log-likelihood), and one line::

    fast path: R x the HF eager forward, max |dp| Z, argmax agreement A

(R per answer format; the load average before and after, and a warning when the
cores were not idle, on the same line: load above 0.5 before, or above 1.5 after, since
the run's own process adds up to 1). Before it, the **ceiling** on this core: ONNX
Runtime's Gemm rate on the vision MLP's shape and the lean forward's FLOPs per row
give the rows/s, and the ratio over the HF forward, that the fast path would reach
if every operation other than its matmuls were free.

Usage::

    .venv/bin/python bench/scoring.py                 # zoo organism if present, else a random LLaVA
    .venv/bin/python bench/scoring.py --model NAME --n-per-family 8 --threads 1
    .venv/bin/python bench/scoring.py --fast-only     # the fast-path line alone
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np
import torch

REPO = Path(__file__).resolve().parents[1]


def _load(name: str | None, texts: list[str]):
    from vlmrobust import models

    if name is None and models.zoo.names():
        ranked = sorted(models.zoo.names(), key=lambda n: (models.zoo.answer_format(n) != "letters",
                                                           models.zoo.role(n) != "evaluated", n))
        name = ranked[0]  # an evaluated organism that answers with letters, if there is one
    if name is not None:
        return models.load(name), name
    sys.path.insert(0, str(REPO / "tests"))  # random-weight builders live with the tests
    import twins

    model, proc = twins.tiny_llava(texts, image_size=64, hidden=256, layers=4, vision_hidden=128)
    lm = models.LoadedModel(model.eval(), proc, proc.tokenizer, "letters", "random-llava", None,
                            name="random LLaVA (64 px, 4 layers, d=256)")
    return lm, lm.name


def _timed(fn, *a, repeat: int = 1, **kw):
    best, out = float("inf"), None
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn(*a, **kw)
        best = min(best, time.perf_counter() - t)
    return out, best


def _generate_then_parse(lm, ids, prompts, options, images, max_new_tokens):
    from vlmrobust import score
    from vlmrobust.forward import model_inputs

    preds = []
    for _iid, p, opts, im in zip(ids, prompts, options, images, strict=True):
        inputs = model_inputs(lm, [p], [im])
        with torch.inference_mode():
            out = lm.model.generate(**inputs, max_new_tokens=max_new_tokens, do_sample=False,
                                    pad_token_id=lm.tokenizer.pad_token_id)
        text = lm.tokenizer.decode(out[0, inputs["input_ids"].shape[1]:], skip_special_tokens=True)
        preds.append(score.parse_answer(text, opts, lm.answer_format))
    return preds


def _full_forward_letters(lm, ids, prompts, options, images):
    from vlmrobust import schema, score

    out = []
    for iid, p, opts, im in zip(ids, prompts, options, images, strict=True):
        letters = [schema.LETTERS[k] for k in range(len(opts))]
        out.append(score.loglik_full_forward(lm, iid, p, letters, im))
    return out


def _flops_per_item(lm, prompt, image) -> float:
    from torch.utils.flop_counter import FlopCounterMode

    from vlmrobust.forward import model_inputs

    inputs = model_inputs(lm, [prompt], [image])
    with FlopCounterMode(display=False) as fc, torch.inference_mode():
        lm.model(**inputs, logits_to_keep=1)
    return float(fc.get_total_flops())


def _matmul_gflops(n: int = 512, reps: int = 20) -> float:
    a, b = torch.randn(n, n), torch.randn(n, n)
    torch.mm(a, b)
    t = time.perf_counter()
    for _ in range(reps):
        torch.mm(a, b)
    return 2 * n**3 * reps / (time.perf_counter() - t) / 1e9


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", default=None, help="zoo name, folder or hub id (default: first zoo organism)")
    ap.add_argument("--n-per-family", type=int, default=6, help="synthetic items per task family")
    ap.add_argument("--threads", type=int, default=1, help="torch threads (the machine may be shared)")
    ap.add_argument("--batch-size", type=int, default=8, help="letter/loglik batch size")
    ap.add_argument("--max-new-tokens", type=int, default=8, help="generation budget of (a)")
    ap.add_argument("--fast-only", action="store_true", help="measure the fast path against the HF forward only")
    ap.add_argument("--fast-per-family", type=int, default=30, help="synthetic items per family of the fast line")
    args = ap.parse_args(argv)
    torch.set_num_threads(args.threads)
    if args.fast_only:
        fast_line(args)
        return
    from vlmrobust import data, models, score, synth

    print(f"load average before: {os.getloadavg()}")
    items = synth.generate(args.n_per_family, seed=0)
    texts = list(items.question) + [o for opts in items.options for o in opts]
    lm, name = _load(args.model, texts)
    ids = list(items.item_id)
    options = [list(o) for o in items.options]
    images = [data.load_image(r) for r in items.image_ref]
    prompts = [models.build_prompt(lm.processor, q, o) for q, o in zip(items.question, options, strict=True)]
    n = len(ids)
    n_params = sum(p.numel() for p in lm.model.parameters())
    print(f"model: {name} ({n_params / 1e6:.2f} M parameters, answer format {lm.answer_format}); "
          f"{n} items; threads {args.threads}")

    score.letter_scores(lm, ids[:2], prompts[:2], options[:2], images[:2])  # warm-up
    letter, t_letter = _timed(score.letter_scores, lm, ids, prompts, options, images, batch_size=args.batch_size,
                              repeat=2)
    gen, t_gen = _timed(_generate_then_parse, lm, ids, prompts, options, images, args.max_new_tokens)
    _, t_gen1 = _timed(_generate_then_parse, lm, ids, prompts, options, images, 1)
    full_letters, t_full_letters = _timed(_full_forward_letters, lm, ids, prompts, options, images)
    (ll, _), t_ll = _timed(score.loglik_scores, lm, ids, prompts, options, images, batch_size=args.batch_size,
                           repeat=2)
    full_text, t_full_text = _timed(lambda: [score.loglik_full_forward(lm, i, p, o, im)
                                             for i, p, o, im in zip(ids, prompts, options, images, strict=True)])

    letter_arg = [score.argmax_low(r.probs) for r in letter]
    gen_parsed = [g for g in gen if g is not None]
    ll_arg = [score.argmax_low(r.scores) for r in ll]
    own = letter_arg if lm.answer_format == "letters" else ll_arg  # the model's own scoring method

    def agree(xs, ys):
        pairs = [(x, y) for x, y in zip(xs, ys, strict=True) if x is not None]
        return float(np.mean([x == y for x, y in pairs])) if pairs else float("nan")

    agree_gen, agree_gen_own = agree(gen, letter_arg), agree(gen, own)
    agree_full = np.mean([score.argmax_low(f) == a for f, a in zip(full_letters, letter_arg, strict=True)])
    max_diff = max(float(np.max(np.abs(np.asarray(r.scores) - f))) for r, f in zip(ll, full_text, strict=True))
    agree_ll = np.mean([score.argmax_low(r.scores) == score.argmax_low(f) for r, f in zip(ll, full_text, strict=True)])

    gflops = _matmul_gflops()
    flops = np.mean([_flops_per_item(lm, p, im) for p, im in zip(prompts[:4], images[:4], strict=True)])
    bound = gflops * 1e9 / flops

    def row(label, secs):
        return f"  {label:<44} {secs:8.3f} s {n / secs:9.1f} items/s"

    print("\nletter scoring vs (a) generate-then-parse and (b) one full forward per option:")
    print(row("letter (batched, last position only)", t_letter))
    print(row(f"(a) generate-then-parse (max {args.max_new_tokens} new tokens)", t_gen))
    print(row("(a') generate-then-parse, 1 new token (floor)", t_gen1))
    print(row("(b) full forward per letter", t_full_letters))
    print(f"  speed-up vs (a): {t_gen / t_letter:6.1f}x   vs (a'): {t_gen1 / t_letter:6.1f}x   "
          f"vs (b): {t_full_letters / t_letter:6.1f}x")
    print(f"  same argmax as (a): {agree_gen:.3f} of {len(gen_parsed)} parsed answers "
          f"({n - len(gen_parsed)} unparsed of {n}); as (b): {agree_full:.3f}")
    if lm.answer_format != "letters":
        print(f"  (a) against the model's own method (loglik, it answers with option text): {agree_gen_own:.3f}")
    print("\nshared-prefix log-likelihood vs (b) one full forward per option (option texts):")
    print(row("loglik (shared prefix + KV cache)", t_ll))
    print(row("(b) full forward per option", t_full_text))
    print(f"  speed-up: {t_full_text / t_ll:6.1f}x   max |score difference|: {max_diff:.2e}   "
          f"same argmax: {agree_ll:.3f}")
    print(f"\nFLOP bound: matmul {gflops:.1f} GFLOP/s, {flops / 1e9:.4f} GFLOP per item (one forward) "
          f"-> {bound:.1f} items/s")
    print(f"  letter scoring reaches {n / t_letter / bound:.1%} of the FLOP bound")
    print(f"  speed-up over (a) that letter scoring would reach at the FLOP bound: {t_gen / (n / bound):.1f}x")
    print(f"\nload average after: {os.getloadavg()}")
    fast_line(args)


def _organism(fmt: str, prefer: str | None) -> str | None:
    from vlmrobust import models

    if prefer in models.zoo.names() and models.zoo.answer_format(prefer) == fmt:
        return prefer
    ranked = sorted((n for n in models.zoo.names() if models.zoo.answer_format(n) == fmt),
                    key=lambda n: (models.zoo.role(n) != "evaluated", n))
    return ranked[0] if ranked else None


def _ort_gemm_gflops(m: int = 2048, k: int = 96, n: int = 384, reps: int = 40) -> float:
    """GFLOP/s of one ONNX Runtime Gemm (one thread) of the vision MLP's shape: the fast path's matmul rate."""
    import onnxruntime as ort
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(0)
    w, b = rng.random((k, n), dtype=np.float32), rng.random(n, dtype=np.float32)
    graph = helper.make_graph([helper.make_node("Gemm", ["A", "W", "B"], ["Y"])], "gemm",
                              [helper.make_tensor_value_info("A", TensorProto.FLOAT, [None, k])],
                              [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [None, n])],
                              [numpy_helper.from_array(w, "W"), numpy_helper.from_array(b, "B")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=9)
    so = ort.SessionOptions()
    so.intra_op_num_threads = so.inter_op_num_threads = 1
    sess = ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"])
    a = rng.random((m, k), dtype=np.float32)
    _, secs = _timed(lambda: [sess.run(None, {"A": a}) for _ in range(reps)], repeat=3)
    return 2 * m * k * n * reps / secs / 1e9


def _lean_flops_per_row(lm, images) -> float:
    """FLOPs per row of the lean forward on the prepared batches of the last item set (torch's counter)."""
    from torch.utils.flop_counter import FlopCounterMode

    from vlmrobust.forward.lean import LeanLlava
    from vlmrobust.forward.runtime import INPUTS

    sc = lm.extra["fast"]
    lean, total, rows = LeanLlava(lm.model).eval(), 0.0, 0
    for batch in next(reversed(sc._texts.values())):
        feed = {k: torch.from_numpy(v) for k, v in batch.feed.items()}
        feed["pixel_values"] = torch.from_numpy(sc.pixels([images[i] for i in batch.rows]))
        with FlopCounterMode(display=False) as fc, torch.inference_mode():
            lean(**{k: feed[k] for k in INPUTS})
        total, rows = total + fc.get_total_flops(), rows + len(batch.rows)
    return total / rows


def _cpu() -> str:
    """The CPU's model name, family and model number (the ratio depends on the CPU's matmul units)."""
    info = {}
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            key, _, val = line.partition(":")
            info.setdefault(key.strip(), val.strip())
    except OSError:
        return "unknown CPU"
    return f"{info.get('model name', '?')}, family {info.get('cpu family', '?')} model {info.get('model', '?')}"


def fast_line(args) -> None:
    """The fast path against the HF eager forward, side by side in this run (module docstring)."""
    from vlmrobust import corrupt, data, models, score, synth

    before = os.getloadavg()
    items = synth.generate(args.fast_per_family, seed=0)
    clean = [data.load_image(r) for r in items.image_ref]
    noisy = [corrupt.apply(im, "gaussian_noise", 3, seed=0, key=str(i)) for i, im in zip(items.item_id, clean,
                                                                                          strict=True)]
    print(f"\nfast path vs the HF eager forward: {len(items)} items x 2 conditions, batch {args.batch_size}, "
          f"threads {args.threads}; load average before {before}")
    ratios, dps, agree = {}, [], []
    for fmt in ("letters", "text"):
        name = _organism(fmt, args.model)
        if name is None:
            continue
        lm = models.load(name)
        method = models.default_method(fmt)

        def run(engine, lm=lm, method=method):
            return [score.predict(lm, items, imgs, methods=[method], engine=engine, batch_size=args.batch_size)
                    for imgs in (clean, noisy)]

        t0 = time.perf_counter()
        run("fast")  # the export (or the cached file) and the text inputs, once per organism
        setup = time.perf_counter() - t0
        run("hf")
        best = {"hf": float("inf"), "fast": float("inf")}
        out = {}
        for _ in range(3):
            for engine in ("hf", "fast"):
                out[engine], secs = _timed(run, engine)
                best[engine] = min(best[engine], secs)
        p_hf = np.concatenate([np.asarray(p) for t in out["hf"] for p in t.probs])
        p_fast = np.concatenate([np.asarray(p) for t in out["fast"] for p in t.probs])
        dps.append(float(np.abs(p_hf - p_fast).max()))
        agree.append(np.concatenate([(a.pred_idx.to_numpy() == b.pred_idx.to_numpy())
                                     for a, b in zip(out["hf"], out["fast"], strict=True)]))
        ratios[fmt] = best["hf"] / best["fast"]
        rows = 2 * len(items)
        if fmt == "letters":
            ceiling = (rows / best["hf"], rows / best["fast"], _lean_flops_per_row(lm, noisy))
        print(f"  {name} ({fmt}, {method}): HF {rows / best['hf']:7.1f} rows/s, fast {rows / best['fast']:7.1f} "
              f"rows/s ({ratios[fmt]:.2f}x); first fast call {setup:.1f} s (export or cache, text inputs)")
    after = os.getloadavg()
    busy = before[0] > 0.5 or after[0] > 1.5  # this process itself adds up to 1 to the load while it runs
    warn = (f"; WARNING: the cores were not idle (load {before[0]:.2f} before, {after[0]:.2f} after, this run's "
            "own process counting up to 1), ratios are not the machine's") if busy else ""
    if "letters" in ratios:
        hf_rate, fast_rate, flops = ceiling
        gemm = _ort_gemm_gflops()
        top = gemm * 1e9 / flops
        print(f"  ceiling on this core ({_cpu()}): ONNX Runtime's Gemm runs at {gemm:.0f} GFLOP/s and the lean "
              f"forward costs {flops / 1e6:.1f} MFLOP per row, so with every other operation free the fast path "
              f"would score {top:.0f} rows/s, {top / hf_rate:.2f}x the HF forward; it reaches "
              f"{fast_rate / top:.0%} of that")
    r = " / ".join(f"{v:.2f} ({k})" for k, v in ratios.items())
    a = float(np.concatenate(agree).mean()) if agree else float("nan")
    print(f"fast path: {r} x the HF eager forward, max |dp| {max(dps, default=float('nan')):.1e}, "
          f"argmax agreement {a:.4f}; load average {before[0]:.2f} -> {after[0]:.2f}{warn}")


if __name__ == "__main__":
    main()
