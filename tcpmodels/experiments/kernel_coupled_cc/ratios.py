"""Ratios of paired runs, their intervals, and the tables the validation shows (goal ratios, OLIA loss events, LIA model)."""

from __future__ import annotations

import json
from collections.abc import Sequence

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from tcpmodels._docstrings import SharedEntries

__all__ = ["mean_ratio_ci", "pairs_to_decide", "reps_to_exclude", "ratio_table", "olia_loss_events", "clamped_snapshots", "lia_model_table", "goal_ratios", "disjoint_pairs"]

#: Parameters documented once for the docstrings of this module that share them.
_PARAMETERS = SharedEntries("""
    confidence : float
        Confidence level of the interval. [-]
    test, ref : array_like
        Positive values of the two variants, pair by pair (same unit).
    max_pairs : int
        Largest number of pairs considered. [-]
    coupled : sequence of str
        The coupled variants.
""")


@_PARAMETERS.fill
def mean_ratio_ci(test: ArrayLike, ref: ArrayLike, *, confidence: float = 0.95) -> dict:
    """Ratio of ``test`` to ``ref`` over paired (interleaved) repetitions with a t confidence interval.

    The ratio is the geometric mean of the per-pair ratios test_i / ref_i, its interval
    exp of scipy's one-sample t interval of the log-ratios (``ttest_1samp(...).confidence_interval``,
    i.e. mean +- t_{n-1} s / sqrt(n)).

    Parameters
    ----------
    {test, ref, confidence}

    Returns
    -------
    dict
        ``ratio``, ``ci_low``, ``ci_high`` [-], ``n_pairs`` and ``confidence``.
    """
    from scipy import stats

    a, b = np.asarray(test, dtype=float), np.asarray(ref, dtype=float)
    if a.shape != b.shape or a.size < 2 or (a <= 0).any() or (b <= 0).any():
        raise ValueError("need at least two positive pairs of equal length")
    d = np.log(a / b)
    if np.ptp(d) <= 1e-12 * float(np.abs(d).max()):  # equal ratios (up to rounding): the interval is the point
        lo = hi = float(d.mean())
    else:
        ci = stats.ttest_1samp(d, 0.0).confidence_interval(confidence)
        lo, hi = float(ci.low), float(ci.high)
    return {"ratio": float(np.exp(d.mean())), "ci_low": float(np.exp(lo)), "ci_high": float(np.exp(hi)),
            "n_pairs": int(d.size), "confidence": confidence}


@_PARAMETERS.fill
def pairs_to_decide(test: ArrayLike, ref: ArrayLike, tolerance: float, *, confidence: float = 0.95,
                    max_pairs: int = 100_000) -> int | None:
    """How many pairs in all would make the 95 % interval of the ratio decide "within 1 +- tolerance", if more pairs scattered as these do.

    With the mean m and the standard deviation s of the log-ratios of the pairs so far, the
    interval exp(m +- t_{n-1} s / sqrt(n)) decides once its half-width is below the distance
    of m from the nearer bound of [ln(1 - tolerance), ln(1 + tolerance)] (inside: ``met``,
    outside: ``contradicted``).

    Parameters
    ----------
    {test, ref}
    tolerance : float
        Allowed relative deviation from 1. [-]
    {confidence, max_pairs}

    Returns
    -------
    int or None
        The smallest number of pairs (at least the present one) that decides; ``None`` when
        ``max_pairs`` would not (m on a bound). [-]
    """
    d = np.log(np.asarray(test, dtype=float) / np.asarray(ref, dtype=float))
    if d.size < 2:
        raise ValueError("need at least two pairs")
    m, sd = float(d.mean()), float(d.std(ddof=1))
    margin = min(abs(m - np.log(1 + tolerance)), abs(m - np.log(1 - tolerance)))
    return _first_n_within(d.size, max_pairs, confidence, sd, margin)


def _first_n_within(n_min: int, n_max: int, confidence: float, sd: float, margin: float) -> int | None:
    """Smallest n in [n_min, n_max] with ``t_{n-1} sd / sqrt(n) < margin``; None if there is none.

    The same half-widths as over the whole range at once, in growing blocks from n_min up, stopping at
    the block that holds the first n (the whole range was up to 10^5 quantiles per call).
    """
    from scipy import stats

    start, block = n_min, 64
    while start <= n_max:
        n = np.arange(start, min(start + block, n_max + 1))
        ok = stats.t.ppf(0.5 + confidence / 2, n - 1) * sd / np.sqrt(n) < margin
        if ok.any():
            return int(n[np.argmax(ok)])
        start, block = start + block, block * 4
    return None


@_PARAMETERS.fill
def reps_to_exclude(test: ArrayLike, ref: ArrayLike, threshold: float, *, confidence: float = 0.95,
                    max_pairs: int = 100_000) -> int | None:
    """How many pairs in all would make the interval of :func:`mean_ratio_ci` exclude ``threshold``
    (so that a comparison with the threshold decides), if more pairs scattered as these do.

    Parameters
    ----------
    test, ref : array_like
        Positive values, pair by pair (same unit).
    threshold : float
        The ratio the interval is to exclude. [-]
    {confidence, max_pairs}

    Returns
    -------
    int or None
        The smallest number of pairs (at least the present one) whose interval half-width, on the
        log scale, is below the distance of the mean log-ratio from ``ln(threshold)``; ``None`` if
        ``max_pairs`` would not do. [-]
    """
    d = np.log(np.asarray(test, dtype=float) / np.asarray(ref, dtype=float))
    if d.size < 2:
        raise ValueError("need at least two pairs")
    margin = abs(float(d.mean()) - np.log(threshold))
    return _first_n_within(d.size, max_pairs, confidence, float(d.std(ddof=1)), margin)


def ratio_table(runs: pd.DataFrame) -> pd.DataFrame:
    """MPTCP rate / TCP rate per variant over runs, as :func:`mean_ratio_ci` (variants with fewer
    than two runs are left out).

    Parameters
    ----------
    runs : pandas.DataFrame
        One row per run with ``variant``, ``rate_bps`` and ``tcp_rate_bps`` [bit/s].

    Returns
    -------
    pandas.DataFrame
        Indexed by variant: ``ratio``, ``ci_low``, ``ci_high`` [-], ``n_pairs``, ``confidence``.
    """
    out = {v: mean_ratio_ci(g["rate_bps"], g["tcp_rate_bps"]) for v, g in runs.groupby("variant") if len(g) >= 2}
    return pd.DataFrame(out).T


def olia_loss_events(rows: pd.DataFrame) -> pd.DataFrame:
    """Delivered segments per loss event of each subflow in the tm_olia snapshots.

    Parameters
    ----------
    rows : pandas.DataFrame
        Dataset rows; those of experiment ``olia_incr`` with the ``loss_events`` and
        ``delivered_at_last_loss_segments`` columns (JSON lists per snapshot) are used.

    Returns
    -------
    pandas.DataFrame
        One row per subflow and snapshot with at least one loss event: ``setting``, ``smaller``
        (the subflow's window is below the other's), ``cwnd_segments`` and
        ``segments_per_loss_event`` (tp->delivered at the last loss / loss events) [segments].
    """
    snap = rows[rows.experiment == "olia_incr"] if "experiment" in rows else rows.iloc[0:0]
    out = []
    if "loss_events" not in snap:
        return pd.DataFrame(out, columns=["setting", "smaller", "cwnd_segments", "segments_per_loss_event"])
    for _, r in snap.iterrows():
        if not isinstance(r["loss_events"], str):   # records read with the sequence counters: see timeout_table
            continue
        w, ev, dl = (json.loads(r[c]) for c in ("cwnd_segments", "loss_events", "delivered_at_last_loss_segments"))
        for k in range(len(w)):
            if ev[k] and dl[k]:
                out.append({"setting": r["setting"], "smaller": w[k] < max(w), "cwnd_segments": w[k],
                            "segments_per_loss_event": dl[k] / ev[k]})
    return pd.DataFrame(out, columns=["setting", "smaller", "cwnd_segments", "segments_per_loss_event"])


def clamped_snapshots(rows: pd.DataFrame) -> int:
    """How many map snapshots (LIA alpha and OLIA increase rows) show a window at the 0xffff clamp.

    Parameters
    ----------
    rows : pandas.DataFrame
        Dataset rows (``cwnd_segments`` a JSON list per snapshot).

    Returns
    -------
    int
        Snapshots with a slot at 65535 segments. [-]
    """
    if "experiment" not in rows:
        return 0
    snap = rows[rows.experiment.isin(["alpha", "olia_incr"])]
    return int(sum(65535 in json.loads(v) for v in snap["cwnd_segments"]))


def lia_model_table(*, rtt_s: float = 0.020, shared_loss: float = 0.005,
                    disjoint_losses: tuple[float, float] = (0.002, 0.02)) -> pd.DataFrame:
    """What the fluid model (:func:`tcpmodels.models.mptcp.lia_equilibrium`) predicts for the shared
    and disjoint experiments (defaults: their parameters), LIA beside uncoupled subflows.

    On the shared link the two subflows see the link's loss rate, taken as independent of the
    connection's own rate (the link is far from full: every flow is loss-limited).

    Parameters
    ----------
    rtt_s : float
        Round-trip time of every path. [s]
    shared_loss : float
        Loss rate of the shared link. [-]
    disjoint_losses : tuple of float
        Loss rates of the less and the more lossy disjoint path. [-]

    Returns
    -------
    pandas.DataFrame
        Indexed by ``model_lia`` and ``model_uncoupled``: ``ratio_mptcp_tcp`` (MPTCP rate / one TCP
        flow's on the shared link) and ``share_less_lossy`` (share of the rate on the less lossy
        disjoint path) [-].
    """
    from tcpmodels.models.mptcp import lia_equilibrium

    shared = lia_equilibrium([rtt_s, rtt_s], [shared_loss, shared_loss])
    disjoint = lia_equilibrium([rtt_s, rtt_s], list(disjoint_losses))
    unc = disjoint.uncoupled_rates_bps
    return pd.DataFrame({"ratio_mptcp_tcp": [shared.total_rate_bps / shared.uncoupled_rates_bps[0],
                                             shared.uncoupled_rates_bps.sum() / shared.uncoupled_rates_bps[0]],
                         "share_less_lossy": [disjoint.rates_bps[0] / disjoint.total_rate_bps, unc[0] / unc.sum()]},
                        index=pd.Index(["model_lia", "model_uncoupled"], name="variant"))


@_PARAMETERS.fill
def disjoint_pairs(rows: pd.DataFrame, coupled: Sequence[str], uncoupled: str) -> list[tuple[str, pd.DataFrame]]:
    """The disjoint-paths shares of each coupled variant beside the uncoupled one, repetition by repetition.

    Parameters
    ----------
    rows : pandas.DataFrame
        The dataset's rows (``experiment`` ``disjoint`` with ``rep``, ``variant``, ``share_less_lossy``).
    {coupled}
    uncoupled : str
        The uncoupled variant they are compared with.

    Returns
    -------
    list of (str, pandas.DataFrame)
        Per coupled variant with at least two repetitions that both variants ran: the variant and the shares
        on the less lossy path [-], one row per repetition, one column per variant.
    """
    dis = rows[rows.experiment == "disjoint"]
    if not len(dis):
        return []
    share = dis.pivot_table(index="rep", columns="variant", values="share_less_lossy")
    pairs = [(v, share[[v, uncoupled]].dropna()) for v in coupled if v in share and uncoupled in share]
    return [(v, pair) for v, pair in pairs if len(pair) >= 2]


@_PARAMETERS.fill
def goal_ratios(rows: pd.DataFrame, *, coupled: Sequence[str] = ("tm_lia", "tm_olia"),
                  uncoupled: str = "reno", harm_threshold: float = 1.5, tolerance: float = 0.02) -> dict:
    """The numbers behind LIA's goals (RFC 6356 Sec. 2): ratios with their 95 % intervals, and the goal-(c) errors.

    The verdicts are :func:`claims`' (through :class:`tcpmodels.stats.ClaimSpec`).

    Parameters
    ----------
    rows : pandas.DataFrame
        Dataset rows (experiments ``shared``, ``disjoint``, ``alpha``, ``olia_incr``).
    {coupled}
    uncoupled : str
        The uncoupled contrast (kernel reno on each subflow).
    harm_threshold : float
        MPTCP / TCP ratio separating "about one TCP flow's share" from "about two". [-]
    tolerance : float
        Allowed relative error of alpha and of OLIA's increase. [-]

    Returns
    -------
    dict
        Per check (``goal_a_<variant>``, ``goal_1_<variant>``, ``goal_b_<variant>``,
        ``goal_c_alpha_tm_lia``, ``goal_c_incr_tm_olia``): the ratio with its interval or the
        errors, ``n``, the threshold and (ratios) ``reps_to_decide``
        (:func:`reps_to_exclude`).
    """
    out: dict = {}
    if "experiment" not in rows:
        return out
    shared = rows[rows.experiment == "shared"]
    for v, g in shared.groupby("variant"):
        if len(g) < 2:
            continue
        ci = mean_ratio_ci(g["rate_bps"], g["tcp_rate_bps"])
        out[f"goal_a_{v}"] = {**ci, "threshold": harm_threshold, "claim": "below" if v in coupled else "above",
                              "reps_to_decide": reps_to_exclude(g["rate_bps"], g["tcp_rate_bps"], harm_threshold)}
        out[f"goal_1_{v}"] = {**ci, "threshold": 1.0, "claim": "above",
                              "reps_to_decide": reps_to_exclude(g["rate_bps"], g["tcp_rate_bps"], 1.0)}
    for v, pair in disjoint_pairs(rows, coupled, uncoupled):
        ci = mean_ratio_ci(pair[v], pair[uncoupled])
        out[f"goal_b_{v}"] = {**ci, "share_mean": float(pair[v].mean()),
                              "uncoupled_share_mean": float(pair[uncoupled].mean()), "threshold": 1.0,
                              "claim": "above", "reps_to_decide": reps_to_exclude(pair[v], pair[uncoupled], 1.0)}
    for exp, col, key in (("alpha", "alpha_rel_error", "goal_c_alpha_tm_lia"),
                          ("olia_incr", "incr_rel_error_of_terms", "goal_c_incr_tm_olia")):
        g = rows[rows.experiment == exp]
        if not len(g):
            continue
        checked = g[g["snapshot_method"] == "seqcount"] if "snapshot_method" in g else g.iloc[0:0]
        single = g.drop(checked.index)
        if len(checked):   # records read with the sequence counters: the test on the consistent ones
            ok = checked[checked["consistent"].astype(bool)]
            distinct = ok.drop_duplicates(["token", "slot", "seq"])
            e = distinct[col].astype(float).abs()
            out[key] = {"max": float(e.max()) if len(e) else np.nan, "median": float(e.median()) if len(e) else np.nan,
                        "n_snapshots": int(len(checked)), "n_consistent": int(len(ok)), "n_torn": int(len(checked) - len(ok)),
                        "n_distinct": int(len(distinct)), "within": float((e <= tolerance).mean()) if len(e) else np.nan,
                        "tolerance": tolerance, "method": "seqcount"}
        if len(single):    # earlier single reads of the entry (no consistency check)
            distinct = (single.drop_duplicates(["token", "acks"])
                        if {"token", "acks"} <= set(single) and single["token"].notna().all() else single)
            e = distinct[col].astype(float).abs()
            out[key + ("_single_read" if len(checked) else "")] = {
                "max": float(e.max()), "median": float(e.median()), "n_snapshots": int(len(single)),
                "n_distinct": int(len(distinct)), "within": float((e <= tolerance).mean()), "tolerance": tolerance}
    return out
