"""Coverage of the 95% intervals of every Hurst estimator, on fGn from an independent generator.

Run from the repository root::

    PYTHONPATH=. .venv/bin/python benchmarks/hurst_coverage.py                 # 2^12 and 2^16
    PYTHONPATH=. .venv/bin/python benchmarks/hurst_coverage.py --log2n 12 --reps 400

For H in {0.5, 0.6, 0.7, 0.8, 0.9} and each length n, ``reps`` series of
fractional Gaussian noise come from a generator that is not ours
(``tcpmodels.models.heavytail.fgn`` is not used): by default
:func:`circulant_fgn`, Davies--Harte circulant embedding written in this file
from the fGn autocovariance alone; ``--generator fbm`` uses the PyPI package
``fbm`` instead (same method by another author, slower: a Python loop per
series). Every estimator of :data:`tcpmodels.models.hurst.METHODS` runs with
its defaults on each series;
a row per (n, H, estimator) gives the bias, the standard deviation of the
estimates, the mean reported standard error, and the share of 95% intervals
that contain H with its binomial standard error. Rows are appended to
``benchmarks/results/hurst_coverage.csv`` with the machine, the load and the
package versions.

The function :func:`coverage` is what ``tests/models/test_hurst_coverage.py``
calls on fewer replicates.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import os
import platform
import subprocess
import sys
import time
from importlib import metadata
from pathlib import Path

import numpy as np
import pandas as pd

from tcpmodels.models import hurst as ours

HURSTS = (0.5, 0.6, 0.7, 0.8, 0.9)
RESULTS = Path(__file__).resolve().parent / "results" / "hurst_coverage.csv"


_GENERATORS: dict = {}


def fbm_fgn(n: int, h: float, seed: int) -> np.ndarray:
    """fGn of length n from the PyPI package ``fbm`` (Davies--Harte), seeded; not our generator.

    One ``fbm.FBM`` object per (n, H) is kept (it caches the circulant
    eigenvalues). ``fbm`` builds each series in a Python loop (about 0.5 s at
    2^16 on this machine), so it serves as the cross-check, not the bulk run.
    """
    from fbm import FBM

    gen = _GENERATORS.get((n, h))
    if gen is None:
        gen = _GENERATORS[(n, h)] = FBM(n=n, hurst=h, length=1.0, method="daviesharte")
    state = np.random.get_state()
    try:
        np.random.seed(seed)
        return np.asarray(gen.fgn(), dtype=float)
    finally:
        np.random.set_state(state)


_SQRT_EIG: dict = {}


def circulant_fgn(n: int, h: float, seed: int) -> np.ndarray:
    r"""fGn of length n by circulant embedding, written here from the fGn autocovariance alone.

    :math:`\gamma(k) = \tfrac12(|k+1|^{2H} - 2|k|^{2H} + |k-1|^{2H})`; the
    circulant of size 2n with first row
    :math:`\gamma(0..n), \gamma(n-1..1)` has eigenvalues :math:`\lambda = \mathrm{FFT}(row)`
    (all >= 0 for fGn, 0 < H < 1); with a, b iid N(0, 1),
    :math:`\mathrm{Re}\,\mathrm{FFT}(\sqrt{\lambda/2n}\,(a + ib))_{0..n-1}` has
    covariance :math:`\gamma` exactly (Davies and Harte 1987). Shares no code
    with ``tcpmodels.models.heavytail.fgn``; numpy ``default_rng(seed)``.
    """
    root = _SQRT_EIG.get((n, h))
    if root is None:
        k = np.arange(n + 1, dtype=float)
        gam = 0.5 * (np.abs(k + 1) ** (2 * h) - 2 * k ** (2 * h) + np.abs(k - 1) ** (2 * h))
        row = np.concatenate([gam, gam[-2:0:-1]])
        lam = np.fft.fft(row).real
        if lam.min() < -1e-9 * lam.max():
            raise ValueError(f"circulant embedding not nonnegative for n={n}, H={h}")
        root = _SQRT_EIG[(n, h)] = np.sqrt(np.clip(lam, 0.0, None) / (2 * n))
    rng = np.random.default_rng(seed)
    z = rng.standard_normal(2 * n) + 1j * rng.standard_normal(2 * n)
    return np.fft.fft(root * z).real[:n]


GENERATORS = {"circulant": circulant_fgn, "fbm": fbm_fgn}


def coverage(n: int, hursts=HURSTS, reps: int = 200, methods=None, seed: int = 0,
             confidence_level: float = 0.95, generator: str = "circulant") -> pd.DataFrame:
    """One row per (H, method): bias, sd, mean stderr, coverage and its binomial SE, seconds per call."""
    make = GENERATORS[generator]
    names = tuple(ours.METHODS) if methods is None else tuple(methods)
    rows = []
    for h in hursts:
        est = {m: [] for m in names}
        se = {m: [] for m in names}
        hit = {m: [] for m in names}
        secs = {m: 0.0 for m in names}
        flagged = {m: False for m in names}
        for rep in range(reps):
            x = make(n, h, seed=(seed * 1_000_003 + int(round(h * 100)) * 10_007 + int(np.log2(n))
                                            * 100_003 + rep) % 2**32)
            for m in names:
                t0 = time.perf_counter()
                r = ours.METHODS[m](x)
                secs[m] += time.perf_counter() - t0
                lo, hi = r.confidence_interval(confidence_level)
                est[m].append(r.hurst)
                se[m].append(r.stderr)
                hit[m].append(lo <= h <= hi)
                flagged[m] |= bool(getattr(r, "biased", False))
        for m in names:
            e = np.asarray(est[m])
            cov = float(np.mean(hit[m]))
            rows.append(dict(n=n, H=h, method=m, generator=generator, reps=reps, bias=float(e.mean() - h),
                             bias_se=float(e.std(ddof=1) / np.sqrt(reps)), sd=float(e.std(ddof=1)),
                             mean_stderr=float(np.mean(se[m])), cover95=cov,
                             cover_se=float(np.sqrt(max(cov * (1 - cov), 0.95 * 0.05) / reps)),
                             flagged_biased=flagged[m], s_per_call=secs[m] / reps))
    return pd.DataFrame(rows)


def _version(pkg: str) -> str:
    try:
        return metadata.version(pkg)
    except metadata.PackageNotFoundError:
        return "absent"


def environment() -> dict:
    """Machine, load and versions stamped on every appended row."""
    try:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                                cwd=Path(__file__).resolve().parent, check=False).stdout.strip()
    except OSError:
        commit = ""
    return dict(date_utc=_dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
                host=platform.node(), machine=platform.machine(), cpus=os.cpu_count(),
                load1=round(os.getloadavg()[0], 2), python=platform.python_version(), numpy=np.__version__,
                scipy=_version("scipy"), pywavelets=_version("PyWavelets"), fbm=_version("fbm"),
                tcpmodels_commit=commit)


def append_results(df: pd.DataFrame, path: Path = RESULTS) -> None:
    env = environment()
    out = df.assign(**env)
    path.parent.mkdir(parents=True, exist_ok=True)
    out.to_csv(path, mode="a", header=not path.exists(), index=False)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--log2n", type=int, nargs="+", default=[12, 16], help="series lengths as powers of 2")
    ap.add_argument("--reps", type=int, default=300, help="replicates per (n, H)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--generator", choices=sorted(GENERATORS), default="circulant",
                    help="circulant: written here from the fGn autocovariance; fbm: the PyPI package (slow)")
    ap.add_argument("--no-save", action="store_true", help="print only, do not append to the CSV")
    args = ap.parse_args(argv)
    pd.set_option("display.width", 200)
    for k in args.log2n:
        t0 = time.perf_counter()
        df = coverage(2**k, reps=args.reps, seed=args.seed, generator=args.generator)
        print(f"n = 2^{k}: {time.perf_counter() - t0:.0f} s wall", file=sys.stderr, flush=True)
        print(df.to_string(index=False, float_format=lambda v: f"{v:.4f}"), flush=True)
        if not args.no_save:
            append_results(df)
    return 0


if __name__ == "__main__":
    sys.exit(main())
