"""Capture containers (classic pcap, pcapng, gzip) -> batches of packet records as numpy arrays.

This module knows file formats only: where each packet's bytes are, when it was
captured, how long it was on the wire and which link type it carries. Decoding
the bytes is :mod:`tcpmodels.traces.decode`'s job.

Memory is bounded: the file is read in chunks of ``chunk_bytes`` and each chunk
yields one :class:`RecordBatch` (pcapng: also one per section). Walking the
length-prefixed records is the only per-record Python loop; everything after
it is vectorised.

References
----------
.. [1] IETF draft-ietf-opsawg-pcap, "PCAP Capture File Format".
.. [2] IETF draft-ietf-opsawg-pcapng, "PCAP Now Generic (pcapng) Capture File Format".
"""

from __future__ import annotations

import gzip
import os
import struct
import zlib
from dataclasses import dataclass, field
from typing import Iterator

import numpy as np

__all__ = ["RecordBatch", "CaptureFileError", "iter_batches", "MAX_RECORD_BYTES"]

#: Largest record accepted (libpcap's MAXIMUM_SNAPLEN); a longer one means a corrupt file.
MAX_RECORD_BYTES = 262144
#: Bytes appended to every chunk so that fixed-width gathers never read outside it.
PAD_BYTES = 512

PCAP_MAGIC = {
    b"\xd4\xc3\xb2\xa1": ("<", 1000),  # little-endian, microseconds
    b"\xa1\xb2\xc3\xd4": (">", 1000),
    b"\x4d\x3c\xb2\xa1": ("<", 1),  # little-endian, nanoseconds
    b"\xa1\xb2\x3c\x4d": (">", 1),
}
PCAPNG_SHB = 0x0A0D0D0A


class CaptureFileError(ValueError):
    """A capture file that cannot be read; the message names the file, the byte offset and the problem."""


@dataclass
class RecordBatch:
    """Packet records of one chunk of a capture file.

    ``buf`` holds the chunk (plus zero padding); ``data_offset[i]`` is where
    record ``i``'s captured bytes start in it.
    """

    buf: np.ndarray
    data_offset: np.ndarray  # int64
    captured_bytes: np.ndarray  # uint32
    wire_bytes: np.ndarray  # uint32
    timestamp_ns: np.ndarray  # int64
    interface_id: np.ndarray  # uint16
    link_type: np.ndarray  # int32
    frame_index: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    #: the file's (pcapng: the interface's) snap length per record, 0 if none [bytes]
    snap_bytes: np.ndarray = field(default_factory=lambda: np.zeros(0, np.uint32))

    def __len__(self) -> int:
        return len(self.data_offset)


@dataclass
class _State:
    """What the reader learned so far (passed between chunks)."""

    path: str
    records: int = 0
    truncated_tail_bytes: int = 0
    longer_than_snaplen: int = 0
    link_types: set = field(default_factory=set)
    # pcapng
    interfaces: list = field(default_factory=list)  # (link_type, snaplen, resol_num, resol_den_pow, offset_s)
    section_first_if: int = 0
    endian: str = "<"


def _open(path: str):
    with open(path, "rb") as fh:
        head = fh.read(2)
    if head == b"\x1f\x8b":
        return gzip.open(path, "rb")
    return open(path, "rb")


def _gather(buf: np.ndarray, offsets: np.ndarray, width: int) -> np.ndarray:
    """Rows of ``width`` bytes starting at each offset (an (n, width) uint8 array)."""
    return buf[offsets[:, None] + np.arange(width)]


def iter_batches(path: str | os.PathLike, state_out: dict | None = None,
                 chunk_bytes: int = 32 << 20) -> Iterator[RecordBatch]:
    """Yield :class:`RecordBatch` objects for every packet record of a capture file.

    Parameters
    ----------
    path : str or path-like
        Classic pcap (µs or ns, either byte order) or pcapng, optionally gzip-compressed.
    state_out : dict, optional
        Filled at the end with ``records``, ``truncated_tail_bytes``,
        ``longer_than_snaplen`` and ``link_types``.
    chunk_bytes : int
        Bytes of (decompressed) file handled at once. [bytes]

    Raises
    ------
    CaptureFileError
        Empty file, unknown magic number, a corrupt record length, a pcapng packet
        naming an undefined interface; the message names file and offset.
    """
    path = os.fspath(path)
    if not os.path.exists(path):
        raise FileNotFoundError(f"capture file not found: {path}")
    if os.path.getsize(path) == 0:
        raise CaptureFileError(f"{path}: file is empty (0 bytes), not a capture")
    st = _State(path=path)
    try:
        with _open(path) as fh:
            try:
                magic = fh.read(4)
            except (OSError, EOFError, zlib.error) as exc:
                raise CaptureFileError(f"{path}: offset 0: cannot decompress: {exc}") from None
            if len(magic) < 4:
                raise CaptureFileError(f"{path}: offset 0: only {len(magic)} bytes, too short for a capture header")
            if magic in PCAP_MAGIC:
                yield from _classic(fh, magic, st, chunk_bytes)
            elif struct.unpack("<I", magic)[0] == PCAPNG_SHB:
                yield from _pcapng(fh, magic, st, chunk_bytes)
            else:
                raise CaptureFileError(
                    f"{path}: offset 0: not a pcap or pcapng file (magic number {magic.hex()}; "
                    "expected a1b2c3d4 / a1b23c4d or their byte swaps, or 0a0d0d0a)")
    except (gzip.BadGzipFile, EOFError, OSError, zlib.error) as exc:
        if isinstance(exc, FileNotFoundError):
            raise
        raise CaptureFileError(f"{path}: cannot read compressed data: {exc}") from None
    if state_out is not None:
        state_out.update(records=st.records, truncated_tail_bytes=st.truncated_tail_bytes,
                         longer_than_snaplen=st.longer_than_snaplen, link_types=tuple(sorted(st.link_types)))


def _classic(fh, magic: bytes, st: _State, chunk_bytes: int) -> Iterator[RecordBatch]:
    endian, ns_per_tick = PCAP_MAGIC[magic]
    rest = fh.read(20)
    if len(rest) < 20:
        raise CaptureFileError(f"{st.path}: offset 4: file ends inside the 24-byte pcap file header")
    _major, _minor, _zone, _sigfigs, snaplen, network = struct.unpack(endian + "HHiIII", rest)
    link_type = network & 0xFFFF
    st.link_types.add(link_type)
    file_pos = 24
    carry = b""
    incl_at = struct.Struct(endian + "I").unpack_from
    dt = np.dtype(endian + "u4")
    limit = max(MAX_RECORD_BYTES, snaplen)
    while True:
        data = fh.read(chunk_bytes)
        chunk = carry + data
        end = len(chunk)
        offs = []
        append = offs.append
        pos = 0
        while pos + 16 <= end:
            incl = incl_at(chunk, pos + 8)[0]
            if incl > limit:
                raise CaptureFileError(
                    f"{st.path}: offset {file_pos + pos}: record {st.records + len(offs)} claims {incl} captured "
                    f"bytes, more than the largest possible record ({limit}); the file is corrupt")
            nxt = pos + 16 + incl
            if nxt > end:
                break
            append(pos)
            pos = nxt
        if offs:
            buf = np.frombuffer(chunk + bytes(PAD_BYTES), dtype=np.uint8)
            o = np.asarray(offs, dtype=np.int64)
            hdr = _gather(buf, o, 16).copy().view(dt).astype(np.int64)
            sec, frac, incl, orig = hdr[:, 0], hdr[:, 1], hdr[:, 2], hdr[:, 3]
            st.longer_than_snaplen += int(np.count_nonzero(incl > snaplen))
            n = len(o)
            yield RecordBatch(
                buf=buf, data_offset=o + 16, captured_bytes=incl.astype(np.uint32),
                wire_bytes=orig.astype(np.uint32), timestamp_ns=sec * 1_000_000_000 + frac * ns_per_tick,
                interface_id=np.zeros(n, np.uint16), link_type=np.full(n, link_type, np.int32),
                frame_index=np.arange(st.records, st.records + n, dtype=np.int64),
                snap_bytes=np.full(n, snaplen, np.uint32))
            st.records += n
        carry = chunk[pos:]
        file_pos += pos
        if not data:
            st.truncated_tail_bytes = len(carry)
            return


def _tsresol(value: int) -> tuple[int, int]:
    """if_tsresol -> (base, exponent): ticks are base**-exponent seconds."""
    return (2, value & 0x7F) if value & 0x80 else (10, value)


def _ticks_to_ns(ticks: np.ndarray, base: int, exp: int) -> np.ndarray:
    ticks = ticks.astype(np.int64)
    if base == 10:
        if exp <= 9:
            return ticks * 10 ** (9 - exp)
        return ticks // 10 ** (exp - 9)
    if exp > 32:  # finer than 2**-32 s: keep the integer part exact, round the fraction
        return (ticks >> exp) * 1_000_000_000 + ((ticks & ((1 << exp) - 1)) >> (exp - 32)) * 1_000_000_000 >> 32
    whole = ticks >> exp
    frac = ticks & ((1 << exp) - 1)
    return whole * 1_000_000_000 + ((frac * 1_000_000_000) >> exp)


def _parse_idb(st: _State, body: bytes, file_off: int) -> None:
    e = st.endian
    if len(body) < 8:
        raise CaptureFileError(f"{st.path}: offset {file_off}: interface description block too short")
    link_type, _res, snaplen = struct.unpack_from(e + "HHI", body, 0)
    base, exp, offset_s = 10, 6, 0
    pos = 8
    while pos + 4 <= len(body):
        code, length = struct.unpack_from(e + "HH", body, pos)
        val = body[pos + 4: pos + 4 + length]
        if code == 0:
            break
        if code == 9 and length >= 1:
            base, exp = _tsresol(val[0])
        elif code == 14 and length >= 8:
            offset_s = struct.unpack(e + "q", val[:8])[0]
        pos += 4 + ((length + 3) & ~3)
    st.interfaces.append((link_type, snaplen, base, exp, offset_s))
    st.link_types.add(link_type)


def _pcapng(fh, magic: bytes, st: _State, chunk_bytes: int) -> Iterator[RecordBatch]:
    carry = magic
    file_pos = 0
    while True:
        data = fh.read(chunk_bytes)
        chunk = carry + data
        end = len(chunk)
        pos = 0
        epb, spb = [], []  # (offset in chunk, global interface id)
        section_changed = False
        while pos + 12 <= end:
            btype = struct.unpack_from(st.endian + "I", chunk, pos)[0]
            if btype == PCAPNG_SHB:
                bom = chunk[pos + 8: pos + 12]
                if bom == b"\x4d\x3c\x2b\x1a":
                    endian = "<"
                elif bom == b"\x1a\x2b\x3c\x4d":
                    endian = ">"
                else:
                    raise CaptureFileError(f"{st.path}: offset {file_pos + pos}: section header with invalid "
                                           f"byte-order magic {bom.hex()}")
                if epb or spb:
                    section_changed = True
                    break
                st.endian = endian
            blen = struct.unpack_from(st.endian + "I", chunk, pos + 4)[0]
            if blen < 12 or blen % 4 or blen > MAX_RECORD_BYTES + 1024 * 64:
                raise CaptureFileError(f"{st.path}: offset {file_pos + pos}: block of type {btype:#x} has invalid "
                                       f"length {blen}; the file is corrupt")
            if pos + blen > end:
                break
            if btype == PCAPNG_SHB:
                st.section_first_if = len(st.interfaces)
            elif btype == 1:
                _parse_idb(st, chunk[pos + 8: pos + blen - 4], file_pos + pos)
            elif btype in (6, 2, 3):
                if btype == 3:
                    local_if = 0
                elif btype == 6:
                    local_if = struct.unpack_from(st.endian + "I", chunk, pos + 8)[0]
                else:
                    local_if = struct.unpack_from(st.endian + "H", chunk, pos + 8)[0]
                gif = st.section_first_if + local_if
                if gif >= len(st.interfaces):
                    raise CaptureFileError(
                        f"{st.path}: offset {file_pos + pos}: packet block names interface {local_if}, but this "
                        f"section defines only {len(st.interfaces) - st.section_first_if} interface(s)")
                (spb if btype != 6 else epb).append((pos, gif, btype))
            pos += blen
        batch = _pcapng_batch(chunk, epb + spb, st)
        if batch is not None:
            yield batch
        carry = chunk[pos:]
        file_pos += pos
        if section_changed:
            continue
        if not data:
            st.truncated_tail_bytes = len(carry)
            return


def _pcapng_batch(chunk: bytes, blocks: list, st: _State) -> RecordBatch | None:
    if not blocks:
        return None
    blocks.sort()
    e = st.endian
    buf = np.frombuffer(chunk + bytes(PAD_BYTES), dtype=np.uint8)
    pos = np.array([b[0] for b in blocks], np.int64)
    gif = np.array([b[1] for b in blocks], np.int64)
    btype = np.array([b[2] for b in blocks], np.int64)
    n = len(pos)
    u4 = np.dtype(e + "u4")
    hdr = _gather(buf, pos, 28).copy()
    w = hdr.view(u4).astype(np.int64)  # 7 words: type, len, if, tsh, tsl, cap, orig
    blen = w[:, 1]
    ticks = (w[:, 3] << 32) | w[:, 4]
    cap = w[:, 5].copy()
    orig = w[:, 6].copy()
    data_off = pos + 28
    # obsolete packet block: if id and drops are 16-bit, same layout otherwise
    # simple packet block: type, len, orig; data at +12; no timestamp
    is_spb = btype == 3
    if is_spb.any():
        snap = np.array([st.interfaces[g][1] or MAX_RECORD_BYTES for g in gif[is_spb]], np.int64)
        orig[is_spb] = w[is_spb, 2]
        cap[is_spb] = np.minimum(np.minimum(orig[is_spb], snap), blen[is_spb] - 16)
        data_off[is_spb] = pos[is_spb] + 12
        ticks[is_spb] = 0
    bad = cap > blen - 32
    bad &= ~is_spb
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise CaptureFileError(f"{st.path}: packet block {st.records + i}: captured length {cap[i]} does not fit in "
                               f"its block of {blen[i]} bytes; the file is corrupt")
    ts_ns = np.zeros(n, np.int64)
    link = np.zeros(n, np.int32)
    snap = np.zeros(n, np.uint32)
    for g in np.unique(gif):
        sel = gif == g
        link_type, snaplen, base, exp, offset_s = st.interfaces[g]
        ts_ns[sel] = _ticks_to_ns(ticks[sel], base, exp) + offset_s * 1_000_000_000
        link[sel] = link_type
        snap[sel] = snaplen
        if snaplen:
            st.longer_than_snaplen += int(np.count_nonzero(cap[sel] > snaplen))
    batch = RecordBatch(buf=buf, data_offset=data_off, captured_bytes=cap.astype(np.uint32),
                        wire_bytes=orig.astype(np.uint32), timestamp_ns=ts_ns, interface_id=gif.astype(np.uint16),
                        link_type=link, frame_index=np.arange(st.records, st.records + n, dtype=np.int64),
                        snap_bytes=snap)
    st.records += n
    return batch
