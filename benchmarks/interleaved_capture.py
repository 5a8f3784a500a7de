"""An interleaved multi-flow capture of N packets made from real captures.

Every IPv4 TCP record of the source captures (``data/captures/*.pcap*`` and the
third-party captures of ``/work/shared/data/external_captures``) is replayed
in copies. Each copy

- gets its own IPv4 addresses (a fresh block of ``10.0.0.0/8`` per copy, one
  address per distinct address of its source), so that every copy's flows are
  distinct; the IPv4 header checksum and the TCP checksum are updated for the
  new addresses (RFC 1624 incremental update), so a checksum that was right
  stays right;
- starts at its own time: copy ``c`` starts near ``c * spacing`` seconds (plus
  a seeded uniform jitter of one spacing), so many copies run at once and their
  packets are merged by timestamp, not concatenated.

The output is a classic pcap (nanosecond timestamps, Ethernet). Records of
Ethernet captures keep their frame (VLAN tags included); records of other link
types (Linux cooked, raw IP, PPP) get a 14-byte Ethernet header instead of
theirs, and their original (wire) length changes by the same number of bytes.
Otherwise every record keeps its captured bytes and its original length.
Copies cycle through the sources in a fixed order; the last copy is cut so
that the file holds exactly N records.

Memory is bounded: the sources (about 30 MB) are held once, and the output is
written window by window of trace time (``--window`` seconds).

Usage::

    python benchmarks/interleaved_capture.py --packets 1000000 --out /work/bigcaps/interleaved_1M.pcap
"""

from __future__ import annotations

import argparse
import glob
import os
import struct
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
EXTERNAL = Path(os.environ.get("TCPMODELS_EXTERNAL_CAPTURES", "/work/shared/data/external_captures"))
#: Source captures left out, with the reason.
EXCLUDED = {
    "tcpdump_kday4.pcap": "fuzzed: bogus IP lengths and timestamps 24 days apart",
}
ETH_HEADER = bytes.fromhex("020000000002" "020000000001" "0800")
NS_MAGIC = 0xA1B23C4D
SNAPLEN = 262144
FIRST_ADDRESS = 0x0A000001  # 10.0.0.1
LAST_ADDRESS = 0x0AFFFFFE  # 10.255.255.254
EPOCH_NS = 1_767_225_600 * 1_000_000_000  # 2026-01-01T00:00:00Z


@dataclass
class Source:
    """The IPv4 TCP records of one capture, as Ethernet frames, in time order."""

    name: str
    frames: np.ndarray  # uint8, all frames back to back
    offset: np.ndarray  # int64, where each frame starts in ``frames``
    caplen: np.ndarray  # int64 [bytes]
    origlen: np.ndarray  # int64 [bytes]
    rel_ns: np.ndarray  # int64, time since the source's first record [ns]
    ip_off: np.ndarray  # int64, IPv4 header offset inside the frame [bytes]
    tcp_off: np.ndarray  # int64, TCP header offset inside the frame, -1 if no TCP checksum to update [bytes]
    src_j: np.ndarray  # int64, index of the source address among the source's addresses
    dst_j: np.ndarray  # int64
    addresses: np.ndarray  # uint32, the source's distinct addresses

    @property
    def duration_ns(self) -> int:
        return int(self.rel_ns[-1]) if len(self.rel_ns) else 0


def default_sources() -> list[Path]:
    """The capture files used by default: ours, then the third-party ones (minus :data:`EXCLUDED`)."""
    files = sorted(glob.glob(str(ROOT / "data" / "captures" / "*.pcap*")))
    files += sorted(glob.glob(str(EXTERNAL / "*.pcap*")))
    return [Path(f) for f in files if Path(f).name not in EXCLUDED]


def _be16(buf: np.ndarray, idx: np.ndarray) -> np.ndarray:
    return (buf[idx].astype(np.int64) << 8) | buf[idx + 1]


def _be32(buf: np.ndarray, idx: np.ndarray) -> np.ndarray:
    return (_be16(buf, idx) << 16) | _be16(buf, idx + 2)


def load_source(path: Path) -> Source | None:
    """Read the IPv4 TCP records of ``path`` (``None`` if it has none)."""
    from tcpmodels.traces.decode import _link_layer
    from tcpmodels.traces.pcapfile import iter_batches

    frames, caplen, origlen, ts, ip_off, tcp_off, src, dst = [], [], [], [], [], [], [], []
    for b in iter_batches(path, chunk_bytes=64 << 20):
        cap = b.captured_bytes.astype(np.int64)
        reason = np.zeros(len(b), np.int8)
        proto, l3 = _link_layer(b.buf, b.data_offset, cap, b.link_type.astype(np.int64), reason)
        ok = (reason == 0) & (proto == 0x0800) & (cap >= l3 + 20)
        ip = b.data_offset + np.maximum(l3, 0)
        ok &= (b.buf[ip] >> 4 == 4) & ((b.buf[ip] & 0x0F) >= 5) & (b.buf[ip + 9] == 6)
        rows = np.flatnonzero(ok)
        if not len(rows):
            continue
        ip, l3r, capr = ip[rows], l3[rows], cap[rows]
        is_eth = b.link_type[rows] == 1
        ihl = (b.buf[ip] & 0x0F).astype(np.int64) * 4
        frag_off = _be16(b.buf, ip + 6) & 0x1FFF
        new_l3 = np.where(is_eth, l3r, 14)
        has_tcp_sum = (frag_off == 0) & (capr >= l3r + ihl + 18)
        for k, i in enumerate(rows):
            start = b.data_offset[i]
            if is_eth[k]:
                frames.append(b.buf[start: start + capr[k]].tobytes())
            else:
                frames.append(ETH_HEADER + b.buf[start + l3r[k]: start + capr[k]].tobytes())
        caplen.append(np.where(is_eth, capr, capr - l3r + 14))
        origlen.append(np.where(is_eth, b.wire_bytes[rows].astype(np.int64),
                                b.wire_bytes[rows].astype(np.int64) - l3r + 14))
        ts.append(b.timestamp_ns[rows])
        ip_off.append(new_l3)
        tcp_off.append(np.where(has_tcp_sum, new_l3 + ihl, -1))
        src.append(_be32(b.buf, ip + 12))
        dst.append(_be32(b.buf, ip + 16))
    if not frames:
        return None
    caplen_a = np.concatenate(caplen)
    ts_a = np.concatenate(ts)
    order = np.argsort(ts_a, kind="stable")
    offset = np.concatenate([[0], np.cumsum(caplen_a)[:-1]])
    blob = np.frombuffer(b"".join(frames), np.uint8)
    # frames back to back in time order
    lens = caplen_a[order]
    new_offset = np.concatenate([[0], np.cumsum(lens)[:-1]]).astype(np.int64)
    frames_sorted = blob[_ranges(offset[order], lens)]
    src_a, dst_a = np.concatenate(src)[order], np.concatenate(dst)[order]
    addresses, inv = np.unique(np.concatenate([src_a, dst_a]), return_inverse=True)
    n = len(order)
    return Source(name=path.name, frames=frames_sorted, offset=new_offset, caplen=lens,
                  origlen=np.concatenate(origlen)[order], rel_ns=ts_a[order] - ts_a[order][0],
                  ip_off=np.concatenate(ip_off)[order], tcp_off=np.concatenate(tcp_off)[order],
                  src_j=inv[:n].astype(np.int64), dst_j=inv[n:].astype(np.int64),
                  addresses=addresses.astype(np.uint32))


def _ranges(starts: np.ndarray, lens: np.ndarray) -> np.ndarray:
    """Concatenated ``arange(s, s + l)`` for every (start, length) pair."""
    lens = np.asarray(lens, np.int64)
    total = int(lens.sum())
    if total == 0:
        return np.zeros(0, np.int64)
    out_start = np.concatenate([[0], np.cumsum(lens)[:-1]])
    idx = np.arange(total, dtype=np.int64)
    idx += np.repeat(np.asarray(starts, np.int64) - out_start, lens)
    return idx


def _fold(s: np.ndarray) -> np.ndarray:
    """One's-complement fold of non-negative int64 sums to 16 bits."""
    for _ in range(3):
        s = (s & 0xFFFF) + (s >> 16)
    return s


def _checksum_update(old_sum: np.ndarray, old_words: np.ndarray, new_words: np.ndarray) -> np.ndarray:
    """RFC 1624 eqn. 3: HC' = ~(~HC + ~m + m') for 16-bit words ``old_words`` -> ``new_words`` (n, k)."""
    s = (~old_sum & 0xFFFF) + ((~old_words) & 0xFFFF).sum(axis=1) + new_words.sum(axis=1)
    return ~_fold(s) & 0xFFFF


def _words(addr_src: np.ndarray, addr_dst: np.ndarray) -> np.ndarray:
    a = np.stack([addr_src >> 16, addr_src & 0xFFFF, addr_dst >> 16, addr_dst & 0xFFFF], axis=1)
    return a.astype(np.int64)


def _put16(out: np.ndarray, pos: np.ndarray, val: np.ndarray) -> None:
    out[pos] = (val >> 8) & 0xFF
    out[pos + 1] = val & 0xFF


def _put32(out: np.ndarray, pos: np.ndarray, val: np.ndarray) -> None:
    _put16(out, pos, (val >> 16) & 0xFFFF)
    _put16(out, pos + 2, val & 0xFFFF)


def build(out: Path, packets: int, sources: list[Source], spacing_s: float = 0.2, seed: int = 1,
          window_s: float = 1.0, progress: bool = True) -> dict:
    """Write the interleaved capture; returns a summary (records, bytes, copies, duration, addresses)."""
    if packets < 1:
        raise ValueError(f"packets must be >= 1; got {packets}")
    rng = np.random.default_rng(seed)
    spacing = int(spacing_s * 1e9)
    # the schedule: copy c of source c % len(sources), starting near c * spacing, with its address block
    src_of, start, limit, base = [], [], [], []
    total = 0
    next_addr = FIRST_ADDRESS
    c = 0
    while total < packets:
        s = c % len(sources)
        n = min(len(sources[s].rel_ns), packets - total)
        if next_addr + len(sources[s].addresses) > LAST_ADDRESS:
            raise ValueError(f"more than {LAST_ADDRESS - FIRST_ADDRESS} addresses needed: fewer packets, please")
        src_of.append(s)
        start.append(c * spacing + int(rng.integers(0, max(spacing, 1))))
        limit.append(n)
        base.append(next_addr)
        next_addr += len(sources[s].addresses)
        total += n
        c += 1
    src_of, start, limit, base = (np.array(x, np.int64) for x in (src_of, start, limit, base))
    order = np.argsort(start, kind="stable")
    src_of, start, limit, base = src_of[order], start[order], limit[order], base[order]
    end = start + np.array([sources[s].rel_ns[n - 1] for s, n in zip(src_of, limit)], np.int64)
    # all sources in one flat array
    flat = np.concatenate([s.frames for s in sources])
    frame_base = np.concatenate([[0], np.cumsum([len(s.frames) for s in sources])[:-1]]).astype(np.int64)
    window = max(int(window_s * 1e9), 1)
    t_last = int(end.max())
    written = 0
    t0 = time.time()
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_suffix(out.suffix + ".part")
    with open(tmp, "wb") as fh:
        fh.write(struct.pack("<IHHiIII", NS_MAGIC, 2, 4, 0, 0, SNAPLEN, 1))
        active_lo = 0
        w0 = 0
        while w0 <= t_last:
            w1 = w0 + window
            while active_lo < len(start) and end[active_lo] < w0 and start[active_lo] < w0:
                # copies are ordered by start, not end: only skip a prefix that has ended
                active_lo += 1
            hi = int(np.searchsorted(start, w1, side="left"))
            parts_c, parts_i = [], []
            for k in range(active_lo, hi):
                if end[k] < w0:
                    continue
                sv = sources[src_of[k]]
                r = sv.rel_ns[: limit[k]]
                a = int(np.searchsorted(r, w0 - start[k], side="left"))
                b = int(np.searchsorted(r, w1 - start[k], side="left"))
                if b > a:
                    parts_c.append(np.full(b - a, k, np.int64))
                    parts_i.append(np.arange(a, b, dtype=np.int64))
            if parts_c:
                written += _emit(fh, sources, src_of, start, base, flat, frame_base,
                                 np.concatenate(parts_c), np.concatenate(parts_i))
            w0 = w1
            if progress and (w0 // window) % 200 == 0:
                print(f"  {written:,} records, {fh.tell() / 1e9:.2f} GB, {time.time() - t0:.0f} s",
                      file=sys.stderr, flush=True)
        size = fh.tell()
    os.replace(tmp, out)
    if written != packets:
        raise AssertionError(f"wrote {written} records, expected {packets}")
    return {"records": written, "bytes": size, "copies": len(start), "duration_s": (t_last + 1) / 1e9,
            "addresses": int(next_addr - FIRST_ADDRESS), "seconds": time.time() - t0}


def _emit(fh, sources, src_of, start, base, flat, frame_base, copy, idx) -> int:
    """Write the records ``idx`` of copies ``copy`` in timestamp order; returns how many."""
    s = src_of[copy]
    # gather per-record attributes from their sources
    n = len(copy)
    ts = np.empty(n, np.int64)
    caplen, origlen, foff, ip_off, tcp_off, sj, dj, old_s, old_d = (np.empty(n, np.int64) for _ in range(9))
    for q in np.unique(s):
        m = s == q
        sv = sources[q]
        i = idx[m]
        ts[m] = start[copy[m]] + sv.rel_ns[i]
        caplen[m], origlen[m], ip_off[m], tcp_off[m] = sv.caplen[i], sv.origlen[i], sv.ip_off[i], sv.tcp_off[i]
        foff[m] = frame_base[q] + sv.offset[i]
        sj[m], dj[m] = sv.src_j[i], sv.dst_j[i]
        old_s[m], old_d[m] = sv.addresses[sj[m]], sv.addresses[dj[m]]
    order = np.argsort(ts, kind="stable")
    ts, caplen, origlen, foff, ip_off, tcp_off = ts[order], caplen[order], origlen[order], foff[order], \
        ip_off[order], tcp_off[order]
    copy, sj, dj, old_s, old_d = copy[order], sj[order], dj[order], old_s[order], old_d[order]
    new_s, new_d = base[copy] + sj, base[copy] + dj
    rec_len = caplen + 16
    rec_start = np.concatenate([[0], np.cumsum(rec_len)[:-1]]).astype(np.int64)
    out = np.zeros(int(rec_len.sum()), np.uint8)
    ts_abs = EPOCH_NS + ts
    hdr = np.stack([ts_abs // 1_000_000_000, ts_abs % 1_000_000_000, caplen, origlen], axis=1).astype("<u4")
    out[rec_start[:, None] + np.arange(16)] = hdr.view(np.uint8).reshape(n, 16)
    data = rec_start + 16
    out[_ranges(data, caplen)] = flat[_ranges(foff, caplen)]
    ip = data + ip_off
    old_w, new_w = _words(old_s, old_d), _words(new_s, new_d)
    _put16(out, ip + 10, _checksum_update(_be16(out, ip + 10), old_w, new_w))
    _put32(out, ip + 12, new_s)
    _put32(out, ip + 16, new_d)
    t = tcp_off >= 0
    pos = data[t] + tcp_off[t] + 16
    _put16(out, pos, _checksum_update(_be16(out, pos), old_w[t], new_w[t]))
    fh.write(out.tobytes())
    return n


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--packets", type=int, default=1_000_000, help="records in the output")
    ap.add_argument("--out", type=Path, required=True, help="output classic pcap")
    ap.add_argument("--spacing", type=float, default=0.2, help="seconds between the starts of two copies")
    ap.add_argument("--window", type=float, default=1.0, help="seconds of trace time written at once")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--source", type=Path, nargs="*", help="source captures (default: ours + third-party)")
    opts = ap.parse_args(argv)
    paths = opts.source or default_sources()
    sources = []
    for p in paths:
        sv = load_source(p)
        if sv is not None:
            sources.append(sv)
            print(f"source {sv.name}: {len(sv.rel_ns)} IPv4 TCP records, {sv.duration_ns / 1e9:.2f} s, "
                  f"{len(sv.addresses)} addresses", file=sys.stderr)
    summary = build(opts.out, opts.packets, sources, opts.spacing, opts.seed, opts.window)
    print(f"{opts.out}: {summary['records']:,} records, {summary['bytes'] / 1e6:.0f} MB, {summary['copies']} copies "
          f"of {len(sources)} sources, {summary['duration_s']:.0f} s of trace, {summary['addresses']} addresses, "
          f"written in {summary['seconds']:.0f} s")


if __name__ == "__main__":
    main()
