"""One registry of congestion controls: each algorithm named once, with its parameters and defaults,
its closed-form and window/fluid models, its ns-3 TypeId and its kernel name or BPF program.

>>> from tcpmodels import congestion
>>> congestion.names()
('reno', 'cubic', 'cubic_x', 'lia', 'olia', 'bbr')
>>> congestion.get("cubic_x").defaults("kernel")["hystart"]
1
>>> congestion.bpf_programs()
('tm_reno', 'tm_cubic_x', 'tm_lia', 'tm_olia')

The engines derive their tables from it: :data:`tcpmodels.testbed.kernel_cc.loader.PROGRAMS` and
``PARAMETERS``, :data:`tcpmodels.testbed.workload.CONGESTION_CONTROLS`, the run-time compiled part
of :data:`tcpmodels.sim.config.TCP_VARIANTS`, the defaults and keys of ``TcpCubicX``'s
``cc_params`` (:mod:`tcpmodels.sim.cc`). Add an algorithm as a module here that calls
:func:`register`, and import it below. An entry names its models (``cubic.cubic_k_s``) and
:meth:`CongestionControl.models` imports them when asked, so importing the registry, which every
engine does, imports no model (nor the pandas and scipy they need).
"""

from __future__ import annotations

from tcpmodels.congestion.base import ENGINES, CongestionControl, Parameter
from tcpmodels.congestion.registry import (
    all_controls,
    bpf_programs,
    by_kernel_name,
    get,
    kernel_congestion_controls,
    names,
    ns3_type_ids,
    register,
)

# the entries register in this order, which names() and the engine tables keep: not sorted
# isort: off
from tcpmodels.congestion import reno, cubic, cubic_x, lia, olia, bbr  # noqa: F401  (they register)
# isort: on

__all__ = ["ENGINES", "CongestionControl", "Parameter", "register", "get", "names", "all_controls",
           "by_kernel_name", "bpf_programs", "kernel_congestion_controls", "ns3_type_ids"]
