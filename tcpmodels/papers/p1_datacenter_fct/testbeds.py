"""P1 on two kernel testbeds: did the unsteered testbed's reordering move the kernel results?

Every shipped kernel run before 2026-11-29 ran on the testbed without RPS steering (engine
``kernel``), where 0.4-1.1 of every 1000 data segments of a Section 4 run arrived out of order
(docs/CAMPAIGNS.md, P1). The same runs repeated on the steered testbed (engine
``kernel_steered``, ``python -m tcpmodels.experiments.p1 run --keep-flow-order``) have no
reordering and the same schedule, so a steered run and the unsteered run of its seed, experiment,
background and congestion control form a pair. The FCTs follow the host's load, so with the
dataset's ``runs`` a seed is used only when both testbeds ran it on an otherwise idle host
(:func:`busy_seeds`: the unsteered seeds 4-7 ran beside four other campaigns). Two views of the pairs:

* :func:`testbed_effect`: per pair, the log ratio steered / unsteered of the per-run mean FCT
  (Section 4's 70 KB flows also their 95th percentile, and the share of them with loss in points);
  judged by TOST over the pairs with the claims' own margins (10 % of FCT,
  :data:`~tcpmodels.papers.p1_datacenter_fct.claims.REL_EFFECT`; 5 points of lossy share,
  :data:`~tcpmodels.papers.p1_datacenter_fct.claims.LOSS_SHARE_EFFECT`). "supported" reads: the
  reordering moved this quantity by less than the margin.
* :func:`verdicts_by_testbed`: the paper's claims (:func:`~tcpmodels.papers.p1_datacenter_fct.claims`)
  judged twice on the same seeds, once on each testbed, side by side.

Since the steered testbed has as many seeds as the unsteered one (17), the main claims table
(:func:`~tcpmodels.papers.p1_datacenter_fct.claims`) judges both testbeds, each on all its seeds;
:func:`verdicts_by_testbed` judges them on the same idle-host seeds only.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from tcpmodels._docstrings import SharedEntries
from tcpmodels.papers.p1_datacenter_fct.claims import (
    LOSS_SHARE_EFFECT,
    REL_EFFECT,
    claims,
    claims_with_cc,
    lossy,
    per_seed,
)
from tcpmodels.papers.p1_datacenter_fct.data import P1Dataset, background_label, with_cc
from tcpmodels.stats import ClaimSpec, claims_table, equivalence

__all__ = ["UNSTEERED", "STEERED", "RUN_KEY", "BUSY_MEDIAN_LOAD", "busy_seeds", "testbed_pairs", "testbed_effect",
           "verdicts_by_testbed"]

#: Parameters documented once for the docstrings of this module that share them.
_PARAMETERS = SharedEntries("""
    max_median_load : float
        Of :func:`busy_seeds`. [-]
""")

#: the ``engine`` of the kernel runs on the testbed without RPS steering
UNSTEERED = "kernel"
#: the ``engine`` of the kernel runs on the steered testbed (no reordering)
STEERED = "kernel_steered"
#: what a run is, apart from its testbed: a steered and an unsteered run with one key share their schedule
RUN_KEY = ("experiment", "protocol", "cc", "seed")
#: a seed whose runs on a testbed started at a median 1-min load average above this shared the host with other
#: work (twice the 2 CPUs of the host that ran the campaign): every other seed's median is 0.7-2.6 and the busy
#: ones' (seeds 4-7 unsteered, run beside four other campaigns) 7.3-8.0. [-]
BUSY_MEDIAN_LOAD = 4.0
#: the flows each experiment measures (experiment -> kind)
_MEASURED = {"s4": "short", "s5_query_nobg": "query", "s5_query_bg": "query", "s5_message_bg": "message"}
_SAYS = ("not a claim of the paper: our check that the unsteered testbed's reordering (0.4-1.1 of 1000 segments "
         "in a Section 4 run) left the kernel's results as they are")
_REL_SOURCE = "the claims' 10 % (below the paper's smallest Table 2 difference)"


def busy_seeds(runs: pd.DataFrame, max_median_load: float = BUSY_MEDIAN_LOAD) -> dict[str, list[int]]:
    """The seeds whose runs on a kernel testbed shared the host with other work.

    A seed's runs on one testbed (its four experiments and backgrounds, run one after another) count as
    busy when the median 1-min load average at their starts exceeds ``max_median_load``.

    Parameters
    ----------
    runs : pandas.DataFrame
        :attr:`~tcpmodels.papers.p1_datacenter_fct.P1Dataset.runs` (``engine``, ``seed``, ``load_avg_1m``).
    max_median_load : float
        The bound (:data:`BUSY_MEDIAN_LOAD`). [-]

    Returns
    -------
    dict of str to list of int
        :data:`UNSTEERED` and :data:`STEERED` -> their busy seeds, sorted.
    """
    out = {}
    for eng in (UNSTEERED, STEERED):
        r = runs[runs["engine"] == eng] if len(runs) else runs
        med = r.groupby("seed")["load_avg_1m"].median() if len(r) else pd.Series(dtype=float)
        out[eng] = sorted(int(s) for s in med[med > max_median_load].index)
    return out


@_PARAMETERS.fill
def testbed_pairs(flows: pd.DataFrame, runs: pd.DataFrame | None = None, *,
                  max_median_load: float = BUSY_MEDIAN_LOAD) -> pd.DataFrame:
    """The runs measured on both kernel testbeds, on an otherwise idle host when ``runs`` is given.

    Parameters
    ----------
    flows : pandas.DataFrame
        :attr:`~tcpmodels.papers.p1_datacenter_fct.P1Dataset.flows` (``engine`` and :data:`RUN_KEY`).
    runs : pandas.DataFrame, optional
        :attr:`~tcpmodels.papers.p1_datacenter_fct.P1Dataset.runs`: the seeds busy on either testbed
        (:func:`busy_seeds`) are left out, since the FCTs follow the host's load.
    {max_median_load}

    Returns
    -------
    pandas.DataFrame
        One row per run key (:data:`RUN_KEY`) with runs of both :data:`UNSTEERED` and
        :data:`STEERED`, sorted; empty (with those columns) when there is none.
    """
    f = with_cc(flows)
    keys = {eng: f.loc[f["engine"] == eng, list(RUN_KEY)].drop_duplicates() for eng in (UNSTEERED, STEERED)}
    both = keys[UNSTEERED].merge(keys[STEERED], on=list(RUN_KEY))
    if runs is not None:
        busy = busy_seeds(runs, max_median_load)
        both = both[~both["seed"].isin(busy[UNSTEERED] + busy[STEERED])]
    return both.sort_values(list(RUN_KEY)).reset_index(drop=True)


def _paired(flows: pd.DataFrame, runs: pd.DataFrame | None, max_median_load: float) -> pd.DataFrame:
    """The flows of the paired runs only, both testbeds (column ``engine`` tells them apart)."""
    f = with_cc(flows)
    pairs = testbed_pairs(f, runs, max_median_load=max_median_load)
    f = f[f["engine"].isin((UNSTEERED, STEERED))]
    return f.merge(pairs, on=list(RUN_KEY))


def _left_out(runs: pd.DataFrame | None, max_median_load: float) -> str:
    if runs is None:
        return ""
    busy = busy_seeds(runs, max_median_load)
    seeds = sorted(set(busy[UNSTEERED] + busy[STEERED]))
    return (f"; seeds left out, their runs on a testbed at a median 1-min load above {max_median_load:g}: {seeds}"
            if seeds else "")


@_PARAMETERS.fill
def testbed_effect(flows: pd.DataFrame, runs: pd.DataFrame | None = None, *,
                   max_median_load: float = BUSY_MEDIAN_LOAD) -> pd.DataFrame:
    """The steered testbed against the unsteered one, per experiment, background and statistic, paired by seed.

    Parameters
    ----------
    flows : pandas.DataFrame
        :attr:`~tcpmodels.papers.p1_datacenter_fct.P1Dataset.flows` with runs of both testbeds.
    runs : pandas.DataFrame, optional
        :attr:`~tcpmodels.papers.p1_datacenter_fct.P1Dataset.runs`: leave out the busy seeds
        (:func:`testbed_pairs`).
    {max_median_load}

    Returns
    -------
    pandas.DataFrame
        A claims table (:data:`tcpmodels.stats.VERDICT_COLUMNS`), one row per experiment, background and
        statistic: the per-run mean FCT as ``log(steered / unsteered)`` (Section 4 also the 95th
        percentile, and the share of 70 KB flows with loss as steered minus unsteered), judged by
        :func:`tcpmodels.stats.equivalence`. Empty when no run was measured on both testbeds.
    """
    f = _paired(flows, runs, max_median_load)
    f = f[f["fct_s"].notna()]
    left_out = _left_out(runs, max_median_load)
    rows = []
    for experiment, kind in _MEASURED.items():
        g = f[(f["experiment"] == experiment) & (f["kind"] == kind)]
        for (protocol, cc), b in g.groupby(["protocol", "cc"], sort=False):
            label = background_label(protocol, cc, UNSTEERED)
            stats = ("mean", "p95", "lossy") if experiment == "s4" else ("mean",)
            for stat in stats:
                if stat == "lossy":
                    b = b.assign(lossy=lossy(b, UNSTEERED))
                per = pd.concat({eng: per_seed(e, "mean", "lossy") if stat == "lossy" else per_seed(e, stat)
                                 for eng, e in b.groupby("engine")}, axis=1).dropna()
                if STEERED not in per or UNSTEERED not in per:
                    continue
                if stat == "lossy":
                    change = per[STEERED] - per[UNSTEERED]
                    quantity, margin, source = ("share of 70 KB flows with loss, steered minus unsteered, per seed "
                                                "[-]"), LOSS_SHARE_EFFECT, "the claims' 5 points of lossy share"
                    shown = ", ".join(f"seed {s}: {v:+.3f}" for s, v in change.items())
                else:
                    pos = per[(per[STEERED] > 0) & (per[UNSTEERED] > 0)]
                    change = np.log(pos[STEERED] / pos[UNSTEERED])
                    what = {"mean": "mean", "p95": "95th percentile"}[stat]
                    quantity, margin, source = (f"log(steered / unsteered) of the per-run {what} FCT, per seed",
                                                REL_EFFECT, _REL_SOURCE)
                    shown = ", ".join(f"seed {s}: {np.expm1(v):+.0%}" for s, v in change.items())
                spec = ClaimSpec(claim=f"Testbed [{experiment}, {label}] steering leaves the {kind} flows' FCT as it was",
                                 part={"mean": "per-run mean FCT", "p95": "per-run 95th percentile FCT",
                                       "lossy": "share of flows with loss"}[stat],
                                 paper_says=_SAYS, quantity=quantity, smallest_effect=margin, effect_source=source)
                rows.append(equivalence(spec, change.to_numpy(), we_measured=shown,
                                        why="paired by seed: the two runs of a pair share their schedule"
                                            + left_out))
    return claims_table(rows, family="P1 kernel vs kernel_steered")


@_PARAMETERS.fill
def verdicts_by_testbed(dataset: P1Dataset, tables: dict[str, pd.DataFrame] | None = None, *,
                        seed: int = 0, max_median_load: float = BUSY_MEDIAN_LOAD) -> pd.DataFrame:
    """The paper's claims judged on each kernel testbed over the same seeds, side by side.

    Only the run keys measured on both testbeds on an otherwise idle host (:func:`testbed_pairs` with
    the dataset's ``runs``) are used, on each side, so the two verdicts of a row rest on the same runs' seeds.

    Parameters
    ----------
    dataset : P1Dataset
        The campaign's data (its ``flows`` are used when ``tables`` has none).
    tables : dict, optional
        :func:`~tcpmodels.papers.p1_datacenter_fct.tables` of the same dataset: its ``flows``
        selection (all seeds, or the lowest in quick mode) is the one judged, as by the claims.
    seed : int
        Seed of the claims' permutation and bootstrap draws.
    {max_median_load}

    Returns
    -------
    pandas.DataFrame
        One row per claim part (``claim_id``, ``cc``, ``part``): ``unsteered`` and ``steered`` (the
        verdicts), ``effect_unsteered``, ``effect_steered``, ``n_runs`` (of each side) and ``moved``
        (the verdicts differ). Empty when no run was measured on both testbeds.
    """
    runs = dataset.runs if "load_avg_1m" in dataset.runs else None
    f = _paired((tables or {}).get("flows", dataset.flows), runs, max_median_load)
    cols = ["claim_id", "cc", "part", "unsteered", "steered", "effect_unsteered", "effect_steered", "n_runs", "moved"]
    if f.empty:
        return pd.DataFrame(columns=cols)
    v = claims_with_cc(claims(dataset, {"flows": f}, seed=seed))  # each testbed is an engine of the claims
    sides = {name: v.loc[v["engine"] == eng, ["claim_id", "cc", "part", "verdict", "effect", "n_runs"]]
             for name, eng in (("unsteered", UNSTEERED), ("steered", STEERED))}
    both = sides["unsteered"].merge(sides["steered"], on=["claim_id", "cc", "part"],
                                    suffixes=("_unsteered", "_steered"))
    both = both.rename(columns={"verdict_unsteered": "unsteered", "verdict_steered": "steered"})
    both["n_runs"] = both["n_runs_unsteered"]
    both["moved"] = both["unsteered"] != both["steered"]
    return both[cols].reset_index(drop=True)
