"""Scoring checked against the papers' wording and against an independent route.

* Prompt, confidence and abstain wordings are compared with the literal text of
  the seeds, quoted here.
* Option log-likelihood (seed 002 §3.1, ``s(o|x) = log P(o | x, p(q, A))``) is
  recomputed without the library's tokenisation helpers: the text the model
  would see when it answers comes from the chat template rendering the answer
  as an assistant turn, its tokens from the tokenizer's character offsets, and
  the scores from one plain forward of the whole conversation. The tokenizer is
  byte-level BPE, so ``" red"`` and ``"red"`` are different tokens and a wrong
  leading space changes the scores.
* :func:`vlmrobust.score.parse_confidence` follows its stated rule.
"""

from __future__ import annotations

import math
import re

import numpy as np
import pytest
import torch
import twins

from vlmrobust import models, schema, score

torch.set_num_threads(1)

# --- seed 003, Table II (verbatim) ---------------------------------------------------------------------

SEED003_T2 = ("What is the object inside the red box? A. {o1} B. {o2} C. {o3} D. {o4} "
              "Answer with the letter of the correct option.")
SEED003_CONFIDENCE = ("After your answer, on a new line, state how confident you are that your answer is correct, "
                      "as a number from 0 to 100, in the format \u2018Confidence: N\u2019.")
SEED003_ABSTAIN_MAIN = "C. I cannot tell, the image is too unclear to decide."
SEED003_ABSTAIN_2 = "The same prompts with \u201cI don\u2019t know\u201d as the last option."
SEED003_PREFILL = "the assistant turn is prefilled with \u201cAnswer:\u201d"
# --- seed 002, App. A.3, ans_mcq regime (verbatim; the extracted text has lost its line breaks) --------
SEED002_MCQ = ("User: [IMAGE] Question: <question> Options: A. <option A> B. <option B> C. <option C> D. <option D> "
               "Please select the correct answer from the options above. Assistant: <option text>")


def _plain(text: str) -> str:
    """The paper's typesetting undone: typographic quotes to ASCII, runs of whitespace to one space."""
    text = text.replace("\u2018", "'").replace("\u2019", "'").replace("\u201c", '"').replace("\u201d", '"')
    return re.sub(r"\s+", " ", text).strip()


def test_confidence_request_is_seed003_wording():
    assert _plain(models.CONFIDENCE_REQUEST) == _plain(SEED003_CONFIDENCE)
    text = models.mcq_text("What is the object inside the red box?", ["cat", "dog", "cup", "car"], "seed003",
                           confidence=True)
    assert text.endswith("\n" + models.CONFIDENCE_REQUEST)  # "on a new line" after the question


def test_seed003_identification_prompt_and_prefill():
    opts = ["cat", "dog", "cup", "car"]
    want = SEED003_T2.format(o1=opts[0], o2=opts[1], o3=opts[2], o4=opts[3])
    assert models.mcq_text("What is the object inside the red box?", opts, "seed003") == want
    _, proc = twins.tiny_llava()
    prefill = re.search("\u201c(.*)\u201d", SEED003_PREFILL).group(1)
    assert models.build_prompt(proc, "What is the object inside the red box?", opts, "seed003").endswith(prefill)


def test_abstain_wordings_are_seed003s():
    assert schema.ABSTAIN_TEXTS["unclear"] == SEED003_ABSTAIN_MAIN.split(". ", 1)[1]
    assert _plain(schema.ABSTAIN_TEXTS["dont_know"]) == re.search('"(.*)"', _plain(SEED003_ABSTAIN_2)).group(1)


def test_seed002_mcq_prompt_wording():
    text = models.mcq_text("<question>", ["<option A>", "<option B>", "<option C>", "<option D>"], "seed002_mcq")
    user = re.search(r"User: \[IMAGE\] (.*) Assistant:", SEED002_MCQ).group(1)
    assert _plain(text) == user


# --- verbalized confidence: the rule of parse_confidence -----------------------------------------------

@pytest.mark.parametrize("text, want", [
    ("A\nConfidence: 85", 0.85),          # the requested format: a number from 0 to 100
    ("Confidence: 0.9", 0.9),             # a probability, written with a decimal point
    ("Confidence: .9", 0.9),
    ("Confidence: 1.0", 1.0),
    ("Confidence: 0.0", 0.0),
    ("Confidence: 1", 0.01),              # integers stay percentages, 1 included
    ("Confidence: 0", 0.0),
    ("Confidence: 100", 1.0),
    ("Confidence: 85.5", 0.855),          # a decimal above 1 is a percentage
    ("Confidence: 1.5", 0.015),
    ("Confidence: 0.9%", 0.009),          # an explicit percent sign wins
    ("confidence=120%", 1.0),             # clipped to [0, 1]
    ("CONFIDENCE 70 %", 0.7),
    ("B\nconfidence: 90.", 0.9),          # a sentence's full stop is not a decimal point
    ("Confidence: 1.", 0.01),
    ("Confidence: 40\nConfidence: 0.9", 0.4),  # the first statement counts
])
def test_parse_confidence_rule(text, want):
    assert score.parse_confidence(text) == pytest.approx(want, abs=1e-12)


@pytest.mark.parametrize("text", ["A", "", "Confidence: high", "Confidence:", "I am 90 sure"])
def test_parse_confidence_absent_is_nan(text):
    assert math.isnan(score.parse_confidence(text))


# --- option log-likelihood by an independent route -------------------------------------------------------

ZOO_STYLE_TEMPLATE = (  # the organisms' layout: turns end with <|end|>, the answer starts after a newline
    "{% for m in messages %}<|{{ m['role'] }}|>\n{% if m['content'] is string %}{{ m['content'] }}"
    "{% else %}{% for c in m['content'] %}{% if c['type'] == 'image' %}<image>\n{% else %}{{ c['text'] }}"
    "{% endif %}{% endfor %}{% endif %}<|end|>\n{% endfor %}{% if add_generation_prompt %}<|assistant|>\n{% endif %}"
)
QUESTIONS = ["What colour is the object?", "Which shape is this?"]
OPTIONS = [["red", "dark green", "blue", "yellow triangle"], ["square", "circle", "star shape", "triangle"]]


def _bpe_llava(template: str, seed: int = 0):
    """A LLaVA twin whose tokenizer is byte-level BPE trained here (a leading space is part of a token)."""
    from tokenizers import Tokenizer, decoders, pre_tokenizers, trainers
    from tokenizers import models as tk_models
    from transformers import (
        CLIPVisionConfig,
        LlavaConfig,
        LlavaForConditionalGeneration,
        LlavaProcessor,
        PreTrainedTokenizerFast,
    )
    from transformers.models.clip.image_processing_pil_clip import CLIPImageProcessorPil

    specials = ["<pad>", "</s>", "<s>", "<image>", "<|user|>", "<|assistant|>", "<|end|>"]
    tk = Tokenizer(tk_models.BPE())
    tk.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tk.decoder = decoders.ByteLevel()
    corpus = [f"USER: {q} A. red B. green ASSISTANT: {o}" for q in QUESTIONS for opts in OPTIONS for o in opts]
    corpus += [models.mcq_text(q, o) for q, o in zip(QUESTIONS, OPTIONS, strict=True)] * 3
    trainer = trainers.BpeTrainer(vocab_size=260 + 60, special_tokens=specials, show_progress=False,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tk.train_from_iterator(corpus, trainer)
    tok = PreTrainedTokenizerFast(tokenizer_object=tk, pad_token="<pad>", eos_token="</s>", bos_token="<s>")
    tok.padding_side = "left"
    ip = CLIPImageProcessorPil(size={"shortest_edge": 32}, crop_size={"height": 32, "width": 32})
    proc = LlavaProcessor(image_processor=ip, tokenizer=tok, patch_size=8, vision_feature_select_strategy="default",
                          chat_template=template, num_additional_image_tokens=1)
    vision = CLIPVisionConfig(hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=4,
                              image_size=32, patch_size=8, projection_dim=32)
    text = twins._llama_text(len(tok), 48, 2, pad_token_id=tok.pad_token_id, eos_token_id=tok.eos_token_id)
    cfg = LlavaConfig(vision_config=vision, text_config=text, image_token_id=tok.convert_tokens_to_ids("<image>"),
                      vision_feature_layer=-1, vision_feature_select_strategy="default", projector_hidden_act="gelu")
    torch.manual_seed(seed)
    model = LlavaForConditionalGeneration(cfg).eval()
    return models.LoadedModel(model, proc, tok, "text", "bpe_llava", "r0", name="bpe_llava")


def _independent_loglik(lm, question: str, options: list[str], image: np.ndarray) -> tuple[np.ndarray, list]:
    """Summed log-probabilities of each option as the assistant's answer, and the answer's token counts."""
    text = models.mcq_text(question, options)
    user = [{"role": "user", "content": [{"type": "image"}, {"type": "text", "text": text}]}]
    prompt = lm.processor.apply_chat_template(user, add_generation_prompt=True, tokenize=False)
    sums, lengths = [], []
    for opt in options:
        # the text the model sees when it answers `opt`: the template renders the answer as an assistant turn
        conv = lm.processor.apply_chat_template(user + [{"role": "assistant", "content": opt}], tokenize=False)
        assert conv.startswith(prompt)
        full = conv[: conv.index(opt, len(prompt)) + len(opt)]  # up to the end of the answer
        enc = lm.tokenizer(full, add_special_tokens=False, return_offsets_mapping=True)
        answer = [t for t, (a, _) in zip(enc["input_ids"], enc["offset_mapping"], strict=True) if a >= len(prompt)]
        assert lm.tokenizer.decode(answer) == full[len(prompt):]
        inputs = lm.processor(images=[[image]], text=[full], add_special_tokens=False, return_tensors="pt")
        ids = inputs["input_ids"][0].tolist()
        n = len(answer)
        assert ids[-n:] == answer
        with torch.inference_mode():
            logits = lm.model(**inputs).logits[0].double()
        lp = torch.log_softmax(logits, dim=-1)
        sums.append(sum(float(lp[len(ids) - n - 1 + j, answer[j]]) for j in range(n)))
        lengths.append(n)
    return np.asarray(sums), lengths


@pytest.mark.parametrize("template", [twins.SIMPLE_TEMPLATE, ZOO_STYLE_TEMPLATE], ids=["ends-colon", "ends-newline"])
def test_loglik_equals_an_independent_tokenisation_and_forward(template):
    lm = _bpe_llava(template)
    rng = np.random.default_rng(0)
    images = [rng.integers(0, 256, (40, 48, 3), dtype=np.uint8) for _ in QUESTIONS]
    prompts = [models.build_prompt(lm.processor, q, o) for q, o in zip(QUESTIONS, OPTIONS, strict=True)]
    got_sum, got_norm = score.loglik_scores(lm, ["q0", "q1"], prompts, OPTIONS, images, batch_size=2)
    n_multi = 0
    for i, (q, opts) in enumerate(zip(QUESTIONS, OPTIONS, strict=True)):
        want, lengths = _independent_loglik(lm, q, opts, images[i])
        n_multi += sum(n > 1 for n in lengths)
        np.testing.assert_allclose(got_sum[i].scores, want, atol=1e-5, rtol=0)
        np.testing.assert_allclose(got_norm[i].scores, want / np.asarray(lengths), atol=1e-5, rtol=0)
        np.testing.assert_allclose(got_sum[i].probs, np.exp(want - want.max()) / np.exp(want - want.max()).sum(),
                                   atol=1e-5)
    assert n_multi >= 2  # the shared-prefix path (options of several tokens) is exercised
    # the leading space matters to this tokenizer: " red" and "red" are different token sequences
    tok = lm.tokenizer
    assert tok(" red", add_special_tokens=False)["input_ids"] != tok("red", add_special_tokens=False)["input_ids"]


# --- parse_answer: the order of the two readings and the option-text rules ------------------------------

def test_parse_answer_reads_the_letter_first_unless_told_text_first():
    opts = ["x", "y", "A"]  # the answer "A" is option 0 by letter and option 2 by text
    assert score.parse_answer("A", opts) == 0
    assert score.parse_answer("A", opts, "letters") == 0
    assert score.parse_answer("A", opts, "text") == 2


def test_parse_answer_option_text_rules():
    opts = ["red", "red square", "blue", "I cannot tell, the image is too unclear to decide."]
    # seed 003's abstain wording ends with a full stop and must still match itself
    assert score.parse_answer("I cannot tell, the image is too unclear to decide.", opts, "text") == 3
    assert score.parse_answer("i cannot tell, the image is too unclear to decide", opts, "text") == 3
    assert score.parse_answer("red square, I think", opts, "text") == 1   # the longest option first
    assert score.parse_answer("Blue, I think", opts, "text") == 2         # a prefix ended by punctuation
    assert score.parse_answer("bluebird", opts, "text") is None           # ... not by a letter
    assert score.parse_answer("!blue", opts, "text") is None
    assert score.parse_answer("", ["xxxx", "y"], "text") is None
