"""P1's kernel testbed in several variants within one session: the runner the alternated campaigns share.

:mod:`~tcpmodels.experiments.p1.abab` alternates the unsteered and the steered testbed per seed;
:mod:`~tcpmodels.experiments.p1.swaps` swaps one factor at a time toward ns-3. Each run of their plans names
its variant in ``engine``; a :class:`TestbedArm` says what that variant changes (P1Config fields, sysctls in
every host). :func:`run_arms` runs such a plan: the fat-tree rebuilt whenever the next run is on another
variant, the host lock held while a run's traffic runs, each run recorded as the P1 runner records it (flows,
background subflows, TCP_INFO samples, the TcpExt counters that moved) plus the host's CPU time by kind per
CPU over the run. An :class:`ArmsRun` is one campaign's plan (:func:`rotated_plan` of its arms and backgrounds)
and its run, stated once for all of them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from contextlib import nullcontext
from dataclasses import dataclass, field, replace
from pathlib import Path

from tcpmodels._docstrings import SharedEntries
from tcpmodels.experiments.p1.config import DEFAULT_CONFIG, REPO, SCHEMA, UNCOUPLED, P1Config

__all__ = ["SEEDS", "TestbedArm", "rotated_plan", "run_arms", "ArmsRun"]

#: Parameters documented once for the docstrings of this module that share them.
_PARAMETERS = SharedEntries("""
    capture_dir : str or Path, optional
        Capture the 70 KB flows here (their loss and pattern; without it those columns are empty).
    limit : int, optional
        Stop after this many new runs.
    progress : bool
        tqdm bar on stderr.
    lock_timeout_s : float
        Longest wait for the host lock per run. [s]
""")

#: the seeds of the alternated campaigns (:mod:`~tcpmodels.experiments.p1.abab` first), run in this order (shipped schedules, so each run also pairs with the shipped runs of
#: its seed on either testbed). 12 seeds: the per-seed difference of the uncoupled headline between the shipped
#: testbeds had sd 0.33 (17 seeds, steered sd dominated), so 12 seeds give a 95 % interval of about +-0.21 around the
#: difference, narrow enough to tell the shipped difference (-0.22) from none; the campaign stops where the session
#: does (resumable), and the reading rule counts whatever seeds are complete (both testbeds, both backgrounds).
SEEDS = tuple(range(12))


@dataclass(frozen=True)
class TestbedArm:
    """What one variant of the P1 kernel testbed changes.

    Parameters
    ----------
    config : dict
        :class:`~tcpmodels.experiments.p1.config.P1Config` fields set for its runs (``keep_flow_order``,
        ``delay_element``...).
    host_sysctls : tuple of (str, str)
        Sysctls set in every host's namespace (:class:`~tcpmodels.experiments.p1.kernel.KernelSession`).
    steer_cpus : tuple of int, optional
        On the steered testbed, the CPUs RPS steers to (default all; :class:`tcpmodels.testbed.Testbed`).
    ack_every_segment : bool
        One segment a packet and an ACK for each (no offloads on the host links, ``quickack 1`` on every host
        route; :class:`~tcpmodels.experiments.p1.kernel.KernelSession`).
    """

    config: dict = field(default_factory=dict)
    host_sysctls: tuple[tuple[str, str], ...] = ()
    steer_cpus: tuple[int, ...] | None = None
    ack_every_segment: bool = False


def rotated_plan(campaign: str, arms: Sequence[str], backgrounds: Sequence[tuple[str, str]],
                 seeds: Sequence[int]) -> list[dict]:
    """Section 4 runs in order: per seed every arm, seed k starting at arm k mod n, each arm with every background.

    Parameters
    ----------
    campaign : str
        The runs' ``campaign`` label.
    arms : sequence of str
        The arms (a run's ``engine``), in the order the first seed runs them.
    backgrounds : sequence of (str, str)
        ``(protocol, cc)`` of each background run on an arm, in order.
    seeds : sequence of int
        Schedule seeds, run in this order.

    Returns
    -------
    list of dict
        ``campaign``, ``engine``, ``experiment`` (``s4``), ``protocol``, ``cc``, ``seed``, ``arm_position`` (the
        arm's place in its seed) and ``order`` (the run's place in the session).

    Raises
    ------
    ValueError
        If ``seeds`` is empty or repeats a seed.
    """
    seeds = [int(s) for s in seeds]
    if not seeds or len(set(seeds)) != len(seeds):
        raise ValueError(f"seeds must be a non-empty list without repeats; got {seeds}")
    out = []
    for k, seed in enumerate(seeds):
        for pos in range(len(arms)):
            for protocol, cc in backgrounds:
                out.append({"campaign": campaign, "engine": arms[(k + pos) % len(arms)], "experiment": "s4",
                            "protocol": protocol, "cc": cc, "seed": seed, "arm_position": pos, "order": len(out)})
    return out


@_PARAMETERS.fill
def run_arms(records_path: str | Path, plan: list[dict], arms: Mapping[str, TestbedArm], *, key: tuple[str, ...],
             desc: str, seeds: Sequence[int], config: P1Config, capture_dir: str | Path | None = None,
             limit: int | None = None, progress: bool = True, lock_timeout_s: float = 7200.0) -> int:
    """Run (or resume) a plan of Section 4 runs on the variants its runs name; return the runs measured.

    Parameters
    ----------
    records_path : str or Path
        JSONL, one record per run; runs already there (same ``key``) are skipped.
    plan : list of dict
        The runs in order: ``engine`` (a key of ``arms``), ``experiment``, ``protocol``, ``cc`` (``uncoupled``
        or a ``tm_*`` control, registered around the run), ``seed``, and the fields of ``key``.
    arms : mapping of str to TestbedArm
        Each variant a run may name.
    key : tuple of str
        The fields that identify a run.
    desc : str
        The campaign, as the progress bar, the host lock and the capture files name it.
    seeds : sequence of int
        The plan's seeds (its runs' config).
    config : P1Config
        The P1 setting each variant changes.
    {capture_dir, limit, progress, lock_timeout_s}

    Returns
    -------
    int
        Runs measured and recorded by this call.

    Raises
    ------
    KeyError
        If a run names a variant ``arms`` does not have (before anything runs).
    tcpmodels.testbed.PrivilegeError
        Without root.
    tcpmodels.testbed.TestbedError
        After three failed runs in a row.
    """
    from tcpmodels.experiments.campaign import run_samples
    from tcpmodels.experiments.p1.kernel import KernelSession, kernel_rows
    from tcpmodels.experiments.p1.runs import check_kernel_ccs
    from tcpmodels.experiments.p1.schedule import schedule
    from tcpmodels.records import JsonlRecords, Stopwatch, git_state
    from tcpmodels.testbed.cpu_times import cpu_time_delta, read_cpu_times

    unknown = sorted({s["engine"] for s in plan} - set(arms))
    if unknown:
        raise KeyError(f"runs name testbed variants {unknown} that the campaign does not define ({sorted(arms)})")
    records = JsonlRecords(records_path, key)
    check_kernel_ccs([dict(s, engine="kernel") for s in records.pending(plan)])  # every variant is the kernel
    code = git_state(REPO)
    opened: list = []

    def cfg_of(s: dict) -> P1Config:
        return replace(config, **arms[s["engine"]].config, seeds=tuple(int(x) for x in seeds), experiments=("s4",))

    def stem(s: dict) -> str:
        return f"{desc.replace(' ', '')}_{s['engine']}_{s['protocol']}_seed{s['seed']}"

    def capture(s: dict):
        if capture_dir is None:
            return None
        cap = Path(capture_dir)
        cap.mkdir(parents=True, exist_ok=True)
        return cap

    def session_for(s: dict, session):
        want, arm = cfg_of(s), arms[s["engine"]]
        if session is not None and (session.config.keep_flow_order, session.config.delay_element, session.host_sysctls,
                                    session.steer_cpus, session.ack_every_segment) == (
                want.keep_flow_order, want.delay_element, arm.host_sysctls, arm.steer_cpus, arm.ack_every_segment):
            return session
        if session is not None:
            session.__exit__(None, None, None)
        opened.append(KernelSession(want, arm.host_sysctls, arm.steer_cpus, arm.ack_every_segment).__enter__())
        return opened[-1]

    def measure(s: dict, session) -> dict:
        from tcpmodels.testbed import kernel_cc

        conns = schedule(cfg_of(s), s["experiment"], s["protocol"], s["seed"])
        extra = {"setup_s": round(opened[-1].setup_s, 2)} if opened else {}
        opened.clear()
        cpu0 = read_cpu_times()
        with (kernel_cc.congestion_control(s["cc"]) if s["cc"] != UNCOUPLED else nullcontext()):
            res = session.run(conns, capture_dir=capture(s), capture_stem=stem(s), cc=s["cc"])
        cpu = cpu_time_delta(cpu0, read_cpu_times())
        return {"conns": conns, "res": res, "extra": {**extra, "cpu_time_s": cpu}}

    def finish(s: dict, measured: dict) -> dict:
        conns, res = measured["conns"], measured["res"]
        watch = Stopwatch()
        flows, subflows, samples = kernel_rows(conns, res, capture(s))
        return {"schema": SCHEMA, "config_hash": cfg_of(s).hash(), "config": cfg_of(s).to_dict(), "git": code,
                "host_sysctls": [list(kv) for kv in arms[s["engine"]].host_sysctls],
                "ack_every_segment": arms[s["engine"]].ack_every_segment,
                "n_connections": len(conns), "flows": flows, "subflows": subflows, "tcpinfo": samples,
                **measured["extra"], "run_id": res["run_id"], "captures": res["captures"],
                "analysis_s": round(watch.elapsed_s, 2), "base_rtt_s": res["base_rtt_s"], "tcp_ext": res.get("tcp_ext"),
                "rps_cpus": res.get("rps_cpus")}

    return run_samples(records, plan, measure, desc=desc, session_for=session_for, finish=finish, limit=limit,
                       progress=progress, lock_timeout_s=lock_timeout_s, yield_s=1.0, unit="run")


@dataclass(frozen=True)
class ArmsRun:
    """One campaign's arms alternated per seed: its plan (:func:`rotated_plan`) and its run (:func:`run_arms`).

    Parameters
    ----------
    what : str
        The campaign as the progress bar, the host lock and messages name it (``p1 placement``).
    campaign : str
        Its runs' ``campaign`` label.
    arms : mapping of str to TestbedArm
        What each arm sets, in the order the first seed runs them (a run names its arm in ``engine``).
    backgrounds : tuple of (str, str)
        ``(protocol, cc)`` of each background run on an arm, in order.
    key : tuple of str
        What identifies a run.
    """

    what: str
    campaign: str
    arms: Mapping[str, TestbedArm]
    backgrounds: tuple[tuple[str, str], ...]
    key: tuple[str, ...]

    def plan(self, seeds: Sequence[int] = SEEDS) -> list[dict]:
        """The runs in order: per seed every arm, the first rotating from seed to seed, each with every background.

        Parameters
        ----------
        seeds : sequence of int
            Schedule seeds, run in this order (default: the alternated campaign's, the shipped schedules).

        Returns
        -------
        list of dict
            The fields of :attr:`key`, ``order`` and ``arm_position`` (the arm's place in its seed, 0 first;
            :func:`~tcpmodels.experiments.p1.arms.rotated_plan`).

        Raises
        ------
        ValueError
            If ``seeds`` is empty or repeats a seed.
        """
        return rotated_plan(self.campaign, tuple(self.arms), self.backgrounds, seeds)

    @_PARAMETERS.fill
    def run(self, records_path: str | Path, *, seeds: Sequence[int] = SEEDS, config: P1Config = DEFAULT_CONFIG,
            capture_dir: str | Path | None = None, limit: int | None = None, progress: bool = True,
            lock_timeout_s: float = 7200.0) -> int:
        """Run (or resume) the plan on the kernel; return the runs measured.

        Parameters
        ----------
        records_path : str or Path
            JSONL, one record per run; runs already there are skipped.
        seeds : sequence of int
            The plan's seeds (default: the alternated campaign's, the shipped schedules).
        config : P1Config
            The P1 setting the arms share.
        {capture_dir, limit, progress, lock_timeout_s}

        Returns
        -------
        int
            Runs measured and recorded by this call.
        """
        return run_arms(records_path, self.plan(seeds), self.arms, key=self.key, desc=self.what, seeds=seeds,
                        config=config, capture_dir=capture_dir, limit=limit, progress=progress,
                        lock_timeout_s=lock_timeout_s)
