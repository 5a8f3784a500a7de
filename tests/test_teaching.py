"""Tests for tcpmodels.teaching (figures and tables behind the teaching notebooks) and the CUBIC teaching notebook's layout."""

from __future__ import annotations

import ast
import base64
import io
from pathlib import Path

import nbformat
import numpy as np
import pytest
from matplotlib.figure import Figure

from tcpmodels.models.cubic import (
    cubic_alpha_reno_friendly,
    cubic_k_s,
    cubic_reno_friendly_window_segments,
    kozu_k_s,
    reno_window_segments,
)
from tcpmodels.teaching import cubic as teaching

NOTEBOOK = Path(__file__).resolve().parents[1] / "notebooks" / "teach_cubic_vs_reno.ipynb"


def _line(ax, label):
    lines = [ln for ln in ax.get_lines() if ln.get_label() == label]
    assert len(lines) == 1, f"no unique line labelled {label!r}: {[ln.get_label() for ln in ax.get_lines()]}"
    return lines[0]


def _vlines_x(ax):
    return [ln.get_xdata()[0] for ln in ax.get_lines() if len(set(ln.get_xdata())) == 1 and ln.get_label().startswith("_")]


def test_plot_draws_the_model_curves():
    import matplotlib.pyplot as plt

    before = plt.get_fignums()
    fig = teaching.plot_cubic_vs_reno(100.0, 0.4, 0.7, 0.1, "none")
    assert isinstance(fig, Figure)
    assert plt.get_fignums() == before  # built without pyplot: safe as a widget callback
    left, right = fig.axes
    reno = _line(left, "Reno (W_max/2 + t/RTT)")
    t = np.asarray(reno.get_xdata())
    np.testing.assert_allclose(reno.get_ydata(), reno_window_segments(t, 100.0, 0.1))
    west = _line(left, "W_est (Reno-friendly)")
    np.testing.assert_allclose(west.get_ydata(), cubic_reno_friendly_window_segments(t, 100.0, 0.1))
    assert any(np.isclose(x, cubic_k_s(100.0)) for x in _vlines_x(left))
    # right panel: both sawtooths, legend carries their mean windows; Reno's is 3/4 of the cap
    labels = [ln.get_label() for ln in right.get_lines() if not ln.get_label().startswith("_")]
    reno_label = next(lbl for lbl in labels if lbl.startswith("Reno"))
    assert float(reno_label.split("mean")[1]) == pytest.approx(75.0, rel=0.03)
    assert any(lbl.startswith("CUBIC") for lbl in labels)


@pytest.mark.parametrize("reading", ["multiply", "divide"])
def test_plot_shows_kozu_k(reading):
    fig = teaching.plot_cubic_vs_reno(1000.0, 0.4, 0.7, 0.004, reading)
    left = fig.axes[0]
    k_mod = kozu_k_s(1000.0, 0.004, reading=reading)
    assert any(np.isclose(x, k_mod) for x in _vlines_x(left))
    assert _line(left, f"Kozu-Yamaguchi cwnd ({reading} x)") is not None


def test_plot_rejects_bad_input():
    with pytest.raises(ValueError, match="x_reading must be one of"):
        teaching.plot_cubic_vs_reno(x_reading="both")
    with pytest.raises(ValueError, match=r"beta_cubic \[-\] must be in \(0, 1\)"):
        teaching.plot_cubic_vs_reno(beta_cubic=1.5)
    with pytest.raises(ValueError, match="cycles"):
        teaching.plot_cubic_vs_reno(cycles=0)


def test_summary_matches_models():
    df = teaching.cubic_vs_reno_summary(100.0, 0.4, 0.7, 0.1, "divide")
    values = dict(zip(df.quantity, df.value))
    assert values["K (RFC 9438)"] == pytest.approx(75 ** (1 / 3))
    assert values["Reno recovery time"] == pytest.approx(5.0)
    assert values["alpha_cubic"] == pytest.approx(cubic_alpha_reno_friendly(0.7))
    assert values["K, Kozu-Yamaguchi (divide)"] == pytest.approx(kozu_k_s(100.0, 0.1, reading="divide"))
    assert "x(RTT)" not in set(teaching.cubic_vs_reno_summary(x_reading="none").quantity)


def test_save_figure_writes_png(tmp_path):
    fig = teaching.plot_cubic_vs_reno()
    path = teaching.save_figure(fig, tmp_path / "figs", "demo")
    assert path == tmp_path / "figs" / "demo.png"
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_bottleneck_table_rows():
    df = teaching.bottleneck_table([(0.001, 0.001), (0.001, 0.016)], capacity_bps=100e6, buffer_bytes=250e3, duration_s=4.0, warmup_s=1.0)
    assert list(df.reno_rtt_ms) == [1.0, 1.0] and list(df.cubic_rtt_ms) == [1.0, 16.0]
    np.testing.assert_allclose(df.cubic_share, df.cubic_mbps / (df.cubic_mbps + df.reno_mbps))
    assert (df.reno_mbps + df.cubic_mbps <= 100.0 + 1e-6).all()
    # the longer-RTT CUBIC flow gets less than the same-RTT one
    assert df.cubic_share[1] < df.cubic_share[0]


def test_widget_redraws_the_figure_on_every_control(monkeypatch):
    """The lecture's panel shows a figure at once and a new one after each control moves.

    (The old ``widgets.interactive`` over a function returning a pyplot-free Figure displayed
    nothing in JupyterLab: the figure must be written into the panel's Image, as figure_widget does.)
    """
    widgets = pytest.importorskip("ipywidgets")
    drawn = []

    def recording_plot(*args, **kwargs):
        drawn.append(original(*args, **kwargs))
        return drawn[-1]

    original = teaching.plot_cubic_vs_reno
    monkeypatch.setattr(teaching, "plot_cubic_vs_reno", recording_plot)
    panel = teaching.cubic_vs_reno_widget(100.0, 0.4, 0.7, 0.1, "none", cycles=1)
    controls = [w for row in panel.children[0].children for w in row.children]
    image, message = panel.children[1].children
    assert isinstance(image, widgets.Image)
    images = []

    def shown():
        assert message.value == "" and image.layout.display is None  # the figure, no error line
        png = base64.b64decode(bytes(image.value).removeprefix(b"data:image/png;base64,"))
        assert png.startswith(b"\x89PNG") and png not in images  # replaced in place by a new figure
        images.append(png)
        buf = io.BytesIO()
        drawn[-1].savefig(buf, format="png", dpi=40)
        return buf.getvalue()

    assert [c.description for c in controls][:4] == ["W_max [segments]", "C [segments/s^3]", "beta_cubic [-]", "RTT [s]"]
    before = shown()
    for control in controls:
        if isinstance(control, widgets.Dropdown):
            control.value = next(o for o in control.options if o != control.value)
        else:
            control.value = control.value + control.step if control.value + control.step <= control.max else control.min
        now = shown()
        assert now != before, f"moving {control.description} did not redraw"
        before = now
    with pytest.raises(ValueError, match="x_reading"):
        teaching.cubic_vs_reno_widget(x_reading="both")


def test_notebook_layout():
    nb = nbformat.read(NOTEBOOK, as_version=4)
    code = [c for c in nb.cells if c.cell_type == "code"]
    params = [c for c in code if "parameters" in c.metadata.get("tags", [])]
    assert len(params) == 1
    assigned = {}
    for node in ast.parse(params[0].source).body:
        assert isinstance(node, ast.AnnAssign)  # typed, for papermill --help-notebook
        assigned[node.target.id] = ast.literal_eval(node.value)
    assert assigned == {
        "quick": False,
        "w_max_segments": 100.0,
        "c": 0.4,
        "beta_cubic": 0.7,
        "rtt_s": 0.1,
        "x_reading": "none",
        "figures_dir": "../figures",
    }
    assert all(not c.get("outputs") and c.get("execution_count") is None for c in code)
    answers = [c for c in nb.cells if c.cell_type == "markdown" and "Answers</b>" in c.source]
    assert len(answers) == 1 and answers[0].source.startswith("<details>\n<summary>")  # collapsed, even after Run All
    src = "\n".join(c.source for c in code)
    assert "teaching.cubic_vs_reno_widget(" in src and "widgets.interactive" not in src
    assert 'save_figure(fig, figures_dir, "teach_cubic_vs_reno")' in src

