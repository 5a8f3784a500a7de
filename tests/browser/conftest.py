"""Fixtures: a JupyterLab server on a temporary copy of notebooks/ and Debian's Chromium (see _labtools)."""

from __future__ import annotations

import json
import secrets
import shutil
import subprocess
import sys

import pytest
from _labtools import (
    BIN,
    CHROMIUM,
    LAB_SETTINGS,
    REPO,
    LabServer,
    free_port,
    isolated_env,
    root_flag,
    stop_process_group,
    wait_for_status,
)


@pytest.fixture(scope="module")
def lab_server(tmp_path_factory):
    pytest.importorskip("jupyterlab", reason="JupyterLab is not installed (the `lab` extra)")
    jupyter = BIN / "jupyter"
    if not jupyter.exists():
        pytest.skip(f"no jupyter executable beside {sys.executable}")
    base = tmp_path_factory.mktemp("lab")
    root = base / "work" / "notebooks"
    root.mkdir(parents=True)
    (base / "work" / "figures").mkdir()
    (base / "work" / "data").symlink_to(REPO / "data", target_is_directory=True)  # read only: captures, datasets
    for nb in sorted((REPO / "notebooks").glob("*.ipynb")):
        shutil.copy2(nb, root / nb.name)
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
    with open(log_path, "wb") as log:
        process = subprocess.Popen(cmd, cwd=root, env=isolated_env(base), stdout=log, stderr=subprocess.STDOUT,
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
