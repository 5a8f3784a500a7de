"""Command line of the sim-versus-kernel comparison: ``run`` (resumable) and ``dataset``."""

from __future__ import annotations

import json
import sys

from tcpmodels.experiments.sim_vs_kernel import __doc__ as package_doc
from tcpmodels.experiments.sim_vs_kernel.config import DEFAULT_CONFIG, SCENARIOS
from tcpmodels.experiments.sim_vs_kernel.dataset import build_dataset
from tcpmodels.experiments.sim_vs_kernel.runs import run_campaign

__all__ = ["main"]


def main(argv: list[str] | None = None) -> int:
    """Command line: ``run`` and ``dataset`` (see the module docstring)."""
    from tcpmodels.experiments.campaign_cli import add_dataset_output, campaign_parser

    parser, sub = campaign_parser("sim_vs_kernel", package_doc)
    p = sub.add_parser("run", help="run or resume both engines (kernel needs root; host lock per kernel sample)")
    p.add_argument("--records", required=True)
    p.add_argument("--scenario", default=DEFAULT_CONFIG.name, choices=sorted(SCENARIOS))
    p.add_argument("--engines", nargs="+", default=["kernel", "ns3"], choices=["kernel", "ns3"])
    p.add_argument("--reps", type=int)
    p.add_argument("--limit", type=int)
    p.add_argument("--no-progress", action="store_true")
    p = sub.add_parser("dataset", help="records -> Parquet + provenance")
    p.add_argument("--records", required=True, nargs="+", help="one JSONL file per scenario")
    add_dataset_output(p)
    args = parser.parse_args(argv)
    from tcpmodels.experiments.campaign_cli import campaign_errors, with_reps

    with campaign_errors("sim_vs_kernel"):
        if args.cmd == "run":
            config = with_reps(SCENARIOS[args.scenario], args.reps)
            n = run_campaign(args.records, config, engines=tuple(args.engines), limit=args.limit,
                             progress=not args.no_progress)
            print(json.dumps({"measured": n, "records": args.records}))
        else:
            prov = build_dataset(args.records, args.out, note=args.note, allow_dirty=args.allow_dirty)
            print(json.dumps({k: {"largest_abs_diff_share": max((abs(r["diff_share"]) for r in v["agreement"]
                                                                 if r["diff_share"] is not None), default=None)}
                              for k, v in prov["scenarios"].items()}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
