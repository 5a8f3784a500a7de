"""Random connections of three more families, analysed as tshark analyses them (a differential test).

test_random_transfers_vs_tshark.py covers one sender's data; these families, each over 30 seeds, add:

1. *bidirectional*: both endpoints send data (ACKs piggybacked on data, losses and retransmissions in both
   directions, duplicate ACKs that carry data or not, a receive window that sometimes changes), captured at
   the client: its segments may be lost after the capture point, the server's before it;
2. *reuse*: several connections in sequence on one 4-tuple (closed by FIN exchanges or RSTs, a new SYN with a
   new ISN soon after, while one side is still in TIME_WAIT, or much later; SYNs sent twice, a SYN refused
   by a RST and tried again with a new ISN); besides compare_analysis, our ``connection_id`` must split the
   frames into the groups tshark's ``tcp.stream`` does;
3. *options*: window scaling, SACK and timestamps negotiated in the handshake, a one-way transfer captured at
   the sender into a small scaled receive window (segments that fill it: "window full"; a receiver that stops
   reading: zero windows, window updates, one-byte zero-window probes or Linux's probes at the last
   acknowledged byte minus one), duplicate ACKs carrying SACK blocks and the sender's retransmissions of the holes.

Each frame is one a plausible TCP stack could send at that point (one simulated endpoint per side); a third of
the ISNs are close enough to 2^32 that the sequence numbers wrap. corpus_check.compare_analysis compares every
per-packet class and RTT sample with tshark's ``tcp.analysis`` fields; all 90 connections agree.

Each family also runs with ``capture_drop`` 5 % (the fraction of frames the capture misses, as a loaded tcpdump
does). Before the fixes that came with this module, about a third of the seeds disagreed with tshark 4.0.17 at
2 %, in the classes kept at the end of this module as minimal reproducers: Wireshark 4.0.17's "ACKed unseen
segment" flags every ACK over a new hole; its duplicate-ACK counter (a guint32 parked at -1 by that test)
makes a retransmission "fast" without duplicate ACKs, or restarts the count at #1; its initial RTT ends at the
first ACK after a SYN, SYN/ACK or not; and it never calls a segment of more than one byte that starts one below
the next sequence number a retransmission; its keep-alive is one below the next sequence number a pure ACK
sets too; it reads sequence number 0 as "not set" (a RST refusing a SYN has it). Its spurious-retransmission
test reads only the peer's last acknowledgment and the payload's end without a FIN (``SPURIOUS_*``: a first copy
whose original the capture missed, a zero-window probe; found when the corpus's class 3 was narrowed to what it
argues). At 10-20 % capture drop the families found two more: the window scale 4.0.17 knows with half a
handshake (``WINDOW_FULL_*``), a SYN sent again before any SYN/ACK, which sets its next sequence number anew
(``SYN_AGAIN_*``), the out-of-order test's clock, which a pure ACK that ran ahead sets too, and an ACK beyond a
peer that sent only pure ACKs. These are now analysed as
tshark analyses them (``AGREED``), and so are 0 as the next sequence number of the retransmission and
previous-segment tests and as the peer's acknowledgment number of the spurious test ("not set": a segment ending
exactly at 2^32; the next packet sets it whatever its end) and a RST whose sequence number ran ahead of the data,
which sets 4.0.17's next sequence number as any packet does. No class found so far still differs.
"""

from __future__ import annotations

import random
import re
import shutil
import struct
import warnings

import numpy as np
import pytest
from corpus_check import compare_analysis, compare_tcptrace, tshark_analysis
from trace_fixtures import needs_tshark
from trace_synth import ether, ipv4, tcp, write_pcap

from tcpmodels.traces import TraceWarning, annotate, read_pcap

SYN, ACK, FIN, RST, PSH = 0x02, 0x10, 0x01, 0x04, 0x08
C, S = ("10.0.0.1", 40000), ("10.0.0.2", 80)
SEEDS = range(30)
M32 = 2**32


# ------------------------------------------------------------------------------------------------ options
def opt_mss(mss: int) -> bytes:
    return struct.pack("!BBH", 2, 4, mss)


def opt_ws(shift: int) -> bytes:
    return b"\x01" + struct.pack("!BBB", 3, 3, shift)


def opt_ts(val: int, ecr: int) -> bytes:
    return b"\x01\x01" + struct.pack("!BBII", 8, 10, val % M32, ecr % M32)


def opt_sack(blocks: list[tuple[int, int]]) -> bytes:
    if not blocks:
        return b""
    return b"\x01\x01" + struct.pack("!BB", 5, 2 + 8 * len(blocks)) + b"".join(
        struct.pack("!II", a % M32, b % M32) for a, b in blocks)


class _Capture:
    """Frames as the client's capture point sees them (timestamps in ns)."""

    def __init__(self, rng: random.Random, drop=0.0):
        self.rng, self.t, self.ip_id, self.frames = rng, 1_700_000_000_000_000_000, {C: 1, S: 5000}, []
        self.drop = drop  # the fraction of frames the capture misses [-]

    def advance(self, dt_ms: float) -> None:
        self.t += int(dt_ms * 1e6)

    def emit(self, src, dst, seq, ack, flags, payload=0, win=65535, options=b"") -> None:
        self.ip_id[src] += 1
        frame = ether(ipv4(tcp(src[1], dst[1], seq % M32, ack % M32, flags, window=win, options=options,
                               payload=payload), src=src[0], dst=dst[0], ip_id=self.ip_id[src] % 65536))
        if not (self.drop and self.rng.random() < self.drop):
            self.frames.append((self.t, frame))


# ------------------------------------------------------------------------------------------------ endpoints
class _Side:
    """One TCP endpoint: what it sends (sequence space), what it has received, its receive buffer."""

    def __init__(self, addr, isn: int, data_bytes: int, mss: int, buf_bytes: int, shift: int, ts: bool,
                 sack: bool, clock0: int):
        self.addr, self.isn, self.mss = addr, isn, mss
        self.una = self.nxt = isn + 1
        self.end = isn + 1 + data_bytes
        self.sent: dict[int, int] = {}  # original segment start -> size
        self.rcv = 0  # next byte expected from the peer (set after the handshake)
        self.held: dict[int, int] = {}  # peer's segments beyond a hole
        self.unread = 0  # bytes received in order, not yet read by the application
        self.buf, self.shift, self.peer_shift = buf_bytes, shift, 0
        self.peer_ack, self.peer_win = 0, 65535
        self.dups, self.recover, self.sacked, self.retx = 0, None, set(), set()
        self.must_ack = False  # an immediate ACK is owed (out of order, hole filled, duplicate data)
        self.owed = 0  # in-order segments received since the last ACK sent (delayed ACK)
        self.ts, self.sack, self.clock0, self.ts_recent = ts, sack, clock0, 0
        self.last_adv = None

    def adv_raw(self) -> int:
        return max(0, min(65535, (self.buf - self.unread) >> self.shift))

    def usable(self) -> int:
        return self.peer_ack + self.peer_win - self.nxt


class _Conn:
    """A connection between C (at the capture point) and S; ``loss_*`` are per-segment loss probabilities."""

    def __init__(self, rng: random.Random, cap: _Capture, c: _Side, s: _Side, loss_c: float, loss_s: float,
                 rtt_ms: float):
        self.r, self.cap, self.sides, self.loss = rng, cap, {C: c, S: s}, {C: loss_c, S: loss_s}
        self.rtt_ms = rtt_ms

    def peer(self, x: _Side) -> _Side:
        return self.sides[S] if x.addr == C else self.sides[C]

    def _options(self, x: _Side, flags: int, sack_blocks=True) -> bytes:
        o = b""
        if x.ts:
            o += opt_ts(self.cap.t // 1_000_000 - x.clock0, x.ts_recent)
        if x.sack and sack_blocks and x.held and not flags & SYN:
            o += opt_sack(self._blocks(x)[:3])
        return o

    def _blocks(self, x: _Side) -> list[tuple[int, int]]:
        runs: list[list[int]] = []
        for a in sorted(x.held):
            b = a + x.held[a]
            if runs and a <= runs[-1][1]:
                runs[-1][1] = max(runs[-1][1], b)
            else:
                runs.append([a, b])
        return [tuple(ab) for ab in reversed(runs)]

    def send(self, x: _Side, seq: int, size: int, flags: int = ACK, dt_ms: float | None = None) -> None:
        """``x`` sends a segment: captured if sent by C or not lost before the capture point; delivered unless
        lost (after the capture point for C's, before it for S's)."""
        y = self.peer(x)
        if dt_ms is None:
            dt_ms = self.r.uniform(0.02, 0.5) if x.addr == C else self.r.uniform(0.3, 2.0)
        self.cap.advance(dt_ms)
        lost = self.r.random() < self.loss[x.addr] * (1 if size > 0 or flags & (SYN | FIN) else 0.5)
        win = x.adv_raw()
        if size == 0 and x.last_adv == 0 and win > 0:
            # the ACK that opens a closed window is never lost here: when it is, the sender's one-byte probe is
            # taken and Wireshark 4.0.17 differs (ACKED_UNSEEN_AFTER_ACCEPTED_PROBE below)
            lost = False
        ack = x.rcv if flags & ACK else 0
        if size and not flags & (SYN | FIN):
            flags |= PSH if self.r.random() < 0.3 else 0
        captured = x.addr == C or not lost
        if captured:
            self.cap.emit(x.addr, y.addr, seq, ack, flags, payload=size, win=win, options=self._options(x, flags))
        if flags & ACK:
            x.must_ack, x.owed, x.last_adv = False, 0, win
        if not lost:
            self.receive(y, x, seq, size, flags, ack, win)

    def receive(self, y: _Side, x: _Side, seq: int, size: int, flags: int, ack: int, win: int) -> None:
        """``y`` receives ``x``'s segment."""
        if x.ts:
            y.ts_recent = self.cap.t // 1_000_000 - x.clock0
        if flags & ACK:
            new_win = win << y.peer_shift
            if ack > y.nxt:  # a window probe's byte accepted
                y.nxt = ack
            if ack > y.una:
                y.una, y.dups = ack, 0
                y.sacked = {s for s in y.sacked if s >= ack}
            elif ack == y.una and y.una < y.nxt and size == 0 and new_win == y.peer_win and not flags & (SYN | FIN):
                y.dups += 1
            y.peer_ack, y.peer_win = max(y.peer_ack, ack), new_win
        if size > 0 or flags & FIN:
            if seq == y.rcv:
                if size > (y.buf - y.unread) >> y.shift << y.shift:  # beyond the window: dropped, answered
                    y.must_ack = True
                    return
                y.rcv += size + (1 if flags & FIN else 0)
                y.unread += size
                hole_filled = bool(y.held)
                while y.rcv in y.held:
                    n = y.held.pop(y.rcv)
                    y.rcv += n
                    y.unread += n
                y.held = {a: n for a, n in y.held.items() if a + n > y.rcv}
                y.owed += 1
                if hole_filled or y.owed >= 2 or flags & (PSH | FIN) or self.r.random() < 0.3:
                    y.must_ack = True
            elif seq > y.rcv:
                y.held[seq] = size
                y.must_ack = True
            else:
                y.must_ack = True  # data already received

    def sack_holes(self, x: _Side) -> list[int]:
        """Starts of x's sent segments not acknowledged, not SACKed, below the highest SACKed byte."""
        y = self.peer(x)
        blocks = self._blocks(y) if x.sack else []
        top = max((b for _, b in blocks), default=x.una)
        return [s for s in sorted(x.sent) if x.una <= s < top and not any(a <= s < b for a, b in blocks)]

    def step(self, allow_new=True) -> bool:
        """One event; False when nothing is left to do."""
        r = self.r
        c, s = self.sides[C], self.sides[S]
        for x in (c, s):  # immediate ACKs first, with new data piggybacked when there is some
            if x.must_ack:
                size = min(x.mss, x.end - x.nxt, x.usable())
                if allow_new and size > 0 and r.random() < 0.5:
                    self.new_data(x, size)
                else:
                    self.send(x, x.nxt, 0)
                return True
        options = []
        for x in (c, s):
            room = min(x.mss, x.end - x.nxt, x.usable())
            if allow_new and room > 0 and x.nxt - x.una < 10 * x.mss and (room == x.mss or room == x.end - x.nxt
                                                                          or r.random() < 0.5):
                options.append(("new", x))
            if x.una < x.nxt and x.dups >= 3 and x.recover is None:
                options += [("fast", x)] * 3
            if x.owed:
                options.append(("delack", x))
            if x.unread and r.random() < 0.5:
                options.append(("read", x))
            if x.recover is not None and [h for h in (self.sack_holes(x) or [x.una]) if h not in x.retx
                                          and h < x.nxt]:
                options.append(("partial", x))
        if not options:
            for x in (c, s):
                room = min(x.mss, x.end - x.nxt, x.usable())
                if allow_new and room > 0 and x.nxt - x.una < 10 * x.mss:
                    self.new_data(x, room)
                    return True
            for x in (c, s):  # a timeout: the first unacknowledged segment again (or a window probe)
                if x.una < x.nxt:
                    self.retransmit(x, x.una, dt=r.choice([200, 400, 1000]))
                    x.recover, x.dups, x.retx = x.nxt, 0, {x.una}
                    return True
            for x in (c, s):
                if x.nxt < x.end and x.usable() <= 0:
                    self.window_probe(x)
                    return True
            return False
        kind, x = r.choice(options)
        if kind == "new":
            self.new_data(x, min(x.mss, x.end - x.nxt, x.usable()))
        elif kind == "fast":
            x.recover, x.retx = x.nxt, {x.una}
            self.retransmit(x, x.una)
        elif kind == "partial":
            hole = [h for h in (self.sack_holes(x) or [x.una]) if h not in x.retx and h < x.nxt][0]
            x.retx.add(hole)
            self.retransmit(x, hole)
        elif kind == "delack":
            self.send(x, x.nxt, 0, dt_ms=r.uniform(20, 40) if x.addr == C else None)
        elif kind == "read":
            before = x.adv_raw()
            x.unread -= r.randrange(1, x.unread + 1)
            after = x.adv_raw()
            if after > before and (before == 0 or (after - before) << x.shift >= 2 * x.mss):
                self.send(x, x.nxt, 0)  # a window update
        for x in (c, s):
            if x.recover is not None and x.una >= x.recover:
                x.recover, x.retx = None, set()
        return True

    def new_data(self, x: _Side, size: int) -> None:
        seq = x.nxt
        x.sent[seq] = size
        x.nxt += size
        self.send(x, seq, size)

    def retransmit(self, x: _Side, seq: int, dt=None) -> None:
        size = x.sent.get(seq) or min(x.mss, x.nxt - seq)
        self.send(x, seq, min(size, x.nxt - seq), dt_ms=dt)

    def window_probe(self, x: _Side) -> None:
        """A probe of the peer's closed window: one new byte (BSD, Windows) or no byte at una - 1 (Linux)."""
        dt = self.r.choice([200, 400, 800])
        if self.r.random() < 0.5 and x.una == x.nxt:
            self.send(x, x.una - 1, 0, dt_ms=dt)
        else:
            self.send(x, x.nxt, 1, dt_ms=dt)


def _sides(r: random.Random, data_c: int, data_s: int, mss: int, buf: int, shift_c: int, shift_s: int, ts: bool,
           sack: bool, isn_c=None):
    def isn(data_bytes):  # a third of the ISNs so close to 2^32 that the sequence numbers wrap
        return (M32 - 2 - r.randrange(data_bytes + 2)) if r.random() < 0.33 else r.randrange(M32)

    isn_c = isn(data_c) if isn_c is None else isn_c
    c = _Side(C, isn_c, data_c, mss, buf, shift_c, ts, sack, r.randrange(10**6))
    s = _Side(S, isn(data_s), data_s, mss, buf, shift_s, ts, sack, r.randrange(10**6))
    return c, s


def handshake(conn: _Conn, syn_twice=False, scale=False, synack_twice=False, offered=(True, True)) -> None:
    """SYN (sent twice if asked), SYN/ACK, ACK; options as the sides have them. With ``scale`` the SYN of each
    side in ``offered`` (client, server) carries the window scale option, and scaling is used if both do. With
    ``synack_twice`` the ACK is lost after the capture point and the server sends its SYN/ACK again."""
    c, s, cap, r = conn.sides[C], conn.sides[S], conn.cap, conn.r
    ws = {C: scale and offered[0], S: scale and offered[1]}
    scale = scale and all(offered)

    def syn_opts(x):
        return opt_mss(x.mss) + (b"\x01\x01\x04\x02" if x.sack else b"") + (
            opt_ts(cap.t // 1_000_000 - x.clock0, x.ts_recent) if x.ts else b"") + (opt_ws(x.shift) if ws[x.addr] else b"")

    for k in range(2 if syn_twice else 1):
        cap.advance(1000 if k else r.uniform(1, 50))
        cap.emit(C, S, c.isn, 0, SYN, win=min(65535, c.buf), options=syn_opts(c))
    c.nxt = c.una = c.isn + 1
    cap.advance(conn.rtt_ms)
    s.rcv = c.isn + 1
    s.ts_recent = cap.t // 1_000_000 - c.clock0
    cap.emit(S, C, s.isn, s.rcv, SYN | ACK, win=min(65535, s.buf), options=syn_opts(s))
    c.rcv = s.isn + 1
    c.ts_recent = cap.t // 1_000_000 - s.clock0
    if scale:
        c.peer_shift, s.peer_shift = s.shift, c.shift
    else:
        c.shift = s.shift = 0
    c.peer_ack, s.peer_ack = s.una, c.una
    c.peer_win, s.peer_win = min(65535, s.buf), min(65535, c.buf)
    if synack_twice:
        cap.advance(0.05)
        cap.emit(C, S, c.nxt, c.rcv, ACK, win=c.adv_raw() if scale else min(65535, c.buf), options=conn._options(c, ACK))
        cap.advance(1000)
        cap.emit(S, C, s.isn, s.rcv, SYN | ACK, win=min(65535, s.buf), options=syn_opts(s))
    conn.send(c, c.nxt, 0, dt_ms=0.05)


def close(conn: _Conn, how: str) -> None:
    """End the connection: ``fin_c`` / ``fin_s`` (that side's FIN first), ``rst_c`` / ``rst_s``."""
    c, s, cap = conn.sides[C], conn.sides[S], conn.cap
    first, second = (c, s) if how.endswith("_c") else (s, c)
    if how.startswith("rst"):
        conn.cap.advance(conn.r.uniform(1, 30))
        cap.emit(first.addr, second.addr, first.nxt, first.rcv, RST | ACK, win=0)
        return
    conn.loss = {C: 0.0, S: 0.0}
    conn.send(first, first.nxt, 0, FIN | ACK)
    first.nxt += 1
    conn.send(second, second.nxt, 0, FIN | ACK)
    second.nxt += 1
    conn.send(first, first.nxt, 0)


def run(conn: _Conn, max_steps=3000) -> None:
    for _ in range(max_steps):
        if not conn.step():
            break
    for x in conn.sides.values():
        assert x.una == x.end, "the simulated transfer did not finish"
        if x.owed or x.must_ack:
            conn.send(x, x.nxt, 0)


# ------------------------------------------------------------------------------------------------ families
def bidirectional(seed: int, capture_drop=0.0) -> list[tuple[int, bytes]]:
    """Family 1 (module docstring)."""
    r = random.Random(seed)
    cap = _Capture(r, capture_drop)
    mss = r.choice([100, 536, 1448])
    scale = r.random() < 0.5
    c, s = _sides(r, r.randrange(1, 40) * mss + r.randrange(mss), r.randrange(1, 40) * mss + r.randrange(mss), mss,
                  65535, r.randrange(0, 3), r.randrange(0, 3), r.random() < 0.5, r.random() < 0.5)
    conn = _Conn(r, cap, c, s, r.uniform(0, 0.1), r.uniform(0, 0.1), r.uniform(5, 30))
    handshake(conn, scale=scale)
    for _ in range(3000):
        if r.random() < 0.02:  # the receive buffer grows or shrinks a little (autotuning)
            x = r.choice([c, s])
            x.buf = r.choice([65535, 64240, 65160])
        if not conn.step():
            break
    run(conn)
    close(conn, r.choice(["fin_c", "fin_s"]))
    return cap.frames


def options_transfer(seed: int, capture_drop=0.0) -> list[tuple[int, bytes]]:
    """Family 3 (module docstring)."""
    r = random.Random(seed)
    cap = _Capture(r, capture_drop)
    mss = r.choice([536, 1000, 1448])
    shift = r.randrange(0, 8)
    buf = r.randrange(3 * mss, 12 * mss)
    c, s = _sides(r, r.randrange(10, 80) * mss, 0, mss, 65535 << 2, 2, shift, r.random() < 0.8, r.random() < 0.8)
    s.buf = buf
    conn = _Conn(r, cap, c, s, r.uniform(0, 0.08), r.choice([0.0, 0.05]), r.uniform(5, 30))
    handshake(conn, scale=True, offered=r.choice([(True, True)] * 4 + [(True, False), (False, True)]))
    slow = r.random() < 0.6  # an application that reads slowly: the window closes

    for _ in range(5000):
        if not slow and s.unread and r.random() < 0.7:
            s.unread = 0 if r.random() < 0.5 else s.unread // 2
            if s.adv_raw() > (s.last_adv or 0) and (s.last_adv == 0 or r.random() < 0.5):  # a closed window reopened
                conn.send(s, s.nxt, 0)
        if not conn.step():
            break
        if s.unread and not s.must_ack and not s.owed and r.random() < 0.1:  # it reads at last
            before = s.adv_raw()
            s.unread = 0
            if s.adv_raw() != before:
                conn.send(s, s.nxt, 0)
    run(conn)
    close(conn, "fin_c")
    return cap.frames


def reused_tuple(seed: int, capture_drop=0.0) -> list[tuple[int, bytes]]:
    """Family 2 (module docstring)."""
    r = random.Random(seed)
    cap = _Capture(r, capture_drop)
    isn_c = old = old_rcv = None
    for k in range(r.randrange(2, 5)):
        mss = r.choice([536, 1448])
        if k and r.random() < 0.2:  # a SYN refused by a RST, tried again with a new ISN
            cap.advance(r.uniform(100, 3000))
            isn = r.randrange(M32)
            cap.emit(C, S, isn, 0, SYN, options=opt_mss(mss))
            cap.advance(r.uniform(5, 30))
            cap.emit(S, C, 0, isn + 1, RST | ACK, win=0)
        refused = old is not None and r.random() < 0.3
        if refused:
            isn_c = (old_rcv - r.randrange(1, 2**30)) % M32
        c, s = _sides(r, r.randrange(0, 8) * mss + r.randrange(mss), r.randrange(0, 20) * mss + r.randrange(mss),
                      mss, 65535, 0, 0, r.random() < 0.5, False, isn_c=isn_c)
        conn = _Conn(r, cap, c, s, r.uniform(0, 0.05), r.uniform(0, 0.05), r.uniform(5, 30))
        if refused:
            # a SYN the old connection's TIME_WAIT refuses (its ISN not beyond the old sequence numbers): the
            # server answers with the old connection's ACK, the client resets that, and its SYN goes again
            cap.emit(C, S, c.isn, 0, SYN, options=opt_mss(mss))
            cap.advance(conn.rtt_ms)
            cap.emit(S, C, old.nxt, old_rcv, ACK, win=old.adv_raw())
            cap.advance(0.05)
            cap.emit(C, S, old_rcv, 0, RST, win=0)
            cap.advance(1000 - conn.rtt_ms)
        handshake(conn, syn_twice=r.random() < 0.25, synack_twice=r.random() < 0.2)
        run(conn)
        how = r.choice(["fin_c", "fin_s", "rst_c", "rst_s"])
        close(conn, how)
        gap = r.choice([r.uniform(1, 100), r.uniform(1000, 60000)])  # within TIME_WAIT, or well after
        cap.advance(gap)
        # a SYN in TIME_WAIT is accepted when its ISN is beyond the old connection's last sequence number
        isn_c = (c.nxt + r.randrange(1, 2**20)) % M32 if how.startswith("fin") and r.random() < 0.5 else None
        old, old_rcv = (s, s.rcv) if how == "fin_s" and isn_c is None else (None, None)
    return cap.frames


# ------------------------------------------------------------------------------------------------ checks
def analyse(path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TraceWarning)
        packets = read_pcap(path)
    ta = tshark_analysis(path)
    return packets, ta


def partition_diffs(packets, ta) -> list[str]:
    """Where our connection_id and tshark's tcp.stream split the frames differently."""
    ours = annotate(packets)["connection_id"].to_numpy()
    theirs = ta.reindex(packets["frame_index"].to_numpy())["stream"].to_numpy()
    pairs = sorted(set(zip(ours.tolist(), theirs.tolist())))
    o = [p[0] for p in pairs]
    t = [p[1] for p in pairs]
    bad = [p for p in pairs if o.count(p[0]) > 1 or t.count(p[1]) > 1]
    if not bad:
        return []
    frames = packets["frame_index"].to_numpy() + 1
    first = {p: int(frames[(ours == p[0]) & (theirs == p[1])][0]) for p in bad}
    return [f"(ours, tshark) {p} from frame {first[p]}" for p in bad]


FAMILIES = {"bidirectional": bidirectional, "reuse": reused_tuple, "options": options_transfer}


#: Fractions of frames the capture misses (as a loaded tcpdump does): none, and 5 % (the classes of ACKed-unseen
#: segments, parked duplicate-ACK counters and initial RTTs after an early ACK appear only with drops).
CAPTURE_DROPS = (0.0, 0.05)


def _on_client_port(frame: bytes, port: int) -> bytes:
    """The frame with C's port (either direction) replaced by ``port``: Ethernet, IPv4 without options, TCP."""
    assert frame[12:14] == b"\x08\x00" and frame[14] == 0x45, "an Ethernet frame of IPv4 without options"
    sport, dport = struct.unpack_from("!HH", frame, 34)
    ports = (port if sport == C[1] else sport, port if dport == C[1] else dport)
    return frame[:34] + struct.pack("!HH", *ports) + frame[38:]


def bundle(family: str, capture_drop: float) -> tuple[list[tuple[int, bytes]], list[tuple[int, int]]]:
    """Every seed of ``family`` in one capture (one tshark run), seed s on C's port 20000 + s, 1000 s apart.

    Returns the frames and, per seed, its first frame and the frame after its last (0-based).
    """
    frames, spans = [], []
    for seed in SEEDS:
        first = len(frames)
        frames += [(t + seed * 1_000_000_000_000, _on_client_port(frame, 20000 + seed))
                   for t, frame in FAMILIES[family](seed, capture_drop=capture_drop)]
        spans.append((first, len(frames)))
    return frames, spans


def _seeds_of(diffs: dict, spans: list[tuple[int, int]]) -> list[int]:
    """The seeds whose frames (1-based numbers in the diff messages) the diffs name."""
    named = {int(n) for v in diffs.values() for line in v for n in re.findall(r"\d+", line.split(":", 1)[-1])}
    return [seed for seed, (lo, hi) in zip(SEEDS, spans) if any(lo < n <= hi for n in named)]


@needs_tshark
@pytest.mark.parametrize("capture_drop", CAPTURE_DROPS)
@pytest.mark.parametrize("family", list(FAMILIES))
def test_random_family_is_analysed_as_tshark_analyses_it(tmp_path, family, capture_drop):
    path = tmp_path / f"{family}_drop{capture_drop:g}.pcap"
    frames, spans = bundle(family, capture_drop)
    write_pcap(path, frames, nano=True)
    packets, ta = analyse(path)
    diffs = compare_analysis(packets, ta, path.name)
    split = partition_diffs(packets, ta)
    if split:
        diffs["connections"] = split
    assert diffs == {}, f"seeds {_seeds_of(diffs, spans)}: {diffs}"
    assert np.isfinite(ta["stream"].to_numpy()).all()
    assert ta["stream"].nunique() >= len(SEEDS)


# ------------------------------------------------------------------------------------------------ defects found
# Minimal captures on which we differ from tshark 4.0.17 (each a plausible capture; the rules quoted are those of
# epan/dissectors/packet-tcp.c, tcp_analyze_sequence_number, in the Wireshark 4.0.17 source). Client C at
# ISN 1000, server S at ISN 5000 unless said; rows are (ms since the previous frame, sender, seq, ack, flags,
# payload bytes, window).
A, B = 1000, 5000
HANDSHAKE = [(0, C, A, 0, SYN, 0, 65535), (10, S, B, A + 1, SYN | ACK, 0, 65535), (10, C, A + 1, B + 1, ACK, 0, 65535)]


def _rows_to_frames(rows) -> list[tuple[int, bytes]]:
    """Frames of rows ``(ms since the previous, sender, seq, ack, flags, payload bytes, window[, options])``."""
    t, ids, out = 1_700_000_000_000_000_000, {C: 1, S: 1}, []
    for dt_ms, src, seq, ack, flags, size, win, *options in rows:
        t += int(dt_ms * 1e6)
        ids[src] += 1
        dst = S if src == C else C
        out.append((t, ether(ipv4(tcp(src[1], dst[1], seq % M32, ack % M32, flags, window=win, payload=size,
                                      options=options[0] if options else b""),
                                  src=src[0], dst=dst[0], ip_id=ids[src]))))
    return out


#: A hole the capture missed, then another: 4.0.17 flags "ACKed unseen segment" whenever the peer's contiguous
#: mark (maxseqtobeacked) is below the peer's next sequence number -- ``if (LT_SEQ(rev->maxseqtobeacked,
#: rev->nextseq)) { rev->maxseqtobeacked = rev->nextseq; flags |= TCP_A_ACK_LOST_PACKET; }`` -- and consults
#: the duplicate-ACK counter only in the ``else`` case (an ACK beyond everything seen of the peer). We consult it
#: in both, so the ACK over the second hole (frame 8) is tshark's only.
ACKED_UNSEEN_SECOND_HOLE = HANDSHAKE + [
    (1, C, A + 1, B + 1, ACK, 1000, 65535), (1, C, A + 2001, B + 1, ACK, 1000, 65535),  # 1001..2001 not captured
    (10, S, B + 1, A + 3001, ACK, 0, 65535),  # frame 6: ACKed unseen (both)
    (1, C, A + 4001, B + 1, ACK, 1000, 65535),  # 3001..4001 not captured
    (10, S, B + 1, A + 5001, ACK, 0, 65535),  # frame 8: ACKed unseen (tshark only)
    (1, C, A + 5001, B + 1, ACK, 1000, 65535), (10, S, B + 1, A + 6001, ACK, 0, 65535)]

#: The same rule after a zero-window probe the receiver accepted (its window update was lost before the capture
#: point): the probe does not move tshark's next sequence number, so the ACK of the probe byte (frame 7) is
#: "ACKed unseen" (both), the data after it is "previous segment not captured" (both), and the ACK of that data
#: (frame 9) is "ACKed unseen" again for tshark only (the mark 1001 is below the next sequence number 2002).
ACKED_UNSEEN_AFTER_ACCEPTED_PROBE = HANDSHAKE + [
    (1, C, A + 1, B + 1, ACK | PSH, 1000, 65535), (10, S, B + 1, A + 1001, ACK, 0, 0),
    (200, C, A + 1001, B + 1, ACK, 1, 65535),  # zero-window probe
    (10, S, B + 1, A + 1002, ACK, 0, 8192),  # the probe byte taken: the window had opened
    (1, C, A + 1002, B + 1, ACK | PSH, 1000, 65535), (10, S, B + 1, A + 2002, ACK, 0, 8192),
    (1, C, A + 2002, B + 1, ACK | PSH, 1000, 65535), (10, S, B + 1, A + 3002, ACK, 0, 8192),
    (1, C, A + 3002, B + 1, FIN | ACK, 0, 65535), (10, S, B + 1, A + 3003, FIN | ACK, 0, 8192),
    (10, C, A + 3003, B + 2, ACK, 0, 65535)]

#: The duplicate-ACK counter is a guint32 (packet-tcp.h: ``guint32 dupacknum``) that the ACKed-unseen test parks
#: at -1 (``rev->dupacknum = -1``) when an ACK runs beyond everything seen of the peer. While parked (the peer's
#: acknowledgment number unchanged) it is 0xFFFFFFFF, so ``rev->dupacknum >= 2`` holds: C's retransmission of
#: the byte S's last ACK asks for, 5 ms after that ACK (frame 8), is a fast retransmission with no duplicate ACK
#: at all for tshark; ours calls it out-of-order (we count duplicate ACKs since the acknowledgment number changed).
#: (Frame 8 is also "ACKed unseen" for tshark only, by the first rule: S's mark 1 is below its next sequence number.)
FAST_WITH_PARKED_COUNTER = HANDSHAKE + [
    (1, C, A + 1, B + 1, ACK, 1000, 65535),  # lost after the capture point
    (0.1, C, A + 1001, B + 1, ACK, 1000, 65535),
    (1, C, A + 3001, B + 101, ACK, 1000, 65535),  # 2001..3001 and S's 1..101 not captured; parks S's counter
    (10, S, B + 101, A + 1, ACK, 0, 65535),  # S asks for byte 1 (previous segment not captured)
    (5, C, A + 1, B + 101, ACK, 1000, 65535),  # frame 8
    (10, S, B + 101, A + 4001, ACK, 0, 65535)]

#: Parking at -1 also restarts the count: the next duplicate ACK is "#1" (``case -1: dupacknum = 1``), so after
#: S's duplicate ACKs #1 and #2, C's ACK of S data the capture missed (frame 9, beyond everything seen of S)
#: and S's next duplicate ACK (#1 again, frame 11), C's retransmission of byte 1 (frame 12) is out-of-order for
#: tshark (one duplicate ACK) and a fast retransmission for us (three since S's ACK number last changed).
#: (Frame 12 is also "ACKed unseen" for tshark only, by the first rule above.)
DUPACK_COUNT_RESTARTS = HANDSHAKE + [
    (1, C, A + 1, B + 1, ACK, 1000, 65535),  # lost after the capture point
    (0.1, C, A + 1001, B + 1, ACK, 1000, 65535), (0.1, C, A + 2001, B + 1, ACK, 1000, 65535),
    (10, S, B + 1, A + 1, ACK, 0, 65535), (0.1, S, B + 1, A + 1, ACK, 0, 65535),  # duplicate ACKs #1, #2
    (1, C, A + 3001, B + 101, ACK, 1000, 65535),  # acknowledges S's 1..101, not captured
    (1, S, B + 101, A + 1, ACK, 100, 65535),  # previous segment not captured
    (0.1, S, B + 201, A + 1, ACK, 0, 65535),  # duplicate ACK #1 for tshark
    (5, C, A + 1, B + 201, ACK, 1000, 65535),  # frame 12
    (10, S, B + 201, A + 4001, ACK, 0, 65535), (0.1, C, A + 4001, B + 201, FIN | ACK, 0, 65535),
    (10, S, B + 201, A + 4002, FIN | ACK, 0, 65535), (0.1, C, A + 4002, B + 202, ACK, 0, 65535)]

#: Sequence number 0 is tshark's "not set" for the contiguous mark (``if (rev->maxseqtobeacked && GT_SEQ(ack,
#: rev->maxseqtobeacked) ...``): with S's ISN 2^32 - 1 its mark after the SYN/ACK is 0, so no ACK of S's bytes
#: is ever checked. S's FIN is not captured; C's ACK of it (frame 7) is "ACKed unseen" for us, not for tshark.
ISN_ALL_ONES = [
    (0, C, A, 0, SYN, 0, 65535), (10, S, M32 - 1, A + 1, SYN | ACK, 0, 65535), (10, C, A + 1, 0, ACK, 0, 65535),
    (1, C, A + 1, 0, ACK | PSH, 100, 65535), (10, S, 0, A + 101, ACK, 0, 65535),
    (1, C, A + 101, 0, FIN | ACK, 0, 65535), (10, C, A + 102, 1, ACK, 0, 65535)]

#: The same "not set" reading of 0 for the next sequence number (``seq_not_advanced = fwd->nextseq &&
#: LT_SEQ(seq, fwd->nextseq)``): C's ISN is 2^32 - 1001, so its first 1,000 bytes end at sequence number
#: 0 (mod 2^32); sent again after a timeout (frame 5) they are a retransmission for us and nothing for tshark.
#: (The next packet sets it whatever its end: ``|| !fwd->nextseq``; annotation._wireshark_nextseq.)
RETRANSMISSION_ENDING_AT_ZERO = [
    (0, C, M32 - 1001, 0, SYN, 0, 65535), (10, S, B, M32 - 1000, SYN | ACK, 0, 65535),
    (10, C, M32 - 1000, B + 1, ACK, 0, 65535), (1, C, M32 - 1000, B + 1, ACK | PSH, 1000, 65535),
    (300, C, M32 - 1000, B + 1, ACK | PSH, 1000, 65535), (10, S, B + 1, 0, ACK, 0, 65535),
    (1, C, 0, B + 1, ACK | PSH, 500, 65535), (10, S, B + 1, 500, ACK, 0, 65535)]

#: The same rule in S's direction, and the next packet setting the next sequence number whatever its end, below it
#: too: S's ISN is 2^32 - 2001; its first 1,000 bytes were lost before the capture point, its next 1,000 (frame 5)
#: end at 0. Its timer sends the first again (frame 7): no retransmission for tshark (not set), and it sets the
#: next sequence number back to 2^32 - 1001, so S's next data from 0 (frame 9) is "previous segment not captured"
#: there. We called frame 7 a retransmission and frame 9 nothing.
SBIG = M32 - 2001
RETRANSMISSION_AFTER_DATA_ENDING_AT_ZERO = [
    (0, C, A, 0, SYN, 0, 65535), (10, S, SBIG, A + 1, SYN | ACK, 0, 65535), (10, C, A + 1, SBIG + 1, ACK, 0, 65535),
    (1, C, A + 1, SBIG + 1, ACK | PSH, 100, 65535),
    (10, S, SBIG + 1001, A + 101, ACK, 1000, 65535),  # SBIG+1..SBIG+1001 not captured; this one ends at 2^32
    (1, C, A + 101, SBIG + 1, ACK, 0, 65535),
    (200, S, SBIG + 1, A + 101, ACK, 1000, 65535),  # frame 7
    (1, C, A + 101, 0, ACK, 0, 65535),
    (1, S, 0, A + 101, ACK | PSH, 500, 65535),  # frame 9
    (1, C, A + 101, 500, ACK, 0, 65535), (1, C, A + 101, 500, FIN | ACK, 0, 65535),
    (10, S, 500, A + 102, FIN | ACK, 0, 65535), (1, C, A + 102, 501, ACK, 0, 65535)]

#: And for the peer's acknowledgment number in the spurious-retransmission test (``rev->lastack && LE_SEQ(seq +
#: seglen, rev->lastack)``): S's ACK of C's bytes up to 2^32 is 0, so C's 1,000 bytes sent again after it (frame 6)
#: are nothing for tshark (its next sequence number is not set either) and were spurious for us; sent again after
#: S's ACK of 500 (frame 9) they are spurious for both.
SPURIOUS_AFTER_ACK_OF_ZERO = [
    (0, C, M32 - 1001, 0, SYN, 0, 65535), (10, S, B, M32 - 1000, SYN | ACK, 0, 65535),
    (10, C, M32 - 1000, B + 1, ACK, 0, 65535), (1, C, M32 - 1000, B + 1, ACK | PSH, 1000, 65535),
    (10, S, B + 1, 0, ACK, 0, 65535),
    (300, C, M32 - 1000, B + 1, ACK | PSH, 1000, 65535),  # frame 6
    (1, C, 0, B + 1, ACK | PSH, 500, 65535), (10, S, B + 1, 500, ACK, 0, 65535),
    (300, C, M32 - 1000, B + 1, ACK | PSH, 1000, 65535)]  # frame 9

#: 4.0.17 never calls a segment of more than one byte that starts one below the next sequence number a
#: retransmission (``if (seglen > 1 && fwd->nextseq - 1 == seq) seq_not_advanced = FALSE;``, meant for the data
#: after a zero-window probe). A one-byte segment (a keystroke) lost after the capture point and sent again by
#: the retransmission timer together with the two typed since (frame 7, seq 101, 3 bytes; Linux collapses
#: retransmitted segments) is a retransmission for us and nothing for tshark.
RETRANSMISSION_FROM_ONE_BELOW = HANDSHAKE + [
    (1, C, A + 1, B + 1, ACK | PSH, 100, 65535), (10, S, B + 1, A + 101, ACK, 0, 65535),
    (100, C, A + 101, B + 1, ACK | PSH, 1, 65535),  # lost after the capture point
    (300, C, A + 101, B + 1, ACK | PSH, 3, 65535),  # frame 7
    (10, S, B + 1, A + 104, ACK, 0, 65535), (1, C, A + 104, B + 1, FIN | ACK, 0, 65535),
    (10, S, B + 1, A + 105, FIN | ACK, 0, 65535), (10, C, A + 105, B + 2, ACK, 0, 65535)]

#: 4.0.17's initial RTT (``ts_first_rtt``, the out-of-order window) ends at the first packet with ACK and without
#: SYN after a SYN, either direction, SYN/ACK or not: here S's challenge ACK from an old connection's TIME_WAIT
#: (frame 2, 30 ms after the SYN). C's SYN sent again is answered 10 ms later, and C's segment sent again 25 ms
#: after the highest one (frame 8) is out-of-order for tshark (within 30 ms); measured from the retried SYN to the
#: first ACK after the SYN/ACK (20 ms) it was a plain retransmission for us.
INITIAL_RTT_FROM_AN_EARLY_ACK = [
    (0, C, A, 0, SYN, 0, 65535), (30, S, B + 77, A - 500, ACK, 0, 65535),  # challenge ACK (old connection)
    (1000, C, A, 0, SYN, 0, 65535), (10, S, B, A + 1, SYN | ACK, 0, 65535), (10, C, A + 1, B + 1, ACK, 0, 65535),
    (1, C, A + 1, B + 1, ACK, 1000, 65535), (1, C, A + 1001, B + 1, ACK, 1000, 65535),
    (25, C, A + 1, B + 1, ACK, 1000, 65535),  # frame 8
    (10, S, B + 1, A + 2001, ACK, 0, 65535), (1, C, A + 2001, B + 1, FIN | ACK, 0, 65535),
    (10, S, B + 1, A + 2002, FIN | ACK, 0, 65535), (10, C, A + 2002, B + 2, ACK, 0, 65535)]

#: The same "not set" 0 after a RST refusing a SYN (``RST|ACK`` with sequence number 0, RFC 9293 3.10.7.1): S's
#: next sequence number and mark are 0, so S's SYN/ACK (the SYN sent again was not captured) sets both again and
#: C's ACK of it (frame 4) is not "ACKed unseen"; read as a number, the mark 0 was below S's next one for us.
SYN_REFUSED_THEN_ACCEPTED = [
    (0, C, A, 0, SYN, 0, 65535), (10, S, 0, A + 1, RST | ACK, 0, 0),
    (1010, S, B, A + 1, SYN | ACK, 0, 65535), (10, C, A + 1, B + 1, ACK, 0, 65535),
    (1, C, A + 1, B + 1, ACK | PSH, 1000, 65535), (10, S, B + 1, A + 1001, ACK, 0, 65535),
    (1, C, A + 1001, B + 1, FIN | ACK, 0, 65535), (10, S, B + 1, A + 1002, FIN | ACK, 0, 65535),
    (10, C, A + 1002, B + 2, ACK, 0, 65535)]

#: Wireshark 4's spurious-retransmission test reads only the peer's last acknowledgment (``seglen > 0 &&
#: rev->lastack && LE_SEQ(seq + seglen, rev->lastack)``), before and apart from the tests against the next
#: sequence number. C's 1001..2001 was not captured; S acknowledged it; C's timer sent it again (frame 6): the
#: first copy in the capture, at the next sequence number, is a spurious retransmission for tshark. We called it
#: nothing (no earlier copy was captured).
SPURIOUS_FIRST_COPY = HANDSHAKE + [
    (1, C, A + 1, B + 1, ACK, 1000, 65535), (10, S, B + 1, A + 2001, ACK, 0, 65535),  # 1001..2001 not captured
    (300, C, A + 1001, B + 1, ACK, 1000, 65535), (10, S, B + 1, A + 2001, ACK, 0, 65535),
    (1, C, A + 2001, B + 1, FIN | ACK, 0, 65535), (10, S, B + 1, A + 2002, FIN | ACK, 0, 65535),
    (10, C, A + 2002, B + 2, ACK, 0, 65535)]

#: The same test on a zero-window probe (frame 6, one byte at the next sequence number while S's window is 0)
#: whose byte S had acknowledged (the segment that carried it was not captured): "Zero window probe" and
#: "Spurious retransmission" for tshark; a probe only for us.
SPURIOUS_ZERO_WINDOW_PROBE = HANDSHAKE + [
    (1, C, A + 1, B + 1, ACK, 1000, 65535), (10, S, B + 1, A + 1101, ACK, 0, 0),  # 1001..1101 not captured
    (300, C, A + 1001, B + 1, ACK, 1, 65535), (10, S, B + 1, A + 1101, ACK, 0, 0),
    (200, S, B + 1, A + 1101, ACK, 0, 65535), (1, C, A + 1101, B + 1, ACK, 500, 65535),
    (10, S, B + 1, A + 1601, ACK, 0, 65535)]

#: The payload's end without the FIN: data and FIN sent again (frame 6) after S acknowledged the data but not the
#: FIN is spurious for tshark (seq + seglen); we had taken the end with the FIN (a plain retransmission).
SPURIOUS_DATA_WITH_FIN = HANDSHAKE + [
    (1, C, A + 1, B + 1, FIN | ACK, 1000, 65535), (10, S, B + 1, A + 1001, ACK, 0, 65535),
    (300, C, A + 1, B + 1, FIN | ACK, 1000, 65535), (10, S, B + 1, A + 1002, FIN | ACK, 0, 65535),
    (10, C, A + 1002, B + 2, ACK, 0, 65535)]

#: More than one byte from one below the next sequence number is no retransmission for 4.0.17 (see
#: RETRANSMISSION_FROM_ONE_BELOW), but the spurious test comes first: 500 bytes from 1000 (frame 6) that S's
#: ACK of 3001 covers (1001..3001 not captured) are a spurious retransmission there; nothing for us before.
SPURIOUS_FROM_ONE_BELOW = HANDSHAKE + [
    (1, C, A + 1, B + 1, ACK, 1000, 65535), (10, S, B + 1, A + 3001, ACK, 0, 65535),
    (300, C, A + 1000, B + 1, ACK, 500, 65535), (10, S, B + 1, A + 3001, ACK, 0, 65535),
    (1, C, A + 3001, B + 1, FIN | ACK, 0, 65535), (10, S, B + 1, A + 3002, FIN | ACK, 0, 65535),
    (10, C, A + 3002, B + 2, ACK, 0, 65535)]

#: Window full with half a handshake: 4.0.17 keeps a window scale per direction, set by that direction's SYN
#: (or SYN/ACK) with the option, and sets both to "no scaling" after any SYN without it; only an unknown scale
#: (the direction's SYN not captured, no SYN without the option seen) skips the test. C's SYN was not captured;
#: S's SYN/ACK offered shift 5, so C's 2,048 bytes to S's ACK of 165 and window 64 (x 32) fill it (frame 7); S's
#: 64 bytes into C's raw window 64 (frame 9) are not tested (C's scale unknown). We needed both SYNs.
WINDOW_FULL_SYNACK_ONLY = [
    (10, S, B, A + 1, SYN | ACK, 0, 65535, opt_ws(5)), (10, C, A + 1, B + 1, ACK, 0, 64),
    (1, C, A + 1, B + 1, ACK, 100, 64), (10, S, B + 1, A + 101, ACK, 0, 64),
    (1, C, A + 101, B + 1, ACK, 64, 64),  # ends at S's raw window: no window full (S's scale is 32)
    (10, S, B + 1, A + 165, ACK, 0, 64), (1, C, A + 165, B + 1, ACK, 2048, 64),  # frame 7: window full
    (10, S, B + 1, A + 2213, ACK, 0, 64), (1, S, B + 1, A + 2213, ACK, 64, 64),
    (10, C, A + 2213, B + 65, ACK, 0, 64)]

#: The same with only C's SYN captured and no option in it: no scaling either way, so C's 64 bytes to S's window
#: 64 (frame 5) and S's 64 bytes to C's window 64 (frame 9) both fill the window for tshark.
WINDOW_FULL_SYN_WITHOUT_SCALE = [
    (0, C, A, 0, SYN, 0, 65535), (20, C, A + 1, B + 1, ACK, 0, 64),
    (1, C, A + 1, B + 1, ACK, 100, 64), (10, S, B + 1, A + 101, ACK, 0, 64),
    (1, C, A + 101, B + 1, ACK, 64, 64),  # frame 5
    (10, S, B + 1, A + 165, ACK, 0, 64), (1, C, A + 165, B + 1, ACK, 2048, 64),
    (10, S, B + 1, A + 2213, ACK, 0, 64), (1, S, B + 1, A + 2213, ACK, 64, 64),  # frame 9
    (10, C, A + 2213, B + 65, ACK, 0, 64)]

#: A SYN sent again before any SYN/ACK was captured sets 4.0.17's next sequence number (and the ACKed-unseen
#: mark) anew, after its own tests (it is still a "retransmission"): here after C's RST from an old connection
#: on the reused 4-tuple, whose sequence number ran 500,000 ahead (found by the reuse family at 20 % capture
#: drop). S's ACKs over C's segment the capture missed (frames 7, 9) are then "ACKed unseen" for tshark; we had
#: kept the mark at the RST's sequence number.
SYN_AGAIN_AFTER_RST_AHEAD = [
    (0, C, A, 0, SYN, 0, 65535), (20, C, A + 500000, 0, RST, 0, 0), (1000, C, A, 0, SYN, 0, 65535),
    (10, S, B, A + 1, SYN | ACK, 0, 65535), (10, C, A + 1, B + 1, ACK, 0, 65535),
    (1, C, A + 1, B + 1, ACK, 1000, 65535), (10, S, B + 1, A + 2001, ACK, 0, 65535),  # 1001..2001 not captured
    (1, C, A + 2001, B + 1, ACK, 1000, 65535), (10, S, B + 1, A + 3001, ACK, 0, 65535)]

#: The same after a pure ACK whose sequence number ran ahead: C's segment at 2001 (frame 8) is "previous segment
#: not captured" for tshark too, against the next sequence number the SYN set anew.
SYN_AGAIN_AFTER_ACK_AHEAD = [
    (0, C, A, 0, SYN, 0, 65535), (20, C, A + 500000, B + 1, ACK, 0, 0), (1000, C, A, 0, SYN, 0, 65535),
    (10, S, B, A + 1, SYN | ACK, 0, 65535), (10, C, A + 1, B + 1, ACK, 0, 65535),
    (1, C, A + 1, B + 1, ACK, 1000, 65535), (10, S, B + 1, A + 2001, ACK, 0, 65535),
    (1, C, A + 2001, B + 1, ACK, 1000, 65535), (10, S, B + 1, A + 3001, ACK, 0, 65535)]

#: A RST without payload whose sequence number ran ahead sets 4.0.17's next sequence number as any packet does
#: (nothing in ``tcp_analyze_sequence_number`` sets RSTs apart there; the data after it is "out-of-order" there,
#: class 3 of corpus_check), so C's data beyond a segment the capture missed (frame 7) is no "previous segment not
#: captured" for tshark; our next sequence number had ignored RSTs without payload (letting them set it broke the
#: corpus and the reuse family until a RST with sequence number 0, refusing a SYN, was read as "not set":
#: RETRANSMISSION_ENDING_AT_ZERO's rule).
RST_AHEAD_SETS_NEXT_SEQ = [
    (0, C, A, 0, SYN, 0, 65535), (20, C, A + 500000, 0, RST, 0, 0),
    (10, S, B, A + 1, SYN | ACK, 0, 65535), (10, C, A + 1, B + 1, ACK, 0, 65535),
    (1, C, A + 1, B + 1, ACK, 1000, 65535), (10, S, B + 1, A + 2001, ACK, 0, 65535),
    (1, C, A + 2001, B + 1, ACK, 1000, 65535), (10, S, B + 1, A + 3001, ACK, 0, 65535)]

#: The same in S's direction mid-connection: a RST injected by a middlebox with a sequence number 700,000 ahead
#: (frame 6; C ignores it). S's data beyond a segment the capture missed (frame 8) is no "previous segment not
#: captured" for tshark (it is "out-of-order", class 3), and S's pure ACK with a new window at its real next
#: sequence number (frame 14) is no "window update" there (not at the next sequence number); both were ours.
RST_INJECTED_AHEAD = HANDSHAKE + [
    (1, C, A + 1, B + 1, ACK | PSH, 100, 65535), (10, S, B + 1, A + 101, ACK, 1000, 65535),
    (0.1, S, B + 700001, 0, RST, 0, 0),  # frame 6
    (1, C, A + 101, B + 1001, ACK, 0, 65535),
    (1, S, B + 2001, A + 101, ACK, 1000, 65535),  # frame 8: B+1001..B+2001 not captured
    (0.1, C, A + 101, B + 1001, ACK, 0, 65535),
    (1, S, B + 1001, A + 101, ACK, 1000, 65535), (1, C, A + 101, B + 3001, ACK, 0, 65535),
    (1, C, A + 101, B + 3001, ACK | PSH, 100, 65535),
    (10, S, B + 3001, A + 201, ACK, 0, 65535), (1, S, B + 3001, A + 201, ACK, 0, 32768),  # frame 14
    (1, C, A + 201, B + 3001, FIN | ACK, 0, 65535), (10, S, B + 3001, A + 202, FIN | ACK, 0, 65535),
    (1, C, A + 202, B + 3002, ACK, 0, 65535)]

#: 4.0.17's out-of-order test reads the time its next sequence number last moved, which a pure ACK moves too:
#: C's pure ACK at 4001 (frame 7; 1001..2001 and 3001..4001 were not captured) sets it, so C's segments sent
#: again 300 ms later are plain retransmissions there, 2001..3001 (frame 10) too. We timed from the segment that
#: last raised our mark (3001..4001, frame 9, 1 ms before) and called frame 10 out-of-order (found by the reuse
#: family at 20 % capture drop).
OUT_OF_ORDER_AFTER_A_PURE_ACK_AHEAD = HANDSHAKE + [
    (1, C, A + 1, B + 1, ACK, 1000, 65535), (1, C, A + 2001, B + 1, ACK, 1000, 65535),
    (10, S, B + 1, A + 1001, ACK, 0, 65535), (1, C, A + 4001, B + 1, ACK, 0, 65535),  # frame 7
    (300, C, A + 1001, B + 1, ACK, 1000, 65535), (1, C, A + 3001, B + 1, ACK, 1000, 65535),
    (1, C, A + 2001, B + 1, ACK, 1000, 65535),  # frame 10
    (10, S, B + 1, A + 4001, ACK, 0, 65535)]

#: An ACK beyond everything a peer was seen to send is "ACKed unseen" for 4.0.17 when the peer sent only pure ACKs
#: so far: the capture starts mid-connection with C's pure ACK at 1001, and S acknowledges C's 1001..2001, which
#: the capture missed (frame 2); the capture ends before C speaks again. We looked for such ACKs only beyond the
#: peer's segments that occupy sequence space (found by shrinking a reuse-family capture at 30 % drop).
ACKED_UNSEEN_BEYOND_A_PURE_ACK = [
    (0, C, A + 1001, B + 1, ACK, 0, 65535), (10, S, B + 1, A + 2001, ACK, 0, 65535),
    (1, S, B + 1, A + 2001, ACK, 500, 65535)]


#: An ACK beyond the peer's contiguous mark while the peer's next sequence number is "not set" (0 raw: its data
#: ended at 2^32, frame 13): 4.0.17 tests ``LT_SEQ(maxseqtobeacked, 0)``, true for a mark of 2^31 or more raw, so
#: frame 14 is ACKed unseen and the mark becomes "not set". The reference raised a TypeError here (found by a
#: fuzzer of captures near 2^32 with RSTs); other frames of this hostile capture differ from tshark in both engines.
C40000, S80 = ('10.0.0.1', 40000), ('10.0.0.2', 80)
ACK_BEYOND_AN_UNSET_NEXT_SEQ = [
    (0, C40000, 4294966295, 0, 2, 0, 65535),
    (10, S80, 4294966295, 4294966296, 18, 0, 65535),
    (10, C40000, 4295666296, 0, 4, 0, 0),
    (0.1, S80, 4294966296, 4294966296, 16, 1000, 8192),
    (1, S80, 0, 0, 4, 0, 0),
    (0.1, C40000, 4294966296, 4294967296, 17, 500, 8192),
    (10, S80, 4294967296, 4294966796, 16, 0, 8192),
    (300, C40000, 4294966696, 4294967296, 16, 100, 65535),
    (300, C40000, 4294967796, 4294967296, 16, 1, 65535),
    (300, C40000, 4294967796, 4294967296, 16, 1, 65535),
    (300, S80, 4294966296, 4294966796, 16, 1, 0),
    (10, C40000, 4294966796, 4294966296, 16, 1, 8192),
    (10, S80, 4294967296, 4294965797, 16, 0, 8192),
    (10, C40000, 4294966897, 4294967296, 16, 0, 8192),
    (300, S80, 4294967296, 4294966797, 16, 0, 65535),
    (0.1, S80, 4294966296, 4294966797, 16, 1000, 8192),
    (1, C40000, 4294966797, 4294967196, 16, 1, 8192),
    (1, S80, 4294967296, 4294966798, 16, 0, 65535),
    (10, S80, 4294967295, 0, 4, 0, 0),
]


#: A capture that starts mid-connection with a pure ACK at sequence number 2^32 - 1: 4.0.17's keep-alive test
#: (``nextseq - 1 == seq``, no guard on a next sequence number not yet set, 0) calls it a keep-alive (found in the
#: options family at 30 % capture drop, seed 229); then data and the answer to it, and one more keep-alive proper.
KEEPALIVE_BEFORE_NEXT_SEQ_SET = [
    (0, S, 2**32 - 1, 2396886969, ACK, 0, 1827),
    (10, C, 2396886969, 2**32 - 1, ACK, 1448, 65535),
    (10, S, 2**32 - 1, 2396888417, ACK, 0, 2008),
    (10, C, 2396888416, 2**32 - 1, ACK, 1, 65535),
    (10, S, 2**32 - 1, 2396888417, ACK, 0, 2008),
]

#: Classes found by these families and now analysed as tshark 4.0.17 does (annotation and the compiled pass).
AGREED = {
    "acked_unseen_second_hole": ACKED_UNSEEN_SECOND_HOLE,
    "acked_unseen_after_accepted_probe": ACKED_UNSEEN_AFTER_ACCEPTED_PROBE,
    "retransmission_from_one_below": RETRANSMISSION_FROM_ONE_BELOW,
    "fast_with_parked_counter": FAST_WITH_PARKED_COUNTER,
    "dupack_count_restarts": DUPACK_COUNT_RESTARTS,
    "initial_rtt_from_an_early_ack": INITIAL_RTT_FROM_AN_EARLY_ACK,
    "isn_all_ones": ISN_ALL_ONES,
    "syn_refused_then_accepted": SYN_REFUSED_THEN_ACCEPTED,
    "spurious_first_copy": SPURIOUS_FIRST_COPY,
    "spurious_zero_window_probe": SPURIOUS_ZERO_WINDOW_PROBE,
    "spurious_data_with_fin": SPURIOUS_DATA_WITH_FIN,
    "spurious_from_one_below": SPURIOUS_FROM_ONE_BELOW,
    "window_full_synack_only": WINDOW_FULL_SYNACK_ONLY,
    "window_full_syn_without_scale": WINDOW_FULL_SYN_WITHOUT_SCALE,
    "syn_again_after_rst_ahead": SYN_AGAIN_AFTER_RST_AHEAD,
    "syn_again_after_ack_ahead": SYN_AGAIN_AFTER_ACK_AHEAD,
    "out_of_order_after_a_pure_ack_ahead": OUT_OF_ORDER_AFTER_A_PURE_ACK_AHEAD,
    "acked_unseen_beyond_a_pure_ack": ACKED_UNSEEN_BEYOND_A_PURE_ACK,
    "retransmission_ending_at_zero": RETRANSMISSION_ENDING_AT_ZERO,
    "retransmission_after_data_ending_at_zero": RETRANSMISSION_AFTER_DATA_ENDING_AT_ZERO,
    "spurious_after_ack_of_zero": SPURIOUS_AFTER_ACK_OF_ZERO,
    "rst_ahead_sets_next_seq": RST_AHEAD_SETS_NEXT_SEQ,
    "rst_injected_ahead": RST_INJECTED_AHEAD,
    "keepalive_before_next_seq_set": KEEPALIVE_BEFORE_NEXT_SEQ_SET,
}

#: Classes where we still differ from tshark 4.0.17: none known. A new one gets a reproducer in a test marked
#: ``xfail(strict=True)`` with its reason until its class is fixed, then joins ``AGREED``.


@needs_tshark
@pytest.mark.parametrize("name", list(AGREED))
def test_reproducer_of_a_fixed_class_agrees_with_tshark(tmp_path, name):
    path = tmp_path / f"{name}.pcap"
    write_pcap(path, _rows_to_frames(AGREED[name]), nano=True)
    packets, ta = analyse(path)
    assert compare_analysis(packets, ta, path.name) == {}


@pytest.mark.skipif(shutil.which("tcptrace") is None, reason="tcptrace not on PATH (Debian package tcptrace)")
@pytest.mark.parametrize("name", ["spurious_first_copy", "spurious_data_with_fin", "spurious_from_one_below"])
def test_spurious_reproducer_is_counted_as_tcptrace_counts_it(tmp_path, name):
    """A spurious retransmission that advances the highest sequence number is new data to tcptrace, one below
    it a retransmission (tcpmodels.traces.tcptrace_terms). Not the zero-window probe's: its retransmissions
    agree, but tcptrace leaves the probe's byte out of its unique bytes (1,500 against our 1,501), a difference
    of unique bytes this change does not touch."""
    path = tmp_path / f"{name}.pcap"
    write_pcap(path, _rows_to_frames(AGREED[name]), nano=True)
    assert compare_tcptrace(path) == []


@needs_tshark
def test_ack_beyond_an_unset_next_seq_is_acked_unseen_in_both_engines(tmp_path):
    """The reference no longer fails on an ACK beyond a mark while the peer's next sequence number is "not set";
    it equals the compiled pass, and its ACKed-unseen frames are tshark's."""
    from pass_equality import assert_pass_equal

    path = tmp_path / "unset.pcap"
    write_pcap(path, _rows_to_frames(ACK_BEYOND_AN_UNSET_NEXT_SEQ), nano=True)
    packets, ta = analyse(path)
    assert_pass_equal(packets, path.name)
    ours = packets["frame_index"].to_numpy()[annotate(packets)["is_acked_unseen"].to_numpy()]
    assert list(ours) == list(ta.index[ta["acked_unseen"]]) == [13]


@needs_tshark
def test_keepalive_before_next_seq_set_in_both_engines(tmp_path):
    """The pure ACK at 2^32 - 1 that opens the capture is a keep-alive (tshark's, frame 1) in both engines."""
    from pass_equality import assert_pass_equal

    path = tmp_path / "ka.pcap"
    write_pcap(path, _rows_to_frames(KEEPALIVE_BEFORE_NEXT_SEQ_SET), nano=True)
    packets, ta = analyse(path)
    assert_pass_equal(packets, path.name)
    assert list(ta.index[ta["keepalive"]]) == [0, 3]


def _data_ending_at_zero_again(cycles: int) -> list[tuple]:
    """A handshake, then ``cycles`` times: the two segments before 2^32 (the second ending there, so the next
    sequence number is "not set") and a segment ending lower, which sets it back below 2^32."""
    top = 2**32
    rows = [(0, C, top - 3000, 0, SYN, 0, 65535), (1, S, 5000, top - 2999, SYN | ACK, 0, 65535)]
    for _ in range(cycles):
        rows += [(1, C, top - 2999, 5001, ACK, 1499, 65535), (1, C, top - 1500, 5001, ACK, 1500, 65535),
                 (1, C, top - 2999, 5001, ACK, 100, 65535)]
    return rows


@needs_tshark
def test_next_seq_set_to_zero_again_and_again(tmp_path):
    """Each cycle sets the next sequence number to 0 ("not set") and back: as tshark in both engines; the reference
    takes one ordered pass over such flows (it took one vectorised pass per restart, quadratic in the cycles)."""
    from pass_equality import assert_pass_equal

    path = tmp_path / "again.pcap"
    write_pcap(path, _rows_to_frames(_data_ending_at_zero_again(40)), nano=True)
    packets, ta = analyse(path)
    assert compare_analysis(packets, ta, path.name) == {}
    assert_pass_equal(packets, path.name)
