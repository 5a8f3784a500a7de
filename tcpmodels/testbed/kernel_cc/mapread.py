"""Read the per-connection maps of tm_lia and tm_olia with the ``bpf(2)`` system call, and tell
consistent records from torn ones.

Each map value (``struct tm_conn`` in ``tm_lia.bpf.c``, ``struct tm_olia_conn`` in
``tm_olia.bpf.c``) holds per slot a ``struct tm_calc`` (``tm_bpf.h``): the last increase (OLIA)
or alpha (LIA) that slot's subflow computed, with the exact windows, RTTs and l it was computed
from, between two counters: ``seq_begin`` is incremented before the record is written,
``seq_end`` after. A lookup copies the value while the kernel may be writing it, so one copy
alone can be torn. :func:`read_connections` therefore copies each entry three times in a row
(``BPF_MAP_LOOKUP_ELEM``, microseconds apart) and marks the middle copy's record of a slot
``consistent`` iff ``seq_begin == seq_end`` in the first and the third copy and both counters
are the same in the two: ``seq_begin`` is then unchanged between the first copy's read of it and
the third's, so no write started, and ``seq_end`` caught up with it, so none was in progress,
while the middle copy was taken. Every other record is ``consistent: False`` (a torn or
possibly torn read), counted, never dropped silently.

The layouts below mirror the C structs; :func:`read_connections` checks the size against the
map's value size (a mismatch raises instead of misreading).

Maps of a name can be loaded more than once. Unregistering a struct_ops congestion control
(``bpftool struct_ops unregister``) only takes it off the list of controls: every socket that
runs it keeps a reference to it (``tcp_cleanup_congestion_control`` drops it when the socket is
destroyed), so the program and its maps stay loaded until the last such socket is gone, beside
the maps of a later registration under the same name. Such a socket can outlive its connection
by minutes, e.g. an MPTCP subflow on a lossy path left in CLOSING, retransmitting its FIN with
exponential backoff in namespaces deleted meanwhile; its entry leaves the old map when its
``release`` finally runs. The maps of the registration in use are those of
the struct_ops map in state ``BPF_STRUCT_OPS_STATE_INUSE``; an unregistered one is ``TOBEFREE``
(:func:`registered_map_ids`).
"""

from __future__ import annotations

import ctypes
import errno
import json
import os
import re
import time

from tcpmodels._docstrings import SharedEntries
from tcpmodels.testbed._system import TestbedError, find_tool, run

__all__ = ["Calc", "LiaConn", "OliaConn", "LAYOUTS", "DIAG_COUNTERS", "read_connections", "read_diag", "steady",
           "calc_dict", "registered_map_ids", "unregistered_still_loaded"]

#: Parameters documented once for the docstrings of this module that share them.
_PARAMETERS = SharedEntries("""
    map_ids : set of int, optional
        Read only maps with these ids (the registered program's: :func:`registered_map_ids`).
        ``None``: every loaded map of that name, those of earlier registrations still held by their
        sockets included.
""")

MAX_SUBFLOWS = 8    # TM_MAX_SUBFLOWS (tm_math.h)
OLIA_SLOTS = 4      # TM_OLIA_SLOTS (tm_math.h)

_u32, _s64, _u64 = ctypes.c_uint32, ctypes.c_int64, ctypes.c_uint64


class Calc(ctypes.Structure):
    """``struct tm_calc`` (tm_bpf.h)."""

    _fields_ = [("seq_begin", _u32), ("cwnd", _u32 * MAX_SUBFLOWS), ("srtt_us", _u32 * MAX_SUBFLOWS),
                ("ell", _u32 * MAX_SUBFLOWS), ("incr_q32", _s64), ("alpha_q16", _u32), ("slot", _u32),
                ("updated_ns", _u64), ("seq_end", _u32), ("pad", _u32)]


_SLOTS = [("cwnd", _u32 * MAX_SUBFLOWS), ("srtt_us", _u32 * MAX_SUBFLOWS), ("subflow_id", _u32 * MAX_SUBFLOWS),
          ("loss_events", _u32 * MAX_SUBFLOWS), ("rto_events", _u32 * MAX_SUBFLOWS),
          ("delivered_at_loss", _u32 * MAX_SUBFLOWS), ("delivered", _u32 * MAX_SUBFLOWS)]


class LiaConn(ctypes.Structure):
    """``struct tm_conn`` (tm_lia.bpf.c)."""

    _fields_ = _SLOTS + [("alpha_q16", _u32), ("cwnd_total", _u32), ("updated_ns", _u64), ("acks", _u64),
                         ("calc", Calc * MAX_SUBFLOWS)]


class OliaConn(ctypes.Structure):
    """``struct tm_olia_conn`` (tm_olia.bpf.c)."""

    _fields_ = _SLOTS + [("ell", _u32 * MAX_SUBFLOWS), ("alpha_q16", _u32), ("cwnd_total", _u32),
                         ("updated_ns", _u64), ("acks", _u64), ("calc", Calc * OLIA_SLOTS)]


#: map name -> value layout
LAYOUTS = {"tm_lia_conn": LiaConn, "tm_olia_conn": OliaConn}

#: The counters of the diagnostic maps ``tm_lia_diag`` and ``tm_olia_diag`` (array maps of u64), in
#: index order (``TM_DIAG_*`` in tm_bpf.h): implausible inputs the controls refused (an ``acked`` above
#: 65535 segments, a window above 65535 segments met in cong_avoid, ssthresh, undo or a change of CA
#: state), OLIA increases bounded to one segment per acked segment, subflows seen, how each ``release``
#: found its token, and subflows that published under a changed subflow id (their old slot is freed).
DIAG_COUNTERS = ("acked_big", "cwnd_big", "ssthresh_big", "undo_big", "incr_clamped", "subflows_seen",
                 "releases", "release_no_token", "release_remembered_token", "release_no_entry",
                 "release_deleted_entry", "release_token_changed", "cwnd_big_at_state_change",
                 "subflow_id_changed")

_SYS_BPF = {"x86_64": 321, "aarch64": 280}
_BPF_MAP_LOOKUP_ELEM, _BPF_MAP_GET_NEXT_KEY, _BPF_MAP_GET_FD_BY_ID = 1, 4, 14


class _LookupAttr(ctypes.Structure):
    _fields_ = [("map_fd", _u32), ("pad", _u32), ("key", _u64), ("value", _u64), ("flags", _u64)]


class _GetFdAttr(ctypes.Structure):
    _fields_ = [("map_id", _u32), ("next_id", _u32), ("open_flags", _u32)]


_libc = ctypes.CDLL(None, use_errno=True)


def _bpf(cmd: int, attr: ctypes.Structure) -> int:
    nr = _SYS_BPF.get(os.uname().machine)
    if nr is None:
        raise TestbedError(f"bpf(2) syscall number unknown for {os.uname().machine}")
    ret = _libc.syscall(ctypes.c_long(nr), ctypes.c_int(cmd), ctypes.byref(attr), ctypes.c_uint(ctypes.sizeof(attr)))
    if ret < 0:
        e = ctypes.get_errno()
        raise OSError(e, os.strerror(e))
    return ret


def _map_ids(map_name: str, only: set[int] | None = None) -> list[tuple[int, int]]:
    """(id, value size) of every loaded map called ``map_name`` (of those whose id is in ``only``, if given)."""
    proc = run([find_tool("bpftool") or "bpftool", "-j", "map", "show"], check=False)
    if proc.returncode != 0:
        return []
    return [(m["id"], m["bytes_value"]) for m in json.loads(proc.stdout or "[]")
            if m.get("name") == map_name and (only is None or m["id"] in only)]


#: state of a struct_ops map while it is the registered congestion control (kernel's enum
#: bpf_struct_ops_state; unregistering it sets TOBEFREE, and it stays loaded while sockets use it)
_INUSE = "BPF_STRUCT_OPS_STATE_INUSE"


def registered_map_ids(program: str) -> set[int]:
    """Ids of the maps used by the programs of the registered struct_ops congestion control ``program``.

    A control registered earlier under the same name and unregistered since stays loaded, with maps
    of the same names, while sockets still run it (module docstring); its maps are not included.

    Parameters
    ----------
    program : str
        The name the congestion control registered under (``tm_lia``, ``tm_olia``).

    Returns
    -------
    set of int
        The ids of every map that a program of its struct_ops map in state
        ``BPF_STRUCT_OPS_STATE_INUSE`` uses (empty if ``program`` is not registered).
    """
    bpftool = find_tool("bpftool") or "bpftool"
    proc = run([bpftool, "-j", "struct_ops", "dump", "name", program], check=False)
    if proc.returncode != 0 or not proc.stdout.strip():
        return set()
    # a list alternating {"bpf_map_info": ...} and {"bpf_struct_ops_<type>": {"common": {"state": ...},
    # "data": {callback: "<prototype> <prog name>/prog_id:<id>", ...}}}
    prog_ids: set[int] = set()
    for item in json.loads(proc.stdout):
        for key, value in item.items():
            if key.startswith("bpf_struct_ops_") and value.get("common", {}).get("state") == _INUSE:
                prog_ids.update(int(i) for i in re.findall(r"/prog_id:(\d+)", json.dumps(value.get("data", {}))))
    if not prog_ids:
        return set()
    proc = run([bpftool, "-j", "prog", "show"], check=False)
    if proc.returncode != 0:
        return set()
    return {m for p in json.loads(proc.stdout or "[]") if p.get("id") in prog_ids for m in p.get("map_ids", [])}


def unregistered_still_loaded(program: str) -> int:
    """How many registrations of ``program``, unregistered already, stay loaded because sockets still run them.

    Unregistering takes a control off the list; every socket running it keeps it (and its maps)
    loaded until that socket is destroyed (module docstring). Such a registration is a struct_ops
    map of the name in a state other than ``BPF_STRUCT_OPS_STATE_INUSE`` (``TOBEFREE``).

    Parameters
    ----------
    program : str
        The name the congestion control registered under (``tm_reno``, ...).

    Returns
    -------
    int
        The number of such registrations (0 if none, or if ``bpftool`` cannot tell).
    """
    proc = run([find_tool("bpftool") or "bpftool", "-j", "struct_ops", "dump", "name", program], check=False)
    if proc.returncode != 0 or not proc.stdout.strip():
        return 0
    try:
        items = json.loads(proc.stdout)
    except ValueError:
        return 0
    return sum(1 for item in items if isinstance(item, dict) for key, value in item.items()
               if key.startswith("bpf_struct_ops_") and isinstance(value, dict)
               and value.get("common", {}).get("state") not in (None, _INUSE))


def _map_fd(map_id: int) -> int | None:
    """A file descriptor of the map with id ``map_id``; None if it was unloaded meanwhile."""
    try:
        return _bpf(_BPF_MAP_GET_FD_BY_ID, _GetFdAttr(map_id=map_id))
    except OSError as e:
        if e.errno == errno.ENOENT:
            return None
        raise


def _lookup(fd: int, key: ctypes.c_uint32, value: ctypes.Structure | ctypes.c_uint64) -> bool:
    """Copy the value of ``key`` into ``value``; False if the map has no such key."""
    attr = _LookupAttr(map_fd=fd, key=ctypes.addressof(key), value=ctypes.addressof(value))
    try:
        _bpf(_BPF_MAP_LOOKUP_ELEM, attr)
    except OSError as e:
        if e.errno == errno.ENOENT:
            return False
        raise
    return True


def _keys(fd: int) -> list[int]:
    keys, cur, nxt = [], ctypes.c_uint32(0), ctypes.c_uint32(0)
    first = True
    while True:
        attr = _LookupAttr(map_fd=fd, key=0 if first else ctypes.addressof(cur), value=ctypes.addressof(nxt))
        try:
            _bpf(_BPF_MAP_GET_NEXT_KEY, attr)
        except OSError as e:
            if e.errno == errno.ENOENT:
                return keys
            raise
        keys.append(nxt.value)
        cur.value, first = nxt.value, False
        if len(keys) > 1 << 16:
            return keys


def steady(first: Calc, third: Calc) -> bool:
    """Whether no write of a record started or was in progress while the copy between ``first``
    and ``third`` was taken: ``seq_begin == seq_end``, the same in both copies.

    Parameters
    ----------
    first, third : Calc
        The record in the copies taken just before and just after the one to judge.

    Returns
    -------
    bool
        True if the middle copy's record is consistent.
    """
    return first.seq_begin == first.seq_end == third.seq_begin == third.seq_end


def calc_dict(rec: Calc, consistent: bool) -> dict:
    """One ``tm_calc`` record as a dict (the inputs of the occupied slots only, in slot order).

    Parameters
    ----------
    rec : Calc
        The record of the middle copy.
    consistent : bool
        Whether the three copies show that no write touched it during the middle copy.

    Returns
    -------
    dict
        ``consistent``, ``seq`` (``seq_begin``), ``slot``, ``slots`` (the occupied input slots),
        ``cwnd_segments`` [segments], ``srtt_s`` [s] and ``ell_segments`` [segments] of those slots,
        ``incr_segments`` (per acked segment) [segments], ``alpha`` [-], ``updated_ns`` [ns].
    """
    slots = [i for i in range(MAX_SUBFLOWS) if rec.cwnd[i] and rec.srtt_us[i]]
    return {"consistent": bool(consistent), "seq": int(rec.seq_begin), "seq_end": int(rec.seq_end),
            "slot": int(rec.slot), "slots": slots,
            "cwnd_segments": [int(rec.cwnd[i]) for i in slots], "srtt_s": [rec.srtt_us[i] * 1e-6 for i in slots],
            "ell_segments": [int(rec.ell[i]) for i in slots], "incr_segments": rec.incr_q32 / 2.0**32,
            "alpha": rec.alpha_q16 / 65536.0, "updated_ns": int(rec.updated_ns)}


@_PARAMETERS.fill
def read_diag(map_name: str, map_ids: set[int] | None = None) -> dict[str, int] | None:
    """The counters of a diagnostic map (summed over every loaded map of that name, or of those in ``map_ids``).

    Parameters
    ----------
    map_name : str
        ``tm_lia_diag`` or ``tm_olia_diag``.
    {map_ids}

    Returns
    -------
    dict or None
        :data:`DIAG_COUNTERS` -> count since the program was registered; ``None`` if no map of that
        name is loaded.

    Raises
    ------
    TestbedError
        The map holds another number or size of counters than :data:`DIAG_COUNTERS`.
    """
    maps = _map_ids(map_name, map_ids)
    if not maps:
        return None
    out = dict.fromkeys(DIAG_COUNTERS, 0)
    for map_id, size in maps:
        if size != 8:
            raise TestbedError(f"{map_name} (id {map_id}) has {size}-byte values; its counters are u64")
        fd = _map_fd(map_id)
        if fd is None:
            continue
        try:
            for i, name in enumerate(DIAG_COUNTERS):
                key, value = ctypes.c_uint32(i), ctypes.c_uint64(0)
                if not _lookup(fd, key, value):
                    raise TestbedError(f"{map_name} (id {map_id}) has fewer than {len(DIAG_COUNTERS)} "
                                       f"counters: update mapread.DIAG_COUNTERS with tm_bpf.h")
                out[name] += value.value
        finally:
            os.close(fd)
    return out


@_PARAMETERS.fill
def read_connections(map_name: str, map_ids: set[int] | None = None) -> list[dict]:
    """Every entry of a per-connection map, copied three times in a row (see the module docstring).

    Parameters
    ----------
    map_name : str
        ``tm_lia_conn`` or ``tm_olia_conn``.
    {map_ids}

    Returns
    -------
    list of dict
        One per entry present in all three copies: ``token``, ``map_id``, ``value`` (the middle
        copy, a :class:`LiaConn` or :class:`OliaConn`), ``calc`` (per calc slot, :func:`calc_dict`
        of the middle copy with ``consistent``) and ``read_ns`` (CLOCK_MONOTONIC, the clock of
        ``bpf_ktime_get_ns``, just before the first copy) [ns]. Empty if the map is not loaded.

    Raises
    ------
    TestbedError
        The map's value size differs from the layout here (the C struct changed without this module).
    """
    layout = LAYOUTS[map_name]
    out = []
    for map_id, size in _map_ids(map_name, map_ids):
        if size != ctypes.sizeof(layout):
            raise TestbedError(f"{map_name} (id {map_id}) has {size}-byte values; mapread's layout has "
                               f"{ctypes.sizeof(layout)}: update mapread.{layout.__name__} with the C struct")
        fd = _map_fd(map_id)
        if fd is None:
            continue
        try:
            for token in _keys(fd):
                key = ctypes.c_uint32(token)
                a, b, c = layout(), layout(), layout()
                read_ns = time.monotonic_ns()
                ok_a = _lookup(fd, key, a)
                ok_b = _lookup(fd, key, b)
                ok_c = _lookup(fd, key, c)
                if not (ok_a and ok_b and ok_c):
                    continue
                calc = [calc_dict(b.calc[s], steady(a.calc[s], c.calc[s])) for s in range(len(b.calc))]
                out.append({"token": token, "map_id": map_id, "value": b, "calc": calc, "read_ns": read_ns})
        finally:
            os.close(fd)
    return out
