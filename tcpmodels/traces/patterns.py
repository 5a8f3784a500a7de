"""Flow patterns of short flows, after P1 Table 3 (Fujii, Tazaki, Sekiya).

P1 sorted 70 KB flows in a fat-tree into four patterns by completion time and loss:

=================  ==========  ===========  ==========================================================
pattern            FCT [ms]    packet loss  what happened (P1)
=================  ==========  ===========  ==========================================================
Full window        up to ~30   no           whole window sent at once, ACK-clocked
Intensive flow     ~60         no           less than a full window, ACKs arrive in bursts
Delay with loss    200-300     yes          timeout after a few packets, then retransmission
Extreme delay      over 300    yes          timeout right after the handshake, then slow progress
=================  ==========  ===========  ==========================================================

Here "loss" is "the sender retransmitted" (seen at the capture point), and the
retransmission timing separates the two lossy patterns: a retransmission that
follows an idle gap of at least ``rto_min_s`` is a timeout; a timeout before
``early_bytes`` of data were acknowledged is "right after the handshake". The
thresholds are parameters because P1's values belong to its 0.5 ms-RTT,
100 Mbit/s network.

References
----------
.. [1] P1: Fujii, Tazaki, Sekiya, flow size and MPTCP in a data-center network, Table 3
       (see /work/shared/PAPERS.md).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from tcpmodels._arrays import check_range

from .flows import annotate, flows

__all__ = ["PATTERNS", "classify_short_flows"]

PATTERNS = ("Full window", "Intensive flow", "Delay with loss", "Extreme delay", "Incomplete")


def classify_short_flows(packets: pd.DataFrame, *, full_window_max_fct_s: float = 0.030,
                         extreme_min_fct_s: float = 0.300, rto_min_s: float = 0.200,
                         early_bytes: int = 1460, max_bytes: int | None = None, initiator_only: bool = True,
                         flow_table: pd.DataFrame | None = None,
                         annotated: pd.DataFrame | None = None) -> pd.DataFrame:
    """Classify the data-sending directions of short flows into the four patterns of P1 Table 3.

    Parameters
    ----------
    packets : pandas.DataFrame
        A packet table from :func:`~tcpmodels.traces.read_pcap`.
    full_window_max_fct_s : float
        Longest FCT of a loss-free "Full window" flow; longer loss-free flows are
        "Intensive flow". [s]
    extreme_min_fct_s : float
        FCT above which a lossy flow is "Extreme delay". [s]
    rto_min_s : float
        Idle gap before a retransmission that marks it as a timeout (Linux RTO min). [s]
    early_bytes : int
        A timeout before this many data bytes were acknowledged counts as "right
        after the handshake", which makes a lossy flow "Extreme delay". [bytes]
    max_bytes : int, optional
        Only flows with at most this many unique payload bytes. [bytes]
    initiator_only : bool
        Only the direction opened by the initiator (client to server); False also
        classifies the responder's direction when it carried data.

    Returns
    -------
    pandas.DataFrame
        The flow-table rows classified (index ``flow_id``): ``src_port``, ``dst_port``,
        ``unique_payload_bytes``, ``fct_s``, ``retransmitted_packets``,
        ``first_retransmission_s`` (after the SYN) [s], ``timeout_gap_s`` (the longest
        idle gap before a retransmission) [s], ``acked_before_timeout_bytes`` [bytes]
        and ``pattern`` (one of :data:`PATTERNS`; "Incomplete" when the FCT is unknown).
    """
    check_range("full_window_max_fct_s", full_window_max_fct_s, unit="s", low=0, low_open=True)
    check_range("extreme_min_fct_s", extreme_min_fct_s, unit="s", low=full_window_max_fct_s, low_open=True)
    check_range("rto_min_s", rto_min_s, unit="s", low=0, low_open=True)
    check_range("early_bytes", early_bytes, unit="bytes", low=0)
    an = annotate(packets) if annotated is None else annotated
    ft = flows(packets, an) if flow_table is None else flow_table
    ft = ft[ft["data_packets"] > 0]
    if initiator_only:
        ft = ft[ft["is_initiator"]]
    if max_bytes is not None:
        ft = ft[ft["unique_payload_bytes"] <= max_bytes]
    t = packets["timestamp_s"].to_numpy()
    fid = an["flow_id"].to_numpy()
    data = packets["payload_bytes"].to_numpy() > 0
    # idle gap before each data segment of the same flow
    d = pd.DataFrame({"flow_id": fid[data], "t": t[data], "rtx": an["is_retransmission"].to_numpy()[data],
                      "seq_u": an["seq_u"].to_numpy()[data], "frame": packets["frame_index"].to_numpy()[data]})
    d = d.sort_values(["flow_id", "frame"])
    d["gap"] = d.groupby("flow_id")["t"].diff()
    first_rtx = d[d["rtx"]].groupby("flow_id").agg(t_rtx=("t", "min"))
    to = d[d["rtx"] & (d["gap"] >= rto_min_s)]
    first_to = to.groupby("flow_id").agg(t_to=("t", "min"), gap=("gap", "max"), seq_to=("seq_u", "min"))
    # bytes acknowledged before the first timeout: highest peer ACK before it, minus the flow's first sequence
    acks = pd.DataFrame({"flow_id": fid ^ 1, "t": t, "ack_u": an["ack_u"].to_numpy()})
    acks = acks[acks["ack_u"] >= 0]
    first_seq = d.groupby("flow_id")["seq_u"].min()
    acked = {}
    for f, row in first_to.iterrows():
        a = acks[(acks["flow_id"] == f) & (acks["t"] < row["t_to"])]["ack_u"]
        acked[f] = max(int(a.max()) - int(first_seq.loc[f]), 0) if len(a) else 0
    syn_t = ft["first_time_s"]
    out = ft[["src_port", "dst_port", "unique_payload_bytes", "fct_s", "retransmitted_packets"]].copy()
    out["first_retransmission_s"] = first_rtx["t_rtx"].reindex(out.index) - syn_t
    out["timeout_gap_s"] = first_to["gap"].reindex(out.index)
    out["acked_before_timeout_bytes"] = pd.Series(acked, dtype=float).reindex(out.index)
    lossy = out["retransmitted_packets"].to_numpy() > 0
    fct = out["fct_s"].to_numpy()
    early_timeout = (out["acked_before_timeout_bytes"] < early_bytes).to_numpy()
    pattern = np.select(
        [np.isnan(fct), ~lossy & (fct <= full_window_max_fct_s), ~lossy,
         lossy & ((fct > extreme_min_fct_s) | early_timeout)],
        ["Incomplete", "Full window", "Intensive flow", "Extreme delay"], default="Delay with loss")
    out["pattern"] = pd.Categorical(pattern, categories=list(PATTERNS))
    return out
