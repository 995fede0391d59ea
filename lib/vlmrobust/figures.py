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

__all__ = ["PALETTE", "use_style", "save", "model_colors", "model_styles", "legend_outside", "panel_grid", "image_axes",
           "cov_ellipse", "compare_png", "compare_folders"]

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
    "axes.titleweight": "bold",
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


#: Colours for the ninth model on (Paul Tol's muted scheme), so that up to sixteen models stay apart.
PALETTE_MORE = ("#882255", "#44AA99", "#999933", "#AA4499", "#117733", "#332288", "#DDCC77", "#88CCEE")


def model_colors(models) -> dict[str, str]:
    """A stable colour per model name, in the order given (:data:`PALETTE`, then :data:`PALETTE_MORE`)."""
    colours = PALETTE + PALETTE_MORE
    return {m: colours[i % len(colours)] for i, m in enumerate(models)}


#: Markers paired with the colours, so that series stay apart in grey print and for colour-blind readers.
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")


def model_styles(models) -> dict[str, dict[str, str]]:
    """Line keyword arguments per model: its :func:`model_colors` colour, a marker, and a dashed line from the
    ninth model on, so that no two of up to sixteen models share colour, marker and line together."""
    colours = model_colors(models)
    return {m: {"color": colours[m], "marker": MARKERS[i % len(MARKERS)],
                "linestyle": "-" if i < len(PALETTE) else "--"} for i, m in enumerate(models)}


def legend_outside(target, *, where: str = "right", **kw):
    """A legend off the data: right of the axes (``where="right"``) or below the figure (``"below"``).

    ``target`` is an axes (its own handles) or a figure (the handles of its first axes that has any, for one
    legend shared by small multiples). Returns the legend.
    """
    from matplotlib.figure import Figure

    if isinstance(target, Figure):
        ax = next((a for a in target.axes if a.get_legend_handles_labels()[0]), target.axes[0])
        handles, labels = ax.get_legend_handles_labels()
        if where == "below":
            return target.legend(handles, labels, loc="upper center", bbox_to_anchor=(0.5, 0.0),
                                 ncol=kw.pop("ncol", min(len(labels), 6) or 1), **kw)
        return target.legend(handles, labels, loc="center left", bbox_to_anchor=(1.0, 0.5), **kw)
    if where == "below":
        return target.legend(loc="upper center", bbox_to_anchor=(0.5, -0.18), ncol=kw.pop("ncol", 4), **kw)
    return target.legend(loc="center left", bbox_to_anchor=(1.01, 0.5), **kw)


def panel_grid(n_panels: int, ncols: int, panel_h: float, *, width: float = 7.4, pad_h: float = 0.3, **kw):
    """A page-wide grid of small multiples: ``n_panels`` axes, ``ncols`` a row (fewer when fewer panels), each
    ``panel_h`` inches high plus ``pad_h`` for the figure; the empty cells of the last row are switched off.
    ``kw`` goes to ``plt.subplots`` (``sharey``, ...; the layout is constrained). Returns ``(fig, axes)``, the
    2-D axes array."""
    import matplotlib.pyplot as plt

    ncols = max(1, min(ncols, n_panels))
    nrows = -(-n_panels // ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(width, panel_h * nrows + pad_h), squeeze=False,
                             layout="constrained", **kw)
    for ax in axes.flat[n_panels:]:
        ax.axis("off")
    return fig, axes


def image_axes(ax, title: str | None = None, *, frame: bool = True, **title_kw) -> None:
    """Make ``ax`` show an image: no ticks, no grid (no frame with ``frame=False``), optional small title."""
    ax.set_xticks([])
    ax.set_yticks([])
    ax.grid(False)
    if not frame:
        for spine in ax.spines.values():
            spine.set_visible(False)
    if title is not None:
        ax.set_title(title, **{"fontsize": 7, **title_kw})


def cov_ellipse(ax, xy, coverage: float = 0.5, **kw):
    """Draw the ``coverage`` ellipse of a 2-D Gaussian fitted to the points ``xy`` (n × 2); return the patch.

    The ellipse has the points' mean and covariance; its radius is
    sqrt(-2 ln(1 - coverage)) standard deviations (the coverage region of a 2-D
    standard Gaussian). ``None`` is returned for fewer than three points.
    """
    import numpy as np
    from matplotlib.patches import Ellipse

    xy = np.asarray(xy, dtype=float)
    if xy.ndim != 2 or xy.shape[1] != 2:
        raise ValueError(f"xy must be an (n, 2) array, got shape {xy.shape}")
    if not 0 < coverage < 1:
        raise ValueError(f"coverage must be in (0, 1), got {coverage!r}")
    if len(xy) < 3:
        return None
    radius = np.sqrt(-2 * np.log(1 - coverage))
    vals, vecs = np.linalg.eigh(np.cov(xy.T) + 1e-12 * np.eye(2))
    angle = np.degrees(np.arctan2(vecs[1, 1], vecs[0, 1]))
    patch = Ellipse(xy.mean(axis=0), 2 * radius * np.sqrt(vals[1]), 2 * radius * np.sqrt(vals[0]), angle=angle,
                    **{"fill": False, **kw})
    ax.add_patch(patch)
    return patch


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


def compare_png(a: str | Path, b: str | Path, *, level_tol: int = 2, share_tol: float = 0.001) -> dict:
    """Compare two PNG renderings of a figure within a pixel tolerance.

    Machines differ in the last bit of floating point, so two renderings of the
    same figure can differ by a grey level in a few pixels. A pixel *differs*
    when any channel differs by more than ``level_tol`` grey levels; the
    figures ``match`` when they have the same size and at most ``share_tol`` of
    their pixels differ. Returns ``{"match", "same_size", "share", "max_diff"}``.
    """
    import numpy as np
    from PIL import Image

    with Image.open(a) as ia, Image.open(b) as ib:
        x = np.asarray(ia.convert("RGBA"), dtype=np.int16)
        y = np.asarray(ib.convert("RGBA"), dtype=np.int16)
    if x.shape != y.shape:
        return {"match": False, "same_size": False, "share": 1.0, "max_diff": 255}
    diff = np.abs(x - y).max(axis=-1)
    share = float((diff > level_tol).mean())
    return {"match": share <= share_tol, "same_size": True, "share": share, "max_diff": int(diff.max())}


def compare_folders(actual: str | Path, committed: str | Path, nb_ids=None, **tol) -> list[dict]:
    """:func:`compare_png` for every committed ``<nb_id>/<slug>.png`` against ``actual`` (one row each).

    A committed figure missing from ``actual`` is a row with ``match=False`` and
    ``missing=True``; figures only in ``actual`` are rows with ``new=True``.
    """
    actual, committed = Path(actual), Path(committed)
    ids = sorted(nb_ids) if nb_ids else sorted(p.name for p in committed.iterdir() if p.is_dir())
    rows = []
    for nb in ids:
        ours = {p.name for p in (committed / nb).glob("*.png")}
        theirs = {p.name for p in (actual / nb).glob("*.png")}
        for name in sorted(ours | theirs):
            row = {"figure": f"{nb}/{name}", "missing": name not in theirs, "new": name not in ours}
            if row["missing"] or row["new"]:
                row.update(match=False, same_size=False, share=float("nan"), max_diff=0)
            else:
                row.update(compare_png(actual / nb / name, committed / nb / name, **tol))
            rows.append(row)
    return rows
