"""Where the host's CPUs spent a span of time, from ``/proc/stat``: the hypervisor's steal, softirq work, idle.

A sample of the kernel testbed runs every hop of its packets on the host's two vCPUs: the
senders, the softirq work of each veth hop, the userspace delay elements. Loss outside the
bottleneck queue (P3's CPU-induced loss) means one of them fell behind. Two causes look alike
in the drop counters and differ here: the host's own work (``softirq``, ``system``, ``user``)
and time the hypervisor gave to other guests (``steal``: the vCPU was ready to run and did not).
:func:`read_cpu_times` takes a snapshot; :func:`cpu_time_delta` the time spent between two.

The fields are the per-CPU lines of ``/proc/stat`` (proc_stat(5)), counted in ``USER_HZ`` ticks
(``os.sysconf("SC_CLK_TCK")``, 100 on Linux) and returned here in seconds. ``/proc/stat`` is
the host's, whatever network namespace reads it.
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["CPU_TIME_FIELDS", "parse_proc_stat", "read_cpu_times", "cpu_time_delta"]

#: the per-CPU fields of ``/proc/stat``, in the file's order (proc_stat(5)); kernels since 2.6.33 have all ten
CPU_TIME_FIELDS = ("user", "nice", "system", "idle", "iowait", "irq", "softirq", "steal", "guest", "guest_nice")

#: the file read by :func:`read_cpu_times`
PROC_STAT = Path("/proc/stat")


def parse_proc_stat(text: str, *, ticks_per_s: float | None = None,
                    source: str = "/proc/stat") -> dict[str, dict[str, float]]:
    """The per-CPU times of a ``/proc/stat`` text. [s]

    Parameters
    ----------
    text : str
        The file's contents.
    ticks_per_s : float, optional
        ``USER_HZ`` [ticks/s]; default ``os.sysconf("SC_CLK_TCK")``.
    source : str
        The file's name, for error messages.

    Returns
    -------
    dict
        ``"cpu0"``, ``"cpu1"``, ... (not the ``"cpu"`` total line) -> field of :data:`CPU_TIME_FIELDS` ->
        seconds since boot. A line with fewer fields (an old kernel) has only those it has.

    Raises
    ------
    ValueError
        If no per-CPU line is found, or a line's value is not a non-negative integer (the message names
        the source, the line and the value).
    """
    hz = float(ticks_per_s) if ticks_per_s is not None else float(os.sysconf("SC_CLK_TCK"))
    if not hz > 0:
        raise ValueError(f"ticks_per_s [ticks/s] must be > 0, got {hz!r}")
    cpus: dict[str, dict[str, float]] = {}
    for n, line in enumerate(text.splitlines(), start=1):
        parts = line.split()
        if not parts or not parts[0].startswith("cpu") or parts[0] == "cpu":
            continue
        values = {}
        for name, raw in zip(CPU_TIME_FIELDS, parts[1:]):
            if not raw.isdigit():
                raise ValueError(f"{source} line {n} ({parts[0]}): {name} is {raw!r}, expected a non-negative "
                                 "integer count of ticks")
            values[name] = int(raw) / hz
        cpus[parts[0]] = values
    if not cpus:
        raise ValueError(f"{source}: no per-CPU line ('cpu0 ...') found")
    return cpus


def read_cpu_times(path: str | Path = PROC_STAT) -> dict[str, dict[str, float]]:
    """A snapshot of the host's per-CPU times (:func:`parse_proc_stat` of ``path``). [s]

    Parameters
    ----------
    path : str or Path
        The file to read (``/proc/stat``; another for a test).

    Returns
    -------
    dict
        ``"cpu0"``, ... -> field -> seconds since boot.
    """
    return parse_proc_stat(Path(path).read_text(), source=str(path))


def cpu_time_delta(before: dict[str, dict[str, float]],
                   after: dict[str, dict[str, float]]) -> dict[str, dict[str, float]]:
    """The time each CPU spent in each field between two snapshots of :func:`read_cpu_times`. [s]

    Parameters
    ----------
    before, after : dict
        Snapshots, ``after`` taken later.

    Returns
    -------
    dict
        CPU -> field -> seconds, rounded to 0.01 s (one tick at ``USER_HZ`` 100), for the CPUs and fields
        both snapshots have.

    Raises
    ------
    ValueError
        If a field went down between the snapshots (snapshots swapped, or from two hosts); the message
        names the CPU, the field and both values.
    """
    out = {}
    for cpu in sorted(set(before) & set(after), key=lambda c: int(c[3:]) if c[3:].isdigit() else c):
        fields = {}
        for name in CPU_TIME_FIELDS:
            if name in before[cpu] and name in after[cpu]:
                d = after[cpu][name] - before[cpu][name]
                if d < -1e-9:
                    raise ValueError(f"{cpu} {name} went from {before[cpu][name]} s to {after[cpu][name]} s: "
                                     "expected the 'after' snapshot to be the later one, of the same host")
                fields[name] = round(d, 2)
        out[cpu] = fields
    return out
