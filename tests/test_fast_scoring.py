"""The fast scoring path (vlmrobust.score.fast) against today's Hugging Face forward, on zoo organisms."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import torch

from vlmrobust import corrupt, data, models, score, synth
from vlmrobust.forward import runtime
from vlmrobust.forward.lean import LeanLlava, unsupported
from vlmrobust.forward.prepared import PixelTable

torch.set_num_threads(1)


@pytest.fixture(autouse=True)
def _onnx_cache(tmp_path_factory, monkeypatch):
    monkeypatch.setenv("VLMROBUST_ONNX_CACHE", str(tmp_path_factory.getbasetemp() / "onnx"))


@pytest.fixture(scope="module")
def items() -> pd.DataFrame:
    return synth.generate(3, seed=1)


@pytest.fixture(scope="module")
def images(items) -> list[np.ndarray]:
    return [data.load_image(r) for r in items.image_ref]


def _probs(df: pd.DataFrame) -> np.ndarray:
    return np.concatenate([np.asarray(p) for p in df.probs])


@pytest.mark.parametrize("name", ["tiny-letters", "tiny-base"])
def test_fast_path_matches_the_hf_forward(name, items, images):
    lm = models.load(name)
    noisy = [corrupt.apply(im, "gaussian_noise", 3, seed=0, key=str(i)) for i, im in zip(items.item_id, images,
                                                                                         strict=True)]
    for imgs in (images, noisy):
        for methods in (["letter"], ["loglik", "loglik_norm"]):
            hf = score.predict(lm, items, imgs, methods=methods, engine="hf", batch_size=5)
            fast = score.predict(lm, items, imgs, methods=methods, engine="fast", batch_size=5)
            assert list(fast.columns) == list(hf.columns) and len(fast) == len(hf)
            assert np.abs(_probs(fast) - _probs(hf)).max() <= 1e-5
            assert (fast.pred_idx.to_numpy() == hf.pred_idx.to_numpy()).all()
            np.testing.assert_allclose(fast.token_prob, hf.token_prob, atol=1e-5, rtol=0)
            np.testing.assert_allclose(fast.margin, hf.margin, atol=1e-3, rtol=0)
    assert any(len(t) > 1 for p, o in zip(items.question, items.options, strict=True)
               for t in score.methods._option_tokens(lm, "x", models.build_prompt(lm.processor, p, list(o)), list(o)))


def test_auto_takes_the_fast_path_for_organisms_only(items, images):
    lm = models.load("tiny-letters")
    assert score.resolve_engine(lm) == "fast" and score.resolve_engine(lm, "hf") == "hf"
    assert score.resolve_engine(lm, "fast", hidden=True) == "hf"  # probes read today's forward
    assert score.resolve_engine(lm, method="letter") == "fast" and score.resolve_engine(lm, method="loglik") == "hf"
    assert score.resolve_engine(lm, "fast", method="loglik") == "fast"
    lm.source = "hub"
    assert score.resolve_engine(lm) == "hf"
    with pytest.raises(ValueError, match="engine must be one of"):
        score.resolve_engine(lm, "onnx")


def test_fast_refuses_other_architectures():
    import twins

    model, proc = twins.tiny_qwen2_vl()
    lm = models.LoadedModel(model, proc, proc.tokenizer, "letters", "q", "r0", name="q")
    assert unsupported(model) is not None
    assert score.resolve_engine(lm) == "hf"
    with pytest.raises(ValueError, match="engine='fast' cannot score 'q'"):
        score.resolve_engine(lm, "fast")


def test_pixels_are_bit_identical_to_the_processor(items, images):
    from vlmrobust.forward import model_inputs

    lm = models.load("tiny-letters")
    table = PixelTable(lm)
    assert table.exact
    rng = np.random.default_rng(3)
    odd = [rng.integers(0, 256, (40, 48, 3), dtype=np.uint8), rng.integers(0, 256, (64, 64, 3), dtype=np.uint8)]
    for batch in (images, [corrupt.apply(im, "contrast", 5, seed=0, key="k") for im in images], odd):
        want = model_inputs(lm, ["<image>"] * len(batch), list(batch))["pixel_values"].numpy()  # today's pixels
        assert table(batch).dtype == want.dtype and np.array_equal(table(batch), want)


def test_lean_module_reads_the_answer_position_like_the_model(items, images):
    from vlmrobust.forward import forward, model_inputs
    from vlmrobust.forward.prepared import prompt_batches

    lm = models.load("ladder-48")
    prompts = [models.build_prompt(lm.processor, q, list(o)) for q, o in zip(items.question, items.options,
                                                                             strict=True)]
    batch = prompt_batches(lm, prompts, 64)[0]
    ref, _ = forward(lm, model_inputs(lm, [prompts[i] for i in batch.rows], [images[i] for i in batch.rows]),
                     logits_to_keep=1)
    feed = {k: torch.from_numpy(v) for k, v in batch.feed.items()}
    pixels = torch.from_numpy(PixelTable(lm)([images[i] for i in batch.rows]))
    with torch.inference_mode():
        got = LeanLlava(lm.model).eval()(feed["input_ids"], pixels, feed["position_ids"], feed["image_index"],
                                         feed["mask"], feed["gather"])
    np.testing.assert_allclose(got[:, 0].numpy(), ref[:, -1].numpy(), atol=1e-4, rtol=0)


def test_export_is_cached_by_the_weights_digest(tmp_path, monkeypatch):
    monkeypatch.setenv("VLMROBUST_ONNX_CACHE", str(tmp_path))
    lm = models.load("tiny-letters")
    key = runtime.digest(lm.model)
    path = runtime.onnx_path(lm.model, key)
    stamp = path.stat().st_mtime_ns
    assert runtime.onnx_path(lm.model) == path and path.stat().st_mtime_ns == stamp  # not exported again
    with torch.no_grad():
        lm.model.model.multi_modal_projector.linear_2.bias.add_(1e-3)
    assert runtime.digest(lm.model) != key
    assert [p.name for p in tmp_path.glob("*.onnx")] == [path.name]


def test_nan_logits_and_missing_letters_name_the_item(items, images):
    lm = models.load("tiny-letters")
    sub, imgs = items.iloc[:2], images[:2]
    with torch.no_grad():
        lm.model.model.language_model.norm.weight.fill_(float("nan"))
    for method in ("letter", "loglik"):
        with pytest.raises(score.ScoringError, match=f"item '{sub.item_id.iloc[0]}'.*non-finite"):
            score.predict(lm, sub, imgs, methods=[method], engine="fast")
    lm = models.load("tiny-letters")
    many = sub.assign(options=[[f"o{i}" for i in range(15)]] * 2, answer_idx=0)  # 'O' is no token of theirs
    with pytest.raises(models.LetterTokenError, match="letter 'O' is not a single token"):
        score.predict(lm, many, imgs, methods=["letter"], engine="hf")
    with pytest.raises(models.LetterTokenError, match="letter 'O' is not a single token"):
        score.predict(lm, many, imgs, methods=["letter"], engine="fast")


def test_text_inputs_are_built_once_per_item_set(items, images, monkeypatch):
    from vlmrobust.forward import prepared

    lm = models.load("tiny-base")
    calls = []
    real = prepared.model_inputs
    monkeypatch.setattr(prepared, "model_inputs", lambda *a, **k: calls.append(1) or real(*a, **k))
    score.predict(lm, items, images, methods=["loglik"], engine="fast")
    n = len(calls)
    noisy = [corrupt.apply(im, "gaussian_noise", 2, seed=0, key="k") for im in images]
    score.predict(lm, items, noisy, methods=["loglik"], engine="fast")
    assert n > 0 and len(calls) == n
