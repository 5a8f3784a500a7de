"""``tcpmodels analyze``: the report on real captures, the one-line failure on a file that is no capture,
and the tables it shows."""

from __future__ import annotations

import re

import nbformat
import numpy as np
import pytest
from corpus_check import CORPUS
from trace_fixtures import CAPTURES

from tcpmodels.analyze.capture import capture_point, connection_table, model_predictions, read_capture, select_flows
from tcpmodels.cli import main
from tcpmodels.traces import annotate, flows


@pytest.mark.notebook
def test_analyze_writes_one_report_per_capture(tmp_path, capsys):
    caps = [CAPTURES / "reno_bulk.pcap.gz"]
    if (CORPUS / "tcpdump_mptcp-v0.pcap").exists():
        caps.append(CORPUS / "tcpdump_mptcp-v0.pcap")
    code = main(["analyze", *map(str, caps), "--output-dir", str(tmp_path), "--top", "2"])
    out = capsys.readouterr().out.split()
    assert code == 0 and len(out) == len(caps)
    for cap in caps:
        nb = nbformat.read(tmp_path / cap.name.split(".")[0] / "analyze_capture.ipynb", as_version=4)
        text = nbformat.writes(nb)
        assert "records read" in text and re.search(r"### flow \d+: ", text) and "image/png" in text
        assert (tmp_path / cap.name.split(".")[0] / "analyze_capture.html").exists()
    # the lossy bulk transfer gets its model predictions
    nb = nbformat.read(tmp_path / "reno_bulk" / "analyze_capture.ipynb", as_version=4)
    assert "mathis_ratio" in nbformat.writes(nb)


def test_a_file_that_is_not_a_capture_fails_with_one_line(tmp_path, capsys):
    bad = tmp_path / "notes.txt"
    bad.write_text("this is not a capture\n")
    code = main(["analyze", str(bad), "--output-dir", str(tmp_path / "out")])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and "not a pcap or pcapng file" in err[0]
    assert not (tmp_path / "out").exists()
    code = main(["analyze", str(tmp_path / "missing.pcap")])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and "not found" in err[0]


def test_connection_table_counts_and_filters():
    packets, warns = read_capture(CAPTURES / "reno_bulk.pcap.gz")
    an = annotate(packets)
    ct = connection_table(packets, an)
    ft = flows(packets, an)
    top = ct.index[0]
    assert ct.loc[top, "bytes"] == ft.loc[top, "unique_payload_bytes"] == ct["bytes"].max()
    assert ct.loc[top, "retransmissions"] == ft.loc[top, "retransmitted_packets"] > 0
    parts = ct.loc[top, ["fast_retransmissions", "spurious_retransmissions", "out_of_order_packets",
                         "plain_retransmissions"]]
    assert parts.sum() == ct.loc[top, "retransmissions"] and (parts >= 0).all()
    assert 0 < ct.loc[top, "loss_events"] <= ct.loc[top, "retransmissions"]
    assert ct.loc[top, "rtt_min_s"] <= ct.loc[top, "rtt_median_s"] <= ct.loc[top, "rtt_p95_s"]
    src, dst = ct.loc[top, "flow"].split(" > ")
    port = dst.rsplit(":", 1)[1]
    assert list(select_flows(ct, f":{port}").index) == sorted(ct.index, key=lambda f: -ct.loc[f, "bytes"])
    assert top in select_flows(ct, src).index and select_flows(ct, "192.0.2.99").empty
    m = model_predictions(packets, [top], an)
    assert len(m) == 1 and np.isfinite(m.loc[top, ["mathis_bps", "pftk_bps", "measured_bps"]].astype(float)).all()


def test_capture_point_from_the_handshake(tmp_path):
    """The same conversation seen at the client (sender) and at the server (receiver)."""
    from test_flows import ACK, ISN_C, ISN_S, SYN, conversation

    c, s = ISN_C + 1, ISN_S + 1
    at_client = [(0, "c", ISN_C, 0, SYN, 0, 1, 0), (50_000, "s", ISN_S, c, SYN | ACK, 0, 2, 1),
                 (50_100, "c", c, s, ACK, 0, 3, 2), (50_200, "c", c, s, ACK, 1000, 4, 2),
                 (100_200, "s", s, c + 1000, ACK, 0, 5, 4)]
    at_server = [(0, "c", ISN_C, 0, SYN, 0, 1, 0), (100, "s", ISN_S, c, SYN | ACK, 0, 2, 1),
                 (50_100, "c", c, s, ACK, 0, 3, 2), (50_200, "c", c, s, ACK, 1000, 4, 2),
                 (50_300, "s", s, c + 1000, ACK, 0, 5, 4)]
    sender = capture_point(conversation(tmp_path, at_client, "a.pcap"))
    receiver = capture_point(conversation(tmp_path, at_server, "b.pcap"))
    assert sender.loc[0, "position"] == "sender" and sender.loc[0, "caution"] == ""
    assert receiver.loc[0, "position"] == "receiver" and "near the receiver" in receiver.loc[0, "caution"]
    assert receiver.loc[0, "sender_side_rtt_s"] == pytest.approx(0.050, abs=1e-6)


def test_select_flows_with_ipv6_and_ports():
    import pandas as pd

    ct = pd.DataFrame({"flow": ["[fd00::1]:40000 > [fd00::2]:80", "10.0.0.1:5000 > 10.0.0.2:443"]}, index=[0, 2])
    assert list(select_flows(ct, "[fd00::2]:80").index) == [0]
    assert list(select_flows(ct, "fd00::1").index) == [0]
    assert list(select_flows(ct, ":443").index) == [2] and list(select_flows(ct, "10.0.0.1:5000").index) == [2]
    assert list(select_flows(ct, "").index) == [0, 2] and select_flows(ct, ":81").empty


def test_plot_flow_without_acks_or_data(tmp_path):
    """A lone data segment (no ACK captured): no RTT sample, no bytes in flight; the panels say so."""
    import matplotlib.pyplot as plt
    from test_flows import ACK, conversation

    from tcpmodels.analyze.capture import plot_flow

    fig = plot_flow(conversation(tmp_path, [(0, "c", 1000, 5, ACK, 500, 1, 0)]), 0)
    texts = [t.get_text() for ax in fig.axes for t in ax.texts]
    assert any("no RTT sample" in t for t in texts) and any("no bytes in flight" in t for t in texts)
    plt.close(fig)


def test_report_sections_say_what_they_mean(tmp_path):
    from tcpmodels.analyze.capture import (
        capture_point_notes,
        consistency_notes,
        expert_table,
        reader_notes,
        summary_markdown,
    )
    from tcpmodels.traces import rtt_samples
    p = read_capture(CAPTURES / "mptcp_2path.pcapng.gz")[0]
    an = annotate(p)
    conn = connection_table(p, an)
    ex = expert_table(p, conn.index, an)
    assert list(ex.index) == list(conn.index) and "previous segment not captured" in ex.columns
    assert ex.loc[1, "duplicate ACKs"] == flows(p, an).loc[1, "duplicate_acks"] > 0
    # the same message twice is one bullet; records that are just not TCP are information, not warnings
    acc = p.attrs["accounting"]
    info, warns = reader_notes(acc, ["x.pcap (native): skipped 4 of 7710 records: 4 not_ip; 19 records with a "
                                     "timestamp earlier than the previous one (file order kept)"] * 2)
    assert len(info) == 1 and "not IP" in info[0]
    assert warns == ["19 records with a timestamp earlier than the previous one (file order kept)"]
    where = capture_point(p, an)
    assert capture_point_notes(where, []) == ["No flow carried payload: nothing to place."]
    where.loc[:, "position"] = "receiver"
    notes = capture_point_notes(where, conn.index)
    assert len(notes) == 1 and f"{len(conn)} flows" in notes[0]  # one bullet for all of them
    text = summary_markdown("mptcp_2path.pcapng.gz", p, conn, ex, 0)
    assert "1 of them MPTCP" in text and "flow 0" in text and "µs" in text
    assert "no TCP payload" in summary_markdown("x", p, conn.iloc[:0], ex.iloc[:0], 1)
    notes = consistency_notes(conn, rtt_samples(p, an), model_predictions(p, [0], an), [0])
    assert any("timestamp echoes" in n for n in notes) and any("steady window" in n for n in notes)
