"""The scaled setting of the P3 campaign, shared by its three engines."""

from __future__ import annotations

from dataclasses import dataclass, replace

from tcpmodels.datasets import REPO_ROOT
from tcpmodels.datasets.p3 import LEGACY_NS3_RATE_BPS
from tcpmodels.datasets.p3 import SCHEMA as DATASET_SCHEMA
from tcpmodels.experiments.campaign_config import CampaignConfig
from tcpmodels.experiments.campaign_testbed import testbed_label
from tcpmodels.models.cubic import x_power_law_params

__all__ = ["kernel_campaign_label", "P3Config", "DEFAULT_CONFIG", "NS3_PHASES", "NS3_KINDS", "SCHEMA", "REPO", "LEGACY_NS3_RATE_BPS",
           "NS3_SETTINGS", "NS3_LONG_MEASURE_S", "NS3_LONG_SEEDS", "ns3_setting", "ns3_phases", "ns3_setting_phases"]


REPO = REPO_ROOT
MB = 1024 * 1024
#: the schema version of the records and dataset (:data:`tcpmodels.datasets.p3.SCHEMA`)
SCHEMA = DATASET_SCHEMA.version
#: ns-3 phases in run order: the main grid for seed 0, the x(RTT)-exponent grid, more seeds
NS3_PHASES = ("main0", "slider0", "main1", "slider1", "main2")
#: CUBIC variants of the ns-3 grid: standard ns-3 TcpCubic, and TcpCubicX in each reading of eq. (4)
NS3_KINDS = ("standard", "multiply", "divide")
#: named ns-3 settings (:func:`ns3_setting`): ``short`` the grid shipped on 2026-11-24 (20 s simulated, 15 s
#: measured, seeds 0-2, with the x(RTT)-exponent phases), ``long`` the grid to the kernel's standard (issue 17:
#: :data:`NS3_LONG_MEASURE_S` measured, seeds :data:`NS3_LONG_SEEDS`, the main phases only)
NS3_SETTINGS = ("short", "long")
#: measured span of the ``long`` ns-3 setting: ``P3Config.scaling()["ns3"]["measure_s_for_10_epochs"]``, 10 x the
#: longest K of a flow alone at ns-3's 100 Mbit/s (CUBIC 64 ms in the ``multiply`` reading: W_max alone
#: 690.6 segments, K 10.90 s; standard 8.03 s, ``divide`` 5.92 s; CUBIC 1 ms ``multiply`` 10.32 s) rounded up to
#: 5 s. With the 5 s warm-up a run simulates 115 s. Pilot (2026-11-27, ``p3 ns3-pilot --setting long --pairs 16:64
#: 4:64 --kind multiply``, nice 15, load 1.8-3.4; ``data/datasets/p3_ns3_pilot.json``): the CUBIC 64 ms flow
#: sharing the link has a smaller window than alone (median W_max 137 and 77 segments), so its epochs are
#: shorter than K alone: 17 whole epochs in the 110 s at 16:64 (median 5.1 s, longest 15.7 s; observed K
#: median 4.9 s, model K at the observed W_max 6.4 s) and 31 at 4:64 (median 3.2 s): at least 10, so the
#: rule's span stands. [s]
NS3_LONG_MEASURE_S = 110.0
#: seeds of the ``long`` ns-3 setting: 10, as the kernel's repetitions (``P3Config.reps``)
NS3_LONG_SEEDS = tuple(range(10))


@dataclass(frozen=True, kw_only=True)
class P3Config(CampaignConfig):
    """Scaled setting of the P3 campaign (all engines).

    The rate is the fastest the testbed carried without CPU-induced loss in the bottleneck
    pilot (:mod:`tcpmodels.experiments.p3.pilot`, ``python -m tcpmodels.experiments.p3 pilot
    --rates-mbps 100 200 400 --measure-s 60``; one Reno 1 ms / CUBIC 64 ms sample of 60 s per
    rate; results in ``data/datasets/p3_bottleneck_pilot.json``, rerun from clean ``72da9a2`` on
    2026-11-28 beside an ns-3 job at nice 19, load average 1.4-2.1): at 100, 200 and 400 Mbit/s the
    delay elements dropped nothing (ring full, socket buffer, send errors: 0 of 0.80, 1.48 and 2.71
    million frames forwarded), no interface and no qdisc other than the bottleneck's dropped a
    packet, the two flows filled the link (goodput 0.953, 0.956 and 0.934 of the rate; 0.956 is the
    payload share of a 1514-byte frame), and the senders' retransmissions (360, 605, 2088) follow
    the bottleneck queue's drops (324, 574, 2078 packets) — the losses were the queue's. (The first
    pilot, of 2026-11-24 from a tree whose commit it did not record, found the same: 0 CPU-induced
    drops at every rate, retransmissions 348, 476, 876 against queue drops 348, 475, 872; its JSON
    counted each queue drop twice. The same pilot on the steered testbed, ``--keep-flow-order``, from
    clean ``a8ed1d0`` on 2026-11-28, at 1:64 and 4:4 ms up to 600 Mbit/s, in
    ``data/datasets/p3_bottleneck_pilot_steered_*.json``: no CPU-induced drop up to 400 Mbit/s, every
    retransmission a queue drop, no reordering event; at 600 Mbit/s 108 406 and 77 793 drops outside the
    queue.) So 400 Mbit/s
    (the first campaign: 100 Mbit/s). ``measure_s`` is :meth:`scaling`'s
    ``measure_s_for_10_epochs`` at this rate: 10 x the longest K of a flow alone
    (CUBIC 64 ms, reading multiply: 17.3 s), rounded up to 175 s.

    Parameters
    ----------
    rate_bps : float
        Bottleneck rate of the kernel campaign, and the fluid model's for comparisons with it
        (paper: about 1 Gbit/s; first campaign 100 Mbit/s). [bit/s]
    ns3_rate_bps : float
        Bottleneck rate of the ns-3 grid (default 100 Mbit/s: the rate the shipped ns-3 grid ran
        at; at 400 Mbit/s the grid to the kernel's standard is estimated at ~72 h of one core,
        ``docs/CAMPAIGNS.md`` P3). Its buffer follows it (:attr:`ns3_buffer_bytes`). The tables
        state each engine's rate and compare each engine with the fluid model at its own rate
        (:func:`tcpmodels.papers.p3_cubic_fairness.engine_table`). [bit/s]
    buffer_bdp_fraction : float
        Drop-tail buffer as a fraction of the BDP at ``buffer_ref_rtt_s``. [-]
    buffer_ref_rtt_s : float
        RTT whose BDP sizes the buffer. [s]
    reno_rtts_ms, cubic_rtts_ms : tuple of float
        The grid (paper: {1, 4, 16} x {1, 4, 16, 64}). [ms]
    rwnd_bytes : int
        Receive-buffer maximum (paper: receive window 10 MB). [bytes]
    mss_bytes : int
        Segment size (1448: Ethernet MTU with timestamps). [bytes]
    warmup_s, measure_s : float
        Kernel: time after the later start that is discarded, and the measured span. [s]
    reps : int
        Kernel repetitions of every pair.
    kernel_kinds : tuple of str
        CUBIC variants of the kernel grid (subset of :data:`NS3_KINDS`): ``standard`` is the kernel's
        own ``cubic``; ``multiply`` / ``divide`` are the BPF ``tm_cubic_x`` loaded with that
        ``reading`` of eq. (4) and ``x_exponent`` (:mod:`tcpmodels.testbed.kernel_cc`).
    sample_interval_s : float
        Kernel TCP_INFO sampling interval. [s]
    start_jitter_s : float
        Each flow starts at a uniform random offset in [0, start_jitter_s]. [s]
    window_s : float
        Length of the sub-windows whose throughputs give the within-run spread. [s]
    ns3_duration_s, ns3_warmup_s : float
        ns-3 simulated time and the discarded start. [s]
    ns3_seeds : tuple of int
        Seeds of phases ``main0``, ``main1``, ``main2`` (one each).
    x_exponent : float
        Default exponent of x(RTT) (:func:`x_power_law_params`). [-]
    slider_exponents : tuple of float
        Further exponents simulated (seed ``ns3_seeds[0]``) for the notebook's slider. [-]
    seed : int
        Shuffles the kernel sample order and draws the kernel start offsets.
    ns3_jitter_packets : float
        ns-3 only: each access link adds a uniform, order-preserving extra delay
        of up to this many 1500-byte packet times at ``rate_bps``
        (:mod:`tcpmodels.sim.jitter`). Exact delays phase-lock a drop-tail
        dumbbell (see :mod:`tcpmodels.experiments.sim_vs_kernel`, where one
        packet time brought ns-3 within 0.08 of the kernel's shares); 0 gives
        the exact-delay simulator of the first campaign. [-]
    kernel_keep_flow_order : bool
        The kernel testbed's ``keep_flow_order`` (:class:`tcpmodels.testbed.Testbed`: RPS steering,
        so that the testbed does not reorder a flow's packets). False, the testbed as it was until
        2026-11-28, for the campaign begun on it: its repetitions 0-3 ran with reordering (about
        0.2 % of segments, and spurious retransmissions at low RTTs), and mixing the two in one
        table would mix two networks. True: the steered rerun (``p3 kernel --keep-flow-order``), whose
        samples are labelled ``p3_kernel_steered`` (:func:`kernel_campaign_label`)
        and tabled with ``testbed = "steered"`` beside the unsteered ones (CAMPAIGNS.md).
    kernel_pin_delay_elements : bool
        With ``kernel_keep_flow_order``: the testbed's ``pin_delay_elements`` (each delay element on
        one CPU, its frames processed there), which removed the steered testbed's CPU-induced loss at
        400 Mbit/s. Its samples are labelled ``p3_kernel_pinned`` and tabled with ``testbed = "pinned"``.
    """

    rate_bps: float = 400e6
    ns3_rate_bps: float = 100e6
    buffer_bdp_fraction: float = 1.0
    buffer_ref_rtt_s: float = 0.016
    reno_rtts_ms: tuple = (1.0, 4.0, 16.0)
    cubic_rtts_ms: tuple = (1.0, 4.0, 16.0, 64.0)
    rwnd_bytes: int = 10 * MB
    mss_bytes: int = 1448
    warmup_s: float = 5.0
    measure_s: float = 175.0
    reps: int = 10
    kernel_kinds: tuple = ("standard", "multiply", "divide")
    sample_interval_s: float = 0.1
    start_jitter_s: float = 0.5
    window_s: float = 5.0
    ns3_duration_s: float = 20.0
    ns3_warmup_s: float = 5.0
    ns3_seeds: tuple = (0, 1, 2)
    x_exponent: float = -1.0 / 3.0
    slider_exponents: tuple = (-2.0 / 3.0, -1.0 / 6.0)
    seed: int = 3
    ns3_jitter_packets: float = 1.0
    kernel_keep_flow_order: bool = False
    kernel_pin_delay_elements: bool = False

    def __post_init__(self):
        if self.kernel_pin_delay_elements and not self.kernel_keep_flow_order:
            raise ValueError("kernel_pin_delay_elements needs kernel_keep_flow_order=True; got False")
        for name in ("rate_bps", "ns3_rate_bps"):
            if not 1e6 <= getattr(self, name) <= 2e9:
                raise ValueError(f"{name} [bit/s] must be in [1e6, 2e9]; got {getattr(self, name)}")
        if not 0.05 <= self.buffer_bdp_fraction <= 20:
            raise ValueError(f"buffer_bdp_fraction [-] must be in [0.05, 20]; got {self.buffer_bdp_fraction}")
        if not 0 < self.buffer_ref_rtt_s <= 1:
            raise ValueError(f"buffer_ref_rtt_s [s] must be in (0, 1]; got {self.buffer_ref_rtt_s}")
        if not 0 <= self.ns3_jitter_packets <= 100:
            raise ValueError(f"ns3_jitter_packets [-] must be in [0, 100]; got {self.ns3_jitter_packets}")
        for name in ("reno_rtts_ms", "cubic_rtts_ms"):
            v = getattr(self, name)
            if not v or any(not 0.1 <= r <= 1000 for r in v):
                raise ValueError(f"{name} [ms] must be a non-empty list of values in [0.1, 1000]; got {v}")
        if (not self.kernel_kinds or len(set(self.kernel_kinds)) != len(self.kernel_kinds)
                or any(k not in NS3_KINDS for k in self.kernel_kinds)):
            raise ValueError(f"kernel_kinds must be distinct values of {NS3_KINDS}; got {self.kernel_kinds}")
        if not 1 <= self.reps <= 20:
            raise ValueError(f"reps [-] must be in [1, 20]; got {self.reps}")
        for name in ("warmup_s", "measure_s", "ns3_duration_s", "window_s", "sample_interval_s"):
            if not 0 < getattr(self, name) <= 3600:
                raise ValueError(f"{name} [s] must be in (0, 3600]; got {getattr(self, name)}")
        if not 0 <= self.ns3_warmup_s < self.ns3_duration_s:
            raise ValueError(f"ns3_warmup_s [s] must be in [0, ns3_duration_s={self.ns3_duration_s}); "
                             f"got {self.ns3_warmup_s}")
        if not 0 <= self.start_jitter_s <= 10:
            raise ValueError(f"start_jitter_s [s] must be in [0, 10]; got {self.start_jitter_s}")
        x_power_law_params(self.x_exponent)
        for k in self.slider_exponents:
            x_power_law_params(k)

    def buffer_bytes_at(self, rate_bps: float) -> int:
        """Bottleneck buffer at a rate: ``buffer_bdp_fraction`` x ``rate_bps`` x ``buffer_ref_rtt_s`` / 8.

        Parameters
        ----------
        rate_bps : float
            Bottleneck rate. [bit/s]

        Returns
        -------
        int
            The buffer. [bytes]
        """
        return int(round(self.buffer_bdp_fraction * rate_bps * self.buffer_ref_rtt_s / 8))

    @property
    def buffer_bytes(self) -> int:
        """Bottleneck buffer of the kernel campaign (at ``rate_bps``, :meth:`buffer_bytes_at`). [bytes]"""
        return self.buffer_bytes_at(self.rate_bps)

    @property
    def ns3_buffer_bytes(self) -> int:
        """Bottleneck buffer of the ns-3 grid (at ``ns3_rate_bps``, :meth:`buffer_bytes_at`). [bytes]"""
        return self.buffer_bytes_at(self.ns3_rate_bps)

    @property
    def engine_rates_bps(self) -> dict[str, float]:
        """Bottleneck rate per engine: ``{"kernel": rate_bps, "ns3": ns3_rate_bps}``. [bit/s]"""
        return {"kernel": float(self.rate_bps), "ns3": float(self.ns3_rate_bps)}

    @property
    def pairs_ms(self) -> list[tuple[float, float]]:
        """(Reno RTT, CUBIC RTT) pairs of the grid, Reno-major. [ms]"""
        return [(float(a), float(b)) for a in self.reno_rtts_ms for b in self.cubic_rtts_ms]

    def derived_fields(self) -> dict:
        """The derived buffers, which :meth:`to_dict` adds to the fields (as stored in the provenance).

        Returns
        -------
        dict
            ``buffer_bytes``, ``ns3_buffer_bytes`` [bytes].
        """
        return {"buffer_bytes": self.buffer_bytes, "ns3_buffer_bytes": self.ns3_buffer_bytes}

    def scaling(self) -> dict:
        """How this setting relates to the paper's: rates, BDPs, and K at the largest window.

        Returns
        -------
        dict
            Paper and scaled (kernel) rate [bit/s] and their ratio, ``ns3_rate_bps`` [bit/s] and
            ``ns3_buffer_bytes`` [bytes] of the ns-3 grid, the kernel's buffer [bytes, packets], the
            receive window, the factor K scales by at equal RTT (rate ratio^(1/3)) [-], and
            ``per_rtt``: for each RTT of the grid the BDP [bytes], the window of one flow
            filling link and buffer [segments] and its CUBIC K [s], ours and the paper's, and
            K of that window in each reading of eq. (4) (``k_multiply_alone_s``,
            ``k_divide_alone_s``, x(RTT) with ``x_exponent``); ``longest_k``: the longest of
            these K over the CUBIC RTTs and readings of ``kernel_kinds`` (RTT, reading, K [s]) and
            ``measure_s_for_10_epochs`` = 10 x that K rounded up to 5 s [s] (a CUBIC epoch lasts
            about K: the window is back at W_max after K and the next loss follows soon after;
            a flow sharing the link has a smaller window and a shorter K, so this is an upper bound).
        """
        import math

        from tcpmodels.models.cubic import cubic_k_s

        seg = self.mss_bytes
        rows = {}
        alone = self._k_alone(self.rate_bps, self.buffer_bytes)
        for rtt_ms in sorted(set(self.reno_rtts_ms) | set(self.cubic_rtts_ms)):
            bdp_paper = 1e9 * rtt_ms / 1e3 / 8
            w_paper = (bdp_paper + 1e9 / self.rate_bps * self.buffer_bytes) / seg
            a = alone[f"{rtt_ms:g}ms"]
            rows[f"{rtt_ms:g}ms"] = {
                "bdp_bytes": a["bdp_bytes"], "paper_bdp_bytes": bdp_paper,
                "w_max_alone_segments": a["w_max_alone_segments"], "paper_w_max_alone_segments": w_paper,
                "k_alone_s": a["k_alone_s"], "paper_k_alone_s": float(cubic_k_s(w_paper)),
                "k_multiply_alone_s": a["k_multiply_alone_s"], "k_divide_alone_s": a["k_divide_alone_s"],
            }
        k_long, rtt_long, kind_long = self._longest_k(rows, self.kernel_kinds)
        ns3_rows = self._k_alone(self.ns3_rate_bps, self.ns3_buffer_bytes)
        n_long, n_rtt, n_kind = self._longest_k(ns3_rows, NS3_KINDS)
        n_measure = float(5 * math.ceil(10 * n_long / 5))
        return {"paper_rate_bps": 1e9, "rate_bps": self.rate_bps, "rate_scale": self.rate_bps / 1e9,
                "ns3_rate_bps": self.ns3_rate_bps, "ns3_buffer_bytes": self.ns3_buffer_bytes,
                "note_rates": "per_rtt, longest_k and measure_s_for_10_epochs are at rate_bps (the kernel's); "
                              "the ns-3 grid runs at ns3_rate_bps (section ns3)",
                "buffer_bytes": self.buffer_bytes, "buffer_packets": self.buffer_bytes / (seg + 52),
                "buffer_definition": f"{self.buffer_bdp_fraction:g} x BDP at {self.buffer_ref_rtt_s * 1e3:g} ms "
                                     "(the paper states no buffer)",
                "paper_rwnd": "10 MB", "rwnd_bytes": self.rwnd_bytes,
                "k_scale_same_rtt": (self.rate_bps / 1e9) ** (1 / 3),
                "per_rtt": rows,
                "longest_k": {"cubic_rtt_ms": rtt_long, "kind": kind_long, "k_s": k_long},
                "measure_s_for_10_epochs": float(5 * math.ceil(10 * k_long / 5)),
                "ns3": {"rate_bps": self.ns3_rate_bps, "buffer_bytes": self.ns3_buffer_bytes, "per_rtt": ns3_rows,
                        "longest_k": {"cubic_rtt_ms": n_rtt, "kind": n_kind, "k_s": n_long},
                        "measure_s_for_10_epochs": n_measure,
                        "duration_s_for_10_epochs": self.ns3_warmup_s + n_measure,
                        "note": "the same rule at ns-3's rate, over every kind the ns-3 grid runs (NS3_KINDS): "
                                "the measured span of the long ns-3 setting (NS3_LONG_MEASURE_S)"},
                "note": "W_max alone = (BDP + buffer) / MSS, the window of a single flow filling link and buffer; "
                        "the paper column scales the buffer with the rate (same buffer in time)."}

    def _k_alone(self, rate_bps: float, buffer_bytes: int) -> dict:
        """Per RTT of the grid at one rate: BDP [bytes], W_max of a flow alone [segments], its K in each reading [s]."""
        from tcpmodels.models.cubic import PowerLawX, cubic_k_s, kozu_k_s, x_power_law_params

        xfn = PowerLawX(**x_power_law_params(self.x_exponent))
        rows = {}
        for rtt_ms in sorted(set(self.reno_rtts_ms) | set(self.cubic_rtts_ms)):
            bdp = rate_bps * rtt_ms / 1e3 / 8
            w = (bdp + buffer_bytes) / self.mss_bytes
            rows[f"{rtt_ms:g}ms"] = {
                "bdp_bytes": bdp, "w_max_alone_segments": w, "k_alone_s": float(cubic_k_s(w)),
                **{f"k_{rd}_alone_s": float(kozu_k_s(w, rtt_ms / 1e3, reading=rd, x_of_rtt=xfn))
                   for rd in ("multiply", "divide")}}
        return rows

    def _longest_k(self, rows: dict, kinds: tuple) -> tuple[float, float, str]:
        """The longest K of ``rows`` (:meth:`_k_alone`) over the CUBIC RTTs and ``kinds``: (K [s], RTT [ms], kind)."""
        readings = {"standard": "k_alone_s", "multiply": "k_multiply_alone_s", "divide": "k_divide_alone_s"}
        return max((rows[f"{r:g}ms"][readings[kd]], float(r), kd) for r in self.cubic_rtts_ms for kd in kinds)


DEFAULT_CONFIG = P3Config()


def ns3_setting(name: str, config: P3Config = DEFAULT_CONFIG) -> P3Config:
    """``config`` with the ns-3 duration and seeds of a named setting (:data:`NS3_SETTINGS`).

    ``short``: the grid shipped on 2026-11-24, 20 s simulated (5 s warm-up, 15 s measured: 2-3 CUBIC epochs of
    the longest K), seeds 0, 1, 2. ``long``: ``ns3_warmup_s`` + :data:`NS3_LONG_MEASURE_S` simulated (10 epochs
    of the longest K of a flow alone at ns-3's rate, ``scaling()["ns3"]``), seeds :data:`NS3_LONG_SEEDS`. The
    two settings differ in the simulated duration, so their scenarios, sweep-cache entries and run ids differ.

    Parameters
    ----------
    name : {"short", "long"}
        The setting.
    config : P3Config
        Every other field (rate, buffer, grid, exponents) comes from here.

    Returns
    -------
    P3Config
        ``config`` with ``ns3_duration_s`` and ``ns3_seeds`` of the setting.

    Raises
    ------
    ValueError
        For an unknown name.
    """
    if name == "short":
        return replace(config, ns3_duration_s=20.0, ns3_seeds=(0, 1, 2))
    if name == "long":
        return replace(config, ns3_duration_s=config.ns3_warmup_s + NS3_LONG_MEASURE_S, ns3_seeds=NS3_LONG_SEEDS)
    raise ValueError(f"ns-3 setting must be one of {NS3_SETTINGS}; got {name!r}")


def ns3_phases(config: P3Config, *, sliders: bool = True) -> tuple[str, ...]:
    """Phases of the ns-3 grid of ``config`` in run order: ``main<i>`` per seed, ``slider<j>`` after ``main<j>``.

    With the default config this is :data:`NS3_PHASES` (main0, slider0, main1, slider1, main2).

    Parameters
    ----------
    config : P3Config
        Its ``ns3_seeds`` and ``slider_exponents``.
    sliders : bool
        Include the x(RTT)-exponent phases.

    Returns
    -------
    tuple of str
        Phase names for :func:`tcpmodels.experiments.p3.ns3.ns3_plan`.
    """
    out = []
    for i in range(len(config.ns3_seeds)):
        out.append(f"main{i}")
        if sliders and i < len(config.slider_exponents):
            out.append(f"slider{i}")
    return tuple(out)


def ns3_setting_phases(name: str, config: P3Config = DEFAULT_CONFIG) -> tuple[str, ...]:
    """Default phases of a named setting: every phase for ``short``, the main phases (seed by seed) for ``long``.

    Parameters
    ----------
    name : {"short", "long"}
        The setting (:func:`ns3_setting`).
    config : P3Config
        The base config.

    Returns
    -------
    tuple of str
        :func:`ns3_phases` of the setting's config.
    """
    return ns3_phases(ns3_setting(name, config), sliders=name == "short")


def kernel_campaign_label(keep_flow_order: bool, pin_delay_elements: bool = False) -> str:
    """The ``campaign`` field of a kernel sample's plan entry and record (part of :data:`KERNEL_KEY`).

    Parameters
    ----------
    keep_flow_order, pin_delay_elements : bool
        The testbed (``P3Config.kernel_keep_flow_order``, ``P3Config.kernel_pin_delay_elements``).

    Returns
    -------
    str
        ``"p3_kernel_pinned"`` with pinned delay elements, ``"p3_kernel_steered"`` with steering alone,
        else ``"p3_kernel"`` (the label of every sample before either).
    """
    return testbed_label("p3_kernel", keep_flow_order, pin_delay_elements)
