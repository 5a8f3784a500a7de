"""The quiet drops of the tm_* congestion controls, said (issue 50, finding 6).

``testbed cleanup`` unregistered a control another user had loaded with ``testbed cc load`` without a word,
and ``testbed cc unload`` said "unregistered" without saying that sockets still run the control (the kernel
keeps an unregistered struct_ops control loaded until its last socket closes). The bookkeeping runs against
the fake kernel registry of test_kernel_cc_shared; the last test does it for real with tm_reno and a socket.
"""

from __future__ import annotations

import json
import socket
import time
from types import SimpleNamespace

import pytest
from test_kernel_cc_shared import fake_kernel, other_process  # noqa: F401 - fixtures

from tcpmodels.cli import main
from tcpmodels.testbed import kernel_cc
from tcpmodels.testbed.kernel_cc import loader, mapread


@pytest.fixture
def no_netns_cleanup(monkeypatch):
    """The CLI's cleanup also removes dead runs' namespaces: not here (other engineers' runs may be on the host)."""
    import tcpmodels.testbed.netns as netns

    monkeypatch.setattr(netns, "cleanup", lambda include_live=False: SimpleNamespace(to_dict=lambda: {}))


def test_cleanup_names_a_cli_load_it_unregisters(fake_kernel, no_netns_cleanup, monkeypatch, capsys):  # noqa: F811
    registry, _ = fake_kernel
    monkeypatch.setenv("SUDO_USER", "alice")
    loader.load("tm_reno")  # a deliberate load: pinned, no holder
    assert kernel_cc.loaded()["tm_reno"]["pinned"]
    assert main(["testbed", "cleanup"]) == 0
    out, err = capsys.readouterr()
    report = json.loads(out)
    assert report["unregistered_congestion_controls"] == ["tm_reno"] and registry == []
    (pinned,) = report["unregistered_pinned_loads"]
    assert pinned["name"] == "tm_reno" and pinned["loaded_by"] == "alice" and pinned["loaded_unix_s"] > 0
    assert "unregistered tm_reno, loaded with `tcpmodels testbed cc load` by alice at " in err
    assert "--keep-pinned" in err


def test_cleanup_keeps_cli_loads_when_told(fake_kernel, no_netns_cleanup, other_process, capsys):  # noqa: F811
    registry, _ = fake_kernel
    dead = other_process()
    loader.acquire("tm_olia", pid=dead.pid)
    dead.kill()
    dead.wait()
    loader.load("tm_reno")
    assert main(["testbed", "cleanup", "--keep-pinned"]) == 0
    out, err = capsys.readouterr()
    report = json.loads(out)
    assert report["unregistered_congestion_controls"] == ["tm_olia"]  # the leftover of a killed holder
    assert report["skipped_pinned_congestion_controls"] == ["tm_reno"] and registry == ["tm_reno"]
    assert report["unregistered_pinned_loads"] == [] and err == ""


def test_unload_says_who_held_it_and_that_sockets_still_run_it(fake_kernel, other_process, monkeypatch,  # noqa: F811
                                                                capsys):
    registry, _ = fake_kernel
    alive = other_process()
    loader.acquire("tm_lia", pid=alive.pid)
    monkeypatch.setattr(kernel_cc, "still_loaded", lambda name: 2)
    assert main(["testbed", "cc", "unload", "tm_lia"]) == 0
    out = capsys.readouterr().out
    assert registry == []
    assert f"unregistered tm_lia: no new socket can select it; live process(es) [{alive.pid}] held it" in out
    assert "sockets still run it (2 unregistered registration(s) stay loaded): they keep tm_lia until they close" in out
    monkeypatch.setattr(kernel_cc, "still_loaded", lambda name: 0)
    loader.load("tm_reno")
    assert main(["testbed", "cc", "unload", "tm_reno"]) == 0
    assert capsys.readouterr().out.strip() == "unregistered tm_reno: no new socket can select it"


def test_unregistered_registrations_are_counted_from_bpftool(monkeypatch):
    dump = [{"bpf_map_info": {"id": 7}}, {"bpf_struct_ops_tcp_congestion_ops": {"common": {"state":
                                                                                  "BPF_STRUCT_OPS_STATE_INUSE"}}},
            {"bpf_map_info": {"id": 9}}, {"bpf_struct_ops_tcp_congestion_ops": {"common": {"state":
                                                                                  "BPF_STRUCT_OPS_STATE_TOBEFREE"}}}]
    monkeypatch.setattr(mapread, "run", lambda cmd, check=False: SimpleNamespace(returncode=0, stdout=json.dumps(dump)))
    assert mapread.unregistered_still_loaded("tm_reno") == 1
    monkeypatch.setattr(mapread, "run", lambda cmd, check=False: SimpleNamespace(returncode=255, stdout=""))
    assert mapread.unregistered_still_loaded("tm_reno") == 0


REASON = kernel_cc.unavailable_reason()


@pytest.mark.testbed
@pytest.mark.skipif(REASON is not None, reason=f"kernel_cc: {REASON}")
def test_a_socket_keeps_an_unregistered_control_loaded():
    if "tm_reno" in kernel_cc.available_congestion_controls():
        pytest.skip("tm_reno is registered by someone else: not unregistered under them")
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        with kernel_cc.congestion_control("tm_reno") as rec:
            assert not rec["joined"]
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, b"tm_reno")
        if "tm_reno" in kernel_cc.available_congestion_controls():
            pytest.skip("another process joined tm_reno meanwhile")
        assert kernel_cc.still_loaded("tm_reno") == 1  # off the list, kept by the socket
    finally:
        sock.close()
    deadline = time.monotonic() + 30
    while kernel_cc.still_loaded("tm_reno") and time.monotonic() < deadline:
        time.sleep(0.2)
    assert kernel_cc.still_loaded("tm_reno") == 0
