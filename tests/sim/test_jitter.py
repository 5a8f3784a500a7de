"""The jittered point-to-point channel: FIFO, reproducible, and it lifts ns-3's drop-tail phase locking."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest

from tcpmodels import traces
from tcpmodels.sim.config import BulkApp, Dumbbell, Link, Sender, TcpOptions
from tcpmodels.sim.run import run_config

pytestmark = pytest.mark.sim

RATE_BPS = 50e6
PACKET_S = 1500 * 8 / RATE_BPS  # one bottleneck packet time, 0.24 ms
WARMUP_S = 5.0


def three_reno(jitter_s: float, *, seed: int = 0, pcap: tuple = ()) -> Dumbbell:
    """Reno at 10, 20 and 40 ms through 50 Mbit/s with a 125 kB drop-tail buffer (the sim-vs-kernel dumbbell)."""
    return Dumbbell(
        senders=[Sender(access=Link(rate_bps=10e9, delay_s=rtt / 2, queue_packets=10000, jitter_s=jitter_s),
                        variant="TcpLinuxReno", apps=[BulkApp(start_s=start)])
                 for rtt, start in ((0.010, 0.31), (0.020, 0.07), (0.040, 0.55))],
        bottleneck=Link(rate_bps=RATE_BPS, delay_s=0.0, queue_bytes=125_000),
        duration_s=16.0, seed=seed, pcap_devices=pcap, queue_bin_s=0.5,
        tcp=TcpOptions(sndbuf_bytes=16 << 20, rcvbuf_bytes=4 << 20),
    )


#: One Reno flow through a 1 ms jitter bound (about 800 access-link packet times at 10 Gbit/s, so a channel that
#: did not keep order would reorder constantly), a queue that never overflows and a 1 MB receive window: no loss,
#: so a sequence number that steps back at the capture can only be a reordering.
FIFO = Dumbbell(
    senders=[Sender(access=Link(rate_bps=10e9, delay_s=0.005, queue_packets=10000, jitter_s=0.001),
                    variant="TcpLinuxReno", apps=[BulkApp(start_s=0.1)])],
    bottleneck=Link(rate_bps=RATE_BPS, delay_s=0.005, queue_packets=5000),
    duration_s=6.0, seed=3, pcap_devices=("bottleneck",), queue_bin_s=0.5,
    tcp=TcpOptions(sndbuf_bytes=4 << 20, rcvbuf_bytes=1 << 20),
)


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    base = tmp_path_factory.mktemp("jitter")
    configs = {"exact": three_reno(0.0), "jitter": three_reno(PACKET_S), "jitter_again": three_reno(PACKET_S),
               "fifo": FIFO}
    with ThreadPoolExecutor(2) as pool:
        done = pool.map(lambda kv: (kv[0], run_config(kv[1], base / kv[0], timeout_s=600)), configs.items())
        return dict(done)


def _mbps(run) -> np.ndarray:
    return run.throughput_bps(WARMUP_S + 0.55, 16.0).sort_index().to_numpy() / 1e6


def test_jitter_restores_the_rtt_order_that_exact_timing_loses(runs):
    exact, jitter = _mbps(runs["exact"]), _mbps(runs["jitter"])
    # both fill the bottleneck
    assert exact.sum() == pytest.approx(RATE_BPS / 1e6, rel=0.06) and jitter.sum() == pytest.approx(RATE_BPS / 1e6, rel=0.06)
    # Reno's throughput falls with RTT (the kernel gives 25.0 / 12.2 / 10.6 Mbit/s for these three); phase-locked
    # exact timing hands the 20 ms flow the largest share instead (measured 11.3 / 32.0 / 5.0 over 3 seeds)
    assert jitter[0] > jitter[1] > jitter[2], jitter
    assert exact[1] > exact[0], exact


def test_the_channel_keeps_order(runs):
    run = runs["fifo"]
    assert run.flows["lost_packets"].sum() == 0  # the premise: nothing dropped anywhere
    pkts = traces.read_pcap(f"{run.out_dir}/bottleneck.pcap")
    data = pkts[(pkts["payload_bytes"] > 0).to_numpy()]
    assert len(data) > 5_000
    seq = data["seq"].to_numpy(dtype=np.int64)
    back = np.diff(seq) < 0
    assert not back.any(), f"{int(back.sum())} segments arrived before an earlier one"
    # the window, not the jitter, sets the rate: the flow still fills the bottleneck
    assert run.throughput_bps(1.0, 6.0).iloc[0] == pytest.approx(RATE_BPS, rel=0.08)


def test_same_seed_same_result(runs):
    a, b = runs["jitter"], runs["jitter_again"]
    pd.testing.assert_frame_equal(a.flows, b.flows)


def test_negative_jitter_is_refused():
    with pytest.raises(ValueError, match=r"jitter_s \[s\] must be in \[0, inf\); got -0.001"):
        Link(rate_bps=1e6, delay_s=0.001, jitter_s=-0.001)
    assert replace(Link(rate_bps=1e6, delay_s=0.001), jitter_s=0.0).jitter_s == 0.0
