"""Benchmark: seed 000's selection (κ, A⁺, greedy novelty, the split, Table I), vectorised vs a per-item loop.

Builds a synthetic selection problem (``vlmrobust.analysis.selection.simulate_pool``: by
default 100,000 items × 3 selectors × 19 corruptions × 5 severities with
384-d image and text embeddings), then in one run

1. runs the library (``vlmrobust.analysis.selection``): Eq. 1 for every path, κ (Eq. 2),
   A⁺ (Eq. 3), the greedy novelty over A⁺ (Eqs. 4–5), ``e`` and the split
   (Eq. 6), Table I (three leave-one-selector-out variants with A⁺ fixed and
   three with A⁺, ν and ``e`` recomputed, size-matched) and the
   semantic-only vs inconsistency-only overlap; timed;
2. runs the same definitions as a straightforward per-item loop (a dict of
   answer counts per path, a Python mean per item, and a greedy that at every
   step computes each remaining item's two cosines with the running centroids);
   timed;
3. checks that the results are identical (masks, pick orders, Table I counts)
   and the scores equal to 1e-12, and prints both timings, their ratio and the
   load average.

The loop's greedy is quadratic in |A⁺| (Python per item per step), so the
story's share of fragile items (``--fragile``, default 2 %) keeps A⁺ near
2,000 items, the size of the paper's (1,750); ``--no-loop`` times the library
alone, e.g. at the paper's eligibility ratio (``--fragile 0.45``: A⁺ ≈ 43,000).

    .venv/bin/python bench/selection.py
    .venv/bin/python bench/selection.py --items 20000
    .venv/bin/python bench/selection.py --fragile 0.45 --no-loop
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np

from vlmrobust.analysis import selection as S
from vlmrobust.repro import rng

TIE = S.TIE_DECIMALS


# ------------------------------------------------------------------ vectorised
def vectorised(pool, names) -> dict:
    t = {}
    t0 = time.perf_counter()
    G = S.gini(pool.pred, pool.K)
    t["gini (Eq. 1)"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    sel = S.select(G, pool.image_emb, pool.text_emb, pool.item_ids)
    t["κ, A⁺, greedy ν, split (Eqs. 2-6)"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    table = S.table_i(G, pool.image_emb, pool.text_emb, sel, names)
    overlap = S.criteria_overlap(sel)
    t["Table I + criteria overlap"] = time.perf_counter() - t0
    return {"G": G, "sel": sel, "table": table, "overlap": overlap, "times": t}


# ------------------------------------------------------------------ per-item loop
def loop_gini(pred, K) -> list:
    n, ns, nd, L = pred.shape
    out = []
    for i in range(n):
        k = int(K[i])
        item = []
        for s in range(ns):
            row = []
            for d in range(nd):
                counts: dict = {}
                for a in pred[i, s, d].tolist():
                    counts[a] = counts.get(a, 0) + 1
                row.append(k / (k - 1) * (1.0 - sum((c / L) ** 2 for c in counts.values())))
            item.append(row)
        out.append(item)
    return out


def loop_kappa(G, keep) -> list:
    return [sum(sum(G[i][s]) for s in keep) / (len(keep) * len(G[i][0])) for i in range(len(G))]


def loop_eligible(G, keep) -> list:
    return [all(sum(G[i][s]) / len(G[i][s]) > 0 for s in keep) for i in range(len(G))]


def loop_greedy(VI, VT, kappa, ids, members) -> tuple[list, dict]:
    """Eqs. 4-5 over ``members``: every step, every remaining item's ν against the running centroids."""
    rem = list(members)
    SI, ST = np.zeros(VI.shape[1]), np.zeros(VT.shape[1])
    rows_i, rows_t = list(VI), list(VT)
    tie_kappa = {q: round(kappa[q], TIE) for q in rem}
    tie_id = {q: _neg(ids[q]) for q in rem}
    order, nu = [], {}
    for n in range(len(rem)):
        best, best_key = None, None
        mI, mT = (SI / n, ST / n) if n else (SI, ST)  # the centroids of the items picked so far
        nI, nT = np.linalg.norm(mI), np.linalg.norm(mT)
        for j, q in enumerate(rem):
            if n == 0:
                v = 1.0
            else:
                cI = float(np.dot(rows_i[q], mI)) / nI if nI > 1e-12 else 0.0
                cT = float(np.dot(rows_t[q], mT)) / nT if nT > 1e-12 else 0.0
                v = 1.0 - (cI + cT) / 2.0
            key = (round(v, TIE), tie_kappa[q], tie_id[q])
            if best_key is None or key > best_key:
                best, best_key, best_v = j, key, v
        q = rem.pop(best)
        nu[q] = best_v
        order.append(q)
        SI += VI[q]
        ST += VT[q]
    return order, nu


def _neg(s: str):
    """Sort key that makes a larger tuple mean a *lower* item id."""
    return tuple(-ord(c) for c in s) + (1,)


def loop_top(members, score, kappa, ids, k) -> set:
    ranked = sorted(members, key=lambda q: (-round(score[q], TIE), -round(kappa[q], TIE), ids[q]))
    return set(ranked[:k])


def loop_all(pool, names) -> dict:
    t = {}
    t0 = time.perf_counter()
    G = loop_gini(pool.pred, pool.K)
    t["gini (Eq. 1)"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    VI = pool.image_emb.astype(np.float64)
    VT = pool.text_emb.astype(np.float64)
    VI /= np.linalg.norm(VI, axis=1, keepdims=True)
    VT /= np.linalg.norm(VT, axis=1, keepdims=True)
    ids = [str(i) for i in pool.item_ids]
    every = list(range(len(names)))
    kap = loop_kappa(G, every)
    el = loop_eligible(G, every)
    members = [i for i in range(len(G)) if el[i]]
    order, nu = loop_greedy(VI, VT, kap, ids, members)
    e = {q: kap[q] + nu[q] for q in members}
    mean = sum(e.values()) / len(e)
    split = {q for q in members if round(e[q], TIE) > round(mean, TIE)}
    t["κ, A⁺, greedy ν, split (Eqs. 2-6)"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    rows = []
    for s in every:
        keep = [x for x in every if x != s]
        k2 = loop_kappa(G, keep)
        fixed = loop_top(members, {q: k2[q] + nu[q] for q in members}, k2, ids, len(split))
        el2 = loop_eligible(G, keep)
        m2 = [i for i in range(len(G)) if el2[i]]
        _, nu2 = loop_greedy(VI, VT, k2, ids, m2)
        recomputed = loop_top(m2, {q: k2[q] + nu2[q] for q in m2}, k2, ids, len(split))
        rows.append((len(fixed & split), len(m2), len(recomputed & split)))
    semantic = loop_top(members, nu, kap, ids, len(split))
    inconsistency = loop_top(members, {q: kap[q] for q in members}, kap, ids, len(split))
    t["Table I + criteria overlap"] = time.perf_counter() - t0
    position = {q: j for j, q in enumerate(members)}
    return {"G": G, "kappa": kap, "eligible": el, "order": [position[q] for q in order], "nu": nu,
            "split": split, "rows": rows, "semantic": semantic, "inconsistency": inconsistency, "times": t}


def compare(v: dict, lp: dict) -> list[tuple[str, bool, str]]:
    sel, t, ov = v["sel"], v["table"], v["overlap"]
    members = np.flatnonzero(sel.eligible)
    nu_loop = np.array([lp["nu"][q] for q in members])
    out = [
        ("G (every path)", bool(np.abs(v["G"] - np.asarray(lp["G"])).max() < 1e-12),
         f"max |Δ| {np.abs(v['G'] - np.asarray(lp['G'])).max():.1e}"),
        ("κ", bool(np.abs(sel.kappa - np.asarray(lp["kappa"])).max() < 1e-12),
         f"max |Δ| {np.abs(sel.kappa - np.asarray(lp['kappa'])).max():.1e}"),
        ("A⁺", sel.eligible.tolist() == lp["eligible"], f"{int(sel.eligible.sum())} items"),
        ("greedy pick order", np.argsort(sel.pick[members]).tolist() == lp["order"], f"{len(members)} steps"),
        ("ν", bool(np.abs(sel.nu[members] - nu_loop).max() < 1e-12),
         f"max |Δ| {np.abs(sel.nu[members] - nu_loop).max():.1e}"),
        ("split (Eq. 6)", set(np.flatnonzero(sel.selected).tolist()) == lp["split"], f"{sel.size} items"),
        ("Table I kept / A⁺′ sizes",
         [(int(r.fixed_kept), int(r.recomputed_eligible), int(r.recomputed_kept)) for r in t.itertuples()]
         == lp["rows"], "; ".join(f"{r.removed}: fixed {r.fixed_kept}, recomputed {r.recomputed_kept} "
                                  f"(A⁺′ {r.recomputed_eligible})" for r in t.itertuples())),
        ("semantic / inconsistency sets", set(np.flatnonzero(ov["semantic"]).tolist()) == lp["semantic"]
         and set(np.flatnonzero(ov["inconsistency"]).tolist()) == lp["inconsistency"], f"JI {ov['ji']:.3f}"),
    ]
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--items", type=int, default=100_000)
    ap.add_argument("--selectors", type=int, default=3)
    ap.add_argument("--corruptions", type=int, default=19)
    ap.add_argument("--levels", type=int, default=5)
    ap.add_argument("--dim", type=int, default=384)
    ap.add_argument("--fragile", type=float, default=0.02, help="share of fragile items in the story")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--no-loop", action="store_true", help="time the library only")
    args = ap.parse_args()
    names = [f"sel-{chr(ord('a') + i)}" for i in range(args.selectors)]
    t0 = time.perf_counter()
    pool = S.simulate_pool(args.items, rng("bench.select", args.seed), n_selectors=args.selectors,
                           n_corruptions=args.corruptions, n_levels=args.levels, dim=args.dim, fragile=args.fragile)
    print(f"pool: {args.items:,} items × {args.selectors} selectors × {args.corruptions} corruptions × "
          f"{args.levels} severities, {args.dim}-d embeddings (built in {time.perf_counter() - t0:.1f} s)")
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    v = vectorised(pool, names)
    sel = v["sel"]
    print(f"A⁺ {int(sel.eligible.sum()):,} items, split {sel.size:,} (mean e {sel.threshold:.4f})")
    tv = sum(v["times"].values())
    if args.no_loop:
        for k, s in v["times"].items():
            print(f"  {k:<36} {s:8.2f} s")
        print(f"vectorised total {tv:.2f} s; load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
        return
    lp = loop_all(pool, names)
    tl = sum(lp["times"].values())
    print(f"\n{'step':<36} {'vectorised':>11} {'loop':>10} {'ratio':>8}")
    for k in v["times"]:
        print(f"{k:<36} {v['times'][k]:10.2f}s {lp['times'][k]:9.2f}s {lp['times'][k] / v['times'][k]:7.1f}×")
    print(f"{'total':<36} {tv:10.2f}s {tl:9.2f}s {tl / tv:7.1f}×")
    print("\nsame results:")
    ok = True
    for name, same, detail in compare(v, lp):
        ok &= same
        print(f"  {'yes' if same else 'NO '}  {name:<32} {detail}")
    print(f"\nall identical: {ok}; load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    if not ok:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
