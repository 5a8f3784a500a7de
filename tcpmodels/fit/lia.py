r"""The RFC 6356 (LIA) counterfactual for a captured MPTCP connection.

Linux's MPTCP runs an ordinary, *uncoupled* congestion control on every subflow
(Reno, CUBIC, BBR; it has no LIA). Given what each subflow experienced — its
loss-event rate and RTT, estimated from the capture — :func:`lia_counterfactual`
puts beside the kernel's actual per-subflow rates what LIA would have allocated on
the same paths (:func:`tcpmodels.models.mptcp.lia_equilibrium`, loss taken as
independent of the flow's own rate, which holds for random loss) and what uncoupled
Reno would get by the square-root law. :func:`lia_series` evaluates LIA's alpha and
per-ACK increase on the kernel's own window trajectory.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from tcpmodels.models.mptcp import lia_alpha, lia_equilibrium

__all__ = ["lia_counterfactual", "lia_series"]


def lia_counterfactual(subflows: pd.DataFrame, *, mss_bytes: float | None = None,
                       window_constant: float = math.sqrt(1.5)) -> pd.DataFrame:
    """Per-subflow kernel rates beside the LIA allocation and uncoupled TCP for the same paths.

    Parameters
    ----------
    subflows : pandas.DataFrame
        One row per subflow: ``loss_event_rate`` [-], ``rtt_mean_s`` [s],
        ``throughput_bps`` [bit/s] (measured), ``mss_bytes`` [bytes]; optional
        ``cwnd_mean_segments`` (TCP_INFO) [segments].
    mss_bytes : float, optional
        Packet size for the rates; default the subflows' median ``mss_bytes``. [bytes]
    window_constant : float
        k in TCP's window ``k / sqrt(p)``; default ``sqrt(3/2)`` (Mathis, periodic loss,
        one ACK per segment — Linux's byte counting). [-]

    Returns
    -------
    pandas.DataFrame
        The input columns plus ``lia_window_segments``, ``lia_rate_bps``,
        ``uncoupled_window_segments``, ``uncoupled_rate_bps``, ``lia_coupled`` (bool),
        ``lia_over_uncoupled`` (LIA's rate as a share of uncoupled TCP's on the path) [-],
        ``kernel_times_lia_share_bps`` (the kernel's measured rate scaled by that share: LIA's
        allocation at the efficiency the kernel showed on the path) [bit/s], and a final
        ``total`` row (sums of the rates; ``lia_alpha`` in its column).

    Raises
    ------
    ValueError
        If a subflow has no positive loss-event rate or RTT (LIA's equilibrium needs both).
    """
    p = subflows["loss_event_rate"].to_numpy(float)
    r = subflows["rtt_mean_s"].to_numpy(float)
    if not (np.all(p > 0) and np.all(r > 0)):
        raise ValueError(f"every subflow needs loss_event_rate > 0 and rtt_mean_s > 0 [s]; got p={p.tolist()}, "
                         f"rtt={r.tolist()}")
    mss = float(np.median(subflows["mss_bytes"])) if mss_bytes is None else float(mss_bytes)
    eq = lia_equilibrium(r, p, mss_bytes=mss, window_constant=window_constant)
    out = subflows.copy()
    out["lia_window_segments"] = eq.windows_segments
    out["lia_rate_bps"] = eq.rates_bps
    out["uncoupled_window_segments"] = eq.uncoupled_windows_segments
    out["uncoupled_rate_bps"] = eq.uncoupled_rates_bps
    out["lia_coupled"] = eq.coupled
    # LIA's allocation relative to uncoupled TCP on each path, applied to what the kernel achieved there
    out["lia_over_uncoupled"] = out["lia_rate_bps"] / out["uncoupled_rate_bps"]
    out["kernel_times_lia_share_bps"] = out["throughput_bps"] * out["lia_over_uncoupled"]
    total = {c: out[c].sum() for c in ("throughput_bps", "lia_rate_bps", "uncoupled_rate_bps",
                                       "kernel_times_lia_share_bps") if c in out}
    total["lia_alpha"] = eq.alpha
    total["best_single_path_rate_bps"] = eq.best_single_path_rate_bps
    out = pd.concat([out, pd.DataFrame([total], index=["total"])])
    return out


def lia_series(samples: pd.DataFrame) -> pd.DataFrame:
    """LIA's alpha and per-ACK increases evaluated on the kernel's per-subflow windows over time.

    Parameters
    ----------
    samples : pandas.DataFrame
        TCP_INFO samples of an MPTCP connection: ``t_s`` [s], ``subflow``, ``cwnd_segments``
        [segments], ``srtt_s`` [s] (several subflows per sample time).

    Returns
    -------
    pandas.DataFrame
        One row per sample time with every subflow present: ``t_s``, ``alpha`` [-], and per
        subflow i ``cwnd_i``, ``srtt_i``, ``lia_increase_i`` (``min(alpha / w_total, 1 / w_i)``)
        and ``reno_increase_i`` (``1 / w_i``, what the uncoupled kernel applies) [segments per ACK].
    """
    s = samples[(samples["cwnd_segments"] > 0) & (samples["srtt_s"] > 0)]
    w = s.pivot_table(index="t_s", columns="subflow", values="cwnd_segments", aggfunc="last").dropna()
    r = s.pivot_table(index="t_s", columns="subflow", values="srtt_s", aggfunc="last").reindex(w.index)
    out = pd.DataFrame(index=w.index)
    if w.shape[1] < 1 or len(w) == 0:
        return out.reset_index()
    alpha = lia_alpha(w.to_numpy(float), r.to_numpy(float))
    alpha = np.atleast_1d(alpha)
    out["alpha"] = alpha
    total = w.sum(axis=1).to_numpy(float)
    for col in w.columns:
        wi = w[col].to_numpy(float)
        out[f"cwnd_{col}"] = wi
        out[f"srtt_{col}"] = r[col].to_numpy(float)
        out[f"lia_increase_{col}"] = np.minimum(alpha / total, 1.0 / wi)
        out[f"reno_increase_{col}"] = 1.0 / wi
    return out.reset_index()
