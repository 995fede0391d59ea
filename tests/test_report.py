"""The static site of executed notebooks (``make report``)."""

from __future__ import annotations

import base64
import io
import re

import nbformat
import numpy as np
import pytest
from PIL import Image

from vlmrobust import report


def _png() -> str:
    buf = io.BytesIO()
    Image.fromarray(np.full((300, 400, 3), 120, dtype=np.uint8)).save(buf, format="PNG")
    return base64.b64encode(buf.getvalue()).decode()


def _executed(path, *, error=False, seconds=12.5, parameters=None):
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell("# 09 · A title\n\nWhat **this** notebook asks, with `code`.\n\n"
                                              "* **Reproduces:** a paper"),
                nbformat.v4.new_code_cell("plot()")]
    nb.cells[1].outputs = [nbformat.v4.new_output("display_data", data={"image/png": _png(), "text/plain": "fig"})]
    if error:
        nb.cells[1].outputs.append(nbformat.v4.new_output("error", ename="ParameterError", evalue="bad", traceback=[]))
    nb.metadata["papermill"] = {"duration": seconds, "parameters": parameters or {}, "exception": error or None}
    nbformat.write(nb, str(path))


def test_index_lists_every_notebook_with_run_time_variant_and_thumbnails(tmp_path):
    ex = tmp_path / "executed"
    ex.mkdir()
    _executed(ex / "09_demo.ipynb")
    _executed(ex / "09_demo.paper.ipynb", error=True, seconds=200.0, parameters={"models": ["org/x"]})
    _executed(ex / "09_demo.abc.ipynb")  # sorts before "ipynb": the default run still comes first
    index = report.build(ex, tmp_path / "site")
    page = index.read_text()
    assert page.count('class="card"') == 3 and "09 · A title" in page
    assert (page.index("variant: <b>default</b>") < page.index("variant: <b>abc</b>")
            < page.index("variant: <b>paper</b>"))
    assert "run time: 12 s" in page and "run time: 3.3 min" in page
    assert "variant: <b>default</b>" in page and "variant: <b>paper</b>" in page
    assert "What <b>this</b> notebook asks, with <code>code</code>." in page
    assert "stopped with an error" in page and "models=[&#x27;org/x&#x27;]" in page
    thumbs = sorted((tmp_path / "site" / "thumbs").iterdir())
    assert len(thumbs) == 3 and max(Image.open(thumbs[0]).size) == 220
    assert (tmp_path / "site" / "09_demo.html").read_text().count("<html") == 1


def test_nothing_executed_is_a_clear_error(tmp_path):
    with pytest.raises(FileNotFoundError, match="run `make run` first"):
        report.build(tmp_path, tmp_path / "site")


def test_lesson_runs_sit_beside_the_default_runs_and_the_index_links_the_course_page(tmp_path):
    ex = tmp_path / "executed"
    ex.mkdir()
    for name in ("09_demo.ipynb", "09_demo.lesson.ipynb", "10_other.ipynb", "10_other.lesson.ipynb"):
        _executed(ex / name, seconds=40.0 if "lesson" in name else 150.0,
                  parameters={"n_per_family": 2} if "lesson" in name else None)
    page = report.build(ex, tmp_path / "site").read_text()
    rows = re.findall(r'<div class="runs" id="([^"]+)">(.*?)</div></div></div>', page)
    assert [r[0] for r in rows] == ["09_demo", "10_other"]
    for _, row in rows:  # one row per notebook: the default run, then the lesson run beside it
        assert row.index("variant: <b>default</b>") < row.index("variant: <b>lesson</b>")
        assert "run time: 40 s" in row and "run time: 2.5 min" in row
    link = re.search(r"<a href='([^']+)'>the course page</a>", page).group(1)
    assert link.endswith("docs/teaching.md") and (tmp_path / "site" / link).resolve() == (
        report.REPO_ROOT / "docs" / "teaching.md").resolve()


def test_the_scorecard_comes_first(tmp_path):
    from vlmrobust.scorecard import scorecard
    from vlmrobust.stats.claims import Claim, claims_frame

    ex = tmp_path / "executed"
    ex.mkdir()
    _executed(ex / "09_demo.ipynb")
    res = tmp_path / "results"
    assert "No scorecard yet" in report.build(ex, tmp_path / "site", res).read_text()
    (res / "04_ras_attribution").mkdir(parents=True)
    claims_frame([Claim("1. stability hides instability", "p", "tiny-base", "no vision", "interval below 0", -0.1,
                        -0.2, -0.05, "m", "reproduced")]).to_csv(res / "04_ras_attribution/claims.csv", index=False)
    scorecard(res).to_csv(res / "scorecard.csv", index=False)
    page = report.build(ex, tmp_path / "site", res).read_text()
    assert page.index("<h2>Scorecard</h2>") < page.index("<h2>Notebooks</h2>") < page.index('class="card"')
    assert "1. stability hides instability" in page and "RAS: attribution" in page
