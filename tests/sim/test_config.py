"""Scenario configs: validation messages, JSON round trip, hashing, random workloads (no ns-3 needed)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from tcpmodels.sim.blocks import flow_schedule
from tcpmodels.sim.config import (
    BulkApp,
    Caterpillar,
    Dumbbell,
    Link,
    PoissonFlows,
    Sender,
    SizeDistribution,
    TcpOptions,
    config_from_dict,
    config_hash,
    config_to_dict,
    config_to_json,
)


def dumbbell(**kw):
    base = dict(
        senders=[
            Sender(access=Link(rate_bps=1e9, delay_s=0.001), variant="TcpLinuxReno"),
            Sender(
                access=Link(rate_bps=1e8, delay_s=0.02, queue_bytes=150_000),
                variant="ns3::TcpCubic",
                apps=[
                    BulkApp(start_s=1.0, size_bytes=10_000_000),
                    PoissonFlows(mean_interarrival_s=0.2, size=SizeDistribution(kind="pareto", mean_bytes=1e4, alpha=1.2)),
                ],
            ),
        ],
        bottleneck=Link(rate_bps=1e7, delay_s=0.01, queue_packets=50),
        duration_s=5.0,
        seed=3,
    )
    base.update(kw)
    return Dumbbell(**base)


def test_json_round_trip_and_hash():
    cfg = dumbbell()
    text = config_to_json(cfg)
    again = config_from_dict(json.loads(text))
    assert again == cfg
    assert config_hash(again) == config_hash(cfg)
    assert config_hash(dumbbell(seed=4)) != config_hash(cfg)
    assert again.senders[1].variant == "TcpCubic"  # ns3:: prefix dropped
    cat = Caterpillar(n_clients=8, workload=PoissonFlows(mean_interarrival_s=0.4, size=SizeDistribution(mean_bytes=1e4)))
    assert config_from_dict(json.loads(config_to_json(cat))) == cat


@pytest.mark.parametrize(
    ("make", "match"),
    [
        (lambda: Link(rate_bps=0, delay_s=0.01), r"rate_bps \[bit/s\] must be in \(0, inf\); got 0"),
        (lambda: Link(rate_bps=1e6, delay_s=-1), r"delay_s \[s\] must be in \[0, inf\); got -1"),
        (lambda: Link(rate_bps=1e6, delay_s=0, queue_packets=10, queue_bytes=20000), "not both"),
        (lambda: Link(rate_bps=1e6, delay_s=0, queue_bytes=100), r"queue_bytes \[bytes\] must be an integer >= 1600"),
        (lambda: Sender(access=Link(rate_bps=1e6, delay_s=0), variant="TcpFoo"), "variant must be one of"),
        (lambda: TcpOptions(mss_bytes=9000), r"mss_bytes \[bytes\] must be in \[1, 1460\]"),
        (lambda: SizeDistribution(kind="pareto", mean_bytes=1e4, alpha=1.0), r"alpha \[-\] must be in \(1, inf\)"),
        (lambda: SizeDistribution(kind="lognormal"), "kind must be"),
        (lambda: dumbbell(loss_rate=1.0), r"loss_rate \[-\] must be in \[0, 1\); got 1"),
        (lambda: dumbbell(pcap_devices=["sender7"]), "pcap_devices entries must be in"),
        (lambda: BulkApp(start_s=2.0, stop_s=1.0), r"stop_s \[s\] must be > start_s"),
    ],
)
def test_bad_input_names_the_problem(make, match):
    with pytest.raises(ValueError, match=match):
        make()


def test_queue_size_strings():
    assert Link(rate_bps=1e6, delay_s=0).queue_size_string == "100p"
    assert Link(rate_bps=1e6, delay_s=0, queue_packets=7).queue_size_string == "7p"
    assert Link(rate_bps=1e6, delay_s=0, queue_bytes=100_000).queue_size_string == "100000B"


def test_size_distributions():
    rng = np.random.default_rng(0)
    pareto = SizeDistribution(kind="pareto", mean_bytes=10_000, alpha=2.5)
    x = np.array(pareto.sample_bytes(rng, 200_000))
    scale = 10_000 * 1.5 / 2.5
    assert x.min() >= scale
    assert abs(x.mean() / 10_000 - 1) < 0.03  # finite variance at alpha 2.5: the mean converges
    # P(X > 2 scale) = 2^-alpha for a Pareto
    assert abs((x > 2 * scale).mean() - 2**-2.5) < 0.005
    u = np.array(SizeDistribution(kind="uniform", low_bytes=100, high_bytes=200).sample_bytes(rng, 10_000))
    assert u.min() >= 100 and u.max() <= 200 and abs(u.mean() - 150) < 2
    capped = SizeDistribution(kind="pareto", mean_bytes=1e4, alpha=1.1, max_bytes=5e4).sample_bytes(rng, 1000)
    assert max(capped) == 50_000


def test_poisson_schedule():
    app = PoissonFlows(mean_interarrival_s=0.01, size=SizeDistribution(mean_bytes=1000), start_s=1.0, stop_s=51.0)
    flows = flow_schedule(app, np.random.default_rng(1), duration_s=100.0)
    starts = np.array([f["start_s"] for f in flows])
    assert starts.min() > 1.0 and starts.max() < 51.0
    # 5000 expected arrivals: Poisson count within 4 standard deviations
    assert abs(len(flows) - 5000) < 4 * np.sqrt(5000)
    gaps = np.diff(starts)
    assert abs(gaps.mean() - 0.01) < 0.0005 and abs(gaps.std() / gaps.mean() - 1) < 0.05  # exponential: CV = 1
    limited = flow_schedule(
        PoissonFlows(mean_interarrival_s=0.01, size=SizeDistribution(mean_bytes=1000), max_flows=7),
        np.random.default_rng(1),
        duration_s=100.0,
    )
    assert len(limited) == 7
    same = flow_schedule(app, np.random.default_rng(1), duration_s=100.0)
    assert [f["start_s"] for f in same] == list(starts)


def test_jitter_is_stored_only_when_set_so_older_hashes_hold():
    from dataclasses import replace

    plain = Link(rate_bps=10e6, delay_s=0.015, queue_packets=3000)
    # the stored form of a link from before jitter existed: its hash, and every hash containing it, is unchanged
    assert config_to_dict(plain) == {"rate_bps": 10e6, "delay_s": 0.015, "queue_packets": 3000, "queue_bytes": None}
    jittered = Link(rate_bps=10e6, delay_s=0.015, queue_packets=3000, jitter_s=0.0012)
    assert config_to_dict(jittered)["jitter_s"] == 0.0012
    for link in (plain, jittered):
        cfg = replace(dumbbell(seed=1), bottleneck=link)
        assert config_from_dict(config_to_dict(cfg)) == cfg
    assert config_hash(Link(rate_bps=1e6, delay_s=0.0)) != config_hash(Link(rate_bps=1e6, delay_s=0.0, jitter_s=1e-4))
