"""Build a :class:`~tcpmodels.testbed.topology.Topology` as Linux network namespaces, and tear it down.

Naming: every namespace is ``tm<run id>-<node>`` with a run id of six hex digits
(so never ``tmfx...``, which another tool reserves). Interfaces are created
directly inside their namespaces (``ip link add ... netns``) and carry the alias
``tm<run id>:<link>``; nothing is created in the root namespace, so deleting the
namespaces removes every interface. Before the first namespace is made, a state
file ``/run/tcpmodels/<run id>.json`` records the owner's pid; :func:`cleanup`
uses it to tell leftovers of dead runs from runs in progress.

Delay and loss are added by the compiled delay element (see ``delay_element.c``)
running in the namespace ``tm<run id>-dly``: a delayed link ``L`` between nodes A
and B is two veth pairs, ``A:L <-> dly:La`` and ``dly:Lb <-> B:L``, with the element
bridging ``La`` and ``Lb``. Rate limiters sit on ``A:L`` and ``B:L`` (egress), so a
frame queues at the rate limiter first and then travels the delay. An element reports its
counters when it stops (``Testbed.delay_stats``) and, while it runs, on ``SIGUSR1``
(:meth:`Testbed.delay_counters`).
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import secrets
import shutil
import signal
import subprocess
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from tcpmodels._docstrings import SharedEntries
from tcpmodels.testbed._system import TestbedError, delay_element_binary, require_privileges, run
from tcpmodels.testbed.topology import DELAY_NODE, Link, Topology

__all__ = ["Testbed", "cleanup", "CleanupReport", "STATE_DIR", "NAMESPACE_RE", "parse_proc_netstat", "delay_counter_delta", "tcp_ext_delta", "cpumask_hex", "cpuset_mask_hex"]

#: Parameters documented once for the docstrings of this module that share them.
_PARAMETERS = SharedEntries("""
    node : str
        A node of the topology.
    argv : list of str
        The command; elements are converted with ``str``.
""")

#: where run state files live (tmpfs, gone after a reboot like the namespaces themselves)
STATE_DIR = Path(os.environ.get("TCPMODELS_STATE_DIR", "/run/tcpmodels"))
#: namespaces this package creates: tm + 6 hex digits + '-' + node
NAMESPACE_RE = re.compile(r"^tm([0-9a-f]{6})-([a-z][a-z0-9]{0,11})$")

_BASE_SYSCTLS = (
    ("net.ipv4.conf.all.rp_filter", "0"),
    ("net.ipv4.conf.default.rp_filter", "0"),
    ("net.ipv6.conf.all.disable_ipv6", "1"),
    ("net.ipv6.conf.default.disable_ipv6", "1"),
    ("net.ipv4.tcp_no_metrics_save", "1"),
)


def _proc_start_ticks(pid: int) -> int | None:
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as fh:
            text = fh.read()
    except OSError:
        return None
    return int(text.rsplit(")", 1)[1].split()[19])


def _ns_pids(ns: str) -> list[int]:
    proc = run(["ip", "netns", "pids", ns], check=False)
    return [int(p) for p in proc.stdout.split() if p.isdigit()]


def _kill_ns_processes(ns: str, grace_s: float = 1.0) -> None:
    pids = _ns_pids(ns)
    for sig in (signal.SIGTERM, signal.SIGKILL):
        for pid in pids:
            try:
                os.kill(pid, sig)
            except ProcessLookupError:
                pass
        deadline = time.monotonic() + grace_s
        while time.monotonic() < deadline:
            pids = [p for p in pids if _proc_start_ticks(p) is not None and not _is_zombie(p)]
            if not pids:
                return
            time.sleep(0.02)


def _is_zombie(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] == "Z"
    except OSError:
        return True


def _delete_ns(ns: str) -> None:
    _kill_ns_processes(ns)
    run(["ip", "netns", "del", ns], check=False)


@dataclass
class _Proc:
    node: str
    popen: subprocess.Popen
    label: str


class Testbed:
    """A running topology: namespaces, links, qdiscs and delay elements, removed on exit.

    Use as a context manager::

        with Testbed(two_path(...)) as tb:
            tb.exec("client", ["ping", "-c", "3", "10.0.1.2"])

    Teardown runs on leaving the ``with`` block whatever happened, including on
    SIGINT and SIGTERM (turned into exceptions while the testbed is up).

    Parameters
    ----------
    topology : Topology
        What to build.
    run_id : str, optional
        Six hex digits; random by default.
    seed : int
        Seeds the delay elements' loss generators (link *i* gets ``seed + i``).
    keep_flow_order : bool
        Steer every veth's received packets with RPS (``rps_cpus`` = all CPUs of the host), so
        that the packets of one flow are always handled by one CPU and arrive in the order they
        were sent. Without it a veth hands each packet to the backlog of the CPU that sent it, and
        two CPUs drain their backlogs independently: on this 2-CPU host two window-limited flows
        with no drop anywhere had 0.2 % of their segments queued out of order at the receiver,
        and at 4 ms 89 spurious (DSACKed) retransmissions in 20 s and 20 % less throughput than
        with RPS (2026-11-28). Default False for now: with steering on, the kernel called neither
        ``init`` nor ``release`` of the BPF congestion controls for 2-7 of 3000 MPTCP join subflows
        (measured 2026-11-28; ``test_subflows_released_at_once_leave_no_entry``); the kernel datasets
        shipped so far ran without it.
    pin_delay_elements : bool
        With ``keep_flow_order``: pin each delay element to one CPU (the delayed links in topology
        order take CPUs 0, 1, ... in turn; :attr:`delay_element_cpus`) and leave RPS off on the two
        interfaces its frames arrive on (the delayed link's ends in its nodes), so the element's
        frames are processed on its own CPU, in the order it sends them, as it sends them. With RPS
        there too (``keep_flow_order`` alone) an element that falls behind and catches up hands a
        burst to another CPU's backlog, which overflowed ``net.core.netdev_max_backlog`` (1000) in 4
        of 10 steered P3 samples at 400 Mbit/s (139-29 301 packets; 2026-11-28); pinned, 2 of 14 samples of
        the worst cases dropped packets outside the bottleneck queue, 23 and 11 (2026-11-29,
        ``docs/CAMPAIGNS.md``), and 1 of the first 49 samples of the P3 rerun on it (4930 packets, at
        a sender's veth into the delay element's input, whose receive side RPS steers). Not loss-free
        by construction: 7 of those 11 drops were at the end a pinned element's frames arrive on, so
        its own CPU's backlog filled too; why either backlog filled is not measured.
    steer_cpus : tuple of int, optional
        With ``keep_flow_order``: the CPUs RPS steers the received packets to (default all of the host's). One
        CPU puts the receive work of every veth hop on it and leaves the others to the applications and the
        senders (issue 57's placement test, :mod:`tcpmodels.experiments.p1.placement`).

    Raises
    ------
    PrivilegeError
        On entry, before any side effect, when root/CAP_NET_ADMIN/CAP_SYS_ADMIN is missing.
    """

    __test__ = False  # not a pytest test class

    def __init__(self, topology: Topology, *, run_id: str | None = None, seed: int = 0, keep_flow_order: bool = False,
                 pin_delay_elements: bool = False, steer_cpus: tuple[int, ...] | None = None):
        if pin_delay_elements and not keep_flow_order:
            raise ValueError("pin_delay_elements needs keep_flow_order=True (it changes how the steered testbed "
                             "handles the delay elements' frames); got keep_flow_order=False")
        if steer_cpus is not None:
            if not keep_flow_order:
                raise ValueError(f"steer_cpus chooses where RPS steers; it needs keep_flow_order=True; got "
                                 f"steer_cpus={steer_cpus!r} with keep_flow_order=False")
            host = os.cpu_count() or 1
            if not steer_cpus or any(not 0 <= int(c) < host for c in steer_cpus):
                raise ValueError(f"steer_cpus must name CPUs of this host (0 to {host - 1}); got {steer_cpus!r}")
        self.steer_cpus = None if steer_cpus is None else tuple(sorted({int(c) for c in steer_cpus}))
        if run_id is None:
            run_id = secrets.token_hex(3)
        if not re.fullmatch(r"[0-9a-f]{6}", run_id):
            raise ValueError(f"run_id must be six lowercase hex digits; got {run_id!r}")
        self.topology = topology
        self.run_id = run_id
        self.seed = int(seed)
        self.keep_flow_order = bool(keep_flow_order)
        #: the RPS CPU mask written to every veth's receive queue (None: left as the kernel made it, no steering)
        self.rps_cpus: str | None = None
        self.pin_delay_elements = bool(pin_delay_elements)
        #: link -> the CPU its delay element is pinned to (empty: not pinned, see ``pin_delay_elements``)
        self.delay_element_cpus: dict[str, int] = {}
        self.prefix = f"tm{run_id}"
        self._procs: list[_Proc] = []
        self._delay_procs: dict[str, subprocess.Popen] = {}
        self.delay_stats: dict[str, dict] = {}
        #: counters of delay elements replaced by :meth:`set_link_delay` (link, old delay_s, loss_rate, stats)
        self.replaced_delay_stats: list[dict] = []
        self._created: list[str] = []
        self._old_handlers: dict[int, object] = {}
        self._up = False
        self.state_file = STATE_DIR / f"{run_id}.json"
        self.started_utc: str | None = None

    # ------------------------------------------------------------------ names
    def ns(self, node: str) -> str:
        """Namespace name of ``node``.

        Parameters
        ----------
        node : str
            Node name (not checked against the topology).

        Returns
        -------
        str
            ``"<prefix>-<node>"``, e.g. ``"tm1a2b3c-h1"``.
        """
        return f"{self.prefix}-{node}"

    @property
    def namespaces(self) -> list[str]:
        names = [self.ns(n.name) for n in self.topology.nodes]
        if any(lk.delayed for lk in self.topology.links):
            names.append(self.ns(DELAY_NODE))
        return names

    def addr(self, link: str, node: str, index: int = 0) -> str:
        """Address (without prefix length) of ``node`` on ``link``.

        Parameters
        ----------
        link : str
            Link name.
        node : str
            One of the link's two ends.
        index : int
            Which of the node's addresses on that link (0: the first).

        Returns
        -------
        str
            The IP address, e.g. ``"10.0.1.1"``.

        Raises
        ------
        KeyError, ValueError, IndexError
            If there is no such link, ``node`` is not on it, or it has fewer addresses
            there (from :meth:`Topology.link` and :meth:`Link.addrs`).
        """
        return self.topology.link(link).addrs(node)[index].split("/")[0]

    # -------------------------------------------------------------- lifecycle
    def __enter__(self) -> "Testbed":
        require_privileges()
        if any(lk.delayed for lk in self.topology.links):
            self._delay_bin = delay_element_binary()  # compile before any side effect
        if any(lk.offloads is False or (lk.offloads is None and lk.delayed) for lk in self.topology.links):
            if shutil.which("ethtool") is None:
                raise TestbedError("ethtool is needed to turn offloads off on delayed links (apt-get install ethtool)")
        self._install_signal_handlers()
        try:
            self._write_state()
            self._build()
        except BaseException:
            self.teardown()
            raise
        self._up = True
        return self

    def __exit__(self, *exc) -> None:
        self.teardown()

    def _install_signal_handlers(self) -> None:
        if threading.current_thread() is not threading.main_thread():
            return

        def handler(signum, frame):
            raise KeyboardInterrupt(f"signal {signum}: tearing down testbed {self.run_id}")

        for sig in (signal.SIGINT, signal.SIGTERM):
            self._old_handlers[sig] = signal.signal(sig, handler)

    def _restore_signal_handlers(self) -> None:
        for sig, old in self._old_handlers.items():
            signal.signal(sig, old)
        self._old_handlers.clear()

    def _write_state(self) -> None:
        STATE_DIR.mkdir(parents=True, exist_ok=True)
        self.started_utc = datetime.now(timezone.utc).isoformat(timespec="seconds")
        state = {
            "run_id": self.run_id,
            "pid": os.getpid(),
            "pid_start_ticks": _proc_start_ticks(os.getpid()),
            "namespaces": self.namespaces,
            "topology": self.topology.name,
            "started_utc": self.started_utc,
        }
        self.state_file.write_text(json.dumps(state, indent=1))

    def teardown(self) -> None:
        """Stop every process, delete every namespace, remove the state file. Idempotent."""
        ignored = {}
        if threading.current_thread() is threading.main_thread():
            for sig in (signal.SIGINT, signal.SIGTERM):  # finish tearing down even if signalled again
                ignored[sig] = signal.signal(sig, signal.SIG_IGN)
        try:
            for proc in self._procs:
                _terminate(proc.popen)
            self._procs.clear()
            for name, popen in self._delay_procs.items():
                out = _terminate(popen, sig=signal.SIGTERM)
                try:
                    self.delay_stats[name] = json.loads(out.strip().splitlines()[-1])
                except (ValueError, IndexError):
                    pass
            self._delay_procs.clear()
            for ns in reversed(self._created):  # only what this run made, never a namesake
                _delete_ns(ns)
            self._created.clear()
            self.state_file.unlink(missing_ok=True)
            self._up = False
        finally:
            for sig, old in ignored.items():
                signal.signal(sig, old)
            self._restore_signal_handlers()

    # ------------------------------------------------------------------ build
    def _build(self) -> None:
        topo = self.topology
        delay_ns = self.ns(DELAY_NODE)
        for ns in self.namespaces:
            run(["ip", "netns", "add", ns])
            self._created.append(ns)
        for node in topo.nodes:
            sysctls = list(_BASE_SYSCTLS) + [("net.ipv4.ip_forward", "1" if node.forwarding else "0")]
            sysctls += [tuple(kv) for kv in node.sysctls]
            self._sysctl(self.ns(node.name), sysctls)
        if delay_ns in self._created:
            self._sysctl(delay_ns, list(_BASE_SYSCTLS))

        # veth pairs, created inside their namespaces
        batch = []
        for lk in topo.links:
            if lk.delayed:
                batch.append(f"link add {lk.name} netns {self.ns(lk.a)} type veth peer name {lk.name}a netns {delay_ns}")
                batch.append(f"link add {lk.name}b netns {delay_ns} type veth peer name {lk.name} netns {self.ns(lk.b)}")
            else:
                batch.append(f"link add {lk.name} netns {self.ns(lk.a)} type veth peer name {lk.name} netns {self.ns(lk.b)}")
        run(["ip", "-batch", "-"], input_text="\n".join(batch) + "\n")

        per_ns: dict[str, list[str]] = {ns: ["link set lo up"] for ns in self.namespaces}
        for lk in topo.links:
            for node in (lk.a, lk.b):
                cmds = per_ns[self.ns(node)]
                cmds.append(f"link set dev {lk.name} alias {self.prefix}:{lk.name}")
                cmds += [f"addr add {a} dev {lk.name}" for a in lk.addrs(node)]
                cmds.append(f"link set dev {lk.name} up")
            if lk.delayed:
                for side in "ab":
                    per_ns[delay_ns].append(f"link set dev {lk.name}{side} alias {self.prefix}:{lk.name}")
                    per_ns[delay_ns].append(f"link set dev {lk.name}{side} up")
        for ns, cmds in per_ns.items():
            run(["ip", "-n", ns, "-batch", "-"], input_text="\n".join(cmds) + "\n")
        if self.keep_flow_order:
            cpus = self.steer_cpus if self.steer_cpus is not None else range(os.cpu_count() or 1)
            self._steer_receive(cpuset_mask_hex(cpus))

        for lk in topo.links:
            offloads = lk.offloads if lk.offloads is not None else not lk.delayed
            if not offloads:
                targets = [(self.ns(lk.a), lk.name), (self.ns(lk.b), lk.name)]
                if lk.delayed:
                    targets += [(delay_ns, lk.name + "a"), (delay_ns, lk.name + "b")]
                for ns, ifname in targets:
                    self._offloads_off(ns, ifname)
            if lk.rate_bps is not None or lk.buffer_bytes is not None or lk.buffer_packets is not None:
                for node in (lk.a, lk.b):
                    run(["tc", "-n", self.ns(node), "-batch", "-"], input_text="\n".join(_qdisc_cmds(lk)) + "\n")
        for i, lk in enumerate(topo.links):
            if lk.delayed:
                self._start_delay(lk, self.seed + i)

        for node in topo.nodes:
            cmds = []
            if node.mptcp_subflows or node.mptcp_add_addr_accepted:
                cmds.append(
                    f"mptcp limits set subflows {node.mptcp_subflows} add_addr_accepted {node.mptcp_add_addr_accepted}"
                )
            cmds += [" ".join(r.ip_args()) for r in topo.rules if r.node == node.name]
            cmds += [" ".join(r.ip_args()) for r in topo.routes if r.node == node.name]
            cmds += [" ".join(e.ip_args()) for e in topo.endpoints if e.node == node.name]
            if cmds:
                run(["ip", "-n", self.ns(node.name), "-batch", "-"], input_text="\n".join(cmds) + "\n")

    def _sysctl(self, ns: str, pairs) -> None:
        run(["ip", "netns", "exec", ns, "sysctl", "-q", "-w"] + [f"{k}={v}" for k, v in pairs])

    @_PARAMETERS.fill
    def set_sysctls(self, node: str, pairs: tuple[tuple[str, str], ...] | list[tuple[str, str]]) -> dict[str, str]:
        """Set namespaced sysctls of a node while the testbed runs; return the values read back.

        For settings that change between samples of a campaign without a
        rebuild, e.g. the receive-buffer cap ``net.ipv4.tcp_rmem`` (per network
        namespace since Linux 4.15). Sockets opened afterwards see the new
        values; ``self.topology`` is updated so that its record matches.

        Parameters
        ----------
        {node}
        pairs : sequence of (str, str)
            ``(name, value)`` with names under ``net.`` (the namespaced ones).

        Returns
        -------
        dict
            Each name and the value the kernel reports after the write (whitespace normalised).

        Raises
        ------
        ValueError
            For an unknown node or a name outside ``net.``.
        TestbedError
            When the testbed is not up or the kernel refuses a value.
        """
        if node not in {n.name for n in self.topology.nodes}:
            raise ValueError(f"no node {node!r} in topology {self.topology.name}")
        pairs = [(str(k), str(v)) for k, v in pairs]
        bad = [k for k, _ in pairs if not k.startswith("net.") or "/" in k]
        if bad:
            raise ValueError(f"only namespaced sysctls under net. can be set per node; got {bad}")
        if not self._up:
            raise TestbedError(f"testbed {self.run_id} is not up: enter it before set_sysctls")
        self._sysctl(self.ns(node), pairs)
        out = {}
        for k, _ in pairs:
            got = run(["ip", "netns", "exec", self.ns(node), "sysctl", "-n", k]).stdout
            out[k] = " ".join(got.split())
        names = {k for k, _ in pairs}
        nodes = tuple(dataclasses.replace(n, sysctls=tuple((k, v) for k, v in n.sysctls if k not in names)
                                          + tuple(pairs)) if n.name == node else n for n in self.topology.nodes)
        self.topology = dataclasses.replace(self.topology, nodes=nodes)
        return out

    def _steer_receive(self, mask: str) -> None:
        """Write ``mask`` to the RPS CPU mask of every receive queue of the topology's interfaces (see ``keep_flow_order``)."""
        ifaces: dict[str, list[tuple[str, str]]] = {}
        for lk in self.topology.links:
            # a pinned element's frames arrive on the link's ends: processed where the element runs
            end_mask = "0" if (lk.delayed and self.pin_delay_elements) else mask
            ifaces.setdefault(self.ns(lk.a), []).append((lk.name, end_mask))
            ifaces.setdefault(self.ns(lk.b), []).append((lk.name, end_mask))
            if lk.delayed:
                ifaces.setdefault(self.ns(DELAY_NODE), []).extend([(lk.name + "a", mask), (lk.name + "b", mask)])
        for ns, names in ifaces.items():
            # sysfs is the namespace's own only inside it (ip netns exec mounts it there)
            script = "".join(f"for q in /sys/class/net/{n}/queues/rx-*; do echo {m} > $q/rps_cpus || exit 1; done\n"
                             for n, m in names)
            run(["ip", "netns", "exec", ns, "sh", "-ec", script])
        self.rps_cpus = mask

    def _offloads_off(self, ns: str, ifname: str) -> None:
        run(["ip", "netns", "exec", ns, "ethtool", "-K", ifname, "tx", "off", "tso", "off", "gso", "off", "gro", "off"])

    def _start_delay(self, lk: Link, seed: int) -> None:
        queue = 65536
        if lk.rate_bps:
            # room for two bandwidth-delay products of full frames, at least 1024
            queue = max(1024, int(2 * lk.rate_bps * lk.delay_s / 8 / 1514) + 1024)
        cmd = [
            "ip", "netns", "exec", self.ns(DELAY_NODE), str(self._delay_bin),
            f"{lk.name}a", f"{lk.name}b", f"{lk.delay_s * 1e6:.3f}", repr(float(lk.loss_rate)), str(seed), str(queue),
        ]
        popen = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
        line = popen.stderr.readline()
        if "ready" not in line:
            _terminate(popen)
            raise TestbedError(f"delay element for link {lk.name} did not start: {line.strip()} {popen.stderr.read()}")
        self._delay_procs[lk.name] = popen
        if self.pin_delay_elements:
            delayed = [x.name for x in self.topology.links if x.delayed]
            cpu = delayed.index(lk.name) % (os.cpu_count() or 1)
            os.sched_setaffinity(popen.pid, {cpu})  # ip netns exec execs the element: this pid is the element
            self.delay_element_cpus[lk.name] = cpu

    def set_link_delay(self, link: str, delay_s: float, *, loss_rate: float | None = None) -> None:
        """Change a delayed link's one-way delay (and optionally its random loss) while the testbed runs.

        The link's delay element is stopped and started again with the new
        values; addresses, routes, qdiscs and running sockets are untouched
        (frames in flight inside the old element are dropped, so change delays
        between transfers). ``self.topology`` is updated to match; the old
        element's counters are appended to ``replaced_delay_stats``.

        Parameters
        ----------
        link : str
            Name of a link that was built with a delay element (``delay_s > 0``
            or ``loss_rate > 0`` in the topology).
        delay_s : float
            New one-way delay, in (0, 10]. The round-trip time over this link
            grows by ``2 * delay_s``. [s]
        loss_rate : float, optional
            New per-frame random loss probability in [0, 1); ``None`` keeps it. [-]

        Raises
        ------
        ValueError
            For an unknown link, a link without a delay element, or values out of range.
        TestbedError
            When the testbed is not up or the new element does not start.
        """
        names = [lk.name for lk in self.topology.links]
        if link not in names:
            raise ValueError(f"no link {link!r} in topology {self.topology.name}; links: {', '.join(names)}")
        old_link = self.topology.link(link)
        if not old_link.delayed:
            raise ValueError(
                f"link {link!r} has no delay element (it was built with delay_s = 0 and loss_rate = 0); "
                "give it a delay in the topology to change it later"
            )
        if not 0.0 < float(delay_s) <= 10.0:
            raise ValueError(f"delay_s [s] must be in (0, 10]; got {delay_s}")
        if not self._up or link not in self._delay_procs:
            raise TestbedError(f"testbed {self.run_id} is not up: enter it (with Testbed(...) as tb) before set_link_delay")
        new_link = dataclasses.replace(
            old_link, delay_s=float(delay_s), loss_rate=old_link.loss_rate if loss_rate is None else float(loss_rate)
        )
        index = names.index(link)
        out = _terminate(self._delay_procs.pop(link), sig=signal.SIGTERM)
        try:
            stats = json.loads(out.strip().splitlines()[-1])
        except (ValueError, IndexError):
            stats = None
        self.replaced_delay_stats.append({"link": link, "delay_s": old_link.delay_s, "loss_rate": old_link.loss_rate,
                                          "stats": stats})
        self.topology = dataclasses.replace(
            self.topology, links=tuple(new_link if lk.name == link else lk for lk in self.topology.links)
        )
        self._start_delay(new_link, self.seed + index)

    # ------------------------------------------------------------- execution
    def _cmd(self, node: str, argv: list[str]) -> list[str]:
        if node not in {n.name for n in self.topology.nodes} | {DELAY_NODE}:
            raise ValueError(f"no node {node!r} in topology {self.topology.name}")
        return ["ip", "netns", "exec", self.ns(node)] + [str(a) for a in argv]

    @_PARAMETERS.fill
    def exec(self, node: str, argv: list[str], *, check: bool = True,
             timeout: float = 60.0) -> subprocess.CompletedProcess:
        """Run a command in ``node`` and wait for it (``subprocess.CompletedProcess``, text output).

        Parameters
        ----------
        node : str
            Node name (or the delay namespace's).
        {argv}
        check : bool
            Raise if the command exits non-zero.
        timeout : float
            Longest run time. [s]

        Returns
        -------
        subprocess.CompletedProcess
            With ``stdout`` and ``stderr`` as text.

        Raises
        ------
        ValueError
            If ``node`` is not in the topology.
        TestbedError
            If the command is not found, times out, or (with ``check``) fails.
        """
        return run(self._cmd(node, argv), check=check, timeout=timeout)

    @_PARAMETERS.fill
    def popen(self, node: str, argv: list[str], *, label: str = "", **kwargs: Any) -> subprocess.Popen:
        """Start a command in ``node``; it is terminated at teardown if still running.

        Parameters
        ----------
        node : str
            Node name (or the delay namespace's).
        {argv}
        label : str
            Name of the process in teardown messages; ``argv[0]`` if empty.
        **kwargs : Any
            Passed to :class:`subprocess.Popen` (``start_new_session`` defaults to True).

        Returns
        -------
        subprocess.Popen
            The started process.

        Raises
        ------
        ValueError
            If ``node`` is not in the topology.
        """
        kwargs.setdefault("start_new_session", True)
        popen = subprocess.Popen(self._cmd(node, argv), **kwargs)
        self._procs.append(_Proc(node=node, popen=popen, label=label or argv[0]))
        return popen

    # -------------------------------------------------------------- counters
    def counters(self) -> dict:
        """Interface byte/packet/drop counters and qdisc drops, keyed ``"node:link"``.

        One ``ip`` and one ``tc`` call per namespace.

        Returns
        -------
        dict
            ``"node:link"`` -> ``rx_bytes``, ``tx_bytes`` [bytes], ``rx_packets``,
            ``tx_packets``, ``rx_dropped``, ``tx_dropped`` [packets] (``None`` where ``ip``
            gave none), ``qdisc_drops`` and ``qdisc_overlimits`` [packets], both the **root**
            qdisc's counters (plus an ingress qdisc's drops, if one is attached), and
            ``qdisc_bytes`` [bytes], what the root qdisc sent (0 without one).

        Notes
        -----
        Every packet dropped by the egress qdiscs of an interface is counted once in
        ``qdisc_drops``: a classful root (``tbf``, ``htb``) adds the drops of the leaf it
        enqueues into to its own count (the kernel's ``tbf_enqueue`` / ``htb_enqueue`` count a
        drop reported by the child, ``net_xmit_drop_count``), besides the packets it drops
        itself, so the root's counter is the hierarchy's. Summing the counters of all qdiscs of
        the interface, as this method did until 2026-11-25, counts each drop of the drop-tail
        leaf twice (once on the leaf, once on the ``tbf`` or ``htb`` above it);
        ``tests/testbed/test_counters.py`` checks both facts on an overflowed link.

        ``tx_bytes`` counts a GSO packet (one TCP send of many segments, which a veth passes on
        whole) with one set of headers, so on a link with offloads it falls short of the bytes a
        wire would carry: 4 % for full-sized segments behind an ``htb`` (1448 bytes of payload in
        1514). ``qdisc_bytes`` counts what the rate limiter charged, every segment with its headers
        (the kernel's ``qdisc_pkt_len``); a ``tbf`` splits GSO packets larger than its burst, so
        there both agree.

        Raises
        ------
        TestbedError
            If ``ip`` or ``tc`` fails.
        """
        out: dict = {}
        for node in self.topology.nodes:
            ns = self.ns(node.name)
            names = {lk.name for lk in self.topology.links if node.name in (lk.a, lk.b)}
            if not names:
                continue
            links = json.loads(run(["ip", "-n", ns, "-s", "-j", "link", "show"]).stdout or "[]")
            qdiscs = json.loads(run(["tc", "-n", ns, "-s", "-j", "qdisc", "show"]).stdout or "[]")
            for link in links:
                name = link.get("ifname")
                if name not in names:
                    continue
                stats = link.get("stats64", {})
                qd = [q for q in qdiscs if q.get("dev") == name]
                out[f"{node.name}:{name}"] = {
                    "rx_bytes": stats.get("rx", {}).get("bytes"),
                    "rx_packets": stats.get("rx", {}).get("packets"),
                    "rx_dropped": stats.get("rx", {}).get("dropped"),
                    "tx_bytes": stats.get("tx", {}).get("bytes"),
                    "tx_packets": stats.get("tx", {}).get("packets"),
                    "tx_dropped": stats.get("tx", {}).get("dropped"),
                    # the root's count includes its children's; ingress qdiscs sit outside that tree
                    "qdisc_drops": sum(q.get("drops", 0) for q in qd
                                       if q.get("root") or q.get("kind") in ("ingress", "clsact")),
                    "qdisc_overlimits": sum(q.get("overlimits", 0) for q in qd if q.get("root")),
                    "qdisc_bytes": sum(q.get("bytes", 0) for q in qd if q.get("root")),
                }
        return out

    def delay_counters(self, timeout_s: float = 5.0) -> dict:
        """The running delay elements' counters so far, without stopping them.

        Each element is sent ``SIGUSR1`` and answers with the JSON line it prints when it
        stops (``delay_element.c``). Take it before and after a transfer and subtract
        (:func:`delay_counter_delta`) to get what the elements did during it.

        Parameters
        ----------
        timeout_s : float
            How long to wait for each element's answer. [s]

        Returns
        -------
        dict
            Link name -> ``{"delay_us", "loss", "wake_lead_us", "a_to_b": {...}, "b_to_a": {...}}``;
            each direction holds ``received``, ``forwarded``, ``dropped_loss``,
            ``dropped_queue_full``, ``dropped_oversize``, ``send_errors`` and ``dropped_socket``
            (frames the kernel dropped because the element's receive buffer was full), all
            counted since the element started. [frames] Empty when the topology has no delayed link.

        Raises
        ------
        TestbedError
            If an element has exited or does not answer within ``timeout_s``.
        """
        import select

        out = {}
        for name, popen in self._delay_procs.items():
            if popen.poll() is not None:
                raise TestbedError(f"delay element of link {name} has exited (code {popen.returncode})")
            os.kill(popen.pid, signal.SIGUSR1)
            ready, _, _ = select.select([popen.stdout], [], [], timeout_s)
            line = popen.stdout.readline() if ready else ""
            try:
                out[name] = json.loads(line)
            except ValueError:
                raise TestbedError(f"delay element of link {name} gave no counters within {timeout_s} s "
                                   f"after SIGUSR1 (got {line.strip()!r})") from None
        return out

    @_PARAMETERS.fill
    def tcp_ext_counters(self, node: str) -> dict:
        """The ``TcpExt`` counters of ``node``'s network namespace (``/proc/net/netstat`` read inside it).

        Parameters
        ----------
        {node}

        Returns
        -------
        dict
            Counter name -> value since the namespace was made, e.g. ``TCPLossProbes``,
            ``TCPSpuriousRTOs``, ``TCPDSACKRecv``, ``TCPBacklogDrop`` (see :func:`parse_proc_netstat`).

        Raises
        ------
        ValueError
            If ``node`` is not in the topology.
        TestbedError
            If reading the file fails.
        """
        text = run(self._cmd(node, ["cat", "/proc/net/netstat"])).stdout
        return parse_proc_netstat(text).get("TcpExt", {})


def cpuset_mask_hex(cpus: Iterable[int]) -> str:
    """The kernel's hex CPU-mask notation for a set of CPUs (as in ``rps_cpus``).

    Groups of 32 CPUs are 8 hex digits, separated by commas, most significant first.

    Parameters
    ----------
    cpus : iterable of int
        CPU numbers, at least one, none negative.

    Returns
    -------
    str
        e.g. ``"1"`` for CPU 0, ``"2"`` for CPU 1, ``"3"`` for both, ``"1,00000000"`` for CPU 32.

    Raises
    ------
    ValueError
        If ``cpus`` is empty or holds a negative number.
    """
    cpus = [int(c) for c in cpus]
    if not cpus or min(cpus) < 0:
        raise ValueError(f"cpus must hold at least one CPU number, none negative; got {cpus}")
    digits = f"{sum(1 << c for c in set(cpus)):x}"
    groups = []
    while digits:
        groups.insert(0, digits[-8:])
        digits = digits[:-8]
    return ",".join([groups[0]] + [g.rjust(8, "0") for g in groups[1:]])


def cpumask_hex(n_cpus: int) -> str:
    """The kernel's hex CPU-mask notation for CPUs ``0 .. n_cpus - 1`` (as in ``rps_cpus``).

    Groups of 32 CPUs are 8 hex digits, separated by commas, most significant first.

    Parameters
    ----------
    n_cpus : int
        How many CPUs, at least 1.

    Returns
    -------
    str
        e.g. ``"3"`` for 2 CPUs, ``"ffffffff"`` for 32, ``"1,ffffffff"`` for 33.

    Raises
    ------
    ValueError
        If ``n_cpus`` is below 1.
    """
    if n_cpus < 1:
        raise ValueError(f"n_cpus must be at least 1; got {n_cpus}")
    return cpuset_mask_hex(range(n_cpus))


def parse_proc_netstat(text: str) -> dict:
    """Parse ``/proc/net/netstat`` (or ``/proc/net/snmp``): pairs of lines, names then values.

    Parameters
    ----------
    text : str
        The file's content: for each group a line ``"Group: Name1 Name2 ..."`` followed by
        ``"Group: v1 v2 ..."``.

    Returns
    -------
    dict
        Group (e.g. ``"TcpExt"``, ``"IpExt"``) -> counter name -> int.

    Raises
    ------
    ValueError
        If a group's two lines do not pair up (different group or number of fields, or a
        value that is not an integer).
    """
    lines = [ln.split() for ln in text.splitlines() if ln.strip()]
    if len(lines) % 2:
        raise ValueError(f"/proc/net/netstat: expected pairs of lines (names, values); got {len(lines)} lines")
    out = {}
    for names, values in zip(lines[::2], lines[1::2]):
        if names[0] != values[0] or len(names) != len(values) or not names[0].endswith(":"):
            raise ValueError(f"/proc/net/netstat: the line after {names[0]!r} names ({len(names) - 1}) "
                             f"is {values[0]!r} with {len(values) - 1} values")
        try:
            out[names[0][:-1]] = {n: int(v) for n, v in zip(names[1:], values[1:])}
        except ValueError:
            raise ValueError(f"/proc/net/netstat: group {names[0]!r} has a value that is not an integer") from None
    return out


def tcp_ext_delta(before: dict, after: dict) -> dict:
    """The ``TcpExt`` counters that changed between two readings of one namespace.

    Parameters
    ----------
    before, after : dict
        :meth:`Testbed.tcp_ext_counters` of one node, before and after the
        transfers (counter name -> value).

    Returns
    -------
    dict
        Counter name -> ``after - before``, only the nonzero ones (a sample's record keeps what
        happened, not the ~120 counters that did not move).
    """
    return {k: int(v) - int(before.get(k, 0)) for k, v in after.items() if int(v) != int(before.get(k, 0))}


def delay_counter_delta(before: dict, after: dict) -> dict:
    """What each delay element counted between two :meth:`Testbed.delay_counters` readings.

    Parameters
    ----------
    before, after : dict
        Two readings of :meth:`Testbed.delay_counters`, ``after`` the later. [frames]

    Returns
    -------
    dict
        Link -> ``{"a_to_b": {...}, "b_to_a": {...}}``, each counter of ``after`` minus the same
        in ``before``, for the links present in both. [frames]

    Raises
    ------
    ValueError
        If a counter went down: the element was restarted between the readings (e.g. by
        :meth:`Testbed.set_link_delay`), so the difference means nothing.
    """
    out = {}
    for link in after.keys() & before.keys():
        out[link] = {}
        for d in ("a_to_b", "b_to_a"):
            a, b = after[link].get(d, {}), before[link].get(d, {})
            diff = {k: int(a[k]) - int(b.get(k, 0)) for k in a}
            if any(v < 0 for v in diff.values()):
                raise ValueError(f"delay element of link {link} ({d}) counted less after than before: {diff}; "
                                 "it was restarted between the readings")
            out[link][d] = diff
    return out


def _qdisc_cmds(lk: Link) -> list[str]:
    dev = lk.name
    if lk.buffer_bytes is not None:
        leaf = f"bfifo limit {lk.buffer_bytes}"
    else:
        leaf = f"pfifo limit {lk.buffer_packets if lk.buffer_packets is not None else 1000}"
    if lk.rate_bps is None:
        return [f"qdisc add dev {dev} root handle 1: {leaf}"]
    rate = int(round(lk.rate_bps))
    burst = lk.burst_bytes or max(3028, int(lk.rate_bps / 8 * 1e-3))
    if lk.qdisc == "tbf":
        # tbf's own limit is replaced by the drop-tail leaf below
        return [
            f"qdisc add dev {dev} root handle 1: tbf rate {rate}bit burst {burst} limit {max(burst, 3028)}",
            f"qdisc replace dev {dev} parent 1:1 handle 10: {leaf}",
        ]
    return [
        f"qdisc add dev {dev} root handle 1: htb default 1",
        f"class add dev {dev} parent 1: classid 1:1 htb rate {rate}bit ceil {rate}bit burst {burst} cburst {burst}",
        f"qdisc add dev {dev} parent 1:1 handle 10: {leaf}",
    ]


def _terminate(popen: subprocess.Popen, sig: int = signal.SIGTERM, timeout_s: float = 3.0) -> str:
    """Stop a child (signal, wait, then SIGKILL); return its remaining stdout if piped."""
    if popen.poll() is None:
        try:
            os.kill(popen.pid, sig)
        except ProcessLookupError:
            pass
    try:
        out, _ = popen.communicate(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        popen.kill()
        out, _ = popen.communicate()
    except ValueError:  # streams already closed
        popen.wait()
        out = None
    if isinstance(out, bytes):
        out = out.decode(errors="replace")
    return out or ""


@dataclass
class CleanupReport:
    """What :func:`cleanup` removed and what it left alone (runs still in progress)."""

    removed_namespaces: list[str] = field(default_factory=list)
    removed_state_files: list[str] = field(default_factory=list)
    skipped_live_runs: list[str] = field(default_factory=list)

    def to_dict(self) -> dict:
        """The report as a plain dict.

        Returns
        -------
        dict
            ``removed_namespaces``, ``removed_state_files`` and ``skipped_live_runs``
            (the run ids of live runs left alone), each a list of str.
        """
        return {
            "removed_namespaces": self.removed_namespaces,
            "removed_state_files": self.removed_state_files,
            "skipped_live_runs": self.skipped_live_runs,
        }


def _live_run_ids() -> set[str]:
    live = set()
    if not STATE_DIR.is_dir():
        return live
    for path in STATE_DIR.glob("*.json"):
        try:
            state = json.loads(path.read_text())
        except (OSError, ValueError):
            continue
        pid, ticks = state.get("pid"), state.get("pid_start_ticks")
        if pid and _proc_start_ticks(pid) == ticks and not _is_zombie(pid):
            live.add(state.get("run_id"))
    return live


def cleanup(*, include_live: bool = False) -> CleanupReport:
    """Remove what killed runs left behind: their processes, namespaces and state files.

    Only namespaces matching ``tm<6 hex digits>-<node>`` are considered; runs
    whose owner process is still alive are skipped unless ``include_live``.
    Running it twice is harmless (the second run finds nothing).

    Parameters
    ----------
    include_live : bool
        Also remove the namespaces and state files of runs whose owner process is alive.

    Returns
    -------
    CleanupReport
        The namespaces and state files removed and the live runs skipped.

    Raises
    ------
    PrivilegeError
        Without root, before touching anything.
    """
    require_privileges()
    report = CleanupReport()
    live = set() if include_live else _live_run_ids()
    listing = run(["ip", "netns", "list"]).stdout.split("\n")
    for line in listing:
        name = line.split(" ")[0].strip()
        m = NAMESPACE_RE.match(name)
        if not m:
            continue
        if m.group(1) in live:
            if m.group(1) not in report.skipped_live_runs:
                report.skipped_live_runs.append(m.group(1))
            continue
        _delete_ns(name)
        report.removed_namespaces.append(name)
    if STATE_DIR.is_dir():
        for path in STATE_DIR.glob("*.json"):
            if path.stem not in live and re.fullmatch(r"[0-9a-f]{6}", path.stem):
                path.unlink(missing_ok=True)
                report.removed_state_files.append(path.name)
    return report
