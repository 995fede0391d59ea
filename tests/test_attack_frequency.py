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


def test_the_rebuilt_processor_path_is_exact_and_refuses_other_processors(organisms):
    import twins

    items, imgs = organisms
    lm = models.load("tiny-letters-long")
    f = attack.pixel_path(lm, imgs[0])
    want = lm.processor.image_processor(images=[imgs[0]], return_tensors="pt")["pixel_values"]
    torch.testing.assert_close(f(torch.as_tensor(np.array(imgs[0]), dtype=torch.float32)[None] / 255), want, atol=1e-6, rtol=0)
    model, proc = twins.tiny_qwen2_vl()
    qwen = models.LoadedModel(model, proc, proc.tokenizer, "letters", "q", None)
    with pytest.raises(NotImplementedError, match="pixel_values"):
        attack.pixel_path(qwen, imgs[0])


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
