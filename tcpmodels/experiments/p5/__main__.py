"""Command line of the P5 campaigns: ``run`` (the ns-3 sweep, resumable) and ``dataset``; ``kernel`` (the kernel
testbed runs, resumable) and ``kernel-dataset``."""

from __future__ import annotations

import json
from dataclasses import replace

from tcpmodels.experiments.campaign_cli import add_allow_dirty, campaign_errors, campaign_parser
from tcpmodels.experiments.p5 import __doc__ as package_doc
from tcpmodels.experiments.p5.config import CASES, DEFAULT_CONFIG, REPO
from tcpmodels.experiments.p5.dataset import build_dataset, shipped_run_ids
from tcpmodels.experiments.p5.kernel_config import DEFAULT_KERNEL_CONFIG
from tcpmodels.experiments.p5.runs import run_campaign

__all__ = ["main"]


def _add_kernel_commands(sub) -> None:
    """``kernel`` (one testbed run per alpha and seed) and ``kernel-dataset`` (its Parquet tables)."""
    p = sub.add_parser("kernel", help="kernel testbed: one run per alpha and seed (root; resumable)")
    p.add_argument("--runs", default=str(REPO / "runs" / "p5_testbed"))
    p.add_argument("--duration-s", type=float, help=f"default {DEFAULT_KERNEL_CONFIG.duration_s:g}")
    p.add_argument("--alphas", type=float, nargs="+")
    p.add_argument("--seeds", type=int, nargs="+", help=f"run seeds per alpha; default {DEFAULT_KERNEL_CONFIG.seeds}")
    p.add_argument("--skip-shipped", action="store_true",
                   help="leave out the (alpha, seed) runs already in the shipped dataset (--out)")
    p.add_argument("--out", default=str(REPO / "data" / "datasets"), help="the shipped dataset (for --skip-shipped)")
    p.add_argument("--no-progress", action="store_true")
    p = sub.add_parser("kernel-dataset", help="kernel testbed results -> data/datasets/p5_testbed_* + provenance")
    p.add_argument("--runs", default=str(REPO / "runs" / "p5_testbed"))
    p.add_argument("--out", default=str(REPO / "data" / "datasets"))
    p.add_argument("--duration-s", type=float)
    p.add_argument("--alphas", type=float, nargs="+")
    p.add_argument("--seeds", type=int, nargs="+")
    p.add_argument("--note", default="")
    p.add_argument("--no-merge", action="store_true",
                   help="drop the rows of the dataset in --out that the runs folder lacks (default: keep them)")
    add_allow_dirty(p)


def _kernel_main(args) -> int:
    """Run ``kernel`` or ``kernel-dataset`` and print a one-line JSON summary."""
    from tcpmodels.experiments.p5.kernel import run_kernel_campaign
    from tcpmodels.experiments.p5.kernel_dataset import build_kernel_dataset, shipped_kernel_keys

    with campaign_errors("p5"):
        config = DEFAULT_KERNEL_CONFIG
        if args.duration_s:
            config = replace(config, duration_s=args.duration_s)
        if args.alphas:
            config = replace(config, alphas=tuple(args.alphas))
        if args.seeds:
            config = replace(config, seeds=tuple(args.seeds))
        if args.cmd == "kernel":
            skip = shipped_kernel_keys(args.out) if args.skip_shipped else set()
            n = run_kernel_campaign(args.runs, config, progress=not args.no_progress, skip=skip)
            print(json.dumps({"ran": n, "runs": args.runs}))
        else:
            prov = build_kernel_dataset(args.runs, args.out, config, note=args.note, allow_dirty=args.allow_dirty,
                                        merge=not args.no_merge)
            print(json.dumps({"runs": len(prov["runs"]), "out": args.out}))
    return 0


def main(argv: list[str] | None = None) -> int:
    """Command line: ``run`` (ns-3 sweep, resumable), ``dataset``, ``kernel`` (testbed, resumable), ``kernel-dataset``.

    Parameters
    ----------
    argv : list of str, optional
        The arguments; None: ``sys.argv[1:]``.

    Returns
    -------
    int
        0 (a one-line JSON summary is printed); expected failures exit through
        :func:`~tcpmodels.experiments.campaign_cli.campaign_errors`.
    """
    parser, sub = campaign_parser("p5", package_doc)
    p = sub.add_parser("run", help="run or resume the sweep (cached runs are skipped)")
    p.add_argument("--cases", default=",".join(CASES), help=f"comma-separated subset of {','.join(CASES)}")
    p.add_argument("--seeds", help="seeds of the main grid, e.g. 0,1,2")
    p.add_argument("--cache", default=str(REPO / "runs" / "p5" / "cache"))
    p.add_argument("--workers", type=int, default=1)
    p.add_argument("--limit", type=int)
    p.add_argument("--long-seeds", help="seeds of the 300 s Hurst runs (case long), e.g. 0,1,2")
    p.add_argument("--altq-seeds", help="seeds of the small S queue (case alt_server_queue), e.g. 0,1,2,3: the "
                                        "first runs every client count, the others the 32-client runs")
    p.add_argument("--skip-shipped", action="store_true",
                   help="leave out the runs already in the shipped dataset (--out); `dataset` keeps their rows")
    p.add_argument("--out", default=str(REPO / "data" / "datasets"), help="the shipped dataset (for --skip-shipped)")
    p.add_argument("--no-progress", action="store_true")
    p = sub.add_parser("dataset", help="cached runs -> data/datasets/p5_*.parquet + provenance")
    p.add_argument("--cache", default=str(REPO / "runs" / "p5" / "cache"))
    p.add_argument("--out", default=str(REPO / "data" / "datasets"))
    p.add_argument("--seeds", help="seeds of the main grid to collect")
    p.add_argument("--long-seeds", help="seeds of the 300 s Hurst runs to collect")
    p.add_argument("--altq-seeds", help="seeds of the small S queue (case alt_server_queue) to collect")
    p.add_argument("--no-merge", action="store_true",
                   help="drop the rows of the dataset in --out that the cache does not hold (default: keep them)")
    p.add_argument("--note", default="")
    add_allow_dirty(p)
    _add_kernel_commands(sub)
    args = parser.parse_args(argv)
    if args.cmd in ("kernel", "kernel-dataset"):
        return _kernel_main(args)
    seeds = tuple(int(s) for s in args.seeds.split(",")) if args.seeds else None
    config = DEFAULT_CONFIG if seeds is None else replace(DEFAULT_CONFIG, seeds=seeds)
    if args.long_seeds:
        config = replace(config, long_seeds=tuple(int(s) for s in args.long_seeds.split(",")))
    if args.altq_seeds:
        config = replace(config, altq_seeds=tuple(int(s) for s in args.altq_seeds.split(",")))
    with campaign_errors("p5"):
        if args.cmd == "run":
            cases = tuple(c.strip() for c in args.cases.split(",") if c.strip())
            skip = shipped_run_ids(args.out) if args.skip_shipped else set()
            entry = run_campaign(config, cases=cases, cache_dir=args.cache, n_workers=args.workers,
                                 progress=not args.no_progress, limit=args.limit, skip=skip)
            print(json.dumps(entry))
        else:
            prov = build_dataset(config, cache_dir=args.cache, out_dir=args.out, note=args.note,
                                 allow_dirty=args.allow_dirty, merge=not args.no_merge)
            print(json.dumps({k: prov[k] for k in ("n_runs", "n_runs_from_cache", "runs_by_case", "campaign_wall_s")}
                             | {"kept_from_shipped": prov["kept_from_shipped"]["n_runs"]}
                             | {"missing": len(prov["missing_runs"])}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
