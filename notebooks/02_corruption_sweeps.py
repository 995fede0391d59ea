# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3 (vlmrobust)
#     language: python
#     name: vlmrobust
# ---

# %% [markdown]
# # 02 · Corruption sweeps: what every perturbation does, and visibility in metres
#
# One registry, `vlmrobust.corrupt`, holds every perturbation of the four papers. This notebook shows each
# of them on one synthetic scene at every level, degrades a scene with physical fog and water on its exact
# metric depth, and expresses ImageNet-C fog as a visibility in metres.
#
# * **Reproduces:** the 19 ImageNet-C types x 5 severities of Bench-C (seed 000, §IV-B); the escalation
#   ladders and directional traversals of BRUCE (seed 001, §III); the natural perturbations, text overlays
#   and frequency perturbations of seed 002 (App. A.6, App. F); the fog and underwater visibility sweeps,
#   Fig. 2 and Table VII of seed 003.
# * **You will learn:** what each level of each perturbation looks like and which physical parameter it
#   stands for, how Koschmieder fog differs from ImageNet-C's depth-independent haze, how many metres of
#   visibility an ImageNet-C fog severity is worth, and which conditions the later notebooks sweep by default.

# %%
import json

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from IPython.display import display

from vlmrobust import corrupt, figures, params, paths, repro, synth
from vlmrobust.corrupt import physical

NB_ID = "02_corruption_sweeps"
figures.use_style()

# %% tags=["parameters"]
seed: int = 3  # seed of the showcase scene, the corruption draws and the fog-table scenes
scene_family: str = "count"  # task family of the showcase scene (synth.FAMILIES)
image_size: int = 96  # side of the showcase scene in pixels, at least 32
families: list = ["all"]  # registry families drawn as ladders, or ["all"] for every family
n_fog_scenes: int = 200  # synthetic scenes for the ImageNet-C fog <-> metres table (Table VII)
fog_scene_size: int = 64  # side of those scenes in pixels
convention: str = "2%"  # Koschmieder contrast threshold: "2%" (K 3.912) or "5%" (K 2.996)
manifest: str = "default"  # manifest tabulated below (corrupt.manifest_names()); 03-07 take theirs as a parameter
variant: str = ""  # a parameter file of params/<this notebook>/ applied over these defaults ("lesson", ...)

# %%
UNCHANGED = params.use_variant(NB_ID, globals())  # variant "lesson": the lesson in one step
seed = params.check("seed", seed, int, lo=0)
scene_family = params.check("scene_family", scene_family, str, choices=[f for f in synth.FAMILIES if f != "chart"])
image_size = params.check("image_size", image_size, int, lo=corrupt.MIN_SIDE, hi=512)
families = params.check_list("families", families, str, choices=["all", *corrupt.families()])
FAMILIES = corrupt.families() if families == ["all"] else families
n_fog_scenes = params.check("n_fog_scenes", n_fog_scenes, int, lo=2, hi=5000)
fog_scene_size = params.check("fog_scene_size", fog_scene_size, int, lo=corrupt.MIN_SIDE, hi=512)
convention = params.check("convention", convention, str, choices=list(physical.KOSCHMIEDER))
manifest = params.check("manifest", manifest, str, choices=corrupt.manifest_names())
repro.seed_everything(seed)
OUT = paths.results_dir(NB_ID)

scene = synth.make_item(scene_family, repro.rng(NB_ID, "scene", seed), size=image_size)
IMG, DEPTH = scene.image, scene.depth
print(f"showcase scene: {scene.question!r}, {image_size}x{image_size} px, "
      f"depth {np.nanmin(np.where(np.isfinite(DEPTH), DEPTH, np.nan)):.1f} m to inf (sky {np.isinf(DEPTH).mean():.0%})")

# %% [markdown]
# ## The registry
#
# Every perturbation is called the same way, `corrupt.apply(image, name, level, seed=..., key=item_id,
# depth=...)`, and returns a new `uint8` image of the same size; level 0 is the clean image. Random
# perturbations draw from a generator derived from `(item id, name, level, seed)` (`repro.rng`), so the same
# call gives the same bytes in every process. Each level carries its **physical parameter** — a noise
# standard deviation, a blur σ in pixels, a rotation in degrees, a visibility in metres — listed here.

# %%
registry = corrupt.registry_table()
overview = registry.groupby(["family", "perturbation"], sort=False).agg(
    seed=("seed", "first"), levels=("level", "size"), parameter=("param_name", "first"), unit=("unit", "first"),
    values=("param", lambda v: ", ".join(f"{x:g}" for x in v)), random=("random", "first"))
display(overview)

# %% [markdown]
# ## Ladders: one scene, every level
#
# **ImageNet-C** (seed 000 §IV-B; Hendrycks & Dietterich's published severities, in Bench-C's five families).
# For example Gaussian noise is $x' = \mathrm{clip}(x + \mathcal N(0, c^2))$ with
# $c \in \{0.08, 0.12, 0.18, 0.26, 0.38\}$ of full scale, contrast is $x' = (x - \bar x)\,c + \bar x$ with
# $c \in \{0.4, \dots, 0.05\}$, and ImageNet-C fog adds a plasma-fractal haze $x' = (x + c\,P)\,m/(m + c)$
# that ignores depth. The implementations here are vectorised re-writes that agree with the reference
# package to within a grey level (`tests/test_corrupt_parity.py`); `backend="reference"` runs the reference.
#
# **Escalation and traversal** (seed 001): Gaussian blur $\sigma \in \{1,2,3,4\}$ px; contrast
# $x' = \mu + c\,(x - \mu)$ around the mean luma $\mu$ with the *contrast factor*
# $c \in \{0.9, 0.7, 0.5, 0.3\}$, the share of contrast kept (as PIL's and torchvision's factor); rotation
# $\theta \in \{5, 10, 15, 20\}°$; center crop removing the share $p \in \{0.2, 0.4, 0.6, 0.8\}$ of the
# area (the central $\sqrt{1-p}$ of each side is kept), resized back. The other readings (c removed, p of
# each side) are the `reading` option of `corrupt.apply`.
# Traversals fill the first share $s \in \{0.2, 0.4, 0.6, 0.8\}$ of the image, seen from the starting side
# (top, bottom, left, right), with black.
#
# **Natural perturbations and overlays** (seed 002 App. A.6): cyclic shift and symmetric pad/crop by $n \in \{-16,
# -12, \dots, 16\} \setminus \{0\}$ pixels at the image's native resolution (the paper's fixed shift;
# `reading="scaled"` defines them at 224 px, $\mathrm{round}(n\,W/224)$); scale by $\alpha = 0.9$ (0.75, 0.5) and
# back; scale then pad on black; rotation by $\pm 30°$. The three overlays share one box per (item, level):
# *TextOverlay* writes "Answer is L" (level $k$ = letter $k$), *RandomText* a random string of the same pattern,
# *BoxOverlay* the box alone.
#
# **Frequency** (seed 002 App. F): $x' = \mathrm{clip}(x + \epsilon\,\eta_{\text{band}})$ with unit-variance
# Gaussian noise restricted to the low ($\rho \le 0.25$), high ($\rho > 0.5$) or all bands of the radial
# frequency $\rho = |f|/f_{\text{Nyquist}}$, $\epsilon \in \{0.02, \dots, 0.32\}$; low-pass keep retains
# $\rho \le c$, high-pass keep $\rho > c$ (and the mean).

# %%
def ladder(family: str, max_cols: int = 9):
    """One row per member (wrapped after ``max_cols`` images); returns the figure and, per member, the mean
    absolute pixel change from clean at its last level (0-1 scale)."""
    members = corrupt.names(family)
    n_cols = min(max_cols, 1 + max(len(corrupt.info(n).levels) for n in members))
    first = np.cumsum([0] + [-(-(1 + len(corrupt.info(n).levels)) // n_cols) for n in members])  # first row each
    fig, axes = plt.subplots(first[-1], n_cols, figsize=(0.8 * n_cols, 0.95 * first[-1] + 0.2), squeeze=False)
    for ax in axes.flat:
        ax.axis("off")
    change = {}
    for r, name in enumerate(members):
        m = corrupt.info(name)
        for i, level in enumerate([0, *m.levels]):
            ax = axes[first[r] + i // n_cols, i % n_cols]
            ax.axis("on")
            figures.image_axes(ax, frame=False)
            out = corrupt.apply(IMG, name, level, seed=seed, key="showcase", depth=DEPTH)
            ax.imshow(out)
            v = m.param(level) if level else 0.0
            ax.set_xlabel("clean" if level == 0 else f"{v:.3g}" if abs(v) < 1000 else f"{v:.0f}", fontsize=6)
            if level and len(m.unit) < 6:
                ax.xaxis.label.set_text(f"{ax.get_xlabel()} {m.unit}")
        scale = 255.0 if np.asarray(IMG).dtype == np.uint8 else 1.0
        change[name] = float(np.abs(np.asarray(out, float) - np.asarray(IMG, float)).mean() / scale)
        axes[first[r], 0].set_ylabel(name, fontsize=6)
    fig.tight_layout(h_pad=0.3, w_pad=0.2)
    return fig, change


for family in FAMILIES:
    fig, change = ladder(family)
    figures.save(fig, NB_ID, f"ladder-{family}")
    plt.show()
    hi, lo = max(change, key=change.get), min(change, key=change.get)
    print(f"{family}: at its last level, {hi} moves the pixels most (mean |change| {change[hi]:.3f} of full scale)"
          + (f" and {lo} least ({change[lo]:.3f})." if lo != hi else "."))

# %% [markdown]
# ## Physical visibility: fog and water on metric depth (seed 003 Fig. 2)
#
# Seed 003 degrades an image with its metric depth by the image-formation model (its Eq. 1), in linear RGB
# on the **ray distance** $d$ of each pixel:
#
# $$ I = J\,t + A\,(1 - t), \qquad t = e^{-\beta d}, \qquad \beta = \frac{K}{V}, \quad K = \ln\frac{1}{\varepsilon} . $$
#
# With the 2 % contrast threshold $\varepsilon$, $K = \ln 50 = 3.912$, so an object at the visibility range
# $d = V$ keeps exactly 2 % of its contrast ($K = 2.996$ for the 5 % convention). Fog uses a grey veiling
# light $A = 0.8$; the sky ($d = \infty$) becomes $A$, a pixel at $d = 0$ is unchanged. The underwater arm
# scales the absorption spectrum of pure water, $a_w(620, 540, 460\,\text{nm}) = (0.2755, 0.0474, 0.00979)
# \,\text{m}^{-1}$, under a blue-green veiling light. Seed 003 does not print how $V$ is defined for water;
# here it keeps fog's meaning: **$V$ is the range at which the most transparent channel (blue) still keeps
# the contrast threshold**, so
#
# $$ \beta_c = \frac{K}{V}\,\frac{a_w(c)}{\min_c a_w(c)}, \qquad \beta_B = \frac{K}{V}, $$
#
# blue fades exactly like fog of the same $V$, green 4.84 and red 28 times faster. Visibility levels run from
# 250 m to 1.953125 m by factors of two. The last row is ImageNet-C fog, which ignores depth.

# %%
fog_levels = [2, 3, 4, 5, 6, 8]
fig, axes = plt.subplots(4, 6, figsize=(7.2, 5.6))
for ax in axes.ravel():
    figures.image_axes(ax, frame=False)
axes[0, 0].imshow(IMG)
axes[0, 0].set_title("clean", fontsize=8)
finite = np.where(np.isfinite(DEPTH), DEPTH, np.nan)
im = axes[0, 1].imshow(finite, cmap="magma_r", norm=plt.matplotlib.colors.LogNorm(vmin=1.5, vmax=300))
axes[0, 1].set_title("ray distance (m)", fontsize=8)
fig.colorbar(im, ax=axes[0, 1], fraction=0.046, pad=0.02).ax.tick_params(labelsize=6)
for c, lv in zip((2, 3), (3, 6), strict=True):
    v = physical.VISIBILITY_LEVELS_M[lv - 1]
    axes[0, c].imshow(physical.transmittance(DEPTH, v, convention), cmap="gray", vmin=0, vmax=1)
    axes[0, c].set_title(f"t at V = {v:.3g} m", fontsize=7)
axes[0, 4].axis("off")
axes[0, 5].axis("off")
for r, name in ((1, "fog_physical"), (2, "underwater")):
    for c, lv in enumerate(fog_levels):
        axes[r, c].imshow(corrupt.apply(IMG, name, lv, depth=DEPTH, convention=convention))
        axes[r, c].set_title(f"V = {physical.VISIBILITY_LEVELS_M[lv - 1]:.3g} m", fontsize=7)
    axes[r, 0].set_ylabel("fog" if name == "fog_physical" else "underwater", fontsize=8)
for c in range(5):
    axes[3, c].imshow(corrupt.apply(IMG, "fog", c + 1, seed=seed, key="showcase"))
    axes[3, c].set_title(f"severity {c + 1}", fontsize=7)
axes[3, 0].set_ylabel("ImageNet-C fog", fontsize=8)
axes[3, 5].axis("off")
fig.tight_layout()
figures.save(fig, NB_ID, "fig2-visibility-ladders")
plt.show()
_vlast = physical.VISIBILITY_LEVELS_M[fog_levels[-1] - 1]
_img = np.asarray(IMG, float) / (255.0 if np.asarray(IMG).dtype == np.uint8 else 1.0)
_outs = {f"fog_physical at {_vlast:.3g} m": corrupt.apply(IMG, "fog_physical", fog_levels[-1], depth=DEPTH,
                                                          convention=convention),
         f"underwater at {_vlast:.3g} m": corrupt.apply(IMG, "underwater", fog_levels[-1], depth=DEPTH,
                                                        convention=convention),
         "ImageNet-C fog severity 5": corrupt.apply(IMG, "fog", 5, seed=seed, key="showcase")}
_chg = {k: float(np.abs(np.asarray(v, float) / (255.0 if np.asarray(v).dtype == np.uint8 else 1.0) - _img).mean())
        for k, v in _outs.items()}
_milder = _chg["ImageNet-C fog severity 5"] < min(list(_chg.values())[:2])
print("Mean |pixel change| from clean (full scale): " + ", ".join(f"{k} {v:.3f}" for k, v in _chg.items())
      + f"; ImageNet-C fog at its worst is {'milder' if _milder else 'not milder'} than either physical medium at the "
      "last visibility shown.")

# %% [markdown]
# ### Water against fog at the same visibility
#
# Eq. 1 maps a difference $\Delta J$ between two grey radiances at the same distance to
# $\sum_c Y_c\,t_c\,\Delta J$ in luminance (the veiling light cancels), so the **luminance transmission** of
# a medium is $\sum_c Y_c\,e^{-\beta_c d}$ with the BT.709 weights $Y = (0.2126, 0.7152, 0.0722)$. The cell
# below gives it at the distance where fog keeps $1/e$ of the contrast ($\beta d = 1$ for fog), and averaged
# over the showcase scene's pixels of finite depth at every level, with the fog visibility that would give
# the water arm's mean on the same pixels. With $V$ defined on the clearest channel the water arm is the
# harsher one at every level: green, which carries most of the luminance, fades 4.84 times faster than fog.
# Had $V$ been defined on the channel mean, green would fade 0.43 times as fast as fog and water would be the
# milder arm. Seed 003 reports the harsher ordering: the half-way visibility of accuracy is larger under
# water than in fog (Table V: 22.1 vs 12.4 m and 33.5 vs 16.8 m for Qwen3-VL-2B on identification and
# verification, 29.5 vs 14.1 m for InternVL3.5-2B), so under water its models lost their accuracy at about
# twice fog's visibility. The fog-equivalent column shows how much harsher this definition makes water on a
# synthetic scene; it is a property of the optics, not of a model.

# %%
v_top = physical.VISIBILITY_LEVELS_M[0]
d_one_e = np.array([v_top / physical.KOSCHMIEDER[convention]])  # fog keeps 1/e here; the ratio is the same at any V
print("luminance transmission where fog keeps 1/e of the contrast: " + ", ".join(
    f"{medium} {physical.luminance_transmittance(d_one_e, v_top, medium, convention)[0]:.4f}"
    for medium in ("fog", "water")))
water_fog = physical.water_vs_fog(DEPTH, convention=convention)
display(water_fog.round({"fog": 4, "water": 4, "water_over_fog": 3, "fog_equivalent_m": 2}))

# %% [markdown]
# ## ImageNet-C fog in metres (seed 003 Table VII, Fig. 7)
#
# ImageNet-C fog multiplies every intensity difference of an image by the gain $g = m/(m + c)$, where $m$ is
# the image's maximum and $c \in \{1.5, 2, 2.5, 2.5, 3\}$ the haze strength. Physical fog multiplies the
# linear contrast of a pixel at distance $d$ by $t(d) = e^{-K d / V}$. The **retained contrast gain** of an
# image at visibility $V$ is the mean of $t$ over its pixels of finite depth (sky carries no scene contrast
# in either model); the **equivalent visibility** $V_{\text{eq}}$ of a severity solves
#
# $$ \frac{1}{|\Omega|} \sum_{x \in \Omega} e^{-K d(x)/V_{\text{eq}}} = \frac{m}{m + c}, \qquad
#    \Omega = \{x : d(x) < \infty\}, $$
#
# per image. The table gives the mean gain and the median, interquartile range and P90/P10 spread of
# $V_{\text{eq}}$ over synthetic ground-plane scenes (chart scenes, a board 2 m away, are left out).
# Seed 003 found 55-110 m on COCO; the synthetic world's distances (3-40 m objects on a ground plane that
# runs to the horizon) set where these scenes fall.

# %%
fog_families = [f for f in synth.FAMILIES if f != "chart"]
fog_items = [synth.make_item(fog_families[i % len(fog_families)], repro.rng(NB_ID, "fog-table", seed, i),
                             size=fog_scene_size) for i in range(n_fog_scenes)]
per_image, table7 = physical.fog_visibility_table([it.image for it in fog_items], [it.depth for it in fog_items],
                                                  convention=convention)
display(table7.round(3))

fig, ax = plt.subplots(figsize=(6.4, 3.0))
data = [per_image.loc[per_image["severity"] == s, "v_eq_m"].to_numpy() for s in table7["severity"]]
ax.boxplot([d[np.isfinite(d)] for d in data], positions=list(table7["severity"]), orientation="horizontal",
           widths=0.5, whis=(10, 90), showfliers=False)
ax.set_xscale("log")
for v in physical.VISIBILITY_LEVELS_M:
    ax.axvline(v, color="0.8", lw=0.8, zorder=0)
ax.set(xlabel="equivalent visibility V_eq (m, log); grey lines: the sweep's eight levels",
       ylabel="ImageNet-C fog severity", title=f"ImageNet-C fog in metres ({n_fog_scenes} scenes)")
ax.text(1.0, 1.02, "box: IQR; whiskers: P10–P90", transform=ax.transAxes, ha="right", va="bottom", fontsize=7)
fig.tight_layout()
figures.save(fig, NB_ID, "table7-imagenet-c-fog-in-metres")
plt.show()
_med = {s_: float(np.nanmedian(d[np.isfinite(d)])) for s_, d in zip(table7["severity"], data, strict=True)}
_s0, _s1 = min(_med), max(_med)
_v4 = physical.VISIBILITY_LEVELS_M[3]
print(f"The median equivalent visibility {'falls' if _med[_s1] < _med[_s0] else 'rises'} from {_med[_s0]:.3g} m at "
      f"severity {_s0} to {_med[_s1]:.3g} m at severity {_s1}; {sum(v < _v4 for v in _med.values())} of {len(_med)} "
      f"severities have their median below the sweep's level 4 ({_v4:.3g} m).")

# %% [markdown]
# Reading the table: every synthetic scene is seen by the same camera (1.6 m high, pitched 6° down) over
# an endless ground plane, so the depth distributions — and with them $V_{\text{eq}}$ — differ little from
# scene to scene (P90/P10 close to 1, against 6-8x over COCO in seed 003). Severities 3 and 4 share the
# haze strength $c = 2.5$ and hence the gain. What the synthetic table shares with the paper's is the
# ordering and the scale: each severity is one visibility, tens of metres, and all five lie within a factor
# of two of each other while the physical sweep spans a factor of 128.

# %% [markdown]
# ## The default sweep of notebooks 03-07
#
# Scoring every model on every perturbation at every level is the paper-scale run. By default the later notebooks
# sweep a small manifest (`corrupt.default_sweep()`, the manifest named `default`): one ImageNet-C type per family at
# all five severities, plus the eight physical fog levels — small enough to score the model organisms on a few
# hundred items on a CPU in minutes. The full sets are named manifests (`corrupt.manifest(name)`).

# %%
sweep = corrupt.manifest(manifest)
sweep_table = pd.DataFrame([
    {"perturbation": n, "family": corrupt.info(n).family, "levels": ", ".join(map(str, lv)),
     "parameters": ", ".join(f"{corrupt.info(n).param(k):g}" for k in lv), "unit": corrupt.info(n).unit}
    for n, lv in sweep.items()
])
print(f"manifest {manifest!r}: {len(sweep)} perturbations, {sum(map(len, sweep.values()))} corrupted "
      "conditions (plus clean)")
display(sweep_table)
sizes = pd.Series({name: sum(map(len, corrupt.manifest(name).values())) for name in corrupt.manifest_names()},
                  name="corrupted conditions")
display(sizes.to_frame())

# %% [markdown]
# ## Results
#
# The registry (one row per perturbation and level with its physical parameter), every named manifest, and
# the Table VII numbers (per image and summarised) go to `results/02_corruption_sweeps/`. The later notebooks
# do not read them: each names its manifest in a parameter and asks the library for it.

# %%
registry.to_csv(OUT / "registry.csv", index=False, float_format="%.6g")
(OUT / "manifests.json").write_text(json.dumps({n: corrupt.manifest(n) for n in corrupt.manifest_names()},
                                               indent=1) + "\n")
per_image.to_parquet(OUT / "fog_equivalent_visibility.parquet", index=False)
table7.to_csv(OUT / "table7_imagenet_c_fog_in_metres.csv", index=False, float_format="%.6g")
repro.save_env_snapshot(OUT)
print(f"wrote {sorted(p.name for p in OUT.iterdir())}")

# %% [markdown]
# ## Exercises
#
# Each exercise names one change. Write down your prediction first, then make the change (in the parameters cell, or
# with `-p NAME VALUE` under papermill), run the notebook again and read the check cell under the exercise: it
# computes its verdict from the tables of your run (`vlmrobust.corrupt.exercises`), and until the change is made it
# says so and reports what the unchanged run shows.

# %% [markdown]
# ### Exercise 1: The 5 % convention
#
# **Change:** set `convention: str = "5%"` (Koschmieder's $K = 2.996$ instead of $3.912$).
#
# **Predict first:** $\beta = K/V$ for fog and $\beta_c = (K/V)\,a_w(c)/\min_c a_w(c)$ for water. Does the
# contrast threshold change which arm is harsher at equal visibility? Do the ImageNet-C equivalents in Table VII
# move up or down?
#
# **Look at:** the water-against-fog table and Table VII. The check passes when water still transmits less
# luminance than fog at every visibility.

# %%
corrupt.exercise_02_1(water_fog, convention)

# %% [markdown]
# ### Exercise 2: Break "an ImageNet-C severity is tens of metres" on purpose
#
# **Change:** in the Table VII cell, replace the first line by `fog_families = ["chart"]` (chart scenes: a flat
# board 2 m from the camera).
#
# **Predict first:** ImageNet-C fog applies the same gain to every image whatever its depth; physical fog's
# contrast loss depends on the distance. Seed 003 maps severity 1 to 55-110 m on COCO. What visibility is it
# worth on a scene whose every pixel is 2 m away?
#
# **Look at:** Table VII and its box plot. The check passes when severity 1's median $V_{\mathrm{eq}}$ falls
# under 10 m: the equivalence is a property of the scenes' depth, not of the corruption.

# %%
corrupt.exercise_02_2(table7, fog_items)

# %% [markdown]
# ### Exercise 3: Few scenes, one camera
#
# **Change:** set `n_fog_scenes: int = 10`.
#
# **Predict first:** on COCO the P90/P10 spread of $V_{\mathrm{eq}}$ is 6-8. Will ten synthetic scenes give a
# wide spread, or does the shared camera over an endless ground plane keep it near 1?
#
# **Look at:** the P90/P10 column of Table VII. The check passes when it stays under 1.5 at every severity.

# %%
corrupt.exercise_02_3(table7)
