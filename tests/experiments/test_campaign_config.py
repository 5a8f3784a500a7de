"""One config base for every campaign (issue 56): the hashes records are keyed by did not move.

The literal hashes were computed with the code before the base existed (commit bd46e66, each config's own
``to_dict``/``hash``); a config whose stored dict changes would orphan every record keyed by it.
"""

from __future__ import annotations

import pytest

from tcpmodels.experiments import p1, p2, p3, p4, p5
from tcpmodels.experiments.campaign_config import CampaignConfig
from tcpmodels.experiments.p5.kernel_config import DEFAULT_KERNEL_CONFIG
from tcpmodels.experiments.sim_vs_kernel.config import SCENARIOS

#: config -> hash printed by the pre-issue-56 code (bd46e66) for the same config.
HASHES_BEFORE = {
    "p1": "d8cdce033a51c7fd",
    "p2": "966907e879d18b40",
    "p3": "9ee7ec1e575e9e61",
    "p3_ns3_long": "686588e7e5574c3c",
    "p4": "dd41063514504072",
    "svk_reno_cubic_reno": "a19d09b107ec422a",
    "svk_reno_reno_reno": "78dae5703f798107",
    "svk_reno_reno_reno_locked": "fbd74ed8ef6497b7",
    "svk_reno_reno_reno_nudged": "a43e0f03bbcf0eb0",
}


def _configs() -> dict:
    return {"p1": p1.DEFAULT_CONFIG, "p2": p2.DEFAULT_CONFIG, "p3": p3.DEFAULT_CONFIG,
            "p3_ns3_long": p3.ns3_setting("long"), "p4": p4.DEFAULT_CONFIG,
            **{f"svk_{name}": cfg for name, cfg in SCENARIOS.items()}}


@pytest.mark.parametrize("name", sorted(HASHES_BEFORE))
def test_default_config_hashes_are_those_of_the_code_before_the_base(name):
    cfg = _configs()[name]
    assert isinstance(cfg, CampaignConfig)
    assert cfg.hash() == HASHES_BEFORE[name]


def test_derived_fields_keep_their_stored_form_and_place():
    """What each config added to its dict before the base: derived values last, stored forms in place."""
    d3 = p3.DEFAULT_CONFIG.to_dict()
    assert list(d3)[-2:] == ["buffer_bytes", "ns3_buffer_bytes"]
    assert d3["buffer_bytes"] == p3.DEFAULT_CONFIG.buffer_bytes
    d4 = p4.DEFAULT_CONFIG.to_dict()
    assert list(d4)[-1] == "cells" and all(isinstance(c, list) for c in d4["cells"])
    svk = SCENARIOS["reno_cubic_reno"]
    ds = svk.to_dict()
    assert isinstance(ds["rtts_ms"], list) and isinstance(ds["ccs"], list)
    assert list(ds) == [f for f in svk.__dataclass_fields__]  # lists written in the fields' places
    dk = DEFAULT_KERNEL_CONFIG.to_dict()
    assert list(dk)[-1] == "arrival_rate_per_s" and dk["arrival_rate_per_s"] == pytest.approx(12.5)
    assert p5.DEFAULT_CONFIG.to_dict()["alphas"] == p5.DEFAULT_CONFIG.alphas  # tuples stay tuples


def test_the_hash_changes_with_a_field():
    from dataclasses import replace

    assert replace(p4.DEFAULT_CONFIG, reps=p4.DEFAULT_CONFIG.reps + 1).hash() != HASHES_BEFORE["p4"]
