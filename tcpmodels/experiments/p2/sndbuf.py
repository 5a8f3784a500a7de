"""P2 Fig. 4 at RTTs (150, 120) ms with the sender's send buffer swept (issue 57, item 3).

The paper's subflow-1 share at (150, 120) ms is 33.9 %; ours is 50.3 % at 256 MiB (53.6 % at the
paper-equivalent 16 MiB, ``tm_lia``, 100 Mbit/s paths). The notebook's hypothesis is that the second
subflow overtakes while both ramp; the issue's: a send-buffer-limited minimum-RTT scheduler moves bytes
onto the 120 ms path. The kernel here offers only the ``default`` MPTCP packet scheduler
(``sysctl net.mptcp.available_schedulers`` = ``default``; no ``bpf_mptcp_sched_ops`` in
``/proc/kallsyms``), so the scheduler cannot be swapped; the send buffer can. This campaign sets the
client's (the sender's) ``tcp_wmem`` maximum to 0.5, 1, 2 and 4 times the 150 ms path's BDP
(:data:`WMEM_FACTORS`) before each sample and measures MPTCP uploads of 16 MiB and 64 MiB
(:data:`SIZES_BYTES`) at (150, 120) ms, ``tm_lia``, 100 Mbit/s paths with one-BDP buffers (the shipped
100 Mbit/s Fig. 4 setting). Every sample records the transfers as the Fig. 4 sweep does (bytes per
path from the client's interface counters) and the client's TcpExt counters.

Plan: :func:`sndbuf_plan`, 4 repetitions, each repetition every factor once in a shuffled order
(seeded), so a cut-short campaign covers the factors evenly. The claims and the rule for reading
them are :mod:`tcpmodels.papers.p2_mptcp_prediction.sndbuf`.

Command line::

    python -m tcpmodels.experiments.p2.sndbuf run --records runs/p2/sndbuf.jsonl
    python -m tcpmodels.experiments.p2.sndbuf dataset --records runs/p2/sndbuf.jsonl --out data
"""

from __future__ import annotations

import argparse
from dataclasses import replace
from pathlib import Path

import numpy as np

from tcpmodels.datasets.p2_sndbuf import RTTS_MS, SIZES_BYTES, WMEM_FACTORS
from tcpmodels.datasets.p2_sndbuf import SCHEMA as DATASET
from tcpmodels.experiments.campaign_dataset import CampaignCli, CampaignDataset, session_facts
from tcpmodels.experiments.p2.config import DEFAULT_CONFIG, REPO, P2Config

__all__ = ["WMEM_FACTORS", "SIZES_BYTES", "RTTS_MS", "SNDBUF_KEY", "SNDBUF_CONFIG", "bdp_bytes_150ms", "sndbuf_plan",
           "run_sndbuf", "build_sndbuf_dataset", "main"]

# the sweep's grid (WMEM_FACTORS, SIZES_BYTES, RTTS_MS) is the dataset's: tcpmodels.datasets.p2_sndbuf
SNDBUF_KEY = ("campaign", "wmem_factor", "rep")
#: the shipped 100 Mbit/s Fig. 4 setting (one BDP of buffer at 150 ms), coupled tm_lia
SNDBUF_CONFIG = replace(DEFAULT_CONFIG, rate_bps=100e6, buffer_bytes=1_875_000, cc="tm_lia",
                        fig4_sizes_bytes=SIZES_BYTES, fig4_reps=4)


def bdp_bytes_150ms(config: P2Config = SNDBUF_CONFIG) -> int:
    """Bandwidth-delay product of the 150 ms path at the config's rate. [bytes]

    Parameters
    ----------
    config : P2Config
        Its ``rate_bps``. [bit/s]

    Returns
    -------
    int
        ``rate_bps x 0.150 / 8``. [bytes]
    """
    return int(round(config.rate_bps * RTTS_MS[0] * 1e-3 / 8))


def sndbuf_plan(reps: int = 4, seed: int = 57) -> list[dict]:
    """The samples in run order: per repetition every factor of :data:`WMEM_FACTORS` once, shuffled.

    Parameters
    ----------
    reps : int
        Repetitions (>= 1).
    seed : int
        Seed of the shuffles.

    Returns
    -------
    list of dict
        ``campaign``, ``wmem_factor``, ``wmem_max_bytes`` [bytes], ``rep``, ``order``, ``rtt1_ms``, ``rtt2_ms``.

    Raises
    ------
    ValueError
        If ``reps`` < 1.
    """
    if reps < 1:
        raise ValueError(f"reps must be >= 1; got {reps}")
    rng = np.random.default_rng(seed)
    out = []
    for rep in range(reps):
        for f in rng.permutation(WMEM_FACTORS):
            out.append({"campaign": "p2_sndbuf", "wmem_factor": float(f),
                        "wmem_max_bytes": int(round(float(f) * bdp_bytes_150ms())), "rep": rep, "order": len(out),
                        "rtt1_ms": RTTS_MS[0], "rtt2_ms": RTTS_MS[1]})
    return out


def run_sndbuf(records_path: str | Path, *, reps: int = 4, limit: int | None = None, progress: bool = True,
               lock_timeout_s: float = 7200.0) -> int:
    """Run (or resume) the send-buffer sweep; return the number of samples measured by this call.

    Parameters
    ----------
    records_path : str or Path
        JSONL records (key :data:`SNDBUF_KEY`).
    reps : int
        Repetitions of :func:`sndbuf_plan`.
    limit : int, optional
        Stop after this many new samples.
    progress : bool
        tqdm bar.
    lock_timeout_s : float
        Longest wait for the host lock per sample. [s]

    Returns
    -------
    int
        Samples measured.
    """
    from tcpmodels.experiments.campaign import run_samples
    from tcpmodels.experiments.p2.kernel import Session, cc_loaded, ensure_cc
    from tcpmodels.experiments.p2.plans import sweep_steps
    from tcpmodels.records import JsonlRecords, git_state

    config = SNDBUF_CONFIG
    steps = sweep_steps(config)
    code = git_state(REPO)

    def session_for(s: dict, session):
        return session if session is not None else Session(config, s["rtt1_ms"], s["rtt2_ms"]).__enter__()

    def measure(s: dict, session) -> dict:
        wmem = f"4096 16384 {s['wmem_max_bytes']}"
        set_to = session.tb.set_sysctls("c", (("net.ipv4.tcp_wmem", wmem),))
        ensure_cc(config.cc)
        res = session.run(steps)
        return {"schema": 1, "path_rate_bps": config.rate_bps, "rtt_measured_ms": res["rtt_measured_ms"],
                "run_id": res["run_id"], "config_hash": config.hash(), "config": config.to_dict(), "git": code,
                "tcp_wmem": wmem, "sysctl_set": set_to, "transfers": res["transfers"], "tcp_ext": res["tcp_ext"]}

    with cc_loaded(config.cc):  # config.cc is tm_lia: registered for the call
        return run_samples(JsonlRecords(records_path, SNDBUF_KEY), sndbuf_plan(reps), measure, desc="p2 sndbuf",
                           session_for=session_for, limit=limit, progress=progress, lock_timeout_s=lock_timeout_s,
                           yield_s=1.0)


def _transfer_row(r: dict, t: dict) -> dict:
    """One transfer of a sample: the sample's setting, the transfer's share of path 1 and rate, the client's retransmissions."""
    from tcpmodels.experiments.p2.dataset import path1_share

    ext = (r.get("tcp_ext") or {}).get("c", {})
    return {"wmem_factor": r["wmem_factor"], "wmem_max_bytes": r["wmem_max_bytes"], "rep": r["rep"],
            "order": r["order"], "rtt1_ms": r["rtt1_ms"], "rtt2_ms": r["rtt2_ms"], "cc": r["config"]["cc"],
            "path_rate_bps": r["path_rate_bps"], "label": t["label"], "size_bytes": t["size_bytes"],
            "share1": path1_share(t), "Bps": t["rate_bps"] / 8 if t.get("rate_bps") and not t.get("error")
            else float("nan"), "error": t.get("error"), "load_avg_1m": r["load_avg"][0],
            "started_utc": r["started_utc"], "client_retrans_segs": ext.get("TCPFastRetrans", 0)}


def _sndbuf_tables(recs: list[dict]) -> tuple[dict, dict]:
    """One row per transfer; the provenance's facts: samples against the plan, the BDP, times, loads."""
    import pandas as pd

    return {"": pd.DataFrame([_transfer_row(r, t) for r in recs for t in r["transfers"]])}, {
        "samples": len(recs), "plan_samples": len(sndbuf_plan()), "config": recs[0]["config"],
        "bdp_bytes_150ms": bdp_bytes_150ms(), **session_facts(recs),
        "schedulers": "net.mptcp.available_schedulers = default (no bpf_mptcp_sched_ops in /proc/kallsyms)"}


#: records -> ``p2_sndbuf.parquet`` (one row per transfer) and ``p2_sndbuf_provenance.json`` through the dataset's
#: schema: ``build_sndbuf_dataset(records_path, data_dir, *, allow_dirty=False) -> provenance``
#: (:class:`~tcpmodels.experiments.campaign_dataset.CampaignDataset`)
build_sndbuf_dataset = CampaignDataset(DATASET, SNDBUF_KEY, _sndbuf_tables, "p2 send-buffer sweep")


def _run(a: argparse.Namespace) -> dict:
    """Run or resume the sweep."""
    return {"measured": run_sndbuf(a.records, reps=a.reps or 4, limit=a.limit, progress=not a.no_progress)}


def _dataset(a: argparse.Namespace) -> dict:
    """Build the dataset; its samples."""
    return {"samples": build_sndbuf_dataset(a.records, a.out, allow_dirty=a.allow_dirty)["samples"]}


#: ``python -m tcpmodels.experiments.p2.sndbuf run|dataset ...``: ``main(argv=None) -> exit status``
main = CampaignCli("p2.sndbuf", __doc__, "p2 sndbuf", run=_run, dataset=_dataset,
                  run_help="run or resume the send-buffer sweep", reps=True)


if __name__ == "__main__":
    raise SystemExit(main())
