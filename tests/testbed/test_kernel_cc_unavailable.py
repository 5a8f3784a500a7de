"""When a tm_* congestion control is asked for and BPF cannot load it, a campaign says why in one
line, before any namespace exists (the reason forced here, so no root or BPF is needed)."""

from __future__ import annotations

import pytest

from tcpmodels.testbed import kernel_cc
from tcpmodels.testbed import workload as wl
from tcpmodels.testbed.kernel_cc import loader
from tcpmodels.testbed.runner import run_config

FORCED = "forced for the test: the kernel exposes no BTF"


@pytest.fixture
def no_bpf(monkeypatch):
    monkeypatch.setattr(loader, "unavailable_reason", lambda *, need_root=True: FORCED)


def _config(cc: str, tmp_path) -> dict:
    return {"run": {"name": "cc_unavailable", "out_dir": str(tmp_path)},
            "topology": {"kind": "single_link", "paths": [{"rate_mbps": 10, "rtt_ms": 10}]},
            "traffic": [{"kind": "bulk", "duration_s": 1.0, "cc": cc, "mptcp": cc in ("tm_lia", "tm_olia")}]}


def test_requested_problem_names_the_controls_and_the_reason(no_bpf):
    line = kernel_cc.requested_problem(["tm_olia", "reno", None, "tm_lia", "tm_lia"])
    assert line == f"tm_lia, tm_olia requested, but BPF congestion controls cannot be loaded here: {FORCED}"
    assert kernel_cc.requested_problem(["reno", "cubic", None]) is None   # kernel controls need no BPF


@pytest.mark.parametrize("cc", ["tm_reno", "tm_lia"])
def test_run_config_stops_with_one_line_before_any_namespace(no_bpf, monkeypatch, tmp_path, cc):
    def no_testbed(*a, **k):
        raise AssertionError("a testbed was created although the congestion control cannot load")

    monkeypatch.setattr("tcpmodels.testbed.runner.Testbed", no_testbed)
    with pytest.raises(kernel_cc.KernelCcUnavailable) as err:
        run_config(_config(cc, tmp_path), progress=False)
    msg = str(err.value)
    assert "\n" not in msg and msg.startswith(f"{cc} requested") and FORCED in msg
    assert not any(tmp_path.iterdir())   # no run directory either


def test_cli_prints_one_line_and_exits_77(no_bpf, tmp_path, capsys):
    from tcpmodels.cli import main

    cfg = tmp_path / "tm.toml"
    cfg.write_text('[run]\nname = "x"\n[topology]\nkind = "single_link"\n[[topology.paths]]\nrate_mbps = 10\nrtt_ms = 10\n'
                   '[[traffic]]\nkind = "bulk"\nduration_s = 1.0\ncc = "tm_cubic_x"\n')
    assert main(["testbed", "run", str(cfg), "--out-dir", str(tmp_path / "runs"), "--no-progress"]) == 77
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"tcpmodels testbed: tm_cubic_x requested, but BPF congestion controls cannot be loaded here: {FORCED}"]


def test_launch_flows_refuses_before_starting_a_client(no_bpf):
    class NoTestbed:
        def popen(self, *a, **k):
            raise AssertionError("client started")

    flows = [wl.bulk_flow(flow_id=1, dst="10.0.1.2", duration_s=1.0, cc="tm_olia", mptcp=True)]
    with pytest.raises(kernel_cc.KernelCcUnavailable, match="^tm_olia requested, but"):
        wl.launch_flows(NoTestbed(), "c", flows)
