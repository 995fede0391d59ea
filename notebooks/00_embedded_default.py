# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3 (vlmrobust)
#     language: python
#     name: vlmrobust
# ---

# %% [markdown]
# # 00 · The embedded default: a synthetic world and its model organisms
#
# Every other notebook runs, by default, on two things this project builds itself: a synthetic VQA world
# with **exact metric depth**, and a zoo of small VLMs trained on it. This notebook shows both.
#
# * **Reproduces:** no paper; it builds the testbed that lets every paper's analysis run on a laptop CPU.
#   Its task families mirror the categories of the benchmarks used by the four papers (MMBench-style
#   attribute, counting, spatial, OCR and chart questions; the identification and verification tasks of
#   the visibility paper; POPE-style existence questions of the representation paper).
# * **You will learn:** how a perspective camera gives each pixel a ray distance in metres, what each task
#   family asks, and how balanced the item table is.

# %%
import json

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from IPython.display import display

from vlmrobust import data, figures, params, paths, repro, schema, sweep, synth
from vlmrobust.models import zoo
from vlmrobust.synth import camera

NB_ID = "00_embedded_default"
figures.use_style()

# %% tags=["parameters"]
seed: int = 7  # seed of the item table (any non-negative int)
n_per_family: int = 60  # items per task family in the item table
image_size: int = 64  # rendered image side in pixels (the organisms see 64 x 64)
gallery_per_family: int = 6  # example images per family in the gallery
distance_near: float = 3.0  # nearest object distance in metres
distance_far: float = 40.0  # farthest object distance in metres
abstain: str = "none"  # abstain option appended to every item: none, unclear or dont_know
models: list = []  # zoo organisms to show (names or role:<role>); empty: every organism in the zoo
n_heldout: int = 20  # held-out items per family scored by every organism
heldout_seed: int = 424242  # seed of the held-out items (no training run uses it)
torch_threads: int = 0  # torch threads while scoring the held-out items (0 keeps torch's default; 1 on shared machines)
variant: str = ""  # a parameter file of params/<this notebook>/ applied over these defaults ("lesson", ...)

# %%
UNCHANGED = params.use_variant(NB_ID, globals())  # variant "lesson": the lesson in one step
seed = params.check("seed", seed, int, lo=0)
n_per_family = params.check("n_per_family", n_per_family, int, lo=1, hi=100_000)
image_size = params.check("image_size", image_size, int, lo=synth.MIN_SIZE, hi=1024)
gallery_per_family = params.check("gallery_per_family", gallery_per_family, int, lo=1, hi=12)
distance_near = params.check("distance_near", distance_near, float, lo=0.5, hi_open=True)
distance_far = params.check("distance_far", distance_far, float, lo=distance_near, lo_open=True, hi=1000.0)
abstain = params.check("abstain", abstain, str, choices=["none", *schema.ABSTAIN_TEXTS])
ABSTAIN = None if abstain == "none" else abstain
ORGANISMS = sweep.resolve_models(models, default=schema.ROLES)
outside = [m for m in ORGANISMS if m not in zoo.names()]
if outside:
    raise params.ParameterError(f"parameter 'models' must name zoo organisms {zoo.names()} here, got {outside}")
n_heldout = params.check("n_heldout", n_heldout, int, lo=1, hi=10_000)
heldout_seed = params.check("heldout_seed", heldout_seed, int, lo=0)
torch_threads = params.check("torch_threads", torch_threads, int, lo=0, hi=1024)
DISTANCE = (distance_near, distance_far)
repro.seed_everything(seed)
OUT = paths.results_dir(NB_ID)

# %% [markdown]
# ## The camera and the ground plane
#
# A pinhole camera sits $h = 1.6$ m above a flat ground, pitched down by $6°$, with a focal length of
# $f = 1.2\,W$ pixels for a $W \times W$ image. Pixel $(i, j)$ looks along the unit ray
# $\mathbf d_{ij}$; a ground pixel sees the point where that ray meets the plane $y = 0$, at
#
# $$ d_{ij} = \frac{h}{-\,d_{y,ij}} \quad (d_{y,ij} < 0), \qquad d_{ij} = \infty \ \text{(sky)} . $$
#
# This **ray distance** — the length light travels from the surface to the camera — is what the
# Koschmieder fog model of the visibility paper needs (Eq. 1 there: $t = e^{-\beta d}$), and it is not the
# planar depth $z$ along the optical axis. Objects are upright flat billboards at known forward distance,
# so their pixels' ray distances are exact too, and their apparent size follows perspective: an object of
# height $H$ at distance $Z$ spans about $fH/Z$ pixels.

# %%
items = synth.generate(n_per_family, seed, size=image_size, abstain=ABSTAIN, distance=DISTANCE)
meta = items["meta"].map(json.loads)
print(f"{len(items)} items, {items['task'].nunique()} families, images {image_size}x{image_size}")
display(items.groupby(["task", "category"]).size().rename("items").to_frame())

# %% [markdown]
# ## The task families
#
# Each family asks one kind of question; its `category` label names the benchmark category it stands for.
# Most families have four shuffled options, the two yes/no families have two. The red box marks the object
# a question is about (identification and verification follow the visibility paper's protocol).

# %%
fams = list(synth.FAMILIES)
_w = min(1.45, 7.2 / gallery_per_family)  # inches per image, so that a row fits a page
fig, axes = plt.subplots(len(fams), gallery_per_family, figsize=(_w * gallery_per_family, (_w + 0.3) * len(fams)))
axes = np.atleast_2d(axes)
for r, fam in enumerate(fams):
    sub = items[items["task"] == fam].head(gallery_per_family)
    for c in range(gallery_per_family):
        ax = axes[r, c]
        ax.set_xticks([])
        ax.set_yticks([])
        ax.grid(False)
        if c >= len(sub):
            ax.axis("off")
            continue
        row = sub.iloc[c]
        ax.imshow(synth.render(row["image_ref"])[0])
        ax.set_xlabel(row["options"][row["answer_idx"]], fontsize=7)
        if c == 0:
            ax.set_ylabel(f"{fam}\n[{row['category']}]", fontsize=8)
    q = sub.iloc[0]["question"] if len(sub) else ""
    axes[r, 0].set_title(q, fontsize=7, loc="left", fontweight="normal")
fig.tight_layout()
figures.save(fig, NB_ID, "gallery-families")
plt.show()
print(f"{len(items)} items over {len(fams)} task families; the gallery shows up to {gallery_per_family} of each, "
      "with its answer under the image")

# %% [markdown]
# ## Depth beside the image
#
# Every image comes with its exact ray-distance map (metres, log colour scale; sky is infinite and drawn
# white). Chart scenes are a flat board 2 m away, so their depth barely varies.

# %%
picks = [items[items["task"] == f].iloc[0] for f in ["colour", "count", "spatial", "text", "chart"]]
fig, axes = plt.subplots(2, len(picks), figsize=(min(7.2, 1.45 * len(picks)), 3.4))
for c, row in enumerate(picks):
    image, depth = synth.render(row["image_ref"])
    axes[0, c].imshow(image)
    axes[0, c].set_title(row["task"], fontsize=8)
    finite = np.where(np.isfinite(depth), depth, np.nan)
    im = axes[1, c].imshow(finite, cmap="magma_r", norm=plt.matplotlib.colors.LogNorm(vmin=1.5, vmax=200))
    sky = ~np.isfinite(depth)
    axes[1, c].set_xlabel(f"{np.nanmin(finite):.1f}–{np.nanmax(finite):.0f} m\nsky {sky.mean():.0%}", fontsize=7)
    for ax in axes[:, c]:
        ax.set_xticks([])
        ax.set_yticks([])
        ax.grid(False)
fig.colorbar(im, ax=axes[1, :].tolist(), shrink=0.8, label="ray distance (m)")
figures.save(fig, NB_ID, "depth-maps")
plt.show()
_depths = {r["task"]: (d := synth.render(r["image_ref"])[1])[np.isfinite(d)] for r in picks}
_spread = {t: float(d.max() / d.min()) for t, d in _depths.items()}
print(f"Across these {len(picks)} scenes the finite depth runs from {min(d.min() for d in _depths.values()):.1f} m "
      f"to {max(d.max() for d in _depths.values()):.0f} m; the flattest is {min(_spread, key=_spread.get)} "
      f"(farthest / nearest {min(_spread.values()):.2f}), the deepest {max(_spread, key=_spread.get)} "
      f"({max(_spread.values()):.0f})")

# %% [markdown]
# ### Perspective check
#
# The apparent height of each circle and sign (both fill their billboard's full height), measured from the rendered
# pixels, against the height the pinhole model predicts from its metric position (project its top and bottom edge).
# Points on the diagonal mean the renderer's geometry and the depth maps agree.

# %%
persp = synth.perspective_check(meta)
err = (persp["measured_px"] - persp["predicted_px"]).abs()
print(f"{len(persp)} unoccluded circles and signs: |measured - predicted| median {err.median():.2f} px, "
      f"max {err.max():.2f} px (pixel quantisation allows about 1 px)")
fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(7.5, 3.2))
for kind, g in persp.groupby("kind"):
    ax1.scatter(g["predicted_px"], g["measured_px"], s=9, alpha=0.6, label=kind)
    ax2.scatter(g["distance_m"], g["measured_px"], s=9, alpha=0.6, label=kind)
lim = max(persp["predicted_px"].max(), persp["measured_px"].max()) + 2
ax1.plot([0, lim], [0, lim], color="grey", lw=0.8)
ax1.set(xlabel="predicted height (px)", ylabel="rendered height (px)", title="renderer vs pinhole model")
zs = np.linspace(distance_near, distance_far, 200)
for h_m, ls in [(1.0, "--"), (1.7, ":")]:
    ax2.plot(zs, camera.focal_px(image_size) * h_m / zs, color="grey", ls=ls, lw=0.9, label=f"f·{h_m} m / d")
ax2.set(xlabel="distance (m)", ylabel="rendered height (px)", title="apparent size falls as 1/d", yscale="log")
ax2.legend()
figures.save(fig, NB_ID, "perspective-check")
plt.show()
_trend = "falls" if np.corrcoef(persp["distance_m"], persp["measured_px"])[0, 1] < 0 else "rises"
print(f"{(err <= 1).mean():.0%} of the {len(persp)} objects lie within 1 px of the pinhole prediction; "
      f"apparent height {_trend} with distance (from {persp['measured_px'].max():.0f} px to "
      f"{persp['measured_px'].min():.0f} px)")

# %% [markdown]
# ## The item table and its balance
#
# A multiple-choice benchmark is only informative when a model cannot score by position or by always saying
# "yes". The table below counts, per family, where the correct option sits and how often "yes" is right.

# %%
balance = synth.balance_table(items)
display(balance)

fig, axes = plt.subplots(1, 2, figsize=(7.2, 3.2), gridspec_kw={"width_ratios": [2, 1.2]})
letters = [c for c in balance.columns if c in schema.OPTION_LETTERS]
shares = balance[letters].div(balance[letters].sum(axis=1), axis=0)
shares.plot(kind="bar", stacked=True, ax=axes[0], width=0.75, legend=True)
axes[0].set(ylabel="share of items", xlabel="", title="position of the correct option")
axes[0].legend(title="answer", ncols=len(shares.columns), loc="upper center", bbox_to_anchor=(0.5, -0.35))
dist = pd.Series([m["target_distance_m"] for m in meta], index=items.index)
ground = items["task"] != "chart"
axes[1].hist(dist[ground & dist.notna()], bins=20, color=figures.PALETTE[0])
axes[1].set(xlabel="distance of the asked-about object (m)", ylabel="items", title="target distances")
fig.tight_layout()
figures.save(fig, NB_ID, "item-balance")
plt.show()
_top = shares.max(axis=1)
print(f"The most frequent answer position holds at most {_top.max():.0%} of a family's items ({_top.idxmax()}; "
      f"uniform would be {1 / balance.loc[_top.idxmax(), 'K']:.0%}); target distances run from "
      f"{dist[ground].min():.0f} m to {dist[ground].max():.0f} m (median {dist[ground].median():.0f} m)")

# %% [markdown]
# ## The model organisms
#
# Each organism is a small LLaVA (`LlavaForConditionalGeneration`): a CLIP-style ViT vision tower over
# 8-px patches of the 64 × 64 image, a two-layer projector that turns each patch feature into a token,
# and a Llama-style decoder with a word-level tokenizer whose letters A–E are single tokens. Its processor
# carries a chat template, so it loads and is prompted through `AutoModelForImageTextToText` /
# `AutoProcessor` like any real VLM. `vlmrobust.train` trains them in stages on fresh synthetic items:
# the vision tower alone first (a probe head reads its patch features to answer the question, and a dense
# head predicts what every patch shows), then projector and language model on open answers, then the
# letter curriculum (a text-only lookup task, hinted questions, hints faded out, plain multiple choice).
# Their cards (`lib/vlmrobust/zoo/<name>/README.md`) hold the configs; the table below is read from them.

# %%
cards = []
for name in ORGANISMS:
    front, _ = zoo.card(name)
    cards.append({"organism": name, "role": front["role"], "answer format": front["answer_format"],
                  "parameters": front["parameters"], "seed": front["seed"],
                  "MB": round(zoo.size_bytes(name, "*.safetensors") / 2**20, 2)})
cards = pd.DataFrame(cards).set_index("organism")
display(cards)

# %% [markdown]
# ### What the vision tower is taught to see
#
# Dense pre-training gives the tower 64 targets per image instead of one answer: for every 8-px patch,
# the colour, shape and sign character of the object covering most of it, whether it holds an object's
# centre (one per object, which is what counting needs), the object's apparent height and the patch's
# log distance (`vlmrobust.train.dense.dense_labels`, exact from the renderer's ground truth).

# %%
from vlmrobust.train.dense import DENSE_VOCAB, dense_labels  # noqa: E402

fill = {"none": (235, 235, 235), "sign": (70, 70, 70), **synth.COLOURS}  # a patch shown in its label's colour
demo = [synth.make_item(f, repro.rng("dense-demo", f), size=64) for f in ("count", "text", "chart")]
fig, axes = plt.subplots(len(demo), 3, figsize=(7.5, 2.5 * len(demo)))
for r, it in enumerate(demo):
    d = dense_labels(it, 8)
    axes[r, 0].imshow(it.image)
    axes[r, 0].set_title(it.question, fontsize=7, loc="left")
    grid = np.array([fill[DENSE_VOCAB["colour"][c]] for c in d["colour"]], dtype=np.uint8).reshape(8, 8, 3)
    axes[r, 1].imshow(grid)
    for c in np.flatnonzero(d["shape"]):
        word = DENSE_VOCAB["char"][d["char"][c]] if d["char"][c] else DENSE_VOCAB["shape"][d["shape"][c]][:3]
        axes[r, 1].text(c % 8, c // 8, word, ha="center", va="center", fontsize=5,
                        color="black" if DENSE_VOCAB["colour"][d["colour"][c]] == "yellow" else "white")
    cy, cx = np.divmod(np.flatnonzero(d["centre"]), 8)
    axes[r, 1].scatter(cx, cy + 0.35, marker="^", s=12, color="black")
    axes[r, 1].set_title("patch colour, shape or character; centres (triangles)", fontsize=6)
    im = axes[r, 2].imshow(np.exp(d["logdepth"].reshape(8, 8)), cmap="magma_r", vmin=0, vmax=40)
    axes[r, 2].set_title("patch distance (m; the sky counts as 100)", fontsize=6)
    fig.colorbar(im, ax=axes[r, 2], fraction=0.046)
    for ax in axes[r]:
        ax.set_xticks([])
        ax.set_yticks([])
        ax.grid(False)
fig.tight_layout()
figures.save(fig, NB_ID, "dense-targets")
plt.show()
_cover = [int((dense_labels(it, 8)["colour"] != 0).sum()) for it in demo]
print(f"Objects cover {min(_cover)} to {max(_cover)} of the 64 patches in these {len(demo)} images; each patch "
      "carries its own targets, one answer per image would carry one")

# %% [markdown]
# ### Training curves
#
# Loss per stage from each organism's `train_log.csv` (stages inherited from a parent run are included),
# one panel per role (evaluated organisms, selectors, ...); the dashed lines mark the stage changes of the
# longest log in each panel.

# %%
groups = {role: [n for n in zoo.names(role) if n in ORGANISMS] for role in schema.ROLES}
groups = {role: names for role, names in groups.items() if names}
fig, axes = plt.subplots(len(groups), 1, figsize=(5.8, 2.6 * len(groups)), squeeze=False)
for ax, (group, names) in zip(axes[:, 0], groups.items(), strict=True):
    logs = {name: zoo.train_log(name) for name in names}
    styles = figures.model_styles(list(logs))
    for name, log in logs.items():
        ax.plot(np.arange(len(log)), log["loss"].rolling(5, min_periods=1).mean(), lw=0.9, label=name,
                markevery=max(1, len(log) // 8), ms=3, **styles[name])
    ax.set(xlabel="logged step (every 20 optimiser steps)", ylabel="training loss (rolling mean)",
           title=f"{group} organisms")
    if not logs:
        continue
    longest = max(logs.values(), key=len)
    for j in np.flatnonzero(longest["stage"].ne(longest["stage"].shift()).to_numpy())[1:]:
        ax.axvline(j, color="grey", ls="--", lw=0.5)
        ax.text(j, 0.98, longest["stage"].iloc[j], fontsize=5, rotation=90, va="top",
                transform=ax.get_xaxis_transform())
    ax.legend(fontsize=6, loc="center left", bbox_to_anchor=(1.01, 0.5))
fig.tight_layout()
figures.save(fig, NB_ID, "training-curves")
plt.show()
_last = {n: float(zoo.train_log(n)["loss"].tail(5).mean()) for names in groups.values() for n in names}
if _last:
    print(f"Final training loss (mean of the last five logged steps) runs from {min(_last.values()):.3f} "
          f"({min(_last, key=_last.get)}) to {max(_last.values()):.3f} ({max(_last, key=_last.get)})")

# %% [markdown]
# ### Clean accuracy on held-out items
#
# Every organism scores the same fresh items (a seed no training run uses) in its own answer format:
# letter organisms by the softmax over the letter logits (Bench-C §V-A), text organisms by the
# log-likelihood of each option's text (seed 002 §3.1). Chance is 0.25 for four options, 0.5 for yes/no.

# %%
held = synth.generate(n_heldout, heldout_seed, size=64)
preds = sweep.predictions(ORGANISMS, held, {}, seed=seed, batch_size=32,  # clean only
                          torch_threads=torch_threads or None).table
acc = preds.pivot_table(index="model", columns="task", values="correct", aggfunc="mean")[fams]
acc["all"] = preds.groupby("model")["correct"].mean()
display(acc.round(3))
fig, ax = plt.subplots(figsize=(8, 0.45 * len(acc) + 1.2))
im = ax.imshow(acc.to_numpy(), vmin=0, vmax=1, cmap="viridis", aspect="auto")
ax.set_xticks(range(acc.shape[1]), acc.columns, rotation=30)
ax.set_yticks(range(len(acc)), acc.index)
ax.grid(False)
for (r, c), v in np.ndenumerate(acc.to_numpy()):
    ax.text(c, r, f"{v:.2f}", ha="center", va="center", fontsize=7, color="white" if v < 0.6 else "black")
fig.colorbar(im, ax=ax, label="accuracy")
ax.set_title(f"clean held-out accuracy ({n_heldout} items per family)")
figures.save(fig, NB_ID, "organism-accuracy")
plt.show()
_fam = acc[fams].mean(axis=0)
print(f"Clean held-out accuracy runs from {acc['all'].min():.2f} ({acc['all'].idxmin()}) to {acc['all'].max():.2f} "
      f"({acc['all'].idxmax()}); the hardest family over the organisms is {_fam.idxmin()} (mean {_fam.min():.2f}), "
      f"the easiest {_fam.idxmax()} ({_fam.max():.2f})")

# %% [markdown]
# ### Example predictions
#
# The full option distribution each evaluated organism gives for a few held-out questions (the correct option in
# bold); the distributions, not only their argmax, are what the later notebooks analyse.

# %%
examples = held.groupby("task").head(1).head(4)
shown = [n for n in ORGANISMS if zoo.role(n) == "evaluated"] or ORGANISMS[:8]  # the evaluated organisms
styles = figures.model_styles(shown)
fig, axes = plt.subplots(len(examples), 2, figsize=(7.2, 1.9 * len(examples)), gridspec_kw={"width_ratios": [1, 3]})
axes = np.atleast_2d(axes)
for r, (_, row) in enumerate(examples.iterrows()):
    axes[r, 0].imshow(data.load_image(row["image_ref"]))
    axes[r, 0].set_xticks([])
    axes[r, 0].set_yticks([])
    axes[r, 0].grid(False)
    axes[r, 0].set_title(row["question"], fontsize=7, loc="left")
    sub = preds[(preds["item_id"] == row["item_id"]) & preds["model"].isin(shown)]
    k = len(row["options"])
    width = 0.8 / max(len(sub), 1)
    for i, (_, p) in enumerate(sub.iterrows()):
        axes[r, 1].bar(np.arange(k) + i * width, p["probs"], width=width, label=p["model"],
                       color=styles[p["model"]]["color"])
    axes[r, 1].set_xticks(np.arange(k) + 0.4 - width / 2, row["options"], fontsize=7)
    axes[r, 1].get_xticklabels()[row["answer_idx"]].set_fontweight("bold")
    axes[r, 1].set_ylim(0, 1)
    axes[r, 1].set_ylabel("probability")
fig.tight_layout()
figures.legend_outside(fig, where="below", ncol=4)
figures.save(fig, NB_ID, "example-predictions")
plt.show()
_ex = preds[preds["item_id"].isin(examples["item_id"]) & preds["model"].isin(shown)]
print(f"In {int(_ex['correct'].sum())} of {len(_ex)} of these distributions the most probable option is the "
      f"correct one; the top option's probability has median {_ex['probs'].map(max).median():.2f}")

# %% [markdown]
# ## Results
#
# The item table (one row per question, the schema every notebook shares), the balance table, the
# organisms' held-out predictions and accuracy, and an environment snapshot go to
# `results/00_embedded_default/`.

# %%
items.to_parquet(OUT / "items.parquet", index=False)
balance.to_csv(OUT / "balance.csv")
persp.to_csv(OUT / "perspective_check.csv", index=False, float_format="%.6g")
preds.drop(columns=["logits"]).to_parquet(OUT / "heldout_predictions.parquet", index=False)
acc.to_csv(OUT / "heldout_accuracy.csv", float_format="%.6g")
repro.save_env_snapshot(OUT)
print(f"wrote {sorted(p.name for p in OUT.iterdir())}")

# %% [markdown]
# ## Exercises
#
# Each exercise names one change. Write down your prediction first, then make the change (in the parameters cell, or
# with `-p NAME VALUE` under papermill), run the notebook again and read the check cell under the exercise: it
# computes its verdict from the tables of your run (`vlmrobust.synth.exercises`), and until the change is made it
# says so and reports what the unchanged run shows.

# %% [markdown]
# ### Exercise 1: Objects far away
#
# **Change:** set `distance_far: float = 120.0` (objects up to 120 m away instead of 40 m).
#
# **Predict first:** will the perspective check still put the far objects on the diagonal? How many pixels
# tall will a 1 m object at 100 m be in a 64-px image ($f H / d$ with $f = 1.2 \times 64$)?
#
# **Look at:** the perspective figure (right panel) and the gallery. The check asks for exact geometry
# (median error at most 1 px beyond 40 m) *and* objects of at most 2 px: exact depth does not mean visible
# evidence.

# %%
synth.exercise_00_1(persp, distance_far)

# %% [markdown]
# ### Exercise 2: Break the balance on purpose
#
# **Change:** set `n_per_family: int = 3`.
#
# **Predict first:** "a model cannot score by position" rests on the correct option sitting equally often at
# every letter. With three questions per family, how well does always answering the family's most frequent
# letter do, against chance 0.25?
#
# **Look at:** the balance table and its left panel. The check computes, from the balance table, what the best
# single letter per family scores on the four-option families.

# %%
synth.exercise_00_2(balance)

# %% [markdown]
# ### Exercise 3: The size ladder
#
# **Change:** set `models: list = ["role:ladder"]` and `n_heldout: int = 30` (only the three rungs are scored,
# so more items cost little).
#
# **Predict first:** the rungs share one frozen vision tower and one recipe; only the language model's size
# differs (117,600 to 604,032 parameters). Will the largest beat the smallest on clean held-out questions, and
# on which families?
#
# **Look at:** the accuracy heatmap. The check pairs the largest and the smallest rung on the same items and
# asks for a difference whose 95 % interval lies above 0.

# %%
synth.exercise_00_3(preds)
