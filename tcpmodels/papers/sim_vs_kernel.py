"""Display tables and figures of ``notebooks/sim_vs_kernel.ipynb`` (ns-3 against the kernel on one dumbbell).

The dataset and the agreement rule live in :mod:`tcpmodels.experiments.sim_vs_kernel` (the notebook
loads them there); this module only arranges what the notebook shows, from the loaded ``frame``,
``configs`` and provenance, so that the notebook stays thin. It imports nothing from ``experiments``.

:func:`claims` judges the agreement with :mod:`tcpmodels.stats`: for every scenario run on both
engines, each flow's share of the bottleneck rate and the aggregate utilisation, ns-3 against the
kernel, by TOST on Welch's t over the runs (the unit of replication is the run: one repetition of
the scenario on one engine; the engines' runs are independent), with the margins the campaign
stated before measuring (``tolerance_share``, ``tolerance_utilisation`` in its provenance).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from tcpmodels.papers.phrases import verdict_counts
from tcpmodels.stats import ClaimSpec, Headline, claims_table, equivalence_ind

__all__ = ["run_info", "plot_agreement", "spread_table", "phase_table", "PHASE_COLUMNS", "claims", "answer", "headline",
           "compared_scenarios"]

#: ns-3 scenarios of the phase-effect comparison and their column labels ({j}: jitter in packets).
PHASE_COLUMNS = {"reno_reno_reno": "ns-3, jitter {j:g} packet", "reno_reno_reno_locked": "ns-3, exact delays",
                 "reno_reno_reno_nudged": "ns-3, exact delays, middle RTT +0.12 ms"}


def run_info(configs: dict[str, Any], prov: dict[str, Any]) -> pd.DataFrame:
    """Per scenario: bottleneck, senders, variants, what the kernel read back, durations, samples, wall time, load.

    Parameters
    ----------
    configs : dict of str to SvkConfig
        Scenario name -> its :class:`tcpmodels.experiments.sim_vs_kernel.config.SvkConfig`
        (``rate_bps``, ``buffer_bytes``, ``ccs``, ``rtts_ms``, durations), as the dataset loader returns.
    prov : dict
        The dataset's provenance (``scenarios``, ``ns3_version``, ``host``, ``git``).

    Returns
    -------
    pandas.DataFrame
        One column per scenario, one row per item (rates in Mbit/s, buffers in kB, RTTs in ms,
        wall times in minutes), then the ns-3 version, the Linux kernel and the git commit.
    """
    runs = {}
    for name, cfg in configs.items():
        sc = prov["scenarios"][name]
        eng = sc["engines"]
        kern = eng.get("kernel")
        runs[name] = {
            "bottleneck": f"{cfg.rate_bps / 1e6:g} Mbit/s, buffer {cfg.buffer_bytes / 1e3:g} kB",
            "senders (kernel cc, RTT)": ", ".join(f"{c} {r:g} ms" for c, r in zip(cfg.ccs, cfg.rtts_ms)),
            "ns-3 variants": ", ".join(sc["ns3_variants"] or []),
            "kernel cc read back from the sockets": ", ".join(sc["kernel_cc_effective"]),
            "kernel ping RTT per sender (median) [ms]": str(sc["kernel_ping_rtt_ms_median"]),
            "duration / warm-up / start jitter [s]": f"{cfg.duration_s:g} / {cfg.warmup_s:g} / {cfg.start_jitter_s:g}",
            "kernel: samples, wall [min], host-lock wait [min]": (
                f"{kern['n_samples']}, {kern['wall_s_sum'] / 60:.1f}, {kern['lock_wait_s_sum'] / 60:.1f}"
                if kern else "not run"),
            "ns-3: samples, wall [min]": f"{eng['ns3']['n_samples']}, {eng['ns3']['wall_s_sum'] / 60:.1f}",
            "load average 1 min during the runs (min, max)": str(eng.get("kernel", eng["ns3"])["load_avg_1m"]),
        }
    info = pd.DataFrame(runs)
    info.loc["ns-3 version", :] = ", ".join(prov["ns3_version"])
    info.loc["Linux kernel", :] = prov["host"]["kernel"]
    info.loc["git commit", :] = str((prov["git"] or {}).get("commit"))
    return info


def plot_agreement(frame: pd.DataFrame, configs: dict[str, Any], tables: dict[str, pd.DataFrame],
                   prov: dict[str, Any]) -> Figure:
    """Per scenario: each flow's throughput on both engines (mean ± sd, dots per run) and the utilisation per run.

    Parameters
    ----------
    frame : pandas.DataFrame
        The dataset, one row per flow and run (``scenario, engine, rep, flow, throughput_bps``).
    configs : dict of str to SvkConfig
        Scenario name -> its configuration (``rate_bps`` normalises the utilisation).
    tables : dict of str to pandas.DataFrame
        Scenario name -> its agreement table (per flow ``cc, rtt_ms, kernel_mbps, kernel_sd_mbps,
        kernel_n`` and the same for ``ns3``); one row of panels per entry.
    prov : dict
        The dataset's provenance (the kernel and ns-3 versions label the legend).

    Returns
    -------
    matplotlib.figure.Figure
        Two panels per scenario: throughput per flow [Mbit/s] and aggregate utilisation per run [-].
    """
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(len(tables), 2, figsize=(11, 3.8 * len(tables)), squeeze=False)
    labels = (("kernel", "tab:blue", "kernel (Linux " + prov["host"]["kernel"] + ")"),
              ("ns3", "tab:orange", "ns-3 " + ", ".join(prov["ns3_version"])))
    for (name, table), (ax, ax2) in zip(tables.items(), axes):
        sub = frame[frame["scenario"] == name]
        flows = table[table["flow"] != "total"]
        x = np.arange(len(flows))
        for k, (engine, color, label) in enumerate(labels):
            if flows[f"{engine}_n"].sum() == 0:
                continue
            ax.bar(x + (k - 0.5) * 0.38, flows[f"{engine}_mbps"], 0.38, yerr=flows[f"{engine}_sd_mbps"].fillna(0),
                   capsize=4, color=color, label=label)
            reps = sub[sub["engine"] == engine]
            ax.scatter(reps["flow"] + (k - 0.5) * 0.38, reps["throughput_bps"] / 1e6, color="k", s=10, zorder=3)
        ax.set_xticks(x, [f"{r.cc} {r.rtt_ms:g} ms" for r in flows.itertuples()])
        ax.set_ylabel("throughput [Mbit/s]")
        ax.set_title(f"{name}: mean ± sd over repetitions (dots: runs)", fontsize=10)
        ax.legend(fontsize=8)
        tot = sub.groupby(["engine", "rep"])["throughput_bps"].sum().reset_index()
        for k, engine in enumerate(("kernel", "ns3")):
            v = tot.loc[tot["engine"] == engine, "throughput_bps"] / configs[name].rate_bps
            ax2.scatter(np.full(len(v), k), v, s=25)
        ax2.axhline(1.0, color="grey", lw=0.8)
        ax2.set_xticks([0, 1], ["kernel", "ns-3"])
        ax2.set_xlim(-0.6, 1.6)
        ax2.set_ylabel("aggregate utilisation [-]")
        ax2.set_title(f"{name}: bottleneck utilisation per run", fontsize=10)
    fig.tight_layout()
    return fig


def spread_table(tables: dict[str, pd.DataFrame]) -> pd.DataFrame:
    """Per flow: each engine's run-to-run sd, the difference of the means, and that difference over the larger sd.

    Parameters
    ----------
    tables : dict of str to pandas.DataFrame
        Scenario name -> its agreement table (as for :func:`plot_agreement`).

    Returns
    -------
    pandas.DataFrame
        One row per flow (the ``total`` rows left out): ``scenario, flow, cc, rtt_ms, kernel_sd_mbps,
        ns3_sd_mbps, difference_mbps`` (ns-3 minus kernel) [Mbit/s] and ``difference_over_larger_sd`` [-].
    """
    all_rows = pd.concat(tables, names=["scenario", "row"]).reset_index(level=0)
    rows = all_rows[all_rows["flow"] != "total"]
    out = rows[["scenario", "flow", "cc", "rtt_ms", "kernel_sd_mbps", "ns3_sd_mbps"]].assign(
        difference_mbps=(rows["ns3_mbps"] - rows["kernel_mbps"]).to_numpy())
    out["difference_over_larger_sd"] = out["difference_mbps"].abs() / out[["kernel_sd_mbps", "ns3_sd_mbps"]].max(axis=1)
    return out


def phase_table(frame: pd.DataFrame, configs: dict[str, Any]) -> pd.DataFrame | None:
    """Mean throughput per flow: kernel, ns-3 with jitter, ns-3 exact delays, ns-3 nudged (None without those runs).

    Parameters
    ----------
    frame : pandas.DataFrame
        The dataset, one row per flow and run.
    configs : dict of str to SvkConfig
        Scenario name -> its configuration (``rtts_ms`` labels the rows, ``ns3_jitter_packets`` a column).

    Returns
    -------
    pandas.DataFrame or None
        One row per ``reno_reno_reno`` sender (``"reno <RTT> ms"``), one column per engine / ns-3
        variant, mean throughput over repetitions [Mbit/s]; None unless both ``reno_reno_reno`` and
        ``reno_reno_reno_locked`` were run.
    """
    if not {"reno_reno_reno", "reno_reno_reno_locked"} <= set(configs):
        return None
    base = frame[frame["scenario"] == "reno_reno_reno"]
    columns = {"kernel": base[base["engine"] == "kernel"].groupby("flow")["throughput_bps"].mean() / 1e6}
    for name, label in PHASE_COLUMNS.items():
        if name in configs:
            sub = frame[(frame["scenario"] == name) & (frame["engine"] == "ns3")]
            columns[label.format(j=configs[name].ns3_jitter_packets)] = (
                sub.groupby("flow")["throughput_bps"].mean() / 1e6)
    phase = pd.DataFrame(columns)
    phase.index = [f"reno {r:g} ms" for r in configs["reno_reno_reno"].rtts_ms]
    phase.index.name = "mean throughput over repetitions [Mbit/s]"
    return phase


def compared_scenarios(frame: pd.DataFrame) -> list[str]:
    """Scenarios with runs on both engines, in the dataset's order (the ns-3-only phase runs have nothing to compare).

    Parameters
    ----------
    frame : pandas.DataFrame
        The dataset (``scenario`` and ``engine`` columns).

    Returns
    -------
    list of str
        The scenario names with both ``kernel`` and ``ns3`` rows.
    """
    engines = frame.groupby("scenario", sort=False)["engine"].agg(set)
    return [name for name, e in engines.items() if {"kernel", "ns3"} <= e]


def _claim_id(i: int, name: str) -> str:
    return f"SK{i + 1} {name}: ns-3 and the kernel agree on each flow's throughput (issue #5, item 5)"


def claims(frame: pd.DataFrame, prov: dict[str, Any]) -> pd.DataFrame:
    """The claims table (:data:`tcpmodels.stats.VERDICT_COLUMNS`): per compared scenario, one row per flow and
    one for the aggregate utilisation, ns-3 minus kernel, judged by :func:`tcpmodels.stats.equivalence_ind`.

    Parameters
    ----------
    frame : pandas.DataFrame
        The dataset (``scenario, engine, rep, flow, cc, rtt_ms, throughput_bps, share``), one row per flow and run.
    prov : dict
        Its provenance (``scenarios[name]["config"]`` holds ``rate_bps`` and the two tolerances).

    Returns
    -------
    pandas.DataFrame
        The claims table, claim ids ``SK1``, ``SK2``, ... in the order of :func:`compared_scenarios`.
    """
    out = []
    for i, name in enumerate(compared_scenarios(frame)):
        cfg = prov["scenarios"][name]["config"]
        sub = frame[frame["scenario"] == name]
        claim = _claim_id(i, name)
        says = prov["scenarios"][name].get("criterion", "the engines agree")
        unit = (f"unit: the run ({sub[sub.engine == 'ns3'].rep.nunique()} ns-3 vs "
                f"{sub[sub.engine == 'kernel'].rep.nunique()} kernel runs, independent)")
        for flow, g in sub.groupby("flow"):
            r = g.iloc[0]
            spec = ClaimSpec(claim=claim, part=f"flow {flow} ({r['cc']}, {r['rtt_ms']:g} ms)", paper_says=says,
                             quantity="share of the bottleneck rate, ns-3 - kernel [-]",
                             smallest_effect=float(cfg["tolerance_share"]),
                             effect_source="the campaign's tolerance_share, stated before measuring")
            ns3, kern = (g.loc[g["engine"] == e, "share"].to_numpy(float) for e in ("ns3", "kernel"))
            out.append(equivalence_ind(spec, ns3, kern, why=unit, we_measured=(
                f"ns-3 {ns3.mean() * cfg['rate_bps'] / 1e6:.1f} vs kernel {kern.mean() * cfg['rate_bps'] / 1e6:.1f} "
                f"Mbit/s (share {ns3.mean():.3f} vs {kern.mean():.3f})")))
        util = sub.groupby(["engine", "rep"])["throughput_bps"].sum() / cfg["rate_bps"]
        spec = ClaimSpec(claim=claim, part="aggregate utilisation", paper_says=says,
                         quantity="utilisation, ns-3 - kernel [-]", smallest_effect=float(cfg["tolerance_utilisation"]),
                         effect_source="the campaign's tolerance_utilisation, stated before measuring")
        ns3, kern = util.loc["ns3"].to_numpy(float), util.loc["kernel"].to_numpy(float)
        out.append(equivalence_ind(spec, ns3, kern, why=unit,
                                   we_measured=f"utilisation ns-3 {ns3.mean():.3f} vs kernel {kern.mean():.3f}"))
    return claims_table(out, family="ns-3 vs kernel")


#: Mask of the headline rows: every part (a few per scenario).
headline = Headline(every_row=True)


def answer(verdicts: pd.DataFrame) -> list[str]:
    """The answer box: per compared scenario, how many of its parts (flows and aggregate) agree, computed from the verdicts.

    Parameters
    ----------
    verdicts : pandas.DataFrame
        :func:`claims`.

    Returns
    -------
    list of str
        One sentence (or two) naming each scenario with its outcomes.
    """
    if not len(verdicts):
        return ["No scenario was run on both engines: nothing to compare."]
    per = []
    for claim, g in verdicts.groupby("claim", sort=False):
        name = claim.split(" ", 2)[1].rstrip(":")
        per.append(f"{name}: {verdict_counts(g['verdict'])} of {len(g)} parts")
    worst = verdicts.loc[verdicts["effect"].abs().idxmax()]
    return [("Whether ns-3 and the kernel agree, within the tolerances stated before measuring, on each flow's share "
             "and the aggregate utilisation: " + "; ".join(per) + "."),
            (f"The largest difference is {worst['effect']:+.3f} ({worst['claim'].split(' ', 2)[1].rstrip(':')}, "
             f"{worst['part']}).")]
