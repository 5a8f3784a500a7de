"""``python -m tcpmodels.experiments.limits {run,dataset,fixtures}``: the limitation campaign's command line."""

from __future__ import annotations

import json
import sys

from tcpmodels.experiments.limits.campaign import REPO, SCENARIOS, TEST2_SEEDS, TEST_SEEDS, TUNING_SEEDS, run_campaign

__all__ = ["main"]


def main(argv: list[str] | None = None) -> int:
    """``python -m tcpmodels.experiments.limits {run,dataset,fixtures} ...``.

    Parameters
    ----------
    argv : list of str, optional
        Arguments; None: ``sys.argv[1:]``.

    Returns
    -------
    int
        0 (a one-line JSON summary is printed); expected failures exit through
        :func:`~tcpmodels.experiments.campaign_cli.campaign_errors`.
    """
    from tcpmodels.experiments.campaign_cli import campaign_errors, campaign_parser
    from tcpmodels.experiments.limits import campaign

    parser, sub = campaign_parser("limits", campaign.__doc__)
    p = sub.add_parser("run", help="the labelled runs (root; resumable)")
    p.add_argument("--runs", default=str(REPO / "runs" / "limits"))
    p.add_argument("--scenarios", nargs="+", choices=sorted(SCENARIOS))
    p.add_argument("--seeds", type=int, nargs="+")
    p.add_argument("--limit", type=int)
    p.add_argument("--no-progress", action="store_true")
    p = sub.add_parser("dataset", help="captures + tcp_info -> data/datasets/limits_* + provenance")
    p.add_argument("--runs", default=str(REPO / "runs" / "limits"))
    p.add_argument("--out", default=str(REPO / "data" / "datasets"))
    p.add_argument("--note", default="")
    p.add_argument("--allow-dirty", action="store_true")
    p = sub.add_parser("fixtures", help="small trimmed sender captures of one tuning seed -> tests/data/limits")
    p.add_argument("--runs", default=str(REPO / "runs" / "limits"))
    p.add_argument("--out", default=str(REPO / "tests" / "data" / "limits"))
    p.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    with campaign_errors("limits"):
        if args.cmd == "run":
            n = run_campaign(args.runs, scenarios=tuple(args.scenarios or SCENARIOS),
                             seeds=tuple(args.seeds or TUNING_SEEDS + TEST_SEEDS + TEST2_SEEDS), progress=not args.no_progress,
                             limit=args.limit)
            print(json.dumps({"ran": n, "runs": args.runs}))
        elif args.cmd == "fixtures":
            from tcpmodels.experiments.limits.dataset import write_fixtures

            print(json.dumps({"fixtures": len(write_fixtures(args.runs, args.out, seed=args.seed))}))
        else:
            from tcpmodels.experiments.limits.dataset import build_dataset

            prov = build_dataset(args.runs, args.out, note=args.note, allow_dirty=args.allow_dirty)
            print(json.dumps({"runs": len(prov["runs"]), "out": args.out}))
    return 0




if __name__ == "__main__":
    sys.exit(main())
