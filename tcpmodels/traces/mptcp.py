"""MPTCP v1 (RFC 8684): group TCP subflows into MPTCP connections and account for each subflow.

The initial subflow carries MP_CAPABLE: the responder's key in the SYN/ACK and
both keys in the initiator's third ACK. Each additional subflow opens with an
MP_JOIN SYN carrying the *token* of the receiving side's key, the most
significant 32 bits of SHA-256 of the key; the initial data sequence number
(IDSN) is the least significant 64 bits of the same hash ([1]_, Sec. 3.1-3.2).

References
----------
.. [1] RFC 8684, "TCP Extensions for Multipath Operation with Multiple Addresses", 2020.
"""

from __future__ import annotations

import hashlib

import numpy as np
import pandas as pd

from .annotation import annotate
from .flows import flows

__all__ = ["mptcp_token", "mptcp_idsn", "mptcp_subflows"]


def mptcp_token(key: int) -> int:
    """Token of an MPTCP v1 key: the most significant 32 bits of SHA-256(key) ([1]_, Sec. 3.2)."""
    return int.from_bytes(hashlib.sha256(int(key).to_bytes(8, "big")).digest()[:4], "big")


def mptcp_idsn(key: int) -> int:
    """Initial data sequence number of an MPTCP v1 key: the least significant 64 bits of SHA-256(key)."""
    return int.from_bytes(hashlib.sha256(int(key).to_bytes(8, "big")).digest()[-8:], "big")


def mptcp_subflows(packets: pd.DataFrame, flow_table: pd.DataFrame | None = None,
                   annotated: pd.DataFrame | None = None) -> pd.DataFrame:
    """One row per MPTCP subflow (a TCP connection), grouped into MPTCP connections.

    Parameters
    ----------
    packets : pandas.DataFrame
        A packet table from :func:`~tcpmodels.traces.read_pcap`.
    flow_table, annotated : pandas.DataFrame, optional
        :func:`~tcpmodels.traces.flows.flows` and :func:`~tcpmodels.traces.annotation.annotate`
        of ``packets`` if already computed.

    Returns
    -------
    pandas.DataFrame
        ``mptcp_id`` (0, 1, ... in order of the initial SYN), ``token`` (of the
        responder's key), ``subflow`` (0 for the initial subflow, then in join order),
        ``connection_id``, ``client_addr, client_port, server_addr, server_port``,
        ``syn_time_s`` [s], ``join_delay_s`` (join SYN minus the completion of the
        initial handshake, i.e. the initiator's ACK carrying both keys; 0 for the
        initial subflow) [s], ``forward_bytes`` / ``reverse_bytes`` (unique payload
        from initiator / responder) [bytes], ``forward_wire_bytes`` [bytes],
        ``forward_share`` / ``reverse_share`` (of the MPTCP connection's bytes in that
        direction) [-], ``retransmitted_packets`` (forward), and for the initial
        subflow ``initiator_key`` / ``responder_key`` and ``data_level_bytes``: the
        forward data sequence space covered by DSS mappings over all subflows
        (including one for DATA_FIN), measured from the initiator's IDSN. [bytes]
        Subflows with MP_JOIN whose token matches no captured MP_CAPABLE handshake
        get ``mptcp_id = -1``.
    """
    if annotated is None:
        annotated = annotate(packets)
    if flow_table is None:
        flow_table = flows(packets, annotated)
    p = packets.assign(connection_id=annotated["connection_id"].to_numpy(),
                       is_initiator=annotated["is_initiator"].to_numpy())
    cap = p[p["mptcp_subtype"] == 0]
    # initial subflows: an MP_CAPABLE SYN from the initiator
    init_syn = cap[cap["syn"] & ~cap["ack_flag"]].groupby("connection_id")["timestamp_s"].min()
    rows = []
    for conn, syn_t in init_syn.sort_values().items():
        c = cap[cap["connection_id"] == conn]
        resp = c[~c["is_initiator"] & (c["mptcp_send_key"] != 0)]["mptcp_send_key"]
        third = c[c["is_initiator"] & (c["mptcp_recv_key"] != 0)]
        ikey = int(third["mptcp_send_key"].iloc[0]) if len(third) else 0
        rkey = int(resp.iloc[0]) if len(resp) else (int(third["mptcp_recv_key"].iloc[0]) if len(third) else 0)
        done_t = float(third["timestamp_s"].iloc[0]) if len(third) else np.nan
        rows.append({"connection_id": conn, "syn_time_s": syn_t, "initiator_key": ikey, "responder_key": rkey,
                     "token": mptcp_token(rkey) if rkey else 0,
                     "initiator_token": mptcp_token(ikey) if ikey else 0, "handshake_done_s": done_t})
    initial = pd.DataFrame(rows, columns=["connection_id", "syn_time_s", "initiator_key", "responder_key",
                                          "token", "initiator_token", "handshake_done_s"])
    initial["mptcp_id"] = np.arange(len(initial))
    joins = p[(p["mptcp_subtype"] == 1) & p["syn"] & ~p["ack_flag"] & (p["mptcp_recv_token"] != 0)]
    joins = joins.groupby("connection_id").agg(syn_time_s=("timestamp_s", "min"), token=("mptcp_recv_token", "first"))
    by_token = {int(t): i for t, i in zip(initial["token"], initial["mptcp_id"]) if t}
    by_token.update({int(t): i for t, i in zip(initial["initiator_token"], initial["mptcp_id"]) if t})
    out = []
    for r in initial.itertuples():
        out.append({"mptcp_id": r.mptcp_id, "token": r.token, "connection_id": r.connection_id,
                    "syn_time_s": r.syn_time_s, "join_delay_s": 0.0})
    for conn, r in joins.sort_values("syn_time_s").iterrows():
        mid = by_token.get(int(r["token"]), -1)
        done = initial["handshake_done_s"].iloc[mid] if mid >= 0 else np.nan
        out.append({"mptcp_id": mid, "token": int(r["token"]), "connection_id": conn,
                    "syn_time_s": r["syn_time_s"], "join_delay_s": r["syn_time_s"] - done})
    sub = pd.DataFrame(out, columns=["mptcp_id", "token", "connection_id", "syn_time_s", "join_delay_s"])
    if len(sub) == 0:
        return sub
    sub = sub.astype({"mptcp_id": np.int64, "token": np.int64, "connection_id": np.int64})
    sub["subflow"] = sub.sort_values("syn_time_s").groupby("mptcp_id").cumcount()
    ft = flow_table.reset_index()
    fwd = ft[ft["is_initiator"]].set_index("connection_id")
    rev = ft[~ft["is_initiator"]].set_index("connection_id")
    c = sub["connection_id"]
    sub["client_addr"] = fwd["src_addr"].reindex(c).astype(str).to_numpy()
    sub["client_port"] = fwd["src_port"].reindex(c).to_numpy()
    sub["server_addr"] = fwd["dst_addr"].reindex(c).astype(str).to_numpy()
    sub["server_port"] = fwd["dst_port"].reindex(c).to_numpy()
    sub["forward_bytes"] = fwd["unique_payload_bytes"].reindex(c).fillna(0).astype(np.int64).to_numpy()
    sub["reverse_bytes"] = rev["unique_payload_bytes"].reindex(c).fillna(0).astype(np.int64).to_numpy()
    sub["forward_wire_bytes"] = fwd["wire_bytes"].reindex(c).fillna(0).astype(np.int64).to_numpy()
    sub["retransmitted_packets"] = fwd["retransmitted_packets"].reindex(c).fillna(0).astype(np.int64).to_numpy()
    for d in ("forward", "reverse"):
        total = sub.groupby("mptcp_id")[f"{d}_bytes"].transform("sum")
        sub[f"{d}_share"] = np.where(total > 0, sub[f"{d}_bytes"] / total.where(total > 0), np.nan)
    # data-level bytes from DSS mappings in the forward direction of all subflows
    dss = p[p["has_mptcp_dsn"] & p["is_initiator"]]
    dss = dss.assign(mptcp_id=dss["connection_id"].map(dict(zip(sub["connection_id"], sub["mptcp_id"]))))
    ends: dict[int, int] = {}
    for mid, dsn, ln in zip(dss["mptcp_id"], dss["mptcp_dsn"].to_numpy(), dss["mptcp_data_len"].to_numpy()):
        if mid == mid:  # not NaN
            ends[int(mid)] = max(ends.get(int(mid), 0), int(dsn) + int(ln))
    level = {}
    for mid, ikey in zip(initial["mptcp_id"], initial["initiator_key"]):
        if int(mid) in ends and int(ikey):
            level[int(mid)] = (ends[int(mid)] - (mptcp_idsn(int(ikey)) + 1)) % (1 << 64)
    sub["data_level_bytes"] = [level.get(m, np.nan) if s == 0 else np.nan for m, s in zip(sub["mptcp_id"], sub["subflow"])]
    keys = initial.set_index("mptcp_id")
    sub["initiator_key"] = [int(keys["initiator_key"].get(m, 0)) if s == 0 else 0 for m, s in zip(sub["mptcp_id"], sub["subflow"])]
    sub["responder_key"] = [int(keys["responder_key"].get(m, 0)) if s == 0 else 0 for m, s in zip(sub["mptcp_id"], sub["subflow"])]
    cols = ["mptcp_id", "token", "subflow", "connection_id", "client_addr", "client_port", "server_addr",
            "server_port", "syn_time_s", "join_delay_s", "forward_bytes", "reverse_bytes", "forward_wire_bytes",
            "forward_share", "reverse_share", "retransmitted_packets", "data_level_bytes", "initiator_key",
            "responder_key"]
    return sub.sort_values(["mptcp_id", "subflow"]).reset_index(drop=True)[cols]
