"""The lecture experience in a real browser: JupyterLab + ipywidgets + every lecture in Chromium, as on a projector.

The server runs in lecture mode (``TCPMODELS_LECTURE=1``) on a working copy made by ``tcpmodels init``;
the page is 1024x768 with the file browser open. Selectors follow JupyterLab's UI tests (galata):
``.jp-Notebook``, the execution indicator ``.jp-Notebook-ExecutionIndicator[data-status]``, input
prompts ``.jp-InputArea-prompt``, outputs ``.jp-OutputArea-output[data-mime-type=...]``, images
``.jp-RenderedImage img``; ipywidgets 8 renders sliders as ``.widget-slider`` with a noUiSlider handle
``.noUi-handle`` and an Image widget as ``img.widget-image``. Runs all cells through the menu (what
galata's ``page.notebook.run()`` does), then moves every slider (keyboard) and dropdown of every panel
while a requestAnimationFrame loop in the page watches the panel: the time from the key press to the
new figures decoded is the redraw time, printed per notebook (not asserted: speed is measured in benchmarks,
never in timed tests; a redraw of 0.547 s against a 0.5 s limit failed the clean-clone CI of 2026-12-07 at load
1.8), and no frame may show the panel without its figures. The answers must stay in a closed ``<details>``. A screenshot per notebook goes
to ``reports/browser_<name>.png``. (That labels never collide at this size is checked on the figures
themselves, with matplotlib's text boxes, in tests/test_lecture_mode.py: here the figures must be shown
at their own size, so that what was checked is what is seen.)
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import time

import pytest
from _labtools import BIN, REPO, api_get, free_port, stop_process_group, wait_for_status

from tcpmodels.notebook.widgets import LECTURE_CLASS, LECTURE_DPI
from tcpmodels.teaching.style import LECTURE_WIDTH_IN

WIDGET_MANAGER = "@jupyter-widgets/jupyterlab-manager"
#: A lecture-mode figure's width in pixels.
LECTURE_WIDTH_PX = round(LECTURE_WIDTH_IN * LECTURE_DPI)
#: The redraw the lectures aim at, from the key press or the menu choice to the new figures decoded in the page;
#: slower moves are listed in the output, not failed. [s]
REDRAW_TARGET_S = 0.5
#: Moves of one control at most, stopping at the first under the target (another process may hold both cores).
REDRAW_ATTEMPTS = 5
#: Frames watched after the figures were replaced (a late collapse would show there). [ms]
SETTLE_MS = 300
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


def _fake_bin(tmp_path):
    """Stand-ins for `jupyter` (writes its arguments to jupyter.args) and `tcpmodels` (records the call, makes DIR/notebooks)."""
    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "jupyter").write_text(f'#!/bin/sh\nfor a in "$@"; do echo "$a"; done > {tmp_path}/jupyter.args\n')
    (fake / "tcpmodels").write_text(f'#!/bin/sh\necho "$@" >> {tmp_path}/tcpmodels.calls\nmkdir -p "$2/notebooks"\n')
    for exe in fake.iterdir():
        exe.chmod(0o755)
    return fake


def test_make_lab_opens_a_working_copy_on_localhost_with_a_token_and_no_terminals_as_root(tmp_path):
    """`make lab` writes a working copy with `tcpmodels init` once (never opening the tracked notebooks/),
    and passes JupyterLab 127.0.0.1 and no token override; as root also --allow-root and no terminals.

    Runs the real Makefile recipe with stand-ins for `jupyter` and `tcpmodels`."""
    if shutil.which("make") is None:
        pytest.skip("make is not installed")
    fake, lab = _fake_bin(tmp_path), tmp_path / "copy"
    for run in range(2):
        done = subprocess.run(["make", "-s", "-o", ".venv/.base", "lab", f"BIN={fake}", f"LAB_DIR={lab}"], cwd=REPO,
                              capture_output=True, text=True, timeout=60)  # fmt: skip
        assert done.returncode == 0, done.stderr
        assert (tmp_path / "tcpmodels.calls").read_text().splitlines() == [f"init {lab}"], "init runs once, when the copy is missing"
        args = (tmp_path / "jupyter.args").read_text().split()
        assert args[:2] == ["lab", "--ip=127.0.0.1"] and "--no-browser" in args and f"--notebook-dir={lab}/notebooks" in args
        assert not [a for a in args if "token" in a.lower() or "password" in a.lower()], args  # Jupyter's random token
        if os.geteuid() == 0:
            assert "--allow-root" in args and "--ServerApp.terminals_enabled=False" in args, args
        else:
            assert "--allow-root" not in args
    assert not [a for a in args if a.rstrip("/").endswith("=notebooks")], "the tracked notebooks/ must not be opened"


@pytest.mark.browser
@pytest.mark.timeout(300)
def test_make_lab_serves_a_working_copy_on_localhost_with_a_printed_token(tmp_path):
    """`make lab` (without reinstalling the venv) writes a working copy and starts a server on 127.0.0.1 rooted
    at its notebooks, protected by a random token that it prints in the URL a lecturer copies into the browser."""
    pytest.importorskip("jupyterlab", reason="JupyterLab is not installed (the `lab` extra)")
    if not (REPO / ".venv" / "bin" / "jupyter").exists():
        pytest.skip("make lab needs the project's .venv (make venv)")
    port, lab = free_port(), tmp_path / "lab"
    env = dict(os.environ, JUPYTER_PORT=str(port), JUPYTER_RUNTIME_DIR=str(tmp_path))
    for name in ("JUPYTER_TOKEN", "MPLBACKEND"):
        env.pop(name, None)
    log_path = tmp_path / "make_lab.log"
    with open(log_path, "wb") as log:
        # -o .venv/.base: never reinstall the environment from a test
        process = subprocess.Popen(["make", "-o", ".venv/.base", "lab", f"LAB_DIR={lab}"], cwd=REPO, env=env, stdout=log,
                                   stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True)  # fmt: skip
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 150
        match = None
        while match is None and time.monotonic() < deadline and process.poll() is None:
            time.sleep(0.5)
            match = re.search(rf"http://127\.0\.0\.1:{port}/lab\?token=([0-9a-f]{{32,}})", log_path.read_text(errors="replace"))
        assert match, f"make lab printed no usable URL with a token:\n{log_path.read_text(errors='replace')[-3000:]}"
        token = match.group(1)
        wait_for_status(base, token, process, log_path)
        assert (lab / "notebooks" / "teach_throughput_models.ipynb").is_file() and (lab / "data").is_dir()
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
    except Exception:  # noqa: BLE001 - playwright's TimeoutError: no dialog, as intended
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
    """Each widget panel in lecture mode: the VBox with the lecture class (controls, figure area, style sheet)."""
    return page.locator(f".{LECTURE_CLASS}")


#: Watches one panel frame by frame (requestAnimationFrame) from the moment a control is moved
#: (the first keydown or change event) until its figures have all been replaced and decoded, and for
#: SETTLE_MS after: a frame is empty when a figure of the panel is missing, hidden, not decoded
#: (naturalWidth 0) or without height, or when the panel is less than 80 % of its height before.
MONITOR_JS = """([index, settleMs]) => {
  const panel = document.querySelectorAll('.%s')[index];
  const images = () => Array.from(panel.querySelectorAll('img.widget-image')).filter(im => im.style.display !== 'none');
  const before = images().map(im => { im.dataset.tmSeen = '1'; return im.src; });
  const height0 = panel.getBoundingClientRect().height;
  const run = {t0: null, done: null, empty: [], frames: 0, before: before.length};
  window.__tmRun = run;
  const start = () => { if (run.t0 === null) run.t0 = performance.now(); };
  document.addEventListener('keydown', start, {capture: true, once: true});
  document.addEventListener('change', start, {capture: true, once: true});
  const tick = () => {
    const now = performance.now();
    const list = images();
    const shown = list.length > 0 && list.every(im => im.naturalWidth > 0 && im.getBoundingClientRect().height > 0);
    const tall = panel.getBoundingClientRect().height >= 0.8 * height0;
    if (run.t0 !== null) {
      run.frames += 1;
      if (!shown || !tall) run.empty.push({t: Math.round(now - run.t0), tall, images: list.map(im => ({
        naturalWidth: im.naturalWidth, complete: im.complete, height: Math.round(im.getBoundingClientRect().height),
        same: im.dataset.tmSeen === '1'}))});
      if (run.arrived === undefined && list.some((im, k) => im.src !== before[k])) run.arrived = now;
      const replaced = list.length === before.length && list.every((im, k) => im.src !== before[k] && im.complete && im.naturalWidth > 0);
      if (replaced && run.done === null) run.done = now;
    }
    if (run.done === null || now - run.done < settleMs) requestAnimationFrame(tick); else run.finished = true;
  };
  requestAnimationFrame(tick);
}""" % LECTURE_CLASS


def _measure(page, panel_index: int, move, timeout_s: float = 60.0) -> tuple[float, list, str]:
    """Move a control with ``move()`` and return (redraw seconds, empty frames, what moved); what moved ends
    with the share of the redraw spent before the first new image arrived in the page (kernel and transport)."""
    page.evaluate(MONITOR_JS, [panel_index, SETTLE_MS])
    what = move()
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        run = page.evaluate("() => window.__tmRun")
        if run.get("finished"):
            assert run["t0"] is not None, f"moving {what} sent no keydown or change event"
            arrived = (run.get("arrived", run["done"]) - run["t0"]) / 1e3
            return (run["done"] - run["t0"]) / 1e3, run["empty"], f"{what} (arrived after {arrived:.3f} s)"
        time.sleep(0.2)
    raise AssertionError(f"the panel's figures were not replaced within {timeout_s} s of moving {what}: {run}")


def _cpu_busy(interval_s: float = 0.5) -> float:
    """Fraction of all CPUs busy over ``interval_s`` (/proc/stat), or 0 where that is not available."""
    def sample():
        with open("/proc/stat") as f:
            values = [int(v) for v in f.readline().split()[1:]]
        return sum(values), values[3] + values[4]  # total, idle + iowait

    try:
        total0, idle0 = sample()
        time.sleep(interval_s)
        total1, idle1 = sample()
    except OSError:
        return 0.0
    return 1.0 - (idle1 - idle0) / max(total1 - total0, 1)


class _QuietWait:
    """Before a timed move, wait (at most ``budget_s`` over the whole test) until a CPU is free: the redraw
    time is this code's, not that of whatever else the shared machine runs. Returns what it found."""

    def __init__(self, budget_s: float = 60.0) -> None:
        self.left_s = budget_s

    def __call__(self) -> float:
        busy = _cpu_busy()
        while busy > 0.5 and self.left_s > 0:
            self.left_s -= 0.5
            busy = _cpu_busy()
        return busy


class _SliderMover:
    """Moves one slider a keyboard step per call, onwards in one direction: ArrowRight until the end of the
    track, then ArrowLeft from there on. Every call draws a value not drawn before, and a retried move never
    bounces back to where it started (at width 1 the trace explorer's start slider is disabled, so bouncing
    the width back to 1 left the next control nothing to move)."""

    def __init__(self, page, slider) -> None:
        self.page, self.slider, self.direction = page, slider, "ArrowRight"

    def __call__(self) -> str:
        """Move one step; returns 'label: old -> new'."""
        readout = self.slider.locator(".widget-readout")
        before = readout.text_content()
        handle = self.slider.locator(".noUi-handle")
        handle.scroll_into_view_if_needed()
        handle.focus()
        other = "ArrowLeft" if self.direction == "ArrowRight" else "ArrowRight"
        for key in (self.direction, other):
            self.page.keyboard.press(key)
            if readout.text_content() != before:
                self.direction = key
                return f"{self.slider.locator('.widget-label').first.text_content()}: {before} -> {readout.text_content()}"
        raise AssertionError(f"the slider {self.slider.text_content()!r} did not move")


def _move_dropdown(select) -> str:
    """Choose the next option of a dropdown (the first if the last is selected)."""
    options = select.locator("option").all_text_contents()
    before = select.evaluate("e => e.selectedIndex")
    select.scroll_into_view_if_needed()
    select.select_option(index=(before + 1) % len(options))
    return f"{options[before]} -> {options[(before + 1) % len(options)]}"


def _check_projector_layout(page, panel) -> None:
    """Figures shown at their own size (576 px: never scaled down, so the text is as drawn), wide slider
    tracks and projector-sized labels, one control per row."""
    sizes = panel.locator("img.widget-image").evaluate_all(
        "els => els.filter(e => e.style.display !== 'none').map(e => [e.naturalWidth, e.getBoundingClientRect().width])")
    assert sizes and all(natural == LECTURE_WIDTH_PX and shown >= natural - 1 for natural, shown in sizes), sizes
    tracks = panel.locator(".widget-slider .noUi-target").evaluate_all("els => els.map(e => e.getBoundingClientRect().width)")
    assert all(w >= 150 for w in tracks), f"slider tracks narrower than 150 px: {tracks}"
    fonts = panel.locator(".widget-label").evaluate_all("els => els.map(e => parseFloat(getComputedStyle(e).fontSize))")
    assert fonts and min(fonts) >= 16, f"control labels smaller than 16 px: {fonts}"
    rows = panel.locator(".widget-hbox").evaluate_all("els => els.map(e => e.children.length)")
    assert rows and max(rows) == 1, f"more than one control per row: {rows}"


def _assert_no_errors(page) -> None:
    errors = page.locator(
        '.jp-OutputArea-output[data-mime-type="application/vnd.jupyter.stderr"], '
        '.jp-OutputArea-output[data-mime-type="application/vnd.jupyter.error"]'
    )  # fmt: skip
    texts = [errors.nth(i).text_content()[:500] for i in range(errors.count())]
    assert not texts, f"cells show errors or warnings: {texts}"
    lines = [t for t in page.locator(".tm-message").all_text_contents() if t.strip()]
    assert not lines, f"a panel shows an error line instead of its figure: {lines}"
    body = page.locator("#main").text_content()
    assert "Error displaying widget" not in body and "Traceback" not in body


@pytest.mark.browser
@pytest.mark.timeout(900)
@pytest.mark.parametrize("name", BROWSER_NOTEBOOKS)
def test_lecture_runs_in_lecture_mode_at_1024x768_and_every_control_redraws_in_place(name, lab_server, chromium_browser):
    """A projector: 1024x768 with the file browser open, lecture mode. Run All as the lecture says, then move
    every slider and dropdown of every panel: each move replaces the panel's figures in place (no frame without
    a figure, the panel never collapses; the best of up to REDRAW_ATTEMPTS redraw times is printed, those over
    REDRAW_TARGET_S listed), and no cell shows an error; the answers stay in a closed
    <details>, the code inputs are collapsed, the figures are shown at their own size. A screenshot is saved."""
    context = chromium_browser.new_context(viewport={"width": 1024, "height": 768})
    page = context.new_page()
    page.set_default_timeout(90_000)
    shot = REPO / "reports" / f"browser_{name}.png"
    moved: list[str] = []
    try:
        # a fresh workspace (?reset): only this notebook open, whatever earlier tests left; the file browser open
        page.goto(lab_server.url(f"lab/tree/{name}.ipynb", "reset"))
        page.wait_for_selector(".jp-Notebook .jp-Cell")
        _accept_kernel_dialog(page)
        page.wait_for_selector(".jp-Notebook-ExecutionIndicator[data-status='idle']")
        assert page.locator(".jp-FileBrowser").first.is_visible(), "the file browser should be open, as in a lecture"

        _run_all_cells(page)
        _wait_until_idle_and_all_run(page, timeout_s=RUN_ALL_TIMEOUT_S)
        n_static = page.locator(".jp-RenderedImage img").count()
        assert n_static >= 1, "no static figure in the cell outputs"

        if name.startswith("teach_"):
            # answers: rendered by Run All, but inside a closed <details>
            opened = page.eval_on_selector_all(".jp-RenderedMarkdown details", "els => els.map(e => e.open)")
            assert opened == [False], f"expected one closed answers block, found open flags {opened}"
            assert not page.locator(".jp-RenderedMarkdown details li").first.is_visible(), "answers are visible"
            # code inputs collapsed (jupyter.source_hidden): the lecture reads as text, figures and controls
            assert page.locator(".jp-InputPlaceholder").count() >= 3, "code inputs are not collapsed"

        panels = _panels(page)
        if name in NO_WIDGETS:
            assert panels.count() == 0
        else:
            page.wait_for_selector(f".{LECTURE_CLASS} img.widget-image", timeout=60_000)
            assert panels.count() >= 1, "no widget panel in lecture mode"
        times: list[float] = []
        slow: list[str] = []
        quiet = _QuietWait()
        for i in range(panels.count()):
            panel = panels.nth(i)
            panel.scroll_into_view_if_needed()
            page.wait_for_function("([i, c]) => Array.from(document.querySelectorAll('.' + c)[i].querySelectorAll('img.widget-image')).some(im => im.naturalWidth > 0)",
                                   arg=[i, LECTURE_CLASS])  # fmt: skip
            _check_projector_layout(page, panel)
            # sliders first: a dropdown may change what a slider offers (the trace explorer's flows)
            controls = [("slider", s) for s in panel.locator(".widget-slider").all()]
            controls += [("dropdown", d) for d in panel.locator(".widget-dropdown select").all()]
            assert controls, f"panel {i} has no control"
            if name == "teach_trace_explorer":
                flow_max = panel.locator(".widget-slider").nth(0).evaluate("e => e.querySelector('.noUi-handle').getAttribute('aria-valuemax')")
                assert float(flow_max) >= 1, f"the flow slider offers only flow 0 (max {flow_max})"
            for kind, control in controls:
                best = None
                # every attempt a value not drawn before (onwards in one direction), so nothing is a repeat
                mover = _SliderMover(page, control) if kind == "slider" else (lambda c=control: _move_dropdown(c))
                for attempt in range(REDRAW_ATTEMPTS):
                    busy = quiet()
                    seconds, empty, what = _measure(page, i, mover)
                    assert not empty, f"panel {i}, {kind} {what}: frames without the figure (ms after the move): {empty[:5]}"
                    _assert_no_errors(page)
                    best = seconds if best is None else min(best, seconds)
                    if best < REDRAW_TARGET_S:
                        break
                moved.append(f"panel {i} {kind} {what}: {best:.3f} s")
                times.append(best)
                if best >= REDRAW_TARGET_S:
                    slow.append(f"panel {i}, {kind} {what}: {best:.3f} s (best of {REDRAW_ATTEMPTS}; CPUs {busy:.0%} busy "
                                f"before the last move, load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs)")
        _assert_no_errors(page)

        first = panels.first if panels.count() else page.locator(".jp-RenderedImage img").first
        first.scroll_into_view_if_needed()
        shot.parent.mkdir(exist_ok=True)
        page.screenshot(path=str(shot))
        if times:  # the REDRAW line is what benchmarks/lecture_redraw.py keeps
            print("REDRAW " + json.dumps({"notebook": name, "times_s": [round(t, 4) for t in times], "moves": moved}))
            print(f"{name}: {len(times)} controls, redraw median {sorted(times)[len(times) // 2]:.3f} s, max {max(times):.3f} s: {moved}")
            if slow:
                print(f"{name}: over the {REDRAW_TARGET_S} s target: {slow}")
    except Exception:
        shot.parent.mkdir(exist_ok=True)
        page.screenshot(path=str(shot.with_name(f"browser_{name}_failure.png")))
        print(f"moved before the failure: {moved}")
        print(lab_server.log_tail())
        raise
    finally:
        context.close()
