"""P3 in ns-3: the plan of runs by priority, the scenario of one run, the cached sweep and its table."""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from tcpmodels.experiments.p3.config import DEFAULT_CONFIG, NS3_KINDS, NS3_PHASES, P3Config
from tcpmodels.models.cubic import x_power_law_params
from tcpmodels.models.fairness import jain_index
from tcpmodels.sim.config import Dumbbell

__all__ = ["ns3_plan", "ns3_config", "run_ns3", "ns3_frame"]


# -------------------------------------------------------------------- ns-3
def ns3_plan(config: P3Config, phases: Sequence[str] = NS3_PHASES) -> list[dict]:
    """The ns-3 runs of ``phases`` as dicts (``phase, kind, x_exponent, seed, reno_rtt_ms, cubic_rtt_ms,
    reno_start_s, cubic_start_s``), in phase order.

    ``main<i>``: the three :data:`NS3_KINDS` x every pair at seed ``ns3_seeds[i]``, default exponent.
    ``slider<i>``: ``multiply`` and ``divide`` x every pair at ``slider_exponents[i]``, seed ``ns3_seeds[0]``.
    Start offsets are drawn from the seed and the pair, so the kinds of one seed share them.

    Parameters
    ----------
    config : P3Config
        The grid, seeds, exponents and ``start_jitter_s``.
    phases : sequence of str
        Names from :data:`NS3_PHASES`.

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
    for phase in phases:
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
            raise ValueError(f"phases must be among {NS3_PHASES}; got {phase!r}")
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


def _ns3_summary(config: P3Config, run: dict, result) -> dict:
    """Throughputs of one ns-3 run after warm-up, its window spread and losses (what the dataset keeps)."""
    import numpy as np

    apps = result.apps.sort_values("flow_index")
    tp = result.throughput_bps(config.ns3_warmup_s, config.ns3_duration_s)
    idx = apps["flow_index"].to_list()
    reno_bps, cubic_bps = float(tp.loc[idx[0]]), float(tp.loc[idx[1]])
    edges = np.arange(config.ns3_warmup_s, config.ns3_duration_s + 1e-9, config.window_s)
    wins = [[float(result.throughput_bps(a, b).loc[i]) for a, b in zip(edges[:-1], edges[1:])] for i in idx[:2]]
    jw = jain_index(np.asarray(wins[0]), np.asarray(wins[1]))
    flows = result.flows
    lost = {}
    if "flow_index" in flows.columns and "lost_packets" in flows.columns:
        data = flows[flows["direction"] == "data"] if "direction" in flows.columns else flows
        lost = data.groupby("flow_index")["lost_packets"].sum().to_dict()
    rec = result.record
    return {**run, "reno_bps": reno_bps, "cubic_bps": cubic_bps, "jain": jain_index(reno_bps, cubic_bps),
            "total_bps": reno_bps + cubic_bps,
            "cubic_share": cubic_bps / (reno_bps + cubic_bps) if reno_bps + cubic_bps > 0 else math.nan,
            "reno_window_sd_bps": float(np.std(wins[0], ddof=1)), "cubic_window_sd_bps": float(np.std(wins[1], ddof=1)),
            "jain_window_sd": float(np.std(jw, ddof=1)), "n_windows": len(wins[0]),
            "reno_lost_packets": float(lost.get(idx[0], math.nan)),
            "cubic_lost_packets": float(lost.get(idx[1], math.nan)),
            "wall_s": float(rec.get("run_wall_s", math.nan)) + float(rec.get("ns3_load_wall_s", 0.0)),
            "date_utc": rec.get("date_utc"),
            "ns3_version": rec.get("ns3_version"),
            "duration_s": config.ns3_duration_s, "warmup_s": config.ns3_warmup_s,
            "rate_bps": config.ns3_rate_bps, "buffer_bytes": config.ns3_buffer_bytes}


def run_ns3(cache_dir: str | Path, config: P3Config = DEFAULT_CONFIG, *, phases: Sequence[str] = NS3_PHASES,
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
    phases : sequence of str
        Phases of :func:`ns3_plan` to run.
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


def ns3_frame(cache_dir: str | Path, config: P3Config = DEFAULT_CONFIG, *,
              plan: list[dict] | None = None) -> pd.DataFrame:
    """Summaries of every run of ``plan`` (default: all phases) already in the sweep cache; others are skipped.

    Entries are matched on their stored ``config.json`` (the scenario), not on
    the cache key: the key also hashes the sources of ``tcpmodels.sim``, which
    other work edits while a campaign runs (additions that leave the dumbbell
    unchanged). Where several entries hold one scenario the newest is used;
    ``cache_key`` names the entry read.

    Parameters
    ----------
    cache_dir : str or Path
        Sweep cache of :func:`run_ns3`.
    config : P3Config
        The campaign's setting (warm-up, duration and window of the summaries).
    plan : list of dict, optional
        Runs to look up; default :func:`ns3_plan` of every phase.

    Returns
    -------
    pandas.DataFrame
        One row per cached run: the plan entry, ``reno_bps``, ``cubic_bps``,
        ``total_bps`` and window standard deviations [bit/s], ``jain``, ``cubic_share`` [-],
        lost packets, ``wall_s`` [s], ``date_utc``, ``ns3_version``, ``rate_bps`` [bit/s] and
        ``buffer_bytes`` [bytes] of the bottleneck (``config.ns3_rate_bps``) and ``cache_key``.
    """
    from tcpmodels.sweep import canonical_json, read_cached

    plan = ns3_plan(config) if plan is None else plan
    cache = Path(cache_dir)
    entries: dict[str, tuple[float, str]] = {}
    for cfg_path in cache.glob("*/config.json"):
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
    rows = []
    for r in plan:
        hit_entry = entries.get(canonical_json(ns3_config(config, r)))
        if hit_entry is None:
            continue
        hit, value = read_cached(cache, hit_entry[1])
        if hit:
            rows.append({**_ns3_summary(config, r, value), "cache_key": hit_entry[1]})
    return pd.DataFrame(rows)
