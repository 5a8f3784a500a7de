"""``tcpmodels analyze CAPTURE... [--output-dir DIR] [--flow FILTER] [--top N] [--streaming] [--scheduler ADDR]`` (see :mod:`tcpmodels.analyze`).

Only the command-line plumbing: :mod:`tcpmodels.analyze` (pandas, matplotlib, the fit
package) is imported when the command runs, so that ``tcpmodels --help`` stays quick.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from tcpmodels.report import positive_int

__all__ = ["add_subcommand"]


def _flow_filter(text: str) -> str:
    from tcpmodels.analyze.capture import parse_flow_filter

    try:
        parse_flow_filter(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return text


def _cmd(args: argparse.Namespace) -> int:
    from tcpmodels.analyze.capture import analyze

    try:
        runs = analyze(args.captures, args.output_dir, args.flow or "", args.top,
                       streaming=True if args.streaming else None, scheduler=args.scheduler)
    except (ValueError, OSError) as exc:  # CaptureFileError and DatasetError are ValueErrors
        print(f"tcpmodels analyze: {exc}", file=sys.stderr)
        return 2
    failed = 0
    for r in runs:
        where = r.output_html or r.output_ipynb
        if r.status == "ok":
            print(f"{where}")
        else:
            failed += 1
            print(f"FAILED {r.output_ipynb} (cell {r.failing_cell}): {r.error}", file=sys.stderr)
    return 1 if failed else 0


def add_subcommand(subparsers: argparse._SubParsersAction) -> None:
    """Register ``tcpmodels analyze``.

    Parameters
    ----------
    subparsers : argparse._SubParsersAction
        The ``tcpmodels`` command's subparsers.

    Returns
    -------
    None
    """
    p = subparsers.add_parser("analyze", help="report on your own capture(s): connections, RTT, losses, models",
                              description="Read each capture (pcap / pcapng, gzip too) and write an HTML and "
                                          "notebook report: reader accounting, connection table, top flows' "
                                          "graphs, and Mathis / PFTK predictions for flows with loss events.")
    p.add_argument("captures", nargs="+", metavar="CAPTURE", help="capture file(s)")
    p.add_argument("--output-dir", default="analysis", type=Path,
                   help="where the reports go, one folder per capture (default: ./analysis)")
    p.add_argument("--flow", metavar="FILTER", default="", type=_flow_filter,
                   help="only flows with an endpoint ADDR, :PORT or ADDR:PORT ([v6addr]:PORT); an error if no "
                        "flow matches")
    p.add_argument("--top", type=positive_int, default=3, help="flows shown in detail (largest first; default 3)")
    p.add_argument("--streaming", action="store_true",
                   help="stream the capture to a Parquet dataset and compute the flow table per partition on "
                        "Dask (automatic above 1 GiB): writes flows.csv and accounting.json, prints the largest "
                        "flows")
    p.add_argument("--scheduler", metavar="ADDRESS", default=None,
                   help="Dask scheduler for streaming (tcp://host:8786); default: a local cluster")
    p.set_defaults(func=_cmd)
