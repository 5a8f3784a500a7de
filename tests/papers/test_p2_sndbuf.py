"""P2 Fig. 4 send-buffer sweep (issue 57, item 3): plan and the claims on known answers."""

import numpy as np
import pandas as pd

from tcpmodels.experiments.p2.sndbuf import WMEM_FACTORS, bdp_bytes_150ms, sndbuf_plan
from tcpmodels.papers.p2_mptcp_prediction.sndbuf import sndbuf_paragraph, sndbuf_verdicts


def test_plan_covers_every_factor_each_repetition():
    plan = sndbuf_plan(3)
    assert len(plan) == 12
    for rep in range(3):
        assert sorted(p["wmem_factor"] for p in plan if p["rep"] == rep) == sorted(WMEM_FACTORS)
    assert bdp_bytes_150ms() == 1_875_000
    assert {p["wmem_max_bytes"] for p in plan if p["wmem_factor"] == 0.5} == {937_500}


def _sweep(share_small, rng):
    rows = []
    for f in WMEM_FACTORS:
        for rep in range(4):
            for size in (16 * 2**20, 64 * 2**20):
                share = (share_small if f == 0.5 else 0.53) + rng.normal(0, 0.01)
                rows.append({"wmem_factor": f, "rep": rep, "size_bytes": size, "share1": share, "Bps": 5e6})
    return pd.DataFrame(rows)


def test_known_answers():
    rng = np.random.default_rng(0)
    v = sndbuf_verdicts(_sweep(0.34, rng)).set_index("key")
    assert v.loc["smaller buffer", "verdict"] == "supported"
    assert v.loc["reaches the paper", "verdict"] == "supported"
    assert v.loc["scheduler", "verdict"] == "not testable here"
    v = sndbuf_verdicts(_sweep(0.53, rng)).set_index("key")
    assert v.loc["smaller buffer", "verdict"] == "contradicted"
    assert "excluded" in sndbuf_paragraph(_sweep(0.53, rng))


def test_undecided_reading_says_what_shows_and_what_the_paper_is(tmp_path):
    from tcpmodels.papers.p2_mptcp_prediction.sndbuf import sndbuf_section

    rng = np.random.default_rng(1)
    sweep = _sweep(0.485, rng)  # 4.5 points lower at 0.5 BDP: the direction shows, the 5 points do not
    text = sndbuf_paragraph(sweep)
    assert "Not decided" in text and "the direction shows" in text
    assert "not the paper's 33.9 % (contradicted" in text
    assert "4 repetitions per buffer" in text
    assert "no shipped dataset" in sndbuf_section(tmp_path)
