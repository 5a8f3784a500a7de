"""Every capture of the third-party corpora (../shared/data/external_captures/ and external_captures2/) read and
compared with tshark.

The captures come from other projects' test data (tcpdump, scapy, pymptcpanalyzer, Practical Packet
Analysis, pyshark, gopacket, tcpreplay; sources in the corpus README) and stay outside the repository.
Field by field (see corpus_check.py): the whole packet table against the tshark engine, the
retransmission classes against tshark's tcp.analysis flags, sequence/ACK RTT samples against
tcp.analysis.ack_rtt where both define one, the Expert Info flags, and MPTCP subflow grouping against
mptcp.stream. The second set holds captures on which earlier versions disagreed (each a class of defect: see
its README); the differences that remain are where tshark is wrong, each class argued in corpus_check.py.
"""

from __future__ import annotations

import shutil

import pytest
from corpus_check import (
    CORPUS,
    CORPUS2,
    TCPTRACE_WRONG,
    captures,
    check_capture,
    compare_analysis,
    compare_tcptrace,
    read_quietly,
    tshark_analysis,
)
from trace_fixtures import CAPTURES

if not CORPUS.is_dir():
    pytest.skip(f"the third-party capture corpus is not here ({CORPUS}); it lives in ../shared/data/",
                allow_module_level=True)
if shutil.which("tshark") is None:
    pytest.skip("tshark not on PATH (install with `make system-deps`): the corpus is compared with it",
                allow_module_level=True)

CORPUS_FILES = [p.name for p in captures(CORPUS)]
CORPUS2_FILES = [p.name for p in captures(CORPUS2)] if CORPUS2.is_dir() else []


def test_the_corpus_is_complete():
    assert len(CORPUS_FILES) == 30
    assert len(CORPUS2_FILES) in (0, 9)


@pytest.mark.parametrize("path", [CORPUS / n for n in CORPUS_FILES] + [CORPUS2 / n for n in CORPUS2_FILES],
                         ids=lambda p: p.name)
def test_capture_agrees_with_tshark(path):
    diffs = check_capture(path)
    assert diffs == {}, "\n".join(f"{k}: {v}" for k, v in diffs.items())


@pytest.mark.parametrize("name", ["mptcp_2path.pcapng.gz", "p2_fig4_rtt150-120_s-p0.pcap.gz"])
def test_our_mptcp_captures_group_and_classify_as_tshark(name):
    """Our own MPTCP captures (data/captures/): grouping, retransmission classes and RTT as tshark."""
    diffs = compare_analysis(read_quietly(CAPTURES / name), tshark_analysis(CAPTURES / name))
    assert diffs == {}, diffs


@pytest.mark.skipif(shutil.which("tcptrace") is None, reason="tcptrace not on PATH (Debian package tcptrace; "
                    "`make system-deps` installs it)")
@pytest.mark.parametrize("path", [CORPUS / n for n in CORPUS_FILES] + [CORPUS2 / n for n in CORPUS2_FILES]
                         + [CAPTURES / n for n in ("cubic_bulk.pcap.gz", "reno_bulk.pcap.gz", "short_flows_any.pcap.gz",
                                                   "mptcp_2path.pcapng.gz")], ids=lambda p: p.name)
def test_capture_agrees_with_tcptrace(path):
    """Per connection and direction, tcptrace 6.6's counters (the definitions that differ are checked in
    corpus_check.compare_tcptrace; the captures tcptrace cannot decode or gets wrong are listed there)."""
    assert compare_tcptrace(path) == TCPTRACE_WRONG.get(path.name, [])
