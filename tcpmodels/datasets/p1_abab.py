"""P1's alternated-testbeds dataset (issue 57, item 1): tables, columns, schema version and the facts both sides use.

:mod:`tcpmodels.experiments.p1.abab` writes it (``p1_abab_flows.parquet``, ``p1_abab_runs.parquet``),
:mod:`tcpmodels.papers.p1_datacenter_fct.abab` reads it. A seed is complete when it has
:data:`RUNS_PER_SEED` runs: both kernel testbeds (:data:`tcpmodels.datasets.p1.KERNEL_ENGINES`) with
both backgrounds. The runs table keeps the TcpExt counters of :data:`TCP_EXT_KEPT`, summed over the 16
hosts, as ``tcp_<name>``.
"""

from __future__ import annotations

import pandas as pd

from tcpmodels.datasets.p1 import KERNEL_ENGINES
from tcpmodels.datasets.schema import Column, DatasetSchema, Table, columns

__all__ = ["SCHEMA", "FLOWS", "RUNS", "KEY", "CAMPAIGN", "TESTBEDS", "RUNS_PER_SEED", "TCP_EXT_KEPT", "tcp_ext_column",
           "complete_seeds"]

#: what identifies a run of the campaign
KEY = ("campaign", "engine", "experiment", "protocol", "cc", "seed")
#: its ``campaign`` label
CAMPAIGN = "p1_abab"
#: the two testbeds alternated per seed: unsteered (``kernel``), then steered (``kernel_steered``)
TESTBEDS = KERNEL_ENGINES
#: the runs of a complete seed: both testbeds, each with a TCP and an uncoupled MPTCP background
RUNS_PER_SEED = 2 * len(TESTBEDS)
#: the TcpExt counters kept in the runs table (summed over the 16 hosts; ``TCPOrigDataSent`` is the data segments
#: sent, the denominator of every rate per 1000 segments)
TCP_EXT_KEPT = ("TCPOrigDataSent", "TCPSACKReorder", "TCPTSReorder", "TCPRenoReorder", "TCPDSACKRecv",
                "TCPDSACKOfoRecv", "TCPDSACKOldSent", "TCPTimeouts", "TCPFastRetrans", "TCPSlowStartRetrans",
                "TCPLossProbes", "TCPLostRetransmit", "TCPSackRecovery", "TCPOFOQueue", "TCPSpuriousRTOs",
                "DelayedACKs", "TCPBacklogDrop", "TCPRcvQDrop")


def tcp_ext_column(counter: str) -> str:
    """The runs table's column of a TcpExt counter of :data:`TCP_EXT_KEPT`.

    Parameters
    ----------
    counter : str
        The counter's name in ``/proc/net/netstat`` (``TCPSACKReorder``).

    Returns
    -------
    str
        ``tcp_<counter>``.

    Examples
    --------
    >>> tcp_ext_column("TCPTimeouts")
    'tcp_TCPTimeouts'
    """
    return f"tcp_{counter}"


def complete_seeds(runs: pd.DataFrame, runs_per_seed: int = RUNS_PER_SEED) -> list[int]:
    """The seeds with all their runs (here :data:`RUNS_PER_SEED`: both testbeds, both backgrounds) in a runs table.

    Parameters
    ----------
    runs : pandas.DataFrame
        A session's runs table (or the campaign's runs before they are written).
    runs_per_seed : int
        The runs of a complete seed (another campaign with these tables has its own:
        :data:`tcpmodels.datasets.p1_swaps.RUNS_PER_SEED`).

    Returns
    -------
    list of int
        Sorted.
    """
    n = runs.groupby("seed").size()
    return sorted(int(s) for s in n[n == runs_per_seed].index)


#: the run a row belongs to, its place in the session and its testbed's place in its seed (0 first, 1 second)
_RUN = columns("""
    campaign      str
    engine        str
    experiment    str
    protocol      str
    cc            str
    seed          int64
    order         int64
    arm_position  int64
""")

#: ``p1_abab_flows.parquet``: one row per connection of the Section 4 experiment
FLOWS = Table(name="flows", columns=_RUN + columns("""
    conn_id                int64
    kind                   str
    src                    int64
    dst                    int64
    start_s                float64
    size_bytes             int64
    fct_s                  float64
    rate_bps               float64
    retransmitted_packets  int64
    pattern                str
    error                  str
"""), compression="snappy")

#: ``p1_abab_runs.parquet``: one row per run, the CPU times summed over the CPUs over the run
RUNS = Table(name="runs", columns=_RUN + columns("""
    started_utc        str
    wall_s             float64
    setup_s            float64
    load_avg_1m        float64
    load_avg_1m_after  float64
    lock_wait_s        float64
    cpu_steal_s        float64
    cpu_softirq_s      float64
    cpu_idle_s         float64
    rps_cpus           str      hexadecimal CPU mask
    n_errors           int64
    bg_rate_bps        float64
    git_commit         str
    git_dirty          bool
""") + tuple(Column(tcp_ext_column(k), "int64", "segments" if k == "TCPOrigDataSent" else "events")
             for k in TCP_EXT_KEPT), compression="snappy")

#: the dataset
SCHEMA = DatasetSchema(prefix="p1_abab", version=1, tables=(FLOWS, RUNS),
                       command="python -m tcpmodels.experiments.p1.abab dataset --records runs/p1/abab.jsonl --out data")
