"""Drive traffic in a running :class:`~tcpmodels.testbed.Testbed` from Python.

Servers and clients are :mod:`tcpmodels.testbed.traffic` processes started in
the nodes' namespaces; flows are plain dicts (``flow_id, dst, port, size_bytes``
or ``duration_s``, ``direction``, ``cc``, ``mptcp``, ``bind``, ``start_s``,
``sample_interval_s``) built here from workload descriptions: bulk transfers,
probes per path, Poisson arrivals of short flows with fixed, uniform or Pareto sizes.
"""

from __future__ import annotations

import collections
import json
import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Callable

import numpy as np

from tcpmodels import congestion
from tcpmodels._docstrings import SharedEntries
from tcpmodels.testbed._system import TestbedError
from tcpmodels.testbed.netns import Testbed

__all__ = ["Server", "start_server", "run_flows", "socket_report", "measure_rtt", "ping_rtt", "bulk_flow", "probe_flows", "poisson_flows",
           "flow_sizes_bytes", "CONGESTION_CONTROLS"]

#: Parameters documented once for the docstrings of this module that share them.
_PARAMETERS = SharedEntries("""
    tb : Testbed
        The running testbed.
    port : int
        Server port.
    node : str
        Node the client runs in.
    interval_s : float
        Pause after each reply or timeout. [s]
    dst : str
        Server address.
    mptcp : bool
        Connect with MPTCP.
    cc : str
        Congestion control of the sender.
    direction : {"download", "upload"}
        Which side sends.
""")

#: the kernel's own, and the BPF ones of :mod:`tcpmodels.testbed.kernel_cc` (registered with
#: ``tcpmodels testbed cc load NAME`` or ``kernel_cc.congestion_control(NAME)`` before the run),
#: as :mod:`tcpmodels.congestion` names them
CONGESTION_CONTROLS = congestion.kernel_congestion_controls()
_PKG_PARENT = str(Path(__file__).resolve().parents[2])


def _python_argv(*args: str) -> list[str]:
    return [sys.executable, "-m", "tcpmodels.testbed.traffic", *args]


def _env() -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = _PKG_PARENT + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    return env


def _lines_until_closed(stream):
    """The lines of a child's pipe until its end, or until the pipe is closed under the reader.

    A testbed that exits with the server still running closes the pipe (``communicate``) while
    a reader thread may be between two lines; that is the end of the stream, not an error.
    """
    try:
        yield from stream
    except ValueError:  # I/O operation on closed file
        return


class Server:
    """A traffic server running in a node; :meth:`stop` returns its per-connection records.

    Threads read the server's records (and stderr) as they come: unread, its stdout pipe (64 KiB) filled
    after about 250 connections, and every connection thread after that waited on the pipe until the stop.
    """

    def __init__(self, tb: Testbed, node: str, port: int, mptcp: bool, keep_records: bool = True):
        self.node, self.port, self.mptcp, self.keep_records = node, port, mptcp, keep_records
        self.popen = tb.popen(node, _python_argv("server", "--port", str(port), *(["--mptcp"] if mptcp else [])),
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=_env(), label="server")
        line = self.popen.stdout.readline()
        if '"ready"' not in line:
            self.popen.kill()
            raise TestbedError(f"traffic server in {node} did not start: {line}{self.popen.stderr.read()}")
        self.records: list[dict] = []
        self._lines: list[str] = []
        self.stderr_tail: collections.deque[str] = collections.deque(maxlen=50)  # its last lines of stderr
        self._readers = [threading.Thread(target=self._read, name=f"server-{node}-stdout", daemon=True),
                         threading.Thread(target=self._read_stderr, name=f"server-{node}-stderr", daemon=True)]
        for reader in self._readers:
            reader.start()

    def _read(self) -> None:
        for line in _lines_until_closed(self.popen.stdout):
            if self.keep_records:
                self._lines.append(line)

    def _read_stderr(self) -> None:
        for line in _lines_until_closed(self.popen.stderr):
            self.stderr_tail.append(line)

    def stop(self) -> list[dict]:
        """Stop the server (SIGTERM) and return its records (one per connection).

        Returns
        -------
        list of dict
            One record per connection served (see :func:`tcpmodels.testbed.traffic.serve`),
            after the ``ready`` line; also kept in :attr:`records` (empty if started with
            ``keep_records=False``).

        Raises
        ------
        subprocess.TimeoutExpired
            If the server has not exited 10 s after SIGTERM.
        """
        if self.popen.poll() is None:
            self.popen.terminate()
        self.popen.wait(timeout=10)
        for reader in self._readers:
            reader.join(timeout=10)
        self.popen.stdout.close()
        self.popen.stderr.close()
        self.records = [json.loads(x) for x in self._lines if x.strip()]
        return self.records


@_PARAMETERS.fill
def start_server(tb: Testbed, node: str, *, port: int = 5201, mptcp: bool = False,
                 keep_records: bool = True) -> Server:
    """Start a traffic server (TCP, or MPTCP which also accepts TCP) and UDP echo in ``node``.

    Parameters
    ----------
    {tb}
    node : str
        Node to serve from.
    port : int
        TCP and UDP port.
    mptcp : bool
        Listen with MPTCP.
    keep_records : bool
        Keep the per-connection records for :meth:`Server.stop` (False: read and drop them, for a
        server that serves a whole campaign whose samples read their own records).

    Returns
    -------
    Server
        The running server, ready to accept.

    Raises
    ------
    TestbedError
        If the server does not report ready (its stderr is in the message).
    """
    return Server(tb, node, port, mptcp, keep_records)


def _check_flow(flow: dict) -> None:
    size, duration = flow.get("size_bytes"), flow.get("duration_s")
    if bool(size) == bool(duration):
        raise ValueError(f"flow {flow.get('flow_id')}: give exactly one of size_bytes [bytes] or duration_s [s]; "
                         f"got size_bytes={size}, duration_s={duration}")
    if size is not None and size < 0:
        raise ValueError(f"flow {flow.get('flow_id')}: size_bytes [bytes] must be >= 1; got {size}")
    if duration is not None and not 0 < duration <= 3600:
        raise ValueError(f"flow {flow.get('flow_id')}: duration_s [s] must be in (0, 3600]; got {duration}")
    cc = flow.get("cc")
    if cc and cc not in CONGESTION_CONTROLS:
        raise ValueError(f"flow {flow.get('flow_id')}: cc must be one of {CONGESTION_CONTROLS}; got {cc!r}")
    if flow.get("direction", "download") not in ("download", "upload"):
        raise ValueError(f"flow {flow.get('flow_id')}: direction must be 'download' or 'upload'")


def _check_kernel_cc(flows: list[dict]) -> None:
    """Raise KernelCcUnavailable (one line) if a flow asks for a tm_* control that cannot run now."""
    if not any(str(f.get("cc") or "").startswith("tm_") for f in flows):
        return
    from tcpmodels.testbed import kernel_cc

    problem = kernel_cc.requested_problem(f.get("cc") for f in flows)
    if problem:
        raise kernel_cc.KernelCcUnavailable(problem)


@_PARAMETERS.fill
def launch_flows(tb: Testbed, node: str, flows: list[dict]) -> subprocess.Popen:
    """Start a client process running ``flows``; collect with :func:`collect_flows`.

    Parameters
    ----------
    {tb, node}
    flows : list of dict
        Flow descriptions (:func:`bulk_flow`, :func:`probe_flows`, :func:`poisson_flows`).

    Returns
    -------
    subprocess.Popen
        The client process (text stdout, one JSON record per flow).

    Raises
    ------
    ValueError
        If a flow gives both or neither of ``size_bytes`` and ``duration_s``, or has an
        unknown ``cc`` or ``direction`` (checked before anything starts).
    KernelCcUnavailable
        If a flow asks for a ``tm_*`` congestion control that cannot run now (one line saying why).
    """
    for f in flows:
        _check_flow(f)
    _check_kernel_cc(flows)
    popen = tb.popen(node, _python_argv("client", "--flows", "-"), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                     stderr=subprocess.PIPE, text=True, env=_env(), label="client")
    popen.stdin.write(json.dumps(flows))
    popen.stdin.close()
    popen.stdin = None  # so that communicate() does not flush a closed pipe
    popen.tm_flows = flows  # read by collect_flows to name the flows a timeout left unfinished
    return popen


def collect_flows(popen: subprocess.Popen, timeout_s: float, *,
                  on_timeout: Callable[[], str] | None = None) -> list[dict]:
    """Wait for a client process and return its records (one per flow, in completion order).

    Parameters
    ----------
    popen : subprocess.Popen
        A client started by :func:`launch_flows`.
    timeout_s : float
        Longest wait; the client is killed after it. [s]
    on_timeout : callable, optional
        Called at a timeout before the client is killed (its sockets still open); the text it returns
        ends the error message (e.g. ``lambda: socket_report(tb, ["c", "s"])``).

    Returns
    -------
    list of dict
        One record per flow (see :func:`tcpmodels.testbed.traffic.run_flow`).

    Raises
    ------
    TestbedError
        If the client times out or exits non-zero.
    """
    try:
        out, err = popen.communicate(timeout=timeout_s)
    except subprocess.TimeoutExpired as exc:
        seen = on_timeout() if on_timeout else ""
        popen.kill()
        rest, _ = popen.communicate()
        partial = (exc.output.decode() if isinstance(exc.output, bytes) else exc.output or "") + (rest or "")
        raise TestbedError(f"client did not finish within {timeout_s} s: {_unfinished(popen, partial)}"
                           + (f"\n{seen}" if seen else "")) from exc
    if popen.returncode != 0:
        raise TestbedError(f"client failed (exit {popen.returncode}): {err.strip()[-2000:]}")
    return [json.loads(x) for x in out.splitlines() if x.strip()]


def _unfinished(popen: subprocess.Popen, partial_stdout: str) -> str:
    """Say which flows of a killed client had printed no record (from its flow list and partial output)."""
    done = set()
    for line in partial_stdout.splitlines():
        try:
            done.add(json.loads(line)["flow_id"])
        except (ValueError, KeyError, TypeError):
            continue  # a line cut by the kill
    ids = [f.get("flow_id") for f in getattr(popen, "tm_flows", [])]
    if not ids:
        return f"{len(done)} flow records printed"
    left = [i for i in ids if i not in done]
    shown = ", ".join(map(str, left[:10])) + (", ..." if len(left) > 10 else "")
    return f"{len(ids) - len(left)} of {len(ids)} flows finished; unfinished flow ids: {shown}"


@_PARAMETERS.fill
def socket_report(tb: Testbed, nodes: list[str], *, max_chars: int = 12_000) -> str:
    """The open TCP and MPTCP sockets of ``nodes`` as ``ss`` shows them (one line each, with TCP_INFO and
    MPTCP_INFO; listeners and TIME-WAIT left out): what a hung flow looked like before it was killed.

    Parameters
    ----------
    {tb}
    nodes : list of str
        Node names.
    max_chars : int
        Longest report; the rest is cut with a note. [characters]

    Returns
    -------
    str
        One block per node and socket kind; a command that failed says so in its block.
    """
    blocks = []
    for node in nodes:
        for kind, argv in (("tcp", ["ss", "-tinOH", "exclude", "time-wait", "exclude", "listening"]),
                           ("mptcp", ["ss", "-MinOH", "exclude", "listening"])):
            try:
                out = tb.exec(node, argv, check=False, timeout=10.0)
                text = out.stdout.strip() or out.stderr.strip() or "(none)"
            except TestbedError as exc:
                text = f"(ss failed: {exc})"
            blocks.append(f"--- {node} {kind} sockets:\n{text}")
    report = "\n".join(blocks)
    return report if len(report) <= max_chars else report[:max_chars] + f"\n... ({len(report) - max_chars} more characters)"


@_PARAMETERS.fill
def run_flows(tb: Testbed, node: str, flows: list[dict], *, timeout_s: float = 600.0) -> list[dict]:
    """Run ``flows`` from ``node`` (concurrently, each at its ``start_s``) and return their records.

    Parameters
    ----------
    {tb, node}
    flows : list of dict
        Flow descriptions (see :func:`launch_flows`).
    timeout_s : float
        Longest time for all flows. [s]

    Returns
    -------
    list of dict
        One record per flow, in completion order.

    Raises
    ------
    ValueError
        If a flow is invalid.
    TestbedError
        If the client times out or fails.
    """
    return collect_flows(launch_flows(tb, node, flows), timeout_s)


@_PARAMETERS.fill
def measure_rtt(tb: Testbed, node: str, dst: str, *, port: int = 5201, count: int = 20, interval_s: float = 0.02,
                size_bytes: int = 64, bind: str | None = None) -> np.ndarray:
    """Round-trip times of UDP echoes from ``node`` to a server at ``dst`` [s] (lost probes omitted).

    Parameters
    ----------
    {tb}
    node : str
        Node to measure from.
    dst : str
        Address of a running :class:`Server` (its UDP echo).
    port : int
        The server's port.
    count : int
        Echo requests sent.
    {interval_s}
    size_bytes : int
        UDP payload size. [bytes]
    bind : str, optional
        Local address to send from (to pick a path).

    Returns
    -------
    numpy.ndarray
        The round-trip times of the answered requests, in order. [s]

    Raises
    ------
    TestbedError
        If the measuring process fails or times out.
    """
    return _echo_rtt_s(tb, node, ["rtt", "--port", str(port)], dst, count, interval_s, size_bytes, bind)


@_PARAMETERS.fill
def ping_rtt(tb: Testbed, node: str, dst: str, *, count: int = 20, interval_s: float = 0.02, size_bytes: int = 56,
             bind: str | None = None) -> np.ndarray:
    """ICMP echo round-trip times from ``node`` to ``dst`` [s], timed by the kernel (no server needed).

    Parameters
    ----------
    {tb}
    node : str
        Node to ping from.
    dst : str
        Address to ping.
    count : int
        Echoes reported (one warm-up echo more is sent).
    {interval_s}
    size_bytes : int
        ICMP payload size. [bytes]
    bind : str, optional
        Local address to send from.

    Returns
    -------
    numpy.ndarray
        The round-trip times of the answered echoes, in order. [s]

    Raises
    ------
    TestbedError
        If the ping process fails or times out.
    """
    return _echo_rtt_s(tb, node, ["ping"], dst, count, interval_s, size_bytes, bind)


def _echo_rtt_s(tb: Testbed, node: str, command: list[str], dst: str, count: int, interval_s: float,
                size_bytes: int, bind: str | None) -> np.ndarray:
    """Run an echo subcommand of the traffic tool in ``node``; the round-trip times it prints last. [s]"""
    argv = [*command, "--dst", dst, "--count", str(count), "--interval-s", str(interval_s),
            "--size-bytes", str(size_bytes)] + (["--bind", bind] if bind else [])
    proc = tb.exec(node, _python_argv(*argv), timeout=60 + count * (interval_s + 1))
    return np.asarray(json.loads(proc.stdout.strip().splitlines()[-1])["rtt_s"])


@_PARAMETERS.fill
def bulk_flow(*, flow_id: int, dst: str, port: int = 5201, size_bytes: int | None = None,
              duration_s: float | None = None, cc: str = "cubic", mptcp: bool = False, direction: str = "download",
              bind: str | None = None, sample_interval_s: float = 0.1, start_s: float = 0.0, kind: str = "bulk") -> dict:
    """One bulk transfer of ``size_bytes`` or for ``duration_s``, with TCP_INFO sampled on the sender.

    Parameters
    ----------
    flow_id : int
        Identifier carried in the records.
    {dst, port}
    size_bytes : int, optional
        Bytes to transfer (give this or ``duration_s``). [bytes]
    duration_s : float, optional
        Time to send for, in (0, 3600]. [s]
    cc : str
        Congestion control of the sending socket, one of :data:`CONGESTION_CONTROLS`.
    {mptcp}
    direction : {"download", "upload"}
        ``download``: the server sends; ``upload``: the client sends.
    bind : str, optional
        Local address of the client socket.
    sample_interval_s : float
        TCP_INFO sampling period on the sender (0: none). [s]
    start_s : float
        Start after the client process starts. [s]
    kind : str
        Label carried in the record.

    Returns
    -------
    dict
        The flow description.

    Raises
    ------
    ValueError
        If both or neither of ``size_bytes`` and ``duration_s`` are given, or ``cc``,
        ``direction`` or ``duration_s`` is invalid.
    """
    flow = dict(flow_id=flow_id, kind=kind, dst=dst, port=port, size_bytes=size_bytes, duration_s=duration_s, cc=cc,
                mptcp=mptcp, direction=direction, bind=bind, sample_interval_s=sample_interval_s, start_s=start_s)
    _check_flow(flow)
    return flow


@_PARAMETERS.fill
def probe_flows(*, first_id: int, size_bytes: int, paths: list[tuple[str, str]], port: int = 5201,
                cc: str = "cubic", gap_s: float = 0.5, direction: str = "download") -> list[dict]:
    """Probes of ``size_bytes``, one per path, one after another (``gap_s`` apart).

    ``paths`` lists (local address to bind, destination address) pairs; in
    :func:`~tcpmodels.testbed.topologies.two_path` path i is
    ``("10.0.{i+1}.1", "10.0.{i+1}.2")``.

    Parameters
    ----------
    first_id : int
        Flow id of the first probe; the others follow.
    size_bytes : int
        Size of each probe. [bytes]
    paths : list of tuple of (str, str)
        ``(bind address, destination address)`` per path.
    {port, cc}
    gap_s : float
        Time between the starts of successive probes. [s]
    {direction}

    Returns
    -------
    list of dict
        One flow per path, ``kind="probe"`` with ``path`` its index, no TCP_INFO sampling
        (not validated here; :func:`launch_flows` checks them).
    """
    return [dict(flow_id=first_id + i, kind="probe", path=i, dst=dst, bind=src, port=port, size_bytes=size_bytes,
                 cc=cc, direction=direction, start_s=i * gap_s, sample_interval_s=0.0)
            for i, (src, dst) in enumerate(paths)]


def flow_sizes_bytes(rng: np.random.Generator, n: int, dist: dict) -> np.ndarray:
    """Draw ``n`` flow sizes [bytes] from ``dist``.

    ``dist`` is ``{"kind": "fixed", "size_bytes": S}``, ``{"kind": "uniform",
    "low_bytes": a, "high_bytes": b}`` or ``{"kind": "pareto", "mean_bytes": m,
    "alpha": a}`` (Pareto with shape a > 1 and scale ``m (a - 1) / a``, so the mean is m).

    Parameters
    ----------
    rng : numpy.random.Generator
        Source of randomness (unused for ``fixed``).
    n : int
        Number of sizes.
    dist : dict
        The distribution, as above. [bytes]

    Returns
    -------
    numpy.ndarray
        ``n`` sizes, rounded, at least 1, as int64. [bytes]

    Raises
    ------
    ValueError
        For an unknown ``kind``, uniform bounds not ``1 <= low <= high``, or Pareto
        ``alpha`` <= 1.
    KeyError
        If ``dist`` lacks a field its kind needs.
    """
    kind = dist.get("kind")
    if kind == "fixed":
        sizes = np.full(n, float(dist["size_bytes"]))
    elif kind == "uniform":
        low, high = float(dist["low_bytes"]), float(dist["high_bytes"])
        if not 1 <= low <= high:
            raise ValueError(f"uniform sizes need 1 <= low_bytes <= high_bytes; got {low}, {high}")
        sizes = rng.uniform(low, high, n)
    elif kind == "pareto":
        alpha, mean = float(dist["alpha"]), float(dist["mean_bytes"])
        if not alpha > 1:
            raise ValueError(f"pareto alpha [-] must be > 1 for a finite mean; got {alpha}")
        scale = mean * (alpha - 1) / alpha
        sizes = scale * (1.0 + rng.pareto(alpha, n))  # numpy's pareto is Lomax: shift by 1
    else:
        raise ValueError(f"size distribution kind must be 'fixed', 'uniform' or 'pareto'; got {kind!r}")
    return np.maximum(1, np.round(sizes)).astype(np.int64)


@_PARAMETERS.fill
def poisson_flows(*, rng: np.random.Generator, first_id: int, arrival_rate_per_s: float, duration_s: float,
                  size_dist: dict, dst: str, port: int = 5201, cc: str = "cubic", mptcp: bool = False,
                  direction: str = "download", max_flows: int = 5000) -> list[dict]:
    """Short flows arriving as a Poisson process of ``arrival_rate_per_s`` [1/s] during ``duration_s`` [s].

    Parameters
    ----------
    rng : numpy.random.Generator
        Draws the inter-arrival times and the sizes.
    first_id : int
        Flow id of the first flow; the others follow.
    arrival_rate_per_s : float
        Mean arrival rate, in (0, 1000]. [1/s]
    duration_s : float
        Arrivals are drawn in [0, duration_s). [s]
    size_dist : dict
        Flow size distribution (see :func:`flow_sizes_bytes`).
    {dst, port, cc, mptcp, direction}
    max_flows : int
        Refuse a draw of more flows than this.

    Returns
    -------
    list of dict
        ``kind="short"`` flows, each with its ``start_s`` (arrival time) and
        ``size_bytes``; possibly empty.

    Raises
    ------
    ValueError
        If ``arrival_rate_per_s`` is out of range, more than ``max_flows`` flows arrive,
        or ``size_dist`` is invalid.
    """
    if not 0 < arrival_rate_per_s <= 1000:
        raise ValueError(f"arrival_rate_per_s [1/s] must be in (0, 1000]; got {arrival_rate_per_s}")
    times, t = [], 0.0
    while True:
        t += rng.exponential(1.0 / arrival_rate_per_s)
        if t >= duration_s:
            break
        times.append(t)
        if len(times) > max_flows:
            raise ValueError(f"more than {max_flows} flows: lower arrival_rate_per_s or duration_s")
    sizes = flow_sizes_bytes(rng, len(times), size_dist)
    return [dict(flow_id=first_id + i, kind="short", dst=dst, port=port, size_bytes=int(s), cc=cc, mptcp=mptcp,
                 direction=direction, start_s=float(ts), sample_interval_s=0.0)
            for i, (ts, s) in enumerate(zip(times, sizes))]
