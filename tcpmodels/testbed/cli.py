"""``tcpmodels testbed run CONFIG``, ``tcpmodels testbed cleanup`` and ``tcpmodels testbed cc ...``."""

from __future__ import annotations

import argparse
import json
import sys
import time

__all__ = ["add_subcommand"]


def add_subcommand(subparsers: argparse._SubParsersAction) -> None:
    """Register ``testbed`` with its sub-commands on the main ``tcpmodels`` parser.

    Parameters
    ----------
    subparsers : argparse._SubParsersAction
        The main parser's sub-command registry; receives ``testbed`` with its actions
        ``run``, ``cleanup`` and ``cc`` (``list``, ``load``, ``unload``), each setting ``func``.
    """
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
    clean_p.add_argument("--keep-pinned", action="store_true",
                         help="leave the tm_* congestion controls loaded with `testbed cc load` (by default they "
                              "are unregistered when no live process holds them, and named on stderr)")
    clean_p.set_defaults(func=_cleanup)
    cc_p = sub.add_parser("cc", help="BPF congestion controls tm_* (tcpmodels.testbed.kernel_cc): list, load, unload",
                          description="Build and register the package's BPF congestion controls (tm_reno, "
                                      "tm_cubic_x, tm_lia, tm_olia) with bpftool; registration is global.")
    cc_sub = cc_p.add_subparsers(dest="cc_command", metavar="ACTION")
    cc_list = cc_sub.add_parser("list", help="programs shipped, registered tm_* controls, and their parameters")
    cc_list.set_defaults(func=_cc_list)
    cc_load = cc_sub.add_parser("load", help="build and register NAME")
    cc_load.add_argument("name", help="tm_reno | tm_cubic_x | tm_lia | tm_olia")
    cc_load.add_argument("--param", action="append", default=[], metavar="K=V",
                         help="parameter, repeatable (tm_cubic_x: reading=none|multiply|divide, x_exponent, c, "
                              "beta_cubic, fast_convergence, hystart)")
    cc_load.add_argument("--replace", action="store_true", help="unregister NAME first if it is registered")
    cc_load.set_defaults(func=_cc_load)
    cc_unload = cc_sub.add_parser("unload", help="unregister NAME")
    cc_unload.add_argument("name")
    cc_unload.set_defaults(func=_cc_unload)
    cc_p.set_defaults(func=lambda args: (cc_p.print_help(sys.stderr), 2)[1])
    parser.set_defaults(func=lambda args: (parser.print_help(sys.stderr), 2)[1])


def _run(args: argparse.Namespace) -> int:
    from tcpmodels.testbed._system import PrivilegeError, TestbedError
    from tcpmodels.testbed.kernel_cc import KernelCcUnavailable
    from tcpmodels.testbed.runner import run_config

    try:
        result = run_config(args.config, out_dir=args.out_dir, progress=not args.no_progress)
    except (PrivilegeError, KernelCcUnavailable) as exc:
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
    from tcpmodels.testbed import kernel_cc
    from tcpmodels.testbed._system import PrivilegeError, TestbedError
    from tcpmodels.testbed.netns import cleanup

    try:
        report = cleanup(include_live=args.include_live).to_dict()
        report.update(kernel_cc.cleanup(include_live=args.include_live, keep_pinned=args.keep_pinned).to_dict())
    except PrivilegeError as exc:
        print(f"tcpmodels testbed: {exc}", file=sys.stderr)
        return 77
    except TestbedError as exc:
        print(f"tcpmodels testbed: {exc}", file=sys.stderr)
        return 1
    print(json.dumps(report))
    for load in report.get("unregistered_pinned_loads", []):
        when = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(load["loaded_unix_s"])) \
            if load.get("loaded_unix_s") else "an unknown time"
        print(f"tcpmodels testbed cleanup: unregistered {load['name']}, loaded with `tcpmodels testbed cc load` by "
              f"{load.get('loaded_by') or 'an unknown user'} at {when}: a deliberate load, not a leftover of a "
              "killed run (--keep-pinned leaves such loads)", file=sys.stderr)
    return 0


def _parse_params(items: list[str]) -> dict:
    params = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise ValueError(f"--param takes K=V; got {item!r}")
        params[key.strip()] = value.strip()
    return params


def _cc_call(fn) -> int:
    from tcpmodels.testbed._system import PrivilegeError, TestbedError

    try:
        return fn()
    except PrivilegeError as exc:
        print(f"tcpmodels testbed cc: {exc}", file=sys.stderr)
        return 77
    except (TestbedError, ValueError) as exc:
        print(f"tcpmodels testbed cc: {exc}", file=sys.stderr)
        return 1


def _cc_list(args: argparse.Namespace) -> int:
    from tcpmodels.testbed import kernel_cc

    def go():
        reason = kernel_cc.unavailable_reason()
        out = {"programs": {n: kernel_cc.PARAMETERS[n] for n in kernel_cc.PROGRAMS},
               "registered": kernel_cc.loaded(), "unavailable_reason": reason}
        print(json.dumps(out, indent=1))
        return 0
    return _cc_call(go)


def _cc_load(args: argparse.Namespace) -> int:
    from tcpmodels.testbed import kernel_cc

    def go():
        rec = kernel_cc.load(args.name, _parse_params(args.param), replace=args.replace)
        print(f"registered {rec['name']} {json.dumps(rec['params'])} ({rec['object']})")
        return 0
    return _cc_call(go)


def _cc_unload(args: argparse.Namespace) -> int:
    from tcpmodels.testbed import kernel_cc

    def go():
        holders = kernel_cc.live_holders(args.name) if args.name.startswith("tm_") else []
        was = kernel_cc.unload(args.name)
        if not was:
            print(f"{args.name} was not registered")
            return 0
        text = f"unregistered {args.name}: no new socket can select it"
        if holders:
            text += f"; live process(es) {holders} held it"
        lingering = kernel_cc.still_loaded(args.name)
        if lingering:
            text += (f"; sockets still run it ({lingering} unregistered registration(s) stay loaded): they keep "
                     f"{args.name} until they close")
        print(text)
        return 0
    return _cc_call(go)
