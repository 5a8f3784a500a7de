"""A tiny event-driven sender/receiver written to a pcap with dpkt: a trace whose loss events,
timeouts, RTT, delayed-ACK factor and receiver window are known by construction.

Sender: fixed window of ``window_segments`` full segments, no congestion control; third
duplicate ACK -> retransmit the head once; RTO (``rto_s`` after the head's last
transmission) -> go back N from the head. Receiver: cumulative ACK every second
in-order segment, immediately on out-of-order data (duplicate ACK) and when a gap fills.
The capture point is the sender: a segment is seen when sent, an ACK when it arrives.
"""

from __future__ import annotations

import heapq
import struct

import dpkt

MSS = 1448
SRC, DST = "10.9.0.1", "10.9.0.2"
SPORT, DPORT = 40000, 80


def _tcp_opts(ts_val: int, ts_ecr: int) -> bytes:
    return b"\x01\x01\x08\x0a" + struct.pack("!II", ts_val, ts_ecr)


def _frame(src, dst, sport, dport, seq, ack, flags, win, payload_len, opts=b"", ip_id=0):
    tcp = dpkt.tcp.TCP(sport=sport, dport=dport, seq=seq & 0xFFFFFFFF, ack=ack & 0xFFFFFFFF, flags=flags, win=win,
                       opts=opts)
    tcp.off = (20 + len(opts)) // 4
    tcp.data = bytes(payload_len)
    ip = dpkt.ip.IP(src=bytes(map(int, src.split("."))), dst=bytes(map(int, dst.split("."))), p=6, ttl=64, id=ip_id,
                    data=tcp)
    ip.len = len(ip)
    eth = dpkt.ethernet.Ethernet(src=b"\x02" * 6, dst=b"\x04" * 6, type=0x0800, data=ip)
    return bytes(eth)


def simulate(path, *, n_segments=400, window_segments=10, rtt_s=0.05, rto_s=0.4, drop=(), rwnd_raw=500,
             wscale=7, gap_s=0.001):
    """Write the trace to ``path``; return what is known (events, timeouts, T0, RTT, b, W_max)."""
    isn_s, isn_r = 1000, 900000
    frames = []
    t = 0.0

    ids = iter(range(1, 1 << 16))

    def emit(tt, *args, **kw):
        frames.append((tt, _frame(*args, ip_id=next(ids), **kw)))

    syn_opts = b"\x02\x04" + struct.pack("!H", 1460) + b"\x03\x03" + bytes([wscale]) + b"\x01"
    emit(t, SRC, DST, SPORT, DPORT, isn_s, 0, dpkt.tcp.TH_SYN, 64240, 0, syn_opts + b"\x00\x00\x00\x00")
    emit(t + rtt_s, DST, SRC, DPORT, SPORT, isn_r, isn_s + 1, dpkt.tcp.TH_SYN | dpkt.tcp.TH_ACK, 65160, 0,
         syn_opts + b"\x00\x00\x00\x00")
    t = t + rtt_s
    base = isn_s + 1
    drop = set(drop)
    sent_once: set[int] = set()
    events = []  # (time, kind, data): kind "arrive" (segment index at receiver) or "ack" (ack value at sender)
    received: set[int] = set()
    rcv_next = 0  # next in-order segment index expected
    pending_inorder = 0
    snd_una = 0
    snd_nxt = 0
    last_tx = {}
    dupacks = 0
    fast_done_for = -1
    now = t
    next_send = now
    rto_deadline = None
    known = {"fast_retransmits": 0, "timeouts": 0, "t0_s": rto_s}

    def send(i, tt):
        nonlocal snd_nxt
        emit(tt, SRC, DST, SPORT, DPORT, base + i * MSS, isn_r + 1, dpkt.tcp.TH_ACK, 502, MSS, _tcp_opts(1 + int(tt * 1000), 0))
        last_tx[i] = tt
        first = i not in sent_once
        sent_once.add(i)
        if not (first and i in drop):
            heapq.heappush(events, (tt + rtt_s / 2, 0, "arrive", i))

    while snd_una < n_segments:
        # send as much as the window allows
        while snd_nxt < n_segments and snd_nxt - snd_una < window_segments:
            next_send = max(next_send, now)
            send(snd_nxt, next_send)
            if rto_deadline is None:
                rto_deadline = last_tx[snd_una] + rto_s
            snd_nxt += 1
            next_send += gap_s
        if not events or (rto_deadline is not None and events[0][0] > rto_deadline):
            # retransmission timeout: go back N from the head
            now = rto_deadline
            known["timeouts"] += 1
            snd_nxt = snd_una
            send(snd_nxt, now)
            snd_nxt += 1
            next_send = now + gap_s
            rto_deadline = now + 2 * rto_s
            continue
        tt, _, kind, val = heapq.heappop(events)
        now = tt
        if kind == "arrive":
            received.add(val)
            if val == rcv_next:
                while rcv_next in received:
                    rcv_next += 1
                pending_inorder += 1
                if pending_inorder >= 2 or rcv_next - 1 != val:  # every 2nd segment, or a filled gap
                    pending_inorder = 0
                    heapq.heappush(events, (tt + rtt_s / 2, 1, "ack", rcv_next))
                else:
                    heapq.heappush(events, (tt + 0.04, 2, "delack", rcv_next))  # delayed-ACK timer
            elif val > rcv_next:
                heapq.heappush(events, (tt + rtt_s / 2, 1, "ack", rcv_next))  # duplicate ACK
        elif kind == "delack":
            if pending_inorder and rcv_next == val:
                pending_inorder = 0
                heapq.heappush(events, (tt + rtt_s / 2, 1, "ack", rcv_next))
        else:
            emit(tt, DST, SRC, DPORT, SPORT, isn_r + 1, base + val * MSS, dpkt.tcp.TH_ACK, rwnd_raw, 0,
                 _tcp_opts(1 + int(tt * 1000), 1))
            if val > snd_una:
                snd_una = val
                dupacks = 0
                rto_deadline = last_tx[snd_una] + rto_s if snd_una < snd_nxt else None
            elif val == snd_una and snd_una < snd_nxt:
                dupacks += 1
                if dupacks == 3 and fast_done_for != snd_una:
                    fast_done_for = snd_una
                    known["fast_retransmits"] += 1
                    send(snd_una, tt)
                    rto_deadline = tt + rto_s
        if snd_una >= n_segments:
            break
    frames.sort(key=lambda f: f[0])
    with open(path, "wb") as fh:
        w = dpkt.pcap.Writer(fh, snaplen=128, nano=True)
        for tt, buf in frames:
            w.writepkt(buf[:128], ts=1_700_000_000 + tt)
    known.update(rtt_s=rtt_s, b=2.0, w_max_bytes=rwnd_raw << wscale, mss=MSS)
    return known
