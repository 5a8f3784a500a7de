"""Traffic inside the testbed: a server and a client process speaking a tiny protocol.

Run inside a namespace as ``python -m tcpmodels.testbed.traffic server ...`` or
``... client --flows FILE``; both write one JSON object per line on stdout.

Protocol: the client connects (TCP, or MPTCP with ``IPPROTO_MPTCP`` = 262) and
sends a fixed header (flow id, size or duration, direction, congestion control,
TCP_INFO sampling interval). *download*: the server sends the bytes and closes;
the client's completion time is when it reads end-of-file. *upload*: the client
sends and shuts down its write side; the server answers with the byte count and
the times of its first and last byte. ``time.monotonic`` is one clock for every
namespace of the host, so server-side times are comparable with client-side ones.

The sending side sets the congestion control with ``TCP_CONGESTION`` on its
socket (the namespace default cannot be changed to cubic here) and samples
``TCP_INFO`` (for MPTCP: ``MPTCP_TCPINFO``, one record per subflow) every
``sample_interval_s``; the samples are the ground truth for cwnd, srtt,
retransmissions and delivery rate.

UDP echo on the same port number measures round-trip times (``rtt`` command).
"""

from __future__ import annotations

import argparse
import ctypes
import json
import signal
import socket
import struct
import sys
import threading
import time

from tcpmodels._docstrings import SharedEntries

#: Parameters documented once for the docstrings of this module that share them.
_PARAMETERS = SharedEntries("""
    bind : str or None
        Local address to send from.
""")

IPPROTO_MPTCP = 262
SOL_MPTCP = 284
MPTCP_INFO = 1
MPTCP_TCPINFO = 2
MPTCP_SUBFLOW_ADDRS = 3
TCP_CONGESTION = getattr(socket, "TCP_CONGESTION", 13)
TCP_INFO = getattr(socket, "TCP_INFO", 11)
SO_TIMESTAMPNS = 35  # asm-generic/socket.h (SO_TIMESTAMPNS_OLD: 64-bit timespec on 64-bit hosts)

MAGIC = b"TMTB"
# magic, flow id, size [bytes], duration [s], flags, sample interval [us], congestion control
HEADER = struct.Struct("!4sIQdII16s")
REPLY = struct.Struct("!Qdd")  # bytes, first byte, last byte (monotonic) [s]
FLAG_DOWNLOAD = 1
CHUNK = 256 * 1024

#: ``struct tcp_info`` (include/uapi/linux/tcp.h) up to ``tcpi_snd_wnd``, 232 bytes on Linux >= 5.4.
TCP_INFO_STRUCT = struct.Struct("=8B24I4Q6IQ3Q2I2Q4I")
_TCP_INFO_FIELDS = (
    "state ca_state retransmits probes backoff options wscale app_limited "
    "rto_us ato_us snd_mss rcv_mss unacked sacked lost retrans fackets "
    "last_data_sent last_ack_sent last_data_recv last_ack_recv "
    "pmtu rcv_ssthresh rtt_us rttvar_us snd_ssthresh snd_cwnd advmss reordering "
    "rcv_rtt rcv_space total_retrans "
    "pacing_rate_Bps max_pacing_rate_Bps bytes_acked bytes_received segs_out segs_in "
    "notsent_bytes min_rtt_us data_segs_in data_segs_out delivery_rate_Bps "
    "busy_time_us rwnd_limited_us sndbuf_limited_us delivered delivered_ce "
    "bytes_sent bytes_retrans dsack_dups reord_seen rcv_ooopack snd_wnd"
).split()


def tcp_info_fields(raw: bytes) -> dict:
    """Every field of ``struct tcp_info`` (:data:`TCP_INFO_STRUCT`) by name, as the kernel gives it.

    Parameters
    ----------
    raw : bytes
        ``struct tcp_info`` as ``getsockopt(TCP_INFO)`` returns it; a shorter struct
        (older kernel) is padded with zeros, a longer one cut.

    Returns
    -------
    dict
        The kernel's field names without ``tcpi_``, with the unit appended where the kernel's
        is not plain (``rtt_us``, ``busy_time_us``, ``delivery_rate_Bps``, ...); the byte after
        the window scales is ``app_limited`` (bit 0: ``tcpi_delivery_rate_app_limited``).
    """
    raw = raw.ljust(TCP_INFO_STRUCT.size, b"\0")[: TCP_INFO_STRUCT.size]
    return dict(zip(_TCP_INFO_FIELDS, TCP_INFO_STRUCT.unpack(raw)))


def parse_tcp_info(raw: bytes) -> dict:
    """The fields of ``struct tcp_info`` that matter, with units in the names.

    Parameters
    ----------
    raw : bytes
        ``getsockopt(TCP_INFO)``, of any length (as :func:`tcp_info_fields` reads it).

    Returns
    -------
    dict
        ``cwnd_segments, ssthresh_segments, srtt_s, rttvar_s, min_rtt_s, mss_bytes,
        total_retrans, lost, unacked, bytes_acked, bytes_sent, bytes_retrans,
        delivery_rate_bps, pacing_rate_bps, ca_state``, and the window fields:
        ``snd_wnd_bytes`` (the window the peer advertises, scaled: what a
        window-limited sender may have in flight), ``rcv_space_bytes`` (the
        receiver's autotuning estimate of what the application reads per RTT),
        ``rcv_ssthresh_bytes`` (the receiver's current window clamp) and
        ``rwnd_limited_s`` (time the sender spent limited by the peer's window). [bytes], [s]
        ``total_retrans``, ``lost`` and ``unacked`` are in [segments]; ``ca_state`` is the kernel's ``TCP_CA_*`` number.
    """
    f = tcp_info_fields(raw)
    return {
        "cwnd_segments": f["snd_cwnd"],
        "ssthresh_segments": f["snd_ssthresh"],
        "srtt_s": f["rtt_us"] * 1e-6,
        "rttvar_s": f["rttvar_us"] * 1e-6,
        "min_rtt_s": f["min_rtt_us"] * 1e-6,
        "mss_bytes": f["snd_mss"],
        "total_retrans": f["total_retrans"],
        "lost": f["lost"],
        "unacked": f["unacked"],
        "bytes_acked": f["bytes_acked"],
        "bytes_sent": f["bytes_sent"],
        "bytes_retrans": f["bytes_retrans"],
        "delivery_rate_bps": f["delivery_rate_Bps"] * 8,
        "pacing_rate_bps": f["pacing_rate_Bps"] * 8,
        "ca_state": f["ca_state"],
        "snd_wnd_bytes": f["snd_wnd"],
        "rcv_space_bytes": f["rcv_space"],
        "rcv_ssthresh_bytes": f["rcv_ssthresh"],
        "rwnd_limited_s": f["rwnd_limited_us"] * 1e-6,
    }


_libc = None


def _getsockopt_inout(sock: socket.socket, level: int, opt: int, buf: bytearray) -> bytes:
    """getsockopt whose buffer carries input (MPTCP_TCPINFO reads a header from it)."""
    global _libc
    if _libc is None:
        _libc = ctypes.CDLL(None, use_errno=True)
    cbuf = (ctypes.c_char * len(buf)).from_buffer(buf)
    size = ctypes.c_uint32(len(buf))
    if _libc.getsockopt(sock.fileno(), level, opt, cbuf, ctypes.byref(size)) != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"getsockopt({level}, {opt})")
    return bytes(buf[: size.value])


def _subflow_data(sock: socket.socket, opt: int, elem_size: int, max_subflows: int = 8) -> list[bytes]:
    buf = bytearray(16 + elem_size * max_subflows)
    struct.pack_into("=IIII", buf, 0, 16, 0, 0, elem_size)
    raw = _getsockopt_inout(sock, SOL_MPTCP, opt, buf)
    _, num, size_kernel, size_user = struct.unpack_from("=IIII", raw)
    return [raw[16 + i * size_user: 16 + (i + 1) * size_user] for i in range(min(num, max_subflows))]


def _sockaddr_in(raw: bytes) -> str:
    family, port = struct.unpack_from("=HH", raw)
    if family != socket.AF_INET:
        return ""
    return f"{socket.inet_ntoa(raw[4:8])}:{socket.ntohs(port)}"


def sample(sock: socket.socket, mptcp: bool) -> list[dict]:
    """One TCP_INFO sample per (sub)flow of ``sock``.

    Parameters
    ----------
    sock : socket.socket
        A connected TCP or MPTCP socket.
    mptcp : bool
        Read one ``MPTCP_TCPINFO`` record per subflow (falls back to the plain
        ``TCP_INFO`` when the connection fell back to TCP).

    Returns
    -------
    list of dict
        :func:`parse_tcp_info` records; for MPTCP each also holds ``subflow`` (index)
        and, where the kernel reports them, ``local`` and ``remote`` (``"addr:port"``).

    Raises
    ------
    OSError
        If ``getsockopt`` fails (e.g. the socket is closed).
    """
    if not mptcp:
        return [parse_tcp_info(sock.getsockopt(socket.IPPROTO_TCP, TCP_INFO, TCP_INFO_STRUCT.size))]
    out = []
    try:
        infos = _subflow_data(sock, MPTCP_TCPINFO, TCP_INFO_STRUCT.size)
        addrs = _subflow_data(sock, MPTCP_SUBFLOW_ADDRS, 256)
    except OSError:  # fell back to plain TCP
        return [parse_tcp_info(sock.getsockopt(socket.IPPROTO_TCP, TCP_INFO, TCP_INFO_STRUCT.size))]
    for i, raw in enumerate(infos):
        rec = parse_tcp_info(raw)
        rec["subflow"] = i
        if i < len(addrs):
            rec["local"], rec["remote"] = _sockaddr_in(addrs[i][:128]), _sockaddr_in(addrs[i][128:])
        out.append(rec)
    return out


class _Sampler(threading.Thread):
    def __init__(self, sock, mptcp, interval_s, t0):
        super().__init__(daemon=True)
        self.sock, self.mptcp, self.interval_s, self.t0 = sock, mptcp, interval_s, t0
        self.samples: list[dict] = []
        self.stop_event = threading.Event()

    def take(self):
        try:
            now = time.monotonic()
            for rec in sample(self.sock, self.mptcp):
                rec["t_s"] = round(now - self.t0, 6)
                self.samples.append(rec)
        except OSError:
            pass

    def run(self):
        while not self.stop_event.wait(self.interval_s):
            self.take()

    def finish(self) -> list[dict]:
        self.take()
        self.stop_event.set()
        return self.samples


def _set_cc(sock: socket.socket, cc: str) -> None:
    if cc:
        sock.setsockopt(socket.IPPROTO_TCP, TCP_CONGESTION, cc.encode())


def _get_cc(sock: socket.socket) -> str | None:
    """The congestion control the kernel reports for ``sock`` (read back, not assumed)."""
    try:
        return sock.getsockopt(socket.IPPROTO_TCP, TCP_CONGESTION, 16).rstrip(b"\0").decode()
    except OSError:
        return None


def _send(sock, size_bytes, duration_s, t_start) -> int:
    payload = memoryview(bytes(CHUNK))
    sent = 0
    if size_bytes > 0:
        while sent < size_bytes:
            sent += sock.send(payload[: min(CHUNK, size_bytes - sent)])
    else:
        end = t_start + duration_s
        while time.monotonic() < end:
            sent += sock.send(payload)
    return sent


def _recv_all(sock) -> tuple[int, float | None, float | None]:
    buf = bytearray(CHUNK)
    total, first, last = 0, None, None
    while True:
        n = sock.recv_into(buf)
        if n == 0:
            return total, first, last
        last = time.monotonic()
        if first is None:
            first = last
        total += n


#: Longest wait on SIGTERM for connection threads to write their records. [s]
STOP_GRACE_S = 8.0

#: Name of the threads that serve one connection each; on SIGTERM the server joins every live one.
CONN_THREAD_NAME = "traffic-conn"


def _emit(rec: dict, lock: threading.Lock) -> None:
    with lock:
        sys.stdout.write(json.dumps(rec) + "\n")
        sys.stdout.flush()


# ---------------------------------------------------------------- server
def _serve_conn(conn: socket.socket, peer, mptcp: bool, lock: threading.Lock) -> None:
    # The connection is closed BEFORE the record is written: stdout is a pipe that the parent
    # reads only when it stops the server, so a record larger than the pipe buffer (64 KiB, a
    # download with TCP_INFO samples) blocks the write until then, and a socket closed after the
    # write stayed open that long (with its MPTCP connection and its subflows' congestion
    # control state: the stale entries of the tm_lia/tm_olia maps, issue 15).
    base: dict = {"role": "server", "peer": f"{peer[0]}:{peer[1]}"}
    rec: dict | None = None
    try:
        rec = _serve_conn_records(conn, base, mptcp)
    except OSError as exc:
        rec = {**base, "error": str(exc)}
    finally:
        conn.close()
    if rec is not None:
        _emit(rec, lock)


def _serve_conn_records(conn: socket.socket, rec: dict, mptcp: bool) -> dict | None:
    """Serve one connection; return its record (``None``: not a traffic client, no record)."""
    head = b""
    while len(head) < HEADER.size:
        chunk = conn.recv(HEADER.size - len(head))
        if not chunk:
            return None
        head += chunk
    magic, flow_id, size_bytes, duration_s, flags, interval_us, cc = HEADER.unpack(head)
    if magic != MAGIC:
        return None
    cc = cc.rstrip(b"\0").decode()
    rec.update(flow_id=flow_id, cc=cc, mptcp=mptcp)
    if flags & FLAG_DOWNLOAD:
        _set_cc(conn, cc)
        rec["cc_effective"] = _get_cc(conn)
        t0 = time.monotonic()
        sampler = _Sampler(conn, mptcp, interval_us * 1e-6, t0) if interval_us else None
        if sampler:
            sampler.start()
        sent = _send(conn, size_bytes, duration_s, t0)
        conn.shutdown(socket.SHUT_WR)
        _recv_all(conn)  # the client closes after reading everything
        rec.update(direction="download", bytes=sent, start_mono_s=t0, end_mono_s=time.monotonic())
        if sampler:
            rec["samples"] = sampler.finish()
    else:
        total, first, last = _recv_all(conn)
        conn.sendall(REPLY.pack(total, first or 0.0, last or 0.0))
        rec.update(direction="upload", bytes=total, first_byte_mono_s=first, last_byte_mono_s=last)
    return rec


def serve(port: int, mptcp: bool, bind: str = "0.0.0.0") -> None:
    """Serve TCP (or MPTCP, which also accepts plain TCP) and UDP echo on ``port`` until SIGTERM.

    Prints ``{"role": "server", "ready": true, ...}`` once listening, then one record per
    connection (flow id, direction, bytes, monotonic start and end times, TCP_INFO
    samples of a download) on stdout.

    Parameters
    ----------
    port : int
        TCP and UDP port.
    mptcp : bool
        Listen with ``IPPROTO_MPTCP``.
    bind : str
        Local address to listen on (all by default).

    Raises
    ------
    SystemExit
        On SIGTERM, after waiting up to :data:`STOP_GRACE_S` for connection threads to
        write their records.
    OSError
        If the port cannot be bound.
    """
    lock = threading.Lock()
    lsock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, IPPROTO_MPTCP if mptcp else 0)
    lsock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    lsock.bind((bind, port))
    lsock.listen(1024)
    usock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    usock.bind((bind, port))

    def echo():
        while True:
            data, addr = usock.recvfrom(65535)
            usock.sendto(data, addr)

    threading.Thread(target=echo, daemon=True).start()
    signal.signal(signal.SIGTERM, lambda *a: sys.exit(0))
    _emit({"role": "server", "ready": True, "port": port, "mptcp": mptcp}, lock)
    try:
        while True:
            conn, peer = lsock.accept()
            threading.Thread(target=_serve_conn, args=(conn, peer, mptcp, lock), name=CONN_THREAD_NAME,
                             daemon=True).start()
    finally:
        # SIGTERM arrives as soon as the clients are done, often while a connection's thread is still
        # writing its record (with TCP_INFO samples: tens of KB). Exiting then cut records mid-line
        # or lost them on a loaded host; give the threads time to finish (bounded: Server.stop waits 10 s).
        # The live threads are found by name, not kept in a list: on a loaded host SIGTERM could arrive
        # after a thread had served its client but before the main thread had listed it, and that
        # record was lost (CI 2026-12-03, 1 of 600).
        deadline = time.monotonic() + STOP_GRACE_S
        for worker in [t for t in threading.enumerate() if t.name == CONN_THREAD_NAME]:
            worker.join(max(0.0, deadline - time.monotonic()))


# ---------------------------------------------------------------- client
def run_flow(flow: dict, t_base: float, lock: threading.Lock) -> dict:
    """Run one flow described by a dict (see :func:`tcpmodels.testbed.workload.bulk_flow`); return its record.

    Parameters
    ----------
    flow : dict
        ``flow_id``, ``dst``, ``port`` and ``size_bytes`` or ``duration_s``; optional
        ``direction``, ``cc``, ``mptcp``, ``bind``, ``start_s``, ``sample_interval_s``,
        ``kind`` and ``path``.
    t_base : float
        The client's start on the monotonic clock; the flow starts ``start_s`` after it. [s]
    lock : threading.Lock
        Serialises the record lines on stdout.

    Returns
    -------
    dict
        The record (also printed): the flow's fields, ``start_unix_s``,
        ``start_mono_s``, ``connect_s``, ``completion_s`` [s], ``bytes`` [bytes],
        ``rate_bps`` [bit/s] (after connection set-up), ``cc_effective``, ``src``,
        ``samples`` (upload with sampling) and ``mptcp_subflows``; ``error`` instead of
        the results if a socket call failed.
    """
    mptcp = bool(flow.get("mptcp"))
    download = flow.get("direction", "download") == "download"
    size_bytes = int(flow.get("size_bytes") or 0)
    duration_s = float(flow.get("duration_s") or 0.0)
    interval_s = float(flow.get("sample_interval_s") or 0.0)
    cc = flow.get("cc") or ""
    rec = {k: flow.get(k) for k in ("flow_id", "kind", "path", "dst", "port", "bind", "cc")}
    rec.update(role="client", mptcp=mptcp, direction="download" if download else "upload")
    delay = t_base + float(flow.get("start_s", 0.0)) - time.monotonic()
    if delay > 0:
        time.sleep(delay)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, IPPROTO_MPTCP if mptcp else 0)
    try:
        _set_cc(sock, cc)
        if flow.get("bind"):
            sock.bind((flow["bind"], 0))
        t0 = time.monotonic()
        rec["start_unix_s"] = time.time()
        rec["start_mono_s"] = t0
        rec["start_offset_s"] = t0 - t_base
        sock.connect((flow["dst"], int(flow["port"])))
        t_conn = time.monotonic()
        rec["connect_s"] = t_conn - t0
        rec["src"] = "%s:%d" % sock.getsockname()
        rec["cc_effective"] = _get_cc(sock)
        head = HEADER.pack(MAGIC, int(flow["flow_id"]), size_bytes, duration_s, FLAG_DOWNLOAD if download else 0,
                           int(interval_s * 1e6) if download else 0, cc.encode())
        sock.sendall(head)
        if download:
            total, first, last = _recv_all(sock)
            t_end = last if last is not None else time.monotonic()
        else:
            sampler = _Sampler(sock, mptcp, interval_s, t0) if interval_s else None
            if sampler:
                sampler.start()
            _send(sock, size_bytes, duration_s, t_conn)
            sock.shutdown(socket.SHUT_WR)
            reply = b""
            while len(reply) < REPLY.size:
                chunk = sock.recv(REPLY.size - len(reply))
                if not chunk:
                    raise OSError("server closed without a reply")
                reply += chunk
            total, first, last = REPLY.unpack(reply)
            t_end = last or time.monotonic()
            if sampler:
                rec["samples"] = sampler.finish()
        if mptcp:
            try:
                info = sock.getsockopt(SOL_MPTCP, MPTCP_INFO, 64)
                rec["mptcp_subflows"] = info[0]
            except OSError:
                rec["mptcp_subflows"] = None
        rec["bytes"] = total
        rec["completion_s"] = t_end - t0
        rec["rate_bps"] = total * 8 / (t_end - t_conn) if t_end > t_conn else None
    except OSError as exc:
        rec["error"] = f"{type(exc).__name__}: {exc}"
    finally:
        sock.close()
    _emit(rec, lock)
    return rec


def client(flows: list[dict]) -> None:
    """Run ``flows`` (each at its ``start_s`` after now), concurrently, one record each on stdout.

    Parameters
    ----------
    flows : list of dict
        Flow descriptions (see :func:`run_flow`); one thread each.
    """
    lock = threading.Lock()
    t_base = time.monotonic()
    threads = [threading.Thread(target=run_flow, args=(f, t_base, lock)) for f in flows]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


@_PARAMETERS.fill
def rtt(dst: str, port: int, count: int, interval_s: float, size_bytes: int, bind: str | None) -> None:
    """Send ``count`` UDP echo requests; print one record with every round-trip time [s].

    Parameters
    ----------
    dst : str
        Address of a :func:`serve` process (its UDP echo).
    port : int
        Its port.
    count : int
        Requests sent.
    interval_s : float
        Pause after each request's reply or timeout. [s]
    size_bytes : int
        UDP payload size (at least 8). [bytes]
    {bind}

    Notes
    -----
    The printed record is ``{"role": "rtt", "dst", "rtt_s": [...], "lost": n}``; a request
    unanswered within max(2 s, 20 ``interval_s``) counts as lost.
    """
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    if bind:
        sock.bind((bind, 0))
    sock.settimeout(max(2.0, 20 * interval_s))
    rtts, lost = [], 0
    payload = bytearray(max(size_bytes, 8))
    for i in range(count):
        struct.pack_into("!Q", payload, 0, i)
        t0 = time.monotonic()
        sock.sendto(payload, (dst, port))
        try:
            while True:
                data, _ = sock.recvfrom(65535)
                if struct.unpack_from("!Q", data)[0] == i:
                    break
            rtts.append(time.monotonic() - t0)
        except socket.timeout:
            lost += 1
        time.sleep(interval_s)
    print(json.dumps({"role": "rtt", "dst": dst, "rtt_s": rtts, "lost": lost}), flush=True)


def _icmp_checksum(data: bytes) -> int:
    if len(data) % 2:
        data += b"\0"
    total = sum(struct.unpack(f"!{len(data) // 2}H", data))
    total = (total >> 16) + (total & 0xFFFF)
    total += total >> 16
    return ~total & 0xFFFF


@_PARAMETERS.fill
def ping(dst: str, count: int, interval_s: float, size_bytes: int, bind: str | None) -> None:
    """ICMP echo round-trip times [s]: the reply comes from the peer's kernel, and the
    arrival time is the kernel's receive timestamp (SO_TIMESTAMPNS), so no userspace
    scheduling on either side's receive path enters the measurement. One warm-up echo
    (which may include ARP resolution) is sent first and not reported.

    Parameters
    ----------
    dst : str
        Address to ping.
    count : int
        Echoes reported (one more is sent).
    interval_s : float
        Pause after each reply or timeout. [s]
    size_bytes : int
        ICMP payload size (at least 8). [bytes]
    {bind}

    Notes
    -----
    Prints ``{"role": "ping", "dst", "rtt_s": [...], "lost": n}``; needs a raw socket
    (root or ``CAP_NET_RAW``). Send times are taken with ``time.time()`` just before
    ``sendto``.
    """
    sock = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)
    sock.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
    if bind:
        sock.bind((bind, 0))
    ident = (threading.get_native_id() ^ 0x5A5A) & 0xFFFF
    timeout_s = max(2.0, 20 * interval_s)
    rtts, lost = [], 0
    for seq in range(count + 1):
        body = bytes(max(size_bytes, 8))
        head = struct.pack("!BBHHH", 8, 0, 0, ident, seq)
        packet = struct.pack("!BBHHH", 8, 0, _icmp_checksum(head + body), ident, seq) + body
        t_send = time.time()
        sock.sendto(packet, (dst, 0))
        deadline = time.monotonic() + timeout_s
        got = None
        while got is None:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                break
            sock.settimeout(remaining)
            try:
                data, anc, _, _ = sock.recvmsg(65535, 1024)
            except socket.timeout:
                break
            ihl = (data[0] & 0x0F) * 4
            typ, _, _, rid, rseq = struct.unpack_from("!BBHHH", data, ihl)
            if typ == 0 and rid == ident and rseq == seq:
                got = time.time()
                for level, kind, cdata in anc:
                    if level == socket.SOL_SOCKET and kind == SO_TIMESTAMPNS:
                        sec, nsec = struct.unpack("=qq", cdata[:16])
                        got = sec + nsec * 1e-9
        if seq > 0:
            if got is None:
                lost += 1
            else:
                rtts.append(got - t_send)
        time.sleep(interval_s)
    print(json.dumps({"role": "ping", "dst": dst, "rtt_s": rtts, "lost": lost}), flush=True)


def main(argv: list[str] | None = None) -> int:
    """Command line of the traffic process: ``server``, ``client``, ``rtt`` or ``ping``.

    Parameters
    ----------
    argv : list of str, optional
        Arguments; ``sys.argv[1:]`` if omitted.

    Returns
    -------
    int
        Exit status, 0 (argparse exits with 2 on bad arguments).
    """
    parser = argparse.ArgumentParser(prog="python -m tcpmodels.testbed.traffic")
    sub = parser.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("server")
    s.add_argument("--port", type=int, required=True)
    s.add_argument("--mptcp", action="store_true")
    c = sub.add_parser("client")
    c.add_argument("--flows", required=True, help="JSON file with a list of flows, or '-' for stdin")
    r = sub.add_parser("rtt")
    r.add_argument("--dst", required=True)
    r.add_argument("--port", type=int, required=True)
    r.add_argument("--count", type=int, default=20)
    r.add_argument("--interval-s", type=float, default=0.05)
    r.add_argument("--size-bytes", type=int, default=64)
    r.add_argument("--bind")
    p = sub.add_parser("ping")
    p.add_argument("--dst", required=True)
    p.add_argument("--count", type=int, default=20)
    p.add_argument("--interval-s", type=float, default=0.05)
    p.add_argument("--size-bytes", type=int, default=56)
    p.add_argument("--bind")
    args = parser.parse_args(argv)
    if args.cmd == "server":
        serve(args.port, args.mptcp)
    elif args.cmd == "client":
        text = sys.stdin.read() if args.flows == "-" else open(args.flows, encoding="utf-8").read()
        client(json.loads(text))
    elif args.cmd == "ping":
        ping(args.dst, args.count, args.interval_s, args.size_bytes, args.bind)
    else:
        rtt(args.dst, args.port, args.count, args.interval_s, args.size_bytes, args.bind)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
