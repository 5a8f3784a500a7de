"""A report on any capture (``tcpmodels analyze``, :mod:`tcpmodels.analyze.cli`), and the tables and figures it shows.

The report is ``notebooks/analyze_capture.ipynb`` executed with papermill (one per
capture, parameter ``capture``); the same notebook opens in JupyterLab. What it
shows is computed here:

- :func:`connection_table`: one row per direction that carried payload: duration,
  bytes, throughput, retransmissions by class, RTT min / median / p95, loss-event
  rate, and for MPTCP subflows their connection and share of its bytes;
- :func:`capture_point`: where the capture was taken, from the handshake, and the
  caution that goes with it (RTT and loss seen at a receiver are not the sender's);
- :func:`model_predictions`: for flows with loss events, the Mathis and PFTK rates
  from the flow's own p, RTT, T0, b and W_max (:func:`tcpmodels.fit.flow_estimates`)
  beside the measured rate;
- :func:`plot_flow`: time-sequence graph, throughput and RTT over time, bytes in flight.

Captures larger than :data:`STREAMING_THRESHOLD_BYTES` (or any, with ``streaming=True``;
``tcpmodels analyze --streaming``) do not fit the notebook's in-memory table: :func:`analyze_streaming`
streams them to a Parquet dataset (:func:`tcpmodels.traces.to_parquet`, with a progress bar) and
computes the flow table per partition on Dask (a local cluster, or ``scheduler``), then writes
``flows.csv`` (every per-flow metric of :func:`tcpmodels.traces.flows`), ``accounting.json`` and
prints the largest flows.

References
----------
.. [1] M. Mathis, J. Semke, J. Mahdavi, T. Ott, "The macroscopic behavior of the TCP congestion
   avoidance algorithm", CCR 27(3), 1997.
.. [2] J. Padhye, V. Firoiu, D. Towsley, J. Kurose, "Modeling TCP Reno performance: a simple model
   and its empirical validation", IEEE/ACM ToN 8(2), 2000.
"""

from __future__ import annotations

import ipaddress
import json
import os
import shutil
import tempfile
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.patches import Patch

from tcpmodels._docstrings import SharedEntries
from tcpmodels.fit import flow_estimates, group_loss_events
from tcpmodels.models.throughput import mathis_throughput_bps, padhye_throughput_bps
from tcpmodels.traces import (
    ReadAccounting,
    TraceWarning,
    annotate,
    bytes_in_flight,
    flows,
    mptcp_subflows,
    read_pcap,
    rtt_samples,
    throughput_series,
)
from tcpmodels.traces.limits import LimitDiagnosis, capture_position, diagnose
from tcpmodels.traces.limits_plot import CLASS_COLOURS, plot_limit_band
from tcpmodels.traces.pcapfile import iter_batches
from tcpmodels.traces.plots import (
    TIME_LABEL,
    plot_bytes_in_flight,
    plot_mptcp_data_sequence,
    plot_rtt_samples,
    plot_subflow_shares_over_time,
    plot_time_sequence,
)

__all__ = ["read_capture", "connection_table", "select_flows", "parse_flow_filter", "capture_point", "model_predictions",
           "plot_flow", "plot_mptcp_connection", "connection_views", "expert_table", "report_inputs", "ReportInputs",
           "limit_notes", "reader_notes", "capture_point_notes", "summary_markdown", "consistency_notes", "analyze",
           "analyze_streaming", "StreamingRun", "check_capture", "report_folders", "report_notebook", "NOTEBOOK_NAME",
           "STREAMING_THRESHOLD_BYTES"]

#: Parameters documented once for the docstrings of this module that share them.
_PARAMETERS = SharedEntries("""
    packets : pandas.DataFrame
        A packet table from :func:`~tcpmodels.traces.read_pcap`.
    annotated : pandas.DataFrame, optional
        :func:`~tcpmodels.traces.annotate` of ``packets`` if already computed.
    path : str or path-like
        The capture file.
    capture : str or path-like
        The capture file.
    connections : pandas.DataFrame
        :func:`connection_table`.
""")

#: The report notebook, in the shipped notebooks (:func:`tcpmodels.report.project.shipped_root`).
NOTEBOOK_NAME = "analyze_capture.ipynb"
#: File endings a report folder's name leaves out (``run.pcap.gz`` -> ``run``).
CAPTURE_SUFFIXES = (".gz", ".pcapng", ".pcap", ".cap")
#: File in each report folder naming the capture it reports on (two captures never share a folder).
SOURCE_FILE = "capture_path.txt"
#: RTT assumed for grouping retransmissions into loss events when a flow has no RTT sample. [s]
FALLBACK_RTT_S = 0.2
#: Captures larger than this (on disk) are analysed by streaming (:func:`analyze_streaming`). [bytes]
STREAMING_THRESHOLD_BYTES = 1 << 30
#: Columns of the flow table that ``tcpmodels analyze --streaming`` prints (``flows.csv`` has them all).
SUMMARY_COLUMNS = ["flow", "packets", "unique_payload_bytes", "duration_s", "throughput_bps", "retransmitted_packets",
                   "fast_retransmissions", "spurious_retransmissions", "out_of_order_packets", "rtt_min_s",
                   "rtt_median_s", "loss_rate", "fct_s"]


@_PARAMETERS.fill
def read_capture(path: str | os.PathLike) -> tuple[pd.DataFrame, list[str]]:
    """The packet table of a capture and the reader's warnings (as text, not raised).

    Parameters
    ----------
    {path}

    Returns
    -------
    tuple
        (packet table of :func:`~tcpmodels.traces.read_pcap`, list of warning messages).
    """
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", TraceWarning)
        packets = read_pcap(path)
    return packets, [str(w.message) for w in caught if issubclass(w.category, TraceWarning)]


def _loss_events(packets: pd.DataFrame, an: pd.DataFrame, rtt_median: pd.Series) -> pd.Series:
    """Loss events per flow: retransmissions (not spurious, not out-of-order) grouped one RTT apart."""
    lost = (an["is_retransmission"] & ~an["is_spurious_retransmission"] & ~an["is_out_of_order"]).to_numpy()
    t = packets["timestamp_s"].to_numpy()[lost]
    fid = an["flow_id"].to_numpy()[lost]
    out = {}
    for f in np.unique(fid):
        times = np.sort(t[fid == f])
        rtt = rtt_median.get(f, np.nan)
        rtt = FALLBACK_RTT_S if not np.isfinite(rtt) or rtt <= 0 else float(rtt)
        out[int(f)] = int(group_loss_events(times, rtt).max()) + 1
    return pd.Series(out, dtype=np.int64)


@dataclass
class ReportInputs:
    """Everything the report notebook shows, computed once (:func:`report_inputs`).

    Attributes
    ----------
    packets, annotated, samples : pandas.DataFrame
        The packet table, :func:`~tcpmodels.traces.annotate` and :func:`~tcpmodels.traces.rtt_samples` of it.
    t0_s : float
        The capture's first packet, time zero of every panel (absolute). [s]
    connections, expert, where : pandas.DataFrame
        :func:`connection_table` (filtered), :func:`expert_table` of its flows, :func:`capture_point`.
    info, warnings : list of str
        :func:`reader_notes`.
    top : list of int
        The flows shown in detail, largest first.
    predictions : pandas.DataFrame
        :func:`model_predictions` of the top flows.
    limits : tcpmodels.traces.limits.LimitDiagnosis
        Why each flow shown was slow (:func:`tcpmodels.traces.limits.diagnose`).
    """

    packets: pd.DataFrame
    annotated: pd.DataFrame
    samples: pd.DataFrame
    t0_s: float
    connections: pd.DataFrame
    expert: pd.DataFrame
    where: pd.DataFrame
    info: list
    warnings: list
    top: list
    predictions: pd.DataFrame
    limits: LimitDiagnosis


@_PARAMETERS.fill
def report_inputs(capture: str | os.PathLike, flow_filter: str = "", top_flows: int = 3) -> ReportInputs:
    """Read a capture and compute what the ``analyze`` report shows.

    Parameters
    ----------
    {capture}
    flow_filter : str
        Only flows with an endpoint ``ADDR``, ``:PORT`` or ``ADDR:PORT`` (see :func:`select_flows`).
    top_flows : int
        Flows shown in detail (largest first).

    Returns
    -------
    ReportInputs
    """
    packets, reader_warnings = read_capture(capture)
    an = annotate(packets)
    connections = select_flows(connection_table(packets, an), flow_filter)
    info, warns = reader_notes(packets.attrs["accounting"], reader_warnings)
    top = [int(f) for f in connections.index[:top_flows]]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TraceWarning)
        limits = diagnose(packets, an, flow_ids=list(connections.index))
    predictions = model_predictions(packets, top, an)
    if len(predictions):
        predictions["model_applies"] = limits.summary["mathis_meaningful"].reindex(predictions.index).fillna(False)
    return ReportInputs(packets=packets, annotated=an, samples=rtt_samples(packets, an),
                        t0_s=float(packets["timestamp_s"].min()) if len(packets) else 0.0, connections=connections,
                        expert=expert_table(packets, connections.index, an), where=capture_point(packets, an),
                        info=info, warnings=warns, top=top, predictions=predictions, limits=limits)


def limit_notes(limits: LimitDiagnosis, flow_ids: Sequence[int]) -> str:
    """One line per flow shown: what limited it (the diagnosis' sentence) and which model applies.

    Parameters
    ----------
    limits : tcpmodels.traces.limits.LimitDiagnosis
        :func:`tcpmodels.traces.limits.diagnose` of the capture.
    flow_ids : sequence of int
        The flows.

    Returns
    -------
    str
        Markdown bullets.
    """
    s = limits.summary
    rows = [f"- flow {f}: {s.loc[f, 'sentence'].rstrip('.')}. *Model:* {s.loc[f, 'model']}." for f in flow_ids
            if f in s.index]
    return "\n".join(rows) or "No flow to diagnose."


def _duration_text(seconds: float) -> str:
    """A duration in the unit that reads best: µs below 1 ms, ms below 1 s, else s."""
    if seconds < 1e-3:
        return f"{seconds * 1e6:.3g} µs"
    if seconds < 1:
        return f"{seconds * 1e3:.3g} ms"
    return f"{seconds:.3g} s"


def _host(addr: str) -> str:
    return f"[{addr}]" if ":" in addr else addr


@_PARAMETERS.fill
def connection_table(packets: pd.DataFrame, annotated: pd.DataFrame | None = None) -> pd.DataFrame:
    """One row per direction that carried payload, largest first.

    Parameters
    ----------
    {packets, annotated}

    Returns
    -------
    pandas.DataFrame
        Indexed by ``flow_id``: ``connection_id``, ``flow`` (``src:port > dst:port``, IPv6 in brackets),
        ``tunnel``, ``duration_s`` [s], ``bytes`` (unique payload) [bytes],
        ``throughput_bps`` [bit/s], ``retransmissions`` (all) and by class
        ``fast_retransmissions``, ``spurious_retransmissions``, ``out_of_order_packets``,
        ``plain_retransmissions``; ``rtt_min_s``, ``rtt_median_s``, ``rtt_p95_s`` (sequence/ACK
        samples) [s]; ``loss_events`` (retransmissions other than spurious and out-of-order,
        grouped one median RTT apart) and ``loss_event_rate`` (per data segment) [-];
        ``mptcp_id``, ``mptcp_subflow`` (-1 for plain TCP) and ``mptcp_share`` (of the
        MPTCP connection's bytes in this direction) [-].
    """
    an = annotate(packets) if annotated is None else annotated
    ft = flows(packets, an)
    ft = ft[ft["payload_bytes"] > 0]
    cols = ["connection_id", "flow", "tunnel", "duration_s", "bytes", "throughput_bps", "retransmissions",
            "fast_retransmissions", "spurious_retransmissions", "out_of_order_packets", "plain_retransmissions",
            "rtt_min_s", "rtt_median_s", "rtt_p95_s", "loss_events", "loss_event_rate", "mptcp_id", "mptcp_subflow",
            "mptcp_share"]
    if ft.empty:
        return pd.DataFrame(columns=cols).rename_axis("flow_id")
    out = pd.DataFrame(index=ft.index)
    out["connection_id"] = ft["connection_id"]
    out["flow"] = [f"{_host(s)}:{sp} > {_host(d)}:{dp}" for s, sp, d, dp in
                   zip(ft["src_addr"].astype(str), ft["src_port"], ft["dst_addr"].astype(str), ft["dst_port"])]
    tunnel = pd.Series(packets["tunnel"].astype(str).to_numpy()).groupby(an["flow_id"].to_numpy()).first()
    out["tunnel"] = tunnel.reindex(ft.index).to_numpy()
    out["duration_s"] = ft["duration_s"]
    out["bytes"] = ft["unique_payload_bytes"]
    out["throughput_bps"] = ft["throughput_bps"]
    out["retransmissions"] = ft["retransmitted_packets"]
    for c in ("fast_retransmissions", "spurious_retransmissions", "out_of_order_packets"):
        out[c] = ft[c]
    out["plain_retransmissions"] = (ft["retransmitted_packets"] - ft["fast_retransmissions"]
                                    - ft["spurious_retransmissions"] - ft["out_of_order_packets"])
    s = rtt_samples(packets, an)
    s = s[s["method"] == "seq"].groupby("flow_id")["rtt_s"]
    out["rtt_min_s"] = s.min().reindex(ft.index)
    out["rtt_median_s"] = s.median().reindex(ft.index)
    out["rtt_p95_s"] = s.quantile(0.95).reindex(ft.index)
    events = _loss_events(packets, an, out["rtt_median_s"])
    out["loss_events"] = events.reindex(ft.index, fill_value=0).astype(np.int64)
    out["loss_event_rate"] = out["loss_events"] / ft["data_packets"].where(ft["data_packets"] > 0)
    out["mptcp_id"], out["mptcp_subflow"], out["mptcp_share"] = -1, -1, np.nan
    sub = mptcp_subflows(packets, annotated=an)
    if len(sub):
        by_conn = sub.set_index("connection_id")
        conn = out["connection_id"]
        known = conn.isin(by_conn.index).to_numpy()
        fwd = ft["is_initiator"].to_numpy()
        out.loc[known, "mptcp_id"] = by_conn["mptcp_id"].reindex(conn[known]).to_numpy()
        out.loc[known, "mptcp_subflow"] = by_conn["subflow"].reindex(conn[known]).to_numpy()
        share = np.where(fwd[known], by_conn["forward_share"].reindex(conn[known]).to_numpy(),
                         by_conn["reverse_share"].reindex(conn[known]).to_numpy())
        out.loc[known, "mptcp_share"] = share
    return out[cols].sort_values("bytes", ascending=False, kind="stable")


def parse_flow_filter(flow_filter: str) -> tuple[str, str]:
    """The address and port of a flow filter ``ADDR``, ``:PORT`` or ``ADDR:PORT`` (IPv6 in brackets with a port).

    Parameters
    ----------
    flow_filter : str
        The filter (``""``: every flow).

    Returns
    -------
    tuple of str
        (address as the packet table writes it, or ``""``; port as decimal text, or ``""``).

    Raises
    ------
    ValueError
        If the address is not an IPv4 or IPv6 address or the port not an integer in [0, 65535]; the
        message quotes the filter and the forms expected (a bare number gets a hint: ``:PORT``).
    """
    f = flow_filter.strip()
    if not f:
        return "", ""
    if f.startswith("["):
        addr, close, port = f[1:].partition("]")
        if not close or (port and not port.startswith(":")):
            addr, port = None, None
        else:
            port = port[1:]
    elif f.count(":") == 1:
        addr, port = f.split(":")
    else:
        addr, port = f, ""
    expected = ("expected ADDR, :PORT or ADDR:PORT (an IPv4 or IPv6 address, a port in [0, 65535]; IPv6 with a "
                "port in brackets: [fd00::1]:80)")
    hint = f"; a port is written with its colon: ':{f}'" if f.isdigit() else ""
    if addr is None or (not addr and not port):
        raise ValueError(f"flow filter {flow_filter!r}: {expected}{hint}")
    if addr:
        try:
            addr = str(ipaddress.ip_address(addr))
        except ValueError:
            raise ValueError(f"flow filter {flow_filter!r}: {addr!r} is not an IP address; {expected}{hint}") \
                from None
    if port:
        if not port.isdigit() or int(port) > 65535:
            raise ValueError(f"flow filter {flow_filter!r}: port {port!r} is not an integer in [0, 65535]; "
                             f"{expected}")
        port = str(int(port))
    return addr, port


def select_flows(table: pd.DataFrame, flow_filter: str = "") -> pd.DataFrame:
    """Rows of a :func:`connection_table` whose either endpoint matches ``ADDR``, ``:PORT`` or ``ADDR:PORT``.

    An empty filter keeps everything. IPv6 addresses go in brackets with a port: ``[fd00::1]:80``.

    Parameters
    ----------
    table : pandas.DataFrame
        A table with a ``flow`` column (``src:port > dst:port``), as :func:`connection_table` gives.
    flow_filter : str
        ``ADDR``, ``:PORT`` or ``ADDR:PORT`` (``""``: everything).

    Returns
    -------
    pandas.DataFrame
        The matching rows.

    Raises
    ------
    ValueError
        For a filter that is not one of the forms (see :func:`parse_flow_filter`).
    """
    addr, port = parse_flow_filter(flow_filter)
    if not addr and not port:
        return table
    if table.empty:
        return table
    ends = table["flow"].str.split(" > ", expand=True)
    keep = np.zeros(len(table), bool)
    for col in (0, 1):
        parts = ends[col].str.rpartition(":")
        host, p = parts[0].str.strip("[]"), parts[2].to_numpy()
        host = host.map({h: str(ipaddress.ip_address(h)) for h in host.unique()}).to_numpy()  # one spelling
        keep |= ((host == addr) if addr else True) & ((p == port) if port else True)
    return table[keep]


def _endpoint_matches(endpoints: list[tuple[str, int]], flow_filter: str) -> bool:
    addr, port = parse_flow_filter(flow_filter)
    return any((not addr or a == addr) and (not port or str(p) == port) for a, p in endpoints)


def _no_match_error(capture: Path, flow_filter: str, endpoints: list[tuple[str, int]]) -> ValueError:
    shown = ", ".join(f"{_host(a)}:{p}" for a, p in endpoints[:6]) or "none (no TCP packet)"
    more = f" and {len(endpoints) - 6} more" if len(endpoints) > 6 else ""
    return ValueError(f"no flow matches --flow {flow_filter!r} in {capture}: its endpoints are {shown}{more}")


@_PARAMETERS.fill
def capture_endpoints(path: str | os.PathLike) -> list[tuple[str, int]]:
    """The TCP endpoints (address, port) of a capture, most packets first (one pass over the file).

    Parameters
    ----------
    {path}

    Returns
    -------
    list of tuple
        (address text as the packet table writes it, port), by packets sent or received, descending.
    """
    from tcpmodels.traces.reader import ChunkedCapture

    counts: dict[tuple[str, int], int] = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TraceWarning)
        for cols in ChunkedCapture(path).decoded():
            for side in ("src", "dst"):
                key = pd.DataFrame({"v": cols["ip_version"], "hi": cols[f"{side}_hi"], "lo": cols[f"{side}_lo"],
                                    "port": cols[f"{side}_port"]}).value_counts()
                for (v, hi, lo, port), n in key.items():
                    raw = (int(hi) << 64 | int(lo)) if v == 6 else int(lo)
                    name = str(ipaddress.ip_address(raw) if v == 4 else ipaddress.IPv6Address(raw))
                    counts[name, int(port)] = counts.get((name, int(port)), 0) + int(n)
    return sorted(counts, key=lambda k: -counts[k])


@_PARAMETERS.fill
def capture_point(packets: pd.DataFrame, annotated: pd.DataFrame | None = None) -> pd.DataFrame:
    """Where each flow was captured, from its handshake, and the caution for RTT and loss measured there.

    For a connection whose handshake was captured, SYN -> SYN/ACK is the round trip
    between the capture point and the responder, SYN/ACK -> ACK the one to the
    initiator. The part on the data *sender's* side is about 0 at the sender
    (below a quarter of the total, or below 1 ms: ``"sender"``). When it is the larger part, the capture is nearer the
    receiver: sequence/ACK RTT samples miss it, and a segment lost before the
    capture point shows as a hole, not as a retransmission. (The position is
    :func:`tcpmodels.traces.limits.capture_position`'s; this adds the caution.)

    Parameters
    ----------
    {packets, annotated}

    Returns
    -------
    pandas.DataFrame
        Indexed by ``flow_id``: ``sender_side_rtt_s``, ``receiver_side_rtt_s`` [s],
        ``position`` (``"sender"``, ``"middle"``, ``"receiver"`` or ``"unknown"``), ``caution`` (text, "" if none).
    """
    where = capture_position(packets, annotated)
    position = where["position"].to_numpy()
    sender = where["sender_side_rtt_s"].to_numpy()
    total = sender + where["receiver_side_rtt_s"].to_numpy()
    caution = []
    for pos, snd, tot in zip(position, sender, total):
        if pos == "unknown":
            caution.append("handshake not captured: the capture point is unknown, so RTT samples may miss part "
                           "of the path and losses before the capture point would not show")
        elif pos == "receiver":
            caution.append(f"captured near the receiver ({snd * 1e3:.3g} of {tot * 1e3:.3g} ms of the handshake "
                           "RTT on the sender's side): RTT samples miss that part and segments lost before the "
                           "capture point show as holes, not retransmissions; p and RTT are unreliable")
        elif pos == "middle":
            caution.append(f"captured mid-path ({snd * 1e3:.3g} of {tot * 1e3:.3g} ms on the sender's side): RTT "
                           "samples cover only the far part; losses before the capture point are not seen")
        else:
            caution.append("")
    return where[["sender_side_rtt_s", "receiver_side_rtt_s", "position"]].assign(caution=caution)


@_PARAMETERS.fill
def model_predictions(packets: pd.DataFrame, flow_ids: list[int] | np.ndarray | pd.Index,
                      annotated: pd.DataFrame | None = None) -> pd.DataFrame:
    """Mathis and PFTK throughput from each flow's own p, RTT, T0, b and W_max, beside its measured rate.

    Flows without a loss event (p = 0) have no prediction and are left out.
    T0 is the flow's observed timeout, else Linux's floor (median RTT + 200 ms).

    Parameters
    ----------
    {packets}
    flow_ids : list of int, numpy.ndarray or pandas.Index
        The flows to predict.
    {annotated}

    Returns
    -------
    pandas.DataFrame
        Indexed by ``flow_id``: ``p``, ``rtt_s`` [s], ``t0_s`` [s], ``t0_observed`` (timeouts seen),
        ``b`` [segments], ``w_max_segments``, ``mss_bytes`` [bytes], ``measured_bps``, ``mathis_bps``,
        ``pftk_bps`` [bit/s], ``mathis_ratio`` and ``pftk_ratio`` (predicted / measured) [-], ``caution``.
    """
    an = annotate(packets) if annotated is None else annotated
    where = capture_point(packets, an)
    rows = {}
    for fid in flow_ids:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", TraceWarning)  # holes: said in the caution column instead
                est = flow_estimates(packets, int(fid), an)
        except ValueError:
            continue
        if not est.loss_events or not np.isfinite(est.rtt_mean_s) or est.loss_event_rate <= 0:
            continue
        t0 = est.t0_s if np.isfinite(est.t0_s) else est.t0_fallback_s
        b = est.b if np.isfinite(est.b) and est.b >= 1 else 2.0
        w = est.w_max_segments if np.isfinite(est.w_max_segments) and est.w_max_segments > 0 else np.inf
        p = min(est.loss_event_rate, 1.0)
        mathis = float(mathis_throughput_bps(est.mss_bytes, est.rtt_mean_s, p, b=b))
        pftk = float(padhye_throughput_bps(est.mss_bytes, est.rtt_mean_s, p, t0, w, b=b)) if np.isfinite(w) \
            else np.nan
        rows[int(fid)] = {"p": p, "rtt_s": est.rtt_mean_s, "t0_s": t0, "t0_observed": est.t0_observed, "b": b,
                          "w_max_segments": est.w_max_segments, "mss_bytes": est.mss_bytes,
                          "measured_bps": est.throughput_bps, "mathis_bps": mathis, "pftk_bps": pftk,
                          "mathis_ratio": mathis / est.throughput_bps if est.throughput_bps > 0 else np.nan,
                          "pftk_ratio": pftk / est.throughput_bps if est.throughput_bps > 0 else np.nan,
                          "caution": "; ".join(c for c in (
                              where["caution"].get(int(fid), ""),
                              f"{est.bytes_not_captured:,} bytes of the flow were never captured: p counts the "
                              "captured segments only" if est.bytes_not_captured else "") if c)}
    cols = ["p", "rtt_s", "t0_s", "t0_observed", "b", "w_max_segments", "mss_bytes", "measured_bps", "mathis_bps",
            "pftk_bps", "mathis_ratio", "pftk_ratio", "caution"]
    return pd.DataFrame.from_dict(rows, orient="index", columns=cols).rename_axis("flow_id")


@_PARAMETERS.fill
def plot_flow(packets: pd.DataFrame, flow_id: int, annotated: pd.DataFrame | None = None,
              samples: pd.DataFrame | None = None, t0_s: float | None = None,
              limits: pd.DataFrame | None = None) -> plt.Figure:
    """Four panels for one flow on one time axis: time-sequence graph (with what limited the flow as a coloured
    band under it, when ``limits`` is given), throughput, RTT samples, bytes in flight.

    Parameters
    ----------
    {packets}
    flow_id : int
        The flow.
    {annotated}
    samples : pandas.DataFrame, optional
        :func:`~tcpmodels.traces.rtt_samples` of ``packets`` if already computed.
    t0_s : float, optional
        Time zero of every panel (absolute) [s]; default the capture's first packet.
    limits : pandas.DataFrame, optional
        :func:`tcpmodels.traces.limits.limit_intervals` (``LimitDiagnosis.intervals``) of the capture.

    Returns
    -------
    matplotlib.figure.Figure
        The figure.
    """
    an = annotate(packets) if annotated is None else annotated
    samples = rtt_samples(packets, an) if samples is None else samples
    t0 = float(packets["timestamp_s"].min()) if t0_s is None else float(t0_s)
    band = limits is not None and (limits["flow_id"] == flow_id).any()
    fig = plt.figure(figsize=(12, 8.3 if band else 7.5), constrained_layout=True)
    grid = fig.add_gridspec(3 if band else 2, 2, height_ratios=[5, 1.1, 5] if band else [1, 1])
    first = fig.add_subplot(grid[0, 0])
    axes = np.array([[first, fig.add_subplot(grid[0, 1], sharex=first)],
                     [fig.add_subplot(grid[-1, 0], sharex=first), fig.add_subplot(grid[-1, 1], sharex=first)]])
    plot_time_sequence(packets, flow_id, ax=axes[0, 0], annotated=an, t0_s=t0)
    axes[0, 0].set_title("time-sequence graph")
    if band:
        strip = fig.add_subplot(grid[1, 0], sharex=first)
        plot_limit_band(limits, flow_id, ax=strip, t0_s=t0, legend=False)
        strip.set_xlabel("")
        strip.set_title("what limited it (traces.limits)", fontsize="small")
        shares = limits[limits["flow_id"] == flow_id].groupby("limit")["active_share"].sum()
        text = ", ".join(f"{k.replace('_', ' ')} {v / shares.sum():.0%}" for k, v in
                         shares.sort_values(ascending=False).items() if shares.sum() > 0 and v > 0)
        key = fig.add_subplot(grid[1, 1])
        key.axis("off")
        present = [c for c in CLASS_COLOURS if c in shares.index]
        key.legend(handles=[Patch(color=CLASS_COLOURS[c], label=c.replace("_", " ")) for c in present],
                   loc="upper left", ncol=4, fontsize="small", frameon=False)
        key.text(0, 0.05, f"share of the transfer: {text}", fontsize="small", transform=key.transAxes)
    t = packets["timestamp_s"].to_numpy()[an["flow_id"].to_numpy() == flow_id]
    span = float(t.max() - t.min()) if len(t) else 0.0
    bin_s = max(span / 100, 1e-3)
    rate = throughput_series(packets, flow_id, bin_s, an)
    axes[0, 1].plot(rate.index - t0, rate.to_numpy() / 1e6, drawstyle="steps-post")
    axes[0, 1].set(xlabel=TIME_LABEL, ylabel="throughput [Mbit/s]", title=f"throughput ({bin_s * 1e3:.3g} ms bins)")
    if (samples["flow_id"] == flow_id).any():
        plot_rtt_samples(samples, flow_id, ax=axes[1, 0], t0_s=t0)
        axes[1, 0].set_title("RTT samples (seq: data segment to its ACK; ts: timestamp echo)")
    else:
        axes[1, 0].text(0.5, 0.5, "no RTT sample: no ACK of this flow's data was captured",
                        ha="center", va="center", transform=axes[1, 0].transAxes)
        axes[1, 0].set(title="RTT samples", yticks=[])
    flight = bytes_in_flight(packets, flow_id, an)
    if len(flight):
        plot_bytes_in_flight(flight, ax=axes[1, 1], t0_s=t0)
        axes[1, 1].set_title("bytes in flight at the capture point")
    else:
        axes[1, 1].text(0.5, 0.5, "no bytes in flight: no data segment of this flow", ha="center", va="center",
                        transform=axes[1, 1].transAxes)
        axes[1, 1].set(title="bytes in flight", yticks=[])
    for ax in axes[0]:
        ax.tick_params(labelbottom=True)
    fig.suptitle(f"flow {flow_id}")
    return fig


def plot_mptcp_connection(mappings: pd.DataFrame, mptcp_id: int, t0_s: float) -> plt.Figure:
    """Two panels for one MPTCP connection: the data-level sequence graph (subflows coloured, reinjections
    marked) and each subflow's share of the data over time, on the capture's time axis.

    Parameters
    ----------
    mappings : pandas.DataFrame
        :func:`~tcpmodels.traces.mptcp_mappings` of the packet table.
    mptcp_id : int
        The MPTCP connection.
    t0_s : float
        Time zero (absolute): the capture's first packet. [s]

    Returns
    -------
    matplotlib.figure.Figure
        The figure.
    """
    m = mappings[mappings["mptcp_id"] == mptcp_id]
    fig, axes = plt.subplots(1, 2, figsize=(12, 3.8), constrained_layout=True, sharex=True)
    plot_mptcp_data_sequence(mappings, mptcp_id, ax=axes[0], t0_s=t0_s)
    axes[0].set_title("data-level sequence (DSN) by subflow")
    span = float(m["time_s"].max() - m["time_s"].min())
    plot_subflow_shares_over_time(mappings, mptcp_id, max(span / 40, 1e-3), ax=axes[1], t0_s=t0_s)
    axes[1].set_title("each subflow's share of the data")
    fig.suptitle(f"MPTCP connection {mptcp_id}")
    return fig


#: Expert Info columns of :func:`expert_table` -> the :func:`~tcpmodels.traces.flows` column each shows.
EXPERT_COLUMNS = {"duplicate ACKs": "duplicate_acks", "zero window": "zero_window_packets",
                  "zero-window probes": "zero_window_probes", "window updates": "window_update_packets",
                  "window full": "window_full_packets", "keep-alives": "keepalive_packets",
                  "previous segment not captured": "previous_segment_not_captured",
                  "ACKed unseen segment": "acked_unseen_packets", "bytes not captured": "bytes_not_captured",
                  "packets captured twice": "duplicate_packets"}


#: The two halves of the connection table as the report shows them: readable headers (with units), narrow
#: enough together for a 1400 px page.
CONNECTION_VIEWS = {
    "flows": {"connection_id": "connection", "flow": "flow", "tunnel": "tunnel", "position": "captured at",
              "duration_s": "duration [s]", "bytes": "bytes", "throughput_bps": "throughput [bit/s]",
              "rtt_min_s": "RTT min [s]", "rtt_median_s": "RTT median [s]", "rtt_p95_s": "RTT p95 [s]",
              "mptcp_id": "MPTCP connection", "mptcp_subflow": "MPTCP subflow", "mptcp_share": "MPTCP share"},
    "losses": {"flow": "flow", "retransmissions": "retrans- missions", "fast_retransmissions": "fast",
               "spurious_retransmissions": "spurious", "out_of_order_packets": "out-of- order",
               "plain_retransmissions": "plain", "loss_events": "loss events", "loss_event_rate": "loss-event rate"},
}


@_PARAMETERS.fill
def connection_views(connections: pd.DataFrame, where: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """The connection table split in two for reading (:data:`CONNECTION_VIEWS`): flows and their rates, then
    their retransmissions and loss events.

    Parameters
    ----------
    {connections}
    where : pandas.DataFrame
        :func:`capture_point`.

    Returns
    -------
    dict
        ``"flows"`` and ``"losses"``: DataFrames indexed by ``flow_id`` with the headers of :data:`CONNECTION_VIEWS`.
    """
    t = connections.join(where[["position"]])
    return {name: t[list(cols)].rename(columns=cols) for name, cols in CONNECTION_VIEWS.items()}


@_PARAMETERS.fill
def expert_table(packets: pd.DataFrame, flow_ids: Sequence[int],
                 annotated: pd.DataFrame | None = None) -> pd.DataFrame:
    """Per flow, the counts Wireshark's Expert Info gives, and the bytes the capture missed.

    Parameters
    ----------
    {packets}
    flow_ids : sequence of int
        The flows (rows, in this order).
    {annotated}

    Returns
    -------
    pandas.DataFrame
        Indexed by ``flow_id``, one column per entry of :data:`EXPERT_COLUMNS` (counts of packets sent by the
        flow; ``bytes not captured`` in bytes). Definitions: :mod:`tcpmodels.traces.flows`.
    """
    an = annotate(packets) if annotated is None else annotated
    ft = flows(packets, an)
    out = ft.reindex(list(flow_ids))[list(EXPERT_COLUMNS.values())]
    out.columns = list(EXPERT_COLUMNS)
    return out.fillna(0).astype(np.int64)


def reader_notes(accounting: ReadAccounting, reader_warnings: list[str]) -> tuple[list[str], list[str]]:
    """The reader's messages split into information (records that are simply not TCP) and warnings.

    Parameters
    ----------
    accounting : tcpmodels.traces.ReadAccounting
        The capture's accounting.
    reader_warnings : list of str
        The messages of :func:`read_capture` (one per warning raised, possibly repeated).

    Returns
    -------
    tuple of list of str
        (information, warnings), each without repeats: skipped records of kinds a TCP capture normally holds
        (``not_ip``, ``not_tcp``, ``ip_fragment_reassembled``) are information; the rest (truncated or bad
        headers, unknown link types, fragments never reassembled, notes) are warnings.
    """
    benign = ("not_ip", "not_tcp", "ip_fragment_reassembled")
    info = []
    skipped = accounting.skipped
    plain = {k: v for k, v in skipped.items() if k in benign}
    if plain:
        names = {"not_ip": "not IP (ARP, LLDP, ...)", "not_tcp": "IP but not TCP (UDP, ICMP, ...)",
                 "ip_fragment_reassembled": "IP fragments reassembled into the segment of their last fragment"}
        info.append(f"{sum(plain.values()):,} of {accounting.records_read:,} records are no TCP segment of the table: "
                    + ", ".join(f"{v:,} {names[k]}" for k, v in plain.items()))
    warn = []
    for w in reader_warnings:
        text = w.split("): ", 1)[1] if "): " in w else w
        parts = [x for x in text.split("; ") if x and not x.startswith("skipped ")]
        other = {k: v for k, v in skipped.items() if k not in benign}
        if other and any(x.startswith("skipped ") for x in text.split("; ")):
            parts.insert(0, f"skipped {sum(other.values()):,} records: " + ", ".join(f"{v:,} {k}" for k, v in other.items()))
        for x in parts:
            if x not in warn:
                warn.append(x)
    return info, warn


def capture_point_notes(where: pd.DataFrame, flow_ids: Sequence[int]) -> list[str]:
    """One bullet per capture position that needs a caution, with the flows it concerns (not one per flow).

    Parameters
    ----------
    where : pandas.DataFrame
        :func:`capture_point` of the packet table.
    flow_ids : sequence of int
        The flows the report shows.

    Returns
    -------
    list of str
        Markdown bullets; empty when there is no flow; "every flow ... at its sender" when none needs one.
    """
    w = where.reindex([f for f in flow_ids if f in where.index])
    if len(w) == 0:
        return ["No flow carried payload: nothing to place."]
    generic = {"receiver": "RTT samples miss the sender's side and segments lost before the capture point show as "
                           "holes, not retransmissions; p and RTT are unreliable",
               "middle": "RTT samples cover only the part of the path beyond the capture point; losses before it "
                         "are not seen",
               "unknown": "the handshake was not captured, so the capture point is unknown: RTT samples may miss "
                          "part of the path and losses before the capture point would not show"}
    out = []
    for pos, text in generic.items():
        fl = w.index[w["position"] == pos].tolist()
        if fl:
            shown = ", ".join(map(str, fl[:8])) + (", ..." if len(fl) > 8 else "")
            label = {"unknown": "capture point unknown"}.get(pos, f"captured {'near the' if pos == 'receiver' else ''}"
                                                                   f"{' receiver' if pos == 'receiver' else 'mid-path'}")
            out.append(f"- **{label}**: {len(fl)} flow{'s' if len(fl) > 1 else ''} ({shown}): {text}.")
    return out or ["- Every flow was captured at (or within 1 ms of) its sender: RTT and loss are the sender's."]


def summary_markdown(capture: str, packets: pd.DataFrame, connections: pd.DataFrame, expert: pd.DataFrame,
                     n_warnings: int, top: int = 3, limits: LimitDiagnosis | None = None) -> str:
    """The report's first screen: what the capture holds and where to look.

    Parameters
    ----------
    capture : str
        The file's name or path.
    packets : pandas.DataFrame
        Its packet table.
    connections : pandas.DataFrame
        :func:`connection_table` (possibly filtered).
    expert : pandas.DataFrame
        :func:`expert_table` of the same flows.
    n_warnings : int
        Number of reader warnings.
    top : int
        Largest flows listed.
    limits : tcpmodels.traces.limits.LimitDiagnosis, optional
        The diagnosis: each listed flow then says what limited it.

    Returns
    -------
    str
        Markdown.
    """
    acc = packets.attrs["accounting"]
    n_conn = connections["connection_id"].nunique() if len(connections) else 0
    n_mptcp = connections.loc[connections["mptcp_id"] >= 0, "mptcp_id"].nunique() if len(connections) else 0
    span = float(packets["timestamp_s"].max() - packets["timestamp_s"].min()) if len(packets) else 0.0
    lines = [f"**{Path(str(capture)).name}**: {acc.records_read:,} records, {acc.tcp_parsed:,} TCP packets over "
             f"{span:.3g} s; {len(connections)} direction{'s' if len(connections) != 1 else ''} carried payload in "
             f"{n_conn} connection{'s' if n_conn != 1 else ''}"
             + (f", {n_mptcp} of them MPTCP" if n_mptcp else "") + "."]
    if len(connections) == 0:
        lines.append("There is no TCP payload to analyse" + (" (see the reader's warnings below)." if n_warnings
                                                              else "."))
        return "\n\n".join(lines)
    lines.append("Largest flows:")
    for fid, r in connections.head(top).iterrows():
        rtx = int(r["retransmissions"])
        rtt = r["rtt_median_s"]
        lines.append(f"- flow {fid} `{r['flow']}`: {int(r['bytes']):,} bytes at {r['throughput_bps'] / 1e6:.3g} "
                     f"Mbit/s, {rtx} retransmission{'s' if rtx != 1 else ''}"
                     + (f" in {int(r['loss_events'])} loss event{'s' if r['loss_events'] != 1 else ''}" if rtx else "")
                     + (f", median RTT {_duration_text(rtt)}" if np.isfinite(rtt) else ", no RTT sample")
                     + (f". {limits.summary.loc[fid, 'sentence']}" if limits is not None
                        and fid in limits.summary.index else ""))
    look = []
    holes = expert["bytes not captured"]
    if (holes > 0).any():
        look.append(f"{int((holes > 0).sum())} flow(s) miss {int(holes.sum()):,} bytes the capture never held "
                    "(Expert Info): their counts are of what was captured")
    if n_warnings:
        look.append(f"{n_warnings} reader warning{'s' if n_warnings > 1 else ''} (below the accounting)")
    lossy = connections.index[connections["loss_events"] > 0][:top].tolist()
    if lossy:
        look.append(f"the models against the measured rate for the lossy flow(s) {', '.join(map(str, lossy))}")
    if n_mptcp:
        look.append("the MPTCP section: data-level sequence and each subflow's share")
    if look:
        lines.append("Where to look: " + "; ".join(look) + ".")
    return "\n\n".join(lines)


@_PARAMETERS.fill
def consistency_notes(connections: pd.DataFrame, samples: pd.DataFrame, predictions: pd.DataFrame,
                      flow_ids: Sequence[int]) -> list[str]:
    """One sentence per flow where two numbers of the report that look alike differ, saying why.

    - the table's median RTT (sequence/ACK samples, Karn's rule) against the timestamp-echo samples of the
      graph, when they differ by more than a factor of two: timestamp echoes include the receiver's ACK delay
      and the sender's timestamp clock granularity (1 ms on Linux), sequence samples taken near a receiver
      miss the sender's side;
    - the table's loss-event rate (the whole flow) against the model's p (the steady window after the first
      loss event), when they differ by more than 20 %.

    Parameters
    ----------
    {connections}
    samples : pandas.DataFrame
        :func:`~tcpmodels.traces.rtt_samples`.
    predictions : pandas.DataFrame
        :func:`model_predictions`.
    flow_ids : sequence of int
        The flows shown.

    Returns
    -------
    list of str
        Markdown bullets (empty when nothing differs).
    """
    out = []
    ts = samples[samples["method"] == "ts"].groupby("flow_id")["rtt_s"].median()
    for fid in flow_ids:
        if fid not in connections.index:
            continue
        seq_med = connections.loc[fid, "rtt_median_s"]
        ts_med = ts.get(fid, np.nan)
        if np.isfinite(seq_med) and np.isfinite(ts_med) and seq_med > 0 and not 0.5 <= ts_med / seq_med <= 2:
            out.append(f"- flow {fid}: the table's median RTT ({_duration_text(seq_med)}) is from data segments and "
                       f"their ACKs (Karn's rule); the timestamp echoes in the graph have median "
                       f"{_duration_text(ts_med)}: they also time the receiver's delayed ACKs and the sender's 1 ms "
                       "timestamp clock, and include segments whose ACK was ambiguous.")
        if fid in predictions.index:
            p_model = predictions.loc[fid, "p"]
            p_table = connections.loc[fid, "loss_event_rate"]
            if np.isfinite(p_table) and p_table > 0 and not 0.8 <= p_model / p_table <= 1.25:
                out.append(f"- flow {fid}: the table's loss-event rate ({p_table:.3g}) covers the whole flow; the "
                           f"models' p ({p_model:.3g}) is measured in its steady window, after the first loss "
                           "event (slow start left out), as the models assume.")
    return out


def report_notebook() -> Path:
    """The report notebook: ``analyze_capture.ipynb`` of the shipped notebooks (a checkout's, or an installed wheel's).

    Returns
    -------
    pathlib.Path
        The notebook file.

    Raises
    ------
    FileNotFoundError
        If this installation ships no notebooks (see :func:`tcpmodels.report.project.shipped_root`).
    """
    from tcpmodels.report.project import shipped_root

    nb = shipped_root() / "notebooks" / NOTEBOOK_NAME
    if not nb.is_file():
        raise FileNotFoundError(f"the report notebook {nb} is missing from this installation")
    return nb


def _folder_name(path: Path) -> str:
    name = path.name
    stripped = True
    while stripped:
        stripped = False
        for suffix in CAPTURE_SUFFIXES:
            if name.lower().endswith(suffix) and len(name) > len(suffix):
                name, stripped = name[:-len(suffix)], True
    return name.lstrip(".") or "capture"  # a capture named ".pcap" reports into "pcap", never the output root


def report_folders(captures: list[str | os.PathLike], output_dir: str | os.PathLike) -> dict[Path, Path]:
    """The report folder of each capture: ``output_dir/<file name without .pcap/.pcapng/.cap/.gz>``.

    Parameters
    ----------
    captures : list of str or path-like
        Capture files (the same file named twice counts once).
    output_dir : str or path-like
        Parent folder of the reports.

    Returns
    -------
    dict
        Capture (resolved path) -> its report folder, in the order given.

    Raises
    ------
    ValueError
        If two captures would share a folder (``a/run.pcap`` and ``b/run.pcap``, ``run.pcap`` and
        ``run.pcapng``), or a folder holds the report of another capture from an earlier run
        (its ``capture_path.txt``); the message names both captures.
    """
    out = Path(output_dir)
    folders: dict[Path, Path] = {}
    owner: dict[Path, Path] = {}
    for c in captures:
        p = Path(c).resolve()
        if p in folders:
            continue
        folder = out / _folder_name(p)
        if folder in owner:
            raise ValueError(f"{owner[folder]} and {p} would share the report folder {folder}; analyze them "
                             "into different --output-dir folders (or rename one)")
        marker = folder / SOURCE_FILE
        if marker.is_file():
            earlier = marker.read_text().strip()
            if earlier and Path(earlier) != p:
                raise ValueError(f"{folder} holds the report of {earlier}; {p} would overwrite it: choose "
                                 "another --output-dir (or remove that folder)")
        folders[p], owner[folder] = folder, p
    return folders


def _check_output_dir(output_dir: Path) -> None:
    """A folder the reports can go into: created if missing, writable; a clear error otherwise."""
    if output_dir.exists() and not output_dir.is_dir():
        raise NotADirectoryError(f"the output directory {output_dir} is a file, not a folder (--output-dir)")
    try:
        output_dir.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=output_dir):
            pass
    except OSError as exc:
        raise PermissionError(f"the output directory {output_dir} cannot be written (--output-dir): "
                              f"{exc.strerror or exc}") from None


def analyze(captures: list[str | os.PathLike], output_dir: str | os.PathLike = "analysis", flow_filter: str = "",
            top_flows: int = 3, timeout_s: float = 1800, *, streaming: bool | None = None,
            scheduler: str | None = None) -> list:
    """Report on each capture into its own folder of ``output_dir``: the notebook, or for big files the flow table.

    Everything is checked before any capture is analysed: the captures, the options, the
    report folders (:func:`report_folders`), the output directory and, with a flow filter,
    that the filter matches an endpoint of each capture.

    Parameters
    ----------
    captures : list of str or path-like
        Capture files.
    output_dir : str or path-like
        Parent folder of the reports (one folder per capture, :func:`report_folders`).
    flow_filter : str
        Only flows with an endpoint ``ADDR``, ``:PORT`` or ``ADDR:PORT`` (see :func:`parse_flow_filter`).
    top_flows : int
        Flows shown in detail (largest first; at least 1).
    timeout_s : float
        Per-notebook execution limit. [s]
    streaming : bool, optional
        ``True``: every capture through :func:`analyze_streaming`; ``False``: every one through the
        notebook; ``None`` (default): streaming for files above :data:`STREAMING_THRESHOLD_BYTES`.
    scheduler : str, optional
        Streaming only: Dask scheduler address; ``None`` starts a local cluster.

    Returns
    -------
    list
        Per capture, in order: a :class:`tcpmodels.report.NotebookRun` (notebook) or a
        :class:`StreamingRun`; each has ``status``, ``output_html``, ``output_ipynb``, ``failing_cell``, ``error``.

    Raises
    ------
    CaptureFileError, FileNotFoundError
        Before running anything, if a file is not a readable capture.
    ValueError
        Before running anything: ``top_flows`` not a positive integer, ``timeout_s`` not > 0, a flow
        filter that does not parse or matches no endpoint of a capture ("no flow matches ...", with
        a few of its endpoints), two captures that would share a report folder.
    NotADirectoryError, PermissionError
        Before running anything, if ``output_dir`` is a file, or cannot be created or written.
    """
    from tcpmodels.report import run_notebook

    if isinstance(top_flows, bool) or not isinstance(top_flows, (int, np.integer)) or top_flows < 1:
        raise ValueError(f"top_flows (--top) must be a positive integer; got {top_flows!r}")
    if not (isinstance(timeout_s, (int, float)) and timeout_s > 0):
        raise ValueError(f"timeout_s [s] must be > 0; got {timeout_s!r}")
    parse_flow_filter(flow_filter)
    paths = [Path(c).resolve() for c in captures]
    for p in paths:
        check_capture(p)
    folders = report_folders(paths, output_dir)
    _check_output_dir(Path(output_dir))
    big = {p: p.stat().st_size > STREAMING_THRESHOLD_BYTES if streaming is None else bool(streaming) for p in folders}
    notebook = report_notebook() if not all(big.values()) else None
    if flow_filter.strip():
        for p in folders:
            if not big[p]:  # streamed captures are checked on their flow table (one pass, not two)
                endpoints = capture_endpoints(p)
                if not _endpoint_matches(endpoints, flow_filter):
                    raise _no_match_error(p, flow_filter, endpoints)
    runs = []
    for p, out in folders.items():
        out.mkdir(parents=True, exist_ok=True)
        (out / SOURCE_FILE).write_text(f"{p}\n")
        if big[p]:
            runs.append(analyze_streaming(p, out, scheduler=scheduler, flow_filter=flow_filter, top_flows=top_flows))
        else:
            runs.append(run_notebook(notebook, out, {"capture": str(p), "flow_filter": flow_filter,
                                                     "top_flows": int(top_flows)}, timeout_s))
    return runs


@dataclass
class StreamingRun:
    """What :func:`analyze_streaming` wrote (the attributes the CLI reads match ``NotebookRun``'s).

    Attributes
    ----------
    capture : pathlib.Path
        The capture analysed.
    output_dir : pathlib.Path
        Its report folder.
    flows_csv : pathlib.Path
        The flow table (every column of :func:`tcpmodels.traces.flows`, plus ``flow`` as text).
    dataset : pathlib.Path
        The packet dataset written on the way (reusable: ``tcpmodels.traces.flows(dataset)``).
    summary : str
        The printed table of the largest flows.
    status : str
        ``"ok"`` or ``"failed"``.
    error : str
        The error when failed.
    """

    capture: Path
    output_dir: Path
    flows_csv: Path
    dataset: Path
    summary: str = ""
    status: str = "ok"
    error: str = ""
    failing_cell: int | None = None
    output_html: Path | None = field(default=None)

    @property
    def output_ipynb(self) -> Path:
        """The flow table written (the CLI prints it where a notebook run prints its notebook)."""
        return self.flows_csv


@_PARAMETERS.fill
def analyze_streaming(capture: str | os.PathLike, output_dir: str | os.PathLike, *, scheduler: str | None = None,
                      partitions: int | None = None, flow_filter: str = "", top_flows: int = 3,
                      progress: bool = True) -> StreamingRun:
    """A capture of any size: stream it to a Parquet dataset, flows per partition on Dask, write and print them.

    Memory is set by the chunk and partition sizes, not by the capture (see
    :func:`tcpmodels.traces.cluster.large_capture_flows`).

    Parameters
    ----------
    {capture}
    output_dir : str or path-like
        Report folder: ``flows.csv``, ``accounting.json`` and ``packets.parquet/`` (the dataset) go there.
    scheduler : str, optional
        Dask scheduler address; ``None`` starts a local cluster.
    partitions : int, optional
        Dataset partitions (default: one per 64 MiB of capture, at least 16).
    flow_filter : str
        Only flows with an endpoint ``ADDR``, ``:PORT`` or ``ADDR:PORT`` in the printed table and the CSV.
    top_flows : int
        Flows printed (largest unique payload first; at least 10 are printed).
    progress : bool
        Progress bars (tqdm, on stderr) while reading and while computing the partitions.

    Returns
    -------
    StreamingRun
        The files written and the printed summary.
    """
    from tcpmodels.traces.cluster import large_capture_flows
    from tcpmodels.traces.dataset import METADATA_FILE, open_dataset

    out = Path(output_dir)
    out.mkdir(parents=True, exist_ok=True)
    ds_dir = out / "packets.parquet"
    if (ds_dir / METADATA_FILE).exists():
        open_dataset(ds_dir)  # a complete dataset of an earlier run, nothing else in the folder (else DatasetError)
        shutil.rmtree(ds_dir)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", TraceWarning)
        ft, ds = large_capture_flows(capture, ds_dir, scheduler=scheduler, partitions=partitions, progress=progress)
    ft = ft.copy()
    ft.insert(0, "flow", [f"{_host(str(s))}:{sp} > {_host(str(d))}:{dp}" for s, sp, d, dp in
                          zip(ft["src_addr"], ft["src_port"], ft["dst_addr"], ft["dst_port"])])
    if flow_filter.strip():
        chosen = select_flows(ft, flow_filter)
        if chosen.empty:
            ends = pd.concat([ft[["src_addr", "src_port"]].set_axis(["a", "p"], axis=1),
                              ft[["dst_addr", "dst_port"]].set_axis(["a", "p"], axis=1)]).astype({"a": str})
            endpoints = [(str(ipaddress.ip_address(a)), int(p)) for a, p in ends.value_counts().index]
            raise _no_match_error(Path(capture), flow_filter, endpoints)
        ft = chosen
    csv_path = out / "flows.csv"
    ft.to_csv(csv_path)
    acc = ds.accounting.to_dict()
    acc["warnings"] = [str(w.message) for w in caught if issubclass(w.category, TraceWarning)]
    (out / "accounting.json").write_text(json.dumps(acc, indent=1))
    top = ft.sort_values("unique_payload_bytes", ascending=False, kind="stable").head(max(int(top_flows), 10))
    summary = (f"{Path(capture).name}: {acc['records_read']} records, {acc['tcp_parsed']} TCP packets, "
               f"{len(ft)} flows\n" + top[SUMMARY_COLUMNS].to_string())
    print(summary)
    return StreamingRun(capture=Path(capture), output_dir=out, flows_csv=csv_path, dataset=ds_dir, summary=summary)


def check_capture(path: str | os.PathLike) -> None:
    """Raise CaptureFileError / FileNotFoundError unless ``path`` starts like a capture file.

    Parameters
    ----------
    path : str or path-like
        The file to check (only its start is read).

    Returns
    -------
    None
    """
    next(iter(iter_batches(path, chunk_bytes=1 << 16)), None)
