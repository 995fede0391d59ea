"""Notebook 05's claim decisions: each as a function of per-item sums, shared by the claims table and the simulations.

**One decision, two callers.** Every row of :func:`vlmrobust.analysis.drift.claims.claims_table` reduces
the run's frames to per-item sums (a flip count and an instance count per item, the sum, count and sum of
squares of a drift per item, ...) and hands them to a ``*_parts`` function here, which builds the row's
:class:`~vlmrobust.analysis.drift.itemboot.Part` s: statistics with 95 % item-bootstrap intervals
(:class:`~vlmrobust.analysis.drift.itemboot.ItemBoot`, paired: every statistic of a row sees the same
resampled items) against their acceptance regions. :data:`.rules.RULES` draws the same per-item sums from
each rule's null (the claim false) and at the paper's effect, and calls the same functions.

**Regions from the paper** (each stated in the row's ``test`` text):

* "comparable or greater" (finding (iv)): a larger rung counts as *more* robust, the claim false, when its
  rate is at most half the smallest rung's (:data:`SCALE_RATIO`): App. A.7 calls flip rates of 2.9 % and
  4.3 % "comparable" to the geometric perturbations' 6-8 %, and 1.8 % "nearly inert";
* "drifts more" between perturbations or regimes: a gap of at least 1 % of the mean distance between
  unrelated images (the control, :data:`DRIFT_MARGIN`), far below every gap of the paper's Table 3
  (0.014 to 0.18 in cosine against a control of 0.228) and above floating-point noise;
* "over one third of images" (finding (i)): union IV at least 1/3; "exceed 79 %" (Table 29): ASR at least
  0.79; Table 4's 10 % ceiling of geometric drift; an indifferent prior of 0.5. A share's own bound (1) is not
  an edge of its region, so that a share of 1 is not "on the edge".
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from .instability import label
from .itemboot import ABOVE_0, BELOW_0, TEXT, Est, ItemBoot, Part, cohens_d, exact_rate

__all__ = ["Ratio", "Moments", "SCALE_RATIO", "DRIFT_MARGIN", "MIN_IV", "MIN_ASR", "MIN_PCT", "rate",
           "disconnect_parts", "gap_part", "near_control_parts", "scale_parts", "both_ways_parts",
           "conservative_part", "dirichlet_parts", "pgd_parts", "prior_parts"]

#: Per-item numerator and denominator sums of a rate or a mean.
Ratio = tuple[np.ndarray, np.ndarray]
#: Per-item count, sum and sum of squares of a distance.
Moments = tuple[np.ndarray, np.ndarray, np.ndarray]

SCALE_RATIO = 0.5
DRIFT_MARGIN = 0.01
MIN_IV = 1 / 3
MIN_ASR = 0.79
MIN_PCT = 10.0


def _n(*dens: np.ndarray) -> int:
    """Items that carry data (a positive denominator on some side)."""
    tot = sum(np.asarray(d, dtype=np.float64) for d in dens)
    return int((np.asarray(tot) > 0).sum())


def rate(boot: ItemBoot, r: Ratio | None) -> Est:
    """``sum(num) / sum(den)`` over items with its replicates (NaN when ``r`` is ``None``)."""
    return boot.ratio(*(r if r is not None else (None, None)))


def disconnect_parts(boot: ItemBoot, model: str, iv: Ratio, far: Ratio, *, min_iv: float = MIN_IV) -> list[Part]:
    """Finding (i), seed 002 §1, §4.1: union IV (Eq. 4 over Table 1's union) within ``[min_iv, 1]``, and the share
    of kept-answer instances whose drift reaches the control's 5th percentile above 0 ("in some cases")."""
    return [Part(f"{model}: union IV", rate(boot, iv), min_iv, np.inf, _n(iv[1])),
            Part(f"{model}: kept answers drifting as far as unrelated images (share)", rate(boot, far), ABOVE_0, np.inf,
                 _n(far[1]), why="no kept answer or no control")]


def gap_part(boot: ItemBoot, name: str, a: Ratio | None, b: Ratio | None, margin: float = ABOVE_0, *,
             digits: int = 3) -> Part:
    """``rate(a) - rate(b)`` (paired over items) within ``[margin, inf)``: "a exceeds b by at least margin"."""
    est = rate(boot, a) - rate(boot, b)
    n = _n(*(r[1] for r in (a, b) if r is not None))
    return Part(name, est, margin, np.inf, n, digits=digits, why="a side has no instance")


def _mean_var(boot: ItemBoot, m: Moments) -> tuple[Est, Est]:
    cnt, t1, t2 = (boot.total(x) for x in m)
    mean = t1 / cnt
    return mean, (t2 - t1 * mean) / (cnt - 1)


def near_control_parts(boot: ItemBoot, model: str, pert: Mapping[str, Moments], ctrl: Moments, *,
                       min_pct: float = MIN_PCT) -> list[Part]:
    """Finding (iii), Table 4: Cohen's d (unweighted pooled SD) of TextOverlay minus that of every other
    perturbation in ``pert`` above 0, and TextOverlay's mean drift at least ``min_pct`` % of the control's."""
    mc = _mean_var(boot, ctrl)
    mv = {p: _mean_var(boot, m) for p, m in pert.items()}
    d = {p: cohens_d(v, mc) for p, v in mv.items()}
    n = _n(*(m[0] for m in pert.values()))
    parts = [Part(f"{model}: d {label(TEXT)} - d {label(p)}", d[TEXT] - v, ABOVE_0, np.inf, n, digits=2)
             for p, v in d.items() if p != TEXT]
    pct = 100.0 * mv[TEXT][0] / mc[0]
    return parts + [Part(f"{model}: {label(TEXT)} drift as % of control", pct, min_pct, np.inf, n, digits=1)]


def scale_parts(boot: ItemBoot, rungs: Sequence[str], stats: Mapping[str, Mapping[str, Ratio]], *,
                ratio: float = SCALE_RATIO) -> list[Part]:
    """Finding (iv), §5, Table 5: every larger rung against the smallest (``rungs`` by size; "every larger
    model is less robust than the 2B", App. C.2), paired over items: clean accuracy difference above 0, and for
    each of ``"ifr"`` (TextOverlay IFR), ``"iv"`` (union IV) and ``"drift"`` (mean cosine drift of the union) the
    larger rung's value minus ``ratio`` times the smallest's at least 0: robustness does not improve by more
    than "comparable" allows. A smallest rung without flips (or drift) leaves that part without an estimate."""
    small, parts = rungs[0], []
    s = stats[small]
    words = {"ifr": "TextOverlay IFR", "iv": "union IV", "drift": "mean drift"}
    for big in rungs[1:]:
        b = stats[big]
        acc = rate(boot, b.get("acc")) - rate(boot, s.get("acc"))
        parts.append(Part(f"{small} -> {big}: accuracy difference", acc, ABOVE_0, np.inf,
                          _n(*(r[1] for r in (b.get("acc"), s.get("acc")) if r is not None)), digits=3))
        for key, what in words.items():
            if key not in s or key not in b:
                continue
            lo_rung = rate(boot, s[key])
            est = rate(boot, b[key]) - ratio * lo_rung
            if not (np.isfinite(lo_rung.point) and lo_rung.point > 0):
                est = Est(float("nan"), np.full(len(boot.W), np.nan))
            parts.append(Part(f"{small} -> {big}: {what} minus {ratio:g} x the smaller's", est, 0.0, np.inf,
                              _n(s[key][1], b[key][1]), digits=3, why=f"the smallest rung shows no {what}"))
    return parts


def both_ways_parts(boot: ItemBoot, model: str, rw: Ratio, wr: Ratio) -> list[Part]:
    """Finding (v), MCQ half (§4.2, Table 2): R->W and W->R shares of the union's instances both above 0."""
    return [Part(f"{model}: R->W share", rate(boot, rw), ABOVE_0, np.inf, _n(rw[1])),
            Part(f"{model}: W->R share", rate(boot, wr), ABOVE_0, np.inf, _n(wr[1]))]


def conservative_part(boot: ItemBoot, model: str, shift: Ratio) -> Part:
    """Finding (v), yes/no half (§7, App. D): the mean margin shift ``s_Yes - s_No`` (perturbed minus clean) over
    the instances of ground-truth-No items below 0: perturbations move answers toward No.

    All ground-truth-No items, not only the clean false positives: selected on a clean margin above 0, the
    false positives' shift is negative by regression to the mean alone whenever the perturbed margin is a
    fresh noisy reading of the same item (their shift is shown beside it)."""
    return Part(f"{model}: mean margin shift on ground-truth-No items", rate(boot, shift), -np.inf, BELOW_0,
                _n(shift[1]), why="no yes/no item with ground truth No")


def dirichlet_parts(boot: ItemBoot, model: str, de: Mapping[str, Ratio], flip_abs: Mapping[str, Ratio],
                    kept_abs: Mapping[str, Ratio]) -> list[Part]:
    """§4.5, Table 28, App. E.3: mean ΔE_dir of Translation above 0 and of TextOverlay below 0, Rotation's
    below every other perturbation's, and the flips' |ΔE| above the mean |ΔE| of the same perturbation's
    non-flipping instances, averaged over the flips (within perturbations: a perturbation that flips often and
    moves E much does not decide it alone)."""
    mean = {p: rate(boot, r) for p, r in de.items()}
    n = _n(*(r[1] for r in de.values()))
    parts = [Part(f"{model}: mean ΔE Translation", mean["translate"], ABOVE_0, np.inf, n, digits=1),
             Part(f"{model}: mean ΔE TextOverlay", mean[TEXT], -np.inf, BELOW_0, n, digits=1)]
    parts += [Part(f"{model}: ΔE Rotation - ΔE {label(p)}", mean["rotate"] - v, -np.inf, BELOW_0, n, digits=1)
              for p, v in mean.items() if p != "rotate"]
    zero = np.zeros(len(boot.W))
    num, den = Est(0.0, zero), Est(0.0, zero)
    for p in de:
        z = boot.zeros()
        sf, nf = (boot.total(x) for x in flip_abs.get(p, (z, z)))
        sn, nn = (boot.total(x) for x in kept_abs.get(p, (z, z)))
        term = sf - nf * (sn / nn)
        num += Est(term.point if nn.point > 0 else 0.0, np.where(nn.reps > 0, term.reps, 0.0))
        den += Est(nf.point if nn.point > 0 else 0.0, np.where(nn.reps > 0, nf.reps, 0.0))
    gap = num / den
    nfl = _n(*(r[1] for r in flip_abs.values())) if flip_abs else 0
    return parts + [Part(f"{model}: flips' |ΔE| minus non-flips'", gap, ABOVE_0, np.inf, nfl, digits=1,
                         why="no flip or no kept instance")]


def pgd_parts(boot: ItemBoot, name: str, adv_wrong: Ratio, drop: Ratio, *, min_asr: float = MIN_ASR) -> list[Part]:
    """§6, Table 29: ASR = 1 - adversarial accuracy within ``[min_asr, 1]``, and the accuracy the attack takes
    (clean minus adversarial, paired over the attacked items) above 0, so that a model answering wrong anyway
    does not pass on its clean errors. One instance per attacked item: the ASR's interval is exact
    (Clopper-Pearson), as the bootstrap of a few agreeing items collapses to a point."""
    asr = rate(boot, adv_wrong)
    exact = exact_rate(float(np.sum(adv_wrong[0])), int(np.sum(adv_wrong[1]))) if np.isfinite(asr.point) else None
    return [Part(f"{name} ASR", asr, min_asr, np.inf, _n(adv_wrong[1]), interval=exact),
            Part(f"{name} accuracy taken by the attack", rate(boot, drop), ABOVE_0, np.inf, _n(drop[1]))]


def prior_parts(boot: ItemBoot, model: str, no: Ratio, p_yes: Ratio) -> list[Part]:
    """§7, App. D: on the blank image, the share answered No within (0.5, 1] and ``S_prior = mean P(Yes)``
    within [0, 0.5): the prior favours No over an indifferent 0.5."""
    return [Part(f"{model}: answered No (share)", rate(boot, no), 0.5 + ABOVE_0, np.inf, _n(no[1])),
            Part(f"{model}: S_prior", rate(boot, p_yes), -np.inf, 0.5 + BELOW_0, _n(p_yes[1]))]
