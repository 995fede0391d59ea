"""The haze-robust organism's card measurement (``vlmrobust.train.haze``) and the t2 helpers it shares with the
sky-only check (``vlmrobust.train.sky``), on zoo organisms, small."""

import numpy as np
import pytest

from vlmrobust import models, repro
from vlmrobust.train import haze, sky


@pytest.fixture(scope="module")
def letters():
    return models.load("tiny-letters")


@pytest.fixture(scope="module")
def measured(letters):
    return haze.haze_retention(letters, n_scenes=12, n_boot=200)


def test_fog_rows_pair_each_severity_with_clean(measured):
    fog, _ = measured
    assert list(zip(fog.condition, fog.level, strict=True)) == [("clean", 0)] + [("fog", s) for s in range(1, 6)]
    assert (fog.n == 12).all() and fog.loc[0, "diff"] == 0.0 and bool(fog.loc[0, "within"])
    rest = fog.iloc[1:]
    assert np.allclose(rest["diff"], rest.accuracy - fog.loc[0, "accuracy"])
    assert (rest.diff_lo <= rest["diff"] + 1e-12).all() and (rest["diff"] <= rest.diff_hi + 1e-12).all()
    assert (rest.within == (rest.diff_lo >= -haze.FOG_TOLERANCE)).all()


def test_physical_fog_gives_a_crossing_inside_its_interval_and_the_objects_transmittance(measured):
    _, phys = measured
    row = phys.iloc[0]
    assert 1.9 <= row.v_lo <= row.v_hi <= 16000.0
    assert row.status in haze.STATUS and row.distance_m > 0
    assert row.transmittance == pytest.approx(np.exp(-3.912 * row.distance_m / row.v_acc))
    assert row.t_lo <= row.t_hi  # transmittance rises with V


def test_haze_measurement_is_reproducible(letters, measured):
    fog, phys = haze.haze_retention(letters, n_scenes=12, n_boot=200)
    assert fog.equals(measured[0]) and phys.equals(measured[1])


def test_paired_drops_reads_a_known_difference():
    right = {("clean", 0): np.array([1.0, 1.0, 0.0, 1.0]), ("x+box", 2): np.array([0.0, 1.0, 0.0, 1.0])}
    tab = sky.paired_drops(right, repro.rng("t", 0), n_boot=500)
    assert list(tab.condition) == ["clean", "x"] and tab.loc[1, "level"] == 2
    assert tab.loc[1, "diff"] == -0.25 and tab.loc[1, "diff_lo"] <= -0.25 <= tab.loc[1, "diff_hi"]
    assert tab.loc[1, "diff_hi"] <= 0.0  # no scene gains


def test_haze_card_section_names_the_command_that_measures_it(letters):
    text = haze.card_section(letters, n_scenes=6)
    assert text.startswith("## Haze") and "python -m vlmrobust.train.haze <name> --n 6 --seed 0" in text
    assert "| fog | 3 |" in text and "v_acc" in text
