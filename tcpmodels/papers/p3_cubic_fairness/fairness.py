"""P3's Figs. 3-5 as fairness tables: per RTT ratio, each engine's throughputs and Jain's index beside the paper's."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from tcpmodels.papers.p3_cubic_fairness.cells import cell_stats, run_spread_proxy, significant
from tcpmodels.papers.p3_cubic_fairness.data import PAPER_DIRECTION, READINGS, P3Dataset
from tcpmodels.papers.p3_cubic_fairness.data import PARAMETERS as _PARAMETERS
from tcpmodels.papers.p3_cubic_fairness.runs import (
    campaign_exponent,
    fluid_at,
    kernel_rate_bps,
    kernel_runs,
    ns3_duration_s,
    ns3_rate_bps,
    ns3_runs,
)

__all__ = ["fairness_table", "fairness_table_at", "columns_by_pair", "ns3_main_runs", "FIGURE_COLUMNS"]


@_PARAMETERS.fill
def ns3_main_runs(ds: P3Dataset, exponent: float | None = None) -> pd.DataFrame:
    """ns-3 runs of the main grid at the ns-3 rate (:func:`ns3_rate_bps`) and of the setting the tables use
    (:func:`ns3_duration_s`): standard, and the readings at the default exponent (or ``exponent``).

    Parameters
    ----------
    {ds}
    {exponent}

    Returns
    -------
    pandas.DataFrame
        The ns-3 runs, one per row, as :func:`ns3_runs` gives them.
    """
    df = ns3_runs(ds)
    if len(df) == 0:
        return df
    df = df[np.isclose(df["rate_bps"], ns3_rate_bps(ds))]
    dur = ns3_duration_s(ds)
    if dur == dur:
        df = df[np.isclose(df["duration_s"], dur)]
    expo = campaign_exponent(ds, exponent)
    keep = (df["kind"] == "standard") | np.isclose(df["x_exponent"], expo)
    return df[keep]


def _columns(ds: P3Dataset, exponent: float | None = None) -> dict[str, pd.DataFrame]:
    """Cell statistics of every column of the fairness tables, keyed by column name."""
    pair = ["reno_rtt_ms", "cubic_rtt_ms"]
    out = {"kernel": cell_stats(kernel_runs(ds, "standard"), pair)}
    for kind in READINGS:
        out[f"kernel_{kind}"] = cell_stats(kernel_runs(ds, kind), pair)
    ns = ns3_main_runs(ds, exponent)
    for kind in ("standard", *READINGS):
        out[f"ns3_{kind}"] = cell_stats(ns[ns["kind"] == kind] if len(ns) else ns, pair)
    expo = campaign_exponent(ds, exponent)
    fl = fluid_at(ds, kernel_rate_bps(ds))  # the fluid columns at the kernel columns' rate
    for rd in ("none", *READINGS):
        f = fl[(fl["reading"] == rd) & ((rd == "none") | np.isclose(fl["x_exponent"], expo))] if len(fl) else fl
        f = f.assign(jain_window_sd=math.nan, n_windows=math.nan)
        out[f"fluid_{rd}"] = cell_stats(f, pair)
    return out


def _get(stats: dict, reno: float, cubic: float, col: str) -> float:
    row = stats.get((float(reno), float(cubic)))
    return math.nan if row is None else float(row[col])


def _by_pair(stats: pd.DataFrame) -> dict:
    """Cell statistics keyed by (Reno RTT, CUBIC RTT) for fast lookups."""
    return {(float(r["reno_rtt_ms"]), float(r["cubic_rtt_ms"])): r for r in stats.to_dict("records")}


@_PARAMETERS.fill
def fairness_table(ds: P3Dataset, reno_rtt_ms: float, *, exponent: float | None = None) -> pd.DataFrame:
    """Figs. 3-5 as a table for one Reno RTT: per CUBIC RTT, each engine's throughputs and Jain's index.

    Columns: ``ratio`` (Reno:CUBIC RTT as the paper's x axis), ``paper`` (the
    direction the paper states for the proposal), then per column
    ``<col>_reno``, ``<col>_cubic`` [Mbit/s] and ``<col>_J`` for ``kernel`` (kernel ``cubic``),
    ``kernel_multiply``, ``kernel_divide`` (``tm_cubic_x``; all kernel columns at
    :func:`~tcpmodels.papers.p3_cubic_fairness.runs.proposal_setting`), ``ns3_standard``, ``ns3_multiply``, ``ns3_divide``, ``fluid_none``,
    ``fluid_multiply``, ``fluid_divide``, the spread ``kernel_J_sd`` and
    ``ns3_standard_J_sd``, and ``ns3_<reading>_dJ`` (proposal minus standard)
    with ``ns3_<reading>_verdict`` (fairer / less fair / within spread), and the same
    ``kernel_<reading>_dJ`` / ``kernel_<reading>_verdict`` for the kernel (a kernel cell with one
    run takes its window spread, or the run-spread floor, as its standard error). The engines run
    at their own rates, stated in ``kernel_rate_mbps``, ``ns3_rate_mbps`` and ``fluid_rate_mbps``
    (the fluid columns at the kernel columns' rate); the verdicts compare within one engine only.

    Parameters
    ----------
    {ds}
    reno_rtt_ms : float
        The Reno flow's RTT: 1, 4 or 16 for the paper's Figs. 3, 4, 5. [ms]
    exponent : float, optional
        x(RTT) exponent of the proposal's ns-3 and fluid results; default the campaign's. [-]

    Returns
    -------
    pandas.DataFrame
        One row per CUBIC RTT of the dataset, the columns above, plus ``cubic_rtt_ms`` [ms],
        ``kernel_n``, ``kernel_<reading>_n``, ``ns3_n``, ``ns3_standard_J_se`` [-] and the three
        rates [Mbit/s].
    """
    return fairness_table_at(ds, reno_rtt_ms, columns_by_pair(ds, exponent), run_spread_proxy(ds))


@_PARAMETERS.fill
def columns_by_pair(ds: P3Dataset, exponent: float | None) -> dict[str, dict]:
    """The per-cell statistics of every column of the fairness tables, keyed by (Reno RTT, CUBIC RTT).

    What every fairness table reads, whatever its Reno RTT (computed once for the three).

    Parameters
    ----------
    {ds}
    exponent : float or None
        Exponent of x(RTT) of the proposal's runs [-]; None: the campaign's default.

    Returns
    -------
    dict
        Column name (``kernel``, ``ns3_standard``, ``ns3_multiply`` ...) -> {(Reno RTT, CUBIC RTT) [ms]: cell row}.
    """
    return {name: _by_pair(st) for name, st in _columns(ds, exponent).items()}


@_PARAMETERS.fill
def fairness_table_at(ds: P3Dataset, reno_rtt_ms: float, cols: dict[str, dict], proxy: float) -> pd.DataFrame:
    """:func:`fairness_table` from its inputs, computed once for the three Reno RTTs by
    :func:`~tcpmodels.papers.p3_cubic_fairness.tables.tables`.

    Parameters
    ----------
    {ds}
    reno_rtt_ms : float
        The Reno RTT of the table. [ms]
    cols : dict
        :func:`columns_by_pair` of ``ds``.
    proxy : float
        :func:`~tcpmodels.papers.p3_cubic_fairness.cells.run_spread_proxy` of ``ds``. [-]

    Returns
    -------
    pandas.DataFrame
        The table :func:`fairness_table` returns.
    """
    rates_mbps = {"kernel_rate_mbps": kernel_rate_bps(ds) / 1e6, "ns3_rate_mbps": ns3_rate_bps(ds) / 1e6,
                  "fluid_rate_mbps": kernel_rate_bps(ds) / 1e6}

    def se(name, reno, cubic):
        v = _get(cols[name], reno, cubic, "jain_se")
        few_runs = _get(cols[name], reno, cubic, "n") < 3
        return max(v if v == v else 0.0, proxy) if few_runs and proxy == proxy else v

    rows = []
    cubic_rtts = sorted({*ds.kernel.get("cubic_rtt_ms", pd.Series(dtype=float)),
                         *ds.ns3.get("cubic_rtt_ms", pd.Series(dtype=float))})
    for cubic in cubic_rtts:
        row = {"ratio": f"{reno_rtt_ms:g}:{cubic:g}", "cubic_rtt_ms": cubic,
               "paper": PAPER_DIRECTION.get((float(reno_rtt_ms), float(cubic)), "not in the paper"), **rates_mbps}
        for name, st in cols.items():
            row[f"{name}_reno"] = _get(st, reno_rtt_ms, cubic, "reno_mbps")
            row[f"{name}_cubic"] = _get(st, reno_rtt_ms, cubic, "cubic_mbps")
            row[f"{name}_J"] = _get(st, reno_rtt_ms, cubic, "jain")
        row["kernel_J_sd"] = _get(cols["kernel"], reno_rtt_ms, cubic, "jain_sd")
        row["kernel_n"] = _get(cols["kernel"], reno_rtt_ms, cubic, "n")
        row["ns3_standard_J_sd"] = _get(cols["ns3_standard"], reno_rtt_ms, cubic, "jain_sd")
        row["ns3_n"] = _get(cols["ns3_standard"], reno_rtt_ms, cubic, "n")
        se_std = se("ns3_standard", reno_rtt_ms, cubic)
        row["ns3_standard_J_se"] = se_std
        for rd in READINGS:
            d = row[f"ns3_{rd}_J"] - row["ns3_standard_J"]
            s = significant(d, se(f"ns3_{rd}", reno_rtt_ms, cubic), se_std)
            row[f"ns3_{rd}_dJ"] = d
            row[f"ns3_{rd}_verdict"] = ("no data" if d != d else
                                       {1: "fairer", -1: "less fair", 0: "within spread"}[s])
        se_k = se("kernel", reno_rtt_ms, cubic)
        for rd in READINGS:
            d = row[f"kernel_{rd}_J"] - row["kernel_J"]
            s = significant(d, se(f"kernel_{rd}", reno_rtt_ms, cubic), se_k)
            row[f"kernel_{rd}_n"] = _get(cols[f"kernel_{rd}"], reno_rtt_ms, cubic, "n")
            row[f"kernel_{rd}_dJ"] = d
            row[f"kernel_{rd}_verdict"] = ("no data" if d != d else
                                          {1: "fairer", -1: "less fair", 0: "within spread"}[s])
        rows.append(row)
    return pd.DataFrame(rows)


#: Columns of a fairness table shown per engine (the rest are in the full table).
FIGURE_COLUMNS = ["ratio", "paper", "kernel_rate_mbps", "ns3_rate_mbps", "kernel_reno", "kernel_cubic", "kernel_J", "kernel_J_sd", "kernel_multiply_J",
                  "kernel_divide_J", "ns3_standard_reno",
                  "ns3_standard_cubic", "ns3_standard_J", "ns3_multiply_reno", "ns3_multiply_cubic", "ns3_multiply_J",
                  "ns3_divide_reno", "ns3_divide_cubic", "ns3_divide_J", "fluid_none_J", "fluid_multiply_J",
                  "fluid_divide_J", "ns3_n", "kernel_n"]
