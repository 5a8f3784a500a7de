"""The ``tcpmodels`` command line: one sub-command per job.

Sub-commands are registered by the module that owns them through a function
``add_subcommand(subparsers)`` that adds a parser and sets ``func`` (called
with the parsed arguments, returns an exit code). A module that needs an
optional dependency which is not installed (:data:`OPTIONAL_DEPENDENCIES`) is
left out, so ``tcpmodels report`` works without ns-3; any other ImportError is
a bug and is raised, never hidden by a missing sub-command.
"""

from __future__ import annotations

import argparse
import importlib
import sys

#: Modules that contribute a sub-command, in the order ``--help`` lists them.
SUBCOMMAND_MODULES = (
    "tcpmodels.report.project",
    "tcpmodels.report",
    "tcpmodels.testbed.cli",
    "tcpmodels.analyze.cli",
    "tcpmodels.experiments.cli",
    "tcpmodels.records.parts",
)

#: Top-level packages a sub-command module may need that ``pip install tcpmodels`` does not bring (the ``sim``
#: and ``test`` extras: ns-3's bindings and cppyy, the capture readers, the browser driver).
OPTIONAL_DEPENDENCIES = frozenset({"ns", "ns3", "cppyy", "dpkt", "pyshark", "playwright"})


_EPILOG = """\
start here:
  tcpmodels init work        write the shipped notebooks and data into ./work
  cd work
  tcpmodels report           execute them -> reports/index.html, figures/

`tcpmodels COMMAND --help` describes one command."""


def build_parser() -> argparse.ArgumentParser:
    """The ``tcpmodels`` argument parser with every available sub-command.

    Returns
    -------
    argparse.ArgumentParser
        Plain-text help (no reStructuredText); one sub-parser per module of
        :data:`SUBCOMMAND_MODULES` whose optional dependencies are installed.

    Raises
    ------
    ImportError
        If a module of :data:`SUBCOMMAND_MODULES` fails to import for any reason other than a missing
        package of :data:`OPTIONAL_DEPENDENCIES`.
    """
    from tcpmodels import __version__

    parser = argparse.ArgumentParser(
        prog="tcpmodels",
        description="Analytical TCP models fitted to real captures; paper reproductions as notebooks.",
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"tcpmodels {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for module_name in SUBCOMMAND_MODULES:
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as exc:
            if (exc.name or "").partition(".")[0] not in OPTIONAL_DEPENDENCIES:
                raise
            continue
        add = getattr(module, "add_subcommand", None)
        if add is not None:
            add(subparsers)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run the command line.

    Parameters
    ----------
    argv : list of str, optional
        Arguments without the program name; ``sys.argv[1:]`` if omitted.

    Returns
    -------
    int
        Exit status: 0 success, 1 a notebook or job failed, 2 a usage error.
    """
    parser = build_parser()
    args = parser.parse_args(argv)
    if getattr(args, "func", None) is None:
        parser.print_help(sys.stderr)
        return 2
    return int(args.func(args) or 0)


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
