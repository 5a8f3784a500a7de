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
import socket
import warnings
from typing import Callable

import numpy as np
import pandas as pd

from . import connpass
from .flows import flow_table, flows
from .pcapfile import MAX_GZIP_EXPANSION
from .reader import ChunkedCapture, assemble_table, read_pcap, warn_accounting
from .schema import TraceWarning

try:  # the compiled pass (connpass.compiled_pass_available() is checked before it is used)
    from . import cflows
except ImportError:  # pragma: no cover - depends on the install
    cflows = None

__all__ = ["stream_flows", "dask_stream_flows", "DEFAULT_IDLE_TIMEOUT_S", "connection_share"]

#: A connection with no packet for this long (capture time) is finished. Longer than any TCP timer a live
#: connection waits on (RTO backoff reaches 120 s in Linux; keep-alives default to 75 s apart after 2 h of
#: silence, which a capture shows as two connections either way). [s]
DEFAULT_IDLE_TIMEOUT_S = 300.0


def _mix(x: np.ndarray) -> np.ndarray:
    """splitmix64's finaliser on uint64 (wrapping arithmetic)."""
    x = x ^ (x >> np.uint64(30))
    x = x * np.uint64(0xBF58476D1CE4E5B9)
    x = x ^ (x >> np.uint64(27))
    x = x * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))


def connection_share(cols: dict[str, np.ndarray], shares: int) -> np.ndarray:
    """Which of ``shares`` workers analyses each packet: a hash of its unordered endpoint pair (address and
    port of both ends), so that both directions and every connection of a 4-tuple land on the same worker.

    Parameters
    ----------
    cols : dict
        Decoded columns (:meth:`~tcpmodels.traces.reader.ChunkedCapture.decoded`).
    shares : int
        Number of workers (at least 1).

    Returns
    -------
    numpy.ndarray
        int64 share of each packet, in ``[0, shares)``.
    """
    with np.errstate(over="ignore"):
        def end(hi, lo, port, ver):
            h = _mix(np.asarray(hi, np.uint64) ^ np.uint64(0x9E3779B97F4A7C15))
            h = _mix(h ^ np.asarray(lo, np.uint64))
            return _mix(h ^ ((np.asarray(ver, np.uint64) << np.uint64(16)) | np.asarray(port, np.uint64)))

        ver = cols["ip_version"]
        h = _mix(end(cols["src_hi"], cols["src_lo"], cols["src_port"], ver)
                 + end(cols["dst_hi"], cols["dst_lo"], cols["dst_port"], ver))
    return (h % np.uint64(shares)).astype(np.int64)


def _pass_columns(cols: dict[str, np.ndarray]) -> tuple:
    """Decoded columns in the order and types the compiled pass reads (see :func:`.connpass.table_columns`)."""
    ver = cols["ip_version"].astype(np.uint32) << np.uint32(16)
    flags = cols["flags"]
    c = np.ascontiguousarray
    return (c(cols["timestamp_ns"], "<i8"), c(cols["frame_index"], "<i8"), c(cols["src_hi"], "<u8"),
            c(cols["src_lo"], "<u8"), ver | cols["src_port"], c(cols["dst_hi"], "<u8"), c(cols["dst_lo"], "<u8"),
            ver | cols["dst_port"], c(cols["seq"], "<u4"), c(cols["ack"], "<u4"), c(cols["ip_id"], "<u4"),
            c(cols["payload_bytes"], "<u4"), c(cols["tsval"], "<u4"), c(cols["tsecr"], "<u4"),
            c(cols["sack_left"], "<u4"), c(cols["wire_bytes"], "<u4"), c(flags, "<u2"), c(cols["window"], "<u2"),
            connpass.flag_byte((flags & 2) != 0, (flags & 16) != 0, (flags & 1) != 0, (flags & 4) != 0,
                               cols["has_timestamps"]),
            c(cols["window_scale"], "<i1"), c(cols["mptcp_subtype"], "<i1"))


def _address_text(vp: np.ndarray, hi: np.ndarray, lo: np.ndarray) -> np.ndarray:
    """Address text of (version << 16 | port, high half, low half) triples (object array of str); the distinct
    addresses found by hashing (``pandas.factorize``), only those formatted."""
    v6 = (np.asarray(vp, np.int64) >> 16) == 6
    c_lo, u_lo = pd.factorize(np.asarray(lo, np.uint64))
    c_hi, u_hi = pd.factorize(np.asarray(hi, np.uint64))
    codes, u_key = pd.factorize((c_hi.astype(np.int64) * max(len(u_lo), 1) + c_lo) * 2 + v6)
    u_key = np.asarray(u_key, np.int64)
    names = []
    for key in u_key.tolist():
        a = int(u_hi[(key // 2) // max(len(u_lo), 1)])
        b = int(u_lo[(key // 2) % max(len(u_lo), 1)])
        if key % 2 == 0:
            names.append(socket.inet_ntoa((b & 0xFFFFFFFF).to_bytes(4, "big")))
        else:
            names.append(socket.inet_ntop(socket.AF_INET6, a.to_bytes(8, "big") + b.to_bytes(8, "big")))
    return np.array(names, dtype=object)[codes] if len(codes) else np.zeros(0, dtype=object)


def _idents(records: np.ndarray) -> dict[str, np.ndarray]:
    """The flow table's identity columns from flow records (addresses as the decoder gave them)."""
    return {"src_addr": _address_text(records["svp"], records["shi"], records["slo"]),
            "dst_addr": _address_text(records["dvp"], records["dhi"], records["dlo"]),
            "src_port": (records["svp"] & 0xFFFF).astype(np.uint16),
            "dst_port": (records["dvp"] & 0xFFFF).astype(np.uint16),
            "ip_version": (records["svp"] >> 16).astype(np.uint8)}


def _numbered(records: np.ndarray) -> np.ndarray:
    """Records (renumbered in place when writable) with connection numbers as the whole-table analysis gives
    them: by the first packet of the 4-tuple, then the connection's own first packet (which no other
    connection shares: both directions of a connection carry the same pair)."""
    out = records if records.flags.writeable else records.copy()
    if len(out) == 0:
        return out
    order = np.lexsort((out["conn_first_frame"], out["tuple_first_frame"]))
    first = out["conn_first_frame"][order]
    new = np.ones(len(order), bool)
    new[1:] = first[1:] != first[:-1]
    conn = np.empty(len(order), np.int64)
    conn[order] = np.cumsum(new) - 1
    out["conn"] = conn
    return out


def _stream_records(capture, *, idle_timeout_s: float, chunk_bytes: int, max_gzip_expansion, share, progress,
                    packets_parquet) -> tuple[np.ndarray, int, int | None, object, dict]:
    """Run the stream: (flow records, negative RTT samples, earliest timestamp, read accounting, pass counters)."""
    reading = ChunkedCapture(capture, chunk_bytes, max_gzip_expansion, on_batch=progress)
    stream = None
    parts = []
    t_min = None
    writer = None
    try:
        for cols in reading.decoded():
            ts = cols["timestamp_ns"]
            t_min = int(ts.min()) if t_min is None else min(t_min, int(ts.min()))
            if packets_parquet is not None:
                writer = _write_packets(writer, packets_parquet, cols)
            if stream is None:  # times relative to the capture's first packet (the same on every worker)
                stream = cflows.Stream(int(ts[0]), int(idle_timeout_s * 1e9), False)
            columns = _pass_columns(cols)
            if share is not None:  # only the columns the pass reads, only this worker's connections
                mine = connection_share(cols, share[1]) == share[0]
                columns = tuple(c[mine] for c in columns)
            del cols
            stream.feed(columns)
            del columns
            fo, _ = stream.take()
            if fo:
                parts.append(np.frombuffer(fo, connpass.FLOW_DTYPE))
        stats = dict.fromkeys(("packets", "connections", "live_connections", "max_live_connections",
                               "inexact_connections", "negative_rtt_samples"), 0)
        if stream is not None:
            stream.finish()
            fo, _ = stream.take()
            parts.append(np.frombuffer(fo, connpass.FLOW_DTYPE))
            stats = stream.stats()
    finally:
        if writer is not None:
            writer.close()
    records = np.concatenate(parts) if parts else np.zeros(0, connpass.FLOW_DTYPE)
    return records, int(stats.get("negative_rtt_samples", 0)), t_min, reading.accounting(), stats


def _write_packets(writer, path, cols: dict[str, np.ndarray]):
    """Append one decoded chunk to the packet table's Parquet file (opened on the first chunk)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pa.Table.from_pandas(assemble_table(dict(cols)), preserve_index=False)
    if writer is None:
        writer = pq.ParquetWriter(os.fspath(path), table.schema)
    else:
        table = table.cast(writer.schema)
    writer.write_table(table)
    return writer


def stream_flows(capture: str | os.PathLike, *, idle_timeout_s: float = DEFAULT_IDLE_TIMEOUT_S,
                 chunk_bytes: int = 32 << 20, max_gzip_expansion: float | None = MAX_GZIP_EXPANSION,
                 packets_parquet: str | os.PathLike | None = None,
                 progress: Callable[[int], object] | None = None) -> pd.DataFrame:
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
        Called after each chunk with the number of (decompressed) file bytes just read. [bytes]

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
    if isinstance(idle_timeout_s, bool) or not isinstance(idle_timeout_s, (int, float, np.number)) \
            or not np.isfinite(idle_timeout_s) or idle_timeout_s <= 0:
        raise ValueError(f"idle_timeout_s [s] must be a positive finite number; got {idle_timeout_s!r}")
    if not connpass.compiled_pass_available() or not connpass.use_compiled_pass():
        table = read_pcap(capture, chunk_bytes=chunk_bytes, max_gzip_expansion=max_gzip_expansion)
        out = flows(table)
        out.attrs["accounting"] = table.attrs["accounting"]
        out.attrs["stream"] = {"fallback": "whole table (no compiled pass)"}
        return out
    records, negative, t_min, acc, stats = _stream_records(
        capture, idle_timeout_s=idle_timeout_s, chunk_bytes=chunk_bytes, max_gzip_expansion=max_gzip_expansion,
        share=None, progress=progress, packets_parquet=packets_parquet)
    warn_accounting(acc)
    out = _finish(records, negative, t_min, stats)
    out.attrs["accounting"] = acc
    out.attrs["stream"] = stats
    return out


def _finish(records: np.ndarray, negative: int, t_min: int | None, stats: dict) -> pd.DataFrame:
    inexact = int(stats.get("inexact_connections", 0))
    if inexact:
        warnings.warn(f"{inexact} connections had a SYN change the window scale after data, or ACKs before the "
                      "peer's first packet across 2^32: their streamed window-full counts and RTT samples may "
                      "differ from flows(read_pcap(...)), which analyses them again", TraceWarning, stacklevel=3)
    records = _numbered(records)
    return flow_table(records, t_min or 0, _idents(records), negative)


def _share_task(capture: str, share: tuple[int, int], idle_timeout_s: float, chunk_bytes: int,
                max_gzip_expansion) -> tuple[np.ndarray, int, int | None, dict, dict, list[str]]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", TraceWarning)
        records, negative, t_min, acc, stats = _stream_records(
            capture, idle_timeout_s=idle_timeout_s, chunk_bytes=chunk_bytes, max_gzip_expansion=max_gzip_expansion,
            share=share, progress=None, packets_parquet=None)
    return records, negative, t_min, acc.to_dict(), stats, [str(w.message) for w in caught]


def dask_stream_flows(capture: str | os.PathLike, client, *, shares: int | None = None,
                      idle_timeout_s: float = DEFAULT_IDLE_TIMEOUT_S, chunk_bytes: int = 32 << 20,
                      max_gzip_expansion: float | None = MAX_GZIP_EXPANSION) -> pd.DataFrame:
    """:func:`stream_flows` of one capture spread over Dask workers: each connection on one worker.

    Every worker reads the capture (it must see the same file at the same path) and analyses the
    connections of its share (:func:`connection_share`: a hash of the endpoint pair, so both directions and
    every connection of a 4-tuple stay together); the flow rows are joined and numbered as the whole-table
    analysis numbers them. Decoding is repeated on every worker; the per-connection analysis is divided.

    Parameters
    ----------
    capture : str or path-like
        The capture file.
    client : dask.distributed.Client
        A connected client (:func:`tcpmodels.traces.cluster.dask_client`).
    shares : int, optional
        Tasks (default: the number of workers).
    idle_timeout_s, chunk_bytes, max_gzip_expansion
        As for :func:`stream_flows`.

    Returns
    -------
    pandas.DataFrame
        Equal to :func:`stream_flows` of the capture.
    """
    if not connpass.compiled_pass_available():
        raise RuntimeError("dask_stream_flows needs the compiled pass tcpmodels.traces.cflows (not built)")
    n = shares or max(1, len(client.scheduler_info()["workers"]))
    path = os.path.abspath(os.fspath(capture))
    futures = [client.submit(_share_task, path, (i, n), idle_timeout_s, chunk_bytes, max_gzip_expansion,
                             pure=False) for i in range(n)]
    results = client.gather(futures)
    records = np.concatenate([r[0] for r in results])
    negative = sum(r[1] for r in results)
    t_mins = [r[2] for r in results if r[2] is not None]
    stats = {k: sum(r[4].get(k, 0) for r in results) for k in results[0][4]} if results[0][4] else {}
    seen = set()
    for r in results:
        for m in r[5]:
            if m not in seen:  # the reader's warnings come from every worker: once
                seen.add(m)
                warnings.warn(m, TraceWarning, stacklevel=2)
    out = _finish(records, negative, min(t_mins) if t_mins else None, stats)
    out.attrs["stream"] = stats
    return out
