"""The ``tcpmodels`` command line: one sub-command per job.

Sub-commands are registered by the module that owns them through a function
``add_subcommand(subparsers)`` that adds a parser and sets ``func`` (called
with the parsed arguments, returns an exit code). Modules whose optional
dependencies are missing are skipped, so ``tcpmodels report`` works without
ns-3 or root.
"""

from __future__ import annotations

import argparse
import importlib
import sys

#: Modules that contribute a sub-command, in the order ``--help`` lists them.
SUBCOMMAND_MODULES = (
    "tcpmodels.report",
    "tcpmodels.testbed.cli",
    "tcpmodels.analyze_cli",
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="tcpmodels",
        description="Analytical TCP models fitted to real captures; paper reproductions as notebooks.",
    )
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for module_name in SUBCOMMAND_MODULES:
        try:
            module = importlib.import_module(module_name)
        except ImportError:
            continue
        add = getattr(module, "add_subcommand", None)
        if add is not None:
            add(subparsers)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if getattr(args, "func", None) is None:
        parser.print_help(sys.stderr)
        return 2
    return int(args.func(args) or 0)


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
