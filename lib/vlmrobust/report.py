"""A small static site of executed notebooks: an index page with thumbnails, and each notebook as HTML.

``python -m vlmrobust.report executed report`` (what ``make report`` runs) reads
every executed notebook in ``executed/`` (``<NB_ID>.ipynb`` for a default run,
``<NB_ID>.<variant>.ipynb`` for a parameter variant), converts it to HTML with
nbconvert, and writes ``report/index.html``: one card per notebook with its
title, the question it answers (the first paragraph of its title cell), its
parameter variant, its run time (papermill's ``duration``) and thumbnails of
the figures it drew (the PNG outputs of its cells). A notebook's runs share one
row, its default run first and its variants (``lesson``, ``paper``, ...) beside it,
and the page links the course page ``docs/teaching.md``. Open
``report/index.html`` in a browser; the site is self-contained and works from the
file system.
"""

from __future__ import annotations

import argparse
import base64
import html
import io
import os
import re
import sys
from pathlib import Path
from typing import Any

from .paths import REPO_ROOT

__all__ = ["notebook_card", "scorecard_section", "build", "main"]

_THUMB_PX = 220


def _title_and_question(nb: Any) -> tuple[str, str]:
    first = next((c for c in nb.cells if c.cell_type == "markdown"), None)
    text = first.source if first is not None else ""
    m = re.search(r"^# (.+)$", text, re.M)
    title = m.group(1).strip() if m else ""
    rest = text[m.end():] if m else text
    para = next((p for p in re.split(r"\n\s*\n", rest) if p.strip() and not p.lstrip().startswith("*")), "")
    return title, " ".join(para.split())


def _pngs(nb: Any) -> list[bytes]:
    out = []
    for c in nb.cells:
        for o in c.get("outputs", []) if c.cell_type == "code" else []:
            data = o.get("data", {}) if o.get("output_type") in ("display_data", "execute_result") else {}
            if "image/png" in data:
                out.append(base64.b64decode(data["image/png"]))
    return out


def _thumb(png: bytes) -> bytes:
    from PIL import Image

    with Image.open(io.BytesIO(png)) as im:
        im = im.convert("RGB")
        im.thumbnail((_THUMB_PX, _THUMB_PX))
        buf = io.BytesIO()
        im.save(buf, format="PNG", optimize=True)
    return buf.getvalue()


def notebook_card(path: str | Path) -> dict:
    """What the index shows of one executed notebook: id, variant, title, question, seconds, figures, error."""
    import nbformat

    path = Path(path)
    nb = nbformat.read(str(path), as_version=4)
    nb_id, _, variant = path.stem.partition(".")
    title, question = _title_and_question(nb)
    pm = nb.metadata.get("papermill", {})
    failed = bool(pm.get("exception")) or any(o.get("output_type") == "error" for c in nb.cells
                                              for o in c.get("outputs", []) if c.cell_type == "code")
    return {"id": nb_id, "variant": variant or "default", "title": title or nb_id, "question": question,
            "seconds": pm.get("duration"), "parameters": pm.get("parameters", {}), "pngs": _pngs(nb),
            "failed": failed, "source": path, "notebook": nb}


def _inline_markdown(text: str) -> str:
    """Escaped text with Markdown's **bold**, *italic* and `code` rendered (what title cells use)."""
    out = html.escape(text)
    out = re.sub(r"`([^`]+)`", r"<code>\1</code>", out)
    out = re.sub(r"\*\*([^*]+)\*\*", r"<b>\1</b>", out)
    return re.sub(r"(?<![\w*])\*([^*\s][^*]*)\*(?![\w*])", r"<i>\1</i>", out)


def _fmt_seconds(s: float | None) -> str:
    if s is None:
        return "not recorded"
    return f"{s:.0f} s" if s < 90 else f"{s / 60:.1f} min"


_CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,sans-serif;margin:2rem auto;max-width:1100px;\
color:#222;padding:0 1rem}
h1{font-size:1.6rem;margin-bottom:.2rem} p.lead{color:#555;margin-top:0}
.card{border:1px solid #ddd;border-radius:8px;padding:1rem 1.2rem;margin:1rem 0}
.card h2{font-size:1.15rem;margin:.1rem 0 .4rem} .card h2 a{color:#0b5394;text-decoration:none}
.meta{font-size:.85rem;color:#666;margin-bottom:.5rem} .meta span{margin-right:1.2rem}
.bad{color:#b00020;font-weight:600} .thumbs{display:flex;flex-wrap:wrap;gap:.5rem}
.thumbs img{border:1px solid #eee;border-radius:4px;max-height:160px}
img.scorecard{max-width:100%;height:auto} table.claims{border-collapse:collapse;font-size:.8rem}
table.claims td,table.claims th{padding:.15rem .4rem;border-bottom:1px solid #ddd;text-align:left}
.runs{display:flex;flex-wrap:wrap;gap:1rem;align-items:stretch} .runs .card{flex:1 1 320px;margin:.5rem 0}
"""
#: The course page the index links, relative to the repository root.
TEACHING_PAGE = "docs/teaching.md"


def scorecard_section(results: str | Path, out: Path) -> str:
    """The index page's first section: the scorecard's figure, its counts per paper and every claim's row
    (:mod:`vlmrobust.scorecard`, read from ``<results>/scorecard.csv``); a note when it is not written yet."""
    import pandas as pd

    from . import scorecard as sc

    csv = Path(results) / "scorecard.csv"
    if not csv.is_file():
        return ("<h2>Scorecard</h2><p>No scorecard yet: <code>make run</code> writes it after the notebooks, "
                "<code>make scorecard</code> adds the blind twins and the deciding variants.</p>")
    card = pd.read_csv(csv, keep_default_na=False)
    fig = Path(results) / "figures" / "scorecard" / "scorecard.png"
    img = ""
    if fig.is_file():
        (out / "scorecard.png").write_bytes(fig.read_bytes())
        img = '<p><a href="scorecard.png"><img class="scorecard" src="scorecard.png" alt="scorecard"></a></p>'
    table = card[["notebook", "section", "claim", "default", "variant", "variant_verdict", "blind", "final", "why",
                  "measured"]].to_html(index=False, escape=True, classes="claims", border=0)
    return (f"<h2>Scorecard</h2><p class='lead'>Every claim of the four papers checked by the notebooks: its "
            f"verdict on the default run, on the variant that decides it and on blind twins "
            f"(<code>{html.escape(str(csv))}</code>).</p>{img}"
            + sc.summary(card).to_html(escape=True, classes="claims", border=0)
            + f"<details><summary>all {len(card)} rows</summary>{table}</details>")


def build(executed: str | Path, out: str | Path, results: str | Path | None = None) -> Path:
    """Write the site for every ``*.ipynb`` in ``executed`` into ``out``; return the index page's path.

    The page opens with the scorecard of ``results`` (default: the results root), then the notebooks."""
    from nbconvert import HTMLExporter

    from .paths import results_root

    executed, out = Path(executed), Path(out)
    # by notebook, its default run (``NN_slug.ipynb``) before its variants (``NN_slug.<variant>.ipynb``)
    paths = sorted(executed.glob("*.ipynb"), key=lambda q: (q.name.split(".")[0], q.name.count("."), q.name))
    if not paths:
        raise FileNotFoundError(f"no executed notebooks in {executed}/: run `make run` first")
    (out / "thumbs").mkdir(parents=True, exist_ok=True)
    exporter = HTMLExporter()
    cards = []
    for p in paths:
        card = notebook_card(p)
        body, _ = exporter.from_notebook_node(card["notebook"])
        page = f"{p.stem}.html"
        (out / page).write_text(body)
        thumbs = []
        for k, png in enumerate(card["pngs"]):
            name = f"thumbs/{p.stem}-{k:02d}.png"
            (out / name).write_bytes(_thumb(png))
            thumbs.append(name)
        cards.append({**card, "page": page, "thumbs": thumbs})
    groups: dict[str, list[str]] = {}
    for c in cards:
        params = ", ".join(f"{k}={v!r}" for k, v in c["parameters"].items()) or "defaults"
        status = '<span class="bad">stopped with an error</span>' if c["failed"] else ""
        imgs = "".join(f'<a href="{html.escape(c["page"])}"><img src="{html.escape(t)}" alt="figure"></a>'
                       for t in c["thumbs"])
        groups.setdefault(c["id"], []).append(
            f'<div class="card"><h2><a href="{html.escape(c["page"])}">{html.escape(c["title"])}</a></h2>'
            f'<div class="meta"><span>variant: <b>{html.escape(c["variant"])}</b></span>'
            f'<span>run time: {_fmt_seconds(c["seconds"])}</span><span>{len(c["thumbs"])} figures</span>{status}</div>'
            f'<p>{_inline_markdown(c["question"])}</p><div class="meta">parameters: {html.escape(params)}</div>'
            f'<div class="thumbs">{imgs}</div></div>')
    items = [f'<div class="runs" id="{html.escape(nb_id)}">{"".join(g)}</div>' for nb_id, g in groups.items()]
    teaching = os.path.relpath(REPO_ROOT / TEACHING_PAGE, out.resolve())
    index = out / "index.html"
    index.write_text(
        "<!doctype html><html><head><meta charset='utf-8'><title>vlmrobust — executed notebooks</title>"
        f"<style>{_CSS}</style></head><body><h1>vlmrobust — executed notebooks</h1>"
        f"<p class='lead'>{len(cards)} notebook runs from <code>{html.escape(str(executed))}/</code>, each "
        "notebook's default run first and its variants beside it (<code>make run P=lesson</code> gives the course's "
        "lesson runs); click a title or a figure for the whole notebook. Teaching with these notebooks: "
        f"<a href='{html.escape(teaching)}'>the course page</a> (<code>{TEACHING_PAGE}</code>).</p>"
        + scorecard_section(results if results is not None else results_root(), out)
        + "<h2>Notebooks</h2>" + "".join(items) + "</body></html>")
    return index


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m vlmrobust.report", description=__doc__.split("\n\n")[0])
    ap.add_argument("executed", nargs="?", default="executed")
    ap.add_argument("out", nargs="?", default="report")
    args = ap.parse_args(argv)
    try:
        index = build(args.executed, args.out)
    except FileNotFoundError as exc:
        print(exc, file=sys.stderr)
        return 2
    print(f"wrote {index}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
