"""The one-pass analysis in C gives the reference's tables, column by column.

On every capture we have (the shipped ones, both third-party corpora when present), on hostile variants of
them (fields overwritten, packets copied, dropped, reordered in time), and on the hand-built captures of
tests/traces/test_wireshark_rules.py and test_flows.py (their autouse fixture compares every capture they
write). The sanitizer build is tests/traces/test_cflows_sanitizers.py.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest
from pass_equality import assert_captures_equal, assert_pass_equal, mutated_tables, needs_pass, read_quietly
from trace_fixtures import CAPTURES

from tcpmodels.traces import connpass
from tcpmodels.traces.pcapfile import set_kernel

CORPORA = [Path(os.environ.get("TCPMODELS_EXTERNAL_CAPTURES", "/work/shared/data/external_captures")),
           Path(os.environ.get("TCPMODELS_EXTERNAL_CAPTURES2", "/work/shared/data/external_captures2"))]
BIG = Path(os.environ.get("TCPMODELS_BIG_CAPTURES", "/work/bigcaps")) / "interleaved_1M.pcap"


@needs_pass
def test_equal_on_the_shipped_captures():
    assert assert_captures_equal(CAPTURES) >= 10


@needs_pass
@pytest.mark.parametrize("folder", CORPORA, ids=lambda p: p.name)
def test_equal_on_the_third_party_corpora(folder):
    if not folder.is_dir():
        pytest.skip(f"{folder} not present")
    assert assert_captures_equal(folder) > 5


@needs_pass
@pytest.mark.parametrize("name", ["reno_bulk.pcap.gz", "mptcp_2path.pcapng.gz", "short_flows_any.pcap.gz",
                                  "p1_s4_sample.pcap.gz"])
def test_equal_on_hostile_variants(name):
    table = read_quietly(CAPTURES / name)
    for i, variant in enumerate(mutated_tables(table.iloc[:3000], seed=len(name))):
        assert_pass_equal(variant, f"{name} variant {i}")


@needs_pass
def test_equal_on_hostile_variants_of_the_corpora():
    files = [p for folder in CORPORA if folder.is_dir() for p in sorted(folder.glob("*.pcap*"))]
    if not files:
        pytest.skip("no third-party corpus present")
    checked = 0
    for seed, path in enumerate(files):
        table = read_quietly(path)
        if table is None or len(table) < 4:
            continue
        for i, variant in enumerate(mutated_tables(table.iloc[:2000], seed=seed, copies=2)):
            assert_pass_equal(variant, f"{path.name} variant {i}")
            checked += 1
    assert checked > 20


@needs_pass
def test_a_row_subset_keeps_the_table_index():
    table = read_quietly(CAPTURES / "cubic_bulk.pcap.gz")
    sub = table.iloc[::3]
    assert_pass_equal(sub, "every third row")


@needs_pass
def test_annotate_needs_only_the_columns_the_reference_reads():
    """annotate does not read frame_index, wire_bytes or has_timestamps: a table without them is annotated."""
    table = read_quietly(CAPTURES / "reno_bulk.pcap.gz").drop(columns=["frame_index", "wire_bytes",
                                                                       "has_timestamps"])
    from tcpmodels.traces import annotate

    previous = set_kernel("numpy")
    try:
        want = annotate(table)
    finally:
        set_kernel(previous)
    import pandas as pd

    pd.testing.assert_frame_equal(annotate(table), want, check_exact=True)


@needs_pass
@pytest.mark.slow
@pytest.mark.skipif(not BIG.exists(), reason=f"{BIG} not built (benchmarks/interleaved_capture.py)")
def test_equal_on_the_1M_interleaved_capture():
    assert_pass_equal(read_quietly(BIG), BIG.name)


def test_numpy_setting_never_calls_the_compiled_pass(monkeypatch):
    def refuse(*_a, **_k):
        raise AssertionError("compiled pass called")

    monkeypatch.setattr(connpass, "run_table", refuse)
    previous = set_kernel("numpy")
    try:
        from tcpmodels.traces import flows

        assert len(flows(read_quietly(CAPTURES / "reno_bulk.pcap.gz"))) > 0
    finally:
        set_kernel(previous)
    assert connpass.use_compiled_pass("numpy") is False


@needs_pass
def test_compiled_pass_rejects_malformed_buffers():
    from tcpmodels.traces import cflows

    cols = list(connpass.table_columns(read_quietly(CAPTURES / "reno_bulk.pcap.gz")))
    with pytest.raises(ValueError, match="21 column buffers"):
        cflows.analyze(tuple(cols[:5]), 0, False, None)
    cols[8] = cols[8][:-1]
    with pytest.raises(ValueError, match="column seq"):
        cflows.analyze(tuple(cols), 0, False, None)
    with pytest.raises(ValueError, match="idle_ns"):
        cflows.Stream(0, 0)
    s = cflows.Stream(0, 10**9)
    s.finish()
    with pytest.raises(RuntimeError, match="finished"):
        s.feed(tuple(np.zeros(0, np.uint8) for _ in range(21)))
