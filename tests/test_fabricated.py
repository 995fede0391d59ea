"""The fabricated real-format files (vlmrobust.dry.fabricate) and the loaders that read them.

Every expectation about a file is read from the raw file itself (pandas on the TSV, json on the COCO
file, PIL on the images), so a test fails when the loader misreads what the file holds, or when the
file does not hold what the variants need.
"""

from __future__ import annotations

import ast
import base64
import io
import json
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from PIL import Image

from vlmrobust import data, depth, paths, sweep
from vlmrobust.data import loaders
from vlmrobust.dry import fabricate as fab

TSVS = [*fab.BENCHES, fab.POPE]


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> dict[str, Path]:
    return fab.fabricate_all(tmp_path_factory.mktemp("fabricated"))


def _raw(path: Path) -> pd.DataFrame:
    return pd.read_csv(path, sep="\t", dtype=str, keep_default_na=False)


def _load(path: Path, **kw) -> pd.DataFrame:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return data.load_tsv(path, **kw)


def _resolved(raw: pd.DataFrame) -> dict[str, str]:
    """index -> the row's image value with VLMEvalKit's back-references followed."""
    img = dict(zip(raw["index"], raw["image"], strict=True))
    return {k: img[v] if len(v) <= 64 else v for k, v in img.items()}


def _decode(b64: str) -> np.ndarray:
    return np.asarray(Image.open(io.BytesIO(base64.b64decode(b64))).convert("RGB"))


def _variant_data_paths() -> set[str]:
    out: set[str] = set()
    for f in sorted(paths.params_dir().glob("*/paper.yaml")):
        p = yaml.safe_load(f.read_text()) or {}
        out |= {s for s in p.get("pool_sources", []) + p.get("cross_sources", [])}
        out |= {p[k] for k in ("items_source", "pope_source", "coco_annotations", "coco_images")
                if isinstance(p.get(k), str) and "/" in p[k]}
    return out


def _tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_keys_are_the_variants_data_paths_and_the_dry_mapping(files):
    assert set(files) == _variant_data_paths()
    mapping = yaml.safe_load((paths.params_dir() / "paper_dry.yaml").read_text())["data"]
    assert set(mapping.values()) <= set(files)
    assert all(p.exists() for p in files.values()) and files[fab.COCO_IMAGES].is_dir()


def test_same_seed_same_bytes_other_seed_other_bytes(tmp_path):
    a, b, c = (fab.fabricate_all(tmp_path / name, seed=s) for name, s in (("a", 0), ("b", 0), ("c", 1)))
    ta, tb = _tree(tmp_path / "a"), _tree(tmp_path / "b")
    assert ta == tb and len(ta) >= len(TSVS) + 2
    for key in [*TSVS, fab.COCO_ANNOTATIONS]:
        assert a[key].read_bytes() != c[key].read_bytes(), key
    fab.fabricate_all(tmp_path / "c", seed=0)  # rewriting a folder leaves no stale image behind
    assert _tree(tmp_path / "c") == ta


@pytest.mark.parametrize("key", TSVS)
def test_each_tsv_reads_through_item_source(files, key):
    path, raw = files[key], _raw(files[key])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        items = sweep.item_source(str(path))
    res = _resolved(raw)
    letters = [c for c in "ABCDEFGHI" if c in raw.columns]
    n_opts = {r["index"]: sum(bool(r[c].strip()) for c in letters) for r in raw.to_dict("records")}
    n_img = {k: len(ast.literal_eval(v)) if v.startswith("[") else 1 for k, v in res.items()}
    multi = sum(n > 1 for n in n_img.values())
    tiled = multi if loaders.multi_image_mode(path) == "tile" else 0
    yes_no = {k for k, a in zip(raw["index"], raw["answer"], strict=True) if n_opts[k] == 0 and a in ("Yes", "No")}
    open_ = sum(n_opts[k] == 0 and k not in yes_no and (n_img[k] == 1 or tiled) for k in n_img)
    over = sum(n_opts[k] > 5 and (n_img[k] == 1 or tiled) for k in n_img)
    assert items.attrs["multi_image_skipped"] == multi - tiled
    assert items.attrs["multi_image_tiled"] == tiled
    assert (items.attrs["open_skipped"], items.attrs["over_options_skipped"]) == (open_, over)
    assert len(items) == len(raw) - (multi - tiled) - open_ - over
    kept = raw.set_index("index").loc[[json.loads(m)["index"] for m in items.meta]]
    assert items.task.tolist() == kept["category"].tolist()  # categories kept
    l2 = kept["l2-category"] if "l2-category" in kept else kept["category"]
    assert items.category.tolist() == [b or a for a, b in zip(kept["category"], l2, strict=True)]
    for idx, ref, opts, ans in zip(kept.index, items.image_ref, items.options, items.answer_idx, strict=True):
        if n_img[idx] == 1:  # back-references resolved to the row holding the image
            assert ref == "b64:" + res[idx]
        if idx in yes_no:
            assert list(opts) == ["Yes", "No"] and ans == ["Yes", "No"].index(kept.loc[idx, "answer"])
        else:
            assert ans == "ABCDE".index(kept.loc[idx, "answer"]) and list(opts) == [
                kept.loc[idx, c] for c in letters[: len(opts)]]


@pytest.mark.parametrize("key,backrefs,multi", [
    ("~/LMUData/SEEDBench2_Plus.tsv", 4, 0), ("~/LMUData/MMBench_DEV_EN_V11.tsv", 2, 0),
    ("data/SEEDBench_IMG.tsv", 2, 0), (fab.POPE, 9, 0), ("~/LMUData/LEGO.tsv", 0, 4), ("data/MMMU_DEV_VAL.tsv", 0, 3),
])
def test_files_hold_back_references_and_image_lists(files, key, backrefs, multi):
    raw = _raw(files[key])
    assert sum(len(v) <= 64 for v in raw["image"]) == backrefs
    assert sum(v.startswith("[") for v in raw["image"]) == multi


def test_seedbench_has_the_nine_dimensions_and_pope_both_answers(files):
    seed = _raw(files["data/SEEDBench_IMG.tsv"])
    assert seed["category"].nunique() == 9 and {"Spatial Relation", "Instances Counting"} <= set(seed["category"])
    pope = _load(files[fab.POPE])
    assert set(pope.answer_idx) == {0, 1} and set(pope.task) == {"adversarial"}
    bruce = _load(files["data/bruce.tsv"])
    assert set(bruce.task) == {"ScienceQA-Chemistry", "MMJEE-Chemistry-MCQ", "MathVista-MCQ"}


def test_mmmu_multi_image_rows_are_tiled_in_order(files):
    path = files["data/MMMU_DEV_VAL.tsv"]
    raw, items = _raw(path).set_index("index"), _load(path)
    tiled = items[items.meta.str.contains('"images"')]
    assert len(tiled) == 3
    for r in tiled.itertuples():
        meta = json.loads(r.meta)
        parts = [_decode(b) for b in ast.literal_eval(raw.loc[meta["index"], "image"])]
        tile = data.load_image(r.image_ref)
        assert meta["images"] == len(parts) and tile.shape == (max(p.shape[0] for p in parts),
                                                               sum(p.shape[1] for p in parts), 3)
        x = 0
        for p in parts:  # each component, in order, centred vertically
            top = (tile.shape[0] - p.shape[0]) // 2
            assert np.array_equal(tile[top:top + p.shape[0], x:x + p.shape[1]], p)
            x += p.shape[1]
        assert f"<image {len(parts)}>" in r.question and meta["split"] == "validation"
    assert {json.loads(m).get("split") for m in items.meta} == {"dev", "validation"}


def test_multi_image_modes(files):
    lego, mmmu = files["~/LMUData/LEGO.tsv"], files["data/MMMU_DEV_VAL.tsv"]
    assert (loaders.multi_image_mode(lego), loaders.multi_image_mode(mmmu)) == ("skip", "tile")
    with pytest.warns(UserWarning, match="skipped 4 multi-image"):
        assert data.load_tsv(lego).attrs["multi_image_skipped"] == 4
    with pytest.raises(data.ItemTableError, match="several images"):
        data.load_tsv(lego, skip_multi_image=False)
    assert _load(lego, multi_image="tile").attrs["multi_image_tiled"] == 4
    assert _load(mmmu, skip_multi_image=False).attrs["multi_image_tiled"] == 3
    assert _load(mmmu, multi_image="skip").attrs["multi_image_skipped"] == 3


def test_lowercase_yes_no_answers_read_as_the_pair(tmp_path, files):
    raw = _raw(files[fab.POPE])
    raw["answer"] = raw["answer"].str.lower()
    raw.to_csv(tmp_path / "POPE.tsv", sep="\t", index=False)
    items = _load(tmp_path / "POPE.tsv")
    assert items.options.map(list).tolist() == [["Yes", "No"]] * len(raw)
    assert items.answer_idx.tolist() == [0 if a == "yes" else 1 for a in raw["answer"]]


def test_coco_file_layout(files):
    doc = json.loads(files[fab.COCO_ANNOTATIONS].read_text())
    assert list(doc) == ["info", "licenses", "images", "annotations", "categories"]
    assert all({"supercategory", "id", "name"} == set(c) for c in doc["categories"])
    assert {im["file_name"] for im in doc["images"]} == {p.name for p in files[fab.COCO_IMAGES].glob("*")}
    for a in doc["annotations"]:
        assert {"segmentation", "area", "iscrowd", "image_id", "bbox", "category_id", "id"} == set(a)
        assert 0 < a["area"] <= a["bbox"][2] * a["bbox"][3]
    assert sum(a["iscrowd"] for a in doc["annotations"]) == 1


def test_real_scenes_read_the_coco_file_with_objects_inside_their_boxes(files, tmp_path):
    doc = json.loads(files[fab.COCO_ANNOTATIONS].read_text())
    anns = {a["id"]: a for a in doc["annotations"]}
    rgb = {cid: np.array(c) for cid, _, _, c in fab.COCO_CATEGORIES}
    size = {im["id"]: (im["width"], im["height"]) for im in doc["images"]}
    usable = {a["image_id"] for a in anns.values() if not a["iscrowd"]
              and a["bbox"][2] * a["bbox"][3] >= 0.01 * np.prod(size[a["image_id"]])}
    assert 6 <= len(usable) < len(doc["images"])  # notebook 06's dry scale needs 6; the tiny-object image is out
    scenes = depth.real_scenes(files[fab.COCO_ANNOTATIONS], files[fab.COCO_IMAGES], len(usable), 1,
                               depth.make_provider("plane"), root=tmp_path, progress=False)
    assert {json.loads(m)["image_id"] for m in scenes.meta} == usable
    for s in scenes.itertuples():
        meta = json.loads(s.meta)
        ann, (w, h) = anns[meta["annotation_id"]], size[meta["image_id"]]
        x, y, bw, bh = ann["bbox"]
        x0, y0, x1, y1 = s.box
        assert not ann["iscrowd"] and 0 <= x0 <= x and 0 <= y0 <= y and x + bw - 1 <= x1 < w and y + bh - 1 <= y1 < h
        img = data.load_image(s.clean_ref).astype(int)
        assert img.shape == (h, w, 3) and np.isfinite(s.target_distance_m) and s.target_distance_m >= 10.0
        near = np.abs(img - rgb[ann["category_id"]]).max(axis=-1) <= 40
        inside = np.zeros((h, w), bool)
        inside[int(y):int(y + bh), int(x):int(x + bw)] = True
        assert near[inside].mean() > 0.6 and near[~inside].sum() <= 0.02 * near.sum()  # the object is in its box
        assert s.object == {c["id"]: c["name"] for c in doc["categories"]}[ann["category_id"]]
