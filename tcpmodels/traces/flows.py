"""Packet table -> TCP connections and directions, with per-flow measurements.

A *connection* is a 4-tuple between a SYN and the next SYN with a different
initial sequence number on the same 4-tuple (so port reuse starts a new one);
a *flow* is one direction of a connection (``flow_id = 2 * connection_id`` for
the initiator's direction, ``+ 1`` for the responder's). The initiator is the
side that sent the first SYN without ACK, else the sender of the first packet.

:func:`~tcpmodels.traces.annotation.annotate` adds per-packet analysis columns (unwrapped sequence numbers,
retransmission, duplicate, duplicate ACK); :func:`flows` summarises one row per
flow. Sequence numbers are unwrapped across the 2^32 boundary per flow.

Definitions (per direction, in capture order)
---------------------------------------------
- *Duplicate packet*: identical to an earlier packet of the same flow in IP ID,
  sequence, acknowledgment, flags, window, payload length and timestamps
  option, and captured less than half the connection's initial RTT after it
  (1 ms when the handshake was not captured): a packet captured twice, or
  duplicated by a link; never counted as a retransmission. Wireshark has no such
  class (the second copy is a "retransmission"); the time bound is what keeps a
  real retransmission, which can only follow its original by about a round trip
  or more, out of it (IPv6 has no IP ID, and IPv4 senders may send ID 0 or reuse
  an ID): see :data:`~tcpmodels.traces.annotation.DUPLICATE_MAX_GAP_OF_INITIAL_RTT`.
- *Retransmission*: a segment that occupies sequence space (payload, SYN or FIN)
  and starts below the highest sequence number already sent in this direction
  (Wireshark's criterion, [1]_), excluding duplicates, keep-alives and zero-window
  probes; and, as in Wireshark, any segment whose payload the peer's last
  acknowledgment already covers (below). Only segments that occupy sequence space set the highest sequence
  number: a pure ACK or a RST without payload never does (Wireshark lets a pure ACK or
  a RST set it, so a reordered first copy captured after a pure ACK or RST whose seq ran
  ahead is a "retransmission" there and not here). Split as Wireshark's ``tcp.analysis`` flags
  do, in Wireshark 4's order of tests: *spurious* (payload ending, without its FIN,
  at or below the peer's last acknowledgment; tested on its own, so a segment whose
  original the capture missed, a zero-window probe, or more than one byte from one
  below the highest sequence number is one too), *fast retransmission* (after two or more duplicate ACKs
  for this sequence number, within 20 ms of the last ACK), *out-of-order* (within
  the connection's initial RTT of the packet that last set Wireshark's next sequence number, a
  pure ACK included, and not ending there),
  and plain retransmission; ``retransmitted_packets`` counts all four.
- *Initial RTT*: as Wireshark's (4.0.17) ``tcp.analysis.initial_rtt``, from the most
  recent SYN to the first packet with ACK and without SYN after a SYN, either
  direction, SYN/ACK or not; 3 ms where the out-of-order test needs it and the
  capture holds no such pair.
- *Keep-alive*: no payload or one byte, starting one below Wireshark's next sequence
  number (which pure ACKs set too), on a byte the peer has already acknowledged
  (when the peer's ACKs were captured). Wireshark omits the last condition, so a one-byte segment re-sent
  after an RTO and never acknowledged is a keep-alive there and a retransmission
  here (and gives no RTT sample: Karn's rule).
- *Zero-window probe*: one byte at the highest sequence number while the peer's last
  advertised window is zero; not a retransmission. As in Wireshark, a probe does not
  move the highest sequence number (nor Wireshark's nextseq), so a probe sent again is
  a probe and the data sent when the window opens is new; one byte one below it is a
  keep-alive.
- *Duplicate ACK*: a pure ACK (no payload, SYN, FIN or RST) with the same
  acknowledgment number, window and sequence number as the previous packet of
  the direction, and a non-zero window ([1]_).
- *Expert Info* (Wireshark's names, [1]_): *zero window* (window 0, no SYN/FIN/RST),
  *window update* (no payload, a new non-zero window, same seq and ack as before),
  *window full* (payload ending exactly at the peer's advertised window edge, the
  window scaled as Wireshark 4.0.17 knows the scale: by the shift the peer's SYN offered,
  even when the other SYN was not captured; by none after any SYN without the option;
  not tested while neither is known), *previous segment not captured* (a segment
  starting beyond the highest sequence number seen so far), *ACKed unseen segment*
  (an ACK beyond the highest sequence number seen from the peer). As in Wireshark 4.0.17, a SYN
  sent again before any SYN/ACK was captured starts the next sequence number these tests use
  anew (after a RST or an ACK from an old connection whose sequence number ran ahead). Pure
  ACKs and RSTs without payload set that next sequence number too (a RST whose sequence
  number ran ahead moves it: the data after it is no previous segment not captured). A next
  sequence number of 0 (raw: a segment ending exactly at 2^32) is Wireshark's "not set": no
  retransmission (spurious apart) or previous segment not captured is tested against it, and the
  direction's next packet sets it, and the highest sequence number, anew whatever its end; the
  peer's acknowledgment number 0 is "not set" for the spurious test too.
- *Unique payload bytes*: bytes of the direction's sequence space carried by at least
  one captured data segment; *bytes not captured*: the rest of the sequence space the
  direction's packets show (from the byte after the SYN, or the first sequence number
  seen, to the highest one a data segment, pure ACK or FIN reaches; RSTs, copies and
  keep-alives not counted) that no captured segment carried: capture drops, or a capture that saw
  only part of the traffic; tcptrace's "missed data". A flow with such holes has counts
  (retransmissions, loss rate) of what was captured only.
- *Loss rate*: retransmitted data segments / data segments, duplicates not counted (an
  upper estimate of the segment loss rate seen by the sender; spurious retransmissions count).
- *FCT*: from the connection's first SYN to the first ACK from the peer that
  covers the direction's last data byte.

References
----------
.. [1] Wireshark User's Guide, Sec. 7.5 "TCP Analysis".
.. [2] RFC 6298, "Computing TCP's Retransmission Timer" (Karn's algorithm, Sec. 3).
.. [3] S. Ostermann, tcptrace (RTT samples from data segments and their ACKs).
"""

from __future__ import annotations

import os
import warnings

import numpy as np
import pandas as pd

from . import connpass
from .annotation import annotate
from .dataset import PacketDataset, open_dataset
from .rtt import rtt_samples
from .schema import TraceWarning

__all__ = ["annotate", "flows", "sequence_coverage", "partition_flows", "combine_partition_flows", "PartitionFlows"]  # annotate: re-exported, old imports


def flows(packets: pd.DataFrame | PacketDataset | str | os.PathLike, annotated: pd.DataFrame | None = None, *,
          time_origin_ns: int | None = None) -> pd.DataFrame:
    """One row per TCP connection and direction, with counts, retransmissions, RTT, loss, throughput and FCT.

    Parameters
    ----------
    packets : pandas.DataFrame, PacketDataset, str or path-like
        A packet table from :func:`~tcpmodels.traces.read_pcap`, or a packet dataset
        (:func:`~tcpmodels.traces.to_parquet`, or its directory): then each partition is
        analysed on its own (memory: one partition at a time) and the result is the same as
        for the whole table (flow and connection numbers included). To spread the
        partitions over processes or machines: :func:`tcpmodels.traces.cluster.dataset_flows`.
    annotated : pandas.DataFrame, optional
        The result of :func:`annotate` for ``packets`` if already computed (tables only).
    time_origin_ns : int, optional
        Timestamp that relative times are measured from [ns]; default the earliest packet's.
        Only rounding depends on it (times are kept to the nanosecond relative to it); a
        dataset passes its own, the whole capture's.

    Returns
    -------
    pandas.DataFrame
        Indexed by ``flow_id``; columns ``connection_id``, ``is_initiator``,
        ``src_addr, src_port, dst_addr, dst_port, ip_version``, ``first_time_s``,
        ``last_time_s``, ``duration_s`` [s], ``syn_seen, fin_seen, rst_seen``,
        ``packets``, ``data_packets``, ``payload_bytes``, ``wire_bytes``,
        ``unique_payload_bytes`` [bytes] (sequence space carried by captured data segments),
        ``bytes_not_captured`` [bytes] (holes below the highest captured data byte), ``retransmitted_packets``, ``retransmitted_bytes``
        [bytes], ``fast_retransmissions``, ``spurious_retransmissions``, ``out_of_order_packets``
        (the classes of ``retransmitted_packets``; the rest are plain retransmissions), ``duplicate_packets``,
        ``duplicate_acks`` (sent by this direction), and the other Expert Info counts: ``keepalive_packets``,
        ``zero_window_packets``, ``zero_window_probes``, ``window_update_packets``, ``window_full_packets``,
        ``previous_segment_not_captured``, ``acked_unseen_packets``,
        ``rtt_samples``, ``rtt_min_s``, ``rtt_median_s``, ``rtt_mean_s`` (data segment ->
        ACK, Karn's rule), ``rtt_ts_samples``, ``rtt_ts_median_s`` (timestamp echoes),
        ``loss_rate`` [-] (retransmitted data segments / data segments that are no duplicates, in [0, 1]), ``throughput_bps`` (unique payload over the direction's
        duration) [bit/s], ``fct_s`` [s] (NaN when the SYN or the final ACK was not captured).

    Warns
    -----
    TraceWarning
        Counting RTT samples and flow completion times dropped because the capture's
        timestamps go backwards (they would be negative).
    """
    if not isinstance(packets, pd.DataFrame):
        ds = open_dataset(packets)
        return combine_partition_flows([PartitionFlows(partition_flows(ds, i)) for i in ds.nonempty()])
    if len(packets) == 0:
        return _empty_flows()
    p = packets
    # times relative to the first packet keep nanosecond precision
    ns0 = int(p["timestamp_ns"].min()) if time_origin_ns is None else int(time_origin_ns)
    if connpass.use_compiled_pass():
        res = connpass.run_table(p, ns0, rows=False, samples=False)
        ident = p.iloc[res.flows["first_row"]]
        return flow_table(res.flows, ns0, {c: ident[c].to_numpy() for c in _IDENT}, res.negative_rtt)
    if annotated is None:
        annotated = annotate(packets)
    an = annotated
    data = (p["payload_bytes"] > 0).to_numpy()
    payload = p["payload_bytes"].to_numpy(np.int64)
    df = pd.DataFrame({
        "flow_id": an["flow_id"].to_numpy(), "connection_id": an["connection_id"].to_numpy(),
        "is_initiator": an["is_initiator"].to_numpy(),
        "t": (p["timestamp_ns"].to_numpy() - ns0) / 1e9, "syn": p["syn"].to_numpy(), "fin": p["fin"].to_numpy(),
        "rst": p["rst"].to_numpy(), "data": data, "payload": payload,
        "wire": p["wire_bytes"].to_numpy(np.int64),
        "rtx": an["is_retransmission"].to_numpy(), "fast": an["is_fast_retransmission"].to_numpy(),
        "spurious": an["is_spurious_retransmission"].to_numpy(), "ooo": an["is_out_of_order"].to_numpy(),
        "rtx_bytes": np.where(an["is_retransmission"], payload, 0),
        "rtx_data": an["is_retransmission"].to_numpy() & data,
        "sent_data": data & ~an["is_duplicate"].to_numpy(),
        "dup": an["is_duplicate"].to_numpy(), "dupack": an["is_dup_ack"].to_numpy(),
        "seq_u": np.where(data, an["seq_u"], np.nan), "end_u": np.where(data, an["seq_u"] + payload, np.nan),
        **{name: an[col].to_numpy() for name, col in _EXPERT_COUNTS.items()},
        **_span_columns(p, an),
    })
    g = df.groupby("flow_id", sort=True)
    out = g.agg(connection_id=("connection_id", "first"), is_initiator=("is_initiator", "first"),
                first_time_s=("t", "min"), last_time_s=("t", "max"), syn_seen=("syn", "any"),
                fin_seen=("fin", "any"), rst_seen=("rst", "any"), packets=("t", "size"),
                data_packets=("data", "sum"), payload_bytes=("payload", "sum"), wire_bytes=("wire", "sum"),
                retransmitted_packets=("rtx", "sum"), retransmitted_bytes=("rtx_bytes", "sum"),
                retransmitted_data_packets=("rtx_data", "sum"), sent_data_packets=("sent_data", "sum"),
                fast_retransmissions=("fast", "sum"), spurious_retransmissions=("spurious", "sum"),
                out_of_order_packets=("ooo", "sum"),
                duplicate_packets=("dup", "sum"), duplicate_acks=("dupack", "sum"),
                first_seq=("seq_u", "min"), last_end=("end_u", "max"), span_lo=("span_lo", "min"),
                span_hi=("span_hi", "max"), span_fin=("span_fin", "min"),
                **{name: (name, "sum") for name in _EXPERT_COUNTS})
    first_rows = pd.Series(np.arange(len(p))).groupby(df["flow_id"].to_numpy()).first()
    ident = p.iloc[first_rows.to_numpy()]
    for c in _IDENT:
        out[c] = ident[c].to_numpy()
    out["duration_s"] = out["last_time_s"] - out["first_time_s"]
    out["first_time_s"] += ns0 / 1e9
    out["last_time_s"] += ns0 / 1e9
    covered = _covered_bytes(df.loc[data & ~df["dup"].to_numpy(), ["flow_id", "seq_u", "end_u"]])
    out["unique_payload_bytes"] = covered.reindex(out.index, fill_value=0).astype(np.int64)
    out["bytes_not_captured"] = _not_captured(out["span_lo"], out["span_hi"], out["span_fin"],
                                              out["unique_payload_bytes"])
    # RTT summaries
    samples = rtt_samples(p, an, time_origin_ns=ns0)
    for method, prefix in (("seq", "rtt"), ("ts", "rtt_ts")):
        s = samples[samples["method"] == method].groupby("flow_id")["rtt_s"]
        out[f"{prefix}_samples"] = s.size().reindex(out.index, fill_value=0).astype(np.int64)
        out[f"{prefix}_median_s"] = s.median().reindex(out.index)
        if method == "seq":
            out["rtt_min_s"] = s.min().reindex(out.index)
            out["rtt_mean_s"] = s.mean().reindex(out.index)
    with np.errstate(divide="ignore", invalid="ignore"):
        # retransmitted data segments over data segments: in [0, 1] (SYN/FIN retransmissions carry no data)
        out["loss_rate"] = np.where(out["sent_data_packets"] > 0,
                                    out["retransmitted_data_packets"]
                                    / out["sent_data_packets"].where(out["sent_data_packets"] > 0), np.nan)
        out["throughput_bps"] = np.where(out["duration_s"] > 0,
                                         8.0 * out["unique_payload_bytes"] / out["duration_s"].where(out["duration_s"] > 0),
                                         np.nan)
    out["fct_s"] = _fct(df, an, out)
    return out[FLOW_COLUMNS]


#: Columns of the flow table taken from the flow's first packet.
_IDENT = ("src_addr", "src_port", "dst_addr", "dst_port", "ip_version")


def flow_table(records: np.ndarray, ns0: int, ident: dict[str, np.ndarray], negative_rtt: int = 0) -> pd.DataFrame:
    """:func:`flows`' table from the compiled pass's flow records (:data:`.connpass.FLOW_DTYPE`).

    Parameters
    ----------
    records : numpy.ndarray
        One record per flow (any order), connection ids as the table numbers them.
    ns0 : int
        The time origin of relative times. [ns]
    ident : dict
        ``src_addr, src_port, dst_addr, dst_port, ip_version`` of each record's flow (its first packet), in
        the records' order.
    negative_rtt : int
        RTT samples dropped as negative (the clock went backwards): warned about, as :func:`rtt_samples` does.

    Returns
    -------
    pandas.DataFrame
        As :func:`flows` (the same columns, dtypes and row order).
    """
    connpass.warn_dropped(records, negative_rtt, stacklevel=3)
    if len(records) == 0:
        return _empty_flows()
    flow_id, cols = connpass.flow_columns(records, ns0, ident)
    return pd.DataFrame(cols, index=pd.Index(flow_id, name="flow_id"))[FLOW_COLUMNS]


def _span_columns(packets: pd.DataFrame, an: pd.DataFrame) -> dict[str, np.ndarray]:
    """Per packet, what it shows of its direction's sequence space (NaN where it shows nothing): ``span_lo`` its
    seq (after a SYN: the byte after it), ``span_hi`` its seq plus payload, ``span_fin`` that on a FIN. RSTs,
    duplicates and keep-alives (whose seq is one below the data) show nothing."""
    seq_u = an["seq_u"].to_numpy()
    payload = packets["payload_bytes"].to_numpy(np.int64)
    shows = ~packets["rst"].to_numpy() & ~an["is_duplicate"].to_numpy() & ~an["is_keepalive"].to_numpy()
    return {"span_lo": np.where(shows, seq_u + packets["syn"].to_numpy(), np.nan),
            "span_hi": np.where(shows, seq_u + payload, np.nan),
            "span_fin": np.where(shows & packets["fin"].to_numpy(), seq_u + payload, np.nan)}


def _not_captured(lo: pd.Series, hi: pd.Series, fin: pd.Series, unique: pd.Series) -> pd.Series:
    """Bytes not captured from the per-flow extremes of :func:`_span_columns` and the unique bytes."""
    top = np.fmin(hi, fin)  # a pure ACK after the FIN is one past the data
    return ((top - lo).fillna(0).clip(lower=0) - unique).clip(lower=0).astype(np.int64)


def sequence_coverage(packets: pd.DataFrame, annotated: pd.DataFrame | None = None,
                      flow_ids: list[int] | np.ndarray | None = None) -> pd.DataFrame:
    """How much of each flow's sequence space the capture holds: bytes carried by captured segments, and holes.

    Parameters
    ----------
    packets : pandas.DataFrame
        A packet table from :func:`~tcpmodels.traces.read_pcap`.
    annotated : pandas.DataFrame, optional
        :func:`annotate` of ``packets`` if already computed.
    flow_ids : sequence of int, optional
        Only these flows (default: every flow).

    Returns
    -------
    pandas.DataFrame
        Indexed by ``flow_id``: ``unique_payload_bytes`` (the union of the captured data segments' sequence
        ranges) and ``bytes_not_captured`` (the rest of the sequence space the direction's packets show: from
        the byte after the SYN, or the first sequence number seen, to the highest one a data segment, pure ACK
        or FIN reaches -- RSTs, duplicates and keep-alives not counted, as tcptrace's "missed data") [bytes];
        the same as :func:`flows` gives.
    """
    an = annotate(packets) if annotated is None else annotated
    fl = an["flow_id"].to_numpy()
    sel = np.ones(len(fl), bool) if flow_ids is None else np.isin(fl, np.asarray(flow_ids))
    p, a = packets[sel], an[sel]
    payload = p["payload_bytes"].to_numpy(np.int64)
    data = (payload > 0) & ~a["is_duplicate"].to_numpy()
    seq_u = a["seq_u"].to_numpy()
    covered = _covered_bytes(pd.DataFrame({"flow_id": fl[sel][data], "seq_u": seq_u[data],
                                           "end_u": seq_u[data] + payload[data]}))
    g = pd.DataFrame({"flow_id": fl[sel], **_span_columns(p, a)}).groupby("flow_id")
    out = pd.DataFrame(index=pd.Index(np.unique(fl[sel]), name="flow_id"))
    out["unique_payload_bytes"] = covered.reindex(out.index, fill_value=0).astype(np.int64)
    out["bytes_not_captured"] = _not_captured(g["span_lo"].min(), g["span_hi"].max(), g["span_fin"].min(),
                                              out["unique_payload_bytes"])
    return out


def _covered_bytes(seg: pd.DataFrame) -> pd.Series:
    """Per flow, the length of the union of the data segments' sequence intervals ``[seq_u, end_u)``. [bytes]"""
    if len(seg) == 0:
        return pd.Series(dtype="int64")
    seg = seg.sort_values(["flow_id", "seq_u"], kind="stable")
    fl = seg["flow_id"].to_numpy()
    start = seg["seq_u"].to_numpy(np.int64)
    end = seg["end_u"].to_numpy(np.int64)
    first = np.ones(len(fl), bool)
    first[1:] = fl[1:] != fl[:-1]
    reach = pd.Series(end.astype(float)).groupby(np.cumsum(first)).cummax().shift(1).to_numpy().copy()  # furthest end so far
    reach[first] = -np.inf
    new = np.maximum(end - np.maximum(start, reach), 0)
    return pd.Series(new).groupby(fl).sum()


def _fct(df: pd.DataFrame, an: pd.DataFrame, out: pd.DataFrame) -> np.ndarray:
    """SYN of the connection -> first peer ACK covering the direction's last data byte. [s]"""
    syn_t = df[df["syn"] & df["is_initiator"]].groupby("connection_id")["t"].min()
    acks = pd.DataFrame({"flow_id": an["flow_id"].to_numpy() ^ 1, "ack_u": an["ack_u"].to_numpy(),
                         "t": df["t"].to_numpy()})
    acks = acks[acks["ack_u"] >= 0]
    target = out["last_end"].dropna()
    acks = acks[acks["flow_id"].isin(target.index)]
    acks = acks[acks["ack_u"].to_numpy() >= target.reindex(acks["flow_id"]).to_numpy()]
    done_t = acks.groupby("flow_id")["t"].min()
    fct = (done_t.reindex(out.index) - syn_t.reindex(out["connection_id"]).to_numpy()).to_numpy()
    backwards = fct < 0
    if backwards.any():
        warnings.warn(f"{int(backwards.sum())} flow completion times set to NaN: negative, because capture "
                      "timestamps go backwards between the SYN and the last ACK", TraceWarning, stacklevel=3)
        fct = np.where(backwards, np.nan, fct)
    return fct


#: Expert Info counts of the flow table -> the annotation column they count.
_EXPERT_COUNTS = {"keepalive_packets": "is_keepalive", "zero_window_packets": "is_zero_window",
                  "zero_window_probes": "is_zero_window_probe", "window_update_packets": "is_window_update",
                  "window_full_packets": "is_window_full",
                  "previous_segment_not_captured": "is_previous_segment_not_captured",
                  "acked_unseen_packets": "is_acked_unseen"}

FLOW_COLUMNS = ["connection_id", "is_initiator", "src_addr", "src_port", "dst_addr", "dst_port", "ip_version",
                "first_time_s", "last_time_s", "duration_s", "syn_seen", "fin_seen", "rst_seen", "packets",
                "data_packets", "payload_bytes", "wire_bytes", "unique_payload_bytes", "bytes_not_captured",
                "retransmitted_packets", "retransmitted_bytes", "fast_retransmissions", "spurious_retransmissions",
                "out_of_order_packets", "duplicate_packets", "duplicate_acks", *_EXPERT_COUNTS,
                "rtt_samples", "rtt_min_s",
                "rtt_median_s", "rtt_mean_s", "rtt_ts_samples", "rtt_ts_median_s", "loss_rate", "throughput_bps",
                "fct_s"]


#: Columns that :func:`partition_flows` adds for :func:`combine_partition_flows` (connection order keys).
_ORDER_KEYS = ["_partition", "_tuple_first_frame", "_connection_first_frame"]


def partition_flows(dataset: PacketDataset | str | os.PathLike, partition: int) -> pd.DataFrame:
    """:func:`flows` of one partition of a packet dataset, with the keys that number its connections globally.

    Parameters
    ----------
    dataset : PacketDataset, str or path-like
        A dataset written by :func:`~tcpmodels.traces.to_parquet` (or its directory).
    partition : int
        Partition number.

    Returns
    -------
    pandas.DataFrame
        The flow table of the partition's packets (flow and connection numbers local to the
        partition), times measured from the dataset's origin, plus ``_partition``,
        ``_tuple_first_frame`` and ``_connection_first_frame`` (file record numbers of the first
        packet of the connection's 4-tuple and of the connection) for :func:`combine_partition_flows`.
    """
    ds = open_dataset(dataset)
    p = ds.read_partition(partition)
    if len(p) == 0:
        return _empty_flows().assign(**{k: pd.Series(dtype="int64") for k in _ORDER_KEYS})
    an = annotate(p)
    out = flows(p, an, time_origin_ns=ds.time_origin_ns)
    conn = an["connection_id"].to_numpy()
    frames = p["frame_index"].to_numpy()
    first_row = pd.Series(np.arange(len(p))).groupby(conn).first()
    rows = first_row.to_numpy()
    a = p["src_addr"].astype(str).to_numpy()[rows] + "|" + p["src_port"].to_numpy()[rows].astype(str)
    b = p["dst_addr"].astype(str).to_numpy()[rows] + "|" + p["dst_port"].to_numpy()[rows].astype(str)
    key = np.where(a < b, a + " " + b, b + " " + a)
    conn_first = pd.Series(frames[rows], index=first_row.index)
    tuple_first = conn_first.groupby(key).transform("min")
    out["_partition"] = int(partition)
    out["_tuple_first_frame"] = tuple_first.reindex(out["connection_id"]).to_numpy()
    out["_connection_first_frame"] = conn_first.reindex(out["connection_id"]).to_numpy()
    return out


class PartitionFlows:
    """A :func:`partition_flows` result held column by column, for :func:`combine_partition_flows`.

    Each column is its own array (numpy, or the pandas array of the string columns), copied out of
    the DataFrame's blocks (and out of the buffer the table arrived in from a Dask worker), so that
    joining the partitions can release each column as soon as it is joined instead of keeping every
    partition's whole table until the end (a 100M-packet capture has 3.3M flows: about 0.8 GB of
    flow table, which the earlier ``pandas.concat`` + reorder held two to three times over).

    Parameters
    ----------
    table : pandas.DataFrame
        A :func:`partition_flows` result.
    """

    __slots__ = ("columns", "flow_index")

    def __init__(self, table: pd.DataFrame) -> None:
        self.flow_index = np.array(table.index.to_numpy(), np.int64, copy=True)
        self.columns: dict[str, object] = {}
        for c in FLOW_COLUMNS + _ORDER_KEYS:
            s = table[c]
            if isinstance(s.dtype, np.dtype):
                self.columns[c] = np.array(s.to_numpy(), copy=True)
            else:  # taken, not copied: a shallow copy would share the received message's buffer
                self.columns[c] = s.array.take(np.arange(len(s)))

    def __len__(self) -> int:
        return len(self.flow_index)


def combine_partition_flows(parts: list) -> pd.DataFrame:
    """Join :func:`partition_flows` results into the flow table of the whole dataset.

    Connections are numbered as :func:`annotate` numbers them on the whole table: by the
    first packet of their 4-tuple, then by their own first packet.

    Parameters
    ----------
    parts : list of pandas.DataFrame or PartitionFlows
        One :func:`partition_flows` result per partition (any order; empty ones allowed), as it
        is or as a :class:`PartitionFlows` (smaller: what :func:`~tcpmodels.traces.cluster.dataset_flows`
        keeps while the results arrive). The list is emptied (its tables are joined one column at a
        time, and not kept twice).

    Returns
    -------
    pandas.DataFrame
        As :func:`flows` of the whole packet table (the same columns, dtypes and row order).
    """
    pieces = []
    while parts:
        q = parts.pop()
        if len(q):
            pieces.append(q if isinstance(q, PartitionFlows) else PartitionFlows(q))
        del q
    if not pieces:
        return _empty_flows()
    pieces.reverse()  # popped from the end: back in the given order

    def take(c: str) -> np.ndarray:
        return np.concatenate([q.columns.pop(c) for q in pieces])

    # one key per (partition, local connection); connections numbered by (tuple's first frame, own first frame)
    key = (take("_partition").astype(np.int64) << 40) | take("connection_id").astype(np.int64)
    tuple_first, conn_first = take("_tuple_first_frame"), take("_connection_first_frame")
    _, first, inverse = np.unique(key, return_index=True, return_inverse=True)
    del key
    order = np.lexsort((conn_first[first], tuple_first[first]))
    del tuple_first, conn_first, first
    rank = np.empty(len(order), np.int64)
    rank[order] = np.arange(len(order))
    cid = rank[inverse.ravel()]
    del rank, inverse, order
    flow_id = 2 * cid + (np.concatenate([q.flow_index for q in pieces]) & 1)
    perm = np.argsort(flow_id, kind="stable")
    out: dict[str, object] = {}
    for c in FLOW_COLUMNS:
        if c == "connection_id":
            out[c] = cid[perm]
            continue
        first_col = pieces[0].columns[c]
        if isinstance(first_col, np.ndarray):
            joined = take(c)
        else:
            joined = type(first_col)._concat_same_type([q.columns.pop(c) for q in pieces])
        out[c] = joined.take(perm)
        del joined, first_col
        _trim_heap()
    return pd.DataFrame(out, index=pd.Index(flow_id[perm], name="flow_id"), copy=False)


_MALLOC_TRIM: object = None


def _trim_heap() -> None:
    """Give the heap's free pages back to the system (glibc's ``malloc_trim``; nothing elsewhere).

    The partitions' columns are small allocations (tens of kB) from the heap; freed, glibc keeps
    them, while each joined column is a new large (mapped) allocation: without this the join held
    the parts' memory and the whole new table together (driver peak 2.0 GB instead of 1.1 GB for
    3.3M flows)."""
    global _MALLOC_TRIM
    if _MALLOC_TRIM is None:
        try:
            import ctypes

            _MALLOC_TRIM = ctypes.CDLL("libc.so.6").malloc_trim
        except (OSError, AttributeError):
            _MALLOC_TRIM = False
    if _MALLOC_TRIM:
        _MALLOC_TRIM(0)


def _empty_flows() -> pd.DataFrame:
    return pd.DataFrame(columns=FLOW_COLUMNS).rename_axis("flow_id")
