"""P2 tables: Tables 2-6 in the paper's layout with its printed values beside ours, and the extras."""

from __future__ import annotations

import numpy as np
import pandas as pd

from tcpmodels.papers.common import Comparison, comparison_frame
from tcpmodels.papers.p2_mptcp_prediction.data import (
    KB_BYTES,
    MPTCP_PROBES,
    PAPER_FIG4_SHARE_150_120_256MB,
    PAPER_SPEARMAN,
    PAPER_TABLE2,
    PAPER_TABLE3,
    PAPER_TABLE4,
    PAPER_TABLE5,
    PAPER_TABLE6,
    PROBE_TOTALS,
    RTT_RELATIONS,
    P2Dataset,
    check_dataset,
    fit_training_error,
    kbps,
    rtt_relation,
    sd_kbps,
    x_existing,
    x_proposed,
)
from tcpmodels.predict import (
    FormulaThroughputRegressor,
    PerPathProbeSVR,
    SingleProbeSVR,
    ewma_forecast,
    fraction_rpe_within,
    rmse,
    spearman_rho,
    tune_svr,
)

__all__ = ["tables", "scaling_table", "campaign_table", "fig4_against_paper", "fig4_note"]


def _table2(df):
    rows = []
    for target, xcol, ycol in (("MPTCP transfer", "mptcp_probe_64KB_Bps", "mptcp_data_Bps"),
                               ("TCP transfer", "path_probe_128KB_path1_Bps", "tcp_data_Bps")):
        X, y = df[[xcol]].to_numpy(float) * 8, df[ycol].to_numpy(float) * 8
        r, f, _ = fit_training_error(SingleProbeSVR(), X, y)
        rows.append({"target": target, "paper_rmse_KBps": PAPER_TABLE2[target][0], "ours_rmse_KBps": r,
                     "paper_fraction_rpe": PAPER_TABLE2[target][1], "ours_fraction_rpe": f,
                     "ours_rmse_over_sd": r / sd_kbps(y), "ours_mean_data_KBps": kbps(df[ycol].mean()),
                     "ours_sd_data_KBps": sd_kbps(y), "n": len(df)})
    return pd.DataFrame(rows)


def _table3(df):
    y = df["mptcp_data_Bps"].to_numpy(float) * 8
    rows = []
    for total in PROBE_TOTALS:
        r, f, _ = fit_training_error(PerPathProbeSVR(), x_proposed(df, total), y)
        rows.append({"total_probe_size": total, "paper_rmse_KBps": PAPER_TABLE3[total][0], "ours_rmse_KBps": r,
                     "paper_fraction_rpe": PAPER_TABLE3[total][1], "ours_fraction_rpe": f,
                     "ours_rmse_over_sd": r / sd_kbps(y), "n": len(df)})
    return pd.DataFrame(rows)


def _table4(df, sizes: dict):
    y = df["mptcp_data_Bps"].to_numpy(float) * 8
    rows = []
    for label in MPTCP_PROBES[1:]:
        r, f, _ = fit_training_error(SingleProbeSVR(), x_existing(df, label), y)
        rows.append({"probe_size": label, "ours_probe_bytes": sizes.get(label), "paper_rmse_KBps": PAPER_TABLE4[label][0],
                     "ours_rmse_KBps": r, "paper_fraction_rpe": PAPER_TABLE4[label][1], "ours_fraction_rpe": f,
                     "ours_rmse_over_sd": r / sd_kbps(y),
                     "ours_probe_share1": float(df[f"mptcp_probe_{label}_share1"].mean())
                     if f"mptcp_probe_{label}_share1" in df else np.nan, "n": len(df)})
    return pd.DataFrame(rows)


def _table5(df):
    y = df["mptcp_data_Bps"].to_numpy(float) * 8
    _, _, p_prop = fit_training_error(PerPathProbeSVR(), x_proposed(df, "128KB"), y)
    _, _, p_exist = fit_training_error(SingleProbeSVR(), x_existing(df, "128KB"), y)
    rel = rtt_relation(df["rtt1_ms"], df["rtt2_ms"])
    rows = []
    for label, _ in RTT_RELATIONS:
        m = rel == label
        rows.append({"rtt_relation": label, "n": int(m.sum()),
                     "paper_proposed": PAPER_TABLE5[label][0],
                     "ours_proposed": fraction_rpe_within(y[m], p_prop[m]) if m.any() else np.nan,
                     "paper_existing": PAPER_TABLE5[label][1],
                     "ours_existing": fraction_rpe_within(y[m], p_exist[m]) if m.any() else np.nan,
                     "ours_rmse_proposed_KBps": rmse(y[m], p_prop[m]) / 8 / KB_BYTES if m.any() else np.nan,
                     "ours_rmse_existing_KBps": rmse(y[m], p_exist[m]) / 8 / KB_BYTES if m.any() else np.nan})
    return pd.DataFrame(rows)


def _table6(df, n_splits: int, seed: int):
    y = df["mptcp_data_Bps"].to_numpy(float) * 8
    X = x_proposed(df, "128KB")
    rng = np.random.default_rng(seed)
    rows = []
    for share, (p_rmse, p_frac) in PAPER_TABLE6.items():
        n_train = max(5, int(round(share * len(df))))
        rm, fr = [], []
        for _ in range(n_splits):
            idx = rng.permutation(len(df))
            tr, te = idx[:n_train], idx[n_train:]
            pred = PerPathProbeSVR().fit(X[tr], y[tr]).predict(X[te])
            rm.append(rmse(y[te], pred) / 8 / KB_BYTES)
            fr.append(fraction_rpe_within(y[te], pred))
        rows.append({"training_share": share, "n_train": n_train, "n_test": len(df) - n_train,
                     "paper_rmse_KBps": p_rmse, "ours_rmse_KBps": float(np.mean(rm)),
                     "ours_rmse_sd_KBps": float(np.std(rm)), "paper_fraction_rpe": p_frac,
                     "ours_fraction_rpe": float(np.mean(fr)), "ours_fraction_rpe_sd": float(np.std(fr)),
                     "n_random_splits": n_splits})
    return pd.DataFrame(rows)


def _spearman(df):
    rows = []
    for target, xcol, ycol in (("TCP", "path_probe_128KB_path1_Bps", "tcp_data_Bps"),
                               ("MPTCP", "mptcp_probe_64KB_Bps", "mptcp_data_Bps")):
        s = spearman_rho(df[xcol].to_numpy(float), df[ycol].to_numpy(float))
        rows.append({"target": target, "paper_rho": PAPER_SPEARMAN[target], "ours_rho": s.rho,
                     "ours_pvalue": s.pvalue, "n": s.n})
    return pd.DataFrame(rows)


def _fig4(dataset: P2Dataset):
    f = dataset.fig4
    if f.empty:
        return pd.DataFrame(columns=["rtt1_ms", "rtt2_ms", "size_bytes", "share1_mean", "share1_sd", "n"])
    g = f.groupby(["rtt1_ms", "rtt2_ms", "size_bytes"])["share1"]
    return g.agg(share1_mean="mean", share1_sd="std", n="count").reset_index()


def _drivers(df):
    """Spearman rho of each throughput against the configured RTTs: what each transfer 'sees'."""
    rtts = {"RTT1": df["rtt1_ms"], "RTT2": df["rtt2_ms"], "min(RTT1, RTT2)": np.minimum(df["rtt1_ms"], df["rtt2_ms"])}
    rows = []
    for name, col in (("MPTCP data", "mptcp_data_Bps"), ("TCP data (path 1)", "tcp_data_Bps"),
                      ("MPTCP probe 64KB", "mptcp_probe_64KB_Bps"), ("MPTCP probe 128KB", "mptcp_probe_128KB_Bps"),
                      ("MPTCP probe, largest", "mptcp_probe_128MB_Bps"),
                      ("TCP probe 64KB, path 1", "path_probe_128KB_path1_Bps"),
                      ("TCP probe 64KB, path 2", "path_probe_128KB_path2_Bps")):
        row = {"throughput": name, "mean_KBps": kbps(df[col].mean()),
               "cv": float(df[col].std() / df[col].mean())}
        for rname, r in rtts.items():
            row[f"rho_vs_{rname}"] = spearman_rho(df[col].to_numpy(float), r.to_numpy(float)).rho
        rows.append(row)
    return pd.DataFrame(rows)


def _cv(df, quick: bool):
    grid = ({"C": [1.0, 4.0], "epsilon": [0.1], "gamma": ["sigest"]} if quick else None)
    cv = 3 if quick else None
    rows = []
    for name, est, X, ycol in (
        ("existing, MPTCP 64KB probe", SingleProbeSVR(), x_existing(df, "64KB"), "mptcp_data_Bps"),
        ("existing, MPTCP 128KB probe", SingleProbeSVR(), x_existing(df, "128KB"), "mptcp_data_Bps"),
        ("proposed, per-path total 128KB", PerPathProbeSVR(), x_proposed(df, "128KB"), "mptcp_data_Bps"),
        ("TCP, 64KB probe", SingleProbeSVR(), df[["path_probe_128KB_path1_Bps"]].to_numpy(float) * 8,
         "tcp_data_Bps"),
    ):
        y = df[ycol].to_numpy(float) * 8
        kw = {"param_grid": grid} if grid else {}
        if cv:
            from sklearn.model_selection import KFold

            kw["cv"] = KFold(cv, shuffle=True, random_state=0)
        tuned = tune_svr(X, y, estimator=est, **kw)
        best = tuned.best_params
        rows.append({"predictor": name, "C": best["C"], "epsilon": best["epsilon"], "gamma": best["gamma"],
                     "cv_rmse_KBps": -tuned.best_score / 8 / KB_BYTES,
                     "kernlab_default_cv_rmse_KBps": _cv_rmse_default(tuned.cv_results),
                     "grid_size": len(tuned.cv_results)})
    return pd.DataFrame(rows)


def _cv_rmse_default(cv_results: pd.DataFrame) -> float:
    for _, row in cv_results.iterrows():
        p = row["params"]
        if p.get("C") == 1.0 and p.get("epsilon") == 0.1 and p.get("gamma") == "sigest":
            return -float(row["mean_test_score"]) / 8 / KB_BYTES
    return float("nan")


def _formula_vs_history(df, rate_bps: float | None):
    """Formula (Mathis with measured RTT and the transfer's own retransmission rate, capped at the path
    rate) versus history-based predictors (SVRs, training error; EWMA of earlier samples in run order),
    and the constant predictor (the mean) as the floor any predictor must beat."""
    rows = []
    order = np.argsort(df["order"].to_numpy()) if "order" in df else np.arange(len(df))
    for target, ycol in (("TCP", "tcp_data_Bps"), ("MPTCP", "mptcp_data_Bps")):
        y = df[ycol].to_numpy(float) * 8
        preds = {}
        loss_col = "tcp_data_loss" if target == "TCP" else "mptcp_data_loss"
        if loss_col in df and rate_bps:
            loss = df[loss_col].to_numpy(float)
            ok = np.isfinite(loss)
            p = np.full(len(df), np.nan)
            rtts = [(df["rtt1_measured_ms"].fillna(df["rtt1_ms"]) * 1e-3).to_numpy(float),
                    (df["rtt2_measured_ms"].fillna(df["rtt2_ms"]) * 1e-3).to_numpy(float)]
            model = FormulaThroughputRegressor(model="mathis", capacity_bps=rate_bps * 1448 / 1514)
            paths = [0] if target == "TCP" else [0, 1]
            total = np.zeros(ok.sum())
            for i in paths:
                X = pd.DataFrame({"rtt_s": rtts[i][ok], "loss_rate": loss[ok]})
                total += model.fit(X).predict(X)
            p[ok] = total
            preds["formula: Mathis (RTT, loss of the transfer), capped at the path rate"] = p
        xcol = "path_probe_128KB_path1_Bps" if target == "TCP" else "mptcp_probe_64KB_Bps"
        preds["history: SVR from 64KB probe (existing)"] = SingleProbeSVR().fit(
            df[[xcol]].to_numpy(float) * 8, y).predict(df[[xcol]].to_numpy(float) * 8)
        if target == "MPTCP":
            preds["history: SVR from per-path probes, total 128KB (proposed)"] = PerPathProbeSVR().fit(
                x_proposed(df, "128KB"), y).predict(x_proposed(df, "128KB"))
        preds["baseline: the training mean (no probe at all)"] = np.full(len(df), y.mean())
        ew = np.full(len(df), np.nan)
        ew[order] = ewma_forecast(y[order], 0.3)
        preds["history: EWMA(0.3) of earlier transfers, run order (ignores RTTs)"] = ew
        for name, p in preds.items():
            m = np.isfinite(p) & (p > 0)
            rows.append({"target": target, "predictor": name, "n": int(m.sum()),
                         "rmse_KBps": rmse(y[m], p[m]) / 8 / KB_BYTES if m.any() else np.nan,
                         "fraction_rpe": fraction_rpe_within(y[m], p[m]) if m.any() else np.nan})
    return pd.DataFrame(rows)


def _headline(t: dict) -> pd.DataFrame:
    rows = []
    for _, r in t["table2"].iterrows():
        rows.append(Comparison(quantity=f"Table 2 RMSE, {r['target']}", paper=r["paper_rmse_KBps"],
                               ours=r["ours_rmse_KBps"], unit="KB/s", note="64KB probe, training error"))
        rows.append(Comparison(quantity=f"Table 2 Fraction of RPE, {r['target']}", paper=r["paper_fraction_rpe"],
                               ours=r["ours_fraction_rpe"], unit="-", note="within +-10 %"))
    for _, r in t["spearman"].iterrows():
        rows.append(Comparison(quantity=f"Spearman rho probe vs data, {r['target']}", paper=r["paper_rho"],
                               ours=r["ours_rho"], unit="-", note="64KB probe"))
    r3 = t["table3"].iloc[0]
    rows.append(Comparison(quantity="Table 3 RMSE, proposed 128KB", paper=r3["paper_rmse_KBps"],
                           ours=r3["ours_rmse_KBps"], unit="KB/s"))
    rows.append(Comparison(quantity="Table 3 Fraction of RPE, proposed 128KB", paper=r3["paper_fraction_rpe"],
                           ours=r3["ours_fraction_rpe"], unit="-"))
    r4 = t["table4"].set_index("probe_size")
    for label in ("128KB", "128MB"):
        rows.append(Comparison(quantity=f"Table 4 Fraction of RPE, existing {label}",
                               paper=r4.loc[label, "paper_fraction_rpe"], ours=r4.loc[label, "ours_fraction_rpe"],
                               unit="-", note=f"ours {r4.loc[label, 'ours_probe_bytes']} bytes"))
    r6 = t["table6"].iloc[0]
    rows.append(Comparison(quantity="Table 6 Fraction of RPE, 75 % training", paper=r6["paper_fraction_rpe"],
                           ours=r6["ours_fraction_rpe"], unit="-", note="held-out samples"))
    return comparison_frame(rows)


def tables(dataset: P2Dataset, *, quick: bool = False, seed: int = 0, n_splits: int | None = None) -> dict[str, pd.DataFrame]:
    """Tables 2-6 in the paper's layout with its printed values beside ours, and the extras.

    Parameters
    ----------
    dataset : P2Dataset
    quick : bool
        Small cross-validation grid and 3 random splits for Table 6 (seconds instead of a minute).
    n_splits : int, optional
        Random training/test splits averaged per row of Table 6 (default 3 in quick mode, else 20).
    seed : int
        Seed of Table 6's random splits.

    Returns
    -------
    dict of str to pandas.DataFrame
        ``table2`` ... ``table6``, ``spearman``, ``fig4`` (subflow-1 share by size and RTT pair),
        ``cv`` (cross-validated C, epsilon, gamma per predictor), ``formula_vs_history``,
        ``drivers`` (Spearman rho of each throughput against RTT1, RTT2 and their minimum),
        ``fig4_vs_paper`` (:func:`fig4_against_paper`), ``headline`` (paper vs ours, :func:`~tcpmodels.papers.common.comparison_frame`).
    """
    df = check_dataset(dataset)
    cfg = dataset.provenance.get("config", {})
    sizes = dict(zip(MPTCP_PROBES, cfg.get("mptcp_probe_sizes_bytes", [None] * len(MPTCP_PROBES))))
    t = {
        "table2": _table2(df), "table3": _table3(df), "table4": _table4(df, sizes), "table5": _table5(df),
        "table6": _table6(df, n_splits or (3 if quick else 20), seed), "spearman": _spearman(df), "fig4": _fig4(dataset),
        "cv": _cv(df, quick), "formula_vs_history": _formula_vs_history(df, cfg.get("rate_bps")),
        "drivers": _drivers(df),
    }
    t["fig4_vs_paper"] = fig4_against_paper(t["fig4"], df)
    t["headline"] = _headline(t)
    return t



def scaling_table(dataset: P2Dataset) -> pd.DataFrame:
    """The paper's setting beside ours (rates, sizes, probes, samples, kernel), from the provenance.

    Parameters
    ----------
    dataset : P2Dataset
        The campaign's data (its provenance's ``scaling``, ``config``, ``host`` and sample counts).

    Returns
    -------
    pandas.DataFrame
        Columns ``paper, ours`` (text with units; sizes in KB / MB of 1024 bytes), one row per item
        (path rate, data size, data / (2 × BDP), probes, samples, kernel).

    Raises
    ------
    KeyError
        If the provenance lacks one of those entries.
    """
    prov = dataset.provenance
    sc = prov["scaling"]
    return pd.DataFrame(
        {
            "paper": ["1 Gbit/s", "256 MB", f"{sc['paper_data_over_two_path_bdp']:.1f}", "64 KB",
                      "128 KB, 256 KB, 512 KB, 2 MB, 8 MB, 32 MB, 128 MB", "64 / 128 / 256 KB (totals 128 / 256 / 512 KB)",
                      "512 (16 × 16 × 2)", "Linux 3.14, MPTCP v0.89"],
            "ours": [f"{sc['rate_bps'] / 1e6:g} Mbit/s, buffer {prov['config']['buffer_bytes'] / 1e3:g} kB",
                     f"{sc['data_size_bytes'] / 2**20:g} MB", f"{sc['data_over_two_path_bdp']:.1f}",
                     f"{sc['mptcp_probe_sizes']['64KB'] / 2**10:g} KB",
                     ", ".join(f"{v / 2**10:g} KB" for k, v in sc["mptcp_probe_sizes"].items() if k != "64KB"),
                     " / ".join(f"{v / 2**10:g}" for v in sc["path_probe_sizes_per_path"].values()) + " KB per path",
                     f"{prov['n_samples']} ({len(prov['reps_present'])} repetition(s) present)",
                     f"Linux {prov['host']['kernel']}, MPTCP v1, {prov['congestion_control']}"],
        },
        index=["path rate", "data size", "data / (2 × BDP at 150 ms)", "probe (Table 2)", "probes (Table 4)",
               "per-path probes (Table 3)", "samples", "kernel"],
    )


def campaign_table(dataset: P2Dataset) -> pd.DataFrame:
    """When and how the samples were taken: times, wall time, lock waits, load, errors (from the provenance).

    Parameters
    ----------
    dataset : P2Dataset
        The campaign's data (its provenance).

    Returns
    -------
    pandas.DataFrame
        One column ``campaign``, one row per item (times in UTC, durations in min or s as labelled).

    Raises
    ------
    KeyError
        If the provenance lacks one of those entries.
    """
    prov = dataset.provenance
    load = prov["load_avg_1m"]
    return pd.Series(
        {
            "first sample (UTC)": prov["campaign_first_sample_utc"],
            "last sample (UTC)": prov["campaign_last_sample_utc"],
            "sum of sample wall times [min]": round(prov["sample_wall_s"]["sum"] / 60, 1),
            "median sample [s]": prov["sample_wall_s"]["median"],
            "elapsed, first to last sample [min]": round(prov["elapsed_first_to_last_sample_s"] / 60, 1),
            "waiting for the host lock (another campaign interleaved) [min]": round(prov["lock_wait_s_sum"] / 60, 1),
            "Fig. 4 sweep [min]": round(prov["fig4_wall_s"] / 60, 1),
            "load average 1 min, min / median / max": f"{load['min']} / {load['median']} / {load['max']}",
            "transfers with an error": prov["transfer_errors"],
            "throughput definition": prov["throughput_definition"],
            "MPTCP": prov["mptcp"],
        },
        name="campaign",
    ).to_frame()


def fig4_against_paper(fig4: pd.DataFrame, samples: pd.DataFrame) -> pd.DataFrame:
    """Fig. 4's trend per RTT pair of the sweep, with the data transfers of the same pair beside it.

    Parameters
    ----------
    fig4 : pandas.DataFrame
        The ``fig4`` table of :func:`tables` (``rtt1_ms, rtt2_ms, size_bytes, share1_mean, share1_sd, n``).
    samples : pandas.DataFrame
        The campaign's samples (``rtt1_ms, rtt2_ms``, ``mptcp_data_share1``, ``data_size_bytes`` if present).

    Returns
    -------
    pandas.DataFrame
        One row per RTT pair [ms]: ``smallest_bytes`` and ``share1_smallest`` (subflow-1 share of the
        smallest swept transfer [-]), ``largest_bytes`` and ``share1_largest``, ``sizes`` (swept sizes),
        ``data_share1`` (mean subflow-1 share of the campaign's data transfers at that pair, or at the
        grid's nearest pairs when the grid lacks it, listed in ``data_pairs_ms`` [-]),
        ``data_bytes`` and ``data_n`` (their size and count), ``paper_share1_256MB`` (the paper's 33.9 % at
        (150, 120) ms, NaN elsewhere) and ``largest_minus_paper`` [-].
    """
    cols = ["rtt1_ms", "rtt2_ms", "smallest_bytes", "share1_smallest", "largest_bytes", "share1_largest", "sizes",
            "data_share1", "data_bytes", "data_n", "data_pairs_ms", "paper_share1_256MB", "largest_minus_paper"]
    rows = []
    for (r1, r2), g in fig4.groupby(["rtt1_ms", "rtt2_ms"]) if len(fig4) else []:
        g = g.sort_values("size_bytes")
        # the campaign's grid (120 ... 180 step 4) has no 150 ms: its nearest pairs stand for the sweep's
        dist = (samples["rtt1_ms"] - r1) ** 2 + (samples["rtt2_ms"] - r2) ** 2
        at = samples[dist == dist.min()] if len(samples) else samples
        share = pd.to_numeric(at.get("mptcp_data_share1"), errors="coerce").dropna() if len(at) else pd.Series(
            dtype=float)
        size = at["data_size_bytes"].iloc[0] if len(at) and "data_size_bytes" in at else np.nan
        paper = PAPER_FIG4_SHARE_150_120_256MB if (r1, r2) == (150.0, 120.0) else np.nan
        rows.append({"rtt1_ms": r1, "rtt2_ms": r2, "smallest_bytes": int(g["size_bytes"].iloc[0]),
                     "share1_smallest": float(g["share1_mean"].iloc[0]), "largest_bytes": int(g["size_bytes"].iloc[-1]),
                     "share1_largest": float(g["share1_mean"].iloc[-1]), "sizes": len(g),
                     "data_share1": float(share.mean()) if len(share) else np.nan, "data_bytes": size,
                     "data_n": len(share), "data_pairs_ms": sorted({(float(a), float(b)) for a, b in
                                                                    zip(at["rtt1_ms"], at["rtt2_ms"])}),
                     "paper_share1_256MB": paper,
                     "largest_minus_paper": float(g["share1_mean"].iloc[-1]) - paper})
    return pd.DataFrame(rows, columns=cols)


def fig4_note(table: pd.DataFrame) -> str:
    """Fig. 4 against the paper's 33.9 %, in Markdown, every number from ``table``.

    Parameters
    ----------
    table : pandas.DataFrame
        :func:`fig4_against_paper`.

    Returns
    -------
    str
        One sentence per RTT pair (the paper's pair first), then the comparison with 33.9 %.
    """
    if table.empty:
        return "No Fig. 4 sweep in the dataset."

    def size(b):
        return f"{b / 2**20:g} MiB" if b >= 2**20 else f"{b / 2**10:g} KiB"

    parts = []
    ordered = sorted(table.itertuples(), key=lambda r: ((r.rtt1_ms, r.rtt2_ms) != (150.0, 120.0), r.rtt1_ms, r.rtt2_ms))
    for r in ordered:
        where = ("this pair" if r.data_pairs_ms == [(r.rtt1_ms, r.rtt2_ms)] else
                 "the nearest pairs of its grid, " + ", ".join(f"({a:g}, {b:g})" for a, b in r.data_pairs_ms) + " ms")
        data = (f"; the campaign's {size(r.data_bytes)} data transfers at {where} put {r.data_share1:.1%} on "
                f"subflow 1 ({r.data_n} samples)" if r.data_n else "")
        parts.append(f"At RTT1 = {r.rtt1_ms:g} ms, RTT2 = {r.rtt2_ms:g} ms the subflow-1 share goes from "
                     f"{r.share1_smallest:.1%} at {size(r.smallest_bytes)} to {r.share1_largest:.1%} at "
                     f"{size(r.largest_bytes)} ({r.sizes} sizes){data}.")
    ref = table[table["paper_share1_256MB"].notna()]
    if len(ref):
        r = ref.iloc[0]
        side = "above" if r["largest_minus_paper"] > 0 else "below"
        parts.append(f"The paper's 256 MB transfer at (150, 120) ms put {r['paper_share1_256MB']:.1%} on subflow 1; "
                     f"our largest ({size(r['largest_bytes'])}) puts {r['share1_largest']:.1%}, "
                     f"{abs(100 * r['largest_minus_paper']):.1f} points {side} it.")
    else:
        parts.append("The sweep has no (150, 120) ms pair, the one the paper prints (33.9 % at 256 MB).")
    return " ".join(parts)
