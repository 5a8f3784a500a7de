"""MPTCP v0 (RFC 6824) and v1 (RFC 8684): group TCP subflows into MPTCP connections and account for each subflow.

The initial subflow carries MP_CAPABLE: the responder's key in the SYN/ACK and
both keys in the initiator's third ACK (v0 also puts the initiator's key in the
SYN). Each additional subflow opens with an MP_JOIN SYN carrying the *token* of
the receiving side's key: the most significant 32 bits of a hash of the key,
SHA-1 in version 0 ([2]_, Sec. 3.1), SHA-256 in version 1 ([1]_, Sec. 3.1-3.2);
the initial data sequence number (IDSN) is the least significant 64 bits of the
same hash. The version is the low nibble of MP_CAPABLE's third byte.

References
----------
.. [1] RFC 8684, "TCP Extensions for Multipath Operation with Multiple Addresses", 2020.
.. [2] RFC 6824, "TCP Extensions for Multipath Operation with Multiple Addresses", 2013 (version 0, the
   out-of-tree Linux implementation).
"""

from __future__ import annotations

import hashlib

import numpy as np
import pandas as pd

from .annotation import annotate
from .flows import flows

__all__ = ["mptcp_token", "mptcp_idsn", "mptcp_subflows"]

_HASHES = {0: hashlib.sha1, 1: hashlib.sha256}


def _digest(key: int, version: int) -> bytes:
    if version not in _HASHES:
        raise ValueError(f"version must be 0 (RFC 6824) or 1 (RFC 8684); got {version!r}")
    return _HASHES[version](int(key).to_bytes(8, "big")).digest()


def mptcp_token(key: int, version: int = 1) -> int:
    """Token of an MPTCP key: the most significant 32 bits of SHA-256(key) (v1) or SHA-1(key) (v0).

    Parameters
    ----------
    key : int
        The 64-bit key (as in MP_CAPABLE).
    version : int
        MPTCP version: 0 (RFC 6824, SHA-1) or 1 (RFC 8684, SHA-256).

    Returns
    -------
    int
        The 32-bit token.
    """
    return int.from_bytes(_digest(key, version)[:4], "big")


def mptcp_idsn(key: int, version: int = 1) -> int:
    """Initial data sequence number of an MPTCP key: the least significant 64 bits of its SHA-256 / SHA-1 hash.

    Parameters
    ----------
    key : int
        The 64-bit key (as in MP_CAPABLE).
    version : int
        MPTCP version: 0 (RFC 6824, SHA-1) or 1 (RFC 8684, SHA-256).

    Returns
    -------
    int
        The 64-bit initial data sequence number.
    """
    return int.from_bytes(_digest(key, version)[-8:], "big")


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
        ``mptcp_id`` (0, 1, ... in order of the first subflow), ``version`` (0: RFC 6824,
        1: RFC 8684; -1 when the handshake was not captured), ``token`` (of the
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
        A connection whose SYN/ACK carries no MP_CAPABLE fell back to regular TCP (RFC 8684
        Sec. 3.7) and is not listed. A subflow whose MPTCP connection's handshake was not captured (an MP_JOIN
        with an unknown token, or MPTCP options without MP_CAPABLE or MP_JOIN SYN)
        belongs to an MPTCP connection of its own (joins with the same token share
        one), with ``version = -1``, as Wireshark's ``mptcp.stream`` groups them;
        ``syn_time_s`` is then its first packet's time and ``join_delay_s`` NaN.
    """
    if annotated is None:
        annotated = annotate(packets)
    if flow_table is None:
        flow_table = flows(packets, annotated)
    p = packets.assign(connection_id=annotated["connection_id"].to_numpy(),
                       is_initiator=annotated["is_initiator"].to_numpy())
    cap = p[p["mptcp_subtype"] == 0]
    # initial subflows: an MP_CAPABLE SYN from the initiator, unless the connection fell back to TCP: a SYN/ACK
    # was captured and none carries MP_CAPABLE (RFC 8684 Sec. 3.7)
    synack = p[p["syn"] & p["ack_flag"]]
    fell_back = set(synack["connection_id"]) - set(synack[synack["mptcp_subtype"] == 0]["connection_id"])
    init_syn = cap[cap["syn"] & ~cap["ack_flag"] & ~cap["connection_id"].isin(fell_back)]
    init_syn = init_syn.groupby("connection_id")["timestamp_s"].min()
    rows = []
    for conn, syn_t in init_syn.sort_values().items():
        c = cap[cap["connection_id"] == conn]
        versions = c["mptcp_version"][c["mptcp_version"] >= 0]
        version = int(versions.iloc[-1]) if len(versions) else 1  # the SYN/ACK's answer settles it
        resp = c[~c["is_initiator"] & (c["mptcp_send_key"] != 0)]["mptcp_send_key"]
        third = c[c["is_initiator"] & (c["mptcp_recv_key"] != 0)]
        syn_key = c[c["is_initiator"] & c["syn"] & (c["mptcp_send_key"] != 0)]["mptcp_send_key"]  # v0 SYN
        ikey = int(third["mptcp_send_key"].iloc[0]) if len(third) else (int(syn_key.iloc[0]) if len(syn_key) else 0)
        rkey = int(resp.iloc[0]) if len(resp) else (int(third["mptcp_recv_key"].iloc[0]) if len(third) else 0)
        done_t = float(third["timestamp_s"].iloc[0]) if len(third) else np.nan
        hashable = version in _HASHES
        rows.append({"connection_id": conn, "version": version, "syn_time_s": syn_t, "initiator_key": ikey,
                     "responder_key": rkey, "token": mptcp_token(rkey, version) if rkey and hashable else 0,
                     "initiator_token": mptcp_token(ikey, version) if ikey and hashable else 0,
                     "handshake_done_s": done_t})
    initial = pd.DataFrame(rows, columns=["connection_id", "version", "syn_time_s", "initiator_key", "responder_key",
                                          "token", "initiator_token", "handshake_done_s"])
    initial["mptcp_id"] = np.arange(len(initial))
    joins = p[(p["mptcp_subtype"] == 1) & p["syn"] & ~p["ack_flag"] & (p["mptcp_recv_token"] != 0)]
    joins = joins.groupby("connection_id").agg(syn_time_s=("timestamp_s", "min"), token=("mptcp_recv_token", "first"))
    by_token = {int(t): i for t, i in zip(initial["token"], initial["mptcp_id"]) if t}
    by_token.update({int(t): i for t, i in zip(initial["initiator_token"], initial["mptcp_id"]) if t})
    out = []
    for r in initial.itertuples():
        out.append({"mptcp_id": r.mptcp_id, "version": r.version, "token": r.token, "connection_id": r.connection_id,
                    "syn_time_s": r.syn_time_s, "join_delay_s": 0.0})
    # subflows whose MPTCP connection's handshake was not captured get a connection of their own (joins with
    # the same unknown token share one), as Wireshark's mptcp.stream does
    unknown: dict[tuple, int] = {}
    for conn, r in joins.sort_values("syn_time_s").iterrows():
        mid = by_token.get(int(r["token"]))
        if mid is None:
            mid = unknown.setdefault(("token", int(r["token"])), len(initial) + len(unknown))
            done, version = np.nan, -1
        else:
            done, version = initial["handshake_done_s"].iloc[mid], int(initial["version"].iloc[mid])
        out.append({"mptcp_id": mid, "version": version, "token": int(r["token"]), "connection_id": conn,
                    "syn_time_s": r["syn_time_s"], "join_delay_s": r["syn_time_s"] - done})
    grouped = set(initial["connection_id"]) | set(joins.index) | fell_back
    rest = p[(p["mptcp_subtype"] >= 0) & ~p["connection_id"].isin(grouped)]
    for conn, t0 in rest.groupby("connection_id")["timestamp_s"].min().sort_values().items():
        mid = unknown.setdefault(("conn", int(conn)), len(initial) + len(unknown))
        out.append({"mptcp_id": mid, "version": -1, "token": 0, "connection_id": conn, "syn_time_s": t0,
                    "join_delay_s": np.nan})
    sub = pd.DataFrame(out, columns=["mptcp_id", "version", "token", "connection_id", "syn_time_s", "join_delay_s"])
    if len(sub) == 0:
        return sub
    sub = sub.astype({"mptcp_id": np.int64, "version": np.int64, "token": np.int64, "connection_id": np.int64})
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
            version = int(initial["version"].iloc[int(mid)])
            if version in _HASHES:
                level[int(mid)] = (ends[int(mid)] - (mptcp_idsn(int(ikey), version) + 1)) % (1 << 64)
    sub["data_level_bytes"] = [level.get(m, np.nan) if s == 0 else np.nan for m, s in zip(sub["mptcp_id"], sub["subflow"])]
    keys = initial.set_index("mptcp_id")
    sub["initiator_key"] = [int(keys["initiator_key"].get(m, 0)) if s == 0 else 0 for m, s in zip(sub["mptcp_id"], sub["subflow"])]
    sub["responder_key"] = [int(keys["responder_key"].get(m, 0)) if s == 0 else 0 for m, s in zip(sub["mptcp_id"], sub["subflow"])]
    cols = ["mptcp_id", "version", "token", "subflow", "connection_id", "client_addr", "client_port", "server_addr",
            "server_port", "syn_time_s", "join_delay_s", "forward_bytes", "reverse_bytes", "forward_wire_bytes",
            "forward_share", "reverse_share", "retransmitted_packets", "data_level_bytes", "initiator_key",
            "responder_key"]
    # number the MPTCP connections in order of their first subflow
    start = sub.groupby("mptcp_id")["syn_time_s"].min().sort_values(kind="stable")
    sub["mptcp_id"] = sub["mptcp_id"].map(dict(zip(start.index, range(len(start))))).astype(np.int64)
    return sub.sort_values(["mptcp_id", "subflow"]).reset_index(drop=True)[cols]
