"""Blind twins (``blind:NAME``): an organism shown one grey image whatever the condition, the null model that
cannot see."""
from __future__ import annotations

import numpy as np
import pytest
import torch
from PIL import Image

from vlmrobust import sweep, synth
from vlmrobust.models import zoo
from vlmrobust.models.loading import BLIND_GREY, blind_image, load
from vlmrobust.params import ParameterError

torch.set_num_threads(1)


def test_resolve_models_names_blind_twins():
    assert sweep.resolve_models(["blind:tiny-base"]) == ["blind:tiny-base"]
    assert sweep.resolve_models(["blind:role:evaluated"]) == ["blind:" + n for n in zoo.names("evaluated")]
    for bad in ("blind:no-such-organism", "blind:role:nobody", "blind:"):
        with pytest.raises(ParameterError, match="blind twin needs a zoo organism"):
            sweep.resolve_models([bad])


def test_blind_image_is_constant_of_the_same_size_and_mode():
    img = Image.fromarray(np.random.default_rng(0).integers(0, 255, (20, 30, 3), dtype=np.uint8))
    g = blind_image(img)
    assert g.size == img.size and g.mode == img.mode
    assert (np.asarray(g) == BLIND_GREY).all()
    assert (blind_image(np.zeros((4, 5), np.uint8)) == BLIND_GREY).all()


def test_a_blind_twin_answers_the_same_under_every_condition(tmp_path):
    lm = load("blind:tiny-aug")
    assert lm.blind and lm.name == "blind:tiny-aug" and lm.settings["blind"] == BLIND_GREY
    items = synth.generate(1, seed=3, families=["colour", "shape", "count"])
    spec = sweep.SweepSpec(models=["tiny-aug", "blind:tiny-aug"], items=items,
                           conditions={"gaussian_noise": [5], "contrast": [3]}, torch_threads=1)
    t = sweep.run_sweep(spec, tmp_path, progress=False).table
    blind = t[t.model == "blind:tiny-aug"]
    assert len(blind) == len(items) * 3
    probs = np.stack(blind.sort_values(["item_id", "perturbation"]).probs.to_numpy())
    per_item = probs.reshape(len(items), 3, -1)
    assert np.allclose(per_item, per_item[:, :1], atol=1e-6)  # the condition cannot reach a blind model
    seeing = t[t.model == "tiny-aug"].sort_values(["item_id", "perturbation"])
    assert not np.allclose(np.stack(seeing.probs.to_numpy()).reshape(len(items), 3, -1)[:, 0],
                           per_item[:, 0], atol=1e-3)  # ... while the organism itself sees the image
