"""P1 Tables 1, 2 and 4, Fig. 7 and Figs. 8-10 as tables, the LIA allocation, background and campaign tables."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
from scipy import stats

from tcpmodels._docstrings import SharedEntries
from tcpmodels.papers.p1_datacenter_fct.data import (
    CONFIDENCE_LEVEL,
    PAPER_TABLE1,
    PAPER_TABLE2,
    PAPER_TABLE4,
    P1Dataset,
    background_label,
    backgrounds,
    ci_str,
    engines_in,
    fct_summary,
    measured,
    mptcp_ccs,
    ms,
    with_cc,
)
from tcpmodels.papers.p1_datacenter_fct.patterns import table3
from tcpmodels.papers.p1_datacenter_fct.windows import plausible_subflows

__all__ = ["table1", "table2", "table4", "fig7_loss", "fig7_cdf", "figs8_10", "lia_allocation", "background_table",
           "tables", "campaign_table", "load_sensitivity"]

#: Parameters documented once for the docstrings of this module that share them.
_PARAMETERS = SharedEntries("""
    dataset : P1Dataset
        The campaign's data (its ``s4`` short flows that finished).
""")


# ------------------------------------------------------------------- tables
def table1(dataset: P1Dataset) -> pd.DataFrame:
    """Table 1: the paper's setting beside each engine's.

    Parameters
    ----------
    dataset : P1Dataset
        The campaign's data (its provenance: ``config``, ``engines``, ``host``, ``kernel_base_rtt_ms``).

    Returns
    -------
    pandas.DataFrame
        One row per Table 1 parameter: ``parameter, paper, kernel, ns3`` (text with units;
        ``ns3`` is ``"not run"`` when the dataset has no ns-3 runs).
    """
    prov = dataset.provenance
    cfg = prov.get("config", {})
    engines = prov.get("engines", {})
    rows = []
    k_rtt = prov.get("kernel_base_rtt_ms")
    kernel_rtt = (f"{k_rtt:.3f} ms (measured idle round trip; delay element off, see the note)" if k_rtt
                  else "n/a")
    if cfg.get("delay_element"):
        kernel_rtt = f"{cfg['rtt_s'] * 1e3:g} ms (delay element on the host links)"
    for key, paper in PAPER_TABLE1.items():
        if key == "hosts":
            ours = ("16 (36 namespaces)", "16")
        elif key == "MPTCP":
            ccs = mptcp_ccs(dataset.flows, "kernel") or ["uncoupled"]
            how = {"uncoupled": f"uncoupled {cfg.get('cc', 'reno')}", "tm_lia": "LIA (BPF tm_lia)",
                   "tm_olia": "OLIA (BPF tm_olia)"}
            ours = (f"Linux {prov.get('host', {}).get('kernel', '?')} MPTCP v1, one subflow per core; subflows "
                    + " / ".join(how.get(c, c) for c in ccs), "ns3::TcpLia (RFC 6356), NewReno subflows, one per core")
        elif key == "RTT":
            ours = (kernel_rtt, f"{cfg.get('rtt_s', 0.5e-3) * 1e3:g} ms (link delays)")
        elif key == "buffer":
            b = cfg.get("buffer_bytes", 100_000)
            ours = (f"{b / 1e3:g} KB drop-tail (tbf) at each link end", f"{b / 1e3:g} KB drop-tail at each link end")
        else:
            rate = {"core-aggregation": "agg_core_rate_bps", "aggregation-edge": "edge_agg_rate_bps",
                    "edge-host": "host_rate_bps"}[key]
            ours = (f"{cfg.get(rate, math.nan) / 1e6:g} Mbit/s",) * 2
        rows.append({"parameter": key, "paper": paper, "kernel": ours[0],
                     "ns3": ours[1] if "ns3" in engines else "not run"})
    return pd.DataFrame(rows)


def table2(dataset: P1Dataset, *, confidence_level: float = CONFIDENCE_LEVEL) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Table 2: FCT of the Section 4 short flows by background protocol; paper beside each engine.

    Parameters
    ----------
    dataset : P1Dataset
        The campaign's data (its ``s4`` short flows).
    confidence_level : float
        Of the intervals of the mean and the 95th percentile, in (0, 1). [-]

    Returns
    -------
    (wide, long) : tuple of pandas.DataFrame
        ``wide``: one row per background (``TCP``, ``MPTCP`` = each engine's own MPTCP control,
        then ``MPTCP tm_lia``, ``MPTCP tm_olia`` when run; the paper's MPTCP values beside every
        MPTCP row), columns ``paper_*``, ``kernel_*``, ``ns3_*`` for ``mean_ms, std_ms, p95_ms`` and
        ``n``. ``long``: one row per engine and background (with its ``cc``) with the confidence
        intervals and the per-seed spread.
    """
    f = measured(with_cc(dataset.flows), "s4", "short")
    long_rows = []
    for eng in engines_in(f):
        for label, cc, mask in backgrounds(f, eng):
            g = f[mask]
            s = fct_summary(g["fct_s"], confidence_level=confidence_level)
            per_seed = g.groupby("seed")["fct_s"].mean() * 1e3
            long_rows.append({
                "engine": eng, "background": label, "cc": cc or "-", "n_flows": s.n,
                "n_unfinished": int(g["fct_s"].isna().sum()),
                "n_seeds": int(g["seed"].nunique()), "mean_ms": ms(s.mean_s), "mean_ci_ms": ci_str(s.mean_ci_s),
                "std_ms": ms(s.std_s), "p95_ms": ms(s.p95_s), "p95_ci_ms": ci_str(s.p95_ci_s),
                "mean_ms_per_seed": ", ".join(f"{v:.1f}" for v in per_seed),
                "median_ms": float(np.nanmedian(g["fct_s"])) * 1e3, "p99_ms": float(np.nanpercentile(g["fct_s"], 99)) * 1e3,
            })
    long = pd.DataFrame(long_rows)
    labels = ["TCP", "MPTCP"] + [b for b in (long["background"].unique() if len(long) else [])
                                 if b not in ("TCP", "MPTCP")]
    wide = []
    for label in labels:
        paper = PAPER_TABLE2["TCP" if label == "TCP" else "MPTCP"]
        row = {"background": label, "paper_mean_ms": paper[0], "paper_std_ms": paper[1], "paper_p95_ms": paper[2]}
        for eng in ("kernel", "ns3"):
            m = long[(long["engine"] == eng) & (long["background"] == label)] if len(long) else long
            for col in ("mean_ms", "std_ms", "p95_ms"):
                row[f"{eng}_{col}"] = float(m[col].iloc[0]) if len(m) else math.nan
            row[f"{eng}_n"] = int(m["n_flows"].iloc[0]) if len(m) else 0
        wide.append(row)
    return pd.DataFrame(wide), long



def table4(dataset: P1Dataset) -> pd.DataFrame:
    """Table 4: metric per traffic pattern, with the workloads as run.

    Parameters
    ----------
    dataset : P1Dataset
        The campaign's data (its provenance's ``config``: flow sizes and mean inter-arrival times).

    Returns
    -------
    pandas.DataFrame
        Two rows (query, short message): ``traffic, paper_metric, ours_metric, paper_workload,
        ours_workload`` (sizes in KB, inter-arrival times in ms).
    """
    cfg = dataset.provenance.get("config", {})
    q = ", ".join(f"{s / 1e3:g}" for s in cfg.get("query_sizes_bytes", ())) + " KB"
    m = ", ".join(f"{s / 1e3:g}" for s in cfg.get("message_sizes_bytes", ())) + " KB"
    return pd.DataFrame([
        {"traffic": "Query traffic", "paper_metric": PAPER_TABLE4["Query traffic"], "ours_metric": "FCT [ms]",
         "paper_workload": "1-16 KB, Poisson mean 200 ms, to 12 workers; without and with background to 50 %",
         "ours_workload": f"{q}, Poisson mean {cfg.get('query_mean_interarrival_s', math.nan) * 1e3:g} ms per worker"},
        {"traffic": "Short message traffic", "paper_metric": PAPER_TABLE4["Short message traffic"],
         "ours_metric": "FCT [ms]", "paper_workload": "50 KB-1 MB, Poisson mean 500 ms, with background to 50 %",
         "ours_workload": f"{m}, Poisson mean {cfg.get('message_mean_interarrival_s', math.nan) * 1e3:g} ms per worker"},
    ])


def _lossy(g: pd.DataFrame, engine: str) -> pd.Series:
    col = "retransmitted_packets" if engine == "kernel" else "lost_packets"
    if col not in g:
        return pd.Series(pd.NA, index=g.index, dtype="boolean")
    return (pd.to_numeric(g[col], errors="coerce") > 0).astype("boolean").where(g[col].notna())


@_PARAMETERS.fill
def fig7_loss(dataset: P1Dataset) -> pd.DataFrame:
    """Fig. 7's reading: share of 70 KB flows with loss, and the FCT of loss-free and lossy flows.

    Loss is "the sender retransmitted" in the kernel captures and "FlowMonitor counted a
    lost packet" in ns-3. ``lossy_share_ci`` is the Wilson 99 % interval; ``ks_p_lossfree``
    the two-sample Kolmogorov-Smirnov p-value between the loss-free FCTs under TCP and
    that row's MPTCP background (the TCP row: against the engine's own MPTCP control, ``MPTCP``).

    Parameters
    ----------
    {dataset}

    Returns
    -------
    pandas.DataFrame
        One row per engine and background (:func:`~tcpmodels.papers.p1_datacenter_fct.data.backgrounds`):
        ``engine, background, cc, n_flows, lossy_flows,
        lossy_share`` [-], ``lossy_share_ci`` (text), ``lossfree_median_ms``, ``lossfree_p95_ms``,
        ``lossy_median_ms`` [ms] and ``ks_p_lossfree`` [-] (NaN, or no column at all, for an engine
        where either background has fewer than 2 loss-free flows).
    """
    f = measured(with_cc(dataset.flows), "s4", "short")
    rows = []
    for eng in engines_in(f):
        lossfree, eng_rows = {}, []
        for label, cc, mask in backgrounds(f, eng):
            g = f[mask & f["fct_s"].notna()]
            lossy = _lossy(g, eng)
            known = lossy.dropna()
            k, n = int(known.sum()), int(len(known))
            ci = stats.binomtest(k, n).proportion_ci(CONFIDENCE_LEVEL, method="wilson") if n else None
            lf = g.loc[known.index[~known.to_numpy(bool)], "fct_s"] if n else pd.Series(dtype=float)
            ly = g.loc[known.index[known.to_numpy(bool)], "fct_s"] if n else pd.Series(dtype=float)
            lossfree[label] = lf.to_numpy(float)
            eng_rows.append({"engine": eng, "background": label, "cc": cc or "-", "n_flows": n, "lossy_flows": k,
                             "lossy_share": k / n if n else math.nan,
                             "lossy_share_ci": f"[{ci.low:.3f}, {ci.high:.3f}]" if ci else "n/a",
                             "lossfree_median_ms": float(lf.median() * 1e3) if len(lf) else math.nan,
                             "lossfree_p95_ms": float(lf.quantile(0.95) * 1e3) if len(lf) else math.nan,
                             "lossy_median_ms": float(ly.median() * 1e3) if len(ly) else math.nan})
        for r in eng_rows:  # each MPTCP background against TCP; the TCP row carries the engine's own MPTCP's
            other = "MPTCP" if r["background"] == "TCP" else r["background"]
            if len(lossfree.get("TCP", [])) > 1 and len(lossfree.get(other, [])) > 1:
                r["ks_p_lossfree"] = float(stats.ks_2samp(lossfree["TCP"], lossfree[other]).pvalue)
        rows += eng_rows
    return pd.DataFrame(rows)


@_PARAMETERS.fill
def fig7_cdf(dataset: P1Dataset) -> pd.DataFrame:
    """Empirical CDF of the 70 KB FCTs: ``engine, background, fct_ms, cdf`` (one row per flow).

    Parameters
    ----------
    {dataset}

    Returns
    -------
    pandas.DataFrame
        ``engine, background, fct_ms`` [ms] (sorted within each engine and background) and ``cdf`` [-];
        empty with those columns when no flow finished.
    """
    f = measured(with_cc(dataset.flows), "s4", "short")
    parts = []
    for eng in engines_in(f):
        for label, _, mask in backgrounds(f, eng):
            x = np.sort(f.loc[mask & f["fct_s"].notna(), "fct_s"].to_numpy(float)) * 1e3
            if len(x):
                parts.append(pd.DataFrame({"engine": eng, "background": label, "fct_ms": x,
                                           "cdf": np.arange(1, len(x) + 1) / len(x)}))
    return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=["engine", "background", "fct_ms", "cdf"])


_FIGS = {"s5_query_nobg": ("Fig. 8", "query"), "s5_query_bg": ("Fig. 9", "query"),
         "s5_message_bg": ("Fig. 10", "message")}


def figs8_10(dataset: P1Dataset, *, confidence_level: float = CONFIDENCE_LEVEL) -> pd.DataFrame:
    """Figs. 8-10 as a table: mean FCT per flow size, protocol and engine, with confidence intervals.

    Parameters
    ----------
    dataset : P1Dataset
        The campaign's data (the Section 5 query and message experiments).
    confidence_level : float
        Of the interval of the mean, in (0, 1). [-]

    Returns
    -------
    pandas.DataFrame
        ``figure, experiment, engine, protocol`` (``TCP``, ``MPTCP``, ``MPTCP tm_lia``, ...), ``cc,
        size_kb, n, n_unfinished, mean_ms, ci_low_ms, ci_high_ms, p95_ms`` (sizes in KB of 1000
        bytes, times in ms).
    """
    rows = []
    for exp, (fig, kind) in _FIGS.items():
        f = measured(with_cc(dataset.flows), exp, kind)
        for eng in engines_in(f):
            for label, cc, mask in backgrounds(f, eng):
                for size, g in f[mask].groupby("size_bytes"):
                    s = fct_summary(g["fct_s"], confidence_level=confidence_level)
                    rows.append({"figure": fig, "experiment": exp, "engine": eng, "protocol": label, "cc": cc or "-",
                                 "size_kb": float(size) / 1e3, "n": s.n, "n_unfinished": int(g["fct_s"].isna().sum()),
                                 "mean_ms": ms(s.mean_s), "ci_low_ms": ms(s.mean_ci_s[0]),
                                 "ci_high_ms": ms(s.mean_ci_s[1]), "p95_ms": ms(s.p95_s)})
    return pd.DataFrame(rows)


def lia_allocation(dataset: P1Dataset, *, seed: int | None = None, conn_id: int | None = None) -> pd.DataFrame:
    """What RFC 6356 LIA would allocate on the paths of a captured kernel MPTCP background connection.

    Takes one Section 4 uncoupled MPTCP background connection of the kernel runs (by default the
    first of the lowest seed), its per-subflow loss-event rate, RTT and throughput from
    TCP_INFO, and evaluates :func:`tcpmodels.fit.lia.lia_counterfactual` (the LIA
    equilibrium of :func:`tcpmodels.models.mptcp.lia_equilibrium`, loss taken as given).

    Parameters
    ----------
    dataset : P1Dataset
        The campaign's data (its ``subflows``).
    seed : int, optional
        The run to take the connection from; default the lowest seed with a lossy MPTCP connection.
    conn_id : int, optional
        The connection; default the one with the most subflows in that run.

    Returns
    -------
    pandas.DataFrame
        One row per subflow plus ``total``: the kernel's ``throughput_bps``,
        ``loss_event_rate``, ``rtt_mean_s``, LIA's ``lia_rate_bps`` and uncoupled TCP's
        ``uncoupled_rate_bps`` on the same path, ``lia_over_uncoupled`` and
        ``kernel_times_lia_share_bps`` [bit/s]. Empty when there is no such connection;
        ``attrs`` holds ``seed``, ``conn_id``, ``src`` and ``dst``.
    """
    from tcpmodels.fit.lia import lia_counterfactual

    s = dataset.subflows
    if not len(s):
        return pd.DataFrame()
    s = with_cc(s)
    s = s[(s["engine"] == "kernel") & (s["experiment"] == "s4") & (s["protocol"] == "mptcp") & s["mptcp"]
          & (s["cc"] == "uncoupled")]
    s = s[(s["loss_event_rate"] > 0) & (s["rtt_mean_s"] > 0)]
    if not len(s):
        return pd.DataFrame()
    seed = int(s["seed"].min()) if seed is None else seed
    s = s[s["seed"] == seed]
    conn_id = int(s.groupby("conn_id")["subflow"].count().idxmax()) if conn_id is None else conn_id
    sub = s[s["conn_id"] == conn_id].sort_values("subflow").reset_index(drop=True)
    cols = ["subflow", "remote", "throughput_bps", "loss_event_rate", "rtt_mean_s", "mss_bytes", "cwnd_mean_segments"]
    out = lia_counterfactual(sub[cols])
    out.attrs.update(seed=seed, conn_id=conn_id, src=int(sub["src"].iloc[0]), dst=int(sub["dst"].iloc[0]))
    return out


def background_table(dataset: P1Dataset) -> pd.DataFrame:
    """Section 4 background transfers per engine and protocol: throughput and, kernel, subflow loss.

    ``rate_Mbps`` is each transfer's goodput over its run (kernel: bytes / time from
    ``connect()`` to the last byte; ns-3: FlowMonitor goodput); ``subflow_loss_event_rate``
    the mean loss-event rate of its subflows from TCP_INFO (kernel only). [Mbit/s], [-]

    Parameters
    ----------
    dataset : P1Dataset
        The campaign's data (its ``s4`` background flows and their subflows).

    Returns
    -------
    pandas.DataFrame
        One row per engine and background (TCP, MPTCP per congestion control): ``engine, background, cc,
        transfers, rate_Mbps_mean,
        rate_Mbps_min`` [Mbit/s], ``subflows_per_transfer``, ``window_sum_segments``,
        ``subflow_loss_event_rate`` [-] and ``subflow_cwnd_mean_segments`` [segments] (NaN where the
        subflow data lacks them). Subflows with an implausible mean window
        (:func:`~tcpmodels.papers.p1_datacenter_fct.windows.implausible_windows`) are left out; ns-3's
        windows and losses come from its traced reruns where there are some (``p1_ns3_windows``).
    """
    f = measured(with_cc(dataset.flows), "s4", "background")
    # issue 57: the subflows whose mean TCP_INFO window is implausible (windows.implausible_windows) are left out
    subs = plausible_subflows(with_cc(dataset.subflows))
    rows = []
    for eng, label, cc, g in [(e, lb, c, f[m]) for e in engines_in(f) for lb, c, m in backgrounds(f, e)]:
        sub = subs
        if len(sub) and "loss_event_rate" in sub:
            sub = sub[(sub["engine"] == eng) & (sub["experiment"] == "s4")
                      & (sub["protocol"] == ("tcp" if cc is None else "mptcp"))]
            sub = sub if cc is None else sub[sub["cc"] == cc]
        else:
            sub = sub.iloc[:0]
        rows.append({"engine": eng, "background": label, "cc": cc or "-", "transfers": int(len(g)),
                     "rate_Mbps_mean": float(g["rate_bps"].mean() / 1e6), "rate_Mbps_min": float(g["rate_bps"].min() / 1e6),
                     "subflows_per_transfer": float(sub.groupby(["seed", "conn_id"]).size().mean()) if len(sub) else math.nan,
                     "window_sum_segments": float(sub.groupby(["seed", "conn_id"])["cwnd_mean_segments"].sum().mean())
                     if len(sub) and "cwnd_mean_segments" in sub and sub["cwnd_mean_segments"].notna().any() else math.nan,
                     "subflow_loss_event_rate": float(sub["loss_event_rate"].mean()) if len(sub) and "loss_event_rate" in sub
                     and sub["loss_event_rate"].notna().any() else math.nan,
                     "subflow_cwnd_mean_segments": float(sub["cwnd_mean_segments"].mean())
                     if len(sub) and "cwnd_mean_segments" in sub and sub["cwnd_mean_segments"].notna().any() else math.nan})
    return pd.DataFrame(rows)


def tables(dataset: P1Dataset, *, quick: bool = False, seed: int = 0,
           confidence_level: float = CONFIDENCE_LEVEL) -> dict[str, pd.DataFrame]:
    """Every table of the reproduction (see the module docstring), and ``flows``: the flows they use.

    ``quick`` keeps only the lowest seed of each engine (a fast look at the same analysis);
    ``seed`` changes nothing here (it is for the claims' resampling).

    Parameters
    ----------
    dataset : P1Dataset
        The campaign's data.
    quick : bool
        Keep only the lowest seed of each engine.
    seed : int
        Unused; accepted for the papers' common ``tables`` signature.
    confidence_level : float
        Of the FCT intervals of Table 2 and Figs. 8-10, in (0, 1). [-]

    Returns
    -------
    dict of str to pandas.DataFrame
        ``table1, table2, table2_detail, table3, table4, fig7_loss, fig7_cdf, figs8_10, lia,
        background, campaign, load`` and ``flows``.
    """
    ds = P1Dataset(flows=with_cc(dataset.flows), subflows=with_cc(dataset.subflows), tcpinfo=dataset.tcpinfo,
                   runs=with_cc(dataset.runs), provenance=dataset.provenance)
    if quick:
        keep = ds.flows.groupby("engine")["seed"].transform("min") == ds.flows["seed"]
        ds = P1Dataset(flows=ds.flows[keep], subflows=ds.subflows, tcpinfo=ds.tcpinfo, runs=ds.runs,
                       provenance=ds.provenance)
    t2, t2_long = table2(ds, confidence_level=confidence_level)
    return {"table1": table1(ds), "table2": t2, "table2_detail": t2_long, "table3": table3(ds), "table4": table4(ds),
            "fig7_loss": fig7_loss(ds), "fig7_cdf": fig7_cdf(ds), "figs8_10": figs8_10(ds, confidence_level=confidence_level),
            "lia": lia_allocation(ds), "background": background_table(ds), "campaign": campaign_table(ds),
            "load": load_sensitivity(ds), "flows": ds.flows}


def campaign_table(dataset: P1Dataset) -> pd.DataFrame:
    """Runs, wall time, load and lock wait per engine and MPTCP congestion control (from the provenance).

    Parameters
    ----------
    dataset : P1Dataset
        The campaign's data (its provenance's ``engines``).

    Returns
    -------
    pandas.DataFrame
        One row per engine and ``cc`` (``by_cc`` of the provenance; ``cc`` "all" per engine for an
        older provenance): ``engine, cc, runs, seeds, wall_min_sum, elapsed_min, lock_wait_min`` [min],
        ``load_1m_min_median_max``, ``first_run_utc, last_run_utc, flow_errors`` and ``git`` (the
        commits the runs came from, with their dirty flag).
    """
    rows = []
    prov = dataset.provenance
    groups = ([(eng, cc, e) for eng, by in prov["by_cc"].items() for cc, e in by.items()] if prov.get("by_cc")
              else [(eng, "all", e) for eng, e in prov.get("engines", {}).items()])
    for eng, cc, e in groups:
        rows.append({"engine": eng, "cc": cc, "runs": e["runs"], "seeds": ", ".join(map(str, e["seeds"])),
                     "wall_min_sum": round(e["wall_s_sum"] / 60, 1), "elapsed_min": round(e["elapsed_s"] / 60, 1),
                     "lock_wait_min": round(e["lock_wait_s_sum"] / 60, 1),
                     "load_1m_min_median_max": f"{e['load_avg_1m']['min']:.1f} / {e['load_avg_1m']['median']:.1f} / "
                                               f"{e['load_avg_1m']['max']:.1f}",
                     "first_run_utc": e["first_run_utc"], "last_run_utc": e["last_run_utc"],
                     "flow_errors": e["flow_errors"], "git": "; ".join(e.get("git", [])) or "-"})
    return pd.DataFrame(rows)


#: The flow kinds whose FCT :func:`load_sensitivity` relates to the host's load, per kernel experiment.
LOAD_KINDS = {"s4": "short", "s5_query_nobg": "query", "s5_query_bg": "query", "s5_message_bg": "message"}


def load_sensitivity(dataset: P1Dataset) -> pd.DataFrame:
    """How much the kernel's FCTs follow the host's load: a run's mean FCT against its 1-minute load average.

    The kernel testbed shares two cores with whatever else runs, so the scheduling latency that the
    load reflects adds to every flow (most of a 1-3 ms query without background). The claims compare
    backgrounds paired by seed; a comparison is fair only when the runs it pairs saw alike loads.
    This table shows the size of the dependence and the load each background ran at.

    Parameters
    ----------
    dataset : P1Dataset
        The campaign's data (``flows`` and ``runs`` with ``load_avg_1m``).

    Returns
    -------
    pandas.DataFrame
        One row per kernel experiment (flow kind of :data:`LOAD_KINDS`): ``experiment, kind, runs``,
        ``spearman_rho`` and ``p_value`` of the runs' mean FCT against their load (scipy
        ``spearmanr``), ``fct_ms_low_load`` / ``fct_ms_high_load``: the mean over runs below / at or
        above the median load [ms], and ``load_by_background``: the median load of each background's
        runs. Empty without kernel runs.
    """
    columns = ["experiment", "kind", "runs", "spearman_rho", "p_value", "fct_ms_low_load", "fct_ms_high_load",
               "load_by_background"]
    if not len(dataset.runs) or "load_avg_1m" not in dataset.runs:
        return pd.DataFrame(columns=columns)
    flows, runs = with_cc(dataset.flows), with_cc(dataset.runs)
    key = ["experiment", "protocol", "cc", "seed"]
    runs = runs[(runs["engine"] == "kernel") & runs["load_avg_1m"].notna()]
    rows = []
    for experiment, kind in LOAD_KINDS.items():
        f = measured(flows[flows["engine"] == "kernel"], experiment, kind)
        per_run = f.groupby(key)["fct_s"].mean().rename("fct_s").reset_index()
        m = per_run.merge(runs[key + ["load_avg_1m"]], on=key)
        if len(m) < 3:
            continue
        rho, p = stats.spearmanr(m["fct_s"], m["load_avg_1m"])
        high = m["load_avg_1m"] >= m["load_avg_1m"].median()
        label = [background_label(pr, cc, "kernel") for pr, cc in zip(m["protocol"], m["cc"])]
        by = m.assign(background=label).groupby("background", sort=False)["load_avg_1m"].median()
        rows.append({"experiment": experiment, "kind": kind, "runs": len(m), "spearman_rho": float(rho),
                     "p_value": float(p), "fct_ms_low_load": ms(m.loc[~high, "fct_s"].mean()),
                     "fct_ms_high_load": ms(m.loc[high, "fct_s"].mean()),
                     "load_by_background": ", ".join(f"{b} {v:.1f}" for b, v in by.items())})
    return pd.DataFrame(rows, columns=columns)
