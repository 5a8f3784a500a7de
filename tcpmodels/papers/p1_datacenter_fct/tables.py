"""P1's dataset, its loader, Tables 1-4, Fig. 7 and Figs. 8-10 as tables, the LIA allocation."""


from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats

from tcpmodels.papers.common import read_frames


CITATION = ("H. Fujii, H. Tazaki, Y. Sekiya, 'データセンターネットワークにおけるフローサイズと MPTCP に関する研究' "
            "(flow size and MPTCP in a data-center network), IPSJ technical report")

#: Table 1 as printed: parameter -> value
PAPER_TABLE1 = {"hosts": "16", "MPTCP": "v0.86 (Linux out-of-tree, LIA)", "core-aggregation": "400 Mbit/s",
                "aggregation-edge": "200 Mbit/s", "edge-host": "100 Mbit/s", "RTT": "0.5 ms", "buffer": "100 KB"}
#: Table 2 as printed: background protocol -> (mean, standard deviation, 95th percentile) FCT of 70 KB flows [ms]
PAPER_TABLE2 = {"TCP": (78.4, 122.5, 266.7), "MPTCP": (91.0, 140.6, 510.5)}
#: Table 3 as printed: pattern -> (FCT, packet loss)
PAPER_TABLE3 = {"Full window": ("up to ~30 ms", "no"), "Intensive flow": ("~60 ms", "no"),
                "Delay with loss": ("200-300 ms", "yes"), "Extreme delay": ("over 300 ms", "yes")}
#: Table 4 as printed: traffic pattern -> metric
PAPER_TABLE4 = {"Query traffic": "flow completion time [s]", "Short message traffic": "flow completion time [s]"}
#: how the two engines are named in the tables
ENGINE_LABELS = {"kernel": "kernel (MPTCP v1, uncoupled Reno subflows)", "ns3": "ns-3 (LIA-coupled NewReno subflows)"}
_PROTO = {"tcp": "TCP", "mptcp": "MPTCP"}
_LEVEL = 0.99


@dataclass(frozen=True)
class P1Dataset:
    """The P1 campaign's data (see :func:`tcpmodels.experiments.p1.build_dataset`).

    Attributes
    ----------
    flows : pandas.DataFrame
        One row per connection: ``engine, experiment, protocol, seed, kind, src, dst,
        size_bytes`` [bytes], ``fct_s`` [s], ``pattern``, ``retransmitted_packets`` (kernel
        captures), ``lost_packets`` (ns-3 FlowMonitor), ...
    subflows : pandas.DataFrame
        Background connections per subflow: ``throughput_bps`` [bit/s], ``rtt_mean_s`` [s],
        ``loss_event_rate`` [-], ``mss_bytes`` [bytes] (kernel, from TCP_INFO).
    tcpinfo : pandas.DataFrame
        TCP_INFO samples of one kernel background connection per run.
    runs : pandas.DataFrame
        One row per run: wall time, load average, lock wait.
    provenance : dict
    """

    flows: pd.DataFrame
    subflows: pd.DataFrame
    tcpinfo: pd.DataFrame
    runs: pd.DataFrame
    provenance: dict


def load_dataset(data_dir: str | Path = "data") -> P1Dataset:
    """Read ``p1_*.parquet`` and ``p1_provenance.json`` from ``<data_dir>/datasets``."""
    parts = read_frames(data_dir, "p1", ("flows", "subflows", "tcpinfo", "runs"),
                        command="python -m tcpmodels.experiments.p1 dataset")
    return P1Dataset(**parts)


# ------------------------------------------------------------------ statistics
@dataclass(frozen=True, kw_only=True)
class FctSummary:
    """Mean, standard deviation and 95th percentile of a set of FCTs, with confidence intervals.

    Attributes
    ----------
    n : int
        Completed flows.
    mean_s, std_s, p95_s : float
        Sample mean, standard deviation (ddof = 1) and 95th percentile (linear interpolation). [s]
    mean_ci_s, p95_ci_s : tuple of float
        Confidence intervals at ``confidence_level``: Student's t for the mean, the
        order-statistic interval for the 95th percentile. [s]
    confidence_level : float
    """

    n: int
    mean_s: float
    std_s: float
    p95_s: float
    mean_ci_s: tuple[float, float]
    p95_ci_s: tuple[float, float]
    confidence_level: float

    def to_dict(self) -> dict:
        return asdict(self)


def fct_summary(fct_s, *, confidence_level: float = _LEVEL) -> FctSummary:
    """Summarise flow completion times. [s]

    Parameters
    ----------
    fct_s : array_like
        Completion times; NaN (flows that did not finish) are dropped. [s]
    confidence_level : float
        Of both intervals, in (0, 1). [-]

    Returns
    -------
    FctSummary

    Raises
    ------
    ValueError
        If ``confidence_level`` is not in (0, 1) or a time is negative.

    Examples
    --------
    >>> s = fct_summary([0.01, 0.02, 0.03, 0.04], confidence_level=0.9)
    >>> round(s.mean_s, 3), s.n
    (0.025, 4)
    """
    if not 0 < confidence_level < 1:
        raise ValueError(f"confidence_level [-] must be in (0, 1); got {confidence_level}")
    x = np.asarray(fct_s, dtype=float)
    x = x[np.isfinite(x)]
    if np.any(x < 0):
        raise ValueError(f"fct_s [s] must be >= 0; got minimum {x.min()}")
    n = len(x)
    nan2 = (math.nan, math.nan)
    if n == 0:
        return FctSummary(n=0, mean_s=math.nan, std_s=math.nan, p95_s=math.nan, mean_ci_s=nan2, p95_ci_s=nan2,
                          confidence_level=confidence_level)
    mean = float(x.mean())
    std = float(x.std(ddof=1)) if n > 1 else math.nan
    if n > 1 and std > 0:
        half = float(stats.t.ppf(0.5 + confidence_level / 2, n - 1)) * std / math.sqrt(n)
        mean_ci = (mean - half, mean + half)
    else:
        mean_ci = nan2
    p95 = float(np.percentile(x, 95))
    try:
        ci = stats.quantile_test(x, q=p95, p=0.95).confidence_interval(confidence_level=confidence_level)
        p95_ci = (float(ci.low), float(ci.high))
    except ValueError:
        p95_ci = nan2
    return FctSummary(n=n, mean_s=mean, std_s=std, p95_s=p95, mean_ci_s=mean_ci, p95_ci_s=p95_ci,
                      confidence_level=confidence_level)


def _ms(x: float) -> float:
    return x * 1e3 if x is not None and np.isfinite(x) else math.nan


def _ci_str(ci: tuple[float, float]) -> str:
    return "n/a" if not np.all(np.isfinite(ci)) else f"[{ci[0] * 1e3:.1f}, {ci[1] * 1e3:.1f}]"


def _engines(flows: pd.DataFrame) -> list[str]:
    return [e for e in ("kernel", "ns3") if e in set(flows["engine"])]


def _measured(flows: pd.DataFrame, experiment: str, kind: str) -> pd.DataFrame:
    return flows[(flows["experiment"] == experiment) & (flows["kind"] == kind)]


# ------------------------------------------------------------------- tables
def table1(dataset: P1Dataset) -> pd.DataFrame:
    """Table 1: the paper's setting beside each engine's."""
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
            ours = (f"Linux {prov.get('host', {}).get('kernel', '?')} MPTCP v1, uncoupled {cfg.get('cc', 'reno')} "
                    "subflows, one per core", "ns3::TcpLia (RFC 6356), NewReno subflows, one per core")
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


def table2(dataset: P1Dataset, *, confidence_level: float = _LEVEL) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Table 2: FCT of the Section 4 short flows by background protocol; paper beside each engine.

    Returns
    -------
    (wide, long) : tuple of pandas.DataFrame
        ``wide``: one row per background protocol, columns ``paper_*``, ``kernel_*``,
        ``ns3_*`` for ``mean_ms, std_ms, p95_ms`` and ``n``. ``long``: one row per
        engine and protocol with the confidence intervals and the per-seed spread.
    """
    f = _measured(dataset.flows, "s4", "short")
    long_rows = []
    for eng in _engines(f):
        for proto in ("tcp", "mptcp"):
            g = f[(f["engine"] == eng) & (f["protocol"] == proto)]
            if not len(g):
                continue
            s = fct_summary(g["fct_s"], confidence_level=confidence_level)
            per_seed = g.groupby("seed")["fct_s"].mean() * 1e3
            long_rows.append({
                "engine": eng, "background": _PROTO[proto], "n_flows": s.n, "n_unfinished": int(g["fct_s"].isna().sum()),
                "n_seeds": int(g["seed"].nunique()), "mean_ms": _ms(s.mean_s), "mean_ci_ms": _ci_str(s.mean_ci_s),
                "std_ms": _ms(s.std_s), "p95_ms": _ms(s.p95_s), "p95_ci_ms": _ci_str(s.p95_ci_s),
                "mean_ms_per_seed": ", ".join(f"{v:.1f}" for v in per_seed),
                "median_ms": float(np.nanmedian(g["fct_s"])) * 1e3, "p99_ms": float(np.nanpercentile(g["fct_s"], 99)) * 1e3,
            })
    long = pd.DataFrame(long_rows)
    wide = []
    for proto in ("TCP", "MPTCP"):
        row = {"background": proto, "paper_mean_ms": PAPER_TABLE2[proto][0], "paper_std_ms": PAPER_TABLE2[proto][1],
               "paper_p95_ms": PAPER_TABLE2[proto][2]}
        for eng in ("kernel", "ns3"):
            m = long[(long["engine"] == eng) & (long["background"] == proto)] if len(long) else long
            for col in ("mean_ms", "std_ms", "p95_ms"):
                row[f"{eng}_{col}"] = float(m[col].iloc[0]) if len(m) else math.nan
            row[f"{eng}_n"] = int(m["n_flows"].iloc[0]) if len(m) else 0
        wide.append(row)
    return pd.DataFrame(wide), long


#: A lossy flow without a timeout: the paper's Table 3 has no row for it (its lossy patterns both time out).
LOSS_WITHOUT_TIMEOUT = "Loss without timeout (not in the paper)"


def paper_patterns(flows: pd.DataFrame) -> pd.Series:
    """Each kernel 70 KB flow's Table 3 pattern, with the lossy patterns as the paper describes them.

    The paper's lossy patterns both start with a **timeout** ("timeout after a few packets",
    "timeout right after the handshake"), so a flow is lossy-by-the-paper only when the capture
    shows a retransmission after an idle gap of at least the minimum RTO (``timeout_gap_s`` set
    by :func:`tcpmodels.traces.classify_short_flows`): "Extreme delay" when the capture placed
    that timeout right after the handshake, else "Delay with loss". A flow that retransmitted
    without a timeout (fast retransmit) is :data:`LOSS_WITHOUT_TIMEOUT`. Loss-free flows keep the
    capture's split into "Full window" and "Intensive flow": the shipped dataset holds no
    per-flow ACK timing, so that split is still the 30 ms FCT threshold, not the ACK clock.
    """
    retx = pd.to_numeric(flows["retransmitted_packets"], errors="coerce").fillna(0) > 0
    timeout = flows.get("timeout_gap_s", pd.Series(np.nan, index=flows.index)).notna()
    orig = flows["pattern"].astype(object)
    out = orig.where(~retx, LOSS_WITHOUT_TIMEOUT)
    out = out.where(~timeout, np.where(orig == "Extreme delay", "Extreme delay", "Delay with loss"))
    return out.where(orig.notna())


def table3(dataset: P1Dataset) -> pd.DataFrame:
    """Table 3: 70 KB flows per pattern (kernel captures), by background protocol, beside the paper's definitions.

    Patterns by :func:`paper_patterns` (lossy = a timeout, as the paper describes); the
    column ``capture_rule_count_<proto>`` gives the count under the capture's old rule (any
    retransmission is loss) for comparison.
    """
    f = _measured(dataset.flows, "s4", "short")
    f = f[(f["engine"] == "kernel") & f["pattern"].notna()]
    f = f.assign(paper_pattern=paper_patterns(f))
    rows = []
    for pattern, (fct, loss) in [*PAPER_TABLE3.items(), (LOSS_WITHOUT_TIMEOUT, ("-", "yes, no timeout"))]:
        row = {"pattern": pattern, "paper_fct": fct, "paper_loss": loss}
        for proto in ("tcp", "mptcp"):
            g = f[f["protocol"] == proto]
            p = g[g["paper_pattern"] == pattern]
            row[f"{_PROTO[proto]}_bg_count"] = int(len(p))
            row[f"{_PROTO[proto]}_bg_share"] = len(p) / len(g) if len(g) else math.nan
            row[f"{_PROTO[proto]}_bg_median_fct_ms"] = float(p["fct_capture_s"].median() * 1e3) if len(p) else math.nan
            row[f"{_PROTO[proto]}_bg_capture_rule_count"] = int((g["pattern"] == pattern).sum())
        rows.append(row)
    out = pd.DataFrame(rows)
    for proto in ("TCP", "MPTCP"):
        n = f[f["protocol"] == proto.lower()]
        out.attrs[f"{proto}_classified"] = int(len(n))
    return out


def table4(dataset: P1Dataset) -> pd.DataFrame:
    """Table 4: metric per traffic pattern, with the workloads as run."""
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


def fig7_loss(dataset: P1Dataset) -> pd.DataFrame:
    """Fig. 7's reading: share of 70 KB flows with loss, and the FCT of loss-free and lossy flows.

    Loss is "the sender retransmitted" in the kernel captures and "FlowMonitor counted a
    lost packet" in ns-3. ``lossy_share_ci`` is the Wilson 99 % interval; ``ks_p_lossfree``
    the two-sample Kolmogorov-Smirnov p-value between the loss-free FCTs under TCP and
    MPTCP background (same value on both rows of an engine).
    """
    f = _measured(dataset.flows, "s4", "short")
    rows = []
    for eng in _engines(f):
        lossfree = {}
        for proto in ("tcp", "mptcp"):
            g = f[(f["engine"] == eng) & (f["protocol"] == proto) & f["fct_s"].notna()]
            lossy = _lossy(g, eng)
            known = lossy.dropna()
            k, n = int(known.sum()), int(len(known))
            ci = stats.binomtest(k, n).proportion_ci(_LEVEL, method="wilson") if n else None
            lf = g.loc[known.index[~known.to_numpy(bool)], "fct_s"] if n else pd.Series(dtype=float)
            ly = g.loc[known.index[known.to_numpy(bool)], "fct_s"] if n else pd.Series(dtype=float)
            lossfree[proto] = lf.to_numpy(float)
            rows.append({"engine": eng, "background": _PROTO[proto], "n_flows": n, "lossy_flows": k,
                         "lossy_share": k / n if n else math.nan,
                         "lossy_share_ci": f"[{ci.low:.3f}, {ci.high:.3f}]" if ci else "n/a",
                         "lossfree_median_ms": float(lf.median() * 1e3) if len(lf) else math.nan,
                         "lossfree_p95_ms": float(lf.quantile(0.95) * 1e3) if len(lf) else math.nan,
                         "lossy_median_ms": float(ly.median() * 1e3) if len(ly) else math.nan})
        if all(len(lossfree.get(p, [])) > 1 for p in ("tcp", "mptcp")):
            p = float(stats.ks_2samp(lossfree["tcp"], lossfree["mptcp"]).pvalue)
            for r in rows[-2:]:
                r["ks_p_lossfree"] = p
    return pd.DataFrame(rows)


def fig7_cdf(dataset: P1Dataset) -> pd.DataFrame:
    """Empirical CDF of the 70 KB FCTs: ``engine, background, fct_ms, cdf`` (one row per flow)."""
    f = _measured(dataset.flows, "s4", "short")
    parts = []
    for (eng, proto), g in f[f["fct_s"].notna()].groupby(["engine", "protocol"]):
        x = np.sort(g["fct_s"].to_numpy(float)) * 1e3
        parts.append(pd.DataFrame({"engine": eng, "background": _PROTO[proto], "fct_ms": x,
                                   "cdf": np.arange(1, len(x) + 1) / len(x)}))
    return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=["engine", "background", "fct_ms", "cdf"])


_FIGS = {"s5_query_nobg": ("Fig. 8", "query"), "s5_query_bg": ("Fig. 9", "query"),
         "s5_message_bg": ("Fig. 10", "message")}


def figs8_10(dataset: P1Dataset, *, confidence_level: float = _LEVEL) -> pd.DataFrame:
    """Figs. 8-10 as a table: mean FCT per flow size, protocol and engine, with confidence intervals.

    Returns
    -------
    pandas.DataFrame
        ``figure, experiment, engine, protocol, size_kb, n, mean_ms, ci_low_ms, ci_high_ms,
        p95_ms`` (sizes in KB of 1000 bytes).
    """
    rows = []
    for exp, (fig, kind) in _FIGS.items():
        f = _measured(dataset.flows, exp, kind)
        for (eng, proto, size), g in f.groupby(["engine", "protocol", "size_bytes"]):
            s = fct_summary(g["fct_s"], confidence_level=confidence_level)
            rows.append({"figure": fig, "experiment": exp, "engine": eng, "protocol": _PROTO[proto],
                         "size_kb": float(size) / 1e3, "n": s.n, "n_unfinished": int(g["fct_s"].isna().sum()),
                         "mean_ms": _ms(s.mean_s), "ci_low_ms": _ms(s.mean_ci_s[0]), "ci_high_ms": _ms(s.mean_ci_s[1]),
                         "p95_ms": _ms(s.p95_s)})
    return pd.DataFrame(rows)


def lia_allocation(dataset: P1Dataset, *, seed: int | None = None, conn_id: int | None = None) -> pd.DataFrame:
    """What RFC 6356 LIA would allocate on the paths of a captured kernel MPTCP background connection.

    Takes one Section 4 MPTCP background connection of the kernel runs (by default the
    first of the lowest seed), its per-subflow loss-event rate, RTT and throughput from
    TCP_INFO, and evaluates :func:`tcpmodels.fit.lia.lia_counterfactual` (the LIA
    equilibrium of :func:`tcpmodels.models.mptcp.lia_equilibrium`, loss taken as given).

    Returns
    -------
    pandas.DataFrame
        One row per subflow plus ``total``: the kernel's ``throughput_bps``,
        ``loss_event_rate``, ``rtt_mean_s``, LIA's ``lia_rate_bps`` and uncoupled TCP's
        ``uncoupled_rate_bps`` on the same path, ``lia_over_uncoupled`` and
        ``kernel_times_lia_share_bps`` [bit/s]. Empty when there is no such connection.
    """
    from tcpmodels.fit.lia import lia_counterfactual

    s = dataset.subflows
    if not len(s):
        return pd.DataFrame()
    s = s[(s["engine"] == "kernel") & (s["experiment"] == "s4") & (s["protocol"] == "mptcp") & s["mptcp"]]
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
    """
    f = _measured(dataset.flows, "s4", "background")
    rows = []
    for (eng, proto), g in f.groupby(["engine", "protocol"]):
        sub = dataset.subflows
        if len(sub) and "loss_event_rate" in sub:
            sub = sub[(sub["engine"] == eng) & (sub["experiment"] == "s4") & (sub["protocol"] == proto)]
        else:
            sub = sub.iloc[:0]
        rows.append({"engine": eng, "background": _PROTO[proto], "transfers": int(len(g)),
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
           confidence_level: float = _LEVEL) -> dict[str, pd.DataFrame]:
    """Every table of the reproduction (see the module docstring), and ``flows``: the flows they use.

    ``quick`` keeps only the lowest seed of each engine (a fast look at the same analysis);
    ``seed`` changes nothing here (it is for the claims' resampling).
    """
    ds = dataset
    if quick:
        keep = ds.flows.groupby("engine")["seed"].transform("min") == ds.flows["seed"]
        ds = P1Dataset(flows=ds.flows[keep], subflows=ds.subflows, tcpinfo=ds.tcpinfo, runs=ds.runs,
                       provenance=ds.provenance)
    t2, t2_long = table2(ds, confidence_level=confidence_level)
    return {"table1": table1(ds), "table2": t2, "table2_detail": t2_long, "table3": table3(ds), "table4": table4(ds),
            "fig7_loss": fig7_loss(ds), "fig7_cdf": fig7_cdf(ds), "figs8_10": figs8_10(ds, confidence_level=confidence_level),
            "lia": lia_allocation(ds), "background": background_table(ds), "campaign": campaign_table(ds),
            "flows": ds.flows}


def campaign_table(dataset: P1Dataset) -> pd.DataFrame:
    """Runs, wall time, load and lock wait per engine (from the provenance)."""
    rows = []
    for eng, e in dataset.provenance.get("engines", {}).items():
        rows.append({"engine": eng, "runs": e["runs"], "seeds": ", ".join(map(str, e["seeds"])),
                     "wall_min_sum": round(e["wall_s_sum"] / 60, 1), "elapsed_min": round(e["elapsed_s"] / 60, 1),
                     "lock_wait_min": round(e["lock_wait_s_sum"] / 60, 1),
                     "load_1m_min_median_max": f"{e['load_avg_1m']['min']:.1f} / {e['load_avg_1m']['median']:.1f} / "
                                               f"{e['load_avg_1m']['max']:.1f}",
                     "first_run_utc": e["first_run_utc"], "last_run_utc": e["last_run_utc"],
                     "flow_errors": e["flow_errors"]})
    return pd.DataFrame(rows)


def classify_capture(path: str | Path) -> pd.DataFrame:
    """Classify the 70 KB flows of a shipped capture into P1's patterns (:func:`tcpmodels.traces.classify_short_flows`)."""
    import warnings

    from tcpmodels.traces import TraceWarning, classify_short_flows, read_pcap

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TraceWarning)
        packets = read_pcap(path)
    return classify_short_flows(packets)
