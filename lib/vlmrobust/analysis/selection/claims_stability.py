"""Notebook 01's claims about how stable the split is and what it keeps (seed 000, §IV-E and supplement II-A).

* against the other criterion: semantic-only and inconsistency-only selection related but distinct
  (:func:`obs_criteria_ji`);
* without one selector (Table I): every leave-one-out variant keeps most of the split
  (:func:`obs_table_i_null`), a fixed eligible pool more than recomputed eligibility
  (:func:`obs_fixed_vs_recomputed`);
* of the pool: every source benchmark and every task family with eligible items (exact counts), and the
  families on which a selector never responds, where that claim has no subject.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from ...stats.claims import (
    BY_CONSTRUCTION,
    NOT_REPRODUCED,
    REPRODUCED,
    UNDECIDED,
    Claim,
    combine,
    decide_text,
    interval_text,
    no_subject,
)
from .claims_base import _row, _subject
from .coverage import coverage_table, silent_families
from .decisions import Decision, ji_above_chance, paired_above_zero, retention_above_chance
from .responsiveness import eligible as eligible_

__all__ = ["obs_criteria_ji", "obs_table_i_null", "obs_fixed_vs_recomputed", "obs_sources_kept",
           "obs_families_kept", "obs_families_no_response"]


def obs_criteria_ji(overlap: Mapping, eligible: np.ndarray, selectors: Sequence[str], *, n_draws: int,
                    rng: np.random.Generator, ci: float = 0.95) -> Claim:
    """§IV-E: semantic-only and inconsistency-only selections are related (JI above two random size-matched
    subsets of A⁺) but distinct (JI < 1) (:func:`.decisions.ji_above_chance`); ``overlap`` from
    :func:`~vlmrobust.analysis.selection.criteria_overlap`."""
    el = np.asarray(eligible, dtype=bool)
    claim = "semantic-only and inconsistency-only selection pick related but distinct items"
    paper = "§IV-E: JI 0.646 between semantic-only and inconsistency-only selection (|S| = 849 of |A⁺| = 1,750)"
    null = "the two criteria are unrelated: two independent random size-matched subsets of A⁺"
    test = f"JI against the null's draws, one-sided p at most {(1 - ci) / 2:g} (related), and its {ci:.0%} " \
           "bootstrap interval over A⁺'s items below 1 (distinct)"
    size = int(overlap.get("size", 0))
    if not size:
        return no_subject(claim, paper, null, test, "the split is empty")
    if size >= el.sum():
        return Claim(claim, paper, _subject(selectors), null, test, 1.0, 1.0, 1.0,
                     f"|S| = |A⁺| = {size}: both selections are A⁺", BY_CONSTRUCTION)
    d = ji_above_chance(overlap["semantic"], overlap["inconsistency"], el, n_draws=n_draws, n_boot=n_draws,
                        rng=rng, ci=ci)
    return _row(claim, paper, _subject(selectors), null, test, d,
                f"{overlap.get('both', 0)} of {size} in common, |A⁺| = {int(el.sum())}; p {d.p:.3g}; random "
                f"subsets' {(1 + ci) / 2:.1%} quantile {d.low:.3f}", unit="A⁺ items")


def obs_table_i_null(table: pd.DataFrame, n_eligible: int, selectors: Sequence[str], *, ci: float = 0.95) -> Claim:
    """Table I: every leave-one-selector-out variant keeps most of the split (:func:`.decisions.retention_above_chance`:
    above the paper's majority and above what a random size-matched subset of its own eligible pool keeps).

    ``table``: :func:`~vlmrobust.analysis.selection.table_i`; ``n_eligible``: |A⁺| (the fixed variants' pool;
    a recomputed pool, ``recomputed_eligible``, holds A⁺ since removing a selector relaxes Eq. 3).
    """
    claim = "the split is not driven by one selector (Table I)"
    paper = ("fixed pool: JI ≥ 0.710, ≥ 705/849 kept (\"most\"); recomputed eligibility: JI ≥ 0.606, ≥ 641/849 "
             "(\"a majority\")")
    null = "without the removed selector the selection is unrelated to the split: a random size-matched subset " \
           "of its eligible pool (hypergeometric)"
    test = f"every variant's retention, {ci:.0%} Wilson interval over the split's items, above 0.5, and its exact " \
           f"one-sided p under the null at most {(1 - ci) / 2:g}"
    if not len(table) or not int(table["split_size"].iloc[0]):
        return no_subject(claim, paper, null, test, "needs two or more selectors and a non-empty split")
    size = int(table["split_size"].iloc[0])
    parts, texts = [], []
    for r in table.itertuples():
        for kind, pool in (("fixed", n_eligible), ("recomputed", int(r.recomputed_eligible))):
            kept = int(getattr(r, f"{kind}_kept"))
            d = retention_above_chance(kept, size, pool, ci=ci)
            parts.append(d)
            texts.append(f"{r.removed} {kind} {kept}/{size} {interval_text(d.value, d.lo, d.hi)} (p {d.p:.2g}, "
                         f"eligible pool {pool})")
    v = combine([p.verdict for p in parts])
    worst = min(parts, key=lambda p: p.lo if np.isfinite(p.lo) else -np.inf)
    decide = decide_text(size, worst.value, worst.lo, worst.hi, worst.low, unit="split items") \
        if v == UNDECIDED else ""
    return Claim(claim, paper, _subject(selectors), null, test, worst.value, worst.lo, worst.hi,
                 "least: " + interval_text(worst.value, worst.lo, worst.hi) + "; " + "; ".join(texts), v, decide)


def obs_fixed_vs_recomputed(variants: Mapping[str, tuple[np.ndarray, np.ndarray]], selected: np.ndarray, *,
                            n_boot: int, rng: np.random.Generator, ci: float = 0.95) -> Claim:
    """Table I, per selector: the fixed-pool variant keeps more of the split than the recomputed one: paired
    bootstrap of the per-item retention difference over the split's items (:func:`.decisions.paired_above_zero`),
    every selector's interval above 0. ``variants``: removed selector → ``(fixed, recomputed)`` masks."""
    s = np.asarray(selected, dtype=bool)
    claim = "per selector, a fixed eligible pool retains more than recomputed eligibility (Table I)"
    paper = "Table I: fixed − recomputed kept = 726 − 690, 705 − 641, 727 − 674 (of 849) for the three selectors"
    null = "fixing the pool changes nothing: each split item kept alike by both variants (equal retention)"
    test = f"fixed − recomputed retention per selector, {ci:.0%} paired bootstrap over the split's items, above 0 " \
           "for every selector"
    if not variants or not s.any():
        return no_subject(claim, paper, null, test, "needs two or more selectors and a non-empty split")
    parts, texts = [], []
    for name, (fixed, recomputed) in variants.items():
        d = paired_above_zero(np.asarray(fixed, dtype=bool)[s], np.asarray(recomputed, dtype=bool)[s], n_boot=n_boot,
                              rng=rng, ci=ci)
        parts.append(d)
        texts.append(f"{name} {d.value:+.3f} [{d.lo:+.3f}, {d.hi:+.3f}]")
    v = combine([p.verdict for p in parts])
    worst = min(parts, key=lambda p: p.lo if np.isfinite(p.lo) else -np.inf)
    decide = decide_text(int(s.sum()), worst.value, worst.lo, worst.hi, 0.0, unit="split items") \
        if v == UNDECIDED else ""
    return Claim(claim, paper, _subject(list(variants)), null, test, worst.value, worst.lo, worst.hi,
                 "; ".join(texts) + f" (|S| = {int(s.sum())})", v, decide)


def _exact(lost: int) -> Decision:
    return Decision(float(lost), float(lost), float(lost), REPRODUCED if lost == 0 else NOT_REPRODUCED, 0.0, 0.0)


def obs_sources_kept(sources: Sequence[str], selected: np.ndarray, selectors: Sequence[str]) -> Claim:
    """Supplement II-A, Fig. 8(a): the split keeps every source benchmark of the pool (an exact count; a pool of
    one source keeps it by construction)."""
    src, s = np.asarray(sources, dtype=object).astype(str), np.asarray(selected, dtype=bool)
    claim = "the split keeps every source benchmark"
    paper = "Supp. Fig. 8(a): the split retains all six source benchmarks"
    null = "selection drops a source (one source's items never pass the cut)"
    test = "sources of the pool absent from the split = 0 (an exact count over the pool)"
    pool = sorted(set(src.tolist()))
    if not s.any():
        return no_subject(claim, paper, null, test, "the split is empty")
    if len(pool) < 2:
        return Claim(claim, paper, _subject(selectors), null, test, 0.0, 0.0, 0.0,
                     f"the pool has one source ({pool[0]}): a non-empty split keeps it", BY_CONSTRUCTION)
    lost = sorted(set(pool) - set(src[s].tolist()))
    d = _exact(len(lost))
    return _row(claim, paper, _subject(selectors), null, test, d, f"{len(pool) - len(lost)} of {len(pool)} sources "
                "kept" + (f" (lost: {', '.join(lost)})" if lost else ""), digits=0)


def obs_families_kept(families: Sequence[str], eligible: np.ndarray, selected: np.ndarray,
                      selectors: Sequence[str]) -> Claim:
    """Supplement II-A: the split stays broad: every task family with eligible items keeps at least one in the
    split (an exact count). Families with no eligible item (a selector silent on all of them) are no subject
    here: :func:`obs_families_no_response` names them."""
    fam = np.asarray(families, dtype=object).astype(str)
    s = np.asarray(selected, dtype=bool)
    claim = "the split keeps broad task coverage (every family with eligible items)"
    paper = "Supp. II-A: Bench-C remains broad enough to avoid a narrow benchmark artifact (Fig. 8(b): 13 L2 shown)"
    null = "selection narrows the split: a family with eligible items loses them all at the cut (Eq. 6)"
    test = "families with eligible items that the split lacks = 0 (an exact count)"
    cov = coverage_table(fam, eligible, s)
    live = cov[cov.eligible > 0]
    if not s.any() or not len(live):
        return no_subject(claim, paper, null, test, "no family has eligible items (A⁺ is empty)")
    lost = live[live.split == 0]
    d = _exact(len(lost))
    return _row(claim, paper, _subject(selectors), null, test, d,
                f"{len(lost)} of {len(live)} families with eligible items lost"
                + (f": {', '.join(map(str, lost.index))}" if len(lost) else "")
                + (f"; {len(cov) - len(live)} families without eligible items set aside" if len(cov) > len(live)
                   else ""), digits=0)


def obs_families_no_response(G: np.ndarray, families: Sequence[str], selectors: Sequence[str]) -> Claim | None:
    """The families on which some selector never responds (Eq. 3 excludes all their items): the coverage claim has
    no subject there. ``None`` when every family has eligible items."""
    fam = np.asarray(families, dtype=object).astype(str)
    el = eligible_(np.asarray(G, dtype=np.float64))
    dead = sorted(f for f in set(fam.tolist()) if not el[fam == f].any())
    if not dead:
        return None
    silent = silent_families(G, fam, selectors)
    who = "; ".join(f"{f}: silent {', '.join(silent.selector[silent.family == f]) or 'none wholly'}" for f in dead)
    return no_subject("the split keeps families on which a selector never responds",
                      "Supp. II-A: Bench-C remains broad (every task type represented)",
                      "a family's items lost at Eq. 3", "families without eligible items",
                      f"{len(dead)} famil{'y' if len(dead) == 1 else 'ies'} without any eligible item, because a "
                      f"selector gives no response on them ({who}): no item to select")
