"""``tcpmodels testbed run CONFIG`` and ``tcpmodels testbed cleanup``."""

from __future__ import annotations

import argparse
import json
import sys

__all__ = ["add_subcommand"]


def add_subcommand(subparsers) -> None:
    """Register ``testbed`` with its sub-commands on the main ``tcpmodels`` parser."""
    parser = subparsers.add_parser(
        "testbed", help="real-kernel testbed in network namespaces (needs root)",
        description="Build namespaces, links and delay elements, run traffic, capture; clean up leftovers.")
    sub = parser.add_subparsers(dest="testbed_command", metavar="ACTION")
    run_p = sub.add_parser("run", help="run the experiment in a TOML config")
    run_p.add_argument("config", help="TOML file (see examples/two_path.toml)")
    run_p.add_argument("--out-dir", help="directory for the run's folder (default: [run] out_dir or ./runs)")
    run_p.add_argument("--no-progress", action="store_true", help="do not show a progress bar")
    run_p.set_defaults(func=_run)
    clean_p = sub.add_parser("cleanup", help="remove namespaces and processes left by killed runs (idempotent)")
    clean_p.add_argument("--include-live", action="store_true",
                         help="also remove runs whose owner process is still alive")
    clean_p.set_defaults(func=_cleanup)
    parser.set_defaults(func=lambda args: (parser.print_help(sys.stderr), 2)[1])


def _run(args: argparse.Namespace) -> int:
    from tcpmodels.testbed._system import PrivilegeError, TestbedError
    from tcpmodels.testbed.runner import run_config

    try:
        result = run_config(args.config, out_dir=args.out_dir, progress=not args.no_progress)
    except PrivilegeError as exc:
        print(f"tcpmodels testbed: {exc}", file=sys.stderr)
        return 77
    except (TestbedError, ValueError) as exc:
        print(f"tcpmodels testbed: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt as exc:  # SIGINT or SIGTERM: the testbed has been torn down already
        print(f"tcpmodels testbed: interrupted ({exc}); namespaces and processes removed", file=sys.stderr)
        return 130
    flows = result.flows
    errors = [f for f in flows if f.get("error")]
    print(f"run {result.record['run_id']}: {len(flows)} flows ({len(errors)} failed) -> {result.run_dir}")
    for f in flows[:20]:
        rate = f.get("rate_bps")
        print(f"  flow {f.get('flow_id')} {f.get('kind')}: {f.get('bytes')} bytes, "
              f"{'%.2f Mbit/s' % (rate / 1e6) if rate else f.get('error')}")
    for path in result.capture_paths:
        print(f"  capture {path}")
    return 1 if errors else 0


def _cleanup(args: argparse.Namespace) -> int:
    from tcpmodels.testbed._system import PrivilegeError
    from tcpmodels.testbed.netns import cleanup

    try:
        report = cleanup(include_live=args.include_live)
    except PrivilegeError as exc:
        print(f"tcpmodels testbed: {exc}", file=sys.stderr)
        return 77
    print(json.dumps(report.to_dict()))
    return 0
