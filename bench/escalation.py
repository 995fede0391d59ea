"""Benchmark: seed 001's RCI and T-RCI tables for ~10^6 prediction rows, vectorised vs a straightforward loop.

Builds a synthetic predictions table (models × items × {clean, 4 ladders × 4 levels, 4 traversals × 4
states}, with ``pred_idx``, ``confidence`` and a dataset group), then in one run

1. computes the RCI table (every ladder and traversal cell) and the T-RCI tables (per state, direction and
   unit) with ``vlmrobust.analysis.escalation.indices``, timed;
2. computes the same definitions, with the same input checks (duplicate rows, ``pred_idx`` in range, clean
   and corrupted rows agreeing on ``K`` and the answer), with a loop written from the paper's text (§II-D,
   §II-E, §II-F: dictionaries, per-cell lists, ``math.log``, its own ECE; no ``vlmrobust`` helper), timed;
3. checks that every number agrees (largest absolute difference, worst directions equal) and prints both
   timings (the best of ``--repeat`` interleaved runs of each, as ``timeit`` reports), their ratio and the
   load average.

    .venv/bin/python bench/escalation.py               # 10^6 rows
    .venv/bin/python bench/escalation.py --rows 200000 --repeat 1
"""

from __future__ import annotations

import argparse
import math
import os
import time
from collections import defaultdict

import numpy as np
import pandas as pd

from vlmrobust.analysis.escalation import indices as X
from vlmrobust.repro import rng

LADDERS = ("bruce_blur", "bruce_contrast", "bruce_rotate", "bruce_center_crop")
TRAVERSALS = {"TD": "traverse_topdown_mean", "BU": "traverse_bottomup_mean", "LR": "traverse_leftright_mean",
              "RL": "traverse_rightleft_mean"}
SHARES = (0.2, 0.4, 0.6, 0.8)
GROUPS = ("attributes", "relations", "reading")


def make_table(n_rows: int, n_models: int, seed: int) -> pd.DataFrame:
    """A predictions table of about ``n_rows`` rows (the columns RCI and T-RCI read)."""
    g = rng("bench.escalation", seed)
    conds = [("clean", 0, np.nan)] + [(p, lv, float(lv)) for p in LADDERS for lv in (1, 2, 3, 4)]
    conds += [(p, lv, SHARES[lv - 1]) for p in TRAVERSALS.values() for lv in (1, 2, 3, 4)]
    n_items = max(1, n_rows // (n_models * len(conds)))
    K = np.where(np.arange(n_items) % 4 == 3, 2, 4)
    y = g.integers(0, 2**31, n_items) % K
    group = np.array(GROUPS)[np.arange(n_items) % len(GROUPS)]
    M, N, C = n_models, n_items, len(conds)
    lev = np.array([c[1] for c in conds])
    skill = np.linspace(0.85, 0.45, M)[:, None, None] - 0.1 * lev[None, None, :] * g.uniform(0.3, 1.0, (M, 1, C))
    right = g.random((M, N, C)) < skill
    wrong = (y[None, :, None] + 1 + g.integers(0, 3, (M, N, C)) % (K[None, :, None] - 1)) % K[None, :, None]
    pred = np.where(right, y[None, :, None], wrong)
    conf = np.clip(np.where(right, 0.75, 0.55) + 0.2 * g.standard_normal((M, N, C)), 0, 1)
    conf[g.random((M, N, C)) < 0.01] = np.nan  # a few unparsed confidences
    shape = (M, N, C)
    return pd.DataFrame({
        "model": np.repeat([f"model-{m}" for m in range(M)], N * C),
        "method": "letter",
        "item_id": np.tile(np.repeat([f"item-{i:06d}" for i in range(N)], C), M),
        "group": np.tile(np.repeat(group, C), M),
        "perturbation": np.tile([c[0] for c in conds], M * N),
        "level": np.tile(lev, M * N),
        "param": np.tile([c[2] for c in conds], M * N),
        "K": np.broadcast_to(K[None, :, None], shape).reshape(-1),
        "answer_idx": np.broadcast_to(y[None, :, None], shape).reshape(-1),
        "pred_idx": pred.reshape(-1),
        "confidence": conf.reshape(-1),
    })


# ------------------------------------------------------------------ vectorised
def vectorised(pred: pd.DataFrame) -> dict:
    cells = X.cell_stats(pred, ("model", "group"))
    r = X.rci(cells)
    res = X.trci(X.trci_states(cells, TRAVERSALS))
    return {"rci": r, "states": res.states, "directions": res.directions, "units": res.units}


# ------------------------------------------------------------------ a loop written from the paper's text
# Seed 001 §II-D1/§II-D2/§II-E/§II-F, read without the library: plain dictionaries and lists, math.log, no
# vlmrobust helper. Where the paper is open the loop fixes what the library's docstrings state (normalised
# entropy over log K_max of the cell, ECE over ten equal-width confidence bins with 1.0 in the last,
# unparsed confidences left out, D_fail joint, RCI terms unclipped, T-RCI terms clipped, D_prog with
# epsilon = 1e-6, undefined terms left out of the mean), so that the numbers can be compared.
EPS = 1e-6  # §II-D2: "epsilon > 0 is a numerical stabilization constant"
N_BINS = 10


def _entropy(labels: list, kmax: int) -> float:
    """Normalised entropy of the empirical distribution of predicted letters: -sum q log q / log K."""
    counts = defaultdict(int)
    for v in labels:
        counts[v] += 1
    n = len(labels)
    return -sum(c / n * math.log(c / n) for c in counts.values()) / math.log(kmax)


def _ece(conf: list, right: list) -> float:
    """Expected calibration error: sum over bins of |B|/n |acc(B) - conf(B)|, ten equal-width bins."""
    n_b, acc_b, conf_b = [0] * N_BINS, [0.0] * N_BINS, [0.0] * N_BINS
    for c, r in zip(conf, right, strict=True):
        if c != c:  # an unparsed confidence
            continue
        b = min(int(c * N_BINS), N_BINS - 1)
        n_b[b] += 1
        acc_b[b] += r
        conf_b[b] += c
    n = sum(n_b)
    return sum(abs(acc_b[b] - conf_b[b]) for b in range(N_BINS)) / n if n else math.nan


def _mean_available(terms: list) -> float:
    avail = [t for t in terms if not math.isnan(t)]
    return sum(avail) / len(avail) if avail else math.nan


def loop(pred: pd.DataFrame) -> dict:
    cols = [pred[c].tolist() for c in ("model", "method", "item_id", "group", "perturbation", "level", "param",
                                       "K", "answer_idx", "pred_idx", "confidence")]
    clean, seen = {}, set()
    for m, me, it, _g, pe, lv, _pa, k, y, p, cf in zip(*cols, strict=True):
        if not 0 <= p < k:  # the input checks the library makes, so that both do the same work
            raise ValueError("pred_idx out of range")
        if (m, me, it, pe, lv) in seen:
            raise ValueError("duplicate row")
        seen.add((m, me, it, pe, lv))
        if pe == "clean":
            clean[(m, me, it)] = (p, cf, k, y)
    cells = defaultdict(list)
    for m, me, it, g, pe, lv, pa, k, y, p, cf in zip(*cols, strict=True):
        if pe == "clean":
            continue
        p0, cf0, k0, y0 = clean[(m, me, it)]
        if (k0, y0) != (k, y):
            raise ValueError("clean and corrupted rows disagree on K or answer_idx")
        cells[(m, g, pe, lv)].append((pa, k, y, p, p0, cf, cf0))
    rci_rows = {}
    for key, rows in cells.items():  # §II-D1: one condition p of one model and dataset
        n = len(rows)
        kmax = max(2, max(r[1] for r in rows))
        right = [r[3] == r[2] for r in rows]
        right0 = [r[4] == r[2] for r in rows]
        A, A0 = sum(right) / n, sum(right0) / n
        H, H0 = _entropy([r[3] for r in rows], kmax), _entropy([r[4] for r in rows], kmax)
        n_cc = sum(right0)
        n_flip = sum(1 for a, b in zip(right0, right, strict=True) if a and not b)
        terms = [1 - A / A0 if A0 > 0 else math.nan,  # D_acc = 1 - A_p / A_clean
                 abs(_ece([r[5] for r in rows], right) - _ece([r[6] for r in rows], right0)),  # D_cal
                 1 - H / H0 if H0 > 0 else math.nan,  # D_ent = 1 - H_p / H_clean
                 n_flip / n_cc if n_cc else math.nan]  # D_fail: P(clean-correct -> perturbed-wrong)
        # the other literal reading, sum_f w_f P(f | clean-correct -> perturbed-wrong), uniform w_f = 1
        cond = (1.0 if n_flip else 0.0) if n_cc else math.nan
        rci_rows[key] = {"param": rows[0][0], "A": A, "A0": A0, "H": H, "H0": H0, "terms": terms,
                         "RCI": _mean_available(terms),  # lambda_i = 1/4 over the available terms
                         "RCI_conditional": _mean_available([*terms[:3], cond])}
    by_name = {v: k for k, v in TRAVERSALS.items()}
    states = defaultdict(dict)
    for (m, g, pe, lv), row in rci_rows.items():
        if pe in by_name:
            states[(m, g, by_name[pe])][lv] = row
    directions, units, state_terms = {}, defaultdict(dict), {}
    for (m, g, d), levels in states.items():  # §II-D2 and §II-F: one direction r, states s_1..s_K
        prev, taus = None, []
        for lv in sorted(levels):
            row = levels[lv]
            A, A0, H, H0 = row["A"], row["A0"], row["H"], row["H0"]
            a_prev = A0 if prev is None else prev
            terms = [max(0.0, (A0 - A) / A0) if A0 > 0 else math.nan,
                     max(0.0, (H0 - H) / H0) if H0 > 0 else math.nan, row["terms"][3], row["param"],
                     max(0.0, (a_prev - A) / (a_prev + EPS))]
            tau = _mean_available(terms)  # alpha_i = 1/5
            state_terms[(m, g, d, lv)] = tau
            taus.append(tau)
            prev = A
        directions[(m, g, d)] = sum(taus) / len(taus)  # gamma_k = 1/K
        units[(m, g)][d] = directions[(m, g, d)]
    summary = {}
    for key, dirs in units.items():
        order = [d for d in TRAVERSALS if d in dirs]
        worst = max(order, key=lambda d: (dirs[d], -order.index(d)))
        taus = [v for (m, g, _d, _lv), v in state_terms.items() if (m, g) == key]
        summary[key] = {"T_mu": sum(dirs.values()) / len(dirs), "W_D": worst, "W_T": dirs[worst],  # beta_r = 1/4
                        "T_max": max(taus)}
    return {"rci": rci_rows, "states": state_terms, "directions": directions, "units": summary}


def compare(vec: dict, ref: dict) -> dict:
    r = vec["rci"]
    keys = list(zip(r["model"], r["group"], r["perturbation"], r["level"], strict=True))
    diffs = {"RCI": np.nanmax(np.abs(r["RCI"].to_numpy() - [ref["rci"][k]["RCI"] for k in keys]))}
    rc = vec["rci_conditional"]
    diffs["RCI (conditional)"] = np.nanmax(np.abs(rc["RCI"].to_numpy() - [ref["rci"][k]["RCI_conditional"]
                                                                          for k in keys]))
    terms = np.array([ref["rci"][k]["terms"] for k in keys])
    diffs["RCI terms"] = np.nanmax(np.abs(r[list(X.RCI_TERMS)].to_numpy() - terms))
    s = vec["states"]
    skeys = zip(s["model"], s["group"], s["direction"].astype(str), s["level"], strict=True)
    diffs["T-RCI per state"] = np.nanmax(np.abs(s["term"].to_numpy() - [ref["states"][k] for k in skeys]))
    d = vec["directions"]
    dkeys = zip(d["model"], d["group"], d["direction"].astype(str), strict=True)
    diffs["T-RCI per direction"] = np.nanmax(np.abs(d["T_RCI"].to_numpy() - [ref["directions"][k] for k in dkeys]))
    u = vec["units"]
    ukeys = list(zip(u["model"], u["group"], strict=True))
    for c in ("T_mu", "W_T", "T_max"):
        diffs[c] = np.nanmax(np.abs(u[c].to_numpy() - [ref["units"][k][c] for k in ukeys]))
    same_wd = all(str(w) == ref["units"][k]["W_D"] for w, k in zip(u["W_D"], ukeys, strict=True))
    if len(keys) != len(ref["rci"]) or len(ukeys) != len(ref["units"]):
        raise AssertionError("the two implementations produced different cells")
    return {"max_abs_diff": diffs, "same_worst_direction": same_wd}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--models", type=int, default=5)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--repeat", type=int, default=3, help="runs of each side; the best is reported")
    args = ap.parse_args(argv)
    pred = make_table(args.rows, args.models, args.seed)
    print(f"{len(pred):,} prediction rows ({pred['item_id'].nunique():,} items, {args.models} models, "
          f"{pred['perturbation'].nunique()} perturbations)")
    t_vec, t_loop = [], []
    for _ in range(args.repeat):  # best of n for each side, interleaved, so that both see the same load
        t0 = time.perf_counter()
        vec = vectorised(pred)
        t_vec.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        ref = loop(pred)
        t_loop.append(time.perf_counter() - t0)
    vec["rci_conditional"] = X.rci(X.cell_stats(pred, ("model", "group")), fail="conditional")  # not timed
    cmp = compare(vec, ref)
    worst = max(cmp["max_abs_diff"].values())
    print(f"RCI cells {len(vec['rci']):,}, T-RCI states {len(vec['states']):,}, units {len(vec['units'])}")
    for k, v in cmp["max_abs_diff"].items():
        print(f"  max |vectorised - loop| {k:<20} {v:.2e}")
    print(f"  worst directions identical: {cmp['same_worst_direction']}")
    print(f"vectorised {min(t_vec):.2f} s, loop {min(t_loop):.2f} s (best of {args.repeat}), ratio "
          f"{min(t_loop) / min(t_vec):.1f}x (load average {' '.join(f'{x:.2f}' for x in os.getloadavg())})")
    print("  all runs: vectorised " + " ".join(f"{t:.2f}" for t in t_vec) + " s; loop "
          + " ".join(f"{t:.2f}" for t in t_loop) + " s")
    ok = worst <= 1e-12 and cmp["same_worst_direction"]
    print("numbers identical (to 1e-12)" if ok else "NUMBERS DIFFER")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
