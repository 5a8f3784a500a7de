"""Build, load, list and unload the ``tm_*`` BPF congestion controls; read their state.

Every program is a ``struct_ops`` ``tcp_congestion_ops`` written in C next to this
module. :func:`build` compiles one with ``clang -O2 -g -target bpf`` against a
``vmlinux.h`` generated from the running kernel's BTF (``bpftool btf dump file
/sys/kernel/btf/vmlinux format c``) into the cache directory
(``~/.cache/tcpmodels/testbed/kernel_cc/`` or ``$TCPMODELS_CACHE_DIR/kernel_cc/``, never
the repository). A load's parameters become ``tm_params.h`` (compile-time
constants and the x(RTT) table in ``.rodata``), so one object file per parameter
set, cached under the hash of sources, parameters and kernel.

:func:`load` registers the object with ``bpftool struct_ops register``; the name
then appears in ``net.ipv4.tcp_available_congestion_control`` of every namespace
(registration is global) and a socket selects it with ``TCP_CONGESTION``. Each
registration has a state file ``<state dir>/kernel_cc/<name>.json`` (parameters and
holders: the pids, with their start times, of the processes using it). Campaigns share
a registration (:func:`congestion_control`, :func:`acquire` / :func:`release`): one
with the same parameters is joined, the last live holder to let go unregisters it, and
asking for other parameters while a live process holds it fails with a clear error. A
holder that died (even by SIGKILL) does not count, so :func:`cleanup` can unregister what
a killed run left behind without touching a live run's congestion control. The state is
changed under an ``flock`` on ``<state dir>/kernel_cc/.lock``.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import subprocess
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

from tcpmodels import congestion
from tcpmodels._docstrings import SharedEntries
from tcpmodels.testbed._system import PrivilegeError, TestbedError, cache_dir, find_tool, missing_privileges, run

__all__ = [
    "PROGRAMS", "PARAMETERS", "CONN_MAPS", "DIAG_MAPS", "BTF_PATH", "CC_STATE_DIR", "KernelCcUnavailable",
    "unavailable_reason", "requested_problem", "build", "load", "unload", "loaded", "available_congestion_controls",
    "congestion_control", "acquire", "release", "live_holders", "dump_connections", "cleanup", "CcCleanupReport",
    "still_loaded",
    "params_header", "xtab_rtts_us", "xtab_q16",
]

#: Parameters documented once for the docstrings of this module that share them.
_PARAMETERS = SharedEntries("""
    name : str
        One of :data:`PROGRAMS`.
    params : dict, optional
        Parameters (see :data:`PARAMETERS`).
    pid : int, optional
        The holding process (default: this one).
""")

#: the programs shipped, by the name they register under (from :mod:`tcpmodels.congestion`)
PROGRAMS = congestion.bpf_programs()
#: parameters each program accepts at load time, with their defaults (the registry's kernel parameters;
#: tm_cubic_x: reading none|multiply|divide of P3 eq. (4), x_exponent k of x(RTT) = (RTT / 1 s)^k,
#: c [segments/s^3], beta_cubic (fraction kept) [-], fast_convergence, hystart)
PARAMETERS: dict[str, dict[str, object]] = {name: congestion.by_kernel_name(name).defaults("kernel")
                                            for name in PROGRAMS}
#: the per-connection map of the coupled programs (bpftool map name, at most 15 characters)
CONN_MAPS = {"tm_lia": "tm_lia_conn", "tm_olia": "tm_olia_conn"}
#: program -> its diagnostic counters (an array map; :func:`read_diag`)
DIAG_MAPS = {"tm_lia": "tm_lia_diag", "tm_olia": "tm_olia_diag"}
BTF_PATH = Path("/sys/kernel/btf/vmlinux")
CC_STATE_DIR = Path(os.environ.get("TCPMODELS_STATE_DIR", "/run/tcpmodels")) / "kernel_cc"
_AVAILABLE = Path("/proc/sys/net/ipv4/tcp_available_congestion_control")
_SOURCES = ("tm_bpf.h", "tm_math.h")

# x(RTT) table grid, as in tm_math.h: 8 points per octave from 2^6 us, 20 octaves
_XTAB_MIN_LOG2 = 6
_XTAB_OCTAVES = 20
_XTAB_LEN = _XTAB_OCTAVES * 8 + 1


class KernelCcUnavailable(TestbedError):
    """The running system cannot build or load BPF congestion controls (the message says why)."""


# ------------------------------------------------------------------ prerequisites
def unavailable_reason(*, need_root: bool = True) -> str | None:
    """Why BPF congestion controls cannot be built/loaded here, or ``None`` when they can.

    Checks root privileges (when ``need_root``), the kernel's BTF at ``/sys/kernel/btf/vmlinux``,
    ``clang``, ``bpftool`` and the libbpf headers.

    Parameters
    ----------
    need_root : bool
        Also check the privileges that loading needs (building needs none).

    Returns
    -------
    str or None
        One line naming what is missing, or ``None``.
    """
    if need_root:
        missing = missing_privileges()
        if missing:
            return "loading BPF congestion controls needs root (missing: " + ", ".join(missing) + ")"
    if not BTF_PATH.exists():
        return f"the kernel exposes no BTF ({BTF_PATH} missing; needs CONFIG_DEBUG_INFO_BTF)"
    for tool, pkg in (("clang", "clang"), ("bpftool", "bpftool")):
        if not find_tool(tool):
            return f"{tool} not found (Debian package {pkg}; `make system-deps` installs it as root)"
    if not Path("/usr/include/bpf/bpf_helpers.h").exists():
        return "libbpf headers not found (/usr/include/bpf/bpf_helpers.h; Debian package libbpf-dev)"
    return None


def requested_problem(names: Iterable[str | None]) -> str | None:
    """One line saying why the ``tm_*`` congestion controls among ``names`` cannot be used now.

    What a campaign prints (and raises as :class:`KernelCcUnavailable`) before it starts
    traffic that asks for a ``tm_*`` control: BPF congestion controls cannot be loaded here
    (:func:`unavailable_reason`), or the control is not registered.

    Parameters
    ----------
    names : iterable of str or None
        The congestion controls the flows ask for (``None`` and the kernel's own are ignored).

    Returns
    -------
    str or None
        The line, or ``None`` when no ``tm_*`` control is asked for or all of them are registered.
    """
    wanted = sorted({n for n in names if n and n.startswith("tm_")})
    if not wanted:
        return None
    what = ", ".join(wanted)
    reason = unavailable_reason()
    if reason:
        return f"{what} requested, but BPF congestion controls cannot be loaded here: {reason}"
    missing = [n for n in wanted if n not in available_congestion_controls()]
    if missing:
        return (f"{', '.join(missing)} requested but not registered: load with `tcpmodels testbed cc load NAME` "
                f"or tcpmodels.testbed.kernel_cc.congestion_control(NAME) around the run")
    return None


def _require(need_root: bool = True) -> None:
    reason = unavailable_reason(need_root=need_root)
    if reason:
        if need_root and missing_privileges():
            raise PrivilegeError(reason)
        raise KernelCcUnavailable(reason)


# ------------------------------------------------------------------ parameters
def _check_name(name: str) -> None:
    if name not in PROGRAMS:
        raise ValueError(f"congestion control must be one of {PROGRAMS}; got {name!r}")


def _resolve_params(name: str, params: dict | None) -> dict:
    _check_name(name)
    allowed = PARAMETERS[name]
    out = dict(allowed)
    for key, value in (params or {}).items():
        if key not in allowed:
            raise ValueError(f"{name} has no parameter {key!r}; it takes {sorted(allowed) or 'none'}")
        out[key] = value
    if name == "tm_cubic_x":
        out["reading"] = str(out["reading"])
        if out["reading"] not in ("none", "multiply", "divide"):
            raise ValueError(f"reading must be one of none, multiply, divide; got {out['reading']!r}")
        for key in ("x_exponent", "c", "beta_cubic"):
            out[key] = float(out[key])
        if not -2.0 <= out["x_exponent"] < 0.0:
            raise ValueError(f"x_exponent [-] must be in [-2, 0); got {out['x_exponent']}")
        if not 0.0 < out["c"] <= 100.0:
            raise ValueError(f"c [segments/s^3] must be in (0, 100]; got {out['c']}")
        if not 0.0 < out["beta_cubic"] < 1.0:
            raise ValueError(f"beta_cubic [-] must be in (0, 1); got {out['beta_cubic']}")
        for key in ("fast_convergence", "hystart"):
            out[key] = int(bool(int(out[key])))
    return out


def xtab_rtts_us() -> list[int]:
    """The RTTs of the x(RTT) table's grid points (8 per octave from 64 us), as ``tm_math.h`` indexes them.

    Returns
    -------
    list of int
        One RTT per grid point, increasing. [us]
    """
    out = []
    for idx in range(_XTAB_LEN):
        msb, frac = _XTAB_MIN_LOG2 + idx // 8, idx % 8
        out.append((8 + frac) << (msb - 3))
    return out


def xtab_q16(reading: str, x_exponent: float) -> list[int]:
    """The x(RTT) factor ``xf`` * 2^16 at :func:`xtab_rtts_us`: 1, x or 1/x with
    x(RTT) = :class:`tcpmodels.models.cubic.PowerLawX` (``x_power_law_params(x_exponent)``),
    clamped to [2^-16, 256] (so K is at most 256^(1/3) = 6.35 times plain CUBIC's).

    Parameters
    ----------
    reading : str
        ``none`` (xf = 1), ``multiply`` (xf = x) or ``divide`` (xf = 1/x): P3 eq. (4).
    x_exponent : float
        k of x(RTT) = (RTT / 1 s)^k. [-]

    Returns
    -------
    list of int
        xf * 2^16 at each grid point. [-]
    """
    from tcpmodels.models.cubic import PowerLawX, x_power_law_params

    x_of = PowerLawX(**x_power_law_params(x_exponent))
    out = []
    for rtt_us in xtab_rtts_us():
        x = float(x_of(rtt_us * 1e-6))
        xf = 1.0 if reading == "none" else (x if reading == "multiply" else 1.0 / x)
        out.append(int(min(max(round(xf * 65536.0), 1), 1 << 24)))
    return out


@_PARAMETERS.fill
def params_header(name: str, params: dict | None = None) -> str:
    """The ``tm_params.h`` of one load: the parameters as C constants.

    Parameters
    ----------
    {name}
    params : dict, optional
        Parameters (see :data:`PARAMETERS`; missing ones take their defaults).

    Returns
    -------
    str
        The header's text.
    """
    p = _resolve_params(name, params)
    lines = [f"/* tm_params.h for {name}: {json.dumps(p, sort_keys=True)} */"]
    if name == "tm_cubic_x":
        lines += [
            f"#define TM_C_Q10 {int(round(p['c'] * 1024))}",
            f"#define TM_BETA_Q10 {int(round(p['beta_cubic'] * 1024))}",
            f"#define TM_FAST_CONVERGENCE {p['fast_convergence']}",
            f"#define TM_HYSTART {p['hystart']}",
            "#define TM_XTAB_VALUES { " + ", ".join(str(v) for v in xtab_q16(p["reading"], p["x_exponent"])) + " }",
        ]
    return "\n".join(lines) + "\n"


# ------------------------------------------------------------------ build
def _source(name: str) -> bytes:
    return resources.files("tcpmodels.testbed.kernel_cc").joinpath(name).read_bytes()


def _build_dir() -> Path:
    return cache_dir() / "kernel_cc"


def _vmlinux_h() -> Path:
    """``vmlinux.h`` for the running kernel (regenerated when the kernel's BTF changes)."""
    btf = BTF_PATH.read_bytes()
    digest = hashlib.sha256(btf).hexdigest()[:16]
    path = _build_dir() / f"btf-{digest}" / "vmlinux.h"
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        text = run([find_tool("bpftool") or "bpftool", "btf", "dump", "file", str(BTF_PATH), "format", "c"],
                   timeout=120).stdout
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(text)
        os.replace(tmp, path)
    return path


@_PARAMETERS.fill
def build(name: str, params: dict | None = None) -> Path:
    """Compile ``name`` with ``params`` into a BPF object; return its path (cached).

    Parameters
    ----------
    {name, params}

    Returns
    -------
    pathlib.Path
        The object file, in the cache directory.

    Raises
    ------
    ValueError
        Unknown program or parameter.
    KernelCcUnavailable
        No BTF, clang, bpftool or libbpf headers; or the compiler failed (its message included).
    """
    p = _resolve_params(name, params)
    _require(need_root=False)
    vmlinux = _vmlinux_h()
    header = params_header(name, p)
    h = hashlib.sha256()
    for part in (_source(f"{name}.bpf.c"), *(_source(s) for s in _SOURCES), header.encode(),
                 vmlinux.parent.name.encode()):
        h.update(part)
    digest = h.hexdigest()[:16]
    out_dir = _build_dir() / f"{name}-{digest}"
    obj = out_dir / f"{name}.bpf.o"
    if obj.exists():
        return obj
    out_dir.mkdir(parents=True, exist_ok=True)
    for src in (f"{name}.bpf.c", *_SOURCES):
        (out_dir / src).write_bytes(_source(src))
    (out_dir / "tm_params.h").write_text(header)
    tmp = out_dir / f".{name}.{os.getpid()}.o"
    proc = subprocess.run(
        ["clang", "-O2", "-g", "-Wall", "-Wno-unused-function", "-target", "bpf",
         "-I", str(out_dir), "-I", str(vmlinux.parent), "-c", str(out_dir / f"{name}.bpf.c"), "-o", str(tmp)],
        capture_output=True, text=True, timeout=300)
    if proc.returncode != 0:
        raise KernelCcUnavailable(f"clang failed on {name}.bpf.c:\n{proc.stderr.strip()}")
    os.replace(tmp, obj)
    return obj


# ------------------------------------------------------------------ lifecycle
def available_congestion_controls() -> list[str]:
    """``net.ipv4.tcp_available_congestion_control`` (global: every namespace sees the same list).

    Returns
    -------
    list of str
        The names (empty if the file cannot be read).
    """
    try:
        return _AVAILABLE.read_text().split()
    except OSError:
        return []


def _state_path(name: str) -> Path:
    return CC_STATE_DIR / f"{name}.json"


def _read_state(name: str) -> dict | None:
    try:
        return json.loads(_state_path(name).read_text())
    except (OSError, ValueError):
        return None


def _write_state(name: str, state: dict) -> None:
    CC_STATE_DIR.mkdir(parents=True, exist_ok=True)
    tmp = _state_path(name).with_suffix(f".{os.getpid()}.tmp")
    tmp.write_text(json.dumps(state))
    os.replace(tmp, _state_path(name))


@contextlib.contextmanager
def _state_lock() -> Iterator[None]:
    """Serialize the loader's read-modify-write of registrations and their holders across processes
    (``flock`` on ``<state dir>/.lock``: released by the kernel when the holder dies, even by SIGKILL)."""
    import fcntl

    CC_STATE_DIR.mkdir(parents=True, exist_ok=True)
    with open(CC_STATE_DIR / ".lock", "a") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def _proc_start_ticks(pid: int) -> int | None:
    try:
        return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[19])
    except (OSError, IndexError, ValueError):
        return None


def _holder(pid: int) -> dict:
    return {"pid": pid, "start_ticks": _proc_start_ticks(pid)}


def _holders(state: dict | None) -> list[dict]:
    """The holders a state records (a state written before holders existed: its owner ``pid``)."""
    if not state:
        return []
    if "holders" in state:
        return list(state["holders"])
    return [{"pid": state["pid"], "start_ticks": state.get("pid_start_ticks")}] if state.get("pid") else []


def _alive(h: dict) -> bool:
    ticks = _proc_start_ticks(h["pid"])
    return ticks is not None and ticks == h.get("start_ticks")


def live_holders(name: str) -> list[int]:
    """The live processes holding the registration of ``name`` (a process that died, even by SIGKILL,
    does not count: its pid is gone or belongs to a process started later).

    Parameters
    ----------
    name : str
        A ``tm_*`` congestion control.

    Returns
    -------
    list of int
        Their pids.
    """
    return [h["pid"] for h in _holders(_read_state(name)) if _alive(h)]


def _owner_alive(state: dict | None) -> bool:
    return any(_alive(h) for h in _holders(state))


def loaded() -> dict[str, dict]:
    """The ``tm_*`` congestion controls registered now, each with its load record.

    Returns
    -------
    dict
        Name -> ``{params, pid, owner_alive, holders, pinned, loaded_unix_s}``: ``pid`` the process
        that registered it (``None`` for a CLI load), ``holders`` the live processes holding it
        (:func:`congestion_control`), ``owner_alive`` whether there is one, ``pinned`` a CLI load
        (stays when its holders end), ``loaded_unix_s`` [s] since the epoch.
    """
    out = {}
    for cc in available_congestion_controls():
        if cc.startswith("tm_"):
            state = _read_state(cc) or {}
            holders = [h["pid"] for h in _holders(state) if _alive(h)]
            out[cc] = {"params": state.get("params"), "pid": state.get("pid"), "owner_alive": bool(holders),
                       "holders": holders, "pinned": bool(state.get("pinned", state and not state.get("pid"))),
                       "loaded_unix_s": state.get("loaded_unix_s")}
    return out


def _register(obj: Path, name: str) -> None:
    run([find_tool("bpftool") or "bpftool", "struct_ops", "register", str(obj)], timeout=120)
    if name not in available_congestion_controls():
        raise TestbedError(f"bpftool registered {obj} but {name} is not in {_AVAILABLE}")


def _unregister(name: str) -> None:
    """``bpftool struct_ops unregister name NAME``, tolerating the maps of earlier registrations of that name.

    An unregistered struct_ops map lives on until the last socket using it is gone (a namespace torn down
    just before frees its sockets asynchronously); bpftool then tries it too and the kernel answers
    EINPROGRESS ("Operation now in progress": already being freed), which fails the command although the
    registration asked for is gone. Such a failure counts as done when every error is that one and
    ``name`` is no longer available.
    """
    proc = run([find_tool("bpftool") or "bpftool", "struct_ops", "unregister", "name", name], check=False,
               timeout=60)
    if proc.returncode == 0:
        return
    errors = [line for line in (proc.stderr or proc.stdout).splitlines() if line.strip().startswith("Error")]
    if errors and all("Operation now in progress" in e for e in errors) and name not in available_congestion_controls():
        return
    raise TestbedError(f"command failed (exit {proc.returncode}): bpftool struct_ops unregister name {name}\n"
                       f"{(proc.stderr or proc.stdout).strip()}")


def _load_locked(name: str, p: dict, owner_pid: int | None, replace: bool) -> dict:
    obj = build(name, p)
    if name in available_congestion_controls():
        state = _read_state(name)
        others = [h["pid"] for h in _holders(state) if _alive(h) and h["pid"] != owner_pid]
        if not replace:
            raise TestbedError(f"{name} is registered already (params {(state or {}).get('params')}); "
                               f"unload it first or pass replace=True")
        if others:
            raise TestbedError(f"{name} is held by live process(es) {others} (params {(state or {}).get('params')}); "
                               f"it is not replaced under them")
        _unload_locked(name)
    _register(obj, name)
    record = {"name": name, "params": p, "object": str(obj), "pid": owner_pid,
              "pid_start_ticks": _proc_start_ticks(owner_pid) if owner_pid else None,
              "holders": [_holder(owner_pid)] if owner_pid else [], "pinned": owner_pid is None,
              "loaded_unix_s": time.time(), "loaded_by": _user()}
    _write_state(name, record)
    return record


@_PARAMETERS.fill
def load(name: str, params: dict | None = None, *, owner_pid: int | None = None, replace: bool = False) -> dict:
    """Build (if needed) and register ``name`` with ``params``.

    Parameters
    ----------
    {name, params}
    owner_pid : int, optional
        Its first holder: the registration is a leftover for :func:`cleanup` once no holder lives;
        ``None`` (the CLI) pins the load: it stays until unloaded (cleanup still removes it when no
        live process holds it).
    replace : bool
        If ``name`` is registered already: unregister it first (else: raise). A registration that
        live processes other than ``owner_pid`` hold is never replaced (raises).

    Returns
    -------
    dict
        The load record (``name``, ``params``, ``object``, ``pid``, ``holders``, ``pinned``, ``loaded_unix_s``).

    Raises
    ------
    PrivilegeError, KernelCcUnavailable, TestbedError
    """
    p = _resolve_params(name, params)
    _require(need_root=True)
    with _state_lock():
        return _load_locked(name, p, owner_pid, replace)


def _user() -> str:
    """Who is loading: the user behind sudo, else the account of this process."""
    sudo = os.environ.get("SUDO_USER")
    if sudo:
        return sudo
    try:
        import pwd

        return pwd.getpwuid(os.getuid()).pw_name
    except (ImportError, KeyError):  # pragma: no cover - no passwd entry
        return f"uid {os.getuid()}"


def still_loaded(name: str) -> int:
    """Registrations of ``name`` unregistered already that sockets still run (they keep it until they close).

    Parameters
    ----------
    name : str
        A ``tm_*`` congestion control.

    Returns
    -------
    int
        How many (:func:`tcpmodels.testbed.kernel_cc.mapread.unregistered_still_loaded`); 0 if none.
    """
    from tcpmodels.testbed.kernel_cc.mapread import unregistered_still_loaded

    return unregistered_still_loaded(name)


def _unload_locked(name: str) -> bool:
    present = name in available_congestion_controls()
    if present:
        _unregister(name)
    _state_path(name).unlink(missing_ok=True)
    return present


def unload(name: str) -> bool:
    """Unregister ``name`` (whoever holds it). Sockets already using it keep running with it until
    they close (the kernel holds a reference).

    Parameters
    ----------
    name : str
        A ``tm_*`` congestion control.

    Returns
    -------
    bool
        ``False`` if it was not registered.
    """
    if not name.startswith("tm_"):
        raise ValueError(f"only tm_* congestion controls are unloaded here; got {name!r}")
    _require(need_root=True)
    with _state_lock():
        return _unload_locked(name)


@_PARAMETERS.fill
def acquire(name: str, params: dict | None = None, *, pid: int | None = None) -> dict:
    """Hold the registration of ``name`` with ``params`` for process ``pid``: join a registration
    with the same parameters built from the same sources (whoever loaded it), or load one. The holders are recorded in the run-state
    directory (``<state dir>/kernel_cc/<name>.json``); :func:`release` lets go.

    Parameters
    ----------
    {name, params, pid}

    Returns
    -------
    dict
        The load record, with ``joined`` (the registration existed already).

    Raises
    ------
    TestbedError
        ``name`` is registered with other parameters, or built from other sources (another object
        file), and live processes hold it (the message names them and both parameter sets); such a
        registration with no live holder is replaced.
    """
    p = _resolve_params(name, params)
    pid = os.getpid() if pid is None else pid
    _require(need_root=True)
    with _state_lock():
        state = _read_state(name)
        # join only the same program: same parameters and the same object (the object's name is the
        # hash of the sources, so a registration from other code, e.g. an older checkout, is not joined)
        same = bool(state) and state.get("params") == p and state.get("object") == str(build(name, p))
        if name in available_congestion_controls() and same:
            holders = [h for h in _holders(state) if _alive(h) and h["pid"] != pid] + [_holder(pid)]
            state = {**state, "holders": holders, "pinned": bool(state.get("pinned", not state.get("pid")))}
            _write_state(name, state)
            return {**state, "joined": True}
        others = [h["pid"] for h in _holders(state) if _alive(h) and h["pid"] != pid]
        if name in available_congestion_controls() and others:
            raise TestbedError(f"{name} is registered with params {(state or {}).get('params')} (object "
                               f"{(state or {}).get('object')}) and held by live process(es) {others}; this call asks "
                               f"for params {p} (object {build(name, p)}). The kernel has one {name} at a time: wait "
                               f"until they finish, or use their parameters and sources")
        return {**_load_locked(name, p, pid, replace=True), "joined": False}


@_PARAMETERS.fill
def release(name: str, *, pid: int | None = None) -> bool:
    """Let go of ``pid``'s hold on ``name``; unregister it when no live process holds it any more
    (and it is not a pinned CLI load).

    Parameters
    ----------
    name : str
        A ``tm_*`` congestion control.
    {pid}

    Returns
    -------
    bool
        Whether it was unregistered.
    """
    pid = os.getpid() if pid is None else pid
    _require(need_root=True)
    with _state_lock():
        state = _read_state(name)
        if state is None:
            return False
        holders = [h for h in _holders(state) if _alive(h) and h["pid"] != pid]
        pinned = bool(state.get("pinned", not state.get("pid")))
        if holders or pinned:
            _write_state(name, {**state, "holders": holders, "pinned": pinned})
            return False
        return _unload_locked(name)


@_PARAMETERS.fill
@contextlib.contextmanager
def congestion_control(name: str, params: dict | None = None) -> Iterator[dict]:
    """Make ``name`` (with ``params``) available for the ``with`` block, shared with every other
    process that asks for it with the same parameters (:func:`acquire`); after the block it is
    unregistered only if no other live process holds it (:func:`release`). A registration with
    other parameters raises :class:`TestbedError` while a live process holds it (and is replaced
    when none does).

    Parameters
    ----------
    {name, params}

    Yields
    ------
    dict
        The load record (``joined``: whether the registration existed already).
    """
    record = acquire(name, params)
    try:
        yield record
    finally:
        with contextlib.suppress(TestbedError):
            release(name)


# ------------------------------------------------------------------ observability
def dump_connections(name: str = "tm_lia") -> list[dict]:
    """The per-connection state of a coupled program (one dict per MPTCP connection), read with
    :func:`tcpmodels.testbed.kernel_cc.mapread.read_connections` (three copies per entry).

    Parameters
    ----------
    name : str
        ``tm_lia`` or ``tm_olia``.

    Returns
    -------
    list of dict
        One per map entry (empty if the program is not registered). Each dict: ``token``, ``alpha``
        (the last in-kernel alpha, from ``alpha_q16``) [-], ``cwnd_total_segments`` [segments],
        ``updated_ns`` (``bpf_ktime_get_ns``) [ns], ``acks``, ``read_ns`` (CLOCK_MONOTONIC when
        read) [ns], ``subflows``: a list of ``{slot, subflow_id, cwnd_segments, srtt_s, loss_events,
        rto_events, delivered_segments, delivered_at_last_loss_segments}`` for the occupied slots
        [segments, s] (tm_olia adds ``ell_segments``), and ``calc``: per slot that computed one,
        its last alpha (LIA) or increase (OLIA) with the inputs it was computed from and whether
        the read was ``consistent`` (:func:`~tcpmodels.testbed.kernel_cc.mapread.calc_dict`).

    Notes
    -----
    Only the map of the registration in use is read. An earlier registration of ``name``, unregistered
    since, stays loaded with its own map while any socket still runs it (a subflow retransmitting its
    FIN for minutes after its connection closed); its entries are not connections of this one
    (:func:`tcpmodels.testbed.kernel_cc.mapread.registered_map_ids`).
    """
    from tcpmodels.testbed.kernel_cc.mapread import read_connections, registered_map_ids

    if name not in CONN_MAPS:
        raise ValueError(f"no per-connection map for {name!r}; there is one for {sorted(CONN_MAPS)}")
    _require(need_root=True)
    out = []
    for e in read_connections(CONN_MAPS[name], registered_map_ids(name)):
        v = e["value"]
        subflows = [
            {"slot": i, "subflow_id": v.subflow_id[i], "cwnd_segments": v.cwnd[i], "srtt_s": v.srtt_us[i] * 1e-6,
             "loss_events": v.loss_events[i], "rto_events": v.rto_events[i], "delivered_segments": v.delivered[i],
             "delivered_at_last_loss_segments": v.delivered_at_loss[i],
             **({"ell_segments": v.ell[i]} if hasattr(v, "ell") else {})}
            for i in range(len(v.cwnd)) if v.cwnd[i] and v.srtt_us[i]]
        out.append({"token": e["token"], "alpha": v.alpha_q16 / 65536.0, "cwnd_total_segments": v.cwnd_total,
                    "updated_ns": v.updated_ns, "acks": v.acks, "read_ns": e["read_ns"], "subflows": subflows,
                    "calc": [c for c in e["calc"] if c["seq"] or c["seq_end"]]})
    return out


def read_diag(name: str = "tm_lia") -> dict[str, int] | None:
    """The diagnostic counters of a coupled program since it was registered: inputs it refused as
    implausible (an ``acked`` or a window above 65535 segments), OLIA increases bounded to one segment
    per acked segment, and how each ``release`` found its connection
    (:data:`tcpmodels.testbed.kernel_cc.mapread.DIAG_COUNTERS`).

    Parameters
    ----------
    name : str
        ``tm_lia`` or ``tm_olia``.

    Returns
    -------
    dict or None
        Counter name -> count, of the registration in use only (not of an earlier one still held by
        its sockets, see :func:`dump_connections`); ``None`` if the program is not registered.
    """
    from tcpmodels.testbed.kernel_cc.mapread import read_diag as _read
    from tcpmodels.testbed.kernel_cc.mapread import registered_map_ids

    if name not in DIAG_MAPS:
        raise ValueError(f"no diagnostic map for {name!r}; there is one for {sorted(DIAG_MAPS)}")
    _require(need_root=True)
    return _read(DIAG_MAPS[name], registered_map_ids(name))


# ------------------------------------------------------------------ cleanup
@dataclass
class CcCleanupReport:
    """What :func:`cleanup` unregistered and what it left alone.

    ``pinned`` describes the deliberate ``testbed cc load`` loads among ``unregistered`` (not leftovers
    of a killed run: whoever loaded them is told, :meth:`to_dict`); ``skipped_pinned`` those left alone
    with ``keep_pinned``.
    """

    unregistered: list[str] = field(default_factory=list)
    skipped_live: list[str] = field(default_factory=list)
    pinned: list[dict] = field(default_factory=list)
    skipped_pinned: list[str] = field(default_factory=list)

    def to_dict(self) -> dict:
        """The report as a JSON-ready dict.

        Returns
        -------
        dict
            ``unregistered_congestion_controls`` and ``skipped_live_congestion_controls`` (lists of names),
            ``unregistered_pinned_loads`` (``name``, ``loaded_by``, ``loaded_unix_s`` of each CLI load
            unregistered) and ``skipped_pinned_congestion_controls``.
        """
        return {"unregistered_congestion_controls": self.unregistered,
                "skipped_live_congestion_controls": self.skipped_live,
                "unregistered_pinned_loads": self.pinned,
                "skipped_pinned_congestion_controls": self.skipped_pinned}


def cleanup(*, include_live: bool = False, names: Iterable[str] | None = None,
            keep_pinned: bool = False) -> CcCleanupReport:
    """Unregister every ``tm_*`` congestion control that no live process holds (whose holders died,
    or that a CLI ``cc load`` left); those live processes hold only with ``include_live``. Idempotent.

    A CLI ``cc load`` is deliberate, not a leftover: it is unregistered like one (no live process holds
    it) but reported apart, with who loaded it and when (``pinned``), or left with ``keep_pinned``.

    Parameters
    ----------
    include_live : bool
        Also unregister the loads of live processes.
    names : iterable of str, optional
        Only these congestion controls (default: every ``tm_*`` one).
    keep_pinned : bool
        Leave the CLI loads (``testbed cc load``) that no live process holds.

    Returns
    -------
    CcCleanupReport
        What was unregistered and what was left alone.
    """
    report = CcCleanupReport()
    only = None if names is None else set(names)
    names = [cc for cc in available_congestion_controls() if re.fullmatch(r"tm_[a-z0-9_]+", cc)
             and (only is None or cc in only)]
    if not names:
        return report
    _require(need_root=True)
    for cc in names:
        with _state_lock():
            state = _read_state(cc)
            others = [h["pid"] for h in _holders(state) if _alive(h) and h["pid"] != os.getpid()]
            if not include_live and others:
                report.skipped_live.append(cc)
                continue
            pinned = bool(state) and bool(state.get("pinned", not state.get("pid")))
            if pinned and keep_pinned:
                report.skipped_pinned.append(cc)
                continue
            _unload_locked(cc)
        report.unregistered.append(cc)
        if pinned:
            report.pinned.append({"name": cc, "loaded_by": state.get("loaded_by"),
                                  "loaded_unix_s": state.get("loaded_unix_s")})
    return report

