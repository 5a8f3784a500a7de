"""Trim a classic pcap to its first seconds, and repair trimmed copies that lost each record's original length.

A trimmed capture must keep what the wire carried: the record header's original
length (``orig_len``) says how long the frame was, while the captured length says
how much of it the snap length kept. Copying records through a packet-writing
library that sets ``orig_len = len(data)`` loses that, and a reader that trusts the
frame length (tshark does) then sees segments shorter than their IP headers say.
:func:`trim_capture` copies record headers byte for byte; :func:`repair_original_lengths`
restores the original length of records trimmed the lossy way, from the IP header.

References
----------
.. [1] IETF draft-ietf-opsawg-pcap, "PCAP Capture File Format", Sec. 5 (Packet Record).
"""

from __future__ import annotations

import gzip
import os
import struct
from pathlib import Path

from tcpmodels.records import reproducible_gzip_writer

from .pcapfile import PCAP_MAGIC, CaptureFileError

__all__ = ["trim_capture", "repair_original_lengths"]

#: Link types whose IP header :func:`repair_original_lengths` can find: (header length [bytes],
#: offset of the 16-bit EtherType-style protocol field or None): Ethernet, raw IP, Linux cooked v1 and v2.
_LINK_HEADER_BYTES = {1: (14, 12), 101: (0, None), 113: (16, 14), 276: (20, 0)}


def _records(path: Path):
    """(file header bytes, endian, iterator of (16-byte record header, data)) of a classic pcap, gzip or not."""
    with open(path, "rb") as probe:
        opener = gzip.open if probe.read(2) == b"\x1f\x8b" else open
    fh = opener(path, "rb")
    header = fh.read(24)
    if header[:4] not in PCAP_MAGIC:
        fh.close()
        raise CaptureFileError(f"{path}: offset 0: not a classic pcap file (magic {header[:4].hex()}); "
                               "trimming handles classic pcap only (convert pcapng with editcap -F pcap)")
    endian = PCAP_MAGIC[header[:4]][0]

    def walk():
        with fh:
            index = 0
            while True:
                rec = fh.read(16)
                if len(rec) < 16:
                    return
                incl = struct.unpack(endian + "I", rec[8:12])[0]
                data = fh.read(incl)
                if len(data) < incl:
                    raise CaptureFileError(f"{path}: record {index} is cut short ({len(data)} of {incl} bytes)")
                yield rec, data
                index += 1

    return header, endian, walk()


def trim_capture(src: str | os.PathLike, dst: str | os.PathLike, *, seconds: float) -> dict:
    """Copy the records of the first ``seconds`` of a classic pcap to ``dst`` (gzip), headers unchanged.

    Parameters
    ----------
    src : path-like
        Classic pcap, optionally gzip-compressed.
    dst : path-like
        Output file, written gzip-compressed (level 9).
    seconds : float
        Keep records whose timestamp is at most this long after the first record's. [s]

    Returns
    -------
    dict
        ``packets_in_source``, ``packets_kept``, ``seconds_kept``.
    """
    if not seconds >= 0:
        raise ValueError(f"seconds [s] must be >= 0; got {seconds}")
    header, endian, records = _records(Path(src))
    ns_per_tick = PCAP_MAGIC[header[:4]][1]
    Path(dst).parent.mkdir(parents=True, exist_ok=True)
    kept = total = 0
    t0 = None
    with reproducible_gzip_writer(dst) as out:
        out.write(header)
        for rec, data in records:
            total += 1
            sec, frac = struct.unpack(endian + "II", rec[:8])
            t = sec * 1_000_000_000 + frac * ns_per_tick
            t0 = t if t0 is None else t0
            if t - t0 <= seconds * 1e9:
                out.write(rec + data)
                kept += 1
    return {"packets_in_source": total, "packets_kept": kept, "seconds_kept": seconds}


def _ip_frame_bytes(data: bytes, link_header: int, proto_at: int | None) -> int | None:
    """Frame length implied by the IP header (link header + IP length), or None where there is no IP header."""
    ip = data[link_header:]
    if proto_at is not None:
        if len(data) < proto_at + 2 or struct.unpack(">H", data[proto_at:proto_at + 2])[0] not in (0x0800, 0x86DD):
            return None
    if len(ip) < 1:
        return None
    version = ip[0] >> 4
    if version == 4 and len(ip) >= 4:
        return link_header + struct.unpack(">H", ip[2:4])[0]
    if version == 6 and len(ip) >= 6:
        payload = struct.unpack(">H", ip[4:6])[0]
        return link_header + 40 + payload if payload else None  # 0: a jumbogram, length elsewhere
    return None


def repair_original_lengths(src: str | os.PathLike, dst: str | os.PathLike) -> dict:
    """Restore ``orig_len`` of records whose original length was overwritten by the captured length.

    A record is repaired when its original length equals its captured length and
    its IP header says the frame was longer; the original length becomes the
    link header plus the IP length. Everything else is copied unchanged.

    Parameters
    ----------
    src, dst : path-like
        Classic pcap in (gzip or not); gzip pcap out. They may not be the same file.

    Returns
    -------
    dict
        ``records``, ``repaired`` and ``link_type``.

    Raises
    ------
    CaptureFileError
        For a pcapng file or a link type whose IP header it cannot find.
    """
    if Path(src).resolve() == Path(dst).resolve():
        raise ValueError(f"src and dst must differ; got {src} for both")
    header, endian, records = _records(Path(src))
    link_type = struct.unpack(endian + "I", header[20:24])[0] & 0xFFFF
    if link_type not in _LINK_HEADER_BYTES:
        raise CaptureFileError(f"{src}: link type {link_type} is not one whose IP header this repair can find "
                               f"(supported: {sorted(_LINK_HEADER_BYTES)})")
    link_header, proto_at = _LINK_HEADER_BYTES[link_type]
    total = repaired = 0
    with reproducible_gzip_writer(dst) as out:
        out.write(header)
        for rec, data in records:
            total += 1
            incl, orig = struct.unpack(endian + "II", rec[8:16])
            implied = _ip_frame_bytes(data, link_header, proto_at)
            if orig == incl and implied is not None and implied > orig:
                rec = rec[:12] + struct.pack(endian + "I", implied)
                repaired += 1
            out.write(rec + data)
    return {"records": total, "repaired": repaired, "link_type": link_type}
