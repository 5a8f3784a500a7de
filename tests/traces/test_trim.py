"""Trimmed captures keep each record's original length; the shipped ones agree with tshark on payload."""

from __future__ import annotations

import gzip
import struct
import subprocess
import warnings

import pytest
from trace_fixtures import CAPTURES, needs_tshark
from trace_synth import ether, ipv4, tcp, write_pcap

from tcpmodels.traces import TraceWarning, read_pcap
from tcpmodels.traces.trim import repair_original_lengths, trim_capture

T0 = 1_700_000_000_000_000_000


def _records(path):
    with open(path, "rb") as fh:
        data = fh.read()
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    pos, out = 24, []
    while pos + 16 <= len(data):
        incl = struct.unpack("<I", data[pos + 8: pos + 12])[0]
        out.append(data[pos: pos + 16 + incl])
        pos += 16 + incl
    return out


def test_trim_keeps_record_headers_byte_for_byte(tmp_path):
    frames = [(T0 + i * 500_000_000, ether(ipv4(tcp(seq=1000 + 1400 * i, payload=1400)))) for i in range(6)]
    src = tmp_path / "src.pcap"
    write_pcap(src, frames, snaplen=96, cut_to=96)  # orig_len = the whole frame, caplen = 96
    counts = trim_capture(src, tmp_path / "dst.pcap.gz", seconds=1.2)
    assert counts == {"packets_in_source": 6, "packets_kept": 3, "seconds_kept": 1.2}
    assert _records(tmp_path / "dst.pcap.gz") == _records(src)[:3]
    assert all(struct.unpack("<I", r[12:16])[0] == len(frames[0][1]) for r in _records(tmp_path / "dst.pcap.gz"))


def test_repair_restores_the_original_length_from_the_ip_header_once(tmp_path):
    frame = ether(ipv4(tcp(payload=1400)))
    src = tmp_path / "lossy.pcap"
    write_pcap(src, [(T0, frame), (T0 + 1, ether(ipv4(tcp(payload=0))))], snaplen=96, cut_to=96,
               orig_lens=[96, 54])  # what dpkt's writer left: orig_len = caplen
    assert repair_original_lengths(src, tmp_path / "fixed.pcap.gz") == {"records": 2, "repaired": 1, "link_type": 1}
    recs = _records(tmp_path / "fixed.pcap.gz")
    assert struct.unpack("<I", recs[0][12:16])[0] == len(frame) and struct.unpack("<I", recs[1][12:16])[0] == 54
    again = repair_original_lengths(tmp_path / "fixed.pcap.gz", tmp_path / "again.pcap.gz")
    assert again["repaired"] == 0
    with pytest.raises(ValueError, match="src and dst must differ"):
        repair_original_lengths(src, src)


SHIPPED = sorted(p.name for p in CAPTURES.glob("*.pcap*.gz"))


@needs_tshark
@pytest.mark.parametrize("name", SHIPPED)
def test_shipped_captures_agree_with_tshark_on_packets_and_payload(name):
    out = subprocess.run(["tshark", "-r", str(CAPTURES / name), "-Y", "tcp", "-T", "fields", "-e", "tcp.len"],
                         capture_output=True, text=True, check=True).stdout.split()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TraceWarning)
        ours = read_pcap(CAPTURES / name)
    assert len(ours) == len(out)
    assert int(ours["payload_bytes"].sum()) == sum(int(x) for x in out)
    assert (ours["wire_bytes"] >= ours["payload_bytes"]).all()
