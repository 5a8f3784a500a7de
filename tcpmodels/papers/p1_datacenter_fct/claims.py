"""P1's claims, judged part by part by :mod:`tcpmodels.stats` with the run (seed) as the unit.

Every FCT comparison is made on the per-run mean (or standard deviation, or 95th
percentile) of the flows of that run, as ``log(ours / theirs)``: the effect is then a
relative change, and the smallest one that matters is **10 %** (``log 1.1``), argued
from the paper's own Table 2: its smallest reported difference between TCP and MPTCP
background is +15 % (standard deviation 122.5 -> 140.6 ms), so 10 % is below every
effect the paper reports. TCP and MPTCP runs of one seed share the workload schedule,
so they are paired by seed; runs of different experiments are compared by Welch's interval.

* **C1.1** (a) without background MPTCP does not change query FCT: TOST, margin ±10 %;
  (b) background raises query FCT (TCP, then MPTCP): Welch over runs, > +10 %;
  (c) with background MPTCP queries are slower than TCP's: paired, > +10 %.
* **C1.2** (a) MPTCP shortens the largest messages' FCT: paired, < -10 %;
  (b) the gain shrinks with size: per seed, gain(largest) - gain(smallest) > 0, smallest
  effect 10 points of gain.
* **C1.3** Table 2: mean, standard deviation and 95th percentile each higher with MPTCP
  background: paired per seed, > +10 %.
* **Fig. 7** (a) more flows see loss with MPTCP background: per seed, lossy share
  (MPTCP) - (TCP) > 0, smallest effect 5 points (argued: a visible shift of the CDF's
  tail); (b) loss-free flows finish alike: TOST on the per-seed log ratio of the
  loss-free median, margin ±10 %; the run-permutation KS distance of the loss-free
  FCTs is reported beside it.

Every part is judged per engine **and per MPTCP congestion control** (column ``cc``; the
claim's name says ``[engine, cc]``): the MPTCP runs of one control against the engine's TCP
runs of the same seeds (kernel: ``uncoupled``, ``tm_lia``, ``tm_olia``; ns-3: ``lia``).
The kernel is judged on each of its two testbeds, 17 seeds each: ``kernel`` (no RPS steering: a
few segments in 1000 reordered; every kernel stage up to 2026-11-29) and ``kernel_steered`` (the same
runs repeated with RPS steering: no reordering). Neither is the paper's ns-3 DCE, so both are shown;
:mod:`~tcpmodels.papers.p1_datacenter_fct.testbeds` pairs them seed by seed.

* **Coupling** (the paper's open question: does coupling change who suffers?), each kernel testbed, each
  coupled control against the uncoupled MPTCP runs of the same seed (same schedule): the 70 KB
  flows' per-run mean and 95th percentile FCT are lower with the coupled background (paired,
  < -10 %), and fewer of them see loss (< -5 points). RFC 6356's goal 2 ("do no harm": take no
  more than one TCP flow on the best path) is why coupling should relieve them.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from tcpmodels._docstrings import SharedEntries
from tcpmodels.papers.common import claim_spec as _spec
from tcpmodels.papers.p1_datacenter_fct.answer import family
from tcpmodels.papers.p1_datacenter_fct.data import (
    CLAIM_ENGINES,
    KERNEL_ENGINES,
    P1Dataset,
    engines_in,
    mptcp_ccs,
    with_cc,
)
from tcpmodels.stats import claims_table, difference, distribution, equivalence, not_testable
from tcpmodels.stats.spec import fmt_runs_needed

__all__ = ["claims", "coupling_claims", "claims_with_cc", "verdicts_by_cc", "lossy", "per_seed", "REL_EFFECT", "LOSS_SHARE_EFFECT"]

#: Parameters documented once for the docstrings of this module that share them.
_PARAMETERS = SharedEntries("""
    verdicts : pandas.DataFrame
        :func:`claims`.
""")

#: the smallest relative FCT change that matters, as a log ratio (10 %). [-]
REL_EFFECT = math.log(1.1)
#: the smallest change of the share of flows with loss that matters. [-]
LOSS_SHARE_EFFECT = 0.05
_REL_SOURCE = "10 %: below the paper's smallest Table 2 difference (+15 %, std dev)"
_CC_NOTE = {
    "uncoupled": " Kernel and ns-3 differ in one thing the paper blames: these kernel MPTCP subflows are uncoupled, "
                 "whereas LIA couples them.",
    "tm_lia": " The kernel's MPTCP subflows are coupled by tm_lia (RFC 6356 LIA in BPF), as the paper's MPTCP v0.86.",
    "tm_olia": " The kernel's MPTCP subflows are coupled by tm_olia (OLIA in BPF), not the paper's LIA.",
    "lia": " ns-3's MPTCP subflows are LIA-coupled, as the paper's MPTCP v0.86.",
}


def _runs(flows: pd.DataFrame, engine: str, experiment: str, kind: str, proto: str) -> pd.DataFrame:
    g = flows[(flows["engine"] == engine) & (flows["experiment"] == experiment) & (flows["kind"] == kind)
              & (flows["protocol"] == proto) & flows["fct_s"].notna()]
    return g


def per_seed(g: pd.DataFrame, stat: str = "mean", col: str = "fct_s") -> pd.Series:
    """``stat`` of ``col`` over each seed's rows of ``g``: one value per run.

    Parameters
    ----------
    g : pandas.DataFrame
        Flows of one engine, experiment, kind and protocol, with a ``seed`` column.
    stat : str
        ``"p95"`` (95th percentile) or any pandas groupby reduction (``"mean"``, ``"std"``, ``"median"``, ...).
    col : str
        Column to reduce; the default ``"fct_s"`` is the flow completion time in seconds.

    Returns
    -------
    pandas.Series
        Indexed by seed, in the unit of ``col``.
    """
    grouped = g.groupby("seed")[col]
    if stat == "p95":
        return grouped.quantile(0.95)
    return getattr(grouped, stat)()


def _log_ratio(a: pd.Series, b: pd.Series) -> pd.Series:
    both = pd.concat([a, b], axis=1, keys=["a", "b"]).dropna()
    both = both[(both["a"] > 0) & (both["b"] > 0)]
    return np.log(both["a"] / both["b"])


def _pct(x: pd.Series) -> str:
    return ", ".join(f"seed {s}: {np.expm1(v):+.0%}" for s, v in x.items())


def _c11(flows: pd.DataFrame, eng: str, tag: str, note: str) -> list:
    name = f"C1.1 [{tag}] query FCT: MPTCP itself does not change it; the background does, MPTCP background more"
    says = "Figs. 8-9: without background TCP and MPTCP queries finish alike; with background both slow down, MPTCP more"
    r = {(e, p): per_seed(_runs(flows, eng, e, "query", p)) for e in ("s5_query_nobg", "s5_query_bg")
         for p in ("tcp", "mptcp")}
    q = "log(FCT ratio) of the per-run mean query FCT"
    if any(len(v) == 0 for v in r.values()):
        s = _spec(name, "(a) without background MPTCP leaves query FCT unchanged", says, q, REL_EFFECT, _REL_SOURCE)
        return [not_testable(s, we_measured="no query runs", why="Section 5 query runs missing for this engine")]
    own = _log_ratio(r[("s5_query_nobg", "mptcp")], r[("s5_query_nobg", "tcp")])
    worse = _log_ratio(r[("s5_query_bg", "mptcp")], r[("s5_query_bg", "tcp")])
    out = [equivalence(_spec(name, "(a) without background MPTCP leaves query FCT unchanged", says,
                             q + ", MPTCP / TCP, per seed", REL_EFFECT, _REL_SOURCE), own.to_numpy(),
                       we_measured="MPTCP vs TCP, no background: " + _pct(own), why=note.strip())]
    for proto in ("tcp", "mptcp"):
        bg = np.log(r[("s5_query_bg", proto)].dropna())
        nobg = np.log(r[("s5_query_nobg", proto)].dropna())
        out.append(difference(_spec(name, f"(b) background raises {proto.upper()} query FCT", says,
                                    "log per-run mean FCT, background minus none", REL_EFFECT, _REL_SOURCE),
                              bg.to_numpy(), baseline=nobg.to_numpy(),
                              we_measured=f"mean of log FCT {bg.mean():.3f} with, {nobg.mean():.3f} without background "
                                          f"({np.expm1(bg.mean() - nobg.mean()):+.0%})",
                              why="independent runs of two experiments"))
    out.append(difference(_spec(name, "(c) with background MPTCP queries are slower than TCP's", says,
                                q + ", MPTCP / TCP background, per seed", REL_EFFECT, _REL_SOURCE), worse.to_numpy(),
                          we_measured="MPTCP vs TCP, with background: " + _pct(worse), why="paired by seed"))
    return out


def _c12(flows: pd.DataFrame, eng: str, tag: str, note: str) -> list:
    name = f"C1.2 [{tag}] short messages with background: MPTCP shortens FCT, less so for smaller messages"
    says = "Fig. 10: MPTCP FCT below TCP's for 50 KB-1 MB messages; the gap shrinks as the size shrinks"
    t = _runs(flows, eng, "s5_message_bg", "message", "tcp")
    m = _runs(flows, eng, "s5_message_bg", "message", "mptcp")
    if t.empty or m.empty:
        s = _spec(name, "(a) MPTCP shortens the largest messages", says, "log FCT ratio", REL_EFFECT, _REL_SOURCE, -1)
        return [not_testable(s, we_measured="no short-message runs", why="Section 5 runs missing for this engine")]
    big, small = t["size_bytes"].max(), t["size_bytes"].min()
    lr = {size: _log_ratio(per_seed(m[m["size_bytes"] == size]), per_seed(t[t["size_bytes"] == size]))
          for size in (big, small)}
    gain_diff = (-np.expm1(lr[big])) - (-np.expm1(lr[small]))
    return [
        difference(_spec(name, f"(a) MPTCP shortens the largest messages ({big / 1e3:g} KB)", says,
                         "log(FCT ratio) MPTCP / TCP per seed", REL_EFFECT, _REL_SOURCE, direction=-1),
                   lr[big].to_numpy(), we_measured=_pct(lr[big]), why="paired by seed" + note),
        difference(_spec(name, f"(b) the gain is larger at {big / 1e3:g} KB than at {small / 1e3:g} KB", says,
                         "gain 1 - FCT_MPTCP/FCT_TCP, largest minus smallest size, per seed", 0.10,
                         "argued: 10 points of gain"), gain_diff.dropna().to_numpy(),
                   we_measured=", ".join(f"seed {s}: {v:+.2f}" for s, v in gain_diff.dropna().items()),
                   why="paired by seed"),
    ]


def _c13(flows: pd.DataFrame, eng: str, tag: str, note: str) -> list:
    name = f"C1.3 [{tag}] Table 2: mean, std dev and 95th percentile FCT of 70 KB flows all higher with MPTCP background"
    says = "TCP background 78.4 / 122.5 / 266.7 ms; MPTCP background 91 / 140.6 / 510.5 ms (mean / std / p95)"
    t = _runs(flows, eng, "s4", "short", "tcp")
    m = _runs(flows, eng, "s4", "short", "mptcp")
    out = []
    for stat, label in (("mean", "mean"), ("std", "standard deviation"), ("p95", "95th percentile")):
        lr = _log_ratio(per_seed(m, stat), per_seed(t, stat))
        out.append(difference(_spec(name, f"{label} higher with MPTCP background", says,
                                    f"log(ratio) of the per-run {label}, MPTCP / TCP background", REL_EFFECT,
                                    _REL_SOURCE), lr.to_numpy(), we_measured=_pct(lr),
                              why="paired by seed; the statistic is computed within each run" + note))
    return out


def lossy(g: pd.DataFrame, engine: str) -> pd.Series:
    """Whether each flow saw loss, as the claims count it: a missing count is no loss.

    Parameters
    ----------
    g : pandas.DataFrame
        Flows of one engine.
    engine : str
        A kernel testbed (``"kernel"``, ``"kernel_steered"``): the sender retransmitted
        (``retransmitted_packets`` from the captures); else FlowMonitor counted a lost packet
        (``lost_packets``, ns-3).

    Returns
    -------
    pandas.Series of bool
        Index of ``g``.
    """
    col = "retransmitted_packets" if engine in KERNEL_ENGINES else "lost_packets"
    return pd.to_numeric(g[col], errors="coerce") > 0


def _f7(flows: pd.DataFrame, eng: str, tag: str, seed: int) -> list:
    name = f"Fig. 7 [{tag}] loss-free flows finish alike; with MPTCP background more flows see loss"
    says = "CDF of FCT: no difference for flows without loss; a larger share of flows with loss and delay under MPTCP"
    t = _runs(flows, eng, "s4", "short", "tcp")
    m = _runs(flows, eng, "s4", "short", "mptcp")
    share = {p: g.assign(l=lossy(g, eng)).groupby("seed")["l"].mean() for p, g in (("tcp", t), ("mptcp", m))}
    d = (share["mptcp"] - share["tcp"]).dropna()
    lf = {p: g[~lossy(g, eng)] for p, g in (("tcp", t), ("mptcp", m))}
    med = _log_ratio(per_seed(lf["mptcp"], "median"), per_seed(lf["tcp"], "median"))
    ks = distribution(_spec(name, "KS", says, "KS distance", 0.1, "argued"),
                      [g["fct_s"].to_numpy() for _, g in lf["tcp"].groupby("seed")],
                      [g["fct_s"].to_numpy() for _, g in lf["mptcp"].groupby("seed")], seed=seed)
    return [
        difference(_spec(name, "(a) a larger share of flows sees loss with MPTCP background", says,
                         "share of flows with loss, MPTCP minus TCP background, per seed", LOSS_SHARE_EFFECT,
                         "argued: 5 points is a visible shift of the CDF's tail"), d.to_numpy(),
                   we_measured=", ".join(f"seed {s}: {share['tcp'][s]:.1%} -> {share['mptcp'][s]:.1%}"
                                         for s in d.index), why="paired by seed; loss = the sender retransmitted"),
        equivalence(_spec(name, "(b) loss-free flows finish alike", says,
                          "log(ratio) of the per-run median loss-free FCT, MPTCP / TCP", REL_EFFECT, _REL_SOURCE),
                    med.to_numpy(), we_measured=_pct(med) + f"; KS distance of the pooled loss-free FCTs {ks.effect:.3f}",
                    why=f"paired by seed; the whole CDFs: {ks.why}"),
    ]


def coupling_claims(flows: pd.DataFrame, engine: str = "kernel") -> list:
    """Does coupling change who suffers? Each coupled kernel control against the uncoupled MPTCP runs.

    Parameters
    ----------
    flows : pandas.DataFrame
        Flows with ``cc`` (kernel runs of ``uncoupled`` and of ``tm_lia`` / ``tm_olia``).
    engine : str
        The kernel testbed whose runs are compared (:data:`~.data.KERNEL_ENGINES`); the claim's
        name says ``[engine, cc vs uncoupled]``.

    Returns
    -------
    list of Verdict
        Per coupled control present: the 70 KB flows' per-run mean and 95th percentile FCT, and
        their share with loss, coupled minus uncoupled background, paired by seed (empty without
        uncoupled and coupled kernel runs).
    """
    flows = with_cc(flows)
    if engine not in KERNEL_ENGINES:
        raise ValueError(f"engine must be a kernel testbed {KERNEL_ENGINES}; got {engine!r}")
    ccs = mptcp_ccs(flows, engine)
    if "uncoupled" not in ccs:
        return []
    says = ("Section 4 blames MPTCP taking more bandwidth on uncongested paths; RFC 6356 LIA is designed to take no "
            "more than one TCP flow would on the best path, so coupling should relieve the short TCP flows")
    base = flows[(flows["engine"] == engine) & (flows["experiment"] == "s4") & (flows["kind"] == "short")
                 & (flows["protocol"] == "mptcp") & flows["fct_s"].notna()]
    unc = base[base["cc"] == "uncoupled"]
    out = []
    for cc in (c for c in ccs if c != "uncoupled"):
        name = f"Coupling [{engine}, {cc} vs uncoupled]: the 70 KB flows beside a coupled MPTCP background suffer less"
        cpl = base[base["cc"] == cc]
        for stat, label in (("mean", "mean"), ("p95", "95th percentile")):
            lr = _log_ratio(per_seed(cpl, stat), per_seed(unc, stat))
            out.append(difference(_spec(name, f"{label} FCT lower with the {cc} background", says,
                                        f"log(ratio) of the per-run {label}, {cc} / uncoupled MPTCP background",
                                        REL_EFFECT, _REL_SOURCE, direction=-1), lr.to_numpy(),
                                  we_measured=_pct(lr), why="paired by seed (the same schedule)" + _CC_NOTE[cc]))
        share = {c: g.assign(l=lossy(g, engine)).groupby("seed")["l"].mean() for c, g in (("u", unc), ("c", cpl))}
        d = (share["c"] - share["u"]).dropna()
        out.append(difference(_spec(name, f"fewer flows see loss with the {cc} background", says,
                                    f"share of flows with loss, {cc} minus uncoupled MPTCP background, per seed",
                                    LOSS_SHARE_EFFECT, "argued: 5 points is a visible shift of the CDF's tail",
                                    direction=-1), d.to_numpy(),
                              we_measured=", ".join(f"seed {s}: {share['u'][s]:.1%} -> {share['c'][s]:.1%}"
                                                    for s in d.index),
                              why="paired by seed; loss = the sender retransmitted"))
    return out


def claims(dataset: P1Dataset, tables: dict[str, pd.DataFrame], *, seed: int = 0) -> pd.DataFrame:
    """Verdicts on C1.1, C1.2, C1.3 and the Fig. 7 statement, part by part, per engine and congestion control.

    Each MPTCP congestion control of an engine (``cc``) is judged against the engine's TCP runs;
    with uncoupled and coupled kernel runs, :func:`coupling_claims` follow. The engines are both kernel
    testbeds and ns-3 (:data:`~.data.CLAIM_ENGINES`), in that order.

    Parameters
    ----------
    dataset : P1Dataset
        The campaign's data (its ``flows`` are used when ``tables`` has none).
    tables : dict

        :func:`~tcpmodels.papers.p1_datacenter_fct.tables` of the same dataset; its ``flows``
        selection (all seeds, or seed 0 in quick mode) is the one judged.
    seed : int
        Seed of the permutation and bootstrap draws.

    Returns
    -------
    pandas.DataFrame
        Columns of :data:`tcpmodels.stats.VERDICT_COLUMNS` (tests in the module docstring); each claim
        names its ``[engine, cc]`` (:func:`claims_with_cc` makes them columns). Holm's adjustment is
        applied within each engine (family ``"P1 <engine>"``: both kernel testbeds and ns-3 are families of
        their own, all controls and the coupling parts of an engine in one).
    """
    flows = with_cc(tables.get("flows", dataset.flows))
    rows = []
    engines = engines_in(flows, CLAIM_ENGINES)
    for eng in engines:
        for cc in mptcp_ccs(flows, eng) or ["-"]:
            view = flows[(flows["engine"] == eng) & ((flows["protocol"] == "tcp") | (flows["cc"] == cc))]
            tag = f"{eng}, {cc}"
            note = _CC_NOTE.get(cc, "")
            part = _c11(view, eng, tag, note) + _c12(view, eng, tag, note) + _c13(view, eng, tag, note) \
                + _f7(view, eng, tag, seed)
            rows += part
    for eng in (e for e in engines if e in KERNEL_ENGINES):
        rows += coupling_claims(flows, eng)
    return claims_table(rows, family=family)


@_PARAMETERS.fill
def claims_with_cc(verdicts: pd.DataFrame) -> pd.DataFrame:
    """The claims table with ``claim_id``, ``engine`` and ``cc`` columns read from each claim's ``[engine, cc]``.

    Parameters
    ----------
    {verdicts}

    Returns
    -------
    pandas.DataFrame
        A copy with ``claim_id`` (``"C1.3"``, ``"Fig. 7"``, ``"Coupling"``), ``engine`` and ``cc``
        (``"tm_lia vs uncoupled"`` for the coupling rows) in front.
    """
    tag = verdicts["claim"].str.extract(r"^(?P<claim_id>[^\[]+?)\s*\[(?P<engine>[^,\]]+),\s*(?P<cc>[^\]]+)\]")
    return pd.concat([tag, verdicts], axis=1)


@_PARAMETERS.fill
def verdicts_by_cc(verdicts: pd.DataFrame) -> pd.DataFrame:
    """The verdict of every claim part per engine and congestion control, side by side.

    Parameters
    ----------
    {verdicts}

    Returns
    -------
    pandas.DataFrame
        Index (``claim_id``, ``part``), one column per ``engine / cc`` present (kernel first, in
        the order the claims were judged); cells ``verdict (runs)``, or ``runs needed`` beside an
        inconclusive verdict. The coupling rows are left out (they compare two controls).
    """
    v = claims_with_cc(verdicts)
    v = v[v["claim_id"] != "Coupling"]
    cell = [f"{r.verdict} ({r.n_runs} runs" + (f", needs {fmt_runs_needed(r.runs_needed)})" if np.isfinite(r.runs_needed) else ")")
            for r in v.itertuples()]
    # a part that names its sizes (``"... (1000 KB)"``) is the same part when the runs are missing
    v = v.assign(column=v["engine"] + " / " + v["cc"], cell=cell,
                 part=v["part"].str.replace(r" \(\d[^)]*\)$", "", regex=True))
    order = list(dict.fromkeys(v["column"]))
    out = v.pivot_table(index=["claim_id", "part"], columns="column", values="cell", aggfunc="first", sort=False)
    return out[order]
