"""Small synthetic packet tables of one TCP transfer with a known limit, seen at the sender or at the receiver.

An event loop moves segments of ``mss_bytes`` from A (10.0.0.1:40000) to B (10.0.0.2:80) over a path
of round trip ``rtt_s`` whose bottleneck spaces segments ``gap_s`` apart; B acknowledges every segment
at once with the window ``window_bytes`` (scale 7 on both SYNs). The sender keeps at most ``cwnd``
segments and at most the window in flight, sends only what the application has written
(``burst``/``every_s``: that many segments every so often; default always more), and loses one
segment every ``rtx_every`` segments: the receiver never sees it (nor does a capture at the receiver),
acknowledges the hole with duplicate ACKs, and the sender sends it again after three more segments (a
retransmission of data the receiver has not acknowledged, not a spurious one). The tables are built with
:func:`tcpmodels.traces.schema.conform`, independent of any capture reader.
"""

from __future__ import annotations

import heapq

import numpy as np

from tcpmodels.traces.schema import COLUMNS, conform

A, B = ("10.0.0.1", 40000), ("10.0.0.2", 80)
SCALE = 7


def _row(t, src, dst, seq, ack, flags, window, payload, ws=-1, tsval=0):
    return {"t": t, "src": src, "dst": dst, "seq": seq, "ack": ack, "flags": flags, "window": window,
            "payload": payload, "ws": ws, "tsval": tsval}


def transfer(*, rtt_s=0.05, duration_s=3.0, mss_bytes=1000, cwnd=10_000, window_bytes=1 << 22, gap_s=1e-4,
             burst=None, every_s=None, rtx_every=None, view="sender", handshake=True, acks=True,
             sender_opens=True):
    """The packet table of one transfer (see the module docstring).

    Parameters
    ----------
    view : {"sender", "receiver"} or float
        Where the capture is, as the fraction of the one-way path from A it sits at (``"sender"`` 0,
        ``"receiver"`` 1, e.g. 0.5 mid-path): a packet A sends at t passes it at ``t + x * rtt_s / 2``
        (after the bottleneck when ``x > 0``), one B sends at t at ``t + (1 - x) * rtt_s / 2``.
    handshake, acks : bool
        Leave the handshake (or every packet of B) out, for the bad-input cases.
    sender_opens : bool
        A (the data sender) opens the connection (an upload); False: B does (a download), and A starts
        sending when B's third ACK reaches it.
    """
    isn_a, isn_b = 1000, 5000
    half = rtt_s / 2
    x = {"sender": 0.0, "receiver": 1.0}.get(view, view)
    rows = []
    if handshake and sender_opens:
        rows.append(_row(x * half, A, B, isn_a, 0, 0x02, 65535, 0, ws=SCALE))
        rows.append(_row(half + (1 - x) * half, B, A, isn_b, isn_a + 1, 0x12, 65535, 0, ws=SCALE))
        rows.append(_row(rtt_s + x * half + 1e-6, A, B, isn_a + 1, isn_b + 1, 0x10, 65535 >> SCALE, 0))
    elif handshake:
        rows.append(_row((1 - x) * half, B, A, isn_b, 0, 0x02, 65535, 0, ws=SCALE))
        rows.append(_row(half + x * half, A, B, isn_a, isn_b + 1, 0x12, 65535, 0, ws=SCALE))
        rows.append(_row(rtt_s + (1 - x) * half + 1e-6, B, A, isn_b + 1, isn_a + 1, 0x10, 65535 >> SCALE, 0))
    t = rtt_s if sender_opens else rtt_s + half
    next_seq, acked, sent = isn_a + 1, isn_a + 1, 0
    hole, resend_at = None, None  # the lost segment B has not received, and when A sends it again (its count)
    written = np.inf if burst is None else 0
    next_write = t
    arrivals: list[tuple[float, int]] = []  # (time the ACK reaches A, ack number)
    bottleneck_free = t
    win = window_bytes
    while t < rtt_s + duration_s:
        while arrivals and arrivals[0][0] <= t + 1e-12:
            _, a = heapq.heappop(arrivals)
            acked = max(acked, a)
        if burst is not None and t >= next_write:
            written += burst * mss_bytes
            next_write += every_s
        flight = next_seq - acked
        can = (flight + mss_bytes <= min(cwnd * mss_bytes, win)) and (next_seq - isn_a - 1 + mss_bytes <= written)
        if can:
            sent += 1
            lost = False
            if hole is not None and sent >= resend_at:  # the lost segment again, after three more
                seq, resend = hole, True
            else:
                seq, resend = next_seq, False
                next_seq += mss_bytes
                lost = bool(rtx_every) and sent % rtx_every == 0 and hole is None
            depart = max(t, bottleneck_free) + gap_s
            bottleneck_free = depart
            at_b = depart + half
            if not lost or x < 1:  # a lost segment is gone before the receiver
                rows.append(_row(t if x == 0 else depart + x * half, A, B, seq, isn_b + 1, 0x10, 65535 >> SCALE,
                                 mss_bytes, tsval=1 + int(t * 1000)))
            if lost:
                hole, resend_at = seq, sent + 4
            else:
                if resend:
                    hole = None
                a = hole if hole is not None else next_seq  # cumulative: below the hole while there is one
                if acks:
                    rows.append(_row(at_b + 1e-6 + (1 - x) * half, B, A, isn_b + 1, a, 0x10, win >> SCALE, 0))
                heapq.heappush(arrivals, (at_b + half, a))
            t += 1e-5
        else:
            nxt = [arrivals[0][0]] if arrivals else []
            if burst is not None and next_seq - isn_a - 1 + mss_bytes > written:
                nxt.append(next_write)
            t = min(nxt) if nxt else t + 1e-3
    rows.sort(key=lambda r: r["t"])
    return _table(rows)


def _table(rows):
    n = len(rows)
    t_ns = np.array([int(round(r["t"] * 1e9)) + 1_700_000_000 * 10**9 for r in rows], dtype=np.int64)
    flags = np.array([r["flags"] for r in rows], dtype=np.uint16)
    cols = {name: np.zeros(n, dtype="object" if dt == "category" else dt) for name, dt in COLUMNS.items()}
    cols.update(
        frame_index=np.arange(n, dtype=np.int64), timestamp_ns=t_ns, timestamp_s=t_ns / 1e9,
        wire_bytes=np.array([54 + r["payload"] for r in rows]), captured_bytes=np.full(n, 54),
        ip_version=np.full(n, 4), tunnel=np.array([""] * n, dtype=object),
        src_addr=np.array([r["src"][0] for r in rows], dtype=object),
        dst_addr=np.array([r["dst"][0] for r in rows], dtype=object), ip_id=np.arange(n) % 65536,
        src_port=np.array([r["src"][1] for r in rows]), dst_port=np.array([r["dst"][1] for r in rows]),
        seq=np.array([r["seq"] % (1 << 32) for r in rows]), ack=np.array([r["ack"] % (1 << 32) for r in rows]),
        flags=flags, syn=(flags & 0x02) > 0, ack_flag=(flags & 0x10) > 0, fin=(flags & 0x01) > 0,
        rst=(flags & 0x04) > 0, psh=(flags & 0x08) > 0, window=np.array([min(r["window"], 65535) for r in rows]),
        tcp_header_bytes=np.full(n, 32), payload_bytes=np.array([r["payload"] for r in rows]),
        mss=np.where((flags & 0x02) > 0, 1000, -1), window_scale=np.array([r["ws"] for r in rows]),
        has_timestamps=np.array([r["tsval"] > 0 for r in rows]), tsval=np.array([r["tsval"] for r in rows]),
        mptcp_subtype=np.full(n, -1), mptcp_version=np.full(n, -1),
    )
    return conform(cols)
