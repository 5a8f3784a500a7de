"""P1's question, answered from the data: does coupling (LIA, OLIA) change who suffers?

For every coupled MPTCP control of the kernel runs, the 70 KB flows' mean and 95th-percentile
completion time and share with loss beside the TCP, uncoupled and coupled backgrounds on the same
seeds, the background's window (median transfer) and loss-event rate, and the verdicts of the coupling claims
(:func:`tcpmodels.papers.p1_datacenter_fct.claims.coupling_claims`) and of C1.3 for that control;
then, per MPTCP control of the ns-3 runs (LIA), the same flows and its C1.3 verdicts beside the kernel
column of the same coupling; then the answer with the seeds the power analysis asks for (a part measured on one seed borrows the
between-seed spread of the uncoupled kernel's paired comparisons); last, the coupling and C1.3 mean verdicts
of the steered kernel testbed (``kernel_steered``, no reordering), when the dataset has its runs. The figures
and the paragraphs before it are those of the unsteered testbed (``kernel``), the one of the tables.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from tcpmodels.papers.p1_datacenter_fct.claims import LOSS_SHARE_EFFECT, REL_EFFECT, claims_with_cc
from tcpmodels.papers.p1_datacenter_fct.data import mptcp_ccs, with_cc
from tcpmodels.papers.phrases import needs_clause
from tcpmodels.stats import INCONCLUSIVE, SUPPORTED
from tcpmodels.stats.spec import fmt_runs_needed, ttest_runs_needed

__all__ = ["coupling_answer"]


def coupling_answer(verdicts: pd.DataFrame, flows: pd.DataFrame, subflows: pd.DataFrame) -> str:
    """A paragraph per coupled control and the answer, in Markdown, every number from the data.

    Parameters
    ----------
    verdicts : pandas.DataFrame
        :func:`tcpmodels.papers.p1_datacenter_fct.claims` of the dataset (the cc in each claim's name).
    flows : pandas.DataFrame
        The flow table of :func:`tcpmodels.papers.p1_datacenter_fct.tables` (``tables["flows"]``).
    subflows : pandas.DataFrame
        The dataset's subflow table (``P1Dataset.subflows``).

    Returns
    -------
    str
        Markdown paragraphs separated by blank lines; FCTs in [ms], shares in [%].
    """
    tagged = claims_with_cc(verdicts)
    # the testbed of the tables above; the steered testbed's verdicts: _steered_paragraph
    kernel = tagged[tagged["engine"] == "kernel"]
    fl = with_cc(flows)
    short = fl[(fl["engine"] == "kernel") & (fl["experiment"] == "s4") & (fl["kind"] == "short") & fl["fct_s"].notna()]
    sub = with_cc(subflows)
    sub = sub[(sub["engine"] == "kernel") & (sub["experiment"] == "s4")]
    coupled = [cc for cc in mptcp_ccs(fl, "kernel") if cc != "uncoupled"]
    text = []
    if not coupled or "uncoupled" not in mptcp_ccs(fl, "kernel"):
        text.append("The dataset has no kernel runs with both an uncoupled and a coupled MPTCP background: "
                    "the question cannot be answered from it.")
    for cc in coupled:
        seeds = sorted(set(short.loc[(short["protocol"] == "mptcp") & (short["cc"] == cc), "seed"]))
        groups = {"TCP": (short["protocol"] == "tcp"), "uncoupled": (short["protocol"] == "mptcp") & (short["cc"] == "uncoupled"),
                  cc: (short["protocol"] == "mptcp") & (short["cc"] == cc)}
        same = short["seed"].isin(seeds)
        mean = {k: short.loc[m & same, "fct_s"].mean() * 1e3 for k, m in groups.items()}
        p95 = {k: short.loc[m & same, "fct_s"].quantile(0.95) * 1e3 for k, m in groups.items()}
        lossy = {k: (pd.to_numeric(short.loc[m & same, "retransmitted_packets"], errors="coerce") > 0).mean()
                 for k, m in groups.items()}
        sgroups = {"TCP": sub["protocol"] == "tcp", "uncoupled": (sub["protocol"] == "mptcp") & (sub["cc"] == "uncoupled"),
                   cc: (sub["protocol"] == "mptcp") & (sub["cc"] == cc)}
        ssame = sub["seed"].isin(seeds)
        # the median transfer: a few subflows under the BPF controls report implausible TCP_INFO windows (millions of
        # segments, the open kernel_cc defect) that a mean over the transfers would carry into the paragraph
        win = {k: sub[m & ssame].groupby(["seed", "conn_id"])["cwnd_mean_segments"].sum().median() for k, m in sgroups.items()}
        ler = {k: sub.loc[m & ssame, "loss_event_rate"].mean() for k, m in sgroups.items()}
        cpl = kernel[(kernel["claim_id"] == "Coupling") & (kernel["cc"] == f"{cc} vs uncoupled")]
        c13 = kernel[(kernel["claim_id"] == "C1.3") & (kernel["cc"] == cc)]
        verdict_text = "; ".join(
            f"{r.part}: **{r.verdict}** (effect {r.effect:+.3f}, {r.n_runs} runs"
            + needs_clause(r.runs_needed) + ")"
            for r in pd.concat([cpl, c13]).itertuples())
        text.append(
            f"**{cc}** (seeds {', '.join(map(str, seeds))}; the three backgrounds on the same schedules): the 70 KB flows "
            f"finish in {mean['TCP']:.1f} ms on average beside TCP background, {mean['uncoupled']:.1f} ms beside "
            f"uncoupled MPTCP and {mean[cc]:.1f} ms beside {cc}; 95th percentile {p95['TCP']:.1f} / "
            f"{p95['uncoupled']:.1f} / {p95[cc]:.1f} ms; share with loss {lossy['TCP']:.1%} / {lossy['uncoupled']:.1%} / "
            f"{lossy[cc]:.1%}. The median background transfer keeps {win['uncoupled']:.0f} segments in flight uncoupled "
            f"and {win[cc]:.0f} under {cc} (one TCP: {win['TCP']:.0f}), at a subflow loss-event rate of "
            f"{ler['uncoupled']:.2%} and {ler[cc]:.2%} (TCP {ler['TCP']:.2%}). Verdicts: {verdict_text}.")
    text += _ns3_paragraphs(fl, tagged)
    # between-seed spread of the uncoupled kernel's paired MPTCP-vs-TCP comparisons: the spread a coupled-vs-uncoupled
    # comparison is planned with until it has runs of its own (borrowed)
    lossy_flag = pd.to_numeric(short["retransmitted_packets"], errors="coerce").astype(float) > 0
    kern = short.assign(lossy=lossy_flag)
    per = {stat: kern.groupby(["protocol", "cc", "seed"])["fct_s"].agg(stat) for stat in ("mean",)}
    per["p95"] = kern.groupby(["protocol", "cc", "seed"])["fct_s"].quantile(0.95)
    share_seed = kern.groupby(["protocol", "cc", "seed"])["lossy"].mean()
    borrowed = {}
    if ("mptcp", "uncoupled") in per["mean"].index.droplevel(2) and ("tcp", "uncoupled") in per["mean"].index.droplevel(2):
        for stat in ("mean", "p95"):
            lr = np.log(per[stat].loc[("mptcp", "uncoupled")] / per[stat].loc[("tcp", "uncoupled")]).dropna()
            if len(lr) > 1:
                borrowed[stat] = (float(lr.std(ddof=1)), len(lr), ttest_runs_needed(REL_EFFECT, float(lr.std(ddof=1)), 0.05))
        d = (share_seed.loc[("mptcp", "uncoupled")] - share_seed.loc[("tcp", "uncoupled")]).astype(float).dropna()
        if len(d) > 1:
            borrowed["loss share"] = (float(d.std(ddof=1)), len(d),
                                      ttest_runs_needed(LOSS_SHARE_EFFECT, float(d.std(ddof=1)), 0.05))
    if coupled:
        one_seed = bool((kernel.loc[kernel["claim_id"] == "Coupling", "n_runs"] < 2).any())
        relief = kernel[(kernel["claim_id"] == "Coupling") & kernel["part"].str.startswith("mean")]
        decided = relief[relief["verdict"] != INCONCLUSIVE]
        open_ = relief[relief["verdict"] == INCONCLUSIVE]
        needs = open_["runs_needed"].dropna()
        text.append(
            "**Answer.** "
            + (" ".join(f"{r.cc.split()[0]}: coupling {'relieves' if r.verdict == SUPPORTED else 'does not relieve'} "
                        f"the 70 KB flows by the 10 % that matters ({r.verdict}, {r.n_runs} paired seeds)."
                        for r in decided.itertuples()) if len(decided) else "Not decided by these runs.")
            + "".join(f" {r.cc.split()[0]}: not decided (mean FCT {r.effect:+.3f} as a log ratio, {r.n_runs} paired seeds"
                      + needs_clause(r.runs_needed) + ")."
                      for r in open_.itertuples() if len(decided))
            + (f" Where it is inconclusive the power analysis asks for up to {fmt_runs_needed(needs.max())} paired seeds at the "
               "spread measured so far (the issue asks for at least 8 per background)." if len(needs) else "")
            + (" A part measured on one seed has no spread of its own: at the between-seed spread of the uncoupled "
               "kernel's paired comparisons (borrowed: "
               + "; ".join(f"{k}: sd {v[0]:.3f} over {v[1]} seeds, so {v[2]:.0f} paired seeds for the smallest effect "
                           "that matters" for k, v in borrowed.items() if math.isfinite(v[2]))
               + ") the coupling parts need that many seeds of each coupled control." if borrowed and one_seed else "")
            + " Whether MPTCP still hurts the short flows more than TCP under a coupled control is that control's C1.3 "
            "column in the table of verdicts per congestion control.")
    text += _steered_paragraph(tagged)
    return "\n\n".join(text)


def _steered_paragraph(tagged: pd.DataFrame) -> list[str]:
    """The coupling and C1.3 mean verdicts of the steered kernel testbed (no reordering), when it has runs."""
    st = tagged[tagged["engine"] == "kernel_steered"]
    cpl = st[(st["claim_id"] == "Coupling") & st["part"].str.startswith("mean")]
    c13 = st[(st["claim_id"] == "C1.3") & st["part"].str.startswith("mean")]
    if cpl.empty and c13.empty:
        return []

    def verdicts(rows: pd.DataFrame, label) -> str:
        return "; ".join(f"{label(r)} **{r.verdict}** (mean FCT {r.effect:+.3f} as a log ratio, {r.n_runs} seeds"
                         + needs_clause(r.runs_needed) + ")"
                         for r in rows.itertuples())

    return ["**On the steered testbed** (`kernel_steered`: the same runs with RPS steering, which removes the "
            "reordering), mean FCT of the 70 KB flows lower beside a coupled control than beside uncoupled MPTCP: "
            + verdicts(cpl, lambda r: r.cc.split()[0] + ":")
            + ". Their mean FCT beside MPTCP against beside TCP (C1.3): "
            + verdicts(c13, lambda r: r.cc + ":") + "."]


def _ns3_paragraphs(flows: pd.DataFrame, tagged: pd.DataFrame) -> list[str]:
    """One paragraph per ns-3 MPTCP control (ns-3's coupled LIA): the 70 KB flows beside TCP and MPTCP
    background on the same seeds, its C1.3 verdicts, and the kernel column with the same coupling beside it."""
    short = flows[(flows["engine"] == "ns3") & (flows["experiment"] == "s4") & (flows["kind"] == "short")
                  & flows["fct_s"].notna()]
    out = []
    for cc in mptcp_ccs(flows, "ns3"):
        seeds = sorted(set(short.loc[(short["protocol"] == "mptcp") & (short["cc"] == cc), "seed"]))
        same = short["seed"].isin(seeds)
        groups = {"TCP": short["protocol"] == "tcp", cc: (short["protocol"] == "mptcp") & (short["cc"] == cc)}
        mean = {k: short.loc[m & same, "fct_s"].mean() * 1e3 for k, m in groups.items()}
        # ns-3 has no sender-side retransmission count per flow: a flow "sees loss" when a packet of it was lost
        lossy = {k: (pd.to_numeric(short.loc[m & same, "lost_packets"], errors="coerce") > 0).mean()
                 for k, m in groups.items()}
        c13 = tagged[(tagged["claim_id"] == "C1.3") & (tagged["engine"] == "ns3") & (tagged["cc"] == cc)]
        kernel_twin = {"lia": "tm_lia", "olia": "tm_olia"}.get(cc)
        twin = tagged[(tagged["claim_id"] == "C1.3") & (tagged["engine"] == "kernel") & (tagged["cc"] == kernel_twin)]
        verdict_text = "; ".join(
            f"{r.part}: **{r.verdict}** (effect {r.effect:+.3f}, {r.n_runs} runs"
            + needs_clause(r.runs_needed) + ")"
            for r in c13.itertuples())
        twin_text = ("; ".join(f"{r.part.removesuffix(' with MPTCP background')} {r.effect:+.3f} ({r.verdict}, {r.n_runs} runs)" for r in twin.itertuples())
                     if len(twin) else "")
        out.append(
            f"**ns-3, {cc.upper()}** (seeds {', '.join(map(str, seeds))}; ns-3's own coupled MPTCP on the kernel runs' "
            f"schedules): the 70 KB flows finish in {mean['TCP']:.1f} ms on average beside TCP background and "
            f"{mean[cc]:.1f} ms beside MPTCP; share with a lost packet {lossy['TCP']:.1%} / {lossy[cc]:.1%}. C1.3: {verdict_text}."
            + (f" The kernel's {kernel_twin} (the same coupling as a BPF congestion control): {twin_text}." if twin_text
               else ""))
    return out
