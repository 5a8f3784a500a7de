"""benchmarks/interleaved_capture.py: copies of real captures, distinct addresses, merged by time, checksums kept."""

from __future__ import annotations

import importlib.util
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest
from trace_fixtures import CAPTURES
from trace_synth import ether, ipv4, sll2, tcp, write_pcap

from tcpmodels.traces import TraceWarning, flows, read_pcap
from tcpmodels.traces.pcapfile import iter_batches

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "interleaved_capture.py"
_spec = importlib.util.spec_from_file_location("interleaved_capture", SCRIPT)
ic = importlib.util.module_from_spec(_spec)
sys.modules.setdefault("interleaved_capture", ic)  # dataclasses look their module up
_spec.loader.exec_module(ic)

SOURCES = ["cubic_bulk.pcap.gz", "short_flows_any.pcap.gz", "p5_bottleneck_main-a1.65-n32-b5-s0.pcap.gz"]


def _read(path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TraceWarning)
        return read_pcap(path)


def _sum16(data: bytes) -> int:
    if len(data) % 2:
        data += b"\0"
    s = int(np.frombuffer(data, ">u2").astype(np.int64).sum())
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return s


def _checksums_ok(frame: bytes, ip: int) -> tuple[bool, bool]:
    """(IPv4 header checksum verifies, TCP checksum verifies) of one frame; TCP False when not all captured."""
    ihl = (frame[ip] & 0x0F) * 4
    ip_ok = _sum16(frame[ip: ip + ihl]) == 0xFFFF
    total = int.from_bytes(frame[ip + 2: ip + 4], "big")
    seg = frame[ip + ihl: ip + total]
    if total == 0 or len(seg) != total - ihl:
        return ip_ok, False
    pseudo = frame[ip + 12: ip + 20] + b"\0\x06" + (total - ihl).to_bytes(2, "big")
    return ip_ok, _sum16(pseudo + seg) == 0xFFFF


def _counts_in_output(path) -> np.ndarray:
    out = np.zeros(2, np.int64)
    for b in iter_batches(path):
        for k in range(len(b)):
            start = b.data_offset[k]
            out += _checksums_ok(b.buf[start: start + b.captured_bytes[k]].tobytes(), 14)
    return out


def _counts_in_source(src, first: int | None = None) -> np.ndarray:
    out = np.zeros(2, np.int64)
    for k in range(len(src.rel_ns) if first is None else first):
        frame = src.frames[src.offset[k]: src.offset[k] + src.caplen[k]].tobytes()
        out += _checksums_ok(frame, int(src.ip_off[k]))
    return out


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    sources = [ic.load_source(CAPTURES / name) for name in SOURCES]
    path = tmp_path_factory.mktemp("ic") / "inter.pcap"
    per_cycle = sum(len(s.rel_ns) for s in sources)
    packets = 2 * per_cycle + 1000  # two copies of each source, and the start of a third of the first
    summary = ic.build(path, packets, sources, spacing_s=0.5, seed=3, progress=False)
    return path, sources, packets, summary


def test_exact_count_time_order_and_lengths(built):
    path, sources, packets, summary = built
    assert summary["records"] == packets and summary["copies"] == 7
    table = _read(path)
    assert len(table) == packets and table.attrs["accounting"].records_read == packets
    ts = table["timestamp_ns"].to_numpy()
    assert np.all(np.diff(ts) >= 0)
    # interleaved, not concatenated: copies overlap in time, so consecutive packets change copy often
    src = table["src_addr"].astype(str).to_numpy()
    assert np.count_nonzero(src[1:] != src[:-1]) > 10 * summary["copies"]
    # every record keeps its original length (Ethernet sources) or changes it by the header swap (SLL2: 20 -> 14)
    expect = sum(int(s.origlen.sum()) for s in sources) * 2 + int(sources[0].origlen[:1000].sum())
    assert int(table["wire_bytes"].sum()) == expect


def test_copies_are_distinct_flows_with_the_sources_payload(built):
    path, sources, packets, _ = built
    table = _read(path)
    singles = [_read(CAPTURES / name) for name in SOURCES]
    assert int(table["payload_bytes"].sum()) == 2 * sum(int(t["payload_bytes"].sum()) for t in singles) + int(
        singles[0]["payload_bytes"].iloc[:1000].sum())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        full = flows(table)
        per_source = [len(flows(t)) for t in singles]
    # the cut third copy of the first source adds at most its own flows
    assert 2 * sum(per_source) <= len(full) <= 2 * sum(per_source) + per_source[0]


def _with_checksums(ip: bytes) -> bytes:
    """Fill in the IPv4 header and TCP checksums of a whole packet."""
    ihl = (ip[0] & 0x0F) * 4
    ip = ip[:10] + (0xFFFF - _sum16(ip[:ihl])).to_bytes(2, "big") + ip[12:]
    seg = ip[ihl:]
    pseudo = ip[12:20] + b"\0\x06" + len(seg).to_bytes(2, "big")
    csum = 0xFFFF - _sum16(pseudo + seg)
    return ip[:ihl + 16] + csum.to_bytes(2, "big") + ip[ihl + 18:]


def test_checksums_that_were_right_stay_right(built, tmp_path):
    """As many IPv4 checksums verify in the output as in the copies' source records (the testbed's are
    right, ns-3's are zero); on whole segments with right checksums (Ethernet and SLL2) every IPv4 and
    TCP checksum of the output verifies: the address rewrite updates them."""
    path, sources, _, _ = built
    expect = 2 * sum(_counts_in_source(s) for s in sources) + _counts_in_source(sources[0], first=1000)
    got = _counts_in_output(path)
    assert got[0] == expect[0] > 0
    frames = []
    for i in range(40):
        seg = tcp(sport=40000 + i % 3, dport=443, seq=1000 + 100 * i, ack=77 * i, flags=0x18,
                  data=bytes(range(i % 7, i % 7 + 1 + 3 * i)))
        ip = _with_checksums(ipv4(seg, src=f"192.168.{i % 2}.1", dst="172.16.0.9", ip_id=i))
        frames.append((1_700_000_000_000_000_000 + i * 1_000_000, ip))
    write_pcap(tmp_path / "eth.pcap", [(t, ether(ip)) for t, ip in frames])
    write_pcap(tmp_path / "sll2.pcap", [(t, sll2(ip)) for t, ip in frames], linktype=276)
    srcs = [ic.load_source(tmp_path / "eth.pcap"), ic.load_source(tmp_path / "sll2.pcap")]
    assert _counts_in_source(srcs[0]).tolist() == [40, 40] == _counts_in_source(srcs[1]).tolist()
    ic.build(tmp_path / "out.pcap", 200, srcs, spacing_s=0.01, seed=1, progress=False)
    assert _counts_in_output(tmp_path / "out.pcap").tolist() == [200, 200]
    table = _read(tmp_path / "out.pcap")
    assert not set(table["src_addr"].astype(str)) & {"192.168.0.1", "192.168.1.1"}
