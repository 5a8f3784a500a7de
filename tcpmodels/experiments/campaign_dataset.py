"""What issue 57's small campaigns share: records to the dataset through its schema, and their two commands.

The campaigns :mod:`~tcpmodels.experiments.p1.abab`, :mod:`~tcpmodels.experiments.p1.ns3_windows`,
:mod:`~tcpmodels.experiments.p2.sndbuf`, :mod:`~tcpmodels.experiments.p2.spread` and
:mod:`~tcpmodels.experiments.p3.windows` each turn their JSONL records into tables. A
:class:`CampaignDataset` does the rest once: the git state taken before anything is written (a shipped
dataset from a dirty tree refused), the records read, the provenance every such dataset holds (records,
host, the code of the runs) and the writing through :func:`tcpmodels.datasets.write_dataset` (tables
checked against the schema before any file is touched). A :class:`CampaignCli` is their command line: a
command that runs or resumes the records, one that builds the dataset. :func:`session_facts` is what a
provenance says of the session that made the records (sample time, first and last start, host load).
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from tcpmodels.datasets import REPO_ROOT, DatasetSchema, write_dataset

__all__ = ["CampaignDataset", "CampaignCli", "session_facts"]

#: ``tables(records) -> (frames, facts)``: the tables by name and what the provenance says of the campaign
TablesOf = Callable[[list[dict]], tuple[Mapping[str, pd.DataFrame], dict]]


@dataclass(frozen=True)
class CampaignDataset:
    """A campaign's dataset: its schema, what identifies a record, and how its records become tables.

    Called as ``build(records_path, data_dir, *, allow_dirty=False)``, it writes the dataset (:meth:`__call__`).

    Parameters
    ----------
    schema : DatasetSchema
        The dataset (:mod:`tcpmodels.datasets`).
    key : tuple of str
        The fields that identify a record (:class:`tcpmodels.records.JsonlRecords`).
    tables : callable
        ``tables(records) -> (frames, facts)``: the tables by name (:meth:`DatasetSchema.table`) and what the
        provenance says of this campaign besides the common facts.
    what : str
        The campaign, as a message names it (``p1 abab``).
    """

    schema: DatasetSchema
    key: tuple[str, ...]
    tables: TablesOf
    what: str

    def __call__(self, records_path: str | Path, data_dir: str | Path, *, allow_dirty: bool = False) -> dict:
        """Records -> the dataset in ``data_dir/datasets``; return the provenance written.

        Parameters
        ----------
        records_path : str or Path
            The campaign's JSONL records.
        data_dir : str or Path
            The ``data`` folder; the files go to its ``datasets`` folder.
        allow_dirty : bool
            Write a shipped dataset (under the repository's ``data``) from a tree with uncommitted changes (the
            provenance says so).

        Returns
        -------
        dict
            The provenance: ``dataset`` (the prefix), ``git`` (the tree that wrote it), ``host``, ``records``,
            ``records_torn_lines_skipped`` (torn lines of the records file, their samples rerun), ``runs_git``
            (the code of the runs), the campaign's facts, and what
            :func:`tcpmodels.datasets.write_dataset` adds (``files``, ``written_utc``, ``schema_version``...).

        Raises
        ------
        ValueError
            If ``records_path`` holds no record.
        tcpmodels.records.DirtyTreeError
            For a shipped dataset from a dirty tree without ``allow_dirty``.
        tcpmodels.datasets.SchemaError
            Before anything is written, if a table does not match the schema.
        """
        from tcpmodels.records import JsonlRecords, host_facts, records_git_summary, shipped_git_state

        out = Path(data_dir) / "datasets"
        git = shipped_git_state(REPO_ROOT, out, allow_dirty=allow_dirty)  # before anything is written
        records = JsonlRecords(records_path, tuple(self.key))
        recs = records.read()
        if not recs:
            raise ValueError(f"{records_path}: no record of the {self.what} campaign")
        frames, facts = self.tables(recs)
        prov = {"dataset": self.schema.prefix, "git": git, "host": host_facts(), "records": str(records_path),
                "records_torn_lines_skipped": records.lines_skipped, "runs_git": records_git_summary(recs), **facts}
        write_dataset(self.schema, out, frames, prov)
        return prov


def session_facts(recs: Sequence[dict]) -> dict:
    """What a provenance says of the session that made the records: sample time, first and last start, host load.

    Parameters
    ----------
    recs : sequence of dict
        Records of :func:`tcpmodels.experiments.campaign.run_samples` (``wall_s`` [s], ``started_utc``,
        ``load_avg``); at least one.

    Returns
    -------
    dict
        ``wall_s_median`` [s], ``first_utc`` and ``last_utc`` (the earliest and latest ``started_utc``) and
        ``load_avg_1m`` (``[min, max]`` of the 1-minute load average before the samples), in this order.
    """
    load = [r["load_avg"][0] for r in recs]
    return {"wall_s_median": float(np.median([r["wall_s"] for r in recs])),
            "first_utc": min(r["started_utc"] for r in recs), "last_utc": max(r["started_utc"] for r in recs),
            "load_avg_1m": [float(min(load)), float(max(load))]}


@dataclass(frozen=True)
class CampaignCli:
    """``python -m tcpmodels.experiments.<module> run|dataset ...``: a small campaign's command line.

    Called as ``main(argv=None)``, it parses, runs the command and prints its JSON answer (:meth:`__call__`).
    The run command takes ``--records``, ``--limit``, ``--no-progress`` (and ``--reps``); the dataset
    command ``--records``, ``--out`` (the ``data`` folder) and ``--allow-dirty``; ``options`` adds the
    campaign's own. Expected failures become exit codes (:func:`tcpmodels.experiments.campaign_cli.campaign_errors`).

    Parameters
    ----------
    module : str
        The campaign's module below ``tcpmodels.experiments`` (``p1.abab``).
    doc : str
        Its docstring (the ``--help`` text).
    what : str
        The campaign, as error messages name it.
    run, dataset : callable
        ``f(args) -> dict`` for each command: what it prints as JSON.
    run_help : str
        One line for the run command in ``--help``.
    commands : tuple of str
        The two commands' names.
    dataset_help : str
        One line for the dataset command.
    reps : bool
        Whether the run command takes ``--reps``.
    options : callable, optional
        ``options(run_parser, dataset_parser)`` adds the campaign's own options.
    """

    module: str
    doc: str
    what: str
    run: Callable[[argparse.Namespace], dict]
    dataset: Callable[[argparse.Namespace], dict]
    run_help: str
    commands: tuple[str, str] = ("run", "dataset")
    dataset_help: str = "JSONL records -> Parquet + provenance"
    reps: bool = False
    options: Callable[[argparse.ArgumentParser, argparse.ArgumentParser], None] | None = None

    def __call__(self, argv: Sequence[str] | None = None) -> int:
        """Parse ``argv``, run the command, print its answer as JSON.

        Parameters
        ----------
        argv : sequence of str, optional
            Arguments (default ``sys.argv[1:]``).

        Returns
        -------
        int
            Exit status.
        """
        from tcpmodels.experiments.campaign_cli import add_run_command, campaign_errors, campaign_parser

        parser, sub = campaign_parser(self.module, self.doc)
        run_parser = add_run_command(sub, self.commands[0], self.run_help, reps=self.reps)
        dataset_parser = sub.add_parser(self.commands[1], help=self.dataset_help)
        dataset_parser.add_argument("--records", required=True)
        dataset_parser.add_argument("--out", required=True, help="the data/ directory")
        dataset_parser.add_argument("--allow-dirty", action="store_true")
        if self.options is not None:
            self.options(run_parser, dataset_parser)
        args = parser.parse_args(argv)
        with campaign_errors(self.what, also=(RuntimeError,)):
            print(json.dumps((self.run if args.cmd == self.commands[0] else self.dataset)(args)))
        return 0
