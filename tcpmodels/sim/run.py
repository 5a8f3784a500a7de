"""Run one ns-3 scenario in a fresh process and write its tables.

Command line (what :func:`run_config` calls)::

    python -m tcpmodels.sim.run CONFIG.json OUT_DIR

writes into ``OUT_DIR``:

``record.json``
    ns-3 and tcpmodels versions, the config, its hash, the seed, wall time,
    simulated time, packet counts, host, date.
``flows.parquet``
    One row per FlowMonitor flow (both directions of every connection), with
    the application flow it belongs to and its direction (``data``/``ack``).
``apps.parquet``
    One row per connection an application opened: sender, variant, start,
    size, bytes received by its sink, completion time (``fct_s``: from the
    connection's start until the sink has received every byte; NaN if it did
    not finish) and mean goodput. For :class:`~tcpmodels.sim.config.Multipath`
    a row is a subflow, with ``connection``, ``subflow``, ``path``, its actual
    ``start_s`` (SYN; joined subflows start when subflow 0 connects),
    ``connected_s``, ``handed_bytes`` (bytes the connection gave it),
    ``connection_size_bytes`` and ``connection_rx_bytes``; ``fct_s`` and
    ``completed`` are the connection's (all its bytes received over all subflows).
``bins.parquet``
    Per time bin: bytes received by each connection's sink.
``queues.parquet``
    Per time bin and watched device: queue length at the bin end [packets,
    bytes], packets and bytes dropped and enqueued during the bin.
``cwnd.parquet``
    With ``trace_cwnd``: congestion window, ssthresh, congestion state, RTO
    and RTT changes of every bulk connection.
``<device>.pcap``
    Captures of the chosen devices (raw IPv4 link type, snap length from the config).

Each simulation needs its own process: ns-3 keeps one global simulator and
cppyy cannot unload compiled code, so :func:`run_config` always starts one.
"""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
import time
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

import tcpmodels
from tcpmodels._docstrings import SharedEntries
from tcpmodels.sim.config import (
    Caterpillar,
    Dumbbell,
    FatTree,
    Multipath,
    config_from_dict,
    config_hash,
    config_to_dict,
    config_to_json,
)

__all__ = ["SimResult", "SimulationError", "run_config", "load_result", "simulate", "main"]

#: Parameters documented once for the docstrings of this module that share them.
_PARAMETERS = SharedEntries("""
    config : Dumbbell, Caterpillar, Multipath or FatTree
        The scenario.
""")

#: ``TcpSocketState::TcpCongState_t`` values, for ``cwnd.parquet``.
CONG_STATES = {0: "CA_OPEN", 1: "CA_DISORDER", 2: "CA_CWR", 3: "CA_RECOVERY", 4: "CA_LOSS"}
_CC_WHAT = {0: "cwnd_bytes", 1: "ssthresh_bytes", 2: "cong_state", 3: "rto_s", 4: "rtt_s"}


class SimulationError(RuntimeError):
    """The simulation process failed; the message holds its exit code and the end of its stderr."""


@dataclass(frozen=True, kw_only=True)
class SimResult:
    """The tables of one run (see the module docstring for their columns)."""

    record: dict
    flows: pd.DataFrame
    apps: pd.DataFrame
    bins: pd.DataFrame
    queues: pd.DataFrame
    cwnd: pd.DataFrame | None
    out_dir: str

    def to_dict(self) -> dict:
        """The fields as a dict (the tables are not copied).

        Returns
        -------
        dict
            ``record``, ``flows``, ``apps``, ``bins``, ``queues``, ``cwnd`` (None without
            ``trace_cwnd``) and ``out_dir``.
        """
        return {
            "record": self.record,
            "flows": self.flows,
            "apps": self.apps,
            "bins": self.bins,
            "queues": self.queues,
            "cwnd": self.cwnd,
            "out_dir": self.out_dir,
        }

    def throughput_bps(self, start_s: float = 0.0, end_s: float | None = None) -> pd.Series:
        """Goodput of each connection between ``start_s`` and ``end_s`` from the bins. [bit/s]

        Indexed by ``flow_index`` (every connection, 0 for one that received
        nothing); bins whose end lies in (start_s, end_s] count.

        Parameters
        ----------
        start_s : float
            Start of the window, in simulated time. [s]
        end_s : float, optional
            End of the window; None: the end of the run (``record["duration_s"]``). [s]

        Returns
        -------
        pandas.Series
            ``throughput_bps``: bytes received in the window times 8 over its length (at
            least one bin), indexed by ``flow_index``. [bit/s]
        """
        end = self.record["duration_s"] if end_s is None else end_s
        sel = self.bins[(self.bins["t_end_s"] > start_s + 1e-12) & (self.bins["t_end_s"] <= end + 1e-12)]
        span = max(end - start_s, self.record["bin_s"])
        rx = sel.groupby("flow_index")["rx_bytes"].sum().reindex(self.apps["flow_index"], fill_value=0)
        return (rx * 8.0 / span).rename("throughput_bps")


def load_result(out_dir: str | os.PathLike) -> SimResult:
    """Read the tables a run wrote to ``out_dir``.

    Parameters
    ----------
    out_dir : str or path-like
        The output folder of :func:`run_config` (``record.json`` and the parquet tables).

    Returns
    -------
    SimResult
        The record and tables; ``cwnd`` is None when no ``cwnd.parquet`` was written.

    Raises
    ------
    FileNotFoundError
        If ``record.json`` or one of the required tables is missing.
    """
    out = Path(out_dir)
    record = json.loads((out / "record.json").read_text())
    cwnd = pd.read_parquet(out / "cwnd.parquet") if (out / "cwnd.parquet").exists() else None
    return SimResult(
        record=record,
        flows=pd.read_parquet(out / "flows.parquet"),
        apps=pd.read_parquet(out / "apps.parquet"),
        bins=pd.read_parquet(out / "bins.parquet"),
        queues=pd.read_parquet(out / "queues.parquet"),
        cwnd=cwnd,
        out_dir=str(out),
    )


@_PARAMETERS.fill
def run_config(config: Dumbbell | Caterpillar | Multipath | FatTree, out_dir: str | os.PathLike, *,
               timeout_s: float | None = None) -> SimResult:
    """Simulate ``config`` in a new Python process; return its tables.

    Parameters
    ----------
    {config}
    out_dir : path
        Created if missing; receives the files listed in the module docstring.
    timeout_s : float, optional
        Kill the process after this wall time. [s]

    Returns
    -------
    SimResult
        The tables the process wrote (:func:`load_result` of ``out_dir``).

    Raises
    ------
    SimulationError
        If the process exits non-zero or times out; the message includes the
        end of its stderr.
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    cfg_path = out / "config.json"
    cfg_path.write_text(config_to_json(config))
    cmd = [sys.executable, "-m", "tcpmodels.sim.run", str(cfg_path), str(out)]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout_s)
    except subprocess.TimeoutExpired as exc:
        raise SimulationError(f"simulation timed out after {timeout_s} s: {cfg_path}") from exc
    if proc.returncode != 0:
        tail = "\n".join(proc.stderr.strip().splitlines()[-15:])
        raise SimulationError(f"simulation exited with code {proc.returncode} ({cfg_path}):\n{tail}")
    return load_result(out)


def _flowmon_table(ns: Any, monitor: Any, helper: Any, flows: pd.DataFrame) -> pd.DataFrame:
    monitor.CheckForLostPackets()
    classifier = ns.DynamicCast[ns.Ipv4FlowClassifier](helper.GetClassifier())
    by_port = {int(p): int(i) for p, i in zip(flows["port"], flows["flow_index"])}
    rows = []
    for pair in monitor.GetFlowStats():
        fid, st = pair.first, pair.second
        t = classifier.FindFlow(fid)
        sport, dport = int(t.sourcePort), int(t.destinationPort)
        if dport in by_port:
            direction, idx = "data", by_port[dport]
        elif sport in by_port:
            direction, idx = "ack", by_port[sport]
        else:
            direction, idx = "other", -1
        first_tx = st.timeFirstTxPacket.GetSeconds()
        first_rx = st.timeFirstRxPacket.GetSeconds()
        last_rx = st.timeLastRxPacket.GetSeconds()
        rx_packets = int(st.rxPackets)
        rows.append(
            {
                "flowmon_id": int(fid),
                "flow_index": idx,
                "direction": direction,
                "src": str(t.sourceAddress),
                "dst": str(t.destinationAddress),
                "src_port": sport,
                "dst_port": dport,
                "tx_packets": int(st.txPackets),
                "tx_bytes": int(st.txBytes),
                "rx_packets": rx_packets,
                "rx_bytes": int(st.rxBytes),
                "lost_packets": int(st.lostPackets),
                "first_tx_s": first_tx,
                "first_rx_s": first_rx,
                "last_rx_s": last_rx,
                "mean_delay_s": st.delaySum.GetSeconds() / rx_packets if rx_packets else np.nan,
                "throughput_bps": (
                    st.rxBytes * 8.0 / (last_rx - first_rx) if rx_packets > 1 and last_rx > first_rx else np.nan
                ),
            }
        )
    return pd.DataFrame(rows).sort_values(["flow_index", "direction"]).reset_index(drop=True)


@_PARAMETERS.fill
def simulate(config: Dumbbell | Caterpillar | Multipath | FatTree, out_dir: str | os.PathLike) -> dict:
    """Build and run ``config`` in *this* process and write the tables; return the record.

    Use :func:`run_config` instead unless this process is fresh and will exit
    afterwards (``python -m tcpmodels.sim.run`` does exactly that).

    Parameters
    ----------
    {config}
    out_dir : str or path-like
        Created if missing; receives the files listed in the module docstring.

    Returns
    -------
    dict
        The run record also written to ``record.json``: versions, host, date, the config
        and its hash, seeds, durations [s], packet counts and wall-clock speed.
    """
    from tcpmodels.sim import _ns3
    from tcpmodels.sim.scenarios import build

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    wall0 = time.perf_counter()
    ns = _ns3.load()
    glue = _ns3.glue()
    load_s = time.perf_counter() - wall0
    ns.RngSeedManager.SetSeed(1)
    ns.RngSeedManager.SetRun(config.seed + 1)

    built = build(ns, config, str(out))
    flows = pd.DataFrame(built.flows)
    fm_helper = ns.FlowMonitorHelper()
    monitor = fm_helper.InstallAll()

    bin_s = config.queue_bin_s
    n_bins = int(np.ceil(config.duration_s / bin_s - 1e-9))
    queues = {name: dev.GetQueue() for name, dev in built.devices.items()}
    q_prev = {name: (0, 0, 0) for name in queues}
    sink_prev = {int(i): 0 for i in flows["flow_index"]}
    q_rows, bin_rows = [], []
    t = 0.0
    run0 = time.perf_counter()
    for b in range(n_bins):
        step = min(bin_s, config.duration_s - t)
        ns.Simulator.Stop(ns.Seconds(step))
        ns.Simulator.Run()
        t = ns.Simulator.Now().GetSeconds()
        for name, q in queues.items():
            drops_p, drops_b, rx_b = (
                int(q.GetTotalDroppedPackets()),
                int(q.GetTotalDroppedBytes()),
                int(q.GetTotalReceivedBytes()),
            )
            p0 = q_prev[name]
            q_rows.append(
                {
                    "t_end_s": t,
                    "device": name,
                    "queue_packets": int(q.GetNPackets()),
                    "queue_bytes": int(q.GetNBytes()),
                    "dropped_packets": drops_p - p0[0],
                    "dropped_bytes": drops_b - p0[1],
                    "enqueued_bytes": rx_b - p0[2],
                }
            )
            q_prev[name] = (drops_p, drops_b, rx_b)
        for idx, path in zip(flows["flow_index"], flows["sink_path"]):
            rx = int(glue.SinkBytes(path))
            if rx != sink_prev[int(idx)]:
                bin_rows.append({"t_end_s": t, "flow_index": int(idx), "rx_bytes": rx - sink_prev[int(idx)]})
                sink_prev[int(idx)] = rx
    run_s = time.perf_counter() - run0

    flow_table = _flowmon_table(ns, monitor, fm_helper, flows)
    apps = flows.drop(columns=["sink_path"]).copy()
    apps["rx_bytes"] = [int(glue.SinkBytes(p)) for p in flows["sink_path"]]
    done = np.array([float(glue.SinkDone(p)) for p in flows["sink_path"]])
    apps["fct_s"] = np.where(done >= 0, done - apps["start_s"].to_numpy(), np.nan)
    apps["completed"] = done >= 0
    apps["size_bytes"] = apps["size_bytes"].astype("float64")  # NaN = unlimited
    active_end = np.where(apps["completed"], done, config.duration_s)
    span = np.maximum(active_end - apps["start_s"].to_numpy(), 1e-12)
    apps["goodput_bps"] = apps["rx_bytes"] * 8.0 / span
    if built.finish is not None:
        apps = built.finish(apps)
    bins = pd.DataFrame(bin_rows, columns=["t_end_s", "flow_index", "rx_bytes"])
    q_table = pd.DataFrame(q_rows)

    cwnd = None
    if built.cc_sockets:
        n = int(glue.CcCount())
        cols = [np.array(glue.CcColumn(c), dtype=float) if n else np.zeros(0) for c in range(4)]
        cwnd = pd.DataFrame(
            {
                "t_s": cols[0],
                "flow_index": cols[1].astype(int),
                "what": pd.Categorical([_CC_WHAT[int(w)] for w in cols[2]], categories=list(_CC_WHAT.values())),
                "value": cols[3],
            }
        )
        cwnd.to_parquet(out / "cwnd.parquet")

    data_flows = flow_table[flow_table["direction"] == "data"]
    record = {
        "engine": "ns-3",
        "ns3_version": _ns3.ns3_version(),
        "tcpmodels_version": tcpmodels.__version__,
        "python": platform.python_version(),
        "host": platform.node(),
        "date_utc": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "topology": type(config).topology,
        "config": config_to_dict(config),
        "config_hash": config_hash(config),
        "seed": config.seed,
        "ns3_rng": {"seed": 1, "run": config.seed + 1},
        "duration_s": config.duration_s,
        "bin_s": bin_s,
        "n_connections": len(flows),
        "packets_tx": int(flow_table["tx_packets"].sum()),
        "data_packets_tx": int(data_flows["tx_packets"].sum()),
        "ns3_load_wall_s": load_s,
        "run_wall_s": run_s,
        "sim_s_per_wall_s": config.duration_s / run_s if run_s > 0 else np.nan,
        "packets_per_wall_s": float(flow_table["tx_packets"].sum()) / run_s if run_s > 0 else np.nan,
    }
    ns.Simulator.Destroy()

    flow_table.to_parquet(out / "flows.parquet")
    apps.to_parquet(out / "apps.parquet")
    bins.to_parquet(out / "bins.parquet")
    q_table.to_parquet(out / "queues.parquet")
    (out / "record.json").write_text(json.dumps(record, indent=1, sort_keys=True, default=float))
    return record


def main(argv: list[str] | None = None) -> int:
    """``python -m tcpmodels.sim.run CONFIG.json OUT_DIR``.

    Parameters
    ----------
    argv : list of str, optional
        The two arguments (config file, output folder); None: ``sys.argv[1:]``.

    Returns
    -------
    int
        Exit status: 0 after the run, 2 (with a usage line on stderr) for a wrong
        number of arguments.
    """
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 2:
        print("usage: python -m tcpmodels.sim.run CONFIG.json OUT_DIR", file=sys.stderr)
        return 2
    config = config_from_dict(json.loads(Path(argv[0]).read_text()))
    simulate(config, argv[1])
    return 0


if __name__ == "__main__":
    code = main()
    # ns-3 objects still referenced from Python would be freed after
    # Simulator::Destroy at interpreter exit, which aborts (double free); every
    # output is written by now, so leave without running finalizers.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)
