"""Every notebook in a real browser: JupyterLab on 127.0.0.1, headless Chromium driven by Playwright.

For each notebook the test opens its paired ``.ipynb`` notebook (as ``make lab`` shows it), checks that the project's
kernel starts without a kernel-choice dialog, runs the first cells (title, imports, parameters, resolve),
saves, and reads the saved notebook back: no cell may hold an error output. It also finds the notebook's
exercises in the page: the rendered "Exercises" heading and one "Exercise k:" heading per exercise (the exercise
cells are not run). Every notebook is opened and
started first, so their kernels work side by side; then each test waits for its own. A screenshot of each notebook
goes to ``$VLMROBUST_BROWSER_SHOTS`` (``build/browser`` under ``make browser``). The server is started with
a random port and token and stopped at the end; the test checks that it is gone.

Needs Debian's ``chromium`` (``make browser-deps`` installs it) and the ``playwright`` package pointed at
that browser (no browser download).
"""

from __future__ import annotations

import json
import os
import re
import secrets
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import nbformat
import pytest

from vlmrobust import nbtools

BIN = Path(sys.executable).parent
CHROMIUM = os.environ.get("VLMROBUST_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
SHOTS = Path(os.environ.get("VLMROBUST_BROWSER_SHOTS") or Path(__file__).resolve().parents[2] / "build" / "browser")
# Chromium flags for a closed network: no background connections, no GPU, no first-run work.
FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage"]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _port_open(port: int) -> bool:
    with socket.socket() as s:
        s.settimeout(0.5)
        return s.connect_ex(("127.0.0.1", port)) == 0


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    """A JupyterLab server over the generated paired notebooks (.ipynb); yields (url, token, folder); stops it after."""
    if not Path(CHROMIUM).is_file():
        pytest.fail(f"no Chromium at {CHROMIUM}: run `make browser-deps` (Debian's chromium package)")
    root = tmp_path_factory.mktemp("lab")
    for nb_id in nbtools.notebook_ids():
        shutil.copy(nbtools.notebook_path(nb_id), root / f"{nb_id}.py")
        subprocess.run([str(BIN / "jupytext"), "-q", "--to", "ipynb", str(root / f"{nb_id}.py")], check=True)
    port, token = _free_port(), secrets.token_hex(16)
    settings = root / "lab-settings"  # every cell in the page (no windowing), no news pop-up
    for plugin, value in {"notebook-extension/tracker": {"windowingMode": "none"},
                          "apputils-extension/notification": {"fetchNews": "false"}}.items():
        (settings / "@jupyterlab" / plugin).parent.mkdir(parents=True, exist_ok=True)
        (settings / "@jupyterlab" / f"{plugin}.jupyterlab-settings").write_text(json.dumps(value))
    env = {**os.environ, "VLMROBUST_RESULTS_ROOT": str(root / "results"), "JUPYTER_CONFIG_DIR": str(root / "cfg"),
           "JUPYTER_RUNTIME_DIR": str(root / "runtime"), "JUPYTERLAB_SETTINGS_DIR": str(settings)}
    log = (root / "server.log").open("w")
    server = subprocess.Popen(
        [str(BIN / "jupyter"), "lab", "--no-browser", "--ip=127.0.0.1", f"--port={port}", "--port-retries=0",
         f"--IdentityProvider.token={token}", f"--ServerApp.root_dir={root}",
         *(["--allow-root"] if os.geteuid() == 0 else [])],
        env=env, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        for _ in range(240):
            try:
                with urllib.request.urlopen(f"{url}/api/status?token={token}", timeout=1) as r:
                    if r.status == 200:
                        break
            except OSError:
                if server.poll() is not None:
                    break
                time.sleep(0.5)
        if server.poll() is not None or not _port_open(port):
            pytest.fail("JupyterLab did not start:\n" + (root / "server.log").read_text()[-3000:])
        yield url, token, root
    finally:
        server.terminate()
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait(timeout=10)
        log.close()
        assert server.poll() is not None and not _port_open(port), "the JupyterLab server is still running"


def _wait_for_idle_kernel(url: str, token: str, path: str, timeout: float = 180.0) -> dict:
    """The kernel of the notebook's session once it has started and is idle (polls the server's REST API)."""
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout:
        with urllib.request.urlopen(f"{url}/api/sessions?token={token}", timeout=5) as r:
            sessions = json.loads(r.read())
        for s in sessions:
            if s.get("path") == path and s["kernel"].get("execution_state") == "idle":
                return s["kernel"]
        time.sleep(0.5)
    raise AssertionError(f"no idle kernel for {path} after {timeout:.0f} s")


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=FLAGS)
        yield b
        b.close()


PANEL = ".jp-NotebookPanel:not(.lm-mod-hidden)"


def _open_and_run(browser, url: str, token: str, root: Path, nb_id: str) -> dict:
    """Open one notebook in a page of its own, check its kernel, and start its first cells (does not wait)."""
    nb = nbformat.read(root / f"{nb_id}.ipynb", as_version=4)
    n_cells = nbtools.resolve_cell_index(nb) + 1  # title, imports, parameters, resolve
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    page.set_default_timeout(240_000)  # a shared two-core machine can be slow to start eight kernels
    out = {"context": context, "page": page, "n_cells": n_cells,
           "n_code": sum(c.cell_type == "code" for c in nb.cells[:n_cells]),
           "n_exercises": sum(c.cell_type == "markdown" and c.source.startswith("### Exercise ") for c in nb.cells)}
    try:  # a workspace of its own per notebook, reset: no tab restored from an earlier page
        page.goto(f"{url}/lab/workspaces/{nb_id}/tree/{nb_id}.ipynb?reset&token={token}",
                  wait_until="domcontentloaded")
        page.wait_for_selector(f"{PANEL} .jp-Cell")
        out["kernel"] = _wait_for_idle_kernel(url, token, f"{nb_id}.ipynb")
        out["dialogs"] = page.locator(".jp-Dialog").count()
        out["kernel_label"] = page.locator(f"{PANEL} .jp-Toolbar-kernelName").first.inner_text()
        page.locator(f"{PANEL} .jp-Cell").first.click()
        page.keyboard.press("Escape")
        for _ in range(n_cells):
            page.keyboard.press("Shift+Enter")
    except Exception as exc:  # reported by this notebook's test, not by the others'
        out["error"] = exc
    return out


@pytest.fixture(scope="module")
def started(lab, browser):
    """Every notebook opened and its first cells started, so that their kernels work side by side."""
    url, token, root = lab
    pages = {nb_id: _open_and_run(browser, url, token, root, nb_id) for nb_id in nbtools.notebook_ids()}
    yield pages
    for p in pages.values():
        p["context"].close()


@pytest.mark.parametrize("nb_id", nbtools.notebook_ids())
def test_notebook_opens_on_the_project_kernel_and_its_first_cells_run(nb_id, lab, started):
    _, _, root = lab
    run = started[nb_id]
    if "error" in run:
        raise run["error"]
    assert run["kernel"]["name"] == "vlmrobust", f"the notebook started kernel {run['kernel']['name']!r}"
    assert run["dialogs"] == 0, "JupyterLab asked which kernel to start"
    assert "vlmrobust" in run["kernel_label"], run["kernel_label"]
    page, n_cells = run["page"], run["n_cells"]
    page.bring_to_front()
    done = f"() => [...document.querySelectorAll('{PANEL} .jp-CodeCell .jp-InputPrompt')].slice(0, " \
           f"{run['n_code']}).every(p => /\\[\\d+\\]/.test(p.textContent))"
    page.wait_for_function(done)
    rendered = f"{PANEL} .jp-MarkdownCell .jp-RenderedMarkdown"
    assert page.locator(f"{rendered} h2", has_text="Exercises").count() == 1, "no rendered Exercises heading"
    headings = page.locator(f"{rendered} h3", has_text=re.compile(r"^Exercise \d+: "))
    assert 3 <= run["n_exercises"] == headings.count(), f"{headings.count()} exercise headings in the page"
    page.keyboard.press("Control+s")
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"{nb_id}.png"), full_page=False)
    t0 = time.monotonic()
    while True:  # the save has landed once the file holds the execution counts
        try:  # the server may be midway through writing the file
            saved = json.loads((root / f"{nb_id}.ipynb").read_text())
        except json.JSONDecodeError:
            saved = {"cells": []}
        ran = [c for c in saved["cells"][:n_cells] if c["cell_type"] == "code"]
        if (ran and all(c.get("execution_count") for c in ran)) or time.monotonic() - t0 > 30:
            break
        time.sleep(0.2)
    assert ran and all(c.get("execution_count") for c in ran), "the first cells did not run"
    errors = [o for c in ran for o in c.get("outputs", []) if o.get("output_type") == "error"]
    assert not errors, [f"{e['ename']}: {e['evalue']}" for e in errors]
    assert (SHOTS / f"{nb_id}.png").stat().st_size > 10_000
