"""Congestion controls written in BPF for the real kernel: Reno, CUBIC with an x(RTT)-scaled K,
and MPTCP's coupled LIA (RFC 6356) and OLIA.

The C sources (``tm_*.bpf.c``, shared arithmetic in ``tm_math.h``) are compiled on demand
against the running kernel's BTF and registered with ``bpftool struct_ops``; a socket then
picks one with ``TCP_CONGESTION`` (a traffic flow's ``cc``). See :mod:`tcpmodels.testbed.kernel_cc.loader`
for the lifecycle and ``tcpmodels testbed cc list|load|unload`` for the command line.

Needs root, ``/sys/kernel/btf/vmlinux``, clang, bpftool and libbpf headers
(:func:`unavailable_reason` says which is missing).
"""

from tcpmodels.testbed.kernel_cc.loader import (
    CONN_MAPS,
    DIAG_MAPS,
    PARAMETERS,
    PROGRAMS,
    CcCleanupReport,
    KernelCcUnavailable,
    acquire,
    available_congestion_controls,
    build,
    cleanup,
    congestion_control,
    dump_connections,
    live_holders,
    load,
    loaded,
    params_header,
    read_diag,
    release,
    requested_problem,
    still_loaded,
    unavailable_reason,
    unload,
)

__all__ = [
    "PROGRAMS", "PARAMETERS", "CONN_MAPS", "DIAG_MAPS", "KernelCcUnavailable", "CcCleanupReport",
    "unavailable_reason", "requested_problem", "build", "load", "unload", "loaded", "available_congestion_controls",
    "congestion_control", "acquire", "release", "live_holders", "dump_connections", "read_diag", "cleanup",
    "still_loaded",
    "params_header",
]
