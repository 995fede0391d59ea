"""Frequency-constrained PGD, band projections, spectra of perturbations, the fine ablation and blank images."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import torch

from vlmrobust import attack, corrupt, data, models, score, synth
from vlmrobust.corrupt import controls, frequency

torch.set_num_threads(1)


@pytest.mark.parametrize("mode", attack.MODES)
def test_band_projection_is_idempotent_and_orthogonal(mode):
    rng = np.random.default_rng(0)
    d = rng.standard_normal((2, 32, 48, 3))
    p = attack.project_band(d, mode)
    np.testing.assert_allclose(attack.project_band(p, mode), p, atol=1e-12)
    q = attack.project_band(rng.standard_normal(d.shape), mode)
    assert abs(float(((d - p) * q).sum())) < 1e-9  # the residual is orthogonal to the band
    if mode != "pixel":
        band = (0.0, 0.25) if mode == "low" else (0.5, np.inf)
        assert frequency.band_energy_share(p[0], band) == pytest.approx(1.0, abs=1e-9)
        assert abs(p.mean(axis=(1, 2))).max() < 1e-12  # no DC in either band
    with pytest.raises(ValueError, match="mode"):
        attack.project_band(d, "mid")


@pytest.fixture(scope="module")
def organisms():
    items = synth.generate(1, 3, families=["colour", "shape", "verify"])
    imgs = [data.load_image(r) for r in items.image_ref]
    return items, imgs


@pytest.mark.parametrize("name", ["tiny-letters-long", "tiny-long"])
@pytest.mark.parametrize("mode", attack.MODES)
def test_pgd_stays_in_the_budget_and_rescoring_uses_the_scoring_path(organisms, name, mode):
    items, imgs = organisms
    lm = models.load(name)
    meth = models.default_method(lm.answer_format)
    clean = score.predict(lm, items, imgs, methods=[meth])
    out = attack.pgd(lm, items, imgs, clean.pred_idx.tolist(), mode=mode, method=meth, steps=4, progress=False)
    for adv, d, im in zip(out["adv"], out["delta"], imgs, strict=True):
        assert adv.dtype == np.uint8 and adv.shape == im.shape
        assert np.abs(d).max() <= attack.EPS + 1e-12  # after quantisation, too
        np.testing.assert_allclose(d, (adv.astype(float) - im.astype(float)) / 255)
    assert ((out["in_band"] > 0.5) & (out["in_band"] <= 1.0 + 1e-12)).all()
    adv_pred = score.predict(lm, items, out["adv"], methods=[meth])
    # the attack lowers the probability of the base answer on average
    p0 = np.mean([p[k] for p, k in zip(clean.probs, clean.pred_idx, strict=True)])
    p1 = np.mean([p[k] for p, k in zip(adv_pred.probs, clean.pred_idx, strict=True)])
    assert p1 < p0
    t = attack.pgd_table(clean, {mode: adv_pred.assign(in_band=out["in_band"])})
    assert t.ASR.iloc[0] == pytest.approx(1 - adv_pred.correct.mean()) and t.n.iloc[0] == len(items)


def test_the_organisms_path_is_exact(organisms):
    _, imgs = organisms
    lm = models.load("tiny-letters-long")
    f = attack.pixel_path(lm, imgs[0])
    want = lm.processor.image_processor(images=[imgs[0]], return_tensors="pt")["pixel_values"]
    assert f.exact and f.layout == "plain"
    torch.testing.assert_close(f(_x(imgs[0])), want, atol=1e-6, rtol=0)


# ----------------------------------------------------------------- the processors' pixel paths, rebuilt in torch

# (twin, variant, image size, pixel_values shape): every size forces a resize; the tiling ones give several tiles
CASES = [
    ("tiny_llava", "", (40, 56), (1, 3, 32, 32)),  # shortest edge to 32 (bicubic), centre crop
    ("tiny_qwen2_vl", "", (40, 56), (32, 3 * 2 * 8 * 8)),  # smart_resize to 32x64: 4x8 patches of 8, T = 2
    ("tiny_idefics3", "", (40, 56), (1, 1, 3, 32, 32)),  # no splitting: Lanczos to 22x32, then to 32x32
    ("tiny_idefics3", "split", (40, 56), (1, 5, 3, 32, 32)),  # 46x64 -> 64x64: 2x2 tiles + global image
    ("tiny_llava_onevision", "", (40, 56), (1, 5, 3, 32, 32)),  # base + 2x2 tiles of the 64x64 pinpoint
    ("tiny_gemma3", "", (40, 56), (1, 3, 32, 32)),  # bilinear to 32x32
]
IDS = [f"{a}{'-' + v if v else ''}" for a, v, _, _ in CASES]


def _x(image: np.ndarray) -> torch.Tensor:
    return torch.as_tensor(np.array(image), dtype=torch.float32)[None] / 255


def _image(shape, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, 256, (*shape, 3), dtype=np.uint8)


_TWINS: dict = {}


def _twin(arch: str, variant: str = "") -> models.LoadedModel:
    import twins

    if (arch, variant) not in _TWINS:
        model, proc = getattr(twins, arch)()
        if variant == "split":
            from transformers.models.idefics3 import image_processing_pil_idefics3 as idefics3

            proc.image_processor = idefics3.Idefics3ImageProcessorPil(
                size={"longest_edge": 64}, do_image_splitting=True, max_image_size={"longest_edge": 32})
        if arch == "tiny_gemma3":  # its image projection is initialised to zero (a blind model): give it weights
            w = model.model.multi_modal_projector.mm_input_projection_weight
            with torch.no_grad():
                w.copy_(torch.randn(w.shape, generator=torch.Generator().manual_seed(0)) / w.shape[0] ** 0.5)
        _TWINS[arch, variant] = models.LoadedModel(model, proc, proc.tokenizer, "letters", arch, None, name=arch)
    return _TWINS[arch, variant]


def _prompt_inputs(lm, image):
    from vlmrobust.forward import model_inputs

    prompt = models.build_prompt(lm.processor, "What colour is the object?", ["red", "green", "blue"])
    return model_inputs(lm, [prompt], [image]), [models.letter_token_ids(lm.tokenizer, prompt, 3)]


@pytest.mark.parametrize(("arch", "variant", "size", "shape"), CASES, ids=IDS)
def test_the_rebuilt_path_gives_the_processors_pixel_values_and_the_gradient_reaches_the_pixels(
        arch, variant, size, shape):
    from vlmrobust.attack import pixels

    lm = _twin(arch, variant)
    image = _image(size)
    f = attack.pixel_path(lm, image)
    inputs, conts = _prompt_inputs(lm, image)
    want = inputs["pixel_values"]
    assert tuple(want.shape) == shape  # the case exercises the layout it names
    got = f(_x(image))
    assert got.shape == want.shape and not f.exact
    # Pillow-backend processors: exact, resampling included (Pillow's coefficients and uint8 rounding)
    assert f.tol == pixels.EXACT_TOL and float((got - want).abs().max()) <= 1e-5
    assert f.err == pytest.approx(float((got - want).abs().max())) and f.prob_gap <= attack.AGREE_TOL
    # the gradient of the option loss reaches the original pixels, everywhere the processor keeps them
    x = _x(image).requires_grad_(True)
    logp = attack._option_log_probs(lm, "letter", inputs, f(x), conts)
    (g,) = torch.autograd.grad(-logp[0][0], x)
    assert torch.isfinite(g).all() and float((g != 0).float().mean()) > (0.7 if arch == "tiny_llava" else 0.95)


def test_a_path_that_resamples_differently_is_refused(monkeypatch):
    from vlmrobust.attack import pixels

    lm = _twin("tiny_llava")
    monkeypatch.setattr(pixels, "_resample_code", lambda st: 2)  # bilinear for the processor's bicubic
    with pytest.raises(pixels.PathMismatch, match="off by"):
        attack.pixel_path(lm, _image((40, 56)))


def test_a_torchvision_backend_that_resamples_is_allowed_one_uint8_level(monkeypatch):
    from vlmrobust.attack import pixels

    lm = _twin("tiny_llava")
    ip = lm.processor.image_processor
    monkeypatch.setattr(type(ip), "backend", property(lambda self: "torchvision"))
    level = ip.rescale_factor / min(ip.image_std)  # 0.0146 for CLIP's std
    assert pixels.build(lm.processor, (40, 56)).tol == pytest.approx(level + pixels.EXACT_TOL)
    assert pixels.build(lm.processor, (32, 32)).tol == pixels.EXACT_TOL  # nothing resampled: exact still
    f, image = pixels.build(lm.processor, (40, 56)), _image((40, 56))
    inputs, _ = _prompt_inputs(lm, image)
    shifted = dict(inputs, pixel_values=inputs["pixel_values"] + 0.9 * level * (torch.rand(
        inputs["pixel_values"].shape, generator=torch.Generator().manual_seed(0)) < 0.005))
    f.check(f(_x(image)), shifted)  # a few values one level off: a rounding tie, accepted
    with pytest.raises(pixels.PathMismatch, match="off by"):
        f.check(f(_x(image)), dict(inputs, pixel_values=inputs["pixel_values"] + 0.9 * level))  # all of them


def test_an_unknown_image_processor_is_refused_by_name():
    from transformers.image_processing_backends import PilBackend

    class OddImageProcessor(PilBackend):
        def _preprocess(self, images, **kw):  # pragma: no cover - never called
            raise AssertionError

    lm = _twin("tiny_llava")
    proc = type("P", (), {"image_processor": OddImageProcessor()})()
    with pytest.raises(NotImplementedError, match="OddImageProcessor"):
        attack.pixel_path(models.LoadedModel(lm.model, proc, lm.tokenizer, "letters", "odd", None), _image((8, 8)))


TWIN_ITEMS = pd.DataFrame({
    "item_id": ["c0", "s0", "c1"], "task": ["colour", "shape", "colour"], "category": ["attr"] * 3,
    "question": ["What colour is the object?", "Which shape is this?", "What colour is the object?"],
    "options": [["red", "green", "blue"], ["red square", "green circle", "blue star"], ["blue", "red", "yellow"]],
    "answer_idx": [0, 1, 2], "abstain_idx": [-1, -1, -1],
})


@pytest.mark.parametrize("method", ["letter", "loglik"])
@pytest.mark.parametrize(("arch", "variant"), [(a, v) for a, v, _, _ in CASES], ids=IDS)
def test_pgd_on_every_twin_beats_a_random_sign_perturbation_of_the_same_budget(arch, variant, method):
    lm = _twin(arch, variant)
    imgs = [_image((40, 56), 1), _image((40, 56), 2), _image((48, 40), 3)]  # two sizes: two batches
    clean = score.predict(lm, TWIN_ITEMS, imgs, methods=[method])
    base = clean.pred_idx.tolist()
    out = attack.pgd(lm, TWIN_ITEMS, imgs, base, mode="pixel", method=method, eps=attack.EPS, steps=3,
                     progress=False)
    rng = np.random.default_rng(0)
    rand = [np.clip(im + np.sign(rng.standard_normal(im.shape)) * 8, 0, 255).astype(np.uint8) for im in imgs]
    for adv, d, im in zip(out["adv"], out["delta"], imgs, strict=True):
        assert adv.dtype == np.uint8 and adv.shape == im.shape
        assert np.abs(d).max() <= attack.EPS + 1e-12 and np.abs(d).max() > 0
    assert (out["path_err"] <= 1e-5).all()  # each batch checked: the Pillow-backend twins are exact

    def p_base(images):
        pred = score.predict(lm, TWIN_ITEMS, images, methods=[method])
        return np.array([p[k] for p, k in zip(pred.probs, base, strict=True)])

    p0, p_adv, p_rand = p_base(imgs), p_base(out["adv"]), p_base(rand)
    assert (p_adv < p0).all() and p_adv.mean() < p_rand.mean()
    assert (p0 - p_adv).mean() > 2 * abs(p0 - p_rand).mean()  # the gradient's direction, not just any noise


def test_low_band_noise_has_no_dc_like_the_full_band():
    rng = np.random.default_rng(1)
    for band in ("low", "high", "all"):
        eta = frequency.band_noise((64, 64, 3), band, rng)
        assert abs(eta.mean(axis=(0, 1))).max() < 1e-12 and eta.std() == pytest.approx(1.0)
    assert corrupt.info("noise_low").extra["version"] == 2


def test_spectral_drift_sees_the_phase_of_a_cyclic_shift():
    img = data.load_image(synth.generate(1, 0, families=["colour"]).image_ref[0])
    shifted = corrupt.apply(img, "translate", 8)
    # magnitudes unchanged: the power per band is the same ...
    for band in frequency.DRIFT_BANDS:
        m = frequency.band_mask(*img.shape[:2], band)
        a = np.abs(np.fft.rfft2(img.astype(float), axes=(0, 1))).sum(-1)[m]
        b = np.abs(np.fft.rfft2(shifted.astype(float), axes=(0, 1))).sum(-1)[m]
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-6)
    # ... but the spectrum moved
    assert min(frequency.spectral_drift(img, shifted).values()) > 0.01
    assert frequency.spectral_drift(img, img) == {"low": 0.0, "mid": 0.0, "high": 0.0}
    centres, prof = frequency.radial_profile(img.astype(float) - img.mean())
    assert len(centres) == len(prof) == 24 and np.nanmax(prof) > 0


def test_fine_ablation_levels_run_from_mild_to_harsh():
    img = data.load_image(synth.generate(1, 0, families=["shape"]).image_ref[0])
    x = img.astype(float)
    assert len(frequency.FINE_CUTOFFS) == 24
    for name in ("lowpass_fine", "highpass_fine"):
        errs = [np.abs(frequency.fine_ablation(img, name, lv).astype(float) - x).mean() for lv in (1, 6, 12, 18, 24)]
        assert all(a <= b + 1e-9 for a, b in zip(errs, errs[1:], strict=False)), name
    np.testing.assert_array_equal(frequency.fine_ablation(img, "lowpass_fine", 1), img)  # c = 1.42 keeps all
    assert frequency.fine_param("lowpass_fine", 1) == max(frequency.FINE_CUTOFFS)
    assert frequency.fine_param("highpass_fine", 1) == min(frequency.FINE_CUTOFFS)
    np.testing.assert_array_equal(frequency.fine_ablation(img, "gaussian_noise", 2, key="a"),
                                  corrupt.apply(img, "gaussian_noise", 2, key="a"))
    with pytest.raises(ValueError, match="fine ablation"):
        frequency.fine_ablation(img, "lowpass_fine", 25)


def test_blank_image_is_uniform_grey():
    img = np.zeros((40, 48, 3), np.uint8)
    out = controls.blank_image(img, "blank_grey", 1)
    assert out.shape == img.shape and (out == 128).all()
    assert controls.blank_param("blank_grey", 1) == 128.0
    np.testing.assert_array_equal(controls.blank_image(img, "translate", 1), corrupt.apply(img, "translate", 1))
    with pytest.raises(ValueError, match="one level"):
        controls.blank_image(img, "blank_grey", 2)


def test_a_sweep_with_a_custom_corruption_function_keys_it(out_roots):
    from vlmrobust import sweep

    items = synth.generate(1, 5, families=["colour"])
    m = models.zoo.names("evaluated")[0]
    a = sweep.predictions([m], items, {"lowpass_fine": [1, 24]}, corrupt_fn=frequency.fine_ablation,
                          param_fn=frequency.fine_param, progress=False)
    assert set(a.shards.status) == {"done"}
    assert sorted(a.table[a.table.perturbation == "lowpass_fine"].param) == sorted(
        [max(frequency.FINE_CUTOFFS), min(frequency.FINE_CUTOFFS)])
    spec = sweep.SweepSpec(models=[m], items=items, conditions={"lowpass_fine": [1, 24]})
    keys = {s.key for s in sweep.plan(spec, frequency.fine_param)}
    assert set(a.shards.key) != keys  # the corruption function's identity enters the keys
    assert isinstance(a.table, pd.DataFrame)
