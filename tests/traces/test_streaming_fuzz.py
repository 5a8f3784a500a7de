"""A fuzz test over the streaming path (issue 50): to_parquet + flows(dataset) against read_pcap + flows(table).

Seeded mutants of real captures (byte flips, 32-bit fields set to edge values, cuts, splices: the reader
battery's mutations), each streamed with a random chunk size (4 KiB up: records cut by chunk boundaries, the
partial-record path) into a random number of partitions. Each must give either the same CaptureFileError as the
in-memory read and no dataset folder (nothing half-written), or a dataset whose accounting is the in-memory
read's (parsed + skipped by reason = read), whose table equals it row for row and whose flow table equals
flows(table). Bounded to a minute.
"""

from __future__ import annotations

import gzip
import shutil
import time
import warnings

import numpy as np
import pandas as pd
import pytest
from test_reader_robustness import _mutants
from trace_fixtures import CAPTURES

from tcpmodels.traces import CaptureFileError, TraceWarning, flows, read_pcap
from tcpmodels.traces.dataset import read_parquet_dataset, to_parquet

SOURCES = ["short_flows_any.pcap.gz", "mptcp_2path.pcapng.gz", "reno_bulk.pcap.gz"]
PER_SOURCE = 24
CHUNKS = (4096, 9000, 1 << 14, 1 << 16, 32 << 20)


def _quiet(fn, *args, **kw):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", TraceWarning)
        out = fn(*args, **kw)
    return out, sorted(str(w.message) for w in caught if issubclass(w.category, TraceWarning))


def test_streaming_equals_in_memory_on_mutated_captures(tmp_path):
    rng = np.random.default_rng(20261206)
    deadline = time.monotonic() + 50
    outcomes = {"same_error": 0, "same_table": 0}
    for name in SOURCES:
        raw = gzip.decompress((CAPTURES / name).read_bytes())[:40_000]
        for k, mutant in enumerate(_mutants(raw, rng, PER_SOURCE)):
            if time.monotonic() > deadline:  # bounded: a slow machine runs fewer mutants, never longer
                break
            cap = tmp_path / f"m{k}{'.pcapng' if 'pcapng' in name else '.pcap'}"
            cap.write_bytes(mutant)
            out = tmp_path / f"ds{k}"
            chunk = int(rng.choice(CHUNKS))
            parts = int(rng.integers(1, 6))
            try:
                table, _ = _quiet(read_pcap, cap)
            except CaptureFileError as exc:
                with pytest.raises(CaptureFileError) as streamed:
                    _quiet(to_parquet, cap, out, chunk_bytes=chunk, partitions=parts)
                assert str(streamed.value) == str(exc), (name, k, chunk)
                assert not out.exists() and not list(tmp_path.glob(f".ds{k}.partial-*")), "a half-written dataset"
                outcomes["same_error"] += 1
                continue
            ds, _ = _quiet(to_parquet, cap, out, chunk_bytes=chunk, partitions=parts)
            acc = ds.accounting
            assert acc == table.attrs["accounting"], (name, k, chunk)
            assert acc.tcp_parsed + sum(acc.skipped.values()) == acc.records_read == sum(ds.rows) + sum(
                acc.skipped.values())
            pd.testing.assert_frame_equal(read_parquet_dataset(out), table, check_exact=True)
            want, _ = _quiet(flows, table)
            got, _ = _quiet(flows, out)
            pd.testing.assert_frame_equal(got, want, check_exact=True)
            shutil.rmtree(out)
            outcomes["same_table"] += 1
    assert outcomes["same_error"] > 0 and outcomes["same_table"] > 0, outcomes
    assert sum(outcomes.values()) >= 30, f"only {outcomes} mutants ran in 50 s"


def test_split_stream_equals_the_sequential_stream_on_mutated_captures(tmp_path):
    """The capture split over workers (tcpmodels.traces.split: byte ranges cut at guessed record starts,
    connections routed to shares) on seeded mutants of classic pcaps, random chunk sizes and piece counts: each
    gives either None (the caller's sequential fallback, which then raises the file's error if it has one) or
    the sequential stream's flow table and read accounting. A sequential error always gives None. Bounded."""
    from tcpmodels.traces import split
    from tcpmodels.traces.connpass import use_compiled_pass
    from tcpmodels.traces.pcapfile import MAX_RECORD_BYTES
    from tcpmodels.traces.stream import _finish, stream_flows

    if not use_compiled_pass():  # stream_flows is then the whole-table reference, not the sequential stream
        pytest.skip("the compiled pass is not built or not chosen (TCPMODELS_TRACE_KERNEL=numpy)")
    rng = np.random.default_rng(5120261206)
    deadline = time.monotonic() + 40
    outcomes = {"error_none": 0, "split_equal": 0, "fallback": 0}
    for name in ("short_flows_any.pcap.gz", "reno_bulk.pcap.gz"):
        raw = gzip.decompress((CAPTURES / name).read_bytes())[:60_000]
        for k, mutant in enumerate(_mutants(raw, rng, 40)):
            if time.monotonic() > deadline:
                break
            cap = tmp_path / f"m{k}.pcap"
            cap.write_bytes(mutant)
            chunk = int(rng.choice(CHUNKS))
            pieces = int(rng.integers(2, 6))
            try:
                want, _ = _quiet(stream_flows, cap, chunk_bytes=chunk, idle_timeout_s=1e9)
            except CaptureFileError:
                got, _ = _quiet(split.split_records, cap, 2, idle_timeout_s=1e9, chunk_bytes=chunk,
                                max_record_bytes=MAX_RECORD_BYTES, pieces=pieces, spill_dir=tmp_path)
                assert got is None, (name, k)
                outcomes["error_none"] += 1
                continue
            res, _ = _quiet(split.split_records, cap, int(rng.integers(1, 4)), idle_timeout_s=1e9,
                            chunk_bytes=chunk, max_record_bytes=MAX_RECORD_BYTES, pieces=pieces, spill_dir=tmp_path)
            if res is None:
                outcomes["fallback"] += 1
                continue
            got, _ = _quiet(_finish, res.records, res.negative_rtt, res.t_min, res.stats)
            pd.testing.assert_frame_equal(got, want, check_exact=True, obj=f"{name} mutant {k}")
            acc = res.accounting
            assert acc == want.attrs["accounting"], (name, k)
            assert acc.tcp_parsed + sum(acc.skipped.values()) == acc.records_read
            outcomes["split_equal"] += 1
    assert not list(tmp_path.glob("tcpmodels-split-*")), "spill folders left behind"
    assert outcomes["split_equal"] >= 10 and outcomes["error_none"] > 0, outcomes
