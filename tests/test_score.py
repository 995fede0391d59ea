"""Tests of vlmrobust.score on tiny random-weight twins of five VLM architectures."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
import torch
import twins

from vlmrobust import models, schema, score

torch.set_num_threads(1)

ARCHS = ("tiny_llava", "tiny_qwen2_vl", "tiny_idefics3", "tiny_llava_onevision", "tiny_gemma3")


def _items() -> pd.DataFrame:
    return pd.DataFrame({
        "item_id": ["c0", "c1", "s0", "v0", "x0"],
        "task": ["colour", "colour", "shape", "verify", "colour"],
        "category": ["attr", "attr", "attr", "binary", "attr"],
        "question": ["What colour is the object?", "What colour is the object?", "Which shape is this?",
                     "Is there a red circle?", "What colour is the object?"],
        "options": [["red", "green", "blue", "yellow"], ["blue", "red", "yellow", "green"],
                    ["red square", "green circle", "blue star", "yellow triangle"], ["yes", "no"],
                    ["red", "green", "blue", "I cannot tell, the image is too unclear to decide."]],
        "answer_idx": [0, 1, 2, 0, 0],
        "abstain_idx": [-1, -1, -1, -1, 3],
    })


def _images(n: int, seed: int = 0) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [rng.integers(0, 256, (40 + 8 * (i % 3), 48, 3), dtype=np.uint8) for i in range(n)]


@pytest.fixture(scope="module", params=ARCHS)
def lm(request):
    model, proc = getattr(twins, request.param)()
    return models.LoadedModel(model, proc, proc.tokenizer, "letters", request.param, "r0", name=request.param)


@pytest.fixture(scope="module")
def llava():
    model, proc = twins.tiny_llava()
    return models.LoadedModel(model, proc, proc.tokenizer, "letters", "tiny_llava", "r0", name="tiny_llava")


def test_every_method_on_every_architecture(lm):
    items, imgs = _items(), _images(5)
    df = score.predict(lm, items, imgs, methods=list(score.METHODS), n_samples=3, max_new_tokens=3, batch_size=3)
    assert list(df.columns) == list(schema.PRED_COLUMNS)
    assert len(df) == len(items) * len(score.METHODS)
    for _, r in df.iterrows():
        p = np.asarray(r.probs)
        assert len(p) == r.K == len(items.set_index("item_id").options[r.item_id])
        assert abs(p.sum() - 1) < 1e-9 and (p >= 0).all()
        assert r.pred_idx == int(np.flatnonzero(p == p.max())[0]) and r.confidence == p.max()
        assert r.correct == (r.pred_idx == r.answer_idx)
    samp = df[df.method == "sample"]
    assert samp.unparsed_rate.between(0, 1).all() and df[df.method != "sample"].unparsed_rate.isna().all()
    assert (df.perturbation == "clean").all() and (df.level == 0).all() and df.param.isna().all()


def test_shared_prefix_loglik_equals_one_forward_per_option(lm):
    items, imgs = _items(), _images(5)
    df = score.predict(lm, items, imgs, methods=["loglik", "loglik_norm"])
    for i, r in items.iterrows():
        prompt = models.build_prompt(lm.processor, r.question, r.options)
        ref = score.loglik_full_forward(lm, r.item_id, prompt, r.options, imgs[i])
        got = np.asarray(df[(df.item_id == r.item_id) & (df.method == "loglik")].logits.iloc[0])
        np.testing.assert_allclose(got, ref, atol=1e-5, rtol=0)
        n_tok = [len(models.continuation_ids(lm.tokenizer, prompt, " " + o if not prompt[-1].isspace() else o))
                 for o in r.options]
        norm = np.asarray(df[(df.item_id == r.item_id) & (df.method == "loglik_norm")].logits.iloc[0])
        np.testing.assert_allclose(norm, ref / np.asarray(n_tok), atol=1e-5, rtol=0)


def test_batched_letter_scores_equal_single_item_forward(lm):
    items, imgs = _items(), _images(5)
    batched = score.predict(lm, items, imgs, methods=["letter"], batch_size=5)
    for i, r in items.iterrows():
        prompt = models.build_prompt(lm.processor, r.question, r.options)
        inputs = lm.processor(images=[[imgs[i]]], text=[prompt], add_special_tokens=False, return_tensors="pt")
        with torch.inference_mode():
            logits = lm.model(**inputs).logits[0, -1].double().numpy()
        z = logits[models.letter_token_ids(lm.tokenizer, prompt, len(r.options))]
        got = batched[batched.item_id == r.item_id].iloc[0]
        np.testing.assert_allclose(got.logits, z, atol=1e-4, rtol=0)
        np.testing.assert_allclose(got.probs, np.exp(z - z.max()) / np.exp(z - z.max()).sum(), atol=1e-5)
        s = np.sort(z)[::-1]
        assert got.margin == pytest.approx(s[0] - s[1], abs=1e-4)


def _bias_head(lm, favour: dict[str, float], others: float = -30.0):
    """Replace the LM head by one whose logits are constant: log-weights on chosen tokens."""
    old = lm.model.lm_head
    head = torch.nn.Linear(old.in_features, old.out_features, bias=True)
    with torch.no_grad():
        head.weight.zero_()
        head.bias.fill_(others)
        for tok, val in favour.items():
            head.bias[lm.tokenizer.convert_tokens_to_ids(tok)] = val
    lm.model.lm_head = head
    return old


def test_sampling_frequencies_and_unparsed_share(llava):
    items, imgs = _items().iloc[:2], _images(2)
    old = _bias_head(llava, {"A": 0.0, "B": 0.0, "circle": 0.0, "</s>": -30.0})
    try:
        df = score.predict(llava, items, imgs, methods=["sample"], n_samples=300, max_new_tokens=1, seed=3)
        again = score.predict(llava, items, imgs, methods=["sample"], n_samples=300, max_new_tokens=1, seed=3)
        other = score.predict(llava, items, imgs, methods=["sample"], n_samples=300, max_new_tokens=1, seed=4)
    finally:
        llava.model.lm_head = old
    for _, r in df.iterrows():
        # A, B, "circle" equally likely: 1/3 unparsed, A and B ~ 1/2 of the parsed answers
        assert r.unparsed_rate == pytest.approx(1 / 3, abs=0.09)
        assert r.probs[0] == pytest.approx(0.5, abs=0.1) and r.probs[0] + r.probs[1] == pytest.approx(1.0)
        assert r.probs[2] == r.probs[3] == 0
    pd.testing.assert_frame_equal(df, again)
    assert not df.probs.equals(other.probs)


def test_abstain_option_and_summary(llava):
    items, imgs = _items(), _images(5)
    old = _bias_head(llava, {"D": 5.0, "B": 4.0})
    try:
        df = score.predict(llava, items, imgs, methods=["letter"])
    finally:
        llava.model.lm_head = old
    by = df.set_index("item_id")
    assert by.loc["x0", "abstained"] and by.loc["x0", "pred_idx"] == 3
    assert by.loc["v0", "pred_idx"] == 1 and not by.loc["v0", "abstained"]
    summ = score.summary(df)
    assert summ.abstain_rate.iloc[0] == pytest.approx(1 / 5)
    assert summ.accuracy.iloc[0] == pytest.approx(df.correct.mean())
    assert by.loc["c0", "margin"] == pytest.approx(1.0, abs=1e-6)


def test_verbal_confidence_rows(llava):
    items, imgs = _items().iloc[:2], _images(2)
    df = score.predict(llava, items, imgs, methods=["verbal"])
    assert (df.method == "verbal").all() and df.verbal_conf.isna().all()  # random weights never say it
    summ = score.summary(df)
    assert summ.verbal_parse_rate.iloc[0] == 0.0


@pytest.mark.parametrize("text, k, fmt, want", [
    ("B", 4, "letters", 1), ("B.", 4, "letters", 1), ("(C) blue", 4, "letters", 2), ("Answer: D", 4, "letters", 3),
    ("red", 4, "letters", 0), ("Green.", 4, "text", 1), ("the answer is blue", 4, "text", 2),
    ("E", 4, "letters", None), ("", 4, "letters", None), ("Brown", 4, "letters", None),
    ("yellow\nConfidence: 90", 4, "text", 3),
])
def test_parse_answer(text, k, fmt, want):
    assert score.parse_answer(text, ["red", "green", "blue", "yellow"][:k], fmt) == want


def test_parse_confidence():
    assert score.parse_confidence("A\nConfidence: 85") == pytest.approx(0.85)
    assert score.parse_confidence("confidence=120%") == 1.0
    assert math.isnan(score.parse_confidence("A"))


def test_nan_logits_name_the_item(llava):
    items, imgs = _items().iloc[:2], _images(2)
    old = llava.model.lm_head.weight.data.clone()
    llava.model.lm_head.weight.data[:] = float("nan")
    try:
        for method in ("letter", "loglik", "sample"):
            with pytest.raises(score.ScoringError, match="item 'c[01]'.*non-finite"):
                score.predict(llava, items, imgs, methods=[method], n_samples=2, max_new_tokens=2)
    finally:
        llava.model.lm_head.weight.data[:] = old


@pytest.mark.parametrize("bad, match", [
    (np.zeros((8, 8), np.uint8), "corrupt image"),
    (np.zeros((8, 8, 3), np.float32), "corrupt image"),
    (b"\x89PNG garbage", "corrupt image"),
    (np.zeros((0, 8, 3), np.uint8), "corrupt image"),
])
def test_corrupt_image_names_the_item(llava, bad, match):
    items, imgs = _items().iloc[:2], _images(2)
    imgs[1] = bad
    with pytest.raises(score.ScoringError, match=f"item 'c1': {match}"):
        score.predict(llava, items, imgs)


def test_empty_option_list_names_the_item(llava):
    items = _items().iloc[:2].copy()
    items.at[1, "options"] = []
    with pytest.raises(score.ScoringError, match="item 'c1': empty option list"):
        score.predict(llava, items, _images(2))


def test_bad_arguments(llava):
    items, imgs = _items(), _images(5)
    with pytest.raises(ValueError, match="methods"):
        score.predict(llava, items, imgs, methods=["logits"])
    with pytest.raises(ValueError, match="items is missing"):
        score.predict(llava, items.drop(columns="options"), imgs)
    with pytest.raises(ValueError, match="images has 4"):
        score.predict(llava, items, imgs[:4])
    bad = items.copy()
    bad.at[0, "answer_idx"] = 4
    with pytest.raises(score.ScoringError, match="item 'c0': answer_idx"):
        score.predict(llava, bad, imgs)


def test_text_format_defaults_to_loglik(llava):
    lm_text = models.LoadedModel(llava.model, llava.processor, llava.tokenizer, "text", "t", None, name="t")
    df = score.predict(lm_text, _items().iloc[:2], _images(2))
    assert (df.method == "loglik").all()


@pytest.mark.parametrize("name", models.zoo.names())
def test_every_method_on_the_zoo(name):
    lm = models.load(name)
    df = score.predict(lm, _items(), _images(5, seed=1), methods=list(score.METHODS), n_samples=3)
    assert len(df) == 5 * len(score.METHODS)
    assert np.allclose([sum(p) for p in df.probs], 1.0)


def test_token_prob_is_the_chosen_option_over_the_whole_vocabulary():
    name = models.zoo.names("evaluated")[0]
    lm = models.load(name)
    df = score.predict(lm, _items().iloc[:3], _images(3), methods=["letter", "loglik", "loglik_norm", "sample"],
                       n_samples=2)
    letter = df[df.method == "letter"]
    # the letter's vocabulary probability never exceeds its probability renormalised over the K letters
    assert (letter.token_prob <= letter.confidence + 1e-12).all() and (letter.token_prob > 0).all()
    ll, norm = df[df.method == "loglik"], df[df.method == "loglik_norm"]
    assert np.allclose(ll.token_prob, [np.exp(lg[p]) for lg, p in zip(ll.logits, ll.pred_idx, strict=True)])
    assert np.allclose(norm.token_prob, [np.exp(lg[p]) for lg, p in zip(norm.logits, norm.pred_idx, strict=True)])
    assert df[df.method == "sample"].token_prob.isna().all()
