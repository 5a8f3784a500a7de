"""The compiled kernel and the numpy path of the native reader give identical tables.

On every capture we have (the committed ones, the third-party corpus, and the
1M-packet interleaved capture when it has been built), on records whose header
bytes are randomly corrupted, and on a corrupt record length (same error).
"""

from __future__ import annotations

import os
import struct
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from trace_fixtures import CAPTURES

from tcpmodels.traces import TraceWarning, pcapfile, read_pcap
from tcpmodels.traces.decode import decode_batch
from tcpmodels.traces.pcapfile import CaptureFileError, RecordBatch, active_kernel, iter_batches, set_kernel

EXTERNAL = Path(os.environ.get("TCPMODELS_EXTERNAL_CAPTURES", "/work/shared/data/external_captures"))
BIG = Path(os.environ.get("TCPMODELS_BIG_CAPTURES", "/work/bigcaps")) / "interleaved_1M.pcap"

needs_kernel = pytest.mark.skipif(not pcapfile.kernel_available(),
                                  reason="the compiled kernel is not built (no C compiler at install time)")


def _captures() -> list[Path]:
    files = sorted(p for p in CAPTURES.iterdir() if ".pcap" in p.name)
    if EXTERNAL.is_dir():
        files += sorted(p for p in EXTERNAL.iterdir() if ".pcap" in p.name)
    return files


def _read(path: Path, kernel: str):
    previous = set_kernel(kernel)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", TraceWarning)
            table = read_pcap(path)
        return table, table.attrs["accounting"]
    except CaptureFileError as exc:
        return None, str(exc)
    finally:
        set_kernel(previous)


def _same(path: Path) -> None:
    a, acc_a = _read(path, "numpy")
    b, acc_b = _read(path, "c")
    assert acc_a == acc_b
    if a is not None:
        pd.testing.assert_frame_equal(a, b, check_exact=True)


@needs_kernel
@pytest.mark.parametrize("path", _captures(), ids=lambda p: p.name)
def test_kernels_equal_on_every_capture(path):
    _same(path)


@needs_kernel
@pytest.mark.slow
@pytest.mark.skipif(not BIG.exists(), reason=f"{BIG} not built (benchmarks/interleaved_capture.py)")
def test_kernels_equal_on_the_1M_interleaved_capture():
    _same(BIG)


def _mutated_batches(seed: int, copies: int = 40):
    """Records of the committed captures with random header bytes overwritten (lengths, options, versions)."""
    rng = np.random.default_rng(seed)
    for path in sorted(p for p in CAPTURES.iterdir() if ".pcap" in p.name):
        for batch in iter_batches(path):
            take = rng.choice(len(batch), size=min(copies, len(batch)), replace=False)
            for _ in range(20):
                buf = batch.buf.copy()
                start = batch.data_offset[take]
                cap = batch.captured_bytes[take].astype(np.int64)
                # overwrite 1-4 bytes inside the first 100 bytes of each record (headers and options)
                for _k in range(int(rng.integers(1, 5))):
                    pos = start + rng.integers(0, np.maximum(np.minimum(cap, 100), 1))
                    buf[pos] = rng.integers(0, 256, size=len(pos))
                wire = batch.wire_bytes[take].copy()
                shrink = rng.random(len(take)) < 0.2
                wire[shrink] = np.minimum(wire[shrink], rng.integers(0, 120, size=int(shrink.sum())))
                capb = batch.captured_bytes[take].copy()
                cut = rng.random(len(take)) < 0.2
                capb[cut] = np.minimum(capb[cut], rng.integers(0, 80, size=int(cut.sum())))
                yield RecordBatch(buf=buf, data_offset=start, captured_bytes=capb, wire_bytes=np.maximum(wire, capb),
                                  timestamp_ns=batch.timestamp_ns[take], interface_id=batch.interface_id[take],
                                  link_type=batch.link_type[take], frame_index=np.arange(len(take), dtype=np.int64),
                                  snap_bytes=np.where(cut, capb, batch.snap_bytes[take]).astype(np.uint32))


@needs_kernel
def test_kernels_equal_on_corrupted_headers():
    checked = 0
    for batch in _mutated_batches(seed=22):
        a = decode_batch(batch, kernel="numpy")
        b = decode_batch(batch, kernel="c")
        assert a[1] == b[1] and a[2] == b[2]
        assert set(a[0]) == set(b[0])
        for k in a[0]:
            assert np.array_equal(np.asarray(a[0][k]), np.asarray(b[0][k])), k
        checked += len(a[0]["seq"])
    assert checked > 1000  # the mutations leave many TCP rows to compare, not only skips


@needs_kernel
def test_kernels_raise_the_same_error_on_a_corrupt_length(tmp_path):
    path = tmp_path / "bad.pcap"
    rec = struct.pack("<IIII", 1, 0, 60, 60) + bytes(60)
    bad = struct.pack("<IIII", 1, 0, 10_000_000, 60)
    path.write_bytes(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1) + rec * 3 + bad + bytes(32))
    msgs = {k: _read(path, k)[1] for k in ("numpy", "c")}
    assert msgs["numpy"] == msgs["c"]
    assert "offset 252: record 3 claims 10000000" in msgs["c"]


def test_kernel_setting():
    assert active_kernel("numpy") == "numpy"
    assert active_kernel("auto") == ("c" if pcapfile.kernel_available() else "numpy")
    with pytest.raises(ValueError, match="kernel must be one of"):
        set_kernel("fortran")
    with pytest.raises(ValueError, match="kernel must be one of"):
        active_kernel("fast")
    previous = set_kernel("numpy")
    try:
        assert active_kernel() == "numpy"
    finally:
        set_kernel(previous)


def test_numpy_kernel_is_used_when_chosen(monkeypatch):
    """With the numpy setting the compiled module is never called (it may not even exist)."""
    monkeypatch.setattr(pcapfile, "_ckernel", None)
    table, acc = _read(CAPTURES / "reno_bulk.pcap.gz", "numpy")
    assert len(table) == acc.tcp_parsed > 0
    with pytest.raises(RuntimeError, match="not built"):
        active_kernel("c")


@needs_kernel
@pytest.mark.parametrize("name", ["reno_bulk.pcap.gz", "mptcp_2path.pcapng.gz"])
def test_decoded_columns_have_the_same_dtypes_under_both_kernels(name):
    """The decoded chunk columns (what ChunkedCapture.decoded() gives its callers, e.g. analyze's endpoint
    count) are native-endian under both kernels: the numpy path read ports, sequence numbers and windows as
    big-endian views, which pandas refuses ("Big-endian buffer not supported")."""
    from tcpmodels.traces.reader import ChunkedCapture

    def dtypes(kernel: str) -> dict[str, str]:
        previous = set_kernel(kernel)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", TraceWarning)
                cols = next(iter(ChunkedCapture(CAPTURES / name).decoded()))
            return {k: v.dtype.str for k, v in cols.items() if isinstance(v, np.ndarray)}
        finally:
            set_kernel(previous)

    ref, got = dtypes("numpy"), dtypes("c")
    assert ref == got
    assert all(d[0] in "<|" for d in ref.values()), ref
