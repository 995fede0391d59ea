"""Benchmark: seed 000 tables for ~10^6 clean-corrupted pairs, vectorised vs row-by-row.

Builds a synthetic predictions table (``vlmrobust.analysis.ras.simulate``), then in
one run

1. computes every seed-000 product with ``vlmrobust.analysis.ras`` (pairs, Eqs.
   13-16 per cell, Table II with question-bootstrap intervals, Tables III, IV,
   VI, trajectories and their summary), timed;
2. computes the same definitions with a straightforward row-by-row Python
   implementation (dicts and loops over rows, ``math.log``), timed;
3. checks that every number agrees (max absolute difference, class labels
   equal), rebuilds two bootstrap resamples of Table II row by row and checks
   them against the vectorised replicates, and prints both timings, their
   ratio and the load average.

    .venv/bin/python bench/metrics.py              # ~10^6 pairs (5 models x 19 corruptions x 5 severities)
    .venv/bin/python bench/metrics.py --pairs 100000 --n-boot 200
"""

from __future__ import annotations

import argparse
import math
import os
import time
from collections import defaultdict

import numpy as np
import pandas as pd

from vlmrobust.analysis import ras as M
from vlmrobust.analysis.ras.simulate import IMAGENET_C_FAMILIES, simulate_predictions
from vlmrobust.analysis.ras.tables import TABLE_II_STATS
from vlmrobust.repro import rng
from vlmrobust.stats.bootstrap import resample_indices

LEVELS = (1, 2, 3, 4, 5)


# ------------------------------------------------------------------ vectorised
def vectorised(pred: pd.DataFrame, n_boot: int, seed: int) -> dict:
    pr = M.pairs(pred)
    out = {"pairs": pr}
    out["cells"] = M.state_effects(pr)
    out["t2"] = M.table_ii(pr, n_boot=n_boot, rng=rng("bench.metrics", seed), return_replicates=True)
    out["t3"] = M.table_iii(pr)
    out["t4"] = M.table_iv(pr)
    out["t6"] = M.table_vi(out["t2"])
    out["traj"] = M.trajectories(pr, LEVELS)
    out["traj_summary"] = M.trajectory_summary(out["traj"])
    return out


# ------------------------------------------------------------------ row by row
def _S(p, k):
    return -sum(v * math.log(v) for v in p if v > 0) / math.log(k)


def _top(p):
    best = 0
    for j in range(1, len(p)):
        if p[j] > p[best]:
            best = j
    return best, p[best]


def row_pairs(pred: pd.DataFrame) -> list[dict]:
    """Each corrupted row joined to its clean row; Eqs. 7-12 with scalars."""
    cols = [pred[c].tolist() for c in ("model", "method", "item_id", "perturbation", "level", "K",
                                       "answer_idx", "probs")]
    clean = {}
    for m, me, it, pe, _lv, k, y, p in zip(*cols, strict=True):
        if pe == "clean":
            clean[(m, me, it)] = (k, y, p)
    out = []
    for m, me, it, pe, lv, k, y, p in zip(*cols, strict=True):
        if pe == "clean" or lv == 0:
            continue
        _, _, p0 = clean[(m, me, it)]
        s0, s1 = sum(p0), sum(p)
        p0 = [v / s0 for v in p0]
        p1 = [v / s1 for v in p]
        t0, c0 = _top(p0)
        t1, c1 = _top(p1)
        ok0, ok1 = t0 == y, t1 == y
        C0, C1 = abs(float(ok0) - c0), abs(float(ok1) - c1)
        dS = _S(p1, k) - _S(p0, k)
        dC = C1 - C0
        r = -dC - max(dC, 0.0) * max(-dS, 0.0) - max(dS, 0.0) * max(-dC, 0.0)
        out.append({"model": m, "method": me, "item": it, "pert": pe, "level": lv, "ok0": ok0, "ok1": ok1,
                    "same": t0 == t1, "dS": dS, "dC": dC, "RAS": r,
                    "state": ("c" if ok0 else "w") + ("c" if ok1 else "w")})
    return out


def row_cells(prs: list[dict]) -> dict:
    """Eqs. 13-16 per (model, method, perturbation, level) with dictionaries."""
    groups = defaultdict(lambda: defaultdict(list))
    for q in prs:
        groups[(q["model"], q["method"], q["pert"], q["level"])][q["state"]].append(q)
    res = {}
    for key, st in groups.items():
        n = sum(len(v) for v in st.values())
        row = {}
        for a in "cw":
            na = len(st[a + "c"]) + len(st[a + "w"])
            row[f"pi_{a}"] = na / n
            for quant in ("RAS", "dS", "dC"):
                val = 0.0
                for b in "cw":
                    members = st[a + b]
                    if members:
                        mean = sum(q[quant] for q in members) / len(members)
                        row[f"{quant}_{a}{b}"] = mean
                        val += len(members) / na * mean
                    else:
                        row[f"{quant}_{a}{b}"] = float("nan")
                row[f"{quant}_{a}"] = val if na else float("nan")
        for quant in ("RAS", "dS", "dC"):
            row[f"{quant}_all"] = sum(row[f"pi_{a}"] * row[f"{quant}_{a}"] for a in "cw" if row[f"pi_{a}"] > 0)
        res[key] = row
    return res


def row_table_ii(prs: list[dict], mixed_tol: float = 0.0) -> dict:
    acc = defaultdict(lambda: defaultdict(float))
    cells = defaultdict(lambda: defaultdict(lambda: [0.0, 0, 0.0, 0]))
    for q in prs:
        a = acc[q["model"]]
        a["n"] += 1
        a["ok0"] += q["ok0"]
        a["ok1"] += q["ok1"]
        a["same"] += q["same"]
        a["ras"] += q["RAS"]
        if q["ok0"]:
            a["ras_c"] += q["RAS"]
        c = cells[q["model"]][(q["pert"], q["level"])]
        if q["ok0"]:
            c[0] += q["RAS"]
            c[1] += 1
        else:
            c[2] += q["RAS"]
            c[3] += 1
    res = {}
    for m, a in acc.items():
        n, n_c = a["n"], a["ok0"]
        acc0, acc1 = n_c / n, a["ok1"] / n
        valid = [c for c in cells[m].values() if c[1] and c[3]]
        mixed = sum(1 for c in valid if c[0] / c[1] < -mixed_tol and c[2] / c[3] > mixed_tol)
        res[m] = {
            "acc_clean": acc0, "acc_corr": acc1, "delta_acc": acc1 - acc0, "consistency": a["same"] / n,
            "rel_rob": acc1 / acc0 if acc0 else float("nan"), "RAS": a["ras"] / n,
            "R_c": a["ras_c"] / n_c if n_c else float("nan"),
            "R_w": (a["ras"] - a["ras_c"]) / (n - n_c) if n - n_c else float("nan"),
            "mixed_pct": 100.0 * mixed / len(valid) if valid else float("nan"),
        }
    return res


def row_table_iii_iv(prs: list[dict], tol: float = 1e-6) -> tuple[dict, dict]:
    st = defaultdict(lambda: [0, 0.0, 0.0, 0.0, 0.0])
    rg = defaultdict(lambda: [0, 0.0, 0.0, 0.0])
    for q in prs:
        s = st[q["state"]]
        s[0] += 1
        s[1] += q["ok1"] - q["ok0"]
        s[2] += q["RAS"]
        s[3] += q["dS"]
        s[4] += q["dC"]
        if abs(q["dC"]) <= tol or abs(q["dS"]) <= tol:
            name = "boundary"
        else:
            name = ("worse" if q["dC"] > 0 else "better") + "-" + ("flatter" if q["dS"] > 0 else "sharper")
        r = rg[name]
        r[0] += 1
        r[1] += q["dC"]
        r[2] += q["dS"]
        r[3] += q["RAS"]
    n = len(prs)
    t3 = {}
    for k, s in st.items():
        src = sum(v[0] for kk, v in st.items() if kk[0] == k[0])
        t3[k] = {"n": s[0], "share": s[0] / n, "cond_rate": s[0] / src, "delta_acc": s[1] / s[0],
                 "RAS": s[2] / s[0], "dS": s[3] / s[0], "dC": s[4] / s[0]}
    t4 = {k: {"n": r[0], "dC": r[1] / r[0], "dS": r[2] / r[0], "RAS": r[3] / r[0], "share": r[0] / n}
          for k, r in rg.items()}
    return t3, t4


def row_table_vi(t2: dict) -> dict:
    def ranks(metric):
        vals = {m: v[metric] for m, v in t2.items()}
        return {m: 1 + sum(1 for o in vals.values() if o > x) for m, x in vals.items()}

    r_ras = ranks("RAS")
    out = {m: {"RAS_rank": r_ras[m]} for m in t2}
    for name, metric in (("abs", "acc_corr"), ("delta_acc", "delta_acc"), ("rel_rob", "rel_rob")):
        r = ranks(metric)
        for m in t2:
            out[m][f"{name}_rank"] = r[m]
            out[m][f"{name}_dr"] = r_ras[m] - r[m]
    return out


def row_trajectories(prs: list[dict]) -> dict:
    paths = defaultdict(dict)
    for q in prs:
        paths[(q["model"], q["method"], q["item"], q["pert"])][q["level"]] = q
    out = {}
    for key, lv in paths.items():
        if sorted(lv) != list(LEVELS):
            continue
        seq = [lv[v] for v in LEVELS]
        c0 = seq[0]["ok0"]
        changed = [q["ok1"] != c0 for q in seq]
        if not any(changed):
            klass = "always correct" if c0 else "always wrong"
        else:
            f = changed.index(True)
            stays = all(changed[f:])
            if c0:
                klass = "persistent loss" if stays else "transient loss"
            else:
                klass = "persistent correction" if stays else "transient correction"
        ds = sorted(q["dS"] for q in seq)
        dc = sorted(q["dC"] for q in seq)
        out[key] = {"klass": klass, "RAS": sum(q["RAS"] for q in seq) / len(seq),
                    "dS_med": ds[len(ds) // 2], "dC_med": dc[len(dc) // 2]}
    return out


def row_traj_summary(traj: dict) -> dict:
    acc = defaultdict(lambda: [0, 0.0, 0.0, 0.0])
    for (m, *_), t in traj.items():
        a = acc[(m, t["klass"])]
        a[0] += 1
        a[1] += t["RAS"]
        a[2] += t["dS_med"]
        a[3] += t["dC_med"]
    return {k: {"n": a[0], "RAS": a[1] / a[0], "dS_med": a[2] / a[0], "dC_med": a[3] / a[0]} for k, a in acc.items()}


def row_by_row(pred: pd.DataFrame) -> dict:
    prs = row_pairs(pred)
    t2 = row_table_ii(prs)
    t3, t4 = row_table_iii_iv(prs)
    traj = row_trajectories(prs)
    return {"pairs": prs, "cells": row_cells(prs), "t2": t2, "t3": t3, "t4": t4, "t6": row_table_vi(t2),
            "traj": traj, "traj_summary": row_traj_summary(traj)}


# ------------------------------------------------------------------ comparison
def compare(v: dict, r: dict) -> dict[str, float]:
    """Max |difference| per product; raises if a count or a label differs."""
    diff = {}
    pr = v["pairs"]
    ras = np.array([q["RAS"] for q in r["pairs"]])
    assert len(ras) == len(pr)
    assert pr["state"].astype(str).tolist() == [q["state"] for q in r["pairs"]], "states differ"
    diff["pairs (dS, dC, RAS)"] = max(
        np.abs(pr["RAS"].to_numpy() - ras).max(),
        np.abs(pr["dS"].to_numpy() - np.array([q["dS"] for q in r["pairs"]])).max(),
        np.abs(pr["dC"].to_numpy() - np.array([q["dC"] for q in r["pairs"]])).max())
    cells = v["cells"]
    d = 0.0
    for row in cells.itertuples(index=False):
        ref = r["cells"][(row.model, row.method, row.perturbation, row.level)]
        for k, x in ref.items():
            y = getattr(row, k)
            if not (math.isnan(x) and math.isnan(y)):
                d = max(d, abs(x - y))
    diff["Eqs. 13-16 per cell"] = d
    t2 = v["t2"].set_index("model")
    diff["Table II"] = max(abs(t2.loc[m, s] - r["t2"][m][s]) for m in r["t2"] for s in TABLE_II_STATS)
    t3 = v["t3"].set_index("state")
    assert all(int(t3.loc[k, "n"]) == x["n"] for k, x in r["t3"].items()), "Table III counts differ"
    diff["Table III"] = max(abs(t3.loc[k, c] - x[c]) for k, x in r["t3"].items() for c in x)
    t4 = v["t4"].set_index("regime")
    assert all(int(t4.loc[k, "n"]) == x["n"] for k, x in r["t4"].items()), "Table IV counts differ"
    diff["Table IV"] = max(abs(t4.loc[k, c] - x[c]) for k, x in r["t4"].items() for c in x)
    t6 = v["t6"].set_index("model")
    for m, x in r["t6"].items():
        for c, val in x.items():
            assert int(t6.loc[m, c]) == val, f"Table VI {m} {c}"
    diff["Table VI ranks"] = 0.0
    tr = v["traj"]
    assert len(tr) == len(r["traj"]), "trajectory counts differ"
    keys = zip(tr["model"].astype(str), tr["method"].astype(str), tr["item_id"].astype(str),
               tr["perturbation"].astype(str), strict=True)
    ref = [r["traj"][k] for k in keys]
    assert tr["klass"].astype(str).tolist() == [t["klass"] for t in ref], "trajectory classes differ"
    diff["trajectories"] = max(np.abs(tr[c].to_numpy() - np.array([t[c] for t in ref])).max()
                               for c in ("RAS", "dS_med", "dC_med"))
    ts = v["traj_summary"]
    d = 0.0
    for row in ts.itertuples(index=False):
        x = r["traj_summary"].get((row.model, row.klass))
        if x is None:
            assert row.n == 0
            continue
        assert row.n == x["n"]
        d = max(d, abs(row.RAS - x["RAS"]), abs(row.dS_med - x["dS_med"]), abs(row.dC_med - x["dC_med"]))
    diff["trajectory summary"] = d
    return diff


def check_bootstrap(prs: list[dict], v: dict, n_boot: int, seed: int, n_check: int = 2) -> float:
    """Rebuild the first ``n_check`` Table II resamples row by row and compare with the replicates."""
    by_item = defaultdict(list)
    for q in prs:
        by_item[q["item"]].append(q)
    items = sorted(by_item)
    draws = resample_indices(len(items), n_boot, rng("bench.metrics", seed))
    reps = v["t2"].attrs["replicates"]
    models = v["t2"]["model"].astype(str).tolist()
    d = 0.0
    for b in range(n_check):
        res = [q for i in draws[b] for q in by_item[items[i]]]
        ref = row_table_ii(res)
        for gi, m in enumerate(models):
            for j, s in enumerate(TABLE_II_STATS):
                d = max(d, abs(reps[gi, b, j] - ref[m][s]))
    return d


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pairs", type=int, default=1_000_000, help="approximate number of clean-corrupted pairs")
    ap.add_argument("--models", type=int, default=5)
    ap.add_argument("--n-boot", type=int, default=1000, help="bootstrap resamples for Table II")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--boot-check", type=int, default=2, help="resamples rebuilt row by row")
    ap.add_argument("--repeat", type=int, default=3, help="runs of each side; the fastest is reported")
    args = ap.parse_args(argv)
    perts = list(IMAGENET_C_FAMILIES)
    n_items = max(1, round(args.pairs / (args.models * len(perts) * len(LEVELS))))
    t = time.perf_counter()
    pred = simulate_predictions(n_items, models=[f"model-{i}" for i in range(args.models)], perturbations=perts,
                                levels=LEVELS, rng=rng("bench.metrics.simulate", args.seed))
    print(f"predictions table: {len(pred):,} rows ({n_items} questions x {args.models} models x "
          f"{len(perts)} corruptions x {len(LEVELS)} severities + clean), built in {time.perf_counter() - t:.1f} s")
    load0 = os.getloadavg()

    def timed(f):
        t, c = time.perf_counter(), time.process_time()
        res = f()
        return time.perf_counter() - t, time.process_time() - c, res

    # the three sides run interleaved, so that each sees the same changes of load on a shared machine
    runs = {"vec0": [], "vec": [], "row": []}
    for _ in range(args.repeat):
        runs["vec0"].append(timed(lambda: vectorised(pred, 0, args.seed)))
        runs["vec"].append(timed(lambda: vectorised(pred, args.n_boot, args.seed)))
        runs["row"].append(timed(lambda: row_by_row(pred)))

    def best(side):
        """Fastest wall time, all wall times, the CPU time of the fastest run, its result."""
        i = int(np.argmin([w for w, _, _ in runs[side]]))
        w, c, res = runs[side][i]
        return w, [x[0] for x in runs[side]], c, res

    t_vec0, all_vec0, c_vec0, v0 = best("vec0")
    t_vec, all_vec, c_vec, v = best("vec")
    t_row, all_row, c_row, r = best("row")
    load1 = os.getloadavg()

    diff = compare(v, r)
    diff0 = compare(v0, r)
    t = time.perf_counter()
    dboot = check_bootstrap(r["pairs"], v, args.n_boot, args.seed, args.boot_check)
    t_boot_check = time.perf_counter() - t

    n_pairs = len(v["pairs"])
    print(f"pairs: {n_pairs:,}; cells: {len(v['cells'])}; trajectories: {len(v['traj']):,}")
    print("\nagreement, vectorised vs row-by-row (max |difference|; counts, states, classes and ranks equal):")
    for k, x in diff.items():
        print(f"  {k:24s} {x:.2e}   (without bootstrap run: {diff0[k]:.2e})")
    print(f"  Table II bootstrap      {dboot:.2e}   ({args.boot_check} resamples rebuilt row by row, "
          f"{t_boot_check:.1f} s)")
    ok = max(max(diff.values()), dboot) < 1e-9
    print(f"  identical to 1e-9: {'yes' if ok else 'NO'}")
    print("\ntimings (all tables: pairs, Eqs. 13-16 per cell, Tables II/III/IV/VI, trajectories + summary;")
    print(f"         fastest wall time of {args.repeat} interleaved runs each, and the CPU time of that run):")
    runs = lambda xs: ", ".join(f"{x:.2f}" for x in xs)  # noqa: E731
    print(f"  row-by-row (point estimates)        wall {t_row:7.2f} s  cpu {c_row:7.2f} s   runs {runs(all_row)}")
    print(f"  vectorised (point estimates)        wall {t_vec0:7.2f} s  cpu {c_vec0:7.2f} s   runs {runs(all_vec0)}")
    print(f"      speed-up: wall {t_row / t_vec0:5.1f}x   cpu {c_row / c_vec0:5.1f}x")
    print(f"  vectorised + {args.n_boot} bootstrap resamples wall {t_vec:7.2f} s  cpu {c_vec:7.2f} s   "
          f"runs {runs(all_vec)}  (cpu counts every BLAS thread; the row-by-row side has no bootstrap)")
    print(f"  load average before / after: {load0[0]:.2f} {load0[1]:.2f} {load0[2]:.2f} / "
          f"{load1[0]:.2f} {load1[1]:.2f} {load1[2]:.2f} on {os.cpu_count()} CPUs")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
