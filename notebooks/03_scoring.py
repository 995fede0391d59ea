# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3 (vlmrobust)
#     language: python
#     name: vlmrobust
# ---

# %% [markdown]
# # 03 · Scoring: option distributions from logits, log-likelihood, sampling and words
#
# A multiple-choice answer is more than a letter: each question gets a full **distribution over its K
# options**, and every later notebook measures how corruption moves that distribution. This notebook scores
# the model organisms on the synthetic benchmark under the default corruption sweep.
#
# * **Reproduces:** the option-distribution protocol of Bench-C (seed 000, §V-A: logits of the option
#   letters, softmax) and its black-box sampling estimate (suppl. III-B); the log-likelihood scoring and
#   margins of *Same answer, different representations* (seed 002, §3.1); the verbalized confidence and
#   abstain read-outs of the visibility paper (seed 003, Table II).
# * **You will learn:** how the three ways of scoring relate, how accuracy and confidence fall with severity
#   for each corruption and task family, and what a clean-vs-corrupted pair of distributions looks like.

# %%
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import torch
from IPython.display import display

from vlmrobust import corrupt, data, figures, params, paths, repro, schema, score, sweep, synth
from vlmrobust import models as vlm_models

NB_ID = "03_scoring"
figures.use_style()

# %% tags=["parameters"]
models: list = []  # zoo names, role:<role>, model folders or hub ids; empty: the evaluated organisms
items_source: str = "synth"  # synth, a VLMEvalKit .tsv, an item-table .parquet or hf:<dataset>[:<split>]
n_per_family: int = 10  # synthetic items per task family
image_size: int = 64  # rendered image side in pixels (the organisms see 64 x 64)
max_items: int = 0  # cap on items read from a file or dataset (0 means no cap)
seed: int = 0  # seed of the items, the corruptions and the sampling
manifest: str = "default"  # corruption manifest (corrupt.manifest_names()): perturbation -> levels
perturbations: list = []  # keep only these perturbations of the manifest (empty keeps all)
method: str = "default"  # sweep scoring method: default (each model's own), letter, loglik or loglik_norm
template: str = "vlmrobust"  # prompt template (vlmrobust.models.TEMPLATES)
batch_size: int = 8  # items per forward pass
torch_threads: int = 1  # torch threads while scoring (1 on shared machines; more threads can be much slower there)
agreement_items: int = 45  # items scored by all three methods (letter, log-likelihood, sampling)
agreement_condition: str = "gaussian_noise:3"  # corrupted condition of the method comparison, "name:level"
n_samples: int = 20  # answers sampled per item for the sampling estimate
temperature: float = 1.0  # sampling temperature
example_items: int = 4  # items shown as clean-vs-corrupted distributions
executor: str = "local"  # where shards run: local (this process) or dask (a LocalCluster, or dask_scheduler)
dask_workers: int = 2  # worker processes of the LocalCluster when executor is dask
dask_scheduler: str = ""  # address of a running Dask scheduler to use instead of a LocalCluster ("" for none)
variant: str = ""  # a parameter file of params/<this notebook>/ applied over these defaults ("lesson", ...)

# %%
UNCHANGED = params.use_variant(NB_ID, globals())  # variant "lesson": the lesson in one step
MODELS = sweep.resolve_models(models)
sweep.item_source_kind(items_source)  # checks the source before any work
n_per_family = params.check("n_per_family", n_per_family, int, lo=1, hi=100_000)
image_size = params.check("image_size", image_size, int, lo=synth.MIN_SIZE, hi=1024)
max_items = params.check("max_items", max_items, int, lo=0)
seed = params.check("seed", seed, int, lo=0)
manifest = params.check("manifest", manifest, str, choices=corrupt.manifest_names())
if perturbations:
    perturbations = params.check_list("perturbations", perturbations, str, choices=list(corrupt.manifest(manifest)))
method = params.check("method", method, str, choices=["default", "letter", "loglik", "loglik_norm"])
template = params.check("template", template, str, choices=sorted(vlm_models.TEMPLATES))
batch_size = params.check("batch_size", batch_size, int, lo=1, hi=512)
torch_threads = params.check("torch_threads", torch_threads, int, lo=1, hi=1024)
agreement_items = params.check("agreement_items", agreement_items, int, lo=1, hi=100_000)
agreement_condition = params.check("agreement_condition", agreement_condition, str)
n_samples = params.check("n_samples", n_samples, int, lo=1, hi=10_000)
temperature = params.check("temperature", temperature, float, lo=0.0, lo_open=True, hi=10.0)
example_items = params.check("example_items", example_items, int, lo=1, hi=12)
executor = params.check("executor", executor, str, choices=["local", "dask"])
dask_workers = params.check("dask_workers", dask_workers, int, lo=1, hi=256)
dask_scheduler = sweep.check_scheduler(dask_scheduler, executor)

CONDITIONS = {k: v for k, v in corrupt.manifest(manifest).items() if not perturbations or k in perturbations}
if ":" not in agreement_condition:
    raise params.ParameterError(f"parameter 'agreement_condition' must look like 'name:level', "
                                f"got {agreement_condition!r}")
AGREE_NAME, _level = agreement_condition.split(":", 1)
AGREE_NAME = params.check("agreement_condition name", AGREE_NAME, str, choices=corrupt.names())
AGREE_LEVEL = params.check("agreement_condition level", int(_level) if _level.isdigit() else _level, int,
                           choices=list(corrupt.info(AGREE_NAME).levels))
METHODS = None if method == "default" else [method]
SWEEP = dict(template=template, seed=seed, batch_size=batch_size, torch_threads=torch_threads, executor=executor,
             dask_workers=dask_workers if executor == "dask" else 0, client=dask_scheduler or None,
             n_samples=n_samples, temperature=temperature)
repro.seed_everything(seed)
torch.set_num_threads(torch_threads)
OUT = paths.results_dir(NB_ID)

# %% [markdown]
# ## Items and models
#
# By default the items are the synthetic benchmark of notebook 00 (every task family, K = 4 options, or 2
# for the yes/no families); `items_source` can name a VLMEvalKit-style TSV file, an item table saved as
# parquet or a Hugging Face dataset instead. Each model declares its **answer format** in its model card:
# organisms that answer with the option's *letter* are scored by letter logits, organisms that answer with
# the option's *text* by option log-likelihood.

# %%
items = sweep.item_source(items_source, n_per_family=n_per_family, seed=seed, image_size=image_size,
                          max_items=max_items)
loaded = {name: vlm_models.load(name) for name in MODELS}
display(pd.DataFrame([{"model": n, "id": lm.model_id, "answer format": lm.answer_format,
                       "default method": vlm_models.default_method(lm.answer_format),
                       "parameters (M)": round(sum(p.numel() for p in lm.model.parameters()) / 1e6, 2)}
                      for n, lm in loaded.items()]))
print(f"{len(items)} items in {items['task'].nunique()} families; "
      f"{len(CONDITIONS)} perturbations, {sum(map(len, CONDITIONS.values()))} corrupted conditions")
print("prompt of the first item:\n" + vlm_models.build_prompt(loaded[MODELS[0]].processor, items.question[0],
                                                          list(items.options[0]), template))

# %% [markdown]
# ## Three ways to get an option distribution
#
# **Letter logits** (seed 000, §V-A). One forward pass; $z_k$ is the logit of option $k$'s letter at the
# answer position, and the distribution is the softmax over the $K$ valid letters only:
#
# $$ p_k = \frac{e^{z_k}}{\sum_{j=1}^{K} e^{z_j}} . $$
#
# **Option log-likelihood** (seed 002, §3.1). The score of option $o$ is the log-probability of its text
# after the prompt, $s(o \mid x) = \log P_\theta(o \mid x, p(q, \mathcal A)) = \sum_t \log
# P_\theta(o_t \mid x, o_{<t})$; the length-normalised form divides by the number of tokens; the
# distribution is $\operatorname{softmax}(s)$ and the **margin** is the top score minus the runner-up
# (seed 002, Eq. 2). The prompt is run once and its key-value cache is reused for the $K$ continuations.
#
# **Sampling** (seed 000, suppl. III-B). $n$ answers at temperature $T$, each mapped to an option by its
# letter or its text; the empirical frequencies estimate the distribution, and the unparseable share is
# reported. It is what a black-box model without logits allows.
#
# In every case the prediction is the argmax (ties to the lowest index) and the confidence is $\max_k p_k$.

# %% [markdown]
# ## The sweep
#
# Every model scores every item clean and under every corrupted condition of the manifest, through
# `vlmrobust.sweep.predictions`, the one entry point every notebook uses. The sweep is split into shards
# (model × perturbation), each cached under a key that hashes everything that determines it, in a cache
# shared by all notebooks: re-running this cell, or another notebook asking for the same shards, only
# computes what is missing. Each corrupted image is made once per (perturbation, level) and read by every
# model's shard. With `executor: dask` the shards run on a local cluster of `dask_workers` processes, or on
# a running Dask scheduler named by `dask_scheduler` (a dask-jobqueue or dask-cuda cluster, say); the
# `benchc` variant runs Bench-C's size (846 items × 19 corruptions × 5 severities) for every evaluated
# organism this way.

# %%
result = sweep.predictions(MODELS, items, CONDITIONS, methods=METHODS, **SWEEP)
pred = result.table
print({k: v for k, v in result.summary().items() if k != "seconds"})
print("time in shards:", {k[6:]: f"{v:.0%}" for k, v in result.timing().items() if k.startswith("share_")})

# %% [markdown]
# ## Accuracy and confidence against severity
#
# For each perturbation, accuracy (solid) and mean confidence $\overline{\max_k p_k}$ (dashed) at each
# level; level 0 is the clean image. A gap that opens between the two lines is over-confidence.

# %%
curves = score.severity_curves(pred, list(CONDITIONS), by=["model"])
fig = score.figures.severity_bands(curves, list(CONDITIONS))
figures.save(fig, NB_ID, "accuracy-confidence-vs-severity")
plt.show()

# %%
_last = curves[curves["level"] == curves.groupby("perturbation")["level"].transform("max")]
_last = _last.set_index(["perturbation", "model"])
_clean = curves[curves.level == 0].groupby("model")[["accuracy", "confidence"]].mean()
_acc_last = _last.accuracy.groupby("perturbation").mean()
_gap_last = (_last.confidence - _last.accuracy).groupby("perturbation").mean()
_worst, _mild = _acc_last.idxmin(), _acc_last.idxmax()
_gap_model = (_last.confidence - _last.accuracy).groupby("model").mean()
print(f"At its last level, mean accuracy over the models is lowest under {_worst} ({_acc_last[_worst]:.2f}) and "
      f"highest under {_mild} ({_acc_last[_mild]:.2f}), from {_clean.accuracy.mean():.2f} clean; mean confidence "
      f"lies {'above' if _gap_last.mean() > 0 else 'below'} accuracy there by {abs(_gap_last.mean()):.2f} on "
      f"average (widest gap: {_gap_last.idxmax()}, {_gap_last.max():+.2f}; most over-confident model: "
      f"{_gap_model.idxmax()}, {_gap_model.max():+.2f}).")

# %% [markdown]
# Per task family (all perturbations pooled at each level): families that depend on fine detail (text,
# count) should fall first; colour questions survive blur but not contrast loss.

# %%
fam_curves = score.severity_curves(pred, list(CONDITIONS), by=["model", "task"], pooled=True).rename(
    columns={"task": "family"})
fams = sorted(set(fam_curves.family), key=lambda f: (synth.FAMILIES.index(f) if f in synth.FAMILIES else 99, f))
SHARED, _note = score.figures.shared_levels(CONDITIONS)  # levels every perturbation has; what a level is
_chance = items.groupby("task")["options"].apply(lambda o: float(np.mean([1 / len(x) for x in o]))).to_dict()
fig = score.figures.family_bands(fam_curves, fams, SHARED, _chance, _note)
figures.save(fig, NB_ID, "accuracy-vs-severity-per-family")
plt.show()
_fam = fam_curves[fam_curves.level.isin([0, SHARED[-1]])].pivot_table(index="family", columns="level",
                                                                        values="accuracy")  # mean over models
_fall = (_fam[0] - _fam[SHARED[-1]]).sort_values()
print(f"From clean to level {SHARED[-1]}, {_fall.index[-1]} accuracy {'falls' if _fall.iloc[-1] > 0 else 'rises'} "
      f"the most ({_fam.loc[_fall.index[-1], 0]:.2f} to {_fam.loc[_fall.index[-1], SHARED[-1]]:.2f}, mean over "
      f"models), while {_fall.index[0]} {'falls the least' if _fall.iloc[0] > 0 else 'even rises'} "
      f"(by {abs(_fall.iloc[0]):.2f}); "
      f"{int((_fam[SHARED[-1]] <= pd.Series(_chance).reindex(_fam.index) + 0.05).sum())} of {len(_fam)} families "
      f"end within 0.05 of chance or below it.")
display(fam_curves.pivot_table(index=["model", "family"], columns="level", values="accuracy").round(2))

# %% [markdown]
# ## Clean and corrupted distributions of the same question
#
# Bench-C's unit of analysis is the *pair* $(p^{(o)}, p^{(d,\ell)})$ for one question: the same options,
# the same prompt, only the image changed. Below, the first model's distributions for a few questions,
# clean and at the most severe level of the agreement perturbation; the correct option is outlined.

# %%
m0 = MODELS[0]
severe = max(CONDITIONS.get(AGREE_NAME, [AGREE_LEVEL]))
pair = pred[(pred.model == m0) & (((pred.perturbation == AGREE_NAME) & (pred.level == severe))
                                  | (pred.perturbation == "clean"))]
method0 = pair.method.iloc[0] if len(pair) else "letter"
shown = items[items.item_id.isin(pair.item_id)].groupby("task").head(1).head(example_items)
_examples = []
for _, it in shown.iterrows():
    img = data.load_image(it.image_ref)
    bad = corrupt.apply(img, AGREE_NAME, severe, seed=seed, key=it.item_id,
                        depth=data.load_depth(it.depth_ref) if corrupt.info(AGREE_NAME).needs_depth else None)
    rows = pair[(pair.item_id == it.item_id) & (pair.method == method0)].set_index("perturbation")
    _examples.append({"image": np.concatenate([img, bad], axis=1), "question": it.question,
                      "options": [f"{schema.LETTERS[i]}. {o}" for i, o in enumerate(it.options)],
                      "answer_idx": it.answer_idx, "probs": [np.asarray(rows.loc[c, "probs"]) if c in rows.index
                                                             else None for c in ("clean", AGREE_NAME)]})
fig = score.figures.distribution_pairs(_examples, ("clean", f"{AGREE_NAME} {severe}"), f"p ({m0}, {method0})")
figures.save(fig, NB_ID, "clean-vs-corrupted-distributions")
plt.show()
_both = [e for e in _examples if all(p is not None for p in e["probs"])]
_dp = [e["probs"][1][e["answer_idx"]] - e["probs"][0][e["answer_idx"]] for e in _both]
_flips = sum(int(np.argmax(e["probs"][0]) != np.argmax(e["probs"][1])) for e in _both)
if _both:
    print(f"Over the {len(_both)} questions shown, {m0}'s probability of the correct option "
          f"{'falls' if np.mean(_dp) < 0 else 'rises'} by {abs(np.mean(_dp)):.2f} on average under "
          f"{AGREE_NAME} {severe} (largest change {max(_dp, key=abs):+.2f}), and the argmax changes on {_flips} of "
          "them.")
else:
    print(f"No question shown has both distributions: {AGREE_NAME} is not among this run's perturbations.")

# %% [markdown]
# ## Do the three scoring methods agree?
#
# On a subset of items, clean and under one corrupted condition, each model is scored by letter logits,
# by option log-likelihood and by sampling. We report, per pair of methods, the share of items with the
# same argmax and the mean total-variation distance $\tfrac12 \sum_k |p_k - q_k|$ between the
# distributions. Sampling is noisy at $n$ samples: its distance to the others has a floor of order
# $\sqrt{K / n}$.

# %%
sub_items = items.groupby("task", group_keys=False).head(int(np.ceil(agreement_items / items.task.nunique())))
sub_items = sub_items.head(agreement_items).reset_index(drop=True)
parts = []
for meth in ["letter", "loglik", "sample"]:  # one sweep per method: a model without single-token letters
    res = sweep.predictions(MODELS, sub_items, {AGREE_NAME: [AGREE_LEVEL]}, methods=[meth], allow_failed=True,
                            **SWEEP)  # loses only its letter scores
    for r in res.failed.itertuples():
        print(f"{r.model}: {meth} scoring unavailable ({r.error})")
    parts.append(res.table)
agree_pred = pd.concat(parts, ignore_index=True)
agreement = score.method_agreement(agree_pred, by=["model", "perturbation"], methods=["letter", "loglik", "sample"])
display(agreement.round(3))
acc = agree_pred.groupby(["model", "perturbation", "method"], as_index=False).agg(
    accuracy=("correct", "mean"), confidence=("confidence", "mean"), unparsed=("unparsed_rate", "mean"))
display(acc.round(3))

fig = score.figures.agreement_heatmap(agreement)
figures.save(fig, NB_ID, "method-agreement")
plt.show()
_pairs = agreement.groupby("pair")["same_argmax"].mean().sort_values()
_cond = agreement.groupby("perturbation")["same_argmax"].mean()
print(f"Averaged over models and conditions, {_pairs.index[-1]} agree most often on the argmax "
      f"({_pairs.iloc[-1]:.2f} of items) and {_pairs.index[0]} least ({_pairs.iloc[0]:.2f}); agreement under "
      f"{AGREE_NAME} is {'above' if _cond.get(AGREE_NAME, np.nan) > _cond.get('clean', np.nan) else 'not above'} "
      f"clean ({_cond.get(AGREE_NAME, np.nan):.2f} vs {_cond.get('clean', np.nan):.2f}).")

# %% [markdown]
# ## Results
#
# Written to `results/03_scoring/`: the predictions table of the sweep (`predictions.parquet`, one row per
# model, item, perturbation, level and method; columns documented in `vlmrobust.schema`), the curves
# (`curves.csv`, `family_curves.csv`), the method comparison (`agreement.csv`,
# `agreement_predictions.parquet`) and an environment snapshot. Other notebooks do not read these files:
# they ask `vlmrobust.sweep.predictions` for what they need, which reads the same cached shards.

# %%
pred.to_parquet(OUT / "predictions.parquet", index=False)
curves.to_csv(OUT / "curves.csv", index=False, float_format="%.6g")
fam_curves.to_csv(OUT / "family_curves.csv", index=False, float_format="%.6g")
agreement.to_csv(OUT / "agreement.csv", index=False, float_format="%.6g")
agree_pred.to_parquet(OUT / "agreement_predictions.parquet", index=False)
repro.save_env_snapshot(OUT)
print(f"wrote {sorted(p.name for p in OUT.iterdir())}")

# %% [markdown]
# ## Exercises
#
# Each exercise names one change. Write down your prediction first, then make the change (in the parameters cell, or
# with `-p NAME VALUE` under papermill), run the notebook again and read the check cell under the exercise: it
# computes its verdict from the tables of your run (`vlmrobust.score.exercises`), and until the change is made it
# says so and reports what the unchanged run shows.

# %% [markdown]
# ### Exercise 1: Break the black-box estimate on purpose
#
# **Change:** set `temperature: float = 0.2`.
#
# **Predict first:** Bench-C's sampling estimate (suppl. III-B) treats the frequencies of sampled answers as the
# model's option distribution. At a low temperature, will the sampled answers keep the same argmax as the
# letter logits? Will the sampled confidence match $\max_k p_k$?
#
# **Look at:** the method comparison tables. The check passes when, for the letter organisms, the sampled
# confidence exceeds the letter-logit confidence by at least 0.15 while the argmax still agrees on at least 70 %
# of the items: the estimate keeps the answer and loses the distribution.

# %%
score.exercise_03_1(acc, agreement, temperature)

# %% [markdown]
# ### Exercise 2: The sampling floor
#
# **Change:** set `n_samples: int = 40`.
#
# **Predict first:** with $n$ samples, the empirical distribution is off by about $\sqrt{K/n}$ even when the
# model samples exactly from its letter distribution. How far will the total-variation distance between the
# letter and the sampled distributions fall from its value at 10 or 20 samples?
#
# **Look at:** the `tv` column of the agreement table. The check draws $n$ samples from each item's own
# letter distribution (seeded) to compute the floor, and passes when the measured distance lies within 0.5 to 1.6
# times it.

# %%
score.exercise_03_2(agreement, agree_pred, n_samples)

# %% [markdown]
# ### Exercise 3: The wrong scoring format
#
# **Change:** set `method: str = "loglik"` (every organism scored by option log-likelihood).
#
# **Predict first:** the letter organisms were trained to answer with the option's letter, never with its
# words. Scored by the likelihood of the option's words, will they keep their clean accuracy?
#
# **Look at:** level 0 of the accuracy curves. The check passes when every letter organism's clean accuracy
# falls to within 0.1 of chance: the score measures the format as much as the model.

# %%
score.exercise_03_3(pred, method)

# %% [markdown]
# ### Exercise 4: Colour under blur and under contrast loss
#
# **Change:** set `perturbations: list = ["defocus_blur", "contrast"]`.
#
# **Predict first:** blur removes detail but keeps each object's colour; contrast loss pulls every colour
# towards grey. Which of the two leaves the colour family's accuracy intact at its last severity?
#
# **Look at:** the per-family figure and table. The check compares colour accuracy at the last blur level with
# that at the last contrast level (all models pooled) and passes when blur keeps at least 0.3 more.

# %%
score.exercise_03_4(pred, perturbations, UNCHANGED)
