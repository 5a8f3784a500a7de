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

import bisect
import hashlib

import numpy as np
import pandas as pd

from tcpmodels._docstrings import SharedEntries

from .annotation import annotate
from .flows import flows

__all__ = ["mptcp_token", "mptcp_idsn", "mptcp_subflows", "mptcp_mappings"]

#: Parameters documented once for the docstrings of this module that share them.
_PARAMETERS = SharedEntries("""
    key : int
        The 64-bit key (as in MP_CAPABLE).
    version : int
        MPTCP version: 0 (RFC 6824, SHA-1) or 1 (RFC 8684, SHA-256).
    packets : pandas.DataFrame
        A packet table from :func:`~tcpmodels.traces.read_pcap`.
""")

_HASHES = {0: hashlib.sha1, 1: hashlib.sha256}


def _digest(key: int, version: int) -> bytes:
    if version not in _HASHES:
        raise ValueError(f"version must be 0 (RFC 6824) or 1 (RFC 8684); got {version!r}")
    return _HASHES[version](int(key).to_bytes(8, "big")).digest()


@_PARAMETERS.fill
def mptcp_token(key: int, version: int = 1) -> int:
    """Token of an MPTCP key: the most significant 32 bits of SHA-256(key) (v1) or SHA-1(key) (v0).

    Parameters
    ----------
    {key, version}

    Returns
    -------
    int
        The 32-bit token.
    """
    return int.from_bytes(_digest(key, version)[:4], "big")


@_PARAMETERS.fill
def mptcp_idsn(key: int, version: int = 1) -> int:
    """Initial data sequence number of an MPTCP key: the least significant 64 bits of its SHA-256 / SHA-1 hash.

    Parameters
    ----------
    {key, version}

    Returns
    -------
    int
        The 64-bit initial data sequence number.
    """
    return int.from_bytes(_digest(key, version)[-8:], "big")


@_PARAMETERS.fill
def mptcp_subflows(packets: pd.DataFrame, flow_table: pd.DataFrame | None = None,
                   annotated: pd.DataFrame | None = None) -> pd.DataFrame:
    """One row per MPTCP subflow (a TCP connection), grouped into MPTCP connections.

    Parameters
    ----------
    {packets}
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


@_PARAMETERS.fill
def mptcp_mappings(packets: pd.DataFrame, subflows: pd.DataFrame | None = None,
                   annotated: pd.DataFrame | None = None) -> pd.DataFrame:
    """Every data packet an MPTCP connection's initiator sent, on every subflow, at its data-level sequence number.

    Parameters
    ----------
    {packets}
    subflows, annotated : pandas.DataFrame, optional
        :func:`mptcp_subflows` and :func:`~tcpmodels.traces.annotate` of ``packets`` if already computed.

    Returns
    -------
    pandas.DataFrame
        One row per forward data packet covered by a DSS mapping (the mapping it carries, or the last one its
        subflow carried), in capture order: ``mptcp_id``, ``subflow``, ``connection_id``, ``time_s``
        (absolute) [s], ``data_seq_bytes`` (the packet's first byte at the data level, relative to the
        connection's initial data sequence number, or to its first mapping when the handshake was not
        captured) [bytes], ``data_len_bytes`` [bytes], ``is_reinjection`` (the packet carries data the
        connection had already sent on a subflow, and is no retransmission on its own subflow: data sent
        again at the connection level, as Wireshark's ``mptcp.reinjection_of``).

    Notes
    -----
    A DSS mapping (RFC 8684 Sec. 3.3.1) maps ``data_len`` bytes from the subflow's relative sequence number
    ``subflow_seq`` to the data sequence number ``dsn``; a packet inside it sits at
    ``dsn + (its relative subflow sequence number - subflow_seq)``.
    """
    cols = ["mptcp_id", "subflow", "connection_id", "time_s", "data_seq_bytes", "data_len_bytes", "is_reinjection"]
    empty = pd.DataFrame({c: pd.Series(dtype="float64" if c == "time_s" else "bool" if c == "is_reinjection"
                                       else "int64") for c in cols})
    an = annotate(packets) if annotated is None else annotated
    sub = mptcp_subflows(packets, annotated=an) if subflows is None else subflows
    if len(sub) == 0:
        return empty
    conn = an["connection_id"].to_numpy()
    fwd = an["is_initiator"].to_numpy() & ~an["is_duplicate"].to_numpy() & np.isin(conn, sub["connection_id"].to_numpy())
    rows = np.flatnonzero(fwd & (packets["has_mptcp_dsn"].to_numpy() | (packets["payload_bytes"].to_numpy() > 0)))
    implicit_dsn = -1
    if len(rows) == 0:
        return empty
    rows = rows[np.argsort(packets["frame_index"].to_numpy()[rows], kind="stable")]
    which = dict(zip(sub["connection_id"], zip(sub["mptcp_id"], sub["subflow"])))
    keys = sub[sub["subflow"] == 0].set_index("mptcp_id")
    # the subflow's initial sequence number: its SYN, else its first packet's seq - 1
    isn = pd.Series(an["seq_u"].to_numpy()[fwd]).groupby(conn[fwd]).min() - 1
    syn_isn = pd.Series(an["seq_u"].to_numpy()[fwd & packets["syn"].to_numpy()]).groupby(
        conn[fwd & packets["syn"].to_numpy()]).min()
    isn.update(syn_isn)
    has_map = packets["has_mptcp_dsn"].to_numpy()
    # RFC 8684 Sec. 3.1: the first data of a v1 connection may ride on MP_CAPABLE with a data-level length and
    # no DSN: its data sequence number is IDSN + 1 (relative 0), at relative subflow sequence number 1
    implicit = ((packets["mptcp_subtype"].to_numpy() == 0) & (packets["mptcp_data_len"].to_numpy() > 0)
                & ~packets["syn"].to_numpy())
    dsn_all = packets["mptcp_dsn"].to_numpy()
    sseq = packets["mptcp_subflow_seq"].to_numpy()
    payload = packets["payload_bytes"].to_numpy()
    seq_u = an["seq_u"].to_numpy()
    rtx = an["is_retransmission"].to_numpy()
    t = packets["timestamp_s"].to_numpy()
    current: dict[int, tuple[int, int]] = {}  # connection -> (dsn, subflow_seq) of its last mapping
    idsn_of: dict[int, int | None] = {}
    first_dsn: dict[int, int] = {}
    covered: dict[int, list] = {}  # mptcp_id -> sorted disjoint [start, end) intervals sent so far
    out = []
    for r in rows.tolist():
        c = int(conn[r])
        mid, sf = which[c]
        if has_map[r]:
            current[c] = (int(dsn_all[r]), int(sseq[r]))
        elif implicit[r]:
            current[c] = (implicit_dsn, 1)
        if payload[r] == 0 or c not in current:
            continue
        dsn, map_sseq = current[c]
        if mid not in idsn_of:
            ikey = int(keys["initiator_key"].get(mid, 0)) if mid in keys.index else 0
            version = int(keys["version"].get(mid, -1)) if mid in keys.index else -1
            idsn_of[mid] = mptcp_idsn(ikey, version) + 1 if ikey and version in _HASHES else None
        idsn = idsn_of[mid]
        if dsn == implicit_dsn:
            rel = 0
        elif idsn is None:
            base = first_dsn.setdefault(mid, dsn)
            rel = ((dsn - base + (1 << 31)) % (1 << 32)) - (1 << 31)
        else:
            wide = (dsn - idsn) % (1 << 64)
            rel = wide if wide < (1 << 40) else (dsn - idsn) % (1 << 32)  # a 4-byte DSN: the low 32 bits
        start = rel + ((int(seq_u[r]) - int(isn[c]) - map_sseq) % (1 << 32))
        end = start + int(payload[r])
        spans = covered.setdefault(mid, [])
        again = _overlaps(spans, start, end)
        _insert(spans, start, end)
        out.append((mid, sf, c, float(t[r]), start, int(payload[r]), again and not rtx[r]))
    if not out:
        return empty
    return pd.DataFrame(out, columns=cols).astype({"mptcp_id": "int64", "subflow": "int64", "connection_id": "int64",
                                                   "data_seq_bytes": "int64", "data_len_bytes": "int64"})


def _overlaps(spans: list, start: int, end: int) -> bool:
    """Whether [start, end) overlaps one of the sorted disjoint intervals ``spans``."""
    i = bisect.bisect_right(spans, [start, float("inf")])
    if i > 0 and spans[i - 1][1] > start:
        return True
    return i < len(spans) and spans[i][0] < end


def _insert(spans: list, start: int, end: int) -> None:
    """Add [start, end) to the sorted disjoint intervals ``spans``, merging what it touches."""
    i = bisect.bisect_left(spans, [start, -1])
    if i > 0 and spans[i - 1][1] >= start:
        i -= 1
        start = spans[i][0]
    j = i
    while j < len(spans) and spans[j][0] <= end:
        end = max(end, spans[j][1])
        j += 1
    spans[i:j] = [[start, end]]
