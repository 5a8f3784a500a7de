"""P1's engine disagreement (issue 57, item 2): the implausible-window rule, the shared link, the settings table."""

import numpy as np
import pandas as pd
import pytest

from tcpmodels.papers.p1_datacenter_fct.engines import STACK_SETTINGS, shared_link_ratios
from tcpmodels.papers.p1_datacenter_fct.windows import implausible_windows, plausible_subflows, with_ns3_windows


def _sub(cwnd, bps=30e6, rtt=0.007):
    return pd.DataFrame({"cwnd_mean_segments": cwnd, "mss_bytes": 1448.0, "rtt_mean_s": rtt, "throughput_bps": bps})


def test_rule_flags_windows_ten_times_what_rate_and_rtt_imply():
    # 30 Mbit/s at 7 ms is 18.1 segments in flight: 100 segments is 5.5x (kept), 200 is 11x (left out)
    s = _sub([18.0, 100.0, 200.0, 1.08e7])
    assert implausible_windows(s).tolist() == [False, False, True, True]
    kept = plausible_subflows(s)
    assert len(kept) == 2 and kept.attrs["implausible_rows"] == 2
    assert not implausible_windows(_sub([np.nan], bps=np.nan)).any()  # ns-3 rows without RTT are never flagged
    with pytest.raises(ValueError, match="factor"):
        implausible_windows(s, factor=0.5)


def test_ns3_settings_in_the_note_are_the_simulators():
    from tcpmodels.sim.config import TcpOptions

    t = TcpOptions()
    assert STACK_SETTINGS["minimum RTO [s]"][1] == t.min_rto_s
    assert STACK_SETTINGS["initial window [segments]"][1] == t.initial_cwnd_segments
    assert STACK_SETTINGS["SACK"][1] == t.sack
    assert t.recovery == "TcpPrrRecovery" and t.delayed_ack_count == 1


def test_shared_link_ratio_is_the_geometric_mean_with_t_interval(tmp_path):
    d = tmp_path / "datasets"
    d.mkdir()
    pd.DataFrame({"experiment": ["shared"] * 3 + ["disjoint"], "variant": ["tm_lia"] * 4,
                  "ratio_mptcp_tcp": [0.5, 2.0, 1.0, 9.0]}).to_parquet(d / "kernel_coupled_cc.parquet")
    r = shared_link_ratios(tmp_path).set_index(["engine", "control"])
    assert r.loc[("kernel", "tm_lia"), "ratio"] == pytest.approx(1.0)
    assert r.loc[("kernel", "tm_lia"), "n"] == 3
    assert r.loc[("kernel", "tm_lia"), "ci_low"] < 1 < r.loc[("kernel", "tm_lia"), "ci_high"]


def test_ns3_windows_fill_only_the_rows_they_cover(tmp_path):
    d = tmp_path / "datasets"
    d.mkdir()
    key = {"engine": "ns3", "experiment": "s4", "protocol": "mptcp", "cc": "lia", "conn_id": 0, "subflow": 1}
    pd.DataFrame([{**key, "seed": 0, "cwnd_mean_segments": 20.0, "loss_events": 3, "segments_sent": 1000.0,
                   "loss_event_rate": 0.003}]).to_parquet(d / "p1_ns3_windows.parquet")
    sub = pd.DataFrame([{**key, "seed": s, "cwnd_mean_segments": np.nan, "loss_events": np.nan,
                         "segments_sent": np.nan, "loss_event_rate": np.nan, "throughput_bps": 1e7} for s in (0, 1)])
    out = with_ns3_windows(sub, tmp_path)
    assert out["cwnd_mean_segments"].tolist()[0] == 20.0 and np.isnan(out["cwnd_mean_segments"].tolist()[1])
    assert len(out) == 2


def _subflows(engine, cc, cwnd, loss, seeds=(0, 1)):
    """Four subflows per background transfer, each of mean window ``cwnd`` (plausible: 1448 B at 1 ms, 100 Mbit/s)."""
    return [{"engine": engine, "experiment": "s4", "protocol": "mptcp", "cc": cc, "seed": s, "conn_id": 0,
             "subflow": k, "cwnd_mean_segments": cwnd, "loss_event_rate": loss, "mss_bytes": 1448, "rtt_mean_s": 1e-3,
             "throughput_bps": 1e8} for s in seeds for k in range(4)]


def test_engines_note_compares_the_backgrounds_windows(tmp_path):
    from tcpmodels.papers.p1_datacenter_fct.engines import engines_note

    verdicts = pd.DataFrame(columns=["claim", "part", "effect", "ci_low", "ci_high", "verdict", "n_runs"])
    alike = pd.DataFrame(_subflows("kernel", "tm_lia", 16.0, 0.0005) + _subflows("ns3", "lia", 16.5, 0.0006))
    text = engines_note(verdicts, alike, tmp_path)
    assert "keeps a median 66 segments in flight" in text and "the kernel's tm_lia 64 at 0.05%" in text
    assert "1.03x the segments in flight, 1.20x the loss-event rate" in text and "within 10 % of each other" in text
    larger = pd.DataFrame(_subflows("kernel", "tm_lia", 16.0, 0.0005) + _subflows("ns3", "lia", 20.0, 0.0005))
    assert "ns-3's coupled background keeps more segments in flight" in engines_note(verdicts, larger, tmp_path)
    none = pd.DataFrame(_subflows("kernel", "tm_lia", 16.0, 0.0005))
    assert "ns-3's windows are not yet measured" in engines_note(verdicts, none, tmp_path)
