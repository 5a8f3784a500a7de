"""IPv4 and IPv6 fragment reassembly for the native reader, bounded in memory and in time as a kernel's is.

The decoder (:mod:`tcpmodels.traces.decode`) hands every fragment record to a
:class:`Reassembler` as a :class:`Fragment` (its IP bytes and where it came from);
when the last missing piece of a datagram arrives, :meth:`Reassembler.add` returns the
whole datagram as raw IP bytes (:class:`Datagram`), which the reader decodes as a record
of its own and places at the fragment that completed it (as Wireshark does: "Reassembled
in frame N"). A datagram is keyed by (IP version, source, destination, protocol, ID).

Bounds (Linux's defaults, ``net.ipv4.ipfrag_time``, ``net.ipv6.ip6frag_time``,
``net.ipv4.ipfrag_high_thresh``): a datagram incomplete after 30 s (IPv4) or 60 s
(IPv6) of capture time is dropped; when the fragments held exceed 4 MiB, the oldest
datagrams are dropped until they fit. A datagram longer than an IP packet can be
(65535 bytes of IPv4 payload or IPv6 payload length) is dropped. Overlapping fragments
keep the bytes that arrived first. Every fragment of a dropped datagram stays counted
as the ``ip_fragment`` skip reason of the read accounting; the counts of what was
dropped, and why, are in :attr:`Reassembler.dropped`.

References
----------
.. [1] RFC 791, "Internet Protocol", Sec. 3.2 (reassembly); RFC 815 (an algorithm).
.. [2] RFC 8200, "IPv6 Specification", Sec. 4.5 (fragment header, reassembly, 60 s timeout).
.. [3] Linux, Documentation/networking/ip-sysctl.rst (ipfrag_time, ipfrag_high_thresh).
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass, field

__all__ = ["Fragment", "Datagram", "Reassembler", "TIMEOUT_NS", "MAX_HELD_BYTES", "MAX_DATAGRAM_BYTES"]

#: Capture time after the first fragment when an incomplete datagram is dropped, by IP version. [ns]
TIMEOUT_NS = {4: 30_000_000_000, 6: 60_000_000_000}
#: Bytes of fragment data held at most (Linux's ipfrag_high_thresh); the oldest datagrams go first. [bytes]
MAX_HELD_BYTES = 4 << 20
#: Largest reassembled payload after the (unfragmentable) header. [bytes]
MAX_DATAGRAM_BYTES = 65535


@dataclass(frozen=True)
class Fragment:
    """One fragment record, as the decoder found it.

    Attributes
    ----------
    frame_index, timestamp_ns, interface_id, wire_bytes, captured_bytes : int
        The record's (as in the packet table). [-, ns, -, bytes, bytes]
    tunnel : int
        Tunnel code of the record when the fragmented IP packet was inside a tunnel (0: not).
    version : int
        4 or 6.
    key : tuple
        (source, destination, protocol, identification) of the datagram.
    offset_bytes : int
        Where the fragment's data goes in the datagram's payload. [bytes]
    more : bool
        More fragments follow (MF set).
    header : bytes
        The header to rebuild the datagram with: IPv4, the header (options included); IPv6, the fixed
        header and the extension headers before the fragment header, with the next-header byte of the last
        of them already set to the fragment header's next header, and the offset of that byte in ``header``.
    next_header_at : int
        IPv6: offset in ``header`` of the byte that named the fragment header (-1 for IPv4).
    data : bytes
        The fragment's data as captured (may be shorter than ``data_len`` when the snap length cut it).
    data_len : int
        The fragment's data length from the IP header. [bytes]
    """

    frame_index: int
    timestamp_ns: int
    interface_id: int
    wire_bytes: int
    captured_bytes: int
    tunnel: int
    version: int
    key: tuple
    offset_bytes: int
    more: bool
    header: bytes
    next_header_at: int
    data: bytes
    data_len: int


@dataclass(frozen=True)
class Datagram:
    """A reassembled datagram: raw IP bytes, and the records it came from.

    Attributes
    ----------
    ip_bytes : bytes
        The datagram (header rewritten as unfragmented; payload bytes not captured are zeros).
    captured_prefix_bytes : int
        Length of the leading part of ``ip_bytes`` that was captured (the decoder sees only that). [bytes]
    last : Fragment
        The fragment that completed the datagram (its record carries the row).
    fragments : int
        Number of fragment records in it.
    wire_bytes, captured_bytes : int
        Sums over its fragment records. [bytes]
    """

    ip_bytes: bytes
    captured_prefix_bytes: int
    last: Fragment
    fragments: int
    wire_bytes: int
    captured_bytes: int


@dataclass
class _Pending:
    first_ns: int
    version: int
    pieces: list = field(default_factory=list)  # Fragment, in arrival order
    total: int | None = None  # payload length, known from the last fragment
    held: int = 0


class Reassembler:
    """Collects fragments across chunks and returns each datagram when it is complete.

    Parameters
    ----------
    max_held_bytes : int
        Fragment data held at most; the oldest incomplete datagrams are dropped beyond it. [bytes]
    """

    def __init__(self, max_held_bytes: int = MAX_HELD_BYTES) -> None:
        self.max_held_bytes = int(max_held_bytes)
        self._pending: OrderedDict[tuple, _Pending] = OrderedDict()
        self._held = 0
        #: Fragment records of dropped datagrams, by reason: ``timed_out``, ``memory``, ``too_long``.
        self.dropped: dict[str, int] = {}
        #: Datagrams completed.
        self.completed = 0

    def add(self, frag: Fragment) -> Datagram | None:
        """Take one fragment; the datagram if this fragment completed it.

        Parameters
        ----------
        frag : Fragment
            The next fragment record, in file order.

        Returns
        -------
        Datagram or None
        """
        self._expire(frag.timestamp_ns)
        key = (frag.version,) + frag.key
        p = self._pending.get(key)
        if p is None:
            p = self._pending[key] = _Pending(first_ns=frag.timestamp_ns, version=frag.version)
        p.pieces.append(frag)
        p.held += len(frag.data)
        self._held += len(frag.data)
        end = frag.offset_bytes + frag.data_len
        if not frag.more:
            p.total = end if p.total is None else min(p.total, end)
        if end > MAX_DATAGRAM_BYTES or (p.total is not None and p.total > MAX_DATAGRAM_BYTES):
            self._drop(key, "too_long")
            return None
        while self._held > self.max_held_bytes and self._pending:
            oldest = next(iter(self._pending))
            self._drop(oldest, "memory")
            if oldest == key:
                return None
        return self._complete(key) if p.total is not None else None

    def _drop(self, key: tuple, why: str) -> None:
        p = self._pending.pop(key)
        self._held -= p.held
        self.dropped[why] = self.dropped.get(why, 0) + len(p.pieces)

    def _expire(self, now_ns: int) -> None:
        for key in [k for k, p in self._pending.items() if now_ns - p.first_ns > TIMEOUT_NS[p.version]]:
            self._drop(key, "timed_out")

    def _complete(self, key: tuple) -> Datagram | None:
        p = self._pending[key]
        spans = sorted((f.offset_bytes, f.offset_bytes + f.data_len) for f in p.pieces)
        reach = 0
        for lo, hi in spans:
            if lo > reach:
                return None  # a hole
            reach = max(reach, hi)
        if reach < p.total:
            return None
        del self._pending[key]
        self._held -= p.held
        self.completed += 1
        payload = bytearray(p.total)
        have = bytearray(p.total)  # 1 where a byte was captured (first arrival wins)
        for f in p.pieces:
            lo = f.offset_bytes
            n = min(len(f.data), p.total - lo)
            if n <= 0:
                continue
            fresh = [i for i in range(lo, lo + n) if not have[i]] if any(have[lo:lo + n]) else None
            if fresh is None:
                payload[lo:lo + n] = f.data[:n]
                have[lo:lo + n] = b"\x01" * n
            else:
                for i in fresh:
                    payload[i] = f.data[i - lo]
                    have[i] = 1
        first = next((f for f in p.pieces if f.offset_bytes == 0), None)
        if first is None:
            return None
        captured = have.find(0)
        captured = p.total if captured < 0 else captured
        header = bytearray(first.header)
        if p.version == 4:
            total_len = len(header) + p.total
            header[2:4] = total_len.to_bytes(2, "big")
            header[6:8] = b"\x00\x00"  # unfragmented: no MF, offset 0 (DF was not set on a fragment)
        else:
            header[4:6] = (len(header) - 40 + p.total).to_bytes(2, "big")
        last = p.pieces[-1]
        return Datagram(ip_bytes=bytes(header) + bytes(payload), captured_prefix_bytes=len(header) + captured,
                        last=last, fragments=len(p.pieces), wire_bytes=sum(f.wire_bytes for f in p.pieces),
                        captured_bytes=sum(f.captured_bytes for f in p.pieces))

    @property
    def pending_fragments(self) -> int:
        """Fragment records held in incomplete datagrams (at the end of a file: never reassembled)."""
        return sum(len(p.pieces) for p in self._pending.values())
