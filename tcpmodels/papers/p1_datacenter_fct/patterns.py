"""P1 Table 3 (70 KB flow patterns) by the paper's descriptions, and the classification of a capture."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd

from tcpmodels.papers.p1_datacenter_fct.data import PAPER_TABLE3, PROTO_LABELS, P1Dataset, measured

__all__ = ["LOSS_WITHOUT_TIMEOUT", "paper_patterns", "table3", "classify_capture"]

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
    """
    retx = pd.to_numeric(flows["retransmitted_packets"], errors="coerce").fillna(0) > 0
    timeout = flows.get("timeout_gap_s", pd.Series(np.nan, index=flows.index)).notna()
    orig = flows["pattern"].astype(object)
    out = orig.where(~retx, LOSS_WITHOUT_TIMEOUT)
    out = out.where(~timeout, np.where(orig == "Extreme delay", "Extreme delay", "Delay with loss"))
    return out.where(orig.notna())


def table3(dataset: P1Dataset) -> pd.DataFrame:
    """Table 3: 70 KB flows per pattern (kernel captures), by background protocol, beside the paper's definitions.

    Patterns by :func:`paper_patterns` (lossy = a timeout, as the paper describes); the
    column ``capture_rule_count_<proto>`` gives the count under the capture's old rule (any
    retransmission is loss) for comparison.
    """
    f = measured(dataset.flows, "s4", "short")
    f = f[(f["engine"] == "kernel") & f["pattern"].notna()]
    f = f.assign(paper_pattern=paper_patterns(f))
    rows = []
    for pattern, (fct, loss) in [*PAPER_TABLE3.items(), (LOSS_WITHOUT_TIMEOUT, ("-", "yes, no timeout"))]:
        row = {"pattern": pattern, "paper_fct": fct, "paper_loss": loss}
        for proto in ("tcp", "mptcp"):
            g = f[f["protocol"] == proto]
            p = g[g["paper_pattern"] == pattern]
            row[f"{PROTO_LABELS[proto]}_bg_count"] = int(len(p))
            row[f"{PROTO_LABELS[proto]}_bg_share"] = len(p) / len(g) if len(g) else math.nan
            row[f"{PROTO_LABELS[proto]}_bg_median_fct_ms"] = float(p["fct_capture_s"].median() * 1e3) if len(p) else math.nan
            row[f"{PROTO_LABELS[proto]}_bg_capture_rule_count"] = int((g["pattern"] == pattern).sum())
        rows.append(row)
    out = pd.DataFrame(rows)
    for proto in ("TCP", "MPTCP"):
        n = f[f["protocol"] == proto.lower()]
        out.attrs[f"{proto}_classified"] = int(len(n))
    return out


def classify_capture(path: str | Path) -> pd.DataFrame:
    """Classify the 70 KB flows of a shipped capture into P1's patterns (:func:`tcpmodels.traces.classify_short_flows`)."""
    import warnings

    from tcpmodels.traces import TraceWarning, classify_short_flows, read_pcap

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TraceWarning)
        packets = read_pcap(path)
    return classify_short_flows(packets)
