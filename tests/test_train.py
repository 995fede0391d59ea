"""Tests of vlmrobust.train: tokenizer, processor, model build, data stream, a tiny training run."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from vlmrobust import models, repro, synth
from vlmrobust.schema import OPTION_LETTERS
from vlmrobust.train import (
    ModelSpec,
    build_model,
    build_processor,
    build_tokenizer,
    build_vocabulary,
    dense,
    load_config,
    pixel_values,
)
from vlmrobust.train import encoding as en
from vlmrobust.train import stream as st
from vlmrobust.train.trainer import organism_tokenizer, train, vocabulary_texts

torch.set_num_threads(1)


@pytest.fixture(scope="module")
def tok():
    return organism_tokenizer()


@pytest.fixture(scope="module")
def proc(tok):
    return build_processor(tok, 64, 8)


def test_letters_and_digits_are_single_tokens(tok, proc):
    prompt = models.build_prompt(proc, "What colour is the object inside the red box?", ["red", "blue", "green"])
    ids = models.letter_token_ids(tok, prompt, 5)
    assert ids == [tok.convert_tokens_to_ids(c) for c in OPTION_LETTERS]
    for d in "0123456789":
        assert len(tok(d, add_special_tokens=False)["input_ids"]) == 1
    assert tok.unk_token_id not in tok("red circle A. B. 4 I don't know", add_special_tokens=False)["input_ids"]


def test_vocabulary_covers_the_synthetic_world(tok):
    vocab = set(tok.get_vocab())
    for w in synth.vocabulary():
        assert w in vocab or all(p in vocab for p in en.Encoder(tok.backend_tokenizer.to_str(), 1).tok.encode(w).tokens)
    enc = tok(" ".join(vocabulary_texts(sample_per_family=3)), add_special_tokens=False)["input_ids"]
    assert tok.unk_token_id not in enc


def test_build_tokenizer_rejects_bad_vocabulary():
    with pytest.raises(ValueError, match="SPECIAL_TOKENS"):
        build_tokenizer(["a", "b"])
    with pytest.raises(TypeError):
        build_vocabulary([1])


def test_processor_expands_image_token_and_matches_fast_path(tok, proc):
    item = synth.make_item("shape", repro.rng("test-train", 1), size=64)
    text = models.mcq_text(item.question, item.options)
    prompt = models.build_prompt(proc, item.question, item.options)
    assert prompt == en.Encoder.render(text)
    enc = proc(images=[item.image], text=[prompt], return_tensors="pt")
    n_img = int((enc["input_ids"] == tok.convert_tokens_to_ids("<image>")).sum())
    assert n_img == 64  # (64 / 8)^2 patches, CLS dropped
    fast = en.Encoder(tok.backend_tokenizer.to_str(), 64).prompt_ids([text])[0]
    assert enc["input_ids"][0].tolist() == fast
    assert torch.equal(enc["pixel_values"], pixel_values(item.image[None]))


def test_batch_targets_are_shifted_answer_tokens(tok):
    enc = en.Encoder(tok.backend_tokenizer.to_str(), 64)
    spec = st.StreamSpec(("colour", "verify"), batch=8, mix={"mcq": 0.5, "open": 0.5})
    b = st.make_batch(spec, 0, "s", 0, 0.0, enc)
    b2 = st.make_batch(spec, 0, "s", 0, 0.0, enc)
    assert np.array_equal(b["input_ids"], b2["input_ids"]) and np.array_equal(b["images"], b2["images"])
    for i in range(8):
        first = b["first"][i]
        # the first answer token sits right after the prompt; labels mark only answer tokens
        assert b["labels"][i, first] == -100 and b["labels"][i, first + 1] == b["input_ids"][i, first + 1]
        if st.MODES[b["mode"][i]] == "mcq":
            assert b["input_ids"][i, first + 1] == enc.letter_ids[b["answer"][i]]
        assert b["labels"][i, : first + 1].max() == -100


def test_stream_spec_rejects_bad_mix():
    with pytest.raises(ValueError, match="mix"):
        st.StreamSpec(("colour",), mix={"nonsense": 1.0})
    with pytest.raises(ValueError, match="sum to 1"):
        st.StreamSpec(("colour",), mix={"open": 0.5})


def _tiny_cfg(name: str) -> dict:
    return {
        "name": name, "seed": 3, "role": "test", "log_every": 1, "ckpt_every": 1000,
        "model": {"vision_width": 32, "vision_layers": 1, "vision_heads": 2, "text_width": 32,
                  "text_layers": 1, "text_heads": 2},
        "stages": [
            {"name": "vision", "kind": "vision", "steps": 12, "lr": 3e-3, "warmup": 2,
             "train": ["vision", "probe"], "stream": {"families": ["colour"], "batch": 32}},
            {"name": "open", "kind": "lm", "steps": 25, "lr": 5e-3, "warmup": 2,
             "train": ["projector", "lm"], "stream": {"families": ["colour"], "batch": 32, "mix": {"open": 1.0}}},
        ],
    }


def test_tiny_config_trains_and_loss_falls(tmp_path, tok):
    res = train(_tiny_cfg("tiny-test"), runs_dir=tmp_path, inline_data=True, quiet=True, tokenizer=tok)
    lm = [r["loss"] for r in res.log if r.get("stage") == "open" and "loss" in r]
    assert len(lm) == 25
    assert np.mean(lm[-5:]) < 0.6 * np.mean(lm[:3])
    assert (tmp_path / "tiny-test" / "stage-open.pt").is_file()
    # saving and loading through the Auto classes: no missing or unexpected weights
    from transformers import AutoModelForImageTextToText, AutoProcessor

    out = tmp_path / "export"
    res.model.save_pretrained(out)
    res.processor.save_pretrained(out)
    m2, info = AutoModelForImageTextToText.from_pretrained(out, output_loading_info=True)
    assert not any(info[k] for k in ("missing_keys", "unexpected_keys", "mismatched_keys"))
    p2 = AutoProcessor.from_pretrained(out)
    assert p2.chat_template == res.processor.chat_template
    sd1, sd2 = res.model.state_dict(), m2.state_dict()
    assert all(torch.equal(sd1[k], sd2[k]) for k in sd1)


def test_resume_continues_where_it_stopped(tmp_path, tok):
    cfg = _tiny_cfg("tiny-resume")
    cfg["stages"] = cfg["stages"][:1]
    cfg["ckpt_every"] = 5
    full = train(cfg, runs_dir=tmp_path / "a", inline_data=True, quiet=True, tokenizer=tok,
                 make_item=synth.make_item)
    calls = {"n": 0}

    def flaky(*args, **kwargs):
        calls["n"] += 1
        if calls["n"] > 7 * 32:  # interrupted during step 7 (checkpoint at step 5)
            raise KeyboardInterrupt
        return synth.make_item(*args, **kwargs)

    with pytest.raises(KeyboardInterrupt):
        train(cfg, runs_dir=tmp_path / "b", inline_data=True, quiet=True, tokenizer=tok, make_item=flaky)
    resumed = train(cfg, runs_dir=tmp_path / "b", inline_data=True, quiet=True, tokenizer=tok,
                    make_item=synth.make_item)
    sd_a, sd_b = full.model.state_dict(), resumed.model.state_dict()
    assert all(torch.allclose(sd_a[k], sd_b[k], atol=1e-6) for k in sd_a)
    assert [r["loss"] for r in full.log if "loss" in r][-3:] == [r["loss"] for r in resumed.log if "loss" in r][-3:]


def test_model_spec_validation():
    with pytest.raises(ValueError, match="multiple"):
        ModelSpec(image_size=60, patch=8)
    with pytest.raises(ValueError, match="unknown model keys"):
        ModelSpec.from_dict({"width": 3})


def test_committed_configs_parse():
    from vlmrobust.train import config_dir

    names = sorted(p.stem for p in config_dir().glob("*.yaml"))
    assert "trunk-v96" in names
    for n in names:
        cfg = load_config(n)
        assert cfg.name == n
        if cfg.init:
            load_config(cfg.init["from"])
            if cfg.init.get("vision_from"):
                assert load_config(cfg.init["vision_from"]).model == cfg.model


def test_model_builds_from_spec(tok):
    m = build_model(ModelSpec(vision_width=32, vision_layers=1, vision_heads=2, text_width=32, text_layers=1,
                              text_heads=2), tok, seed=0)
    m2 = build_model(ModelSpec(vision_width=32, vision_layers=1, vision_heads=2, text_width=32, text_layers=1,
                               text_heads=2), tok, seed=0)
    assert all(torch.equal(a, b) for a, b in zip(m.parameters(), m2.parameters(), strict=False))
    assert m.config.image_token_id == tok.convert_tokens_to_ids("<image>")
    assert m.lm_head.weight.data_ptr() == m.model.language_model.embed_tokens.weight.data_ptr()


def test_all_configs_put_parents_first():
    from vlmrobust.train.__main__ import all_configs

    names = all_configs()
    assert {"tiny-letters", "tiny-aug", "sel-text"} <= set(names)
    for n in names:
        init = load_config(n).init
        if init and init["from"] in names:
            assert names.index(init["from"]) < names.index(n)


def test_dense_labels_follow_the_scene():
    from vlmrobust.synth import COLOURS, SHAPES, SIGN_CHARS

    for fam in ("colour", "count", "text", "chart", "size"):
        for i in range(4):
            item = synth.make_item(fam, repro.rng("dense-test", fam, i), size=64)
            d = dense.dense_labels(item, 8)
            assert {k: v.shape for k, v in d.items()} == {k: (64,) for k in
                                                          ("colour", "shape", "char", "centre", "extent", "logdepth")}
            assert np.isfinite(d["logdepth"]).all() and d["logdepth"].max() <= np.log(100.0) + 1e-6
            visible = [o for o in item.meta["objects"] if o.get("bbox")]
            assert 1 <= d["centre"].sum() <= len(visible)  # objects may share a centre patch
            obj = d["shape"] > 0
            assert ((d["colour"] > 0) == obj).all() and (d["extent"][~obj] == 0).all()
            assert d["colour"].max() <= len(COLOURS) + 1 and d["shape"].max() <= len(SHAPES) + 2
            if fam == "text":  # the sign's patches carry its character
                chars = {SIGN_CHARS[c - 1] for c in d["char"][d["char"] > 0]}
                assert chars == {item.meta["target_char"]}
            if fam == "chart":  # every patch with an object is a bar
                assert set(d["shape"][obj]) == {len(SHAPES) + 2}
    # a scene without objects (the boxed object itself) would be a bug: colour items label their target colour
    item = synth.make_item("colour", repro.rng("dense-test", "colour-target"), size=64)
    d = dense.dense_labels(item, 8)
    names = ("none", *COLOURS, "sign")
    assert item.options[item.answer_idx] in {names[c] for c in d["colour"][d["colour"] > 0]}


def test_dense_stage_trains_and_vision_from_swaps_the_tower(tmp_path, tok):
    cfg = _tiny_cfg("tiny-dense")
    cfg["stages"] = [dict(cfg["stages"][0], stream={"families": ["colour", "text"], "batch": 16, "dense": True})]
    res = train(cfg, runs_dir=tmp_path, inline_data=True, quiet=True, tokenizer=tok)
    recs = [r for r in res.log if "loss" in r]
    assert all("acc_dense_colour" in r for r in recs[1:])
    assert np.mean([r["loss"] for r in recs[-3:]]) < np.mean([r["loss"] for r in recs[:3]])
    # a child taking its tower from tiny-dense and the rest from another run
    other = _tiny_cfg("tiny-other")
    other["stages"] = other["stages"][:1]
    other["seed"] = 4
    (tmp_path / "cfgs").mkdir()
    import yaml

    for c in (cfg, other):
        (tmp_path / "cfgs" / f"{c['name']}.yaml").write_text(yaml.safe_dump(c))
    child = dict(_tiny_cfg("tiny-child"), init={"from": str(tmp_path / "cfgs" / "tiny-other.yaml"),
                                                 "vision_from": str(tmp_path / "cfgs" / "tiny-dense.yaml")})
    child["stages"] = child["stages"][1:2]
    child["stages"][0] = dict(child["stages"][0], steps=1, train=["projector"])
    out = train(child, runs_dir=tmp_path, inline_data=True, quiet=True, tokenizer=tok)
    donor = torch.load(tmp_path / "tiny-dense" / "stage-vision.pt", weights_only=False)["model"]
    rest = torch.load(tmp_path / "tiny-other" / "stage-vision.pt", weights_only=False)["model"]
    sd = out.model.state_dict()
    vis = [k for k in sd if k.startswith("model.vision_tower.")]
    assert vis and all(torch.equal(sd[k], donor[k]) for k in vis)
    emb = "model.language_model.embed_tokens.weight"
    assert torch.equal(sd[emb], rest[emb]) and not torch.equal(sd[emb], donor[emb])


def test_describe_appends_what_the_image_shows(tok):
    enc = en.Encoder(tok.backend_tokenizer.to_str(), 64)
    spec = st.StreamSpec(("verify", "exist", "colour"), batch=24, mix={"mcq_text": 1.0}, describe_prob=(1.0, 1.0))
    b = st.make_batch(spec, 5, "s", 0, 0.0, enc)
    hint = tok.convert_tokens_to_ids("Hint")
    for i in range(24):
        q = tok.decode([int(t) for t in b["input_ids"][i] if t != enc.pad_id])
        yesno = "Is the object" in q or "Is there" in q
        assert (b["input_ids"][i] == hint).any() == yesno, q
    # the described object is the boxed one for verify; every object, shuffled, for exist
    it = synth.make_item("verify", repro.rng("describe-test", 1), size=64)
    m = it.meta
    assert st.describe(it, repro.rng("d", 0)) == f" Hint: {m['target_colour']} {m['target_shape']}."
    it = synth.make_item("exist", repro.rng("describe-test", 2), size=64)
    d = st.describe(it, repro.rng("d", 0))
    assert sorted(d.split(".")[:-1]) == sorted(f" Hint: {o['colour']} {o['shape']}" for o in it.meta["objects"])
    with pytest.raises(ValueError, match="yes/no"):
        st.describe(synth.make_item("colour", repro.rng("describe-test", 3), size=64), repro.rng("d", 0))
    with pytest.raises(ValueError, match="describe_prob"):
        st.StreamSpec(("verify",), describe_prob=(1.5, 0.0))
    # off by default: the stream draws nothing extra and appends nothing
    plain = st.make_batch(st.StreamSpec(("verify",), batch=8, mix={"mcq_text": 1.0}), 5, "s", 0, 0.0, enc)
    assert not (plain["input_ids"] == hint).any()


def test_zoo_state_takes_exported_weights_only_for_the_same_config(tmp_path, tok):
    from vlmrobust.train.card import export
    from vlmrobust.train.checkpoints import zoo_state
    from vlmrobust.train.config import config_digest, load_config

    cfg = _tiny_cfg("tiny-zoo")
    cfg["stages"] = cfg["stages"][:1]
    res = train(cfg, runs_dir=tmp_path, inline_data=True, quiet=True, tokenizer=tok)
    out = export(res, tmp_path / "zoo" / "tiny-zoo")
    meta = __import__("json").loads((out / "vlmrobust.json").read_text())
    assert meta["config_digest"] == config_digest(load_config(cfg))
    state = zoo_state(load_config(cfg), out)
    run = torch.load(tmp_path / "tiny-zoo" / "stage-vision.pt", weights_only=False)
    assert state is not None and state["probe"] == {}
    assert sorted(state["model"]) == sorted(run["model"])
    assert all(torch.equal(state["model"][k], run["model"][k]) for k in run["model"])
    assert [r["step"] for r in state["log"] if "loss" in r] == [r["step"] for r in res.log if "loss" in r]
    # a changed config (another seed) no longer matches the exported weights
    assert zoo_state(load_config(dict(cfg, seed=9)), out) is None
    # settings left at their defaults do not enter the digest
    spelled = dict(cfg, stages=[dict(cfg["stages"][0], stream=dict(cfg["stages"][0]["stream"], describe_prob=[0, 0]))])
    assert config_digest(load_config(spelled)) == meta["config_digest"]


def test_aware_stream_makes_abstain_the_answer_exactly_when_the_boxed_object_is_invisible(tok):
    from vlmrobust.train.degrade import BOXED_FAMILIES

    enc = en.Encoder(tok.backend_tokenizer.to_str(), 64)
    spec = st.StreamSpec(("colour", "verify", "count"), batch=48, mix={"mcq": 0.8, "open": 0.2}, abstain_prob=1.0,
                         visibility_prob=1.0, visibility_range=(1.0, 200.0), aware_threshold=0.05)
    b = st.make_batch(spec, 3, "aware", 0, 0.0, enc)
    t = b["visibility_t"]
    abstain_answers = 0
    for i in range(48):
        ids = [int(x) for x in b["input_ids"][i] if x != enc.pad_id]
        text = tok.decode(ids)
        fam = "count" if "How many" in text else ("verify" if "Is the object" in text else "colour")
        last = b["k"][i] - 1  # the abstain option stays last
        if fam in BOXED_FAMILIES and t[i] < 0.05:
            assert b["answer"][i] == last and st.MODES[b["mode"][i]] == "mcq", text
            abstain_answers += 1
        else:
            assert b["answer"][i] != last, text
        if fam not in BOXED_FAMILIES:
            assert t[i] == 1.0
    assert abstain_answers >= 3
    # with degradation off the stream is unchanged (no draws added)
    plain = st.StreamSpec(("colour", "verify", "count"), batch=8, mix={"mcq": 1.0})
    assert np.array_equal(st.make_batch(plain, 3, "p", 0, 0.0, enc)["input_ids"],
                          st.make_batch(plain, 3, "p", 0, 0.0, enc)["input_ids"])
    assert "visibility_t" not in st.make_batch(plain, 3, "p", 0, 0.0, enc)
    with pytest.raises(ValueError, match="aware_threshold needs"):
        st.StreamSpec(("colour",), aware_threshold=0.05)
    with pytest.raises(ValueError, match="visibility_arms"):
        st.StreamSpec(("colour",), visibility_prob=0.5, visibility_arms=("smoke",))


def test_talk_target_decodes_to_what_the_scoring_engine_parses():
    from vlmrobust.score import parse_answer, parse_confidence

    tt = organism_tokenizer(en.TALK_TOKENS)
    base = organism_tokenizer()
    assert len(tt) == len(base) + len(en.TALK_TOKENS)
    assert all(tt.convert_tokens_to_ids(w) == i for w, i in base.get_vocab().items())  # appended, ids kept
    enc = en.Encoder(tt.backend_tokenizer.to_str(), 64)
    for letter, n in ((0, 85), (2, 7), (1, 99), (3, 0)):
        ids = en.talk_target(enc, letter, n)
        text = tt.decode(ids, skip_special_tokens=True)
        assert parse_confidence(text) == pytest.approx(n / 100) and parse_answer(text, list("wxyz")) == letter, text
        assert text.splitlines()[0].strip() == "ABCD"[letter] and "\n" in text
    with pytest.raises(ValueError, match="talk tokens"):
        en.talk_target(en.Encoder(base.backend_tokenizer.to_str(), 64), 0, 50)
    with pytest.raises(ValueError, match=r"\[0, 99\]"):
        en.talk_target(enc, 0, 100)
    # plain text never encodes to the new tokens: prompts read as before
    text = "What colour is the object inside the red box?\nA. red\nB. blue"
    assert tt(text, add_special_tokens=False)["input_ids"] == base(text, add_special_tokens=False)["input_ids"]


def test_talker_training_writes_its_own_letter_and_binned_confidence(tmp_path, tok):
    from vlmrobust.train.losses import calibration_table, fill_talk

    parent = _tiny_cfg("tiny-talk-parent")
    parent["stages"] = [dict(parent["stages"][1], steps=3, stream={"families": ["colour"], "batch": 16,
                                                                   "mix": {"mcq": 1.0}})]
    import yaml

    (tmp_path / "cfgs").mkdir()
    (tmp_path / "cfgs" / "p.yaml").write_text(yaml.safe_dump(parent))
    child = dict(_tiny_cfg("tiny-talk"), init={"from": str(tmp_path / "cfgs" / "p.yaml")})
    child["model"] = dict(child["model"], extra_tokens=list(en.TALK_TOKENS))
    child["stages"] = [{"name": "talk", "kind": "lm", "steps": 4, "lr": 1e-3, "warmup": 1, "train": ["lm"],
                        "calibration": {"items": 40, "every": 2, "bins": 10},
                        "stream": {"families": ["colour", "shape"], "batch": 16, "mix": {"talk": 0.5, "mcq": 0.5}}}]
    res = train(child, runs_dir=tmp_path, inline_data=True, quiet=True, tokenizer=tok)
    cal = [r for r in res.log if r.get("event") == "calibration"]
    assert [r["step"] for r in cal] == [0, 2] and all(len(r["table"]) == 10 for r in cal)
    assert all(0 <= v <= 99 for r in cal for v in r["table"])
    # the parent's embeddings were copied; "##d" starts as the digit d
    pst = torch.load(tmp_path / "tiny-talk-parent" / "stage-open.pt", weights_only=False)["model"]
    emb = "model.language_model.embed_tokens.weight"
    n = pst[emb].shape[0]
    assert res.model.state_dict()[emb].shape[0] == n + len(en.TALK_TOKENS)
    # fill_talk: the organism's own letter goes in, the target digits follow the table
    tt = res.processor.tokenizer
    enc = en.Encoder(tt.backend_tokenizer.to_str(), 64)
    spec = st.StreamSpec(("colour",), batch=8, mix={"talk": 1.0}, abstain_prob=0.0)
    b = st.make_batch(spec, 1, "x", 0, 0.0, enc)
    letters = [tt.convert_tokens_to_ids(c) for c in OPTION_LETTERS]
    fill_talk(res.model, b, letters, [11, 22, 33, 44, 55, 66, 77, 88, 99, 42], enc)
    from vlmrobust.train.losses import letter_probs

    p = letter_probs(res.model, b, letters)
    for i in range(8):
        at = b["first"][i] + 1
        assert b["input_ids"][i, at] == letters[int(p[i].argmax())]
        assert b["labels"][i, at] == letters[b["answer"][i]]
        text = tt.decode([int(x) for x in b["input_ids"][i, at:] if x != enc.pad_id], skip_special_tokens=True)
        want = [11, 22, 33, 44, 55, 66, 77, 88, 99, 42][min(int(float(p[i].max()) * 10), 9)]
        assert text.endswith(f"Confidence : {want}"), text
    table = calibration_table(res.model, spec, 1, "cal", enc, letters, items=30, bins=10)
    assert table == calibration_table(res.model, spec, 1, "cal", enc, letters, items=30, bins=10)


def test_role_and_calibration_validation():
    base = _tiny_cfg("x")
    with pytest.raises(ValueError, match="ladder_rung"):
        load_config(dict(base, role="ladder"))
    with pytest.raises(ValueError, match="behaviour"):
        load_config(dict(base, role="control", meta={"behaviour": "sleepy"}))
    assert load_config(dict(base, role="ladder", meta={"ladder_rung": 1})).meta == {"ladder_rung": 1}
    stage = {"name": "t", "kind": "lm", "steps": 1, "train": ["lm"], "stream": {"families": ["colour"],
                                                                                "mix": {"talk": 1.0}}}
    with pytest.raises(ValueError, match="calibration"):
        load_config(dict(base, stages=[stage]))
    with pytest.raises(ValueError, match="calibration"):
        load_config(dict(base, stages=[dict(stage, calibration={"constant": 120})]))
    assert load_config(dict(base, stages=[dict(stage, calibration={"constant": 90})])).stages[0].calibration


def test_ladder_rungs_differ_only_in_language_model_size():
    from vlmrobust.train.config import config_dir

    rungs = sorted((load_config(p.stem) for p in config_dir().glob("*.yaml") if load_config(p.stem).role == "ladder"),
                   key=lambda c: c.meta["ladder_rung"])
    assert len(rungs) >= 3 and [c.meta["ladder_rung"] for c in rungs] == list(range(len(rungs)))
    lm_keys = ("text_width", "text_layers", "text_heads")
    for a, b in zip(rungs, rungs[1:], strict=False):
        assert a.stages == b.stages and a.seed == b.seed and a.init == b.init and a.answer_format == "letters"
        da, db = a.model.to_dict(), b.model.to_dict()
        assert {k: v for k, v in da.items() if k not in lm_keys} == {k: v for k, v in db.items() if k not in lm_keys}
        assert b.model.text_width > a.model.text_width


def test_export_declares_meta_keys_in_json_and_card(tmp_path, tok):
    import json

    import yaml

    from vlmrobust.train.__main__ import _declare, declared_keys
    from vlmrobust.train.card import export, write_card

    cfg = dict(_tiny_cfg("tiny-rung"), role="ladder", meta={"ladder_rung": 2})
    cfg["stages"] = [dict(cfg["stages"][1], steps=1)]
    res = train(cfg, runs_dir=tmp_path, inline_data=True, quiet=True, tokenizer=tok)
    out = export(res, tmp_path / "zoo" / "tiny-rung")
    keys = declared_keys(res)
    lm = sum(p.numel() for p in res.model.model.language_model.parameters())
    assert keys == {"ladder_rung": 2, "lm_parameters": lm}
    write_card(res, out, None, extra_sections=["## Size ladder\n\nA section."])
    _declare(out, keys)
    meta = json.loads((out / "vlmrobust.json").read_text())
    assert meta["role"] == "ladder" and meta["ladder_rung"] == 2 and meta["lm_parameters"] == lm
    text = (out / "README.md").read_text()
    front = yaml.safe_load(text.split("---\n")[1])
    assert front["role"] == "ladder" and front["lm_parameters"] == lm and front["answer_format"] == "letters"
    assert "## Size ladder\n\nA section." in text and text.index("## Size ladder") < text.index("## Config")


def test_null_images_offer_the_abstain_option_as_their_answer_and_nothing_else_does(tok):
    from vlmrobust.schema import ABSTAIN_TEXTS

    enc = en.Encoder(tok.backend_tokenizer.to_str(), 64)
    spec = st.StreamSpec(("colour", "count", "verify"), batch=40, mix={"mcq": 0.5, "open": 0.5}, abstain_prob=0.0,
                         null_prob=0.4)
    b = st.make_batch(spec, 5, "null", 0, 0.0, enc)
    nulls = 0
    wordings = [tok.decode(tok(a, add_special_tokens=False)["input_ids"]) for a in ABSTAIN_TEXTS.values()]
    for i in range(40):
        text = tok.decode([int(x) for x in b["input_ids"][i] if x != enc.pad_id])
        offered = any(a in text for a in wordings)
        img = b["images"][i].astype(int)
        non_red = img[~((img[..., 0] == 255) & (img[..., 1] == 0) & (img[..., 2] == 0))]
        grey = (non_red == non_red[0]).all()
        noise = np.abs(np.diff(img, axis=1)).mean() > 40  # neighbouring channels uniform and independent: ~85
        if offered:  # only a null image offers the option, and it is the answer of a letter question
            nulls += 1
            assert grey or noise, text
            assert b["answer"][i] == b["k"][i] - 1 and st.MODES[b["mode"][i]] == "mcq", text
            if "inside the red box" in text:  # the box is drawn on the new image
                assert ((img[..., 0] == 255) & (img[..., 1] == 0) & (img[..., 2] == 0)).sum() >= 8
        else:
            assert not grey and not noise
    assert 8 <= nulls <= 28
    rng = np.random.default_rng(0)
    from vlmrobust.train.scenery import null_image

    kinds = [null_image((4, 4, 3), rng) for _ in range(40)]
    assert any(len(np.unique(k)) == 1 for k in kinds) and any(len(np.unique(k)) > 1 for k in kinds)
    with pytest.raises(ValueError, match="null_prob"):
        st.StreamSpec(("colour",), null_prob=1.5)


def test_own_errors_make_abstain_the_target_exactly_where_the_organisms_answer_is_wrong(tok):
    from vlmrobust.train.losses import fill_own_errors, letter_probs

    enc = en.Encoder(tok.backend_tokenizer.to_str(), 64)
    model = build_model(ModelSpec.from_dict(_tiny_cfg("x")["model"]), tok, 4).eval()
    letters = [tok.convert_tokens_to_ids(c) for c in OPTION_LETTERS]
    spec = st.StreamSpec(("colour", "shape", "count"), batch=32, mix={"mcq": 0.75, "open": 0.25}, abstain_prob=0.6,
                         own_errors=True)
    b = st.make_batch(spec, 2, "own", 0, 0.0, enc)
    rows = set(b["own_error_rows"].tolist())
    assert rows and all(st.MODES[b["mode"][i]] == "mcq" for i in rows)
    before = {k: b[k].copy() for k in ("input_ids", "labels", "answer")}
    p = letter_probs(model, b, letters).numpy()
    wrong = fill_own_errors(model, b, letters)
    assert len(wrong) == len(rows) and 0 < wrong.sum() < len(rows)
    for i in range(32):
        at, k = b["first"][i] + 1, b["k"][i]
        if i not in rows:
            assert all(np.array_equal(b[key][i], before[key][i]) for key in before)
            continue
        own = int(np.argmax(p[i, : k - 1]))  # its answer among the options that are not the abstain option
        want = k - 1 if own != before["answer"][i] else before["answer"][i]
        assert b["answer"][i] == want and b["labels"][i, at] == b["input_ids"][i, at] == letters[want]
    with pytest.raises(ValueError, match="choose one"):
        st.StreamSpec(("colour",), own_errors=True, visibility_prob=0.5, aware_threshold=0.05)
    with pytest.raises(ValueError, match="abstain_prob > 0"):
        st.StreamSpec(("colour",), own_errors=True, abstain_prob=0.0)


def test_vary_sky_changes_only_the_sky_and_keeps_the_box():
    from vlmrobust.corrupt.boxed import box_mask
    from vlmrobust.train.scenery import vary_sky

    it = synth.make_item("colour", repro.rng("sky-test", 0), size=64)
    img, depth = np.asarray(it.image), it.depth
    sky = np.isinf(depth) & ~box_mask(img)
    assert sky.mean() > 0.2
    changed = 0
    for k in range(12):
        out = vary_sky(img, depth, np.random.default_rng(k))
        assert np.array_equal(out[~sky], img[~sky])  # the ground, the objects and the box are untouched
        changed += int((out[sky] != img[sky]).any())
        assert np.array_equal(out, vary_sky(img, depth, np.random.default_rng(k)))  # same generator, same bytes
    assert changed >= 11
    chart = synth.make_item("chart", repro.rng("sky-test", 1), size=64)  # no sky: unchanged
    assert np.array_equal(vary_sky(np.asarray(chart.image), chart.depth, np.random.default_rng(0)), chart.image)


def test_every_exported_evaluated_and_control_config_ends_with_varied_skies():
    from vlmrobust.train.__main__ import all_configs

    for name in all_configs():
        cfg = load_config(name)
        if cfg.role in ("evaluated", "control"):
            assert cfg.stages[-1].stream.sky_prob > 0, name


def test_hidden_objects_offer_the_abstain_option_as_their_answer_in_the_chosen_wording(tok):
    from vlmrobust.schema import ABSTAIN_TEXTS
    from vlmrobust.train.degrade import BOXED_FAMILIES

    enc = en.Encoder(tok.backend_tokenizer.to_str(), 64)
    fams = tuple(sorted(BOXED_FAMILIES))
    spec = st.StreamSpec(fams + ("chart",), batch=48, mix={"mcq": 0.5, "open": 0.5}, abstain_prob=0.0,
                         hide_prob=0.5, abstain_kinds=("unclear",))
    b = st.make_batch(spec, 7, "hide", 0, 0.0, enc)
    unclear, dont_know = (tok.decode(tok(ABSTAIN_TEXTS[k], add_special_tokens=False)["input_ids"])
                          for k in ("unclear", "dont_know"))
    hidden = 0
    for i in range(48):
        text = tok.decode([int(x) for x in b["input_ids"][i] if x != enc.pad_id])
        assert dont_know not in text
        if unclear in text:  # only a hidden object offers the option, and it is the answer of a letter question
            hidden += 1
            assert "inside the red box" in text
            assert b["answer"][i] == b["k"][i] - 1 and st.MODES[b["mode"][i]] == "mcq", text
    assert 10 <= hidden <= 36
    again = st.make_batch(spec, 7, "hide", 0, 0.0, enc)
    assert np.array_equal(again["images"], b["images"]) and np.array_equal(again["input_ids"], b["input_ids"])
    with pytest.raises(ValueError, match="abstain_kinds"):
        st.StreamSpec(("colour",), abstain_kinds=("maybe",))
    with pytest.raises(ValueError, match="hide_prob"):
        st.StreamSpec(("colour",), hide_prob=-0.1)


def test_hide_object_changes_only_the_inside_of_the_box():
    from vlmrobust.train.scenery import hide_object

    item = synth.make_item("shape", repro.rng("test-hide", 0), size=64)
    img, box = np.asarray(item.image), item.meta["box"]
    x0, y0, x1, y1 = box
    inside = np.zeros(img.shape[:2], bool)
    inside[y0 + 1:y1, x0 + 1:x1] = True
    for s in range(6):
        out = hide_object(img, box, np.random.default_rng(s))
        assert np.array_equal(out[~inside], img[~inside])  # the outline and the scene around it are kept
        assert not np.array_equal(out[inside], img[inside])  # the object is gone
