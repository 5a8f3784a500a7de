"""tcpmodels.traces.stream: one pass, read -> per-connection state -> flow table, equal to flows(read_pcap)."""

from __future__ import annotations

import gzip
import struct
import warnings

import numpy as np
import pandas as pd
import pytest
from pass_equality import read_quietly
from test_connpass import CORPORA
from trace_fixtures import CAPTURES
from trace_synth import ether, ipv4, tcp, write_pcap

from tcpmodels.traces import CaptureFileError, TraceWarning, connpass, flows, split
from tcpmodels.traces.pcapfile import MAX_RECORD_BYTES, iter_batches, set_kernel
from tcpmodels.traces.stream import DEFAULT_IDLE_TIMEOUT_S, _finish, connection_share, dask_stream_flows, stream_flows

#: The streaming tests need the compiled pass in use: built, and not set aside by TCPMODELS_TRACE_KERNEL=numpy
#: (stream_flows is then the whole-table reference, which test_bad_timeout_and_the_reference_fallback checks).
needs_pass = pytest.mark.skipif(not connpass.use_compiled_pass(),
                                reason="the compiled pass is not built or not chosen (TCPMODELS_TRACE_KERNEL=numpy)")

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
@pytest.mark.parametrize("decode_ahead", [False, True])
def test_stream_equals_the_whole_table_on_every_capture(decode_ahead):
    checked = 0
    for path in _files():
        table = read_quietly(path)
        if table is None:
            continue
        # small chunks: connections, duplicates and RTT samples cross chunk boundaries
        got = _stream(path, chunk_bytes=1 << 14, idle_timeout_s=1e9, decode_ahead=decode_ahead)
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


def test_bad_timeout_and_the_reference_fallback(tmp_path):
    with pytest.raises(ValueError, match=r"idle_timeout_s \[s\] must be a positive finite number; got 0"):
        stream_flows(CAPTURES / "reno_bulk.pcap.gz", idle_timeout_s=0)
    previous = set_kernel("numpy")
    out = tmp_path / "packets.parquet"
    try:
        got = _stream(CAPTURES / "reno_bulk.pcap.gz", packets_parquet=out)
    finally:
        set_kernel(previous)
    assert got.attrs["stream"] == {"fallback": "whole table (no compiled pass)"}
    table = read_quietly(CAPTURES / "reno_bulk.pcap.gz")
    pd.testing.assert_frame_equal(got, flows(table), check_exact=True)
    # the packet table asked for is written by the fallback too (it was silently not written)
    back = pd.read_parquet(out)
    assert len(back) == len(table) and np.array_equal(back["seq"].to_numpy(), table["seq"].to_numpy())
    assert DEFAULT_IDLE_TIMEOUT_S >= 120


@needs_pass
def test_dask_workers_share_the_connections():
    pytest.importorskip("distributed")
    from tcpmodels.traces.cluster import dask_client

    path = CAPTURES / "p5_bottleneck_main-a1.65-n32-b5-s0.pcap.gz"
    with dask_client(n_workers=2, processes=False) as client:
        got = dask_stream_flows(path, client, shares=3, chunk_bytes=1 << 16)
    assert got.attrs["stream"]["split"] == "not an uncompressed classic pcap: every worker decodes it"
    pd.testing.assert_frame_equal(got, _stream(path), check_exact=True)
    pd.testing.assert_frame_equal(got, flows(read_quietly(path)), check_exact=True)


# ------------------------------------------------------------------ one capture cut over several workers
# (tcpmodels.traces.split: byte ranges decoded once, connections routed to shares through spill files)

def _plain(path, tmp_path):
    """The capture uncompressed (the split cuts uncompressed classic pcap files only)."""
    if path.suffix != ".gz":
        return path
    out = tmp_path / path.stem
    out.write_bytes(gzip.decompress(path.read_bytes()))
    return out


def _split(path, shares, pieces, idle_timeout_s=1e9, chunk_bytes=1 << 14, spill_dir=None):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TraceWarning)
        res = split.split_records(path, shares, idle_timeout_s=idle_timeout_s, chunk_bytes=chunk_bytes,
                                  max_record_bytes=MAX_RECORD_BYTES, pieces=pieces, spill_dir=spill_dir)
        if res is None:
            return None
        out = _finish(res.records, res.negative_rtt, res.t_min, res.stats)
    out.attrs["accounting"] = res.accounting
    return out


@needs_pass
def test_split_equals_the_sequential_stream_on_every_capture(tmp_path):
    """Every classic pcap cut into 3 byte ranges, routed to 2 shares: the flow table and the read accounting
    are the sequential stream's (a capture that cannot be cut or holds IP fragments gives None)."""
    split_ok = 0
    for path in _files():
        plain = _plain(path, tmp_path)
        try:
            want = _stream(plain, chunk_bytes=1 << 14, idle_timeout_s=1e9)
        except CaptureFileError:
            continue
        got = _split(plain, 2, 3)
        if got is None:
            continue
        pd.testing.assert_frame_equal(got, want, check_exact=True, obj=path.name)
        acc = got.attrs["accounting"]
        assert acc == want.attrs["accounting"], path.name
        assert acc.tcp_parsed + sum(acc.skipped.values()) == acc.records_read
        split_ok += 1
    assert split_ok >= 20


def _many_sessions(tmp_path):
    """Twelve 4-tuples interleaved, each with exchanges 20 s apart after its handshake, so that with a 10 s
    timeout every 4-tuple is finished and starts again, on both sides of every cut."""
    frames = []
    for k in range(12):
        one = _sessions(tmp_path, gaps_s=[20.0, 1.0, 20.0], name=f"s{k}.pcap", port=40000 + k)
        raw = one.read_bytes()
        pos = 24
        while pos < len(raw):
            sec, frac, incl, _ = struct.unpack_from("<IIII", raw, pos)
            frames.append((sec * 10**9 + frac + k * 3_000_000, raw[pos + 16:pos + 16 + incl]))
            pos += 16 + incl
    frames.sort(key=lambda f: f[0])
    path = tmp_path / "many_sessions.pcap"
    write_pcap(path, frames, nano=True)
    return path


@needs_pass
@pytest.mark.parametrize("pieces", [2, 5, 9])
def test_split_connections_and_idle_timeouts_across_cuts(tmp_path, pieces):
    path = _many_sessions(tmp_path)
    ranges = split.plan_ranges(path, pieces, MAX_RECORD_BYTES)
    assert len(ranges) == pieces and ranges[0][0] == 24 and ranges[-1][1] == path.stat().st_size
    for timeout in (10.0, 1e9):
        want = _stream(path, idle_timeout_s=timeout, chunk_bytes=4096)
        got = _split(path, 3, pieces, idle_timeout_s=timeout, chunk_bytes=4096)
        pd.testing.assert_frame_equal(got, want, check_exact=True)
        assert got.attrs["accounting"] == want.attrs["accounting"]
    assert len(want) == 24 and len(got) == 24 and len(_split(path, 3, pieces, idle_timeout_s=10.0)) == 72


@needs_pass
def test_a_wrong_cut_is_caught(tmp_path, monkeypatch):
    """A guessed cut that is not a record boundary fails the walk of the range before it: no result (the
    caller falls back to the sequential stream), never a wrong one."""
    path = _many_sessions(tmp_path)
    # the right cuts, as a control: the same call gives a result
    assert _split(path, 2, 3, spill_dir=tmp_path) is not None
    right = split.plan_ranges(path, 3, MAX_RECORD_BYTES)
    for shift in (1, 4, 16):
        bad = [(right[0][0], right[0][1] + shift), (right[1][0] + shift, right[1][1]), right[2]]
        monkeypatch.setattr(split, "plan_ranges", lambda *a, bad=bad: bad)
        assert _split(path, 2, 3, spill_dir=tmp_path) is None
    assert not list(tmp_path.glob("tcpmodels-split-*"))  # the spill folders removed


def test_byte_ranges_read_uncompressed_classic_pcap_only(tmp_path):
    for name in ("reno_bulk.pcap.gz", "mptcp_2path.pcapng.gz"):
        with pytest.raises(ValueError, match="byte_range reads an uncompressed classic pcap file only"):
            list(iter_batches(CAPTURES / name, byte_range=(24, 100)))
        assert split.plan_ranges(CAPTURES / name, 2, MAX_RECORD_BYTES) is None
    with pytest.raises(ValueError, match=r"byte_range \(8, 100\) must satisfy 24 <= start <= stop"):
        list(iter_batches(_plain(CAPTURES / "reno_bulk.pcap.gz", tmp_path), byte_range=(8, 100)))


@needs_pass
def test_compiled_share_hash_is_connection_share():
    from tcpmodels.traces import cflows

    rng = np.random.default_rng(51)
    n = 5000
    cols = {"src_hi": rng.integers(0, 2**64, n, dtype=np.uint64), "src_lo": rng.integers(0, 2**64, n, dtype=np.uint64),
            "dst_hi": rng.integers(0, 2**64, n, dtype=np.uint64), "dst_lo": rng.integers(0, 2**64, n, dtype=np.uint64),
            "src_port": rng.integers(0, 2**16, n).astype(np.uint16), "dst_port": rng.integers(0, 2**16, n).astype(np.uint16),
            "ip_version": rng.choice([4, 6], n).astype(np.uint8)}
    columns = connpass.decoded_columns(dict(cols, **{k: np.zeros(n, np.uint32) for k in (
        "timestamp_ns", "frame_index", "seq", "ack", "ip_id", "payload_bytes", "tsval", "tsecr", "sack_left",
        "wire_bytes", "flags", "window", "has_timestamps", "window_scale", "mptcp_subtype")}))
    for shares in (1, 2, 3, 7, 127):
        out = np.empty(n, np.int8)
        cflows.connection_shares(*columns[2:8], shares, out)
        assert np.array_equal(out, connection_share(cols, shares)), shares
    with pytest.raises(ValueError, match=r"shares must be in \[1, 127\]; got 128"):
        cflows.connection_shares(*columns[2:8], 128, out)
    with pytest.raises(ValueError, match="column 0 holds"):
        cflows.connection_shares(columns[2][:-1], *columns[3:8], 2, out)


@needs_pass
def test_route_gives_each_share_its_rows_column_after_column():
    from tcpmodels.traces import cflows

    rng = np.random.default_rng(7)
    n = 1001
    cols = (rng.integers(0, 2**63, n), rng.integers(0, 2**32, n).astype(np.uint32),
            rng.integers(0, 2**16, n).astype(np.uint16), rng.integers(-128, 128, n).astype(np.int8))
    owner = rng.integers(0, 3, n).astype(np.int8)
    blocks = cflows.route(cols, owner, 3)
    for s, block in enumerate(blocks):
        mine = owner == s
        assert block == b"".join(c[mine].tobytes() for c in cols)
    assert cflows.route(cols, np.zeros(n, np.int8), 1)[0] == b"".join(c.tobytes() for c in cols)
    assert cflows.route((), np.zeros(0, np.int8), 2) == (b"", b"")
    with pytest.raises(ValueError, match=r"owner\[5\] = 3 is not a share in \[0, 3\)"):
        cflows.route(cols, np.where(np.arange(n) == 5, 3, owner).astype(np.int8), 3)
    with pytest.raises(ValueError, match="column 1: 4000 bytes of item size 4; expected 1001 items"):
        cflows.route((cols[0], cols[1][:-1]), owner, 3)
    with pytest.raises(ValueError, match=r"shares must be in \[1, 127\]; got 0"):
        cflows.route(cols, owner, 0)


def sync_reference(window: bytes, big: bool, frac_limit: int, max_incl: int, max_gap: int, chain: int) -> int:
    """``cflows.sync_classic`` in Python (the fuzz test's reference)."""
    e = ">" if big else "<"
    for p in range(0, len(window) - 15):
        q, k, prev = p, 0, 0
        ok = True
        while k < chain:
            if q == len(window) and k >= 2:
                break
            if q + 16 > len(window):
                ok = False
                break
            sec, frac, incl, orig = struct.unpack_from(e + "IIII", window, q)
            if frac >= frac_limit or incl == 0 or incl > max_incl or incl > orig or orig > (1 << 18) + (1 << 16) \
                    or (k > 0 and abs(sec - prev) > max_gap):
                ok = False
                break
            prev = sec
            if incl > len(window) - q - 16:
                ok = k >= 2
                break
            q += 16 + incl
            k += 1
        if ok:
            return p
    return -1


@needs_pass
def test_sync_guess_equals_its_reference_on_hostile_windows(tmp_path):
    from test_reader_robustness import _mutants

    from tcpmodels.traces import cflows

    raw = gzip.decompress((CAPTURES / "short_flows_any.pcap.gz").read_bytes())[:6000]
    rng = np.random.default_rng(5151)
    found = 0
    for k, mutant in enumerate(_mutants(raw, rng, 40)):
        start = int(rng.integers(24, max(25, len(mutant) - 100)))
        window = mutant[start:start + int(rng.integers(0, 3000))]
        for big, frac_limit, chain in ((False, 10**6, 16), (True, 10**9, 3)):
            got = cflows.sync_classic(window, big, frac_limit, MAX_RECORD_BYTES, 86_400, chain)
            assert got == sync_reference(window, big, frac_limit, MAX_RECORD_BYTES, 86_400, chain), k
            found += got >= 0
    for window in (b"", bytes(15), bytes(4096), rng.integers(0, 256, 4096, dtype=np.uint8).tobytes()):
        assert cflows.sync_classic(window, False, 10**6, MAX_RECORD_BYTES, 86_400, 16) == \
            sync_reference(window, False, 10**6, MAX_RECORD_BYTES, 86_400, 16)
    assert found > 20


@needs_pass
def test_dask_splits_an_uncompressed_capture(tmp_path):
    pytest.importorskip("distributed")
    from tcpmodels.traces.cluster import dask_client

    path = _plain(CAPTURES / "p5_bottleneck_main-a1.65-n32-b5-s0.pcap.gz", tmp_path)
    want = _stream(path)
    with dask_client(n_workers=2, processes=False) as client:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", TraceWarning)
            got = dask_stream_flows(path, client, chunk_bytes=1 << 16, spill_dir=tmp_path)
            one = dask_stream_flows(path, client, shares=1)
        with pytest.raises(ValueError, match=r"chunk_bytes \[bytes\] must be at least 4096; got 100"):
            dask_stream_flows(path, client, chunk_bytes=100)
        with pytest.raises(FileNotFoundError, match="capture file not found: .*missing.pcap"):
            dask_stream_flows(tmp_path / "missing.pcap", client)
    assert got.attrs["stream"]["split"] == "2 byte ranges -> 8 shares"  # SHARES_PER_WORKER shares per worker
    assert one.attrs["stream"]["split"] == "one worker, sequential"
    for out in (got, one):
        pd.testing.assert_frame_equal(out, want, check_exact=True)
        assert out.attrs["accounting"] == want.attrs["accounting"]
    assert not list(tmp_path.glob("tcpmodels-split-*"))


@needs_pass
def test_a_corrupt_record_read_ahead_is_the_readers_error_in_the_caller(tmp_path):
    """With the next chunks decoded in a second thread, a corrupt record far into the file still raises the
    reader's own error, naming the file and the offset, and the thread is gone afterwards."""
    import threading

    frames = [(T0 + i * 1_000_000, ether(ipv4(tcp(40000, 80, 1000 + 100 * i, 1, 0x18, payload=100),
                                                  src="10.0.0.1", dst="10.0.0.2"))) for i in range(400)]
    path = tmp_path / "corrupt.pcap"
    write_pcap(path, frames, snaplen=65535)
    raw = bytearray(path.read_bytes())
    record = 16 + len(frames[0][1])
    at = 24 + 300 * record  # record 300's header, in the fourth 16 KiB chunk
    raw[at + 8:at + 12] = struct.pack("<I", 1 << 30)
    path.write_bytes(bytes(raw))
    before = threading.active_count()
    with pytest.raises(CaptureFileError, match=rf"corrupt.pcap: offset {at}: record 300 claims 1073741824"):
        _stream(path, chunk_bytes=1 << 14, decode_ahead=True)
    assert threading.active_count() == before
