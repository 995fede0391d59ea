"""Probes: vision-token positions and grids, per-layer states, and states read off the scoring forward."""

from __future__ import annotations

import inspect

import numpy as np
import pandas as pd
import pytest
import torch
import twins

from vlmrobust import models, probes, score
from vlmrobust.forward import capture, forward, layout, model_inputs

torch.set_num_threads(1)

TWINS = ("tiny_llava", "tiny_qwen2_vl", "tiny_idefics3", "tiny_llava_onevision", "tiny_gemma3")
ITEMS = pd.DataFrame({
    "item_id": ["c0", "v0", "s0"],
    "task": ["colour", "verify", "shape"],
    "category": ["attr", "binary", "attr"],
    "question": ["What colour is the object?", "Is there a red circle?", "Which shape is this?"],
    "options": [["red", "green", "blue", "yellow"], ["yes", "no"], ["red square", "green circle", "blue star"]],
    "answer_idx": [0, 0, 2],
})


def _images(seed: int = 0) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [rng.integers(0, 256, shape, dtype=np.uint8) for shape in ((40, 56, 3), (48, 48, 3), (64, 40, 3))]


def _lm(arch: str) -> models.LoadedModel:
    model, proc = getattr(twins, arch)()
    return models.LoadedModel(model, proc, proc.tokenizer, "letters", arch, None, name=arch)


@pytest.fixture(scope="module", params=TWINS)
def twin(request):
    return _lm(request.param)


@pytest.fixture(scope="module")
def organism():
    return models.load(models.zoo.names("evaluated")[0])


def _full(hs, layer):
    return hs.float().clone()


def _image_features(lm, inputs) -> torch.Tensor:
    sig = inspect.signature(lm.model.model.get_image_features).parameters
    with torch.inference_mode():
        f = lm.model.model.get_image_features(**{k: v for k, v in inputs.items() if k in sig})
    f = f.pooler_output if hasattr(f, "pooler_output") else f
    parts = list(f) if isinstance(f, (list, tuple)) else [f]
    return torch.cat([p.reshape(-1, p.shape[-1]) for p in parts]).float()


def _expected_grid(lm, inputs) -> tuple[int, int]:
    """The grid shape as each processor states it."""
    kind = lm.model.config.model_type
    if kind == "qwen2_vl":
        t, h, w = inputs["image_grid_thw"][0].tolist()
        m = lm.processor.image_processor.merge_size
        return h // m, w // m
    if kind == "idefics3":
        s = int(round(lm.processor.image_seq_len ** 0.5))
        return s, s
    if kind == "llava_onevision":
        s = int(round(lm.processor.num_image_tokens ** 0.5))
        return s, s
    if kind == "gemma3":
        s = int(round(lm.processor.image_seq_length ** 0.5))
        return s, s
    patch = lm.processor.patch_size
    return inputs["pixel_values"].shape[-2] // patch, inputs["pixel_values"].shape[-1] // patch


def _check_layout(lm):
    prompt = models.build_prompt(lm.processor, ITEMS.question[0], ITEMS.options[0])
    for img in _images():
        inputs = model_inputs(lm, [prompt], [img])
        lay = layout.vision_layout(lm, inputs)
        ids = inputs["input_ids"][0].numpy()
        np.testing.assert_array_equal(lay.positions[0], np.flatnonzero(ids == layout.image_token_id(lm)))
        assert lay.shape[0] == _expected_grid(lm, inputs)
        assert set(lay.grid[0]) <= set(lay.positions[0]) and len(lay.grid[0]) == lay.shape[0][0] * lay.shape[0][1]
        # the decoder's input at exactly these positions is what the vision tower and projector produced
        feats = _image_features(lm, inputs)
        with capture.Recorder(lm) as rec:
            _, outs = rec.run(_full, lambda inputs=inputs: forward(lm, inputs))
        layer0 = outs[0][0]
        assert feats.shape[0] == len(lay.positions[0])
        torch.testing.assert_close(layer0[lay.positions[0]], feats, atol=1e-5, rtol=1e-5)
        others = np.setdiff1d(np.arange(len(ids)), lay.positions[0])
        emb = lm.model.get_input_embeddings()(inputs["input_ids"][0, others]).float()
        if lm.model.config.model_type != "gemma3":  # Gemma scales text embeddings inside its own embedding
            torch.testing.assert_close(layer0[others], emb.detach(), atol=1e-6, rtol=0)


def test_vision_positions_and_grid_shapes_match_the_processor_on_the_twins(twin):
    _check_layout(twin)


@pytest.mark.parametrize("name", models.zoo.names())
def test_vision_positions_and_grid_shapes_match_the_processor_on_the_organisms(name):
    lm = models.load(name)
    _check_layout(lm)
    inputs = model_inputs(lm, [models.build_prompt(lm.processor, "What colour is it?", ["red", "blue"])],
                          [np.zeros((64, 64, 3), np.uint8)])
    lay = layout.vision_layout(lm, inputs)
    side = lm.model.config.vision_config.image_size // lm.model.config.vision_config.patch_size
    assert lay.shape == ((side, side),) and lay.block == "single view"


def test_post_norm_final_state_is_hidden_states_minus_one_and_layers_are_pre_norm(twin):
    lm = twin
    prompt = models.build_prompt(lm.processor, ITEMS.question[0], ITEMS.options[0])
    inputs = model_inputs(lm, [prompt], [_images()[0]])
    with capture.Recorder(lm) as rec:
        out, states = rec.run(_full, lambda: lm.model(**inputs, output_hidden_states=True))
    hs = out.hidden_states
    n = rec.n_layers
    assert len(states) == n + 2 and len(hs) == n + 1
    for layer in range(n):  # hidden_states[0..L-1]: the embeddings and the pre-norm outputs of layers 1..L-1
        torch.testing.assert_close(states[layer], hs[layer].float(), atol=1e-6, rtol=0)
    torch.testing.assert_close(states[n + 1], hs[-1].float(), atol=1e-6, rtol=0)
    _, norm = layout.decoder_parts(lm.model)
    with torch.inference_mode():
        torch.testing.assert_close(norm(states[n]), hs[-1].float(), atol=1e-5, rtol=1e-5)
    assert not torch.allclose(states[n], hs[-1].float())  # the last pre-norm state is not the returned one


def test_hidden_scoring_keeps_the_table_and_leaves_no_hooks(twin):
    lm = twin
    imgs = _images()
    layers, norm = layout.decoder_parts(lm.model)

    def hooks():  # transformers installs its own output-recording hooks once: count ours by difference
        return len(norm._forward_hooks) + sum(len(m._forward_hooks) + len(m._forward_pre_hooks) for m in layers)

    before = hooks()
    plain = score.predict(lm, ITEMS, imgs, methods=["letter", "loglik"], batch_size=2)
    table, hidden = score.predict(lm, ITEMS, imgs, methods=["letter", "loglik"], batch_size=2, hidden=True)
    pd.testing.assert_frame_equal(plain.drop(columns=["logits", "probs", "margin", "confidence", "token_prob"]),
                                  table.drop(columns=["logits", "probs", "margin", "confidence", "token_prob"]))
    for a, b in zip(plain.logits, table.logits, strict=True):
        np.testing.assert_allclose(a, b, atol=1e-4)
    assert hooks() == before
    n = len(layers) + 2
    for m in ("letter", "loglik"):
        for h in hidden[m]:
            assert h["ctx"].shape[0] == h["ans"].shape[0] == h["vision_mean"].shape[0] == n
            assert h["energy"].shape == (n,) and (h["energy"] >= 0).all()


def test_batched_probe_states_equal_one_item_at_a_time(twin):
    """Left padding, the cached continuation and M-RoPE positions give the same states as one unpadded item."""
    lm = twin
    imgs = _images()
    _, batched = score.predict(lm, ITEMS, imgs, methods=["letter", "loglik"], batch_size=3, hidden=True)
    for i in range(len(ITEMS)):
        _, one = score.predict(lm, ITEMS.iloc[[i]], [imgs[i]], methods=["letter", "loglik"], batch_size=1,
                               hidden=True)
        for m in ("letter", "loglik"):
            for key in ("ctx", "ans", "vision_mean"):
                np.testing.assert_allclose(batched[m][i][key], one[m][0][key], atol=2e-4, rtol=1e-4)
            np.testing.assert_allclose(batched[m][i]["energy"], one[m][0]["energy"], rtol=1e-4)


def test_teacher_forced_answer_state_is_the_state_of_the_appended_option(organism):
    """ans_mcq equals the final state at the chosen option's tokens of one full forward of prompt + option."""
    lm = organism
    imgs = [np.asarray(im) for im in _images()]
    imgs = [np.resize(im, (64, 64, 3)).astype(np.uint8) for im in imgs]
    for method in ("letter", "loglik"):
        table, hidden = score.predict(lm, ITEMS, imgs, methods=[method], hidden=True)
        for i, r in ITEMS.iterrows():
            prompt = models.build_prompt(lm.processor, r.question, list(r.options))
            k = int(table.pred_idx[i])
            if method == "letter":
                toks = models.letter_token_ids(lm.tokenizer, prompt, len(r.options))[k:k + 1]
            else:
                toks = models.continuation_ids(lm.tokenizer, prompt, r.options[k])
            inputs = model_inputs(lm, [prompt], [imgs[i]])
            ext = dict(inputs)
            ext["input_ids"] = torch.cat([inputs["input_ids"], torch.tensor([toks])], 1)
            ext["attention_mask"] = torch.ones_like(ext["input_ids"])
            with torch.inference_mode():
                out = lm.model(**ext, output_hidden_states=True)
            want = out.hidden_states[-1][0, -len(toks):].mean(0).numpy()
            np.testing.assert_allclose(hidden[method][i]["ans"][-1], want, atol=1e-4)
            np.testing.assert_allclose(hidden[method][i]["ctx"][-1], out.hidden_states[-1][0, -len(toks) - 1].numpy(),
                                       atol=1e-4)


def test_greedy_states_decode_the_same_text_as_the_scoring_engine(organism):
    lm = organism
    imgs = [np.resize(im, (64, 64, 3)).astype(np.uint8) for im in _images(1)]
    prompts = [models.build_prompt(lm.processor, q, list(o), probes.PROBE_TEMPLATES["open"])
               for q, o in zip(ITEMS.question, ITEMS.options, strict=True)]
    got = probes.greedy_states(lm, list(ITEMS.item_id), prompts, imgs, batch_size=3, max_new_tokens=4)
    want = score.greedy_texts(lm, list(ITEMS.item_id), prompts, imgs, max_new_tokens=4)
    assert [g["text"] for g in got] == want
    for g in got:
        assert g["ctx"].shape == g["ans"].shape
        assert (g["n_tokens"] == 0) == bool(np.isnan(g["ans"]).all())


def test_probe_condition_returns_every_regime(organism):
    lm = organism
    imgs = [np.resize(im, (64, 64, 3)).astype(np.uint8) for im in _images(2)]
    method = models.default_method(lm.answer_format)
    pred, states = probes.probe_condition(lm, ITEMS, imgs, method=method, template="vlmrobust",
                                          spec=probes.ProbeSpec(max_new_tokens=3))
    plain = score.predict(lm, ITEMS, imgs, methods=[method], template="vlmrobust")  # scored on its own
    assert len(pred) == len(states) == len(ITEMS)
    assert pred.pred_idx.tolist() == plain.pred_idx.tolist()
    for st, want, opts in zip(states, plain.pred_idx, ITEMS.options, strict=True):
        assert set(st) == set(probes.REGIMES) | set(probes.VISION_PROBES)
        assert st["vision_grid"]["shape"] == (8, 8)
        for regime in probes.SCORING_REGIMES + probes.VISION_PROBES:  # read off the scoring forward
            assert st[regime]["pred"] == want, regime
        for regime in ("ctx_open", "ans_open", "ans_mcq_free"):  # the generated answer, parsed back
            parsed = score.parse_answer(st[regime]["text"], list(opts), lm.answer_format)
            assert st[regime]["pred"] == (-1 if parsed is None else parsed), regime
    with pytest.raises(ValueError, match="free_template"):
        probes.ProbeSpec(free_template="nope").validate()


#: Every item's options run over several tokens: log-likelihood scoring runs one forward per item, whose
#: caches the probe step joins into batches.
MULTI = ITEMS.assign(item_id=["m0", "m1", "m2"], answer_idx=[0, 1, 0],
                     options=[["red square", "green circle"], ["blue star", "yellow circle", "red star"],
                              ["green square", "blue circle"]])


def _gemma3_wide() -> models.LoadedModel:
    """The Gemma 3 twin with a sliding window that holds its prompts (the twin's own window of 8 does not)."""
    import copy

    model, proc = twins.tiny_gemma3()
    cfg = copy.deepcopy(model.config)
    cfg.text_config.sliding_window = 512
    torch.manual_seed(0)
    return models.LoadedModel(type(model)(cfg).eval(), proc, proc.tokenizer, "letters", "gemma3_wide", None,
                              name="gemma3_wide")


def _check_shared_equals_own_prefill(lm, items, method, batch_size, *, shared=True):
    """The open and free-MCQ decodes continued from the scoring cache equal those from their own prefill."""
    imgs = [np.resize(im, (64, 64, 3)).astype(np.uint8) for im in _images(3)]
    spec = probes.ProbeSpec(max_new_tokens=4)
    kw = dict(method=method, template="vlmrobust", spec=spec, batch_size=batch_size)
    pred1, got = probes.probe_condition(lm, items, imgs, **kw)
    pred0, want = probes.probe_condition(lm, items, imgs, share_cache=False, **kw)
    pd.testing.assert_frame_equal(pred1, pred0)
    for g, w in zip(got, want, strict=True):
        for regime in ("ctx_open", "ans_open", "ans_mcq_free"):
            a, b = g[regime], w[regime]
            assert (a["text"], a["pred"], a["n_tokens"]) == (b["text"], b["pred"], b["n_tokens"]), regime
            np.testing.assert_allclose(a["state"], b["state"], atol=5e-5, rtol=1e-5, err_msg=regime)
            assert b["cached_prefix"] == 0
            assert (a["cached_prefix"] > 0) == shared, regime  # the sharing ran (or, as asked, did not)
        for regime in probes.SCORING_REGIMES + ("vision_mean",):
            np.testing.assert_array_equal(g[regime]["state"], w[regime]["state"])


@pytest.mark.parametrize("method", ["letter", "loglik"])
@pytest.mark.parametrize("batch_size", [1, 2, 3])
def test_decodes_continued_from_the_scoring_cache_equal_own_prefill_on_the_organisms(organism, method, batch_size):
    _check_shared_equals_own_prefill(organism, ITEMS, method, batch_size)
    if method == "loglik":
        _check_shared_equals_own_prefill(organism, MULTI, method, batch_size)


@pytest.mark.parametrize("method", ["letter", "loglik"])
def test_decodes_continued_from_the_scoring_cache_equal_own_prefill_on_the_twins(twin, method):
    """Left padding, M-RoPE (Qwen2-VL), tiled images (Idefics3, OneVision), bidirectional image attention
    (Gemma 3); the Gemma 3 twin's sliding window of 8 is shorter than its prompts, so it keeps its own prefill."""
    shared = twin.name != "tiny_gemma3"
    _check_shared_equals_own_prefill(twin, ITEMS, method, 2, shared=shared)
    if method == "loglik":
        _check_shared_equals_own_prefill(twin, MULTI, method, 2, shared=shared)


def test_decodes_continued_from_the_scoring_cache_through_sliding_window_layers(monkeypatch):
    lm = _gemma3_wide()
    for method in ("letter", "loglik"):
        for batch_size in (1, 3):
            _check_shared_equals_own_prefill(lm, ITEMS, method, batch_size)
    joined = []
    merge = capture.merge_cached
    monkeypatch.setattr(capture, "merge_cached", lambda parts: joined.append(len(parts)) or merge(parts))
    for model in (lm, _lm("tiny_llava")):
        _check_shared_equals_own_prefill(model, MULTI, "loglik", 2)
    assert joined == [2, 2]  # per model, the per-item caches of two items were joined into one batch


def test_an_item_whose_scoring_tokens_are_not_as_expected_keeps_its_own_prefill(organism, monkeypatch):
    """A scoring row that does not end with the tokens the tokenizer gives (here: planted for item v0)
    sends that item's free-MCQ prompt to its own prefill; the rest still continue from the cache."""
    from vlmrobust.probes import regimes

    suffixes = regimes._suffixes

    def planted(lm, scoring, targets):
        out = suffixes(lm, scoring, targets)
        dropped, tail = out["free"][1]
        out["free"][1] = ([dropped[0] + 1] + dropped[1:], tail)
        return out

    monkeypatch.setattr(regimes, "_suffixes", planted)
    imgs = [np.resize(im, (64, 64, 3)).astype(np.uint8) for im in _images(3)]
    kw = dict(method="letter", template="vlmrobust", spec=probes.ProbeSpec(max_new_tokens=4), batch_size=3)
    _, got = probes.probe_condition(organism, ITEMS, imgs, **kw)
    _, want = probes.probe_condition(organism, ITEMS, imgs, share_cache=False, **kw)
    assert [g["ans_mcq_free"]["cached_prefix"] > 0 for g in got] == [True, False, True]
    assert all(g["ans_open"]["cached_prefix"] > 0 for g in got)
    for g, w in zip(got, want, strict=True):
        for regime in ("ans_open", "ans_mcq_free"):
            assert g[regime]["text"] == w[regime]["text"]
            np.testing.assert_allclose(g[regime]["state"], w[regime]["state"], atol=5e-5, rtol=1e-5)
