"""What the figure tests read off a drawn Axes, and the fixture that closes their figures."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402
from matplotlib.patches import Rectangle  # noqa: E402


@pytest.fixture(autouse=True)
def close_figures():
    """Close every figure a test drew (imported by a test module, it applies to all its tests)."""
    yield
    plt.close("all")


def bars(ax) -> list[Rectangle]:
    return [p for p in ax.patches if isinstance(p, Rectangle)]


def ticks(ax) -> list[str]:
    return [t.get_text() for t in ax.get_xticklabels()]


def texts(ax) -> list[str]:
    return [t.get_text() for t in ax.texts]


def legend(ax) -> list[str]:
    leg = ax.get_legend()
    return [] if leg is None else [t.get_text() for t in leg.get_texts()]
