r"""CUBIC from a window trajectory: loss epochs, reduction factor, regrowth time, fitted C and beta_cubic.

Input is a sampled congestion window (``TCP_INFO`` cwnd and ssthresh at a fixed
interval, or any series with the same meaning). An *epoch* is the congestion-avoidance
stage between two window reductions:

* a **reduction** is the first sample, after the current epoch has started, where
  ``ca_state`` enters CWR, Recovery or Loss, or ``ssthresh`` changes to below 95 % of
  the epoch's largest cwnd, or cwnd falls by more than 5 % from one sample to the next
  (Linux sets ``ssthresh = beta_cubic * cwnd`` when it enters recovery — often the same
  value as last time in a regular sawtooth, hence the other two signs; HyStart's exit
  sets ``ssthresh = cwnd`` without reducing and is not a reduction);
* ``w_prior`` is that largest cwnd (``W_max`` of RFC 9438 before fast convergence),
  and the observed reduction factor is ``beta_obs = ssthresh / w_prior``;
* the epoch **starts** at the first later sample in the Open state (``ca_state`` 0,
  recovery over, ``cwnd >= ssthresh``): Linux starts CUBIC's clock there
  (``epoch_start`` at the first ACK in congestion avoidance), RFC 9438 Sec. 4.2 ("t is
  the elapsed time from the beginning of the current congestion avoidance stage");
* it **ends** at the next reduction or the last sample;
* ``k_obs_s`` is the time from the start until cwnd first reaches ``w_prior`` again
  (NaN when the next loss comes first).

:func:`cubic_epoch_window_segments` is RFC 9438's window at time t of an epoch with
fast convergence (Sec. 4.7) and the Reno-friendly floor (Sec. 4.3);
:func:`fit_cubic` finds C and beta_cubic that best reproduce the observed windows of
all epochs at once (nonlinear least squares, relative residuals) with a bootstrap
over epochs for the confidence intervals.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd
from scipy.optimize import least_squares

from tcpmodels._arrays import check_range
from tcpmodels._docstrings import SharedEntries
from tcpmodels._typing import Numeric
from tcpmodels.models.cubic import (
    BETA_CUBIC,
    C_CUBIC,
    cubic_reno_friendly_window_segments,
    cubic_reno_friendly_window_unchecked,
    cubic_window_segments,
    cubic_window_unchecked,
)

__all__ = ["cwnd_epochs", "cubic_epoch_window_segments", "w_origin_segments", "CubicFit", "fit_cubic",
           "predicted_regrowth_s", "fit_epoch_k"]

#: Parameters documented once for the docstrings of this module that share them.
_PARAMETERS = SharedEntries("""
    c : float
        CUBIC constant. [segments/s^3]
    beta_cubic : float
        Fraction of the window kept. [-]
""")


def cwnd_epochs(t_s: npt.ArrayLike, cwnd_segments: npt.ArrayLike, ssthresh_segments: npt.ArrayLike,
                ca_state: npt.ArrayLike | None = None, srtt_s: npt.ArrayLike | None = None, *,
                min_reduction: float = 0.95) -> pd.DataFrame:
    """Detect loss epochs in a sampled congestion-window trajectory.

    Parameters
    ----------
    t_s : array_like
        Sample times, increasing. [s]
    cwnd_segments : array_like
        Congestion window at each sample. [segments]
    ssthresh_segments : array_like
        Slow-start threshold at each sample (Linux reports 2^31 - 1 before the first). [segments]
    ca_state : array_like of int, optional
        Linux ``tcpi_ca_state`` (0 Open, 1 Disorder, 2 CWR, 3 Recovery, 4 Loss); without
        it an epoch starts at the first sample with ``cwnd >= ssthresh`` after the reduction.
    srtt_s : array_like, optional
        Smoothed RTT at each sample; its mean over the epoch is reported. [s]
    min_reduction : float
        A reduction is detected when, after the current epoch has started, ssthresh
        changes to below this fraction of the epoch's largest cwnd, or ``ca_state``
        enters CWR/Recovery/Loss (2-4), or cwnd falls below this fraction of the
        previous sample's. [-]

    Returns
    -------
    pandas.DataFrame
        One row per reduction: ``loss_s`` (sample of the reduction), ``start_s``,
        ``end_s``, ``w_prior_segments``, ``ssthresh_segments``, ``beta_obs``,
        ``cwnd_start_segments``, ``min_cwnd_segments`` (smallest cwnd between loss and
        start; 1 after a timeout), ``after_timeout``, ``reached_s``, ``k_obs_s``,
        ``rtt_s``, ``n_samples``, ``first_index``, ``last_index`` (sample positions of the
        epoch, inclusive). Rows whose epoch never starts have NaN start.

    Examples
    --------
    >>> t = [0, 1, 2, 3, 4, 5]
    >>> ep = cwnd_epochs(t, [10, 20, 14, 16, 20, 22], [2**31 - 1] * 2 + [14] * 4)
    >>> ep[["loss_s", "start_s", "w_prior_segments", "beta_obs", "k_obs_s"]].values.tolist()
    [[2.0, 2.0, 20.0, 0.7, 2.0]]
    """
    t = np.asarray(t_s, dtype=float)
    w = np.asarray(cwnd_segments, dtype=float)
    ss = np.asarray(ssthresh_segments, dtype=float)
    if not (t.shape == w.shape == ss.shape) or t.ndim != 1:
        raise ValueError(f"t_s, cwnd_segments and ssthresh_segments must be 1-D of one length; got "
                         f"{t.shape}, {w.shape}, {ss.shape}")
    if np.any(np.diff(t) <= 0):
        raise ValueError("t_s [s] must be strictly increasing")
    check_range("cwnd_segments", w, unit="segments", low=0.0)
    st = np.zeros(t.shape, int) if ca_state is None else np.asarray(ca_state, dtype=int)
    rtt = np.full(t.shape, np.nan) if srtt_s is None else np.asarray(srtt_s, dtype=float)
    rows = []
    since = 0  # first sample of the current epoch (or of the flow)
    opened = True  # an Open sample with cwnd >= ssthresh seen since the last reduction (slow start counts)
    for i in range(1, len(t)):
        w_prior = float(np.max(w[since:i])) if i > since else float(w[i - 1])
        ss_red = ss[i] != ss[i - 1] and ss[i] < min_reduction * w_prior
        entered = ca_state is not None and st[i] in (2, 3, 4) and st[i - 1] in (0, 1)
        dropped = w[i] < min_reduction * w[i - 1] and w[i - 1] >= 4
        if opened and (ss_red or entered or dropped):
            rows.append({"loss_i": i, "w_prior_segments": w_prior})
            since = i
            opened = False
        elif not opened and st[i] == 0 and w[i] >= ss[i] - 1e-9 and ss[i] < rows[-1]["w_prior_segments"]:
            opened = True
            since = i
    out = []
    for n, r in enumerate(rows):
        i = r["loss_i"]
        nxt = rows[n + 1]["loss_i"] if n + 1 < len(rows) else len(t)
        open_ok = (st[i:nxt] == 0) & (w[i:nxt] >= ss[i:nxt] - 1e-9) & (ss[i:nxt] < r["w_prior_segments"])
        cand = np.flatnonzero(open_ok)
        ss_new = float(ss[i + int(cand[0])]) if len(cand) else float(ss[i])
        r["ssthresh_segments"] = ss_new
        rec = {"loss_s": t[i], "w_prior_segments": r["w_prior_segments"], "ssthresh_segments": ss_new,
               "beta_obs": ss_new / r["w_prior_segments"] if r["w_prior_segments"] > 0 else np.nan,
               "end_s": t[nxt - 1] if nxt - 1 >= i else t[i]}
        if len(cand) == 0:
            rec.update(start_s=np.nan, cwnd_start_segments=np.nan, min_cwnd_segments=float(np.min(w[i:nxt])),
                       after_timeout=False, reached_s=np.nan, k_obs_s=np.nan, rtt_s=np.nan, n_samples=0,
                       first_index=-1, last_index=-1)
            out.append(rec)
            continue
        s = i + int(cand[0])
        min_w = float(np.min(w[i:s + 1]))
        reach = np.flatnonzero(w[s:nxt] >= r["w_prior_segments"])
        reached = t[s + int(reach[0])] if len(reach) else np.nan
        rec.update(start_s=t[s], cwnd_start_segments=w[s], min_cwnd_segments=min_w,
                   after_timeout=bool(min_w <= 0.5 * r["ssthresh_segments"]), reached_s=reached,
                   k_obs_s=reached - t[s] if len(reach) else np.nan,
                   rtt_s=float(np.nanmean(rtt[s:nxt])) if np.isfinite(rtt[s:nxt]).any() else np.nan,
                   n_samples=int(nxt - s), first_index=int(s), last_index=int(nxt - 1))
        out.append(rec)
    cols = ["loss_s", "start_s", "end_s", "w_prior_segments", "ssthresh_segments", "beta_obs", "cwnd_start_segments",
            "min_cwnd_segments", "after_timeout", "reached_s", "k_obs_s", "rtt_s", "n_samples", "first_index",
            "last_index"]
    return pd.DataFrame(out, columns=cols)


def w_origin_segments(w_prior_segments: npt.ArrayLike, beta_cubic: float = BETA_CUBIC, *, fast_convergence: bool = True) -> np.ndarray:
    """The plateau ``W_max`` of each epoch's cubic curve, after fast convergence.

    Parameters
    ----------
    w_prior_segments : array_like
        Window before each reduction, in epoch order. [segments]
    beta_cubic : float
        Multiplicative decrease factor (fraction kept). [-]
    fast_convergence : bool
        RFC 9438 Sec. 4.7: when a loss comes below the previous plateau, the plateau
        becomes ``W (1 + beta_cubic) / 2`` (Linux: below ``last_max_cwnd``).

    Returns
    -------
    numpy.ndarray
        Plateau of each epoch. [segments]
    """
    w = np.asarray(w_prior_segments, dtype=float)
    out = np.empty_like(w)
    last = 0.0
    for i, wi in enumerate(w):
        last = wi * (1.0 + beta_cubic) / 2.0 if (fast_convergence and wi < last) else wi
        out[i] = last
    return out


@_PARAMETERS.fill
def cubic_epoch_window_segments(t_s: Numeric, w_prior_segments: Numeric, w_origin: Numeric, rtt_s: Numeric,
                                c: float = C_CUBIC, beta_cubic: float = BETA_CUBIC, *,
                                reno_friendly: bool = True) -> np.ndarray | float:
    r"""RFC 9438 window at time t of an epoch: cubic curve through ``beta_cubic * w_prior`` with plateau ``w_origin``.

    Parameters
    ----------
    t_s : numeric
        Time since the epoch started. [s]
    w_prior_segments : numeric
        Window before the reduction (``cwnd_prior``). [segments]
    w_origin : numeric
        Plateau of the curve (``W_max`` after fast convergence, :func:`w_origin_segments`). [segments]
    rtt_s : numeric
        RTT for the Reno-friendly estimate. [s]
    {c, beta_cubic}
    reno_friendly : bool
        Take the larger of the cubic curve and the Reno-friendly estimate W_est.

    Returns
    -------
    numpy.ndarray or float
        Window, broadcast over the inputs (a numpy float for scalar inputs; a Series
        loses its index). [segments]

    Raises
    ------
    ValueError
        If ``c``, ``beta_cubic``, ``w_origin``, ``w_prior_segments`` or ``rtt_s`` is out of
        the range the models of :mod:`tcpmodels.models.cubic` accept.

    Notes
    -----
    .. math:: W(t) = \max\big(C (t - K)^3 + W_{origin},\ W_{est}(t)\big), \quad
              K = \sqrt[3]{(W_{origin} - \beta_{cubic} W_{prior}) / C}

    (RFC 9438 Sec. 4.2 with ``cwnd_epoch = beta_cubic * cwnd_prior``, Sec. 4.3, Sec. 4.7).
    """
    t = np.asarray(t_s, dtype=float)
    start = beta_cubic * np.asarray(w_prior_segments, dtype=float)
    k = np.cbrt(np.maximum(np.asarray(w_origin, dtype=float) - start, 0.0) / c)
    # validation only: the public functions check every argument once, the kernel below computes
    cubic_window_segments(np.maximum(t, 0.0), w_origin, c=c, beta_cubic=beta_cubic, k_s=k)
    if reno_friendly:
        cubic_reno_friendly_window_segments(np.maximum(t, 0.0), w_prior_segments, rtt_s, beta_cubic=beta_cubic)
    return _epoch_window(t, np.asarray(w_prior_segments, dtype=float), np.asarray(w_origin, dtype=float),
                         np.asarray(rtt_s, dtype=float), c, beta_cubic, reno_friendly)


def _epoch_window(t, w_prior, w_origin, rtt, c, beta_cubic, reno_friendly):
    """Unchecked kernel of :func:`cubic_epoch_window_segments` on float arrays (the fit's residuals call it)."""
    t0 = np.maximum(t, 0.0)
    k = np.cbrt(np.maximum(w_origin - beta_cubic * w_prior, 0.0) / c)
    cub = cubic_window_unchecked(t0, w_origin, c, k)
    if not reno_friendly:
        return cub
    return np.fmax(cub, cubic_reno_friendly_window_unchecked(t0, w_prior, rtt, beta_cubic))


@_PARAMETERS.fill
def predicted_regrowth_s(w_prior_segments: npt.ArrayLike, w_origin: npt.ArrayLike, rtt_s: npt.ArrayLike,
                         c: float = C_CUBIC, beta_cubic: float = BETA_CUBIC, *,
                         reno_friendly: bool = True) -> np.ndarray:
    r"""Time for :func:`cubic_epoch_window_segments` to reach ``w_prior`` again. [s]

    Both curves increase, so the first time their maximum reaches ``W_prior`` is the
    earlier of the two crossing times:

    .. math:: t = \min\Big(K + \sqrt[3]{(W_{prior} - W_{origin}) / C},\;
              \frac{(1 - \beta_{cubic}) W_{prior} RTT}{\alpha_{cubic}}\Big)

    (the second term only with ``reno_friendly``). Without fast convergence
    (``w_origin == w_prior``) and the Reno-friendly floor this is
    :func:`tcpmodels.models.cubic.cubic_k_s`.

    Parameters
    ----------
    w_prior_segments : array_like
        Window before each reduction (``W_prior``). [segments]
    w_origin : array_like
        Plateau of each epoch's curve (:func:`w_origin_segments`), broadcast to
        ``w_prior_segments``. [segments]
    rtt_s : array_like
        RTT of the Reno-friendly estimate, broadcast likewise; NaN estimate where not > 0. [s]
    {c, beta_cubic}
    reno_friendly : bool
        Include the Reno-friendly crossing time.

    Returns
    -------
    numpy.ndarray
        Regrowth time of each epoch, at least 1-d (not input-checked: NaN where the
        inputs make no sense). [s]

    Examples
    --------
    >>> round(float(predicted_regrowth_s(100.0, 100.0, 1.0, reno_friendly=False)[0]), 3)
    4.217
    """
    wp = np.atleast_1d(np.asarray(w_prior_segments, dtype=float))
    wo = np.broadcast_to(np.asarray(w_origin, dtype=float), wp.shape)
    r = np.broadcast_to(np.asarray(rtt_s, dtype=float), wp.shape)
    k = np.cbrt(np.maximum(wo - beta_cubic * wp, 0.0) / c)
    t_cubic = np.maximum(k + np.cbrt((wp - wo) / c), 0.0)
    if not reno_friendly:
        return t_cubic
    alpha = 3.0 * (1.0 - beta_cubic) / (1.0 + beta_cubic)
    with np.errstate(invalid="ignore"):
        t_est = np.where(r > 0, (1.0 - beta_cubic) * wp * r / alpha, np.nan)
    return np.fmin(t_cubic, t_est)


def fit_epoch_k(t_s: npt.ArrayLike, cwnd_segments: npt.ArrayLike, c: float = C_CUBIC) -> tuple[float, float]:
    r"""Inflection time K and plateau of one epoch's window, fitting ``W(t) = C (t - K)^3 + W_0`` with C fixed.

    The time at which cwnd first gets back to ``W_max`` is ill-conditioned where the
    curve is flat (within one segment of the plateau for ``|t - K| < cbrt(1 / C)``,
    1.4 s at C = 0.4); the inflection point of a least-squares cubic is not.

    Parameters
    ----------
    t_s : array_like
        Time since the epoch started. [s]
    cwnd_segments : array_like
        Window at those times. [segments]
    c : float
        The cubic constant to use. [segments/s^3]

    Returns
    -------
    (float, float)
        K [s] and W_0 [segments]; NaN when fewer than 5 samples are given.

    Examples
    --------
    >>> t = np.linspace(0, 6, 61)
    >>> k, w0 = fit_epoch_k(t, 0.4 * (t - 4.2) ** 3 + 100)
    >>> round(k, 3), round(w0, 3)
    (4.2, 100.0)
    """
    t = np.asarray(t_s, dtype=float)
    w = np.asarray(cwnd_segments, dtype=float)
    ok = np.isfinite(t) & np.isfinite(w)
    t, w = t[ok], w[ok]
    if len(t) < 5:
        return np.nan, np.nan
    x0 = [float(t[np.argmin(np.abs(w - w.max()))]), float(w.max())]
    sol = least_squares(lambda th: c * (t - th[0]) ** 3 + th[1] - w, x0)
    return float(sol.x[0]), float(sol.x[1])


@dataclass(frozen=True, kw_only=True)
class CubicFit:
    """C and beta_cubic fitted to observed CUBIC epochs.

    Attributes
    ----------
    c, beta_cubic : float
        Least-squares estimates. [segments/s^3], [-]
    c_se, beta_se : float
        Standard errors from the Jacobian (samples treated as independent: optimistic). [same units]
    c_ci, beta_ci : tuple of float
        Bootstrap (over epochs) percentile intervals at ``confidence_level``. [same units]
    confidence_level : float
    beta_obs_mean, beta_obs_se : float
        Mean and standard error of the directly observed reduction factors ``ssthresh / w_prior``. [-]
    n_epochs, n_samples : int
    rmse_relative : float
        Root-mean-square residual, relative to each epoch's ``w_prior``. [-]
    reno_friendly_share : float
        Share of the fitted samples where W_est exceeds the cubic curve at the fitted parameters. [-]
    reno_friendly : bool
        Whether the model included the Reno-friendly floor.
    epochs : pandas.DataFrame
        The epochs used, with ``w_origin_segments`` at the fit.
    """

    c: float
    beta_cubic: float
    c_se: float
    beta_se: float
    c_ci: tuple
    beta_ci: tuple
    confidence_level: float
    beta_obs_mean: float
    beta_obs_se: float
    n_epochs: int
    n_samples: int
    rmse_relative: float
    reno_friendly_share: float
    reno_friendly: bool
    epochs: pd.DataFrame = field(default_factory=pd.DataFrame, repr=False, compare=False)

    def confidence_interval(self) -> dict[str, tuple]:
        """Bootstrap intervals of ``c`` and ``beta_cubic`` at :attr:`confidence_level`.

        Returns
        -------
        dict
            ``{"c": (low, high), "beta_cubic": (low, high)}``. [segments/s^3], [-]
        """
        return {"c": self.c_ci, "beta_cubic": self.beta_ci}

    def to_dict(self) -> dict[str, Any]:
        """Every field but the ``epochs`` table.

        Returns
        -------
        dict
            Field name -> value (the intervals as tuples).
        """
        return {f.name: getattr(self, f.name) for f in fields(self) if f.name != "epochs"}


def _stack(epochs: pd.DataFrame, samples: pd.DataFrame, max_epoch_s: float | None):
    """Per-sample arrays (epoch group, t, cwnd, w_prior, rtt) of the usable epochs."""
    groups, ts, ws, wp, rt = [], [], [], [], []
    # numpy columns once, sliced per epoch (pandas row access per epoch was most of a quick report's fit)
    t_all = samples["t_s"].to_numpy(float)
    w_all = samples["cwnd_segments"].to_numpy(float)
    open_all = samples["ca_state"].to_numpy() == 0 if "ca_state" in samples else np.ones(len(samples), bool)
    cols = [epochs[k].to_numpy(float) for k in ("first_index", "last_index", "start_s", "w_prior_segments", "rtt_s")]
    for g, (first, last, start, w_prior, rtt) in enumerate(zip(*cols)):
        sl = slice(int(first), int(last) + 1)
        is_open = open_all[sl]
        tt = t_all[sl][is_open] - float(start)
        keep = tt >= 0 if max_epoch_s is None else (tt >= 0) & (tt <= max_epoch_s)
        groups.append(np.full(int(keep.sum()), g))
        ts.append(tt[keep])
        ws.append(w_all[sl][is_open][keep])
        wp.append(np.full(int(keep.sum()), float(w_prior)))
        rt.append(np.full(int(keep.sum()), float(rtt)))
    cat = [np.concatenate(x) if x else np.array([]) for x in (groups, ts, ws, wp, rt)]
    return cat[0].astype(int), cat[1], cat[2], cat[3], cat[4]


def fit_cubic(epochs: pd.DataFrame, samples: pd.DataFrame, *, reno_friendly: bool = True,
              fast_convergence: bool = True, n_boot: int = 200, confidence_level: float = 0.95,
              rng: np.random.Generator | None = None, max_epoch_s: float | None = None) -> CubicFit:
    """Fit C and beta_cubic of RFC 9438 to the observed windows of CUBIC epochs.

    Parameters
    ----------
    epochs : pandas.DataFrame
        From :func:`cwnd_epochs` on ``samples`` (rows with NaN start, or after a
        timeout, are dropped; so is the first epoch of a trajectory for fast convergence,
        which needs the previous plateau — it is kept in the chain but not fitted).
        An optional ``run`` column keeps several trajectories apart.
    samples : pandas.DataFrame
        The trajectory: ``t_s``, ``cwnd_segments`` (and ``ca_state``), positionally
        indexed as ``first_index``/``last_index`` refer to.
    reno_friendly, fast_convergence : bool
        Model features (RFC 9438 Sec. 4.3 and 4.7).
    n_boot : int
        Bootstrap resamples of the epochs for the intervals (0: none).
    confidence_level : float
        Of the intervals. [-]
    rng : numpy.random.Generator, optional
        For the bootstrap; default ``numpy.random.default_rng(0)``.
    max_epoch_s : float, optional
        Use only the first seconds of each epoch. [s]

    Returns
    -------
    CubicFit

    Raises
    ------
    ValueError
        With fewer than two usable epochs.

    References
    ----------
    .. [1] RFC 9438, Sec. 4.2, 4.3, 4.6, 4.7.
    """
    check_range("confidence_level", confidence_level, unit="-", low=0.0, high=1.0, low_open=True, high_open=True)
    rng = np.random.default_rng(0) if rng is None else rng
    ep = epochs.copy()
    if "run" not in ep:
        ep["run"] = 0
    ok = ep["start_s"].notna() & ~ep["after_timeout"].astype(bool) & (ep["n_samples"] >= 3) & ep["rtt_s"].gt(0)
    ep["usable"] = ok
    # the first reduction of each run has no previous plateau (fast convergence needs one)
    ep["usable"] &= ep.groupby("run").cumcount() > 0
    use = ep[ep["usable"]].reset_index(drop=True)
    if len(use) < 2:
        raise ValueError(f"need at least two usable epochs to fit C and beta_cubic; got {len(use)}")
    if "run" in samples:
        parts = [(r, samples[samples["run"] == r].reset_index(drop=True)) for r in use["run"].unique()]
    else:
        parts = [(use["run"].iloc[0], samples.reset_index(drop=True))]
    data = []
    for r, smp in parts:
        sub = use[use["run"] == r]
        g, tt, ww, wp, rt = _stack(sub, smp, max_epoch_s)
        data.append((r, g, tt, ww, wp, rt))
    prior_chain = {r: ep[ep["run"] == r]["w_prior_segments"].to_numpy(float) for r, *_ in data}
    usable_mask = {r: ep[ep["run"] == r]["usable"].to_numpy(bool) for r, *_ in data}

    # validate the data once through the public function; least_squares keeps theta inside `bounds`
    # (valid C and beta), so the residuals then call the unchecked kernel
    for r, g, tt, ww, wp, rt in data:
        origin = w_origin_segments(prior_chain[r], BETA_CUBIC, fast_convergence=fast_convergence)[usable_mask[r]][g]
        cubic_epoch_window_segments(tt, wp, origin, rt, C_CUBIC, BETA_CUBIC, reno_friendly=reno_friendly)

    # what the model needs that depends on beta alone (each sample's plateau; the Reno-friendly window), kept for
    # the last betas seen: the grid below holds 16 values of C per beta. The same arrays _epoch_window computes.
    by_beta: dict[float, list] = {}

    def beta_parts(beta):
        key = float(beta)
        parts = by_beta.get(key)
        if parts is None:
            if len(by_beta) >= 32:
                by_beta.clear()
            parts = by_beta[key] = [
                (w_origin_segments(prior_chain[r], beta, fast_convergence=fast_convergence)[usable_mask[r]][g],
                 cubic_reno_friendly_window_unchecked(np.maximum(tt, 0.0), wp, rt, beta) if reno_friendly else None)
                for r, g, tt, ww, wp, rt in data]
        return parts

    def residuals(theta):
        c, beta = theta
        res = []
        for (r, g, tt, ww, wp, rt), (origin, est) in zip(data, beta_parts(beta)):
            # = _epoch_window(tt, wp, origin, rt, c, beta, reno_friendly), the beta-only parts reused
            k = np.cbrt(np.maximum(origin - beta * wp, 0.0) / c)
            model = cubic_window_unchecked(np.maximum(tt, 0.0), origin, c, k)
            if est is not None:
                model = np.fmax(model, est)
            res.append((ww - model) / wp)
        return np.concatenate(res)

    # the model is piecewise (max of two curves, fast convergence), so start from the best point of a
    # coarse grid and use finite-difference steps larger than the kinks' scale
    grid_c = np.geomspace(0.02, 4.0, 16)
    grid_b = np.linspace(0.45, 0.9, 10)
    cost = [(float(np.sum(residuals((cc, bb)) ** 2)), cc, bb) for cc in grid_c for bb in grid_b]
    _, c0, b0 = min(cost)
    x0 = np.array([c0, b0])
    bounds = ([1e-3, 0.3], [20.0, 0.97])
    sol = least_squares(residuals, x0, bounds=bounds, x_scale=[0.1, 0.1], diff_step=1e-3)
    c_hat, b_hat = sol.x
    res = sol.fun
    dof = max(len(res) - 2, 1)
    s2 = float(res @ res) / dof
    try:
        cov = np.linalg.inv(sol.jac.T @ sol.jac) * s2
        c_se, b_se = float(np.sqrt(cov[0, 0])), float(np.sqrt(cov[1, 1]))
    except np.linalg.LinAlgError:
        c_se = b_se = np.nan
    boots = []
    n_per = [len(np.unique(g)) for _, g, *_ in data]
    for _ in range(int(n_boot)):
        sel = [rng.integers(0, n, n) for n in n_per]  # resample epochs within each run
        # positions in residuals() of each drawn epoch's samples, in draw order, found once per resample
        take, offs = [], 0
        for (r, g, *_), s in zip(data, sel):
            take += [offs + np.flatnonzero(g == e) for e in s]
            offs += len(g)
        take = np.concatenate(take) if take else None

        def res_b(theta, take=take):  # a drawn epoch's residuals appear as often as it was drawn
            return residuals(theta)[take] if take is not None else np.array([0.0])
        try:
            boots.append(least_squares(res_b, sol.x, bounds=bounds, x_scale=[0.1, 0.1], diff_step=1e-3,
                                       max_nfev=60).x)
        except ValueError:
            continue
    a = (1.0 - confidence_level) / 2.0
    if boots:
        bb = np.array(boots)
        c_ci = tuple(float(x) for x in np.quantile(bb[:, 0], [a, 1 - a]))
        b_ci = tuple(float(x) for x in np.quantile(bb[:, 1], [a, 1 - a]))
    else:
        c_ci = b_ci = (np.nan, np.nan)
    # share of samples in the Reno-friendly region at the fit
    share_num = share_den = 0
    for r, g, tt, ww, wp, rt in data:
        origin = w_origin_segments(prior_chain[r], b_hat, fast_convergence=fast_convergence)[usable_mask[r]][g]
        cub = cubic_epoch_window_segments(tt, wp, origin, rt, c_hat, b_hat, reno_friendly=False)
        est = cubic_reno_friendly_window_segments(tt, wp, rt, beta_cubic=b_hat)
        share_num += int(np.sum(est > cub))
        share_den += len(tt)
    bo = ep.loc[ep["start_s"].notna(), "beta_obs"].to_numpy(float)
    use = use.copy()
    origins = []
    for r, *_ in data:
        origins.append(w_origin_segments(prior_chain[r], b_hat, fast_convergence=fast_convergence)[usable_mask[r]])
    use["w_origin_segments"] = np.concatenate(origins)
    return CubicFit(
        c=float(c_hat), beta_cubic=float(b_hat), c_se=c_se, beta_se=b_se, c_ci=c_ci, beta_ci=b_ci,
        confidence_level=confidence_level, beta_obs_mean=float(np.mean(bo)) if len(bo) else np.nan,
        beta_obs_se=float(np.std(bo, ddof=1) / np.sqrt(len(bo))) if len(bo) > 1 else np.nan,
        n_epochs=int(len(use)), n_samples=int(len(res)), rmse_relative=float(np.sqrt(np.mean(res ** 2))),
        reno_friendly_share=share_num / share_den if share_den else np.nan, reno_friendly=reno_friendly, epochs=use,
    )

