"""The checks of notebooks 04-07: prediction structure (RAS), representation drift, seeing in fog, escalation.

Each ``exercise_<NN>_<k>`` is re-exported as ``vlmrobust.teaching.exercise_<NN>_<k>``; the contract every check
keeps is in the package's docstring (:mod:`vlmrobust.teaching`).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from ._core import Result, _result


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
                   f"{hi['base_acc']:.1f} %, TextOverlay IFR {lo['TextOverlay IFR']:.3f} -> "
                   f"{hi['TextOverlay IFR']:.3f}",
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
    from ..analysis.escalation import indices as escalation

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
