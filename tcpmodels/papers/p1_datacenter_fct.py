"""P1: short flows beside MPTCP background in a k=4 fat-tree (Fujii, Tazaki, Sekiya), on two engines.

Source: H. Fujii, H. Tazaki, Y. Sekiya, a study of flow size and MPTCP in a
data-center network (IPSJ technical report); text in ``shared/seeds/000_*.txt``,
digest in ``shared/PAPERS.md`` (P1). The paper ran Linux MPTCP v0.86 (LIA-coupled)
inside ns-3 DCE. Today's kernel MPTCP v1 has no coupled congestion control, so the
dataset (:mod:`tcpmodels.experiments.p1`) holds two engines driven by the same
workload schedules:

``kernel``
    the real Linux kernel on the namespace fat-tree; MPTCP = one *uncoupled* Reno
    subflow per core;
``ns3``
    ns-3 (:mod:`tcpmodels.sim.fattree`); MPTCP = RFC 6356 LIA-coupled NewReno
    subflows, one per core.

:func:`tables` rebuilds Table 1 (setting), Table 2 (mean, standard deviation and
95th percentile FCT of the 70 KB flows under TCP and MPTCP background, with 99 %
confidence intervals), Table 3 (flow patterns from the kernel captures), Table 4,
Fig. 7 (FCT CDF, share of flows with loss), Figs. 8-10 (query and short-message FCT
by size, 99 % confidence intervals) and the RFC 6356 allocation for a captured
kernel MPTCP background connection; :func:`claims` gives verdicts on C1.1-C1.3 and
the Fig. 7 statement for each engine.

Statistics: the confidence interval of a mean is Student's t over flows; that of a
95th percentile is the distribution-free order-statistic interval
(:func:`scipy.stats.quantile_test`). Flows of one run share the background, so
intervals over flows are narrower than intervals over independent runs would be;
the per-seed spread is shown beside them.

References
----------
.. [1] H. Fujii, H. Tazaki, Y. Sekiya, P1 (``shared/PAPERS.md``), Tables 1-4, Figs. 7-10.
.. [2] C. Raiciu et al., "Improving datacenter performance and robustness with multipath TCP", SIGCOMM 2011.
.. [3] RFC 6356, "Coupled Congestion Control for Multipath Transport Protocols", Sec. 3-4.
.. [4] M. Alizadeh et al., "Data Center TCP (DCTCP)", SIGCOMM 2010 (the query / short-message classes).
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass, replace
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats

from tcpmodels.papers.common import Claim, claims_frame

__all__ = [
    "CITATION", "PAPER_TABLE1", "PAPER_TABLE2", "PAPER_TABLE3", "PAPER_TABLE4", "ENGINE_LABELS",
    "P1Dataset", "FctSummary", "load_dataset", "fct_summary", "tables", "claims", "table1", "table2", "table3",
    "table4", "fig7_loss", "fig7_cdf", "figs8_10", "lia_allocation", "plot_fig7", "plot_figs8_10",
    "classify_capture", "closing_note", "campaign_table", "background_table",
]

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
    d = Path(data_dir) / "datasets"
    if not (d / "p1_flows.parquet").exists():
        raise FileNotFoundError(f"no P1 dataset in {d}: run `python -m tcpmodels.experiments.p1 dataset`")
    return P1Dataset(flows=pd.read_parquet(d / "p1_flows.parquet"), subflows=pd.read_parquet(d / "p1_subflows.parquet"),
                     tcpinfo=pd.read_parquet(d / "p1_tcpinfo.parquet"), runs=pd.read_parquet(d / "p1_runs.parquet"),
                     provenance=json.loads((d / "p1_provenance.json").read_text()))


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


def table3(dataset: P1Dataset) -> pd.DataFrame:
    """Table 3: 70 KB flows per pattern (kernel captures), by background protocol, beside the paper's definitions."""
    f = _measured(dataset.flows, "s4", "short")
    f = f[(f["engine"] == "kernel") & f["pattern"].notna()]
    rows = []
    for pattern, (fct, loss) in PAPER_TABLE3.items():
        row = {"pattern": pattern, "paper_fct": fct, "paper_loss": loss}
        for proto in ("tcp", "mptcp"):
            g = f[f["protocol"] == proto]
            p = g[g["pattern"] == pattern]
            row[f"{_PROTO[proto]}_bg_count"] = int(len(p))
            row[f"{_PROTO[proto]}_bg_share"] = len(p) / len(g) if len(g) else math.nan
            row[f"{_PROTO[proto]}_bg_median_fct_ms"] = float(p["fct_capture_s"].median() * 1e3) if len(p) else math.nan
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


def tables(dataset: P1Dataset, *, quick: bool = False, confidence_level: float = _LEVEL) -> dict[str, pd.DataFrame]:
    """Every table of the reproduction (see the module docstring).

    ``quick`` keeps only seed 0 of each engine (a fast look at the same analysis).
    """
    ds = dataset
    if quick:
        keep = ds.flows.groupby("engine")["seed"].transform("min") == ds.flows["seed"]
        ds = P1Dataset(flows=ds.flows[keep], subflows=ds.subflows, tcpinfo=ds.tcpinfo, runs=ds.runs,
                       provenance=ds.provenance)
    t2, t2_long = table2(ds, confidence_level=confidence_level)
    return {"table1": table1(ds), "table2": t2, "table2_detail": t2_long, "table3": table3(ds), "table4": table4(ds),
            "fig7_loss": fig7_loss(ds), "fig7_cdf": fig7_cdf(ds), "figs8_10": figs8_10(ds, confidence_level=confidence_level),
            "lia": lia_allocation(ds), "background": background_table(ds), "campaign": campaign_table(ds)}


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


# ------------------------------------------------------------------- claims
def _disjoint(a: tuple[float, float], b: tuple[float, float]) -> bool:
    return bool(np.all(np.isfinite(a)) and np.all(np.isfinite(b)) and (a[1] < b[0] or b[1] < a[0]))


def _pooled(flows: pd.DataFrame, engine: str, experiment: str, kind: str, proto: str) -> FctSummary:
    g = _measured(flows, experiment, kind)
    g = g[(g["engine"] == engine) & (g["protocol"] == proto)]
    return fct_summary(g["fct_s"])


def _size_means(flows: pd.DataFrame, engine: str, experiment: str, kind: str, proto: str) -> pd.Series:
    g = _measured(flows, experiment, kind)
    g = g[(g["engine"] == engine) & (g["protocol"] == proto)]
    return g.groupby("size_bytes")["fct_s"].mean()


_WHY_ENGINES = (
    " Kernel and ns-3 differ in one thing the paper blames: the kernel's MPTCP subflows are uncoupled (each one "
    "a full Reno flow, so a 4-subflow background pushes like four TCP flows wherever subflows share a queue), "
    "whereas LIA couples them to take no more than one TCP on the best path.")


def _c11(flows: pd.DataFrame, eng: str) -> Claim:
    name = f"C1.1 [{eng}] query FCT: MPTCP itself does not change it; the background does, MPTCP background more"
    paper = "Figs. 8-9: without background TCP and MPTCP queries finish alike; with background both slow down, MPTCP more"
    s = {(e, p): _pooled(flows, eng, e, "query", p) for e in ("s5_query_nobg", "s5_query_bg") for p in PROTOCOLS_}
    if any(v.n == 0 for v in s.values()):
        return Claim(claim=name, paper_says=paper, we_measured="no query runs for this engine", holds=None,
                     why="Section 5 query runs missing for this engine.")
    nb_t, nb_m, bg_t, bg_m = (s[("s5_query_nobg", "tcp")], s[("s5_query_nobg", "mptcp")],
                              s[("s5_query_bg", "tcp")], s[("s5_query_bg", "mptcp")])
    ratio_nb = nb_m.mean_s / nb_t.mean_s
    bg_effect_s = min(bg_t.mean_s - nb_t.mean_s, bg_m.mean_s - nb_m.mean_s)
    own_effect_s = abs(nb_m.mean_s - nb_t.mean_s)
    # "does not change it directly": MPTCP's own effect is small beside the background's
    same_nb = bool(bg_effect_s > 0 and own_effect_s < 0.10 * bg_effect_s)
    bg_raises = bg_t.mean_s > nb_t.mean_s and bg_m.mean_s > nb_m.mean_s
    mptcp_worse = bg_m.mean_s > bg_t.mean_s and _disjoint(bg_m.mean_ci_s, bg_t.mean_ci_s)
    measured = (f"mean query FCT without background TCP {_ms(nb_t.mean_s):.2f} ms, MPTCP {_ms(nb_m.mean_s):.2f} ms "
                f"(ratio {ratio_nb:.2f}); with background TCP {_ms(bg_t.mean_s):.2f} {_ci_str(bg_t.mean_ci_s)} ms, "
                f"MPTCP {_ms(bg_m.mean_s):.2f} {_ci_str(bg_m.mean_ci_s)} ms (99 % CI)")
    parts = [f"(a) without background MPTCP changes the mean by {_ms(own_effect_s):.2f} ms (ratio {ratio_nb:.2f}), "
             f"{'under' if same_nb else 'not under'} 10 % of the background's smallest effect "
             f"({_ms(bg_effect_s):.2f} ms)",
             f"(b) background {'raises' if bg_raises else 'does not raise'} both protocols' mean FCT",
             f"(c) with background MPTCP is {'slower, 99 % CIs disjoint' if mptcp_worse else 'not significantly slower'}"]
    holds = bool(same_nb and bg_raises and mptcp_worse)
    why = "; ".join(parts) + ". All three must hold."
    if same_nb and bg_raises and not mptcp_worse and bg_m.mean_s > bg_t.mean_s:
        holds = None
        why += " MPTCP is slower with background, as the paper says, but not significantly: undecided."
    if not mptcp_worse and bg_raises:
        why += (" In Section 5 the background leaves the aggregator's host links, which every query also crosses; "
                "there a single TCP background and an MPTCP one both fill the same 100 Mbit/s host link.")
    if not same_nb:
        why += (" Without background MPTCP's own cost for 1-16 KB flows (MP_CAPABLE handshake, subflow set-up) "
                "is not small beside the background's effect.")
    return Claim(claim=name, paper_says=paper, we_measured=measured, holds=holds, why=why + _WHY_ENGINES)


def _c12(flows: pd.DataFrame, eng: str) -> Claim:
    name = f"C1.2 [{eng}] short messages with background: MPTCP shortens FCT, less so for smaller messages"
    paper = "Fig. 10: MPTCP FCT below TCP's for 50 KB-1 MB messages; the gap shrinks as the size shrinks"
    t = _size_means(flows, eng, "s5_message_bg", "message", "tcp")
    m = _size_means(flows, eng, "s5_message_bg", "message", "mptcp")
    if not len(t) or not len(m):
        return Claim(claim=name, paper_says=paper, we_measured="no short-message runs for this engine", holds=None,
                     why="Section 5 short-message runs missing for this engine.")
    gain = (1 - m / t).dropna()
    big, small = gain.index.max(), gain.index.min()
    g = _measured(flows, "s5_message_bg", "message")
    g = g[(g["engine"] == eng) & (g["size_bytes"] == big)]
    st = fct_summary(g[g["protocol"] == "tcp"]["fct_s"])
    sm = fct_summary(g[g["protocol"] == "mptcp"]["fct_s"])
    faster = sm.mean_s < st.mean_s and _disjoint(sm.mean_ci_s, st.mean_ci_s)
    shrinks = gain.loc[big] > gain.loc[small]
    rho = float(stats.spearmanr(gain.index.astype(float), gain.to_numpy()).statistic) if len(gain) > 2 else math.nan
    measured = ("gain 1 - FCT_MPTCP/FCT_TCP by size: "
                + ", ".join(f"{k / 1e3:g} KB {v:+.0%}" for k, v in gain.items())
                + f"; at {big / 1e3:g} KB TCP {_ms(st.mean_s):.1f} {_ci_str(st.mean_ci_s)} ms, "
                  f"MPTCP {_ms(sm.mean_s):.1f} {_ci_str(sm.mean_ci_s)} ms; Spearman(size, gain) = {rho:.2f}")
    holds = bool(faster and shrinks)
    why = (f"MPTCP {'is' if faster else 'is not'} significantly faster for the largest messages; the gain at "
           f"{big / 1e3:g} KB is {'larger' if shrinks else 'not larger'} than at {small / 1e3:g} KB. Both must hold.")
    if not faster:
        why += (" A message leaves its aggregator host through one 100 Mbit/s host link whatever the protocol, so "
                "extra subflows only help where the fabric, not the host link, is the bottleneck.")
    return Claim(claim=name, paper_says=paper, we_measured=measured, holds=holds, why=why + _WHY_ENGINES)


def _c13(flows: pd.DataFrame, eng: str) -> Claim:
    name = f"C1.3 [{eng}] Table 2: mean, std dev and 95th percentile FCT of 70 KB flows all higher with MPTCP background"
    paper = "TCP background 78.4 / 122.5 / 266.7 ms; MPTCP background 91 / 140.6 / 510.5 ms (mean / std / p95)"
    t, m = _pooled(flows, eng, "s4", "short", "tcp"), _pooled(flows, eng, "s4", "short", "mptcp")
    if t.n == 0 or m.n == 0:
        return Claim(claim=name, paper_says=paper, we_measured="no Section 4 runs for this engine", holds=None,
                     why="Section 4 runs missing for this engine.")
    higher = {"mean": m.mean_s > t.mean_s, "std": m.std_s > t.std_s, "p95": m.p95_s > t.p95_s}
    sig = _disjoint(m.mean_ci_s, t.mean_ci_s)
    measured = (f"TCP background {_ms(t.mean_s):.1f} / {_ms(t.std_s):.1f} / {_ms(t.p95_s):.1f} ms, MPTCP background "
                f"{_ms(m.mean_s):.1f} / {_ms(m.std_s):.1f} / {_ms(m.p95_s):.1f} ms (n = {t.n}, {m.n}); 99 % CI of the "
                f"mean {_ci_str(t.mean_ci_s)} vs {_ci_str(m.mean_ci_s)}, of the p95 {_ci_str(t.p95_ci_s)} vs "
                f"{_ci_str(m.p95_ci_s)} ms")
    if all(higher.values()) and sig:
        holds, why = True, "All three statistics are higher with MPTCP background and the means' 99 % CIs are disjoint."
    elif all(higher.values()):
        holds, why = None, "All three are higher with MPTCP background, but the means' 99 % CIs overlap: not decided."
    else:
        lower = [k for k, v in higher.items() if not v]
        holds, why = False, f"Not higher with MPTCP background: {', '.join(lower)}."
    return Claim(claim=name, paper_says=paper, we_measured=measured, holds=holds, why=why + _WHY_ENGINES)


def _f7(loss: pd.DataFrame, eng: str) -> Claim:
    name = f"Fig. 7 [{eng}] loss-free flows finish alike; with MPTCP background more flows see loss"
    paper = "CDF of FCT: no difference for flows without loss; a larger share of flows with loss and delay under MPTCP"
    g = loss[loss["engine"] == eng].set_index("background") if len(loss) else loss
    if len(g) < 2 or g["n_flows"].min() == 0:
        return Claim(claim=name, paper_says=paper, we_measured="no per-flow loss information for this engine",
                     holds=None, why="Needs the Section 4 runs with per-flow loss (captures or FlowMonitor).")
    t, m = g.loc["TCP"], g.loc["MPTCP"]
    table = [[int(m["lossy_flows"]), int(m["n_flows"] - m["lossy_flows"])],
             [int(t["lossy_flows"]), int(t["n_flows"] - t["lossy_flows"])]]
    p_more = float(stats.fisher_exact(table, alternative="greater").pvalue)
    more = m["lossy_share"] > t["lossy_share"] and p_more < 0.01
    ratio = m["lossfree_median_ms"] / t["lossfree_median_ms"]
    alike = abs(ratio - 1) < 0.10
    measured = (f"flows with loss: TCP background {t['lossy_share']:.1%} {t['lossy_share_ci']}, MPTCP {m['lossy_share']:.1%} "
                f"{m['lossy_share_ci']} (Fisher one-sided p = {p_more:.2g}); loss-free median FCT {t['lossfree_median_ms']:.1f} "
                f"vs {m['lossfree_median_ms']:.1f} ms (ratio {ratio:.2f}, KS p = {t.get('ks_p_lossfree', math.nan):.2g})")
    why = (f"(a) share of lossy flows {'significantly higher' if more else 'not significantly higher'} with MPTCP "
           f"background (p < 0.01 required); (b) loss-free median FCTs {'within' if alike else 'differ by more than'} "
           "10 %. Both must hold.")
    if not alike:
        why += (f" Loss-free flows finish {'faster' if ratio < 1 else 'slower'} under MPTCP background "
                f"(ratio {ratio:.2f}): the CDFs differ outside the lossy tail too"
                + (", though not in the direction of MPTCP harming them." if ratio < 1 else "."))
    return Claim(claim=name, paper_says=paper, we_measured=measured, holds=bool(more and alike), why=why)


PROTOCOLS_ = ("tcp", "mptcp")


def claims(dataset: P1Dataset, *, tables_: dict | None = None) -> pd.DataFrame:
    """Verdicts on C1.1, C1.2, C1.3 and the Fig. 7 statement, one row per claim and engine."""
    loss = tables_["fig7_loss"] if tables_ is not None else fig7_loss(dataset)
    rows = []
    engines = _engines(dataset.flows)
    ratios = {}
    for eng in engines:
        t, m = (_pooled(dataset.flows, eng, "s4", "short", p) for p in ("tcp", "mptcp"))
        if t.n and m.n:
            ratios[eng] = (m.mean_s / t.mean_s, m.p95_s / t.p95_s)
    for eng in engines:
        c13 = _c13(dataset.flows, eng)
        if len(ratios) == 2:
            c13 = replace(c13, why=c13.why + " Across engines, MPTCP/TCP background ratio of the mean / p95: "
                          + "; ".join(f"{e} {r[0]:.2f} / {r[1]:.2f}" for e, r in ratios.items()) + ".")
        rows += [_c11(dataset.flows, eng), _c12(dataset.flows, eng), c13, _f7(loss, eng)]
    return claims_frame(rows)


# ------------------------------------------------------------------- figures
def plot_fig7(cdf: pd.DataFrame, axes=None):
    """Fig. 7: CDF of the 70 KB FCTs under TCP and MPTCP background, one panel per engine (log x).

    Parameters
    ----------
    cdf : pandas.DataFrame
        :func:`fig7_cdf` (``tables(...)["fig7_cdf"]``).
    """
    import matplotlib.pyplot as plt

    engines = [e for e in ("kernel", "ns3") if e in set(cdf["engine"])]
    if axes is None:
        _, axes = plt.subplots(1, max(1, len(engines)), figsize=(5.5 * max(1, len(engines)), 4), squeeze=False)
        axes = axes[0]
    for ax, eng in zip(np.atleast_1d(axes), engines):
        for bg, style in (("TCP", "-"), ("MPTCP", "--")):
            g = cdf[(cdf["engine"] == eng) & (cdf["background"] == bg)]
            ax.step(g["fct_ms"], g["cdf"], style, where="post", label=f"{bg} background (n = {len(g)})")
        ax.set_xscale("log")
        ax.set_xlabel("flow completion time of 70 KB flows [ms]")
        ax.set_ylabel("cumulative probability")
        ax.set_title(ENGINE_LABELS[eng], fontsize=9)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8, loc="lower right")
    return axes


def plot_figs8_10(table: pd.DataFrame, axes=None):
    """Figs. 8-10: mean FCT per size with 99 % CI error bars, TCP vs MPTCP, one row per engine."""
    import matplotlib.pyplot as plt

    engines = [e for e in ("kernel", "ns3") if e in set(table["engine"])]
    figs = ["Fig. 8", "Fig. 9", "Fig. 10"]
    if axes is None:
        _, axes = plt.subplots(max(1, len(engines)), 3, figsize=(14, 3.8 * max(1, len(engines))), squeeze=False)
    titles = {"Fig. 8": "queries, no background", "Fig. 9": "queries, with background",
              "Fig. 10": "short messages, with background"}
    for i, eng in enumerate(engines):
        for j, fig in enumerate(figs):
            ax = axes[i][j]
            panel = table[(table["engine"] == eng) & (table["figure"] == fig)]
            sizes = sorted(panel["size_kb"].unique())
            for k, proto in enumerate(("TCP", "MPTCP")):
                g = panel[panel["protocol"] == proto].sort_values("size_kb")
                x = np.searchsorted(sizes, g["size_kb"]) + (k - 0.5) * 0.2
                ax.errorbar(x, g["mean_ms"], yerr=[g["mean_ms"] - g["ci_low_ms"], g["ci_high_ms"] - g["mean_ms"]],
                            fmt="o" if proto == "TCP" else "s", capsize=3, label=f"{proto} (n = {int(g['n'].sum())})")
            ax.set_xticks(np.arange(len(sizes)), [f"{v:g}" for v in sizes])
            if not len(panel):
                ax.text(0.5, 0.5, "not run", transform=ax.transAxes, ha="center")
            ax.set_xlabel("flow size [KB]")
            ax.set_ylabel("mean FCT [ms] (99 % CI)")
            ax.set_title(f"{fig} {titles[fig]} — {eng}", fontsize=9)
            ax.grid(True, alpha=0.3)
            ax.legend(fontsize=8)
    return axes


def classify_capture(path: str | Path) -> pd.DataFrame:
    """Classify the 70 KB flows of a shipped capture into P1's patterns (:func:`tcpmodels.traces.classify_short_flows`)."""
    import warnings

    from tcpmodels.traces import TraceWarning, classify_short_flows, read_pcap

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TraceWarning)
        packets = read_pcap(path)
    return classify_short_flows(packets)


def closing_note(tables_: dict, verdicts: pd.DataFrame) -> str:
    """The notebook's closing summary: Table 2 for both engines beside the paper's, the verdicts, the wall times."""
    t2 = tables_["table2"]
    lines = ["Table 2 — FCT of 70 KB flows [ms]: mean / std dev / 95th percentile (n flows)"]
    for _, r in t2.iterrows():
        cells = [f"paper {r['paper_mean_ms']:.1f} / {r['paper_std_ms']:.1f} / {r['paper_p95_ms']:.1f}"]
        for eng in ("kernel", "ns3"):
            if r[f"{eng}_n"]:
                cells.append(f"{eng} {r[f'{eng}_mean_ms']:.1f} / {r[f'{eng}_std_ms']:.1f} / {r[f'{eng}_p95_ms']:.1f} "
                             f"({r[f'{eng}_n']})")
            else:
                cells.append(f"{eng} not run")
        lines.append(f"  {r['background']:>5} background: " + "; ".join(cells))
    lines.append("Verdicts:")
    for _, v in verdicts.iterrows():
        h = "undecided" if pd.isna(v["holds"]) else ("holds" if v["holds"] else "does not hold")
        lines.append(f"  {v['claim'].split(':')[0]}: {h}")
    lines.append("Campaign wall time:")
    for _, c in tables_["campaign"].iterrows():
        lines.append(f"  {c['engine']}: {c['runs']} runs (seeds {c['seeds']}), {c['wall_min_sum']} min of runs, "
                     f"{c['elapsed_min']} min elapsed incl. {c['lock_wait_min']} min waiting for the host lock, "
                     f"load {c['load_1m_min_median_max']}")
    return "\n".join(lines)
