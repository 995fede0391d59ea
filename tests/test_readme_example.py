"""The README's worked example (your own images and questions) runs as printed."""

from __future__ import annotations

import re
import subprocess
import sys

from vlmrobust import paths


def _example() -> str:
    text = (paths.REPO_ROOT / "README.md").read_text()
    m = re.search(r"<!-- example: tests/test_readme_example.py runs this block -->\n```python\n(.*?)```", text, re.S)
    assert m, "the README's example block is gone"
    return m.group(1)


def test_own_images_and_questions_example_runs(tmp_path):
    code = _example()
    env = {"VLMROBUST_RESULTS_ROOT": str(tmp_path / "results"), "VLMROBUST_PROGRESS": "0", "OMP_NUM_THREADS": "1",
           "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True,
                         timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    assert (tmp_path / "mine" / "items.parquet").is_file()
    lines = [ln for ln in out.stdout.splitlines() if re.search(r"\s\d\s+[01]\.\d+$", ln)]
    assert len(lines) == 8, out.stdout  # two models × (clean + three fog levels)
