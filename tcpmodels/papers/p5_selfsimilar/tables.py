"""P5 tables: Figs. 2-11 as tables, loss, finishing, sizes, the closing note's tables, zero panels, provenance."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from tcpmodels.models.heavytail import hurst_from_alpha, pareto_median, pareto_scale
from tcpmodels.papers.p5_selfsimilar.data import PAPER_FIGURES, P5Dataset, select_rows
from tcpmodels.papers.p5_selfsimilar.hurst import (
    hurst_20s,
    hurst_bellcore,
    hurst_long,
    hurst_summary,
    hurst_testbed,
)

__all__ = ["over_time", "loss_table", "tables", "closing_tables", "size_note", "zero_panels", "zero_note",
           "onset_note", "provenance_table"]


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
    b = select_rows(dataset.bins, case=case, alpha=alpha, backbone_mbps=backbone_mbps)
    if b.empty:
        raise ValueError(f"no runs of case {case!r} with alpha {alpha} at {backbone_mbps} Mbit/s in the dataset")
    bin_s = b["run_id"].map(_bin_width_s(b))
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
        g = b.assign(bits=b["thr_g1_bps"] * bin_s).groupby(["t_end_s", "n_clients"])["bits"].sum()
        val = g / n_seeds.reindex(g.index.get_level_values("n_clients")).to_numpy() / step_s / 1e6
    else:
        g = b.groupby(["t_end_s", "n_clients"])["completed"].sum()
        val = g / n_seeds.reindex(g.index.get_level_values("n_clients")).to_numpy()
    out = val.unstack("n_clients").sort_index()
    out.columns = [f"{c} clients" for c in out.columns]
    return out


def _bin_width_s(bins: pd.DataFrame) -> pd.Series:
    """Each run's sampling bin [s], from its bins' end times (a run's bins are regular, the first ends at one bin).

    Raises
    ------
    ValueError
        If a run's bins are not equally spaced (to 1 µs), which no campaign writes.
    """
    def width(ends: pd.Series) -> float:
        steps = np.diff(np.concatenate([[0.0], np.sort(ends.to_numpy(dtype=float))]))
        if steps.size == 0 or not np.allclose(steps, steps[0], rtol=0, atol=1e-6):
            raise ValueError(f"bins of run {ends.name!r} are not equally spaced: steps "
                             f"{np.unique(np.round(steps, 6))[:5]} s (expected one bin width per run)")
        return float(steps[0])
    return bins.groupby("run_id")["t_end_s"].agg(width)


def loss_table(dataset: P5Dataset, *, case: str = "main") -> pd.DataFrame:
    """Whole-run loss rate at S and at G1 per alpha, clients and gateway rate (mean and range over seeds) [%].

    Parameters
    ----------
    dataset : P5Dataset
        The campaign's data (its ``runs``).
    case : str
        Run case, e.g. ``"main"``.

    Returns
    -------
    pandas.DataFrame
        One row per ``backbone_mbps, alpha, n_clients``: ``loss_s_pct``, ``loss_s_pct_max``,
        ``loss_g1_pct``, ``loss_g1_pct_min``, ``loss_g1_pct_max`` [%], ``offered_MB`` [MB of 10^6
        bytes, mean over seeds], ``completed_pct`` [%] and ``n_seeds``.

    Raises
    ------
    ValueError
        If the dataset has no runs of ``case``.
    """
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


def _finish_table(dataset: P5Dataset) -> pd.DataFrame:
    """Per main run: when downloads finish, how long the link stays busy, and the weight of the largest files."""
    runs = dataset.runs[dataset.runs["case"] == "main"].set_index("run_id")
    flows = dataset.flows[dataset.flows["run_id"].isin(runs.index)]
    bins = dataset.bins[dataset.bins["run_id"].isin(runs.index)]
    widths = _bin_width_s(bins)
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
        life = (b["t_end_s"] > big["start_s"]) & (b["t_end_s"] - widths[rid] < big_end)
        link_bytes = float((b.loc[life, "thr_g1_bps"] * widths[rid] / 8).sum())
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
    """Each run of ``case`` beside the ``main`` run of its alpha, clients, rate and seed (NaN where the main
    grid lacks that seed); losses in %."""
    alt = dataset.runs[dataset.runs["case"] == case]
    if alt.empty:
        return pd.DataFrame()
    base = dataset.runs[dataset.runs["case"] == "main"]
    keys = ["alpha", "n_clients", "backbone_mbps", "seed"]  # a seed's runs share their files: pair them
    cols = ["loss_s", "loss_g1", "n_completed", "n_flows"]
    m = alt[keys + cols].merge(base[keys + cols], on=keys, how="left", suffixes=(f"_{case}", "_main"))
    for c in ("loss_s", "loss_g1"):
        for s in (f"_{case}", "_main"):
            m[c + s] = 100 * m[c + s]
    return m.rename(columns={f"loss_s_{case}": f"loss_s_pct_{case}", "loss_s_main": "loss_s_pct_main",
                             f"loss_g1_{case}": f"loss_g1_pct_{case}", "loss_g1_main": "loss_g1_pct_main"})


def _onset_table(dataset: P5Dataset, case: str) -> pd.DataFrame:
    """End of the first and last bin with loss at S and at G1 [s] per run of ``case``, every seed (``seed`` column)."""
    b = dataset.bins[dataset.bins["case"] == case]
    rows = []
    for (a, bw, n, seed), g in b.groupby(["alpha", "backbone_mbps", "n_clients", "seed"]):
        row = {"alpha": a, "backbone_mbps": bw, "n_clients": n, "seed": int(seed)}
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
    ``alt_server_queue`` (each run of the variant beside the main run of the same seed), ``onset_altq``,
    ``onset_main`` (per run, every seed: first and last bin with loss at S and at G1). ``quick`` and
    ``seed`` change nothing (every table is read from the shipped runs in about a second).

    Parameters
    ----------
    dataset : P5Dataset
        The campaign's data.
    quick : bool
        Unused; accepted for the papers' common ``tables`` signature.
    seed : int
        Unused; accepted for the papers' common ``tables`` signature.
    step_s : float
        Time window of the ``figN`` tables (> 0). [s]

    Returns
    -------
    dict of str to pandas.DataFrame
        The tables under the keys above.

    Raises
    ------
    ValueError
        If the dataset has no ``main`` runs, or ``step_s`` is not positive.
    """
    if not step_s > 0:
        raise ValueError(f"step_s [s] must be in (0, inf); got {step_s!r}")
    t: dict[str, pd.DataFrame] = {}
    for fig, q, a, bw, _ in PAPER_FIGURES:
        key = fig.replace("Fig. ", "fig")
        # a partial dataset without this alpha and rate: no table rather than an invented one
        if not select_rows(dataset.bins, case="main", alpha=a, backbone_mbps=bw).empty:
            t[key] = over_time(dataset, q, alpha=a, backbone_mbps=bw, step_s=step_s)
        if q.startswith("loss") and not select_rows(dataset.bins, case="alt_server_queue", alpha=a,
                                                     backbone_mbps=bw).empty:
            t[key + "_altq"] = over_time(dataset, q, alpha=a, backbone_mbps=bw, case="alt_server_queue",
                                         step_s=step_s)
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
    t["hurst_long"] = hurst_long(dataset)
    t["hurst_summary"] = hurst_summary(t["hurst_long"])
    t["hurst_20s"] = hurst_20s(dataset)
    t["hurst_bellcore"] = hurst_bellcore(dataset)
    t["hurst_testbed"] = hurst_testbed(dataset)
    t["hurst_testbed_summary"] = hurst_summary(t["hurst_testbed"])
    t["alt_arrival"] = _alt_compare(dataset, "alt_arrival")
    t["alt_server_queue"] = _alt_compare(dataset, "alt_server_queue")
    t["onset_main"] = _onset_table(dataset, "main")
    t["onset_altq"] = _onset_table(dataset, "alt_server_queue")
    return t


def closing_tables(tables_: dict[str, pd.DataFrame]) -> dict[str, pd.DataFrame]:
    """The closing note's two tables: loss at 5 Mbit/s (alpha x clients, G1 and S) [%] and H measured vs predicted.

    Parameters
    ----------
    tables_ : dict of str to pandas.DataFrame
        :func:`tables`' result (its ``loss`` and ``hurst_long``).

    Returns
    -------
    dict of str to pandas.DataFrame
        ``loss_5M``: alpha (rows) x ``G1 %, n=<clients>`` and ``S %, n=<clients>`` [%]; ``hurst``:
        alpha x estimator H, with ``predicted (3-alpha)/2`` and ``median`` [-] (empty without long runs).
    """
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


def size_note(mean_bytes: float = 10e3, median_bytes: float = 2.5e3,
              alphas: Sequence[float] = (1.05, 1.35, 1.65, 1.95)) -> pd.DataFrame:
    """The paper's "mean 10 KB, median about 2.5 KB" against the Pareto shapes it runs.

    For a Pareto law with the given mean, the median of each alpha [bytes], and the alpha whose
    median is ``median_bytes`` (:func:`tcpmodels.models.heavytail.pareto_alpha_from_median_ratio`).
    With mean 10 KB the medians are 0.9, 4.3, 6.0 and 6.9 KB: 2.5 KB needs alpha 1.16.

    Parameters
    ----------
    mean_bytes : float
        Mean file size the paper prints. [bytes]
    median_bytes : float
        Median file size the paper prints. [bytes]
    alphas : sequence of float
        Pareto shapes the paper runs (> 1, for a finite mean). [-]

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
    """The figures among ``figures`` whose table is all zero (no loss anywhere): nothing to draw.

    Parameters
    ----------
    tables : dict of str to pandas.DataFrame
        :func:`tables`' result.
    figures : list of str
        Figure names, e.g. ``["Fig. 2", "Fig. 3", "Fig. 4"]``.
    suffix : str
        Table-key suffix of the variant (``""`` or ``"_altq"``).

    Returns
    -------
    list of str
        The names, in the order given, whose table exists, has rows and holds only zeros (NaN counts as 0).
    """
    out = []
    for name in figures:
        key = "fig" + name.split()[-1] + suffix
        t = tables.get(key)
        if t is not None and len(t) and not np.any(np.nan_to_num(t.to_numpy(float)) != 0):
            out.append(name)
    return out


def zero_note(figures: list[str]) -> str:
    """One sentence on why the all-zero figures among Figs. 2-4 are not drawn (empty string if none).

    Parameters
    ----------
    figures : list of str
        :func:`zero_panels`' result for Figs. 2-4 (loss at S).

    Returns
    -------
    str
        The figure names and the reason (S's link is faster than the gateways, so the backlog builds
        at G1); ``""`` for no figure.
    """
    if not figures:
        return ""
    return (f"{', '.join(figures)}: no loss at the server S in any window for any client count, so "
            f"{'these panels are' if len(figures) > 1 else 'this panel is'} not drawn. With the printed "
            "3000-packet queues S cannot lose in ns-3: its 10 Mbit/s link is faster than the 5 or 10 Mbit/s "
            "gateways, so the backlog builds at G1, not at S. The panels with losses are drawn below; the "
            "50-packet-queue variant further down shows losses at S.")


def _seeds_label(seeds: pd.Series) -> str:
    """The distinct seeds, ascending: ``seed 0`` or ``seeds 0, 1, 2``."""
    u = sorted(int(x) for x in seeds.unique())
    return ("seed " if len(u) == 1 else "seeds ") + ", ".join(str(x) for x in u)


def onset_note(onset: pd.DataFrame) -> str:
    """Which runs lost at S and at G1, and in which order, per alpha and gateway rate, in Markdown.

    Every number comes from ``onset`` (the ``onset_altq`` table of :func:`tables`): per (alpha, rate)
    the runs and their seeds, the runs with loss at S, the runs with loss at G1 and, of those, the ones
    whose first G1 loss came after S's (C5.2 (c); a lag of 0, both in the same bin, counts for neither
    side), with each run's client count, seed and lag. A run is a unit whatever its seed.

    Parameters
    ----------
    onset : pandas.DataFrame
        Columns ``alpha, backbone_mbps, n_clients, seed, first_loss_s_s, first_loss_g1_s`` [s].

    Returns
    -------
    str
        One bullet per (alpha, rate) and a total line; a sentence if ``onset`` is empty.
    """
    if onset is None or onset.empty:
        return "No runs of the 50-packet-queue variant in the dataset."
    lines = []
    n_g1 = n_after = n_ties = 0
    for (a, bw), g in onset.groupby(["alpha", "backbone_mbps"]):
        s_lost = g["first_loss_s_s"].notna()
        g1 = g[g["first_loss_g1_s"].notna()]
        lag = g1["first_loss_g1_s"] - g1["first_loss_s_s"]  # NaN: S never lost
        after, ties = int((lag > 0).sum()), int((lag == 0).sum())
        n_g1, n_after, n_ties = n_g1 + len(g1), n_after + after, n_ties + ties
        detail = ", ".join(f"{int(n)} clients seed {int(sd)} {'S never lost' if pd.isna(x) else f'lag {x:+.1f} s'}"
                           for n, sd, x in zip(g1["n_clients"], g1["seed"], lag))
        lines.append(f"- alpha {a:g}, {bw:g} Mbit/s: {len(g)} runs ({_seeds_label(g['seed'])}), "
                     f"S lost in {int(s_lost.sum())}, G1 in {len(g1)}"
                     + (f" ({detail}); G1 after S in {after} of {len(g1)}" if len(g1) else "")
                     + (f", in the same bin in {ties}" if ties else ""))
    lines.append(f"- all ({_seeds_label(onset['seed'])}): G1 lost in {n_g1} of {len(onset)} runs; its first loss "
                 f"came after S's in {n_after} of them" + (f", in the same bin in {n_ties}" if n_ties else "") + ".")
    return "\n".join(lines)


def provenance_table(dataset: P5Dataset) -> pd.DataFrame:
    """When and how the runs were made: times, wall times, seeds, versions, missing runs.

    Parameters
    ----------
    dataset : P5Dataset
        The campaign's data (its provenance and ``runs``).

    Returns
    -------
    pandas.DataFrame
        One column ``value``, one row per item (times in UTC, durations in min as labelled).
    """
    prov, runs = dataset.provenance, dataset.runs
    return pd.Series({
        "first run finished (UTC)": prov.get("first_run_utc"),
        "last run finished (UTC)": prov.get("last_run_utc"),
        "dataset built from commit (git dirty)": f"{prov.get('git_commit')} ({prov.get('git_dirty')})",
        "runs from this build's cache / kept from the earlier dataset": (
            f"{prov.get('n_runs_from_cache', len(runs))} / {(prov.get('kept_from_shipped') or {}).get('n_runs', 0)}"
            + (" (made at commit {git_commit}, git dirty {git_dirty})".format(**prov["kept_from_shipped"]["previous"])
               if (prov.get("kept_from_shipped") or {}).get("n_runs") and prov["kept_from_shipped"].get("previous")
               else "")),
        "sweep wall time on the local cluster, this build's invocations [min]": round(
            prov.get("campaign_wall_s", np.nan) / 60, 1),
        "sum of simulation wall times [min]": round(prov.get("sum_run_wall_s", np.nan) / 60, 1),
        "sum of ns-3 start-up (cppyy) times [min]": round(prov.get("sum_ns3_load_wall_s", np.nan) / 60, 1),
        "runs by case": prov.get("runs_by_case"),
        "main-grid seeds present": sorted(runs.loc[runs["case"] == "main", "seed"].unique().tolist()),
        "ns-3": prov.get("ns3_version"),
        "kernel": prov.get("kernel"),
        "load average when the dataset was built": prov.get("load_average_at_dataset"),
        "missing runs": ", ".join(prov.get("missing_runs", [])) or "none",
    }).to_frame("value")
