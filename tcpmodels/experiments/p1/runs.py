"""Run (or resume) the P1 campaign on one engine with the one campaign runner."""

from __future__ import annotations

from contextlib import nullcontext
from pathlib import Path

from tcpmodels.experiments.p1.config import (
    DEFAULT_CONFIG,
    KEY,
    REPO,
    SCHEMA,
    UNCOUPLED,
    P1Config,
    engine_family,
    engine_label,
)
from tcpmodels.experiments.p1.kernel import KernelSession, kernel_rows
from tcpmodels.experiments.p1.ns3 import ns3_rows, run_ns3
from tcpmodels.experiments.p1.schedule import run_plan, schedule

__all__ = ["run_campaign", "check_kernel_ccs"]


def check_kernel_ccs(plan: list[dict]) -> list[str]:
    """Make sure the ``tm_*`` congestion controls of a kernel plan can be loaded; build them now.

    Called before the first run, so a campaign that cannot load its controls stops at once
    with one line rather than after a testbed was built.

    Parameters
    ----------
    plan : list of dict
        Runs (:func:`~tcpmodels.experiments.p1.schedule.run_plan`), each with ``engine`` and ``cc``.

    Returns
    -------
    list of str
        The ``tm_*`` controls the kernel runs of ``plan`` use (built and cached).

    Raises
    ------
    tcpmodels.testbed.kernel_cc.KernelCcUnavailable
        If BPF congestion controls cannot be loaded here or one does not build (the message says why).
    """
    from tcpmodels.testbed import TestbedError, kernel_cc

    wanted = sorted({s["cc"] for s in plan
                     if engine_family(s["engine"]) == "kernel" and s.get("cc", UNCOUPLED) != UNCOUPLED})
    if not wanted:
        return []
    reason = kernel_cc.unavailable_reason()
    if reason:
        raise kernel_cc.KernelCcUnavailable(f"{', '.join(wanted)} requested, but BPF congestion controls cannot "
                                            f"be loaded here: {reason}")
    for name in wanted:
        try:
            kernel_cc.build(name)
        except TestbedError as exc:
            raise kernel_cc.KernelCcUnavailable(f"{name} does not build: {str(exc).strip().splitlines()[-1:]}") \
                from exc
    return wanted


# --------------------------------------------------------------- campaigns
def run_campaign(records_path: str | Path, config: P1Config = DEFAULT_CONFIG, *, engine: str = "kernel",
                 capture_dir: str | Path | None = None, plan: list[dict] | None = None, limit: int | None = None,
                 progress: bool = True, lock_timeout_s: float = 3600.0, yield_s: float = 1.0) -> int:
    """Run (or resume) the campaign on ``engine``; return the number of runs measured in this call.

    Parameters
    ----------
    records_path : str or Path
        JSONL file, one record per run; runs already on file are skipped.
    config : P1Config
        Rates, buffer, RTT, workloads, experiments and seeds of the campaign.
    engine : {"kernel", "ns3"}
        ``kernel``: the fat-tree testbed (root; one testbed kept up across runs; RPS steering with
        ``config.keep_flow_order``, the runs then labelled ``kernel_steered``);
        ``ns3``: one ns-3 process per run, its tables under ``<records_path's folder>/ns3/``.
        Each run's MPTCP congestion control is its ``cc`` (part of the key): a ``tm_*`` control is
        registered for the run (:func:`tcpmodels.testbed.kernel_cc.congestion_control`) and
        unregistered after, and its connection map is polled while the traffic runs.
    capture_dir : str or Path, optional
        Kernel: capture the Section 4 short flows here (one pcap per sending host)
        and classify them into P1's patterns.
    plan : list of dict, optional
        Runs instead of :func:`run_plan` (tests use one tiny run).
    limit : int, optional
        Stop after this many new runs.
    progress : bool
        tqdm bar on stderr.
    lock_timeout_s : float
        Longest wait for the host lock per run (kernel). [s]
    yield_s : float
        Pause after each kernel run so a waiting campaign can take the lock. [s]

    Returns
    -------
    int
        Runs measured and recorded by this call.

    Raises
    ------
    ValueError
        For an unknown ``engine`` (from :func:`run_plan`), or a ``plan`` whose runs carry another
        engine label than ``engine`` and ``config.keep_flow_order`` give (:func:`engine_label`).
    tcpmodels.testbed.PrivilegeError
        Kernel engine without root.
    tcpmodels.testbed.kernel_cc.KernelCcUnavailable
        Before any run, if a ``tm_*`` control of the plan cannot be loaded (:func:`check_kernel_ccs`).
    tcpmodels.testbed.TestbedError
        After three failed runs in a row.
    """
    from tcpmodels.experiments.campaign import run_samples
    from tcpmodels.records import JsonlRecords, Stopwatch

    def stem(s):
        cc = s.get("cc", UNCOUPLED)
        return f"p1_{s['experiment']}_{s['protocol']}" + ("" if cc in (UNCOUPLED, "lia") else f"_{cc}") + \
            f"_seed{s['seed']}"

    def capture(s):
        cap = Path(capture_dir) if (capture_dir is not None and s["experiment"] == "s4") else None
        if cap is not None:
            cap.mkdir(parents=True, exist_ok=True)
        return cap

    opened = []  # testbeds built and not yet reported: the next record carries the setup time

    def session_for(s, session):
        if engine != "kernel" or session is not None:
            return session
        opened.append(KernelSession(config).__enter__())
        return opened[-1]

    def measure(s, session):
        conns = schedule(config, s["experiment"], s["protocol"], s["seed"])
        if engine == "kernel":
            from tcpmodels.testbed import kernel_cc

            extra = {"setup_s": round(opened[-1].setup_s, 2)} if opened else {}
            opened.clear()
            cc = s.get("cc", UNCOUPLED)
            with (kernel_cc.congestion_control(cc) if cc != UNCOUPLED else nullcontext()):
                res = session.run(conns, capture_dir=capture(s), capture_stem=stem(s), cc=cc)
            return {"conns": conns, "res": res, "extra": extra}
        out = Path(records_path).parent / "ns3" / stem(s)
        return {"conns": conns, "res": run_ns3(conns, config, seed=s["seed"], out_dir=out)}

    def finish(s, measured):
        conns, res = measured["conns"], measured["res"]
        if engine == "kernel":
            watch = Stopwatch()
            flows, subflows, samples = kernel_rows(conns, res, capture(s))
            extra = {**measured["extra"], "run_id": res["run_id"], "captures": res["captures"],
                     "analysis_s": round(watch.elapsed_s, 2), "base_rtt_s": res["base_rtt_s"],
                     "cc_map": res.get("cc_map"), "tcp_ext": res.get("tcp_ext"), "rps_cpus": res.get("rps_cpus")}
        else:
            flows, subflows = ns3_rows(conns, res["apps"], res["flows"])
            samples = []
            extra = {"sim_record": {k: v for k, v in res["record"].items() if isinstance(v, (int, float, str))}}
        return {"schema": SCHEMA, "config_hash": config.hash(), "config": config.to_dict(), "git": code,
                "n_connections": len(conns), "flows": flows, "subflows": subflows, "tcpinfo": samples, **extra}

    from tcpmodels.records import git_state

    plan = run_plan(config, engine) if plan is None else plan
    label = engine_label(engine, config.keep_flow_order)
    others = sorted({s["engine"] for s in plan} - {label})
    if others:
        raise ValueError(f"the plan holds runs labelled engine {others}, but engine {engine!r} with keep_flow_order="
                         f"{config.keep_flow_order} labels its runs {label!r}")
    if engine == "kernel":
        check_kernel_ccs(JsonlRecords(records_path, KEY).pending(plan))
    code = git_state(REPO)  # the code that ran: each record carries it
    return run_samples(JsonlRecords(records_path, KEY), plan, measure, desc=f"p1 {engine}", session_for=session_for,
                       on_host=lambda s: engine == "kernel", finish=finish, limit=limit, progress=progress,
                       lock_timeout_s=lock_timeout_s, yield_s=yield_s, unit="run")
