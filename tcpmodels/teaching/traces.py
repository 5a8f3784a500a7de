"""Teaching figure: explore a shipped capture — time-sequence graph, RTT samples and bytes in flight of one flow.

Everything is computed by :mod:`tcpmodels.traces` (``read_pcap``, ``annotate``, ``flows``,
``rtt_samples``, ``bytes_in_flight``) and drawn with :mod:`tcpmodels.traces.plots` on the axes
of one figure built without pyplot. Captures live in ``<data_dir>/captures/`` with a JSON
provenance record beside each one.
"""

from __future__ import annotations

import functools
import json
import warnings
from pathlib import Path
from typing import Any

import pandas as pd
from ipywidgets import VBox
from matplotlib.figure import Figure

from tcpmodels._arrays import check_range
from tcpmodels._docstrings import SharedEntries
from tcpmodels.notebook.params import flag, folder, integer, real, text
from tcpmodels.notebook.widgets import dropdown, figure_widget, float_slider, int_slider, lecture_mode
from tcpmodels.teaching.style import figure_wide, new_figure, reuse_layout, teaching_figure, title

__all__ = ["CAPTURE_SUFFIXES", "PARAMETERS", "shipped_captures", "data_flows", "flows_table", "capture_provenance",
           "plot_trace", "trace_widget"]  # fmt: skip

#: Parameters documented once for the docstrings of this module that share them.
_PARAMETERS = SharedEntries("""
    data_dir : str or Path
        Folder holding ``captures/``.
    capture : str
        File name in ``<data_dir>/captures/``.
""")

#: Smallest zoom: the window shows at least this fraction of the flow's duration. [-]
MIN_ZOOM_FRACTION = 0.05
#: The lecture notebook's parameters (checked by :func:`tcpmodels.notebook.params.check_parameters`;
#: the capture name and the flow rank are checked against the capture by :func:`plot_trace`).
PARAMETERS = {
    "quick": flag(),
    "data_dir": folder(),
    "figures_dir": folder(),
    "capture": text(),
    "flow_rank": integer(0, None),
    "zoom_fraction": real(MIN_ZOOM_FRACTION, 1.0),
    "zoom_start_fraction": real(0.0, 1.0),
}

#: File names the explorer offers.
CAPTURE_SUFFIXES = (".pcap", ".pcapng", ".pcap.gz", ".pcapng.gz")
#: Columns of :func:`data_flows`.
_FLOW_COLUMNS = ["src_addr", "src_port", "dst_addr", "dst_port", "packets", "unique_payload_bytes",
                 "retransmitted_packets", "rtt_median_s", "loss_rate", "throughput_bps", "duration_s"]  # fmt: skip


def _captures_dir(data_dir: str | Path) -> Path:
    return Path(data_dir) / "captures"


@_PARAMETERS.fill
def shipped_captures(data_dir: str | Path = "../data") -> list[str]:
    """Names of the capture files in ``<data_dir>/captures/``, sorted.

    Parameters
    ----------
    {data_dir}

    Returns
    -------
    list of str
        File names ending in one of :data:`CAPTURE_SUFFIXES`.

    Raises
    ------
    FileNotFoundError
        If the folder does not exist or holds no capture.
    """
    folder = _captures_dir(data_dir)
    names = sorted(p.name for p in folder.glob("*") if p.name.endswith(CAPTURE_SUFFIXES)) if folder.is_dir() else []
    if not names:
        raise FileNotFoundError(f"no capture ({', '.join(CAPTURE_SUFFIXES)}) in {folder.resolve()}")
    return names


@functools.lru_cache(maxsize=16)
def _analysed(path: str, mtime_ns: int):
    """Packet table, per-packet analysis, flow table, RTT samples and reader warnings of one file (cached)."""
    from tcpmodels.traces import TraceWarning, annotate, flows, read_pcap, rtt_samples

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", TraceWarning)
        packets = read_pcap(path)
    notes = tuple(str(w.message).replace(path, Path(path).name) for w in caught if issubclass(w.category, TraceWarning))
    for w in caught:  # anything else is not ours to hide
        if not issubclass(w.category, TraceWarning):
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    annotated = annotate(packets)
    return packets, annotated, flows(packets, annotated), rtt_samples(packets, annotated), notes


@functools.lru_cache(maxsize=64)
def _limits(path: str, mtime_ns: int, flow_id: int):
    """The limitation intervals of one flow of one file (:func:`tcpmodels.traces.limits.limit_intervals`, cached)."""
    from tcpmodels.traces.limits import limit_intervals

    packets, annotated, *_ = _analysed(path, mtime_ns)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return limit_intervals(packets, annotated, flow_ids=[flow_id])


def _load(capture: str, data_dir: str | Path):
    path = _captures_dir(data_dir) / capture
    if not path.is_file():
        raise ValueError(f"capture {capture!r} not found in {_captures_dir(data_dir)}; shipped: {', '.join(shipped_captures(data_dir))}")
    return _analysed(str(path.resolve()), path.stat().st_mtime_ns)


@_PARAMETERS.fill
def data_flows(capture: str = "cubic_bulk.pcap.gz", data_dir: str | Path = "../data") -> pd.DataFrame:
    """The flow directions of a capture that carry payload, largest first (``flow_rank`` 0, 1, ...).

    Parameters
    ----------
    {capture, data_dir}

    Returns
    -------
    pandas.DataFrame
        Indexed by ``flow_id`` (as in :func:`tcpmodels.traces.flows`), with its address, count,
        byte, retransmission, RTT, loss, throughput and duration columns.
    """
    table = _load(capture, data_dir)[2]
    carrying = table[table["unique_payload_bytes"] > 0]
    return carrying.sort_values("unique_payload_bytes", ascending=False, kind="stable")[_FLOW_COLUMNS]


@_PARAMETERS.fill
def flows_table(capture: str = "cubic_bulk.pcap.gz", data_dir: str | Path = "../data") -> pd.DataFrame:
    """:func:`data_flows` in the lecture's units (KB, ms, Mbit/s), for display.

    Parameters
    ----------
    {capture, data_dir}

    Returns
    -------
    pandas.DataFrame
        Indexed by ``flow_rank`` (the trace explorer's slider value), with ``flow_id``,
        ``from``, ``to``, ``packets``, ``payload_kb`` (unique payload; 1 KB = 1000 B),
        ``retransmitted``, ``rtt_median_ms``, ``loss_rate``, ``throughput_mbps`` and ``duration_s``.
    """
    table = data_flows(capture, data_dir)
    out = pd.DataFrame(
        {
            "flow_id": table.index.to_numpy(),
            "from": [f"{a}:{p}" for a, p in zip(table["src_addr"], table["src_port"])],
            "to": [f"{a}:{p}" for a, p in zip(table["dst_addr"], table["dst_port"])],
            "packets": table["packets"].to_numpy(),
            "payload_kb": table["unique_payload_bytes"].to_numpy() / 1e3,
            "retransmitted": table["retransmitted_packets"].to_numpy(),
            "rtt_median_ms": table["rtt_median_s"].to_numpy() * 1e3,
            "loss_rate": table["loss_rate"].to_numpy(),
            "throughput_mbps": table["throughput_bps"].to_numpy() / 1e6,
            "duration_s": table["duration_s"].to_numpy(),
        }
    )
    out.index.name = "flow_rank"
    return out


@_PARAMETERS.fill
def capture_provenance(capture: str = "cubic_bulk.pcap.gz", data_dir: str | Path = "../data") -> dict[str, Any]:
    """The JSON provenance record shipped beside a capture.

    Parameters
    ----------
    {capture, data_dir}

    Returns
    -------
    dict
        The ``<stem>.json`` beside the capture, ``{}`` if there is none.
    """
    stem = capture
    for suffix in sorted(CAPTURE_SUFFIXES, key=len, reverse=True):
        if stem.endswith(suffix):
            stem = stem[: -len(suffix)]
            break
    path = _captures_dir(data_dir) / f"{stem}.json"
    return json.loads(path.read_text()) if path.is_file() else {}


@_PARAMETERS.fill
@teaching_figure
def plot_trace(
    capture: str = "cubic_bulk.pcap.gz",
    flow_rank: int = 0,
    zoom_fraction: float = 1.0,
    data_dir: str | Path = "../data",
    zoom_start_fraction: float = 0.0,
) -> Figure:
    """Time-sequence graph, RTT samples and bytes in flight of one flow of a shipped capture.

    Parameters
    ----------
    {capture}
    flow_rank : int
        Which payload-carrying flow direction: 0 the one with the most bytes, 1 the next, ... [-]
    zoom_fraction : float
        Width of the time window shown, as a fraction of the flow's duration, in (0, 1]. [-]
    {data_dir}
    zoom_start_fraction : float
        Where the window starts, as a fraction of the flow's duration, in [0, 1]; a window that
        would run past the end is moved back to end there. [-]

    Returns
    -------
    matplotlib.figure.Figure
        Top: sequence number against time with retransmissions and the peer's ACKs, and under it a band of
        what limited the flow in each interval (:mod:`tcpmodels.traces.limits`: window, application, congestion,
        ...). Below (beside each other in the report, stacked in lecture mode): RTT samples (sequence/ACK
        matching with Karn's rule, and timestamp echoes) and bytes in flight at the capture point. Every panel
        counts time from the flow's first packet.
    """
    from tcpmodels.traces import bytes_in_flight
    from tcpmodels.traces.limits_plot import plot_limit_band
    from tcpmodels.traces.plots import plot_bytes_in_flight, plot_rtt_samples, plot_time_sequence

    check_range("zoom_fraction", zoom_fraction, unit="-", low=0, high=1, low_open=True)
    check_range("zoom_start_fraction", zoom_start_fraction, unit="-", low=0, high=1)
    packets, annotated, _, samples, notes = _load(capture, data_dir)
    table = data_flows(capture, data_dir)
    if int(flow_rank) != flow_rank or not 0 <= flow_rank < len(table):
        raise ValueError(f"flow_rank [-] must be an integer in [0, {len(table) - 1}] ({capture} has {len(table)} "
                         f"flow directions with payload); got {flow_rank}")  # fmt: skip
    flow_id = int(table.index[int(flow_rank)])
    row = table.iloc[int(flow_rank)]

    fig = new_figure(11, 7.4, lecture_height_in=6.4)
    if lecture_mode():
        ax_seq, ax_band, ax_rtt, ax_fl = fig.subplots(4, 1, height_ratios=[1.3, 0.16, 1, 1])
    else:
        grid = fig.add_gridspec(3, 2, height_ratios=[1.25, 0.14, 1])
        ax_seq = fig.add_subplot(grid[0, :])
        ax_band = fig.add_subplot(grid[1, :])
        ax_rtt = fig.add_subplot(grid[2, 0])
        ax_fl = fig.add_subplot(grid[2, 1])
    t0 = float(packets["timestamp_s"].to_numpy()[annotated["flow_id"].to_numpy() == flow_id].min())
    plot_time_sequence(packets, flow_id, ax=ax_seq, annotated=annotated, t0_s=t0)
    ax_seq.set_xlabel("time since the flow's first packet [s]")
    ax_seq.legend(loc="upper left", ncol=2, fontsize="small")
    path = _captures_dir(data_dir) / capture
    intervals = _limits(str(path.resolve()), path.stat().st_mtime_ns, flow_id)
    if (intervals["flow_id"] == flow_id).any():
        plot_limit_band(intervals, flow_id, ax=ax_band, t0_s=t0, legend=False)
        shares = intervals.groupby("limit")["active_share"].sum()
        shares = shares[shares > 0] / max(float(shares.sum()), 1e-12)
        ax_band.set_xlabel("")
        ax_band.set_xticks([])
        ax_band.set_ylabel("limit", fontsize="small", rotation=0, ha="right", va="center")
        ax_band.set_title("what limited the flow: " + ", ".join(
            f"{k.replace('_', ' ')} {v:.0%}" for k, v in shares.sort_values(ascending=False).items()),
            fontsize="small")
    else:
        ax_band.axis("off")
    if (samples["flow_id"] == flow_id).any():
        plot_rtt_samples(samples, flow_id, ax=ax_rtt, t0_s=t0)
    else:
        ax_rtt.text(0.5, 0.5, "no RTT samples for this flow", ha="center", va="center", transform=ax_rtt.transAxes)
    plot_bytes_in_flight(bytes_in_flight(packets, flow_id, annotated=annotated), ax=ax_fl, t0_s=t0)
    for ax in (ax_rtt, ax_fl):
        ax.set_xlabel("time since the flow's first packet [s]")
    duration = float(row["duration_s"])
    span = duration * zoom_fraction
    if span > 0:
        start = min(duration * zoom_start_fraction, duration - span)
        for ax in (ax_seq, ax_band, ax_rtt, ax_fl):
            ax.set_xlim(start, start + span)
    rtt_ms = float(row["rtt_median_s"]) * 1e3
    title(ax_seq,
          f"{capture}, flow {flow_id}: {row['src_addr']}:{row['src_port']} -> {row['dst_addr']}:{row['dst_port']}; "
          f"{int(row['unique_payload_bytes']):,} B in {duration:.3g} s "
          f"({float(row['throughput_bps']) / 1e6:.3g} Mbit/s), {int(row['retransmitted_packets'])} retransmitted, "
          f"median RTT {rtt_ms:.3g} ms", fontsize="small")  # fmt: skip
    ax_rtt.set_title("RTT samples", fontsize="small")
    ax_fl.set_title("bytes in flight at the capture point", fontsize="small")
    where = capture_provenance(capture, data_dir).get("capture_point")
    footer = "; ".join(([f"captured at: {where}"] if where else []) + list(notes))
    if footer:
        fig.supxlabel(figure_wide(footer, scale=0.83), fontsize="small", color="0.35")
    # the zoom moves only the x limits: the margins are the flow's (y tick labels, titles, footer) but for an
    # x tick label at the right end of the axes, half of which lies outside them ("1.40" at zoom 0.1 from 0.45)
    return reuse_layout(fig, ("plot_trace", str(Path(data_dir).resolve()), capture, int(flow_rank), _right_end_label(ax_fl)))


def _right_end_label(ax, near: float = 0.03) -> int:
    """Length of the x tick label drawn within ``near`` of the axes' width from their right end, 0 if none is.

    Computed at the current limits without drawing. ``near`` is about half a 4-character label's width on a
    lecture figure: a label farther in does not reach past the axes. (At the left end the y tick labels are
    wider than half an x label.)
    """
    low, high = sorted(ax.get_xlim())
    locs = [x for x in ax.xaxis.get_major_locator()() if low <= x <= high]
    labels = ax.xaxis.get_major_formatter().format_ticks(locs) if locs else []  # the decimals come from all of them
    return max((len(label) for x, label in zip(locs, labels) if x >= high - near * (high - low)), default=0)


@_PARAMETERS.fill
def trace_widget(
    capture: str = "cubic_bulk.pcap.gz",
    flow_rank: int = 0,
    zoom_fraction: float = 1.0,
    data_dir: str | Path = "../data",
    zoom_start_fraction: float = 0.0,
    *,
    preload: bool = True,
) -> VBox:
    """A capture menu, a flow-rank slider and two zoom sliders (width, start) above :func:`plot_trace`.

    The flow slider's range comes from the data: it runs from 0 to the number of
    payload-carrying flow directions of the chosen capture minus one, and follows the
    capture menu (its value is clamped into the new range before the figure is redrawn).

    Parameters
    ----------
    capture : str
        Initially selected file in ``<data_dir>/captures/`` (the first one if not shipped).
    flow_rank : int
        Initial flow: 0 the one with the most bytes. [-]
    zoom_fraction : float
        Initial width of the time window, as a fraction of the flow's duration, in [0.05, 1]. [-]
    {data_dir}
    zoom_start_fraction : float
        Initial start of the window, as a fraction of the flow's duration, in [0, 1]. [-]
    preload : bool
        Read and analyse every capture of the menu now (2 s for the ten shipped ones), so that
        choosing one in the lecture redraws in a fraction of a second instead of reading it then
        (1.2 s for a 12-s capture in the browser test).

    Returns
    -------
    ipywidgets.VBox
        The panel of :func:`tcpmodels.notebook.widgets.figure_widget`.
    """
    names = shipped_captures(data_dir)
    if preload:
        for name in names:
            _load(name, data_dir)
    capture = capture if capture in names else names[0]
    n_flows = _flow_count(capture, data_dir)
    menu = dropdown("capture", names, capture)
    flow = int_slider("flow (0 = most bytes)", min(max(int(flow_rank), 0), n_flows - 1), 0, max(n_flows - 1, 0))
    flow.disabled = n_flows <= 1
    # registered before figure_widget's observer, so the range is right when the figure is redrawn
    menu.observe(functools.partial(_follow_capture, flow, str(data_dir)), names="value")
    zoom = float_slider("window: fraction of the flow [-]", min(max(zoom_fraction, MIN_ZOOM_FRACTION), 1.0),
                        MIN_ZOOM_FRACTION, 1.0, 0.05)
    start = float_slider("window starts at [-]", min(max(zoom_start_fraction, 0.0), 1.0), 0.0, 1.0, 0.05)
    _follow_zoom(start, {"new": zoom.value})
    zoom.observe(functools.partial(_follow_zoom, start), names="value")
    controls = {"capture": menu, "flow_rank": flow, "zoom_fraction": zoom, "zoom_start_fraction": start}
    return figure_widget(plot_trace, controls, fixed={"data_dir": str(data_dir)})


def _follow_zoom(start, change) -> None:
    """Observer of the window width: the start slider offers only starts whose window ends inside the flow.

    :func:`plot_trace` moves a window that would run past the end back to end there, so every start above
    1 - width draws the same window; the slider stops at 1 - width (and is disabled at width 1), so that each
    of its positions draws another window.
    """
    last = max(round(1.0 - float(change["new"]), 6), 0.0)
    if start.value > last:
        start.value = last
    start.max = last
    start.disabled = last <= 0.0


def _flow_count(capture: str, data_dir: str | Path) -> int:
    """Number of payload-carrying flow directions of a capture (at least 1, so the slider has a range)."""
    return max(len(data_flows(capture, data_dir)), 1)


def _follow_capture(flow, data_dir: str, change) -> None:
    """Observer of the capture menu: set the flow slider's range to the new capture's flows."""
    n_flows = _flow_count(change["new"], data_dir)
    if flow.value > n_flows - 1:
        flow.value = n_flows - 1
    flow.max = n_flows - 1
    flow.disabled = n_flows <= 1
