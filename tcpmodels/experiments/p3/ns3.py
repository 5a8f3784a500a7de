"""P3 in ns-3: the plan of runs by priority, the scenario of one run, the cached sweep and its table."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from tcpmodels._docstrings import SharedEntries
from tcpmodels.experiments.p3.config import (
    DEFAULT_CONFIG,
    LEGACY_NS3_RATE_BPS,
    NS3_KINDS,
    NS3_PHASES,
    SCHEMA,
    P3Config,
    ns3_phases,
)
from tcpmodels.models.cubic import x_power_law_params
from tcpmodels.models.fairness import jain_index
from tcpmodels.sim.config import Dumbbell
from tcpmodels.sim.run import SimResult

__all__ = ["ns3_plan", "ns3_config", "run_ns3", "ns3_frame", "ns3_run_id", "ns3_row_run_id", "ns3_record",
           "ns3_summary", "ns3_records", "ns3_cached"]

#: Parameters documented once for the docstrings of this module that share them.
_PARAMETERS = SharedEntries("""
    cache_dir : str or Path
        Sweep cache of :func:`run_ns3`.
""")


# -------------------------------------------------------------------- ns-3
def ns3_plan(config: P3Config, phases: Sequence[str] | None = None) -> list[dict]:
    """The ns-3 runs of ``phases`` as dicts (``phase, kind, x_exponent, seed, reno_rtt_ms, cubic_rtt_ms,
    reno_start_s, cubic_start_s``), in phase order.

    ``main<i>``: the three :data:`NS3_KINDS` x every pair at seed ``ns3_seeds[i]``, default exponent.
    ``slider<i>``: ``multiply`` and ``divide`` x every pair at ``slider_exponents[i]``, seed ``ns3_seeds[0]``.
    Start offsets are drawn from the seed and the pair, so the kinds of one seed share them.

    Parameters
    ----------
    config : P3Config
        The grid, seeds, exponents and ``start_jitter_s``.
    phases : sequence of str, optional
        ``main<i>`` / ``slider<i>`` names (:data:`NS3_PHASES` for the default config); default every phase of
        ``config`` (:func:`~tcpmodels.experiments.p3.config.ns3_phases`).

    Returns
    -------
    list of dict
        One per run, Reno-RTT-major within a phase (then CUBIC RTT, then kind); RTTs
        [ms], start offsets [s], ``x_exponent`` (0 for ``standard``) [-].

    Raises
    ------
    ValueError
        For an unknown phase, or one whose seed or exponent index the config lacks.
    """
    import numpy as np

    plan = []
    for phase in ns3_phases(config) if phases is None else phases:
        if phase.startswith("main"):
            i = int(phase[4:])
            if i >= len(config.ns3_seeds):
                raise ValueError(f"phase {phase!r} needs ns3_seeds[{i}]; ns3_seeds = {config.ns3_seeds}")
            seed = int(config.ns3_seeds[i])
            combos = [(k, config.x_exponent) for k in NS3_KINDS]
        elif phase.startswith("slider"):
            i = int(phase[6:])
            if i >= len(config.slider_exponents):
                raise ValueError(f"phase {phase!r} needs slider_exponents[{i}]; got {config.slider_exponents}")
            seed = int(config.ns3_seeds[0])
            combos = [(k, float(config.slider_exponents[i])) for k in ("multiply", "divide")]
        else:
            raise ValueError(f"phases must be main<i> or slider<i> (e.g. {NS3_PHASES}); got {phase!r}")
        # Reno-RTT-major (then CUBIC RTT, then kind): a phase cut short still has whole rows of Figs. 3-5
        for j, (reno, cubic) in enumerate(config.pairs_ms):
            for kind, expo in combos:
                rng = np.random.default_rng([seed, j, 7])
                off = rng.uniform(0.0, config.start_jitter_s, 2)
                plan.append({"phase": phase, "kind": kind, "x_exponent": float(expo) if kind != "standard" else 0.0,
                             "seed": seed, "reno_rtt_ms": reno, "cubic_rtt_ms": cubic,
                             "reno_start_s": round(float(off[0]), 4), "cubic_start_s": round(float(off[1]), 4)})
    return plan


def ns3_config(config: P3Config, run: dict) -> Dumbbell:
    """The :class:`tcpmodels.sim.config.Dumbbell` of one planned ns-3 run (see :func:`ns3_plan`).

    Parameters
    ----------
    config : P3Config
        ``ns3_rate_bps`` and ``ns3_buffer_bytes`` (the bottleneck), MSS, socket buffers, duration and
        ``ns3_jitter_packets`` (packet times at ``ns3_rate_bps``).
    run : dict
        One entry of :func:`ns3_plan`.

    Returns
    -------
    tcpmodels.sim.config.Dumbbell
        A ``TcpLinuxReno`` sender and a CUBIC sender (``TcpCubic`` for ``standard``,
        ``TcpCubicX`` with the run's reading and x(RTT) power law otherwise), each on a
        10 Gbit/s access link of half its RTT one way, jittered by up to
        ``ns3_jitter_packets`` packet times; HyStart off.

    Raises
    ------
    ValueError
        If ``run["kind"]`` is not one of :data:`NS3_KINDS`.
    """
    from tcpmodels.sim.config import BulkApp, Link, Sender, TcpOptions

    jitter_s = config.ns3_jitter_packets * 1500 * 8 / config.ns3_rate_bps

    def access(rtt_ms):
        return Link(rate_bps=10e9, delay_s=rtt_ms * 1e-3 / 2, queue_packets=10000, jitter_s=jitter_s)

    if run["kind"] == "standard":
        cubic = Sender(access=access(run["cubic_rtt_ms"]), variant="TcpCubic",
                       apps=(BulkApp(start_s=run["cubic_start_s"]),))
    elif run["kind"] in ("multiply", "divide"):
        cubic = Sender(access=access(run["cubic_rtt_ms"]), variant="TcpCubicX",
                       apps=(BulkApp(start_s=run["cubic_start_s"]),),
                       cc_params={"reading": run["kind"], "x_power_law": x_power_law_params(run["x_exponent"])})
    else:
        raise ValueError(f"kind must be one of {NS3_KINDS}; got {run['kind']!r}")
    reno = Sender(access=access(run["reno_rtt_ms"]), variant="TcpLinuxReno",
                  apps=(BulkApp(start_s=run["reno_start_s"]),))
    return Dumbbell(senders=(reno, cubic), bottleneck=Link(rate_bps=config.ns3_rate_bps, delay_s=0.0,
                                                           queue_bytes=config.ns3_buffer_bytes),
                    duration_s=config.ns3_duration_s, seed=int(run["seed"]), queue_bin_s=1.0,
                    tcp=TcpOptions(mss_bytes=config.mss_bytes, sndbuf_bytes=4 * config.rwnd_bytes,
                                   rcvbuf_bytes=config.rwnd_bytes, cubic_hystart=False))


#: keys of the simulator's run record kept in a P3 ns-3 record (the rest is the scenario, stored as its hash)
_SIM_RECORD_KEYS = ("date_utc", "ns3_version", "tcpmodels_version", "host", "python", "run_wall_s", "ns3_load_wall_s",
                    "sim_s_per_wall_s", "packets_tx", "data_packets_tx", "ns3_rng", "config_hash")


def ns3_run_id(run: dict, config: P3Config) -> str:
    """Identity of one ns-3 run of the grid: setting (simulated time, rate), kind, exponent, RTT pair, seed.

    The run ids of the ``short`` and ``long`` settings (:func:`~tcpmodels.experiments.p3.config.ns3_setting`)
    differ in their ``d<duration>`` part, as their scenarios (and sweep-cache entries) differ in ``duration_s``.

    Parameters
    ----------
    run : dict
        An entry of :func:`ns3_plan` (or a row of the ns-3 table): ``kind``, ``x_exponent``, ``seed``,
        ``reno_rtt_ms``, ``cubic_rtt_ms``.
    config : P3Config
        Its ``ns3_duration_s`` [s] and ``ns3_rate_bps`` [bit/s].

    Returns
    -------
    str
        E.g. ``d115-b100-multiply-x-0.3333-r16-c64-s0``.
    """
    return _run_id(config.ns3_duration_s, config.ns3_rate_bps, run)


def _run_id(duration_s: float, rate_bps: float, run: Mapping[str, Any]) -> str:
    expo = 0.0 if run["kind"] == "standard" else float(run["x_exponent"])
    return (f"d{float(duration_s):g}-b{float(rate_bps) / 1e6:g}-{run['kind']}-x{expo:.4f}-r{float(run['reno_rtt_ms']):g}"
            f"-c{float(run['cubic_rtt_ms']):g}-s{int(run['seed'])}")


def ns3_row_run_id(row: Mapping[str, Any], legacy_rate_bps: float = LEGACY_NS3_RATE_BPS) -> str:
    """:func:`ns3_run_id` of a row of an ns-3 table (its ``duration_s`` and ``rate_bps``; tables shipped before
    the ``rate_bps`` column ran at ``legacy_rate_bps``).

    Parameters
    ----------
    row : mapping
        A row with ``duration_s`` [s], ``kind``, ``x_exponent``, ``seed``, ``reno_rtt_ms``, ``cubic_rtt_ms``
        and, if present, ``rate_bps`` [bit/s].
    legacy_rate_bps : float
        Rate of rows without ``rate_bps`` (or NaN there). [bit/s]

    Returns
    -------
    str
        The run id.
    """
    rate = row.get("rate_bps", math.nan)
    rate = legacy_rate_bps if rate is None or rate != rate else rate
    return _run_id(row["duration_s"], rate, row)


def ns3_record(config: P3Config, run: dict, result: SimResult) -> dict:
    """The raw record of one finished ns-3 run: its plan entry, setting, per-second bytes of each flow, losses.

    Enough to rebuild its row of the ns-3 table (:func:`ns3_summary`) without the sweep cache: the
    records are shipped (``data/datasets/p3_ns3_records.jsonl.gz``) so that a campaign resumes on a
    fresh machine and the dataset is rebuilt from them.

    Parameters
    ----------
    config : P3Config
        The setting the run was made with (duration, warm-up, window, rate, buffer).
    run : dict
        Its entry of :func:`ns3_plan`.
    result : tcpmodels.sim.run.SimResult
        The simulator's tables (``apps``, ``bins``, ``flows``, ``record``).

    Returns
    -------
    dict
        ``campaign`` (``p3_ns3``), ``schema``, ``run_id``, the plan entry, ``duration_s``, ``warmup_s``,
        ``window_s`` [s], ``rate_bps`` [bit/s], ``buffer_bytes`` [bytes], ``jitter_packets`` [-],
        ``scenario_hash`` (:func:`tcpmodels.sim.config.config_hash` of :func:`ns3_config`), ``bin_s`` [s],
        ``bin_t_end_s`` [s], ``rx_bytes`` (per flow, Reno then CUBIC: bytes received per bin) [bytes],
        ``lost_packets`` (data direction, per flow; None where FlowMonitor has none) and ``sim`` (the
        simulator's record without the scenario: versions, wall times [s], packets, date).
    """
    from tcpmodels.sim.config import config_hash

    apps = result.apps.sort_values("flow_index")
    idx = [int(i) for i in apps["flow_index"].to_list()[:2]]
    bins = result.bins
    t_end = sorted({float(t) for t in bins["t_end_s"]})
    rx = []
    for i in idx:
        b = bins[bins["flow_index"] == i].groupby("t_end_s")["rx_bytes"].sum()
        rx.append([int(v) for v in b.reindex(t_end, fill_value=0)])
    flows = result.flows
    lost = {}
    if "flow_index" in flows.columns and "lost_packets" in flows.columns:
        data = flows[flows["direction"] == "data"] if "direction" in flows.columns else flows
        lost = data.groupby("flow_index")["lost_packets"].sum().to_dict()
    rec = result.record
    return {"campaign": "p3_ns3", "schema": SCHEMA, "run_id": ns3_run_id(run, config), **run,
            "duration_s": float(config.ns3_duration_s), "warmup_s": float(config.ns3_warmup_s),
            "window_s": float(config.window_s), "rate_bps": float(config.ns3_rate_bps),
            "buffer_bytes": int(config.ns3_buffer_bytes), "jitter_packets": float(config.ns3_jitter_packets),
            "scenario_hash": config_hash(ns3_config(config, run)),
            "bin_s": float(rec.get("bin_s", 1.0)), "bin_t_end_s": t_end, "rx_bytes": rx,
            "lost_packets": [None if i not in lost else float(lost[i]) for i in idx],
            "sim": {k: rec[k] for k in _SIM_RECORD_KEYS if k in rec}}


def _throughput_bps(rec: dict, flow: int, start_s: float, end_s: float) -> float:
    """Bytes of bins ending in (start_s, end_s] x 8 over the window (at least one bin), as ``SimResult.throughput_bps``."""
    t = rec["bin_t_end_s"]
    total = sum(b for tt, b in zip(t, rec["rx_bytes"][flow]) if start_s + 1e-12 < tt <= end_s + 1e-12)
    return total * 8.0 / max(end_s - start_s, rec["bin_s"])


def ns3_summary(rec: dict) -> dict:
    """The row of the ns-3 table of one run, from its record (:func:`ns3_record`) alone.

    Throughputs over ``[warmup_s, duration_s]``, Jain's index, CUBIC's share, the spread over
    ``window_s`` windows, losses, wall time and the setting.

    Parameters
    ----------
    rec : dict
        A record of :func:`ns3_record`.

    Returns
    -------
    dict
        ``run_id``, the plan entry, ``reno_bps``, ``cubic_bps``, ``total_bps``, window standard deviations
        [bit/s], ``jain``, ``cubic_share``, ``jain_window_sd`` [-], ``n_windows``, ``reno_lost_packets``,
        ``cubic_lost_packets``, ``wall_s`` [s] (run + ns-3 load), ``date_utc``, ``ns3_version``,
        ``duration_s``, ``warmup_s`` [s], ``rate_bps`` [bit/s], ``buffer_bytes`` [bytes].
    """
    import numpy as np

    w0, w1 = rec["warmup_s"], rec["duration_s"]
    reno_bps, cubic_bps = _throughput_bps(rec, 0, w0, w1), _throughput_bps(rec, 1, w0, w1)
    edges = np.arange(w0, w1 + 1e-9, rec["window_s"])
    wins = [[_throughput_bps(rec, i, a, b) for a, b in zip(edges[:-1], edges[1:])] for i in (0, 1)]
    jw = jain_index(np.asarray(wins[0]), np.asarray(wins[1]))
    sim = rec.get("sim", {})
    lost = [math.nan if v is None else float(v) for v in rec.get("lost_packets", [None, None])]
    plan_keys = ("phase", "kind", "x_exponent", "seed", "reno_rtt_ms", "cubic_rtt_ms", "reno_start_s", "cubic_start_s")
    return {"run_id": rec["run_id"], **{k: rec[k] for k in plan_keys},
            "reno_bps": reno_bps, "cubic_bps": cubic_bps, "jain": jain_index(reno_bps, cubic_bps),
            "total_bps": reno_bps + cubic_bps,
            "cubic_share": cubic_bps / (reno_bps + cubic_bps) if reno_bps + cubic_bps > 0 else math.nan,
            "reno_window_sd_bps": float(np.std(wins[0], ddof=1)), "cubic_window_sd_bps": float(np.std(wins[1], ddof=1)),
            "jain_window_sd": float(np.std(jw, ddof=1)), "n_windows": len(wins[0]),
            "reno_lost_packets": lost[0], "cubic_lost_packets": lost[1],
            "wall_s": float(sim.get("run_wall_s", math.nan)) + float(sim.get("ns3_load_wall_s", 0.0)),
            "date_utc": sim.get("date_utc"),
            "ns3_version": sim.get("ns3_version"),
            "duration_s": rec["duration_s"], "warmup_s": rec["warmup_s"],
            "rate_bps": rec["rate_bps"], "buffer_bytes": rec["buffer_bytes"]}


def run_ns3(cache_dir: str | Path, config: P3Config = DEFAULT_CONFIG, *, phases: Sequence[str] | None = None,
            progress: bool = True,
            on_failure: str = "collect", plan: list[dict] | None = None, processes: bool = True,
            client: Any = None, n_workers: int = 1) -> pd.DataFrame:
    """Run (or resume from the cache) the ns-3 runs of ``phases``; return their summaries.

    Each phase is one :func:`tcpmodels.sweep.sweep` call on a local cluster of
    ``n_workers`` (default one: leave a core to whoever else shares the host),
    so a campaign cut short keeps every finished phase and every finished run
    of the current one.

    Parameters
    ----------
    cache_dir : str or Path
        Sweep cache (one entry per run).
    config : P3Config
        The campaign's setting.
    phases : sequence of str, optional
        Phases of :func:`ns3_plan` to run (default every phase of ``config``).
    progress : bool
        tqdm bar per phase on stderr.
    on_failure : {"collect", "raise"}
        As in :func:`tcpmodels.sweep.sweep`: ``collect`` leaves failed runs out.
    plan : list of dict, optional
        Runs instead of :func:`ns3_plan` (tests use a few).
    processes : bool
        Local workers as processes (else threads).
    client : distributed.Client, optional
        Use this Dask client instead of a local cluster.
    n_workers : int
        Workers of the local cluster.

    Returns
    -------
    pandas.DataFrame
        One row per finished run (:func:`ns3_frame`).

    Raises
    ------
    tcpmodels.sweep.SweepError
        With ``on_failure="raise"``, if a run failed.
    """
    from tcpmodels.sweep import run_sim, sweep

    plan = ns3_plan(config, phases) if plan is None else plan
    by_phase: dict[str, list[dict]] = {}
    for r in plan:
        by_phase.setdefault(r["phase"], []).append(r)
    for phase, runs in by_phase.items():
        sweep([ns3_config(config, r) for r in runs], run_sim, cache_dir=cache_dir, n_workers=n_workers, processes=processes,
              client=client, progress=progress, on_failure=on_failure, desc=f"p3 ns-3 {phase}")
    return ns3_frame(cache_dir, config, plan=plan)


def _cache_entries(cache_dir: str | Path) -> dict[str, tuple[float, str]]:
    """Finished sweep-cache entries by their scenario (canonical JSON of ``config.json``): (mtime, key), newest."""
    from tcpmodels.sweep import canonical_json

    entries: dict[str, tuple[float, str]] = {}
    for cfg_path in Path(cache_dir).glob("*/config.json"):
        key = cfg_path.parent.name
        if not (cfg_path.parent / "value").is_dir():
            continue
        try:
            text = canonical_json(json.loads(cfg_path.read_text()))
        except ValueError:
            continue
        mtime = cfg_path.stat().st_mtime
        if text not in entries or entries[text][0] < mtime:
            entries[text] = (mtime, key)
    return entries


def ns3_cached(cache_dir: str | Path, config: P3Config, plan: list[dict]) -> list[bool]:
    """Whether each run of ``plan`` has a finished entry in the sweep cache (matched as in :func:`ns3_records`).

    Parameters
    ----------
    cache_dir : str or Path
        Sweep cache of :func:`run_ns3` (need not exist).
    config : P3Config
        The setting of the plan.
    plan : list of dict
        Runs of :func:`ns3_plan`.

    Returns
    -------
    list of bool
        One per run, in plan order.
    """
    from tcpmodels.sweep import canonical_json

    entries = _cache_entries(cache_dir) if Path(cache_dir).is_dir() else {}
    return [canonical_json(ns3_config(config, r)) in entries for r in plan]


@_PARAMETERS.fill
def ns3_records(cache_dir: str | Path, config: P3Config = DEFAULT_CONFIG, *,
                plan: list[dict] | None = None) -> list[dict]:
    """Records (:func:`ns3_record`) of every run of ``plan`` (default: all phases) already in the sweep cache.

    Entries are matched on their stored ``config.json`` (the scenario), not on
    the cache key: the key also hashes the sources of ``tcpmodels.sim``, which
    other work edits while a campaign runs (additions that leave the dumbbell
    unchanged). Where several entries hold one scenario the newest is used;
    ``cache_key`` names the entry read.

    Parameters
    ----------
    {cache_dir}
    config : P3Config
        The campaign's setting (the scenarios to look up; warm-up, duration and window of the summaries).
    plan : list of dict, optional
        Runs to look up; default :func:`ns3_plan` of every phase of ``config``
        (:func:`~tcpmodels.experiments.p3.config.ns3_phases`).

    Returns
    -------
    list of dict
        One record per cached run, in plan order, with ``cache_key``.
    """
    from tcpmodels.sweep import canonical_json, read_cached

    plan = ns3_plan(config, ns3_phases(config)) if plan is None else plan
    cache = Path(cache_dir)
    entries = _cache_entries(cache)
    out = []
    for r in plan:
        hit_entry = entries.get(canonical_json(ns3_config(config, r)))
        if hit_entry is None:
            continue
        hit, value = read_cached(cache, hit_entry[1])
        if hit:
            out.append({**ns3_record(config, r, value), "cache_key": hit_entry[1]})
    return out


@_PARAMETERS.fill
def ns3_frame(cache_dir: str | Path, config: P3Config = DEFAULT_CONFIG, *,
              plan: list[dict] | None = None) -> pd.DataFrame:
    """Summaries of every run of ``plan`` (default: all phases) already in the sweep cache; others are skipped.

    The rows of :func:`ns3_records` (cache entries matched on their scenario) through :func:`ns3_summary`.

    Parameters
    ----------
    {cache_dir}
    config : P3Config
        The campaign's setting (warm-up, duration and window of the summaries).
    plan : list of dict, optional
        Runs to look up; default :func:`ns3_plan` of every phase of ``config``.

    Returns
    -------
    pandas.DataFrame
        One row per cached run: ``run_id``, the plan entry, ``reno_bps``, ``cubic_bps``,
        ``total_bps`` and window standard deviations [bit/s], ``jain``, ``cubic_share`` [-],
        lost packets, ``wall_s`` [s], ``date_utc``, ``ns3_version``, ``duration_s``, ``warmup_s`` [s],
        ``rate_bps`` [bit/s] and ``buffer_bytes`` [bytes] of the bottleneck (``config.ns3_rate_bps``) and
        ``cache_key``.
    """
    return pd.DataFrame([{**ns3_summary(r), "cache_key": r["cache_key"]}
                         for r in ns3_records(cache_dir, config, plan=plan)])
