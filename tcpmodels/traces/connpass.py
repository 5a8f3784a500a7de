"""The per-connection analysis as one ordered pass in compiled code (``tcpmodels.traces.cflows``).

:func:`~tcpmodels.traces.annotate`, :func:`~tcpmodels.traces.rtt_samples` and
:func:`~tcpmodels.traces.flows` have two implementations that give the same tables, column by column: the
vectorised numpy/pandas one (the reference, in :mod:`.annotation`, :mod:`.rtt` and :mod:`.flows`) and this
one, a C extension that visits each packet once, in capture order, with the state of its connection (both
directions: sequence marks, the peer's last packet, the duplicate-ACK counters, the ACKed-unseen loop, the
per-flow aggregates, the RTT samples waiting for Karn's rule). It is chosen as the decoder's kernel is:
:func:`tcpmodels.traces.pcapfile.set_kernel` or ``TCPMODELS_TRACE_KERNEL`` (``"auto"``: compiled when built,
``"numpy"``: the reference); an install without a C compiler has only the reference.

The extension gets the packet table's columns through the buffer protocol (:func:`table_columns`) and returns
per-row columns (:data:`ROW_BITS`), one record per flow (:data:`FLOW_DTYPE`) and RTT samples
(:data:`SAMPLE_DTYPE`) as packed records that numpy views without copying.
"""

from __future__ import annotations

import os
import socket
import warnings
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable

import numpy as np

if TYPE_CHECKING:  # pandas is imported where it is used: streaming a capture's flows starts without it
    import pandas as pd

from tcpmodels._docstrings import SharedEntries

from . import pcapfile
from .prefetch import prefetched
from .reader import ChunkedCapture
from .schema import ReadAccounting, TraceWarning

try:  # built by the package's install (setup.py) when a C compiler is present
    from . import cflows as _cflows
except ImportError:  # pragma: no cover - depends on the install
    _cflows = None

__all__ = ["compiled_pass_available", "use_compiled_pass", "table_columns", "run_table", "PassResult",
           "FLOW_DTYPE", "SAMPLE_DTYPE", "ROW_BITS", "flow_ids", "relative_s", "stream_records", "StreamResult",
           "connection_share", "mix64", "decoded_columns", "number_records", "address_text", "record_idents",
           "flow_columns", "warn_dropped", "STREAM_STATS"]

#: Parameters documented once for the docstrings of this module that share them.
_PARAMETERS = SharedEntries("""
    records : numpy.ndarray
        :data:`FLOW_DTYPE` records.
""")

#: Per-row flags of the compiled pass: annotation column -> bit.
ROW_BITS = {"is_initiator": 0, "is_retransmission": 1, "is_duplicate": 2, "is_dup_ack": 3, "is_keepalive": 4,
            "is_fast_retransmission": 5, "is_spurious_retransmission": 6, "is_out_of_order": 7,
            "is_zero_window": 8, "is_zero_window_probe": 9, "is_window_update": 10, "is_window_full": 11,
            "is_previous_segment_not_captured": 12, "is_acked_unseen": 13}

_I8 = "<i8"
_F8 = "<f8"
#: One flow (direction) of the compiled pass, as the extension packs it (``FlowOut`` in cflows.c).
FLOW_DTYPE = np.dtype([(name, _I8) for name in (
    "tuple_idx", "conn", "dir", "first_row", "conn_first_frame", "tuple_first_frame", "shi", "slo", "svp", "dhi", "dlo", "dvp",
    "first_ns", "last_ns", "syn_seen", "fin_seen", "rst_seen", "packets", "data_packets", "payload_bytes",
    "wire_bytes", "unique_bytes", "not_captured_bytes", "rtx", "rtx_bytes", "rtx_data", "sent_data", "fast", "spur",
    "ooo", "dup", "dupack", "ka", "zw", "zwp", "wu", "wf", "nc", "au", "rtt_n", "rtt_ts_n", "fct_negative")]
    + [(name, _F8) for name in ("rtt_min", "rtt_median", "rtt_mean", "rtt_ts_median", "fct")])
#: One RTT sample (``SampleOut`` in cflows.c): method 0 is ``"seq"``, 1 ``"ts"``; ``t_ack`` relative [s].
SAMPLE_DTYPE = np.dtype([("conn", _I8), ("dir", _I8), ("method", _I8), ("frame", _I8), ("t_ack", _F8),
                         ("rtt", _F8)])


def compiled_pass_available() -> bool:
    """Whether the compiled pass ``tcpmodels.traces.cflows`` was built, imports and matches this module.

    Returns
    -------
    bool
        True when the C extension is importable and its record layout is this module's.
    """
    return _cflows is not None and _cflows.layout() == (FLOW_DTYPE.itemsize, SAMPLE_DTYPE.itemsize)


def use_compiled_pass(kernel: str | None = None) -> bool:
    """Whether the analysis runs the compiled pass under the kernel setting.

    Parameters
    ----------
    kernel : {"auto", "c", "numpy"} or None
        A choice for this call; ``None`` takes :func:`~tcpmodels.traces.pcapfile.set_kernel`'s setting
        (initially ``TCPMODELS_TRACE_KERNEL``, else ``"auto"``).

    Returns
    -------
    bool
        True for the compiled pass, False for the numpy/pandas reference (``"numpy"``, or nothing built).
    """
    try:
        return pcapfile.active_kernel(kernel) == "c" and compiled_pass_available()
    except RuntimeError:  # "c" chosen, the decoder's kernel not built: neither is this one
        return False


def relative_s(ns: np.ndarray | int, ns0: int) -> np.ndarray:
    """Times relative to ``ns0`` in seconds, rounded as the reference rounds them: ``(ns - ns0) / 1e9``.

    Parameters
    ----------
    ns : numpy.ndarray or int
        Timestamps. [ns]
    ns0 : int
        The origin. [ns]

    Returns
    -------
    numpy.ndarray
        float64 seconds since ``ns0`` (int64 subtraction first, so exact below 2^53 ns). [s]
    """
    return (np.asarray(ns, np.int64) - np.int64(ns0)) / 1e9


def _endpoint_codes(packets: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """Address codes of both ends on one category list (the same addresses, the same code)."""
    import pandas as pd
    src, dst = packets["src_addr"], packets["dst_addr"]
    cats = pd.Index(src.cat.categories).union(pd.Index(dst.cat.categories))
    s = cats.get_indexer(src.cat.categories).astype(np.uint64)[src.cat.codes.to_numpy()]
    d = cats.get_indexer(dst.cat.categories).astype(np.uint64)[dst.cat.codes.to_numpy()]
    return s, d


def flag_byte(syn: np.ndarray, ack_flag: np.ndarray, fin: np.ndarray, rst: np.ndarray,
              has_timestamps: np.ndarray) -> np.ndarray:
    """The flags the pass reads, one byte per packet.

    Parameters
    ----------
    syn, ack_flag, fin, rst, has_timestamps : numpy.ndarray
        bool per packet: the TCP flags and whether the timestamps option is present.

    Returns
    -------
    numpy.ndarray
        uint8: SYN 1, ACK 2, FIN 4, RST 8, timestamps option 16.
    """
    fb = np.asarray(syn, np.uint8).copy()
    fb |= np.asarray(ack_flag, np.uint8) << 1
    fb |= np.asarray(fin, np.uint8) << 2
    fb |= np.asarray(rst, np.uint8) << 3
    fb |= np.asarray(has_timestamps, np.uint8) << 4
    return fb


def _c(a: np.ndarray, dtype: str) -> np.ndarray:
    return np.ascontiguousarray(a, dtype=dtype)


def table_columns(packets: pd.DataFrame) -> tuple:
    """The packet table's columns in the order and types the extension reads (``IN_NAMES`` in cflows.c).

    Parameters
    ----------
    packets : pandas.DataFrame
        A packet table (:func:`~tcpmodels.traces.read_pcap`).

    Returns
    -------
    tuple
        21 contiguous arrays (``None`` for the high halves of the addresses: the table's address codes fit
        in the low half).
    """
    import pandas as pd
    s, d = _endpoint_codes(packets)
    n = len(packets)
    # annotate does not read these: a table without them is still annotated (as the reference does)
    optional = {"frame_index": lambda: np.arange(n, dtype=np.int64), "wire_bytes": lambda: np.zeros(n, np.uint32),
                "has_timestamps": lambda: np.zeros(n, bool)}

    def g(name: str) -> pd.Series:
        if name in optional and name not in packets.columns:
            return pd.Series(optional[name]())
        return packets[name]

    return (_c(g("timestamp_ns").to_numpy(), "<i8"), _c(g("frame_index").to_numpy(), "<i8"),
            None, s, _c(g("src_port").to_numpy(), "<u4"), None, d, _c(g("dst_port").to_numpy(), "<u4"),
            _c(g("seq").to_numpy(), "<u4"), _c(g("ack").to_numpy(), "<u4"), _c(g("ip_id").to_numpy(), "<u4"),
            _c(g("payload_bytes").to_numpy(), "<u4"), _c(g("tsval").to_numpy(), "<u4"),
            _c(g("tsecr").to_numpy(), "<u4"), _c(g("sack_left").to_numpy(), "<u4"),
            _c(g("wire_bytes").to_numpy(), "<u4"), _c(g("flags").to_numpy(), "<u2"),
            _c(g("window").to_numpy(), "<u2"),
            flag_byte(g("syn").to_numpy(), g("ack_flag").to_numpy(), g("fin").to_numpy(), g("rst").to_numpy(),
                      g("has_timestamps").to_numpy()),
            _c(g("window_scale").to_numpy(), "<i1"), _c(g("mptcp_subtype").to_numpy(), "<i1"))


@dataclass
class PassResult:
    """What one run of the compiled pass over a packet table gives.

    Attributes
    ----------
    rows : dict or None
        Per-row arrays (``connection_id``, ``seq_u``, ``seq_end_u``, ``ack_u`` int64; ``bits`` uint16 with
        :data:`ROW_BITS`), in the table's row order; None when not asked for.
    flows : numpy.ndarray
        :data:`FLOW_DTYPE` records, one per direction seen, connection ids numbered as the reference numbers them.
    samples : numpy.ndarray
        :data:`SAMPLE_DTYPE` records (empty when not asked for).
    connections : int
        Connections found.
    rerun : int
        Connections analysed a second time because a later packet changed an earlier decision.
    negative_rtt : int
        RTT samples dropped because the capture's clock went backwards between segment and ACK.
    """

    rows: dict | None
    flows: np.ndarray
    samples: np.ndarray
    connections: int
    rerun: int
    negative_rtt: int


def run_table(packets: pd.DataFrame, ns0: int, *, rows: bool, samples: bool) -> PassResult:
    """Run the compiled pass over a packet table.

    Parameters
    ----------
    packets : pandas.DataFrame
        A packet table (:func:`~tcpmodels.traces.read_pcap`), at least one row.
    ns0 : int
        Time origin of relative times (the reference's ``time_origin_ns``). [ns]
    rows : bool
        Return the per-row columns (what :func:`~tcpmodels.traces.annotate` needs).
    samples : bool
        Return every RTT sample (what :func:`~tcpmodels.traces.rtt_samples` needs).

    Returns
    -------
    PassResult
        The per-row columns, flow records and samples.
    """
    if _cflows is None:
        raise RuntimeError("the compiled pass tcpmodels.traces.cflows is not built; use kernel 'numpy'")
    n = len(packets)
    outs = None
    if rows:
        outs = (np.empty(n, np.int64), np.empty(n, np.int64), np.empty(n, np.int64), np.empty(n, np.int64),
                np.empty(n, np.uint16))
    (fo, so), conns, rerun, negative = _cflows.analyze(table_columns(packets), int(ns0), bool(samples), outs)
    row_cols = None
    if rows:
        row_cols = dict(zip(("connection_id", "seq_u", "seq_end_u", "ack_u", "bits"), outs))
    return PassResult(rows=row_cols, flows=np.frombuffer(fo, FLOW_DTYPE), samples=np.frombuffer(so, SAMPLE_DTYPE),
                      connections=int(conns), rerun=int(rerun), negative_rtt=int(negative))


def flow_ids(conn: np.ndarray, direction: np.ndarray) -> np.ndarray:
    """Flow numbers of (connection, direction) pairs.

    Parameters
    ----------
    conn : numpy.ndarray
        Connection numbers.
    direction : numpy.ndarray
        0 for the initiator's direction, 1 for the responder's.

    Returns
    -------
    numpy.ndarray
        int64 ``flow_id = 2 * connection_id + direction``.
    """
    return 2 * np.asarray(conn, np.int64) + np.asarray(direction, np.int64)


# ------------------------------------------------------------------------------------------------- streams
# read -> per-connection state -> flow records, in one pass over a capture (numpy only: no pandas import)

def mix64(x: np.ndarray) -> np.ndarray:
    """splitmix64's finaliser on uint64 (wrapping arithmetic): the mixing step of the endpoint hashes of
    :func:`connection_share` and :func:`tcpmodels.traces.dataset.connection_partition`.

    Parameters
    ----------
    x : numpy.ndarray of uint64
        The values to mix (the products wrap modulo 2^64).

    Returns
    -------
    numpy.ndarray of uint64
        The mixed values.

    References
    ----------
    .. [1] G. L. Steele, D. Lea and C. H. Flood, "Fast splittable pseudorandom number generators",
       OOPSLA 2014.
    """
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
            h = mix64(np.asarray(hi, np.uint64) ^ np.uint64(0x9E3779B97F4A7C15))
            h = mix64(h ^ np.asarray(lo, np.uint64))
            return mix64(h ^ ((np.asarray(ver, np.uint64) << np.uint64(16)) | np.asarray(port, np.uint64)))

        ver = cols["ip_version"]
        h = mix64(end(cols["src_hi"], cols["src_lo"], cols["src_port"], ver)
                 + end(cols["dst_hi"], cols["dst_lo"], cols["dst_port"], ver))
    return (h % np.uint64(shares)).astype(np.int64)


def decoded_columns(cols: dict[str, np.ndarray]) -> tuple:
    """Decoded columns in the order and types the compiled pass reads.

    Parameters
    ----------
    cols : dict
        One chunk's columns from :meth:`~tcpmodels.traces.reader.ChunkedCapture.decoded` (addresses as
        uint64 halves).

    Returns
    -------
    tuple
        21 contiguous arrays, as :func:`table_columns` gives them from a packet table (the addresses' version
        in the high half of the port columns).
    """
    ver = cols["ip_version"].astype(np.uint32) << np.uint32(16)
    flags = cols["flags"]
    c = np.ascontiguousarray
    return (c(cols["timestamp_ns"], "<i8"), c(cols["frame_index"], "<i8"), c(cols["src_hi"], "<u8"),
            c(cols["src_lo"], "<u8"), ver | cols["src_port"], c(cols["dst_hi"], "<u8"), c(cols["dst_lo"], "<u8"),
            ver | cols["dst_port"], c(cols["seq"], "<u4"), c(cols["ack"], "<u4"), c(cols["ip_id"], "<u4"),
            c(cols["payload_bytes"], "<u4"), c(cols["tsval"], "<u4"), c(cols["tsecr"], "<u4"),
            c(cols["sack_left"], "<u4"), c(cols["wire_bytes"], "<u4"), c(flags, "<u2"), c(cols["window"], "<u2"),
            flag_byte((flags & 2) != 0, (flags & 16) != 0, (flags & 1) != 0, (flags & 4) != 0,
                      cols["has_timestamps"]),
            c(cols["window_scale"], "<i1"), c(cols["mptcp_subtype"], "<i1"))


@dataclass
class StreamResult:
    """What :func:`stream_records` gives.

    Attributes
    ----------
    records : numpy.ndarray
        :data:`FLOW_DTYPE` records of every flow, numbered as the whole-table analysis numbers them
        (:func:`number_records`).
    negative_rtt : int
        RTT samples dropped as negative (the capture's clock went backwards).
    t_min : int or None
        The earliest packet timestamp seen (None without packets). [ns]
    accounting : ReadAccounting
        The read accounting of the capture.
    stats : dict
        The pass's counters: packets, connections, live and largest live connections, connections a stream
        could not analyse exactly (``inexact_connections``), negative RTT samples.
    """

    records: np.ndarray
    negative_rtt: int
    t_min: int | None
    accounting: ReadAccounting
    stats: dict


#: The counters of a stream (``Stream.stats()``).
STREAM_STATS = ("packets", "connections", "live_connections", "max_live_connections", "inexact_connections",
          "negative_rtt_samples")


def stream_records(capture: str | os.PathLike, *, idle_timeout_s: float, chunk_bytes: int,
                   max_gzip_expansion: float | None, share: tuple[int, int] | None = None,
                   progress: Callable[[int], object] | None = None,
                   on_chunk: Callable[[dict], object] | None = None,
                   max_record_bytes: int = pcapfile.MAX_RECORD_BYTES, decode_ahead: bool = False) -> StreamResult:
    """Decode a capture chunk by chunk and run the compiled pass over it, keeping only live connections.

    Parameters
    ----------
    capture : str or path-like
        Classic pcap or pcapng, optionally gzip-compressed.
    idle_timeout_s : float
        A connection idle for longer than this (capture time) is finished. [s]
    chunk_bytes : int
        Bytes of decompressed file decoded at once. [bytes]
    max_gzip_expansion : float or None
        As for :func:`~tcpmodels.traces.read_pcap`. [-]
    share : (int, int), optional
        ``(i, n)``: analyse only the connections of share ``i`` of ``n`` (:func:`connection_share`).
    progress : callable, optional
        Called with the decompressed bytes of each chunk. [bytes]
    on_chunk : callable, optional
        Called with each chunk's decoded columns (all packets, before any share is taken).
    max_record_bytes : int
        As for :func:`~tcpmodels.traces.read_pcap`: longer records are skipped and counted. [bytes]
    decode_ahead : bool
        Read and decode the next chunk in a second thread while this one is analysed (:func:`~tcpmodels.
        traces.prefetch.prefetched`; both steps release the GIL, so two CPUs overlap them; ``progress`` is
        then called from that thread).

    Returns
    -------
    StreamResult
        The flow records and what the reader and the pass counted.
    """
    reading = ChunkedCapture(capture, chunk_bytes, max_gzip_expansion, on_batch=progress,
                             max_record_bytes=max_record_bytes)

    def prepared():  # read, decode, and lay out the columns the pass reads
        for cols in reading.decoded():
            ts = cols["timestamp_ns"]
            columns = decoded_columns(cols)
            if share is not None:  # only this worker's connections
                mine = connection_share(cols, share[1]) == share[0]
                columns = tuple(c[mine] for c in columns)
            yield (cols if on_chunk is not None else None), columns, int(ts[0]), int(ts.min())

    stream = None
    parts = []
    t_min = None
    chunks = prefetched(prepared(), depth=1, name="tcpmodels-decode-ahead") if decode_ahead else prepared()
    for cols, columns, ts0, ts_min in chunks:
        t_min = ts_min if t_min is None else min(t_min, ts_min)
        if on_chunk is not None:
            on_chunk(cols)
        if stream is None:  # times relative to the capture's first packet (the same on every worker)
            stream = _cflows.Stream(ts0, int(idle_timeout_s * 1e9), False)
        del cols
        stream.feed(columns)
        del columns
        fo, _ = stream.take()
        if fo:
            parts.append(np.frombuffer(fo, FLOW_DTYPE))
    stats = dict.fromkeys(STREAM_STATS, 0)
    if stream is not None:
        stream.finish()
        fo, _ = stream.take()
        parts.append(np.frombuffer(fo, FLOW_DTYPE))
        stats = stream.stats()
    records = np.concatenate(parts) if parts else np.zeros(0, FLOW_DTYPE)
    return StreamResult(number_records(records), int(stats.get("negative_rtt_samples", 0)), t_min,
                        reading.accounting(), stats)


@_PARAMETERS.fill
def number_records(records: np.ndarray) -> np.ndarray:
    """Records (renumbered in place when writable) with connection numbers as the whole-table analysis gives
    them: by the first packet of the 4-tuple, then the connection's own first packet (which no other
    connection shares: both directions of a connection carry the same pair).

    Parameters
    ----------
    {records}

    Returns
    -------
    numpy.ndarray
        The records, ``conn`` renumbered.
    """
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


def _codes(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(code of each value, distinct values) by sorting."""
    uniq, inverse = np.unique(values, return_inverse=True)
    return inverse.ravel().astype(np.int64), uniq


def address_text(vp: np.ndarray, hi: np.ndarray, lo: np.ndarray) -> np.ndarray:
    """Address text of (version << 16 | port, high half, low half) triples as the decoder gives them.

    Parameters
    ----------
    vp, hi, lo : numpy.ndarray
        Version and port, high and low 64-bit halves of the address (IPv4 in ``lo``).

    Returns
    -------
    numpy.ndarray
        Object array of str (``"10.0.0.1"``, ``"fd00::1"``); only the distinct addresses are formatted.
    """
    v6 = ((np.asarray(vp, np.int64) >> 16) == 6).astype(np.int64)
    c_lo, u_lo = _codes(np.asarray(lo, np.uint64))
    c_hi, u_hi = _codes(np.asarray(hi, np.uint64))
    width = max(len(u_lo), 1)
    codes, u_key = _codes((c_hi * width + c_lo) * 2 + v6)
    names = []
    for key in u_key.tolist():
        a, b = int(u_hi[(key // 2) // width]), int(u_lo[(key // 2) % width])
        if key % 2 == 0:
            names.append(socket.inet_ntoa((b & 0xFFFFFFFF).to_bytes(4, "big")))
        else:
            names.append(socket.inet_ntop(socket.AF_INET6, a.to_bytes(8, "big") + b.to_bytes(8, "big")))
    return np.array(names, dtype=object)[codes] if len(codes) else np.zeros(0, dtype=object)


@_PARAMETERS.fill
def record_idents(records: np.ndarray) -> dict[str, np.ndarray]:
    """The flow table's identity columns from flow records (the flow's first packet's endpoints).

    Parameters
    ----------
    {records}

    Returns
    -------
    dict
        ``src_addr``, ``src_port``, ``dst_addr``, ``dst_port``, ``ip_version`` in the records' order.
    """
    return {"src_addr": address_text(records["svp"], records["shi"], records["slo"]),
            "src_port": (records["svp"] & 0xFFFF).astype(np.uint16),
            "dst_addr": address_text(records["dvp"], records["dhi"], records["dlo"]),
            "dst_port": (records["dvp"] & 0xFFFF).astype(np.uint16),
            "ip_version": (records["svp"] >> 16).astype(np.uint8)}


#: Flow-table column -> the record field it is.
_COUNTS = {"packets": "packets", "data_packets": "data_packets", "payload_bytes": "payload_bytes",
           "wire_bytes": "wire_bytes", "unique_payload_bytes": "unique_bytes",
           "bytes_not_captured": "not_captured_bytes", "retransmitted_packets": "rtx",
           "retransmitted_bytes": "rtx_bytes", "fast_retransmissions": "fast", "spurious_retransmissions": "spur",
           "out_of_order_packets": "ooo", "duplicate_packets": "dup", "duplicate_acks": "dupack",
           "keepalive_packets": "ka", "zero_window_packets": "zw", "zero_window_probes": "zwp",
           "window_update_packets": "wu", "window_full_packets": "wf", "previous_segment_not_captured": "nc",
           "acked_unseen_packets": "au", "rtt_samples": "rtt_n", "rtt_min_s": "rtt_min",
           "rtt_median_s": "rtt_median", "rtt_mean_s": "rtt_mean", "rtt_ts_samples": "rtt_ts_n",
           "rtt_ts_median_s": "rtt_ts_median"}


def flow_columns(records: np.ndarray, ns0: int, ident: dict[str, np.ndarray]) -> tuple[np.ndarray, dict]:
    """The flow table's columns (:func:`~tcpmodels.traces.flows`' names, dtypes and row order) from records.

    Parameters
    ----------
    records : numpy.ndarray
        :data:`FLOW_DTYPE` records (any order), connection ids as the table numbers them.
    ns0 : int
        The time origin of relative times. [ns]
    ident : dict
        ``src_addr, src_port, dst_addr, dst_port, ip_version`` of each record's flow, in the records' order.

    Returns
    -------
    flow_id : numpy.ndarray
        int64, ascending (the table's index).
    columns : dict
        Column name -> array in :data:`tcpmodels.traces.flows.FLOW_COLUMNS` order, rows in ``flow_id`` order.
    """
    order = np.lexsort((records["dir"], records["conn"]))
    r = records[order]
    out: dict[str, np.ndarray] = {"connection_id": r["conn"].copy(), "is_initiator": r["dir"] == 0}
    for c in ("src_addr", "src_port", "dst_addr", "dst_port", "ip_version"):
        out[c] = np.asarray(ident[c])[order]
    first, last = relative_s(r["first_ns"], ns0), relative_s(r["last_ns"], ns0)
    out["first_time_s"] = first + ns0 / 1e9
    out["last_time_s"] = last + ns0 / 1e9
    out["duration_s"] = last - first
    for c in ("syn_seen", "fin_seen", "rst_seen"):
        out[c] = r[c] != 0
    for c, field in _COUNTS.items():
        out[c] = r[field].copy()
    sent, duration = r["sent_data"], out["duration_s"]
    with np.errstate(divide="ignore", invalid="ignore"):
        out["loss_rate"] = np.where(sent > 0, r["rtx_data"] / np.where(sent > 0, sent, np.nan), np.nan)
        out["throughput_bps"] = np.where(duration > 0, 8.0 * out["unique_payload_bytes"]
                                         / np.where(duration > 0, duration, np.nan), np.nan)
    out["fct_s"] = r["fct"].copy()
    return flow_ids(r["conn"], r["dir"]), out


@_PARAMETERS.fill
def warn_dropped(records: np.ndarray, negative_rtt: int, stacklevel: int = 3) -> None:
    """Warn as the reference does about RTT samples and flow completion times dropped as negative.

    Parameters
    ----------
    {records}
    negative_rtt : int
        RTT samples the pass dropped (the capture's clock went backwards between a segment and its ACK).
    stacklevel : int
        For :func:`warnings.warn`.

    Returns
    -------
    None
    """
    if negative_rtt:
        total = int(records["rtt_n"].sum() + records["rtt_ts_n"].sum()) + negative_rtt
        warnings.warn(f"{negative_rtt} of {total} RTT samples dropped: negative, because capture "
                      "timestamps go backwards between the segment and its ACK", TraceWarning,
                      stacklevel=stacklevel + 1)
    negative_fct = int(records["fct_negative"].sum()) if len(records) else 0
    if negative_fct:
        warnings.warn(f"{negative_fct} flow completion times set to NaN: negative, because capture "
                      "timestamps go backwards between the SYN and the last ACK", TraceWarning,
                      stacklevel=stacklevel + 1)
