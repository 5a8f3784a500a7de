"""A campaign of P1 testbed variants alternated per seed, whole: plan, run, dataset and command line.

:mod:`~tcpmodels.experiments.p1.swaps`, :mod:`~tcpmodels.experiments.p1.placement` and
:mod:`~tcpmodels.experiments.p1.delack` differ only in their arms, backgrounds and what their provenance says of
them; an :class:`ArmsCampaign` gives each of them the rest once: the plan and the run
(:class:`~tcpmodels.experiments.p1.arms.ArmsRun`), the dataset (the alternated campaign's tables,
:func:`~tcpmodels.experiments.p1.abab.arms_tables`, through its schema) and the ``run``/``dataset`` command line.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass, field
from functools import cached_property

from tcpmodels.datasets import DatasetSchema
from tcpmodels.experiments.campaign_dataset import CampaignCli, CampaignDataset
from tcpmodels.experiments.p1.abab import arms_tables
from tcpmodels.experiments.p1.arms import SEEDS, ArmsRun

__all__ = ["ArmsCampaign"]


@dataclass(frozen=True)
class ArmsCampaign(ArmsRun):
    """One campaign of :func:`~tcpmodels.experiments.p1.arms.run_arms`: what it runs and what it writes.

    Its plan and run are an :class:`~tcpmodels.experiments.p1.arms.ArmsRun`'s (``what``, ``campaign``, ``arms``,
    ``backgrounds``, ``key`` as there); it adds the dataset and the command line.

    Parameters
    ----------
    module : str
        Its module below ``tcpmodels.experiments`` (``p1.placement``), for the command line.
    doc : str
        Its module's docstring (the ``--help`` text).
    schema : DatasetSchema
        Its dataset.
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

    module: str
    doc: str
    schema: DatasetSchema
    runs_per_seed: int
    plan_facts: dict
    run_help: str
    facts: dict = field(default_factory=dict)
    captures: bool = False

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
