"""pairs_to_decide / reps_to_exclude search n block by block: the same n as over the whole range at once."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from tcpmodels.experiments.kernel_coupled_cc import pairs_to_decide, reps_to_exclude


def _whole_range(d: np.ndarray, margin: float, max_pairs: int, confidence: float = 0.95) -> int | None:
    """The definition: every n from the present one to max_pairs, the first whose half-width is below margin."""
    n = np.arange(d.size, max_pairs + 1)
    ok = stats.t.ppf(0.5 + confidence / 2, n - 1) * float(d.std(ddof=1)) / np.sqrt(n) < margin
    return int(n[np.argmax(ok)]) if ok.any() else None


@pytest.mark.parametrize("max_pairs", [100_000, 500, 70])
def test_block_search_finds_the_same_n_as_the_whole_range(max_pairs):
    rng = np.random.default_rng(7)
    found = []
    for _ in range(60):
        size = int(rng.integers(2, 12))
        ref = rng.uniform(1e6, 2e6, size)
        # scatter from tiny to large, mean log-ratio near and far from the thresholds: n from `size` to None
        d = rng.normal(rng.choice([0.0, 0.02, 0.06, 0.3]), rng.choice([1e-3, 0.02, 0.1, 0.5]), size)
        test = ref * np.exp(d)
        d_used = np.log(test / ref)
        m = float(d_used.mean())
        tol_margin = min(abs(m - np.log(1.05)), abs(m - np.log(0.95)))
        got = pairs_to_decide(test, ref, 0.05, max_pairs=max_pairs)
        assert got == _whole_range(d_used, tol_margin, max_pairs)
        got_t = reps_to_exclude(test, ref, 1.05, max_pairs=max_pairs)
        assert got_t == _whole_range(d_used, abs(m - np.log(1.05)), max_pairs)
        found += [got, got_t]
    # the cases cover the first block, later blocks and no n at all
    values = [v for v in found if v is not None]
    if max_pairs == 100_000:
        assert None in found and min(values) < 64 and max(values) > 400
