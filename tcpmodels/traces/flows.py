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
  option (a packet captured twice); never counted as a retransmission.
- *Retransmission*: a segment that occupies sequence space (payload, SYN or FIN)
  and starts below the highest sequence number already sent in this direction
  (Wireshark's criterion, [1]_), excluding duplicates and keep-alives (one byte
  or none at ``highest - 1``). A RST without payload never sets the highest
  sequence number (one with seq 0 before a SYN/ACK would make it a retransmission). Split as
  Wireshark's ``tcp.analysis`` flags do, in its order of tests: *fast
  retransmission* (after two or more duplicate ACKs for this sequence number,
  within 20 ms of the last ACK), *out-of-order* (within the connection's initial
  RTT of the segment that set the highest sequence number), *spurious* (payload
  already acknowledged), and plain retransmission; ``retransmitted_packets`` counts
  all four.
- *Duplicate ACK*: a pure ACK (no payload, SYN, FIN or RST) with the same
  acknowledgment number, window and sequence number as the previous packet of
  the direction, and a non-zero window ([1]_).
- *Loss rate*: retransmitted segments / data segments (an upper estimate of the
  segment loss rate seen by the sender; spurious retransmissions count).
- *FCT*: from the connection's first SYN to the first ACK from the peer that
  covers the direction's last data byte.

References
----------
.. [1] Wireshark User's Guide, Sec. 7.5 "TCP Analysis".
.. [2] RFC 6298, "Computing TCP's Retransmission Timer" (Karn's algorithm, Sec. 3).
.. [3] S. Ostermann, tcptrace (RTT samples from data segments and their ACKs).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .annotation import annotate
from .rtt import rtt_samples

__all__ = ["annotate", "flows"]  # annotate lives in .annotation; re-exported here for old imports


def flows(packets: pd.DataFrame, annotated: pd.DataFrame | None = None) -> pd.DataFrame:
    """One row per TCP connection and direction, with counts, retransmissions, RTT, loss, throughput and FCT.

    Parameters
    ----------
    packets : pandas.DataFrame
        A packet table from :func:`~tcpmodels.traces.read_pcap`.
    annotated : pandas.DataFrame, optional
        The result of :func:`annotate` for ``packets`` if already computed.

    Returns
    -------
    pandas.DataFrame
        Indexed by ``flow_id``; columns ``connection_id``, ``is_initiator``,
        ``src_addr, src_port, dst_addr, dst_port, ip_version``, ``first_time_s``,
        ``last_time_s``, ``duration_s`` [s], ``syn_seen, fin_seen, rst_seen``,
        ``packets``, ``data_packets``, ``payload_bytes``, ``wire_bytes``,
        ``unique_payload_bytes`` [bytes] (highest sequence reached minus the first,
        SYN and FIN excluded), ``retransmitted_packets``, ``retransmitted_bytes``
        [bytes], ``fast_retransmissions``, ``spurious_retransmissions``, ``out_of_order_packets``
        (the classes of ``retransmitted_packets``; the rest are plain retransmissions), ``duplicate_packets``,
        ``duplicate_acks`` (sent by this direction),
        ``rtt_samples``, ``rtt_min_s``, ``rtt_median_s``, ``rtt_mean_s`` (data segment ->
        ACK, Karn's rule), ``rtt_ts_samples``, ``rtt_ts_median_s`` (timestamp echoes),
        ``loss_rate`` [-], ``throughput_bps`` (unique payload over the direction's
        duration) [bit/s], ``fct_s`` [s] (NaN when the SYN or the final ACK was not captured).
    """
    if len(packets) == 0:
        return _empty_flows()
    if annotated is None:
        annotated = annotate(packets)
    p = packets
    an = annotated
    data = (p["payload_bytes"] > 0).to_numpy()
    ns0 = int(p["timestamp_ns"].min())  # times relative to the first packet keep nanosecond precision
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
        "dup": an["is_duplicate"].to_numpy(), "dupack": an["is_dup_ack"].to_numpy(),
        "seq_u": np.where(data, an["seq_u"], np.nan), "end_u": np.where(data, an["seq_u"] + payload, np.nan),
    })
    g = df.groupby("flow_id", sort=True)
    out = g.agg(connection_id=("connection_id", "first"), is_initiator=("is_initiator", "first"),
                first_time_s=("t", "min"), last_time_s=("t", "max"), syn_seen=("syn", "any"),
                fin_seen=("fin", "any"), rst_seen=("rst", "any"), packets=("t", "size"),
                data_packets=("data", "sum"), payload_bytes=("payload", "sum"), wire_bytes=("wire", "sum"),
                retransmitted_packets=("rtx", "sum"), retransmitted_bytes=("rtx_bytes", "sum"),
                fast_retransmissions=("fast", "sum"), spurious_retransmissions=("spurious", "sum"),
                out_of_order_packets=("ooo", "sum"),
                duplicate_packets=("dup", "sum"), duplicate_acks=("dupack", "sum"),
                first_seq=("seq_u", "min"), last_end=("end_u", "max"))
    first_rows = pd.Series(np.arange(len(p))).groupby(df["flow_id"].to_numpy()).first()
    ident = p.iloc[first_rows.to_numpy()]
    for c in ("src_addr", "src_port", "dst_addr", "dst_port", "ip_version"):
        out[c] = ident[c].to_numpy()
    out["duration_s"] = out["last_time_s"] - out["first_time_s"]
    out["first_time_s"] += ns0 / 1e9
    out["last_time_s"] += ns0 / 1e9
    out["unique_payload_bytes"] = (out["last_end"] - out["first_seq"]).fillna(0).astype(np.int64)
    # RTT summaries
    samples = rtt_samples(p, an)
    for method, prefix in (("seq", "rtt"), ("ts", "rtt_ts")):
        s = samples[samples["method"] == method].groupby("flow_id")["rtt_s"]
        out[f"{prefix}_samples"] = s.size().reindex(out.index, fill_value=0).astype(np.int64)
        out[f"{prefix}_median_s"] = s.median().reindex(out.index)
        if method == "seq":
            out["rtt_min_s"] = s.min().reindex(out.index)
            out["rtt_mean_s"] = s.mean().reindex(out.index)
    with np.errstate(divide="ignore", invalid="ignore"):
        out["loss_rate"] = np.where(out["data_packets"] > 0,
                                    out["retransmitted_packets"] / out["data_packets"].where(out["data_packets"] > 0),
                                    np.nan)
        out["throughput_bps"] = np.where(out["duration_s"] > 0,
                                         8.0 * out["unique_payload_bytes"] / out["duration_s"].where(out["duration_s"] > 0),
                                         np.nan)
    out["fct_s"] = _fct(df, an, out)
    return out[FLOW_COLUMNS]


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
    fct = done_t.reindex(out.index) - syn_t.reindex(out["connection_id"]).to_numpy()
    return fct.to_numpy()


FLOW_COLUMNS = ["connection_id", "is_initiator", "src_addr", "src_port", "dst_addr", "dst_port", "ip_version",
                "first_time_s", "last_time_s", "duration_s", "syn_seen", "fin_seen", "rst_seen", "packets",
                "data_packets", "payload_bytes", "wire_bytes", "unique_payload_bytes", "retransmitted_packets",
                "retransmitted_bytes", "fast_retransmissions", "spurious_retransmissions",
                "out_of_order_packets", "duplicate_packets", "duplicate_acks", "rtt_samples", "rtt_min_s",
                "rtt_median_s", "rtt_mean_s", "rtt_ts_samples", "rtt_ts_median_s", "loss_rate", "throughput_bps",
                "fct_s"]


def _empty_flows() -> pd.DataFrame:
    return pd.DataFrame(columns=FLOW_COLUMNS).rename_axis("flow_id")
