"""P5 on the real kernel: heavy-tailed downloads through a testbed bottleneck, and the Hurst exponent of the capture.

P5 (Ono, Nakashima) predicts that traffic made of sessions with Pareto(alpha)
sizes is self-similar with ``H = (3 - alpha) / 2``. The ns-3 campaign
(:mod:`tcpmodels.experiments.p5`) measures that in simulation; this module
measures it on Linux's own TCP: downloads arrive as a Poisson process, each of
a Pareto(alpha)-distributed size, and run Reno (the kernel's counterpart of
P5's NewReno) from the server ``s`` to the client ``c`` of
:func:`tcpmodels.testbed.single_link` through one drop-tail bottleneck (tbf)
and the delay element. tcpdump captures the server side of the bottleneck
link (egress packets are seen as the qdisc releases them, so the series is the
bottleneck's output, as P5 counts at G1). The capture is read with
:func:`tcpmodels.traces.read_pcap`, the server's packets are counted per bin
(:func:`tcpmodels.experiments.p5.packet_counts`) and every estimator of
:func:`tcpmodels.models.hurst.estimate_all` is applied.

Why Poisson arrivals of Pareto sessions should give ``(3 - alpha) / 2``: the
number of sessions active at time t is an M/G/infinity process, whose
covariance decays as ``k^(1 - alpha)`` when session lengths are Pareto(alpha),
1 < alpha < 2 (Cox 1984; Taqqu and Levy 1986). Sessions that share one
bottleneck are processor-sharing rather than infinite-server, so the rate per
session is not constant; how far that moves H is part of what is measured.

Usage (root; about ``duration_s`` + 20 s per alpha)::

    python -m tcpmodels.experiments.p5_testbed run --runs runs/p5_testbed
    python -m tcpmodels.experiments.p5_testbed dataset --runs runs/p5_testbed --out data/datasets

``run`` is resumable: an (alpha, seed) already in ``<runs>/records.jsonl`` is skipped, and with
``--skip-shipped`` so is one already in the shipped ``p5_testbed_hurst.parquet``; ``dataset``
keeps the shipped rows of runs the records lack (the raw records of earlier sessions may be
gone) and ships the records gzipped (``p5_testbed_records.jsonl.gz``).

References
----------
.. [1] A. Ono, T. Nakashima, "Self-similar トラフィックの重なりによるボトルネックパフォーマンスの評価" (evaluation of bottleneck performance under
   multiplexing self-similar traffics), Kyushu Tokai University, Sec. 2 and Sec. 4.
.. [2] D. R. Cox, "Long-range dependence: a review", in Statistics: An Appraisal, 1984.
.. [3] W. E. Leland, M. S. Taqqu, W. Willinger, D. V. Wilson, "On the self-similar nature of
   Ethernet traffic (extended version)", IEEE/ACM ToN 2(1), 1994.
"""

from __future__ import annotations

import json
import sys
import time
from dataclasses import asdict, dataclass, replace
from pathlib import Path

import numpy as np
import pandas as pd

from tcpmodels.datasets import REPO_ROOT, write_provenance, write_tables
from tcpmodels.datasets.p5_testbed import SCHEMA
from tcpmodels.experiments.campaign import campaign_errors, run_samples
from tcpmodels.records import JsonlRecords, git_state, host_facts, load_average, shipped_git_state, utc_now

__all__ = ["TestbedP5Config", "DEFAULT_CONFIG", "run_alpha", "run_campaign", "build_dataset", "shipped_keys", "main"]

REPO = REPO_ROOT
#: Address of the server ``s`` in :func:`tcpmodels.testbed.single_link`; it sends the downloads.
SERVER_ADDR = "10.0.1.2"


@dataclass(frozen=True)
class TestbedP5Config:
    """One testbed run per alpha: Poisson arrivals of Pareto-sized Reno downloads through one bottleneck.

    Parameters
    ----------
    alphas : tuple of float
        Pareto shapes, each in (1, 2) (P5: 1.05, 1.35, 1.65, 1.95). [-]
    rate_bps : float
        Bottleneck rate (tbf, each direction). [bit/s]
    rtt_s : float
        Round-trip propagation delay added by the delay element. [s]
    buffer_bytes : int
        Drop-tail buffer at the bottleneck. [bytes]
    mean_size_bytes : float
        Mean download size (P5: 10 KB; larger here so that the sessions, not
        handshakes, make the traffic). [bytes]
    load : float
        Offered load ``arrival rate x mean size / rate`` in (0, 1); the arrival
        rate follows from it. With alpha near 1 a finite sample's mean is far
        below ``mean_size_bytes``, so the realised load is lower. [-]
    duration_s : float
        Arrivals happen in [0, duration_s); the count series covers the same span. [s]
    bin_s : float
        Bin of the packet-count series. [s]
    cc : str
        Congestion control of every download (``reno``: P5's NewReno). [-]
    seed : int
        Base seed of the arrival times and sizes: run ``r`` (of ``seeds``) at alpha i
        uses ``seed + i + 1000 r`` (run 0 is the campaign's first, which used ``seed + i``).
    seeds : tuple of int
        Runs per alpha, by run seed ``r`` (each >= 0).
    """

    alphas: tuple[float, ...] = (1.05, 1.35, 1.65, 1.95)
    rate_bps: float = 10e6
    rtt_s: float = 0.03
    buffer_bytes: int = 75_000
    mean_size_bytes: float = 50_000.0
    load: float = 0.5
    duration_s: float = 200.0
    bin_s: float = 0.01
    cc: str = "reno"
    seed: int = 0
    seeds: tuple[int, ...] = (0, 1)

    def __post_init__(self) -> None:
        if not self.alphas or not all(1.0 < float(a) < 2.0 for a in self.alphas):
            raise ValueError(f"alphas [-] must each be in (1, 2); got {self.alphas!r}")
        for name in ("rate_bps", "rtt_s", "buffer_bytes", "mean_size_bytes", "duration_s", "bin_s"):
            if not float(getattr(self, name)) > 0:
                raise ValueError(f"{name} must be > 0; got {getattr(self, name)!r}")
        if not self.seeds or not all(isinstance(r, int) and r >= 0 for r in self.seeds):
            raise ValueError(f"seeds must be integers >= 0; got {self.seeds!r}")
        if not 0.0 < self.load < 1.0:
            raise ValueError(f"load [-] must be in (0, 1); got {self.load!r}")
        if self.duration_s / self.bin_s < 512:
            raise ValueError(f"duration_s / bin_s must give >= 512 bins for the Hurst estimators; "
                             f"got {self.duration_s} / {self.bin_s} = {self.duration_s / self.bin_s:.0f}")

    @property
    def arrival_rate_per_s(self) -> float:
        """Download arrivals per second that offer ``load`` of the bottleneck. [1/s]"""
        return self.load * self.rate_bps / 8.0 / self.mean_size_bytes

    def to_dict(self) -> dict:
        """The fields as a dict, with the derived ``arrival_rate_per_s``.

        Returns
        -------
        dict
            Every field (``alphas`` as a tuple) and ``arrival_rate_per_s`` [1/s].
        """
        return {**asdict(self), "arrival_rate_per_s": self.arrival_rate_per_s}


DEFAULT_CONFIG = TestbedP5Config()


#: Fields that identify a run in ``<runs_dir>/records.jsonl`` (a record without ``seed`` is run 0).
KEY_FIELDS = ("alpha", "seed")


def _records(runs_dir: Path) -> JsonlRecords:
    return JsonlRecords(Path(runs_dir) / "records.jsonl", KEY_FIELDS)


def _read_records(runs_dir: Path) -> list[dict]:
    """The records of ``runs_dir``, ``seed`` 0 filled in where the first campaign did not write it."""
    path = Path(runs_dir) / "records.jsonl"
    if not path.exists():
        return []
    return [{"seed": 0, **json.loads(x)} for x in path.read_text().splitlines() if x.strip()]


def _counts_name(alpha: float, seed: int) -> str:
    return f"alpha{alpha:.2f}_counts.npy" if seed == 0 else f"alpha{alpha:.2f}_s{seed}_counts.npy"


def shipped_keys(out_dir: str | Path) -> set:
    """``(alpha, seed)`` of the runs in ``out_dir/p5_testbed_hurst.parquet`` (no ``seed`` column: 0); empty if absent.

    Parameters
    ----------
    out_dir : str or Path
        Folder of the shipped dataset.

    Returns
    -------
    set of tuple
        ``(alpha [-], seed)`` pairs.
    """
    path = Path(out_dir) / "p5_testbed_hurst.parquet"
    if not path.exists():
        return set()
    h = pd.read_parquet(path)
    seeds = h["seed"] if "seed" in h.columns else pd.Series(0, index=h.index)
    return {(float(a), int(s)) for a, s in zip(h["alpha"], seeds)}


def run_alpha(config: TestbedP5Config, alpha: float, runs_dir: str | Path, seed: int = 0, *,
              keep_flow_order: bool = False) -> dict:
    """One testbed run at Pareto shape ``alpha``; writes its count series (``.npy``) and returns the run record.

    The caller holds the host lock (:func:`run_campaign` does) and appends the record.
    The capture the series is counted from is deleted after the count.

    Parameters
    ----------
    config : TestbedP5Config
        Bottleneck, workload, duration, bin and seed of the campaign.
    alpha : float
        Pareto shape of the download sizes, one of ``config.alphas`` (its index there sets
        the workload seed). [-]
    runs_dir : str or Path
        Campaign folder (created if missing); receives the count series
        (``alpha<a>_counts.npy`` for run 0, ``alpha<a>_s<seed>_counts.npy`` after).
    seed : int
        Run seed ``r``: the workload's seed is ``config.seed + i + 1000 r`` (alpha index i).
    keep_flow_order : bool
        Steer the veths with RPS (:class:`tcpmodels.testbed.Testbed` ``keep_flow_order``); the
        record's ``rps_cpus`` holds the mask (None: the unsteered testbed the shipped runs used).

    Returns
    -------
    dict
        The record as JSON will hold it: ``alpha``, ``seed``, the config, planned and completed
        downloads, capture statistics, ``packets_in_series``, ``utilisation`` [-] of the
        bottleneck over the run, the Hurst estimates of every estimator, the predicted
        H = (3 - alpha) / 2, ``rps_cpus``, ``tcp_ext`` (the server's and the client's TcpExt
        counters that moved during the downloads: reordering events, DSACKs, retransmissions),
        host facts, times and ``wall_s`` [s].

    Raises
    ------
    ValueError
        If ``alpha`` is not one of ``config.alphas`` (two alphas would otherwise share a workload seed).
    tcpmodels.testbed.PrivilegeError
        Without root.
    """
    if not any(np.isclose(alpha, a) for a in config.alphas):
        raise ValueError(f"alpha [-] must be one of config.alphas {tuple(config.alphas)}; got {alpha!r}")
    from tcpmodels.experiments.p5 import packet_counts
    from tcpmodels.models.heavytail import hurst_from_alpha
    from tcpmodels.models.hurst import estimate_all
    from tcpmodels.testbed import PathSpec, Testbed, single_link
    from tcpmodels.testbed import workload as wl
    from tcpmodels.testbed import tool_versions
    from tcpmodels.testbed.capture import start_capture
    from tcpmodels.testbed.netns import tcp_ext_delta
    from tcpmodels.traces import read_pcap

    runs_dir = Path(runs_dir)
    runs_dir.mkdir(parents=True, exist_ok=True)
    index = int(np.flatnonzero(np.isclose(alpha, np.asarray(config.alphas, dtype=float)))[0])
    workload_seed = config.seed + index + 1000 * int(seed)
    rng = np.random.default_rng(workload_seed)
    flows = wl.poisson_flows(rng=rng, first_id=1, arrival_rate_per_s=config.arrival_rate_per_s,
                             duration_s=config.duration_s, dst=SERVER_ADDR, cc=config.cc, direction="download",
                             size_dist={"kind": "pareto", "mean_bytes": config.mean_size_bytes, "alpha": alpha})
    topo = single_link(PathSpec(rate_bps=config.rate_bps, rtt_s=config.rtt_s, buffer_bytes=config.buffer_bytes))
    pcap = runs_dir / f"alpha{alpha:.2f}.pcap"
    rec: dict = {"alpha": float(alpha), "seed": int(seed), "workload_seed": workload_seed, "config": config.to_dict(), "started_utc": utc_now(),
                 "load_avg_before": load_average(), "n_flows_planned": len(flows),
                 "planned_bytes": int(sum(f["size_bytes"] for f in flows))}
    t0 = time.monotonic()
    with Testbed(topo, seed=workload_seed, keep_flow_order=keep_flow_order) as tb:
        rec["testbed_run_id"] = tb.run_id
        rec["rps_cpus"] = tb.rps_cpus
        server = wl.start_server(tb, "s")
        wl.ping_rtt(tb, "c", SERVER_ADDR, count=3, interval_s=0.01)  # ARP resolved before the first download
        cap = start_capture(tb, "s", "p0", pcap, snaplen_bytes=96, bpf_filter=f"src host {SERVER_ADDR} and tcp")
        tcp0 = {n: tb.tcp_ext_counters(n) for n in ("s", "c")}
        launched_epoch_s = time.time()
        records = wl.run_flows(tb, "c", flows, timeout_s=config.duration_s + 900)
        time.sleep(0.3)
        rec["tcp_ext"] = {n: tcp_ext_delta(tcp0[n], tb.tcp_ext_counters(n)) for n in ("s", "c")}
        rec["capture"] = cap.stop()
        server.stop()
    rec["wall_s"] = round(time.monotonic() - t0, 1)
    rec["delay_elements"] = tb.delay_stats
    errors = [r for r in records if r.get("error")]
    rec["flows"] = {"n": len(records), "errors": len(errors), "first_errors": [r["error"] for r in errors[:5]],
                    "bytes": int(sum(r.get("bytes", 0) or 0 for r in records))}
    packets = read_pcap(pcap)
    acct = packets.attrs.get("accounting")
    rec["read_accounting"] = acct.to_dict() if hasattr(acct, "to_dict") else str(acct)
    # series from the launch of the flow schedule: arrival times are relative to it
    shifted = packets.assign(timestamp_s=packets["timestamp_s"] - launched_epoch_s)
    counts = packet_counts(shifted, bin_s=config.bin_s, duration_s=config.duration_s, src_addr=SERVER_ADDR)
    rec["packets_in_series"] = int(counts.sum())
    t = shifted["timestamp_s"].to_numpy()
    in_window = (shifted["src_addr"].astype(str) == SERVER_ADDR).to_numpy() & (t >= 0) & (t < config.duration_s)
    rec["utilisation"] = float(shifted["wire_bytes"].to_numpy()[in_window].sum() * 8 / (config.rate_bps * config.duration_s))
    hurst = estimate_all(counts.astype(float)).reset_index()
    rec["hurst"] = hurst.to_dict(orient="records")
    rec["predicted_hurst"] = float(hurst_from_alpha(alpha))
    rec["host"] = {**host_facts(), **tool_versions()}
    rec["finished_utc"] = utc_now()
    np.save(runs_dir / _counts_name(alpha, int(seed)), counts)
    pcap.unlink(missing_ok=True)  # the count series is the dataset; a 200 s capture is ~10 MB compressed
    return json.loads(json.dumps(rec, default=str))  # what the JSONL record will hold


def run_campaign(runs_dir: str | Path, config: TestbedP5Config = DEFAULT_CONFIG, *, progress: bool = True,
                 skip: set | frozenset = frozenset()) -> int:
    """Run every (alpha, seed) not yet in ``<runs_dir>/records.jsonl`` through the one campaign loop; return how many ran.

    :func:`tcpmodels.experiments.campaign.run_samples` holds the host lock for each
    run, appends each record durably, resumes where a killed campaign stopped and
    shows the progress bar. Each record carries ``git``: the commit (and dirty flag) of the
    code that ran it.

    Parameters
    ----------
    runs_dir : str or Path
        Campaign folder: ``records.jsonl`` and the count series.
    config : TestbedP5Config
        The campaign; one run per ``config.seeds`` and ``config.alphas`` (seed by seed).
    progress : bool
        tqdm bar on stderr.
    skip : set of tuple
        ``(alpha, seed)`` pairs not to run, e.g. :func:`shipped_keys` of the shipped dataset.

    Returns
    -------
    int
        Runs made by this call.

    Raises
    ------
    tcpmodels.testbed.PrivilegeError
        Without root.
    tcpmodels.testbed.TestbedError
        After three failed runs in a row.
    """
    runs_dir = Path(runs_dir)
    plan = [{"alpha": float(a), "seed": int(r)} for r in config.seeds for a in config.alphas
            if (float(a), int(r)) not in skip]
    code = git_state(REPO)  # the code that ran: each record carries it
    return run_samples(_records(runs_dir), plan,
                       lambda s, _session: {**run_alpha(config, s["alpha"], runs_dir, s["seed"]), "git": code},
                       desc="p5 testbed", progress=progress, lock_timeout_s=3600.0, unit="run")


def build_dataset(runs_dir: str | Path, out_dir: str | Path, config: TestbedP5Config = DEFAULT_CONFIG,
                  *, note: str = "", allow_dirty: bool = False, merge: bool = True) -> dict:
    """Write ``p5_testbed_hurst.parquet``, ``p5_testbed_counts.parquet``, the records and the provenance.

    ``p5_testbed_hurst``: one row per (alpha, seed) and estimator (H, 95 % interval,
    predicted ``(3 - alpha) / 2``, whether the interval covers it).
    ``p5_testbed_counts``: the packet-count series (alpha, seed, t_s, packets).
    ``p5_testbed_records.jsonl.gz``: the run records. With ``merge`` the runs of the
    dataset already in ``out_dir`` that ``runs_dir`` lacks keep their rows (keyed by
    alpha and seed; a shipped table without ``seed`` is run 0) and their provenance entries.

    Parameters
    ----------
    runs_dir : str or Path
        Campaign folder of :func:`run_campaign`.
    out_dir : str or Path
        Where the three files go (created if missing).
    config : TestbedP5Config
        Written to the provenance; only records of its ``alphas`` are used.
    note : str
        Free text for the provenance.
    allow_dirty : bool
        Write a shipped dataset from a tree with uncommitted changes (the provenance says so).
    merge : bool
        Keep the rows of the dataset in ``out_dir`` for runs ``runs_dir`` lacks.

    Returns
    -------
    dict
        The provenance written to ``p5_testbed_provenance.json`` (config, git state,
        one entry per run, the runs kept from the earlier dataset, host, files).

    Raises
    ------
    ValueError
        If neither ``runs_dir`` nor (with ``merge``) the dataset in ``out_dir`` holds a
        result of any of ``config.alphas``.
    """
    runs_dir, out_dir = Path(runs_dir), Path(out_dir)
    git = shipped_git_state(REPO, out_dir, allow_dirty=allow_dirty)  # before anything is written
    wanted = {float(a) for a in config.alphas}
    recs = [r for r in _read_records(runs_dir) if r["alpha"] in wanted]
    new_keys = {(float(r["alpha"]), int(r["seed"])) for r in recs}
    old_h = old_c = None
    old_prov, old_recs = {}, []
    if merge and (out_dir / "p5_testbed_hurst.parquet").exists():
        import gzip

        old_h = pd.read_parquet(out_dir / "p5_testbed_hurst.parquet")
        old_c = pd.read_parquet(out_dir / "p5_testbed_counts.parquet")
        for df in (old_h, old_c):
            if "seed" not in df.columns:
                df.insert(1, "seed", 0)
        if (out_dir / "p5_testbed_provenance.json").exists():
            old_prov = json.loads((out_dir / "p5_testbed_provenance.json").read_text())
        if (out_dir / "p5_testbed_records.jsonl.gz").exists():
            with gzip.open(out_dir / "p5_testbed_records.jsonl.gz", "rt") as fh:
                old_recs = [json.loads(x) for x in fh if x.strip()]

        def fresh(df):
            keys = pd.Series(list(zip(df["alpha"].astype(float), df["seed"].astype(int))), index=df.index)
            return df[~keys.isin(new_keys) & df["alpha"].isin(wanted)]

        old_h, old_c = fresh(old_h), fresh(old_c)
    kept = sorted({(float(a), int(s)) for a, s in zip(old_h["alpha"], old_h["seed"])}) if old_h is not None else []
    if not recs and not kept:
        raise ValueError(f"no p5 testbed results in {runs_dir} (run `python -m tcpmodels.experiments.p5_testbed run`)")
    hurst, counts = [] if old_h is None else [old_h], [] if old_c is None else [old_c]
    for r in recs:
        h = pd.DataFrame(r["hurst"]).assign(alpha=r["alpha"], seed=r["seed"], predicted=r["predicted_hurst"])
        h["covers"] = (h["ci95_low"] <= h["predicted"]) & (h["predicted"] <= h["ci95_high"])
        hurst.append(h)
        c = np.load(runs_dir / _counts_name(r["alpha"], r["seed"]))
        counts.append(pd.DataFrame({"alpha": r["alpha"], "seed": r["seed"],
                                    "t_s": np.arange(len(c)) * r["config"]["bin_s"], "packets": c.astype(np.int32)}))
    out_dir.mkdir(parents=True, exist_ok=True)
    cols = ["alpha", "seed", "method", "hurst", "stderr", "stderr_kind", "ci95_low", "ci95_high", "n", "predicted",
            "covers"]
    hurst = pd.concat(hurst, ignore_index=True)[cols].sort_values(["alpha", "seed"], kind="stable", ignore_index=True)
    hurst = hurst.astype({"seed": np.int64})
    counts = pd.concat(counts, ignore_index=True)[["alpha", "seed", "t_s", "packets"]].sort_values(
        ["alpha", "seed", "t_s"], kind="stable", ignore_index=True)
    write_tables(SCHEMA, out_dir, {"hurst": hurst, "counts": counts.astype({"seed": np.int64})})
    from tcpmodels.records import reproducible_gzip_writer

    all_recs = [r for r in old_recs if (float(r["alpha"]), int(r.get("seed", 0))) not in new_keys] + recs
    with reproducible_gzip_writer(out_dir / "p5_testbed_records.jsonl.gz", text=True) as fh:
        for r in all_recs:
            fh.write(json.dumps(r, default=str) + "\n")
    run_fields = ("alpha", "seed", "started_utc", "finished_utc", "wall_s", "n_flows_planned", "planned_bytes", "flows",
                  "capture", "read_accounting", "packets_in_series", "utilisation", "load_avg_before", "testbed_run_id")
    old_runs = [{**r, "seed": r.get("seed", 0), "from_dataset": {"git": old_prov.get("git"),
                                                                 "written_utc": old_prov.get("written_utc")}}
                for r in old_prov.get("runs", []) if (float(r["alpha"]), int(r.get("seed", 0))) in set(kept)]
    prov = {
        "dataset": "p5_testbed", "written_utc": utc_now(), "generator": "tcpmodels.experiments.p5_testbed dataset",
        "command": "python -m tcpmodels.experiments.p5_testbed run && python -m tcpmodels.experiments.p5_testbed dataset",
        "config": config.to_dict(), "git": git, "note": note,
        "engine": "Linux kernel TCP in network namespaces (tbf bottleneck, AF_PACKET delay element, tcpdump)",
        "series": "packets sent by the server per bin, captured on the server side of the bottleneck (egress, "
                  "after the qdisc), bins from the launch of the flow schedule",
        "runs": sorted(old_runs + [{k: r.get(k) for k in run_fields} for r in recs],
                       key=lambda r: (r["seed"], r["alpha"])),
        "kept_from_shipped": {"runs": [list(k) for k in kept],
                              "note": "(alpha, seed) rows kept from the dataset this one replaced; their raw "
                                      "records were not in the runs folder (entries marked from_dataset)"},
        "sum_wall_s_new": float(sum(r["wall_s"] for r in recs)),
        "host": recs[-1]["host"] if recs else old_prov.get("host"),
        "files": ["p5_testbed_hurst.parquet", "p5_testbed_counts.parquet", "p5_testbed_records.jsonl.gz"],
    }
    write_provenance(SCHEMA, out_dir, prov)
    return prov


def main(argv: list[str] | None = None) -> int:
    """``python -m tcpmodels.experiments.p5_testbed {run,dataset} ...``.

    Parameters
    ----------
    argv : list of str, optional
        The arguments; None: ``sys.argv[1:]``.

    Returns
    -------
    int
        0 (a one-line JSON summary is printed); expected failures exit through
        :func:`~tcpmodels.experiments.campaign.campaign_errors`.
    """
    from tcpmodels.experiments.campaign import campaign_parser

    parser, sub = campaign_parser("p5_testbed", __doc__)
    p = sub.add_parser("run", help="one testbed run per alpha (root; resumable)")
    p.add_argument("--runs", default=str(REPO / "runs" / "p5_testbed"))
    p.add_argument("--duration-s", type=float, help=f"default {DEFAULT_CONFIG.duration_s:g}")
    p.add_argument("--alphas", type=float, nargs="+")
    p.add_argument("--seeds", type=int, nargs="+", help=f"run seeds per alpha; default {DEFAULT_CONFIG.seeds}")
    p.add_argument("--skip-shipped", action="store_true",
                   help="leave out the (alpha, seed) runs already in the shipped dataset (--out)")
    p.add_argument("--out", default=str(REPO / "data" / "datasets"), help="the shipped dataset (for --skip-shipped)")
    p.add_argument("--no-progress", action="store_true")
    p = sub.add_parser("dataset", help="results -> data/datasets/p5_testbed_* + provenance")
    p.add_argument("--runs", default=str(REPO / "runs" / "p5_testbed"))
    p.add_argument("--out", default=str(REPO / "data" / "datasets"))
    p.add_argument("--duration-s", type=float)
    p.add_argument("--alphas", type=float, nargs="+")
    p.add_argument("--seeds", type=int, nargs="+")
    p.add_argument("--note", default="")
    p.add_argument("--no-merge", action="store_true",
                   help="drop the rows of the dataset in --out that the runs folder lacks (default: keep them)")
    p.add_argument("--allow-dirty", action="store_true",
                   help="write a shipped dataset (under data/) from a tree with uncommitted changes")
    args = parser.parse_args(argv)
    with campaign_errors("p5_testbed"):
        config = DEFAULT_CONFIG
        if args.duration_s:
            config = replace(config, duration_s=args.duration_s)
        if args.alphas:
            config = replace(config, alphas=tuple(args.alphas))
        if args.seeds:
            config = replace(config, seeds=tuple(args.seeds))
        if args.cmd == "run":
            skip = shipped_keys(args.out) if args.skip_shipped else set()
            n = run_campaign(args.runs, config, progress=not args.no_progress, skip=skip)
            print(json.dumps({"ran": n, "runs": args.runs}))
        else:
            prov = build_dataset(args.runs, args.out, config, note=args.note, allow_dirty=args.allow_dirty,
                                 merge=not args.no_merge)
            print(json.dumps({"runs": len(prov["runs"]), "out": args.out}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
