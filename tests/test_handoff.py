"""The notebooks' hand-off: model and item-source parameters, and predictions through the shared shard cache."""

from __future__ import annotations

import base64
import io
import json

import numpy as np
import pandas as pd
import pytest
import torch
import twins
from PIL import Image

from vlmrobust import paths, schema, sweep, synth
from vlmrobust.models import zoo
from vlmrobust.params import ParameterError

torch.set_num_threads(1)


# ----------------------------------------------------------------------------- models


def test_empty_models_mean_the_default_role():
    assert sweep.resolve_models([]) == zoo.names("evaluated")
    assert sweep.resolve_models([], default="selector") == zoo.names("selector")
    assert sweep.resolve_models([], default=schema.ROLES) == zoo.names()


def test_models_accept_names_roles_folders_and_hub_ids(tmp_path, monkeypatch):
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)  # a hub id passes when the hub may be reached
    monkeypatch.setattr("vlmrobust.models.hub_reachable", lambda: True)
    model, proc = twins.tiny_llava()
    folder = str(twins.save_twin(model, proc, tmp_path / "twin"))
    name = zoo.names("evaluated")[0]
    got = sweep.resolve_models([name, "role:selector", folder, "org/some-vlm"])
    assert got == [name, *zoo.names("selector"), folder, "org/some-vlm"]


@pytest.mark.parametrize("value,match", [
    ("tiny-long", "must be a list"),
    (["no-such-organism"], r"models\[0\]"),
    (["role:judge"], "unknown role"),
    ([""], "non-empty string"),
    ([3], "non-empty string"),
])
def test_bad_models_name_the_parameter(value, match):
    with pytest.raises(ParameterError, match=match):
        sweep.resolve_models(value)


def test_an_uncached_hub_model_offline_stops_in_the_resolve_step(monkeypatch, tmp_path):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    with pytest.raises(ParameterError, match=r"models\[0\]' = 'org/some-vlm' is a hub model that is not in the local"):
        sweep.resolve_models(["org/some-vlm"])


@pytest.mark.parametrize("hub_id", ["vikhyatk/moondream2", "AIDC-AI/Ovis2-1B"])
def test_a_remote_code_model_stops_in_the_resolve_step_naming_a_native_alternative(hub_id):
    from vlmrobust.models import REMOTE_CODE

    with pytest.raises(ParameterError, match="trust_remote_code") as err:
        sweep.resolve_models(["tiny-letters", hub_id], param="selectors")
    assert "selectors[1]" in str(err.value) and REMOTE_CODE[hub_id] in str(err.value)


def test_an_unreachable_hub_stops_in_the_resolve_step(monkeypatch, tmp_path):
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    monkeypatch.setattr("vlmrobust.models.hub_reachable", lambda: False)
    with pytest.raises(ParameterError, match="the hub cannot be reached"):
        sweep.resolve_models(["org/some-vlm"])


def test_repeated_models_are_refused():
    name = zoo.names("selector")[0]
    with pytest.raises(ParameterError, match="twice"):
        sweep.resolve_models([name, "role:selector"])


# ----------------------------------------------------------------------------- item sources


def _png_b64(seed: int) -> str:
    arr = np.random.default_rng(seed).integers(0, 255, (16, 16, 3), dtype=np.uint8)
    buf = io.BytesIO()
    Image.fromarray(arr).save(buf, format="PNG")
    return base64.b64encode(buf.getvalue()).decode()


def test_item_sources_share_one_schema(tmp_path):
    synthetic = sweep.item_source("synth", n_per_family=1, seed=3, families=["colour", "verify"])
    assert list(synthetic.columns) == list(schema.ITEM_COLUMNS) and len(synthetic) == 2
    tsv = tmp_path / "bench.tsv"
    pd.DataFrame({"index": [0, 1], "question": ["Which?", "Which now?"], "A": ["x", "p"], "B": ["y", "q"],
                  "answer": ["B", "A"], "image": [_png_b64(0), _png_b64(1)]}).to_csv(tsv, sep="\t", index=False)
    from_tsv = sweep.item_source(str(tsv), max_items=1)
    assert list(from_tsv.columns) == list(schema.ITEM_COLUMNS) and from_tsv.answer_idx.tolist() == [1]
    saved = tmp_path / "split.parquet"
    synthetic.to_parquet(saved)
    back = sweep.item_source(str(saved))
    assert back.item_id.tolist() == synthetic.item_id.tolist() and back.options.map(list).tolist() == \
        synthetic.options.tolist()
    import importlib.util

    if importlib.util.find_spec("datasets") is None:  # the `paper` extra is not installed
        with pytest.raises(ParameterError, match="needs the 'datasets' package"):
            sweep.item_source_kind("hf:org/set:val")
    else:
        assert sweep.item_source_kind("hf:org/set:val") == ("hf", "org/set:val")


@pytest.mark.parametrize("value,match", [
    ("", "must be 'synth'"),
    ("items.csv", "use 'synth'"),
    ("missing.tsv", "no file"),
    ("hf:", "names no dataset"),
    ("split:", "split name must match"),
    ("split:a/b", "split name must match"),
    ("split:never-saved", "no saved split"),
])
def test_bad_item_sources_name_the_parameter(value, match, out_roots):
    with pytest.raises(ParameterError, match=match) as exc:
        sweep.item_source_kind(value)
    assert "items_source" in str(exc.value)


def test_a_saved_split_is_an_item_source(out_roots):
    from vlmrobust import data
    from vlmrobust.analysis import selection
    from vlmrobust.data import splits

    pool = sweep.item_source("synth", n_per_family=2, seed=4, families=["colour", "count"])
    rng = np.random.default_rng(0)
    G = np.zeros((len(pool), 1, 2))
    G[::2, 0, 0] = 0.96  # half the pool responds
    sel = selection.select(G, rng.standard_normal((len(pool), 4)), rng.standard_normal((len(pool), 4)), pool.item_id)
    splits.save_split("mini", pool, sel)
    assert (out_roots[0] / "splits" / "mini.parquet").is_file()
    items = sweep.item_source("split:mini")
    assert list(items.columns) == list(schema.ITEM_COLUMNS)
    assert items.item_id.tolist() == pool.item_id[sel.selected].tolist() and 0 < len(items) < len(pool)
    # the same items as the pool's rows: predictions on them hit the same content keys
    assert data.items_digest(items) == data.items_digest(pool[sel.selected].reset_index(drop=True))


# ----------------------------------------------------------------------------- predictions


@pytest.fixture
def tiny_items():
    return synth.generate(1, 11, families=["colour", "shape"])


def test_two_notebooks_share_the_cached_shards(out_roots, tiny_items):
    model = zoo.names("evaluated")[0]
    first = sweep.predictions([model], tiny_items, {"gaussian_noise": [1]}, seed=0, progress=False)
    assert set(first.shards.status) == {"done"}
    cache = paths.shards_dir()
    assert first.out_dir == cache and cache.parent == out_roots[0]
    files = sorted(p.name for p in cache.iterdir())
    # another notebook asking for a subset (the clean shard only) reads it from the cache
    second = sweep.predictions([model], tiny_items, {}, seed=0, progress=False)
    assert list(second.shards.status) == ["cached"] and sorted(p.name for p in cache.iterdir()) == files
    clean = first.table[first.table.perturbation == schema.CLEAN].reset_index(drop=True)
    pd.testing.assert_frame_equal(second.table, clean)
    assert list(first.table.columns) == list(schema.PRED_COLUMNS)
    assert sorted(p.name for p in out_roots[0].iterdir()) == ["shards"]  # nothing written anywhere else


def test_a_failed_shard_stops_with_its_error_and_keeps_the_others(out_roots, tiny_items):
    model = zoo.names("evaluated")[0]
    bad = tiny_items.copy()
    bad.loc[1, "image_ref"] = "b64:not-an-image"
    with pytest.raises(sweep.SweepFailed, match=r"2 of 2 sweep shard\(s\) failed") as exc:
        sweep.predictions([model], bad, {"gaussian_noise": [1]}, seed=0, progress=False)
    assert "error.json" in str(exc.value) and "not valid base64" in str(exc.value)
    errors = list(paths.shards_dir().glob("*.error.json"))
    assert len(errors) == 2 and "synth-s11-shape-00000" in json.loads(errors[0].read_text())["error"] + \
        json.loads(errors[1].read_text())["error"]
    partial = sweep.predictions([model], bad, {"gaussian_noise": [1]}, seed=0, progress=False, allow_failed=True)
    assert len(partial.failed) == 2 and partial.table.empty
    good = sweep.predictions([model], tiny_items, {"gaussian_noise": [1]}, seed=0, progress=False)
    assert set(good.shards.status) == {"done"} and len(good.table) == 2 * len(tiny_items)


def test_a_probe_sweep_through_the_hand_off_shares_the_cache(out_roots, tiny_items):
    from vlmrobust import probes

    model = zoo.names("evaluated")[0]
    spec = probes.ProbeSpec(max_new_tokens=2, n_control=1)
    res = sweep.predictions([model], tiny_items, {"translate": [1]}, seed=0, progress=False, probes=spec)
    assert set(res.shards.status) == {"done"} and list(res.table.columns) == list(schema.PRED_COLUMNS)
    assert set(res.probes.kind) == {"state", "floor", "control", "drift"}
    again = sweep.predictions([model], tiny_items, {"translate": [1]}, seed=0, progress=False, probes=spec)
    assert set(again.shards.status) == {"cached"}
    plain = sweep.predictions([model], tiny_items, {"translate": [1]}, seed=0, progress=False)
    assert set(plain.shards.status) == {"done"} and plain.probes is None  # prediction shards are a kind of their own
    assert (plain.table.pred_idx.to_numpy() == res.table.pred_idx.to_numpy()).all()


def test_notebook_client_is_none_in_process_and_one_local_cluster_for_dask():
    from vlmrobust import sweep

    assert sweep.notebook_client("local", "", 2) is None
    client = sweep.notebook_client("dask", "", 1)
    try:
        assert len(client.scheduler_info()["workers"]) == 1
        assert client.cluster.scheduler_address.startswith("tcp://127.0.0.1")
    finally:
        cluster = client.cluster
        client.close()
        cluster.close()
