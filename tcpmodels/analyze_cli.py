"""``tcpmodels analyze CAPTURE... [--output-dir DIR] [--flow FILTER] [--top N]`` (see :mod:`tcpmodels.analyze`).

Only the command-line plumbing: :mod:`tcpmodels.analyze` (pandas, matplotlib, the fit
package) is imported when the command runs, so that ``tcpmodels --help`` stays quick.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

__all__ = ["add_subcommand"]


def _cmd(args: argparse.Namespace) -> int:
    from tcpmodels.analyze import analyze
    from tcpmodels.traces import CaptureFileError

    try:
        runs = analyze(args.captures, args.output_dir, args.flow or "", args.top)
    except (CaptureFileError, FileNotFoundError, IsADirectoryError) as exc:
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


def add_subcommand(subparsers) -> None:
    """Register ``tcpmodels analyze``."""
    p = subparsers.add_parser("analyze", help="report on your own capture(s): connections, RTT, losses, models",
                              description="Read each capture (pcap / pcapng, gzip too) and write an HTML and "
                                          "notebook report: reader accounting, connection table, top flows' "
                                          "graphs, and Mathis / PFTK predictions for flows with loss events.")
    p.add_argument("captures", nargs="+", metavar="CAPTURE", help="capture file(s)")
    p.add_argument("--output-dir", default="analysis", type=Path,
                   help="where the reports go, one folder per capture (default: ./analysis)")
    p.add_argument("--flow", metavar="FILTER", default="",
                   help="only flows with an endpoint ADDR, :PORT or ADDR:PORT ([v6addr]:PORT)")
    p.add_argument("--top", type=int, default=3, help="flows shown in detail (largest first; default 3)")
    p.set_defaults(func=_cmd)
