"""What P2 measures: the plan of samples and the client's steps in one sample."""

from __future__ import annotations

from tcpmodels._docstrings import SharedEntries
from tcpmodels.experiments.p2.config import KB, MB, PAPER_PATH_PROBE_TOTALS, PAPER_PROBE_LABELS, P2Config

__all__ = ["sample_plan", "client_steps", "sweep_steps"]

#: Parameters documented once for the docstrings of this module that share them.
_PARAMETERS = SharedEntries("""
    port : int
        Port of the traffic server.
""")


# ------------------------------------------------------------------ plans
def sample_plan(config: P2Config) -> list[dict]:
    """Every sample of the campaign, in run order: repetition 0 of all RTT pairs (shuffled), then 1, ...

    Running whole repetitions first means a campaign cut short still covers the
    whole grid once.

    Parameters
    ----------
    config : P2Config
        ``rtts_ms`` (each path takes every value), ``reps`` and the shuffling ``seed``.

    Returns
    -------
    list of dict
        One per sample: ``campaign`` (``"p2"``), ``cc`` (the subflows' congestion control),
        ``data_size_bytes`` [bytes], ``path_rate_bps`` [bit/s], ``rep``, ``rtt1_ms``, ``rtt2_ms`` [ms], ``order``; the order
        depends on ``seed``, ``rtts_ms`` and ``reps`` only (every ``cc`` and data size runs the same order).
    """
    import numpy as np

    rng = np.random.default_rng(config.seed)
    pairs = [(r1, r2) for r1 in config.rtts_ms for r2 in config.rtts_ms]
    plan = []
    for rep in range(config.reps):
        for i in rng.permutation(len(pairs)):
            r1, r2 = pairs[int(i)]
            plan.append({"campaign": "p2", "cc": config.cc, "data_size_bytes": int(config.data_size_bytes),
                         "path_rate_bps": float(config.rate_bps), "rep": rep, "rtt1_ms": float(r1), "rtt2_ms": float(r2), "order": len(plan)})
    return plan


def _label_size(size_bytes: int) -> str:
    return f"{size_bytes // MB}MB" if size_bytes % MB == 0 else f"{size_bytes // KB}KB"


@_PARAMETERS.fill
def client_steps(config: P2Config, *, port: int = 5201) -> list[dict]:
    """The client's transfers of one sample, as steps (each step's flows run at the same time).

    Steps: a TCP probe on each path at once for each per-path probe size, an MPTCP probe
    of each size, the MPTCP data transfer, the TCP data transfer on path 1; all uploads.

    Parameters
    ----------
    config : P2Config
        Probe and data sizes [bytes] and the congestion control.
    {port}

    Returns
    -------
    list of dict
        One per step: ``name``, ``kind`` (``path_probe``, ``mptcp_probe``, ``mptcp_data``,
        ``tcp_data``), ``label`` (the paper's size it stands for) and ``flows`` (flow dicts
        of :func:`tcpmodels.testbed.traffic.run_flow`).
    """
    paths = [("10.0.1.1", "10.0.1.2"), ("10.0.2.1", "10.0.2.2")]
    steps = []
    fid = 1

    def flow(size, mptcp, kind, path=None):
        nonlocal fid
        f = dict(flow_id=fid, kind=kind, dst=paths[0][1] if path is None else paths[path][1], port=port,
                 size_bytes=int(size), cc=config.cc, mptcp=mptcp, direction="upload",
                 bind=None if path is None else paths[path][0], start_s=0.0, sample_interval_s=0.0,
                 path=path)
        fid += 1
        return f

    for total, size in zip(PAPER_PATH_PROBE_TOTALS, config.path_probe_sizes_bytes):
        steps.append({"name": f"path_probe_{total}", "kind": "path_probe", "label": total,
                      "flows": [flow(size, False, "probe", 0), flow(size, False, "probe", 1)]})
    for label, size in zip(PAPER_PROBE_LABELS, config.mptcp_probe_sizes_bytes):
        steps.append({"name": f"mptcp_probe_{label}", "kind": "mptcp_probe", "label": label,
                      "flows": [flow(size, True, "probe")]})
    steps.append({"name": "mptcp_data", "kind": "mptcp_data", "label": "256MB", "watch_subflows": True,
                  "flows": [flow(config.data_size_bytes, True, "bulk")]})
    steps.append({"name": "tcp_data", "kind": "tcp_data", "label": "256MB",
                  "flows": [flow(config.data_size_bytes, False, "bulk", 0)]})
    return steps


@_PARAMETERS.fill
def sweep_steps(config: P2Config, *, port: int = 5201) -> list[dict]:
    """One repetition of the Fig. 4 sweep: MPTCP transfers of every ``fig4_sizes_bytes``.

    Parameters
    ----------
    config : P2Config
        ``fig4_sizes_bytes`` [bytes] and the congestion control.
    {port}

    Returns
    -------
    list of dict
        One step per size, in order, each with one MPTCP upload (``kind`` ``"fig4"``,
        ``label`` such as ``"512KB"``).
    """
    return [{"name": f"fig4_{_label_size(s)}", "kind": "fig4", "label": _label_size(s),
             "flows": [dict(flow_id=i + 1, kind="bulk", dst="10.0.1.2", port=port, size_bytes=int(s), cc=config.cc,
                            mptcp=True, direction="upload", bind=None, start_s=0.0, sample_interval_s=0.0,
                            path=None)]}
            for i, s in enumerate(config.fig4_sizes_bytes)]
