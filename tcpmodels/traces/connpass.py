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

from dataclasses import dataclass

import numpy as np
import pandas as pd

from . import pcapfile

try:  # built by the package's install (setup.py) when a C compiler is present
    from . import cflows as _cflows
except ImportError:  # pragma: no cover - depends on the install
    _cflows = None

__all__ = ["compiled_pass_available", "use_compiled_pass", "table_columns", "run_table", "PassResult",
           "FLOW_DTYPE", "SAMPLE_DTYPE", "ROW_BITS", "flow_ids", "relative_s"]

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
    """Times relative to ``ns0`` in seconds, rounded as the reference rounds them: ``(ns - ns0) / 1e9``. [s]"""
    return (np.asarray(ns, np.int64) - np.int64(ns0)) / 1e9


def _endpoint_codes(packets: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """Address codes of both ends on one category list (the same addresses, the same code)."""
    src, dst = packets["src_addr"], packets["dst_addr"]
    cats = pd.Index(src.cat.categories).union(pd.Index(dst.cat.categories))
    s = cats.get_indexer(src.cat.categories).astype(np.uint64)[src.cat.codes.to_numpy()]
    d = cats.get_indexer(dst.cat.categories).astype(np.uint64)[dst.cat.codes.to_numpy()]
    return s, d


def flag_byte(syn, ack_flag, fin, rst, has_timestamps) -> np.ndarray:
    """The flags the pass reads, one byte per packet (SYN 1, ACK 2, FIN 4, RST 8, timestamps option 16)."""
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
    """``flow_id = 2 * connection_id + direction`` (0: the initiator's direction)."""
    return 2 * np.asarray(conn, np.int64) + np.asarray(direction, np.int64)
