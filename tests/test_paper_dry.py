"""The paper variants on twins (vlmrobust.dry): the mapping covers every variant, and one variant runs end to end.

The whole dry run is ``make paper-dry``; here notebook 04's paper variant (four
architectures, the Bench-C TSV format) runs with every cell.
"""

from __future__ import annotations

import json

import nbformat
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
