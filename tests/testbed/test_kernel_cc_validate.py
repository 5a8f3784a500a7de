"""The estimators of the kernel_cc validation on synthetic data (no kernel, no root): K from a
cwnd trajectory, the paired ratio with its confidence interval, and the claims judged through ClaimSpec."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from tcpmodels.experiments.kernel_coupled_cc import mean_ratio_ci, observed_k, pairs_to_decide


def _cubic_trajectory(*, c=0.4, beta=0.7, cap=235, k_scale=1.0, dt=0.02, epochs=7, seed=0):
    """TCP_INFO-like samples of a CUBIC sender that loses when cwnd reaches about ``cap`` (+- 5): slow start,
    then epochs on W = W_max + c (t - K)^3 (integer window, never below the epoch's start), with
    K = k_scale * cbrt((W_max - cwnd_epoch) / c) and W_max by the fast-convergence rule.
    Returns the samples and (start [s], K [s]) of each epoch."""
    rng = np.random.default_rng(seed)
    samples, ks, t = [], [], 0.0
    w = 10.0
    while w < cap + 15:                      # slow start overshoots the cap before the loss shows
        samples.append({"t_s": t, "cwnd_segments": int(w), "ca_state": 0, "min_rtt_s": 0.1})
        t += dt
        w *= 1.03
    last_max = 0.0
    cwnd_loss = int(w)
    for _ in range(epochs):
        w_max = cwnd_loss * (1 + beta) / 2 if cwnd_loss < last_max else float(cwnd_loss)
        last_max = w_max
        w0 = int(cwnd_loss * beta)
        for _ in range(5):                   # 0.1 s of recovery
            samples.append({"t_s": t, "cwnd_segments": w0, "ca_state": 3, "min_rtt_s": 0.1})
            t += dt
        k = k_scale * np.cbrt((w_max - w0) / c)
        t0 = t
        ks.append((t0, k))
        cap_i = cap + int(rng.integers(-5, 6))
        while True:
            cw = max(w0, int(np.floor(w_max + c * (t - t0 - k) ** 3 + rng.uniform(-0.05, 0.05))))
            samples.append({"t_s": t, "cwnd_segments": cw, "ca_state": 0, "min_rtt_s": 0.1})
            t += dt
            if cw >= cap_i:
                cwnd_loss = cw
                break
    return samples, ks


@pytest.mark.parametrize("k_scale", [1.0, 0.8, 1.25])
def test_observed_k_recovers_the_generating_k(k_scale):
    samples, ks = _cubic_trajectory(k_scale=k_scale)
    got = observed_k(samples, c=0.4, beta_cubic=0.7)
    assert len(got) >= 2
    for e in got:
        true_k = [k for t0, k in ks if abs(t0 - e["t_start_s"]) < 1e-9]
        assert len(true_k) == 1, (e, ks)
        # the estimate recovers the K the trajectory was made with (not the model's), within 3 %
        assert e["k_observed_s"] == pytest.approx(true_k[0], rel=0.03)
        if k_scale == 1.0:
            assert e["k_model_s"] == pytest.approx(true_k[0], rel=0.02)


def test_the_moment_fit_picks_the_k_and_c_of_the_direct_least_squares_fit():
    """observed_k fits the cubic by moments (O(1) per grid point): the same K and c' as the direct fit over the
    grid (the residual of every grid point), on noisy epochs of random length, window and K."""
    from tcpmodels.experiments.kernel_coupled_cc.observe import _best_cubic_inflection

    rng = np.random.default_rng(7)
    for _ in range(40):
        span, c = rng.uniform(1.0, 12.0), rng.uniform(0.1, 2.0)
        k = rng.uniform(0.2, 0.8) * span
        tt = np.sort(rng.uniform(0.0, span, rng.integers(30, 800)))
        yy = np.floor(c * (tt - k) ** 3 + rng.normal(0.0, 1.0, tt.size)) + 0.5
        grid = np.arange(0.0, span, 0.005)
        x = (tt[None, :] - grid[:, None]) ** 3
        cf = (x * yy).sum(axis=1) / np.maximum((x * x).sum(axis=1), 1e-12)
        direct = int(np.argmin(((yy[None, :] - cf[:, None] * x) ** 2).sum(axis=1)))
        best, c_fit = _best_cubic_inflection(tt, yy, grid)
        assert best == direct and c_fit == pytest.approx(cf[direct], rel=1e-12)


def _within(ci, tol):   # the 95 % interval within 1 +- tol (what pairs_to_decide plans for)
    return ci["ci_low"] >= 1 - tol and ci["ci_high"] <= 1 + tol


def test_mean_ratio_ci_is_scipys_t_interval_on_the_log_scale():
    from scipy import stats

    ref = np.array([10.0, 12.0, 9.0, 11.0, 10.5, 9.5])
    test = ref * np.array([1.01, 0.99, 1.0, 1.02, 0.98, 1.0])
    same = mean_ratio_ci(test, ref)
    ci = stats.ttest_1samp(np.log(test / ref), 0.0).confidence_interval(0.95)
    assert (same["ci_low"], same["ci_high"]) == pytest.approx((np.exp(ci.low), np.exp(ci.high)))
    lower = mean_ratio_ci(ref * np.array([0.80, 0.82, 0.79, 0.81, 0.80, 0.78]), ref)
    assert lower["ratio"] == pytest.approx(0.80, abs=0.01) and lower["ci_high"] < 0.95
    with pytest.raises(ValueError):
        mean_ratio_ci([1.0], [1.0])


def test_summarize_gives_each_item4_number():
    from tcpmodels.experiments.kernel_coupled_cc import summarize

    rows = []
    for rep in range(4):
        for cc, f in (("reno", 1.0), ("tm_reno", 0.7)):   # tm_reno 30 % slower: a contradicted criterion
            rows.append({"experiment": "reno", "variant": cc, "rep": rep, "rate_bps": 8e6 * f * (1 + 0.01 * rep),
                         "retransmits": 40 + rep})
    epochs = json.dumps([{"k_observed_s": 4.2, "k_model_reading_s": 4.4}, {"k_observed_s": 3.0, "k_model_reading_s": 4.0}])
    rows.append({"experiment": "cubic_divide", "variant": "tm_cubic_x", "rep": 0, "rate_bps": 1.8e7, "k_epochs": epochs})
    for rep in range(3):
        rows.append({"experiment": "shared", "variant": "tm_lia", "rep": rep, "rate_bps": 1e7 * (1 + 0.1 * rep),
                     "tcp_rate_bps": 1e7, "ratio_mptcp_tcp": 1 + 0.1 * rep})
    out = summarize(pd.DataFrame(rows))
    assert out["reno_rate_bps_ratio"]["ratio"] == pytest.approx(0.7, rel=1e-9) and "verdict" not in out["reno_rate_bps_ratio"]
    from tcpmodels.experiments.kernel_coupled_cc import claims

    v = claims(pd.DataFrame(rows)).set_index("part")["verdict"]
    assert v["rate ratio within ±5%"] == "contradicted" and v["retransmits ratio within ±10%"] == "supported"
    k = out["cubic_divide_tm_cubic_x_k_ratio"]
    assert k["n_epochs"] == 2 and not k["within_10pct"] and k["max"] == pytest.approx(4.2 / 4.4)
    shared = out["shared_tm_lia_ratio_mptcp_tcp"]
    assert shared["mean"] == pytest.approx(1.1) and shared["ci_low"] < 1.1 < shared["ci_high"]


def test_pairs_to_decide_matches_the_interval():
    """Pairs drawn with a known log-ratio scatter: the number returned is where the interval of
    that many pairs (same mean and scatter) first lies within the tolerance, and one fewer does not."""
    rng = np.random.default_rng(3)
    d = rng.normal(0.0, 1.0, 8)
    d = 0.01 + 0.08 * (d - d.mean()) / d.std(ddof=1)        # mean 0.01, s 0.08 exactly
    test, ref = np.exp(d), np.ones(8)
    n = pairs_to_decide(test, ref, 0.05)
    assert n is not None and n > 8

    def ci_of(k):   # k pairs with the same mean and scatter
        z = rng.normal(0.0, 1.0, k)
        z = 0.01 + 0.08 * (z - z.mean()) / z.std(ddof=1)
        return mean_ratio_ci(np.exp(z), np.ones(k))

    assert _within(ci_of(n), 0.05) and not _within(ci_of(n - 1), 0.05)
    assert pairs_to_decide(np.exp(d - 0.01 + np.log(1.05)), ref, 0.05) is None   # mean on the bound
    assert pairs_to_decide(np.exp(0.2 + 0.01 * (d - 0.01) / 0.08), ref, 0.05) == 8   # already contradicted


def test_ratio_table_loss_events_and_clamp_from_rows():
    from tcpmodels.experiments.kernel_coupled_cc import clamped_snapshots, olia_loss_events, ratio_table

    runs = pd.DataFrame({"variant": ["a", "a", "a", "b"], "rate_bps": [2.0, 4.0, 8.0, 1.0],
                         "tcp_rate_bps": [1.0, 2.0, 4.0, 1.0]})
    t = ratio_table(runs)
    assert list(t.index) == ["a"] and t.loc["a", "ratio"] == pytest.approx(2.0) and t.loc["a", "n_pairs"] == 3
    rows = pd.DataFrame({"experiment": ["olia_incr", "olia_incr", "alpha"], "setting": ["shared", "shared", "shared"],
                         "cwnd_segments": ["[2.0, 20.0]", "[65535, 4]", "[65535, 3]"],
                         "loss_events": ["[10, 0]", "[2, 4]", None],
                         "delivered_at_last_loss_segments": ["[1500, 0]", "[400, 2000]", None]})
    le = olia_loss_events(rows)
    assert le.to_dict("records") == [
        {"setting": "shared", "smaller": True, "cwnd_segments": 2.0, "segments_per_loss_event": 150.0},
        {"setting": "shared", "smaller": False, "cwnd_segments": 65535, "segments_per_loss_event": 200.0},
        {"setting": "shared", "smaller": True, "cwnd_segments": 4, "segments_per_loss_event": 500.0}]
    assert clamped_snapshots(rows) == 2 and clamped_snapshots(rows.iloc[:1]) == 0
    assert olia_loss_events(rows.drop(columns=["loss_events"])).empty


def test_goal_claims_from_rows():
    """Coupled about one TCP flow, uncoupled about two, coupled shares above the uncoupled ones of the
    same repetition; a repeated map snapshot (same token and ACK count) counts once."""
    from tcpmodels.experiments.kernel_coupled_cc import claims, goal_ratios

    rows = []
    for rep, f in enumerate([0.95, 1.05, 1.0, 0.9, 1.1]):
        for v, ratio, share in (("tm_lia", 1.0, 0.9), ("tm_olia", 0.7, 0.92), ("reno", 2.0, 0.78)):
            rows.append({"experiment": "shared", "variant": v, "rep": rep, "rate_bps": 1e7 * ratio * f,
                         "tcp_rate_bps": 1e7})
            rows.append({"experiment": "disjoint", "variant": v, "rep": rep, "share_less_lossy": share * (0.99 + 0.005 * rep)})
    rows += [{"experiment": "alpha", "token": 7, "acks": 3, "alpha_rel_error": 1e-5}] * 3
    rows += [{"experiment": "olia_incr", "token": 8, "acks": 5, "incr_rel_error_of_terms": 0.15},
             {"experiment": "olia_incr", "token": 8, "acks": 5, "incr_rel_error_of_terms": 0.15},
             {"experiment": "olia_incr", "token": 8, "acks": 9, "incr_rel_error_of_terms": 1e-6}]
    out = goal_ratios(pd.DataFrame(rows))
    assert out["goal_a_reno"]["claim"] == "above" and "verdict" not in out["goal_a_reno"]
    assert out["goal_b_tm_lia"]["ratio"] == pytest.approx(0.9 / 0.78, rel=1e-6)
    assert out["goal_c_alpha_tm_lia"] == pytest.approx({"max": 1e-5, "median": 1e-5, "n_snapshots": 3, "n_distinct": 1,
                                                        "within": 1.0, "tolerance": 0.02})
    c = out["goal_c_incr_tm_olia"]
    assert c["n_distinct"] == 2 and c["within"] == 0.5
    v = claims(pd.DataFrame(rows))
    got = {(r.claim.split(" [")[0], r.claim[r.claim.index("[") + 1:r.claim.index("]")]): r.verdict for r in v.itertuples()}
    assert got[("Goal (a)", "kernel, tm_lia")] == got[("Goal (a)", "kernel, tm_olia")] == "supported"
    assert got[("Goal (a)", "kernel, reno")] == "supported"   # the uncoupled contrast above 1.5
    assert got[("Goal 1", "kernel, tm_olia")] == "contradicted" and got[("Goal 1", "kernel, reno")] == "supported"
    assert got[("Goal 1", "kernel, tm_lia")] == "inconclusive"   # 0.9-1.1 around par: neither side of 0.95 and 1
    assert got[("Goal (b)", "kernel, tm_lia")] == "supported"
    assert set(v["family"]) == {"kernel"} and v["pvalue"].notna().sum() == len(v) - 0  # single reads: no goal (c) row
    assert (v["method"] != "").all()


def test_build_from_records_joins_invocations(tmp_path):
    """Rows of two invocations (one gzipped) make one dataset; a dirty invocation marks it dirty."""
    import gzip

    from tcpmodels.experiments.kernel_coupled_cc import build_from_records

    def lines(commit, dirty, rows, end=True, cwnd_variants=("tm_lia",)):
        out = [{"kind": "provenance", "commit": commit, "git_dirty": dirty, "kernel": "k", "tools": {}}]
        out += [{"kind": "row", "row": r} for r in rows]
        out += [{"kind": "cwnd", "rows": [{"variant": v, "t_s": t, "cwnd_segments": 10} for v in cwnd_variants
                                           for t in (0.1, 0.2)]}]
        if end:
            out.append({"kind": "end", "wall_time_s": 100.0, "load_average_end": [1, 1, 1]})
        return "".join(json.dumps(x) + "\n" for x in out)

    reno = [{"experiment": "reno", "variant": v, "rep": rep, "rate_bps": 1e7 * (1 + 0.01 * rep), "retransmits": 50}
            for rep in range(3) for v in ("reno", "tm_reno")]
    (tmp_path / "a.jsonl").write_text(lines("abc", False, reno[:4]))
    with gzip.open(tmp_path / "b.jsonl.gz", "wt") as f:
        f.write(lines("abc", False, reno[4:], end=False, cwnd_variants=("tm_lia", "tm_olia")))
    rows, cwnd, prov = build_from_records([tmp_path / "a.jsonl", tmp_path / "b.jsonl.gz"])
    assert len(rows) == 6 and prov["commit"] == "abc" and prov["git_dirty"] is False
    # cwnd rows: one run per variant, from the earliest invocation that has it
    assert cwnd.groupby("variant").size().to_dict() == {"tm_lia": 2, "tm_olia": 2}
    assert prov["wall_time_s"] == 100.0 and len(prov["invocations"]) == 2
    assert prov["summary"]["reno_rate_bps_ratio"]["n_pairs"] == 3
    (tmp_path / "c.jsonl").write_text(lines("def", True, reno[:1]))
    _, _, prov = build_from_records([tmp_path / "a.jsonl", tmp_path / "c.jsonl"])
    assert prov["git_dirty"] is True and prov["commit"] == ["abc", "def"]


def test_lia_model_table_closed_forms():
    """Fluid model: LIA on two equal paths takes one TCP flow's rate, uncoupled subflows two; on
    disjoint paths LIA's windows go as 1/p (share 1/p1 / (1/p1 + 1/p2)), TCP's as 1/sqrt(p)."""
    from tcpmodels.experiments.kernel_coupled_cc import lia_model_table

    t = lia_model_table(rtt_s=0.05, shared_loss=0.01, disjoint_losses=(0.001, 0.004))
    assert t.loc["model_lia", "ratio_mptcp_tcp"] == pytest.approx(1.0, rel=1e-6)
    assert t.loc["model_uncoupled", "ratio_mptcp_tcp"] == pytest.approx(2.0, rel=1e-12)
    assert t.loc["model_lia", "share_less_lossy"] == pytest.approx(1000 / 1250, rel=1e-6)
    assert t.loc["model_uncoupled", "share_less_lossy"] == pytest.approx(2 / 3, rel=1e-9)


def test_lock_batches_hold_across_units_then_let_go(tmp_path):
    import fcntl

    from tcpmodels.experiments.kernel_coupled_cc.validation import _LockBatches

    path = tmp_path / "host.lock"

    def held():   # another open file description cannot take it while held
        with open(path, "a") as f:
            try:
                fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                return True
            fcntl.flock(f, fcntl.LOCK_UN)
            return False

    long = _LockBatches(3600.0, path=path)
    with long.unit("a"):
        assert held()
    assert held()                       # kept for the next unit
    with long.unit("b"):
        pass
    long.release()
    assert not held()
    short = _LockBatches(0.0, path=path)
    with short.unit("a"):
        assert held()
    assert not held()                   # batch over after one unit
    with pytest.raises(RuntimeError):
        with long.unit("c"):
            raise RuntimeError("a run failed")
    assert not held()


def test_records_from_dataset_round_trip(tmp_path):
    """Rows kept from an earlier dataset come back unchanged through build_from_records, with its provenance."""
    from tcpmodels.experiments.kernel_coupled_cc import build_from_records, records_from_dataset

    rows = pd.DataFrame([{"experiment": "reno", "variant": v, "rep": rep, "rate_bps": 1e7 + rep, "retransmits": 9.0,
                          "k_epochs": None}
                         for rep in range(2) for v in ("reno", "tm_reno")]
                        + [{"experiment": "shared", "variant": "tm_lia", "rep": 0, "rate_bps": 1.0, "retransmits": np.nan}])
    rows.to_parquet(tmp_path / "old.parquet", index=False)
    (tmp_path / "old.json").write_text(json.dumps({"commit": "abc", "git_dirty": False, "summary": {"x": 1}}))
    lines = records_from_dataset(tmp_path / "old", ["reno"])
    assert lines[0]["kind"] == "provenance" and lines[0]["commit"] == "abc" and "summary" not in lines[0]
    (tmp_path / "kept.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    got, _, prov = build_from_records([tmp_path / "kept.jsonl"])
    pd.testing.assert_frame_equal(got[["experiment", "variant", "rep", "rate_bps", "retransmits"]],
                                  rows.iloc[:4][["experiment", "variant", "rep", "rate_bps", "retransmits"]])
    assert prov["commit"] == "abc" and prov["git_dirty"] is False


def test_build_from_records_ignores_an_invocation_without_rows(tmp_path):
    from tcpmodels.experiments.kernel_coupled_cc import build_from_records

    lines = [{"kind": "provenance", "commit": "old", "git_dirty": True},             # stopped before any run
             {"kind": "provenance", "commit": "new", "git_dirty": False},
             {"kind": "row", "row": {"experiment": "shared", "variant": "tm_lia", "rep": 0, "rate_bps": 2.0,
                                     "tcp_rate_bps": 2.0, "ratio_mptcp_tcp": 1.0}}]
    (tmp_path / "r.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    rows, _, prov = build_from_records([tmp_path / "r.jsonl"])
    assert prov["commit"] == "new" and prov["git_dirty"] is False and len(prov["invocations"]) == 2
    assert rows["commit"].tolist() == ["new"]


def test_reps_to_exclude_matches_the_interval():
    """The number returned is where an interval with the same mean and scatter first excludes the threshold."""
    from tcpmodels.experiments.kernel_coupled_cc import reps_to_exclude

    rng = np.random.default_rng(5)

    def pairs(k, mean=np.log(1.2), sd=0.3):
        z = rng.normal(0.0, 1.0, k)
        return np.exp(mean + sd * (z - z.mean()) / z.std(ddof=1)), np.ones(k)

    n = reps_to_exclude(*pairs(4), 1.5)
    assert n is not None and n > 4
    assert mean_ratio_ci(*pairs(n))["ci_high"] < 1.5 <= mean_ratio_ci(*pairs(n - 1))["ci_high"]
    assert reps_to_exclude(*pairs(4, mean=np.log(1.5)), 1.5) is None
