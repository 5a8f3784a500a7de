"""Sender and receiver of the limitation campaign, run inside testbed namespaces; JSON lines on stdout.

``python -m tcpmodels.experiments.limits.endpoint receive --port P [--rcvbuf-bytes N]`` listens (with
``SO_RCVBUF`` set on the listening socket, so the window scale the accepted connections announce
already fits the small buffer), reads every connection to its end and closes it; it prints
``{"ready": true}`` once listening and one record per connection.

``python -m tcpmodels.experiments.limits.endpoint send --dst A --port P --flows JSON`` runs the flows
one after the other. Each flow: ``size_bytes`` or ``duration_s``; ``burst_bytes`` and ``sleep_s``
(the application writes a burst, then sleeps: application-limited); ``sndbuf_bytes`` (``SO_SNDBUF``
before connecting: send-buffer-limited); ``cc``; ``pause_before_s``. The sender samples ``TCP_INFO``
every ``sample_interval_s`` (default 0.1 s) with the wall clock (``time.time()``, the clock tcpdump
stamps packets with), and once more after the last byte was acknowledged.

The kernel's ground truth is in the chrono counters of ``struct tcp_info`` (Linux >= 4.10,
``tcp_get_info_chrono_stats``): ``tcpi_busy_time`` (time with data outstanding or queued, the
limited times included), ``tcpi_rwnd_limited`` and ``tcpi_sndbuf_limited`` [us], and the
``tcpi_delivery_rate_app_limited`` bit.

References
----------
.. [1] Linux ``include/uapi/linux/tcp.h`` (``struct tcp_info``) and ``net/ipv4/tcp.c``
   (``tcp_get_info``, ``tcp_get_info_chrono_stats``); ``net/ipv4/tcp_output.c`` (``tcp_chrono_start``).
"""

from __future__ import annotations

import argparse
import json
import signal
import socket
import sys
import threading
import time

from tcpmodels._docstrings import SharedEntries
from tcpmodels.testbed.traffic import TCP_INFO_STRUCT as _TCP_INFO
from tcpmodels.testbed.traffic import tcp_info_fields

__all__ = ["parse_tcp_info_chrono", "receive", "send_flows", "main"]

#: Parameters documented once for the docstrings of this module that share them.
_PARAMETERS = SharedEntries("""
    dst : str
        Receiver address.
    port : int
        Receiver port.
""")

TCP_CONGESTION = getattr(socket, "TCP_CONGESTION", 13)
TCP_INFO = getattr(socket, "TCP_INFO", 11)
CHUNK_BYTES = 64 * 1024


def parse_tcp_info_chrono(raw: bytes) -> dict:
    """The fields of ``struct tcp_info`` the limitation diagnosis is scored against, units in the names.

    Parameters
    ----------
    raw : bytes
        ``getsockopt(IPPROTO_TCP, TCP_INFO)``; a shorter struct (older kernel) is padded with zeros.

    Returns
    -------
    dict
        ``busy_s``, ``rwnd_limited_s``, ``sndbuf_limited_s`` (cumulative since the connection
        started) [s], ``app_limited`` (the ``tcpi_delivery_rate_app_limited`` bit), ``delivery_rate_bps``
        [bit/s], ``cwnd_segments``, ``ssthresh_segments``, ``srtt_s``, ``min_rtt_s`` [s], ``snd_wnd_bytes``,
        ``notsent_bytes``, ``unacked_segments``, ``bytes_acked``, ``bytes_sent``, ``bytes_retrans`` [bytes],
        ``total_retrans`` [segments], ``mss_bytes``, ``ca_state``.
    """
    f = tcp_info_fields(raw)
    return {
        "busy_s": f["busy_time_us"] * 1e-6, "rwnd_limited_s": f["rwnd_limited_us"] * 1e-6,
        "sndbuf_limited_s": f["sndbuf_limited_us"] * 1e-6, "app_limited": bool(f["app_limited"] & 1),
        "delivery_rate_bps": f["delivery_rate_Bps"] * 8, "cwnd_segments": f["snd_cwnd"],
        "ssthresh_segments": f["snd_ssthresh"], "srtt_s": f["rtt_us"] * 1e-6, "min_rtt_s": f["min_rtt_us"] * 1e-6,
        "snd_wnd_bytes": f["snd_wnd"], "notsent_bytes": f["notsent_bytes"], "unacked_segments": f["unacked"],
        "bytes_acked": f["bytes_acked"], "bytes_sent": f["bytes_sent"], "bytes_retrans": f["bytes_retrans"],
        "total_retrans": f["total_retrans"], "mss_bytes": f["snd_mss"], "ca_state": f["ca_state"],
    }


def _emit(rec: dict, lock: threading.Lock) -> None:
    with lock:
        sys.stdout.write(json.dumps(rec) + "\n")
        sys.stdout.flush()


def _serve(conn: socket.socket, peer, lock: threading.Lock) -> None:
    buf = bytearray(CHUNK_BYTES)
    total, first, last = 0, None, None
    try:
        while True:
            n = conn.recv_into(buf)
            if n == 0:
                break
            last = time.time()
            first = first if first is not None else last
            total += n
        rec = {"peer": f"{peer[0]}:{peer[1]}", "bytes": total, "first_byte_unix_s": first, "last_byte_unix_s": last,
               "rcvbuf_bytes": conn.getsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF)}
    except OSError as exc:
        rec = {"peer": f"{peer[0]}:{peer[1]}", "error": str(exc)}
    finally:
        conn.close()
    _emit(rec, lock)


def receive(port: int, rcvbuf_bytes: int = 0) -> None:
    """Accept connections on ``port`` and read each to its end, until SIGTERM.

    Parameters
    ----------
    port : int
        TCP port.
    rcvbuf_bytes : int
        ``SO_RCVBUF`` of the listening socket (inherited by accepted ones; the kernel doubles it
        and turns receive autotuning off); 0 leaves the default. [bytes]
    """
    lock = threading.Lock()
    lsock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    lsock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    if rcvbuf_bytes > 0:
        lsock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, int(rcvbuf_bytes))
    lsock.bind(("0.0.0.0", port))
    lsock.listen(64)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    _emit({"ready": True, "port": port, "rcvbuf_bytes": lsock.getsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF)}, lock)
    while True:
        conn, peer = lsock.accept()
        threading.Thread(target=_serve, args=(conn, peer, lock), daemon=True).start()


class _Writer:
    """The application side: bytes handed to the socket and the time spent inside ``send()`` (blocked on the
    send buffer; a send that does not block returns within microseconds)."""

    def __init__(self) -> None:
        self.written_bytes = 0
        self.in_send_s = 0.0


class _Sampler(threading.Thread):
    def __init__(self, sock: socket.socket, interval_s: float, writer: _Writer):
        super().__init__(daemon=True)
        self.sock, self.interval_s, self.writer = sock, interval_s, writer
        self.samples: list[dict] = []
        self.stop_event = threading.Event()

    def take(self) -> None:
        try:
            raw = self.sock.getsockopt(socket.IPPROTO_TCP, TCP_INFO, _TCP_INFO.size)
        except OSError:
            return
        self.samples.append({"t_unix_s": time.time(), **parse_tcp_info_chrono(raw),
                             "app_written_bytes": self.writer.written_bytes, "app_in_send_s": self.writer.in_send_s})

    def run(self) -> None:
        self.take()
        while not self.stop_event.wait(self.interval_s):
            self.take()


def _write(sock: socket.socket, flow: dict, writer: _Writer) -> int:
    payload = memoryview(bytes(CHUNK_BYTES))
    size = int(flow.get("size_bytes") or 0)
    end = time.monotonic() + float(flow.get("duration_s") or 0.0)
    burst = int(flow.get("burst_bytes") or 0)
    sleep_s = float(flow.get("sleep_s") or 0.0)
    sent = 0

    def more() -> bool:
        return sent < size if size > 0 else time.monotonic() < end

    while more():
        quota = burst if burst > 0 else CHUNK_BYTES
        if size > 0:
            quota = min(quota, size - sent)
        done = 0
        while done < quota:
            t = time.perf_counter()
            n = sock.send(payload[: min(CHUNK_BYTES, quota - done)])
            writer.in_send_s += time.perf_counter() - t
            done += n
            writer.written_bytes += n
        sent += done
        if burst > 0 and sleep_s > 0 and more():
            time.sleep(sleep_s)
    return sent


@_PARAMETERS.fill
def send_flow(dst: str, port: int, flow: dict) -> dict:
    """Run one flow to ``dst:port`` and return its record (also on error: ``error``).

    Parameters
    ----------
    {dst, port}
    flow : dict
        See the module docstring.

    Returns
    -------
    dict
        ``flow`` plus ``src`` (``"addr:port"``), ``connect_unix_s``, ``end_unix_s`` [s], ``bytes``,
        ``cc_effective``, ``sndbuf_effective_bytes`` and ``samples`` (:func:`parse_tcp_info_chrono`
        records with ``t_unix_s``).
    """
    rec = dict(flow)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sampler = None
    try:
        if flow.get("cc"):
            sock.setsockopt(socket.IPPROTO_TCP, TCP_CONGESTION, flow["cc"].encode())
        if flow.get("sndbuf_bytes"):
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, int(flow["sndbuf_bytes"]))
        rec["start_unix_s"] = time.time()
        sock.connect((dst, port))
        rec["connect_unix_s"] = time.time()
        rec["src"] = "%s:%d" % sock.getsockname()
        rec["cc_effective"] = sock.getsockopt(socket.IPPROTO_TCP, TCP_CONGESTION, 16).rstrip(b"\0").decode()
        rec["sndbuf_effective_bytes"] = sock.getsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF)
        writer = _Writer()
        sampler = _Sampler(sock, float(flow.get("sample_interval_s", 0.1)), writer)
        sampler.start()
        rec["bytes"] = _write(sock, flow, writer)
        rec["written_unix_s"] = time.time()
        sock.shutdown(socket.SHUT_WR)
        while sock.recv(4096):  # the receiver closes once it has read everything
            pass
        rec["end_unix_s"] = time.time()
    except OSError as exc:
        rec["error"] = f"{type(exc).__name__}: {exc}"
    finally:
        if sampler is not None:
            sampler.stop_event.set()
            sampler.join(timeout=2)
            sampler.take()
            rec["samples"] = sampler.samples
        sock.close()
    return rec


@_PARAMETERS.fill
def send_flows(dst: str, port: int, flows: list[dict]) -> None:
    """Run ``flows`` one after the other (each after its ``pause_before_s``), one record each on stdout.

    Parameters
    ----------
    {dst, port}
    flows : list of dict
        See the module docstring.
    """
    lock = threading.Lock()
    for flow in flows:
        time.sleep(float(flow.get("pause_before_s") or 0.0))
        _emit(send_flow(dst, port, flow), lock)


def main(argv: list[str] | None = None) -> int:
    """Command line: ``receive`` or ``send`` (see the module docstring).

    Parameters
    ----------
    argv : list of str, optional
        Arguments; None: ``sys.argv[1:]``.

    Returns
    -------
    int
        0.
    """
    parser = argparse.ArgumentParser(prog="python -m tcpmodels.experiments.limits.endpoint")
    sub = parser.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("receive")
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--rcvbuf-bytes", type=int, default=0)
    p = sub.add_parser("send")
    p.add_argument("--dst", required=True)
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--flows", required=True, help="JSON list of flows")
    args = parser.parse_args(argv)
    if args.cmd == "receive":
        receive(args.port, args.rcvbuf_bytes)
    else:
        send_flows(args.dst, args.port, json.loads(args.flows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
