"""The registry of congestion controls (tcpmodels.congestion) and the engine tables derived from it."""

from __future__ import annotations

import re
from importlib import import_module, resources

import pytest

from tcpmodels import congestion
from tcpmodels.congestion import CongestionControl, Parameter
from tcpmodels.congestion.registry import register
from tcpmodels.sim import cc as sim_cc
from tcpmodels.sim.config import base as sim_base
from tcpmodels.testbed import workload
from tcpmodels.testbed.kernel_cc import loader


def test_first_entries():
    assert congestion.names() == ("reno", "cubic", "cubic_x", "lia", "olia", "bbr")
    assert congestion.by_kernel_name("tm_cubic_x") is congestion.get("cubic_x")
    assert congestion.by_kernel_name("bbr").ns3_type_id == "TcpBbr"


def test_engine_tables_are_unchanged():
    # the literals these tables held before they were derived from the registry
    assert loader.PROGRAMS == ("tm_reno", "tm_cubic_x", "tm_lia", "tm_olia")
    assert loader.PARAMETERS == {
        "tm_reno": {}, "tm_lia": {}, "tm_olia": {},
        "tm_cubic_x": {"reading": "none", "x_exponent": -1.0 / 3.0, "c": 0.4, "beta_cubic": 0.7,
                       "fast_convergence": 1, "hystart": 1}}
    assert list(loader.PARAMETERS["tm_cubic_x"]) == ["reading", "x_exponent", "c", "beta_cubic",
                                                     "fast_convergence", "hystart"]
    assert workload.CONGESTION_CONTROLS == ("reno", "cubic", "bbr", "tm_reno", "tm_cubic_x", "tm_lia", "tm_olia")
    assert sim_base.TCP_VARIANTS[-1] == "TcpCubicX" and len(sim_base.TCP_VARIANTS) == 17
    from tcpmodels.experiments.sim_vs_kernel.config import NS3_VARIANT
    assert NS3_VARIANT == {"reno": "TcpLinuxReno", "cubic": "TcpCubic"}


def test_every_bpf_program_has_its_source():
    for name in congestion.bpf_programs():
        assert resources.files("tcpmodels.testbed.kernel_cc").joinpath(f"{name}.bpf.c").is_file(), name


def test_ns3_names_exist():
    shipped = congestion.ns3_type_ids(compiled=False)
    assert set(shipped) <= set(sim_base.NS3_SHIPPED_VARIANTS)
    for cc in congestion.all_controls():
        if cc.ns3_compiled_by:   # the compiling module defines that TypeId in its C++ source
            src = resources.files(cc.ns3_compiled_by.rpartition(".")[0]).joinpath(
                cc.ns3_compiled_by.rpartition(".")[2] + ".py").read_text()
            assert f'TypeId("ns3::{cc.ns3_type_id}")' in src, cc.name


def test_cubic_x_ns3_defaults_are_those_of_the_cpp_class():
    # independent of the registry: the attribute defaults written in TcpCubicX's C++ source
    attrs = dict(re.findall(r'AddAttribute\("(\w+)",\s*"[^"]*",\s*DoubleValue\(([\d.]+)\)', sim_cc.CUBIC_X_CPP))
    d = congestion.get("cubic_x").defaults("ns3")
    assert float(attrs["C"]) == d["c"] and float(attrs["Beta"]) == d["beta_cubic"]
    pl = d["x_power_law"]
    assert (float(attrs["XRtt1"]), float(attrs["X1"]), float(attrs["XRtt2"]), float(attrs["X2"])) == (
        pl["rtt1_s"], pl["x1"], pl["rtt2_s"], pl["x2"])
    with pytest.raises(ValueError, match=r"unknown TcpCubicX cc_params \['hystart'\]; valid: reading, x_table"):
        sim_cc.check_cubic_x_params({"hystart": 1})


def test_kernel_parameters_reach_the_bpf_header():
    header = loader.params_header("tm_cubic_x", {"c": 0.8})
    assert "#define TM_C_Q10 819" in header and "#define TM_HYSTART 1" in header


def test_models_are_models():
    for cc in congestion.all_controls():
        for f, name in zip(cc.models() + cc.models("window_models"), cc.closed_forms + cc.window_models):
            assert f.__module__ == f"tcpmodels.models.{name.split('.')[0]}" and f.__name__ == name.split(".")[1]
            assert getattr(import_module(f.__module__), f.__name__) is f
    assert congestion.get("cubic").models()[0](100.0) > 0  # K of a 100-segment window [s]
    with pytest.raises(ValueError, match="kind must be"):
        congestion.get("cubic").models("fluid")
    with pytest.raises(ValueError, match="named 'module.function'"):
        CongestionControl(name="x", title="x", closed_forms=("tcpmodels.models.cubic.cubic_k_s",))


def test_the_registry_imports_no_model():
    # importing the registry (and the engine tables derived from it) must not cost the models' pandas and scipy
    import subprocess
    import sys

    code = ("import sys, tcpmodels.congestion, tcpmodels.testbed.workload; "
            "print(sorted(m for m in sys.modules if m.startswith('tcpmodels.models.') and m != 'tcpmodels.models.constants'))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_defaults_are_copies():
    d = congestion.get("cubic_x").defaults("ns3")
    d["x_power_law"]["x1"] = 99.0
    assert congestion.get("cubic_x").defaults("ns3")["x_power_law"]["x1"] == 10.0


def test_errors_name_what_is_wrong():
    with pytest.raises(KeyError, match=r"no congestion control 'vegas'; registered: reno, cubic"):
        congestion.get("vegas")
    with pytest.raises(KeyError, match=r"no registered congestion control runs as 'htcp'"):
        congestion.by_kernel_name("htcp")
    with pytest.raises(ValueError, match=r"bpf_program 'tm_reno' of reno2 is registered already \(by reno\)"):
        register(CongestionControl(name="reno2", title="x", bpf_program="tm_reno"))
    with pytest.raises(ValueError, match=r"engine must be one of \('kernel', 'ns3'\); got 'quic'"):
        congestion.get("reno").defaults("quic")
    with pytest.raises(ValueError, match=r"engines must be a subset"):
        Parameter(name="a", default=1, unit="-", doc="", engines=("testbed",))
    with pytest.raises(ValueError, match=r"without the ns3:: prefix"):
        CongestionControl(name="x", title="x", ns3_type_id="ns3::TcpX")
    with pytest.raises(KeyError, match=r"cubic has no parameter 'k'"):
        congestion.get("cubic").parameter("k")
    assert "vegas" not in congestion.names() and "reno2" not in congestion.names()
