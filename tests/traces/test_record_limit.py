"""One oversized record cannot exhaust memory or time (issue 50, finding 2), and no pcapng block is dropped unsaid.

The battery's cases, made small: a header snap length of 0xFFFFFFFF that used to raise the per-record limit
to 4 GiB (a 1.5 MB .gz file took 109 s and 4.6 GB), a partial record copied again on every small chunk (a
65 kB file ran for minutes with ``chunk_bytes=4096``), and a pcapng packet block whose type has one bit flipped.
"""

from __future__ import annotations

import gzip
import struct
import time
import tracemalloc
import warnings

import numpy as np
import pytest
from trace_synth import _block, _opt, ether, ipv4, tcp, write_pcap

from tcpmodels.traces import CaptureFileError, TraceWarning, read_pcap
from tcpmodels.traces.pcapfile import MAX_RECORD_BYTES, RECORD_LIMIT_CEILING, iter_batches, set_kernel

T0 = 1_700_000_000_000_000_000


def seg(seq=1000, payload=100):
    return ether(ipv4(tcp(seq=seq, payload=payload)))


def _classic(records: list[bytes], snaplen: int) -> bytes:
    """A classic pcap (µs, little-endian) of raw records; each is (16-byte header + data) as given."""
    return struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, snaplen, 1) + b"".join(records)


def _record(frame: bytes, incl: int | None = None, i: int = 0) -> bytes:
    n = len(frame) if incl is None else incl
    return struct.pack("<IIII", T0 // 10**9 + i, 0, n, max(n, len(frame))) + frame


def _read(path, **kw):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", TraceWarning)
        t = read_pcap(path, **kw)
    acc = t.attrs["accounting"]
    assert acc.tcp_parsed + sum(acc.skipped.values()) == acc.records_read
    return t, acc, " ".join(str(w.message) for w in caught)


@pytest.fixture(params=["c", "numpy"])
def kernel(request):
    from tcpmodels.traces.pcapfile import kernel_available

    if request.param == "c" and not kernel_available():
        pytest.skip("compiled kernel not built")
    previous = set_kernel(request.param)
    yield request.param
    set_kernel(previous)


def test_a_header_snaplen_does_not_raise_the_record_limit(tmp_path, kernel):
    """Snap length 0xFFFFFFFF, one 300 KiB record between two segments: skipped and counted, the others read;
    with max_record_bytes raised it is read."""
    big = seg(seq=5000) + bytes(300 * 1024)
    p = tmp_path / "big.pcap"
    p.write_bytes(_classic([_record(seg(1000), i=0), _record(big, i=1), _record(seg(2000), i=2)], 0xFFFFFFFF))
    for chunk in (4096, 1 << 16, 32 << 20):
        t, acc, text = _read(p, chunk_bytes=chunk)
        assert acc.records_read == 3 and acc.skipped == {"record_over_limit": 1}, (chunk, acc)
        assert list(t["frame_index"]) == [0, 2] and list(t["seq"]) == [1000, 2000]
        assert "1 record_over_limit" in text and "max_record_bytes" in text
    t, acc, _ = _read(p, max_record_bytes=1 << 20)
    assert acc.records_read == 3 and not acc.skipped and list(t["frame_index"]) == [0, 1, 2]


def test_a_record_over_both_limit_and_snaplen_is_corruption(tmp_path, kernel):
    p = tmp_path / "corrupt.pcap"
    p.write_bytes(_classic([_record(seg(1000)), _record(seg(2000), incl=MAX_RECORD_BYTES + 1)], 65535))
    with pytest.raises(CaptureFileError, match=r"corrupt.pcap: offset 194: record 1 claims 262145 captured bytes.*"
                                               r"max_record_bytes.*snap length \(65535\)"):
        read_pcap(p)


def test_a_4_gib_record_in_a_small_gzip_is_dropped_in_linear_time_and_bounded_memory(tmp_path, kernel):
    """The battery's memory bomb: 48 MB of zeros after a record header claiming 4 GiB, gzip to ~50 kB. The record
    runs past the end of the file: a truncated tail, counted; memory stays near the chunk size, not the record;
    with 4 KiB chunks too (copying the partial record on every chunk took minutes)."""
    body = _classic([_record(seg(1000)), struct.pack("<IIII", T0 // 10**9, 0, 0xFFFFFFF0, 0xFFFFFFF0)], 0xFFFFFFFF)
    p = tmp_path / "bomb.pcap.gz"
    p.write_bytes(gzip.compress(body + bytes(48 << 20), compresslevel=9))
    assert p.stat().st_size < 100_000
    for chunk in (4096, 1 << 20):
        tracemalloc.start()
        start = time.perf_counter()
        t, acc, text = _read(p, chunk_bytes=chunk)
        elapsed = time.perf_counter() - start
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        assert acc.records_read == 1 and len(t) == 1 and acc.truncated_tail_bytes == 16 + (48 << 20)
        assert "file ends in the middle of a record" in text
        assert peak < 8 * max(chunk, 1 << 20), (chunk, peak)  # the chunk and the decoder's arrays, not 48 MB
        assert elapsed < 30, (chunk, elapsed)  # a bound against the quadratic copy (minutes), not a speed claim


def test_small_chunks_read_big_records_once(tmp_path, kernel):
    """Records of 200 KiB read with 4 KiB chunks: the same table as one chunk, and each record's bytes read into
    one buffer (the next read is as long as the partial record needs), so the chunks number about the records."""
    frames = [seg(seq=1000 + i, payload=60000) + bytes(140 * 1024) for i in range(20)]
    p = tmp_path / "many.pcap"
    write_pcap(p, [(T0 + i, f) for i, f in enumerate(frames)])
    whole, _, _ = _read(p)
    small, _, _ = _read(p, chunk_bytes=4096)
    assert whole.equals(small)
    batches = list(iter_batches(p, chunk_bytes=4096))
    assert sum(len(b) for b in batches) == 20 and len(batches) <= 21
    assert sum(len(b.buf) for b in batches) < 2 * p.stat().st_size  # no record copied chunk after chunk


def _pcapng(blocks: list[tuple[int, bytes]], e="<") -> bytes:
    out = _block(0x0A0D0D0A, struct.pack(e + "IHHq", 0x1A2B3C4D, 1, 0, -1), e)
    out += _block(1, struct.pack(e + "HHI", 1, 0, 0) + _opt(0, b"", e), e)
    for btype, frame in blocks:
        out += _block(btype, struct.pack(e + "IIIII", 0, 0, 1000, len(frame), len(frame)) + frame, e)
    return out


@pytest.mark.parametrize("bit", [0, 3, 8, 17, 31])
def test_a_pcapng_block_with_a_flipped_type_bit_is_counted_and_said(tmp_path, bit):
    btype = 6 ^ (1 << bit)
    p = tmp_path / "flip.pcapng"
    p.write_bytes(_pcapng([(6, seg(1000)), (btype, seg(2000)), (6, seg(3000))]))
    t, acc, text = _read(p)
    assert len(t) == 2 and acc.notes == {f"unknown_pcapng_block_{btype:#x}": 1}
    assert f"1 pcapng block(s) of unknown type {btype:#x} skipped" in text


def test_a_packet_block_that_became_a_name_resolution_block_is_said(tmp_path):
    """Bit 1 of type 6 flipped gives 4, a name resolution block: a quiet type, but an EPB's body does not parse
    as one (its interface id reads as the end of the records, its packet is left over)."""
    p = tmp_path / "nrb.pcapng"
    p.write_bytes(_pcapng([(6, seg(1000)), (4, seg(2000)), (6, seg(3000))]))
    t, acc, text = _read(p)
    assert len(t) == 2 and acc.notes == {"malformed_pcapng_block_0x4": 1}
    assert "1 pcapng block(s) of type 0x4 skipped whose content does not parse as that type" in text
    # a real one (an IPv4 record, its end, no options) stays quiet
    record = struct.pack("<HH", 1, 8) + bytes([10, 0, 0, 1]) + b"h1\0\0" + struct.pack("<HH", 0, 0)
    p.write_bytes(_pcapng([(6, seg(1000))]) + _block(4, record, "<"))
    t, acc, text = _read(p)
    assert len(t) == 1 and not acc.notes and text == ""


def test_quiet_pcapng_blocks_stay_quiet(tmp_path):
    """Name resolution and interface statistics blocks carry no packet: skipped without a word, as before."""
    p = tmp_path / "quiet.pcapng"
    p.write_bytes(_pcapng([(6, seg(1000))]) + _block(4, b"\0" * 4, "<") + _block(5, b"\0" * 12, "<"))
    t, acc, text = _read(p)
    assert len(t) == 1 and not acc.notes and text == ""


def test_an_oversized_pcapng_packet_block_is_skipped_unbuffered_and_its_trailer_checked(tmp_path):
    big = seg(5000) + bytes(400 * 1024)  # beyond the block limit (records of 256 KiB + 64 KiB of options)
    p = tmp_path / "bigblock.pcapng"
    data = _pcapng([(6, seg(1000)), (6, big), (6, seg(3000))])
    p.write_bytes(data)
    for chunk in (4096, 1 << 20):
        t, acc, text = _read(p, chunk_bytes=chunk)
        assert acc.records_read == 3 and acc.skipped == {"record_over_limit": 1} and list(t["seq"]) == [1000, 3000]
        assert list(t["frame_index"]) == [0, 2]
    t, acc, _ = _read(p, max_record_bytes=1 << 20)
    assert not acc.skipped and len(t) == 3
    # the same block whose trailing length disagrees: corruption, named
    start = data.index(big) - 28
    blen = struct.unpack_from("<I", data, start + 4)[0]
    bad = bytearray(data)
    bad[start + blen - 4: start + blen] = struct.pack("<I", blen + 4)
    p.write_bytes(bytes(bad))
    with pytest.raises(CaptureFileError, match=rf"bigblock.pcapng: offset {start}: block of type 0x6 claims {blen} "
                                               r"bytes but ends with the length"):
        read_pcap(p)


@pytest.mark.parametrize("value, error", [(0, ValueError), (-1, ValueError), (RECORD_LIMIT_CEILING + 1, ValueError),
                                          (2**62, ValueError), (1.5, TypeError), ("262144", TypeError),
                                          (True, TypeError)])
def test_max_record_bytes_is_checked(tmp_path, value, error):
    p = tmp_path / "one.pcap"
    write_pcap(p, [(T0, seg())])
    with pytest.raises(error, match=r"max_record_bytes \[bytes\]"):
        read_pcap(p, max_record_bytes=value)


def test_accounting_holds_on_records_skipped_for_every_reason(tmp_path):
    """An ARP frame, a 300 KiB record, a timestamp no int64 holds and a good segment: read = parsed + skipped."""
    arp = b"\x02" * 12 + b"\x08\x06" + bytes(28)
    late = struct.pack("<IIII", 0xFFFFFFFF, 0, len(seg()), len(seg())) + seg()
    p = tmp_path / "mixed.pcap"
    p.write_bytes(_classic([_record(arp), _record(seg(7) + bytes(300 * 1024)), late, _record(seg(9))], 0xFFFFFFFF))
    t, acc, _ = _read(p)
    assert acc.records_read == 4 and acc.tcp_parsed == len(t) == 2
    assert acc.skipped["record_over_limit"] == 1 and sum(acc.skipped.values()) == 2
    assert np.array_equal(t["frame_index"], [2, 3])
