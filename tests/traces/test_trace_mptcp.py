"""MPTCP v0 (RFC 6824) and v1 (RFC 8684): tokens, versions and subflow grouping on hand-built conversations."""

from __future__ import annotations

import hashlib
import shutil
import struct

import pytest
from pass_equality import assert_captures_equal
from trace_synth import ether, ipv4, tcp, write_pcap

from tcpmodels.traces import annotate, mptcp_idsn, mptcp_subflows, mptcp_token, read_pcap
from tcpmodels.traces.connpass import compiled_pass_available

T0 = 1_700_000_000_000_000_000
SYN, ACK = 0x02, 0x10
KEY_A, KEY_B = 0x0123456789ABCDEF, 0xFEDCBA9876543210


@pytest.fixture(autouse=True)
def _compiled_pass_equals_the_reference(tmp_path):
    """Every capture this module's tests write: the compiled pass gives the reference's columns."""
    yield
    if compiled_pass_available():
        assert_captures_equal(tmp_path)


def test_tokens_and_idsn_by_version():
    # RFC 6824 Sec. 3.1 (v0: SHA-1) and RFC 8684 Sec. 3.1 (v1: SHA-256); checked against hashlib directly
    for version, h in ((0, hashlib.sha1), (1, hashlib.sha256)):
        d = h(KEY_A.to_bytes(8, "big")).digest()
        assert mptcp_token(KEY_A, version) == int.from_bytes(d[:4], "big")
        assert mptcp_idsn(KEY_A, version) == int.from_bytes(d[-8:], "big")
    assert mptcp_token(KEY_A) == mptcp_token(KEY_A, 1) != mptcp_token(KEY_A, 0)
    with pytest.raises(ValueError, match="version must be 0"):
        mptcp_token(KEY_A, 2)


def capable(version: int, *keys: int) -> bytes:
    return bytes([30, 4 + 8 * len(keys), version, 0x81]) + b"".join(struct.pack("!Q", k) for k in keys)


def join_syn(token: int) -> bytes:
    return b"\x1e\x0c\x10\x01" + struct.pack("!II", token, 42)


DSS_ACK = b"\x1e\x08\x20\x01" + struct.pack("!I", 77)  # data ACK only


def conversation(tmp_path, version: int):
    """Initial subflow, a join (token of the server's key), a subflow with no handshake, a fast close."""
    cli, srv = "10.0.0.1", "10.0.0.2"
    seg = []

    def add(src, dst, sport, dport, seq, ack, flags, opts):
        seg.append(ether(ipv4(tcp(sport=sport, dport=dport, seq=seq, ack=ack, flags=flags, options=opts),
                              src=src, dst=dst, ip_id=len(seg))))

    syn_keys = (KEY_A,) if version == 0 else ()  # v0 sends the initiator's key in the SYN, v1 does not
    add(cli, srv, 40000, 80, 100, 0, SYN, capable(version, *syn_keys))
    add(srv, cli, 80, 40000, 900, 101, SYN | ACK, capable(version, KEY_B))
    add(cli, srv, 40000, 80, 101, 901, ACK, capable(version, KEY_A, KEY_B))
    add(cli, srv, 40001, 80, 500, 0, SYN, join_syn(mptcp_token(KEY_B, version)))
    add(srv, cli, 80, 40001, 700, 501, SYN | ACK, b"")
    add("10.0.0.3", srv, 40002, 80, 5, 6, ACK, DSS_ACK)  # a subflow whose handshake was not captured
    add(cli, srv, 40000, 80, 101, 901, ACK, b"\x1e\x0c\x70\x00" + struct.pack("!Q", KEY_B))  # MP_FASTCLOSE
    path = tmp_path / f"v{version}.pcap"
    write_pcap(path, [(T0 + 1000 * i, f) for i, f in enumerate(seg)])
    return path


@pytest.mark.parametrize("version", [0, 1])
def test_versions_group_joins_and_handshake_less_subflows(tmp_path, version):
    path = conversation(tmp_path, version)
    p = read_pcap(path)
    assert p["mptcp_version"].tolist() == [version] * 3 + [-1] * 4
    assert p["mptcp_recv_key"].iloc[6] == KEY_B  # MP_FASTCLOSE carries the receiver's key
    sub = mptcp_subflows(p)
    assert sub["mptcp_id"].tolist() == [0, 0, 1] and sub["subflow"].tolist() == [0, 1, 0]
    assert sub["version"].tolist() == [version, version, -1]
    assert sub["token"].iloc[0] == sub["token"].iloc[1] == mptcp_token(KEY_B, version)
    assert (sub["initiator_key"].iloc[0], sub["responder_key"].iloc[0]) == (KEY_A, KEY_B)
    assert sub["client_port"].tolist() == [40000, 40001, 40002]
    if shutil.which("tshark"):  # the same grouping as Wireshark's mptcp.stream
        from corpus_check import compare_analysis, tshark_analysis

        assert "mptcp" not in compare_analysis(p, tshark_analysis(path))
        assert (read_pcap(path, "tshark")["mptcp_version"] == p["mptcp_version"]).all()


def test_join_with_an_unknown_token_forms_its_own_connection(tmp_path):
    frames = [ether(ipv4(tcp(sport=40000 + i, dport=80, flags=SYN, options=join_syn(1234)), ip_id=i))
              for i in range(2)]
    path = tmp_path / "j.pcap"
    write_pcap(path, [(T0 + i, f) for i, f in enumerate(frames)])
    sub = mptcp_subflows(read_pcap(path))
    assert sub["mptcp_id"].tolist() == [0, 0] and sub["version"].tolist() == [-1, -1]
    assert sub["token"].tolist() == [1234, 1234] and sub["join_delay_s"].isna().all()
    assert len(annotate(read_pcap(path))) == 2
