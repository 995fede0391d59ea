# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3 (vlmrobust)
#     language: python
#     name: vlmrobust
# ---

# %% [markdown]
# # 05 · Representation drift: same answer, moved representation
#
# A model can keep its answer while its internal state moves far, and it can change its answer under a
# perturbation that leaves the picture's content intact. This notebook perturbs images with translations,
# crops, rescaling, rotations and text overlays, and reads both the answers and the hidden states of every
# decoder layer, to compare how far the representation moves with how far unrelated images lie apart.
#
# * **Reproduces:** seed 002 (*Same answer, different representations*): the instance flip rate and image
#   vulnerability (§3.2, Table 1), correctness transitions (Table 2), embedding invariance in five probe
#   regimes (Table 3), drift against control drift with Cohen's d (Tables 4, 7, Fig. 1), Dirichlet energy of
#   the vision tokens (Table 28, Figs. 13-14, App. E.3), drift to prior on yes/no questions (§7, App. D,
#   Figs. 10-12), the frequency experiments (§6, App. F: Figs. 15-20, frequency-constrained PGD, Table 29),
#   the photometric check (App. A.7), the scale comparison (§5, Table 5) and findings (i)-(v).
# * **You will learn:** how to read hidden states off the forward that scoring already runs, why a flip
#   rate alone hides how far representations move, how a control distribution and Cohen's d put drift on a
#   scale, what the per-layer picture adds to the paper's last-layer reading, and where the model organisms
#   do and do not show the paper's patterns.

# %%
import pandas as pd
import torch
from IPython.display import display

from vlmrobust import attack, corrupt, data, figures, params, paths, probes, repro, sweep
from vlmrobust import models as vlm_models
from vlmrobust.analysis import drift
from vlmrobust.corrupt import controls, frequency

NB_ID = "05_representation_drift"
figures.use_style()

# %% tags=["parameters"]
models: list = ["tiny-letters-long", "tiny-long"]  # zoo names, role:<role>, folders or hub ids; empty: evaluated
items_source: str = "synth"  # synth, a VLMEvalKit .tsv, an item-table .parquet or hf:<dataset>[:<split>]
cross_sources: list = []  # further item sources for the label tables (the paper: MMMU val)
pope_source: str = ""  # yes/no item source for drift to prior; empty: the yes/no items of items_source
pope_template: str = ""  # prompt of the yes/no items (seed002_pope: the paper's one-word Yes/No); empty: template
n_per_family: int = 9  # synthetic items per task family (81 items, 18 yes/no: the claim rules' size)
image_size: int = 64  # rendered image side in pixels (the organisms see 64 x 64)
max_items: int = 0  # cap on items read from a file or dataset (0 means no cap)
n_subsets: int = 1  # disjoint random subsets of the items, each table given as mean and SD over them (paper: 4)
subset_size: int = 0  # items per subset (paper: 3500); 0: every item in one subset, or an equal split
shift_reading: str = "scaled"  # translation, pad/crop offsets: fixed (paper's px at native size) or scaled (from 224)
set_apart: str = "kept"  # instances whose ground truth may change: kept in the tables (the paper) or excluded
seed: int = 0  # seed of the items, corruptions, control pairs and bootstrap
method: str = "default"  # scoring method: default (each model's own), letter or loglik
template: str = "vlmrobust"  # scoring prompt template: the ctx_mcq and ans_mcq regimes
open_template: str = "open"  # prompt of ctx_open and ans_open (vlmrobust.probes.PROBE_TEMPLATES)
free_template: str = "mcq_free"  # prompt of ans_mcq_free (options shown, a free answer asked)
max_new_tokens: int = 8  # greedy answer length of the open and free-MCQ regimes
grid_layer: int = -1  # layer of the vision-token grid for Dirichlet energy (-1 final post-norm, 0 decoder input)
n_control: int = 1000  # random pairs of unrelated items for the control distribution
drift_regime: str = "ans_mcq_free"  # regime of Tables 4, 7 and Fig. 1
gt_changing: dict = {"translate": ["spatial", "count"], "rotate": ["spatial"]}  # perturbation to families set apart
n_boot: int = 500  # bootstrap resamples of items for the drift intervals
freq_items: int = 18  # items of the frequency experiments (spread over the families)
noise_draws: int = 6  # noise draws per level for the per-sample curves of Fig. 16
example_samples: int = 2  # samples shown in Figs. 16 and 19
pgd_items: int = 9  # items attacked by each PGD mode
photometric: list = ["gaussian_blur", "jpeg_compression", "motion_blur", "gaussian_noise", "brightness", "contrast"]  # App. A.7  # noqa: E501
photometric_level: int = 1  # severity of the photometric check (1 is the mildest)
size_ladder: list = []  # models of a size ladder for the scale section; empty: the zoo's role ladder
batch_size: int = 8  # items per forward pass
device: str = "cpu"  # torch device of the models (cpu, cuda, cuda:1, mps)
dtype: str = ""  # model dtype (float32, float16, bfloat16); empty: the checkpoint's own
torch_threads: int = 1  # torch threads while scoring (1 on shared machines)
executor: str = "local"  # where shards run: local (this process) or dask (a LocalCluster, or dask_scheduler)
dask_workers: int = 2  # worker processes of the LocalCluster when executor is dask
dask_scheduler: str = ""  # address of a running Dask scheduler to use instead of a LocalCluster ("" for none)
progress: bool = True  # progress bars
variant: str = ""  # a parameter file of params/<this notebook>/ applied over these defaults ("lesson", ...)

# %%
UNCHANGED = params.use_variant(NB_ID, globals())  # variant "lesson": the lesson in one step
P = drift.Params.resolve(globals())  # every parameter checked; the body reads P.<name>
ALL_REGIMES = probes.REGIMES + probes.VISION_PROBES
METHODS = None if P.method == "default" else [P.method]
SPEC = probes.ProbeSpec(max_new_tokens=P.max_new_tokens, open_template=P.open_template,
                        free_template=P.free_template, grid_layer=P.grid_layer, n_control=P.n_control)
SWEEP = dict(template=P.template, seed=P.seed, batch_size=P.batch_size, torch_threads=P.torch_threads,
             executor=P.executor, dask_workers=P.dask_workers if P.executor == "dask" else 0,
             client=P.dask_scheduler or None, progress=P.progress, device=P.device, dtype=P.dtype or None)
LOAD = dict(device=P.device, dtype=P.dtype or None)
NATURAL = corrupt.manifest("natural")
repro.seed_everything(P.seed)
torch.set_num_threads(P.torch_threads)
OUT = paths.results_dir(NB_ID)


label = drift.label


def model_method(name: str) -> str:
    return P.method if P.method != "default" else vlm_models.default_method(
        vlm_models.zoo.answer_format(drift.zoo_name(name)) if drift.zoo_name(name) in vlm_models.zoo.names()
        else "letters")


# %% [markdown]
# ## Items, models, prompts and the perturbations
#
# The items are the synthetic benchmark (every family; K = 4 options, 2 for the yes/no families `verify` and
# `exist`, which stand for POPE). Each model is scored in its own answer format: organisms that answer with
# the letter by letter logits, those that answer with the option's words by option log-likelihood
# $s(o \mid x) = \log P_\theta(o \mid x, p(q, \mathcal A))$ (seed 002 §3.1).
#
# The seed prints only its MCQ prompt, so the other two are chosen here: the **open** prompt is the question
# with "Answer with a word." (the organisms' open-answer prompt), and the **free-MCQ** prompt shows the
# lettered options and asks the same "Answer with a word." (every word is in the organisms' vocabulary;
# `open_phrase` / `mcq_free_phrase` ask "Answer the question using a single word or phrase." for real
# models). Answers are decoded greedily.
#
# The perturbation set is the paper's (App. A.6): cyclic translation by $\Delta x \in \{-16, \dots, 16\}
# \setminus \{0\}$ px (8 offsets), symmetric pad/crop by the same offsets,
# scale $\alpha = 0.9$, scale+pad at two instances ($\alpha = 0.9$ and $0.75$, centred on black), rotation by
# $\pm 30°$, and three overlays with identical boxes: "Answer is L" (TextOverlay), a random string of the
# same pattern (RandomText) and the empty box (BoxOverlay), for at most three letters L that differ from the
# model's clean prediction and exist among the item's options. Families whose ground truth a perturbation
# can change are set apart (parameter `gt_changing`): a cyclic shift moves the leftmost object to the right
# edge and can split an object across the seam (spatial, count); a rotation changes left/right and near/far in
# the picture (spatial). The paper keeps such instances in its tables (`set_apart = "kept"`, the default);
# they are also shown apart below, and `set_apart = "excluded"` leaves them out.
#
# **Protocol choices** (`vlmrobust.analysis.drift.protocol`). *Shifts*: the paper's offsets are a fixed
# number of pixels at the image's native resolution (`shift_reading = "fixed"`, the paper variant's). The 64 px
# synthetic images would lose a quarter of their width to a 16 px shift, so the default here scales the
# offsets from 224 px (`shift_reading = "scaled"`: 1 to 5 px). *Subsets*: the paper averages four disjoint random
# subsets of 3,500 images (`n_subsets`, `subset_size`); Tables 1-4 are computed per subset and shown as the
# mean over subsets with the SD across them (one subset by default). *Unions*: Table 1's "Any" pools all
# eight perturbations, Tables 2 and 3 pool six (RandomText and BoxOverlay apart), as the paper's numbers do.
# *POPE*: the paper asks "Answer with exactly one word: Yes or No." with a one-token answer
# (`pope_template = "seed002_pope"`); the organisms were trained on the MCQ prompt, so the default scores
# their yes/no items with it.

# %%
items = sweep.item_source(P.items_source, n_per_family=P.n_per_family, seed=P.seed, image_size=P.image_size,
                          max_items=P.max_items)
SUBSETS = drift.disjoint_subsets(items.item_id, P.n_subsets, P.subset_size, repro.rng(P.seed, NB_ID, "subsets"))
items = items[items.item_id.isin(set().union(*SUBSETS))].reset_index(drop=True)
print(f"{len(SUBSETS)} disjoint subset(s) of {len(SUBSETS[0])} items; shifts {P.shift_reading}; "
      f"set-apart instances {P.set_apart}")
first = vlm_models.load(P.models[0], **LOAD)
print(f"{len(items)} items in {items.task.nunique()} families; {len(NATURAL)} perturbations; models {P.models}")
r0 = items.iloc[0]
for name, tpl in [("ctx_mcq / ans_mcq", P.template), ("ctx_open / ans_open", probes.PROBE_TEMPLATES[P.open_template]),
                  ("ans_mcq_free", probes.PROBE_TEMPLATES[P.free_template])]:
    print(f"--- {name} prompt:\n" + vlm_models.build_prompt(first.processor, r0.question, list(r0.options), tpl))

fig = drift.figures.perturbation_examples(data.load_image(r0.image_ref), seed=P.seed, key=r0.item_id,
                                         shift=P.shift_reading)
figures.save(fig, NB_ID, "fig3-perturbation-examples")
print(drift.figures.examples_finding(data.load_image(r0.image_ref), drift.figures.EXAMPLES, seed=P.seed, key=r0.item_id,
                                     shift=P.shift_reading))

# %% [markdown]
# ## One sweep: answers and hidden states from the same forwards
#
# A probe sweep scores every item clean and under every perturbation and reads, from the same forwards, the
# hidden state of every decoder layer at five points (seed 002 §3.3, App. A.8): **ctx_open** and **ctx_mcq**,
# the last context token under the open and the MCQ prompt; **ans_open**, the mean over the greedy answer of
# the open prompt; **ans_mcq**, the mean over the chosen option's tokens teacher-forced after the MCQ prompt;
# **ans_mcq_free**, the mean over the free answer with the options shown. We add the mean over the vision
# tokens and the vision-token grid. `ctx_mcq`, `ans_mcq` and the vision probes come from the scoring forward
# itself; the open and free regimes need their own decoding. The paper reads the **final layer before the
# output projection**: the post-norm state that `transformers` returns as `hidden_states[-1]`; the per-layer
# curves below use the **pre-norm residual stream** of layers 0 (decoder input) to L.
#
# Each probe shard keeps, per item and condition, only distances to the item's clean state (cosine distance
# $1 - \cos$ and $\ell_2$, per layer) and the grid's Dirichlet energy: its size grows with items × layers. The
# clean shard keeps the clean vectors, the control pairs and the noise floor.

# %%
res = drift.natural_predictions(P.models, items, NATURAL, shift=P.shift_reading, methods=METHODS, probes=SPEC, **SWEEP)
pred, Pall = res.table, res.probes
print({k: v for k, v in res.summary().items() if k != "seconds"})
pairs, excluded = drift.table_pairs(drift.flip_pairs(pred), P.gt_changing, P.set_apart)
Pk = drift.table_pairs(Pall, P.gt_changing, P.set_apart)[0]
print(f"{len(pairs)} perturbation instances in the tables; {len(excluded)} may change the ground truth "
      f"({P.gt_changing}): "
      + ("kept in the tables and shown apart" if P.set_apart == "kept" else "left out of the tables, shown apart"))
clean_acc = pred[pred.perturbation == "clean"].groupby("model").correct.mean()
display(clean_acc.rename("clean accuracy").to_frame().round(3))

# %% [markdown]
# ## Table 1 — label invariance: instance flip rate and image vulnerability
#
# $$ \mathrm{IFR}_{v'} = \frac{1}{|\mathcal I_{v'}|} \sum_{(x, x') \in \mathcal I_{v'}}
# \mathbb 1\{\hat y(x') \neq \hat y(x)\}, \qquad
# \mathrm{IV}_{v'} = \frac{1}{|\mathcal X|} \sum_{x \in \mathcal X} \mathbb 1\{\exists x' \in v'(x):
# \hat y(x') \neq \hat y(x)\}. $$
#
# A flip is any change of the predicted option (a wrong answer changing to another wrong one counts). "Any
# (union)" pools all eight perturbations, the overlays included: the paper's 0.079 is the instance-weighted
# mean of all eight rows (the six of Table 2 would give 0.086).

# %%
t1 = drift.across_subsets(drift.ifr_iv, SUBSETS, ["model", "perturbation"], pairs=pairs)
display(t1.assign(perturbation=t1.perturbation.map(label)).pivot_table(
    index="perturbation", columns="model", values=["IFR", "IV"], sort=False).round(3))
print("The instances whose ground truth may change, on their own:")
t1_apart = drift.ifr_iv(excluded, by=["model", "task"], union=())
display(t1_apart.round(3))
dec = drift.overlay_decomposition(pairs)
print("Overlays: semantic vs random text vs empty box (identical boxes)")
display(dec.round(3))

# %% [markdown]
# ## Table 2 — correctness transitions and compliance
#
# R→W (correct to wrong), W→R, R→R and W→W (W→W′: wrong to another wrong) per perturbation instance, and the
# compliance rates $\mathrm{R{\to}W} / (\mathrm{R{\to}W} + \mathrm{R{\to}R})$ and
# $\mathrm{W{\to}R} / (\mathrm{W{\to}R} + \mathrm{W{\to}W})$. For TextOverlay the first is how often a
# correct answer follows a wrong-letter overlay (paper: 10.7 %), the second how often a wrong answer is fixed
# (22 %, below the 33 % of uniform compliance with a correct-pointing overlay among three).

# %%
t2 = drift.across_subsets(drift.transitions, SUBSETS, ["model", "perturbation"], pairs=pairs)
display(t2.assign(perturbation=t2.perturbation.map(label)).round(3))

# %% [markdown]
# ## Table 3 — embedding invariance in the five regimes
#
# Mean cosine similarity and mean $\ell_2$ distance between the clean and the perturbed state at the final
# (post-norm) layer, per perturbation and regime (seed 002 §4.3).

# %%
REGIMES3 = list(probes.REGIMES) + ["vision_mean"]
t3 = drift.across_subsets(lambda rows: drift.invariance_table(rows, REGIMES3), SUBSETS,
                          ["model", "perturbation", "regime"], rows=Pk)
for m, cells in drift.invariance_cells(t3, REGIMES3).items():
    print(f"{m} (cos / L2)")
    display(cells)

# %% [markdown]
# ## Tables 4 and 7, Fig. 1 — drift against control drift
#
# The control distribution is the distance between the clean states of at least `n_control` random pairs of
# *unrelated* items (distinct images; different questions too, as in the paper's random pairs). Drift is put
# on its scale as a percentage of the mean control distance, and the two distributions are separated by
# **Cohen's d** with the unweighted pooled standard deviation (the paper's Table 7 implies it):
#
# $$ d = \frac{\mu_{\mathrm{pert}} - \mu_{\mathrm{ctrl}}}
#   {\sqrt{(\sigma_{\mathrm{pert}}^2 + \sigma_{\mathrm{ctrl}}^2)/2}}. $$
#
# Large negative d: drift stays local; d near 0: the perturbed state lies as far from its clean state as an
# unrelated image's. Intervals are item-level bootstrap percentiles of the mean drift.

# %%
t4, t7 = (drift.across_subsets(lambda rows, m=m: drift.drift_vs_control(rows, P.drift_regime, m), SUBSETS,
                               ["model", "perturbation"], rows=Pk) for m in ("cos", "l2"))
t4 = drift.with_interval(t4, Pk, P.drift_regime, repro.rng(P.seed, NB_ID, "bootstrap"), n_boot=P.n_boot)
print(f"Table 4 — {P.drift_regime}, cosine distance")
display(t4.assign(perturbation=t4.perturbation.map(label))[drift.TABLE4_COLUMNS].round(3))
print(f"Table 7 — {P.drift_regime}, L2 distance")
display(t7.assign(perturbation=t7.perturbation.map(label))[drift.TABLE7_COLUMNS].round(3))

fig = drift.figures.drift_vs_control(Pk, Pall, t4, P.models, P.drift_regime)
figures.save(fig, NB_ID, "fig1-drift-vs-control")
print(drift.figures.drift_control_finding(t4, P.models))

# %% [markdown]
# ## Per-layer drift (our addition) and the noise floor
#
# The paper reads only the last layer. Below, the mean cosine drift of each layer of the pre-norm residual
# stream (0 = the decoder's input, where the projected vision tokens enter) as a fraction of the mean control
# distance at the same layer, pooled over the union's perturbations, and the final post-norm value at the
# right. At layer 0 the last context token is the same token embedding for every item (both distances are 0),
# so the two context curves start at layer 1. The **noise floor** is the distance between two computations
# of the same clean input in different
# batch compositions (the clean condition scored again with batch size 1): floating-point noise, which must be
# far below the smallest drift reported.

# %%
curves = drift.layer_curves(Pk, "cos")
fig = drift.figures.layer_drift_curves(curves, drift.invariance_table(Pk, ALL_REGIMES), Pall, P.models, ALL_REGIMES)
figures.save(fig, NB_ID, "layer-drift-curves")
print(drift.figures.layer_finding(curves, P.models))

floor = pd.concat([drift.noise_floor(Pk, "cos").assign(metric="cos"), drift.noise_floor(Pk, "l2").assign(metric="l2")])
display(floor.round(8))
print(f"smallest drift / largest floor, over models and regimes: {floor.ratio.min():.3g}")

# %% [markdown]
# ## Table 28, Figs. 13-14 — Dirichlet energy of the vision-token grid
#
# $$ E(Z) = \sum_{(i,j) \sim (i',j')} \lVert \mathbf z_{i,j} - \mathbf z_{i',j'} \rVert_2^2, \qquad
# \Delta E_{\mathrm{dir}} = E(x') - E(x), $$
#
# over the 4-neighbour edges of the grid, each counted once (App. E). The grid is the decoder's states at the
# image-token positions (`grid_layer`; default the final post-norm layer), one token per 8 × 8 patch for the
# organisms. Flip-inducing instances are those whose scoring prediction changed.

# %%
G = drift.with_flips(Pk, pairs)
t28 = drift.energy_table(G)
display(t28.assign(perturbation=t28.perturbation.map(label)).round(3))
for fig_id, pert in (("fig13", "translate"), ("fig14", "text_overlay")):
    fig = drift.figures.dirichlet_histograms(G, pert)
    figures.save(fig, NB_ID, f"{fig_id}-dirichlet-{pert.replace('_', '-')}")
    print(drift.figures.dirichlet_finding(G, pert))
print(f"App. E.3 — correlation of ΔE_dir with {P.drift_regime} cosine drift")
display(drift.energy_drift_correlation(Pk, P.drift_regime).round(3))

# %% [markdown]
# ## Drift to prior on yes/no questions (§7, App. D; Figs. 10-12)
#
# The prior is the answer without visual evidence, $S_{\mathrm{prior}} = P(\text{Yes} \mid q,
# \text{blank})$, with a uniform grey image. The POPE margin is the signed gap $s_{\mathrm{Yes}} -
# s_{\mathrm{No}}$ (positive when the model favours Yes). Under each perturbation we count true positives
# turning into false negatives (TP→FN), TN→FP, and the corrections FP→TN and FN→TP, and follow the margin of
# the clean false positives: a negative shift is a move toward "No".

# %%
POPE_SWEEP = {**SWEEP, "template": P.pope_template or P.template}
pope_items = sweep.item_source(P.pope_source, n_per_family=P.n_per_family, seed=P.seed,
                               image_size=P.image_size, max_items=P.max_items,
                               param="pope_source") if P.pope_source else drift.yes_no_subset(items)
if P.pope_source or P.pope_template:
    print(f"yes/no items scored with {POPE_SWEEP['template']!r}; tokens per option:",
          drift.one_token_options(first.tokenizer))
    pres = drift.natural_predictions(P.models, pope_items, NATURAL, shift=P.shift_reading, methods=METHODS, probes=SPEC,
                                     **POPE_SWEEP)
    pope_pred, pope_P = pres.table, pres.probes
else:
    pope_pred, pope_P = pred[pred.item_id.isin(pope_items.item_id)], Pall[Pall.item_id.isin(pope_items.item_id)]
blank = sweep.predictions(P.models, pope_items, {"blank_grey": [1]}, methods=METHODS, corrupt_fn=controls.blank_image,
                          param_fn=controls.blank_param, **POPE_SWEEP).table
prior_rows = drift.pope_rows(blank[blank.perturbation == "blank_grey"], pope_items)
display(drift.prior_summary(prior_rows).round(3))
pope_rows = drift.pope_rows(pope_pred, pope_items)
pope = drift.pope_transitions(pope_rows)
shift = drift.margin_shift(pope_rows)
display(pope.assign(perturbation=pope.perturbation.map(label)).round(3))
display(shift.assign(perturbation=shift.perturbation.map(label)).round(3))

fig = drift.figures.pope_rates(pope, P.models, NATURAL)
figures.save(fig, NB_ID, "fig10-pope-accuracy-and-flip-rate")
print(drift.figures.pope_rates_finding(pope, P.models))
fig = drift.figures.pope_transition_rates(pope, P.models, NATURAL)
figures.save(fig, NB_ID, "fig12-pope-transitions")
print(drift.figures.pope_moves_finding(pope))
p11 = drift.drift_by_perturbation(pope, pope_P, P.drift_regime)
fig = drift.figures.pope_drift_energy(p11, P.models, P.drift_regime)
figures.save(fig, NB_ID, "fig11-pope-drift-and-energy-vs-flip-rate")
print(drift.figures.pope_drift_finding(p11, P.models))

# %% [markdown]
# ## Frequency (§6, App. F)
#
# **Band-limited noise** (F.1): $x' = \mathrm{clip}(x + \epsilon \cdot \eta_{\mathrm{band}})$ with Gaussian
# noise restricted to the low band ($0 < \rho \le 0.25$), the high band ($\rho > 0.5$) or all frequencies, unit
# standard deviation, and no DC term in any band ($\rho = |f| / 0.5$, 1 = Nyquist). Fig. 17 is the mean flip
# rate against $\epsilon$; Fig. 16 follows single samples over `noise_draws` noise draws, with the signed
# margin of the base option $s_{\mathrm{base}} - \max_{j \ne \mathrm{base}} s_j$.
#
# **Frequency ablation** (F.2): low-pass keep retains $\rho \le c$, high-pass keep retains $\rho > c$ (and the
# mean), at 24 log-spaced cutoffs $c \in [0.02, 1.42]$. Fig. 18 is the distribution of the smallest cutoff
# that flips each answer (the paper's wording); the table also gives the first flip along the path from the
# mildest to the harshest ablation. Fig. 19 follows the signed margin of single samples.

# %%
fitems = drift.spread_items(items, P.freq_items)
NOISE = {f"noise_{b}": list(range(1, 6)) for b in ("low", "high", "all")}
noise_pairs = drift.flip_pairs(sweep.predictions(P.models, fitems, NOISE, methods=METHODS, **SWEEP).table)
ncurve = drift.flip_curve(noise_pairs)
fig = drift.frequency_figures.noise_flip_rate(ncurve, P.models)
figures.save(fig, NB_ID, "fig17-noise-flip-rate-by-band")
print(drift.figures.noise_finding(ncurve))

samples = drift.example_items(fitems, P.example_samples)
draws = [drift.flip_pairs(sweep.predictions(P.models[:1], samples, NOISE, methods=METHODS, **{**SWEEP,
                                            "seed": P.seed + 1 + k}).table) for k in range(P.noise_draws)]
per_sample = drift.flip_curve(pd.concat(draws, ignore_index=True), by=["model", "item_id", "perturbation"])
fig = drift.frequency_figures.per_sample_noise(per_sample, samples.item_id, P.models[0], P.noise_draws)
figures.save(fig, NB_ID, "fig16-per-sample-noise")
print(drift.figures.per_sample_finding(per_sample))

# %%
levels = list(range(1, len(frequency.FINE_CUTOFFS) + 1))
abl = sweep.predictions(P.models, fitems, {"lowpass_fine": levels, "highpass_fine": levels}, methods=METHODS,
                        corrupt_fn=frequency.fine_ablation, param_fn=frequency.fine_param, **SWEEP).table
abl_pairs = drift.flip_pairs(abl)
thr = drift.threshold_table(abl_pairs)
display(drift.threshold_summary(thr).round(3))
fig = drift.frequency_figures.ablation_thresholds(thr)
figures.save(fig, NB_ID, "fig18-ablation-flip-thresholds")
print(drift.figures.thresholds_finding(thr))

acurve = drift.flip_curve(abl_pairs[abl_pairs.model == P.models[0]], by=["model", "item_id", "perturbation"])
fig = drift.frequency_figures.ablation_margins(acurve, samples.item_id, P.models[0])
figures.save(fig, NB_ID, "fig19-ablation-margins")
print(drift.figures.margins_finding(acurve))

# %% [markdown]
# **Natural perturbations as spectral drift** (App. F.4, Fig. 15). For every perturbation instance of the
# sweep, the relative change of each frequency band of the image, phase included:
# $D_{\mathrm{band}} = \sum_{\mathrm{band}} |X' - X|^2 / \sum_{\mathrm{band}} |X|^2$ over the channels' DFTs (low
# $0 < \rho \le 0.25$, mid $0.25 < \rho \le 0.5$, high $\rho > 0.5$). A cyclic shift keeps every magnitude: its
# drift is pure phase.

# %%
sd = drift.instance_spectral_drift(pairs, items, P.seed, P.shift_reading)
fig = drift.frequency_figures.spectral_drift_by_band(sd, NATURAL)
figures.save(fig, NB_ID, "fig15-spectral-drift-by-band")
print(drift.figures.spectral_finding(sd))

# %% [markdown]
# **Frequency-constrained PGD** (F.3, Table 29, Fig. 20):
#
# $$ \delta_{t+1} = \Pi_{\lVert\delta\rVert_\infty \le \epsilon}\Big(\mathrm{Proj}_{\mathrm{band}}\big(\delta_t
# + \alpha \cdot \mathrm{sign}(\nabla_\delta \mathcal L(x + \delta_t))\big)\Big), $$
#
# untargeted on the base prediction ($\mathcal L = -\log p(\mathrm{base} \mid x + \delta)$ over the option
# distribution), $\epsilon = 8/255$, $\alpha = 2/255$, 20 steps, in pixel space, the low band or the high band
# (ideal DFT masks); $\Pi$ also keeps $x + \delta$ in $[0, 1]$. The result is quantised to `uint8` and rescored
# through the normal scoring path. Gradients are taken with respect to the image's pixels before the processor
# (its rescale and normalisation rebuilt in torch and checked against it: exact for the organisms). The $L_\infty$
# clip puts energy back outside the band: the table gives the in-band share that is left. Attack success is
# $1 -$ adversarial accuracy; PFR is the share of predictions that changed.

# %%
pitems = drift.spread_items(items, P.pgd_items)
pimgs = [data.load_image(r) for r in pitems.image_ref]
clean_p = pred[(pred.perturbation == "clean") & pred.item_id.isin(pitems.item_id)]
runs = drift.pgd_attacks(P.models, pitems, pimgs, clean_p, model_method, template=P.template, seed=P.seed,
                         batch_size=P.batch_size, progress=P.progress, **LOAD)
for m, why in runs.skipped.items():
    print(f"PGD not run for {m}: {why}")
t29 = attack.pgd_table(clean_p, runs.preds) if runs.preds else pd.DataFrame()
print(f"Table 29 — eps = {attack.EPS:.5f} (8/255), alpha = {attack.ALPHA:.5f} (2/255), {attack.STEPS} steps, "
      f"{len(pitems)} items")
display(t29.round(4))
fig = drift.frequency_figures.pgd_radial_energy(runs.deltas, pitems.item_id[0], runs.attacked)
figures.save(fig, NB_ID, "fig20-pgd-radial-energy")
print(drift.figures.pgd_finding(t29))

# %% [markdown]
# ## Photometric check (App. A.7)
#
# Corruptions that cannot move objects or change spatial relations — blur, JPEG, motion blur, noise, brightness,
# contrast, at the mildest ImageNet-C severity — still flip answers if the instability is representational
# rather than a change of ground truth. (ImageNet-C's mildest JPEG is quality 25, harsher than the paper's
# JPEG-70.)

# %%
photo = sweep.predictions(P.models, items, {c: [P.photometric_level] for c in P.photometric}, methods=METHODS,
                          **SWEEP).table
tphoto = drift.ifr_iv(drift.flip_pairs(photo), union=())
display(pd.concat([tphoto, t1[t1.perturbation.isin(["translate", "pad_crop", "rotate"])]]).pivot_table(
    index="perturbation", columns="model", values="IFR", sort=False).round(3))

# %% [markdown]
# ## Scale (§5, Table 5, Figs. 2 and 5)
#
# The paper compares sizes within a family: accuracy rises with scale while flip rates and vulnerability do
# not fall, and both error injection (R→W) and correction (W→R) grow. This section runs on the zoo's size
# ladder (models of role `ladder`, ordered by `ladder_rung`, sized by `lm_parameters`), or on the models named
# in `size_ladder`; it says what is missing when there is none. Every rung is swept with its probes, so Table 5
# carries each rung's mean similarity to the clean state over Table 3's union (`cos <regime>`), and finding
# (iv) is judged on every larger rung against the smallest, with intervals, in the claims table below.

# %%
scale_models = P.size_ladder if len(P.size_ladder) >= 2 else P.models
if len(P.size_ladder) < 2:
    print(f"Missing: the zoo holds {len(P.size_ladder)} organism(s) of role 'ladder' "
          "(a size ladder needs at least two rungs); "
          f"Table 5 lists the notebook's models, which all have the same size, so finding (iv) has no subject.")
if set(scale_models) <= set(P.models):  # the probe sweep above already scored them
    scale_pred, scale_P = pred[pred.model.isin(scale_models)], Pall[Pall.model.isin(scale_models)]
else:  # every rung with its probes, on the same items
    sres = drift.natural_predictions(scale_models, items, NATURAL, shift=P.shift_reading, methods=METHODS, probes=SPEC,
                                     **SWEEP)
    scale_pred, scale_P = sres.table, sres.probes
scale_pairs = drift.table_pairs(drift.flip_pairs(scale_pred), P.gt_changing, P.set_apart)[0]
scale_Pk = drift.table_pairs(scale_P, P.gt_changing, P.set_apart)[0]
ZOO = vlm_models.zoo.names()
sizes = drift.model_sizes(scale_models, lambda n: vlm_models.load(n, **LOAD),
                          lambda n: vlm_models.zoo.meta(drift.zoo_name(n)) if drift.zoo_name(n) in ZOO else None)
t5 = drift.with_similarity(drift.scale_table(scale_pred, scale_pairs, sizes), scale_Pk, list(probes.REGIMES))
display(t5.round(3))
t1_scale = drift.ifr_iv(scale_pairs)
fig = drift.figures.scale_panels(t1_scale, t5, sizes, NATURAL)
figures.save(fig, NB_ID, "fig2-fig5-scale")
print(drift.figures.scale_finding(t5))

# %% [markdown]
# Further item sources (`cross_sources`; the paper's MMMU val) repeat the label tables.

# %%
cross = []
for src in P.cross_sources:
    citems = sweep.item_source(src, n_per_family=P.n_per_family, seed=P.seed, image_size=P.image_size,
                               max_items=P.max_items)
    cpairs = drift.table_pairs(drift.flip_pairs(drift.natural_predictions(
        P.models, citems, NATURAL, shift=P.shift_reading, methods=METHODS, **SWEEP).table), P.gt_changing,
        P.set_apart)[0]
    cross.append(drift.ifr_iv(cpairs).assign(source=src))
if cross:
    display(pd.concat(cross).round(3))
else:
    print("no cross sources (parameter cross_sources)")

# %% [markdown]
# ## Findings (i)-(v) and the patterns, checked on these models
#
# Every finding of the paper's introduction and every pattern of §4 is a row of the claims table
# (`vlmrobust.analysis.drift.claims`): the paper's words, the models it was tried on (`subject`), what the claim
# being false looks like (`null`), the rule (`test`), the measured statistic with its 95 % bootstrap interval over
# items, and a verdict: **reproduced** when the interval lies inside the acceptance region, **not reproduced** when
# it lies wholly outside, **undecided** when it straddles the edge (`decide` then gives the number of items that
# would decide it), **no subject** when the run has nothing the claim is about. A claim made for every model is
# reproduced when every model's part is; the row's value is that of the part that decides it. Differences between
# perturbations, regimes or ladder rungs are paired over the same resampled items.
#
# Every rule was drawn from its null at this notebook's default size and says "reproduced" in at most 5 % of draws
# (`python -m vlmrobust.analysis.rules --only 05`; the nulls and the paper's effects are in
# `vlmrobust.analysis.drift.rules`). Two regions are the project's reading of the paper's words: "comparable or
# greater" (finding (iv)) allows a larger rung down to half the smallest rung's flip rate, vulnerability or drift,
# as App. A.7 calls 2.9 % "comparable" to 6-8 %; "drifts more" needs a gap of 1 % of the distance between unrelated
# images. At 81 items most rules have little power: an undecided row says this run's items cannot tell, and the
# size that would. With blind twins (`params/05_representation_drift/blind.yaml`: models that see one grey image)
# no claim about vision may come out reproduced; the blank-image prior is a claim about the language prior.

# %%
run = drift.DriftRun(pairs=pairs, probes=Pk, pope=pope_rows, prior=prior_rows, pgd=runs.preds,
                     regime=P.drift_regime)
ladder_run = drift.SizeLadder(scale_pred, scale_pairs, sizes, probes=scale_Pk,
                          note="" if len(P.size_ladder) >= 2 else " (no role ladder in the zoo)")
claims = drift.claims_table(run, ladder_run, n_boot=P.n_boot, seed=P.seed)
with pd.option_context("display.max_colwidth", None):
    display(claims)

# %% [markdown]
# ## Result tables
#
# Written to `results/05_representation_drift/`: the predictions and probe rows of the sweep (parquet), every
# table above and the claims table (CSV).

# %%
pred.to_parquet(OUT / "predictions.parquet", index=False)
Pall.drop(columns=["state", "state_layers"]).to_parquet(OUT / "probes.parquet", index=False)
for name, df in {"table1_ifr_iv": t1, "table1_set_apart": t1_apart, "overlay_decomposition": dec,
                 "table2_transitions": t2, "table3_invariance": t3, "table4_drift_vs_control_cos": t4,
                 "table7_drift_vs_control_l2": t7, "layer_curves": curves, "noise_floor": floor,
                 "table28_dirichlet": t28, "pope_prior": drift.prior_summary(prior_rows), "pope_transitions": pope,
                 "pope_margin_shift": shift, "noise_flip_curves": ncurve, "ablation_thresholds": thr,
                 "table29_pgd": t29, "photometric": tphoto, "table5_scale": t5, "claims": claims}.items():
    df.to_csv(OUT / f"{name}.csv", index=False, float_format="%.6g")
repro.save_env_snapshot(OUT)
print(sorted(p.name for p in OUT.iterdir()))

# %% [markdown]
# ## Exercises
#
# Each exercise names one change. Write down your prediction first, then make the change (in the parameters cell, or
# with `-p NAME VALUE` under papermill), run the notebook again and read the check cell under the exercise: it
# computes its verdict from the tables of your run (`vlmrobust.analysis.drift.exercises`), and until the change is
# made it says so and reports what the unchanged run shows.

# %% [markdown]
# ### Exercise 1: Shifts at native resolution
#
# **Change:** set `shift_reading: str = "fixed"` (the paper's offsets of 4 to 16 px on the 64-px images, instead
# of 1 to 5 px scaled from 224 px).
#
# **Predict first:** the organisms' vision tower cuts the image into 8 × 8-px patches. Will a 16-px cyclic shift
# flip more answers than a 4-px one? What does a shift by whole patches leave unchanged?
#
# **Look at:** Table 1's Translation row and the set-apart instances. The check splits the translation instances
# into offsets that are multiples of the patch (±8, ±16 px) and the others (±4, ±12 px) and passes when the
# others flip at least 0.04 more often: what a model sees of a shift depends on its patch grid, not only on the
# number of pixels.

# %%
drift.exercise_05_1(pairs, P.shift_reading)

# %% [markdown]
# ### Exercise 2: Break "drift is far above numerical noise" on purpose
#
# **Change:** set `dtype: str = "bfloat16"` (the models run at half precision; slow on a CPU).
#
# **Predict first:** the noise floor is the distance between two computations of the same clean input in
# different batch compositions. With 8 bits of mantissa instead of 24, how close will it come to the smallest
# drift of the table?
#
# **Look at:** the noise-floor table and its last line. The check passes when the smallest drift is less than
# 100 times the largest floor: at that precision the smallest drifts can no longer be told from rounding.

# %%
drift.exercise_05_2(floor, P.dtype)

# %% [markdown]
# ### Exercise 3: Scale does not buy robustness
#
# **Change:** set `size_ladder: list = ["ladder-48", "ladder-64", "ladder-96"]` (the zoo's whole size ladder).
#
# **Predict first:** finding (iv) says accuracy rises with scale while the flip rates do not fall. Will the
# largest rung be more accurate than the smallest? Will it flip less often under TextOverlay?
#
# **Look at:** Table 5 and Figs. 2/5. The check passes when the largest rung is more accurate and its
# TextOverlay IFR is not lower than the smallest rung's by more than 0.05.

# %%
drift.exercise_05_3(t5, P.size_ladder, drift.Params.resolve(UNCHANGED).as_dict())  # against the unchanged run
