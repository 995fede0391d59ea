"""The sentence of finding notebook 05 prints under each figure, computed from the tables the figure draws: every
number and every direction word comes from the run."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from ... import corrupt
from .instability import label

__all__ = ["examples_finding", "drift_control_finding", "layer_finding", "dirichlet_finding", "pope_rates_finding",
           "pope_moves_finding", "pope_drift_finding", "noise_finding", "per_sample_finding", "thresholds_finding",
           "margins_finding", "spectral_finding", "pgd_finding", "scale_finding"]


def _side(x: float, what: str = "") -> str:
    return "above" if x > 0 else "below" if x < 0 else "equal to"


def examples_finding(image: np.ndarray, show: Sequence[tuple[str, int]], *, seed: int, key: str,
                     shift: str = "fixed") -> str:
    """Which drawn instance changes the pixels least and most (mean |Δ| over the 0-255 range)."""
    apply = corrupt.natural.shift_corrupt(shift)
    ch = {}
    for name, lv in show:
        if name != "clean":
            out = np.asarray(apply(image, name, lv, seed=seed, key=key), float)
            if out.shape == np.shape(image):
                ch[f"{label(name)} {corrupt.info(name).param(lv):g}"] = float(np.abs(out - image).mean() / 255)
    if not ch:
        return "No drawn instance keeps the image's size."
    s = pd.Series(ch)
    return (f"Among the drawn instances, {s.idxmin()} changes the pixels least (mean |Δ| {s.min():.1%} of the range) "
            f"and {s.idxmax()} most ({s.max():.1%}).")


def drift_control_finding(t4: pd.DataFrame, models: Sequence[str],
                          perturbations: Sequence[str] = ("translate", "text_overlay")) -> str:
    """Cohen's d of the drawn cells: how many put the perturbation drift below the control drift."""
    d = t4[t4.model.isin(list(models)) & t4.perturbation.isin(list(perturbations))].d.dropna()
    if not len(d):
        return "No Cohen's d for the drawn cells."
    return (f"In {int((d < 0).sum())} of {len(d)} drawn panels the perturbation drift lies below the control drift "
            f"(Cohen's d from {d.min():+.2f} to {d.max():+.2f}); all {len(t4)} rows of Table 4 have mean d "
            f"{t4.d.mean():+.2f}, {_side(t4.d.mean())} zero.")


def layer_finding(curves: pd.DataFrame, models: Sequence[str]) -> str:
    """Per model, the regime with the largest drift / control ratio at the last pre-norm layer."""
    parts = []
    for m in models:
        g = curves[(curves.model == m) & (curves.perturbation == "any")].dropna(subset=["ratio"])
        if len(g):
            last = g[g.layer == g.layer.max()].set_index("regime").ratio
            parts.append(f"{m}: {last.idxmax()} at {last.max():.2f} (lowest {last.idxmin()} at {last.min():.2f})")
    return ("At the last pre-norm layer the largest drift / control ratio is " + "; ".join(parts) + ".") if parts \
        else "No layer curve to read."


def dirichlet_finding(grid: pd.DataFrame, perturbation: str) -> str:
    """Median ΔE_dir over all instances against the flip-inducing ones."""
    g = grid[(grid.regime == "vision_grid") & (grid.perturbation == perturbation)]
    flips = g[g.flip.fillna(False).astype(bool)]
    if not len(g):
        return f"No vision-grid row for {label(perturbation)}."
    a, f = float(g.d_energy.median()), float(flips.d_energy.median()) if len(flips) else float("nan")
    if not np.isfinite(f):
        return f"{label(perturbation)}: median ΔE_dir {a:+.0f} over {len(g)} instances; none induced a flip."
    return (f"{label(perturbation)}: median ΔE_dir is {a:+.0f} over all {len(g)} instances and {f:+.0f} over the "
            f"{len(flips)} flip-inducing ones ({'higher' if f > a else 'lower' if f < a else 'the same'} where the "
            "answer flips).")


def pope_rates_finding(pope: pd.DataFrame, models: Sequence[str]) -> str:
    """Per model, the perturbation with the highest yes/no flip rate, and how many fall below clean accuracy."""
    parts = []
    for m in models:
        g = pope[pope.model == m].dropna(subset=["flip_rate"])
        if len(g):
            top = g.loc[g.flip_rate.idxmax()]
            most = (f"flips most under {label(top.perturbation)} ({top.flip_rate:.2f})" if top.flip_rate > 0
                    else "never flips a yes/no answer")
            parts.append(f"{m} {most}, its accuracy below clean under {int((g.acc < g.base_acc - 1e-12).sum())} of "
                         f"{len(g)} perturbations")
    return ("; ".join(parts) + ".") if parts else "No yes/no rows."


def pope_moves_finding(pope: pd.DataFrame) -> str:
    """The commonest yes/no move over all models and perturbations (counts)."""
    moves = pd.Series({mv: int(pope[mv].sum()) for mv in ("TP→FN", "TN→FP", "FP→TN", "FN→TP") if mv in pope})
    if not moves.sum():
        return "No yes/no answer moved under any perturbation."
    return (f"Over models and perturbations the commonest move is {moves.idxmax()} ({moves.max()} of "
            f"{moves.sum()} moves); 'yes' answers given to absent objects (TN→FP) number {moves.get('TN→FP', 0)}.")


def pope_drift_finding(p11: pd.DataFrame, models: Sequence[str]) -> str:
    """Per model, the rank correlation of mean drift with the flip rate over perturbations."""
    parts = []
    for m in models:
        g = p11[p11.model == m].dropna(subset=["flip_rate", "cos_sim"])
        if len(g) >= 3 and g.flip_rate.nunique() > 1:
            rho = float(g.flip_rate.rank().corr((1 - g.cos_sim).rank()))
            parts.append(f"{m} ρ {rho:+.2f}")
        else:
            parts.append(f"{m}: flip rate constant, no ρ")
    return "Spearman ρ of mean drift with the flip rate over perturbations: " + "; ".join(parts) + "."


def noise_finding(ncurve: pd.DataFrame) -> str:
    """Mean flip rate at the strongest noise level, per band."""
    top = ncurve[ncurve.level == ncurve.level.max()].groupby("perturbation").flip_rate.mean()
    if not len(top):
        return "No noise row."
    name = {p: p.removeprefix("noise_") for p in top.index}
    return (f"At the strongest noise, the {name[top.idxmax()]}-frequency band flips most ({top.max():.2f} mean "
            f"flip rate over models) and the {name[top.idxmin()]} band least ({top.min():.2f}).")


def per_sample_finding(per_sample: pd.DataFrame) -> str:
    """Spread of the flip rate across the drawn items at the strongest noise."""
    top = per_sample[per_sample.level == per_sample.level.max()]
    if not len(top):
        return "No per-item noise row."
    by_item = top.groupby("item_id").flip_rate.mean()
    return (f"At the strongest noise the {len(by_item)} items' flip rates over the draws run from {by_item.min():.2f} "
            f"to {by_item.max():.2f}.")


def thresholds_finding(thr: pd.DataFrame) -> str:
    """Median first flipping cutoff per ablation."""
    med = thr.groupby("perturbation").first_flip.median().dropna()
    never = thr.groupby("perturbation").first_flip.apply(lambda s: int(s.isna().sum()))
    if not len(med):
        return "No ablation flipped an answer."
    parts = [f"{p}: median first flip at cutoff {v:.3f} ({never.get(p, 0)} items never flip)" for p, v in med.items()]
    return "; ".join(parts) + "."


def margins_finding(acurve: pd.DataFrame) -> str:
    """Mean signed margin at the mildest and the strongest level, per ablation."""
    parts = []
    for p, g in acurve.groupby("perturbation"):
        a, b = g[g.level == g.level.min()].signed_margin.mean(), g[g.level == g.level.max()].signed_margin.mean()
        parts.append(f"{p} {'falls' if b < a else 'rises' if b > a else 'stays'} from {a:+.2f} to {b:+.2f}")
    return ("Mean signed margin of the base option, mildest to strongest cutoff: " + "; ".join(parts) + ".") if parts \
        else "No ablation row."


def spectral_finding(sd: pd.DataFrame) -> str:
    """High-band change of the flip-inducing instances against all instances."""
    if not len(sd):
        return "No spectral drift row."
    a = float(sd.high.mean())
    f = float(sd[sd.flip.fillna(False).astype(bool)].high.mean()) if sd.flip.fillna(False).any() else float("nan")
    low_a = float(sd.low.mean())
    text = f"Over all instances the mean relative change is {low_a:.2f} in the low band and {a:.2f} in the high band"
    if np.isfinite(f):
        text += f"; flip-inducing instances change the high band by {f:.2f}, {'more' if f > a else 'less'} than all"
    return text + "."


def pgd_finding(t29: pd.DataFrame) -> str:
    """Attack success per mode (Table 29)."""
    if not len(t29):
        return "No PGD attack was run."
    asr = t29.groupby("mode").ASR.mean()
    inb = t29.groupby("mode").in_band_share.mean()
    return ("Mean attack success by mode: " + ", ".join(f"{m} {v:.2f} (in band {inb[m]:.2f})" for m, v in asr.items())
            + ".")


def scale_finding(t5: pd.DataFrame) -> str:
    """How the R→W and W→R shares move from the smallest to the largest model."""
    if len(t5) < 2:
        return "Fewer than two sizes: no trend by size."
    t = t5.sort_values("size")
    a, b = t.iloc[0], t.iloc[-1]
    rw = "rises" if b["R→W share"] > a["R→W share"] else "falls"
    wr = "rises" if b["W→R share"] > a["W→R share"] else "falls"
    return (f"From {a.model} to {b.model} the R→W share {rw} from {a['R→W share']:.3f} to {b['R→W share']:.3f} and the "
            f"W→R share {wr} from {a['W→R share']:.3f} to {b['W→R share']:.3f}.")
