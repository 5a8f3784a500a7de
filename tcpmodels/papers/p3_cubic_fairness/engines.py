"""P3's engines against each other: ns-3 against the kernel per cell, both engines side by side, the kernel's testbeds, and the K values."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from tcpmodels.papers.p3_cubic_fairness.cells import cell_stats, significant
from tcpmodels.papers.p3_cubic_fairness.data import PARAMETERS as _PARAMETERS
from tcpmodels.papers.p3_cubic_fairness.data import READINGS, P3Dataset
from tcpmodels.papers.p3_cubic_fairness.fairness import ns3_main_runs
from tcpmodels.papers.p3_cubic_fairness.runs import (
    campaign_exponent,
    fluid_at,
    kernel_all_testbeds,
    kernel_rate_bps,
    kernel_runs,
    kernel_testbed,
    most_run_setting,
    ns3_rate_bps,
    proposal_setting,
)

__all__ = ["cross_validation", "k_table", "engine_table", "testbed_comparison"]


def cross_validation(ds: P3Dataset) -> pd.DataFrame:
    """ns-3 standard (``TcpLinuxReno`` vs ``TcpCubic``) against the kernel, per RTT pair, at one rate.

    The kernel side is its ``standard`` samples at the ns-3 grid's rate (:func:`ns3_rate_bps`;
    the setting with most samples at that rate), from the testbed the tables use (:func:`kernel_testbed`)
    if it has samples at that rate, else from the testbed with most samples there: a testbed rerun at
    another rate does not take away the only like-for-like check (P3's pinned rerun ran at 400 Mbit/s,
    its first campaign at ns-3's 100 Mbit/s unsteered). ``kernel_testbed`` names the testbed shown.
    Where no testbed has samples at that rate, the kernel's setting with most ``standard`` samples is
    shown beside ns-3 with ``same_rate`` false and ``agree`` None: engines at different rates are not
    judged against each other.

    Columns: both engines' rates and Reno and CUBIC throughput [Mbit/s], CUBIC's share,
    Jain's index with spread, ``dJ`` (ns-3 minus kernel) and ``agree``: the
    indices differ by less than the spread rule or by less than 0.05, and the
    same flow is ahead in both engines.

    Parameters
    ----------
    ds : P3Dataset
        The campaign's data (kernel runs and ns-3 ``standard`` runs).

    Returns
    -------
    pandas.DataFrame
        One row per RTT pair in either engine: ``reno_rtt_ms, cubic_rtt_ms`` [ms], ``kernel_rate_mbps``,
        ``ns3_rate_mbps``, ``kernel_reno_mbps, kernel_cubic_mbps, ns3_reno_mbps, ns3_cubic_mbps`` [Mbit/s],
        ``same_rate``, ``kernel_cubic_share, ns3_cubic_share, kernel_J, kernel_J_sd, ns3_J, ns3_J_sd, dJ`` [-],
        ``kernel_n, ns3_n``, ``kernel_testbed`` and ``agree`` (None where an engine lacks the pair or the rates
        differ).
    """
    ns_rate = ns3_rate_bps(ds)
    testbed = kernel_testbed(ds)
    at_rate = _kernel_standard_at(ds, ns_rate)
    if len(at_rate):
        if not (at_rate["testbed"] == testbed).any():
            testbed = str(at_rate["testbed"].value_counts(sort=True).index[0])
        at_rate = at_rate[at_rate["testbed"] == testbed]
        kruns = at_rate[np.isclose(at_rate["measure_s"], float(most_run_setting(at_rate, "measure_s")))]
    else:
        kruns = kernel_runs(ds, "standard", "most")
    k_rate = float(kruns["rate_bps"].iloc[0]) if len(kruns) else math.nan
    same_rate = bool(np.isclose(k_rate, ns_rate))
    k = cell_stats(kruns, ["reno_rtt_ms", "cubic_rtt_ms"])
    ns = ns3_main_runs(ds)
    ns = ns[ns["kind"] == "standard"] if len(ns) else ns
    n = cell_stats(ns, ["reno_rtt_ms", "cubic_rtt_ms"])
    m = k.merge(n, on=["reno_rtt_ms", "cubic_rtt_ms"], how="outer", suffixes=("_kernel", "_ns3"))
    rows = []
    for _, r in m.iterrows():
        dj = r["jain_ns3"] - r["jain_kernel"]
        sk = r["cubic_mbps_kernel"] / (r["cubic_mbps_kernel"] + r["reno_mbps_kernel"])
        sn = r["cubic_mbps_ns3"] / (r["cubic_mbps_ns3"] + r["reno_mbps_ns3"])
        same_side = (sk - 0.5) * (sn - 0.5) >= 0 or abs(sk - 0.5) < 0.05 or abs(sn - 0.5) < 0.05
        agree = bool(same_side and (significant(dj, r["jain_se_kernel"], r["jain_se_ns3"]) == 0 or abs(dj) < 0.05))
        rows.append({"reno_rtt_ms": r["reno_rtt_ms"], "cubic_rtt_ms": r["cubic_rtt_ms"],
                     "kernel_rate_mbps": k_rate / 1e6, "ns3_rate_mbps": ns_rate / 1e6, "same_rate": same_rate,
                     "kernel_reno_mbps": r["reno_mbps_kernel"], "kernel_cubic_mbps": r["cubic_mbps_kernel"],
                     "ns3_reno_mbps": r["reno_mbps_ns3"], "ns3_cubic_mbps": r["cubic_mbps_ns3"],
                     "kernel_cubic_share": sk, "ns3_cubic_share": sn,
                     "kernel_J": r["jain_kernel"], "kernel_J_sd": r["jain_sd_kernel"], "kernel_n": r["n_kernel"],
                     "ns3_J": r["jain_ns3"], "ns3_J_sd": r["jain_sd_ns3"], "ns3_n": r["n_ns3"], "dJ": dj,
                     "kernel_testbed": testbed, "agree": agree if dj == dj and same_rate else None})
    return pd.DataFrame(rows)


def _kernel_standard_at(ds: P3Dataset, rate_bps: float) -> pd.DataFrame:
    """Kernel ``standard`` rows of every testbed at ``rate_bps`` [bit/s] (none for a NaN rate)."""
    k = kernel_all_testbeds(ds)
    if len(k) == 0 or rate_bps != rate_bps:
        return k.iloc[:0]
    return k[(k["kind"] == "standard") & np.isclose(k["rate_bps"], rate_bps)]


@_PARAMETERS.fill
def k_table(ds: P3Dataset, *, exponent: float | None = None) -> pd.DataFrame:
    """The K values that drive each case, per RTT pair.

    From the kernel (``standard`` samples at the setting with most of them): each flow's W_max (median ssthresh after warm-up / beta:
    0.7 CUBIC, 0.5 Reno) [segments], CUBIC's standard K and the modified K of
    each reading for that W_max [s] (:func:`~tcpmodels.models.cubic.kozu_k_s`
    with x(RTT) at the CUBIC flow's RTT), and Reno's recovery time from W/2
    back to W, ``W_max/2 x srtt`` [s] — the time CUBIC's K competes with. From
    the fluid model at the same rate as those kernel samples (:func:`fluid_at`): W_max at losses
    and K in each reading (each reading's own W_max, since the modified K changes the equilibrium).

    Parameters
    ----------
    {ds}
    {exponent}

    Returns
    -------
    pandas.DataFrame
        One row per RTT pair of the kernel or fluid data: ``reno_rtt_ms, cubic_rtt_ms`` [ms], ``x`` [-],
        ``kernel_cubic_wmax_segments, kernel_reno_wmax_segments`` [segments], ``kernel_K_standard_s``,
        ``kernel_K_<reading>_s``, ``kernel_reno_recovery_s`` [s], ``fluid_<reading>_wmax_segments``
        [segments] and ``fluid_K_<reading>_s`` [s] (readings ``none``, ``multiply``, ``divide``), and
        ``rate_mbps``, the rate of both. [Mbit/s]
    """
    from tcpmodels.models.cubic import PowerLawX, cubic_k_s, kozu_k_s, kozu_x, x_power_law_params

    expo = campaign_exponent(ds, exponent)
    xfn = PowerLawX(**x_power_law_params(expo))
    rows = []
    kern = kernel_runs(ds, "standard", "most")
    kern = kern[kern["jain"].notna()] if len(kern) else kern
    rate = float(kern["rate_bps"].iloc[0]) if len(kern) else kernel_rate_bps(ds)
    fl = fluid_at(ds, rate)
    pairs = sorted({(float(a), float(b)) for a, b in zip(kern.get("reno_rtt_ms", []), kern.get("cubic_rtt_ms", []))}
                   | {(float(a), float(b)) for a, b in zip(fl.get("reno_rtt_ms", []), fl.get("cubic_rtt_ms", []))})
    for reno, cubic in pairs:
        g = kern[(kern["reno_rtt_ms"] == reno) & (kern["cubic_rtt_ms"] == cubic)] if len(kern) else kern
        w = float(g["cubic_wmax_segments"].median()) if len(g) else math.nan
        wr = float(g["reno_wmax_segments"].median()) if len(g) else math.nan
        srtt_r = float(g["reno_srtt_ms"].median()) / 1e3 if len(g) else math.nan
        row = {"reno_rtt_ms": reno, "cubic_rtt_ms": cubic, "rate_mbps": rate / 1e6, "x": float(kozu_x(cubic * 1e-3, xfn)),
               "kernel_cubic_wmax_segments": w, "kernel_reno_wmax_segments": wr,
               "kernel_K_standard_s": float(cubic_k_s(w)) if w == w else math.nan}
        for rd in READINGS:
            row[f"kernel_K_{rd}_s"] = float(kozu_k_s(w, cubic * 1e-3, reading=rd, x_of_rtt=xfn)) if w == w else math.nan
        row["kernel_reno_recovery_s"] = wr / 2 * srtt_r if wr == wr else math.nan
        for rd in ("none", *READINGS):
            f = fl[(fl["reno_rtt_ms"] == reno) & (fl["cubic_rtt_ms"] == cubic) & (fl["reading"] == rd)]
            if rd != "none":
                f = f[np.isclose(f["x_exponent"], expo)]
            row[f"fluid_{rd}_wmax_segments"] = float(f["cubic_wmax_segments"].iloc[0]) if len(f) else math.nan
            row[f"fluid_K_{rd}_s"] = float(f["cubic_k_s"].iloc[0]) if len(f) else math.nan
        rows.append(row)
    return pd.DataFrame(rows)


@_PARAMETERS.fill
def engine_table(ds: P3Dataset, *, exponent: float | None = None) -> pd.DataFrame:
    """Kernel vs ns-3 vs fluid model per RTT pair and kind: Jain's index, CUBIC's share and K, each engine at its rate.

    The kernel at :func:`~tcpmodels.papers.p3_cubic_fairness.runs.proposal_setting` (``standard``:
    kernel ``cubic``; ``multiply`` / ``divide``: ``tm_cubic_x``), ns-3 ``TcpCubic`` /
    ``TcpCubicX`` at its grid's rate (:func:`~tcpmodels.papers.p3_cubic_fairness.runs.ns3_rate_bps`),
    and the fluid model (reading ``none`` for standard) at the campaign's x(RTT) exponent **at
    each engine's rate** (:func:`~tcpmodels.papers.p3_cubic_fairness.runs.fluid_at`): the
    ``kernel_fluid_*`` columns are the model at ``kernel_rate_mbps``, the ``ns3_fluid_*`` columns
    at ``ns3_rate_mbps``. Compare the kernel with its fluid columns and ns-3 with its own;
    kernel against ns-3 only where ``same_rate`` (a fluid column is NaN where the model was not
    run at that rate).

    Parameters
    ----------
    {ds}
    exponent : float, optional
        x(RTT) exponent of the proposal's ns-3 and fluid results; default the campaign's. [-]

    Returns
    -------
    pandas.DataFrame
        One row per (kind, Reno RTT, CUBIC RTT): ``kind``, ``reno_rtt_ms``, ``cubic_rtt_ms`` [ms],
        ``same_rate``; ``kernel_rate_mbps`` [Mbit/s], ``kernel_measure_s`` [s], ``kernel_n``,
        ``kernel_J``, ``kernel_J_sd``, ``kernel_cubic_share`` [-], ``kernel_K_observed_s`` [s]
        (median of the samples' observed K), ``kernel_fluid_J``, ``kernel_fluid_cubic_share`` [-];
        ``ns3_rate_mbps`` [Mbit/s], ``ns3_n``, ``ns3_J``, ``ns3_J_sd``, ``ns3_cubic_share``,
        ``ns3_fluid_J``, ``ns3_fluid_cubic_share`` [-].
    """
    setting = proposal_setting(ds)
    k_rate = kernel_rate_bps(ds)
    n_rate = ns3_rate_bps(ds)
    ns = ns3_main_runs(ds, exponent)
    expo = campaign_exponent(ds, exponent)

    def fluid_rows(rate, rd):
        fl = fluid_at(ds, rate)
        return fl[(fl["reading"] == rd) & ((rd == "none") | np.isclose(fl["x_exponent"], expo))] if len(fl) else fl

    def pair_rows(df, reno, cubic):
        return df[(df["reno_rtt_ms"] == reno) & (df["cubic_rtt_ms"] == cubic)] if len(df) else df

    def mean_share(g):
        return float((g["cubic_bps"] / (g["cubic_bps"] + g["reno_bps"])).mean()) if len(g) else math.nan

    rows = []
    for kind in ("standard", *READINGS):
        k = kernel_runs(ds, kind)
        k = k[k["jain"].notna()] if len(k) else k
        n = ns[ns["kind"] == kind] if len(ns) else ns
        rd = "none" if kind == "standard" else kind
        fk, fn = fluid_rows(k_rate, rd), fluid_rows(n_rate, rd)
        pairs = sorted({(float(a), float(b)) for df in (k, n, fk, fn) if len(df)
                        for a, b in zip(df["reno_rtt_ms"], df["cubic_rtt_ms"])})
        for reno, cubic in pairs:
            row = {"kind": kind, "reno_rtt_ms": reno, "cubic_rtt_ms": cubic,
                   "same_rate": bool(np.isclose(k_rate, n_rate)),
                   "kernel_rate_mbps": k_rate / 1e6, "kernel_measure_s": setting[1] if setting else math.nan}
            g = pair_rows(k, reno, cubic)
            ko = g["cubic_k_observed_s"] if "cubic_k_observed_s" in g else pd.Series(dtype=float)
            f = pair_rows(fk, reno, cubic)
            row.update({"kernel_n": len(g), "kernel_J": float(g["jain"].mean()) if len(g) else math.nan,
                        "kernel_J_sd": float(g["jain"].std()) if len(g) > 1 else math.nan,
                        "kernel_cubic_share": mean_share(g),
                        "kernel_K_observed_s": float(ko.median()) if ko.notna().any() else math.nan,
                        "kernel_fluid_J": float(f["jain"].mean()) if len(f) else math.nan,
                        "kernel_fluid_cubic_share": mean_share(f)})
            g, f = pair_rows(n, reno, cubic), pair_rows(fn, reno, cubic)
            row.update({"ns3_rate_mbps": n_rate / 1e6, "ns3_n": len(g),
                        "ns3_J": float(g["jain"].mean()) if len(g) else math.nan,
                        "ns3_J_sd": float(g["jain"].std()) if len(g) > 1 else math.nan,
                        "ns3_cubic_share": mean_share(g),
                        "ns3_fluid_J": float(f["jain"].mean()) if len(f) else math.nan,
                        "ns3_fluid_cubic_share": mean_share(f)})
            rows.append(row)
    return pd.DataFrame(rows)


def testbed_comparison(ds: P3Dataset) -> pd.DataFrame:
    """The kernel samples rerun on another testbed, beside the unsteered ones: what the testbed changed.

    A rerun sample (``steered`` or ``pinned``) repeats an unsteered one (same kind, RTT pair, repetition, start
    offsets, rate and measured span; ``tcpmodels.experiments.p3.kernel_plan``), so each such pair is one unit:
    the rerun's value minus the unsteered one. One row per rerun testbed, kind and RTT pair with at least one unit.

    Parameters
    ----------
    ds : P3Dataset
        The campaign's data (every testbed, whatever :func:`kernel_testbed` says).

    Returns
    -------
    pandas.DataFrame
        ``rerun`` (the testbed compared with ``reordering``), ``kind``, ``reno_rtt_ms``, ``cubic_rtt_ms`` [ms],
        ``n`` (units), the means of ``cubic_share`` [-] and ``jain`` [-] on each testbed (suffixes
        ``_reordering`` / ``_rerun``), their mean paired differences ``d_cubic_share`` and ``d_jain`` (rerun
        minus unsteered), the retransmissions of both flows per bottleneck-queue drop on each testbed
        (``retrans_per_drop_*``: 1 when every retransmission repaired a drop) [-], and the mean drops outside
        the bottleneck queue per sample on each testbed (``cpu_drops_*``, CPU-induced loss; NaN where the
        records did not count them) [packets]; empty (with these columns) without such pairs.
    """
    cols = ["rerun", "kind", "reno_rtt_ms", "cubic_rtt_ms", "n", "cubic_share_reordering", "cubic_share_rerun",
            "d_cubic_share", "jain_reordering", "jain_rerun", "d_jain", "retrans_per_drop_reordering",
            "retrans_per_drop_rerun", "cpu_drops_reordering", "cpu_drops_rerun"]
    k = kernel_all_testbeds(ds)
    if "error" in k:
        k = k[k["error"].isna()]
    if "cpu_drops" not in k:
        k = k.assign(cpu_drops=math.nan)
    key = ["kind", "reno_rtt_ms", "cubic_rtt_ms", "rep", "rate_bps", "measure_s"]
    keep = key + ["cubic_share", "jain", "reno_retrans", "cubic_retrans", "queue_drops", "cpu_drops"]
    if len(k) == 0 or not set(keep) <= set(k.columns):
        return pd.DataFrame(columns=cols)
    base = k[k["testbed"] == "reordering"][keep]
    parts = []
    for rerun in ("steered", "pinned"):
        both = base.merge(k[k["testbed"] == rerun][keep], on=key, suffixes=("_reordering", "_rerun"))
        if len(both):
            parts.append(both.assign(rerun=rerun))
    if not parts:
        return pd.DataFrame(columns=cols)
    both = pd.concat(parts, ignore_index=True)
    for t in ("reordering", "rerun"):
        retrans = both[f"reno_retrans_{t}"].astype(float) + both[f"cubic_retrans_{t}"].astype(float)
        both[f"retrans_per_drop_{t}"] = retrans / both[f"queue_drops_{t}"].astype(float).where(lambda x: x > 0)
        both[f"cpu_drops_{t}"] = both[f"cpu_drops_{t}"].astype(float)
    both["d_cubic_share"] = both["cubic_share_rerun"] - both["cubic_share_reordering"]
    both["d_jain"] = both["jain_rerun"] - both["jain_reordering"]
    cell = ["rerun", "kind", "reno_rtt_ms", "cubic_rtt_ms"]
    out = both.groupby(cell, sort=False).agg(n=("rep", "size"), **{c: (c, "mean") for c in cols[5:]}).reset_index()
    return out[cols]
