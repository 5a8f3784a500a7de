"""The in-memory reader appends chunks into columns allocated once (grown by doubling), not concatenated."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
from trace_fixtures import CAPTURES

from tcpmodels.traces import TraceWarning, read_pcap
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


def test_decoded_columns_do_not_hold_the_reused_chunk_buffer():
    """``ChunkedCapture`` reads each chunk into the last one's buffer (``reuse_buffer``): safe only because no
    decoded column is a view of a batch's bytes. Checked on a classic pcap and a pcapng with small chunks, so
    records cross chunk boundaries and the carried part moves within the reused buffer."""
    from tcpmodels.traces.decode import decode_batch
    from tcpmodels.traces.pcapfile import MIN_CHUNK_BYTES, iter_batches

    for name in ("reno_bulk.pcap.gz", "mptcp_2path.pcapng.gz"):
        last, batches, grown, rows = None, 0, 0, 0
        for batch in iter_batches(CAPTURES / name, chunk_bytes=MIN_CHUNK_BYTES, reuse_buffer=True):
            space = batch.buf.base if batch.buf.base is not None else batch.buf
            if last is not None and space is not last:  # a new buffer only when the last was too small
                assert len(space) > len(last), f"{name}: a new buffer of {len(space)} bytes replaced {len(last)}"
                grown += 1
            last, batches = space, batches + 1
            cols, _, _ = decode_batch(batch)
            shared = [k for k, v in cols.items() if isinstance(v, np.ndarray) and np.shares_memory(v, batch.buf)]
            assert shared == [], f"{name}: columns {shared} are views of the chunk buffer"
            rows += len(cols["seq"])
        assert batches > 50 and grown < batches // 10, f"{name}: {grown} new buffers in {batches} chunks"
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", TraceWarning)  # reno_bulk has 2 records that are not IP
            assert rows == len(read_pcap(CAPTURES / name))
