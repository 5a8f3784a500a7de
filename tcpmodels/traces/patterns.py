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

The two loss-free patterns are split either by the FCT (``split="fct"``: up to
``full_window_max_fct_s`` is "Full window", the old rule) or, as the paper
describes them, by the ACK clock seen at the sender (``split="ack_clock"``, see
:func:`ack_clock`): a flow whose data was mostly acknowledged by ACKs arriving in
bursts (closer together than the sender's link needs to send the bytes they
acknowledge) is "Intensive flow"; one whose ACKs came paced by the link, so that
each window went out in one flight clocked by them, is "Full window".

References
----------
.. [1] S. Fujii, H. Tazaki, Y. Sekiya, "MultiPath TCP 適用時のデータセンターネットワークでのフローサイズが与える影響に関する一考察"
       (the effect of flow size in a data-center network with MultiPath TCP), Table 3.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from tcpmodels._arrays import check_range
from tcpmodels._docstrings import SharedEntries

from .flows import annotate, flows

__all__ = ["PATTERNS", "SPLITS", "classify_short_flows", "ack_clock"]

#: Parameters documented once for the docstrings of this module that share them.
_PARAMETERS = SharedEntries("""
    packets : pandas.DataFrame
        A packet table from :func:`~tcpmodels.traces.read_pcap`.
""")

PATTERNS = ("Full window", "Intensive flow", "Delay with loss", "Extreme delay", "Incomplete")
#: How the loss-free flows are split into "Full window" and "Intensive flow".
SPLITS = ("fct", "ack_clock")


@_PARAMETERS.fill
def ack_clock(packets: pd.DataFrame, *, link_rate_bps: float, compression: float = 0.5,
              flight_gap_mss: float = 2.0, annotated: pd.DataFrame | None = None) -> pd.DataFrame:
    """The ACK clock of every data-sending direction, as seen at the sender's capture point.

    An *advancing ACK* is a packet of the peer whose cumulative ACK acknowledges new data.
    It is *compressed* (part of a burst) when it arrives sooner after the previous advancing
    ACK than ``compression`` times the time the sender's link needs to serialise the bytes it
    newly acknowledges (``gap < compression * 8 * newly_acked / link_rate_bps``): ACKs spaced
    by the path's bottleneck are never closer than the full serialisation time, so ACKs at
    less than half of it (the default) were bunched on the way back by at least a factor of
    two, more than the capture's timestamp jitter does to ACKs that arrive at the link's pace. A *flight* is a
    run of data segments whose send gaps stay below ``flight_gap_mss`` segment times at the
    link rate (the sender did not wait for an ACK in between).

    Parameters
    ----------
    {packets}
    link_rate_bps : float
        Rate of the sender's link (the capture point's link), > 0. [bit/s]
    compression : float
        Fraction of the serialisation time below which an ACK gap counts as a burst, in (0, 1]. [-]
    flight_gap_mss : float
        Send gap, in full-size segment times at ``link_rate_bps``, that ends a flight, > 0. [-]
    annotated : pandas.DataFrame, optional
        :func:`~tcpmodels.traces.annotate` of ``packets`` (computed if omitted).

    Returns
    -------
    pandas.DataFrame
        Index ``flow_id`` (the data direction): ``advancing_acks``, ``acked_bytes`` [bytes],
        ``burst_acked_bytes`` [bytes] (acknowledged by compressed ACKs), ``ack_burst_share``
        [-] (their share), ``flights`` (number of flights of new data), ``largest_flight_bytes``
        [bytes].
    """
    check_range("link_rate_bps", link_rate_bps, unit="bit/s", low=0, low_open=True)
    check_range("flight_gap_mss", flight_gap_mss, unit="-", low=0, low_open=True)
    check_range("compression", compression, unit="-", low=0, high=1, low_open=True)
    an = annotate(packets) if annotated is None else annotated
    t = packets["timestamp_s"].to_numpy(float)
    fid = an["flow_id"].to_numpy()
    payload = packets["payload_bytes"].to_numpy()
    frame = packets["frame_index"].to_numpy()
    # ACKs of the peer (flow_id ^ 1 is the reverse direction), in capture order, for the data direction
    acks = pd.DataFrame({"flow_id": fid ^ 1, "t": t, "ack_u": an["ack_u"].to_numpy(), "frame": frame})
    acks = acks[acks["ack_u"] >= 0].sort_values(["flow_id", "frame"])
    acks["high"] = acks.groupby("flow_id")["ack_u"].cummax()
    acks["new"] = acks.groupby("flow_id")["high"].diff()
    adv = acks[acks["new"] > 0].copy()
    adv["gap"] = adv.groupby("flow_id")["t"].diff()
    adv["burst"] = adv["gap"] < compression * adv["new"] * 8 / link_rate_bps  # NaN gap (first ACK) -> False
    g = adv.groupby("flow_id")
    out = pd.DataFrame({"advancing_acks": g.size(), "acked_bytes": g["new"].sum(),
                        "burst_acked_bytes": adv["new"].where(adv["burst"], 0).groupby(adv["flow_id"]).sum()})
    out["ack_burst_share"] = out["burst_acked_bytes"] / out["acked_bytes"]
    data = (payload > 0) & ~an["is_retransmission"].to_numpy()
    d = pd.DataFrame({"flow_id": fid[data], "t": t[data], "bytes": payload[data], "frame": frame[data]})
    d = d.sort_values(["flow_id", "frame"])
    mss_time = 8 * 1514 / link_rate_bps
    d["flight"] = (d.groupby("flow_id")["t"].diff() >= flight_gap_mss * mss_time).groupby(d["flow_id"]).cumsum()
    fl = d.groupby(["flow_id", "flight"])["bytes"].sum().groupby("flow_id")
    flights = pd.DataFrame({"flights": fl.size(), "largest_flight_bytes": fl.max()})
    out = flights.join(out, how="left")
    out.index.name = "flow_id"
    return out


@_PARAMETERS.fill
def classify_short_flows(packets: pd.DataFrame, *, full_window_max_fct_s: float = 0.030,
                         extreme_min_fct_s: float = 0.300, rto_min_s: float = 0.200,
                         early_bytes: int = 1460, max_bytes: int | None = None, initiator_only: bool = True,
                         flow_table: pd.DataFrame | None = None,
                         annotated: pd.DataFrame | None = None, split: str = "fct",
                         link_rate_bps: float | None = None, burst_share: float = 0.5) -> pd.DataFrame:
    """Classify the data-sending directions of short flows into the four patterns of P1 Table 3.

    Parameters
    ----------
    {packets}
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
    split : {"fct", "ack_clock"}
        How loss-free flows are split: by ``full_window_max_fct_s`` (the old rule), or by
        the ACK clock (:func:`ack_clock`): "Intensive flow" when more than ``burst_share``
        of the flow's bytes were acknowledged by ACKs arriving in bursts, else "Full window".
    link_rate_bps : float, optional
        The sender's link rate, required with ``split="ack_clock"``. [bit/s]
    burst_share : float
        Share of bytes acknowledged in bursts above which a loss-free flow is "Intensive
        flow" (default: most of them). [-]

    Returns
    -------
    pandas.DataFrame
        The flow-table rows classified (index ``flow_id``): ``src_port``, ``dst_port``,
        ``unique_payload_bytes``, ``fct_s``, ``retransmitted_packets``,
        ``first_retransmission_s`` (after the SYN) [s], ``timeout_gap_s`` (the longest
        idle gap before a retransmission) [s], ``acked_before_timeout_bytes`` [bytes]
        and ``pattern`` (one of :data:`PATTERNS`; "Incomplete" when the FCT is unknown);
        with ``split="ack_clock"`` also the columns of :func:`ack_clock` and ``pattern_fct_rule``
        (the pattern the FCT threshold gives).
    """
    if split not in SPLITS:
        raise ValueError(f"split must be one of {SPLITS}; got {split!r}")
    if split == "ack_clock" and link_rate_bps is None:
        raise ValueError("split='ack_clock' needs link_rate_bps (the sender's link rate) [bit/s]")
    check_range("burst_share", burst_share, unit="-", low=0, high=1)
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
    if split == "ack_clock":
        out = out.join(ack_clock(packets, link_rate_bps=link_rate_bps, annotated=an), how="left")
        out["pattern_fct_rule"] = out["pattern"]
        free = (out["pattern"].isin(["Full window", "Intensive flow"])).to_numpy()
        bursty = (out["ack_burst_share"] > burst_share).to_numpy()
        pattern = np.where(free & bursty, "Intensive flow", np.where(free, "Full window", pattern))
        out["pattern"] = pd.Categorical(pattern, categories=list(PATTERNS))
    return out
