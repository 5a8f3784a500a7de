"""Lecture mode (TCPMODELS_LECTURE=1): figures sized for a projector at 1024x768 whose labels never collide,
projector-sized controls, and panels that replace their figures in place.

The collision check is matplotlib's own: the window extent of every visible text (titles, axis and
tick labels, annotations) and of every legend box, compared pairwise (style.text_overlaps). It runs on
every lecture figure at its defaults and at the corners of its sliders, in lecture mode, and at the
defaults in the report's size. The browser test (tests/browser) shows that JupyterLab displays a
lecture figure at its own size at 1024x768, so these are the boxes on the screen.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from matplotlib.figure import Figure

from tcpmodels.notebook.widgets import LECTURE_CLASS, LECTURE_DPI, LECTURE_ENV, lecture_mode
from tcpmodels.teaching import bdp, bufferbloat, heavytail, mptcp, throughput, traces
from tcpmodels.teaching import cubic as teaching
from tcpmodels.teaching.style import LECTURE_FONT_PT, LECTURE_WIDTH_IN, text_overlaps

REPO = Path(__file__).resolve().parents[1]
DATA = REPO / "data"
NOTEBOOKS = REPO / "notebooks"
LECTURES = sorted(p.stem for p in NOTEBOOKS.glob("teach_*.ipynb"))
needs_capture = pytest.mark.skipif(not (DATA / "captures" / "cubic_bulk.pcap.gz").is_file(),
                                   reason="data/captures/cubic_bulk.pcap.gz not shipped")  # fmt: skip

#: Visible height of JupyterLab's notebook at 1024x768 (menu, toolbar and status bar take the rest). [px]
SCREEN_HEIGHT_PX = 640

#: (plot function, keyword arguments): defaults and the corners of the sliders.
CASES = [
    (bdp.plot_bdp_window, {}),
    (bdp.plot_bdp_window, dict(rate_gbps=0.01, rtt_ms=0.1, wscale_shift=0)),
    (bdp.plot_bdp_window, dict(rate_gbps=400.0, rtt_ms=1000.0, wscale_shift=14)),
    (bdp.plot_bdp_window, dict(rate_gbps=1.0, rtt_ms=1.0, wscale_shift=7)),
    (throughput.plot_throughput_models, {}),
    (throughput.plot_throughput_models, dict(loss_rate=1e-6, rtt_ms=1.0, w_max_segments=1e5, t0_ms=0.0)),
    (throughput.plot_throughput_models, dict(loss_rate=0.5, rtt_ms=2000.0, w_max_segments=1.0, t0_ms=3000.0, mss_bytes=9000, b=1)),
    (mptcp.plot_lia_two_paths, {}),
    (mptcp.plot_lia_two_paths, dict(rtt1_ms=50.0, rtt2_ms=50.0, loss_rate1=0.01, loss_rate2=0.01)),
    (mptcp.plot_lia_two_paths, dict(rtt1_ms=1.0, rtt2_ms=1000.0, loss_rate1=0.2, loss_rate2=1e-5)),
    (mptcp.plot_lia_two_paths, dict(rtt1_ms=1000.0, rtt2_ms=1.0, loss_rate1=1e-5, loss_rate2=0.2)),
    (teaching.plot_cubic_vs_reno, {}),
    (teaching.plot_cubic_vs_reno, dict(rtt_s=0.004, x_reading="multiply")),
    (teaching.plot_cubic_vs_reno, dict(rtt_s=0.004, x_reading="divide")),
    (teaching.plot_cubic_vs_reno, dict(w_max_segments=1e4, rtt_s=1.0, c=4.0, beta_cubic=0.9, x_reading="multiply")),
    (teaching.plot_cubic_vs_reno, dict(w_max_segments=3.0, rtt_s=0.001, c=0.05, beta_cubic=0.5, x_reading="divide")),
    (heavytail.plot_pareto_samples, dict(alpha=1.4)),
    (heavytail.plot_pareto_samples, dict(alpha=1.05, mean_kb=1.0, n_samples=1000, seed=20)),
    (heavytail.plot_pareto_samples, dict(alpha=2.5, mean_kb=100.0, n_samples=200_000)),
    (heavytail.plot_self_similarity, dict(n_scales=3)),
    (heavytail.plot_self_similarity, dict(n_scales=4, alpha=1.05, n_sources=1)),
    (heavytail.plot_self_similarity, dict(n_scales=3, alpha=2.5, n_sources=200, seed=20)),
    (heavytail.plot_hurst_estimates, dict(n_scales=3)),
    (heavytail.plot_hurst_estimates, dict(n_scales=3, alpha=1.05, n_sources=1)),
    (heavytail.plot_hurst_estimates, dict(n_scales=3, alpha=2.5, n_sources=200)),
    (bufferbloat.plot_bufferbloat, {}),
    (bufferbloat.plot_bufferbloat, dict(rate_mbps=1000.0, base_rtt_ms=300.0, queue_bdp=64.0, n_bbr=32)),
    (bufferbloat.plot_bufferbloat, dict(rate_mbps=1.0, base_rtt_ms=5.0, queue_bdp=0.25, n_bbr=2)),
    (bufferbloat.plot_bbr_simple_model, {}),
    (bufferbloat.plot_bbr_simple_model, dict(rate_mbps=1000.0, base_rtt_ms=300.0, queue_bdp=64.0)),
]
TRACE_CASES = [
    dict(capture="cubic_bulk.pcap.gz"),
    dict(capture="cubic_bulk.pcap.gz", flow_rank=1, zoom_fraction=0.05, zoom_start_fraction=1.0),
    dict(capture="mptcp_2path.pcapng.gz", flow_rank=2, zoom_fraction=0.3, zoom_start_fraction=0.4),
    dict(capture="p5_bottleneck_main-a1.65-n32-b5-s0.pcap.gz", flow_rank=3),
    dict(capture="short_flows_any.pcap.gz", flow_rank=79),
]


def _id(case) -> str:
    fn, kwargs = case
    return fn.__name__ + ("-" + "-".join(f"{k}={v}" for k, v in kwargs.items()) if kwargs else "")


def _check_lecture_figure(fig: Figure) -> None:
    width_px, height_px = fig.get_size_inches() * LECTURE_DPI
    assert round(width_px) == round(LECTURE_WIDTH_IN * LECTURE_DPI) and height_px <= SCREEN_HEIGHT_PX, (width_px, height_px)
    sizes = {t.get_fontsize() for t in fig.findobj(lambda a: hasattr(a, "get_fontsize") and a.get_visible())}
    assert min(sizes) >= 0.8 * LECTURE_FONT_PT, f"text smaller than {0.8 * LECTURE_FONT_PT} pt: {sorted(sizes)}"
    assert text_overlaps(fig) == []


@pytest.mark.parametrize("case", CASES, ids=[_id(c) for c in CASES])
def test_lecture_figures_fit_the_projector_and_no_labels_collide(case, monkeypatch):
    monkeypatch.setenv(LECTURE_ENV, "1")
    fn, kwargs = case
    _check_lecture_figure(fn(**kwargs))


@needs_capture
@pytest.mark.parametrize("kwargs", TRACE_CASES, ids=[c["capture"] for c in TRACE_CASES])
def test_trace_explorer_fits_the_projector_and_no_labels_collide(kwargs, monkeypatch):
    monkeypatch.setenv(LECTURE_ENV, "1")
    _check_lecture_figure(traces.plot_trace(**kwargs, data_dir=DATA))


@pytest.mark.parametrize("case", [c for c in CASES if not c[1] or list(c[1]) == ["n_scales"]], ids=lambda c: c[0].__name__)
def test_report_figures_have_no_colliding_labels(case, monkeypatch):
    monkeypatch.delenv(LECTURE_ENV, raising=False)
    fn, kwargs = case
    fig = fn(**kwargs)
    assert fig.get_size_inches()[0] == 11 and text_overlaps(fig) == []


def test_text_overlaps_reports_collisions_and_labels_outside_the_figure():
    fig = Figure(figsize=(4, 3))
    ax = fig.subplots()
    ax.set_title("a long title that collides")
    ax.text(0.5, 1.02, "a note on top of the title", transform=ax.transAxes, ha="center")
    fig.text(0.98, 0.5, "runs off the right edge")
    found = text_overlaps(fig)
    assert any("overlaps" in f and "title" in f for f in found), found
    assert any("runs off the right edge" in f and "leaves the figure" in f for f in found), found
    fig = Figure(figsize=(4, 3))
    fig.subplots().set_title("alone")
    assert text_overlaps(fig) == []


@pytest.mark.parametrize(("value", "on"), [("1", True), ("yes", True), ("TRUE", True), (" on ", True), ("", False),
                                           ("0", False), ("off", False), ("No", False)])  # fmt: skip
def test_lecture_mode_reads_the_environment_variable(value, on, monkeypatch):
    monkeypatch.setenv(LECTURE_ENV, value)
    assert lecture_mode() is on


def test_lecture_mode_rejects_other_values_naming_the_variable(monkeypatch):
    monkeypatch.setenv(LECTURE_ENV, "projector")
    with pytest.raises(ValueError, match=r"TCPMODELS_LECTURE .*'projector'"):
        lecture_mode()


def test_lecture_panel_has_one_wide_control_per_row_and_larger_controls(monkeypatch):
    import ipywidgets as widgets

    monkeypatch.setenv(LECTURE_ENV, "1")
    panel = throughput.throughput_widget(n_points=20)
    assert LECTURE_CLASS in panel._dom_classes
    rows = panel.children[0].children
    assert len(rows) == 6 and all(len(row.children) == 1 for row in rows)
    assert all(row.children[0].layout.width == "100%" for row in rows)
    (css,) = [w for w in panel.children if isinstance(w, widgets.HTML)]
    assert f".{LECTURE_CLASS}" in css.value and "--jp-widgets-font-size: 17px" in css.value
    (image,) = [w for w in panel.children[1].children if isinstance(w, widgets.Image)]
    assert int(image.width) == round(LECTURE_WIDTH_IN * LECTURE_DPI)
    monkeypatch.setenv(LECTURE_ENV, "0")
    report = throughput.throughput_widget(n_points=20)
    assert LECTURE_CLASS not in report._dom_classes and max(len(r.children) for r in report.children[0].children) == 2


def test_a_redraw_replaces_each_figure_in_place_with_one_message(monkeypatch):
    """Moving a control sends one state message per figure (the new image as a data: URL, in a binary buffer,
    and any new size together) to the same Image: nothing is cleared first, the panel's children stay the same
    widgets."""
    monkeypatch.setenv(LECTURE_ENV, "0")
    panel = heavytail.pareto_widget(n_samples=1000)
    (image,), message = panel.children[1].children[:-1], panel.children[1].children[-1]
    before_children, before_png = panel.children[1].children, bytes(image.value)
    sent = []
    monkeypatch.setattr(image, "_send", lambda msg, buffers=None: sent.append(msg))
    seed = panel.children[0].children[1].children[1]
    assert seed.description == "seed"
    seed.value += 1
    assert panel.children[1].children == before_children
    assert len(sent) == 1 and sent[0]["buffer_paths"] == [["value"]], sent
    assert bytes(image.value) != before_png and message.value == ""


def test_an_impossible_combination_reads_as_one_line_in_the_panel(monkeypatch):
    """A ValueError of a plot function hides its figure and shows its message; the next good value brings it back."""
    import ipywidgets as widgets

    from tcpmodels.notebook.widgets import figure_widget

    def plot(x: float = 1.0) -> Figure:
        if x < 0:
            raise ValueError(f"x [-] must be >= 0; got {x}")
        fig = Figure(figsize=(2, 2))
        fig.subplots().plot([0, x])
        return fig

    slider = widgets.FloatSlider(value=1.0, min=-1.0, max=2.0)
    panel = figure_widget(plot, {"x": slider})
    image, message = panel.children[1].children
    slider.value = -0.5
    assert image.layout.display == "none" and "plot: x [-] must be &gt;= 0; got -0.5" in message.value
    slider.value = 0.5
    assert image.layout.display is None and message.value == "" and message.layout.display == "none"


def test_lecture_code_cells_are_hideable_in_jupyterlab_and_nbconvert():
    """Every code cell but the parameters is collapsed in JupyterLab (``jupyter.source_hidden``) and tagged
    ``hide-input``, which nbconvert's TagRemovePreprocessor removes: a page with the text and no code."""
    import nbformat
    from nbconvert import HTMLExporter
    from traitlets.config import Config

    for name in LECTURES:
        nb = nbformat.read(NOTEBOOKS / f"{name}.ipynb", as_version=4)
        code = [c for c in nb.cells if c.cell_type == "code" and "parameters" not in c.metadata.get("tags", [])]
        assert code and all("hide-input" in c.metadata.get("tags", []) and c.metadata.get("jupyter", {}).get("source_hidden")
                            for c in code), name  # fmt: skip
    config = Config({"TagRemovePreprocessor": {"enabled": True, "remove_input_tags": {"hide-input"}}})
    nb = nbformat.read(NOTEBOOKS / "teach_bdp_window_scaling.ipynb", as_version=4)
    html, _ = HTMLExporter(config=config).from_notebook_node(nb)
    assert "bdp_widget" not in html and "plot_bdp_window" not in html  # the code is gone
    assert "Try it" in html and "rate_gbps" in html  # the text and the parameters stay
