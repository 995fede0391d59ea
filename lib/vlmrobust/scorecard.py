"""The scorecard: every claim of the four papers, its verdict on the default run, on the variant that decides
it and on blind twins, and, where it is not reproduced, why.

``python -m vlmrobust.scorecard`` (run by ``make run`` after the notebooks, by ``make figures`` into the
committed ``figures/``) reads each notebook's ``claims.csv`` under the results root (the default run in
``<root>/<NB>/``, parameter variants in ``<root>/variants/<variant>/<NB>/``) and writes

* ``<root>/scorecard.csv``: one row per claim (columns :data:`COLUMNS`);
* the figure ``<FIG_ROOT>/scorecard/scorecard.png``: the verdicts as a grid, a row per claim, grouped by paper.

**Which variant decides a row.** Each notebook names the variants that can decide its undecided rows
(:data:`DECIDING`: larger samples, the controls, Bench-C). The scorecard takes, for each claim, the first of
them whose results exist and decide it (reproduced or not reproduced); if none decides it, the first
whose results exist; if none was run, the column says ``not run``.

**Why a claim is not reproduced** (``why``), read from the final verdict (the deciding variant's where it
decides, else the default run's):

* ``undecided`` → *sample size* (the row's ``decide`` column says what size would decide it);
* ``no subject`` → *no organism with the property* (the row's ``measured`` column names it);
* ``by construction`` → *a limit of the synthetic world*: the row holds because of how the world or the
  organism was built, which is not a reproduction;
* ``not reproduced`` → *a finding about these organisms*: the test decided against the claim.

**Blind twins** (``blind`` column): the verdict of the same row when the notebook's ``blind`` variant scores
blind twins (``blind:NAME``) of its evaluated organisms, and ``blind_subject`` what it was tried on there. A
vision claim reproduced there would mean its rule passes without vision; :func:`blind_passes` lists such rows
(a row tried on no model, e.g. ImageNet-C fog measured in metres, is not a vision claim).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import pandas as pd

from . import figures, paths
from .stats.claims import BY_CONSTRUCTION, NO_SUBJECT, NOT_REPRODUCED, REPRODUCED, UNDECIDED, VERDICTS

__all__ = ["NOTEBOOKS", "DECIDING", "COLUMNS", "scorecard", "missing_runs", "blind_passes", "summary",
           "markdown_summary", "with_readme_table", "figure", "main"]

#: Notebooks with claims: (paper it checks, short name of the paper).
NOTEBOOKS = {
    "01_dataset_selection": ("000", "RAS: dataset selection (§IV)"),
    "04_ras_attribution": ("000", "RAS: attribution (§V-VII)"),
    "05_representation_drift": ("002", "representation drift"),
    "06_visibility_blind_spots": ("003", "visibility blind spots"),
    "07_escalation_traversal": ("001", "escalation (BRUCE)"),
    "08_reliability_card": ("card", "the reliability card (no paper)"),
}

#: Variants that can decide a notebook's undecided rows, in the order they are tried.
DECIDING = {
    "01_dataset_selection": ("large",),
    "04_ras_attribution": ("benchc",),
    "05_representation_drift": (),
    "06_visibility_blind_spots": ("controls",),
    "07_escalation_traversal": (),
    "08_reliability_card": ("controls", "benchc"),
}

#: Deciding variants too long for ``make scorecard`` by default (Bench-C scale, the large pool): ``ALL=1`` adds them.
LONG_RUNS = {("01_dataset_selection", "large"), ("04_ras_attribution", "benchc"), ("08_reliability_card", "benchc")}

COLUMNS = ("paper", "notebook", "section", "claim", "default", "variant", "variant_verdict", "blind",
           "blind_subject", "final", "why", "measured", "decide")

WHY = {UNDECIDED: "sample size", NO_SUBJECT: "no organism with the property",
       BY_CONSTRUCTION: "a limit of the synthetic world", NOT_REPRODUCED: "a finding about these organisms",
       REPRODUCED: ""}

DECIDED = (REPRODUCED, NOT_REPRODUCED)


def _read(path: Path) -> pd.DataFrame | None:
    if not path.is_file():
        return None
    df = pd.read_csv(path, keep_default_na=False)
    missing = {"claim", "verdict", "section"} - set(df.columns)
    if missing:
        raise ValueError(f"{path}: not a claims table (no column {sorted(missing)}); rerun its notebook")
    bad = sorted(set(df["verdict"]) - set(VERDICTS))
    if bad:
        raise ValueError(f"{path}: verdicts {bad} are not in the vocabulary {VERDICTS}")
    return df


def _lookup(df: pd.DataFrame | None, section: str, claim: str) -> pd.Series | None:
    if df is None:
        return None
    hit = df[(df["section"] == section) & (df["claim"] == claim)]
    return hit.iloc[0] if len(hit) else None


def scorecard(root: str | Path | None = None) -> pd.DataFrame:
    """The scorecard of the results under ``root`` (default: the results root). Notebooks without a default
    ``claims.csv`` are left out; an empty frame when none has run."""
    root = Path(root) if root is not None else paths.results_root()
    rows = []
    for nb, (paper, _) in NOTEBOOKS.items():
        base = _read(root / nb / "claims.csv")
        if base is None:
            continue
        variants = {v: _read(root / "variants" / v / nb / "claims.csv") for v in DECIDING[nb]}
        blind = _read(root / "variants" / "blind" / nb / "claims.csv")
        for r in base.itertuples(index=False):
            found = {v: _lookup(df, r.section, r.claim) for v, df in variants.items()}
            ran = [v for v, hit in found.items() if hit is not None]
            deciding = next((v for v in ran if found[v]["verdict"] in DECIDED), ran[0] if ran else "")
            v_row = found.get(deciding) if deciding else None
            b_row = _lookup(blind, r.section, r.claim)
            final_row = v_row if v_row is not None and v_row["verdict"] in DECIDED else r._asdict()
            final = final_row["verdict"]
            rows.append({
                "paper": paper, "notebook": nb, "section": r.section, "claim": r.claim, "default": r.verdict,
                "variant": deciding, "variant_verdict": v_row["verdict"] if v_row is not None else
                ("not run" if DECIDING[nb] else ""),
                "blind": b_row["verdict"] if b_row is not None else "not run",
                "blind_subject": b_row["subject"] if b_row is not None and "subject" in b_row else "", "final": final,
                "why": WHY[final], "measured": final_row["measured"], "decide": final_row["decide"]})
    return pd.DataFrame(rows, columns=list(COLUMNS))


def missing_runs(root: str | Path | None = None, *, long: bool = False) -> list[tuple[str, str]]:
    """The (notebook, variant) runs the scorecard reads (blind twins and :data:`DECIDING`) without results;
    those of :data:`LONG_RUNS` only when ``long``."""
    root = Path(root) if root is not None else paths.results_root()
    return [(nb, v) for nb in NOTEBOOKS for v in ("blind", *DECIDING[nb])
            if not (root / "variants" / v / nb / "claims.csv").is_file() and (long or (nb, v) not in LONG_RUNS)]


def blind_passes(card: pd.DataFrame) -> pd.DataFrame:
    """Paper claims that blind twins reproduce (should be empty: their rules would pass without vision). Rows
    whose subject on the blind run names no blind twin (a property of the images, with no model involved) are
    not vision claims and are left out."""
    tried_blind = card["blind_subject"].astype(str).str.contains("blind:", regex=False)
    return card[(card["section"] == "paper") & (card["blind"] == REPRODUCED) & tried_blind]


def summary(card: pd.DataFrame) -> pd.DataFrame:
    """Counts of final verdicts of the paper claims, per paper (rows) and verdict (columns)."""
    paper = card[card["section"] == "paper"]
    out = pd.crosstab(paper["notebook"].map(lambda nb: NOTEBOOKS[nb][1]), paper["final"])
    return out.reindex(columns=[v for v in VERDICTS if v in out.columns])


README_MARK = ("<!-- scorecard table: python -m vlmrobust.scorecard --readme figures/scorecard/scorecard.csv -->",
               "<!-- end of scorecard table -->")


def markdown_summary(card: pd.DataFrame) -> str:
    """The counts of :func:`summary` as a Markdown table, with the paper claims' total per verdict (the card's rows,
    which make no paper's claim, are listed but not counted in it)."""
    s = summary(card)
    head = "| notebook | " + " | ".join(s.columns) + " |"
    lines = [head, "|---" * (len(s.columns) + 1) + "|"]
    lines += [f"| {name} | " + " | ".join(str(int(v)) for v in row) + " |" for name, row in s.iterrows()]
    claims = s[[not name.endswith("(no paper)") for name in s.index]]  # the card's rows are no paper's claims
    lines.append("| **all paper claims** | " + " | ".join(f"**{int(v)}**" for v in claims.sum()) + " |")
    return "\n".join(lines)


def with_readme_table(text: str, card: pd.DataFrame) -> str:
    """``text`` (the README) with the block between :data:`README_MARK` replaced by :func:`markdown_summary`."""
    start, end = README_MARK
    if start not in text or end not in text:
        raise ValueError(f"the README has no scorecard block (a line {start!r} and a line {end!r})")
    i, j = text.index(start) + len(start), text.index(end)
    return text[:i] + "\n" + markdown_summary(card) + "\n" + text[j:]


#: Verdict colours (colour-blind safe, Paul Tol's): reproduced blue, not reproduced red, undecided sand,
#: by construction grey, no subject pale grey, not run white.
COLOURS = {REPRODUCED: "#4477AA", NOT_REPRODUCED: "#CC6677", UNDECIDED: "#DDCC77", BY_CONSTRUCTION: "#999999",
           NO_SUBJECT: "#DDDDDD", "not run": "#FFFFFF", "": "#FFFFFF"}
SHORT = {REPRODUCED: "yes", NOT_REPRODUCED: "no", UNDECIDED: "?", BY_CONSTRUCTION: "built", NO_SUBJECT: "—",
         "not run": "not run", "": ""}


def figure(card: pd.DataFrame):
    """The verdict grid: a row per claim grouped by paper; columns default run, deciding variant, blind twins."""
    import matplotlib.pyplot as plt
    from matplotlib.patches import Patch, Rectangle

    figures.use_style()
    cols = (("default", "default run"), ("variant_verdict", "deciding variant"), ("blind", "blind twins"))
    n = len(card)
    groups = list(dict.fromkeys(card["notebook"]))
    height = 0.22 * (n + 2 * len(groups)) + 1.4
    fig, ax = plt.subplots(figsize=(8.0, max(height, 2.5)))
    y, ticks, labels = 0.0, [], []
    for nb in groups:
        sub = card[card["notebook"] == nb]
        ax.text(-0.02, y + 0.5, NOTEBOOKS[nb][1] + f"  ({nb[:2]})", ha="right", va="center", fontsize=8,
                fontweight="bold", transform=ax.get_yaxis_transform())
        y += 1.2
        for r in sub.itertuples(index=False):
            for j, (col, _) in enumerate(cols):
                v = getattr(r, col) or ""
                ax.add_patch(Rectangle((j, y), 0.96, 0.9, facecolor=COLOURS.get(v, "#FFFFFF"), edgecolor="#BBBBBB",
                                       linewidth=0.4))
                label = SHORT.get(v, "")
                if col == "variant_verdict" and r.variant and v:
                    label = f"{label} ({r.variant})"
                ax.text(j + 0.48, y + 0.45, label, ha="center", va="center", fontsize=6.5,
                        color="white" if v in (REPRODUCED, NOT_REPRODUCED) else "black")
            name = r.claim if len(r.claim) <= 58 else r.claim[:56] + "…"
            ticks.append(y + 0.45)
            labels.append(name + ("  [construction]" if r.section == "construction" else ""))
            y += 1.0
        y += 0.6
    ax.grid(False)
    ax.set_xlim(0, len(cols))
    ax.set_ylim(y, -0.2)
    ax.set_yticks(ticks, labels, fontsize=6.5)
    ax.set_xticks(np.arange(len(cols)) + 0.48, [c[1] for c in cols], fontsize=8)
    ax.xaxis.tick_top()
    ax.tick_params(length=0)
    for s in ax.spines.values():
        s.set_visible(False)
    handles = [Patch(facecolor=COLOURS[v], edgecolor="#BBBBBB", label=v) for v in VERDICTS]
    fig.legend(handles=handles, loc="lower center", ncol=5, fontsize=7, frameon=False)
    fig.tight_layout(rect=(0, 0.03, 1, 1))
    return fig


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m vlmrobust.scorecard", description=__doc__.split("\n")[0])
    ap.add_argument("--root", default=None, help="results root (default: VLMROBUST_RESULTS_ROOT or results/)")
    ap.add_argument("--no-figure", action="store_true")
    ap.add_argument("--missing", action="store_true",
                    help="only print the NB:variant runs the scorecard reads that have no results yet")
    ap.add_argument("--all", action="store_true", help="with --missing: the long runs too (LONG_RUNS)")
    ap.add_argument("--readme", default="", metavar="CSV",
                    help="rewrite the README's scorecard table from this scorecard (figures/scorecard/scorecard.csv)")
    a = ap.parse_args(argv)
    root = Path(a.root) if a.root else paths.results_root()
    if a.readme:
        readme = paths.REPO_ROOT / "README.md"
        readme.write_text(with_readme_table(readme.read_text(), pd.read_csv(a.readme, keep_default_na=False)))
        print(f"rewrote the scorecard table of {readme} from {a.readme}")
        return 0
    if a.missing:
        print(" ".join(f"{nb}:{v}" for nb, v in missing_runs(root, long=a.all)))
        return 0
    card = scorecard(root)
    if card.empty:
        print(f"no claims tables under {root} yet: the scorecard is written once a notebook with claims has run",
              file=sys.stderr)
        return 0
    card.to_csv(root / "scorecard.csv", index=False)
    print(summary(card).to_string())
    leaks = blind_passes(card)
    if len(leaks):
        print("paper claims reproduced by blind twins:\n" + leaks[["notebook", "claim"]].to_string(index=False))
    if not a.no_figure:
        png, _ = figures.save(figure(card), "scorecard", "scorecard", close=True)
        card.to_csv(png.with_suffix(".csv"), index=False)
    print(f"wrote {root / 'scorecard.csv'} ({len(card)} claims)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
