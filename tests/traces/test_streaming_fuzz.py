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

from tcpmodels.traces import CaptureFileError, TraceWarning, flows, read_pcap
from tcpmodels.traces.dataset import read_parquet_dataset, to_parquet
from test_reader_robustness import _mutants
from trace_fixtures import CAPTURES

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
