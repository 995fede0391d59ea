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
