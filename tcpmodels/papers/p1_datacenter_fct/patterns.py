"""P1 Table 3 (70 KB flow patterns) by the paper's descriptions, and the classification of a capture."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd

from tcpmodels.papers.p1_datacenter_fct.data import PAPER_TABLE3, P1Dataset, backgrounds, measured, with_cc

__all__ = ["LOSS_WITHOUT_TIMEOUT", "SPLIT_IN_DATASET", "paper_patterns", "table3", "classify_capture",
           "split_comparison"]

#: How Table 3 splits the loss-free flows of the shipped dataset, and why not by the ACK clock.
SPLIT_IN_DATASET = ("FCT <= 30 ms is 'Full window' (the capture's rule): the shipped dataset keeps no per-flow ACK "
                    "timing, so the paper's ACK-clock split is shown only on the shipped sample capture "
                    "(classify_capture)")

#: A lossy flow without a timeout: the paper's Table 3 has no row for it (its lossy patterns both time out).
LOSS_WITHOUT_TIMEOUT = "Loss without timeout (not in the paper)"


def paper_patterns(flows: pd.DataFrame) -> pd.Series:
    """Each kernel 70 KB flow's Table 3 pattern, with the lossy patterns as the paper describes them.

    The paper's lossy patterns both start with a **timeout** ("timeout after a few packets",
    "timeout right after the handshake"), so a flow is lossy-by-the-paper only when the capture
    shows a retransmission after an idle gap of at least the minimum RTO (``timeout_gap_s`` set
    by :func:`tcpmodels.traces.classify_short_flows`): "Extreme delay" when the capture placed
    that timeout right after the handshake, else "Delay with loss". A flow that retransmitted
    without a timeout (fast retransmit) is :data:`LOSS_WITHOUT_TIMEOUT`. Loss-free flows keep the
    capture's split into "Full window" and "Intensive flow": the shipped dataset holds no
    per-flow ACK timing, so that split is still the 30 ms FCT threshold, not the ACK clock.

    Parameters
    ----------
    flows : pandas.DataFrame
        70 KB flows with the capture's ``pattern`` and ``retransmitted_packets`` and, when the
        capture saw a timeout, ``timeout_gap_s`` [s].

    Returns
    -------
    pandas.Series
        The pattern per flow (index of ``flows``); NaN where the capture gave no pattern.
    """
    retx = pd.to_numeric(flows["retransmitted_packets"], errors="coerce").fillna(0) > 0
    timeout = flows.get("timeout_gap_s", pd.Series(np.nan, index=flows.index)).notna()
    orig = flows["pattern"].astype(object)
    out = orig.where(~retx, LOSS_WITHOUT_TIMEOUT)
    out = out.where(~timeout, np.where(orig == "Extreme delay", "Extreme delay", "Delay with loss"))
    return out.where(orig.notna())


def table3(dataset: P1Dataset) -> pd.DataFrame:
    """Table 3: 70 KB flows per pattern (kernel captures), by background protocol, beside the paper's definitions.

    Patterns by :func:`paper_patterns` (lossy = a timeout, as the paper describes); ``classified_by``
    says how each row was decided (the loss-free split is the FCT rule here, see
    :data:`SPLIT_IN_DATASET`); the
    column ``<proto>_bg_capture_rule_count`` gives the count under the capture's old rule (any
    retransmission is loss) for comparison.

    Parameters
    ----------
    dataset : P1Dataset
        The campaign's data (its kernel ``s4`` short flows are classified).

    Returns
    -------
    pandas.DataFrame
        One row per pattern (the paper's four, then :data:`LOSS_WITHOUT_TIMEOUT`): ``pattern,
        paper_fct, paper_loss, classified_by`` and, for each background (``TCP``, ``MPTCP``: uncoupled,
        ``MPTCP tm_lia``, ``MPTCP tm_olia`` when run), ``<bg>_bg_count``, ``<bg>_bg_share`` [-],
        ``<bg>_bg_median_fct_ms`` [ms] and ``<bg>_bg_capture_rule_count``; ``attrs["<bg>_classified"]``
        holds the flows classified.
    """
    f = measured(with_cc(dataset.flows), "s4", "short")
    f = f[(f["engine"] == "kernel") & f["pattern"].notna()]
    f = f.assign(paper_pattern=paper_patterns(f))
    groups = [(label, f[mask]) for label, _, mask in backgrounds(f, "kernel")]
    rows = []
    for pattern, (fct, loss) in [*PAPER_TABLE3.items(), (LOSS_WITHOUT_TIMEOUT, ("-", "yes, no timeout"))]:
        row = {"pattern": pattern, "paper_fct": fct, "paper_loss": loss,
               "classified_by": SPLIT_IN_DATASET if pattern in ("Full window", "Intensive flow")
               else "a retransmission after an idle gap >= 200 ms (timeout) in the capture" if loss == "yes"
               else "retransmitted, no timeout, in the capture"}
        for label, g in groups:
            p = g[g["paper_pattern"] == pattern]
            row[f"{label}_bg_count"] = int(len(p))
            row[f"{label}_bg_share"] = len(p) / len(g) if len(g) else math.nan
            row[f"{label}_bg_median_fct_ms"] = float(p["fct_capture_s"].median() * 1e3) if len(p) else math.nan
            row[f"{label}_bg_capture_rule_count"] = int((g["pattern"] == pattern).sum())
        rows.append(row)
    out = pd.DataFrame(rows)
    for label, g in groups:
        out.attrs[f"{label}_classified"] = int(len(g))
    return out


def classify_capture(path: str | Path, *, link_rate_bps: float) -> pd.DataFrame:
    """Classify the 70 KB flows of a shipped capture into P1's patterns, loss-free ones by the ACK clock.

    :func:`tcpmodels.traces.classify_short_flows` with ``split="ack_clock"``: a loss-free flow whose
    bytes were mostly acknowledged by ACKs arriving in bursts is "Intensive flow", one whose ACKs came
    at the link's pace is "Full window" (the paper's descriptions); ``pattern_fct_rule`` keeps the
    30 ms FCT rule for comparison, and ``paper_pattern`` applies :func:`paper_patterns` (lossy = a
    timeout) as Table 3 does.

    Parameters
    ----------
    path : str or Path
        A capture file (pcap or pcapng, optionally gzip-compressed); trace warnings are silenced.
    link_rate_bps : float
        The sender's host link rate (P1: 100 Mbit/s), the pace a "Full window" flow's ACKs follow. [bit/s]

    Returns
    -------
    pandas.DataFrame
        One row per 70 KB flow, the columns of :func:`tcpmodels.traces.patterns.classify_short_flows`
        (``pattern``, ``pattern_fct_rule``, ``fct_s``, ``ack_burst_share``, ...) and ``paper_pattern``.
    """
    import warnings

    from tcpmodels.traces import TraceWarning, read_pcap
    from tcpmodels.traces.patterns import classify_short_flows

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TraceWarning)
        packets = read_pcap(path)
    out = classify_short_flows(packets, split="ack_clock", link_rate_bps=link_rate_bps)
    out["paper_pattern"] = paper_patterns(out)
    return out


def split_comparison(live: pd.DataFrame) -> pd.DataFrame:
    """Loss-free flows of :func:`classify_capture`: the ACK-clock pattern against the FCT rule's, with the
    flows' median FCT [ms] and median share of bytes acknowledged in bursts.

    Parameters
    ----------
    live : pandas.DataFrame
        :func:`classify_capture`'s result.

    Returns
    -------
    pandas.DataFrame
        One row per (``pattern``, ``pattern_fct_rule``) pair among "Full window" / "Intensive flow":
        ``flows``, ``median_fct_ms`` [ms], ``median_ack_burst_share`` [-], ``median_flights``.
    """
    free = live[live["pattern"].isin(["Full window", "Intensive flow"])]
    g = free.groupby(["pattern", "pattern_fct_rule"], observed=True)
    return pd.DataFrame({"flows": g.size(), "median_fct_ms": g["fct_s"].median() * 1e3,
                         "median_ack_burst_share": g["ack_burst_share"].median(),
                         "median_flights": g["flights"].median()}).reset_index()
