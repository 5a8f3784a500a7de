"""Coverage of the Hurst estimators' 95% intervals on fGn from an independent generator.

The measurement is ``benchmarks/hurst_coverage.py`` (400 replicates per cell);
here the same function runs on fewer replicates, and the tolerance is three
binomial standard errors of a 95% coverage at that replicate count.
"""

import importlib.util
from pathlib import Path

import numpy as np
import pytest

from tcpmodels.models import hurst

_PATH = Path(__file__).resolve().parents[2] / "benchmarks" / "hurst_coverage.py"
_spec = importlib.util.spec_from_file_location("hurst_coverage", _PATH)
hc = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(hc)


@pytest.mark.parametrize("h", [0.5, 0.7, 0.9])
def test_circulant_generator_has_the_fgn_autocovariance(h):
    reps, n = 200, 512
    xs = np.array([hc.circulant_fgn(n, h, seed) for seed in range(reps)])
    for k in (0, 1, 5, 20):
        sample = np.mean(xs[:, : n - k] * xs[:, k:], axis=1)  # per replicate, mean zero known
        gamma = 0.5 * (abs(k + 1) ** (2 * h) - 2 * k ** (2 * h) + abs(k - 1) ** (2 * h))
        se = sample.std(ddof=1) / np.sqrt(reps)
        assert abs(sample.mean() - gamma) < 4 * se + 1e-12, (h, k, sample.mean(), gamma, se)


REPS = 100
SE95 = np.sqrt(0.95 * 0.05 / REPS)  # binomial standard error of a 95% coverage


@pytest.mark.slow
def test_unflagged_estimators_cover_90_to_97_percent():
    df = hc.coverage(2**12, reps=REPS, methods=("whittle", "wavelet", "periodogram", "dfa"), seed=11)
    lo, hi = 0.90 - 3 * SE95, 0.97 + 3 * SE95
    bad = df[(df["cover95"] < lo) | (df["cover95"] > hi)]
    assert bad.empty, bad[["H", "method", "cover95"]].to_string()


@pytest.mark.parametrize(("method", "h"), [("rs", 0.5), ("rs", 0.9), ("aggvar", 0.9)])
def test_biased_estimators_flag_the_results_their_interval_misses(method, h):
    misses = flagged_misses = 0
    for seed in range(30):
        r = hurst.METHODS[method](hc.circulant_fgn(2**12, h, 500 + seed))
        lo, hi = r.confidence_interval(0.95)
        if not lo <= h <= hi:
            misses += 1
            flagged_misses += r.biased
            assert r.bias_note.startswith(method)
    assert misses > 0  # the bias is real at this H (measured coverage 58-69%)
    assert flagged_misses == misses


def test_unbiased_range_is_not_flagged():
    r = hurst.hurst_aggvar(hc.circulant_fgn(2**16, 0.5, 3))
    assert r.hurst < 0.6 and not r.biased and r.bias_note == ""
    assert r.to_dict()["biased"] is False
