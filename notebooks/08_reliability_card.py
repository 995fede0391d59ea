# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3 (vlmrobust)
#     language: python
#     name: vlmrobust
# ---

# %% [markdown]
# # 08 · One sweep, every lens: a reliability card per model
#
# Each of the four papers looks through one lens: option structure (RAS), escalation (RCI / T-RCI),
# representations (drift), awareness (blind-spot width W), each on its own models and inputs. Here they look at
# the **same models on the same corrupted inputs**, one card per model, and we ask whether they agree.
#
# * **Builds on:** seeds 000 (RAS, R_c / R_w, Table II), 001 (RCI_μ and T-RCI, Table I), 002 (drift against
#   control drift, Table 4) and 003 (W, Table V), plus two read-outs the common harnesses report and none of the
#   papers gives: ImageNet-C's **mCE** against a reference model, and the **answer-order control** (CircularEval).
# * **You will learn:** how to read a model through all four lenses at once, why a card needs intervals (and
#   sometimes refuses a number), and how little a rank correlation over a handful of models can say.

# %%
import matplotlib.pyplot as plt
import pandas as pd
from IPython.display import display

from vlmrobust import depth, figures, params, paths, probes, repro, sweep
from vlmrobust.analysis import card
from vlmrobust.corrupt import escalation as esc
from vlmrobust.models import zoo
from vlmrobust.stats import interval_text

NB_ID = "08_reliability_card"
figures.use_style()

# %% tags=["parameters"]
models: list = []  # zoo names, role:<role>, model folders or hub ids; empty: the evaluated and control organisms
items_source: str = "synth"  # synth, split:<name> (notebook 01's split), a .tsv, an item .parquet or hf:<dataset>
n_per_family: int = 2  # synthetic items per task family
image_size: int = 64  # rendered image side in pixels (the organisms see 64 x 64)
max_items: int = 0  # cap on items read from a file or dataset (0 means no cap)
reference: str = "tiny-base"  # the reference model of mCE (ImageNet-C's AlexNet); must be among the models
imagenet_c: list = ["gaussian_noise", "defocus_blur", "fog", "contrast", "jpeg_compression", "pixelate"]  # ImageNet-C corruptions: the default sweep's five and pixelate (6, the fewest at which the corruption ranking decides); empty: the default sweep's five  # noqa: E501
severities: list = [1, 2, 3, 4, 5]  # ImageNet-C severities (the RAS pairs and the corruption errors)
ladder_levels: list = [1, 2, 3, 4]  # levels of BRUCE's four ladders and four traversals (shares 0.2 .. 0.8)
visibility_levels: list = [1, 2, 3, 4, 5, 6, 7, 8]  # fog and water levels (250 m .. 1.95 m, halving)
depth_provider: str = "exact"  # fog and water depth: exact (synthetic world), pipeline (metric depth model) or plane
depth_model: str = ""  # metric depth model of the pipeline provider (hub id or folder)
depth_fov_deg: float = 60.0  # horizontal field of view assumed for real images (planar to ray depth)
plane_m: float = 10.0  # distance of the constant-plane depth in metres
n_orders: int = 3  # rotations of the options per question (the answer-order control; 3: every rotation of 4)
method: str = "default"  # scoring method: default (each model's own), letter or loglik
drift_regime: str = "ans_mcq_free"  # probe regime of the drift read-out (seed 002's Table 4 regime)
n_control: int = 300  # random pairs of unrelated items for the control drift
max_new_tokens: int = 8  # greedy answer length of the open and free-MCQ probe regimes
internal: str = "token_prob"  # internal confidence of W: token_prob (seed 003) or confidence (over the options)
seed: int = 0  # seed of the items, corruptions, option orders and bootstraps
n_boot: int = 300  # bootstrap resamples for every interval
ci: float = 0.95  # bootstrap interval coverage
batch_size: int = 16  # items per forward pass
device: str = "cpu"  # torch device of the models (cpu, cuda, cuda:1, mps)
dtype: str = ""  # model dtype (float32, float16, bfloat16); empty: the checkpoint's own
torch_threads: int = 1  # torch threads while scoring (1 on shared machines)
executor: str = "dask"  # where shards run: local (this process) or dask (a LocalCluster, or dask_scheduler)
dask_workers: int = 2  # worker processes of the LocalCluster when executor is dask
dask_scheduler: str = ""  # address of a running Dask scheduler to use instead of a LocalCluster ("" for none)
progress: bool = True  # progress bars
variant: str = ""  # a parameter file of params/<this notebook>/ applied over these defaults ("lesson", ...)

# %%
UNCHANGED = params.use_variant(NB_ID, globals())  # variant "lesson": the lesson in one step
P = card.Params.resolve(globals())  # every parameter checked; the body reads P.<name>
CONDITIONS = card.card_conditions(P.imagenet_c, P.severities, ladder_levels=P.ladder_levels,
                                  visibility_levels=P.visibility_levels)
TRAV = {esc.DIRECTION_LABELS[d]: n for d, n in esc.traversal_names("mean").items()}
SWEEP = dict(methods=None if P.method == "default" else [P.method], batch_size=P.batch_size,
             torch_threads=P.torch_threads, executor=P.executor, client=P.dask_scheduler or None,
             dask_workers=P.dask_workers if not P.dask_scheduler else 0, progress=P.progress, device=P.device,
             dtype=P.dtype or None)
PROVIDER = None if P.depth_provider == "exact" else depth.make_provider(
    P.depth_provider, model=P.depth_model, fov_deg=P.depth_fov_deg, plane_m=P.plane_m, device=P.device)
BEHAVIOUR = card.behaviours(P.models)  # zoo behaviour of each model (a blind twin reads its organism's)
EVALUATED = card.evaluated(P.models)  # the claims' subject: evaluated organisms only, never the controls
OUT = paths.results_dir(NB_ID)
repro.seed_everything(P.seed)
print(f"{len(P.models)} models ({len(EVALUATED)} evaluated), reference {P.reference}; "
      f"{sum(len(v) for v in CONDITIONS.values())} corrupted conditions; up to {P.n_orders} rotations of the options")

# %% [markdown]
# ## One sweep
#
# Every lens reads the same forwards: the items under the ImageNet-C corruptions (RAS, mCE, drift), BRUCE's four
# escalation ladders and four directional traversals (RCI, T-RCI), physical fog and water at the visibility
# levels (W), and the clean images with the options rotated (the answer-order control). The hidden states of
# seed 002's probe regimes ride on the scoring forwards of the same sweep, so drift is measured on exactly the
# images RAS scores. Two small item variants join it: each question with seed 003's abstain option appended
# (scored clean and at the visibility levels, for W of the abstain signal), and each question in `n_orders`
# rotations of its options (scored clean). All rows come through `vlmrobust.sweep.predictions`, the shared shard
# cache (`vlmrobust.analysis.card.inputs` documents the choices). The probes ride on the clean and ImageNet-C
# forwards, where drift is read; the other conditions are scored without their extra forwards.
#
# Any item source works. Notebook 01's saved split is one: after notebook 01 has run, `items_source:
# "split:bench-c"` reads it (from the same results root, e.g. `papermill -p items_source split:bench-c`). Real
# images have no depth map of their own: set `depth_provider` to `pipeline` (a metric depth model) or `plane`.

# %%
items = sweep.item_source(P.items_source, n_per_family=P.n_per_family, seed=P.seed, image_size=P.image_size,
                          max_items=P.max_items)
items = card.with_depth(items, PROVIDER)  # fog and water need a depth map: the synthetic world's, or a provider's
SPEC = probes.ProbeSpec(max_new_tokens=P.max_new_tokens, n_control=P.n_control)
INP = card.card_predictions(P.models, items, CONDITIONS, n_orders=P.n_orders, probes=SPEC, seed=P.seed, **SWEEP)
print(f"{len(items)} questions; {len(INP.pred):,} prediction rows, {len(INP.probes):,} probe rows")
display(pd.DataFrame(INP.summary).T[["shards", "done", "cached", "rows", "seconds"]])

# %% [markdown]
# ## The read-outs
#
# Per model (`vlmrobust.analysis.card.lenses`), each the function its own notebook uses, on the card's rows:
#
# * **RAS** (seed 000, Eq. 11) $= -\Delta\mathcal C - [\Delta\mathcal C]_+[-\Delta\mathcal S]_+
#   - [\Delta\mathcal S]_+[-\Delta\mathcal C]_+$, its means $R_c$, $R_w$ over clean-correct and clean-wrong pairs,
#   and the **overconfidence share**: the first penalty's sum over both penalties' (the card's reading);
# * **mCE** (Hendrycks & Dietterich 2019): $\mathrm{CE}_c = \sum_s E_{s,c} / \sum_s E^{\mathrm{ref}}_{s,c}$ averaged
#   over corruptions, and **relative mCE** on $E_{s,c} - E_{\mathrm{clean}}$; the reference model has 1 by
#   construction. Whether the reference degrades under a corruption is decided on its error counts, and relative
#   mCE is **refused** (n/a, with the reason below the table) when fewer than `MIN_RCE_CORRUPTIONS` corruptions
#   degrade the reference: a "mean" over one corruption is that corruption's ratio;
# * **RCI_μ** and **T-RCI** (seed 001, Table I) with the model as the unit;
# * **drift** of the ImageNet-C conditions as a percentage of the model's mean control distance (seed 002,
#   Table 4's "any" row, cosine distance, regime `drift_regime`);
# * **W** of the internal confidence and of the abstain option, fog and water (seed 003, Table V), the questions
#   pooled into one task whose chance is the mean $1/K$;
# * **ECE** of the clean answers (10 bins) beside its **null**, the mean ECE of a perfectly calibrated model with
#   the same confidences (outcomes drawn $\sim \mathrm{Bernoulli}(\text{confidence})$, the grey tick on the
#   cards); refused below `MIN_ECE_ITEMS` items, where that null alone is 0.1 to 0.2;
# * the **answer order** over rotations of the options (rotation $k$ shows option $(j + k) \bmod K$ at position
#   $j$, so every option moves): **CircularEval accuracy** (MMBench: an item counts only if answered right in the
#   given order and in every rotation), the **flip rate** (the chosen *content* changes) and the **position rate**
#   (over pairs where the content at the clean answer's position changed, the answer kept the position). A model
#   that always answers "A" has flip and position rates 1 and CircularEval accuracy 0.

# %%
CARD, LENS = card.card_table(INP, reference=P.reference, imagenet_c=P.imagenet_c, traversals=TRAV,
                             ladders=list(card.LADDERS), drift_regime=P.drift_regime, internal=P.internal,
                             n_boot=P.n_boot, seed=P.seed, ci=P.ci)
LONG = card.card_long(CARD)
TABLE = LONG.assign(text=[interval_text(v, lo, hi) for v, lo, hi in zip(LONG.value, LONG.lo, LONG.hi,
                                                                                   strict=True)])
with pd.option_context("display.max_columns", None, "display.width", 250):
    display(TABLE.pivot(index="model", columns="label", values="text")[list(dict.fromkeys(TABLE.label))])
REFUSED = LONG[LONG.note != ""][["readout", "note"]].drop_duplicates()
print(f"relative mCE needs {card.MIN_RCE_CORRUPTIONS} corruptions that degrade the reference, ECE "
      f"{card.MIN_ECE_ITEMS} items; refused on this run:" if len(REFUSED) else "no read-out refused on this run")
with pd.option_context("display.max_colwidth", None):
    display(REFUSED.groupby("readout", sort=False)["note"].agg(lambda n: "; ".join(dict.fromkeys(n))).to_frame())

# %% [markdown]
# ## The cards
#
# One row per model, one panel per read-out, the same striped row order in every panel: read a model's card
# across, or one lens down. A value is coloured by where its 95 % interval lies against the panel's grey reference
# line (clear of it on the better side, on the worse side, or across it). The reference model of mCE has the
# tinted row; the four W read-outs share two panels (internal confidence filled, abstain option open, triangles for
# a W that is only a bound); "n/a" marks a value the card cannot define (a W whose clean value is too close to
# chance), and a read-out the card refuses for every model (relative mCE, ECE: the reasons printed above) gets no
# panel. Where ECE is drawn, the grey ticks are the calibrated model's ECE: a model's ECE means something only where
# it stands clear of its tick. Ratios are drawn up to 10.

# %%
fig = card.figures.cards_figure(LONG, P.models, reference=P.reference)
figures.save(fig, NB_ID, "reliability-cards")
plt.show()
print(card.figures.cards_finding(LONG, P.models, P.reference))

# %% [markdown]
# ## Do the lenses agree?
#
# Four comparisons across the **evaluated** models (the controls, built to behave a given way, stay out), each in a
# direction stated before the run (`MODEL_PAIRS`): drift against RAS loss ($-$RAS), W of the internal confidence
# under fog against the overconfidence share of RAS, RCI_μ against mCE, and the answer-order flip rate against RAS
# loss; and across corruptions, drift against RAS loss. The claim being false is two **unrelated rankings**, so
# Spearman's ρ is tested against its permutation distribution at the run's number of units (two-sided 5 %): the
# lenses **agree** when ρ lies in the upper 2.5 % tail in the stated direction, **disagree** in the opposite tail,
# and the row is undecided otherwise. The bar to clear falls only as $1.96/\sqrt{n-1}$: about 0.79 with 7
# models, 0.59 with 12, so a dozen models decide only when $|\rho| \gtrsim 0.6$. Below `MIN_UNITS` units (6)
# the card does not decide at all: with 5 units only a perfect ranking clears the test, and one swap of
# neighbours would undo it; the default run scores 6 corruptions for that reason. The interval beside ρ (resampled
# units) is for reading; the test is the permutation.

# %%
CONDS = card.condition_lenses(INP.pred, INP.probes, P.imagenet_c, regime=P.drift_regime, models=EVALUATED)
AGREE = card.model_agreement(CARD, CONDS, n_boot=P.n_boot, rng_models=repro.rng(NB_ID, "agree-models", P.seed),
                             rng_conditions=repro.rng(NB_ID, "agree-conditions", P.seed), ci=P.ci, models=EVALUATED)
display(AGREE.drop(columns="units").round(3))
for r in AGREE.itertuples():
    bar = f"decides at |ρ| ≥ {r.crit:.2f}" if r.crit == r.crit else \
        f"cannot decide (fewer than {card.MIN_UNITS} units, or a constant read-out)"
    print(f"{r.x} vs {r.y} across {r.n_units} {r.across}: ρ {r.rho:+.2f}; {bar}: {r.verdict}")
LABELS = {k: v[0] for k, v in card.READOUTS.items()} | {"ras_loss": "RAS loss (-RAS)"}
fig = card.figures.agreement_figure(card.with_losses(CARD), AGREE, figures.model_styles(P.models), LABELS)
figures.save(fig, NB_ID, "lens-agreement")
plt.show()
print(card.figures.agreement_finding(AGREE))

# %% [markdown]
# ## Claims
#
# The agreement rows (subject: the evaluated models; null: unrelated rankings; test: the permutation test above),
# and a **construction check**: the error-aware control (`aware-err`, trained to pick the abstain option exactly
# where its own answer would be wrong) should have the smallest abstain blind spot. That row tests the card's W,
# not a claim about models: when it holds its verdict is "by construction", never counted as a finding. Undecided
# rows say in `decide` how many models (or corruptions) would decide them. Run with the blind twins of the
# evaluated organisms (`make run NB=08_reliability_card P=blind`), no row is reproduced.

# %%
claims = card.claims_table(AGREE, CARD, BEHAVIOUR)
with pd.option_context("display.max_colwidth", None):
    display(claims)

# %% [markdown]
# ## Result tables
#
# Written to `results/08_reliability_card/`: the card (one row per model, every read-out with its interval), the
# blind-spot table behind W, the mCE table, the answer-order table, the per-corruption lenses, the agreement
# table and the claims (CSV), and the environment snapshot (`environment.json`).

# %%
for name, df in {"cards": CARD, "blind_spots": LENS["blind_spots"], "mce": LENS["mce"], "answer_order": LENS["order"],
                 "condition_lenses": CONDS, "agreement": AGREE, "claims": claims}.items():
    df.to_csv(OUT / f"{name}.csv", index=False, float_format="%.6g")
repro.save_env_snapshot(OUT)
print(sorted(p.name for p in OUT.iterdir()))

# %% [markdown]
# ## Exercises
#
# Each exercise names one change. Write down your prediction first, then make the change (in the parameters cell, or
# with `-p NAME VALUE` under papermill), run the notebook again and read the check cell under the exercise: it
# computes its verdict from the tables of your run (`vlmrobust.analysis.card.exercises`), and until the change is
# made it says so and reports what the unchanged run shows.

# %% [markdown]
# ### Exercise 1: Another reference
#
# **Change:** set `reference: str = "tiny-long"`.
#
# **Predict first:** ImageNet-C reports every model's corruption error relative to AlexNet. Which model's mCE
# becomes exactly 1 now, and does the order of the other models by mCE have to stay the same?
#
# **Look at:** the mCE panel of the cards and the `mce` table. The check passes when the new reference has mCE 1
# with an interval of zero width (and relative mCE 1, where enough corruptions degrade it to define one): the
# reference is the unit, not a measurement.

# %%
card.exercise_08_1(CARD, P.reference)

# %% [markdown]
# ### Exercise 2: Three models, no verdict
#
# **Change:** set `models: list = ["tiny-letters", "tiny-base", "aware-err"]`.
#
# **Predict first:** a rank correlation over three models can only take a handful of values (and only two of
# these three are evaluated organisms). What can the agreement table say about whether the lenses agree?
#
# **Look at:** the agreement table and the claims. The check passes when every model-level row is undecided:
# below six units the card refuses to decide, whatever ρ is.

# %%
card.exercise_08_2(AGREE, P.models)

# %% [markdown]
# ### Exercise 3: Scored by letter, answered by position
#
# **Change:** set `method: str = "letter"`.
#
# **Predict first:** `tiny-base`, `tiny-compare` and `tiny-long` answer in words, and their own scoring compares
# the options' texts: their flip rate under rotated options is 0. Scored by the probability of the letter
# instead, will their answers follow the content of the options, or their positions?
#
# **Look at:** the answer-order flip rate on the cards and the `answer_order` table's position rate. The check
# passes when every organism that answers in words keeps the position on at least half of the rotated questions.

# %%
card.exercise_08_3(LENS["order"], P.method, {m: zoo.answer_format(card.zoo_name(m))
                                              if card.zoo_name(m) in zoo.names() else None for m in P.models})
