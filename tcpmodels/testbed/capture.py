"""Packet capture with tcpdump inside the testbed, stopped cleanly so the file is whole.

``tcpdump -U --immediate-mode`` writes each packet as it arrives (without immediate mode the tail of a capture was seen lost on SIGINT although tcpdump reported no drops); stopping with SIGINT and waiting
lets it flush and close the file (a SIGKILL can leave a truncated last record).
"""

from __future__ import annotations

import shutil
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from tcpmodels.testbed._system import TestbedError
from tcpmodels.testbed.netns import Testbed

__all__ = ["Capture", "start_capture"]


@dataclass
class Capture:
    """A running tcpdump; :meth:`stop` returns the path and tcpdump's packet counts."""

    node: str
    interface: str
    path: Path
    snaplen_bytes: int
    popen: subprocess.Popen
    stats: dict | None = None

    def stop(self, timeout_s: float = 10.0) -> dict:
        """SIGINT, wait, and parse tcpdump's closing counts (captured / received / dropped by kernel).

        Parameters
        ----------
        timeout_s : float
            How long tcpdump may take to flush and exit after SIGINT. [s]

        Returns
        -------
        dict
            ``node``, ``interface``, ``path``, ``snaplen_bytes`` and, where tcpdump printed
            them, ``packets_captured``, ``packets_received_by_filter`` and
            ``packets_dropped_by_kernel`` [packets]; also kept in :attr:`stats`.

        Raises
        ------
        TestbedError
            If tcpdump ignored SIGINT for ``timeout_s`` (it is then killed).
        """
        if self.popen.poll() is None:
            self.popen.send_signal(2)
        try:
            _, err = self.popen.communicate(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            self.popen.kill()
            _, err = self.popen.communicate()
            raise TestbedError(f"tcpdump on {self.node}:{self.interface} ignored SIGINT for {timeout_s} s; killed")
        stats = {"node": self.node, "interface": self.interface, "path": str(self.path),
                 "snaplen_bytes": self.snaplen_bytes}
        for line in (err or "").splitlines():
            words = line.split()
            if len(words) >= 3 and words[0].isdigit() and "captured" in line:
                stats["packets_captured"] = int(words[0])
            elif len(words) >= 3 and words[0].isdigit() and "received by filter" in line:
                stats["packets_received_by_filter"] = int(words[0])
            elif len(words) >= 3 and words[0].isdigit() and "dropped by kernel" in line:
                stats["packets_dropped_by_kernel"] = int(words[0])
        self.stats = stats
        return stats


def start_capture(tb: Testbed, node: str, interface: str, path: str | Path, *, snaplen_bytes: int = 128,
                  bpf_filter: str | None = None, buffer_kib: int = 16384) -> Capture:
    """Start tcpdump on ``interface`` of ``node`` writing pcap to ``path``; returns once it is listening.

    Parameters
    ----------
    tb : Testbed
        The running testbed; tcpdump runs in ``node``'s namespace.
    node : str
        Node name in the topology.
    interface : str
        Interface of ``node`` to capture on.
    path : str or Path
        The pcap file to write (resolved; its folder is created).
    snaplen_bytes : int
        Bytes kept of each packet (128 holds Ethernet, IP, TCP with options and MPTCP DSS). [bytes]
    bpf_filter : str, optional
        A tcpdump filter expression, e.g. ``"tcp port 5201"``; everything if omitted.
    buffer_kib : int
        Kernel capture buffer (``-B``). [KiB]

    Returns
    -------
    Capture
        The running capture; call :meth:`Capture.stop` to end it.

    Raises
    ------
    ValueError
        If ``snaplen_bytes`` is outside [64, 262144].
    TestbedError
        If tcpdump is not installed, or does not report listening within 10 s.
    """
    if shutil.which("tcpdump") is None:
        raise TestbedError("tcpdump is not installed (apt-get install tcpdump)")
    if not 64 <= snaplen_bytes <= 262144:
        raise ValueError(f"snaplen_bytes [bytes] must be in [64, 262144]; got {snaplen_bytes}")
    path = Path(path).resolve()
    path.parent.mkdir(parents=True, exist_ok=True)
    argv = ["tcpdump", "-i", interface, "-s", str(snaplen_bytes), "-B", str(buffer_kib), "-U", "--immediate-mode", "-n", "-Z", "root",
            "-w", str(path)]
    if bpf_filter:
        argv.append(bpf_filter)
    popen = tb.popen(node, argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, label="tcpdump")
    deadline = time.monotonic() + 10
    line = ""
    while time.monotonic() < deadline:
        line = popen.stderr.readline()
        if "listening on" in line or not line:
            break
    if "listening on" not in line:
        popen.kill()
        said = (line + popen.stderr.read()).strip()
        popen.wait(timeout=10)
        why = said or (f"it exited with status {popen.returncode} and printed nothing" if line == ""
                       else "it printed nothing within 10 s")
        raise TestbedError(f"tcpdump on {node}:{interface} did not start: {why}")
    return Capture(node=node, interface=interface, path=path, snaplen_bytes=snaplen_bytes, popen=popen)
