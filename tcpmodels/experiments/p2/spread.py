"""P2's Fraction of RPE where it can be tested: a pilot for a setting with the paper's throughput spread (issue 57, item 4).

On the shipped setting (two 100 Mbit/s paths, one-BDP buffers, no random loss) the MPTCP data throughput
hardly depends on the RTTs, so a predictor that always says the training mean already hits within 10 %
for 96.7 % of the RTT pairs: no probe can gain more than 3.3 points, and C2.2-C2.4's Fraction-of-RPE
parts are *not testable here* (issue 54). The paper's gains are 26.4-38.6 points. A setting where the
throughput follows the RTTs leaves room: per-path random loss (Mathis: rate ~ 1 / (RTT sqrt(p))).

The pilot (:func:`run_pilot`) measures only the MPTCP data transfer (``tm_lia``, 16 MiB: at least 40 BDPs
of the 180 ms path at the lossy rates) on a 4 x 4 subgrid of the RTT pairs (:data:`PILOT_RTTS_MS`), one
repetition, for each candidate loss rate (:data:`PILOT_LOSS_RATES`, each direction of each path), and
:func:`choose_loss` applies the rule fixed before the pilot: the smallest candidate whose constant
predictor hits within 10 % for at most :data:`MAX_CONSTANT_HITS` (60 %) of the pairs, i.e. whose headroom
(at least 40 points) exceeds the paper's largest gain (38.6 points); none: the largest candidate, and the
parts stay not testable.

Command line::

    python -m tcpmodels.experiments.p2.spread pilot --records runs/p2/spread_pilot.jsonl
    python -m tcpmodels.experiments.p2.spread choose --records runs/p2/spread_pilot.jsonl --out data
"""

from __future__ import annotations

import argparse
import os
from dataclasses import replace
from pathlib import Path

import numpy as np

from tcpmodels.datasets.p2_spread_pilot import SCHEMA as DATASET
from tcpmodels.experiments.campaign_dataset import CampaignCli, CampaignDataset
from tcpmodels.experiments.p2.config import DEFAULT_CONFIG, MB, REPO

__all__ = ["PILOT_LOSS_RATES", "PILOT_RTTS_MS", "MAX_CONSTANT_HITS", "PILOT_KEY", "SPREAD_CONFIG", "pilot_plan",
           "constant_hits", "choose_loss", "run_pilot", "write_pilot_summary", "main"]

#: candidate random loss per direction of each path [-]
PILOT_LOSS_RATES = (1e-4, 1e-3)
#: the pilot's RTTs of each path (16 pairs spread over the paper's 120-180 ms grid) [ms]
PILOT_RTTS_MS = (120.0, 140.0, 160.0, 180.0)
#: the rule's bound: the constant predictor's Fraction of RPE at most this [-]
MAX_CONSTANT_HITS = 0.60
PILOT_KEY = ("campaign", "loss_rate", "rtt1_ms", "rtt2_ms")
#: the shipped 100 Mbit/s setting, tm_lia, 16 MiB data
SPREAD_CONFIG = replace(DEFAULT_CONFIG, rate_bps=100e6, buffer_bytes=1_875_000, cc="tm_lia", data_size_bytes=16 * MB)


def pilot_plan(seed: int = 57) -> list[dict]:
    """The pilot's samples: per loss rate (smallest first) the 16 RTT pairs in a seeded shuffle.

    Parameters
    ----------
    seed : int
        Seed of the shuffle.

    Returns
    -------
    list of dict
        ``campaign``, ``loss_rate`` [-], ``rtt1_ms``, ``rtt2_ms`` [ms], ``order``.
    """
    rng = np.random.default_rng(seed)
    pairs = [(a, b) for a in PILOT_RTTS_MS for b in PILOT_RTTS_MS]
    out = []
    for loss in PILOT_LOSS_RATES:
        for i in rng.permutation(len(pairs)):
            out.append({"campaign": "p2_spread_pilot", "loss_rate": loss, "rtt1_ms": pairs[int(i)][0],
                        "rtt2_ms": pairs[int(i)][1], "order": len(out)})
    return out


def constant_hits(rate_bps: np.ndarray) -> float:
    """Fraction of RPE of the predictor that always says the mean (one sample per RTT pair). [-]

    Parameters
    ----------
    rate_bps : numpy.ndarray
        Data throughput of each RTT pair. [bit/s]

    Returns
    -------
    float
        Share of pairs whose throughput lies within +-10 % of the prediction (the mean), as P2 counts a
        hit: ``|(measured - predicted) / measured| < 0.10``.
    """
    y = np.asarray(rate_bps, dtype=float)
    y = y[np.isfinite(y) & (y > 0)]
    if not len(y):
        return float("nan")
    err = (y - y.mean()) / y
    return float(((err > -0.10) & (err < 0.10)).mean())


def choose_loss(rows: list[dict]) -> dict:
    """The rule of the module docstring applied to the pilot's rows.

    Parameters
    ----------
    rows : list of dict
        ``loss_rate`` and ``rate_bps`` (the MPTCP data throughput) per sample.

    Returns
    -------
    dict
        ``by_loss`` (loss rate -> constant hits, samples, mean and sd of the rate [bit/s]), ``chosen`` (loss
        rate or None) and ``testable`` (bool).
    """
    by = {}
    for loss in sorted({r["loss_rate"] for r in rows}):
        y = np.array([r["rate_bps"] for r in rows if r["loss_rate"] == loss and r.get("rate_bps")], dtype=float)
        by[loss] = {"constant_hits": constant_hits(y), "samples": int(len(y)),
                    "rate_mean_bps": float(y.mean()) if len(y) else None,
                    "rate_cv": float(y.std(ddof=1) / y.mean()) if len(y) > 1 else None}
    ok = [loss for loss, v in by.items() if v["constant_hits"] <= MAX_CONSTANT_HITS]
    return {"by_loss": by, "chosen": min(ok) if ok else (max(by) if by else None), "testable": bool(ok),
            "rule": f"smallest loss rate whose constant predictor hits <= {MAX_CONSTANT_HITS:.0%} of the pairs"}


def run_pilot(records_path: str | Path, *, limit: int | None = None, progress: bool = True) -> int:
    """Run (or resume) the pilot: the MPTCP data transfer of :data:`SPREAD_CONFIG` per sample of :func:`pilot_plan`.

    One testbed per loss rate (rebuilt when it changes); the host lock per sample.

    Parameters
    ----------
    records_path : str or Path
        JSONL records (key :data:`PILOT_KEY`).
    limit : int, optional
        Stop after this many new samples.
    progress : bool
        Show a tqdm bar on stderr.

    Returns
    -------
    int
        Samples measured by this call (0 when every sample of the plan is recorded already).
    """
    from tcpmodels.experiments.campaign import run_samples
    from tcpmodels.experiments.p2.kernel import Session
    from tcpmodels.experiments.p2.plans import client_steps
    from tcpmodels.records import JsonlRecords, git_state
    from tcpmodels.testbed import kernel_cc

    config = SPREAD_CONFIG
    steps = [s for s in client_steps(config) if s["kind"] == "mptcp_data"]
    code = git_state(REPO)

    def session_for(s: dict, session):
        if session is not None and session.loss_rate == s["loss_rate"]:
            session.set_rtts(s["rtt1_ms"], s["rtt2_ms"])
            return session
        if session is not None:
            session.__exit__(None, None, None)
        return Session(config, s["rtt1_ms"], s["rtt2_ms"], loss_rate=s["loss_rate"]).__enter__()

    def measure(s: dict, session) -> dict:
        if config.cc not in kernel_cc.available_congestion_controls():
            kernel_cc.load(config.cc, owner_pid=os.getpid(), replace=True)
        res = session.run(steps)
        t = res["transfers"][0]
        return {"git": code, "config": config.to_dict(), "rtt_measured_ms": res["rtt_measured_ms"],
                "rate_bps": t.get("rate_bps") if not t.get("error") else None, "transfer": t,
                "tcp_ext": res["tcp_ext"]}

    with kernel_cc.congestion_control(config.cc):
        return run_samples(JsonlRecords(records_path, PILOT_KEY), pilot_plan(), measure, desc="p2 spread pilot",
                           session_for=session_for, limit=limit, progress=progress, lock_timeout_s=7200.0,
                           yield_s=1.0)


def _pilot_tables(recs: list[dict]) -> tuple[dict, dict]:
    """One row per sample (loss rate, RTTs, the MPTCP data rate); the provenance's facts: the rule's choice."""
    import pandas as pd

    rows = [{k: r.get(k) for k in ("loss_rate", "rtt1_ms", "rtt2_ms", "rate_bps", "wall_s", "started_utc")}
            | {"load_avg_1m": r["load_avg"][0]} for r in recs]
    return {"": pd.DataFrame(rows)}, {"config": recs[0]["config"], "choice": choose_loss(rows)}


#: the pilot's rows to ``p2_spread_pilot.parquet``, :func:`choose_loss` to ``p2_spread_pilot.json`` (the provenance),
#: through the dataset's schema: ``write_pilot_summary(records_path, data_dir, *, allow_dirty=False) -> provenance``
#: (:class:`~tcpmodels.experiments.campaign_dataset.CampaignDataset`)
write_pilot_summary = CampaignDataset(DATASET, PILOT_KEY, _pilot_tables, "p2 spread pilot")


def _dataset(a: argparse.Namespace) -> dict:
    """Write the pilot's table and the rule's choice; the choice."""
    return write_pilot_summary(a.records, a.out, allow_dirty=a.allow_dirty)["choice"]


#: ``python -m tcpmodels.experiments.p2.spread pilot|choose ...``: ``main(argv=None) -> exit status``
main = CampaignCli("p2.spread", __doc__, "p2 spread", commands=("pilot", "choose"),
                  run=lambda a: {"measured": run_pilot(a.records, limit=a.limit, progress=not a.no_progress)},
                  dataset=_dataset, run_help="run or resume the pilot",
                  dataset_help="the pilot's rows -> p2_spread_pilot.parquet, the rule's choice -> "
                               "p2_spread_pilot.json")


if __name__ == "__main__":
    raise SystemExit(main())
