"""Fixtures: a JupyterLab server in lecture mode on a working copy made by `tcpmodels init`, and Debian's Chromium (see _labtools)."""

from __future__ import annotations

import json
import secrets
import subprocess
import sys

import pytest
from _labtools import (
    BIN,
    CHROMIUM,
    LAB_SETTINGS,
    LabServer,
    free_port,
    isolated_env,
    root_flag,
    stop_process_group,
    wait_for_status,
)

from tcpmodels.notebook.widgets import LECTURE_ENV


@pytest.fixture(scope="module")
def lab_server(tmp_path_factory):
    pytest.importorskip("jupyterlab", reason="JupyterLab is not installed (the `lab` extra)")
    jupyter = BIN / "jupyter"
    if not jupyter.exists():
        pytest.skip(f"no jupyter executable beside {sys.executable}")
    from tcpmodels.report.project import init_project

    base = tmp_path_factory.mktemp("lab")
    init_project(base / "work")  # what `make lab` opens: a working copy, never the tracked notebooks
    root = base / "work" / "notebooks"
    settings = base / "settings"
    for rel, value in LAB_SETTINGS.items():
        path = settings / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(value))
    port, token = free_port(), secrets.token_hex(16)
    log_path = base / "jupyterlab.log"
    cmd = [
        str(jupyter), "lab", "--no-browser", "--ip=127.0.0.1", f"--port={port}", "--ServerApp.port_retries=0",
        f"--ServerApp.root_dir={root}", f"--IdentityProvider.token={token}",
        f"--LabApp.user_settings_dir={settings}", f"--LabApp.workspaces_dir={base / 'workspaces'}",
        "--LabApp.extension_manager=readonly", *root_flag(),
    ]  # fmt: skip
    env = isolated_env(base)
    env[LECTURE_ENV] = "1"  # the kernels inherit it: projector-sized figures and controls
    with open(log_path, "wb") as log:
        process = subprocess.Popen(cmd, cwd=root, env=env, stdout=log, stderr=subprocess.STDOUT,
                                   stdin=subprocess.DEVNULL, start_new_session=True)  # fmt: skip
    server = LabServer(f"http://127.0.0.1:{port}", token, root, log_path, process)
    try:
        wait_for_status(server.base_url, token, process, log_path)
        yield server
    finally:
        stop_process_group(process)


@pytest.fixture(scope="module")
def chromium_browser():
    if not CHROMIUM.exists():
        pytest.skip(f"Debian's chromium is not installed at {CHROMIUM} (`make system-deps` installs it as root)")
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed (the `test` extra)")
    with sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(
            executable_path=str(CHROMIUM), headless=True,
            args=["--no-sandbox", "--disable-background-networking", "--disable-dev-shm-usage"],
        )  # fmt: skip
        try:
            yield browser
        finally:
            browser.close()
