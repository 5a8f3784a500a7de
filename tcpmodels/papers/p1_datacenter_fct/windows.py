"""P1's implausible kernel windows and ns-3's measured ones, for the mechanism table (issue 57, item 2).

A few background subflows of the ``tm_lia`` / ``tm_olia`` runs report TCP_INFO windows of millions of
segments. The rule, fixed here: a subflow's mean window is implausible when it exceeds
:data:`IMPLAUSIBLE_WINDOW_FACTOR` (10) times the window its own throughput and mean RTT imply
(``throughput_bps x rtt_mean_s / 8 / mss_bytes``); every TCP and uncoupled MPTCP subflow of the dataset
stays below 4.5 times. Such rows are left out of the mechanism table
(:func:`tcpmodels.papers.p1_datacenter_fct.background_table`); the FCT and loss verdicts never used them.
:func:`window_note` says how many, where, under which code and what the samples show.
The shipped ns-3 runs kept delivered bytes only; traced reruns of some seeds
(``p1_ns3_windows.parquet``, :mod:`tcpmodels.experiments.p1.ns3_windows`) fill the ns-3 rows
(:func:`with_ns3_windows`).
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from tcpmodels.datasets.p1_ns3_windows import KEY, MEASURED, SCHEMA

__all__ = ["IMPLAUSIBLE_WINDOW_FACTOR", "TM_WINDOW_MAX", "KERNEL_CC_FIX", "RUN_COMMITS_WITH_FIX",
           "implied_window_ratio", "implausible_windows", "plausible_subflows", "window_note", "with_ns3_windows"]

#: a subflow's mean TCP_INFO window above this many times the window its throughput and RTT imply is
#: implausible (every TCP and uncoupled MPTCP subflow of the P1 dataset: at most 4.5). [-]
IMPLAUSIBLE_WINDOW_FACTOR = 10.0
#: the coupled controls' bound on a window (``TM_WINDOW_MAX`` of ``tcpmodels/testbed/kernel_cc/tm_bpf.h``). [segments]
TM_WINDOW_MAX = 65535
#: the issue-15 fix of the coupled controls' windows: commit, its time (tm_bpf.h tm_fix_cwnd / tm_plausible_cwnd,
#: the diagnostic maps), and the follow-up that also resets at a change of CA state (``f38818f``)
KERNEL_CC_FIX = ("1f257d2", "2026-11-25T03:59:17+00:00")
#: whether the code of each commit that ran P1's coupled kernel runs contains :data:`KERNEL_CC_FIX` (checked with
#: ``git merge-base --is-ancestor 1f257d2 <commit>`` on 2026-12-06; the runs table names the commit of each run)
RUN_COMMITS_WITH_FIX = {"17f43e0": False, "33a2de2": True, "c9db8c2": True, "2a501a1": True}


def implied_window_ratio(subflows: pd.DataFrame) -> pd.Series:
    """Each subflow's mean window over the window its throughput and mean RTT imply. [-]

    Parameters
    ----------
    subflows : pandas.DataFrame
        ``cwnd_mean_segments``, ``mss_bytes`` [bytes], ``rtt_mean_s`` [s], ``throughput_bps`` [bit/s].

    Returns
    -------
    pandas.Series
        ``cwnd_mean_segments x mss_bytes x 8 / rtt_mean_s / throughput_bps``; NaN where a field is missing
        or not positive.
    """
    num = subflows["cwnd_mean_segments"] * subflows["mss_bytes"] * 8
    den = subflows["rtt_mean_s"] * subflows["throughput_bps"]
    return (num / den.where(den > 0)).astype(float)


def implausible_windows(subflows: pd.DataFrame, factor: float = IMPLAUSIBLE_WINDOW_FACTOR) -> pd.Series:
    """Whether each subflow's mean TCP_INFO window is implausible (the rule of the module docstring).

    Parameters
    ----------
    subflows : pandas.DataFrame
        As for :func:`implied_window_ratio`.
    factor : float
        :data:`IMPLAUSIBLE_WINDOW_FACTOR`. [-]

    Returns
    -------
    pandas.Series of bool
        True where the ratio exceeds ``factor``; False where it cannot be computed (e.g. ns-3 rows
        without RTT).
    """
    if not factor > 1:
        raise ValueError(f"factor [-] must be > 1; got {factor}")
    return (implied_window_ratio(subflows) > factor).fillna(False).astype(bool)


def plausible_subflows(subflows: pd.DataFrame) -> pd.DataFrame:
    """The subflow rows without an implausible window (:func:`implausible_windows`).

    Parameters
    ----------
    subflows : pandas.DataFrame
        The dataset's subflow table.

    Returns
    -------
    pandas.DataFrame
        The rows kept; ``attrs["implausible_rows"]`` counts those left out.
    """
    if subflows.empty or "cwnd_mean_segments" not in subflows:
        return subflows
    bad = implausible_windows(subflows) if {"mss_bytes", "rtt_mean_s", "throughput_bps"} <= set(subflows) \
        else pd.Series(False, index=subflows.index)
    out = subflows[~bad]
    out.attrs["implausible_rows"] = int(bad.sum())
    return out


def window_note(subflows: pd.DataFrame, runs: pd.DataFrame, tcpinfo: pd.DataFrame) -> str:
    """The paragraph on the implausible windows: how many, where, under which code, what the samples show.

    Parameters
    ----------
    subflows, runs, tcpinfo : pandas.DataFrame
        The P1 dataset's tables (``P1Dataset``).

    Returns
    -------
    str
        Markdown.
    """
    kern = subflows[subflows["engine"] != "ns3"]
    ratio = implied_window_ratio(kern)
    bad = implausible_windows(kern)
    ref = ratio[kern["cc"] == "uncoupled"]
    flagged = kern[bad].merge(runs[["engine", "experiment", "protocol", "cc", "seed", "git_commit"]],
                              on=["engine", "experiment", "protocol", "cc", "seed"], how="left")
    coupled = kern[kern["cc"].isin(["tm_lia", "tm_olia"])].merge(
        runs[["engine", "experiment", "protocol", "cc", "seed", "git_commit"]],
        on=["engine", "experiment", "protocol", "cc", "seed"], how="left")
    coupled = coupled.assign(bad=implausible_windows(coupled), short=coupled["git_commit"].str[:7])
    coupled = coupled.assign(fixed=coupled["short"].map(RUN_COMMITS_WITH_FIX))
    by_fix = coupled.groupby("fixed")["bad"].agg(["sum", "size"])
    big = tcpinfo[tcpinfo["cwnd_segments"] > TM_WINDOW_MAX]
    states = big["ca_state"].value_counts().sort_index()
    state_names = {0: "Open", 1: "Disorder", 2: "CWR", 3: "Recovery", 4: "Loss"}
    fix_text = "; ".join(f"{int(r['sum'])} of {int(r['size'])} coupled subflows in runs of code "
                         f"{'with' if k else 'without'} the fix" for k, r in by_fix.iterrows())
    return (
        f"**Implausible windows, left out of this table.** {int(bad.sum())} of {len(kern)} kernel background subflows "
        f"({', '.join(f'{n} {cc}' for cc, n in flagged['cc'].value_counts().sort_index().items())}) report a mean "
        f"TCP_INFO window of {flagged['cwnd_mean_segments'].min():.0f} to {flagged['cwnd_mean_segments'].max():.3g} "
        f"segments while carrying {flagged['throughput_bps'].min() / 1e6:.0f}-{flagged['throughput_bps'].max() / 1e6:.0f} "
        f"Mbit/s at {flagged['rtt_mean_s'].min() * 1e3:.1f}-{flagged['rtt_mean_s'].max() * 1e3:.1f} ms: "
        f"{ratio[bad].min():.0f} to {ratio[bad].max():.3g} times the window their rate and RTT imply (every TCP and "
        f"uncoupled subflow: at most {ref.max():.1f} times). The rule, fixed before looking at its effect on any "
        f"verdict: a subflow is left out when its mean window exceeds {IMPLAUSIBLE_WINDOW_FACTOR:g} times that window. "
        f"Why they occur: the kept TCP_INFO samples above the controls' bound ({TM_WINDOW_MAX} segments) are "
        f"{len(big)}, in CA state "
        f"{', '.join(f'{state_names.get(int(s), s)} ({n})' for s, n in states.items())}, with slow-start thresholds "
        f"as large (e.g. {int(big['ssthresh_segments'].mode().iloc[0]) if len(big) else 0}): the kernel, not the "
        "control, sets the window in CWR and Recovery (PRR, then cwnd = ssthresh at the end of the reduction), so a "
        "threshold that grew past any link's capacity becomes the window. The issue-15 fix (commit "
        f"{KERNEL_CC_FIX[0]}, {KERNEL_CC_FIX[1][:10]}) resets such windows only when the control is called; "
        f"{fix_text}: the fix did not remove them. The P1 records keep no diagnostic counters, so how often its reset "
        "fired in these runs is unknown. The FCT and loss verdicts never used the windows.")


def with_ns3_windows(subflows: pd.DataFrame, data_dir: str | Path) -> pd.DataFrame:
    """The subflow table with the windows and losses of the traced ns-3 reruns filled in, where there are some.

    Parameters
    ----------
    subflows : pandas.DataFrame
        The dataset's subflow table (with ``cc``).
    data_dir : str or Path
        The ``data`` folder or its ``datasets`` folder (``p1_ns3_windows.parquet``,
        :mod:`tcpmodels.datasets.p1_ns3_windows`; its absence changes nothing).

    Returns
    -------
    pandas.DataFrame
        ``subflows`` with ``cwnd_mean_segments``, ``loss_events``, ``segments_sent`` and ``loss_event_rate`` of
        the ns-3 rows the reruns cover (same run and subflow).
    """
    if subflows.empty or not SCHEMA.present(data_dir, ("",)):
        return subflows
    w = SCHEMA.read(data_dir, ("",))[""]
    merged = subflows.merge(w[[*KEY, *MEASURED]], on=list(KEY), how="left", suffixes=("", "_ns3"))
    for c in MEASURED:
        merged[c] = merged[f"{c}_ns3"].where(merged[f"{c}_ns3"].notna(), merged[c])
    return merged.drop(columns=[f"{c}_ns3" for c in MEASURED])
