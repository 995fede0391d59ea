# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3 (vlmrobust)
#     language: python
#     name: vlmrobust
# ---

# %% [markdown]
# # 07 · Escalation and traversal: RCI, T-RCI, fragility curves and the failure taxonomy
#
# How fast does a model's answering break as a corruption escalates, and as the image is removed from one
# side? This notebook scores the model organisms on the BRUCE ladders and directional traversals, condenses
# the damage into the Robustness Corruption Index (RCI) and its traversal version (T-RCI), and asks the
# synthetic world's exact geometry which failures removed the evidence and which misread it.
#
# * **Reproduces:** seed 001 (BRUCE), §II-D–II-H (RCI, T-RCI, the weighting ablation, the failure taxonomy),
#   Table I (and the bound its RCI column obeys), Figs. 3, 4/8, 5, 6 and 7, and the claims O1, O4, O6, O8, O9,
#   S1, S3, §V and §VI, each a test against a stated null.
# * **You will learn:** what each of RCI's and T-RCI's terms measures and where the paper's definitions
#   leave cases open; why the fill of a traversal matters as much as what it removes; that one T-RCI term is
#   the same constant for every model (so removing it cannot change the models' ranking, though it changes
#   the states'); which RCI reproduces the paper's Table I; and which failures the geometry explains.

# %%
import json

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import torch
from IPython.display import display

from vlmrobust import data, figures, params, paths, repro, sweep
from vlmrobust.analysis import escalation
from vlmrobust.corrupt import escalation as esc
from vlmrobust.corrupt import evidence

NB_ID = "07_escalation_traversal"
figures.use_style()

# %% tags=["parameters"]
models: list = []  # zoo names, role:<role>, model folders or hub ids; empty: the evaluated organisms
items_source: str = "synth"  # synth, a VLMEvalKit .tsv, an item-table .parquet or hf:<dataset>[:<split>]
n_per_family: int = 20  # synthetic items per task family (180 questions: the claim rules' size)
image_size: int = 64  # rendered image side in pixels (the organisms see 64 x 64)
max_items: int = 0  # cap on items read from a file or dataset (0 means no cap)
seed: int = 0  # seed of the items and the corruptions
torch_threads: int = 1  # torch threads while scoring (1 on shared machines)
batch_size: int = 8  # items per forward pass
executor: str = "dask"  # where shards run: local (this process) or dask (a LocalCluster, or dask_scheduler)
dask_workers: int = 2  # worker processes of the LocalCluster when executor is dask
dask_scheduler: str = ""  # address of a running Dask scheduler to use instead of a LocalCluster ("" for none)
groups: dict = {"attributes": ["colour", "shape", "verify", "exist"], "relations": ["count", "spatial", "size"], "reading": ["text", "chart"]}  # dataset groups of tasks (the paper's datasets); empty: one group per task  # noqa: E501
ladders: list = ["bruce_blur", "bruce_contrast", "bruce_rotate", "bruce_center_crop"]  # escalation ladders of RCI
levels: list = [1, 2, 3, 4]  # ladder levels, and the traversal states s_1..s_4 (shares 0.2 0.4 0.6 0.8)
contrast_reading: str = "kept"  # contrast factor c: kept (0.9 .. 0.3, as PIL, torchvision) or removed (0.7 .. 0.1 kept)
crop_reading: str = "area"  # crop ratio p: share of the area removed (area) or of each side (side)
fill: str = "mean"  # traversal fill: black (the paper's figures), mean (dataset mean colour) or crop (crop and resize)
mean_fill: str = "items"  # colour of the mean fill: items (the items' own mean) or synthetic (166, 169, 171)
compare_fills: list = ["black", "mean", "crop"]  # fills compared on the sky-only control and at compare_levels
control_levels: list = [2, 4]  # sky-only control levels (share of the sky rows removed: 0.25 0.5 0.75 1.0)
compare_levels: list = [1]  # traversal states also scored with the other compared fills
rci_weights: list = [0.25, 0.25, 0.25, 0.25]  # lambda of D_acc, D_cal, D_ent, D_fail
trci_weights: list = [0.2, 0.2, 0.2, 0.2, 0.2]  # alpha of D_acc, D_ent, D_fail, D_spatial, D_prog
fail_reading: str = "joint"  # D_fail: joint (clean-correct items turned wrong), conditional or table-i (fits Table I)
failure_weights: dict = {}  # w_f per taxonomy class (OCR, spatial, symbolic, semantic, other); unnamed classes weigh 1
epsilon: float = 1e-6  # stabilising constant of D_prog
stable_min: float = 0.8  # a curve keeping at least this share of its clean accuracy is stable
severe_below: float = 0.5  # a curve keeping less than this share is severe
monotone_tol: float = 0.02  # a rise above this between consecutive levels makes a curve non-monotone
warn_threshold: float = 0.25  # D_conf that counts as a warning while the answer is still right
acc_tol: float = 0.05  # accuracies this close count as similar (observation 6)
index_gap: float = 0.05  # a difference of RCI or T-RCI this large counts as different (observation 6)
direction_gap: float = 0.05  # a spread of T-RCI over directions this large counts as direction dependence
n_boot: int = 100  # question resamples for the intervals (and permutations for the dataset null)
ci: float = 0.95  # coverage of the bootstrap intervals
variant: str = ""  # a parameter file of params/<this notebook>/ applied over these defaults ("lesson", ...)

# %%
UNCHANGED = params.use_variant(NB_ID, globals())  # variant "lesson": the lesson in one step
P = escalation.Params.resolve(globals())  # every parameter checked; the body reads P.<name>
TRAV = {esc.DIRECTION_LABELS[d]: name for d, name in esc.traversal_names(fill).items()}  # TD -> perturbation
SHARE = dict(zip(levels, (esc.TRAVERSAL_SHARES[lv - 1] for lv in levels), strict=True))
UNIT = ("model", "group")
SWEEP = dict(seed=seed, batch_size=batch_size, torch_threads=torch_threads)
COLORS = figures.model_colors(P.models)
PAPER = escalation.paper_models(P.models)  # the paper's claims are tried on these (the zoo's controls left out)
repro.seed_everything(seed)
torch.set_num_threads(torch_threads)
OUT = paths.results_dir(NB_ID)
print(f"models {P.models}\nladders {ladders} at levels {levels}; traversals with the {fill!r} fill: {TRAV}")

# %% [markdown]
# ## Items, groups and conditions
#
# The paper evaluates three datasets (ScienceQA-Chemistry, MMJEE-Chemistry-MCQ, MathVista-MCQ); here the
# synthetic task families are pooled into **groups** that play their role (parameter `groups`): questions about
# one object's attributes or existence, questions about relations between several objects (counting, left/right
# and near/far, sizes), and reading (a sign's glyph, a bar chart). The yes/no families sit beside four-option
# ones, so K varies inside a group. Every model scores every item clean, under the four ladders (seed 001 §III:
# blur σ ∈ {1,2,3,4} px, contrast factors c ∈ {0.9,…,0.3}, rotation θ ∈ {5°,…,20°}, centre crop ratios
# p ∈ {0.2,…,0.8}) and under the four traversals at the shares $s_k \in \{0.2, 0.4, 0.6, 0.8\}$; then the
# evidence-free control and the other fills at a few states (next section).
#
# **The ladders as written.** A *contrast factor* is the share of contrast **kept** (Pillow's
# `ImageEnhance.Contrast`, torchvision's `adjust_contrast`): $x' = \mu + c\,(x - \mu)$ with $\mu$ the mean
# luma, so the ladder keeps 0.9, 0.7, 0.5, 0.3 (`contrast_reading = "removed"` keeps 0.7, 0.5, 0.3, 0.1).
# "Removed increasing fractions of image **content**" is a share of the **area**: the crop keeps the central
# $\sqrt{1-p}$ of each side, 80 % to 20 % of the area (`crop_reading = "side"` removes $p$ of each side, 36 %
# to 96 % of the area). The traversals' **mean fill** is the mean colour of these items' own images
# (`mean_fill`), printed below. Figure: one item at every rung.

# %%
items = sweep.item_source(P.items_source, n_per_family=P.n_per_family, seed=P.seed, image_size=P.image_size,
                          max_items=P.max_items)
unknown = sorted({t for ts in P.groups.values() for t in ts} - set(items["task"]))
if unknown:
    raise params.ParameterError(f"parameter 'groups' names task(s) {unknown} that the items do not have; "
                                f"tasks are {sorted(items['task'].unique())}")
TASK_GROUP = {t: g for g, ts in P.groups.items() for t in ts}
items["group"] = items["task"].map(lambda t: TASK_GROUP.get(t, t))
META = items["meta"].map(lambda m: json.loads(m) if isinstance(m, str) and m.strip() else {})
items["scene"] = META.map(lambda m: m.get("scene", ""))
HAS_DEPTH = bool(items["depth_ref"].notna().all() and (items["depth_ref"].astype(str) != "").all())
CONTROL = {esc.control_name(f): P.control_levels for f in P.compare_fills} if HAS_DEPTH and P.control_levels else {}
COMPARE = {esc.traversal_name(d, f): P.compare_levels for f in P.compare_fills if f != P.fill
           for d in esc.DIRECTIONS} if P.compare_levels else {}
CONDITIONS = {**{p: P.levels for p in P.ladders}, **{n: P.levels for n in TRAV.values()}, **CONTROL, **COMPARE}
print(f"{len(items)} items; groups: " + ", ".join(f"{g} {n}" for g, n in items.group.value_counts(sort=False).items()))
print(f"{len(CONDITIONS)} perturbations, {sum(map(len, CONDITIONS.values()))} corrupted conditions"
      + ("" if HAS_DEPTH else "; no depth: the sky-only control is skipped"))

FILL_RGB = escalation.items_mean_colour(items) if P.mean_fill == "items" else esc.SYNTH_MEAN_RGB
print(f"mean fill colour ({'the items own images' if P.mean_fill == 'items' else 'synthetic default'}): RGB {FILL_RGB}")
first_image = data.load_image(items.image_ref.iloc[0])
rungs = escalation.rung_images(first_image, P.ladders, P.levels, P.contrast_reading, P.crop_reading)
fig = escalation.figures.ladder_rungs(first_image, rungs, "the ladders' rungs")
figures.save(fig, NB_ID, "ladder-rungs")
plt.show()
print(escalation.figures.rungs_finding(first_image, rungs))
CLIENT = sweep.notebook_client(P.executor, P.dask_scheduler, P.dask_workers)  # one cluster for every sweep
SWEEP |= dict(executor=P.executor, client=CLIENT)
result = escalation.escalation_predictions(P.models, items, CONDITIONS, contrast=P.contrast_reading,
                                           crop=P.crop_reading, mean_rgb=FILL_RGB, methods=None, **SWEEP)
pred = result.table.merge(items[["item_id", "group", "scene"]], on="item_id", how="left")
print({k: v for k, v in result.summary().items() if k != "seconds"})
EV = evidence.evidence_table(items, {k: v for k, v in CONDITIONS.items() if k not in P.ladders
                                     or (k == "bruce_center_crop" and P.crop_reading == "area")})
EV["direction"] = EV["perturbation"].map(lambda n: esc.DIRECTION_LABELS.get(n.split("_")[1], "")
                                         if n.startswith("traverse_") else "")

# %% [markdown]
# ## The traversal fill, and a band that removes no evidence
#
# Seed 001 draws its traversals with a black band but never says what the removed region becomes. The fill is a
# parameter here (`fill`): **black** as in the paper's figures; the dataset's **mean** colour; or **crop**: cut
# the band off and resize the rest back to the full size. The default is the mean colour, the fill that removes
# the band's evidence while adding the least new cue: it brings no colour outside the images' range and no edge
# stronger than theirs, while black adds a large dark region the organisms never saw, and crop-and-resize adds no
# pixel but stretches what is left by $1/(1-s)$ along the traversal axis (the horizon moves, apparent sizes change).
#
# The **evidence-free control** (`sky_band_<fill>`) removes only rows that hold nothing but sky (exact depth:
# every pixel at infinite distance, no red-box pixel), at 25–100 % of those rows. In ground-plane scenes it
# removes no evidence at all, so whatever accuracy it costs is the cost of the fill itself. Below: one scene
# under each fill, then accuracy on the ground-plane scenes, clean, under the control and at the first
# traversal state of every fill (top-down 0.2 removes only sky too).

# %%
ex = items[(items.scene == "ground")].head(1) if (items.scene == "ground").any() else items.head(1)
if len(ex):
    it = ex.iloc[0]
    img = data.load_image(it.image_ref)
    dep = data.load_depth(it.depth_ref) if HAS_DEPTH else None
    fig = escalation.figures.fill_examples(img, dep, [f for f in esc.FILLS if f in P.compare_fills or f == P.fill],
                                           f"traversal fills on one scene ({it.task}: {it.question})", FILL_RGB)
    figures.save(fig, NB_ID, "traversal-fills")
    plt.show()
    print(escalation.figures.fills_finding(img, [f for f in esc.FILLS if f in P.compare_fills or f == P.fill],
                                                    FILL_RGB))

ground = pred[pred.scene == "ground"]
fill_table = escalation.fill_comparison(ground, P.compare_fills, P.models, control=bool(CONTROL))
if len(fill_table):
    display(fill_table.set_index(["fill", "condition"]).round(3))
    if fill_table.condition.str.startswith("sky band").any():
        fig = escalation.figures.sky_control_cost(fill_table, P.models, COLORS)
        figures.save(fig, NB_ID, "sky-control-fill-cost")
        plt.show()
        print(escalation.figures.sky_cost_finding(fill_table, P.models))

# %% [markdown]
# ## RCI: four signals of degradation under one condition (§II-D1, §II-E)
#
# For model $m$, dataset group $d$ and perturbation condition $p$ (a ladder at one level):
#
# $$\mathcal D_{acc} = 1 - \frac{A_{m,d,p}}{A_{m,d,\mathrm{clean}}}, \quad
#   \mathcal D_{cal} = |\mathrm{ECE}_{m,d,p} - \mathrm{ECE}_{m,d,\mathrm{clean}}|, \quad
#   \mathcal D_{ent} = 1 - \frac{H_{m,d,p}}{H_{m,d,\mathrm{clean}}}, \quad
#   \mathcal D_{fail} = \sum_{f} w_f\, \frac{\#(\text{clean-correct} \wedge \text{perturbed-wrong} \wedge f)}
#   {\#\,\text{clean-correct}},$$
#
# $$\mathrm{RCI} = \lambda_1 \mathcal D_{acc} + \lambda_2 \mathcal D_{cal} + \lambda_3 \mathcal D_{ent}
#   + \lambda_4 \mathcal D_{fail}, \qquad \textstyle\sum_i \lambda_i = 1 .$$
#
# The choices made where the paper is open (all in `vlmrobust.analysis.escalation.indices`):
#
# * the terms are **not clipped** (the paper's Table I has corrupted accuracy above clean in six rows, so
#   $\mathcal D_{acc}$ can be negative, and so can $\mathcal D_{ent}$ when predictions spread out);
# * $H$ is the normalised entropy of the *predicted option index* over the group's items (no model probability
#   enters), divided by $\log K_{max}$ with $K_{max}$ the largest $K$ in the group (yes/no items beside four-option
#   items: the letters range over four values);
# * ECE uses 10 equal-width bins on the confidence $\max_k p_k$, as `vlmrobust.stats.calibration.ece`;
# * $\mathcal D_{fail}$ is read **jointly** (the share of clean-correct items that turn wrong, per failure class
#   $f$); the conditional reading $\sum_f w_f P(f \mid \text{flip})$ equals 1 whenever any flip exists with uniform
#   $w_f = 1$ (shown below), so it is only an option (`fail_reading`); a third option, **table-i**, is the reading
#   that reproduces the paper's Table I (its own section below);
# * clean quantities are computed on the same items; an **undefined term** ($A_{clean} = 0$: $\mathcal D_{acc}$ and
#   $\mathcal D_{fail}$; $H_{clean} = 0$: $\mathcal D_{ent}$) is left out like a missing calibration signal, and RCI is
#   the λ-weighted mean of the available terms.

# %%
fails_all = escalation.failures(pred)
classified = escalation.classify(fails_all, items, EV)
keys5 = ["model", "method", "item_id", "perturbation", "level"]
fail_class = classified[keys5 + ["class"]].rename(columns={"class": "fail_class"}).astype({"fail_class": str})
pred = pred.merge(fail_class, on=keys5, how="left")
fw = dict(fail_class="fail_class", fail_weights=P.failure_weights) if P.failure_weights else {}
cells = escalation.cell_stats(pred, UNIT, perturbations=[*P.ladders, *TRAV.values()], **fw)
rci = escalation.rci(cells, P.rci_weights, fail=P.fail_reading)
lad = rci[rci.perturbation.isin(P.ladders)]
display(lad.pivot_table(index=["model", "group"], columns="perturbation", values="RCI", observed=True)
        .round(3).rename_axis(columns="RCI (mean over the levels)"))
print(f"the terms of {P.models[0]}, group {lad.group.iloc[0]}:")
display(lad[(lad.model == P.models[0]) & (lad.group == lad.group.iloc[0])][
    ["perturbation", "level", "param", "A_clean", "A", "H_clean", "H", "ECE_clean", "ECE", "D_acc", "D_cal",
     "D_ent", "D_fail", "n_terms", "RCI"]].round(3))
print(escalation.rci_notes(cells, rci, P.rci_weights))

# %% [markdown]
# ## T-RCI: traversal robustness along each direction (§II-D2, §II-F)
#
# For direction $r$ and state $s_k$ (the share removed; $s_0$ = clean), with terms clipped at 0 as the paper
# writes them:
#
# $$\mathcal D_{acc}(r,s_k) = \max\Bigl(0, \tfrac{A_{r,0} - A_{r,s_k}}{A_{r,0}}\Bigr), \quad
#   \mathcal D_{ent}(r,s_k) = \max\Bigl(0, \tfrac{H_{r,0} - H_{r,s_k}}{H_{r,0}}\Bigr), \quad
#   \mathcal D_{spatial}(r,s_k) = s_k, \quad
#   \mathcal D_{prog}(r,s_k) = \max\Bigl(0, \tfrac{A_{r,s_{k-1}} - A_{r,s_k}}{A_{r,s_{k-1}} + \epsilon}\Bigr),$$
#
# $\mathcal D_{fail}$ as for RCI (correct at $s_0$, wrong at $s_k$), and
#
# $$\mathrm{TRCI}(r) = \sum_{k=1}^{K} \gamma_k \bigl[\alpha_1 \mathcal D_{acc} + \alpha_2 \mathcal D_{ent}
#   + \alpha_3 \mathcal D_{fail} + \alpha_4 \mathcal D_{spatial} + \alpha_5 \mathcal D_{prog}\bigr], \qquad
#   \mathrm{TRCI} = \sum_r \beta_r\, \mathrm{TRCI}(r).$$
#
# $\mathcal D_{prog}$ at $k = 1$ compares with the clean accuracy; $\epsilon$ is the parameter `epsilon`
# ($10^{-6}$; a zero previous accuracy gives 0). Weights are uniform ($\alpha_i = 1/5$, $\gamma_k = 1/K$,
# $\beta_r = 1/4$); the same available-terms rule as RCI applies. The worst direction $W_D$ is the one with the
# largest $\mathrm{TRCI}(r)$, $W_T$ its score.
#
# **$\mathcal D_{spatial}$ is model-independent.** It is the share removed, the same for every model, so with every
# term available it adds exactly $\alpha_4 \sum_k \gamma_k s_k$ to every T-RCI: $0.2 \times 0.5 = 0.1$ with
# uniform weights and $s_k = 0.2, \dots, 0.8$. The table below shows T-RCI with it, minus it, and with it
# removed from the weights.

# %%
states = escalation.trci_states(cells, TRAV, fail=P.fail_reading, eps=P.epsilon)
tres = escalation.trci(states, P.trci_weights)
display(tres.directions.pivot_table(index=["model", "group"], columns="direction", values="T_RCI",
                                    observed=True).round(3))
spatial_table = escalation.spatial_table(states, tres, P.trci_weights)
display(spatial_table.round(4))
print(f"D_spatial adds {spatial_table.offset.min():.4f}–{spatial_table.offset.max():.4f} to every T-RCI "
      "(alpha_4 Σ γ_k s_k); without it T-RCI is (T − offset)·5/4 wherever every term is available")

# %% [markdown]
# ## Table I — accuracy, corruption robustness and traversal robustness
#
# Per model and group: clean accuracy $A_{CL}$; $A_{CR}$, $\mathrm{RCI}_\mu$ and $\mathrm{RCI}_{max}$ over the
# 16 ladder conditions; $A_T$ over the 4 directions × 4 states; $T_\mu$ the combined T-RCI; $T_{max}$ the largest
# **per-state** term over direction × state (the paper's rows have $T_{max} > W_T$, which rules out reading it
# as the largest direction's T-RCI; under this reading $T_{max} \ge W_T \ge T_\mu$ holds by arithmetic, so it is
# not a check); the worst direction $W_D$ and its T-RCI $W_T$. Accuracies in %, as in the paper.

# %%
t1 = escalation.table_i(rci, tres, P.ladders)
t1_show = t1.assign(**{c: 100 * t1[c] for c in ("A_CL", "A_CR", "A_T")})  # accuracies in %
with pd.option_context("display.float_format", "{:.3f}".format):
    display(t1_show.sort_values(["group", "model"]).set_index(["group", "model"]))

# %% [markdown]
# ### The RCI that reproduces Table I
#
# Under the paper's definitions a model whose predictions never change has every term 0, so RCI = 0 in either
# literal reading of $\mathcal D_{fail}$. The paper's table says otherwise: both LLaVA-NeXT rows keep their
# accuracy ($A_{CL} = A_{CR}$) yet score 0.203 and 0.182. All 19 rows obey
# $\mathrm{RCI}_\mu \ge c\,(1 - A_{CR})$; the largest such $c$ is $c^\ast = \min_i \mathrm{RCI}_{\mu,i}/(1 - A_{CR,i})$
# and three rows lie on it (both LLaVA rows and Claude on MMJEE, clean accuracy 0). An RCI whose
# $\mathcal D_{fail}$ is proportional to the **perturbed error rate** reproduces it:
# $\mathcal D_{fail}^{\text{table-i}} = 4c \sum_f w_f\, \#(\text{perturbed-wrong} \wedge f)/n$, so that an unchanged
# model with four terms and uniform λ scores exactly $c\,(1-A_p)$. The paper's text says none of this, so the
# literal **joint** reading stays the default (`fail_reading`) and **table-i** is offered by name (the fit uses
# RCI's rows only, so T-RCI keeps the joint reading under it). Below: the fit over the paper's 19 rows with its
# residuals (the bound at $c = 0.3$, inside the range the table's rounding allows), and this run's units under both
# readings (residuals of their $\mathrm{RCI}_\mu$ from the same bound).

# %%
fit = escalation.bound_fit()
print(f"c* = {fit['c_star']:.4f} over {fit['n']} rows, [{fit['c_lo']:.4f}, {fit['c_hi']:.4f}] within rounding; "
      f"on the bound: rows {fit['on_bound']}; c = {escalation.TABLE_I_BOUND}")
display(escalation.bound_residuals(c=escalation.TABLE_I_BOUND).round(4))
run_fit = pd.concat([escalation.table_i(escalation.rci(cells, P.rci_weights, fail=f), tres, P.ladders).assign(reading=f)
                     for f in ("joint", "table-i")], ignore_index=True)
run_res = escalation.bound_residuals(run_fit, escalation.TABLE_I_BOUND, percent=False).assign(reading=run_fit.reading)
display(run_res.groupby("reading").residual.describe().round(4))
fig = escalation.figures.table_i_fit(escalation.PAPER_TABLE_I, escalation.TABLE_I_BOUND, run_fit)
figures.save(fig, NB_ID, "table1-rci-bound")
plt.show()
print(escalation.figures.table_i_finding(escalation.PAPER_TABLE_I, escalation.TABLE_I_BOUND, run_fit))

# %% [markdown]
# ### Fig. 3 — Pareto maps
#
# Left: mean corrupted accuracy against $\mathrm{RCI}_\mu$; right: mean traversal accuracy against $T_\mu$. Colours
# are models, markers groups; lower right is better. The **frontier** (black outline and line) holds the points
# that no other point beats on both axes (higher accuracy *and* lower index).

# %%
fig = escalation.figures.pareto_maps(t1, P.models, COLORS)
figures.save(fig, NB_ID, "fig3-pareto-maps")
plt.show()
print(escalation.figures.pareto_finding(t1))

# %% [markdown]
# ### Fig. 5 — accuracy against the share removed, per direction
#
# Each model's accuracy over all groups, clean (share 0) and at the four states, one panel per direction. The
# grey area (same 0-1 axis) is the ground truth of the synthetic items: the share whose evidence (the target
# object, the counted objects, the answer bar) the band has removed or cut (`vlmrobust.corrupt.evidence`).

# %%
cells_m = escalation.cell_stats(pred, ("model",), perturbations=list(TRAV.values()))
curves_m = escalation.fragility_curves(cells_m, list(TRAV.values()))
ev_share = escalation.evidence_lost_share(EV, list(TRAV.values()))  # items with synthetic geometry
fig = escalation.figures.accuracy_vs_share(curves_m, ev_share, TRAV, SHARE, P.models, COLORS)
figures.save(fig, NB_ID, "fig5-accuracy-vs-share-removed")
plt.show()
print(escalation.figures.accuracy_share_finding(curves_m, TRAV))

# %% [markdown]
# ### Fig. 6 — fragility curves and their regimes
#
# Every ladder and every traversal, each model's accuracy from clean to the last level. The paper groups the
# curves into three regimes by eye (§IV-C, S1); the rule here reads the **retention** $A_{last}/A_{clean}$:
# **stable** when it is at least `stable_min` (0.8), **severe** below `severe_below` (0.5), **progressive** in
# between. A curve is **non-monotone** (S3) when accuracy rises by more than `monotone_tol` from one level to the
# next (drawn dashed). The marker at the end of each curve gives its regime.

# %%
cells_all = escalation.cell_stats(pred, ("model",), perturbations=[*P.ladders, *TRAV.values()])
curves = escalation.fragility_curves(cells_all, [*P.ladders, *TRAV.values()])
regimes = escalation.curve_regimes(curves, stable_min=P.stable_min, severe_below=P.severe_below, tol=P.monotone_tol)
fig = escalation.figures.fragility_panels(curves, regimes, [*P.ladders, *TRAV.values()], P.levels, P.models, COLORS)
figures.save(fig, NB_ID, "fig6-fragility-curves")
plt.show()
print(escalation.figures.fragility_finding(regimes, list(TRAV.values())))
regimes["kind"] = np.where(regimes.perturbation.isin(TRAV.values()), "traversal", "ladder")
display(escalation.regime_counts(regimes))

# %% [markdown]
# ### Directional fragility heatmap
#
# $\mathrm{TRCI}(r)$ per model and direction, one panel per group and one for all items; the worst direction of
# each row is outlined.

# %%
dirs_all = escalation.trci(escalation.trci_states(cells_m, TRAV, fail=P.fail_reading, eps=P.epsilon),
                           P.trci_weights).directions.assign(group="all items")
heat = pd.concat([tres.directions, dirs_all], ignore_index=True)
fig = escalation.figures.directional_heatmap(heat, [*sorted(t1.group.unique()), "all items"], list(TRAV), P.models)
figures.save(fig, NB_ID, "directional-fragility-heatmap")
plt.show()
print(escalation.figures.directional_finding(heat))

# %% [markdown]
# ## Ground truth: which direction should hurt more
#
# In a ground-plane scene the sky is on top and the objects stand on the ground, so a band coming from the top
# first removes sky, and one coming from the bottom first removes the ground the objects stand on. The evidence
# record says how much of each item's evidence every state removed. If the models answer from that evidence,
# **bottom-up should hurt more than top-down**. The table splits traversal accuracy (all models, ground scenes) by
# the item's evidence state: accuracy with the evidence *intact* measures what the fill costs by itself, accuracy
# with it *removed* what is left once the evidence is gone (chance is 1/K). When the two directions' intact
# accuracies differ, the band's own cost depends on where it lies (a flat band over the blue sky is a larger
# change than over the grey-brown ground), and that cost can outweigh the evidence the band removes.

# %%
g_items = items.item_id[items.scene == "ground"]
if len(g_items):
    pg = pred[pred.item_id.isin(g_items)]
    cells_g = escalation.cell_stats(pg, ("model",), perturbations=list(TRAV.values()))
    states_g = escalation.trci_states(cells_g, TRAV, fail=P.fail_reading, eps=P.epsilon)
    ev_g = EV[EV.item_id.isin(g_items) & EV.perturbation.isin(TRAV.values())]
    gt_check = escalation.check_bottomup_hurts_more(pg[pg.model.isin(PAPER)], ev_g, TRAV, P.n_boot,
                                                    repro.rng("07.ground", P.seed), P.ci)
    display(states_g.pivot_table(index="model", columns=["direction", "level"], values="A", observed=True).round(2))
    by_ev = escalation.accuracy_by_evidence(pg[pg.perturbation.isin(TRAV.values())], ev_g)
    display(by_ev.round(3))
    display(ev_g.groupby(["direction", "level"]).target_removed.mean().unstack().round(3)
            .rename_axis(columns="mean share of the target's box removed, by level"))
    print(f"{gt_check.test}\n  -> {gt_check.measured}\n  -> {gt_check.verdict}")
    intact = by_ev["intact"].dropna() if "intact" in by_ev else by_ev.iloc[:0, 0]
    if {"TD", "BU"} <= set(intact.index):
        print(f"with the evidence intact, accuracy is {intact['TD']:.3f} under top-down and {intact['BU']:.3f} under "
              f"bottom-up (clean {pg[pg.perturbation == 'clean'].correct.mean():.3f}): what the {P.fill!r} band costs "
              "by itself differs by where it lies, and that difference is part of any comparison of directions")
else:
    gt_check = escalation.check_bottomup_hurts_more(pred.iloc[:0], EV.iloc[:0], TRAV, P.n_boot,
                                                    repro.rng("07.ground", P.seed), P.ci)
    print("no ground-plane scene among the items: the ground-truth check is skipped")

# %% [markdown]
# ## Failure taxonomy (§II-H, §VII): Figs. 4 and 8
#
# Every clean-correct item that a traversal turns wrong gets exactly one class and one subtype from a fixed table
# (`vlmrobust.analysis.escalation.taxonomy`): the **class** follows what the task family asks (a sign's glyph is OCR;
# charts, left/right/near/far and sizes are spatial; counting and verifying a conjunction are symbolic; naming a
# colour or a shape and judging existence are semantic; an unknown family or an abstention is other), the **subtype**
# follows the evidence record: evidence **removed** by the band (glyph removed, count changed, relation object
# removed, …), **cut**, or **intact and misread**. A changed count is split by whether the model answered the count of
# what remains. The paper's most frequent OCR subtype, *option label* (a crop that removes the printed answer
# letters), cannot occur here: the synthetic options are in the prompt, not in the image.

# %%
trav_fails = classified[classified.perturbation.isin(TRAV.values())]
cls_counts = escalation.taxonomy_counts(trav_fails, ("model",))
if len(cls_counts):
    fig = escalation.figures.failure_class_heatmap(cls_counts, P.models, len(trav_fails))
    figures.save(fig, NB_ID, "fig4-failure-taxonomy-heatmap")
    plt.show()
    print(escalation.figures.failure_class_finding(cls_counts))
    sub_counts = escalation.taxonomy_counts(trav_fails, (), level="subtype")
    fig = escalation.figures.failure_subtypes(sub_counts)
    figures.save(fig, NB_ID, "fig8-failure-subtypes")
    plt.show()
    print(escalation.figures.failure_subtypes_finding(sub_counts))
    known = trav_fails[trav_fails.evidence != "n/a"]
    if len(known):
        print(f"{known.evidence.isin(['removed', 'partial']).mean():.0%} of the {len(known):,} traversal-induced "
              "failures with synthetic geometry had their evidence removed or cut; the rest misread it")
lad_fails = classified[classified.perturbation.isin(P.ladders)]
display(escalation.taxonomy_counts(lad_fails, ("perturbation",)).pivot_table(
    index="perturbation", columns="class", values="n", observed=False).fillna(0).astype(int)
    .rename_axis(columns="ladder failures by class"))

# %% [markdown]
# ## Weighting ablation (§II-F)
#
# The paper reports that accuracy-heavy, entropy-heavy, failure-heavy and equal weights rank models and datasets
# alike (pairwise correlations ≈ 0.95–0.99), and that removing $\mathcal D_{spatial}$ "still produced nearly
# identical robustness trends (ρ ∼ 0.95)". A heavy scheme puts 0.5 on its term and shares the rest equally;
# *no-spatial* sets $\alpha_4 = 0$. The units ranked are the model × group rows of Table I.
#
# At the **model level** removing $\mathcal D_{spatial}$ is an affine map: $T_{equal} = \tfrac45 T_{no\text{-}spatial}
# + \alpha_4 \sum_k \gamma_k s_k$, with the same offset for every model on the same states, so the units' Spearman
# correlation is exactly 1 wherever every term is available — an identity, reported as one and never counted.
# **Per state** it is not: $\mathcal D_{spatial} = s_k$ changes along the trajectory, so the per-state terms
# $\tau_{r,k}$ with and without it, pooled over unit × direction × state, rank differently; that correlation,
# with its bootstrap interval over the questions, is the one compared with the paper's ρ ≈ 0.95.

# %%
abl = escalation.ablation_scores(cells, states, P.ladders, fail=P.fail_reading)
rho_rci = escalation.rank_correlations(abl, "RCI")
rho_trci = escalation.rank_correlations(abl, "T-RCI")
resid = escalation.affine_residual(states)
display(rho_rci.round(3).rename_axis("RCI_mu"))
display(rho_trci.round(3).rename_axis("T_mu"))
max_resid = float(np.nanmax(np.abs(resid.residual))) if len(resid) else float("nan")
print(f"model level: Spearman rho (equal, no-spatial) = {rho_trci.loc['equal', 'no-spatial']:.6f} (an identity); "
      f"largest residual of T_equal − (4/5 T_no-spatial + offset): {max_resid:.1e}")
RUN = dict(unit=UNIT, rci_weights=P.rci_weights, trci_weights=P.trci_weights, fail=P.fail_reading, eps=P.epsilon,
           stable_min=P.stable_min, severe_below=P.severe_below, tol=P.monotone_tol, **fw)
pred_paper = pred[pred.model.isin(PAPER)]  # the claims' subjects
point = escalation.run_tables(pred_paper, P.ladders, TRAV, **RUN)
boot = escalation.item_bootstrap(pred_paper, lambda p: escalation.run_tables(p, P.ladders, TRAV, **RUN), P.n_boot,
                                 P.seed)
rho_state = escalation.interval(escalation.rho_per_state, point, boot, P.ci)
print(f"per state: Spearman rho = {rho_state[0]:.4f}, percentile interval of the resamples [{rho_state[1]:.4f}, "
      f"{rho_state[2]:.4f}] ({P.ci:.0%}), n = {len(point.states)} (paper ≈ 0.95); the claims table corrects it for "
      "the question noise both terms carry")
fig = escalation.figures.rank_correlation_heatmaps(rho_rci, rho_trci)
figures.save(fig, NB_ID, "weighting-ablation-rank-correlations")
plt.show()
print(escalation.figures.rank_correlation_finding(rho_rci, rho_trci))

# %% [markdown]
# ## Latent instability before the flip (§VI, Fig. 7)
#
# The paper's case study shows T-RCI rising from 0.00 to 0.15 while the answer is still right, before it flips.
# Its T-RCI has no per-item form (its terms are rates over a dataset), so the per-item signal here is the item's
# own option distribution: $D_{conf}(s_k) = 1 - p_y(s_k)/p_y(s_0)$, with $p_y$ the probability of the correct
# option, and the margin $p_y - \max_{j \ne y} p_j$ (positive exactly while the answer is right). For every
# clean-correct item along each direction, a **warning** is the first state at which $D_{conf} \ge$
# `warn_threshold` while the answer is still right; it precedes the flip when the answer later turns wrong.

# %%
lat = escalation.latent_instability(pred, list(TRAV.values()))
warn = escalation.early_warnings(lat, threshold=P.warn_threshold)
warn_sum = escalation.warning_summary(warn)
display(warn_sum.round(3))
ex_w = escalation.warning_examples(warn, items, n=6)
if len(ex_w):
    fig = escalation.figures.latent_instability_examples(lat, ex_w, TRAV, SHARE, COLORS)
    figures.save(fig, NB_ID, "fig7-latent-instability")
    plt.show()
    print(escalation.figures.latent_finding(ex_w, SHARE))

# %% [markdown]
# ## The paper's claims, tested on these models
#
# One table (`vlmrobust.analysis.escalation.claims`): per claim the paper's words, the **subject** (the evaluated
# models; the zoo's controls never enter a paper claim), the **null** (what the claim being false looks like), the
# **test**, the statistic with its interval and a **verdict** (reproduced, not reproduced, undecided, by construction,
# no subject; an undecided row says the size that would decide it). Every rule is a pure function of arrays
# (`escalation.decide`) that `escalation.rules` also applies to data drawn from its null at this notebook's default
# size: it says "reproduced" on at most 5 % of those draws (`python -m vlmrobust.analysis.rules --only 07`).
#
# * Claims about *some* instance (a pair of units at similar accuracy, a unit whose directions differ, a model that
#   crop hurts more, a rising curve) are decided **per instance**: the difference has a paired interval (both sides
#   recomputed on the same resampled questions, `n_boot` of them), Bonferroni-adjusted over the instances, with
#   Student's t on the questions of the smallest group. Their null is *equal units*: two halves of one model's
#   questions differ by the 0.05 gap in a quarter to a third of pairs by noise alone, so a share of pairs above a
#   gap is no test. "Distinct mechanisms" needs a pair of units ordered one way by RCI and the other by T-RCI, both
#   orders decided: two noisy copies of one ranking give none.
# * The dataset dependence is a permutation test of the questions' group labels; the correlations of §II-F are
#   corrected for the question noise that both scores carry (it pushes them towards 1) and compared with 0.9, the
#   edge of "nearly identical".
# * Intervals are $\hat\theta \pm t\,\widehat{se}$ and contain their estimates (the percentile interval of a
#   thresholded share does not: resampling the questions shifts such a share away from its estimate).
#
# A row that is not reproduced says these models do not show the pattern at this size, not that the paper is wrong.
# The last row, in the construction section, is not a claim of the paper but the ground truth of the synthetic world.

# %%
perms = escalation.group_permutations(
    pred_paper, lambda p: escalation.run_tables(p, P.ladders, TRAV, full=False, **RUN), P.n_boot, P.seed
) if pred_paper.group.nunique() > 1 else []
claims = escalation.claims_table(
    point, boot, perms, warn[warn.model.isin(PAPER)], float(rho_trci.loc["equal", "no-spatial"]), max_resid,
    acc_tol=P.acc_tol, index_gap=P.index_gap, direction_gap=P.direction_gap, monotone_tol=P.monotone_tol,
    latent_rng=repro.rng("07.latent", P.seed), ci=P.ci, unit_questions=int(items.group.value_counts().min()),
    extra=[gt_check])
with pd.option_context("display.max_colwidth", None):
    display(claims)

# %% [markdown]
# ## Result tables
#
# Written to `results/07_escalation_traversal/`: the predictions of this notebook's sweep (parquet), the RCI cells
# with their terms, the T-RCI states and directions, Table I, the fragility regimes, the evidence record, the
# classified failures, the ablation scores and rank correlations, the early warnings and the claims (CSV).

# %%
pred.to_parquet(OUT / "predictions.parquet", index=False)
for name, df in {"rci_cells": rci, "trci_states": tres.states, "trci_directions": tres.directions,
                 "table1": t1, "fragility_regimes": regimes, "evidence": EV,
                 "failures": classified.drop(columns=[c for c in ("probs", "logits") if c in classified]),
                 "ablation_scores": abl, "rank_correlations_rci": rho_rci.reset_index(names="scheme"),
                 "rank_correlations_trci": rho_trci.reset_index(names="scheme"), "early_warnings": warn,
                 "fill_comparison": fill_table, "table1_bound": run_res, "claims": claims}.items():
    df.to_csv(OUT / f"{name}.csv", index=False, float_format="%.6g")
repro.save_env_snapshot(OUT)
print(sorted(p.name for p in OUT.iterdir()))

# %% [markdown]
# ## Exercises
#
# Each exercise names one change. Write down your prediction first, then make the change (in the parameters cell, or
# with `-p NAME VALUE` under papermill), run the notebook again and read the check cell under the exercise: it
# computes its verdict from the tables of your run (`vlmrobust.analysis.escalation.exercises`), and until the change
# is made it says so and reports what the unchanged run shows.

# %% [markdown]
# ### Exercise 1: D_fail read conditionally
#
# **Change:** set `fail_reading: str = "conditional"` ($\mathcal D_{fail} = \sum_f w_f P(f \mid \text{flip})$).
#
# **Predict first:** with uniform $w_f = 1$, what value does this reading give in a cell where a single item
# flipped, and in one where every item flipped? What does RCI then measure?
#
# **Look at:** the RCI terms table. The check passes when every cell with a flip has $\mathcal D_{fail}$ exactly
# 1: the term only records that something flipped.

# %%
escalation.exercise_07_1(rci, P.fail_reading)

# %% [markdown]
# ### Exercise 2: Removing D_spatial
#
# **Change:** set `trci_weights: list = [0.25, 0.25, 0.25, 0.0, 0.25]` ($\alpha_4 = 0$).
#
# **Predict first:** $\mathcal D_{spatial} = s_k$ is the same for every model. Will dropping it reorder the models
# within a group? Will it change their T-RCI values?
#
# **Look at:** Table I's `T_mu` and the D_spatial table. The check ranks the models within every group by
# `T_mu` under your weights and under uniform weights and passes when the ranks agree (an identity wherever
# every term is available: a prediction to get right, not a finding).

# %%
escalation.exercise_07_2(states, P.trci_weights)

# %% [markdown]
# ### Exercise 3: Break T-RCI's reading on purpose
#
# **Change:** set `fill: str = "black"` (the paper's figures draw the removed band black).
#
# **Predict first:** T-RCI is read as the cost of removing evidence. The sky-band control removes rows that hold
# nothing but sky. How much accuracy will a black band cost there, where it removes no evidence at all?
#
# **Look at:** the fill table and the sky-control figure. The check passes when the chosen fill's sky-band
# control costs at least 0.3 of accuracy from clean: then the fill, not the evidence, drives the traversal
# curves.

# %%
escalation.exercise_07_3(fill_table, P.fill)
