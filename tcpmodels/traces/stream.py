"""Captures of any size in one pass: read -> per-connection state -> flow table, no packet table kept.

:func:`stream_flows` decodes a capture chunk by chunk (the reader of :func:`~tcpmodels.traces.read_pcap`, same
accounting and warnings) and feeds each chunk to the compiled per-connection pass (:mod:`.connpass`), which
keeps the state of the live connections only: a connection idle for longer than ``idle_timeout_s`` (capture
time) is finished, its flow rows emitted and its memory released, so memory follows the number of live
connections, not the capture's length. The packet table goes to a Parquet file only when asked
(``packets_parquet``). :func:`dask_stream_flows` spreads one capture over Dask workers, each connection on
one worker.

The result equals :func:`~tcpmodels.traces.flows` of the whole table (flow and connection numbers included)
when

- no connection is idle for longer than ``idle_timeout_s`` and then sends again (the whole-table analysis
  keeps one connection until a SYN with a new initial sequence number; a stream starts a new one),
- capture timestamps do not go backwards across chunks by more than the duplicate window (the reference
  compares every copy; a stream forgets packets once no later one can be a copy, assuming time runs forward),
- no packet is timestamped before the capture's first (RTT and FCT are computed relative to the first
  packet's time, the reference's to the earliest: the last bit may differ), and
- no connection needed a second look: a SYN changing the window scale after data was sent, or ACKs seen
  before the peer's first packet that wrap around 2^32 (counted and warned about; the in-memory analysis
  re-runs such connections).

Without the compiled pass (no C compiler at install time) :func:`stream_flows` falls back to reading the
whole table and :func:`~tcpmodels.traces.flows` (the reference), which needs memory for the table.
"""

from __future__ import annotations

import os
import sys
import threading
import warnings
from importlib import import_module
from typing import TYPE_CHECKING, Callable

import numpy as np

from . import connpass, split
from .connpass import connection_share
from .pcapfile import MAX_GZIP_EXPANSION, MAX_RECORD_BYTES, check_chunk_bytes, check_max_record_bytes
from .prefetch import more_than_one_cpu
from .reader import assemble_table, read_pcap, warn_accounting
from .schema import TraceWarning

if TYPE_CHECKING:  # pandas and the analysis modules come with the flow table (see _import_ahead)
    import pandas as pd

__all__ = ["stream_flows", "dask_stream_flows", "DEFAULT_IDLE_TIMEOUT_S", "SHARES_PER_WORKER", "connection_share"]  # connection_share: from connpass

#: A connection with no packet for this long (capture time) is finished. Longer than any TCP timer a live
#: connection waits on (RTO backoff reaches 120 s in Linux; keep-alives default to 75 s apart after 2 h of
#: silence, which a capture shows as two connections either way). [s]
DEFAULT_IDLE_TIMEOUT_S = 300.0


#: Connection shares per worker that :func:`dask_stream_flows` makes of a split capture by default: shares hold
#: whole connections, so their sizes differ; with several per worker, Dask evens out the workers' loads.
SHARES_PER_WORKER = 4

#: What the pass's records need to become the flow table: the analysis module, and with it pandas and pyarrow
#: (about 0.3 s of imports, as long as the pass over a million packets).
_TABLE_MODULE = "tcpmodels.traces.flows"


def _import_ahead(parallel: bool) -> threading.Thread | None:
    """Import :data:`_TABLE_MODULE` in a second thread while the capture is decoded, when ``parallel``.

    Decoding and the compiled pass release the GIL, so on a second CPU the imports cost no wall time; the
    caller joins the thread before building the table, and imports the module itself, which raises any
    error the thread met (the thread only warms the module cache, and stays silent).
    """
    if not parallel or _TABLE_MODULE in sys.modules:
        return None

    def load() -> None:
        try:
            import_module(_TABLE_MODULE)
        except BaseException:  # noqa: BLE001 - the caller's own import raises it, with its traceback
            pass

    thread = threading.Thread(target=load, name="tcpmodels-import-ahead", daemon=True)
    thread.start()
    return thread


def _write_packets(writer, path, cols: dict[str, np.ndarray] | pd.DataFrame):
    """Append one decoded chunk (or a whole packet table) to the packet table's Parquet file (opened on the
    first chunk)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    if isinstance(cols, dict):
        frame = assemble_table(dict(cols))
    else:  # a whole table: its attrs (the read accounting) are not Parquet metadata
        frame = cols.copy(deep=False)
        frame.attrs = {}
    table = pa.Table.from_pandas(frame, preserve_index=False)
    if writer is None:
        writer = pq.ParquetWriter(os.fspath(path), table.schema)
    else:
        table = table.cast(writer.schema)
    writer.write_table(table)
    return writer


def _check_idle_timeout(idle_timeout_s: object) -> None:
    """Raise ValueError unless ``idle_timeout_s`` [s] is a positive finite number (bool refused)."""
    if isinstance(idle_timeout_s, bool) or not isinstance(idle_timeout_s, (int, float, np.number)) \
            or not np.isfinite(idle_timeout_s) or idle_timeout_s <= 0:
        raise ValueError(f"idle_timeout_s [s] must be a positive finite number; got {idle_timeout_s!r}")


def stream_flows(capture: str | os.PathLike, *, idle_timeout_s: float = DEFAULT_IDLE_TIMEOUT_S,
                 chunk_bytes: int = 32 << 20, max_gzip_expansion: float | None = MAX_GZIP_EXPANSION,
                 packets_parquet: str | os.PathLike | None = None,
                 progress: Callable[[int], object] | None = None,
                 max_record_bytes: int = MAX_RECORD_BYTES, decode_ahead: bool | None = None) -> pd.DataFrame:
    """The flow table of a capture of any size, in one pass with memory bounded by the live connections.

    Parameters
    ----------
    capture : str or path-like
        Classic pcap or pcapng, optionally gzip-compressed.
    idle_timeout_s : float
        A connection with no packet for longer than this (capture time) is finished and emitted. [s]
    chunk_bytes : int
        Bytes of decompressed file decoded at once (at least 4096). [bytes]
    max_gzip_expansion : float or None
        As for :func:`~tcpmodels.traces.read_pcap`. [-]
    packets_parquet : str or path-like, optional
        Also write the packet table (the schema of :mod:`~tcpmodels.traces.schema`) to this Parquet file,
        chunk by chunk (categories per chunk; ``pandas.read_parquet`` reads it back).
    progress : callable, optional
        Called after each chunk with the number of (decompressed) file bytes just read (not called by the
        whole-table fallback). [bytes]
    max_record_bytes : int
        As for :func:`~tcpmodels.traces.read_pcap`: longer records are skipped and counted. [bytes]
    decode_ahead : bool, optional
        Read and decode the next chunk in a second thread while the current one is analysed (at most one
        chunk ahead, so memory stays bounded; ``progress`` is then called from that thread). Default: when
        this process may run on more than one CPU (``os.sched_getaffinity``). The result is the same.

    Returns
    -------
    pandas.DataFrame
        As :func:`~tcpmodels.traces.flows` of the whole packet table (see the module's notes for when they
        can differ); the read accounting in ``attrs["accounting"]`` and the pass's counters (packets,
        connections, largest number live at once, connections that needed a second look) in
        ``attrs["stream"]``.

    Warns
    -----
    TraceWarning
        The reader's warnings (skipped records, ...), RTT samples and flow completion times dropped because
        the clock went backwards, and connections whose streamed result may differ from the whole-table one.

    Raises
    ------
    ValueError
        For ``idle_timeout_s`` not a positive finite number.
    """
    _check_idle_timeout(idle_timeout_s)
    if not connpass.compiled_pass_available() or not connpass.use_compiled_pass():
        from .flows import flows

        table = read_pcap(capture, chunk_bytes=chunk_bytes, max_gzip_expansion=max_gzip_expansion,
                          max_record_bytes=max_record_bytes)
        if packets_parquet is not None:
            writer = _write_packets(None, packets_parquet, table)
            writer.close()
        out = flows(table)
        out.attrs["accounting"] = table.attrs["accounting"]
        out.attrs["stream"] = {"fallback": "whole table (no compiled pass)"}
        return out
    writer: list = [None]

    def write(cols: dict[str, np.ndarray]) -> None:
        writer[0] = _write_packets(writer[0], packets_parquet, cols)

    ahead = more_than_one_cpu() if decode_ahead is None else decode_ahead
    importing = _import_ahead(ahead)
    try:
        res = connpass.stream_records(capture, idle_timeout_s=idle_timeout_s, chunk_bytes=chunk_bytes,
                                      max_gzip_expansion=max_gzip_expansion, progress=progress,
                                      on_chunk=write if packets_parquet is not None else None,
                                      max_record_bytes=max_record_bytes, decode_ahead=ahead)
    finally:
        if importing is not None:
            importing.join()
        if writer[0] is not None:
            writer[0].close()
    warn_accounting(res.accounting)
    out = _finish(res.records, res.negative_rtt, res.t_min, res.stats)
    out.attrs["accounting"] = res.accounting
    out.attrs["stream"] = res.stats
    return out


def _finish(records: np.ndarray, negative: int, t_min: int | None, stats: dict) -> pd.DataFrame:
    inexact = int(stats.get("inexact_connections", 0))
    if inexact:
        warnings.warn(f"{inexact} connections had a SYN change the window scale after data, or an ACK number "
                      "equal to the no-ACK sentinel before the peer's first packet: their streamed results may "
                      "differ from flows(read_pcap(...)), which analyses them again", TraceWarning, stacklevel=3)
    from .flows import flow_table

    return flow_table(records, t_min or 0, connpass.record_idents(records), negative)


#: glibc's mallopt parameters (malloc.h) and the values a streaming worker sets.
_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3
_WORKER_HEAP = {_M_TRIM_THRESHOLD: 256 << 20, _M_MMAP_THRESHOLD: 64 << 20}


def _heap_for_streaming() -> None:
    """Let a Dask worker's C heap keep and reuse the chunk buffers (glibc only; nothing elsewhere).

    Dask starts its workers with ``MALLOC_TRIM_THRESHOLD_=65536``, which also fixes glibc's mmap threshold:
    every 32 MiB chunk buffer is then mapped, zeroed and faulted in afresh, and freed memory handed back at
    once. A stream of 3M packets took 4.0 s of CPU so against 2.5 s with glibc's defaults."""
    try:
        import ctypes

        mallopt = ctypes.CDLL("libc.so.6").mallopt
    except (OSError, AttributeError):
        return
    for param, value in _WORKER_HEAP.items():
        mallopt(param, value)


def _share_task(capture: str, share: tuple[int, int] | None, idle_timeout_s: float, chunk_bytes: int,
                max_gzip_expansion, max_record_bytes: int = MAX_RECORD_BYTES) -> connpass.StreamResult:
    """The sequential stream of a capture on a worker: every connection (``share`` None) or one share's."""
    _heap_for_streaming()
    return connpass.stream_records(capture, idle_timeout_s=idle_timeout_s, chunk_bytes=chunk_bytes,
                                   max_gzip_expansion=max_gzip_expansion, share=share,
                                   max_record_bytes=max_record_bytes)


def _split_task(fn, *args):
    _heap_for_streaming()
    return fn(*args)


def dask_stream_flows(capture: str | os.PathLike, client: object, *, shares: int | None = None,
                      idle_timeout_s: float = DEFAULT_IDLE_TIMEOUT_S, chunk_bytes: int = 32 << 20,
                      max_gzip_expansion: float | None = MAX_GZIP_EXPANSION,
                      max_record_bytes: int = MAX_RECORD_BYTES,
                      spill_dir: str | os.PathLike | None = None) -> pd.DataFrame:
    """:func:`stream_flows` of one capture spread over Dask workers: each connection on one worker.

    An uncompressed classic pcap is cut at record boundaries into one byte range per share; a task per
    range decodes it and routes each packet to the share of its connection (:func:`connection_share`: a hash
    of the endpoint pair, so both directions and every connection of a 4-tuple stay together) through spill
    files on disk; then a task per share runs the compiled pass over its packets in capture order
    (:mod:`tcpmodels.traces.split`). Every byte is decoded once. The flow rows are joined and numbered as
    the whole-table analysis numbers them.

    Other captures (gzip, pcapng), and a split that fails (a cut that proved wrong, a corrupt file, IP
    fragments in the capture), fall back, as ``attrs["stream"]["split"]`` says: gzip and pcapng to every
    worker decoding the whole capture and analysing its share of the connections; a failed split to the
    sequential stream on one worker (which raises the file's error, if any). One share is that sequential
    stream on one worker.

    Parameters
    ----------
    capture : str or path-like
        The capture file; every worker must see it at the same path.
    client : dask.distributed.Client
        A connected client (:func:`tcpmodels.traces.cluster.dask_client`).
    shares : int, optional
        Connection shares (at most 127). Given, it is also the number of byte ranges of a split capture and of
        whole-capture tasks otherwise. Default: the byte ranges and whole-capture tasks are one per worker and a
        split capture's connections go into :data:`SHARES_PER_WORKER` shares per worker, which Dask balances over
        the workers (on the 1M-packet interleaved capture two shares held 57.9 % and 42.1 % of the packets,
        eight shares 6.8-16.6 %).
    idle_timeout_s, chunk_bytes, max_gzip_expansion, max_record_bytes
        As for :func:`stream_flows`.
    spill_dir : str or path-like, optional
        Folder for the packets routed between the stages (about 100 bytes per packet, removed at the end);
        every worker must see it (local disk for a local cluster, a shared file system otherwise). Default:
        the system's temporary folder.

    Returns
    -------
    pandas.DataFrame
        Equal to :func:`stream_flows` of the capture, with its ``attrs["accounting"]``.
    """
    if not connpass.compiled_pass_available():
        raise RuntimeError("dask_stream_flows needs the compiled pass tcpmodels.traces.cflows (not built)")
    _check_idle_timeout(idle_timeout_s)
    chunk_bytes = check_chunk_bytes(chunk_bytes)
    max_record_bytes = check_max_record_bytes(max_record_bytes)
    n = shares or max(1, len(client.scheduler_info()["workers"]))
    if not 1 <= n <= 127:
        raise ValueError(f"shares must be in [1, 127]; got {n}")
    path = os.path.abspath(os.fspath(capture))

    def run(fn, args: list) -> list:
        return client.gather([client.submit(_split_task, fn, *a, pure=False) for a in args])

    res = None
    how = "one worker, sequential"
    if n > 1:
        # n byte ranges; by default more connection shares than workers, so that Dask balances shares of
        # unequal size (whole connections: a few long ones make a share heavy)
        split_shares = shares or min(127, SHARES_PER_WORKER * n)
        res = split.split_records(path, split_shares, run, idle_timeout_s=idle_timeout_s, chunk_bytes=chunk_bytes,
                                  max_record_bytes=max_record_bytes, spill_dir=spill_dir, pieces=n)
        if res is None and split.plan_ranges(path, 1, max_record_bytes) is None:
            how = "not an uncompressed classic pcap: every worker decodes it"
            parts = client.gather([client.submit(_share_task, path, (i, n), idle_timeout_s, chunk_bytes,
                                                 max_gzip_expansion, max_record_bytes, pure=False)
                                   for i in range(n)])
            res = _join_shares(parts)
        elif res is None:
            how = "split failed (a wrong cut, a corrupt file or IP fragments): one worker, sequential"
    if res is None:
        res = client.submit(_share_task, path, None, idle_timeout_s, chunk_bytes, max_gzip_expansion,
                            max_record_bytes, pure=False).result()
    warn_accounting(res.accounting)
    out = _finish(res.records, res.negative_rtt, res.t_min, res.stats)
    out.attrs["accounting"] = res.accounting
    out.attrs["stream"] = dict(res.stats, split=res.stats.get("split", how))
    return out


def _join_shares(parts: list) -> connpass.StreamResult:
    """The results of tasks that each decoded the whole capture and analysed one share of its connections."""
    records = connpass.number_records(np.concatenate([r.records for r in parts]))
    t_mins = [r.t_min for r in parts if r.t_min is not None]
    stats = {k: sum(r.stats.get(k, 0) for r in parts) for k in parts[0].stats}
    return connpass.StreamResult(records, sum(r.negative_rtt for r in parts), min(t_mins) if t_mins else None,
                                 parts[0].accounting, stats)
