"""Hold a CPU wake-up latency request (``/dev/cpu_dma_latency``) while a measurement runs.

An idle vCPU of a KVM guest halts; a timer that is to release the next packet
(a ``tbf``'s watchdog for its next token, say) then wakes it late, and the link
idles meanwhile. On this 2-vCPU guest (haltpoll, ``guest_halt_poll_ns`` 0) a 3 s
CUBIC download through a 500 Mbit/s ``tbf`` came out as low as 456 Mbit/s on the
wire without a request, and 6 of 16 runs of the four rate cases of
``tests/testbed/test_kernel.py::test_tcp_rate_matches_tbf`` were more than 1 % low;
with a request of 0 us held all 16 were within 0.7 % (2026-11-30, alternating rounds). On a fresh
machine (2026-12-01) two rounds without a request failed 4 of 8 cases (tbf 100 Mbit/s: 90.7 and 92.7;
tbf 500: 475.4 and 409.3 Mbit/s on the wire); nine with it passed all 36, though 6 of the 27 tbf
cases were still 1-4.7 % low (the request removes most of the late wake-ups, not all).

The kernel keeps a request while the file stays open (Documentation/power/pm_qos_interface.rst,
"From user space"): :func:`hold_cpu_latency` opens it, writes the target as a
native 32-bit integer, and closes it on exit. :func:`current_cpu_latency_us` reads
the target in force (2 000 000 000 us, the kernel's default, when nobody holds one).

The testbed's campaigns do not hold one (their shipped datasets ran without it);
a measurement that compares a rate limiter's output with its configured rate
should.
"""

from __future__ import annotations

import os
import struct
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tcpmodels._docstrings import SharedEntries

__all__ = ["CPU_LATENCY_DEVICE", "hold_cpu_latency", "current_cpu_latency_us"]

#: Parameters documented once for the docstrings of this module that share them.
_PARAMETERS = SharedEntries("""
    device : Path
        The PM QoS device (default ``/dev/cpu_dma_latency``).
""")

#: the PM QoS device of the CPU latency target
CPU_LATENCY_DEVICE = Path("/dev/cpu_dma_latency")


@_PARAMETERS.fill
def current_cpu_latency_us(device: Path = CPU_LATENCY_DEVICE) -> int:
    """The CPU wake-up latency target in force. [us]

    Parameters
    ----------
    {device}

    Returns
    -------
    int
        The smallest request held by any process, or the kernel's default (2 000 000 000) when none is.

    Raises
    ------
    OSError
        If the device cannot be read (not root, or no PM QoS in the kernel); the message names the device.
    """
    try:
        with open(device, "rb") as fh:
            raw = fh.read(4)
    except OSError as exc:
        raise OSError(exc.errno, f"cannot read the CPU latency target from {device}: {exc.strerror}") from None
    if len(raw) != 4:
        raise OSError(f"{device} gave {len(raw)} bytes; expected a 32-bit integer (4 bytes)")
    return struct.unpack("=i", raw)[0]


@_PARAMETERS.fill
@contextmanager
def hold_cpu_latency(max_latency_us: int = 0, device: Path = CPU_LATENCY_DEVICE) -> Iterator[bool]:
    """Keep the CPUs' wake-up latency at most ``max_latency_us`` inside the ``with`` block.

    Parameters
    ----------
    max_latency_us : int
        The request [us]; 0 (the default) keeps idle CPUs out of any state they wake slowly from.
    {device}

    Yields
    ------
    bool
        Whether the request is held. Where the device cannot be opened or written (not root, no
        PM QoS) the block runs without it and a ``RuntimeWarning`` names the device and the error.

    Raises
    ------
    ValueError
        If ``max_latency_us`` is negative or does not fit a 32-bit integer.
    """
    target = int(max_latency_us)
    if not 0 <= target <= 2**31 - 1:
        raise ValueError(f"max_latency_us must be between 0 and {2**31 - 1} us; got {max_latency_us!r}")
    fd = None
    try:
        fd = os.open(device, os.O_WRONLY)
        os.write(fd, struct.pack("=i", target))
    except OSError as exc:
        if fd is not None:
            os.close(fd)
        warnings.warn(f"no CPU latency request held: cannot {'write' if fd is not None else 'open'} {device} "
                      f"({exc.strerror}); idle CPUs may wake late and slow timers such as a tbf's",
                      RuntimeWarning, stacklevel=3)
        yield False
        return
    try:
        yield True
    finally:
        os.close(fd)
