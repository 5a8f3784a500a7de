"""The same seeds in two sittings: how far the sitting (day, host load) moves P1's kernel results (issue 57, item 1).

The alternated campaign (:mod:`tcpmodels.papers.p1_datacenter_fct.abab`) runs seeds 0-11 of Section 4
on both kernel testbeds in one session; the shipped dataset holds runs of the same seeds, schedules
and settings on each testbed from its own, earlier sitting. Per testbed and seed, this session's value
minus the shipped one is the *sitting effect*: everything that differs between the two sittings (the
day, the host's load, the code between the commits) and nothing that differs between the testbeds.

This comparison was **not stated before the campaign ran** (its claims are ``ABAB_SPECS``): it is
an estimate with its 95 % t interval over seeds, not a verdict, and the notebook says so. The same
pairing between the campaign's two sessions (the first on a loaded host, the second on an idle one)
estimates the load (:func:`load_section`; stated before the second session's results were read, but
an estimate too).
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd

from tcpmodels._docstrings import SharedEntries
from tcpmodels.datasets.p1_abab import TESTBEDS, complete_seeds
from tcpmodels.papers.p1_datacenter_fct.abab import ABAB_LOADED_FAMILY, Abab, abab_reading, load_abab
from tcpmodels.papers.p1_datacenter_fct.data import with_cc
from tcpmodels.papers.phrases import effect_ci_text
from tcpmodels.stats import CONTRADICTED, SMALLER_THAN_CLAIMED, SUPPORTED
from tcpmodels.stats.spec import ttest_1samp

__all__ = ["TESTBED_NAMES", "shipped_per_seed", "paired_sessions", "sitting_effect", "sitting_sentence",
           "load_section", "two_sessions_reading", "session_section"]

#: Parameters documented once for the docstrings of this module that share them.
_PARAMETERS = SharedEntries("""
    flows, runs : pandas.DataFrame
        The shipped P1 dataset's flows and runs.
""")

#: engine label -> the testbed's name in prose
TESTBED_NAMES = dict(zip(TESTBEDS, ("unsteered", "steered")))


def shipped_per_seed(flows: pd.DataFrame, runs: pd.DataFrame, seeds: list[int]) -> pd.DataFrame:
    """Per seed and kernel testbed, from the shipped P1 dataset: what :attr:`Abab.per_seed` holds.

    Section 4 (``s4``) runs with the TCP and the uncoupled MPTCP background only, as the alternated
    campaign runs them.

    Parameters
    ----------
    flows, runs : pandas.DataFrame
        :attr:`~tcpmodels.papers.p1_datacenter_fct.P1Dataset.flows` and ``runs``.
    seeds : list of int
        The seeds to keep.

    Returns
    -------
    pandas.DataFrame
        Index (seed, engine); ``mean_fct_tcp_s``, ``mean_fct_mptcp_s`` [s], ``headline`` (log MPTCP/TCP
        mean FCT of the 70 KB flows) [-], ``load_avg_1m`` (median at the runs' starts) [-].
    """
    f = with_cc(flows)
    f = f[(f["experiment"] == "s4") & (f["kind"] == "short") & f["fct_s"].notna() & f["engine"].isin(TESTBED_NAMES)
          & f["seed"].isin(seeds) & ((f["protocol"] == "tcp") | (f["cc"] == "uncoupled"))]
    m = f.groupby(["seed", "engine", "protocol"])["fct_s"].mean().unstack("protocol").reindex(columns=["tcp", "mptcp"])
    out = pd.DataFrame({"mean_fct_tcp_s": m["tcp"], "mean_fct_mptcp_s": m["mptcp"]})
    out["headline"] = np.log(out["mean_fct_mptcp_s"] / out["mean_fct_tcp_s"])
    r = runs[(runs["experiment"] == "s4") & runs["engine"].isin(TESTBED_NAMES) & runs["seed"].isin(seeds)]
    out["load_avg_1m"] = r.groupby(["seed", "engine"])["load_avg_1m"].median()
    return out.dropna(subset=["headline"]).sort_index()


def paired_sessions(first: pd.DataFrame, second: pd.DataFrame) -> pd.DataFrame:
    """Second minus first, per testbed and quantity, paired by seed: two sittings of the same seeds.

    Parameters
    ----------
    first, second : pandas.DataFrame
        Per-seed tables indexed (seed, engine) with ``headline``, ``mean_fct_tcp_s``, ``mean_fct_mptcp_s`` and
        ``load_avg_1m`` (:attr:`Abab.per_seed` or :func:`shipped_per_seed`).

    Returns
    -------
    pandas.DataFrame
        One row per (testbed, quantity) with at least two paired seeds: ``first``, ``second`` (means over
        the paired seeds), ``difference``, ``ci_low``, ``ci_high`` (95 % t interval of the per-seed
        difference) and ``seeds``. Quantities: the headline [-], the mean 70 KB FCT beside each background
        [ms] and the 1-min load at the runs' starts [-].
    """
    quantities = {"headline log(MPTCP/TCP) [-]": ("headline", 1.0),
                  "mean FCT beside TCP [ms]": ("mean_fct_tcp_s", 1e3),
                  "mean FCT beside MPTCP [ms]": ("mean_fct_mptcp_s", 1e3),
                  "1-min load at the runs' starts": ("load_avg_1m", 1.0)}
    rows = []
    for engine, testbed in TESTBED_NAMES.items():
        if engine not in first.index.get_level_values("engine") or engine not in second.index.get_level_values("engine"):
            continue
        for label, (col, scale) in quantities.items():
            a = first.xs(engine, level="engine")[col] * scale
            b = second.xs(engine, level="engine")[col] * scale
            both = pd.concat({"a": a, "b": b}, axis=1).dropna()
            if len(both) < 2:
                continue
            d = (both["b"] - both["a"]).to_numpy(dtype=float)
            _, _, _, lo, hi = ttest_1samp(d, 0.0, 0.95)
            rows.append({"testbed": testbed, "quantity": label, "first": float(both["a"].mean()),
                         "second": float(both["b"].mean()), "difference": float(d.mean()), "ci_low": lo,
                         "ci_high": hi, "seeds": len(d)})
    return pd.DataFrame(rows, columns=["testbed", "quantity", "first", "second", "difference", "ci_low", "ci_high",
                                       "seeds"])


@_PARAMETERS.fill
def sitting_effect(abab: Abab, flows: pd.DataFrame, runs: pd.DataFrame) -> pd.DataFrame:
    """This session minus the shipped sitting, per testbed, paired by seed.

    Parameters
    ----------
    abab : Abab
        A session of the alternated campaign (:func:`~tcpmodels.papers.p1_datacenter_fct.abab.load_abab`).
    {flows, runs}

    Returns
    -------
    pandas.DataFrame
        :func:`paired_sessions` with ``first`` named ``shipped`` and ``second`` named ``session``.
    """
    session = abab.per_seed
    seeds = sorted({int(s) for s in session.index.get_level_values("seed")})
    return paired_sessions(shipped_per_seed(flows, runs, seeds), session).rename(
        columns={"first": "shipped", "second": "session"})


def _changes(effect: pd.DataFrame, first: str, second: str) -> list[str]:
    """Per testbed of a :func:`paired_sessions` table: headline, mean FCTs and load, ``first -> second (difference [CI])``."""
    e = effect.set_index(["testbed", "quantity"])

    def q(testbed: str, label: str, fmt: str) -> str:
        r = e.loc[(testbed, label)]
        return f"{r[first]:{fmt}} -> {r[second]:{fmt}} ({effect_ci_text(r.difference, r.ci_low, r.ci_high, '+' + fmt)})"

    head, load = "headline log(MPTCP/TCP) [-]", "1-min load at the runs' starts"
    return [f"{t} ({int(e.loc[(t, head), 'seeds'])} seeds): headline {q(t, head, '.3f')}, mean FCT beside TCP "
            f"{q(t, 'mean FCT beside TCP [ms]', '.1f')} ms, beside MPTCP {q(t, 'mean FCT beside MPTCP [ms]', '.1f')} "
            f"ms, 1-min load {q(t, load, '.1f')}" for t in TESTBED_NAMES.values() if (t, head) in e.index]


def sitting_sentence(effect: pd.DataFrame) -> str:
    """One Markdown paragraph on the sitting effect (:func:`sitting_effect`), marked as not stated beforehand.

    Parameters
    ----------
    effect : pandas.DataFrame
        :func:`sitting_effect`.

    Returns
    -------
    str
        Markdown; a sentence saying there is nothing to compare when ``effect`` is empty.
    """
    if effect.empty:
        return "**The sitting**: no seed of the alternated campaign has shipped runs to compare with."
    return ("**The sitting** (not stated before the run: an estimate, not a verdict). The same seeds, shipped sitting "
            "-> this session, per-seed difference with its 95 % interval: "
            + "; ".join(_changes(effect, "shipped", "session")) + ". Where an interval excludes 0, the sitting (day, "
            "load, code between the commits) moved that quantity on one testbed with the testbed held fixed.")


def load_section(loaded: Abab, idle: Abab) -> str:
    """The load's estimate (Markdown): the same seed on the same testbed, first session (loaded host) minus second (idle).

    Stated before the second session's results were read (:mod:`~tcpmodels.papers.p1_datacenter_fct.abab`,
    "Two sessions"), but an estimate, not a verdict: the load was not assigned at random and the sessions
    differ in hour as well.

    Parameters
    ----------
    loaded, idle : Abab
        The first and the second session.

    Returns
    -------
    str
        Markdown; a sentence saying there is nothing to compare when no seed is complete in both.
    """
    e = paired_sessions(idle.per_seed, loaded.per_seed)
    if e.empty:
        return "**The load**: no seed is complete in both sessions."
    return ("**The load** (an estimate, not a verdict). The same seeds on the same testbed, idle session -> loaded "
            "session, per-seed difference with its 95 % interval: " + "; ".join(_changes(e, "first", "second"))
            + ". Where an interval excludes 0, the loaded sitting (its load, its hour) moved that quantity with the "
            "testbed held fixed.")


def two_sessions_reading(loaded: Abab, idle: Abab) -> str:
    """What the two sessions isolate, in one paragraph (Markdown): steering (judged), the load (estimated), the spread.

    Steering is read from the second session's ``headline`` verdict (the plan's test); the load from
    :func:`paired_sessions` of the two sessions' headlines per testbed (first minus second session, an
    estimate: its interval excluding 0 says the load moved the headline with the testbed held fixed); what
    keeps an undecided steering verdict open, from the per-seed spread of the headline on each testbed in
    the second session.

    Parameters
    ----------
    loaded, idle : Abab
        The first session (other jobs on the host) and the second (nothing else on it).

    Returns
    -------
    str
        Markdown.
    """
    h = idle.verdicts().set_index("key").loc["headline"]
    ci = effect_ci_text(h.effect, h.ci_low, h.ci_high)
    steering = {SUPPORTED: f"steering is shown to lower the uncoupled headline ({ci}, supported)",
                CONTRADICTED: f"steering is excluded as the cause ({ci}, contradicted)",
                SMALLER_THAN_CLAIMED: f"steering is excluded as the cause ({ci}, smaller than claimed)"}.get(
        h.verdict, f"steering is neither shown nor excluded ({ci}, {h.verdict})")
    e = paired_sessions(idle.per_seed, loaded.per_seed)
    head = e[e["quantity"] == "headline log(MPTCP/TCP) [-]"].set_index("testbed")
    load = e[e["quantity"] == "1-min load at the runs' starts"].set_index("testbed")
    moved, not_moved = [], []
    for testbed, r in head.iterrows():
        text = (f"{testbed} {effect_ci_text(r.difference, r.ci_low, r.ci_high)} for a 1-min load "
                f"{load.loc[testbed, 'first']:.1f} -> {load.loc[testbed, 'second']:.1f}")
        (moved if r.ci_low > 0 or r.ci_high < 0 else not_moved).append(text)
    if moved:
        load_text = ("the host's load moved the headline with the testbed held fixed: " + "; ".join(moved)
                     + (f" (not shown on: {'; '.join(not_moved)})" if not_moved else ""))
    else:
        load_text = "the load was not shown to move the headline on either testbed (" + "; ".join(not_moved) + ")"
    sd = idle.per_seed.groupby(level="engine")["headline"].std()
    spread = ", ".join(f"{TESTBED_NAMES[k]} {v:.3f}" for k, v in sd.items() if k in TESTBED_NAMES)
    return (f"**What the two sessions isolate.** Within one session, {steering}; across the two sessions (an "
            f"estimate, not a verdict), {load_text}. What keeps steering open is the spread of the headline from seed "
            f"to seed in the second session (sd {spread}).")


@_PARAMETERS.fill
def session_section(flows: pd.DataFrame, runs: pd.DataFrame, data_dir: str | Path = "data") -> str:
    """The notebook's section on the alternated campaign: the stated reading of each session, the load, the sitting.

    With the second session (idle host) shipped and at least two complete seeds: its paragraph (the plan's
    test, :data:`~tcpmodels.papers.p1_datacenter_fct.abab.ABAB_FAMILY`), the first session's reading beside
    it (:data:`~tcpmodels.papers.p1_datacenter_fct.abab.ABAB_LOADED_FAMILY`), the load's estimate
    (:func:`load_section`) and the sitting against the shipped runs (:func:`sitting_sentence`). Without it:
    the first session's paragraph and its sitting, as before the second session.

    Parameters
    ----------
    {flows, runs}
    data_dir : str or Path
        The ``data`` folder holding ``datasets/p1_abab_*.parquet`` (and ``p1_abab_idle_*``).

    Returns
    -------
    str
        Markdown, or a sentence saying why there is none (no dataset; fewer than two seeds with all four runs).
    """
    loaded, idle = load_abab(data_dir, "loaded"), load_abab(data_dir, "idle")
    if idle is not None and len(complete_seeds(idle.runs)) >= 2:
        out = idle.paragraph() + "\n\n" + sitting_sentence(sitting_effect(idle, flows, runs))
        if loaded is not None and len(complete_seeds(loaded.runs)) >= 2:
            loaded = replace(loaded, family=ABAB_LOADED_FAMILY)
            out += ("\n\n**The first session** (other jobs on the host; shown beside the second, not pooled): "
                    + abab_reading(loaded.verdicts()) + "\n\n" + load_section(loaded, idle) + "\n\n"
                    + two_sessions_reading(loaded, idle))
        return out
    if loaded is None:
        return ("**Steered against unsteered in one session**: the alternated campaign "
                "(`python -m tcpmodels.experiments.p1.abab`) has no shipped dataset.")
    complete = len(complete_seeds(loaded.runs))
    if complete < 2:
        return (f"**Steered against unsteered in one session**: {complete} seed(s) with all four runs; at least two "
                "are needed for an interval.")
    return loaded.paragraph() + "\n\n" + sitting_sentence(sitting_effect(loaded, flows, runs))
