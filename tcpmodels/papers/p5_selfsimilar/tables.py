"""P5's dataset, its loader, and every table (Figs. 2-11 as tables, loss, finishing, Hurst)."""


from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from tcpmodels.models.heavytail import hurst_from_alpha, pareto_median, pareto_scale
from tcpmodels.papers.common import read_frames

CITATION = ("A. Ono, T. Nakashima, 'Self-similar トラフィックの重なりによるボトルネックパフォーマンスの評価', "
            "Kyushu Tokai University")

#: H that Leland et al. report for the full Bellcore traces ("around 0.8"; 0.7-0.9 over their traces)
BELLCORE_FULL_TRACE_H = 0.8

#: Figures 2-11: (figure, quantity, alpha, gateway rate [Mbit/s], what the paper says)
PAPER_FIGURES = (
    ("Fig. 2", "loss_s", 1.05, 5.0, "loss at S only with 32 clients, slightly, at the start; none with fewer"),
    ("Fig. 3", "loss_s", 1.65, 5.0, "loss at S from more than 16 clients; with 32 over 10 % for the first ~5 s"),
    ("Fig. 4", "loss_s", 1.65, 10.0, "loss at S higher than at 5 Mbit/s (self-clocking pushes more data), "
                                     "then falls; even with 8 clients; grows less than linearly with clients"),
    ("Fig. 5", "loss_g1", 1.65, 5.0, "no loss at G1 with 16 clients; with 32 it persists after 10 s; "
                                     "24 and 32 similar between 2 and 6 s"),
    ("Fig. 6", "thr_g1", 1.05, 5.0, "all flows end within 10 s; 24 clients finish before 16 "
                                    "(one or two huge files keep the 16-client run going)"),
    ("Fig. 7", "sessions", 1.05, 5.0, "more clients, more completed sessions"),
    ("Fig. 8", "thr_g1", 1.65, 5.0, "only 24 and 32 clients fill the link and are not finished at 20 s; "
                                    "16 clients oscillate at 14-18 s (a few huge files alone on the link)"),
    ("Fig. 9", "sessions", 1.65, 5.0, "24 clients complete more sessions in 20 s than 32 (32 still running); "
                                      "sessions last longer than with alpha 1.05"),
    ("Fig. 10", "thr_g1", 1.65, 10.0, "throughput falls to 0 within 20 s: every session done; oscillation "
                                      "after the link was full"),
    ("Fig. 11", "sessions", 1.65, 10.0, "32 clients now complete the most sessions; nearly all done by ~14 s"),
)

#: which run case each set of tables comes from
FIGURE_CASES = ("main", "alt_server_queue", "alt_arrival")


@dataclass(frozen=True, kw_only=True)
class P5Dataset:
    """The shipped P5 tables (see :func:`tcpmodels.experiments.p5.build_dataset` for their columns)."""

    runs: pd.DataFrame
    bins: pd.DataFrame
    flows: pd.DataFrame
    hurst: pd.DataFrame
    counts: pd.DataFrame
    provenance: dict = field(default_factory=dict)
    #: kernel testbed runs (:mod:`tcpmodels.experiments.p5_testbed`): H per alpha and estimator; empty if not shipped
    testbed_hurst: pd.DataFrame = field(default_factory=pd.DataFrame)
    #: their packet-count series (alpha, t_s, packets)
    testbed_counts: pd.DataFrame = field(default_factory=pd.DataFrame)
    testbed_provenance: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        return {"runs": self.runs, "bins": self.bins, "flows": self.flows, "hurst": self.hurst,
                "counts": self.counts, "provenance": self.provenance, "testbed_hurst": self.testbed_hurst,
                "testbed_counts": self.testbed_counts, "testbed_provenance": self.testbed_provenance}


def load_dataset(data_dir: str | Path = "data") -> P5Dataset:
    """Read ``p5_*.parquet`` and ``p5_provenance.json`` from ``data_dir`` or ``data_dir/datasets``.

    Raises
    ------
    FileNotFoundError
        If there is no ``p5_runs.parquet`` (build it with ``python -m tcpmodels.experiments.p5 dataset``).
    """
    cmd = "python -m tcpmodels.experiments.p5 dataset"
    parts = read_frames(data_dir, "p5", ("runs", "bins", "flows", "hurst", "counts"), command=cmd)
    prov = parts.pop("provenance")
    try:  # the kernel testbed part is optional
        tb = read_frames(data_dir, "p5_testbed", ("hurst", "counts"), command="python -m tcpmodels.experiments.p5 "
                         "testbed")
    except FileNotFoundError:
        tb = None
    if tb is not None:
        parts.update(testbed_hurst=tb["hurst"], testbed_counts=tb["counts"], testbed_provenance=tb["provenance"])
    return P5Dataset(**parts, provenance=prov)


def _select(df: pd.DataFrame, *, case: str, alpha: float | None = None, backbone_mbps: float | None = None):
    sel = df["case"] == case
    if alpha is not None:
        sel &= np.isclose(df["alpha"], alpha)
    if backbone_mbps is not None:
        sel &= np.isclose(df["backbone_mbps"], backbone_mbps)
    return df[sel]


def over_time(dataset: P5Dataset, quantity: str, *, alpha: float, backbone_mbps: float, case: str = "main",
              step_s: float = 1.0) -> pd.DataFrame:
    """One figure of the paper as a table: time window (rows) x active clients (columns).

    Parameters
    ----------
    quantity : {"loss_s", "loss_g1", "thr_g1", "sessions"}
        Loss rate at S or G1 [%] (bytes dropped over bytes offered in the window, pooled over
        seeds), G1 -> G2 throughput [Mbit/s] or completed sessions per window (mean over seeds).
    alpha : float
        Pareto shape. [-]
    backbone_mbps : float
        Gateway rate. [Mbit/s]
    step_s : float
        Window. [s]

    Returns
    -------
    pandas.DataFrame
        Indexed by ``t_end_s`` (window end) [s].
    """
    if quantity not in ("loss_s", "loss_g1", "thr_g1", "sessions"):
        raise ValueError(f"quantity must be 'loss_s', 'loss_g1', 'thr_g1' or 'sessions'; got {quantity!r}")
    if not step_s > 0:
        raise ValueError(f"step_s [s] must be in (0, inf); got {step_s!r}")
    b = _select(dataset.bins, case=case, alpha=alpha, backbone_mbps=backbone_mbps)
    if b.empty:
        raise ValueError(f"no runs of case {case!r} with alpha {alpha} at {backbone_mbps} Mbit/s in the dataset")
    w = np.ceil(np.round(b["t_end_s"].to_numpy() / step_s, 9)) * step_s
    b = b.assign(t_end_s=w)
    n_seeds = b.groupby("n_clients")["seed"].nunique()
    if quantity.startswith("loss"):
        tag = quantity.split("_")[1]
        g = b.groupby(["t_end_s", "n_clients"])[[f"drop_bytes_{tag}", f"enq_bytes_{tag}"]].sum()
        off = g.sum(axis=1)
        val = (100.0 * g[f"drop_bytes_{tag}"] / off.where(off > 0)).fillna(0.0)
    elif quantity == "thr_g1":
        # bytes per window per seed -> Mbit/s
        g = b.assign(bits=b["thr_g1_bps"] * 0.1).groupby(["t_end_s", "n_clients"])["bits"].sum()
        val = g / n_seeds.reindex(g.index.get_level_values("n_clients")).to_numpy() / step_s / 1e6
    else:
        g = b.groupby(["t_end_s", "n_clients"])["completed"].sum()
        val = g / n_seeds.reindex(g.index.get_level_values("n_clients")).to_numpy()
    out = val.unstack("n_clients").sort_index()
    out.columns = [f"{c} clients" for c in out.columns]
    return out


def loss_table(dataset: P5Dataset, *, case: str = "main") -> pd.DataFrame:
    """Whole-run loss rate at S and at G1 per alpha, clients and gateway rate (mean and range over seeds) [%]."""
    r = dataset.runs[dataset.runs["case"] == case]
    if r.empty:
        raise ValueError(f"no runs of case {case!r} in the dataset")
    g = r.groupby(["backbone_mbps", "alpha", "n_clients"])
    out = pd.DataFrame({
        "loss_s_pct": 100 * g["loss_s"].mean(),
        "loss_s_pct_max": 100 * g["loss_s"].max(),
        "loss_g1_pct": 100 * g["loss_g1"].mean(),
        "loss_g1_pct_min": 100 * g["loss_g1"].min(),
        "loss_g1_pct_max": 100 * g["loss_g1"].max(),
        "offered_MB": g["offered_bytes"].mean() / 1e6,
        "completed_pct": 100 * (g["n_completed"].sum() / g["n_flows"].sum()),
        "n_seeds": g["seed"].nunique(),
    })
    return out.reset_index()


def _pivot(lt: pd.DataFrame, col: str, backbone_mbps: float) -> pd.DataFrame:
    t = lt[np.isclose(lt["backbone_mbps"], backbone_mbps)].pivot(index="alpha", columns="n_clients", values=col)
    t.columns = [f"{c} clients" for c in t.columns]
    return t


def _flow_end_s(flows: pd.DataFrame, runs: pd.DataFrame) -> pd.Series:
    dur = flows["run_id"].map(runs.set_index("run_id")["duration_s"])
    return (flows["start_s"] + flows["fct_s"]).where(flows["completed"], dur)


def _finish_table(dataset: P5Dataset) -> pd.DataFrame:
    """Per main run: when downloads finish, how long the link stays busy, and the weight of the largest files."""
    runs = dataset.runs[dataset.runs["case"] == "main"].set_index("run_id")
    flows = dataset.flows[dataset.flows["run_id"].isin(runs.index)]
    bins = dataset.bins[dataset.bins["run_id"].isin(runs.index)]
    rows = []
    for rid, f in flows.groupby("run_id"):
        b = bins[bins["run_id"] == rid]
        busy = b.loc[b["thr_g1_bps"] > 0, "t_end_s"].to_numpy()
        ends = np.sort((f["start_s"] + f["fct_s"])[f["completed"]].to_numpy())
        k90 = int(np.ceil(0.9 * len(f)))
        order = f.sort_values("size_bytes", ascending=False)
        k = max(1, int(round(0.01 * len(f))))
        rx = max(1, int(f["rx_bytes"].sum()))
        big = order.iloc[0]
        big_end = float(big["start_s"] + big["fct_s"]) if big["completed"] else float(runs.loc[rid, "duration_s"])
        last_busy = float(busy.max()) if busy.size else np.nan
        life = (b["t_end_s"] > big["start_s"]) & (b["t_end_s"] - 0.1 < big_end)
        link_bytes = float((b.loc[life, "thr_g1_bps"] * 0.1 / 8).sum())
        big_link = float(big["rx_bytes"] / link_bytes) if link_bytes > 0 else np.nan  # its share while it ran
        rows.append({
            "run_id": rid, **runs.loc[rid, ["alpha", "n_clients", "backbone_mbps", "seed"]].to_dict(),
            "completed_pct": 100.0 * f["completed"].mean(),
            "t90_completed_s": float(ends[k90 - 1]) if len(ends) >= k90 else np.nan,
            "last_completion_s": float(ends[-1]) if len(ends) else np.nan,
            "last_busy_s": last_busy,
            "largest_file_MB": float(order["size_bytes"].iloc[0] / 1e6),
            "largest_file_end_s": big_end,
            "largest_file_link_share": big_link,
            "largest_dominates_end": bool(big_end >= last_busy - 0.5 and big_link > 0.5),
            "largest_file_rx_share": float(order["rx_bytes"].iloc[0] / rx),
            "top1pct_rx_share": float(order["rx_bytes"].iloc[:k].sum() / rx),
            "median_size_bytes": float(f["size_bytes"].median()),
            "mean_size_bytes": float(f["size_bytes"].mean()),
        })
    return pd.DataFrame(rows)


def _hurst_long(dataset: P5Dataset) -> pd.DataFrame:
    h = dataset.hurst[dataset.hurst["case"] == "long"]
    if h.empty:
        return pd.DataFrame(columns=["alpha", "method", "hurst", "ci95_low", "ci95_high", "predicted", "covers"])
    out = h.groupby(["alpha", "method"]).agg(hurst=("hurst", "mean"), ci95_low=("ci95_low", "mean"),
                                             ci95_high=("ci95_high", "mean"), stderr_kind=("stderr_kind", "first"),
                                             n=("n", "first"), n_runs=("run_id", "nunique"))
    out = out.reset_index()
    out["predicted"] = hurst_from_alpha(out["alpha"].to_numpy())
    out["covers"] = (out["ci95_low"] <= out["predicted"]) & (out["predicted"] <= out["ci95_high"])
    out["diff"] = out["hurst"] - out["predicted"]
    return out


def _hurst_testbed(dataset: P5Dataset) -> pd.DataFrame:
    """Kernel testbed runs: one row per alpha and estimator, with the prediction and whether the interval covers it."""
    h = dataset.testbed_hurst
    if h.empty:
        return pd.DataFrame(columns=["alpha", "method", "hurst", "ci95_low", "ci95_high", "predicted", "covers"])
    out = h[["alpha", "method", "hurst", "ci95_low", "ci95_high", "stderr_kind", "n"]].copy()
    out["predicted"] = hurst_from_alpha(out["alpha"].to_numpy())
    out["covers"] = (out["ci95_low"] <= out["predicted"]) & (out["predicted"] <= out["ci95_high"])
    out["diff"] = out["hurst"] - out["predicted"]
    return out.reset_index(drop=True)


def _hurst_summary(long: pd.DataFrame) -> pd.DataFrame:
    """Per alpha: predicted H, each estimator's H [95 % interval], and the median over estimators."""
    if long.empty:
        return pd.DataFrame()
    txt = long.assign(cell=[f"{h:.2f} [{lo:.2f}, {hi:.2f}]" for h, lo, hi in
                            zip(long["hurst"], long["ci95_low"], long["ci95_high"])])
    t = txt.pivot(index="alpha", columns="method", values="cell")
    t.insert(0, "predicted (3-alpha)/2", hurst_from_alpha(t.index.to_numpy()))
    t["median over estimators"] = long.groupby("alpha")["hurst"].median()
    t["estimators whose CI covers"] = long.groupby("alpha")["covers"].sum().astype(int).astype(str) + " of " + \
        long.groupby("alpha")["covers"].size().astype(str)
    return t


def _hurst_20s(dataset: P5Dataset) -> pd.DataFrame:
    h = dataset.hurst[(dataset.hurst["case"] == "main") & (dataset.hurst["method"].isin(["whittle", "wavelet"]))]
    if h.empty:
        return pd.DataFrame()
    g = h.groupby(["alpha", "method"])
    out = pd.DataFrame({"hurst_mean": g["hurst"].mean(), "hurst_sd_over_runs": g["hurst"].std(),
                        "ci95_halfwidth_mean": ((g["ci95_high"].mean() - g["ci95_low"].mean()) / 2),
                        "n_runs": g["run_id"].nunique()}).reset_index()
    out["predicted"] = hurst_from_alpha(out["alpha"].to_numpy())
    return out


def _hurst_bellcore(dataset: P5Dataset) -> pd.DataFrame:
    h = dataset.hurst[dataset.hurst["source"] == "bellcore"]
    cols = ["method", "hurst", "stderr", "stderr_kind", "ci95_low", "ci95_high", "n"]
    out = h[cols].reset_index(drop=True)
    out["full_trace_H_Leland"] = BELLCORE_FULL_TRACE_H
    return out


def _size_table(dataset: P5Dataset) -> pd.DataFrame:
    """Sizes drawn in the main runs against the Pareto law: median, mean, share of one-segment files."""
    f = dataset.flows.merge(dataset.runs[["run_id", "alpha", "case"]], on="run_id")
    f = f[f["case"] == "main"]
    rows = []
    for a, g in f.groupby("alpha"):
        s = g["size_bytes"].to_numpy()
        scale = float(pareto_scale(10_000.0, a))
        rows.append({"alpha": a, "files": len(s), "law_median_bytes": float(pareto_median(scale, a)),
                     "drawn_median_bytes": float(np.median(s)), "law_mean_bytes": 10_000.0,
                     "drawn_mean_bytes": float(s.mean()), "one_segment_share": float(np.mean(s <= 1448)),
                     "largest_MB": float(s.max() / 1e6)})
    return pd.DataFrame(rows)


def _alt_compare(dataset: P5Dataset, case: str) -> pd.DataFrame:
    alt = dataset.runs[dataset.runs["case"] == case]
    if alt.empty:
        return pd.DataFrame()
    base = dataset.runs[(dataset.runs["case"] == "main") & (dataset.runs["seed"] == 0)]
    keys = ["alpha", "n_clients", "backbone_mbps"]
    cols = ["loss_s", "loss_g1", "n_completed", "n_flows"]
    m = alt[keys + cols].merge(base[keys + cols], on=keys, suffixes=(f"_{case}", "_main"))
    for c in ("loss_s", "loss_g1"):
        for s in (f"_{case}", "_main"):
            m[c + s] = 100 * m[c + s]
    return m.rename(columns={f"loss_s_{case}": f"loss_s_pct_{case}", "loss_s_main": "loss_s_pct_main",
                             f"loss_g1_{case}": f"loss_g1_pct_{case}", "loss_g1_main": "loss_g1_pct_main"})


def _onset_table(dataset: P5Dataset, case: str) -> pd.DataFrame:
    """First and last second with loss at S and at G1 per run (seed 0) of ``case``."""
    b = dataset.bins[(dataset.bins["case"] == case) & (dataset.bins["seed"] == 0)]
    rows = []
    for (a, bw, n), g in b.groupby(["alpha", "backbone_mbps", "n_clients"]):
        row = {"alpha": a, "backbone_mbps": bw, "n_clients": n}
        for tag in ("s", "g1"):
            t = g.loc[g[f"drop_pkts_{tag}"] > 0, "t_end_s"]
            row[f"first_loss_{tag}_s"] = float(t.min()) if len(t) else np.nan
            row[f"last_loss_{tag}_s"] = float(t.max()) if len(t) else np.nan
        rows.append(row)
    return pd.DataFrame(rows)


def _figure_summary(table: pd.DataFrame | None, quantity: str) -> str:
    """One line per figure table: per client count, the numbers the paper's statement is about."""
    if table is None or table.empty:
        return "not in the dataset"
    parts = []
    for col in table.columns:
        x = table[col]
        n = col.split()[0]
        if quantity.startswith("loss"):
            lossy = x[x > 0]
            parts.append(f"{n}: none" if lossy.empty else
                         f"{n}: max {x.max():.1f} % ({lossy.index.min() - 1:g}-{lossy.index.max():g} s)")
        elif quantity == "thr_g1":
            busy = x[x > 0.01]
            full = x[x >= 0.95 * x.max()]
            parts.append(f"{n}: last data at {busy.index.max():g} s, near peak in {len(full)} s" if len(busy)
                         else f"{n}: idle")
        else:
            parts.append(f"{n}: {x.sum():.0f} done")
    return "; ".join(parts)


def tables(dataset: P5Dataset, *, quick: bool = False, seed: int = 0, step_s: float = 1.0) -> dict[str, pd.DataFrame]:
    """Every table of the reproduction.

    Keys: ``figN`` (Figs. 2-11 as time x clients, case ``main``; absent if the
    dataset lacks that alpha and rate) and ``figN_altq``
    (Figs. 2-5 with the 50-packet queue at S), ``paper_figures`` (the paper's
    statement per figure), ``loss`` (long form), ``loss_s_5M``, ``loss_g1_5M``,
    ``loss_s_10M``, ``loss_g1_10M`` (alpha x clients [%]), ``finish`` (per run),
    ``sizes``, ``hurst_long``, ``hurst_summary``, ``hurst_20s``, ``hurst_bellcore``,
    ``hurst_testbed`` and ``hurst_testbed_summary`` (kernel testbed; empty if not shipped), ``alt_arrival``,
    ``alt_server_queue``, ``onset_altq``, ``onset_main``. ``quick`` and ``seed`` change nothing (every
    table is read from the shipped runs in about a second).
    """
    t: dict[str, pd.DataFrame] = {}
    have = set(dataset.runs["case"])
    for fig, q, a, bw, _ in PAPER_FIGURES:
        key = fig.replace("Fig. ", "fig")
        try:
            t[key] = over_time(dataset, q, alpha=a, backbone_mbps=bw, step_s=step_s)
        except ValueError:  # a partial dataset without this case: no table rather than an invented one
            continue
        if q.startswith("loss") and "alt_server_queue" in have:
            try:
                t[key + "_altq"] = over_time(dataset, q, alpha=a, backbone_mbps=bw, case="alt_server_queue",
                                             step_s=step_s)
            except ValueError:
                pass
    t["paper_figures"] = pd.DataFrame(PAPER_FIGURES, columns=["figure", "quantity", "alpha", "backbone_mbps",
                                                              "paper_says"])
    t["paper_figures"]["ours"] = [_figure_summary(t.get(fig.replace("Fig. ", "fig")), q)
                                  for fig, q, *_ in PAPER_FIGURES]
    lt = loss_table(dataset)
    t["loss"] = lt
    for bw in (5.0, 10.0):
        t[f"loss_s_{bw:g}M"] = _pivot(lt, "loss_s_pct", bw)
        t[f"loss_g1_{bw:g}M"] = _pivot(lt, "loss_g1_pct", bw)
    t["finish"] = _finish_table(dataset)
    t["sizes"] = _size_table(dataset)
    t["hurst_long"] = _hurst_long(dataset)
    t["hurst_summary"] = _hurst_summary(t["hurst_long"])
    t["hurst_20s"] = _hurst_20s(dataset)
    t["hurst_bellcore"] = _hurst_bellcore(dataset)
    t["hurst_testbed"] = _hurst_testbed(dataset)
    t["hurst_testbed_summary"] = _hurst_summary(t["hurst_testbed"])
    t["alt_arrival"] = _alt_compare(dataset, "alt_arrival")
    t["alt_server_queue"] = _alt_compare(dataset, "alt_server_queue")
    t["onset_main"] = _onset_table(dataset, "main")
    t["onset_altq"] = _onset_table(dataset, "alt_server_queue")
    return t


def hurst_aggregated(counts: pd.DataFrame, factor: int = 10, *, source: str = "ns-3") -> pd.DataFrame:
    """Every estimator on each ``source`` series of ``p5_counts`` after summing ``factor`` bins into one.

    Parameters
    ----------
    counts : pandas.DataFrame
        ``p5_counts`` rows (``run_id``, ``source``, ``alpha``, ``t_s``, ``packets``).
    factor : int
        Bins per aggregated bin (10: 10 ms -> 100 ms). [-]

    Returns
    -------
    pandas.DataFrame
        alpha (rows) x method (columns) of H, plus ``predicted`` = (3 - alpha)/2. [-]
    """
    from tcpmodels.models.hurst import estimate_all  # noqa: PLC0415

    if not isinstance(factor, (int, np.integer)) or factor < 1:
        raise ValueError(f"factor [-] must be an integer >= 1; got {factor!r}")
    rows = []
    for _, g in counts[counts["source"] == source].groupby("run_id"):
        x = g.sort_values("t_s")["packets"].to_numpy()
        x = x[: len(x) // factor * factor].reshape(-1, factor).sum(axis=1).astype(float)
        est = estimate_all(x)["hurst"]
        rows.append({"alpha": float(g["alpha"].iloc[0]), **est.to_dict()})
    if not rows:
        return pd.DataFrame()
    out = pd.DataFrame(rows).groupby("alpha").mean()
    out["predicted"] = hurst_from_alpha(out.index.to_numpy())
    return out


def closing_tables(tables_: dict) -> dict[str, pd.DataFrame]:
    """The closing note's two tables: loss at 5 Mbit/s (alpha x clients, G1 and S) [%] and H measured vs predicted."""
    lt = tables_["loss"]
    lt5 = lt[np.isclose(lt["backbone_mbps"], 5.0)]
    loss = lt5.pivot(index="alpha", columns="n_clients", values="loss_g1_pct").add_prefix("G1 %, n=").join(
        lt5.pivot(index="alpha", columns="n_clients", values="loss_s_pct").add_prefix("S %, n="))
    hl = tables_["hurst_long"]
    if hl.empty:
        h = pd.DataFrame()
    else:
        h = hl.pivot(index="alpha", columns="method", values="hurst")
        h.insert(0, "predicted (3-alpha)/2", hurst_from_alpha(h.index.to_numpy()))
        h["median"] = hl.groupby("alpha")["hurst"].median()
    return {"loss_5M": loss, "hurst": h}


def size_note(mean_bytes: float = 10e3, median_bytes: float = 2.5e3, alphas=(1.05, 1.35, 1.65, 1.95)) -> pd.DataFrame:
    """The paper's "mean 10 KB, median about 2.5 KB" against the Pareto shapes it runs.

    For a Pareto law with the given mean, the median of each alpha [bytes], and the alpha whose
    median is ``median_bytes`` (:func:`tcpmodels.models.heavytail.pareto_alpha_from_median_ratio`).
    With mean 10 KB the medians are 0.9, 4.3, 6.0 and 6.9 KB: 2.5 KB needs alpha 1.16.

    Returns
    -------
    pandas.DataFrame
        Columns ``alpha, median_bytes, note``; the last row is the implied alpha.
    """
    from tcpmodels.models.heavytail import pareto_alpha_from_median_ratio

    rows = [{"alpha": a, "median_bytes": float(pareto_median(pareto_scale(mean_bytes, a), a)),
             "note": f"Pareto with mean {mean_bytes / 1e3:g} KB"} for a in alphas]
    implied = float(pareto_alpha_from_median_ratio(median_bytes / mean_bytes))
    rows.append({"alpha": implied, "median_bytes": median_bytes,
                 "note": f"the alpha a {median_bytes / 1e3:g} KB median implies at mean {mean_bytes / 1e3:g} KB"})
    return pd.DataFrame(rows)


def zero_panels(tables: dict[str, pd.DataFrame], figures: list[str], *, suffix: str = "") -> list[str]:
    """The figures among ``figures`` whose table is all zero (no loss anywhere): nothing to draw."""
    out = []
    for name in figures:
        key = "fig" + name.split()[-1] + suffix
        t = tables.get(key)
        if t is not None and len(t) and not np.any(np.nan_to_num(t.to_numpy(float)) != 0):
            out.append(name)
    return out


def zero_note(figures: list[str]) -> str:
    """One sentence on why the all-zero figures among Figs. 2-4 are not drawn (empty string if none)."""
    if not figures:
        return ""
    return (f"{', '.join(figures)}: no loss at the server S in any window for any client count, so "
            f"{'these panels are' if len(figures) > 1 else 'this panel is'} not drawn. With the printed "
            "3000-packet queues S cannot lose in ns-3: its 10 Mbit/s link is faster than the 5 or 10 Mbit/s "
            "gateways, so the backlog builds at G1, not at S. The panels with losses are drawn below; the "
            "50-packet-queue variant further down shows losses at S.")


def provenance_table(dataset: P5Dataset) -> pd.DataFrame:
    """When and how the runs were made: times, wall times, seeds, versions, missing runs."""
    prov, runs = dataset.provenance, dataset.runs
    return pd.Series({
        "first run finished (UTC)": prov.get("first_run_utc"),
        "last run finished (UTC)": prov.get("last_run_utc"),
        "sweep wall time on the local cluster, all invocations [min]": round(prov.get("campaign_wall_s", np.nan) / 60, 1),
        "sum of simulation wall times [min]": round(prov.get("sum_run_wall_s", np.nan) / 60, 1),
        "sum of ns-3 start-up (cppyy) times [min]": round(prov.get("sum_ns3_load_wall_s", np.nan) / 60, 1),
        "runs by case": prov.get("runs_by_case"),
        "main-grid seeds present": sorted(runs.loc[runs["case"] == "main", "seed"].unique().tolist()),
        "ns-3": prov.get("ns3_version"),
        "kernel": prov.get("kernel"),
        "load average when the dataset was built": prov.get("load_average_at_dataset"),
        "missing runs": ", ".join(prov.get("missing_runs", [])) or "none",
    }).to_frame("value")
