"""Hostile and careless input to the capture reader: a clear error or a counted warning, never a crash.

The cases come from a battery of 1960 mutated captures (issue "Reliability battery"): corrupt
pcapng interface options, timestamps no int64 nanosecond count holds, wire lengths shorter
than captured lengths, a zero chunk size and a gzip decompression bomb. The last test is the
battery itself in small: seeded mutations of real captures, bounded in count and time.
"""

from __future__ import annotations

import gzip
import struct
import time
import warnings

import numpy as np
import pytest
from trace_fixtures import CAPTURES
from trace_synth import _block, _opt, ether, ipv4, tcp, write_pcap

from tcpmodels.traces import CaptureFileError, TraceWarning, read_pcap
from tcpmodels.traces.pcapfile import MIN_CHUNK_BYTES

T0 = 1_700_000_000_000_000_000


def seg(seq=1000, payload=100):
    return ether(ipv4(tcp(seq=seq, payload=payload)))


def pcapng(options: bytes, ticks: list[int], e: str = "<") -> bytes:
    """One section, one Ethernet interface with the given IDB options, one EPB per tick value."""
    out = _block(0x0A0D0D0A, struct.pack(e + "IHHq", 0x1A2B3C4D, 1, 0, -1), e)
    out += _block(1, struct.pack(e + "HHI", 1, 0, 0) + options + _opt(0, b"", e), e)
    for i, t in enumerate(ticks):
        frame = seg(seq=1000 + 100 * i)
        out += _block(6, struct.pack(e + "IIIII", 0, t >> 32, t & 0xFFFFFFFF, len(frame), len(frame)) + frame, e)
    return out


@pytest.mark.parametrize("tsresol", [63, 20, 0xC0, 0xE4, 0xFF])
def test_timestamp_resolution_no_64_bit_count_can_hold_is_an_error(tmp_path, tsresol):
    p = tmp_path / "resol.pcapng"
    p.write_bytes(pcapng(_opt(9, bytes([tsresol]), "<"), [1, 2]))
    with pytest.raises(CaptureFileError, match=rf"resol.pcapng: offset \d+: interface 0 has if_tsresol "
                                               rf"{tsresol:#04x}.*expected at most 10\^-19 s"):
        read_pcap(p)


@pytest.mark.parametrize("offset_s", [2**62, -(2**62), 10**10])
def test_timestamp_offset_beyond_int64_nanoseconds_is_an_error(tmp_path, offset_s):
    p = tmp_path / "offset.pcapng"
    p.write_bytes(pcapng(_opt(14, struct.pack("<q", offset_s), "<"), [1]))
    with pytest.raises(CaptureFileError, match=rf"offset.pcapng: offset \d+: interface 0 has if_tsoffset "
                                               rf"{offset_s} s; expected at most 9223372036 s"):
        read_pcap(p)


def test_ticks_that_overflow_int64_nanoseconds_are_skipped_and_counted(tmp_path):
    # if_tsresol = 1: ticks of 0.1 s; 2**62 ticks is 1.5e10 years, 10**10 ticks is 2286 (past 2262)
    p = tmp_path / "wrap.pcapng"
    good = 17_000_000_000  # 2023 in tenths of a second
    p.write_bytes(pcapng(_opt(9, bytes([1]), "<"), [good, 2**62, 2**64 - 1, good + 1]))
    with pytest.warns(TraceWarning, match=r"skipped 2 of 4 records: 2 unrepresentable_timestamp"):
        t = read_pcap(p)
    acc = t.attrs["accounting"]
    assert acc.records_read == 4 and acc.tcp_parsed == 2 and acc.skipped == {"unrepresentable_timestamp": 2}
    assert t["timestamp_ns"].tolist() == [good * 100_000_000, (good + 1) * 100_000_000]


def test_timestamps_before_1970_or_after_2100_are_kept_and_counted(tmp_path):
    p = tmp_path / "old.pcapng"
    # microsecond ticks with an offset of -100 years puts the packets in 1923
    p.write_bytes(pcapng(_opt(14, struct.pack("<q", -100 * 365 * 86400), "<"), [1_700_000_000_000_000] * 3))
    with pytest.warns(TraceWarning, match="3 records timestamped before 1970 or after 2100"):
        t = read_pcap(p)
    assert len(t) == 3 and (t["timestamp_ns"] < 0).all()
    assert t.attrs["accounting"].notes["timestamps_before_1970_or_after_2100"] == 3


def test_wire_length_shorter_than_captured_is_raised_and_counted(tmp_path):
    p = tmp_path / "orig.pcap"
    frame = seg()
    write_pcap(p, [(T0, frame), (T0 + 1, frame)], orig_lens=[10, len(frame)])
    with pytest.warns(TraceWarning, match="1 records whose wire length is shorter than their captured length"):
        t = read_pcap(p)
    assert len(t) == 2 and t.attrs["accounting"].notes["wire_shorter_than_captured"] == 1
    assert (t["payload_bytes"] == 100).all()


@pytest.mark.parametrize("chunk", [0, -1, MIN_CHUNK_BYTES - 1])
def test_chunk_size_below_the_minimum_is_an_error(chunk):
    with pytest.raises(ValueError, match=rf"chunk_bytes \[bytes\] must be at least {MIN_CHUNK_BYTES}; got {chunk}"):
        read_pcap(CAPTURES / "reno_bulk.pcap.gz", chunk_bytes=chunk)


@pytest.mark.parametrize("chunk", ["64k", 65536.0, True])
def test_chunk_size_that_is_not_an_integer_is_an_error(chunk):
    with pytest.raises(TypeError, match=r"chunk_bytes \[bytes\] must be an integer; got"):
        read_pcap(CAPTURES / "reno_bulk.pcap.gz", chunk_bytes=chunk)


def test_gzip_bomb_is_refused_quickly_and_can_be_allowed(tmp_path):
    p = tmp_path / "bomb.pcap.gz"
    header = struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1)
    p.write_bytes(gzip.compress(header + bytes(16 * 5_000_000), compresslevel=9))  # 5M empty records, 80 MB
    assert p.stat().st_size < 200_000
    start = time.perf_counter()
    with pytest.raises(CaptureFileError, match=r"bomb.pcap.gz: gzip data expands more than 1000 times.*"
                                               r"max_gzip_expansion=None"):
        read_pcap(p)
    assert time.perf_counter() - start < 60  # a bound against a hang, not a speed claim
    with pytest.raises(ValueError, match=r"max_gzip_expansion \[-\] must be a finite number >= 1"):
        read_pcap(p, max_gzip_expansion=0)
    with pytest.warns(TraceWarning, match=r"skipped 5000000 of 5000000 records: 5000000 truncated_headers"):
        t = read_pcap(p, max_gzip_expansion=None)
    assert len(t) == 0


def _mutants(data: bytes, rng: np.random.Generator, n: int):
    """Seeded mutations of one capture: byte flips, 32-bit field overwrites with edge values, cuts, splices."""
    edge = [0, 1, 0x7F, 0x80, 0xFF, 0xFFFF, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFF]
    for i in range(n):
        b = bytearray(data)
        kind = i % 4
        if kind == 0:
            for pos in rng.integers(0, len(b), size=int(rng.integers(1, 8))):
                b[pos] = int(rng.integers(0, 256))
        elif kind == 1:
            pos = int(rng.integers(0, len(b) - 4))
            b[pos:pos + 4] = struct.pack("<I", edge[int(rng.integers(0, len(edge)))])
        elif kind == 2:
            b = b[: int(rng.integers(1, len(b)))]
        else:
            a, c = sorted(int(x) for x in rng.integers(0, len(b), size=2))
            b = b[:a] + b[c:] + b[a:c]
        yield bytes(b)


@pytest.mark.parametrize("name", ["reno_bulk.pcap.gz", "mptcp_2path.pcapng.gz", "short_flows_any.pcap.gz"])
def test_seeded_mutants_of_real_captures_give_a_table_or_a_clear_error(tmp_path, name):
    """Every mutant gives either a table whose accounting holds and whose values are possible,
    or a CaptureFileError naming the file; never another exception, a hang or a silent drop."""
    raw = gzip.decompress((CAPTURES / name).read_bytes())[:60_000]  # the header and the first records
    rng = np.random.default_rng(20261124)
    p = tmp_path / ("mutant" + (".pcapng" if "pcapng" in name else ".pcap"))
    outcomes = {"table": 0, "error": 0}
    deadline = time.monotonic() + 120
    for mutant in _mutants(raw, rng, 120):
        assert time.monotonic() < deadline, "the mutant battery took more than 120 s"
        p.write_bytes(mutant)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", TraceWarning)
                t = read_pcap(p)
        except CaptureFileError as exc:
            assert str(p) in str(exc)
            outcomes["error"] += 1
            continue
        acc = t.attrs["accounting"]
        assert acc.tcp_parsed + sum(acc.skipped.values()) == acc.records_read == len(t) + sum(acc.skipped.values())
        assert (t["payload_bytes"] >= 0).all()
        assert np.isfinite(t["timestamp_s"]).all()
        outcomes["table"] += 1
    assert outcomes["table"] > 0 and outcomes["error"] > 0  # the battery exercises both paths
