"""Privilege checks, command execution and the compiled delay element.

Everything that touches the host goes through :func:`run`, so that a failing
``ip`` or ``tc`` command raises :class:`TestbedError` with the command and the
tool's own message instead of a bare ``CalledProcessError``.
"""

from __future__ import annotations

import hashlib
import os
import shlex
import shutil
import subprocess
from importlib import resources
from pathlib import Path

__all__ = [
    "TestbedError",
    "PrivilegeError",
    "missing_privileges",
    "require_privileges",
    "run",
    "delay_element_binary",
    "tool_versions",
]

#: Linux capability numbers (include/uapi/linux/capability.h).
_CAP_NET_RAW = 13
_CAP_NET_ADMIN = 12
_CAP_SYS_ADMIN = 21


class TestbedError(RuntimeError):
    """A testbed command failed; the message names the command and its output."""

    __test__ = False  # not a pytest test class


class PrivilegeError(TestbedError):
    """The process lacks the capabilities the testbed needs (raised before any side effect)."""


def _effective_capabilities() -> int:
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("CapEff:"):
                    return int(line.split()[1], 16)
    except OSError:
        pass
    return 0


def missing_privileges() -> list[str]:
    """What the testbed needs and this process lacks (empty when all is present).

    Returns
    -------
    list of str
        Human-readable items, e.g. ``"CAP_NET_ADMIN (configure links, qdiscs, routes)"``.
    """
    missing = []
    caps = _effective_capabilities()
    if not caps >> _CAP_NET_ADMIN & 1:
        missing.append("CAP_NET_ADMIN (configure links, qdiscs, routes)")
    if not caps >> _CAP_SYS_ADMIN & 1:
        missing.append("CAP_SYS_ADMIN (create network namespaces)")
    if not caps >> _CAP_NET_RAW & 1:
        missing.append("CAP_NET_RAW (delay element and tcpdump use raw sockets)")
    for tool in ("ip", "tc"):
        if shutil.which(tool) is None:
            missing.append(f"the '{tool}' command (Debian package iproute2)")
    if not Path("/proc/self/ns/net").exists():
        missing.append("network namespaces (/proc/self/ns/net absent)")
    return missing


def require_privileges() -> None:
    """Raise :class:`PrivilegeError` unless the testbed can run here.

    Called before any side effect, so a refused run leaves nothing behind.
    """
    missing = missing_privileges()
    if missing:
        raise PrivilegeError(
            "the testbed needs root (or these capabilities) and tools; missing: "
            + "; ".join(missing)
            + f". Run as root, e.g. `sudo {_tcpmodels_executable()} testbed run CONFIG` (sudo resets PATH, so name "
            "the executable of your virtual environment)."
        )


def _tcpmodels_executable() -> str:
    """The ``tcpmodels`` beside the running Python (a virtual environment's ``bin/``), else plain ``tcpmodels``."""
    import sys

    beside = Path(sys.executable).with_name("tcpmodels")
    return shlex.quote(str(beside)) if beside.is_file() else "tcpmodels"


def run(cmd: list[str], *, check: bool = True, timeout: float = 60.0, input_text: str | None = None
        ) -> subprocess.CompletedProcess:
    """Run one command, capturing output; raise :class:`TestbedError` when it fails."""
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, input=input_text)
    except FileNotFoundError as exc:
        raise TestbedError(f"command not found: {cmd[0]} (needed for: {' '.join(cmd)})") from exc
    except subprocess.TimeoutExpired as exc:
        raise TestbedError(f"command timed out after {timeout} s: {' '.join(cmd)}") from exc
    if check and proc.returncode != 0:
        raise TestbedError(
            f"command failed (exit {proc.returncode}): {' '.join(cmd)}\n{proc.stderr.strip() or proc.stdout.strip()}"
        )
    return proc


def find_tool(tool: str) -> str | None:
    """The path of a system tool, also where ``PATH`` lacks the sbin directories (bpftool lives in /usr/sbin).

    Parameters
    ----------
    tool : str
        The program's name, e.g. ``"bpftool"``.

    Returns
    -------
    str or None
        Its path, or None if it is not installed.
    """
    return shutil.which(tool) or next(
        (str(p) for p in (Path("/usr/sbin") / tool, Path("/sbin") / tool) if p.exists()), None)


def cache_dir() -> Path:
    base = os.environ.get("TCPMODELS_CACHE_DIR") or os.environ.get("XDG_CACHE_HOME")
    root = Path(base) if base else Path.home() / ".cache"
    if not os.environ.get("TCPMODELS_CACHE_DIR"):
        root = root / "tcpmodels"
    return root


def delay_element_source() -> bytes:
    """The C source of the delay element shipped in the package."""
    return resources.files("tcpmodels.testbed").joinpath("delay_element.c").read_bytes()


def delay_element_binary() -> Path:
    """Path of the compiled delay element, compiling it on first use.

    The binary lives in ``~/.cache/tcpmodels/`` (or ``$TCPMODELS_CACHE_DIR``)
    under a name carrying the hash of the source, so a changed source is
    rebuilt. The compiler is ``$CC`` or ``cc``/``gcc``.

    Raises
    ------
    TestbedError
        No C compiler, or compilation failed (the compiler's message is included).
    """
    source = delay_element_source()
    digest = hashlib.sha256(source).hexdigest()[:16]
    cache = cache_dir()
    binary = cache / f"delay_element-{digest}"
    if binary.exists() and os.access(binary, os.X_OK):
        return binary
    compiler = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc")
    if not compiler or shutil.which(compiler) is None:
        raise TestbedError(
            "the delay element is a small C program compiled on first use, but no C compiler was "
            "found (install gcc: `apt-get install gcc`, or set $CC); links with delay_s > 0 need it"
        )
    cache.mkdir(parents=True, exist_ok=True)
    src_path = cache / f"delay_element-{digest}.c"
    src_path.write_bytes(source)
    tmp = cache / f".delay_element-{digest}.{os.getpid()}"
    run([compiler, "-O2", "-Wall", "-o", str(tmp), str(src_path)], timeout=120)
    os.replace(tmp, binary)  # atomic: a concurrent build never sees half a file
    return binary


def _first_line(cmd: list[str]) -> str | None:
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return None
    text = (proc.stdout or proc.stderr).strip()
    return text.splitlines()[0] if text else None


def tool_versions() -> dict[str, str | None]:
    """Versions of the tools a run depends on (``None`` where a tool is absent)."""
    import platform
    import sys

    return {
        "kernel": platform.release(),
        "python": sys.version.split()[0],
        "iproute2": _first_line(["ip", "-V"]),
        "tcpdump": _first_line(["tcpdump", "--version"]),
        "ethtool": _first_line(["ethtool", "--version"]),
        "cc": _first_line([os.environ.get("CC") or "cc", "--version"]),
        "delay_element_sha256": hashlib.sha256(delay_element_source()).hexdigest(),
    }
