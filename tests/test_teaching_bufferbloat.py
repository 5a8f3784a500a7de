"""The bufferbloat / BBR teaching panel (tcpmodels.teaching.bufferbloat)."""

from __future__ import annotations

import pandas as pd
import pytest

from tcpmodels.teaching.bufferbloat import (
    bbr_numbers,
    bufferbloat_widget,
    live_or_shipped,
    plot_bbr_simple_model,
    plot_bufferbloat,
    queueing_delay_table,
    shipped_runs,
)


def test_queueing_delay_is_b_over_c():
    t = queueing_delay_table((1.0, 10.0), (64.0, 1000.0))
    assert t.loc["1000 KB", "10 Mbit/s"] == pytest.approx(800.0)        # 1 MB * 8 / 10 Mbit/s
    assert t.loc["64 KB", "1 Mbit/s"] == pytest.approx(512.0)


def test_numbers_worked_by_hand():
    # 10 Mbit/s x 40 ms, X = 8: q = 266.7; p = 1/2 - 1/16 - 4/266.7 = 0.4225; one ProbeRTT 0.32 + 0.2 + 0.04 = 0.56 s;
    # share (1 - 0.4225)(1 - 0.056) = 0.54516
    v = bbr_numbers(10.0, 40.0, 8.0, 1).set_index("quantity")["value"]
    assert v["loss-based flows' share p (eq. 9)"] == pytest.approx(0.4225)
    assert v["one ProbeRTT: q/c + 0.2 s + l (eq. 11)"] == pytest.approx(560.0)
    assert v["BBR's share of the link (eq. 10)"] == pytest.approx(0.54516)
    assert v["standing queue of the N BBR flows alone"] == pytest.approx(33.333, abs=1e-3)


def test_figure_marks_the_model_share():
    fig = plot_bufferbloat(10.0, 40.0, 8.0, 2, n_points=20)
    assert len(fig.axes) == 2
    (x, y), = [line.get_data() for line in fig.axes[1].lines if line.get_marker() == "o" and line.get_color() == "k"]
    assert x[0] == 8.0 and y[0] == pytest.approx(float(bbr_numbers(10.0, 40.0, 8.0, 2).iloc[7]["value"]))


def test_share_drawn_only_where_eq_10_holds():
    # at 300 ms base RTT one ProbeRTT (q/c + 0.2 s + l) fills the 10 s window from X = (10 - 0.2 - 0.3) / 0.3 = 31.7
    fig = plot_bufferbloat(10.0, 300.0, 48.0, 1, n_points=50)
    (model,) = [line for line in fig.axes[1].lines if line.get_label().startswith("model")]
    assert model.get_xdata().max() < 31.67 and "holds up to X = 31.7" in fig.axes[1].get_title()


def test_simple_model_meets_at_one_half():
    fig = plot_bbr_simple_model(10.0, 40.0, 8.0, n_points=101)
    inflight, cap = fig.axes[0].lines[:2]
    p = inflight.get_xdata()
    assert cap.get_ydata()[50] == pytest.approx(inflight.get_ydata()[50]) and p[50] == pytest.approx(0.5)
    with pytest.raises(ValueError, match=r"n_bbr \[-\] must be a whole number in \[1, 64\]; got 0"):
        plot_bufferbloat(n_bbr=0)
    with pytest.raises(ValueError, match=r"queue_bdp \[-\] must be in \(0, 1024\]"):
        bbr_numbers(queue_bdp=0)
    assert len(bufferbloat_widget(n_points=20).children[0].children) == 2      # two rows of two sliders


def test_shipped_runs_nearest_point(tmp_path):
    (tmp_path / "datasets").mkdir()
    assert shipped_runs(tmp_path) is None and live_or_shipped(tmp_path, 8, 1, live=False).empty
    rows = [{"campaign": "bbr_kernel", "engine": "kernel", "competitor": "cubic", "n_loss": 1, "queue_bdp": x,
             "n_bbr": n, "share_bbr": 0.5, "model_share_bbr": 0.5, "queue_delay_s": 0.1, "warmup_s": 1.0,
             "measure_s": 60.0} for x in (4.0, 16.0) for n in (1, 2)]
    pd.DataFrame(rows).to_parquet(tmp_path / "datasets" / "bbr_runs.parquet")
    near = live_or_shipped(tmp_path, 12.0, 2, live=False)
    assert list(near["queue_bdp"]) == [16.0] and list(near["n_bbr"]) == [2] and list(near["source"]) == ["shipped"]
