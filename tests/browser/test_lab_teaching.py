"""The lecture experience in a real browser: JupyterLab + ipywidgets + a teaching notebook in Chromium.

Selectors follow JupyterLab's UI tests (galata): ``.jp-Notebook``, the execution indicator
``.jp-Notebook-ExecutionIndicator[data-status]``, input prompts ``.jp-InputArea-prompt``,
outputs ``.jp-OutputArea-output[data-mime-type=...]``, images ``.jp-RenderedImage img``;
ipywidgets 8 renders sliders as ``.widget-slider`` with a noUiSlider handle ``.noUi-handle``
and its Output widget as ``.widget-output``. Runs all cells through the menu (what galata's
``page.notebook.run()`` does) of every teaching notebook, moves every slider (keyboard) and
dropdown of every widget panel once, and checks after each move that the panel's figure was
redrawn and no cell shows an error; the exercise answers must stay in a closed ``<details>``.
A screenshot per notebook goes to ``reports/browser_<name>.png``.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import time

import pytest

from _labtools import BIN, REPO, api_get, free_port, stop_process_group, wait_for_status

WIDGET_MANAGER = "@jupyter-widgets/jupyterlab-manager"
WIDGET_IMG = ".widget-output .jp-RenderedImage img"
NOTEBOOKS_DIR = REPO / "notebooks"
#: Every lecture notebook, plus the capture-analysis notebook once it exists (another branch adds it).
BROWSER_NOTEBOOKS = sorted(p.stem for p in NOTEBOOKS_DIR.glob("teach_*.ipynb")) + [
    name for name in ("traces_tour", "analyze_capture") if (NOTEBOOKS_DIR / f"{name}.ipynb").is_file()
]
#: Notebooks with static figures only (no control to move).
NO_WIDGETS = {"traces_tour", "analyze_capture"}  # static reports: figures, no controls to move
#: Seconds for Run All (the full, non-quick parameters a lecturer runs; heavy tails is the slowest).
RUN_ALL_TIMEOUT_S = 240


def test_widget_extension_is_enabled():
    """`jupyter labextension list` shows the ipywidgets front end, enabled and OK."""
    pytest.importorskip("jupyterlab", reason="JupyterLab is not installed (the `lab` extra)")
    done = subprocess.run([str(BIN / "jupyter"), "labextension", "list"], capture_output=True, text=True, timeout=120)
    text = re.sub(r"\x1b\[[0-9;]*m", "", done.stdout + done.stderr)
    lines = [ln for ln in text.splitlines() if WIDGET_MANAGER in ln]
    assert lines, f"{WIDGET_MANAGER} missing from `jupyter labextension list`:\n{text}"
    assert "enabled" in lines[0] and "OK" in lines[0], lines[0]


def test_make_lab_arguments_keep_localhost_and_token_and_drop_terminals_as_root(tmp_path):
    """`make lab` passes JupyterLab 127.0.0.1 and no token override; as root also --allow-root and no terminals.

    Runs the real Makefile recipe with a stand-in `jupyter` that prints its arguments."""
    if shutil.which("make") is None:
        pytest.skip("make is not installed")
    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "jupyter").write_text('#!/bin/sh\nfor a in "$@"; do echo "$a"; done\n')
    (fake / "jupyter").chmod(0o755)
    done = subprocess.run(["make", "-s", "-o", ".venv/.base", "lab", f"BIN={fake}"], cwd=REPO, capture_output=True,
                          text=True, timeout=60)  # fmt: skip
    assert done.returncode == 0, done.stderr
    args = done.stdout.split()
    assert args[:2] == ["lab", "--ip=127.0.0.1"] and "--no-browser" in args and "--notebook-dir=notebooks" in args
    assert not [a for a in args if "token" in a.lower() or "password" in a.lower()], args  # Jupyter's random token
    if os.geteuid() == 0:
        assert "--allow-root" in args and "--ServerApp.terminals_enabled=False" in args, args
    else:
        assert "--allow-root" not in args


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
        if os.geteuid() == 0:  # a browser terminal would be a root shell
            assert api_get(base, "/api/terminals", token)[0] == 404, "terminals are enabled for root"
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
        if status == "idle" and page.locator('.jp-OutputArea-output[data-mime-type="application/vnd.jupyter.error"]').count():
            _assert_no_errors(page)  # Run All stopped at an error: say which, without waiting for the timeout
        time.sleep(1.0)
    raise AssertionError(f"notebook did not finish within {timeout_s} s: prompts {prompts}, kernel {status}")


def _panels(page):
    """Each widget panel: the VBox whose children are the controls and the Output with the figure."""
    return page.locator(".widget-output").locator("xpath=..")


def _panel_src(panel) -> str | None:
    img = panel.locator(".widget-output .jp-RenderedImage img")
    return img.first.get_attribute("src") if img.count() else None


def _wait_for_panel_change(page, panel, old: str | None, settle_s: float = 1.0, timeout_s: float = 90) -> str:
    """The panel's figure once it differs from ``old``, has not changed for ``settle_s`` and the kernel is idle."""
    deadline = time.monotonic() + timeout_s
    last, since = None, time.monotonic()
    while time.monotonic() < deadline:
        src = _panel_src(panel)
        status = page.eval_on_selector(".jp-Notebook-ExecutionIndicator", "e => e.dataset.status")
        if src != last:
            last, since = src, time.monotonic()
        elif src and src != old and status == "idle" and time.monotonic() - since >= settle_s:
            return src
        time.sleep(0.5)
    raise AssertionError(f"the panel's figure did not change within {timeout_s} s (still {str(last)[:60]}...)")


def _move_slider(page, slider) -> str:
    """Move a slider one keyboard step (right, or left at the maximum); returns 'old -> new' readouts."""
    readout = slider.locator(".widget-readout")
    before = readout.text_content()
    handle = slider.locator(".noUi-handle")
    handle.scroll_into_view_if_needed()
    handle.focus()
    for key in ("ArrowRight", "ArrowLeft"):
        page.keyboard.press(key)
        if readout.text_content() != before:
            return f"{before} -> {readout.text_content()}"
    raise AssertionError(f"the slider {slider.text_content()!r} did not move")


def _move_dropdown(select) -> str:
    """Choose the next option of a dropdown (the first if the last is selected)."""
    options = select.locator("option").all_text_contents()
    before = select.evaluate("e => e.selectedIndex")
    select.scroll_into_view_if_needed()
    select.select_option(index=(before + 1) % len(options))
    return f"{options[before]} -> {options[(before + 1) % len(options)]}"


def _assert_no_errors(page) -> None:
    errors = page.locator(
        '.jp-OutputArea-output[data-mime-type="application/vnd.jupyter.stderr"], '
        '.jp-OutputArea-output[data-mime-type="application/vnd.jupyter.error"]'
    )  # fmt: skip
    texts = [errors.nth(i).text_content()[:500] for i in range(errors.count())]
    assert not texts, f"cells show errors or warnings: {texts}"
    widget_text = page.locator(".widget-output [data-mime-type='application/vnd.jupyter.stdout']")
    assert widget_text.count() == 0, f"a widget printed a message: {widget_text.first.text_content()}"
    body = page.locator("#main").text_content()
    assert "Error displaying widget" not in body and "Traceback" not in body


@pytest.mark.browser
@pytest.mark.timeout(600)
@pytest.mark.parametrize("name", BROWSER_NOTEBOOKS)
def test_teaching_notebook_runs_and_every_control_redraws_in_chromium(name, lab_server, chromium_browser):
    """Run All as the lecture says, then move every slider and dropdown of every panel once: each
    move must give a new figure and no error; the answers stay collapsed; a screenshot is saved."""
    context = chromium_browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    page.set_default_timeout(90_000)
    shot = REPO / "reports" / f"browser_{name}.png"
    moved: list[str] = []
    try:
        # a fresh workspace (?reset): only this notebook open, whatever earlier tests left
        page.goto(lab_server.url(f"lab/tree/{name}.ipynb", "reset"))
        page.wait_for_selector(".jp-Notebook .jp-Cell")
        _accept_kernel_dialog(page)
        page.wait_for_selector(".jp-Notebook-ExecutionIndicator[data-status='idle']")

        _run_all_cells(page)
        _wait_until_idle_and_all_run(page, timeout_s=RUN_ALL_TIMEOUT_S)
        n_static = page.locator(".jp-RenderedImage img").count() - page.locator(WIDGET_IMG).count()
        assert n_static >= 1, "no static figure in the cell outputs"

        # answers: rendered by Run All, but inside a closed <details>
        opened = page.eval_on_selector_all(".jp-RenderedMarkdown details", "els => els.map(e => e.open)")
        if name.startswith("teach_"):
            assert opened == [False], f"expected one closed answers block, found open flags {opened}"
            assert not page.locator(".jp-RenderedMarkdown details li").first.is_visible(), "answers are visible"

        panels = _panels(page)
        if name in NO_WIDGETS:
            assert panels.count() == 0
        else:
            page.wait_for_selector(WIDGET_IMG, timeout=60_000)
            assert panels.count() >= 1, "no widget panel"
        for i in range(panels.count()):
            panel = panels.nth(i)
            src = _wait_for_panel_change(page, panel, None)
            assert src.startswith("data:image/png;base64,")
            # sliders first: a dropdown may change what a slider offers (the trace explorer's flows)
            controls = [("slider", s) for s in panel.locator(".widget-slider").all()]
            controls += [("dropdown", d) for d in panel.locator(".widget-dropdown select").all()]
            assert controls, f"panel {i} has no control"
            for kind, control in controls:
                what = _move_slider(page, control) if kind == "slider" else _move_dropdown(control)
                src = _wait_for_panel_change(page, panel, src)
                moved.append(f"panel {i} {kind}: {what}")
                _assert_no_errors(page)
        _assert_no_errors(page)

        first = page.locator(".widget-output").first if panels.count() else page.locator(".jp-RenderedImage img").first
        first.scroll_into_view_if_needed()
        shot.parent.mkdir(exist_ok=True)
        page.screenshot(path=str(shot))
        print(f"{name}: moved {len(moved)} controls: {moved}")
    except Exception:
        shot.parent.mkdir(exist_ok=True)
        page.screenshot(path=str(shot.with_name(f"browser_{name}_failure.png")))
        print(f"moved before the failure: {moved}")
        print(lab_server.log_tail())
        raise
    finally:
        context.close()
