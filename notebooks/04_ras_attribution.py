# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3 (vlmrobust)
#     language: python
#     name: vlmrobust
# ---

# %% [markdown]
# # 04 · RAS attribution: where corruption damages prediction structure
#
# Accuracy records whether the top-1 answer survives a corruption; it does not say whether the option
# distribution behind that answer kept its support. This notebook compares every clean–corrupted pair of
# option distributions, scores the change with the **Robustness Alignment Score** (RAS), and attributes it to
# the clean-side source (originally correct or wrong), the correctness state, and the severity trajectory.
#
# * **Reproduces:** seed 000 (Bench-C), §V–VII and its supplement: Eqs. (7)–(16), Tables II, III, IV and VI,
#   the severity-trajectory classes, Figs. 4, 5/11, 6, 7 and 12, and the paper's four observations, each
#   tested against a model that cannot see.
# * **You will learn:** how ΔS (uncertainty shift) and ΔC (confidence–correctness alignment shift) combine into
#   RAS, why a preserved answer can still lose support, how R_c and R_w split the aggregate, and whether the
#   model organisms show the paper's patterns.

# %%
import numpy as np
import pandas as pd
from IPython.display import display

from vlmrobust import corrupt, figures, params, paths, repro, schema, sweep
from vlmrobust.analysis import ras

NB_ID = "04_ras_attribution"
figures.use_style()

# %% tags=["parameters"]
predictions_from: str = "sweep"  # sweep (score the models) or simulate (a generative story, no model)
models: list = []  # zoo names, role:<role>, model folders or hub ids; empty: the evaluated organisms
items_source: str = "synth"  # synth, a VLMEvalKit .tsv, an item-table .parquet or hf:<dataset>[:<split>]
n_per_family: int = 10  # synthetic items per task family
image_size: int = 64  # rendered image side in pixels (the organisms see 64 x 64)
max_items: int = 0  # cap on items read from a file or dataset (0 means no cap)
perturbations: list = []  # corruptions (empty: the ImageNet-C part of corrupt.default_sweep())
levels: list = [1, 2, 3, 4, 5]  # severities (trajectories need all of them)
method: str = "default"  # scoring method: default (each organism's own), letter or loglik
seed: int = 0  # seed of the item table, the corruptions and the bootstrap
torch_threads: int = 1  # torch threads while scoring (1 on shared machines)
n_boot: int = 1000  # bootstrap resamples of the questions for Table II intervals (0: none)
ci: float = 0.95  # bootstrap interval coverage
boundary_tol: float = 1e-6  # |dS| or |dC| at or below this puts a pair on the regime boundary (Table IV)
mixed_tol: float = 0.0  # a cell is "mixed" when R_c < -mixed_tol and R_w > mixed_tol (Table II)
sim_models: int = 4  # simulate only: number of simulated models
sim_damage: float = 1.0  # simulate only: strength of the corruption effect (0: no vision, the claims' null)
sim_items: int = 300  # simulate only: number of simulated questions
variant: str = ""  # a parameter file of params/<this notebook>/ applied over these defaults ("lesson", ...)

# %%
UNCHANGED = params.use_variant(NB_ID, globals())  # variant "lesson": the lesson in one step
P = ras.Params.resolve(globals())  # every parameter checked; the body reads P.<name>
FAMILY = {p: corrupt.info(p).family for p in P.perturbations}
OUT = paths.results_dir(NB_ID)
COLORS = figures.model_colors(P.models)
repro.seed_everything(P.seed)
print(f"predictions from {P.predictions_from}; models {P.models}\nperturbations {P.perturbations} at levels "
      f"{P.levels}")

# %% [markdown]
# ## The predictions table
#
# With `predictions_from="sweep"` the models score the items clean and under each corruption and severity
# through `vlmrobust.sweep.predictions`, the entry point every notebook shares: shards another notebook
# already computed (notebook 03 with the same items, models and conditions) are read from the shared cache.
# With `predictions_from="simulate"` a small generative story stands in for the models (for teaching the
# metrics without a model; its numbers say nothing about VLMs).

# %%
if P.predictions_from == "sweep":
    items = sweep.item_source(P.items_source, n_per_family=P.n_per_family, seed=P.seed, image_size=P.image_size,
                              max_items=P.max_items)
    result = sweep.predictions(P.models, items, {p: P.levels for p in P.perturbations},
                               methods=None if P.method == "default" else [P.method], seed=P.seed,
                               torch_threads=P.torch_threads)
    pred = result.table
    print(result.summary())
else:
    pred = ras.simulate_predictions(P.sim_items, models=P.models, perturbations=P.perturbations, levels=P.levels,
                                    damage=P.sim_damage, rng=repro.rng(NB_ID, "simulate", P.seed))
pred = pred[pred["perturbation"].isin([schema.CLEAN, *P.perturbations]) & pred["level"].isin([0, *P.levels])]
print(f"{len(pred):,} prediction rows; methods: {sorted(pred['method'].unique())}")

# %% [markdown]
# ## Prediction-structure components (§V)
#
# For a question with $K$ options, the clean distribution $p^{(o)}$ and the corrupted one $p^{(d,\ell)}$ are
# compared through two components. The **normalised entropy** uses the question's own $K$:
#
# $$\mathcal S(p) = \frac{-\sum_{k=1}^{K} p_k \log p_k}{\log K}, \qquad
#   \Delta\mathcal S = \mathcal S(p^{(d,\ell)}) - \mathcal S(p^{(o)}) \qquad (7, 8)$$
#
# and the **confidence–correctness residual** compares the top-1 confidence with top-1 correctness:
#
# $$\mathcal C(p, y) = \bigl|\mathbf 1\{\arg\max_k p_k = y\} - \max_k p_k\bigr|, \qquad
#   \Delta\mathcal C = \mathcal C(p^{(d,\ell)}, y) - \mathcal C(p^{(o)}, y). \qquad (9, 10)$$
#
# RAS is the negative alignment shift with two penalties, for **overconfidence** (alignment worse while the
# distribution sharpens) and **hesitation** (alignment better while it flattens):
#
# $$\mathrm{RAS} = -\Delta\mathcal C - [\Delta\mathcal C]_+[-\Delta\mathcal S]_+
#   - [\Delta\mathcal S]_+[-\Delta\mathcal C]_+
#   \in [-2, 1]. \qquad (11)$$
#
# Choices the paper leaves open, as implemented in `vlmrobust.analysis.ras`: the arg-max breaks ties towards the
# lowest option index; probabilities are renormalised after a check that they sum to 1; the top-1 answer is
# recomputed from the distribution; RAS is computed per pair first, and every table is a mean of per-pair values.

# %%
pairs = ras.pairs(pred)
print(f"{len(pairs):,} clean–corrupted pairs; K in {sorted(int(k) for k in pairs['K'].unique())}")
display(pairs[["model", "item_id", "perturbation", "level", "K", "pred_clean", "pred", "answer_idx",
               "S_clean", "S", "dS", "dC", "RAS", "state"]].head(8).round(3))

# %% [markdown]
# ### Fig. 4 — the four sign regimes, drawn from the data
#
# Each panel shows one pair's clean and corrupted option distributions (ground truth marked ✓). For each
# regime the pair shown is the one deepest inside it (the largest $\min(|\Delta\mathcal S|, |\Delta\mathcal C|)$)
# among pairs whose correctness states match the regime's usual reading: still correct for weakened support,
# wrong after corruption for overconfident degradation, corrected for hesitant support, correct after corruption
# for supported improvement (any state when none matches). Eq. 9 alone does not look at the answer path: a
# correct but unsure answer that turns into a moderately confident wrong one also *improves* alignment.
# *Weakened support* (ΔC > 0, ΔS > 0), *overconfident degradation* (ΔC > 0, ΔS < 0), *hesitant support*
# (ΔC < 0, ΔS > 0), *supported improvement* (ΔC < 0, ΔS < 0).

# %%
examples = ras.regime_examples(pairs, P.boundary_tol)
fig = ras.figures.regime_distributions(pairs, examples, pred["probs"])
figures.save(fig, NB_ID, "fig4-regime-examples")

# %%
_ex = pairs.iloc[[i for i in examples.values() if i is not None]].assign(
    regime=[ras.REGIME_NAMES[k] for k, i in examples.items() if i is not None])
if _ex.empty:  # e.g. blind twins: every pair sits on the boundary (ΔS = ΔC = 0 within boundary_tol)
    print(f"0 of the 4 regimes have a pair in this run: all {len(pairs):,} pairs lie on the boundary.")
else:
    print(f"{len(_ex)} of the 4 regimes have a pair in this run; among the pairs shown, RAS is lowest for "
          f"{_ex.loc[_ex.RAS.idxmin(), 'regime']} ({_ex.RAS.min():+.2f}, {_ex.loc[_ex.RAS.idxmin(), 'perturbation']})"
          f" and highest for {_ex.loc[_ex.RAS.idxmax(), 'regime']} ({_ex.RAS.max():+.2f}).")

# %% [markdown]
# ## Table II — the model-level diagnosis
#
# Capability ($\mathrm{Acc}^{(o)}$), response robustness ($\Delta\mathrm{Acc}$, top-1 consistency, relative
# robustness $\mathrm{Acc}^{(d,\ell)}/\mathrm{Acc}^{(o)}$) and structural robustness (mean RAS; $R_c$, $R_w$:
# mean RAS over clean-correct and clean-wrong pairs). **Mixed** is the share of corruption × severity cells with
# $R_c < 0$ and $R_w > 0$. The paper gives no intervals; here each value carries a percentile bootstrap
# interval over questions (the same resamples for every model).

# %%
t2 = ras.table_ii(pairs, n_boot=P.n_boot, ci=P.ci, rng=repro.rng(NB_ID, "bootstrap", P.seed), mixed_tol=P.mixed_tol)
STATS = ["acc_clean", "delta_acc", "consistency", "rel_rob", "RAS", "R_c", "R_w", "mixed_pct"]
display(ras.with_ci(t2.sort_values("acc_clean"), STATS))

# %% [markdown]
# ## Table III — the four correctness states (Eq. 12)
#
# $\mathcal Q_{cc}, \mathcal Q_{cw}, \mathcal Q_{wc}, \mathcal Q_{ww}$: the first letter is clean correctness,
# the second corrupted correctness. *Share* is over all pairs; *conditional rate* is within the clean-side
# source (the $\alpha_{ab}$ of Eq. 14). Pooled over models, as in the paper, then per model.

# %%
t3 = ras.table_iii(pairs)
display(t3.round(4))
t3_models = ras.table_iii(pairs, unit="model")
display(t3_models.pivot(index="model", columns="state", values="RAS").round(3).rename_axis(columns="mean RAS"))

# %% [markdown]
# ### Fig. 5 / 11 — the (ΔS, ΔC) plane per state
#
# Grey contours: the pooled density of all pairs in the state. Coloured ellipses: each model's core (the
# 50 % ellipse of a Gaussian with the model's mean and covariance). Boxes: mean RAS of the state. The paper's
# Fig. 11 shows the two transition states (wc, cw) per model group; here all four states and all models.

# %%
fig = ras.figures.state_component_plane(pairs, COLORS)
figures.save(fig, NB_ID, "fig5-state-component-plane")

# %%
_st = pairs.groupby("state", observed=True)[["RAS", "dS", "dC"]].mean()
_w = _st.RAS.idxmin()
print(f"Mean RAS is lowest in {_w} ({ras.figures.STATE_NAMES[_w]}, {_st.RAS.min():+.3f}) and highest in "
      f"{_st.RAS.idxmax()} ({_st.RAS.max():+.3f}); the {_w} cloud lies {'above' if _st.dC[_w] > 0 else 'below'} "
      f"ΔC = 0 (mean ΔC {_st.dC[_w]:+.2f}) and {'right' if _st.dS[_w] > 0 else 'left'} of ΔS = 0 (mean ΔS "
      f"{_st.dS[_w]:+.2f}).")

# %% [markdown]
# ## Table IV — sign regimes of (ΔC, ΔS)
#
# Pairs are grouped by the signs of the two components. A pair is on the **boundary** when
# $|\Delta\mathcal C| \le \tau$ or $|\Delta\mathcal S| \le \tau$; the paper does not state its $\tau$, here
# `boundary_tol` (default $10^{-6}$, about the rounding of float32 probabilities). On the boundary no penalty
# applies and RAS $= -\Delta\mathcal C$.

# %%
t4 = ras.table_iv(pairs, tol=P.boundary_tol)
display(t4.round(4))

# %% [markdown]
# ## Source and state attribution per condition (Eqs. 13–16)
#
# For each model × corruption × severity cell, state means $\overline M_{ab}$ (Eq. 13), weights
# $\alpha_{ab} = |\mathcal Q_{ab}|/|\mathcal Q_a|$ and $\pi_a = |\mathcal Q_a|/|\mathcal Q|$ (Eq. 14), source
# effects $\overline M_a = \sum_b \alpha_{ab}\overline M_{ab}$ (Eq. 15; $R_c$, $R_w$ for RAS) and the aggregate
# $\overline M = \sum_a \pi_a \overline M_a$ (Eq. 16), which is the plain mean over the cell's pairs; the last
# line checks that identity on the data.

# %%
cells = ras.state_effects(pairs)
cells["family"] = cells["perturbation"].astype(str).map(FAMILY)
plain = pairs.groupby(["model", "method", "perturbation", "level"], observed=True)["RAS"].mean().to_numpy()
print(f"{len(cells)} cells; max |Eq. 16 aggregate − plain mean| = {np.abs(cells['RAS_all'] - plain).max():.2e}")
display(cells[["model", "perturbation", "level", "n", "pi_c", "alpha_cw", "alpha_wc", "R_c", "R_w",
               "RAS_all"]].head(10).round(3))

# %% [markdown]
# ### Fig. 7 — severity × family heatmaps of $R_c$ and $R_w$
#
# Each matrix cell is the mean over models and the family's corruptions; the insets below show, per severity,
# the median and interquartile range across model × corruption cells. The paper finds $R_c$ growing more
# negative with severity while $R_w$ becomes more positive but stays smaller.

# %%
fig = ras.figures.severity_family_heatmaps(cells, list(dict.fromkeys(FAMILY.values())))
figures.save(fig, NB_ID, "fig7-severity-family-heatmaps")

# %%
_med = cells.groupby("level")[["R_c", "R_w"]].median()
_lo, _hi = _med.index.min(), _med.index.max()
_fam_c = cells[cells.level == _hi].groupby("family")["R_c"].mean()
print(f"From s{_lo} to s{_hi} the median R_c {'falls' if _med.R_c[_hi] < _med.R_c[_lo] else 'rises'} from "
      f"{_med.R_c[_lo]:+.3f} to {_med.R_c[_hi]:+.3f} (most negative family at s{_hi}: {_fam_c.idxmin()}, "
      f"{_fam_c.min():+.3f}), while the median R_w {'rises' if _med.R_w[_hi] > _med.R_w[_lo] else 'falls'} from "
      f"{_med.R_w[_lo]:+.3f} to {_med.R_w[_hi]:+.3f}; the largest |median R_w| is "
      f"{'below' if _med.R_w.abs().max() < _med.R_c.abs().max() else 'above'} the largest |median R_c| "
      f"({_med.R_w.abs().max():.3f} vs {_med.R_c.abs().max():.3f}).")

# %% [markdown]
# ## Severity trajectories (§VII-D)
#
# Each model × question × corruption followed over the severities is one trajectory. With $c_0$ the clean
# correctness, $c_1..c_L$ the corrupted correctness and $f$ the first level whose correctness differs from
# $c_0$: **always correct / always wrong** when it never differs; **persistent loss / persistent correction**
# when every level from $f$ on differs (the change lasts through the last severity); **transient loss /
# transient correction** otherwise. Class-conditioned RAS is the class mean of each trajectory's mean RAS; the
# trajectory medians of ΔS and ΔC give each class its component signature.

# %%
traj = ras.trajectories(pairs, P.levels)
tsum = ras.trajectory_summary(traj)
print(f"{len(traj):,} complete trajectories ({traj.attrs['n_incomplete']} incomplete left out)")
display(tsum.pivot(index="model", columns="klass", values="share").round(3).rename_axis(columns="share"))
display(tsum.pivot(index="model", columns="klass", values="RAS").round(3).rename_axis(columns="class RAS"))

# %% [markdown]
# ### Fig. 6 — trajectory composition with class-conditioned RAS
#
# One bar per model (ordered by mean trajectory RAS, best at the top), split into the six classes by share;
# numbers in the segments are the class RAS. The table under the figure gives each class's mean trajectory
# medians (ΔS̃, ΔC̃), which the paper marks with dashed outlines.

# %%
fig = ras.figures.trajectory_composition(tsum)
figures.save(fig, NB_ID, "fig6-trajectory-composition")

# %%
_u = tsum.groupby("model", observed=True)["unit_RAS"].first()
_cls = tsum.groupby("klass", observed=True)["share"].mean()
_cras = tsum.groupby("klass", observed=True)["RAS"].mean()
print(f"Mean trajectory RAS is highest for {_u.idxmax()} ({_u.max():+.3f}) and lowest for {_u.idxmin()} "
      f"({_u.min():+.3f}); the largest class on average is {_cls.idxmax()} ({_cls.max():.0%} of trajectories), and "
      f"{_cras.idxmin()} has the most negative class RAS ({_cras.min():+.2f}, mean over models).")

# %%
display(tsum.pivot(index="model", columns="klass", values="dS_med").round(3).rename_axis(columns="mean ΔS̃"))
display(tsum.pivot(index="model", columns="klass", values="dC_med").round(3).rename_axis(columns="mean ΔC̃"))

# %% [markdown]
# ### Fig. 12 — trajectory signatures
#
# For the four classes with an answer change, each model's mean trajectory-median (ΔS̃, ΔC̃); marker size is
# the class's share of the model's trajectories and colour its class RAS. Upper-left (ΔS̃ < 0, ΔC̃ > 0) is
# overconfident damage; lower-right (ΔS̃ > 0, ΔC̃ < 0) is hesitant correction.

# %%
fig = ras.figures.trajectory_signatures(tsum, COLORS)
figures.save(fig, NB_ID, "fig12-trajectory-signatures")

# %%
_sig = tsum[tsum.klass.isin(ras.figures.CHANGE_CLASSES) & (tsum.n > 0)]
_up = _sig.assign(up=_sig.dC_med > 0).groupby("klass", observed=True)["up"].agg(["sum", "size"])
print("; ".join(f"{k}: {int(r['sum'])} of {int(r['size'])} models above ΔC̃ = 0" for k, r in _up.iterrows()
                if r["size"]) + ".")

# %% [markdown]
# ## Table VI — rank mismatch
#
# Each response metric's rank against the RAS rank (1 = best; $\Delta r = r_{\mathrm{RAS}} - r_m$, positive when
# the response metric ranks the model higher than RAS does). Absolute robustness is corrupted accuracy.

# %%
t6 = ras.table_vi(t2)
display(t6.round(3))

# %% [markdown]
# ## The paper's four observations, decided on these models
#
# Each observation becomes a test with an interval and a null (`vlmrobust.analysis.ras.claims_table`; the test
# of each row is in the table). The null of every row is **a model that cannot see**: it scores a question the
# same way whatever the image, so its clean and corrupted scorings are exchangeable. That null does *not* give
# RAS = 0: the penalties of Eq. 11 are never positive, and splitting pairs by their clean answer moves scoring
# noise into $R_c < 0$ and $R_w > 0$ (regression to the mean). So each test uses a statistic centred at 0 under
# the null (ΔC of still-correct pairs, $R_c$ against $R_c$ with clean and corrupted swapped, slopes over
# severity, differences between models), with intervals over questions that resample every pair of a question
# together. Each rule says "reproduced" in at most 5 % of simulated no-vision data sets at this notebook's
# default size (`python -m vlmrobust.analysis.rules --only 04`). A row that is not reproduced says the organisms
# (or the simulation) do not show the pattern at this size, not that the paper is wrong; blind twins
# (`params/04_ras_attribution/blind.yaml`) reproduce none.

# %%
claims = ras.claims_table(pairs, P.levels, n_boot=P.n_boot, ci=P.ci, seed=P.seed)
with pd.option_context("display.max_colwidth", None):
    display(claims)

# %% [markdown]
# ## Result tables
#
# Written to `results/04_ras_attribution/`: the pair table and trajectories (parquet), Tables II, III, IV, VI,
# the per-cell attribution, the trajectory summary, the claims table (`claims.csv`), and the environment
# snapshot (`environment.json`).

# %%
pairs.drop(columns=["row", "row_clean"]).to_parquet(OUT / "pairs.parquet", index=False)
traj.to_parquet(OUT / "trajectories.parquet", index=False)
for name, df in {"table2_models": t2, "table3_states": t3, "table3_states_by_model": t3_models,
                 "table4_regimes": t4, "table6_rank_mismatch": t6, "cells_eq13_16": cells,
                 "trajectory_summary": tsum, "claims": claims}.items():
    df.to_csv(OUT / f"{name}.csv", index=False, float_format="%.6g")
repro.save_env_snapshot(OUT)
print(sorted(p.name for p in OUT.iterdir()))

# %% [markdown]
# ## Exercises
#
# Each exercise names one change. Write down your prediction first, then make the change (in the parameters cell, or
# with `-p NAME VALUE` under papermill), run the notebook again and read the check cell under the exercise: it
# computes its verdict from the tables of your run (`vlmrobust.analysis.ras.exercises`), and until the change is
# made it says so and reports what the unchanged run shows.

# %% [markdown]
# ### Exercise 1: The observations without a VLM
#
# **Change:** set `predictions_from: str = "simulate"` (a short generative story in
# `vlmrobust.analysis.ras.simulate`: per-item difficulty, per-model ability, and a corruption effect that
# flattens the option logits and adds noise, growing with severity; no image, no model).
#
# **Predict first:** which of the paper's four observations will a story with no image in it reproduce? Then set
# `sim_damage: float = 0.0` as well (the corruption does nothing: a model that cannot see, the null every rule is
# calibrated on): what is left?
#
# **Look at:** the claims table. With the corruption effect, the check passes when at least one observation is
# reproduced: what a story of generic damage reproduces says that corruption changes the predictions, not how a
# model sees. With `sim_damage: 0` it passes when none is.

# %%
ras.exercise_04_1(claims, P.models, P.sim_damage)

# %% [markdown]
# ### Exercise 2: Break Observation 1 on purpose
#
# **Change:** set `models: list = ["tiny-letters"]`.
#
# **Predict first:** Observation 1 says answer stability hides structural instability, and that response metrics
# and RAS rank models differently (Table VI). What is left of the claim with a single model?
#
# **Look at:** Table VI and the ranking row of Observation 1. The check passes when every rank shift is 0 and that
# row is not reproduced (it has no subject): a ranking claim needs models that differ.

# %%
ras.exercise_04_2(claims, t6)

# %% [markdown]
# ### Exercise 3: One severity, no transients
#
# **Change:** set `levels: list = [5]`.
#
# **Predict first:** a *transient* loss changes the answer at some severity and changes it back at a later one.
# With a single corrupted severity, which of the six trajectory classes can still occur?
#
# **Look at:** the trajectory shares and Fig. 6. The check passes when both transient classes are empty and
# the answer changes that remain are all persistent.

# %%
ras.exercise_04_3(tsum, P.levels)
