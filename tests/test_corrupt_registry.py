"""The perturbation registry: metadata, argument checks, determinism and manifests."""

from __future__ import annotations

import math
import subprocess
import sys

import numpy as np
import pytest

from vlmrobust import corrupt, synth
from vlmrobust.corrupt import natural

ALL = corrupt.names()


@pytest.fixture(scope="module")
def scene():
    item = synth.make_item("count", np.random.default_rng(7), size=64)
    return item.image, item.depth


def test_registry_covers_every_perturbation_of_the_issue():
    assert corrupt.IMAGENET_C == tuple(corrupt.names()[:19])
    assert len(corrupt.IMAGENET_C) == 19
    expected = {
        "escalation": {"bruce_blur", "bruce_contrast", "bruce_rotate", "bruce_center_crop"},
        "traversal": {"traverse_topdown", "traverse_bottomup", "traverse_leftright", "traverse_rightleft"},
        "natural": {"translate", "pad_crop", "scale", "scale_pad", "rotate"},
        "overlay": {"text_overlay", "random_text", "box_overlay"},
        "frequency": {"noise_low", "noise_high", "noise_all", "lowpass_keep", "highpass_keep"},
        "visibility": {"fog_physical", "underwater"},
    }
    for family, members in expected.items():
        assert set(corrupt.names(family)) == members
    fams = {corrupt.info(n).family for n in corrupt.IMAGENET_C}
    assert fams == {"noise", "blur", "weather", "photometric", "digital"}


def test_metadata_is_complete_and_consistent():
    for name in ALL:
        m = corrupt.info(name)
        assert m.name == name and m.levels and 0 not in m.levels
        assert len(m.params) == len(m.levels) and all(math.isfinite(p) for p in m.params)
        assert m.param_name and m.unit and m.description and m.source in {"000", "001", "002", "003"}
        assert math.isnan(m.param(0)) and m.param(m.levels[-1]) == m.params[-1]
        assert m.reference == (name in corrupt.IMAGENET_C)
    assert corrupt.info("gaussian_noise").params == (0.08, 0.12, 0.18, 0.26, 0.38)
    assert corrupt.info("bruce_blur").params == (1, 2, 3, 4)
    assert corrupt.info("bruce_contrast").params == (0.9, 0.7, 0.5, 0.3)  # the contrast factor kept
    assert corrupt.info("bruce_rotate").params == (5, 10, 15, 20)
    assert corrupt.info("bruce_center_crop").params == (0.2, 0.4, 0.6, 0.8)
    assert corrupt.info("traverse_topdown").params == (0.2, 0.4, 0.6, 0.8)
    assert corrupt.info("fog_physical").params[0] == 250.0
    assert corrupt.info("fog_physical").params[-1] == 1.953125
    assert corrupt.info("fog_physical").needs_depth and not corrupt.info("fog").needs_depth
    assert corrupt.info("scale").params[0] == 0.9
    assert set(corrupt.info("rotate").params) == {-30.0, 30.0}
    assert corrupt.info("translate").params == (-16, -12, -8, -4, 4, 8, 12, 16)
    assert corrupt.info("gaussian_noise").random and not corrupt.info("contrast").random


@pytest.mark.parametrize("name", ALL)
@pytest.mark.parametrize("shape", [(32, 32), (64, 64), (48, 80)])
def test_every_level_returns_a_new_uint8_image_of_the_same_size(name, shape):
    rng = np.random.default_rng(0)
    img = rng.integers(0, 256, shape + (3,), dtype=np.uint8)
    depth = rng.uniform(0.5, 60, shape).astype(np.float32)
    before = img.copy()
    for level in corrupt.info(name).levels:
        if name == "pad_crop" and min(shape) <= 32 and natural.OFFSETS_PX[level - 1] == -16:
            with pytest.raises(ValueError, match="leaves nothing"):  # a fixed 16 px crop per side of 32 px
                corrupt.apply(img, name, level)
            continue
        out = corrupt.apply(img, name, level, key="k", depth=depth)
        assert out.dtype == np.uint8 and out.shape == img.shape
        assert not np.shares_memory(out, img)
    np.testing.assert_array_equal(img, before)  # the input is never modified


@pytest.mark.parametrize("name", ALL)
def test_level_zero_is_the_identity(scene, name):
    img, depth = scene
    out = corrupt.apply(img, name, 0, depth=depth)
    np.testing.assert_array_equal(out, img)
    assert out is not img


@pytest.mark.parametrize("name", ALL)
def test_same_inputs_same_bytes_and_seeds_matter_only_when_random(scene, name):
    img, depth = scene
    level = corrupt.info(name).levels[-1]
    a = corrupt.apply(img, name, level, seed=1, key="item-1", depth=depth)
    b = corrupt.apply(img, name, level, seed=1, key="item-1", depth=depth)
    np.testing.assert_array_equal(a, b)
    c = corrupt.apply(img, name, level, seed=2, key="item-1", depth=depth)
    d = corrupt.apply(img, name, level, seed=1, key="item-2", depth=depth)
    if corrupt.info(name).random:
        assert not np.array_equal(a, c) and not np.array_equal(a, d)
    else:
        np.testing.assert_array_equal(a, c)
        np.testing.assert_array_equal(a, d)
    assert not np.array_equal(a, img)  # the strongest level changes the image


def test_identical_bytes_in_a_second_process(scene):
    img, depth = scene
    names = ["gaussian_noise", "glass_blur", "frost", "fog", "snow", "spatter", "elastic_transform",
             "shot_noise", "random_text", "noise_high", "fog_physical"]
    code = (
        "import hashlib, numpy as np\n"
        "from vlmrobust import corrupt, synth\n"
        "it = synth.make_item('count', np.random.default_rng(7), size=64)\n"
        f"for n in {names!r}:\n"
        "    out = corrupt.apply(it.image, n, 3, seed=5, key='abc', depth=it.depth)\n"
        "    print(n, hashlib.sha256(out.tobytes()).hexdigest())\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    import hashlib

    here = [f"{n} {hashlib.sha256(corrupt.apply(img, n, 3, seed=5, key='abc', depth=depth).tobytes()).hexdigest()}"
            for n in names]
    assert proc.stdout.split("\n")[:-1] == here


def test_reference_backend_is_seeded_and_leaves_global_state_alone(scene):
    img, _ = scene
    state = np.random.get_state()[1].copy()
    a = corrupt.apply(img, "gaussian_noise", 2, seed=3, key="x", backend="reference")
    b = corrupt.apply(img, "gaussian_noise", 2, seed=3, key="x", backend="reference")
    c = corrupt.apply(img, "gaussian_noise", 2, seed=4, key="x", backend="reference")
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)
    np.testing.assert_array_equal(np.random.get_state()[1], state)
    with pytest.raises(ValueError, match="only backend='native'"):
        corrupt.apply(img, "bruce_blur", 1, backend="reference")


@pytest.mark.parametrize(
    ("kwargs", "exc", "match"),
    [
        ({"image": np.zeros((64, 64, 3), np.float32)}, TypeError, "dtype uint8"),
        ({"image": [[0]]}, TypeError, "numpy.ndarray"),
        ({"image": np.zeros((64, 64), np.uint8)}, ValueError, "HxWx3"),
        ({"image": np.zeros((64, 64, 4), np.uint8)}, ValueError, "HxWx3"),
        ({"image": np.zeros((31, 64, 3), np.uint8)}, ValueError, "at least 32x32"),
        ({"name": "nope"}, ValueError, "unknown perturbation name 'nope'"),
        ({"name": 3}, TypeError, "name must be a str"),
        ({"level": 6}, ValueError,
         r"level 6 is out of range for 'contrast'; allowed: 0 \(clean\) or \[1, 2, 3, 4, 5\]"),
        ({"level": -1}, ValueError, "out of range"),
        ({"level": 1.0}, TypeError, "level must be an int"),
        ({"level": True}, TypeError, "level must be an int"),
        ({"seed": 1.5}, TypeError, "seed must be an int"),
        ({"key": 3}, TypeError, "key must be a str"),
        ({"backend": "gpu"}, ValueError, "backend must be one of"),
        ({"depth": np.zeros((10, 10), np.float32)}, ValueError, "depth must have the image's shape"),
        ({"depth": np.full((64, 64), np.nan, np.float32)}, ValueError, "NaN"),
        ({"depth": np.full((64, 64), -1.0, np.float32)}, ValueError, "negative"),
        ({"depth": np.zeros((64, 64), np.int32)}, TypeError, "floating dtype"),
        ({"bogus": 1}, ValueError, r"unknown option\(s\) \['bogus'\] for 'contrast'"),
    ],
)
def test_bad_arguments_raise_clear_errors(kwargs, exc, match):
    args = {"image": np.zeros((64, 64, 3), np.uint8), "name": "contrast", "level": 1}
    args.update(kwargs)
    image, name, level = args.pop("image"), args.pop("name"), args.pop("level")
    with pytest.raises(exc, match=match):
        corrupt.apply(image, name, level, **args)


def test_physical_perturbations_require_depth(scene):
    img, _ = scene
    with pytest.raises(ValueError, match="needs depth"):
        corrupt.apply(img, "fog_physical", 3)
    with pytest.raises(ValueError, match="convention must be one of"):
        corrupt.apply(img, "fog_physical", 3, depth=np.ones((64, 64), np.float32), convention="10%")
    with pytest.raises(ValueError, match="airlight must be in"):
        corrupt.apply(img, "fog_physical", 3, depth=np.ones((64, 64), np.float32), airlight=2.0)


def test_names_and_info_errors():
    with pytest.raises(ValueError, match="family must be one of"):
        corrupt.names("weathr")
    with pytest.raises(ValueError, match="unknown perturbation"):
        corrupt.info("fogg")


def test_manifests():
    default = corrupt.default_sweep()
    assert default == corrupt.manifest("default") == corrupt.manifest()
    assert default["fog_physical"] == [1, 2, 3, 4, 5, 6, 7, 8]
    n_conditions = sum(len(v) for v in default.values())
    assert 20 <= n_conditions <= 40
    fams = {corrupt.info(n).family for n in default}
    assert {"noise", "blur", "weather", "photometric", "digital", "visibility"} <= fams
    default["fog"].append(99)  # a fresh copy each call
    assert corrupt.default_sweep()["fog"] == [1, 2, 3, 4, 5]
    imc = corrupt.manifest("imagenet_c")
    assert list(imc) == list(corrupt.IMAGENET_C) and all(v == [1, 2, 3, 4, 5] for v in imc.values())
    assert set(corrupt.manifest("bruce")) == set(corrupt.names("escalation")) | set(corrupt.names("traversal"))
    assert set(corrupt.manifest("visibility")) == {"fog_physical", "underwater"}
    assert set(corrupt.manifest("natural")) >= {"translate", "text_overlay", "box_overlay"}
    assert set(corrupt.manifest("all")) == set(corrupt.names())
    for name in corrupt.manifest_names():
        for pert, levels in corrupt.manifest(name).items():
            assert set(levels) <= set(corrupt.info(pert).levels)
    with pytest.raises(ValueError, match="manifest name must be one of"):
        corrupt.manifest("everything")


def test_registry_table_lists_every_level_with_its_parameter():
    table = corrupt.registry_table()
    assert set(table.perturbation) == set(corrupt.names())
    for name in ("gaussian_noise", "fog_physical"):
        m = corrupt.info(name)
        rows = table[table.perturbation == name]
        assert rows.level.tolist() == list(m.levels) and rows.param.tolist() == list(m.params)
        assert (rows.unit == m.unit).all() and (rows.needs_depth == m.needs_depth).all()
