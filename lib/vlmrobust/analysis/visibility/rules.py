"""Notebook 06's claim rules against their nulls, by simulation (:class:`~vlmrobust.stats.nullsim.RuleCheck`).

Each rule draws a run at notebook 06's default size (12 scenes, one t2 and two t3 questions per scene, the
extended range of 14 visibility levels from 16,000 m to 1.95 m, 1,000 bootstrap resamples of the scenes) and
decides it with the same functions the claims table calls (:mod:`.claims_accuracy`, :mod:`.claims_awareness`,
:mod:`.claims_controls`).

**The simulated world.** Scene ``s`` has a visibility threshold ``log10 u_s ~ N(log10 V_0, tau)``: above it the
model answers right with its clean accuracy, below it at chance, so mean accuracy falls along a normal curve in
``log V`` whose half-way point is ``V_0`` and whose ``V_90 / V_10`` is ``10^(2.563 tau)`` (seed 003 Table IX:
``V_0`` 12.4 m, a fall of about 6x, ``tau = 0.30``). An awareness signal with width ``W`` switches at
``log10 u_s - W``: the internal confidence from its clean value to chance (plus noise of sd 0.03), the abstain
option from 2 % to 95 % per question, so its half-way point lies ``W`` decades below ``V_0``. The nulls put the
claim's parameter on the edge of its region (the least favourable case), or draw a model that cannot see.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ...stats.bootstrap import resample_counts
from ...stats.claims import NO_SUBJECT, NOT_REPRODUCED
from ...stats.nullsim import RuleCheck
from . import claims_accuracy as ca
from . import claims_awareness as cw
from . import claims_controls as cc
from .blind_spot import SIGNALS, SignalCube, blind_spot_table, blind_spots, bootstrap_means, level_means
from .means import condition_means

__all__ = ["RULES", "N_SCENES", "N_BOOT", "LEVELS_M", "simulate_cube"]

#: Notebook 06's defaults: scenes, bootstrap resamples, the extended visibility range (metres, clearest first).
N_SCENES, N_BOOT = 12, 1000
LEVELS_M = np.array([16000.0 / 2**k for k in range(14)])
SIZE = "12 scenes (1 t2, 2 t3 questions each), 14 levels 16,000-1.95 m, 1,000 resamples"
V0, TAU = 12.4, 0.30  # seed 003: V_acc in fog (Qwen3-VL-2B) and a fall of about 6x from V_90 to V_10


def simulate_cube(rng: np.random.Generator, cells: list[dict], n_scenes: int = N_SCENES,
                  levels_m: np.ndarray = LEVELS_M) -> SignalCube:
    """A :class:`SignalCube` drawn from the simulated world of the module text.

    Each cell: ``model, task, arm, chance``, ``acc`` (clean accuracy), ``v0``, ``tau``; optional ``see`` (False:
    every level answered as the clean image), ``conf`` (clean internal confidence), ``conf_low`` (its value past
    the threshold; default chance), ``w_int``, ``w_ab``, ``w_ab2`` (None: the option is never taken). The scene
    thresholds are shared by the cells of a model (the same scenes in both arms and tasks).
    """
    logv = np.log10(np.concatenate([[np.inf], levels_m]))
    n_q = {"t2": 1, "t3": 2}
    z = {}
    sums = np.zeros((n_scenes, len(cells), len(SIGNALS), len(logv)))
    counts = np.zeros_like(sums)
    for c, cell in enumerate(cells):
        zs = z.setdefault(cell["model"], rng.standard_normal(n_scenes))
        thr = np.log10(cell["v0"]) + cell["tau"] * zs
        q = n_q[cell["task"]]
        for _ in range(q):
            see = (logv[None, :] > thr[:, None]) if cell.get("see", True) else np.ones((n_scenes, len(logv)), bool)
            p = np.where(see, cell["acc"], cell["chance"])
            right = rng.random(p.shape) < p
            if not cell.get("see", True):
                right = np.repeat(right[:, :1], len(logv), axis=1)
            sums[:, c, 0] += right
            conf = cell.get("conf", 0.9)
            low = cell.get("conf_low", cell["chance"])
            keep = logv[None, :] > thr[:, None] - cell.get("w_int", 3.0) if cell.get("see", True) else see
            sums[:, c, 1] += np.clip(np.where(keep, conf, low) + 0.03 * rng.standard_normal(p.shape), 0, 1)
            for k, key in ((3, "w_ab"), (4, "w_ab2")):
                w = cell.get(key)
                murky = logv[None, :] < thr[:, None] - w if w is not None else np.zeros(p.shape, bool)
                sums[:, c, k] += rng.random(p.shape) < np.where(murky, 0.95, 0.02)
            counts[:, c, [0, 1, 3, 4]] += 1
    frame = pd.DataFrame([{k: cell[k] for k in ("model", "task", "arm", "chance")} for cell in cells])
    return SignalCube(frame, np.asarray(levels_m, np.float64), np.array([f"s{i:03d}" for i in range(n_scenes)],
                                                                         dtype=object), sums, counts)


def _t2(model="m", arm="fog", **kw) -> dict:
    return {"model": model, "task": "t2", "arm": arm, "chance": 0.25, "acc": 0.95, "v0": V0, "tau": TAU, **kw}


def _reps(rng, cube):
    counts = resample_counts(len(cube.scenes), N_BOOT, rng)
    return counts, bootstrap_means(cube, counts)


def _fall(tau: float):
    def draw(rng):
        cube = simulate_cube(rng, [_t2(tau=tau)])
        return ca.obs_fall_within_decade(cube, _reps(rng, cube)[1], ["m"]).verdict
    return draw


def _water(ratio: float):
    def draw(rng):
        cube = simulate_cube(rng, [_t2(), _t2(arm="water", v0=V0 * ratio)])
        return ca.obs_water_harsher(cube, _reps(rng, cube)[1], ["m"]).verdict
    return draw


def _spots(rng, cube):
    return blind_spot_table(cube, N_BOOT, rng)


def _confident(w_int: float):
    def draw(rng):
        cube = simulate_cube(rng, [_t2(conf=0.9, w_int=w_int)])
        return cw.obs_confident_stay_confident(cube, _spots(rng, cube), ["m"]).verdict
    return draw


def _under(w_int: float):
    def draw(rng):
        cube = simulate_cube(rng, [_t2(acc=0.9, conf=0.55, w_int=w_int)])
        counts = resample_counts(N_SCENES, N_BOOT, rng)
        spots = blind_spot_table(cube, N_BOOT, np.random.default_rng(rng.integers(2**32)))
        return cw.obs_underconfident_follows(cube, bootstrap_means(cube, counts), spots, ["m"]).verdict
    return draw


def _abstain(w_ab: float):
    def draw(rng):
        cube = simulate_cube(rng, [_t2(w_ab=w_ab)])
        return cw.obs_abstain_signed(_spots(rng, cube), ["m"], N_SCENES).verdict
    return draw


def _idk(lag: float):
    def draw(rng):
        cube = simulate_cube(rng, [_t2(w_ab=-0.06, w_ab2=-0.06 + lag)])
        counts, mr = _reps(rng, cube)
        m = level_means(cube)
        reps = blind_spots(mr[..., 1:], mr[..., 0], cube.chance, cube.levels_m)
        reps["point"] = blind_spots(m[..., 1:], m[..., 0], cube.chance, cube.levels_m)
        return cw.obs_idk_lags(cube, reps, ["m"]).verdict
    return draw


def _t3(w_int: float):
    def draw(rng):
        cell = {"model": "m", "task": "t3", "arm": "fog", "chance": 0.5, "acc": 0.97, "v0": 16.8, "tau": TAU,
                "conf": 0.98, "w_int": w_int}
        cube = simulate_cube(rng, [cell])
        counts, mr = _reps(rng, cube)
        reps = blind_spots(mr[..., 1:], mr[..., 0], cube.chance, cube.levels_m)
        spots = blind_spot_table(cube, N_BOOT, np.random.default_rng(rng.integers(2**32)))
        return cw.obs_t3_no_signal(spots[spots.signal == "internal"], {k: v[..., :1] if k in ("w_kind",) else v
                                                                       for k, v in reps.items()}, cube, ["m"]).verdict
    return draw


def _calibration(positive: bool):
    """Clean: 12 t2 questions; murky: the 4 fog levels at or below 15.6 m, 48 questions."""
    def draw(rng):
        scene = np.concatenate([np.arange(N_SCENES)] * 5)
        murky = np.repeat([False, True, True, True, True], N_SCENES)
        if positive:
            conf = np.where(murky, 0.8, 0.95) + 0.03 * rng.standard_normal(scene.size)
            correct = rng.random(scene.size) < np.where(murky, 0.3, 0.95)
        else:
            conf = rng.uniform(0.25, 1.0, scene.size)
            correct = rng.random(scene.size) < conf
        counts = resample_counts(N_SCENES, N_BOOT, rng)
        return cw.calibration_verdict(np.clip(conf, 0, 1), correct, murky, scene, N_SCENES, counts)[3]
    return draw


def _per7(rng, medians, n=N_SCENES, sd=0.67) -> pd.DataFrame:
    """Table VII per image: V_eq log-normal around each severity's median (seed 003: IQR 70-174 m at 110 m)."""
    return pd.DataFrame([{"image": i, "severity": s, "v_eq_m": m * np.exp(sd * rng.standard_normal())}
                         for s, m in enumerate(medians, 1) for i in range(n)])


def _tens(medians):
    def draw(rng):
        return cc.obs_imagenet_tens_of_metres(_per7(rng, medians), N_BOOT, rng).verdict
    return draw


def _band(medians):
    def draw(rng):
        cube = simulate_cube(rng, [_t2()])
        return cc.obs_imagenet_outside_band(_per7(rng, medians), cube, _reps(rng, cube)[1], ["m"], N_BOOT,
                                            rng).verdict
    return draw


def _cond_rows(rng, spec: dict, n=N_SCENES, paired: dict | None = None) -> pd.DataFrame:
    """Per-question rows for :func:`condition_means`: ``spec`` maps (task, perturbation, level, signal) to a
    rate (binary) or a mean confidence; ``paired`` maps a key to (base key, share of answers flipped)."""
    rows, drawn = [], {}
    for key, p in spec.items():
        task, pert, level, sig = key
        q = 1 if task == "t2" else 2
        if paired and key in paired:
            base, flip = paired[key]
            vals = np.where(rng.random(drawn[base].shape) < flip, 1 - drawn[base], drawn[base])
        elif sig in ("accuracy", "abstain", "abstain2"):
            vals = (rng.random((n, q)) < p).astype(float)
        else:
            vals = np.clip(p + 0.1 * rng.standard_normal((n, q)), 0, 1)
        drawn[key] = vals
        rows += [{"model": "m", "task": task, "perturbation": pert, "level": level, "scene": f"s{s:03d}",
                  "signal": sig, "value": float(vals[s, j])} for s in range(n) for j in range(q)]
    return pd.DataFrame(rows)


def _near_clean(cost: float, see: bool = True):
    def draw(rng):
        cube = simulate_cube(rng, [_t2(see=see)])
        see_ = [m for m, why in ca.seeing_models(cube, _reps(rng, cube)[1], ["m"]).items() if not why]
        clean = ("t2", "clean", 0, "accuracy")
        spec = {clean: 0.9 if see else 0.25, **{("t2", "fog+box", s, "accuracy"): 0 for s in range(1, 6)}}
        flip = {("t2", "fog+box", s, "accuracy"): (clean, cost if see else 0.0) for s in range(1, 6)}
        cond = condition_means(_cond_rows(rng, spec, paired=flip), N_BOOT, rng)
        return cc.obs_imagenet_near_clean(cond, see_).verdict
    return draw


def _chance(above: float, see: bool = True):
    def draw(rng):
        cube = simulate_cube(rng, [_t2(see=see)])
        see_ = [m for m, why in ca.seeing_models(cube, _reps(rng, cube)[1], ["m"]).items() if not why]
        spec = {(t, p, 1 if p == "blank+box" else 0, "accuracy"): ch + above
                for t, ch in (("t2", 0.25), ("t3", 0.5)) for p in ("blank+box", "shuffled")}
        return cc.obs_controls_at_chance(condition_means(_cond_rows(rng, spec), N_BOOT, rng), see_).verdict
    return draw


def _blank_abstain(rate: float):
    def draw(rng):
        cond = condition_means(_cond_rows(rng, {("t2", "blank+box", 1, "abstain"): rate}), N_BOOT, rng)
        return cc.obs_blank_abstain(cond, ["m"]).verdict
    return draw


def _no_subject_is_not_a_pass(draw):
    """A null draw whose rule must not reproduce: a 'no subject' verdict is reported as 'not reproduced'."""
    def wrapped(rng):
        v = draw(rng)
        return NOT_REPRODUCED if v == NO_SUBJECT else v
    return wrapped


RULES = (
    RuleCheck("06.1 fall within a decade", _fall(0.390), _fall(TAU),
              "a slow fall: V_90 / V_10 = 10 (tau 0.39 decades), the edge", "a fall of 6x (seed 003 Table IX)", SIZE),
    RuleCheck("06.2 water harsher than fog", _water(1.0), _water(1.8),
              "equal V_acc in both arms (ratio 1), the same scenes", "V_acc 1.8x larger under water (Table V)",
              SIZE),
    RuleCheck("06.3 confident keep confidence (W >= 0.79)", _confident(0.79), _confident(3.0),
              "confidence falls 0.79 decades after accuracy (W = 0.79, the edge)",
              "confidence never falls inside the sweep (Table V: W >= 0.80)", SIZE),
    RuleCheck("06.5 under-confident follows accuracy", _under(0.21), _under(0.0),
              "an under-confident model whose confidence lags by 0.21 decades (the edge)",
              "its confidence falls with accuracy (W = 0)", SIZE),
    RuleCheck("06.6 abstain ahead of accuracy", _abstain(0.0), _abstain(-0.1),
              "the abstain rate rises exactly with the loss of accuracy (W = 0, the edge)",
              "W_abstain = -0.1 (Table V: -0.06 to -0.12)", SIZE),
    RuleCheck("06.7 'I don't know' lags", _idk(0.0), _idk(0.24),
              "both wordings with the same curve (W -0.06), drawn independently",
              "W_abstain2 - W_abstain = 0.24 (Table V: 0.18 against -0.06)", SIZE),
    RuleCheck("06.8 t3 no signal reaches its mid-level", _t3(np.log10(16.8 / 1.953125)), _t3(3.0),
              "t3 confidence that reaches its mid-level at the murkiest level (1.95 m)",
              "t3 confidence that never falls (Table X)", SIZE),
    RuleCheck("06.9 worse calibrated under fog", _calibration(False), _calibration(True),
              "calibrated in both: right with the probability stated (confidence U(0.25, 1))",
              "clean 0.95 confident and right, murky 0.8 confident and 0.3 right (Fig. 5)",
              "12 clean and 48 murky t2 questions, 1,000 resamples of 12 scenes"),
    RuleCheck("06.10 ImageNet-C fog is tens of metres", _tens([200.0] * 5), _tens([110, 82, 67, 65, 55]),
              "every severity's median V_eq at 200 m (the edge), log-normal spread as Table VII",
              "Table VII medians 110-55 m", "12 images per severity, 1,000 resamples"),
    RuleCheck("06.11 ImageNet-C fog outside the failure band", _band([30.0] * 5), _band([110, 82, 67, 65, 55]),
              "every severity's median V_eq at the model's V_90 (30 m)", "Table VII medians 110-55 m", SIZE),
    RuleCheck("06.12 ImageNet-C fog near clean", _near_clean(0.055), _near_clean(0.02),
              "ImageNet-C fog flips 5.5 % of answers (a cost of about 0.05, the edge)",
              "2 % of answers flipped (Table VII: within 1-4 points)", SIZE),
    RuleCheck("06.12 ImageNet-C fog near clean (no vision)", _no_subject_is_not_a_pass(_near_clean(0.0, see=False)),
              None, "a model that cannot see: every image answered as the clean one", "", SIZE),
    RuleCheck("06.14 blank and shuffled at chance", _chance(0.1), _chance(0.0),
              "accuracy 0.1 above chance on both controls (the edge)", "accuracy at chance", SIZE),
    RuleCheck("06.14 blank and shuffled at chance (no vision)", _no_subject_is_not_a_pass(_chance(0.0, see=False)),
              None, "a model that cannot see: at chance everywhere", "", SIZE),
    RuleCheck("06.16 blank image abstained on", _blank_abstain(0.5), _blank_abstain(0.9),
              "a blank-image abstain rate of 0.5 (the edge)", "a rate of 0.9 (Table VIII: 0.85-1.00)",
              "12 blank t2 questions, 1,000 resamples"),
)
