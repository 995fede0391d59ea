"""The bootstrap over items behind seed 002's observation rows (notebook 05), and the statistics they share.

Every row of :func:`vlmrobust.analysis.drift.observations.findings_table` is
decided by :func:`vlmrobust.stats.observations.verdict`: a statistic's 95 %
percentile interval against a region stated in the row's ``check`` text.

**The unit is the item** (an image with its question). :class:`ItemBoot` draws
``n_boot`` resamples of a row's items with replacement, as resample counts
(:func:`vlmrobust.stats.bootstrap.resample_counts`, from a seeded generator of
:func:`vlmrobust.repro.rng`). Every statistic here is a function of per-item
sums (a flip rate: flips and instances per item; a mean drift: the sum and count
of its distances; Cohen's d: counts, sums and sums of squares), so each
resample is one product of the counts with the per-item sums
(:func:`~vlmrobust.stats.bootstrap.replicate_sums`). All statistics of one row
share its resamples: a difference between two perturbations, two regimes or two
rungs of a size ladder is **paired** (both sides see the same resampled items).

:class:`Est` carries a statistic's point value (every item once) beside its
replicates; arithmetic on :class:`Est` applies to both, so that a statistic is
written once, e.g. ``d = (m_p - m_c) / ((v_p + v_c) / 2).sqrt()``.

The rows that read only the probe rows live here too (finding (iii), Patterns 1
and 2, the Dirichlet signs, C.4's MCQ-vs-open); the others, and the entry point,
in :mod:`.observations`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ...probes.regimes import REGIMES
from ...stats.bootstrap import interval_of, replicate_sums, resample_counts
from ...stats.grouped import group_codes
from ...stats.observations import Check, combine, interval_text, verdict
from .instability import TABLE_UNIONS, UNION_SIX, label
from .representation import with_flips

__all__ = ["Est", "ItemBoot", "GEOMETRIC", "TEXT", "TABLE_SIX", "REGIMES", "ABOVE_0", "BELOW_0",
           "drift_rows", "flip_rates", "mean_drift", "moments", "cohens_d", "models_of", "smallest",
           "obs_overlay_near_control", "obs_pattern1_overlay_drifts_most", "obs_pattern2_context_not_answer",
           "obs_mcq_steadier", "obs_dirichlet_signs"]

#: Seed 002's semantic overlay, and the perturbations that Tables 2-4 and 28 list: its geometric ones and TextOverlay.
TEXT = "text_overlay"
TABLE_SIX = UNION_SIX
GEOMETRIC = tuple(p for p in TABLE_SIX if p != TEXT)
#: Region edges of "interval above 0" / "below 0" (strictly: an interval [0, 0] is not above 0).
ABOVE_0 = 1e-12
BELOW_0 = -1e-12


@dataclass(frozen=True)
class Est:
    """A statistic's point value (all items once) and its bootstrap replicates (one per resample)."""

    point: float
    reps: np.ndarray

    def _op(self, other, f) -> Est:
        with np.errstate(all="ignore"):
            if isinstance(other, Est):
                return Est(float(f(self.point, other.point)), f(self.reps, other.reps))
            return Est(float(f(self.point, other)), f(self.reps, other))

    def __add__(self, o) -> Est:
        return self._op(o, np.add)

    __radd__ = __add__

    def __sub__(self, o) -> Est:
        return self._op(o, np.subtract)

    def __rsub__(self, o) -> Est:
        return self._op(o, lambda a, b: np.subtract(b, a))

    def __mul__(self, o) -> Est:
        return self._op(o, np.multiply)

    __rmul__ = __mul__

    def __truediv__(self, o) -> Est:
        return self._op(o, np.divide)

    def __neg__(self) -> Est:
        return Est(-self.point, -self.reps)

    def sqrt(self) -> Est:
        with np.errstate(all="ignore"):
            return Est(float(np.sqrt(self.point)), np.sqrt(self.reps))

    def ci(self, ci: float = 0.95) -> tuple[float, float]:
        """Percentile interval of the replicates (NaN replicates ignored; NaN when there are none)."""
        if not np.isfinite(self.point) or not len(self.reps):
            return float("nan"), float("nan")
        return interval_of(self.reps, ci)

    def verdict(self, low: float = -np.inf, high: float = np.inf) -> bool | None:
        """:func:`~vlmrobust.stats.observations.verdict` of the 95 % interval against ``[low, high]``."""
        return verdict(*self.ci(), low, high)

    def text(self, digits: int = 3, scale: float = 1.0, sign: bool = False) -> str:
        """``0.42 [0.30, 0.55]`` (times ``scale``; ``+`` in front of non-negative values when ``sign``)."""
        lo, hi = self.ci()
        body = interval_text(scale * self.point, scale * lo, scale * hi, digits)
        return ("+" + body) if sign and np.isfinite(self.point) and self.point >= 0 else body


class ItemBoot:
    """``n_boot`` resamples (counts) of a set of items; per-item sums and their replicated totals."""

    def __init__(self, items: Iterable, n_boot: int, rng: np.random.Generator):
        self.items = pd.Index(sorted({str(i) for i in items}))
        n = len(self.items)
        self.W = resample_counts(n, n_boot, rng) if n else np.zeros((n_boot, 0))

    def zeros(self) -> np.ndarray:
        return np.zeros(len(self.items))

    def total(self, per_item: np.ndarray) -> Est:
        """The sum over items and its replicates (``W @ per_item``)."""
        v = np.asarray(per_item, dtype=np.float64)
        reps = replicate_sums(self.W, v[:, None])[:, 0] if v.size else np.zeros(len(self.W))
        return Est(float(v.sum()), reps)

    def sums(self, df: pd.DataFrame, by: Sequence[str], value=None, how: str = "sum") -> dict[tuple, np.ndarray]:
        """``{group key: per-item vector}``: the sum (``how="max"``: the maximum, from 0) of ``value`` (a column
        name or an array; 1 per row when ``None``) over the rows of each group of ``by``, item by item."""
        if not len(df):
            return {}
        codes, keys = group_codes(df, list(by))
        item = self.items.get_indexer(df["item_id"].astype(str))
        if (item < 0).any():
            raise ValueError("rows name items outside the resampled set")
        v = np.ones(len(df)) if value is None else np.asarray(df[value] if isinstance(value, str) else value,
                                                               dtype=np.float64)
        out = np.zeros((len(keys), len(self.items)))
        (np.maximum if how == "max" else np.add).at(out, (codes, item), v)
        return {k: out[i] for i, k in enumerate(keys.itertuples(index=False, name=None))}

    def ratio(self, num: np.ndarray | None, den: np.ndarray | None) -> Est:
        """``sum(num) / sum(den)`` over items (NaN when a side is missing)."""
        if num is None or den is None:
            return Est(float("nan"), np.full(len(self.W), np.nan))
        return self.total(num) / self.total(den)


def models_of(*frames: pd.DataFrame) -> list[str]:
    """The models of the frames, in order of first appearance."""
    seen: dict[str, None] = {}
    for f in frames:
        if f is not None and len(f) and "model" in f.columns:
            seen.update(dict.fromkeys(pd.unique(f["model"])))
    return list(seen)


def drift_rows(probes: pd.DataFrame, regimes: Sequence[str], value: str = "cos") -> pd.DataFrame:
    """The ``drift`` probe rows of ``regimes`` with a finite ``value``."""
    d = probes[(probes["kind"] == "drift") & probes["regime"].isin(list(regimes))]
    return d[np.isfinite(d[value].to_numpy(dtype=np.float64))]


def flip_rates(boot: ItemBoot, pairs: pd.DataFrame, union: Sequence[str] = TABLE_UNIONS["table1"]
               ) -> dict[tuple, Est]:
    """``{(model, perturbation): IFR}`` (Eq. 3) and ``{(model, "any"): IV}`` (Eq. 4) over the images with an
    instance of a perturbation of ``union`` (Table 1's "Any" by default)."""
    if not len(pairs):
        return {}
    flip = pairs["flip"].to_numpy(dtype=np.float64)
    f, n = boot.sums(pairs, ["model", "perturbation"], flip), boot.sums(pairs, ["model", "perturbation"])
    out = {k: boot.ratio(f[k], n[k]) for k in f}
    u = pairs[pairs["perturbation"].isin(list(union))]
    if len(u):
        any_flip = boot.sums(u, ["model"], u["flip"].to_numpy(dtype=np.float64), how="max")
        seen = boot.sums(u, ["model"], how="max")
        out.update({(m, "any"): boot.ratio(any_flip[(m,)], seen[(m,)]) for (m,) in any_flip})
    return out


def mean_drift(boot: ItemBoot, rows: pd.DataFrame, union: Sequence[str] = TABLE_UNIONS["table3"], value: str = "cos"
               ) -> dict[tuple, Est]:
    """``{(model, perturbation, regime): mean value}`` over instances, with ``(model, "any", regime)`` pooling
    the perturbations of ``union`` (Table 3's "Any")."""
    if not len(rows):
        return {}
    by = ["model", "perturbation", "regime"]
    s, n = boot.sums(rows, by, value), boot.sums(rows, by)
    out = {k: boot.ratio(s[k], n[k]) for k in s}
    u = rows[rows["perturbation"].isin(list(union))]
    su, nu = boot.sums(u, ["model", "regime"], value), boot.sums(u, ["model", "regime"])
    out.update({(m, "any", r): boot.ratio(su[(m, r)], nu[(m, r)]) for (m, r) in su})
    return out


def moments(boot: ItemBoot, rows: pd.DataFrame, by: Sequence[str], value: str) -> dict[tuple, tuple[Est, Est]]:
    """``{key: (mean, sample variance)}`` (``ddof = 1``) of ``value`` per group of ``by``."""
    if not len(rows):
        return {}
    x = rows[value].to_numpy(dtype=np.float64)
    n, s1, s2 = boot.sums(rows, by), boot.sums(rows, by, x), boot.sums(rows, by, x * x)
    out = {}
    for k in n:
        cnt, t1, t2 = boot.total(n[k]), boot.total(s1[k]), boot.total(s2[k])
        mean = t1 / cnt
        out[k] = (mean, (t2 - t1 * mean) / (cnt - 1))
    return out


def cohens_d(pert: tuple[Est, Est], ctrl: tuple[Est, Est]) -> Est:
    """Cohen's d with the unweighted pooled SD (seed 002 Table 4/7; as
    :func:`~vlmrobust.analysis.drift.representation.cohens_d_moments`), on every replicate."""
    (mp, vp), (mc, vc) = pert, ctrl
    return (mp - mc) / ((vp + vc) / 2.0).sqrt()


def smallest(diffs: dict[str, Est]) -> tuple[str, Est] | None:
    """The key and value of the smallest point value (``None`` when empty or all NaN)."""
    fin = {k: v for k, v in diffs.items() if np.isfinite(v.point)}
    return min(fin.items(), key=lambda kv: kv[1].point) if fin else None


def _nan(boot: ItemBoot) -> Est:
    return Est(float("nan"), np.full(len(boot.W), np.nan))


# --------------------------------------------------------------------------- rows read off the probe rows


def obs_overlay_near_control(probes: pd.DataFrame, regime: str, n_boot: int, rng: np.random.Generator, *,
                             min_pct: float = 10.0) -> Check:
    """(iii): per model, in ``regime`` (Table 4's ans_mcq_free), TextOverlay's Cohen's d against the control
    is above every other Table 4 perturbation's (paired differences over items; the control pairs are
    resampled with their first item), and TextOverlay's mean drift is above ``min_pct`` % of the mean control
    distance (Table 4: geometric perturbations stay below 10 %, TextOverlay reaches 77.7 %)."""
    drift = drift_rows(probes, [regime])
    ctrl = probes[(probes["kind"] == "control") & (probes["regime"] == regime)]
    ctrl = ctrl[np.isfinite(ctrl["cos"].to_numpy(dtype=np.float64))]
    boot = ItemBoot(pd.concat([drift["item_id"], ctrl["item_id"]]), n_boot, rng)
    mp, mc = moments(boot, drift, ["model", "perturbation"], "cos"), moments(boot, ctrl, ["model"], "cos")
    parts, oks = [], []
    for m in models_of(drift):
        if (m, TEXT) not in mp or (m,) not in mc:
            parts.append(f"{m}: no TextOverlay drift or no control")
            oks.append(None)
            continue
        d = {p: cohens_d(mp[(m, p)], mc[(m,)]) for p in TABLE_SIX if (m, p) in mp}
        pct = 100.0 * mp[(m, TEXT)][0] / mc[(m,)][0]
        gaps = {p: d[TEXT] - v for p, v in d.items() if p != TEXT}
        oks += [v.verdict(ABOVE_0) for v in gaps.values()] or [None]
        oks.append(pct.verdict(min_pct))
        near = smallest(gaps)
        nxt = f", next {label(near[0])} {d[near[0]].text(2)} (difference {near[1].text(2, sign=True)})" if near else ""
        parts.append(f"{m}: d TextOverlay {d[TEXT].text(2)}{nxt}; drift {pct.text(1)} % of control")
    return Check("(iii) text overlays move representations toward unrelated images",
                 "ans_mcq_free: TextOverlay d = -0.34, 77.7 % of control; geometric d <= -3.5, drift < 10 % of "
                 "control (Table 4)",
                 f"per model, {regime} cosine drift: Cohen's d(TextOverlay) - d(p) above 0 for every other "
                 "perturbation p of Table 4 (the largest d, i.e. the closest to 0 when all are negative), and "
                 f"TextOverlay's mean drift above {min_pct:g} % of the mean control distance (Table 4's ceiling of "
                 "the geometric perturbations); 95 % intervals over items, paired",
                 "; ".join(parts) or "no drift rows", combine(oks) if oks else None)


def obs_pattern1_overlay_drifts_most(probes: pd.DataFrame, n_boot: int, rng: np.random.Generator,
                                     regimes=REGIMES) -> Check:
    """Pattern 1 (§4.3, Table 3): per model and regime, TextOverlay's mean cosine drift is above every geometric
    perturbation's (paired differences over items, intervals above 0)."""
    rows = drift_rows(probes, regimes)
    boot = ItemBoot(rows["item_id"], n_boot, rng)
    md = mean_drift(boot, rows)
    parts, oks = [], []
    for m in models_of(rows):
        cells = []
        for r in regimes:
            to = md.get((m, TEXT, r))
            diffs = {p: to - md[(m, p, r)] for p in GEOMETRIC if to is not None and (m, p, r) in md}
            if not diffs:
                cells.append(f"{r} n/a")
                oks.append(None)
                continue
            oks += [v.verdict(ABOVE_0) for v in diffs.values()]
            p, v = smallest(diffs) or (GEOMETRIC[0], _nan(boot))
            cells.append(f"{r} {to.text(4)}, - {label(p)} {v.text(4, sign=True)}")
        parts.append(f"{m}: " + "; ".join(cells))
    return Check("Pattern 1: TextOverlay induces the largest drift in every regime",
                 "TextOverlay's similarity is the lowest in all five regimes, e.g. ctx_open 0.866 vs ~0.99 for "
                 "translation and pad/crop (§4.3, Table 3)",
                 "per model and regime (" + ", ".join(regimes) + "): TextOverlay's mean cosine drift minus each "
                 "geometric perturbation's, 95 % interval over items (paired) above 0; shown: TextOverlay's drift "
                 "and its smallest lead",
                 " | ".join(parts) or "no drift rows", combine(oks) if oks else None)


def _any_gaps(probes, n_boot, rng, gaps: list[tuple[str, str]]):
    regs = list(dict.fromkeys(r for g in gaps for r in g))
    rows = drift_rows(probes, regs)
    boot = ItemBoot(rows["item_id"], n_boot, rng)
    md = mean_drift(boot, rows)
    parts, oks = [], []
    for m in models_of(rows):
        got = {r: md.get((m, "any", r), _nan(boot)) for r in regs}
        diffs = [(a, b, got[a] - got[b]) for a, b in gaps]
        oks += [v.verdict(ABOVE_0) for _, _, v in diffs]
        parts.append(f"{m}: Any drift " + ", ".join(f"{r} {got[r].text(4)}" for r in regs) + "; "
                     + ", ".join(f"{a} - {b} {v.text(4, sign=True)}" for a, b, v in diffs))
    return "; ".join(parts) or "no drift rows", combine(oks) if oks else None


def obs_pattern2_context_not_answer(probes: pd.DataFrame, n_boot: int, rng: np.random.Generator) -> Check:
    """Pattern 2 (§4.3): on Table 3's Any rows, ctx_open drifts more than ctx_mcq (MCQ conditioning steadies
    the context), and ans_mcq_free drifts more than ctx_mcq (the steadiness does not reach the answer the
    model gives with the options shown); paired over items.

    ``ans_mcq`` is left out of the rule: in the paper's own Table 3 Any row it is *steadier* than ctx_mcq
    (0.988 vs 0.984), so "does not propagate to ans_mcq" cannot mean "drifts more than ctx_mcq" there.
    """
    gaps = [("ctx_open", "ctx_mcq"), ("ans_mcq_free", "ctx_mcq")]
    measured, ok = _any_gaps(probes, n_boot, rng, gaps)
    return Check("Pattern 2: MCQ conditioning steadies the context, not the answer",
                 "ctx_mcq is more stable than ctx_open, and the stability does not propagate to ans_mcq and "
                 "ans_mcq_free (§4.3). Table 3's Any: ctx_open 0.970, ctx_mcq 0.984, ans_mcq 0.988, ans_mcq_free "
                 "0.968 (there ans_mcq is the steadier, so only ans_mcq_free is checked); Gemma's Tables 10, 22, "
                 "23: both answer probes drift more",
                 "per model, mean cosine drift of Table 3's Any (union): ctx_open - ctx_mcq and ans_mcq_free - "
                 "ctx_mcq, 95 % intervals over items (paired) above 0",
                 measured, ok)


def obs_mcq_steadier(probes: pd.DataFrame, n_boot: int, rng: np.random.Generator) -> Check:
    """C.4 (v): on Table 3's Any rows, ctx_open drifts more than ctx_mcq and ans_open more than ans_mcq."""
    measured, ok = _any_gaps(probes, n_boot, rng, [("ctx_open", "ctx_mcq"), ("ans_open", "ans_mcq")])
    return Check("C.4: MCQ probes are steadier than open ones",
                 "ctx_mcq and ans_mcq are consistently more stable than ctx_open and ans_open (App. C.4, Tables "
                 "10, 22, 23; Table 3's Any: 0.984 vs 0.970 and 0.988 vs 0.970)",
                 "per model, mean cosine drift of Table 3's Any (union): ctx_open - ctx_mcq and ans_open - ans_mcq, "
                 "95 % intervals over items (paired) above 0",
                 measured, ok)


def obs_dirichlet_signs(probes: pd.DataFrame, pairs: pd.DataFrame, n_boot: int, rng: np.random.Generator
                        ) -> Check:
    """§4.5, App. E (Table 28): per model, mean ΔE_dir of Translation above 0, of TextOverlay below 0, of
    Rotation below every other Table 28 perturbation's; and flip-inducing instances move E more: the mean over
    flipping instances of ``|ΔE|`` minus the mean ``|ΔE|`` of the non-flipping instances of the same
    perturbation (within perturbations, so that a perturbation that flips often and moves E much does not
    decide it alone) above 0."""
    grid = drift_rows(probes, ["vision_grid"], "d_energy")
    grid = grid[grid["perturbation"].isin(list(TABLE_SIX))]
    boot = ItemBoot(grid["item_id"], n_boot, rng)
    by = ["model", "perturbation"]
    s, n = boot.sums(grid, by, "d_energy"), boot.sums(grid, by)
    g = with_flips(grid, pairs)
    g = g.assign(abs_dE=g["d_energy"].abs())
    flips, kept = g[g["flip"].eq(True)], g[g["flip"].eq(False)]
    Sf, Nf = boot.sums(flips, by, "abs_dE"), boot.sums(flips, by)
    Sn, Nn = boot.sums(kept, by, "abs_dE"), boot.sums(kept, by)
    parts, oks = [], []
    for m in models_of(grid):
        mean = {p: boot.ratio(s[(m, p)], n[(m, p)]) for p in TABLE_SIX if (m, p) in s}
        if not {"translate", TEXT, "rotate"} <= set(mean):
            parts.append(f"{m}: Translation, TextOverlay or Rotation missing")
            oks.append(None)
            continue
        rot = {p: mean["rotate"] - v for p, v in mean.items() if p != "rotate"}
        oks += [mean["translate"].verdict(ABOVE_0), mean[TEXT].verdict(high=BELOW_0)]
        oks += [v.verdict(high=BELOW_0) for v in rot.values()]
        num, den = Est(0.0, np.zeros(len(boot.W))), Est(0.0, np.zeros(len(boot.W)))
        for p in TABLE_SIX:
            z = boot.zeros()
            sf, nfl, sn, nn = (boot.total(d.get((m, p), z)) for d in (Sf, Nf, Sn, Nn))
            term = sf - nfl * (sn / nn)
            num += Est(term.point if nn.point > 0 else 0.0, np.where(nn.reps > 0, term.reps, 0.0))
            den += Est(nfl.point if nn.point > 0 else 0.0, np.where(nn.reps > 0, nfl.reps, 0.0))
        gap = num / den
        oks.append(gap.verdict(ABOVE_0))
        near = max(rot.items(), key=lambda kv: kv[1].point if np.isfinite(kv[1].point) else -np.inf)
        parts.append(f"{m}: ΔE Translation {mean['translate'].text(1, sign=True)}, TextOverlay "
                     f"{mean[TEXT].text(1, sign=True)}, Rotation {mean['rotate'].text(1, sign=True)} (minus the "
                     f"next most negative, {label(near[0])}: {near[1].text(1, sign=True)}); flips' |ΔE| minus "
                     f"non-flips' {gap.text(1, sign=True)}")
    return Check("Dirichlet energy: its sign follows the perturbation, flips move it more",
                 "ΔE_dir Translation +10.34, TextOverlay -33.87, Rotation -72.73 (the most negative); flip-inducing "
                 "instances show larger |ΔE| (§4.5, Table 28, App. E.3)",
                 "per model, mean ΔE_dir of the vision-token grid: Translation above 0, TextOverlay below 0, "
                 "Rotation minus every other Table 28 perturbation below 0; and flipping instances' |ΔE| minus the "
                 "mean |ΔE| of the same perturbation's non-flipping instances, averaged over the flips, above 0; "
                 "95 % intervals over items (paired)",
                 "; ".join(parts) or "no vision-grid rows", combine(oks) if oks else None)
