"""One plotting style for every notebook, and byte-stable figure files.

:func:`save` writes ``figures/<nb_id>/<slug>.png`` and ``.pdf`` with fixed
metadata (no timestamps, no software version), so re-running a notebook on the
same machine rewrites committed figures with identical bytes.
"""

from __future__ import annotations

import re
from pathlib import Path

import matplotlib

from . import paths

__all__ = ["PALETTE", "use_style", "save", "model_colors"]

#: Okabe–Ito colour-blind-safe palette (the default colour cycle).
PALETTE = (
    "#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#F0E442", "#000000",
)

_STYLE = {
    "figure.dpi": 100,
    "savefig.dpi": 150,
    "savefig.bbox": "tight",
    "savefig.pad_inches": 0.05,
    "font.size": 9,
    "axes.titlesize": 10,
    "axes.titleweight": "semibold",
    "axes.labelsize": 9,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "grid.linewidth": 0.6,
    "legend.frameon": False,
    "legend.fontsize": 8,
    "xtick.labelsize": 8,
    "ytick.labelsize": 8,
    "image.cmap": "viridis",
    "image.interpolation": "nearest",
    "pdf.fonttype": 42,
    "svg.hashsalt": "vlmrobust",
    "path.simplify": True,
}

_SLUG = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")


def use_style() -> None:
    """Apply the project style (call once in a notebook's setup cell)."""
    from cycler import cycler

    matplotlib.rcParams.update(_STYLE)
    matplotlib.rcParams["axes.prop_cycle"] = cycler(color=list(PALETTE))


def model_colors(models) -> dict[str, str]:
    """A stable colour per model name, in the order given."""
    return {m: PALETTE[i % len(PALETTE)] for i, m in enumerate(models)}


def save(fig, nb_id: str, slug: str, *, close: bool = False) -> tuple[Path, Path]:
    """Save ``fig`` as ``<FIG_ROOT>/<nb_id>/<slug>.png`` and ``.pdf`` with stable bytes.

    ``slug`` must be lowercase kebab case (``fig7-severity-heatmap``). Returns
    the two paths. The PNG carries no ``Software`` chunk and the PDF no dates or
    producer, so identical figures give identical files.
    """
    if not isinstance(slug, str) or not _SLUG.match(slug):
        raise ValueError(f"slug must be lowercase kebab case (e.g. 'fig7-severity-heatmap'), got {slug!r}")
    if not isinstance(nb_id, str) or not nb_id:
        raise ValueError(f"nb_id must be a notebook id such as '00_embedded_default', got {nb_id!r}")
    out = paths.fig_dir(nb_id)
    png, pdf = out / f"{slug}.png", out / f"{slug}.pdf"
    fig.savefig(png, format="png", metadata={"Software": None})
    fig.savefig(pdf, format="pdf", metadata={"Creator": None, "Producer": None, "CreationDate": None})
    if close:
        import matplotlib.pyplot as plt

        plt.close(fig)
    return png, pdf
