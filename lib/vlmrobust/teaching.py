"""The notebooks' exercises: checks that read a student's own run and say whether it shows the point.

Every notebook ends with a section ``## Exercises``: three to five exercises, each naming a parameter to
change (or a cell to edit), asking for a prediction first, and closed by a code cell that calls one function
of this module, ``teaching.exercise_<NN>_<k>(...)`` for exercise ``k`` of notebook ``NN``.

The contract of every check:

* its arguments are the tables and parameter values the notebook has just computed (never a stored answer
  and never a new model run), so the verdict is computed from the student's own run;
* it returns a :class:`Result`: ``done`` says whether the run contains the exercise's change (a parameter
  set to the value the exercise asks for, a cell edited), ``shown`` whether the run shows what the exercise
  is about, and ``passed`` is both; ``expected`` states the rule, ``measured`` what this run gives;
* it never raises on a run without the change: the unchanged notebook reports "not tried yet" together with
  what the unchanged run shows, so the default, smoke, lesson and paper runs all execute every check cell.

Its text (the cell's output) names the exercise, the rule, what the run measured and the verdict. Intervals
are 95 % normal-approximation intervals over questions unless a check says otherwise.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

__all__ = ["Result"] + [f"exercise_{nb}_{k}" for nb, ks in
                        {"00": 3, "01": 3, "02": 3, "03": 4, "04": 3, "05": 3, "06": 3, "07": 3}.items()
                        for k in range(1, ks + 1)]

Z95 = 1.959963984540054


@dataclass(frozen=True)
class Result:
    """A check's verdict on one run: ``passed`` when the change was made and the run shows the point."""

    exercise: str
    title: str
    done: bool
    shown: bool
    expected: str
    measured: str
    todo: str

    @property
    def passed(self) -> bool:
        return bool(self.done and self.shown)

    @property
    def message(self) -> str:
        if self.passed:
            return "PASSED: your run shows it."
        if not self.done:
            return f"NOT TRIED YET: {self.todo}. (This run: {'it shows the point' if self.shown else 'not shown'}.)"
        return "NOT SHOWN: the change is made, but this run does not show the point (see the numbers above)."

    def __repr__(self) -> str:
        return (f"Exercise {self.exercise}: {self.title}\n  expected: {self.expected}\n"
                f"  your run: {self.measured}\n  verdict:  {self.message}")


def _result(code: str, title: str, done, shown, expected: str, measured: str, todo: str) -> Result:
    return Result(code, title, bool(done), bool(shown), expected, measured, todo)


def _mean_ci(x) -> tuple[float, float, float]:
    """Mean of ``x`` with its 95 % normal interval (NaN bounds for fewer than two values)."""
    x = np.asarray(x, dtype=float)
    x = x[np.isfinite(x)]
    m = float(x.mean()) if len(x) else np.nan
    half = Z95 * x.std(ddof=1) / np.sqrt(len(x)) if len(x) > 1 else np.nan
    return m, m - half, m + half


def _is_letter_model(name: str) -> bool:
    from .models import zoo

    return name not in zoo.names() or zoo.answer_format(name) == "letters"


def exercise_00_1(persp: pd.DataFrame, distance_far: float) -> Result:
    """Far objects: the pinhole geometry still holds, but a far object is only a pixel or two tall."""
    far = persp[persp["distance_m"] > 40.0]
    err = (far["measured_px"] - far["predicted_px"]).abs()
    h = far["measured_px"]
    shown = len(far) >= 3 and err.median() <= 1.0 and h.median() <= 2.0
    measured = (f"{len(far)} measured objects beyond 40 m (distance_far = {distance_far:g})" + (
        f": median |measured - predicted| {err.median():.2f} px, median height {h.median():.1f} px" if len(far) else ""))
    return _result("00.1", "objects far away", distance_far >= 80 and len(far) > 0, shown,
                   "beyond 40 m the renderer still matches the pinhole model (median error <= 1 px) while the "
                   "objects shrink to <= 2 px: geometry exact, evidence gone", measured,
                   "set distance_far: 120.0")


def exercise_00_2(balance: pd.DataFrame) -> Result:
    """Break the balance on purpose: in a tiny item table one fixed letter beats chance."""
    from .schema import OPTION_LETTERS

    letters = [c for c in balance.columns if c in OPTION_LETTERS]
    four = balance[balance["K"] >= 4]
    counts = four[letters].to_numpy(dtype=float)
    best = counts.max(axis=1) / counts.sum(axis=1)
    gain = float(np.mean(best - 1.0 / four["K"].to_numpy(dtype=float))) if len(four) else np.nan
    n_min = int(balance[letters].sum(axis=1).min()) if len(balance) else 0
    return _result("00.2", "a benchmark a model can score by position", n_min <= 5, gain >= 0.15,
                   "the best single letter per family beats chance (1/K) by >= 0.15 on the four-option families",
                   f"{n_min} item(s) per family; the best letter scores {np.mean(best):.2f} on average against "
                   f"chance {np.mean(1 / four['K']):.2f} (gain {gain:+.2f})", "set n_per_family: 3")


def exercise_00_3(preds: pd.DataFrame) -> Result:
    """The size ladder: does the largest language model beat the smallest on the same held-out items?"""
    from .models import zoo

    rungs = sorted((m for m in preds["model"].unique() if m in zoo.names("ladder")),
                   key=lambda m: zoo.meta(m).get("ladder_rung", 0))
    wide = preds.pivot_table(index="item_id", columns="model", values="correct", aggfunc="mean")
    d, lo, hi = _mean_ci(wide[rungs[-1]] - wide[rungs[0]]) if len(rungs) >= 2 else (np.nan,) * 3
    done = len(rungs) >= 2 and set(preds["model"]) <= set(rungs)
    return _result("00.3", "the size ladder", done, lo > 0, "the largest rung's clean accuracy minus "
                   "the smallest's, paired over items, has its interval above 0",
                   f"rungs scored {rungs}" + (f"; {rungs[-1]} - {rungs[0]}: {d:+.3f} [{lo:+.3f}, {hi:+.3f}] over "
                                              f"{len(wide)} items" if len(rungs) >= 2 else ""),
                   'set models: ["role:ladder"] and n_heldout: 30')


def exercise_01_1(silent: pd.DataFrame, coverage: pd.DataFrame, selectors: Sequence[str]) -> Result:
    """Eq. 3 is an AND: remove the selector that is silent on whole families and they become eligible."""
    from .models import zoo

    lost = sorted(coverage.index[coverage["eligible"] == 0]) if len(coverage) else []
    silent_txt = ", ".join(f"{r.selector} on {r.family}" for r in silent.itertuples()) or "none"
    done = sorted(selectors) != sorted(zoo.names("selector"))
    return _result("01.1", "one selector decides eligibility", done, len(silent) == 0 and not lost,
                   "no selector is silent on a whole family, and every family keeps eligible questions",
                   f"selectors {list(selectors)}; silent: {silent_txt}; families without eligible questions: "
                   f"{lost or 'none'}", "set selectors: [sel-dropout, sel-see] (leave out sel-text)")


def exercise_01_2(eligible: np.ndarray, kappa: np.ndarray, perturbations: Sequence[str]) -> Result:
    """Break the selection on purpose: one mild corruption moves almost no answer, so A+ collapses."""
    share, zero = float(np.mean(eligible)), float(np.mean(np.asarray(kappa) == 0))
    return _result("01.2", "a corruption that does not respond", len(perturbations) <= 2, share < 0.15,
                   "A+ holds under 15 % of the pool", f"corruptions {list(perturbations)}: A+ {share:.1%} of the "
                   f"pool, κ = 0 for {zero:.1%}", "set perturbations: [brightness]")


def exercise_01_3(eval_gini, selected: np.ndarray, models: Sequence[str], selectors: Sequence[str]) -> Result:
    """Fig. 9(a) for the models that chose the split: its responsiveness carries over to them."""
    from . import repro
    from .analysis.selection import mean_shift

    m = mean_shift(np.asarray(eval_gini), np.asarray(selected), n_boot=1000, rng=repro.rng("teaching", "01.3")) \
        if eval_gini is not None else dict.fromkeys(("split", "pool", "diff", "lo", "hi"), np.nan)
    return _result("01.3", "the split's responsiveness, for its own selectors",
                   bool(models) and set(models) <= set(selectors), m["lo"] > 0,
                   "split minus pool Gini of the evaluated models, bootstrap interval above 0",
                   f"models {list(models)}: split {m['split']:.3f}, pool {m['pool']:.3f}, difference "
                   f"{m['diff']:+.3f} [{m['lo']:+.3f}, {m['hi']:+.3f}]", "set models: [sel-dropout, sel-see, sel-text]")


def exercise_02_1(water_fog: pd.DataFrame, convention: str) -> Result:
    """The contrast threshold rescales fog and water alike: water stays the harsher arm."""
    r = water_fog["water_over_fog"]
    return _result("02.1", "the 5 % convention", convention == "5%", bool((r < 1).all()),
                   "water transmits less luminance than fog at every visibility (water_over_fog < 1)",
                   f"convention {convention}: water_over_fog from {r.max():.3f} to {r.min():.3f}",
                   'set convention: "5%"')


def exercise_02_2(table7: pd.DataFrame, fog_items) -> Result:
    """Break 'an ImageNet-C fog severity is tens of metres' with scenes whose depth is 2 m."""
    fams = sorted({it.family for it in fog_items})
    v1 = float(table7.loc[table7["severity"] == 1, "median_v_m"].iloc[0])
    return _result("02.2", "an ImageNet-C severity has no fixed visibility", fams == ["chart"], v1 < 10,
                   "on chart boards 2 m away severity 1 is worth under 10 m (tens of metres on ground scenes)",
                   f"Table VII scenes: {', '.join(fams)}; severity 1: median V_eq {v1:.1f} m",
                   'edit the Table VII cell: fog_families = ["chart"]')


def exercise_02_3(table7: pd.DataFrame) -> Result:
    """Few scenes, same camera: the spread of V_eq stays small."""
    n = int(table7["n_images"].max())
    spread = float(table7["p90_over_p10"].max())
    return _result("02.3", "the camera, not the scene, sets V_eq", n <= 10, spread < 1.5,
                   "P90/P10 of V_eq below 1.5 at every severity (seed 003 found 6-8 on COCO)",
                   f"{n} scenes; largest P90/P10 {spread:.3f}", "set n_fog_scenes: 10")


def exercise_03_1(acc: pd.DataFrame, agreement: pd.DataFrame, temperature: float) -> Result:
    """Break the black-box estimate on purpose: sampling below T = 1 sharpens the distribution."""
    letter = [m for m in acc["model"].unique() if _is_letter_model(m)]
    a = acc[acc["model"].isin(letter)].pivot_table(index=["model", "perturbation"], columns="method",
                                                    values="confidence")
    gap = float((a["sample"] - a["letter"]).mean()) if {"sample", "letter"} <= set(a.columns) else np.nan
    ag = agreement[agreement["model"].isin(letter) & (agreement["pair"] == "letter vs sample")]
    same = float(ag["same_argmax"].mean()) if len(ag) else np.nan
    return _result("03.1", "sampling at a low temperature", temperature < 1.0, gap >= 0.15 and same >= 0.7,
                   "the sampled confidence exceeds the letter-logit confidence by >= 0.15 while the argmax mostly "
                   "agrees (>= 0.7)", f"T = {temperature:g}; letter organisms: confidence gap sample - letter "
                   f"{gap:+.3f}, same argmax {same:.2f}", "set temperature: 0.2")


def exercise_03_2(agreement: pd.DataFrame, agree_pred: pd.DataFrame, n_samples: int) -> Result:
    """The sampling floor: the distance between sampled and letter distributions is what n samples allow."""
    from . import repro

    letter = [m for m in agree_pred["model"].unique() if _is_letter_model(m)]
    rows = agree_pred[agree_pred["model"].isin(letter) & (agree_pred["method"] == "letter")]
    rng = repro.rng("teaching", "03.2", n_samples)
    floor = [np.mean(0.5 * np.abs(rng.multinomial(n_samples, p / p.sum(), size=200) / n_samples - p).sum(1))
             for p in (np.asarray(x, dtype=float) for x in rows["probs"])]
    exp = float(np.mean(floor)) if floor else np.nan
    ag = agreement[agreement["model"].isin(letter) & (agreement["pair"] == "letter vs sample")]
    tv = float(ag["tv"].mean()) if len(ag) else np.nan
    return _result("03.2", "the sampling floor", n_samples >= 40, 0.5 * exp <= tv <= 1.6 * exp,
                   f"TV(letter, sample) near the floor of {n_samples} draws from the letter distribution itself "
                   "(within 0.5x to 1.6x)", f"n_samples = {n_samples}: measured TV {tv:.3f}, floor {exp:.3f}",
                   "set n_samples: 40")


def exercise_03_3(pred: pd.DataFrame, method: str) -> Result:
    """Score letter organisms by option log-likelihood: a format they were not trained for."""
    clean = pred[pred["perturbation"] == "clean"]
    chance = float((1.0 / clean["K"]).mean()) if len(clean) else np.nan
    acc = clean.groupby("model")["correct"].mean()
    letter = [m for m in acc.index if _is_letter_model(m)]
    shown = bool(letter) and bool((acc[letter] <= chance + 0.1).all())
    return _result("03.3", "the wrong scoring format", method == "loglik", shown,
                   "every letter organism's clean accuracy falls to within 0.1 of chance under loglik",
                   f"method {method}; clean accuracy " + ", ".join(f"{m} {acc[m]:.2f}" for m in acc.index)
                   + f"; chance {chance:.2f}", 'set method: "loglik"')


def exercise_03_4(pred: pd.DataFrame) -> Result:
    """Colour survives blur but not contrast loss (per-family curves)."""
    col = pred[pred["task"] == "colour"]
    last = {p: col.loc[(col["perturbation"] == p) & (col["level"] == col.loc[col["perturbation"] == p, "level"].max()),
                       "correct"].mean() for p in ("defocus_blur", "contrast")}
    d = float(last["defocus_blur"] - last["contrast"])
    return _result("03.4", "colour under blur and contrast", {"defocus_blur", "contrast"} <= set(col["perturbation"]),
                   d >= 0.3, "colour accuracy at the last blur level minus at the last contrast level >= 0.3",
                   f"colour accuracy: blur {last['defocus_blur']:.2f}, contrast {last['contrast']:.2f} "
                   f"(difference {d:+.2f}; NaN: not in this run)", "set perturbations: [defocus_blur, contrast]")


def _holds(obs: pd.DataFrame) -> dict:
    return {str(c).split(".")[0]: r for c, r in zip(obs["claim"], obs["reproduced"], strict=True)}


def exercise_04_1(obs: pd.DataFrame, models: Sequence[str]) -> Result:
    """The observations on a generative story with no image in it."""
    held = _holds(obs)
    n = sum(v is True for v in held.values())
    return _result("04.1", "the observations without a VLM", all(m.startswith("sim-") for m in models), n >= 2,
                   "at least two of the four observations hold on simulated predictions: they are properties "
                   "of the metric and of calibrated noise, not evidence about vision",
                   "observations " + ", ".join(f"{k}: {v}" for k, v in held.items()),
                   'set predictions_from: "simulate"')


def exercise_04_2(obs: pd.DataFrame, t6: pd.DataFrame) -> Result:
    """Break Observation 1 on purpose: one model has no rank to mismatch."""
    shifts = int((t6[["abs_dr", "delta_acc_dr", "rel_rob_dr"]].to_numpy() != 0).sum())
    o1 = _holds(obs).get("1")
    return _result("04.2", "a ranking claim needs several models", len(t6) == 1, shifts == 0 and o1 is not True,
                   "with a single model every rank shift is 0 and Observation 1 does not hold",
                   f"{len(t6)} model(s); non-zero rank shifts {shifts}; Observation 1: {o1}",
                   "set models: [tiny-letters]")


def exercise_04_3(tsum: pd.DataFrame, levels: Sequence[int]) -> Result:
    """Trajectory classes need a ladder: with one severity no change can be transient."""
    share = tsum.groupby(tsum["klass"].astype(str))["share"].mean()
    transient = float(share.filter(like="transient").sum())
    persistent = float(share.filter(like="persistent").sum())
    return _result("04.3", "one severity, no transients", len(levels) == 1, transient == 0 and persistent > 0,
                   "transient classes are empty and every answer change is persistent",
                   f"levels {list(levels)}: transient share {transient:.3f}, persistent {persistent:.3f}",
                   "set levels: [5]")


def exercise_05_1(pairs: pd.DataFrame, shift_reading: str, patch: int = 8) -> Result:
    """Fixed shifts: a cyclic shift by whole patches (8 px for the organisms) flips fewer answers than a smaller one."""
    tr = pairs[pairs["perturbation"] == "translate"]
    on = (tr["param"].abs() % patch) == 0
    grid, off = float(tr.loc[on, "flip"].mean()), float(tr.loc[~on, "flip"].mean())
    return _result("05.1", "shifts at native resolution", shift_reading == "fixed", off - grid >= 0.04,
                   f"translation IFR at offsets that are not multiples of the {patch}-px patch exceeds IFR at "
                   "multiples (a whole-patch cyclic shift keeps every patch) by >= 0.04",
                   f"shift_reading {shift_reading}: IFR {grid:.3f} at nominal offsets ±{patch}, ±{2 * patch} px, "
                   f"{off:.3f} at the others (difference {off - grid:+.3f})", 'set shift_reading: "fixed"')


def exercise_05_2(floor: pd.DataFrame, dtype: str) -> Result:
    """Break 'drift is far above numerical noise' on purpose: half precision raises the noise floor."""
    ratio = float(floor.loc[floor["metric"] == "cos", "ratio"].min())
    return _result("05.2", "a noise floor at half precision", dtype in ("float16", "bfloat16"), ratio < 100,
                   "the smallest drift is less than 100 times the largest noise floor (cosine distance)",
                   f"dtype {dtype or 'checkpoint'}: smallest drift / largest floor {ratio:.3g}",
                   'set dtype: "bfloat16"')


def exercise_05_3(t5: pd.DataFrame) -> Result:
    """Finding (iv) on three rungs: accuracy rises with size, the overlay flip rate does not fall."""
    t = t5.sort_values("size")
    done = len(t) >= 3 and t["size"].nunique() == len(t)
    lo, hi = t.iloc[0], t.iloc[-1]
    shown = hi["base_acc"] > lo["base_acc"] and hi["TextOverlay IFR"] >= lo["TextOverlay IFR"] - 0.05
    return _result("05.3", "scale does not buy robustness", done, shown,
                   "the largest rung is more accurate than the smallest, and its TextOverlay IFR is not lower "
                   "by more than 0.05", f"{lo['model']} -> {hi['model']}: accuracy {lo['base_acc']:.1f} -> "
                   f"{hi['base_acc']:.1f} %, TextOverlay IFR {lo['TextOverlay IFR']:.3f} -> {hi['TextOverlay IFR']:.3f}",
                   "set ladder: [ladder-48, ladder-64, ladder-96]")


def _signal(tables: pd.DataFrame, model: str, task: str, signal: str) -> pd.DataFrame:
    rows = tables[(tables["model"] == model) & (tables["task"] == task) & (tables["signal"] == signal)]
    return rows.drop(columns=["model", "task", "signal"]).set_index("arm")


def exercise_06_1(tables_9_10: pd.DataFrame) -> Result:
    """Break the abstain blind spot on purpose with the organism built to abstain."""
    models = list(dict.fromkeys(tables_9_10["model"]))
    last = tables_9_10.columns[-1]
    murky = {m: float(_signal(tables_9_10, m, "t2", "abstain")[last].min()) for m in models}
    others = [m for m in models if m != "aware"]
    shown = "aware" in murky and murky["aware"] >= 0.5 and all(murky[m] <= 0.1 for m in others)
    return _result("06.1", "an organism that knows when it cannot see", "aware" in models, shown,
                   f"at V = {last} m aware abstains on t2 in both arms (>= 0.5) while the others do not (<= 0.1)",
                   "t2 abstain rate at the murkiest level (smaller arm): "
                   + ", ".join(f"{m} {v:.2f}" for m, v in murky.items()), "add aware to models")


def exercise_06_2(tables_9_10: pd.DataFrame) -> Result:
    """The negative control: a stated confidence that never moves cannot follow visibility."""
    models = list(dict.fromkeys(tables_9_10["model"]))
    spans = {m: float(np.nanmax(v) - np.nanmin(v)) for m in models
             if np.isfinite(v := _signal(tables_9_10, m, "t2", "verbal").to_numpy(dtype=float)).any()}
    shown = "talker-90" in spans and spans["talker-90"] < 0.02 and any(s >= 0.05 for s in spans.values())
    return _result("06.2", "the constant talker", "talker-90" in models, shown,
                   "talker-90's verbalized confidence spans < 0.02 over every level while another model's moves "
                   "(>= 0.05)", "range of the t2 verbalized confidence over the levels: "
                   + (", ".join(f"{m} {s:.2f}" for m, s in spans.items()) or "no parseable verbal confidence"),
                   "add talker-90 to models")


def exercise_06_3(spots: pd.DataFrame, ladder: str) -> Result:
    """The extended ladder finds where accuracy starts to fall, above the paper's 250 m."""
    acc = spots.drop_duplicates(["model", "task", "arm"])
    located = acc[acc["v_acc_kind"] == "="]
    above = int((located["v_acc"] > 250).sum())
    return _result("06.3", "a ladder that starts high enough", ladder == "extended", above >= 1,
                   "at least one accuracy crossing V_acc is located (not a bound) above 250 m",
                   f"ladder {ladder}: {len(located)} of {len(acc)} V_acc located, {above} above 250 m; "
                   f"{int((acc['v_acc_kind'] == '≥').sum())} only bounded (already below half-way at the first "
                   "level)", 'set ladder: "extended"')


def exercise_07_1(rci: pd.DataFrame, fail_reading: str) -> Result:
    """The conditional reading of D_fail is 1 whenever anything flips."""
    flip = rci[rci["n_flip"] > 0]
    ones = float((flip["D_fail"] == 1).mean()) if len(flip) else np.nan
    return _result("07.1", "D_fail read conditionally", fail_reading == "conditional", ones == 1.0,
                   "every cell with a flip has D_fail exactly 1: the term only says that something flipped",
                   f"fail_reading {fail_reading}: D_fail = 1 in {ones:.0%} of the {len(flip)} cells with a flip",
                   'set fail_reading: "conditional"')


def exercise_07_2(states: pd.DataFrame, trci_weights: Sequence[float]) -> Result:
    """D_spatial is the same for every model: dropping it cannot change the models' ranking."""
    from .analysis.escalation import rci as escalation

    mine = escalation.trci(states, list(trci_weights)).units
    base = escalation.trci(states).units
    keys = [c for c in mine.columns if c in ("model", "group")]
    both = mine[[*keys, "T_mu"]].merge(base[[*keys, "T_mu"]], on=keys, suffixes=("", "_uniform"))
    by = both.groupby([c for c in keys if c != "model"] or (lambda _: 0))
    r1, r2 = by["T_mu"].rank(method="min"), by["T_mu_uniform"].rank(method="min")
    same = bool((r1 == r2).all())
    return _result("07.2", "removing D_spatial", len(trci_weights) == 5 and trci_weights[3] == 0, same,
                   "within every group the models rank the same by T_mu as with uniform weights",
                   f"trci_weights {list(trci_weights)}: {int((r1 != r2).sum())} of {len(both)} ranks differ",
                   "set trci_weights: [0.25, 0.25, 0.25, 0.0, 0.25]")


def exercise_07_3(fill_table: pd.DataFrame, fill: str) -> Result:
    """Break T-RCI's reading on purpose: a black band costs accuracy where it removes no evidence."""
    fill_table = fill_table.reindex(columns=list(dict.fromkeys(["fill", "condition", "mean", *fill_table])))
    clean = fill_table.loc[fill_table["condition"] == "clean", "mean"]
    sky = fill_table[(fill_table["fill"] == fill) & fill_table["condition"].astype(str).str.startswith("sky band")]
    drop = float(clean.iloc[0] - sky["mean"].min()) if len(clean) and len(sky) else np.nan
    return _result("07.3", "the fill is a corruption of its own", fill == "black", drop >= 0.3,
                   "under the fill's evidence-free sky-band control accuracy drops by >= 0.3 from clean",
                   f"fill {fill}: clean {clean.iloc[0] if len(clean) else np.nan:.3f}, sky band "
                   f"{sky['mean'].min() if len(sky) else np.nan:.3f} (drop {drop:+.3f})", 'set fill: "black"')
