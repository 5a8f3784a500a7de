"""A campaign of P1 testbed variants alternated per seed, whole: plan, run, dataset and command line.

:mod:`~tcpmodels.experiments.p1.swaps`, :mod:`~tcpmodels.experiments.p1.placement` and
:mod:`~tcpmodels.experiments.p1.delack` differ only in their arms, backgrounds and what their provenance says of
them; an :class:`ArmsCampaign` gives each of them the rest once: the plan
(:func:`~tcpmodels.experiments.p1.arms.rotated_plan`), the run (:func:`~tcpmodels.experiments.p1.arms.run_arms`
on its plan), the dataset (the alternated campaign's tables,
:func:`~tcpmodels.experiments.p1.abab.arms_tables`, through its schema) and the ``run``/``dataset`` command line.
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

from tcpmodels.datasets import DatasetSchema
from tcpmodels.experiments.campaign_dataset import CampaignCli, CampaignDataset
from tcpmodels.experiments.p1.abab import SEEDS, arms_tables
from tcpmodels.experiments.p1.arms import TestbedArm, rotated_plan, run_arms
from tcpmodels.experiments.p1.config import DEFAULT_CONFIG, P1Config

__all__ = ["ArmsCampaign"]


@dataclass(frozen=True)
class ArmsCampaign:
    """One campaign of :func:`~tcpmodels.experiments.p1.arms.run_arms`: what it runs and what it writes.

    Parameters
    ----------
    what : str
        The campaign as the progress bar, the host lock and messages name it (``p1 placement``).
    module : str
        Its module below ``tcpmodels.experiments`` (``p1.placement``), for the command line.
    doc : str
        Its module's docstring (the ``--help`` text).
    campaign : str
        Its runs' ``campaign`` label.
    arms : mapping of str to TestbedArm
        What each arm sets, in the order the first seed runs them (a run names its arm in ``engine``).
    backgrounds : tuple of (str, str)
        ``(protocol, cc)`` of each background run on an arm, in order.
    schema : DatasetSchema
        Its dataset.
    key : tuple of str
        What identifies a run.
    runs_per_seed : int
        The runs of a complete seed.
    plan_facts : dict
        What the provenance says of the plan besides its seeds and size (the arms' settings).
    run_help : str
        One line for the run command.
    facts : dict
        What the provenance says of the campaign besides the plan, right after it (the arms' sysctls).
    captures : bool
        Whether the run command takes ``--captures`` (where to capture the 70 KB flows).
    """

    what: str
    module: str
    doc: str
    campaign: str
    arms: Mapping[str, TestbedArm]
    backgrounds: tuple[tuple[str, str], ...]
    schema: DatasetSchema
    key: tuple[str, ...]
    runs_per_seed: int
    plan_facts: dict
    run_help: str
    facts: dict = field(default_factory=dict)
    captures: bool = False

    def plan(self, seeds: Sequence[int] = SEEDS) -> list[dict]:
        """The runs in order: per seed every arm, the first rotating from seed to seed, each with every background.

        Parameters
        ----------
        seeds : sequence of int
            Schedule seeds, run in this order (default: the alternated campaign's, the shipped schedules).

        Returns
        -------
        list of dict
            The fields of :attr:`key`, ``order`` and ``arm_position`` (the arm's place in its seed, 0 first;
            :func:`~tcpmodels.experiments.p1.arms.rotated_plan`).

        Raises
        ------
        ValueError
            If ``seeds`` is empty or repeats a seed.
        """
        return rotated_plan(self.campaign, tuple(self.arms), self.backgrounds, seeds)

    def run(self, records_path: str | Path, *, seeds: Sequence[int] = SEEDS, config: P1Config = DEFAULT_CONFIG,
            capture_dir: str | Path | None = None, limit: int | None = None, progress: bool = True,
            lock_timeout_s: float = 7200.0) -> int:
        """Run (or resume) the plan on the kernel; return the runs measured.

        Parameters
        ----------
        records_path : str or Path
            JSONL, one record per run; runs already there are skipped.
        seeds : sequence of int
            The plan's seeds (default: the alternated campaign's, the shipped schedules).
        config : P1Config
            The P1 setting the arms share.
        capture_dir : str or Path, optional
            Capture the 70 KB flows here (their loss and pattern; without it those columns are empty).
        limit : int, optional
            Stop after this many new runs.
        progress : bool
            tqdm bar on stderr.
        lock_timeout_s : float
            Longest wait for the host lock per run. [s]

        Returns
        -------
        int
            Runs measured and recorded by this call.
        """
        return run_arms(records_path, self.plan(seeds), self.arms, key=self.key, desc=self.what, seeds=seeds,
                        config=config, capture_dir=capture_dir, limit=limit, progress=progress,
                        lock_timeout_s=lock_timeout_s)

    def tables(self, recs: list[dict]) -> tuple[dict, dict]:
        """The campaign's two tables and its provenance's facts (:func:`~tcpmodels.experiments.p1.abab.arms_tables`).

        Parameters
        ----------
        recs : list of dict
            Its records.

        Returns
        -------
        tuple of (dict, dict)
            ``{"flows", "runs"}`` and the facts (the plan: seeds, runs planned, arms and :attr:`plan_facts`;
            then :attr:`facts`).
        """
        tables, facts = arms_tables(recs, runs_per_seed=self.runs_per_seed, plan={
            "seeds": list(SEEDS), "runs_planned": len(self.plan(SEEDS)), "arms": list(self.arms), **self.plan_facts})
        return tables, {**{k: facts[k] for k in ("runs", "seeds_complete", "plan")}, **self.facts, **facts}

    @cached_property
    def build_dataset(self) -> CampaignDataset:
        """Records -> the dataset: ``build_dataset(records_path, data_dir, *, allow_dirty=False) -> provenance``."""
        return CampaignDataset(self.schema, self.key, self.tables, self.what)

    @cached_property
    def main(self) -> CampaignCli:
        """``python -m tcpmodels.experiments.<module> run|dataset ...``: ``main(argv=None) -> exit status``."""

        def options(run: argparse.ArgumentParser, dataset: argparse.ArgumentParser) -> None:
            run.add_argument("--seeds", nargs="+", type=int, default=list(SEEDS))
            if self.captures:
                run.add_argument("--captures", help="capture the 70 KB flows here (their loss)")

        def run(a: argparse.Namespace) -> dict:
            return {"measured": self.run(a.records, seeds=a.seeds, capture_dir=getattr(a, "captures", None),
                                         limit=a.limit, progress=not a.no_progress), "records": a.records}

        def dataset(a: argparse.Namespace) -> dict:
            prov = self.build_dataset(a.records, a.out, allow_dirty=a.allow_dirty)
            return {"runs": prov["runs"], "seeds_complete": prov["seeds_complete"]}

        return CampaignCli(self.module, self.doc, self.what, run=run, dataset=dataset, run_help=self.run_help,
                           options=options)
