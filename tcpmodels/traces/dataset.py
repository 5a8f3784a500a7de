"""Captures of any size: the packet table as a Parquet dataset partitioned by flow hash, written chunk by chunk.

:func:`to_parquet` walks a capture as :func:`~tcpmodels.traces.read_pcap` does (same decoder,
same accounting, same warnings) but writes each decoded chunk out at once, so memory is set by
``chunk_bytes``, not by the capture (see :func:`to_parquet` for what else it holds). Every row goes
to the partition of its *connection hash*:
a hash of the unordered pair of endpoints (address, port), so both directions of a connection,
and every connection on the same 4-tuple, land in the same partition. Per-connection analyses
(:func:`~tcpmodels.traces.flows`, :func:`~tcpmodels.traces.annotate`, RTT samples) can then run
one partition at a time, in any order or in parallel (:mod:`tcpmodels.traces.cluster`).

Layout of ``out_dir``::

    tcpmodels_dataset.json     format, partitions, the read accounting, time origin, rows per partition
    part=0000/data-00000.parquet   rows of partition 0, in file order
    part=0000/data-00001.parquet   more rows of partition 0 (a partition's file is closed after
    ...                            ``ROW_GROUPS_PER_FILE`` row groups and continued in the next)
    part=0001/data-00000.parquet   ...

(Datasets written before the files were numbered hold one ``part=NNNN/data.parquet``; they read
the same.)

The Parquet files hold the schema's columns (:data:`~tcpmodels.traces.schema.COLUMNS`) with
the addresses and the tunnel as dictionary-encoded strings; any Parquet reader (pyarrow,
dask, DuckDB, Spark) reads them. :func:`read_parquet_dataset` gives back the table equal to
``read_pcap`` of the capture (rows in file order, dtypes and category order included).
"""

from __future__ import annotations

import ipaddress
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np
import pandas as pd

from .pcapfile import MAX_GZIP_EXPANSION
from .decode import TUNNELS
from .reader import ChunkedCapture, assemble_table, warn_accounting
from .schema import COLUMNS, ReadAccounting, conform, empty_table

__all__ = ["to_parquet", "open_dataset", "read_parquet_dataset", "PacketDataset", "METADATA_FILE",
           "DEFAULT_PARTITIONS"]

#: The dataset's description, beside the partitions.
METADATA_FILE = "tcpmodels_dataset.json"
#: Partitions written when not told: enough for 2-8 workers to share the work evenly.
DEFAULT_PARTITIONS = 16
#: Rows a partition buffers before it writes them as one row group. [packets]
ROW_GROUP_ROWS = 131072
#: Row groups in one Parquet file before the partition continues in a new file. An open
#: ``ParquetWriter`` keeps every row group's metadata (about 35 kB for the schema's columns) until
#: it closes: with one row group per chunk and partition, a 100M-packet capture in 343 partitions
#: held 8 GB of it. Closing files bounds that memory by ``partitions * ROW_GROUPS_PER_FILE``.
ROW_GROUPS_PER_FILE = 16
_FORMAT = 1
_HASH = "splitmix64(endpoint a) + splitmix64(endpoint b), v1"
_CATEGORY_COLUMNS = ("tunnel", "src_addr", "dst_addr")


def _mix(x: np.ndarray) -> np.ndarray:
    """splitmix64's finaliser on uint64 (wrapping arithmetic)."""
    x = x ^ (x >> np.uint64(30))
    x = x * np.uint64(0xBF58476D1CE4E5B9)
    x = x ^ (x >> np.uint64(27))
    x = x * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))


def connection_partition(src_hi: np.ndarray, src_lo: np.ndarray, src_port: np.ndarray, dst_hi: np.ndarray,
                         dst_lo: np.ndarray, dst_port: np.ndarray, partitions: int) -> np.ndarray:
    """Partition of each packet: a hash of its unordered endpoint pair, the same for both directions.

    Parameters
    ----------
    src_hi, src_lo, dst_hi, dst_lo : numpy.ndarray
        Addresses as uint64 halves (IPv4 in ``*_lo``, ``*_hi`` 0), as the decoder gives them.
    src_port, dst_port : numpy.ndarray
        TCP ports.
    partitions : int
        Number of partitions (at least 1).

    Returns
    -------
    numpy.ndarray
        int64 partition numbers in ``[0, partitions)``.
    """
    def endpoint(hi, lo, port):
        h = _mix(np.asarray(hi, np.uint64) ^ np.uint64(0x9E3779B97F4A7C15))
        h = _mix(h ^ np.asarray(lo, np.uint64))
        return _mix(h ^ np.asarray(port, np.uint64))

    h = _mix(endpoint(src_hi, src_lo, src_port) + endpoint(dst_hi, dst_lo, dst_port))
    return (h % np.uint64(partitions)).astype(np.int64)


@dataclass(frozen=True)
class PacketDataset:
    """A packet table stored as a Parquet dataset by :func:`to_parquet` (open one with :func:`open_dataset`).

    Attributes
    ----------
    path : pathlib.Path
        The dataset's directory.
    partitions : int
        Number of partitions (some may be empty).
    rows : tuple of int
        Packets in each partition.
    accounting : ReadAccounting
        The read accounting of the capture (as ``read_pcap``'s ``attrs["accounting"]``).
    time_origin_ns : int
        The earliest packet timestamp of the whole capture (0 if no packet); per-partition
        analyses measure times from it so that they equal the whole-table results. [ns]
    """

    path: Path
    partitions: int
    rows: tuple
    accounting: ReadAccounting
    time_origin_ns: int

    def partition_path(self, i: int) -> Path:
        """The directory of partition ``i``'s Parquet files.

        Parameters
        ----------
        i : int
            Partition number, ``0 <= i < partitions``.

        Returns
        -------
        pathlib.Path
            ``path / f"part={i:04d}"`` (it exists only if the partition has rows).
        """
        return self.path / f"part={i:04d}"

    def partition_files(self, i: int) -> list[Path]:
        """The Parquet files of partition ``i``, in the order they were written.

        Parameters
        ----------
        i : int
            Partition number, ``0 <= i < partitions``.

        Returns
        -------
        list of pathlib.Path
            ``data-00000.parquet``, ``data-00001.parquet``, ... (or the single ``data.parquet`` of
            a dataset written before the files were numbered); empty if the partition has no rows.
        """
        folder = self.partition_path(i)
        return sorted(folder.glob("data*.parquet"), key=lambda f: (len(f.name) != len("data.parquet"), f.name))

    def nonempty(self) -> list[int]:
        """Partitions that hold at least one packet.

        Returns
        -------
        list of int
            Partition numbers, ascending.
        """
        return [i for i, n in enumerate(self.rows) if n]

    def read_partition(self, i: int) -> pd.DataFrame:
        """The packets of one partition as a packet table (schema dtypes, file order).

        Parameters
        ----------
        i : int
            Partition number.

        Returns
        -------
        pandas.DataFrame
            The rows of ``read_pcap``'s table that fall in partition ``i``, in file order; the
            address categories are those of the partition (IPv4 then IPv6, numeric order).
        """
        if not 0 <= i < self.partitions:
            raise ValueError(f"partition {i} out of range [0, {self.partitions})")
        if not self.rows[i]:
            return empty_table()
        return _read_files(self.partition_files(i))


def _sorted_addresses(names) -> list[str]:
    """Address texts in the packet table's category order: IPv4 before IPv6, numeric within each."""
    parsed = [ipaddress.ip_address(n) for n in names]
    return [str(n) for _, n in sorted(zip(parsed, names), key=lambda p: (p[0].version, int(p[0])))]


def _read_files(files: list[Path]) -> pd.DataFrame:
    import pyarrow as pa
    import pyarrow.parquet as pq

    tables = [pq.read_table(f) for f in files]
    table = pa.concat_tables(tables) if len(tables) > 1 else tables[0]
    cols: dict = {}
    for name in COLUMNS:
        col = table.column(name)
        if name in _CATEGORY_COLUMNS:
            chunks = [c for c in col.chunks if len(c)]
            names = sorted({s for c in chunks for s in c.dictionary.to_pylist()})
            cats = list(TUNNELS) if name == "tunnel" else _sorted_addresses(names)
            index = pd.Index(cats)
            codes = np.concatenate([index.get_indexer(c.dictionary.to_pylist())[
                c.indices.to_numpy(zero_copy_only=False)] for c in chunks]) if chunks else np.zeros(0, np.int64)
            cat = pd.Categorical.from_codes(codes, categories=cats)
            cols[name] = cat
        else:
            cols[name] = col.to_numpy()
    del table, tables
    order = np.argsort(cols["frame_index"], kind="stable")
    if len(files) > 1 and np.any(order != np.arange(len(order))):
        cols = {k: v[order] for k, v in cols.items()}
    return conform(cols)


def to_parquet(capture: str | os.PathLike, out_dir: str | os.PathLike, *, chunk_bytes: int = 32 << 20,
               partitions: int = DEFAULT_PARTITIONS, max_gzip_expansion: float | None = MAX_GZIP_EXPANSION,
               progress: Callable[[int], object] | None = None) -> PacketDataset:
    """Read a capture chunk by chunk into a Parquet dataset partitioned by connection hash.

    Parameters
    ----------
    capture : str or path-like
        Classic pcap or pcapng, optionally gzip-compressed (the native engine of ``read_pcap``).
    out_dir : str or path-like
        Directory to write (created; must not already hold a dataset).
    chunk_bytes : int
        Bytes of decompressed file decoded at once (at least 4096); sets the peak memory, about
        10-20 times this, whatever the capture's size: each partition buffers its rows up to
        ``ROW_GROUP_ROWS`` (all partitions together at most 4 chunks' worth) and closes its file
        after ``ROW_GROUPS_PER_FILE`` row groups. [bytes]
    partitions : int
        Number of partitions (1 to 65536); both directions of a connection land in the same one.
    max_gzip_expansion : float or None
        As for :func:`~tcpmodels.traces.read_pcap`. [-]
    progress : callable, optional
        Called after each chunk with the number of (decompressed) file bytes just read [bytes]
        (e.g. a ``tqdm`` bar's ``update``).

    Returns
    -------
    PacketDataset
        The dataset written; ``accounting`` as ``read_pcap``'s (also in ``tcpmodels_dataset.json``).

    Warns
    -----
    TraceWarning
        The same warnings as :func:`~tcpmodels.traces.read_pcap` (skipped records by reason, a
        truncated tail, timestamps out of order, ...).

    Raises
    ------
    tcpmodels.traces.pcapfile.CaptureFileError
        If the file is not a readable capture.
    ValueError
        For ``partitions`` out of range, or if ``out_dir`` already holds a dataset.
    """
    if not 1 <= int(partitions) <= 65536:
        raise ValueError(f"partitions must be in [1, 65536]; got {partitions}")
    partitions = int(partitions)
    out = Path(out_dir)
    if (out / METADATA_FILE).exists():
        raise ValueError(f"{out} already holds a packet dataset; remove it or choose another directory")
    out.mkdir(parents=True, exist_ok=True)
    reading = ChunkedCapture(capture, chunk_bytes, max_gzip_expansion, on_batch=progress)
    sink = _PartitionSink(out, buffer_bytes=4 * int(chunk_bytes))
    rows = np.zeros(partitions, np.int64)
    t_min: int | None = None
    try:
        for cols in reading.decoded():
            part = connection_partition(cols["src_hi"], cols["src_lo"], cols["src_port"], cols["dst_hi"],
                                        cols["dst_lo"], cols["dst_port"], partitions)
            ts = cols["timestamp_ns"]
            t_min = int(ts.min()) if t_min is None else min(t_min, int(ts.min()))
            chunk = _arrow_chunk(assemble_table(cols))
            del cols
            order = np.argsort(part, kind="stable")
            counts = np.bincount(part, minlength=partitions)
            row_bytes = chunk.nbytes / max(chunk.num_rows, 1)
            offset = 0
            for i in np.flatnonzero(counts):
                rows_i = order[offset:offset + counts[i]]
                offset += int(counts[i])
                sink.add(int(i), chunk.take(rows_i), int(counts[i] * row_bytes))
                rows[i] += counts[i]
            del chunk
        sink.flush_all()
    finally:
        sink.close()
    accounting = reading.accounting()
    meta = {"format": _FORMAT, "hash": _HASH, "partitions": partitions, "rows": rows.tolist(),
            "time_origin_ns": t_min if t_min is not None else 0, "capture": os.fspath(capture),
            "chunk_bytes": int(chunk_bytes), "accounting": accounting.to_dict()}
    (out / METADATA_FILE).write_text(json.dumps(meta, indent=1))
    warn_accounting(accounting)
    return open_dataset(out)


class _PartitionSink:
    """Buffers each partition's rows and writes them as row groups of about ``ROW_GROUP_ROWS`` rows.

    Memory: the buffered rows (at most ``buffer_bytes``: past it the largest buffers are written
    early) plus the metadata of the open files (at most ``ROW_GROUPS_PER_FILE`` row groups each:
    then the file is closed and the partition continues in the next one).
    """

    def __init__(self, out: Path, buffer_bytes: int) -> None:
        self.out, self.buffer_bytes = out, buffer_bytes
        self.pending: dict[int, list] = {}
        self.pending_rows: dict[int, int] = {}
        self.pending_bytes: dict[int, int] = {}
        self.buffered_bytes = 0
        self.writers: dict[int, object] = {}
        self.groups: dict[int, int] = {}
        self.files: dict[int, int] = {}

    def add(self, i: int, piece, nbytes: int) -> None:
        """Buffer ``piece`` (an Arrow table of ``nbytes`` bytes, its own copy of the rows) for partition ``i``;
        write what is due."""
        self.pending.setdefault(i, []).append(piece)
        self.pending_rows[i] = self.pending_rows.get(i, 0) + piece.num_rows
        self.pending_bytes[i] = self.pending_bytes.get(i, 0) + nbytes
        self.buffered_bytes += nbytes
        if self.pending_rows[i] >= ROW_GROUP_ROWS:
            self._write(i)
        while self.buffered_bytes > self.buffer_bytes:
            self._write(max(self.pending_bytes, key=self.pending_bytes.__getitem__))

    def flush_all(self) -> None:
        """Write every buffered row."""
        for i in sorted(self.pending):
            self._write(i)

    def _write(self, i: int) -> None:
        import pyarrow as pa
        import pyarrow.parquet as pq

        pieces = self.pending.pop(i, [])
        self.pending_rows.pop(i, None)
        self.buffered_bytes -= self.pending_bytes.pop(i, 0)
        if not pieces:
            return
        table = _compact_dictionaries(pa.concat_tables(pieces, promote_options="none"))
        if i not in self.writers:
            k = self.files.get(i, 0)
            path = self.out / f"part={i:04d}" / f"data-{k:05d}.parquet"
            path.parent.mkdir(exist_ok=True)
            self.writers[i] = pq.ParquetWriter(path, table.schema)
            self.files[i], self.groups[i] = k + 1, 0
        self.writers[i].write_table(table, row_group_size=max(table.num_rows, 1))
        self.groups[i] += 1
        if self.groups[i] >= ROW_GROUPS_PER_FILE:
            self.writers.pop(i).close()

    def close(self) -> None:
        """Close every open file."""
        for w in self.writers.values():
            w.close()
        self.writers.clear()


def _arrow_chunk(df: pd.DataFrame):
    """A packet-table chunk as one Arrow table: numbers as they are, categories as dictionary strings
    (the chunk's categories; :func:`_compact_dictionaries` trims them to a row group's own values)."""
    import pyarrow as pa

    arrays = []
    for name in COLUMNS:
        s = df[name]
        if name in _CATEGORY_COLUMNS:
            cat = s.array
            codes = np.asarray(cat.codes, np.int32)
            arrays.append(pa.DictionaryArray.from_arrays(pa.array(codes, mask=codes < 0),
                                                         pa.array([str(c) for c in cat.categories], pa.string())))
        else:
            arrays.append(pa.array(s.to_numpy()))
    return pa.Table.from_arrays(arrays, names=list(COLUMNS))


def _compact_dictionaries(table):
    """``table`` with each dictionary column re-encoded to the values its rows use, one dictionary for all
    its chunks (so a partition's files name only its own addresses)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    for name in _CATEGORY_COLUMNS:
        j = table.schema.get_field_index(name)
        col = table.column(j)
        encoded = pc.dictionary_encode(col.cast(pa.string())).combine_chunks()
        table = table.set_column(j, table.schema.field(j), encoded)
    return table


def open_dataset(path: str | os.PathLike | PacketDataset) -> PacketDataset:
    """Open a dataset written by :func:`to_parquet`.

    Parameters
    ----------
    path : str, path-like or PacketDataset
        The dataset's directory (a :class:`PacketDataset` is returned as it is).

    Returns
    -------
    PacketDataset
        Its partitions, rows per partition, read accounting and time origin.

    Raises
    ------
    FileNotFoundError
        If the directory holds no ``tcpmodels_dataset.json``.
    ValueError
        If the dataset's format is newer than this reader.
    """
    if isinstance(path, PacketDataset):
        return path
    root = Path(path)
    meta_path = root / METADATA_FILE
    if not meta_path.exists():
        raise FileNotFoundError(f"{root} is not a packet dataset: no {METADATA_FILE} (write one with to_parquet)")
    meta = json.loads(meta_path.read_text())
    if meta.get("format") != _FORMAT:
        raise ValueError(f"{root}: dataset format {meta.get('format')} is not {_FORMAT}")
    a = dict(meta["accounting"])
    a["link_types"] = tuple(a.get("link_types", ()))
    return PacketDataset(path=root, partitions=int(meta["partitions"]), rows=tuple(int(r) for r in meta["rows"]),
                         accounting=ReadAccounting(**a), time_origin_ns=int(meta["time_origin_ns"]))


def read_parquet_dataset(path: str | os.PathLike | PacketDataset) -> pd.DataFrame:
    """The whole packet table of a dataset, equal to ``read_pcap`` of the capture it came from.

    Needs memory for the whole table: for captures that do not fit, work per partition
    (:meth:`PacketDataset.read_partition`, ``flows(dataset)``).

    Parameters
    ----------
    path : str, path-like or PacketDataset
        A dataset written by :func:`to_parquet`.

    Returns
    -------
    pandas.DataFrame
        Rows in file order, the schema's columns and dtypes, the same category order as
        ``read_pcap``; the :class:`~tcpmodels.traces.schema.ReadAccounting` in ``attrs["accounting"]``.
    """
    ds = open_dataset(path)
    files = [f for i in ds.nonempty() for f in ds.partition_files(i)]
    table = _read_files(files) if files else empty_table()
    table.attrs["accounting"] = ds.accounting
    return table
