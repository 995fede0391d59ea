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

from vlmrobust import figures, params, paths, repro, synth
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

# %%
seed = params.check("seed", seed, int, lo=0)
n_per_family = params.check("n_per_family", n_per_family, int, lo=1, hi=100_000)
image_size = params.check("image_size", image_size, int, lo=synth.MIN_SIZE, hi=1024)
gallery_per_family = params.check("gallery_per_family", gallery_per_family, int, lo=1, hi=12)
distance_near = params.check("distance_near", distance_near, float, lo=0.5, hi_open=True)
distance_far = params.check("distance_far", distance_far, float, lo=distance_near, lo_open=True, hi=1000.0)
abstain = params.check("abstain", abstain, str, choices=["none", *synth.ABSTAIN_TEXTS])
ABSTAIN = None if abstain == "none" else abstain
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
fig, axes = plt.subplots(len(fams), gallery_per_family, figsize=(1.45 * gallery_per_family, 1.75 * len(fams)))
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
fig.suptitle("One row per task family: the first question of the row, and each image's correct answer", fontsize=9)
fig.tight_layout()
figures.save(fig, NB_ID, "gallery-families")
plt.show()

# %% [markdown]
# ## Depth beside the image
#
# Every image comes with its exact ray-distance map (metres, log colour scale; sky is infinite and drawn
# white). Chart scenes are a flat board 2 m away, so their depth barely varies.

# %%
picks = [items[items["task"] == f].iloc[0] for f in ["colour", "count", "spatial", "text", "chart"]]
fig, axes = plt.subplots(2, len(picks), figsize=(2.1 * len(picks), 4.3))
for c, row in enumerate(picks):
    image, depth = synth.render(row["image_ref"])
    axes[0, c].imshow(image)
    axes[0, c].set_title(row["task"], fontsize=8)
    finite = np.where(np.isfinite(depth), depth, np.nan)
    im = axes[1, c].imshow(finite, cmap="magma_r", norm=plt.matplotlib.colors.LogNorm(vmin=1.5, vmax=200))
    sky = ~np.isfinite(depth)
    axes[1, c].set_xlabel(f"{np.nanmin(finite):.1f}–{np.nanmax(finite):.1f} m, sky {sky.mean():.0%}", fontsize=7)
    for ax in axes[:, c]:
        ax.set_xticks([])
        ax.set_yticks([])
        ax.grid(False)
fig.colorbar(im, ax=axes[1, :].tolist(), shrink=0.8, label="ray distance (m)")
figures.save(fig, NB_ID, "depth-maps")
plt.show()

# %% [markdown]
# ### Perspective check
#
# The apparent height of each circle and sign (both fill their billboard's full height), measured from the rendered pixels, against the
# height the pinhole model predicts from its metric position (project its top and bottom edge).
# Points on the diagonal mean the renderer's geometry and the depth maps agree.

# %%
rows = []
for m in meta:
    if m["scene"] != "ground":
        continue
    for o in m["objects"]:
        if o.get("bbox") is None or (o["kind"] == "shape" and o.get("shape") != "circle"):
            continue  # circles and signs fill their billboard's full height
        x0, y0, x1, y1 = o["bbox"]
        if y0 <= 0 or y1 >= m["size"] or x0 <= 0 or x1 >= m["size"]:
            continue  # clipped by the image border
        _, top = camera.project(o["x_m"], o["height_m"], o["z_m"], m["size"])
        _, bottom = camera.project(o["x_m"], 0.0, o["z_m"], m["size"])
        rows.append({"kind": o["kind"], "distance_m": o["distance_m"], "measured_px": y1 - y0,
                     "predicted_px": float(bottom - top)})
persp = pd.DataFrame(rows)
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

# %% [markdown]
# ## The item table and its balance
#
# A multiple-choice benchmark is only informative when a model cannot score by position or by always saying
# "yes". The table below counts, per family, where the correct option sits and how often "yes" is right.

# %%
items["K"] = items["options"].map(len)
items["answer_letter"] = items["answer_idx"].map(lambda i: "ABCDE"[i])
items["answer_text"] = [o[i] for o, i in zip(items["options"], items["answer_idx"], strict=True)]
balance = pd.crosstab(items["task"], items["answer_letter"]).reindex(fams)
balance["K"] = items.groupby("task")["K"].first()
balance["yes share"] = items.groupby("task")["answer_text"].apply(lambda s: (s == "yes").mean()).round(3)
balance["median target distance (m)"] = (
    pd.Series([m["target_distance_m"] for m in meta], index=items.index).groupby(items["task"]).median().round(1)
)
display(balance)

fig, axes = plt.subplots(1, 2, figsize=(8, 3.2), gridspec_kw={"width_ratios": [2, 1.2]})
shares = pd.crosstab(items["task"], items["answer_letter"], normalize="index").reindex(fams)
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

# %% [markdown]
# ## Results
#
# The item table (one row per question, the schema every notebook shares), the balance table and an
# environment snapshot go to `results/00_embedded_default/`.

# %%
items.drop(columns=["K", "answer_letter", "answer_text"]).to_parquet(OUT / "items.parquet", index=False)
balance.to_csv(OUT / "balance.csv")
persp.to_csv(OUT / "perspective_check.csv", index=False, float_format="%.6g")
repro.save_env_snapshot(OUT)
print(f"wrote {sorted(p.name for p in OUT.iterdir())}")
