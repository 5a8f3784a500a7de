"""P2's campaign where the throughput follows the RTTs: random loss on both paths (issue 57, item 4, second stage).

On the shipped setting the MPTCP data throughput hardly depends on the RTTs, so the Fraction-of-RPE parts of
C2.2-C2.4 are not testable there (a predictor that always says the mean already hits within 10 % for 96.7 %
of the RTT pairs). The spread pilot (:mod:`tcpmodels.experiments.p2.spread`) chose, by a rule fixed before it
ran, the per-path random loss at which the constant predictor hits at most 60 % of the pairs: 1e-3 (18.8 %
of 16 pairs, cv 0.57). This campaign measures P2's whole sample there, so that every claim can be judged in
that setting beside the shipped one:

* **Setting** (:data:`LOSSY_CONFIG`, the pilot's :data:`~tcpmodels.experiments.p2.spread.SPREAD_CONFIG`):
  two 100 Mbit/s paths with one-BDP buffers, ``tm_lia`` on every subflow, 16 MiB data transfers (the size
  the pilot chose its loss rate with), the shipped probe sizes, and the loss rate the pilot's provenance
  chose (:func:`loss_rate_of`), each direction of both paths, by the delay elements.
* **Plan** (:func:`lossy_plan`): P2's grid (RTTs 120-180 ms step 4 on each path, 256 pairs), the paper's two
  repetitions, run repetition by repetition in P2's seeded order: 512 samples, about 35-45 s each (the
  pilot's MPTCP data transfer took a median 9.2 s of wall time; the TCP data transfer runs at about half
  its rate), so about 2.5-3 h per repetition: the campaign spans sessions and resumes.
* **Claims** (:mod:`tcpmodels.papers.p2_mptcp_prediction.lossy`): P2's own claims (:func:`~tcpmodels.papers.
  p2_mptcp_prediction.claims`) on this dataset, unchanged, as their own Holm family ``P2 lossy``, beside the
  shipped setting's. Judged once a repetition is complete (the unit is the RTT pair, as in the shipped
  setting); what the parts say and the stopping rule are stated in ``docs/CAMPAIGNS.md`` (item 4).

Command line::

    python -m tcpmodels.experiments.p2.lossy run --records runs/p2/lossy.jsonl \\
        --pilot data/datasets/p2_spread_pilot.json
    python -m tcpmodels.experiments.p2.lossy dataset --records runs/p2/lossy.jsonl --out data
"""

from __future__ import annotations

import argparse
import json
from dataclasses import replace
from pathlib import Path

from tcpmodels.datasets.p2_lossy import CAMPAIGN
from tcpmodels.datasets.p2_lossy import SCHEMA as DATASET
from tcpmodels.experiments.campaign_dataset import CampaignCli, CampaignDataset, session_facts
from tcpmodels.experiments.p2.config import SAMPLE_KEY, P2Config
from tcpmodels.experiments.p2.spread import SPREAD_CONFIG

__all__ = ["LOSSY_CONFIG", "REPS", "loss_rate_of", "lossy_plan", "run_lossy", "build_lossy_dataset", "main"]

#: the paper's repetitions of every RTT pair
REPS = 2
#: the pilot's setting on P2's whole grid, the paper's repetitions
LOSSY_CONFIG = replace(SPREAD_CONFIG, reps=REPS)


def loss_rate_of(pilot_path: str | Path) -> float:
    """The loss rate the spread pilot chose (its provenance's ``choice``), refused when it left none testable.

    Parameters
    ----------
    pilot_path : str or Path
        ``p2_spread_pilot.json`` (the pilot's provenance).

    Returns
    -------
    float
        Random loss of each direction of both paths. [-]

    Raises
    ------
    ValueError
        If the pilot's rule found no loss rate that leaves room for the paper's gains (``testable`` false), or
        the file has no choice.
    """
    choice = json.loads(Path(pilot_path).read_text()).get("choice")
    if not choice or choice.get("chosen") is None:
        raise ValueError(f"{pilot_path}: no 'choice' with a chosen loss rate (write it with "
                         "`python -m tcpmodels.experiments.p2.spread choose`)")
    if not choice.get("testable"):
        raise ValueError(f"{pilot_path}: the pilot's rule found no testable loss rate ({choice.get('rule')}); "
                         "the Fraction-of-RPE parts stay not testable and this campaign has no setting")
    return float(choice["chosen"])


def lossy_plan(loss_rate: float, config: P2Config = LOSSY_CONFIG) -> list[dict]:
    """P2's samples (:func:`~tcpmodels.experiments.p2.plans.sample_plan`: whole repetitions first, seeded
    order) under this campaign's name, each with the loss rate it runs at.

    Parameters
    ----------
    loss_rate : float
        Random loss of each direction of both paths (:func:`loss_rate_of`). [-]
    config : P2Config
        The grid, repetitions and seed.

    Returns
    -------
    list of dict
        As :func:`~tcpmodels.experiments.p2.plans.sample_plan`, ``campaign`` ``"p2_lossy"``, and ``loss_rate``.
    """
    from tcpmodels.experiments.p2.plans import sample_plan

    return [s | {"campaign": CAMPAIGN, "loss_rate": float(loss_rate)} for s in sample_plan(config)]


def run_lossy(records_path: str | Path, pilot_path: str | Path, *, reps: int = REPS, limit: int | None = None,
              progress: bool = True, lock_timeout_s: float = 7200.0, stop_at_utc: str | None = None) -> int:
    """Run (or resume) the campaign at the pilot's loss rate; return the samples measured by this call.

    Parameters
    ----------
    records_path : str or Path
        JSONL records (P2's sample key).
    pilot_path : str or Path
        The pilot's provenance (:func:`loss_rate_of`).
    reps : int
        Repetitions.
    limit : int, optional
        Stop after this many new samples.
    progress : bool
        tqdm bar.
    lock_timeout_s : float
        Longest wait for the host lock per sample. [s]
    stop_at_utc : str, optional
        No sample starts after this UTC time (a session's stop by the clock, at a sample boundary).

    Returns
    -------
    int
        Samples measured.
    """
    from tcpmodels.experiments.p2.kernel import run_campaign

    loss = loss_rate_of(pilot_path)
    config = replace(LOSSY_CONFIG, reps=reps)
    return run_campaign(records_path, config, plan=lossy_plan(loss, config), limit=limit, progress=progress,
                        lock_timeout_s=lock_timeout_s, loss_rate=loss, desc="p2 lossy", stop_at_utc=stop_at_utc)


def _lossy_tables(recs: list[dict]) -> tuple[dict, dict]:
    """P2's samples table of the records; the provenance's facts: loss rate, config, samples against the plan.

    Raises
    ------
    ValueError
        If the records were measured at more than one loss rate.
    """
    from tcpmodels.experiments.p2.dataset import conditions_summary, samples_frame

    losses = sorted({r["loss_rate"] for r in recs})
    if len(losses) != 1:
        raise ValueError(f"the records mix loss rates {losses}; one dataset holds one setting")
    plan = lossy_plan(losses[0])
    samples = samples_frame(recs)
    per_rep = len(plan) // REPS
    return {"samples": samples}, {
        "loss_rate": losses[0], "config": recs[0]["config"], "samples": len(recs), "plan_samples": len(plan),
        "complete_reps": sorted(int(rep) for rep, g in samples.groupby("rep") if len(g) == per_rep),
        **session_facts(recs), "conditions": conditions_summary(samples)}


#: records -> ``p2_lossy_samples.parquet`` (P2's samples table) and ``p2_lossy_provenance.json`` through the
#: dataset's schema: ``build_lossy_dataset(records_path, data_dir, *, allow_dirty=False) -> provenance`` (the
#: provenance: loss rate, config, samples against the plan, complete repetitions, times, loads, P2's regime
#: conditions; :class:`~tcpmodels.experiments.campaign_dataset.CampaignDataset`)
build_lossy_dataset = CampaignDataset(DATASET, SAMPLE_KEY, _lossy_tables, "p2 lossy")


def _options(run: argparse.ArgumentParser, dataset: argparse.ArgumentParser) -> None:
    """``run`` takes the pilot's provenance (the dataset reads the loss rate from the records)."""
    run.add_argument("--pilot", required=True, help="p2_spread_pilot.json (the loss rate the pilot chose)")
    run.add_argument("--stop-at", help="UTC time (ISO 8601, e.g. 2026-12-07T11:35) after which no sample starts")


def _run(a: argparse.Namespace) -> dict:
    """Run or resume at the pilot's loss rate."""
    return {"measured": run_lossy(a.records, a.pilot, reps=a.reps or REPS, limit=a.limit,
                                  progress=not a.no_progress, stop_at_utc=a.stop_at)}


def _dataset(a: argparse.Namespace) -> dict:
    """Build the dataset; its samples and complete repetitions."""
    prov = build_lossy_dataset(a.records, a.out, allow_dirty=a.allow_dirty)
    return {"samples": prov["samples"], "complete_reps": prov["complete_reps"]}


#: ``python -m tcpmodels.experiments.p2.lossy run|dataset ...``: ``main(argv=None) -> exit status``
main = CampaignCli("p2.lossy", __doc__, "p2 lossy", run=_run, dataset=_dataset,
                  run_help="run or resume P2's samples at the pilot's loss rate", reps=True, options=_options)


if __name__ == "__main__":
    raise SystemExit(main())
