"""Round-trip-time samples from a packet table, by sequence/ACK matching and by timestamp echoes.

``method == "seq"``: for every ACK that advances the cumulative acknowledgment,
the data segment whose last byte it acknowledges exactly (``seq_end == ack``);
the sample is the time between the two packets at the capture point. Karn's
rule: no sample from a segment whose bytes were ever retransmitted, nor from an
ACK that may answer a retransmission (one of bytes below the ACK, sent between
the segment and the ACK).
Measured at the sender this is the network RTT plus the receiver's ACK delay;
measured elsewhere it is the RTT of the part of the path beyond the capture point.

``method == "ts"``: for every advancing ACK carrying a timestamps option, the
first packet of the peer that sent the echoed value (``tsval == tsecr``). The
clock of Linux timestamps ticks every millisecond, so this sample includes up
to 1 ms of sender-side granularity ([2]_, Sec. 4.1).

References
----------
.. [1] RFC 6298, Sec. 3 (Karn's algorithm).
.. [2] RFC 7323, "TCP Extensions for High Performance", Sec. 4 (RTTM).
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd

from . import connpass
from .annotation import annotate
from .schema import TraceWarning

__all__ = ["rtt_samples"]


def _advancing(flow_id: np.ndarray, ack_u: np.ndarray) -> np.ndarray:
    """True where ack_u exceeds every earlier ack_u of the same flow (rows in capture order)."""
    s = pd.Series(ack_u.astype(float))
    prev = s.groupby(flow_id).cummax().groupby(flow_id).shift(1).to_numpy()
    return np.isnan(prev) | (ack_u > prev)


def rtt_samples(packets: pd.DataFrame, annotated: pd.DataFrame | None = None, *,
                time_origin_ns: int | None = None) -> pd.DataFrame:
    """All RTT samples of a packet table.

    Parameters
    ----------
    packets : pandas.DataFrame
        A packet table from :func:`~tcpmodels.traces.read_pcap`.
    annotated : pandas.DataFrame, optional
        :func:`~tcpmodels.traces.annotation.annotate` of ``packets`` if already computed.
    time_origin_ns : int, optional
        Timestamp that times are measured from before subtracting [ns]; default the earliest
        packet's. Only rounding depends on it (a packet dataset passes the whole capture's).

    Returns
    -------
    pandas.DataFrame
        ``flow_id`` (the direction that sent the data), ``timestamp_s`` (time of the
        ACK) [s], ``rtt_s`` [s], ``method`` (``"seq"`` or ``"ts"``), ``ack_frame_index``.

    Notes
    -----
    With the compiled kernel the samples come from the one-pass analysis (:mod:`.connpass`), which computes
    the annotation itself (``annotated`` is then not read); this code is the reference it is tested equal to.
    """
    cols = ["flow_id", "timestamp_s", "rtt_s", "method", "ack_frame_index"]
    if len(packets) == 0:
        return pd.DataFrame({c: pd.Series(dtype=t) for c, t in
                             zip(cols, ["int64", "float64", "float64", "object", "int64"])})
    ns = packets["timestamp_ns"].to_numpy()
    ns0 = int(ns.min()) if time_origin_ns is None else int(time_origin_ns)
    if connpass.use_compiled_pass():
        res = connpass.run_table(packets, ns0, rows=False, samples=True)
        return samples_table(res.samples, res.negative_rtt, ns0)
    if annotated is None:
        annotated = annotate(packets)
    t = (ns - ns0) / 1e9  # relative, so that differences keep nanosecond precision
    t_abs0 = ns0 / 1e9
    fidx = packets["frame_index"].to_numpy()
    flow = annotated["flow_id"].to_numpy()
    seq_u = annotated["seq_u"].to_numpy()
    end_u = annotated["seq_end_u"].to_numpy()
    ack_u = annotated["ack_u"].to_numpy()
    dup = annotated["is_duplicate"].to_numpy()
    rtx = annotated["is_retransmission"].to_numpy()
    occupies = end_u > seq_u

    # ACKs that advance the cumulative acknowledgment (capture order within each flow)
    ar = np.flatnonzero((ack_u >= 0) & ~dup)
    order = ar[np.lexsort((fidx[ar], flow[ar]))]
    adv = order[_advancing(flow[order], ack_u[order])]
    acks = pd.DataFrame({"flow_id": flow[adv] ^ 1, "key": ack_u[adv], "t_ack": t[adv], "f_ack": fidx[adv],
                         "tsecr": packets["tsecr"].to_numpy()[adv],
                         "has_ts": packets["has_timestamps"].to_numpy()[adv]})

    # ---- sequence matching with Karn's rule
    seg = pd.DataFrame({"flow_id": flow, "seq": seq_u, "key": end_u, "t_seg": t, "f_seg": fidx, "rtx": rtx})
    seg = seg[occupies & ~dup]
    re = seg[seg["rtx"]][["flow_id", "seq", "key"]].sort_values(["flow_id", "seq"])
    first = seg[~seg["rtx"]].drop_duplicates(["flow_id", "key"], keep="first")
    if len(re):
        re = re.assign(max_end=re.groupby("flow_id")["key"].cummax()).rename(columns={"seq": "r_seq"})
        probe = first.assign(probe=first["key"] - 1).sort_values("probe")
        hit = pd.merge_asof(probe, re[["flow_id", "r_seq", "max_end"]].sort_values("r_seq"),
                            left_on="probe", right_on="r_seq", by="flow_id", direction="backward")
        clean = hit["max_end"].isna() | (hit["max_end"] <= hit["seq"])
        first = hit[clean.to_numpy()][["flow_id", "seq", "key", "t_seg", "f_seg"]]
    m = acks.merge(first, on=["flow_id", "key"], how="inner")
    m = m[m["f_seg"] < m["f_ack"]]
    # Karn, second half: an ACK that may have been triggered by a retransmission sent after the segment
    # (the latest retransmission before the ACK, of bytes below the ACK) gives no sample
    rt = seg[seg["rtx"]][["flow_id", "t_seg", "seq"]].rename(columns={"t_seg": "t_rtx", "seq": "rtx_seq"})
    if len(rt) and len(m):
        m = pd.merge_asof(m.sort_values("t_ack"), rt.sort_values("t_rtx"), left_on="t_ack", right_on="t_rtx",
                          by="flow_id", direction="backward", allow_exact_matches=False)
        ambiguous = (m["t_rtx"] > m["t_seg"]) & (m["rtx_seq"] < m["key"])
        m = m[~ambiguous.to_numpy()]
    seq_s = pd.DataFrame({"flow_id": m["flow_id"].to_numpy(), "timestamp_s": m["t_ack"].to_numpy() + t_abs0,
                          "rtt_s": (m["t_ack"] - m["t_seg"]).to_numpy(), "method": "seq",
                          "ack_frame_index": m["f_ack"].to_numpy()})

    # ---- timestamp echoes
    has_ts = packets["has_timestamps"].to_numpy()
    tv = pd.DataFrame({"flow_id": flow[has_ts], "tsecr": packets["tsval"].to_numpy()[has_ts],
                       "t_seg": t[has_ts], "f_seg": fidx[has_ts]})
    tv = tv.sort_values("f_seg").drop_duplicates(["flow_id", "tsecr"], keep="first")
    ta = acks[acks["has_ts"] & (acks["tsecr"] != 0)]
    m = ta.merge(tv, on=["flow_id", "tsecr"], how="inner")
    m = m[m["f_seg"] < m["f_ack"]]
    ts_s = pd.DataFrame({"flow_id": m["flow_id"].to_numpy(), "timestamp_s": m["t_ack"].to_numpy() + t_abs0,
                         "rtt_s": (m["t_ack"] - m["t_seg"]).to_numpy(), "method": "ts",
                         "ack_frame_index": m["f_ack"].to_numpy()})
    out = pd.concat([seq_s, ts_s], ignore_index=True)
    backwards = out["rtt_s"].to_numpy() < 0
    if backwards.any():  # the ACK was captured before the segment it acknowledges: the clock went backwards
        warnings.warn(f"{int(backwards.sum())} of {len(out)} RTT samples dropped: negative, because capture "
                      "timestamps go backwards between the segment and its ACK", TraceWarning, stacklevel=2)
        out = out[~backwards]
    return out.sort_values(["method", "flow_id", "ack_frame_index"], kind="stable").reset_index(drop=True)


def samples_table(records: np.ndarray, negative: int, ns0: int) -> pd.DataFrame:
    """:func:`rtt_samples`' table from the compiled pass's sample records (:data:`.connpass.SAMPLE_DTYPE`).

    Parameters
    ----------
    records : numpy.ndarray
        Sample records (connection ids numbered as the reference numbers them).
    negative : int
        Samples the pass dropped as negative (the capture's clock went backwards): warned about.
    ns0 : int
        The time origin the records' ``t_ack`` is relative to. [ns]

    Returns
    -------
    pandas.DataFrame
        As :func:`rtt_samples`.
    """
    total = len(records) + negative
    if negative:
        warnings.warn(f"{negative} of {total} RTT samples dropped: negative, because capture "
                      "timestamps go backwards between the segment and its ACK", TraceWarning, stacklevel=3)
    method = records["method"]
    flow = connpass.flow_ids(records["conn"], records["dir"])
    order = np.lexsort((records["frame"], flow, method))
    out = pd.DataFrame({"flow_id": flow[order], "timestamp_s": records["t_ack"][order] + ns0 / 1e9,
                        "rtt_s": records["rtt"][order],
                        "method": np.where(method[order] == 0, "seq", "ts"),
                        "ack_frame_index": records["frame"][order]})
    return out
