"""Kernels for the report that start warm: forked from a process that has the heavy imports done.

Every notebook of ``tcpmodels report`` runs in a fresh IPython kernel. Started as
``python -m ipykernel_launcher``, each kernel spends ~0.9 s of CPU on its own start
and ~2.3 s more importing what nearly every notebook imports (numpy, pandas,
scipy.stats, scipy.optimize, matplotlib with the inline backend), 16 times over.
A *kernel template* process does those imports once; each kernel is then a
``fork`` of it that becomes the kernel exactly as ``ipykernel_launcher`` would
(its own session, the notebook's folder as working directory, the environment
Jupyter gives it, the same ``sys.argv`` and path, fresh random seeds) and runs the
notebook from there. The template also draws one figure off-screen, so that the fonts
and the mathtext parser a kernel's first figure would load are loaded already. A
notebook still gets its own process and its own globals; only the module imports and
those caches are shared, copy-on-write.

:class:`KernelTemplate` is the template seen from the report worker,
:class:`ForkingKernelManager` the Jupyter kernel manager that asks it for kernels
(papermill's ``kernel_manager_class``). Whatever the template cannot start the
same way (another interpreter or kernel command, another ``PYTHON*``/``MPL*``/thread
environment, a template that died) is started by Jupyter as usual.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

__all__ = ["ForkingKernelManager", "KernelTemplate", "PRELOAD", "end_with_stdin"]

#: Modules the template imports: what nearly every notebook imports, and the kernel itself.
#: Not ``matplotlib_inline.backend_inline``: imported in a kernel, it hooks itself into the running shell, so it
#: must be imported there (pyplot loads it at the first figure, as in a launched kernel).
#: ``pandas.io.formats.style``: the claims tables of the paper and fit notebooks are Stylers (jinja2 templates).
#: Not ``ipywidgets``: imported in a kernel, it registers its comm target with the running shell.
PRELOAD = ("ipykernel.kernelapp", "numpy", "pandas", "pandas.io.formats.style", "scipy.stats", "scipy.optimize",
           "matplotlib.pyplot")

#: The backend ipykernel sets at start when none is set (``IPKernelApp.init_gui_pylab``); the template imports
#: matplotlib under it, as a kernel would.
_INLINE_BACKEND = "module://matplotlib_inline.backend_inline"

#: Environment variables read when Python or the preloaded modules start: a kernel whose launch environment
#: differs from the template's in any of them is started the usual way.
_STARTUP_ENV_PREFIXES = ("PYTHON", "MPL", "PANDAS", "OMP_", "OPENBLAS", "MKL_", "NUMEXPR", "JUPYTER_PLATFORM_DIRS",
                         "IPYTHON", "JUPYTER_CONFIG", "JUPYTER_DATA", "JUPYTER_PATH")

#: The folder of this ``tcpmodels`` is on the path only while this module is imported: the kernels get the path
#: (and find the ``tcpmodels``) a launched kernel would.
_TEMPLATE_MAIN = ("import sys; sys.path.insert(0, {root!r}); from tcpmodels.report.kernels import _template_main; "
                  "del sys.path[0]; _template_main()")


def _startup_env(env: dict) -> dict:
    return {k: v for k, v in env.items() if k.startswith(_STARTUP_ENV_PREFIXES)}


def _template_main() -> None:
    """Body of the template process: import :data:`PRELOAD`, then fork a kernel per request on stdin.

    A request is a JSON line ``{"argv": [...], "env": {...}, "cwd": ...}``; the answer is the
    kernel's pid on stdout, sent once the kernel is in its own session.
    """
    had_backend = "MPLBACKEND" in os.environ
    os.environ.setdefault("MPLBACKEND", _INLINE_BACKEND)
    import builtins
    import importlib

    for name in PRELOAD:
        # pandas decides at import whether it runs in a Jupyter kernel (is_terminal(): get_ipython() has a
        # .kernel), and takes display.max_columns = 20 there, 0 (fit the terminal) elsewhere: what it would see
        # imported in a kernel, it sees here
        stub = name == "pandas" and not hasattr(builtins, "get_ipython")
        if stub:
            builtins.get_ipython = _KernelShellStub
        try:
            importlib.import_module(name)
        except Exception:  # noqa: BLE001 - a module that fails here is imported (and fails) in the kernel
            pass
        finally:
            if stub:
                del builtins.get_ipython
    if not had_backend:
        del os.environ["MPLBACKEND"]
    _warm_matplotlib()
    answers = os.fdopen(os.dup(1), "w", encoding="utf-8", buffering=1)
    os.dup2(2, 1)  # the kernels' stdout goes where a launched kernel's would: the worker's log
    # kernels are reaped as soon as they end (never left as zombies that look alive to _ForkedKernel.poll), and
    # waited for, so that their CPU time counts in this process's children, and so in the report's
    signal.signal(signal.SIGCHLD, _reap_children)
    for line in sys.stdin:
        request = json.loads(line)
        ready_r, ready_w = os.pipe()
        pid = os.fork()
        if pid == 0:
            code = 1
            try:
                os.close(ready_r)
                os.close(answers.fileno())  # only the template answers: the worker must see EOF when it ends
                code = _become_kernel(request, ready_w)
            finally:
                os._exit(code)
        os.close(ready_w)
        os.read(ready_r, 1)  # EOF once the child is in its own session (or gone)
        os.close(ready_r)
        answers.write(f"{pid}\n")


def _warm_matplotlib() -> None:
    """Draw one small figure off-screen, so that every kernel inherits what matplotlib loads at its first figure.

    The first figure a process draws loads the DejaVu fonts into FreeType, builds the mathtext
    parser and fills the font lookup caches: ~0.4 s of CPU in each kernel that draws, the same
    work every time. Done here once, the kernels share it copy-on-write. The figure is built
    without pyplot (whose state a kernel must find untouched, and which would load the inline
    backend here) and with the default rcParams; it changes no setting, only caches keyed by font
    and size, so a kernel draws the same pixels either way.
    """
    if "matplotlib.figure" not in sys.modules:  # matplotlib missing or failed to import: nothing to warm
        return
    import io

    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure

        fig = Figure(figsize=(3, 2))
        FigureCanvasAgg(fig)
        ax = fig.add_subplot()
        ax.plot([0, 1], [0, 1], label="a")
        ax.set_xlabel(r"$\alpha_{x}^{2}$ [s]")
        ax.set_title("bold", fontweight="bold")
        ax.legend()
        fig.savefig(io.BytesIO(), format="png", bbox_inches="tight")
    except Exception:  # noqa: BLE001 - a warm-up that fails only leaves the kernels cold
        pass


class _KernelShellStub:
    """Stands in for ``get_ipython()`` during the template's import of pandas: a shell with a kernel."""

    kernel = True

    def __new__(cls) -> type:
        return cls


def _reap_children(signum: int, frame: Any) -> None:
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def _become_kernel(request: dict, ready_w: int) -> int:
    """In the forked child: turn into ``python -m ipykernel_launcher ARGS`` and run until the kernel ends."""
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    os.setsid()  # as jupyter_client's launcher does (start_new_session)
    os.close(ready_w)
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    sys.stdin = open(0, closefd=False)
    cwd = request["cwd"]
    os.chdir(cwd)
    os.environ.clear()
    os.environ.update(request["env"])
    # jupyter_client's launcher sets it to its own pid, and the kernel ends when that process does (ipykernel's
    # ParentPollerUnix): here the template, which ends with the worker
    os.environ["JPY_PARENT_PID"] = str(os.getppid())
    # python -m puts the working directory first on the path and ipykernel_launcher takes it off; python -c put ''
    if sys.path and sys.path[0] in ("", cwd):
        del sys.path[0]
    # the kernel imports tcpmodels from its own path, as a launched one would (the template's may be another copy)
    for name in [m for m in sys.modules if m == "tcpmodels" or m.startswith("tcpmodels.")]:
        del sys.modules[name]
    import ipykernel_launcher

    sys.argv = [ipykernel_launcher.__file__, *request["argv"][3:]]
    # a fresh process draws fresh seeds: so does each kernel, not the template's
    import random

    random.seed()
    if "numpy" in sys.modules:
        sys.modules["numpy"].random.seed()
    from ipykernel import kernelapp

    code = 0
    try:
        # = kernelapp.launch_new_instance(), but IPKernelApp reads JPY_PARENT_PID when its class is defined (in
        # the template, before there was one): pass it, or the kernel would not end with its parent
        kernelapp.IPKernelApp.launch_instance(parent_handle=int(os.environ.get("JPY_PARENT_PID") or 0))
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    import atexit

    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:  # noqa: BLE001 - a closed stream at exit is not an error
            pass
    return code


def end_with_stdin(proc: subprocess.Popen, timeout_s: float) -> bool:
    """Close the stdin of ``proc`` (the report's child processes end with it) and wait for it to end.

    Parameters
    ----------
    proc : subprocess.Popen
        A child started with ``stdin=subprocess.PIPE``.
    timeout_s : float
        Longest wait. [s]

    Returns
    -------
    bool
        Whether it ended in time (False also if closing the pipe or the wait failed).
    """
    try:
        proc.stdin.close()
        proc.wait(timeout=timeout_s)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return True


class KernelTemplate:
    """The template process, seen from the report worker; started on first use.

    It runs in the worker's process group (a timeout that kills the worker kills it too) and
    ends with the end of its stdin; its kernels, in sessions of their own, end when they see
    their parent gone, as launched kernels do when the worker goes.
    """

    def __init__(self) -> None:
        self._proc: subprocess.Popen | None = None
        self._env: dict = {}

    def _start(self) -> None:
        root = str(Path(__file__).resolve().parents[2])
        self._env = _startup_env(dict(os.environ))
        self._proc = subprocess.Popen([sys.executable, "-c", _TEMPLATE_MAIN.format(root=root)],
                                      stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1)

    def start(self) -> None:
        """Start the template now (its imports then overlap with other work)."""
        if self._proc is None:
            self._start()

    def can_launch(self, argv: list[str], env: dict | None) -> bool:
        """Whether ``argv`` with ``env`` is a kernel the template starts the same way.

        Parameters
        ----------
        argv : list of str
            The kernel's command line, as the kernel spec gives it.
        env : dict or None
            The environment the kernel would be launched with.

        Returns
        -------
        bool
            True if the command is ``<this python> -m ipykernel_launcher ...`` and the start-up
            environment equals the template's.
        """
        return (len(argv) >= 3 and argv[0] == sys.executable and argv[1:3] == ["-m", "ipykernel_launcher"]
                and env is not None and _startup_env(env) == _startup_env(dict(os.environ)))

    def launch(self, argv: list[str], env: dict, cwd: str) -> int | None:
        """Fork a kernel from the template.

        Parameters
        ----------
        argv : list of str
            The kernel's command line (its connection file included).
        env : dict
            The kernel's environment.
        cwd : str
            The kernel's working directory.

        Returns
        -------
        int or None
            The kernel's pid, or None if the template is not running (then launch the usual way).
        """
        self.start()
        if self._env != _startup_env(dict(os.environ)) or self._proc.poll() is not None:
            return None
        try:
            self._proc.stdin.write(json.dumps({"argv": argv, "env": env, "cwd": cwd}) + "\n")
            self._proc.stdin.flush()
            line = self._proc.stdout.readline()
        except OSError:
            return None
        return int(line) if line.strip().isdigit() else None

    def close(self) -> None:
        """End the template (its running kernels are not touched)."""
        if self._proc is None:
            return
        if not end_with_stdin(self._proc, 30.0):
            self._proc.kill()
            self._proc.wait()
        self._proc.stdout.close()
        self._proc = None


class _ForkedKernel:
    """What jupyter_client's local provisioner needs of a ``Popen`` for a kernel that is not our child."""

    stdin = stdout = stderr = None

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.returncode: int | None = None

    def poll(self) -> int | None:
        if self.returncode is None:
            try:
                os.kill(self.pid, 0)
            except ProcessLookupError:  # gone (the template reaps its children at once); status unknown
                self.returncode = 0
            except PermissionError:  # the pid was taken by another user's process: ours is gone
                self.returncode = 0
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        end = None if timeout is None else time.monotonic() + timeout
        while self.poll() is None:
            if end is not None and time.monotonic() > end:
                raise subprocess.TimeoutExpired(f"kernel {self.pid}", timeout)
            time.sleep(0.01)
        return self.returncode

    def send_signal(self, signum: int) -> None:
        if self.poll() is None:
            try:
                os.kill(self.pid, signum)
            except ProcessLookupError:
                pass

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)

    def terminate(self) -> None:
        self.send_signal(signal.SIGTERM)


def _manager_class() -> type:
    from jupyter_client.manager import AsyncKernelManager
    from jupyter_client.provisioning.local_provisioner import LocalProvisioner

    class _Manager(AsyncKernelManager):
        template: KernelTemplate | None = None

        async def _async_launch_kernel(self, kernel_cmd: list[str], **kw: Any) -> None:
            template, prov = type(self).template, self.provisioner
            pid = None
            if template is not None and type(prov) is LocalProvisioner and template.can_launch(kernel_cmd,
                                                                                               kw.get("env")):
                # a launched kernel starts in the launcher's working directory unless told (papermill's cwd is a chdir)
                pid = template.launch(kernel_cmd, kw["env"], str(kw.get("cwd") or os.getcwd()))
            if pid is None:
                return await super()._async_launch_kernel(kernel_cmd, **kw)
            # what LocalProvisioner.launch_kernel records of a launched kernel
            prov.process = _ForkedKernel(pid)
            prov.pid, prov.pgid = pid, pid  # the child is the leader of its own session
            prov.cwd = kw.get("cwd", Path.cwd())
            self._reconcile_connection_info(prov.connection_info)

    return _Manager


def ForkingKernelManager(template: KernelTemplate) -> type:
    """A Jupyter ``AsyncKernelManager`` class whose local IPython kernels are forked from ``template``.

    Parameters
    ----------
    template : KernelTemplate
        The template process to fork kernels from.

    Returns
    -------
    type
        The kernel manager class (for papermill's ``kernel_manager_class``).
    """
    cls = _manager_class()
    cls.template = template
    return cls
