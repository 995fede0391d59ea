"""Every claim rule says 'reproduced' on at most 5 % of draws from its null (with the binomial slack of
:func:`vlmrobust.stats.nullsim.false_pass_bound`), and the harness itself can fail."""

import numpy as np
import pytest

from vlmrobust.analysis.rules import all_rules
from vlmrobust.stats.claims import NOT_REPRODUCED, REPRODUCED, verdict
from vlmrobust.stats.nullsim import RuleCheck, false_pass_bound, run_check

RULES = all_rules()


def test_bound_is_the_binomial_quantile():
    assert false_pass_bound(200) == 18
    assert false_pass_bound(500) == 37


def _naive(rng: np.random.Generator) -> str:
    """'Mean above zero' on noise: the kind of rule the check must reject."""
    x = rng.normal(0.0, 1.0, 50)
    return REPRODUCED if x.mean() > 0 else NOT_REPRODUCED


def _fair(rng: np.random.Generator) -> str:
    x = rng.normal(0.0, 1.0, 50)
    se = x.std(ddof=1) / np.sqrt(len(x))
    return verdict(x.mean() - 1.96 * se, x.mean() + 1.96 * se, 0.0)


def test_harness_rejects_a_rule_that_passes_on_noise_and_keeps_a_fair_one():
    bad = run_check(RuleCheck("naive", _naive, None, "N(0,1)", "", "50"), draws=200)
    good = run_check(RuleCheck("fair", _fair, _fair, "N(0,1)", "", "50"), draws=200)
    assert not bad.calibrated and bad.false_pass_rate > 0.3
    assert good.calibrated and good.false_pass_rate < 0.06


def test_every_notebook_with_claims_has_rules():
    notebooks = {r.name[:2] for r in RULES}
    assert {"01", "04", "05", "06", "07", "08"} <= notebooks, sorted(notebooks)


@pytest.mark.parametrize("rule", RULES, ids=[r.name for r in RULES])
def test_rule_is_calibrated(rule):
    res = run_check(rule, draws=200, seed=11)
    assert res.calibrated, (f"{rule.name}: {res.false_passes} 'reproduced' of {res.draws} null draws "
                            f"({rule.null_text}); bound {res.bound}")
    print(f"{rule.name}: false passes {res.false_passes}/{res.draws}, power {res.power:.2f}")


def test_escalation_rules_are_drawn_at_the_notebooks_default_size():
    from vlmrobust import nbtools
    from vlmrobust.analysis.escalation import rules

    assert nbtools.parameters("07_escalation_traversal")["n_per_family"] == rules.PER_FAMILY


def test_card_rules_are_drawn_at_the_notebooks_default_size():
    from vlmrobust import nbtools
    from vlmrobust.analysis.card import rules

    assert len(nbtools.parameters("08_reliability_card")["imagenet_c"]) == rules.N_CORRUPTIONS


def test_drift_rules_are_drawn_at_the_notebooks_default_size():
    from vlmrobust import nbtools
    from vlmrobust.analysis.drift import rules

    assert nbtools.parameters("05_representation_drift")["n_per_family"] == rules.PER_FAMILY


def test_rules_count_the_zoos_evaluated_organisms():
    """The rules that simulate one unit per evaluated organism are drawn at the zoo's count: an organism added to
    (or removed from) the evaluated role changes the default runs' size, and these rules must be redrawn with it."""
    from vlmrobust.analysis.card import rules as card
    from vlmrobust.analysis.escalation import rules as escalation
    from vlmrobust.analysis.ras import rules as ras
    from vlmrobust.models import zoo

    n = len(zoo.names("evaluated"))
    assert escalation.N_MODELS == card.N_MODELS == ras.DEFAULT_SIZE["n_models"] == n
    assert card.N_CARD_MODELS == len(zoo.names(["evaluated", "control"]))
