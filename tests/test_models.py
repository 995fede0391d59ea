"""Tests of vlmrobust.models: prompt text, chat-template prompts, letter tokens, loading."""

from __future__ import annotations

import json

import pytest
import torch
from twins import save_twin, tiny_llava, word_tokenizer

from vlmrobust import models, schema
from vlmrobust.models import zoo

torch.set_num_threads(1)


def test_mcq_text_default_template_is_the_contract():
    text = models.mcq_text("What colour is the object?", ["red", "green", "blue"])
    assert text == ("What colour is the object?\nA. red\nB. green\nC. blue\n"
                    "Answer with the option's letter from the given choices directly.")


def test_mcq_text_paper_templates():
    assert models.mcq_text("Q?", ["x", "y"], "seed002_mcq") == (
        "Question: Q?\nOptions:\nA. x\nB. y\nPlease select the correct answer from the options above.")
    assert models.mcq_text("Q?", ["x", "y"], "seed003") == "Q? A. x B. y Answer with the letter of the correct option."
    assert models.mcq_text("Q?", [], "open") == "Q?\nAnswer with a word."
    conf = models.mcq_text("Q?", ["x", "y"], confidence=True)
    assert conf.endswith("\n" + models.CONFIDENCE_REQUEST) and "'Confidence: N'" in conf


@pytest.mark.parametrize("question, options, match", [
    ("", ["a", "b"], "question"),
    ("Q?", [], "options"),
    ("Q?", ["a", " "], r"options\[1\]"),
    ("Q?", ["a"] * 27, "options"),
])
def test_mcq_text_rejects_bad_input(question, options, match):
    with pytest.raises(ValueError, match=match):
        models.mcq_text(question, options)


def test_unknown_template_names_the_choices():
    with pytest.raises(ValueError, match="vlmrobust"):
        models.mcq_text("Q?", ["a", "b"], "nope")


def test_build_prompt_goes_through_the_chat_template():
    _, proc = tiny_llava()
    p = models.build_prompt(proc, "What colour is the object?", ["red", "green"])
    assert p.startswith("USER: <image>\nWhat colour is the object?\nA. red\nB. green\n")
    assert p.endswith("ASSISTANT:")
    p3 = models.build_prompt(proc, "What colour is the object?", ["red", "green"], "seed003")
    assert p3.endswith("ASSISTANT:Answer:")


def test_letter_tokens_word_level():
    tok = word_tokenizer([])
    ids = models.letter_token_ids(tok, "USER: q\nASSISTANT:", 4)
    assert tok.convert_ids_to_tokens(ids) == ["A", "B", "C", "D"]


def _bpe_tokenizer():
    from tokenizers import Tokenizer, decoders, pre_tokenizers, trainers
    from tokenizers import models as tm
    from transformers import PreTrainedTokenizerFast

    tk = Tokenizer(tm.BPE(unk_token=None))
    tk.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tk.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=400, initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
                                  special_tokens=["<pad>", "</s>"])
    corpus = ["ASSISTANT: A", "ASSISTANT: B", "ASSISTANT: C", "ASSISTANT: D", "assistant\nA", "A. red B. green"] * 50
    tk.train_from_iterator(corpus, trainer)
    return PreTrainedTokenizerFast(tokenizer_object=tk, pad_token="<pad>", eos_token="</s>")


def test_letter_tokens_space_prefixed_after_a_colon_and_bare_after_a_newline():
    tok = _bpe_tokenizer()
    after_colon = tok.convert_ids_to_tokens(models.letter_token_ids(tok, "USER: q ASSISTANT:", 2))
    after_newline = tok.convert_ids_to_tokens(models.letter_token_ids(tok, "user q\nassistant\n", 2))
    assert after_colon == ["ĠA", "ĠB"]
    assert after_newline == ["A", "B"]


def test_letter_not_a_single_token_is_refused():
    tok = word_tokenizer([])
    from tokenizers import Tokenizer, pre_tokenizers
    from tokenizers import models as tm
    from transformers import PreTrainedTokenizerFast

    tk = Tokenizer(tm.WordLevel(vocab={"<unk>": 0, "A": 1, "B": 2, "x": 3}, unk_token="<unk>"))
    tk.pre_tokenizer = pre_tokenizers.Whitespace()
    small = PreTrainedTokenizerFast(tokenizer_object=tk, unk_token="<unk>")
    assert models.letter_token_ids(small, "x\n", 2) == [1, 2]
    with pytest.raises(models.LetterTokenError, match="letter 'C'.*loglik"):
        models.letter_token_ids(small, "x\n", 3)
    with pytest.raises(ValueError, match="k must be"):
        models.letter_token_ids(tok, "x", 0)


def test_continuation_ids_in_context():
    tok = word_tokenizer([])
    assert tok.convert_ids_to_tokens(models.continuation_ids(tok, "ASSISTANT:", " red circle")) == ["red", "circle"]


def test_answer_format_from_meta_or_card(tmp_path):
    assert zoo.answer_format(tmp_path) is None
    (tmp_path / "README.md").write_text("---\nlicense: mit\nanswer_format: text\n---\n# card\n")
    assert zoo.answer_format(tmp_path) == "text"
    (tmp_path / "vlmrobust.json").write_text(json.dumps({"answer_format": "letters"}))
    assert zoo.answer_format(tmp_path) == "letters"
    (tmp_path / "vlmrobust.json").write_text(json.dumps({"answer_format": "words"}))
    with pytest.raises(ValueError, match="answer_format"):
        zoo.answer_format(tmp_path)


def test_default_method_follows_answer_format():
    assert models.default_method("letters") == "letter"
    assert models.default_method("text") == "loglik"
    with pytest.raises(ValueError, match="answer_format"):
        models.default_method("json")


def test_load_local_folder(tmp_path):
    model, proc = tiny_llava()
    folder = save_twin(model, proc, tmp_path / "twin", answer_format="text")
    lm = models.load(folder)
    assert lm.answer_format == "text" and lm.source == "path" and lm.name == "twin"
    assert lm.revision.startswith("sha256:") and lm.revision == models.load(folder).revision
    assert not lm.model.training
    ref = dict(model.state_dict())
    for k, v in lm.model.state_dict().items():
        assert torch.equal(v, ref[k]), k
    assert lm.settings["answer_format"] == "text" and lm.settings["chat_template"] == proc.chat_template
    assert models.load(folder, answer_format="letters").answer_format == "letters"


def test_load_offline_missing_hub_model_is_a_clear_error(monkeypatch, tmp_path):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    with pytest.raises(models.ModelLoadError, match="HF_HUB_OFFLINE"):
        models.load("nobody-here/no-such-vlm")


def test_load_rejects_bad_arguments(tmp_path):
    with pytest.raises(TypeError, match="name_or_path"):
        models.load("")
    with pytest.raises(models.ModelLoadError, match="not a model folder"):
        models.load(str(tmp_path / "missing-folder"))
    with pytest.raises(ValueError, match="answer_format"):
        models.load("x/y", answer_format="json")


@pytest.mark.parametrize("name", zoo.names())
def test_zoo_organisms_load_with_a_declared_format(name):
    lm = models.load(name)
    assert lm.answer_format in schema.ANSWER_FORMATS and lm.source == "zoo"
    assert zoo.answer_format(name) == lm.answer_format
    assert lm.revision == zoo.folder_revision(zoo.folder(name))
