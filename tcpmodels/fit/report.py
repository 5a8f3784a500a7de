"""Tables for ``notebooks/fit_models_to_traces.ipynb`` from the shipped ``fit_*`` dataset (no root, no captures).

One call per result: :func:`load`, :func:`estimator_checks`, :func:`mathis_fits`,
:func:`cubic_fits`, :func:`k_table`, :func:`mptcp_tables`.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from tcpmodels._docstrings import SharedEntries
from tcpmodels.datasets.fit import SCHEMA
from tcpmodels.fit.cubic import CubicFit, fit_cubic, fit_epoch_k, predicted_regrowth_s, w_origin_segments
from tcpmodels.fit.lia import lia_counterfactual
from tcpmodels.fit.throughput import add_predictions, classify_regime, fit_loss_exponent, fit_mathis_c
from tcpmodels.models.cubic import BETA_CUBIC, C_CUBIC, cubic_k_s

__all__ = ["load", "estimator_checks", "mathis_fits", "cubic_fits", "k_table", "mptcp_tables", "MATHIS_PUBLISHED_C",
           "cubic_fit_table", "plot_run_epochs", "plot_lia_run", "summary_series", "LOW_LOSS_SETTINGS", "tables", "claims",
           "MATHIS_C_PER_SEGMENT", "MATHIS_C_DELAYED_ACK"]

#: Parameters documented once for the docstrings of this module that share them.
_PARAMETERS = SharedEntries("""
    epochs : pandas.DataFrame
        The ``epochs`` table of :func:`load`.
""")

#: Mathis et al. (1997), Table 1: C for periodic / random loss, without / with delayed ACKs
MATHIS_PUBLISHED_C = {"periodic, no delayed ACK": 1.22, "periodic, delayed ACK": 0.87,
                      "random, no delayed ACK": 1.31, "random, delayed ACK": 0.93}


def load(data_dir: str | Path) -> dict:
    """The ``fit_*`` tables of ``<data_dir>/datasets`` (flows with predictions and regimes added) and provenance.

    Parameters
    ----------
    data_dir : str or Path
        The data folder (its ``datasets/`` holds ``fit_*.parquet`` and ``fit_provenance.json``).

    Returns
    -------
    dict
        ``flows`` (with :func:`~tcpmodels.fit.throughput.add_predictions` columns and
        ``regime``), ``epochs``, ``tcpinfo``, ``mptcp_subflows``, ``mptcp_tcpinfo`` (empty
        frames when the MPTCP files are absent) and ``provenance`` (dict).

    Raises
    ------
    FileNotFoundError
        Naming the missing file and the command that builds it.
    """
    out = SCHEMA.read(data_dir, ("flows", "epochs", "tcpinfo"), optional=("mptcp_subflows", "mptcp_tcpinfo"))
    for name in ("mptcp_subflows", "mptcp_tcpinfo"):
        out.setdefault(name, pd.DataFrame())
    f = add_predictions(out["flows"])
    f["regime"] = classify_regime(f)
    out["flows"] = f
    return out


def estimator_checks(flows: pd.DataFrame, epochs: pd.DataFrame | None = None) -> pd.DataFrame:
    """Capture-only estimates against the kernel's own counters and TCP_INFO, one row per check.

    With ``epochs`` also W_max from bytes in flight (capture) against W_max from cwnd (TCP_INFO).

    Columns: ``check``, ``flows``, ``median``, ``p10``, ``p90``, ``meaning``.

    Parameters
    ----------
    flows : pandas.DataFrame
        The ``flows`` table of :func:`load` (capture estimates, kernel counters, TCP_INFO means).
    epochs : pandas.DataFrame, optional
        The ``epochs`` table; adds the per-epoch W_max check if it has ``capture_w_max_segments``.

    Returns
    -------
    pandas.DataFrame
        One row per check: the number of flows with a finite value, the median and the
        10th and 90th percentiles of the ratio or difference, and what value means agreement.
    """
    f = flows
    rows = []

    def add(check, values, meaning):
        v = pd.Series(values, dtype=float).replace([np.inf, -np.inf], np.nan).dropna()
        rows.append({"check": check, "flows": int(len(v)), "median": v.median(), "p10": v.quantile(0.1),
                     "p90": v.quantile(0.9), "meaning": meaning})

    events_all = f["loss_events"] + 1  # + the slow-start event that opens the window (when there was loss)
    kern = f["kernel_recoveries"] + f["kernel_timeouts"]
    has = f["loss_events"] > 0
    add("loss events (capture, incl. first) - kernel recoveries + timeouts", (events_all - kern)[has],
        "0: one capture loss event per kernel window reduction")
    add("loss events / retransmitted segments", (f["loss_events"] / f["retransmissions"])[f["retransmissions"] > 0],
        "<= 1: retransmissions of one window grouped")
    add("capture RTT mean / TCP_INFO srtt mean", f["rtt_mean_s"] / f["tcpinfo_srtt_mean_s"],
        "1: the capture at the sender sees the sender's RTT")
    add("capture timeouts - kernel TCPTimeouts", f["timeouts"] - f["kernel_timeouts"],
        "0 (the capture counts timeouts in the steady window, the kernel all)")
    add("mean flight / TCP_INFO mean cwnd", f["flight_mean_segments"] / f["tcpinfo_cwnd_mean_segments"],
        "1 when cwnd-limited, < 1 when the receiver window limits")
    add("random drops per data frame / loss setting", (f["random_drop_rate_data"] / f["loss_rate_set"])[f["loss_rate_set"] > 0],
        "1: the delay element drops what was asked")
    add("loss-event rate / random drop rate", (f["loss_event_rate"] / f["random_drop_rate_data"])[f["loss_rate_set"] > 0],
        "<= 1: several drops of one window are one event")
    add("b (segments per advancing ACK)", f["b"], "about 2: delayed ACKs (quick ACKs and SACK-era jumps move it)")
    if epochs is not None and "capture_w_max_segments" in epochs:
        e = epochs[epochs["w_prior_segments"] > 0]
        add("W_max at a loss: capture flight / TCP_INFO cwnd (per epoch)",
            e["capture_w_max_segments"] / e["w_prior_segments"], "1: the window trajectory is visible in the capture")
    return pd.DataFrame(rows)


def mathis_fits(flows: pd.DataFrame, *, confidence_level: float = 0.95) -> pd.DataFrame:
    """The Mathis constant C (and the free exponent of p) fitted per congestion control and regime subset.

    Parameters
    ----------
    flows : pandas.DataFrame
        The ``flows`` table of :func:`load`; flows without loss events or throughput are left out.
    confidence_level : float
        Of the intervals of C and the exponent. [-]

    Returns
    -------
    pandas.DataFrame
        One row per subset: ``subset``, ``n``, ``c``, ``c_se``, ``c_low``, ``c_high``,
        ``typical_error_factor`` (exp of the log residual s.d.), ``exponent``,
        ``exponent_low``, ``exponent_high``. Subsets of fewer than three flows are skipped.
    """
    f = flows[(flows["loss_events"] > 0) & flows["throughput_bps"].gt(0)]
    subsets = {
        "reno, congestion avoidance": (f["cc"] == "reno") & (f["regime"] == "congestion avoidance"),
        "reno, CA + link-limited": (f["cc"] == "reno") & f["regime"].isin(["congestion avoidance", "link-limited"]),
        "reno, all with loss": f["cc"] == "reno",
        "cubic, CA + link-limited": (f["cc"] == "cubic") & f["regime"].isin(["congestion avoidance", "link-limited"]),
        "cubic, all with loss": f["cc"] == "cubic",
    }
    rows = []
    for name, sel in subsets.items():
        g = f[sel]
        if len(g) < 3:
            continue
        fit = fit_mathis_c(g["throughput_bps"], g["mss_bytes"], g["rtt_mean_s"], g["loss_event_rate"],
                           confidence_level=confidence_level)
        ex = fit_loss_exponent(g["throughput_bps"], g["mss_bytes"], g["rtt_mean_s"], g["loss_event_rate"],
                               confidence_level=confidence_level)
        rows.append({"subset": name, "n": fit.n, "c": fit.c, "c_se": fit.c_se, "c_low": fit.ci[0],
                     "c_high": fit.ci[1], "typical_error_factor": math.exp(fit.log_residual_sd),
                     "exponent": ex.exponent, "exponent_low": ex.exponent_ci[0], "exponent_high": ex.exponent_ci[1]})
    return pd.DataFrame(rows)


def _run_key(df: pd.DataFrame) -> pd.Series:
    return df["name"]


@_PARAMETERS.fill
def cubic_fits(epochs: pd.DataFrame, tcpinfo: pd.DataFrame, *, n_boot: int = 100, seed: int = 0,
               min_bdp_segments: float = 0.0, max_bdp_segments: float = np.inf,
               settings: Iterable[str] | None = None) -> tuple[CubicFit, pd.DataFrame, pd.DataFrame]:
    """Fit C and beta_cubic jointly over the CUBIC runs whose BDP (at 20 Mbit/s, in 1448-byte segments)
    lies in the given range, optionally only of some loss settings.

    Parameters
    ----------
    {epochs}
    tcpinfo : pandas.DataFrame
        The ``tcpinfo`` table (TCP_INFO samples of every run).
    n_boot : int
        Bootstrap resamples (over epochs) of the confidence intervals.
    seed : int
        Seed of the bootstrap's generator.
    min_bdp_segments, max_bdp_segments : float
        Inclusive range of the runs' BDP. [segments]
    settings : iterable of str, optional
        Loss settings to keep (e.g. :data:`LOW_LOSS_SETTINGS`); all if omitted.

    Returns
    -------
    (CubicFit, pandas.DataFrame, pandas.DataFrame)
        The fit, the epochs used (all runs, with ``run``) and the samples (with ``run``).
    """
    ep = epochs[epochs["cc"] == "cubic"].copy()
    if settings is not None:
        ep = ep[ep["setting"].isin(settings)]
    bdp = 20e6 * ep["rtt_ms"] * 1e-3 / 8 / 1448
    ep = ep[(bdp >= min_bdp_segments) & (bdp <= max_bdp_segments)]
    ep["run"] = _run_key(ep)
    runs = ep["run"].unique()
    ti = tcpinfo[tcpinfo["name"].isin(runs)].copy()
    ti["run"] = ti["name"]
    ti = ti.sort_values(["run", "t_s"]).reset_index(drop=True)
    # first_index/last_index refer to positions within each run's own sample list
    fit = fit_cubic(ep.reset_index(drop=True), ti, n_boot=n_boot, rng=np.random.default_rng(seed))
    return fit, ep, ti


def k_table(epochs: pd.DataFrame, tcpinfo: pd.DataFrame | None = None, *, c: float = C_CUBIC,
            beta_cubic: float = BETA_CUBIC) -> pd.DataFrame:
    """K observed against K predicted for every CUBIC epoch that regrew to its ``w_prior``.

    Columns added: ``k_fit_s`` (with ``tcpinfo``: the inflection time of a cubic with C =
    ``c`` fitted to the epoch's cwnd samples, :func:`tcpmodels.fit.cubic.fit_epoch_k`;
    NaN for epochs under 1 s or in the Reno-friendly region),
    ``k_rfc_s`` (:func:`cubic_k_s` of ``w_prior``, the bare formula), ``k_fc_s`` (K of the
    curve with fast convergence, ``cbrt((W_origin - beta W_prior) / C)``),
    ``k_model_s`` (time for RFC 9438's window with fast convergence and the Reno-friendly
    floor to reach ``w_prior``), ``k_cubic_only_s`` (the same without the Reno-friendly
    floor), ``bdp_segments``, ``reno_friendly`` (``k_model_s`` < 0.8 ``k_cubic_only_s``). [s]

    Parameters
    ----------
    epochs : pandas.DataFrame
        The ``epochs`` table of :func:`load`; CUBIC runs except the receiver-window setting are used.
    tcpinfo : pandas.DataFrame, optional
        The ``tcpinfo`` table; without it ``k_fit_s`` stays NaN.
    c : float
        CUBIC constant of the predictions. [segments/s^3]
    beta_cubic : float
        Fraction of the window kept. [-]

    Returns
    -------
    pandas.DataFrame
        The epochs with the columns above, keeping those that started, did not follow a
        timeout, and have an observed or fitted K.
    """
    rows = []
    # cwnd stops growing where the receiver window binds: those epochs say nothing about CUBIC's K
    cub = epochs[(epochs["cc"] == "cubic") & (epochs["setting"] != "rwnd")]
    # each run's samples found once (not a scan of the whole table per run), as numpy columns
    by_run = dict(tuple(tcpinfo.groupby("name", sort=False))) if tcpinfo is not None else {}
    for name, ep in cub.groupby("name"):
        ep = ep.sort_values("loss_s").copy()
        origin = w_origin_segments(ep["w_prior_segments"].to_numpy(float), beta_cubic)
        ep["w_origin_segments"] = origin
        ep["k_rfc_s"] = cubic_k_s(ep["w_prior_segments"].to_numpy(float), c=c, beta_cubic=beta_cubic)
        rtt = ep["rtt_s"].fillna(ep["rtt_ms"] * 1e-3).to_numpy(float)
        ep["k_model_s"] = predicted_regrowth_s(ep["w_prior_segments"], origin, rtt, c, beta_cubic)
        ep["k_cubic_only_s"] = predicted_regrowth_s(ep["w_prior_segments"], origin, rtt, c, beta_cubic,
                                                    reno_friendly=False)
        # K of the cubic curve itself, with fast convergence: cbrt((W_origin - beta W_prior) / C)
        ep["k_fc_s"] = np.cbrt(np.maximum(origin - beta_cubic * ep["w_prior_segments"].to_numpy(float), 0) / c)
        k_fit = np.full(len(ep), np.nan)
        if tcpinfo is not None:
            smp = by_run.get(name, tcpinfo.iloc[0:0]).sort_values("t_s").reset_index(drop=True)
            # times in the column's own dtype (float32 in the shipped table) and each epoch's values as row
            # iteration gives them (ep.to_numpy(), what iterrows reads): the offsets are the same floats as ever
            t_all, w_all = smp["t_s"].to_numpy(), smp["cwnd_segments"].to_numpy(float)
            is_open = (smp["ca_state"] == 0).to_numpy(bool)
            at = [ep.columns.get_loc(k) for k in ("start_s", "end_s", "first_index", "last_index", "k_model_s",
                                                  "k_cubic_only_s")]
            for j, row in enumerate(ep.to_numpy()):
                start, end, first, last, k_model, k_cubic_only = (row[i] for i in at)
                long_enough = end - start >= 1.0 and first >= 0
                if not long_enough or k_model < 0.8 * k_cubic_only:
                    continue
                sl = slice(int(first), int(last) + 1)
                keep = is_open[sl]
                k_fit[j] = fit_epoch_k(t_all[sl][keep] - start, w_all[sl][keep], c)[0]
        ep["k_fit_s"] = k_fit
        rows.append(ep)
    out = pd.concat(rows, ignore_index=True) if rows else epochs.iloc[0:0]
    out["bdp_segments"] = 20e6 * out["rtt_ms"] * 1e-3 / 8 / 1448
    out["reno_friendly"] = out["k_model_s"] < 0.8 * out["k_cubic_only_s"]
    found = out["k_obs_s"].notna() | out["k_fit_s"].notna()
    return out[found & out["start_s"].notna() & ~out["after_timeout"].astype(bool)].reset_index(drop=True)


def mptcp_tables(subflows: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """:func:`tcpmodels.fit.lia.lia_counterfactual` for every MPTCP run, keyed by run name.

    Parameters
    ----------
    subflows : pandas.DataFrame
        The ``mptcp_subflows`` table of :func:`load` (one row per run and path).

    Returns
    -------
    dict of str to pandas.DataFrame
        Run name -> its counterfactual table; runs with a loss-free path are left out
        (empty for no MPTCP runs).
    """
    out = {}
    cols = ["path", "path_rtt_ms", "path_loss_rate_set", "loss_event_rate", "rtt_mean_s", "throughput_bps",
            "tcpinfo_cwnd_mean_segments", "mss_bytes"]
    if subflows.empty:
        return out
    for name, g in subflows.groupby("name"):
        g = g.sort_values("path")[cols].set_index("path")
        if (g["loss_event_rate"] > 0).all():
            out[name] = lia_counterfactual(g)
    return out


#: Loss settings of the low-loss CUBIC runs (buffer-limited and 0.1 % random loss).
LOW_LOSS_SETTINGS = ("buf", "r0.1")


@_PARAMETERS.fill
def cubic_fit_table(epochs: pd.DataFrame, tcpinfo: pd.DataFrame, *, n_boot: int, seed: int) -> dict:
    """The three CUBIC fits the notebook compares (large windows, small BDP, lossy) and their table.

    Parameters
    ----------
    {epochs}
    tcpinfo : pandas.DataFrame
        The ``tcpinfo`` table.
    n_boot : int
        Bootstrap resamples of the two low-loss fits (the lossy fit has none).
    seed : int
        Seed of the bootstraps.

    Returns
    -------
    dict
        ``table`` (one column per fit: C, beta_cubic with standard errors and CIs, epochs, samples,
        relative RMSE, Reno-friendly share) and ``big`` (the large-window fit, used by the K table).
    """
    low = list(LOW_LOSS_SETTINGS)
    big, _, _ = cubic_fits(epochs, tcpinfo, n_boot=n_boot, seed=seed, min_bdp_segments=40, settings=low)
    small, _, _ = cubic_fits(epochs, tcpinfo, n_boot=n_boot, seed=seed, max_bdp_segments=40, settings=low)
    lossy, _, _ = cubic_fits(epochs, tcpinfo, n_boot=0, seed=seed, min_bdp_segments=40, settings=["r0.5", "r2"])
    table = pd.DataFrame({"RTT >= 50 ms, low loss (large windows)": big.to_dict(),
                          "RTT <= 20 ms, low loss (small BDP)": small.to_dict(),
                          "RTT >= 50 ms, 0.5-2 % loss (windows 5-30)": lossy.to_dict()})
    rows = ["c", "c_se", "c_ci", "beta_cubic", "beta_se", "beta_ci", "beta_obs_mean", "beta_obs_se", "n_epochs",
            "n_samples", "rmse_relative", "reno_friendly_share"]
    return {"table": table.loc[rows], "big": big}


def plot_run_epochs(data_dir: str | Path, tcpinfo: pd.DataFrame, fit: CubicFit, *,
                    run: str = "single-cubic-50ms-buf-r0") -> Figure:
    """One CUBIC run's shipped capture and tcp_info samples with the fitted epochs drawn over them; returns the figure.

    Parameters
    ----------
    data_dir : str or Path
        The data folder; the capture is ``captures/fit_<run>-pa.pcap.gz`` in it.
    tcpinfo : pandas.DataFrame
        The ``tcpinfo`` table of :func:`load`.
    fit : CubicFit
        A fit whose ``epochs`` (with ``run``) are drawn at its C and beta_cubic.
    run : str
        The run's name.

    Returns
    -------
    matplotlib.figure.Figure
        cwnd, bytes in flight / MSS and the fitted curves against time
        (:func:`tcpmodels.fit.plots.epoch_trajectory`).

    Raises
    ------
    tcpmodels.traces.pcapfile.CaptureFileError
        If the capture is missing or unreadable (``FileNotFoundError`` for a missing file).
    """
    import warnings

    import matplotlib.pyplot as plt

    from tcpmodels.fit import flow_estimates, plots
    from tcpmodels.traces import TraceWarning, bytes_in_flight, read_pcap

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TraceWarning)
        packets = read_pcap(Path(data_dir) / "captures" / f"fit_{run}-pa.pcap.gz")
    est = flow_estimates(packets)
    flight = bytes_in_flight(packets, est.flow_id)
    flight.index = flight.index - packets["timestamp_s"].min()
    samples = tcpinfo[tcpinfo["name"] == run]
    epochs_run = fit.epochs[fit.epochs["run"] == run] if run in set(fit.epochs["run"]) else fit.epochs.iloc[0:0]
    fig, ax = plt.subplots(figsize=(14, 4.5))
    plots.epoch_trajectory(ax, samples, epochs_run, c=fit.c, beta_cubic=fit.beta_cubic, flight=flight,
                           mss_bytes=est.mss_bytes)
    ax.set_title(f"{run}: C = {fit.c:.3f}, beta_cubic = {fit.beta_cubic:.3f} (fitted over all large-BDP epochs)")
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


def plot_lia_run(mptcp_tcpinfo: pd.DataFrame) -> Figure | None:
    """Kernel MPTCP windows (uncoupled) of one Reno run and LIA's alpha evaluated on them; None without MPTCP runs.

    Parameters
    ----------
    mptcp_tcpinfo : pandas.DataFrame
        The ``mptcp_tcpinfo`` table of :func:`load`; the first Reno run by name is drawn
        (the first run if there is no Reno run).

    Returns
    -------
    matplotlib.figure.Figure or None
        Three panels (:func:`tcpmodels.fit.plots.lia_paths`), or None for an empty table.
    """
    import matplotlib.pyplot as plt

    from tcpmodels.fit import plots
    from tcpmodels.fit.lia import lia_series

    if not len(mptcp_tcpinfo):
        return None
    names = sorted(mptcp_tcpinfo["name"].unique())
    run = ([n for n in names if "-reno-" in n] or names)[0]  # LIA's baseline is Reno
    one = mptcp_tcpinfo[mptcp_tcpinfo["name"] == run]
    series = lia_series(one.rename(columns={"path": "subflow"}))
    fig, axes = plt.subplots(3, 1, figsize=(12, 8), sharex=True)
    plots.lia_paths(axes, one, series)
    axes[0].set_title(f"{run}: kernel windows (uncoupled) and LIA's alpha evaluated on them")
    fig.tight_layout()
    return fig


def summary_series(flows: pd.DataFrame, mathis: pd.DataFrame, fit: CubicFit, ktab: pd.DataFrame) -> pd.Series:
    """The closing summary: Mathis C with its CI, CUBIC C and beta with CIs, the K ratios.

    Parameters
    ----------
    flows : pandas.DataFrame
        The ``flows`` table (only counted).
    mathis : pandas.DataFrame
        :func:`mathis_fits`; its ``"reno, CA + link-limited"`` row is reported (None if absent).
    fit : CubicFit
        The large-BDP CUBIC fit (``cubic_fit_table(...)["big"]``).
    ktab : pandas.DataFrame
        :func:`k_table`.

    Returns
    -------
    pandas.Series
        Label -> value (object dtype): counts, constants [-] and C [segments/s^3], their
        intervals as tuples, and median K ratios [-].
    """
    sub = mathis[mathis["subset"] == "reno, CA + link-limited"]
    return pd.Series({
        "flows": len(flows),
        "Mathis C (reno, CA + link-limited)": float(sub["c"].iloc[0]) if len(sub) else None,
        "Mathis C 95% CI": tuple(sub[["c_low", "c_high"]].iloc[0]) if len(sub) else None,
        "CUBIC C (large BDP)": fit.c, "CUBIC C CI": fit.c_ci,
        "CUBIC beta_cubic (large BDP)": fit.beta_cubic, "beta CI": fit.beta_ci,
        "observed reduction ssthresh/W_max": fit.beta_obs_mean,
        "K obs / K model (median)": float((ktab["k_obs_s"] / ktab["k_model_s"]).median()),
        "K obs / cubic_k_s (median, cubic region)":
            float((ktab["k_obs_s"] / ktab["k_rfc_s"])[~ktab["reno_friendly"]].median()),
        "K obs / cubic_k_s (median, Reno-friendly region)":
            float((ktab["k_obs_s"] / ktab["k_rfc_s"])[ktab["reno_friendly"]].median()),
    }, dtype=object)


# ------------------------------------------------------------------ claims
#: C of Mathis et al. (1997) with one ACK per segment and with delayed ACKs (periodic loss), Table 1.
MATHIS_C_PER_SEGMENT = 1.22
MATHIS_C_DELAYED_ACK = 0.87


def tables(data: dict, *, quick: bool = False, seed: int = 0) -> dict[str, pd.DataFrame]:
    """The tables the fit notebook's claims read: ``mathis`` (:func:`mathis_fits`) and ``flows`` (per run).

    Parameters
    ----------
    data : dict
        :func:`load`'s tables.
    quick : bool
        Accepted for the papers' common signature; unused (nothing here is slow).
    seed : int
        Likewise unused.

    Returns
    -------
    dict of str to pandas.DataFrame
        ``mathis`` and ``flows``.
    """
    return {"mathis": mathis_fits(data["flows"]), "flows": data["flows"]}


def claims(data: dict, tables: dict[str, pd.DataFrame]) -> pd.DataFrame:
    """The fit notebook's claims about Mathis, judged by :mod:`tcpmodels.stats` with the run (one flow each) as the unit.

    * **F1** Mathis with C = sqrt(3/2) predicts Reno's throughput in congestion avoidance and when
      link-limited: per run log(measured / predicted), TOST with margin ±25 % (argued: below the
      factor 1.40 between the per-segment and delayed-ACK constants, 1.22 / 0.87, so equivalence
      within it tells which constant applies).
    * **F2** Reno's C is the per-segment constant 1.22, not the delayed-ACK 0.87: per run the C
      that makes Mathis exact, C_i = rate RTT sqrt(p) / MSS, TOST around 1.22 with margin 0.175
      (half the distance between the two constants).
      Its second part: the same C is not the delayed-ACK constant, C_i - 0.87 claimed positive,
      smallest effect 0.175.

    Parameters
    ----------
    data : dict
        :func:`load`'s tables (not read: the claims use ``tables``).
    tables : dict of str to pandas.DataFrame
        :func:`tables`; its ``flows`` needs ``cc``, ``regime``, ``loss_events``,
        ``mathis_bps``, ``throughput_bps``, ``rtt_mean_s``, ``loss_event_rate`` and ``mss_bytes``.

    Returns
    -------
    pandas.DataFrame
        Columns of :data:`tcpmodels.stats.VERDICT_COLUMNS`.
    """
    from tcpmodels.stats import ClaimSpec, claims_table, difference, equivalence

    f = tables["flows"]
    sel = (f["cc"] == "reno") & f["regime"].isin(["congestion avoidance", "link-limited"]) & (f["loss_events"] > 0)
    g = f[sel & f["mathis_bps"].gt(0) & f["throughput_bps"].gt(0)]
    log_ratio = np.log(g["throughput_bps"] / g["mathis_bps"]).to_numpy(float)
    c_i = (g["throughput_bps"] / 8 * g["rtt_mean_s"] * np.sqrt(g["loss_event_rate"]) / g["mss_bytes"]).to_numpy(float)
    says = "Mathis et al. 1997: B = (MSS / RTT) C / sqrt(p), C = sqrt(3/2) with an ACK per segment, 0.87 with delayed ACKs"
    half_gap = (MATHIS_C_PER_SEGMENT - MATHIS_C_DELAYED_ACK) / 2
    spec = lambda claim, part, q, eff, src, d=1: ClaimSpec(  # noqa: E731
        claim=claim, part=part, paper_says=says, quantity=q, direction=d, smallest_effect=eff, effect_source=src)
    return claims_table([
        equivalence(spec("F1 Mathis with C = sqrt(3/2) predicts Reno in congestion avoidance and link-limited",
                         "measured / predicted within ±25 %", "log(measured / Mathis) per run", math.log(1.25),
                         "argued: below the factor 1.40 between the per-segment and delayed-ACK constants"),
                    log_ratio, why=f"{len(g)} Reno runs (one flow each) with loss events"),
        equivalence(spec("F2 Reno's Mathis constant is the per-segment 1.22, not the delayed-ACK 0.87",
                         "C per run within ±0.175 of 1.22", "C_i - 1.22 per run", half_gap,
                         "half the distance between 1.22 and 0.87"), c_i - MATHIS_C_PER_SEGMENT,
                    why="Linux grows cwnd by segments acknowledged, not by ACKs"),
        difference(spec("F2 Reno's Mathis constant is the per-segment 1.22, not the delayed-ACK 0.87",
                        "C per run above the delayed-ACK 0.87", "C_i - 0.87 per run", half_gap,
                        "half the distance between 1.22 and 0.87"), c_i - MATHIS_C_DELAYED_ACK,
                   why="although the receiver delays ACKs (b about 2)"),
    ])
