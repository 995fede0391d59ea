r"""Seed 003's blind spot: where accuracy and each awareness signal reach half-way, and the width between them.

Seed 003 prints its tables and captions but not its method section; the
definitions below are the ones that reproduce its Table V from its Tables IX–X
(``tests/test_visibility.py`` feeds the paper's per-level numbers and gets its
Table V values).

A **curve** is a signal's mean at the visibility levels ``V_1 > V_2 > ... > V_L``
(metres, clearest first) with its clean value ``y_0``. Signals (:data:`SIGNALS`):
accuracy; internal confidence (mean probability of the chosen option);
verbalized confidence (mean ``Confidence: N`` / 100 over parsed answers); abstain
rate with seed 003's main wording and with "I don't know" (``abstain2``).

* **Mid-level.** Accuracy: :math:`m = (y_0 + 1/K)/2` (chance ``1/K``, ``K`` the
  answer options without the abstain option). Internal and verbalized confidence:
  half-way between the clean value and chance, :math:`(y_0 + 1/K)/2` (seed 003's
  rows do not distinguish this from half-way to 0, where every printed bound is
  the same; stated choice). Abstain (``abstain_mid``, :data:`ABSTAIN_MIDS`): a
  fixed :math:`m = 0.5` by default, or half-way between the clean rate and 1,
  :math:`(y_0 + 1)/2`. The default is the rule that best reproduces seed 003's
  Table V from its Table IX (:func:`vlmrobust.analysis.visibility.paper.abstain_mid_comparison`):
  on the one printed abstain row whose clean rate is not 0 (Qwen3-VL-2B, t2, fog,
  clean 0.01) 0.5 gives W = -0.056 and (y_0 + 1)/2 gives -0.053 against the
  printed -0.06 (errors 0.0037 and 0.0074, squared errors 4x apart); of the curves
  within the printing's rounding (+-0.005 at every level) 67 % reproduce the printed
  -0.06 under 0.5, 22 % under (y_0 + 1)/2.
* **First crossing.** Scanning from the clearest level towards the murkiest,
  the first level ``j`` at which the signal reaches its mid-level (accuracy and
  confidence: ``y_j <= m``; abstain: ``y_j >= m``); later crossings are ignored.
  The crossing visibility is interpolated **linearly in log V** between levels
  ``j-1`` and ``j``:

  .. math:: \log V^\* = \log V_{j-1} + \frac{y_{j-1} - m}{y_{j-1} - y_j}\,(\log V_j - \log V_{j-1}).

  Reached already at the first level: :math:`V^\* \ge V_1` (a bound; no
  interpolation towards the clean image, which has no V). Never reached inside
  the sweep: :math:`V^\* < V_L`.
* **Width.** :math:`W = \log_{10}(V_{acc} / V_{aware})` for each awareness
  signal, with :math:`V_{acc}` the crossing of accuracy. Each visibility is an
  interval (a crossing ``[V*, V*]``, "reached at the first level" ``[V_1, inf)``,
  "never" ``(0, V_L)``), and ``W`` takes the interval of the ratio: a signal
  that never reaches its mid-level gives the lower bound
  :math:`W \ge \log_{10}(V_{acc}/V_L)` (seed 003's "≥"), accuracy already past its
  mid-level at the first level gives :math:`V_{acc} \ge V_1` and a lower bound
  too, a signal already past at the first level an upper bound (≤); both
  unbounded is "n/a".
* **Not interpretable** (``n/a``, :data:`FLAGS`): a clean abstain rate above 0.5
  (seed 003, Smol-2.2B); a clean accuracy or confidence less than ``min_gap``
  (default 0.1) above chance, whose mid-level would lie within ``min_gap/2`` of
  chance, inside sampling noise (stated choice); a curve with a level without data
  (e.g. no parsed verbalized confidence).
* **Intervals.** 95 % percentile intervals over ``n_boot`` bootstrap resamples of
  the **scenes** (both t3 questions of a scene and every level, signal, model and
  arm move together), seeded, computed for every cell at once
  (:func:`bootstrap`); a resample in which a signal does not cross contributes its
  bound; ``bound_share`` reports how often.

Table V's printed text cells (:func:`~vlmrobust.analysis.visibility.tables.table_v`) are laid out in
:mod:`vlmrobust.analysis.visibility.tables`. The cube of per-scene sums (:class:`SignalCube`) comes from the long
table of :func:`vlmrobust.analysis.visibility.readouts.signals_long`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from ...stats.bootstrap import (
    percentile_interval,
    replicate_sums,
    resample_counts,
    resample_indices,
)

__all__ = [
    "SIGNALS", "AWARE_SIGNALS", "CROSSED", "AT_FIRST", "NEVER", "UNDEFINED", "W_KINDS", "FLAGS", "ABSTAIN_MIDS",
    "mid_level", "first_crossing", "crossing_interval", "width", "blind_spots", "SignalCube", "signal_cube",
    "level_means", "bootstrap_means", "bootstrap", "bootstrap_loop", "blind_spot_table",
]

SIGNALS = ("accuracy", "internal", "verbal", "abstain", "abstain2")
AWARE_SIGNALS = SIGNALS[1:]
_RISING = np.array([False, False, False, True, True])
#: Crossing status codes.
CROSSED, AT_FIRST, NEVER, UNDEFINED = 0, 1, 2, 3
#: Kinds of W: a value, a lower bound, an upper bound, not available.
W_KINDS = ("=", "≥", "≤", "n/a")
#: Reasons a cell or a signal is not interpretable (flag codes 1..).
FLAGS = ("", "clean accuracy within min_gap of chance", "clean value within min_gap of chance",
         "clean abstain rate above 0.5", "no data at some level")
#: The abstain mid-levels: a fixed 0.5 (default) or half-way from the clean rate to 1.
ABSTAIN_MIDS = ("fixed", "clean")


def mid_level(clean, chance, signal: str, abstain_mid: str = "fixed") -> np.ndarray:
    """The mid-level of ``signal`` (see the module docstring): half-way to chance; abstain 0.5 or (y_0 + 1)/2."""
    if signal not in SIGNALS:
        raise ValueError(f"signal must be one of {SIGNALS}, got {signal!r}")
    if abstain_mid not in ABSTAIN_MIDS:
        raise ValueError(f"abstain_mid must be one of {ABSTAIN_MIDS}, got {abstain_mid!r}")
    clean = np.asarray(clean, dtype=np.float64)
    if signal.startswith("abstain"):
        return np.full_like(clean, 0.5) if abstain_mid == "fixed" else (clean + 1.0) / 2.0
    return (clean + np.asarray(chance, np.float64)) / 2.0


def _levels(levels_m) -> np.ndarray:
    v = np.asarray(levels_m, dtype=np.float64)
    if v.ndim != 1 or v.size < 2 or not np.all(np.isfinite(v)) or (v <= 0).any() or not np.all(np.diff(v) < 0):
        raise ValueError(f"levels_m must be >= 2 finite visibilities > 0 in metres, strictly decreasing (clearest "
                         f"first), got {levels_m!r}")
    return v


def first_crossing(values, levels_m, mid, rising=False) -> tuple[np.ndarray, np.ndarray]:
    """The first crossing of ``mid`` by each curve: ``(V, status)`` arrays over the leading axes.

    ``values`` is ``(..., L)``, the curve at ``levels_m`` (``L`` visibilities,
    clearest first); ``mid`` broadcasts against ``values[..., 0]``; ``rising``
    (bool, broadcastable likewise) marks signals that rise (abstain). Status
    :data:`CROSSED` with ``V`` interpolated linearly in log V; :data:`AT_FIRST`
    (``V = V_1``, meaning ``V >= V_1``); :data:`NEVER` (``V = V_L``, meaning
    ``V < V_L``); :data:`UNDEFINED` (``V`` NaN) when the curve or ``mid`` has a NaN.
    """
    lv = _levels(levels_m)
    y = np.asarray(values, dtype=np.float64)
    if y.shape[-1] != lv.size:
        raise ValueError(f"values have {y.shape[-1]} levels, levels_m has {lv.size}")
    shape, n_lv = y.shape[:-1], lv.size
    m = np.broadcast_to(np.asarray(mid, dtype=np.float64), shape).reshape(-1)
    sign = np.where(np.broadcast_to(np.asarray(rising, dtype=bool), shape), -1.0, 1.0).reshape(-1)
    # level-major: d[l] <= 0 where the curve has reached its mid-level at level l (falling or rising)
    d = np.moveaxis(y, -1, 0).reshape(n_lv, -1).copy()
    d -= m
    d *= sign
    reached = d <= 0
    j = np.argmax(reached, axis=0)  # the first level that reaches
    cols = np.arange(m.size)
    never = ~reached[j, cols]
    jm = np.maximum(j - 1, 0)
    d0, d1 = d[jm, cols], d[j, cols]
    logv = np.log(lv)
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):  # entries that did not cross are reset below
        v = np.exp(logv[jm] + d0 / (d0 - d1) * (logv[j] - logv[jm]))  # (y0 - m) / (y0 - y1) of the docstring
    status = np.where(never, NEVER, np.where(j == 0, AT_FIRST, CROSSED))
    v = np.where(status == AT_FIRST, lv[0], np.where(status == NEVER, lv[-1], v))
    bad = np.isnan(d.sum(axis=0))  # a NaN level or a NaN mid-level
    return np.where(bad, np.nan, v).reshape(shape), np.where(bad, UNDEFINED, status).reshape(shape)


def crossing_interval(v, status) -> tuple[np.ndarray, np.ndarray]:
    """The interval ``[lo, hi]`` a crossing stands for: ``[V, V]``, ``[V_1, inf)``, ``(0, V_L)``, or NaN."""
    v, status = np.asarray(v, np.float64), np.asarray(status)
    lo = np.where(status == CROSSED, v, np.where(status == AT_FIRST, v, np.where(status == NEVER, 0.0, np.nan)))
    hi = np.where(status == CROSSED, v, np.where(status == AT_FIRST, np.inf, np.where(status == NEVER, v, np.nan)))
    return lo, hi


def width(acc_lo, acc_hi, aware_lo, aware_hi) -> tuple[np.ndarray, np.ndarray]:
    """``(W, kind)``: ``log10(V_acc / V_aware)`` over the two intervals; kind indexes :data:`W_KINDS`.

    The lowest value is ``log10(acc_lo / aware_hi)``, the highest
    ``log10(acc_hi / aware_lo)``; both finite gives the value (they are equal for
    two crossings), an infinite top a lower bound, an infinite bottom an upper
    bound, both infinite or NaN "n/a" (``W`` NaN).
    """
    with np.errstate(divide="ignore", invalid="ignore"):
        lo = np.log10(np.asarray(acc_lo, np.float64)) - np.log10(np.asarray(aware_hi, np.float64))
        hi = np.log10(np.asarray(acc_hi, np.float64)) - np.log10(np.asarray(aware_lo, np.float64))
    fin_lo, fin_hi = np.isfinite(lo), np.isfinite(hi)
    kind = np.where(fin_lo & fin_hi, 0, np.where(fin_lo & (hi == np.inf), 1, np.where(fin_hi & (lo == -np.inf), 2, 3)))
    w = np.where(kind == 2, hi, np.where(kind == 3, np.nan, lo))
    return w, kind


def blind_spots(curves, clean, chance, levels_m, min_gap: float = 0.1,
                abstain_mid: str = "fixed") -> dict[str, np.ndarray]:
    """V_acc, V_aware and W of every cell at once (the definitions of the module docstring).

    ``curves`` is ``(..., 5, L)`` (the signals of :data:`SIGNALS` at the levels),
    ``clean`` ``(..., 5)``, ``chance`` broadcastable to ``(...)``. Returns arrays:
    ``v_acc``, ``v_acc_status`` ``(...)``; ``mid`` ``(..., 5)``; ``v_aware``,
    ``v_aware_status``, ``w``, ``w_kind``, ``flag`` ``(..., 4)`` (flags index
    :data:`FLAGS`; a flagged signal has ``w`` NaN and kind "n/a").
    """
    curves = np.asarray(curves, np.float64)
    clean = np.asarray(clean, np.float64)
    if curves.shape[-2] != len(SIGNALS) or clean.shape[-1] != len(SIGNALS):
        raise ValueError(f"curves must be (..., {len(SIGNALS)}, L) and clean (..., {len(SIGNALS)}), got "
                         f"{curves.shape} and {clean.shape}")
    chance = np.broadcast_to(np.asarray(chance, np.float64), clean.shape[:-1])
    mids = np.stack([mid_level(clean[..., k], chance, s, abstain_mid) for k, s in enumerate(SIGNALS)], axis=-1)
    v, st = first_crossing(curves, levels_m, mids, _RISING)
    gap = clean - chance[..., None]
    flag = np.zeros(clean.shape, dtype=np.int64)
    flag[..., 1:3] = np.where(gap[..., 1:3] < min_gap, 2, 0)
    flag[..., 3:] = np.where(clean[..., 3:] > 0.5, 3, 0)
    flag[..., 0] = np.where(gap[..., 0] < min_gap, 1, 0)
    flag = np.where(st == UNDEFINED, 4, flag)
    v = np.where(flag > 0, np.nan, v)
    st = np.where(flag > 0, UNDEFINED, st)
    lo, hi = crossing_interval(v, st)
    w, kind = width(lo[..., :1], hi[..., :1], lo[..., 1:], hi[..., 1:])
    acc_flag = flag[..., :1]
    out_flag = np.where(acc_flag > 0, acc_flag, flag[..., 1:])
    return {"v_acc": v[..., 0], "v_acc_status": st[..., 0], "mid": mids, "v_aware": v[..., 1:],
            "v_aware_status": st[..., 1:], "w": np.where(out_flag > 0, np.nan, w),
            "w_kind": np.where(out_flag > 0, 3, kind), "flag": out_flag}


# ----------------------------------------------------------------------------- per-scene sums and the bootstrap


@dataclass
class SignalCube:
    """Per-scene sums of every signal: ``sums[s, c, k, l]`` over scene ``s``'s questions in cell ``c``.

    Cells are ``(model, task, arm)`` rows of ``cells`` (with ``chance``);
    ``k`` indexes :data:`SIGNALS`, ``l`` the clean condition (0) and then
    ``levels_m`` (clearest first). ``counts`` holds the number of questions with a
    value (an unparsed verbalized confidence has none).
    """

    cells: pd.DataFrame
    levels_m: np.ndarray
    scenes: np.ndarray
    sums: np.ndarray
    counts: np.ndarray

    @property
    def chance(self) -> np.ndarray:
        return self.cells["chance"].to_numpy(np.float64)


def signal_cube(long: pd.DataFrame, levels_m=None) -> SignalCube:
    """The :class:`SignalCube` of a long table (columns ``model, task, arm, V, scene, signal, value, chance``).

    ``V`` is ``inf`` for the clean rows. ``levels_m`` (clearest first) defaults to
    the table's finite visibilities; rows at other visibilities are an error.
    """
    need = ["model", "task", "arm", "V", "scene", "signal", "value", "chance"]
    missing = [c for c in need if c not in long.columns]
    if missing:
        raise ValueError(f"long table lacks {missing}; it needs {need}")
    bad = sorted(set(long["signal"]) - set(SIGNALS))
    if bad:
        raise ValueError(f"unknown signal(s) {bad}; signals are {SIGNALS}")
    data = long[np.isfinite(long["value"].to_numpy(np.float64))]
    finite = np.isfinite(data["V"].to_numpy(np.float64))
    lv = np.sort(np.unique(data.loc[finite, "V"].to_numpy(np.float64)))[::-1] if levels_m is None else \
        _levels(levels_m)
    cells = data.groupby(["model", "task", "arm"], sort=False, as_index=False)["chance"].first()
    if cells.groupby(["model", "task", "arm"])["chance"].nunique().gt(1).any():
        raise ValueError("chance must be one value per (model, task, arm)")
    cell_idx = pd.MultiIndex.from_frame(cells[["model", "task", "arm"]]).get_indexer(
        pd.MultiIndex.from_frame(data[["model", "task", "arm"]]))
    scenes = np.array(sorted(set(data["scene"])), dtype=object)
    s_idx = pd.Index(scenes).get_indexer(data["scene"])
    k_idx = pd.Index(SIGNALS).get_indexer(data["signal"])
    v = data["V"].to_numpy(np.float64)
    l_idx = np.full(len(data), -1)
    l_idx[~np.isfinite(v)] = 0
    pos = pd.Index(lv).get_indexer(v[np.isfinite(v)])
    l_idx[np.isfinite(v)] = np.where(pos >= 0, pos + 1, -1)
    if (l_idx < 0).any():
        odd = sorted(set(v[l_idx < 0]))
        raise ValueError(f"rows at visibilities {odd[:5]} are not among levels_m {list(lv)}")
    shape = (len(scenes), len(cells), len(SIGNALS), 1 + len(lv))
    sums, counts = np.zeros(shape), np.zeros(shape)
    np.add.at(sums, (s_idx, cell_idx, k_idx, l_idx), data["value"].to_numpy(np.float64))
    np.add.at(counts, (s_idx, cell_idx, k_idx, l_idx), 1.0)
    return SignalCube(cells.reset_index(drop=True), lv, scenes, sums, counts)


def level_means(cube: SignalCube) -> np.ndarray:
    """Means over all scenes: ``(cells, signals, 1 + levels)`` (seed 003 Tables IX–X); NaN without data."""
    with np.errstate(invalid="ignore", divide="ignore"):
        return cube.sums.sum(0) / cube.counts.sum(0)


def _spots(means: np.ndarray, cube: SignalCube, min_gap: float, abstain_mid: str = "fixed") -> dict[str, np.ndarray]:
    return blind_spots(means[..., 1:], means[..., 0], cube.chance, cube.levels_m, min_gap, abstain_mid)


def bootstrap(cube: SignalCube, n_boot: int, rng: np.random.Generator, min_gap: float = 0.1,
              abstain_mid: str = "fixed") -> dict:
    """Bootstrap replicates of every cell at once: resampling counts of scenes, one matrix product.

    Returns the :func:`blind_spots` arrays with a leading resample axis
    ``(n_boot, cells, ...)``. The resamples are those of
    :func:`vlmrobust.stats.bootstrap.resample_counts` (``rng`` consumed as by
    :func:`resample_indices`), so :func:`bootstrap_loop` with an equally seeded
    generator draws the same ones.
    """
    means = bootstrap_means(cube, resample_counts(len(cube.scenes), n_boot, rng))
    return _spots(means, cube, min_gap, abstain_mid)


def bootstrap_means(cube: SignalCube, counts_w: np.ndarray) -> np.ndarray:
    """:func:`level_means` of each resample: ``(n_boot, cells, signals, 1 + levels)``.

    ``counts_w`` is ``(n_boot, n_scenes)``, how often each scene of ``cube.scenes``
    is drawn (:func:`vlmrobust.stats.bootstrap.resample_counts`); other per-scene
    statistics drawn with the same counts move with these means.
    """
    n, n_boot = len(cube.scenes), counts_w.shape[0]
    if counts_w.shape[1] != n:
        raise ValueError(f"counts_w has {counts_w.shape[1]} scenes, the cube {n}")
    flat = cube.sums.shape[1:]
    s = replicate_sums(counts_w, cube.sums.reshape(n, -1)).reshape((n_boot, *flat))
    qc = cube.counts.reshape(n, -1)
    same = (qc == qc[:1]).all(axis=0)  # questions per scene the same in every scene: n times that, exactly
    if same.all():
        c = (qc[0] * n).reshape(flat)  # the same for every resample
    else:
        c = np.empty((n_boot, qc.shape[1]))
        c[:, same] = qc[0, same] * n
        c[:, ~same] = replicate_sums(counts_w, qc[:, ~same])
        c = c.reshape((n_boot, *flat))
    with np.errstate(invalid="ignore", divide="ignore"):
        return s / c


def bootstrap_loop(cube: SignalCube, n_boot: int, rng: np.random.Generator, min_gap: float = 0.1,
                   abstain_mid: str = "fixed") -> dict:
    """The same replicates as :func:`bootstrap`, one resample at a time (the reference of ``bench/visibility.py``)."""
    idx = resample_indices(len(cube.scenes), n_boot, rng)
    reps = []
    for row in idx:
        with np.errstate(invalid="ignore", divide="ignore"):
            means = cube.sums[row].sum(0) / cube.counts[row].sum(0)
        reps.append(_spots(means, cube, min_gap, abstain_mid))
    return {k: np.stack([r[k] for r in reps]) for k in reps[0]}


# ----------------------------------------------------------------------------- tables


def blind_spot_table(cube: SignalCube, n_boot: int = 1000, rng: np.random.Generator | None = None,
                     ci: float = 0.95, min_gap: float = 0.1, abstain_mid: str = "fixed") -> pd.DataFrame:
    """Seed 003 Table V in long form: one row per (model, task, arm, awareness signal).

    Columns: the cell, ``signal``; ``clean``, ``mid`` (the signal's), ``v_acc``,
    ``v_acc_kind`` (``=``, ``≥`` reached at the first level, ``<`` never reached,
    ``n/a``) with its interval ``v_acc_lo``, ``v_acc_hi``; ``v_aware``,
    ``v_aware_kind``; ``w``, ``w_kind`` (:data:`W_KINDS`), ``w_lo``, ``w_hi``
    (percentile interval of the resampled ``W``), ``bound_share`` (share of
    resamples in which ``W`` is a bound) and ``flag`` (why "n/a"). ``rng=None``
    or ``n_boot=0`` skips the intervals. ``abstain_mid``: :data:`ABSTAIN_MIDS`.
    """
    means = level_means(cube)
    point = _spots(means, cube, min_gap, abstain_mid)
    n_cells = len(cube.cells)
    if n_boot and rng is not None:
        reps = bootstrap(cube, n_boot, rng, min_gap, abstain_mid)
        w_lo, w_hi = percentile_interval(reps["w"], ci)
        a_lo, a_hi = percentile_interval(reps["v_acc"], ci)
        finite = np.isfinite(reps["w"])
        with np.errstate(invalid="ignore", divide="ignore"):
            bound_share = (finite & np.isin(reps["w_kind"], (1, 2))).sum(0) / finite.sum(0)
    else:
        w_lo = w_hi = np.full((n_cells, 4), np.nan)
        a_lo = a_hi = np.full(n_cells, np.nan)
        bound_share = np.full((n_cells, 4), np.nan)
    acc_kind = {CROSSED: "=", AT_FIRST: "≥", NEVER: "<", UNDEFINED: "n/a"}
    rows = []
    for c, cell in enumerate(cube.cells.itertuples(index=False)):
        for k, sig in enumerate(AWARE_SIGNALS):
            rows.append({
                "model": cell.model, "task": cell.task, "arm": cell.arm, "signal": sig, "chance": cell.chance,
                "clean": means[c, k + 1, 0], "mid": point["mid"][c, k + 1],
                "v_acc": point["v_acc"][c], "v_acc_kind": acc_kind[int(point["v_acc_status"][c])],
                "v_acc_lo": a_lo[c], "v_acc_hi": a_hi[c],
                "v_aware": point["v_aware"][c, k], "v_aware_kind": acc_kind[int(point["v_aware_status"][c, k])],
                "w": point["w"][c, k], "w_kind": W_KINDS[int(point["w_kind"][c, k])], "w_lo": w_lo[c, k],
                "w_hi": w_hi[c, k], "bound_share": bound_share[c, k], "flag": FLAGS[int(point["flag"][c, k])],
            })
    return pd.DataFrame(rows)
