"""The in-memory reader appends chunks into columns allocated once (grown by doubling), not concatenated."""

from __future__ import annotations

import numpy as np
import pandas as pd
from trace_fixtures import CAPTURES

from tcpmodels.traces import read_pcap
from tcpmodels.traces.reader import GrowingColumns, _expected_rows


def test_growing_columns_equal_concatenation():
    rng = np.random.default_rng(5)
    chunks = [{"seq": rng.integers(0, 2**32, n, dtype=np.uint32), "syn": rng.random(n) < 0.5}
              for n in (3, 1, 700, 0, 64, 5)]
    for expected in (0, 2, 10_000):
        g = GrowingColumns(expected)
        for c in chunks:
            g.append(c)
        cols = g.columns()
        assert g.rows == sum(len(c["seq"]) for c in chunks)
        for k in ("seq", "syn"):
            assert cols[k].dtype == chunks[0][k].dtype
            assert np.array_equal(cols[k], np.concatenate([c[k] for c in chunks]))


def test_small_chunks_give_the_same_table(tmp_path):
    """A gzip capture (rows unknown: grown by doubling) and its uncompressed copy (rows bounded by the size)."""
    import gzip

    src = CAPTURES / "p5_bottleneck_main-a1.65-n32-b5-s0.pcap.gz"
    raw = tmp_path / "p5.pcap"
    raw.write_bytes(gzip.decompress(src.read_bytes()))
    assert _expected_rows(src) == 0 and _expected_rows(raw) >= len(read_pcap(raw))
    whole = read_pcap(raw)
    for path in (src, raw):
        pd.testing.assert_frame_equal(read_pcap(path, chunk_bytes=4096), whole, check_exact=True)
