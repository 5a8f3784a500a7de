"""Hurst estimators on exact fractional Gaussian noise: bias, RMSE, CI coverage, speed, peers.

Run from the repository root::

    .venv/bin/python benchmarks/hurst.py            # full: ~8 min of one core
    .venv/bin/python benchmarks/hurst.py --quick    # ~1 min, fewer replicates
    .venv/bin/python benchmarks/hurst.py --calibrate

For H in {0.6, 0.75, 0.9} and n in {2^16, 2^20}, seeded replicates of exact
fGn go through each of our six estimators and, on the same series in the same
run, through the peers ``hurst.compute_Hc`` (PyPI ``hurst``),
``nolds.hurst_rs`` / ``nolds.dfa`` (nolds 0.6.2) and the compiled DFA peers
``fathon.DFA`` and ``MFDFA.MFDFA`` (q = 2, order 1), the DFA peers on our
window sizes (16 .. n/4, 20 log-spaced). The truth comes from a generator that
is not ours: ``circulant_fgn`` of ``benchmarks/hurst_coverage.py``
(Davies--Harte written from the fGn autocovariance), not
``tcpmodels.models.heavytail.fgn``. Peers are slow, so they run on fewer
replicates (nolds.dfa only at 2^16); the table says how many, and the seconds
printed are measured in this run. ``agreement`` gives, per pair, the mean and
largest |ours - peer| on the same series. The summary is appended to
``benchmarks/results/hurst.csv`` with the machine and package versions. Seconds are CPU seconds of
this process per call (``time.process_time``), which is what a call costs on a
shared machine; wall seconds are printed beside them.

``--calibrate`` measures the standard deviation of the R/S, aggregated
variance and DFA estimators for n = 2^10 .. 2^18 and prints the constants
``(a, b, c)`` of ln sd = a + b ln n + c H that ``tcpmodels.models.hurst._CALIBRATED_SD`` holds.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import warnings

# This file is called hurst.py: keep its folder off sys.path so that
# "import hurst" below finds the PyPI package, not this script.
_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:] = [p for p in sys.path if os.path.abspath(p or os.curdir) != _HERE]

import importlib.util as _ilu  # noqa: E402

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from tcpmodels.models import hurst as ours  # noqa: E402
from tcpmodels.models.heavytail import fgn  # noqa: E402

_spec = _ilu.spec_from_file_location("hurst_coverage", os.path.join(_HERE, "hurst_coverage.py"))
hurst_coverage = _ilu.module_from_spec(_spec)
_spec.loader.exec_module(hurst_coverage)
RESULTS = os.path.join(_HERE, "results", "hurst.csv")

HURSTS = (0.6, 0.75, 0.9)
BIAS_TARGET = 0.01
BIAS_TARGET_METHODS = ("whittle", "wavelet", "periodogram", "dfa")
COVERAGE_RANGE = (0.90, 0.97)
SECONDS_TARGET = 0.2


def _peers() -> dict[str, callable]:
    import hurst as hurst_pypi  # PyPI package "hurst"
    import nolds

    def compute_hc(x):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return float(hurst_pypi.compute_Hc(x, kind="change", simplified=False)[0])

    def nolds_rs(x):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return float(nolds.hurst_rs(x))

    def nolds_dfa(x):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return float(nolds.dfa(x))

    def dfa_sizes(n):
        return np.unique(np.round(np.geomspace(16, n // 4, 20)).astype(np.int64))

    def fathon_dfa(x):
        import fathon
        from fathon import fathonUtils

        d = fathon.DFA(fathonUtils.toAggregated(np.asarray(x, dtype=float)))
        d.computeFlucVec(dfa_sizes(len(x)), revSeg=False, polOrd=1)
        return float(d.fitFlucVec()[0])

    def mfdfa_dfa(x):
        from MFDFA import MFDFA

        lag, f = MFDFA(np.asarray(x, dtype=float), lag=dfa_sizes(len(x)), q=2, order=1)
        return float(np.polyfit(np.log(lag), np.log(f[:, 0]), 1)[0])

    return {"hurst.compute_Hc": compute_hc, "nolds.hurst_rs": nolds_rs, "nolds.dfa": nolds_dfa,
            "fathon.DFA": fathon_dfa, "MFDFA": mfdfa_dfa}


def _series(h: float, n: int, rep: int) -> np.ndarray:
    seed = int(round(h * 1000)) * 1_000_003 + int(np.log2(n)) * 10_007 + rep
    return hurst_coverage.circulant_fgn(n, h, seed)


def _timed(func, x):
    c0, w0 = time.process_time(), time.perf_counter()
    out = func(x)
    return out, time.process_time() - c0, time.perf_counter() - w0


def run(plan: dict[int, dict[str, int]]) -> pd.DataFrame:
    """plan[n] = {"ours": reps, peer name: reps}; returns one row per call."""
    peers = _peers()
    rows = []
    for n, reps in plan.items():
        for h in HURSTS:
            t0 = time.perf_counter()
            for rep in range(max(reps.values())):
                x = _series(h, n, rep)
                if rep < reps["ours"]:
                    for name, func in ours.METHODS.items():
                        res, cpu, wall = _timed(func, x)
                        lo, hi = res.confidence_interval(0.95)
                        rows.append(dict(n=n, H=h, rep=rep, method=name, peer=False, estimate=res.hurst,
                                         stderr=res.stderr, covered=lo <= h <= hi, cpu_s=cpu, wall_s=wall))
                for name, func in peers.items():
                    if rep < reps.get(name, 0):
                        est, cpu, wall = _timed(func, x)
                        rows.append(dict(n=n, H=h, rep=rep, method=name, peer=True, estimate=est,
                                         stderr=np.nan, covered=np.nan, cpu_s=cpu, wall_s=wall))
            print(f"  n=2^{int(np.log2(n))} H={h}: {time.perf_counter() - t0:.0f} s", file=sys.stderr, flush=True)
    return pd.DataFrame(rows)


def summarise(df: pd.DataFrame) -> pd.DataFrame:
    def agg(g):
        err = g["estimate"] - g["H"]
        return pd.Series({
            "reps": len(g),
            "bias": err.mean(),
            "bias_se": g["estimate"].std(ddof=1) / np.sqrt(len(g)),
            "sd": g["estimate"].std(ddof=1),
            "rmse": np.sqrt((err**2).mean()),
            "mean_se": g["stderr"].mean(),
            "cover95": g["covered"].astype(float).mean() if not g["peer"].iloc[0] else np.nan,
            "cpu_s": g["cpu_s"].median(),
            "wall_s": g["wall_s"].median(),
        })

    order = list(ours.METHODS) + ["hurst.compute_Hc", "nolds.hurst_rs", "nolds.dfa", "fathon.DFA", "MFDFA"]
    out = df.groupby(["n", "H", "method"], sort=False)[list(df.columns)].apply(agg).reset_index()
    out["method"] = pd.Categorical(out["method"], order, ordered=True)
    out["n"] = out["n"].map(lambda v: f"2^{int(np.log2(v))}")
    return out.sort_values(["n", "H", "method"]).reset_index(drop=True)


PAIRS = [("rs", "hurst.compute_Hc"), ("rs", "nolds.hurst_rs"), ("dfa", "nolds.dfa"), ("dfa", "fathon.DFA"),
         ("dfa", "MFDFA"),
         ("whittle", "hurst.compute_Hc"), ("whittle", "nolds.hurst_rs"), ("whittle", "nolds.dfa")]


def ratios(df: pd.DataFrame) -> pd.DataFrame:
    """Our seconds / peer seconds and our RMSE / peer RMSE, on the replicates both ran."""
    rows = []
    for (n, h), g in df.groupby(["n", "H"]):
        for mine, peer in PAIRS:
            p = g[g["method"] == peer]
            if p.empty:
                continue
            m = g[(g["method"] == mine) & g["rep"].isin(p["rep"])]
            if m.empty:
                continue
            rmse = lambda s: float(np.sqrt(((s["estimate"] - h) ** 2).mean()))  # noqa: E731
            both = m.set_index("rep")["estimate"] - p.set_index("rep")["estimate"]
            rows.append(dict(n=f"2^{int(np.log2(n))}", H=h, ours=mine, peer=peer, reps=len(p),
                             mean_abs_diff=float(both.abs().mean()), max_abs_diff=float(both.abs().max()),
                             cpu_ratio=m["cpu_s"].median() / p["cpu_s"].median(),
                             rmse_ours=rmse(m), rmse_peer=rmse(p), rmse_ratio=rmse(m) / rmse(p)))
    return pd.DataFrame(rows)


def check_targets(summary: pd.DataFrame) -> list[str]:
    lines = []
    mine = summary[summary["method"].isin(list(ours.METHODS))]
    big = mine[mine["n"] == "2^20"]
    for _, r in big.iterrows():
        ok = r["cpu_s"] <= SECONDS_TARGET
        lines.append(f"{'ok  ' if ok else 'MISS'} time   {r['method']:<12} H={r['H']:<5} "
                     f"{r['cpu_s']:.3f} s <= {SECONDS_TARGET}")
    for _, r in mine.iterrows():
        if r["method"] in BIAS_TARGET_METHODS:
            ok = abs(r["bias"]) <= BIAS_TARGET
            lines.append(f"{'ok  ' if ok else 'MISS'} bias   {r['method']:<12} H={r['H']:<5} n={r['n']:<5} "
                         f"{r['bias']:+.4f} +- {r['bias_se']:.4f} (Monte Carlo SE)")
    for _, r in mine.iterrows():
        # "ok~": outside 90-97% but within 2 binomial standard errors of the range (Monte Carlo noise)
        se = np.sqrt(0.95 * 0.05 / r["reps"])
        ok = COVERAGE_RANGE[0] <= r["cover95"] <= COVERAGE_RANGE[1]
        near = COVERAGE_RANGE[0] - 2 * se <= r["cover95"] <= COVERAGE_RANGE[1] + 2 * se
        tag = "ok  " if ok else "ok~ " if near else "MISS"
        lines.append(f"{tag} cover  {r['method']:<12} H={r['H']:<5} n={r['n']:<5} "
                     f"{r['cover95']:.3f} ({int(r['reps'])} reps, binomial SE {se:.3f})")
    return lines


def calibrate(reps: int) -> None:
    rows = []
    for log2n in (10, 12, 14, 16, 18):
        n = 2**log2n
        for h in HURSTS:
            est = {m: [] for m in ("rs", "aggvar", "dfa")}
            for rep in range(reps):
                x = fgn(n, h, np.random.default_rng([7, log2n, int(h * 1000), rep]))
                for m in est:
                    est[m].append(ours.METHODS[m](x).hurst)
            for m, v in est.items():
                rows.append(dict(method=m, n=n, H=h, bias=np.mean(v) - h, sd=np.std(v, ddof=1)))
        print(f"  n=2^{log2n} done", file=sys.stderr, flush=True)
    df = pd.DataFrame(rows)
    print(df.to_string(index=False, float_format=lambda v: f"{v:.4f}"))
    print("\n_CALIBRATED_SD = {  # ln sd = a + b ln n + c H")
    for m, g in df.groupby("method", sort=False):
        design = np.column_stack([np.ones(len(g)), np.log(g["n"]), g["H"]])
        coef = np.linalg.lstsq(design, np.log(g["sd"]), rcond=None)[0]
        misfit = np.max(np.abs(np.exp(design @ coef) / g["sd"] - 1))
        print(f'    "{m}": ({coef[0]:.4f}, {coef[1]:.4f}, {coef[2]:.4f}),  # largest misfit {misfit:.0%}')
    print("}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="few replicates (about a minute)")
    ap.add_argument("--calibrate", action="store_true", help="measure the SD of R/S, aggvar, DFA instead")
    ap.add_argument("--reps", type=int, default=None,
                    help="replicates of our estimators at 2^16 (default 200, quick 20; calibrate 100)")
    args = ap.parse_args(argv)
    if args.calibrate:
        calibrate(args.reps or 100)
        return 0
    if args.quick:
        plan = {2**16: {"ours": args.reps or 20, "hurst.compute_Hc": 2, "nolds.hurst_rs": 5, "nolds.dfa": 1,
                        "fathon.DFA": 5, "MFDFA": 5},
                2**20: {"ours": 4, "hurst.compute_Hc": 0, "nolds.hurst_rs": 2, "fathon.DFA": 2, "MFDFA": 2}}
    else:
        plan = {2**16: {"ours": args.reps or 200, "hurst.compute_Hc": 10, "nolds.hurst_rs": 20, "nolds.dfa": 3,
                        "fathon.DFA": 20, "MFDFA": 20},
                2**20: {"ours": 100, "hurst.compute_Hc": 2, "nolds.hurst_rs": 10, "fathon.DFA": 5, "MFDFA": 5}}
    print("plan (replicates per H):", {f"2^{int(np.log2(k))}": v for k, v in plan.items()})
    print("nolds.dfa: 2^16 only (its measured seconds per call are in the table below)")
    df = run(plan)
    summary = summarise(df)
    pd.set_option("display.width", 200)
    print("\nPer estimator (bias = mean(H_hat) - H; cover95 = share of 95% intervals containing H;"
          " cpu_s = median CPU seconds per call)")
    print(summary.to_string(index=False, float_format=lambda v: f"{v:.4f}"))
    print("\nRatios on the replicates both ran (cpu_ratio = our s / peer s; rmse_ratio = our RMSE / peer RMSE;"
          " mean/max_abs_diff = |ours - peer| on the same series)")
    rat = ratios(df)
    print(rat.to_string(index=False, float_format=lambda v: f"{v:.4g}"))
    env = hurst_coverage.environment()
    env.update({f"v_{k}": hurst_coverage._version(k) for k in ("nolds", "hurst", "fathon", "MFDFA")})
    os.makedirs(os.path.dirname(RESULTS), exist_ok=True)
    out = pd.concat([summary.assign(table="estimator"), rat.assign(table="pair")], ignore_index=True)
    out.assign(quick=bool(args.quick), **env).to_csv(RESULTS, mode="a", header=not os.path.exists(RESULTS),
                                                      index=False)
    print(f"\nappended to {RESULTS}")
    print("\nNotes: R/S and the aggregated variance are biased for finite n (R/S high at H = 0.6, both low at"
          " H = 0.9; Taqqu, Teverovsky, Willinger 1995); their intervals carry the calibrated sd only, so"
          " they miss there. Shown, not corrected. Peers give no standard error (no coverage column).")
    print("\nTargets (time at 2^20 <= 0.2 CPU s; |bias| <= 0.01 for whittle, wavelet, periodogram, dfa;"
          " 95% coverage in 90-97%)")
    print("\n".join(check_targets(summary)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
