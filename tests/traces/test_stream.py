"""tcpmodels.traces.stream: one pass, read -> per-connection state -> flow table, equal to flows(read_pcap)."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

from pass_equality import needs_pass, read_quietly
from test_connpass import CORPORA
from tcpmodels.traces import TraceWarning, flows
from tcpmodels.traces.pcapfile import set_kernel
from tcpmodels.traces.stream import DEFAULT_IDLE_TIMEOUT_S, dask_stream_flows, stream_flows
from trace_fixtures import CAPTURES
from trace_synth import ether, ipv4, tcp, write_pcap

T0 = 1_700_000_000_000_000_000


def _stream(path, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TraceWarning)
        return stream_flows(path, **kw)


def _files():
    files = sorted(CAPTURES.glob("*.pcap*"))
    for folder in CORPORA:
        if folder.is_dir():
            files += sorted(folder.glob("*.pcap*"))
    return files


@needs_pass
def test_stream_equals_the_whole_table_on_every_capture():
    checked = 0
    for path in _files():
        table = read_quietly(path)
        if table is None:
            continue
        # small chunks: connections, duplicates and RTT samples cross chunk boundaries
        got = _stream(path, chunk_bytes=1 << 14, idle_timeout_s=1e9)
        pd.testing.assert_frame_equal(got, flows(table), check_exact=True, obj=path.name)
        assert got.attrs["stream"]["live_connections"] == 0
        checked += 1
    assert checked >= 10


def _sessions(tmp_path, gaps_s, name="s.pcap", port=40000):
    """Short request/response exchanges on one 4-tuple (no SYN after the first), separated by gaps."""
    frames, t, seq, ack = [], T0, 1000, 5000
    c, s = ("10.0.0.1", port), ("10.0.0.2", 80)

    def add(src, dst, sq, ak, flags, payload=0):
        frames.append((t, ether(ipv4(tcp(src[1], dst[1], sq, ak, flags, payload=payload), src=src[0], dst=dst[0]))))

    add(c, s, seq - 1, 0, 0x02)
    t += 1_000_000
    add(s, c, ack - 1, seq, 0x12)
    t += 1_000_000
    for gap in [0.0] + list(gaps_s):
        t += int(gap * 1e9)
        add(c, s, seq, ack, 0x18, payload=100)
        t += 2_000_000
        add(s, c, ack, seq + 100, 0x18, payload=50)
        seq, ack = seq + 100, ack + 50
        t += 2_000_000
        add(c, s, seq, ack, 0x10)
    path = tmp_path / name
    write_pcap(path, frames, nano=True)
    return path


@needs_pass
def test_an_idle_connection_is_finished_and_the_4_tuple_starts_again(tmp_path):
    path = _sessions(tmp_path, gaps_s=[20.0, 1.0])
    whole = flows(read_quietly(path))
    assert len(whole) == 2  # one connection, two directions
    pd.testing.assert_frame_equal(_stream(path), whole, check_exact=True)
    short = _stream(path, idle_timeout_s=10.0)
    assert len(short) == 4 and list(short["connection_id"]) == [0, 0, 1, 1]
    # the second part: two exchanges without a SYN (data + ACK from the client, data from the server)
    assert list(short["packets"]) == [3, 2, 4, 2] and not short["syn_seen"].iloc[2:].any()
    assert short["first_time_s"].iloc[2] > short["last_time_s"].iloc[0] + 10


@needs_pass
def test_memory_follows_the_live_connections(tmp_path):
    """Forty connections one after the other, 60 s apart: with a 30 s timeout the finished ones are released
    after every chunk (about eight connections a chunk here), not kept to the end."""
    frames = []
    for k in range(40):
        t = T0 + k * 60 * 10**9
        c, s = ("10.0.0.1", 41000 + k), ("10.0.0.2", 80)
        for i, (src, dst, flags, pl) in enumerate([(c, s, 0x02, 0), (s, c, 0x12, 0), (c, s, 0x18, 10),
                                                    (s, c, 0x10, 0), (c, s, 0x11, 0), (s, c, 0x11, 0)]):
            frames.append((t + i * 1_000_000, ether(ipv4(tcp(src[1], dst[1], 1000 + 20 * i, 2000, flags,
                                                             payload=pl), src=src[0], dst=dst[0]))))
    path = tmp_path / "many.pcap"
    write_pcap(path, frames, nano=True)
    got = _stream(path, idle_timeout_s=30.0, chunk_bytes=4096)
    assert got.attrs["stream"]["connections"] == 40
    # a chunk of 4096 bytes holds at most this many whole connections (six records each), plus the one cut
    # at each end
    per_chunk = 4096 // (6 * (16 + min(len(f) for _, f in frames))) + 2
    assert got.attrs["stream"]["max_live_connections"] <= per_chunk < 40
    pd.testing.assert_frame_equal(got, flows(read_quietly(path)), check_exact=True)


@needs_pass
def test_packet_table_to_parquet_only_when_asked(tmp_path):
    path = CAPTURES / "reno_bulk.pcap.gz"
    out = tmp_path / "packets.parquet"
    got = _stream(path, packets_parquet=out, chunk_bytes=1 << 16)
    table = read_quietly(path)
    back = pd.read_parquet(out)
    assert len(back) == len(table) == got["packets"].sum()
    assert np.array_equal(back["seq"].to_numpy(), table["seq"].to_numpy())
    assert list(back["src_addr"].astype(str)) == list(table["src_addr"].astype(str))


def test_bad_timeout_and_the_reference_fallback():
    with pytest.raises(ValueError, match=r"idle_timeout_s \[s\] must be a positive finite number; got 0"):
        stream_flows(CAPTURES / "reno_bulk.pcap.gz", idle_timeout_s=0)
    previous = set_kernel("numpy")
    try:
        got = _stream(CAPTURES / "reno_bulk.pcap.gz")
    finally:
        set_kernel(previous)
    assert got.attrs["stream"] == {"fallback": "whole table (no compiled pass)"}
    pd.testing.assert_frame_equal(got, flows(read_quietly(CAPTURES / "reno_bulk.pcap.gz")), check_exact=True)
    assert DEFAULT_IDLE_TIMEOUT_S >= 120


@needs_pass
def test_dask_workers_share_the_connections():
    pytest.importorskip("distributed")
    from tcpmodels.traces.cluster import dask_client

    path = CAPTURES / "p5_bottleneck_main-a1.65-n32-b5-s0.pcap.gz"
    with dask_client(n_workers=2, processes=False) as client:
        got = dask_stream_flows(path, client, shares=3, chunk_bytes=1 << 16)
    pd.testing.assert_frame_equal(got, _stream(path), check_exact=True)
    pd.testing.assert_frame_equal(got, flows(read_quietly(path)), check_exact=True)
