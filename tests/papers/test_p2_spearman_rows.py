"""P2's bootstrap of the Spearman drop, all resamples at once: bit for bit the values of one call each."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import spearmanr

from tcpmodels.papers.p2_mptcp_prediction.claims import _rho_drop, _spearman, _spearman_rows


def _rows(rng, n_rows, n):
    x = rng.normal(size=(n_rows, n))
    y = 0.5 * x + rng.normal(size=(n_rows, n))
    x[::3] = np.round(x[::3], 1)           # ties
    y[1::4] = np.round(y[1::4])            # many ties
    x[5] = 2.0                             # a constant row: scipy's answer (NaN, with its warning)
    y[7, 2] = np.nan                       # a NaN: scipy's answer
    return x, y


@pytest.mark.parametrize("n", [3, 4, 17, 60])
def test_rows_equal_one_call_per_row_bit_for_bit(n):
    rng = np.random.default_rng(n)
    x, y = _rows(rng, 40, n)
    with np.errstate(invalid="ignore"), pytest.warns(Warning):  # the constant row: scipy warns, as one call would
        got = _spearman_rows(x, y)
    with np.errstate(invalid="ignore"), pytest.warns(Warning):
        want = np.array([_spearman(a, b) for a, b in zip(x, y)])
    np.testing.assert_array_equal(got, want)  # NaN where scipy gives NaN, else identical floats
    ok = ~np.isnan(x).any(axis=1) & ~np.isnan(y).any(axis=1) & (x != x[:, :1]).any(axis=1)
    np.testing.assert_allclose(got[ok], [spearmanr(a, b)[0] for a, b in zip(x[ok], y[ok])], rtol=1e-12)


def test_rho_drop_vectorized_matches_its_scalar_form():
    rng = np.random.default_rng(1)
    data = [rng.normal(size=(25, 12)) for _ in range(4)]
    data[1] = np.round(data[1], 1)
    batched = _rho_drop(*data, axis=-1)
    single = np.array([_rho_drop(*(d[i] for d in data)) for i in range(25)])
    np.testing.assert_array_equal(batched, single)
    assert isinstance(_rho_drop(*(d[0] for d in data)), float)
    np.testing.assert_array_equal(_rho_drop(*(d.T for d in data), axis=0), batched)
