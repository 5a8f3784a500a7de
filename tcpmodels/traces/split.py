"""One capture over several workers: cut at record boundaries, each connection's packets routed to one share.

:func:`split_records` runs the compiled per-connection pass (:mod:`.connpass`) of one uncompressed classic
pcap file in two stages of independent tasks, so that no worker decodes what another decodes:

1. **ranges**: the file is cut into byte ranges at record boundaries (:func:`plan_ranges`); a task per range
   decodes it and appends each packet's pass columns to the spill file of the share that owns its
   connection (:func:`~tcpmodels.traces.connpass.connection_share`: both directions and every connection of a
   4-tuple in one share), on local disk, not through the scheduler;
2. **shares**: a task per share reads its spill files range after range (so in capture order) and runs the
   pass; the flow records of the shares are joined and numbered as the whole-table analysis numbers them.

Cutting without reading the file first: each cut is a guess, the first offset after ``k/n`` of the file where
a chain of plausible record headers starts (``cflows.sync_classic``, a few MiB read). A guess is proved by
the range before it: that range's records, walked from its own proved start, must end exactly at the cut
(no truncated tail). A range that does not, or that fails to read, or any IP fragment in any range (a datagram
may be completed across a cut) makes :func:`split_records` give ``None``: the caller then runs the
sequential pass, which gives the same result (and the same errors) as :func:`~tcpmodels.traces.stream_flows`.

The result equals the sequential stream's: every share sees its connections' packets in capture order with
the capture's time origin, frame numbers are the file's (each range's offset is the records before it) and
the read accounting is joined from the ranges' (:func:`~tcpmodels.traces.reader.join_partials`).
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from typing import Callable, Sequence

import numpy as np

from tcpmodels._docstrings import SharedEntries

from . import connpass
from .connpass import FLOW_DTYPE, StreamResult, decoded_columns, number_records
from .pcapfile import PCAP_MAGIC, CaptureFileError
from .reader import ChunkedCapture, join_partials

try:  # built by the package's install; connpass.compiled_pass_available() tells whether it matches
    from . import cflows as _compiled
except ImportError:  # pragma: no cover - no compiler where the package was installed
    _compiled = None

__all__ = ["plan_ranges", "split_records", "range_task", "share_task", "SPILL_DTYPES", "SYNC_WINDOW_BYTES"]

#: Parameters documented once for the docstrings of this module that share them.
_PARAMETERS = SharedEntries("""
    path : str or path-like
        The capture.
    chunk_bytes, max_record_bytes : int
        As for :func:`~tcpmodels.traces.read_pcap`. [bytes]
""")

#: The pass columns (:func:`~tcpmodels.traces.connpass.decoded_columns`' order) as they are spilled.
SPILL_DTYPES = tuple(np.dtype(d) for d in ("<i8", "<i8", "<u8", "<u8", "<u4", "<u8", "<u8", "<u4", "<u4", "<u4",
                                           "<u4", "<u4", "<u4", "<u4", "<u4", "<u4", "<u2", "<u2", "u1", "i1", "i1"))
_FRAME = 1  # index of frame_index among them
#: The order the columns are spilled in: widest first, so that each one is aligned in a block read back.
SPILL_ORDER = tuple(sorted(range(len(SPILL_DTYPES)), key=lambda i: -SPILL_DTYPES[i].itemsize))
#: Spilled bytes per packet. [bytes]
ROW_BYTES = sum(d.itemsize for d in SPILL_DTYPES)
#: Bytes read at each nominal cut to find a record boundary (16 records of the largest size read by default
#: fit in it). [bytes]
SYNC_WINDOW_BYTES = 4 << 20
#: Consecutive plausible record headers that make a boundary guess.
SYNC_CHAIN = 16
#: Largest jump of the seconds field between consecutive records of a guessed chain. [s]
SYNC_MAX_GAP_S = 86_400


def _cflows():
    if _compiled is None or not connpass.compiled_pass_available():
        raise RuntimeError("splitting a capture needs the compiled pass tcpmodels.traces.cflows (not built)")
    return _compiled


@_PARAMETERS.fill
def plan_ranges(path: str | os.PathLike, pieces: int, max_record_bytes: int) -> list[tuple[int, int]] | None:
    """Byte ranges cutting an uncompressed classic pcap file into about equal pieces at (guessed) record starts.

    Parameters
    ----------
    {path}
    pieces : int
        Ranges wanted (at least 1).
    max_record_bytes : int
        The reader's limit: a guessed chain holds no longer record. [bytes]

    Returns
    -------
    list of (int, int) or None
        ``(start, stop)`` file offsets, consecutive, the first starting after the 24-byte file header and the
        last ending at the file's end; fewer than ``pieces`` where no boundary was found near a cut. None for a
        file that is not an uncompressed classic pcap (gzip, pcapng, anything else): it cannot be cut so.
    """
    path = os.fspath(path)
    if not os.path.exists(path):
        raise FileNotFoundError(f"capture file not found: {path}")
    size = os.path.getsize(path)
    with open(path, "rb") as fh:
        head = fh.read(24)
        if len(head) < 24 or head[:4] not in PCAP_MAGIC:
            return None
        endian, ns_per_tick = PCAP_MAGIC[head[:4]]
        frac_limit = 1_000_000 if ns_per_tick == 1000 else 1_000_000_000
        sync = _cflows().sync_classic
        cuts = [24]
        for k in range(1, max(1, int(pieces))):
            nominal = 24 + k * (size - 24) // pieces
            if nominal <= cuts[-1]:
                continue
            fh.seek(nominal)
            window = fh.read(SYNC_WINDOW_BYTES)
            off = sync(window, endian == ">", frac_limit, int(max_record_bytes), SYNC_MAX_GAP_S, SYNC_CHAIN)
            if off >= 0 and cuts[-1] < nominal + off < size:
                cuts.append(nominal + off)
    return list(zip(cuts, cuts[1:] + [size]))


def _block_bytes(rows: int) -> int:
    """Bytes a chunk of ``rows`` spilled rows takes: padded to 8 (the next chunk's 8-byte columns aligned)."""
    return -(-rows * ROW_BYTES // 8) * 8


def _spill_path(folder: str, k: int, s: int) -> str:
    return os.path.join(folder, f"range{k:04d}-share{s:04d}.bin")


@_PARAMETERS.fill
def range_task(path: str, k: int, byte_range: tuple[int, int], shares: int, folder: str, chunk_bytes: int,
               max_record_bytes: int) -> dict:
    """Stage 1: decode one byte range; spill each packet's pass columns to its connection's share.

    Parameters
    ----------
    path : str
        The capture (an uncompressed classic pcap).
    k : int
        The range's number (names its spill files).
    byte_range : (int, int)
        File offsets of the range. [bytes]
    shares : int
        Shares the connections are routed to (at most 127).
    folder : str
        Where the spill files go (``range{k}-share{s}.bin``: per decoded chunk, the share's rows column after
        column in :data:`SPILL_ORDER`, :data:`ROW_BYTES` bytes a row, padded to a multiple of 8 bytes).
    {chunk_bytes, max_record_bytes}

    Returns
    -------
    dict
        :meth:`~tcpmodels.traces.reader.ChunkedCapture.partial` and ``rows`` (per share, the rows of each
        spilled chunk), ``t_min`` (earliest timestamp [ns] or None); or ``{"error": message}`` when the range
        does not read (a wrong cut, or a corrupt file: the caller reads the whole file again to tell).
    """
    cf = _cflows()
    reading = ChunkedCapture(path, chunk_bytes, None, max_record_bytes=max_record_bytes, byte_range=byte_range)
    rows: list[list[int]] = [[] for _ in range(shares)]
    t_min = None
    files = [open(_spill_path(folder, k, s), "wb") for s in range(shares)]
    try:
        for cols in reading.decoded():
            ts = cols["timestamp_ns"]
            t_min = int(ts.min()) if t_min is None else min(t_min, int(ts.min()))
            columns = decoded_columns(cols)
            del cols
            owner = np.empty(len(columns[0]), np.int8)
            cf.connection_shares(*columns[2:8], shares, owner)
            for s, block in enumerate(cf.route(tuple(columns[i] for i in SPILL_ORDER), owner, shares)):
                if block:
                    files[s].write(block)
                    files[s].write(bytes(_block_bytes(len(block) // ROW_BYTES) - len(block)))
                    rows[s].append(len(block) // ROW_BYTES)
            del columns, owner
    except CaptureFileError as exc:
        return {"error": str(exc)}
    finally:
        for f in files:
            f.close()
    out = reading.partial()
    out.update(rows=rows, t_min=t_min)
    return out


def share_task(folder: str, s: int, ranges: Sequence[tuple[int, Sequence[int], int]], ns0: int,
               idle_timeout_ns: int) -> tuple[np.ndarray, dict]:
    """Stage 2: the compiled pass over one share's packets, range after range (capture order).

    Parameters
    ----------
    folder : str
        The spill folder of :func:`range_task`.
    s : int
        The share.
    ranges : sequence of (int, sequence of int, int)
        Per range in file order: its number, the rows of each chunk it spilled for this share, and the
        records before it in the file (added to its frame numbers).
    ns0 : int
        The capture's time origin: its first TCP packet's timestamp. [ns]
    idle_timeout_ns : int
        A connection idle longer than this is finished. [ns]

    Returns
    -------
    records : numpy.ndarray
        :data:`~tcpmodels.traces.connpass.FLOW_DTYPE` records of the share's flows (not numbered yet).
    stats : dict
        The pass's counters.
    """
    cf = _cflows()
    stream = cf.Stream(int(ns0), int(idle_timeout_ns), False)
    parts = []
    buf = np.empty(0, np.uint8)
    for k, chunk_rows, offset in ranges:
        path = _spill_path(folder, k, s)
        if not chunk_rows:
            continue
        with open(path, "rb") as fh:
            for count in chunk_rows:  # each chunk read into one reused buffer: memory bounded by a chunk
                size = _block_bytes(count)
                if len(buf) < size:
                    buf = np.empty(size, np.uint8)
                if fh.readinto(memoryview(buf)[:size]) != size:
                    raise RuntimeError(f"{path}: spill file shorter than the {sum(chunk_rows)} rows spilled")
                columns: list = [None] * len(SPILL_DTYPES)
                at = 0
                for i in SPILL_ORDER:
                    dt = SPILL_DTYPES[i]
                    columns[i] = buf[at:at + count * dt.itemsize].view(dt)
                    at += count * dt.itemsize
                columns[_FRAME] = columns[_FRAME] + np.int64(offset)
                stream.feed(tuple(columns))
                del columns
                fo, _ = stream.take()
                if fo:
                    parts.append(np.frombuffer(fo, FLOW_DTYPE))
        os.unlink(path)
    stream.finish()
    fo, _ = stream.take()
    parts.append(np.frombuffer(fo, FLOW_DTYPE))
    return np.concatenate(parts), stream.stats()


#: ``run(function, argument tuples)`` -> the results in order (Dask: submit and gather; here: a loop).
Runner = Callable[[Callable, list], list]


def run_here(fn: Callable, args: list) -> list:
    """The tasks one after the other in this process (the runner of the tests).

    Parameters
    ----------
    fn : callable
        The task.
    args : list of tuple
        The arguments of each call.

    Returns
    -------
    list
        ``fn(*a)`` for each ``a`` in ``args``, in order.
    """
    return [fn(*a) for a in args]


@_PARAMETERS.fill
def split_records(path: str | os.PathLike, shares: int, run: Runner = run_here, *, idle_timeout_s: float,
                  chunk_bytes: int, max_record_bytes: int, spill_dir: str | os.PathLike | None = None,
                  pieces: int | None = None) -> StreamResult | None:
    """The flow records of a capture by the two stages of this module, or None when it cannot be split.

    Parameters
    ----------
    {path}
    shares : int
        Stage-2 tasks (connections divided among them by hash); 1 to 127.
    run : callable
        Runs a list of tasks, returning their results in order (:func:`run_here`, or Dask's submit + gather).
    idle_timeout_s : float
        As for :func:`~tcpmodels.traces.stream_flows`. [s]
    {chunk_bytes, max_record_bytes}
    spill_dir : str or path-like, optional
        Folder for the spill files (a temporary folder is made in it and removed at the end); every task must
        see it: local disk for a local cluster. Default: the system's temporary folder.
    pieces : int, optional
        Stage-1 tasks (byte ranges); default ``shares``.

    Returns
    -------
    StreamResult or None
        As :func:`~tcpmodels.traces.connpass.stream_records` of the whole file (``stats["split"]`` says how
        it was split, ``stats["stage_s"]`` the wall time of each stage as this caller waited for it [s]); None when the file is not an uncompressed classic pcap, no cut was found, a cut proved
        wrong, a range did not read (a corrupt file) or a range held IP fragments: the caller then runs the
        sequential pass.
    """
    shares = int(shares)
    if not 1 <= shares <= 127:
        raise ValueError(f"shares must be in [1, 127]; got {shares}")
    path = os.path.abspath(os.fspath(path))
    ranges = plan_ranges(path, pieces or shares, max_record_bytes)
    if ranges is None or len(ranges) < 2:
        return None
    folder = tempfile.mkdtemp(prefix="tcpmodels-split-", dir=None if spill_dir is None else os.fspath(spill_dir))
    try:
        t0 = time.perf_counter()
        parts = run(range_task, [(path, k, r, shares, folder, chunk_bytes, max_record_bytes)
                                 for k, r in enumerate(ranges)])
        t1 = time.perf_counter()
        if any("error" in p for p in parts) or any(p["truncated_tail_bytes"] for p in parts[:-1]) \
                or any(p["fragments_seen"] for p in parts):
            return None
        offsets = np.concatenate([[0], np.cumsum([p["records"] for p in parts])[:-1]]).tolist()
        firsts = [p["first_ts"] for p in parts if p["first_ts"] is not None]
        t_mins = [p["t_min"] for p in parts if p["t_min"] is not None]
        stats = dict.fromkeys(connpass.STREAM_STATS, 0)
        records = np.zeros(0, FLOW_DTYPE)
        if firsts:
            results = run(share_task, [(folder, s, [(k, parts[k]["rows"][s], offsets[k]) for k in range(len(parts))],
                                        firsts[0], int(idle_timeout_s * 1e9)) for s in range(shares)])
            records = np.concatenate([r[0] for r in results])
            stats = {key: sum(r[1].get(key, 0) for r in results) for key in results[0][1]}
        t2 = time.perf_counter()
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    stats["split"] = f"{len(ranges)} byte ranges -> {shares} shares"
    stats["stage_s"] = (round(t1 - t0, 3), round(t2 - t1, 3))
    return StreamResult(number_records(records), int(stats.get("negative_rtt_samples", 0)),
                        min(t_mins) if t_mins else None, join_partials(path, parts), stats)
