"""P1 in ns-3: the fat-tree scenario of a run, running it, and its rows."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from tcpmodels._docstrings import SharedEntries
from tcpmodels.experiments.p1.config import N_CORES, P1Config
from tcpmodels.sim.config import FatTree

__all__ = ["ns3_config", "run_ns3", "ns3_rows"]

#: Parameters documented once for the docstrings of this module that share them.
_PARAMETERS = SharedEntries("""
    conns : list of dict
        The connections of one run (:func:`schedule`).
    seed : int
        Seed of the simulation.
""")


# --------------------------------------------------------------- ns-3 engine
@_PARAMETERS.fill
def ns3_config(conns: list[dict], config: P1Config, *, seed: int, variant: str = "TcpNewReno") -> FatTree:
    """The schedule as a :class:`tcpmodels.sim.config.FatTree`.

    MPTCP connections get one subflow per core, LIA-coupled (``ns3::TcpLia``); a
    single-path connection is pinned to the core its ``plane`` names (the schedule's
    per-flow ECMP draw, the same the kernel run uses). Links: Table 1 rates and buffer,
    delays making the inter-pod RTT ``config.rtt_s``.

    Parameters
    ----------
    {conns}
    config : P1Config
        Link rates [bit/s], buffer [bytes] and RTT [s].
    {seed}
    variant : str
        ns-3 congestion control of single-path connections and of uncoupled subflows.

    Returns
    -------
    tcpmodels.sim.config.FatTree
        The scenario, lasting until the last connection's ``end_s``; each connection
        tagged ``"{kind}:{conn_id}"``.
    """
    from tcpmodels.sim.config import FatTreeConnection, TcpOptions, fat_tree_link

    objs = tuple(FatTreeConnection(src=c["src"], dst=c["dst"], start_s=c["start_s"], size_bytes=c["size_bytes"],
                                   cores=tuple(range(N_CORES)) if c["mptcp"] else (c["plane"],),
                                   coupled=c["mptcp"], variant=variant, tag=f"{c['kind']}:{c['conn_id']}")
                 for c in conns)
    return FatTree(connections=objs,
                   host_link=fat_tree_link(config.host_rate_bps, rtt_s=config.rtt_s, queue_bytes=config.buffer_bytes),
                   edge_agg_link=fat_tree_link(config.edge_agg_rate_bps, rtt_s=config.rtt_s,
                                               queue_bytes=config.buffer_bytes),
                   agg_core_link=fat_tree_link(config.agg_core_rate_bps, rtt_s=config.rtt_s,
                                               queue_bytes=config.buffer_bytes),
                   tcp=TcpOptions(), duration_s=max(c["end_s"] for c in conns), seed=int(seed))


@_PARAMETERS.fill
def run_ns3(conns: list[dict], config: P1Config, *, seed: int, out_dir: str | Path) -> dict:
    """Simulate one schedule with :func:`tcpmodels.sim.run.run_config`; return its per-connection tables.

    Parameters
    ----------
    {conns}
    config : P1Config
        The campaign's configuration.
    {seed}
    out_dir : str or Path
        Folder of the run's tables.

    Returns
    -------
    dict
        ``apps`` and ``flows`` (the DataFrames of :class:`~tcpmodels.sim.run.SimResult`)
        and ``record`` (the run record).

    Raises
    ------
    tcpmodels.sim.run.SimulationError
        If the simulation process fails.
    """
    from tcpmodels.sim.run import run_config

    res = run_config(ns3_config(conns, config, seed=seed), out_dir)
    return {"apps": res.apps, "flows": res.flows, "record": res.record}


def ns3_rows(conns: list[dict], apps: pd.DataFrame, fm: pd.DataFrame | None) -> tuple[list[dict], list[dict]]:
    """Flow rows (as for the kernel) and per-subflow rows of the background connections of one ns-3 run.

    ``lost_packets`` of a connection is FlowMonitor's count of its data packets lost in
    the network (all subflows), the ns-3 counterpart of "the sender retransmitted".

    Parameters
    ----------
    conns : list of dict
        The connections of the run (:func:`schedule`).
    apps : pandas.DataFrame
        The run's ``apps`` table (one row per connection, with its ``tag``).
    fm : pandas.DataFrame or None
        The run's FlowMonitor ``flows`` table, for the lost-packet counts.

    Returns
    -------
    tuple of (list of dict, list of dict)
        Flow rows (``fct_s`` [s], ``bytes``, ``rate_bps`` [bit/s], ``mptcp_subflows``,
        ``lost_packets``, ``error``, ...) and, for background connections, one row per
        core with ``duration_s`` [s] and ``throughput_bps`` [bit/s].
    """
    apps = apps.set_index("tag")
    lost = {}
    if fm is not None and len(fm) and "lost_packets" in fm:
        data = fm[fm["direction"] == "data"] if "direction" in fm else fm
        lost = data.groupby("flow_index")["lost_packets"].sum().to_dict()
    rows, subflows = [], []
    for c in conns:
        tag = f"{c['kind']}:{c['conn_id']}"
        r = apps.loc[tag].to_dict() if tag in apps.index else {}
        fct = r.get("fct_s")
        fct = float(fct) if fct is not None and pd.notna(fct) else None
        row = {**{k: c[k] for k in ("conn_id", "kind", "src", "dst", "start_s", "size_bytes", "mptcp", "plane")},
               "fct_s": fct, "bytes": r.get("rx_bytes"), "rate_bps": r.get("goodput_bps"), "connect_s": None,
               "mptcp_subflows": r.get("n_subflows"),
               "error": None if (fct is not None or c["size_bytes"] is None or not r) else "not completed"}
        if not r:
            row["error"] = "no result row"
        conn_index = r.get("connection")
        row["lost_packets"] = int(lost.get(conn_index, 0)) if conn_index is not None and lost else None
        rows.append(row)
        if c["size_bytes"] is None and r:
            span = max(c["end_s"] - c["start_s"], 1e-9)
            for core in range(N_CORES):
                b = r.get(f"rx_bytes_core{core}")
                if b is not None and pd.notna(b) and (b > 0 or c["mptcp"]):
                    subflows.append({"conn_id": c["conn_id"], "src": c["src"], "dst": c["dst"], "mptcp": c["mptcp"],
                                     "subflow": core, "remote": f"core{core}", "duration_s": span,
                                     "throughput_bps": float(b) * 8 / span})
    return rows, subflows
