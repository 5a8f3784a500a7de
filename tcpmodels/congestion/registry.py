"""The registry of congestion controls, and the engine tables derived from it.

Each algorithm module (:mod:`~tcpmodels.congestion.reno`, ...) registers its
:class:`~tcpmodels.congestion.base.CongestionControl` on import; the package imports them all.
"""

from __future__ import annotations

from tcpmodels.congestion.base import CongestionControl

__all__ = ["register", "get", "names", "all_controls", "by_kernel_name", "bpf_programs",
           "kernel_congestion_controls", "ns3_type_ids"]

_REGISTRY: dict[str, CongestionControl] = {}


def register(cc: CongestionControl) -> CongestionControl:
    """Add ``cc`` to the registry (its name, kernel name, BPF program and ns-3 TypeId must be new).

    Parameters
    ----------
    cc : CongestionControl
        The entry.

    Returns
    -------
    CongestionControl
        ``cc``, so a module can write ``RENO = register(CongestionControl(...))``.

    Raises
    ------
    ValueError
        If its name, kernel name, BPF program or ns-3 TypeId is registered already.
    """
    for other in _REGISTRY.values():
        for attr in ("name", "kernel_name", "bpf_program", "ns3_type_id"):
            mine = getattr(cc, attr)
            if mine is not None and mine == getattr(other, attr):
                raise ValueError(f"{attr} {mine!r} of {cc.name} is registered already (by {other.name})")
    _REGISTRY[cc.name] = cc
    return cc


def get(name: str) -> CongestionControl:
    """The registered congestion control ``name``.

    Parameters
    ----------
    name : str
        Registry key (see :func:`names`).

    Returns
    -------
    CongestionControl

    Raises
    ------
    KeyError
        If there is none of that name (the message lists the names).
    """
    try:
        return _REGISTRY[name]
    except KeyError:
        raise KeyError(f"no congestion control {name!r}; registered: {', '.join(_REGISTRY)}") from None


def names() -> tuple[str, ...]:
    """The registry keys, in registration order.

    Returns
    -------
    tuple of str
    """
    return tuple(_REGISTRY)


def all_controls() -> tuple[CongestionControl, ...]:
    """Every registered congestion control, in registration order.

    Returns
    -------
    tuple of CongestionControl
    """
    return tuple(_REGISTRY.values())


def by_kernel_name(kernel_name: str) -> CongestionControl:
    """The entry whose kernel name or BPF program is ``kernel_name`` (what ``TCP_CONGESTION`` selects).

    Parameters
    ----------
    kernel_name : str
        E.g. ``"cubic"`` or ``"tm_cubic_x"``.

    Returns
    -------
    CongestionControl

    Raises
    ------
    KeyError
        If no entry runs under that name.
    """
    for cc in _REGISTRY.values():
        if kernel_name in (cc.kernel_name, cc.bpf_program):
            return cc
    raise KeyError(f"no registered congestion control runs as {kernel_name!r} in the kernel; "
                   f"known: {', '.join(kernel_congestion_controls())}")


def bpf_programs() -> tuple[str, ...]:
    """The project's BPF congestion controls (``tm_*``), in registration order.

    Returns
    -------
    tuple of str
    """
    return tuple(cc.bpf_program for cc in _REGISTRY.values() if cc.bpf_program)


def kernel_congestion_controls() -> tuple[str, ...]:
    """Every name a testbed socket may select: the kernel's own, then the BPF programs.

    Returns
    -------
    tuple of str
    """
    return tuple(cc.kernel_name for cc in _REGISTRY.values() if cc.kernel_name) + bpf_programs()


def ns3_type_ids(*, compiled: bool | None = None, multipath: bool | None = None) -> tuple[str, ...]:
    """The ns-3 TypeIds (without ``ns3::``) of the registered congestion controls.

    Parameters
    ----------
    compiled : bool, optional
        Only those compiled at run time (True) or shipped by ns-3 (False); None: both.
    multipath : bool, optional
        Only the coupled multipath ones (True) or the single-path ones (False); None: both.

    Returns
    -------
    tuple of str
    """
    return tuple(cc.ns3_type_id for cc in _REGISTRY.values() if cc.ns3_type_id
                 and (compiled is None or (cc.ns3_compiled_by is not None) == compiled)
                 and (multipath is None or cc.multipath == multipath))
