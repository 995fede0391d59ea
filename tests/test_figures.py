import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
import pytest

from vlmrobust import figures


def _plot():
    figures.use_style()
    fig, ax = plt.subplots(figsize=(3, 2))
    x = np.linspace(0, 1, 50)
    ax.plot(x, x**2, label="x²")
    ax.set_title("stable bytes")
    ax.legend()
    return fig


def test_save_writes_byte_stable_png_and_pdf(out_roots):
    _, fig_root = out_roots
    png, pdf = figures.save(_plot(), "99_test", "demo-plot", close=True)
    assert png == fig_root / "99_test" / "demo-plot.png" and pdf.suffix == ".pdf"
    first = png.read_bytes(), pdf.read_bytes()
    assert first[0][:8] == b"\x89PNG\r\n\x1a\n" and first[1][:5] == b"%PDF-"
    assert b"CreationDate" not in first[1] and b"Software" not in first[0]
    figures.save(_plot(), "99_test", "demo-plot", close=True)
    assert (png.read_bytes(), pdf.read_bytes()) == first


@pytest.mark.parametrize("slug", ["Fig7", "fig 7", "fig_7", "", "-x"])
def test_save_rejects_bad_slug(out_roots, slug):
    fig = _plot()
    with pytest.raises(ValueError, match="kebab"):
        figures.save(fig, "99_test", slug)
    plt.close(fig)


def test_default_figures_go_to_an_ignored_folder(monkeypatch, tmp_path):
    from vlmrobust import paths

    monkeypatch.delenv("VLMROBUST_FIG_ROOT", raising=False)
    monkeypatch.setenv("VLMROBUST_RESULTS_ROOT", str(tmp_path))
    assert paths.fig_root() == tmp_path / "figures" != paths.COMMITTED_FIGURES
    monkeypatch.setenv("VLMROBUST_FIG_ROOT", str(paths.COMMITTED_FIGURES))  # what `make figures` does
    assert paths.fig_root() == paths.COMMITTED_FIGURES
    monkeypatch.setenv("VLMROBUST_FIG_ROOT", "")  # an empty variable means the default
    assert paths.fig_root() == tmp_path / "figures"


def _png(path, arr):
    from PIL import Image

    Image.fromarray(arr).save(path)
    return path


def test_compare_png_tolerates_last_bit_differences(tmp_path):
    base = np.full((100, 100, 3), 200, dtype=np.uint8)
    a = _png(tmp_path / "a.png", base)
    near = base.copy()
    near[0, :5] += 1  # one grey level in 0.05 % of pixels: another machine's rounding
    assert figures.compare_png(a, _png(tmp_path / "b.png", near)) == {"match": True, "same_size": True,
                                                                     "share": 0.0, "max_diff": 1}
    far = base.copy()
    far[:10, :10] = 0  # a changed figure: 1 % of pixels far off
    got = figures.compare_png(a, _png(tmp_path / "c.png", far))
    assert not got["match"] and got["share"] == 0.01 and got["max_diff"] == 200
    assert not figures.compare_png(a, _png(tmp_path / "d.png", base[:50]))["same_size"]


def test_compare_folders_reports_missing_and_new(tmp_path):
    base = np.zeros((10, 10, 3), dtype=np.uint8)
    for root in ("run", "committed"):
        (tmp_path / root / "01_nb").mkdir(parents=True)
        _png(tmp_path / root / "01_nb" / "same.png", base)
    _png(tmp_path / "committed" / "01_nb" / "gone.png", base)
    _png(tmp_path / "run" / "01_nb" / "extra.png", base)
    rows = {r["figure"]: r for r in figures.compare_folders(tmp_path / "run", tmp_path / "committed")}
    assert rows["01_nb/same.png"]["match"] and rows["01_nb/gone.png"]["missing"] and rows["01_nb/extra.png"]["new"]
    assert not rows["01_nb/gone.png"]["match"] and not rows["01_nb/extra.png"]["match"]


def test_model_colours_stay_apart_for_sixteen_models():
    from vlmrobust import figures

    names = [f"m{i}" for i in range(17)]
    c = figures.model_colors(names)
    assert len(set(list(c.values())[:16])) == 16 and c["m16"] == c["m0"]
    assert list(c.values())[:8] == list(figures.PALETTE)  # up to eight models: the colours they always had
