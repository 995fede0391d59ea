"""The paper variants on twins (vlmrobust.dry): the mapping covers every variant, and one variant runs end to end.

The whole dry run is ``make paper-dry``; here notebook 04's paper variant (four
architectures, the Bench-C TSV format) runs with every cell.
"""

from __future__ import annotations

import json

import nbformat
import numpy as np
import pytest
import yaml

from vlmrobust import nbtools, paths
from vlmrobust.dry import run


@pytest.fixture(scope="module")
def dry(tmp_path_factory):
    out = tmp_path_factory.mktemp("paper-dry")
    return out, run.fabricate(out)


def test_the_mapping_covers_every_hub_id_and_data_path_of_every_paper_variant(dry):
    out, files = dry
    plans = run.plan(out, files)
    with_variant = [n for n in nbtools.notebook_ids() if (paths.params_dir() / n / "paper.yaml").is_file()]
    assert [p.nb_id for p in plans] == with_variant
    for p in plans:
        variant = yaml.safe_load((paths.params_dir() / p.nb_id / "paper.yaml").read_text())
        text = json.dumps(p.params)
        for hub_id in run._hub_ids_in(variant):
            assert hub_id not in text and run.twin_folder_name(hub_id) in text, (p.nb_id, hub_id)
        values = json.dumps(p.params)
        for key in p.data:
            assert json.dumps(key) not in values and files[key] in values, (p.nb_id, key)
        assert set(p.params) <= set(nbtools.parameters(p.nb_id))
        assert p.params.get("device", "cpu") == "cpu"


def test_an_unmapped_hub_id_or_a_misspelt_scale_key_stops_the_plan(dry):
    out, files = dry
    mapping = run.read_mapping()
    del mapping["models"]["google/gemma-3-4b-it"]
    with pytest.raises(run.MappingError, match="gemma-3-4b-it"):
        run.plan(out, files, only=["03_scoring"], mapping=mapping)
    mapping = run.read_mapping()
    mapping["scale"]["03_scoring"] = {"n_per_famly": 1}
    with pytest.raises(run.MappingError, match="n_per_famly"):
        run.plan(out, files, only=["03_scoring"], mapping=mapping)


def test_notebook_04s_paper_variant_runs_every_cell_on_twins(dry):
    out, files = dry
    plans = run.plan(out, files, only=["04_ras_attribution"])
    archs = run.build_twins(out, plans, progress=False)
    assert len(set(archs.values())) == 4
    (row,) = run.execute(out, plans, archs)
    assert row["ok"], row
    nb = nbformat.read(row["executed"], 4)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert all(c.get("execution_count") for c in code)
    assert not [o for c in code for o in c.get("outputs", []) if o.get("output_type") == "error"]
    tables = {p.name for p in (out / "results" / "04_ras_attribution").rglob("*.csv")}
    assert tables, "the variant wrote no table"


def test_gpu_check_part_one_times_a_twin_on_the_cpu_as_its_own_device():
    from vlmrobust.dry import gpu

    rows = gpu.twin_timings("cpu", ["qwen2_vl"], n_items=2)
    assert [r["twin"] for r in rows] == ["qwen2_vl"] and rows[0]["architecture"] == "Qwen2VLForConditionalGeneration"
    assert rows[0]["max_abs_dprob"] == 0.0 and min(rows[0][k] for k in ("cpu_s", "device_first_s", "device_s")) > 0


def test_gpu_check_full_size_twin_is_built_once_at_full_width_and_scores(tmp_path):
    from vlmrobust import models, score, synth
    from vlmrobust.dry import gpu

    folder = tmp_path / "twin"
    built = gpu._full_size_twin(folder, "cpu", "float32", 1)
    assert not built["kept"] and gpu._full_size_twin(folder, "cpu", "float32", 1)["kept"]
    assert not gpu._full_size_twin(folder, "cpu", "bfloat16", 1)["kept"]  # another dtype is another twin
    lm = models.load(folder)
    cfg = lm.model.config
    assert type(lm.model).__name__ == "Qwen3VLForConditionalGeneration" and str(lm.model.dtype) == "torch.bfloat16"
    assert ((cfg.text_config.hidden_size, cfg.vision_config.hidden_size, cfg.text_config.num_hidden_layers)
            == (2048, 1024, 1))
    items = synth.generate(1, 0, families=["colour"], size=64)
    df = score.predict(lm, items, [synth.render(r)[0] for r in items.image_ref], methods=["letter"])
    assert np.isfinite(np.asarray(df.probs[0], float)).all()


def test_gpu_check_without_cuda_says_how_to_check_on_a_cpu(capsys, monkeypatch):
    import torch

    from vlmrobust.dry import gpu

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert gpu.main(["--device", "cuda"]) == 2
    assert "--device cpu --layers 1" in capsys.readouterr().err


def test_gpu_check_prints_and_saves_its_report(tmp_path, monkeypatch, capsys):
    from vlmrobust.dry import gpu

    row = {"notebook": "05_representation_drift", "ok": True, "seconds": 12.0, "architectures": ["Qwen3VL"],
           "full_size_twin": {"built_s": 3.0, "kept": False}, "device": "cpu", "dtype": "float32"}
    monkeypatch.setattr(gpu, "paper_variant", lambda out, device, **kw: row)
    assert gpu.main(["--device", "cpu", "--twins", "qwen2_vl", "--out", str(tmp_path)]) == 0
    printed = capsys.readouterr().out
    assert "qwen2_vl" in printed and "ok in 12 s; full-size twin built in 3 s" in printed
    report = json.loads((tmp_path / "gpu_check.json").read_text())
    assert report["paper_variant"] == row and [r["twin"] for r in report["twins"]] == ["qwen2_vl"]
