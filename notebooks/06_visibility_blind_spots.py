# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3 (vlmrobust)
#     language: python
#     name: vlmrobust
# ---

# %% [markdown]
# # 06 · Visibility blind spots: does confidence follow the loss of visibility?
#
# Fog and water are swept on a physical axis, the visibility range V in metres, over scenes with exact metric
# depth; at each level we read accuracy, the internal and the verbalized confidence and an explicit abstain
# option, and measure how far in V each awareness signal lags behind accuracy: the blind-spot width W.
#
# * **Reproduces:** seed 003 (*Visibility blind spots*): Tables IV–X and Figs. 2–8 on the model organisms, and
#   the paper's claims in a closing claims table; its Table V follows from its Tables IX–X under the
#   definitions used here (`tests/test_visibility.py`).
# * **You will learn:** where accuracy falls to chance on the metre axis, whether a model's confidence, its
#   stated confidence or its abstain option fall with it, how calibration and error detection degrade, what an
#   ImageNet-C fog severity is worth in metres, and what blank and shuffled images reveal.

# %%
import json
import math

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import torch
from IPython.display import display

from vlmrobust import corrupt, data, depth, figures, params, paths, repro, schema, sweep
from vlmrobust.analysis import visibility
from vlmrobust.models import zoo
from vlmrobust.models.prompts import CONFIDENCE_WORDINGS, TEMPLATES
from vlmrobust.synth import visibility as scenes_mod

NB_ID = "06_visibility_blind_spots"
figures.use_style()
pd.set_option("display.max_rows", 400)
pd.set_option("display.max_columns", 40)
pd.set_option("display.width", 200)

# %% tags=["parameters"]
models: list = []  # zoo names, role:<role>, model folders or hub ids; empty: the evaluated and control organisms
items_source: str = "synth"  # synth (shared synthetic scenes) or coco (COCO-style annotations and images)
coco_annotations: str = ""  # COCO instances JSON file when items_source is coco
coco_images: str = ""  # folder of the COCO images when items_source is coco
n_scenes: int = 12  # scenes; each gives one t2 and two t3 questions, in three abstain variants
image_size: int = 64  # side of the synthetic scenes in pixels (the organisms see 64 x 64)
t2_question: str = "name"  # what t2 asks of a synthetic scene: name (its shape, as the paper) or colour
seed: int = 0  # seed of the scenes, option orders, the shuffled control and the bootstrap
wording: str = "organisms"  # prompts: organisms (their own template) or seed003 (Table II wording)
internal: str = "token_prob"  # internal confidence: token_prob (as the paper) or confidence (over the options)
abstain_mid: str = "fixed"  # abstain mid-level: fixed (0.5, fits Table V best) or clean ((clean + 1) / 2)
visibility_range: str = "extended"  # fog and water levels: paper (250 m to 1.95 m) or extended (from 16000 m)
sky_depth_m: float = 80.0  # sky depth in metres in the arms (80: a metric depth model's cap); 0 keeps it infinite
sky_only: bool = True  # run the sky-only control (the sky becomes the veiling light, t is 1 elsewhere)
depth_provider: str = "exact"  # exact (synthetic depth), pipeline (a metric depth model) or plane (constant plane)
depth_model: str = ""  # metric depth model of the pipeline provider (hub id or folder)
depth_fov_deg: float = 60.0  # horizontal field of view assumed for real images (planar to ray depth)
plane_m: float = 10.0  # distance of the constant-plane depth fallback in metres
verbal: str = "auto"  # verbalized confidence sweep: auto (models whose clean answers parse), all or none
table6_scenes: int = 300  # scenes asked with the confidence wordings v2 and v3 (Table VI)
n_boot: int = 1000  # bootstrap resamples of the scenes (95 percent intervals)
min_gap: float = 0.1  # a clean value must exceed chance by this much for its crossing to be defined
murky_m: float = 15.625  # Fig. 5 pools the levels at or below this visibility in metres
n_fog_scenes: int = 0  # scenes measured for Table VII (0 means every scene)
batch_size: int = 16  # items per forward pass
torch_threads: int = 1  # torch threads while scoring (1 on shared machines)
executor: str = "dask"  # where shards run: local (this process) or dask (a LocalCluster, or dask_scheduler)
dask_workers: int = 2  # worker processes of the LocalCluster when executor is dask
dask_scheduler: str = ""  # address of a running Dask scheduler to use instead of a LocalCluster ("" for none)
progress: bool = True  # progress bars
variant: str = ""  # a parameter file of params/<this notebook>/ applied over these defaults ("lesson", ...)

# %%
UNCHANGED = params.use_variant(NB_ID, globals())  # variant "lesson": the lesson in one step
P = visibility.Params.resolve(globals())  # every parameter checked; the body reads P.<name>
BASE = {m: visibility.base_name(m) for m in P.models}  # a blind twin blind:NAME has the zoo metadata of NAME
BEHAVIOUR = {m: (zoo.meta(b).get("behaviour", "") if b in zoo.names() else "") for m, b in BASE.items()}
ROLE = {m: (zoo.meta(b).get("role", "") if b in zoo.names() else "evaluated") for m, b in BASE.items()}
SKY_CAP = P.sky_depth_m if P.sky_depth_m > 0 else math.inf
ARMS = {"fog_physical+box": "fog", "underwater+box": "water"}
EXT = {"fog_physical_ext+box": "fog", "underwater_ext+box": "water"}
ARM_LEVELS = {name: list(corrupt.info(name).levels) for name in ARMS}
if P.visibility_range == "extended":  # the six levels above 250 m; the paper's eight come from the arms above
    ARM_LEVELS.update({name: list(range(1, 7)) for name in EXT})
    ARMS = {**ARMS, **EXT}
LEVEL_OF = {n: {corrupt.info(n).param(lv): lv for lv in lvs} for n, lvs in ARM_LEVELS.items()}
FULL_CONDITIONS = {"blank+box": [1]}  # every abstain variant: Table VIII reads both abstain rates on the blank image
PLAIN_CONDITIONS = {"fog+box": [1, 2, 3, 4, 5]}  # accuracy only (Tables VII, VIII): questions without abstain
if P.sky_only:
    PLAIN_CONDITIONS.update({"sky_only_fog+box": [1], "sky_only_water+box": [1]})
SWEEP = dict(seed=P.seed, batch_size=P.batch_size, torch_threads=P.torch_threads, progress=P.progress)
repro.seed_everything(P.seed)
torch.set_num_threads(P.torch_threads)
OUT = paths.results_dir(NB_ID)
print(f"models: {P.models}; controls: {[m for m in P.models if ROLE[m] == 'control'] or 'none'}")
print("behaviours: " + (", ".join(f"{m}: {b}" for m, b in BEHAVIOUR.items() if b) or "no control organism in the zoo "
                        "(no aware organism, no talker): the positive control and the verbal lens are not available"))

# %% [markdown]
# ## Choices this notebook makes (seed 003 prints no method section)
#
# * **Tasks.** t2 asks the boxed object's **name**, as the paper's t2 does: on the synthetic world its shape
#   (scenes of the `shape` family; three other shapes as distractors; `t2_question = "colour"` asks its colour
#   instead, on `colour`-family scenes). t3's false question names t2's first distractor; the options' order
#   is seeded per scene and the same in every abstain variant.
# * **Box after the degradation.** The `+box` perturbations repaint the pixels that have the box's exact
#   colour after degrading (for ImageNet-C fog the box pixels are blacked out first, so the image maximum
#   that sets its gain is the box-free one except under the box's outline).
# * **Depth.** The sky gets the finite depth a metric depth model gives it: 80 m, the `max_depth` of the
#   outdoor metric model of `paper.yaml` (`sky_depth_m`; 0 keeps the synthetic sky infinitely far, where any fog
#   at any V turns the whole sky into the veiling light). Clean images and the controls keep the scene's depth.
# * **Signals.** Internal confidence = `token_prob`, the chosen answer token's probability over the whole
#   vocabulary, as the paper's "token-probability confidence" (`internal = "confidence"`: renormalised over the
#   options); verbalized confidence = mean over parsed answers; accuracy and internal confidence from the
#   questions without an abstain option, each abstain rate from its own variant.
# * **Blind spot.** Mid-levels as in `vlmrobust.analysis.visibility.blind_spot` (confidence half-way to
#   chance; abstain a fixed 0.5, the rule that best reproduces the paper's Table V from its Table IX, shown
#   below; `abstain_mid = "clean"`: half-way from the clean rate to 1); first crossing, interpolated linearly
#   in $\log V$; bounds from intervals; n/a for a clean abstain rate above 0.5 and for a clean value less than
#   `min_gap` above chance; 95 % percentile intervals over `n_boot` resamples of the scenes.
# * **Transmittance of the object.** Measured per arm and level on probe images, mean of the three channels.
# * **ImageNet-C gain.** Measured on each image with the haze cancelled by a same-maximum reference (see below).
# * **Controls.** Blank = uniform grey 128 with the box; shuffled = a seeded derangement of the scenes; sky-only
#   = the sky (infinite depth) set to the arm's veiling light, every other pixel unchanged.

# %% [markdown]
# ## Shared scenes, two tasks, the box drawn after the degradation
#
# Every scene holds one **boxed object**. The identification task **t2** asks "What is the object inside the
# red box?" with four names (the object and three others: here its shape and three other shapes, a name
# question as in the paper; a colour question would fail far earlier under water, which removes red within
# metres); the verification task **t3** asks "Is the object inside the red box a(n)
# {obj}?" twice, about the object (yes) and about the first distractor (no). Each question comes without an
# abstain option and with each of seed 003's two abstain wordings as the last option. Chance is $1/K$ over
# the answer options: 1/4 for t2, 1/2 for t3.
#
# Seed 003 adds the red box **to the degraded image**, so the box never fades. The sweep engine sees the
# boxed clean image; the `+box` perturbations of `vlmrobust.corrupt.boxed` degrade it and paint the box again,
# which equals degrading the box-free image and then drawing the box, byte for byte, for every per-pixel
# degradation.
#
# Depth comes from a **depth provider**: the synthetic world's exact ray distance by default; for real images
# a metric depth model through a `transformers` pipeline, or a constant plane, with planar depth $z$ turned
# into ray distance $r = z\sqrt{1 + ((u-c_x)^2 + (v-c_y)^2)/f^2}$ at a stated field of view. In the fog and
# water arms the synthetic sky sits at `sky_depth_m` = 80 m, as a metric depth model would place it.

# %%
if P.items_source == "synth":
    SCENES = scenes_mod.synth_scenes(P.n_scenes, P.seed, P.image_size, question=P.t2_question)
    PROVIDER = None if P.depth_provider == "exact" else depth.make_provider(
        P.depth_provider, model=P.depth_model, fov_deg=P.depth_fov_deg, plane_m=P.plane_m)
    SCENES_RAW = depth.attach_depth(SCENES, PROVIDER)  # the depth without a sky cap (sky-only control, Table VII)
    SCENES_ARM = depth.attach_depth(SCENES_RAW, None, sky_cap_m=SKY_CAP)
else:
    PROVIDER = depth.make_provider(P.depth_provider, model=P.depth_model, fov_deg=P.depth_fov_deg, plane_m=P.plane_m)
    SCENES_RAW = depth.real_scenes(P.coco_annotations, P.coco_images, P.n_scenes, P.seed, PROVIDER, progress=P.progress)
    SCENES_ARM = depth.attach_depth(SCENES_RAW, None, sky_cap_m=SKY_CAP)
ITEMS = scenes_mod.scene_items(SCENES_RAW, wording=P.wording)
ITEMS_ARM = scenes_mod.scene_items(SCENES_ARM, wording=P.wording)
META = scenes_mod.item_meta(ITEMS)
PLAIN = ITEMS[META.loc[ITEMS.item_id, "abstain"].to_numpy() == "none"].reset_index(drop=True)
PLAIN_ARM = ITEMS_ARM[ITEMS_ARM.item_id.isin(PLAIN.item_id)].reset_index(drop=True)
SHUFFLED = scenes_mod.shuffled_items(PLAIN, SCENES_RAW, P.seed)
print(f"{len(SCENES_RAW)} scenes ({P.items_source}), {len(ITEMS)} questions "
      f"({(ITEMS.task == 't2').sum()} t2, {(ITEMS.task == 't3').sum()} t3 over "
      f"{len(scenes_mod.ABSTAIN_VARIANTS)} abstain variants); depth: "
      f"{'exact synthetic ray distance' if PROVIDER is None else PROVIDER.name}; sky depth in the arms: "
      f"{'infinite' if math.isinf(SKY_CAP) else f'{SKY_CAP:g} m'}")
display(ITEMS[ITEMS.item_id.str.startswith(SCENES_RAW.scene_id[0])][["item_id", "task", "question", "options",
                                                                    "answer_idx", "abstain_idx"]])
tpl_t2, _ = scenes_mod.templates(P.wording, "t2", "none")
print(f"prompt template {tpl_t2!r} ({TEMPLATES[tpl_t2].source})")

# %%
sc0 = SCENES_RAW.iloc[0]
fig = visibility.figures.scene_figure(data.load_image(sc0.image_ref), data.load_depth(sc0.depth_ref), sc0.scene_id,
                                      data.load_image(SHUFFLED.image_ref[0]), seed=P.seed)
figures.save(fig, NB_ID, "fig2-scene-under-degradations")
plt.show()
print(visibility.figures.scene_finding(data.load_depth(sc0.depth_ref)))

# %% [markdown]
# ## The sweeps
#
# Fog follows Koschmieder's law, $I = J\,t + A(1-t)$ with $t = e^{-\beta d}$ and $\beta = 3.912/V$ (2 %
# contrast threshold), in linear RGB on the ray distance $d$; the underwater arm attenuates each channel in
# proportion to pure water's absorption spectrum (`vlmrobust.corrupt.physical`). The paper's eight levels run
# from $V = 250$ m to $1.953125$ m by factors of 2; the extended range starts at 16,000 m. Per model the 24
# conditions of the paper: clean, 8 fog, 8 water, 5 ImageNet-C fog, blank and shuffled (plus the sky-only
# control). All predictions come from `vlmrobust.sweep.predictions`, the shared, content-keyed shard cache.
#
# Verbalized confidence needs generated text: every model is first asked with the confidence request on the
# clean images; with `verbal = "auto"` only the models whose answers parse there are swept (the others are
# "n/a" throughout).
#
# The default visibility range is the **extended** one (six more levels from 16,000 m to 500 m above the paper's eight),
# so that a fall that begins above 250 m is seen; `params/06_visibility_blind_spots/paper.yaml` runs the
# paper's eight levels on 1,000 COCO scenes. Scenes are few by default (`n_scenes`), so the intervals are wide.

# %%
CLIENT = sweep.notebook_client(P.executor, P.dask_scheduler, P.dask_workers)  # one cluster for every sweep below
SWEEP |= dict(executor=P.executor, client=CLIENT)


def score(models_, items_, conditions, methods=None, confidence="v1", include_clean=True):
    """Predictions for ``items_`` (grouped by the template each task and abstain variant needs)."""
    if not models_:
        return pd.DataFrame(columns=list(schema.PRED_COLUMNS))
    meta = scenes_mod.item_meta(items_)
    groups: dict[tuple, list] = {}
    for iid, task in zip(items_.item_id, items_.task, strict=True):
        tpl, meth = scenes_mod.templates(P.wording, task, meta.loc[iid, "abstain"], confidence)
        groups.setdefault((tpl, tuple(meth) if meth else None), []).append(iid)
    parts = []
    for (tpl, meth), ids in groups.items():
        sub = items_[items_.item_id.isin(ids)].reset_index(drop=True)
        use = list(methods) if methods is not None else (list(meth) if meth else None)
        res = sweep.predictions(models_, sub, conditions, methods=use, template=tpl, include_clean=include_clean,
                                **SWEEP)
        parts.append(res.table)
    return pd.concat(parts, ignore_index=True)


ARM_CONDITIONS = {n: ARM_LEVELS[n] for n in ARMS}
if math.isinf(SKY_CAP):
    parts = [score(P.models, ITEMS, {**ARM_CONDITIONS, **FULL_CONDITIONS})]
else:  # capped sky depth in the arms only; clean and the controls keep the scenes' own depth
    parts = [score(P.models, ITEMS, FULL_CONDITIONS), score(P.models, ITEMS_ARM, ARM_CONDITIONS, include_clean=False)]
PRED = pd.concat(parts + [score(P.models, PLAIN, PLAIN_CONDITIONS, include_clean=False)], ignore_index=True)
PRED_SHUF = score(P.models, SHUFFLED, {})
PROBE = score(P.models, PLAIN, {}, methods=["verbal"])
PARSE_CLEAN = PROBE.groupby("model")["verbal_conf"].apply(lambda s: float(s.notna().mean())).reindex(P.models)
VERBAL_MODELS = [m for m in P.models if P.verbal == "all" or (P.verbal == "auto" and PARSE_CLEAN[m] > 0)]
verbal_conds = {**ARM_CONDITIONS, "blank+box": [1]}
if math.isinf(SKY_CAP):
    PRED_VERBAL = score(VERBAL_MODELS, PLAIN, verbal_conds, methods=["verbal"])
else:
    PRED_VERBAL = pd.concat([score(VERBAL_MODELS, PLAIN, {"blank+box": [1]}, methods=["verbal"]),
                             score(VERBAL_MODELS, PLAIN_ARM, ARM_CONDITIONS, methods=["verbal"],
                                   include_clean=False)], ignore_index=True)
PRED_VERBAL = pd.concat([PRED_VERBAL, PROBE[~PROBE.model.isin(VERBAL_MODELS)]], ignore_index=True)
display(pd.DataFrame({"clean parse rate of 'Confidence: N'": PARSE_CLEAN.round(3),
                      "verbal sweep": ["yes" if m in VERBAL_MODELS else "n/a" for m in P.models]}))
ALL = pd.concat([PRED, PRED_VERBAL], ignore_index=True)
methods_used = PRED.groupby("model")["method"].agg(lambda s: ", ".join(sorted(set(s))))
print("scoring methods: " + ", ".join(f"{m}: {k}" for m, k in methods_used.items()))

# %% [markdown]
# ## Every signal at every level (Tables IX–X, Figs. 3 and 8)
#
# At each level: accuracy; the **internal confidence**, the probability of the chosen option, read as the
# `internal` parameter says: `token_prob` (the default, as the paper's token-probability confidence) is its
# answer token's probability over the whole vocabulary, `confidence` the same renormalised over the answer
# options. The dotted chance line is $1/K$: exact for `confidence`; for `token_prob` a model that cannot tell
# the options apart gives the chosen one $1/K$ of the mass the options hold, so the line is exact only as far as
# the options hold all of it (the cell prints that share for this run). The mean **verbalized
# confidence** over parsed answers, with its parse rate; the **abstain rate** with the main wording ("I cannot
# tell, the image is too unclear to decide.") and with "I don't know" (abstain 2).

# %%
LONG = visibility.signals_long(ALL, ITEMS, ARMS, internal=P.internal)  # ITEMS_ARM has the same ids and meta
CUBE = visibility.signal_cube(LONG)
MEANS = visibility.level_means(CUBE)
tables_9_10 = visibility.signal_tables(CUBE, MEANS)
for task, label in [("t2", "Table IX: identification (t2)"), ("t3", "Table X: verification (t3)")]:
    print(label + "; NaN: not available (no parseable verbalized confidence)")
    display(tables_9_10[tables_9_10.task == task].round(2))
mass = (PRED["token_prob"] / PRED["confidence"]).groupby(PRED["model"]).mean()  # the options' share of the vocabulary
print(f"internal confidence read as {P.internal!r}; the answer options hold on average "
      f"{mass.min():.4f} to {mass.max():.4f} of the probability mass (by model), so chance for "
      f"{'token_prob' if P.internal == 'token_prob' else 'token_prob (not used here)'} lies at most "
      f"{(1 - mass.min()):.2%} below the 1/K line")
PARSE = visibility.parse_rate_table(visibility.condition_summary(PRED_VERBAL, PLAIN, internal=P.internal), ARMS)
print("parse rate of the verbalized confidence ('Confidence: N') per level (clean only for models not swept):")
display(PARSE.round(2))

fig = visibility.figures.signals_figure(CUBE, MEANS, P.models, "t2", "Fig. 3: identification (t2), every signal "
                                        "against V (dotted: chance)")
figures.save(fig, NB_ID, "fig3-signals-vs-visibility-t2")
plt.show()
print(visibility.figures.signals_finding(CUBE, MEANS, P.models, "t2"))
fig = visibility.figures.signals_figure(CUBE, MEANS, P.models, "t3", "Fig. 8: verification (t3), same conventions")
figures.save(fig, NB_ID, "fig8-signals-vs-visibility-t3")
plt.show()
print(visibility.figures.signals_finding(CUBE, MEANS, P.models, "t3"))

# %% [markdown]
# ## Two murky levels (Table IV)
#
# Accuracy, mean internal and verbalized confidence and both abstain rates at $V = 7.8$ m and $V = 1.95$ m.

# %%
table_4 = visibility.murky_table(CUBE, MEANS, (7.8125, 1.953125))
display(table_4.round(2))

# %% [markdown]
# ## The blind-spot width (Table V, Fig. 4)
#
# For accuracy the **mid-level** is half-way between the clean accuracy and chance, $m = (a_0 + 1/K)/2$;
# $V_{\mathrm{acc}}$ is its **first crossing**, scanning from the clearest level towards the murkiest,
# interpolated linearly in $\log V$ between the two adjacent levels $j-1, j$:
#
# $$\log V^\ast = \log V_{j-1} + \frac{y_{j-1} - m}{y_{j-1} - y_j}\,(\log V_j - \log V_{j-1}).$$
#
# For the abstain rates the mid-level is a fixed $m = 0.5$ (`abstain_mid = "fixed"`) or half-way between the
# clean rate and 1, $(y_0 + 1)/2$ (`"clean"`); the fixed 0.5 reproduces the paper's Table V from its Table IX
# better (the comparison below: on its one row that tells them apart, W = −0.056 against −0.053 for a printed
# −0.06, and 67 % against 22 % of the curves within the printing's rounding give the printed value). For the
# internal and verbalized confidence the mid-level is half-way between the clean value and chance (stated: the
# paper's rows cannot tell this from half-way to 0). The blind-spot width of a signal is
#
# $$W = \log_{10}\frac{V_{\mathrm{acc}}}{V_{\mathrm{aware}}},$$
#
# positive when the signal reacts only in murkier air than accuracy. A signal that never reaches its mid-level
# inside the sweep gives the lower bound $W \ge \log_{10}(V_{\mathrm{acc}}/V_{\min})$ ("≥", arrows in Fig. 4);
# accuracy already below its mid-level at the first level gives $V_{\mathrm{acc}} \ge V_1$. A clean abstain rate
# above 0.5 makes W not interpretable, and so does a clean accuracy or confidence less than `min_gap` above
# chance (n/a, no bar). Intervals: 95 % percentile bootstrap over **scenes** (both t3 questions of a scene,
# every level, signal and arm resampled together), seeded, all cells in one vectorised pass.

# %%
display(visibility.abstain_mid_comparison(20_000, repro.rng(NB_ID, "abstain-mid", P.seed)).round(4))
SPOTS = visibility.blind_spot_table(CUBE, P.n_boot, repro.rng(NB_ID, "bootstrap", P.seed) if P.n_boot else None,
                                   min_gap=P.min_gap, abstain_mid=P.abstain_mid)
table_5 = visibility.table_v(SPOTS)
display(table_5)
print("flags: " + ("; ".join(sorted({f"{r.model} {r.task} {r.arm} {r.signal}: {r.flag}"
                                     for r in SPOTS.itertuples() if r.flag})) or "none"))
check = visibility.blind_spot_table(CUBE, P.n_boot, repro.rng(NB_ID, "bootstrap", P.seed) if P.n_boot else None,
                                   min_gap=P.min_gap, abstain_mid=P.abstain_mid)
print("a second bootstrap with the same seed gives identical intervals:",
      bool(np.array_equal(check[["w_lo", "w_hi"]].to_numpy(), SPOTS[["w_lo", "w_hi"]].to_numpy(), equal_nan=True)))

# %%
fig = visibility.figures.blind_spot_figure(SPOTS, P.models)
figures.save(fig, NB_ID, "fig4-blind-spot-width")
plt.show()
print(visibility.figures.blind_spot_finding(SPOTS))

# %% [markdown]
# ### W from fitted curves (the project's reading)
#
# The literal crossing reads two adjacent levels, so at a dozen scenes its interval spans about a decade.
# Beside it, `visibility.wfit` fits every signal's curve over all levels at once, a logistic in
# $x = \log_{10} V$ between a murky floor $a$ and the clean level $b$,
# $p(x) = a + (b - a)\,\sigma(k(x - c))$ (binomial likelihood over every question, a weak prior on the
# floor, the clean level and the steepness), and reads each crossing of the same mid-level off the fitted
# curve; W is then seed 003's $\log_{10}(V_{\mathrm{acc}}/V_{\mathrm{aware}})$ of those crossings, with a
# bootstrap over the same scene resamples. On simulated curves with a known W at this notebook's size it is
# unbiased within 0.02 decades, its 95 % interval covers the true W in 95 % of runs, and it is less than half
# as wide as the literal crossing's (`tests/test_wfit.py`). Crossings outside the sweep stay bounds ("≥", "<").

# %%
WFIT = visibility.wfit.wfit_table(CUBE, P.n_boot, repro.rng(NB_ID, "bootstrap", P.seed) if P.n_boot else None,
                                  min_gap=P.min_gap, abstain_mid=P.abstain_mid)
keys = ["model", "task", "arm", "signal"]
side = SPOTS.merge(WFIT, on=keys, how="inner", suffixes=("", "_fit"))
wcols = [c for c in side.columns if c.lower().startswith("w") and c not in keys]
display(side[keys + wcols].round(3))
both = side.dropna(subset=["W", "W_lo", "W_hi", "w", "w_lo", "w_hi"])
both = both[(both["W_kind"] == "=") & (both["w_kind"] == "=")]
print(f"{len(both)} signal curves with a point W by both methods: median interval width "
      f"{float((both['W_hi'] - both['W_lo']).median()):.2f} decades fitted, "
      f"{float((both['w_hi'] - both['w_lo']).median()):.2f} literal")

# %% [markdown]
# ## Calibration and error detection per level (Fig. 5)
#
# The **expected calibration error** with 10 equal-width bins, $\mathrm{ECE} = \sum_b \frac{n_b}{N}\,
# |\mathrm{acc}_b - \mathrm{conf}_b|$, and the **AUROC** of each confidence for telling right from wrong
# answers (beyond the paper: 0.5 is no better than chance), at every level. Fig. 5 pools t2's murky levels
# ($V \le 15.6$ m, fog and water) against the clean images.

# %%
CAL = visibility.calibration_by_level(LONG)
display(visibility.calibration_wide(CAL).round(2))
REL, REL_SUM = visibility.pooled_reliability(LONG, task="t2", max_v=P.murky_m)
display(REL_SUM.round(3))
fig = visibility.figures.reliability_figure(REL, REL_SUM, P.models, P.murky_m)
figures.save(fig, NB_ID, "fig5-reliability-murky-vs-clean")
plt.show()
print(visibility.figures.reliability_finding(REL_SUM, P.models, P.murky_m))

# %% [markdown]
# ## Abstaining under two wordings (Fig. 6), and the boxed object's own transmittance
#
# The abstain rate on t2 with the main wording and with "I don't know", with accuracy for reference. Then the
# same accuracy against the **boxed object's transmittance** $t = e^{-\beta d_{\mathrm{obj}}}$ (measured on
# probe images for each arm and level, mean over the three channels): the visibility V also fogs the sky
# (80 m away by default), so plotting against the object's own $t$ separates "the object is hidden" from "the
# sky turned grey". The sky-only control changes nothing but the sky, veiled completely: where its accuracy
# (Table VIII, and a construction row of the claims) is far below the clean accuracy, a model reacts to the grey sky,
# not to the object; with the sky infinitely far (`sky_depth_m = 0`) any fog at any V veils it, and V_acc
# would measure that cue.

# %%
fig = visibility.figures.abstain_figure(CUBE, MEANS, P.models)
figures.save(fig, NB_ID, "fig6-abstain-wordings")
plt.show()
print(visibility.figures.abstain_finding(CUBE, MEANS, P.models))

ACC_T = visibility.accuracy_vs_transmittance(LONG, ARMS, LEVEL_OF)
fig = visibility.figures.transmittance_figure(ACC_T, P.models, min_n=5)
figures.save(fig, NB_ID, "accuracy-vs-object-transmittance")
plt.show()
print(visibility.figures.transmittance_finding(ACC_T, P.models, min_n=5))

# %% [markdown]
# ## Verbalized confidence under three wordings (Table VI)
#
# The confidence request of seed 003 (v1) and two wordings of our own (the paper does not print its v2 and v3):
# v2 asks for the percentage of such answers expected to be right and names unclear images; v3 is terse. The
# first `table6_scenes` scenes' t2 questions, at clean, fog 62.5, 15.6, 7.8 and 1.95 m and water 31.25 m.

# %%
print("\n".join(f"{k}: {v}" for k, v in CONFIDENCE_WORDINGS.items()))
t6_scene_ids = set(SCENES_RAW.scene_id[: min(P.table6_scenes, len(SCENES_RAW))])
T6_ITEMS = PLAIN_ARM[(PLAIN_ARM.task == "t2")
                     & PLAIN_ARM.item_id.map(lambda i: META.loc[i, "scene"] in t6_scene_ids)]
T6_CONDS = {"fog_physical+box": [3, 5, 6, 8], "underwater+box": [4]}
if VERBAL_MODELS and len(T6_ITEMS):
    T6 = {v: score(VERBAL_MODELS, T6_ITEMS.reset_index(drop=True), T6_CONDS, methods=["verbal"], confidence=v)
          for v in ("v1", "v2", "v3")}
    acc_main = visibility.condition_summary(PRED[PRED.item_id.isin(T6_ITEMS.item_id)], T6_ITEMS, internal=P.internal)
    table_6 = visibility.verbal_wordings_table(T6, acc_main)
else:
    table_6 = pd.DataFrame({"model": P.models, "note": "n/a: no parseable verbalized confidence (no talker)"})
display(table_6.round(2) if "accuracy" in table_6 else table_6)

# %% [markdown]
# ## ImageNet-C fog on the metre axis (Table VII, Fig. 7)
#
# ImageNet-C fog multiplies intensity differences by a gain $g = m/(m+c)$ and adds a plasma haze. The gain is
# **measured on each image**: the slope of corrupted on clean intensity differences over finite-depth pixels,
# with the haze cancelled by a reference image of the same maximum and the same haze draw (clipping and 8-bit
# truncation included, so severities 3 and 4, with the same $c$, need not coincide). Physical fog retains the
# contrast $\bar t(V) = \overline{e^{-3.912\,d/V}}$ over the same pixels; $V_{\mathrm{eq}}$ solves
# $\bar t(V_{\mathrm{eq}}) = g$ per image. Beside it, each model's t2 accuracy at that severity and its physical
# fog accuracy interpolated at the median $V_{\mathrm{eq}}$.

# %%
fog_sc = SCENES_ARM if not P.n_fog_scenes else SCENES_ARM.head(P.n_fog_scenes)  # the depth the arms see
PER7, TABLE7 = visibility.imagenet_fog_visibility([data.load_image(r) for r in fog_sc.clean_ref],
                                                  [data.load_depth(r) for r in fog_sc.depth_ref], list(fog_sc.scene_id),
                                                  seed=P.seed)
summ = visibility.condition_summary(PRED, ITEMS, internal=P.internal)
table_7 = visibility.fog_severity_table(TABLE7, summ, CUBE, MEANS, P.models)
display(table_7.round(3))

fig = visibility.figures.imagenet_fog_figure(table_7, summ, CUBE, MEANS, P.models)
figures.save(fig, NB_ID, "fig7-imagenet-fog-on-metre-axis")
plt.show()
print(visibility.figures.imagenet_fog_finding(table_7, P.models))

# %% [markdown]
# **Why notebook 02 puts the same severities at fewer metres.** Notebook 02 measures $V_{\mathrm{eq}}$ with the
# synthetic sky infinitely far, so sky pixels take no part in $\bar t(V)$; here the arms' sky sits at
# `sky_depth_m`, and its far pixels pull $\bar t(V)$ down, so the same measured gain needs a longer $V$. The
# cell measures the same scenes both ways.

# %%
if math.isfinite(SKY_CAP) and P.items_source == "synth":
    raw7 = SCENES_RAW.set_index("scene_id").loc[list(fog_sc.scene_id)]
    _, TABLE7_FAR = visibility.imagenet_fog_visibility([data.load_image(r) for r in raw7.clean_ref],
                                                       [data.load_depth(r) for r in raw7.depth_ref],
                                                       list(raw7.index), seed=P.seed)
    both = TABLE7[["severity", "mean_gain", "median_v_m"]].merge(
        TABLE7_FAR[["severity", "median_v_m"]], on="severity", suffixes=("", "_sky_infinite"))
    display(both.round(2))
    print(f"severity 1: median V_eq {both.median_v_m.iloc[0]:.0f} m with the sky at {SKY_CAP:.0f} m (this "
          f"notebook's arms), {both.median_v_m_sky_infinite.iloc[0]:.0f} m with the sky infinitely far (notebook "
          f"02's measurement) on the same scenes and the same measured gains: the sky's depth alone moves it by a "
          f"factor of {both.median_v_m.iloc[0] / both.median_v_m_sky_infinite.iloc[0]:.1f}")
else:
    print("the sky is infinitely far (sky_depth_m = 0) or the scenes are real: V_eq is measured as notebook 02 does")

# %% [markdown]
# ## Image controls (Table VIII)
#
# A uniform grey image with the box kept (**blank**) and a seeded derangement of the scenes (**shuffled**:
# another scene's clean pixels, this question's box): accuracy should fall to chance; on the blank image we
# also read the internal and verbalized confidence and both abstain rates. The **sky-only** control replaces
# only the sky by the veiling light (t = 1 elsewhere).

# %%
summ_verbal = visibility.condition_summary(PRED_VERBAL, PLAIN, internal=P.internal)
shuf = visibility.condition_summary(PRED_SHUF, SHUFFLED, internal=P.internal)
table_8 = visibility.controls_table(summ, shuf, summ_verbal, P.models, sky_only=P.sky_only)
display(table_8.round(2))

# %% [markdown]
# ## Claims
#
# Each claim of the paper's abstract and tables as a row, on the task and arm the paper makes it for, checked
# by `vlmrobust.analysis.visibility.claims`. A row names its **subject** (the organisms it was tried on), its
# **null** (what the claim being false looks like) and its **test** (a 95 % bootstrap interval over scenes, the
# cube's rows with the resamples of the blind-spot table, against a region from the paper). The verdict is
# *reproduced* when the interval lies inside the region, *not reproduced* when wholly outside, *undecided* when
# it straddles an edge (the `decide` column then says what would decide it), *no subject* when no organism has
# the property the claim is about (`measured` names it), and *by construction* when the row holds because of
# how an organism was built. Each rule says "reproduced" on at most 5 % of draws from its null at this
# notebook's default size (`vlmrobust.analysis.visibility.rules`, checked by `tests/test_rules.py`).
#
# **Subjects.** Paper rows use the evaluated organisms whose accuracy falls with V (a model that cannot see,
# such as a blind twin `blind:NAME`, answers every image alike, and "accuracy unchanged" would hold for it
# without any vision). A model is *confident* when its clean mean internal confidence is at least 0.8, and
# *under-confident* when its clean internal confidence lies below its clean accuracy (the paper's SmolVLM2:
# accuracy 0.85, confidence far lower), so a model below 0.8 but calibrated is neither. The abstain rows use
# the models that take the abstain option at all (blank-image abstain rate at least 0.5). Seed 003's W is
# mostly a bound: a bound at or above 0.79 is the paper's own "at least 0.79"; a bound below it is undecided,
# and only a sweep reaching murkier air would decide it.
#
# **Construction rows** are about the controls, built to behave a given way, never pooled into a paper row:
# `aware` abstains where its object's transmittance is below 0.05, so its V_aware must meet the V at which half
# the objects cross that threshold; the error-aware organism `aware-err`, trained to abstain exactly where its
# own answer would be wrong, must show $|W_{\mathrm{abstain}}| \le 0.1$; the learned abstainer `abstainer` is
# judged by nothing under fog (it was offered the abstain option in training only on grey and noise images).
# The `controls` variant (`params/06_visibility_blind_spots/controls.yaml`) runs them on 100 scenes.

# %%
COND = visibility.condition_means(visibility.control_rows(PRED, ITEMS, PRED_SHUF, SHUFFLED, internal=P.internal),
                                  P.n_boot, repro.rng(NB_ID, "obs-conditions", P.seed))
WORD = visibility.condition_means(visibility.wording_rows(T6, T6_ITEMS), P.n_boot,
                                  repro.rng(NB_ID, "obs-wordings", P.seed)) \
    if VERBAL_MODELS and len(T6_ITEMS) else None
claims = visibility.claims_table(
    CUBE, SPOTS, n_boot=P.n_boot, boot_rng=repro.rng(NB_ID, "bootstrap", P.seed), per7=PER7, cond=COND, wordings=WORD,
    long=LONG, distances=META.groupby("scene")["target_distance_m"].first().to_dict(), behaviours=BEHAVIOUR,
    roles=ROLE, rng=repro.rng(NB_ID, "observations", P.seed), models=P.models, min_gap=P.min_gap,
    abstain_mid=P.abstain_mid, murky_m=P.murky_m)
with pd.option_context("display.max_colwidth", 400):
    display(claims)

# %% [markdown]
# ## Results
#
# Written to `results/06_visibility_blind_spots/`: the predictions (`predictions.parquet`, with the verbal,
# shuffled and Table VI rows), the long signal table (`signals.parquet`), Tables IV–X (`table_4.csv` ...
# `table_9_10.csv`), the blind-spot table with intervals and flags (`blind_spots.csv`), calibration per level
# (`calibration_by_level.csv`, `reliability_fig5.csv`), accuracy against the object's transmittance, Table VII
# per image, the claims table (`claims.csv`) and an environment snapshot.

# %%
pd.concat([ALL, PRED_SHUF], ignore_index=True).to_parquet(OUT / "predictions.parquet", index=False)
LONG.to_parquet(OUT / "signals.parquet", index=False)
tables_9_10.to_csv(OUT / "table_9_10.csv", index=False, float_format="%.6g")
table_4.to_csv(OUT / "table_4.csv", index=False, float_format="%.6g")
SPOTS.to_csv(OUT / "blind_spots.csv", index=False, float_format="%.6g")
WFIT.to_csv(OUT / "blind_spots_fitted.csv", index=False, float_format="%.6g")
table_5.to_csv(OUT / "table_5.csv", index=False)
table_6.to_csv(OUT / "table_6.csv", index=False, float_format="%.6g")
table_7.to_csv(OUT / "table_7.csv", index=False, float_format="%.6g")
PER7.to_csv(OUT / "table_7_per_image.csv", index=False, float_format="%.6g")
table_8.to_csv(OUT / "table_8.csv", index=False, float_format="%.6g")
CAL.to_csv(OUT / "calibration_by_level.csv", index=False, float_format="%.6g")
REL.to_csv(OUT / "reliability_fig5.csv", index=False, float_format="%.6g")
ACC_T.to_csv(OUT / "accuracy_vs_transmittance.csv", index=False, float_format="%.6g")
claims.to_csv(OUT / "claims.csv", index=False)
(OUT / "scenes.json").write_text(json.dumps({"n_scenes": len(SCENES_RAW), "source": P.items_source,
                                             "depth": "exact" if PROVIDER is None else PROVIDER.name,
                                             "sky_depth_m": None if math.isinf(SKY_CAP) else SKY_CAP,
                                             "t2_question": P.t2_question}, indent=1))
repro.save_env_snapshot(OUT)
print(f"wrote {sorted(p.name for p in OUT.iterdir())}")

# %% [markdown]
# ## Exercises
#
# Each exercise names one change. Write down your prediction first, then make the change (in the parameters cell, or
# with `-p NAME VALUE` under papermill), run the notebook again and read the check cell under the exercise: it
# computes its verdict from the tables of your run (`vlmrobust.analysis.visibility.exercises`), and until the change
# is made it says so and reports what the unchanged run shows.

# %% [markdown]
# ### Exercise 1: Break the abstain blind spot on purpose
#
# **Change:** add `"aware"` to `models` (e.g. `models: list = ["tiny-letters-long", "talker", "aware"]`).
#
# **Predict first:** seed 003 finds that models almost never pick the abstain option, however murky the image.
# `aware` was trained to abstain exactly when its boxed object's transmittance is below 0.05. In the murkiest
# air, who abstains?
#
# **Look at:** the abstain rows of Table IX and Fig. 6. The check passes when `aware` abstains on most t2
# questions at the murkiest level in both arms while every other model stays at or below 0.1: the claim
# describes the models, not a law of the task.

# %%
visibility.exercise_06_1(tables_9_10, P.models, visibility.Params.resolve(UNCHANGED).as_dict())

# %% [markdown]
# ### Exercise 2: The constant talker
#
# **Change:** add `"talker-90"` to `models`.
#
# **Predict first:** `talker` was trained to state its own binned accuracy; `talker-90` always says
# "Confidence: 90". Whose verbalized confidence can follow the fog, and what will its blind-spot width be?
#
# **Look at:** the verbal rows of Table IX, Fig. 3 and Table V. The check passes when talker-90's stated
# confidence spans less than 0.02 over all levels while another model's moves by at least 0.05.

# %%
visibility.exercise_06_2(tables_9_10, P.models, visibility.Params.resolve(UNCHANGED).as_dict())

# %% [markdown]
# ### Exercise 3: A visibility range that starts high enough
#
# **Change:** set `visibility_range: str = "extended"` (six more levels, from 16,000 m down to 500 m, above the paper's
# eight).
#
# **Predict first:** on the paper's range the organisms' accuracy is already below half-way to chance at 250 m,
# so $V_{\mathrm{acc}}$ is only a bound ("≥ 250"). Where will the crossing land once the range starts far
# higher?
#
# **Look at:** the `V_acc` column of Table V. The check passes when at least one accuracy crossing is located
# (not a bound) above 250 m.

# %%
visibility.exercise_06_3(SPOTS, P.visibility_range, UNCHANGED)
