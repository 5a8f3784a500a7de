"""The teaching figures and widget panels (tcpmodels.teaching) and the shape of the teaching notebooks.

Numbers are checked against the model functions or closed forms computed here, not against
what the plot helpers compute themselves.
"""

from __future__ import annotations

import io
import json
import math
from contextlib import redirect_stdout
from pathlib import Path

import numpy as np
import pytest
from matplotlib.figure import Figure

from tcpmodels.models.heavytail import onoff_mean_rate
from tcpmodels.models.mptcp import lia_equilibrium
from tcpmodels.models.throughput import (
    mathis_throughput_bps,
    padhye_approx_throughput_bps,
    padhye_throughput_bps,
)
from tcpmodels.teaching import figure_widget, render
from tcpmodels.teaching.bdp import bdp_table, bdp_widget, plot_bdp_window
from tcpmodels.teaching.heavytail import (
    BIN_S,
    POINTS_PER_PANEL,
    aggregate_series,
    hurst_table,
    hurst_widget,
    pareto_widget,
    plot_hurst_estimates,
    plot_pareto_samples,
    plot_self_similarity,
    self_similarity_widget,
)
from tcpmodels.teaching.mptcp import lia_table, lia_widget, plot_lia_two_paths
from tcpmodels.teaching.throughput import (
    pftk_regime,
    plot_throughput_models,
    throughput_table,
    throughput_widget,
)

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"
MY_NOTEBOOKS = ["teach_throughput_models", "teach_bdp_window_scaling", "teach_mptcp_lia", "teach_heavy_tails",
                "teach_trace_explorer", "teach_cubic_vs_reno"]


# --------------------------------------------------------------------------- throughput


def test_pftk_regime_window_region_is_exactly_where_the_window_term_wins():
    p = np.logspace(-7, -0.01, 400)
    rtt, t0, w, mss = 0.1, 0.4, 64.0, 1460.0
    regime = np.asarray(pftk_regime(rtt, p, t0, w))
    approx = padhye_approx_throughput_bps(mss, rtt, p, t0, w)
    ceiling = w * mss * 8 / rtt
    assert set(np.unique(regime)) == {0.0, 1.0, 2.0}
    np.testing.assert_allclose(approx[regime == 0], ceiling, rtol=1e-12)
    assert np.all(approx[regime != 0] < ceiling)
    # boundary from the Mathis form: C / sqrt(p) = W_max with C = sqrt(3 / (2 b)), b = 2
    first_loss_limited = p[np.argmax(regime > 0)]
    assert first_loss_limited == pytest.approx((math.sqrt(0.75) / w) ** 2, rel=0.05)


def test_pftk_regime_timeout_region_is_where_pftk_falls_below_half_of_mathis():
    # Mathis with C = sqrt(3/(2b)) is 1/(RTT sqrt(2bp/3)): the timeout term exceeds the
    # triple-dup term exactly when the (unlimited) PFTK rate drops below half of Mathis.
    p = np.logspace(-4, -0.01, 300)
    for rtt in (0.01, 0.1, 1.0):
        regime = np.asarray(pftk_regime(rtt, p, 0.4, np.inf))
        ratio = padhye_approx_throughput_bps(1000, rtt, p, 0.4, np.inf) / mathis_throughput_bps(1000, rtt, p, b=2)
        assert np.all(ratio[regime == 2] < 0.5)
        assert np.all(ratio[regime == 1] >= 0.5)


def test_pftk_regime_shapes_nan_and_errors():
    assert pftk_regime(0.1, [1e-5, 1e-2, 0.2], 0.4, 64).tolist() == [0.0, 1.0, 2.0]
    assert math.isnan(pftk_regime(0.1, float("nan"), 0.4, 64))
    with pytest.raises(ValueError, match=r"loss_rate \[-\] must be in \(0, 1\]; got 0"):
        pftk_regime(0.1, 0.0, 0.4, 64)
    with pytest.raises(ValueError, match="rtt_s"):
        pftk_regime(-1.0, 0.01, 0.4, 64)


def test_throughput_table_matches_the_models():
    table = throughput_table(loss_rate=0.05, rtt_ms=80, mss_bytes=1000, t0_ms=300, w_max_segments=30, b=1)
    rates = dict(zip(table.model, table.rate_mbps * 1e6))
    assert rates["Mathis (C = sqrt(3/2b))"] == pytest.approx(mathis_throughput_bps(1000, 0.08, 0.05, b=1))
    assert rates["PFTK full (eq. 31)"] == pytest.approx(padhye_throughput_bps(1000, 0.08, 0.05, 0.3, 30, b=1))
    assert rates["PFTK approx. (eq. 32)"] == pytest.approx(padhye_approx_throughput_bps(1000, 0.08, 0.05, 0.3, 30, b=1))
    assert rates["window ceiling W_max MSS / RTT"] == pytest.approx(30 * 1000 * 8 / 0.08)
    assert table.attrs["regime"] == "triple-dup losses (1/sqrt p)"


def test_throughput_figure_marks_the_model_values_at_the_chosen_point():
    fig = plot_throughput_models(loss_rate=0.02, rtt_ms=50, t0_ms=200, w_max_segments=20, n_points=30)
    assert isinstance(fig, Figure) and len(fig.axes) == 2
    markers = [ln for ln in fig.axes[0].get_lines() if ln.get_marker() == "o"]
    expected = sorted([
        mathis_throughput_bps(1460, 0.05, 0.02, b=2), padhye_throughput_bps(1460, 0.05, 0.02, 0.2, 20),
        padhye_approx_throughput_bps(1460, 0.05, 0.02, 0.2, 20), 20 * 1460 * 8 / 0.05,
    ])  # fmt: skip
    got = sorted(float(ln.get_ydata()[0]) * 1e6 for ln in markers)
    np.testing.assert_allclose(got, expected, rtol=1e-12)
    assert all(float(ln.get_xdata()[0]) == 0.02 for ln in markers)
    with pytest.raises(ValueError, match="loss_rate"):
        plot_throughput_models(loss_rate=1.0)


# --------------------------------------------------------------------------- BDP


def test_bdp_table_reproduces_the_lftcp_numbers():
    table = bdp_table(100.0, 296.0, 14).set_index("quantity")["value"]
    assert table["bandwidth-delay product"] == pytest.approx(100e9 * 0.296 / 8 / 1e6)  # 3700 MB
    assert table["smallest window-scale shift that covers it"] == 16  # 3.7e9 / 65535 = 2^15.8
    assert not table["standard TCP can fill the link (shift <= 14)"]
    ceiling_gbps = table["ceiling: that window per RTT"]
    assert ceiling_gbps == pytest.approx(65535 * 2**14 * 8 / 0.296 / 1e9)
    assert abs(ceiling_gbps - 29.0) <= 0.5  # the press release's "29 Gbit/s", printed to 1 Gbit/s


def test_bdp_table_small_path_and_bad_shift():
    table = bdp_table(10.0, 150.0, 12).set_index("quantity")["value"]
    assert table["smallest window-scale shift that covers it"] == 12  # 187.5 MB / 65535 = 2^11.5
    assert table["share of the link one connection can use"] == 1.0
    with pytest.raises(ValueError, match=r"wscale_shift \[-\] must be an integer in \[0, 14\]; got 15"):
        plot_bdp_window(wscale_shift=15)
    with pytest.raises(ValueError, match="rtt_ms"):
        bdp_table(1.0, 0.0)


def test_bdp_figure_shows_the_ceiling_at_the_chosen_rtt():
    fig = plot_bdp_window(rate_gbps=100.0, rtt_ms=296.0, wscale_shift=14, n_points=20)
    ax_rate = fig.axes[1]
    point = [ln for ln in ax_rate.get_lines() if ln.get_marker() == "o"][0]
    assert float(point.get_ydata()[0]) == pytest.approx(29.0196, abs=1e-3)
    assert "29.0" in ax_rate.get_title() and "29.0%" in ax_rate.get_title()


# --------------------------------------------------------------------------- MPTCP


def test_lia_identical_paths_split_one_tcp_in_half():
    table = lia_table(50.0, 50.0, 0.01, 0.01)
    w_tcp = math.sqrt(2) / math.sqrt(0.01)
    assert table.loc["path 1", "lia_window_segments"] == pytest.approx(w_tcp / 2)
    assert table.loc["path 2", "lia_window_segments"] == pytest.approx(w_tcp / 2)
    assert table.attrs["alpha"] == pytest.approx(0.5)
    one_tcp_mbps = w_tcp / 0.05 * 1460 * 8 / 1e6
    assert table.loc["total", "lia_mbps"] == pytest.approx(one_tcp_mbps)
    assert table.loc["total", "tcp_mbps"] == pytest.approx(2 * one_tcp_mbps)


def test_lia_table_agrees_with_the_model_and_rfc6356_goals():
    table = lia_table(20.0, 80.0, 0.01, 0.001)
    eq = lia_equilibrium([0.02, 0.08], [0.01, 0.001])
    np.testing.assert_allclose(table.lia_mbps.iloc[:2], eq.rates_bps / 1e6)
    assert table.loc["total", "lia_mbps"] == pytest.approx(table.attrs["best_single_path_mbps"])  # goal 1
    assert (table.lia_mbps.iloc[:2] <= table.tcp_mbps.iloc[:2] * (1 + 1e-9)).all()  # goal 2
    ratio = table.loc["path 2", "lia_window_segments"] / table.loc["path 1", "lia_window_segments"]
    assert ratio == pytest.approx(10.0)  # goal 3: windows proportional to 1 / p


def test_lia_figure_sweep_total_is_the_best_single_path():
    fig = plot_lia_two_paths(20.0, 80.0, 0.01, 0.001, n_points=8)
    lines = {ln.get_label(): ln for ln in fig.axes[1].get_lines()}
    total = lines["LIA total"].get_ydata()
    best = lines["best single path = LIA total (goal 1)"].get_ydata()
    np.testing.assert_allclose(total, best, rtol=1e-6)
    with pytest.raises(ValueError, match="loss_rate2"):
        plot_lia_two_paths(loss_rate2=0.0)


# --------------------------------------------------------------------------- heavy tails


def test_aggregate_series_has_the_onoff_mean_and_is_cached():
    data = aggregate_series(1.5, 40, 3, n_scales=3)
    assert len(data) == POINTS_PER_PANEL * 100
    assert data.t_s.iloc[1] == pytest.approx(BIN_S)
    mean = onoff_mean_rate(40, 1.0, 1.0, 100.0)
    assert data.onoff_pps.mean() == pytest.approx(mean, rel=0.15)
    assert data.poisson_pps.mean() == pytest.approx(mean, rel=0.02)
    from tcpmodels.teaching.heavytail import _series

    hits = _series.cache_info().hits
    again = aggregate_series(1.5, 40, 3, n_scales=3)  # a slider move elsewhere must not regenerate traffic
    assert _series.cache_info().hits == hits + 1
    np.testing.assert_array_equal(again.onoff_pps, data.onoff_pps)
    with pytest.raises(ValueError, match="alpha"):
        aggregate_series(1.0)
    with pytest.raises(ValueError, match="n_scales"):
        aggregate_series(1.5, n_scales=7)


def test_hurst_estimates_separate_onoff_from_poisson():
    table = hurst_table(1.2, 50, 0, n_scales=3)
    poisson = table[table.series == "Poisson"].set_index("method").hurst
    onoff = table[table.series == "ON/OFF"].set_index("method").hurst
    assert (abs(poisson - 0.5) < 0.1).all(), poisson
    assert (onoff > poisson + 0.2).all(), (onoff, poisson)
    assert table[table.series == "ON/OFF"].theory.iloc[0] == pytest.approx(0.9)


def test_self_similarity_rows_zoom_by_ten_and_are_normalised():
    fig = plot_self_similarity(1.4, 30, 1, n_scales=3)
    axes = np.array(fig.axes).reshape(3, 2)
    spans = [ax.get_xlim() for ax in axes[:, 0]]
    for (lo0, hi0), (lo1, hi1) in zip(spans, spans[1:]):
        assert hi1 - lo1 == pytest.approx((hi0 - lo0) / 10)
        assert lo0 <= lo1 and hi1 <= hi0
    top = axes[0, 0].get_lines()[0].get_ydata()
    assert len(top) == POINTS_PER_PANEL
    assert np.mean(top) == pytest.approx(1.0, abs=0.25)
    # Poisson at the coarsest scale is far smoother than ON/OFF traffic
    assert np.std(axes[0, 1].get_lines()[0].get_ydata()) < 0.5 * np.std(top)


def test_pareto_and_hurst_figures_build():
    fig = plot_pareto_samples(alpha=1.3, mean_kb=10.0, n_samples=500, seed=2)
    running = fig.axes[1].get_lines()[0].get_ydata()
    rng_mean = running[-1]
    assert rng_mean > 0 and len(running) == 500
    assert "largest 1% of files" in fig.axes[0].get_title()
    assert isinstance(plot_hurst_estimates(1.4, 20, 0, n_scales=3), Figure)
    with pytest.raises(ValueError, match="n_samples"):
        plot_pareto_samples(n_samples=10)


# --------------------------------------------------------------------------- widgets


def test_render_passes_only_accepted_arguments_and_reports_value_errors():
    import matplotlib.pyplot as plt

    seen = []

    def good(rtt_ms=1.0):
        seen.append(rtt_ms)
        return Figure()

    def bad(loss_rate=0.1):
        raise ValueError("loss_rate [-] must be in (0, 1]; got 0")

    buf = io.StringIO()
    with redirect_stdout(buf):
        figs = render((good, bad), {"n_points": 5}, rtt_ms=7.0, loss_rate=0.0)
    assert seen == [7.0] and len(figs) == 1
    assert "bad: loss_rate [-] must be in (0, 1]; got 0" in buf.getvalue()
    assert plt.get_fignums() == []  # nothing left open in pyplot


def test_figure_widget_redraws_when_a_control_changes():
    import ipywidgets as widgets

    calls = []

    def plot(x=0.0, n_points=0):
        calls.append((x, n_points))
        return Figure()

    slider = widgets.FloatSlider(value=1.0, min=0.0, max=5.0)
    with redirect_stdout(io.StringIO()):
        panel = figure_widget(plot, {"x": slider}, fixed={"n_points": 9})
        slider.value = 2.5
    image, message = panel.children[1].children
    assert isinstance(image, widgets.Image) and message.value == ""
    assert image.format == "url" and bytes(image.value).startswith(b"data:image/png;base64,iVBORw0KGgo")  # a PNG
    assert calls == [(1.0, 9), (2.5, 9)]
    with pytest.raises(ValueError, match="plot_fns"):
        figure_widget((), {"x": slider})


@pytest.mark.parametrize(
    "make",
    [throughput_widget, bdp_widget, lia_widget, self_similarity_widget, hurst_widget, pareto_widget],
    ids=["throughput", "bdp", "lia", "self_similarity", "hurst", "pareto"],
)
def test_every_panel_has_sliders_named_like_the_plot_arguments(make, monkeypatch):
    import ipywidgets as widgets

    import tcpmodels.notebook.widgets as common

    monkeypatch.setattr(common, "render", lambda *a, **k: None)  # building the panel must not plot here
    panel = make()
    controls = [w for row in panel.children[0].children for w in row.children]
    assert controls and all(isinstance(w, widgets.ValueWidget) for w in controls)
    sliders = [w for w in controls if isinstance(w, (widgets.FloatSlider, widgets.FloatLogSlider, widgets.IntSlider))]
    assert sliders and all(not w.continuous_update for w in sliders)


# --------------------------------------------------------------------------- notebooks


@pytest.mark.parametrize("name", MY_NOTEBOOKS)
def test_teaching_notebook_has_widget_static_figure_and_collapsed_answers(name):
    cells = json.loads((NOTEBOOKS / f"{name}.ipynb").read_text())["cells"]
    code = "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "code")
    assert "_widget(" in code and "save_figure(" in code and f'"{name}' in code
    titles = [i for i, c in enumerate(cells) if c["cell_type"] == "markdown" and "".join(c["source"]).startswith("## Exercises")]
    assert len(titles) == 1, "one '## Exercises' section"
    answer = "".join(cells[titles[0] + 1]["source"])
    # a <details> block stays closed when Run All renders the markdown (source_hidden did not)
    assert answer.startswith("<details>\n<summary><b>Answers</b>") and answer.rstrip().endswith("</details>")
    assert "<details open" not in answer
    questions = [ln for ln in "".join(cells[titles[0]]["source"]).splitlines() if ln[:2] in ("1.", "2.", "3.")]
    assert 2 <= len(questions) <= 5


# --------------------------------------------------------------------------- trace explorer

DATA = Path(__file__).resolve().parents[1] / "data"
needs_capture = pytest.mark.skipif(
    not (DATA / "captures" / "cubic_bulk.pcap.gz").is_file(), reason="data/captures/cubic_bulk.pcap.gz not shipped"
)


@needs_capture
def test_trace_explorer_finds_the_bulk_flow_the_provenance_records():
    from tcpmodels.teaching.traces import capture_provenance, data_flows, shipped_captures

    assert "cubic_bulk.pcap.gz" in shipped_captures(DATA)
    sent = capture_provenance("cubic_bulk.pcap.gz", DATA)["sender"]["bytes_received_by_server"]
    top = data_flows("cubic_bulk.pcap.gz", DATA).iloc[0]
    assert int(top.unique_payload_bytes) == sent
    assert top.dst_port == 5201


@needs_capture
def test_trace_figure_zooms_and_rejects_bad_choices():
    from tcpmodels.teaching.traces import data_flows, plot_trace

    fig = plot_trace("cubic_bulk.pcap.gz", flow_rank=0, zoom_fraction=0.25, data_dir=DATA)
    duration = float(data_flows("cubic_bulk.pcap.gz", DATA).iloc[0].duration_s)
    assert len(fig.axes) == 4  # time-sequence, the limitation band, RTT, bytes in flight
    for ax in fig.axes:
        assert ax.get_xlim() == pytest.approx((0.0, 0.25 * duration))
    assert fig.axes[1].get_title().startswith("what limited the flow: ")
    assert "6,000,000 B" in fig.axes[0].get_title()
    n = len(data_flows("cubic_bulk.pcap.gz", DATA))
    with pytest.raises(ValueError, match=rf"flow_rank \[-\] must be an integer in \[0, {n - 1}\]"):
        plot_trace("cubic_bulk.pcap.gz", flow_rank=n, data_dir=DATA)
    with pytest.raises(ValueError, match="not found .* shipped: .*cubic_bulk.pcap.gz"):
        plot_trace("nope.pcap", data_dir=DATA)
    with pytest.raises(ValueError, match="zoom_fraction"):
        plot_trace("cubic_bulk.pcap.gz", zoom_fraction=0.0, data_dir=DATA)
    with pytest.raises(FileNotFoundError, match="no capture"):
        from tcpmodels.teaching.traces import shipped_captures

        shipped_captures(DATA / "does-not-exist")


@needs_capture
def test_trace_widget_flow_range_follows_the_capture():
    """The flow slider offers exactly the capture's payload-carrying flows, also after the menu changes."""
    from tcpmodels.teaching.traces import data_flows, trace_widget

    panel = trace_widget("cubic_bulk.pcap.gz", flow_rank=1, data_dir=DATA)
    menu, flow, zoom, start = [w for row in panel.children[0].children for w in row.children]
    image, message = panel.children[1].children
    assert (flow.min, flow.max, flow.value) == (0, len(data_flows("cubic_bulk.pcap.gz", DATA)) - 1, 1)
    for name in menu.options:
        menu.value = name
        assert flow.max == max(len(data_flows(name, DATA)) - 1, 0), name
        assert flow.value <= flow.max
        # the figure, never an error line: every reachable slider value is a valid flow
        assert message.value == "" and image.layout.display is None, (name, message.value)
    flow.value = flow.max
    assert message.value == "" and image.layout.display is None
    assert 0.05 <= zoom.min and zoom.max == 1.0 and (start.min, start.max) == (0.0, 0.0) and start.disabled


@needs_capture
def test_trace_widget_start_stops_where_the_window_ends_at_the_flow_end():
    """Every position of the start slider draws another window: its end is 1 - width (plot_trace moves a window
    that would run past the end back), it is disabled at width 1, and it never holds a start beyond its end."""
    from tcpmodels.teaching.traces import trace_widget

    panel = trace_widget("cubic_bulk.pcap.gz", zoom_fraction=0.3, zoom_start_fraction=0.9, data_dir=DATA)
    _, _, zoom, start = [w for row in panel.children[0].children for w in row.children]
    image, message = panel.children[1].children
    assert (start.max, start.value, start.disabled) == (0.7, 0.7, False)
    zoom.value = 0.95
    assert (start.max, start.value) == (0.05, 0.05) and not start.disabled
    zoom.value = 1.0
    assert (start.max, start.value, start.disabled) == (0.0, 0.0, True)
    zoom.value = 0.5
    assert (start.max, start.value, start.disabled) == (0.5, 0.0, False)
    assert message.value == "" and image.layout.display is None


@needs_capture
@pytest.mark.parametrize("lecture", ["0", "1"])
def test_trace_zoom_reuses_the_layout_the_engine_would_give(lecture, monkeypatch):
    """A zoom redraws without the layout engine (the flow's layout is kept) and places the axes where the engine
    would: also with a tick label at the right end of the axes ("1.40" at width 0.1 from 0.45), which a layout
    kept from a figure without one cut off."""
    from matplotlib.layout_engine import ConstrainedLayoutEngine

    from tcpmodels.notebook.widgets import LECTURE_ENV, _png
    from tcpmodels.teaching import style
    from tcpmodels.teaching.traces import plot_trace

    monkeypatch.setenv(LECTURE_ENV, lecture)
    monkeypatch.setattr(style, "_LAYOUTS", {})
    zooms = [(1.0, 0.0), (0.15, 0.0), (0.1, 0.45)]
    engine = {}
    for zoom, start in zooms:  # each laid out by the engine alone
        monkeypatch.setattr(style, "_LAYOUTS", {})
        fig = plot_trace("cubic_bulk.pcap.gz", 0, zoom, DATA, start)
        _png(fig, 100)
        engine[zoom, start] = [ax.get_position().bounds for ax in fig.axes]
    monkeypatch.setattr(style, "_LAYOUTS", {})
    for zoom, start in zooms:  # every layout key these zooms need, laid out once
        _png(plot_trace("cubic_bulk.pcap.gz", 0, zoom, DATA, start), 100)
    for zoom, start in zooms:
        kept = plot_trace("cubic_bulk.pcap.gz", 0, zoom, DATA, start)
        assert not isinstance(kept.get_layout_engine(), ConstrainedLayoutEngine), "the layout engine runs again"
        _png(kept, 100)
        for a, b in zip(kept.axes, engine[zoom, start]):
            assert a.get_position().bounds == pytest.approx(b, abs=0.004), (zoom, start)


def test_docstring_examples_of_the_teaching_modules():
    import doctest
    import importlib

    names = [f"tcpmodels.teaching.{n}" for n in ("throughput", "bdp", "mptcp", "heavytail", "traces", "style")]
    for name in names + ["tcpmodels.notebook.widgets", "tcpmodels.notebook.params"]:
        module = importlib.import_module(name)
        result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
        assert result.failed == 0, f"{result.failed} of {result.attempted} examples failed in {name}"


@needs_capture
def test_flows_table_is_data_flows_in_lecture_units():
    from tcpmodels.teaching.traces import data_flows, flows_table

    raw, shown = data_flows("cubic_bulk.pcap.gz", DATA), flows_table("cubic_bulk.pcap.gz", DATA)
    assert list(shown.index) == list(range(len(raw))) and shown.index.name == "flow_rank"
    assert list(shown["flow_id"]) == list(raw.index)
    top = shown.iloc[0]
    assert top["payload_kb"] == pytest.approx(6_000.0)  # the 6,000,000 B the provenance records
    assert top["rtt_median_ms"] == pytest.approx(raw.iloc[0].rtt_median_s * 1e3)
    assert top["throughput_mbps"] == pytest.approx(raw.iloc[0].throughput_bps / 1e6)
    assert top["to"].endswith(":5201")
