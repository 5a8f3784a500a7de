"""P3's per-run differences of Jain's index, proposal minus standard, paired by seed (ns-3) or by sample (kernel)."""

from __future__ import annotations

import pandas as pd

from tcpmodels.papers.p3_cubic_fairness.data import PARAMETERS as _PARAMETERS
from tcpmodels.papers.p3_cubic_fairness.data import P3Dataset
from tcpmodels.papers.p3_cubic_fairness.fairness import ns3_main_runs
from tcpmodels.papers.p3_cubic_fairness.runs import kernel_runs

__all__ = ["paired_dj", "kernel_paired_dj"]


@_PARAMETERS.fill
def paired_dj(ds: P3Dataset, reading: str, *, exponent: float | None = None) -> pd.DataFrame:
    """Per ns-3 run: Jain's index with standard CUBIC and with the proposal (same RTT pair, same seed), and dJ.

    The unit the claims are judged on: one row per (Reno RTT, CUBIC RTT, seed), columns
    ``reno_rtt_ms, cubic_rtt_ms, seed, J_standard, J_proposal, dJ`` (proposal minus standard).

    Parameters
    ----------
    ds : P3Dataset
        The campaign's data (its ``ns3`` runs).
    reading : {"multiply", "divide"}
        The reading of eq. (4) the proposal runs used.
    {exponent}

    Returns
    -------
    pandas.DataFrame
        The rows of the runs present with both kinds, sorted by the key; empty with those columns
        when there are no ns-3 runs.
    """
    ns = ns3_main_runs(ds, exponent)
    key = ["reno_rtt_ms", "cubic_rtt_ms", "seed"]
    if len(ns) == 0:
        return pd.DataFrame(columns=[*key, "J_standard", "J_proposal", "dJ"])
    std = ns[ns["kind"] == "standard"][[*key, "jain"]].rename(columns={"jain": "J_standard"})
    prop = ns[ns["kind"] == reading][[*key, "jain"]].rename(columns={"jain": "J_proposal"})
    m = std.merge(prop, on=key, how="inner").sort_values(key).reset_index(drop=True)
    return m.assign(dJ=m["J_proposal"] - m["J_standard"])


def kernel_paired_dj(ds: P3Dataset, reading: str) -> pd.DataFrame:
    """Per kernel repetition: Jain's index with the kernel's ``cubic`` and with ``tm_cubic_x`` in ``reading``, and dJ.

    The samples of one RTT pair and repetition share their start offsets
    (:func:`tcpmodels.experiments.p3.kernel_plan`), so they pair like the ns-3 seeds; both at
    :func:`~tcpmodels.papers.p3_cubic_fairness.runs.proposal_setting`.

    Parameters
    ----------
    ds : P3Dataset
        The campaign's data (its ``kernel`` samples).
    reading : {"multiply", "divide"}
        The reading of eq. (4).

    Returns
    -------
    pandas.DataFrame
        ``reno_rtt_ms, cubic_rtt_ms, rep, J_standard, J_proposal, dJ``, one row per pair and
        repetition with both kinds, sorted; empty with those columns otherwise.
    """
    key = ["reno_rtt_ms", "cubic_rtt_ms", "rep"]
    std, prop = kernel_runs(ds, "standard"), kernel_runs(ds, reading)
    if len(std) == 0 or len(prop) == 0:
        return pd.DataFrame(columns=[*key, "J_standard", "J_proposal", "dJ"])
    a = std[std["jain"].notna()][[*key, "jain"]].rename(columns={"jain": "J_standard"})
    b = prop[prop["jain"].notna()][[*key, "jain"]].rename(columns={"jain": "J_proposal"})
    m = a.merge(b, on=key, how="inner").sort_values(key).reset_index(drop=True)
    return m.assign(dJ=m["J_proposal"] - m["J_standard"])
