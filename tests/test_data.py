import base64
import io
import json

import numpy as np
import pandas as pd
import pytest
from PIL import Image

from vlmrobust import data


def _png_bytes(arr, mode=None):
    buf = io.BytesIO()
    Image.fromarray(arr, mode=mode).save(buf, format="PNG")
    return buf.getvalue()


def _item(**kw):
    row = {"item_id": "q1", "source": "t", "task": "colour", "category": "attribute", "question": "What colour?",
           "options": ["red", "blue"], "answer_idx": 1, "image_ref": "x.png", "depth_ref": None,
           "abstain_idx": -1, "meta": "{}"}
    row.update(kw)
    return pd.DataFrame([row])


def test_validate_accepts_good_table():
    assert len(data.validate_items(_item())) == 1


@pytest.mark.parametrize(
    "kw,match",
    [
        ({"options": []}, "non-empty list"),
        ({"options": ["red"]}, "1 options"),
        ({"options": list("abcdef")}, "6 options"),
        ({"answer_idx": 2}, "answer_idx"),
        ({"options": ["red", "red"]}, "repeat"),
        ({"options": ["red", " "]}, "non-empty text"),
        ({"abstain_idx": 1}, "abstain"),
        ({"question": ""}, "question"),
    ],
)
def test_validate_names_the_item(kw, match):
    with pytest.raises(data.ItemTableError, match=match) as exc:
        data.validate_items(_item(**kw))
    assert "q1" in str(exc.value)


def test_validate_missing_column_and_duplicates():
    with pytest.raises(data.ItemTableError, match="lacks column"):
        data.validate_items(_item().drop(columns=["meta"]))
    with pytest.raises(data.ItemTableError, match="not unique"):
        data.validate_items(pd.concat([_item(), _item()]))


def test_decode_modes_to_rgb():
    grey = np.arange(64 * 64, dtype=np.uint8).reshape(64, 64)
    out = data.decode_image(_png_bytes(grey))
    assert out.shape == (64, 64, 3) and np.array_equal(out[..., 0], grey) and np.array_equal(out[..., 2], grey)
    rgba = np.zeros((40, 40, 4), np.uint8)  # fully transparent black -> white background
    assert (data.decode_image(_png_bytes(rgba)) == 255).all()


def test_corrupt_and_truncated_images_raise_naming_ref(tmp_path):
    good = _png_bytes(np.full((50, 50, 3), 128, np.uint8))
    bad = tmp_path / "trunc.png"
    bad.write_bytes(good[: len(good) // 2])
    with pytest.raises(data.ImageError, match="trunc.png"):
        data.load_image(str(bad))
    (tmp_path / "text.png").write_text("not an image")
    with pytest.raises(data.ImageError, match="text.png"):
        data.load_image(str(tmp_path / "text.png"))
    with pytest.raises(data.ImageError, match="not found"):
        data.load_image(str(tmp_path / "missing.png"))
    with pytest.raises(data.ImageError, match="base64"):
        data.load_image("b64:@@@")


def test_loaded_images_are_read_only(tmp_path):
    p = tmp_path / "ok.png"
    arr = np.random.default_rng(0).integers(0, 256, (33, 47, 3), dtype=np.uint8)
    p.write_bytes(_png_bytes(arr))
    img = data.load_image(str(p))
    assert np.array_equal(img, arr) and not img.flags.writeable
    assert data.load_depth(None) is None


def test_load_tsv_vlmevalkit_format(tmp_path):
    img = base64.b64encode(_png_bytes(np.zeros((40, 40, 3), np.uint8))).decode()
    rows = [
        {"index": 0, "question": "Q0?", "A": "cat", "B": "dog", "C": "", "D": "", "answer": "B", "image": img,
         "category": "animals", "hint": ""},
        {"index": 1, "question": "Q1?", "A": "1", "B": "2", "C": "3", "D": "4", "answer": "d", "image": img,
         "category": "count", "hint": "Look closely."},
    ]
    path = tmp_path / "bench.tsv"
    pd.DataFrame(rows).to_csv(path, sep="\t", index=False)
    items = data.load_tsv(path)
    assert items["options"].tolist() == [["cat", "dog"], ["1", "2", "3", "4"]]
    assert items["answer_idx"].tolist() == [1, 3]
    assert items["question"].iloc[1].startswith("Hint: Look closely.")
    assert data.load_image(items["image_ref"].iloc[0]).shape == (40, 40, 3)
    assert json.loads(items["meta"].iloc[0])["index"] == "0"
    rows[0]["answer"] = "C"
    pd.DataFrame(rows).to_csv(path, sep="\t", index=False)
    with pytest.raises(data.ItemTableError, match="index='0'"):
        data.load_tsv(path)


# ----------------------------------------------------------------------------- VLMEvalKit TSV, read-time checks


def _b64(arr):
    return base64.b64encode(_png_bytes(arr)).decode()


def _vlmeval_rows():
    img0 = _b64(np.zeros((24, 24, 3), np.uint8))
    img1 = _b64(np.full((20, 30, 3), 200, np.uint8))
    return [
        {"index": "10", "question": "Q0?", "A": "cat", "B": "dog", "C": "", "D": "", "E": "", "answer": "A",
         "image": img0, "hint": "", "category": "animals", "l2-category": "coarse perception"},
        {"index": "11", "question": "Q1?", "A": "1", "B": "2", "C": "3", "D": "4", "E": "5", "answer": "E",
         "image": "10", "hint": "nan", "category": "count", "l2-category": "fine-grained"},
        {"index": "12", "question": "Q2?", "A": "x", "B": "y", "C": "nan", "D": "", "E": "", "answer": "b",
         "image": img1, "hint": "Look.", "category": "ocr", "l2-category": ""},
    ]


def _write_tsv(tmp_path, rows, name="bench.tsv"):
    path = tmp_path / name
    pd.DataFrame(rows).to_csv(path, sep="\t", index=False)
    return path


def test_tsv_back_references_options_hint_and_categories(tmp_path):
    rows = _vlmeval_rows()
    items = data.load_tsv(_write_tsv(tmp_path, rows))
    assert items.item_id.tolist() == ["bench-10", "bench-11", "bench-12"]
    # index 11's image is the back-reference "10": it gets row 10's image
    assert items.image_ref[1] == items.image_ref[0] == "b64:" + rows[0]["image"]
    assert data.load_image(items.image_ref[1]).shape == (24, 24, 3)
    assert items.options.tolist() == [["cat", "dog"], ["1", "2", "3", "4", "5"], ["x", "y"]]
    assert items.answer_idx.tolist() == [0, 4, 1]
    assert items.question.tolist() == ["Q0?", "Q1?", "Hint: Look.\nQ2?"]  # "nan" hints are absent
    assert items.task.tolist() == ["animals", "count", "ocr"]
    assert items.category.tolist() == ["coarse perception", "fine-grained", "ocr"]  # l2-category, else category
    assert json.loads(items.meta[1]) == {"index": "11", "category": "count", "l2-category": "fine-grained"}


@pytest.mark.parametrize("change,match", [
    (lambda rows: rows[2].update(image="!!notbase64!!" * 8), r"index='12'.*not valid base64"),
    (lambda rows: rows[2].update(image=base64.b64encode(b"not an image at all" * 9).decode()),
     r"index='12'.*not a readable image"),
    (lambda rows: rows[1].update(image="99"), r"index='11'.*refers to index '99', which is not in the table"),
    (lambda rows: rows[1].update(answer=""), r"index='11'.*answer is empty"),
    (lambda rows: rows[0].update(answer="C"), r"index='10' has answer 'C' and 2 options"),
    (lambda rows: rows[1].update(C=""), r"index='11'.*not contiguous"),
])
def test_tsv_row_errors_name_the_row(tmp_path, change, match):
    rows = _vlmeval_rows()
    change(rows)
    with pytest.raises((data.ItemTableError, data.ImageError), match=match):
        data.load_tsv(_write_tsv(tmp_path, rows))


def test_tsv_oversized_image_names_the_row(tmp_path):
    rows = _vlmeval_rows()
    big = np.zeros((8000, 7000), np.uint8)  # 56 Mpx: over MAX_PIXELS, yet a small PNG
    rows[2]["image"] = base64.b64encode(_png_bytes(big)).decode()
    with pytest.raises(data.ImageError, match=r"index='12'.*8000x7000 pixels|index='12'.*7000x8000 pixels"):
        data.load_tsv(_write_tsv(tmp_path, rows))
    with pytest.raises(data.ImageError, match=r"index='10'.*bytes \(limit 40\)"):  # the decoded-size guard
        data.load_tsv(_write_tsv(tmp_path, _vlmeval_rows()), max_image_bytes=40)


def test_tsv_malformed_table_and_missing_columns(tmp_path):
    bad = tmp_path / "bad.tsv"
    bad.write_text("index\tquestion\tA\tB\tanswer\timage\n0\tQ?\tx\ty\tA\timg\n1\tQ?\tx\ty\tA\timg\textra\tmore\n")
    with pytest.raises(data.ItemTableError, match=r"bad.tsv: malformed TSV.*line 3"):
        data.load_tsv(bad)
    rows = [{k: v for k, v in r.items() if k != "answer"} for r in _vlmeval_rows()]
    with pytest.raises(data.ItemTableError, match="column 'answer' is missing"):
        data.load_tsv(_write_tsv(tmp_path, rows))


def test_tsv_multi_image_rows_are_skipped_or_refused(tmp_path):
    rows = _vlmeval_rows()
    rows[2]["image"] = str([rows[0]["image"], rows[0]["image"]])
    with pytest.warns(UserWarning, match="skipped 1 multi-image"):
        assert len(data.load_tsv(_write_tsv(tmp_path, rows))) == 2
    with pytest.raises(data.ItemTableError, match=r"index='12'.*several images"):
        data.load_tsv(_write_tsv(tmp_path, rows), skip_multi_image=False)


def test_nothing_is_half_written(tmp_path):
    rows = _vlmeval_rows()
    rows[2]["image"] = "@@@@" * 20
    out = tmp_path / "out" / "items.parquet"
    with pytest.raises(data.ImageError, match="index='12'"):
        data.save_items(data.load_tsv(_write_tsv(tmp_path, rows)), out)
    assert not out.exists()
    good = data.load_tsv(_write_tsv(tmp_path, _vlmeval_rows()))
    data.save_items(good, out)
    before = out.read_bytes()
    with pytest.raises(data.ItemTableError, match="answer_idx"):
        data.save_items(good.assign(answer_idx=[0, 9, 0]), out)  # invalid: nothing replaces the old file
    assert out.read_bytes() == before and sorted(p.name for p in out.parent.iterdir()) == ["items.parquet"]
    back = pd.read_parquet(out)
    assert back.item_id.tolist() == good.item_id.tolist()


# ----------------------------------------------------------------------------- tables with a column mapping


def test_records_with_a_column_mapping(tmp_path):
    img = _png_bytes(np.full((16, 16, 3), 9, np.uint8))
    (tmp_path / "pic.png").write_bytes(img)
    records = [
        {"qid": "a", "prompt": "Which?", "choice_a": "x", "choice_b": "y", "choice_c": "z", "label": "C",
         "picture": {"bytes": img, "path": None}, "kind": "ocr"},
        {"qid": "b", "prompt": "How many?", "choice_a": "1", "choice_b": "2", "choice_c": None, "label": 1,
         "picture": "pic.png", "kind": "count"},
        {"qid": "c", "prompt": "Colour?", "choice_a": "red", "choice_b": "blue", "choice_c": "", "label": "blue",
         "picture": base64.b64encode(img).decode(), "kind": "colour"},
    ]
    cols = {"id": "qid", "question": "prompt", "options": ["choice_a", "choice_b", "choice_c"], "answer": "label",
            "image": "picture", "task": "kind", "category": "kind"}
    items = data.items_from_records(records, source="set", columns=cols, base=tmp_path)
    assert items.item_id.tolist() == ["set-a", "set-b", "set-c"]
    assert items.options.tolist() == [["x", "y", "z"], ["1", "2"], ["red", "blue"]]
    assert items.answer_idx.tolist() == [2, 1, 1]  # letter, index, answer text
    assert items.image_ref[1] == str((tmp_path / "pic.png").resolve()) and items.image_ref[0].startswith("b64:")
    assert all(data.load_image(r).shape == (16, 16, 3) for r in items.image_ref)
    with pytest.raises(data.ItemTableError, match=r"row 'a'.*column 'nope' \(the answer\) is missing"):
        data.items_from_records(records, source="set", columns={**cols, "answer": "nope"})
    records[1]["label"] = "seven"
    with pytest.raises(data.ItemTableError, match=r"row 'b': answer 'seven'"):
        data.items_from_records(records, source="set", columns=cols, base=tmp_path)
    records[1]["label"] = 1
    records[2]["picture"] = "not-base64-and-no-file!!"
    with pytest.raises(data.ImageError, match=r"row 'c'.*base64"):
        data.items_from_records(records, source="set", columns=cols, base=tmp_path)


def test_parquet_export_of_a_hub_dataset(tmp_path):
    img = _png_bytes(np.full((12, 12, 3), 50, np.uint8))
    table = pd.DataFrame({"question": ["Q?", "R?"], "options": [["p", "q"], ["r", "s", "t"]], "answer": ["B", "t"],
                          "image": [{"bytes": img, "path": None}, {"bytes": img, "path": None}],
                          "category": ["a", "b"]})
    path = tmp_path / "export.parquet"
    table.to_parquet(path)
    items = data.load_parquet(path)  # the default mapping: question, options, answer, image, category
    assert items.answer_idx.tolist() == [1, 2] and items.category.tolist() == ["a", "b"]
    assert data.load_image(items.image_ref[1]).shape == (12, 12, 3)


def test_hf_dataset_through_the_mapping(monkeypatch):
    import sys
    import types

    from PIL import Image

    img = Image.fromarray(np.full((10, 10, 3), 7, np.uint8))
    rows = [{"question": "Q?", "options": ["a", "b"], "answer": 1, "image": img, "category": "c1"}]
    fake = types.SimpleNamespace(load_dataset=lambda name, split, cache_dir=None: rows)
    monkeypatch.setitem(sys.modules, "datasets", fake)
    items = data.load_hf_dataset("org/set", "val")
    assert items.item_id.tolist() == ["org_set-val-0"] and items.answer_idx.tolist() == [1]
    assert data.load_image(items.image_ref[0]).shape == (10, 10, 3)
