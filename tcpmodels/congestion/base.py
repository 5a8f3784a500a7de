"""What a congestion control is, once: its parameters, its models, and its name on each engine.

In the style of aioquic's ``congestion`` package (a small base, one module per algorithm,
a registry), with what it lacks: units on every parameter and the models that describe
the algorithm. An entry names things and holds no engine code: the ns-3 class lives in
:mod:`tcpmodels.sim`, the BPF program in :mod:`tcpmodels.testbed.kernel_cc`, the closed
forms in :mod:`tcpmodels.models`; the tables those packages used to restate (the loader's
programs and parameter defaults, ns-3's TypeIds, the testbed's list of congestion controls)
are derived from the registry (:mod:`tcpmodels.congestion.registry`).
"""

from __future__ import annotations

import copy
import importlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

__all__ = ["ENGINES", "Parameter", "CongestionControl"]

#: the engines a parameter can apply to: the Linux testbed and the ns-3 simulator
ENGINES = ("kernel", "ns3")


@dataclass(frozen=True, kw_only=True)
class Parameter:
    """One parameter of a congestion control, with its default and unit.

    Parameters
    ----------
    name : str
        The key a load (``kernel_cc.load(name, params)``) or an ns-3 sender's ``cc_params`` uses.
    default : object
        Its value when not given.
    unit : str
        Its unit (``"-"`` for a dimensionless number, ``"bool"``, ``"choice"``).
    doc : str
        What it does, in one line.
    engines : tuple of str
        The engines that take it per connection (a subset of :data:`ENGINES`); empty for a
        constant of the algorithm that neither engine here lets a run change.
    """

    name: str
    default: Any
    unit: str
    doc: str
    engines: tuple[str, ...] = ENGINES

    def __post_init__(self) -> None:
        unknown = set(self.engines) - set(ENGINES)
        if unknown:
            raise ValueError(f"parameter {self.name}: engines must be a subset of {ENGINES}; "
                             f"got {self.engines!r}")


@dataclass(frozen=True, kw_only=True)
class CongestionControl:
    """A congestion control algorithm: parameters, models, and its name on each engine.

    Parameters
    ----------
    name : str
        Registry key (``"reno"``, ``"cubic"``, ``"cubic_x"``, ``"lia"``, ``"olia"``, ``"bbr"``).
    title : str
        One line saying what it is.
    parameters : tuple of Parameter
        Its parameters with defaults, in the order the engines list them.
    closed_forms : tuple of str
        Closed-form models of it, named ``module.function`` below :mod:`tcpmodels.models` (``cubic.cubic_k_s``;
        empty if there is none yet); :meth:`models` imports them.
    window_models : tuple of str
        Its window or fluid models (trajectories, bottleneck sharing), named likewise.
    ns3_type_id : str or None
        ns-3 TypeId without the ``ns3::`` prefix, or ``None`` if ns-3 has none here.
    ns3_compiled_by : str or None
        The module that compiles the ns-3 class at run time; ``None`` when ns-3 ships it.
    multipath : bool
        It couples the subflows of one connection (chosen with ``coupled=True`` in ns-3, or by
        its BPF program on an MPTCP socket), not a single-path variant.
    kernel_name : str or None
        The kernel's own congestion control of that name (``TCP_CONGESTION``), if any.
    bpf_program : str or None
        The project's BPF implementation (``tcpmodels/testbed/kernel_cc/<name>.bpf.c``), if any.
    validated_by : tuple of str
        Where it is checked against an engine (modules of :mod:`tcpmodels.experiments`, notebooks).
    references : tuple of str
        Its specification and the papers of its models.
    """

    name: str
    title: str
    parameters: tuple[Parameter, ...] = ()
    closed_forms: tuple[str, ...] = ()
    window_models: tuple[str, ...] = ()
    ns3_type_id: str | None = None
    ns3_compiled_by: str | None = None
    multipath: bool = False
    kernel_name: str | None = None
    bpf_program: str | None = None
    validated_by: tuple[str, ...] = ()
    references: tuple[str, ...] = field(default=())

    def __post_init__(self) -> None:
        names = [p.name for p in self.parameters]
        if len(set(names)) != len(names):
            raise ValueError(f"{self.name}: parameter names repeat: {names}")
        if self.bpf_program is not None and not self.bpf_program.startswith("tm_"):
            raise ValueError(f"{self.name}: a BPF program's name starts with tm_; got {self.bpf_program!r}")
        if self.ns3_type_id is not None and self.ns3_type_id.startswith("ns3::"):
            raise ValueError(f"{self.name}: ns3_type_id is written without the ns3:: prefix; got {self.ns3_type_id!r}")
        if self.ns3_compiled_by is not None and self.ns3_type_id is None:
            raise ValueError(f"{self.name}: ns3_compiled_by given without an ns3_type_id")
        for model in self.closed_forms + self.window_models:
            if not isinstance(model, str) or model.count(".") != 1:
                raise ValueError(f"{self.name}: a model is named 'module.function' below tcpmodels.models "
                                 f"(e.g. 'cubic.cubic_k_s'); got {model!r}")

    def models(self, kind: str = "closed_forms") -> tuple[Callable[..., Any], ...]:
        """Its models of ``kind``, imported now (the registry only names them: importing it imports no model).

        Parameters
        ----------
        kind : str
            ``"closed_forms"`` or ``"window_models"``.

        Returns
        -------
        tuple of callable
            The functions of :mod:`tcpmodels.models` the entry names, in its order.

        Raises
        ------
        ValueError
            If ``kind`` is neither.
        """
        if kind not in ("closed_forms", "window_models"):
            raise ValueError(f"kind must be 'closed_forms' or 'window_models'; got {kind!r}")
        out = []
        for model in getattr(self, kind):
            module, function = model.split(".")
            out.append(getattr(importlib.import_module(f"tcpmodels.models.{module}"), function))
        return tuple(out)

    def defaults(self, engine: str) -> dict[str, Any]:
        """The parameters ``engine`` takes, with their defaults, in declared order.

        Parameters
        ----------
        engine : str
            ``"kernel"`` (the BPF program's load parameters) or ``"ns3"`` (a sender's ``cc_params``).

        Returns
        -------
        dict
            Name -> default (a copy: changing it does not change the registry).

        Raises
        ------
        ValueError
            If ``engine`` is not one of :data:`ENGINES`.
        """
        if engine not in ENGINES:
            raise ValueError(f"engine must be one of {ENGINES}; got {engine!r}")
        return {p.name: copy.deepcopy(p.default) for p in self.parameters if engine in p.engines}

    def parameter(self, name: str) -> Parameter:
        """The parameter called ``name``.

        Parameters
        ----------
        name : str
            Its name.

        Returns
        -------
        Parameter

        Raises
        ------
        KeyError
            If it has no such parameter (the message lists those it has).
        """
        for p in self.parameters:
            if p.name == name:
                return p
        raise KeyError(f"{self.name} has no parameter {name!r}; it has {[p.name for p in self.parameters]}")
