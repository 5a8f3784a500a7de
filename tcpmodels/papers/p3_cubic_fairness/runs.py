"""Which of P3's runs a table uses: the kernel testbed and setting, the ns-3 setting and its complete seeds, each engine's rate, the fluid model at a rate."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pandas as pd

from tcpmodels.datasets.p3 import TESTBEDS, fluid_rate_bps, kernel_filled, ns3_filled
from tcpmodels.papers.common import rerun_once_caught_up
from tcpmodels.papers.p3_cubic_fairness.data import PARAMETERS as _PARAMETERS
from tcpmodels.papers.p3_cubic_fairness.data import READINGS, P3Dataset

__all__ = ["RERUNS", "kernel_all_testbeds", "kernel_testbed", "with_testbed", "most_run_setting", "kernel_settings", "proposal_setting", "kernel_runs", "ns3_runs", "ns3_settings", "ns3_duration_s", "ns3_rate_bps", "kernel_rate_bps", "fluid_rates_bps", "fluid_at", "DEFAULT_X_EXPONENT", "campaign_exponent"]



#: x(RTT) exponent of the proposal when the provenance's config names none (x = (RTT / 1 s)^-1/3). [-]
DEFAULT_X_EXPONENT = -1 / 3


@_PARAMETERS.fill
def campaign_exponent(ds: P3Dataset, exponent: float | None = None) -> float:
    """The x(RTT) exponent the tables and claims use: ``exponent`` if given, else the campaign's. [-]

    Parameters
    ----------
    {ds}
    exponent : float, optional
        An exponent chosen by the caller; None: the provenance config's ``x_exponent``, else
        :data:`DEFAULT_X_EXPONENT`. [-]

    Returns
    -------
    float
        The exponent of x(RTT) = (RTT / 1 s)^exponent. [-]
    """
    if exponent is not None:
        return exponent
    return ds.provenance.get("config", {}).get("x_exponent", DEFAULT_X_EXPONENT)


# ------------------------------------------------------------ kernel testbeds
#: the reruns, in the order :func:`kernel_testbed` prefers them
RERUNS = ("pinned", "steered")


@_PARAMETERS.fill
def kernel_all_testbeds(ds: P3Dataset) -> pd.DataFrame:
    """Every kernel row, of both testbeds, with ``kind``, ``rate_bps``, ``measure_s`` and ``testbed`` filled.

    Older tables lack those columns: ``kind`` is then ``standard``, the rate and measured span the provenance
    config's, and ``testbed`` ``reordering`` (every sample before 2026-11-28).

    Parameters
    ----------
    {ds}

    Returns
    -------
    pandas.DataFrame
        ``ds.kernel`` with the four columns filled.
    """
    return kernel_filled(ds.kernel, ds.provenance.get("config", {}), ("kind", "rate_bps", "measure_s", "testbed"),
                         missing=math.nan)


@_PARAMETERS.fill
def kernel_testbed(ds: P3Dataset) -> str:
    """The kernel testbed whose samples the tables and verdicts use.

    ``ds.kernel_testbed`` if set (:func:`with_testbed`); else the first rerun of :data:`RERUNS` (``pinned``,
    then ``steered``) whose samples have caught up with the unsteered ones: at the rerun's most common setting
    (``rate_bps``, ``measure_s``), at least as many rerun as unsteered samples in every cell (kind, Reno RTT,
    CUBIC RTT) that has unsteered ones; else ``reordering``. So a rerun takes over the verdicts only when it
    rests on as many runs as the results it replaces, and until then they are compared in :func:`testbed_comparison`.

    Parameters
    ----------
    {ds}

    Returns
    -------
    str
        One of :data:`TESTBEDS`.
    """
    if ds.kernel_testbed is not None:
        if ds.kernel_testbed not in TESTBEDS:
            raise ValueError(f"kernel_testbed must be one of {TESTBEDS}; got {ds.kernel_testbed!r}")
        return ds.kernel_testbed
    k = kernel_all_testbeds(ds)
    for rerun in RERUNS:
        st = k[k["testbed"] == rerun]
        if len(st) == 0:
            continue
        rate, meas = most_run_setting(st, ["rate_bps", "measure_s"])
        at = k[np.isclose(k["rate_bps"], rate) & np.isclose(k["measure_s"], meas)]
        if rerun_once_caught_up(at, ["kind", "reno_rtt_ms", "cubic_rtt_ms"], rerun) == rerun:
            return rerun
    return "reordering"


@_PARAMETERS.fill
def with_testbed(ds: P3Dataset, testbed: str | None) -> P3Dataset:
    """The same data with the kernel tables and verdicts on ``testbed`` (None: :func:`kernel_testbed`'s rule).

    Parameters
    ----------
    {ds}
    testbed : {"reordering", "steered", "pinned"} or None
        The kernel testbed.

    Returns
    -------
    P3Dataset
        A copy; the data are shared.

    Raises
    ------
    ValueError
        For any other testbed.
    """
    if testbed is not None and testbed not in TESTBEDS:
        raise ValueError(f"testbed must be one of {TESTBEDS} or None; got {testbed!r}")
    return replace(ds, kernel_testbed=testbed)


def most_run_setting(frame: pd.DataFrame, by: str | list[str], weight: str | None = None) -> object | None:
    """The value of ``by`` (a setting) with the most rows of ``frame``; a tie goes to the larger value.

    Parameters
    ----------
    frame : pandas.DataFrame
        Runs or samples, one per row (or counts, with ``weight``).
    by : str or list of str
        The column(s) that make a setting, e.g. ``"rate_bps"`` [bit/s] or ``["rate_bps", "measure_s"]``
        ([bit/s], [s]).
    weight : str, optional
        A column of counts to add up per setting instead of counting rows (e.g. ``"n"`` of
        :func:`kernel_settings`).

    Returns
    -------
    object or None
        The setting, in the units of its columns: a scalar for one column, a tuple for several; None when
        ``frame`` has no setting (no rows, or every ``by`` value NaN).
    """
    groups = frame.groupby(by)
    counts = (groups[weight].sum() if weight is not None else groups.size()).sort_values(kind="stable")
    return counts.index[-1] if len(counts) else None


# ------------------------------------------------------------ kernel settings
def _kernel_with_setting(ds: P3Dataset) -> pd.DataFrame:
    """The kernel rows of the testbed in use (:func:`kernel_testbed`) with ``kind``, ``rate_bps``,
    ``measure_s`` and ``testbed`` filled."""
    k = kernel_all_testbeds(ds)
    return k[k["testbed"] == kernel_testbed(ds)]


@_PARAMETERS.fill
def kernel_settings(ds: P3Dataset) -> pd.DataFrame:
    """The kernel settings present: samples per (``rate_bps``, ``measure_s``, ``kind``).

    Parameters
    ----------
    {ds}

    Returns
    -------
    pandas.DataFrame
        Columns ``rate_bps`` [bit/s], ``measure_s`` [s], ``kind`` and ``n`` (samples); empty without kernel rows.
    """
    k = _kernel_with_setting(ds)
    if len(k) == 0:
        return pd.DataFrame(columns=["rate_bps", "measure_s", "kind", "n"])
    return k.groupby(["rate_bps", "measure_s", "kind"]).size().rename("n").reset_index()


@_PARAMETERS.fill
def proposal_setting(ds: P3Dataset) -> tuple[float, float] | None:
    """The kernel setting ``(rate_bps, measure_s)`` the proposal ran at (the one with most ``tm_cubic_x`` samples).

    Without proposal samples: the setting with most samples. The kernel columns of the tables
    (standard and both readings) come from this setting only, so the kinds compare like with like.

    Parameters
    ----------
    {ds}

    Returns
    -------
    tuple of float or None
        ``(rate_bps [bit/s], measure_s [s])``; None without kernel rows.
    """
    st = kernel_settings(ds)
    if len(st) == 0:
        return None
    prop = st[st["kind"] != "standard"]
    use = prop if len(prop) else st
    best = most_run_setting(use, ["rate_bps", "measure_s"], weight="n")
    return float(best[0]), float(best[1])


@_PARAMETERS.fill
def kernel_runs(ds: P3Dataset, kind: str, setting: tuple[float, float] | None | str = "proposal") -> pd.DataFrame:
    """Kernel rows of one kind at one setting.

    Parameters
    ----------
    {ds}
    kind : {"standard", "multiply", "divide"}
        The CUBIC variant.
    setting : tuple of float, None or str
        ``(rate_bps, measure_s)``; ``"proposal"`` (default): :func:`proposal_setting`;
        ``"most"``: the setting with most samples of ``kind`` (a tie goes to the higher rate, then the
        longer measured span); None: every setting.

    Returns
    -------
    pandas.DataFrame
        The rows (with ``kind``, ``rate_bps`` and ``measure_s`` filled).
    """
    k = _kernel_with_setting(ds)
    if len(k) == 0:
        return k
    k = k[k["kind"] == kind]
    if setting == "proposal":
        setting = proposal_setting(ds)
    elif setting == "most":
        most = most_run_setting(k, ["rate_bps", "measure_s"])
        setting = (float(most[0]), float(most[1])) if most is not None else None
    if setting is None:
        return k
    return k[np.isclose(k["rate_bps"], setting[0]) & np.isclose(k["measure_s"], setting[1])]


# ------------------------------------------------------------ engine rates
@_PARAMETERS.fill
def ns3_runs(ds: P3Dataset) -> pd.DataFrame:
    """The ns-3 runs with ``rate_bps`` and ``duration_s`` filled.

    ``rate_bps``: the table's column, else the provenance's ``ns3.rate_bps``, else
    :data:`tcpmodels.datasets.p3.LEGACY_NS3_RATE_BPS`; ``duration_s`` (the simulated time of the run's setting): the column, else the
    provenance's ``config.ns3_duration_s``, else NaN (one unnamed setting).

    Parameters
    ----------
    {ds}

    Returns
    -------
    pandas.DataFrame
        ``ds.ns3`` with ``rate_bps`` [bit/s] and ``duration_s`` [s] in every row.
    """
    return ns3_filled(ds.ns3, ds.provenance)


def _complete_seeds(runs: pd.DataFrame, expo: float) -> pd.Series:
    """Per RTT pair: seeds with a run of every kind (standard and both readings at ``expo``)."""
    main = runs[(runs["kind"] == "standard") | np.isclose(runs["x_exponent"], expo)]
    kinds = main.groupby(["reno_rtt_ms", "cubic_rtt_ms", "seed"])["kind"].nunique()
    return (kinds == 1 + len(READINGS)).groupby(level=["reno_rtt_ms", "cubic_rtt_ms"]).sum()


def ns3_settings(ds: P3Dataset) -> pd.DataFrame:
    """The ns-3 settings present at the ns-3 rate (:func:`ns3_rate_bps`) and the one the tables use.

    A setting is a simulated duration (``short``: 20 s, 2-3 CUBIC epochs of the longest K; ``long``:
    10 epochs of the longest K at the ns-3 rate, ``tcpmodels.experiments.p3.ns3_setting``). The tables
    and claims read **one** setting, so no statistic mixes run lengths: the one whose RTT pairs are
    all covered best, i.e. with the largest number of complete seeds (a run of standard CUBIC and of
    both readings at the campaign's exponent: one paired unit of the claims) in its least-covered
    pair of the grid (the pairs of every setting); at a tie the longer one, whose runs each span
    more CUBIC epochs. The shipped short grid has 2 complete seeds in every pair (its third seed was
    never run), so the long setting replaces it once it has 2 complete seeds in every pair, and
    until then the short grid stays.

    Parameters
    ----------
    ds : P3Dataset
        The campaign's data (its ``ns3`` runs and the provenance's ``x_exponent``).

    Returns
    -------
    pandas.DataFrame
        One row per setting: ``duration_s`` [s] (NaN for a table without durations), ``n_runs``,
        ``n_pairs``, ``min_complete_seeds`` (over the grid's pairs), ``max_complete_seeds`` and
        ``used`` (bool); empty without runs.
    """
    cols = ["duration_s", "n_runs", "n_pairs", "min_complete_seeds", "max_complete_seeds", "used"]
    n = ns3_runs(ds)
    if len(n) == 0:
        return pd.DataFrame(columns=cols)
    n = n[np.isclose(n["rate_bps"], ns3_rate_bps(ds))]
    expo = campaign_exponent(ds)
    grid = sorted({(float(a), float(b)) for a, b in zip(n["reno_rtt_ms"], n["cubic_rtt_ms"])})
    rows = []
    for dur, g in n.groupby(n["duration_s"].fillna(-1.0), sort=True):
        per_pair = _complete_seeds(g, expo).reindex(pd.MultiIndex.from_tuples(grid), fill_value=0)
        rows.append({"duration_s": math.nan if dur < 0 else float(dur), "n_runs": len(g),
                     "n_pairs": int(g.groupby(["reno_rtt_ms", "cubic_rtt_ms"]).ngroups),
                     "min_complete_seeds": int(per_pair.min()), "max_complete_seeds": int(per_pair.max())})
    out = pd.DataFrame(rows)
    best = out.assign(d=out["duration_s"].fillna(-1.0)).sort_values(["min_complete_seeds", "d"], kind="stable")
    return out.assign(used=out.index == best.index[-1])[cols]


@_PARAMETERS.fill
def ns3_duration_s(ds: P3Dataset) -> float:
    """Simulated duration of the ns-3 setting the tables use (:func:`ns3_settings`); NaN without durations. [s]

    Parameters
    ----------
    {ds}

    Returns
    -------
    float
        The duration. [s]
    """
    st = ns3_settings(ds)
    return float(st.loc[st["used"], "duration_s"].iloc[0]) if len(st) else math.nan


@_PARAMETERS.fill
def ns3_rate_bps(ds: P3Dataset) -> float:
    """The rate of the ns-3 grid the tables use: the one with most runs (NaN without runs). [bit/s]

    Parameters
    ----------
    {ds}

    Returns
    -------
    float
        The bottleneck rate. [bit/s]
    """
    n = ns3_runs(ds)
    if len(n) == 0:
        return math.nan
    return float(most_run_setting(n, "rate_bps"))


@_PARAMETERS.fill
def kernel_rate_bps(ds: P3Dataset) -> float:
    """The kernel rate of the tables' kernel columns (:func:`proposal_setting`), else the provenance's. [bit/s]

    Parameters
    ----------
    {ds}

    Returns
    -------
    float
        The bottleneck rate. [bit/s]
    """
    setting = proposal_setting(ds)
    if setting:
        return setting[0]
    prov = ds.provenance
    return float(prov.get("config", {}).get("rate_bps", prov.get("scaling", {}).get("rate_bps", math.nan)))


def _fluid_with_rate(ds: P3Dataset) -> pd.DataFrame:
    """Fluid rows with proportional losses and ``rate_bps`` filled (see :func:`fluid_at`)."""
    fl = ds.fluid
    if len(fl) == 0:
        return fl.assign(rate_bps=pd.Series(dtype=float))
    fl = fl[fl["loss_sharing"] == "proportional"] if "loss_sharing" in fl else fl
    return fl.assign(rate_bps=fluid_rate_bps(fl, ds.provenance))


@_PARAMETERS.fill
def fluid_rates_bps(ds: P3Dataset) -> list[float]:
    """The bottleneck rates the fluid model was run at, sorted (see :func:`fluid_at`). [bit/s]

    Parameters
    ----------
    {ds}

    Returns
    -------
    list of float
        The distinct rates. [bit/s]
    """
    return sorted({float(r) for r in _fluid_with_rate(ds)["rate_bps"].dropna()})


@_PARAMETERS.fill
def fluid_at(ds: P3Dataset, rate_bps: float) -> pd.DataFrame:
    """Fluid-model rows (proportional losses) at one bottleneck rate.

    A row's rate is its ``rate_bps``, or in tables written before that column, the model's
    capacity: total throughput over utilisation (else the provenance's ``config.rate_bps``).
    Where rates are not stated at all (a row's rate unknown, or ``rate_bps`` NaN: data that
    predate the rates), rows of unknown rate match any rate and an unknown rate matches a
    table of at most one known rate; the tables then show the unknown rate as NaN.

    Parameters
    ----------
    {ds}
    rate_bps : float
        The rate of the engine the model is compared with. [bit/s]

    Returns
    -------
    pandas.DataFrame
        The rows at that rate (within 0.1 %), with ``rate_bps`` filled; empty (same columns) if the
        model was not run at that rate.
    """
    fl = _fluid_with_rate(ds)
    if len(fl) == 0:
        return fl
    unknown = fl["rate_bps"].isna()
    if rate_bps != rate_bps:
        return fl if fl.loc[~unknown, "rate_bps"].nunique() <= 1 else fl[unknown]
    return fl[unknown | np.isclose(fl["rate_bps"], rate_bps, rtol=1e-3)]
