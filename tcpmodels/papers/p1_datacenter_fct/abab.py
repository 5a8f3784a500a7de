"""P1's steering factor measured without the day: both kernel testbeds alternated per seed in one session (issue 57).

The campaign (:mod:`tcpmodels.experiments.p1.abab`, dataset ``p1_abab_*``) runs, for every seed, the
Section 4 experiment with a TCP and an uncoupled MPTCP background on the unsteered testbed (engine
``kernel``) and on the steered one (``kernel_steered``: RPS steering, no reordering), the testbeds'
order alternating from seed to seed. Every quantity below is a paired difference per seed,
steered minus unsteered, so the day and the host's drift over the session cancel.

Claims (stated before the runs, :data:`ABAB_SPECS`; one family for Holm's adjustment, ``P1 ABAB``):

* ``headline``: the uncoupled headline (C1.3 mean: the 70 KB flows' mean FCT beside MPTCP against
  beside TCP, as a log ratio per seed) is lower on the steered testbed, by at least 10 %
  (``log 1.1``, the claims' smallest effect): the shipped testbeds differ by -0.22 (+0.226 unsteered
  on 17 seeds, +0.006 steered on 17 seeds of another day).
* ``tcp arm``: beside the TCP background the 70 KB flows are slower when steered (>= 10 %): the shipped
  runs said +0.215 on 13 idle seeds.
* ``mptcp arm``: beside uncoupled MPTCP they are not (TOST, +-10 %): the shipped runs said +0.027.
* ``lossy share``: beside the TCP background more of them see loss when steered (>= 5 points).
* ``reordering``: the steered testbed removes reordering (events per 1000 data segments, TCP arm, lower
  by at least 0.1: the unsteered testbed showed 0.4-1.1).
* ``background rate``: the TCP background carries less when steered (>= 5 %, ``log 1.05``: the
  shipped runs said 92.3 -> 83.9 Mbit/s, -9.5 %).

**The rule for reading them** (:func:`abab_reading`), fixed before the data: the *steering factor*
explains the shipped difference of the headline if ``headline`` is *supported*; if it is
*contradicted* (the whole interval short of -10 %), or *smaller than claimed*, steering in one session moves the
headline by less than 10 %, and the shipped difference came from what else differed between the
two sittings (the day, the load), not from steering; if *inconclusive*, neither is shown and the
seeds needed are given. The arms say which side moves: ``tcp arm`` supported with ``mptcp arm``
supported (equivalent) means steering slows only the flows beside a TCP background. The counters
(``reordering``, and the mechanism table :meth:`Abab.mechanism`: DSACKs, RTOs, fast retransmissions
per 1000 data segments) say what changes on the wire with it.

**Two sessions** (stated 2026-12-06 19:22 UTC, while the second session ran and before any of its results
were read). The first session (``p1_abab_*``, 15:46-16:41 UTC) ran while four other engineers' jobs
held the host's 1-min load at 11.7-12.5 at the runs' starts; the shipped runs whose difference the
campaign is to explain ran at 1.35 (unsteered) and 2.01 (steered). The second (``p1_abab_idle_*``,
:mod:`tcpmodels.datasets.p1_abab_idle`) runs the same plan with nothing else on the host. So the second
session is the plan's test: its verdicts are the family :data:`ABAB_FAMILY` and the reading above is
applied to them. The first session's verdicts are shown beside them, as the family
:data:`ABAB_LOADED_FAMILY`, and are not pooled with them (a session is one sitting; pooling would mix
the load into the paired spread). The *load* itself is estimated, not judged, from the same seed on the
same testbed in the two sessions (first minus second, per seed, 95 % t interval: :func:`load_section` in
:mod:`~tcpmodels.papers.p1_datacenter_fct.sittings`): the load was not assigned at random and the
sessions differ in hour as well. Until the second session's dataset is shipped with at least two
complete seeds, the first session is read alone, as before, in the family :data:`ABAB_FAMILY`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

import numpy as np
import pandas as pd

from tcpmodels.datasets import p1_abab_idle
from tcpmodels.datasets.p1_abab import SCHEMA, TESTBEDS, complete_seeds, tcp_ext_column
from tcpmodels.papers.common import keyed_claims_table
from tcpmodels.papers.p1_datacenter_fct.claims import LOSS_SHARE_EFFECT, REL_EFFECT
from tcpmodels.papers.phrases import effect_ci_text, runs_needed_text
from tcpmodels.stats import CONTRADICTED, SMALLER_THAN_CLAIMED, SUPPORTED, ClaimSpec, difference, equivalence

__all__ = ["per_seed_table", "ABAB_SPECS", "ABAB_FAMILY", "ABAB_LOADED_FAMILY", "SESSION_SCHEMAS", "Abab", "load_abab",
           "abab_reading", "REORDER_EFFECT_PER_1000", "BG_RATE_EFFECT"]

#: the smallest drop of reordering events per 1000 data segments that matters: a quarter of the lowest rate the
#: unsteered testbed showed (0.4 per 1000). [events / 1000 segments]
REORDER_EFFECT_PER_1000 = 0.1
#: the smallest change of the background's rate that matters, as a log ratio (5 %, half the shipped -9.5 %). [-]
BG_RATE_EFFECT = math.log(1.05)
#: the family of the session that tests the plan (the second, idle-host session once shipped; else the first)
ABAB_FAMILY = "P1 ABAB"
#: the family of the first session's verdicts once the second is shipped (shown beside them, not pooled)
ABAB_LOADED_FAMILY = "P1 ABAB (loaded host)"
#: session -> its dataset's schema: the first (``loaded``, ``p1_abab``) and the second (``idle``, ``p1_abab_idle``)
SESSION_SCHEMAS = {"loaded": SCHEMA, "idle": p1_abab_idle.SCHEMA}
_SAYS = ("not a claim of the paper: which factor makes the unsteered and the steered kernel testbeds differ on "
         "C1.3 (the paper's headline), with the day removed by alternating the testbeds per seed")
_REL = "the claims' 10 % (below the paper's smallest Table 2 difference)"
_CLAIM = "P1 testbeds alternated per seed (steered - unsteered, same session)"
ABAB_SPECS = {
    "headline": ClaimSpec(claim=_CLAIM, part="steering lowers the uncoupled headline (C1.3 mean) by >= 10 %",
                          paper_says=_SAYS, quantity="log(MPTCP/TCP-background mean FCT) steered - unsteered, per seed "
                          "[-]", direction=-1, smallest_effect=REL_EFFECT, effect_source=_REL),
    "tcp arm": ClaimSpec(claim=_CLAIM, part="beside the TCP background the 70 KB flows are slower steered",
                         paper_says=_SAYS, quantity="log(mean FCT steered / unsteered) beside TCP, per seed [-]",
                         direction=1, smallest_effect=REL_EFFECT, effect_source=_REL),
    "mptcp arm": ClaimSpec(claim=_CLAIM, part="beside the uncoupled MPTCP background they are not (TOST)",
                           paper_says=_SAYS, quantity="log(mean FCT steered / unsteered) beside MPTCP, per seed [-]",
                           smallest_effect=REL_EFFECT, effect_source=_REL),
    "lossy share": ClaimSpec(claim=_CLAIM, part="beside the TCP background more 70 KB flows see loss steered",
                             paper_says=_SAYS, quantity="share of 70 KB flows with a retransmission, steered - "
                             "unsteered, beside TCP, per seed [-]", direction=1, smallest_effect=LOSS_SHARE_EFFECT,
                             effect_source="the claims' 5 points (Fig. 7 (a))"),
    "reordering": ClaimSpec(claim=_CLAIM, part="steering removes reordering (TCP-background runs)", paper_says=_SAYS,
                            quantity="reordering events per 1000 data segments, steered - unsteered, per seed "
                            "[1/1000]", direction=-1, smallest_effect=REORDER_EFFECT_PER_1000,
                            effect_source="a quarter of the unsteered testbed's lowest rate (0.4 per 1000)"),
    "background rate": ClaimSpec(claim=_CLAIM, part="the TCP background carries less steered", paper_says=_SAYS,
                                 quantity="log(mean background rate steered / unsteered), per seed [-]", direction=-1,
                                 smallest_effect=BG_RATE_EFFECT,
                                 effect_source="5 %, half the shipped difference (92.3 -> 83.9 Mbit/s)"),
}
#: mechanism counters (TcpExt, summed over the hosts) -> label, all per 1000 data segments
_MECHANISM = {label: tuple(tcp_ext_column(c) for c in counters) for label, counters in {
    "reordering": ("TCPSACKReorder", "TCPTSReorder", "TCPRenoReorder"), "DSACKs received": ("TCPDSACKRecv",),
    "RTOs": ("TCPTimeouts",), "fast retransmissions": ("TCPFastRetrans",), "tail loss probes": ("TCPLossProbes",),
    "out-of-order queued": ("TCPOFOQueue",)}.items()}
_UNSTEERED, _STEERED = TESTBEDS


def load_abab(data_dir: str | Path = "data", session: str = "loaded") -> Abab | None:
    """One session's tables, or None when its dataset is not there.

    Parameters
    ----------
    data_dir : str or Path
        The ``data`` folder or its ``datasets`` folder (``p1_abab_flows.parquet``, ``p1_abab_runs.parquet``:
        :mod:`tcpmodels.datasets.p1_abab`; the second session's ``p1_abab_idle_*``).
    session : {"loaded", "idle"}
        The session (:data:`SESSION_SCHEMAS`).

    Returns
    -------
    Abab or None
        The flows and runs tables, with what is judged on them.

    Raises
    ------
    ValueError
        If ``session`` is not one of :data:`SESSION_SCHEMAS`.
    """
    if session not in SESSION_SCHEMAS:
        raise ValueError(f"session={session!r}: expected one of {sorted(SESSION_SCHEMAS)}")
    schema, names = SESSION_SCHEMAS[session], ("flows", "runs")
    if not schema.present(data_dir, names):
        return None
    tables = schema.read(data_dir, names)
    return Abab(tables["flows"], tables["runs"], session=session)



def per_seed_table(flows: pd.DataFrame, runs: pd.DataFrame, seeds: list[int]) -> pd.DataFrame:
    """Per seed and testbed: the 70 KB flows' mean FCT and lossy share per background, the counters, the rates.

    Parameters
    ----------
    flows, runs : pandas.DataFrame
        The alternated tables (:mod:`tcpmodels.datasets.p1_abab`, or another campaign's with them).
    seeds : list of int
        The seeds that count (complete ones).

    Returns
    -------
    pandas.DataFrame
        Index (seed, engine); columns ``mean_fct_tcp_s``, ``mean_fct_mptcp_s`` [s], ``lossy_tcp``,
        ``lossy_mptcp`` [-], ``headline`` (log MPTCP/TCP mean FCT) [-], ``bg_rate_tcp_bps`` [bit/s],
        per 1000 data segments of the TCP-background run ``<counter>_per_1000`` for the mechanism
        counters, ``load_avg_1m`` (median of the seed's two runs on that testbed) and ``cpu_steal_s``
        (summed) [s].
    """
    short = flows[(flows["kind"] == "short") & flows["fct_s"].notna() & flows["seed"].isin(seeds)]
    short = short.assign(lossy=pd.to_numeric(short["retransmitted_packets"], errors="coerce").fillna(0) > 0)
    g = short.groupby(["seed", "engine", "protocol"])
    wide = pd.concat({"mean_fct": g["fct_s"].mean(), "lossy": g["lossy"].mean()}, axis=1).unstack("protocol")
    wide.columns = [f"{a}_{b}" + ("_s" if a == "mean_fct" else "") for a, b in wide.columns]
    wide["headline"] = np.log(wide["mean_fct_mptcp_s"] / wide["mean_fct_tcp_s"])
    r = runs[runs["seed"].isin(seeds)].set_index(["seed", "engine", "protocol"])
    tcp = r.xs("tcp", level="protocol")
    wide["bg_rate_tcp_bps"] = tcp["bg_rate_bps"]
    for label, cols in _MECHANISM.items():
        wide[f"{label}_per_1000"] = tcp[list(cols)].sum(axis=1) / tcp[tcp_ext_column("TCPOrigDataSent")] * 1000
    by = runs[runs["seed"].isin(seeds)].groupby(["seed", "engine"])
    wide["load_avg_1m"] = by["load_avg_1m"].median()
    wide["cpu_steal_s"] = by["cpu_steal_s"].sum(min_count=1)
    return wide.sort_index()


def _paired(per: pd.DataFrame, col: str, log: bool = False) -> pd.Series:
    """steered - unsteered (or log steered/unsteered) of ``col`` per seed."""
    u = per.xs(_UNSTEERED, level="engine")[col]
    s = per.xs(_STEERED, level="engine")[col]
    return (np.log(s / u) if log else s - u).dropna()


@dataclass(frozen=True, eq=False)
class Abab:
    """The campaign's two tables, and the per-seed table, the verdicts, the mechanism and the paragraph of them.

    Only seeds with all four runs (two testbeds x two backgrounds) count.

    Parameters
    ----------
    flows, runs : pandas.DataFrame
        ``p1_abab_flows`` and ``p1_abab_runs`` (:mod:`tcpmodels.datasets.p1_abab`): :func:`load_abab`, or
        :func:`tcpmodels.experiments.p1.abab.abab_frames` of records.
    session : {"loaded", "idle"}
        Which session the tables are (:data:`SESSION_SCHEMAS`); it names the paragraph.
    family : str
        The family of :meth:`verdicts` (Holm's adjustment runs within it).
    """

    flows: pd.DataFrame
    runs: pd.DataFrame
    session: str = "loaded"
    family: str = ABAB_FAMILY

    @cached_property
    def per_seed(self) -> pd.DataFrame:
        """:func:`per_seed_table` of the seeds with all four runs."""
        return per_seed_table(self.flows, self.runs, complete_seeds(self.runs))

    def verdicts(self) -> pd.DataFrame:
        """The claims of :data:`ABAB_SPECS` judged on the seeds with all four runs.

        Returns
        -------
        pandas.DataFrame
            :func:`tcpmodels.stats.claims_table` rows (family :attr:`family`) with a ``key`` column
            (the key of :data:`ABAB_SPECS`).
        """
        per = self.per_seed
        data = {"headline": _paired(per, "headline"), "tcp arm": _paired(per, "mean_fct_tcp_s", log=True),
                "mptcp arm": _paired(per, "mean_fct_mptcp_s", log=True), "lossy share": _paired(per, "lossy_tcp"),
                "reordering": _paired(per, "reordering_per_1000"),
                "background rate": _paired(per, "bg_rate_tcp_bps", log=True)}
        rows = {k: equivalence(ABAB_SPECS[k], v) if k == "mptcp arm" else difference(ABAB_SPECS[k], v)
                for k, v in data.items()}
        return keyed_claims_table(rows, family=self.family)

    def mechanism(self) -> pd.DataFrame:
        """What changes on the wire, per testbed: the counters per 1000 data segments, the rates, the load.

        Returns
        -------
        pandas.DataFrame
            One row per quantity: ``unsteered`` and ``steered`` (means over the seeds), ``difference``
            (steered - unsteered, mean of the per-seed differences), its 95 % t interval ``ci_low`` /
            ``ci_high`` and ``seeds``. FCTs [ms], rates [Mbit/s], counters [per 1000 data segments], loads
            [runnable tasks], steal [s].
        """
        from scipy import stats as sps

        per = self.per_seed
        cols = {"mean FCT beside TCP [ms]": ("mean_fct_tcp_s", 1e3),
                "mean FCT beside MPTCP [ms]": ("mean_fct_mptcp_s", 1e3),
                "headline log(MPTCP/TCP) [-]": ("headline", 1.0), "share with loss beside TCP [-]": ("lossy_tcp", 1.0),
                "TCP background rate [Mbit/s]": ("bg_rate_tcp_bps", 1e-6),
                **{f"{k} per 1000 segments (TCP bg)": (f"{k}_per_1000", 1.0) for k in _MECHANISM},
                "1-min load at the runs' starts": ("load_avg_1m", 1.0),
                "CPU steal over the two runs [s]": ("cpu_steal_s", 1.0)}
        rows = []
        for label, (col, scale) in cols.items():
            d = _paired(per, col) * scale
            u = per.xs(_UNSTEERED, level="engine")[col] * scale
            s = per.xs(_STEERED, level="engine")[col] * scale
            n = len(d)
            lo, hi = (sps.t.interval(0.95, n - 1, loc=d.mean(), scale=d.std(ddof=1) / math.sqrt(n))
                      if n > 1 and d.std(ddof=1) > 0 else (math.nan, math.nan))
            rows.append({"quantity": label, "unsteered": float(u.mean()), "steered": float(s.mean()),
                         "difference": float(d.mean()) if n else math.nan, "ci_low": float(lo), "ci_high": float(hi),
                         "seeds": n})
        return pd.DataFrame(rows)

    def paragraph(self) -> str:
        """The notebook's paragraph: the reading, then the counters and rates that move with it (Markdown).

        Returns
        -------
        str
            Markdown.
        """
        verdicts = self.verdicts()
        mech = self.mechanism().set_index("quantity")
        v = verdicts.set_index("key")

        def q(label: str, fmt: str = ".2f") -> str:
            r = mech.loc[label]
            return (f"{r.unsteered:{fmt}} -> {r.steered:{fmt}} "
                    f"(difference {effect_ci_text(r.difference, r.ci_low, r.ci_high, '+' + fmt)})")

        n = int(mech["seeds"].max())
        first, last = self.runs["started_utc"].min(), self.runs["started_utc"].max()
        host = {"loaded": "the first session, other jobs on the host", "idle": "the second session, nothing else "
                "on the host"}.get(self.session, self.session)
        return (f"**Steered against unsteered in one session** ({host}; {n} seeds, each on both testbeds, the order "
                f"alternating; runs {first[:16]} to {last[:16]} UTC). {abab_reading(verdicts)} On the wire, unsteered "
                f"-> steered, per 1000 data segments of the TCP-background runs: reordering "
                f"{q('reordering per 1000 segments (TCP bg)', '.3f')} ({v.loc['reordering', 'verdict']}), DSACKs "
                f"{q('DSACKs received per 1000 segments (TCP bg)')}, RTOs {q('RTOs per 1000 segments (TCP bg)', '.3f')}, "
                f"fast retransmissions {q('fast retransmissions per 1000 segments (TCP bg)')}; the TCP background's "
                f"rate {q('TCP background rate [Mbit/s]', '.1f')} Mbit/s ({v.loc['background rate', 'verdict']}); the "
                f"share of 70 KB flows with loss beside it {q('share with loss beside TCP [-]', '.3f')} "
                f"({v.loc['lossy share', 'verdict']}). Host: 1-min load "
                f"{q('1-min load at the runs' + chr(39) + ' starts')}, CPU steal {q('CPU steal over the two runs [s]')} s.")


def abab_reading(verdicts: pd.DataFrame) -> str:
    """The rule of the module docstring applied to the verdicts: which factor the campaign isolates.

    Parameters
    ----------
    verdicts : pandas.DataFrame
        :meth:`Abab.verdicts`.

    Returns
    -------
    str
        One sentence (Markdown) naming the factor, or saying what is excluded and what remains.
    """
    v = verdicts.set_index("key")
    h = v.loc["headline"]
    ci = f"{effect_ci_text(h.effect, h.ci_low, h.ci_high)} over {h.n_runs} seeds"
    if h.verdict == SUPPORTED:
        out = (f"**Steering is the factor**: in one session the steered testbed lowers the uncoupled headline by "
               f"at least 10 % ({ci}, supported), so the shipped difference between the testbeds is not the day.")
    elif h.verdict in (CONTRADICTED, SMALLER_THAN_CLAIMED):
        out = (f"**Steering is excluded** as the cause of the shipped difference: in one session it moves the uncoupled "
               f"headline by less than 10 % ({ci}, {h.verdict}); what remains is what else differed between the two "
               "sittings of the shipped runs (the day, the host's load).")
    else:
        need = runs_needed_text(h.runs_needed)
        out = (f"**Not decided**: steering moves the uncoupled headline by {ci} (inconclusive; {need} seeds would "
               "decide it at this spread); neither steering nor the day is excluded.")
    arms = v.loc[["tcp arm", "mptcp arm"]]
    out += " " + "; ".join(f"{r.part[0].upper() + r.part[1:] if i == 0 else r.part}: "
                           f"{effect_ci_text(r.effect, r.ci_low, r.ci_high)} ({r.verdict})"
                           for i, r in enumerate(arms.itertuples())) + "."
    return out
