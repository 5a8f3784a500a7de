"""P3 at the paper's window sizes: the kernel at 1 Gbit/s, or 400 Mbit/s with the RTTs scaled by 2.5 (issue 57, item 5).

The kernel grid ran at 400 Mbit/s, so its largest windows are 277-815 segments against the paper's
1470-6910 and its K 6-8 s against 10-17 s. The proposal's "greatly improves" (C3.1, Reno at 1 ms) was
judged only there. This campaign repeats C3.1's four pairs (Reno 1 ms against CUBIC 1, 4, 16, 64 ms) at
the paper's windows:

* **1 Gbit/s** (the paper's rate, same RTTs) if the bottleneck pilot shows that the testbed carries it:
  :func:`choose_setting` applies the rule stated before the pilot ran (:data:`PILOT_RULE`): no packet
  dropped outside the bottleneck queue (delay elements, interfaces, other qdiscs: ``cpu_drops`` 0) and
  the two flows filling at least 90 % of the link, in the pilot's 1 Gbit/s sample on the pinned testbed
  (``python -m tcpmodels.experiments.p3 pilot --rates-mbps 400 1000 --pair-ms 1 64 --keep-flow-order
  --pin-delay-elements``, ``data/datasets/p3_bottleneck_pilot_pinned_1g_1_64.json``);
* otherwise **400 Mbit/s with every RTT and the buffer's reference RTT x 2.5** (:data:`RTT_SCALE`): the
  same windows in segments (rate x RTT) and the same buffer in packets as at 1 Gbit/s. Caveat, stated
  before: the proposal's x(RTT) is then evaluated at the scaled RTTs, another point of its curve than the
  paper's, so this setting tests "CUBIC's K scaled by x(RTT) at the paper's windows", not the paper's
  proposal at the paper's RTTs.

Testbed: pinned (RPS steering, each delay element on one CPU: the testbed of the 360 shipped kernel
samples). Kinds: ``standard`` (kernel CUBIC) and ``divide`` (``tm_cubic_x``, the reading under which C3.1
came closest: *smaller than claimed*, +0.026 against +0.05); ``multiply`` (contradicted at 400 Mbit/s) is a
later stage. Measured span: :meth:`~tcpmodels.experiments.p3.config.P3Config.scaling`'s
``measure_s_for_10_epochs`` at the chosen setting (175 s: K alone at 64 ms is 17.3 s). Repetitions: :data:`REPS` (7), from the power analysis
:func:`reps_needed` on the shipped pinned spread. Order (:func:`windows_plan`): repetition by repetition,
within one the pairs from the largest window down (1:64, 1:16, 1:4, 1:1), each pair's two kinds back to
back, so a stop leaves whole matched pairs and the most decisive ones first. The claims and the reading
rule are :mod:`tcpmodels.papers.p3_cubic_fairness.windows`.

Command line::

    python -m tcpmodels.experiments.p3.windows run --records runs/p3/windows.jsonl \\
        --pilot data/datasets/p3_bottleneck_pilot_pinned_1g_1_64.json
    python -m tcpmodels.experiments.p3.windows dataset --records runs/p3/windows.jsonl --pilot ... --out data
"""

from __future__ import annotations

import argparse
import json
import math
from dataclasses import replace
from pathlib import Path

from tcpmodels._docstrings import SharedEntries
from tcpmodels.datasets.p3_windows import KINDS as _KINDS
from tcpmodels.datasets.p3_windows import PAIRS_MS as PAIR_PRIORITY
from tcpmodels.datasets.p3_windows import RTT_SCALE
from tcpmodels.datasets.p3_windows import SCHEMA as DATASET
from tcpmodels.experiments.campaign_dataset import CampaignCli, CampaignDataset
from tcpmodels.experiments.p3.config import DEFAULT_CONFIG, P3Config

__all__ = ["PAPER_RATE_BPS", "RTT_SCALE", "PILOT_RULE", "REPS", "PAIR_PRIORITY", "choose_setting", "windows_config",
           "windows_plan", "reps_needed", "run_windows", "build_windows_dataset", "main"]

#: Parameters documented once for the docstrings of this module that share them.
_PARAMETERS = SharedEntries("""
    reps : int
        Repetitions.
""")

PAPER_RATE_BPS = 1e9
# RTT_SCALE (1 Gbit/s / 400 Mbit/s), the pairs (PAIR_PRIORITY) and the kinds are the dataset's:
# tcpmodels.datasets.p3_windows
#: the pilot's rule for 1 Gbit/s: drops outside the bottleneck queue, and the link filled (goodput / rate)
PILOT_RULE = {"cpu_drops_max": 0, "utilization_min": 0.90}
#: repetitions: :func:`reps_needed` on the shipped pinned samples (Reno 1 ms pairs, divide - standard; sd per pair
#: 0.0087, 0.0043, 0.0267, 0.0665 at CUBIC 1, 4, 16, 64 ms) at the 400 Mbit/s estimate +0.026: 7
REPS = 7


def choose_setting(pilot: list[dict]) -> dict:
    """The setting the pilot allows, by :data:`PILOT_RULE` (fixed before the pilot ran).

    Parameters
    ----------
    pilot : list of dict
        Rows of the bottleneck pilot's JSON (``rate_bps``, ``cpu_drops``, ``utilization``, ``error``).

    Returns
    -------
    dict
        ``rate_bps`` [bit/s], ``rtt_scale`` [-] and ``why`` (the pilot's numbers at 1 Gbit/s).

    Raises
    ------
    ValueError
        If the pilot has no 1 Gbit/s row.
    """
    rows = [r for r in pilot if abs(float(r.get("rate_bps", 0)) - PAPER_RATE_BPS) < 1]
    if not rows:
        raise ValueError(f"the pilot has no {PAPER_RATE_BPS:g} bit/s sample (rates: "
                         f"{sorted({r.get('rate_bps') for r in pilot})}); run it with --rates-mbps 1000")
    r = rows[-1]
    drops, util = r.get("cpu_drops"), r.get("utilization")
    ok = (not r.get("error") and drops is not None and drops <= PILOT_RULE["cpu_drops_max"] and util is not None
          and util >= PILOT_RULE["utilization_min"])
    why = (f"pilot at 1 Gbit/s ({r.get('started_utc')}, load {r.get('load_avg_before')}): {drops} drops outside the "
           f"bottleneck queue, goodput {util if util is None else round(util, 3)} of the rate, error {r.get('error')}")
    if ok:
        return {"rate_bps": PAPER_RATE_BPS, "rtt_scale": 1.0, "why": why + ": the testbed carries it"}
    return {"rate_bps": 400e6, "rtt_scale": RTT_SCALE,
            "why": why + f": not carried, so 400 Mbit/s with every RTT x {RTT_SCALE:g}"}


@_PARAMETERS.fill
def windows_config(setting: dict, *, reps: int = REPS) -> P3Config:
    """The P3 configuration of the chosen setting: C3.1's pairs, pinned testbed, span for 10 CUBIC epochs.

    Parameters
    ----------
    setting : dict
        :func:`choose_setting`.
    {reps}

    Returns
    -------
    P3Config
        ``rate_bps``, RTTs and ``buffer_ref_rtt_s`` scaled, ``kernel_kinds`` standard and divide,
        ``measure_s`` = ``scaling()["measure_s_for_10_epochs"]``.
    """
    s = float(setting["rtt_scale"])
    cfg = replace(DEFAULT_CONFIG, rate_bps=float(setting["rate_bps"]), reno_rtts_ms=(1.0 * s,),
                  cubic_rtts_ms=tuple(c * s for c in (1.0, 4.0, 16.0, 64.0)),
                  buffer_ref_rtt_s=DEFAULT_CONFIG.buffer_ref_rtt_s * s, kernel_kinds=_KINDS, reps=int(reps),
                  kernel_keep_flow_order=True, kernel_pin_delay_elements=True)
    return replace(cfg, measure_s=float(cfg.scaling()["measure_s_for_10_epochs"]))


def windows_plan(config: P3Config) -> list[dict]:
    """:func:`tcpmodels.experiments.p3.kernel.kernel_plan` reordered: repetition by repetition, the pairs of
    :data:`PAIR_PRIORITY` (scaled) from the largest window down, each pair's kinds back to back.

    Parameters
    ----------
    config : P3Config
        :func:`windows_config`.

    Returns
    -------
    list of dict
        The plan entries (start offsets as :func:`kernel_plan` drew them), ``order`` renumbered.
    """
    from tcpmodels.experiments.p3.kernel import kernel_plan

    scale = config.reno_rtts_ms[0]  # Reno's RTT is 1 ms x the scale
    prio = {(r * scale, c * scale): i for i, (r, c) in enumerate(PAIR_PRIORITY)}
    plan = sorted(kernel_plan(config), key=lambda p: (p["rep"], prio[(p["reno_rtt_ms"], p["cubic_rtt_ms"])],
                                                      _KINDS.index(p["kind"])))
    return [{**p, "order": i} for i, p in enumerate(plan)]


def reps_needed(dj_sd_per_pair: dict[str, float], *, effect: float = 0.026, delta: float = 0.05,
                alpha: float = 0.05) -> int:
    """Repetitions for C3.1's interval to leave ``delta`` at 80 % power, from the per-pair spread of dJ.

    The unit is a repetition's mean dJ over the four pairs; its sd is ``sqrt(sum sd_i^2) / 4``
    (independent pairs).

    Parameters
    ----------
    dj_sd_per_pair : dict of str to float
        sd over repetitions of dJ (divide - standard) per pair [-].
    effect : float
        The effect assumed (the 400 Mbit/s estimate, +0.026). [-]
    delta : float
        C3.1's smallest effect (+0.05). [-]
    alpha : float
        Two-sided level. [-]

    Returns
    -------
    int
        :func:`tcpmodels.stats.spec.ttest_runs_needed` at ``|effect - delta|``, at least 3.
    """
    from tcpmodels.stats.spec import ttest_runs_needed

    sd = math.sqrt(sum(v * v for v in dj_sd_per_pair.values())) / len(dj_sd_per_pair)
    return max(3, int(math.ceil(ttest_runs_needed(abs(effect - delta), sd, alpha))))


def _pilot(path: str | Path) -> list[dict]:
    return json.loads(Path(path).read_text())


@_PARAMETERS.fill
def run_windows(records_path: str | Path, pilot_path: str | Path, *, reps: int = REPS, limit: int | None = None,
                progress: bool = True) -> int:
    """Run (or resume) the campaign at the setting the pilot chose; return the samples measured by this call.

    Parameters
    ----------
    records_path : str or Path
        JSONL records (the P3 kernel key).
    pilot_path : str or Path
        The bottleneck pilot's JSON (:func:`choose_setting`).
    {reps}
    limit : int, optional
        Stop after this many new samples.
    progress : bool
        tqdm bar.

    Returns
    -------
    int
        Samples measured.
    """
    from tcpmodels.experiments.p3.kernel import run_kernel_campaign

    config = windows_config(choose_setting(_pilot(pilot_path)), reps=reps)
    return run_kernel_campaign(records_path, config, plan=windows_plan(config), limit=limit, progress=progress,
                               lock_timeout_s=7200.0, yield_s=1.0)


def build_windows_dataset(records_path: str | Path, pilot_path: str | Path, data_dir: str | Path, *,
                          allow_dirty: bool = False) -> dict:
    """Records -> ``p3_windows.parquet`` (:func:`tcpmodels.experiments.p3.kernel.kernel_frame` rows) and provenance.

    At the setting the pilot chose (:func:`choose_setting`), through the dataset's schema
    (:class:`~tcpmodels.experiments.campaign_dataset.CampaignDataset`).

    Parameters
    ----------
    records_path : str or Path
        JSONL records of :func:`run_windows`.
    pilot_path : str or Path
        The pilot's JSON (the setting).
    data_dir : str or Path
        The ``data`` folder.
    allow_dirty : bool
        Write a shipped dataset from a tree with uncommitted changes.

    Returns
    -------
    dict
        The provenance: the setting, its config and scaling, samples against the plan, times.
    """
    from tcpmodels.experiments.p3.kernel import KERNEL_KEY, kernel_frame

    setting = choose_setting(_pilot(pilot_path))
    config = windows_config(setting)

    def tables(recs: list[dict]) -> tuple[dict, dict]:
        frame = kernel_frame(recs, config)
        frame["rtt_scale"] = setting["rtt_scale"]
        return {"": frame}, {
            "setting": setting, "config": config.to_dict(), "scaling": config.scaling(), "samples": len(recs),
            "plan_samples": len(windows_plan(config)), "first_utc": min(r["started_utc"] for r in recs),
            "last_utc": max(r["started_utc"] for r in recs)}

    return CampaignDataset(DATASET, KERNEL_KEY, tables, "p3 windows")(records_path, data_dir, allow_dirty=allow_dirty)


def _options(run: argparse.ArgumentParser, dataset: argparse.ArgumentParser) -> None:
    """Both commands take the pilot's JSON."""
    run.add_argument("--pilot", required=True)
    dataset.add_argument("--pilot", required=True)


def _run(a: argparse.Namespace) -> dict:
    """Run or resume at the pilot's setting."""
    return {"measured": run_windows(a.records, a.pilot, reps=a.reps or REPS, limit=a.limit,
                                    progress=not a.no_progress)}


def _dataset(a: argparse.Namespace) -> dict:
    """Build the dataset; its samples and setting."""
    prov = build_windows_dataset(a.records, a.pilot, a.out, allow_dirty=a.allow_dirty)
    return {"samples": prov["samples"], "setting": prov["setting"]}


#: ``python -m tcpmodels.experiments.p3.windows run|dataset ...``: ``main(argv=None) -> exit status``
main = CampaignCli("p3.windows", __doc__, "p3 windows", run=_run, dataset=_dataset,
                  run_help="run or resume the campaign at the paper's windows", reps=True, options=_options)


if __name__ == "__main__":
    raise SystemExit(main())
