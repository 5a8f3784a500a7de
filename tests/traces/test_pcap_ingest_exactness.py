"""benchmarks/pcap_ingest.py: the peers compared with ours frame by frame, each difference checked against tshark's text.

The three differences of the 1M interleaved capture, on a small interleaved capture of the same
real sources: ``tshark -T fields | read_csv`` rounds 64-bit MPTCP keys to float64 (tshark's
text is right), dpkt's IP-length payload of a TSO super-segment (IP total length 0) is -40
instead of 1976, and tshark's analysis flags the second copy of a packet captured twice as a
retransmission (ours: a duplicate).
"""

from __future__ import annotations

import importlib.util
import io
import re
import shutil
import sys
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from corpus_check import CORPUS

ROOT = Path(__file__).resolve().parents[2]


def _load(name: str, file: str):
    spec = importlib.util.spec_from_file_location(name, ROOT / "benchmarks" / file)
    mod = importlib.util.module_from_spec(spec)
    sys.modules.setdefault(name, mod)  # dataclasses look their module up
    spec.loader.exec_module(mod)
    return mod


bench = _load("bench_pcap_ingest", "pcap_ingest.py")

#: the sources of the differences: MPTCP v1 handshake keys below 2^63, the TSO frame, the PPTP control
#: connection whose packets are all captured twice
SOURCES = ["tcpdump_mptcp-v1.pcap", "tcpdump_ipv4_tcp_http_xml_tso.pcap", "tcpdump_pptp.pcap"]


def test_parse_ints_keeps_what_the_frame_holds():
    """Text cells exactly, float cells as the float's value (what read_csv's user has), NaN absent."""
    col = pd.Series(["8038526780430040373", np.nan, 8.03852678043004e18, "0x0012", 1e19], dtype=object)
    got = bench._parse_ints(col, 0).view(np.uint64)
    assert [int(v) for v in got] == [8038526780430040373, 0, 8038526780430040064, 0x12, 10**19]
    assert bench._float_cells(col).tolist() == [False, False, True, False, True]
    assert bench._float_cells(pd.Series([1.0, np.nan])).tolist() == [True, False]


def test_read_csv_rounds_a_64_bit_column_with_gaps():
    """The mechanism: a column with empty cells and values below 2^63 is float64; 2^63 or more, text."""
    low = pd.read_csv(io.StringIO("8038526780430040373\tx\n\ty\n"), sep="\t", header=None, names=["v", "w"])
    high = pd.read_csv(io.StringIO("12285233620102384179\tx\n\ty\n"), sep="\t", header=None, names=["v", "w"])
    assert low["v"].dtype == np.float64 and int(low["v"][0]) == 8038526780430040064
    assert not pd.api.types.is_numeric_dtype(high["v"]) and high["v"][0] == "12285233620102384179"


@pytest.fixture(scope="module")
def notes(tmp_path_factory):
    if not CORPUS.is_dir():
        pytest.skip(f"the third-party capture corpus is not here ({CORPUS}); it lives in ../shared/data/")
    if shutil.which("tshark") is None:
        pytest.skip("tshark not on PATH (install with `make system-deps`): the benchmark runs it")
    pytest.importorskip("dpkt", reason="dpkt (the `test` extra) is one of the benchmark's peers")
    ic = _load("interleaved_capture", "interleaved_capture.py")
    tmp = tmp_path_factory.mktemp("ingest")
    pcap = tmp / "small.pcap"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sources = [ic.load_source(CORPUS / name) for name in SOURCES]
    ic.build(pcap, 400, sources, progress=False)
    dumps = tmp / "dumps"
    results = {e: bench.run_engine(e, pcap, "", dumps) for e in bench.ENGINES}
    for r in results.values():
        assert "error" not in r, r
    return bench.compare(results, dumps, pcap), results


def _differing(note: str) -> dict:
    return {m[0]: m for m in re.findall(r"(\w+): (\d+) rows differ, e\.g\. frame (\d+): (-?\d+) vs ours (\d+)"
                                         r"(?:, (\d+) of them float64 cells of read_csv's frame)?; tshark's text "
                                         r"equals ours in (\d+) of (\d+), \w+'s in (\d+)", note)}


def test_tshark_csv_differs_only_where_read_csv_gave_float64(notes):
    note = notes[0]["tshark_csv"]
    diff = _differing(note)
    assert diff, note
    assert set(diff) <= set(bench.UINT64), note
    for col, n, frame, theirs, ours, n_float, n_text, n_rows, n_peer_text in diff.values():
        assert n == n_float == n_text == n_rows and n_peer_text == "0", note
        assert int(theirs) == int(float(int(ours))) != int(ours), note  # ours rounded to float64
    assert re.match(r"\d+ of 31 columns equal row by row over 400 packets;", note), note  # packets, payload equal


def test_dpkt_differs_only_in_the_tso_payload(notes):
    note, results = notes[0]["dpkt"], notes[1]
    diff = _differing(note)
    assert list(diff) == ["payload_bytes"], note
    _, n, frame, theirs, ours, _, n_text, n_rows, n_peer_text = diff["payload_bytes"]
    assert (theirs, ours) == ("-40", "1976") and n == n_text == n_rows and n_peer_text == "0", note
    assert results["ours"]["payload_bytes"] - results["dpkt"]["payload_bytes"] == int(n) * 2016


def test_tshark_extra_retransmissions_are_packets_captured_twice(notes):
    note = notes[0]["tshark_analysis"]
    m = re.search(r"(\d+) retransmissions flagged by both; (\d+) by tshark only, (\d+) of them packets captured "
                  r"twice .*; (\d+) by ours only", note)
    assert m, note
    both, t_only, t_dup, o_only = map(int, m.groups())
    assert t_only == t_dup > 0 and o_only == 0, note
    assert re.search(r"all \d+ flows agree", note), note
