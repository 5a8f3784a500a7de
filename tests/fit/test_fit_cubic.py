"""CUBIC epoch detection and the C / beta_cubic fit on synthetic window trajectories with known parameters."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from tcpmodels.fit.cubic import (
    cubic_epoch_window_segments,
    cwnd_epochs,
    fit_cubic,
    fit_epoch_k,
    predicted_regrowth_s,
    w_origin_segments,
)
from tcpmodels.models.cubic import cubic_k_s


def synthetic(w_priors, *, c=0.4, beta=0.7, rtt_s=0.1, dt_s=0.01, recovery_samples=2, reno_friendly=True,
              fast_convergence=True, integer=True):
    """TCP_INFO-like samples: each epoch follows RFC 9438's window until it reaches the next epoch's w_prior,
    where a loss occurs (Recovery state for a few samples, ssthresh = beta * cwnd)."""
    origins = w_origin_segments(w_priors, beta, fast_convergence=fast_convergence)
    t, rows = 0.0, []
    for k, (wp, wo) in enumerate(zip(w_priors[:-1], origins[:-1])):
        ss = np.floor(beta * wp) if integer else beta * wp
        for _ in range(recovery_samples):
            rows.append((t, wp, ss, rtt_s, 3))
            t += dt_s
        tau = 0.0
        target = w_priors[k + 1]
        while True:
            w = cubic_epoch_window_segments(tau, wp, wo, rtt_s, c, beta, reno_friendly=reno_friendly)
            w = np.floor(w) if integer else w
            w = max(w, ss)
            rows.append((t, w, ss, rtt_s, 0))
            t += dt_s
            tau += dt_s
            if w >= target:
                break
    return pd.DataFrame(rows, columns=["t_s", "cwnd_segments", "ssthresh_segments", "srtt_s", "ca_state"])


W_PRIORS = [200, 180, 190, 210, 170, 200, 185, 205, 195, 190, 175, 200]


def test_epochs_found_with_their_reduction_and_regrowth():
    s = synthetic([100.0] * 6, reno_friendly=False, fast_convergence=False, integer=False)
    ep = cwnd_epochs(s["t_s"], s["cwnd_segments"], s["ssthresh_segments"], s["ca_state"], s["srtt_s"])
    assert len(ep) == 5
    assert np.allclose(ep["beta_obs"], 0.7)
    assert np.allclose(ep["w_prior_segments"], 100.0)
    # K observed vs cubic_k_s: the curve reaches W_max at K exactly; the 10 ms sampling rounds up
    k = cubic_k_s(100.0)
    assert ep["k_obs_s"].between(k - 1e-9, k + 0.0101).all()
    assert not ep["after_timeout"].any()


def test_fit_recovers_c_and_beta_from_a_kernel_like_trajectory():
    s = synthetic(W_PRIORS, c=0.4, beta=0.7)
    ep = cwnd_epochs(s["t_s"], s["cwnd_segments"], s["ssthresh_segments"], s["ca_state"], s["srtt_s"])
    assert len(ep) == len(W_PRIORS) - 1
    fit = fit_cubic(ep, s, n_boot=20, rng=np.random.default_rng(1))
    assert fit.c == pytest.approx(0.4, rel=0.05)
    assert fit.beta_cubic == pytest.approx(0.7, abs=0.01)
    assert fit.c_ci[0] <= fit.c <= fit.c_ci[1] and fit.beta_ci[0] <= fit.beta_cubic <= fit.beta_ci[1]
    # 100 ms RTT, W ~ 200: the cubic curve governs, W_est only near the fast-convergence plateau
    assert fit.reno_friendly_share < 0.3
    # integer windows (floor) bias the directly observed reduction slightly below beta
    assert 0.69 <= fit.beta_obs_mean <= 0.7


@pytest.mark.parametrize("c, beta", [(0.2, 0.8), (1.0, 0.6)])
def test_fit_recovers_other_constants(c, beta):
    s = synthetic(W_PRIORS, c=c, beta=beta, integer=False)
    ep = cwnd_epochs(s["t_s"], s["cwnd_segments"], s["ssthresh_segments"], s["ca_state"], s["srtt_s"])
    fit = fit_cubic(ep, s, n_boot=0)
    assert fit.c == pytest.approx(c, rel=0.02) and fit.beta_cubic == pytest.approx(beta, abs=0.005)


def test_small_bdp_is_reno_friendly_and_c_is_not_identified():
    s = synthetic([16, 15, 17, 16, 15, 16, 17, 16, 15, 16], rtt_s=0.005)
    ep = cwnd_epochs(s["t_s"], s["cwnd_segments"], s["ssthresh_segments"], s["ca_state"], s["srtt_s"])
    fit = fit_cubic(ep, s, n_boot=0)
    # most samples lie where W_est exceeds the cubic curve, so the data hardly constrain C
    assert fit.reno_friendly_share > 0.75
    # observed regrowth is far shorter than K: W_est (0.53 segments per 5 ms RTT) wins
    k_rfc = cubic_k_s(ep["w_prior_segments"])
    assert (ep["k_obs_s"].dropna() < 0.2 * k_rfc[ep["k_obs_s"].notna()]).all()
    pred = predicted_regrowth_s(ep["w_prior_segments"], ep["w_prior_segments"], 0.005)
    assert np.nanmax(np.abs(pred - ep["k_obs_s"])) < 0.03


def test_multiple_runs_are_kept_apart():
    a = synthetic(W_PRIORS[:6]).assign(run="a")
    b = synthetic(W_PRIORS[6:]).assign(run="b")
    samples = pd.concat([a, b], ignore_index=True)
    eps = []
    for r, g in samples.groupby("run"):
        e = cwnd_epochs(g["t_s"], g["cwnd_segments"], g["ssthresh_segments"], g["ca_state"], g["srtt_s"])
        eps.append(e.assign(run=r))
    fit = fit_cubic(pd.concat(eps, ignore_index=True), samples, n_boot=0)
    assert fit.c == pytest.approx(0.4, rel=0.05) and fit.n_epochs == 4 + 4


def test_timeout_epoch_flagged_and_bad_input():
    s = synthetic([100.0, 100.0, 100.0], reno_friendly=False, fast_convergence=False)
    s.loc[s.index[s["ca_state"] == 3][2:3], "cwnd_segments"] = 1  # cwnd 1 during the second loss: a timeout
    ep = cwnd_epochs(s["t_s"], s["cwnd_segments"], s["ssthresh_segments"], s["ca_state"], s["srtt_s"])
    assert ep["after_timeout"].tolist() == [False, True]
    with pytest.raises(ValueError, match="at least two usable epochs"):
        fit_cubic(ep, s)
    with pytest.raises(ValueError, match="strictly increasing"):
        cwnd_epochs([0, 0], [1, 2], [3, 3])
    with pytest.raises(ValueError, match="one length"):
        cwnd_epochs([0, 1], [1], [3, 3])


def test_epoch_inflection_time_matches_k_with_fast_convergence():
    s = synthetic(W_PRIORS, reno_friendly=False, integer=False)
    ep = cwnd_epochs(s["t_s"], s["cwnd_segments"], s["ssthresh_segments"], s["ca_state"], s["srtt_s"])
    origin = w_origin_segments(np.array(W_PRIORS, float), 0.7)[: len(ep)]  # the true plateaus
    k_fc = np.cbrt((origin - 0.7 * np.array(W_PRIORS[: len(ep)], float)) / 0.4)
    for i, e in ep.iterrows():
        seg = s.iloc[int(e["first_index"]): int(e["last_index"]) + 1]
        k, w0 = fit_epoch_k(seg["t_s"] - e["start_s"], seg["cwnd_segments"], 0.4)
        assert k == pytest.approx(k_fc[i], abs=0.02) and w0 == pytest.approx(origin[i], rel=1e-3)
    assert np.isnan(fit_epoch_k([0, 1], [1, 2])[0])
