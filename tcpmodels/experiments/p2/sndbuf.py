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

import json
import os
from dataclasses import replace
from pathlib import Path

import numpy as np

from tcpmodels.experiments.p2.config import DEFAULT_CONFIG, MB, REPO, P2Config

__all__ = ["WMEM_FACTORS", "SIZES_BYTES", "RTTS_MS", "SNDBUF_KEY", "SNDBUF_CONFIG", "bdp_bytes_150ms", "sndbuf_plan",
           "run_sndbuf", "build_sndbuf_dataset", "main"]

#: the client's ``tcp_wmem`` maximum, in BDPs of the 150 ms path
WMEM_FACTORS = (0.5, 1.0, 2.0, 4.0)
#: transfer sizes: the paper-equivalent 16 MiB (256 MB at 1 Gbit/s scaled by the rate) and 64 MiB [bytes]
SIZES_BYTES = (16 * MB, 64 * MB)
#: RTTs of path 1 and path 2 [ms]
RTTS_MS = (150.0, 120.0)
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
    from tcpmodels.experiments.p2.kernel import Session
    from tcpmodels.experiments.p2.plans import sweep_steps
    from tcpmodels.records import JsonlRecords, git_state
    from tcpmodels.testbed import kernel_cc

    config = SNDBUF_CONFIG
    steps = sweep_steps(config)
    code = git_state(REPO)

    def session_for(s: dict, session):
        return session if session is not None else Session(config, s["rtt1_ms"], s["rtt2_ms"]).__enter__()

    def measure(s: dict, session) -> dict:
        wmem = f"4096 16384 {s['wmem_max_bytes']}"
        set_to = session.tb.set_sysctls("c", (("net.ipv4.tcp_wmem", wmem),))
        if config.cc not in kernel_cc.available_congestion_controls():
            kernel_cc.load(config.cc, owner_pid=os.getpid(), replace=True)
        res = session.run(steps)
        return {"schema": 1, "path_rate_bps": config.rate_bps, "rtt_measured_ms": res["rtt_measured_ms"],
                "run_id": res["run_id"], "config_hash": config.hash(), "config": config.to_dict(), "git": code,
                "tcp_wmem": wmem, "sysctl_set": set_to, "transfers": res["transfers"], "tcp_ext": res["tcp_ext"]}

    with kernel_cc.congestion_control(config.cc):
        return run_samples(JsonlRecords(records_path, SNDBUF_KEY), sndbuf_plan(reps), measure, desc="p2 sndbuf",
                           session_for=session_for, limit=limit, progress=progress, lock_timeout_s=lock_timeout_s,
                           yield_s=1.0)


def build_sndbuf_dataset(records_path: str | Path, data_dir: str | Path, *, allow_dirty: bool = False) -> dict:
    """Records -> ``p2_sndbuf.parquet`` (one row per transfer) and ``p2_sndbuf_provenance.json``.

    Parameters
    ----------
    records_path : str or Path
        JSONL records of :func:`run_sndbuf`.
    data_dir : str or Path
        The ``data`` folder.
    allow_dirty : bool
        Write a shipped dataset from a tree with uncommitted changes.

    Returns
    -------
    dict
        The provenance.

    Raises
    ------
    ValueError
        If there is no record.
    """
    import pandas as pd

    from tcpmodels.experiments.p2.dataset import path1_share
    from tcpmodels.records import JsonlRecords, host_facts, records_git_summary, shipped_git_state, utc_now

    out = Path(data_dir) / "datasets"
    git = shipped_git_state(REPO, out, allow_dirty=allow_dirty)
    recs = JsonlRecords(records_path, SNDBUF_KEY).read()
    if not recs:
        raise ValueError(f"{records_path}: no record of the p2 send-buffer sweep")
    rows = []
    for r in recs:
        ext = (r.get("tcp_ext") or {}).get("c", {})
        for t in r["transfers"]:
            rows.append({"wmem_factor": r["wmem_factor"], "wmem_max_bytes": r["wmem_max_bytes"], "rep": r["rep"],
                         "order": r["order"], "rtt1_ms": r["rtt1_ms"], "rtt2_ms": r["rtt2_ms"], "cc": r["config"]["cc"],
                         "path_rate_bps": r["path_rate_bps"], "label": t["label"], "size_bytes": t["size_bytes"],
                         "share1": path1_share(t), "Bps": t["rate_bps"] / 8 if t.get("rate_bps") and not t.get("error")
                         else float("nan"), "error": t.get("error"), "load_avg_1m": r["load_avg"][0],
                         "started_utc": r["started_utc"], "client_retrans_segs": ext.get("TCPFastRetrans", 0)})
    frame = pd.DataFrame(rows)
    out.mkdir(parents=True, exist_ok=True)
    frame.to_parquet(out / "p2_sndbuf.parquet", index=False)
    prov = {"dataset": "p2_sndbuf", "built_utc": utc_now(), "git": git, "host": host_facts(), "samples": len(recs),
            "plan_samples": len(sndbuf_plan()), "config": recs[0]["config"], "runs_git": records_git_summary(recs),
            "bdp_bytes_150ms": bdp_bytes_150ms(), "wall_s_median": float(np.median([r["wall_s"] for r in recs])),
            "first_utc": min(r["started_utc"] for r in recs), "last_utc": max(r["started_utc"] for r in recs),
            "load_avg_1m": [float(min(r["load_avg"][0] for r in recs)), float(max(r["load_avg"][0] for r in recs))],
            "schedulers": "net.mptcp.available_schedulers = default (no bpf_mptcp_sched_ops in /proc/kallsyms)"}
    (out / "p2_sndbuf_provenance.json").write_text(json.dumps(prov, indent=1, sort_keys=True) + "\n")
    return prov


def main(argv: list[str] | None = None) -> int:
    """``python -m tcpmodels.experiments.p2.sndbuf run|dataset ...``.

    Parameters
    ----------
    argv : list of str, optional
        Arguments (default ``sys.argv[1:]``).

    Returns
    -------
    int
        Exit status.
    """
    from tcpmodels.experiments.campaign import add_run_command, campaign_errors, campaign_parser

    parser, sub = campaign_parser("p2.sndbuf", __doc__)
    p = add_run_command(sub, "run", "run or resume the send-buffer sweep", reps=True)
    p = sub.add_parser("dataset", help="JSONL records -> Parquet + provenance")
    p.add_argument("--records", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--allow-dirty", action="store_true")
    args = parser.parse_args(argv)
    with campaign_errors("p2 sndbuf", also=(RuntimeError,)):
        if args.cmd == "run":
            n = run_sndbuf(args.records, reps=args.reps or 4, limit=args.limit, progress=not args.no_progress)
            print(json.dumps({"measured": n}))
        else:
            prov = build_sndbuf_dataset(args.records, args.out, allow_dirty=args.allow_dirty)
            print(json.dumps({"samples": prov["samples"]}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
