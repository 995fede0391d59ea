"""Tests of vlmrobust.sweep: shard keys, atomic writes, resume after interruption, failures, Dask."""

from __future__ import annotations

import itertools
import json
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch
import twins

from vlmrobust import sweep
from vlmrobust.sweep import run as sweep_run

torch.set_num_threads(1)
TESTS = Path(__file__).resolve().parent

ITEMS = pd.DataFrame({
    "item_id": [f"q{i}" for i in range(4)],
    "task": ["colour", "colour", "shape", "verify"],
    "category": ["attr", "attr", "attr", "binary"],
    "question": ["What colour is the object?", "What colour is the object?", "Which shape is this?",
                 "Is there a red circle?"],
    "options": [["red", "green", "blue", "yellow"], ["blue", "red", "yellow", "green"],
                ["red square", "green circle", "blue star", "yellow triangle"], ["yes", "no"]],
    "answer_idx": [0, 1, 2, 0],
    "image_ref": [f"fake://{i}" for i in range(4)],
    "depth_ref": [None] * 4,
    "abstain_idx": [-1] * 4,
})
CONDITIONS = {"noise": [1, 2], "blur": [1, 2], "fog": [3]}
INJECT = dict(corrupt_fn=twins.fake_corrupt, image_fn=twins.fake_image, param_fn=twins.fake_param)


@pytest.fixture(scope="module")
def model_dirs(tmp_path_factory):
    root = tmp_path_factory.mktemp("models")
    out = []
    for seed, fmt in ((0, "letters"), (1, "text")):
        model, proc = twins.tiny_llava(seed=seed)
        out.append(str(twins.save_twin(model, proc, root / f"twin{seed}", answer_format=fmt)))
    return out


def _spec(model_dirs, **kw) -> sweep.SweepSpec:
    base = dict(models=model_dirs, items=ITEMS, conditions=CONDITIONS, torch_threads=1)
    base.update(kw)
    return sweep.SweepSpec(**base)


@pytest.fixture(scope="module")
def reference(model_dirs, tmp_path_factory):
    out = tmp_path_factory.mktemp("reference")
    res = sweep.run_sweep(_spec(model_dirs), out, progress=False, **INJECT)
    return res


def test_reference_table_shape_and_summary(reference):
    res = reference
    n_levels = 1 + 2 + 2 + 1
    assert len(res.table) == 2 * len(ITEMS) * n_levels  # one default method per model
    assert set(res.table.method) == {"letter", "loglik"}  # letters model -> letter, text model -> loglik
    assert list(res.shards.status) == ["done"] * 8
    assert res.table[res.table.perturbation == "clean"].param.isna().all()
    assert (res.table[res.table.perturbation == "noise"].param.unique() == [0.5, 1.0]).all()
    s = res.summary()
    assert s["rows"] == len(res.table) and s["done"] == 8 and s["failed"] == 0 and s["items_per_s"] > 0
    files = sorted(p.name for p in res.out_dir.iterdir())
    assert len(files) == 8 and all(f.endswith(".parquet") for f in files)


def test_rerun_skips_finished_shards(model_dirs, reference, monkeypatch):
    calls = []
    monkeypatch.setattr(sweep_run, "_load_model", lambda *a: calls.append(a))
    res = sweep.run_sweep(_spec(model_dirs), reference.out_dir, progress=False, **INJECT)
    assert calls == [] and set(res.shards.status) == {"cached"}
    pd.testing.assert_frame_equal(res.table, reference.table)


def test_shard_keys_hash_everything_that_determines_them(model_dirs):
    base = {(s.model, s.perturbation): s.key for s in sweep.plan(_spec(model_dirs), twins.fake_param)}
    assert len(set(base.values())) == len(base)
    assert base == {(s.model, s.perturbation): s.key for s in sweep.plan(_spec(model_dirs), twins.fake_param)}
    same = {(s.model, s.perturbation): s.key for s in sweep.plan(_spec(model_dirs, batch_size=3), twins.fake_param)}
    assert same == base  # batching does not change results
    items2 = ITEMS.copy()
    items2.at[0, "question"] = "What color is the object?"
    for change in (dict(template="seed003"), dict(seed=1), dict(items=items2), dict(methods=["letter"]),
                   dict(n_samples=5), dict(dtype="bfloat16"), dict(revisions={model_dirs[0]: "abc"})):
        keys = {(s.model, s.perturbation): s.key for s in sweep.plan(_spec(model_dirs, **change), twins.fake_param)}
        changed = {k for k in base if keys[k] != base[k]}
        if "revisions" in change:
            assert changed == {k for k in base if k[0] == model_dirs[0]}
        else:
            assert changed == set(base), change
    levels = {(s.model, s.perturbation): s.key
              for s in sweep.plan(_spec(model_dirs, conditions={**CONDITIONS, "fog": [2]}), twins.fake_param)}
    assert {k for k in base if levels[k] != base[k]} == {(m, "fog") for m in model_dirs}
    params = {(s.model, s.perturbation): s.key for s in sweep.plan(_spec(model_dirs), lambda n, lv: 7.0 * lv)}
    assert {k for k in base if params[k] != base[k]} == {k for k in base if k[1] != "clean"}


def test_model_weights_change_the_key(tmp_path):
    model, proc = twins.tiny_llava(seed=0)
    folder = twins.save_twin(model, proc, tmp_path / "m")
    spec = sweep.SweepSpec(models=[str(folder)], items=ITEMS, conditions={})
    before = sweep.plan(spec)[0].key
    model2, _ = twins.tiny_llava(seed=5)
    model2.save_pretrained(folder)
    assert sweep.plan(spec)[0].key != before


def test_failing_shards_are_recorded_and_others_unaffected(model_dirs, reference, tmp_path):
    def garble(image, name, level, **kw):
        if name == "garble":
            return image.astype(np.float32)  # not uint8: the scorer rejects it, naming the item
        return twins.fake_corrupt(image, name, level, **kw)

    spec = _spec(model_dirs, conditions={"noise": [1, 2], "broken": [1], "garble": [1]})
    res = sweep.run_sweep(spec, tmp_path, progress=False, corrupt_fn=garble, image_fn=twins.fake_image,
                          param_fn=twins.fake_param)
    st = res.shards.set_index(["model", "perturbation"]).status
    assert (st.xs("broken", level=1) == "failed").all() and (st.xs("garble", level=1) == "failed").all()
    assert (st.xs("noise", level=1) == "done").all() and (st.xs("clean", level=1) == "done").all()
    errors = sorted(tmp_path.glob("*.error.json"))
    assert len(errors) == 4
    msgs = [json.loads(p.read_text())["error"] for p in errors]
    assert sum("this corruption always fails" in m for m in msgs) == 2
    assert sum("item 'q0': corrupt image" in m for m in msgs) == 2
    want = reference.table[reference.table.perturbation.isin(["clean", "noise"])].reset_index(drop=True)
    pd.testing.assert_frame_equal(res.table, want)
    again = sweep.run_sweep(spec, tmp_path, progress=False, corrupt_fn=garble, image_fn=twins.fake_image,
                            param_fn=twins.fake_param)
    assert set(again.shards[again.shards.status != "failed"].status) == {"cached"}
    assert (again.shards.status == "failed").sum() == 4  # failed shards are retried, and fail again


class _Interrupt:
    """A corruption function that raises KeyboardInterrupt at its n-th call."""

    def __init__(self, n: int):
        self.n, self.calls = n, 0

    def __call__(self, *a, **kw):
        self.calls += 1
        if self.calls == self.n:
            raise KeyboardInterrupt
        return twins.fake_corrupt(*a, **kw)


def test_interrupted_runs_resume_to_the_same_table(model_dirs, reference, tmp_path, monkeypatch):
    rng = np.random.default_rng(2024)
    total_calls = 2 * len(ITEMS) * 5  # 2 models x 4 items x 5 corrupted levels
    for trial in range(6):
        out = tmp_path / f"t{trial}"
        spec = _spec(model_dirs)
        if trial < 5:  # interrupt at a random corruption call, possibly more than once
            for n in sorted(rng.integers(1, total_calls, size=1 + trial % 2)):
                with pytest.raises(KeyboardInterrupt):
                    sweep.run_sweep(spec, out, progress=False, corrupt_fn=_Interrupt(int(n)),
                                    image_fn=twins.fake_image, param_fn=twins.fake_param)
        else:  # interrupt between writing the temporary file and renaming it
            real = sweep_run.os.replace

            counter = itertools.count(1)

            def flaky(src, dst, counter=counter, real=real):
                if next(counter) == 3:
                    raise KeyboardInterrupt
                return real(src, dst)

            monkeypatch.setattr(sweep_run.os, "replace", flaky)
            with pytest.raises(KeyboardInterrupt):
                sweep.run_sweep(spec, out, progress=False, **INJECT)
            monkeypatch.setattr(sweep_run.os, "replace", real)
            assert len(list(out.glob("*.parquet"))) == 2 and not list(out.glob(".*tmp*"))
        partial = len(list(out.glob("*.parquet")))
        assert partial < 8
        res = sweep.run_sweep(spec, out, progress=False, **INJECT)
        assert (res.shards.status == "cached").sum() == partial
        pd.testing.assert_frame_equal(res.table, reference.table)


SCRIPT = """
import sys, time
sys.path.insert(0, {tests!r})
import numpy as np, pandas as pd, torch
torch.set_num_threads(1)
import twins
from vlmrobust import sweep
from test_sweep import ITEMS, CONDITIONS

def slow(image, name, level, **kw):
    time.sleep(0.1)
    return twins.fake_corrupt(image, name, level, **kw)

spec = sweep.SweepSpec(models={models!r}, items=ITEMS, conditions=CONDITIONS, torch_threads=1)
print("started", flush=True)
sweep.run_sweep(spec, sys.argv[1], progress=False, corrupt_fn=slow, image_fn=twins.fake_image,
                param_fn=twins.fake_param)
print("finished", flush=True)
"""


def test_killed_process_resumes_to_the_same_table(model_dirs, reference, tmp_path):
    script = tmp_path / "run_sweep.py"
    script.write_text(textwrap.dedent(SCRIPT.format(tests=str(TESTS), models=model_dirs)))
    rng = np.random.default_rng(7)
    out = tmp_path / "out"
    for _trial in range(2):
        proc = subprocess.Popen([sys.executable, str(script), str(out)], stdout=subprocess.PIPE, text=True)
        assert proc.stdout.readline().strip() == "started"
        time.sleep(float(rng.uniform(0.3, 1.5)))
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    assert len(list(out.glob("*.parquet"))) < 8  # the kills landed before the end
    res = sweep.run_sweep(_spec(model_dirs), out, progress=False, **INJECT)
    pd.testing.assert_frame_equal(res.table, reference.table)


@pytest.fixture(scope="module")
def dask_client():
    """One local Dask cluster (two worker processes) for the module's Dask tests."""
    from dask.distributed import Client

    with sweep.local_cluster(2) as cluster, Client(cluster) as client:
        client.run(lambda p: sys.path.insert(0, p) if p not in sys.path else None, str(TESTS))
        yield client


def test_local_cluster_workers_keep_glibcs_adaptive_malloc(dask_client):
    import os

    import dask

    assert "MALLOC_TRIM_THRESHOLD_" in dask.config.get("distributed.nanny.pre-spawn-environ")  # Dask sets it
    env = dask_client.run(lambda: (os.environ.get("MALLOC_TRIM_THRESHOLD_"), os.environ.get("OMP_NUM_THREADS")))
    assert list(env.values()) == [(None, "1")] * 2
    assert len(dask_client.scheduler_info()["workers"]) == 2
    with pytest.raises(ValueError, match="n_workers"):
        sweep.local_cluster(0)


def test_a_scheduler_address_runs_the_sweep_there(model_dirs, reference, tmp_path, dask_client):
    from vlmrobust.params import ParameterError

    address = dask_client.scheduler.address
    assert sweep.check_scheduler(address) == address and sweep.check_scheduler("  ") == ""
    with pytest.raises(ParameterError, match="not a scheduler address"):
        sweep.check_scheduler("my cluster")
    with pytest.raises(ParameterError, match="executor"):
        sweep.check_scheduler(address, executor="local")
    with pytest.raises(ParameterError, match="no Dask scheduler answers"):
        sweep.check_scheduler("tcp://127.0.0.1:9", timeout=1)
    with pytest.raises(ParameterError, match="string"):
        sweep.check_scheduler(8786)
    res = sweep.run_sweep(_spec(model_dirs), tmp_path, executor="dask", client=address, progress=False, **INJECT)
    pd.testing.assert_frame_equal(res.table, reference.table)


def test_dask_executor_gives_the_same_table(model_dirs, reference, tmp_path, dask_client):
    res = sweep.run_sweep(_spec(model_dirs), tmp_path, executor="dask", client=dask_client, progress=False, **INJECT)
    assert list(res.shards.status) == ["done"] * 8
    pd.testing.assert_frame_equal(res.table, reference.table)


def test_spec_validation_names_the_field(model_dirs):
    with pytest.raises(ValueError, match="models"):
        sweep.plan(_spec([]))
    with pytest.raises(ValueError, match="conditions"):
        sweep.plan(_spec(model_dirs, conditions={"noise": [1.5]}))
    with pytest.raises(ValueError, match="template"):
        sweep.plan(_spec(model_dirs, template="nope"))
    with pytest.raises(ValueError, match="duplicated item_id"):
        sweep.plan(_spec(model_dirs, items=pd.concat([ITEMS, ITEMS])))
    with pytest.raises(ValueError, match="executor"):
        sweep.run_sweep(_spec(model_dirs), "/tmp/unused", executor="ray")


def test_sweep_with_the_real_corruptions_and_synthetic_items(model_dirs, tmp_path):
    from vlmrobust import corrupt, synth

    items = synth.generate(1, seed=0, families=["colour", "verify"])
    spec = sweep.SweepSpec(models=model_dirs[:1], items=items,
                           conditions={"gaussian_noise": [1, 5], "fog_physical": [8]}, torch_threads=1)
    res = sweep.run_sweep(spec, tmp_path, progress=False)
    assert list(res.shards.status) == ["done"] * 3, res.shards.error.tolist()
    t = res.table
    assert len(t) == len(items) * 4
    fog = t[t.perturbation == "fog_physical"]
    assert np.allclose(fog.param, corrupt.info("fog_physical").param(8))
    assert np.allclose(t[t.perturbation == "gaussian_noise"].param.sort_values().to_numpy(),
                       sorted([corrupt.info("gaussian_noise").param(1), corrupt.info("gaussian_noise").param(5)] * 2))


def test_overlays_show_only_letters_other_than_the_clean_prediction(model_dirs, tmp_path):
    from vlmrobust import corrupt

    spec = _spec(model_dirs, conditions={"text_overlay": [1, 2, 3, 4, 5]})
    res = sweep.run_sweep(spec, tmp_path, progress=False, **INJECT)
    t = res.table
    base = t[t.perturbation == "clean"].set_index(["model", "item_id"]).pred_idx
    over = t[t.perturbation == "text_overlay"]
    for (model, item), g in over.groupby(["model", "item_id"]):
        k = int(g.K.iloc[0])
        want = corrupt.overlay_levels(int(base[(model, item)]), k)
        assert sorted(g.level) == want and len(g) <= 3 and (g.level <= k).all()
        assert base[(model, item)] + 1 not in set(g.level)
    shards = {s.perturbation: s for s in sweep.plan(spec, twins.fake_param)}
    assert shards["text_overlay"].clean == shards["clean"].filename
    every = {s.perturbation: s for s in sweep.plan(_spec(model_dirs, conditions={"text_overlay": [1, 2, 3, 4, 5]},
                                                          overlay_rule="all"), twins.fake_param)}
    assert every["text_overlay"].clean is None and every["text_overlay"].key != shards["text_overlay"].key
    assert every["clean"].key == shards["clean"].key
    with pytest.raises(ValueError, match="overlay_rule"):
        sweep.plan(_spec(model_dirs, overlay_rule="some"))
    with pytest.raises(ValueError, match="needs the clean shard"):
        sweep.plan(_spec(model_dirs, conditions={"box_overlay": [1]}, include_clean=False))


def test_the_natural_manifest_is_the_papers_set():
    from vlmrobust import corrupt

    m = corrupt.manifest("natural")
    assert m["translate"] == m["pad_crop"] == list(range(1, 9))
    assert [corrupt.info("scale").param(lv) for lv in m["scale"]] == [0.9]
    assert [corrupt.info("scale_pad").param(lv) for lv in m["scale_pad"]] == [0.9, 0.75]
    assert [corrupt.info("rotate").param(lv) for lv in m["rotate"]] == [-30.0, 30.0]
    assert {k: v for k, v in m.items() if corrupt.info(k).family == "overlay"} == {
        "text_overlay": [1, 2, 3, 4, 5], "random_text": [1, 2, 3, 4, 5], "box_overlay": [1, 2, 3, 4, 5]}
    assert corrupt.manifest("natural_extra") == {"scale": [2, 3], "scale_pad": [3]}


@pytest.fixture(scope="module")
def probe_run(model_dirs, tmp_path_factory):
    from vlmrobust import probes

    out = tmp_path_factory.mktemp("probes")
    spec = _spec(model_dirs[:1], conditions={"noise": [1, 2]}, probes=probes.ProbeSpec(max_new_tokens=2, n_control=4))
    return spec, sweep.run_sweep(spec, out, progress=False, **INJECT)


def test_probe_shards_hold_states_distances_floor_and_control(probe_run):
    from vlmrobust.probes import shard as pshard

    spec, res = probe_run
    p = res.probes
    assert list(p.columns) == list(pshard.PROBE_COLUMNS)
    n, regimes = len(ITEMS), len(pshard.ALL_REGIMES)
    counts = p.groupby(["perturbation", "kind"]).size().to_dict()
    assert counts.pop(("clean", "control")) <= 4 * (regimes - 1)
    assert counts == {("clean", "state"): n * regimes, ("clean", "floor"): n * regimes,
                      ("noise", "drift"): 2 * n * regimes}
    ctrl = p[p.kind == "control"]
    assert np.isfinite(ctrl.cos).all() and (ctrl.item_id != ctrl.other_id).all()
    for regime, g in ctrl.groupby("regime"):
        st = p[(p.kind == "state") & (p.regime == regime)]
        valid = int(st.state.map(lambda v: np.isfinite(v).all()).sum())
        assert len(g) == min(4, valid * (valid - 1) // 2), regime
    state = p[(p.kind == "state") & (p.regime == "ctx_mcq")].iloc[0]
    layers = len(state.state_layers) // len(state.state)
    drift = p[(p.kind == "drift") & (p.regime != "vision_grid")]
    assert all(len(c) == layers for c in drift.cos_layers) and drift.cos.between(-1e-6, 2).all()
    assert (drift.l2 > 0).all()  # the fake noise moves every state
    floor = p[(p.kind == "floor") & (p.regime != "vision_grid")]
    assert floor.l2.max() < 1e-3 * drift.l2.min()  # the noise floor: another batch composition, same states
    grid = p[(p.kind == "drift") & (p.regime == "vision_grid")]
    assert np.isfinite(grid.d_energy).all()
    # the predictions from the same forwards are the sweep's table
    t = res.table
    assert set(t.perturbation) == {"clean", "noise"} and len(t) == 3 * n
    mcq = p[(p.kind.isin(["state", "drift"])) & (p.regime == "ctx_mcq")].set_index(["item_id", "perturbation",
                                                                                       "level"]).pred_idx
    assert (t.set_index(["item_id", "perturbation", "level"]).pred_idx.loc[mcq.index] == mcq).all()


def test_probe_shards_resume_and_have_their_own_keys(model_dirs, probe_run, monkeypatch):
    spec, res = probe_run
    calls = []
    monkeypatch.setattr(sweep_run, "_load_model", lambda *a: calls.append(a))
    again = sweep.run_sweep(spec, res.out_dir, progress=False, **INJECT)
    assert calls == [] and set(again.shards.status) == {"cached"}
    pd.testing.assert_frame_equal(again.probes, res.probes)
    plain = {s.perturbation: s for s in sweep.plan(_spec(model_dirs[:1], conditions={"noise": [1, 2]}),
                                                   twins.fake_param)}
    probe = {s.perturbation: s for s in sweep.plan(spec, twins.fake_param)}
    assert all(plain[k].key != probe[k].key and "probes" in probe[k].filename for k in plain)
    assert probe["noise"].clean == probe["clean"].filename
    from vlmrobust import probes

    other = sweep.plan(_spec(model_dirs[:1], conditions={"noise": [1, 2]},
                             probes=probes.ProbeSpec(max_new_tokens=3, n_control=4)), twins.fake_param)
    assert {s.key for s in other}.isdisjoint({s.key for s in probe.values()})
    with pytest.raises(ValueError, match="one method"):
        sweep.plan(_spec(model_dirs[:1], methods=["letter", "loglik"], probes=probes.ProbeSpec()))


def test_probe_sweep_on_dask_gives_the_same_rows(probe_run, tmp_path, dask_client):
    spec, res = probe_run
    got = sweep.run_sweep(spec, tmp_path, executor="dask", client=dask_client, progress=False, **INJECT)
    assert list(got.shards.status) == ["done"] * 2
    cols = ["item_id", "perturbation", "level", "regime", "kind", "cos", "l2"]
    pd.testing.assert_frame_equal(got.probes[got.probes.kind == "drift"][cols].reset_index(drop=True),
                                  res.probes[res.probes.kind == "drift"][cols].reset_index(drop=True),
                                  atol=1e-6, rtol=1e-5)


def _counting(monkeypatch):
    calls = []

    def counted(image, name, level, **kw):
        calls.append((name, level, kw["key"]))
        return twins.fake_corrupt(image, name, level, **kw)

    monkeypatch.setattr(sweep_run, "default_corrupt", counted)
    return calls


SYNTH_CONDITIONS = {"gaussian_noise": [1, 3], "fog_physical": [2]}


def test_corrupted_images_are_made_once_and_read_by_every_model(model_dirs, tmp_path, monkeypatch):
    from vlmrobust import synth

    items = synth.generate(1, seed=0, families=["colour", "verify"])
    calls = _counting(monkeypatch)
    spec = sweep.SweepSpec(models=model_dirs, items=items, conditions=SYNTH_CONDITIONS, torch_threads=1)
    res = sweep.run_sweep(spec, tmp_path / "shared", progress=False)
    assert list(res.shards.status) == ["done"] * 6, res.shards.error.tolist()
    assert len(calls) == len(items) * 3  # each (item, level) once, though two models scored it
    stored = sorted("__".join(p.name.split("__")[:2]) for p in (tmp_path / "shared" / "images").iterdir())
    assert stored == ["fog_physical__2", "gaussian_noise__1", "gaussian_noise__3"]
    calls.clear()
    own = sweep.SweepSpec(models=model_dirs, items=items, conditions=SYNTH_CONDITIONS, torch_threads=1,
                          share_images=False)
    unshared = sweep.run_sweep(own, tmp_path / "own", progress=False)
    assert len(calls) == len(items) * 3 * 2 and not (tmp_path / "own" / "images").exists()
    pd.testing.assert_frame_equal(res.table, unshared.table)  # sharing changes no row, nor any key
    assert [s.key for s in sweep.plan(spec)] == [s.key for s in sweep.plan(own)]
    # a resumed run (shards deleted, images kept) corrupts nothing; a damaged level is made again
    for f in (tmp_path / "shared").glob("*.parquet"):
        f.unlink()
    calls.clear()
    damaged = next((tmp_path / "shared" / "images").glob("fog_physical__*"))
    damaged.write_bytes(b"not an npz")
    again = sweep.run_sweep(spec, tmp_path / "shared", progress=False)
    assert len(calls) == len(items)  # only the damaged level, once
    pd.testing.assert_frame_equal(again.table, res.table)
    timing = again.timing()
    assert set(sweep.TIME_PARTS) <= {k[len("share_"):] for k in timing if k.startswith("share_")}
    assert abs(sum(timing[f"share_{p}"] for p in sweep.TIME_PARTS) - 1) < 1e-3
    assert timing["rows"] == len(again.table) and timing["seconds_score"] > 0
    assert (again.shards[[f"seconds_{p}" for p in sweep.TIME_PARTS]] >= 0).all().all()


def test_image_keys_change_with_what_changes_the_pixels():
    from vlmrobust.sweep import images

    base = dict(items_digest="d", perturbation="fog", level=2, seed=0, backend="native")
    keys = {images.image_key(**base)}
    for change in (dict(items_digest="e"), dict(perturbation="snow"), dict(level=3), dict(seed=1),
                   dict(backend="imagecorruptions"), dict(corrupt_id="m.f@1"), dict(version=2)):
        keys.add(images.image_key(**{**base, **change}))
    assert len(keys) == 8


def test_images_of_other_shapes_and_unreadable_files(tmp_path):
    from vlmrobust.sweep import images

    imgs = [np.zeros((4, 6, 3), np.uint8), np.ones((5, 5, 3), np.uint8)]
    path = tmp_path / "x.npz"
    images.save_level(path, imgs)
    got = images.load_level(path, 2)
    assert [g.shape for g in got] == [(4, 6, 3), (5, 5, 3)] and (got[1] == 1).all()
    assert images.load_level(path, 3) is None  # another number of items
    assert images.load_level(tmp_path / "absent.npz", 2) is None
    assert not list(tmp_path.glob(".*tmp*"))


def test_only_levels_shown_to_every_item_are_stored(model_dirs, tmp_path):
    """Overlays show each item the letters other than its clean prediction: a level shown to some items only is
    corrupted in its shard, a level shown to all is stored; the rows are those of an unshared sweep."""
    from vlmrobust import synth

    items = synth.generate(3, seed=0, families=["colour"])
    spec = sweep.SweepSpec(models=model_dirs[:1], items=items, conditions={"text_overlay": [1, 2, 3, 4]},
                           torch_threads=1)
    res = sweep.run_sweep(spec, tmp_path / "a", progress=False)
    assert set(res.shards.status) == {"done"}, res.shards.error.tolist()
    shown = res.table[res.table.perturbation == "text_overlay"].groupby("level").item_id.nunique()
    full = sorted(int(lv) for lv, n in shown.items() if n == len(items))
    stored = sorted(int(p.name.split("__")[1]) for p in (tmp_path / "a" / "images").glob("*.npz"))
    assert stored == full and len(full) < 4  # some level is shown to a subset only
    own = sweep.run_sweep(sweep.SweepSpec(models=model_dirs[:1], items=items, conditions={"text_overlay": [1, 2, 3, 4]},
                                          torch_threads=1, share_images=False), tmp_path / "b", progress=False)
    pd.testing.assert_frame_equal(res.table, own.table)


def test_the_clock_counts_each_second_once_in_the_innermost_part():
    from vlmrobust.sweep.timing import Clock

    clock = Clock()
    with clock("io"):
        time.sleep(0.02)
        with clock("corrupt"):
            time.sleep(0.03)
            with clock("io"):
                time.sleep(0.02)
    sec = clock.seconds
    assert 0.035 <= sec["io"] < 0.08 and 0.025 <= sec["corrupt"] < 0.06 and sec["score"] == 0


def test_a_sweep_removes_old_temporary_files_but_not_another_sweeps_write_in_progress(model_dirs, tmp_path):
    import os

    (tmp_path / "images").mkdir()
    old = tmp_path / "images" / ".x__1__k.npz.tmp-1-aaaa"
    young = tmp_path / "images" / ".x__1__k.npz.tmp-2-bbbb"  # another process writing the same cache now
    for f in (old, young):
        f.write_bytes(b"partial")
    os.utime(old, (0, 0))
    sweep.run_sweep(_spec(model_dirs), tmp_path, progress=False, **INJECT)
    assert not old.exists() and young.exists()
