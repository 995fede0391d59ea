"""The zoo: its one reader/writer (``vlmrobust.models.zoo``) and the organisms shipped in ``vlmrobust/zoo``."""

from __future__ import annotations

import json
import logging

import numpy as np
import pytest
import torch

from vlmrobust import models, schema
from vlmrobust.models import zoo
from vlmrobust.train.card import heldout_section, refresh_heldout
from vlmrobust.train.evaluate import heldout_items, score_items

torch.set_num_threads(1)

NAMES = zoo.names()
MB = 2**20


# ----------------------------------------------------------------------------- the module, on a fake zoo


@pytest.fixture
def fake_zoo(tmp_path, monkeypatch):
    for name, role in (("a", "evaluated"), ("b", "selector"), ("c", None), ("d", "ladder")):
        (tmp_path / name).mkdir()
        (tmp_path / name / "config.json").write_text("{}")
        if role:
            (tmp_path / name / "vlmrobust.json").write_text(json.dumps({"answer_format": "letters", "role": role}))
    (tmp_path / "not-a-model").mkdir()
    monkeypatch.setattr(zoo, "root", lambda: tmp_path)
    return tmp_path


def test_names_filter_by_role(fake_zoo):
    assert zoo.names() == ["a", "b", "c", "d"]
    assert zoo.names("evaluated") == ["a", "c"]  # no declared role counts as evaluated
    assert zoo.names("selector") == ["b"]
    assert zoo.names(["selector", "ladder"]) == ["b", "d"]
    assert zoo.role("c") == "evaluated" and zoo.role("d") == "ladder"
    with pytest.raises(ValueError, match="roles are"):
        zoo.names("judge")
    with pytest.raises(KeyError, match="organisms are"):
        zoo.folder("not-a-model")


def test_front_matter_and_card_round_trip(fake_zoo):
    zoo.write_card(fake_zoo / "a", {"role": "evaluated", "heldout_accuracy": {"clean": 0.5}}, "# a\n\nbody\n")
    front, body = zoo.card("a")
    assert front == {"role": "evaluated", "heldout_accuracy": {"clean": 0.5}}
    assert body.startswith("# a") and "body" in body
    assert zoo.front_matter("no front matter") == ({}, "no front matter")
    with pytest.raises(ValueError, match="mapping"):
        zoo.front_matter("---\n- a list\n---\n")


def test_refresh_heldout_replaces_only_that_section(fake_zoo):
    summary = {"n": 4, "seed": 9, "accuracy": {"clean": 0.5, "fog@5": 0.25},
               "per_family": {"clean": {"colour": 0.5}, "fog@5": {"colour": 0.25}}, "confidence_gap": 0.1}
    body = "# a\n\nintro\n\n## Training\n\nsteps\n\n" + heldout_section(summary) + "\n## Config\n\n```yaml\nx: 1\n```\n"
    zoo.write_card(fake_zoo / "a", {"role": "evaluated", "heldout_accuracy": summary["accuracy"]}, body)
    new = {**summary, "accuracy": {"clean": 0.75, "fog@5": 0.5},
           "per_family": {"clean": {"colour": 0.75}, "fog@5": {"colour": 0.5}}}
    refresh_heldout("a", new, eval_command="cmd")
    front, text = zoo.card("a")
    assert front["heldout_accuracy"] == {"clean": 0.75, "fog@5": 0.5}
    assert text.count("## Held-out accuracy") == 1 and "| clean | 0.750 |" in text and "0.500 |" in text
    assert "| clean | 0.500 |" not in text
    assert "## Training\n\nsteps" in text and text.rstrip().endswith("```") and "x: 1" in text
    assert "Measured with `cmd`." in text


def test_find_digest_prefers_the_named_folder(fake_zoo):
    for n in ("a", "b"):
        (fake_zoo / n / "model.safetensors").write_bytes(b"w")
        (fake_zoo / n / "vlmrobust.json").write_text(json.dumps({"answer_format": "letters", "role": "evaluated",
                                                                "config_digest": "abc"}))
    assert zoo.find_digest("abc") == fake_zoo / "a"
    assert zoo.find_digest("abc", prefer="b") == fake_zoo / "b"
    assert zoo.find_digest("zzz") is None


def test_folder_revision_follows_content_and_is_remembered(tmp_path, monkeypatch):
    (tmp_path / "config.json").write_text("{}")
    (tmp_path / "model.safetensors").write_bytes(b"1234")
    first = zoo.folder_revision(tmp_path)
    reads = []
    real = type(tmp_path).read_bytes
    monkeypatch.setattr(type(tmp_path), "read_bytes", lambda self: reads.append(self.name) or real(self))
    assert zoo.folder_revision(tmp_path) == first and reads == []  # unchanged files: not read again
    (tmp_path / "model.safetensors").write_bytes(b"12345")
    assert zoo.folder_revision(tmp_path) != first and "model.safetensors" in reads


def test_write_folder_checks_the_metadata(tmp_path):
    with pytest.raises(ValueError, match="answer_format"):
        zoo.write_folder(tmp_path, None, None, {"answer_format": "words", "role": "evaluated"})
    with pytest.raises(ValueError, match="role"):
        zoo.write_folder(tmp_path, None, None, {"answer_format": "text", "role": "judge"})


# ----------------------------------------------------------------------------- the shipped organisms


def test_zoo_is_populated_and_small():
    roles = [zoo.role(n) for n in NAMES]
    assert set(roles) <= set(schema.ROLES)
    assert roles.count("evaluated") >= 4 and roles.count("selector") >= 3, roles
    for n in NAMES:
        assert 0 < zoo.size_bytes(n, "*.safetensors") <= 8 * MB, n
    assert sum(zoo.size_bytes(n) for n in NAMES) < 64 * MB


def test_the_trainer_builds_every_organisms_own_vocabulary():
    """A fine-tune from shipped weights reads them with the trainer's tokenizer: word ids must not move
    (a template added for real models once added words and re-numbered the vocabulary)."""
    from transformers import AutoTokenizer

    from vlmrobust.train.config import load_config
    from vlmrobust.train.trainer import organism_tokenizer

    for n in NAMES:
        extra = load_config(zoo.meta(n)["config"]).model.extra_tokens
        assert organism_tokenizer(extra).get_vocab() == AutoTokenizer.from_pretrained(zoo.folder(n)).get_vocab(), n


@pytest.mark.parametrize("name", NAMES)
def test_loads_offline_through_auto_classes_without_missing_weights(name, monkeypatch, caplog):
    from transformers import AutoModelForImageTextToText, AutoProcessor

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    folder = zoo.folder(name)
    with caplog.at_level(logging.WARNING):
        proc = AutoProcessor.from_pretrained(folder)
        model, info = AutoModelForImageTextToText.from_pretrained(folder, output_loading_info=True)
    assert not any(info[k] for k in ("missing_keys", "unexpected_keys", "mismatched_keys")), info
    assert not [r for r in caplog.records
                if "newly initialized" in r.getMessage() or "missing" in r.getMessage().lower()]
    assert type(model).__name__ == "LlavaForConditionalGeneration"
    prompt = models.build_prompt(proc, "What colour is the object inside the red box?",
                                 ["red", "blue", "green", "yellow", "purple"])
    ids = models.letter_token_ids(proc.tokenizer, prompt, 5)  # raises unless each letter is one token
    assert len(set(ids)) == 5
    front, body = zoo.card(name)
    fmt = zoo.answer_format(name)
    assert fmt == front["answer_format"] and zoo.meta(name)["role"] == front["role"]
    if zoo.role(name) == "evaluated" and fmt != "letters":
        # allowed only as the documented fallback: the card says why it answers with text
        assert "did not bind" in body, name


@pytest.fixture(scope="module")
def heldout():
    return heldout_items(1000)  # the cards' held-out set (python -m vlmrobust.train.evaluate --n 1000)


@pytest.mark.parametrize("name", NAMES)
def test_card_accuracy_is_what_the_scoring_engine_measures(name, heldout):
    """The card's clean held-out accuracy is score.predict's on the same items, to the card's 4 decimals."""
    df, images = heldout
    lm = models.load(name)
    scores = score_items(lm.model, lm.processor, df, images, lm.answer_format, batch=32, name=name)
    front, body = zoo.card(name)
    assert len(scores) == len(df) and f"{len(df)} synthetic items" in body
    assert round(float(scores["correct"].mean()), 4) == front["heldout_accuracy"]["clean"], name
    chance = float(np.mean(1.0 / scores["K"]))
    if zoo.role(name) == "evaluated":  # evaluated organisms read the image
        assert scores["correct"].mean() > chance + 0.05, name
    assert np.allclose([sum(p) for p in scores["probs"]], 1.0, atol=1e-9)
