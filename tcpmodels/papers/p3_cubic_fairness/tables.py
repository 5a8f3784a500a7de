"""P3's tables: Figs. 3-5 as fairness tables, ns-3 against the kernel, the K values, the per-run differences."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from tcpmodels.papers.common import Comparison, comparison_frame
from tcpmodels.papers.p3_cubic_fairness.data import (
    PAPER_DIRECTION,
    READINGS,
    P3Dataset,
    kernel_all_testbeds,
    cell_stats,
    fluid_at,
    fluid_rates_bps,
    kernel_rate_bps,
    kernel_runs,
    kernel_testbed,
    ns3_duration_s,
    ns3_rate_bps,
    ns3_runs,
    ns3_settings,
    proposal_setting,
    run_spread_proxy,
    significant,
)

def _ns3_main(ds: P3Dataset, exponent: float | None = None) -> pd.DataFrame:
    """ns-3 runs of the main grid at the ns-3 rate (:func:`ns3_rate_bps`) and of the setting the tables use
    (:func:`ns3_duration_s`): standard, and the readings at the default exponent (or ``exponent``)."""
    df = ns3_runs(ds)
    if len(df) == 0:
        return df
    df = df[np.isclose(df["rate_bps"], ns3_rate_bps(ds))]
    dur = ns3_duration_s(ds)
    if dur == dur:
        df = df[np.isclose(df["duration_s"], dur)]
    expo = ds.provenance.get("config", {}).get("x_exponent", -1 / 3) if exponent is None else exponent
    keep = (df["kind"] == "standard") | np.isclose(df["x_exponent"], expo)
    return df[keep]


def _columns(ds: P3Dataset, exponent: float | None = None) -> dict[str, pd.DataFrame]:
    """Cell statistics of every column of the fairness tables, keyed by column name."""
    pair = ["reno_rtt_ms", "cubic_rtt_ms"]
    out = {"kernel": cell_stats(kernel_runs(ds, "standard"), pair)}
    for kind in READINGS:
        out[f"kernel_{kind}"] = cell_stats(kernel_runs(ds, kind), pair)
    ns = _ns3_main(ds, exponent)
    for kind in ("standard", *READINGS):
        out[f"ns3_{kind}"] = cell_stats(ns[ns["kind"] == kind] if len(ns) else ns, pair)
    expo = ds.provenance.get("config", {}).get("x_exponent", -1 / 3) if exponent is None else exponent
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


def fairness_table(ds: P3Dataset, reno_rtt_ms: float, *, exponent: float | None = None) -> pd.DataFrame:
    """Figs. 3-5 as a table for one Reno RTT: per CUBIC RTT, each engine's throughputs and Jain's index.

    Columns: ``ratio`` (Reno:CUBIC RTT as the paper's x axis), ``paper`` (the
    direction the paper states for the proposal), then per column
    ``<col>_reno``, ``<col>_cubic`` [Mbit/s] and ``<col>_J`` for ``kernel`` (kernel ``cubic``),
    ``kernel_multiply``, ``kernel_divide`` (``tm_cubic_x``; all kernel columns at
    :func:`~tcpmodels.papers.p3_cubic_fairness.data.proposal_setting`), ``ns3_standard``, ``ns3_multiply``, ``ns3_divide``, ``fluid_none``,
    ``fluid_multiply``, ``fluid_divide``, the spread ``kernel_J_sd`` and
    ``ns3_standard_J_sd``, and ``ns3_<reading>_dJ`` (proposal minus standard)
    with ``ns3_<reading>_verdict`` (fairer / less fair / within spread), and the same
    ``kernel_<reading>_dJ`` / ``kernel_<reading>_verdict`` for the kernel (a kernel cell with one
    run takes its window spread, or the run-spread floor, as its standard error). The engines run
    at their own rates, stated in ``kernel_rate_mbps``, ``ns3_rate_mbps`` and ``fluid_rate_mbps``
    (the fluid columns at the kernel columns' rate); the verdicts compare within one engine only.

    Parameters
    ----------
    ds : P3Dataset
        The campaign's data.
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
    return _fairness_table(ds, reno_rtt_ms, _columns_by_pair(ds, exponent), run_spread_proxy(ds))


def _columns_by_pair(ds: P3Dataset, exponent: float | None) -> dict[str, dict]:
    """:func:`_columns` keyed by (Reno RTT, CUBIC RTT): what every fairness table reads, whatever its Reno RTT."""
    return {name: _by_pair(st) for name, st in _columns(ds, exponent).items()}


def _fairness_table(ds: P3Dataset, reno_rtt_ms: float, cols: dict[str, dict], proxy: float) -> pd.DataFrame:
    """:func:`fairness_table` from its inputs (:func:`_columns_by_pair`, :func:`run_spread_proxy`), computed once
    for the three Reno RTTs by :func:`tables`."""
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
        counts = at_rate.groupby("measure_s").size().sort_values(kind="stable")
        kruns = at_rate[np.isclose(at_rate["measure_s"], float(counts.index[-1]))]
    else:
        kruns = kernel_runs(ds, "standard", "most")
    k_rate = float(kruns["rate_bps"].iloc[0]) if len(kruns) else math.nan
    same_rate = bool(np.isclose(k_rate, ns_rate))
    k = cell_stats(kruns, ["reno_rtt_ms", "cubic_rtt_ms"])
    ns = _ns3_main(ds)
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
    ds : P3Dataset
        The campaign's data.
    exponent : float, optional
        x(RTT) exponent; default the campaign's. [-]

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

    expo = ds.provenance.get("config", {}).get("x_exponent", -1 / 3) if exponent is None else exponent
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


def _cpu_drop_row(kern: pd.DataFrame) -> Comparison:
    """Headline row: how many kernel samples lost packets outside the bottleneck queue (CPU-induced loss).

    The rate was chosen as the fastest without such loss in a pilot; this row checks that
    choice on every sample the tables use (``cpu_drops``: other qdiscs' and the interfaces'
    drops, None in records older than the count, plus the delay elements' own drops in the
    samples that read them, ``delay_element_drops``: records since 2026-11-28). [samples]
    """
    row = dict(quantity="kernel samples with drops outside the bottleneck queue", paper=math.nan, unit="samples")
    known = kern[kern["cpu_drops"].notna()] if "cpu_drops" in kern.columns else kern.iloc[:0]
    if len(known) == 0:
        return Comparison(**row, ours=math.nan, note="not counted in these records (older than the drop count)")
    hit = known[known["cpu_drops"] > 0]
    n_elem = int(known["delay_element_drops"].notna().sum()) if "delay_element_drops" in known.columns else 0
    elements = f" (the delay elements' own drops read in {n_elem} of them)"
    if len(hit) == 0:
        note = f"of {len(known)} samples with the count{elements}: none lost a packet outside the bottleneck queue"
    else:
        w = hit.loc[hit["cpu_drops"].idxmax()]
        note = (f"of {len(known)} samples with the count{elements}; the most: {int(w['cpu_drops'])} packets "
                f"({w['cpu_drops'] / (w['cpu_drops'] + w['queue_drops']):.0%} of that sample's drops) at "
                f"{w['reno_rtt_ms']:g}:{w['cubic_rtt_ms']:g} ms, {w['kind']}, repetition {int(w['rep'])}; "
                "the tables keep these samples")
    return Comparison(**row, ours=float(len(hit)), note=note)


def _unmatched_retrans_row(kern: pd.DataFrame) -> Comparison:
    """Headline row: the share of a kernel sample's retransmissions that no counted drop explains. [%]

    Every drop is retransmitted, so retransmissions minus drops (queue and elsewhere) are spurious
    retransmissions (timeouts, loss probes, reordering) or loss the sample does not count. Records
    before 2026-11-28 did not read the delay elements' own drops nor the senders' TcpExt counters,
    so they do not tell the two apart; the note gives, for the samples that have them, the senders'
    loss probes, spurious timeouts and DSACKs received (:data:`~tcpmodels.experiments.p3.kernel.TCP_EXT_COLUMNS`).
    Median over the samples the tables use, and the sample with the most.
    """
    row = dict(quantity="retransmissions without a counted drop (kernel)", paper=math.nan, unit="%")
    none = Comparison(**row, ours=math.nan, note="no sample with retransmissions and both drop counts")
    if not {"reno_retrans", "cubic_retrans", "queue_drops", "cpu_drops"} <= set(kern.columns):
        return none
    retrans = kern["reno_retrans"] + kern["cubic_retrans"]
    keep = kern["cpu_drops"].notna() & kern["queue_drops"].notna() & (retrans > 0)
    known, retrans = kern[keep], retrans[keep]
    if len(known) == 0:
        return none
    share = 100.0 * (1.0 - (known["queue_drops"] + known["cpu_drops"]) / retrans)
    w = known.loc[share.idxmax()]
    note = (f"median over {len(known)} samples; the most: {share.max():.0f}% at {w['reno_rtt_ms']:g}:"
            f"{w['cubic_rtt_ms']:g} ms, {w['kind']}, repetition {int(w['rep'])}: spurious retransmissions or loss "
            "the samples do not count")
    ext = known[known["sender_loss_probes"].notna()] if "sender_loss_probes" in known.columns else known.iloc[:0]
    if len(ext):
        excess = (retrans[ext.index] - ext["queue_drops"] - ext["cpu_drops"]).sum()
        dsacked = f"{ext['sender_dsack_recv'].sum() / excess:.0%}" if excess > 0 else "n/a (none)"
        note += (f"; in the {len(ext)} samples with the senders' TcpExt counters, DSACKs (duplicates the receiver "
                 f"got: spurious retransmissions) match {dsacked} of those retransmissions, and per sample "
                 f"(median): {ext['sender_loss_probes'].median():g} loss probes, "
                 f"{ext['sender_spurious_rtos'].median():g} spurious timeouts, "
                 f"{ext['sender_dsack_recv'].median():g} DSACKs received")
        if "sender_reordering_events" in ext.columns:
            note += f", {ext['sender_reordering_events'].median():g} reordering events"
    else:
        note += " (these records do not tell them apart)"
    return Comparison(**row, ours=float(share.median()), note=note)


def _headline(ds: P3Dataset) -> pd.DataFrame:
    prov = ds.provenance
    ns = _ns3_main(ds)
    # the kernel rows the tables use: the proposal's setting, every kind (not the first campaign's 100 Mbit/s rows)
    kern = pd.concat([kernel_runs(ds, kind) for kind in ("standard", *READINGS)], ignore_index=True)
    cfg = prov.get("config", {})
    rows = [
        Comparison(quantity="bottleneck rate (kernel)", paper=1000.0, ours=kernel_rate_bps(ds) / 1e6, unit="Mbit/s",
                   note="paper: implied by the plots' axes (600-800 Mbit/s); ours: the fastest the testbed carried "
                        "without CPU-induced loss"),
        Comparison(quantity="bottleneck rate (ns-3)", paper=1000.0, ours=ns3_rate_bps(ds) / 1e6, unit="Mbit/s",
                   note="its own rate (P3Config.ns3_rate_bps): compared with the fluid model at this rate"),
        Comparison(quantity="receive window", paper=10.0, ours=cfg.get("rwnd_bytes", math.nan) / 2**20, unit="MB",
                   note="tcp_rmem max on the receiver; never binding here (BDP + buffer <= 4 MB at 400 Mbit/s)"),
        Comparison(quantity="RTT pairs", paper=12.0, ours=float(len(kern.groupby(["reno_rtt_ms", "cubic_rtt_ms"])))
                   if len(kern) else math.nan, unit="pairs", note="kernel grid covered at the kernel rate above"),
        Comparison(quantity="repetitions per pair (kernel)", paper=math.nan,
                   ours=float(kern.groupby(["kind", "reno_rtt_ms", "cubic_rtt_ms"]).size().min()) if len(kern)
                   else math.nan, unit="runs",
                   note="the paper does not say; ours: the fewest of any pair and kind at the kernel rate above"),
        _cpu_drop_row(kern),
        _unmatched_retrans_row(kern),
        Comparison(quantity="measured time per run (kernel)", paper=math.nan,
                   ours=float(kern["span_s"].median()) if "span_s" in kern else math.nan, unit="s",
                   note="after warm-up, at the kernel rate above"),
        Comparison(quantity="seeds per cell (ns-3 standard)", paper=math.nan,
                   ours=float(ns[ns["kind"] == "standard"].groupby(["reno_rtt_ms", "cubic_rtt_ms"]).size().min())
                   if len(ns) else math.nan, unit="runs",
                   note="random start offsets per seed; the ns-3 setting the tables use (ns3_settings)"),
        Comparison(quantity="simulated time per run (ns-3)", paper=math.nan, ours=ns3_duration_s(ds), unit="s",
                   note=f"after {float(ns['warmup_s'].iloc[0]) if len(ns) and 'warmup_s' in ns else math.nan:g} s "
                        "warm-up; the setting with most complete seeds in every pair (ns3_settings)"),
    ]
    return comparison_frame(rows)


def tables(ds: P3Dataset, *, quick: bool = False, seed: int = 0, exponent: float | None = None) -> dict[str, pd.DataFrame]:
    """Every table of the reproduction.

    Keys: ``fairness_reno1``, ``fairness_reno4``, ``fairness_reno16``
    (:func:`fairness_table`), ``cross_validation``, ``engines`` (:func:`engine_table`: kernel vs
    ns-3 vs fluid per pair and kind), ``k_values``, ``headline``
    (set-up, paper versus ours), ``closing`` (Reno 1 ms: Jain's index of
    kernel, ns-3 standard, ns-3 in each reading), ``paired_multiply`` and ``paired_divide``
    (:func:`paired_dj`, the per-run differences the claims are judged on), ``kernel_paired_multiply`` and
    ``kernel_paired_divide`` (:func:`kernel_paired_dj`), ``testbeds`` (:func:`testbed_comparison`: the samples
    run on both kernel testbeds; the other kernel tables use :func:`kernel_testbed`'s). ``quick`` and ``seed``
    change nothing here (all tables come from the shipped dataset and take well under a second).

    Parameters
    ----------
    ds : P3Dataset
        The campaign's data.
    quick : bool
        Unused; accepted for the papers' common ``tables`` signature.
    seed : int
        Unused; accepted for the papers' common ``tables`` signature.
    exponent : float, optional
        x(RTT) exponent of the proposal's results; default the campaign's. [-]

    Returns
    -------
    dict of str to pandas.DataFrame
        The tables under the keys above.
    """
    cols, proxy = _columns_by_pair(ds, exponent), run_spread_proxy(ds)  # the same for every Reno RTT
    out = {f"fairness_reno{r:g}": _fairness_table(ds, r, cols, proxy) for r in (1.0, 4.0, 16.0)}
    out["cross_validation"] = cross_validation(ds)
    out["engines"] = engine_table(ds, exponent=exponent)
    out["k_values"] = k_table(ds, exponent=exponent)
    out["headline"] = _headline(ds)
    t1 = out["fairness_reno1"]
    out["closing"] = t1[["ratio", "paper", "kernel_reno", "kernel_cubic", "kernel_J", "kernel_J_sd", "ns3_standard_J",
                         "ns3_standard_J_sd", "ns3_multiply_J", "ns3_multiply_verdict", "ns3_divide_J",
                         "ns3_divide_verdict", "fluid_none_J", "fluid_multiply_J", "fluid_divide_J"]].copy()
    for reading in READINGS:
        out[f"paired_{reading}"] = paired_dj(ds, reading, exponent=exponent)
        out[f"kernel_paired_{reading}"] = kernel_paired_dj(ds, reading)
    out["testbeds"] = testbed_comparison(ds)
    return out


def paired_dj(ds: P3Dataset, reading: str, *, exponent: float | None = None) -> pd.DataFrame:
    """Per ns-3 run: Jain's index with standard CUBIC and with the proposal (same RTT pair, same seed), and dJ.

    The unit the claims are judged on: one row per (Reno RTT, CUBIC RTT, seed), columns
    ``reno_rtt_ms, cubic_rtt_ms, seed, J_standard, J_proposal, dJ`` (proposal minus standard).

    Parameters
    ----------
    ds : P3Dataset
        The campaign's data (its ``ns3`` runs).
    reading : {"multiply", "divide"}
        The reading of eq. (4) the proposal runs used.
    exponent : float, optional
        x(RTT) exponent of the proposal runs; default the campaign's. [-]

    Returns
    -------
    pandas.DataFrame
        The rows of the runs present with both kinds, sorted by the key; empty with those columns
        when there are no ns-3 runs.
    """
    ns = _ns3_main(ds, exponent)
    key = ["reno_rtt_ms", "cubic_rtt_ms", "seed"]
    if len(ns) == 0:
        return pd.DataFrame(columns=[*key, "J_standard", "J_proposal", "dJ"])
    std = ns[ns["kind"] == "standard"][[*key, "jain"]].rename(columns={"jain": "J_standard"})
    prop = ns[ns["kind"] == reading][[*key, "jain"]].rename(columns={"jain": "J_proposal"})
    m = std.merge(prop, on=key, how="inner").sort_values(key).reset_index(drop=True)
    return m.assign(dJ=m["J_proposal"] - m["J_standard"])


def kernel_paired_dj(ds: P3Dataset, reading: str) -> pd.DataFrame:
    """Per kernel repetition: Jain's index with the kernel's ``cubic`` and with ``tm_cubic_x`` in ``reading``, and dJ.

    The samples of one RTT pair and repetition share their start offsets
    (:func:`tcpmodels.experiments.p3.kernel_plan`), so they pair like the ns-3 seeds; both at
    :func:`~tcpmodels.papers.p3_cubic_fairness.data.proposal_setting`.

    Parameters
    ----------
    ds : P3Dataset
        The campaign's data (its ``kernel`` samples).
    reading : {"multiply", "divide"}
        The reading of eq. (4).

    Returns
    -------
    pandas.DataFrame
        ``reno_rtt_ms, cubic_rtt_ms, rep, J_standard, J_proposal, dJ``, one row per pair and
        repetition with both kinds, sorted; empty with those columns otherwise.
    """
    key = ["reno_rtt_ms", "cubic_rtt_ms", "rep"]
    std, prop = kernel_runs(ds, "standard"), kernel_runs(ds, reading)
    if len(std) == 0 or len(prop) == 0:
        return pd.DataFrame(columns=[*key, "J_standard", "J_proposal", "dJ"])
    a = std[std["jain"].notna()][[*key, "jain"]].rename(columns={"jain": "J_standard"})
    b = prop[prop["jain"].notna()][[*key, "jain"]].rename(columns={"jain": "J_proposal"})
    m = a.merge(b, on=key, how="inner").sort_values(key).reset_index(drop=True)
    return m.assign(dJ=m["J_proposal"] - m["J_standard"])


def engine_table(ds: P3Dataset, *, exponent: float | None = None) -> pd.DataFrame:
    """Kernel vs ns-3 vs fluid model per RTT pair and kind: Jain's index, CUBIC's share and K, each engine at its rate.

    The kernel at :func:`~tcpmodels.papers.p3_cubic_fairness.data.proposal_setting` (``standard``:
    kernel ``cubic``; ``multiply`` / ``divide``: ``tm_cubic_x``), ns-3 ``TcpCubic`` /
    ``TcpCubicX`` at its grid's rate (:func:`~tcpmodels.papers.p3_cubic_fairness.data.ns3_rate_bps`),
    and the fluid model (reading ``none`` for standard) at the campaign's x(RTT) exponent **at
    each engine's rate** (:func:`~tcpmodels.papers.p3_cubic_fairness.data.fluid_at`): the
    ``kernel_fluid_*`` columns are the model at ``kernel_rate_mbps``, the ``ns3_fluid_*`` columns
    at ``ns3_rate_mbps``. Compare the kernel with its fluid columns and ns-3 with its own;
    kernel against ns-3 only where ``same_rate`` (a fluid column is NaN where the model was not
    run at that rate).

    Parameters
    ----------
    ds : P3Dataset
        The campaign's data.
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
    ns = _ns3_main(ds, exponent)
    expo = ds.provenance.get("config", {}).get("x_exponent", -1 / 3) if exponent is None else exponent

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


# ------------------------------------------------------------------- plots


def setting_table(ds: P3Dataset) -> pd.DataFrame:
    """Per RTT: BDP, W_max and K of a flow alone, ours beside the paper's (from the provenance's scaling).

    Parameters
    ----------
    ds : P3Dataset
        The campaign's data (its provenance's ``scaling.per_rtt``).

    Returns
    -------
    pandas.DataFrame
        One row per RTT (index as in the provenance); those of the columns ``bdp_bytes`` [bytes],
        ``w_max_alone_segments`` [segments], ``k_alone_s`` [s] and their ``paper_`` counterparts
        that the provenance holds.
    """
    per_rtt = pd.DataFrame(ds.provenance.get("scaling", {}).get("per_rtt", {})).T
    cols = ["bdp_bytes", "w_max_alone_segments", "k_alone_s", "paper_bdp_bytes", "paper_w_max_alone_segments",
            "paper_k_alone_s"]
    return per_rtt[[c for c in cols if c in per_rtt.columns]]


def provenance_table(ds: P3Dataset) -> pd.Series:
    """When and how the data were taken: the kernel samples' times, load and lock waits, the ns-3 runs, versions.

    Parameters
    ----------
    ds : P3Dataset
        The campaign's data (its provenance and table sizes).

    Returns
    -------
    pandas.Series
        Named ``provenance``, one entry per item (times in UTC, durations in min as labelled).
    """
    prov = ds.provenance
    k, ns = prov.get("kernel", {}), prov.get("ns3", {})
    load = k.get("load_avg_1m", {})
    return pd.Series({
        "kernel: samples (of planned)": f"{len(ds.kernel)} of {k.get('n_planned', '?')}",
        "kernel: samples per testbed (the tables use)": ", ".join(
            f"{t} {n}" for t, n in kernel_all_testbeds(ds).groupby("testbed").size().items()) + f" ({kernel_testbed(ds)})",
        "kernel: first / last sample (UTC)": f"{k.get('first_sample_utc')} / {k.get('last_sample_utc')}",
        "kernel: sum of sample wall times [min]": round(k.get("sample_wall_s", {}).get("sum", math.nan) / 60, 1),
        "kernel: waiting for the host lock [min]": round(k.get("lock_wait_s_sum", math.nan) / 60, 1),
        "kernel: load average 1 min (min / median / max)":
            f"{load.get('min')} / {load.get('median')} / {load.get('max')}",
        "kernel: congestion controls read back": ", ".join(k.get("congestion_control_effective", [])),
        "ns-3: runs (of planned)": f"{len(ds.ns3)} of {ns.get('n_planned', 0)}",
        "ns-3: settings [s simulated: runs, complete seeds in the least-covered pair]": "; ".join(
            f"{r.duration_s:g} s: {r.n_runs}, {r.min_complete_seeds}" + (" (used)" if r.used else "")
            for r in ns3_settings(ds).itertuples()),
        "ns-3: phases complete": ", ".join(map(str, ns.get("phases_complete", []))),
        "ns-3: sum of wall times [min]": round(ns.get("wall_s_sum", math.nan) / 60, 1),
        "ns-3 version": ns.get("ns3_version"), "kernel (uname -r)": prov.get("host", {}).get("kernel"),
        "git commit": prov.get("git", {}).get("commit"), "fluid model rows": len(ds.fluid),
        "rates [Mbit/s]: kernel columns / ns-3 / fluid model":
            f"{kernel_rate_bps(ds) / 1e6:g} / {ns3_rate_bps(ds) / 1e6:g} / "
            + ", ".join(f"{r / 1e6:g}" for r in fluid_rates_bps(ds)),
    }, name="provenance")


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


#: Columns of a fairness table shown per engine (the rest are in the full table).
FIGURE_COLUMNS = ["ratio", "paper", "kernel_rate_mbps", "ns3_rate_mbps", "kernel_reno", "kernel_cubic", "kernel_J", "kernel_J_sd", "kernel_multiply_J",
                  "kernel_divide_J", "ns3_standard_reno",
                  "ns3_standard_cubic", "ns3_standard_J", "ns3_multiply_reno", "ns3_multiply_cubic", "ns3_multiply_J",
                  "ns3_divide_reno", "ns3_divide_cubic", "ns3_divide_J", "fluid_none_J", "fluid_multiply_J",
                  "fluid_divide_J", "ns3_n", "kernel_n"]
