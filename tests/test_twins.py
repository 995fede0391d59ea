"""Tests of vlmrobust.dry.twins: every twin saves, loads offline, scores, and has the real image-token layout.

Each VLM twin is built once for the module (a module-scoped fixture per twin),
saved, and loaded back through ``models.load``.
"""

from __future__ import annotations

import inspect
import json

import numpy as np
import pandas as pd
import pytest
import torch
import yaml
from safetensors.torch import load_file

from vlmrobust import depth, models, paths, score, synth
from vlmrobust.analysis.selection.embed import image_embeddings
from vlmrobust.dry import twins

VLMS = [n for n, k in twins.KINDS.items() if k == "vlm"]

def _items():
    """Two synthetic items with images of different sizes (64 and 48 px), so batches are padded."""
    a = synth.generate(1, 0, families=["colour"], size=64)
    b = synth.generate(1, 0, families=["verify"], size=48)
    items = pd.concat([a, b], ignore_index=True)
    return items, [synth.render(r)[0] for r in items.image_ref]


@pytest.fixture(scope="module", params=VLMS)
def twin(request, tmp_path_factory):
    """``(name, folder, LoadedModel)`` for one VLM twin, built and saved once."""
    name = request.param
    folder = twins.build(name, tmp_path_factory.mktemp(name))
    lm = models.load(folder)
    return name, folder, lm


def _image_token_id(model) -> int:
    return next(v for k in ("image_token_id", "image_token_index")
                if isinstance(v := getattr(model.config, k, None), int))


def _inputs(lm, image):
    prompt = models.build_prompt(lm.processor, "What colour is the object?", ["red", "green", "blue"])
    return lm.processor(images=[[image]], text=[prompt], add_special_tokens=False, return_tensors="pt")


def test_the_saved_twin_loads_offline_as_its_architecture(twin):
    name, folder, _ = twin
    meta = json.loads((folder / "vlmrobust.json").read_text())
    lm = models.load(folder)
    assert type(lm.model).__name__ == meta["architecture"] == json.loads(
        (folder / "config.json").read_text())["architectures"][0]
    assert lm.answer_format == "letters" and lm.source == "path" and lm.revision.startswith("sha256:")
    assert type(lm.processor).__name__ == json.loads((folder / "processor_config.json").read_text())["processor_class"]


def test_letter_and_option_loglik_scores_are_finite_on_two_synthetic_items(twin):
    _, _, lm = twin
    items, images = _items()
    df = score.predict(lm, items, images, methods=["letter", "loglik"], batch_size=2)
    assert len(df) == 4 and set(df.method) == {"letter", "loglik"}
    for _, r in df.iterrows():
        z, p = np.asarray(r.logits, float), np.asarray(r.probs, float)
        assert len(z) == len(p) == r.K == len(items.set_index("item_id").options[r.item_id])
        assert np.isfinite(z).all() and abs(p.sum() - 1) < 1e-9


def test_the_processor_writes_one_image_token_per_image_feature_and_the_answer_sees_the_image(twin):
    _, _, lm = twin
    rng = np.random.default_rng(1)
    images = [rng.integers(0, 256, (40, 96, 3), dtype=np.uint8), rng.integers(0, 256, (40, 96, 3), dtype=np.uint8)]
    inp = _inputs(lm, images[0])
    n_tokens = int((inp["input_ids"] == _image_token_id(lm.model)).sum())
    accepted = inspect.signature(lm.model.get_image_features).parameters
    with torch.no_grad():
        out = lm.model.get_image_features(**{k: v for k, v in inp.items() if k in accepted})
    feats = out.pooler_output if hasattr(out, "pooler_output") else out
    feats = [feats] if torch.is_tensor(feats) else list(feats)
    width = lm.model.config.get_text_config().hidden_size
    assert n_tokens > 0 and sum(f.numel() for f in feats) == n_tokens * width
    with torch.no_grad():
        z = [lm.model(**_inputs(lm, im)).logits[0, -1] for im in images]
    assert torch.isfinite(z[0]).all() and float((z[0] - z[1]).abs().max()) > 1e-6  # no twin is blind


def test_qwen3_vl_adds_its_deepstack_features_after_decoder_layer_0_outside_the_layer_outputs(tmp_path):
    lm = models.load(twins.build("qwen3_vl", tmp_path / "q3"))
    assert list(lm.model.config.vision_config.deepstack_visual_indexes) == [0]
    inp = _inputs(lm, np.random.default_rng(2).integers(0, 256, (48, 48, 3), dtype=np.uint8))
    layers = lm.model.model.language_model.layers
    seen = {}
    hooks = [layers[0].register_forward_hook(lambda m, a, o: seen.__setitem__("out0", o)),
             layers[1].register_forward_pre_hook(
                 lambda m, a, kw: seen.__setitem__("in1", (a or (kw["hidden_states"],))[0]), with_kwargs=True)]
    try:
        with torch.no_grad():
            hs = lm.model(**inp, output_hidden_states=True).hidden_states
            feats = lm.model.model.get_image_features(inp["pixel_values"], inp["image_grid_thw"])
    finally:
        for h in hooks:
            h.remove()
    mask = inp["input_ids"] == _image_token_id(lm.model)
    deep = torch.cat(list(feats.deepstack_features[0]))
    out0, in1 = seen["out0"], seen["in1"]
    assert torch.allclose(in1[mask] - out0[mask], deep, atol=1e-5) and deep.abs().max() > 1e-3
    assert torch.equal(in1[~mask], out0[~mask])
    assert torch.equal(hs[1], out0)  # output_hidden_states records layer 0's output before the addition


def test_the_recorder_sees_qwen3_vl_deepstack_features_where_they_are_added(tmp_path):
    """Every recorded row l = 1..L is the state layer l + 1 (or the final norm) reads, deepstack included."""
    from vlmrobust.forward import layout
    from vlmrobust.forward.capture import Recorder

    lm = models.load(twins.build("qwen3_vl", tmp_path / "q3"))
    inp = _inputs(lm, np.random.default_rng(2).integers(0, 256, (48, 48, 3), dtype=np.uint8))
    layers, norm = layout.decoder_parts(lm.model)
    reads = {}
    hooks = [m.register_forward_pre_hook(lambda m, a, kw, i=i: reads.__setitem__(i, (a or (kw["hidden_states"],))[0]),
                                         with_kwargs=True) for i, m in enumerate([*layers[1:], norm], start=1)]
    try:
        with Recorder(lm) as rec, torch.no_grad():
            res, rows = rec.run(lambda hs, layer: hs.clone(), lambda: lm.model(**inp, output_hidden_states=True))
    finally:
        for h in hooks:
            h.remove()
    assert len(rows) == len(layers) + 2 and "_deepstack_process" not in vars(layout.decoder(lm.model))
    for i in range(1, len(layers) + 1):
        assert torch.equal(rows[i], reads[i]), i
    mask = inp["input_ids"] == _image_token_id(lm.model)
    assert not torch.allclose(rows[1][mask], res.hidden_states[1][mask])  # the hidden states miss the addition
    assert torch.equal(rows[-1], res.hidden_states[-1])  # the final post-norm row is the one transformers returns


def test_dinov2_twin_gives_embeddings_through_the_selection_embed_code(tmp_path):
    folder = twins.build("dinov2", tmp_path / "dino")
    meta = json.loads((folder / "vlmrobust.json").read_text())
    assert meta["architecture"] == "Dinov2Model" and "answer_format" not in meta
    rng = np.random.default_rng(3)
    images = [rng.integers(0, 256, (40 + 8 * i, 48, 3), dtype=np.uint8) for i in range(3)]
    emb = image_embeddings(images, str(folder))
    assert emb.shape == (3, 32) and np.isfinite(emb).all()
    assert np.abs(emb[0] - emb[1]).max() > 1e-6


def test_depth_twin_gives_a_finite_positive_metric_depth_map_through_the_pipeline_provider(tmp_path):
    folder = twins.build("depth_anything_metric", tmp_path / "depth")
    cfg = json.loads((folder / "config.json").read_text())
    assert cfg["depth_estimation_type"] == "metric" and cfg["max_depth"] == 80
    image = np.random.default_rng(4).integers(0, 256, (40, 56, 3), dtype=np.uint8)
    d = depth.make_provider("pipeline", model=str(folder))(image)
    assert d.shape == (40, 56) and np.isfinite(d).all() and (d > 0).all()
    planar = depth.ray_to_planar(d, depth.focal_from_fov(56, depth.DEFAULT_FOV_DEG))
    assert planar.max() <= 80 + 1e-3  # the metric head: sigmoid x max_depth


def _paper_hub_ids() -> dict[str, str]:
    """Hub id -> the parameter naming it, over every params/*/paper.yaml."""
    found = {}
    for path in sorted(paths.params_dir().glob("*/paper.yaml")):
        variant = yaml.safe_load(path.read_text()) or {}
        for key in ("models", "selectors", "ladder", "image_encoder", "depth_model"):
            values = variant.get(key, [])
            for v in [values] if isinstance(values, str) else values:
                if "/" in v and not v.startswith(("data/", "~", ".", "/")):
                    found[v] = key
    return found


def test_hub_architectures_name_a_twin_of_the_right_kind_for_every_hub_id_of_the_paper_variants():
    found = _paper_hub_ids()
    assert set(found) == set(twins.HUB_ARCHITECTURES)
    kind = {"image_encoder": "image_encoder", "depth_model": "depth"}
    for hub_id, key in found.items():
        assert twins.KINDS[twins.HUB_ARCHITECTURES[hub_id]] == kind.get(key, "vlm"), hub_id
    assert set(twins.BUILDERS) == set(twins.ARCHITECTURES) == set(twins.KINDS)
    assert set(models.REMOTE_CODE) & set(found) == {"vikhyatk/moondream2", "AIDC-AI/Ovis2-1B"}


def test_build_is_seeded_without_touching_the_global_generator(tmp_path):
    state = torch.get_rng_state()
    a, b, c = (twins.build("llava", tmp_path / n, seed=s) for n, s in (("a", 0), ("b", 0), ("c", 1)))
    assert torch.equal(state, torch.get_rng_state())
    wa, wb, wc = (load_file(f / "model.safetensors") for f in (a, b, c))
    assert all(torch.equal(wa[k], wb[k]) for k in wa) and any(not torch.equal(wa[k], wc[k]) for k in wa)
    meta = json.loads((a / "vlmrobust.json").read_text())
    assert meta["answer_format"] == models.zoo.answer_format(a) == "letters"
    assert meta["architecture"] == "LlavaForConditionalGeneration" and meta["seed"] == 0
    with pytest.raises(ValueError, match="unknown twin 'llama'.*qwen3_vl"):
        twins.build("llama", tmp_path / "x")


def test_build_gives_weights_to_the_projection_gemma_3_initialises_to_zero(tmp_path):
    model, _ = twins.tiny_gemma3()
    assert not model.model.multi_modal_projector.mm_input_projection_weight.any()
    meta = json.loads((twins.build("gemma3", tmp_path / "g3") / "vlmrobust.json").read_text())
    assert meta["filled_zero_weights"] == ["model.multi_modal_projector.mm_input_projection_weight"]
