"""The lecture experience in a real browser: JupyterLab + ipywidgets + a teaching notebook in Chromium.

Selectors follow JupyterLab's UI tests (galata): ``.jp-Notebook``, the execution indicator
``.jp-Notebook-ExecutionIndicator[data-status]``, input prompts ``.jp-InputArea-prompt``,
outputs ``.jp-OutputArea-output[data-mime-type=...]``, images ``.jp-RenderedImage img``;
ipywidgets 8 renders sliders as ``.widget-slider`` with a noUiSlider handle ``.noUi-handle``
and its Output widget as ``.widget-output``. Runs all cells through the menu (what galata's
``page.notebook.run()`` does), moves the first slider with the keyboard, and checks that the
figure was redrawn and no cell shows an error. A screenshot goes to ``reports/``.
"""

from __future__ import annotations

import os
import re
import subprocess
import time

import pytest

from _labtools import BIN, REPO, api_get, free_port, stop_process_group, wait_for_status

WIDGET_MANAGER = "@jupyter-widgets/jupyterlab-manager"
WIDGET_IMG = ".widget-output .jp-RenderedImage img"
#: Notebooks driven in the browser (cheap to compute; each takes ~30 s here).
BROWSER_NOTEBOOKS = ["teach_throughput_models", "teach_mptcp_lia"]


def test_widget_extension_is_enabled():
    """`jupyter labextension list` shows the ipywidgets front end, enabled and OK."""
    pytest.importorskip("jupyterlab", reason="JupyterLab is not installed (the `lab` extra)")
    done = subprocess.run([str(BIN / "jupyter"), "labextension", "list"], capture_output=True, text=True, timeout=120)
    text = re.sub(r"\x1b\[[0-9;]*m", "", done.stdout + done.stderr)
    lines = [ln for ln in text.splitlines() if WIDGET_MANAGER in ln]
    assert lines, f"{WIDGET_MANAGER} missing from `jupyter labextension list`:\n{text}"
    assert "enabled" in lines[0] and "OK" in lines[0], lines[0]


@pytest.mark.browser
@pytest.mark.timeout(180)
def test_make_lab_serves_the_notebooks_folder_on_localhost_with_a_printed_token(tmp_path):
    """`make lab` (without reinstalling the venv) starts a server on 127.0.0.1 rooted at notebooks/,
    protected by a random token that it prints in the URL a lecturer copies into the browser."""
    pytest.importorskip("jupyterlab", reason="JupyterLab is not installed (the `lab` extra)")
    if not (REPO / ".venv" / "bin" / "jupyter").exists():
        pytest.skip("make lab needs the project's .venv (make venv)")
    port = free_port()
    env = dict(os.environ, JUPYTER_PORT=str(port), JUPYTER_RUNTIME_DIR=str(tmp_path))
    for name in ("JUPYTER_TOKEN", "MPLBACKEND"):
        env.pop(name, None)
    log_path = tmp_path / "make_lab.log"
    with open(log_path, "wb") as log:
        # -o .venv/.base: never reinstall the environment from a test
        process = subprocess.Popen(["make", "-o", ".venv/.base", "lab"], cwd=REPO, env=env, stdout=log,
                                   stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True)  # fmt: skip
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 90
        match = None
        while match is None and time.monotonic() < deadline and process.poll() is None:
            time.sleep(0.5)
            match = re.search(rf"http://127\.0\.0\.1:{port}/lab\?token=([0-9a-f]{{32,}})", log_path.read_text(errors="replace"))
        assert match, f"make lab printed no usable URL with a token:\n{log_path.read_text(errors='replace')[-3000:]}"
        token = match.group(1)
        wait_for_status(base, token, process, log_path)
        assert api_get(base, "/api/status", None)[0] == 403, "the server answers without a token"
        assert api_get(base, "/api/status", "wrong" + token)[0] == 403
        status, listing = api_get(base, "/api/contents", token)
        names = {item["name"] for item in listing["content"]}
        assert status == 200 and {"teach_throughput_models.ipynb", "README.md"} <= names, names
        status, extensions = api_get(base, "/lab/api/extensions", token)
        records = extensions[0] if extensions and isinstance(extensions[0], list) else extensions
        # the extension manager may report the PyPI-normalised name
        names_ok = {WIDGET_MANAGER, "jupyter-widgets-jupyterlab-manager"}
        manager = [e for e in records if isinstance(e, dict) and e.get("name") in names_ok]
        assert manager and manager[0]["enabled"], f"{WIDGET_MANAGER} not enabled in the running server"
    finally:
        stop_process_group(process)


def _accept_kernel_dialog(page, wait_s: float = 5.0) -> None:
    """Settings ask JupyterLab to start the notebook's kernel directly; accept the dialog if it still asks."""
    try:
        page.wait_for_selector(".jp-Dialog .jp-mod-accept", timeout=wait_s * 1000)
    except Exception:  # playwright's TimeoutError: no dialog, as intended
        return
    page.click(".jp-Dialog .jp-mod-accept")


def _run_all_cells(page, attempts: int = 3) -> None:
    """Run → Run All Cells from the menu bar; retried if no cell has started within 20 s
    (a click that lands while the kernel is still connecting can be lost)."""
    for _ in range(attempts):
        page.click(".lm-MenuBar-itemLabel:text-is('Run')")
        page.click(".lm-Menu-itemLabel:text-is('Run All Cells')")
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            if any(re.fullmatch(r"\[(\*|\d+)\]:", p) for p in _code_prompts(page)):
                return
            time.sleep(0.5)
    raise AssertionError(f"Run All Cells did not start any cell after {attempts} attempts: {_code_prompts(page)}")


def _code_prompts(page) -> list[str]:
    return page.eval_on_selector_all(".jp-CodeCell .jp-InputArea-prompt", "els => els.map(e => e.textContent.trim())")


def _wait_until_idle_and_all_run(page, timeout_s: float) -> None:
    """Every code cell has an execution count and the kernel is idle (galata's waitForRun, by hand)."""
    deadline = time.monotonic() + timeout_s
    prompts: list[str] = []
    status = ""
    while time.monotonic() < deadline:
        prompts = _code_prompts(page)
        status = page.eval_on_selector(".jp-Notebook-ExecutionIndicator", "e => e.dataset.status")
        if prompts and all(re.fullmatch(r"\[\d+\]:", p) for p in prompts) and status == "idle":
            return
        time.sleep(1.0)
    raise AssertionError(f"notebook did not finish within {timeout_s} s: prompts {prompts}, kernel {status}")


def _wait_for_stable_src(page, selector: str, settle_s: float, timeout_s: float) -> str:
    """The image src once it has not changed for ``settle_s`` and the kernel is idle."""
    deadline = time.monotonic() + timeout_s
    last, since = None, time.monotonic()
    while time.monotonic() < deadline:
        src = page.eval_on_selector(selector, "e => e.src")
        status = page.eval_on_selector(".jp-Notebook-ExecutionIndicator", "e => e.dataset.status")
        if src != last:
            last, since = src, time.monotonic()
        elif status == "idle" and time.monotonic() - since >= settle_s:
            return src
        time.sleep(0.5)
    raise AssertionError(f"plot image did not settle within {timeout_s} s")


@pytest.mark.browser
@pytest.mark.timeout(180)
@pytest.mark.parametrize("name", BROWSER_NOTEBOOKS)
def test_teaching_notebook_runs_and_slider_redraws_in_chromium(name, lab_server, chromium_browser):
    context = chromium_browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    page.set_default_timeout(90_000)
    shot = REPO / "reports" / f"browser_{name}.png"
    try:
        # a fresh workspace (?reset): only this notebook open, whatever earlier tests left
        page.goto(lab_server.url(f"lab/tree/{name}.ipynb", "reset"))
        page.wait_for_selector(".jp-Notebook .jp-Cell")
        _accept_kernel_dialog(page)
        page.wait_for_selector(".jp-Notebook-ExecutionIndicator[data-status='idle']")

        _run_all_cells(page)
        _wait_until_idle_and_all_run(page, timeout_s=100)

        # the static figure (outside any widget) and the widget's own figure are both there
        page.wait_for_selector(WIDGET_IMG, timeout=60_000)
        n_static = page.locator(".jp-RenderedImage img").count() - page.locator(WIDGET_IMG).count()
        assert n_static >= 1, "no static figure in the cell outputs"
        before = _wait_for_stable_src(page, WIDGET_IMG, settle_s=1.0, timeout_s=60)
        assert before.startswith("data:image/png;base64,")

        slider = page.locator(".widget-slider").first
        readout = slider.locator(".widget-readout")
        value_before = readout.text_content()
        handle = slider.locator(".noUi-handle")
        handle.scroll_into_view_if_needed()
        handle.focus()
        for _ in range(3):
            page.keyboard.press("ArrowRight")
        assert readout.text_content() != value_before, "the slider did not move"
        page.wait_for_function(
            "([sel, old]) => { const e = document.querySelector(sel); return e && e.src !== old; }",
            arg=[WIDGET_IMG, before], timeout=60_000,
        )  # fmt: skip
        after = _wait_for_stable_src(page, WIDGET_IMG, settle_s=1.5, timeout_s=60)
        assert after != before, "the plot did not change after moving the slider"

        errors = page.locator(
            '.jp-OutputArea-output[data-mime-type="application/vnd.jupyter.stderr"], '
            '.jp-OutputArea-output[data-mime-type="application/vnd.jupyter.error"]'
        )  # fmt: skip
        texts = [errors.nth(i).text_content()[:500] for i in range(errors.count())]
        assert not texts, f"cells show errors or warnings: {texts}"
        widget_text = page.locator(".widget-output [data-mime-type='application/vnd.jupyter.stdout']")
        assert widget_text.count() == 0, f"the widget printed a message: {widget_text.first.text_content()}"
        body = page.locator("#main").text_content()
        assert "Error displaying widget" not in body and "Traceback" not in body

        page.locator(".widget-output").first.scroll_into_view_if_needed()
        shot.parent.mkdir(exist_ok=True)
        page.screenshot(path=str(shot))
    except Exception:
        shot.parent.mkdir(exist_ok=True)
        page.screenshot(path=str(shot.with_name(f"browser_{name}_failure.png")))
        print(lab_server.log_tail())
        raise
    finally:
        context.close()
