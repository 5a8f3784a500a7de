"""``tcpmodels campaign NAME ...``: one entry to every campaign's own command line.

Each campaign keeps its command line (``python -m tcpmodels.experiments.<name> ...``);
``tcpmodels campaign NAME ARGS`` calls the same ``main(ARGS)``, so the two forms take the
same arguments, print the same output and exit with the same status. The campaign's module
is imported only when it runs (``tcpmodels --help`` does not load pandas, ns-3 or the testbed).
"""

from __future__ import annotations

import argparse
import importlib
from collections.abc import Callable

__all__ = ["CAMPAIGNS", "add_subcommand", "run_campaign_command", "package_main"]

#: name -> (module and function called with the arguments, one line for ``tcpmodels campaign --help``)
CAMPAIGNS = {
    "p1": ("tcpmodels.experiments.p1:main", "P1 short flows beside long transfers in a k=4 fat-tree (kernel, ns-3)"),
    "p2": ("tcpmodels.experiments.p2:main", "P2 MPTCP probe and data throughput over two paths (kernel)"),
    "p3": ("tcpmodels.experiments.p3:main", "P3 one Reno and one CUBIC flow per RTT pair (kernel, ns-3, fluid)"),
    "p4": ("tcpmodels.experiments.p4:main", "P4 the window-limited rate window / RTT (kernel)"),
    "p5": ("tcpmodels.experiments.p5:main", "P5 Pareto downloads and their Hurst exponent (ns-3 caterpillar, kernel)"),
    "bbr": ("tcpmodels.experiments.bbr.__main__:main", "BBR against loss-based flows (kernel, ns-3)"),
    "fit": ("tcpmodels.experiments.fit:main", "loss-throughput runs for fitting the formula models (kernel)"),
    "kernel_coupled_cc": ("tcpmodels.experiments.kernel_coupled_cc.cli:main",
                          "validation of the tm_* congestion controls against the kernel's and ns-3's"),
    "limits": ("tcpmodels.experiments.limits.__main__:main", "labelled runs for the per-flow limitation diagnosis"),
    "sim_vs_kernel": ("tcpmodels.experiments.sim_vs_kernel:main", "ns-3 against the kernel on one dumbbell"),
}


def package_main(package: str) -> Callable[[list[str] | None], int]:
    """A campaign package's ``main``: the command line of its ``__main__`` module, imported when called.

    ``python -m tcpmodels.experiments.p1`` imports the package before it runs ``p1.__main__``; a
    package that imported its ``__main__`` itself would make Python warn that the module is already
    loaded, so the package's ``main`` imports it only when it is called.

    Parameters
    ----------
    package : str
        The campaign's package (``tcpmodels.experiments.p1``).

    Returns
    -------
    callable
        ``main(argv=None) -> exit status``: ``<package>.__main__.main(argv)`` (``argv`` None:
        ``sys.argv[1:]``).
    """
    def main(argv: list[str] | None = None) -> int:
        return importlib.import_module(f"{package}.__main__").main(argv)

    main.__doc__ = (f"The command line (``python -m {package}``): ``main(argv=None) -> exit status``; see "
                    f":mod:`{package}.__main__`.")
    main.__module__ = package
    return main


def run_campaign_command(name: str, argv: list[str]) -> int:
    """Call campaign ``name``'s command line with ``argv``.

    Parameters
    ----------
    name : str
        A key of :data:`CAMPAIGNS`.
    argv : list of str
        The campaign's arguments (what follows ``python -m tcpmodels.experiments.<name>``).

    Returns
    -------
    int
        The campaign's exit status (its expected failures exit through ``SystemExit`` as they do
        under ``python -m``).

    Raises
    ------
    ValueError
        For a name that is not a campaign.
    """
    if name not in CAMPAIGNS:
        raise ValueError(f"campaign must be one of {', '.join(CAMPAIGNS)}; got {name!r}")
    module_name, _, function = CAMPAIGNS[name][0].partition(":")
    main = getattr(importlib.import_module(module_name), function)
    return int(main(list(argv)) or 0)


def _run(args: argparse.Namespace) -> int:
    return run_campaign_command(args.campaign, args.campaign_args)


def add_subcommand(subparsers: argparse._SubParsersAction) -> None:
    """Register ``campaign NAME ...`` on the main ``tcpmodels`` parser.

    Parameters
    ----------
    subparsers : argparse._SubParsersAction
        The main parser's sub-command registry; receives ``campaign``, whose ``--help`` lists every
        campaign of :data:`CAMPAIGNS` with its line, and which sets ``func``.
    """
    width = max(map(len, CAMPAIGNS))
    listing = "\n".join(f"  {name:<{width}}  {line}" for name, (_, line) in CAMPAIGNS.items())
    parser = subparsers.add_parser(
        "campaign", help="run a campaign's command line (tcpmodels campaign NAME --help)",
        description="Run one campaign's command line: `tcpmodels campaign NAME ARGS` is "
                    "`python -m tcpmodels.experiments.NAME ARGS`.",
        epilog=f"campaigns:\n{listing}\n\n`tcpmodels campaign NAME --help` describes one campaign's commands.",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("campaign", choices=list(CAMPAIGNS), metavar="NAME", help="the campaign (listed below)")
    parser.add_argument("campaign_args", nargs=argparse.REMAINDER, metavar="ARGS",
                        help="its command and options, as after `python -m tcpmodels.experiments.NAME`")
    parser.set_defaults(func=_run)
