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

    tcpmodels_dataset.json     format, partitions, the read accounting, time origin, rows per partition,
                               and every Parquet file with its partition, rows, size and CRC-32
    part=0000/data-00000.parquet   rows of partition 0, in file order
    part=0000/data-00001.parquet   more rows of partition 0 (a partition's file is closed after
    ...                            ``ROW_GROUPS_PER_FILE`` row groups and continued in the next)
    part=0001/data-00000.parquet   ...

(Datasets written before the files were numbered hold one ``part=NNNN/data.parquet``; they read
the same.)

A dataset is a unit. :func:`to_parquet` writes it into a fresh hidden folder beside ``out_dir``
(``.NAME.partial-HOST-PID-*``) and renames that folder into place only when every file and the
metadata are written: an interrupted run leaves no dataset (it removes its partial folder; one
killed outright leaves it, and the next run into ``out_dir`` on that host removes it), and it
never writes into a folder that holds anything. Every read checks the folder against the file list
of the metadata: a file missing, a file not listed (a foreign Parquet file, a stale one), a file
whose size, CRC-32 or row count differs is a :class:`DatasetError` naming the file.

The Parquet files hold the schema's columns (:data:`~tcpmodels.traces.schema.COLUMNS`) with
the addresses and the tunnel as dictionary-encoded strings; any Parquet reader (pyarrow,
dask, DuckDB, Spark) reads them. :func:`read_parquet_dataset` gives back the table equal to
``read_pcap`` of the capture (rows in file order, dtypes and category order included).
"""

from __future__ import annotations

import glob
import ipaddress
import json
import os
import secrets
import shutil
import socket
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np
import pandas as pd

from tcpmodels._docstrings import SharedEntries

from .connpass import mix64
from .decode import TUNNELS
from .pcapfile import MAX_GZIP_EXPANSION, MAX_RECORD_BYTES
from .reader import ChunkedCapture, assemble_table, warn_accounting
from .schema import COLUMNS, ReadAccounting, conform, empty_table

__all__ = ["to_parquet", "open_dataset", "read_parquet_dataset", "PacketDataset", "DatasetError", "METADATA_FILE",
           "DEFAULT_PARTITIONS"]

#: Parameters documented once for the docstrings of this module that share them.
_PARAMETERS = SharedEntries("""
    i : int
        Partition number, ``0 <= i < partitions``.
""")

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
#: 2: the metadata lists every file (partition, rows, size, CRC-32); 1: it did not (still read).
_FORMAT = 2
_READABLE_FORMATS = (1, 2)
_HASH = "splitmix64(endpoint a) + splitmix64(endpoint b), v1"
_CATEGORY_COLUMNS = ("tunnel", "src_addr", "dst_addr")


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
        h = mix64(np.asarray(hi, np.uint64) ^ np.uint64(0x9E3779B97F4A7C15))
        h = mix64(h ^ np.asarray(lo, np.uint64))
        return mix64(h ^ np.asarray(port, np.uint64))

    h = mix64(endpoint(src_hi, src_lo, src_port) + endpoint(dst_hi, dst_lo, dst_port))
    return (h % np.uint64(partitions)).astype(np.int64)


class DatasetError(ValueError):
    """A packet dataset whose files are not those its metadata lists (missing, extra, damaged), or a folder
    that cannot take a new dataset; the message names the file or what the folder holds."""


@dataclass(frozen=True)
class DatasetFile:
    """One Parquet file of a packet dataset, as the metadata lists it.

    Attributes
    ----------
    name : str
        Path relative to the dataset's folder (``part=0003/data-00000.parquet``).
    partition : int
        The partition it belongs to.
    rows : int
        Packets it holds.
    size_bytes : int
        File size. [bytes]
    crc32 : int
        CRC-32 (zlib) of the whole file.
    """

    name: str
    partition: int
    rows: int
    size_bytes: int
    crc32: int

    def to_dict(self) -> dict:
        """The entry as the metadata stores it.

        Returns
        -------
        dict
            ``file``, ``partition``, ``rows``, ``size_bytes``, ``crc32``.
        """
        return {"file": self.name, "partition": self.partition, "rows": self.rows, "size_bytes": self.size_bytes,
                "crc32": self.crc32}


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
    files : tuple of DatasetFile, optional
        Every Parquet file as the metadata lists it, in partition then writing order; ``None``
        for a dataset of format 1 (written before the list was kept: its files are found by
        name and checked against ``rows`` only).
    """

    path: Path
    partitions: int
    rows: tuple
    accounting: ReadAccounting
    time_origin_ns: int
    files: tuple | None = None

    @_PARAMETERS.fill
    def partition_path(self, i: int) -> Path:
        """The directory of partition ``i``'s Parquet files.

        Parameters
        ----------
        {i}

        Returns
        -------
        pathlib.Path
            ``path / f"part={i:04d}"`` (it exists only if the partition has rows).
        """
        return self.path / _partition_dir(i)

    def _listed(self, i: int) -> list[DatasetFile]:
        return [f for f in self.files if f.partition == i] if self.files is not None else []

    @_PARAMETERS.fill
    def partition_files(self, i: int) -> list[Path]:
        """The Parquet files of partition ``i``, in the order they were written.

        Parameters
        ----------
        {i}

        Returns
        -------
        list of pathlib.Path
            ``data-00000.parquet``, ``data-00001.parquet``, ... as the metadata lists them (a
            dataset of format 1: the files found, or the single ``data.parquet`` of a dataset
            written before the files were numbered); empty if the partition has no rows.
        """
        if self.files is not None:
            return [self.path / f.name for f in self._listed(i)]
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

    def verify(self) -> None:
        """Check the folder against the metadata: every listed file present with its size, nothing else.

        Contents (CRC-32 and rows) are checked as each partition is read (:meth:`read_partition`).

        Returns
        -------
        None

        Raises
        ------
        DatasetError
            Naming the files missing, not listed, or of another size than listed.
        """
        _check_tree(self)

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

        Raises
        ------
        ValueError
            For ``i`` out of range.
        DatasetError
            If the partition's folder holds a file the metadata does not list, misses one it lists, or a
            file's size, CRC-32 or row count differs from the metadata (the message names the file).
        """
        if not 0 <= i < self.partitions:
            raise ValueError(f"partition {i} out of range [0, {self.partitions})")
        _check_partition_folder(self, i)
        if not self.rows[i]:
            return empty_table()
        if self.files is None:
            return _read_files([(f, None) for f in self.partition_files(i)], self.path)
        return _read_files([(self.path / f.name, f) for f in self._listed(i)], self.path)


def _partition_dir(i: int) -> str:
    return f"part={i:04d}"


def _names(paths, limit: int = 6) -> str:
    """Up to ``limit`` names, then how many more."""
    paths = sorted(paths)
    shown = ", ".join(paths[:limit])
    return shown + (f" and {len(paths) - limit} more" if len(paths) > limit else "")


def _check_legacy_partition(ds: PacketDataset, i: int) -> None:
    """Format 1 (no file list): the rows of partition ``i``'s files (from their footers) are the metadata's."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    files = ds.partition_files(i)
    found = 0
    for f in files:
        try:
            found += pq.ParquetFile(f).metadata.num_rows
        except (OSError, pa.ArrowException) as exc:
            raise DatasetError(f"packet dataset {ds.path}: damaged: {f.relative_to(ds.path)} is not a readable "
                               f"Parquet file ({exc})") from None
    if found != ds.rows[i]:
        raise DatasetError(f"packet dataset {ds.path}: partition {i} holds {found} rows in "
                           f"{_names([str(f.relative_to(ds.path)) for f in files]) or 'no file'}; its metadata "
                           f"says {ds.rows[i]} (a file missing, or left over from another run)")


def _check_partition_folder(ds: PacketDataset, i: int) -> None:
    """The files of partition ``i`` on disk are those listed, of the listed sizes."""
    if ds.files is None:
        _check_legacy_partition(ds, i)
        return
    folder = ds.partition_path(i)
    listed = {f.name: f for f in ds._listed(i)}
    present = {f"{_partition_dir(i)}/{e.name}" for e in os.scandir(folder)} if folder.is_dir() else set()
    _raise_mismatch(ds.path, set(listed) - present, present - set(listed),
                    [n for n in sorted(set(listed) & present)
                     if (ds.path / n).stat().st_size != listed[n].size_bytes], listed)


def _raise_mismatch(root: Path, missing, extra, resized, listed: dict) -> None:
    problems = []
    if missing:
        problems.append(f"missing {_names(missing)} (listed in {METADATA_FILE})")
    if extra:
        problems.append(f"holds {_names(extra)}, which {METADATA_FILE} does not list (a foreign or stale file: "
                        "remove it, or write the dataset again into a new folder)")
    if resized:
        problems.append("damaged: " + ", ".join(f"{n} has {(root / n).stat().st_size} bytes, listed with "
                                                f"{listed[n].size_bytes}" for n in resized[:6]))
    if problems:
        raise DatasetError(f"packet dataset {root}: " + "; ".join(problems))


def _check_tree(ds: PacketDataset) -> None:
    """The whole folder against the metadata: nothing missing, nothing extra, sizes as listed (format 1: the rows
    of each partition's files as the metadata counts them, and no partition folder beyond them)."""
    if ds.files is None:
        known = {_partition_dir(i) for i in range(ds.partitions)}
        extra = [e.name for e in os.scandir(ds.path) if e.name != METADATA_FILE and e.name not in known]
        _raise_mismatch(ds.path, (), extra, (), {})
        for i in range(ds.partitions):
            _check_legacy_partition(ds, i)
        return
    listed = {f.name: f for f in ds.files}
    dirs = {_partition_dir(f.partition) for f in ds.files}
    present, extra = set(), set()
    for entry in os.scandir(ds.path):
        if entry.name == METADATA_FILE:
            continue
        if entry.name in dirs and entry.is_dir(follow_symlinks=False):
            for e in os.scandir(entry.path):
                (present if f"{entry.name}/{e.name}" in listed else extra).add(f"{entry.name}/{e.name}")
        elif entry.is_dir(follow_symlinks=False):
            inside = [f"{entry.name}/{e.name}" for e in os.scandir(entry.path)]
            extra.update(inside or [entry.name + "/"])
        else:
            extra.add(entry.name)
    _raise_mismatch(ds.path, set(listed) - present, extra,
                    [n for n in sorted(present) if (ds.path / n).stat().st_size != listed[n].size_bytes], listed)


def _sorted_addresses(names) -> list[str]:
    """Address texts in the packet table's category order: IPv4 before IPv6, numeric within each."""
    parsed = [ipaddress.ip_address(n) for n in names]
    return [str(n) for _, n in sorted(zip(parsed, names), key=lambda p: (p[0].version, int(p[0])))]


def _read_one(path: Path, entry: DatasetFile | None, root: Path):
    """One Parquet file as an Arrow table, checked against its metadata entry (size, CRC-32, rows, columns)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    name = str(path.relative_to(root)) if path.is_relative_to(root) else str(path)
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise DatasetError(f"packet dataset {root}: missing {name} (listed in {METADATA_FILE})") from None
    if entry is not None:
        if len(data) != entry.size_bytes:
            raise DatasetError(f"packet dataset {root}: damaged: {name} has {len(data)} bytes, listed with "
                               f"{entry.size_bytes}")
        crc = zlib.crc32(data)
        if crc != entry.crc32:
            raise DatasetError(f"packet dataset {root}: damaged: {name} has CRC-32 {crc:08x}, listed with "
                               f"{entry.crc32:08x}")
    try:
        table = pq.read_table(pa.BufferReader(data))
    except (OSError, pa.ArrowException) as exc:
        raise DatasetError(f"packet dataset {root}: damaged: {name} is not a readable Parquet file ({exc})") from None
    missing = [c for c in COLUMNS if c not in table.column_names]
    if missing:
        raise DatasetError(f"packet dataset {root}: {name} is not a packet-table file: no column(s) "
                           f"{_names(missing, 4)}")
    if entry is not None and table.num_rows != entry.rows:
        raise DatasetError(f"packet dataset {root}: damaged: {name} holds {table.num_rows} rows, listed with "
                           f"{entry.rows}")
    return table


def _read_files(files: list[tuple[Path, DatasetFile | None]], root: Path) -> pd.DataFrame:
    import pyarrow as pa

    tables = [_read_one(f, entry, root) for f, entry in files]
    try:
        table = pa.concat_tables(tables) if len(tables) > 1 else tables[0]
    except pa.ArrowException as exc:
        raise DatasetError(f"packet dataset {root}: the files {_names([str(f) for f, _ in files], 4)} do not share "
                           f"one schema ({exc}): a foreign file among them?") from None
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
               progress: Callable[[int], object] | None = None,
               max_record_bytes: int = MAX_RECORD_BYTES) -> PacketDataset:
    """Read a capture chunk by chunk into a Parquet dataset partitioned by connection hash.

    Parameters
    ----------
    capture : str or path-like
        Classic pcap or pcapng, optionally gzip-compressed (the native engine of ``read_pcap``).
    out_dir : str or path-like
        Directory to write: a new one, or an empty one. The dataset is written into a hidden
        folder beside it (``.NAME.partial-*``) and renamed to ``out_dir`` once complete.
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
    max_record_bytes : int
        As for :func:`~tcpmodels.traces.read_pcap`. [bytes]

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
        For ``partitions`` out of range.
    DatasetError
        If ``out_dir`` is a file, or a folder that holds anything (the message names what it holds).
    """
    if not 1 <= int(partitions) <= 65536:
        raise ValueError(f"partitions must be in [1, 65536]; got {partitions}")
    partitions = int(partitions)
    out = Path(out_dir)
    _check_target(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    work = _partial_folder(out)
    try:
        _write(capture, work, chunk_bytes, partitions, max_gzip_expansion, progress, max_record_bytes)
        _publish(work, out)
    except BaseException:
        shutil.rmtree(work, ignore_errors=True)
        raise
    ds = open_dataset(out)
    warn_accounting(ds.accounting)
    return ds


def _check_target(out: Path) -> None:
    """Refuse a target that is a file or a folder holding anything, naming what it holds."""
    if not (out.exists() or out.is_symlink()):
        return
    if not out.is_dir():
        raise DatasetError(f"{out} exists and is not a directory; give to_parquet a new or empty folder")
    entries = sorted(e.name + ("/" if e.is_dir() else "") for e in os.scandir(out))
    if not entries:
        return
    if METADATA_FILE in entries:
        raise DatasetError(f"{out} already holds a packet dataset ({METADATA_FILE} and {len(entries) - 1} other "
                           "entries); remove it or choose another directory")
    stale = any(e.startswith("part=") for e in entries)
    raise DatasetError(f"{out} is not empty: it holds {_names(entries)}"
                       + (" (the partitions of an interrupted run of an older version?)" if stale else "")
                       + "; to_parquet writes only into a new or empty folder: remove them or choose another")


def _partial_folder(out: Path) -> Path:
    """A new hidden folder beside ``out`` to write into (the umask's permissions, not mkdtemp's 0700), named by this
    host and process; the partial folders of ``out`` that processes of this host left when killed are removed."""
    host = socket.gethostname()
    for stale in out.parent.glob(f".{glob.escape(out.name)}.partial-{glob.escape(host)}-*"):
        pid = stale.name[len(f".{out.name}.partial-{host}-"):].split("-")[0]
        if pid.isdigit() and not _alive(int(pid)):
            shutil.rmtree(stale, ignore_errors=True)
    while True:
        work = out.parent / f".{out.name}.partial-{host}-{os.getpid()}-{secrets.token_hex(4)}"
        try:
            work.mkdir()
            return work
        except FileExistsError:  # pragma: no cover - 32 random bits
            continue


def _alive(pid: int) -> bool:
    """Whether a process ``pid`` exists on this host (one we may not signal exists too)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _publish(work: Path, out: Path) -> None:
    """Rename the complete dataset into place (over an empty folder, never over anything else)."""
    try:
        os.rename(work, out)
    except OSError as exc:
        raise DatasetError(f"{out} could not take the dataset written in {work.name} ({exc.strerror}): did "
                           "something write into it meanwhile? Nothing was changed in it") from None


def _write(capture, work: Path, chunk_bytes: int, partitions: int, max_gzip_expansion: float | None,
           progress: Callable[[int], object] | None, max_record_bytes: int) -> list[DatasetFile]:
    """Write the partitions and the metadata into ``work``; the files written."""
    reading = ChunkedCapture(capture, chunk_bytes, max_gzip_expansion, on_batch=progress,
                             max_record_bytes=max_record_bytes)
    sink = _PartitionSink(work, buffer_bytes=4 * int(chunk_bytes))
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
    files = sink.listing()
    accounting = reading.accounting()
    meta = {"format": _FORMAT, "hash": _HASH, "partitions": partitions, "rows": rows.tolist(),
            "time_origin_ns": t_min if t_min is not None else 0, "capture": os.fspath(capture),
            "chunk_bytes": int(chunk_bytes), "accounting": accounting.to_dict(),
            "files": [f.to_dict() for f in files]}
    (work / METADATA_FILE).write_text(json.dumps(meta, indent=1))
    return files


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
        self.file_rows: dict[tuple[int, int], int] = {}

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
            path = self.out / _partition_dir(i) / f"data-{k:05d}.parquet"
            path.parent.mkdir(exist_ok=True)
            self.writers[i] = pq.ParquetWriter(path, table.schema)
            self.files[i], self.groups[i] = k + 1, 0
            self.file_rows[i, k] = 0
        self.writers[i].write_table(table, row_group_size=max(table.num_rows, 1))
        self.file_rows[i, self.files[i] - 1] += table.num_rows
        self.groups[i] += 1
        if self.groups[i] >= ROW_GROUPS_PER_FILE:
            self.writers.pop(i).close()

    def close(self) -> None:
        """Close every open file."""
        for w in self.writers.values():
            w.close()
        self.writers.clear()

    def listing(self) -> list[DatasetFile]:
        """Every file written (after :meth:`close`), with its rows, size and CRC-32, by partition and number."""
        out = []
        for (i, k), n in sorted(self.file_rows.items()):
            name = f"{_partition_dir(i)}/data-{k:05d}.parquet"
            data = (self.out / name).read_bytes()
            out.append(DatasetFile(name=name, partition=i, rows=n, size_bytes=len(data), crc32=zlib.crc32(data)))
        return out


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


def open_dataset(path: str | os.PathLike | PacketDataset, *, verify: bool = True) -> PacketDataset:
    """Open a dataset written by :func:`to_parquet`.

    Parameters
    ----------
    path : str, path-like or PacketDataset
        The dataset's directory (a :class:`PacketDataset` is returned as it is).
    verify : bool
        Check the folder against the metadata's file list (:meth:`PacketDataset.verify`): every file
        present with its size, nothing else. Each partition's files are checked again when read.

    Returns
    -------
    PacketDataset
        Its partitions, rows per partition, read accounting, time origin and files.

    Raises
    ------
    FileNotFoundError
        If the directory holds no ``tcpmodels_dataset.json``.
    DatasetError
        If the metadata cannot be read, its format is not one this reader knows, or (``verify``) a
        file is missing, not listed, or of another size (the message names the files).
    """
    if isinstance(path, PacketDataset):
        return path
    root = Path(path)
    meta_path = root / METADATA_FILE
    if not meta_path.exists():
        raise FileNotFoundError(f"{root} is not a packet dataset: no {METADATA_FILE} (write one with to_parquet)")
    try:
        meta = json.loads(meta_path.read_text())
        fmt = meta.get("format")
        if fmt not in _READABLE_FORMATS:
            raise DatasetError(f"{meta_path}: dataset format {fmt!r} is not one this reader knows "
                               f"{_READABLE_FORMATS}")
        a = dict(meta["accounting"])
        a["link_types"] = tuple(a.get("link_types", ()))
        files = None
        if fmt >= 2:
            files = tuple(DatasetFile(name=str(f["file"]), partition=int(f["partition"]), rows=int(f["rows"]),
                                      size_bytes=int(f["size_bytes"]), crc32=int(f["crc32"]))
                          for f in meta["files"])
        ds = PacketDataset(path=root, partitions=int(meta["partitions"]),
                           rows=tuple(int(r) for r in meta["rows"]), accounting=ReadAccounting(**a),
                           time_origin_ns=int(meta["time_origin_ns"]), files=files)
    except DatasetError:
        raise
    except (ValueError, KeyError, TypeError, AttributeError, AssertionError) as exc:
        raise DatasetError(f"{meta_path}: not a readable dataset description ({type(exc).__name__}: {exc})") \
            from None
    if len(ds.rows) != ds.partitions:
        raise DatasetError(f"{meta_path}: {len(ds.rows)} row counts for {ds.partitions} partitions")
    if files is not None:
        per_part = np.zeros(ds.partitions, np.int64)
        for f in files:
            if not 0 <= f.partition < ds.partitions or f.name.split("/")[0] != _partition_dir(f.partition):
                raise DatasetError(f"{meta_path}: lists {f.name} in partition {f.partition} of {ds.partitions}")
            per_part[f.partition] += f.rows
        if per_part.tolist() != list(ds.rows):
            raise DatasetError(f"{meta_path}: its file list holds {per_part.tolist()} rows per partition, its "
                               f"row counts say {list(ds.rows)}")
    if verify:
        ds.verify()
    return ds


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

    Raises
    ------
    DatasetError
        If a file is missing, not listed or damaged (see :meth:`PacketDataset.read_partition`).
    """
    ds = open_dataset(path)
    ds.verify()
    if ds.files is None:
        files = [(f, None) for i in ds.nonempty() for f in ds.partition_files(i)]
    else:
        files = [(ds.path / f.name, f) for f in ds.files]
    table = _read_files(files, ds.path) if files else empty_table()
    table.attrs["accounting"] = ds.accounting
    return table
