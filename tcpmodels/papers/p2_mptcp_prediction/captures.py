"""P2 captures: subflow shares of each MPTCP connection counted from packets on the two paths."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

__all__ = ["capture_shares"]


def capture_shares(path1_pcap: str | Path, path2_pcap: str | Path, *, server_port: int = 5201) -> pd.DataFrame:
    """Subflow shares of each MPTCP connection, counted from packets captured on the two paths.

    Every connection's initial subflow runs over path 1 (one client port per
    connection); a subflow seen on path 2 belongs to the connection on path 1
    whose lifetime contains its SYN. Bytes are TCP payload bytes from the
    client (IP total length minus IP and TCP headers, so a short snap length
    does not matter), retransmissions included.

    Parameters
    ----------
    path1_pcap, path2_pcap : str or Path
        pcap files (optionally gzip-compressed) captured on path 1 and path 2.
    server_port : int
        TCP port of the server.

    Returns
    -------
    pandas.DataFrame
        One row per connection that carried data, in start order: ``start_s`` (from the first packet), ``payload_path1_bytes``,
        ``payload_path2_bytes``, ``share1`` [-], ``subflows_path2``.

    """
    from tcpmodels.traces import read_pcap

    def read(path):
        packets = read_pcap(path)  # payload from the IP lengths, so the snap length does not matter
        data = packets[packets["dst_port"] == server_port]  # client -> server; skip the server's ACKs
        return pd.DataFrame({"t": data["timestamp_s"].to_numpy(), "sport": data["src_port"].to_numpy(),
                             "syn": data["syn"].to_numpy(), "payload": data["payload_bytes"].to_numpy(np.int64)})

    p1, p2_ = read(path1_pcap), read(path2_pcap)
    if p1.empty:
        raise ValueError(f"no client -> server:{server_port} TCP packets in {path1_pcap}")
    conns = p1.groupby("sport").agg(start=("t", "min"), end=("t", "max"), b1=("payload", "sum")).sort_values("start")
    conns["b2"] = 0
    conns["subflows_path2"] = 0
    for _, g in p2_.groupby("sport"):
        t_syn = g.loc[g["syn"], "t"].min() if g["syn"].any() else g["t"].min()
        owner = conns[(conns["start"] <= t_syn) & (conns["end"] >= t_syn)]
        if len(owner) == 1:
            conns.loc[owner.index[0], "b2"] += int(g["payload"].sum())
            conns.loc[owner.index[0], "subflows_path2"] += 1
    t0 = min(p1["t"].min(), p2_["t"].min()) if not p2_.empty else p1["t"].min()
    conns = conns[conns["b1"] + conns["b2"] > 0]  # e.g. the last ACKs of a connection that ended before
    return pd.DataFrame({"start_s": (conns["start"] - t0).to_numpy(), "payload_path1_bytes": conns["b1"].to_numpy(),
                         "payload_path2_bytes": conns["b2"].to_numpy(),
                         "share1": (conns["b1"] / (conns["b1"] + conns["b2"])).to_numpy(),
                         "subflows_path2": conns["subflows_path2"].to_numpy()})

