"""Seed 002's protocol choices of notebook 05: disjoint subsets, tables across them, set-apart instances."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from vlmrobust import params
from vlmrobust.analysis.drift import instability, protocol


def test_disjoint_subsets_are_disjoint_seeded_and_checked():
    ids = [f"i{k}" for k in range(20)]
    a = protocol.disjoint_subsets(ids, 4, 5, np.random.default_rng(7))
    b = protocol.disjoint_subsets(ids, 4, 5, np.random.default_rng(7))
    assert [list(x) for x in a] == [list(x) for x in b]
    assert all(len(x) == 5 for x in a) and len(set().union(*a)) == 20
    assert all(list(x) == sorted(x, key=ids.index) for x in a)  # each keeps the items' order
    c = protocol.disjoint_subsets(ids, 4, 5, np.random.default_rng(8))
    assert [list(x) for x in a] != [list(x) for x in c]
    assert [len(x) for x in protocol.disjoint_subsets(ids, 3, 0, np.random.default_rng(0))] == [6, 6, 6]
    assert list(protocol.disjoint_subsets(ids, 1, 0, np.random.default_rng(0))[0]) == ids
    with pytest.raises(ValueError, match="need 25 items; the source has 20"):
        protocol.disjoint_subsets(ids, 5, 5, np.random.default_rng(0))
    with pytest.raises(ValueError, match="repeat"):
        protocol.disjoint_subsets(["a", "a"], 1, 0, np.random.default_rng(0))


def _pairs():
    rows = []
    for k in range(8):
        flip = k % 2 == 0 if k < 4 else k == 4  # items 0-3 flip half the time, items 4-7 once in four
        rows.append({"model": "m", "item_id": f"i{k}", "perturbation": "translate", "level": 1, "flip": flip,
                     "task": "spatial" if k == 0 else "colour"})
    return pd.DataFrame(rows)


def test_across_subsets_gives_the_mean_and_sd_of_the_per_subset_tables():
    pairs = _pairs()
    subsets = [np.array([f"i{k}" for k in range(4)]), np.array([f"i{k}" for k in range(4, 8)])]
    t = protocol.across_subsets(instability.ifr_iv, subsets, ["model", "perturbation"], pairs=pairs)
    row = t.set_index("perturbation").loc["translate"]
    assert row["IFR"] == pytest.approx((0.5 + 0.25) / 2)
    assert row["IFR run SD"] == pytest.approx(np.std([0.5, 0.25], ddof=1))
    assert row["runs"] == 2
    one = protocol.across_subsets(instability.ifr_iv, [pairs.item_id.to_numpy()], ["model", "perturbation"],
                                  pairs=pairs)
    pd.testing.assert_frame_equal(one, instability.ifr_iv(pairs))


def test_restrict_keeps_control_pairs_only_inside_the_subset():
    probes = pd.DataFrame({"item_id": ["a", "a", "b", "c"], "other_id": [None, "b", "c", "a"],
                           "kind": ["drift", "control", "control", "control"]})
    kept = protocol.restrict(probes, ["a", "b"])
    assert list(zip(kept.item_id, kept.kind, strict=True)) == [("a", "drift"), ("a", "control")]


def test_set_apart_instances_stay_in_the_tables_by_default():
    pairs = _pairs()
    tables, apart = protocol.table_pairs(pairs, {"translate": ("spatial",)})
    assert len(tables) == 8 and list(apart.item_id) == ["i0"]
    tables, apart = protocol.table_pairs(pairs, {"translate": ("spatial",)}, "excluded")
    assert len(tables) == 7 and "i0" not in set(tables.item_id) and list(apart.item_id) == ["i0"]
    with pytest.raises(ValueError, match="set_apart must be one of kept, excluded"):
        protocol.table_pairs(pairs, {}, "dropped")


def test_gt_changing_parameter_is_checked():
    assert protocol.check_gt_changing({"rotate": ["spatial"]}) == {"rotate": ("spatial",)}
    with pytest.raises(params.ParameterError, match="must map perturbations"):
        protocol.check_gt_changing(["rotate"])
    with pytest.raises(params.ParameterError, match="gt_changing key 'spin'"):
        protocol.check_gt_changing({"spin": ["spatial"]})


def test_natural_predictions_refuses_an_unknown_shift_reading():
    with pytest.raises(ValueError, match="shift must be one of fixed, scaled"):
        protocol.natural_predictions(["tiny-base"], pd.DataFrame(), {}, shift="native")


class _Param:
    def __init__(self, n):
        self.n = n

    def numel(self):
        return self.n


class _Loaded:
    class model:  # noqa: N801 - stands for a loaded model's torch module
        @staticmethod
        def parameters():
            return [_Param(3), _Param(4)]


def test_model_sizes_prefer_the_zoo_metadata():
    sizes = protocol.model_sizes(["a", "b"], lambda n: _Loaded(),
                                 lambda n: {"lm_parameters": 5e6} if n == "a" else None)
    assert sizes == {"a": 5e6, "b": 7.0}
