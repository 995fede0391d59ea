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
