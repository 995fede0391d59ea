"""The hidden-object abstainers' card measurement (``vlmrobust.train.hidden``) on zoo organisms, small."""

import pytest

from vlmrobust import models
from vlmrobust.train import hidden


@pytest.fixture(scope="module")
def abstainer_rates():
    return hidden.abstain_rates(models.load("abstainer"), n_scenes=8, n_boot=200)


def test_rates_cover_both_wordings_and_three_conditions_with_intervals(abstainer_rates):
    tab = abstainer_rates
    assert list(zip(tab.wording, tab.condition, strict=True)) == [
        (w, c) for w in hidden.WORDINGS for c in ("clean", "hidden", "blank")]
    assert (tab.n == 8).all() and ((tab.lo <= tab.rate) & (tab.rate <= tab.hi)).all()
    assert ((0 <= tab.lo) & (tab.hi <= 1)).all()
    assert set(tab.loc[tab.condition == "blank", "meets"]) == {""}
    hid = tab[tab.condition == "hidden"]
    assert (hid.meets == (hid.lo >= hidden.TARGETS["hidden"]).astype(str)).all()


def test_the_blank_trained_control_abstains_on_blank_images_only(abstainer_rates):
    """The abstainer control learned the option on images without content: its blank rate is 1 and it answers
    clean scenes; a measurement that could not tell those apart would fail here."""
    by = abstainer_rates.set_index(["wording", "condition"])["rate"]
    for w in hidden.WORDINGS:
        assert by[(w, "blank")] >= 0.75 and by[(w, "clean")] <= 0.25


def test_rates_are_reproducible(abstainer_rates):
    assert hidden.abstain_rates(models.load("abstainer"), n_scenes=8, n_boot=200).equals(abstainer_rates)


def test_card_section_names_the_command_that_measures_it():
    text = hidden.card_section(models.load("abstainer"), n_scenes=4)
    assert text.startswith("## Abstaining where the object cannot be seen")
    assert "python -m vlmrobust.train.hidden <name> --n 4 --seed 0" in text and "| unclear | hidden |" in text
