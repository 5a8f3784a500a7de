r"""Mathis and PFTK against measured flows: predictions, regimes, the fitted Mathis constant, error tables.

Everything here works on a *flow table*: one row per flow with the columns of
:class:`tcpmodels.fit.trace.FlowEstimates` (``loss_event_rate``, ``rtt_mean_s``,
``mss_bytes``, ``b``, ``t0_s``, ``t0_fallback_s``, ``w_max_segments``,
``flight_mean_segments``, ``timeouts``, ``loss_events``, ``throughput_bps``) and,
for the regime, the bottleneck goodput ``capacity_bps`` when known.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, fields
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd
from statsmodels.regression.linear_model import OLS  # not statsmodels.api: 1 s more to import
from statsmodels.tools.tools import add_constant

from tcpmodels._arrays import check_range
from tcpmodels._docstrings import SharedEntries
from tcpmodels.models.cubic import cubic_average_window_segments
from tcpmodels.models.throughput import (
    mathis_throughput_bps,
    padhye_approx_throughput_bps,
    padhye_throughput_bps,
    window_limited_throughput_bps,
)

__all__ = ["add_predictions", "classify_regime", "REGIMES", "MathisFit", "fit_mathis_c", "LossExponentFit",
           "fit_loss_exponent", "error_table", "MODELS"]

#: Parameters documented once for the docstrings of this module that share them.
_PARAMETERS = SharedEntries("""
    throughput_bps : array_like
        Measured rate of each flow. [bit/s]
""")

#: prediction columns added by :func:`add_predictions`, with a label for tables
MODELS = {
    "mathis_bps": "Mathis, C = sqrt(3/2) (b = 1)",
    "mathis_b_bps": "Mathis, C = sqrt(3/(2b)), measured b",
    "pftk_bps": "PFTK full (eq. 31), measured b, T0, W_max",
    "pftk_approx_bps": "PFTK approx. (eq. 32)",
    "pftk_b1_bps": "PFTK full with b = 1 (Linux counts bytes acked)",
    "cubic_rfc_bps": "CUBIC response function (RFC 9438 eq. 5, Reno-friendly floor)",
}

#: regimes of :func:`classify_regime`, in the order they are tested
REGIMES = ("no loss", "window-limited", "few loss events", "timeouts", "small window", "link-limited",
           "congestion avoidance")


def add_predictions(flows: pd.DataFrame) -> pd.DataFrame:
    """Model predictions for every flow from its own estimated inputs (rows without loss get NaN).

    Parameters
    ----------
    flows : pandas.DataFrame
        Flow table (see the module docstring).

    Returns
    -------
    pandas.DataFrame
        A copy with the columns of :data:`MODELS` [bit/s], ``window_ceiling_bps`` (W_max / RTT)
        [bit/s], ``t0_used_s`` [s] (observed T0, else the Linux floor) and ``ratio_<model>``
        (prediction / measured throughput) [-].
    """
    df = flows.copy()
    p = df["loss_event_rate"].where(df["loss_event_rate"] > 0)
    rtt = df["rtt_mean_s"].where(df["rtt_mean_s"] > 0)
    mss = df["mss_bytes"]
    b = df["b"].clip(lower=1.0)
    t0 = df["t0_s"].fillna(df["t0_fallback_s"])
    wmax = df["w_max_segments"].clip(lower=1.0)
    df["t0_used_s"] = t0
    df["mathis_bps"] = mathis_throughput_bps(mss, rtt, p, b=1.0)
    df["mathis_b_bps"] = mathis_throughput_bps(mss, rtt, p, b=b)
    pp = p.where(p < 1)
    df["pftk_bps"] = padhye_throughput_bps(mss, rtt, pp, t0, wmax, b=b)
    df["pftk_approx_bps"] = padhye_approx_throughput_bps(mss, rtt, pp, t0, wmax, b=b)
    df["pftk_b1_bps"] = padhye_throughput_bps(mss, rtt, pp, t0, wmax, b=1.0)
    df["cubic_rfc_bps"] = np.minimum(cubic_average_window_segments(pp, rtt) * mss * 8.0 / rtt,
                                     window_limited_throughput_bps(wmax * mss, rtt))
    df["window_ceiling_bps"] = window_limited_throughput_bps(df["w_max_segments"] * mss, rtt)
    for m in MODELS:
        df[f"ratio_{m}"] = df[m] / df["throughput_bps"]
    return df


def classify_regime(flows: pd.DataFrame, *, window_share: float = 0.8, min_events: int = 5,
                    timeout_share: float = 0.1, small_window_segments: float = 8.0,
                    link_share: float = 0.85) -> pd.Series:
    """Which assumption of the square-root law a flow is closest to breaking.

    Tested in order (first match wins):

    1. ``no loss``: no loss event in the steady window (the models have no p);
    2. ``window-limited``: mean flight >= ``window_share`` x W_max, or the rate
       >= ``window_share`` x W_max / RTT (PFTK's second branch, Mathis has no ceiling);
    3. ``few loss events``: fewer than ``min_events`` loss events in the steady window: no
       steady-state sawtooth (long RTT and low loss: one or two teeth in the run), and
       p is known only to within a factor of about two;
    4. ``timeouts``: at least ``timeout_share`` of the loss events are timeouts
       (Mathis assumes none; PFTK models them);
    5. ``small window``: mean flight below ``small_window_segments`` (too few packets per
       window for three duplicate ACKs; PFTK's Q-hat near 1);
    6. ``link-limited``: the rate is at least ``link_share`` of the bottleneck goodput
       (``capacity_bps`` column): losses come from the buffer overflowing at the flow's
       own peak, periodic rather than random; the law still applies with the measured p;
    7. ``congestion avoidance``: the sawtooth the square-root law describes.

    Parameters
    ----------
    flows : pandas.DataFrame
        One row per flow with ``loss_events``, ``timeouts``, ``flight_mean_segments``,
        ``w_max_segments``, ``mss_bytes``, ``rtt_mean_s``, ``throughput_bps`` and optionally
        ``capacity_bps`` (without it no flow is link-limited).
    window_share : float
        Share of the window ceiling from which a flow counts as window-limited, in (0, 1]. [-]
    min_events : int
        Fewest loss events for a sawtooth.
    timeout_share : float
        Share of the loss events (at least one) that makes a flow timeout-dominated. [-]
    small_window_segments : float
        Mean flight below which the window is small. [segments]
    link_share : float
        Share of ``capacity_bps`` from which a flow is link-limited. [-]

    Returns
    -------
    pandas.Series
        Regime label per row (categorical in :data:`REGIMES` order).

    Raises
    ------
    ValueError
        If ``window_share`` is not in (0, 1].
    """
    check_range("window_share", window_share, unit="-", low=0.0, high=1.0, low_open=True)
    f = flows
    cap = f["capacity_bps"] if "capacity_bps" in f else pd.Series(np.inf, index=f.index)
    ceiling = f["w_max_segments"] * f["mss_bytes"] * 8.0 / f["rtt_mean_s"]
    conds = [
        ~(f["loss_events"] > 0),
        (f["flight_mean_segments"] >= window_share * f["w_max_segments"]) | (f["throughput_bps"] >= window_share * ceiling),
        f["loss_events"] < min_events,
        f["timeouts"] >= np.maximum(1, timeout_share * f["loss_events"]),
        f["flight_mean_segments"] < small_window_segments,
        f["throughput_bps"] >= link_share * cap,
    ]
    out = np.select([c.fillna(False).to_numpy(bool) for c in conds], list(REGIMES[:6]), default=REGIMES[6])
    return pd.Series(pd.Categorical(out, categories=list(REGIMES), ordered=True), index=f.index, name="regime")


@dataclass(frozen=True, kw_only=True)
class MathisFit:
    """The Mathis constant C fitted to measured flows: ``B = (MSS / RTT) C / sqrt(p)``.

    Attributes
    ----------
    c : float
        Estimate, ``exp(mean(log(B RTT sqrt(p) / (8 MSS))))`` (least squares on the log scale). [-]
    c_se : float
        Standard error by the delta method, ``c * se(log c)``. [-]
    ci : tuple of float
        Confidence interval (t distribution on the log scale, mapped back). [-]
    confidence_level : float
    n : int
        Flows used.
    log_residual_sd : float
        Spread of ``log(B / prediction)``: a typical prediction error factor is ``exp`` of it. [-]
    per_flow_c : numpy.ndarray
        ``B RTT sqrt(p) / (8 MSS)`` of each flow (B in bit/s, MSS in bytes). [-]
    """

    c: float
    c_se: float
    ci: tuple
    confidence_level: float
    n: int
    log_residual_sd: float
    per_flow_c: np.ndarray = field(repr=False, compare=False)

    def confidence_interval(self, confidence_level: float | None = None) -> tuple:
        """Interval at ``confidence_level`` (default the fitted one).

        Parameters
        ----------
        confidence_level : float, optional
            Level of the interval, in (0, 1); the fitted level if omitted. [-]

        Returns
        -------
        tuple of float
            ``(low, high)`` of C: the stored interval at the fitted level, otherwise the
            t interval recomputed from :attr:`per_flow_c`. [-]
        """
        level = self.confidence_level if confidence_level is None else confidence_level
        if level == self.confidence_level:
            return self.ci
        return _c_interval(np.log(self.per_flow_c), level)

    def to_dict(self) -> dict[str, Any]:
        """Every field but the per-flow array.

        Returns
        -------
        dict
            Field name -> value, all but ``per_flow_c``.
        """
        return {f.name: getattr(self, f.name) for f in fields(self) if f.name != "per_flow_c"}


def _c_interval(logc: np.ndarray, level: float) -> tuple:
    res = OLS(logc, np.ones((len(logc), 1))).fit()
    lo, hi = res.conf_int(alpha=1.0 - level)[0]
    return float(np.exp(lo)), float(np.exp(hi))


@_PARAMETERS.fill
def fit_mathis_c(throughput_bps: npt.ArrayLike, mss_bytes: npt.ArrayLike, rtt_s: npt.ArrayLike,
                 loss_rate: npt.ArrayLike, *, confidence_level: float = 0.95) -> MathisFit:
    r"""Fit the constant C of the square-root law to measured throughputs.

    Parameters
    ----------
    {throughput_bps}
    mss_bytes : array_like
        Segment size. [bytes]
    rtt_s : array_like
        Round-trip time. [s]
    loss_rate : array_like
        Loss-event rate p. [-]
    confidence_level : float
        Of the interval. [-]

    Returns
    -------
    MathisFit

    Raises
    ------
    ValueError
        With fewer than two finite flows, or inputs out of range.

    Notes
    -----
    With :math:`y_i = \log(B_i\, RTT_i \sqrt{p_i} / (8\, MSS_i))` the least-squares
    estimate of :math:`\log C` is the mean of :math:`y_i` (OLS on a constant,
    :mod:`statsmodels`), and the interval is the t interval of that mean.

    References
    ----------
    .. [1] M. Mathis, J. Semke, J. Mahdavi, T. Ott, ACM SIGCOMM CCR 27(3), 1997 (C = 1.22
       periodic loss, 1.31 random loss; 0.87 and 0.93 with delayed ACKs, Table 1).

    Examples
    --------
    >>> f = fit_mathis_c([1e6, 2e6], [1448, 1448], [0.1, 0.05], [0.01387, 0.01387])
    >>> round(f.c, 2)
    1.02
    """
    b = np.asarray(throughput_bps, dtype=float).ravel()
    mss, rtt, p = (np.broadcast_to(np.asarray(x, dtype=float), b.shape) for x in (mss_bytes, rtt_s, loss_rate))
    check_range("throughput_bps", b, unit="bit/s", low=0.0, low_open=True)
    check_range("mss_bytes", mss, unit="bytes", low=0.0, low_open=True)
    check_range("rtt_s", rtt, unit="s", low=0.0, low_open=True)
    check_range("loss_rate", p, unit="-", low=0.0, high=1.0, low_open=True)
    per = b * rtt * np.sqrt(p) / (8.0 * mss)
    per = per[np.isfinite(per)]
    if len(per) < 2:
        raise ValueError(f"need at least two flows with finite throughput, RTT and loss rate; got {len(per)}")
    logc = np.log(per)
    res = OLS(logc, np.ones((len(logc), 1))).fit()
    c = float(np.exp(res.params[0]))
    return MathisFit(c=c, c_se=float(c * res.bse[0]), ci=_c_interval(logc, confidence_level),
                     confidence_level=confidence_level, n=int(len(per)), log_residual_sd=float(np.std(logc, ddof=1)),
                     per_flow_c=per)


@dataclass(frozen=True, kw_only=True)
class LossExponentFit:
    """``log(B RTT / (8 MSS)) = a + k log p``: the square-root law says ``k = -1/2``.

    Attributes
    ----------
    exponent, exponent_se : float
        k and its standard error. [-]
    exponent_ci : tuple of float
    c_at_fit : float
        ``exp(a)``, the constant that goes with the free exponent. [-]
    n : int
    r_squared : float
    """

    exponent: float
    exponent_se: float
    exponent_ci: tuple
    c_at_fit: float
    n: int
    r_squared: float

    def to_dict(self) -> dict[str, Any]:
        """Every field.

        Returns
        -------
        dict
            Field name -> value.
        """
        return {f.name: getattr(self, f.name) for f in fields(self)}


@_PARAMETERS.fill
def fit_loss_exponent(throughput_bps: npt.ArrayLike, mss_bytes: npt.ArrayLike, rtt_s: npt.ArrayLike,
                      loss_rate: npt.ArrayLike, *, confidence_level: float = 0.95) -> LossExponentFit:
    """Regress the window ``B RTT / (8 MSS)`` on p in log-log (OLS, :mod:`statsmodels`).

    Parameters
    ----------
    {throughput_bps}
    mss_bytes : array_like
        Segment size, broadcast to ``throughput_bps``. [bytes]
    rtt_s : array_like
        Round-trip time, broadcast likewise. [s]
    loss_rate : array_like
        Loss-event rate p, broadcast likewise. [-]
    confidence_level : float
        Of the exponent's interval. [-]

    Returns
    -------
    LossExponentFit
        The exponent k with its standard error and t interval, ``exp(a)``, the flows
        used and R^2. Flows with a non-finite logarithm (zero loss, say) are left out;
        inputs are not range-checked.

    Raises
    ------
    ValueError
        With fewer than three finite flows.
    """
    b = np.asarray(throughput_bps, dtype=float).ravel()
    mss, rtt, p = (np.broadcast_to(np.asarray(x, dtype=float), b.shape) for x in (mss_bytes, rtt_s, loss_rate))
    y = np.log(b * rtt / (8.0 * mss))
    x = np.log(p)
    ok = np.isfinite(x) & np.isfinite(y)
    if ok.sum() < 3:
        raise ValueError(f"need at least three flows with finite rate, RTT and loss rate; got {int(ok.sum())}")
    res = OLS(y[ok], add_constant(x[ok])).fit()
    lo, hi = res.conf_int(alpha=1.0 - confidence_level)[1]
    return LossExponentFit(exponent=float(res.params[1]), exponent_se=float(res.bse[1]),
                           exponent_ci=(float(lo), float(hi)), c_at_fit=float(np.exp(res.params[0])),
                           n=int(ok.sum()), r_squared=float(res.rsquared))


def error_table(flows: pd.DataFrame, models: Iterable[str] | None = None,
                by: Sequence[str] = ("cc", "regime")) -> pd.DataFrame:
    """Prediction error of each model, grouped (e.g. by congestion control and regime).

    Parameters
    ----------
    flows : pandas.DataFrame
        Output of :func:`add_predictions` with a ``regime`` column (and the ``by`` columns).
    models : list of str, optional
        Prediction columns; default all of :data:`MODELS`.
    by : sequence of str
        Grouping columns.

    Returns
    -------
    pandas.DataFrame
        Per group and model: ``n``, ``median_ratio`` and ``geo_mean_ratio`` (prediction /
        measured) [-], ``median_abs_error`` (median of ``|pred - meas| / meas``) [-],
        ``within_factor_2`` (share of flows with 0.5 <= ratio <= 2) [-].
    """
    models = list(MODELS) if models is None else list(models)
    rows = []
    for key, g in flows.groupby(list(by), observed=True):
        key = key if isinstance(key, tuple) else (key,)
        for m in models:
            r = (g[m] / g["throughput_bps"]).replace([np.inf, -np.inf], np.nan).dropna()
            r = r[r > 0]
            if r.empty:
                continue
            rows.append({**dict(zip(by, key)), "model": m, "n": int(len(r)), "median_ratio": float(r.median()),
                         "geo_mean_ratio": float(np.exp(np.log(r).mean())),
                         "median_abs_error": float((r - 1).abs().median()),
                         "within_factor_2": float(((r >= 0.5) & (r <= 2)).mean())})
    return pd.DataFrame(rows)
