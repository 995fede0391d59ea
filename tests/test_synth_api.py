"""vlmrobust.synth: the item contract, references, determinism, balance, vocabulary and errors."""

from __future__ import annotations

import json
from collections import Counter

import numpy as np
import pytest

from vlmrobust import data, repro, schema, synth

N = 24  # items per family in the shared table


@pytest.fixture(scope="module")
def table():
    return synth.generate(N, seed=7)


def test_table_follows_the_item_schema(table):
    data.validate_items(table)
    assert list(table.columns) == list(schema.ITEM_COLUMNS)
    assert (table["source"] == "synth").all()
    assert table["item_id"].is_unique
    assert set(table["task"]) == set(synth.FAMILIES)
    for row in table.itertuples():
        assert row.category == synth.CATEGORIES[row.task]
        assert row.image_ref == row.depth_ref and row.image_ref.startswith("synth://v1/7/")
        k = len(row.options)
        assert k == (2 if row.task in synth.BINARY else 4)
        if row.task in synth.BINARY:
            assert sorted(row.options) == ["no", "yes"]
        meta = json.loads(row.meta)
        assert row.options[row.answer_idx] == meta["answer"]
        assert row.abstain_idx == -1


def test_families_are_balanced_and_yes_no_is_exactly_balanced(table):
    assert Counter(table["task"]) == {f: N for f in synth.FAMILIES}
    for fam in synth.BINARY:
        sub = table[table["task"] == fam]
        answers = [opts[i] for opts, i in zip(sub["options"], sub["answer_idx"], strict=True)]
        assert Counter(answers) == {"yes": N // 2, "no": N // 2}


def test_answer_positions_are_spread_over_the_options():
    big = synth.generate(60, seed=3, families=["colour", "count", "text", "chart"])
    pos = Counter(big["answer_idx"])
    assert set(pos) == {0, 1, 2, 3}
    assert min(pos.values()) >= 0.15 * len(big)  # uniform would be 0.25


def test_same_seed_same_table_and_bytes_other_seed_differs(table):
    again = synth.generate(N, seed=7)
    assert table.equals(again)
    other = synth.generate(N, seed=8)
    assert not table["question"].equals(other["question"]) or not table["meta"].equals(other["meta"])
    for ref in table["image_ref"].iloc[::17]:
        a_img, a_dep = synth.render(ref)
        b_img, b_dep = synth.render(ref)
        assert a_img.tobytes() == b_img.tobytes() and a_dep.tobytes() == b_dep.tobytes()


def test_render_reproduces_generate_from_the_ref_alone(table):
    for row in table.iloc[::5].itertuples():
        item = synth.item_from_ref(row.image_ref)
        assert item.question == row.question and item.options == list(row.options)
        assert item.answer_idx == row.answer_idx
        meta = json.loads(row.meta)
        assert item.meta["bbox"] == meta["bbox"] and item.meta["objects"] == meta["objects"]
        # the item is drawn from repro.rng("synth", seed, family, index)
        direct = synth.make_item(row.task, repro.rng("synth", 7, row.task, meta["index"]),
                                 truth=item.meta.get("truth"))
        assert direct.image.tobytes() == item.image.tobytes()
        img, dep = data.load_image(row.image_ref), data.load_depth(row.depth_ref)
        assert np.array_equal(img, item.image) and np.array_equal(dep, item.depth)


def test_make_item_types_and_shapes():
    for fam in synth.FAMILIES:
        for size in (32, 64, 96):
            it = synth.make_item(fam, repro.rng("types", fam, size), size=size)
            assert it.image.dtype == np.uint8 and it.image.shape == (size, size, 3)
            assert it.depth.dtype == np.float32 and it.depth.shape == (size, size)
            assert it.family == fam and it.category == synth.CATEGORIES[fam]
            assert len(set(it.options)) == len(it.options)
            assert it.answer == it.meta["answer"]
            json.dumps(it.meta)  # meta is JSON-serialisable
            if fam in ("colour", "shape", "verify"):
                t = it.meta["objects"][it.meta["target"]]
                assert (it.meta["target_colour"], it.meta["target_shape"]) == (t["colour"], t["shape"])
                assert it.meta["target_distance_m"] == t["distance_m"] and it.meta["bbox"] == t["bbox"]
                want = {"colour": t["colour"], "shape": t["shape"]}.get(fam)
                assert want is None or it.answer == want


@pytest.mark.parametrize("abstain", ["unclear", "dont_know"])
def test_abstain_option_is_appended_last(abstain):
    t = synth.generate(4, seed=1, abstain=abstain)
    data.validate_items(t)
    for row in t.itertuples():
        assert row.abstain_idx == len(row.options) - 1
        assert row.options[-1] == schema.ABSTAIN_TEXTS[abstain]
        assert row.answer_idx != row.abstain_idx
        assert f"abstain={abstain}" in row.image_ref
    assert schema.ABSTAIN_TEXTS["unclear"] == "I cannot tell, the image is too unclear to decide."
    assert schema.ABSTAIN_TEXTS["dont_know"] == "I don't know"
    plain = synth.generate(4, seed=1)
    assert list(plain["question"]) == list(t["question"])  # same scenes, only the extra option


def test_refs_round_trip_and_reject_garbage():
    ref = synth.make_ref(5, "text", 12, size=96, abstain="unclear", distance=(4, 30), box=False)
    p = synth.parse_ref(ref)
    assert p == {"seed": 5, "family": "text", "index": 12, "size": 96, "abstain": "unclear",
                 "distance": (4.0, 30.0), "box": False}
    assert synth.parse_ref("synth://v1/0/colour/3") ["size"] == 64  # defaults
    for bad in ["synth://v2/0/colour/1", "synth://v1/0/colour", "synth://v1/x/colour/1",
                "synth://v1/0/nope/1", "synth://v1/0/colour/1?size=8", "synth://v1/0/colour/1?foo=1",
                "file.png"]:
        with pytest.raises(ValueError):
            synth.parse_ref(bad)


def test_vocabulary_covers_every_generated_text(table):
    vocab = set(synth.vocabulary())
    assert synth.vocabulary() == sorted(vocab)
    t2 = synth.generate(6, seed=2, abstain="unclear")
    t3 = synth.generate(6, seed=2, abstain="dont_know", families=["verify"])
    for t in (table, t2, t3):
        for row in t.itertuples():
            for text in [row.question, *row.options]:
                missing = set(synth.words(text)) - vocab
                assert not missing, (text, missing)
    assert synth.words("I don't know") == ["I", "don", "'", "t", "know"]
    assert len(vocab) < 150  # small and closed


def test_sign_characters_never_collide_with_option_letters():
    assert not set(synth.SIGN_CHARS) & set(schema.OPTION_LETTERS)
    assert len(synth.SIGN_CHARS) >= 20


def test_box_can_be_added_after_the_fact():
    rng_a, rng_b = repro.rng("box", 1), repro.rng("box", 1)
    with_box = synth.make_item("colour", rng_a)
    without = synth.make_item("colour", rng_b, box=False)
    assert with_box.meta["box"] == without.meta["box"] and without.meta["box_drawn"] is False
    assert not (without.image == np.array(synth.BOX_RGB, np.uint8)).all(-1).any()
    assert np.array_equal(synth.draw_box(without.image, without.meta["box"]), with_box.image)


def test_truth_forces_the_binary_answer():
    for fam in synth.BINARY:
        for truth in (True, False):
            for i in range(5):
                it = synth.make_item(fam, repro.rng("truth", fam, i), truth=truth)
                assert it.answer == ("yes" if truth else "no")
    with pytest.raises(ValueError, match="truth"):
        synth.make_item("colour", repro.rng(0), truth=True)


@pytest.mark.parametrize(
    ("kwargs", "word"),
    [
        ({"n_per_family": 0, "seed": 0}, "n_per_family"),
        ({"n_per_family": -3, "seed": 0}, "n_per_family"),
        ({"n_per_family": 2.5, "seed": 0}, "n_per_family"),
        ({"n_per_family": 1, "seed": -1}, "seed"),
        ({"n_per_family": 1, "seed": 0, "families": ["colour", "nope"]}, "families"),
        ({"n_per_family": 1, "seed": 0, "families": "colour"}, "families"),
        ({"n_per_family": 1, "seed": 0, "families": []}, "families"),
        ({"n_per_family": 1, "seed": 0, "size": 31}, "size"),
        ({"n_per_family": 1, "seed": 0, "size": 64.0}, "size"),
        ({"n_per_family": 1, "seed": 0, "abstain": "maybe"}, "abstain"),
        ({"n_per_family": 1, "seed": 0, "distance": (40, 3)}, "distance"),
        ({"n_per_family": 1, "seed": 0, "distance": (0, 10)}, "distance"),
        ({"n_per_family": 1, "seed": 0, "distance": (3, float("inf"))}, "distance"),
        ({"n_per_family": 1, "seed": 0, "distance": (3,)}, "distance"),
        ({"n_per_family": 1, "seed": 0, "distance": "far"}, "distance"),
        ({"n_per_family": 1, "seed": 0, "distance": (30, 40)}, "distance"),  # no room for legible targets
    ],
)
def test_bad_arguments_name_the_argument(kwargs, word):
    with pytest.raises(ValueError, match=word):
        synth.generate(**kwargs)


def test_make_item_bad_arguments():
    with pytest.raises(ValueError, match="family"):
        synth.make_item("colours", repro.rng(0))
    with pytest.raises(TypeError, match="rng"):
        synth.make_item("colour", 0)
    with pytest.raises(ValueError, match="size"):
        synth.make_item("colour", repro.rng(0), size=16)


def test_a_narrow_distance_range_is_honoured():
    t = synth.generate(6, seed=4, distance=(5.0, 9.0))
    for row in t.itertuples():
        meta = json.loads(row.meta)
        for o in meta["objects"]:
            if o["kind"] in ("shape", "sign"):
                assert 5.0 - 1e-9 <= o["z_m"] <= 9.0 + 1e-9, (row.task, o)


@pytest.mark.parametrize("size", [32, 128])
def test_every_family_renders_at_other_sizes(size):
    t = synth.generate(8, seed=11, size=size)
    data.validate_items(t)
    for ref in t["image_ref"].iloc[::4]:
        img, dep = synth.render(ref)
        assert img.shape == (size, size, 3) and dep.shape == (size, size)


def test_balance_table_counts_answer_positions_and_yes_share():
    items = synth.generate(8, 5, families=["colour", "verify"])
    table = synth.balance_table(items)
    assert list(table.index) == ["colour", "verify"]
    letters = [c for c in table.columns if c in schema.OPTION_LETTERS]
    assert (table[letters].sum(axis=1) == 8).all() and table.loc["verify", "K"] == 2
    answers = [o[i] for o, i in zip(items.options, items.answer_idx, strict=True)]
    want = sum(a == "yes" for a, t in zip(answers, items.task, strict=True) if t == "verify") / 8
    assert table.loc["verify", "yes share"] == round(want, 3) and table.loc["colour", "yes share"] == 0


def test_perspective_check_matches_the_pinhole_model():
    import json

    metas = synth.generate(12, 2, families=["count", "text"])["meta"].map(json.loads)
    check = synth.perspective_check(metas)
    assert len(check) > 10 and set(check.kind) <= {"shape", "sign"}
    assert (check.measured_px - check.predicted_px).abs().max() <= 2.0  # pixel quantisation
