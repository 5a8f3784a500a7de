"""Random transfers, captured at the sender, analysed as tshark analyses them (a differential test).

Each seed writes one connection: a handshake (its SYN sometimes sent twice), then data segments of a random
size with random losses after the capture point, duplicate ACKs for the holes, retransmissions after a
short or a long wait (fast-retransmit-like or RTO-like, of the first unacknowledged segment, which the
receiver may already hold), acknowledged segments sent again (spurious timeouts), frames captured twice, keep-alives when idle, zero windows and window updates,
and a FIN exchange; or, captured at the receiver, segments lost before the capture point and sent again later,
reordered pairs, copies, a receiver whose window closes and the sender's one-byte zero-window probes.
corpus_check.compare_analysis compares every per-packet class and RTT sample with tshark's
``tcp.analysis`` fields (equal, or different only in a class argued in tcpmodels.traces.flows). This found
that Wireshark 4 tests "spurious" before "fast" and "out-of-order", and that its zero-window probes are at
(never one below) the next sequence number and do not move it.
"""

from __future__ import annotations

import random
import warnings

import pytest
from corpus_check import compare_analysis, tshark_analysis
from trace_fixtures import needs_tshark
from trace_synth import ether, ipv4, tcp, write_pcap

from tcpmodels.traces import TraceWarning, read_pcap

SYN, ACK, FIN, PSH = 0x02, 0x10, 0x01, 0x08
C, S = ("10.0.0.1", 40000), ("10.0.0.2", 80)
SEEDS = range(30)


class _Capture:
    """Frames as the sender's capture point sees them."""

    def __init__(self, rng: random.Random):
        self.rng, self.t, self.ip_id, self.frames = rng, 1_700_000_000_000_000_000, 1, []

    def emit(self, src, dst, seq, ack, flags, payload=0, win=65535, dt_ms=None, twice=False):
        self.t += int((dt_ms if dt_ms is not None else self.rng.uniform(0.05, 3)) * 1e6)
        self.ip_id += 1
        frame = ether(ipv4(tcp(src[1], dst[1], seq % 2**32, ack % 2**32, flags, window=win, payload=payload),
                           src=src[0], dst=dst[0], ip_id=self.ip_id))
        self.frames.append((self.t, frame))
        if twice:  # the same frame captured again
            self.frames.append((self.t + 1000, frame))


def random_transfer(seed: int) -> list[tuple[int, bytes]]:
    """One connection's frames (see the module docstring)."""
    r = random.Random(seed)
    cap = _Capture(r)
    isn_c, isn_s = r.randrange(2**32), r.randrange(2**32)
    cap.emit(C, S, isn_c, 0, SYN)
    if r.random() < 0.2:
        cap.emit(C, S, isn_c, 0, SYN, dt_ms=1000)
    cap.emit(S, C, isn_s, isn_c + 1, SYN | ACK, dt_ms=10)
    cap.emit(C, S, isn_c + 1, isn_s + 1, ACK, dt_ms=10)
    mss, n = r.choice([100, 536, 1000, 1448]), r.randrange(5, 60)
    una = nxt = rcv = isn_c + 1  # the sender's unacknowledged and next byte, the receiver's cumulative ACK
    held, sent, win, i = set(), [], 65535, 0

    def deliver(seg, size):
        nonlocal rcv
        if seg == rcv:
            rcv += size
            while any(s == rcv for s, _ in held):
                hit = next(h for h in held if h[0] == rcv)
                held.discard(hit)
                rcv += hit[1]
        elif seg > rcv:
            held.add((seg, size))

    while i < n or una < nxt:
        if i < n and nxt - una < 8 * mss:
            seg = nxt
            size = mss if r.random() < 0.85 else r.randrange(1, mss)
            cap.emit(C, S, seg, isn_s + 1, ACK | PSH, payload=size, twice=r.random() < 0.03)
            nxt += size
            i += 1
            sent.append((seg, size))
            if r.random() >= 0.08:  # not lost after the capture point
                in_order = seg == rcv
                deliver(seg, size)
                if not in_order or r.random() < 0.6:
                    win = 0 if in_order and r.random() < 0.05 else 65535
                    cap.emit(S, C, isn_s + 1, rcv, ACK, win=win, dt_ms=r.uniform(5, 20))
                    una = max(una, rcv)
        else:  # send the first unacknowledged segment again, soon or after a timeout
            first = [s for s in sent if s[0] == una]
            if not first:
                una = nxt
                continue
            seg, size = first[0]
            cap.emit(C, S, seg, isn_s + 1, ACK | PSH, payload=size, dt_ms=r.choice([2, 200, 1000]))
            if r.random() < 0.85:
                deliver(seg, size)
                cap.emit(S, C, isn_s + 1, rcv, ACK, win=65535 if win else 0, dt_ms=r.uniform(5, 20))
                una = max(una, rcv)
        acked = [x for x in sent if x[0] + x[1] <= una]
        if acked and r.random() < 0.05:  # an acknowledged segment sent again (a spurious timeout)
            seg, size = acked[-1 - r.randrange(min(3, len(acked)))]
            cap.emit(C, S, seg, isn_s + 1, ACK | PSH, payload=size, dt_ms=r.choice([1, 5, 50]))
        if r.random() < 0.02 and una == nxt:  # a keep-alive while idle, and its ACK
            cap.emit(C, S, nxt - 1, isn_s + 1, ACK, dt_ms=2000)
            cap.emit(S, C, isn_s + 1, rcv, ACK, dt_ms=10)
    cap.emit(C, S, nxt, isn_s + 1, FIN | ACK)
    cap.emit(S, C, isn_s + 1, nxt + 1, FIN | ACK, dt_ms=10)
    cap.emit(C, S, nxt + 1, isn_s + 2, ACK, dt_ms=10)
    return cap.frames


def random_receiver_capture(seed: int) -> list[tuple[int, bytes]]:
    """One connection captured at the receiver (see the module docstring)."""
    r = random.Random(seed)
    cap = _Capture(r)
    isn_c, isn_s = r.randrange(2**32), r.randrange(2**32)
    cap.emit(C, S, isn_c, 0, SYN, dt_ms=1)
    cap.emit(S, C, isn_s, isn_c + 1, SYN | ACK, dt_ms=0.1)
    cap.emit(C, S, isn_c + 1, isn_s + 1, ACK, dt_ms=20)
    mss, seq, segs = r.choice([500, 1448]), isn_c + 1, []
    for _ in range(r.randrange(10, 80)):
        size = mss if r.random() < 0.9 else r.randrange(1, mss)
        segs.append((seq, size))
        seq += size
    arrivals, pending, later = [], list(segs), []
    while pending or later:
        if later and (not pending or r.random() < 0.3):
            arrivals.append(later.pop(0))  # a segment lost before the capture point, sent again
            continue
        x, seg = r.random(), pending.pop(0)
        if x < 0.07:
            later.append(seg)
        elif x < 0.12 and pending:
            arrivals += [pending.pop(0), seg]  # a reordered pair
        else:
            arrivals.append(seg)
        if r.random() < 0.02:
            arrivals.append(seg)  # a copy the receiver already holds
    rcv, held, win = isn_c + 1, set(), 65535
    for seg, size in arrivals:
        cap.emit(C, S, seg, isn_s + 1, ACK | PSH, payload=size, dt_ms=r.uniform(0.01, 2))
        if seg == rcv:
            rcv += size
            while any(h[0] == rcv for h in held):
                hit = next(h for h in held if h[0] == rcv)
                held.discard(hit)
                rcv += hit[1]
        elif seg > rcv:
            held.add((seg, size))
        if r.random() < 0.7 or seg != rcv:
            win = 0 if r.random() < 0.03 else (65535 if win == 0 and r.random() < 0.5 else win)
            cap.emit(S, C, isn_s + 1, rcv, ACK, win=win, dt_ms=0.05)
            if win == 0 and r.random() < 0.5:  # a probe of the closed window, and the answer
                cap.emit(C, S, seq, isn_s + 1, ACK, payload=1, dt_ms=200)
                cap.emit(S, C, isn_s + 1, rcv, ACK, win=0, dt_ms=0.05)
    cap.emit(C, S, seq, isn_s + 1, FIN | ACK, dt_ms=1)
    cap.emit(S, C, isn_s + 1, seq + 1, FIN | ACK, dt_ms=0.05)
    cap.emit(C, S, seq + 1, isn_s + 2, ACK, dt_ms=20)
    return cap.frames


@needs_tshark
@pytest.mark.parametrize("where", ["sender", "receiver"])
@pytest.mark.parametrize("seed", SEEDS)
def test_random_transfer_is_analysed_as_tshark_analyses_it(tmp_path, seed, where):
    path = tmp_path / f"random{seed}.pcap"
    write_pcap(path, (random_transfer if where == "sender" else random_receiver_capture)(seed), nano=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TraceWarning)
        packets = read_pcap(path)
    assert compare_analysis(packets, tshark_analysis(path), path.name) == {}
