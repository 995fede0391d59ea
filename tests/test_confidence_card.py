"""The confident organism's card measurement (``vlmrobust.train.confidence``) on zoo organisms, small."""

import numpy as np
import pytest

from vlmrobust import models
from vlmrobust.train import confidence


@pytest.fixture(scope="module")
def letters():
    return models.load("tiny-letters")


def test_clean_confidence_reads_accuracy_and_token_probability_with_intervals(letters):
    tab = confidence.clean_confidence(letters, n_scenes=12, n_boot=200).set_index("signal")
    assert list(tab.index) == ["accuracy", "internal"]
    for name, row in tab.iterrows():
        assert row.n > 0 and row.lo <= row["mean"] <= row.hi, name
        assert 0.0 <= row.lo and row.hi <= 1.0, name
        assert row.target == confidence.TARGETS[name]
    assert tab.loc["accuracy", "mean"] * tab.loc["accuracy", "n"] == pytest.approx(
        round(tab.loc["accuracy", "mean"] * tab.loc["accuracy", "n"]))  # a share of right answers
    again = confidence.clean_confidence(letters, n_scenes=12, n_boot=200)
    assert np.array_equal(again[["mean", "lo", "hi"]].to_numpy(), tab.reset_index()[["mean", "lo", "hi"]].to_numpy())


def test_verbal_confidence_is_parsed_from_the_talker():
    tab = confidence.clean_confidence(models.load("talker"), n_scenes=6, n_boot=100, verbal=True).set_index("signal")
    assert "verbal" in tab.index
    v = tab.loc["verbal"]
    assert 0.0 < v.parse_rate <= 1.0 and v.n == round(v.parse_rate * tab.loc["accuracy", "n"])
    assert 0.0 <= v["mean"] <= 1.0 and v.lo <= v["mean"] <= v.hi


def test_card_section_names_the_command_that_measures_it(letters):
    text = confidence.card_section(letters, n_scenes=6)
    assert text.startswith("## Clean confidence on t2")
    assert "python -m vlmrobust.train.confidence <name> --n 6 --seed 0" in text and "| accuracy |" in text
