"""Seed 000's §IV claims checked on a selection run: the claims table of notebook 01.

:func:`claims_table` stacks one :class:`~vlmrobust.stats.claims.Claim` per claim, in the paper's order:
the split's responsiveness on held-out corruptions (Fig. 3(a)) and for the evaluated models (supplement
Fig. 9(a)), κ and difficulty (§IV-C, three rows), Eq. 3 against a pooled-κ threshold and the novelty term
(§IV-D), semantic against inconsistency selection and Table I (§IV-E, three rows), sources and families kept
(supplement II-A). Each row states its null (the claim false, as something a simulation draws) and its test;
the tests are the pure functions of :mod:`.decisions`, which :mod:`.rules` draws from each null to measure
how often they pass when the claim is false.

The rows are built in two modules, re-exported here:

* :mod:`.claims_split` — what the split is: its responsiveness (held out, evaluated models), κ and
  difficulty, Eq. 3 and the novelty term (§IV-C, §IV-D);
* :mod:`.claims_stability` — how stable it is and what it keeps: the other criterion, Table I, sources and
  families (§IV-E, supplement II-A);

and their shared pieces (a row's subject, a row from a decision) in :mod:`.claims_base`.
:func:`paper_models` picks the models a paper claim may be tried on.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from ...stats.claims import claims_frame
from .claims_split import (
    heldout_halves,
    obs_difficulty_rank,
    obs_easy_can_score_high,
    obs_eq3_stricter,
    obs_evaluated_gini,
    obs_heldout_kappa,
    obs_novelty_concentration,
    obs_zero_dispersion,
)
from .claims_stability import (
    obs_criteria_ji,
    obs_families_kept,
    obs_families_no_response,
    obs_fixed_vs_recomputed,
    obs_sources_kept,
    obs_table_i_null,
)
from .responsiveness import AnswerPaths

__all__ = ["obs_heldout_kappa", "obs_evaluated_gini", "obs_zero_dispersion", "obs_easy_can_score_high",
           "obs_difficulty_rank", "obs_eq3_stricter", "obs_novelty_concentration", "obs_criteria_ji",
           "obs_table_i_null", "obs_fixed_vs_recomputed", "obs_sources_kept", "obs_families_kept",
           "obs_families_no_response", "heldout_halves", "paper_models", "claims_table", "CLAIM_STREAMS"]


def paper_models(models: Sequence[str]) -> list[str]:
    """The models a paper claim may be tried on: every model but the zoo's controls (role ``control``, built to
    behave a given way); a blind twin ``blind:NAME`` is looked up as ``NAME``; a model outside the zoo counts."""
    from ...models import zoo
    from ...models.loading import BLIND_PREFIX

    out = []
    for m in models:
        try:
            control = zoo.role(str(m).removeprefix(BLIND_PREFIX)) == "control"
        except (KeyError, FileNotFoundError, ValueError):
            control = False
        if not control:
            out.append(m)
    return out


#: The names of the child generators :func:`claims_table` spawns from its ``rng``, in order.
CLAIM_STREAMS = ("kappa", "gini", "easy", "difficulty", "eq3", "novelty", "criteria", "fixed_vs_recomputed")


def claims_table(paths: AnswerPaths, G: np.ndarray, selection, table: pd.DataFrame, overlap: dict,
                 eval_gini: np.ndarray | None, eval_models: Sequence[str], *, families: Sequence[str],
                 sources: Sequence[str], variants: Mapping[str, Mapping[str, np.ndarray]], image_emb: np.ndarray,
                 text_emb: np.ndarray, n_boot: int, rng: np.random.Generator, ci: float = 0.95,
                 rho_max: float = 0.5) -> pd.DataFrame:
    """Seed 000's §IV claims on one selection run: the claims table of notebook 01.

    ``families`` and ``sources``: one per pool item (``items.task``, ``items.source``); ``variants``:
    :func:`~vlmrobust.analysis.selection.leave_one_out`; ``table``: Table I of those variants; ``image_emb``,
    ``text_emb``: the novelty embeddings (the held-out split reruns the selection). Each check draws from its own
    child of ``rng.spawn(len(CLAIM_STREAMS))`` (names in that order); ``n_boot`` is both the bootstrap resamples
    and the draws of each null; ``rho_max``: :func:`obs_difficulty_rank`.
    """
    r = dict(zip(CLAIM_STREAMS, rng.spawn(len(CLAIM_STREAMS)), strict=True))
    k, s, el, ids = selection.kappa, selection.selected, selection.eligible, selection.item_ids
    sels = list(paths.models)
    rows = [
        obs_heldout_kappa(G, image_emb, text_emb, ids, sels, s, n_boot=n_boot, rng=r["kappa"], ci=ci, K=paths.K),
        obs_evaluated_gini(np.zeros(len(k)) if eval_gini is None else eval_gini, s,
                           list(eval_models) if eval_gini is not None else [], n_boot=n_boot, rng=r["gini"], ci=ci,
                           kappa=k, K=paths.K),
        obs_zero_dispersion(paths, G),
        obs_easy_can_score_high(paths, k, n_boot=n_boot, rng=r["easy"], ci=ci),
        obs_difficulty_rank(paths, k, n_boot=n_boot, rng=r["difficulty"], ci=ci, rho_max=rho_max),
        obs_eq3_stricter(G, k, el, ids, sels, n_boot=n_boot, rng=r["eq3"], ci=ci),
        obs_novelty_concentration(families, selection, overlap.get("inconsistency", np.zeros(len(k), bool)), sels,
                                  n_perm=n_boot, rng=r["novelty"], ci=ci),
        obs_criteria_ji(overlap, el, sels, n_draws=n_boot, rng=r["criteria"], ci=ci),
        obs_table_i_null(table, int(el.sum()), sels, ci=ci),
        obs_fixed_vs_recomputed({m: (v["fixed"], v["recomputed"]) for m, v in variants.items()}, s,
                                n_boot=n_boot, rng=r["fixed_vs_recomputed"], ci=ci),
        obs_sources_kept(sources, s, sels),
        obs_families_kept(families, el, s, sels),
    ]
    extra = obs_families_no_response(G, families, sels)
    return claims_frame(rows + ([extra] if extra is not None else []))

