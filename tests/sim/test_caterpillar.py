"""The P5 caterpillar in ns-3: downloads cross the G1 -> G2 bottleneck; bytes and capacity add up."""

from __future__ import annotations

import pytest

from tcpmodels.sim.config import Caterpillar, Link, PoissonFlows, SizeDistribution
from tcpmodels.sim.run import run_config

pytestmark = pytest.mark.sim

BACKBONE_BPS = 5e6

CONFIG = Caterpillar(
    n_clients=8,
    workload=PoissonFlows(
        mean_interarrival_s=0.5,
        size=SizeDistribution(kind="pareto", mean_bytes=10_000, alpha=1.35, max_bytes=2e6),
        max_flows=10,
    ),
    backbone=Link(rate_bps=BACKBONE_BPS, delay_s=0.015, queue_packets=3000),
    duration_s=10.0,
    seed=2,
)


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    return run_config(CONFIG, tmp_path_factory.mktemp("caterpillar"), timeout_s=600)


def test_every_client_downloads_from_the_server(run):
    apps = run.apps
    assert set(apps["sender"]) == set(range(8))  # "sender" = client index for the caterpillar
    assert apps["src_node"].nunique() == 1  # all from the one server
    assert (apps.groupby("sender").size() <= 10).all()
    done = apps[apps["completed"]]
    assert len(done) >= 0.8 * len(apps)
    assert (done["rx_bytes"] == done["size_bytes"]).all()


def test_all_downstream_bytes_cross_the_bottleneck(run):
    q = run.queues
    through = q.loc[q["device"] == "bottleneck", "enqueued_bytes"].sum()
    delivered = run.apps["rx_bytes"].sum()
    # payload plus 52 bytes of headers per segment (and the SYN/FIN/ACK packets) went through G1 -> G2
    assert delivered <= through <= delivered * (1500 / 1448) * 1.05 + 200 * len(run.apps)
    rate = q[q["device"] == "bottleneck"].set_index("t_end_s")["enqueued_bytes"] * 8 / CONFIG.queue_bin_s
    assert rate.rolling(10).mean().max() <= BACKBONE_BPS * 1.01  # 1 s averages never beat the link


def test_farther_clients_see_longer_rtts(run):
    # client c hangs on gateway G(2 + c % 4): one more 15 ms backbone hop per step
    data = run.flows[run.flows["direction"] == "data"].merge(run.apps[["flow_index", "sender"]], on="flow_index")
    delay = data.groupby(data["sender"] % 4)["mean_delay_s"].min()
    assert delay.is_monotonic_increasing
    assert delay.iloc[-1] - delay.iloc[0] >= 3 * 0.015 * 0.99
