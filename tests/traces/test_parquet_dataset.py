"""to_parquet / read_parquet_dataset / flows(dataset): equal to read_pcap and flows(table) on every capture we have."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from tcpmodels.traces import TraceWarning, flows, read_pcap
from tcpmodels.traces.dataset import (
    METADATA_FILE,
    DatasetError,
    connection_partition,
    open_dataset,
    read_parquet_dataset,
    to_parquet,
)
from tcpmodels.traces.flows import PartitionFlows, combine_partition_flows, partition_flows

ROOT = Path(__file__).resolve().parents[2]
EXTERNAL = ROOT.parent / "shared" / "data" / "external_captures"
CAPTURES = sorted(p for p in (ROOT / "data" / "captures").iterdir() if ".pcap" in p.name) + \
    (sorted(p for p in EXTERNAL.iterdir() if ".pcap" in p.name) if EXTERNAL.is_dir() else [])
#: Small chunks (several per capture) and few partitions (several non-empty).
CHUNK = 1 << 16
PARTS = 4


def _quiet(fn, *args, **kw):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", TraceWarning)
        out = fn(*args, **kw)
    return out, [str(w.message) for w in caught if issubclass(w.category, TraceWarning)]


@pytest.mark.parametrize("capture", CAPTURES, ids=[p.name for p in CAPTURES])
def test_dataset_equals_table_and_flows(capture, tmp_path):
    table, read_warnings = _quiet(read_pcap, capture, chunk_bytes=CHUNK)
    ds, ds_warnings = _quiet(to_parquet, capture, tmp_path / "ds", chunk_bytes=CHUNK, partitions=PARTS)
    assert ds_warnings == read_warnings  # the same warnings, word for word
    assert ds.accounting == table.attrs["accounting"]
    assert sum(ds.rows) == len(table)
    back = read_parquet_dataset(tmp_path / "ds")
    pd.testing.assert_frame_equal(back, table, check_exact=True)
    for col in ("src_addr", "dst_addr", "tunnel"):
        assert list(back[col].cat.categories) == list(table[col].cat.categories)
    assert back.attrs["accounting"] == table.attrs["accounting"]
    # both directions (and every connection of a 4-tuple) in one partition
    for i in ds.nonempty():
        part = ds.read_partition(i)
        assert part["frame_index"].is_monotonic_increasing
        assert part.dtypes.astype(str).equals(table.dtypes.astype(str))
    want, _ = _quiet(flows, table)
    got, _ = _quiet(flows, tmp_path / "ds")
    pd.testing.assert_frame_equal(got, want, check_exact=True)


def test_several_partitions_used():
    """The equality above is not trivial: on the multi-connection captures several partitions hold packets."""
    busy = {"p5_bottleneck_main-a1.65-n32-b5-s0.pcap.gz", "short_flows_any.pcap.gz", "p1_s4_sample.pcap.gz"}
    for name in busy:
        t, _ = _quiet(read_pcap, ROOT / "data" / "captures" / name)
        assert _quiet(flows, t)[0]["connection_id"].nunique() > PARTS
    # the partition function itself: symmetric in the endpoints and spread over all partitions
    rng = np.random.default_rng(1)
    n = 10_000
    hi, lo, port = (rng.integers(0, 2**63, n, dtype=np.uint64) for _ in range(3))
    hi2, lo2, port2 = (rng.integers(0, 2**63, n, dtype=np.uint64) for _ in range(3))
    port, port2 = port % 65536, port2 % 65536
    ab = connection_partition(hi, lo, port, hi2, lo2, port2, 7)
    ba = connection_partition(hi2, lo2, port2, hi, lo, port, 7)
    assert np.array_equal(ab, ba)
    counts = np.bincount(ab, minlength=7)
    assert counts.min() > 0.8 * n / 7 and counts.max() < 1.2 * n / 7


def test_dataset_metadata_and_errors(tmp_path):
    cap = ROOT / "data" / "captures" / "short_flows_any.pcap.gz"
    ds, _ = _quiet(to_parquet, cap, tmp_path / "d", partitions=3)
    meta = json.loads((tmp_path / "d" / METADATA_FILE).read_text())
    acc = meta["accounting"]
    assert acc["records_read"] == acc["tcp_parsed"] + sum(acc["skipped"].values())
    assert meta["rows"] == list(ds.rows) and sum(ds.rows) == acc["tcp_parsed"]
    assert open_dataset(tmp_path / "d") == ds
    with pytest.raises(ValueError, match="already holds"):
        _quiet(to_parquet, cap, tmp_path / "d")
    with pytest.raises(ValueError, match="partitions"):
        _quiet(to_parquet, cap, tmp_path / "e", partitions=0)
    with pytest.raises(FileNotFoundError, match="not a packet dataset"):
        open_dataset(tmp_path)
    with pytest.raises(ValueError, match="out of range"):
        ds.read_partition(3)


def test_partitions_continue_in_new_files_with_bounded_row_groups(tmp_path, monkeypatch):
    """Small row groups and two row groups per file: every partition spans several files, none holds more
    than two row groups (the open writers' metadata stays bounded), and the dataset still equals the table."""
    import pyarrow.parquet as pq

    from tcpmodels.traces import dataset as dataset_module

    monkeypatch.setattr(dataset_module, "ROW_GROUP_ROWS", 50)
    monkeypatch.setattr(dataset_module, "ROW_GROUPS_PER_FILE", 2)
    capture = ROOT / "data" / "captures" / "p5_bottleneck_main-a1.65-n32-b5-s0.pcap.gz"
    table, _ = _quiet(read_pcap, capture, chunk_bytes=CHUNK)
    ds, _ = _quiet(to_parquet, capture, tmp_path / "ds", chunk_bytes=CHUNK, partitions=PARTS)
    files = {i: ds.partition_files(i) for i in ds.nonempty()}
    assert all(len(f) > 2 for f in files.values()), {i: len(f) for i, f in files.items()}
    groups = [pq.ParquetFile(f).metadata.num_row_groups for fs in files.values() for f in fs]
    assert max(groups) <= 2
    assert sum(pq.ParquetFile(f).metadata.num_rows for fs in files.values() for f in fs) == len(table)
    pd.testing.assert_frame_equal(read_parquet_dataset(ds), table, check_exact=True)
    want, _ = _quiet(flows, table)
    pd.testing.assert_frame_equal(_quiet(flows, ds)[0], want, check_exact=True)


def _as_format_1(folder):
    """Rewrite a dataset's metadata as format 1 wrote it (no file list)."""
    meta = json.loads((folder / METADATA_FILE).read_text())
    meta["format"] = 1
    del meta["files"]
    (folder / METADATA_FILE).write_text(json.dumps(meta))


def test_dataset_of_the_single_file_layout_reads(tmp_path):
    """A dataset written before the files were numbered (one part=NNNN/data.parquet, format 1: no file list)
    reads the same; its rows per partition are still checked against the metadata."""
    capture = ROOT / "data" / "captures" / "short_flows_any.pcap.gz"
    table, _ = _quiet(read_pcap, capture)
    ds, _ = _quiet(to_parquet, capture, tmp_path / "ds", partitions=PARTS)
    for i in ds.nonempty():
        (only,) = ds.partition_files(i)
        only.rename(only.with_name("data.parquet"))
    _as_format_1(tmp_path / "ds")
    pd.testing.assert_frame_equal(read_parquet_dataset(tmp_path / "ds"), table, check_exact=True)
    pd.testing.assert_frame_equal(_quiet(flows, tmp_path / "ds")[0], _quiet(flows, table)[0], check_exact=True)
    i = ds.nonempty()[0]
    stale = ds.partition_path(i) / "data-00003.parquet"  # a file of another run beside it
    stale.write_bytes((ds.partition_path(i) / "data.parquet").read_bytes())
    with pytest.raises(DatasetError, match=rf"partition {i} holds \d+ rows in .*data-00003.parquet"):
        read_parquet_dataset(tmp_path / "ds")


def test_combine_partition_flows_any_order_and_form(tmp_path):
    """Joining the partitions' flow tables (as DataFrames or as the column-wise PartitionFlows the Dask path
    keeps, mixed, in any order) gives the whole table's flows, dtypes included; the list is emptied."""
    cap = ROOT / "data" / "captures" / "short_flows_any.pcap.gz"
    table, _ = _quiet(read_pcap, cap)
    ds, _ = _quiet(to_parquet, cap, tmp_path / "ds", chunk_bytes=CHUNK, partitions=PARTS)
    parts = [_quiet(partition_flows, ds, i)[0] for i in ds.nonempty()]
    assert len(parts) > 1
    mixed = [PartitionFlows(q) if k % 2 else q for k, q in enumerate(parts)][::-1]
    mixed.insert(1, partition_flows(ds, 0).iloc[:0])  # an empty table is allowed
    want, _ = _quiet(flows, table)
    got = combine_partition_flows(mixed)
    assert mixed == []
    pd.testing.assert_frame_equal(got, want, check_exact=True)
    assert list(got.dtypes.astype(str)) == list(want.dtypes.astype(str))
    assert combine_partition_flows([]).empty
