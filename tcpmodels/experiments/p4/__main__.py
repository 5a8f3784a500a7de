"""Command line of the P4 campaign: ``kernel``, ``dataset``."""

from __future__ import annotations

import json
from dataclasses import replace

from tcpmodels.experiments.campaign_cli import (
    add_dataset_output,
    add_run_command,
    campaign_errors,
    campaign_parser,
    with_reps,
)
from tcpmodels.experiments.p4 import __doc__ as package_doc
from tcpmodels.experiments.p4.config import DEFAULT_CONFIG
from tcpmodels.experiments.p4.dataset import build_dataset
from tcpmodels.experiments.p4.kernel import run_kernel_campaign

__all__ = ["main"]


def main(argv: list[str] | None = None) -> int:
    """Command line: ``kernel``, ``dataset`` (see the package docstring).

    Parameters
    ----------
    argv : list of str, optional
        Arguments (default: ``sys.argv[1:]``).

    Returns
    -------
    int
        Exit status 0 (errors exit through :func:`campaign_errors`).
    """
    parser, sub = campaign_parser("p4", package_doc)
    p = add_run_command(sub, "kernel", "run or resume the kernel grid (root; host lock per sample)", reps=True)
    p.add_argument("--keep-flow-order", action="store_true",
                   help="run the grid on the steered testbed (RPS steering, Testbed keep_flow_order): its samples "
                        "are labelled p4_kernel_steered and kept apart from the unsteered ones (default: off)")
    p = sub.add_parser("dataset", help="records -> Parquet + compressed records + provenance")
    p.add_argument("--records", required=True)
    add_dataset_output(p)
    args = parser.parse_args(argv)
    config = DEFAULT_CONFIG
    with campaign_errors("p4"):
        if args.cmd == "kernel":
            config = with_reps(config, args.reps)
            if args.keep_flow_order:
                config = replace(config, keep_flow_order=True)
            n = run_kernel_campaign(args.records, config, limit=args.limit, progress=not args.no_progress)
            print(json.dumps({"measured": n, "records": args.records}))
        else:
            prov = build_dataset(args.records, args.out, config, note=args.note, allow_dirty=args.allow_dirty)
            print(json.dumps({"n_samples": prov["kernel"]["n_samples"], "n_ok": prov["kernel"]["n_ok"],
                              "git": prov["git"]}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
