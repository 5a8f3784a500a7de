"""The command line every campaign shares: its parser, its run command, ``--reps``, its expected failures.

:func:`campaign_parser` is the skeleton of ``python -m tcpmodels.experiments.<campaign> <command> ...``;
:func:`add_run_command` adds a command that runs or resumes records, :func:`with_reps` applies its ``--reps``;
:func:`add_dataset_output` and :func:`add_allow_dirty` give a dataset command where it writes and whether a
dirty tree may write it;
:func:`campaign_errors` turns the failures a user can cause or fix into a line on stderr and an exit code.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from typing import Any

__all__ = ["campaign_errors", "campaign_parser", "add_run_command", "with_reps", "add_allow_dirty", "add_dataset_output"]


@contextmanager
def campaign_errors(name: str, also: tuple[type[Exception], ...] = ()) -> Iterator[None]:
    """Turn a campaign command's expected failures into one line on stderr and an exit code.

    For the ``main()`` of every campaign module: what a user can cause or fix
    reads as a sentence, never as a traceback, and a script can tell the cases
    apart by the exit status (raised as :class:`SystemExit`).

    ====================================================  ====
    no root / no namespaces (:class:`PrivilegeError`)      77 (the "skipped" status of automake and pytest plugins)
    :class:`TestbedError`, :class:`ValueError`, ``also``   1
    Ctrl-C (the records on disk stay valid: rerun resumes) 130
    ====================================================  ====

    Parameters
    ----------
    name : str
        Prefix of the message, e.g. ``"p3"``.
    also : tuple of exception types
        Further expected failures of this command (exit status 1).

    Yields
    ------
    None
        Run the command's body inside the ``with`` block.

    Raises
    ------
    SystemExit
        With status 77, 1 or 130 for the failures above (other exceptions propagate).
    """
    from tcpmodels.testbed import PrivilegeError, TestbedError

    try:
        yield
    except PrivilegeError as exc:
        print(f"{name}: {exc}", file=sys.stderr)
        raise SystemExit(77) from None
    except (TestbedError, ValueError, *also) as exc:
        print(f"{name}: {exc}", file=sys.stderr)
        raise SystemExit(1) from None
    except KeyboardInterrupt:
        print(f"{name}: interrupted; rerun the same command to resume", file=sys.stderr)
        raise SystemExit(130) from None


def campaign_parser(campaign: str, doc: str) -> tuple[argparse.ArgumentParser, argparse._SubParsersAction]:
    """The skeleton of a campaign's command line: ``python -m tcpmodels.experiments.<campaign> <command> ...``.

    Returns the parser (described by the first line of ``doc``, the campaign's
    docstring) and its required subcommands, to which the campaign adds its own.

    Parameters
    ----------
    campaign : str
        Module name under ``tcpmodels.experiments`` (the program name shown in usage).
    doc : str
        The campaign module's docstring; its first line is the description.

    Returns
    -------
    tuple
        ``(argparse.ArgumentParser, subparsers action)``; the subcommand chosen is
        ``args.cmd``.
    """
    parser = argparse.ArgumentParser(prog=f"python -m tcpmodels.experiments.{campaign}",
                                     description=doc.split("\n")[0])
    return parser, parser.add_subparsers(dest="cmd", required=True)


def add_run_command(sub: argparse._SubParsersAction, name: str, help: str, *,
                    reps: bool = False) -> argparse.ArgumentParser:
    """A subcommand that runs or resumes records: ``--records`` (required), ``--limit``, ``--no-progress``
    (and ``--reps`` with ``reps=True``); the campaign adds the rest.

    Parameters
    ----------
    sub : argparse._SubParsersAction
        The subcommands of :func:`campaign_parser`.
    name : str
        Name of the subcommand (e.g. ``"run"``).
    help : str
        One line shown in the campaign's ``--help``.
    reps : bool
        Also add ``--reps N`` (repetitions per configuration).

    Returns
    -------
    argparse.ArgumentParser
        The subcommand's parser, to add campaign-specific options to.
    """
    p = sub.add_parser(name, help=help)
    p.add_argument("--records", required=True)
    p.add_argument("--limit", type=int)
    if reps:
        p.add_argument("--reps", type=int)
    p.add_argument("--no-progress", action="store_true")
    return p


def with_reps(config: Any, reps: int | None) -> Any:
    """The setting of a run with the ``--reps`` of :func:`add_run_command` applied: ``config`` with ``reps``
    repetitions when the option was given, else ``config`` itself.

    Parameters
    ----------
    config : dataclass
        The campaign's setting (a frozen dataclass with a ``reps`` field).
    reps : int or None
        ``args.reps`` (None or 0: not given).

    Returns
    -------
    dataclass
        ``dataclasses.replace(config, reps=reps)``, or ``config``.
    """
    return replace(config, reps=reps) if reps else config


def add_allow_dirty(parser: argparse.ArgumentParser) -> None:
    """Add ``--allow-dirty`` to a command that writes a shipped dataset: the one sentence of its help, stated once.

    Parameters
    ----------
    parser : argparse.ArgumentParser
        The dataset command's parser; ``args.allow_dirty`` is True when the option is given.
    """
    parser.add_argument("--allow-dirty", action="store_true",
                        help="write a shipped dataset (under data/) from a tree with uncommitted changes")


def add_dataset_output(parser: argparse.ArgumentParser) -> None:
    """Add what a dataset command writes and how: ``--out`` (required), ``--note`` (default empty) and
    ``--allow-dirty`` (:func:`add_allow_dirty`), in this order.

    Parameters
    ----------
    parser : argparse.ArgumentParser
        The dataset command's parser.
    """
    parser.add_argument("--out", required=True)
    parser.add_argument("--note", default="")
    add_allow_dirty(parser)
