"""The limitation campaign's dataset: every run's captures diagnosed and lined up with the kernel's labels.

``limits_intervals.parquet``: one row per run, capture point, flow and 100 ms kernel interval (the
kernel's split of the interval, its label, the diagnosis of the interval holding its midpoint,
``agree``); ``limits_flows.parquet``: one row per run, capture point and flow (Sundaresan's features
and verdict, the share of time in each class, the sentence); ``limits_records.jsonl.gz``: the run
records without the 10 ms ``TCP_INFO`` samples; ``limits_provenance.json``. The captures and the raw
samples stay in the runs folder (about 1 MB per run).
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import pandas as pd

from tcpmodels.datasets import REPO_ROOT, write_provenance, write_tables
from tcpmodels.datasets.limits import SCHEMA
from tcpmodels.records import host_facts, records_git_summary, reproducible_gzip_writer, shipped_git_state, utc_now

__all__ = ["build_dataset", "diagnose_run", "drops", "write_fixtures"]

REPO = REPO_ROOT


def _flow_ids(packets: pd.DataFrame, annotated: pd.DataFrame, flows: list[dict]) -> list[int]:
    """The data direction of each flow of a run, found by the sender's port."""
    out = []
    for f in flows:
        port = int(f["src"].rsplit(":", 1)[1])
        mine = (packets["src_port"].to_numpy() == port) & (packets["payload_bytes"].to_numpy() > 0)
        if not mine.any():
            raise ValueError(f"no data segment from port {port} in the capture")
        out.append(int(annotated["flow_id"].to_numpy()[mine][0]))
    return out


def drops(record: dict) -> dict:
    """Where a run lost packets: the bottleneck's queue, the delay elements' random loss, and anywhere else.

    Parameters
    ----------
    record : dict
        A run record (its interface and qdisc ``counters`` before and after, and ``delay_elements``).

    Returns
    -------
    dict
        ``bottleneck_queue`` and ``random_loss`` [packets] (the drops the scenario made), and
        ``elsewhere`` (``"node:link"`` or ``"link:direction"`` -> drops of any other kind: none expected).
    """
    after, before = record["counters"]["after"], record["counters"]["before"]

    def moved(key, field):
        return (after[key].get(field) or 0) - (before[key].get(field) or 0)

    elsewhere = {}
    for key in after:
        for field in ("qdisc_drops", "rx_dropped", "tx_dropped"):
            if (key, field) != ("ra:bn", "qdisc_drops") and moved(key, field):
                elsewhere[f"{key} {field}"] = moved(key, field)
    random_loss = 0
    for link, stats in record.get("delay_elements", {}).items():
        for direction in ("a_to_b", "b_to_a"):
            for field, n in stats.get(direction, {}).items():
                if field == "dropped_loss":
                    random_loss += n
                elif field.startswith("dropped") or field == "send_errors":
                    if n:
                        elsewhere[f"{link}:{direction} {field}"] = n
    return {"bottleneck_queue": moved("ra:bn", "qdisc_drops"), "random_loss": random_loss, "elsewhere": elsewhere}


def diagnose_run(record: dict, runs_dir: str | Path) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Both capture points of one run: the matched intervals and the per-flow rows.

    Parameters
    ----------
    record : dict
        A record of ``records.jsonl`` (:func:`tcpmodels.experiments.limits.campaign.run_scenario`).
    runs_dir : str or Path
        The folder holding its captures.

    Returns
    -------
    tuple of pandas.DataFrame
        ``(intervals, flows)`` as in the module docstring.
    """
    from tcpmodels.experiments.limits.score import kernel_intervals, match_intervals
    from tcpmodels.traces import TraceWarning, annotate, read_pcap
    from tcpmodels.traces.limits import congestion_signature, limit_intervals, limit_summary

    truth = {"self": "self-induced", "cross": "external"}.get(record["scenario"], "")
    base = {"scenario": record["scenario"], "seed": int(record["seed"]), "split": record["split"]}
    ivs, fls = [], []
    for point in ("sender", "receiver"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", TraceWarning)
            packets = read_pcap(Path(runs_dir) / record["captures"][point]["file"])
        an = annotate(packets)
        fids = _flow_ids(packets, an, record["flows"])
        sig = congestion_signature(packets, an, flow_ids=fids)
        diag_all = []
        for i, (fid, f) in enumerate(zip(fids, record["flows"])):
            samples = pd.DataFrame(f["samples"])
            kern = kernel_intervals(samples)
            t0 = float(samples["t_unix_s"].iloc[0])
            diag = limit_intervals(packets, an, flow_ids=[fid], origin_s=t0)
            diag_all.append(diag)
            m = match_intervals(kern, diag)
            m[["start_s", "end_s"]] -= t0
            ivs.append(m.assign(**base, point=point, flow=i))
        summary = limit_summary(pd.concat(diag_all, ignore_index=True), sig)
        for i, (fid, f) in enumerate(zip(fids, record["flows"])):
            row = {**base, "point": point, "flow": i, "expected_class": record["expected_class"],
                   "truth_congestion": truth, "bytes": f.get("bytes"),
                   "duration_s": f["end_unix_s"] - f["connect_unix_s"],
                   **sig.loc[fid].to_dict(), **summary.loc[fid].to_dict()}
            fls.append(row)
    return pd.concat(ivs, ignore_index=True), pd.DataFrame(fls)


def build_dataset(runs_dir: str | Path, out_dir: str | Path, *, note: str = "", allow_dirty: bool = False) -> dict:
    """Diagnose every run of ``runs_dir`` and write the dataset and its provenance to ``out_dir``.

    Parameters
    ----------
    runs_dir : str or Path
        The campaign folder (``records.jsonl`` and the captures).
    out_dir : str or Path
        Where the files go (``data/datasets`` for the shipped dataset).
    note : str
        Free text for the provenance.
    allow_dirty : bool
        Write a shipped dataset from a tree with uncommitted changes (the provenance says so).

    Returns
    -------
    dict
        The provenance written.

    Raises
    ------
    tcpmodels.records.DirtyTreeError
        For a shipped dataset from a dirty tree without ``allow_dirty``.
    ValueError
        When the runs folder holds no records.
    """
    from tcpmodels.experiments.limits.campaign import SCENARIOS, TEST2_SEEDS, TEST_SEEDS, TUNING_SEEDS
    from tcpmodels.experiments.limits.score import INTERVAL_S, KERNEL_SCORED_SCENARIOS
    from tcpmodels.traces import limits

    runs_dir, out_dir = Path(runs_dir), Path(out_dir)
    git = shipped_git_state(REPO, out_dir, allow_dirty=allow_dirty)
    path = runs_dir / "records.jsonl"
    recs = [json.loads(x) for x in path.read_text().splitlines() if x.strip()] if path.exists() else []
    if not recs:
        raise ValueError(f"no records in {path}: run the campaign first")
    recs.sort(key=lambda r: (r["seed"], list(SCENARIOS).index(r["scenario"])))
    ivs, fls = zip(*(diagnose_run(r, runs_dir) for r in recs))
    intervals = pd.concat(ivs, ignore_index=True)
    flows = pd.concat(fls, ignore_index=True)
    out_dir.mkdir(parents=True, exist_ok=True)
    write_tables(SCHEMA, out_dir, {"intervals": intervals, "flows": flows})
    with reproducible_gzip_writer(out_dir / "limits_records.jsonl.gz", text=True) as fh:
        for r in recs:
            slim = {**r, "flows": [{k: v for k, v in f.items() if k != "samples"} for f in r["flows"]]}
            fh.write(json.dumps(slim, default=str) + "\n")
    prov = {
        "dataset": "limits", "written_utc": utc_now(), "generator": "tcpmodels.experiments.limits.dataset",
        "command": "python -m tcpmodels.experiments.limits run && python -m tcpmodels.experiments.limits dataset",
        "git": git, **records_git_summary(recs), "note": note,
        "engine": "Linux kernel TCP (CUBIC) in network namespaces: dumbbell, tbf bottleneck queue on the router, "
                  "AF_PACKET delay element on the access links, offloads off; tcpdump at the sender and receiver",
        "ground_truth": "the sender's TCP_INFO every 10 ms (chrono counters, delivery-rate app-limited bit) and the "
                        "application's time blocked in send(); see tcpmodels.experiments.limits.score",
        "scenarios": SCENARIOS, "tuning_seeds": list(TUNING_SEEDS), "test_seeds": list(TEST_SEEDS),
        "test2_seeds": list(TEST2_SEEDS),
        "interval_s": INTERVAL_S, "kernel_scored_scenarios": list(KERNEL_SCORED_SCENARIOS),
        "signature_thresholds": limits.SIGNATURE_THRESHOLDS,
        "runs": [{k: r.get(k) for k in ("scenario", "seed", "split", "started_utc", "finished_utc", "wall_s",
                                        "load_avg", "lock_wait_s", "testbed_run_id")}
                 | {"captures": {p: {k: v for k, v in c.items() if k != "node"} for p, c in r["captures"].items()},
                    "drops": drops(r)}
                 for r in recs],
        "runs_with_drops_elsewhere": sum(bool(drops(r)["elsewhere"]) for r in recs),
        "sum_wall_s": float(sum(r.get("wall_s", 0) for r in recs)),
        "host": recs[-1].get("host", host_facts()),
        "files": ["limits_intervals.parquet", "limits_flows.parquet", "limits_records.jsonl.gz"],
    }
    write_provenance(SCHEMA, out_dir, prov)
    return prov


#: (scenario, seconds kept) of the test fixtures: one small sender capture per class from seed 0 (a tuning seed)
FIXTURES = (("rwnd", 6.5), ("sndbuf", 2.0), ("app", 6.5), ("self", 1.6), ("cross", 1.6), ("loss", 2.0),
            ("short", 6.0))


def write_fixtures(runs_dir: str | Path, out_dir: str | Path, *, seed: int = 0) -> list[dict]:
    """Trimmed sender captures of one seed, one per scenario, with the kernel's labels, for the tests.

    Parameters
    ----------
    runs_dir : str or Path
        The campaign folder.
    out_dir : str or Path
        Where ``limits_<scenario>_sender.pcap.gz`` and ``limits_fixtures.json`` go (``tests/data/limits``).
    seed : int
        The run seed to take them from (a tuning seed).

    Returns
    -------
    list of dict
        One entry per fixture (file, scenario, seconds kept, packets, the flows' ports and the kernel's
        label counts over the kept time), also written to ``limits_fixtures.json``.
    """
    from tcpmodels.experiments.limits.campaign import split_of
    from tcpmodels.experiments.limits.score import kernel_intervals
    from tcpmodels.traces.trim import trim_capture

    if split_of(seed) != "tuning":
        raise ValueError(f"fixtures come from a tuning seed; got seed {seed} ({split_of(seed)})")
    runs_dir, out_dir = Path(runs_dir), Path(out_dir)
    recs = {r["scenario"]: r for r in (json.loads(x) for x in (runs_dir / "records.jsonl").read_text().splitlines()
                                       if x.strip()) if r["seed"] == seed}
    out = []
    for scenario, seconds in FIXTURES:
        r = recs[scenario]
        name = f"limits_{scenario}_sender.pcap.gz"
        kept = trim_capture(runs_dir / r["captures"]["sender"]["file"], out_dir / name, seconds=seconds)
        labels: dict[str, int] = {}
        ports = []
        t_first = min(f["samples"][0]["t_unix_s"] for f in r["flows"])
        for f in r["flows"]:
            if f["samples"][0]["t_unix_s"] - t_first > seconds:
                continue
            ports.append(int(f["src"].rsplit(":", 1)[1]))
            k = kernel_intervals(pd.DataFrame(f["samples"]))
            k = k[k["end_s"] - t_first <= seconds]
            for lab, n in k["kernel"].value_counts().items():
                labels[lab] = labels.get(lab, 0) + int(n)
        out.append({"file": name, "scenario": scenario, "seed": seed, "expected_class": r["expected_class"],
                    "plan": {k: v for k, v in r["plan"].items() if k != "flows"}, "ports": ports,
                    "kernel_labels": labels, **kept, "source": r["captures"]["sender"]["file"],
                    "git": r.get("git"), "started_utc": r.get("started_utc")})
    (out_dir / "limits_fixtures.json").write_text(json.dumps(out, indent=1) + "\n")
    return out
