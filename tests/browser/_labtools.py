"""Helpers for driving real JupyterLab: a server on 127.0.0.1 with a random token, and Debian's Chromium.

The server runs on a working copy made by ``tcpmodels init`` in a temporary folder (so executing
and autosaving a notebook never writes into the repository), in lecture mode, with user settings that follow JupyterLab's own UI tests
(galata): no news/update notifications, no notebook windowing (so every cell is in the DOM) and
the notebook's kernel started without the kernel-selection dialog.
It runs in its own process group, killed at teardown together with its kernels.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
CHROMIUM = Path("/usr/bin/chromium")
#: Seconds JupyterLab may take to answer /api/status (first start on a busy 2-core machine: 20+ s).
START_TIMEOUT_S = 90

#: User settings written for the test server (JupyterLab settings-dir layout).
LAB_SETTINGS = {
    "@jupyterlab/apputils-extension/notification.jupyterlab-settings": {"fetchNews": "false", "checkForUpdates": False},
    "@jupyterlab/notebook-extension/tracker.jupyterlab-settings": {"windowingMode": "none", "autoStartDefaultKernel": True},
}


@dataclass(frozen=True)
class LabServer:
    base_url: str
    token: str
    root_dir: Path
    log_path: Path
    process: subprocess.Popen

    def url(self, path: str, query: str = "") -> str:
        return f"{self.base_url}/{path.lstrip('/')}?token={self.token}" + (f"&{query}" if query else "")

    def log_tail(self, n: int = 40) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-n:])
        except OSError:
            return "(no server log)"


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def api_get(base_url: str, path: str, token: str | None, timeout_s: float = 5.0):
    """GET a Jupyter REST endpoint; returns (status, parsed JSON or None)."""
    req = urllib.request.Request(f"{base_url}{path}")
    if token:
        req.add_header("Authorization", f"token {token}")
    try:
        with urllib.request.urlopen(req, timeout=timeout_s) as resp:
            return resp.status, json.loads(resp.read() or b"null")
    except urllib.error.HTTPError as exc:
        return exc.code, None


def wait_for_status(base_url: str, token: str, process: subprocess.Popen, log_path: Path, timeout_s: float = START_TIMEOUT_S) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"JupyterLab exited with status {process.returncode}:\n{log_path.read_text(errors='replace')[-3000:]}")
        try:
            status, _ = api_get(base_url, "/api/status", token, timeout_s=2.0)
            if status == 200:
                return
        except (urllib.error.URLError, ConnectionError, TimeoutError, OSError):
            pass
        time.sleep(0.5)
    raise RuntimeError(f"JupyterLab did not answer /api/status within {timeout_s} s:\n{log_path.read_text(errors='replace')[-3000:]}")


def stop_process_group(process: subprocess.Popen) -> None:
    """SIGTERM the server's process group (server and kernels), SIGKILL what is left after 15 s."""
    if process.poll() is not None:
        return
    try:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=15)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=10)
    except ProcessLookupError:
        pass


def root_flag() -> list[str]:
    """Jupyter refuses to run as root without --allow-root (CI containers run as root)."""
    return ["--allow-root"] if hasattr(os, "geteuid") and os.geteuid() == 0 else []


def isolated_env(base: Path) -> dict[str, str]:
    env = dict(os.environ)
    for name in ("runtime", "config"):
        (base / name).mkdir(exist_ok=True)
    env.update(JUPYTER_RUNTIME_DIR=str(base / "runtime"), JUPYTER_CONFIG_DIR=str(base / "config"))
    for name in ("JUPYTER_TOKEN", "JUPYTER_PORT", "MPLBACKEND", "TCPMODELS_LECTURE"):  # conftest sets Agg for pytest only
        env.pop(name, None)
    return env
